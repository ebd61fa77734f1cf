# The binning parameters beside max_bin: min_data_in_bin (LightGBM's, the
# fewest sampled rows a numeric bin holds and a factor level needs for a bin
# of its own) and bin_sample_rows (LightGBM's bin_construct_sample_cnt, the
# rows sampled to place numeric boundaries). Numeric bins against lightgbm
# are in test-lightgbm.R; here the factor rule, the sample, the trees'
# thresholds, and the arguments' checks and records.

test_that("min_data_in_bin decides which factor levels keep a bin, by plain R's reading of LightGBM's rule", {
  skip_without_test_hooks()
  set.seed(11)
  cnt <- c(60, 30, 12, 9, 4, 2, 2, 1, 1)
  lv <- paste0("L", seq_along(cnt))
  f <- factor(sample(rep(lv, cnt)), levels = lv)
  f[sample(length(f), 5)] <- NA
  want <- list(`1` = lv, `3` = lv[1:5], `10` = lv[1:3], `40` = lv[1:2])
  # the counts written out: past the first two, a level under k rows ends the list
  for (k in names(want)) expect_identical(ref_kept_levels(f, min_data_in_bin = as.integer(k)), want[[k]], label = k)
  for (k in names(want)) {
    b <- histboost:::.hb_dataset_bins(hb_dataset(data.frame(f = f), seq_along(f), min_data_in_bin = as.integer(k)))[, 1]
    key <- ifelse(is.na(f) | !(as.character(f) %in% want[[k]]), "<other>", as.character(f))
    # one bin a kept level, one for the rest with NA: the same partition of the rows
    expect_identical(as.integer(factor(b)), as.integer(factor(key, levels = unique(key[order(b)]))), label = k)
    expect_identical(length(unique(b)), length(want[[k]]) + 1L, label = k)
  }
})

test_that("a model's thresholds are the bin bounds of its min_data_in_bin", {
  set.seed(3)
  x <- data.frame(a = round(runif(400, 1, 100), 1), b = c(rep(NA, 40), rnorm(360)))
  y <- sin(x$a / 10) + ifelse(is.na(x$b), 1, x$b) + rnorm(400, sd = 0.1)
  for (k in c(1L, 25L)) {
    m <- histboost(x, y, nrounds = 20L, num_leaves = 15L, min_data_in_leaf = 2L, min_data_in_bin = k,
                   verbose = 0L, nthreads = 2L)
    tr <- hb_trees(m)
    tr <- tr[!tr$is_leaf, ]
    for (v in c("a", "b")) {
      ub <- ref_numeric_upper(x[[v]], min_data_in_bin = k)
      th <- unique(tr$threshold[tr$feature == v])
      expect_gt(length(th), 0L)
      # every threshold is a bound of the reference's bins (to the bound's float rounding)
      expect_true(all(vapply(th, function(t) min(abs(ub - t)) <= 1e-9 * max(1, abs(t)), NA)), label = paste(v, k))
    }
    # 25 rows a bin: at most 400 / 25 thresholds on a (16 bins), 360 / 25 on b
    if (k == 25L) {
      expect_lte(length(unique(tr$threshold[tr$feature == "a"])), 15L)
      expect_lte(length(unique(tr$threshold[tr$feature == "b"])), 14L)
    }
  }
})

test_that("bin_sample_rows places numeric boundaries from that many rows", {
  skip_without_test_hooks()
  set.seed(5)
  n <- 6000
  x <- data.frame(a = runif(n), f = factor(sample(c("u", "v", "w"), n, TRUE)))
  y <- rnorm(n)
  bins_of <- function(...) histboost:::.hb_dataset_bins(hb_dataset(x, y, nthreads = 2L, ...))
  all_rows <- bins_of(bin_sample_rows = n)
  # every row in the sample: LightGBM's bins of all 6000 distinct values (positive: 254 bins, one
  # of the 255 kept for the zero bin)
  ub <- ref_numeric_upper(x$a)
  expect_length(ub, 253L)
  expect_identical(all_rows[, 1], as.integer(findInterval(x$a, ub, left.open = TRUE)))
  expect_identical(bins_of()[, 1], all_rows[, 1])   # the default, 200000 rows, is all of them here
  # 300 rows sampled of 6000 (about 300: each row with probability 300 / 6000): at most
  # about 300 / 3 bins of 3 sampled rows each, the bins still in the values' order
  few <- bins_of(bin_sample_rows = 300L)
  nb <- length(unique(few[, 1]))
  expect_gte(nb, 70L)
  expect_lte(nb, 120L)
  o <- order(x$a)
  expect_false(is.unsorted(few[o, 1]))
  # reproducible, whatever the thread count; factor levels are counted over every row
  expect_identical(histboost:::.hb_dataset_bins(hb_dataset(x, y, nthreads = 1L, bin_sample_rows = 300L)), few)
  expect_identical(few[, 2], all_rows[, 2])
  # histboost() passes it on: a model of the sampled bins has at most their bounds as thresholds
  m <- histboost(x, y, nrounds = 5L, num_leaves = 63L, min_data_in_leaf = 5L, bin_sample_rows = 300L,
                 verbose = 0L, nthreads = 2L)
  expect_lte(length(unique(hb_trees(m)$threshold[hb_trees(m)$feature == "a"])), nb - 1L)
  expect_identical(m$params$bin_sample_rows, 300L)
})

test_that("the binning arguments are checked, take LightGBM's names and are fixed by a dataset", {
  x <- data.frame(a = c(1:50, NA), g = factor(rep(c("p", "q", "r"), 17)))
  y <- as.numeric(1:51)
  for (bad in list(0, -1, 1.5, NA, "3", c(2, 3), TRUE)) {
    expect_error(hb_dataset(x, y, min_data_in_bin = bad), "`min_data_in_bin` must be a whole number >= 1",
                 class = "histboost_error_input")
    expect_error(hb_dataset(x, y, bin_sample_rows = bad), "`bin_sample_rows` must be a whole number >= 1",
                 class = "histboost_error_input")
    expect_error(histboost(x, y, min_data_in_bin = bad, nrounds = 1L, verbose = 0L),
                 "`min_data_in_bin` must be a whole number >= 1", class = "histboost_error_input")
  }
  expect_error(hb_cv(x, y, nfold = 2L, nrounds = 1L, bin_sample_rows = 0, verbose = 0L),
               "`bin_sample_rows` must be a whole number >= 1", class = "histboost_error_input")
  # LightGBM's names through params, the same model as the arguments
  m1 <- histboost(x, y, nrounds = 3L, min_data_in_leaf = 2L, min_data_in_bin = 7L, bin_sample_rows = 40L,
                  verbose = 0L, nthreads = 1L)
  m2 <- histboost(x, y, nrounds = 3L, min_data_in_leaf = 2L, verbose = 0L, nthreads = 1L,
                  params = list(min_data_in_bin = 7L, bin_construct_sample_cnt = 40L))
  m3 <- histboost(x, y, nrounds = 3L, min_data_in_leaf = 2L, verbose = 0L, nthreads = 1L,
                  params = list(min_data_in_bin = 7L, subsample_for_bin = 40L))
  expect_identical(predict(m2, x), predict(m1, x))
  expect_identical(predict(m3, x), predict(m1, x))
  expect_error(histboost(x, y, nrounds = 1L, min_data_in_bin = 2L, params = list(min_data_in_bin = 4L)),
               "min_data_in_bin", class = "histboost_error_input")
  # recorded with the model, through save and load; the defaults are not written
  expect_identical(m1$params[c("max_bin", "min_data_in_bin", "bin_sample_rows")],
                   list(max_bin = 255L, min_data_in_bin = 7L, bin_sample_rows = 40L))
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f))
  hb_save(m1, f)
  expect_identical(hb_load(f)$params[c("min_data_in_bin", "bin_sample_rows")],
                   list(min_data_in_bin = 7L, bin_sample_rows = 40L))
  m0 <- histboost(x, y, nrounds = 1L, verbose = 0L, nthreads = 1L)
  expect_false(grepl("min_data_in_bin|bin_sample_rows", m0$model_text))
  expect_identical(m0$params[c("min_data_in_bin", "bin_sample_rows")], list(min_data_in_bin = 3L, bin_sample_rows = 200000L))
  # a dataset fixes them: giving another value is an error naming it, the same value is fine
  d <- hb_dataset(x, y, min_data_in_bin = 7L)
  expect_identical(d[c("max_bin", "min_data_in_bin", "bin_sample_rows")],
                   list(max_bin = 255L, min_data_in_bin = 7L, bin_sample_rows = 200000L))
  expect_error(histboost(d, min_data_in_bin = 3L, nrounds = 1L, verbose = 0L),
               "`min_data_in_bin` must not be given when `x` is an hb_dataset: it was binned with min_data_in_bin = 7",
               class = "histboost_error_input")
  expect_error(histboost(d, params = list(bin_construct_sample_cnt = 10L), nrounds = 1L, verbose = 0L),
               "`bin_sample_rows` must not be given when `x` is an hb_dataset", class = "histboost_error_input")
  expect_identical(predict(histboost(d, min_data_in_bin = 7L, nrounds = 3L, min_data_in_leaf = 2L, verbose = 0L,
                                     nthreads = 1L), x),
                   predict(histboost(x, y, min_data_in_bin = 7L, nrounds = 3L, min_data_in_leaf = 2L, verbose = 0L,
                                     nthreads = 1L), x))
  expect_error(hb_dataset(x, y, reference = d, min_data_in_bin = 2L),
               "`min_data_in_bin` \\(2\\) differs from the reference dataset's \\(7\\)", class = "histboost_error_input")
  v <- hb_dataset(x[1:10, ], y[1:10], reference = d, min_data_in_bin = 7L)
  expect_identical(v$min_data_in_bin, 7L)
})

test_that("hb_cv() bins each fold with the binning arguments", {
  set.seed(9)
  x <- data.frame(a = runif(300))
  y <- x$a + rnorm(300, sd = 0.05)
  cv <- hb_cv(x, y, nfold = 3L, nrounds = 5L, num_leaves = 63L, min_data_in_leaf = 2L, min_data_in_bin = 40L,
              keep_models = TRUE, verbose = 0L, nthreads = 1L, seed = 1)
  for (m in cv$models) {
    expect_identical(m$params$min_data_in_bin, 40L)
    # 200 training rows a fold in bins of 40: at most 5 bins, 4 thresholds
    expect_lte(length(unique(hb_trees(m)$threshold[!hb_trees(m)$is_leaf])), 4L)
  }
})

test_that("max_bin_by_feature gives columns their own max_bin, is checked, recorded and fixed by a dataset", {
  skip_without_test_hooks()
  set.seed(8)
  x <- data.frame(a = runif(2000), b = rnorm(2000), g = factor(sample(letters[1:12], 2000, TRUE)))
  x$b[sample(2000, 50)] <- NA
  y <- x$a + rnorm(2000)
  bins_of <- function(...) histboost:::.hb_dataset_bins(hb_dataset(x, y, nthreads = 2L, ...))
  by_name <- bins_of(max_bin_by_feature = c(b = 9L, a = 5L))
  # each column as plain R bins it at its own max_bin (b's NA bin within its 9, and a bin kept for
  # zero between its negative and positive values: 7 for the values)
  expect_identical(by_name[, 1], as.integer(findInterval(x$a, ref_numeric_upper(x$a, max_bin = 5L), left.open = TRUE)))
  ok <- !is.na(x$b)
  expect_identical(length(unique(by_name[ok, 2])), 7L)
  expect_identical(by_name[ok, 2], as.integer(findInterval(x$b[ok], ref_numeric_upper(x$b, max_bin = 9L),
                                                            left.open = TRUE)))
  expect_identical(by_name[, 3], bins_of()[, 3])  # g keeps max_bin
  # the same as the whole dataset at that max_bin, column by column; unnamed, one a column
  expect_identical(by_name[, 1], bins_of(max_bin = 5L)[, 1])
  expect_identical(bins_of(max_bin_by_feature = c(5, 9, 255)), by_name)
  # a factor's levels are capped as max_bin caps them: 12 levels at 4 a feature make 3 features
  expect_identical(ncol(bins_of(max_bin_by_feature = c(g = 4L))), ncol(bins_of(max_bin = 4L)))
  expect_identical(bins_of(max_bin_by_feature = c(g = 4L))[, -(1:2)], bins_of(max_bin = 4L)[, -(1:2)])
  # checks: names, length, values
  expect_error(hb_dataset(x, y, max_bin_by_feature = c(aa = 5L)), "`max_bin_by_feature` names `aa`, not a column of `x`",
               class = "histboost_error_input")
  expect_error(hb_dataset(x, y, max_bin_by_feature = c(5L, 9L)), "has 2 values but `x` has 3 columns",
               class = "histboost_error_input")
  for (bad in list(1, 256, NA, 2.5, "5", list(a = 5))) {
    expect_error(hb_dataset(x, y, max_bin_by_feature = bad), "`max_bin_by_feature` must be NULL or whole numbers",
                 class = "histboost_error_input")
  }
  expect_error(hb_dataset(x, y, max_bin_by_feature = c(a = 5, a = 6)), "`max_bin_by_feature` names `a` twice",
               class = "histboost_error_input")
  # histboost(): recorded with the model through save and load; a dataset fixes it
  m <- histboost(x, y, nrounds = 3L, max_bin_by_feature = c(a = 5L), verbose = 0L, nthreads = 1L)
  expect_identical(m$params$max_bin_by_feature, c(a = 5L))
  th <- unique(hb_trees(m)$threshold[hb_trees(m)$feature %in% "a"])
  expect_true(all(th %in% ref_numeric_upper(x$a, max_bin = 5L)))
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f))
  hb_save(m, f)
  expect_identical(hb_load(f)$params$max_bin_by_feature, c(a = 5L))
  expect_null(histboost(x, y, nrounds = 1L, verbose = 0L, nthreads = 1L)$params$max_bin_by_feature)
  d <- hb_dataset(x, y, max_bin_by_feature = c(a = 5L))
  expect_identical(d$max_bin_by_feature, c(a = 5L))
  expect_error(histboost(d, max_bin_by_feature = c(a = 6L), nrounds = 1L, verbose = 0L),
               "`max_bin_by_feature` must not be given when `x` is an hb_dataset: it was binned with max_bin_by_feature = c\\(a = 5\\)",
               class = "histboost_error_input")
  expect_identical(predict(histboost(d, max_bin_by_feature = c(a = 5L), nrounds = 2L,
                                     verbose = 0L, nthreads = 1L), x),
                   predict(histboost(x, y, max_bin_by_feature = c(a = 5L), nrounds = 2L, verbose = 0L, nthreads = 1L), x))
  expect_error(hb_dataset(x[1:10, ], y[1:10], reference = d, max_bin_by_feature = c(b = 5L)),
               "`max_bin_by_feature` \\(c\\(b = 5\\)\\) differs from the reference dataset's \\(c\\(a = 5\\)\\)",
               class = "histboost_error_input")
  # params takes it under LightGBM's name
  expect_identical(histboost(x, y, nrounds = 2L, verbose = 0L, nthreads = 1L,
                             params = list(max_bin_by_feature = c(5L, 255L, 255L)))$params$max_bin_by_feature,
                   c(a = 5L, b = 255L, g = 255L))
})
