# Random-forest mode (boosting = "rf"): every tree fits the gradients at
# the starting score, unshrunk, and the prediction is the starting score plus
# the mean of the trees. Checked against the trees' own leaves and leaf
# means recomputed in plain R, the logged metrics, contributions and a save.

rf_data <- function(seed, n = 3000) {
  set.seed(seed)
  x <- data.frame(a = rnorm(n), b = runif(n), c = rnorm(n), d = factor(sample(letters[1:4], n, TRUE)))
  y <- sin(2 * x$a) + 2 * x$b * (x$c > 0) + (x$d == "b") + rnorm(n, sd = 0.3)
  list(x = x, y = y)
}

test_that("each tree's leaves are the mean residual from the starting score; predictions average them", {
  d <- rf_data(91)
  fit <- hb_quiet(d$x, d$y, boosting = "rf", feature_fraction = 0.5, nrounds = 6L, num_leaves = 8L,
                  min_data_in_leaf = 20L, seed = 1)
  expect_identical(fit$params$boosting, "rf")
  expect_identical(fit$params$learning_rate, 1)
  s0 <- mean(d$y)
  leaves <- predict(fit, d$x, type = "leaf")
  tab <- hb_trees(fit)
  outs <- matrix(0, nrow(d$x), 6)
  for (t in 1:6) {
    lt <- tab[tab$tree == t & tab$is_leaf, ]
    # squared error at the starting score, no shrinkage; a leaf of a
    # many-vs-many categorical split takes cat_l2 as well (LightGBM's rule)
    l2 <- leaf_extra_l2(fit, t)
    cnt <- tapply(d$y, leaves[, t], length)
    want <- tapply(d$y - s0, leaves[, t], sum) / (cnt + l2[paste0("L", names(cnt))])
    expect_equal(lt$value[match(paste0("L", names(want)), lt$id)], unname(as.vector(want)), tolerance = 1e-10,
                 label = paste("tree", t))
    outs[, t] <- lt$value[match(paste0("L", leaves[, t]), lt$id)]
  }
  expect_equal(predict(fit, d$x), s0 + rowMeans(outs), tolerance = 1e-12)
  expect_equal(predict(fit, d$x, iteration = 3L), s0 + rowMeans(outs[, 1:3]), tolerance = 1e-12)
  # the trees differ (their feature samples do)
  expect_gt(length(unique(tab$feature[!tab$is_leaf & tab$id == "N0"])), 1L)
})

test_that("a bagged binary forest: logged metrics, contributions and a save agree with predict()", {
  set.seed(92)
  d <- rf_data(92, n = 4000)
  yb <- factor(d$y > 1)
  tr <- 1:3000
  te <- 3001:4000
  fit <- hb_quiet(d$x[tr, ], yb[tr], boosting = "rf", bagging_fraction = 0.6, bagging_freq = 1L,
                  feature_fraction = 0.8, nrounds = 30L, num_leaves = 31L, eval_metric = "logloss", seed = 2,
                  valid = list(te = list(x = d$x[te, ], y = yb[te])))
  y01 <- as.integer(yb[te]) - 1L
  for (k in c(1L, 10L, 30L)) {
    p <- predict(fit, d$x[te, ], iteration = k)
    expect_equal(fit$evaluation_log$te_logloss[k], logloss(y01, p), tolerance = 1e-9, label = paste("round", k))
  }
  ph <- predict(fit, d$x[te, ], type = "contrib")
  expect_equal(rowSums(ph), predict(fit, d$x[te, ], type = "raw"), tolerance = 1e-10)
  back <- hb_load({f <- tempfile(); hb_save(fit, f); f})
  expect_identical(back$params$boosting, "rf")
  expect_identical(predict(back, d$x[te, ]), predict(fit, d$x[te, ]))
  expect_true(grepl("\nrf=1\n", fit$model_text, fixed = TRUE))
  # a forest is about as good as boosting here, and much better than one of its trees
  auc_forest <- auc(y01, predict(fit, d$x[te, ]))
  expect_gt(auc_forest, auc(y01, predict(fit, d$x[te, ], iteration = 1L)) + 0.01)
  plain <- hb_quiet(d$x[tr, ], yb[tr], nrounds = 30L, seed = 2)
  expect_false(grepl("\nrf=", plain$model_text, fixed = TRUE))
})

test_that("an l1 forest's leaves are median residuals from the starting score, every tree", {
  d <- rf_data(94, n = 1500)
  fit <- hb_quiet(d$x, d$y, objective = "l1", boosting = "rf", feature_fraction = 0.5, nrounds = 4L,
                  num_leaves = 6L, min_data_in_leaf = 30L, seed = 5)
  s0 <- median(d$y)
  leaves <- predict(fit, d$x, type = "leaf")
  tab <- hb_trees(fit)
  for (t in 1:4) {
    lt <- tab[tab$tree == t & tab$is_leaf, ]
    want <- tapply(d$y - s0, leaves[, t], median)
    expect_equal(lt$value[match(paste0("L", names(want)), lt$id)], unname(as.vector(want)), tolerance = 1e-12,
                 label = paste("tree", t))
  }
})

test_that("random-forest arguments are checked", {
  d <- rf_data(93, n = 300)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(hb_quiet(d$x, d$y, boosting = "rf"), "needs bagging")
  err(hb_quiet(d$x, d$y, boosting = "rf", feature_fraction = 0.5, goss = TRUE), "`goss` must be FALSE")
  err(hb_quiet(d$x, d$y, boosting = "forest"), "`boosting`")
})
