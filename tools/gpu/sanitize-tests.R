# tests/testthat/test-cuda.R (or the part HB_CUDA_TEST_PART names) with the
# counts and the names of the tests that ran; run by tools/gpu/sanitize-part.sh
# under compute-sanitizer. Exits 1 on a failure.
r <- testthat::test_file("tests/testthat/test-cuda.R", package = "histboost", load_package = "installed",
                         reporter = "summary")
d <- as.data.frame(r)
ran <- d$test[d$passed > 0 | d$failed > 0 | d$error]
cat(sprintf("cuda tests under sanitizer: %d passed, %d failed, %d skipped; ran: %s\n", sum(d$passed),
            sum(d$failed) + sum(d$error), sum(d$skipped), paste(ran, collapse = " | ")))
if (sum(d$failed) + sum(d$error) > 0) quit(status = 1)
