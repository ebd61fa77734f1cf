# SHAP contributions on the GPU beside the CPU (issue "GPU end to end"):
# predict(type = "contrib", device = "cuda") against the CPU's threads on
# the same model and rows, for several numbers of rows explained, with the
# largest difference between the two and a check that each row's
# contributions sum to its raw score.
#
#   Rscript inst/bench/gpu-contrib.R [--rows 1000000] [--rounds 500] [--leaves 255]
#                                    [--explain 2000,20000,200000] [--cpu-max 20000]
#                                    [--threads 0] [--classes 1] [--tag ""] [--out DIR]
#
# The model: Higgs-shaped data (run.R's gen_higgs, 28 features; the rows
# explained drawn apart from the training rows), trained on the GPU (--classes 3 cuts the label into three classes for a multiclass
# model). Each count of rows is timed once on the GPU after a warm-up (the
# host's covers, the copies and the bias included) and, up to --cpu-max
# rows, on the CPU's --threads threads (0: all cores). Results go to DIR
# (default inst/bench/results) as gpu-contrib-<date><tag>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # gen_higgs(), bench_options()
opt <- bench_options(args, list(rows = 1e6, rounds = 500L, leaves = 255L, explain = "2000,20000,200000",
                                cpu_max = 20000, threads = 0L, classes = 1L, tag = "", lib = "", out = ""),
                     "gpu-contrib.R")
suppressPackageStartupMessages(library(histboost))
out <- bench_out(opt$out, here)
info <- hb_device_info()
if (!isTRUE(info$available)) stop("no GPU: ", info$status, call. = FALSE)
threads <- if (opt$threads > 0) opt$threads else parallel::detectCores()
explain <- as.integer(strsplit(opt$explain, ",")[[1]])

# the training rows and the rows explained drawn apart, so that the model
# does not depend on --explain
set.seed(20261127)
n <- as.integer(opt$rows)
w <- gen_higgs(n)
y <- w$y
if (opt$classes > 1) y <- cut(w$x[, 26] + rnorm(n, sd = 0.2), opt$classes, labels = FALSE) - 1L
y <- factor(y)
fit_s <- system.time(fit <- histboost(w$x, y, nrounds = opt$rounds, num_leaves = opt$leaves, learning_rate = 0.1,
                                      min_data_in_leaf = 20L, device = "cuda", seed = 1L, verbose = 0L))[["elapsed"]]
rm(w)
set.seed(20261128)
xe_all <- gen_higgs(max(explain))$x
depth <- max(hb_trees(fit)$depth)
cat(sprintf("%s; %d rows, %d rounds of %d leaves, %d classes, trained in %.1f s; deepest leaf %d\n",
            info$name, n, opt$rounds, opt$leaves, nlevels(y), fit_s, depth))
invisible(predict(fit, xe_all[1:10, , drop = FALSE], type = "contrib", device = "cuda"))
secs <- function(e) system.time(e)[["elapsed"]]
rows <- list()
for (ne in explain) {
  xe <- xe_all[seq_len(ne), , drop = FALSE]
  t_gpu <- secs(c_gpu <- predict(fit, xe, type = "contrib", device = "cuda"))
  raw <- predict(fit, xe, type = "raw")
  sums <- if (length(dim(c_gpu)) == 3) apply(c_gpu, c(1, 3), sum) else rowSums(c_gpu)
  sum_err <- max(abs(sums - raw))
  t_cpu <- NA_real_
  diff <- NA_real_
  same <- NA
  if (ne <= opt$cpu_max) {
    t_cpu <- secs(c_cpu <- predict(fit, xe, type = "contrib", nthreads = threads))
    diff <- max(abs(c_gpu - c_cpu))
    same <- identical(c_gpu, c_cpu)
  }
  cat(sprintf("%8d rows: GPU %.3f s, CPU %s s, largest difference %s, identical %s, sum error %.1e\n", ne, t_gpu,
              format(t_cpu, digits = 4), format(diff, digits = 3), same, sum_err))
  rows[[length(rows) + 1L]] <- data.frame(rows_explained = ne, gpu_s = t_gpu, cpu_s = t_cpu, cpu_threads = threads,
                                          speedup = t_cpu / t_gpu, largest_difference = diff, identical = same,
                                          sum_error = sum_err)
}
res <- do.call(rbind, rows)
stem <- file.path(out, sprintf("gpu-contrib-%s%s", Sys.Date(), opt$tag))
utils::write.csv(res, paste0(stem, ".csv"), row.names = FALSE)
f <- function(v) ifelse(is.na(v), "-", format(signif(v, 3)))
md <- c(sprintf("# histboost SHAP contributions on the GPU, %s", Sys.Date()), "",
        sprintf("Device: %s; host CPU: %s, %d threads used. histboost %s.", info$name, bench_cpu(), threads,
                utils::packageVersion("histboost")),
        sprintf("Model: Higgs-shaped data, %s rows x 28 features, %d classes, %d rounds of %d leaves (deepest leaf %d), trained on the GPU.",
                format(n, big.mark = ","), nlevels(y), opt$rounds, opt$leaves, depth),
        "Times: one run each after a warm-up, the host's preparation and the copies included.", "",
        "| rows explained | GPU s | CPU s | CPU / GPU | largest GPU - CPU difference | identical | largest \\|sum - raw\\| |",
        "|---:|---:|---:|---:|---:|---|---:|",
        sprintf("| %s | %s | %s | %s | %s | %s | %s |", format(res$rows_explained, big.mark = ","), f(res$gpu_s),
                f(res$cpu_s), f(res$speedup), f(res$largest_difference), ifelse(is.na(res$identical), "-", res$identical),
                f(res$sum_error)))
writeLines(md, paste0(stem, ".md"))
cat(md, sep = "\n")
