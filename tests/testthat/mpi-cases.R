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

# One case: list(x, y, weights, valid = list(x, y), args = list(...)).
mpi_case <- function(case) {
  set.seed(42)
  n <- 1200L
  x <- data.frame(a = rnorm(n), b = runif(n), c = sample(0:30, n, TRUE),
                  f = factor(sample(c("u", "v", "w", "x", "y"), n, TRUE, prob = c(5, 4, 3, 2, 1))))
  x$a[sample(n, 100)] <- NA
  x$f[sample(n, 50)] <- NA
  eta <- 0.8 * ifelse(is.na(x$a), 0.5, x$a) + 2 * x$b - 0.05 * x$c + c(u = 0, v = 1, w = -1, x = 0.5, y = 2)[as.character(x$f)]
  eta[is.na(eta)] <- 0
  args <- list(nrounds = 8L, num_leaves = 7L, min_data_in_leaf = 10L, learning_rate = 0.3, seed = 11,
               nthreads = 1L, verbose = 0L)
  w <- NULL
  y <- switch(case,
    regression = , regression_full = eta + rnorm(n, sd = 0.3),
    binary = factor(ifelse(eta + rnorm(n) > median(eta), "yes", "no")),
    multiclass = cut(eta + rnorm(n, sd = 0.5), quantile(eta, c(0, 0.3, 0.7, 1)) + c(-10, 0, 0, 10),
                     labels = c("lo", "mid", "hi")),
    stop("unknown case ", case))
  if (case == "regression") {
    w <- runif(n, 0.5, 2)
    args <- c(args, list(quantized = TRUE, bagging_fraction = 0.7, bagging_freq = 1L))
  }
  if (case %in% c("binary", "multiclass")) args <- c(args, list(quantized = TRUE))
  if (case == "binary") args$feature_fraction <- 0.75
  nv <- 400L
  valid <- list(idx = seq_len(nv))
  list(x = x[-valid$idx, ], y = y[-valid$idx], weights = w[-valid$idx],
       valid = list(x = x[valid$idx, ], y = y[valid$idx]), args = args)
}

# The one-process fit on the shards' rows concatenated in rank order (and
# the validation shards likewise), with early stopping on the validation set.
mpi_reference <- function(case, np) {
  d <- mpi_case(case)
  rows <- unlist(mpi_shards(nrow(d$x), np))
  vrows <- unlist(mpi_shards(nrow(d$valid$x), np, seed = 8L))
  do.call(histboost::histboost, c(list(x = d$x[rows, ], y = d$y[rows], weights = d$weights[rows],
                                       valid = list(v = list(x = d$valid$x[vrows, ], y = d$valid$y[vrows])),
                                       early_stopping_rounds = 3L), d$args))
}
