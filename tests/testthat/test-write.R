# Writing files: hb_save() writes a temporary file beside the target, checks
# every write and the close, then renames it. A failed write is a classed
# error and leaves the file that was there byte for byte as it was. Faults are
# real: a child R process under a file-size limit (ulimit -f), where every
# write past the limit fails with EFBIG, and a folder without write permission.

write_models <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      fit <- function(n) hb_quiet(mtcars[, -1], mtcars$mpg, nrounds = n, min_data_in_leaf = 5L)
      cache <<- list(old = fit(2L), small = fit(1L), big = fit(50L))
    }
    cache
  }
})

# Run hb_save(readRDS(rds), file) in a child Rscript whose file-size limit is
# `blocks` 512-byte blocks. SIGXFSZ is ignored (trap '' XFSZ, inherited
# through exec), so a write past the limit returns EFBIG instead of killing
# the process, as a full disk would. Returns what the child printed: "saved"
# or the error's class and message.
save_under_limit <- function(model, file, blocks) {
  rds <- tempfile(fileext = ".rds")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(c(rds, script)))
  saveRDS(model, rds)
  writeLines(c(
    "args <- commandArgs(trailingOnly = TRUE)",
    "suppressPackageStartupMessages(library(histboost))",
    "m <- readRDS(args[1])",
    "r <- tryCatch({ hb_save(m, args[2]); 'saved' },",
    "  error = function(e) paste(class(e)[1], conditionMessage(e)))",
    "cat(r, '\\n')"), script)
  cmd <- sprintf("trap '' XFSZ; ulimit -f %d; R_LIBS=%s exec %s --vanilla %s %s %s", blocks,
                 shQuote(paste(.libPaths(), collapse = .Platform$path.sep)),
                 shQuote(rscript_path()), shQuote(script), shQuote(rds), shQuote(file))
  paste(suppressWarnings(system2("sh", c("-c", shQuote(cmd)), stdout = TRUE, stderr = TRUE)),
        collapse = "\n")
}

read_bytes <- function(f) readBin(f, "raw", file.size(f))

test_that("hb_save writes exactly the model text and replaces an existing file", {
  ms <- write_models()
  dir <- tempfile("hbw")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  f <- file.path(dir, "model.hbm")
  expect_identical(hb_save(ms$old, f), f)
  expect_identical(read_bytes(f), charToRaw(ms$old$model_text))
  hb_save(ms$big, f)
  expect_identical(read_bytes(f), charToRaw(ms$big$model_text))
  # nothing but the model is left in the folder (the temporary file was renamed)
  expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), "model.hbm")
})

test_that("hb_save under a file-size limit errors and leaves the old file unchanged", {
  skip_on_os("windows") # needs sh, ulimit and SIGXFSZ
  ms <- write_models()
  dir <- tempfile("hbw")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  f <- file.path(dir, "model.hbm")
  hb_save(ms$old, f)
  old <- read_bytes(f)
  expect_gt(nchar(ms$small$model_text), 512)
  expect_lt(nchar(ms$small$model_text), 4096)
  expect_gt(nchar(ms$big$model_text), 8 * 512)

  # The harness itself: a model below the limit is saved whole by the child.
  ok <- file.path(dir, "fits.hbm")
  expect_match(save_under_limit(ms$small, ok, blocks = 8L), "^saved")
  expect_identical(read_bytes(ok), charToRaw(ms$small$model_text))
  unlink(ok)

  # The small model fits in stdio's buffer, so its write only fails when the
  # buffer is flushed; the big one fails in the write itself.
  for (case in list(list(m = ms$small, blocks = 1L), list(m = ms$big, blocks = 8L))) {
    out <- save_under_limit(case$m, f, case$blocks)
    expect_match(out, "^histboost_error_input ", label = out)
    expect_match(out, "`file` \"[^\"]*model.hbm\" could not be written", label = out)
    expect_match(out, "File too large", fixed = TRUE, label = out)
    expect_match(out, "the file that was there is unchanged", fixed = TRUE, label = out)
    expect_identical(read_bytes(f), old)
    expect_identical(list.files(dir, all.files = TRUE, no.. = TRUE), "model.hbm")
  }
  # and the old file still loads as the old model
  expect_identical(predict(hb_load(f), mtcars), predict(ms$old, mtcars))
})

test_that("hb_save into a folder without write permission errors and changes nothing", {
  skip_on_os("windows") # Sys.chmod() cannot make a folder read-only there
  ms <- write_models()
  dir <- tempfile("hbw")
  dir.create(dir)
  f <- file.path(dir, "model.hbm")
  hb_save(ms$old, f)
  old <- read_bytes(f)
  Sys.chmod(dir, "0555")
  on.exit({
    Sys.chmod(dir, "0755")
    unlink(dir, recursive = TRUE)
  })
  # The superuser writes regardless of permission bits: nothing to test then.
  skip_if(file.access(dir, 2) == 0, "running as root: a read-only folder is still writable")
  err <- expect_error(hb_save(ms$big, f), class = "histboost_error_input")
  expect_match(conditionMessage(err), "Permission denied", fixed = TRUE)
  expect_match(conditionMessage(err), "the file that was there is unchanged", fixed = TRUE)
  expect_identical(read_bytes(f), old)
  # a new file in that folder: no file is created
  g <- file.path(dir, "new.hbm")
  err <- expect_error(hb_save(ms$big, g), class = "histboost_error_input")
  expect_match(conditionMessage(err), "no file was created", fixed = TRUE)
  expect_false(file.exists(g))
})

test_that("hb_save names a missing folder, and a folder given as `file`", {
  ms <- write_models()
  dir <- tempfile("hbw")
  err <- expect_error(hb_save(ms$small, file.path(dir, "m.hbm")), class = "histboost_error_input")
  expect_match(conditionMessage(err), "its folder \"[^\"]+\" does not exist")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  err <- expect_error(hb_save(ms$small, dir), class = "histboost_error_input")
  expect_match(conditionMessage(err), "is a folder", fixed = TRUE)
  expect_true(dir.exists(dir))
  expect_length(list.files(dir, all.files = TRUE, no.. = TRUE), 0L)
})

test_that("hb_save writes through a symbolic link and keeps the file's permissions", {
  skip_on_os("windows") # symbolic links need privileges there
  ms <- write_models()
  dir <- tempfile("hbw")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  real <- file.path(dir, "real.hbm")
  link <- file.path(dir, "link.hbm")
  hb_save(ms$old, real)
  Sys.chmod(real, "0640", use_umask = FALSE)
  expect_true(file.symlink(real, link))
  hb_save(ms$small, link)
  expect_true(nzchar(Sys.readlink(link)))
  expect_identical(read_bytes(real), charToRaw(ms$small$model_text))
  expect_identical(format(file.mode(real)), "640")
})
