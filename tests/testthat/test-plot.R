# plot.histboost() and plot.hb_cv(): the data each returns (what it drew) is
# checked against the model's evaluation log, against metrics recomputed in
# plain R from predict(iteration = i), and against importance summed in plain
# R from hb_trees(). Every test draws on a null device.

plot_data <- local({
  cache <- NULL
  function() {
    if (!is.null(cache)) return(cache)
    set.seed(11)
    n <- 400
    x <- data.frame(a = runif(n), b = runif(n), c = rnorm(n), d = rnorm(n),
                    f = factor(sample(c("p", "q", "r"), n, TRUE)))
    y <- 3 * x$a + sin(4 * x$b) + (x$f == "q") + rnorm(n, sd = 0.3)
    tr <- 1:300
    te <- 301:400
    fit <- hb_quiet(x[tr, ], y[tr], nrounds = 40L, learning_rate = 0.3, num_leaves = 8L,
                    min_data_in_leaf = 5L, eval_metric = c("rmse", "mae"), early_stopping_rounds = 3L,
                    valid = list(train = list(x = x[tr, ], y = y[tr]), test = list(x = x[te, ], y = y[te])))
    cache <<- list(x = x, y = y, tr = tr, te = te, fit = fit)
    cache
  }
})

# Importance in plain R from the node table: total gain and split count of
# each feature over the internal nodes, sorted by `by` (ties: feature order).
ref_importance <- function(model, by = c("gain", "split")) {
  by <- match.arg(by)
  nd <- hb_trees(model)
  # the trees predict() sums (one a round here): those of the best iteration
  last <- if (is.null(model$best_iteration)) model$niter else model$best_iteration
  nd <- nd[!nd$is_leaf & nd$tree <= last, ]
  feats <- unique(nd$feature)
  gain <- vapply(feats, function(f) sum(nd$gain[nd$feature == f]), 0)
  splits <- vapply(feats, function(f) sum(nd$feature == f), 0L)
  key <- if (by == "gain") gain else splits
  o <- order(-key, match(feats, model$feature_names))
  data.frame(feature = feats[o], gain = unname(gain[o]), splits = unname(splits[o]))
}

test_that("type = 'log' returns the evaluation log of each data set for the metric, in long form", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  fit <- d$fit
  log <- fit$evaluation_log
  n <- nrow(log)
  expect_gt(n, 3L)
  for (m in c("rmse", "mae")) {
    out <- plot(fit, metric = m)
    expect_s3_class(out, "data.frame")
    expect_identical(names(out), c("iteration", "data", "metric", "value"))
    expect_identical(out$iteration, c(log$iter, log$iter))
    expect_identical(out$data, rep(c("train", "test"), each = n))
    expect_identical(out$metric, rep(m, 2L * n))
    expect_identical(out$value, c(log[[paste0("train_", m)]], log[[paste0("test_", m)]]))
  }
  # the default is the first metric of eval_metric
  expect_identical(plot(fit)$metric, rep("rmse", 2L * n))
  # and the values are the metrics of the model's predictions, recomputed in R
  out <- plot(fit, metric = "mae")
  for (i in c(1L, n)) {
    p_tr <- predict(fit, d$x[d$tr, ], iteration = i)
    p_te <- predict(fit, d$x[d$te, ], iteration = i)
    expect_equal(out$value[out$data == "train" & out$iteration == i], mae(d$y[d$tr], p_tr), tolerance = TOL$metric)
    expect_equal(out$value[out$data == "test" & out$iteration == i], mae(d$y[d$te], p_te), tolerance = TOL$metric)
  }
  # with eval_metric in the other order, mae is the default
  fit2 <- hb_quiet(d$x[d$tr, ], d$y[d$tr], nrounds = 5L, eval_metric = c("mae", "rmse"),
                   valid = list(list(x = d$x[d$te, ], y = d$y[d$te])))
  out2 <- plot(fit2)
  expect_identical(out2$metric, rep("mae", 5L))
  expect_identical(out2$data, rep("valid_1", 5L))
  expect_identical(out2$value, fit2$evaluation_log$valid_1_mae)
})

test_that("type = 'log' marks the best iteration early stopping chose, and none without it", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  fit <- d$fit
  out <- plot(fit)
  # early stopping watches the first metric on the last set
  best <- which.min(fit$evaluation_log$test_rmse)
  expect_identical(attr(out, "best_iteration"), best)
  expect_identical(attr(out, "best_iteration"), fit$best_iteration)
  expect_identical(attr(plot(fit, metric = "mae"), "best_iteration"), best)

  plain <- hb_quiet(d$x[d$tr, ], d$y[d$tr], nrounds = 6L,
                    valid = list(test = list(x = d$x[d$te, ], y = d$y[d$te])))
  expect_null(plain$best_iteration)
  out <- plot(plain)
  expect_null(attr(out, "best_iteration"))
  expect_identical(out$value, plain$evaluation_log$test_rmse)
})

test_that("type = 'log' splits set and metric names that hold underscores and cut-offs", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  set.seed(5)
  n <- 240
  x <- data.frame(a = runif(n), b = runif(n))
  cls <- factor(findInterval(x$a + rnorm(n, sd = 0.1), c(0.35, 0.7)), labels = c("lo", "mid", "hi"))
  fit <- hb_quiet(x[1:160, ], cls[1:160], nrounds = 4L, min_data_in_leaf = 5L,
                  eval_metric = c("multi_logloss", "multi_error"),
                  valid = list(my_hold_out = list(x = x[161:240, ], y = cls[161:240])))
  out <- plot(fit, metric = "multi_error")
  expect_identical(unique(out$data), "my_hold_out")
  expect_identical(out$value, fit$evaluation_log$my_hold_out_multi_error)
  expect_identical(plot(fit)$value, fit$evaluation_log$my_hold_out_multi_logloss)

  q <- rep(1:24, each = 10)
  grade <- findInterval(x$a + rnorm(n, sd = 0.2), c(0.3, 0.6, 0.9))
  rk <- hb_quiet(x[1:160, ], grade[1:160], group = q[1:160], objective = "lambdarank", nrounds = 4L,
                 min_data_in_leaf = 5L, eval_at = c(1L, 3L),
                 valid = list(v = list(x = x[161:240, ], y = grade[161:240], group = q[161:240])))
  expect_identical(names(rk$evaluation_log), c("iter", "v_ndcg@1", "v_ndcg@3"))
  expect_identical(plot(rk, metric = "ndcg@3")$value, rk$evaluation_log[["v_ndcg@3"]])
  expect_identical(plot(rk)$metric, rep("ndcg@1", 4L))

  # without the recorded metric names the columns are still split by the known metrics
  bare <- fit
  bare$params$eval_metric <- NULL
  bare$params$metrics <- NULL
  expect_identical(plot(bare, metric = "multi_error"), out)
})

test_that("type = 'log' places metric functions' columns, after hb_save() too, and plot.hb_cv shows them", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  medae <- function(preds, labels) list(name = "medae", value = median(abs(preds - labels)), higher_better = FALSE)
  # its name ends in a built-in one's: "test_trimmed_rmse" is set "test", metric "trimmed_rmse"
  trim <- function(e) sqrt(mean(sort(e^2)[seq_len(floor(0.9 * length(e)))]))
  trimmed_rmse <- function(preds, labels) list(name = "trimmed_rmse", value = trim(preds - labels),
                                               higher_better = FALSE)
  tr <- list(x = d$x[d$tr, ], y = d$y[d$tr])
  te <- list(x = d$x[d$te, ], y = d$y[d$te])
  one <- hb_quiet(tr$x, tr$y, nrounds = 6L, eval_metric = medae, valid = list(test = te))
  expect_identical(one$params$metrics, "medae")
  out <- plot(one)
  # the legend goes where the curves are not: top right for a falling metric; bottom right for a
  # rising one, a metric function with higher_better = TRUE too (once put top right, over its curve)
  r2 <- function(preds, labels) list(name = "r2", value = 1 - sum((labels - preds)^2) / sum((labels - mean(labels))^2),
                                     higher_better = TRUE)
  up <- hb_quiet(tr$x, tr$y, nrounds = 6L, eval_metric = r2, valid = list(test = te))
  rise <- plot(up)$value
  expect_gt(rise[6], rise[1])
  expect_identical(histboost:::.hb_legend_corner(rise), "bottomright")
  expect_lt(out$value[6], out$value[1])
  expect_identical(histboost:::.hb_legend_corner(out$value), "topright")
  expect_identical(out$data, rep("test", 6L))
  expect_identical(out$metric, rep("medae", 6L))
  expect_identical(out$value, one$evaluation_log$test_medae)
  for (i in c(1L, 6L)) {
    expect_equal(out$value[i], median(abs(predict(one, te$x, iteration = i) - te$y)), tolerance = TOL$metric)
  }

  fit <- hb_quiet(tr$x, tr$y, nrounds = 6L, eval_metric = list("rmse", trimmed_rmse, medae),
                  valid = list(train = tr, test = te))
  expect_identical(fit$params$metrics, c("rmse", "trimmed_rmse", "medae"))
  expect_identical(fit$params$eval_metric, "rmse")
  expect_identical(plot(fit)$metric, rep("rmse", 12L))
  out <- plot(fit, metric = "trimmed_rmse")
  expect_identical(out$data, rep(c("train", "test"), each = 6L))
  expect_identical(out$metric, rep("trimmed_rmse", 12L))
  expect_identical(out$value, c(fit$evaluation_log$train_trimmed_rmse, fit$evaluation_log$test_trimmed_rmse))
  for (i in c(1L, 6L)) {
    expect_equal(out$value[out$data == "test" & out$iteration == i],
                 trim(predict(fit, te$x, iteration = i) - te$y), tolerance = TOL$metric)
    expect_equal(out$value[out$data == "train" & out$iteration == i],
                 trim(predict(fit, tr$x, iteration = i) - tr$y), tolerance = TOL$metric)
  }
  expect_identical(plot(fit, metric = "rmse")$value, c(fit$evaluation_log$train_rmse, fit$evaluation_log$test_rmse))
  expect_identical(unique(plot(fit, metric = "medae")$data), c("train", "test"))

  # the names live in the model text: hb_save() / hb_load() keep them
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f), add = TRUE)
  hb_save(fit, f)
  loaded <- hb_load(f)
  expect_identical(loaded$params$metrics, fit$params$metrics)
  expect_identical(plot(loaded, metric = "trimmed_rmse"), out)
  expect_identical(plot(hb_load(f))$metric, rep("rmse", 12L))

  set.seed(4)
  cv <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 4L, eval_metric = list("rmse", trimmed_rmse), keep_models = TRUE,
              verbose = 0L)
  cout <- plot(cv, metric = "trimmed_rmse")
  per_fold <- sapply(seq_along(cv$folds), function(k) {
    h <- cv$folds[[k]]
    vapply(1:4, function(i) trim(predict(cv$models[[k]], d$x[h, ], iteration = i) - d$y[h]), 0)
  })
  expect_equal(cout$mean, rowMeans(per_fold), tolerance = TOL$metric)
  expect_identical(plot(cv)$metric, rep("rmse", 4L))
})

test_that("type = 'log' counts a continued model's iterations, and a loaded model keeps its log", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  fit <- d$fit
  more <- hb_quiet(d$x[d$tr, ], d$y[d$tr], nrounds = 3L, init_model = fit,
                   valid = list(test = list(x = d$x[d$te, ], y = d$y[d$te])))
  out <- plot(more)
  expect_identical(out$iteration, fit$best_iteration + 1:3)
  expect_identical(out$value, more$evaluation_log$test_rmse)

  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f), add = TRUE)
  hb_save(fit, f)
  loaded <- hb_load(f)
  expect_identical(plot(loaded, metric = "mae"), plot(fit, metric = "mae"))
})

test_that("type = 'importance' returns hb_importance's top rows, largest first", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  fit <- plot_data()$fit
  for (by in c("gain", "split")) {
    ref <- ref_importance(fit, by)
    expect_gt(nrow(ref), 3L)
    out <- plot(fit, type = "importance", importance = by, top = 3L)
    expect_identical(out$feature, ref$feature[1:3])
    expect_equal(out$gain, ref$gain[1:3], tolerance = TOL$exact)
    expect_identical(out$splits, ref$splits[1:3])
    expect_identical(out, utils::head(hb_importance(fit, by), 3L))
    # top larger than the number of features: every feature used, none made up
    all <- plot(fit, type = "importance", importance = by, top = 100L)
    expect_identical(nrow(all), nrow(ref))
    expect_lte(nrow(all), length(fit$feature_names))
    expect_identical(all$feature, ref$feature)
  }
  # the default is gain, top 20
  expect_identical(plot(fit, type = "importance")$feature, ref_importance(fit, "gain")$feature)
})

test_that("plot.hb_cv returns the folds' mean and sd of the metric and marks the best iteration", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  set.seed(3)
  cv <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 6L, learning_rate = 0.3, num_leaves = 8L,
              min_data_in_leaf = 5L, eval_metric = c("rmse", "mae"), keep_models = TRUE, verbose = 0L)
  log <- cv$evaluation_log
  for (m in c("rmse", "mae")) {
    out <- plot(cv, metric = m)
    expect_identical(names(out), c("iteration", "metric", "mean", "sd"))
    expect_identical(out$iteration, log$iter)
    expect_identical(out$metric, rep(m, nrow(log)))
    expect_identical(out$mean, log[[paste0("test_", m, "_mean")]])
    expect_identical(out$sd, log[[paste0("test_", m, "_sd")]])
    expect_identical(attr(out, "best_iteration"), cv$best_iteration)
  }
  # the default metric is the first; recomputed in R from each fold's model
  out <- plot(cv)
  expect_identical(out$metric, rep("rmse", 6L))
  per_fold <- sapply(seq_along(cv$folds), function(k) {
    te <- cv$folds[[k]]
    vapply(1:6, function(i) rmse(d$y[te], predict(cv$models[[k]], d$x[te, ], iteration = i)), 0)
  })
  expect_equal(out$mean, rowMeans(per_fold), tolerance = TOL$metric)
  expect_equal(out$sd, apply(per_fold, 1L, function(v) sqrt(mean((v - mean(v))^2))), tolerance = TOL$metric)
  expect_identical(attr(out, "best_iteration"), which.min(rowMeans(per_fold)))
  # a log y axis, where mean - sd is not positive: the same data, drawn
  wide <- cv
  wide$evaluation_log$test_rmse_sd <- 1.5 * wide$evaluation_log$test_rmse_mean
  out <- plot(wide, log = "y")
  expect_identical(out$sd, wide$evaluation_log$test_rmse_sd)
  expect_true(graphics::par("ylog"))
  # the band's lower edge stops at half the smallest mean: the y range (in
  # log10, extended 4% each side as R does) runs from there to the top of the band
  ylim <- log10(range(c(min(out$mean) / 2, out$mean + out$sd)))
  expect_equal(graphics::par("usr")[3:4], ylim + c(-0.04, 0.04) * diff(ylim), tolerance = 1e-8)
})

test_that("plotting leaves the model and the cross-validation unchanged", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  fit <- d$fit
  ptr <- fit$.ptr$ptr
  before <- serialize(fit, NULL)
  plot(fit)
  plot(fit, metric = "mae", col = c("red", "blue"), lwd = 2, main = "curves")
  plot(fit, type = "importance", top = 2L, col = "grey")
  expect_identical(serialize(fit, NULL), before)
  expect_identical(fit$.ptr$ptr, ptr)

  cv <- hb_cv(d$x, d$y, nfold = 2L, nrounds = 3L, seed = 1, verbose = 0L)
  before <- serialize(cv, NULL)
  plot(cv, col = "darkgreen", main = "cv")
  expect_identical(serialize(cv, NULL), before)
})

test_that("plot errors are classed and name what is available", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- plot_data()
  fit <- d$fit
  # no validation set: no log
  nolog <- hb_quiet(d$x[d$tr, ], d$y[d$tr], nrounds = 3L)
  expect_null(nolog$evaluation_log)
  expect_error(plot(nolog), class = "histboost_error_input", regexp = "no evaluation log")
  expect_error(plot(nolog, type = "log"), class = "histboost_error")
  # importance still works for it
  expect_identical(plot(nolog, type = "importance")$feature, ref_importance(nolog)$feature)
  # a metric that was not logged: the message lists the logged ones
  expect_error(plot(fit, metric = "auc"), class = "histboost_error_input",
               regexp = "`rmse` and `mae`")
  expect_error(plot(fit, metric = "rmsee"), class = "histboost_error_input", regexp = "Did you mean `rmse`")
  expect_error(plot(fit, metric = c("rmse", "mae")), class = "histboost_error_input")
  expect_error(plot(fit, type = "trees"), class = "histboost_error_input", regexp = "`type`.*Did you mean `tree`")
  expect_error(plot(fit, type = "importance", top = 0L), class = "histboost_error_input", regexp = "`top`")
  expect_error(plot(fit, type = "importance", importance = "covers"), class = "histboost_error_input",
               regexp = "`importance`.*Did you mean `cover`")
  # cover: the bars are hb_importance()'s cover column, largest on top
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  cv_imp <- plot(fit, type = "importance", importance = "cover", top = 3L)
  expect_identical(cv_imp, utils::head(hb_importance(fit, "cover"), 3L))
  expect_error(plot(fit, type = "importance", metric = "rmse"), class = "histboost_error_input",
               regexp = "`metric`")
  expect_error(plot(fit, top = 5L), class = "histboost_error_input", regexp = "`top`")

  cv <- hb_cv(d$x, d$y, nfold = 2L, nrounds = 3L, seed = 1, verbose = 0L)
  expect_error(plot(cv, metric = "mae"), class = "histboost_error_input", regexp = "`rmse`")
  bad <- structure(list(evaluation_log = NULL), class = "hb_cv")
  expect_error(plot(bad), class = "histboost_error_input", regexp = "hb_cv")
})
