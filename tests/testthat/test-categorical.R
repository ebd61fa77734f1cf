# Categorical splits follow LightGBM's rules (split_rules.h): checked against
# ref_cat_split() (helper-histboost.R), a plain-R transcription of those
# rules, on one-split models over many shapes and parameter settings; the
# quantized search against the full-precision one; and ordered factors,
# which split on their level order.

cat_stump <- function(x, y, w, p) {
  args <- c(list(x = data.frame(f = x), y = y, weights = w, nrounds = 1L, learning_rate = 1, num_leaves = 2L,
                 verbose = 0L, nthreads = 2L), p)
  do.call(histboost, args)
}

# The engine's bins of factor x: the levels LightGBM keeps (ref_kept_levels,
# helper-histboost.R), most rows first; then the missing bin (NA and the
# levels left out).
cat_bins <- function(x) ref_kept_levels(x)

check_cat_stump <- function(x, y, w, p, label) {
  W <- if (is.null(w)) rep(1, length(y)) else w
  init <- sum(W * y) / sum(W)
  g <- W * (init - y); h <- W
  bins <- cat_bins(x)
  key <- ifelse(is.na(x) | !(as.character(x) %in% bins), "<NA>", as.character(x))
  cats <- c(bins, "<NA>")
  gs <- vapply(cats, function(k) sum(g[key == k]), 0, USE.NAMES = FALSE)
  hs <- vapply(cats, function(k) sum(h[key == k]), 0, USE.NAMES = FALSE)
  pr <- modifyList(list(lambda_l1 = 0, lambda_l2 = 0, min_gain_to_split = 0, min_data_in_leaf = 20L,
                        min_sum_hessian_in_leaf = 1e-3, max_cat_threshold = 32L, cat_smooth = 10, cat_l2 = 10,
                        min_data_per_group = 100L, max_cat_to_onehot = 4L), p)
  ref <- ref_cat_split(gs, hs, length(y), sum(g), sum(h), length(bins) + 1L, pr)
  # a model that cannot split says so (a classed warning)
  if (is.null(ref)) {
    expect_warning(m <- cat_stump(x, y, w, p), class = "histboost_warning", regexp = "no tree could split")
  } else {
    m <- cat_stump(x, y, w, p)
  }
  tr <- hb_trees(m)
  inner <- tr[!tr$is_leaf, ]
  if (is.null(ref)) {
    expect_equal(nrow(inner), 0L, label = paste(label, ": no split"))
    return(invisible(NULL))
  }
  expect_equal(nrow(inner), 1L, label = paste(label, ": one split"))
  if (nrow(inner) != 1L) return(invisible(NULL))
  got <- c(if (!is.na(inner$categories) && nzchar(inner$categories)) strsplit(inner$categories, "||", fixed = TRUE)[[1]],
           if (isTRUE(inner$default_left)) "<NA>")
  want <- cats[ref$left]
  # A set and its complement are one partition: with equal gains (as when
  # cat_l2 = lambda_l2 = 0 and a prefix from one end is the complement of
  # one from the other) rounding decides which of the two scans names it.
  if (setequal(got, setdiff(unique(key), want))) want <- setdiff(unique(key), want)
  expect_setequal(got, want)
  expect_equal(inner$gain, ref$gain, tolerance = 1e-9, label = paste(label, ": gain"))
  # the rows go where the split says
  left <- predict(m, data.frame(f = x), type = "leaf")[, 1] == 0L
  expect_identical(left, key %in% want, label = paste(label, ": rows"))
  invisible(ref)
}

test_that("categorical splits equal LightGBM's rules written in plain R, over many shapes and settings", {
  set.seed(20261126)
  grid <- expand.grid(case = 1:3, K = c(2L, 3L, 4L, 7L, 12L, 40L), n = c(80L, 300L, 2500L))
  nsplit <- 0L
  for (r in seq_len(nrow(grid))) {
    K <- grid$K[r]; n <- grid$n[r]
    freq <- rexp(K)^2
    x <- factor(sample(paste0("L", seq_len(K)), n, TRUE, prob = freq / sum(freq)), levels = paste0("L", seq_len(K)))
    if (runif(1) < 0.6) x[sample(n, max(1L, round(n * runif(1, 0, 0.2))))] <- NA
    eff <- rnorm(K, sd = 2)
    y <- ifelse(is.na(x), 0.7, eff[as.integer(x)]) + rnorm(n)
    w <- if (runif(1) < 0.4) runif(n, 0.2, 3) else NULL
    p <- list(cat_smooth = sample(c(0, 1, 10, 30), 1), min_data_per_group = sample(c(1L, 5L, 20L, 100L), 1),
              max_cat_threshold = sample(c(1L, 2L, 4L, 32L), 1), cat_l2 = sample(c(0, 10), 1),
              lambda_l2 = sample(c(0, 1), 1), min_data_in_leaf = sample(c(1L, 5L, 20L), 1),
              max_cat_to_onehot = sample(c(1L, 4L, 8L), 1))
    label <- sprintf("K=%d n=%d %s", K, n, paste(names(p), unlist(p), sep = "=", collapse = " "))
    ref <- check_cat_stump(x, y, w, p, label)
    nsplit <- nsplit + !is.null(ref)
  }
  # the grid is not trivial: most settings split, some cannot
  expect_gt(nsplit, nrow(grid) / 2)
  expect_lt(nsplit, nrow(grid))
})

test_that("a category enters the many-vs-many scan when its estimated rows (from hessian sums) reach cat_smooth", {
  # Six levels of about 25 weighted rows; cat_smooth = 24: whether a level
  # takes part is decided by round(h * n / H), not by its true row count.
  differ <- 0L
  for (seed in 1:8) {
    set.seed(seed)
    x <- factor(sample(paste0("L", 1:6), 150, TRUE), levels = paste0("L", 1:6))
    y <- rnorm(6, sd = 2)[as.integer(x)] + rnorm(150)
    w <- exp(rnorm(150, sd = 0.7))
    p <- list(cat_smooth = 24, min_data_per_group = 1L, min_data_in_leaf = 5L, cat_l2 = 0)
    check_cat_stump(x, y, w, p, paste("seed", seed))
    est <- tapply(w, x, sum) * 150 / sum(w)
    differ <- differ + any((floor(est + 0.5) >= 24) != (table(x) >= 24))
  }
  expect_gt(differ, 0L)   # the estimate and the true count disagree somewhere
})

test_that("small data: the defaults split a factor as LightGBM's rules allow (not only categories of 100 rows)", {
  # 240 rows, 10 levels of 24 rows: the old rule left every level out
  # (fewer than min_data_per_group = 100 rows each) and could not split.
  set.seed(7)
  x <- factor(rep(paste0("L", 1:10), each = 24), levels = paste0("L", 1:10))
  y <- ifelse(x %in% c("L2", "L5", "L7", "L9", "L10"), 2, 0) + rnorm(240, sd = 0.3)
  ref <- check_cat_stump(x, y, NULL, list(), "defaults, 240 rows")
  expect_false(is.null(ref))
  # left and right each hold >= min_data_per_group rows: the five high levels on one side
  m <- cat_stump(x, y, NULL, list())
  inner <- hb_trees(m)
  inner <- inner[!inner$is_leaf, ]
  left <- strsplit(inner$categories, "||", fixed = TRUE)[[1]]
  expect_true(setequal(left, c("L2", "L5", "L7", "L9", "L10")) ||
                setequal(left, setdiff(paste0("L", 1:10), c("L2", "L5", "L7", "L9", "L10"))))
})

test_that("one category against the rest for factors of at most max_cat_to_onehot bins", {
  set.seed(11)
  n <- 600
  x <- factor(sample(c("a", "b", "c"), n, TRUE))
  # the best two-way partition {a, b} vs {c}... is also one-vs-rest; make the
  # best many-vs-many split differ from every one-vs-rest split with 4 levels
  x4 <- factor(sample(c("a", "b", "c", "d"), n, TRUE))
  y <- ifelse(x4 %in% c("a", "b"), 1, -1) + rnorm(n, sd = 0.1)
  # 4 levels + missing bin = 5 bins: many-vs-many by default, a 2-vs-2 split
  m5 <- cat_stump(x4, y, NULL, list(min_data_per_group = 10L))
  i5 <- hb_trees(m5)
  i5 <- i5[!i5$is_leaf, ]
  expect_setequal(strsplit(i5$categories, "||", fixed = TRUE)[[1]], if (grepl("a", i5$categories)) c("a", "b") else c("c", "d"))
  # max_cat_to_onehot = 5: one level against the rest
  m1 <- cat_stump(x4, y, NULL, list(min_data_per_group = 10L, max_cat_to_onehot = 5L))
  i1 <- hb_trees(m1)
  i1 <- i1[!i1$is_leaf, ]
  expect_length(strsplit(i1$categories, "||", fixed = TRUE)[[1]], 1L)
  check_cat_stump(x4, y, NULL, list(min_data_per_group = 10L, max_cat_to_onehot = 5L), "one-vs-rest, 4 levels")
  check_cat_stump(x, rnorm(n) + (x == "b"), NULL, list(), "one-vs-rest, 3 levels")
})

test_that("the quantized search makes the full-precision search's splits when quantization is exact", {
  # Gradients -y with y in -7..7 (init_score 0) and unit hessians are exact
  # on 4-bit levels (scale 1): both searches see the same sums, so the
  # first tree's splits, leaf sizes and values must agree.
  set.seed(3)
  n <- 3000
  d <- data.frame(a = factor(sample(paste0("A", 1:3), n, TRUE)),
                  b = factor(sample(paste0("B", 1:12), n, TRUE, prob = (1:12)^1.5)),
                  c = factor(sample(paste0("C", 1:40), n, TRUE)),
                  z = round(rnorm(n), 1))
  d$b[sample(n, 200)] <- NA
  eff_b <- rnorm(12); eff_c <- rnorm(40)
  y <- round(pmin(7, pmax(-7, 2 * ifelse(is.na(d$b), 0, eff_b[as.integer(d$b)]) + 2 * eff_c[as.integer(d$c)] + (d$a == "A2") +
                          rnorm(n))))
  y[1:2] <- c(-7, 7)
  for (p in list(list(), list(min_data_per_group = 10L, cat_smooth = 1, max_cat_threshold = 4L),
                 list(min_data_per_group = 50L, cat_smooth = 30, cat_l2 = 0, max_cat_to_onehot = 13L))) {
    args <- c(list(x = d, y = y, init_score = rep(0, n), nrounds = 1L, num_leaves = 12L, learning_rate = 1,
                   min_data_in_leaf = 5L, verbose = 0L), p)
    full <- do.call(histboost, args)
    q <- do.call(histboost, c(args, list(quantized = TRUE, grad_bits = 4L, stochastic_rounding = FALSE)))
    tf <- hb_trees(full); tq <- hb_trees(q)
    expect_gt(sum(!tf$is_leaf & tf$split_type %in% "categorical"), 3L)
    expect_identical(tq[c("id", "feature", "categories", "default_left", "left", "right", "count")],
                     tf[c("id", "feature", "categories", "default_left", "left", "right", "count")])
    expect_equal(tq$gain, tf$gain, tolerance = 1e-9)
    expect_equal(tq$value, tf$value, tolerance = 1e-9)
  }
})
