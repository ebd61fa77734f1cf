# distributed.R: data-parallel training over MPI against one process.
# Higgs-shaped data (28 numeric features, binary label), the same total
# cores split as 1 process x 16 threads, 2 x 8 and 4 x 4 (MPI, on this
# machine), full precision and quantized histograms: wall time of
# histboost() on process 0, MPI bytes each process sent per tree, the
# seconds process 0 spent inside MPI collectives (waiting for the others
# included) and how many it made per tree, and whether the model text
# equals the one-process model's (it must, quantized).
#   Rscript inst/bench/distributed.R [rows] [rounds] [cores]
# defaults: 10.5e6 rows, 100 rounds, 16 cores (the lead's machine); a quick
# check of correctness: Rscript inst/bench/distributed.R 20000 5 2
# HB_DIST_NP picks the process counts (default "1,2,4"; 1 is the reference
# the models are compared with). With HB_DIST_PROFILE=1, process 0's
# training phases too (?histboost's cpu_profile, in seconds): the rounds,
# the trees in them, and inside the trees the partitions, the histograms
# (their sums over the processes included) and the split search; `bin_s` is
# the call's time less the rounds' (binning, setup).
suppressPackageStartupMessages(library(histboost))
profile <- identical(Sys.getenv("HB_DIST_PROFILE"), "1")
a <- commandArgs(TRUE)
n <- as.integer(if (length(a) >= 1) a[1] else 10.5e6)
rounds <- as.integer(if (length(a) >= 2) a[2] else 100)
cores <- as.integer(if (length(a) >= 3) a[3] else 16)
stopifnot(hb_has_mpi())

dir <- tempfile("hb_dist_bench_")
dir.create(dir)
set.seed(1)
p <- 28
x <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("f", seq_len(p))))
y <- as.integer(x[, 1] + 0.5 * x[, 2] * x[, 3] - 0.3 * abs(x[, 4]) + rnorm(n) > 0)
nps <- as.integer(strsplit(Sys.getenv("HB_DIST_NP", "1,2,4"), ",")[[1]])  # the process counts to run
configs <- Filter(function(k) k[1] <= cores && k[1] %in% nps, list(c(1L, cores), c(2L, cores %/% 2L), c(4L, cores %/% 4L)))
for (np in unique(vapply(configs, `[`, 1L, 1L))) {   # row shards, contiguous, for each process count
  cut <- split(seq_len(n), rep(seq_len(np), diff(round(seq(0, n, length.out = np + 1)))))
  for (r in seq_len(np)) saveRDS(list(x = x[cut[[r]], , drop = FALSE], y = y[cut[[r]]]),
                                 file.path(dir, sprintf("np%d-part%d.rds", np, r - 1L)), compress = FALSE)
}
common <- list(nrounds = rounds, num_leaves = 255L, learning_rate = 0.1, min_data_in_leaf = 20L,
               seed = 1, verbose = 0L)

phases <- function(p, seconds) {
  if (is.null(p)) return(NULL)
  data.frame(bin_s = round(seconds - p$round_ms / 1000, 2), rounds_s = round(p$round_ms / 1000, 2),
             trees_s = round(p$tree_ms / 1000, 2), part_s = round(p$partition_ms / 1000, 2),
             hist_s = round(p$hist_ms / 1000, 2), split_s = round(p$split_ms / 1000, 2))
}

train_shard <- function(dir, nproc, quantized, common, profile) {
  if (profile) options(histboost.cpu_profile = TRUE)
  w <- histboost::hb_mpi_world()
  d <- readRDS(file.path(dir, sprintf("np%d-part%d.rds", nproc, w[["rank"]])))
  m0 <- histboost:::.hb_mpi_traffic()
  t0 <- proc.time()[["elapsed"]]
  fit <- do.call(histboost::histboost, c(list(x = d$x, y = factor(d$y), distributed = "mpi",
                                              quantized = quantized), common))
  el <- proc.time()[["elapsed"]] - t0
  f <- tempfile()
  histboost::hb_save(fit, f)
  m <- histboost:::.hb_mpi_traffic() - m0
  list(seconds = el, bytes = m[["bytes"]], mpi_seconds = m[["seconds"]], calls = m[["calls"]], text = readLines(f),
       profile = fit$cpu_profile)
}

res <- NULL
for (quantized in c(FALSE, TRUE)) {
  ref <- NULL
  for (k in configs) {
    np <- k[1]; th <- k[2]
    if (np == 1L) {  # the one-process reference, without MPI
      old <- options(histboost.nthreads = th, histboost.cpu_profile = profile)
      t0 <- proc.time()[["elapsed"]]
      fit <- do.call(histboost, c(list(x = x, y = factor(y), quantized = quantized), common))
      sec <- proc.time()[["elapsed"]] - t0
      options(old)
      f <- tempfile(); hb_save(fit, f); ref <- readLines(f)
      out <- list(seconds = sec, bytes = 0, mpi_seconds = 0, calls = 0, text = ref, profile = fit$cpu_profile)
    } else {
      out <- hb_mpi_run(np, train_shard, dir = dir, nproc = np, quantized = quantized, common = common, profile = profile,
                        mpirun_args = c("--bind-to", "none", "-x", paste0("HISTBOOST_NUM_THREADS=", th)))
    }
    row <- data.frame(rows = n, processes = np, threads = th, quantized = quantized,
                      seconds = round(out$seconds, 2),
                      mb_per_tree = round(out$bytes / rounds / 2^20, 3),
                      mpi_seconds = round(out$mpi_seconds, 2), calls_per_tree = round(out$calls / rounds),
                      same_model = identical(out$text, ref))
    if (profile) row <- cbind(row, phases(out$profile, out$seconds))
    res <- rbind(res, row)
  }
}
print(res, row.names = FALSE)
unlink(dir, recursive = TRUE)
