# The "histboost" engine of parsnip::boost_tree(): parsnip's arguments
# arrive as histboost()'s, and its predictions are histboost's. Needs
# parsnip (a suggested package).
skip_if_not_installed("parsnip")
suppressPackageStartupMessages(library(parsnip))

test_that("boost_tree(engine = \"histboost\") fits and predicts as histboost() does (regression)", {
  d <- gen_task(71, n = 800, p = 6, task = "regression", factors = 1)
  df <- data.frame(d$x, y = d$y)
  spec <- boost_tree(trees = 30, learn_rate = 0.2, tree_depth = 4, min_n = 7, loss_reduction = 0.01) |>
    set_engine("histboost", seed = 1, num_leaves = 12L) |>
    set_mode("regression")
  f <- fit(spec, y ~ ., data = df)
  expect_s3_class(f$fit, "histboost")
  p <- f$fit$params
  expect_identical(c(p$nrounds, p$max_depth, p$min_data_in_leaf, p$num_leaves), c(30L, 4L, 7L, 12L))
  expect_identical(c(p$learning_rate, p$min_gain_to_split), c(0.2, 0.01))
  alone <- hb_quiet(d$x, d$y, nrounds = 30L, learning_rate = 0.2, max_depth = 4L, min_data_in_leaf = 7L,
                    min_gain_to_split = 0.01, num_leaves = 12L, seed = 1)
  expect_equal(predict(f, df)$.pred, predict(alone, d$x), tolerance = 1e-12)
  # the factor reached histboost as a factor (no indicator columns)
  expect_identical(f$fit$feature_types[f$fit$feature_names == "f1"], "categorical")
})

test_that("classification: classes and probabilities, mtry and sample_size as fractions", {
  d <- gen_task(72, n = 900, p = 6, task = "multiclass", K = 3)
  df <- data.frame(d$x, y = d$y)
  spec <- boost_tree(trees = 25, mtry = 3, sample_size = 0.8) |>
    set_engine("histboost", seed = 2) |>
    set_mode("classification")
  f <- fit(spec, y ~ ., data = df)
  expect_identical(f$fit$params$feature_fraction_bynode, 0.5)  # mtry: the predictors each split chooses from
  expect_identical(f$fit$params$feature_fraction, 1)
  expect_identical(f$fit$params$bagging_fraction, 0.8)
  expect_identical(f$fit$params$bagging_freq, 1L)
  pr <- predict(f, df, type = "prob")
  expect_identical(names(pr), paste0(".pred_", levels(d$y)))
  alone <- hb_quiet(d$x, d$y, nrounds = 25L, feature_fraction_bynode = 0.5, bagging_fraction = 0.8,
                    bagging_freq = 1L, seed = 2)
  expect_equal(unname(as.matrix(pr)), unname(predict(alone, d$x)), tolerance = 1e-12)
  expect_identical(predict(f, df)$.pred_class, predict(alone, d$x, type = "class"))
  # stop_iter: early stopping on a held-out share of the training rows
  es <- boost_tree(trees = 500, learn_rate = 0.3, stop_iter = 5) |>
    set_engine("histboost", seed = 3, validation = 0.2) |>
    set_mode("classification") |>
    fit(y ~ ., data = df)
  expect_true(es$fit$niter < 500L)
  expect_identical(es$fit$niter, es$fit$best_iteration + 5L)
  # multi_predict() gives what predict() gives at `trees` (the best iteration) and at any count past it:
  # a submodel never uses more trees than the fit it comes from; below the best one, that many trees
  best <- es$fit$best_iteration
  mp <- multi_predict(es, df[1:40, ], trees = c(best - 1L, best + 2L, 500L), type = "prob")
  at <- function(k) t(vapply(mp$.pred, function(t) unlist(t[t$trees == k, -1L]), numeric(3)))
  full <- as.matrix(predict(es, df[1:40, ], type = "prob"))
  expect_equal(unname(at(500L)), unname(full), tolerance = 1e-12)
  expect_equal(unname(at(best + 2L)), unname(full), tolerance = 1e-12)
  expect_equal(unname(at(best - 1L)), unname(predict(es$fit, df[1:40, ], iteration = best - 1L)), tolerance = 1e-12)
  expect_false(isTRUE(all.equal(at(best - 1L), at(500L))))
  expect_error(hb_parsnip_fit(d$x, d$y, mtry = 0), class = "histboost_error_input", regexp = "`mtry`")
})

test_that("multi_predict() gives each number of trees from one fit (tune's submodels)", {
  d <- gen_task(73, n = 600, p = 6, task = "binary")
  df <- data.frame(d$x, y = d$y)
  f <- boost_tree(trees = 40) |> set_engine("histboost", seed = 4) |> set_mode("classification") |>
    fit(y ~ ., data = df)
  mp <- multi_predict(f, df[1:50, ], trees = c(30, 5, 12), type = "prob")
  expect_identical(nrow(mp), 50L)
  first <- mp$.pred[[1]]
  expect_identical(first$trees, c(5L, 12L, 30L))
  for (k in c(5L, 12L, 30L)) {
    alone <- hb_quiet(d$x, d$y, nrounds = k, seed = 4)
    got <- vapply(mp$.pred, function(t) t$.pred_yes[t$trees == k], 0)
    expect_equal(got, predict(alone, d$x[1:50, ]), tolerance = 1e-12, label = paste(k, "trees"))
  }
  cls <- multi_predict(f, df[1:5, ], trees = 40)
  expect_identical(cls$.pred[[3]]$.pred_class, predict(f, df[3, ])$.pred_class)
  # the class factor is predict()'s: every level of the outcome (one without training rows too) and an
  # ordered outcome's order, so that tune can bind the submodels' rows to the fit's
  od <- iris
  od$Species <- factor(od$Species, ordered = TRUE)
  ospec <- boost_tree(trees = 10, min_n = 5) |> set_engine("histboost", seed = 4) |> set_mode("classification")
  fo <- suppressWarnings(fit(ospec, Species ~ ., data = od[51:150, ]))  # setosa has no training rows
  whole <- predict(fo, od[c(1, 60, 140), ], type = "class")$.pred_class
  sub <- multi_predict(fo, od[c(1, 60, 140), ], trees = c(5, 10))$.pred
  expect_true(is.ordered(whole))
  for (r in 1:3) expect_identical(sub[[r]]$.pred_class[2], whole[r])
  expect_identical(levels(sub[[1]]$.pred_class), levels(od$Species))
  both <- vctrs::vec_rbind(tibble::tibble(.pred_class = whole), sub[[1]][, ".pred_class"])  # as tune binds them
  expect_identical(both$.pred_class, c(whole, sub[[1]]$.pred_class))
  expect_error(multi_predict(f, df[1:5, ], trees = 0), class = "histboost_error_input", regexp = "`trees`")
})

test_that("character predictors train as factors; learn_rate and sample_size tune over boosting's ranges", {
  set.seed(31)
  df <- data.frame(s = sample(c("u", "v", "w"), 300, TRUE), x = rnorm(300))
  df$y <- (df$s == "v") * 3 + df$x + rnorm(300, sd = 0.1)
  spec <- boost_tree(trees = 20, min_n = 5) |> set_engine("histboost", seed = 1) |> set_mode("regression")
  f <- fit(spec, y ~ ., data = df)
  dff <- transform(df, s = factor(s))
  alone <- hb_quiet(dff[c("s", "x")], df$y, nrounds = 20L, seed = 1, min_data_in_leaf = 5)
  expect_identical(f$fit$feature_types[f$fit$feature_names == "s"], "categorical")
  expect_identical(predict(f, df)$.pred, predict(alone, dff[c("s", "x")]))
  expect_type(df$s, "character")  # the user's column unchanged
  # dials' ranges as parsnip's xgboost engine sets them, not dials' defaults (learn_rate down to 1e-10)
  args <- parsnip::get_model_env()$boost_tree_args
  lr <- args$func[args$engine == "histboost" & args$parsnip == "learn_rate"][[1]]
  ss <- args$func[args$engine == "histboost" & args$parsnip == "sample_size"][[1]]
  expect_identical(lr$range, c(-3, -0.5))
  expect_identical(ss$range, c(0.5, 1))
})

test_that("the engine is registered whichever of parsnip and histboost loads first", {
  skip_if_not(histboost_installed(), "histboost is not installed in a library (a fresh R session must load it)")
  libs <- paste(normalizePath(.libPaths(), mustWork = FALSE), collapse = .Platform$path.sep)
  for (order in list(c("parsnip", "histboost"), c("histboost", "parsnip"))) {
    code <- paste0("suppressPackageStartupMessages({library(", order[1], "); library(", order[2], ")}); ",
                   "e <- parsnip::show_engines('boost_tree'); cat(sort(e$mode[e$engine == 'histboost']))")
    out <- system2(rscript_path(), c("--vanilla", "-e", shQuote(code)), env = paste0("R_LIBS=", shQuote(libs)),
                   stdout = TRUE, stderr = TRUE)
    expect_identical(tail(out, 1), "classification regression", label = paste(order, collapse = " then "))
  }
})

test_that("set_engine() passes monotone_constraints through by column name", {
  d <- gen_task(75, n = 800, p = 6, task = "regression")
  df <- data.frame(d$x, y = d$y)
  f <- boost_tree(trees = 20) |> set_engine("histboost", seed = 5, monotone_constraints = c(x1 = 1)) |>
    set_mode("regression") |> fit(y ~ ., data = df)
  expect_identical(f$fit$params$monotone_constraints, c(x1 = 1L, x2 = 0L, x3 = 0L, x4 = 0L, x5 = 0L, x6 = 0L))
  nd <- df[rep(1:30, each = 41), ]
  nd$x1 <- rep(seq(-3, 3, length.out = 41), 30)
  expect_gte(min(diff(matrix(predict(f, nd)$.pred, nrow = 41))), 0)
})

test_that("the engine's model keeps no data in its call: the data are symbols, the parameters values", {
  d <- gen_task(76, n = 5000, p = 6, task = "regression")
  df <- data.frame(d$x, y = d$y)
  f <- boost_tree(trees = 10, learn_rate = 0.2) |> set_engine("histboost", seed = 6, num_leaves = 7L) |>
    set_mode("regression") |> fit(y ~ ., data = df)
  alone <- hb_quiet(d$x, d$y, nrounds = 10L, learning_rate = 0.2, num_leaves = 7L, seed = 6)
  expect_identical(predict(f, df)$.pred, predict(alone, d$x))
  cl <- as.list(f$fit$call)
  expect_identical(cl[[1L]], quote(histboost))
  expect_identical(cl$x, quote(.hb_parsnip_x))
  expect_identical(cl$y, quote(.hb_parsnip_y))
  # every other argument a single value written out (no data, no weights = NULL)
  rest <- cl[setdiff(names(cl)[-1L], c("x", "y"))]
  expect_setequal(names(rest), c("nrounds", "learning_rate", "num_leaves", "seed", "verbose"))
  expect_true(all(vapply(rest, function(v) is.atomic(v) && length(v) == 1L, NA)))
  expect_equal(rest$learning_rate, 0.2)
  # the serialized model is as small as histboost()'s own (the data, 5000 x 7
  # doubles, would add 200 kB)
  size <- function(m) length(serialize(m, NULL))
  expect_lt(abs(size(f$fit) - size(alone)), 2000)
  call_size <- function(m) size(m) - size(m[setdiff(names(m), "call")])
  expect_lt(call_size(f$fit), 1000)

  # stop_iter: the held-out rows are data too
  es <- boost_tree(trees = 50, stop_iter = 3) |> set_engine("histboost", seed = 7) |>
    set_mode("regression")
  set.seed(8)
  fe <- fit(es, y ~ ., data = df)
  expect_identical(as.list(fe$fit$call)$valid, quote(.hb_parsnip_valid))
  expect_lt(call_size(fe$fit), 1000)
  # update() cannot find parsnip's copies of the data, and says so rather than take a
  # workspace's x and y
  x <- d$x[1:50, ]
  y <- rev(d$y)[1:50]
  expect_input_error(update(f$fit, nrounds = 5L), "fitted through parsnip's fit\\(\\)")
})

test_that("stop_iter holds out a stratified validation share: a rare class keeps training rows", {
  # the reviewer's case: 2 rows of class C, which a plain random 10% could take both of
  set.seed(9)
  d3 <- data.frame(a = runif(200), b = runif(200), y = factor(c(rep("A", 100), rep("B", 98), rep("C", 2))))
  set.seed(3)
  f <- boost_tree(trees = 20, stop_iter = 3) |> set_engine("histboost", nthreads = 1) |>
    set_mode("classification") |> fit(y ~ a + b, data = d3)
  expect_identical(f$fit$classes, c("A", "B", "C"))

  # per class: round(n_c * validation) rows held out, at most n_c - 1, counted in plain R
  y <- factor(rep(c("A", "B", "C", "D"), c(37, 12, 2, 1)))
  for (v in c(0.1, 0.25, 0.5, 0.9)) {
    set.seed(10)
    held <- .hb_parsnip_holdout(y, v)
    n_c <- as.vector(table(y))
    expect_identical(as.vector(table(y[held])), as.integer(pmin(floor(n_c * v + 0.5), n_c - 1)), label = v)
    expect_true(all(table(y[-held]) >= 1L))
    expect_false(is.unsorted(held, strictly = TRUE))
    set.seed(10)
    expect_identical(.hb_parsnip_holdout(y, v), held)  # set.seed() repeats the draw
  }
  set.seed(11)
  other <- .hb_parsnip_holdout(y, 0.5)
  set.seed(12)
  expect_false(identical(.hb_parsnip_holdout(y, 0.5), other))
  # too few rows for the share: one row of the largest class
  set.seed(13)
  tiny <- .hb_parsnip_holdout(factor(c("a", "a", "b")), 0.1)
  expect_length(tiny, 1L)
  expect_true(tiny %in% 1:2)

  # the fit early-stops on exactly those rows: its log is their multi_logloss, recomputed in R
  set.seed(14)
  x <- data.frame(a = runif(52), b = runif(52))
  set.seed(15)
  held <- .hb_parsnip_holdout(y, 0.5)
  set.seed(15)
  fit <- hb_parsnip_fit(x, y, stop_iter = 2, validation = 0.5, nrounds = 4L, min_data_in_leaf = 2L,
                        seed = 1, verbose = 0L, nthreads = 1L)
  expect_identical(fit$classes, levels(y))
  log <- fit$evaluation_log
  for (i in c(1L, nrow(log))) {
    P <- predict(fit, x[held, ], iteration = i)
    expect_equal(log$validation_multi_logloss[i], multi_logloss(as.integer(y[held]), P), tolerance = TOL$metric)
  }

  # impossible: every class a single row
  err <- expect_error(hb_parsnip_fit(x[1:3, ], factor(c("a", "b", "c")), stop_iter = 2, nrounds = 3L,
                                     verbose = 0L), class = "histboost_error_input")
  expect_match(conditionMessage(err), "`stop_iter`.*`validation`.*leave `stop_iter` NULL")
  expect_error(hb_parsnip_fit(x[1, , drop = FALSE], 1, stop_iter = 2, nrounds = 3L, verbose = 0L),
               class = "histboost_error_input", regexp = "`stop_iter`.*`validation`")
})

test_that("mtry below 1 with counts = TRUE, or above 1 with counts = FALSE, is an error naming both", {
  d <- gen_task(77, n = 600, p = 6, task = "regression")
  df <- data.frame(d$x, y = d$y)
  spec <- function(mtry, ...) {
    boost_tree(trees = 5, mtry = mtry) |> set_engine("histboost", seed = 8, ...) |> set_mode("regression")
  }
  err <- expect_error(fit(spec(0.5), y ~ ., data = df), class = "histboost_error_input")
  expect_match(conditionMessage(err), "`mtry` = 0.5 is below 1.*`counts = TRUE`.*counts = FALSE")
  err <- expect_error(fit(spec(2, counts = FALSE), y ~ ., data = df), class = "histboost_error_input")
  expect_match(conditionMessage(err), "`mtry` = 2 is above 1.*`counts = FALSE`.*`counts = TRUE`")
  expect_error(hb_parsnip_fit(d$x, d$y, mtry = 2, counts = NA), class = "histboost_error_input",
               regexp = "`counts`")
  # the values that fit their reading: a proportion with counts = FALSE, a count (clamped to all) without
  f <- fit(spec(0.5, counts = FALSE), y ~ ., data = df)
  expect_identical(f$fit$params$feature_fraction_bynode, 0.5)
  alone <- hb_quiet(d$x, d$y, nrounds = 5L, feature_fraction_bynode = 0.5, seed = 8)
  expect_identical(predict(f, df)$.pred, predict(alone, d$x))
  expect_identical(fit(spec(1, counts = FALSE), y ~ ., data = df)$fit$params$feature_fraction_bynode, 1)
  expect_identical(fit(spec(2), y ~ ., data = df)$fit$params$feature_fraction_bynode, 2 / 6)
  expect_warning(f9 <- fit(spec(9), y ~ ., data = df), class = "histboost_warning", regexp = "all 6 are used")
  expect_identical(f9$fit$params$feature_fraction_bynode, 1)
  # mtry = 1 is one predictor at each split, not one predictor for a whole tree (feature_fraction's draw):
  # some tree splits on several features
  f1 <- fit(boost_tree(trees = 20, mtry = 1, min_n = 5) |> set_engine("histboost", seed = 8) |>
              set_mode("regression"), y ~ ., data = df)
  tr <- hb_trees(f1$fit)
  per_tree <- tapply(tr$feature, tr$tree, function(v) length(unique(stats::na.omit(v))))
  expect_gt(max(per_tree), 1)
})

test_that("an outcome level without training rows gets a probability column of zeros, in level order", {
  set.seed(21)
  d <- data.frame(a = runif(300))
  d$y <- factor(ifelse(d$a + rnorm(300, sd = 0.2) > 0.5, "yes", "no"), levels = c("yes", "maybe", "no"))
  spec <- set_mode(set_engine(boost_tree(trees = 10), "histboost", seed = 1), "classification")
  m <- suppressWarnings(fit(spec, y ~ a, data = d))
  p <- predict(m, d[1:20, , drop = FALSE], type = "prob")
  expect_identical(names(p), c(".pred_yes", ".pred_maybe", ".pred_no"))
  expect_identical(p$.pred_maybe, rep(0, 20))
  # the other two are the model's own probabilities, summing to 1 with the zero column
  direct <- suppressWarnings(histboost(d["a"], droplevels(d$y), nrounds = 10L, seed = 1, verbose = 0L))
  pd <- predict(direct, d[1:20, "a", drop = FALSE])  # binary: the second class's, "no"
  expect_equal(p$.pred_no, pd)
  expect_equal(p$.pred_yes, 1 - pd)
  expect_equal(rowSums(p), rep(1, 20))
  expect_identical(levels(predict(m, d[1:20, , drop = FALSE])$.pred_class), c("yes", "maybe", "no"))
})

test_that("hb_parsnip_fit() checks validation always, and caps mtry at the predictors with a warning", {
  d <- gen_task(636, n = 200, task = "regression")
  p <- ncol(d$x)
  expect_input_error(hb_parsnip_fit(d$x, d$y, validation = -0.1, nrounds = 2L, verbose = 0), "`validation`")
  expect_input_error(hb_parsnip_fit(d$x, d$y, validation = 1, nrounds = 2L, verbose = 0), "`validation`")
  expect_warning(big <- hb_parsnip_fit(d$x, d$y, mtry = p + 4, nrounds = 3L, seed = 1, verbose = 0),
                 class = "histboost_warning", regexp = paste0("more than the ", p, " predictors"))
  all <- hb_parsnip_fit(d$x, d$y, mtry = p, nrounds = 3L, seed = 1, verbose = 0)
  expect_identical(predict(big, d$x), predict(all, d$x))
})

test_that("engine argument valid reaches histboost(); a main argument and the engine argument it sets are refused together", {
  vd <- list(mine = list(x = mtcars[1:10, -1], y = mtcars$mpg[1:10]))
  s <- set_mode(set_engine(boost_tree(trees = 60, min_n = 3, learn_rate = 0.3), "histboost", nthreads = 1,
                           valid = vd, early_stopping_rounds = 5, seed = 1), "regression")
  pf <- fit(s, mpg ~ ., data = mtcars)
  direct <- histboost(mtcars[-1], mtcars$mpg, nrounds = 60L, min_data_in_leaf = 3L, learning_rate = 0.3, nthreads = 1L,
                      valid = vd, early_stopping_rounds = 5L, seed = 1, verbose = 0L)
  expect_identical(pf$fit$best_iteration, direct$best_iteration)
  expect_identical(names(pf$fit$evaluation_log), c("iter", "mine_rmse"))
  expect_identical(predict(pf, mtcars)$.pred, predict(direct, mtcars[-1]))
  d <- gen_task(637, n = 200, p = 10, task = "regression")
  expect_input_error(hb_parsnip_fit(d$x, d$y, mtry = 5, feature_fraction_bynode = 0.2, nrounds = 2L, verbose = 0),
                     "`mtry` \\(parsnip's main argument\\) sets `feature_fraction_bynode`")
  expect_input_error(hb_parsnip_fit(d$x, d$y, sample_size = 0.8, bagging_fraction = 0.5, nrounds = 2L, verbose = 0),
                     "`sample_size` .* sets `bagging_fraction`")
  expect_input_error(hb_parsnip_fit(d$x, d$y, stop_iter = 3, early_stopping_rounds = 5, nrounds = 2L, verbose = 0),
                     "`stop_iter` .* sets `early_stopping_rounds`")
  expect_input_error(hb_parsnip_fit(d$x, d$y, stop_iter = 3, valid = vd, nrounds = 2L, verbose = 0),
                     "`stop_iter` .* sets `valid`")
})

test_that("multi_predict() types follow the mode: class or prob for classification, numeric for regression", {
  sc <- set_mode(set_engine(boost_tree(trees = 5), "histboost", nthreads = 1, seed = 1), "classification")
  fc <- fit(sc, Species ~ ., data = iris)
  expect_input_error(multi_predict(fc, iris[1:3, ], type = "numeric", trees = 2:3),
                     "`type` must be \"class\" or \"prob\" for multi_predict\\(\\) of a classification fit")
  sr <- set_mode(set_engine(boost_tree(trees = 5, min_n = 3), "histboost", nthreads = 1, seed = 1), "regression")
  fr <- fit(sr, mpg ~ ., data = mtcars)
  expect_input_error(multi_predict(fr, mtcars[1:3, ], type = "prob", trees = 2:3), "must be \"numeric\"")
  mp <- multi_predict(fr, mtcars[1:3, ], type = "numeric", trees = 2:3)
  expect_equal(mp$.pred[[1]]$.pred, c(predict(fr$fit, mtcars[1, -1], iteration = 2L),
                                      predict(fr$fit, mtcars[1, -1], iteration = 3L)))
})
