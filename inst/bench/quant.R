# Quantization study (issue "Quantized training"): the shape of Table 2 of
# Shi et al., "Quantized Training of Gradient Boosting Decision Trees"
# (NeurIPS 2022), on generated data: the best test metric over the boosting
# iterations for 2, 3, 4, 5 and 8 gradient bits and full precision, with
# stochastic rounding (SR) or rounding to nearest (RN), with and without
# leaf-value refitting.
#
#   Rscript inst/bench/quant.R [--rows 100000] [--rounds 300] [--threads 2] [--seeds 3]
#                              [--device cpu] [--out DIR]
#
# Each cell is the mean over --seeds seeds (the training seed; the data are
# fixed) of the best test metric: AUC (binary, higher is better), RMSE
# (regression) and multi-logloss (multiclass, 5 classes), lower is better.
# Results go to DIR (default inst/bench/results) as quant-<device>-<date>.md and .csv.

suppressPackageStartupMessages(library(histboost))
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
opt <- list(rows = 1e5, rounds = 300L, threads = 2L, seeds = 3L, device = "cpu", out = "")
i <- 1L
while (i <= length(args)) {
  key <- gsub("-", "_", sub("^--", "", args[[i]]))
  if (!key %in% names(opt) || i == length(args)) stop("usage: see the top of inst/bench/quant.R", call. = FALSE)
  opt[[key]] <- if (is.character(opt[[key]])) args[[i + 1L]] else as(args[[i + 1L]], class(opt[[key]]))
  i <- i + 2L
}

# Nonlinear signal over 20 features (a few with missing values, one factor),
# shared by the three tasks.
make_data <- function(n, seed) {
  set.seed(seed)
  x <- as.data.frame(matrix(rnorm(n * 18), n, 18))
  x$u <- runif(n)
  x$f <- factor(sample(sprintf("c%02d", 1:12), n, TRUE))
  x$V3[runif(n) < 0.05] <- NA
  eff <- rnorm(12)
  s <- sin(2 * x$V1) + x$V2 * x$V3 + (x$V4 > 0.5) - abs(x$V5) + 0.5 * x$V6 * (x$u > 0.3) +
    eff[as.integer(x$f)] + 0.3 * rowSums(x[7:12])
  s[is.na(s)] <- 0.3
  list(x = x, s = s)
}

tasks <- list(
  binary = list(metric = "auc", y = function(s) factor(runif(length(s)) < plogis(1.2 * s)), better = max),
  regression = list(metric = "rmse", y = function(s) s + rnorm(length(s)), better = min),
  multiclass = list(metric = "multi_logloss", better = min,
                    y = function(s) factor(findInterval(s + rnorm(length(s), sd = 0.7),
                                                       quantile(s, c(0.2, 0.4, 0.6, 0.8))), levels = 0:4))
)

configs <- list(list(label = "full precision", quantized = FALSE, bits = NA, sr = NA, refit = NA))
for (refit in c(TRUE, FALSE)) for (sr in c(TRUE, FALSE)) for (bits in c(2L, 3L, 4L, 5L, 8L)) {
  configs[[length(configs) + 1L]] <- list(label = sprintf("%d-bit %s %s", bits, if (sr) "SR" else "RN",
                                                          if (refit) "refit" else "no refit"),
                                          quantized = TRUE, bits = bits, sr = sr, refit = refit)
}

n_test <- as.integer(opt$rows / 4)
cells <- list()
t0 <- Sys.time()
for (tn in names(tasks)) {
  tk <- tasks[[tn]]
  d <- make_data(opt$rows + n_test, 2022)
  set.seed(7)
  y <- tk$y(d$s)
  tr <- seq_len(opt$rows)
  te <- opt$rows + seq_len(n_test)
  for (cf in configs) {
    vals <- secs <- numeric()
    for (seed in seq_len(opt$seeds)) {
      a <- list(d$x[tr, ], y[tr], nrounds = opt$rounds, num_leaves = 63L, learning_rate = 0.1,
                valid = list(test = list(x = d$x[te, ], y = y[te])), eval_metric = tk$metric,
                nthreads = opt$threads, seed = seed, device = opt$device, verbose = 0L)
      if (cf$quantized) a <- c(a, list(quantized = TRUE, grad_bits = cf$bits, stochastic_rounding = cf$sr,
                                       refit_leaves = cf$refit))
      tt <- system.time(fit <- do.call(histboost, a))[["elapsed"]]
      vals <- c(vals, tk$better(fit$evaluation_log[[2]]))
      secs <- c(secs, tt)
    }
    cells[[length(cells) + 1L]] <- data.frame(task = tn, metric = tk$metric, config = cf$label, mean = mean(vals),
                                              sd = if (length(vals) > 1) stats::sd(vals) else NA_real_,
                                              seconds = mean(secs))
    cat(sprintf("%-10s %-22s %.6f\n", tn, cf$label, mean(vals)))
  }
}
res <- do.call(rbind, cells)

out <- if (nzchar(opt$out)) opt$out else file.path("inst", "bench", "results")
dir.create(out, recursive = TRUE, showWarnings = FALSE)
stamp <- format(Sys.time(), "%Y-%m-%d")
base <- file.path(out, sprintf("quant-%s-%s", opt$device, stamp))
utils::write.csv(res, paste0(base, ".csv"), row.names = FALSE)
wide <- reshape(res[c("task", "config", "mean")], idvar = "config", timevar = "task", direction = "wide")
names(wide) <- sub("^mean\\.", "", names(wide))
md <- c(sprintf("# Quantization study, %s (device %s)", stamp, opt$device), "",
        sprintf(paste("Generated data: %s train and %s test rows, 20 features (missing values, a 12-level factor);",
                      "63 leaves, learning rate 0.1, %d rounds, %d threads. Each cell: the best test metric over",
                      "the iterations (as in the paper's Table 2), mean of %d training seeds. AUC: higher is better;",
                      "RMSE and multi-logloss (5 classes): lower is better. SR: stochastic rounding, RN: to nearest."),
                format(opt$rows, big.mark = ","), format(n_test, big.mark = ","), opt$rounds, opt$threads, opt$seeds),
        sprintf("histboost %s; %.0f minutes in all.", as.character(utils::packageVersion("histboost")),
                as.numeric(difftime(Sys.time(), t0, units = "mins"))), "",
        "| gradients | binary AUC | regression RMSE | multiclass logloss |", "|---|---|---|---|")
for (k in seq_len(nrow(wide))) {
  md <- c(md, sprintf("| %s | %.5f | %.5f | %.5f |", wide$config[k], wide$binary[k], wide$regression[k],
                      wide$multiclass[k]))
}
writeLines(md, paste0(base, ".md"))
cat(md, sep = "\n")
