# DART (boosting = "dart") beside gradient boosting: histboost on the CPU and
# on the GPU, and lightgbm's DART on the same CPU threads, on Higgs-shaped
# data.
#
#   Rscript inst/bench/dart.R [--rows 2000000] [--test-rows 200000] [--rounds 100]
#                             [--threads 16] [--drop-rate 0.1] [--skip-drop 0.5]
#                             [--max-drop 50] [--devices cpu,cuda]
#                             [--packages histboost,lightgbm] [--out DIR] [--label NAME]
#
# The data are binned once per package (histboost: hb_dataset() from the R
# double matrix; lightgbm: lgb.Dataset() constructed; not timed here: see
# scaling.R and gpu.R). Then, for each package and device, gbdt and DART with
# the same settings (255 leaves, learning rate 0.1, min_data_in_leaf 20,
# min_sum_hessian_in_leaf 1e-3, max_bin 255, seed 1): training seconds, the
# test AUC, and how many trees DART dropped in all. DART re-scores the rows of
# every dropped tree twice a round (out before the round, back in rescaled
# after it), so its cost over gbdt grows with the drops; on the GPU those
# passes run on the device. The histboost CPU and GPU DART models drop the
# same iterations (the draws depend on seed and round only); lightgbm draws
# its own. Ratios: each run's time over lightgbm's DART on the CPU threads.
# Results go to DIR (default inst/bench/results) as dart-<label>.md, with the
# CPU model and the GPU.

suppressPackageStartupMessages(library(histboost))
options(warn = 1)
bench_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(bench_dir, "higgs.R"))  # make_higgs(), auc(), bench_options(), bench_packages(), cpu_model()

opt <- list(rows = 2e6, test_rows = 2e5, rounds = 100L, threads = 16L, drop_rate = 0.1, skip_drop = 0.5,
            max_drop = 50L, devices = "cpu,cuda", packages = "histboost,lightgbm", out = "", label = "")
opt <- bench_options(opt, "inst/bench/dart.R")
pkgs <- bench_packages(opt$packages)
devices <- strsplit(opt$devices, ",")[[1]]
if ("cuda" %in% devices && !isTRUE(hb_device_info()$available)) {
  message("no usable GPU: the CPU alone")
  devices <- setdiff(devices, "cuda")
}
out <- if (nzchar(opt$out)) opt$out else file.path(bench_dir, "results")
label <- if (nzchar(opt$label)) opt$label else format(Sys.Date())
secs <- function(expr) unname(system.time(expr)[["elapsed"]])

tr <- make_higgs(opt$rows, 1)
te <- make_higgs(opt$test_rows, 2)
ytr <- as.integer(tr$y == "s")
yte <- te$y == "s"
common <- list(num_leaves = 255L, learning_rate = 0.1, min_data_in_leaf = 20L, min_sum_hessian_in_leaf = 1e-3)
dart <- list(drop_rate = opt$drop_rate, skip_drop = opt$skip_drop, max_drop = opt$max_drop)

rows <- list()
add <- function(package, device, boosting, train, p, dropped) {
  rows[[length(rows) + 1L]] <<- data.frame(package = package, device = device, boosting = boosting,
                                            train_s = train, auc = auc(yte, p), dropped = dropped)
  cat(sprintf("%-9s %-4s %-4s %8.2f s  AUC %.4f  dropped %s\n", package, device, boosting, train, auc(yte, p),
              dropped))
}

if ("histboost" %in% pkgs) {
  ds <- hb_dataset(tr$x, ytr, max_bin = 255L, nthreads = opt$threads)
  for (dev in devices) {
    run <- function(boosting, more = list()) {
      args <- c(list(ds, objective = "binary", nrounds = opt$rounds, boosting = boosting, nthreads = opt$threads,
                     device = dev, verbose = 0, seed = 1L), common, more)
      invisible(gc())
      t <- secs(m <- do.call(histboost, args))
      add("histboost", dev, boosting, t, predict(m, te$x, nthreads = opt$threads),
          if (boosting == "dart") sum(lengths(m$dart_dropped)) else NA)
      m
    }
    if (dev == "cuda") invisible(histboost(ds, nrounds = 3L, device = "cuda", verbose = 0))  # the GPU's start-up
    run("gbdt")
    run("dart", dart)
  }
}

if ("lightgbm" %in% pkgs) {
  ds <- lightgbm::lgb.Dataset(tr$x, label = ytr, params = list(max_bin = 255L, num_threads = opt$threads,
                                                               verbose = -1L))
  lightgbm::lgb.Dataset.construct(ds)
  for (boosting in c("gbdt", "dart")) {
    params <- c(list(objective = "binary", boosting = boosting, max_bin = 255L, num_threads = opt$threads,
                     verbose = -1L, seed = 1L), common, if (boosting == "dart") dart)
    invisible(gc())
    t <- secs(m <- lightgbm::lgb.train(params = params, data = ds, nrounds = opt$rounds, verbose = -1L))
    add("lightgbm", "cpu", boosting, t, stats::predict(m, te$x, params = list(num_threads = opt$threads)), NA)
  }
}

res <- do.call(rbind, rows)
ref <- res$train_s[res$package == "lightgbm" & res$boosting == "dart"]
res$vs_lightgbm_dart <- if (length(ref)) res$train_s / ref else NA
print(res, row.names = FALSE)
gpu <- if ("cuda" %in% devices) hb_device_info()$name else "none used"
dir.create(out, showWarnings = FALSE, recursive = TRUE)
f <- file.path(out, sprintf("dart-%s.md", label))
fmt <- function(x, d = 2) ifelse(is.na(x), "", formatC(x, format = "f", digits = d))
writeLines(c(
  sprintf("# DART beside gbdt, %s", label), "",
  sprintf("CPU: %s; GPU: %s; R %s; histboost %s; lightgbm %s.", cpu_model(), gpu, getRversion(),
          utils::packageVersion("histboost"),
          if ("lightgbm" %in% pkgs) as.character(utils::packageVersion("lightgbm")) else "not run"),
  sprintf(paste("Data: Higgs-shaped binary (inst/bench/higgs.R), %s train rows x 28 features, %s test rows;",
                "%d rounds, 255 leaves, learning rate 0.1, %d CPU threads; DART: drop_rate %g, skip_drop %g,",
                "max_drop %d. One run each; `dropped`: trees DART dropped over all rounds (histboost)."),
          formatC(opt$rows, format = "d", big.mark = ","), formatC(opt$test_rows, format = "d", big.mark = ","),
          opt$rounds, opt$threads,
          opt$drop_rate, opt$skip_drop, opt$max_drop), "",
  "| package | device | boosting | training s | test AUC | dropped | time / lightgbm DART |",
  "|---|---|---|---:|---:|---:|---:|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s |", res$package, res$device, res$boosting, fmt(res$train_s),
          fmt(res$auc, 4), ifelse(is.na(res$dropped), "", res$dropped), fmt(res$vs_lightgbm_dart, 3))), f)
cat("wrote", f, "\n")
