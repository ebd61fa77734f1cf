# Factors on real data: test accuracy of histboost beside lightgbm on two
# public tables with factor columns, ten random 70/30 splits each, the same
# parameters for both (200 rounds, learning_rate 0.05, num_leaves 15,
# min_data_in_leaf 10; lightgbm's other parameters at their defaults, which
# histboost's follow), every factor given to lightgbm as a categorical
# feature (0-based codes):
#   - mlbench's BreastCancer: 699 rows, nine factor columns of 10 levels
#     (five of them ordered), NAs; benign / malignant, test AUC;
#   - AmesHousing's make_ames(): 2,930 rows, 40 factor columns (some
#     ordered) and numbers; Sale_Price, test RMSE.
# histboost runs with its defaults (ordered factors split on their level
# order), with ordered_factors = "categorical" (every factor categorical, as
# lightgbm sees them), and with every factor as its integer codes (numbers).
#
#   Rscript inst/bench/factors.R [--lib DIR] [--threads 2] [--out DIR]
#
# Needs mlbench, AmesHousing and lightgbm (install them first); writes
# factors-<date>.md to DIR (default inst/bench/results) and prints it.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(dirname(script), "run.R"))  # bench_options(), bench_cpu(), bench_version()
opt <- bench_options(args, list(lib = "", threads = 2L, out = ""), "factors.R")
for (p in c("mlbench", "AmesHousing", "lightgbm", "histboost")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("factors.R needs the package ", p, call. = FALSE)
}
P <- list(learning_rate = 0.05, num_leaves = 15L, min_data_in_leaf = 10L)
NROUNDS <- 200L

auc <- function(p, y) {
  r <- rank(p)
  n1 <- sum(y)
  (sum(r[y]) - n1 * (n1 + 1) / 2) / (n1 * (length(y) - n1))
}
codes <- function(x) as.matrix(data.frame(lapply(x, function(v) if (is.factor(v)) as.integer(v) - 1L else v)))

fit_lgb <- function(xtr, ytr, xte, objective) {
  cats <- names(xtr)[vapply(xtr, is.factor, TRUE)]
  ds <- lightgbm::lgb.Dataset(codes(xtr), label = ytr, categorical_feature = cats)
  m <- lightgbm::lgb.train(params = c(list(objective = objective, verbose = -1L, num_threads = opt$threads), P),
                           data = ds, nrounds = NROUNDS)
  predict(m, codes(xte))
}
fit_hb <- function(xtr, ytr, xte, ...) {
  m <- do.call(histboost::histboost, c(list(xtr, ytr, nrounds = NROUNDS, verbose = 0L, nthreads = opt$threads,
                                            seed = 1), P, list(...)))
  predict(m, xte)
}

data("BreastCancer", package = "mlbench", envir = environment())
bc <- BreastCancer[, -1]
bc_x <- bc[, names(bc) != "Class"]
bc_y <- bc$Class == "malignant"
ames <- AmesHousing::make_ames()
am_x <- as.data.frame(ames[, names(ames) != "Sale_Price"])
am_y <- ames$Sale_Price

run <- function(x, y, task, seed) {
  set.seed(seed)
  tr <- sample(nrow(x), round(0.7 * nrow(x)))
  xtr <- x[tr, ]; xte <- x[-tr, ]
  num <- function(d) as.data.frame(lapply(d, function(v) if (is.factor(v)) as.integer(v) else v))
  yb <- if (task == "binary") factor(y[tr], levels = c(FALSE, TRUE)) else y[tr]
  preds <- list(
    histboost = fit_hb(xtr, yb, xte),
    `histboost, ordered as categorical` = fit_hb(xtr, yb, xte, ordered_factors = "categorical"),
    `histboost, factors as numbers` = fit_hb(num(xtr), yb, num(xte)),
    lightgbm = fit_lgb(xtr, as.numeric(y[tr]), xte, if (task == "binary") "binary" else "regression"))
  vapply(preds, function(p) if (task == "binary") auc(p, y[-tr]) else sqrt(mean((p - y[-tr])^2)), 0)
}

res <- list(
  breast = sapply(1:10, function(s) run(bc_x, bc_y, "binary", s)),
  ames = sapply(1:10, function(s) run(am_x, am_y, "regression", s)))
lines <- c(sprintf("# Factors on real data (%s)", format(Sys.Date())), "",
           sprintf("histboost %s, lightgbm %s, R %s; %s; %d threads.", bench_version("histboost"),
                   bench_version("lightgbm"), getRversion(), bench_cpu(), opt$threads), "",
           "Ten random 70/30 splits (seeds 1-10), 200 rounds, learning_rate 0.05, num_leaves 15, min_data_in_leaf 10.", "",
           "| data | model | metric | mean | min | max | mean ratio to lightgbm |", "|---|---|---|---|---|---|---|")
for (d in names(res)) {
  r <- res[[d]]
  metric <- if (d == "breast") "test AUC" else "test RMSE"
  for (m in rownames(r)) {
    lines <- c(lines, sprintf("| %s | %s | %s | %.4f | %.4f | %.4f | %.3f |",
                              if (d == "breast") "BreastCancer (699 x 9 factors)" else "Ames (2,930 x 40 factors)",
                              m, metric, mean(r[m, ]), min(r[m, ]), max(r[m, ]),
                              mean(r[m, ]) / mean(r["lightgbm", ])))
  }
}
out <- if (nzchar(opt$out)) opt$out else file.path(dirname(script), "results")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
f <- file.path(out, sprintf("factors-%s.md", format(Sys.Date())))
writeLines(lines, f)
cat(lines, sep = "\n")
