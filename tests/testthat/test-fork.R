# Forked workers (parallel::mclapply, future's multicore, doMC) after a
# multi-threaded training in the parent: GNU OpenMP's thread pool does not
# survive fork, so without the fork handler in src/engine/threads.c the
# workers hang forever. The scenario runs in a child Rscript under a time
# limit, so that a regression fails the test instead of hanging the suite.

test_that("mclapply workers train and predict after a 2-thread training, as sequential code does", {
  skip_on_os("windows") # no fork(): mclapply cannot use more than one core there
  script <- tempfile(fileext = ".R")
  out <- tempfile(fileext = ".rds")
  on.exit(unlink(c(script, out)))
  writeLines(c(
    "suppressPackageStartupMessages(library(histboost))",
    "options(histboost.nthreads = 2L)",
    "set.seed(3)",
    "n <- 6000",
    "x <- data.frame(a = rnorm(n), b = runif(n), c = factor(sample(letters[1:6], n, TRUE)))",
    "y <- x$a + sin(4 * x$b) + as.integer(x$c) / 3 + rnorm(n, sd = 0.3)",
    "yc <- factor(cut(y, 3, labels = c('lo', 'mid', 'hi')))",
    "fit <- function(yy, seed, nthreads) histboost(x, yy, nrounds = 15, num_leaves = 15,",
    "  bagging_fraction = 0.8, bagging_freq = 1, seed = seed, nthreads = nthreads, verbose = 0)",
    # the parent trains with two threads first: this starts OpenMP's pool
    "parent <- fit(y, 1, 2)",
    "parent_threads <- hb_threads()",
    "work <- list(",
    "  train = function(i) fit(y, i, 2)$model_text,",
    "  predict = function(i) predict(parent, x[seq(i, n, by = 3), ], nthreads = 2),",
    "  both = function(i) { m <- fit(yc, i, NULL); predict(m, x, type = 'response') },",
    "  threads = function(i) hb_threads())",
    "seq_res <- lapply(work, function(f) lapply(1:3, f))",
    "par_res <- lapply(work, function(f) parallel::mclapply(1:3, f, mc.cores = 2))",
    # the parent is still multi-threaded afterwards, and still trains
    "after <- fit(y, 1, 2)$model_text",
    "saveRDS(list(seq = seq_res, par = par_res, parent_threads = parent_threads,",
    "  threads_after = hb_threads(), same_after = identical(after, parent$model_text)), commandArgs(TRUE)[1])"),
    script)
  status <- suppressWarnings(system2(rscript_path(), c("--vanilla", shQuote(script), shQuote(out)),
                                     stdout = TRUE, stderr = TRUE, timeout = 120,
                                     env = paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = .Platform$path.sep)))))
  code <- attr(status, "status")
  if (!is.null(code) && code != 0L || !file.exists(out)) {
    fail(paste0("the child R exited with status ", code, " (124: timed out, a worker hung):\n",
                paste(status, collapse = "\n")))
    return(invisible())
  }
  r <- readRDS(out)
  # every worker finished, with no error object in place of a result
  for (k in names(r$par)) {
    expect_false(any(vapply(r$par[[k]], inherits, NA, "try-error")), label = k)
  }
  # a different seed is a different bagged model: the comparison can fail
  expect_false(identical(r$seq$train[[1]], r$seq$train[[2]]))
  # the workers computed exactly what sequential code did (with two threads)
  expect_identical(r$par$train, r$seq$train)
  expect_identical(r$par$predict, r$seq$predict)
  expect_identical(r$par$both, r$seq$both)
  # a forked worker is single-threaded; the parent keeps its threads
  expect_identical(r$par$threads, rep(list(1L), 3))
  expect_identical(r$parent_threads, 2L)
  expect_identical(r$threads_after, 2L)
  expect_true(r$same_after)
})
