# Exclusive feature bundling (enable_bundle, max_conflict_rate): with the
# default max_conflict_rate = 0 a model is the same, tree by tree, as without
# bundling (full precision and quantized, with bagging and feature sampling);
# with conflicts allowed it changes, but stays close. The bundler itself and
# the recovered histograms are checked bit for bit in tools/test_bundle.c.

# A dgCMatrix of `fields` one-hot fields (levels Zipf-like, 8% of the rows
# without a level), the third field's entries sometimes NaN and the fourth's
# valued 1-3, a column whose zero is not its lowest bin (non-zero only where
# the first field is absent), and three dense columns.
bundle_data <- function(n = 8000, fields = 4, levels = 80, seed = 7) {
  set.seed(seed)
  lev <- sapply(seq_len(fields), function(f) sample.int(levels, n, TRUE, prob = 1 / seq_len(levels)^0.8))
  present <- matrix(runif(n * fields) > 0.08, n, fields)
  i <- rep(seq_len(n), fields)[present]
  j <- ((rep(seq_len(fields), each = n) - 1L) * levels + as.vector(lev))[present]
  x <- rep(1, length(i))
  f3 <- j > 2 * levels & j <= 3 * levels
  x[f3][runif(sum(f3)) < 0.1] <- NaN
  f4 <- j > 3 * levels
  x[f4] <- sample(1:3, sum(f4), TRUE)
  neg <- which(!present[, 1] & runif(n) < 0.7)
  dense <- cbind(rnorm(n), runif(n), rexp(n))
  nc <- fields * levels
  X <- Matrix::sparseMatrix(i = c(i, neg, rep(seq_len(n), 3)),
                            j = c(j, rep(nc + 1L, length(neg)), rep(nc + 1L + 1:3, each = n)),
                            x = c(x, sample(c(-2, -1, 1), length(neg), TRUE), as.vector(dense)),
                            dims = c(n, nc + 4L))
  colnames(X) <- paste0("c", seq_len(ncol(X)))
  eff <- matrix(rnorm(fields * levels, sd = 0.6), levels, fields)
  eta <- rowSums(ifelse(present, eff[cbind(as.vector(lev), rep(seq_len(fields), each = n))], 0)) +
    0.5 * dense[, 1] + 0.8 * (lev[, 1] %% 5 == lev[, 2] %% 5)
  y <- as.numeric(runif(n) < 1 / (1 + exp(-eta)))
  list(x = X, y = y)
}

# The model text without its [meta] section (where enable_bundle = FALSE is
# recorded) and checksum: the configuration, schema and every tree.
trees_text <- function(m) {
  t <- strsplit(m$model_text, "\n", fixed = TRUE)[[1]]
  sec <- cumsum(startsWith(t, "["))
  t <- t[sec != sec[t == "[meta]"]]
  t[!startsWith(t, "checksum")]
}

test_that("bundling leaves the model unchanged, tree by tree (full precision and quantized)", {
  d <- bundle_data()
  base <- list(d$x, d$y, nrounds = 15L, num_leaves = 31L, min_data_in_leaf = 10L, bagging_fraction = 0.8,
               bagging_freq = 1L, feature_fraction = 0.7, seed = 3, verbose = 0L)
  for (q in c(FALSE, TRUE)) {
    on <- do.call(histboost, c(base, list(quantized = q)))
    off <- do.call(histboost, c(base, list(quantized = q, enable_bundle = FALSE)))
    expect_identical(trees_text(on), trees_text(off), label = paste("model text, quantized", q))
    expect_identical(hb_trees(on), hb_trees(off))
    expect_identical(predict(on, d$x), predict(off, d$x))
    # the one-hot columns were split on (their histograms came from bundles)
    tr <- hb_trees(on)
    split_cols <- unique(tr$feature[!is.na(tr$feature)])
    expect_gt(sum(split_cols %in% colnames(d$x)[1:320]), 10)
  }
  # one thread against two, regression, goss
  a <- histboost(d$x, d$y * 2 + 1, nrounds = 8L, num_leaves = 15L, objective = "regression", goss = TRUE,
                 learning_rate = 0.3, seed = 1, nthreads = 1L, verbose = 0L)
  b <- histboost(d$x, d$y * 2 + 1, nrounds = 8L, num_leaves = 15L, objective = "regression", goss = TRUE,
                 learning_rate = 0.3, seed = 1, nthreads = 2L, verbose = 0L, enable_bundle = FALSE)
  expect_identical(trees_text(a)[!startsWith(trees_text(a), "nthreads")],
                   trees_text(b)[!startsWith(trees_text(b), "nthreads")])
})

test_that("conflicts allowed change the model a little; enable_bundle = FALSE turns bundling off", {
  d <- bundle_data(n = 10000, seed = 11)
  tr <- seq_len(8000)
  te <- 8001:10000
  fit <- function(..., nrounds = 30L) {
    histboost(d$x[tr, ], d$y[tr], nrounds = nrounds, num_leaves = 31L, seed = 5, verbose = 0L, ...)
  }
  plain <- fit(enable_bundle = FALSE)
  loose <- fit(max_conflict_rate = 0.2)
  off <- fit(enable_bundle = FALSE, max_conflict_rate = 0.2)
  # the rate reaches the engine (the histograms change) ...
  expect_false(identical(trees_text(loose), trees_text(plain)))
  # ... unless bundling is off
  expect_identical(trees_text(off), trees_text(plain))
  auc <- function(p, y) {
    r <- rank(p)
    (sum(r[y == 1]) - sum(y == 1) * (sum(y == 1) + 1) / 2) / (sum(y == 1) * sum(y == 0))
  }
  a0 <- auc(predict(plain, d$x[te, ]), d$y[te])
  a1 <- auc(predict(loose, d$x[te, ]), d$y[te])
  expect_gt(a0, 0.7)
  expect_lt(abs(a1 - a0), 0.02)   # 0.7011 against 0.7063 when written
  # recorded with the model only when not the default
  expect_false(plain$params$enable_bundle)
  expect_equal(loose$params$max_conflict_rate, 0.2)
  expect_true(fit(nrounds = 2L)$params$enable_bundle)
  expect_false(any(grepl("enable_bundle|max_conflict_rate", fit()$model_text)))
  expect_true(grepl("r.enable_bundle", plain$model_text, fixed = TRUE))
  # and survives a save and load
  path <- tempfile(fileext = ".txt")
  on.exit(unlink(path))
  hb_save(loose, path)
  expect_equal(hb_load(path)$params$max_conflict_rate, 0.2)
})

test_that("hb_cv passes the bundling arguments on", {
  d <- bundle_data(n = 3000, seed = 2)
  set.seed(4)   # the folds come from R's generator
  a <- hb_cv(d$x, d$y, nfold = 2L, nrounds = 5L, num_leaves = 7L, seed = 1, verbose = 0L, keep_models = TRUE)
  set.seed(4)
  b <- hb_cv(d$x, d$y, nfold = 2L, nrounds = 5L, num_leaves = 7L, seed = 1, verbose = 0L, keep_models = TRUE,
             enable_bundle = FALSE)
  expect_identical(a$evaluation_log, b$evaluation_log)
  expect_false(b$models[[1]]$params$enable_bundle)
})

test_that("bad bundling arguments are refused", {
  d <- bundle_data(n = 500)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(histboost(d$x, d$y, nrounds = 1L, enable_bundle = NA, verbose = 0L), "enable_bundle")
  err(histboost(d$x, d$y, nrounds = 1L, enable_bundle = "yes", verbose = 0L), "enable_bundle")
  err(histboost(d$x, d$y, nrounds = 1L, max_conflict_rate = 1, verbose = 0L), "max_conflict_rate")
  err(histboost(d$x, d$y, nrounds = 1L, max_conflict_rate = -0.1, verbose = 0L), "max_conflict_rate")
  err(histboost(d$x, d$y, nrounds = 1L, max_conflict_rate = NA_real_, verbose = 0L), "max_conflict_rate")
})
