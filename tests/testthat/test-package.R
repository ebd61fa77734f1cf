# Package metadata that R CMD check judges: every suggested package has a use.

test_that("vignette builders are suggested only when there are vignettes", {
  desc <- utils::packageDescription("histboost")
  suggests <- trimws(sub("\\(.*", "", strsplit(if (is.null(desc$Suggests)) "" else desc$Suggests, ",")[[1]]))
  builder <- desc$VignetteBuilder
  # knitr and rmarkdown serve only to build vignettes; without any they are
  # a NOTE ("suggested but not available") on machines that lack them
  if (is.null(builder)) {
    expect_false(any(c("knitr", "rmarkdown") %in% suggests),
                 label = paste("Suggests:", paste(suggests, collapse = ", ")))
  } else {
    expect_true(all(trimws(strsplit(builder, ",")[[1]]) %in% suggests))
  }
  # the test framework and the comparison packages stay
  expect_true(all(c("testthat", "lightgbm", "xgboost") %in% suggests))
})

test_that("unloading histboost's library with models and datasets alive leaves R running; a model predicts again after", {
  skip_if_not(histboost_installed(), "histboost is not installed, so a child R process cannot load it")
  dir <- tempfile("hbunload")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  script <- file.path(dir, "child.R")
  writeLines(c(
    "args <- commandArgs(TRUE)",
    "library(histboost)",
    "x <- mtcars[, -1]",
    "ds <- hb_dataset(x, mtcars$mpg, min_data_in_bin = 1)",
    "fit <- histboost(x, mtcars$mpg, nrounds = 3, min_data_in_leaf = 5, nthreads = 1, verbose = 0)",
    "p0 <- predict(fit, x)  # the native model is cached behind fit now",
    "unloadNamespace('histboost')  # as pkgload's unload and devtools::load_all() do",
    "library.dynam.unload('histboost', find.package('histboost'))",
    "invisible(gc())  # the models' finalizers: they ran before the library went",
    "library(histboost)",
    "err <- tryCatch(histboost(ds, nrounds = 1, verbose = 0), error = function(e) class(e)[1])",
    "saveRDS(list(same = identical(predict(fit, x), p0), err = err), args[1])"), script)
  libs <- paste(normalizePath(.libPaths(), mustWork = FALSE), collapse = .Platform$path.sep)
  out <- file.path(dir, "out.rds")
  st <- system2(rscript_path(), c("--vanilla", shQuote(script), shQuote(out)), env = paste0("R_LIBS=", shQuote(libs)),
                stdout = FALSE, stderr = FALSE)
  expect_identical(st, 0L)  # a segfault exits 139
  res <- readRDS(out)
  expect_true(res$same)  # the model is rebuilt from its text by the library loaded again
  expect_identical(res$err, "histboost_error_input")  # the dataset's binned data is gone: said so, classed
})
