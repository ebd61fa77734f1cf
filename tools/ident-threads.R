# ident-threads.R: the same seed must give the byte-identical model (hb_save text) for any thread
# count, and a change that only moves work between threads (issue 23) must give the model of the
# build before it. Trains a few workloads at several thread counts with each given build and
# compares the md5 of every model text against the first build's model at the first count.
#
#   Rscript tools/ident-threads.R NEW_LIB [BASE_LIB] [--threads 1,2,3,8] [--rows 200000]
#
# e.g. against main's tree:
#   git archive c873ae2 | tar -x -C /tmp/split-base && R CMD INSTALL -l /tmp/lib-split-base /tmp/split-base
#   R CMD INSTALL -l /tmp/lib-split .
#   Rscript tools/ident-threads.R /tmp/lib-split /tmp/lib-split-base
# Workloads: Higgs-shaped numeric data (inst/bench/higgs.R, --rows rows, 255 leaves: the large
# leaves take the parallel partition, the root's start and many-part histograms), the same with
# bagging and feature sampling (the bag's rows), factors with missing values (numeric and
# categorical splits, missing to either side), multiclass, quantized training, and a sparse matrix
# with bundles (partitions from stored rows). Each build trains in its own Rscript child (two
# builds of one package cannot share a session), all thread counts in that child. Exit status 1
# on any difference.

args <- commandArgs(trailingOnly = TRUE)
me <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1L]))

train_child <- function(lib, threads, rows) {
  suppressPackageStartupMessages(library(histboost, lib.loc = lib))
  source(file.path(dirname(dirname(me)), "inst", "bench", "higgs.R"))  # make_higgs()
  h <- make_higgs(rows, 1)
  yh <- as.integer(h$y == "s")
  set.seed(23)
  n <- 30000L
  fac <- data.frame(a = runif(n), b = rnorm(n), c = sample(0:9, n, TRUE),
                    f = factor(sample(letters[1:8], n, TRUE)),
                    g = factor(sample(sprintf("L%03d", 1:200), n, TRUE)))
  fac$a[sample(n, 2000)] <- NA
  fac$f[sample(n, 1000)] <- NA
  yf <- 2 * ifelse(is.na(fac$a), 0.3, fac$a) + sin(fac$b) + (fac$f %in% c("a", "d")) +
    (as.integer(fac$g) %% 5 == 0) + rnorm(n, sd = 0.2)
  ym <- cut(yf, quantile(yf, 0:4 / 4), include.lowest = TRUE, labels = c("q1", "q2", "q3", "q4"))
  sp <- Matrix::rsparsematrix(20000L, 200L, density = 0.02)
  sp@x <- abs(sp@x)
  ysp <- as.numeric(sp[, 1:8] %*% (1:8)) + rnorm(20000L, sd = 0.1)
  hq <- seq_len(min(rows, 100000L))
  runs <- list(
    higgs = list(x = h$x, y = yh, objective = "binary", nrounds = 8L, num_leaves = 255L),
    higgs_bag = list(x = h$x, y = yh, objective = "binary", nrounds = 8L, num_leaves = 63L,
                     bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.8),
    factors_na = list(x = fac, y = yf, nrounds = 15L, num_leaves = 63L),
    multiclass = list(x = fac, y = ym, nrounds = 6L, num_leaves = 31L),
    quantized = list(x = h$x[hq, ], y = yh[hq], objective = "binary", nrounds = 8L, num_leaves = 127L,
                     quantized = TRUE),
    sparse_bundle = list(x = sp, y = ysp, nrounds = 10L, num_leaves = 31L, max_conflict_rate = 0.05)
  )
  for (nm in names(runs)) {
    for (t in threads) {
      a <- c(runs[[nm]], list(nthreads = t, seed = 7L, verbose = 0, learning_rate = 0.1, min_data_in_leaf = 20L))
      el <- system.time(fit <- do.call(histboost, a))[["elapsed"]]
      f <- tempfile(fileext = ".hbm")
      hb_save(fit, f)
      cat(sprintf("%s %d %s %.2f\n", nm, t, unname(tools::md5sum(f)), el))
      unlink(f)
    }
  }
}

if (length(args) >= 4L && args[1L] == "--child") {
  train_child(args[2L], as.integer(strsplit(args[3L], ",")[[1L]]), as.integer(args[4L]))
  quit(status = 0)
}
opt <- list(threads = "1,2,3,8", rows = "200000")
libs <- character()
i <- 1L
while (i <= length(args)) {
  if (startsWith(args[i], "--")) {
    key <- sub("^--", "", args[i])
    if (!key %in% names(opt) || i == length(args)) stop("usage: see the top of tools/ident-threads.R", call. = FALSE)
    opt[[key]] <- args[i + 1L]
    i <- i + 2L
  } else {
    libs <- c(libs, args[i])
    i <- i + 1L
  }
}
if (!length(libs) || length(libs) > 2L) {
  cat("usage: Rscript tools/ident-threads.R NEW_LIB [BASE_LIB] [--threads 1,2,3,8] [--rows 200000]\n")
  quit(status = 2)
}
res <- NULL
for (lib in libs) {
  # passive waiting: more threads than cores (8 on a 2-core box) must not spin against each other
  out <- system2(file.path(R.home("bin"), "Rscript"), c(shQuote(me), "--child", shQuote(lib), opt$threads, opt$rows),
                 stdout = TRUE, env = "OMP_WAIT_POLICY=passive")
  st <- attr(out, "status")
  if (!is.null(st) && st != 0) stop("training with ", lib, " failed")
  r <- read.table(text = out, col.names = c("workload", "threads", "md5", "seconds"), stringsAsFactors = FALSE)
  r$build <- lib
  res <- rbind(res, r)
}
ref <- res[!duplicated(res$workload), c("workload", "md5")]
res$same <- res$md5 == ref$md5[match(res$workload, ref$workload)]
for (k in seq_len(nrow(res)))
  cat(sprintf("%-14s %-28s threads %2d  %s  %6.2f s  %s\n", res$workload[k], res$build[k], res$threads[k],
              res$md5[k], res$seconds[k], if (res$same[k]) "same" else "DIFFERENT"))
cat(sprintf("ident-threads: %d of %d models identical to %s's at %d threads\n", sum(res$same), nrow(res), libs[1L],
            res$threads[1L]))
quit(status = if (all(res$same)) 0 else 1)
