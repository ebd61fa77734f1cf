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

# Numeric columns whose binning LightGBM's rules decide: single-row values,
# a frequent value among them, both signs without a zero, zeros with NAs,
# values within 1e-35 of zero, budgets cut by max_bin and by the NA bin,
# negatives alone, many values of both signs.
bin_cases <- function() {
  set.seed(7)
  list(
    ones = list(x = as.numeric(1:40)),
    ties = list(x = sample(c(rep(1.5, 5), 2:30, rep(31, 2), 40:45))),
    signs = list(x = c(-2, -1, 1, 2, 3, 4, 5, 6)),
    scaled = list(x = scale(1:62)[, 1]),
    zero_na = list(x = c(-(8:1), rep(0, 3), 1:12, NA, NA, 1e6)),
    tiny = list(x = c(rep(1e-40, 3), rep(0, 3), 1:4, rep(-1e-40, 2))),
    cut4 = list(x = rep(1:4, each = 10), max_bin = 4L),
    na_cut5 = list(x = c(rep(1:4, each = 10), NA, NA), max_bin = 5L),
    neg3 = list(x = rep(-3:-1, each = 10), max_bin = 3L),
    many = list(x = round(rnorm(2000), 3), max_bin = 63L)
  )
}

# For sorted distinct non-missing values of x, whether each shares a bin
# with the next, read from one fully grown tree: y rises with x, so every
# bin boundary is a split of positive gain, and two values share a leaf
# exactly when they share a bin.
same_bin_by_tree <- function(x, max_bin, pkg, min_data_in_bin = 3L, by_feature = FALSE) {
  y <- rank(x, na.last = "keep"); y[is.na(y)] <- 0
  # by_feature: max_bin 255, and the column's own max_bin as given
  mb <- if (by_feature) 255L else max_bin
  if (pkg == "histboost") {
    m <- histboost(data.frame(x = x), y, nrounds = 1L, num_leaves = 255L, min_data_in_leaf = 1L,
                   min_sum_hessian_in_leaf = 0, lambda_l2 = 0, learning_rate = 1, max_bin = mb,
                   min_data_in_bin = min_data_in_bin, verbose = 0L, nthreads = 1L,
                   max_bin_by_feature = if (by_feature) c(x = max_bin))
    leaf <- predict(m, data.frame(x = x), type = "leaf")[, 1]
  } else {
    params <- list(objective = "regression", num_leaves = 1000L, min_data_in_leaf = 1L,
                   min_sum_hessian_in_leaf = 0, lambda_l2 = 0, learning_rate = 1, num_threads = 1L,
                   verbose = -1L)
    dp <- c(list(max_bin = mb, min_data_in_bin = min_data_in_bin),
            if (by_feature) list(max_bin_by_feature = max_bin))
    b <- lightgbm::lgb.train(params, lightgbm::lgb.Dataset(matrix(x), label = y, params = dp), nrounds = 1L)
    leaf <- predict(b, matrix(x), type = "leaf")
  }
  ok <- !is.na(x)
  v <- sort(unique(x[ok]))
  lv <- leaf[ok][match(v, x[ok])]
  lv[-1L] == lv[-length(lv)]
}

test_that("numeric features are binned as lightgbm bins them: the same rows share a bin", {
  for (nm in names(bin_cases())) {
    cs <- bin_cases()[[nm]]
    mb <- cs$max_bin %||% 255L
    same_lgb <- same_bin_by_tree(cs$x, mb, "lightgbm")
    expect_identical(same_bin_by_tree(cs$x, mb, "histboost"), same_lgb, label = nm)
    # plain R's reading of the rule (helper-histboost.R) says the same
    v <- sort(unique(cs$x[!is.na(cs$x)]))
    bin <- findInterval(v, ref_numeric_upper(cs$x, max_bin = mb), left.open = TRUE)
    expect_identical(bin[-1L] == bin[-length(bin)], same_lgb, label = paste(nm, "reference"))
  }
  # by hand: bounds after every third single-row value; the signs apart at
  # zero; NAs take a bin of max_bin; 1e-40 is zero
  expect_equal(ref_numeric_upper(as.numeric(1:40)), seq(3.5, 39.5, by = 3))
  expect_identical(same_bin_by_tree(c(-2, -1, 1, 2, 3, 4, 5, 6), 255L, "histboost"),
                   c(TRUE, FALSE, TRUE, TRUE, FALSE, TRUE, TRUE))
  expect_identical(same_bin_by_tree(c(rep(1:4, each = 10), NA, NA), 5L, "histboost"), c(TRUE, FALSE, FALSE))
  expect_identical(same_bin_by_tree(c(rep(1e-40, 3), rep(0, 3), 1:4), 255L, "histboost"),
                   c(TRUE, FALSE, TRUE, TRUE, FALSE))
})

test_that("min_data_in_bin bins numeric features as lightgbm's min_data_in_bin does", {
  # every case at 1 (a bin a value while there are at most max_bin), at 5 and at 12 (fuller bins)
  for (nm in names(bin_cases())) {
    cs <- bin_cases()[[nm]]
    mb <- cs$max_bin %||% 255L
    for (k in c(1L, 5L, 12L)) {
      lab <- paste(nm, "min_data_in_bin", k)
      same_lgb <- same_bin_by_tree(cs$x, mb, "lightgbm", min_data_in_bin = k)
      expect_identical(same_bin_by_tree(cs$x, mb, "histboost", min_data_in_bin = k), same_lgb, label = lab)
      v <- sort(unique(cs$x[!is.na(cs$x)]))
      bin <- findInterval(v, ref_numeric_upper(cs$x, max_bin = mb, min_data_in_bin = k), left.open = TRUE)
      expect_identical(bin[-1L] == bin[-length(bin)], same_lgb, label = paste(lab, "reference"))
    }
  }
  # max_bin_by_feature caps the column as max_bin does, in both packages (max_bin itself 255)
  for (nm in c("cut4", "na_cut5", "neg3", "many")) {
    cs <- bin_cases()[[nm]]
    expect_identical(same_bin_by_tree(cs$x, cs$max_bin, "histboost", by_feature = TRUE),
                     same_bin_by_tree(cs$x, cs$max_bin, "lightgbm", by_feature = TRUE), label = nm)
    expect_identical(same_bin_by_tree(cs$x, cs$max_bin, "histboost", by_feature = TRUE),
                     same_bin_by_tree(cs$x, cs$max_bin, "histboost"), label = nm)
  }
  # by hand: 1:40 in bins of 5 rows; one row a value gives 40 bins, 40 rows one bin
  expect_identical(same_bin_by_tree(as.numeric(1:40), 255L, "histboost", min_data_in_bin = 5L),
                   rep(c(TRUE, TRUE, TRUE, TRUE, FALSE), 8)[-40])
  expect_identical(same_bin_by_tree(as.numeric(1:40), 255L, "histboost", min_data_in_bin = 1L), rep(FALSE, 39))
})

test_that("the engine's bin codes are the reference's (test hooks)", {
  skip_without_test_hooks()
  for (nm in names(bin_cases())) {
    cs <- bin_cases()[[nm]]
    mb <- cs$max_bin %||% 255L
    b <- histboost:::.hb_dataset_bins(hb_dataset(data.frame(v = cs$x), seq_along(cs$x), max_bin = mb))[, 1]
    ok <- !is.na(cs$x)
    bin <- findInterval(cs$x[ok], ref_numeric_upper(cs$x, max_bin = mb), left.open = TRUE)
    # the same partition of the rows, in the same order (bin codes rise with the value)
    expect_identical(as.integer(factor(b[ok])), as.integer(factor(bin)), label = nm)
    if (!all(ok)) expect_false(any(b[!ok] %in% b[ok]), label = nm)
  }
})

test_that("a step between single-row values is split at lightgbm's threshold, with its predictions", {
  # A bin a value would split at 10.5; lightgbm's bins end at 9.5 and 12.5.
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

test_that("small leaves are split where lightgbm splits them: its two scans count rows their own ways", {
  # lightgbm estimates a side's rows from hessian sums, bin by bin, and scans each numeric feature
  # twice: from the top with missing values left, counting the right side (the left is n less it),
  # and, for a feature with NAs in training, from the bottom with them right, counting the left
  # side, or the right side with the NAs where its most frequent bin is its first (as for positive
  # values, whose first bin is an empty zero bin: the top scan then ends with the NAs alone left).
  # Where hessians vary, the counts of one threshold differ by rounding, and min_data_in_leaf
  # decides which thresholds each scan can take. A random init_score makes every gradient and
  # hessian differ (no two candidates tie), so the trees must match: the same rows in every leaf,
  # so the same raw scores on the training rows, with and without NAs, for values of both signs
  # and for positive ones.
  n <- 300L; p <- 4L
  for (case in c("both signs", "both signs, NAs", "positive, NAs")) {
    na <- if (grepl("NAs", case)) 0.1 else 0
    for (s in 1:6) {
      set.seed(s)
      x <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("x", 1:p)))
      if (startsWith(case, "positive")) x <- exp(x)
      if (na > 0) x[sample(n * p, n * p * na)] <- NA
      y <- rbinom(n, 1, plogis(2 * ifelse(is.na(x[, 1]), 0.8, sin(2 * x[, 1]))))
      off <- rnorm(n)
      hb <- histboost(x, factor(y), objective = "binary", nrounds = 5L, learning_rate = 0.3, num_leaves = 15L,
                      min_data_in_leaf = 5L, init_score = off, nthreads = 1L, verbose = 0L)
      lg <- lightgbm::lgb.train(list(objective = "binary", num_leaves = 15L, learning_rate = 0.3,
                                     min_data_in_leaf = 5L, num_threads = 1L, verbose = -1L, deterministic = TRUE),
                                lightgbm::lgb.Dataset(x, label = y, init_score = off), nrounds = 5L, verbose = -1L)
      expect_equal(predict(hb, x, type = "raw"), predict(lg, x, type = "raw"), tolerance = 1e-7,
                   label = sprintf("raw scores, %s, seed %d", case, s))
    }
  }
})

test_that("on survival::pbc (factors, an ordered factor, NAs in 12 columns) the trees are lightgbm's", {
  skip_if_not_installed("survival")
  d <- survival::pbc
  x <- d[, setdiff(names(d), c("id", "status"))]
  x$trt <- factor(x$trt)
  x$edema <- factor(x$edema)
  x$stage <- factor(x$stage, levels = 1:4, ordered = TRUE)
  y <- factor(d$status)
  # lightgbm: factors as 0-based codes, categorical; the ordered factor as its codes (histboost's
  # ordered_factors = "ordinal" splits on the level order)
  m <- sapply(x, function(v) if (is.factor(v)) as.integer(v) - 1 else as.numeric(v))
  cats <- which(vapply(x, function(v) is.factor(v) && !is.ordered(v), TRUE))
  hb <- histboost(x, y, nrounds = 6L, learning_rate = 0.05, num_leaves = 15L, min_data_in_leaf = 5L, nthreads = 1L,
                  verbose = 0L)
  lg <- lightgbm::lgb.train(list(objective = "multiclass", num_class = 3L, num_leaves = 15L, learning_rate = 0.05,
                                 min_data_in_leaf = 5L, num_threads = 1L, verbose = -1L, deterministic = TRUE),
                            lightgbm::lgb.Dataset(m, label = as.integer(y) - 1L, categorical_feature = cats),
                            nrounds = 6L, verbose = -1L)
  for (k in c(1L, 3L, 6L)) {
    expect_equal(unname(predict(hb, x, type = "raw", iteration = k)), unname(predict(lg, m, type = "raw", num_iteration = k)),
                 tolerance = 1e-6, label = sprintf("raw scores after %d rounds", k))
  }
})

test_that("boost_from_average = FALSE starts from 0 as lightgbm's does: the same raw scores", {
  # l2 far from 0, poisson and binary: the first trees learn the level themselves
  set.seed(11)
  n <- 400L
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  x[sample(n * 3, 60)] <- NA
  cases <- list(regression = 30 + 2 * sin(ifelse(is.na(x[, 1]), 0, x[, 1])) + rnorm(n),
                poisson = rpois(n, exp(1 + ifelse(is.na(x[, 2]), 0, x[, 2]))),
                binary = rbinom(n, 1, 0.15))
  for (obj in names(cases)) {
    y <- cases[[obj]]
    hb <- histboost(x, y, objective = obj, boost_from_average = FALSE, nrounds = 8L, learning_rate = 0.3,
                    num_leaves = 7L, min_data_in_leaf = 10L, nthreads = 1L, verbose = 0L, seed = 1)
    lg <- lightgbm::lgb.train(list(objective = obj, boost_from_average = FALSE, num_leaves = 7L, learning_rate = 0.3,
                                   min_data_in_leaf = 10L, num_threads = 1L, verbose = -1L, deterministic = TRUE),
                              lightgbm::lgb.Dataset(x, label = y), nrounds = 8L, verbose = -1L)
    expect_equal(predict(hb, x, type = "raw"), predict(lg, x, type = "raw"), tolerance = 1e-6, label = obj)
    # and the default starts elsewhere: the average's start is not 0
    avg <- histboost(x, y, objective = obj, nrounds = 8L, learning_rate = 0.3, num_leaves = 7L,
                     min_data_in_leaf = 10L, nthreads = 1L, verbose = 0L, seed = 1)
    expect_false(isTRUE(all.equal(predict(avg, x, type = "raw"), predict(hb, x, type = "raw"))), label = obj)
    expect_identical(hb$params$boost_from_average, FALSE)
    # kept by the model file
    f <- tempfile(); hb_save(hb, f)
    expect_identical(predict(hb_load(f), x, type = "raw"), predict(hb, x, type = "raw"))
  }
  expect_input_error(histboost(x, cases$regression, boost_from_average = NA, verbose = 0L), "`boost_from_average`")
})

test_that("skip_unsplittable = TRUE grows lightgbm's trees where the default searches every feature", {
  # b alone says nothing at the root (the b = 0 and b = 1 rows have one mean: below
  # min_gain_to_split); within either half of a it decides y. lightgbm never tries b below the root.
  a <- rep(c(0, 1), c(120, 80))
  b <- rep(c(0, 1, 0, 1), c(60, 60, 40, 40))
  x <- cbind(a = a, b = b, c = rep_len(c(0.1, 0.2, 0.7, 1.9), 200))
  y <- ifelse(a == 0, 2 * b, 1 + 3 * (1 - b)) + 0.3 * x[, "c"]
  p <- list(objective = "regression", num_leaves = 4L, learning_rate = 0.5, min_data_in_leaf = 20L,
            min_gain_to_split = 1e-3)
  lg <- lightgbm::lgb.train(c(p, list(num_threads = 1L, verbose = -1L, deterministic = TRUE)),
                            lightgbm::lgb.Dataset(x, label = y), nrounds = 3L, verbose = -1L)
  rule <- histboost(x, y, nrounds = 3L, params = p, skip_unsplittable = TRUE, nthreads = 1L, verbose = 0L)
  plain <- histboost(x, y, nrounds = 3L, params = p, nthreads = 1L, verbose = 0L)
  expect_equal(predict(rule, x, type = "raw"), predict(lg, x, type = "raw"), tolerance = 1e-6)
  expect_false("b" %in% hb_trees(rule)$feature)
  # the default finds what lightgbm's rule leaves out: a far closer fit
  expect_true("b" %in% hb_trees(plain)$feature)
  expect_lt(mean((predict(plain, x) - y)^2), 0.1 * mean((predict(lg, x) - y)^2))

  # lattice::barley's three factors, many-vs-many splits (real-data-cv.R's barley_l2_cat): a
  # parent's best categorical gain is often below 0 under cat_l2 where a child's is above
  d <- lattice::barley
  xb <- d[, c("variety", "year", "site")]
  pb <- list(objective = "regression", num_leaves = 15L, learning_rate = 0.05, min_data_in_leaf = 5L,
             min_data_per_group = 10L, cat_smooth = 5)
  lgb <- lightgbm::lgb.train(c(pb, list(num_threads = 1L, verbose = -1L, deterministic = TRUE)),
                             lightgbm::lgb.Dataset(lgb_matrix(xb), label = d$yield, categorical_feature = names(xb)),
                             nrounds = 150L, verbose = -1L)
  rule <- histboost(xb, d$yield, nrounds = 150L, params = pb, skip_unsplittable = TRUE, nthreads = 1L, verbose = 0L)
  plain <- histboost(xb, d$yield, nrounds = 150L, params = pb, nthreads = 1L, verbose = 0L)
  expect_equal(predict(rule, xb, type = "raw"), predict(lgb, lgb_matrix(xb), type = "raw"), tolerance = 1e-6)
  expect_gt(max(abs(predict(plain, xb, type = "raw") - predict(lgb, lgb_matrix(xb), type = "raw"))), 0.1)
})

test_that("feature_pre_filter: the features lightgbm's pre-filter drops, and its trees either way", {
  # agaricus (lightgbm's own demo): 0/1 columns, some set in fewer rows than min_data_in_leaf, which the
  # binary loss's hessian-estimated row counts can still split
  e <- new.env()
  utils::data("agaricus.train", package = "lightgbm", envir = e)
  utils::data("agaricus.test", package = "lightgbm", envir = e)
  X <- e$agaricus.train$data
  y <- e$agaricus.train$label
  Xte <- e$agaricus.test$data
  # the rule in plain R: no split of a 0/1 column leaves 20 rows a side
  nnz <- Matrix::colSums(X != 0)
  dropped <- colnames(X)[pmin(nnz, nrow(X) - nnz) < 20 & nnz > 0]
  expect_gt(length(dropped), 0L)
  fit <- function(pf) hb_quiet(X, y, objective = "binary", nrounds = 10L, num_leaves = 15L, nthreads = 1L, seed = 1,
                               skip_unsplittable = TRUE, feature_pre_filter = pf)
  on <- fit(TRUE)
  off <- fit(FALSE)
  expect_false(any(hb_trees(on)$feature %in% dropped))
  expect_true(any(hb_trees(off)$feature %in% dropped))  # (the case: without it one is split on)
  expect_identical(hb_trees(hb_quiet(X, y, objective = "binary", nrounds = 10L, num_leaves = 15L, nthreads = 1L,
                                     seed = 1, skip_unsplittable = TRUE)), hb_trees(on))  # the default
  for (pf in c(TRUE, FALSE)) {
    lg <- lightgbm::lgb.train(list(objective = "binary", num_leaves = 15L, num_threads = 1L, verbose = -1L,
                                   deterministic = TRUE, force_col_wise = TRUE),
                              lightgbm::lgb.Dataset(X, label = y, params = list(verbose = -1L, feature_pre_filter = pf)),
                              nrounds = 10L)
    expect_lt(max(abs(predict(lg, Xte) - predict(if (pf) on else off, Xte))), 1e-6)
  }
})
