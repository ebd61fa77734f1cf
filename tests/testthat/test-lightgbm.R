# histboost and lightgbm with the same parameters reach test metrics within
# a small tolerance. Metrics are computed in plain R from each package's
# predictions on held-out rows.

skip_if_not_installed("lightgbm")

common <- list(num_leaves = 31L, learning_rate = 0.1, min_data_in_leaf = 20L,
               max_bin = 63L, lambda_l2 = 1, min_sum_hessian_in_leaf = 1e-3,
               cat_smooth = 10, cat_l2 = 10, max_cat_threshold = 32L, min_data_per_group = 100L)
NROUNDS <- 80L

# lightgbm wants a numeric matrix; factors become 0-based integer codes
# declared through categorical_feature.
lgb_matrix <- function(x) {
  as.matrix(data.frame(lapply(x, function(v) if (is.factor(v)) as.integer(v) - 1L else v)))
}

lgb_fit_predict <- function(xtr, ytr, xte, objective, num_class = NULL) {
  cats <- names(xtr)[vapply(xtr, is.factor, TRUE)]
  ds <- lightgbm::lgb.Dataset(lgb_matrix(xtr), label = ytr,
                              categorical_feature = if (length(cats)) cats else NULL,
                              params = list(max_bin = common$max_bin))
  params <- c(list(objective = objective, num_threads = 2L, verbose = -1L, seed = 1L,
                   bagging_fraction = 1, bagging_freq = 0L, feature_fraction = 1,
                   max_bin = common$max_bin),
              common[setdiff(names(common), "max_bin")])
  if (!is.null(num_class)) params$num_class <- num_class
  m <- lightgbm::lgb.train(params = params, data = ds, nrounds = NROUNDS)
  predict(m, lgb_matrix(xte))
}

hb_fit_predict <- function(xtr, ytr, xte) {
  m <- do.call(histboost, c(list(x = xtr, y = ytr, nrounds = NROUNDS, verbose = 0L, seed = 1L), common))
  expect_equal(m$niter, NROUNDS)
  predict(m, xte, type = "response")
}

split_rows <- function(d, ntest) {
  n <- nrow(d$x)
  te <- seq.int(n - ntest + 1L, n)
  list(xtr = d$x[-te, , drop = FALSE], ytr = d$y[-te], xte = d$x[te, , drop = FALSE], yte = d$y[te])
}

test_that("regression: test rmse within 2% of lightgbm", {
  s <- split_rows(gen_task(11, n = 10000, p = 6, task = "regression", na = 0.03, factors = 1), 3000)
  p_hb <- hb_fit_predict(s$xtr, s$ytr, s$xte)
  p_lgb <- lgb_fit_predict(s$xtr, s$ytr, s$xte, "regression")
  r_hb <- rmse(s$yte, p_hb)
  r_lgb <- rmse(s$yte, p_lgb)
  expect_lt(r_lgb, 0.8 * sd(s$yte))                 # the comparison is between learners that learn
  expect_lt(abs(r_hb - r_lgb) / r_lgb, TOL$lgb_rmse)
})

test_that("binary with NAs: test AUC within 0.01 and logloss within 2% of lightgbm", {
  s <- split_rows(gen_task(12, n = 10000, p = 6, task = "binary", na = 0.1), 3000)
  y01te <- as.numeric(s$yte == "yes")
  p_hb <- hb_fit_predict(s$xtr, s$ytr, s$xte)
  p_lgb <- lgb_fit_predict(s$xtr, as.numeric(s$ytr == "yes"), s$xte, "binary")
  expect_true(all(p_hb >= 0 & p_hb <= 1))
  a_hb <- auc(y01te, p_hb); a_lgb <- auc(y01te, p_lgb)
  l_hb <- logloss(y01te, p_hb); l_lgb <- logloss(y01te, p_lgb)
  expect_gt(a_lgb, 0.7)
  expect_lt(abs(a_hb - a_lgb), TOL$lgb_auc)
  expect_lt(abs(l_hb - l_lgb) / l_lgb, TOL$lgb_logloss)
})

test_that("multiclass with factors: test multi_logloss within 3% of lightgbm", {
  s <- split_rows(gen_task(13, n = 9000, p = 6, task = "multiclass", factors = 2, nlev = 8, K = 3), 3000)
  ykte <- as.integer(s$yte)
  P_hb <- hb_fit_predict(s$xtr, s$ytr, s$xte)
  P_lgb <- lgb_fit_predict(s$xtr, as.integer(s$ytr) - 1L, s$xte, "multiclass", num_class = 3L)
  expect_equal(dim(P_hb), c(3000L, 3L))
  expect_equal(colnames(P_hb), levels(s$yte))
  l_hb <- multi_logloss(ykte, P_hb); l_lgb <- multi_logloss(ykte, P_lgb)
  prior <- as.vector(table(s$ytr)) / length(s$ytr)
  expect_lt(l_lgb, 0.9 * multi_logloss(ykte, matrix(prior, 3000, 3, byrow = TRUE)))
  expect_lt(abs(l_hb - l_lgb) / l_lgb, TOL$lgb_mlogloss)
})

test_that("numeric features of few values are binned as lightgbm bins them (min_data_in_bin = 3, 0 alone)", {
  # Single rows per value: a bin a value would let a split isolate one or two
  # rows; lightgbm merges values until a bin holds 3 rows, 0 in a bin of its
  # own. survival::pbc trained 3.9% worse than lightgbm under early stopping
  # without the merging.
  set.seed(7)
  cases <- list(
    ones = as.numeric(1:40),                                     # 40 values of one row
    ties = sample(c(rep(1.5, 5), 2:30, rep(31, 2), 40:45)),      # a frequent value among singletons
    zero = c(-(8:1), rep(0, 3), 1:12, NA, NA, 1e6),              # negatives, zeros, NAs, an outlier
    small = c(3, 1, 2)                                           # fewer rows than a bin
  )
  for (nm in names(cases)) {
    v <- cases[[nm]]
    up <- ref_numeric_upper(v)
    # plain R's reading, checked by hand on the first case: bounds after every third value
    if (nm == "ones") expect_equal(up, seq(3.5, 39.5, by = 3))
    if (nm == "zero") expect_true(all(c(-5e-324, 0) %in% up))
    bin <- findInterval(v, up, left.open = TRUE)
    held <- tabulate(bin[!is.na(v)] + 1L, length(up) + 1L)
    # every bin holds 3 rows but the last below 0 and the last above it
    last <- c(if (any(v < 0, na.rm = TRUE)) findInterval(-1e-300, up, left.open = TRUE) + 1L, length(up) + 1L)
    short <- setdiff(which(held < 3L), c(last, if (nm == "zero") findInterval(0, up, left.open = TRUE) + 1L))
    expect_length(short, 0L)
    if (exists("C_hb_dataset_bins", envir = asNamespace("histboost"), inherits = FALSE)) {
      b <- histboost:::.hb_dataset_bins(hb_dataset(data.frame(v = v), seq_along(v)))[, 1]
      # the engine's bins are the reference's, NA in a bin of its own
      expect_identical(as.vector(table(b[!is.na(v)], bin[!is.na(v)]) > 0),
                       as.vector(diag(length(unique(bin[!is.na(v)]))) > 0), label = nm)
      if (anyNA(v)) expect_false(any(b[is.na(v)] %in% b[!is.na(v)]), label = nm)
    }
  }
  # A step between the 10th and 11th of 40 single-row values: a bin a value
  # would split at 10.5; lightgbm's bins end at 9.5 and 12.5, and both
  # packages take the same one with the same leaf values.
  x <- data.frame(v = as.numeric(1:40))
  y <- ifelse(x$v > 10, 1, 0) + c(rep(0, 8), 0.9, 0.9, rep(0, 30))
  m <- histboost(x, y, nrounds = 1L, num_leaves = 2L, min_data_in_leaf = 1L, learning_rate = 1,
                 lambda_l2 = 0, verbose = 0L, seed = 1L)
  tr <- hb_trees(m)
  params <- list(objective = "regression", num_leaves = 2L, min_data_in_leaf = 1L, learning_rate = 1,
                 lambda_l2 = 0, min_sum_hessian_in_leaf = 1e-3, num_threads = 1L, verbose = -1L)
  lg <- lightgbm::lgb.train(params, lightgbm::lgb.Dataset(as.matrix(x), label = y), nrounds = 1L)
  lt <- lightgbm::lgb.model.dt.tree(lg)
  expect_equal(tr$threshold[!tr$is_leaf], as.numeric(lt$threshold[!is.na(lt$split_feature)]))
  expect_false(tr$threshold[!tr$is_leaf] == 10.5)
  grid <- data.frame(v = seq(0, 41, by = 0.25))
  # (lightgbm keeps labels as floats: 0.9 is 0.9 + 2.4e-8 there)
  expect_equal(predict(m, grid), predict(lg, as.matrix(grid)), tolerance = 1e-6)
})
