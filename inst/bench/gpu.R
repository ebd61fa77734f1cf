# GPU benchmark (issue "GPU training with CUDA"): histboost with device =
# "cuda" on Higgs-shaped data, against histboost on the CPU of the same
# machine.
#
#   Rscript inst/bench/gpu.R [--rows 10500000] [--test-rows 500000] [--rounds 500]
#                            [--max-bin 63,255] [--cpu-rounds 100] [--cpu-threads 0]
#                            [--profile-rounds 100] [--contrib-rows 2000] [--out DIR]
#
# For each max_bin: the time to bin the data (hb_dataset, once, not part of
# training), the training time for --rounds rounds of 255 leaves (learning
# rate 0.1, min_data_in_leaf 20; the timed run has no profiling), the test
# AUC; then a profiled run of --profile-rounds rounds for the share of time in
# the histogram kernels and the bytes they read; the root histogram kernel
# alone (all rows; median of 20 launches) and its bandwidth beside the
# device-to-device copy bandwidth measured here, and the same kernel with
# 4-bit quantized gradients (one packed atomic per feature and row) beside
# it; the training time with quantized = TRUE (4 bits); and histboost on the CPU
# (all cores unless --cpu-threads) for --cpu-rounds rounds, with the GPU
# model's AUC at the same iteration; prediction of the test rows on the GPU
# and on the CPU (all cores), and of the training rows on the GPU; SHAP
# contributions (type = "contrib") of the first --contrib-rows test rows on
# the GPU and on the CPU (all cores), and whether they are identical; and the
# user's whole wait on the GPU: binning there (hb_dataset(device = "cuda"),
# the same bins), training, predicting the test rows, and one call of
# histboost(x, y, device = "cuda") from the R matrix, beside XGBoost's and
# LightGBM's recorded figures (../shared/gpu-host/README.md, an H100: build
# plus training). Results go to DIR (default inst/bench/results) as
# gpu-<date>.md and .csv.

suppressPackageStartupMessages(library(histboost))
options(warn = 1)

args <- commandArgs(trailingOnly = TRUE)
opt <- list(rows = 10.5e6, test_rows = 5e5, rounds = 500L, max_bin = "63,255", cpu_rounds = 100L,
            cpu_threads = 0L, profile_rounds = 100L, contrib_rows = 2000L, out = "")
i <- 1L
while (i <= length(args)) {
  key <- gsub("-", "_", sub("^--", "", args[[i]]))
  if (!key %in% names(opt) || i == length(args)) stop("usage: see the top of inst/bench/gpu.R", call. = FALSE)
  opt[[key]] <- if (is.character(opt[[key]])) args[[i + 1L]] else as(args[[i + 1L]], class(opt[[key]]))
  i <- i + 2L
}
max_bins <- as.integer(strsplit(opt$max_bin, ",")[[1]])
info <- hb_device_info()
if (!isTRUE(info$available)) stop("no GPU: ", info$status, call. = FALSE)

bench_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(bench_dir, "higgs.R"))  # make_higgs(), auc()

secs <- function(expr) unname(system.time(expr)[["elapsed"]])

cat(sprintf("device: %s (compute %s, %d SMs, %.0f GiB), CUDA runtime %s, driver %s\n", info$name,
            info$compute_capability, info$multiprocessors, info$memory / 2^30, info$cuda_runtime, info$cuda_driver))
t_gen <- secs({
  tr <- make_higgs(opt$rows, 1)
  te <- make_higgs(opt$test_rows, 2)
})
cat(sprintf("data: %d train x 28, %d test (generated in %.1f s)\n", nrow(tr$x), nrow(te$x), t_gen))
copy_gbps <- histboost:::.hb_cuda_copy_bandwidth(2^30, 20L)
cat(sprintf("device-to-device copy: %.0f GB/s (read + write)\n", copy_gbps))
ytest <- te$y == "s"
cpu_threads <- if (opt$cpu_threads > 0) opt$cpu_threads else parallel::detectCores()

rows <- list()
for (mb in max_bins) {
  t_bin <- secs(ds <- hb_dataset(tr$x, tr$y, max_bin = mb))
  invisible(hb_dataset(tr$x[1:1000, ], tr$y[1:1000], max_bin = mb, device = "cuda"))  # warm-up
  t_bin_gpu <- secs(dsg <- hb_dataset(tr$x, tr$y, max_bin = mb, device = "cuda"))
  rm(dsg)
  common <- list(ds, nrounds = opt$rounds, num_leaves = 255L, learning_rate = 0.1, min_data_in_leaf = 20L,
                 seed = 1, verbose = 0L)
  invisible(do.call(histboost, modifyList(common, list(nrounds = 2L, device = "cuda"))))  # warm-up
  t_gpu <- secs(fit <- do.call(histboost, c(common, device = "cuda")))
  auc_gpu <- auc(ytest, predict(fit, te$x))
  # prediction of the test rows: the GPU (after a warm-up; the median of 3)
  # beside the CPU's threads, and the largest difference between them; then
  # the GPU on all the training rows
  invisible(predict(fit, te$x[1:1000, ], device = "cuda"))
  # (a plain loop: p_gpu assigned inside a vapply() closure would stay local to it)
  t_pred <- numeric(3)
  for (k in 1:3) t_pred[k] <- secs(p_gpu <- predict(fit, te$x, device = "cuda"))
  t_pred_gpu <- stats::median(t_pred)
  t_pred_cpu <- secs(p_cpu <- predict(fit, te$x, nthreads = cpu_threads))
  pred_diff <- max(abs(p_gpu - p_cpu))
  t_pred_gpu_train <- secs(invisible(predict(fit, tr$x, type = "raw", device = "cuda")))
  # the same rows with the first tree only: the copies and the host's work
  # on the rows are the same, so the difference is the other trees' walks
  # on the device (issue 25's "0.3 s plus the copy")
  t_pred_gpu_train_1 <- secs(invisible(predict(fit, tr$x, type = "raw", iteration = 1L, device = "cuda")))
  # one call from the R matrix: binning and training on the GPU, then the model's AUC (the same model)
  t_call <- secs(cfit1 <- do.call(histboost, c(list(tr$x, tr$y, max_bin = mb), common[-1L], device = "cuda")))
  call_same <- identical(cfit1$model_text, fit$model_text)
  rm(cfit1)
  # contributions of the first --contrib-rows test rows: the GPU (after a
  # warm-up) beside the CPU's threads, and whether they agree bit for bit
  cx <- te$x[seq_len(min(opt$contrib_rows, nrow(te$x))), , drop = FALSE]
  invisible(predict(fit, cx[1:10, , drop = FALSE], type = "contrib", device = "cuda"))
  t_contrib_gpu <- secs(c_gpu <- predict(fit, cx, type = "contrib", device = "cuda"))
  t_contrib_cpu <- secs(c_cpu <- predict(fit, cx, type = "contrib", nthreads = cpu_threads))
  contrib_identical <- identical(c_gpu, c_cpu)
  # the kernel's share and bytes, from a profiled run
  options(histboost.gpu_profile = TRUE)
  pfit <- do.call(histboost, modifyList(common, list(nrounds = opt$profile_rounds, device = "cuda")))
  options(histboost.gpu_profile = NULL)
  prof <- pfit$gpu_profile
  # the root histogram kernel alone: all rows, as the first histogram of a tree
  g <- rnorm(ds$nrow); h <- runif(ds$nrow, 0.1, 0.25)
  root <- histboost:::.hb_cuda_hist(ds, g, h, reps = 20L)
  words <- ceiling(28 / 4)
  root_bytes <- ds$nrow * (4 * words + 8)
  root_gbps <- root_bytes / (root$ms * 1e-3) / 1e9
  # the same with 4-bit levels (gradient -7..7, hessian 0..15), as quantized training sums them
  rootq <- histboost:::.hb_cuda_hist(ds, sample(-7:7, ds$nrow, TRUE), sample(0:15, ds$nrow, TRUE),
                                     quant_bits = 4L, reps = 20L)
  # quantized training (4 bits, stochastic rounding, refit)
  invisible(do.call(histboost, modifyList(common, list(nrounds = 2L, device = "cuda", quantized = TRUE))))
  t_gpu_q <- secs(qfit <- do.call(histboost, c(common, device = "cuda", quantized = TRUE)))
  auc_gpu_q <- auc(ytest, predict(qfit, te$x))
  # the CPU of the same machine
  t_cpu <- NA_real_; auc_cpu <- NA_real_; auc_gpu_same <- NA_real_
  if (opt$cpu_rounds > 0) {
    t_cpu <- secs(cfit <- do.call(histboost, modifyList(common, list(nrounds = opt$cpu_rounds, device = "cpu",
                                                                  nthreads = cpu_threads))))
    auc_cpu <- auc(ytest, predict(cfit, te$x))
    auc_gpu_same <- auc(ytest, predict(fit, te$x, iteration = opt$cpu_rounds))
  }
  r <- data.frame(max_bin = mb, rows = ds$nrow, rounds = opt$rounds, bin_s = t_bin, gpu_bin_s = t_bin_gpu,
                  end_to_end_s = t_bin_gpu + t_gpu + t_pred_gpu, call_s = t_call, call_same_model = call_same,
                  gpu_train_s = t_gpu,
                  gpu_auc = auc_gpu, gpu_predict_s = t_pred_gpu, cpu_predict_s = t_pred_cpu,
                  predict_speedup = t_pred_cpu / t_pred_gpu, predict_max_diff = pred_diff,
                  gpu_predict_train_s = t_pred_gpu_train, gpu_predict_train_1tree_s = t_pred_gpu_train_1,
                  gpu_contrib_s = t_contrib_gpu, cpu_contrib_s = t_contrib_cpu,
                  contrib_identical = contrib_identical, prof_rounds = prof$rounds, prof_round_ms = prof$round_ms / prof$rounds,
                  prof_hist_share = prof$hist_ms / prof$round_ms,
                  prof_partition_share = prof$partition_ms / prof$round_ms,
                  prof_split_share = prof$split_ms / prof$round_ms,
                  hist_gbps = prof$hist_bytes / (prof$hist_ms * 1e-3) / 1e9, root_hist_ms = root$ms,
                  root_hist_gbps = root_gbps, copy_gbps = copy_gbps, root_vs_copy = root_gbps / copy_gbps,
                  root_hist_q_ms = rootq$ms, root_q_speedup = root$ms / rootq$ms, gpu_train_q_s = t_gpu_q,
                  gpu_auc_q = auc_gpu_q, train_q_speedup = t_gpu / t_gpu_q,
                  cpu_threads = cpu_threads, cpu_rounds = opt$cpu_rounds, cpu_train_s = t_cpu,
                  cpu_s_per_round = t_cpu / opt$cpu_rounds, gpu_s_per_round = t_gpu / opt$rounds,
                  cpu_auc = auc_cpu, gpu_auc_at_cpu_rounds = auc_gpu_same)
  rows[[length(rows) + 1L]] <- r
  print(t(r))
}
res <- do.call(rbind, rows)

out <- if (nzchar(opt$out)) opt$out else file.path("inst", "bench", "results")
dir.create(out, recursive = TRUE, showWarnings = FALSE)
stamp <- format(Sys.time(), "%Y-%m-%d")
utils::write.csv(res, file.path(out, sprintf("gpu-%s.csv", stamp)), row.names = FALSE)
f <- function(x, d = 3) formatC(x, digits = d, format = "fg", flag = "#")
md <- c(sprintf("# histboost GPU benchmark, %s", stamp), "",
        sprintf("Device: %s (compute %s, %d SMs, %.0f GiB), CUDA runtime %s, driver %s; %d CPU cores.", info$name,
                info$compute_capability, info$multiprocessors, info$memory / 2^30, info$cuda_runtime,
                info$cuda_driver, parallel::detectCores()),
        sprintf("Data: Higgs-shaped binary, %s train rows x 28 features (0.2%% NA), %s test rows; 255 leaves, learning rate 0.1, min_data_in_leaf 20.",
                format(opt$rows, big.mark = ","), format(opt$test_rows, big.mark = ",")),
        sprintf("histboost %s.", as.character(utils::packageVersion("histboost"))), "",
        "| max_bin | binning s | GPU training s (rounds) | GPU test AUC | ms per round | histogram / partition / split search share | histogram GB/s | root histogram ms | root GB/s | copy GB/s | root / copy | CPU s per round (threads) | CPU AUC | GPU AUC, same rounds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
mdq <- c("", "Quantized gradients (4 bits): the root histogram kernel and the whole training beside full precision.", "",
         "| max_bin | root histogram ms, full / quantized | kernel speedup | training s, full / quantized | training speedup | test AUC, full / quantized |",
         "|---|---|---|---|---|---|")
for (k in seq_len(nrow(res))) {
  r <- res[k, ]
  md <- c(md, sprintf("| %d | %s | %s (%d) | %s | %s | %s | %s | %s | %s | %s | %s | %s (%d) | %s | %s |", r$max_bin,
                      f(r$bin_s), f(r$gpu_train_s), r$rounds, f(r$gpu_auc, 4), f(r$prof_round_ms),
                      sprintf("%.0f%% / %.0f%% / %.0f%%", 100 * r$prof_hist_share, 100 * r$prof_partition_share,
                              100 * r$prof_split_share), f(r$hist_gbps), f(r$root_hist_ms),
                      f(r$root_hist_gbps), f(r$copy_gbps), sprintf("%.0f%%", 100 * r$root_vs_copy),
                      f(r$cpu_s_per_round), r$cpu_threads, f(r$cpu_auc, 4), f(r$gpu_auc_at_cpu_rounds, 4)))
  mdq <- c(mdq, sprintf("| %d | %s / %s | %.2fx | %s / %s | %.2fx | %s / %s |", r$max_bin, f(r$root_hist_ms),
                        f(r$root_hist_q_ms), r$root_q_speedup, f(r$gpu_train_s), f(r$gpu_train_q_s),
                        r$train_q_speedup, f(r$gpu_auc, 4), f(r$gpu_auc_q, 4)))
}
mdp <- c("", sprintf("Prediction (response) of the %s test rows with the %d-round model: the GPU (median of 3, after a warm-up, the copies and the host's preparation of the rows included) beside the CPU's %d threads; and the GPU's raw scores of all %s training rows, with every tree and with the first tree only (the same copies and host work: the difference is the other trees' walks on the device).",
                     format(opt$test_rows, big.mark = ","), opt$rounds, cpu_threads, format(opt$rows, big.mark = ",")), "",
         "| max_bin | GPU predict s | CPU predict s | speedup | largest difference | GPU predict s, training rows | the same, first tree only | difference |",
         "|---|---|---|---|---|---|---|---|")
for (k in seq_len(nrow(res))) {
  r <- res[k, ]
  mdp <- c(mdp, sprintf("| %d | %s | %s | %.1fx | %.1e | %s | %s | %s |", r$max_bin, f(r$gpu_predict_s),
                        f(r$cpu_predict_s), r$predict_speedup, r$predict_max_diff, f(r$gpu_predict_train_s),
                        f(r$gpu_predict_train_1tree_s), f(r$gpu_predict_train_s - r$gpu_predict_train_1tree_s)))
}
mdc <- c("", sprintf("SHAP contributions (type = \"contrib\") of the first %s test rows with the %d-round model: the GPU (after a warm-up, the host's covers and copies included) beside the CPU's %d threads.",
                     format(opt$contrib_rows, big.mark = ","), opt$rounds, cpu_threads), "",
         "| max_bin | GPU contrib s | CPU contrib s | speedup | identical |", "|---|---|---|---|---|")
for (k in seq_len(nrow(res))) {
  r <- res[k, ]
  mdc <- c(mdc, sprintf("| %d | %s | %s | %.1fx | %s |", r$max_bin, f(r$gpu_contrib_s), f(r$cpu_contrib_s),
                        r$cpu_contrib_s / r$gpu_contrib_s, r$contrib_identical))
}
# the peers' recorded build + training on the GPU host's H100 (../shared/gpu-host/README.md, 2026-11-22)
peers <- data.frame(max_bin = c(255L, 63L), xgb = c(21.4 + 18.3, 20.0 + 16.7), lgb = c(3.7 + 29.2, 3.4 + 28.5))
mde <- c("", sprintf("End to end on the GPU: binning the R matrix there (hb_dataset(device = \"cuda\"); the host places the boundaries from its sample, %d threads), %d rounds of training, predicting the %s test rows; and one call of histboost(x, y, device = \"cuda\") (binning and training; whether its model is the one trained from the CPU-binned dataset). The peers: their recorded build and training on an H100 (XGBoost 3.4.1 QuantileDMatrix, LightGBM 4.6.0 CUDA Dataset; ../shared/gpu-host/README.md), not rerun here.",
                     hb_threads(), opt$rounds, format(opt$test_rows, big.mark = ",")), "",
         "| max_bin | GPU binning s (CPU s) | training s | predict s | end to end s | one call s (same model) | XGBoost build + train s | LightGBM build + train s | end to end / faster peer |",
         "|---|---|---|---|---|---|---|---|---|")
for (k in seq_len(nrow(res))) {
  r <- res[k, ]
  pr <- peers[peers$max_bin == r$max_bin, ]
  best <- if (nrow(pr)) min(pr$xgb, pr$lgb) else NA_real_
  mde <- c(mde, sprintf("| %d | %s (%s) | %s | %s | %s | %s (%s) | %s | %s | %s |", r$max_bin, f(r$gpu_bin_s), f(r$bin_s),
                        f(r$gpu_train_s), f(r$gpu_predict_s), f(r$end_to_end_s), f(r$call_s), r$call_same_model,
                        if (nrow(pr)) f(pr$xgb) else "-", if (nrow(pr)) f(pr$lgb) else "-",
                        if (is.na(best)) "-" else sprintf("%.2f", r$end_to_end_s / best)))
}
md <- c(md, mde, mdq, mdp, mdc, "", "Bytes counted for a histogram: each summed row's bins (4 bytes per 4 features), its fixed-point gradient pair (8 bytes) and, below the root, its row index (4 bytes). The copy bandwidth counts bytes read plus written.")
writeLines(md, file.path(out, sprintf("gpu-%s.md", stamp)))
cat(md, sep = "\n")
