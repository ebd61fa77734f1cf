# Per-row starting scores (init_score, an offset): training, validation
# metrics, predictions, the formula's offset(), cross-validation, forests,
# saving, and bad input. The trees themselves are checked against the plain-R
# grower in test-tree.R.

gen_exposure <- function(seed, n = 3000) {
  set.seed(seed)
  x <- data.frame(a = runif(n), b = runif(n), g = factor(sample(c("p", "q", "r"), n, TRUE)))
  e <- runif(n, 0.2, 5)
  rate <- exp(-0.5 + 1.2 * x$a + 0.8 * (x$g == "q"))
  list(x = x, e = e, rate = rate, y = rpois(n, rate * e))
}

test_that("predictions add init_score to the raw score before the link, and contributions to the intercept", {
  d <- gen_exposure(1)
  off <- log(d$e)
  m <- hb_quiet(d$x, d$y, objective = "poisson", init_score = off, nrounds = 20L, seed = 1)
  raw0 <- predict(m, d$x, type = "raw")
  expect_equal(predict(m, d$x, type = "raw", init_score = off), raw0 + off, tolerance = 1e-14)
  expect_equal(predict(m, d$x, init_score = off), exp(raw0 + off), tolerance = 1e-14)
  # the model's own starting score is 0: one round's raw score is its tree alone
  m1 <- hb_quiet(d$x, d$y, objective = "poisson", init_score = off, nrounds = 1L, seed = 1)
  tab <- hb_trees(m1)
  leaf <- predict(m1, d$x, type = "leaf")[, 1]
  lv <- tab$value[tab$is_leaf][order(as.integer(sub("L", "", tab$id[tab$is_leaf])))]
  expect_equal(predict(m1, d$x, type = "raw"), lv[leaf + 1L], tolerance = 1e-14)
  ct <- predict(m, d$x[1:50, ], type = "contrib", init_score = off[1:50])
  expect_equal(rowSums(ct), predict(m, d$x[1:50, ], type = "raw", init_score = off[1:50]), tolerance = 1e-10)
  ct0 <- predict(m, d$x[1:50, ], type = "contrib")
  expect_equal(ct[, "(Intercept)"] - ct0[, "(Intercept)"], off[1:50], tolerance = 1e-12)
  expect_equal(ct[, 1:3], ct0[, 1:3])
  # sparse newdata takes the same path
  xs <- Matrix::sparseMatrix(i = rep(1:50, 2), j = rep(1:2, each = 50),
                             x = c(d$x$a[1:50], d$x$b[1:50]), dims = c(50, 2),
                             dimnames = list(NULL, c("a", "b")))
  mn <- hb_quiet(as.matrix(d$x[, 1:2]), d$y, objective = "poisson", init_score = off, nrounds = 5L, seed = 1)
  expect_equal(predict(mn, xs, init_score = off[1:50]), predict(mn, as.matrix(d$x[1:50, 1:2]),
                                                                init_score = off[1:50]), tolerance = 1e-14)
  # the user's vector is not changed
  keep <- deep_copy(off)
  invisible(hb_quiet(d$x, d$y, objective = "poisson", init_score = off, nrounds = 2L))
  invisible(predict(m, d$x, init_score = off))
  expect_identical(off, keep)
})

test_that("an exposure offset recovers the rate: Poisson with log(exposure)", {
  d <- gen_exposure(2, n = 20000)
  m <- hb_quiet(d$x, d$y, objective = "poisson", init_score = log(d$e), nrounds = 150L,
                learning_rate = 0.1, num_leaves = 7L, seed = 2)
  # without the offset in predict: the rate per unit exposure
  rate_hat <- predict(m, d$x)
  expect_lt(mean(abs(rate_hat - d$rate)) / mean(d$rate), 0.08)
  # a model that ignores exposure does not learn the rate
  m0 <- hb_quiet(d$x, d$y, objective = "poisson", nrounds = 150L, learning_rate = 0.1, num_leaves = 7L, seed = 2)
  expect_gt(mean(abs(predict(m0, d$x) - d$rate)) / mean(d$rate), 0.5)
})

test_that("validation sets carry their own init_score into the logged metric", {
  d <- gen_exposure(3)
  tr <- 1:2000; va <- 2001:3000
  off <- log(d$e)
  m <- hb_quiet(d$x[tr, ], d$y[tr], objective = "poisson", init_score = off[tr], nrounds = 8L, seed = 3,
                valid = list(v = list(x = d$x[va, ], y = d$y[va], init_score = off[va])),
                eval_metric = c("poisson", "rmse"))
  log <- m$evaluation_log
  for (it in c(1L, 8L)) {
    s <- predict(m, d$x[va, ], type = "raw", init_score = off[va], iteration = it)
    expect_equal(log$v_poisson[it], mean(exp(s) - d$y[va] * s), tolerance = TOL$metric)
    expect_equal(log$v_rmse[it], rmse(d$y[va], exp(s)), tolerance = TOL$metric)
  }
  # an hb_dataset takes it too, and prints it
  dtr <- hb_dataset(d$x[tr, ], d$y[tr], init_score = off[tr])
  expect_output(print(dtr), "init_score")
  dva <- hb_dataset(d$x[va, ], d$y[va], init_score = off[va], reference = dtr)
  m2 <- hb_quiet(dtr, objective = "poisson", nrounds = 8L, seed = 3, valid = list(v = dva),
                 eval_metric = c("poisson", "rmse"))
  expect_equal(m2$evaluation_log, log)
})

test_that("a formula's offset() is the init_score, in training and from newdata in predict", {
  d <- gen_exposure(4)
  df <- cbind(d$x, y = d$y, e = d$e)
  mf <- hb_quiet(y ~ a + b + g + offset(log(e)), data = df, objective = "poisson", nrounds = 10L, seed = 4)
  mx <- hb_quiet(d$x, d$y, objective = "poisson", init_score = log(d$e), nrounds = 10L, seed = 4)
  expect_equal(hb_trees(mf), hb_trees(mx))
  new <- df[1:40, ]
  new$e <- new$e * 2
  expect_equal(predict(mf, new), predict(mx, d$x[1:40, ], init_score = log(new$e)), tolerance = 1e-14)
  expect_error(predict(mf, new, init_score = log(new$e)), class = "histboost_error_input", regexp = "offset")
  expect_error(predict(mf, new[, c("a", "b", "g")]), class = "histboost_error_input", regexp = "`e`")
  expect_error(hb_quiet(y ~ a + offset(log(e)), data = df, init_score = log(d$e), nrounds = 2L),
               class = "histboost_error_input", regexp = "offset")
  # the offset survives saving
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(mf, path)
  back <- readRDS(path)
  expect_equal(predict(back, new), predict(mf, new), tolerance = 1e-15)
})

test_that("hb_cv() splits init_score with the folds", {
  d <- gen_exposure(5, n = 1200)
  off <- log(d$e)
  folds <- list(seq(1, 1200, by = 3), seq(2, 1200, by = 3), seq(3, 1200, by = 3))
  cv <- hb_cv(d$x, d$y, objective = "poisson", init_score = off, folds = folds, nrounds = 6L, seed = 5,
              verbose = 0L, eval_metric = "poisson")
  for (k in 1:3) {
    te <- folds[[k]]
    tr <- setdiff(1:1200, te)
    m <- hb_quiet(d$x[tr, ], d$y[tr], objective = "poisson", init_score = off[tr], nrounds = 6L, seed = 5)
    expect_equal(cv$pred[te], predict(m, d$x[te, ], init_score = off[te]), tolerance = 1e-12,
                 label = paste("fold", k, "out-of-fold predictions"))
  }
  s <- sapply(1:3, function(k) {
    te <- folds[[k]]
    r <- log(cv$pred[te])
    mean(exp(r) - d$y[te] * r)
  })
  expect_equal(cv$evaluation_log$test_poisson_mean[6], mean(s), tolerance = TOL$metric)
})

test_that("a random forest averages its trees above each row's offset", {
  d <- gen_exposure(6, n = 1500)
  off <- rnorm(1500)
  yl <- d$x$a * 3 + off + rnorm(1500, sd = 0.1)
  m <- hb_quiet(d$x, yl, init_score = off, boosting = "rf", bagging_fraction = 1, feature_fraction = 0.67,
                nrounds = 4L, num_leaves = 6L, seed = 6)
  leaf <- predict(m, d$x, type = "leaf")
  tab <- hb_trees(m)
  vals <- sapply(1:4, function(t) {
    lt <- tab[tab$tree == t & tab$is_leaf, ]
    lt$value[match(paste0("L", leaf[, t]), lt$id)]
  })
  expect_equal(predict(m, d$x, init_score = off), off + rowMeans(vals), tolerance = 1e-12)
  # each tree's leaves are the mean residual y - offset of their rows (no bag, no shrinkage)
  for (t in 1:4) {
    ref <- tapply(yl - off, leaf[, t], mean)
    lt <- tab[tab$tree == t & tab$is_leaf, ]
    expect_equal(unname(lt$value[match(paste0("L", names(ref)), lt$id)]), unname(as.vector(ref)),
                 tolerance = 1e-10)
  }
})

test_that("bad init_score gets a classed error naming it", {
  d <- gen_exposure(7, n = 300)
  x <- d$x; y <- d$y
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(hb_quiet(x, y, init_score = 1:5, nrounds = 2L), "`init_score` has 5 values but `x` has 300 rows")
  err(hb_quiet(x, y, init_score = c(NA, rep(0, 299)), nrounds = 2L), "`init_score` contains 1 missing")
  err(hb_quiet(x, y, init_score = c(Inf, rep(0, 299)), nrounds = 2L), "`init_score` contains 1 missing")
  err(hb_quiet(x, y, init_score = rep("a", 300), nrounds = 2L), "`init_score` must be a numeric")
  err(hb_quiet(x, y, init_score = matrix(0, 300, 2), nrounds = 2L), "`init_score` has 2 columns")
  err(hb_quiet(x, factor(y %% 3), init_score = rep(0, 300), nrounds = 2L), "one column per class \\(3\\)")
  err(hb_quiet(x, y, init_score = matrix(0, 299, 1), nrounds = 2L), "`init_score` has 299 rows")
  err(hb_quiet(x, y, init_score = rep(0, 300), nrounds = 2L, valid = list(v = list(x = x, y = y))),
      "`valid` set \"v\" needs an `init_score`")
  err(hb_quiet(x, y, nrounds = 2L, valid = list(v = list(x = x, y = y, init_score = rep(0, 300)))),
      "`valid` set \"v\" has an `init_score` but the training data has none")
  err(hb_quiet(x, y, nrounds = 2L, init_score = rep(0, 300),
               valid = list(v = list(x = x, y = y, init_score = rep(0, 3)))),
      "`valid` set \"v\": `init_score` has 3 values")
  ds <- hb_dataset(x, y)
  err(hb_quiet(ds, init_score = rep(0, 300), nrounds = 2L), "give it to hb_dataset")
  m <- hb_quiet(x, y, nrounds = 2L)
  err(predict(m, x, type = "leaf", init_score = rep(0, 300)), "leaf")
  err(predict(m, x, init_score = rep(0, 10)), "`init_score` has 10 values but `newdata` has 300 rows")
  err(predict(m, x, init_score = matrix(0, 300, 2)), "`init_score` has 2 columns")
})
