# hb_refit(): leaf values re-estimated on new data with the trees' structure
# kept, against the refit written out in plain R (gradients at the running
# score, -G / (H + lambda_l2) per leaf times the learning rate, mixed with
# the old value by decay_rate), and against the model's own leaves when it
# is refitted on its training data.

# Refit in plain R: leaves from predict(type = "leaf") (where each row
# falls), the leaf values of hb_trees(); grad(score, y) returns list(g, h)
# for one score a row. Returns the refitted leaf values, tree by tree.
ref_refit <- function(model, x, y, grad, init, decay, l1, l2, w = rep(1, length(y)), extra_l2 = NULL) {
  lf <- predict(model, x, type = "leaf", iteration = model$niter)
  tab <- hb_trees(model)
  lr <- model$params$learning_rate
  score <- rep(init, length(y))
  out <- list()
  for (t in seq_len(ncol(lf))) {
    gh <- grad(score, y)
    tt <- tab[tab$tree == t & tab$is_leaf, ]
    L <- nrow(tt)
    leaf <- lf[, t] + 1L
    G <- vapply(seq_len(L), function(l) sum((w * gh$g)[leaf == l]), 0)
    H <- vapply(seq_len(L), function(l) sum((w * gh$h)[leaf == l]), 0)
    n <- tabulate(leaf, L)
    l2t <- l2 + if (is.null(extra_l2)) 0 else extra_l2[[t]][paste0("L", seq_len(L) - 1L)]
    new <- ifelse(n > 0, lr * ref_leaf_output(G, H, l1, l2t), 0)
    old <- tt$value[match(paste0("L", seq_len(L) - 1L), tt$id)]
    out[[t]] <- decay * old + (1 - decay) * new
    score <- score + out[[t]][leaf]
  }
  out
}

leaf_values <- function(model) {
  tab <- hb_trees(model)
  lapply(split(tab[tab$is_leaf, ], tab$tree[tab$is_leaf]), function(t) t$value[order(as.integer(substring(t$id, 2)))])
}

structure_of <- function(model) {
  hb_trees(model)[c("tree", "id", "is_leaf", "depth", "feature", "split_type", "threshold", "categories",
                    "default_left", "left", "right")]
}

test_that("regression refit on new data equals the plain-R refit; the structure is kept", {
  d <- gen_mixed(51, n = 600, nnum = 3, ncat = 1, na = 0.1, cat_na = 0.05)
  tr <- 1:300
  fit <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 8L, num_leaves = 6L, min_data_in_leaf = 10L, lambda_l2 = 2,
                  min_data_per_group = 5L, cat_smooth = 1, seed = 1)
  new <- 301:600
  y2 <- d$y[new] + 0.7 * ((d$x$num1[new] > 0) %in% TRUE)
  before <- deep_copy(fit)
  r <- hb_refit(fit, d$x[new, ], y2, decay_rate = 0.3, lambda_l1 = 0.5, lambda_l2 = 3)
  # the model given is not changed (its pointer cache aside)
  expect_identical(fit[names(fit) != ".ptr"], before[names(before) != ".ptr"])
  expect_identical(hb_trees(fit), hb_trees(before))
  expect_identical(structure_of(r), structure_of(fit))
  mse <- function(s, y) list(g = s - y, h = rep(1, length(y)))
  extra <- lapply(seq_len(8L), function(k) leaf_extra_l2(fit, k))
  ref <- ref_refit(fit, d$x[new, ], y2, mse, init = mean(d$y[tr]), decay = 0.3, l1 = 0.5, l2 = 3,
                   extra_l2 = extra)
  expect_equal(unname(leaf_values(r)), ref, tolerance = TOL$split)
  # row counts are the new data's (contributions weigh by them)
  lf <- predict(fit, d$x[new, ], type = "leaf")
  tab <- hb_trees(r)
  for (t in 1:8) {
    tt <- tab[tab$tree == t & tab$is_leaf, ]
    expect_identical(tt$count[order(as.integer(substring(tt$id, 2)))], tabulate(lf[, t] + 1L, nrow(tt)))
  }
  ph <- predict(r, d$x[new[1:20], ], type = "contrib")
  expect_equal(rowSums(ph), predict(r, d$x[new[1:20], ], type = "raw"), tolerance = TOL$exact)
  # predictions follow the refitted leaves
  raw <- mean(d$y[tr]) + Reduce(`+`, lapply(1:8, function(t) ref[[t]][lf[, t] + 1L]))
  expect_equal(predict(r, d$x[new, ]), raw, tolerance = TOL$split)
})

test_that("binary refit with weights equals the plain-R refit (log-loss gradients at the running score)", {
  b <- gen_task(52, n = 1200, p = 6, task = "binary", na = 0.05)
  tr <- 1:600
  fit <- hb_quiet(b$x[tr, ], b$y[tr], nrounds = 10L, num_leaves = 8L, seed = 2)
  new <- 601:1200
  w <- seq(0.5, 2, length.out = 600)
  r <- hb_refit(fit, b$x[new, ], b$y[new], weights = w, decay_rate = 0)
  expect_identical(structure_of(r), structure_of(fit))
  y01 <- as.numeric(b$y == "yes")
  ll <- function(s, y) {
    p <- sigmoid(s)
    list(g = p - y, h = p * (1 - p))
  }
  ref <- ref_refit(fit, b$x[new, ], y01[new], ll, init = qlogis(mean(y01[tr])), decay = 0, l1 = 0, l2 = 0, w = w)
  expect_equal(unname(leaf_values(r)), ref, tolerance = TOL$split)
})

test_that("refitting on the training data with decay 0 gives the model's own leaf values", {
  d <- gen_mixed(53, n = 500, nnum = 3, ncat = 1, na = 0.1)
  fit <- hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 7L, min_data_in_leaf = 10L, lambda_l2 = 1,
                  min_data_per_group = 5L, cat_smooth = 1, seed = 3)
  expect_true("categorical" %in% hb_trees(fit)$split_type)
  r <- hb_refit(fit, d$x, d$y, decay_rate = 0)
  expect_equal(hb_trees(r)$value, hb_trees(fit)$value, tolerance = TOL$exact)  # internal nodes too
  expect_identical(hb_trees(r)$count, hb_trees(fit)$count)
  m <- gen_task(54, n = 900, p = 6, task = "multiclass", K = 3, factors = 1)
  fm <- hb_quiet(m$x, m$y, nrounds = 5L, num_leaves = 7L, seed = 4)
  expect_equal(hb_trees(hb_refit(fm, m$x, m$y, decay_rate = 0))$value, hb_trees(fm)$value, tolerance = TOL$exact)
  b <- gen_task(55, n = 800, p = 6, task = "binary")
  fb <- hb_quiet(b$x, b$y, nrounds = 5L, num_leaves = 7L, scale_pos_weight = 3, seed = 5)
  expect_equal(hb_trees(hb_refit(fb, b$x, b$y, decay_rate = 0))$value, hb_trees(fb)$value, tolerance = TOL$exact)
  # quantile: the leaves are the residuals' quantiles, as in training
  fq <- hb_quiet(d$x, d$y, nrounds = 4L, num_leaves = 5L, objective = "quantile", quantile_alpha = 0.3,
                 min_data_in_leaf = 10L, seed = 6)
  expect_equal(hb_trees(hb_refit(fq, d$x, d$y, decay_rate = 0))$value[hb_trees(fq)$is_leaf],
               hb_trees(fq)$value[hb_trees(fq)$is_leaf], tolerance = TOL$exact)
  # decay 1 keeps every value
  expect_identical(hb_trees(hb_refit(fit, d$x[1:50, ], d$y[1:50] + 5, decay_rate = 1))$value[hb_trees(fit)$is_leaf],
                   hb_trees(fit)$value[hb_trees(fit)$is_leaf])
})

test_that("a quantile refit on new data takes the weighted quantile of each leaf's residuals", {
  g <- gen_task(56, n = 800, p = 6, task = "regression")
  fit <- hb_quiet(g$x[1:400, ], g$y[1:400], nrounds = 3L, num_leaves = 5L, objective = "quantile",
                  quantile_alpha = 0.7, seed = 7)
  x2 <- g$x[401:800, ]
  y2 <- g$y[401:800] * 1.5
  w <- rep(c(1, 2), 200)
  r <- hb_refit(fit, x2, y2, weights = w, decay_rate = 0)
  lf <- predict(fit, x2, type = "leaf")
  got <- leaf_values(r)
  # the model's starting score: the raw score less the trees' leaf values
  score <- predict(fit, x2, type = "raw") - Reduce(`+`, lapply(1:3, function(t) leaf_values(fit)[[t]][lf[, t] + 1L]))
  for (t in 1:3) {
    L <- length(got[[t]])
    want <- vapply(seq_len(L) - 1L, function(l) {
      i <- lf[, t] == l
      if (!any(i)) return(0)
      fit$params$learning_rate * ref_wquantile(y2[i] - score[i], w[i], 0.7)
    }, 0)
    expect_equal(got[[t]], want, tolerance = TOL$exact)
    score <- score + got[[t]][lf[, t] + 1L]
  }
})

test_that("hb_refit refuses bad input by name", {
  g <- gen_task(57, n = 300, p = 6, task = "regression")
  fit <- hb_quiet(g$x, g$y, nrounds = 3L, seed = 1)
  expect_input_error(hb_refit(fit, g$x), "`y`")
  expect_input_error(hb_refit(fit, y = g$y), "`x`")
  expect_input_error(hb_refit(fit, g$x, g$y, decay_rate = 1.5), "`decay_rate`")
  expect_input_error(hb_refit(fit, g$x, g$y, decay = 0), "decay_rate")
  expect_input_error(hb_refit(fit, g$x, g$y[1:10]), "`y`")
  expect_input_error(hb_refit(fit, g$x, g$y, weights = -g$y), "`weights`")
  expect_input_error(hb_refit(fit, g$x, g$y, lambda_l2 = -1), "`lambda_l2`")
  expect_input_error(hb_refit(fit, g$x[, 1:3], g$y), "x")
  expect_input_error(hb_refit(list(), g$x, g$y), "`model`")
  b <- gen_task(58, n = 300, p = 6, task = "binary")
  fb <- hb_quiet(b$x, b$y, nrounds = 2L, seed = 1)
  expect_input_error(hb_refit(fb, b$x, factor(rep("maybe", 300))), "`y`")
  expect_input_error(hb_refit(fb, b$x, as.numeric(b$y)), "`y`")
  yr <- rpois(300, 2)
  fr <- hb_quiet(g$x, yr, nrounds = 2L, objective = "lambdarank", group = rep(1:10, each = 30L), seed = 1)
  expect_input_error(hb_refit(fr, g$x, yr), "`model`")
})

test_that("refitting on the training rows with decay 0 gives back the model for the newer objectives", {
  # training (boost.c) and hb_refit (refit.c) compute the leaves apart: Cox's
  # risk sets in time order, mape's weighted median, the logistic ones
  set.seed(71)
  n <- 500
  x <- data.frame(a = rnorm(n), b = runif(n), g = factor(sample(letters[1:6], n, TRUE)))
  cases <- list(
    mape = list(y = exp(x$a) * 10 + rnorm(n), obj = "mape"),
    fair = list(y = 3 * x$a + rnorm(n), obj = "fair"),
    cross_entropy = list(y = plogis(2 * x$a + rnorm(n, sd = 0.3)), obj = "cross_entropy"),
    multiclassova = list(y = factor(cut(x$a + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi"))),
                         obj = "multiclassova"))
  if (requireNamespace("survival", quietly = TRUE)) {
    cases$cox <- list(y = survival::Surv(rexp(n, exp(0.8 * x$a)), rbinom(n, 1, 0.7)), obj = "cox")
  }
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    fit <- histboost(x, cs$y, objective = cs$obj, nrounds = 6, num_leaves = 7, min_data_in_leaf = 10, verbose = 0)
    again <- hb_refit(fit, x, cs$y, decay_rate = 0)
    expect_equal(predict(again, x, type = "raw"), predict(fit, x, type = "raw"), tolerance = 1e-10, label = nm)
  }
})

test_that("models whose leaf values DART, path_smooth or max_delta_step shaped are refused, naming the option", {
  set.seed(72)
  x <- data.frame(a = rnorm(300), b = runif(300))
  y <- x$a + rnorm(300)
  for (args in list(list(boosting = "dart"), list(path_smooth = 2), list(max_delta_step = 0.5))) {
    fit <- do.call(histboost, c(list(x, y, nrounds = 4, verbose = 0), args))
    expect_error(hb_refit(fit, x, y), class = "histboost_error_input",
                 regexp = if (names(args) == "boosting") "dart" else names(args))
  }
})

test_that("hb_refit() refuses what would overflow, as training does, naming the cause, never a NaN model", {
  d <- gen_task(632, n = 200, task = "regression")
  fit <- hb_quiet(d$x, d$y, nrounds = 3L)
  err <- function(expr, what) expect_error(expr, class = "histboost_error_input", regexp = what)
  # the same labels make training fail the same way
  err(hb_quiet(d$x, rep(1e308, 200), nrounds = 3L), "labels \\(`y`\\) are too large")
  err(hb_refit(fit, d$x, rep(1e308, 200)), "refitting: .*labels \\(`y`\\) are too large")
  err(hb_refit(fit, d$x, d$y, init_score = rep(1e308, 200)), "`init_score` is too large")
  yp <- round(abs(d$y))
  fp <- hb_quiet(d$x, yp, objective = "poisson", nrounds = 3L)
  # exp(800) overflows: training and refitting name init_score
  err(hb_quiet(d$x, yp, objective = "poisson", init_score = rep(800, 200), nrounds = 2L), "`init_score` is too large")
  err(hb_refit(fp, d$x, yp, init_score = rep(800, 200)), "`init_score` is too large")
  # labels that do not suit the objective still name `y`
  err(hb_refit(fp, d$x, -yp - 1), "^`y`")
  # sizes that train refit to finite values
  ok <- hb_refit(fp, d$x, yp, init_score = rep(2, 200))
  expect_true(all(is.finite(predict(ok, d$x, type = "raw", init_score = rep(2, 200)))))
})

test_that("hb_refit's warning of unseen labels names its own argument `x`", {
  set.seed(74)
  d <- data.frame(a = rnorm(200), g = factor(sample(c("p", "q"), 200, TRUE)))
  y <- d$a + as.integer(d$g)
  m <- hb_quiet(d, y, nrounds = 3L, min_data_in_leaf = 5L)
  dn <- d
  dn$g <- factor(ifelse(seq_len(200) <= 7, "NEW", as.character(d$g)))
  expect_warning(hb_refit(m, dn, y), "^`x` has factor labels not seen in training.*7 values",
                 class = "histboost_warning_unseen_levels")
})
