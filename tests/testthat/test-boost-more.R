# DART, extra_trees, interaction constraints, feature_fraction_bynode,
# path_smooth and max_delta_step (issue 26), each against plain R or
# lightgbm: the leaves of stumps and small trees recomputed from the rows
# they hold, DART's weights from the dropped sets, tree paths walked.

# Each leaf's set of features used on its path, for every tree of hb_trees().
path_features <- function(tr) {
  out <- list()
  for (k in unique(tr$tree)) {
    t <- tr[tr$tree == k, ]
    walk <- function(id, used) {
      nd <- t[t$id == id, ]
      if (nd$is_leaf) {
        out[[length(out) + 1L]] <<- used
        return(invisible())
      }
      u <- union(used, nd$feature)
      walk(nd$left, u)
      walk(nd$right, u)
    }
    walk(if (any(t$id == "N0")) "N0" else "L0", character())
  }
  out
}

# A stump's output for the rows of x (hb_trees() rows of one tree).
stump_predict <- function(t, x) {
  if (nrow(t) == 1L) return(rep(t$value, nrow(x)))
  root <- t[t$id == "N0", ]
  lv <- t$value[t$id == root$left]
  rv <- t$value[t$id == root$right]
  ifelse(x[[root$feature]] <= root$threshold, lv, rv)
}

dart_data <- function(n = 300, seed = 7) {
  set.seed(seed)
  x <- data.frame(a = round(runif(n), 2), b = round(runif(n), 2), c = round(runif(n), 2))
  list(x = x, y = 3 * x$a + 2 * (x$b > 0.5) + x$c + rnorm(n, sd = 0.2))
}

test_that("DART with drop_rate = 0 or skip_drop = 1 is gbdt, tree for tree", {
  d <- dart_data()
  common <- list(d$x, d$y, nrounds = 15L, num_leaves = 7L, seed = 5, min_data_in_leaf = 5L)
  g <- do.call(hb_quiet, common)
  for (extra in list(list(drop_rate = 0), list(skip_drop = 1, drop_rate = 0.5), list(drop_rate = 0,
                                                                                    xgboost_dart_mode = TRUE))) {
    m <- do.call(hb_quiet, c(common, list(boosting = "dart"), extra))
    expect_identical(hb_trees(m), hb_trees(g))
    expect_identical(predict(m, d$x), predict(g, d$x))
    expect_true(all(lengths(m$dart_dropped) == 0L))
    expect_identical(m$params$boosting, "dart")
  }
})

test_that("DART's dropped and new trees are weighted as LightGBM normalises them", {
  d <- dart_data()
  lr <- 0.3
  for (xgb in c(FALSE, TRUE)) {
    snaps <- list()
    cb <- function(iteration, evaluation_log, model) {
      snaps[[iteration]] <<- hb_trees(model)
      FALSE
    }
    m <- hb_quiet(d$x, d$y, nrounds = 12L, num_leaves = 2L, min_data_in_leaf = 5L, learning_rate = lr,
                  boosting = "dart", drop_rate = 0.5, skip_drop = 0.2, xgboost_dart_mode = xgb, seed = 11,
                  callbacks = list(cb))
    drops <- m$dart_dropped
    expect_length(drops, 12L)
    expect_gt(sum(lengths(drops)), 5L)  # the check below sees drops
    final <- hb_trees(m)
    init <- mean(d$y)  # squared error starts from the mean
    for (t in seq_len(12L)) {
      D <- drops[[t]]
      k <- length(D)
      expect_true(all(D >= 1L & D < t))
      keep <- if (xgb) k / (k + lr) else k / (k + 1)
      new_rate <- if (xgb) (if (k) lr / (lr + k) else lr) else lr / (1 + k)
      # earlier trees: the dropped ones rescaled by k / (k + 1) (xgboost: k / (k + lr)), the others unchanged
      if (t > 1L) {
        for (i in seq_len(t - 1L)) {
          before <- snaps[[t - 1L]]$value[snaps[[t - 1L]]$tree == i & snaps[[t - 1L]]$is_leaf]
          after <- snaps[[t]]$value[snaps[[t]]$tree == i & snaps[[t]]$is_leaf]
          expect_equal(after, before * (if (i %in% D) keep else 1), tolerance = 1e-12)
        }
      }
      # the new tree: new_rate x the mean residual of its leaf's rows, the
      # residuals taken from the scores without the dropped trees
      score <- rep(init, nrow(d$x))
      if (t > 1L) {
        prev <- snaps[[t - 1L]]
        for (i in setdiff(seq_len(t - 1L), D)) score <- score + stump_predict(prev[prev$tree == i, ], d$x)
      }
      tt <- snaps[[t]][snaps[[t]]$tree == t, ]
      rows <- tree_rows(snaps[[t]], d$x, t)
      for (leaf in tt$id[tt$is_leaf]) {
        r <- rows[[leaf]]
        expect_equal(tt$value[tt$id == leaf], new_rate * mean(d$y[r] - score[r]), tolerance = 1e-10)
      }
    }
    # predictions use the final weights, and survive saving
    pred <- rep(init, nrow(d$x))
    for (i in 1:12) pred <- pred + stump_predict(final[final$tree == i, ], d$x)
    expect_equal(predict(m, d$x), pred, tolerance = 1e-10)
    f <- tempfile(fileext = ".txt")
    hb_save(m, f)
    m2 <- hb_load(f)
    expect_identical(predict(m2, d$x), predict(m, d$x))
    expect_identical(m2$params$xgboost_dart_mode, xgb)
  }
})

test_that("DART's drop counts follow drop_rate, max_drop and skip_drop", {
  d <- dart_data(n = 150)
  run <- function(...) hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 3L, boosting = "dart", seed = 3, ...)
  # every earlier iteration, every round
  all_in <- run(drop_rate = 1, skip_drop = 0, max_drop = 0, uniform_drop = TRUE)
  expect_identical(lapply(all_in$dart_dropped, function(v) v), lapply(0:9, function(t) seq_len(t)))
  capped <- run(drop_rate = 1, skip_drop = 0, max_drop = 2, uniform_drop = TRUE)
  expect_true(all(lengths(capped$dart_dropped) <= 2L))
  # rate min(1, max_drop / iterations so far): certain drops in rounds 2 and 3
  expect_identical(capped$dart_dropped[2:3], list(1L, 1:2))
  # the same seed, the same drops; another seed, others
  expect_identical(run(drop_rate = 0.4, skip_drop = 0.3)$dart_dropped, run(drop_rate = 0.4, skip_drop = 0.3)$dart_dropped)
})

test_that("a continued DART model numbers its drops as its own iterations and never drops the base's trees", {
  d <- dart_data(n = 150)
  run <- function(n, ...) hb_quiet(d$x, d$y, nrounds = n, num_leaves = 3L, boosting = "dart", seed = 3,
                                   drop_rate = 1, skip_drop = 0, max_drop = 0, uniform_drop = TRUE, ...)
  base <- run(4L)
  more <- run(3L, init_model = base)
  expect_identical(more$niter, 7L)
  # the base's own record, then every new round drops the new rounds before it (iterations 5, 6)
  expect_identical(more$dart_dropped, c(base$dart_dropped, list(integer(0), 5L, 5:6)))
  # the base's trees are untouched: its four iterations' leaf values as in the base model
  tb <- hb_trees(base)
  tm <- hb_trees(more)
  expect_identical(tm$value[tm$tree <= 4L], tb$value)
  # from a gbdt model: empty entries for its iterations
  from_gbdt <- run(2L, init_model = hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 3L))
  expect_identical(from_gbdt$dart_dropped, list(integer(0), integer(0), integer(0), integer(0), 4L))
})

test_that("extra_trees draws one threshold per feature and node, uniformly over the bins", {
  set.seed(3)
  n <- 60
  x <- data.frame(v = rep(1:10, length.out = n))
  y <- x$v + rnorm(n, sd = 0.5)
  left_n <- integer()
  for (s in 1:150) {
    m <- hb_quiet(x, y, nrounds = 1L, num_leaves = 2L, min_data_in_leaf = 1L, extra_trees = TRUE, seed = s)
    tr <- hb_trees(m)
    root <- tr[tr$id == "N0", ]
    r <- tree_rows(tr, x)
    gl <- sum(mean(y) - y[r[[root$left]]])
    nl <- length(r[[root$left]])
    # the gain is plain R's at that threshold (g = score - y, h = 1)
    expect_equal(root$gain, gl^2 / nl + gl^2 / (n - nl), tolerance = 1e-9)
    left_n <- c(left_n, nl / 6)
  }
  # thresholds 1..9 (of the 10 values), each about equally often
  tab <- table(factor(left_n, levels = 1:9))
  expect_true(all(tab > 0))
  expect_gt(suppressWarnings(stats::chisq.test(tab)$p.value), 1e-3)
  # gbdt always takes the best threshold
  g <- vapply(1:5, function(s) hb_trees(hb_quiet(x, y, nrounds = 1L, num_leaves = 2L, min_data_in_leaf = 1L,
                                                  seed = s))$threshold[1L], 0)
  expect_length(unique(g), 1L)
  expect_gt(length(unique(left_n)), 5L)
})

test_that("interaction constraints: no tree path mixes features of two groups, as in lightgbm", {
  set.seed(5)
  n <- 1500
  x <- data.frame(a = runif(n), b = runif(n), c = runif(n), d = runif(n), e = runif(n))
  y <- x$a * x$c + x$b * x$d + 0.3 * x$e + rnorm(n, sd = 0.05)
  groups <- list(c("a", "b"), c("c", "d"))
  all_groups <- c(groups, list("e"))  # columns in no group make one more (LightGBM's R package)
  m <- hb_quiet(x, y, nrounds = 30L, num_leaves = 15L, min_data_in_leaf = 5L, interaction_constraints = groups,
                seed = 1)
  paths <- path_features(hb_trees(m))
  ok <- vapply(paths, function(p) any(vapply(all_groups, function(g) all(p %in% g), NA)), NA)
  expect_true(all(ok))
  used <- unique(unlist(paths))
  expect_true(all(c("a", "c", "e") %in% used))
  # without the constraints, paths do mix the groups
  free <- path_features(hb_trees(hb_quiet(x, y, nrounds = 30L, num_leaves = 15L, min_data_in_leaf = 5L, seed = 1)))
  expect_false(all(vapply(free, function(p) any(vapply(all_groups, function(g) all(p %in% g), NA)), NA)))
  # quantized training keeps them too
  q <- hb_quiet(x, y, nrounds = 10L, num_leaves = 15L, min_data_in_leaf = 5L, interaction_constraints = groups,
                quantized = TRUE, seed = 1)
  qpaths <- path_features(hb_trees(q))
  expect_true(all(vapply(qpaths, function(p) any(vapply(all_groups, function(g) all(p %in% g), NA)), NA)))
  # by column number, the same model
  m2 <- hb_quiet(x, y, nrounds = 30L, num_leaves = 15L, min_data_in_leaf = 5L,
                 interaction_constraints = list(1:2, c(3, 4)), seed = 1)
  expect_identical(hb_trees(m2), hb_trees(m))
  expect_identical(m$params$interaction_constraints, all_groups)
  # singleton groups make the model additive: f(a1, c1) + f(a2, c2) = f(a1, c2) + f(a2, c1)
  single <- hb_quiet(x, y, nrounds = 20L, num_leaves = 7L, interaction_constraints = list("a", "c"), seed = 1)
  grid <- data.frame(a = c(0.2, 0.8, 0.2, 0.8), b = 0.5, c = c(0.3, 0.9, 0.9, 0.3), d = 0.5, e = 0.5)
  p <- predict(single, grid)
  expect_equal(p[1] + p[2], p[3] + p[4], tolerance = 1e-12)

  skip_if_not_installed("lightgbm")
  X <- as.matrix(x)
  lg <- lightgbm::lgb.train(params = list(objective = "regression", num_leaves = 15L, min_data_in_leaf = 5L,
                                          interaction_constraints = groups, verbose = -1L, num_threads = 2L),
                            data = lightgbm::lgb.Dataset(X, label = y), nrounds = 30L)
  dt <- as.data.frame(lightgbm::lgb.model.dt.tree(lg))
  splits <- dt[!is.na(dt$split_index), ]
  lpaths <- list()
  for (i in which(!is.na(dt$leaf_index))) {
    t <- dt$tree_index[i]
    s <- splits[splits$tree_index == t, ]
    on_path <- character()
    node <- dt$leaf_parent[i]
    while (!is.na(node)) {
      nd <- s[s$split_index == node, ]
      on_path <- c(on_path, nd$split_feature)
      node <- nd$node_parent
    }
    lpaths[[length(lpaths) + 1L]] <- unique(on_path)
  }
  lok <- vapply(lpaths, function(p) any(vapply(all_groups, function(g) all(p %in% g), NA)), NA)
  expect_true(all(lok))
  # both use the same features, and fit about as well
  expect_setequal(unique(unlist(lpaths)), used)
  expect_lt(abs(rmse(y, predict(m, x)) / rmse(y, predict(lg, X)) - 1), 0.1)
})

test_that("feature_fraction_bynode samples columns per node from the seed", {
  d <- dart_data()
  m <- hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 7L, feature_fraction_bynode = 0.34, seed = 2)
  g <- hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 7L, seed = 2)
  expect_false(identical(hb_trees(m)$feature, hb_trees(g)$feature))
  expect_identical(hb_trees(m), hb_trees(hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 7L,
                                                  feature_fraction_bynode = 0.34, seed = 2)))
  # one column a node: a tree's root splits on some column, and over the
  # trees several columns appear at the root (the best one would always win)
  tr <- hb_trees(m)
  expect_gt(length(unique(tr$feature[tr$id == "N0"])), 1L)
  expect_length(unique(hb_trees(g)$feature[hb_trees(g)$id == "N0"]), 1L)
})

test_that("path_smooth: leaf outputs and gains follow LightGBM's formula, checked in plain R", {
  d <- dart_data(n = 400)
  alpha <- 25
  lr <- 0.5
  m <- hb_quiet(d$x, d$y, nrounds = 1L, num_leaves = 4L, max_depth = 2L, min_data_in_leaf = 10L,
                learning_rate = lr, path_smooth = alpha, seed = 1)
  tr <- hb_trees(m)
  rows <- tree_rows(tr, d$x)
  res <- d$y - mean(d$y)  # -gradient at the starting score; hessians 1
  # each node's output (before the learning rate): the root's own, a
  # child's own mean smoothed towards its parent's by its rows
  out <- list(N0 = mean(res[rows$N0]))
  smooth <- function(r, parent) {
    w <- length(r) / alpha
    mean(res[r]) * w / (w + 1) + parent / (w + 1)
  }
  for (id in tr$id) {
    nd <- tr[tr$id == id, ]
    if (nd$is_leaf) next
    for (ch in c(nd$left, nd$right)) out[[ch]] <- smooth(rows[[ch]], out[[id]])
  }
  leaves <- tr[tr$is_leaf, ]
  expect_equal(leaves$value, unname(lr * unlist(out[leaves$id])), tolerance = 1e-10)
  expect_true(any(abs(leaves$value - lr * vapply(rows[leaves$id], function(r) mean(res[r]), 0)) > 1e-3))
  # a split's gain: each child at its smoothed output, less the node at its own mean smoothed towards
  # the output it was given (LightGBM's gain shift; the root's is its own)
  worth <- function(r, o) -(2 * sum(-res[r]) * o + length(r) * o^2)
  for (id in tr$id[!tr$is_leaf]) {
    nd <- tr[tr$id == id, ]
    expect_equal(nd$gain, worth(rows[[nd$left]], out[[nd$left]]) + worth(rows[[nd$right]], out[[nd$right]]) -
                   worth(rows[[id]], smooth(rows[[id]], out[[id]])), tolerance = 1e-8)
  }
  # the growth order that follows: lightgbm's trees, where the two gain shifts differ in which leaf splits next
  skip_if_not_installed("lightgbm")
  set.seed(1)
  n <- 2000
  X <- cbind(a = rnorm(n), b = runif(n), c = rnorm(n), d = rnorm(n))
  y <- X[, "a"] * X[, "b"] + X[, "c"] * X[, "d"] + rnorm(n, sd = 0.3)
  for (ps in c(10, 50)) {
    lg <- lightgbm::lgb.train(list(objective = "regression", num_leaves = 8L, min_data_in_leaf = 5L, path_smooth = ps,
                                   num_threads = 1L, verbose = -1L, deterministic = TRUE, force_col_wise = TRUE),
                              lightgbm::lgb.Dataset(X, label = y), nrounds = 5L)
    hb <- hb_quiet(X, y, nrounds = 5L, num_leaves = 8L, min_data_in_leaf = 5L, path_smooth = ps,
                   skip_unsplittable = TRUE, nthreads = 1L, seed = 1)
    expect_lt(max(abs(predict(lg, X) - predict(hb, X))), 1e-6)
  }
})

test_that("max_delta_step caps every leaf output, for every loss", {
  set.seed(2)
  n <- 400
  x <- data.frame(a = runif(n), b = runif(n))
  cases <- list(
    regression = list(y = 50 * x$a + rnorm(n), obj = "regression"),
    l1 = list(y = 50 * x$a + rnorm(n), obj = "l1"),
    huber = list(y = 50 * x$a + rnorm(n), obj = "huber"),
    binary = list(y = factor(x$a > 0.5), obj = "binary"),
    poisson = list(y = rpois(n, exp(3 * x$a)), obj = "poisson"),
    multiclass = list(y = factor(cut(x$a, 3, labels = c("p", "q", "r"))), obj = "multiclass")
  )
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    m <- hb_quiet(x, cs$y, objective = cs$obj, nrounds = 5L, num_leaves = 7L, learning_rate = 0.5,
                  max_delta_step = 0.2, seed = 1)
    v <- hb_trees(m)$value[hb_trees(m)$is_leaf]
    expect_true(all(abs(v) <= 0.5 * 0.2 + 1e-12), info = nm)
    expect_true(any(abs(v) > 0.5 * 0.2 - 1e-9), info = nm)  # the cap binds
  }
})

test_that("max_delta_step: capped stumps and their gains as LightGBM computes them", {
  set.seed(4)
  n <- 500
  x <- data.frame(v = sample(1:6, n, TRUE), w = sample(1:4, n, TRUE))
  y <- as.integer(runif(n) < ifelse(x$v >= 4, 0.85, 0.2))
  m <- hb_quiet(x, factor(y), nrounds = 3L, num_leaves = 2L, learning_rate = 1, max_delta_step = 0.3,
                min_data_in_leaf = 1L, min_sum_hessian_in_leaf = 0, seed = 1)
  tr <- hb_trees(m)
  # first stump in plain R: g = p0 - y, h = p0 (1 - p0) at the log-odds start
  p0 <- mean(y)
  r <- tree_rows(tr, x)
  root <- tr[tr$tree == 1 & tr$id == "N0", ]
  cap <- function(o) pmax(pmin(o, 0.3), -0.3)
  side <- function(rr) {
    G <- sum(p0 - y[rr]); H <- length(rr) * p0 * (1 - p0)
    o <- cap(-G / H)
    c(o = o, worth = -(2 * G * o + H * o^2))
  }
  L <- side(r[[root$left]]); R <- side(r[[root$right]]); P <- side(seq_len(n))
  expect_equal(tr$value[tr$tree == 1 & tr$id == root$left], unname(L["o"]), tolerance = 1e-12)
  expect_equal(root$gain, unname(L["worth"] + R["worth"] - P["worth"]), tolerance = 1e-8)
  expect_identical(abs(tr$value[tr$tree == 1 & tr$is_leaf]), c(0.3, 0.3))

  skip_if_not_installed("lightgbm")
  X <- as.matrix(x)
  lg <- lightgbm::lgb.train(params = list(objective = "binary", num_leaves = 2L, learning_rate = 1,
                                          max_delta_step = 0.3, min_data_in_leaf = 1L,
                                          min_sum_hessian_in_leaf = 0, verbose = -1L, num_threads = 2L),
                            data = lightgbm::lgb.Dataset(X, label = y), nrounds = 3L)
  expect_equal(predict(m, x, type = "raw"), predict(lg, X, type = "raw"), tolerance = 1e-6)
})

test_that("the same seed gives the same model on 1 and 2 threads", {
  set.seed(9)
  n <- 2000
  p <- 70  # enough features for the threaded split search
  x <- as.data.frame(matrix(runif(n * p), n))
  y <- x[[1]] * x[[2]] + x[[3]] + rnorm(n, sd = 0.1)
  fit <- function(th) {
    hb_quiet(x, y, nrounds = 8L, num_leaves = 15L, boosting = "dart", drop_rate = 0.5, skip_drop = 0,
             extra_trees = TRUE, feature_fraction_bynode = 0.5, path_smooth = 2, max_delta_step = 1,
             interaction_constraints = list(1:40, 30:70), seed = 12, nthreads = th)
  }
  a <- fit(1L)
  b <- fit(2L)
  expect_identical(a$model_text, b$model_text)
  expect_identical(a$dart_dropped, b$dart_dropped)
})

test_that("bad values are classed errors naming the argument", {
  d <- dart_data(n = 60)
  f <- function(...) hb_quiet(d$x, d$y, nrounds = 2L, ...)
  expect_input_error(f(boosting = "dart", drop_rate = 2), "drop_rate")
  expect_input_error(f(boosting = "dart", skip_drop = -0.1), "skip_drop")
  expect_input_error(f(boosting = "dart", max_drop = "a"), "max_drop")
  expect_input_error(f(boosting = "dart", xgboost_dart_mode = NA), "xgboost_dart_mode")
  expect_input_error(f(drop_rate = 0.3), "drop_rate.*dart")
  expect_input_error(f(extra_trees = "yes"), "extra_trees")
  expect_input_error(f(feature_fraction_bynode = 0), "feature_fraction_bynode")
  expect_input_error(f(path_smooth = -1), "path_smooth")
  expect_input_error(f(max_delta_step = NA), "max_delta_step")
  expect_input_error(f(interaction_constraints = "a"), "interaction_constraints")
  expect_input_error(f(interaction_constraints = list(c("a", "zz"))), "interaction_constraints.*zz")
  expect_input_error(f(interaction_constraints = list(9)), "interaction_constraints.*9")
  expect_input_error(f(interaction_constraints = list(character())), "interaction_constraints")
  expect_input_error(f(boosting = "dart", early_stopping_rounds = 2, valid = list(v = list(x = d$x, y = d$y))),
                     "early_stopping_rounds")
  expect_input_error(f(boosting = "dart", objective = function(p, l) list(grad = p - l, hess = rep(1, length(l)))),
                     "dart")
  expect_input_error(f(extra_trees = TRUE, quantized = TRUE), "quantized")
  expect_input_error(f(path_smooth = 1, quantized = TRUE), "path_smooth.*quantized = FALSE")
  expect_input_error(f(max_delta_step = 1, extra_trees = TRUE, quantized = TRUE), "extra_trees.*max_delta_step")
  # the one option the GPU learner lacks: refused by name before any device is looked for
  expect_error(f(exact_sums = TRUE, device = "cuda"), class = "histboost_error_device",
               regexp = "`exact_sums` trains on the CPU only.*device = \"cpu\"")
})

test_that("params takes LightGBM's and xgboost's names for these", {
  d <- dart_data(n = 120)
  f <- function(...) hb_quiet(d$x, d$y, nrounds = 4L, num_leaves = 4L, seed = 1, ...)
  ref <- f(boosting = "dart", drop_rate = 0.5, skip_drop = 0, uniform_drop = TRUE, xgboost_dart_mode = TRUE)
  via <- f(params = list(booster = "dart", rate_drop = 0.5, skip_drop = 0, sample_type = "uniform",
                         normalize_type = "tree"))
  expect_identical(via$model_text, ref$model_text)
  expect_identical(f(params = list(colsample_bynode = 0.5, max_leaf_output = 0.3, extra_tree = TRUE))$model_text,
                   f(feature_fraction_bynode = 0.5, max_delta_step = 0.3, extra_trees = TRUE)$model_text)
  expect_identical(f(params = list(max_delta_step = 0.2, interaction_constraints = list("a", c("b", "c"))))$model_text,
                   f(max_delta_step = 0.2, interaction_constraints = list("a", c("b", "c")))$model_text)
  expect_input_error(f(params = list(one_drop = 1)), "one_drop")
  # LightGBM's separate seeds: every draw here comes from `seed`, which the message says to give
  for (nm in c("bagging_seed", "feature_fraction_seed", "extra_seed")) {
    expect_input_error(f(params = stats::setNames(list(3L), nm)), paste0("`", nm, "` is not needed: .*give `seed`"))
  }
  expect_input_error(f(params = list(data_random_seed = 3L)), "`data_random_seed` is not needed")
  expect_input_error(f(params = list(bagging_fraction_seed = 3L)), "`bagging_fraction_seed` is not needed")
  expect_input_error(f(params = list(data_seed = 3L)), "`data_seed` is not needed")
  # as arguments too (parsnip's set_engine() passes them so)
  expect_input_error(f(bagging_seed = 3L), "`bagging_seed` is not needed: .*give `seed`")
  expect_input_error(hb_dataset(d$x, d$y, data_random_seed = 3L), "`data_random_seed` is not needed")
  expect_input_error(f(params = list(normalize_type = "forest")), "normalize_type")
})

test_that("DART equals lightgbm's where its drops are certain (uniform drops at rate 1), both normalisations", {
  skip_if_not_installed("lightgbm")
  # drop_rate 1 with uniform drops and no skip: every earlier tree is dropped
  # every round, so both libraries drop the same trees and the models must
  # agree. LightGBM bakes boost_from_average's start into its first tree,
  # which DART then rescales; histboost keeps the start apart (as xgboost
  # does), so the comparison starts both from 0.
  set.seed(5)
  n <- 400
  X <- matrix(runif(n * 3), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  y <- 3 * X[, 1] + (X[, 2] > 0.5) + rnorm(n, sd = 0.2)
  for (mode in c(FALSE, TRUE)) {
    lg <- lightgbm::lgb.train(
      params = list(objective = "regression", boosting = "dart", num_leaves = 4L, learning_rate = 0.3,
                    min_data_in_leaf = 20L, drop_rate = 1, max_drop = -1L, skip_drop = 0, uniform_drop = TRUE,
                    xgboost_dart_mode = mode, boost_from_average = FALSE, verbose = -1L, num_threads = 1L),
      data = lightgbm::lgb.Dataset(X, label = y, params = list(verbose = -1L)), nrounds = 8L)
    hb <- histboost(X, y, boosting = "dart", num_leaves = 4L, learning_rate = 0.3, min_data_in_leaf = 20L,
                    drop_rate = 1, max_drop = 0L, skip_drop = 0, uniform_drop = TRUE, xgboost_dart_mode = mode,
                    nrounds = 8L, verbose = 0, nthreads = 1, init_score = rep(0, n))
    p <- predict(hb, X, init_score = rep(0, n))
    expect_gt(sd(p), 0.1)
    expect_equal(p, predict(lg, X), tolerance = 1e-6, label = paste("xgboost_dart_mode", mode))
    # boost_from_average = FALSE is the same start without an offset
    hb0 <- histboost(X, y, boosting = "dart", num_leaves = 4L, learning_rate = 0.3, min_data_in_leaf = 20L,
                     drop_rate = 1, max_drop = 0L, skip_drop = 0, uniform_drop = TRUE, xgboost_dart_mode = mode,
                     nrounds = 8L, verbose = 0, nthreads = 1, boost_from_average = FALSE)
    expect_equal(predict(hb0, X), predict(lg, X), tolerance = 1e-6, label = paste("from 0, xgboost_dart_mode", mode))
  }
})

test_that("interaction constraints with feature_fraction_bynode: the sample is drawn from the columns a node allows", {
  set.seed(1)
  n <- 3000
  X <- matrix(rnorm(n * 10), n, 10, dimnames = list(NULL, paste0("x", 1:10)))
  y <- X[, 1] * X[, 2] + X[, 3] * X[, 4] + X[, 5] * X[, 6] + X[, 7] * X[, 8] + X[, 9] * X[, 10] + rnorm(n, sd = 0.5)
  ic <- list(c("x1", "x2"), c("x3", "x4"), c("x5", "x6"), c("x7", "x8"), c("x9", "x10"))
  m <- hb_quiet(X, y, nrounds = 20L, nthreads = 1L, seed = 1, interaction_constraints = ic,
                feature_fraction_bynode = 0.2)
  tr <- hb_trees(m)
  # round(0.2 x 10 columns) = 2 a node, drawn from the two its branch allows below the root: every tree
  # grows its 31 leaves (drawn from all ten, then filtered, most nodes kept none: about 3 leaves a tree)
  expect_identical(as.vector(tapply(tr$is_leaf, tr$tree, sum)), rep(31L, 20))
  # and every split below the root is in the root's pair
  grp <- setNames(rep(seq_along(ic), lengths(ic)), unlist(ic))
  paths <- path_features(tr)
  expect_true(all(vapply(paths, function(p) length(unique(grp[p])) == 1L, NA)))
  skip_if_not_installed("lightgbm")
  lg <- lightgbm::lgb.train(list(objective = "regression", num_threads = 1L, verbose = -1L, interaction_constraints = ic,
                                 feature_fraction_bynode = 0.2), lightgbm::lgb.Dataset(X, label = y), nrounds = 20L)
  dt <- as.data.frame(lightgbm::lgb.model.dt.tree(lg))
  expect_identical(as.vector(tapply(!is.na(dt$leaf_index), dt$tree_index, sum)), rep(31L, 20))
  expect_lt(rmse(y, predict(m, X)) / rmse(y, predict(lg, X)), 1.1)
})
