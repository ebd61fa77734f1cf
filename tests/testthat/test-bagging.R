# Balanced bagging (LightGBM's pos_bagging_fraction / neg_bagging_fraction):
# a binary model's two classes drawn at their own rates, with the draws
# bagging_fraction uses (keyed by seed, bagging round and row). The bags are
# read from one-split trees on a column that is the class: the two leaves'
# counts are the bag's rows of each class.

balanced_data <- function(levels = c("no", "yes")) {
  set.seed(2)
  n <- 3000
  pos <- runif(n) < 0.2
  y <- factor(ifelse(pos, "yes", "no"), levels = levels)
  list(x = data.frame(s = as.numeric(pos), z = rnorm(n)), y = y, pos = pos)
}

# The bag's rows of each class in tree `k`: the leaf of s = 0 and of s = 1.
class_counts <- function(m, k = 1L) {
  tr <- hb_trees(m)
  tr <- tr[tr$tree == k, ]
  root <- tr[tr$id == "N0", ]
  stopifnot(identical(root$feature, "s"))
  c(s0 = tr$count[tr$id == root$left], s1 = tr$count[tr$id == root$right])
}

fit_bag <- function(d, ...) {
  histboost(d$x, d$y, nrounds = 3L, num_leaves = 2L, min_data_in_leaf = 1L, bagging_freq = 1L, seed = 7,
            verbose = 0L, nthreads = 2L, ...)
}

test_that("balanced bagging keeps each class's share, with the rows bagging_fraction draws", {
  d <- balanced_data()
  npos <- sum(d$pos)
  nneg <- sum(!d$pos)
  # every positive row, about a quarter of the negative ones (within 5 binomial sd), each round anew
  m <- fit_bag(d, pos_bagging_fraction = 1, neg_bagging_fraction = 0.25)
  negs <- integer(3)
  for (k in 1:3) {
    cc <- class_counts(m, k)
    expect_identical(cc[["s1"]], npos)
    expect_lt(abs(cc[["s0"]] - 0.25 * nneg), 5 * sqrt(nneg * 0.25 * 0.75))
    negs[k] <- cc[["s0"]]
  }
  expect_gt(length(unique(negs)), 1L)  # a new bag each round
  # the same rate for both classes is bagging_fraction: the same bags, the same model
  same <- fit_bag(d, pos_bagging_fraction = 0.3, neg_bagging_fraction = 0.3)
  plain <- fit_bag(d, bagging_fraction = 0.3)
  expect_identical(hb_trees(same), hb_trees(plain))
  expect_identical(predict(same, d$x, type = "raw"), predict(plain, d$x, type = "raw"))
  # a row's draw does not depend on its class's rate: the positive rows bagged at 0.3 are
  # bagging_fraction = 0.3's positive rows, with every negative row beside them
  pos_only <- fit_bag(d, pos_bagging_fraction = 0.3)
  for (k in 1:3) {
    expect_identical(class_counts(pos_only, k)[["s1"]], class_counts(plain, k)[["s1"]])
    expect_identical(class_counts(pos_only, k)[["s0"]], nneg)
  }
  # bagging_fraction is not used under balanced bagging
  expect_identical(hb_trees(fit_bag(d, pos_bagging_fraction = 0.3, bagging_fraction = 0.5)), hb_trees(pos_only))
  # both 1: bagging by bagging_fraction alone
  expect_identical(hb_trees(fit_bag(d, pos_bagging_fraction = 1, neg_bagging_fraction = 1, bagging_fraction = 0.3)),
                   hb_trees(plain))
  # no bagging_freq, no bagging (as with bagging_fraction), and a warning that says so
  expect_warning(nob <- histboost(d$x, d$y, nrounds = 1L, num_leaves = 2L, min_data_in_leaf = 1L, seed = 7,
                                  verbose = 0L, nthreads = 2L, neg_bagging_fraction = 0.25),
                 class = "histboost_warning", regexp = "no effect")
  expect_identical(unname(class_counts(nob)), c(nneg, npos))
})

test_that("the positive class is y's second level, TRUE or 1, as for the binary loss", {
  d <- balanced_data(levels = c("yes", "no"))  # "no" is now the positive class
  m <- fit_bag(d, neg_bagging_fraction = 0.5)
  # the negative class, "yes" (s = 1), is halved; "no" (s = 0) kept whole
  expect_identical(class_counts(m)[["s0"]], sum(!d$pos))
  expect_lt(abs(class_counts(m)[["s1"]] - 0.5 * sum(d$pos)), 5 * sqrt(sum(d$pos) * 0.25))
  for (yy in list(d$pos, as.numeric(d$pos))) {
    m <- histboost(d$x, yy, objective = "binary", nrounds = 1L, num_leaves = 2L, min_data_in_leaf = 1L,
                   bagging_freq = 1L, seed = 7, verbose = 0L, nthreads = 2L, neg_bagging_fraction = 0.5)
    expect_identical(class_counts(m)[["s1"]], sum(d$pos))
    expect_lt(class_counts(m)[["s0"]], 0.6 * sum(!d$pos))
  }
})

test_that("balanced bagging is checked, takes LightGBM's names, and is recorded with the model", {
  d <- balanced_data()
  for (bad in list(0, 1.5, -0.1, NA, "0.5")) {
    expect_error(fit_bag(d, pos_bagging_fraction = bad), "`pos_bagging_fraction` must be", class = "histboost_error_input")
    expect_error(fit_bag(d, neg_bagging_fraction = bad), "`neg_bagging_fraction` must be", class = "histboost_error_input")
  }
  # only a binary model has the two classes
  yr <- rnorm(nrow(d$x))
  expect_error(histboost(d$x, yr, neg_bagging_fraction = 0.5, bagging_freq = 1L, nrounds = 1L, verbose = 0L),
               "`neg_bagging_fraction` samples a positive and a negative class .* not \"regression\"",
               class = "histboost_error_input")
  y3 <- factor(sample(c("a", "b", "c"), nrow(d$x), TRUE))
  expect_error(histboost(d$x, y3, pos_bagging_fraction = 0.5, neg_bagging_fraction = 0.5, bagging_freq = 1L,
                         nrounds = 1L, verbose = 0L),
               "`pos_bagging_fraction` and `neg_bagging_fraction` sample .* not \"multiclass\"",
               class = "histboost_error_input")
  expect_error(fit_bag(d, neg_bagging_fraction = 0.5, goss = TRUE),
               "`goss` = TRUE and bagging \\(`pos_bagging_fraction` or `neg_bagging_fraction` < 1\\) .* use one of them",
               class = "histboost_error_input")
  # a forest may bag by class alone, and such a forest saves, loads and refits (the fractions are in its [config])
  rf <- histboost(d$x, d$y, boosting = "rf", nrounds = 3L, num_leaves = 2L, min_data_in_leaf = 1L, bagging_freq = 1L,
                  neg_bagging_fraction = 0.5, seed = 7, verbose = 0L, nthreads = 2L)
  expect_identical(class_counts(rf)[["s1"]], sum(d$pos))
  expect_match(rf$model_text, "neg_bagging_fraction=0.5")
  f0 <- tempfile(fileext = ".hbm")
  hb_save(rf, f0)
  back <- hb_load(f0)
  unlink(f0)
  expect_identical(predict(back, d$x, type = "raw"), predict(rf, d$x, type = "raw"))
  expect_identical(back$params$neg_bagging_fraction, 0.5)
  expect_identical(predict(unserialize(serialize(rf, NULL)), d$x, type = "raw"), predict(rf, d$x, type = "raw"))
  expect_s3_class(hb_refit(rf, d$x, d$y), "histboost")
  expect_error(histboost(d$x, d$y, boosting = "rf", nrounds = 2L, neg_bagging_fraction = 0.5, verbose = 0L),
               "needs bagging .*`neg_bagging_fraction` < 1 for a binary model, and `bagging_freq` >= 1",
               class = "histboost_error_input")
  # LightGBM's names
  m1 <- fit_bag(d, pos_bagging_fraction = 0.8, neg_bagging_fraction = 0.4)
  m2 <- histboost(d$x, d$y, nrounds = 3L, num_leaves = 2L, min_data_in_leaf = 1L, seed = 7, verbose = 0L,
                  nthreads = 2L, params = list(pos_subsample = 0.8, neg_bagging = 0.4, subsample_freq = 1L))
  expect_identical(hb_trees(m2), hb_trees(m1))
  # recorded, through save and load; the defaults are not written
  expect_identical(m1$params[c("pos_bagging_fraction", "neg_bagging_fraction")],
                   list(pos_bagging_fraction = 0.8, neg_bagging_fraction = 0.4))
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f))
  hb_save(m1, f)
  expect_identical(hb_load(f)$params[c("pos_bagging_fraction", "neg_bagging_fraction")],
                   list(pos_bagging_fraction = 0.8, neg_bagging_fraction = 0.4))
  expect_false(grepl("pos_bagging|neg_bagging", fit_bag(d)$model_text))
  # hb_cv() passes them on
  cv <- hb_cv(d$x, d$y, nfold = 2L, nrounds = 2L, num_leaves = 2L, min_data_in_leaf = 1L, bagging_freq = 1L,
              neg_bagging_fraction = 0.3, keep_models = TRUE, seed = 7, verbose = 0L, nthreads = 2L)
  for (m in cv$models) expect_identical(m$params$neg_bagging_fraction, 0.3)
})

test_that("a bagging fraction without bagging_freq warns that it has no effect, as it has none", {
  d <- gen_task(611, n = 400, task = "binary")
  plain <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 3)
  for (a in list(list(bagging_fraction = 0.5), list(pos_bagging_fraction = 0.3),
                 list(neg_bagging_fraction = 0.4, bagging_fraction = 1))) {
    nm <- names(a)[unlist(a) < 1][1]
    expect_warning(m <- do.call(hb_quiet, c(list(d$x, d$y, nrounds = 5L, seed = 3), a)),
                   class = "histboost_warning", regexp = paste0("`", nm, "` = .*has no effect.*bagging_freq = 1"))
    expect_identical(predict(m, d$x), predict(plain, d$x))
  }
  # with bagging_freq it draws, silently
  expect_no_warning(b <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 3, bagging_fraction = 0.5, bagging_freq = 1L))
  expect_false(identical(predict(b, d$x), predict(plain, d$x)))
})

test_that("hb_cv() gives the bagging warning once, not once a fold; update() refuses its fold models", {
  d <- gen_task(612, n = 300, task = "binary")
  ws <- character()
  cv <- withCallingHandlers(hb_cv(d$x, d$y, nfold = 3L, nrounds = 3L, bagging_fraction = 0.5, verbose = 0,
                                  keep_models = TRUE, seed = 1),
                            histboost_warning = function(w) {
                              ws <<- c(ws, conditionMessage(w))
                              invokeRestart("muffleWarning")
                            })
  expect_length(grep("`bagging_fraction` = 0.5 has no effect", ws), 1L)
  expect_input_error(update(cv$models[[1]], nrounds = 4L), "fold model of hb_cv\\(\\)")
})
