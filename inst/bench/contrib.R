# Prediction contributions (SHAP values, predict(type = "contrib")): time to
# explain rows with histboost, lightgbm (type = "contrib") and xgboost
# (predcontrib = TRUE), each with its own model trained on the same data
# with matched parameters, reported as ratios to the fastest peer. Every
# package's contributions are also checked to sum to its raw predictions.
#
#   Rscript inst/bench/contrib.R [--rows 200000] [--explain 20000] [--rounds 100]
#                                [--leaves 63] [--threads 2] [--reps 3] [--lib DIR] [--out DIR]
#
# Data: run.R's Higgs-shaped workload (28 numeric features, binary label).
# Results go to DIR (default inst/bench/results) as contrib-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # gen_higgs()
opt <- bench_options(args, list(rows = 2e5, explain = 2e4, rounds = 100L, leaves = 63L, threads = 2L, reps = 3L, lib = "", out = ""), "contrib.R")
suppressPackageStartupMessages(library(histboost))
peers <- Filter(function(p) requireNamespace(p, quietly = TRUE), c("lightgbm", "xgboost"))
out <- bench_out(opt$out, here)

set.seed(20261125)
n <- as.integer(opt$rows)
ne <- as.integer(opt$explain)
w <- gen_higgs(n + ne)
xtr <- w$x[seq_len(n), ]
ytr <- w$y[seq_len(n)]
xe <- w$x[n + seq_len(ne), ]
rm(w)
cat(sprintf("%d train rows x %d features; explaining %d rows; %d rounds of %d leaves; %d threads\n",
            n, ncol(xtr), ne, opt$rounds, opt$leaves, opt$threads))

train <- function(pkg) {
  switch(pkg,
    histboost = histboost(xtr, factor(ytr), nrounds = opt$rounds, learning_rate = 0.1, num_leaves = opt$leaves,
                          min_data_in_leaf = 20L, nthreads = opt$threads, seed = 1L, verbose = 0L),
    lightgbm = lightgbm::lgb.train(
      params = list(objective = "binary", num_leaves = opt$leaves, learning_rate = 0.1, min_data_in_leaf = 20L,
                    num_threads = opt$threads, verbose = -1L, seed = 1L),
      data = lightgbm::lgb.Dataset(xtr, label = ytr), nrounds = opt$rounds, verbose = -1L),
    xgboost = xgboost::xgb.train(
      params = list(objective = "binary:logistic", tree_method = "hist", grow_policy = "lossguide",
                    max_leaves = opt$leaves, max_depth = 0L, eta = 0.1, min_child_weight = 1e-3,
                    nthread = opt$threads),
      data = xgboost::xgb.DMatrix(xtr, label = ytr), nrounds = opt$rounds, verbose = 0))
}
contrib <- function(pkg, m) {
  switch(pkg,
    histboost = predict(m, xe, type = "contrib", nthreads = opt$threads),
    lightgbm = predict(m, xe, type = "contrib", params = list(num_threads = opt$threads)),
    xgboost = predict(m, xgboost::xgb.DMatrix(xe), predcontrib = TRUE))
}
raw <- function(pkg, m) {
  switch(pkg,
    histboost = predict(m, xe, type = "raw"),
    lightgbm = predict(m, xe, type = "raw"),
    xgboost = predict(m, xgboost::xgb.DMatrix(xe), outputmargin = TRUE))
}

pkgs <- c("histboost", peers)
models <- lapply(setNames(pkgs, pkgs), train)
secs <- matrix(NA_real_, length(pkgs), opt$reps, dimnames = list(pkgs, NULL))
sum_err <- setNames(numeric(length(pkgs)), pkgs)
for (r in seq_len(opt$reps)) for (p in pkgs) {
  gc()
  t0 <- proc.time()[["elapsed"]]
  ph <- contrib(p, models[[p]])
  secs[p, r] <- proc.time()[["elapsed"]] - t0
  if (r == 1L) sum_err[p] <- max(abs(rowSums(as.matrix(ph)) - raw(p, models[[p]])))
  cat(sprintf("rep %d %-9s %7.3f s\n", r, p, secs[p, r]))
}
med <- apply(secs, 1L, stats::median)
best_peer <- if (length(peers)) min(med[peers]) else NA_real_
tab <- data.frame(package = pkgs, seconds = med, rows_per_s = ne / med,
                  ratio_to_best_peer = med / best_peer, max_sum_error = sum_err, row.names = NULL)
print(tab, digits = 4)

stamp <- format(Sys.Date())
base <- file.path(out, sprintf("contrib-%s", stamp))
utils::write.csv(tab, paste0(base, ".csv"), row.names = FALSE)
ver <- bench_version
cpu <- bench_cpu()
commit <- tryCatch(system2("git", c("-C", here, "rev-parse", "--short", "HEAD"), stdout = TRUE, stderr = FALSE),
                   error = function(e) "unknown", warning = function(e) "unknown")
md <- c(sprintf("# Prediction contributions (SHAP), %s", stamp), "",
        sprintf("Machine: %s; %d threads. R %s; histboost %s (commit %s), lightgbm %s, xgboost %s.", cpu,
                opt$threads, getRversion(), ver("histboost"), paste(commit, collapse = ""), ver("lightgbm"),
                ver("xgboost")),
        sprintf(paste("Data: run.R's Higgs-shaped workload, %d train rows x %d features; contributions of %d",
                      "other rows. Each package its own model: %d rounds, %d leaves, learning rate 0.1",
                      "(xgboost: hist, lossguide). Median of %d runs."),
                n, ncol(xtr), ne, opt$rounds, opt$leaves, opt$reps),
        sprintf("Command: `Rscript inst/bench/contrib.R %s`", paste(args, collapse = " ")), "",
        "| package | seconds | rows / s | time / best peer's | max \\|row sum - raw\\| |",
        "|---|---:|---:|---:|---:|",
        sprintf("| %s | %.3f | %.0f | %s | %.2g |", tab$package, tab$seconds, tab$rows_per_s,
                ifelse(is.na(tab$ratio_to_best_peer), "", sprintf("%.2fx", tab$ratio_to_best_peer)),
                tab$max_sum_error))
writeLines(md, paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
