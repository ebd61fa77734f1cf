# Argument names: exact matching with suggestions instead of R's partial
# matching, and params = list(...) with LightGBM's and xgboost's names, each
# checked against the same model trained with histboost's own names.

test_that("shortened or foreign argument names are errors that suggest the name, not partial matches", {
  d <- gen_task(401, n = 300, task = "regression")
  expect_input_error(hb_quiet(d$x, d$y, nround = 7), "`nround` is not an argument of histboost\\(\\)\\. Did you mean `nrounds`\\?")
  expect_input_error(hb_quiet(d$x, d$y, lambda = 1), "Did you mean `lambda_l2`")
  expect_input_error(hb_quiet(d$x, d$y, min_data = 5), "Did you mean `min_data_in_leaf`")
  expect_input_error(hb_quiet(d$x, d$y, bagging = 0.5), "Did you mean `bagging_fraction`")
  expect_input_error(hb_quiet(d$x, d$y, eta = 0.5), "Did you mean `learning_rate`")
  expect_input_error(hb_quiet(d$x, d$y, weight = rep(1, 300)), "Did you mean `weights`")
  df <- cbind(d$x, target = d$y)
  expect_input_error(hb_quiet(target ~ ., data = df, nround = 3), "Did you mean `nrounds`")
  expect_input_error(hb_cv(d$x, d$y, nround = 3, verbose = 0), "Did you mean `nrounds`")
  expect_input_error(hb_cv(d$x, d$y, fold = 3, verbose = 0), "Did you mean `folds`")
  # the full names still work, and positions stop after y
  f <- hb_quiet(d$x, d$y, nrounds = 3L)
  expect_identical(f$niter, 3L)
  expect_input_error(histboost(d$x, d$y, rep(1, 300), verbose = 0), "unnamed")
})

test_that("params = list() takes LightGBM's and xgboost's names: the same model as histboost's own", {
  d <- gen_task(402, n = 600, task = "regression", factors = 1)
  own <- hb_quiet(d$x, d$y, nrounds = 12L, learning_rate = 0.3, num_leaves = 7L, min_data_in_leaf = 10L,
                  lambda_l2 = 2, lambda_l1 = 0.5, feature_fraction = 0.8, min_sum_hessian_in_leaf = 0.1,
                  min_gain_to_split = 0.01, nthreads = 2L, seed = 9)
  xgb <- hb_quiet(d$x, d$y, params = list(num_boost_round = 12, eta = 0.3, max_leaves = 7, min_child_samples = 10,
                                          reg_lambda = 2, reg_alpha = 0.5, colsample_bytree = 0.8,
                                          min_child_weight = 0.1, gamma = 0.01, nthread = 2, random_state = 9))
  lgb <- hb_quiet(d$x, d$y, params = list(num_iterations = 12, shrinkage_rate = 0.3, num_leaves = 7,
                                          min_data_in_leaf = 10, lambda = 2, l1_regularization = 0.5,
                                          sub_feature = 0.8, min_sum_hessian = 0.1, min_split_gain = 0.01,
                                          num_threads = 2, seed = 9))
  expect_identical(predict(xgb, d$x), predict(own, d$x))
  expect_identical(predict(lgb, d$x), predict(own, d$x))
  expect_identical(xgb$params$learning_rate, 0.3)
  expect_identical(xgb$niter, 12L)
  # xgboost's subsample draws rows every round: bagging_freq = 1 unless given
  bag <- hb_quiet(d$x, d$y, nrounds = 5L, bagging_fraction = 0.7, bagging_freq = 1L, seed = 3)
  sub <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 3, params = list(subsample = 0.7))
  expect_identical(predict(sub, d$x), predict(bag, d$x))
  sub3 <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 3, bagging_freq = 3L, params = list(subsample = 0.7))
  expect_identical(predict(sub3, d$x),
                   predict(hb_quiet(d$x, d$y, nrounds = 5L, seed = 3, bagging_fraction = 0.7, bagging_freq = 3L), d$x))
  # values in their terms: objective, metric, boosting, verbosity
  b <- gen_task(403, n = 600, task = "binary")
  y01 <- as.integer(b$y == levels(b$y)[2])
  va <- list(v = list(x = b$x[1:200, ], y = y01[1:200]))
  fb <- histboost(b$x, y01, valid = va, params = list(objective = "binary:logistic", metric = "binary_logloss",
                                                      num_iterations = 5, verbosity = -1, seed = 1))
  expect_identical(fb$task, "binary")
  expect_identical(names(fb$evaluation_log), c("iter", "v_logloss"))
  expect_equal(fb$evaluation_log$v_logloss[5], logloss(y01[1:200], predict(fb, b$x[1:200, ])), tolerance = TOL$metric)
  goss <- hb_quiet(b$x, b$y, nrounds = 15L, goss = TRUE, seed = 2)
  lgoss <- hb_quiet(b$x, b$y, nrounds = 15L, seed = 2, params = list(boosting_type = "goss"))
  expect_identical(predict(lgoss, b$x), predict(goss, b$x))
  expect_identical(predict(hb_quiet(b$x, b$y, nrounds = 15L, seed = 2, params = list(data_sample_strategy = "goss")),
                           b$x), predict(goss, b$x))
  m <- gen_task(404, n = 300, task = "multiclass")
  fm <- hb_quiet(m$x, m$y, nrounds = 3L, valid = list(v = list(x = m$x, y = m$y)),
                 params = list(objective = "multi:softprob", eval_metric = c("mlogloss", "merror")))
  expect_identical(names(fm$evaluation_log), c("iter", "v_multi_logloss", "v_multi_error"))
})

test_that("objective = takes LightGBM's and xgboost's objective names as params does: the same model", {
  al <- histboost:::.HB_OBJECTIVE_ALIASES
  r <- gen_task(407, n = 300, task = "regression")
  b <- gen_task(408, n = 300, task = "binary")
  m <- gen_task(409, n = 300, task = "multiclass")
  set.seed(407)
  data_for <- function(obj) switch(obj,
    binary = list(x = b$x, y = b$y),
    multiclass = , multiclassova = list(x = m$x, y = m$y),
    cross_entropy = list(x = r$x, y = (r$y - min(r$y)) / diff(range(r$y))),
    lambdarank = list(x = r$x, y = findInterval(r$y, quantile(r$y, c(0.3, 0.6, 0.9))), group = rep(1:30, each = 10)),
    cox = NULL,                                  # a survival response: not in this test
    list(x = r$x, y = abs(r$y) + 0.1))           # every loss of a numeric y takes positive labels
  tried <- 0L
  for (a in names(al)[!is.na(al)]) {
    obj <- al[[a]]
    d <- data_for(obj)
    if (is.null(d)) next
    fit <- function(...) hb_quiet(d$x, d$y, group = d$group, nrounds = 3L, num_leaves = 4L, seed = 1L, ...)
    want <- predict(fit(objective = obj), d$x, type = "raw")
    by_arg <- fit(objective = a)
    expect_identical(by_arg$params$objective, obj, label = a)
    expect_identical(predict(by_arg, d$x, type = "raw"), want, label = a)
    expect_identical(predict(fit(params = list(objective = a)), d$x, type = "raw"), want, label = a)
    tried <- tried + 1L
  }
  expect_gt(tried, 20L)
  # both routes at once agree when they name the same objective
  f2 <- hb_quiet(r$x, r$y, nrounds = 2L, objective = "l2", params = list(objective = "regression"))
  expect_identical(f2$params$objective, "regression")
  expect_input_error(hb_quiet(r$x, r$y, objective = "mse", params = list(objective = "mae")),
                     "`objective` is given both")
  # unknown names keep their hint; names without an equivalent say so
  expect_input_error(hb_quiet(r$x, r$y, objective = "regresion"), "Did you mean `regression`")
  expect_input_error(hb_quiet(r$x, r$y, objective = "rank:pairwise"),
                     "`objective` \"rank:pairwise\" has no histboost equivalent")
  # hb_cv() reads the objective as histboost() does: binary:logistic stratifies as binary
  y01 <- as.integer(b$y == levels(b$y)[2L])
  cv <- function(o) {
    set.seed(11)
    hb_cv(b$x, y01, objective = o, nfold = 3L, nrounds = 3L, num_leaves = 4L, seed = 1L, verbose = 0L)
  }
  ca <- cv("binary:logistic")
  co <- cv("binary")
  expect_identical(ca$folds, co$folds)
  expect_identical(ca$pred, co$pred)
})

test_that("params: unknown, ambiguous and conflicting entries are clear errors", {
  d <- gen_task(405, n = 200, task = "regression")
  expect_input_error(hb_quiet(d$x, d$y, params = list(learning_rat = 0.1)), "`learning_rat` is not a parameter.*Did you mean `learning_rate`")
  expect_input_error(hb_quiet(d$x, d$y, params = list(alpha = 0.1)), "`alpha` means the Huber")
  expect_input_error(hb_quiet(d$x, d$y, params = list(num_class = 3)), "classes are the levels of `y`")
  expect_input_error(hb_quiet(d$x, d$y, params = list(eta = 0.1, learning_rate = 0.2)),
                     "gives `learning_rate` twice with different values \\(as `eta` and as `learning_rate`\\)")
  expect_input_error(hb_quiet(d$x, d$y, learning_rate = 0.2, params = list(eta = 0.1)),
                     "`learning_rate` is given both as an argument and in `params` \\(as `eta`\\), with different")
  expect_input_error(hb_quiet(d$x, d$y, learning_rate = 0.2, params = list(learning_rate = 0.1)),
                     "`learning_rate` is given both as an argument and in `params`, with different")
  expect_input_error(hb_quiet(d$x, d$y, params = list(x = d$x)), "`x` is not a parameter")
  expect_input_error(hb_quiet(d$x, d$y, params = list(0.1)), "name every element")
  expect_input_error(hb_quiet(d$x, d$y, params = c(eta = 0.1)), "named list")
  expect_input_error(hb_quiet(d$x, d$y, params = list(objective = "rank:pairwise")), "no histboost equivalent")
  expect_input_error(hb_quiet(d$x, d$y, params = list(boosting = "gblinear")), "not available")
  # the same value twice is fine
  a <- hb_quiet(d$x, d$y, nrounds = 3L, learning_rate = 0.2, seed = 1, params = list(eta = 0.2, learning_rate = 0.2))
  expect_identical(a$params$learning_rate, 0.2)
  # range checks name the name given and ours: registry parameters, R-side ones, in hb_cv() too
  expect_input_error(hb_quiet(d$x, d$y, params = list(eta = -1)),
                     "^`params`: `eta` is histboost's `learning_rate`: `learning_rate` must be a number > 0, not -1")
  expect_input_error(hb_quiet(d$x, d$y, params = list(bin_construct_sample_cnt = 0)),
                     "`bin_construct_sample_cnt` is histboost's `bin_sample_rows`: `bin_sample_rows` must be")
  expect_input_error(hb_quiet(d$x, d$y, params = list(min_child_weight = "a")),
                     "`min_child_weight` is histboost's `min_sum_hessian_in_leaf`: .*not the string \"a\"")
  expect_input_error(hb_cv(d$x, d$y, nrounds = 2L, verbose = 0, params = list(max_leaves = 1)),
                     "`max_leaves` is histboost's `num_leaves`: `num_leaves` must be a whole number >= 2")
  # histboost's own name, in params or as an argument: the message as before
  expect_input_error(hb_quiet(d$x, d$y, params = list(num_leaves = 1)), "^`num_leaves` must be a whole number")
  expect_input_error(hb_quiet(d$x, d$y, num_leaves = 1), "^`num_leaves` must be a whole number")
  expect_input_error(hb_cv(d$x, d$y, nrounds = 2L, verbose = 0, params = list(eta = 0.1, num_leaves = 1)),
                     "^`num_leaves` must be a whole number")
  # LightGBM's num_threads = 0 is its default (OpenMP's): histboost's NULL; nthreads = 0 itself stays an error
  m0 <- hb_quiet(d$x, d$y, nrounds = 2L, seed = 1, params = list(num_threads = 0))
  expect_identical(m0$model_text, hb_quiet(d$x, d$y, nrounds = 2L, seed = 1)$model_text)
  expect_input_error(hb_quiet(d$x, d$y, nthreads = 0), "`nthreads` must be a whole number >= 1")
})

test_that("every LightGBM parameter name is taken, or refused with what to do, never unknown", {
  skip_if_not_installed("lightgbm")
  # lightgbm's own list of its parameters and their aliases (from its C library)
  lgb <- lightgbm:::.PARAMETER_ALIASES()
  expect_gt(length(lgb), 100L)
  known <- setdiff(histboost:::.HB_TRAIN_ARGS, histboost:::.HB_DATA_ARGS)
  outcome <- function(nm, v) {
    tryCatch({
      histboost:::.hb_params_resolve(stats::setNames(list(v), nm), known)
      "taken"
    }, histboost_error_input = function(e) conditionMessage(e))
  }
  for (p in names(lgb)) for (nm in unique(c(p, lgb[[p]]))) {
    # a value no parameter takes as given: a taken name then fails on its value later, not here
    out <- outcome(nm, "?")
    expect_false(grepl("is not a parameter of histboost", out, fixed = TRUE), label = paste(nm, "unknown:", out))
    if (out != "taken") expect_true(grepl(nm, out, fixed = TRUE), label = paste(nm, "named in:", out))
    if (nm %in% names(histboost:::.HB_PARAM_REFUSED)) {
      expect_identical(out, paste0("`params`: `", nm, "` ", histboost:::.HB_PARAM_REFUSED[[nm]], "."))
    }
  }
  # xgboost's parameters (its documentation's list) likewise
  xgb <- c("eta", "gamma", "max_depth", "min_child_weight", "max_delta_step", "subsample", "sampling_method",
           "colsample_bytree", "colsample_bylevel", "colsample_bynode", "lambda", "alpha", "tree_method",
           "scale_pos_weight", "updater", "refresh_leaf", "process_type", "grow_policy", "max_leaves", "max_bin",
           "num_parallel_tree", "monotone_constraints", "interaction_constraints", "multi_strategy",
           "max_cached_hist_node", "max_cat_to_onehot", "max_cat_threshold", "sample_type", "normalize_type",
           "rate_drop", "one_drop", "skip_drop", "objective", "base_score", "eval_metric", "seed",
           "seed_per_iteration", "tweedie_variance_power", "huber_slope", "quantile_alpha",
           "aft_loss_distribution", "lambdarank_pair_method", "lambdarank_num_pair_per_sample",
           "lambdarank_normalization", "lambdarank_unbiased", "lambdarank_bias_norm", "ndcg_exp_gain",
           "nthread", "verbosity", "validate_parameters", "disable_default_eval_metric", "booster", "device",
           "missing", "feature_weights", "base_margin", "reg_alpha", "reg_lambda", "n_estimators", "max_leaves")
  for (nm in xgb) {
    out <- outcome(nm, "?")
    expect_false(grepl("is not a parameter of histboost", out, fixed = TRUE), label = paste(nm, "unknown:", out))
  }
})

test_that("LightGBM's storage hints have no effect; its names histboost lacks are taken at their defaults only", {
  d <- gen_task(406, n = 400, task = "regression")
  base <- hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 7L, seed = 2)
  same <- function(params) {
    expect_identical(predict(hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 7L, seed = 2, params = params), d$x),
                     predict(base, d$x), label = paste(names(params), collapse = ", "))
  }
  same(list(force_row_wise = TRUE, force_col_wise = FALSE, deterministic = TRUE,
            is_enable_sparse = TRUE, validate_parameters = TRUE))
  same(list(use_missing = TRUE, zero_as_missing = FALSE, sigmoid = 1, reg_sqrt = FALSE, linear_tree = FALSE,
            monotone_constraints_method = "basic", monotone_penalty = 0, grow_policy = "lossguide",
            num_parallel_tree = 1, missing = NA, bagging_by_query = FALSE, multi_error_top_k = 1L))
  # as arguments too (parsnip's set_engine() passes them so)
  expect_identical(predict(hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 7L, seed = 2, force_row_wise = TRUE,
                                    zero_as_missing = FALSE), d$x), predict(base, d$x))
  # only the training functions take them: elsewhere an unknown argument is an error as ever
  expect_input_error(predict(base, d$x, force_row_wise = TRUE), "`force_row_wise` is not an argument of predict")
  # anything else is a classed error that says what to do
  expect_input_error(hb_quiet(d$x, d$y, params = list(zero_as_missing = TRUE)), "`zero_as_missing` = TRUE.*set those zeros to NA")
  expect_input_error(hb_quiet(d$x, d$y, params = list(use_missing = FALSE)), "`use_missing` = FALSE.*set them to 0")
  expect_input_error(hb_quiet(d$x, d$y, params = list(monotone_constraints_method = "advanced")), "\"basic\" method")
  expect_input_error(hb_quiet(d$x, d$y, params = list(reg_sqrt = TRUE)), "sign\\(y\\) \\* sqrt\\(abs\\(y\\)\\)")
  expect_input_error(hb_quiet(d$x, d$y, params = list(linear_tree = TRUE)), "leaves are constants")
  expect_input_error(hb_quiet(d$x, d$y, params = list(categorical_feature = 1:2)), "make those columns\\s+factors")
  expect_input_error(hb_quiet(d$x, d$y, params = list(weight = rep(1, 400))), "give the weights as `weights`")
  expect_input_error(hb_quiet(d$x, d$y, params = list(tree_learner = "data")), "distributed = \"mpi\"")
  expect_input_error(hb_quiet(d$x, d$y, params = list(num_grad_quant_bins = 8)), "`grad_bits`")
  expect_input_error(hb_quiet(d$x, d$y, params = list(grow_policy = "depthwise")), "leaf by leaf")
  expect_input_error(hb_quiet(d$x, d$y, linear_tree = TRUE), "`linear_tree` \\(linear models")
  # as arguments, LightGBM's data file columns stay hints at our names
  expect_input_error(hb_quiet(d$x, d$y, weight = rep(1, 400)), "Did you mean `weights`")
})

test_that("LightGBM's names of the quantized options and monotonic_cst train the same model", {
  d <- gen_task(407, n = 500, task = "regression")
  q <- hb_quiet(d$x, d$y, nrounds = 5L, quantized = TRUE, refit_leaves = FALSE, seed = 4)
  ql <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 4, params = list(use_quantized_grad = TRUE,
                                                                  quant_train_renew_leaf = FALSE))
  expect_identical(predict(ql, d$x), predict(q, d$x))
  expect_false(identical(predict(hb_quiet(d$x, d$y, nrounds = 5L, quantized = TRUE, seed = 4), d$x), predict(q, d$x)))
  num <- names(d$x)[vapply(d$x, is.numeric, NA)][1]
  mono <- hb_quiet(d$x, d$y, nrounds = 5L, monotone_constraints = stats::setNames(1, num), seed = 4)
  ml <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 4, params = list(monotonic_cst = stats::setNames(1, num)))
  expect_identical(predict(ml, d$x), predict(mono, d$x))
})

test_that("hb_cv() takes params too, its own arguments among them", {
  d <- gen_task(406, n = 300, task = "regression")
  set.seed(5)
  a <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 4L, learning_rate = 0.5, seed = 1, verbose = 0)
  set.seed(5)
  b <- hb_cv(d$x, d$y, nfold = 3L, seed = 1, verbose = 0, params = list(num_iterations = 4, eta = 0.5))
  expect_identical(nrow(b$evaluation_log), 4L)
  expect_identical(b$evaluation_log, a$evaluation_log)
  expect_identical(b$pred, a$pred)
  expect_input_error(hb_cv(d$x, d$y, nrounds = 5L, params = list(num_iterations = 4), verbose = 0),
                     "`nrounds` is given both")
})
