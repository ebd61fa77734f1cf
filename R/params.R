# params.R: `params = list(...)` as LightGBM and xgboost users write it: their
# parameter names (and a few of their values) mapped to histboost's, with
# errors for unknown names, for names that mean different things in the two
# libraries, and for one parameter given twice with different values.

# Alias -> histboost name (our own names map to themselves, added below):
# .HB_PARAM_ALIASES, generated from the registry (src/engine/params.def) into
# R/params-generated.R.

# Names that LightGBM and xgboost use for different things, or that
# histboost decides itself: an error that says what to do instead.
.HB_PARAM_REFUSED <- c(
  alpha = paste("means the Huber or quantile parameter to LightGBM and the L1 penalty to xgboost: give",
                "`huber_delta`, `quantile_alpha` or `lambda_l1`"),
  num_class = "is not needed: the classes are the levels of `y` (a factor)",
  tree_method = "is not needed: histboost always grows trees from histograms",
  one_drop = paste("(xgboost's DART: always drop a tree) is not available: DART drops as LightGBM does; raise",
                   "`drop_rate` or lower `skip_drop`"),
  drop_seed = "is not needed: DART's drops come from `seed`, the round and the tree",
  bagging_seed = "is not needed: the bags come from `seed`, the bagging round and the row; give `seed`",
  bagging_fraction_seed = "is not needed: the bags come from `seed`, the bagging round and the row; give `seed`",
  data_seed = "is not needed: the rows that place the bins are drawn the same way for the same data",
  feature_fraction_seed = "is not needed: the features sampled come from `seed` and the tree; give `seed`",
  data_random_seed = "is not needed: the rows that place the bins are drawn the same way for the same data",
  extra_seed = "is not needed: extra_trees' thresholds come from `seed`, the tree, the node and the feature; give `seed`",
  objective_seed = "is not needed: no objective draws at random"
)

# Objective names of LightGBM and xgboost -> histboost's.
.HB_OBJECTIVE_ALIASES <- c(
  regression_l2 = "regression", l2 = "regression", mean_squared_error = "regression", mse = "regression",
  l2_root = "regression", root_mean_squared_error = "regression", rmse = "regression",
  "reg:squarederror" = "regression", "reg:linear" = "regression",
  regression_l1 = "l1", mean_absolute_error = "l1", mae = "l1", "reg:absoluteerror" = "l1",
  "binary:logistic" = "binary", "multi:softprob" = "multiclass", "multi:softmax" = "multiclass",
  softmax = "multiclass", "count:poisson" = "poisson", "reg:gamma" = "gamma", "reg:tweedie" = "tweedie",
  "reg:quantileerror" = "quantile", "rank:ndcg" = "lambdarank", "rank:pairwise" = NA, "rank:map" = NA,
  "binary:logitraw" = NA, "binary:hinge" = NA, "reg:logistic" = NA, "reg:pseudohubererror" = NA,
  multiclass_ova = "multiclassova", ova = "multiclassova", ovr = "multiclassova", xentropy = "cross_entropy",
  mean_absolute_percentage_error = "mape", "survival:cox" = "cox"
)

# An objective's name in LightGBM's or xgboost's terms as histboost's (any
# other value as it is), for `objective =` and `params$objective` alike;
# `what` names where it was given, for the error when it has no equivalent.
.hb_objective_alias <- function(v, what) {
  if (!is.character(v) || length(v) != 1L || is.na(v) || !v %in% names(.HB_OBJECTIVE_ALIASES)) return(v)
  to <- .HB_OBJECTIVE_ALIASES[[v]]
  if (is.na(to)) .hb_abort(what, " \"", v, "\" has no histboost equivalent.")
  to
}

# Metric names of LightGBM and xgboost -> histboost's.
.HB_METRIC_ALIASES <- c(
  l2_root = "rmse", root_mean_squared_error = "rmse", l1 = "mae", mean_absolute_error = "mae",
  binary_logloss = "logloss", binary_error = "error", mlogloss = "multi_logloss", merror = "multi_error",
  "poisson-nloglik" = "poisson", "gamma-nloglik" = "gamma", xentropy = "cross_entropy",
  mean_absolute_percentage_error = "mape", aucpr = "average_precision", "cox-nloglik" = "cox_nloglik"
)

# The parameters of `params` (a named list) under histboost's names. The
# names are exact: an unknown one is an error (with a suggestion), and so is
# a parameter given twice with different values.
.hb_params_resolve <- function(params, known) {
  if (is.null(params)) return(list())
  if (!is.list(params) || is.data.frame(params)) {
    .hb_abort("`params` must be a named list of parameters, such as list(learning_rate = 0.05, num_leaves = 15).")
  }
  if (!length(params)) return(list())
  nms <- names(params)
  if (is.null(nms) || anyNA(nms) || any(nms == "")) .hb_abort("`params` must name every element.")
  aliases <- c(stats::setNames(known, known), .HB_PARAM_ALIASES)
  out <- list()
  from <- list()
  implied <- list()
  for (k in seq_along(params)) {
    nm <- nms[k]
    v <- params[[k]]
    if (nm %in% names(.HB_PARAM_REFUSED)) .hb_abort("`params`: `", nm, "` ", .HB_PARAM_REFUSED[[nm]], ".")
    if (nm == "first_metric_only") {  # histboost stops on one metric: TRUE is what it does
      if (isTRUE(v)) next
      .hb_abort("`params`: `first_metric_only` = FALSE (stop when any metric stalls) is not available: early ",
                "stopping watches one metric, the first unless `early_stopping_metric` names another.")
    }
    if (!nm %in% names(aliases) || aliases[[nm]] == "params") {
      .hb_abort("`params`: `", nm, "` is not a parameter of histboost (nor a LightGBM or xgboost name of one).",
                .hb_did_you_mean(nm, setdiff(names(aliases), "params")))
    }
    ours <- aliases[[nm]]
    v <- .hb_param_value(nm, ours, v)
    if (ours == "goss") {           # data_sample_strategy = "goss" / "bagging"
      v <- .hb_choice(v, c("bagging", "goss"), paste0("params$", nm)) == "goss"
    } else if (ours == "boosting" && identical(v, "goss")) {  # LightGBM's older boosting = "goss"
      v <- "gbdt"
      implied$goss <- TRUE
    }
    if (nm == "subsample" && is.numeric(v) && length(v) == 1L && isTRUE(v < 1)) {
      implied$bagging_freq <- 1L    # xgboost's subsample draws every round
    }
    if (ours %in% names(out) && !.hb_same_value(out[[ours]], v)) {
      .hb_abort("`params` gives `", ours, "` twice with different values (as `", from[[ours]], "` and as `", nm,
                "`); keep one.")
    }
    out[ours] <- list(v)
    from[[ours]] <- nm
  }
  # what an alias implies yields to what is set explicitly
  implied <- implied[setdiff(names(implied), names(out))]
  out <- c(out, implied)
  attr(out, "implied") <- names(implied)
  out
}

.hb_same_value <- function(a, b) {
  identical(a, b) || (is.numeric(a) && is.numeric(b) && !is.object(a) && !is.object(b) &&
                        isTRUE(all.equal(a, b, check.attributes = FALSE, tolerance = 0)))
}

# A value in LightGBM's or xgboost's terms -> histboost's, for `params`.
.hb_param_value <- function(nm, ours, v) {
  switch(ours,
    objective = .hb_objective_alias(v, "`params`: the objective"),
    eval_metric = if (is.character(v)) {
      vapply(v, function(m) if (m %in% names(.HB_METRIC_ALIASES)) .HB_METRIC_ALIASES[[m]] else m, "",
             USE.NAMES = FALSE)
    } else v,
    boosting = {
      if (identical(v, "gbtree") || identical(v, "gbm")) "gbdt"
      else if (identical(v, "random_forest")) "rf"
      else if (identical(v, "gblinear")) {
        .hb_abort("`params`: boosting \"", v, "\" is not available in histboost (\"gbdt\", \"dart\" or \"rf\").")
      } else v
    },
    device = if (identical(v, "gpu")) "cuda" else v,
    # xgboost's DART spellings
    uniform_drop = if (nm == "sample_type" && is.character(v) && length(v) == 1L && !is.na(v)) {
      if (v == "uniform") TRUE else if (v == "weighted") FALSE
      else .hb_abort("`params`: sample_type must be \"uniform\" or \"weighted\", not \"", v, "\".")
    } else v,
    xgboost_dart_mode = if (nm == "normalize_type" && is.character(v) && length(v) == 1L && !is.na(v)) {
      if (v == "tree") TRUE
      else .hb_abort("`params`: normalize_type \"", v, "\" has no histboost equivalent; \"tree\" (xgboost's ",
                     "default) is `xgboost_dart_mode` = TRUE, LightGBM's normalisation is the default.")
    } else v,
    verbose = if (is.numeric(v) && length(v) == 1L && !is.na(v)) as.integer(min(max(v, 0), 2)) else v,
    v
  )
}

# Merge resolved `params` (histboost names) into `args` (a named list of
# argument values); `given` names the arguments the caller set explicitly,
# which must agree with `params` where both set one (a value an alias only
# implies yields to them).
.hb_params_merge <- function(args, resolved, given) {
  implied <- attr(resolved, "implied")
  for (p in names(resolved)) {
    v <- resolved[[p]]
    if (p %in% given) {
      if (p %in% implied) next
      if (!.hb_same_value(args[[p]], v)) {
        .hb_abort("`", p, "` is given both as an argument and in `params`, with different values; give it once.")
      }
    }
    args[p] <- list(v)
  }
  args
}

# The parameters of the registry (.HB_PARAMS, from src/engine/params.def) that
# R checks from their bounds there (r = "arg"), in the registry's order: those
# the model keeps (stored = TRUE) or those only of training (FALSE); with
# `objective`, only those the model file writes for that objective.
.hb_param_names <- function(stored, objective = NULL) {
  keep <- vapply(.HB_PARAMS, function(p) {
    p$r == "arg" && (p$store != "no") == stored && (is.null(objective) || p$store == objective)
  }, NA)
  names(.HB_PARAMS)[keep]
}

# `a`'s values of the registry parameters `names`, checked: an INT or DBL
# against its bounds (an error that names it otherwise), a FLAG as TRUE or
# FALSE. A named list in the order of `names`.
.hb_params_check <- function(a, names) {
  out <- lapply(names, function(nm) {
    p <- .HB_PARAMS[[nm]]
    switch(p$type,
      FLAG = .hb_flag(a[[nm]], nm),
      INT = , DBL = .hb_number(a[[nm]], nm, integer = p$type == "INT", lower = p$lower, upper = p$upper,
                               lower_open = p$lower_open, upper_open = p$upper_open),
      stop("internal: parameter ", nm, " of type ", p$type, " is not checked from the registry"))
  })
  stats::setNames(out, names)
}

# `a` with the registry defaults of `names` where they are NULL (parameters
# newer than some callers' argument lists).
.hb_params_null_default <- function(a, names) {
  for (nm in names) if (is.null(a[[nm]])) a[nm] <- list(.HB_PARAMS[[nm]]$default)
  a
}
