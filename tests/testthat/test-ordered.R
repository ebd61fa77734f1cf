# Ordered factors split on their level order by default (ordered_factors =
# "ordinal"): a numeric feature of level codes whose model keeps the levels.

ord_data <- function(n, K, seed) {
  set.seed(seed)
  lv <- sprintf("q%02d", seq_len(K))
  o <- factor(sample(lv, n, TRUE), levels = lv, ordered = TRUE)
  list(o = o, lv = lv)
}

test_that("a monotone signal in an ordered factor is found in one split, at the best threshold in plain R", {
  # 12 levels of about 8 rows: too few rows per level for a categorical
  # scan with the defaults (cat_smooth = 10), but a threshold needs none.
  d <- ord_data(96, 12, 1)
  y <- 0.4 * as.integer(d$o) + rnorm(96, sd = 0.3)
  m <- histboost(data.frame(o = d$o), y, nrounds = 1L, num_leaves = 2L, learning_rate = 1, min_data_in_leaf = 5L,
                 verbose = 0L)
  expect_identical(m$feature_types, "ordinal")
  expect_identical(m$feature_levels$o, d$lv)
  tr <- hb_trees(m)
  inner <- tr[!tr$is_leaf, ]
  expect_equal(nrow(inner), 1L)
  expect_identical(inner$split_type, "numeric")
  # brute force: the threshold between levels k and k+1 with the largest
  # drop in squared error, each side with >= 5 rows
  code <- as.integer(d$o)
  sse <- function(v) sum((v - mean(v))^2)
  cand <- sort(unique(code))
  cand <- cand[-length(cand)]
  ok <- vapply(cand, function(k) min(sum(code <= k), sum(code > k)) >= 5, TRUE)
  drop <- vapply(cand, function(k) sse(y) - sse(y[code <= k]) - sse(y[code > k]), 0)
  k <- cand[ok][which.max(drop[ok])]
  expect_true(inner$threshold >= k && inner$threshold < k + 1)
  expect_identical(inner$categories, paste(d$lv[seq_len(k)], collapse = "||"))
  expect_equal(inner$gain, max(drop[ok]), tolerance = 1e-9)
  # with the defaults a categorical split of the same factor finds nothing
  expect_warning(mc <- histboost(data.frame(o = d$o), y, nrounds = 1L, num_leaves = 2L, learning_rate = 1,
                                 min_data_in_leaf = 5L, ordered_factors = "categorical", verbose = 0L),
                 class = "histboost_warning", regexp = "no tree could split")
  expect_identical(mc$feature_types, "categorical")
  expect_equal(sum(!hb_trees(mc)$is_leaf), 0L)
})

test_that("NA and levels unseen in training follow the split's learned missing direction", {
  d <- ord_data(600, 6, 2)
  y <- ifelse(as.integer(d$o) >= 4, 3, 0) + rnorm(600, sd = 0.2)
  o <- d$o
  o[1:60] <- NA
  y[1:60] <- 3 + rnorm(60, sd = 0.2)   # missing rows behave like the high levels
  m <- histboost(data.frame(o = o), y, nrounds = 1L, num_leaves = 2L, learning_rate = 1, verbose = 0L)
  tr <- hb_trees(m)
  inner <- tr[!tr$is_leaf, ]
  expect_false(inner$default_left)      # learned: missing goes right, with q04..q06
  nd <- data.frame(o = factor(c("q01", "q06", NA, "q99"), levels = c("q01", "q06", "q99")))
  expect_warning(p <- predict(m, nd), class = "histboost_warning_unseen_levels", regexp = "`o` \\(1 value: \"q99\"\\)")
  expect_equal(p[3], p[2])
  expect_equal(p[4], p[2])              # an unseen label is missing
  expect_false(isTRUE(all.equal(p[1], p[2])))
  # without missing rows in training, missing values follow the larger child (as numeric features)
  m2 <- histboost(data.frame(o = d$o), y, nrounds = 1L, num_leaves = 2L, learning_rate = 1, verbose = 0L)
  inner2 <- hb_trees(m2)
  inner2 <- inner2[!inner2$is_leaf, ]
  lt <- hb_trees(m2)
  nleft <- lt$count[lt$id == inner2$left]; nright <- lt$count[lt$id == inner2$right]
  expect_identical(inner2$default_left, nleft >= nright)
  p2 <- predict(m2, data.frame(o = c(NA, "q01", "q06")))
  expect_equal(p2[1], if (inner2$default_left) p2[2] else p2[3])
})

test_that("new data is coded by label: reordered levels, characters and plain factors give the same predictions", {
  d <- ord_data(800, 5, 3)
  x <- data.frame(o = d$o, z = rnorm(800))
  y <- as.integer(d$o) + x$z + rnorm(800, sd = 0.3)
  m <- histboost(x, y, nrounds = 20L, num_leaves = 4L, verbose = 0L)
  base <- predict(m, x)
  rev_lv <- factor(as.character(x$o), levels = rev(d$lv), ordered = TRUE)
  expect_equal(predict(m, data.frame(o = rev_lv, z = x$z)), base)
  expect_equal(predict(m, data.frame(o = as.character(x$o), z = x$z)), base)
  expect_equal(predict(m, data.frame(o = factor(as.character(x$o)), z = x$z)), base)
  # the codes as numbers are not the factor
  expect_error(predict(m, data.frame(o = as.integer(x$o), z = x$z)), class = "histboost_error_input",
               regexp = "`o`")
  expect_error(predict(m, as.matrix(data.frame(o = as.integer(x$o), z = x$z))), class = "histboost_error_input",
               regexp = "factor features")
})

test_that("an ordinal model survives its text: hb_save / hb_load, type=ordinal with its levels", {
  d <- ord_data(500, 7, 4)
  x <- data.frame(o = d$o, u = factor(sample(c("a", "b", "c"), 500, TRUE)))
  y <- as.integer(d$o) + (x$u == "b") + rnorm(500, sd = 0.3)
  m <- histboost(x, y, nrounds = 10L, num_leaves = 4L, verbose = 0L)
  expect_identical(m$feature_types, c("ordinal", "categorical"))
  expect_match(m$model_text, "type=ordinal\nnum_levels=7\n", fixed = TRUE)
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  hb_save(m, f)
  m2 <- hb_load(f)
  expect_identical(m2$feature_types, m$feature_types)
  expect_identical(m2$feature_levels, m$feature_levels)
  expect_identical(predict(m2, x), predict(m, x))
  # a validation set and hb_dataset(reference =) code the column the same way
  tr <- hb_dataset(x[1:400, ], y[1:400])
  va <- hb_dataset(x[401:500, ], y[401:500], reference = tr)
  expect_identical(tr$feature_types, c("ordinal", "categorical"))
  mv <- histboost(tr, valid = list(v = va), nrounds = 10L, num_leaves = 4L, verbose = 0L)
  rmse <- sqrt(mean((predict(mv, x[401:500, ]) - y[401:500])^2))
  expect_equal(mv$evaluation_log$v_rmse[10], rmse, tolerance = 1e-9)
  expect_error(hb_dataset(x[401:500, ], reference = tr, ordered_factors = "categorical"),
               class = "histboost_error_input", regexp = "ordered_factors")
  expect_error(histboost(tr, ordered_factors = "categorical", nrounds = 1L, verbose = 0L),
               class = "histboost_error_input", regexp = "ordered_factors")
  expect_error(histboost(x, y, ordered_factors = "ordered", verbose = 0L), class = "histboost_error_input",
               regexp = "ordered_factors")
})

test_that("monotone constraints apply to an ordered factor's level order", {
  d <- ord_data(1500, 8, 5)
  y <- sin(as.integer(d$o)) + 0.3 * as.integer(d$o) + rnorm(1500, sd = 0.5)
  m <- histboost(data.frame(o = d$o), y, nrounds = 30L, num_leaves = 6L, monotone_constraints = c(o = 1L),
                 verbose = 0L)
  p <- predict(m, data.frame(o = factor(d$lv, levels = d$lv, ordered = TRUE)))
  expect_true(all(diff(p) >= 0))
  expect_gt(p[8], p[1])
})
