# Bad input gives a classed error naming the argument (issue 2, "Bad input"),
# the user's objects are never modified, and the different input forms of
# the same data give the same predictions.

in_data <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) cache <<- gen_task(81, n = 300, task = "regression", na = 0.05, factors = 1)
    cache
  }
})

fit_small <- function(x, y, ...) hb_quiet(x, y, nrounds = 3L, num_leaves = 4L, min_data_in_leaf = 5L, ...)

test_that("bad y: missing or non-finite values, wrong length, wrong type, one level", {
  d <- in_data()
  for (bad in list(NA_real_, NaN, Inf, -Inf)) {
    y <- d$y
    y[7] <- bad
    expect_input_error(fit_small(d$x, y), "`y`")
  }
  expect_input_error(fit_small(d$x, d$y[-1]), "`y`")
  expect_input_error(fit_small(d$x, c(d$y, 1)), "`y`")
  expect_error(fit_small(d$x, ifelse(d$y > 0, "pos", "neg")), class = "histboost_error_input",
               regexp = "`y`.*factor")                    # character labels: hint to use factor()
  expect_input_error(fit_small(d$x, factor(rep("only", nrow(d$x)))), "`y`")
  expect_input_error(fit_small(d$x, as.list(d$y)), "`y`")
  expect_input_error(fit_small(d$x, NULL), "`y`")
  yf <- factor(ifelse(d$y > 0, "pos", "neg"))
  yf[3] <- NA
  expect_input_error(fit_small(d$x, yf), "`y`")
})

test_that("a factor y's NA level (addNA, exclude = NULL) is a missing label everywhere, not a class", {
  d <- in_data()
  n <- nrow(d$x)
  yf <- factor(ifelse(d$y > 0, "pos", "neg"))
  yf[c(9, 40, 41)] <- NA
  want <- sprintf("`y` contains %d missing values (first at position %d)", sum(is.na(yf)), which(is.na(yf))[1L])
  msg <- function(expr) {
    err <- tryCatch(expr, error = identity)
    expect_s3_class(err, "histboost_error_input")
    conditionMessage(err)
  }
  plain <- msg(fit_small(d$x, yf))
  expect_match(plain, want, fixed = TRUE)
  for (ya in list(addNA(yf), factor(as.character(yf), exclude = NULL))) {
    expect_true(anyNA(levels(ya)))
    expect_false(anyNA(ya))                              # is.na() does not see these rows
    expect_identical(msg(fit_small(d$x, ya)), plain)     # the same error as a plain NA
    expect_identical(msg(hb_dataset(d$x, ya)), msg(hb_dataset(d$x, yf)))
    expect_identical(msg(hb_quiet(y ~ ., data = cbind(d$x, y = ya), nrounds = 2L)),
                     msg(hb_quiet(y ~ ., data = cbind(d$x, y = yf), nrounds = 2L)))
    v <- msg(fit_small(d$x[-(1:60), ], yf[-(1:60)], valid = list(v = list(x = d$x[1:60, ], y = ya[1:60]))))
    expect_match(v, "`valid` set \"v\": `y` contains 3 missing values \\(first at position 9\\)")
    expect_identical(v, msg(fit_small(d$x[-(1:60), ], yf[-(1:60)],
                                      valid = list(v = list(x = d$x[1:60, ], y = yf[1:60])))))
    expect_match(msg(hb_cv(d$x, ya, nfold = 2L, nrounds = 2L, verbose = 0L)), "`y` contains .*missing values")
  }
  # an NA level without rows is no class: the model of the factor without it
  yc <- factor(ifelse(d$y > 0, "pos", "neg"))
  m0 <- fit_small(d$x, yc, seed = 1L)
  ma <- expect_silent(fit_small(d$x, addNA(yc), seed = 1L))  # no "levels with no rows" warning either
  expect_identical(ma$classes, c("neg", "pos"))
  expect_identical(ma$task, "binary")
  expect_identical(predict(ma, d$x), predict(m0, d$x))
})

test_that("y and weights as I() or 1-d arrays are taken as the plain vectors, as lm() takes them", {
  d <- in_data()
  n <- nrow(d$x)
  w <- runif(n, 0.5, 2)
  fit <- function(y, weights = NULL, ...) fit_small(d$x, y, weights = weights, seed = 1L, ...)
  p <- predict(fit(d$y, w), d$x)
  expect_identical(predict(fit(I(d$y), w), d$x), p)
  expect_identical(predict(fit(array(d$y), w), d$x), p)
  expect_identical(predict(fit(array(d$y, dimnames = list(seq_len(n))), w), d$x), p)
  expect_identical(predict(fit(d$y, I(w)), d$x), p)
  expect_identical(predict(fit(d$y, array(w)), d$x), p)
  expect_identical(predict(fit(I(d$y), I(w), objective = "huber"), d$x),
                   predict(fit(d$y, w, objective = "huber"), d$x))
  # lm() takes the same: its coefficients with I() equal its own plain ones
  expect_identical(coef(lm(d$y ~ d$x$x1, weights = I(w))), coef(lm(d$y ~ d$x$x1, weights = w)))
  yf <- factor(ifelse(d$y > 0, "pos", "neg"))
  pf <- predict(fit(yf), d$x)
  expect_identical(predict(fit(I(yf)), d$x), pf)
  expect_identical(fit(I(yf))$classes, c("neg", "pos"))
  # hb_dataset(), validation sets and hb_cv() take them too
  expect_identical(predict(histboost(hb_dataset(d$x, I(d$y), weights = I(w)), nrounds = 3L, num_leaves = 4L,
                                     min_data_in_leaf = 5L, seed = 1L, verbose = 0L), d$x), p)
  mv <- function(yv) fit(d$y, w, valid = list(v = list(x = d$x, y = yv, weights = I(w))))$evaluation_log
  expect_identical(mv(I(d$y)), mv(d$y))
  cv <- function(y, weights) {
    set.seed(3)
    hb_cv(d$x, y, weights = weights, nfold = 2L, nrounds = 3L, num_leaves = 4L, verbose = 0L, seed = 1L)$pred
  }
  expect_identical(cv(array(d$y), I(w)), cv(d$y, w))
  # other shapes stay errors
  expect_input_error(fit(array(d$y, c(n / 2, 2, 1))), "`y`")
  expect_input_error(fit(d$y, I(as.character(w))), "`weights`")
})

test_that("bad weights: negative, non-finite, wrong length, wrong type", {
  d <- in_data()
  n <- nrow(d$x)
  for (bad in list(-1, NA_real_, Inf, NaN)) {
    w <- rep(1, n)
    w[5] <- bad
    expect_input_error(fit_small(d$x, d$y, weights = w), "`weights`")
  }
  expect_input_error(fit_small(d$x, d$y, weights = rep(1, n - 1)), "`weights`")
  expect_input_error(fit_small(d$x, d$y, weights = rep("1", n)), "`weights`")
})

test_that("zero rows, and columns that cannot be features", {
  d <- in_data()
  expect_input_error(fit_small(d$x[0, ], d$y[0]), "`x`")
  expect_input_error(fit_small(as.matrix(d$x[0, 1:3]), numeric(0)), "`x`")

  x <- d$x
  x$chr_col <- sample(letters[1:3], nrow(x), replace = TRUE)
  expect_input_error(fit_small(x, d$y), "chr_col")
  expect_input_error(fit_small(x, d$y), "factor")        # the hint to convert

  x <- d$x
  x$lst_col <- I(as.list(seq_len(nrow(x))))
  expect_input_error(fit_small(x, d$y), "lst_col")

  x <- d$x
  x$date_col <- as.Date("2020-01-01") + seq_len(nrow(x))
  expect_input_error(fit_small(x, d$y), "date_col")

  expect_input_error(fit_small(as.matrix(data.frame(a = letters[1:10], b = "z")), rnorm(10)), "`x`")
  expect_input_error(fit_small(list(a = 1:10), rnorm(10)), "`x`")
})

test_that("duplicated or empty column names", {
  d <- in_data()
  x <- d$x
  names(x)[2] <- names(x)[1]
  expect_input_error(fit_small(x, d$y), "`x`")
  X <- as.matrix(d$x[, 1:4])
  colnames(X) <- c("a", "b", "a", "c")
  expect_input_error(fit_small(X, d$y), "`x`")
  colnames(X) <- c("a", "", "b", "c")
  expect_input_error(fit_small(X, d$y), "`x`")
  colnames(X) <- c("a", NA, "b", "c")
  expect_input_error(fit_small(X, d$y), "`x`")
})

test_that("parameters out of range name the parameter", {
  d <- in_data()
  bad <- list(
    num_leaves = 1L, num_leaves = 0L, num_leaves = "many", num_leaves = c(4L, 5L), num_leaves = NA,
    learning_rate = 0, learning_rate = -0.1, learning_rate = Inf, learning_rate = NA_real_,
    max_bin = 1L, max_bin = 256L, max_bin = 0L,
    nrounds = 0L, nrounds = -3L, nrounds = NA_integer_,
    min_data_in_leaf = -1L, min_sum_hessian_in_leaf = -1,
    lambda_l1 = -0.5, lambda_l2 = -1, lambda_l2 = NaN, min_gain_to_split = -1,
    bagging_fraction = 0, bagging_fraction = 1.5, bagging_freq = -1L,
    feature_fraction = 0, feature_fraction = 2,
    max_cat_threshold = 0L, cat_smooth = -1, cat_l2 = -1, min_data_per_group = -1L,
    early_stopping_rounds = 0L, verbose = "loud", seed = "abc"
  )
  for (i in seq_along(bad)) {
    nm <- names(bad)[i]
    args <- list(x = d$x, y = d$y, verbose = 0L, nrounds = 3L)
    args[nm] <- bad[i]
    expect_error(do.call(histboost, args), class = "histboost_error_input",
                 regexp = paste0("`", nm, "`"), label = paste(nm, "=", deparse(bad[[i]])))
  }
})

test_that("logical values are refused for numeric parameters (TRUE is not 1)", {
  d <- in_data()
  m <- fit_small(d$x, d$y)
  params <- c("nrounds", "learning_rate", "num_leaves", "max_depth", "min_data_in_leaf",
              "min_sum_hessian_in_leaf", "lambda_l1", "lambda_l2", "min_gain_to_split", "max_bin",
              "max_cat_threshold", "cat_smooth", "cat_l2", "min_data_per_group", "bagging_fraction",
              "bagging_freq", "feature_fraction", "nthreads", "seed")
  for (nm in params) {
    for (val in list(TRUE, FALSE, NA)) {
      args <- list(x = d$x, y = d$y, verbose = 0L, nrounds = 3L, min_data_in_leaf = 5L)
      args[nm] <- list(val)
      expect_error(do.call(histboost, args), class = "histboost_error_input",
                   regexp = paste0("`", nm, "`"), label = paste(nm, "=", val))
    }
  }
  es <- list(x = d$x, y = d$y, verbose = 0L, nrounds = 3L, valid = list(list(x = d$x, y = d$y)),
             early_stopping_rounds = TRUE)
  expect_error(do.call(histboost, es), class = "histboost_error_input", regexp = "`early_stopping_rounds`")
  expect_input_error(predict(m, d$x, iteration = TRUE), "`iteration`")
  expect_input_error(predict(m, d$x, iteration = FALSE), "`iteration`")
  expect_input_error(predict(m, d$x, nthreads = TRUE), "`nthreads`")
  expect_input_error(hb_dataset(d$x, d$y, max_bin = TRUE), "`max_bin`")
  expect_input_error(hb_dataset(d$x, d$y, nthreads = TRUE), "`nthreads`")
  old <- options(histboost.nthreads = TRUE)
  on.exit(options(old))
  expect_error(hb_threads(), class = "histboost_error_input", regexp = "options(histboost.nthreads)",
               fixed = TRUE)
  options(old)
  # verbose reads as a flag: FALSE and TRUE are its levels 0 and 1
  v <- list(list(x = d$x, y = d$y))
  expect_silent(histboost(d$x, d$y, nrounds = 2L, min_data_in_leaf = 5L, valid = v, verbose = FALSE))
  expect_message(histboost(d$x, d$y, nrounds = 2L, min_data_in_leaf = 5L, valid = v, verbose = TRUE),
                 "valid_1_rmse")
  # LightGBM's verbose = -1 (silent) is 0, as an argument as in params; a fraction is still refused
  expect_silent(histboost(d$x, d$y, nrounds = 2L, min_data_in_leaf = 5L, valid = v, verbose = -1))
  expect_silent(hb_cv(d$x, d$y, nrounds = 2L, nfold = 2L, min_data_in_leaf = 5L, verbose = -1L))
  expect_input_error(histboost(d$x, d$y, nrounds = 2L, verbose = -0.5), "`verbose` must be 0, 1 or 2")
  expect_silent(histboost(d$x, d$y, nrounds = 2L, min_data_in_leaf = 5L, verbose = -1, params = list(verbose = -1)))
  expect_silent(histboost(d$x, d$y, nrounds = 2L, min_data_in_leaf = 5L, verbose = 0, params = list(verbose = -1)))
  expect_input_error(histboost(d$x, d$y, nrounds = 2L, params = list(verbose = 7)), "`verbose` must be")
  expect_input_error(histboost(d$x, d$y, nrounds = 2L, verbose = 3), "`verbose` must be a whole number")
})

test_that("objective, metric and validation settings that do not fit", {
  d <- in_data()
  yb <- factor(ifelse(d$y > 0, "pos", "neg"))
  expect_input_error(fit_small(d$x, d$y, objective = "poisson"), "`objective`")
  expect_input_error(fit_small(d$x, yb, objective = "regression"), "`objective`|`y`")
  expect_input_error(fit_small(d$x, round(abs(d$y)) %% 3, objective = "binary"), "`objective`|`y`")
  expect_input_error(fit_small(d$x, d$y, eval_metric = "auc",
                               valid = list(list(x = d$x, y = d$y))), "`eval_metric`")
  expect_input_error(fit_small(d$x, d$y, eval_metric = "no_such_metric",
                               valid = list(list(x = d$x, y = d$y))), "`eval_metric`")
  expect_input_error(fit_small(d$x, d$y, early_stopping_rounds = 3L), "`early_stopping_rounds`|`valid`")
  expect_input_error(fit_small(d$x, d$y, valid = list(a = list(x = d$x, y = d$y),
                                                      a = list(x = d$x, y = d$y))), "`valid`")
  expect_input_error(fit_small(d$x, d$y, valid = list(list(x = d$x, y = d$y[-1]))), "`valid`|`y`")
  expect_input_error(fit_small(d$x, d$y, valid = list(list(x = d$x[, -1], y = d$y))), "`valid`|x1")
  expect_input_error(fit_small(d$x, d$y, valid = "not a list"), "`valid`")
  ds <- hb_dataset(d$x, d$y)
  expect_input_error(histboost(ds, d$y, nrounds = 2L, verbose = 0L), "`y`")
})

test_that("bad newdata and prediction arguments", {
  d <- in_data()
  m <- fit_small(d$x, d$y)
  nd <- d$x
  expect_input_error(predict(m, nd[, setdiff(names(nd), "x3")]), "x3")
  nd2 <- nd
  nd2$f1 <- as.numeric(nd2$f1)
  expect_input_error(predict(m, nd2), "f1")
  nd3 <- nd
  nd3$x2 <- factor(ifelse(nd3$x2 > 0, "a", "b"))
  expect_input_error(predict(m, nd3), "x2")
  nd4 <- nd
  nd4$x1 <- as.character(nd4$x1)
  expect_input_error(predict(m, nd4), "x1")
  expect_input_error(predict(m, "a string"), "`newdata`")
  expect_input_error(predict(m, list(1, 2)), "`newdata`")
  X <- as.matrix(nd[, 1:6])
  colnames(X) <- NULL
  expect_input_error(predict(m, X), "`newdata`")        # 6 unnamed columns, 7 expected
  expect_input_error(predict(m, nd, type = "class"), "`type`")   # regression has no classes
  expect_input_error(predict(m, nd, type = "prob"), "`type`")
  expect_input_error(predict(m, nd, iteration = 0L), "`iteration`")
  expect_input_error(predict(m, nd, iteration = -1L), "`iteration`")
  expect_input_error(predict(m, nd, iteration = "a"), "`iteration`")
})

test_that("missing columns are named against the model, the reference dataset or the training data", {
  d <- in_data()
  m <- fit_small(d$x, d$y)
  expect_input_error(predict(m, d$x[, -1]), "`newdata` lacks column `x1` that the model was trained on")
  ref <- hb_dataset(d$x, d$y)
  expect_input_error(hb_dataset(d$x[, -1], d$y, reference = ref),
                     "`x` lacks column `x1` that the reference dataset has")
  expect_input_error(hb_dataset(as.matrix(d$x[1:6])[, -2], d$y, reference = hb_dataset(d$x[1:6], d$y)),
                     "`x` lacks column `x2` that the reference dataset has")
  expect_input_error(hb_dataset(d$x[, -(1:2)], d$y, reference = ref),
                     "`x` lacks columns `x1` and `x2` that the reference dataset has")
  msg <- tryCatch(hb_dataset(d$x[, -1], d$y, reference = ref), error = conditionMessage)
  expect_false(grepl("model", msg))                          # there is no model here
  expect_input_error(fit_small(d$x, d$y, valid = list(v = list(x = d$x[, -1], y = d$y))),
                     "`valid` set \"v\": `x` lacks column `x1` that the training data has")
  xf <- d$x
  xf$f1 <- as.numeric(xf$f1)
  expect_input_error(hb_dataset(xf, d$y, reference = ref),
                     "column `f1` must be a factor, as in the reference dataset")
})

test_that("the user's objects are never modified (data.frame, matrix, dgCMatrix)", {
  skip_if_not_installed("Matrix")
  d <- gen_task(82, n = 400, task = "binary", na = 0.1, factors = 2)
  x <- d$x; y <- d$y
  w <- runif(400, 0.5, 1.5)
  X <- as.matrix(x[, 1:6])
  S <- Matrix::Matrix(ifelse(abs(X) < 0.8, 0, X), sparse = TRUE)
  yr <- rnorm(400)
  vx <- x[1:100, ]
  vy <- y[1:100]
  keep <- deep_copy(list(x = x, y = y, w = w, X = X, S = S, yr = yr, vx = vx, vy = vy))

  m1 <- hb_quiet(x, y, weights = w, nrounds = 5L, valid = list(v = list(x = vx, y = vy)))
  m2 <- hb_quiet(X, yr, weights = w, nrounds = 5L)
  m3 <- hb_quiet(S, yr, nrounds = 5L)
  ds <- hb_dataset(x, y, weights = w)
  m4 <- histboost(ds, nrounds = 3L, verbose = 0L)
  for (type in c("response", "raw", "leaf", "class")) invisible(predict(m1, vx, type = type))
  invisible(predict(m2, X)); invisible(predict(m3, S)); invisible(predict(m4, x))
  invisible(hb_trees(m1)); invisible(hb_importance(m1))

  expect_identical(list(x = x, y = y, w = w, X = X, S = S, yr = yr, vx = vx, vy = vy), keep)
})

test_that("data.frame, matrix and dgCMatrix of the same numbers give identical predictions", {
  skip_if_not_installed("Matrix")
  set.seed(83)
  n <- 600
  X <- matrix(round(rnorm(n * 5), 2), n, 5, dimnames = list(NULL, paste0("v", 1:5)))
  X[abs(X) < 0.6] <- 0                       # many zeros
  X[sample.int(n * 5, 100)] <- NA            # and missing values
  y <- rowSums(sin(X), na.rm = TRUE) + rnorm(n, sd = 0.3)
  df <- as.data.frame(X)
  S <- Matrix::Matrix(X, sparse = TRUE)
  expect_s4_class(S, "dgCMatrix")
  fit <- function(x) hb_quiet(x, y, nrounds = 15L, num_leaves = 8L, seed = 9L)
  m_df <- fit(df); m_mat <- fit(X); m_sp <- fit(S)
  p <- predict(m_df, df, type = "raw")
  expect_identical(predict(m_mat, X, type = "raw"), p)
  expect_identical(predict(m_sp, S, type = "raw"), p)
  # and across input forms at prediction time
  expect_identical(predict(m_df, X, type = "raw"), p)
  expect_identical(predict(m_df, S, type = "raw"), p)
  expect_identical(predict(m_sp, df, type = "raw"), p)
  # integer and logical columns are their numeric values
  dfi <- data.frame(a = sample(0:5, n, TRUE), b = sample(c(TRUE, FALSE, NA), n, TRUE))
  yi <- dfi$a + ifelse(is.na(dfi$b), 0.5, dfi$b) + rnorm(n, sd = 0.1)
  dfd <- data.frame(a = as.numeric(dfi$a), b = as.numeric(dfi$b))
  mi <- hb_quiet(dfi, yi, nrounds = 5L, num_leaves = 4L)
  md <- hb_quiet(dfd, yi, nrounds = 5L, num_leaves = 4L)
  expect_identical(predict(mi, dfi), predict(md, dfd))
})

test_that("wide sparse rows (one-hot, deep trees) predict as their dense copies do", {
  skip_if_not_installed("Matrix")
  # 300 one-hot columns, about 4 stored per row: trees peel off columns one
  # at a time, and sparse rows walk their zero chains (predict.c); stored
  # NaN, negative values and explicit zeros included, and some rows with
  # every column stored (walked like dense rows)
  set.seed(91)
  n <- 3000; p <- 300
  i <- rep(seq_len(n), each = 4); j <- sample.int(p, 4 * n, TRUE)
  keep <- !duplicated(cbind(i, j)); i <- i[keep]; j <- j[keep]
  v <- sample(c(1, 1, 1, -2, 0.5, NaN, 0), length(i), TRUE)
  dense_rows <- c(17L, 1234L)
  i <- c(i, rep(dense_rows, each = p)); j <- c(j, rep(seq_len(p), 2)); v <- c(v, rnorm(2 * p))
  keep <- !duplicated(cbind(i, j), fromLast = TRUE); i <- i[keep]; j <- j[keep]; v <- v[keep]
  S <- Matrix::sparseMatrix(i = i, j = j, x = v, dims = c(n, p))
  colnames(S) <- paste0("c", seq_len(p))
  X <- as.matrix(S)
  beta <- rnorm(p)
  y <- as.integer(drop(ifelse(is.na(X), 0, X) %*% beta) + rnorm(n) > 0)
  m <- hb_quiet(S, y, objective = "binary", nrounds = 20L, num_leaves = 40L, min_data_in_leaf = 5L)
  d <- hb_trees(m)
  expect_gt(max(d$depth), 15)                        # chains deep enough to matter
  for (type in c("raw", "response", "leaf"))
    expect_identical(predict(m, S, type = type), predict(m, X, type = type))
  expect_identical(predict(m, S, type = "raw", nthreads = 1L), predict(m, X, type = "raw", nthreads = 2L))
  expect_identical(predict(m, S[c(3, 17, 40), ], type = "raw"), predict(m, X[c(3, 17, 40), ], type = "raw"))
  expect_identical(predict(m, S, type = "raw", iteration = 7L), predict(m, X, type = "raw", iteration = 7L))
})

test_that("newdata is matched by column name and by factor level label", {
  d <- gen_task(84, n = 800, task = "binary", na = 0.05, factors = 2)
  m <- hb_quiet(d$x, d$y, nrounds = 20L, num_leaves = 8L)
  x <- d$x
  p <- predict(m, x, type = "raw")
  expect_gt(sd(p), 0)

  # factor levels in another order: matched by label
  xr <- x
  xr$f1 <- factor(as.character(x$f1), levels = rev(levels(x$f1)))
  expect_identical(predict(m, xr, type = "raw"), p)

  # an unseen level behaves like NA
  rows <- which(x$f1 %in% c("lv2", "lv5"))
  xu <- x
  xu$f1 <- factor(as.character(x$f1), levels = c(levels(x$f1), "brand_new"))
  xu$f1[rows] <- "brand_new"
  xn <- x
  xn$f1[rows] <- NA
  pn <- predict(m, xn, type = "raw")
  expect_false(identical(pn, p))              # the rows do move (else the check is empty)
  w <- expect_warning(pu <- predict(m, xu, type = "raw"), class = "histboost_warning_unseen_levels")
  expect_identical(pu, pn)
  # the warning names the column, the count of values and the labels (NA values are not counted)
  expect_match(conditionMessage(w), paste0("`newdata` has factor labels not seen in training, read as missing ",
                                           ".*`f1` \\(", length(rows), " values: \"brand_new\"\\)"))
  expect_no_warning(predict(m, xn, type = "raw"))
  # past three labels, the rest counted: one more label, then more labels
  for (k in 4:5) {
    xk <- xu
    new <- paste0("new", seq_len(k))
    xk$f1 <- factor(as.character(xu$f1), levels = c(levels(x$f1), new))
    xk$f1[rows[seq_len(k)]] <- new
    wk <- expect_warning(predict(m, xk, type = "raw"), class = "histboost_warning_unseen_levels")
    expect_match(conditionMessage(wk), if (k == 4L) "\"new3\" and 1 more label\\)" else "\"new3\" and 2 more labels\\)")
  }

  # strings where training had a factor: matched to the levels by label, an
  # unseen string (and NA) missing, the same as the factor built in R
  xs <- x
  xs$f1 <- as.character(x$f1)
  xs$f1[rows] <- "brand_new"
  xs$f2 <- as.character(x$f2)
  xs$f2[c(1, 5)] <- NA
  xref <- xn
  xref$f2[c(1, 5)] <- NA
  expect_warning(ps <- predict(m, xs, type = "raw"), class = "histboost_warning_unseen_levels",
                 regexp = "`f1` \\([0-9]+ values: \"brand_new\"\\)")
  expect_identical(ps, predict(m, xref, type = "raw"))
  expect_identical(xs$f1[rows[1]], "brand_new")  # the caller's data untouched
  # a validation set and a dataset binned with a reference take them too
  ref <- hb_dataset(x, d$y)
  expect_warning(vs <- hb_dataset(xs, d$y, reference = ref), class = "histboost_warning_unseen_levels",
                 regexp = "^`x` has factor labels not seen in the reference dataset")
  vf <- hb_dataset(xref, d$y, reference = ref)
  fs <- hb_quiet(ref, nrounds = 5L, num_leaves = 8L, seed = 1, valid = list(v = vs), eval_metric = "logloss")
  ff <- hb_quiet(ref, nrounds = 5L, num_leaves = 8L, seed = 1, valid = list(v = vf), eval_metric = "logloss")
  expect_identical(fs$evaluation_log, ff$evaluation_log)

  # extra columns ignored, columns permuted
  xe <- cbind(x, extra = rnorm(nrow(x)), another = "txt")
  expect_identical(predict(m, xe, type = "raw"), p)
  expect_identical(predict(m, x[, rev(names(x))], type = "raw"), p)
  # missing column named
  expect_input_error(predict(m, x[, setdiff(names(x), "f2")]), "f2")
})

test_that("extra columns of newdata are ignored whatever their names; the model's own must be unique", {
  skip_if_not_installed("Matrix")
  d <- gen_task(86, n = 400, task = "regression", factors = 1)
  m <- hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 8L)
  p <- predict(m, d$x)
  expect_gt(sd(p), 0)
  xd <- cbind(d$x, id = 1, id = 2)                       # duplicated names among unused columns only
  expect_true(anyDuplicated(names(xd)) > 0L)
  expect_identical(predict(m, xd), p)
  xe <- cbind(d$x, e1 = 0, e2 = 1)
  names(xe)[ncol(xe) - 1L] <- ""                            # an empty name among them too
  expect_identical(predict(m, xe), p)
  mx <- hb_quiet(as.matrix(d$x[c("x1", "x2", "x3")]), d$y, nrounds = 10L, num_leaves = 8L)
  X <- as.matrix(d$x[c("x1", "x2", "x3")])
  pm <- predict(mx, X)
  Xd <- cbind(X, id = 1, id = 2, NA)
  expect_identical(predict(mx, Xd), pm)
  expect_identical(predict(mx, Matrix::Matrix(Xd, sparse = TRUE)), pm)
  # a validation set follows the same rule: the same log as without the extra columns
  fit_v <- function(vx) hb_quiet(d$x, d$y, nrounds = 3L, seed = 1L, valid = list(v = list(x = vx, y = d$y)))
  expect_identical(fit_v(xd)$evaluation_log, fit_v(d$x)$evaluation_log)
  # a model column given twice is ambiguous: an error naming it
  x2 <- cbind(d$x, x1 = 0)
  expect_input_error(predict(m, x2), "`newdata` has duplicated column names: `x1`")
  expect_input_error(predict(mx, cbind(X, x2 = 0, id = 1, id = 2)), "`newdata` has duplicated column names: `x2`;")
})

test_that("an unnamed matrix is matched by position", {
  d <- gen_task(85, n = 500, task = "regression")
  X <- as.matrix(d$x)
  m <- hb_quiet(X, d$y, nrounds = 10L, num_leaves = 8L)
  X0 <- X
  colnames(X0) <- NULL
  expect_identical(predict(m, X0), predict(m, X))
})

test_that("a model trained without column names matches new data by position, whatever its names", {
  skip_if_not_installed("Matrix")
  d <- gen_task(88, n = 500, task = "regression")
  X <- as.matrix(d$x)
  X0 <- unname(X)
  fit <- function(x, ...) hb_quiet(x, d$y, nrounds = 10L, num_leaves = 8L, seed = 1L, ...)
  m0 <- fit(X0)
  mn <- fit(X)                                   # the same model with the names: the reference
  p <- predict(mn, X)
  expect_gt(sd(p), 0)
  expect_identical(m0$feature_names, paste0("V", seq_len(ncol(X))))
  expect_true(m0$feature_names_generated)
  expect_false(mn$feature_names_generated)
  expect_identical(predict(m0, X0), p)
  expect_identical(predict(m0, X), p)                     # names the model never had
  Xr <- X
  colnames(Xr) <- rev(colnames(X))                        # names that would reorder by name: ignored
  expect_identical(predict(m0, Xr), p)
  expect_identical(predict(m0, as.data.frame(X)), p)
  expect_identical(predict(m0, Matrix::Matrix(X, sparse = TRUE)), p)
  Xv <- X
  colnames(Xv) <- rev(m0$feature_names)                   # even V1..Vp reversed: by position
  expect_identical(predict(m0, Xv), p)
  k <- ncol(X)
  expect_input_error(predict(m0, X[, -1]), sprintf("`newdata` has %d columns but the model has %d, matched by position",
                                                   k - 1L, k))
  expect_input_error(predict(m0, cbind(X, extra = 1)), sprintf("`newdata` has %d columns but the model has %d", k + 1L, k))
  # saved and loaded, the rule goes with the model (its text says the names were made up)
  expect_match(m0$model_text, "r.feature_names", fixed = TRUE)
  expect_false(grepl("r.feature_names", mn$model_text, fixed = TRUE))
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f), add = TRUE)
  hb_save(m0, f)
  m1 <- hb_load(f)
  expect_true(m1$feature_names_generated)
  expect_identical(predict(m1, X), p)
  expect_identical(predict(unserialize(serialize(m0, NULL)), X), p)
  # validation sets and datasets binned with a reference follow the training data alike
  mv0 <- fit(X0, valid = list(v = list(x = X, y = d$y)))
  mvn <- fit(X, valid = list(v = list(x = X, y = d$y)))
  expect_identical(mv0$evaluation_log, mvn$evaluation_log)
  ref <- hb_dataset(X0, d$y)
  expect_true(ref$feature_names_generated)
  mr <- hb_quiet(ref, nrounds = 10L, num_leaves = 8L, seed = 1L,
                 valid = list(v = hb_dataset(X, d$y, reference = ref)))
  expect_identical(mr$evaluation_log, mvn$evaluation_log)
  # a model whose own column names happen to be V1..Vp matches them by name
  xv <- as.data.frame(X0)
  expect_identical(names(xv), m0$feature_names)
  mdf <- fit(xv)
  expect_false(mdf$feature_names_generated)
  expect_identical(predict(mdf, xv[, rev(names(xv))]), predict(mdf, xv))
})

test_that("init_model is continued as predict() matches: by position after training without names", {
  d <- gen_task(89, n = 500, task = "regression")
  X <- as.matrix(d$x)
  X0 <- unname(X)
  fit <- function(x, ...) hb_quiet(x, d$y, nrounds = 5L, num_leaves = 8L, seed = 1L, ...)
  m0 <- fit(X0)
  mn <- fit(X)
  ref <- fit(X, init_model = mn)                 # the reference: named model, named data
  p <- predict(ref, X)
  c0 <- fit(X, init_model = m0)                  # named data continue the model made without names
  expect_true(c0$feature_names_generated)
  expect_identical(c0$feature_names, m0$feature_names)
  expect_identical(c0$niter, 10L)
  expect_identical(predict(c0, X), p)
  expect_identical(predict(fit(X0, init_model = m0), X0), p)
  expect_identical(predict(fit(X0, init_model = mn), X), p)  # unnamed data continue a named model
  expect_false(fit(X0, init_model = mn)$feature_names_generated)
  # validation data named otherwise than the model: by position too
  cv0 <- fit(X, init_model = m0, valid = list(v = list(x = X, y = d$y)))
  cvn <- fit(X, init_model = mn, valid = list(v = list(x = X, y = d$y)))
  expect_identical(cv0$evaluation_log, cvn$evaluation_log)
  expect_input_error(fit(X[, -1], init_model = m0), "`x`")
  expect_input_error(fit(X0[, -1], init_model = mn), "`x`")
})

test_that("a data.frame without names is named V1..Vp, as a matrix without column names is", {
  d <- gen_task(87, n = 400, task = "regression", factors = 1)
  x <- d$x[c("x1", "x2", "f1")]
  xv <- stats::setNames(x, paste0("V", 1:3))
  xn <- x
  names(xn) <- NULL
  expect_null(names(xn))
  m <- hb_quiet(xn, d$y, nrounds = 10L, num_leaves = 8L, seed = 1L)
  mv <- hb_quiet(xv, d$y, nrounds = 10L, num_leaves = 8L, seed = 1L)
  expect_identical(m$feature_names, c("V1", "V2", "V3"))
  expect_identical(m$feature_types, mv$feature_types)
  expect_identical(predict(m, xv), predict(mv, xv))         # the model of the same columns named V1..V3
  expect_identical(predict(m, xn), predict(mv, xv))         # and a nameless newdata is matched by position
  expect_identical(hb_dataset(xn, d$y)$feature_names, c("V1", "V2", "V3"))
  # numeric columns only: the model of the unnamed matrix of the same numbers
  X <- unname(as.matrix(d$x[c("x1", "x2")]))
  mn <- hb_quiet(xn[1:2], d$y, nrounds = 10L, num_leaves = 8L, seed = 1L)
  mm <- hb_quiet(X, d$y, nrounds = 10L, num_leaves = 8L, seed = 1L)
  expect_identical(predict(mn, X), predict(mm, X))
  expect_input_error(predict(m, xn[1:2]), "`newdata` has 2 columns and no column names; the model has 3")
})

test_that("a factor column without levels: an input error naming it in training, all missing elsewhere", {
  set.seed(85)
  n <- 300
  x <- data.frame(a = rnorm(n), b = factor(rep(NA, n)))
  y <- x$a + rnorm(n)
  # it used to reach the engine: "`x`: dataset: column 2 is a factor with 0 levels"
  for (run in list(function() fit_small(x, y), function() hb_dataset(x, y),
                   function() hb_quiet(y ~ ., data = cbind(x, y = y), nrounds = 2L))) {
    expect_error(run(), class = "histboost_error_input", regexp = "column `b` is a factor with no levels")
    expect_error(run(), regexp = "drop the column")
  }
  expect_error(fit_small(x, y), regexp = "^`x` column")
  # an NA level only (factor(exclude = NULL)) is no level either
  xe <- x
  xe$b <- factor(rep(NA, n), exclude = NULL)
  expect_error(fit_small(xe, y), class = "histboost_error_input", regexp = "column `b`")
  d <- in_data()
  vx <- d$x
  vx$f1 <- factor(rep(NA, nrow(vx)))

  # Where training had levels, a level-less factor is all missing, as unseen
  # levels are: the same predictions, log and dataset as NA with the levels.
  m <- hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 8L, min_data_in_leaf = 5L, min_data_per_group = 5L)
  xn <- d$x
  xn$f1 <- factor(rep(NA, nrow(xn)), levels = levels(d$x$f1))
  pz <- predict(m, vx, type = "raw")
  expect_identical(pz, predict(m, xn, type = "raw"))
  expect_false(identical(pz, predict(m, d$x, type = "raw")))    # f1 matters to this model
  mv <- hb_quiet(d$x, d$y, nrounds = 5L, num_leaves = 8L, min_data_in_leaf = 5L, min_data_per_group = 5L,
                 seed = 1L, valid = list(z = list(x = vx, y = d$y), n = list(x = xn, y = d$y)))
  expect_identical(mv$evaluation_log$z_rmse, mv$evaluation_log$n_rmse)
  expect_equal(mv$evaluation_log$z_rmse[5], rmse(d$y, predict(mv, xn)), tolerance = TOL$metric)
  dtrain <- hb_dataset(d$x, d$y)
  dz <- hb_dataset(vx, d$y, reference = dtrain)
  mz <- hb_quiet(dtrain, nrounds = 5L, num_leaves = 8L, min_data_in_leaf = 5L, min_data_per_group = 5L,
                 seed = 1L, valid = list(z = dz))
  expect_identical(mz$evaluation_log$z_rmse, mv$evaluation_log$z_rmse)
})

test_that("the one-pass label scan counts what plain R's tests count", {
  scan <- function(v) .Call(histboost:::C_hb_scan_values, v)
  by_r <- function(v) {
    bad <- which(!is.finite(v))
    ok <- v[is.finite(v)]
    as.double(c(length(bad), if (length(bad)) bad[1L] else 0,
                all(ok == 0 | ok == 1) && any(ok == 0) && any(ok == 1)))
  }
  set.seed(5)
  for (i in 1:40) {
    n <- sample(c(1L, 2L, 50L, 1000L), 1L)
    v <- sample(c(0, 1, 0.5, -2, NA, NaN, Inf, -Inf), n, TRUE, prob = c(8, 8, i %% 3, i %% 2, 1, 1, 1, 1) / 10)
    expect_identical(scan(v), by_r(v), info = paste("double", i))
    vi <- as.integer(ifelse(is.finite(v), round(v), NA))
    expect_identical(scan(vi), by_r(vi), info = paste("integer", i))
    vl <- as.logical(vi)
    expect_identical(scan(vl), by_r(as.integer(vl)), info = paste("logical", i))
  }
  # what .hb_label makes of it
  expect_true(histboost:::.hb_label(c(0, 1, 1, 0), 4L)$binary_ok)
  expect_false(histboost:::.hb_label(c(0, 1, 2), 3L)$binary_ok)
  expect_false(histboost:::.hb_label(c(1, 1, 1), 3L)$binary_ok)
  expect_error(histboost:::.hb_label(c(0, 1, NA, Inf), 4L), "contains 2 missing or non-finite values \\(first at position 3\\)",
               class = "histboost_error_input")
  expect_error(histboost:::.hb_label(c(TRUE, NA), 2L), "contains 1 missing values \\(first at position 2\\)")
  expect_error(histboost:::.hb_label(c(FALSE, FALSE), 2L), "only one class", class = "histboost_error_input")
  # a factor's labels: its present levels numbered from 0, as plain R's match() numbers them
  f <- factor(sample(c("p", "r", "s"), 500, TRUE), levels = c("p", "q", "r", "s"))
  lab <- suppressWarnings(histboost:::.hb_label(f, 500L))
  expect_identical(lab$classes, c("p", "r", "s"))
  expect_identical(lab$label, as.double(match(as.character(f), c("p", "r", "s")) - 1L))
  expect_identical(.Call(histboost:::C_hb_map_codes, c(2L, NA, 0L, 1L, 4L), c(10, 20, 30)), c(20, NA, NA, 10, NA))
})

test_that("strings that are not valid text in their encoding are refused; latin1-marked ones are read", {
  set.seed(71)
  n <- 400
  cafe <- rawToChar(as.raw(c(0x63, 0x61, 0x66, 0xe9)))  # "caf\xe9": latin1 bytes, declared native
  skip_if_not(Encoding(cafe) == "unknown" && is.na(iconv(cafe, from = "", to = "UTF-8")),
              "the session's encoding reads these bytes as valid text (a latin1 locale)")
  g <- sample(c(cafe, "tea", "milk"), n, TRUE)
  d <- data.frame(a = rnorm(n), g = factor(g))
  y <- ifelse(d$g == cafe, 10, 0) + d$a
  expect_input_error(hb_quiet(d, y, nrounds = 3L), "`x` column `g` has levels with a string that is not valid text.*caf<e9>.*fileEncoding")
  d2 <- d["a"]
  names(d2) <- cafe
  expect_input_error(hb_quiet(d2, y, nrounds = 3L), "`x` has column names with a string that is not valid text")
  expect_input_error(hb_quiet(d["a"], factor(ifelse(d$a > 0, cafe, "tea")), nrounds = 3L),
                     "`y` has levels with a string that is not valid text")
  # the same bytes declared latin1 are text: the model keeps "café" and predicts its rows as the UTF-8 data's model
  lat <- cafe
  Encoding(lat) <- "latin1"
  dl <- data.frame(a = d$a, g = factor(ifelse(g == cafe, lat, g)))
  du <- data.frame(a = d$a, g = factor(ifelse(g == cafe, "caf\u00e9", g)))
  ml <- hb_quiet(dl, y, nrounds = 10L, min_data_in_leaf = 5L, seed = 1L)
  mu <- hb_quiet(du, y, nrounds = 10L, min_data_in_leaf = 5L, seed = 1L)
  expect_identical(ml$model_text, mu$model_text)
  expect_identical(predict(ml, dl), predict(mu, du))
  expect_gt(mean(predict(ml, dl)[g == cafe]) - mean(predict(ml, dl)[g != cafe]), 5)  # learned (10 rounds: 6.5), not read as missing
})

test_that("a factor with an NA level keeps its unused levels; a one-column matrix column is its values", {
  set.seed(72)
  n <- 300
  o <- factor(sample(c("lo", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE)
  y <- (o == "hi") * 10 + rnorm(n, sd = 0.1)
  m0 <- hb_quiet(data.frame(o = o), y, nrounds = 10L, min_data_in_leaf = 5L, seed = 1L)
  ma <- hb_quiet(data.frame(o = addNA(o)), y, nrounds = 10L, min_data_in_leaf = 5L, seed = 1L)
  expect_identical(ma$feature_levels$o, c("lo", "mid", "hi"))
  nd <- data.frame(o = factor(c("lo", "mid", "hi"), levels = c("lo", "mid", "hi"), ordered = TRUE))
  expect_silent(pa <- predict(ma, nd))  # "mid" is a level the model knows: no unseen-label warning
  expect_identical(pa, predict(m0, nd))
  # scale() gives a one-column matrix, and a 1-d array is a vector with dim: both read as their values, as lm() does
  a <- rnorm(n)
  dm <- data.frame(b = y)
  dm$a <- scale(a)
  dv <- data.frame(b = y, a = as.vector(scale(a)))
  yy <- a + rnorm(n)
  mm <- hb_quiet(dm, yy, nrounds = 5L, min_data_in_leaf = 5L, seed = 1L)
  mv <- hb_quiet(dv, yy, nrounds = 5L, min_data_in_leaf = 5L, seed = 1L)
  expect_identical(mm$model_text, mv$model_text)
  expect_identical(predict(mv, dm), predict(mv, dv))
  d1 <- data.frame(b = y)
  d1$a <- array(as.vector(scale(a)), dim = n)
  expect_identical(predict(mv, d1), predict(mv, dv))
  d2 <- dm
  d2$a <- cbind(a, a)
  expect_input_error(predict(mv, d2), "`newdata` column `a` is a matrix column")
})

test_that("messages name the argument a user gave: newdata's sparse slots, a validation set, NULL data", {
  S <- Matrix::sparseMatrix(i = 1:3, j = c(1, 1, 2), x = c(1, 2, 3), dims = c(4, 2))
  fs <- hb_quiet(S, as.numeric(1:4), nrounds = 1L, min_data_in_leaf = 1L)
  S@i <- c(0L, 5L, 1L)
  expect_input_error(predict(fs, S), "^`newdata`: malformed sparse matrix")
  expect_input_error(hb_quiet(NULL, 1:3), "not NULL\\.$")
  expect_input_error(hb_quiet(mean, 1:3), "not (a function|an object of class)")
  set.seed(73)
  d <- data.frame(a = rnorm(200), g = factor(sample(c("p", "q"), 200, TRUE)))
  dn <- d
  dn$g <- factor(ifelse(seq_len(200) <= 20, "NEW", as.character(d$g)))
  y <- d$a + as.integer(d$g)
  expect_warning(hb_quiet(d, y, nrounds = 2L, valid = list(holdout = list(x = dn, y = y))),
                 "^`valid` set \"holdout\": `x` has factor labels not seen.*20 values: \"NEW\"",
                 class = "histboost_warning_unseen_levels")
})

test_that("predict(type = \"class\") gives y's factor: its unused levels and its order kept, through the model file", {
  set.seed(75)
  n <- 300
  d <- data.frame(a = rnorm(n), b = rnorm(n))
  y <- factor(ifelse(d$a > 0, "pos", "neg"), levels = c("neg", "pos", "unknown"))
  m <- suppressWarnings(hb_quiet(d, y, nrounds = 5L, min_data_in_leaf = 5L))
  pc <- predict(m, d, type = "class")
  expect_identical(levels(pc), levels(y))
  p <- predict(m, d)  # P(second class, "pos")
  expect_identical(as.character(pc), ifelse(p > 0.5, "pos", "neg"))
  expect_identical(mean(pc == y), mean(ifelse(p > 0.5, "pos", "neg") == as.character(y)))
  yo <- factor(c("lo", "mid", "hi")[1L + (d$a > -0.5) + (d$a > 0.5)], levels = c("lo", "mid", "hi"), ordered = TRUE)
  mo <- hb_quiet(d, yo, nrounds = 5L, min_data_in_leaf = 5L)
  po <- predict(mo, d, type = "class")
  expect_true(is.ordered(po))
  expect_identical(levels(po), levels(yo))
  P <- predict(mo, d)
  expect_identical(as.character(po), colnames(P)[max.col(P, ties.method = "first")])
  expect_identical(po <= "mid", as.character(po) %in% c("lo", "mid"))  # an ordered comparison
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f), add = TRUE)
  for (fit in list(m, mo)) {
    hb_save(fit, f)
    expect_identical(predict(hb_load(f), d, type = "class"), predict(fit, d, type = "class"))
  }
  # a plain factor's model text says nothing more than before
  mp <- hb_quiet(d, factor(ifelse(d$a > 0, "pos", "neg")), nrounds = 2L, min_data_in_leaf = 5L)
  expect_false(grepl("r.class_levels|r.class_ordered", mp$model_text))
  expect_identical(levels(predict(mp, d, type = "class")), c("neg", "pos"))
})
