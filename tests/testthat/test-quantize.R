# Quantized training on the CPU (the GPU's twin checks are in test-cuda.R):
# the integer histogram kernel against sums computed in plain R, leaf values
# refit from full-precision gradients against -G / (H + lambda) computed in
# plain R, quantized sums with rounding to nearest recomputed in plain R,
# thread independence, accuracy against full precision, and bad arguments.
# (Rounding itself, unbiasedness and packing are checked without R in
# tools/test_quantize.c.)

test_that("the CPU's integer histograms equal the sums computed in plain R (dense, sparse, 2-8 bits)", {
  skip_without_test_hooks()
  set.seed(61)
  n <- 30000
  dense <- data.frame(a = rnorm(n), b = sample(c(-1, 0, 2), n, TRUE), c = runif(n),
                      d = factor(sample(letters[1:9], n, TRUE)), e = rexp(n))
  dense$c[sample.int(n, 3000)] <- NA
  m <- matrix(0, n, 6)
  for (j in 1:6) m[sample.int(n, n %/% (3 * j)), j] <- round(rnorm(n %/% (3 * j)), 1)
  sparse <- Matrix::Matrix(m, sparse = TRUE)
  for (x in list(dense, sparse)) {
    ds <- hb_dataset(x, rnorm(n))
    bins <- histboost:::.hb_dataset_bins(ds)
    num_bin <- .Call(histboost:::C_hb_dataset_info, ds$ptr)$num_bin
    for (bits in c(2L, 4L, 8L)) {
      lg <- 2L^(bits - 1L) - 1L
      lh <- 2L^bits - 1L
      # extreme levels as often as any other: 16-bit halves are stressed
      gq <- sample(c(-lg, lg, sample(-lg:lg, 8, TRUE)), n, TRUE)
      hq <- sample(c(0L, lh, sample(0:lh, 8, TRUE)), n, TRUE)
      for (rows in list(NULL, sort(sample.int(n, 4000)))) {
        for (nth in c(1L, 2L)) {
          res <- histboost:::.hb_qhist(ds, gq, hq, bits, rows = rows, nthreads = nth)
          r <- if (is.null(rows)) seq_len(n) else rows
          what <- sprintf("%s, %d bits, %d rows, %d threads", class(x)[1], bits, length(r), nth)
          expect_identical(res$g, ref_bin_sums(bins, num_bin, gq, r), label = paste("g sums,", what))
          expect_identical(res$h, ref_bin_sums(bins, num_bin, hq, r), label = paste("h sums,", what))
        }
      }
    }
  }
  # the whole data under 4096 rows (times 5 features: enough for two threads):
  # the threads split the columns, not the rows
  small <- dense[seq_len(4000), ]
  ds <- hb_dataset(small, rnorm(4000))
  bins <- histboost:::.hb_dataset_bins(ds)
  num_bin <- .Call(histboost:::C_hb_dataset_info, ds$ptr)$num_bin
  gq <- sample(-7:7, 4000, TRUE)
  hq <- sample(0:15, 4000, TRUE)
  res <- histboost:::.hb_qhist(ds, gq, hq, 4L, rows = NULL, nthreads = 2L)
  expect_identical(res$g, ref_bin_sums(bins, num_bin, gq, seq_len(4000)), label = "g sums, 4000 rows, 2 threads")
  expect_identical(res$h, ref_bin_sums(bins, num_bin, hq, seq_len(4000)), label = "h sums, 4000 rows, 2 threads")
})

test_that("integer histograms of wide data (several tiles, 8-column reads) and of feature subsets equal plain R's", {
  skip_without_test_hooks()
  set.seed(62)
  n <- 6000
  p <- 150  # more columns than one tile holds; 8-, 4- and 1-column steps
  x <- matrix(sample(c(rnorm(40), NA), n * p, TRUE), n, p)
  x[, 7] <- sample(1:3, n, TRUE)  # few bins next to many
  ds <- hb_dataset(x, rnorm(n))
  bins <- histboost:::.hb_dataset_bins(ds)
  num_bin <- .Call(histboost:::C_hb_dataset_info, ds$ptr)$num_bin
  last <- cumsum(num_bin)
  first <- last - num_bin + 1
  lg <- 7L
  lh <- 15L
  gq <- sample(c(-lg, lg, sample(-lg:lg, 8, TRUE)), n, TRUE)
  hq <- sample(c(0L, lh, sample(0:lh, 8, TRUE)), n, TRUE)
  actives <- list(NULL, seq_len(p) %% 3 != 0, seq_len(p) %in% sample.int(p, 11))
  for (active in actives) {
    for (rows in list(NULL, sort(sample.int(n, 2500)))) {
      for (nth in c(1L, 2L)) {
        res <- histboost:::.hb_qhist(ds, gq, hq, 4L, rows = rows, active = active, nthreads = nth)
        r <- if (is.null(rows)) seq_len(n) else rows
        f_on <- if (is.null(active)) seq_len(p) else which(active)
        keep <- unlist(lapply(f_on, function(f) first[f]:last[f]))
        what <- sprintf("%d active features, %d rows, %d threads", length(f_on), length(r), nth)
        ref_g <- ref_bin_sums(bins[, f_on, drop = FALSE], num_bin[f_on], gq, r)
        ref_h <- ref_bin_sums(bins[, f_on, drop = FALSE], num_bin[f_on], hq, r)
        expect_identical(res$g[keep], ref_g, label = paste("g sums,", what))
        expect_identical(res$h[keep], ref_h, label = paste("h sums,", what))
      }
    }
  }
})

# A weighted regression problem (hessians = weights, not constant).
quant_regr <- function(seed, n = 3000) {
  set.seed(seed)
  x <- data.frame(a = rnorm(n), b = runif(n), c = rnorm(n))
  y <- 2 * sin(x$a) + 3 * (x$b > 0.4) + x$c + rnorm(n, sd = 0.3)
  list(x = x, y = y, w = runif(n, 0.5, 2))
}

test_that("refit leaf values are -G / (H + lambda) over each leaf's full-precision gradients", {
  d <- quant_regr(62)
  for (stochastic in c(TRUE, FALSE)) {
    m <- hb_quiet(d$x, d$y, weights = d$w, nrounds = 1L, learning_rate = 1, num_leaves = 8L,
                  min_data_in_leaf = 20L, lambda_l2 = 2, quantized = TRUE, grad_bits = 3L,
                  stochastic_rounding = stochastic, seed = 5)
    init <- sum(d$w * d$y) / sum(d$w)
    g <- d$w * (init - d$y)
    h <- d$w
    leaf <- predict(m, d$x, type = "leaf")[, 1]
    tr <- hb_trees(m)
    leaves <- tr[tr$tree == 1 & tr$is_leaf, ]
    ids <- as.integer(sub("^L", "", leaves$id))
    want <- vapply(ids, function(l) -sum(g[leaf == l]) / (sum(h[leaf == l]) + 2), 0)
    expect_gt(length(ids), 4L)
    expect_equal(leaves$value, want, tolerance = 1e-9, label = paste("refit leaf values, stochastic", stochastic))
    expect_equal(leaves$hessian, vapply(ids, function(l) sum(h[leaf == l]), 0), tolerance = 1e-9)
  }
})

test_that("without refit, leaf values come from the quantized sums (rounding to nearest, recomputed in R)", {
  d <- quant_regr(63)
  bits <- 3L
  m <- hb_quiet(d$x, d$y, weights = d$w, nrounds = 1L, learning_rate = 1, num_leaves = 6L,
                min_data_in_leaf = 20L, lambda_l2 = 1, quantized = TRUE, grad_bits = bits,
                stochastic_rounding = FALSE, refit_leaves = FALSE, seed = 5)
  init <- sum(d$w * d$y) / sum(d$w)
  g <- d$w * (init - d$y)
  h <- d$w
  lg <- 2^(bits - 1) - 1
  lh <- 2^bits - 1
  sg <- max(abs(g)) / lg
  sh <- max(h) / lh
  gq <- pmin(pmax(floor(g / sg + 0.5), -lg), lg)
  hq <- pmin(pmax(floor(h / sh + 0.5), 0), lh)
  leaf <- predict(m, d$x, type = "leaf")[, 1]
  tr <- hb_trees(m)
  leaves <- tr[tr$tree == 1 & tr$is_leaf, ]
  ids <- as.integer(sub("^L", "", leaves$id))
  want <- vapply(ids, function(l) -sum(gq[leaf == l]) * sg / (sum(hq[leaf == l]) * sh + 1), 0)
  expect_equal(leaves$value, want, tolerance = 1e-12)
})

test_that("quantized models do not depend on the thread count, and do on the seed", {
  d <- gen_task(64, n = 3000, task = "binary", factors = 2, na = 0.05)
  fit <- function(nth, seed = 1) {
    hb_quiet(d$x, d$y, nrounds = 15L, quantized = TRUE, grad_bits = 4L, bagging_fraction = 0.8,
             bagging_freq = 1L, feature_fraction = 0.8, nthreads = nth, seed = seed)
  }
  a <- fit(1L)
  expect_identical(a$model_text, fit(2L)$model_text)
  expect_false(identical(a$model_text, fit(2L, seed = 2)$model_text))
  expect_true(a$params$quantized)
  expect_identical(a$params$grad_bits, 4L)
})

test_that("quantized leaf refits on enough rows to be summed row by row match one thread's leaf-by-leaf sums", {
  # 65536 rows or more in the tree's leaves: with 2 threads the refit reads the
  # rows in order (each row's leaf first), with 1 thread it sums leaf by leaf;
  # both are exact integer sums, so the models must be identical, with and
  # without bagging (rows out of the bag belong to no leaf).
  d <- gen_task(67, n = 90000, task = "regression")
  fit <- function(nth, bag) {
    hb_quiet(d$x, d$y, nrounds = 4L, num_leaves = 15L, quantized = TRUE, grad_bits = 4L,
             bagging_fraction = if (bag) 0.8 else 1, bagging_freq = if (bag) 1L else 0L, nthreads = nth, seed = 3)
  }
  for (bag in c(FALSE, TRUE)) {
    a <- fit(1L, bag)
    b <- fit(2L, bag)
    expect_identical(a$model_text, b$model_text)
    # and the refit is the rule on the leaf's full-precision gradients (first tree, plain R)
    if (!bag) {
      init <- mean(d$y)
      leaf <- predict(a, d$x, type = "leaf")[, 1]
      tr <- hb_trees(a)
      leaves <- tr[tr$tree == 1 & tr$is_leaf, ]
      ids <- as.integer(sub("^L", "", leaves$id))
      g <- init - d$y
      want <- vapply(ids, function(l) -sum(g[leaf == l]) / (sum(leaf == l)), 0) * a$params$learning_rate
      expect_equal(leaves$value, want, tolerance = 1e-9)
    }
  }
})

test_that("with 4 bits, test metrics are within 0.002 AUC / 1% RMSE of full precision", {
  set.seed(65)
  n <- 40000
  x <- data.frame(a = rnorm(n), b = runif(n), c = rnorm(n), f = factor(sample(letters[1:6], n, TRUE)))
  x$a[sample.int(n, 800)] <- NA
  s <- ifelse(is.na(x$a), 0.5, sin(2 * x$a)) + 2 * (x$b > 0.5) + x$c * (x$f %in% c("a", "b"))
  tr <- seq_len(30000)
  te <- 30001:n
  yb <- factor(runif(n) < plogis(s))
  yr <- s + rnorm(n)
  fit <- function(y, q) hb_quiet(x[tr, ], y[tr], nrounds = 100L, quantized = q, grad_bits = 4L, seed = 1)
  auc_q <- auc(yb[te] == "TRUE", predict(fit(yb, TRUE), x[te, ]))
  auc_f <- auc(yb[te] == "TRUE", predict(fit(yb, FALSE), x[te, ]))
  expect_gt(auc_q, auc_f - 0.002)
  rmse_q <- rmse(yr[te], predict(fit(yr, TRUE), x[te, ]))
  rmse_f <- rmse(yr[te], predict(fit(yr, FALSE), x[te, ]))
  expect_lt(rmse_q, 1.01 * rmse_f)
  ym <- factor(cut(s + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi")))
  pq <- predict(fit(ym, TRUE), x[te, ])
  pf <- predict(fit(ym, FALSE), x[te, ])
  expect_lt(multi_logloss(as.integer(ym[te]), pq), multi_logloss(as.integer(ym[te]), pf) + 0.005)
})

test_that("quantization arguments are checked and named", {
  d <- gen_task(66, n = 200)
  expect_error(hb_quiet(d$x, d$y, quantized = "yes"), class = "histboost_error_input", regexp = "`quantized`")
  expect_error(hb_quiet(d$x, d$y, quantized = NA), class = "histboost_error_input", regexp = "`quantized`")
  for (b in list(1, 9, 2.5, "4", NA)) {
    expect_error(hb_quiet(d$x, d$y, quantized = TRUE, grad_bits = b), class = "histboost_error_input",
                 regexp = "`grad_bits`")
  }
  expect_error(hb_quiet(d$x, d$y, stochastic_rounding = 1), class = "histboost_error_input",
               regexp = "`stochastic_rounding`")
  expect_error(hb_quiet(d$x, d$y, refit_leaves = c(TRUE, FALSE)), class = "histboost_error_input",
               regexp = "`refit_leaves`")
})
