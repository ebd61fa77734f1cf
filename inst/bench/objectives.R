# The regression losses beyond squared error: training time and test loss,
# histboost beside lightgbm with the same parameters, on run.R's Higgs-shaped
# features with targets generated for each loss (counts, positive amounts,
# zero-inflated amounts, heavy-tailed noise).
#
#   Rscript inst/bench/objectives.R [--rows 300000] [--rounds 100] [--threads 2] [--reps 3] [--lib DIR] [--out DIR]
#
# Results go to DIR (default inst/bench/results) as objectives-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # gen_higgs()
opt <- bench_options(args, list(rows = 3e5, rounds = 100L, threads = 2L, reps = 3L, lib = "", out = ""), "objectives.R")
suppressPackageStartupMessages(library(histboost))
has_lgb <- requireNamespace("lightgbm", quietly = TRUE)
out <- bench_out(opt$out, here)

set.seed(20261125)
n <- as.integer(opt$rows)
nt <- n %/% 5L
w <- gen_higgs(n + nt)
x <- w$x
eta <- as.vector(scale(x[, 1]) * 0.3 + scale(x[, 22]) * 0.4 - scale(x[, 26]) * 0.3 + (x[, 9] > 1) * 0.3)
mu <- exp(0.5 + eta)
targets <- list(
  poisson = rpois(length(mu), mu), gamma = rgamma(length(mu), shape = 2, rate = 2 / mu),
  tweedie = rpois(length(mu), mu) * rgamma(length(mu), shape = 2, rate = 2) * (runif(length(mu)) < 0.7),
  huber = eta + rt(length(mu), df = 2), l1 = eta + rt(length(mu), df = 2), quantile = eta + rt(length(mu), df = 2)
)
tr <- seq_len(n)
te <- n + seq_len(nt)
loss <- function(obj, y, s) {  # mean test loss on raw scores
  r <- y - s
  switch(obj, poisson = mean(exp(s) - y * s), gamma = mean(y * exp(-s) + s),
         tweedie = mean(y * exp(-0.5 * s) / 0.5 + exp(0.5 * s) / 0.5),
         huber = mean(ifelse(abs(r) <= 0.9, 0.5 * r^2, 0.9 * (abs(r) - 0.45))), l1 = mean(abs(r)),
         quantile = mean(ifelse(r >= 0, 0.9 * r, -0.1 * r)))
}
rows <- list()
for (obj in names(targets)) {
  y <- targets[[obj]]
  fits <- list(
    histboost = function() histboost(x[tr, ], y[tr], objective = obj, nrounds = opt$rounds, num_leaves = 63L,
                                     learning_rate = 0.1, min_data_in_leaf = 20L, huber_delta = 0.9,
                                     quantile_alpha = 0.9, nthreads = opt$threads, seed = 1L, verbose = 0L))
  if (has_lgb) {
    fits$lightgbm <- function() lightgbm::lgb.train(
      params = list(objective = obj, num_leaves = 63L, learning_rate = 0.1, min_data_in_leaf = 20L, alpha = 0.9,
                    num_threads = opt$threads, verbose = -1L, seed = 1L),
      data = lightgbm::lgb.Dataset(x[tr, ], label = y[tr]), nrounds = opt$rounds, verbose = -1L)
  }
  for (pkg in names(fits)) {
    secs <- numeric(opt$reps)
    for (r in seq_len(opt$reps)) {
      gc()
      t0 <- proc.time()[["elapsed"]]
      m <- fits[[pkg]]()
      secs[r] <- proc.time()[["elapsed"]] - t0
    }
    s <- if (pkg == "histboost") predict(m, x[te, ], type = "raw") else predict(m, x[te, ], type = "raw")
    rows[[length(rows) + 1L]] <- data.frame(objective = obj, package = pkg, seconds = stats::median(secs),
                                            test_loss = loss(obj, y[te], s))
    cat(sprintf("%-9s %-9s %6.2f s  loss %.5f\n", obj, pkg, stats::median(secs), loss(obj, y[te], s)))
  }
}
tab <- do.call(rbind, rows)
tab$time_ratio <- NA_real_
tab$loss_diff <- NA_real_  # minus lightgbm's (losses can be negative: a difference, not a ratio)
for (o in unique(tab$objective)) {
  k <- tab$objective == o
  if (any(tab$package[k] == "lightgbm")) {
    ref <- tab[k & tab$package == "lightgbm", ]
    tab$time_ratio[k] <- tab$seconds[k] / ref$seconds
    tab$loss_diff[k] <- tab$test_loss[k] - ref$test_loss
  }
}
print(tab, digits = 4)
stamp <- format(Sys.Date())
base <- file.path(out, sprintf("objectives-%s", stamp))
utils::write.csv(tab, paste0(base, ".csv"), row.names = FALSE)
ver <- bench_version
cpu <- bench_cpu()
fmt <- function(v, d) ifelse(is.na(v), "", formatC(v, format = "f", digits = d))
writeLines(c(sprintf("# Regression losses, %s", stamp), "",
             sprintf("Machine: %s; %d threads. R %s; histboost %s, lightgbm %s.", cpu, opt$threads, getRversion(),
                     ver("histboost"), ver("lightgbm")),
             sprintf(paste("Data: run.R's Higgs-shaped features, %d train and %d test rows, a target generated for",
                           "each loss; %d rounds, 63 leaves, learning rate 0.1; huber delta and quantile 0.9;",
                           "tweedie power 1.5. Median of %d runs."), n, nt, opt$rounds, opt$reps),
             sprintf("Command: `Rscript inst/bench/objectives.R %s`", paste(args, collapse = " ")), "",
             "| objective | package | seconds | time / lightgbm's | test loss | loss - lightgbm's |",
             "|---|---|---:|---:|---:|---:|",
             sprintf("| %s | %s | %.2f | %s | %.5f | %s |", tab$objective, tab$package, tab$seconds,
                     fmt(tab$time_ratio, 2), tab$test_loss, fmt(tab$loss_diff, 5))),
           paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
