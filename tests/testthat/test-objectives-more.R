# Objectives multiclassova, cross_entropy, mape, fair and cox; metrics
# average_precision, cross_entropy, mape, fair and cox_nloglik; custom
# multiclass objectives. Each gradient and hessian against numeric
# derivatives of the loss written in plain R (Cox's loss also against
# survival::coxph), starting scores against plain R, whole models against
# lightgbm, metrics against plain R.

# the engine's gradients, hessians and starting scores: a test hook (tests
# that use it call skip_without_test_hooks())
objx_grad <- function(params, label, score, weight = NULL) {
  histboost:::.hb_hook_call("C_hb_objective_gradients", params, as.double(label), weight, as.double(score))
}
# central first and second differences of f at x, coordinate by coordinate
num_d1 <- function(f, x, h = 1e-5) vapply(seq_along(x), function(j) {
  a <- x; b <- x; a[j] <- a[j] + h; b[j] <- b[j] - h; (f(a) - f(b)) / (2 * h)
}, 0)
num_d2 <- function(f, x, h = 1e-4) vapply(seq_along(x), function(j) {
  a <- x; b <- x; a[j] <- a[j] + h; b[j] <- b[j] - h; (f(a) + f(b) - 2 * f(x)) / h^2
}, 0)
# plain-R weighted median as the package defines it: the smallest value whose
# cumulative weight reaches half the total
wmedian <- function(v, w) {
  o <- order(v); v <- v[o]; cw <- cumsum(w[o])
  v[which(cw >= sum(w) / 2)[1]]
}

test_that("cross_entropy, fair and mape gradients and hessians are the derivatives of their losses", {
  skip_without_test_hooks()
  set.seed(1)
  n <- 30
  w <- runif(n, 0.5, 2)
  s <- rnorm(n)
  # cross_entropy: labels in [0, 1]
  y <- runif(n)
  loss <- function(s) sum(w * -(y * log(plogis(s)) + (1 - y) * log(1 - plogis(s))))
  gh <- objx_grad(list(objective = 12L), y, s, w)
  expect_equal(as.vector(gh$grad), num_d1(loss, s), tolerance = 1e-7)
  expect_equal(as.vector(gh$hess), num_d2(loss, s), tolerance = 1e-5)
  # fair at c = 0.7
  y <- rnorm(n, sd = 2)
  cc <- 0.7
  loss <- function(s) sum(w * cc^2 * (abs(s - y) / cc - log1p(abs(s - y) / cc)))
  gh <- objx_grad(list(objective = 14L, fair_c = cc), y, s, w)
  expect_equal(as.vector(gh$grad), num_d1(loss, s), tolerance = 1e-7)
  expect_equal(as.vector(gh$hess), num_d2(loss, s), tolerance = 1e-5)
  # mape: |s - y| / max(1, |y|) away from its kink; its hessian is LightGBM's (the weight)
  y <- c(rnorm(n / 2, sd = 0.5), rnorm(n / 2, sd = 10))
  loss <- function(s) sum(w * abs(s - y) / pmax(1, abs(y)))
  gh <- objx_grad(list(objective = 13L), y, s, w)
  expect_equal(as.vector(gh$grad), num_d1(loss, s), tolerance = 1e-7)
  expect_equal(as.vector(gh$hess), w)
})

test_that("multiclassova's gradients are those of K logistic losses, one per class", {
  skip_without_test_hooks()
  set.seed(2)
  n <- 20; K <- 3
  y <- sample(0:2, n, TRUE)
  w <- runif(n, 0.5, 2)
  S <- matrix(rnorm(n * K), n, K)
  loss <- function(sv) {
    P <- plogis(matrix(sv, n, K))
    Y <- outer(y, 0:(K - 1), "==")
    sum(w * -(Y * log(P) + (1 - Y) * log(1 - P)))
  }
  gh <- objx_grad(list(objective = 11L, num_class = K), y, S, w)
  expect_equal(dim(gh$grad), c(n, K))
  expect_equal(as.vector(gh$grad), num_d1(loss, as.vector(S)), tolerance = 1e-7)
  expect_equal(as.vector(gh$hess), num_d2(loss, as.vector(S)), tolerance = 1e-5)
})

test_that("cox: the plain-R Breslow loss is coxph's, and the gradients and hessians are its derivatives", {
  skip_without_test_hooks()
  skip_if_not_installed("survival")
  set.seed(3)
  n <- 40
  tm <- round(rexp(n), 1) + 0.1  # rounded: tied times, events and censored among them
  st <- rbinom(n, 1, 0.7)
  w <- runif(n, 0.5, 2)
  eta <- rnorm(n)
  expect_gt(sum(duplicated(tm)), 5L)
  loss <- function(e) {
    -sum(w * st * (e - log(vapply(tm, function(ti) sum(w[tm >= ti] * exp(e[tm >= ti])), 0))))
  }
  for (wt in list(NULL, w)) {
    ww <- if (is.null(wt)) rep(1, n) else wt
    lossw <- function(e) {
      -sum(ww * st * (e - log(vapply(tm, function(ti) sum(ww[tm >= ti] * exp(e[tm >= ti])), 0))))
    }
    fit <- survival::coxph(survival::Surv(tm, st) ~ offset(eta), weights = ww, ties = "breslow")
    expect_equal(-lossw(eta), fit$loglik[1], tolerance = 1e-10)
    gh <- objx_grad(list(objective = 15L), ifelse(st == 1, tm, -tm), eta, wt)
    expect_equal(as.vector(gh$grad), num_d1(lossw, eta), tolerance = 1e-7)
    expect_equal(as.vector(gh$hess), num_d2(lossw, eta), tolerance = 1e-4)
    expect_identical(gh$init, 0)  # the partial likelihood ignores a common shift
  }
  # the same in any row order (ties included): the exact derivative, not a sweep's
  p <- sample(n)
  gp <- objx_grad(list(objective = 15L), ifelse(st == 1, tm, -tm)[p], eta[p], w[p])
  gh <- objx_grad(list(objective = 15L), ifelse(st == 1, tm, -tm), eta, w)
  expect_equal(as.vector(gp$grad), as.vector(gh$grad)[p], tolerance = 1e-12)
})

test_that("starting scores equal their plain-R definitions", {
  skip_without_test_hooks()
  set.seed(4)
  n <- 501
  w <- runif(n, 0.5, 2)
  y <- runif(n)
  expect_equal(objx_grad(list(objective = 12L), y, rep(0, n), w)$init, qlogis(sum(w * y) / sum(w)))
  y <- rnorm(n, 5, 3)
  expect_equal(objx_grad(list(objective = 14L), y, rep(0, n), w)$init, sum(w * y) / sum(w))
  expect_equal(objx_grad(list(objective = 13L), y, rep(0, n), w)$init, wmedian(y, w / pmax(1, abs(y))))
  yk <- sample(0:3, n, TRUE, prob = c(0.4, 0.3, 0.2, 0.1))
  pk <- vapply(0:3, function(k) sum(w[yk == k]) / sum(w), 0)
  expect_equal(objx_grad(list(objective = 11L, num_class = 4L), yk, rep(0, n * 4), w)$init, qlogis(pk))
  yb <- as.numeric(runif(n) < 0.3)  # binary, unweighted
  expect_equal(objx_grad(list(objective = 1L), yb, rep(0, n))$init, qlogis(mean(yb)))
})

test_that("a first tree's leaves are -G / H (cross_entropy, fair, multiclassova) or the weighted median (mape)", {
  skip_without_test_hooks()
  set.seed(5)
  n <- 2000
  x <- data.frame(a = runif(n), b = rnorm(n))
  w <- runif(n, 0.5, 2)
  cases <- list(cross_entropy = list(y = plogis(2 * x$a - 1 + rnorm(n)), code = 12L, p = list()),
                fair = list(y = x$a * 3 + rt(n, 2), code = 14L, p = list(fair_c = 0.5)),
                mape = list(y = exp(1 + x$a + rnorm(n, sd = 0.4)), code = 13L, p = list()))
  for (obj in names(cases)) {
    y <- cases[[obj]]$y
    fit <- do.call(hb_quiet, c(list(x, y, weights = w, objective = obj, nrounds = 1L, num_leaves = 6L,
                                    learning_rate = 0.3, seed = 1), cases[[obj]]$p))
    ref <- objx_grad(c(list(objective = cases[[obj]]$code), cases[[obj]]$p), y, rep(0, n), w)
    s0 <- ref$init
    leaf <- predict(fit, x, type = "leaf")[, 1]
    raw <- predict(fit, x, type = "raw")
    want <- if (obj == "mape") {
      0.3 * tapply(seq_len(n), leaf, function(i) wmedian(y[i] - s0, w[i] / pmax(1, abs(y[i]))))
    } else {
      gh <- objx_grad(c(list(objective = cases[[obj]]$code), cases[[obj]]$p), y, rep(s0, n), w)
      -0.3 * tapply(gh$grad, leaf, sum) / tapply(gh$hess, leaf, sum)
    }
    expect_gt(length(want), 2L)
    expect_equal(raw, as.vector(s0 + want[as.character(leaf)]), tolerance = 1e-9, label = paste(obj, "raw scores"))
    expect_equal(predict(fit, x), if (obj == "cross_entropy") plogis(raw) else raw, tolerance = 1e-12)
  }
  yk <- factor(sample(c("a", "b", "c"), n, TRUE))
  yk[x$b > 0.8] <- "c"
  fit <- hb_quiet(x, yk, weights = w, objective = "multiclassova", nrounds = 1L, num_leaves = 6L,
                  learning_rate = 0.3, seed = 1)
  expect_identical(fit$task, "multiclass")
  lab <- as.integer(yk) - 1
  s0 <- objx_grad(list(objective = 11L, num_class = 3L), lab, rep(0, n * 3), w)$init
  gh <- objx_grad(list(objective = 11L, num_class = 3L), lab, rep(s0, each = n), w)
  leaves <- predict(fit, x, type = "leaf")
  raw <- predict(fit, x, type = "raw")
  for (k in 1:3) {
    want <- -0.3 * tapply(gh$grad[, k], leaves[, k], sum) / tapply(gh$hess[, k], leaves[, k], sum)
    expect_equal(unname(raw[, k]), as.vector(s0[k] + want[as.character(leaves[, k])]), tolerance = 1e-9)
  }
  p <- predict(fit, x)
  expect_equal(unname(p), unname(plogis(raw)), tolerance = 1e-12)  # each class's sigmoid, as lightgbm
  expect_identical(colnames(p), c("a", "b", "c"))
  expect_identical(predict(fit, x, type = "class"), factor(c("a", "b", "c")[max.col(raw, "first")], c("a", "b", "c")))
})

test_that("mape, fair, cross_entropy and multiclassova models are close to lightgbm's", {
  skip_if_not_installed("lightgbm")
  set.seed(6)
  n <- 4000
  x <- data.frame(a = runif(n), b = rnorm(n), c = rnorm(n))
  X <- as.matrix(x)
  tr <- 1:3000; te <- 3001:4000
  mu <- exp(1 + x$a + 0.5 * x$b)
  cases <- list(
    mape = list(y = mu * exp(rnorm(n, sd = 0.3)), p = list(),
                loss = function(y, p) mean(abs(y - p) / pmax(1, abs(y)))),
    fair = list(y = 2 * x$a + x$b + rt(n, 2), p = list(fair_c = 0.7),
                loss = function(y, p) mean(0.49 * (abs(y - p) / 0.7 - log1p(abs(y - p) / 0.7)))),
    cross_entropy = list(y = plogis(2 * x$a - 1 + x$b + rnorm(n, sd = 0.3)), p = list(),
                         loss = function(y, p) -mean(y * log(p) + (1 - y) * log(1 - p))))
  for (obj in names(cases)) {
    y <- cases[[obj]]$y
    hb <- do.call(hb_quiet, c(list(x[tr, ], y[tr], objective = obj, nrounds = 30L, num_leaves = 15L, seed = 1),
                              cases[[obj]]$p))
    lg <- lightgbm::lgb.train(c(list(objective = obj, num_leaves = 15L, learning_rate = 0.1, verbose = -1L,
                                     num_threads = 2L, min_data_in_leaf = 20L), cases[[obj]]$p),
                              lightgbm::lgb.Dataset(X[tr, ], label = y[tr], params = list(verbose = -1L)),
                              nrounds = 30L)
    ph <- predict(hb, x[te, ])
    pl <- predict(lg, X[te, ])
    expect_gt(cor(ph, pl), 0.99)
    lh <- cases[[obj]]$loss(y[te], ph)
    ll <- cases[[obj]]$loss(y[te], pl)
    expect_lt(abs(lh - ll) / ll, 0.03, label = paste(obj, "test loss vs lightgbm's"))
  }
  yk <- factor(sample(c("a", "b", "c"), n, TRUE, prob = c(0.5, 0.3, 0.2)))
  yk[x$b > 1] <- "c"
  hb <- hb_quiet(x[tr, ], yk[tr], objective = "multiclassova", nrounds = 30L, num_leaves = 15L, seed = 1)
  lg <- lightgbm::lgb.train(list(objective = "multiclassova", num_class = 3L, num_leaves = 15L, verbose = -1L,
                                 num_threads = 2L),
                            lightgbm::lgb.Dataset(X[tr, ], label = as.integer(yk[tr]) - 1,
                                                  params = list(verbose = -1L)), nrounds = 30L)
  ph <- predict(hb, x[te, ])
  pl <- predict(lg, X[te, ])
  expect_equal(dim(pl), dim(ph))
  expect_lt(mean(abs(ph - pl)), 0.03)
})

test_that("cox: Surv as y and in a formula, risk = exp(score), cox_nloglik is the mean per event", {
  skip_if_not_installed("survival")
  set.seed(7)
  n <- 1500
  d <- data.frame(a = runif(n), b = rnorm(n))
  haz <- exp(1.5 * d$a - 0.8 * d$b)
  d$time <- round(rexp(n, haz), 2) + 0.01
  d$status <- rbinom(n, 1, 0.75)
  tr <- 1:1000; te <- 1001:1500
  y <- survival::Surv(d$time, d$status)
  f1 <- hb_quiet(d[tr, c("a", "b")], y[tr], nrounds = 20L, seed = 1, eval_metric = "cox_nloglik",
                 valid = list(te = list(x = d[te, c("a", "b")], y = y[te])))
  expect_identical(f1$params$objective, "cox")
  expect_identical(f1$task, "survival")
  f2 <- hb_quiet(survival::Surv(time, status) ~ a + b, data = d[tr, ], nrounds = 20L, seed = 1)
  expect_equal(predict(f2, d[te, ]), predict(f1, d[te, ]), tolerance = 1e-12)
  raw <- predict(f1, d[te, ], type = "raw")
  expect_equal(predict(f1, d[te, ]), exp(raw), tolerance = 1e-12)
  # the logged metric: coxph's log partial likelihood at the scores, per event, negated
  fit <- survival::coxph(survival::Surv(time, status) ~ offset(raw), data = cbind(d[te, ], raw = raw),
                         ties = "breslow")
  log_te <- f1$evaluation_log$te_cox_nloglik
  expect_equal(log_te[20], -fit$loglik[1] / sum(d$status[te]), tolerance = 1e-9)
  # it learns: the risk ranks the held-out rows better than chance (concordance)
  cc <- survival::concordance(survival::Surv(time, status) ~ I(-raw), data = cbind(d[te, ], raw = raw))
  expect_gt(cc$concordance, 0.7)
  # the model text keeps the objective: a reloaded model predicts the same
  path <- tempfile(fileext = ".txt")
  on.exit(unlink(path))
  hb_save(f1, path)
  f3 <- hb_load(path)
  expect_equal(predict(f3, d[te, c("a", "b")]), predict(f1, d[te, c("a", "b")]), tolerance = 0)
  expect_error(predict(f1, d[te, ], type = "class"), class = "histboost_error_input")
  # hb_dataset() takes Surv too
  ds <- hb_dataset(d[tr, c("a", "b")], y[tr])
  f4 <- hb_quiet(ds, nrounds = 20L, seed = 1)
  expect_equal(predict(f4, d[te, ]), predict(f1, d[te, ]), tolerance = 1e-12)
})

test_that("new metrics in the evaluation log equal plain R; average_precision stops early", {
  set.seed(8)
  n <- 1200
  x <- data.frame(a = runif(n), b = rnorm(n))
  w <- runif(n, 0.5, 2)
  tr <- 1:800; te <- 801:1200
  ap_ref <- function(y, s, w) {  # step-wise average precision, ties as one threshold
    o <- order(-s)
    y <- y[o]; s <- s[o]; w <- w[o]
    thr <- unique(s)
    tp <- vapply(thr, function(t) sum(w[s >= t & y == 1]), 0)
    pp <- vapply(thr, function(t) sum(w[s >= t]), 0)
    dp <- diff(c(0, tp))
    sum(dp * tp / pp) / sum(w[y == 1])
  }
  yb <- as.numeric(x$a + rnorm(n, sd = 0.3) > 0.7)
  fit <- hb_quiet(x[tr, ], yb[tr], objective = "binary", nrounds = 60L, learning_rate = 0.3,
                  eval_metric = c("average_precision", "logloss"), early_stopping_rounds = 5L, seed = 1,
                  valid = list(te = list(x = x[te, ], y = yb[te], weights = w[te])))
  s <- predict(fit, x[te, ], type = "raw", iteration = nrow(fit$evaluation_log))
  ap <- fit$evaluation_log$te_average_precision
  expect_equal(ap[length(ap)], ap_ref(yb[te], s, w[te]), tolerance = 1e-10)
  expect_identical(fit$best_iteration, which.max(ap))
  expect_lt(fit$best_iteration, 60L)
  yc <- plogis(2 * x$a - 1 + rnorm(n))
  yr <- exp(1 + x$a + rnorm(n, sd = 0.3))
  chk <- list(list(obj = "cross_entropy", y = yc, m = "cross_entropy",
                   f = function(y, s) -(y * log(plogis(s)) + (1 - y) * log(1 - plogis(s)))),
              list(obj = "mape", y = yr, m = "mape", f = function(y, s) abs(y - s) / pmax(1, abs(y))),
              list(obj = "fair", y = yr, m = "fair",
                   f = function(y, s) 0.25 * (abs(y - s) / 0.5 - log1p(abs(y - s) / 0.5))))
  for (k in chk) {
    fit <- hb_quiet(x[tr, ], k$y[tr], objective = k$obj, nrounds = 5L, fair_c = 0.5, seed = 1,
                    valid = list(te = list(x = x[te, ], y = k$y[te], weights = w[te])))
    s <- predict(fit, x[te, ], type = "raw")
    expect_equal(fit$evaluation_log[[paste0("te_", k$m)]][5], sum(w[te] * k$f(k$y[te], s)) / sum(w[te]),
                 tolerance = 1e-10, label = k$m)
  }
  # multi_logloss of a one-vs-all model takes each class's sigmoid (lightgbm's definition)
  yk <- factor(sample(c("a", "b", "c"), n, TRUE))
  fit <- hb_quiet(x[tr, ], yk[tr], objective = "multiclassova", nrounds = 5L, seed = 1,
                  valid = list(te = list(x = x[te, ], y = yk[te])))
  P <- predict(fit, x[te, ])
  expect_equal(fit$evaluation_log$te_multi_logloss[5], -mean(log(P[cbind(seq_along(te), as.integer(yk[te]))])),
               tolerance = 1e-10)
})

test_that("a custom multiclass objective that is softmax reproduces the built-in multiclass model", {
  set.seed(9)
  n <- 900
  x <- data.frame(a = runif(n), b = rnorm(n))
  yk <- factor(ifelse(x$a > 0.6, "hi", ifelse(x$b > 0, "mid", "lo")))
  flip <- sample(n, 150)
  yk[flip] <- sample(levels(yk), 150, TRUE)
  K <- 3
  softmax_obj <- function(preds, labels) {
    expect_true(is.matrix(preds))
    P <- exp(preds - apply(preds, 1, max))
    P <- P / rowSums(P)
    Y <- outer(labels, 0:(K - 1), "==")
    list(grad = P - Y, hess = K / (K - 1) * P * (1 - P))
  }
  prior <- as.vector(table(yk)) / n
  init <- matrix(log(prior), n, K, byrow = TRUE)
  builtin <- hb_quiet(x, yk, nrounds = 8L, num_leaves = 7L, seed = 1)
  custom <- hb_quiet(x, yk, objective = softmax_obj, init_score = init, nrounds = 8L, num_leaves = 7L, seed = 1)
  expect_identical(custom$task, "multiclass")
  expect_identical(custom$classes, levels(yk))
  rb <- predict(builtin, x, type = "raw")
  rc <- predict(custom, x, type = "raw", init_score = init)
  expect_equal(unname(rc), unname(rb), tolerance = 1e-9)
  expect_identical(predict(custom, x, type = "class", init_score = init), predict(builtin, x, type = "class"))
  # gradients as a vector of n * K values are taken too; a wrong shape is a clear error
  vec_obj <- function(preds, labels) lapply(softmax_obj(preds, labels), as.vector)
  custom2 <- hb_quiet(x, yk, objective = vec_obj, init_score = init, nrounds = 8L, num_leaves = 7L, seed = 1)
  expect_equal(predict(custom2, x, type = "raw"), predict(custom, x, type = "raw"), tolerance = 0)
  bad_obj <- function(preds, labels) list(grad = preds[, 1:2], hess = preds[, 1:2])
  expect_input_error(hb_quiet(x, yk, objective = bad_obj, nrounds = 2L), "`objective`.*rows x classes")
})

test_that("bad labels give classed errors naming the argument", {
  set.seed(10)
  x <- data.frame(a = runif(50), b = rnorm(50))
  expect_input_error(hb_quiet(x, c(runif(49), 1.5), objective = "cross_entropy"), "`y\\[50\\]` is 1.5")
  expect_input_error(hb_quiet(x, factor(rep(c("u", "v"), 25)), objective = "cross_entropy"), "numeric `y`")
  expect_input_error(hb_quiet(x, rnorm(50), objective = "cox"), "survival response.*Surv")
  expect_input_error(hb_quiet(x, factor(rep(c("u", "v"), 25)), objective = "multiclassova"), "three or more")
  expect_input_error(hb_quiet(x, rnorm(50), fair_c = 0, objective = "fair"), "`fair_c`")
  skip_if_not_installed("survival")
  t1 <- runif(50)
  expect_input_error(hb_quiet(x, survival::Surv(t1, t1 + 1, rep(1, 50))), "`y`.*counting.*right-censored")
  expect_input_error(hb_quiet(x, survival::Surv(t1, rep(1, 50)), objective = "regression"), "only `objective` = \"cox\"")
  expect_input_error(hb_quiet(x, survival::Surv(c(0, t1[-1]), rep(1, 50))), "`y` needs survival times > 0")
  expect_input_error(hb_quiet(x, survival::Surv(c(NA, t1[-1]), rep(1, 50))), "`y` contains 1 missing")
  # the user's objects are left as they were
  y <- survival::Surv(t1, rep(c(0, 1), 25))
  y0 <- deep_copy(y)
  hb_quiet(x, y, nrounds = 2L, min_data_in_leaf = 5L)
  expect_identical(y, y0)
})
