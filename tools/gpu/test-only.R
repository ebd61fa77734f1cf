# tools/gpu/test-only.R FILE PATTERN: the test_that() blocks of one testthat
# file whose description matches PATTERN (a regular expression), with the
# folder's helper files and the file's other top-level code run as usual, against the
# installed package. For a few tests on the device without the whole file;
# run from the repository root. Prints a summary line, and exits 1 on a failure.
args <- commandArgs(TRUE)
suppressMessages({library(testthat); library(histboost)})
env <- new.env(parent = asNamespace("histboost"))
results <- ListReporter$new()
file <- basename(args[1])
setwd(dirname(args[1]))  # as test_file() runs a file: test_path() is then relative to it
Sys.setenv(TESTTHAT = "true")
invisible(capture.output(testthat::source_test_helpers(".", env)))  # helper-*.R, as test_file() runs them first
with_reporter(MultiReporter$new(list(SummaryReporter$new(), results)), {
  for (e in parse(file)) {
    if (is.call(e) && identical(e[[1]], as.name("test_that"))) {
      if (grepl(args[2], e[[2]])) eval(e, env)
    } else {
      eval(e, env)
    }
  }
})
d <- as.data.frame(results$get_results())
cat(sprintf("%s /%s/: %d passed, %d failed, %d skipped\n", file, args[2], sum(d$passed),
            sum(d$failed) + sum(d$error), sum(d$skipped)))
quit(status = if (sum(d$failed) + sum(d$error) > 0) 1 else 0)
