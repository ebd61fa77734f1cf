# A multiclass model with a rare class, beside lightgbm: the case that once
# gave histboost raw scores of 6.5e11 (a tree that could not split added
# -G / H with H = 1e-10). Higgs-shaped data (run.R's gen_higgs), the label
# the third of feature 26 (plus noise) its value falls in: classes of about
# 99%, 0.9% and 0.03% of the rows. Reported per package and device: the
# largest |leaf value|, the range of the raw scores and the multi-class
# log-loss on held-out rows, and the training time.
#
#   Rscript inst/bench/rare-class.R [--rows 100000] [--rounds 200] [--leaves 255]
#                                   [--threads 0] [--lib DIR] [--out DIR]
#
# Results go to DIR (default inst/bench/results) as rare-class-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])))
source(file.path(here, "run.R"))  # gen_higgs(), bench_options()
opt <- bench_options(args, list(rows = 1e5, rounds = 200L, leaves = 255L, threads = 0L, lib = "", out = ""),
                     "rare-class.R")
suppressPackageStartupMessages(library(histboost))
out <- bench_out(opt$out, here)
threads <- if (opt$threads > 0) opt$threads else parallel::detectCores()
set.seed(20261127)
n <- as.integer(opt$rows)
nt <- n %/% 5L
w <- gen_higgs(n + nt)
lab <- cut(w$x[, 26] + rnorm(n + nt, sd = 0.2), 3, labels = FALSE) - 1L
tr <- seq_len(n)
te <- n + seq_len(nt)
cat(sprintf("%d train rows; class shares %s\n", n, paste(format(tabulate(lab[tr] + 1L, 3) / n, digits = 2),
                                                         collapse = " / ")))
logloss <- function(p, y) -mean(log(pmax(p[cbind(seq_along(y), y + 1L)], 1e-15)))
rows <- list()
add <- function(pkg, device, secs, leaves, raw, prob) {
  rows[[length(rows) + 1L]] <<- data.frame(package = pkg, device = device, train_s = secs,
                                           max_abs_leaf = max(abs(leaves)), raw_min = min(raw), raw_max = max(raw),
                                           test_logloss = logloss(prob, lab[te]))
}
devices <- c("cpu", if (isTRUE(hb_device_info()$available)) "cuda")
for (dev in devices) {
  s <- system.time(fit <- histboost(w$x[tr, ], factor(lab[tr]), nrounds = opt$rounds, num_leaves = opt$leaves,
                                    learning_rate = 0.1, min_data_in_leaf = 20L, nthreads = threads, device = dev,
                                    seed = 1L, verbose = 0L))[["elapsed"]]
  t <- hb_trees(fit)
  add("histboost", dev, s, t$value[t$is_leaf], predict(fit, w$x[te, ], type = "raw"),
      predict(fit, w$x[te, ], type = "response"))
}
if (requireNamespace("lightgbm", quietly = TRUE)) {
  s <- system.time(lg <- lightgbm::lgb.train(
    params = list(objective = "multiclass", num_class = 3L, num_leaves = opt$leaves, learning_rate = 0.1,
                  min_data_in_leaf = 20L, num_threads = threads, verbose = -1L, seed = 1L),
    data = lightgbm::lgb.Dataset(w$x[tr, ], label = lab[tr]), nrounds = opt$rounds, verbose = -1L))[["elapsed"]]
  # the leaves' values from the model text's leaf_value lines
  lines <- strsplit(lg$save_model_to_string(), "\n")[[1]]
  lv <- as.numeric(unlist(strsplit(sub("^leaf_value=", "", grep("^leaf_value=", lines, value = TRUE)), " ")))
  add("lightgbm", "cpu", s, lv, predict(lg, w$x[te, ], type = "raw"), predict(lg, w$x[te, ]))
}
res <- do.call(rbind, rows)
print(res)
stem <- file.path(out, sprintf("rare-class-%s", Sys.Date()))
utils::write.csv(res, paste0(stem, ".csv"), row.names = FALSE)
f <- function(v) format(signif(v, 3))
md <- c(sprintf("# A rare class, beside lightgbm, %s", Sys.Date()), "",
        sprintf("CPU: %s, %d threads; GPU: %s. histboost %s, lightgbm %s.", bench_cpu(), threads,
                if ("cuda" %in% devices) hb_device_info()$name else "none", utils::packageVersion("histboost"),
                bench_version("lightgbm")),
        sprintf("Data: Higgs-shaped, %s train and %s test rows, 3 classes (%s of the training rows); %d rounds of %d leaves, learning rate 0.1, min_data_in_leaf 20, other parameters the defaults.",
                format(n, big.mark = ","), format(nt, big.mark = ","),
                paste(format(tabulate(lab[tr] + 1L, 3) / n, digits = 2), collapse = " / "), opt$rounds, opt$leaves),
        "", "| package | device | train s | largest \\|leaf value\\| | raw scores | test log-loss |",
        "|---|---|---:|---:|---|---:|",
        sprintf("| %s | %s | %s | %s | %s to %s | %s |", res$package, res$device, f(res$train_s), f(res$max_abs_leaf),
                f(res$raw_min), f(res$raw_max), f(res$test_logloss)))
writeLines(md, paste0(stem, ".md"))
cat(md, sep = "\n")
