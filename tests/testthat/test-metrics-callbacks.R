# Metrics as R functions, the choice of the metric early stopping watches,
# min_delta, callbacks, and class weights: each against what the same thing
# computed independently gives (a built-in metric, the stopping rule played
# over the log in plain R, explicit row weights).

my_rmse <- function(preds, labels) list(name = "my_rmse", value = sqrt(mean((labels - preds)^2)), higher_better = FALSE)

test_that("a metric function equals the built-in metric it recomputes (regression, binary, multiclass)", {
  d <- gen_task(501, n = 800, task = "regression")
  va <- list(v = list(x = d$x[601:800, ], y = d$y[601:800]))
  fit <- hb_quiet(d$x[1:600, ], d$y[1:600], nrounds = 15L, valid = va, eval_metric = list("rmse", my_rmse))
  expect_identical(names(fit$evaluation_log), c("iter", "v_rmse", "v_my_rmse"))
  expect_equal(fit$evaluation_log$v_my_rmse, fit$evaluation_log$v_rmse, tolerance = TOL$metric)
  # weighted binary log loss, with the weights as a third argument
  b <- gen_task(502, n = 800, task = "binary")
  w <- runif(800, 0.5, 2)
  wll <- function(preds, labels, weights) {
    p <- pmin(pmax(preds, 1e-15), 1 - 1e-15)
    list(name = "wll", value = -sum(weights * (labels * log(p) + (1 - labels) * log(1 - p))) / sum(weights),
         higher_better = FALSE)
  }
  fb <- hb_quiet(b$x[1:600, ], b$y[1:600], nrounds = 10L, eval_metric = list(wll, "logloss"),
                 valid = list(v = list(x = b$x[601:800, ], y = b$y[601:800], weights = w[601:800])))
  expect_equal(fb$evaluation_log$v_wll, fb$evaluation_log$v_logloss, tolerance = TOL$metric)
  y01 <- as.integer(b$y[601:800] == levels(b$y)[2])
  p <- predict(fb, b$x[601:800, ])
  expect_equal(fb$evaluation_log$v_wll[10],
               -sum(w[601:800] * (y01 * log(p) + (1 - y01) * log(1 - p))) / sum(w[601:800]), tolerance = TOL$metric)
  # multiclass: the predictions are the probability matrix, labels 0..K-1
  m <- gen_task(503, n = 600, task = "multiclass", K = 3)
  mll <- function(preds, labels) {
    list(name = "mll", value = -mean(log(preds[cbind(seq_along(labels), labels + 1)])), higher_better = FALSE)
  }
  fm <- hb_quiet(m$x, m$y, nrounds = 5L, eval_metric = list("multi_logloss", mll),
                 valid = list(v = list(x = m$x, y = m$y)))
  expect_equal(fm$evaluation_log$v_mll, fm$evaluation_log$v_multi_logloss, tolerance = TOL$metric)
  # without validation data, verbose prints it on the training rows
  out <- utils::capture.output(invisible(histboost(d$x, d$y, nrounds = 10L, eval_metric = my_rmse, verbose = 1)),
                               type = "message")
  expect_true(any(grepl("^\\[10\\]  train_my_rmse: ", out)))
})

test_that("a metric function steers early stopping and works in hb_cv()", {
  d <- gen_task(504, n = 900, task = "regression")
  va <- list(v = list(x = d$x[601:900, ], y = d$y[601:900]))
  neg <- function(preds, labels) list(name = "neg_rmse", value = -sqrt(mean((labels - preds)^2)), higher_better = TRUE)
  f1 <- hb_quiet(d$x[1:600, ], d$y[1:600], nrounds = 500L, learning_rate = 0.3, num_leaves = 31L, min_data_in_leaf = 5L,
                 valid = va, eval_metric = neg, early_stopping_rounds = 5L, seed = 1)
  f2 <- hb_quiet(d$x[1:600, ], d$y[1:600], nrounds = 500L, learning_rate = 0.3, num_leaves = 31L, min_data_in_leaf = 5L,
                 valid = va, eval_metric = "rmse", early_stopping_rounds = 5L, seed = 1)
  expect_lt(f1$niter, 500L)
  expect_identical(f1$best_iteration, which.max(f1$evaluation_log$v_neg_rmse))
  expect_identical(f1$best_iteration, f2$best_iteration)
  expect_identical(f1$niter, f1$best_iteration + 5L)
  expect_equal(f1$best_score, -f2$best_score, tolerance = TOL$metric)
  set.seed(3)
  cv1 <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 8L, eval_metric = list("rmse", my_rmse), seed = 2, verbose = 0)
  expect_equal(cv1$evaluation_log$test_my_rmse_mean, cv1$evaluation_log$test_rmse_mean, tolerance = TOL$metric)
  expect_equal(cv1$evaluation_log$test_my_rmse_sd, cv1$evaluation_log$test_rmse_sd, tolerance = 1e-7)
  # bad functions and answers: clear errors
  expect_input_error(hb_quiet(d$x, d$y, nrounds = 2L, valid = va, eval_metric = function(p) 1), "two arguments")
  expect_input_error(hb_quiet(d$x, d$y, nrounds = 2L, valid = va, eval_metric = function(p, l) mean(p)),
                     "must return list\\(name")
  expect_input_error(hb_quiet(d$x, d$y, nrounds = 2L, valid = va, eval_metric = list("rmse", 3)), "`eval_metric` must be")
  expect_input_error(hb_quiet(d$x, d$y, nrounds = 2L, valid = va,
                              eval_metric = list("rmse", function(p, l) list(name = "rmse", value = 1, higher_better = FALSE))),
                     "two metrics are called \"rmse\"")
})

test_that("a metric function's bad answer: the error says which element is wrong and what it was", {
  d <- gen_task(505, n = 300, task = "regression")
  va <- list(v = list(x = d$x[201:300, ], y = d$y[201:300]))
  answer <- function(...) {
    r <- list(...)
    function(preds, labels) r
  }
  bad <- function(f, pattern) {
    err <- expect_error(hb_quiet(d$x[1:200, ], d$y[1:200], nrounds = 2L, valid = va, eval_metric = f),
                        class = "histboost_error_input")
    expect_match(conditionMessage(err), pattern, fixed = TRUE)
    expect_no_match(conditionMessage(err), "not of type list", fixed = TRUE)
  }
  value_rule <- "its `value` must be a single non-missing number; \"m\" returned "
  bad(answer(name = "m", value = NA_real_, higher_better = FALSE), paste0(value_rule, "NA (double)."))
  bad(answer(name = "m", value = NA, higher_better = FALSE), paste0(value_rule, "NA."))
  bad(answer(name = "m", value = c(0.5, 0.7), higher_better = FALSE),
      paste0(value_rule, "a double vector of length 2."))
  bad(answer(name = "m", value = numeric(0), higher_better = FALSE),
      paste0(value_rule, "a double vector of length 0."))
  bad(answer(name = "m", value = "0.5", higher_better = FALSE), paste0(value_rule, "the string \"0.5\"."))
  bad(answer(name = "m", higher_better = FALSE), paste0(value_rule, "no such element (NULL)."))
  bad(answer(name = NA_character_, value = 1, higher_better = FALSE),
      "its `name` must be a single non-empty string; it returned NA (character).")
  bad(answer(name = "m", value = 1, higher_better = "no"),
      "its `higher_better` must be TRUE or FALSE; \"m\" returned the string \"no\".")
  # a good answer trains: its log is the value it returned
  f <- hb_quiet(d$x[1:200, ], d$y[1:200], nrounds = 2L, valid = va,
                eval_metric = answer(name = "m", value = 0.25, higher_better = FALSE))
  expect_identical(f$evaluation_log$v_m, c(0.25, 0.25))
  # so does a one-row data.frame of the three (a list; it trained before the messages were made exact)
  g <- hb_quiet(d$x[1:200, ], d$y[1:200], nrounds = 2L, valid = va,
                eval_metric = function(preds, labels) data.frame(name = "m", value = 0.5, higher_better = FALSE))
  expect_identical(g$evaluation_log$v_m, c(0.5, 0.5))
})

# The stopping rule played over a log in plain R: the round that a better
# value by more than `delta` last came, and the round training stops.
ref_stop <- function(v, rounds, delta, higher = FALSE) {
  best <- v[1]
  bi <- 1L
  for (i in seq_along(v)[-1]) {
    better <- if (higher) v[i] > best + delta else v[i] < best - delta
    if (better) {
      best <- v[i]
      bi <- i
    } else if (i - bi >= rounds) {
      return(c(best = bi, stop = i))
    }
  }
  c(best = bi, stop = length(v))
}

test_that("early_stopping_metric picks the metric and the set; min_delta asks for a real improvement", {
  b <- gen_task(505, n = 1200, task = "binary")
  tr <- 1:600
  va <- list(a = list(x = b$x[601:900, ], y = b$y[601:900]), b = list(x = b$x[901:1200, ], y = b$y[901:1200]))
  full <- hb_quiet(b$x[tr, ], b$y[tr], nrounds = 150L, learning_rate = 0.3, min_data_in_leaf = 5L, valid = va,
                   eval_metric = c("logloss", "auc"), seed = 4)
  log <- full$evaluation_log
  for (spec in list(list(m = "auc", col = "b_auc", hi = TRUE), list(m = "a_logloss", col = "a_logloss", hi = FALSE),
                    list(m = NULL, col = "b_logloss", hi = FALSE))) {
    for (delta in c(0, 1e-3)) {
      f <- hb_quiet(b$x[tr, ], b$y[tr], nrounds = 150L, learning_rate = 0.3, min_data_in_leaf = 5L, valid = va,
                    eval_metric = c("logloss", "auc"), seed = 4, early_stopping_rounds = 4L,
                    early_stopping_metric = spec$m, early_stopping_min_delta = delta)
      want <- ref_stop(log[[spec$col]], 4L, delta, spec$hi)
      expect_identical(f$best_iteration, unname(want[["best"]]))
      expect_identical(f$niter, unname(want[["stop"]]))
      expect_equal(f$best_score, log[[spec$col]][want[["best"]]], tolerance = TOL$metric)
      expect_identical(f$params$early_stopping_metric, spec$m)
      expect_identical(f$params$early_stopping_min_delta, delta)
    }
  }
  expect_input_error(hb_quiet(b$x[tr, ], b$y[tr], nrounds = 3L, valid = va, early_stopping_rounds = 2L,
                              early_stopping_metric = "rmse"), "neither a metric")
  expect_input_error(hb_quiet(b$x[tr, ], b$y[tr], early_stopping_min_delta = -1), "`early_stopping_min_delta` must be")
  expect_input_error(hb_quiet(b$x[tr, ], b$y[tr], params = list(first_metric_only = FALSE)), "first_metric_only")
  # hb_cv: the mean of the chosen metric
  set.seed(8)
  cv <- hb_cv(b$x, b$y, nfold = 3L, nrounds = 60L, learning_rate = 0.3, eval_metric = c("logloss", "auc"),
              early_stopping_rounds = 3L, early_stopping_metric = "auc", early_stopping_min_delta = 1e-3, seed = 1,
              verbose = 0)
  want <- ref_stop(cv$evaluation_log$test_auc_mean, 3L, 1e-3, TRUE)
  expect_identical(cv$best_iteration, unname(want[["best"]]))
  expect_identical(nrow(cv$evaluation_log), unname(want[["stop"]]))
})

test_that("callbacks are called once a round with the log and the model so far, and can stop", {
  d <- gen_task(506, n = 600, task = "regression")
  va <- list(v = list(x = d$x[401:600, ], y = d$y[401:600]))
  seen <- list()
  cb <- function(iteration, evaluation_log, model) {
    seen[[length(seen) + 1L]] <<- list(iteration = iteration, log = evaluation_log,
                                       pred = predict(model, d$x[1:50, ]))
    FALSE
  }
  fit <- hb_quiet(d$x[1:400, ], d$y[1:400], nrounds = 12L, valid = va, callbacks = list(cb), seed = 1)
  expect_length(seen, 12L)
  expect_identical(vapply(seen, `[[`, 0L, "iteration"), 1:12)
  for (k in c(1L, 7L, 12L)) {
    # the model's log is its text's, written so that every platform's R reads it back exactly
    expect_identical(seen[[k]]$log, fit$evaluation_log[seq_len(k), ], ignore_attr = "row.names")
    expect_equal(seen[[k]]$pred, predict(fit, d$x[1:50, ], iteration = k), tolerance = TOL$exact)
  }
  # TRUE stops after that round; a callback that ignores the model costs no model
  calls <- 0L
  stopper <- function(iteration, evaluation_log, model) {
    calls <<- calls + 1L
    iteration >= 5L
  }
  f5 <- hb_quiet(d$x, d$y, nrounds = 50L, callbacks = list(function(...) FALSE, stopper), seed = 2)
  expect_identical(f5$niter, 5L)
  expect_identical(calls, 5L)
  expect_identical(predict(f5, d$x), predict(hb_quiet(d$x, d$y, nrounds = 5L, seed = 2), d$x))
  expect_null(local({
    lg <- "unset"
    hb_quiet(d$x, d$y, nrounds = 2L, callbacks = list(function(i, l, m) lg <<- l))
    lg
  }))
  # a continued model: iterations and the model count the base's trees
  base <- hb_quiet(d$x, d$y, nrounds = 4L, seed = 3)
  got <- list()
  cont <- hb_quiet(d$x, d$y, init_model = base, nrounds = 3L, seed = 3,
                   callbacks = list(function(i, l, m) got[[length(got) + 1L]] <<- list(i = i, p = predict(m, d$x))))
  expect_identical(vapply(got, `[[`, 0L, "i"), 5:7)
  expect_equal(got[[2]]$p, predict(cont, d$x, iteration = 6L), tolerance = TOL$exact)
  expect_input_error(hb_quiet(d$x, d$y, callbacks = list(function(i) TRUE)), "three arguments")
  expect_input_error(hb_quiet(d$x, d$y, callbacks = "x"), "list of functions")
  expect_input_error(hb_cv(d$x, d$y, callbacks = list(stopper), verbose = 0), "hb_cv\\(\\) does not take them")
})

test_that("scale_pos_weight, is_unbalance and class_weights equal the matching row weights", {
  b <- gen_task(507, n = 700, task = "binary")
  pos <- b$y == levels(b$y)[2]
  b$y[which(pos)[1:150]] <- levels(b$y)[1]  # make the classes unequal
  pos <- b$y == levels(b$y)[2]
  args <- list(x = b$x, y = b$y, nrounds = 8L, seed = 1, valid = list(v = list(x = b$x, y = b$y)))
  with_w <- function(w, ...) do.call(hb_quiet, c(args, list(weights = w, ...)))
  spw <- do.call(hb_quiet, c(args, list(scale_pos_weight = 3)))
  ref <- with_w(ifelse(pos, 3, 1))
  expect_identical(predict(spw, b$x), predict(ref, b$x))
  expect_identical(spw$evaluation_log, ref$evaluation_log)  # validation metrics not reweighted
  expect_identical(spw$params$scale_pos_weight, 3)
  # with row weights: multiplied
  w0 <- runif(700, 0.5, 1.5)
  expect_identical(predict(do.call(hb_quiet, c(args, list(weights = w0, scale_pos_weight = 0.5))), b$x),
                   predict(with_w(w0 * ifelse(pos, 0.5, 1)), b$x))
  # is_unbalance: the rarer class weighs (other's rows) / (its rows), as LightGBM
  np <- sum(pos)
  nn <- sum(!pos)
  expect_lt(np, nn)
  unb <- do.call(hb_quiet, c(args, list(is_unbalance = TRUE)))
  expect_identical(predict(unb, b$x), predict(with_w(ifelse(pos, nn / np, 1)), b$x))
  unb_lgb <- do.call(hb_quiet, c(args, list(params = list(is_unbalance = TRUE))))
  expect_identical(predict(unb_lgb, b$x), predict(unb, b$x))
  # multiclass class_weights, by level name; unnamed classes weigh 1
  m <- gen_task(508, n = 600, task = "multiclass", K = 3)
  lv <- levels(m$y)
  cw <- stats::setNames(c(2, 0.5), lv[c(3, 1)])
  fcw <- hb_quiet(m$x, m$y, nrounds = 6L, seed = 1, class_weights = cw)
  wref <- c(0.5, 1, 2)[as.integer(m$y)]
  expect_identical(predict(fcw, m$x), predict(hb_quiet(m$x, m$y, nrounds = 6L, seed = 1, weights = wref), m$x))
  expect_identical(fcw$params$class_weights, cw[c(lv[3], lv[1])])
  fl <- hb_load(hb_save(fcw, tf <- tempfile()))
  unlink(tf)
  expect_equal(fl$params$class_weights, fcw$params$class_weights)
  # hb_cv: each fold's training rows reweighed
  set.seed(4)
  c1 <- hb_cv(b$x, b$y, nfold = 3L, nrounds = 4L, scale_pos_weight = 2, seed = 1, verbose = 0)
  set.seed(4)
  c2 <- hb_cv(b$x, b$y, nfold = 3L, nrounds = 4L, weights = ifelse(pos, 2, 1), seed = 1, verbose = 0)
  expect_identical(c1$pred, c2$pred)
  # errors
  d <- gen_task(509, n = 200, task = "regression")
  expect_input_error(hb_quiet(d$x, d$y, scale_pos_weight = 2), "binary classification")
  expect_input_error(hb_quiet(m$x, m$y, is_unbalance = TRUE), "for more, give `class_weights`")
  expect_input_error(hb_quiet(m$x, m$y, class_weights = c(nope = 2)), "`nope`, not a class")
  expect_input_error(hb_quiet(m$x, m$y, class_weights = c(2, 3)), "named by class")
  expect_input_error(hb_quiet(b$x, b$y, is_unbalance = TRUE, scale_pos_weight = 2), "use one of them")
  expect_input_error(hb_quiet(hb_dataset(b$x, b$y), scale_pos_weight = 2), "not an hb_dataset")
  expect_input_error(hb_quiet(b$x, b$y, scale_pos_weight = 0), "`scale_pos_weight` must be")
})

test_that("a metric function or a callback that fails is a classed error naming it, the cause kept", {
  b <- gen_task(631, n = 300, task = "binary")
  va <- list(v = list(x = b$x[1:100, ], y = b$y[1:100]))
  boom <- function(p, l) stop("metric boom")
  e <- tryCatch(hb_quiet(b$x, b$y, nrounds = 3L, valid = va, eval_metric = boom), error = identity)
  expect_s3_class(e, "histboost_error_input")
  expect_match(conditionMessage(e), "`eval_metric`, the metric function, failed .*100 rows.*metric boom")
  expect_identical(conditionMessage(e$parent), "metric boom")
  expect_error(hb_cv(b$x, b$y, nfold = 2L, nrounds = 2L, verbose = 0, eval_metric = boom),
               class = "histboost_error_input", regexp = "`eval_metric`.*metric boom")
  # after its first answer the message names it
  n <- 0L
  later <- function(p, l) {
    n <<- n + 1L
    if (n > 1L) stop("second call")
    list(name = "mine", value = 1, higher_better = FALSE)
  }
  expect_error(hb_quiet(b$x, b$y, nrounds = 3L, valid = va, eval_metric = later),
               class = "histboost_error_input", regexp = "metric function \"mine\", failed.*second call")
  cb <- list(function(iteration, evaluation_log, model) NULL,
             function(iteration, evaluation_log, model) if (iteration == 2L) stop("cb boom"))
  e <- tryCatch(hb_quiet(b$x, b$y, nrounds = 5L, callbacks = cb), error = identity)
  expect_s3_class(e, "histboost_error_input")
  expect_match(conditionMessage(e), "`callbacks`: function 2 failed after iteration 2: cb boom")
})

test_that("l2 (LightGBM's mean squared error, alias mse) is the weighted mean squared error, on the response scale", {
  d <- gen_task(511, n = 800, task = "regression")
  w <- runif(200, 0.5, 2)
  va <- list(v = list(x = d$x[601:800, ], y = d$y[601:800], weights = w))
  fit <- hb_quiet(d$x[1:600, ], d$y[1:600], nrounds = 12L, valid = va, eval_metric = c("l2", "rmse"),
                  early_stopping_rounds = 3L)
  expect_identical(names(fit$evaluation_log), c("iter", "v_l2", "v_rmse"))
  p <- predict(fit, d$x[601:800, ], iteration = 12L)
  expect_equal(fit$evaluation_log$v_l2[12], sum(w * (d$y[601:800] - p)^2) / sum(w), tolerance = 1e-12)
  expect_equal(fit$evaluation_log$v_l2, fit$evaluation_log$v_rmse^2, tolerance = 1e-12)
  # LightGBM's names in params, and poisson's l2 of the response exp(score)
  same <- hb_quiet(d$x[1:600, ], d$y[1:600], nrounds = 12L, valid = va, params = list(metric = "mse"))
  expect_identical(same$evaluation_log$v_l2, hb_quiet(d$x[1:600, ], d$y[1:600], nrounds = 12L, valid = va,
                                                      eval_metric = "l2")$evaluation_log$v_l2)
  yc <- rpois(800, exp(0.3 * d$x[[1]]))
  fp <- hb_quiet(d$x[1:600, ], yc[1:600], objective = "poisson", nrounds = 5L, eval_metric = "l2",
                 valid = list(v = list(x = d$x[601:800, ], y = yc[601:800])))
  expect_equal(fp$evaluation_log$v_l2[5], mean((yc[601:800] - predict(fp, d$x[601:800, ]))^2), tolerance = 1e-12)
  skip_if_not_installed("lightgbm")
  X <- as.matrix(d$x[vapply(d$x, is.numeric, NA)])
  rec <- list()
  lg <- lightgbm::lgb.train(list(objective = "regression", metric = "l2", num_threads = 1L, verbose = -1L),
                            lightgbm::lgb.Dataset(X[1:600, ], label = d$y[1:600]), nrounds = 5L,
                            valids = list(v = lightgbm::lgb.Dataset(X[601:800, ], label = d$y[601:800])))
  expect_equal(unlist(lg$record_evals$v$l2$eval)[5], mean((d$y[601:800] - predict(lg, X[601:800, ]))^2),
               tolerance = 1e-6)
})
