# predict(type = "contrib"): TreeSHAP contributions against Shapley values
# computed from their definition by enumerating feature subsets in plain R
# (ref_shap in helper-histboost.R), and the identities any such values obey:
# each row sums to the raw score, the bias is the starting score plus the
# trees' cover-weighted leaf means, and a feature no tree splits on gets 0.

test_that("contributions equal brute-force Shapley values (numeric, NA, factor features)", {
  d <- gen_mixed(31, n = 400, nnum = 3, ncat = 1, na = 0.15, cat_na = 0.1)
  fit <- hb_quiet(d$x, d$y, nrounds = 8L, num_leaves = 6L, min_data_in_leaf = 8L,
                  min_data_per_group = 5L, cat_smooth = 1, seed = 1)
  tab <- hb_trees(fit)
  # the model uses every kind of split the walk must follow
  expect_true(all(c("numeric", "categorical") %in% tab$split_type))
  expect_true(any(!tab$is_leaf & tab$default_left %in% TRUE) && any(!tab$is_leaf & tab$default_left %in% FALSE))
  nd <- d$x[c(1:10, which(is.na(d$x$num1))[1:3], which(is.na(d$x$cat1))[1:3]), ]
  ph <- predict(fit, nd, type = "contrib")
  ref <- ref_shap(fit, nd)[, , 1]
  expect_equal(dim(ph), c(nrow(nd), 5L))
  expect_identical(colnames(ph), c(names(d$x), "(Intercept)"))
  expect_equal(unname(ph[, 1:4]), ref[, 1:4], tolerance = TOL$exact)
  # the bias: the starting score (the mean label, regression) plus v() of every tree
  expect_equal(unname(ph[, 5]), ref[, 5] + mean(d$y), tolerance = TOL$exact)
  expect_equal(rowSums(ph), predict(fit, nd, type = "raw"), tolerance = TOL$exact)
})

test_that("contributions of trees with leaves and branches no row reached (a refit's zero counts) equal brute-force Shapley values", {
  d <- gen_mixed(32, n = 600, nnum = 3, ncat = 1, na = 0.1, cat_na = 0.1)
  fit <- hb_quiet(d$x, d$y, nrounds = 5L, num_leaves = 8L, min_data_in_leaf = 5L, min_data_per_group = 5L,
                  cat_smooth = 1, seed = 1)
  # refit on the rows of one corner: most leaves, and whole branches, get no row
  keep <- which(d$x$num1 < quantile(d$x$num1, 0.15, na.rm = TRUE))
  r <- hb_refit(fit, d$x[keep, ], d$y[keep], nthreads = 1L)
  tab <- hb_trees(r)
  expect_gt(sum(tab$is_leaf & tab$count == 0), 5)
  # an internal node with no counted row below it
  cover <- function(t, id) {
    nd <- t[t$id == id, ]
    if (nd$is_leaf) nd$count else cover(t, nd$left) + cover(t, nd$right)
  }
  inner <- tab[!tab$is_leaf, ]
  expect_true(any(mapply(function(k, id) cover(tab[tab$tree == k, ], id) == 0, inner$tree, inner$id)))
  nd <- d$x[c(keep[1:5], setdiff(seq_len(40), keep)[1:10], which(is.na(d$x$num2))[1:2]), ]
  ph <- predict(r, nd, type = "contrib")
  expect_equal(unname(ph[, 1:4]), ref_shap(r, nd)[, 1:4, 1], tolerance = TOL$exact)
  expect_equal(rowSums(ph), predict(r, nd, type = "raw"), tolerance = TOL$exact)
})

test_that("a factor binned into several internal features is one player", {
  set.seed(37)
  n <- 3000
  lv <- paste0("L", 1:300)
  x <- data.frame(f = factor(sample(lv, n, TRUE), levels = lv), a = rnorm(n))
  x$f[sample(n, 100)] <- NA
  eff <- rnorm(300)
  y <- ifelse(is.na(x$f), 0.5, eff[as.integer(x$f)]) + x$a + rnorm(n, sd = 0.3)
  fit <- hb_quiet(x, y, nrounds = 4L, num_leaves = 5L, max_bin = 63L, min_data_per_group = 5L, cat_smooth = 1,
                  seed = 1)
  expect_gt(length(fit$feature_levels$f), 63L)  # wider than one internal feature
  expect_true("categorical" %in% hb_trees(fit)$split_type)
  nd <- x[c(1:8, which(is.na(x$f))[1:2]), ]
  ph <- predict(fit, nd, type = "contrib")
  expect_identical(colnames(ph), c("f", "a", "(Intercept)"))
  expect_equal(unname(ph[, 1:2]), ref_shap(fit, nd)[, 1:2, 1], tolerance = TOL$exact)
  expect_equal(rowSums(ph), predict(fit, nd, type = "raw"), tolerance = TOL$exact)
})

test_that("binary and multiclass contributions sum to the raw scores, class by class", {
  b <- gen_task(32, n = 1500, p = 6, task = "binary", na = 0.05, factors = 1)
  fb <- hb_quiet(b$x, b$y, nrounds = 20L, num_leaves = 15L, seed = 2)
  ph <- predict(fb, b$x[1:200, ], type = "contrib")
  expect_equal(rowSums(ph), predict(fb, b$x[1:200, ], type = "raw"), tolerance = TOL$exact)
  expect_equal(length(unique(ph[, "(Intercept)"])), 1L)
  m <- gen_task(33, n = 1500, p = 6, task = "multiclass", K = 3, factors = 1)
  fm <- hb_quiet(m$x, m$y, nrounds = 12L, num_leaves = 7L, seed = 3)
  pa <- predict(fm, m$x[1:100, ], type = "contrib")
  expect_equal(dim(pa), c(100L, 8L, 3L))
  expect_identical(dimnames(pa)[[3]], levels(m$y))
  expect_identical(dimnames(pa)[[2]], c(names(m$x), "(Intercept)"))
  raw <- predict(fm, m$x[1:100, ], type = "raw")
  for (k in 1:3) expect_equal(rowSums(pa[, , k]), unname(raw[, k]), tolerance = TOL$exact)
  # multiclass against the definition, on few features
  small <- m$x[, c("x1", "x2", "x3")]
  f3 <- hb_quiet(small, m$y, nrounds = 3L, num_leaves = 5L, seed = 4)
  ref <- ref_shap(f3, small[1:6, ])
  got <- predict(f3, small[1:6, ], type = "contrib")
  expect_equal(unname(got[, 1:3, ]), ref[, 1:3, , drop = FALSE], tolerance = TOL$exact)
})

test_that("contributions do not depend on the input form, the thread count or a save and load", {
  g <- gen_task(34, n = 1200, p = 6, task = "regression")
  X <- as.matrix(g$x)
  X[sample(length(X), 1500)] <- 0  # zeros a sparse matrix leaves implicit
  fit <- hb_quiet(X, g$y, nrounds = 15L, num_leaves = 31L, seed = 5, bagging_fraction = 0.7, bagging_freq = 1L)
  a <- predict(fit, X[1:150, ], type = "contrib", nthreads = 1L)
  expect_identical(predict(fit, X[1:150, ], type = "contrib", nthreads = 2L), a)
  expect_identical(predict(fit, Matrix::Matrix(X[1:150, ], sparse = TRUE), type = "contrib"), a)
  expect_identical(predict(fit, as.data.frame(X[1:150, ]), type = "contrib"), a)
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  saveRDS(fit, f)
  expect_identical(predict(readRDS(f), X[1:150, ], type = "contrib"), a)
  # bagged trees weigh branches by their bag's rows: the rows still sum up
  expect_equal(rowSums(a), predict(fit, X[1:150, ], type = "raw"), tolerance = TOL$exact)
})

test_that("contributions follow `iteration`, and a feature no tree uses gets zero", {
  g <- gen_task(35, n = 1000, p = 6, task = "regression")
  x <- g$x
  x$unused <- 1  # constant: never split on
  fit <- hb_quiet(x, g$y, nrounds = 10L, num_leaves = 7L, seed = 6)
  expect_false("unused" %in% hb_trees(fit)$feature)
  p3 <- predict(fit, x[1:50, ], type = "contrib", iteration = 3L)
  expect_equal(rowSums(p3), predict(fit, x[1:50, ], type = "raw", iteration = 3L), tolerance = TOL$exact)
  expect_identical(unname(p3[, "unused"]), rep(0, 50))
  expect_false(isTRUE(all.equal(p3, predict(fit, x[1:50, ], type = "contrib"))))
  # one row, and a model whose trees are single leaves (nothing to split)
  expect_equal(dim(predict(fit, x[7, ], type = "contrib")), c(1L, 8L))
  expect_warning(flat <- hb_quiet(x[1:30, ], rep(2.5, 30), nrounds = 3L, seed = 1), class = "histboost_warning")
  pf <- predict(flat, x[1:4, ], type = "contrib")
  expect_identical(unname(pf[, 1:7]), matrix(0, 4, 7))
  expect_equal(unname(pf[, 8]), rep(2.5, 4), tolerance = TOL$exact)
})

test_that("a misspelt contribution type is a classed error naming `type`", {
  g <- gen_task(36, n = 300, p = 6, task = "regression")
  fit <- hb_quiet(g$x, g$y, nrounds = 2L, seed = 1)
  expect_error(predict(fit, g$x, type = "contribs"), class = "histboost_error_input", regexp = "`type`")
})
