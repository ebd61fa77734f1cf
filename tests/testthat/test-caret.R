# hb_caret_model(): caret's custom-model list. Its functions are called
# directly here (caret not needed): fits equal histboost()'s, submodels
# equal models trained with fewer rounds, probabilities and classes agree;
# then, when caret is installed, a whole caret::train() tuning run.

grid_small <- expand.grid(nrounds = c(5L, 10L, 20L), num_leaves = c(4L, 8L), learning_rate = 0.3,
                          min_data_in_leaf = 10L)

test_that("the grid and the loop: one fit per setting of the others, at its largest nrounds", {
  m <- hb_caret_model()
  expect_identical(m$parameters$parameter, c("nrounds", "num_leaves", "learning_rate", "min_data_in_leaf"))
  expect_setequal(m$type, c("Regression", "Classification"))
  g <- m$grid(iris[, 1:4], iris$Species, len = 2)
  expect_identical(nrow(g), 4L)
  expect_identical(sort(unique(g$nrounds)), c(50L, 100L))
  set.seed(1)
  r <- m$grid(iris[, 1:4], iris$Species, len = 5, search = "random")
  expect_identical(nrow(r), 5L)
  expect_true(all(r$learning_rate > 0 & r$learning_rate < 0.3 & r$num_leaves >= 4))
  # min_data_in_leaf follows the rows: LightGBM's 20 from 200 rows, a tenth below, never above a quarter
  # (random search); on mtcars' 32 rows the default grid's models split (they were all one constant)
  expect_identical(unique(m$grid(matrix(0, 500, 2), 1:500)$min_data_in_leaf), 20L)
  expect_identical(unique(g$min_data_in_leaf), 15L)
  expect_identical(unique(m$grid(mtcars[, -1], mtcars$mpg)$min_data_in_leaf), 3L)
  rs <- m$grid(mtcars[, -1], mtcars$mpg, len = 50, search = "random")
  expect_true(all(rs$min_data_in_leaf >= 5L & rs$min_data_in_leaf <= 8L))
  set.seed(1)
  tm <- suppressWarnings(caret::train(mpg ~ ., data = mtcars, method = m,
                                      trControl = caret::trainControl(method = "cv", number = 5), nthreads = 1))
  expect_gt(length(unique(predict(tm, mtcars))), 5L)
  expect_lt(min(tm$results$RMSE), stats::sd(mtcars$mpg))  # better than the mean
  lp <- m$loop(grid_small)
  expect_identical(nrow(lp$loop), 2L)
  expect_identical(lp$loop$nrounds, c(20L, 20L))
  expect_setequal(lp$loop$num_leaves, c(4L, 8L))
  expect_identical(lp$submodels[[1]]$nrounds, c(5L, 10L))
  expect_identical(nrow(m$sort(grid_small)), nrow(grid_small))
  expect_identical(m$sort(grid_small)$nrounds[1], 5L)
})

test_that("fit, predict and prob: submodels are the models trained with fewer rounds", {
  m <- hb_caret_model()
  x <- iris[, 1:4]
  param <- data.frame(nrounds = 20L, num_leaves = 8L, learning_rate = 0.3, min_data_in_leaf = 10L)
  fit <- m$fit(x, iris$Species, wts = NULL, param = param, lev = levels(iris$Species), last = TRUE,
               classProbs = TRUE, seed = 3)
  expect_s3_class(fit, "histboost")
  sub <- data.frame(nrounds = c(5L, 10L))
  cls <- m$predict(fit, x, submodels = sub)
  prb <- m$prob(fit, x, submodels = sub)
  expect_length(cls, 3L)
  for (j in 1:3) {
    k <- c(20L, 5L, 10L)[j]
    alone <- hb_quiet(x, iris$Species, nrounds = k, num_leaves = 8L, learning_rate = 0.3,
                      min_data_in_leaf = 10L, seed = 3)
    expect_identical(cls[[j]], as.character(predict(alone, x, type = "class")))
    expect_equal(as.matrix(prb[[j]]), predict(alone, x), tolerance = 1e-12)
    expect_identical(names(prb[[j]]), levels(iris$Species))
  }
  expect_identical(m$levels(fit), levels(iris$Species))
  vi <- m$varImp(fit)
  expect_identical(rownames(vi), names(x))
  imp <- hb_importance(fit)
  expect_equal(vi[imp$feature, "Overall"], imp$gain)
  # binary: two probability columns that sum to one; regression: numbers
  yb <- factor(ifelse(iris$Species == "setosa", "yes", "no"))
  fb <- m$fit(x, yb, wts = runif(150), param = param, lev = levels(yb), last = TRUE, classProbs = TRUE, seed = 1)
  pb <- m$prob(fb, x)
  expect_identical(names(pb), levels(yb))
  expect_equal(rowSums(pb), rep(1, 150))
  expect_equal(pb$yes, predict(fb, x), tolerance = 1e-15)
  fr <- m$fit(x[, -1], x[, 1], wts = NULL, param = param, lev = NULL, last = TRUE, classProbs = FALSE, seed = 1)
  expect_equal(m$predict(fr, x[, -1]), predict(fr, x[, -1]))
})

test_that("a fit that stopped early (no tree could split) still predicts for every submodel", {
  m <- hb_caret_model()
  s <- c(1:20, 51:70, 101:120)
  param <- data.frame(nrounds = 20L, num_leaves = 7L, learning_rate = 0.3, min_data_in_leaf = 31L)  # 60 rows: no split
  expect_warning(fit <- m$fit(iris[s, 1:4], iris$Species[s], wts = NULL, param = param, lev = NULL, last = TRUE,
                              classProbs = TRUE, seed = 1), class = "histboost_warning")
  expect_lt(fit$niter, 20L)
  p <- m$prob(fit, iris[s, 1:4], submodels = data.frame(nrounds = c(5L, 10L)))
  expect_length(p, 3L)
  for (q in p) expect_equal(as.matrix(q), predict(fit, iris[s, 1:4]), tolerance = 1e-15)
})

test_that("caret::train() tunes histboost and refits the best setting", {
  # without TZ, caret's dependencies ask timedatectl (now and at exit), which warns without systemd;
  # the test process keeps TZ = UTC
  if (!nzchar(Sys.getenv("TZ"))) Sys.setenv(TZ = "UTC")
  skip_if_not_installed("caret")
  set.seed(11)
  d <- gen_task(61, n = 600, p = 6, task = "binary")
  ctrl <- caret::trainControl(method = "cv", number = 3, classProbs = TRUE, allowParallel = FALSE)
  tr <- caret::train(d$x, d$y, method = hb_caret_model(), trControl = ctrl, tuneGrid = grid_small,
                     metric = "Accuracy", seed = 5, nthreads = 2L)
  expect_identical(nrow(tr$results), nrow(grid_small))
  best <- tr$bestTune
  expect_identical(tr$results$Accuracy[tr$results$nrounds == best$nrounds & tr$results$num_leaves == best$num_leaves],
                   max(tr$results$Accuracy))
  alone <- hb_quiet(d$x, d$y, nrounds = best$nrounds, num_leaves = best$num_leaves, learning_rate = 0.3,
                    min_data_in_leaf = 10L, seed = 5)
  expect_identical(predict(tr, d$x), predict(alone, d$x, type = "class"))
  expect_equal(predict(tr, d$x, type = "prob")$yes, predict(alone, d$x), tolerance = 1e-12)
})

test_that("arguments given to train() reach histboost(): verbose among them, the tuned ones refused", {
  m <- hb_caret_model()
  x <- iris[, 1:4]
  param <- data.frame(nrounds = 12L, num_leaves = 8L, learning_rate = 0.3, min_data_in_leaf = 10L)
  va <- list(v = list(x = x, y = iris$Species))
  # verbose = 1 prints the validation metric of round 10 and the last, as histboost() does
  out <- capture.output(f1 <- m$fit(x, iris$Species, wts = NULL, param = param, lev = NULL, last = TRUE,
                                    classProbs = TRUE, seed = 3, verbose = 1, valid = va), type = "message")
  expect_identical(sum(grepl("^\\[(10|12)\\]  v_multi_logloss", out)), 2L)
  f0 <- m$fit(x, iris$Species, wts = NULL, param = param, lev = NULL, last = TRUE, classProbs = TRUE, seed = 3,
              verbose = 0)
  expect_identical(predict(f0, x), predict(f1, x))
  alone <- hb_quiet(x, iris$Species, nrounds = 12L, num_leaves = 8L, learning_rate = 0.3, min_data_in_leaf = 10L,
                    seed = 3)
  expect_identical(predict(f0, x), predict(alone, x))
  # the call names the data, not a copy of it, under a name update() refuses (caret's copy is gone)
  expect_identical(f0$call$x, quote(.hb_caret_x))
  expect_input_error(update(f0, nrounds = 3L), "fitted through caret's train\\(\\)")
  expect_input_error(m$fit(x, iris$Species, wts = NULL, param = param, lev = NULL, last = TRUE, classProbs = TRUE,
                           nrounds = 5), "`nrounds` is tuned by caret")
  if (!nzchar(Sys.getenv("TZ"))) Sys.setenv(TZ = "UTC")
  skip_if_not_installed("caret")
  set.seed(2)
  ctrl <- caret::trainControl(method = "cv", number = 2, allowParallel = FALSE)
  tr <- caret::train(x, iris$Species, method = hb_caret_model(), trControl = ctrl,
                     tuneGrid = param, seed = 3, verbose = 0, nthreads = 2L)
  expect_identical(predict(tr, x), predict(alone, x, type = "class"))
})

test_that("submodels under early stopping predict with at most the best iteration, as fits of that many rounds", {
  m <- hb_caret_model()
  set.seed(1)
  n <- 600
  df <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  df$y <- df$x1 + rnorm(n)
  valid <- list(v = list(x = df[1:150, 1:2], y = df$y[1:150]))
  tr <- 151:600
  param <- data.frame(nrounds = 1000L, num_leaves = 31L, learning_rate = 0.3, min_data_in_leaf = 5L)
  big <- m$fit(df[tr, 1:2], df$y[tr], wts = NULL, lev = NULL, last = FALSE, classProbs = FALSE, param = param,
               valid = valid, early_stopping_rounds = 5L, nthreads = 1L, seed = 1)
  expect_lt(big$best_iteration, big$niter)  # the case: trees past the best one exist
  ks <- c(2L, big$best_iteration + 2L, 100L)
  p <- m$predict(big, df[1:50, 1:2], submodels = data.frame(nrounds = ks))
  for (j in seq_along(ks)) {
    alone <- hb_quiet(df[tr, 1:2], df$y[tr], nrounds = ks[j], num_leaves = 31L, learning_rate = 0.3,
                      min_data_in_leaf = 5L, valid = valid, early_stopping_rounds = 5L, nthreads = 1L, seed = 1)
    expect_equal(p[[j + 1L]], predict(alone, df[1:50, 1:2]), tolerance = 1e-12, info = ks[j])
  }
})

test_that("a class a resample has no rows of: every level's probability column, that one 0; characters as factors", {
  m <- hb_caret_model()
  set.seed(1)
  n <- 300
  x <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  y <- ifelse(x$x1 > 0, "A", "B")
  y[order(-x$x2)[1:2]] <- "C"
  y <- factor(y)
  tr <- which(y != "C")  # the resample: no row of C
  param <- data.frame(nrounds = 10L, num_leaves = 4L, learning_rate = 0.2, min_data_in_leaf = 5L)
  fit <- suppressWarnings(m$fit(x[tr, ], y[tr], wts = NULL, param = param, lev = levels(y), last = FALSE,
                                classProbs = TRUE, nthreads = 1L, seed = 1))
  expect_identical(m$levels(fit), c("A", "B", "C"))
  pr <- m$prob(fit, x, submodels = data.frame(nrounds = 5L))
  direct <- suppressWarnings(hb_quiet(x[tr, ], droplevels(y[tr]), nrounds = 10L, num_leaves = 4L, learning_rate = 0.2,
                                      min_data_in_leaf = 5L, nthreads = 1L, seed = 1))
  for (q in pr) {
    expect_identical(names(q), c("A", "B", "C"))
    expect_identical(q$C, rep(0, n))
  }
  expect_equal(pr[[1]]$B, predict(direct, x), tolerance = 1e-15)
  expect_equal(pr[[1]]$A, 1 - predict(direct, x), tolerance = 1e-15)
  # caret's log loss, which needs every level's column, by hand
  if (requireNamespace("caret", quietly = TRUE)) {
    te <- setdiff(seq_len(n), tr)
    d <- data.frame(obs = y, pred = factor(m$predict(fit, x), levels = levels(y)), pr[[1]])
    ll <- caret::mnLogLoss(d[tr, ], lev = levels(y))
    pt <- pmin(pmax(as.matrix(pr[[1]])[cbind(tr, as.integer(y[tr]))], 1e-15), 1 - 1e-15)
    expect_equal(unname(ll), -mean(log(pt)), tolerance = 1e-12)
  }
  # a character column trains as the factor it stands for
  xc <- x
  xc$g <- rep(c("u", "v", "w"), length.out = n)
  xf <- xc
  xf$g <- factor(xf$g)
  fc <- m$fit(xc, y, wts = NULL, param = param, lev = levels(y), last = FALSE, classProbs = TRUE, nthreads = 1L, seed = 1)
  ff <- m$fit(xf, y, wts = NULL, param = param, lev = levels(y), last = FALSE, classProbs = TRUE, nthreads = 1L, seed = 1)
  expect_identical(predict(fc, xf), predict(ff, xf))
})
