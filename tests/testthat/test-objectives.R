# The regression family beyond squared error: Poisson, gamma, Tweedie (log
# link) and Huber. A first tree's leaf values are checked against -G / H of
# the gradients written out in plain R (so each loss's gradient and hessian,
# and its starting score, are checked on their own), the logged metrics
# against their formulas in plain R, whole trainings against lightgbm, and
# the errors and the model text.

obj_data <- function(seed, n = 3000) {
  set.seed(seed)
  x <- data.frame(a = runif(n), b = rnorm(n), c = factor(sample(letters[1:4], n, TRUE)))
  mu <- exp(0.3 + 1.2 * x$a - 0.4 * x$b + (x$c == "b") * 0.5)
  list(x = x, mu = mu, w = runif(n, 0.5, 2),
       y = list(poisson = rpois(n, mu), gamma = rgamma(n, shape = 2, rate = 2 / mu),
                tweedie = rpois(n, mu) * rgamma(n, shape = 3, rate = 3) * (runif(n) < 0.8),
                huber = log(mu) + rt(n, df = 2)))
}

# Gradient and hessian of each loss at raw scores s, in plain R.
ref_grad <- function(obj, y, s, p = 1.5, delta = 1, step = 0.7) {
  switch(obj,
    poisson = list(g = exp(s) - y, h = exp(s + step)),
    gamma = list(g = 1 - y * exp(-s), h = y * exp(-s)),
    tweedie = list(g = -y * exp((1 - p) * s) + exp((2 - p) * s),
                   h = -(1 - p) * y * exp((1 - p) * s) + (2 - p) * exp((2 - p) * s)),
    huber = list(g = pmax(pmin(s - y, delta), -delta), h = rep(1, length(y))))
}

test_that("a first tree's leaves are -G / H of each loss's gradients, from its starting score", {
  d <- obj_data(51)
  pars <- list(poisson = list(poisson_max_delta_step = 0.4), gamma = list(),
               tweedie = list(tweedie_variance_power = 1.35), huber = list(huber_delta = 0.6))
  for (obj in names(pars)) {
    y <- d$y[[obj]]
    fit <- do.call(hb_quiet, c(list(d$x, y, weights = d$w, objective = obj, nrounds = 1L, num_leaves = 6L,
                                    learning_rate = 0.3, min_data_in_leaf = 30L, seed = 1), pars[[obj]]))
    expect_identical(fit$params$objective, obj)
    expect_identical(fit$task, "regression")
    wm <- sum(d$w * y) / sum(d$w)
    s0 <- if (obj == "huber") wm else log(wm)
    q <- pars[[obj]]
    or <- function(v, default) if (is.null(v)) default else v
    gh <- ref_grad(obj, y, rep(s0, length(y)), p = or(q$tweedie_variance_power, 1.5),
                   delta = or(q$huber_delta, 1), step = or(q$poisson_max_delta_step, 0.7))
    leaf <- predict(fit, d$x, type = "leaf")[, 1]
    # a leaf of a many-vs-many categorical split takes cat_l2 as well (LightGBM's rule)
    l2 <- leaf_extra_l2(fit)
    hs <- tapply(d$w * gh$h, leaf, sum)
    want <- tapply(d$w * gh$g, leaf, sum) / (hs + l2[paste0("L", names(hs))]) * -0.3
    tab <- hb_trees(fit)
    got <- tab$value[tab$is_leaf][match(paste0("L", names(want)), tab$id[tab$is_leaf])]
    expect_gt(length(want), 2L)
    expect_equal(unname(got), unname(as.vector(want)), tolerance = 1e-9, label = paste(obj, "leaf values"))
    raw <- predict(fit, d$x, type = "raw")
    expect_equal(raw, s0 + unname(got[match(leaf, as.integer(names(want)))]), tolerance = 1e-9)
    resp <- predict(fit, d$x)
    expect_equal(resp, if (obj == "huber") raw else exp(raw), tolerance = 1e-12, label = paste(obj, "response"))
  }
})

test_that("logged metrics equal their formulas in plain R on the raw scores", {
  d <- obj_data(52)
  tr <- 1:2000
  te <- 2001:3000
  for (obj in c("poisson", "gamma", "tweedie", "huber")) {
    y <- d$y[[obj]]
    metrics <- c(obj, "rmse", "mae")
    fit <- hb_quiet(d$x[tr, ], y[tr], objective = obj, nrounds = 12L, eval_metric = metrics, seed = 2,
                    tweedie_variance_power = 1.4, huber_delta = 0.8,
                    valid = list(te = list(x = d$x[te, ], y = y[te], weights = d$w[te])))
    s <- predict(fit, d$x[te, ], type = "raw")
    mu <- if (obj == "huber") s else exp(s)
    yt <- y[te]
    w <- d$w[te]
    wmean <- function(v) sum(w * v) / sum(w)
    r <- abs(s - yt)
    loss <- switch(obj,
      poisson = exp(s) - yt * s,
      gamma = yt * exp(-s) + s,
      tweedie = -yt * exp(-0.4 * s) / -0.4 + exp(0.6 * s) / 0.6,
      huber = ifelse(r <= 0.8, 0.5 * r^2, 0.8 * (r - 0.4)))
    last <- fit$evaluation_log[12, ]
    expect_equal(last[[paste0("te_", obj)]], wmean(loss), tolerance = 1e-10, label = obj)
    expect_equal(last$te_rmse, sqrt(wmean((mu - yt)^2)), tolerance = 1e-10, label = paste(obj, "rmse"))
    expect_equal(last$te_mae, wmean(abs(mu - yt)), tolerance = 1e-10, label = paste(obj, "mae"))
    # each round's loss falls on the training rows' own metric at the start
    expect_lt(fit$evaluation_log[[paste0("te_", obj)]][12], fit$evaluation_log[[paste0("te_", obj)]][1])
  }
})

test_that("lightgbm with the same parameters reaches the same test loss", {
  skip_if_not_installed("lightgbm")
  d <- obj_data(53, n = 6000)
  tr <- 1:4500
  te <- 4501:6000
  X <- as.matrix(data.frame(a = d$x$a, b = d$x$b, c = as.integer(d$x$c) - 1L))
  for (obj in c("poisson", "gamma", "tweedie", "huber")) {
    y <- d$y[[obj]]
    p <- list(num_leaves = 15L, learning_rate = 0.1, min_data_in_leaf = 20L, max_bin = 63L, lambda_l2 = 1,
              min_sum_hessian_in_leaf = 1e-3)
    lgb <- lightgbm::lgb.train(
      params = c(p, list(objective = obj, num_threads = 2L, verbose = -1L, seed = 1L, alpha = 0.9,
                         tweedie_variance_power = 1.5, poisson_max_delta_step = 0.7,
                         cat_smooth = 10, cat_l2 = 10, max_cat_threshold = 32L, min_data_per_group = 100L)),
      data = lightgbm::lgb.Dataset(X[tr, ], label = y[tr], categorical_feature = "c",
                                   params = list(max_bin = 63L)), nrounds = 60L)
    fit <- do.call(hb_quiet, c(list(d$x[tr, ], y[tr], objective = obj, nrounds = 60L, seed = 1, huber_delta = 0.9),
                               p))
    s_l <- predict(lgb, X[te, ], type = "raw")
    s_h <- predict(fit, d$x[te, ], type = "raw")
    yt <- y[te]
    loss <- function(s) {
      r <- abs(s - yt)
      mean(switch(obj, poisson = exp(s) - yt * s, gamma = yt * exp(-s) + s,
                  tweedie = yt * exp(-0.5 * s) / 0.5 + exp(0.5 * s) / 0.5,
                  huber = ifelse(r <= 0.9, 0.5 * r^2, 0.9 * (r - 0.45))))
    }
    expect_lt(abs(loss(s_h) - loss(s_l)), 0.01 * abs(loss(s_l)) + 1e-3, label = paste(obj, "test loss vs lightgbm"))
    expect_gt(cor(s_h, s_l), 0.97, label = paste(obj, "score correlation with lightgbm"))
  }
})

test_that("objectives check their labels, parameters and metrics, and survive a save", {
  d <- obj_data(54, n = 400)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  yneg <- d$y$poisson
  yneg[7] <- -1
  err(hb_quiet(d$x, yneg, objective = "poisson"), "needs `y` >= 0, but `y\\[7\\]` is -1")
  err(hb_quiet(d$x, replace(d$y$gamma, 3, 0), objective = "gamma"), "needs `y` > 0, but `y\\[3\\]` is 0")
  err(hb_quiet(d$x, factor(d$y$poisson > 2), objective = "poisson"), "needs a numeric `y`")
  err(hb_quiet(d$x, d$y$tweedie, objective = "tweedie", tweedie_variance_power = 2), "`tweedie_variance_power`")
  err(hb_quiet(d$x, d$y$huber, objective = "huber", huber_delta = 0), "`huber_delta`")
  err(hb_quiet(d$x, d$y$poisson, objective = "poisson", poisson_max_delta_step = -1), "`poisson_max_delta_step`")
  err(hb_quiet(d$x, d$y$poisson, objective = "poisson", eval_metric = "auc",
               valid = list(v = list(x = d$x, y = d$y$poisson))), "does not suit the poisson objective")
  err(hb_quiet(d$x, d$y$poisson, objective = "poison"), "`objective`")
  # an hb_dataset's labels are checked by the engine, still a classed error
  err(hb_quiet(hb_dataset(d$x, yneg), objective = "poisson"), "poisson labels must be >= 0")
  fit <- hb_quiet(d$x, d$y$tweedie, objective = "tweedie", tweedie_variance_power = 1.25, nrounds = 5L)
  f <- tempfile()
  on.exit(unlink(f))
  hb_save(fit, f)
  back <- hb_load(f)
  expect_identical(back$params$tweedie_variance_power, 1.25)
  expect_identical(back$params$objective, "tweedie")
  expect_identical(predict(back, d$x), predict(fit, d$x))
  # the loss's parameters are written only for their objective: other models' text is as before
  expect_true(grepl("\ntweedie_variance_power=", fit$model_text, fixed = TRUE))
  plain <- hb_quiet(d$x, d$y$huber, nrounds = 2L)
  expect_false(grepl("tweedie_variance_power|huber_delta|poisson_max_delta_step", plain$model_text))
  # ... unless changed: a huber metric on a squared-error model keeps its delta through a save
  hm <- hb_quiet(d$x, d$y$huber, nrounds = 2L, huber_delta = 0.1, eval_metric = "huber",
                 valid = list(v = list(x = d$x, y = d$y$huber)))
  expect_identical(hb_load({g <- tempfile(); hb_save(hm, g); g})$params$huber_delta, 0.1)
  # validation labels are held to the objective's range too
  expect_error(hb_quiet(d$x, d$y$poisson, objective = "poisson", valid = list(v = list(x = d$x, y = -d$y$poisson - 1))),
               class = "histboost_error_input", regexp = "poisson labels must be >= 0")
  # cross-validation takes them through
  set.seed(1)
  cv <- hb_cv(d$x, d$y$poisson, objective = "poisson", nfold = 3L, nrounds = 5L, verbose = 0L)
  expect_identical(names(cv$evaluation_log)[2], "test_poisson_mean")
  expect_true(all(cv$pred > 0))
})


test_that("l1 and quantile leaves are the quantiles of their rows' residuals", {
  d <- obj_data(55)
  y <- d$y$huber
  expect_equal(ref_wquantile(c(5, 1, 4, 2, 3, 6), rep(1, 6), 0.5), median(1:6))
  v <- c(5, 1, 4, 2, 3, 6, 9)
  for (a in c(0.1, 0.5, 0.8, 3 / 7)) expect_equal(ref_wquantile(v, rep(1, 7), a), quantile(v, a, type = 2)[[1]])
  for (case in list(list(obj = "l1", a = 0.5, w = NULL), list(obj = "quantile", a = 0.8, w = NULL),
                    list(obj = "quantile", a = 0.25, w = d$w))) {
    w <- if (is.null(case$w)) rep(1, length(y)) else case$w
    fit <- hb_quiet(d$x, y, weights = case$w, objective = case$obj, quantile_alpha = case$a, nrounds = 2L,
                    num_leaves = 5L, learning_rate = 0.4, min_data_in_leaf = 40L, seed = 1)
    s0 <- ref_wquantile(y, w, case$a)
    # round 1 from the starting score; round 2 from the scores after it
    leaves <- predict(fit, d$x, type = "leaf")
    tab <- hb_trees(fit)
    s <- rep(s0, length(y))
    for (t in 1:2) {
      lt <- tab[tab$tree == t & tab$is_leaf, ]
      want <- vapply(split(seq_along(y), leaves[, t]), function(r) 0.4 * ref_wquantile(y[r] - s[r], w[r], case$a), 0)
      got <- lt$value[match(paste0("L", names(want)), lt$id)]
      expect_equal(got, unname(want), tolerance = 1e-12, label = paste(case$obj, case$a, "tree", t))
      s <- s + lt$value[match(paste0("L", leaves[, t]), lt$id)]
    }
    expect_equal(predict(fit, d$x), s, tolerance = 1e-12)
  }
})

test_that("the quantile objective's pinball metric, coverage, and lightgbm's l1 and quantile", {
  d <- obj_data(56, n = 6000)
  y <- d$y$huber
  tr <- 1:4500
  te <- 4501:6000
  fit <- hb_quiet(d$x[tr, ], y[tr], objective = "quantile", quantile_alpha = 0.9, nrounds = 150L,
                  eval_metric = c("quantile", "mae"), seed = 3,
                  valid = list(te = list(x = d$x[te, ], y = y[te])))
  s <- predict(fit, d$x[te, ])
  r <- y[te] - s
  expect_equal(fit$evaluation_log$te_quantile[150], mean(ifelse(r >= 0, 0.9 * r, -0.1 * r)), tolerance = 1e-10)
  expect_equal(fit$evaluation_log$te_mae[150], mean(abs(r)), tolerance = 1e-10)
  expect_lt(abs(mean(y[te] <= s) - 0.9), 0.05)  # it predicts the 90th percentile (of held-out rows)
  skip_if_not_installed("lightgbm")
  X <- as.matrix(data.frame(a = d$x$a, b = d$x$b, c = as.integer(d$x$c) - 1L))
  for (case in list(list(obj = "l1", a = 0.5), list(obj = "quantile", a = 0.9))) {
    p <- list(num_leaves = 15L, learning_rate = 0.1, min_data_in_leaf = 20L, max_bin = 63L)
    lgb <- lightgbm::lgb.train(
      params = c(p, list(objective = case$obj, alpha = case$a, num_threads = 2L, verbose = -1L, seed = 1L,
                         lambda_l2 = 0, cat_smooth = 10, cat_l2 = 10, min_data_per_group = 100L)),
      data = lightgbm::lgb.Dataset(X[tr, ], label = y[tr], categorical_feature = "c",
                                   params = list(max_bin = 63L)), nrounds = 100L)
    fit <- do.call(hb_quiet, c(list(d$x[tr, ], y[tr], objective = case$obj, quantile_alpha = case$a,
                                    nrounds = 100L, seed = 1), p))
    pin <- function(s) {
      r <- y[te] - s
      mean(ifelse(r >= 0, case$a * r, (case$a - 1) * r))
    }
    l_h <- pin(predict(fit, d$x[te, ]))
    l_l <- pin(predict(lgb, X[te, ]))
    expect_lt(abs(l_h - l_l), 0.02 * l_l, label = paste(case$obj, "pinball loss vs lightgbm"))
  }
})

test_that("l1 and quantile check their parameters and keep alpha in the model", {
  d <- obj_data(57, n = 300)
  expect_error(hb_quiet(d$x, d$y$huber, objective = "quantile", quantile_alpha = 1), class = "histboost_error_input",
               regexp = "`quantile_alpha`")
  expect_error(hb_quiet(d$x, d$y$huber, objective = "quantile", eval_metric = "huber",
                        valid = list(v = list(x = d$x, y = d$y$huber))),
               class = "histboost_error_input", regexp = "does not suit the quantile objective")
  fit <- hb_quiet(d$x, d$y$huber, objective = "quantile", quantile_alpha = 0.3, nrounds = 3L)
  back <- unserialize(serialize(fit, NULL))
  expect_identical(back$params$quantile_alpha, 0.3)
  expect_identical(predict(hb_load({f <- tempfile(); hb_save(fit, f); f}), d$x), predict(fit, d$x))
  expect_true(grepl("\nquantile_alpha=", fit$model_text, fixed = TRUE))
})

test_that("a tree that cannot split adds nothing when its root breaks min_sum_hessian_in_leaf (a rare class's trees)", {
  # A rare class's hessian sum, 1.5 sum p (1 - p) ~ 1.5 x 30 x 0.97 ~ 44, is
  # below min_sum_hessian_in_leaf = 50: its root is no leaf the limits allow,
  # so its trees (which cannot split either) add nothing, as LightGBM's
  # unsplit trees do; the other classes' trees (~375) split. Before, such a
  # root added -G / H, which divides by almost nothing once the class's
  # probabilities have gone to 0 (a multiclass model's raw scores reached
  # 6.5e11 that way).
  d <- rare_class_data()
  x <- d$x
  y <- d$y
  n <- nrow(x)
  fit <- hb_quiet(x, y, nrounds = 10L, num_leaves = 4L, min_sum_hessian_in_leaf = 50, min_data_in_leaf = 5L,
                  seed = 1)
  tr <- hb_trees(fit)
  k <- match("rare", levels(y))
  rare <- seq(k, max(tr$tree), by = 3L)
  expect_length(rare, 10L)
  rt <- tr[tr$tree %in% rare, ]
  expect_true(all(rt$is_leaf) && all(rt$hessian < 50))
  expect_identical(rt$value, rep(0, 10L))
  expect_true(all(tapply(!tr$is_leaf, tr$tree, any)[-rare]))
  # so the rare class's raw score stays its starting score, the log of its
  # share of the rows (plain R), on every row
  raw <- predict(fit, x, type = "raw")
  expect_equal(unname(raw[, k]), rep(log(30 / n), n), tolerance = TOL$exact)
  # refitting on the same rows keeps them at 0 (the rule holds in hb_refit too)
  r <- hb_refit(fit, x, y, nthreads = 1L)
  rr <- hb_trees(r)
  expect_identical(rr$value[rr$tree %in% rare], rep(0, 10L))
  # a root the limits allow still adds its output: with the limit lowered,
  # the same trees add -G / H x the learning rate
  fit2 <- hb_quiet(x, y, nrounds = 10L, num_leaves = 4L, min_sum_hessian_in_leaf = 40, min_data_in_leaf = 5L,
                   seed = 1)
  tr2 <- hb_trees(fit2)
  lone <- tr2[tr2$tree %in% rare & tr2$is_leaf & !(tr2$tree %in% tr2$tree[!tr2$is_leaf]), ]
  expect_true(any(lone$hessian >= 40 & lone$value != 0))
})
