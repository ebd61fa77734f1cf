# params.R: `params = list(...)` as LightGBM and xgboost users write it: their
# parameter names (and a few of their values) mapped to histboost's, with
# errors for unknown names, for names that mean different things in the two
# libraries, and for one parameter given twice with different values.

# Alias -> histboost name (our own names map to themselves, added below).
.HB_PARAM_ALIASES <- c(
  # rounds and shrinkage
  num_iterations = "nrounds", num_iteration = "nrounds", n_iter = "nrounds", num_tree = "nrounds",
  num_trees = "nrounds", num_round = "nrounds", num_rounds = "nrounds", num_boost_round = "nrounds",
  n_estimators = "nrounds", max_iter = "nrounds",
  eta = "learning_rate", shrinkage_rate = "learning_rate",
  # tree shape
  num_leaf = "num_leaves", max_leaves = "num_leaves", max_leaf = "num_leaves", max_leaf_nodes = "num_leaves",
  min_data_per_leaf = "min_data_in_leaf", min_data = "min_data_in_leaf", min_child_samples = "min_data_in_leaf",
  min_samples_leaf = "min_data_in_leaf",
  min_sum_hessian_per_leaf = "min_sum_hessian_in_leaf", min_sum_hessian = "min_sum_hessian_in_leaf",
  min_hessian = "min_sum_hessian_in_leaf", min_child_weight = "min_sum_hessian_in_leaf",
  # regularization
  reg_alpha = "lambda_l1", l1_regularization = "lambda_l1",
  lambda = "lambda_l2", reg_lambda = "lambda_l2", l2_regularization = "lambda_l2",
  min_split_gain = "min_gain_to_split", gamma = "min_gain_to_split", min_split_loss = "min_gain_to_split",
  # sampling
  sub_row = "bagging_fraction", subsample = "bagging_fraction", bagging = "bagging_fraction",
  subsample_freq = "bagging_freq",
  sub_feature = "feature_fraction", colsample_bytree = "feature_fraction",
  data_sample_strategy = "goss",
  # binning, categories, bundles
  max_bins = "max_bin", is_enable_bundle = "enable_bundle", bundle = "enable_bundle",
  # objective, metric, stopping
  objective_type = "objective", app = "objective", application = "objective", loss = "objective",
  boosting_type = "boosting", boost = "boosting", booster = "boosting",
  metric = "eval_metric", metrics = "eval_metric", metric_types = "eval_metric",
  early_stopping_round = "early_stopping_rounds", early_stopping = "early_stopping_rounds",
  n_iter_no_change = "early_stopping_rounds",
  ndcg_eval_at = "eval_at", ndcg_at = "eval_at", map_eval_at = "eval_at", map_at = "eval_at",
  mc = "monotone_constraints", monotone_constraint = "monotone_constraints",
  # running
  num_threads = "nthreads", num_thread = "nthreads", nthread = "nthreads", n_jobs = "nthreads",
  random_seed = "seed", random_state = "seed", device_type = "device", verbosity = "verbose",
  # class imbalance
  unbalance = "is_unbalance", unbalanced_sets = "is_unbalance"
)

# Names that LightGBM and xgboost use for different things, or that
# histboost decides itself: an error that says what to do instead.
.HB_PARAM_REFUSED <- c(
  alpha = paste("means the Huber or quantile parameter to LightGBM and the L1 penalty to xgboost: give",
                "`huber_delta`, `quantile_alpha` or `lambda_l1`"),
  num_class = "is not needed: the classes are the levels of `y` (a factor)",
  tree_method = "is not needed: histboost always grows trees from histograms",
  max_delta_step = "is not a histboost parameter (`poisson_max_delta_step` damps the Poisson loss)"
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
  mapped <- function(table, what) {
    if (!is.character(v) || length(v) != 1L || is.na(v) || !v %in% names(table)) return(v)
    to <- table[[v]]
    if (is.na(to)) .hb_abort("`params`: ", what, " \"", v, "\" has no histboost equivalent.")
    to
  }
  switch(ours,
    objective = mapped(.HB_OBJECTIVE_ALIASES, "the objective"),
    eval_metric = if (is.character(v)) {
      vapply(v, function(m) if (m %in% names(.HB_METRIC_ALIASES)) .HB_METRIC_ALIASES[[m]] else m, "",
             USE.NAMES = FALSE)
    } else v,
    boosting = {
      if (identical(v, "gbtree") || identical(v, "gbm")) "gbdt"
      else if (identical(v, "random_forest")) "rf"
      else if (is.character(v) && length(v) == 1L && v %in% c("dart", "gblinear")) {
        .hb_abort("`params`: boosting \"", v, "\" is not available in histboost (\"gbdt\" or \"rf\").")
      } else v
    },
    device = if (identical(v, "gpu")) "cuda" else v,
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
