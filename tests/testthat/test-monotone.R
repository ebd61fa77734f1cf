# Monotone constraints (LightGBM's "basic" method): predictions move one way
# along each constrained column on data where an unconstrained model does
# not; the first tree is the one a brute-force constrained leaf-wise search
# in plain R grows; all-zero constraints change nothing; the model keeps
# them; the argument is checked; and lightgbm with the same constraints
# reaches about the same test error.

# y rises in `a` where b < 0.5 and falls where not (on average it rises),
# falls in `b` apart from a wave: a tree that splits on a and then on b
# overshoots unless the split on a bounds its subtrees. `a` has 5% NAs.
mono_data <- function(seed, n = 3000) {
  set.seed(seed)
  a <- runif(n)
  b <- runif(n)
  f <- factor(sample(c("p", "q", "r"), n, TRUE))
  z <- runif(n)
  y <- 0.5 * sin(6 * a) + a * ifelse(b < 0.5, 3, -2) - 1.5 * cos(5 * b) - 2 * b + 0.5 * as.integer(f) +
    rnorm(n, sd = 0.2)
  a[sample.int(n, n %/% 20)] <- NA
  list(x = data.frame(a = a, b = b, f = f, z = z), y = y)
}
MONO <- c(a = 1, b = -1)

# The smallest step dir * (p(v[k + 1]) - p(v[k])) of the raw predictions
# (each class's for multiclass) as column `col` runs over a grid from -Inf
# through the data's range to Inf, the other columns of `rows` held fixed.
# >= 0: monotone that way. (A missing value is not on the grid: it goes
# wherever each tree sent the missing values and is not ordered.)
worst_step <- function(fit, x, col, dir, rows = seq_len(150)) {
  grid <- c(-Inf, seq(-0.1, 1.1, length.out = 81), Inf)
  nd <- x[rep(rows, each = length(grid)), , drop = FALSE]
  nd[[col]] <- rep(grid, length(rows))
  p <- as.matrix(predict(fit, nd, type = "raw"))
  min(vapply(seq_len(ncol(p)), function(k) min(dir * diff(matrix(p[, k], nrow = length(grid)))), 0))
}

test_that("regression, binary and multiclass predictions are monotone in each constrained column", {
  d <- mono_data(1)
  ys <- list(regression = d$y, binary = factor(d$y > stats::median(d$y)),
             multiclass = cut(d$y, stats::quantile(d$y, 0:3 / 3), include.lowest = TRUE))
  for (task in names(ys)) {
    free <- hb_quiet(d$x, ys[[task]], nrounds = 30L, seed = 1)
    con <- hb_quiet(d$x, ys[[task]], nrounds = 30L, seed = 1, monotone_constraints = MONO)
    expect_identical(con$task, task)
    # the data pulls the free model the wrong way, so the checks below can fail
    expect_lt(worst_step(free, d$x, "a", 1), -0.01, label = paste(task, "free model in a"))
    expect_gte(worst_step(con, d$x, "a", 1), 0, label = paste(task, "in a"))
    expect_gte(worst_step(con, d$x, "b", -1), 0, label = paste(task, "in b"))
    expect_lt(worst_step(con, d$x, "z", 1), 0, label = paste(task, "free column z"))
  }
})

test_that("bagging, feature sampling, goss, rf, quantized training and regularization keep them", {
  d <- mono_data(2)
  variants <- list(
    bagged = list(bagging_fraction = 0.6, bagging_freq = 1L, feature_fraction = 0.75),
    goss = list(goss = TRUE, learning_rate = 0.3),
    rf = list(boosting = "rf", bagging_fraction = 0.6, bagging_freq = 1L),
    quantized = list(quantized = TRUE),
    quantized_norefit = list(quantized = TRUE, refit_leaves = FALSE, grad_bits = 3L),
    regularized = list(lambda_l1 = 1, lambda_l2 = 5, max_depth = 4L, min_gain_to_split = 0.01)
  )
  for (v in names(variants)) {
    args <- c(list(d$x, d$y, nrounds = 25L, seed = 3, monotone_constraints = MONO), variants[[v]])
    con <- do.call(hb_quiet, args)
    expect_gte(worst_step(con, d$x, "a", 1), 0, label = paste(v, "in a"))
    expect_gte(worst_step(con, d$x, "b", -1), 0, label = paste(v, "in b"))
    args$monotone_constraints <- NULL
    expect_lt(worst_step(do.call(hb_quiet, args), d$x, "a", 1), 0, label = paste(v, "free model in a"))
  }
})

test_that("all-zero constraints are no constraints: the same trees and text", {
  d <- mono_data(3, n = 1500)
  for (extra in list(list(), list(quantized = TRUE), list(bagging_fraction = 0.7, bagging_freq = 1L))) {
    a <- do.call(hb_quiet, c(list(d$x, d$y, nrounds = 10L, seed = 4), extra))
    b <- do.call(hb_quiet, c(list(d$x, d$y, nrounds = 10L, seed = 4, monotone_constraints = rep(0, 4)), extra))
    c0 <- do.call(hb_quiet, c(list(d$x, d$y, nrounds = 10L, seed = 4, monotone_constraints = c(z = 0)), extra))
    expect_identical(hb_trees(b), hb_trees(a))
    expect_identical(b$model_text, a$model_text)
    expect_identical(c0$model_text, a$model_text)
    expect_null(b$params$monotone_constraints)
  }
})

test_that("constrained models are the same for one thread and two (the parallel feature scan too)", {
  set.seed(10)
  n <- 4000
  x <- data.frame(matrix(runif(n * 70), n))  # >= 64 features: the root's scan runs in parallel
  y <- sin(6 * x[[1]]) + x[[1]] * ifelse(x[[2]] < 0.5, 3, -2) + rnorm(n, sd = 0.2)
  for (q in c(FALSE, TRUE)) {
    fits <- lapply(1:2, function(t) hb_quiet(x, y, nrounds = 8L, seed = 1, nthreads = t, quantized = q,
                                             monotone_constraints = c(X1 = 1, X2 = -1)))
    expect_identical(fits[[1]]$model_text, fits[[2]]$model_text)
  }
})

# ---- brute force -----------------------------------------------------------

# A leaf-wise tree grown by LightGBM's basic method, every candidate tried:
# for numeric columns X (every distinct value its own bin) each threshold
# between consecutive values of the whole column, with the leaf's missing
# rows right then left, then values left and missing right; without missing
# rows in the leaf, missing follows the larger side. A side's output is
# -G / (H + l2) clamped to the leaf's [lo, hi]; a constrained column's
# candidate whose outputs go against it is refused; a side is worth
# -(2 G o + (H + l2) o^2) at its output o, less the parent's G^2 / (H + l2).
# After a split on a constrained column the midpoint of the two outputs caps
# one child and floors the other. Returns the splits in order and each row's
# leaf value, with counts of refused candidates and clamped leaves. With
# skip = TRUE (skip_unsplittable, LightGBM's rule) a column in which a leaf
# found no valid candidate is not tried in its subtree.
ref_mono_tree <- function(X, g, h, mono, num_leaves, min_data, l2, skip = FALSE) {
  vals <- lapply(X, function(v) sort(unique(v[!is.na(v)])))
  clamp <- function(o, lo, hi) min(max(o, lo), hi)
  worth <- function(G, H, o) -(2 * G * o + (H + l2) * o^2)
  refused <- 0L
  find <- function(rows, lo, hi, allowed = seq_along(X)) {
    G <- sum(g[rows]); H <- sum(h[rows]); n <- length(rows)
    best <- NULL
    valid <- integer(0)
    try_split <- function(j, left) {
      nl <- sum(left)
      if (nl < min_data || n - nl < min_data) return()
      GL <- sum(g[rows[left]]); HL <- sum(h[rows[left]])
      ol <- clamp(-GL / (HL + l2), lo, hi)
      or <- clamp(-(G - GL) / (H - HL + l2), lo, hi)
      if ((mono[j] > 0 && ol > or) || (mono[j] < 0 && ol < or)) {
        refused <<- refused + 1L
        return()
      }
      gain <- worth(GL, HL, ol) + worth(G - GL, H - HL, or) - G^2 / (H + l2)
      if (gain > 0) valid <<- union(valid, j)
      if (gain > 0 && (is.null(best) || gain > best$gain)) {
        best <<- list(feature = j, gain = gain, left = rows[left], right = rows[!left], out = c(ol, or))
      }
    }
    for (j in allowed) {
      x <- X[[j]][rows]
      miss <- is.na(x)
      for (t in seq_len(length(vals[[j]]) - 1L)) {
        le <- !miss & x <= vals[[j]][t]
        try_split(j, le)
        if (any(miss)) try_split(j, le | miss)
      }
      if (any(miss)) try_split(j, !miss)
    }
    list(best = best, valid = sort(valid))
  }
  leaves <- list(list(rows = seq_along(g), lo = -Inf, hi = Inf, value = NA))
  root <- find(seq_along(g), -Inf, Inf)
  best <- list(root$best)
  ok <- list(root$valid)
  splits <- list()
  clamped <- 0L
  while (length(leaves) < num_leaves) {
    gains <- vapply(best, function(b) if (is.null(b)) -Inf else b$gain, 0)
    if (all(gains == -Inf)) break
    l <- which.max(gains)
    s <- best[[l]]
    lo <- leaves[[l]]$lo; hi <- leaves[[l]]$hi
    b <- rbind(c(lo, hi), c(lo, hi))      # the children's bounds
    if (mono[s$feature] != 0) {
      mid <- mean(s$out)
      if (mono[s$feature] > 0) { b[1, 2] <- min(hi, mid); b[2, 1] <- max(lo, mid) }
      else { b[1, 1] <- max(lo, mid); b[2, 2] <- min(hi, mid) }
    }
    r <- length(leaves) + 1L
    sides <- list(s$left, s$right)
    parent_ok <- ok[[l]]
    for (k in 1:2) {
      i <- if (k == 1L) l else r
      leaves[[i]] <- list(rows = sides[[k]], lo = b[k, 1], hi = b[k, 2], value = clamp(s$out[k], b[k, 1], b[k, 2]))
      unclamped <- -sum(g[sides[[k]]]) / (sum(h[sides[[k]]]) + l2)
      if (abs(leaves[[i]]$value - unclamped) > 1e-12) clamped <- clamped + 1L
      res <- find(sides[[k]], b[k, 1], b[k, 2], if (skip) parent_ok else seq_along(X))
      best[i] <- list(res$best)
      ok[i] <- list(res$valid)
    }
    splits[[length(splits) + 1L]] <- s[c("feature", "gain")]
  }
  value <- numeric(length(g))
  for (lf in leaves) value[lf$rows] <- lf$value
  list(splits = splits, value = value, refused = refused, clamped = clamped)
}

test_that("the first tree is the brute-force constrained leaf-wise tree: splits, gains, clamped leaves", {
  set.seed(41)
  n <- 72
  col <- function() sample(rep_len(sample(round(runif(8), 3)), n))  # 8 values, 9 rows each
  X <- data.frame(u = col(), v = col(), w = col())
  X$u[sample.int(n, 8)] <- NA
  y <- 4 * sin(5 * ifelse(is.na(X$u), 0.2, X$u)) + 3 * X$v * X$w - 2 * (X$w - 0.5)^2 + rnorm(n, sd = 0.3)
  mono <- c(u = 1, v = -1, w = 0)
  g <- mean(y) - y   # squared error at the starting score (the mean)
  h <- rep(1, n)
  for (skip in c(FALSE, TRUE)) {  # and with skip_unsplittable, LightGBM's rule
    fit <- hb_quiet(X, y, nrounds = 1L, learning_rate = 1, num_leaves = 7L, min_data_in_leaf = 3L,
                    lambda_l2 = 0.5, seed = 1, monotone_constraints = mono, skip_unsplittable = skip)
    ref <- ref_mono_tree(X, g, h, unname(mono), num_leaves = 7L, min_data = 3L, l2 = 0.5, skip = skip)
    free <- ref_mono_tree(X, g, h, c(0, 0, 0), num_leaves = 7L, min_data = 3L, l2 = 0.5, skip = skip)
    # the constraints matter here: candidates are refused, leaves clamped, the tree differs
    expect_gt(ref$refused, 0L)
    expect_gt(ref$clamped, 0L)
    expect_gt(max(abs(ref$value - free$value)), 0.1)
    tab <- hb_trees(fit)
    nodes <- tab[!tab$is_leaf, ]
    nodes <- nodes[order(as.integer(sub("N", "", nodes$id))), ]
    expect_identical(nodes$feature, names(X)[vapply(ref$splits, `[[`, 0L, "feature")], label = paste("skip", skip))
    expect_equal(nodes$gain, vapply(ref$splits, `[[`, 0, "gain"), tolerance = TOL$split)
    expect_equal(unname(predict(fit, X, type = "raw")) - mean(y), ref$value, tolerance = TOL$split)
    if (skip) rule <- ref else plain <- ref
  }
  # the rule changes this tree: a column with no valid candidate in a leaf is not tried below it
  expect_gt(max(abs(rule$value - plain$value)), 0.01)
})

# ---- the model keeps them ----------------------------------------------------

test_that("saved and loaded models keep the constraints; print() and the model text show them", {
  d <- mono_data(5, n = 1500)
  fit <- hb_quiet(d$x, d$y, nrounds = 8L, seed = 1, monotone_constraints = MONO)
  want <- c(a = 1L, b = -1L, f = 0L, z = 0L)
  expect_identical(fit$params$monotone_constraints, want)
  expect_match(fit$model_text, "\nmonotone_constraints=1 -1 0 0\n", fixed = TRUE)
  expect_output(print(fit), "monotone:   a (increasing), b (decreasing)", fixed = TRUE)
  path <- tempfile(fileext = ".txt")
  on.exit(unlink(path))
  hb_save(fit, path)
  back <- hb_load(path)
  expect_identical(back$params$monotone_constraints, want)
  expect_identical(predict(back, d$x), predict(fit, d$x))
  rds <- unserialize(serialize(fit, NULL))
  expect_identical(rds$params$monotone_constraints, want)
  free <- hb_quiet(d$x, d$y, nrounds = 8L, seed = 1)
  expect_null(free$params$monotone_constraints)
  expect_false(grepl("monotone", free$model_text))
  expect_false(any(grepl("monotone", utils::capture.output(print(free)))))
})

test_that("positional, named, formula, matrix and hb_cv() inputs give the same constraints", {
  d <- mono_data(6, n = 1500)
  named <- hb_quiet(d$x, d$y, nrounds = 10L, seed = 2, monotone_constraints = c(b = -1L, a = 1L))
  pos <- hb_quiet(d$x, d$y, nrounds = 10L, seed = 2, monotone_constraints = c(1, -1, 0, 0))
  expect_identical(pos$model_text, named$model_text)
  df <- cbind(d$x, y = d$y)
  form <- hb_quiet(y ~ b + a + z, data = df, nrounds = 10L, seed = 2, monotone_constraints = c(a = 1, b = -1))
  expect_identical(form$params$monotone_constraints, c(b = -1L, a = 1L, z = 0L))
  expect_gte(worst_step(form, d$x, "a", 1), 0)
  m <- as.matrix(d$x[c("a", "b", "z")])
  colnames(m) <- NULL
  mat <- hb_quiet(m, d$y, nrounds = 10L, seed = 2, monotone_constraints = c(V1 = 1))
  expect_identical(mat$params$monotone_constraints, c(V1 = 1L, V2 = 0L, V3 = 0L))
  set.seed(7)
  cv <- hb_cv(d$x, d$y, nfold = 3L, nrounds = 8L, seed = 2, verbose = 0, keep_models = TRUE,
              monotone_constraints = MONO)
  for (fm in cv$models) {
    expect_identical(fm$params$monotone_constraints, c(a = 1L, b = -1L, f = 0L, z = 0L))
    expect_gte(worst_step(fm, d$x, "a", 1), 0)
  }
})

test_that("bad constraints are refused by name", {
  d <- mono_data(8, n = 300)
  err <- function(mc, re, ...) {
    expect_error(hb_quiet(d$x, d$y, nrounds = 2L, monotone_constraints = mc, ...),
                 class = "histboost_error_input", regexp = re)
  }
  err(c(1, -1), "`monotone_constraints` has 2 values but the data has 4 columns")
  err(c(a = 1, zz = -1), "`monotone_constraints` names `zz`, not a column of the data")
  err(c(1, 2, 0, 0), "only -1 \\(decreasing\\), 0 \\(none\\) and 1 \\(increasing\\), not 2")
  err(c(1, NA, 0, 0), "not NA")
  err(c(0.5, 0, 0, 0), "not 0.5")
  err(c("1", "0", "0", "0"), "must be NULL or a vector of -1, 0 and 1")
  err(c(TRUE, FALSE, FALSE, FALSE), "must be NULL or a vector of -1, 0 and 1")
  err(stats::setNames(c(1, -1), c("a", "")), "named for every element or for none")
  err(c(a = 1, a = -1), "names `a` more than once")
  err(c(f = 1), "applies to numeric columns only; `f` is a factor")
  err(c(0, 0, -1, 0), "applies to numeric columns only; `f` is a factor")
  err(MONO, "do not combine with `objective` = \"l1\"", objective = "l1")
  err(MONO, "do not combine with `objective` = \"quantile\"", objective = "quantile")
  err(MONO, "do not combine with `objective` = \"mape\"", objective = "mape")
  expect_error(hb_quiet(d$x, d$y, nrounds = 2L, monotone_constraints = MONO, monotone = 1),
               class = "histboost_error_input", regexp = "not an argument")
  # "auto" trains them where it trains anything: the GPU when there is one
  # (test-cuda.R compares its trees with the CPU's), else the CPU
  auto <- hb_quiet(d$x, d$y, nrounds = 3L, seed = 1, device = "auto", monotone_constraints = MONO)
  expect_identical(auto$params$device, if (hb_device_info()$available) "cuda" else "cpu")
})

# ---- lightgbm ----------------------------------------------------------------

test_that("test rmse within 3% of lightgbm's with the same constraints (basic method)", {
  skip_if_not_installed("lightgbm")
  d <- mono_data(9, n = 12000)
  te <- 9001:12000
  xtr <- d$x[-te, ]; xte <- d$x[te, ]
  num <- c("a", "b", "z")  # the factor is left out: lightgbm takes no data.frame
  common <- list(num_leaves = 31L, learning_rate = 0.1, min_data_in_leaf = 20L, max_bin = 63L, lambda_l2 = 1)
  hb <- do.call(hb_quiet, c(list(xtr[num], d$y[-te], nrounds = 80L, seed = 1,
                                 monotone_constraints = c(1, -1, 0)), common))
  ds <- lightgbm::lgb.Dataset(as.matrix(xtr[num]), label = d$y[-te], params = list(max_bin = 63L))
  lgb <- lightgbm::lgb.train(params = c(list(objective = "regression", num_threads = 2L, verbose = -1L, seed = 1L,
                                             monotone_constraints = c(1L, -1L, 0L),
                                             monotone_constraints_method = "basic"),
                                        common[names(common) != "max_bin"]),
                             data = ds, nrounds = 80L)
  r_hb <- rmse(d$y[te], predict(hb, xte[num]))
  r_lgb <- rmse(d$y[te], predict(lgb, as.matrix(xte[num])))
  expect_lt(r_lgb, 0.8 * sd(d$y[te]))
  expect_lt(abs(r_hb - r_lgb) / r_lgb, 0.03)
  # lightgbm's model is monotone too (the comparison is between like models)
  expect_gte(worst_step(hb, xte[num], "a", 1), 0)
})
