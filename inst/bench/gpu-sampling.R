# Row sampling on the GPU: GOSS, bagging and random forests beside plain
# boosting, trained on the device, and the same GOSS and forest on the CPU
# at fewer rounds, beside the GPU at those rounds (CPU / GPU time), on run.R's Higgs-shaped
# workload binned once. The GPU and the CPU grow the same trees for these
# (tests/testthat/test-cuda.R), so the per-round times compare like with like.
# lightgbm and xgboost are not on the GPU machine; their GPU figures for the
# plain run are in ../shared/gpu-host/README.md (see inst/bench/results/gpu-*.md).
#
#   Rscript inst/bench/gpu-sampling.R [--rows 10500000] [--rounds 500] [--cpu-rounds 40]
#                                     [--threads 16] [--out DIR]
#
# Results go to DIR (default inst/bench/results) as gpu-sampling-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # bench_options(), bench_out(), higgs_split(), metric_auc()
opt <- bench_options(args, list(rows = 10.5e6, rounds = 500L, cpu_rounds = 40L, threads = 16L, out = ""),
                     "gpu-sampling.R")
suppressPackageStartupMessages(library(histboost))
if (!hb_has_cuda()) stop("gpu-sampling.R needs histboost built with CUDA and a GPU")
out <- bench_out(opt$out, here)

n <- as.integer(opt$rows)
sp <- higgs_split(n, 20261125)
t0 <- proc.time()[["elapsed"]]
d <- hb_dataset(sp$xtr, factor(sp$ytr), max_bin = 255L, nthreads = opt$threads)
bin_s <- proc.time()[["elapsed"]] - t0
xte <- sp$xte; yte <- sp$yte
rm(sp)
invisible(gc())
setups <- list(
  gbdt = list(),
  goss = list(goss = TRUE, top_rate = 0.2, other_rate = 0.1),
  bagging = list(bagging_fraction = 0.5, bagging_freq = 1L),
  rf = list(boosting = "rf", bagging_fraction = 0.632, bagging_freq = 1L, feature_fraction = 0.8)
)
fit <- function(setup, device, rounds) {
  do.call(histboost, c(list(d, nrounds = rounds, learning_rate = 0.1, num_leaves = 255L, min_data_in_leaf = 20L,
                            nthreads = opt$threads, seed = 1L, verbose = 0L, device = device), setups[[setup]]))
}
invisible(fit("gbdt", "cuda", 5L))  # warm up: the GPU context, the first allocations
rows <- list()
runs <- list()
for (s in names(setups)) {
  runs[[length(runs) + 1L]] <- list(s, "cuda", opt$rounds)
  # GOSS and the forest on both devices at the CPU's (smaller) number of rounds
  if (s %in% c("goss", "rf")) runs <- c(runs, list(list(s, "cuda", opt$cpu_rounds), list(s, "cpu", opt$cpu_rounds)))
}
for (r in runs) {
  {
    s <- r[[1]]; device <- r[[2]]; rounds <- r[[3]]
    invisible(gc())
    t0 <- proc.time()[["elapsed"]]
    m <- fit(s, device, rounds)
    secs <- proc.time()[["elapsed"]] - t0
    auc <- metric_auc(yte, predict(m, xte, nthreads = opt$threads))
    cat(sprintf("%-8s %-4s %4d rounds %7.2f s  %.2f ms/round  AUC %.4f\n", s, device, rounds, secs,
                1000 * secs / rounds, auc))
    rows[[length(rows) + 1L]] <- data.frame(setup = s, device = device, rounds = rounds, seconds = secs,
                                            ms_per_round = 1000 * secs / rounds, test_auc = auc)
  }
}
tab <- do.call(rbind, rows)
gb <- tab$ms_per_round[tab$setup == "gbdt" & tab$device == "cuda"]
tab$vs_gpu_gbdt <- tab$ms_per_round / gb
tab$cpu_over_gpu <- NA_real_
for (s in c("goss", "rf")) {
  k <- tab$setup == s & tab$rounds == opt$cpu_rounds
  tab$cpu_over_gpu[k & tab$device == "cpu"] <- tab$ms_per_round[k & tab$device == "cpu"] /
    tab$ms_per_round[k & tab$device == "cuda"][1]
}
print(tab, digits = 4)
stamp <- format(Sys.Date())
base <- file.path(out, sprintf("gpu-sampling-%s", stamp))
utils::write.csv(tab, paste0(base, ".csv"), row.names = FALSE)
fmt <- function(v, dg) ifelse(is.na(v), "", formatC(v, format = "f", digits = dg))
md <- c(sprintf("# Row sampling on the GPU, %s", stamp), "",
        sprintf("Device: %s; %d CPU threads. R %s, histboost %s.", hb_device_info()$status, opt$threads,
                getRversion(), as.character(utils::packageVersion("histboost"))),
        sprintf(paste("Data: run.R's Higgs-shaped workload, %d train rows x 28 features (binned once, %.1f s),",
                      "%d test rows. 255 leaves, learning rate 0.1, min_data_in_leaf 20; GOSS top 0.2, other 0.1;",
                      "bagging 0.5 every round; rf: bagging 0.632, feature_fraction 0.8."), n, bin_s, length(yte)),
        sprintf("Command: `Rscript inst/bench/gpu-sampling.R %s`", paste(args, collapse = " ")), "",
        "| setup | device | rounds | seconds | ms per round | vs GPU gbdt | CPU / GPU | test AUC |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        sprintf("| %s | %s | %d | %s | %s | %sx | %s | %s |", tab$setup, tab$device, tab$rounds, fmt(tab$seconds, 2),
                fmt(tab$ms_per_round, 2), fmt(tab$vs_gpu_gbdt, 2),
                ifelse(is.na(tab$cpu_over_gpu), "", paste0(fmt(tab$cpu_over_gpu, 1), "x")), fmt(tab$test_auc, 4)))
writeLines(md, paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
