# Model files made by the loader fuzzer (tools/fuzz_model.c, `make -C tools
# fuzz`): mutations of real models with a valid checksum. rejected-*.hbm are
# cases the C loader refuses; loaded-*.hbm ones it accepts. Through R, each
# must give a histboost model or an error of class histboost_error_format,
# never another error or a crash, and a model must predict (or refuse its
# newdata with a classed error). A crash the fuzzer finds is added here.

fuzz_dir <- test_path("fixtures", "fuzz")

# Four rows for a model's schema: values, a missing one, its levels.
fuzz_newdata <- function(m) {
  cols <- lapply(seq_along(m$feature_names), function(j) {
    if (identical(m$feature_types[[j]], "categorical")) {
      lv <- m$feature_levels[[j]]
      factor(c(lv, NA, NA, NA, NA)[c(1, 2, length(lv) + 1L, 1)], levels = lv)
    } else {
      c(-1, 0, NA, 5)
    }
  })
  stats::setNames(as.data.frame(cols), m$feature_names)
}

load_outcome <- function(f) {
  tryCatch({
    m <- hb_load(f)
    p <- tryCatch(predict(m, fuzz_newdata(m), type = "raw"), histboost_error = function(e) e)
    if (inherits(p, "histboost_error")) "loaded, newdata refused" else if (is.numeric(p)) "predicted" else "odd"
  }, histboost_error_format = function(e) "format", error = function(e) paste("unclassed:", conditionMessage(e)))
}

test_that("fuzzed model files load or fail with histboost_error_format, never anything else", {
  rejected <- list.files(fuzz_dir, "^rejected-.*\\.hbm$", full.names = TRUE)
  loaded <- list.files(fuzz_dir, "^loaded-.*\\.hbm$", full.names = TRUE)
  expect_gte(length(rejected), 5L)
  expect_gte(length(loaded), 5L)
  for (f in rejected) expect_identical(load_outcome(f), "format", label = basename(f))
  outcomes <- vapply(loaded, load_outcome, "")
  for (k in seq_along(loaded)) {
    expect_true(outcomes[[k]] %in% c("predicted", "loaded, newdata refused", "format"),
                label = paste(basename(loaded[k]), outcomes[[k]]))
  }
  # and some of the C-accepted mutations do make models that predict
  expect_true(any(outcomes == "predicted"))
})
