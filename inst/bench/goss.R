# GOSS (gradient-based one-side sampling): training time and test AUC with
# and without it, histboost beside lightgbm (data_sample_strategy = "goss"),
# on run.R's Higgs-shaped workload, the same parameters for both.
#
#   Rscript inst/bench/goss.R [--rows 1000000] [--rounds 100] [--threads 2] [--reps 3] [--lib DIR] [--out DIR]
#
# Results go to DIR (default inst/bench/results) as goss-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # gen_higgs(), metric_auc()
opt <- bench_options(args, list(rows = 1e6, rounds = 100L, threads = 2L, reps = 3L, lib = "", out = ""), "goss.R")
suppressPackageStartupMessages(library(histboost))
has_lgb <- requireNamespace("lightgbm", quietly = TRUE)
out <- bench_out(opt$out, here)

n <- as.integer(opt$rows)
sp <- higgs_split(n, 20261125)
xtr <- sp$xtr; ytr <- sp$ytr; xte <- sp$xte; yte <- sp$yte
nt <- length(yte)
rm(sp)
fit <- function(pkg, goss) {
  if (pkg == "histboost") {
    return(histboost(xtr, factor(ytr), nrounds = opt$rounds, num_leaves = 255L, learning_rate = 0.1,
                     min_data_in_leaf = 20L, goss = goss, top_rate = 0.2, other_rate = 0.1,
                     nthreads = opt$threads, seed = 1L, verbose = 0L))
  }
  p <- list(objective = "binary", num_leaves = 255L, learning_rate = 0.1, min_data_in_leaf = 20L,
            num_threads = opt$threads, verbose = -1L, seed = 1L)
  if (goss) p <- c(p, list(data_sample_strategy = "goss", top_rate = 0.2, other_rate = 0.1))
  lightgbm::lgb.train(params = p, data = lightgbm::lgb.Dataset(xtr, label = ytr), nrounds = opt$rounds,
                      verbose = -1L)
}
runs <- expand.grid(goss = c(FALSE, TRUE), pkg = c("histboost", if (has_lgb) "lightgbm"),
                    stringsAsFactors = FALSE)
secs <- matrix(NA_real_, nrow(runs), opt$reps)
auc <- numeric(nrow(runs))
for (r in seq_len(opt$reps)) for (k in seq_len(nrow(runs))) {
  gc()
  t0 <- proc.time()[["elapsed"]]
  m <- fit(runs$pkg[k], runs$goss[k])
  secs[k, r] <- proc.time()[["elapsed"]] - t0
  if (r == 1L) {
    pr <- if (runs$pkg[k] == "histboost") predict(m, xte) else predict(m, xte)
    auc[k] <- metric_auc(yte, pr)
  }
  cat(sprintf("rep %d %-9s goss=%-5s %6.2f s\n", r, runs$pkg[k], runs$goss[k], secs[k, r]))
}
tab <- data.frame(runs, seconds = apply(secs, 1L, stats::median), auc = auc)
tab$speedup <- NA_real_
for (p in unique(tab$pkg)) tab$speedup[tab$pkg == p] <- tab$seconds[tab$pkg == p & !tab$goss] / tab$seconds[tab$pkg == p]
print(tab, digits = 4)
stamp <- format(Sys.Date())
base <- file.path(out, sprintf("goss-%s", stamp))
utils::write.csv(tab, paste0(base, ".csv"), row.names = FALSE)
ver <- bench_version
cpu <- bench_cpu()
writeLines(c(sprintf("# GOSS, %s", stamp), "",
             sprintf("Machine: %s; %d threads. R %s; histboost %s, lightgbm %s.", cpu, opt$threads, getRversion(),
                     ver("histboost"), ver("lightgbm")),
             sprintf(paste("Data: run.R's Higgs-shaped workload, %d train rows x %d features, %d test rows; %d rounds,",
                           "255 leaves, learning rate 0.1; GOSS top_rate 0.2, other_rate 0.1. Median of %d runs."),
                     n, ncol(xtr), nt, opt$rounds, opt$reps),
             sprintf("Command: `Rscript inst/bench/goss.R %s`", paste(args, collapse = " ")), "",
             "| package | goss | seconds | speed-up from GOSS | test AUC |", "|---|---|---:|---:|---:|",
             sprintf("| %s | %s | %.2f | %.2fx | %.4f |", tab$pkg, tab$goss, tab$seconds, tab$speedup, tab$auc)),
           paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
