# tools/gpu/ab.R LIB LABEL [ROUNDS]: GPU training times of the histboost
# installed in LIB, on run.R's Higgs-shaped data (10.5M rows x 28 features,
# made once and kept in /tmp/higgs.rds so that every build times the same
# rows): 255 leaves, learning rate 0.1, full precision and quantized, two
# runs each, with a checksum of 200,000 predictions (equal checksums: the
# same model), then a profiled run (per-split partition, histogram and
# split-search times). tools/gpu/variants.sh runs it for several builds.
a <- commandArgs(TRUE)
suppressPackageStartupMessages(library(histboost, lib.loc = a[1]))
rounds <- if (length(a) >= 3) as.integer(a[3]) else 500L
source("tools/gpu/higgs-data.R")
w <- higgs_data()
ds <- hb_dataset(w$x, factor(w$y), max_bin = 255L)
fit <- function(r, q, prof = FALSE) {
  options(histboost.gpu_profile = prof)
  histboost(ds, nrounds = r, num_leaves = 255L, min_data_in_leaf = 20L, learning_rate = 0.1, seed = 1,
            verbose = 0L, device = "cuda", quantized = q)
}
invisible(fit(3L, FALSE)); invisible(fit(3L, TRUE))
for (q in c(FALSE, TRUE)) for (rep in 1:2) {
  t <- system.time(m <- fit(rounds, q))[["elapsed"]]
  p <- predict(m, w$x[1:200000, ], type = "raw")
  cat(sprintf("%s quantized=%d run %d: %.3f s (%.2f ms a round), prediction checksum %.15g\n",
              a[2], q, rep, t, 1000 * t / rounds, sum(p)))
}
p <- fit(100L, FALSE, TRUE)$gpu_profile
cat(sprintf("%s profiled: %.2f ms a round; a split: partition %.1f us, histogram %.1f us, split search %.1f us\n",
            a[2], p$round_ms / p$rounds, 1000 * p$partition_ms / p$splits, 1000 * p$hist_ms / p$splits,
            1000 * p$split_ms / p$splits))
