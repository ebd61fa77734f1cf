# Device memory of GPU training by rows (issue "GPU end to end": 100M x 28
# rows on one card in at most 10 GB at max_bin 255).
#
#   Rscript inst/bench/gpu-memory.R [--rows 10000000,50000000,100000000]
#                                   [--features 28] [--leaves 255] [--rounds 3]
#                                   [--column-copy -1] [--out DIR] [--label NAME]
#
# For each row count: a data.frame of --features uniform columns (a
# data.frame, so that no R vector exceeds 2^31 elements) with a noisy
# regression target, trained for --rounds rounds on the GPU (max_bin 255,
# --leaves leaves) with options(histboost.gpu_profile = TRUE); reports the
# device bytes the training took ($gpu_profile$device_bytes), per row, the
# GPU's peak used memory, and the time from the data.frame to the model
# (binning on the CPU included). --column-copy is histboost()'s
# gpu_column_copy (-1: the feature-major copy of the bins while it is at
# most 1 GB, 0 never, 1 whenever it fits). Results go to DIR (default
# inst/bench/results) as gpu-memory-<date>[-NAME].md and .csv.

suppressPackageStartupMessages(library(histboost))
options(warn = 1)

args <- commandArgs(trailingOnly = TRUE)
opt <- list(rows = "10000000,50000000,100000000", features = 28L, leaves = 255L, rounds = 3L, column_copy = -1L,
            out = "", label = "")
i <- 1L
while (i <= length(args)) {
  key <- gsub("-", "_", sub("^--", "", args[[i]]))
  if (!key %in% names(opt) || i == length(args)) stop("usage: see the top of inst/bench/gpu-memory.R", call. = FALSE)
  opt[[key]] <- if (is.character(opt[[key]])) args[[i + 1L]] else as(args[[i + 1L]], class(opt[[key]]))
  i <- i + 2L
}
rows <- as.numeric(strsplit(opt$rows, ",")[[1]])
info <- hb_device_info()
if (!isTRUE(info$available)) stop("no GPU: ", info$status, call. = FALSE)
secs <- function(expr) unname(system.time(expr)[["elapsed"]])
cat(sprintf("device: %s (%.0f GiB), %d CPU cores\n", info$name, info$memory / 2^30, parallel::detectCores()))

res <- list()
for (n in rows) {
  n <- as.integer(n)
  t_gen <- secs({
    set.seed(1)
    x <- as.data.frame(lapply(seq_len(opt$features), function(j) runif(n)))
    names(x) <- paste0("f", seq_len(opt$features))
    y <- x[[1]] + 0.5 * x[[2]] * x[[3]] + rnorm(n, sd = 0.3)
  })
  options(histboost.gpu_profile = TRUE)
  fit <- NULL
  t_fit <- secs(fit <- tryCatch(
    histboost(x, y, nrounds = opt$rounds, num_leaves = opt$leaves, max_bin = 255L, device = "cuda", verbose = 0L,
              gpu_column_copy = opt$column_copy),
    error = function(e) e))
  options(histboost.gpu_profile = NULL)
  if (inherits(fit, "error")) {
    cat(sprintf("%d rows: %s: %s\n", n, class(fit)[1], conditionMessage(fit)))
    res[[length(res) + 1L]] <- data.frame(rows = n, error = conditionMessage(fit), device_gb = NA, bytes_per_row = NA,
                                          peak_used_gb = NA, fit_s = t_fit, gen_s = t_gen)
  } else {
    p <- fit$gpu_profile
    cat(sprintf("%d rows: device %.2f GB (%.1f bytes a row), GPU peak used %.2f GB, fit %.1f s (data %.1f s)\n",
                n, p$device_bytes / 1e9, p$device_bytes / n, p$device_used_peak_bytes / 1e9, t_fit, t_gen))
    res[[length(res) + 1L]] <- data.frame(rows = n, error = "", device_gb = p$device_bytes / 1e9,
                                          bytes_per_row = p$device_bytes / n,
                                          peak_used_gb = p$device_used_peak_bytes / 1e9, fit_s = t_fit, gen_s = t_gen)
  }
  rm(x, y, fit)
  invisible(gc())
}
res <- do.call(rbind, res)

out <- if (nzchar(opt$out)) opt$out else file.path("inst", "bench", "results")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
stem <- file.path(out, paste0("gpu-memory-", Sys.Date(), if (nzchar(opt$label)) paste0("-", opt$label)))
utils::write.csv(res, paste0(stem, ".csv"), row.names = FALSE)
md <- c(sprintf("# histboost GPU training memory, %s", Sys.Date()), "",
        sprintf("Device: %s (%.0f GiB); %d CPU cores. %d uniform features (a data.frame), max_bin 255, %d leaves, %d rounds, gpu_column_copy %d; histboost %s.",
                info$name, info$memory / 2^30, parallel::detectCores(), opt$features, opt$leaves, opt$rounds,
                opt$column_copy,
                as.character(utils::packageVersion("histboost"))), "",
        "`device GB`: what the training took on the GPU (`$gpu_profile$device_bytes`: free memory before its setup less after). `peak used GB`: the whole GPU's used memory at its highest (the CUDA context included). `fit s`: from the data.frame to the model, binning on the CPU included.", "",
        "| rows | device GB | bytes a row | peak used GB | fit s | error |", "|---:|---:|---:|---:|---:|---|",
        sprintf("| %s | %.2f | %.1f | %.2f | %.1f | %s |", format(res$rows, big.mark = ","), res$device_gb,
                res$bytes_per_row, res$peak_used_gb, res$fit_s, res$error))
writeLines(md, paste0(stem, ".md"))
cat(md, sep = "\n")
