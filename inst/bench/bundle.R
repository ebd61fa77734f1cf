# bundle.R: what exclusive feature bundling (enable_bundle) buys on wide
# one-hot data from a dgCMatrix: histboost with bundling on and off, and
# lightgbm likewise for reference, on the same data and parameters.
#   Rscript inst/bench/bundle.R [rows] [groups] [levels] [rounds] [lib]
# defaults: 100000 rows, 20 factors of 100 levels (2000 one-hot columns),
# 50 rounds; writes inst/bench/results/<date>-bundle<BUNDLE_TAG>.md.
# Environment: BUNDLE_REPS (2) alternating on/off repetitions,
# BUNDLE_LGB (1) whether to run lightgbm too, BUNDLE_TAG (""): file suffix.
args <- commandArgs(TRUE)
num <- function(i, d) if (length(args) >= i) as.numeric(args[i]) else d
n <- num(1, 1e5); G <- num(2, 20); L <- num(3, 100); rounds <- num(4, 50)
if (length(args) >= 5) .libPaths(c(args[5], .libPaths()))
suppressMessages({library(Matrix); library(histboost)})
set.seed(1)
codes <- matrix(sample.int(L, n * G, replace = TRUE), n, G)
j <- as.vector(codes + rep((seq_len(G) - 1) * L, each = n))
X <- sparseMatrix(i = rep(seq_len(n), G), j = j, x = 1, dims = c(n, G * L))
colnames(X) <- paste0("f", seq_len(ncol(X)))
eff <- rnorm(G * L)
y <- as.vector(X %*% eff) + rnorm(n)
threads <- 2L
# elapsed and CPU seconds (user + system of this process, all its threads):
# on a shared machine the CPU time measures the work, the elapsed time also
# the waiting for cores
tm <- function(expr) { gc(); t <- system.time(expr); c(t[["elapsed"]], t[["user.self"]] + t[["sys.self"]]) }
rows <- list()
t_bin <- tm(ds <- hb_dataset(X, y, nthreads = threads))[1]
reps <- as.integer(Sys.getenv("BUNDLE_REPS", "2"))
for (rep in seq_len(reps)) for (b in c(TRUE, FALSE)) {
  t <- tm(fit <- histboost(ds, nrounds = rounds, enable_bundle = b, nthreads = threads, verbose = 0, seed = 1))
  rows[[length(rows) + 1]] <- data.frame(library = "histboost", enable_bundle = b, rep = rep, train_s = t[1],
                                         cpu_s = t[2],
                                         rmse = sqrt(mean((predict(fit, X) - y)^2)))
}
if (Sys.getenv("BUNDLE_LGB", "1") == "1" && requireNamespace("lightgbm", quietly = TRUE)) {
  for (rep in seq_len(reps)) for (b in c(TRUE, FALSE)) {
    t <- tm({
      d <- lightgbm::lgb.Dataset(X, label = y, params = list(enable_bundle = b, verbose = -1))
      m <- lightgbm::lgb.train(list(objective = "regression", num_threads = threads, verbose = -1,
                                    enable_bundle = b, seed = 1), d, nrounds = rounds)
    })
    rows[[length(rows) + 1]] <- data.frame(library = "lightgbm", enable_bundle = b, rep = rep, train_s = t[1],
                                           cpu_s = t[2],
                                           rmse = sqrt(mean((predict(m, X) - y)^2)))
  }
}
res <- do.call(rbind, rows)
print(res)
out <- file.path("inst/bench/results", paste0(format(Sys.Date()), "-bundle", Sys.getenv("BUNDLE_TAG"), ".md"))
commit <- tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?")
lines <- c(sprintf("# Exclusive feature bundling on one-hot data (%s, commit %s)", format(Sys.Date()), commit), "",
           sprintf("%d rows x %d one-hot columns (%d factors of %d levels, %d non-zeros a row) from a dgCMatrix,",
                   n, G * L, G, L, G),
           sprintf("squared error, %d rounds, 31 leaves, %d threads; histboost's binning (hb_dataset) took %.2f s and",
                   rounds, threads, t_bin),
           "is not in the times below (lightgbm's times include its Dataset construction).",
           sprintf("Machine: %s, %d cores (shared with other work: compare rows of one run only).",
                   Sys.info()[["machine"]], parallel::detectCores()), "",
           "| library | enable_bundle | rep | elapsed s | CPU s | train RMSE |", "|---|---|---|---|---|---|",
           sprintf("| %s | %s | %d | %.2f | %.2f | %.4f |", res$library, res$enable_bundle, res$rep, res$train_s,
                   res$cpu_s, res$rmse))
writeLines(lines, out)
cat("wrote", out, "\n")
