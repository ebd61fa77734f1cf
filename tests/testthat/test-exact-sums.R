# exact_sums: full-precision gradients on a grid that makes every sum exact
# (src/engine/quantize.c's hb_exact_sums_dist). Checked here on one process:
# the first tree's leaves against the sums plain R takes of the gradients it
# rounds itself, and models that do not depend on the order of the rows.
# Over MPI processes (the point of the option) see test-mpi.R.

exact_data <- function(n = 3000L, seed = 5L) {
  set.seed(seed)
  x <- data.frame(a = rnorm(n), b = runif(n), f = factor(sample(c("p", "q", "r", "s", "t"), n, TRUE)), e = rnorm(n))
  x$a[sample(n, 200L)] <- NA
  x$f[sample(n, 80L)] <- NA
  eta <- 2 * ifelse(is.na(x$a), 0.3, x$a) - x$b + c(p = 0, q = 1, r = -1, s = 0.5, t = 2)[as.character(x$f)]
  eta[is.na(eta)] <- 0
  list(x = x, eta = eta, y = eta + rnorm(n), w = runif(n, 0.5, 2))
}

# What hb_exact_sums_dist does, in plain R: the grid exponent e with
# m n 2^e <= 2^52 (C's ilogb(2^52 / (m n))), and each value rounded to the
# nearest multiple of 2^-e, ties to even (R's round() is IEC 60559's).
grid_round <- function(v, n) {
  m <- max(abs(v))
  q <- 2^52 / (m * n)
  e <- floor(log2(q))
  if (2^e > q) e <- e - 1
  if (2^(e + 1) <= q) e <- e + 1
  round(v * 2^e) / 2^e
}

test_that("the first tree's leaves are plain R's sums of the gradients on exact_sums' grid", {
  d <- exact_data()
  n <- nrow(d$x)
  s0 <- 0.5
  fit <- hb_quiet(d$x, d$y, weights = d$w, init_score = rep(s0, n), nrounds = 1L, num_leaves = 15L,
                  learning_rate = 0.3, lambda_l2 = 0, cat_l2 = 0, min_data_in_leaf = 20L, exact_sums = TRUE,
                  nthreads = 2L, seed = 1)
  # squared error: g = w (s - y), h = w; no L2 (cat_l2 = 0: below a
  # categorical split too), so a leaf's value is -G / H times the rate
  g <- grid_round(d$w * (s0 - d$y), n)
  h <- grid_round(d$w, n)
  leaf <- predict(fit, d$x, type = "leaf")[, 1L]
  tr <- hb_trees(fit)
  leaves <- tr[tr$is_leaf, ]
  expect_gt(nrow(leaves), 10L)
  ids <- as.integer(sub("^L", "", leaves$id))
  G <- vapply(ids, function(l) sum(g[leaf == l]), 0)
  H <- vapply(ids, function(l) sum(h[leaf == l]), 0)
  expect_identical(leaves$hessian, H)
  expect_identical(leaves$value, 0.3 * (-G / H))
  # without the grid, the leaves agree to the last few bits only
  plain <- hb_quiet(d$x, d$y, weights = d$w, init_score = rep(s0, n), nrounds = 1L, num_leaves = 15L,
                    learning_rate = 0.3, lambda_l2 = 0, cat_l2 = 0, min_data_in_leaf = 20L, nthreads = 2L, seed = 1,
                    exact_sums = FALSE)
  expect_identical(hb_trees(plain)[c("id", "feature", "threshold", "count")], tr[c("id", "feature", "threshold", "count")])
  expect_equal(hb_trees(plain)$value, tr$value, tolerance = 1e-12)
  expect_false(identical(hb_trees(plain)$value, tr$value))
})

test_that("with exact_sums the model does not depend on the order of the rows", {
  d <- exact_data()
  n <- nrow(d$x)
  set.seed(9)
  perm <- sample(n)
  cls <- factor(cut(d$eta + rnorm(n, sd = 0.5), 3L, labels = c("lo", "mid", "hi")))
  bin <- factor(ifelse(d$y > median(d$y), "yes", "no"))
  # the starting score is given: the mean of the labels is summed in row order
  cases <- list(
    regression = list(y = d$y, w = d$w, init = rep(0.2, n), args = list()),
    binary = list(y = bin, w = NULL, init = rep(0, n), args = list(feature_fraction = 0.8)),
    multiclass = list(y = cls, w = d$w, init = matrix(0, n, 3L), args = list(lambda_l1 = 0.5, lambda_l2 = 1)),
    huber = list(y = d$y, w = NULL, init = rep(0, n), args = list(objective = "huber", max_depth = 4L))
  )
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    train <- function(rows, exact, threads = 2L) {
      init <- if (is.matrix(cs$init)) cs$init[rows, , drop = FALSE] else cs$init[rows]
      do.call(hb_quiet, c(list(d$x[rows, ], cs$y[rows], weights = cs$w[rows], init_score = init, nrounds = 15L,
                               num_leaves = 15L, exact_sums = exact, nthreads = threads, seed = 3), cs$args))
    }
    a <- train(seq_len(n), TRUE)
    b <- train(perm, TRUE)
    expect_identical(a$model_text, b$model_text, info = nm)
    expect_identical(a$model_text, train(rev(perm), TRUE, threads = 1L)$model_text, info = nm)
    expect_true(a$params$exact_sums)
    if (nm == "regression") {
      # the sums of doubles in another order: another model in its last bits
      expect_false(identical(train(seq_len(n), FALSE)$model_text, train(perm, FALSE)$model_text))
    }
  }
})

test_that("exact_sums keeps working when every gradient is tiny (the grid bottoms out at 2^-1074)", {
  d <- exact_data(n = 2000L)
  n <- nrow(d$x)
  # max |g| times n below 2^52 / DBL_MAX, where the grid's exponent would
  # overflow without its cap (every value then became infinite): weights of
  # 1e-298, and a custom objective's gradients of 1e-300. Gains that small
  # split nothing, so training stops after one round of one leaf: the
  # starting score 0 plus 0.1 times -G / H, the labels' mean, with or
  # without the grid.
  obj <- function(preds, labels) list(grad = 1e-300 * (preds - labels), hess = rep(1e-300, length(preds)))
  for (a in list(list(weights = rep(1e-298, n)), list(objective = obj))) {
    fits <- lapply(c(TRUE, FALSE), function(es) {
      expect_warning(m <- do.call(hb_quiet, c(list(d$x, d$y, init_score = rep(0, n), nrounds = 3L, num_leaves = 7L,
                                                   min_sum_hessian_in_leaf = 0, exact_sums = es, seed = 1), a)),
                     "no tree could split")
      m
    })
    raw <- predict(fits[[1L]], d$x[1:5, ], type = "raw")
    expect_true(all(is.finite(raw)))
    expect_equal(raw, predict(fits[[2L]], d$x[1:5, ], type = "raw"), tolerance = 1e-12)
    expect_equal(raw, rep(0.1 * mean(d$y), 5L), tolerance = 1e-12)
  }
})

test_that("exact_sums is recorded, kept by hb_save, checked, and refused on the GPU", {
  d <- exact_data(n = 500L)
  fit <- hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 4L, exact_sums = TRUE, seed = 7)
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  hb_save(fit, f)
  expect_true(hb_load(f)$params$exact_sums)
  # the CPU's default in full precision: the model exact_sums = TRUE gives
  def <- hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 4L, seed = 7)
  expect_true(def$params$exact_sums)
  expect_identical(def$model_text, fit$model_text)
  expect_false(hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 4L, exact_sums = FALSE)$params$exact_sums)
  # "auto": on where it picks the CPU, off where it picks a GPU
  auto <- suppressMessages(hb_quiet(d$x, d$y, nrounds = 2L, num_leaves = 4L, device = "auto"))
  expect_identical(auto$params$exact_sums, !isTRUE(hb_device_info()$available))
  # quantized sums are integers, exact already: the option changes nothing there
  q1 <- hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 4L, quantized = TRUE, exact_sums = TRUE, seed = 2)
  q2 <- hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 4L, quantized = TRUE, seed = 2)
  expect_identical(q1$model_text, q2$model_text)
  expect_false(q1$params$exact_sums)
  expect_error(hb_quiet(d$x, d$y, nrounds = 2L, exact_sums = "yes"), class = "histboost_error_input",
               regexp = "`exact_sums`")
  expect_error(hb_quiet(d$x, d$y, nrounds = 2L, exact_sums = NA), class = "histboost_error_input",
               regexp = "`exact_sums`")
  expect_error(hb_quiet(d$x, d$y, nrounds = 2L, exact_sums = TRUE, device = "cuda"), class = "histboost_error_device",
               regexp = "exact_sums")
})

test_that("on the grid (the default) leaves of thousands of rows summed in parts by the thread count give one model", {
  # hb_hist_build cuts a leaf of >= 4096 rows into more parts of its rows
  # from 8 threads on (up to one for every two, >= 1024 rows each): 1-4
  # threads 2 parts, 8 threads 4 for the root here. The sums are exact, so every thread count gives the same model,
  # and the root's split is plain R's best split of the rows' gradients
  # on the grid.
  set.seed(21)
  n <- 20000L
  x <- matrix(round(runif(n * 5L) * 40) / 40, n)  # 41 values a column: a bin each
  x[sample(length(x), 2000L)] <- NA
  y <- ifelse(is.na(x[, 1]), 0.5, x[, 1]) * 2 - ifelse(is.na(x[, 2]), 0, x[, 2]) + rnorm(n, sd = 0.3)
  fits <- lapply(c(1L, 3L, 4L, 8L), function(t) {
    hb_quiet(x, y, nrounds = 5L, num_leaves = 8L, min_data_in_leaf = 50L, nthreads = t, seed = 4)
  })
  for (k in 2:4) expect_identical(fits[[k]]$model_text, fits[[1L]]$model_text)
  expect_true(fits[[1L]]$params$exact_sums)
  # the root split from plain R: the L2 loss's gradients at the starting
  # score (the labels' mean) on the grid, hessians 1, every threshold
  # between two values of every column, missing values on either side
  one <- hb_quiet(x, y, nrounds = 1L, num_leaves = 2L, min_data_in_leaf = 50L, nthreads = 8L, seed = 4)
  g <- grid_round(mean(y) - y, n)
  G <- sum(g)
  best <- list(gain = -Inf)
  for (f in seq_len(5L)) {
    v <- x[, f]
    u <- sort(unique(v[!is.na(v)]))
    k <- seq_len(length(u) - 1L)
    gl <- cumsum(vapply(u, function(a) sum(g[!is.na(v) & v == a]), 0))[k]
    nl <- cumsum(vapply(u, function(a) sum(!is.na(v) & v == a), 0))[k]
    for (na_left in c(FALSE, TRUE)) {
      GL <- gl + na_left * sum(g[is.na(v)])
      NL <- nl + na_left * sum(is.na(v))
      gain <- ifelse(NL >= 50 & n - NL >= 50, GL^2 / NL + (G - GL)^2 / (n - NL) - G^2 / n, -Inf)
      if (max(gain) > best$gain) {
        j <- which.max(gain)
        best <- list(gain = max(gain), feature = paste0("V", f), threshold = (u[j] + u[j + 1L]) / 2)
      }
    }
  }
  root <- hb_trees(one)[1L, ]
  expect_identical(root$feature, best$feature)
  expect_equal(root$threshold, best$threshold, tolerance = 1e-12)
  expect_equal(root$gain, best$gain, tolerance = 1e-9)
})

test_that("plain doubles (exact_sums = FALSE) still give one model for every thread count", {
  # their parts follow the row count alone (hist.h): 1, 2, 3 and 8 threads,
  # leaves of thousands of rows
  set.seed(22)
  n <- 20000L
  x <- matrix(runif(n * 5L), n)
  x[sample(length(x), 2000L)] <- NA
  y <- rowSums(x[, 1:2], na.rm = TRUE) + rnorm(n, sd = 0.3)
  texts <- vapply(c(1L, 2L, 3L, 8L), function(t) {
    hb_quiet(x, y, nrounds = 5L, num_leaves = 8L, min_data_in_leaf = 50L, nthreads = t, seed = 4,
             exact_sums = FALSE)$model_text |> paste(collapse = "\n")
  }, "")
  expect_length(unique(texts), 1L)
  expect_false(grepl("r.exact_sums", texts[[1L]], fixed = TRUE))
})
