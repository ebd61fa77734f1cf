# Finite inputs whose sums overflow stop training with a classed error that
# names the cause, instead of a model that predicts NaN or Inf. The limits
# themselves must not refuse sane data: inputs scaled by a power of two (an
# exact scaling, so the reference is the unscaled model computed alongside)
# train exactly the scaled model while far below the limit.

ovf_data <- function(n = 400) {
  set.seed(21)
  x <- data.frame(a = rnorm(n), b = runif(n), f = factor(sample(letters[1:4], n, TRUE)))
  y <- x$a + 2 * x$b + (x$f == "b") + rnorm(n, sd = 0.3)
  cnt <- rpois(n, exp(0.4 * x$a))
  list(x = x, y = y, cnt = cnt, n = n)
}

# lambda 0: leaf values and gains are then exactly homogeneous in the scale.
ovf_fit <- function(x, y, ...) {
  hb_quiet(x, y, nrounds = 6L, num_leaves = 7L, min_data_in_leaf = 10L, lambda_l1 = 0, lambda_l2 = 0,
           seed = 1L, ...)
}

expect_overflow <- function(expr, pattern, label) {
  err <- expect_error(expr, class = "histboost_error_input", label = label)
  if (!is.null(err)) {
    expect_match(conditionMessage(err), "round [0-9]+:", label = label)
    expect_match(conditionMessage(err), pattern, label = label)
  }
  invisible(err)
}

test_that("weights of 1e308 stop training and name `weights`; weights x 2^300 give the same model", {
  d <- ovf_data()
  expect_overflow(ovf_fit(d$x, d$y, weights = rep(1e308, d$n)), "weights are too large.*rescale `weights`",
                  "1e308")
  expect_overflow(ovf_fit(d$x, d$y, weights = c(rep(1, d$n - 1), 1e300)), "weights are too large",
                  "one weight of 1e300")
  w <- runif(d$n, 0.5, 2)
  ref <- ovf_fit(d$x, d$y, weights = w)
  big <- ovf_fit(d$x, d$y, weights = w * 2^300)
  expect_identical(predict(big, d$x), predict(ref, d$x))
})

test_that("labels of 1e200 (rmse) and 1e308 stop training and name `y`; labels x 2^400 scale exactly", {
  d <- ovf_data()
  expect_overflow(ovf_fit(d$x, d$y * 1e200, eval_metric = "rmse"), "labels \\(`y`\\) are too large",
                  "1e200")
  expect_overflow(ovf_fit(d$x, runif(d$n, 0.5, 1) * 1e308), "labels \\(`y`\\) are too large", "1e308")
  # a validation set's labels of 1e200 would give an rmse of Inf
  v <- list(x = d$x[1:50, ], y = d$y[1:50] * 1e200)
  expect_overflow(ovf_fit(d$x, d$y, valid = list(v = v)),
                  "metric of validation set 1 overflowed because the labels \\(`y`\\) of validation set 1", "valid")
  ref <- ovf_fit(d$x, d$y)
  big <- ovf_fit(d$x, d$y * 2^400, valid = list(v = list(x = d$x[1:50, ], y = d$y[1:50] * 2^400)))
  expect_identical(predict(big, d$x), predict(ref, d$x) * 2^400)
  # a validation set's metric stays finite
  expect_true(all(is.finite(big$evaluation_log[[2]])))
})

test_that("init_score of 1e308 stops training and names init_score (training and validation sets)", {
  d <- ovf_data()
  expect_overflow(ovf_fit(d$x, d$y, init_score = rep(1e308, d$n)), "`init_score` is too large", "train")
  v <- list(x = d$x[1:50, ], y = d$y[1:50], init_score = rep(1e308, 50))
  expect_overflow(ovf_fit(d$x, d$y, init_score = rep(0, d$n), valid = list(v = v)),
                  "validation set 1 overflowed because `init_score` of validation set 1 is too large", "valid")
  # an ordinary offset trains, and the model's raw scores are the offset plus the trees
  off <- rnorm(d$n)
  m <- ovf_fit(d$x, d$y, init_score = off)
  expect_true(all(is.finite(predict(m, d$x, init_score = off))))
})

test_that("custom gradients of 1e308 stop training and name the custom objective", {
  d <- ovf_data()
  huge <- function(preds, labels) list(grad = rep(1e308, length(preds)), hess = rep(1, length(preds)))
  err <- expect_overflow(ovf_fit(d$x, d$y, objective = huge), "custom objective's gradients", "custom")
  expect_match(conditionMessage(err), "largest |gradient| 1e+308", fixed = TRUE)
  # squared error written by hand, its gradients and hessians x 2^300: the same trees
  sq <- function(s) function(preds, labels) list(grad = s * (preds - labels), hess = rep(s, length(preds)))
  expect_identical(predict(ovf_fit(d$x, d$y, objective = sq(2^300)), d$x),
                   predict(ovf_fit(d$x, d$y, objective = sq(1)), d$x))
})

test_that("learning_rate = 1e6 with poisson stops at round 1 and names learning_rate", {
  d <- ovf_data()
  for (nr in c(1L, 5L)) {
    err <- expect_overflow(hb_quiet(d$x, d$cnt, objective = "poisson", learning_rate = 1e6, nrounds = nr,
                                    min_data_in_leaf = 10L),
                           "lower `learning_rate` \\(now 1e\\+06\\)", paste("nrounds", nr))
    expect_match(conditionMessage(err), "exp(score)", fixed = TRUE)
  }
  # and a squared-error model whose learning rate makes every leaf overflow
  expect_overflow(hb_quiet(d$x, d$y, learning_rate = 1e306, nrounds = 3L, min_data_in_leaf = 10L),
                  "lower `learning_rate`", "rmse 1e306")
  # a sane rate: predictions are finite and the training deviance falls
  m <- hb_quiet(d$x, d$cnt, objective = "poisson", learning_rate = 0.1, nrounds = 20L, min_data_in_leaf = 10L)
  mu <- predict(m, d$x)
  expect_true(all(is.finite(mu) & mu > 0))
  dev <- function(mu) 2 * sum(ifelse(d$cnt > 0, d$cnt * log(d$cnt / mu), 0) - (d$cnt - mu))
  expect_lt(dev(mu), dev(rep(mean(d$cnt), d$n)))
})

test_that("after an overflow error R and the package still train normally", {
  d <- ovf_data()
  expect_error(ovf_fit(d$x, d$y, weights = rep(1e308, d$n)), class = "histboost_error_input")
  m <- ovf_fit(d$x, d$y)
  expect_lt(rmse(d$y, predict(m, d$x)), sd(d$y))
})
