# histboost-package.R: package documentation and the native library.

#' histboost: histogram gradient-boosted trees
#'
#' Gradient-boosted decision trees on binned features, with a native C engine
#' (OpenMP; CUDA later): leaf-wise growth, native categorical splits for
#' factors, learned directions for missing values, regression, binary and
#' multiclass objectives, validation sets and early stopping. Train with
#' [histboost()] on a data.frame, matrix or `dgCMatrix`; predict with
#' [predict.histboost()]; inspect with [hb_importance()] and [hb_trees()];
#' save with [hb_save()] or `saveRDS()`.
#'
#' Errors are conditions of class `histboost_error` and one of
#' `histboost_error_input` (a bad argument), `histboost_error_format` (a
#' malformed model), `histboost_error_engine` (the engine failed) and
#' `histboost_error_device` (CUDA not available).
#'
#' Threads: see [hb_threads()]; the option `histboost.nthreads` and the
#' environment variable `HISTBOOST_NUM_THREADS` set the default.
#'
#' Interrupting: Ctrl-C (or RStudio's stop button) stops [histboost()],
#' [hb_cv()], [predict.histboost()] (every type) and [hb_dataset()] within a
#' fraction of a second, also in the middle of a boosting round or of one
#' long prediction. What the call made is freed and R's own `interrupt`
#' condition is signalled (`tryCatch(..., interrupt = )` catches it); models
#' and datasets made before are untouched, and the next call gives what it
#' gives in a fresh session.
#'
#' @name histboost-package
#' @aliases histboost-package
#' @keywords internal
#' @useDynLib histboost, .registration = TRUE
#' @importClassesFrom Matrix dgCMatrix
"_PACKAGE"
