# Small data, where R's own overhead is the cost: histboost beside lightgbm
# at 200 to 20000 rows, one thread each, on a table of the shape users bring
# (7 numeric columns with NAs in three, 3 factors of 5, 10 and 20 levels, NAs
# in one; a regression and a binary response). The same parameters for both
# (100 rounds, num_leaves 31, learning_rate 0.1, min_data_in_leaf 20); the
# factors given to lightgbm as categorical features. Four timings, each the
# median over the reps, the packages alternating within a rep:
#   train    histboost() / lgb.Dataset() + lgb.train() on the data.frame
#   predict  predict() on every training row
#   one_row  200 predict() calls of one row each (a Shiny app, a plumber API)
#   cv       hb_cv() / lgb.cv(), 5 folds
# and the ratios histboost / lightgbm (below 1: histboost is faster).
#
#   Rscript inst/bench/small-data.R [--lib DIR] [--n 200,1000,5000,20000] [--reps 7]
#           [--threads 1] [--label NAME] [--out DIR]
#
# Writes small-data-LABEL.csv (every timing) and small-data-LABEL.md (the
# medians and ratios, with the machine, versions and commit) to DIR
# (inst/bench/results by default).
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
here <- dirname(script)
source(file.path(here, "run.R"))  # bench_options(), bench_out(), bench_cpu(), bench_version()
opt <- bench_options(args, list(lib = "", n = "200,1000,5000,20000", reps = 7L, threads = 1L,
                                label = format(Sys.Date()), out = ""), "small-data.R")
for (p in c("lightgbm", "histboost")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("small-data.R needs the package ", p, call. = FALSE)
}
suppressPackageStartupMessages({library(histboost); library(lightgbm)})
NT <- opt$threads

gen <- function(n, task, seed = 1) {
  set.seed(seed)
  X <- as.data.frame(matrix(rnorm(n * 7), n, 7))
  names(X) <- paste0("x", 1:7)
  X$f1 <- factor(sample(letters[1:5], n, TRUE))
  X$f2 <- factor(sample(LETTERS[1:10], n, TRUE))
  X$f3 <- factor(sample(sprintf("l%02d", 1:20), n, TRUE), levels = sprintf("l%02d", 1:20))
  f <- 1.5 * X$x1 + sin(2 * X$x2) + X$x3 * X$x4 + 0.5 * (X$x5 > 0) +
    c(a = 0, b = .5, c = -.5, d = 1, e = 0)[as.character(X$f1)] +
    setNames(seq(-1, 1, length.out = 10), LETTERS[1:10])[as.character(X$f2)] +
    setNames(sin(1:20), sprintf("l%02d", 1:20))[as.character(X$f3)]
  f <- unname(f)
  for (v in c("x1", "x2", "x6", "f2")) X[[v]][sample(n, round(0.05 * n))] <- NA
  y <- if (task == "regression") f + rnorm(n) else
    factor(ifelse(runif(n) < plogis(f - mean(f)), "yes", "no"), levels = c("no", "yes"))
  list(X = X, y = y)
}
CAT <- c("f1", "f2", "f3")
obj <- function(task) if (task == "regression") "regression" else "binary"
lgb_mat <- function(X) data.matrix(X)  # factors -> codes 1..k, NA kept
lgb_label <- function(y) if (is.factor(y)) as.integer(y) - 1L else y
lgb_params <- function(task) list(objective = obj(task), num_leaves = 31L, learning_rate = 0.1,
                                  min_data_in_leaf = 20L, num_threads = NT, verbose = -1L)
lgb_data <- function(X, y) lgb.Dataset(lgb_mat(X), label = lgb_label(y), categorical_feature = CAT,
                                       params = list(verbose = -1L))
fit <- list(
  histboost = function(X, y, task) histboost(X, y, nrounds = 100L, objective = obj(task), num_leaves = 31L,
                                             learning_rate = 0.1, min_data_in_leaf = 20L, nthreads = NT,
                                             verbose = 0L),
  lightgbm = function(X, y, task) lgb.train(params = lgb_params(task), data = lgb_data(X, y), nrounds = 100L,
                                            verbose = -1L))
pred <- list(histboost = function(m, X) predict(m, X, nthreads = NT),
             lightgbm = function(m, X) predict(m, lgb_mat(X), params = list(num_threads = NT)))
cv <- list(
  histboost = function(X, y, task, seed) hb_cv(X, y, nfold = 5L, nrounds = 100L, objective = obj(task),
                                               num_leaves = 31L, learning_rate = 0.1, min_data_in_leaf = 20L,
                                               nthreads = NT, verbose = 0L, seed = seed),
  lightgbm = function(X, y, task, seed) {
    set.seed(seed)
    lgb.cv(params = lgb_params(task), data = lgb_data(X, y), nrounds = 100L, nfold = 5L, verbose = -1L)
  })
tm <- function(expr) {
  gc(FALSE)
  t <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - t
}

rows <- list()
for (n in as.integer(strsplit(opt$n, ",")[[1]])) {
  for (task in c("regression", "binary")) {
    d <- gen(n, task)
    one <- lapply(((0:199) %% n) + 1L, function(i) d$X[i, , drop = FALSE])
    for (pk in names(fit)) invisible(pred[[pk]](fit[[pk]](d$X, d$y, task), d$X))  # warm-up
    for (r in seq_len(opt$reps)) {
      for (pk in if (r %% 2L) names(fit) else rev(names(fit))) {
        t_train <- tm(m <- fit[[pk]](d$X, d$y, task))
        t_pred <- tm(pred[[pk]](m, d$X))
        t_one <- tm(for (z in one) pred[[pk]](m, z))
        t_cv <- tm(cv[[pk]](d$X, d$y, task, r))
        rows[[length(rows) + 1L]] <- data.frame(package = pk, task = task, n = n, rep = r, train = t_train,
                                                predict = t_pred, one_row = t_one, cv = t_cv)
      }
    }
    cat(sprintf("n = %d, %s: done\n", n, task))
  }
}
raw <- do.call(rbind, rows)
what <- c("train", "predict", "one_row", "cv")
med <- aggregate(raw[what], raw[c("package", "task", "n")], stats::median)
hb <- med[med$package == "histboost", ]
lg <- med[med$package == "lightgbm", ]
lg <- lg[match(paste(hb$task, hb$n), paste(lg$task, lg$n)), ]
tab <- data.frame(task = hb$task, n = hb$n)
for (w in what) {
  tab[[paste0(w, "_hb_ms")]] <- round(1000 * hb[[w]], 1)
  tab[[paste0(w, "_lgb_ms")]] <- round(1000 * lg[[w]], 1)
  tab[[paste0(w, "_ratio")]] <- round(hb[[w]] / lg[[w]], 2)
}
tab <- tab[order(tab$task, tab$n), ]
print(tab, row.names = FALSE)

out <- bench_out(opt$out, here)
base <- file.path(out, paste0("small-data-", opt$label))
utils::write.csv(raw, paste0(base, ".csv"), row.names = FALSE)
commit <- tryCatch(system("git rev-parse --short HEAD", intern = TRUE, ignore.stderr = TRUE),
                   error = function(e) "unknown", warning = function(w) "unknown")
md <- c(sprintf("# Small data, histboost %s beside lightgbm %s (%s)", bench_version("histboost"),
                bench_version("lightgbm"), opt$label), "",
        sprintf("Commit %s, %s, %s, %d thread(s), median of %d reps; times in ms; ratio = histboost / lightgbm.",
                paste(commit, collapse = ""), bench_cpu(), R.version.string, NT, opt$reps), "",
        paste0("| ", paste(names(tab), collapse = " | "), " |"),
        paste0("|", paste(rep("---", ncol(tab)), collapse = "|"), "|"),
        apply(tab, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")))
writeLines(md, paste0(base, ".md"))
cat("wrote", paste0(base, c(".csv", ".md")), sep = "\n")
