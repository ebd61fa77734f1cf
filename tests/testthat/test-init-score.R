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

# ---- continued training (init_model) ----------------------------------------

gen_cont <- function(seed, n = 3000, task = "regression") {
  set.seed(seed)
  x <- data.frame(a = runif(n), b = runif(n), g = factor(sample(c("p", "q", "r", "s"), n, TRUE)))
  f <- sin(6 * x$a) + x$b + (x$g == "q")
  y <- switch(task, regression = f + rnorm(n, sd = 0.2),
              binary = factor(ifelse(runif(n) < sigmoid(2 * (f - mean(f))), "yes", "no")),
              multiclass = cut(f + rnorm(n, sd = 0.3), 3, labels = c("lo", "mid", "hi")))
  list(x = x, y = y)
}

test_that("30 rounds continued by 20 are the 50-round model, tree for tree", {
  for (task in c("regression", "binary", "multiclass")) {
    d <- gen_cont(11, task = task)
    m1 <- hb_quiet(d$x, d$y, nrounds = 30L, num_leaves = 7L, seed = 1)
    m2 <- hb_quiet(d$x, d$y, nrounds = 20L, num_leaves = 7L, seed = 2, init_model = m1)
    m50 <- hb_quiet(d$x, d$y, nrounds = 50L, num_leaves = 7L, seed = 1)
    expect_identical(m2$niter, 50L)
    t2 <- hb_trees(m2)
    K <- if (task == "multiclass") 3L else 1L
    expect_identical(t2[t2$tree <= 30L * K, ], hb_trees(m1), label = paste(task, "the base's trees first"))
    expect_equal(t2, hb_trees(m50), tolerance = 1e-9, label = paste(task, "as one training"))
    expect_equal(predict(m2, d$x, type = "raw"), predict(m50, d$x, type = "raw"), tolerance = 1e-9)
    expect_identical(m2$classes, m1$classes)
  }
})

test_that("a continued model logs and stops on its validation set counting the base's iterations", {
  d <- gen_cont(12)
  tr <- 1:2000; va <- 2001:3000
  m1 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 60L, learning_rate = 0.3, seed = 1,
                 valid = list(v = list(x = d$x[va, ], y = d$y[va])), early_stopping_rounds = 3L)
  b <- m1$best_iteration
  expect_true(!is.null(b) && b < m1$niter)
  m2 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 10L, learning_rate = 0.05, seed = 2, init_model = m1,
                 valid = list(v = list(x = d$x[va, ], y = d$y[va])))
  # from the base's best iteration: its trees up to there, then ten more
  expect_identical(m2$niter, b + 10L)
  t2 <- hb_trees(m2)
  t1 <- hb_trees(m1)
  expect_identical(t2[t2$tree <= b, ], t1[t1$tree <= b, ])
  log <- m2$evaluation_log
  expect_identical(log$iter, b + 1:10)
  for (it in c(b + 1L, b + 10L)) {
    expect_equal(log$v_rmse[log$iter == it], rmse(d$y[va], predict(m2, d$x[va, ], iteration = it)),
                 tolerance = TOL$metric)
  }
})

test_that("continued training keeps offsets: formula offset(), init_score, saved base models", {
  d <- gen_exposure(13)
  df <- cbind(d$x, y = d$y, e = d$e)
  f1 <- hb_quiet(y ~ a + b + g + offset(log(e)), data = df, objective = "poisson", nrounds = 15L, seed = 1)
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(f1, path)
  f1 <- readRDS(path)  # its native model is rebuilt from the text
  f2 <- hb_quiet(y ~ a + b + g + offset(log(e)), data = df, objective = "poisson", nrounds = 10L, seed = 1,
                 init_model = f1)
  f25 <- hb_quiet(y ~ a + b + g + offset(log(e)), data = df, objective = "poisson", nrounds = 25L, seed = 1)
  expect_equal(predict(f2, df[1:100, ]), predict(f25, df[1:100, ]), tolerance = 1e-9)
  x2 <- hb_quiet(d$x, d$y, objective = "poisson", init_score = log(d$e), nrounds = 10L, seed = 1, init_model = f1)
  expect_equal(hb_trees(x2), hb_trees(f2))
})

test_that("a continued model keeps its base's monotone constraints", {
  d <- gen_cont(16)
  mono <- c(a = 1L)
  m1 <- hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 7L, seed = 1, monotone_constraints = mono)
  m2 <- hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 7L, seed = 1, init_model = m1)
  m20 <- hb_quiet(d$x, d$y, nrounds = 20L, num_leaves = 7L, seed = 1, monotone_constraints = mono)
  expect_identical(m2$params$monotone_constraints, m1$params$monotone_constraints)
  expect_equal(hb_trees(m2), hb_trees(m20), tolerance = 1e-9)
  grid <- d$x[rep(1:20, each = 30), ]
  grid$a <- rep(seq(0, 1, length.out = 30), 20)
  p <- matrix(predict(m2, grid), 30)
  expect_true(all(diff(p) >= 0))
  err <- function(expr) expect_error(expr, class = "histboost_error_input", regexp = "differ from `init_model`'s")
  err(hb_quiet(d$x, d$y, nrounds = 2L, init_model = m1, monotone_constraints = c(b = 1L)))
  m0 <- hb_quiet(d$x, d$y, nrounds = 2L)
  err(hb_quiet(d$x, d$y, nrounds = 2L, init_model = m0, monotone_constraints = mono))
})

test_that("hb_cv() continues init_model in every fold", {
  d <- gen_cont(14, n = 900)
  m1 <- hb_quiet(d$x, d$y, nrounds = 10L, seed = 1)
  folds <- list(seq(1, 900, by = 3), seq(2, 900, by = 3), seq(3, 900, by = 3))
  cv <- hb_cv(d$x, d$y, folds = folds, nrounds = 5L, seed = 2, verbose = 0L, init_model = m1)
  for (k in 1:3) {
    te <- folds[[k]]
    m <- hb_quiet(d$x[-te, ], d$y[-te], nrounds = 5L, seed = 2, init_model = m1)
    expect_equal(cv$pred[te], predict(m, d$x[te, ]), tolerance = 1e-12)
  }
  expect_equal(cv$evaluation_log$test_rmse_mean[5],
               mean(sapply(folds, function(te) rmse(d$y[te], cv$pred[te]))), tolerance = TOL$metric)
  # data that do not suit init_model: said once, of the user's `x`, before any fold (not as "fold 1: ...")
  x2 <- d$x[setdiff(names(d$x), "b")]
  e <- expect_error(hb_cv(x2, d$y, folds = folds, nrounds = 5L, verbose = 0L, init_model = m1),
                    class = "histboost_error_input")
  expect_match(conditionMessage(e), "^`x` does not suit `init_model`: .*\\bb\\b")
  alone <- expect_error(hb_quiet(x2, d$y, nrounds = 5L, init_model = m1), class = "histboost_error_input")
  expect_identical(conditionMessage(e), conditionMessage(alone))
  rf <- hb_quiet(d$x, d$y, nrounds = 2L, boosting = "rf", bagging_fraction = 0.5, bagging_freq = 1L)
  e <- expect_error(hb_cv(d$x, d$y, folds = folds, nrounds = 5L, verbose = 0L, init_model = rf),
                    class = "histboost_error_input")
  expect_match(conditionMessage(e), "^`init_model`: a random forest")
  # a label that does not suit init_model's objective: said once too, as histboost() says it
  yb <- factor(d$y > median(d$y), labels = c("lo", "hi"))
  e <- expect_error(hb_cv(d$x, yb, folds = folds, nrounds = 5L, verbose = 0L, init_model = m1),
                    class = "histboost_error_input")
  alone <- expect_error(hb_quiet(d$x, yb, nrounds = 5L, init_model = m1), class = "histboost_error_input")
  expect_identical(conditionMessage(e), conditionMessage(alone))
  expect_match(conditionMessage(e), "^`init_model` was trained with objective \"regression\"")
})

test_that("a continuation matches x's columns by name and its factor levels by label, as predict() does", {
  d <- gen_cont(16, n = 1500)
  d$x$o <- factor(sample(c("lo", "mid", "hi"), 1500, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE)
  m1 <- hb_quiet(d$x, d$y, nrounds = 5L, num_leaves = 7L)
  cont <- function(x, y = d$y) hb_trees(hb_quiet(x, y, nrounds = 4L, num_leaves = 7L, seed = 3, init_model = m1))
  ref <- cont(d$x)
  # columns in another order, g's levels in another order: the same data
  x2 <- d$x[c("o", "g", "b", "a")]
  x2$g <- factor(as.character(x2$g), levels = c("s", "r", "q", "p"))
  before <- x2
  expect_identical(cont(x2), ref)
  expect_identical(x2, before)  # the user's data untouched
  # a matrix of the numeric columns, columns reordered by name
  mn <- hb_quiet(as.matrix(d$x[c("a", "b")]), d$y, nrounds = 3L, num_leaves = 7L)
  expect_identical(hb_trees(hb_quiet(as.matrix(d$x[c("b", "a")]), d$y, nrounds = 2L, num_leaves = 7L, init_model = mn)),
                   hb_trees(hb_quiet(as.matrix(d$x[c("a", "b")]), d$y, nrounds = 2L, num_leaves = 7L, init_model = mn)))
  # a new batch lacking level "s" (dropped): the same as its rows with every level kept
  keep <- d$x$g != "s"
  expect_identical(cont(droplevels(d$x[keep, ]), d$y[keep]), cont(d$x[keep, ], d$y[keep]))
  # what cannot be matched: a level the model lacks, an ordered factor in another order
  x3 <- d$x
  x3$g <- factor(ifelse(seq_len(1500) <= 5, "t", as.character(x3$g)))
  expect_error(cont(x3), class = "histboost_error_input", regexp = "`x\\$g` has level `t` that `init_model`")
  x4 <- d$x
  x4$o <- factor(as.character(x4$o), levels = c("hi", "mid", "lo"), ordered = TRUE)
  expect_error(cont(x4), class = "histboost_error_input", regexp = "`x\\$o` orders its levels")
  expect_error(cont(d$x[c("a", "g", "o")]), class = "histboost_error_input", regexp = "lacks column `b`")
})

test_that("init_model that does not fit the data gets a classed error naming it", {
  d <- gen_cont(15, n = 400)
  m1 <- hb_quiet(d$x, d$y, nrounds = 3L)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(hb_quiet(d$x, d$y, nrounds = 2L, init_model = list(a = 1)), "`init_model` must be a histboost model")
  err(hb_quiet(hb_dataset(d$x, d$y), nrounds = 2L, init_model = m1), "`init_model` needs `x` as a data.frame")
  err(hb_quiet(d$x, d$y, nrounds = 2L, init_model = m1, objective = "huber"), "objective \"regression\"")
  err(hb_quiet(d$x, d$y > 1, nrounds = 2L, init_model = m1), "same objective and classes")
  err(hb_quiet(cbind(d$x, z = 1), d$y, nrounds = 2L, init_model = m1), "it has `z`, which the model was not")
  err(hb_quiet(d$x[, 1:2], d$y, nrounds = 2L, init_model = m1), "`x` does not suit `init_model`")
  err(hb_quiet(d$x, d$y, nrounds = 2L, init_model = m1, boosting = "rf", bagging_fraction = 0.5,
               bagging_freq = 1L), "random forest")
  v <- hb_dataset(d$x, d$y)
  err(hb_quiet(d$x, d$y, nrounds = 2L, init_model = m1, valid = list(v = hb_dataset(d$x, d$y, reference = v))),
      "not hb_datasets")
  mq <- hb_quiet(d$x, d$y, nrounds = 2L, objective = "quantile", quantile_alpha = 0.9)
  err(hb_quiet(d$x, d$y, nrounds = 2L, objective = "quantile", init_model = mq), "`quantile_alpha` \\(0.5\\) differs")
  expect_identical(hb_quiet(d$x, d$y, nrounds = 2L, objective = "quantile", quantile_alpha = 0.9,
                            init_model = mq)$niter, 4L)
  yk <- gen_cont(15, n = 400, task = "multiclass")$y
  mk <- hb_quiet(d$x, yk, nrounds = 2L)
  err(hb_quiet(d$x, yk, nrounds = 2L, init_model = mk, init_score = rep(0, 400)), "`init_score` has 1 column")
})

test_that("a formula offset model refuses newdata that cannot carry the offset, and predicts leaves", {
  d <- gen_exposure(5)
  df <- data.frame(a = d$x$a, b = d$x$b, y = d$y, e = d$e)
  mf <- hb_quiet(y ~ a + b + offset(log(e)), data = df, objective = "poisson", nrounds = 5L, seed = 5)
  # a matrix has no `e`: predicting it would silently drop the offset
  expect_error(predict(mf, as.matrix(df[c("a", "b")])), class = "histboost_error_input", regexp = "offset")
  expect_equal(predict(mf, as.matrix(df[c("a", "b")]), init_score = log(df$e)), predict(mf, df),
               tolerance = 1e-14)
  # leaf indices do not depend on the offset
  expect_equal(predict(mf, df, type = "leaf"), predict(mf, as.matrix(df[c("a", "b")]), type = "leaf"))
  # a missing offset is named as the formula's, with the user's row, in predict() and in training
  nd <- df[1:5, ]
  nd$e[c(2, 4)] <- NA
  expect_error(predict(mf, nd), class = "histboost_error_input", regexp = "offset\\(\\).*2 rows.*row 2")
  expect_equal(predict(mf, nd[-c(2, 4), ]), predict(mf, df[c(1, 3, 5), ]))
  nd$e[c(2, 4)] <- c(1, 0)  # log(0): an infinite offset, named as the formula's too
  expect_error(predict(mf, nd), class = "histboost_error_input", regexp = "offset\\(\\).*1 row.*row 4")
  df$e[7] <- NA
  expect_error(hb_quiet(y ~ a + b + offset(log(e)), data = df, objective = "poisson", nrounds = 2L),
               class = "histboost_error_input", regexp = "offset\\(\\).*1 row of `data`.*row 7")
  # with `subset`, still the row of `data`
  expect_error(hb_quiet(y ~ a + b + offset(log(e)), data = df, subset = 5:20, objective = "poisson", nrounds = 2L),
               class = "histboost_error_input", regexp = "offset\\(\\).*1 row of `data`.*row 7\\)")
})

test_that("the formula method takes character predictors as factors, as lm() does", {
  set.seed(11)
  df <- data.frame(a = runif(300), ch = sample(c("u", "v", "w"), 300, TRUE))
  df$y <- df$a + c(u = 0, v = 2, w = -1)[df$ch] + rnorm(300, sd = 0.1)
  m <- hb_quiet(y ~ ., data = df, nrounds = 20L, seed = 1)
  dff <- df
  dff$ch <- factor(dff$ch)
  mf <- hb_quiet(y ~ ., data = dff, nrounds = 20L, seed = 1)
  # the same model as with the factor lm() would make of the column
  expect_identical(hb_trees(m), hb_trees(mf))
  expect_identical(m$feature_levels$ch, levels(factor(df$ch)))
  expect_equal(predict(m, df[1:50, ]), predict(mf, dff[1:50, ]))
  # the column is split on its levels: the fit tells v from w
  expect_lt(sqrt(mean((predict(m, df) - df$y)^2)), 0.5)
})

test_that("a continued training's progress and stop messages count the base's iterations", {
  d <- gen_cont(13, n = 600)
  m1 <- hb_quiet(d$x, d$y, nrounds = 4L, seed = 1)
  msgs <- character()
  withCallingHandlers(histboost(d$x, d$y, nrounds = 2L, seed = 1, init_model = m1, verbose = 2L,
                                valid = list(v = list(x = d$x, y = d$y))),
                      message = function(m) {
                        msgs <<- c(msgs, conditionMessage(m))
                        invokeRestart("muffleMessage")
                      })
  msgs <- paste(msgs, collapse = "\n")
  expect_match(msgs, "[5]", fixed = TRUE)
  expect_match(msgs, "[6]", fixed = TRUE)
})
