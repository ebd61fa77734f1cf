# Training loss, computed in plain R from predict(type = "raw", iteration = i),
# never rises from one round to the next (no bagging), and the first round
# improves on the loss of the start value (mean / log-odds / class priors).

loss_path <- function(m, x, nrounds, lossfun) {
  vapply(seq_len(nrounds), function(i) lossfun(predict(m, x, type = "raw", iteration = i)), 0)
}

expect_monotone <- function(path, start, label) {
  expect_lt(path[1], start, label = paste(label, "round 1 vs start"))
  rises <- diff(path) / abs(path[-length(path)])
  expect_lte(max(rises), TOL$mono, label = paste(label, "largest relative rise"))
  expect_lt(path[length(path)], 0.9 * start, label = paste(label, "learns something"))
}

test_that("regression: training rmse never rises", {
  d <- gen_task(1, n = 1500, task = "regression", na = 0.05, factors = 1)
  m <- hb_quiet(d$x, d$y, nrounds = 30L, learning_rate = 0.3, num_leaves = 15L)
  expect_equal(m$niter, 30L)
  path <- loss_path(m, d$x, 30L, function(s) rmse(d$y, s))
  expect_monotone(path, rmse(d$y, rep(mean(d$y), length(d$y))), "rmse")
})

test_that("binary: training logloss never rises", {
  d <- gen_task(2, n = 1500, task = "binary", na = 0.05, factors = 1)
  y01 <- as.numeric(d$y == "yes")
  m <- hb_quiet(d$x, d$y, nrounds = 30L, learning_rate = 0.3, num_leaves = 15L)
  path <- loss_path(m, d$x, 30L, function(s) logloss(y01, sigmoid(s)))
  expect_monotone(path, logloss(y01, rep(mean(y01), length(y01))), "logloss")
})

test_that("weighted binary: weighted training logloss never rises", {
  d <- gen_task(3, n = 1200, task = "binary")
  y01 <- as.numeric(d$y == "yes")
  set.seed(33)
  w <- rexp(1200)
  wll <- function(p) -sum(w * (y01 * log(p) + (1 - y01) * log(1 - p))) / sum(w)
  m <- hb_quiet(d$x, d$y, weights = w, nrounds = 25L, learning_rate = 0.3, num_leaves = 7L)
  path <- loss_path(m, d$x, 25L, function(s) wll(sigmoid(s)))
  expect_monotone(path, wll(rep(sum(w * y01) / sum(w), 1200)), "weighted logloss")
})

test_that("multiclass: training multi_logloss never rises", {
  d <- gen_task(4, n = 1500, task = "multiclass", factors = 1, K = 4)
  yk <- as.integer(d$y)
  m <- hb_quiet(d$x, d$y, nrounds = 25L, learning_rate = 0.3, num_leaves = 7L)
  path <- loss_path(m, d$x, 25L, function(s) multi_logloss(yk, softmax_rows(s)))
  prior <- as.vector(table(yk)) / length(yk)
  expect_monotone(path, multi_logloss(yk, matrix(prior, length(yk), 4, byrow = TRUE)),
                  "multi_logloss")
})
