# What R users expect of a model object: update() refits with changed
# arguments, fitted() and residuals(), messages and warnings that reach
# users of parsnip and caret, and progress while training.

test_that("update() refits with changed arguments, x / y and formula fits alike", {
  d <- gen_task(301, n = 500, task = "regression", factors = 1)
  x <- d$x
  y <- d$y
  fit <- histboost(x, y, nrounds = 5L, num_leaves = 8L, seed = 4, verbose = 0)
  up <- update(fit, nrounds = 9L)
  alone <- hb_quiet(x, y, nrounds = 9L, num_leaves = 8L, seed = 4)
  expect_identical(up$niter, 9L)
  expect_identical(predict(up, x), predict(alone, x))
  expect_identical(up$call$nrounds, 9L)
  # update(evaluate = FALSE) gives the call, as for lm
  cl <- update(fit, learning_rate = 0.5, evaluate = FALSE)
  expect_identical(cl[[1L]], quote(histboost))
  expect_identical(cl$learning_rate, 0.5)

  df <- cbind(x, target = y)
  ff <- histboost(target ~ ., data = df, nrounds = 5L, num_leaves = 8L, seed = 4, verbose = 0)
  fu <- update(ff, nrounds = 7L)
  fa <- hb_quiet(target ~ ., data = df, nrounds = 7L, num_leaves = 8L, seed = 4)
  expect_identical(predict(fu, df), predict(fa, df))
  # a changed formula, as update() on lm takes it
  fx <- update(ff, . ~ . - x1)
  expect_false("x1" %in% fx$feature_names)
  expect_identical(predict(fx, df), predict(hb_quiet(target ~ . - x1, data = df, nrounds = 5L, num_leaves = 8L,
                                                     seed = 4), df))
  expect_equal(formula(ff), stats::as.formula(paste("target ~", paste(names(x), collapse = " + "))),
               ignore_attr = TRUE)
  expect_input_error(formula(fit), "not fitted with a formula")
})
