# Ctrl-C: a child R process runs long calls (training, cross-validation,
# prediction of every type, binning); the test sends it SIGINT once it is
# inside each, and measures how soon the child's tryCatch(interrupt = ) runs.
# Before each call the child times a scaled-down run of it, which gives the
# call's uninterrupted duration; the reaction must be well within it. After
# the interrupts, the same child trains, cross-validates and predicts, and
# the results must be those this (never interrupted) process computes, bit
# for bit; the model the interrupted predictions used must predict as before.
# (R's non-interactive sessions deliver SIGINT as the interrupt condition,
# which tryCatch(interrupt = ) catches, as at the console.)

# The child: `dir` holds its files. Each long call k writes est-k (its
# estimated duration, seconds), then, inside the tryCatch, marker-k, and
# when it returns caught-k (the time, and the class of what stopped it).
interrupt_child <- c(
  "args <- commandArgs(TRUE); dir <- args[1]",
  "suppressPackageStartupMessages({library(histboost); library(Matrix)})",
  "put <- function(name, lines) {",
  "  f <- file.path(dir, name); writeLines(lines, paste0(f, '.tmp')); file.rename(paste0(f, '.tmp'), f)",
  "}",
  "now <- function() as.numeric(Sys.time())",
  "took <- function(expr) { t0 <- now(); force(expr); now() - t0 }",
  "long <- function(k, est, expr) {",
  "  put(paste0('est-', k), format(est, digits = 6))",
  "  res <- tryCatch({ put(paste0('marker-', k), ''); force(expr); 'finished' },",
  "                  interrupt = function(e) paste(class(e), collapse = ' '))",
  "  put(paste0('caught-', k), c(format(now(), digits = 17), res))",
  "}",
  "main <- function() {",
  "  nth <- 2L  # the long calls' threads (setting up takes one)",
  "  put('pid', as.character(Sys.getpid()))",
  # dense regression data; training and cross-validation of 255-leaf trees
  "  set.seed(42)",
  "  n <- 100000; p <- 20",
  "  X <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0('x', 1:p)))",
  "  Y <- X[, 1] + sin(2 * X[, 2]) + X[, 3] * X[, 4] + rnorm(n)",
  "  ds <- hb_dataset(X, Y, nthreads = 1L)",
  "  tr <- function(r) histboost(ds, nrounds = r, num_leaves = 255, nthreads = nth, seed = 1, verbose = 0)",
  "  long('train', took(tr(1)) * 2000, tr(2000))",
  # three classes at 8 threads: their trees grow at once on class workers
  # (learner_cpu.c), which see the interrupt through the main thread
  "  Sys.setenv(HISTBOOST_TEST_CLASS_WORKERS = '3')  # whatever the cores (a build with test hooks)",
  "  Ymc <- cut(Y, 3)",
  "  trm <- function(r, n = 100000) histboost(X[1:n, ], Ymc[1:n], objective = 'multiclass', nrounds = r,",
  "                                           num_leaves = 255, nthreads = 8L, seed = 1, verbose = 0)",
  "  long('train-classes', took(trm(1)) * 2000, trm(2000))",
  "  Xc <- X[1:30000, ]; Yc <- Y[1:30000]",
  "  cv <- function(r) hb_cv(Xc, Yc, nfold = 3, nrounds = r, num_leaves = 255, nthreads = nth, seed = 1, verbose = 0)",
  "  long('cv', took(cv(1)) * 2000, cv(2000))",
  # a model of 60 chains of 254 splits: groups of 3 rows, one 0/1 column
  # each; every split peels one group off, and a row of zeros walks the
  # whole chain of every tree (long predictions from small inputs)
  "  g <- rep(1:255, each = 3)",
  "  S <- sparseMatrix(i = seq_along(g), j = g, x = 1, dims = c(length(g), 255),",
  "                    dimnames = list(NULL, paste0('f', 1:255)))",
  "  chain <- histboost(S, rnorm(255)[g], nrounds = 60, num_leaves = 255, min_data_in_leaf = 3,",
  "                     nthreads = 1L, seed = 1, verbose = 0)",
  "  saveRDS(chain, file.path(dir, 'chain.rds'))",
  "  probe <- S[c(1, 30, 300, 700, 765), ]",
  "  probe[1, ] <- 0",
  "  probes <- function() lapply(c('response', 'raw', 'leaf', 'contrib'), function(t)",
  "    predict(chain, probe, type = t, iteration = if (t == 'contrib') 10L, nthreads = nth))",
  "  before <- probes()",
  "  zeros <- function(n) sparseMatrix(i = integer(0), j = integer(0), x = numeric(0), dims = c(n, 255),",
  "                                     dimnames = list(NULL, colnames(S)))",
  "  pr <- function(z, t, it = NULL) predict(chain, z, type = t, iteration = it, nthreads = nth)",
  # each call is sized from a pilot run to last about `target` seconds on
  # this machine (within [lo, hi] rows), so that a fast machine or a faster
  # engine does not bring it under the test's 1 s floor
  "  size <- function(t, n0, lo, hi, target = 4) as.integer(min(hi, max(lo, ceiling(n0 * target / max(t, 1e-3)))))",
  "  pilot <- function(k, n0, lo, hi, call) {",
  "    tp <- took(call(n0)); n <- size(tp, n0, lo, hi); long(k, tp * n / n0, call(n))",
  "  }",
  "  pilot('response', 50000, 1e6, 8e6, function(n) pr(zeros(n), 'response'))",
  "  pilot('raw', 50000, 1e6, 8e6, function(n) pr(zeros(n), 'raw'))",
  "  pilot('leaf', 15000, 150000, 1e6, function(n) pr(zeros(n), 'leaf'))",
  "  pilot('contrib', 10, 200, 5000, function(n) pr(zeros(n), 'contrib', 10L))",
  # factors of 16,000 levels: 63 features each to bin; 16 to 64 columns,
  # sized from the binning of two
  "  nl <- 16000",
  "  fac <- function(m) as.data.frame(lapply(seq_len(m), function(j)",
  "    structure(sample.int(nl, 800000, TRUE), levels = paste0('l', 1:nl), class = 'factor')))",
  "  df <- fac(2)",
  "  tp <- took(hb_dataset(df, nthreads = nth))",
  "  m <- size(tp, 2, 16, 64)",
  "  df <- fac(m)",
  "  long('dataset', tp * m / 2, hb_dataset(df, nthreads = nth))",
  # after the interrupts: the same chain model, a new training, a new cv
  "  after <- probes()",
  "  xs <- X[1:3000, ]; ys <- Y[1:3000]",
  "  small <- histboost(xs, ys, nrounds = 20, num_leaves = 63, nthreads = nth, seed = 3, verbose = 0)",
  "  set.seed(5)  # the folds",
  "  scv <- hb_cv(xs, ys, nfold = 3, nrounds = 10, nthreads = nth, seed = 3, verbose = 0)",
  "  small_mc <- histboost(xs, cut(ys, 3), objective = 'multiclass', nrounds = 10, num_leaves = 63,",
  "                        nthreads = 8L, seed = 3, verbose = 0)",
  "  saveRDS(list(before = before, after = after, xs = xs, ys = ys, small = small$model_text,",
  "               small_mc = small_mc$model_text,",
  "               small_pred = predict(small, xs, nthreads = nth), scv = scv$evaluation_log),",
  "          file.path(dir, 'results.rds'))",
  "  put('done', '')",
  "}",
  "tryCatch(main(), error = function(e) put('error', conditionMessage(e)))"
)

test_that("Ctrl-C stops training (class trees grown at once too), cv, prediction of every type and binning at once, and everything works after", {
  skip_on_os("windows")  # SIGINT to another process is POSIX
  skip_if_not(histboost_installed(), "histboost is not installed, so a child R process cannot load it")
  dir <- tempfile("hbint")
  dir.create(dir)
  script <- file.path(dir, "child.R")
  writeLines(interrupt_child, script)
  libs <- paste(normalizePath(.libPaths(), mustWork = FALSE), collapse = .Platform$path.sep)
  system2(rscript_path(), c("--vanilla", shQuote(script), shQuote(dir)), env = paste0("R_LIBS=", shQuote(libs)),
          stdout = file.path(dir, "out.log"), stderr = file.path(dir, "err.log"), wait = FALSE)
  pid <- NA_integer_
  on.exit({
    if (!is.na(pid)) tools::pskill(pid, tools::SIGKILL)
    unlink(dir, recursive = TRUE)
  })
  # wait for the child's file `name`; NULL after `limit` seconds or when it failed
  wait_for <- function(name, limit = 120) {
    f <- file.path(dir, name)
    t0 <- Sys.time()
    while (!file.exists(f)) {
      if (file.exists(file.path(dir, "error")) || difftime(Sys.time(), t0, units = "secs") > limit) return(NULL)
      Sys.sleep(0.02)
    }
    readLines(f)
  }
  child_log <- function() {
    paste(c(wait_for("error", 0), readLines(file.path(dir, "err.log"), warn = FALSE)), collapse = "\n")
  }
  p <- wait_for("pid")
  expect_false(is.null(p), label = child_log())
  if (is.null(p)) return()
  pid <- as.integer(p)

  for (k in c("train", "train-classes", "cv", "response", "raw", "leaf", "contrib", "dataset")) {
    if (is.null(wait_for(paste0("marker-", k)))) {
      fail(paste0(k, ": the child never started the call: ", child_log()))
      return()
    }
    Sys.sleep(0.3)  # well inside the call
    sent <- as.numeric(Sys.time())
    tools::pskill(pid, tools::SIGINT)
    caught <- wait_for(paste0("caught-", k), 60)
    if (is.null(caught)) {
      fail(paste0(k, ": no reaction to Ctrl-C within 60 s: ", child_log()))
      return()
    }
    est <- as.numeric(readLines(file.path(dir, paste0("est-", k))))
    reaction <- as.numeric(caught[1]) - sent
    # R's own interrupt condition reached the child's handler ...
    expect_identical(caught[2], "interrupt condition", label = k)
    # ... soon, and long before the call would have ended: the bound is
    # generous for a busy machine, and under a third of the duration
    bound <- min(2, est / 3)
    expect_gt(est, 1, label = paste(k, "uninterrupted duration (s)"))
    expect_lt(reaction, bound, label = sprintf("%s: seconds from Ctrl-C to the handler (call of %.1f s)", k, est))
  }
  if (is.null(wait_for("done"))) {
    fail(paste("the child did not finish after the interrupts:", child_log()))
    return()
  }
  pid <- NA_integer_
  res <- readRDS(file.path(dir, "results.rds"))
  # the model the interrupted predictions used predicts as before, and as here
  expect_identical(res$after, res$before)
  chain <- readRDS(file.path(dir, "chain.rds"))
  g <- rep(1:255, each = 3)
  probe <- Matrix::sparseMatrix(i = seq_along(g), j = g, x = 1, dims = c(length(g), 255),
                                dimnames = list(NULL, paste0("f", 1:255)))[c(1, 30, 300, 700, 765), ]
  probe[1, ] <- 0
  here <- lapply(c("response", "raw", "leaf", "contrib"), function(t)
    predict(chain, probe, type = t, iteration = if (t == "contrib") 10L, nthreads = 2L))
  expect_identical(res$after, here)
  # a training, a prediction and a cross-validation after the interrupts
  # are those of this process
  small <- histboost(res$xs, res$ys, nrounds = 20, num_leaves = 63, nthreads = 2L, seed = 3, verbose = 0)
  expect_identical(res$small, small$model_text)
  expect_identical(res$small_pred, predict(small, res$xs, nthreads = 2L))
  # three classes' trees grown at once there (8 threads), one after another here
  small_mc <- histboost(res$xs, cut(res$ys, 3), objective = "multiclass", nrounds = 10, num_leaves = 63,
                        nthreads = 1L, seed = 3, verbose = 0)
  expect_identical(res$small_mc, small_mc$model_text)
  set.seed(5)  # the folds
  scv <- hb_cv(res$xs, res$ys, nfold = 3, nrounds = 10, nthreads = 2L, seed = 3, verbose = 0)
  expect_identical(res$scv, scv$evaluation_log)
})
