# params.R: `params = list(...)` as LightGBM and xgboost users write it: their
# parameter names (and a few of their values) mapped to histboost's, with
# errors for unknown names, for names that mean different things in the two
# libraries, and for one parameter given twice with different values.

# Alias -> histboost name (our own names map to themselves, added below):
# .HB_PARAM_ALIASES, generated from the registry (src/engine/params.def) into
# R/params-generated.R.

# Names that LightGBM and xgboost use for different things, for what histboost
# decides itself, or for what it does not have: an error that says what to do
# instead. Each group is a parameter with its aliases and one reason. Every
# name of LightGBM 4.7 (lightgbm's own list of parameters and aliases) is
# taken (the registry's aliases), ignored (.HB_PARAM_IGNORED), accepted at its
# default only (.HB_PARAM_AT_DEFAULT) or refused here; test-params.R checks
# that against the installed lightgbm.
.hb_refusals <- function(...) {
  g <- list(...)
  stats::setNames(rep(vapply(g, `[[`, "", 2L), lengths(lapply(g, `[[`, 1L))), unlist(lapply(g, `[[`, 1L)))
}
.HB_PARAM_REFUSED <- .hb_refusals(
  list("alpha", paste("means the Huber or quantile parameter to LightGBM and the L1 penalty to xgboost: give",
                      "`huber_delta`, `quantile_alpha` or `lambda_l1`")),
  list(c("num_class", "num_classes"), "is not needed: the classes are the levels of `y` (a factor)"),
  list("tree_method", "is not needed: histboost always grows trees from histograms"),
  list("one_drop", paste("(xgboost's DART: always drop a tree) is not available: DART drops as LightGBM does; raise",
                         "`drop_rate` or lower `skip_drop`")),
  list("drop_seed", "is not needed: DART's drops come from `seed`, the round and the tree"),
  list(c("bagging_seed", "bagging_fraction_seed"),
       "is not needed: the bags come from `seed`, the bagging round and the row; give `seed`"),
  list(c("data_seed", "data_random_seed"),
       "is not needed: the rows that place the bins are drawn the same way for the same data"),
  list("feature_fraction_seed", "is not needed: the features sampled come from `seed` and the tree; give `seed`"),
  list("extra_seed",
       "is not needed: extra_trees' thresholds come from `seed`, the tree, the node and the feature; give `seed`"),
  list("objective_seed", "is not needed: no objective draws at random"),
  list("seed_per_iteration", "is not needed: every draw depends on `seed` and the round already"),
  # LightGBM's command-line program: files, tasks, outputs
  list(c("config", "config_file", "task", "task_type", "data", "train", "train_data", "data_filename",
         "train_data_file", "header", "has_header", "two_round", "two_round_loading", "use_two_round_loading",
         "save_binary", "is_save_binary", "is_save_binary_file", "precise_float_parser", "parser_config_file",
         "output_result", "name_pred", "pred_name", "predict_name", "predict_result", "prediction_name",
         "prediction_result", "convert_model", "convert_model_file", "convert_model_language"),
       paste("is a setting of LightGBM's command-line program (data files, tasks, output files): histboost trains",
             "on R objects; give the data as `x` and `y`, save with hb_save() and predict with predict()")),
  list(c("valid", "test", "test_data", "valid_data", "test_data_file", "valid_data_file", "valid_filenames"),
       "names data files in LightGBM: give validation data as the argument `valid = list(name = list(x = , y = ))`"),
  list(c("label_column", "label"), "names a column of a data file in LightGBM: give the labels as `y`"),
  list(c("weight_column", "weight"), "names a column of a data file in LightGBM: give the weights as `weights`"),
  list(c("group_column", "group", "query", "group_id", "query_id", "query_column"),
       "names a column of a data file in LightGBM: give each row's query as the argument `group`"),
  list(c("ignore_column", "blacklist", "ignore_feature"), "names columns of a data file in LightGBM: drop those columns from `x`"),
  list(c("categorical_feature", "cat_column", "cat_feature", "categorical_column", "categorical_features"),
       paste("is not needed: histboost splits a column as categories when it is a factor; make those columns",
             "factors (in a data.frame)")),
  list(c("input_model", "model_in", "model_input"), "names a model file in LightGBM: give the model to continue as `init_model`"),
  list(c("output_model", "model_out", "model_output", "snapshot_freq", "save_period"),
       "names a model file in LightGBM: save the model with hb_save() (a callback can save it during training)"),
  # several machines, GPUs
  list(c("tree_learner", "tree", "tree_type", "tree_learner_type", "num_machines", "num_machine", "machines",
         "nodes", "workers", "machine_list_filename", "mlist", "machine_list", "machine_list_file",
         "local_listen_port", "port", "local_port", "time_out", "pre_partition", "is_pre_partition"),
       paste("sets up LightGBM's socket network: histboost trains on several machines through MPI, each process",
             "on its own rows; give `distributed = \"mpi\"` and start the processes with mpirun or hb_mpi_run()")),
  list(c("top_k", "topk"),
       paste("(LightGBM's voting-parallel learner) is not available: histboost's distributed training sums every",
             "feature's histogram and gives the one-process model")),
  list(c("gpu_platform_id", "gpu_device_id", "gpu_device_id_list", "num_gpu", "gpu_id", "gpu_use_dp"),
       paste("is not needed: give `device = \"cuda\"`; a process uses one GPU (CUDA_VISIBLE_DEVICES chooses it;",
             "with `distributed = \"mpi\"`, each process its local rank's), and its sums are exact fixed point")),
  # prediction
  list(c("start_iteration_predict", "num_iteration_predict", "predict_raw_score", "raw_score", "predict_rawscore",
         "is_predict_raw_score", "predict_leaf_index", "leaf_index", "is_predict_leaf_index", "predict_contrib",
         "contrib", "is_predict_contrib", "predict_disable_shape_check", "pred_early_stop_freq",
         "pred_early_stop_margin", "predictor"),
       paste("is a setting of prediction: give predict() its `type` (\"raw\", \"leaf\", \"contrib\", ...),",
             "`iteration` and `device`")),
  # logging
  list(c("is_provide_training_metric", "train_metric", "training_metric", "is_training_metric"),
       paste("is not needed: without validation sets the training data's metrics are logged; with them, add the",
             "training data to `valid` to log its metrics too")),
  list(c("metric_freq", "output_freq", "print_every_n"),
       "is not needed: `verbose = 1` prints every 10th round, 2 every round; fit$evaluation_log holds every round"),
  list("maximize", "is not needed: histboost knows each metric's direction (a custom metric returns `higher_better`)"),
  list("disable_default_eval_metric", "is not needed: give `eval_metric` to choose the metrics logged"),
  # other places in histboost
  list("refit_decay_rate", "belongs to refitting: give `decay_rate` to hb_refit()"),
  list(c("updater", "refresh_leaf", "process_type"), "(xgboost's refresh) is not needed: refit leaves with hb_refit()"),
  list("saved_feature_importance_type", "is not needed: give hb_importance() its `type` (\"gain\", \"split\" or \"cover\")"),
  list(c("base_score", "base_margin"),
       paste("is not available as such: give `init_score` (each row's starting raw score), or",
             "`boost_from_average = FALSE` to start from 0")),
  list("num_grad_quant_bins",
       paste("is not available: histboost sets its quantized gradients' steps in bits; `grad_bits` = b gives",
             "gradients of up to 2^(b-1) - 1 steps each way (4: 7 steps), where LightGBM's num_grad_quant_bins = n",
             "gives n / 2")),
  list(c("histogram_pool_size", "hist_pool_size"), "is not needed: histboost sizes its histogram pool itself"),
  # not available
  list(c("linear_tree", "linear_trees", "linear_lambda"),
       "(linear models in the leaves) is not available: histboost's leaves are constants"),
  list(c("cegb_tradeoff", "cegb_penalty_split", "cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled"),
       "(cost-efficient gradient boosting) is not available; `min_gain_to_split` charges every split alike"),
  list(c("forcedsplits_filename", "fs", "forced_splits", "forced_splits_file", "forced_splits_filename"),
       "(splits forced from a JSON file) is not available"),
  list("forcedbins_filename",
       paste("(bin bounds from a JSON file) is not available: histboost places bins from the data; `max_bin_by_feature`",
             "sets a column's number of bins")),
  list(c("feature_contri", "fc", "fp", "feature_contrib", "feature_penalty", "feature_weights"),
       paste("(a weight per feature) is not available; drop columns from `x`, or limit them with",
             "`interaction_constraints` or `feature_fraction`")),
  list(c("monotone_penalty", "mc_penalty", "ms_penalty", "monotone_splits_penalty"),
       "is not available: histboost's monotone constraints use LightGBM's \"basic\" method, without a penalty"),
  list(c("monotone_constraints_method", "mc_method", "monotone_constraining_method"),
       "other than \"basic\" is not available: histboost's monotone constraints use LightGBM's \"basic\" method"),
  list("reg_sqrt",
       "is not available: fit `sign(y) * sqrt(abs(y))` instead, and square the predictions back (`sign(p) * p^2`)"),
  list("sigmoid", "other than 1 is not available: the binary, one-vs-all and lambdarank losses use sigmoid 1"),
  list("use_missing",
       paste("= FALSE is not available: histboost always learns where missing values go; to treat NA as 0, as",
             "LightGBM then does, set them to 0 in `x`")),
  list("zero_as_missing",
       "= TRUE is not available: set those zeros to NA in `x` (a matrix or data.frame) to treat them as missing"),
  list("bagging_by_query", "= TRUE is not available: bagging draws rows, not whole queries"),
  list("lambdarank_position_bias_regularization", "(position-debiased ranking) is not available"),
  list("multi_error_top_k",
       "other than 1 is not available: multi_error counts a row right when its class scores highest"),
  list("auc_mu_weights", "is not needed: histboost has no auc_mu metric"),
  list(c("pred_early_stop"), "= TRUE is not available: predict() sums every tree"),
  list(c("colsample_bylevel"),
       paste("is not available: histboost grows trees leaf by leaf, not level by level;",
             "`feature_fraction_bynode` samples features at every node")),
  list("grow_policy",
       "other than \"lossguide\" is not available: histboost grows trees leaf by leaf; `max_depth` limits their depth"),
  list("sampling_method",
       "other than \"uniform\" is not available: for gradient-based sampling give `data_sample_strategy = \"goss\"`"),
  list("num_parallel_tree", "other than 1 is not available: for a random forest give `boosting = \"rf\"`"),
  list("multi_strategy", "other than \"one_output_per_tree\" is not available: histboost grows one tree a class"),
  list("huber_slope", "(xgboost's pseudo-Huber loss) is not available: give `objective = \"huber\"` and `huber_delta`"),
  list(c("aft_loss_distribution", "aft_loss_distribution_scale"),
       "(xgboost's survival:aft) is not available; `objective = \"cox\"` fits proportional hazards"),
  list(c("lambdarank_pair_method", "lambdarank_num_pair_per_sample", "lambdarank_unbiased", "lambdarank_bias_norm",
         "lambdarank_normalization", "ndcg_exp_gain"),
       paste("(xgboost's ranking) is not available: histboost's lambdarank is LightGBM's (`label_gain`,",
             "`lambdarank_truncation_level`, `lambdarank_norm`)")),
  list("missing", "is not needed: histboost takes NA (and NaN) as missing; set other markers to NA in `x`"),
  list("feature_selector", "(xgboost's linear booster) is not available: histboost grows trees")
)

# LightGBM's and xgboost's names that only say how to store or check things,
# which histboost decides itself: accepted in `params` and given no effect.
.HB_PARAM_IGNORED <- c("force_col_wise", "force_row_wise", "deterministic",
                       "is_enable_sparse", "is_sparse", "enable_sparse", "sparse", "validate_parameters",
                       "max_cached_hist_node", "extmem_single_page", "single_precision_histogram",
                       "deterministic_histogram", "use_rmm", "sketch_eps")

# Names of .HB_PARAM_REFUSED that are accepted at this value (LightGBM's or
# xgboost's default), which is what histboost does.
.HB_PARAM_AT_DEFAULT <- list(
  use_missing = TRUE, zero_as_missing = FALSE, bagging_by_query = FALSE, multi_error_top_k = 1,
  monotone_constraints_method = "basic", mc_method = "basic", monotone_constraining_method = "basic",
  sigmoid = 1, reg_sqrt = FALSE, linear_tree = FALSE, linear_trees = FALSE, linear_lambda = 0,
  monotone_penalty = 0, mc_penalty = 0, ms_penalty = 0, monotone_splits_penalty = 0, cegb_tradeoff = 1,
  cegb_penalty_split = 0, lambdarank_position_bias_regularization = 0, pred_early_stop = FALSE,
  colsample_bylevel = 1, grow_policy = "lossguide", sampling_method = "uniform", num_parallel_tree = 1,
  multi_strategy = "one_output_per_tree", missing = NA, seed_per_iteration = FALSE
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
  rank_xendcg = NA, xendcg = NA, xe_ndcg = NA, xe_ndcg_mart = NA, xendcg_mart = NA,
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
  if (is.na(to)) {
    .hb_abort(what, " \"", v, "\" has no histboost equivalent",
              if (grepl("rank|ndcg", v)) "; for ranking, histboost has objective = \"lambdarank\" (LambdaMART)", ".")
  }
  to
}

# Metric names of LightGBM and xgboost -> histboost's.
.HB_METRIC_ALIASES <- c(
  l2_root = "rmse", root_mean_squared_error = "rmse", l1 = "mae", mean_absolute_error = "mae",
  mse = "l2", mean_squared_error = "l2", square_loss = "l2", regression_l2 = "l2",
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
    if (nm %in% .HB_PARAM_IGNORED) next  # how LightGBM or xgboost stores things: histboost decides that itself
    if (nm %in% names(.HB_PARAM_AT_DEFAULT) && .hb_at_default(v, .HB_PARAM_AT_DEFAULT[[nm]])) next
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
  from <- unlist(from)
  attr(out, "from") <- from[from != names(from)]  # the names given otherwise than histboost's (.hb_alias_errors)
  out
}

# expr (the arguments' checks), with an error about a parameter that
# `params` gave under another name (LightGBM's or xgboost's; `from`, from
# .hb_params_resolve: histboost's name -> the name given) saying that name too.
.hb_alias_errors <- function(from, expr) {
  if (!length(from)) return(expr)
  tryCatch(expr, histboost_error_input = function(e) {
    msg <- conditionMessage(e)
    hit <- names(from)[startsWith(msg, paste0("`", names(from), "`"))]
    if (!length(hit)) stop(e)
    .hb_reraise(e, "`params`: `", from[[hit[1L]]], "` is histboost's `", hit[1L], "`: ", msg)
  })
}

# `v` is `d`, LightGBM's or xgboost's default of a parameter histboost has
# only at that value (NA: any missing value).
.hb_at_default <- function(v, d) {
  if (length(v) != 1L || is.list(v) || is.object(v)) return(FALSE)
  if (is.na(d)) return(is.na(v))
  !is.na(v) && (.hb_same_value(v, d) || (is.logical(d) && is.numeric(v) && v == d))
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
    # LightGBM's num_threads = 0 (its default): OpenMP's default, histboost's NULL (hb_threads())
    nthreads = if (nm != "nthreads" && is.numeric(v) && length(v) == 1L && !is.na(v) && v == 0) NULL else v,
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
    verbose = .hb_verbose_norm(v),
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
      same <- if (p == "verbose") .hb_same_value(.hb_verbose_norm(args[[p]]), v) else .hb_same_value(args[[p]], v)
      if (!same) {
        from <- attr(resolved, "from")
        from <- if (p %in% names(from)) from[[p]] else NA
        .hb_abort("`", p, "` is given both as an argument and in `params`",
                  if (!is.na(from)) paste0(" (as `", from, "`)"), ", with different values; give it once.")
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
