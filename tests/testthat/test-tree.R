# A few-leaf tree predicts exactly what the plain-R leaf-wise grower
# (helper-histboost.R, mirroring notes/ALGORITHM.md) predicts. Toy data with
# few distinct values per feature, so every distinct value is its own bin.

gen_toy <- function(seed, n = 200) {
  set.seed(seed)
  x <- data.frame(
    a = sample(rep_len(c(-2, -0.5, 0, 1.5, 3), n)),
    b = sample(rep_len(c(0.1, 0.2, 0.4, 0.8, 1.6, 3.2), n)),
    c = factor(sample(rep_len(c("p", "q", "r", "s", "t"), n)), levels = c("p", "q", "r", "s", "t")),
    d = sample(rep_len(1:4, n))
  )
  x$b[sample.int(n, 25)] <- NA
  x$c[sample.int(n, 15)] <- NA
  eff <- c(p = 2, q = -2, r = 0.6, s = 3, t = -0.5)
  f <- x$a + ifelse(is.na(x$b), 1, log(x$b)) + ifelse(is.na(x$c), 0.5, eff[as.character(x$c)]) +
    0.3 * x$d
  list(x = x, y = f + rnorm(n, sd = 0.7), f = f)
}

# New rows: every training value, values in between and beyond, NAs, and an
# unseen factor level (goes where missing values go).
gen_toy_new <- function(seed, n = 150) {
  set.seed(seed)
  pick <- function(v) sample(c(v, runif(6, min(v) - 1, max(v) + 1), NA), n, replace = TRUE)
  data.frame(
    a = pick(c(-2, -0.5, 0, 1.5, 3)),
    b = pick(c(0.1, 0.2, 0.4, 0.8, 1.6, 3.2)),
    c = factor(sample(c("p", "q", "r", "s", "t", "zz", NA), n, replace = TRUE),
               levels = c("zz", "t", "s", "r", "q", "p")),
    d = pick(1:4)
  )
}

tree_params <- function(...) {
  p <- list(learning_rate = 0.3, num_leaves = 5L, max_depth = -1L, min_data_in_leaf = 8L,
            min_sum_hessian_in_leaf = 1e-3, lambda_l1 = 0, lambda_l2 = 1, min_gain_to_split = 0,
            max_cat_threshold = 32L, cat_smooth = 10, cat_l2 = 10, min_data_per_group = 5L)
  a <- list(...)
  p[names(a)] <- a
  p
}

fit_hb <- function(x, y, params, nrounds, weights = NULL) {
  do.call(histboost, c(list(x = x, y = y, weights = weights, nrounds = nrounds, verbose = 0L),
                       params))
}

# Engine vs reference for one model: raw predictions on the training rows and
# on new rows, leaf partitions and split gains of every tree.
check_against_ref <- function(m, fit, x, xnew, label) {
  margins <- unlist(lapply(fit$trees, function(r) lapply(r, `[[`, "margins")))
  # no near-ties in any decision the reference made (else the order of
  # floating-point sums could legitimately change the tree)
  expect_gt(min(margins), 1e-7, label = paste(label, "smallest decision margin"))

  raw <- predict(m, x, type = "raw")
  expect_equal(unname(as.matrix(raw)), ref_boost_raw(fit, x), tolerance = TOL$exact,
               label = paste(label, "raw on training rows"))
  # the new rows hold a level unseen in training on purpose (it goes where missing values go)
  rawn <- withCallingHandlers(predict(m, xnew, type = "raw"),
                              histboost_warning_unseen_levels = function(w) invokeRestart("muffleWarning"))
  expect_equal(unname(as.matrix(rawn)), ref_boost_raw(fit, xnew), tolerance = TOL$exact,
               label = paste(label, "raw on new rows"))

  leaf <- predict(m, x, type = "leaf")
  tr <- hb_trees(m)
  k <- 0
  for (it in seq_along(fit$trees)) for (cl in seq_len(fit$K)) {
    k <- k + 1
    rt <- fit$trees[[it]][[cl]]
    expect_true(same_partition(leaf[, k], ref_tree_leaf(rt, x)),
                label = paste(label, "leaf partition of tree", k))
    eng_gain <- tr$gain[tr$tree == k & !tr$is_leaf]
    expect_equal(sort(eng_gain), sort(rt$gains), tolerance = TOL$exact,
                 label = paste(label, "split gains of tree", k))
    expect_equal(sort(tr$value[tr$tree == k & tr$is_leaf]), sort(rt$leaf_values),
                 tolerance = TOL$exact, label = paste(label, "leaf values of tree", k))
  }
}

test_that("regression trees with 4..6 leaves equal the plain-R grower", {
  xnew <- gen_toy_new(7)
  for (nl in 4:6) {
    d <- gen_toy(10 + nl)
    p <- tree_params(num_leaves = nl)
    m <- fit_hb(d$x, d$y, p, nrounds = 1L)
    fit <- ref_boost(d$x, d$y, "regression", p, nrounds = 1L)
    expect_length(fit$trees[[1]][[1]]$leaf_values, nl)   # the toy data fill every leaf
    check_against_ref(m, fit, d$x, xnew, paste("regression, num_leaves", nl))
  }
})

test_that("three regression rounds with lambda_l1 and max_depth equal the plain-R grower", {
  d <- gen_toy(21)
  p <- tree_params(num_leaves = 6L, lambda_l1 = 0.5, max_depth = 3L, min_data_in_leaf = 10L)
  m <- fit_hb(d$x, d$y, p, nrounds = 3L)
  fit <- ref_boost(d$x, d$y, "regression", p, nrounds = 3L)
  check_against_ref(m, fit, d$x, gen_toy_new(8), "regression, 3 rounds")
})

test_that("binary: the first tree from the log-odds start equals the plain-R grower", {
  for (nl in c(4L, 6L)) {
    d <- gen_toy(30 + nl, n = 300)
    set.seed(99 + nl)
    y01 <- as.numeric(runif(300) < sigmoid(d$f - mean(d$f)))
    p <- tree_params(num_leaves = nl, learning_rate = 0.5, lambda_l2 = 0.5)
    m <- fit_hb(d$x, factor(y01, levels = c(0, 1)), p, nrounds = 1L)
    fit <- ref_boost(d$x, y01, "binary", p, nrounds = 1L)
    expect_equal(fit$init, log(mean(y01) / (1 - mean(y01))))
    check_against_ref(m, fit, d$x, gen_toy_new(9), paste("binary, num_leaves", nl))
  }
})

test_that("weighted binary, two rounds, equals the plain-R grower", {
  d <- gen_toy(41, n = 300)
  set.seed(141)
  y01 <- as.numeric(runif(300) < sigmoid(d$f - mean(d$f)))
  w <- runif(300, 0.2, 3)
  p <- tree_params(num_leaves = 5L, learning_rate = 0.4)
  m <- fit_hb(d$x, factor(y01, levels = c(0, 1)), p, nrounds = 2L, weights = w)
  fit <- ref_boost(d$x, y01, "binary", p, nrounds = 2L, weights = w)
  check_against_ref(m, fit, d$x, gen_toy_new(10), "weighted binary")
})

test_that("multiclass: one round of K trees equals the plain-R grower", {
  d <- gen_toy(51, n = 300)
  set.seed(151)
  S <- cbind(d$f, -d$f, d$x$a * 0.8)
  P <- softmax_rows(S)
  yk <- apply(P, 1, function(pr) sample.int(3, 1, prob = pr))
  p <- tree_params(num_leaves = 4L, learning_rate = 0.5)
  m <- fit_hb(d$x, factor(c("u", "v", "w")[yk]), p, nrounds = 1L)
  fit <- ref_boost(d$x, yk, "multiclass", p, nrounds = 1L, K = 3L)
  expect_equal(fit$init, log(as.vector(table(yk)) / 300))
  check_against_ref(m, fit, d$x, gen_toy_new(11), "multiclass")
})

test_that("with a per-row init_score, trees equal the plain-R grower started from it", {
  # regression, two rounds: gradients s - y from s = offset + trees, not the mean
  d <- gen_toy(61)
  set.seed(161)
  off <- rnorm(200, sd = 2)
  p <- tree_params(num_leaves = 5L)
  m <- do.call(histboost, c(list(d$x, d$y, init_score = off, nrounds = 2L, verbose = 0L), p))
  fit <- ref_boost(d$x, d$y, "regression", p, nrounds = 2L, offset = matrix(off))
  check_against_ref(m, fit, d$x, gen_toy_new(12), "regression with an offset")
  expect_equal(predict(m, d$x, type = "raw", init_score = off), ref_boost_raw(fit, d$x)[, 1] + off,
               tolerance = TOL$exact)
  # weighted binary, two rounds, the offset on the log-odds scale
  d <- gen_toy(62, n = 300)
  set.seed(162)
  y01 <- as.numeric(runif(300) < sigmoid(d$f - mean(d$f)))
  off <- d$x$a * 0.7 - 0.2
  w <- runif(300, 0.2, 3)
  p <- tree_params(num_leaves = 5L, learning_rate = 0.4)
  m <- do.call(histboost, c(list(d$x, factor(y01, levels = c(0, 1)), weights = w, init_score = off,
                                 nrounds = 2L, verbose = 0L), p))
  fit <- ref_boost(d$x, y01, "binary", p, nrounds = 2L, weights = w, offset = matrix(off))
  check_against_ref(m, fit, d$x, gen_toy_new(13), "weighted binary with an offset")
  expect_equal(predict(m, d$x, init_score = off), sigmoid(ref_boost_raw(fit, d$x)[, 1] + off),
               tolerance = TOL$exact)
  # multiclass: one offset column per class
  d <- gen_toy(63, n = 300)
  set.seed(163)
  S <- cbind(d$f, -d$f, d$x$a * 0.8)
  yk <- apply(softmax_rows(S), 1, function(pr) sample.int(3, 1, prob = pr))
  off <- cbind(0.5 * d$f, 0, -0.3 * d$x$d)
  p <- tree_params(num_leaves = 4L, learning_rate = 0.5)
  m <- do.call(histboost, c(list(d$x, factor(c("u", "v", "w")[yk]), init_score = off, nrounds = 1L,
                                 verbose = 0L), p))
  fit <- ref_boost(d$x, yk, "multiclass", p, nrounds = 1L, K = 3L, offset = off)
  check_against_ref(m, fit, d$x, gen_toy_new(14), "multiclass with an offset")
  expect_equal(unname(predict(m, d$x, init_score = off)), softmax_rows(ref_boost_raw(fit, d$x) + off),
               tolerance = TOL$exact)
})

# A plain-R walk of hb_trees(): for each row, the leaf each tree sends it to
# (numeric splits only: value <= threshold goes left, NA follows default_left).
walk_table <- function(tab, x) {
  trees <- split(tab, tab$tree)
  lapply(trees, function(t) {
    rownames(t) <- t$id
    vapply(seq_len(nrow(x)), function(i) {
      id <- "N0"
      if (!("N0" %in% t$id)) return(t$id[1])
      while (!t[id, "is_leaf"]) {
        v <- x[i, t[id, "feature"]]
        id <- if (is.na(v)) { if (t[id, "default_left"]) t[id, "left"] else t[id, "right"] }
              else if (v <= t[id, "threshold"]) t[id, "left"] else t[id, "right"]
      }
      id
    }, "")
  })
}

test_that("predict walks the trees as a plain-R walk of hb_trees() does, across row blocks, dense and sparse, narrow and wide", {
  set.seed(412)
  # 1000 + 37 rows: not a whole number of the engine's 64-row blocks; 4500
  # columns: wide enough that a block holds fewer rows
  for (p in c(6L, 4500L)) {
    n <- 1037L
    x <- matrix(0, n, p, dimnames = list(NULL, paste0("f", seq_len(p))))
    x[, 1:6] <- rnorm(n * 6)
    x[sample(n, 300), 1] <- 0  # zeros the sparse input leaves out
    if (p > 6) {
      x[cbind(sample(n, 3000, TRUE), sample(7:p, 3000, TRUE))] <- 1
      x[, 7:9] <- rbinom(n * 3, 1, 0.3)  # sparse columns the trees split on
    }
    x[sample(n, 80), 2] <- NA
    y <- x[, 1] - abs(x[, 3]) + ifelse(is.na(x[, 2]), 1, x[, 2]) + 2 * rowSums(x[, -(1:6), drop = FALSE]) +
      rnorm(n, sd = 0.1)
    m <- hb_quiet(x, y, nrounds = 4L, num_leaves = 12L, min_data_in_leaf = 5L, nthreads = 2L)
    tab <- hb_trees(m)
    leaves <- walk_table(tab, x)
    value <- stats::setNames(tab$value, paste(tab$tree, tab$id))
    sum_r <- Reduce(`+`, lapply(names(leaves), function(k) value[paste(k, leaves[[k]])]))
    xs <- Matrix::Matrix(x, sparse = TRUE)
    for (input in list(x, xs)) {
      raw <- predict(m, input, type = "raw", nthreads = 2L)
      # raw = initial score + the leaves' values: the difference is one constant
      expect_lt(diff(range(raw - sum_r)), 1e-9, label = sprintf("raw vs plain-R walk (%d columns, %s)", p, class(input)[1]))
      lf <- predict(m, input, type = "leaf", nthreads = 2L)
      expect_identical(as.integer(unname(lf[, 1])), as.integer(sub("^L", "", leaves[[1]])),
                       label = sprintf("leaf indices of tree 1 (%d columns, %s)", p, class(input)[1]))
    }
    expect_identical(predict(m, x, nthreads = 1L), predict(m, xs, nthreads = 2L))
  }
})

test_that("skip_unsplittable: a feature with no valid split in a leaf is not tried below it, as the plain-R grower", {
  # b alone gains nothing at the root (the b = 0 and b = 1 rows have one mean; c is balanced
  # within every (a, b) cell), so it is below min_gain_to_split there; within either half of a
  # it decides y, by 2 in one half and 3 in the other
  a <- rep(c(0, 1), c(120, 80))
  b <- rep(c(0, 1, 0, 1), c(60, 60, 40, 40))
  n <- length(a)
  x <- data.frame(a = a, b = b, c = rep_len(c(0.1, 0.2, 0.7, 1.9), n))
  y <- ifelse(a == 0, 2 * b, 1 + 3 * (1 - b)) + 0.3 * x$c
  expect_equal(mean(y[b == 0]), mean(y[b == 1]))
  set.seed(62)
  xnew <- x[sample.int(n, 50), ]
  xnew$c <- runif(50, 0, 2)
  for (skip in c(FALSE, TRUE)) {
    p <- tree_params(num_leaves = 4L, min_gain_to_split = 1e-3, skip_unsplittable = skip)
    m <- fit_hb(x, y, p, nrounds = 2L)
    fit <- ref_boost(x, y, "regression", p, nrounds = 2L)
    check_against_ref(m, fit, x, xnew, paste("skip_unsplittable", skip))
    feats <- hb_trees(m)$feature
    # the rule keeps b out of the root's subtree; without it b makes the tree
    if (skip) expect_false("b" %in% feats) else expect_true("b" %in% feats)
  }
})

test_that("skip_unsplittable with feature_fraction_bynode: a node's feature had a valid split at every ancestor", {
  # LightGBM searches every feature the parent allows and only then drops those the node's sample
  # left out, so a feature's flag comes from every ancestor's rows, sampled there or not. Checked
  # in plain R: each split's feature has a valid candidate (ref_find_split_v) at every ancestor.
  a <- rep(c(0, 1), c(300, 200))
  b <- rep(c(0, 1, 0, 1), c(150, 150, 100, 100))
  n <- length(a)
  set.seed(71)
  X <- data.frame(a = a, b = b, c = rep_len(c(0.1, 0.2, 0.7, 1.9), n), d = sample(rep_len(1:5, n)))
  y <- ifelse(a == 0, 2 * b, 1 + 3 * (1 - b)) + 0.3 * X$c + 0.05 * X$d
  info <- ref_bin_info(X)
  rp <- ref_params(num_leaves = 8L, min_data_in_leaf = 10L, lambda_l2 = 1, min_gain_to_split = 1e-3)
  g <- mean(y) - y
  h <- rep(1, n)
  unfounded <- function(skip, seed) {  # (node, ancestor) pairs where the node's feature had no valid split
    m <- histboost(X, y, nrounds = 1L, learning_rate = 1, num_leaves = 8L, min_data_in_leaf = 10L, lambda_l2 = 1,
                   min_gain_to_split = 1e-3, feature_fraction_bynode = 0.5, seed = seed, verbose = 0L,
                   skip_unsplittable = skip)
    tr <- hb_trees(m)
    leaf <- predict(m, X, type = "leaf")[, 1]
    parent <- setNames(rep(NA_character_, nrow(tr)), tr$id)
    for (i in which(!tr$is_leaf)) parent[c(tr$left[i], tr$right[i])] <- tr$id[i]
    ancestors <- function(id) { out <- character(0); while (!is.na(id <- parent[[id]])) out <- c(out, id); out }
    leaf_ids <- tr$id[tr$is_leaf]
    rows_of <- function(node) {
      below <- vapply(leaf_ids, function(l) node %in% ancestors(l), NA)
      which(leaf %in% as.integer(sub("L", "", leaf_ids[below])))
    }
    bad <- 0L
    for (i in which(!tr$is_leaf)) {
      f <- match(tr$feature[i], names(X))
      for (an in ancestors(tr$id[i])) bad <- bad + !(f %in% ref_find_split_v(X, info, g, h, rows_of(an), rp)$valid)
    }
    bad
  }
  skip <- vapply(1:6, function(s) unfounded(TRUE, s), 0L)
  plain <- vapply(1:6, function(s) unfounded(FALSE, s), 0L)
  expect_identical(skip, rep(0L, 6))
  expect_gt(sum(plain), 0L)  # without the rule b splits below a root where it had no valid split
})
