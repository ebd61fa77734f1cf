# Learning to rank (objective = "lambdarank"). The gradients are checked
# against LightGBM's lambdarank loop written out in plain R below and run on
# every order of each query's tied rows (the expectation histboost promises),
# a first and a second tree's leaves against -G / (H + lambda_l2) of those,
# the logged NDCG@k and MAP@k against their definitions in plain R, and whole
# trainings and the MAP of their scores against lightgbm's.

# ---- plain-R references -------------------------------------------------------

# All permutations of 1..m, one a row.
ref_perms <- function(m) {
  if (m == 1L) return(matrix(1L))
  p <- ref_perms(m - 1L)
  do.call(rbind, lapply(seq_len(m), function(i) cbind(i, ifelse(p >= i, p + 1L, p))))
}
ref_disc <- function(p0) 1 / log2(2 + p0)  # the discount at 0-based position p0

# LightGBM's GetGradientsForOneQuery on one order `ord` of a query (rows
# ordered by score, ties in that order), before normalisation.
ref_lgb_pairs <- function(lab, s, ord, inv, trunc, norm, gain) {
  m <- length(lab)
  lam <- hes <- numeric(m)
  total <- 0
  use_norm <- norm && s[ord[1]] != s[ord[m]]
  for (i in seq_len(min(m - 1L, trunc))) {
    for (j in (i + 1L):m) {
      a <- ord[i]; b <- ord[j]
      if (lab[a] == lab[b]) next
      if (lab[a] > lab[b]) { hi <- a; lo <- b; ph <- i; pl <- j } else { hi <- b; lo <- a; ph <- j; pl <- i }
      ds <- s[hi] - s[lo]
      delta <- (gain[lab[hi] + 1] - gain[lab[lo] + 1]) * abs(ref_disc(ph - 1) - ref_disc(pl - 1)) * inv
      if (use_norm) delta <- delta / (0.01 + abs(ds))
      p <- 1 / (1 + exp(ds))
      l <- -p * delta
      h <- p * (1 - p) * delta
      lam[lo] <- lam[lo] - l; lam[hi] <- lam[hi] + l
      hes[lo] <- hes[lo] + h; hes[hi] <- hes[hi] + h
      total <- total - 2 * l
    }
  }
  list(lam = lam, hes = hes, total = total)
}

# Gradients and hessians of every row: LightGBM's loop averaged over the
# orders of tied rows, then normalised. Queries of up to 6 rows.
ref_rank_grad <- function(label, group, score, trunc = 30L, norm = TRUE, gain = 2^(0:30) - 1) {
  g <- h <- numeric(length(label))
  for (rows in split(seq_along(label), group)) {
    lab <- label[rows]; s <- score[rows]; m <- length(rows)
    top <- sort(lab, decreasing = TRUE)[seq_len(min(trunc, m))]
    maxdcg <- sum(gain[top + 1] * ref_disc(seq_along(top) - 1))
    if (m < 2 || maxdcg <= 0) next
    P <- ref_perms(m)
    P <- P[apply(P, 1, function(o) all(diff(s[o]) <= 0)), , drop = FALSE]
    acc <- list(lam = numeric(m), hes = numeric(m), total = 0)
    for (r in seq_len(nrow(P))) {
      one <- ref_lgb_pairs(lab, s, P[r, ], 1 / maxdcg, trunc, norm, gain)
      acc <- Map(`+`, acc, one)
    }
    acc <- lapply(acc, `/`, nrow(P))
    f <- if (norm && acc$total > 0) log2(1 + acc$total) / acc$total else 1
    g[rows] <- acc$lam * f
    h[rows] <- acc$hes * f
  }
  cbind(g = g, h = h)
}

# NDCG@k of one order (LightGBM's metric); 1 when the ideal DCG is 0.
ref_ndcg_order <- function(lab, ord, k, gain) {
  top <- seq_len(min(k, length(lab)))
  idcg <- sum(gain[sort(lab, decreasing = TRUE)[top] + 1] * ref_disc(top - 1))
  if (idcg <= 0) return(1)
  sum(gain[lab[ord][top] + 1] * ref_disc(top - 1)) / idcg
}

# Mean NDCG@k over queries (weighted by their rows' mean weight), each the
# mean over the orders of its tied rows: by enumeration (queries of up to 7
# rows) or, for larger ones, by the closed form (each tied row gets its
# block's mean discount, 0 beyond k).
ref_ndcg <- function(label, group, score, k, weights = NULL, gain = 2^(0:30) - 1, enumerate = TRUE) {
  w <- if (is.null(weights)) rep(1, length(label)) else weights
  vals <- vapply(split(seq_along(label), group), function(rows) {
    lab <- label[rows]; s <- score[rows]; m <- length(rows)
    if (enumerate) {
      P <- ref_perms(m)
      P <- P[apply(P, 1, function(o) all(diff(s[o]) <= 0)), , drop = FALSE]
      return(mean(apply(P, 1, function(o) ref_ndcg_order(lab, o, k, gain))))
    }
    top <- seq_len(min(k, m))
    idcg <- sum(gain[sort(lab, decreasing = TRUE)[top] + 1] * ref_disc(top - 1))
    if (idcg <= 0) return(1)
    o <- order(-s)
    d <- ifelse(seq_len(m) <= k, ref_disc(seq_len(m) - 1), 0)
    blockd <- ave(d, s[o])  # the mean discount of each tie block
    sum(gain[lab[o] + 1] * blockd) / idcg
  }, 0)
  qw <- vapply(split(w, group), mean, 0)
  sum(qw * vals) / sum(qw)
}

# AP@k of one order of a query (LightGBM's map_metric.hpp): a row is
# relevant when its grade is > 0; 1 when none is.
ref_ap_order <- function(lab, ord, k) {
  R <- sum(lab > 0)
  if (R == 0) return(1)
  top <- seq_len(min(k, length(lab)))
  rel <- lab[ord][top] > 0
  sum(rel * cumsum(rel) / top) / min(k, R)
}

# Mean MAP@k over queries (weighted by their rows' mean weight), each the
# mean of AP@k over the orders of its tied rows, enumerated (a query with
# ties may have up to 7 rows; one without has a single order).
ref_map <- function(label, group, score, k, weights = NULL) {
  w <- if (is.null(weights)) rep(1, length(label)) else weights
  vals <- vapply(split(seq_along(label), group), function(rows) {
    lab <- label[rows]; s <- score[rows]
    if (!anyDuplicated(s)) return(ref_ap_order(lab, order(-s), k))
    stopifnot(length(rows) <= 7L)  # enumerable
    P <- ref_perms(length(rows))
    P <- P[apply(P, 1, function(o) all(diff(s[o]) <= 0)), , drop = FALSE]
    mean(apply(P, 1, function(o) ref_ap_order(lab, o, k)))
  }, 0)
  qw <- vapply(split(w, group), mean, 0)
  sum(qw * vals) / sum(qw)
}

# Small queries (2 to `maxq` rows), continuous features, grades 0..3 from
# the first two features, some queries with all grades equal.
rank_data <- function(seed, nq = 150, minq = 2, maxq = 5, p = 3) {
  set.seed(seed)
  sizes <- sample(minq:maxq, nq, replace = TRUE)
  qid <- rep(seq_len(nq), sizes)
  n <- length(qid)
  X <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("f", seq_len(p))))
  rel <- X[, 1] + 0.5 * X[, 2] + rnorm(n, sd = 0.7)
  y <- findInterval(rel, c(-0.5, 0.5, 1.5))
  flat <- qid %in% sample(nq, 10)
  y[flat] <- 1L  # queries whose grades are all equal: no pairs
  list(x = as.data.frame(X), y = y, group = qid)
}

leaf_values <- function(fit, tree) {
  tab <- hb_trees(fit)
  tab <- tab[tab$tree == tree & tab$is_leaf, ]
  stats::setNames(tab$value, sub("^L", "", tab$id))
}

# ---- gradients ------------------------------------------------------------------

test_that("gradients and hessians equal LightGBM's loop averaged over tied orders (truncation, norm, gains)", {
  set.seed(11)
  n <- 60
  group <- rep(1:14, length.out = n)[sample(n)]  # queries of 4 or 5 rows, not contiguous
  label <- sample(0:3, n, replace = TRUE)
  label[group == 3] <- 2  # all equal
  score <- round(rnorm(n), 1)  # many ties
  score[group == 5] <- 0.3  # one query all tied
  cases <- list(list(trunc = 30L, norm = TRUE), list(trunc = 2L, norm = TRUE), list(trunc = 30L, norm = FALSE),
                list(trunc = 1L, norm = FALSE))
  for (cs in cases) {
    got <- histboost:::.hb_rank_gradients(label, group, score, cs$trunc, cs$norm)
    want <- ref_rank_grad(label, group, score, cs$trunc, cs$norm)
    expect_equal(unname(got), unname(want), tolerance = 1e-12,
                 label = sprintf("truncation %d, norm %s", cs$trunc, cs$norm))
    expect_true(all(got[group == 3, ] == 0))  # equal grades: no pairs, zero gradient and hessian
  }
  gain <- c(0, 1, 1, 7)  # two grades of equal gain
  expect_equal(unname(histboost:::.hb_rank_gradients(label, group, score, 3L, TRUE, gain)),
               unname(ref_rank_grad(label, group, score, 3L, TRUE, gain)), tolerance = 1e-12)
  # without ties, the same as LightGBM's loop on the one order (no averaging)
  s2 <- rnorm(n)
  expect_equal(unname(histboost:::.hb_rank_gradients(label, group, s2, 4L, TRUE)),
               unname(ref_rank_grad(label, group, s2, 4L, TRUE)), tolerance = 1e-12)
  # the gradients do not depend on the row order or the query ids' spelling
  perm <- sample(n)
  shuffled <- histboost:::.hb_rank_gradients(label[perm], paste0("q", group[perm]), score[perm])
  expect_equal(shuffled[order(perm), ], histboost:::.hb_rank_gradients(label, group, score), tolerance = 1e-15)
})

test_that("a first and a second tree's leaves are -G / (H + lambda_l2) of the reference gradients", {
  d <- rank_data(21)
  lr <- 0.5
  fit <- hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 2L, num_leaves = 4L,
                  min_data_in_leaf = 15L, lambda_l2 = 2, learning_rate = lr, lambdarank_truncation_level = 3L,
                  seed = 1)
  expect_identical(fit$task, "ranking")
  expect_null(fit$classes)
  for (t in 1:2) {
    s <- if (t == 1) rep(0, length(d$y)) else predict(fit, d$x, type = "raw", iteration = 1L)
    if (t == 2) expect_gt(length(unique(s)), 2L)  # ties within leaves: the averaged case
    gh <- ref_rank_grad(d$y, d$group, s, trunc = 3L)
    leaf <- predict(fit, d$x, type = "leaf")[, t]
    want <- -lr * tapply(gh[, "g"], leaf, sum) / (tapply(gh[, "h"], leaf, sum) + 2)
    got <- leaf_values(fit, t)[names(want)]
    expect_gt(length(want), 2L)
    expect_equal(unname(got), unname(as.vector(want)), tolerance = 1e-9, label = paste("tree", t, "leaves"))
  }
  # ranking scores start at 0: the raw score is the sum of the trees
  expect_equal(predict(fit, d$x), unname(rowSums(sapply(1:2, function(t) leaf_values(fit, t)[
    as.character(predict(fit, d$x, type = "leaf")[, t])]))), tolerance = 1e-12)
  expect_identical(predict(fit, d$x), predict(fit, d$x, type = "raw"))
})

test_that("with an init_score, the first tree fits the gradients at those starting scores", {
  d <- rank_data(22)
  set.seed(5)
  s0 <- round(rnorm(length(d$y)), 1)  # offsets with ties inside queries
  fit <- hb_quiet(d$x, d$y, group = d$group, init_score = s0, objective = "lambdarank", nrounds = 1L,
                  num_leaves = 4L, min_data_in_leaf = 15L, lambda_l2 = 1, learning_rate = 1, seed = 1)
  gh <- ref_rank_grad(d$y, d$group, s0)
  leaf <- predict(fit, d$x, type = "leaf")[, 1]
  want <- -tapply(gh[, "g"], leaf, sum) / (tapply(gh[, "h"], leaf, sum) + 1)
  expect_equal(unname(leaf_values(fit, 1)[names(want)]), unname(as.vector(want)), tolerance = 1e-9)
  expect_equal(predict(fit, d$x, init_score = s0), s0 + as.vector(want)[match(leaf, as.integer(names(want)))],
               tolerance = 1e-12)
})

# ---- the metric and early stopping ------------------------------------------------

test_that("logged ndcg@k equals NDCG@k in plain R (ties averaged, weights per query); early stopping maximises it", {
  d <- rank_data(31, nq = 220, maxq = 6)
  tr <- d$group <= 160
  w <- runif(sum(!tr), 0.5, 2)
  fit <- hb_quiet(d$x[tr, ], d$y[tr], group = d$group[tr], objective = "lambdarank", nrounds = 60L,
                  eval_at = c(2, 4), learning_rate = 0.1, num_leaves = 7L, seed = 3,
                  valid = list(te = list(x = d$x[!tr, ], y = d$y[!tr], group = d$group[!tr], weights = w)),
                  early_stopping_rounds = 6L)
  log <- fit$evaluation_log
  expect_named(log, c("iter", "te_ndcg@2", "te_ndcg@4"))
  for (it in c(1L, 3L, nrow(log))) {
    s <- predict(fit, d$x[!tr, ], type = "raw", iteration = it)
    for (k in c(2L, 4L)) {
      expect_equal(log[[paste0("te_ndcg@", k)]][it], ref_ndcg(d$y[!tr], d$group[!tr], s, k, w),
                   tolerance = 1e-12, label = sprintf("ndcg@%d at iteration %d", k, it))
    }
  }
  # the closed form agrees with the enumeration (the reference used for large queries)
  s <- round(predict(fit, d$x[!tr, ], type = "raw"), 2)
  expect_equal(ref_ndcg(d$y[!tr], d$group[!tr], s, 3, w, enumerate = FALSE), ref_ndcg(d$y[!tr], d$group[!tr], s, 3, w),
               tolerance = 1e-12)
  # higher is better: the best iteration is the first maximum of ndcg@2, and training stopped 6 rounds after it
  # (learning rate 0.1: at 0.3 the first round was already the best, or nearly, on this draw)
  expect_identical(fit$best_iteration, which.max(log[["te_ndcg@2"]]))
  expect_identical(nrow(log), min(60L, fit$best_iteration + 6L))
  expect_lt(fit$best_iteration, 60L)
  expect_gt(max(log[["te_ndcg@2"]]), log[["te_ndcg@2"]][1])
  # "ndcg@k" named directly, and a query of grades with gain 0 counts as 1
  fit2 <- hb_quiet(d$x[tr, ], d$y[tr], group = d$group[tr], objective = "lambdarank", nrounds = 3L,
                   eval_metric = "ndcg@1", label_gain = c(0, 0, 1, 3), seed = 3,
                   valid = list(list(x = d$x[!tr, ], y = d$y[!tr], group = d$group[!tr])))
  s <- predict(fit2, d$x[!tr, ], type = "raw")
  expect_equal(fit2$evaluation_log[["valid_1_ndcg@1"]][3],
               ref_ndcg(d$y[!tr], d$group[!tr], s, 1, gain = c(0, 0, 1, 3)), tolerance = 1e-12)
  expect_identical(fit2$params$label_gain, c(0, 0, 1, 3))
})

test_that("logged map@k equals MAP@k in plain R on training and validation sets; early stopping maximises it", {
  d <- rank_data(32, nq = 220, maxq = 6)
  d$y[d$group %in% c(5, 17, 170, 190, 201)] <- 0L  # queries with no relevant row: AP 1
  tr <- d$group <= 160
  set.seed(4)
  w <- runif(sum(!tr), 0.5, 2)
  train <- list(x = d$x[tr, ], y = d$y[tr], group = d$group[tr])
  test <- list(x = d$x[!tr, ], y = d$y[!tr], group = d$group[!tr], weights = w)
  fit <- hb_quiet(train$x, train$y, group = train$group, objective = "lambdarank", nrounds = 60L,
                  eval_metric = "map", eval_at = c(3, 1, 6), learning_rate = 0.3, num_leaves = 7L, seed = 3,
                  valid = list(tr = train, te = test), early_stopping_rounds = 5L)
  log <- fit$evaluation_log
  expect_named(log, c("iter", paste0(rep(c("tr_", "te_"), each = 3), "map@", c(3, 1, 6))))
  for (it in c(1L, 2L, nrow(log))) {
    for (set in c("tr", "te")) {
      ds <- if (set == "tr") train else test
      s <- predict(fit, ds$x, type = "raw", iteration = it)
      if (it == 1L) expect_true(any(tapply(s, ds$group, anyDuplicated) > 0))  # ties: averaged over their orders
      for (k in c(1L, 3L, 6L)) {
        expect_equal(log[[sprintf("%s_map@%d", set, k)]][it], ref_map(ds$y, ds$group, s, k, ds$weights),
                     tolerance = 1e-12, label = sprintf("%s map@%d at iteration %d", set, k, it))
      }
    }
  }
  # higher is better: the best iteration is the first maximum of the last set's map@3, 5 rounds before the end
  expect_identical(fit$best_iteration, which.max(log[["te_map@3"]]))
  expect_identical(nrow(log), min(60L, fit$best_iteration + 5L))
  expect_lt(fit$best_iteration, 60L)
  expect_gt(max(log[["te_map@3"]]), log[["te_map@3"]][1])
  expect_identical(fit$best_score, max(log[["te_map@3"]]))
  # "map@k" named directly beside ndcg; the row order of a set does not change either
  perm <- sample(sum(!tr))
  shuf <- list(x = test$x[perm, ], y = test$y[perm], group = paste0("q", test$group[perm]), weights = w[perm])
  fit2 <- hb_quiet(train$x, train$y, group = train$group, objective = "lambdarank", nrounds = 3L,
                   eval_metric = c("map@2", "ndcg"), eval_at = c(1, 3), seed = 3, valid = list(te = test, sh = shuf))
  log2 <- fit2$evaluation_log
  expect_named(log2, c("iter", "te_map@2", "te_ndcg@1", "te_ndcg@3", "sh_map@2", "sh_ndcg@1", "sh_ndcg@3"))
  s <- predict(fit2, test$x, type = "raw")
  expect_equal(log2[["te_map@2"]][3], ref_map(test$y, test$group, s, 2, w), tolerance = 1e-12)
  expect_equal(log2[["te_ndcg@3"]][3], ref_ndcg(test$y, test$group, s, 3, w), tolerance = 1e-12)
  expect_equal(log2[["sh_map@2"]], log2[["te_map@2"]], tolerance = 1e-14)
  expect_equal(log2[["sh_ndcg@1"]], log2[["te_ndcg@1"]], tolerance = 1e-14)
  expect_identical(fit2$params$eval_metric, c("map@2", "ndcg@1", "ndcg@3"))
  # the metric and its cut-offs survive saving
  path <- tempfile(fileext = ".txt")
  on.exit(unlink(path))
  back <- hb_load(hb_save(fit, path))
  expect_identical(back$params$eval_metric, c("map@3", "map@1", "map@6"))
  # the engine's metric, through the test hook, equals the reference too (unweighted, map@4)
  expect_equal(histboost:::.hb_rank_metric(test$y, test$group, s, "map", 4L), ref_map(test$y, test$group, s, 4),
               tolerance = 1e-12)
})

# ---- invariances --------------------------------------------------------------------

test_that("the model does not depend on the order of the rows, the query ids' type or the thread count", {
  d <- rank_data(41, nq = 300, minq = 3, maxq = 12, p = 4)
  args <- list(objective = "lambdarank", nrounds = 15L, num_leaves = 8L, learning_rate = 0.2, seed = 5,
               min_data_in_leaf = 10L)
  base <- do.call(hb_quiet, c(list(d$x, d$y, group = d$group), args))
  # every row shuffled, queries interleaved and their rows reordered; ids as text
  perm <- sample(length(d$y))
  shuf <- do.call(hb_quiet, c(list(d$x[perm, ], d$y[perm], group = paste0("query-", d$group[perm])), args))
  expect_equal(predict(shuf, d$x), predict(base, d$x), tolerance = 1e-10)
  tb <- hb_trees(base)
  ts <- hb_trees(shuf)
  expect_identical(ts$feature, tb$feature)
  expect_equal(ts$threshold, tb$threshold)
  # factor ids
  fac <- do.call(hb_quiet, c(list(d$x, d$y, group = factor(d$group)), args))
  expect_identical(predict(fac, d$x), predict(base, d$x))
  # thread count: the same model text
  one <- do.call(hb_quiet, c(list(d$x, d$y, group = d$group, nthreads = 1L), args))
  three <- do.call(hb_quiet, c(list(d$x, d$y, group = d$group, nthreads = 3L), args))
  expect_identical(one$model_text, three$model_text)
  expect_identical(one$model_text, base$model_text)
})

# ---- saving ---------------------------------------------------------------------------

test_that("a ranking model saves and loads; other models' texts carry no ranking keys", {
  d <- rank_data(51)
  fit <- hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 5L, seed = 2,
                  lambdarank_truncation_level = 7L, lambdarank_norm = FALSE, label_gain = c(0, 1, 3, 7, 15),
                  valid = list(v = list(x = d$x, y = d$y, group = d$group)))
  path <- tempfile(fileext = ".txt")
  on.exit(unlink(path))
  hb_save(fit, path)
  back <- hb_load(path)
  expect_identical(back$model_text, fit$model_text)
  expect_identical(predict(back, d$x), predict(fit, d$x))
  expect_identical(back$task, "ranking")
  expect_identical(back$params[c("lambdarank_truncation_level", "lambdarank_norm", "label_gain")],
                   list(lambdarank_truncation_level = 7L, lambdarank_norm = FALSE, label_gain = c(0, 1, 3, 7, 15)))
  expect_identical(back$params$eval_metric, c("ndcg@1", "ndcg@3", "ndcg@5"))
  rds <- tempfile(fileext = ".rds")
  on.exit(unlink(rds), add = TRUE)
  saveRDS(fit, rds)
  expect_identical(predict(readRDS(rds), d$x), predict(fit, d$x))
  txt <- fit$model_text
  expect_match(txt, "objective=lambdarank\n", fixed = TRUE)
  expect_match(txt, "label_gain=0 1 3 7 15\n", fixed = TRUE)
  expect_match(txt, "lambdarank_truncation_level=7\nlambdarank_norm=0\n", fixed = TRUE)
  reg <- hb_quiet(d$x, as.numeric(d$y), nrounds = 2L, seed = 1)
  expect_false(grepl("lambdarank|label_gain", reg$model_text))
  expect_null(reg$params$label_gain)
  # contributions of a ranking model sum to its scores
  phi <- predict(fit, d$x[1:20, ], type = "contrib")
  expect_equal(rowSums(phi), predict(fit, d$x[1:20, ], type = "raw"), tolerance = 1e-10)
})

test_that("init_model continues a ranking model with its own ranking loss", {
  d <- rank_data(53)
  fit <- function(...) hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", seed = 2,
                                lambdarank_truncation_level = 4L, lambdarank_norm = FALSE,
                                label_gain = c(0, 1, 3, 7), ...)
  base <- fit(nrounds = 4L)
  # the same loss: one longer training
  expect_equal(predict(fit(nrounds = 3L, init_model = base), d$x), predict(fit(nrounds = 7L), d$x),
               tolerance = 1e-12)
  # another loss would mix two: refused, for each of the three parameters
  err <- function(expr, arg) {
    expect_error(expr, class = "histboost_error_input", regexp = paste0("`", arg, "`.*differs from `init_model`'s"))
  }
  cont <- function(...) hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", seed = 2, nrounds = 2L,
                                 init_model = base, ...)
  err(cont(lambdarank_norm = FALSE, label_gain = c(0, 1, 3, 7)), "lambdarank_truncation_level")
  err(cont(lambdarank_truncation_level = 4L, label_gain = c(0, 1, 3, 7)), "lambdarank_norm")
  err(cont(lambdarank_truncation_level = 4L, lambdarank_norm = FALSE), "label_gain")
})

# ---- cross-validation -----------------------------------------------------------------

test_that("hb_cv() with a group holds out whole queries and refuses folds that split one", {
  d <- rank_data(61, nq = 90, maxq = 8)
  set.seed(9)
  cv <- hb_cv(d$x, d$y, group = d$group, objective = "lambdarank", nfold = 4L, nrounds = 8L, verbose = 0,
              eval_at = 3, seed = 1)
  fold_of <- integer(length(d$y))
  for (k in seq_along(cv$folds)) fold_of[cv$folds[[k]]] <- k
  expect_true(all(fold_of > 0L))
  expect_true(all(tapply(fold_of, d$group, function(f) length(unique(f))) == 1L))
  expect_identical(sort(unlist(cv$folds)), seq_along(d$y))
  expect_named(cv$evaluation_log, c("iter", "test_ndcg@3_mean", "test_ndcg@3_sd"))
  # each fold's last metric is the NDCG@3 of its model's out-of-fold scores
  fits <- hb_cv(d$x, d$y, group = d$group, objective = "lambdarank", folds = cv$folds, nrounds = 8L,
                verbose = 0, eval_at = 3, seed = 1, keep_models = TRUE)
  means <- mean(vapply(seq_along(cv$folds), function(k) {
    te <- cv$folds[[k]]
    ref_ndcg(d$y[te], d$group[te], predict(fits$models[[k]], d$x[te, ]), 3)
  }, 0))
  expect_equal(fits$evaluation_log[["test_ndcg@3_mean"]][8], means, tolerance = 1e-12)
  expect_equal(fits$pred[cv$folds[[1]]], predict(fits$models[[1]], d$x[cv$folds[[1]], ]))
  bad <- list(which(d$group == 1)[1], which(d$group == 2))
  expect_error(hb_cv(d$x, d$y, group = d$group, objective = "lambdarank", folds = bad, nrounds = 2L, verbose = 0),
               class = "histboost_error_input", regexp = "`folds` split query 1 of `group`")
})

test_that("hb_cv() logs map@k of the out-of-fold scores and stops early on it", {
  d <- rank_data(64, nq = 150, minq = 3, maxq = 7)
  d$y <- pmax(d$y - 1L, 0L)  # a third of the rows relevant, so that map@2 has room to rise
  set.seed(3)
  folds <- split(seq_along(d$y), sample(rep(1:3, length.out = 150))[d$group])
  fits <- hb_cv(d$x, d$y, group = d$group, objective = "lambdarank", folds = folds, nrounds = 6L, verbose = 0,
                eval_metric = "map", eval_at = c(2, 4), seed = 1, keep_models = TRUE)
  expect_named(fits$evaluation_log, c("iter", "test_map@2_mean", "test_map@2_sd", "test_map@4_mean", "test_map@4_sd"))
  for (k in c(2L, 4L)) {
    per_fold <- vapply(seq_along(folds), function(f) {
      te <- folds[[f]]
      ref_map(d$y[te], d$group[te], predict(fits$models[[f]], d$x[te, ], type = "raw"), k)
    }, 0)
    expect_equal(fits$evaluation_log[[sprintf("test_map@%d_mean", k)]][6], mean(per_fold), tolerance = 1e-12)
    expect_equal(fits$evaluation_log[[sprintf("test_map@%d_sd", k)]][6], sqrt(mean((per_fold - mean(per_fold))^2)),
                 tolerance = 1e-10)  # (over the folds' count, as lgb.cv() and xgb.cv())
  }
  es <- hb_cv(d$x, d$y, group = d$group, objective = "lambdarank", folds = folds, nrounds = 80L, verbose = 0,
              eval_metric = "map@2", learning_rate = 0.3, seed = 1, early_stopping_rounds = 3L)
  m <- es$evaluation_log[["test_map@2_mean"]]
  # stopped on map@2: three rounds past its best mean over the folds (the first best, for ties),
  # long before nrounds (map@2 of these few queries peaks within a few rounds, at which one
  # depends on the trees' details)
  expect_identical(es$best_iteration, which.max(m))
  expect_identical(length(m), es$best_iteration + 3L)
  expect_lt(length(m), 40L)
})

# ---- input checks -----------------------------------------------------------------------

test_that("bad ranking input is a classed error naming the argument", {
  d <- rank_data(71, nq = 30)
  rank_err <- function(regexp, ..., x = d$x, y = d$y) {
    expect_error(hb_quiet(x, y, objective = "lambdarank", nrounds = 1L, ...), class = "histboost_error_input",
                 regexp = regexp)
  }
  rank_err("needs `group`, the query of each row")
  rank_err("`group` has 5 values but `x` has", group = 1:5)
  g <- d$group
  g[7] <- NA
  rank_err("`group` contains 1 missing query ids \\(first at position 7\\)", group = g)
  rank_err("`group` must be a vector of query ids", group = as.list(d$group))
  y <- d$y
  y[4] <- -1
  rank_err("`y` must hold relevance grades, whole numbers >= 0.*`y\\[4\\]` is -1", group = d$group, y = y)
  y[4] <- 1.5
  rank_err("`y\\[4\\]` is 1.5", group = d$group, y = y)
  y[4] <- 5
  rank_err("`y\\[4\\]` is 5, beyond `label_gain`, which has 4 values", group = d$group, y = y, label_gain = c(0, 1, 3, 7))
  rank_err("categorical", group = d$group, y = factor(d$y))
  rank_err("`label_gain` must be NULL or the gains", group = d$group, label_gain = c(3, 1, 0))
  rank_err("`eval_at` must be distinct whole numbers >= 1", group = d$group, eval_at = c(0, 2))
  rank_err("`lambdarank_truncation_level` must be a whole number >= 1", group = d$group,
           lambdarank_truncation_level = 0)
  rank_err("`lambdarank_norm` must be", group = d$group, lambdarank_norm = NA)
  rank_err("`eval_metric` \"ndcg@0\" must be \"ndcg\"", group = d$group, eval_metric = "ndcg@0")
  rank_err("`eval_metric` \"map@0\" must be \"map\" \\(at each of `eval_at`\\) or \"map@k\"", group = d$group,
           eval_metric = "map@0")
  rank_err("`eval_metric` \"map@x\" must be \"map\"", group = d$group, eval_metric = c("ndcg", "map@x"))
  rank_err("`eval_metric` \"map@\" must be \"map\"", group = d$group, eval_metric = "map@")
  rank_err("`eval_metric` \"map@2.5\" must be \"map\"", group = d$group, eval_metric = "map@2.5")
  rank_err("`eval_metric` \"maps\" is unknown.*ndcg.*map", group = d$group, eval_metric = "maps")
  rank_err("does not suit the lambdarank objective", group = d$group, eval_metric = "rmse")
  rank_err("`valid` set \"v\" needs `group` for ranking", group = d$group, valid = list(v = list(x = d$x, y = d$y)))
  vy <- d$y
  vy[2] <- 40
  expect_error(hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 1L,
                        valid = list(v = list(x = d$x, y = vy, group = d$group))),
               class = "histboost_error_input", regexp = "ranking labels must be whole numbers from 0 to 30")
  expect_error(hb_quiet(d$x, d$y, group = d$group, nrounds = 1L), class = "histboost_error_input",
               regexp = "`group` is used only for ranking: give objective = \"lambdarank\"")
  # map without lambdarank, and a cut-off on a metric that takes none
  for (m in c("map", "map@3")) {
    expect_error(hb_quiet(d$x, as.numeric(d$y), nrounds = 1L, eval_metric = m), class = "histboost_error_input",
                 regexp = paste0("`eval_metric` \"", m, "\" does not suit the regression objective"))
  }
  expect_error(hb_quiet(d$x, d$y > 1, nrounds = 1L, eval_metric = "map"), class = "histboost_error_input",
               regexp = "does not suit the binary objective")
  expect_error(hb_quiet(d$x, as.numeric(d$y), nrounds = 1L, eval_metric = "rmse@3"), class = "histboost_error_input",
               regexp = "only \"ndcg\" and \"map\" take a cut-off @k")
  expect_error(hb_cv(d$x, d$y, group = d$group, objective = "lambdarank", nfold = 2L, nrounds = 1L, verbose = 0,
                     eval_metric = "map@0"), class = "histboost_error_input", regexp = "\"map@0\" must be \"map\"")
  expect_error(histboost:::.hb_rank_metric(d$y, d$group, numeric(length(d$y)), "map", 0L),
               class = "histboost_error_input", regexp = "map@k needs k >= 1")
  expect_error(hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 1L, eval_metric = "ndcg",
                        valid = list(v = list(x = d$x, y = d$y, group = d$group[-1]))),
               class = "histboost_error_input", regexp = "`group` has 79|`group` has")
  ds <- hb_dataset(d$x, d$y, group = d$group)
  expect_error(hb_quiet(ds, objective = "lambdarank", group = d$group, nrounds = 1L),
               class = "histboost_error_input", regexp = "`group` must not be given when `x` is an hb_dataset")
  # an hb_dataset carries its group, validation sets too
  dv <- hb_dataset(d$x, d$y, group = d$group, reference = ds)
  a <- hb_quiet(ds, objective = "lambdarank", nrounds = 3L, seed = 1, valid = list(v = dv))
  b <- hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 3L, seed = 1,
                valid = list(v = list(x = d$x, y = d$y, group = d$group)))
  expect_identical(predict(a, d$x), predict(b, d$x))
  expect_identical(a$evaluation_log, b$evaluation_log)
  expect_error(predict(a, d$x, type = "class"), class = "histboost_error_input", regexp = "this one is a ranking")
})

test_that("device = \"auto\" trains a ranking model on the GPU when there is one, else on the CPU", {
  d <- rank_data(81, nq = 40)
  auto <- hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 3L, device = "auto", seed = 1)
  cpu <- hb_quiet(d$x, d$y, group = d$group, objective = "lambdarank", nrounds = 3L, device = "cpu", seed = 1)
  gpu <- hb_device_info()$available
  expect_identical(auto$params$device, if (gpu) "cuda" else "cpu")
  # the GPU's fixed-point refit sums put its leaves within 1e-12 of the CPU's (test-cuda.R)
  if (gpu) expect_equal(predict(auto, d$x), predict(cpu, d$x), tolerance = 1e-9)
  else expect_identical(predict(auto, d$x), predict(cpu, d$x))
})

# ---- lightgbm ---------------------------------------------------------------------------

test_that("test NDCG is close to lightgbm's lambdarank on generated data", {
  skip_if_not_installed("lightgbm", minimum_version = "4.0.0")
  set.seed(91)
  nq <- 400
  sizes <- sample(10:40, nq, replace = TRUE)
  qid <- rep(seq_len(nq), sizes)
  n <- length(qid)
  X <- matrix(rnorm(n * 6), n, 6, dimnames = list(NULL, paste0("f", 1:6)))
  rel <- X[, 1] + 0.7 * X[, 2] * X[, 3] + 0.5 * sin(2 * X[, 4]) + rnorm(n, sd = 0.6)
  y <- findInterval(rel, c(0, 0.8, 1.6, 2.4))
  tr <- qid <= 300
  par <- list(learning_rate = 0.1, num_leaves = 15L, min_data_in_leaf = 20L)
  fit <- do.call(hb_quiet, c(list(X[tr, ], y[tr], group = qid[tr], objective = "lambdarank", nrounds = 60L,
                                  seed = 1), par))
  dtr <- lightgbm::lgb.Dataset(X[tr, ], label = y[tr], group = as.integer(table(qid[tr])))
  lgb <- lightgbm::lgb.train(c(list(objective = "lambdarank", num_threads = 2L, verbose = -1L, seed = 1L,
                                    deterministic = TRUE), par), dtr, nrounds = 60L)
  for (k in c(5L, 10L)) {
    ours <- ref_ndcg(y[!tr], qid[!tr], predict(fit, X[!tr, ]), k, enumerate = FALSE)
    theirs <- ref_ndcg(y[!tr], qid[!tr], predict(lgb, X[!tr, ]), k, enumerate = FALSE)
    none <- ref_ndcg(y[!tr], qid[!tr], rep(0, sum(!tr)), k, enumerate = FALSE)
    expect_gt(ours, none + 0.1)  # it learned
    expect_lt(abs(ours - theirs), 0.02, label = sprintf("ndcg@%d: histboost %.4f, lightgbm %.4f", k, ours, theirs))
  }
})

test_that("map@k equals lightgbm's map on the same scores (weighted queries, a query with no relevant row)", {
  skip_if_not_installed("lightgbm", minimum_version = "4.0.0")
  set.seed(92)
  nq <- 120
  sizes <- sample(3:30, nq, replace = TRUE)
  qid <- rep(seq_len(nq), sizes)
  n <- length(qid)
  X <- matrix(rnorm(n * 2), n, 2)
  y <- findInterval(X[, 1] + rnorm(n), c(0.8, 1.8))
  y[qid %in% c(3, 50)] <- 0L  # no relevant row: 1 in both
  w <- runif(n, 0.5, 2)
  # scores to rank by, distinct within every query: lightgbm orders tied rows as its sort leaves them, where
  # histboost averages over the orders, so the two agree only without ties
  s <- rank(X[, 1] + rnorm(n), ties.method = "first") / 100
  # lightgbm logs map@k of its validation set's init_score plus one tree whose leaves, times a learning rate
  # of 1e-10, cannot reorder scores 0.01 apart
  cnt <- as.integer(table(qid))
  dtr <- lightgbm::lgb.Dataset(X, label = y, group = cnt)
  dw <- lightgbm::lgb.Dataset.create.valid(dtr, X, label = y, group = cnt, weight = w, init_score = s)
  du <- lightgbm::lgb.Dataset.create.valid(dtr, X, label = y, group = cnt, init_score = s)
  lgb <- lightgbm::lgb.train(list(objective = "lambdarank", metric = "map", eval_at = c(1L, 3L, 10L, 40L),
                                  learning_rate = 1e-10, num_threads = 2L, verbose = -1L, seed = 1L),
                             dtr, nrounds = 1L, valids = list(w = dw, u = du), record = TRUE)
  for (k in c(1L, 3L, 10L, 40L)) {
    theirs <- unlist(lgb$record_evals$u[[paste0("map@", k)]]$eval)
    expect_length(theirs, 1L)
    ours <- histboost:::.hb_rank_metric(y, qid, s, "map", k)
    expect_equal(ours, theirs, tolerance = 1e-12, label = sprintf("map@%d", k))
    expect_equal(ours, ref_map(y, qid, s, k), tolerance = 1e-12)
    # weighted: lightgbm keeps the queries' mean weights as floats (a relative error near 1e-8)
    ours <- histboost:::.hb_rank_metric(y, qid, s, "map", k, weights = w)
    expect_equal(ours, unlist(lgb$record_evals$w[[paste0("map@", k)]]$eval), tolerance = 1e-7,
                 label = sprintf("weighted map@%d", k))
    expect_equal(ours, ref_map(y, qid, s, k, w), tolerance = 1e-12)
    expect_gt(abs(ours - theirs), 1e-4)  # the weights matter
  }
  expect_gt(histboost:::.hb_rank_metric(y, qid, s, "map", 3L), histboost:::.hb_rank_metric(y, qid, -s, "map", 3L))
})

test_that("LightGBM's forms for ranking get messages that say what histboost takes", {
  set.seed(51)
  x <- matrix(rnorm(200 * 3), 200)
  y <- sample(0:3, 200, TRUE)
  # query sizes (they sum to the rows) instead of one id a row
  expect_input_error(histboost(x, y, objective = "lambdarank", group = rep(10, 20), verbose = 0),
                     "`group` has 20 values summing to the 200 rows of `x`: the queries' sizes.*rep\\(seq_along\\(sizes\\), sizes\\)")
  m1 <- hb_quiet(x, y, objective = "lambdarank", group = rep(seq_along(rep(10, 20)), rep(10, 20)), nrounds = 2L)
  expect_identical(m1$task, "ranking")
  # sizes that do not sum to the rows: the usual length message
  expect_input_error(histboost(x, y, objective = "lambdarank", group = rep(10, 19), verbose = 0), "`group` has 19 values")
  # LightGBM's other ranking objective, under any of its names and in params
  for (o in c("rank_xendcg", "xendcg")) {
    expect_input_error(histboost(x, y, objective = o, group = rep(1:20, each = 10), verbose = 0),
                       paste0("\"", o, "\" has no histboost equivalent; for ranking, histboost has objective = \"lambdarank\""))
  }
  expect_input_error(histboost(x, y, params = list(objective = "rank_xendcg"), group = rep(1:20, each = 10), verbose = 0),
                     "no histboost equivalent; for ranking")
})
