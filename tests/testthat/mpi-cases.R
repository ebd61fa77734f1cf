# mpi-cases.R: the data of the distributed-training tests (test-mpi.R), read
# both by the test (for the one-process reference) and by mpi-train.R (run
# under mpirun, one shard per process). Not a helper file: testthat does not
# source it by itself.

# Rows split over np processes: shuffled, then cut unevenly (process r gets
# a share growing with r), so that shards are neither contiguous nor equal.
# The concatenation of the shards in rank order is unlist(result).
mpi_shards <- function(n, np, seed = 7L) {
  set.seed(seed)
  perm <- sample.int(n)
  share <- seq_len(np) + 1
  sizes <- floor(n * share / sum(share))
  sizes[np] <- n - sum(sizes[-np])
  split(perm, rep(seq_len(np), sizes))
}

# Rows split over np processes by query (ranking): each query whole on one
# process, the queries shuffled and cut unevenly as mpi_shards() cuts rows,
# and each shard's rows shuffled.
mpi_query_shards <- function(group, np, seed = 7L) {
  set.seed(seed)
  uq <- unique(group)
  qs <- split(uq[sample.int(length(uq))], rep(seq_len(np), lengths(mpi_shards(length(uq), np, seed))))
  lapply(qs, function(q) {
    rows <- which(group %in% q)
    rows[sample.int(length(rows))]
  })
}

# The shards of a case's training rows (valid = FALSE) or validation rows.
mpi_case_shards <- function(d, np, valid = FALSE) {
  g <- if (valid) d$valid$group else d$group
  seed <- if (valid) 8L else 7L
  if (!is.null(g)) mpi_query_shards(g, np, seed) else mpi_shards(nrow(if (valid) d$valid$x else d$x), np, seed)
}

# One case: list(x, y, weights, group, valid = list(x, y, group), args = list(...)).
mpi_case <- function(case) {
  set.seed(42)
  n <- if (case == "threaded") 170000L else 1200L
  x <- data.frame(a = rnorm(n), b = runif(n), c = sample(0:30, n, TRUE),
                  f = factor(sample(c("u", "v", "w", "x", "y"), n, TRUE, prob = c(5, 4, 3, 2, 1))))
  x$a[sample(n, 100)] <- NA
  x$f[sample(n, 50)] <- NA
  eta <- 0.8 * ifelse(is.na(x$a), 0.5, x$a) + 2 * x$b - 0.05 * x$c + c(u = 0, v = 1, w = -1, x = 0.5, y = 2)[as.character(x$f)]
  eta[is.na(eta)] <- 0
  args <- list(nrounds = 8L, num_leaves = 7L, min_data_in_leaf = 10L, learning_rate = 0.3, seed = 11,
               nthreads = 1L, verbose = 0L)
  w <- NULL
  group <- NULL
  y <- switch(case,
    regression = , regression_full = , bundle = , narrow = , bins = , threaded = , skip = eta + rnorm(n, sd = 0.3),
    goss = round(eta),  # whole numbers: many rows share a gradient, so GOSS's threshold has ties
    ranking = as.integer(cut(eta + rnorm(n, sd = 0.5), 4L)) - 1L,
    binary = , binary_wide = , callback = , dart = , extra = factor(ifelse(eta + rnorm(n) > median(eta), "yes", "no")),
    unbalanced = , balanced = factor(ifelse(eta + rnorm(n) > quantile(eta, 0.8), "yes", "no")),  # a rare positive class
    custom = , metric_local = , continue = , smooth = , smoothed = , quantile = eta + rnorm(n, sd = 0.3),
    cox = surv_by_hand(round(rexp(n, exp(0.5 * eta)) * 20 + 1), rbinom(n, 1, 0.7)),  # tied times, censored
    l1 = round(2 * (eta + rnorm(n, sd = 0.3))) / 2,  # halves: many residuals tie
    mape = exp(0.5 * eta) + runif(n),                  # > 1 mostly: MAPE's weights 1 / |y| differ by row
    multiclass = , class_weights = , metric_fun = cut(eta + rnorm(n, sd = 0.5), quantile(eta, c(0, 0.3, 0.7, 1)) + c(-10, 0, 0, 10),
                     labels = c("lo", "mid", "hi")),
    stop("unknown case ", case))
  if (case == "regression") {
    w <- runif(n, 0.5, 2)
    args <- c(args, list(quantized = TRUE, bagging_fraction = 0.7, bagging_freq = 1L))
  }
  if (case %in% c("binary", "multiclass")) args <- c(args, list(quantized = TRUE))
  if (case == "binary") args$feature_fraction <- 0.75
  if (case == "binary_wide") {
    # 8-bit gradients and a two-valued column: bins of hundreds of rows whose
    # hessian sums pass 16 bits, so histograms go on the wire packed in
    # 64-bit integers (32-bit halves) as well as in 32-bit ones
    x$d <- as.numeric(x$b > 0.5)
    args <- c(args, list(quantized = TRUE, grad_bits = 8L))
  }
  if (case == "goss") {
    args$nrounds <- 12L
    args <- c(args, list(quantized = TRUE, goss = TRUE, top_rate = 0.25, other_rate = 0.2))
  }
  if (case == "ranking") {
    # 100 queries of 4 to 22 rows with character ids (sorted as strings, not
    # as numbers), rows of a query scattered; graded 0-3; weighted (the
    # metrics weigh each query by its rows' mean weight)
    sizes <- rep(c(4L, 9L, 13L, 22L), length.out = 100L)
    sizes[100L] <- n - sum(sizes[-100L])
    group <- sample(rep(sprintf("q%d", seq_len(100L)), sizes))
    args$min_data_in_leaf <- 5L
    args$nrounds <- 40L  # early stopping ends it sooner
    args <- c(args, list(objective = "lambdarank", eval_metric = c("ndcg", "map"), eval_at = c(3L, 5L),
                         quantized = TRUE, bagging_fraction = 0.8, bagging_freq = 2L))
    w <- runif(n, 0.5, 2)
  }
  # the options of one process checked on several, each case quantized so
  # that the model must be byte for byte the one-process model
  if (case %in% c("unbalanced", "class_weights", "custom", "continue", "metric_fun", "metric_local", "callback",
                  "dart", "l1",
                  "quantile", "mape", "cox")) {
    args$quantized <- TRUE
  }
  if (case == "unbalanced") args$is_unbalance <- TRUE  # weights from the positive and negative counts of all rows
  if (case == "class_weights") args$class_weights <- c(lo = 2.5, hi = 0.75)
  if (case == "custom") {
    # squared error by hand, and a metric that cannot be summed over shards
    # (the median absolute error), which steers early stopping
    args$objective <- function(preds, labels) list(grad = preds - labels, hess = rep(1, length(preds)))
    args$eval_metric <- list(function(preds, labels) {
      list(name = "medae", value = stats::median(abs(preds - labels)), higher_better = FALSE)
    }, "rmse")
    args$nrounds <- 30L
    args$learning_rate <- 0.5
  }
  if (case == "metric_local") {
    # the median absolute error, off by 1000 on the processes where
    # mpi-train.R sets the option, failing or named otherwise where it sets
    # the others
    args$eval_metric <- list(function(preds, labels) {
      if (isTRUE(getOption("hb_test_metric_fail", FALSE))) stop("this process's metric failed")
      off <- if (isTRUE(getOption("hb_test_stop_here", FALSE))) 1000 else 0
      nm <- if (isTRUE(getOption("hb_test_metric_name", FALSE))) "other" else "medae"
      list(name = nm, value = stats::median(abs(preds - labels)) + off, higher_better = FALSE)
    })
    args$nrounds <- 12L
  }
  if (case == "metric_fun") {
    # a weighted metric function of the class probabilities (a matrix):
    # the weighted share of rows whose true class has probability < 0.5
    w <- runif(n, 0.5, 2)
    args$eval_metric <- list(function(preds, labels, weights) {
      p_true <- preds[cbind(seq_along(labels), labels + 1L)]
      list(name = "wmiss", value = sum(weights * (p_true < 0.5)) / sum(weights), higher_better = FALSE)
    }, "multi_logloss")
  }
  if (case == "continue") {
    # init_model: a one-process model on all rows (the same on every
    # process), continued with weights and bagging
    base <- histboost::histboost(x, eta + rnorm(n, sd = 0.3), nrounds = 4L, num_leaves = 5L, learning_rate = 0.3,
                                 seed = 3, nthreads = 1L, verbose = 0L)
    args$init_model <- base
    w <- runif(n, 0.5, 2)
    args <- c(args, list(bagging_fraction = 0.7, bagging_freq = 1L))
  }
  if (case == "callback") {
    # a callback that stops after round 5, on the last process only when
    # mpi-train.R sets the option (on one process it always does)
    args$callbacks <- list(function(iteration, evaluation_log, model) {
      if (!identical(model$niter, as.integer(iteration)) || nrow(evaluation_log) != iteration) stop("callback inputs")
      iteration >= 5L && isTRUE(getOption("hb_test_stop_here", TRUE))
    })
    args$nrounds <- 20L
  }
  if (case == "dart") {
    args <- c(args, list(boosting = "dart", drop_rate = 0.3, skip_drop = 0.2, bagging_fraction = 0.8,
                         bagging_freq = 1L))
    args$nrounds <- 12L
  }
  # leaves refit to quantiles of their residuals: unweighted (l1; each
  # leaf's exact order statistics over the processes), weighted (quantile,
  # with bagging) and MAPE's weights
  if (case == "l1") args$objective <- "l1"
  if (case == "quantile") {
    args <- c(args, list(objective = "quantile", quantile_alpha = 0.3, bagging_fraction = 0.8, bagging_freq = 1L))
    w <- runif(n, 0.5, 2)
  }
  if (case == "mape") args$objective <- "mape"
  if (case == "extra") args <- c(args, list(extra_trees = TRUE, feature_fraction_bynode = 0.6))
  # LightGBM's rule; min_gain_to_split makes leaves without a valid split in some columns
  if (case == "skip") args <- utils::modifyList(args, list(skip_unsplittable = TRUE, min_gain_to_split = 3, num_leaves = 15L, quantized = TRUE))
  if (case == "smooth") {
    args <- c(args, list(path_smooth = 5, max_delta_step = 0.4, interaction_constraints = list(c("a", "b"), c("c", "f"))))
  }
  if (case == "smoothed") args <- c(args, list(path_smooth = 5, max_delta_step = 0.4))  # full precision
  if (case == "threaded") {
    # shards of 67,840 and 101,760 rows on two threads each: the distributed
    # dataset's threaded loops, and past 65536 rows a process the quantized
    # root's threaded sums and the leaves' by-row refit on the threads
    args <- c(args, list(quantized = TRUE, bagging_fraction = 0.8, bagging_freq = 1L))
    args$nthreads <- 2L
    args$nrounds <- 4L
    args$num_leaves <- 15L
  }
  if (case == "narrow") {
    # two columns, one of about 255 bins and one of 5 levels: the split
    # search's blocks (grow.c: whole features, a block starting at the first
    # feature at or past r / np of the bins) give process 0 column a and the
    # last process column f, and with 3 or 4 processes the ones between
    # no feature of their own
    x <- x[c("a", "f")]
    args$quantized <- TRUE
  }
  if (case == "balanced") {
    # LightGBM's balanced bagging: every process draws its rows by their
    # global index, each at its class's rate
    args <- c(args, list(quantized = TRUE, bagging_freq = 1L, pos_bagging_fraction = 0.9, neg_bagging_fraction = 0.3))
  }
  if (case == "bins") {
    # the binning parameters on every process: boundaries from a sample of
    # 300 of the 800 training rows (gathered from the shards as the
    # one-process sample takes them) and bins of at least 7 sampled rows;
    # a and f with a max_bin of their own (f's 5 levels in features of 3)
    args <- c(args, list(quantized = TRUE, min_data_in_bin = 7L, bin_sample_rows = 300L,
                         max_bin_by_feature = c(a = 9L, f = 3L)))
  }
  if (case == "bundle") {
    # sparse columns, each off zero in about 7% of rows at random, so that
    # any two share a few rows: bundled only at max_conflict_rate > 0, which
    # loses the shared rows' values in all but one member; and one column
    # off zero in about 19% of rows, sparse over all rows (at most 20%) but
    # dense on the first shard of 2 and of 3 processes: 100 of the 800
    # training rows (rows 401 .. n), in both those shards (of 320 and 177
    # rows), 50 more over the others (150 in all, 18.75%)
    sp <- as.data.frame(lapply(setNames(1:10, paste0("s", 1:10)), function(j) {
      v <- numeric(n)
      i <- sample(n, round(0.07 * n))
      v[i] <- round(runif(length(i), 1, 10))
      v
    }))
    both <- 400L + intersect(mpi_shards(n - 400L, 2L)[[1L]], mpi_shards(n - 400L, 3L)[[1L]])
    set.seed(43)
    hi <- c(sample(both, 100L), sample(setdiff(401:n, both), 50L), sample(400L, 75L))
    hz <- numeric(n)
    hz[hi] <- runif(length(hi), 1, 3)
    x <- cbind(x["a"], sp, h = hz)
    y <- eta + 0.3 * rowSums(sp[1:5]) - 0.2 * rowSums(sp[6:10]) + hz + rnorm(n, sd = 0.3)
    args <- c(args, list(quantized = TRUE, max_conflict_rate = 0.1))
  }
  nv <- 400L
  valid <- list(idx = seq_len(nv))
  list(x = x[-valid$idx, ], y = surv_rows(y, -valid$idx), weights = w[-valid$idx], group = group[-valid$idx],
       valid = list(x = x[valid$idx, ], y = surv_rows(y, valid$idx), group = group[valid$idx],
                    weights = if (case == "metric_fun") w[valid$idx]), args = args)
}

# Early stopping as the distributed tests train with it: after 3 rounds
# without improvement, except with DART (which does not stop early).
mpi_case_stop <- function(d) if (identical(d$args$boosting, "dart")) list() else list(early_stopping_rounds = 3L)

# The arguments of histboost() for some rows of a case (and of its
# validation set): data, weights and queries, as the shard or the reference
# takes them.
mpi_case_data <- function(d, rows, vrows) {
  v <- list(x = d$valid$x[vrows, ], y = surv_rows(d$valid$y, vrows))
  if (!is.null(d$valid$group)) v$group <- d$valid$group[vrows]
  if (!is.null(d$valid$weights)) v$weights <- d$valid$weights[vrows]
  list(x = d$x[rows, ], y = surv_rows(d$y, rows), weights = d$weights[rows], group = d$group[rows], valid = list(v = v))
}

# The one-process fit on the shards' rows concatenated in rank order (and
# the validation shards likewise), with early stopping on the validation set.
mpi_reference <- function(case, np, extra = list()) {
  d <- mpi_case(case)
  rows <- unlist(mpi_case_shards(d, np))
  vrows <- unlist(mpi_case_shards(d, np, valid = TRUE))
  do.call(histboost::histboost, c(mpi_case_data(d, rows, vrows), mpi_case_stop(d), utils::modifyList(d$args, extra)))
}
