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
