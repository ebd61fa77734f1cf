# Categorical splits against lightgbm itself: the same categories on the
# left (and the same gain) where the best split is unambiguous, whole trees
# with leaves of fewer than 100 rows, and test accuracy on data shaped like
# small real tables with factors (a few hundred rows of 10-level factors
# with NAs; a few thousand rows with 40 factors).

skip_if_not_installed("lightgbm")

lgb_codes <- function(x) {
  as.matrix(data.frame(lapply(x, function(v) if (is.factor(v)) as.integer(v) - 1L else v)))
}

lgb_model <- function(x, y, params, nrounds = 1L, objective = "regression") {
  cats <- names(x)[vapply(x, is.factor, TRUE)]
  ds <- lightgbm::lgb.Dataset(lgb_codes(x), label = y, categorical_feature = if (length(cats)) cats,
                              params = list(min_data_in_bin = 1L, max_bin = 255L, verbose = -1L))
  p <- c(list(objective = objective, verbose = -1L, num_threads = 2L, seed = 1L, min_data_in_bin = 1L), params)
  lightgbm::lgb.train(params = p, data = ds, nrounds = nrounds)
}

# The splits of lightgbm's tree k (in the order they were made): feature and
# the levels on the left (categorical) or the threshold.
lgb_splits <- function(m, x, k = 1L) {
  dt <- as.data.frame(lightgbm::lgb.model.dt.tree(m))
  dt <- dt[dt$tree_index == k - 1L & !is.na(dt$split_index), ]
  dt <- dt[order(dt$split_index), ]
  lapply(seq_len(nrow(dt)), function(i) {
    f <- as.character(dt$split_feature[i])
    if (is.factor(x[[f]])) {
      codes <- as.integer(strsplit(as.character(dt$threshold[i]), "||", fixed = TRUE)[[1]])
      list(feature = f, left = sort(levels(x[[f]])[codes + 1L]), gain = dt$split_gain[i])
    } else {
      list(feature = f, threshold = as.numeric(dt$threshold[i]), gain = dt$split_gain[i])
    }
  })
}

hb_splits <- function(m, k = 1L) {
  tr <- hb_trees(m)
  tr <- tr[tr$tree == k & !tr$is_leaf, ]
  tr <- tr[order(as.integer(sub("N", "", tr$id))), ]
  lapply(seq_len(nrow(tr)), function(i) {
    if (tr$split_type[i] == "categorical") {
      list(feature = tr$feature[i], left = sort(strsplit(tr$categories[i], "||", fixed = TRUE)[[1]]), gain = tr$gain[i])
    } else {
      list(feature = tr$feature[i], threshold = tr$threshold[i], gain = tr$gain[i])
    }
  })
}

# The levels of feature f among the rows of x that reach node `id` of tree k
# of a model whose splits are all categorical (routed in plain R).
node_levels <- function(m, x, k, id, f) {
  tr <- hb_trees(m)
  tr <- tr[tr$tree == k, ]
  reach <- vapply(seq_len(nrow(x)), function(i) {
    node <- "N0"
    repeat {
      if (node == id) return(TRUE)
      r <- tr[tr$id == node, ]
      if (r$is_leaf) return(FALSE)
      v <- x[[r$feature]][i]
      left <- if (is.na(v)) r$default_left else as.character(v) %in% strsplit(r$categories, "||", fixed = TRUE)[[1]]
      node <- if (left) r$left else r$right
    }
  }, TRUE)
  sort(unique(as.character(x[[f]][reach])))
}

# hb's split i of tree k names lightgbm's partition: the same levels on the
# left, or (a tie: a set from one end of the scan and its complement from the
# other have the same gain, and rounding picks) the complement among the
# node's levels.
same_partition <- function(hb, lg, m, x, k) {
  if (identical(hb$left, lg$left)) return(TRUE)
  id <- paste0("N", which(vapply(hb_splits(m, k), identical, TRUE, hb)) - 1L)
  present <- node_levels(m, x, k, id[1], hb$feature)
  identical(hb$left, sort(setdiff(present, lg$left)))
}

hb_model <- function(x, y, params, nrounds = 1L) {
  do.call(histboost, c(list(x = x, y = y, nrounds = nrounds, verbose = 0L, nthreads = 2L), params))
}

test_that("the root split of a 3-, 4-, 10- and 300-level factor is lightgbm's: same categories on the left, same gain", {
  set.seed(42)
  p1 <- list(num_leaves = 2L, learning_rate = 1)
  cases <- list()
  x3 <- factor(sample(c("a", "b", "c"), 600, TRUE))
  cases$three <- list(x = x3, y = ifelse(x3 == "b", 1, 0) + 0.3 * (x3 == "a") + rnorm(600, sd = 0.2), p = list())
  x4 <- factor(sample(c("a", "b", "c", "d"), 600, TRUE))
  cases$four <- list(x = x4, y = ifelse(x4 %in% c("a", "c"), 1, -1) + rnorm(600, sd = 0.2),
                     p = list(min_data_per_group = 10L))
  x10 <- factor(sample(paste0("L", 1:10), 300, TRUE), levels = paste0("L", 1:10))
  cases$ten <- list(x = x10, y = ifelse(x10 %in% c("L2", "L5", "L7", "L9"), 2, 0) + rnorm(300, sd = 0.3), p = list())
  cases$ten_small <- list(x = x10, y = cases$ten$y, p = list(cat_smooth = 1, min_data_per_group = 5L, cat_l2 = 1))
  # 300 levels: the ten signal levels are the most frequent (histboost bins a
  # factor 255 levels to an internal feature, most frequent first)
  lv <- paste0("F", 1:300)
  x300 <- factor(c(rep(lv[1:10], each = 60), sample(lv[11:300], 11600, TRUE)), levels = lv)
  cases$three_hundred <- list(x = x300, y = ifelse(as.integer(x300) <= 10, 3, 0) + rnorm(12200, sd = 0.5), p = list())
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    x <- data.frame(f = cs$x)
    lg <- lgb_splits(lgb_model(x, cs$y, c(p1, cs$p)), x)
    hbm <- hb_model(x, cs$y, c(p1, cs$p))
    hb <- hb_splits(hbm)
    expect_length(lg, 1L)
    expect_length(hb, 1L)
    expect_true(same_partition(hb[[1]], lg[[1]], hbm, x, 1L), label = paste(nm, "left categories"))
    expect_equal(hb[[1]]$gain, lg[[1]]$gain, tolerance = 1e-5, label = paste(nm, "gain"))
  }
})

test_that("whole trees with leaves of fewer than 100 rows split the factors as lightgbm does", {
  set.seed(5)
  n <- 400
  x <- data.frame(a = factor(sample(paste0("A", 1:10), n, TRUE), levels = paste0("A", 1:10)),
                  b = factor(sample(paste0("B", 1:12), n, TRUE, prob = 12:1), levels = paste0("B", 1:12)))
  ea <- c(3, -2, 0, 1.5, -1, 2.5, -3, 0.5, 1, -1.5)
  eb <- seq(-2.2, 2.2, length.out = 12)[sample(12)]
  y <- ea[as.integer(x$a)] + eb[as.integer(x$b)] + rnorm(n, sd = 0.2)
  p <- list(num_leaves = 8L, learning_rate = 0.5, min_data_in_leaf = 5L, min_data_per_group = 5L, cat_smooth = 5,
            cat_l2 = 1, max_cat_threshold = 8L)
  lgm <- lgb_model(x, y, p, nrounds = 3L)
  hbm <- hb_model(x, y, p, nrounds = 3L)
  small <- 0L
  for (k in 1:3) {
    lg <- lgb_splits(lgm, x, k)
    hb <- hb_splits(hbm, k)
    expect_equal(length(hb), length(lg), label = paste("tree", k, "splits"))
    for (i in seq_len(min(length(hb), length(lg)))) {
      expect_identical(hb[[i]]$feature, lg[[i]]$feature, label = paste("tree", k, "split", i, "feature"))
      expect_true(same_partition(hb[[i]], lg[[i]], hbm, x, k), label = paste("tree", k, "split", i, "categories"))
      expect_equal(hb[[i]]$gain, lg[[i]]$gain, tolerance = 1e-4, label = paste("tree", k, "split", i, "gain"))
    }
    tr <- hb_trees(hbm)
    small <- small + sum(tr$tree == k & !tr$is_leaf & tr$count < 100)
  }
  expect_gt(small, 3L)   # several of those splits are of leaves under 100 rows
  expect_equal(predict(hbm, x), predict(lgm, lgb_codes(x)), tolerance = 1e-4)
})

# A few hundred rows of p K-level factors with NAs, a binary label.
gen_small_factors <- function(seed, n = 699, K = 10, p = 9) {
  set.seed(seed)
  x <- list()
  s <- 0
  for (j in seq_len(p)) {
    lv <- sample(seq_len(K), n, TRUE, prob = rexp(K) + 0.2)
    x[[j]] <- factor(paste0("v", lv), levels = paste0("v", seq_len(K)))
    s <- s + rnorm(K)[lv]
  }
  x <- as.data.frame(x, col.names = paste0("f", seq_len(p)))
  x$f6[sample(n, 16)] <- NA
  x$f2[sample(n, 30)] <- NA
  list(x = x, y = runif(n) < plogis(1.2 * s))
}

# A few thousand rows, 40 factors of 2-25 levels (some with NAs), two numbers.
gen_many_factors <- function(seed, n = 2930, p = 40) {
  set.seed(seed)
  x <- list()
  s <- 0
  for (j in seq_len(p)) {
    K <- sample(c(2:12, 15, 25), 1)
    lv <- sample(seq_len(K), n, TRUE, prob = rexp(K)^2 + 0.02)
    x[[j]] <- factor(paste0("c", lv), levels = paste0("c", seq_len(K)))
    s <- s + rnorm(K, sd = if (j <= 10) 0.6 else 0.1)[lv]
    if (j %% 7 == 0) x[[j]][sample(n, round(n * 0.05))] <- NA
  }
  x <- as.data.frame(x, col.names = paste0("f", seq_len(p)))
  x$area <- rlnorm(n, 7, 0.4)
  x$year <- sample(1900:2010, n, TRUE)
  list(x = x, y = 12 + s + 0.5 * log(x$area) + 0.004 * (x$year - 1950) + rnorm(n, sd = 0.3))
}

auc <- function(p, y) {
  r <- rank(p)
  n1 <- sum(y)
  (sum(r[y]) - n1 * (n1 + 1) / 2) / (n1 * (length(y) - n1))
}

test_that("rare levels share the missing bin, as lightgbm bins them (its default min_data_in_bin = 3)", {
  # car90's Rim (levels of 46, 34, 20, 2, 2 and 1 rows): kept apart, its 7
  # bins were too many for a one-hot split and its 100 rows too few for a
  # many-vs-many one, so it never split; lightgbm keeps 3 levels and splits.
  # 250 / 140 / 7 / 3 rows: the last level is under 1% once the others hold
  # 99%, so it joins the missing bin too.
  cases <- list(rim = c(46, 34, 20, 2, 2, 1), tail = c(250, 140, 7, 3), mixed = c(60, 30, 12, 9, 4, 2, 2, 1, 1))
  kept_want <- list(rim = c("L1", "L2", "L3"), tail = c("L1", "L2", "L3"), mixed = c("L1", "L2", "L3", "L4", "L5"))
  for (nm in names(cases)) {
    cnt <- cases[[nm]]
    set.seed(which(names(cases) == nm))
    lv <- paste0("L", seq_along(cnt))
    f <- factor(sample(rep(lv, cnt)), levels = lv)
    if (nm == "mixed") f[sample(length(f), 6)] <- NA
    y <- rnorm(length(cnt), sd = 2)[as.integer(f)] + rnorm(length(f))
    y[is.na(y)] <- 1 + rnorm(sum(is.na(y)))
    x <- data.frame(f = f)
    # plain R's reading of LightGBM's rule, against the counts written out above
    expect_identical(ref_kept_levels(f), kept_want[[nm]], label = nm)
    # (mixed: 6 bins on 121 rows split only one-vs-rest: too few rows for many-vs-many)
    m <- hb_quiet(x, y, nrounds = 20L, num_leaves = 7L, learning_rate = 0.1, min_data_in_leaf = 5L, nthreads = 2L,
                  max_cat_to_onehot = if (nm == "mixed") 8L else 4L)
    expect_gt(sum(!hb_trees(m)$is_leaf), 0L, label = paste(nm, "splits"))
    # the levels left out and NA share one bin: every tree sends them to the same leaf
    out <- setdiff(lv, kept_want[[nm]])
    probe <- data.frame(f = factor(c(NA, out), levels = lv))
    leaves <- predict(m, probe, type = "leaf")
    for (i in seq_along(out) + 1L) expect_identical(leaves[i, ], leaves[1L, ], label = paste(nm, out[i - 1L]))
    # the dataset's bin codes: a bin for each kept level, one more for the rest and NA
    if (exists("C_hb_dataset_bins", envir = asNamespace("histboost"), inherits = FALSE)) {
      b <- histboost:::.hb_dataset_bins(hb_dataset(x, y))[, 1]
      key <- ifelse(is.na(f) | !(as.character(f) %in% kept_want[[nm]]), "<other>", as.character(f))
      expect_equal(unname(rowSums(table(key, b) > 0)), rep(1, length(unique(key))), label = paste(nm, "bins"))
      expect_identical(length(unique(b)), length(unique(key)), label = paste(nm, "bins"))
    }
  }
  # Rim splits now, and its root split is lightgbm's (L1 alone, the same gain)
  cnt <- cases$rim
  set.seed(1)
  f <- factor(sample(rep(paste0("L", 1:6), cnt)), levels = paste0("L", 1:6))
  y <- rnorm(6, sd = 2)[as.integer(f)] + rnorm(length(f))
  x <- data.frame(f = f)
  m <- hb_quiet(x, y, nrounds = 1L, num_leaves = 2L, learning_rate = 0.1, min_data_in_leaf = 5L, nthreads = 2L)
  ds <- lightgbm::lgb.Dataset(lgb_codes(x), label = y, categorical_feature = "f",
                              params = list(max_bin = 255L, verbose = -1L))
  lg <- lightgbm::lgb.train(params = list(objective = "regression", verbose = -1L, num_threads = 2L, num_leaves = 2L,
                                          learning_rate = 0.1, min_data_in_leaf = 5L), data = ds, nrounds = 1L)
  hs <- hb_splits(m)
  ls <- lgb_splits(lg, x)
  expect_length(hs, 1L)
  expect_identical(hs[[1]]$left, ls[[1]]$left)
  expect_equal(hs[[1]]$gain, ls[[1]]$gain, tolerance = 1e-6)
})

test_that("small data with factors: mean test AUC over 10 splits no lower than lightgbm's minus 0.005", {
  p <- list(learning_rate = 0.05, num_leaves = 15L, min_data_in_leaf = 10L)
  res <- vapply(1:10, function(s) {
    d <- gen_small_factors(s)
    set.seed(100 + s)
    tr <- sample(nrow(d$x), round(0.7 * nrow(d$x)))
    hb <- hb_model(d$x[tr, ], factor(d$y[tr]), p, nrounds = 200L)
    ph <- predict(hb, d$x[-tr, ])
    lg <- lgb_model(d$x[tr, ], as.numeric(d$y[tr]), p, nrounds = 200L, objective = "binary")
    pl <- predict(lg, lgb_codes(d$x[-tr, ]))
    c(hb = auc(ph, d$y[-tr]), lgb = auc(pl, d$y[-tr]))
  }, c(hb = 0, lgb = 0))
  m <- rowMeans(res)
  expect_gte(m[["hb"]], m[["lgb"]] - 0.005)
})

test_that("many factors: mean test RMSE over 10 splits at most 1% above lightgbm's", {
  p <- list(learning_rate = 0.05, num_leaves = 15L, min_data_in_leaf = 10L)
  res <- vapply(1:10, function(s) {
    d <- gen_many_factors(s)
    set.seed(100 + s)
    tr <- sample(nrow(d$x), round(0.7 * nrow(d$x)))
    hb <- hb_model(d$x[tr, ], d$y[tr], p, nrounds = 300L)
    lg <- lgb_model(d$x[tr, ], d$y[tr], p, nrounds = 300L)
    c(hb = sqrt(mean((predict(hb, d$x[-tr, ]) - d$y[-tr])^2)),
      lgb = sqrt(mean((predict(lg, lgb_codes(d$x[-tr, ])) - d$y[-tr])^2)))
  }, c(hb = 0, lgb = 0))
  m <- rowMeans(res)
  expect_lte(m[["hb"]], 1.01 * m[["lgb"]])
})
