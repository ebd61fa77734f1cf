# Messages say what was given and what is wanted, and never contradict
# themselves or blame an argument the user did not give.

msg_of <- function(expr, class = "histboost_error_input") {
  err <- tryCatch(expr, error = function(e) e)
  expect_s3_class(err, class)
  conditionMessage(err)
}

test_that("a number given as a string is shown as the string it is", {
  m <- msg_of(histboost(mtcars[, -1], mtcars$mpg, nrounds = "10", verbose = 0))
  expect_match(m, "`nrounds` must be a whole number >= 1, not the string \"10\"", fixed = TRUE)
  expect_match(m, "write the number without quotes: nrounds = 10", fixed = TRUE)
  m <- msg_of(histboost(mtcars[, -1], mtcars$mpg, learning_rate = "fast", verbose = 0))
  expect_match(m, "`learning_rate` must be a number > 0, not the string \"fast\".", fixed = TRUE)
  m <- msg_of(histboost(mtcars[, -1], mtcars$mpg, nrounds = NA_character_, verbose = 0))
  expect_match(m, "not NA (a missing string)", fixed = TRUE)
  # numbers out of range still show the number
  m <- msg_of(histboost(mtcars[, -1], mtcars$mpg, nrounds = 0, verbose = 0))
  expect_match(m, "`nrounds` must be a whole number >= 1, not 0.", fixed = TRUE)
})

test_that("thread counts and interaction groups say what is wrong, in advice that is valid R", {
  old <- options(histboost.nthreads = "2")
  on.exit(options(old), add = TRUE)
  m <- msg_of(hb_threads())
  expect_match(m, "write the number without quotes: options(histboost.nthreads = 2)", fixed = TRUE)
  options(histboost.nthreads = NULL)
  old_env <- Sys.getenv("HISTBOOST_NUM_THREADS", unset = NA)
  on.exit(if (is.na(old_env)) Sys.unsetenv("HISTBOOST_NUM_THREADS") else Sys.setenv(HISTBOOST_NUM_THREADS = old_env),
          add = TRUE)
  Sys.setenv(HISTBOOST_NUM_THREADS = "100000000000")
  expect_match(msg_of(hb_threads()), "a whole number from 1 to 2147483647, not \"100000000000\"", fixed = TRUE)
  Sys.unsetenv("HISTBOOST_NUM_THREADS")
  x <- mtcars[, -1]
  for (g in list(c(0, 1), c(1L, 0L), c(1, 2.5))) {
    m <- msg_of(histboost(x, mtcars$mpg, interaction_constraints = list(g), nrounds = 1L, verbose = 0, nthreads = 1L))
    bad <- g[g < 1 | g != round(g)][1L]
    expect_match(m, paste0("its column number ", format(bad), " is not a whole number >= 1."), fixed = TRUE)
  }
  # whole numbers as doubles are fine
  expect_s3_class(histboost(x, mtcars$mpg, interaction_constraints = list(c(1, 2)), nrounds = 1L, verbose = 0,
                            min_data_in_leaf = 5L, nthreads = 1L), "histboost")
})

test_that("hb_cv: too few queries or rows for nfold says how many there are", {
  set.seed(4)
  x <- data.frame(a = rnorm(30))
  y <- rpois(30, 2)
  m <- msg_of(hb_cv(x, y, group = rep(1:3, each = 10), objective = "lambdarank", nfold = 5L, nrounds = 2L,
                    verbose = 0))
  expect_match(m, "`nfold` is 5 but there are only 3 queries in `group`", fixed = TRUE)
  expect_match(m, "give `nfold` between 2 and 3", fixed = TRUE)
  expect_false(grepl("<= 2", m, fixed = TRUE))
  m <- msg_of(hb_cv(x, y, group = rep(1, 30), objective = "lambdarank", nfold = 5L, nrounds = 2L, verbose = 0))
  expect_match(m, "`group` has 1 query; cross-validation by query holds out whole queries", fixed = TRUE)
  m <- msg_of(hb_cv(x[1:4, , drop = FALSE], y[1:4], nfold = 5L, nrounds = 2L, verbose = 0))
  expect_match(m, "`nfold` is 5 but there are only 4 rows in `x`", fixed = TRUE)
})

test_that("hb_cv: a class whose rows one fold holds out is named, not a `valid` set", {
  y <- factor(c(as.character(iris$Species[-1]), "rare"))
  x <- iris[c(2:150, 1), 1:4]
  m <- msg_of(hb_cv(x, y, nfold = 3L, nrounds = 2L, verbose = 0))
  expect_match(m, "^fold [1-3] holds out every row of class `rare` \\(1 row\\)")
  expect_match(m, "Give every class at least 2 rows", fixed = TRUE)
  expect_false(grepl("valid", m, fixed = TRUE))
  # user-given folds: the same check, and which fold
  folds <- list(seq(1, 150, 3), seq(2, 150, 3), seq(3, 150, 3))  # row 150, the rare one, in fold 3
  m <- msg_of(hb_cv(x, y, folds = folds, nrounds = 2L, verbose = 0))
  expect_match(m, "^fold 3 holds out every row of class `rare`")
  # a class of several rows that the user's folds hold out at once: the advice is about the folds
  yb <- factor(c(rep("a", 90), rep("b", 10)))
  m <- msg_of(hb_cv(data.frame(v = seq_len(100)), yb, folds = split(1:100, rep(1:5, each = 20)), nrounds = 2L,
                    verbose = 0))
  expect_match(m, "^fold 5 holds out every row of class `b` \\(10 rows\\).*Choose `folds` that leave some")
  expect_false(grepl("at least 2 rows", m, fixed = TRUE))
  # two rows of the class: stratified folds keep one for training, so cv runs
  y2 <- factor(c(as.character(iris$Species[-(1:2)]), "rare", "rare"))
  cv <- hb_cv(iris[c(3:150, 1:2), 1:4], y2, nfold = 2L, nrounds = 2L, verbose = 0, seed = 1)
  expect_s3_class(cv, "hb_cv")
})

test_that("hb_load on a folder says it is a folder", {
  d <- tempfile("hbdir")
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE))
  m <- msg_of(hb_load(d))
  expect_match(m, "is a folder, not a model file", fixed = TRUE)
  expect_false(grepl("does not exist", m, fixed = TRUE))
  m <- msg_of(hb_load(file.path(d, "none.hbm")))
  expect_match(m, "does not exist", fixed = TRUE)
})

test_that("a custom objective that errors is a histboost_error_input keeping the original as parent", {
  d <- gen_task(81, n = 200, task = "regression")
  boom <- function(preds, labels) stop("boom: my gradient code")
  err <- tryCatch(hb_quiet(d$x, d$y, objective = boom, nrounds = 3L), error = function(e) e)
  expect_s3_class(err, "histboost_error_input")
  expect_match(conditionMessage(err), "`objective`, the custom objective function, failed", fixed = TRUE)
  expect_match(conditionMessage(err), "boom: my gradient code", fixed = TRUE)
  expect_s3_class(err$parent, "simpleError")
  expect_identical(conditionMessage(err$parent), "boom: my gradient code")
  # a classed condition of the user's own keeps its class as the parent
  mine <- function(preds, labels) stop(structure(class = c("my_error", "error", "condition"),
                                                 list(message = "mine", call = NULL)))
  err <- tryCatch(hb_quiet(d$x, d$y, objective = mine, nrounds = 3L), error = function(e) e)
  expect_s3_class(err, "histboost_error_input")
  expect_s3_class(err$parent, "my_error")
  # in hb_cv too
  err <- tryCatch(hb_cv(d$x, d$y, objective = boom, nfold = 2L, nrounds = 2L, verbose = 0),
                  error = function(e) e)
  expect_s3_class(err, "histboost_error_input")
  expect_identical(conditionMessage(err$parent), "boom: my gradient code")
})

test_that("histboost() without arguments says what it needs", {
  m <- msg_of(histboost())
  expect_match(m, "`x` is required", fixed = TRUE)
  expect_match(m, "histboost(y ~ ., data = df, ...)", fixed = TRUE)
})

test_that("the formula method takes weights and subset as lm() does", {
  set.seed(8)
  n <- 300
  d <- data.frame(a = rnorm(n), b = runif(n), w = runif(n, 0.2, 3), e = runif(n, 1, 2))
  d$y <- d$a + 2 * d$b + rnorm(n, sd = 0.2)
  fit <- function(...) hb_quiet(..., nrounds = 6L, num_leaves = 7L, min_data_in_leaf = 10L, seed = 2L)
  # weights = w: the column of data, as lm(weights = w); reference: the vector itself
  ref <- fit(d[c("a", "b")], d$y, weights = d$w)
  expect_identical(predict(fit(y ~ a + b, data = d, weights = w), d), predict(ref, d))
  # an expression of columns
  ref2 <- fit(d[c("a", "b")], d$y, weights = 1 / d$e)
  expect_identical(predict(fit(y ~ a + b, data = d, weights = 1 / e), d), predict(ref2, d))
  # a vector from the caller's frame still works
  wv <- d$w
  expect_identical(predict(fit(y ~ a + b, data = d, weights = wv), d), predict(ref, d))
  # subset = a > 0 (and an NA row dropped, as lm drops it); reference: the rows themselves
  d$a[3] <- NA
  keep <- which(d$a > 0)
  ref3 <- fit(d[keep, c("a", "b")], d$y[keep], weights = d$w[keep])
  m3 <- fit(y ~ a + b, data = d, weights = w, subset = a > 0)
  expect_identical(predict(m3, d), predict(ref3, d))
  expect_identical(predict(fit(y ~ a + b, data = d, weights = w, subset = keep), d), predict(ref3, d))
  # bad ones are classed and name the argument
  err <- expect_error(fit(y ~ a + b, data = d, weights = nope), class = "histboost_error_input")
  expect_match(conditionMessage(err), "^`weights` could not be evaluated")
  expect_match(msg_of(fit(y ~ a + b, data = d, subset = "a")), "`subset` must be")
  expect_match(msg_of(fit(y ~ a + b, data = d, subset = c(TRUE, FALSE))), "`subset` has 2 values")
  expect_match(msg_of(fit(y ~ a + b, data = d, subset = a > 100)), "`subset` keeps no rows")
})

test_that("the formula method's na.action drops the rows lm()'s would, and only when asked", {
  set.seed(81)
  n <- 240
  d <- data.frame(a = rnorm(n), b = runif(n), g = factor(sample(c("p", "q", "r"), n, TRUE)), w = runif(n, 0.5, 2))
  d$y <- d$a + 2 * d$b + (d$g == "q") + rnorm(n, sd = 0.2)
  d$y[c(4, 50)] <- NA
  d$a[c(7, 50, 90)] <- NA
  d$g[11] <- NA
  d$w[20] <- NA
  orig <- d
  fit <- function(...) hb_quiet(..., nrounds = 6L, num_leaves = 7L, min_data_in_leaf = 10L, seed = 2L,
                                keep_fitted = TRUE)
  # the rows lm() keeps with na.omit (response, predictors and weights): the reference's training rows
  keep <- setdiff(seq_len(n), stats::na.action(stats::model.frame(y ~ a + b + g, d, weights = w,
                                                                   na.action = na.omit)))
  expect_identical(sort(setdiff(seq_len(n), keep)), c(4L, 7L, 11L, 20L, 50L, 90L))
  ref <- fit(d[keep, c("a", "b", "g")], d$y[keep], weights = d$w[keep])
  m <- fit(y ~ a + b + g, data = d, weights = w, na.action = na.omit)
  expect_identical(predict(m, d), predict(ref, d))
  expect_identical(as.integer(m$na.action), c(4L, 7L, 11L, 20L, 50L, 90L))
  expect_s3_class(m$na.action, "omit")
  expect_length(fitted(m), length(keep))
  expect_match(paste(capture.output(print(m)), collapse = "\n"), "6 observations deleted due to missingness")
  # the name of the function works as in lm(); na.exclude pads fitted() and residuals() to data's rows
  mx <- fit(y ~ a + b + g, data = d, weights = w, na.action = "na.exclude")
  expect_identical(predict(mx, d), predict(ref, d))
  f <- fitted(mx)
  expect_length(f, n)
  expect_identical(which(is.na(f)), c(4L, 7L, 11L, 20L, 50L, 90L))
  expect_equal(f[keep], predict(ref, d[keep, ]))
  expect_equal(residuals(mx)[keep], d$y[keep] - predict(ref, d[keep, ]))
  expect_true(all(is.na(residuals(mx)[-keep])))
  # with subset: the action sees the subset's rows; records and messages speak of data's rows
  ms <- fit(y ~ a + b + g, data = d, weights = w, subset = b > 0.3, na.action = na.omit)
  rows <- intersect(which(d$b > 0.3), keep)
  expect_identical(predict(ms, d), predict(fit(d[rows, c("a", "b", "g")], d$y[rows], weights = d$w[rows]), d))
  expect_identical(names(ms$na.action), as.character(setdiff(which(d$b > 0.3), keep)))
  # a validation data.frame: the same rows dropped as from data
  mv <- fit(y ~ a + b + g, data = d[1:160, ], na.action = na.omit, valid = list(te = d[161:n, ]))
  te <- stats::na.omit(d[161:n, c("y", "a", "b", "g")])
  mr <- fit(y ~ a + b + g, data = d[1:160, ], na.action = na.omit, valid = list(te = te))
  expect_identical(mv$evaluation_log, mr$evaluation_log)
  expect_equal(mr$evaluation_log$te_rmse[6], sqrt(mean((te$y - predict(mr, te))^2)), tolerance = 1e-6)
  # and as list(x = df) with y, weights beside it: the rows with an NA in any of them
  vx <- d[161:n, c("a", "b", "g")]
  vy <- d$y[161:n]
  vw <- d$w[161:n]
  vx$a[3] <- NA
  vy[5] <- NA
  vw[8] <- NA
  ml <- fit(y ~ a + b + g, data = d[1:160, ], na.action = na.omit, valid = list(te = list(x = vx, y = vy, weights = vw)))
  ok <- stats::complete.cases(vx) & !is.na(vy) & !is.na(vw)
  expect_lt(sum(ok), length(ok))
  mk <- fit(y ~ a + b + g, data = d[1:160, ], na.action = na.omit,
            valid = list(te = list(x = vx[ok, ], y = vy[ok], weights = vw[ok])))
  expect_identical(ml$evaluation_log, mk$evaluation_log)
  expect_identical(fit(y ~ a + b + g, data = d[1:160, ], na.action = na.omit,
                       valid = list(te = list(x = d[161:n, ])))$evaluation_log, mv$evaluation_log)
  # the default keeps NA predictors (trees route them) and refuses a missing response, naming its row
  expect_match(msg_of(fit(y ~ a + b + g, data = d)), "the response `y` contains 2 missing .*first at row 4 of `data`")
  d0 <- d[!is.na(d$y), ]
  expect_identical(predict(fit(y ~ a + b + g, data = d0, na.action = na.pass), d),
                   predict(fit(y ~ a + b + g, data = d0), d))
  # na.fail and bad values: classed errors naming the argument
  err <- expect_error(fit(y ~ a + b + g, data = d0, na.action = na.fail), class = "histboost_error_input")
  expect_match(conditionMessage(err), "^`na.action` stopped at `data`: missing values in object \\(3 of its 238 rows")
  expect_match(msg_of(fit(y ~ a + b, data = d, na.action = "no_such_fun")), "`na.action` names no function")
  expect_match(msg_of(fit(y ~ a + b, data = d, na.action = 3)), "`na.action` must be a function")
  expect_match(msg_of(fit(y ~ a + b, data = d, na.action = function(df) 1)), "must return the data frame")
  dd <- d
  dd$a <- NA_real_
  expect_match(msg_of(fit(y ~ a + b, data = dd, na.action = na.omit)), "`na.action` dropped every row of `data`")
  expect_match(msg_of(fit(y ~ a + b, data = d, na.action = na.omit, init_score = rep(0, n))),
               "`na.action` and `init_score` together")
  expect_identical(d, orig)  # the user's data untouched
  # a ranking group given for data's rows loses the same rows (subset, then na.action)
  set.seed(82)
  r <- data.frame(a = runif(200), b = runif(200))
  r$y <- pmin(4L, as.integer(r$a * 5))
  r$a[c(3, 150)] <- NA
  g <- rep(1:20, each = 10)
  rk <- function(...) hb_quiet(..., objective = "lambdarank", nrounds = 3L, min_data_in_leaf = 5L, nthreads = 1L,
                                seed = 1)
  keep <- which(!is.na(r$a) & r$b > 0.1)
  expect_identical(predict(rk(y ~ a + b, data = r, group = g, subset = b > 0.1, na.action = na.omit), r),
                   predict(rk(r[keep, c("a", "b")], r$y[keep], group = g[keep]), r))
  # a tibble's rows keep their numbers in the record, as lm() keeps them
  skip_if_not_installed("tibble")
  tb <- tibble::as_tibble(d)
  mt <- fit(y ~ a + b + g, data = tb, subset = b > 0.2, na.action = na.exclude)
  ref <- stats::na.action(stats::model.frame(y ~ a + b + g, data = tb, subset = b > 0.2, na.action = na.exclude))
  expect_identical(names(mt$na.action), names(ref))
})

test_that("messages name the input at fault: objective elements, overflow causes, init_model, seed, names", {
  d <- gen_task(634, n = 200, task = "regression", factors = 1)
  X <- as.matrix(d$x[vapply(d$x, is.numeric, NA)])
  err <- function(expr, what) expect_error(expr, class = "histboost_error_input", regexp = what)
  err(hb_quiet(X, d$y, nrounds = 2L, objective = function(p, l) list(grad = as.character(p - l), hess = p * 0 + 1)),
      "its `grad` is a character vector of length 200")
  err(hb_quiet(X, d$y, nrounds = 2L, objective = function(p, l) list(grad = p - l)), "it has no `hess`")
  b <- gen_task(635, n = 200, task = "binary")
  err(hb_quiet(b$x, b$y, nrounds = 2L, scale_pos_weight = 1e300), "lower `scale_pos_weight`")
  yp <- round(abs(d$y) * 1e6)
  err(hb_quiet(X, yp, objective = "poisson", poisson_max_delta_step = 1e300, nrounds = 2L), "`poisson_max_delta_step`")
  r <- sample(0:4, 200, TRUE)
  err(hb_quiet(X, r, objective = "lambdarank", group = rep(1:40, each = 5), label_gain = c(0, 1, 3, 7, 1e308),
               nrounds = 2L), "`label_gain` is too large")
  fit <- hb_quiet(d$x, d$y, nrounds = 2L)
  ed <- fit
  ed$niter <- 99L
  expect_error(hb_quiet(d$x, d$y, init_model = ed, nrounds = 1L), class = "histboost_error_format",
               regexp = "^`init_model`: its `niter` field")
  df <- cbind(d$x, y = d$y)
  num <- names(d$x)[vapply(d$x, is.numeric, NA)][1:2]
  fm <- hb_quiet(stats::as.formula(paste("y ~", num[1], "+ log(abs(", num[2], ") + 1)")), data = df, nrounds = 2L)
  err(hb_quiet(d$x, d$y, init_model = fm, nrounds = 1L), "`x` lacks column .*fitted with a formula")
  err(hb_quiet(d$x, d$y, nrounds = 1L, seed = "1"), "`seed` .*not of type character")
  err(hb_quiet(d$x, d$y, nrounds = 1L, max_bin_by_feature = stats::setNames(c(10, 20), num[c(1, 1)])),
      paste0("names `", num[1], "` twice"))
  # functions without options say so, classed
  err(hb_trees(fit, iteration = 1), "`iteration` is not an argument of hb_trees\\(\\)")
  err(hb_threads(2), "options\\(histboost.nthreads")
  f <- tempfile()
  hb_save(fit, f)
  err(update(hb_load(f), nrounds = 3L), "no `call`")
  called <- histboost(d$x, d$y, nrounds = 2L, verbose = 0L)
  expect_identical(update(called, nrounds = 3L)$niter, 3L)  # with its call, update() trains again
  # a first round that cannot split names min_data_in_leaf among the limits
  expect_warning(hb_quiet(data.frame(a = rep(1, 100)), rnorm(100), nrounds = 2L), "`min_data_in_leaf` \\(20\\)")
})
