# threads.R: the package's own thread count (the engine never sets OpenMP's
# global thread count, so R and other packages are unaffected).

#' Default number of threads
#'
#' The number of threads histboost uses when a function's `nthreads` is
#' `NULL`: the option `histboost.nthreads` if set, else the environment
#' variable `HISTBOOST_NUM_THREADS` if set, else half the available cores (at
#' least one, capped by `OMP_THREAD_LIMIT`). Without OpenMP it is always 1.
#'
#' A thread count, whether given as `nthreads`, the option or the
#' environment variable, must be a whole number from 1 to 2147483647; anything else is an
#' error of class `histboost_error_input` that names where the value came
#' from. A count above the number of cores is allowed but capped at four
#' threads per core (and at `OMP_THREAD_LIMIT`): more threads than that only
#' slow the work down, and asking the OpenMP runtime for, say, a million
#' threads would exhaust memory. The capped count is what is used and what
#' `hb_threads()` returns.
#'
#' In a process made by `fork()`, such as the workers of
#' `parallel::mclapply()`, `future::plan(multicore)`, `doMC` or `caret` and
#' `tune` with a forking backend, histboost runs on one thread whatever
#' `nthreads`, the option or the environment variable say, and `hb_threads()`
#' returns 1: the OpenMP thread pool of a parent that has already trained does
#' not survive the fork, and a worker that used it would wait forever. The
#' workers are the parallelism there, and the results are identical to those
#' of sequential code (the model never depends on the thread count). Workers
#' that are fresh R processes (`parallel::makePSOCKcluster()`, `callr`,
#' `future::plan(multisession)`) are not forked and use threads as usual.
#'
#' @param ... Nothing: `hb_threads()` only reports the count (an argument is
#'   an error that says how to set it).
#' @return An integer, the default thread count.
#' @examples
#' hb_threads()
#' old <- options(histboost.nthreads = 1)
#' hb_threads()
#' options(old)
#' @export
hb_threads <- function(...) {
  if (...length()) {
    .hb_abort("hb_threads() takes no arguments: it reports the thread count histboost uses by default. Set ",
              "that with options(histboost.nthreads = ), or give `nthreads` to histboost() or predict().")
  }
  opt <- getOption("histboost.nthreads")
  if (!is.null(opt)) {
    n <- .hb_thread_count(opt, "options(histboost.nthreads)",
                          " Set it to a thread count, or to NULL for the default.")
    return(.Call(C_hb_threads_use, n))
  }
  env <- trimws(Sys.getenv("HISTBOOST_NUM_THREADS", ""))
  if (nzchar(env)) {
    v <- suppressWarnings(as.numeric(env))
    if (is.na(v) || !is.finite(v) || v < 1 || v != round(v) || v > .Machine$integer.max) {
      .hb_abort("The environment variable `HISTBOOST_NUM_THREADS` must be a whole number from 1 to ",
                .Machine$integer.max, ", not \"", env, "\"; set it to a thread count or unset it with ",
                "Sys.unsetenv(\"HISTBOOST_NUM_THREADS\").")
    }
    return(.Call(C_hb_threads_use, as.integer(v)))
  }
  .Call(C_hb_threads_default)
}

# A thread count from `name` (an argument or the option): a whole number >= 1
# that fits an int; `hint` is appended to the error.
.hb_thread_count <- function(value, name, hint = "") {
  if (is.numeric(value) && !is.object(value) && length(value) == 1L && !is.na(value) &&
      value >= 1 && value <= .Machine$integer.max && value == round(value)) {
    return(as.integer(value))
  }
  tryCatch(
    .hb_number(value, name, integer = TRUE, lower = 1, upper = .Machine$integer.max),
    histboost_error_input = function(e) .hb_abort(conditionMessage(e), hint))
}

# A user's `nthreads` argument: NULL -> hb_threads(), else a whole number >= 1,
# capped by the engine at 4 threads per core and OMP_THREAD_LIMIT.
.hb_nthreads <- function(nthreads, arg = "nthreads") {
  if (is.null(nthreads)) return(hb_threads())
  .Call(C_hb_threads_use, .hb_thread_count(nthreads, arg, " Give a thread count, or NULL for hb_threads()."))
}
