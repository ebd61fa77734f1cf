# Binning speed (issue "Many cores": 10.5M x 28 from an R double matrix in
# at most 1 s at 16 threads, and at most 0.5x lightgbm's Dataset time):
# hb_dataset() of Higgs-shaped rows with an integer 0/1 label and with a
# factor label, and lightgbm's lgb.Dataset() constructed from the same
# matrix and 0/1 label, at each thread count (median of --reps runs).
#
#   Rscript inst/bench/binning.R [--rows 10500000] [--threads 2,4,8,16] [--reps 3]
#                                [--packages histboost,lightgbm] [--devices cpu] [--out DIR] [--label NAME]
#
# --devices cpu,cuda also times hb_dataset(device = "cuda") (the GPU bins the
# rows; the host still places the boundaries from its sample, with the same
# threads), whose bin codes must be the CPU's.
#
# Also the md5 of histboost's bin codes of every 97th row at each thread
# count (the bin boundaries must not depend on threads). Results go to DIR
# (default inst/bench/results) as binning-<label>.md and .csv, with the CPU.

suppressPackageStartupMessages(library(histboost))
options(warn = 1)
bench_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(bench_dir, "higgs.R"))  # make_higgs()

opt <- list(rows = 10.5e6, threads = "2,4,8,16", reps = 3L, packages = "histboost,lightgbm", devices = "cpu", out = "",
            label = "")
opt <- bench_options(opt, "inst/bench/binning.R")
threads <- as.integer(strsplit(opt$threads, ",")[[1]])
pkgs <- bench_packages(opt$packages)
devices <- strsplit(opt$devices, ",")[[1]]
if ("cuda" %in% devices && !hb_has_cuda()) stop("--devices cuda: ", hb_device_info()$status, call. = FALSE)
cpu <- cpu_model()
cat("CPU:", cpu, "\n")
med <- function(f) median(vapply(seq_len(opt$reps), function(r) { gc(); unname(system.time(f())[["elapsed"]]) }, 0))

tr <- make_higgs(opt$rows, 1)
y01 <- as.integer(tr$y == "s")
res <- NULL
for (t in threads) {
  if ("histboost" %in% pkgs) for (dev in devices) {
    s_int <- med(function() hb_dataset(tr$x, y01, nthreads = t, device = dev))
    s_fac <- med(function() hb_dataset(tr$x, tr$y, nthreads = t, device = dev))
    codes <- histboost:::.hb_dataset_bins(hb_dataset(tr$x, y01, nthreads = t, device = dev))
    f <- tempfile()
    saveRDS(codes[seq(1L, nrow(codes), by = 97L), , drop = FALSE], f, compress = FALSE, version = 2)
    res <- rbind(res, data.frame(package = if (dev == "cpu") "histboost" else paste0("histboost (", dev, ")"),
                                 threads = t, label = c("integer", "factor"), seconds = c(s_int, s_fac),
                                 bins_md5 = unname(tools::md5sum(f))))
  }
  if ("lightgbm" %in% pkgs) {
    s <- med(function() {
      d <- lightgbm::lgb.Dataset(tr$x, label = y01, params = list(max_bin = 255L, num_threads = t, verbose = -1L))
      lightgbm::lgb.Dataset.construct(d)
    })
    res <- rbind(res, data.frame(package = "lightgbm", threads = t, label = "integer", seconds = s, bins_md5 = ""))
  }
  print(res[res$threads == t, ], row.names = FALSE)
}
label <- if (nzchar(opt$label)) opt$label else format(Sys.Date())
out <- if (nzchar(opt$out)) opt$out else file.path(bench_dir, "results")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
utils::write.csv(res, file.path(out, paste0("binning-", label, ".csv")), row.names = FALSE)
ratio <- if (all(c("histboost", "lightgbm") %in% pkgs)) {
  vapply(threads, function(t) res$seconds[res$package == "histboost" & res$threads == t & res$label == "integer"] /
                                res$seconds[res$package == "lightgbm" & res$threads == t], 0)
}
md <- c(sprintf("# Binning, %s", label), "",
        sprintf("CPU: %s; R %s; histboost %s%s.", cpu, getRversion(), utils::packageVersion("histboost"),
                if ("lightgbm" %in% pkgs) paste0("; lightgbm ", utils::packageVersion("lightgbm")) else ""),
        sprintf("Data: Higgs-shaped, %s rows x 28 numeric columns (an R double matrix), max_bin 255. Seconds, median of %d.",
                format(opt$rows, big.mark = ",", scientific = FALSE), opt$reps), "",
        "| package | threads | label | seconds | bins md5 (every 97th row) |", "|---|---:|---|---:|---|",
        sprintf("| %s | %d | %s | %.3f | %s |", res$package, res$threads, res$label, res$seconds, res$bins_md5),
        if (!is.null(ratio)) c("", "histboost (integer label) / lightgbm:", "",
                               sprintf("- %d threads: %.3f", threads, ratio)),
        "", sprintf("Bin codes the same at every thread count%s: %s.", if (length(devices) > 1L) " and device" else "",
                    length(unique(res$bins_md5[startsWith(res$package, "histboost")])) == 1L),
        if ("cuda" %in% devices) c("", sprintf("GPU: %s.", hb_device_info()$name)))
writeLines(md, file.path(out, paste0("binning-", label, ".md")))
cat(md, sep = "\n")
