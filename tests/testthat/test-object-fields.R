# The model text is the truth: fields of the R object edited by hand
# (feature names reversed, classes relabelled, a formula swapped) are
# refused by predict() and friends instead of silently swapping columns;
# a native-model cache copied from another model is never used.

fields_models <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      d <- gen_task(91, n = 400, task = "binary", factors = 1)
      r <- gen_task(92, n = 400, task = "regression")
      cache <<- list(
        bin = hb_quiet(d$x, d$y, nrounds = 5L, num_leaves = 7L, seed = 1L), xb = d$x,
        reg = hb_quiet(r$x, r$y, nrounds = 5L, num_leaves = 7L, seed = 1L), xr = r$x,
        frm = hb_quiet(y ~ x1 + log(abs(x2)), data = cbind(r$x, y = r$y), nrounds = 5L, seed = 1L))
    }
    cache
  }
})

expect_field_refused <- function(m, field, x) {
  for (f in list(function() predict(m, x), function() hb_trees(m), function() hb_importance(m))) {
    err <- expect_error(f(), class = "histboost_error_format")
    expect_match(conditionMessage(err), paste0("`", field, "` field does not agree with its model text"),
                 fixed = TRUE)
  }
}

test_that("edited fields are refused by predict, hb_trees and hb_importance", {
  ms <- fields_models()
  m <- ms$reg
  m$feature_names <- rev(m$feature_names)
  expect_field_refused(m, "feature_names", ms$xr)
  m <- ms$bin
  m$classes <- rev(m$classes)
  expect_field_refused(m, "classes", ms$xb)
  m <- ms$bin
  m$feature_levels[["f1"]] <- rev(m$feature_levels[["f1"]])
  expect_field_refused(m, "feature_levels", ms$xb)
  m <- ms$bin
  m$feature_types[] <- "numeric"
  expect_field_refused(m, "feature_types", ms$xb)
  m <- ms$reg
  m$task <- "binary"
  expect_field_refused(m, "task", ms$xr)
  m <- ms$reg
  m$niter <- 2L
  expect_field_refused(m, "niter", ms$xr)
  m <- ms$frm
  m$terms <- stats::terms(~ log(abs(x2)) + x1)
  err <- expect_error(predict(m, ms$xr), class = "histboost_error_format")
  expect_match(conditionMessage(err), "`terms` field does not agree", fixed = TRUE)
})

test_that("a field removed is an edit too, refused by name (feature_names is not read from feature_names_generated)", {
  ms <- fields_models()
  for (f in c("task", "classes", "feature_names", "feature_types", "feature_levels", "niter")) {
    m <- ms$bin
    m[[f]] <- NULL
    expect_false(f %in% names(m))
    expect_field_refused(m, f, ms$xb)
  }
  # early stopping's best iteration removed would predict with every tree
  d <- gen_task(93, n = 600, task = "regression")
  es <- hb_quiet(d$x[1:400, ], d$y[1:400], nrounds = 200L, learning_rate = 0.5, early_stopping_rounds = 3L,
                 valid = list(v = list(x = d$x[401:600, ], y = d$y[401:600])), seed = 1L)
  expect_lt(es$best_iteration, es$niter)
  es$best_iteration <- NULL
  expect_field_refused(es, "best_iteration", d$x)
  # the fields added since the first snapshots may be missing (an object saved before them): the text's
  m <- ms$bin
  m$class_levels <- NULL
  m$class_ordered <- NULL
  expect_identical(predict(m, ms$xb, type = "class"), predict(ms$bin, ms$xb, type = "class"))
})

test_that("a formula model with names beyond ASCII, read in the C locale: the locale is named, not the file", {
  skip_if_not(isTRUE(l10n_info()[["UTF-8"]]), "the model is made in a UTF-8 session")
  d <- data.frame(y = rnorm(200), o = runif(200), check.names = FALSE)
  d[[enc2utf8("\u00e9t\u00e9")]] <- runif(200)
  m <- hb_quiet(y ~ ., d, nrounds = 3L, min_data_in_leaf = 5L, nthreads = 1L)
  f <- tempfile(fileext = ".txt")
  hb_save(m, f)
  code <- c(sprintf("m <- tryCatch(histboost::hb_load(%s), error = function(e) e)", deparse(f)),
            "cat('class:', class(m)[1], '\\n'); cat(conditionMessage(m), '\\n')")
  g <- tempfile(fileext = ".R")
  writeLines(code, g)
  out <- suppressWarnings(system2(rscript_path(), g, stdout = TRUE, stderr = TRUE,
                                  env = c("LC_ALL=C", paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))))
  expect_match(grep("^class:", out, value = TRUE), "histboost_error_input", info = paste(out, collapse = "\n"))
  expect_match(paste(out, collapse = " "), "only in a UTF-8 locale")
  expect_false(any(grepl("malformed", out)))
})

test_that("untouched models pass: copies, saveRDS/readRDS, and hb_save/hb_load restore edited ones", {
  ms <- fields_models()
  ref <- predict(ms$reg, ms$xr)
  copy <- ms$reg
  expect_identical(predict(copy, ms$xr), ref)
  f <- tempfile(fileext = ".rds")
  saveRDS(ms$frm, f)
  expect_identical(predict(readRDS(f), ms$xr), predict(ms$frm, ms$xr))
  unlink(f)
  # hb_save writes only the text: the reloaded model has the true fields again
  m <- ms$reg
  m$feature_names <- rev(m$feature_names)
  g <- tempfile(fileext = ".hbm")
  hb_save(m, g)
  expect_identical(predict(hb_load(g), ms$xr), ref)
  unlink(g)
})

test_that("a native-model cache copied from another model is not used", {
  ms <- fields_models()
  a <- ms$reg
  b <- hb_quiet(ms$xr, rnorm(nrow(ms$xr)), nrounds = 3L, seed = 5L)  # same columns, another model
  ref_a <- predict(a, ms$xr)
  ref_b <- predict(b, ms$xr)
  expect_false(identical(ref_a, ref_b))
  a$.ptr <- b$.ptr
  expect_identical(predict(a, ms$xr), ref_a)
  expect_identical(predict(b, ms$xr), ref_b)
})

test_that("the native model cache: an edited text is not served from it, it is refilled after readRDS, and it stays small", {
  d <- gen_task(151, n = 300, task = "regression")
  m <- hb_quiet(d$x, d$y, nrounds = 30L, min_data_in_leaf = 5L)
  p <- predict(m, d$x)
  # an edit that keeps the text's size and checksum line: the text no longer matches its checksum, whatever the cache holds
  bad <- m
  bad$model_text <- sub("leaf_value=", "leaf_valuX=", m$model_text, fixed = TRUE)
  expect_identical(nchar(bad$model_text), nchar(m$model_text))
  expect_error(predict(bad, d$x), class = "histboost_error_format")
  expect_identical(predict(m, d$x), p)  # the original still predicts
  # saved with its cache, a model weighs about its text once (the cache keeps a short key, not the text)
  n_text <- nchar(m$model_text, type = "bytes")
  expect_lt(length(serialize(m, NULL)), 1.5 * n_text)
  # read back (the pointer dead) with a key of another form, as an older histboost wrote it: one reload refills the cache
  r <- unserialize(serialize(m, NULL))
  r$.ptr$key <- "checksum=0123 99"
  expect_identical(predict(r, d$x), p)
  expect_identical(r$.ptr$key, histboost:::.hb_text_key(r$model_text))
  ptr <- r$.ptr$ptr
  expect_identical(predict(r, d$x), p)
  expect_identical(r$.ptr$ptr, ptr)  # served from the cache now
})
