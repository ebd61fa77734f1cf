# distributed-gpu.R: data-parallel training on several GPUs (one process a
# GPU, histograms summed through MPI via host memory) against one GPU.
# Higgs-shaped data (28 numeric features, binary label), generated in
# blocks of 2^20 rows seeded by block, so each process makes just its own
# shard of rows and one process all of them. For 1 GPU (no MPI) and for
# 2 .. `gpus` processes: seconds to bin (hb_dataset(device = "cuda")) and to
# train on process 0, MPI bytes each process sent per tree, the seconds
# process 0 spent in MPI collectives (waiting for the others included) and
# how many it made per tree, and whether the model text equals the one-GPU
# model's (it must). Full precision and quantized histograms.
#   Rscript inst/bench/distributed-gpu.R [rows] [rounds] [gpus]
# defaults: 21e6 rows (twice the Higgs shape), 500 rounds, 2 GPUs. With
# HB_BENCH_PROFILE=1 the trainings also time their kernels
# (options(histboost.gpu_profile = TRUE), which slows them a little), and
# the table adds process 0's device microseconds per split in the
# partition, the histogram (with its exchange) and the split search.
suppressPackageStartupMessages(library(histboost))
a <- commandArgs(TRUE)
n <- as.integer(if (length(a) >= 1) a[1] else 21e6)
rounds <- as.integer(if (length(a) >= 2) a[2] else 500)
gpus <- as.integer(if (length(a) >= 3) a[3] else 2)
stopifnot(hb_has_mpi(), hb_has_cuda())

# rows i0 .. i1 (1-based, inclusive) of the data set, the same wherever made
make_rows <- function(i0, i1, n, p = 28L, block = 2^20) {
  b0 <- (i0 - 1) %/% block; b1 <- (i1 - 1) %/% block
  parts <- lapply(b0:b1, function(b) {
    set.seed(1000 + b)
    m <- min(block, n - b * block)
    x <- matrix(rnorm(m * p), m, p)
    lo <- max(i0, b * block + 1) - b * block; hi <- min(i1, b * block + m) - b * block
    x[lo:hi, , drop = FALSE]
  })
  x <- do.call(rbind, parts)
  colnames(x) <- paste0("f", seq_len(p))
  y <- as.integer(x[, 1] + 0.5 * x[, 2] * x[, 3] - 0.3 * abs(x[, 4]) + sin(3 * x[, 5]) > 0)
  list(x = x, y = y)
}
profile <- identical(Sys.getenv("HB_BENCH_PROFILE"), "1")
options(histboost.gpu_profile = profile)
common <- list(nrounds = rounds, num_leaves = 255L, learning_rate = 0.1, min_data_in_leaf = 20L, max_bin = 255L,
               seed = 1, verbose = 0L, device = "cuda")

fit_text <- function(fit) { f <- tempfile(); histboost::hb_save(fit, f); on.exit(unlink(f)); readLines(f) }

train_shard <- function(make_rows, nrow, quantized, common, profile) {
  options(histboost.gpu_profile = profile)
  w <- histboost::hb_mpi_world()
  cut <- round(seq(0, nrow, length.out = w[["size"]] + 1))
  d <- make_rows(cut[w[["rank"]] + 1] + 1, cut[w[["rank"]] + 2], nrow)
  m0 <- histboost:::.hb_mpi_traffic()
  t0 <- proc.time()[["elapsed"]]
  ds <- histboost::hb_dataset(d$x, factor(d$y, levels = 0:1), max_bin = common$max_bin, distributed = "mpi",
                              device = "cuda")
  t1 <- proc.time()[["elapsed"]]
  m1 <- histboost:::.hb_mpi_traffic()
  fit <- do.call(histboost::histboost, c(list(x = ds, distributed = "mpi", quantized = quantized),
                                         common[setdiff(names(common), "max_bin")]))
  t2 <- proc.time()[["elapsed"]]
  m <- histboost:::.hb_mpi_traffic() - m1
  list(bin = t1 - t0, seconds = t2 - t1, bytes = m[["bytes"]], mpi_seconds = m[["seconds"]], calls = m[["calls"]],
       text = {f <- tempfile(); histboost::hb_save(fit, f); readLines(f)}, prof = fit$gpu_profile)
}

res <- NULL
for (quantized in c(FALSE, TRUE)) {
  ref <- NULL
  for (np in seq_len(gpus)) {
    if (np == 1L) {  # one GPU, no MPI
      d <- make_rows(1, n, n)
      t0 <- proc.time()[["elapsed"]]
      ds <- hb_dataset(d$x, factor(d$y, levels = 0:1), max_bin = common$max_bin, device = "cuda")
      t1 <- proc.time()[["elapsed"]]
      fit <- do.call(histboost, c(list(x = ds, quantized = quantized), common[setdiff(names(common), "max_bin")]))
      t2 <- proc.time()[["elapsed"]]
      rm(d, ds); gc()
      ref <- fit_text(fit)
      out <- list(bin = t1 - t0, seconds = t2 - t1, bytes = 0, mpi_seconds = 0, calls = 0, text = ref,
                  prof = fit$gpu_profile)
    } else {
      out <- hb_mpi_run(np, train_shard, make_rows = make_rows, nrow = n, quantized = quantized, common = common,
                        profile = profile, mpirun_args = c("--bind-to", "none"), timeout = 1800)
    }
    res <- rbind(res, data.frame(rows = n, gpus = np, quantized = quantized, bin_s = round(out$bin, 2),
                                 train_s = round(out$seconds, 2), ratio = NA,
                                 mb_per_tree = round(out$bytes / rounds / 2^20, 3),
                                 mpi_s = round(out$mpi_seconds, 2), calls_per_tree = round(out$calls / rounds),
                                 same_model = identical(out$text, ref),
                                 part_us = if (profile) round(1000 * out$prof$partition_ms / out$prof$splits, 1) else NA,
                                 hist_us = if (profile) round(1000 * out$prof$hist_ms / out$prof$splits, 1) else NA,
                                 split_us = if (profile) round(1000 * out$prof$split_ms / out$prof$splits, 1) else NA))
  }
}
res$ratio <- round(res$train_s / ave(res$train_s, res$quantized, FUN = function(v) v[1]), 3)
cat(sprintf("%s; up to %d processes, one GPU each where there are as many; %s\n", hb_device_info()$name, gpus,
            format(Sys.time())))
options(width = 200)
print(res, row.names = FALSE)
