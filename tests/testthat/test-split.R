# The best split of one node (a one-round, two-leaf model) equals the plain-R
# brute force over every threshold / missing direction and every category
# subset (helper-histboost.R). Settings that make the engine's ordered
# categorical scan optimal: cat_smooth = cat_l2 = lambda = 0,
# min_data_per_group = 1, max_cat_threshold large; data with continuous
# responses so that no two partitions tie.

stump_params <- list(nrounds = 1L, learning_rate = 1, num_leaves = 2L,
                     lambda_l1 = 0, lambda_l2 = 0, min_data_in_leaf = 2L,
                     min_sum_hessian_in_leaf = 1e-3, cat_smooth = 0, cat_l2 = 0,
                     min_data_per_group = 1L, max_cat_threshold = 64L)

fit_stump <- function(x, y, weights = NULL, ...) {
  args <- modifyList(stump_params, list(...))
  do.call(histboost, c(list(x = x, y = y, weights = weights, verbose = 0L), args))
}

# Compare a stump with the brute force. g, h: weighted gradients at the start.
# counts: how the brute force counts rows ("estimate": from hessian sums, as
# the engine does; see ref_bruteforce_split).
check_stump <- function(m, x, g, h, init, params, label, counts = "exact") {
  bf <- ref_bruteforce_split(x, g, h, params, counts = counts)
  expect_false(is.null(bf), label = label)
  # the data leave no near-tie, so the optimum is unique
  expect_gt(bf$gain - bf$second, 1e-6 * bf$gain, label = paste(label, "margin"))

  tr <- hb_trees(m)
  inner <- tr[tr$tree == 1 & !tr$is_leaf, ]
  expect_equal(nrow(inner), 1L, label = paste(label, "internal nodes"))
  expect_identical(as.character(inner$feature), names(x)[bf$feature], label = paste(label, "feature"))
  expect_equal(inner$gain, bf$gain, tolerance = TOL$split, label = paste(label, "gain"))

  leaf <- predict(m, x, type = "leaf")
  expect_equal(dim(leaf), c(nrow(x), 1L))
  left <- leaf[, 1] == 0L
  if (is.factor(x[[bf$feature]])) {
    # a category subset and its complement are the same split
    expect_true(identical(left, bf$left) || identical(left, !bf$left),
                label = paste(label, "categorical partition"))
  } else {
    expect_identical(left, bf$left, label = paste(label, "numeric partition"))
  }

  vL <- ref_leaf_output(sum(g[left]), sum(h[left]), params$lambda_l1, params$lambda_l2)
  vR <- ref_leaf_output(sum(g[!left]), sum(h[!left]), params$lambda_l1, params$lambda_l2)
  leaves <- tr[tr$tree == 1 & tr$is_leaf, ]
  expect_equal(leaves$value[match(c("L0", "L1"), leaves$id)], c(vL, vR),
               tolerance = TOL$split, label = paste(label, "leaf values"))
  expect_equal(leaves$count[match(c("L0", "L1"), leaves$id)], c(sum(left), sum(!left)),
               label = paste(label, "leaf counts"))
  raw <- predict(m, x, type = "raw")
  expect_equal(unname(raw), init + ifelse(left, vL, vR), tolerance = TOL$split,
               label = paste(label, "raw predictions"))
  invisible(bf)
}

p_bf <- function(...) ref_params(cat_smooth = 0, cat_l2 = 0, min_data_per_group = 1L,
                                 max_cat_threshold = 64L, min_data_in_leaf = 2L, ...)

test_that("regression stump = brute force (numeric with NAs + factor with NA)", {
  for (seed in 101:106) {
    d <- gen_mixed(seed, n = 80, nnum = 2, ncat = 1, nlev = 5)
    m <- fit_stump(d$x, d$y)
    init <- mean(d$y)
    # regression: the leaf value is the mean of y in the leaf minus the start
    check_stump(m, d$x, init - d$y, rep(1, 80), init, p_bf(), paste("mixed seed", seed))
  }
})

test_that("regression stump = brute force on numeric features with NAs only", {
  for (seed in 201:205) {
    d <- gen_mixed(seed, n = 70, nnum = 3, ncat = 0, nval = 9, na = 0.15)
    m <- fit_stump(d$x, d$y)
    init <- mean(d$y)
    check_stump(m, d$x, init - d$y, rep(1, 70), init, p_bf(), paste("numeric seed", seed))
  }
})

test_that("regression stump = brute force on factors only (every subset enumerated)", {
  won_cat <- 0
  for (seed in 301:306) {
    d <- gen_mixed(seed, n = 90, nnum = 0, ncat = 2, nlev = 6, cat_na = 0.08)
    m <- fit_stump(d$x, d$y)
    init <- mean(d$y)
    bf <- check_stump(m, d$x, init - d$y, rep(1, 90), init, p_bf(), paste("factor seed", seed))
    # the optimum is a many-vs-many subset in at least some seeds
    if (!is.null(bf)) {
      cat_left <- unique(as.character(d$x[[bf$feature]])[bf$left])
      cat_right <- unique(as.character(d$x[[bf$feature]])[!bf$left])
      if (length(cat_left) > 1 && length(cat_right) > 1) won_cat <- won_cat + 1
    }
  }
  expect_gt(won_cat, 0)
})

test_that("stump with lambda_l1, lambda_l2 and a binding min_data_in_leaf = brute force (numeric)", {
  for (seed in 401:404) {
    d <- gen_mixed(seed, n = 80, nnum = 3, ncat = 0, nval = 10, na = 0.1)
    m <- fit_stump(d$x, d$y, lambda_l1 = 0.7, lambda_l2 = 2.5, min_data_in_leaf = 20L)
    init <- mean(d$y)
    p <- p_bf(); p$lambda_l1 <- 0.7; p$lambda_l2 <- 2.5; p$min_data_in_leaf <- 20L
    check_stump(m, d$x, init - d$y, rep(1, 80), init, p, paste("lambda seed", seed))
  }
})

test_that("weighted binary stump = brute force (mixed features)", {
  for (seed in 501:505) {
    d <- gen_mixed(seed, n = 100, nnum = 2, ncat = 1, nlev = 5)
    set.seed(seed + 1000)
    y01 <- as.numeric(d$y + rnorm(100, sd = 0.3) > median(d$y))
    w <- runif(100, 0.5, 2)                       # continuous weights: no tied gains
    m <- fit_stump(d$x, factor(y01, levels = c(0, 1)), weights = w)
    p <- sum(w * y01) / sum(w)
    init <- log(p / (1 - p))
    g <- w * (p - y01)
    h <- w * p * (1 - p)
    check_stump(m, d$x, g, h, init, p_bf(), paste("binary seed", seed))
  }
})

# ---- row counts estimated from hessian sums ---------------------------------
# Histograms hold no row counts: the engine estimates a bin's rows as
# round(h * n / H) from the leaf's n and H (split_rules.h, README). With
# unequal hessians (weights; binary) the estimate can decide whether a
# candidate meets min_data_in_leaf, or whether a category takes part
# (min_data_per_group). These cases are built so that it does: the engine
# must match the brute force that counts the same way, and in some of them
# the brute force with exact counts picks another split.

# The estimate-aware brute force treats each distinct value (and NA, and
# each category) as one bin: true when every value is on >= 3 rows (the
# engine's min_data_in_bin) and there are fewer than 255 values.
expect_one_bin_per_value <- function(x) {
  for (j in seq_along(x)) {
    if (is.factor(x[[j]])) next
    tab <- table(x[[j]])
    expect_true(all(tab >= 3) && length(tab) < 255, label = paste(names(x)[j], "one bin per value"))
  }
}

# The engine's partition (left leaf rows) differs from the brute force's.
differs_from <- function(m, x, bf) {
  left <- predict(m, x, type = "leaf")[, 1] == 0L
  is.null(bf) || !(identical(left, bf$left) || identical(left, !bf$left))
}

test_that("weighted regression stump: min_data_in_leaf judged on estimated counts = brute force", {
  mdl <- 18L
  p <- p_bf(); p$min_data_in_leaf <- mdl
  differ <- 0
  for (seed in 1:6) {
    d <- gen_mixed(seed, n = 120, nnum = 3, ncat = 0, nval = 6, na = 0.1)
    expect_one_bin_per_value(d$x)
    # the lowest value of num1 (~20 rows) stands out: the best split isolates
    # it when its count passes min_data_in_leaf = 18
    x1 <- d$x$num1
    y <- d$y + 3 * (!is.na(x1) & x1 == min(x1, na.rm = TRUE))
    set.seed(seed + 77)
    w <- exp(rnorm(120, sd = 0.7))
    m <- fit_stump(d$x, y, weights = w, min_data_in_leaf = mdl)
    init <- sum(w * y) / sum(w)
    g <- w * (init - y)
    h <- w
    check_stump(m, d$x, g, h, init, p, paste("weighted regression seed", seed), counts = "estimate")
    differ <- differ + differs_from(m, d$x, ref_bruteforce_split(d$x, g, h, p, counts = "exact"))
  }
  # the rule matters: exact counts would have chosen another split
  expect_gt(differ, 0)
})

test_that("weighted binary stump (mixed features): estimated counts for min_data_in_leaf", {
  mdl <- 20L
  p <- p_bf(); p$min_data_in_leaf <- mdl
  for (seed in 3:8) {
    d <- gen_mixed(seed, n = 150, nnum = 2, ncat = 1, nval = 6, nlev = 5, na = 0.1)
    expect_one_bin_per_value(d$x)
    x1 <- d$x$num1
    low <- !is.na(x1) & x1 == min(x1, na.rm = TRUE)
    set.seed(seed + 1000)
    y01 <- as.numeric(d$y + 2.5 * low + rnorm(150, sd = 0.3) > median(d$y))
    w <- exp(rnorm(150, sd = 0.7))
    m <- fit_stump(d$x, factor(y01, levels = c(0, 1)), weights = w, min_data_in_leaf = mdl)
    pr <- sum(w * y01) / sum(w)
    init <- log(pr / (1 - pr))
    g <- w * (pr - y01)
    h <- w * pr * (1 - pr)
    check_stump(m, d$x, g, h, init, p, paste("weighted binary seed", seed), counts = "estimate")
  }
  # (that the estimate can differ from the true count, and the engine follows
  # the estimate, is shown by the weighted regression stump above and, for
  # categories, by test-categorical.R)
})

test_that("missing rows with tiny weights get a direction their leaf's sums account for", {
  # Ten NA rows of weight 1e-3: their estimated count rounds to 0, yet they
  # land in some leaf, and that leaf's hessian sum must include them.
  set.seed(77)
  n <- 150
  x <- data.frame(a = sample(seq(-2, 2, length.out = 12), n, TRUE), b = runif(n))
  na <- sample.int(n, 10)
  x$a[na] <- NA
  y <- 2 * (x$a > 0) + x$b + rnorm(n, sd = 0.1)
  y[na] <- 5
  w <- rep(1, n)
  w[na] <- 1e-3
  m <- fit_stump(x, y, weights = w, min_data_in_leaf = 5L)
  leaf <- predict(m, x, type = "leaf")[, 1]
  tr <- hb_trees(m)
  leaves <- tr[tr$tree == 1 & tr$is_leaf, ]
  ids <- as.integer(sub("^L", "", leaves$id))
  hess_rows <- vapply(ids, function(l) sum(w[leaf == l]), 0)
  expect_equal(leaves$hessian, hess_rows, tolerance = 1e-12)
  expect_equal(leaves$count, vapply(ids, function(l) sum(leaf == l), 0L))
})
