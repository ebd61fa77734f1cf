# Saving and loading: hb_save/hb_load, saveRDS/readRDS (also in a fresh R
# process), the model text round trip, and malformed files.

io_models <- local({
  cache <- NULL
  function() {
    if (!is.null(cache)) return(cache)
    dr <- gen_task(61, n = 1200, task = "regression", na = 0.1, factors = 1)
    db <- gen_task(62, n = 1200, task = "binary", na = 0.1, factors = 2)
    dm <- gen_task(63, n = 1200, task = "multiclass", factors = 1, K = 3)
    tr <- 1:1000; va <- 1001:1200
    cache <<- list(
      regression = list(m = hb_quiet(dr$x, dr$y, nrounds = 20L, num_leaves = 15L), x = dr$x),
      binary = list(m = hb_quiet(db$x[tr, ], db$y[tr], nrounds = 200L, num_leaves = 15L,
                                 learning_rate = 0.3,
                                 valid = list(v = list(x = db$x[va, ], y = db$y[va])),
                                 early_stopping_rounds = 5L), x = db$x),
      multiclass = list(m = hb_quiet(dm$x, dm$y, nrounds = 10L, num_leaves = 7L), x = dm$x)
    )
    cache
  }
})

all_predictions <- function(m, x) {
  out <- list(raw = predict(m, x, type = "raw"),
              response = predict(m, x, type = "response"),
              leaf = predict(m, x, type = "leaf"),
              raw3 = predict(m, x, type = "raw", iteration = 3L))
  if (m$task != "regression") out$class <- predict(m, x, type = "class")
  out
}

test_that("hb_save / hb_load give identical predictions and fields", {
  for (task in names(io_models())) {
    e <- io_models()[[task]]
    f <- tempfile(fileext = ".txt")
    hb_save(e$m, f)
    m2 <- hb_load(f)
    expect_s3_class(m2, "histboost")
    expect_identical(all_predictions(m2, e$x), all_predictions(e$m, e$x), label = task)
    for (field in c("task", "classes", "feature_names", "feature_types", "feature_levels",
                    "niter", "best_iteration")) {
      expect_identical(m2[[field]], e$m[[field]], label = paste(task, field))
    }
    unlink(f)
  }
  # early stopping really set a best iteration that the reload keeps
  mb <- io_models()$binary$m
  expect_true(!is.null(mb$best_iteration) && mb$best_iteration < mb$niter)
})

test_that("a trained model's native model is the one its text describes", {
  # training hands over the model it grew instead of parsing its text back:
  # that model must write exactly the stored text (and so parse to itself)
  for (task in names(io_models())) {
    e <- io_models()[[task]]
    p <- e$m$.ptr$ptr
    expect_identical(.Call(histboost:::C_hb_model_to_text, p), e$m$model_text, label = task)
    expect_identical(.Call(histboost:::C_hb_model_to_text, .Call(histboost:::C_hb_model_load, e$m$model_text)),
                     e$m$model_text, label = task)
  }
})

test_that("model text round trip: save -> load -> save writes the same file", {
  for (task in names(io_models())) {
    e <- io_models()[[task]]
    f1 <- tempfile(); f2 <- tempfile()
    hb_save(e$m, f1)
    m2 <- hb_load(f1)
    hb_save(m2, f2)
    expect_identical(readLines(f2), readLines(f1), label = task)
    expect_identical(m2$model_text, e$m$model_text, label = task)
    unlink(c(f1, f2))
  }
})

test_that("saveRDS / readRDS in the same session give identical predictions", {
  for (task in names(io_models())) {
    e <- io_models()[[task]]
    f <- tempfile(fileext = ".rds")
    saveRDS(e$m, f)
    m2 <- readRDS(f)
    expect_identical(all_predictions(m2, e$x), all_predictions(e$m, e$x), label = task)
    unlink(f)
  }
})

test_that("readRDS in a fresh R process gives identical predictions", {
  skip_if_not(histboost_installed(), "histboost is not installed, so a fresh R process cannot load it")
  skip_on_os("windows")   # the R_LIBS plumbing below is POSIX; the logic is OS-independent
  dir <- tempfile("hbio")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  models <- lapply(io_models(), `[[`, "m")
  data <- lapply(io_models(), `[[`, "x")
  saveRDS(models, file.path(dir, "models.rds"))
  saveRDS(data, file.path(dir, "data.rds"))
  script <- file.path(dir, "predict.R")
  writeLines(c(
    "options(histboost.nthreads = 2L)",
    "suppressPackageStartupMessages(library(histboost))",
    sprintf("models <- readRDS(%s)", deparse(file.path(dir, "models.rds"))),
    sprintf("data <- readRDS(%s)", deparse(file.path(dir, "data.rds"))),
    "out <- lapply(names(models), function(k) {",
    "  m <- models[[k]]; x <- data[[k]]",
    "  o <- list(raw = predict(m, x, type = 'raw'), response = predict(m, x, type = 'response'),",
    "            leaf = predict(m, x, type = 'leaf'), raw3 = predict(m, x, type = 'raw', iteration = 3L))",
    "  if (m$task != 'regression') o$class <- predict(m, x, type = 'class')",
    "  o })",
    "names(out) <- names(models)",
    sprintf("saveRDS(out, %s)", deparse(file.path(dir, "out.rds")))
  ), script)
  libs <- paste(normalizePath(.libPaths(), mustWork = FALSE), collapse = .Platform$path.sep)
  status <- system2(rscript_path(), c("--vanilla", shQuote(script)),
                    env = paste0("R_LIBS=", shQuote(libs)), stdout = TRUE, stderr = TRUE)
  expect_null(attr(status, "status"), label = paste(status, collapse = "\n"))
  out <- readRDS(file.path(dir, "out.rds"))
  for (task in names(models)) {
    expect_identical(out[[task]], all_predictions(models[[task]], data[[task]]), label = task)
  }
})

test_that("the model text's R-side doubles read back exactly, even by a parser without extended precision", {
  # A parser with doubles alone (R's on arm64 macOS) reads a decimal as its
  # digits, an integer, times or over a power of ten: exact when the digits
  # are below 2^53 and the power is at most 10^22 (both exact, one rounding).
  naive_parse <- function(s) {
    m <- regmatches(s, regexec("^(-?)([0-9]+)(\\.([0-9]+))?(e([-+][0-9]+))?$", s))[[1L]]
    digits <- paste0(m[3L], m[5L])
    e10 <- (if (nzchar(m[7L])) as.integer(m[7L]) else 0L) - nchar(m[5L])
    v <- as.numeric(digits)  # integer digits: exact below 2^53
    stopifnot(v < 2^53, abs(e10) <= 22L)
    v <- if (e10 >= 0L) v * 10^e10 else v / 10^(-e10)
    if (m[2L] == "-") -v else v
  }
  set.seed(4)
  x <- c(0.2, 0.1, 1 / 3, 0.7, 1e-3, 2.5, 100, 0, -0.5, log(2), 1e-30, 3e25, -7.25e-12, .Machine$double.xmax,
         .Machine$double.xmin, runif(300), -rexp(300), exp(rnorm(300, sd = 20)))
  s <- histboost:::.hb_num_text(x)
  hex <- startsWith(sub("^-", "", s), "0x")
  expect_identical(as.numeric(s), x)
  expect_identical(vapply(s[!hex], naive_parse, 0), x[!hex], ignore_attr = TRUE)
  # short decimals stay readable; what 15 digits cannot hold goes in hexadecimal
  expect_identical(s[1:3], c("0.2", "0.1", "0x1.5555555555555p-2"))
  expect_true(all(hex[c(11L, 12L, 14L, 15L)]))
  expect_identical(histboost:::.hb_num_text(c(NA, Inf, -Inf)), c("NA", "Inf", "-Inf"))
  # a model's log and best score, saved and loaded
  d <- data.frame(a = runif(200), b = runif(200))
  y <- d$a + rnorm(200)
  m <- histboost(d[1:150, ], y[1:150], valid = list(v = list(x = d[151:200, ], y = y[151:200])), nrounds = 15L,
                 eval_metric = c("rmse", "mae"), early_stopping_rounds = 5L, verbose = 0L, nthreads = 1L, seed = 1)
  f <- tempfile(fileext = ".hbm")
  on.exit(unlink(f))
  hb_save(m, f)
  back <- hb_load(f)
  expect_identical(back$evaluation_log, m$evaluation_log)
  expect_identical(back$best_score, m$best_score)
})

test_that("a malformed model file is an error of class histboost_error_format", {
  e <- io_models()$binary
  f <- tempfile()
  hb_save(e$m, f)
  txt <- readLines(f)
  bad <- tempfile()
  on.exit(unlink(c(f, bad)))

  # one digit changed in the middle of the file
  mid <- which(grepl("[0-9]", txt))
  mid <- mid[ceiling(length(mid) / 2)]
  pos <- regexpr("[0-9]", txt[mid])
  ch <- substr(txt[mid], pos, pos)
  substr(txt[mid], pos, pos) <- if (ch == "7") "3" else "7"
  writeLines(txt, bad)
  expect_error(hb_load(bad), class = "histboost_error_format")

  # truncated to its first half
  writeLines(readLines(f)[seq_len(length(txt) %/% 2)], bad)
  expect_error(hb_load(bad), class = "histboost_error_format")

  # empty, and not a model at all
  writeLines(character(0), bad)
  expect_error(hb_load(bad), class = "histboost_error_format")
  writeLines(c("hello", "world", "1 2 3"), bad)
  expect_error(hb_load(bad), class = "histboost_error_format")
  # the R data serialization of a model is not a model file either
  saveRDS(e$m, bad)
  expect_error(hb_load(bad), class = "histboost_error_format")
})

test_that("hb_load of a file that does not exist names the file argument", {
  expect_error(hb_load(file.path(tempdir(), "no-such-model.txt")), class = "histboost_error_input",
               regexp = "`file`")
})

test_that("the model format description is installed, referenced, and names every [config] key", {
  skip_if_not(histboost_installed(), "histboost is not installed")
  f <- system.file("model-format.md", package = "histboost")
  expect_true(nzchar(f) && file.exists(f))
  doc <- paste(readLines(f, warn = FALSE), collapse = "\n")
  # every key of a real model's [config] block is described
  txt <- strsplit(io_models()[[1]]$m$model_text, "\n", fixed = TRUE)[[1]]
  cfg <- txt[(which(txt == "[config]") + 1L):(which(txt == "[schema]") - 1L)]
  keys <- sub("=.*", "", cfg)
  expect_gt(length(keys), 10L)
  for (k in keys) expect_true(grepl(paste0("`", k, "`"), doc, fixed = TRUE), label = paste("key", k))
  # ?hb_save points to it
  rd <- tools::Rd_db("histboost")[["hb_save.Rd"]]
  expect_true(any(grepl("model-format.md", unlist(rd), fixed = TRUE)))
})

test_that("paths to inst/ files named in the sources exist (source tree only)", {
  root <- normalizePath(file.path("..", ".."), mustWork = FALSE)
  skip_if_not(file.exists(file.path(root, "DESCRIPTION")) && dir.exists(file.path(root, "R")),
              "not run from a source tree")
  files <- c(list.files(file.path(root, "R"), full.names = TRUE),
             list.files(file.path(root, "src"), "\\.(c|h)$", full.names = TRUE, recursive = TRUE),
             file.path(root, "README.md"))
  refs <- unlist(lapply(files, function(f) {
    regmatches(readLines(f, warn = FALSE), gregexpr("inst/[A-Za-z0-9_./-]+\\.md", readLines(f, warn = FALSE)))
  }))
  expect_gt(length(refs), 0L)
  for (r in unique(refs)) expect_true(file.exists(file.path(root, r)), label = r)
})

test_that("a loaded formula model keeps its predictors' formula but not the call; saveRDS() keeps both", {
  set.seed(5)
  d <- data.frame(a = runif(200), b = runif(200))
  d$y <- d$a - d$b + rnorm(200, sd = 0.1)
  m <- histboost(y ~ a + b, data = d, nrounds = 5L, seed = 1, verbose = 0L)
  expect_identical(deparse(formula(m)), "y ~ a + b")
  f <- tempfile(fileext = ".hbm")
  r <- tempfile(fileext = ".rds")
  on.exit(unlink(c(f, r)))
  hb_save(m, f)
  m2 <- hb_load(f)
  expect_null(m2$call)
  expect_identical(deparse(formula(m2)), "~a + b")
  expect_identical(predict(m2, d[1:10, ]), predict(m, d[1:10, ]))
  saveRDS(m, r)
  m3 <- readRDS(r)
  expect_identical(deparse(formula(m3)), "y ~ a + b")
  expect_identical(m3$call, m$call)
})

test_that("hb_save() refuses a model text edited after training (nothing written); a NUL byte is refused on loading", {
  d <- gen_task(633, n = 200, task = "regression")
  fit <- hb_quiet(d$x, d$y, nrounds = 2L)
  f <- tempfile(fileext = ".hbm")
  bad <- fit
  bad$model_text <- sub("leaf_value=", "leaf_valuX=", fit$model_text, fixed = TRUE)
  expect_error(hb_save(bad, f), class = "histboost_error_format", regexp = "not a valid histboost model.*Nothing was written")
  expect_error(predict(bad, d$x), class = "histboost_error_format")  # the same damage, the same class
  expect_false(file.exists(f))
  hb_save(fit, f)
  before <- readBin(f, "raw", file.size(f))
  bad$model_text <- "garbage"
  expect_error(hb_save(bad, f), class = "histboost_error_format", regexp = "model\\$model_text")
  expect_identical(readBin(f, "raw", file.size(f)), before)  # the file that was there is untouched
  # "nothing may follow end": a trailing NUL (which rawToChar() drops) is refused like any other byte
  writeBin(c(before, as.raw(0L)), f)
  expect_error(hb_load(f), class = "histboost_error_format", regexp = "binary data")
  writeBin(before, f)
  expect_identical(predict(hb_load(f), d$x), predict(fit, d$x))
})
