# run-tests.R: runs tests/testthat against the INSTALLED histboost with two
# threads, prints every failure, and ends with one plain closing line
#   histboost tests: <passed> passed, <failed> failed, <skipped> skipped
# (passed/failed count expectations; a test that errors counts as failed, as in
# testthat's own summary). Exits non-zero on any failure or error, or when no
# expectation ran at all. Run from the repository root: Rscript tools/run-tests.R
# HISTBOOST_TEST_FILTER, when set, keeps the test files whose names match it
# (testthat::test_dir's `filter`).
if (!nzchar(Sys.getenv("HISTBOOST_NUM_THREADS"))) Sys.setenv(HISTBOOST_NUM_THREADS = "2")
options(warn = 1, testthat.progress.max_fails = 100000L)
suppressPackageStartupMessages(library(testthat))

if (!dir.exists("tests/testthat")) {
  cat("run-tests: no tests/testthat folder here (run from the repository root)\n")
  quit(status = 1)
}

reporter <- testthat::ProgressReporter$new(show_praise = FALSE, max_failures = 100000L)
res <- tryCatch(
  testthat::test_dir("tests/testthat", package = "histboost", load_package = "installed",
                     reporter = reporter, stop_on_failure = FALSE, stop_on_warning = FALSE,
                     filter = if (nzchar(Sys.getenv("HISTBOOST_TEST_FILTER"))) Sys.getenv("HISTBOOST_TEST_FILTER")),
  error = function(e) {
    cat("run-tests: the test run itself failed:", conditionMessage(e), "\n")
    NULL
  })
closing <- function(passed, failed, skipped) {
  line <- sprintf("histboost tests: %d passed, %d failed, %d skipped", passed, failed, skipped)
  cat(line, "\n", sep = "")
  out <- Sys.getenv("HISTBOOST_TESTS_SUMMARY_FILE")
  if (nzchar(out)) writeLines(line, out)
}
if (is.null(res)) {
  closing(0L, 1L, 0L)
  quit(status = 1)
}

df <- as.data.frame(res)
passed <- sum(df$passed)
failed <- sum(df$failed) + sum(df$error)
# A skip outside test_that() (a whole file skipped) leaves no row in `df`;
# the reporter counts it.
skipped <- max(sum(df$skipped), reporter$n_skip)
bad <- df[df$failed > 0 | df$error, c("file", "test"), drop = FALSE]
if (nrow(bad)) {
  cat("\nFailing tests:\n")
  for (i in seq_len(nrow(bad))) cat(sprintf("  %s: %s\n", bad$file[i], bad$test[i]))
}
closing(as.integer(passed), as.integer(failed), as.integer(skipped))
quit(status = if (failed > 0 || passed == 0) 1 else 0)
