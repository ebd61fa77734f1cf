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
#' The format (its grammar, what each section holds, the checksum and how a
#' reader should validate a file) is described in the file `model-format.md`
#' installed with the package: open it with
#' `file.show(system.file("model-format.md", package = "histboost"))`.
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
  con <- tryCatch(file(file, open = "wb"), error = function(e) NULL, warning = function(w) NULL)
  if (is.null(con)) .hb_abort("`file` \"", file, "\" cannot be opened for writing.")
  on.exit(close(con))
  writeBin(charToRaw(enc2utf8(model$model_text)), con)
  invisible(file)
}

#' @rdname hb_save
#' @export
hb_load <- function(file) {
  .hb_check_path(file)
  if (!file.exists(file) || dir.exists(file)) .hb_abort("`file` \"", file, "\" does not exist.")
  size <- file.size(file)
  raw <- readBin(file, what = "raw", n = size)
  text <- tryCatch(rawToChar(raw), error = function(e) NULL)
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
