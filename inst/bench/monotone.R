# Monotone constraints: training time and test RMSE of histboost beside
# lightgbm (monotone_constraints_method = "basic") and xgboost (hist,
# lossguide), with and without the constraints, on a regression whose mean
# rises in x1 and falls in x2 (the constraints are true), the same
# parameters for all. Each fit runs in a fresh R process (so no package's
# threads or memory affect another's), the runs alternating between the
# packages; the median of --reps runs is reported. Each constrained model
# is also checked for monotonicity over a grid of x1 and x2 on 200 test rows.
#
#   Rscript inst/bench/monotone.R [--rows 300000] [--rounds 100] [--threads 2] [--reps 3] [--lib DIR] [--out DIR]
#                                 [--wait_policy passive]
#
# --wait_policy sets OMP_WAIT_POLICY for every child ("" leaves it as it is):
# passive keeps idle OpenMP threads from spinning, which on a machine shared
# with other work stops a descheduled thread from stalling the others (all
# three packages use OpenMP).
# Results go to DIR (default inst/bench/results) as monotone-<date>.md and .csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
here <- dirname(script)
child <- length(args) >= 2L && args[[1L]] == "--child"
if (child) {
  job <- strsplit(args[[2L]], ",", fixed = TRUE)[[1L]]  # package, constrained (0/1), result file
  args <- args[-(1:2)]
}
source(file.path(here, "run.R"))  # bench_options(), bench_cpu(), bench_version()
opt <- bench_options(args, list(rows = 3e5, rounds = 100L, threads = 2L, reps = 3L, lib = "", out = "",
                                wait_policy = "passive"), "monotone.R")
P <- 10L
MONO <- c(1L, -1L, rep(0L, P - 2L))

gen <- function(n) {
  set.seed(20261125)
  x <- matrix(stats::rnorm(n * P), n, P, dimnames = list(NULL, paste0("x", seq_len(P))))
  f <- log1p(exp(2 * x[, 1])) - 1.5 * tanh(2 * x[, 2]) + x[, 3] * x[, 4] + sin(2 * x[, 5]) + 0.5 * x[, 6]^2 +
    0.5 * x[, 1] * (x[, 7] > 0)
  list(x = x, y = f + stats::rnorm(n))
}

fit_one <- function(pkg, con, x, y) {
  mc <- if (con) MONO else NULL
  switch(pkg,
    histboost = histboost::histboost(x, y, nrounds = opt$rounds, num_leaves = 63L, learning_rate = 0.1,
                                     min_data_in_leaf = 20L, nthreads = opt$threads, seed = 1L, verbose = 0L,
                                     monotone_constraints = mc),
    lightgbm = lightgbm::lgb.train(
      params = c(list(objective = "regression", num_leaves = 63L, learning_rate = 0.1, min_data_in_leaf = 20L,
                      num_threads = opt$threads, verbose = -1L, seed = 1L),
                 if (con) list(monotone_constraints = mc, monotone_constraints_method = "basic")),
      data = lightgbm::lgb.Dataset(x, label = y), nrounds = opt$rounds, verbose = -1L),
    xgboost = xgboost::xgb.train(
      params = c(list(objective = "reg:squarederror", tree_method = "hist", grow_policy = "lossguide",
                      max_leaves = 63L, max_depth = 0L, eta = 0.1, min_child_weight = 20, lambda = 0,
                      max_bin = 255L, nthread = opt$threads),
                 if (con) list(monotone_constraints = paste0("(", paste(mc, collapse = ","), ")"))),
      data = xgboost::xgb.DMatrix(x, label = y), nrounds = opt$rounds, verbose = 0))
}

pred <- function(m, x) if (inherits(m, "xgb.Booster")) predict(m, xgboost::xgb.DMatrix(x)) else predict(m, x)

# The smallest step dir * (p(v[k + 1]) - p(v[k])) over a grid of column j
# with the other columns of each row held fixed (>= 0: monotone).
worst_step <- function(m, x, j, dir) {
  grid <- seq(-3, 3, length.out = 61)
  nd <- x[rep(seq_len(nrow(x)), each = length(grid)), , drop = FALSE]
  nd[, j] <- rep(grid, nrow(x))
  min(dir * diff(matrix(pred(m, nd), nrow = length(grid))))
}

if (child) {
  n <- as.integer(opt$rows)
  nt <- n %/% 5L
  d <- gen(n + nt)
  tr <- seq_len(n)
  te <- n + seq_len(nt)
  xtr <- d$x[tr, ]
  ytr <- d$y[tr]
  suppressPackageStartupMessages(loadNamespace(job[1L]))  # not timed
  invisible(gc())
  t0 <- proc.time()
  m <- fit_one(job[1L], job[2L] == "1", xtr, ytr)
  t1 <- proc.time() - t0
  secs <- t1[["elapsed"]]
  cpu <- t1[["user.self"]] + t1[["sys.self"]]
  rmse <- sqrt(mean((d$y[te] - pred(m, d$x[te, ]))^2))
  probe <- d$x[te[seq_len(200)], ]
  utils::write.csv(data.frame(package = job[1L], constrained = job[2L] == "1", seconds = secs, cpu = cpu, rmse = rmse,
                              step_x1 = worst_step(m, probe, 1L, 1), step_x2 = worst_step(m, probe, 2L, -1)),
                   job[3L], row.names = FALSE)
  quit(save = "no")
}

pkgs <- c("histboost", "lightgbm", "xgboost")
pkgs <- pkgs[vapply(pkgs, requireNamespace, NA, quietly = TRUE)]
out <- bench_out(opt$out, here)
rscript <- file.path(R.home("bin"), "Rscript")
if (nzchar(opt$wait_policy)) Sys.setenv(OMP_WAIT_POLICY = opt$wait_policy)
runs <- expand.grid(constrained = c(TRUE, FALSE), package = pkgs, stringsAsFactors = FALSE)
res <- list()
for (r in seq_len(opt$reps)) {
  # alternate the order from one repetition to the next (the machine drifts)
  ord <- if (r %% 2L) seq_len(nrow(runs)) else rev(seq_len(nrow(runs)))
  for (k in ord) {
    f <- tempfile(fileext = ".csv")
    st <- system2(rscript, c(shQuote(script), "--child", paste(runs$package[k], as.integer(runs$constrained[k]), f,
                                                                sep = ","), args))
    if (st != 0L || !file.exists(f)) stop("the child for ", runs$package[k], " failed")
    one <- utils::read.csv(f)
    unlink(f)
    cat(sprintf("rep %d %-9s constrained=%-5s %6.2f s (cpu %6.2f s)  rmse %.4f  steps %.2g %.2g\n", r, one$package,
                one$constrained, one$seconds, one$cpu, one$rmse, one$step_x1, one$step_x2))
    res[[length(res) + 1L]] <- one
  }
}
all <- do.call(rbind, res)
tab <- stats::aggregate(cbind(seconds, cpu, rmse, step_x1, step_x2) ~ package + constrained, data = all,
                        FUN = stats::median)
tab$step_x1 <- stats::aggregate(step_x1 ~ package + constrained, data = all, FUN = min)$step_x1
tab$step_x2 <- stats::aggregate(step_x2 ~ package + constrained, data = all, FUN = min)$step_x2
tab <- tab[order(!tab$constrained, match(tab$package, pkgs)), ]
tab$time_vs_histboost <- tab$cpu_vs_histboost <- NA_real_
for (cst in c(TRUE, FALSE)) {
  k <- tab$constrained == cst
  tab$time_vs_histboost[k] <- tab$seconds[k] / tab$seconds[k & tab$package == "histboost"]
  tab$cpu_vs_histboost[k] <- tab$cpu[k] / tab$cpu[k & tab$package == "histboost"]
}
tab$cost_of_constraints <- NA_real_
for (p in pkgs) {
  k <- tab$package == p
  tab$cost_of_constraints[k & tab$constrained] <- tab$cpu[k & tab$constrained] / tab$cpu[k & !tab$constrained]
}
print(tab, digits = 4, row.names = FALSE)
stamp <- format(Sys.Date())
base <- file.path(out, sprintf("monotone-%s", stamp))
utils::write.csv(all, paste0(base, ".csv"), row.names = FALSE)
fmt <- function(v, d) ifelse(is.na(v), "", formatC(v, format = "f", digits = d))
writeLines(c(sprintf("# Monotone constraints, %s", stamp), "",
             sprintf("Machine: %s; %d threads. R %s; histboost %s, lightgbm %s, xgboost %s.", bench_cpu(),
                     opt$threads, getRversion(), bench_version("histboost"), bench_version("lightgbm"),
                     bench_version("xgboost")),
             sprintf(paste("Data: %d train and %d test rows x %d normal features; y = softplus(2 x1) -",
                           "1.5 tanh(2 x2) + x3 x4 + sin(2 x5) + x6^2 / 2 + x1 [x7 > 0] / 2 + N(0, 1): rising in",
                           "x1, falling in x2. Constraints (1, -1, 0, ...); lightgbm's method \"basic\"; xgboost",
                           "hist with lossguide growth. %d rounds, 63 leaves, learning rate 0.1, min 20 rows",
                           "(xgboost: min_child_weight 20, lambda 0). Each fit in a fresh R process, the order",
                           "alternating; median of %d runs (seconds: the fit alone, data already in memory). OMP_WAIT_POLICY=%s."),
                     as.integer(opt$rows), as.integer(opt$rows) %/% 5L, P, opt$rounds, opt$reps,
                     if (nzchar(opt$wait_policy)) opt$wait_policy else "(inherited)"),
             "The steps are the smallest change of the prediction (times the constraint's sign) between",
             "neighbours of a 61-point grid over [-3, 3] of x1 and of x2, the other features of 200 test rows",
             "held fixed, over all runs: >= 0 means monotone. cpu: the fit's user + system CPU seconds, which",
             "other work on a shared machine disturbs less than the wall clock (seconds).",
             sprintf("Command: `Rscript inst/bench/monotone.R %s`", paste(args, collapse = " ")), "",
             paste("| package | constrained | seconds | cpu | seconds / histboost's | cpu / histboost's |",
                   "cpu constrained / free | test RMSE | step x1 | step x2 |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
             sprintf("| %s | %s | %.2f | %.2f | %s | %s | %s | %.4f | %.3g | %.3g |", tab$package, tab$constrained,
                     tab$seconds, tab$cpu, fmt(tab$time_vs_histboost, 2), fmt(tab$cpu_vs_histboost, 2),
                     fmt(tab$cost_of_constraints, 2), tab$rmse, tab$step_x1, tab$step_x2)),
           paste0(base, ".md"))
cat(sprintf("Wrote %s.md and .csv\n", base))
