# io.R: saving and loading models in the one model format (a versioned,
# checksummed text; see inst/model-format.md). saveRDS()/readRDS() need
# nothing from here: the object carries the same text.

#' Save and load a histboost model
#'
#' `hb_save()` writes the model's text (the versioned histboost model format,
#' which also holds the R-side fields: parameters, evaluation log, best
#' iteration, classes, formula) to a file; `hb_load()` reads it back and
#' checks it (version, checksum, every count and index). `saveRDS()` and
#' `readRDS()` also work on a model without any extra step.
#'
#' The file holds what predicting needs, not how the model was called: a
#' loaded model's `call` is `NULL`, so `update()` cannot refit it, and a
#' formula model keeps its predictors' formula (which `predict()` evaluates
#' on `newdata`) without the response (`formula()` gives `~ a + b`).
#' `saveRDS()` keeps both.
#'
#' The format (its grammar, what each section holds, the checksum and how a
#' reader should validate a file) is described in the file `model-format.md`
#' installed with the package: open it with
#' `file.show(system.file("model-format.md", package = "histboost"))`.
#'
#' `hb_save()` checks the model's text as `hb_load()` will (a text edited
#' after training is an error, and nothing is written), and never leaves a
#' half-written file: it writes to a new temporary
#' file in the same folder, checks every write, the flush to disk and the
#' close, and only then renames it over `file`. If anything fails (a full
#' disk, a file-size limit, a folder without write permission) the call is an
#' error of class `histboost_error_input` that says why, the temporary file is
#' removed, and a file that was already at `file` is left exactly as it was.
#' (A file-size limit set with `ulimit -f` also sends the process the signal
#' SIGXFSZ, whose default action stops R before any error can be raised; the
#' error above needs that signal ignored, as `trap '' XFSZ` does in the shell
#' that starts R.)
#' Writing needs permission to create files in the folder of `file`, not only
#' to write `file` itself.
#'
#' @section Trust:
#' A model file written by `hb_save()` is data: `hb_load()` checks every
#' count, index and the checksum, and a formula model's formula may only name
#' columns and use the functions listed under \sQuote{Formulas} in
#' [histboost()], so loading a model file from an untrusted source and
#' predicting with it runs no code of its author's. This is the safe way to
#' share models. An `.rds` file is different: `readRDS()` restores any R
#' object, and one from an untrusted source is as unsafe as any R object (its
#' author controls every field, environment and function in it); load `.rds`
#' files only from sources you trust.
#'
#' @param model A `"histboost"` model.
#' @param file Path of the file to write or read.
#' @return `hb_save()` returns `file` invisibly; `hb_load()` a `"histboost"`
#'   model whose predictions are identical to the saved one's. A malformed
#'   file is an error of class `histboost_error_format`.
#' @examples
#' fit <- histboost(mtcars[, -1], mtcars$mpg, nrounds = 5, min_data_in_leaf = 5,
#'                  nthreads = 1, verbose = 0)
#' f <- tempfile(fileext = ".hbm")
#' hb_save(fit, f)
#' fit2 <- hb_load(f)
#' all.equal(predict(fit, mtcars), predict(fit2, mtcars))
#' unlink(f)
#' @export
hb_save <- function(model, file) {
  .hb_check_model(model, "model")
  .hb_check_path(file)
  text <- enc2utf8(model$model_text)
  # the checks hb_load() makes, before writing: a text edited after training is refused here, not on loading
  # (a format error, as predict() and hb_trees() give for the same text)
  tryCatch(.hb_model_from_text(text, call = NULL), histboost_error_format = function(e) {
    .hb_throw("format", paste0("`model` holds a model text that is not a valid histboost model (",
                               sub("^`model_text`: ", "", conditionMessage(e)), "); was `model$model_text` ",
                               "changed? Nothing was written."))
  })
  .hb_write_file(text, file)
  invisible(file)
}

# Write `text` to `file` so that a failure is never silent and never leaves a
# half-written file: the text goes to a new temporary file beside the target
# (same folder, hence same file system), every write, the flush, the sync and
# the close are checked in C (src/engine/fileio.c), and only then is it renamed
# over the target. Any failure is an input error naming `file`, and the file
# that was there before is left byte for byte as it was.
.hb_write_file <- function(text, file) {
  path <- path.expand(file)
  if (dir.exists(path)) {
    .hb_abort("`file` \"", file, "\" is a folder; give the path of a file (for example \"",
              file.path(file, "model.hbm"), "\").")
  }
  # Write through a symbolic link to the file it points to, as file() would;
  # renaming over the link itself would replace the link with a plain file.
  if (nzchar(Sys.readlink(path))) path <- normalizePath(path, mustWork = FALSE)
  dir <- dirname(path)
  if (!dir.exists(dir)) {
    .hb_abort("`file` \"", file, "\" cannot be written: its folder \"", dir,
              "\" does not exist. Create it first, e.g. with dir.create().")
  }
  # tempfile() draws its name from C's rand(), not R's RNG: .Random.seed is left alone.
  tmp <- tempfile(paste0(".", basename(path), "."), tmpdir = dir, fileext = ".tmp")
  done <- FALSE
  on.exit(if (!done) unlink(tmp))
  tryCatch(.Call(C_hb_write_file, tmp, text), histboost_error_input = function(e) {
    .hb_abort("`file` \"", file, "\" could not be written (", conditionMessage(e), "); ",
              if (file.exists(path)) "the file that was there is unchanged." else "no file was created.",
              " Check that the folder is writable and the disk has room.")
  })
  # The new file keeps the old one's permissions, as an overwrite in place would.
  if (file.exists(path)) Sys.chmod(tmp, file.mode(path), use_umask = FALSE)
  why <- NULL
  ok <- withCallingHandlers(file.rename(tmp, path), warning = function(w) {
    why <<- conditionMessage(w)
    invokeRestart("muffleWarning")
  })
  if (!ok) {
    .hb_abort("`file` \"", file, "\" could not be written: renaming the finished temporary file ",
              "over it failed", if (!is.null(why)) paste0(" (", why, ")"), "; ",
              if (file.exists(path)) "the file that was there is unchanged." else "no file was created.")
  }
  done <- TRUE
  invisible(file)
}

#' @rdname hb_save
#' @export
hb_load <- function(file) {
  .hb_check_path(file)
  if (dir.exists(file)) {
    .hb_abort("`file` \"", file, "\" is a folder, not a model file; give the path of a file that ",
              "hb_save() wrote.")
  }
  if (!file.exists(file)) .hb_abort("`file` \"", file, "\" does not exist.")
  size <- file.size(file)
  raw <- readBin(file, what = "raw", n = size)
  # (rawToChar() would drop NUL bytes at the end without a word)
  text <- if (!any(raw == as.raw(0L))) tryCatch(rawToChar(raw), error = function(e) NULL)
  if (is.null(text)) .hb_throw("format", sprintf("`file` \"%s\" is not a histboost model (it holds binary data).", file))
  Encoding(text) <- "UTF-8"
  tryCatch(.hb_model_from_text(text, call = NULL), histboost_error_format = function(e) {
    .hb_throw("format", sprintf("`file` \"%s\" is not a valid histboost model: %s", file,
                                sub("^`model_text`: ", "", conditionMessage(e))))
  })
}

.hb_check_path <- function(file) {
  if (!is.character(file) || length(file) != 1L || is.na(file) || !nzchar(file)) {
    .hb_abort("`file` must be a single file path.")
  }
}
