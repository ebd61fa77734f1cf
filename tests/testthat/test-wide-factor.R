# A factor with more levels than max_bin keeps them (those LightGBM's rule
# keeps, ref_kept_levels() in helper-histboost.R; up to 64 x max_bin): its
# levels, most frequent first (ties: level order), are dealt out max_bin
# at a time to several internal features, in each of which the other levels
# share the missing bin with NA. A split on one of them is a split on a set
# of the column's levels. These tests hold that against plain R: the same
# brute force as test-split.R over the expanded columns, predictions of raw
# rows, the evaluation log of validation rows routed through their bins, and
# per-column feature sampling.

# The column expanded as the engine deals it out: one factor per max_bin
# levels, the others NA.
expand_wide <- function(f, max_bin) {
  kept <- match(ref_kept_levels(f, max_bin = max_bin), levels(f))
  chunks <- split(kept, ceiling(seq_along(kept) / max_bin))
  out <- lapply(chunks, function(k) {
    v <- as.integer(f)
    factor(ifelse(v %in% k, levels(f)[v], NA), levels = levels(f)[k])
  })
  names(out) <- paste0("part", seq_along(out))
  as.data.frame(out)
}

# max_cat_to_onehot = 1: every part (3 levels and the missing bin) scans many
# against many, as the brute force's every subset
p_bf_wide <- function() ref_params(cat_smooth = 0, cat_l2 = 0, min_data_per_group = 1L,
                                   max_cat_threshold = 64L, min_data_in_leaf = 2L, max_cat_to_onehot = 1L)

test_that("a stump on a factor wider than max_bin = brute force over its expanded parts", {
  won_late <- 0
  for (seed in 701:706) {
    d <- gen_mixed(seed, n = 120, nnum = 0, ncat = 1, nlev = 8, cat_na = 0.08)
    x <- d$x
    # uneven counts, so the frequency order is not the level order
    x$cat1[sample(which(!is.na(x$cat1)), 25)] <- sample(levels(x$cat1)[5:8], 25, replace = TRUE)
    m <- hb_quiet(x, d$y, nrounds = 1L, learning_rate = 1, num_leaves = 2L, lambda_l1 = 0,
                  lambda_l2 = 0, min_data_in_leaf = 2L, min_sum_hessian_in_leaf = 1e-3, cat_smooth = 0,
                  cat_l2 = 0, min_data_per_group = 1L, max_cat_threshold = 64L, max_bin = 3L, max_cat_to_onehot = 1L)
    ex <- expand_wide(x$cat1, 3L)
    expect_equal(ncol(ex), 3L)
    init <- mean(d$y)
    bf <- ref_bruteforce_split(ex, init - d$y, rep(1, nrow(x)), p_bf_wide())
    expect_false(is.null(bf))
    expect_gt(bf$gain - bf$second, 1e-6 * bf$gain, label = paste("margin, seed", seed))
    tr <- hb_trees(m)
    inner <- tr[tr$tree == 1 & !tr$is_leaf, ]
    expect_identical(as.character(inner$feature), "cat1")
    expect_equal(inner$gain, bf$gain, tolerance = TOL$split, label = paste("gain, seed", seed))
    left <- predict(m, x, type = "leaf")[, 1] == 0L
    expect_true(identical(left, bf$left) || identical(left, !bf$left), label = paste("partition, seed", seed))
    won_late <- won_late + (bf$feature > 1)
  }
  # the best split lies beyond the first max_bin levels in some seeds: the
  # levels a single feature of max_bin bins would have merged into NA
  expect_gt(won_late, 0)
})

test_that("a rare level beyond the 255th still gets its own leaf, predicted from raw rows", {
  set.seed(11)
  n <- 6000
  lev <- sprintf("L%03d", 1:600)
  # the first 400 levels take most rows, so level 500 ranks well past 255
  code <- c(sample(400L, n - 1200L, replace = TRUE), sample(401:600, 1200L, replace = TRUE))
  f <- factor(lev[code], levels = lev)
  y <- rnorm(n, sd = 0.1) + ifelse(code == 500L, 5, 0)
  x <- data.frame(f = f)
  m <- hb_quiet(x, y, nrounds = 1L, learning_rate = 1, num_leaves = 2L, min_data_in_leaf = 2L,
                min_data_per_group = 1L, cat_smooth = 0, cat_l2 = 0, lambda_l2 = 0)
  ex <- expand_wide(f, 255L)
  expect_equal(ncol(ex), 3L)
  expect_true("L500" %in% levels(ex$part2) || "L500" %in% levels(ex$part3))
  p <- predict(m, x)
  sel <- code == 500L
  expect_equal(unique(p[sel]), mean(y[sel]), tolerance = 1e-9)
  expect_equal(unique(p[!sel]), mean(y[!sel]), tolerance = 1e-9)
  # rows not seen in training: the level is routed by its code, NA by the default direction
  nd <- data.frame(f = factor(c("L500", "L001", NA), levels = lev))
  root <- hb_trees(m)[1, ]
  expect_identical(root$split_type, "categorical")
  left_is_500 <- predict(m, x, type = "leaf")[which(sel)[1], 1] == 0L
  na_goes <- if (root$default_left == left_is_500) mean(y[sel]) else mean(y[!sel])
  expect_equal(predict(m, nd), c(mean(y[sel]), mean(y[!sel]), na_goes), tolerance = 1e-9)
})

test_that("evaluation log over a wide factor (validation rows routed by their bins) = metrics of predict()", {
  set.seed(12)
  n <- 3000
  lev <- sprintf("L%03d", 1:700)
  code <- sample(700L, n, replace = TRUE, prob = 1 / seq_len(700)^0.5)
  eff <- rnorm(700)
  z <- runif(n)
  y <- eff[code] + sin(6 * z) + rnorm(n, sd = 0.3)
  x <- data.frame(f = factor(lev[code], levels = lev), z = z)
  x$f[sample(n, 100)] <- NA
  tr <- 1:2000; va <- 2001:3000
  m <- hb_quiet(x[tr, ], y[tr], nrounds = 15L, num_leaves = 16L, min_data_per_group = 5L, max_bin = 63L,
                eval_metric = "rmse", valid = list(list(x = x[va, ], y = y[va])))
  for (i in c(1L, 7L, 15L)) {
    p <- predict(m, x[va, ], iteration = i)
    expect_equal(m$evaluation_log$valid_1_rmse[i], rmse(y[va], p), tolerance = TOL$metric)
  }
  # the factor spans 11 internal features at max_bin 63, and the trees split on it
  tt <- hb_trees(m)
  expect_true(any(tt$feature == "f", na.rm = TRUE))
  # and the model survives saveRDS / readRDS with the same predictions
  f <- tempfile(fileext = ".rds")
  saveRDS(m, f)
  expect_identical(predict(readRDS(f), x[va, ]), predict(m, x[va, ]))
  unlink(f)
})

test_that("feature_fraction samples columns: a wide factor's parts come and go together", {
  set.seed(13)
  n <- 2000
  lev <- sprintf("L%02d", 1:40)
  code <- sample(40L, n, replace = TRUE)
  z <- runif(n)
  y <- rnorm(40)[code] + 2 * z + rnorm(n, sd = 0.2)
  x <- data.frame(f = factor(lev[code], levels = lev), z = z)
  # max_bin 8: the factor spans 5 internal features, the numeric column one
  m <- hb_quiet(x, y, nrounds = 30L, num_leaves = 8L, max_bin = 8L, feature_fraction = 0.5, seed = 3L,
                min_data_per_group = 10L)
  expect_equal(m$niter, 30L)
  tt <- hb_trees(m)
  used <- tapply(as.character(tt$feature), tt$tree, function(v) length(unique(v[!is.na(v)])))
  # round(2 columns x 0.5) = 1 column per tree, whichever of the factor's parts it splits on
  expect_true(all(used <= 1L))
  expect_true(any(tapply(as.character(tt$feature), tt$tree, function(v) any(v == "f", na.rm = TRUE))))
  expect_true(any(tapply(as.character(tt$feature), tt$tree, function(v) any(v == "z", na.rm = TRUE))))
})

test_that("a wide factor whose first part is sparse (top level in 90% of rows) splits into pure leaves", {
  # y is 5 exactly on level 1 and 0 elsewhere (other levels and NA): the one
  # split separates them, and each leaf predicts its mean. The first part's
  # missing bin (rows of the second part and NA) once took no rows and its
  # default bin took them instead: the level-1 leaf predicted 4.86.
  set.seed(1)
  n <- 30000
  u <- runif(n)
  v <- sample.int(300, n, TRUE)
  B <- ifelse(u < 0.02, NA, ifelse(u < 0.92, 1L, v))
  df <- data.frame(a = runif(n), b = runif(n), c = runif(n), B = factor(B, levels = 1:300))
  y <- ifelse(!is.na(B) & B == 1, 5, 0)
  for (th in 1:2) {
    fit <- histboost(df, y, nrounds = 1, num_leaves = 2, learning_rate = 1, min_data_per_group = 1,
                     cat_smooth = 0, cat_l2 = 0, lambda_l2 = 0, nthreads = th, verbose = 0)
    p <- predict(fit, df)
    expect_equal(unique(round(p[y == 5], 9)), 5, label = paste(th, "threads, level 1"))
    expect_equal(unique(round(p[y == 0], 9)), 0, label = paste(th, "threads, the rest"))
  }
})
