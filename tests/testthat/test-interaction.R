# predict(type = "interaction"): SHAP interaction values against the
# Shapley interaction index computed from its definition by enumerating
# feature subsets in plain R, and the identities they obey: each row of a
# row's matrix sums to that feature's contribution (type = "contrib"), the
# whole matrix to the raw score, and the matrix is symmetric.

# The game of ref_shap (helper-histboost.R): v(S), a tree's expected output
# with the features in S known, unknown splits averaged by the training rows
# below each side (hb_trees()' leaf counts). From v summed over the trees of
# a class: phi_ij = sum over S without i, j of |S|! (p - |S| - 2)! /
# (2 (p - 1)!) (v(S+i+j) - v(S+i) - v(S+j) + v(S)) for i != j, phi_ii =
# phi_i - sum_j phi_ij with phi_i the Shapley value, and the bias entry
# v(empty set) plus the model's starting score. Returns n x (p+1) x (p+1) x K.
ref_interaction <- function(model, newdata, init = 0) {
  g <- ref_tree_game(model)
  p <- g$p
  K <- g$K
  subsets <- g$subsets
  idx <- g$idx
  init <- rep_len(init, K)
  out <- array(0, c(nrow(newdata), p + 1L, p + 1L, K))
  for (r in seq_len(nrow(newdata))) {
    vt <- g$values(newdata[r, , drop = FALSE])
    for (k in seq_len(K)) {
      v <- rowSums(vt[, (seq_len(ncol(vt)) - 1L) %% K + 1L == k, drop = FALSE])
      M <- matrix(0, p + 1L, p + 1L)
      for (i in seq_len(p)) {
        phi_i <- 0
        for (S in subsets) {
          if (i %in% S) next
          phi_i <- phi_i + factorial(length(S)) * factorial(p - length(S) - 1) / factorial(p) *
            (v[idx(c(S, i))] - v[idx(S)])
        }
        for (j in setdiff(seq_len(p), i)) {
          for (S in subsets) {
            if (i %in% S || j %in% S) next
            w <- factorial(length(S)) * factorial(p - length(S) - 2) / (2 * factorial(p - 1))
            M[i, j] <- M[i, j] + w * (v[idx(c(S, i, j))] - v[idx(c(S, i))] - v[idx(c(S, j))] + v[idx(S)])
          }
        }
        M[i, i] <- phi_i - sum(M[i, -i])
      }
      M[p + 1L, p + 1L] <- v[1L] + init[k]
      out[r, , , k] <- M
    }
  }
  out
}

test_that("interaction values equal the brute-force Shapley interaction index (numeric, NA, factor)", {
  d <- gen_mixed(41, n = 400, nnum = 3, ncat = 1, na = 0.15, cat_na = 0.1)
  fit <- hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 8L, min_data_in_leaf = 8L,
                  min_data_per_group = 5L, cat_smooth = 1, seed = 1)
  tab <- hb_trees(fit)
  expect_true(all(c("numeric", "categorical") %in% tab$split_type))
  nd <- d$x[c(1:8, which(is.na(d$x$num1))[1:3], which(is.na(d$x$cat1))[1:3]), ]
  got <- predict(fit, nd, type = "interaction")
  expect_equal(dim(got), c(nrow(nd), 5L, 5L))
  cols <- c(names(d$x), "(Intercept)")
  expect_identical(dimnames(got), list(NULL, cols, cols))
  ref <- ref_interaction(fit, nd, init = mean(d$y))[, , , 1]
  expect_equal(unname(got), ref, tolerance = TOL$exact)
  # rows sum to the contributions, everything to the raw score, symmetric
  ph <- predict(fit, nd, type = "contrib")
  expect_equal(apply(got, c(1, 2), sum), ph, tolerance = TOL$exact)
  expect_equal(apply(got, 1, sum), predict(fit, nd, type = "raw"), tolerance = TOL$exact)
  expect_equal(got, aperm(got, c(1, 3, 2)), tolerance = TOL$exact)
  # the model has interactions to show
  off <- vapply(seq_len(nrow(nd)), function(r) {
    m <- got[r, 1:4, 1:4]
    max(abs(m[row(m) != col(m)]))
  }, 0)
  expect_gt(max(off), 1e-3)
})

test_that("binary and multiclass interactions: against brute force, class by class", {
  b <- gen_task(42, n = 800, p = 6, task = "binary", na = 0.05)
  b$x <- b$x[, 1:3]
  fb <- hb_quiet(b$x, b$y, nrounds = 5L, num_leaves = 6L, seed = 2)
  nd <- b$x[1:6, ]
  # the starting score: the intercept less the trees' expected outputs
  got <- predict(fb, nd, type = "interaction")
  init <- predict(fb, nd, type = "contrib")[1, "(Intercept)"] - sum(ref_shap(fb, nd[1, ])[1, 4, 1])
  expect_equal(unname(got), ref_interaction(fb, nd, init = init)[, , , 1], tolerance = TOL$exact)
  expect_equal(apply(got, 1, sum), predict(fb, nd, type = "raw"), tolerance = TOL$exact)
  m <- gen_task(43, n = 900, p = 6, task = "multiclass", K = 3, factors = 1)
  m$x <- m$x[, c("x1", "x2", "f1")]
  fm <- hb_quiet(m$x, m$y, nrounds = 3L, num_leaves = 5L, seed = 3)
  nd <- m$x[1:5, ]
  got <- predict(fm, nd, type = "interaction")
  expect_equal(dim(got), c(5L, 4L, 4L, 3L))
  expect_identical(dimnames(got)[[4]], levels(m$y))
  ph <- predict(fm, nd, type = "contrib")
  raw <- predict(fm, nd, type = "raw")
  init <- ph[1, "(Intercept)", ] - ref_shap(fm, nd[1, ])[1, 4, ]
  ref <- ref_interaction(fm, nd, init = init)
  expect_equal(unname(got), ref, tolerance = TOL$exact)
  for (k in 1:3) {
    expect_equal(apply(got[, , , k], c(1, 2), sum), ph[, , k], tolerance = TOL$exact)
    expect_equal(apply(got[, , , k], 1, sum), unname(raw[, k]), tolerance = TOL$exact)
  }
})

test_that("interactions do not depend on input form or threads; iteration, init_score and forests apply", {
  g <- gen_task(44, n = 1000, p = 5, task = "regression")
  X <- as.matrix(g$x)
  X[sample(length(X), 1000)] <- 0
  fit <- hb_quiet(X, g$y, nrounds = 10L, num_leaves = 15L, seed = 5, bagging_fraction = 0.7, bagging_freq = 1L)
  a <- predict(fit, X[1:60, ], type = "interaction", nthreads = 1L)
  expect_identical(predict(fit, X[1:60, ], type = "interaction", nthreads = 2L), a)
  expect_identical(predict(fit, Matrix::Matrix(X[1:60, ], sparse = TRUE), type = "interaction"), a)
  expect_equal(apply(a, c(1, 2), sum), predict(fit, X[1:60, ], type = "contrib"), tolerance = TOL$exact)
  expect_equal(a, aperm(a, c(1, 3, 2)), tolerance = 1e-9)
  # the first 4 iterations, with an offset on the bias entry
  off <- seq(-1, 1, length.out = 60)
  a4 <- predict(fit, X[1:60, ], type = "interaction", iteration = 4L, init_score = off)
  expect_equal(apply(a4, 1, sum), predict(fit, X[1:60, ], type = "raw", iteration = 4L, init_score = off),
               tolerance = TOL$exact)
  expect_equal(a4[, 6, 6], predict(fit, X[1:60, ], type = "contrib", iteration = 4L, init_score = off)[, 6],
               tolerance = TOL$exact)
  expect_true(all(a4[, 6, 1:5] == 0) && all(a4[, 1:5, 6] == 0))
  # a random forest averages its trees
  rf <- hb_quiet(X, g$y, nrounds = 5L, boosting = "rf", bagging_fraction = 0.6, bagging_freq = 1L, seed = 6)
  ar <- predict(rf, X[1:30, ], type = "interaction")
  expect_equal(apply(ar, c(1, 2), sum), predict(rf, X[1:30, ], type = "contrib"), tolerance = TOL$exact)
})

test_that("interaction requests that cannot be met are refused by name", {
  g <- gen_task(45, n = 300, p = 6, task = "regression")
  fit <- hb_quiet(g$x, g$y, nrounds = 2L, seed = 1)
  expect_input_error(predict(fit, type = "interaction"), "`newdata`")
  expect_input_error(predict(fit, g$x, type = "interactions"), "`type`")
})
