# tools/gpu/cpu-ab.R LIB LABEL THREADS [ROUNDS] [ROWS]: CPU training time of
# the histboost installed in LIB at one thread count, on inst/bench/higgs.R's
# data (ROWS rows, default 2,000,000, made once and kept in /tmp so that
# every build times the same rows): hb_dataset() then histboost(), 255
# leaves, learning rate 0.1, min_data_in_leaf 20, the settings of
# inst/bench/scaling.R. Prints one line: label, threads, binning and
# training seconds, and the md5 of the model text (equal md5: the same
# model), and where the build keeps a CPU profile, its phases (and the
# histograms' ms by the leaf's rows, where it has them). LIB "--data" only makes the data; with LIB "lightgbm", lightgbm 4.7.0 on the same rows instead.
# tools/gpu/cpu-variants.sh runs it for several builds, each in its own process. HB_AB_EXACT=TRUE or FALSE
# gives exact_sums (else the build's default). HB_AB_DATA=multiclass trains on the generator of
# inst/bench/run.R's workload 3 instead (gen_multiclass(ROWS), seed 1: 5 classes of 50 features; ROWS e.g.
# 400000, the size of run.R's training set, whose rows are other draws); HB_AB_DATA=regression on workload 2's
# (gen_regression(ROWS), seed 1: 100 features, 1,000,000 rows in run.R).
a <- commandArgs(TRUE)
threads <- as.integer(a[3])
rounds <- if (length(a) >= 4) as.integer(a[4]) else 50L
rows <- if (length(a) >= 5) as.numeric(a[5]) else 2e6
kind <- Sys.getenv("HB_AB_DATA", "higgs")
if (!kind %in% c("higgs", "multiclass", "regression")) stop("HB_AB_DATA: higgs, multiclass or regression")
multi <- kind == "multiclass"
f <- sprintf("/tmp/%s-cpu-%d.rds", kind, as.integer(rows))
if (!file.exists(f)) {
  if (kind != "higgs") {
    source("inst/bench/run.R")  # gen_multiclass(), gen_regression()
    set.seed(1)
    saveRDS(if (multi) gen_multiclass(rows) else gen_regression(rows), f, compress = FALSE)
  } else {
    source("inst/bench/higgs.R")  # make_higgs()
    saveRDS(make_higgs(rows, 1), f, compress = FALSE)
  }
}
if (a[1] == "--data") quit(save = "no")  # only the data
tr <- readRDS(f)
y <- switch(kind, higgs = as.integer(tr$y == "s"), tr$y)
obj <- switch(kind, higgs = "binary", kind)
secs <- function(expr) unname(system.time(expr)[["elapsed"]])
if (a[1] == "lightgbm") {
  suppressPackageStartupMessages(library(lightgbm))
  tb <- secs({ ds <- lgb.Dataset(tr$x, label = y, params = list(max_bin = 255L, num_threads = threads, verbose = -1L))
               lgb.Dataset.construct(ds) })
  tt <- secs(m <- lgb.train(c(list(objective = obj, num_leaves = 255L, learning_rate = 0.1, min_data_in_leaf = 20L,
                                 min_sum_hessian_in_leaf = 1e-3, lambda_l2 = 0, num_threads = threads, verbose = -1L,
                                 seed = 1L), if (multi) list(num_class = 5L)), ds, nrounds = rounds))
  md5 <- "-"
} else {
  suppressPackageStartupMessages(library(histboost, lib.loc = a[1]))
  options(histboost.cpu_profile = TRUE)  # the phases (?histboost, Value), where the build has them
  if (multi) y <- factor(y)
  tb <- secs(ds <- hb_dataset(tr$x, y, max_bin = 255L, nthreads = threads))
  # HB_AB_EXACT=TRUE / FALSE: exact_sums given (else the build's default)
  ex <- switch(Sys.getenv("HB_AB_EXACT"), "TRUE" = list(exact_sums = TRUE), "FALSE" = list(exact_sums = FALSE), list())
  tt <- secs(m <- do.call(histboost, c(list(ds, objective = obj, nrounds = rounds, num_leaves = 255L,
                                            learning_rate = 0.1, min_data_in_leaf = 20L,
                                            min_sum_hessian_in_leaf = 1e-3, nthreads = threads, verbose = 0,
                                            seed = 1L), ex)))
  tf <- tempfile(); hb_save(m, tf); md5 <- substr(unname(tools::md5sum(tf)), 1, 8)
}
p <- if (a[1] != "lightgbm") m$cpu_profile
phases <- if (is.null(p)) "" else
  sprintf(" | s: rounds %.2f, trees %.2f, partition %.2f, histograms %.2f, split search %.2f (%d splits)",
          p$round_ms / 1e3, p$tree_ms / 1e3, p$partition_ms / 1e3, p$hist_ms / 1e3, p$split_ms / 1e3,
          as.integer(p$splits))
if (!is.null(p$hist_by_rows)) {  # histogram ms by the leaf's rows: <1k, 1k-4k, 4k-16k, 16k-64k, 64k-256k, 256k-1M, more
  phases <- paste0(phases, " | hist ms by rows ", paste(sprintf("%.0f", p$hist_by_rows$ms), collapse = "/"))
}
cat(sprintf("%-10s threads %2d: binning %.3f s, training %.3f s, model %s%s\n", a[2], threads, tb, tt, md5, phases))
