# Gradient-based one-side sampling: which rows grow each tree (the largest
# gradients, recomputed in plain R from the model's own scores), that it
# reduces to plain training when it keeps every row, that it stays accurate,
# reproducible and thread-independent, and its argument checks.

goss_data <- function(seed, n = 4000) {
  set.seed(seed)
  x <- data.frame(a = rnorm(n), b = runif(n), c = rnorm(n), d = factor(sample(letters[1:5], n, TRUE)))
  y <- sin(2 * x$a) + 2 * x$b * (x$c > 0) + (x$d %in% c("a", "c")) + rnorm(n, sd = 0.3)
  list(x = x, y = y)
}

test_that("the first 1 / learning_rate trees use every row, then the top rows and a sample of the rest", {
  d <- goss_data(81)
  n <- 4000
  fit <- hb_quiet(d$x, d$y, nrounds = 8L, learning_rate = 0.25, num_leaves = 8L, goss = TRUE, top_rate = 0.1,
                  other_rate = 0.2, seed = 4)
  tab <- hb_trees(fit)
  root <- tab$count[tab$id == "N0"]
  expect_identical(root[1:4], rep(4000L, 4))  # 1 / 0.25 = 4 warm-up rounds
  rest <- n - 400
  p <- 0.2 / 0.9
  expect_true(all(abs(root[5:8] - 400 - rest * p) < 5 * sqrt(rest * p * (1 - p))))
  expect_true(all(fit$params$goss, fit$params$top_rate == 0.1, fit$params$other_rate == 0.2))
})

test_that("the kept rows are those with the largest gradients, recomputed in plain R", {
  d <- goss_data(82)
  # other_rate tiny: only the top rows grow tree 3 (lr 0.5: two warm-up rounds)
  fit <- hb_quiet(d$x, d$y, nrounds = 3L, learning_rate = 0.5, num_leaves = 6L, min_data_in_leaf = 5L,
                  goss = TRUE, top_rate = 0.15, other_rate = 1e-12, seed = 1)
  s <- predict(fit, d$x, type = "raw", iteration = 2L)
  g <- abs(s - d$y)  # squared error: |g h| = |score - y|
  top <- order(-g, seq_along(g))[seq_len(ceiling(0.15 * 4000))]
  leaf <- predict(fit, d$x, type = "leaf")[, 3]
  tab <- hb_trees(fit)
  lt <- tab[tab$tree == 3 & tab$is_leaf, ]
  want <- table(factor(leaf[top], levels = sub("L", "", lt$id)))
  expect_identical(as.vector(lt$count), as.vector(want))
  expect_identical(sum(lt$count), 600L)
  # and each leaf's value is -G / H over exactly those rows
  r <- tapply(seq_along(top), leaf[top], function(k) -0.5 * sum(s[top[k]] - d$y[top[k]]) / length(k))
  expect_equal(lt$value[match(paste0("L", names(r)), lt$id)], unname(as.vector(r)), tolerance = 1e-10)
})

test_that("keeping every row (top_rate + other_rate = 1) is plain training", {
  d <- goss_data(83, n = 2000)
  a <- hb_quiet(d$x, d$y, nrounds = 20L, num_leaves = 15L, goss = TRUE, top_rate = 0.3, other_rate = 0.7, seed = 2)
  b <- hb_quiet(d$x, d$y, nrounds = 20L, num_leaves = 15L, seed = 2)
  expect_equal(predict(a, d$x), predict(b, d$x), tolerance = 1e-12)
})

test_that("GOSS stays accurate, and is reproducible for any thread count", {
  d <- goss_data(84, n = 8000)
  tr <- 1:6000
  te <- 6001:8000
  plain <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 100L, num_leaves = 15L, seed = 3)
  g1 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 100L, num_leaves = 15L, goss = TRUE, seed = 3, nthreads = 1L)
  g2 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 100L, num_leaves = 15L, goss = TRUE, seed = 3, nthreads = 2L)
  expect_identical(g1$model_text, g2$model_text)
  e_plain <- rmse(d$y[te], predict(plain, d$x[te, ]))
  e_goss <- rmse(d$y[te], predict(g1, d$x[te, ]))
  expect_lt(e_goss, 1.03 * e_plain)
  g3 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 100L, num_leaves = 15L, goss = TRUE, seed = 4)
  expect_false(identical(g3$model_text, g1$model_text))
})

test_that("GOSS arguments are checked", {
  d <- goss_data(85, n = 300)
  err <- function(expr, re) expect_error(expr, class = "histboost_error_input", regexp = re)
  err(hb_quiet(d$x, d$y, goss = NA), "`goss`")
  err(hb_quiet(d$x, d$y, goss = TRUE, top_rate = 0), "`top_rate`")
  err(hb_quiet(d$x, d$y, goss = TRUE, other_rate = 1.5), "`other_rate`")
  err(hb_quiet(d$x, d$y, goss = TRUE, top_rate = 0.6, other_rate = 0.5), "at most 1")
  err(hb_quiet(d$x, d$y, goss = TRUE, bagging_fraction = 0.5, bagging_freq = 1L), "use one of them")
})
