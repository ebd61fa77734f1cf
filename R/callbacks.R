# callbacks.R: `callbacks = list(f, ...)`, functions called after every
# round with the iteration, the evaluation log so far and the model so far;
# one that returns TRUE stops the training (xgboost's convention).

.hb_callbacks <- function(callbacks) {
  if (is.null(callbacks)) return(list())
  if (is.function(callbacks)) callbacks <- list(callbacks)
  if (!is.list(callbacks) || is.object(callbacks) || !all(vapply(callbacks, is.function, NA))) {
    .hb_abort("`callbacks` must be a list of functions, each function(iteration, evaluation_log, model).")
  }
  for (k in seq_along(callbacks)) {
    f <- formals(callbacks[[k]])
    if (length(f) < 3L && !"..." %in% names(f)) {
      .hb_abort("`callbacks`: function ", k, " must take three arguments, function(iteration, evaluation_log, ",
                "model) (or `...`).")
    }
  }
  callbacks
}

# Call each callback after round `iter` (iteration = the model's count);
# TRUE when one of them asks to stop. The log (a data.frame, NULL without
# validation sets) and the model (a "histboost" object) are made only when
# a callback uses them, at most once a round.
.hb_run_callbacks <- function(callbacks, tr, iteration, log, iter, log_names, shift) {
  now <- new.env(parent = emptyenv())
  delayedAssign("log", if (!is.null(log_names)) {
    df <- data.frame(iter = shift + seq_len(iter), log[seq_len(iter), , drop = FALSE], check.names = FALSE)
    names(df) <- c("iter", log_names)
    df
  }, assign.env = now)
  delayedAssign("model", .hb_model_from_text(.Call(C_hb_booster_snapshot, tr$booster, tr$base_text,
                                                   as.integer(tr$base_iter %||% 0L))),
                assign.env = now)
  stop <- FALSE
  for (k in seq_along(callbacks)) {
    asked <- tryCatch(callbacks[[k]](iteration, now$log, now$model), error = function(e) {
      .hb_abort_from(e, "`callbacks`: function ", k, " failed after iteration ", iteration, ": ")
    })
    if (isTRUE(asked)) stop <- TRUE
  }
  stop
}

# .hb_run_callbacks(), and with distributed = "mpi" its answer agreed over the
# processes: training stops on every process when a callback asks for it
# on any (they see the same model and log, but a callback may look at its
# process's own state), and one failing fails them all.
.hb_callbacks_stop <- function(callbacks, tr, iteration, log, iter, log_names, shift) {
  run <- function() .hb_run_callbacks(callbacks, tr, iteration, log, iter, log_names, shift)
  if (!identical(tr$distributed, "mpi")) return(run())
  any(unlist(.hb_dist_try(run(), all = TRUE)))
}
