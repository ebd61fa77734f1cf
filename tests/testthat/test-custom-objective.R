# A custom objective (objective = function(preds, labels)): the engine grows
# trees from the gradients the function returns. Checked against the
# built-in losses, whose gradients the engine computes itself.

gen_custom <- function(seed, n = 2000) {
  set.seed(seed)
  x <- data.frame(a = runif(n), b = runif(n), g = factor(sample(c("p", "q", "r"), n, TRUE)))
  f <- sin(6 * x$a) + x$b + (x$g == "q")
  list(x = x, y = f + rnorm(n, sd = 0.3), yb = factor(ifelse(runif(n) < sigmoid(2 * (f - 1.3)), "yes", "no")))
}
sq_loss <- function(preds, labels) list(grad = preds - labels, hess = rep(1, length(preds)))
log_loss <- function(preds, labels) {
  p <- sigmoid(preds)
  list(grad = p - labels, hess = p * (1 - p))
}

test_that("a custom squared error grows the built-in regression's trees", {
  d <- gen_custom(1)
  w <- runif(2000, 0.5, 2)
  for (weighted in c(FALSE, TRUE)) {
    ww <- if (weighted) w
    start <- rep(if (weighted) sum(w * d$y) / sum(w) else mean(d$y), 2000)
    mc <- hb_quiet(d$x, d$y, weights = ww, objective = sq_loss, init_score = start, nrounds = 15L,
                   num_leaves = 7L, seed = 1)
    mb <- hb_quiet(d$x, d$y, weights = ww, nrounds = 15L, num_leaves = 7L, seed = 1)
    expect_identical(mc$params$objective, "custom")
    tc <- hb_trees(mc)
    tb <- hb_trees(mb)
    expect_identical(tc[c("feature", "threshold", "default_left", "count")],
                     tb[c("feature", "threshold", "default_left", "count")])
    expect_equal(tc$value, tb$value, tolerance = 1e-10)
    expect_equal(predict(mc, d$x, init_score = start), predict(mb, d$x), tolerance = 1e-10)
  }
})

test_that("a custom logistic loss on a two-class y gets 0/1 labels and grows the binary model's trees", {
  d <- gen_custom(2)
  seen <- NULL
  lg <- function(preds, labels) {
    seen <<- labels
    log_loss(preds, labels)
  }
  p0 <- mean(d$yb == "yes")
  start <- rep(log(p0 / (1 - p0)), 2000)
  for (q in c(FALSE, TRUE)) {
    mc <- hb_quiet(d$x, d$yb, objective = lg, init_score = start, nrounds = 10L, seed = 3, quantized = q)
    mb <- hb_quiet(d$x, d$yb, nrounds = 10L, seed = 3, quantized = q)
    expect_identical(seen, as.numeric(d$yb == "yes"))
    expect_equal(hb_trees(mc)$value, hb_trees(mb)$value, tolerance = 1e-9, label = paste("quantized", q))
    # the response of a custom objective is the raw score
    expect_equal(predict(mc, d$x, init_score = start), predict(mb, d$x, type = "raw"), tolerance = 1e-9)
    expect_null(mc$classes)
    # no classes kept: type = "class" says so, and which level the scores are for
    expect_error(predict(mc, d$x, type = "class"), class = "histboost_error_input",
                 regexp = "keeps none: it predicts raw scores.*second level")
  }
})

test_that("the function sees each round's current raw scores", {
  d <- gen_custom(3, n = 500)
  calls <- list()
  rec <- function(preds, labels) {
    calls[[length(calls) + 1L]] <<- preds
    sq_loss(preds, labels)
  }
  m <- hb_quiet(d$x, d$y, objective = rec, nrounds = 4L, learning_rate = 0.5)
  expect_length(calls, 4L)
  expect_identical(calls[[1]], rep(0, 500))  # a custom objective starts from 0
  for (r in 2:4) expect_equal(calls[[r]], predict(m, d$x, iteration = r - 1L), tolerance = 1e-12)
})

test_that("custom objectives in validation, early stopping, hb_cv() and saved models", {
  d <- gen_custom(4)
  tr <- 1:1500; va <- 1501:2000
  m <- hb_quiet(d$x[tr, ], d$y[tr], objective = sq_loss, nrounds = 200L, learning_rate = 0.3,
                valid = list(v = list(x = d$x[va, ], y = d$y[va])), early_stopping_rounds = 5L,
                eval_metric = c("rmse", "mae"))
  expect_lt(m$best_iteration, 200L)
  it <- m$best_iteration
  expect_equal(m$evaluation_log$v_mae[it], mae(d$y[va], predict(m, d$x[va, ])), tolerance = TOL$metric)
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(m, path)
  expect_equal(predict(readRDS(path), d$x[va, ]), predict(m, d$x[va, ]), tolerance = 1e-15)
  folds <- list(seq(1, 2000, by = 2), seq(2, 2000, by = 2))
  cv <- hb_cv(d$x, d$y, objective = sq_loss, folds = folds, nrounds = 5L, verbose = 0L, seed = 1)
  f1 <- hb_quiet(d$x[folds[[2]], ], d$y[folds[[2]]], objective = sq_loss, nrounds = 5L, seed = 1)
  expect_equal(cv$pred[folds[[1]]], predict(f1, d$x[folds[[1]], ]), tolerance = 1e-12)
})

test_that("a custom objective that misbehaves gets a classed error naming `objective`", {
  d <- gen_custom(5, n = 300)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(hb_quiet(d$x, d$y, objective = function(p) 1, nrounds = 2L), "must take two arguments")
  err(hb_quiet(d$x, d$y, objective = "custom", nrounds = 2L), "the function itself")
  err(hb_quiet(d$x, d$y, objective = function(p, l) p - l, nrounds = 2L), "must return list\\(grad = , hess = \\)")
  err(hb_quiet(d$x, d$y, objective = function(p, l) list(grad = 1, hess = 1), nrounds = 2L),
      "returned 1 gradients and 1 hessians; it must return one of each per training row \\(300\\)")
  err(hb_quiet(d$x, d$y, objective = function(p, l) list(grad = p - l, hess = rep(-1, 300)), nrounds = 2L),
      "negative \\(hessians\\), first at row 1")
  err(hb_quiet(d$x, d$y, objective = function(p, l) list(grad = c(NA, p[-1] - l[-1]), hess = rep(1, 300)),
               nrounds = 2L), "missing, infinite")
  err(hb_quiet(hb_dataset(d$x, d$y), objective = sq_loss, nrounds = 2L), "not an hb_dataset")
  # three classes: a score per class, so one gradient a row is too few (test-objectives-more.R trains them)
  one_a_row <- function(p, l) list(grad = p[, 1] - l, hess = rep(1, nrow(p)))
  err(hb_quiet(d$x, factor(sample(c("a", "b", "c"), 300, TRUE)), objective = one_a_row, nrounds = 2L),
      "one of each per training row and class \\(900\\)")
  err(hb_quiet(d$x, d$y, objective = sq_loss, eval_metric = "logloss", nrounds = 2L,
               valid = list(v = list(x = d$x, y = d$y))), "does not suit the custom objective")
  err(hb_quiet(d$x, d$y, objective = sq_loss, boosting = "rf", bagging_fraction = 0.5, bagging_freq = 1L,
               nrounds = 2L), "boosts")
})

test_that("hb_cv() with a custom objective makes its own folds (numeric y)", {
  set.seed(11)
  x <- data.frame(a = rnorm(200), b = runif(200))
  y <- x$a + rnorm(200, sd = 0.1)
  sq <- function(preds, labels) list(grad = preds - labels, hess = rep(1, length(preds)))
  cv <- hb_cv(x, y, objective = sq, nfold = 3L, nrounds = 3L, verbose = 0L, seed = 1, nthreads = 1L)
  expect_s3_class(cv, "hb_cv")
  expect_length(cv$folds, 3L)
})
