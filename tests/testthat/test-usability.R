# What R users expect of a model object: update() refits with changed
# arguments, fitted() and residuals(), messages and warnings that reach
# users of parsnip and caret, and progress while training.

# The messages (stderr) an expression writes.
messages_of <- function(expr) utils::capture.output(invisible(expr), type = "message")

test_that("update() refits with changed arguments, x / y and formula fits alike", {
  d <- gen_task(301, n = 500, task = "regression", factors = 1)
  x <- d$x
  y <- d$y
  fit <- histboost(x, y, nrounds = 5L, num_leaves = 8L, seed = 4, verbose = 0)
  up <- update(fit, nrounds = 9L)
  alone <- hb_quiet(x, y, nrounds = 9L, num_leaves = 8L, seed = 4)
  expect_identical(up$niter, 9L)
  expect_identical(predict(up, x), predict(alone, x))
  expect_identical(up$call$nrounds, 9L)
  # update(evaluate = FALSE) gives the call, as for lm
  cl <- update(fit, learning_rate = 0.5, evaluate = FALSE)
  expect_identical(cl[[1L]], quote(histboost))
  expect_identical(cl$learning_rate, 0.5)

  df <- cbind(x, target = y)
  ff <- histboost(target ~ ., data = df, nrounds = 5L, num_leaves = 8L, seed = 4, verbose = 0)
  fu <- update(ff, nrounds = 7L)
  fa <- hb_quiet(target ~ ., data = df, nrounds = 7L, num_leaves = 8L, seed = 4)
  expect_identical(predict(fu, df), predict(fa, df))
  # a changed formula, as update() on lm takes it
  fx <- update(ff, . ~ . - x1)
  expect_false("x1" %in% fx$feature_names)
  expect_identical(predict(fx, df), predict(hb_quiet(target ~ . - x1, data = df, nrounds = 5L, num_leaves = 8L,
                                                     seed = 4), df))
  expect_equal(formula(ff), stats::as.formula(paste("target ~", paste(names(x), collapse = " + "))),
               ignore_attr = TRUE)
  expect_input_error(formula(fit), "not fitted with a formula")
})

test_that("verbose = 1 without validation data prints the training metric, equal to one computed in R", {
  d <- gen_task(302, n = 600, task = "regression")
  out <- messages_of(fit <- histboost(d$x, d$y, nrounds = 20L, num_leaves = 8L, seed = 1, verbose = 1))
  printed <- grep("^\\[[0-9]+\\]  train_rmse: ", out, value = TRUE)
  expect_identical(sub("\\].*", "", sub("^\\[", "", printed)), c("10", "20"))
  got <- as.numeric(sub(".*train_rmse: ", "", printed))
  want <- c(rmse(d$y, predict(fit, d$x, iteration = 10L)), rmse(d$y, predict(fit, d$x)))
  expect_equal(got, want, tolerance = 1e-5)  # printed with 6 significant digits
  # binary: each metric asked for, on the training rows
  b <- gen_task(303, n = 600, task = "binary")
  out <- messages_of(fb <- histboost(b$x, b$y, nrounds = 10L, seed = 1, eval_metric = c("logloss", "auc"),
                                        verbose = 1))
  line <- grep("^\\[10\\]", out, value = TRUE)
  y01 <- as.integer(b$y == levels(b$y)[2])
  p <- predict(fb, b$x)
  expect_equal(as.numeric(sub(".*train_logloss: ([^ ]+).*", "\\1", line)), logloss(y01, p), tolerance = 1e-5)
  expect_equal(as.numeric(sub(".*train_auc: ([^ ]+).*", "\\1", line)), auc(y01, p), tolerance = 1e-5)
  expect_length(messages_of(hb_quiet(d$x, d$y, nrounds = 5L)), 0L)
})

test_that("the progress bar counts the rounds, shows when asked, and is gone when training ends", {
  d <- gen_task(304, n = 300, task = "regression")
  old <- options(histboost.progress = 0)
  on.exit(options(old))
  out <- paste(messages_of(histboost(d$x, d$y, nrounds = 12L, num_leaves = 4L, verbose = 1)), collapse = "\n")
  expect_match(out, "12/12 rounds | ", fixed = TRUE)
  expect_match(out, "[====================] 12/12 rounds", fixed = TRUE)
  expect_match(out, "spent | 0s left", fixed = TRUE)
  expect_match(out, "\r *\r$")  # the line is cleared at the end
  # a continued model counts its base's iterations
  base <- hb_quiet(d$x, d$y, nrounds = 5L, num_leaves = 4L)
  out <- paste(messages_of(histboost(d$x, d$y, init_model = base, nrounds = 3L, num_leaves = 4L, verbose = 1)), collapse = "\n")
  expect_match(out, "8/8 rounds", fixed = TRUE)
  # verbose = 0, or the option FALSE: nothing
  expect_length(messages_of(hb_quiet(d$x, d$y, nrounds = 5L)), 0L)
  options(histboost.progress = FALSE)
  out <- messages_of(histboost(d$x, d$y, nrounds = 12L, verbose = 1))
  expect_false(any(grepl("rounds |", out, fixed = TRUE)))
  expect_identical(histboost:::.hb_duration(c(4.21)), "4.2s")
  expect_identical(histboost:::.hb_duration(185.9), "3m05s")
  expect_identical(histboost:::.hb_duration(3725), "1h02m")
})

test_that("device = \"auto\" says once which device it chose", {
  d <- gen_task(305, n = 200, task = "regression")
  want <- if (hb_has_cuda()) "chose the GPU" else "chose the CPU"
  out <- messages_of(histboost(d$x, d$y, nrounds = 3L, device = "auto", verbose = 1))
  expect_identical(sum(grepl("device = \"auto\"", out, fixed = TRUE)), 1L)
  expect_identical(sum(grepl(want, out, fixed = TRUE)), 1L)
  expect_length(messages_of(histboost(d$x, d$y, nrounds = 3L, device = "auto", verbose = 0)),
                0L)
  out <- messages_of(hb_cv(d$x, d$y, nfold = 3L, nrounds = 3L, device = "auto", verbose = 1))
  expect_identical(sum(grepl(want, out, fixed = TRUE)), 1L)
  # options the GPU learner lacks keep "auto" on the CPU: with a GPU the message names them,
  # without one it gives the reason there is none; the model is the CPU's either way
  args <- list(d$x, d$y, nrounds = 3L, exact_sums = TRUE, seed = 1L, verbose = 1)
  out <- messages_of(fit <- do.call(histboost, c(args, device = "auto")))
  expect_identical(sum(grepl("device = \"auto\" chose the CPU", out, fixed = TRUE)), 1L)
  named <- grepl("`exact_sums` trains on the CPU only", out, fixed = TRUE)
  expect_identical(sum(named), if (hb_has_cuda()) 1L else 0L)
  expect_identical(fit$model_text, suppressMessages(do.call(histboost, c(args, device = "cpu")))$model_text)
})

test_that("a model that cannot split warns, whatever verbose says, through parsnip and caret too", {
  x <- mtcars[, -1]
  y <- mtcars$mpg
  expect_warning(fit <- hb_quiet(x, y, nrounds = 5L), class = "histboost_warning",
                 regexp = "32 training rows, `min_data_in_leaf` = 20")
  p <- predict(fit, x)
  expect_equal(p, rep(mean(y), 32), tolerance = TOL$exact)  # constant: the mean of y
  expect_warning(f16 <- hb_quiet(x, y, nrounds = 5L, min_data_in_leaf = 16L), NA)  # 16 + 16 rows can split
  expect_gt(sd(predict(f16, x)), 0)
  expect_warning(cv <- hb_cv(x, y, nfold = 2L, nrounds = 3L, verbose = 0), class = "histboost_warning",
                 regexp = "in every fold")
  expect_warning(f1 <- hb_quiet(data.frame(a = rep(1, 100)), rnorm(100), nrounds = 3L), "no split gains enough")
  m <- hb_caret_model()
  expect_warning(m$fit(x, y, wts = NULL, param = data.frame(nrounds = 5L, num_leaves = 4L, learning_rate = 0.1,
                                                            min_data_in_leaf = 20L),
                       lev = NULL, last = TRUE, classProbs = FALSE), class = "histboost_warning")
  expect_warning(hb_parsnip_fit(x, y, nrounds = 5L, verbose = 0L), class = "histboost_warning")
  skip_if_not_installed("parsnip")
  spec <- parsnip::set_mode(parsnip::set_engine(parsnip::boost_tree(trees = 5), "histboost"), "regression")
  expect_warning(parsnip::fit(spec, mpg ~ ., data = mtcars), "min_data_in_leaf")
  if (!nzchar(Sys.getenv("TZ"))) Sys.setenv(TZ = "UTC")
  skip_if_not_installed("caret")
  expect_warning(caret::train(x, y, method = hb_caret_model(), trControl = caret::trainControl(method = "none"),
                              tuneGrid = data.frame(nrounds = 5L, num_leaves = 4L, learning_rate = 0.1,
                                                    min_data_in_leaf = 20L)), "min_data_in_leaf")
})

test_that("fitted() and residuals() equal predict() on the training rows and y minus it", {
  d <- gen_task(306, n = 800, task = "regression", factors = 1, na = 0.05)
  tr <- 1:600
  va <- 601:800
  # early stopping: the fitted values are those of the best iteration
  fit <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 300L, learning_rate = 0.3, keep_fitted = TRUE,
                  valid = list(v = list(x = d$x[va, ], y = d$y[va])), early_stopping_rounds = 3L, seed = 1)
  expect_lt(fit$best_iteration, fit$niter)
  expect_equal(fitted(fit), predict(fit, d$x[tr, ]), tolerance = TOL$exact)
  expect_equal(residuals(fit), d$y[tr] - predict(fit, d$x[tr, ]), tolerance = TOL$exact)
  # bagging, an offset, a formula
  off <- rnorm(600)
  fo <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 15L, bagging_fraction = 0.5, bagging_freq = 1L, init_score = off,
                 keep_fitted = TRUE)
  expect_equal(fitted(fo), predict(fo, d$x[tr, ], init_score = off), tolerance = TOL$exact)
  df <- cbind(d$x, target = d$y)
  ff <- hb_quiet(target ~ ., data = df, nrounds = 10L, keep_fitted = TRUE)
  expect_equal(residuals(ff), df$target - predict(ff, df), tolerance = TOL$exact)
  # poisson (the response, exp(score)), a random forest
  cnt <- rpois(800, exp(ifelse(is.na(d$x$x1), 0, d$x$x1) / 2))
  fp <- hb_quiet(d$x, cnt, objective = "poisson", nrounds = 10L, keep_fitted = TRUE)
  expect_equal(fitted(fp), predict(fp, d$x), tolerance = TOL$exact)
  expect_equal(residuals(fp), cnt - predict(fp, d$x), tolerance = TOL$exact)
  frf <- hb_quiet(d$x, d$y, boosting = "rf", nrounds = 5L, bagging_fraction = 0.6, bagging_freq = 1L,
                  keep_fitted = TRUE)
  expect_equal(fitted(frf), predict(frf, d$x), tolerance = TOL$exact)
  # binary: y - p with y 0 / 1; multiclass: class indicators minus probabilities
  b <- gen_task(307, n = 500, task = "binary")
  fb <- hb_quiet(b$x, b$y, nrounds = 10L, keep_fitted = TRUE)
  expect_equal(residuals(fb), (b$y == levels(b$y)[2]) - predict(fb, b$x), tolerance = TOL$prob)
  m <- gen_task(308, n = 500, task = "multiclass", K = 3)
  fm <- hb_quiet(m$x, m$y, nrounds = 10L, keep_fitted = TRUE)
  P <- predict(fm, m$x)
  expect_equal(fitted(fm), P, tolerance = TOL$prob)
  expect_equal(residuals(fm), outer(as.character(m$y), levels(m$y), "==") - P, tolerance = TOL$prob,
               ignore_attr = TRUE)
  # without keep_fitted, or after hb_load(): a clear error
  plain <- hb_quiet(d$x, d$y, nrounds = 3L)
  expect_input_error(fitted(plain), "keep_fitted = TRUE")
  expect_input_error(residuals(plain), "keep_fitted = TRUE")
  expect_null(plain$fitted.values)
  f <- tempfile()
  on.exit(unlink(f))
  expect_input_error(fitted(hb_load(hb_save(fit, f))), "read by hb_load\\(\\) has no fitted values")
})
