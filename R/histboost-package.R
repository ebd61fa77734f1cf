# histboost-package.R: package documentation and the native library.

#' histboost: histogram gradient-boosted trees
#'
#' Gradient-boosted decision trees on binned features, with a native C11
#' engine parallelised with OpenMP and an optional CUDA learner for NVIDIA
#' GPUs (see [hb_has_cuda()]): leaf-wise growth, native categorical splits
#' for factors, learned directions for missing values; regression
#' (squared, L1, Huber, quantile, Poisson, gamma, Tweedie), binary,
#' multiclass and ranking (LambdaRank) objectives; validation sets, early
#' stopping and cross-validation ([hb_cv()]).
#'
#' Train with [histboost()] on a data.frame, matrix, sparse `dgCMatrix`, a
#' formula or a binned [hb_dataset()]; predict with [predict.histboost()]
#' (also SHAP contributions); inspect with [hb_importance()], [hb_trees()]
#' and [plot.histboost()]; save with [hb_save()] or `saveRDS()`. caret and
#' parsnip users: [hb_caret_model()], [hb_parsnip_fit()].
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
#' @examples
#' fit <- histboost(iris[, 1:4], iris$Species, nrounds = 10, nthreads = 1,
#'                  verbose = 0)
#' predict(fit, iris[c(1, 51, 101), ], type = "class")
#' @name histboost-package
#' @aliases histboost-package
#' @keywords internal
#' @useDynLib histboost, .registration = TRUE
#' @importClassesFrom Matrix dgCMatrix
"_PACKAGE"

# A test hook: a .Call routine that only the test suite and inst/bench use
# (single kernels, a dataset's bins). src/init.c registers them only in a
# build with -DHB_TEST_HOOKS, which configure turns on when installing from
# a development checkout (HISTBOOST_TEST_HOOKS=yes|no overrides), so looked
# up by name here and called through do.call(): R CMD check evaluates the
# routine of every literal .Call(), which in a build without hooks fails.
.hb_hook_call <- function(name, ...) {
  ns <- asNamespace("histboost")
  if (!exists(name, envir = ns, inherits = FALSE)) {
    .hb_abort("histboost was built without its test hooks (", name, "): reinstall it from a ",
              "development checkout, or with HISTBOOST_TEST_HOOKS=yes.", kind = "engine")
  }
  do.call(".Call", list(get(name, envir = ns, inherits = FALSE), ...))
}

# The namespace unloaded (unloadNamespace(), pkgload's unload and
# devtools::load_all()'s reload): the live models', datasets' and boosters'
# native objects are freed now, while the library that frees them is still
# loaded. Left to the garbage collector, their finalizers would run after the
# library is unloaded and call into unmapped code. Those R objects then say
# that their native object no longer exists (a model is rebuilt from its
# text by a newly loaded histboost).
.onUnload <- function(libpath) {
  .Call(C_hb_finalize_all)
}
