# hb_cv(): folds trained side by side must give what training each fold
# alone with histboost() gives (its validation log, its predictions), the
# mean and sd over folds recomputed in plain R; early stopping on that mean;
# stratified folds that partition the rows; classed errors.

test_that("the log is the mean and sd over folds of histboost() trained fold by fold", {
  d <- gen_task(41, n = 600, p = 6, task = "regression", na = 0.05, factors = 1)
  set.seed(7)
  folds <- split(sample(600), rep(1:3, 200))
  folds <- lapply(unname(folds), sort)
  cv <- hb_cv(d$x, d$y, folds = folds, nrounds = 25L, eval_metric = c("rmse", "mae"), seed = 11,
              num_leaves = 7L, learning_rate = 0.2, verbose = 0L, keep_models = TRUE)
  expect_identical(cv$folds, folds)
  one <- lapply(folds, function(te) {
    tr <- setdiff(seq_len(600), te)
    hb_quiet(d$x[tr, ], d$y[tr], nrounds = 25L, eval_metric = c("rmse", "mae"), seed = 11,
             num_leaves = 7L, learning_rate = 0.2,
             valid = list(test = list(x = d$x[te, ], y = d$y[te])))
  })
  for (m in c("rmse", "mae")) {
    per_fold <- sapply(one, function(f) f$evaluation_log[[paste0("test_", m)]])
    expect_equal(cv$evaluation_log[[paste0("test_", m, "_mean")]], rowMeans(per_fold), tolerance = TOL$exact)
    expect_equal(cv$evaluation_log[[paste0("test_", m, "_sd")]], apply(per_fold, 1, function(v) sqrt(mean((v - mean(v))^2))),
                 tolerance = TOL$exact)  # (dividing by the folds' count, as lgb.cv() and xgb.cv())
  }
  # no early stopping: the best round of the mean, models and predictions at their last round
  expect_identical(cv$best_iteration, which.min(cv$evaluation_log$test_rmse_mean))
  for (k in 1:3) {
    expect_equal(predict(cv$models[[k]], d$x), predict(one[[k]], d$x), tolerance = 0)
    expect_equal(cv$pred[folds[[k]]], predict(one[[k]], d$x[folds[[k]], ]), tolerance = 0)
  }
  expect_equal(rmse(d$y, cv$pred), sqrt(mean(sapply(1:3, function(k) mean((d$y - cv$pred)[folds[[k]]]^2)))),
               tolerance = TOL$exact)
})

test_that("early stopping watches the mean of the first metric; predictions use its best round", {
  d <- gen_task(42, n = 400, p = 6, task = "binary")
  set.seed(3)
  cv <- hb_cv(d$x, d$y, nfold = 4L, nrounds = 300L, early_stopping_rounds = 5L, learning_rate = 0.5,
              num_leaves = 15L, min_data_in_leaf = 5L, eval_metric = c("logloss", "auc"), seed = 1,
              verbose = 0L, keep_models = TRUE)
  log <- cv$evaluation_log
  best <- which.min(log$test_logloss_mean)
  expect_identical(cv$best_iteration, best)
  expect_equal(cv$best_score, log$test_logloss_mean[best])
  expect_identical(nrow(log), best + 5L)  # stopped 5 rounds after its best
  expect_lt(nrow(log), 300L)
  for (k in seq_along(cv$folds)) {
    m <- cv$models[[k]]
    expect_identical(m$best_iteration, best)
    te <- cv$folds[[k]]
    expect_equal(cv$pred[te], predict(m, d$x[te, ], iteration = best), tolerance = 0)
  }
  expect_true(all(cv$pred > 0 & cv$pred < 1))
})

test_that("folds partition the rows; stratified folds keep every class's share", {
  d <- gen_task(43, n = 503, p = 6, task = "multiclass", K = 4)
  set.seed(5)
  cv <- hb_cv(d$x, d$y, nfold = 5L, nrounds = 3L, verbose = 0L)
  f <- cv$folds
  expect_identical(sort(unlist(f)), seq_len(503))
  expect_true(max(lengths(f)) - min(lengths(f)) <= 1L)
  counts <- sapply(f, function(te) table(d$y[te]))
  expect_true(all(apply(counts, 1, function(r) max(r) - min(r)) <= 1L))
  expect_equal(dim(cv$pred), c(503L, 4L))
  expect_equal(unname(rowSums(cv$pred)), rep(1, 503), tolerance = TOL$prob)
  # set.seed() makes the folds (and so the run) reproducible
  set.seed(5)
  again <- hb_cv(d$x, d$y, nfold = 5L, nrounds = 3L, verbose = 0L)
  expect_identical(again$folds, f)
  expect_identical(again$evaluation_log, cv$evaluation_log)
  # with a seed the folds come from it: the same seed, the same folds and run whatever the session's random
  # numbers, which are left as they were
  set.seed(99)
  before <- .Random.seed
  s1 <- hb_cv(d$x, d$y, nfold = 5L, nrounds = 3L, verbose = 0L, seed = 17)
  expect_identical(.Random.seed, before)
  set.seed(123)
  s2 <- hb_cv(d$x, d$y, nfold = 5L, nrounds = 3L, verbose = 0L, seed = 17)
  expect_identical(s2$folds, s1$folds)
  expect_identical(s2$evaluation_log, s1$evaluation_log)
  expect_false(identical(hb_cv(d$x, d$y, nfold = 5L, nrounds = 3L, verbose = 0L, seed = 18)$folds, s1$folds))
  # LightGBM's and xgboost's metric names, as in params
  lg <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 2L, verbose = 0L, seed = 1, eval_metric = c("mlogloss", "merror"))
  hb <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 2L, verbose = 0L, seed = 1, eval_metric = c("multi_logloss", "multi_error"))
  expect_identical(lg$evaluation_log, hb$evaluation_log)
  # early_stopping_metric takes them too, alone or as a log column
  e1 <- hb_quiet(d$x[1:400, ], d$y[1:400], nrounds = 30L, seed = 1, eval_metric = c("merror", "mlogloss"),
                 valid = list(v = list(x = d$x[401:503, ], y = d$y[401:503])), early_stopping_rounds = 3L,
                 early_stopping_metric = "mlogloss")
  e2 <- hb_quiet(d$x[1:400, ], d$y[1:400], nrounds = 30L, seed = 1, eval_metric = c("multi_error", "multi_logloss"),
                 valid = list(v = list(x = d$x[401:503, ], y = d$y[401:503])), early_stopping_rounds = 3L,
                 early_stopping_metric = "v_multi_logloss")
  e3 <- hb_quiet(d$x[1:400, ], d$y[1:400], nrounds = 30L, seed = 1, eval_metric = c("multi_error", "multi_logloss"),
                 valid = list(v = list(x = d$x[401:503, ], y = d$y[401:503])), early_stopping_rounds = 3L,
                 early_stopping_metric = "v_mlogloss")
  expect_identical(e1$best_iteration, e2$best_iteration)
  expect_identical(e3$best_iteration, e2$best_iteration)
  # unstratified, on a dgCMatrix: the folds still partition, sizes within one
  g <- gen_task(44, n = 301, p = 6, task = "regression")
  X <- Matrix::Matrix(as.matrix(g$x), sparse = TRUE)
  cs <- hb_cv(X, g$y, nfold = 4L, nrounds = 4L, verbose = 0L, seed = 2)
  expect_identical(sort(unlist(cs$folds)), seq_len(301))
  cd <- hb_cv(as.matrix(g$x), g$y, folds = cs$folds, nrounds = 4L, verbose = 0L, seed = 2)
  expect_equal(cd$evaluation_log, cs$evaluation_log, tolerance = TOL$exact)
})

test_that("hb_cv() leaves its inputs alone and checks its arguments", {
  d <- gen_task(45, n = 200, p = 6, task = "binary")
  x0 <- deep_copy(d$x)
  y0 <- deep_copy(d$y)
  invisible(hb_cv(d$x, d$y, nfold = 2L, nrounds = 2L, verbose = 0L))
  expect_identical(d$x, x0)
  expect_identical(d$y, y0)
  ds <- hb_dataset(d$x, d$y)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(hb_cv(ds, d$y), "`x`.*hb_dataset")
  err(hb_cv(d$x, d$y[-1]), "`y` has 199 values")
  err(hb_cv(d$x, d$y, nfold = 1L), "`nfold`")
  err(hb_cv(d$x, d$y, folds = list(1:10, 5:20)), "`folds` overlap: row 5")
  err(hb_cv(d$x, d$y, folds = list(c(1, 250))), "`folds`: fold 1")
  err(hb_cv(d$x, d$y, folds = list(1:200)), "fold 1 holds out every row")
  err(hb_cv(d$x, d$y, valid = list()), "`valid` is not an argument of hb_cv")
  err(hb_cv(d$x, d$y, distributed = "mpi"), "`distributed` is not an argument of hb_cv\\(\\): cross-validate on one process")
  err(hb_cv(d$x, d$y, num_leaf = 4), "`num_leaf` is not an argument of hb_cv\\(\\).*num_leaves")
  err(hb_cv(d$x, d$y, nfold = 2L, learning_rate = -1), "^`learning_rate` must be")  # no fold's problem
  err(hb_cv(d$x, d$y, early_stopping_rounds = 0), "`early_stopping_rounds`")
})

test_that("hb_cv() takes the x classes histboost() takes: the folds of the same numbers as a dgCMatrix", {
  skip_if_not_installed("Matrix")
  d <- gen_task(46, n = 300, p = 5, task = "regression", na = 0.05)
  X <- as.matrix(d$x)
  X[abs(X) < 0.5] <- 0
  S <- Matrix::Matrix(X, sparse = TRUE)
  expect_s4_class(S, "dgCMatrix")
  cv <- function(x) {
    set.seed(4)
    hb_cv(x, d$y, nfold = 3L, nrounds = 4L, num_leaves = 6L, seed = 1L, verbose = 0L)
  }
  ref <- cv(S)
  expect_gt(sd(ref$pred), 0)
  others <- list(T = methods::as(S, "TsparseMatrix"), R = methods::as(S, "RsparseMatrix"),
                 ge = Matrix::Matrix(X, sparse = FALSE), dense = X)
  for (k in names(others)) {
    expect_false(inherits(others[[k]], "dgCMatrix"), label = k)
    got <- cv(others[[k]])
    expect_identical(got$evaluation_log, ref$evaluation_log, label = k)
    expect_identical(got$pred, ref$pred, label = k)
    # and histboost() on the same class gives what the fold models predict on their held-out rows
    f1 <- got$folds[[1L]]
    m1 <- hb_quiet(others[[k]][-f1, , drop = FALSE], d$y[-f1], nrounds = 4L, num_leaves = 6L, seed = 1L)
    expect_identical(predict(m1, X[f1, , drop = FALSE]), got$pred[f1], label = k)
  }
  expect_error(hb_cv(list(a = 1), 1, verbose = 0L), class = "histboost_error_input", regexp = "^`x` must be")
})

test_that("hb_cv() checks x, y, weights and parameters once, as histboost() does: the user's rows, no fold", {
  d <- gen_task(47, n = 400, p = 5, task = "regression")
  msg <- function(expr) {
    err <- tryCatch(expr, error = identity)
    expect_s3_class(err, "histboost_error_input")
    conditionMessage(err)
  }
  # each bad input gives hb_cv() histboost()'s own message for the same data
  same <- function(x = d$x, y = d$y, ..., re) {
    set.seed(1)
    m_cv <- msg(hb_cv(x, y, nfold = 3L, nrounds = 2L, verbose = 0L, ...))
    m_hb <- msg(hb_quiet(x, y, nrounds = 2L, ...))
    expect_identical(m_cv, m_hb)
    expect_match(m_cv, re)
    expect_false(grepl("fold", m_cv))
  }
  y <- d$y
  y[300] <- NA
  same(y = y, re = "^`y` contains 1 missing or non-finite values \\(first at position 300\\)")
  yf <- factor(ifelse(d$y > 0, "a", "b"))
  yf[c(250, 300)] <- NA
  same(y = addNA(yf), re = "^`y` contains 2 missing values \\(first at position 250\\)")
  w <- rep(1, 400)
  w[c(333, 350)] <- -1
  same(weights = w, re = "^`weights` contains 2 negative values \\(first at position 333\\)")
  xc <- d$x
  xc$chr <- "u"
  same(x = xc, re = "^`x` column `chr` is of type character")
  same(learning_rate = -1, re = "^`learning_rate` must be")
  yn <- abs(d$y)
  yn[321] <- -2
  same(y = yn, objective = "poisson", re = "`y\\[321\\]` is -2")
  yc <- factor(ifelse(d$y > 0, "a", "b"))
  same(y = yc, objective = "poisson", re = "needs a numeric `y`")
  same(objective = "binary", re = "^`objective` = \"binary\" needs `y` with two classes")
  same(y = yc, class_weights = c(z = 2), re = "`class_weights`")
  same(max_bin = 1L, re = "^`max_bin` must be")
  same(eval_metric = "auc", re = "^`eval_metric` \"auc\" does not suit")
  # a problem of one fold's rows alone still says which fold
  wz <- c(rep(1, 200), rep(0, 200))
  expect_error(hb_cv(d$x, d$y, weights = wz, folds = list(1:200, 201:400), nrounds = 2L, verbose = 0L),
               class = "histboost_error_input", regexp = "^fold 1: `weights` are all zero")
})

test_that("hb_cv refuses DART with early stopping, as histboost() does", {
  set.seed(11)
  x <- data.frame(a = rnorm(200), b = runif(200))
  y <- x$a + rnorm(200)
  expect_error(hb_cv(x, y, nfold = 3, nrounds = 8, boosting = "dart", early_stopping_rounds = 3, verbose = 0),
               class = "histboost_error_input", regexp = "early_stopping_rounds")
})

test_that("hb_cv on a survival response spreads the events over the folds", {
  skip_if_not_installed("survival")
  set.seed(12)
  n <- 100
  x <- data.frame(a = rnorm(n), b = runif(n))
  status <- integer(n)
  status[sample.int(n, 10)] <- 1L  # 10 events: 2 a fold when stratified by the event indicator
  y <- survival::Surv(rexp(n, exp(0.5 * x$a)), status)
  cv <- hb_cv(x, y, nfold = 5, nrounds = 3, min_data_in_leaf = 5, verbose = 0, keep_models = TRUE)
  events <- vapply(cv$folds, function(f) sum(status[f]), 0)
  expect_equal(events, rep(2, 5))
  expect_true(all(is.finite(cv$evaluation_log$test_cox_nloglik_mean)))
  expect_error(hb_cv(x, survival::Surv(rexp(n), c(1L, 1L, rep(0L, n - 2L))), nfold = 5, nrounds = 2, verbose = 0),
               class = "histboost_error_input", regexp = "nfold")
})
