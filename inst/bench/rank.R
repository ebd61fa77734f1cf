# Learning to rank: training time and test NDCG@10 of histboost's lambdarank
# beside lightgbm's (objective "lambdarank") and xgboost's ("rank:ndcg"), on
# generated queries (10 to 100 documents each, grades 0 to 4 from a
# non-linear function of a few of 30 features plus a query effect), the same
# parameters for all three where they have them.
#
#   Rscript inst/bench/rank.R [--rows 300000] [--rounds 100] [--leaves 63] [--threads 2] [--reps 3]
#                             [--packages histboost,lightgbm,xgboost] [--wait-policy passive]
#                             [--lib DIR] [--out DIR]
#
# The data are generated once and saved; every training then runs in its own
# Rscript process (this file with --child), the packages taking turns rep
# after rep, so that no run inherits another's heap or warm caches. NDCG@10
# is computed here, in R, the same way for all three (tied scores: the mean
# over their orders, as histboost's metric). --wait-policy sets
# OMP_WAIT_POLICY for the trainings (passive: idle threads sleep instead of
# spinning, which on a loaded machine keeps a waiting thread from taking a
# core from a working one). Results go to DIR (default inst/bench/results) as
# rank-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
self <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
here <- dirname(self)

# ---- child: one training and its test predictions --------------------------------
if (length(args) && args[[1]] == "--child") {
  a <- as.list(args[-1])  # pkg data.rds result.rds threads rounds leaves lib
  pkg <- a[[1]]; threads <- as.integer(a[[4]]); rounds <- as.integer(a[[5]]); leaves <- as.integer(a[[6]])
  if (nzchar(a[[7]])) .libPaths(c(a[[7]], .libPaths()))
  suppressPackageStartupMessages(library(pkg, character.only = TRUE))
  d <- readRDS(a[[2]])
  set.seed(1)  # xgboost's R package seeds from R's generator
  sizes <- as.integer(table(d$qtr))  # queries are contiguous and numbered in order
  invisible(gc(full = TRUE))
  t0 <- proc.time()
  if (pkg == "histboost") {
    m <- histboost::histboost(d$xtr, d$ytr, group = d$qtr, objective = "lambdarank", nrounds = rounds,
                              num_leaves = leaves, learning_rate = 0.1, min_data_in_leaf = 20L,
                              lambdarank_truncation_level = 30L, nthreads = threads, seed = 1L, verbose = 0L)
  } else if (pkg == "lightgbm") {
    ds <- lightgbm::lgb.Dataset(d$xtr, label = d$ytr, group = sizes, params = list(verbose = -1L))
    m <- lightgbm::lgb.train(params = list(objective = "lambdarank", num_leaves = leaves, learning_rate = 0.1,
                                           min_data_in_leaf = 20L, lambdarank_truncation_level = 30L,
                                           num_threads = threads, verbose = -1L, seed = 1L),
                             data = ds, nrounds = rounds, verbose = -1L)
  } else {
    dm <- xgboost::xgb.DMatrix(d$xtr, label = d$ytr, nthread = threads)
    xgboost::setinfo(dm, "group", sizes)
    # leaf-wise like the others; xgboost has no row-count minimum, and ranking hessians are tiny:
    # lightgbm's hessian minimum (1e-3) stands in for min_data_in_leaf; no L2, as the others
    m <- xgboost::xgb.train(params = list(objective = "rank:ndcg", tree_method = "hist", grow_policy = "lossguide",
                                          max_leaves = leaves, max_depth = 0L, eta = 0.1, min_child_weight = 1e-3,
                                          lambda = 0, nthread = threads, verbosity = 0L),
                            data = dm, nrounds = rounds, verbose = 0)
  }
  t1 <- proc.time()
  secs <- t1[["elapsed"]] - t0[["elapsed"]]
  cpu <- sum(t1[c("user.self", "sys.self")]) - sum(t0[c("user.self", "sys.self")])
  pred <- if (pkg == "xgboost") predict(m, xgboost::xgb.DMatrix(d$xte, nthread = threads)) else predict(m, d$xte)
  saveRDS(list(seconds = secs, cpu = cpu, pred = as.numeric(pred)), a[[3]])
  quit(save = "no")
}

# ---- parent ----------------------------------------------------------------------------
source(file.path(here, "run.R"))  # bench_options(), bench_cpu(), bench_version()
opt <- bench_options(args, list(rows = 3e5, rounds = 100L, leaves = 63L, threads = 2L, reps = 3L,
                                packages = "histboost,lightgbm,xgboost", wait_policy = "", lib = "", out = ""),
                     "rank.R")
if (nzchar(opt$wait_policy)) Sys.setenv(OMP_WAIT_POLICY = opt$wait_policy)  # the children inherit it
pkgs <- strsplit(opt$packages, ",", fixed = TRUE)[[1]]
pkgs <- pkgs[vapply(pkgs, requireNamespace, NA, quietly = TRUE)]
out <- bench_out(opt$out, here)

# Queries of 10 to 100 documents; grades 0..4 from a non-linear relevance
# (interactions, a threshold, a smooth term) plus a query effect and noise.
gen_rank <- function(n, p = 30L) {
  sizes <- integer()
  while (sum(sizes) < n) sizes <- c(sizes, sample(10:100, 1L))
  sizes[length(sizes)] <- sizes[length(sizes)] - (sum(sizes) - n)
  if (sizes[length(sizes)] < 2L) sizes <- sizes[-length(sizes)]
  q <- rep(seq_along(sizes), sizes)
  n <- length(q)
  x <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, sprintf("f%02d", seq_len(p))))
  rel <- 1.0 * x[, 1] + 0.8 * x[, 2] * x[, 3] + 0.7 * (x[, 4] > 0.5) + 0.6 * sin(2 * x[, 5]) +
    0.4 * x[, 6]^2 + rnorm(length(sizes), sd = 0.8)[q] + rnorm(n, sd = 0.8)
  y <- findInterval(rel, stats::quantile(rel, c(0.5, 0.75, 0.9, 0.97)))
  list(x = x, y = y, q = q)
}

# Mean NDCG@k over queries; tied scores share their block's mean discount.
ndcg_at <- function(y, q, s, k) {
  gain <- 2^y - 1
  mean(vapply(split(seq_along(y), q), function(r) {
    g <- gain[r]; m <- length(r)
    top <- seq_len(min(k, m))
    idcg <- sum(sort(g, decreasing = TRUE)[top] / log2(top + 1))
    if (idcg <= 0) return(1)
    o <- order(-s[r])
    d <- ifelse(seq_len(m) <= k, 1 / log2(seq_len(m) + 1), 0)
    sum(g[o] * stats::ave(d, s[r][o])) / idcg
  }, 0))
}

set.seed(20261125)
n <- as.integer(opt$rows)
tr <- gen_rank(n)
te <- gen_rank(n %/% 5L)
data_file <- tempfile(fileext = ".rds")
saveRDS(list(xtr = tr$x, ytr = tr$y, qtr = tr$q, xte = te$x), data_file)
cat(sprintf("train: %d rows, %d queries; test: %d rows, %d queries; grades %s\n", length(tr$y), max(tr$q),
            length(te$y), max(te$q), paste(tabulate(tr$y + 1L, 5L), collapse = "/")))

rscript <- file.path(R.home("bin"), "Rscript")
secs <- cpus <- matrix(NA_real_, length(pkgs), opt$reps, dimnames = list(pkgs, NULL))
load0 <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
ndcg10 <- ndcg5 <- setNames(numeric(length(pkgs)), pkgs)
for (r in seq_len(opt$reps)) {
  order_r <- if (r %% 2L) pkgs else rev(pkgs)  # take turns: no package always first
  for (pkg in order_r) {
    res <- tempfile(fileext = ".rds")
    st <- system2(rscript, c(self, "--child", pkg, data_file, res, opt$threads, opt$rounds, opt$leaves,
                             shQuote(opt$lib)))
    if (st != 0L || !file.exists(res)) stop(sprintf("the %s run failed", pkg))
    v <- readRDS(res)
    unlink(res)
    secs[pkg, r] <- v$seconds
    cpus[pkg, r] <- v$cpu
    if (r == 1L) {
      ndcg10[pkg] <- ndcg_at(te$y, te$q, v$pred, 10L)
      ndcg5[pkg] <- ndcg_at(te$y, te$q, v$pred, 5L)
    }
    cat(sprintf("rep %d %-9s %6.2f s (cpu %6.2f s)\n", r, pkg, v$seconds, v$cpu))
  }
}
unlink(data_file)
med <- apply(secs, 1L, stats::median)
load1 <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
peers <- setdiff(pkgs, "histboost")
fastest_peer <- if (length(peers)) peers[which.min(med[peers])] else NA
tab <- data.frame(package = pkgs, version = vapply(pkgs, bench_version, ""), seconds = med,
                  cpu_seconds = apply(cpus, 1L, stats::median),
                  ratio_to_histboost = med / med[["histboost"]], ndcg10 = ndcg10, ndcg5 = ndcg5,
                  row.names = NULL)
print(tab, digits = 4)
stamp <- format(Sys.Date())
base <- file.path(out, sprintf("rank-%s", stamp))
utils::write.csv(tab, paste0(base, ".csv"), row.names = FALSE)
writeLines(c(
  sprintf("# Learning to rank (lambdarank), %s", stamp), "",
  sprintf("Machine: %s; %d threads. R %s.", bench_cpu(), opt$threads, getRversion()),
  sprintf(paste("Data: %d train rows (%d queries of 10 to 100 documents) x 30 features, %d test rows (%d queries);",
                "grades 0-4 (%s rows). %d rounds, %d leaves, learning rate 0.1, min_data_in_leaf 20",
                "(xgboost: min_child_weight 1e-3), truncation level 30, NDCG gains 2^grade - 1."),
          length(tr$y), max(tr$q), length(te$y), max(te$q), paste(tabulate(tr$y + 1L, 5L), collapse = "/"),
          opt$rounds, opt$leaves),
  sprintf(paste("Each training in its own process, the packages taking turns; median of %d runs.",
                "Test NDCG computed in R for all three (ties: the mean over their orders)."), opt$reps),
  sprintf("Command: `Rscript inst/bench/rank.R %s`", paste(args, collapse = " ")), "",
  sprintf("Load average before and after (the machine is shared): %s; %s. OMP_WAIT_POLICY: %s.", load0, load1,
          if (nzchar(opt$wait_policy)) opt$wait_policy else "unset"), "",
  "| package | version | train seconds | CPU seconds | time / histboost's | test NDCG@10 | test NDCG@5 |",
  "|---|---|---:|---:|---:|---:|---:|",
  sprintf("| %s | %s | %.2f | %.2f | %.2fx | %.4f | %.4f |", tab$package, tab$version, tab$seconds, tab$cpu_seconds,
          tab$ratio_to_histboost, tab$ndcg10, tab$ndcg5), "",
  if (!is.na(fastest_peer)) sprintf("histboost's time is %.2fx the faster peer's (%s).", med[["histboost"]] /
                                      med[[fastest_peer]], fastest_peer),
  sprintf("Runs (seconds): %s", paste(sprintf("%s %s", rownames(secs), apply(secs, 1L, function(v)
    paste(sprintf("%.2f", v), collapse = "/"))), collapse = "; "))),
  paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
