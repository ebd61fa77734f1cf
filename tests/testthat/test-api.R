# The R API: prediction types, hb_importance, hb_trees, early stopping and
# the evaluation log, the formula interface, hb_dataset reuse, task choice.

api <- local({
  cache <- NULL
  function() {
    if (!is.null(cache)) return(cache)
    dr <- gen_task(91, n = 1500, task = "regression", na = 0.05, factors = 1)
    db <- gen_task(92, n = 1500, task = "binary", na = 0.05, factors = 1)
    dm <- gen_task(93, n = 1500, task = "multiclass", factors = 1, K = 4)
    cache <<- list(
      dr = dr, db = db, dm = dm,
      mr = hb_quiet(dr$x, dr$y, nrounds = 20L, num_leaves = 10L, learning_rate = 0.2),
      mb = hb_quiet(db$x, db$y, nrounds = 20L, num_leaves = 10L, learning_rate = 0.2),
      mm = hb_quiet(dm$x, dm$y, nrounds = 10L, num_leaves = 6L, learning_rate = 0.2)
    )
    cache
  }
})

test_that("task, classes and features are recorded", {
  a <- api()
  expect_identical(a$mr$task, "regression")
  expect_null(a$mr$classes)
  expect_identical(a$mb$task, "binary")
  expect_identical(a$mb$classes, levels(a$db$y))
  expect_identical(a$mm$task, "multiclass")
  expect_identical(a$mm$classes, levels(a$dm$y))
  expect_identical(a$mr$feature_names, names(a$dr$x))
  expect_identical(unname(a$mr$feature_types),
                   unname(ifelse(vapply(a$dr$x, is.factor, TRUE), "categorical", "numeric")))
  expect_identical(a$mr$feature_levels$f1, levels(a$dr$x$f1))
  expect_null(a$mr$feature_levels$x1)
  expect_equal(a$mr$niter, 20L)
  expect_equal(a$mr$params$num_leaves, 10L)
  expect_equal(a$mr$params$learning_rate, 0.2)
})

test_that("regression: response = raw = start + sum of the leaf values of hb_trees", {
  a <- api()
  x <- a$dr$x
  raw <- predict(a$mr, x, type = "raw")
  expect_identical(predict(a$mr, x, type = "response"), raw)
  expect_length(raw, nrow(x))
  leaf <- predict(a$mr, x, type = "leaf")
  expect_true(is.integer(leaf))
  expect_equal(dim(leaf), c(nrow(x), 20L))
  tr <- hb_trees(a$mr)
  total <- rep(mean(a$dr$y), nrow(x))           # boost_from_average start
  for (k in seq_len(ncol(leaf))) {
    lv <- tr[tr$tree == k & tr$is_leaf, ]
    nl <- nrow(lv)
    expect_true(all(leaf[, k] >= 0L & leaf[, k] < nl), label = paste("leaf range, tree", k))
    total <- total + lv$value[match(paste0("L", leaf[, k]), lv$id)]
  }
  expect_equal(unname(raw), total, tolerance = TOL$exact)
  expect_error(predict(a$mr, x, type = "class"), class = "histboost_error_input")
})

test_that("binary: response = plogis(raw), class by 0.5, leaves in range", {
  a <- api()
  x <- a$db$x
  raw <- predict(a$mb, x, type = "raw")
  resp <- predict(a$mb, x, type = "response")
  expect_true(all(resp >= 0 & resp <= 1))
  expect_equal(unname(resp), sigmoid(unname(raw)), tolerance = TOL$prob)
  cls <- predict(a$mb, x, type = "class")
  expect_s3_class(cls, "factor")
  expect_identical(levels(cls), levels(a$db$y))
  expect_identical(as.character(cls), levels(a$db$y)[(unname(resp) > 0.5) + 1L])
  leaf <- predict(a$mb, x, type = "leaf")
  expect_true(all(leaf >= 0L & leaf < 10L))
  # the model predicts P(second level): better than chance on the training rows
  expect_gt(auc(as.numeric(a$db$y == levels(a$db$y)[2]), resp), 0.75)
})

test_that("multiclass: response = softmax(raw), rows sum to 1, class = argmax", {
  a <- api()
  x <- a$dm$x
  raw <- predict(a$mm, x, type = "raw")
  P <- predict(a$mm, x, type = "response")
  expect_equal(dim(raw), c(nrow(x), 4L))
  expect_equal(dim(P), c(nrow(x), 4L))
  expect_identical(colnames(P), levels(a$dm$y))
  expect_equal(unname(rowSums(P)), rep(1, nrow(x)), tolerance = TOL$prob)
  expect_equal(unname(P), softmax_rows(unname(raw)), tolerance = TOL$prob)
  cls <- predict(a$mm, x, type = "class")
  expect_identical(levels(cls), levels(a$dm$y))
  expect_identical(as.character(cls), levels(a$dm$y)[max.col(unname(P), ties.method = "first")])
  leaf <- predict(a$mm, x, type = "leaf")
  expect_equal(dim(leaf), c(nrow(x), 10L * 4L))      # iterations x trees per iteration
  expect_true(all(leaf >= 0L & leaf < 6L))
  # iteration = i uses the first i * K trees: raw differs by the later trees only
  expect_equal(dim(predict(a$mm, x, type = "leaf", iteration = 3L)), c(nrow(x), 12L))
})

test_that("hb_trees structure: leaf counts, child counts and hessians add up", {
  a <- api()
  for (nm in c("mr", "mb", "mm")) {
    m <- a[[nm]]
    tr <- hb_trees(m)
    nl_max <- m$params$num_leaves
    n <- nrow(a[[sub("m", "d", nm)]]$x)
    for (k in unique(tr$tree)) {
      t <- tr[tr$tree == k, ]
      expect_lte(sum(t$is_leaf), nl_max)
      expect_equal(sum(!t$is_leaf), sum(t$is_leaf) - 1L)
      expect_equal(sum(t$count[t$is_leaf]), n, label = paste(nm, "tree", k, "rows in leaves"))
      inner <- t[!t$is_leaf, ]
      for (r in seq_len(nrow(inner))) {
        kids <- t[match(c(inner$left[r], inner$right[r]), t$id), ]
        expect_equal(inner$count[r], sum(kids$count), label = paste(nm, k, inner$id[r], "count"))
        expect_equal(inner$hessian[r], sum(kids$hessian), tolerance = 1e-9,
                     label = paste(nm, k, inner$id[r], "hessian"))
        expect_equal(kids$depth, rep(inner$depth[r] + 1L, 2))
        expect_true(inner$gain[r] > 0)
      }
      expect_true(all(is.na(t$feature[t$is_leaf])))
      expect_true(all(t$feature[!t$is_leaf] %in% m$feature_names))
      expect_true(all(is.na(t$threshold[t$split_type %in% "categorical"])))
      expect_true(all(!is.na(t$categories[t$split_type %in% "categorical"])))
    }
  }
})

test_that("hb_trees: internal value is the hessian-weighted mean of its children (lambda = 0)", {
  d <- gen_task(94, n = 800, task = "regression")
  m <- hb_quiet(d$x, d$y, nrounds = 2L, num_leaves = 8L, learning_rate = 0.5, lambda_l2 = 0)
  tr <- hb_trees(m)
  inner <- tr[!tr$is_leaf, ]
  for (r in seq_len(nrow(inner))) {
    t <- tr[tr$tree == inner$tree[r], ]
    kids <- t[match(c(inner$left[r], inner$right[r]), t$id), ]
    # -G/H of the union is the H-weighted mean of the children's -G/H
    expect_equal(inner$value[r], sum(kids$hessian * kids$value) / sum(kids$hessian), tolerance = 1e-9)
  }
  m2 <- hb_quiet(d$x, d$y, nrounds = 2L, num_leaves = 31L, max_depth = 2L)
  expect_lte(max(hb_trees(m2)$depth), 2L)
  expect_true(all(tapply(hb_trees(m2)$is_leaf, hb_trees(m2)$tree, sum) <= 4L))
})

test_that("hb_importance: gains and split counts equal those in hb_trees", {
  a <- api()
  for (nm in c("mr", "mb", "mm")) {
    m <- a[[nm]]
    tr <- hb_trees(m)
    inner <- tr[!tr$is_leaf, ]
    g <- tapply(inner$gain, as.character(inner$feature), sum)
    s <- tapply(inner$gain, as.character(inner$feature), length)
    imp <- hb_importance(m, type = "gain")
    expect_s3_class(imp, "data.frame")
    expect_setequal(as.character(imp$feature), names(g))       # unused features omitted
    expect_equal(imp$gain, as.vector(g[as.character(imp$feature)]), tolerance = 1e-12)
    expect_equal(imp$splits, unname(as.vector(s[as.character(imp$feature)])))
    expect_false(is.unsorted(rev(imp$gain)))                    # decreasing by gain
    expect_equal(imp$fraction, imp$gain / sum(imp$gain), tolerance = 1e-12)
    imps <- hb_importance(m, type = "split")
    expect_false(is.unsorted(rev(imps$splits)))
    expect_equal(imps$fraction, imps$splits / sum(imps$splits), tolerance = 1e-12)
  }
})

test_that("hb_importance counts the trees predict() sums: the best iteration's after early stopping", {
  set.seed(145)
  n <- 400
  x <- data.frame(a = rnorm(n), b = rnorm(n), g = factor(sample(letters[1:4], n, TRUE)))
  y <- x$a + (x$g == "b") + rnorm(n)
  yk <- factor(sample(c("u", "v", "w"), n, TRUE))
  for (k in 1:2) {
    yy <- if (k == 1L) y else yk
    m <- hb_quiet(x[1:300, ], yy[1:300], nrounds = 60L, learning_rate = 0.3, min_data_in_leaf = 5L,
                  valid = list(v = list(x = x[301:400, ], y = yy[301:400])), early_stopping_rounds = 3L)
    expect_lt(m$best_iteration, m$niter)
    tr <- hb_trees(m)
    per <- if (k == 1L) 1L else 3L
    inner <- tr[!tr$is_leaf & tr$tree <= m$best_iteration * per, ]  # a round's trees in a row
    g <- tapply(inner$gain, as.character(inner$feature), sum)
    imp <- hb_importance(m)
    expect_setequal(imp$feature, names(g))
    expect_equal(imp$gain, as.vector(g[imp$feature]), tolerance = 1e-12)
    all <- hb_importance(m, iteration = m$niter)
    inner_all <- tr[!tr$is_leaf, ]
    expect_identical(sum(all$splits), nrow(inner_all))
    expect_identical(hb_importance(m, iteration = Inf), all)
    expect_identical(sum(hb_importance(m, iteration = 1L)$splits), sum(!tr$is_leaf & tr$tree <= per))
  }
})

test_that("predict(iteration = ) past the model's iterations uses them all, whatever the number", {
  d <- gen_task(171, n = 300, task = "regression")
  m <- hb_quiet(d$x, d$y, nrounds = 6L)
  p <- predict(m, d$x)
  for (it in list(6L, 7, 1e10, Inf)) expect_identical(predict(m, d$x, iteration = it), p)
  expect_false(identical(predict(m, d$x, iteration = 5L), p))
  for (bad in list(0, 2.5, 7.5, -Inf, NA, "3", TRUE)) {
    expect_input_error(predict(m, d$x, iteration = bad), "`iteration` must be a whole number >= 1")
  }
})

test_that("evaluation log metrics equal plain-R metrics of predict(iteration = i)", {
  a <- api()
  # regression: rmse and mae on two validation sets
  d <- a$dr
  tr <- 1:1000; v1 <- 1001:1250; v2 <- 1251:1500
  m <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 12L, num_leaves = 8L, eval_metric = c("rmse", "mae"),
                valid = list(list(x = d$x[v1, ], y = d$y[v1]), list(x = d$x[v2, ], y = d$y[v2])))
  log <- m$evaluation_log
  expect_identical(names(log), c("iter", "valid_1_rmse", "valid_1_mae", "valid_2_rmse", "valid_2_mae"))
  expect_equal(log$iter, 1:12)
  for (i in 1:12) {
    p1 <- predict(m, d$x[v1, ], iteration = i)
    p2 <- predict(m, d$x[v2, ], iteration = i)
    expect_equal(log$valid_1_rmse[i], rmse(d$y[v1], p1), tolerance = TOL$metric)
    expect_equal(log$valid_1_mae[i], mae(d$y[v1], p1), tolerance = TOL$metric)
    expect_equal(log$valid_2_rmse[i], rmse(d$y[v2], p2), tolerance = TOL$metric)
    expect_equal(log$valid_2_mae[i], mae(d$y[v2], p2), tolerance = TOL$metric)
  }
  # binary: logloss, auc, error
  d <- a$db
  m <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 12L, num_leaves = 8L,
                eval_metric = c("logloss", "auc", "error"), valid = list(vv = list(x = d$x[v1, ], y = d$y[v1])))
  y01 <- as.numeric(d$y[v1] == levels(d$y)[2])
  for (i in 1:12) {
    p <- predict(m, d$x[v1, ], iteration = i)
    expect_equal(m$evaluation_log$vv_logloss[i], logloss(y01, p), tolerance = TOL$metric)
    expect_equal(m$evaluation_log$vv_auc[i], auc(y01, p), tolerance = TOL$metric)
    expect_equal(m$evaluation_log$vv_error[i], binary_error(y01, p), tolerance = TOL$metric)
  }
  # multiclass: multi_logloss, multi_error
  d <- a$dm
  m <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 8L, num_leaves = 6L,
                eval_metric = c("multi_logloss", "multi_error"), valid = list(list(x = d$x[v1, ], y = d$y[v1])))
  yk <- as.integer(d$y[v1])
  for (i in 1:8) {
    P <- predict(m, d$x[v1, ], iteration = i)
    expect_equal(m$evaluation_log$valid_1_multi_logloss[i], multi_logloss(yk, P), tolerance = TOL$metric)
    expect_equal(m$evaluation_log$valid_1_multi_error[i], multi_error(yk, P), tolerance = TOL$metric)
  }
})

test_that("early stopping: best_iteration is the best row of the log, and predict uses it", {
  a <- api()
  d <- a$dr
  tr <- 1:1000; v1 <- 1001:1250; v2 <- 1251:1500
  m <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 500L, num_leaves = 31L, learning_rate = 0.5,
                min_data_in_leaf = 5L, early_stopping_rounds = 5L,
                valid = list(a = list(x = d$x[v1, ], y = d$y[v1]), b = list(x = d$x[v2, ], y = d$y[v2])))
  log <- m$evaluation_log
  expect_lt(m$niter, 500L)                                   # it did stop early
  expect_equal(nrow(log), m$niter)
  best <- which.min(log$b_rmse)                               # first metric, LAST set
  expect_equal(m$best_iteration, best)
  expect_equal(m$best_score, log$b_rmse[best], tolerance = TOL$metric)
  expect_equal(m$niter, best + 5L)
  xv <- d$x[v2, ]
  expect_identical(predict(m, xv), predict(m, xv, iteration = best))
  expect_false(identical(predict(m, xv), predict(m, xv, iteration = m$niter)))

  # a metric to maximise: auc
  d <- a$db
  m <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 500L, num_leaves = 31L, learning_rate = 0.5,
                min_data_in_leaf = 5L, early_stopping_rounds = 4L, eval_metric = c("auc", "logloss"),
                valid = list(list(x = d$x[v1, ], y = d$y[v1])))
  expect_lt(m$niter, 500L)
  expect_equal(m$best_iteration, which.max(m$evaluation_log$valid_1_auc))
  expect_equal(m$niter, m$best_iteration + 4L)
})

test_that("nrounds = 1e9 with early stopping: the log grows as rounds complete, same model as 1000", {
  d <- gen_task(91, n = 900, task = "regression")
  tr <- 1:600; v <- 601:900
  fit <- function(nr) hb_quiet(d$x[tr, ], d$y[tr], nrounds = nr, learning_rate = 0.15,
                               num_leaves = 7L, seed = 1L, early_stopping_rounds = 10L,
                               valid = list(v = list(x = d$x[v, ], y = d$y[v])))
  # the evaluation log was a 1e9-row matrix allocated before the first round
  # (7.5 GB: an unclassed allocation error); the most R memory used since
  # the reset shows what was allocated
  before <- gc(reset = TRUE)
  big <- fit(1e9)
  after <- gc()
  expect_lt(after[2L, 6L] - before[2L, 2L], 200)             # Vcells max used, Mb
  ref <- fit(1000L)
  expect_gt(ref$niter, 64L)                                  # the log grew past its first block
  expect_lt(ref$niter, 1000L)                                # and early stopping ended the fit
  expect_identical(big$niter, ref$niter)
  expect_identical(big$best_iteration, ref$best_iteration)
  expect_identical(big$best_score, ref$best_score)
  expect_identical(big$evaluation_log, ref$evaluation_log)
  expect_identical(hb_trees(big), hb_trees(ref))
  expect_identical(predict(big, d$x[v, ], type = "raw"), predict(ref, d$x[v, ], type = "raw"))
  expect_equal(big$params$nrounds, 1e9)
  # the log holds every round, each equal to the metric recomputed in R
  log <- big$evaluation_log
  expect_equal(nrow(log), big$niter)
  for (i in c(1L, 64L, 65L, big$niter)) {
    expect_equal(log$v_rmse[i], rmse(d$y[v], predict(big, d$x[v, ], iteration = i)), tolerance = TOL$metric)
  }
})

test_that("the formula interface equals the x / y interface", {
  a <- api()
  df <- cbind(a$dr$x, target = a$dr$y)
  m1 <- hb_quiet(target ~ ., data = df, nrounds = 8L, num_leaves = 8L, seed = 2L)
  m2 <- hb_quiet(a$dr$x, a$dr$y, nrounds = 8L, num_leaves = 8L, seed = 2L)
  expect_identical(m1$feature_names, m2$feature_names)
  expect_identical(predict(m1, df), predict(m2, a$dr$x))
  m3 <- hb_quiet(target ~ x1 + f1 + x3, data = df, nrounds = 8L, seed = 2L)
  m4 <- hb_quiet(a$dr$x[, c("x1", "f1", "x3")], a$dr$y, nrounds = 8L, seed = 2L)
  expect_identical(m3$feature_names, c("x1", "f1", "x3"))
  expect_identical(unname(m3$feature_types[match("f1", m3$feature_names)]), "categorical")
  expect_identical(predict(m3, df), predict(m4, a$dr$x))
  # binary factor response through the formula
  dfb <- cbind(a$db$x, cls = a$db$y)
  mb1 <- hb_quiet(cls ~ ., data = dfb, nrounds = 5L, seed = 3L)
  mb2 <- hb_quiet(a$db$x, a$db$y, nrounds = 5L, seed = 3L)
  expect_identical(predict(mb1, dfb, type = "class"), predict(mb2, a$db$x, type = "class"))
  expect_identical(predict(mb1, dfb), predict(mb2, a$db$x))
})

test_that("an hb_dataset reused for several fits gives the same models as raw input", {
  a <- api()
  d <- a$db
  tr <- 1:1000; va <- 1001:1500
  ds <- hb_dataset(d$x[tr, ], d$y[tr])
  expect_s3_class(ds, "hb_dataset")
  expect_equal(ds$nrow, 1000L)
  expect_equal(ds$ncol, ncol(d$x))
  for (nl in c(4L, 12L)) {
    m1 <- histboost(ds, nrounds = 6L, num_leaves = nl, seed = 4L, verbose = 0L)
    m2 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 6L, num_leaves = nl, seed = 4L)
    expect_identical(predict(m1, d$x, type = "raw"), predict(m2, d$x, type = "raw"))
  }
  # a validation hb_dataset binned with the training boundaries = a list(x, y)
  dv <- hb_dataset(d$x[va, ], d$y[va], reference = ds)
  m3 <- histboost(ds, nrounds = 6L, seed = 4L, verbose = 0L, valid = list(v = dv))
  m4 <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 6L, seed = 4L,
                 valid = list(v = list(x = d$x[va, ], y = d$y[va])))
  expect_equal(m3$evaluation_log, m4$evaluation_log, tolerance = TOL$exact)
  # a dataset saved and reloaded has a dead pointer: an input error
  f <- tempfile(fileext = ".rds")
  saveRDS(ds, f)
  expect_error(histboost(readRDS(f), nrounds = 2L, verbose = 0L), class = "histboost_error_input")
  unlink(f)
})

test_that("y decides the task: logical, numeric 0/1 with objective binary, empty levels", {
  set.seed(95)
  x <- data.frame(a = rnorm(300), b = rnorm(300))
  yl <- x$a + rnorm(300, sd = 0.5) > 0
  ml <- hb_quiet(x, yl, nrounds = 5L, seed = 1L)
  expect_identical(ml$task, "binary")
  expect_identical(ml$classes, c("FALSE", "TRUE"))
  mn <- hb_quiet(x, as.numeric(yl), objective = "binary", nrounds = 5L, seed = 1L)
  expect_identical(mn$task, "binary")
  mf <- hb_quiet(x, factor(yl), nrounds = 5L, seed = 1L)
  expect_identical(predict(ml, x), predict(mf, x))
  expect_identical(predict(mn, x, type = "raw"), predict(mf, x, type = "raw"))
  # a level with no rows is dropped, with a warning
  y3 <- factor(c("a", "b", "c")[1 + (x$a > 0) + (x$b > 0.5)], levels = c("a", "b", "c", "zzz"))
  expect_warning(m3 <- hb_quiet(x, y3, nrounds = 3L), class = "histboost_warning")
  expect_identical(m3$classes, c("a", "b", "c"))
  expect_equal(ncol(predict(m3, x)), 3L)
})

test_that("a constant response: every prediction is that constant", {
  x <- data.frame(a = rnorm(100), b = rnorm(100))
  expect_warning(m <- hb_quiet(x, rep(2.5, 100), nrounds = 5L), class = "histboost_warning")  # nothing to split
  expect_equal(unname(predict(m, x)), rep(2.5, 100), tolerance = 1e-12)
})

test_that("print and summary report the model", {
  a <- api()
  expect_output(print(a$mr), "regression")
  expect_output(print(a$mr), "20")
  s <- summary(a$mb)
  expect_s3_class(s, "summary.histboost")
  expect_output(print(s), "binary")
})

test_that("hb_threads is a positive integer", {
  expect_true(is.numeric(hb_threads()) && length(hb_threads()) == 1L && hb_threads() >= 1)
})

test_that("hb_importance by cover: for unweighted squared error, the rows that reached the feature's splits", {
  d <- gen_task(95, n = 700, task = "regression", factors = 1)
  m <- hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 8L, min_data_in_leaf = 10L)
  # the rows reaching each split, counted by routing the training rows: a
  # node's rows are those whose leaf lies in its subtree
  tr <- hb_trees(m)
  leaves <- predict(m, d$x, type = "leaf")
  want <- numeric()
  for (t in unique(tr$tree)) {
    nodes <- tr[tr$tree == t, ]
    kids <- function(id) {
      r <- nodes[nodes$id == id, ]
      if (r$is_leaf) as.integer(sub("L", "", id)) else c(kids(r$left), kids(r$right))
    }
    for (k in which(!nodes$is_leaf)) {
      f <- nodes$feature[k]
      want[f] <- (if (is.na(want[f])) 0 else want[f]) + sum(leaves[, t] %in% kids(nodes$id[k]))
    }
  }
  imp <- hb_importance(m, type = "cover")
  expect_equal(imp$cover, unname(want[imp$feature]), tolerance = 1e-9)
  expect_false(is.unsorted(rev(imp$cover)))
  expect_equal(imp$fraction, imp$cover / sum(imp$cover), tolerance = 1e-12)
})

test_that("hb_trees() gives the starting score the leaves add to: start + leaf values = the raw prediction", {
  d <- gen_task(637, n = 300, task = "regression")
  y <- d$y + 20
  fit <- hb_quiet(d$x, y, nrounds = 4L, num_leaves = 5L)
  tr <- hb_trees(fit)
  start <- attr(tr, "init_score")
  expect_equal(start, mean(y), tolerance = 1e-12)
  lf <- predict(fit, d$x, type = "leaf")  # rows x trees, 0-based leaf numbers
  leafsum <- function(tr, lf) {
    rowSums(sapply(seq_len(ncol(lf)), function(t) {
      tt <- tr[tr$tree == t & tr$is_leaf, ]
      tt$value[match(paste0("L", lf[, t]), tt$id)]
    }))
  }
  expect_equal(start + leafsum(tr, lf), predict(fit, d$x, type = "raw"), tolerance = 1e-12)
  expect_identical(attr(hb_trees(hb_quiet(d$x, y, nrounds = 2L, boost_from_average = FALSE)), "init_score"), 0)
  m <- gen_task(638, n = 300, task = "multiclass", K = 3)
  fm <- hb_quiet(m$x, m$y, nrounds = 2L, num_leaves = 4L)
  sm <- attr(hb_trees(fm), "init_score")
  expect_identical(names(sm), levels(m$y))
  expect_equal(unname(sm), log(as.numeric(table(m$y)) / 300), tolerance = 1e-12)
  # predict() beyond the model's iterations uses all of them, as lightgbm's num_iteration
  expect_identical(predict(fit, d$x, iteration = 40L), predict(fit, d$x))
  # fitted() on a model from hb_load() says the file keeps no fitted values
  kf <- hb_quiet(d$x, y, nrounds = 2L, keep_fitted = TRUE)
  f <- tempfile()
  hb_save(kf, f)
  expect_input_error(fitted(hb_load(f)), "read by hb_load\\(\\) has no fitted values")
})
