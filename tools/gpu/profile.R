# tools/gpu/profile.R [ROWS] [ROUNDS] [MAX_BIN] [QUANTIZED]: a GPU training to time or to
# run under a profiler (tools/gpu/check.sh ncu): Higgs-sized rows of 28
# numeric features with a nonlinear binary label, 255 leaves.
suppressPackageStartupMessages(library(histboost))
a <- commandArgs(trailingOnly = TRUE)
n <- if (length(a) >= 1) as.numeric(a[1]) else 2e6
rounds <- if (length(a) >= 2) as.integer(a[2]) else 20L
max_bin <- if (length(a) >= 3) as.integer(a[3]) else 255L
quantized <- length(a) >= 4 && a[4] == "1"
set.seed(1)
x <- matrix(rnorm(n * 28), n, 28)
x[, 5:8] <- round(x[, 5:8] * 2) / 2  # a few features with few values
s <- sin(2 * x[, 1]) + x[, 2] * x[, 3] + (x[, 4] > 0.5) + 0.5 * x[, 5] - abs(x[, 6]) + 0.3 * x[, 9] * x[, 10]
y <- factor(runif(n) < plogis(s))
ds <- hb_dataset(x, y, max_bin = max_bin)
fit <- function(r) histboost(ds, nrounds = r, num_leaves = 255L, min_data_in_leaf = 20L, seed = 1,
                             verbose = 0L, device = "cuda", quantized = quantized)
invisible(fit(2L))
t <- system.time(m <- fit(rounds))[["elapsed"]]
cat(sprintf("GPU%s: %g rows, %d rounds, max_bin %d: %.3f s (%.2f ms per round), %d leaves in the last tree\n",
            if (quantized) " quantized" else "", n, rounds, max_bin, t, 1000 * t / rounds, sum(hb_trees(m)$tree == rounds & hb_trees(m)$is_leaf)))
options(histboost.gpu_profile = TRUE)
p <- fit(rounds)$gpu_profile
cat(sprintf(paste("profiled: %.2f ms per round; per split: partition %.1f us, histogram %.1f us,",
                  "split search %.1f us; histogram reads %.0f GB/s\n"),
            p$round_ms / p$rounds, 1000 * p$partition_ms / p$splits, 1000 * p$hist_ms / p$splits,
            1000 * p$split_ms / p$splits, p$hist_bytes / (p$hist_ms * 1e-3) / 1e9))
