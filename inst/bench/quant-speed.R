# Quantized training speed (issue "Quantized training"): histogram building and
# whole training, quantized vs full precision, on the Higgs-shaped workload of
# run.R (workload 1), side by side with lightgbm's own quantized training.
#
#   Rscript inst/bench/quant-speed.R [--rows 1000000] [--rounds 100] [--threads 2]
#                                    [--bits 4] [--reps 3] [--device cpu] [--out DIR]
#
# CPU (--device cpu):
#  - histogram kernel: the full-precision and the quantized histogram of the
#    same rows (all training rows, and a random eighth of them, the size of a
#    typical smaller child), built by the engine's own kernels on the data's
#    bins (C_hb_hist_time: median of 15 builds each);
#  - whole training of 255 leaves, learning rate 0.1, min_data_in_leaf 20,
#    max_bin 255 (run.R's parameters): histboost with quantized = FALSE and
#    TRUE (grad_bits --bits, stochastic rounding, refit leaves), lightgbm with
#    use_quantized_grad FALSE and TRUE. lightgbm's num_grad_quant_bins is set
#    to 2 * (2^(bits-1) - 1), which gives its gradients the same integer range
#    as ours (-7..7 at 4 bits), with quant_train_renew_leaf = TRUE (our refit).
#    Median of --reps runs, the packages alternating; the test AUC of each.
# GPU (--device cuda): the whole training, quantized vs not, and the time in
# the histogram kernels from histboost's GPU profile (lightgbm is CPU-only here).
# Results go to DIR (default inst/bench/results) as quant-speed-<device>-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # bench_options(), higgs_split(), metric_auc()
opt <- bench_options(args, list(rows = 1e6, rounds = 100L, threads = 2L, bits = 4L, reps = 3L, device = "cpu",
                                out = ""), "quant-speed.R")
suppressPackageStartupMessages(library(histboost))
has_lgb <- opt$device == "cpu" && requireNamespace("lightgbm", quietly = TRUE)
out <- bench_out(opt$out, here)

n <- as.integer(opt$rows)
sp <- higgs_split(n, 20261122)
xtr <- sp$xtr; ytr <- sp$ytr; xte <- sp$xte; yte <- sp$yte
n_test <- length(yte)
rm(sp)
lg <- 2L^(opt$bits - 1L) - 1L  # gradient levels: -lg..lg
cat(sprintf("%d train rows x %d features, %d rounds, %d threads, %d-bit gradients, device %s\n",
            n, ncol(xtr), opt$rounds, opt$threads, opt$bits, opt$device))

rows_tab <- list()
add <- function(...) rows_tab[[length(rows_tab) + 1L]] <<- data.frame(..., stringsAsFactors = FALSE)

# The histogram kernels alone (CPU).
if (opt$device == "cpu") {
  d <- hb_dataset(xtr, factor(ytr), max_bin = 255L, nthreads = opt$threads)
  p <- plogis(rnorm(n, sd = 1.5))  # gradients as in a mid-training logistic round
  g <- p - ytr
  h <- p * (1 - p)
  gq <- as.integer(round(g / max(abs(g)) * lg))
  hq <- as.integer(round(h / max(h) * (2L^opt$bits - 1L)))
  for (sub in c("all rows", "1/8 of the rows")) {
    rows <- if (sub == "all rows") NULL else sort(sample.int(n, n %/% 8L))
    t <- .Call(histboost:::C_hb_hist_time, d$ptr, rows, g, h, gq, hq, opt$bits, 15L, opt$threads)
    cat(sprintf("histogram of %s: full %.2f ms, quantized %.2f ms (%.2fx)\n", sub, t[1], t[2], t[1] / t[2]))
    add(what = sprintf("histogram kernel, %s", sub), package = "histboost", full = t[1], quantized = t[2],
        unit = "ms", speedup = t[1] / t[2], auc_full = NA, auc_quantized = NA)
  }
  rm(d)
}

# Whole training. On the CPU each training bins its data (lightgbm's timing
# includes lgb.Dataset() too); on the GPU the data are binned once, outside.
data_args <- if (opt$device == "cuda") list(hb_dataset(xtr, factor(ytr), max_bin = 255L, nthreads = opt$threads)) else
  list(xtr, factor(ytr))
fit_hb <- function(quantized, profile = FALSE) {
  old <- options(histboost.gpu_profile = profile)
  on.exit(options(old))
  do.call(histboost, c(data_args, list(nrounds = opt$rounds, learning_rate = 0.1, num_leaves = 255L,
            min_data_in_leaf = 20L, max_bin = 255L, nthreads = opt$threads, seed = 1L, verbose = 0L,
            device = opt$device, quantized = quantized, grad_bits = opt$bits)))
}
fit_lgb <- function(quantized) {
  params <- list(objective = "binary", num_leaves = 255L, max_depth = -1L, learning_rate = 0.1,
                 min_data_in_leaf = 20L, min_sum_hessian_in_leaf = 1e-3, max_bin = 255L,
                 num_threads = opt$threads, verbose = -1L, seed = 1L, use_quantized_grad = quantized,
                 num_grad_quant_bins = 2L * lg, quant_train_renew_leaf = TRUE, stochastic_rounding = TRUE)
  ds <- lightgbm::lgb.Dataset(xtr, label = ytr, params = list(max_bin = 255L, verbose = -1L))
  lightgbm::lgb.train(params = params, data = ds, nrounds = opt$rounds, verbose = -1L)
}
runs <- list(list(pkg = "histboost", q = FALSE), list(pkg = "histboost", q = TRUE))
if (has_lgb) runs <- c(runs, list(list(pkg = "lightgbm", q = FALSE), list(pkg = "lightgbm", q = TRUE)))
secs <- matrix(NA_real_, length(runs), opt$reps)
auc <- numeric(length(runs))
invisible(fit_hb(FALSE))  # warm up (page faults, the GPU context)
for (r in seq_len(opt$reps)) for (k in seq_along(runs)) {
  gc()
  ru <- runs[[k]]
  t0 <- proc.time()[["elapsed"]]
  m <- if (ru$pkg == "histboost") fit_hb(ru$q) else fit_lgb(ru$q)
  secs[k, r] <- proc.time()[["elapsed"]] - t0
  if (r == 1L) {
    pr <- if (ru$pkg == "histboost") predict(m, xte, type = "response")
          else predict(m, xte, params = list(num_threads = opt$threads))
    if (is.matrix(pr)) pr <- pr[, ncol(pr)]
    auc[k] <- metric_auc(yte, pr)
  }
  cat(sprintf("rep %d %-9s %-9s %6.2f s\n", r, ru$pkg, if (ru$q) "quantized" else "full", secs[k, r]))
}
med <- apply(secs, 1L, stats::median)
for (pkg in unique(vapply(runs, `[[`, "", "pkg"))) {
  k <- which(vapply(runs, `[[`, "", "pkg") == pkg)
  kf <- k[!vapply(runs[k], `[[`, TRUE, "q")]
  kq <- k[vapply(runs[k], `[[`, TRUE, "q")]
  add(what = "whole training", package = pkg, full = med[kf], quantized = med[kq], unit = "s",
      speedup = med[kf] / med[kq], auc_full = auc[kf], auc_quantized = auc[kq])
}
if (opt$device == "cuda") {
  pf <- fit_hb(FALSE, TRUE)$gpu_profile
  pq <- fit_hb(TRUE, TRUE)$gpu_profile
  add(what = "histogram kernels per round (GPU profile)", package = "histboost",
      full = pf$hist_ms / pf$rounds, quantized = pq$hist_ms / pq$rounds, unit = "ms",
      speedup = pf$hist_ms / pq$hist_ms, auc_full = NA, auc_quantized = NA)
}
tab <- do.call(rbind, rows_tab)
print(tab, digits = 4)

stamp <- format(Sys.Date())
base <- file.path(out, sprintf("quant-speed-%s-%s", opt$device, stamp))
utils::write.csv(tab, paste0(base, ".csv"), row.names = FALSE)
fmt <- function(v, d) ifelse(is.na(v), "", formatC(v, format = "f", digits = d))
ver <- function(p) if (requireNamespace(p, quietly = TRUE)) as.character(utils::packageVersion(p)) else "not installed"
cpu <- tryCatch(sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                error = function(e) "unknown")
dev <- if (opt$device == "cuda") hb_device_info()$status else cpu
lt <- if (has_lgb) sprintf(" lightgbm %s.", ver("lightgbm")) else " lightgbm not run (GPU machine, or not installed)."
md <- c(sprintf("# Quantized training speed, %s (device %s)", stamp, opt$device), "",
        sprintf("Machine: %s; %d threads. R %s, histboost %s.%s", dev, opt$threads,
                getRversion(), ver("histboost"), lt),
        sprintf("Data: run.R's Higgs-shaped workload, %d train rows x %d features, %d test rows.", n, ncol(xtr), n_test),
        sprintf(paste("Training: %d rounds, 255 leaves, learning rate 0.1, min_data_in_leaf 20, max_bin 255;",
                      "quantized = %d-bit gradients, stochastic rounding, leaves refit (lightgbm:",
                      "num_grad_quant_bins = %d, quant_train_renew_leaf = TRUE). Median of %d runs."),
                opt$rounds, opt$bits, 2L * lg, opt$reps),
        sprintf("Command: `Rscript inst/bench/quant-speed.R %s`", paste(args, collapse = " ")), "",
        "| what | package | full precision | quantized | unit | speed-up | AUC full | AUC quantized |",
        "|---|---|---:|---:|---|---:|---:|---:|",
        sprintf("| %s | %s | %s | %s | %s | %sx | %s | %s |", tab$what, tab$package, fmt(tab$full, 2),
                fmt(tab$quantized, 2), tab$unit, fmt(tab$speedup, 2), fmt(tab$auc_full, 4), fmt(tab$auc_quantized, 4)))
writeLines(md, paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
