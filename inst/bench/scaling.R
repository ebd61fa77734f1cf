# Thread scaling (issue "Many cores"): histboost and lightgbm side by side on
# the CPU at a list of thread counts, on Higgs-shaped data.
#
#   Rscript inst/bench/scaling.R [--rows 2000000] [--test-rows 200000] [--threads 2,4,8,16]
#                                [--rounds 100] [--max-bin 255] [--packages histboost,lightgbm]
#                                [--reps 1] [--out DIR] [--label NAME]
#
# For each thread count and package, in one process, the same data for all:
# binning (histboost: hb_dataset() from the R double matrix; lightgbm:
# lgb.Dataset() constructed), training from the binned data (255 leaves,
# learning rate 0.1, min_data_in_leaf 20, min_sum_hessian_in_leaf 1e-3, no L2,
# binary log loss: the same model family in both), prediction of the test rows,
# and the test AUC. Packages alternate within a thread count; with --reps > 1
# the median is kept. Also the md5 of histboost's model text at each thread
# count (the same seed must give the same model whatever the thread count)
# and the md5 of histboost's bin codes of every 97th row (the bin boundaries
# must not depend on threads).
# Results go to DIR (default inst/bench/results) as scaling-<label>.md and
# .csv, with the CPU model and core count, the speedup over the first thread
# count and histboost / lightgbm ratios, and a pdf of time against threads.

suppressPackageStartupMessages(library(histboost))
options(warn = 1)
bench_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(bench_dir, "higgs.R"))  # make_higgs(), auc()

opt <- list(rows = 2e6, test_rows = 2e5, threads = "2,4,8,16", rounds = 100L, max_bin = 255L,
            packages = "histboost,lightgbm", reps = 1L, out = "", label = "")
opt <- bench_options(opt, "inst/bench/scaling.R")
threads <- as.integer(strsplit(opt$threads, ",")[[1]])
pkgs <- bench_packages(opt$packages)
out <- if (nzchar(opt$out)) opt$out else file.path(bench_dir, "results")
label <- if (nzchar(opt$label)) opt$label else format(Sys.Date())
secs <- function(expr) unname(system.time(expr)[["elapsed"]])

cpu <- cpu_model()
cat("CPU:", cpu, "\n")

tr <- make_higgs(opt$rows, 1)
te <- make_higgs(opt$test_rows, 2)
ytr <- as.integer(tr$y == "s")
yte <- te$y == "s"

run_histboost <- function(t) {
  gc()
  tb <- secs(ds <- hb_dataset(tr$x, ytr, max_bin = opt$max_bin, nthreads = t))
  tt <- secs(m <- histboost(ds, objective = "binary", nrounds = opt$rounds, num_leaves = 255L, learning_rate = 0.1,
                            min_data_in_leaf = 20L, min_sum_hessian_in_leaf = 1e-3, nthreads = t, verbose = 0,
                            seed = 1L))
  tp <- secs(p <- predict(m, te$x, nthreads = t))
  f <- tempfile(); hb_save(m, f)
  codes <- histboost:::.hb_dataset_bins(ds)
  codes <- codes[seq(1L, nrow(codes), by = 97L), , drop = FALSE]  # every 97th row's bin codes
  list(bin = tb, train = tt, predict = tp, auc = auc(yte, p), model_md5 = unname(tools::md5sum(f)),
       bins_md5 = digest_of(codes))
}
digest_of <- function(obj) {
  f <- tempfile(); saveRDS(obj, f, compress = FALSE, version = 2); unname(tools::md5sum(f))
}
run_lightgbm <- function(t) {
  gc()
  params <- list(objective = "binary", num_leaves = 255L, max_depth = -1L, learning_rate = 0.1,
                 min_data_in_leaf = 20L, min_sum_hessian_in_leaf = 1e-3, max_bin = opt$max_bin,
                 num_threads = t, verbose = -1L, seed = 1L)
  tb <- secs({
    ds <- lightgbm::lgb.Dataset(tr$x, label = ytr, params = list(max_bin = opt$max_bin, num_threads = t,
                                                                 verbose = -1L))
    lightgbm::lgb.Dataset.construct(ds)
  })
  tt <- secs(m <- lightgbm::lgb.train(params = params, data = ds, nrounds = opt$rounds, verbose = -1L))
  tp <- secs(p <- stats::predict(m, te$x, params = list(num_threads = t)))
  list(bin = tb, train = tt, predict = tp, auc = auc(yte, p), model_md5 = NA_character_, bins_md5 = NA_character_)
}

rows <- list()
for (t in threads) for (pkg in pkgs) {
  rs <- lapply(seq_len(opt$reps), function(r) if (pkg == "histboost") run_histboost(t) else run_lightgbm(t))
  med <- function(k) stats::median(vapply(rs, `[[`, numeric(1), k))
  row <- data.frame(package = pkg, threads = t, bin_s = med("bin"), train_s = med("train"),
                    predict_s = med("predict"), auc = rs[[1]]$auc, model_md5 = rs[[1]]$model_md5,
                    bins_md5 = rs[[1]]$bins_md5)
  print(row[, 1:6], row.names = FALSE)
  rows[[length(rows) + 1L]] <- row
}
res <- do.call(rbind, rows)

# speedups over the first thread count, and histboost / lightgbm ratios
for (k in c("bin_s", "train_s", "predict_s")) {
  res[[sub("_s$", "_speedup", k)]] <- NA_real_
  for (pkg in unique(res$package)) {
    s <- res$package == pkg
    res[[sub("_s$", "_speedup", k)]][s] <- res[[k]][s][1] / res[[k]][s]
  }
}
ratio <- NULL
if (all(c("histboost", "lightgbm") %in% res$package)) {
  h <- res[res$package == "histboost", ]
  l <- res[res$package == "lightgbm", ]
  ratio <- data.frame(threads = h$threads, train = h$train_s / l$train_s, bin = h$bin_s / l$bin_s,
                      predict = h$predict_s / l$predict_s)
}

dir.create(out, showWarnings = FALSE, recursive = TRUE)
base <- file.path(out, paste0("scaling-", label))
utils::write.csv(res, paste0(base, ".csv"), row.names = FALSE)
f <- function(x, d = 3) formatC(x, digits = d, format = "fg", flag = "#")
hb <- res[res$package == "histboost", ]
md <- c(sprintf("# Thread scaling, %s", label), "",
        sprintf("CPU: %s; R %s; histboost %s; lightgbm %s.", cpu, getRversion(), utils::packageVersion("histboost"),
                if ("lightgbm" %in% pkgs) as.character(utils::packageVersion("lightgbm")) else "not run"),
        sprintf("Data: Higgs-shaped binary, %s train rows x 28 features, %s test rows; %d rounds, 255 leaves, max_bin %d, learning rate 0.1. Times in seconds, median of %d.",
                format(opt$rows, big.mark = ",", scientific = FALSE), format(opt$test_rows, big.mark = ",", scientific = FALSE),
                opt$rounds, opt$max_bin, opt$reps), "",
        "| package | threads | binning | training | prediction | train speedup | test AUC |",
        "|---|---:|---:|---:|---:|---:|---:|",
        sprintf("| %s | %d | %s | %s | %s | %s | %s |", res$package, res$threads, f(res$bin_s), f(res$train_s),
                f(res$predict_s), f(res$train_speedup), f(res$auc, 4)))
if (!is.null(ratio))
  md <- c(md, "", "histboost / lightgbm (below 1: histboost faster):", "",
          "| threads | training | binning | prediction |", "|---:|---:|---:|---:|",
          sprintf("| %d | %s | %s | %s |", ratio$threads, f(ratio$train), f(ratio$bin), f(ratio$predict)))
md <- c(md, "", sprintf("histboost's model text is %s at every thread count; its bin codes (every 97th row) are %s.",
                        if (length(unique(hb$model_md5)) == 1L) "the same" else "NOT the same",
                        if (length(unique(hb$bins_md5)) == 1L) "the same" else "NOT the same"))
writeLines(md, paste0(base, ".md"))
grDevices::pdf(paste0(base, ".pdf"), width = 7, height = 5)
cols <- c(histboost = "firebrick", lightgbm = "steelblue")
plot(range(res$threads), range(res$train_s), log = "xy", type = "n", xlab = "threads", ylab = "training time (s)",
     main = sprintf("%s rows, %d rounds: %s", format(opt$rows, big.mark = ",", scientific = FALSE), opt$rounds, cpu),
     cex.main = 0.7, xaxt = "n")
axis(1, at = threads)
for (pkg in unique(res$package)) {
  s <- res$package == pkg
  lines(res$threads[s], res$train_s[s], type = "b", col = cols[[pkg]], pch = 19)
  lines(res$threads[s], res$train_s[s][1] * res$threads[s][1] / res$threads[s], lty = 3, col = cols[[pkg]])
}
legend("topright", c(unique(res$package), "perfect scaling"), col = c(cols[unique(res$package)], "grey40"),
       lty = c(rep(1, length(unique(res$package))), 3), bty = "n")
invisible(grDevices::dev.off())
cat(md, sep = "\n")
