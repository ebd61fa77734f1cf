# The plain-R references (helper-histboost.R) checked on cases small enough
# to compute by hand, and against each other. Numbers in expect_equal() were
# worked out on paper (for squared error with lambda = 0 and the mean as the
# start, the gain is the between-group sum of squares).

hand_reg <- function(y) {
  init <- mean(y)
  list(g = init - y, h = rep(1, length(y)), init = init)
}

test_that("brute force finds the hand-computed numeric split", {
  X <- data.frame(x = c(1, 2, 3, 4, 5, 6))
  y <- c(1, 1, 1, 5, 5, 6)
  s <- hand_reg(y)
  b <- ref_bruteforce_split(X, s$g, s$h, ref_params(cat_l2 = 0))
  expect_equal(b$gain, 169 / 6, tolerance = 1e-14)   # 3*(13/6)^2 * 2
  expect_equal(b$left, c(TRUE, TRUE, TRUE, FALSE, FALSE, FALSE))
  expect_equal(b$second, 49 / 3, tolerance = 1e-14)  # threshold 4.5: 4*(7/6)^2 + 2*(14/6)^2
  # with lambda_l2 = 1: (13/2)^2/4 twice
  b1 <- ref_bruteforce_split(X, s$g, s$h, ref_params(lambda_l2 = 1))
  expect_equal(b1$gain, 169 / 8, tolerance = 1e-14)
  # min_data_in_leaf = 4 leaves no valid split of 6 rows
  expect_null(ref_bruteforce_split(X, s$g, s$h, ref_params(min_data_in_leaf = 4)))
  # min_data_in_leaf = 3 allows only 3|4
  expect_equal(ref_bruteforce_split(X, s$g, s$h, ref_params(min_data_in_leaf = 3))$gain, 169 / 6)
})

test_that("brute force and the scan rules agree on a hand-computed split with NAs", {
  X <- data.frame(x = c(1, 2, NA, 4, 5, NA))
  y <- c(0, 0, 1, 9, 9, 1)
  s <- hand_reg(y)
  # best: values <= 3 plus the missing rows left: 4*(17/6)^2 + 2*(17/3)^2
  b <- ref_bruteforce_split(X, s$g, s$h, ref_params())
  expect_equal(b$gain, 867 / 9, tolerance = 1e-14)
  expect_equal(b$left, c(TRUE, TRUE, TRUE, FALSE, FALSE, TRUE))
  info <- ref_bin_info(X, min_data_in_bin = 1L)  # a bin a value, as the brute force splits
  f <- ref_find_split(X, info, s$g, s$h, seq_len(6), ref_params())
  expect_equal(f$gain, 867 / 9, tolerance = 1e-14)
  expect_equal(f$threshold, 3)
  expect_true(f$default_left)
  # "all values vs missing" when the missing rows are the odd ones out
  y2 <- c(0, 0, 10, 1, 1, 10)
  s2 <- hand_reg(y2)
  f2 <- ref_find_split(X, info, s2$g, s2$h, seq_len(6), ref_params())
  expect_equal(f2$gain, 1083 / 9, tolerance = 1e-14)  # 4*(19/6)^2 + 2*(19/3)^2
  expect_identical(f2$threshold, Inf)
  expect_false(f2$default_left)
})

test_that("brute force finds the hand-computed categorical split (NA as a category)", {
  X <- data.frame(x = factor(c("a", "a", "b", "b", "c", "c", NA, NA)))
  y <- c(1, 1.2, 5, 5.2, 1.1, 0.9, 4.9, 5.1)
  s <- hand_reg(y)
  p0 <- ref_params(cat_l2 = 0, cat_smooth = 0, min_data_per_group = 1)
  # (every level keeps its bin here: with LightGBM's min_data_in_bin = 3 the
  # third level's two rows would share the missing bin)
  expect_identical(ref_bin_info(X)$x$levels, c("a", "b"))
  b <- ref_bruteforce_split(X, s$g, s$h, p0)
  expect_equal(b$gain, 32, tolerance = 1e-12)         # 4*2^2 + 4*2^2
  expect_true(all(b$left == c(TRUE, TRUE, FALSE, FALSE, TRUE, TRUE, FALSE, FALSE)) ||
                all(b$left == !c(TRUE, TRUE, FALSE, FALSE, TRUE, TRUE, FALSE, FALSE)))
  # three levels and NA are four bins: one level against the rest by
  # default (max_cat_to_onehot = 4); b or c alone (|G| = 4.1 each, H = 2 of 8):
  # 4.1^2 / 2 + 4.1^2 / 6
  f0 <- ref_find_split(X, ref_bin_info(X, min_data_in_bin = 1L), s$g, s$h, seq_len(8), p0)
  expect_equal(f0$gain, 4.1^2 * (1 / 2 + 1 / 6), tolerance = 1e-12)
  expect_true(identical(f0$left_levels, "b") || identical(f0$left_levels, "c"))
  # many against many (max_cat_to_onehot = 1) finds the best of all partitions
  p0$max_cat_to_onehot <- 1L
  f <- ref_find_split(X, ref_bin_info(X, min_data_in_bin = 1L), s$g, s$h, seq_len(8), p0)
  expect_equal(f$gain, 32, tolerance = 1e-12)
  # {b, NA} (lowest G/H first) and its complement {a, c} have equal gain in
  # exact arithmetic; either orientation describes the same partition
  left_ac <- setequal(f$left_levels, c("a", "c")) && !f$default_left
  left_bna <- setequal(f$left_levels, "b") && f$default_left
  expect_true(left_ac || left_bna)
  # cat_l2 = 1 enters the children's terms (the parent's G is 0): 8^2/5 * 2
  f1 <- ref_find_split(X, ref_bin_info(X, min_data_in_bin = 1L), s$g, s$h, seq_len(8),
                       ref_params(cat_l2 = 1, cat_smooth = 0, min_data_per_group = 1, max_cat_to_onehot = 1L))
  expect_equal(f1$gain, 25.6, tolerance = 1e-12)
  # min_data_per_group = 3: two categories (4 rows) join before a candidate, and 4 stay right
  f3 <- ref_find_split(X, ref_bin_info(X, min_data_in_bin = 1L), s$g, s$h, seq_len(8),
                       ref_params(cat_l2 = 0, cat_smooth = 0, min_data_per_group = 3, max_cat_to_onehot = 1L))
  expect_equal(f3$gain, 32, tolerance = 1e-12)
  # min_data_per_group = 5: the right side can never keep 5 rows once 5 have joined the left
  expect_null(ref_find_split(X, ref_bin_info(X, min_data_in_bin = 1L), s$g, s$h, seq_len(8),
                             ref_params(cat_l2 = 0, cat_smooth = 0, min_data_per_group = 5, max_cat_to_onehot = 1L)))
})

test_that("reference grower: hand-computed stump, binary, and tree structure", {
  X <- data.frame(x = c(1, 1, 1, 2, 2, 2))
  y <- c(0, 0, 1, 1, 1, 1)
  fit <- ref_boost(X, y, "binary", ref_params(), nrounds = 1)
  expect_equal(fit$init, log(2), tolerance = 1e-14)   # p = 2/3
  tr <- fit$trees[[1]][[1]]
  expect_equal(tr$gains, 3, tolerance = 1e-12)        # (1 / (2/3)) * 2
  expect_equal(tr$leaf_values, c(-1.5, 1.5), tolerance = 1e-12)
  expect_equal(ref_boost_raw(fit, X)[, 1], log(2) + rep(c(-1.5, 1.5), each = 3), tolerance = 1e-12)
  # three leaves on the 6-row regression case: 3|4 first, then 4|5 on the right
  X3 <- data.frame(x = c(1, 2, 3, 4, 5, 6))
  y3 <- c(1, 1, 1, 5, 5, 7)
  fit3 <- ref_boost(X3, y3, "regression", ref_params(num_leaves = 3L), nrounds = 1, min_data_in_bin = 1L)
  tr3 <- fit3$trees[[1]][[1]]
  expect_equal(ref_tree_leaf(tr3, X3), c(0L, 0L, 0L, 1L, 1L, 2L))
  expect_equal(ref_boost_raw(fit3, X3)[, 1], c(1, 1, 1, 5, 5, 7), tolerance = 1e-12)
  # root: 3*(7/3)^2 * 2; then the right leaf {5,5,7}: 2*(2/3)^2 + (4/3)^2
  expect_equal(tr3$gains, c(98 / 3, 8 / 3), tolerance = 1e-12)
  # max_depth = 1 stops after the root split
  fitd <- ref_boost(X3, y3, "regression", ref_params(num_leaves = 3L, max_depth = 1L), nrounds = 1, min_data_in_bin = 1L)
  expect_length(fitd$trees[[1]][[1]]$leaf_values, 2L)
})

test_that("scan rules reach the brute-force optimum under the Fisher conditions", {
  p0 <- ref_params(cat_l2 = 0, cat_smooth = 0, min_data_per_group = 1,
                   max_cat_threshold = 64L, min_data_in_leaf = 2L)
  for (seed in 1:6) {
    d <- gen_mixed(seed, n = 60, nnum = 1, ncat = 2, nlev = 5)
    s <- hand_reg(d$y)
    b <- ref_bruteforce_split(d$x, s$g, s$h, p0)
    f <- ref_find_split(d$x, ref_bin_info(d$x, min_data_in_bin = 1L), s$g, s$h, seq_len(60), p0)  # a bin a value, as the brute force
    expect_equal(f$gain, b$gain, tolerance = 1e-12)
    expect_equal(f$feature, b$feature)
  }
})

test_that("brute force with estimated counts: hand-computed case where the estimate decides", {
  # n = 6, H = 6: a group's estimated rows are its hessian sum, rounded.
  # Groups x = 1, 2, 3 have 2 rows each but hessian sums 4, 1, 1.
  X <- data.frame(x = c(1, 1, 2, 2, 3, 3))
  g <- c(1, 1, 1, 1, -2, -2)
  h <- c(2, 2, 0.5, 0.5, 0.5, 0.5)
  p <- ref_params(min_data_in_leaf = 2L)
  # exact: 2|4 rows gives 2^2/4 + 2^2/2 = 3, 4|2 rows gives 4^2/5 + 4^2/1 = 19.2
  bx <- ref_bruteforce_split(X, g, h, p, counts = "exact")
  expect_equal(bx$gain, 19.2, tolerance = 1e-14)
  expect_equal(bx$left, c(TRUE, TRUE, TRUE, TRUE, FALSE, FALSE))
  # estimated: x <= 2 is 4 + 1 = 5 rows, leaving 6 - 5 = 1 < 2 on the right
  be <- ref_bruteforce_split(X, g, h, p, counts = "estimate")
  expect_equal(be$gain, 3, tolerance = 1e-14)
  expect_equal(be$left, c(TRUE, TRUE, FALSE, FALSE, FALSE, FALSE))
  # equal hessians: the estimate is exact
  s <- hand_reg(c(1, 1, 1, 5, 5, 6))
  X6 <- data.frame(x = 1:6 + 0)
  expect_identical(ref_bruteforce_split(X6, s$g, s$h, p, counts = "estimate"),
                   ref_bruteforce_split(X6, s$g, s$h, p, counts = "exact"))
  # categories: `c` has 1 row but hessian 1.5, so its estimate is 2 (n = 6,
  # H = 6); with min_data_per_group = 2 it takes part only when estimated
  Xc <- data.frame(x = factor(c("a", "a", "a", "b", "b", "c")))
  hc <- c(1, 1, 1, 0.75, 0.75, 1.5)    # sums: a 3, b 1.5, c 1.5
  gc <- c(-1, -1, -1, -0.5, -0.5, 4)   # sums: a -3, b -1, c 4 (G = 0)
  pc <- ref_params(min_data_in_leaf = 1L, min_data_per_group = 2L, cat_l2 = 0)
  # exact: `c` stays right; {a} | {b, c} = 9/3 + 9/3 beats {b} | {a, c}
  bx <- ref_bruteforce_split(Xc, gc, hc, pc, counts = "exact")
  expect_equal(bx$gain, 6, tolerance = 1e-12)
  expect_true(all(bx$left == (Xc$x == "a")) || all(bx$left == (Xc$x != "a")))
  # estimated: {c} | {a, b} = 16/1.5 + 16/4.5 is allowed and best
  be <- ref_bruteforce_split(Xc, gc, hc, pc, counts = "estimate")
  expect_equal(be$gain, 128 / 9, tolerance = 1e-12)
  expect_true(all(be$left == (Xc$x == "c")) || all(be$left == (Xc$x != "c")))
  # min_data_per_group = 3: only `a` qualifies (b and c estimate 2): no split
  pc$min_data_per_group <- 3L
  expect_null(ref_bruteforce_split(Xc, gc, hc, pc, counts = "estimate"))
})
