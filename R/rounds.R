# rounds.R: the boosting loop, written once for histboost() and hb_cv().
#
# .hb_rounds() trains `runs` (setups from .hb_setup(), each owning a native
# booster) a round at a time: one run for histboost(), one per fold for
# hb_cv(), whose folds train side by side. Each round it
#   - gives each live run its custom objective's gradients, then one
#     .Call(C_hb_booster_update) (Ctrl-C stops a round in its middle, see
#     src/r_interrupt.c; the callers' on.exit() free the boosters),
#   - records DART's dropped trees,
#   - evaluates the run's validation sets (right after its update, so a
#     metric or objective function sees the runs in order),
#   - logs the round's scores (histboost(): each metric on each set; hb_cv():
#     each metric's mean over the folds, then its standard deviation),
#   - prints them (verbose), tracks the best iteration, calls the callbacks,
#     and stops early, when no run can split any more, or after `nrounds`.
# A run whose trees can no longer split stops there and keeps its model and
# its last metrics; the training stops when no run is left.
#
# With `folds = TRUE` (hb_cv()) the loop reads as hb_cv() always did, which
# differs from histboost() in these points only:
#   - the scores are the folds' mean and standard deviation (each run has one
#     validation set, "test"), printed by .hb_print_cv();
#   - the best iteration is tracked with or without early stopping;
#   - with verbose = 1, the round where every fold stopped splitting is not
#     printed, and an early stop prints its round unless it is a tenth (so a
#     stop at `nrounds` prints that line twice);
#   - the messages name the folds ("in any fold", "the mean test rmse") and
#     leave out the least improvement;
#   - no callbacks, no progress bar and no fitted scores.
#
# The result: a list of
#   log           the scores, a matrix with a row per round done (no columns
#                 without validation sets)
#   log_names     the log's columns as histboost() names them ("test_rmse"),
#                 NULL when nothing was evaluated
#   metric        the metrics' names (NA for a metric function never called)
#   watch         the log column early stopping watches (NULL: none evaluated)
#   rounds        rounds done (the longest run's iterations)
#   niter         each run's iterations
#   best_iter, best_score  the best round (0, NULL: none) and its score
#   best_raw      histboost() with keep_fitted: the training rows' raw
#                 scores at the best round (else NULL)
#   dart_dropped  per run, per round, the iterations DART dropped (NULL
#                 without DART)
#   stop_reason   why it stopped before `nrounds` (NULL: it did not)
.hb_rounds <- function(runs, nrounds, verbose, early_stopping_rounds, stopping, folds = FALSE,
                       callbacks = list(), shift = 0L) {
  K <- length(runs)
  first <- runs[[1L]]
  sets <- names(first$valid_sets)
  nv <- length(sets)
  st <- first$metrics  # an environment: a metric function's name is learnt at its first call
  nm <- length(st$rows)
  min_delta <- stopping$early_stopping_min_delta
  keep_raw <- !folds && isTRUE(first$keep_fitted)
  progress <- .hb_progress(nrounds, if (folds) 0L else verbose, shift)
  on.exit(progress$done(), add = TRUE)
  show <- function(iter, row) {
    if (folds) {
      .hb_print_cv(iter, st$names, row[seq_len(nm)], row[nm + seq_len(nm)])
    } else {
      progress$clear()
      .hb_print_eval(shift + iter, log_names, row)
    }
  }

  # The log grows as rounds complete (doubling): nrounds = 1e9 with early
  # stopping is a fair request, and its log must not be allocated up front.
  width <- if (folds) 2L * nm else nm * nv
  log <- matrix(NA_real_, nrow = min(nrounds, 64L), ncol = width)
  log_names <- NULL
  watch <- NULL
  last <- matrix(NA_real_, nm * nv, K)  # each run's latest metrics
  niter <- integer(K)
  done <- logical(K)
  dart_dropped <- lapply(runs, function(r) if (r$more$dart) list())
  best_iter <- 0L
  best_score <- NULL
  best_raw <- NULL
  rounds <- 0L
  stop_reason <- NULL
  no_split <- FALSE
  no_split_text <- function(n) {
    sprintf("no tree could split any more%s; stopped after %d iterations", if (folds) " in any fold" else "",
            shift + n)
  }
  for (iter in seq_len(nrounds)) {
    moved <- FALSE
    for (k in which(!done)) {
      r <- runs[[k]]
      if (!is.null(r$custom)) {  # distributed: a function failing on one process fails them all
        if (identical(r$distributed, "mpi")) .hb_dist_try(.hb_custom_round(r)) else .hb_custom_round(r)
      }
      res <- .Call(C_hb_booster_update, r$booster)
      if (r$more$dart) dart_dropped[[k]][[iter]] <- .Call(C_hb_booster_dart_dropped, r$booster)
      if (res[2L] >= iter) {
        niter[k] <- res[2L]
        moved <- TRUE
        if (nv) last[, k] <- .hb_eval(r, seq_len(nv))
      }
      # a run whose trees can no longer split keeps its model and metrics
      if (res[1L] != 0L || res[2L] < iter) done[k] <- TRUE
    }
    if (!moved) {  # the engine dropped a round that could not split
      stop_reason <- no_split_text(rounds)
      no_split <- TRUE
      break
    }
    rounds <- iter
    finished <- all(done)
    print_now <- verbose >= 2L ||
      (verbose == 1L && (iter %% 10L == 0L || iter == nrounds || (finished && !folds)))
    improved <- FALSE
    if (iter > nrow(log)) {
      more <- min(nrow(log), nrounds - nrow(log))
      log <- rbind(log, matrix(NA_real_, nrow = more, ncol = ncol(log)))
    }
    if (nv) {
      scores <- if (folds) rowMeans(last) else last[, 1L]
      if (is.null(log_names)) {
        log_names <- as.vector(outer(st$names, sets, function(m, s) paste0(s, "_", m)))
        watch <- .hb_watch(stopping$early_stopping_metric, log_names, st$names, sets)
        higher <- st$higher[(watch - 1L) %% nm + 1L]
      }
      # the folds' deviation divides by their count, as lgb.cv() and xgb.cv() (not sd()'s count - 1)
      spread <- function(v) sqrt(mean((v - mean(v))^2))
      log[iter, ] <- if (folds) c(scores, if (K > 1L) apply(last, 1L, spread) else rep(0, nm)) else scores
      if (print_now) show(iter, log[iter, ])
      if (folds || !is.null(early_stopping_rounds)) {
        s <- scores[watch]
        if (is.null(best_score) || (if (higher) s > best_score + min_delta else s < best_score - min_delta)) {
          best_score <- s
          best_iter <- iter
          improved <- TRUE
          if (keep_raw) best_raw <- .Call(C_hb_booster_scores, first$booster, 0L)
        }
      }
    } else if (print_now) {
      # no validation set: the training data's metrics show the progress
      train_scores <- .hb_eval(first, 0L)  # first: a metric function names itself in its first call
      progress$clear()
      .hb_print_eval(shift + iter, paste0("train_", st$names), train_scores)
    }
    if (length(callbacks) && .hb_callbacks_stop(callbacks, first, shift + iter, log, iter, log_names, shift)) {
      stop_reason <- sprintf("a callback stopped training after iteration %d", shift + iter)
      if (verbose == 1L && !print_now && nv) show(iter, log[iter, ])
      break
    }
    if (!is.null(early_stopping_rounds) && !improved && iter - best_iter >= early_stopping_rounds) {
      what <- if (folds) paste("the mean test", st$names[watch]) else
        paste0(log_names[watch], if (min_delta > 0) paste0(" by more than ", format(min_delta)) else "")
      stop_reason <- sprintf("early stopping: no improvement of %s for %d rounds; best iteration %d",
                             what, early_stopping_rounds, shift + best_iter)
      if (verbose == 1L && (if (folds) iter %% 10L != 0L else !print_now)) show(iter, log[iter, ])
      break
    }
    progress$tick(iter)
    if (finished) {
      stop_reason <- no_split_text(rounds)
      no_split <- TRUE
      break
    }
  }
  progress$done()
  if (iter == 1L && no_split) {
    # Not one split: a problem whatever `verbose` says, and a warning, so that
    # it reaches users of parsnip and caret (which train quietly).
    .hb_warn(if (folds) "in every fold, ", .hb_no_split_text(first, shift))
  } else if (verbose >= 1L && !is.null(stop_reason)) {
    message(stop_reason)
  }
  list(log = log[seq_len(rounds), , drop = FALSE], log_names = log_names, metric = st$names, watch = watch,
       rounds = rounds, niter = niter, best_iter = best_iter, best_score = best_score, best_raw = best_raw,
       dart_dropped = dart_dropped, stop_reason = stop_reason)
}

# A round's line: each log column's score (histboost()) ...
.hb_print_eval <- function(iter, names, scores) {
  message(sprintf("[%d]  %s", iter, paste(sprintf("%s: %.6g", names, scores), collapse = "  ")))
}

# ... or each metric's mean and standard deviation over the folds (hb_cv()).
.hb_print_cv <- function(iter, metric, mean, sd) {
  message(sprintf("[%d]  %s", iter, paste(sprintf("test_%s: %.6g +- %.3g", metric, mean, sd), collapse = "  ")))
}
