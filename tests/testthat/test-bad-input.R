# The bad-input suite: for every family of input (data shapes and types,
# labels, parameters, prediction, files, formulas, cross-validation), each
# case asserts the error's class and that its message names the argument
# at fault in backquotes. A case is list(expr, class, arg): `expr` is
# evaluated here, `class` is the histboost_error_* kind, `arg` the name the
# message must mention (or a regular expression in `pattern`).

bi <- local({
  set.seed(5)
  n <- 60
  x <- data.frame(a = rnorm(n), b = runif(n), f = factor(sample(c("p", "q", "r"), n, TRUE)))
  y <- x$a + x$b + rnorm(n, sd = 0.1)
  yb <- factor(ifelse(y > median(y), "hi", "lo"))
  m <- hb_quiet(x, y, nrounds = 3L, min_data_in_leaf = 5L, seed = 1L)
  mb <- hb_quiet(x, yb, nrounds = 3L, min_data_in_leaf = 5L, seed = 1L)
  list(n = n, x = x, y = y, yb = yb, m = m, mb = mb, X = as.matrix(x[c("a", "b")]))
})

case <- function(expr, arg, class = "input", pattern = NULL) {
  list(expr = substitute(expr), arg = arg, class = class, pattern = pattern)
}

# histboost() on the small data, the case's arguments replacing the defaults.
fit <- function(...) {
  a <- list(x = bi$x, y = bi$y, nrounds = 2L, min_data_in_leaf = 5L, verbose = 0)
  given <- list(...)
  a[names(given)] <- given
  do.call(histboost, a)
}

# ---- parameters: every numeric one with a string, NA, two values, TRUE,
# and out of range where it has a bound -----------------------------------
num_params <- list(
  learning_rate = list(low = 0), num_leaves = list(low = 1), max_depth = list(),
  min_data_in_leaf = list(low = 0), min_sum_hessian_in_leaf = list(low = -1), lambda_l1 = list(low = -1),
  lambda_l2 = list(low = -1), min_gain_to_split = list(low = -1), max_cat_threshold = list(low = 0),
  cat_smooth = list(low = -1), cat_l2 = list(low = -1), min_data_per_group = list(low = 0),
  bagging_fraction = list(low = 0, high = 1.5), bagging_freq = list(low = -1),
  feature_fraction = list(low = 0, high = 2), tweedie_variance_power = list(low = 1, high = 2),
  huber_delta = list(low = 0), poisson_max_delta_step = list(low = -1), quantile_alpha = list(low = 0, high = 1),
  nrounds = list(low = 0), verbose = list(low = -0.5, high = 3), grad_bits = list(low = 1, high = 9),
  top_rate = list(low = 0, high = 1), other_rate = list(low = 0, high = 1.5), max_conflict_rate = list(low = -1, high = 1),
  drop_rate = list(low = -0.1, high = 1.5), skip_drop = list(low = -0.1, high = 1.5), max_drop = list(),
  feature_fraction_bynode = list(low = 0, high = 2), path_smooth = list(low = -1), max_delta_step = list(low = -1)
)
param_cases <- list()
for (p in names(num_params)) {
  bad <- list(string = "a", na = NA_real_, two = c(1, 2), logical = TRUE)
  if (p == "verbose") bad$logical <- NULL  # TRUE and FALSE mean 1 and 0 there, and a negative whole number 0 (documented)
  if (!is.null(num_params[[p]]$low)) bad$low <- num_params[[p]]$low
  if (!is.null(num_params[[p]]$high)) bad$high <- num_params[[p]]$high
  for (k in names(bad)) {
    param_cases[[paste(p, k)]] <- list(expr = as.call(c(quote(fit), stats::setNames(list(bad[[k]]), p))),
                                       arg = p, class = "input", pattern = NULL)
  }
}
flag_params <- c("quantized", "stochastic_rounding", "refit_leaves", "goss", "enable_bundle", "extra_trees",
                 "xgboost_dart_mode", "uniform_drop")
for (p in flag_params) {
  for (k in c("string", "na", "number")) {
    v <- switch(k, string = "yes", na = NA, number = 1)
    param_cases[[paste(p, k)]] <- list(expr = as.call(c(quote(fit), stats::setNames(list(v), p))),
                                       arg = p, class = "input", pattern = NULL)
  }
}

other_cases <- list(
  # ---- choices -----------------------------------------------------------
  objective_unknown = case(fit(objective = "regresion"), "objective"),
  objective_number = case(fit(objective = 3), "objective"),
  boosting_unknown = case(fit(boosting = "goss2"), "boosting"),
  device_unknown = case(fit(device = "tpu"), "device"),
  eval_metric_number = case(fit(eval_metric = 1), "eval_metric"),
  nthreads_zero = case(fit(nthreads = 0), "nthreads"),
  nthreads_string = case(fit(nthreads = "2"), "nthreads"),
  unknown_argument = case(fit(nround = 5), "nround"),
  alias_argument = case(fit(eta = 0.1), "eta", pattern = "learning_rate"),
  # ---- data shapes and types ---------------------------------------------
  x_missing = case(histboost(), "x"),
  x_list = case(histboost(list(a = 1:3), 1:3, verbose = 0), "x"),
  x_character_matrix = case(histboost(matrix(letters[1:6], 3), 1:3, verbose = 0), "x"),
  x_zero_rows = case(histboost(bi$x[0, ], numeric(0), verbose = 0), "x"),
  x_zero_cols = case(histboost(bi$x[, 0], bi$y, verbose = 0), "x"),
  x_character_column = case(histboost(data.frame(a = letters[1:10]), 1:10, verbose = 0), "x"),
  x_list_column = case(histboost(data.frame(a = I(as.list(1:10))), 1:10, verbose = 0), "x"),
  x_date_column = case(histboost(data.frame(a = Sys.Date() + 1:10), 1:10, verbose = 0), "x"),
  x_duplicate_names = case(histboost(stats::setNames(data.frame(1:10, 11:20), c("a", "a")), 1:10,
                                     verbose = 0), "x"),
  x_vector = case(histboost(letters[1:10], 1:10, verbose = 0), "x"),
  x_matrix_column = case(histboost(data.frame(a = I(matrix(1:20, 10))), 1:10, verbose = 0), "x"),
  # ---- labels --------------------------------------------------------------
  y_missing = case(histboost(bi$x, verbose = 0), "y"),
  y_short = case(histboost(bi$x, bi$y[-1], verbose = 0), "y"),
  y_na = case(histboost(bi$x, replace(bi$y, 3, NA), verbose = 0), "y"),
  y_inf = case(histboost(bi$x, replace(bi$y, 3, Inf), verbose = 0), "y"),
  y_character = case(histboost(bi$x, as.character(bi$y), verbose = 0), "y"),
  y_list = case(histboost(bi$x, as.list(bi$y), verbose = 0), "y"),
  y_one_class = case(histboost(bi$x, factor(rep("a", bi$n)), verbose = 0), "y"),
  y_binary_numeric = case(histboost(bi$x, bi$y, objective = "binary", verbose = 0), "y"),
  y_poisson_negative = case(histboost(bi$x, bi$y - 10, objective = "poisson", verbose = 0), "y"),
  y_gamma_zero = case(histboost(bi$x, abs(bi$y) * 0, objective = "gamma", verbose = 0), "y"),
  y_multiclass_numeric_string = case(histboost(bi$x, bi$y, objective = "multiclass", verbose = 0), "y"),
  y_rank_without_group = case(histboost(bi$x, rpois(bi$n, 1), objective = "lambdarank", verbose = 0),
                              "group"),
  y_rank_fraction = case(histboost(bi$x, bi$y, objective = "lambdarank", group = rep(1:6, each = 10),
                                   verbose = 0), "y"),
  group_short = case(histboost(bi$x, rpois(bi$n, 1), objective = "lambdarank", group = 1:3, verbose = 0),
                     "group"),
  group_na = case(histboost(bi$x, rpois(bi$n, 1), objective = "lambdarank",
                            group = replace(rep(1:6, each = 10), 2, NA), verbose = 0), "group"),
  # ---- weights and offsets ---------------------------------------------------
  weights_short = case(fit(weights = 1:3), "weights"),
  weights_negative = case(fit(weights = c(-1, rep(1, bi$n - 1))), "weights"),
  weights_na = case(fit(weights = c(NA, rep(1, bi$n - 1))), "weights"),
  weights_string = case(fit(weights = rep("1", bi$n)), "weights"),
  weights_all_zero = case(fit(weights = rep(0, bi$n)), "weights"),
  weights_huge = case(fit(weights = rep(1e308, bi$n)), "weights"),
  init_score_short = case(fit(init_score = 1:3), "init_score"),
  init_score_na = case(fit(init_score = c(NA, rep(0, bi$n - 1))), "init_score"),
  init_score_huge = case(fit(init_score = rep(1e308, bi$n)), "init_score"),
  labels_huge = case(histboost(bi$x, bi$y * 1e200, nrounds = 2L, verbose = 0), "y"),
  learning_rate_diverges = case(histboost(bi$x, rpois(bi$n, 2), objective = "poisson", learning_rate = 1e6,
                                          nrounds = 2L, verbose = 0), "learning_rate"),
  # ---- validation and early stopping ---------------------------------------
  valid_not_list = case(fit(valid = bi$x), "valid"),
  valid_no_y = case(fit(valid = list(v = list(x = bi$x))), "valid"),
  valid_wrong_columns = case(fit(valid = list(v = list(x = bi$x[1:2], y = bi$y))), "valid"),
  valid_short_y = case(fit(valid = list(v = list(x = bi$x, y = bi$y[1:3]))), "valid"),
  early_stopping_without_valid = case(fit(early_stopping_rounds = 3), "early_stopping_rounds"),
  early_stopping_zero = case(fit(valid = list(v = list(x = bi$x, y = bi$y)), early_stopping_rounds = 0),
                             "early_stopping_rounds"),
  metric_unknown = case(fit(eval_metric = "rmsle"), "eval_metric"),
  monotone_unknown_name = case(fit(monotone_constraints = c(zz = 1)), "monotone_constraints"),
  monotone_bad_value = case(fit(monotone_constraints = c(a = 2)), "monotone_constraints"),
  monotone_factor = case(fit(monotone_constraints = c(f = 1)), "monotone_constraints"),
  custom_objective_arity = case(fit(objective = function(p) p), "objective"),
  custom_objective_returns = case(fit(objective = function(p, l) p - l), "objective"),
  custom_objective_errors = case(fit(objective = function(p, l) stop("nope")), "objective"),
  custom_objective_short = case(fit(objective = function(p, l) list(grad = 1, hess = 1)), "objective"),
  custom_objective_nan = case(fit(objective = function(p, l) list(grad = p * NaN, hess = p * 0 + 1)),
                              "objective"),
  init_model_not_model = case(fit(init_model = list()), "init_model"),
  # ---- prediction ------------------------------------------------------------
  predict_no_newdata = case(predict(bi$m), "newdata"),
  predict_missing_column = case(predict(bi$m, bi$x[c("a", "f")]), "newdata"),
  predict_wrong_type = case(predict(bi$m, transform(bi$x, a = as.character(a))), "newdata"),
  predict_factor_as_number = case(predict(bi$m, transform(bi$x, f = as.integer(f))), "newdata"),
  predict_type_unknown = case(predict(bi$m, bi$x, type = "prob"), "type"),
  predict_class_regression = case(predict(bi$m, bi$x, type = "class"), "type"),
  predict_iteration_zero = case(predict(bi$m, bi$x, iteration = 0), "iteration"),
  predict_iteration_string = case(predict(bi$m, bi$x, iteration = "1"), "iteration"),
  predict_nthreads_bad = case(predict(bi$m, bi$x, nthreads = -1), "nthreads"),
  predict_init_score_short = case(predict(bi$m, bi$x, init_score = 1:2), "init_score"),
  predict_unknown_argument = case(predict(bi$m, bi$x, typo = "raw"), "typo"),
  predict_not_model = case(predict.histboost(list(), bi$x), "object"),
  predict_matrix_columns = case(predict(bi$m, bi$X), "newdata"),
  predict_edited_names = case({
    e <- bi$m
    e$feature_names <- rev(e$feature_names)
    predict(e, bi$x)
  }, "object", class = "format"),
  importance_type = case(hb_importance(bi$m, type = "total_gain"), "type"),
  importance_not_model = case(hb_importance(1), "model"),
  trees_not_model = case(hb_trees("m"), "model"),
  # ---- files -------------------------------------------------------------
  save_not_model = case(hb_save(list(), tempfile()), "model"),
  save_path_vector = case(hb_save(bi$m, c("a", "b")), "file"),
  save_path_na = case(hb_save(bi$m, NA_character_), "file"),
  save_path_empty = case(hb_save(bi$m, ""), "file"),
  save_missing_folder = case(hb_save(bi$m, file.path(tempfile(), "m.hbm")), "file"),
  save_folder = case(hb_save(bi$m, tempdir()), "file"),
  load_missing = case(hb_load(tempfile()), "file"),
  load_folder = case(hb_load(tempdir()), "file"),
  load_number = case(hb_load(3), "file"),
  load_empty_file = case(hb_load({
    f <- tempfile()
    file.create(f)
    f
  }), "file", class = "format"),
  load_binary_file = case(hb_load({
    f <- tempfile()
    writeBin(as.raw(c(0, 1, 2, 255)), f)
    f
  }), "file", class = "format"),
  load_truncated = case(hb_load({
    f <- tempfile()
    writeBin(charToRaw(substr(bi$m$model_text, 1, nchar(bi$m$model_text) %/% 2)), f)
    f
  }), "file", class = "format"),
  load_changed_byte = case(hb_load({
    f <- tempfile()
    t <- bi$m$model_text
    substr(t, 200, 200) <- if (substr(t, 200, 200) == "1") "2" else "1"
    writeBin(charToRaw(t), f)
    f
  }), "file", class = "format"),
  load_crlf = case(hb_load({
    f <- tempfile()
    writeBin(charToRaw(gsub("\n", "\r\n", bi$m$model_text, fixed = TRUE)), f)
    f
  }), "file", class = "format"),
  # ---- formulas ------------------------------------------------------------
  formula_no_data = case(histboost(y ~ a, verbose = 0), "data"),
  formula_data_matrix = case(histboost(y ~ a, data = bi$X, verbose = 0), "data"),
  formula_missing_var = case(histboost(y ~ zz, data = cbind(bi$x, y = bi$y), verbose = 0), "data"),
  formula_no_response = case(histboost(~ a, data = cbind(bi$x, y = bi$y), verbose = 0), "formula"),
  formula_interaction = case(histboost(y ~ a * b, data = cbind(bi$x, y = bi$y), verbose = 0), "formula"),
  formula_user_function = case(histboost(y ~ my_fun(a), data = cbind(bi$x, y = bi$y), verbose = 0), "formula"),
  formula_data_dependent = case(histboost(y ~ cut(a, 3), data = cbind(bi$x, y = bi$y), verbose = 0), "formula"),
  formula_namespace = case(histboost(y ~ base::abs(a), data = cbind(bi$x, y = bi$y), verbose = 0), "formula"),
  formula_scale = case(histboost(y ~ scale(a), data = cbind(bi$x, y = bi$y), verbose = 0), "formula"),
  formula_weights_unknown = case(histboost(y ~ a, data = cbind(bi$x, y = bi$y), weights = nowhere, verbose = 0),
                                 "weights"),
  formula_subset_bad = case(histboost(y ~ a, data = cbind(bi$x, y = bi$y), subset = "x", verbose = 0), "subset"),
  formula_offset_and_init = case(histboost(y ~ a + offset(b), data = cbind(bi$x, y = bi$y), init_score = bi$y,
                                           verbose = 0), "init_score"),
  # ---- cross-validation ------------------------------------------------------
  cv_nfold_one = case(hb_cv(bi$x, bi$y, nfold = 1L, verbose = 0), "nfold"),
  cv_nfold_too_many = case(hb_cv(bi$x[1:5, ], bi$y[1:5], nfold = 6L, verbose = 0), "nfold"),
  cv_nfold_string = case(hb_cv(bi$x, bi$y, nfold = "3", verbose = 0), "nfold"),
  cv_valid_given = case(hb_cv(bi$x, bi$y, valid = list(), verbose = 0), "valid"),
  cv_folds_bad = case(hb_cv(bi$x, bi$y, folds = list(1:3, 100:200), verbose = 0), "folds"),
  cv_stratified_bad = case(hb_cv(bi$x, bi$y, stratified = "yes", verbose = 0), "stratified"),
  cv_one_row_class = case(hb_cv(bi$x, factor(c("rare", as.character(bi$yb[-1]))), nfold = 3L, verbose = 0),
                          "y", pattern = "class `rare`"),
  cv_one_query = case(hb_cv(bi$x, rpois(bi$n, 1), group = rep(1, bi$n), objective = "lambdarank", verbose = 0),
                      "group"),
  cv_x_dataset = case(hb_cv(hb_dataset(bi$x, bi$y), bi$y, verbose = 0), "x"),
  # ---- datasets and threads ------------------------------------------------
  dataset_max_bin = case(hb_dataset(bi$x, bi$y, max_bin = 1), "max_bin"),
  dataset_max_bin_big = case(hb_dataset(bi$x, bi$y, max_bin = 1000), "max_bin"),
  dataset_reference_bad = case(hb_dataset(bi$x, bi$y, reference = 1), "reference"),
  threads_option_bad = case({
    old <- options(histboost.nthreads = "many")
    on.exit(options(old))
    hb_threads()
  }, "histboost.nthreads")
)

bad_input_cases <- c(param_cases, other_cases)

test_that("the bad-input suite has at least 150 cases", {
  expect_gte(length(bad_input_cases), 150L)
})

test_that("every bad input is a classed error whose message names the argument", {
  env <- environment()
  for (k in names(bad_input_cases)) {
    cs <- bad_input_cases[[k]]
    err <- tryCatch(eval(cs$expr, env), error = function(e) e)
    cls <- paste0("histboost_error_", cs$class)
    expect_true(inherits(err, cls),
                label = sprintf("%s: %s (got class %s: %s)", k, cls, class(err)[1L],
                                if (inherits(err, "condition")) conditionMessage(err) else "no error"))
    if (!inherits(err, "condition")) next
    msg <- conditionMessage(err)
    expect_true(grepl(paste0("`", cs$arg, "`"), msg, fixed = TRUE) ||
                  (cs$arg == "histboost.nthreads" && grepl(cs$arg, msg, fixed = TRUE)),
                label = sprintf("%s: the message names `%s`: %s", k, cs$arg, msg))
    if (!is.null(cs$pattern)) expect_match(msg, cs$pattern, label = k)
  }
})
