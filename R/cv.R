# cv.R: hb_cv(), k-fold cross-validation: one booster per fold, trained a
# round at a time side by side by histboost()'s loop (R/rounds.R), the folds'
# validation metrics averaged each round and early stopping on their mean.

# hb_cv()'s own arguments: training parameters of histboost() that it sets
# itself for every fold.
.HB_CV_OWN <- c("x", "y", "weights", "group", "nrounds", "valid", "early_stopping_rounds", "eval_metric",
                "nthreads", "seed", "verbose")

#' Cross-validation
#'
#' Splits the rows into folds and trains one model per fold on the other
#' folds' rows, all folds a round at a time, evaluating each on its own
#' held-out rows. Each round's metrics are averaged over the folds; with
#' `early_stopping_rounds`, training stops when the mean of the first metric
#' has not improved for that many rounds, as [histboost()] does with one
#' validation set.
#'
#' `x`, `y`, `weights` and the parameters are checked once, before the rows
#' are split, as [histboost()] checks them: an error names the argument and
#' the rows by their numbers in your data. An error about one fold's rows
#' alone (say, its training rows all of weight 0) begins with that fold,
#' "fold k: ".
#'
#' @param x A data.frame, numeric matrix or sparse or dense `Matrix`, as for
#'   [histboost()] (not an [hb_dataset()]: each fold is binned from its own
#'   training rows, so its held-out rows play no part in the bins).
#' @param y,weights Labels and optional row weights, as for [histboost()].
#' @param group For ranking (`objective = "lambdarank"`): the query of each
#'   row, as for [histboost()]. Folds are then made of whole queries (each
#'   query's rows are held out together), and `folds`, when given, must not
#'   split a query.
#' @param nfold Number of folds, 2 or more (not used when `folds` is given).
#' @param folds `NULL`, or a list of integer vectors: the held-out rows of
#'   each fold (e.g. for grouped or time-ordered folds). Folds must not
#'   overlap; rows in no fold are always trained on.
#' @param stratified For classification (`y` a factor or logical vector, or
#'   `objective` `"binary"` or `"multiclass"`), deal each class's
#'   rows out evenly between the folds, so that every fold keeps the class
#'   shares. Folds are drawn with R's random number generator: from `seed`
#'   when it is given (the session's random numbers left as they were), so
#'   that the same `seed` gives the same folds and the same result; else from
#'   the session's (`set.seed()` makes them reproducible).
#' @param nrounds Most boosting rounds.
#' @param early_stopping_rounds `NULL`, or stop when the mean over the folds
#'   of the first metric has not improved for this many rounds
#'   (`early_stopping_metric` and `early_stopping_min_delta`, given in `...`,
#'   choose another metric and the least improvement, as for [histboost()]).
#' @param eval_metric `NULL` (the task's default), metric names or metric
#'   functions, as for [histboost()]; a function is called for each fold's
#'   held-out rows.
#' @param nthreads,seed,verbose As for [histboost()]; `seed` (drawn once when
#'   `NULL`) is shared by the folds' models, and draws the folds. `verbose = 1` prints the mean metrics
#'   every 10th round, 2 every round.
#' @param keep_models `TRUE` to return the folds' models.
#' @param ... Other training parameters of [histboost()] (`objective`,
#'   `learning_rate`, `num_leaves`, ...; an `init_score` is split with the
#'   folds; with `init_model` each fold continues it, and the log and best
#'   iteration count the new rounds only, as `nrounds` for a continuation
#'   with [histboost()], while the folds' models hold the base's iterations
#'   too), and `params`, as for [histboost()] (which may set `hb_cv()`'s own
#'   `nrounds`, `eval_metric`, ... too). Unknown arguments are an error, and
#'   arguments are matched by their full names only.
#' @return An object of class `"hb_cv"`: a list with `evaluation_log` (a
#'   data.frame: `iter`, then `test_<metric>_mean` and `test_<metric>_sd`,
#'   the mean and standard deviation over the folds, for each metric; the
#'   deviation divides by the number of folds, as `lgb.cv()` and `xgb.cv()`
#'   do, not by one less as `sd()` does),
#'   `best_iteration` and `best_score` (the round with the best mean of the
#'   first metric, and that mean), `folds` (the held-out rows of each fold),
#'   `pred` (out-of-fold predictions, `type = "response"`, from each row's
#'   fold model at `best_iteration` when early stopping was on, else at its
#'   last round; `NA` for rows in no fold), `models` (with `keep_models`),
#'   `params` and `call`.
#' @seealso [histboost()]
#' @examples
#' set.seed(1)
#' cv <- hb_cv(mtcars[, -1], mtcars$mpg, nfold = 4, nrounds = 200, min_data_in_leaf = 3,
#'             early_stopping_rounds = 10, nthreads = 1, verbose = 0)
#' cv
#' cv$best_iteration
#' plot(mtcars$mpg, cv$pred)  # out-of-fold predictions
#' @export
hb_cv <- function(x, y, ..., weights = NULL, nfold = 5L, folds = NULL, stratified = TRUE, nrounds = 100L,
                  early_stopping_rounds = NULL, eval_metric = NULL, nthreads = NULL, seed = NULL,
                  verbose = 1L, keep_models = FALSE, group = NULL) {
  call <- match.call()
  dots <- list(...)
  # LightGBM's and xgboost's objective names, as histboost() takes them
  if (!is.null(dots$objective)) dots$objective <- .hb_objective_alias(dots$objective, "`objective`")
  if ("valid" %in% names(dots)) {
    .hb_abort("`valid` is not an argument of hb_cv(): each fold is validated on its held-out rows.")
  }
  from <- NULL  # params given under LightGBM's or xgboost's names (.hb_alias_errors)
  if (!is.null(dots$params)) {
    # LightGBM / xgboost names: hb_cv()'s own arguments among them set here, the rest go to the folds
    resolved <- .hb_params_resolve(dots$params, setdiff(.HB_TRAIN_ARGS, .HB_DATA_ARGS))
    from <- attr(resolved, "from")
    dots$params <- NULL
    own <- intersect(names(resolved), names(formals(hb_cv)))
    mine <- .hb_params_merge(mget(own, environment()), structure(resolved[own],
                                                                implied = attr(resolved, "implied")),
                             names(call)[-1L])
    for (nm in own) assign(nm, mine[[nm]])
    rest <- setdiff(names(resolved), own)
    dots <- .hb_params_merge(dots, structure(resolved[rest], implied = attr(resolved, "implied")), names(dots))
  }
  if (!is.null(dots$callbacks)) {
    .hb_abort("`callbacks` are called by histboost() for one model; hb_cv() does not take them.")
  }
  if (!is.null(dots$distributed) && !identical(dots$distributed, "no")) {
    # each process would draw folds from its own rows: not the one-process folds, and not documented
    .hb_abort("`distributed` is not an argument of hb_cv(): cross-validate on one process, or train each fold ",
              "with histboost(distributed = \"mpi\") on folds you make the same on every process.")
  }
  known <- c(setdiff(.HB_TRAIN_ARGS, .HB_CV_OWN), "nfold", "folds", "stratified", "keep_models")
  nms <- names(dots)
  if (is.null(nms)) nms <- rep("", length(dots))
  .hb_check_dots(dots[!nms %in% known], c(known, setdiff(names(formals(hb_cv)), "...")), "hb_cv", lgb_names = TRUE)
  if (missing(x)) .hb_abort("`x` is required: give the data to cross-validate on.")
  if (inherits(x, "hb_dataset")) {
    .hb_abort("`x` must be a data.frame, matrix or dgCMatrix, not an hb_dataset: hb_cv() bins each ",
              "fold from its own training rows.")
  }
  # the classes histboost() takes, converted as it converts them (once, not in each fold)
  x <- .hb_unwrap_matrix(x)
  if (methods::is(x, "sparseMatrix")) x <- .hb_as_dgc(x, "x")
  if (!is.data.frame(x) && !is.matrix(x) && !inherits(x, "dgCMatrix")) .hb_not_data(x, "x")
  if (missing(y) || is.null(y)) .hb_abort("`y` is required: give the labels to learn.")
  y <- .hb_unwrap_vector(y)  # I(y) and 1-d arrays as histboost() takes them
  weights <- .hb_unwrap_vector(weights)
  n <- nrow(x)
  if (length(y) != n) .hb_abort("`y` has ", length(y), " values but `x` has ", n, " rows.")
  if (!is.null(weights) && length(weights) != n) {
    .hb_abort("`weights` has ", length(weights), " values but `x` has ", n, " rows.")
  }
  init_score <- .hb_init_score(dots[["init_score"]], n)
  grp <- .hb_group(group, n)  # checked here; each fold's rows are passed on as ids
  stratified <- .hb_flag(stratified, "stratified")
  keep_models <- .hb_flag(keep_models, "keep_models")
  nrounds <- .hb_number(nrounds, "nrounds", integer = TRUE, lower = 1)
  boosting <- dots$boosting  # (params' names were resolved into dots above)
  if (identical(boosting, "dart") && !is.null(early_stopping_rounds)) {
    # as histboost(): a later round rescales the trees of the best iteration
    .hb_abort("`early_stopping_rounds` does not work with `boosting` = \"dart\": later rounds rescale earlier ",
              "trees, so the fold models cut at the best iteration would not be the ones scored. Leave ",
              "`early_stopping_rounds` out and choose `nrounds` from the evaluation log.")
  }

  # histboost()'s arguments: its defaults, the caller's parameters, then each fold's data.
  base <- formals(histboost.default)
  base <- base[setdiff(names(base), "...")]
  args <- lapply(base, function(e) if (identical(e, quote(expr = ))) NULL else eval(e, baseenv()))
  for (nm in names(dots)) args[nm] <- list(dots[[nm]])
  args[c("nrounds", "early_stopping_rounds", "eval_metric", "nthreads", "seed", "verbose")] <-
    list(nrounds, NULL, eval_metric, nthreads, seed, 0L)
  # the data and parameters checked once, on the user's rows, as histboost() checks them (short of the
  # binning): an error names the argument, not a fold; a level a fold lacks is still said by that fold
  all_rows <- args
  all_rows[c("x", "y", "weights", "init_score", "group")] <- list(x, y, weights, init_score, grp$codes)
  suppressWarnings(.hb_alias_errors(from, .hb_setup(all_rows, bin_given = intersect(.HB_BIN_ARGS, names(dots)),
                             ordered_given = "ordered_factors" %in% names(dots), check_only = TRUE)))
  if (is.null(folds) && !is.null(grp)) {
    # whole queries: the queries are dealt out to the folds, then their rows follow them
    if (grp$nq < 2L) {
      .hb_abort("`group` has ", grp$nq, " query; cross-validation by query holds out whole queries, so it ",
                "needs at least 2.")
    }
    nfold <- .hb_fold_count(nfold, grp$nq, "queries in `group` (each fold holds out whole queries)")
    qfold <- .hb_with_seed(seed, .hb_make_folds(grp$nq, nfold))
    folds <- lapply(qfold, function(q) which(grp$codes %in% (q - 1L)))
  } else if (is.null(folds)) {
    if (n < 2L) .hb_abort("`x` has ", n, " row; cross-validation needs at least 2.")
    nfold <- .hb_fold_count(nfold, n, "rows in `x`")
    by_class <- stratified && (is.factor(y) || is.logical(y) ||
                                 (is.character(dots$objective) &&
                                    isTRUE(dots$objective[1L] %in% c("binary", "multiclass"))))
    # a survival response: folds stratified by the event indicator, so each
    # fold has events (Cox's loss needs them) where the data allow
    strata <- if (by_class) y else if (stratified && inherits(y, "Surv")) factor(y[, "status"]) else NULL
    if (inherits(y, "Surv") && sum(y[, "status"] == 1) < nfold) {
      .hb_abort("`y` has ", sum(y[, "status"] == 1), " events but `nfold` is ", nfold, ": each fold needs an ",
                "event for the Cox loss. Use a smaller `nfold` or give `folds`.")
    }
    folds <- .hb_with_seed(seed, .hb_make_folds(n, nfold, strata))
  } else {
    folds <- .hb_check_folds(folds, n)
    if (!is.null(grp)) {
      fold_of <- integer(n)
      for (k in seq_along(folds)) fold_of[folds[[k]]] <- k
      split_q <- which(vapply(split(fold_of, grp$codes), function(f) length(unique(f)) > 1L, NA))
      if (length(split_q)) {
        .hb_abort("`folds` split query ", grp$ids[split_q[1L]], " of `group` between folds ",
                  "(or between a fold and the training rows); hold out each query's rows together.")
      }
    }
  }
  .hb_check_fold_classes(folds, y, dots$objective, given = !is.null(call$folds))
  if (is.null(seed)) seed <- as.numeric(sample.int(.Machine$integer.max, 1L))  # drawn after the folds
  args["seed"] <- list(seed)
  # Messages from the early-stopping check read as hb_cv()'s own.
  early_stopping_rounds <- .hb_number(early_stopping_rounds, "early_stopping_rounds", integer = TRUE,
                                      lower = 1, null_ok = TRUE)
  verbose <- .hb_verbose(verbose)
  # the folds train quietly: the choice of device = "auto" is said once, here
  if (identical(dots$device, "auto") && verbose >= 1L) .hb_device_say(.hb_device("auto"))

  K <- length(folds)
  runs <- vector("list", K)
  on.exit(for (r in runs) if (!is.null(r)) .Call(C_hb_booster_free, r$booster), add = TRUE)
  warned <- character()
  for (k in seq_len(K)) {
    te <- folds[[k]]
    tr <- setdiff(seq_len(n), te)
    if (!length(tr)) .hb_abort("`folds`: fold ", k, " holds out every row, leaving none to train on.")
    a <- args
    a$x <- .hb_rows(x, tr)
    a$y <- .hb_rows(y, tr)
    a["weights"] <- list(if (!is.null(weights)) weights[tr])  # a$weights <- NULL would drop it
    a["init_score"] <- list(if (!is.null(init_score)) .hb_rows(init_score, tr))
    a["group"] <- list(if (!is.null(grp)) grp$codes[tr])
    a$valid <- list(test = list(x = .hb_rows(x, te), y = .hb_rows(y, te),
                                weights = if (!is.null(weights)) weights[te],
                                init_score = if (!is.null(init_score)) .hb_rows(init_score, te)))
    if (!is.null(grp)) a$valid$test$group <- grp$codes[te]
    # the data and parameters passed the check above: what fails here is the fold's own
    # a warning about the arguments (the same for every fold) is given once
    runs[[k]] <- withCallingHandlers(
      tryCatch(.hb_setup(a, bin_given = intersect(.HB_BIN_ARGS, names(dots)),
                         ordered_given = "ordered_factors" %in% names(dots)),
               histboost_error_input = function(e) {
                 msg <- conditionMessage(e)
                 .hb_reraise(e, if (K > 1L) paste0("fold ", k, ": ") else "", msg)
               }),
      histboost_warning = function(w) {
        if (conditionMessage(w) %in% warned) invokeRestart("muffleWarning")
        warned <<- c(warned, conditionMessage(w))
      })
  }

  # The folds a round at a time (R/rounds.R), early stopping on the mean of their metrics.
  run <- .hb_rounds(runs, nrounds, verbose, early_stopping_rounds, runs[[1L]]$stopping, folds = TRUE)
  rounds <- run$rounds
  niter <- run$niter
  best_iter <- run$best_iter
  best_score <- run$best_score
  nm <- length(run$metric)
  metric <- run$metric
  watch <- run$watch
  if (is.null(watch)) {  # not one round: the names known without a call
    metric <- ifelse(is.na(metric), paste0("metric", seq_len(nm)), metric)
    watch <- 1L
  }
  evaluation_log <- data.frame(iter = seq_len(rounds))
  for (j in seq_len(nm)) {
    evaluation_log[[paste0("test_", metric[j], "_mean")]] <- run$log[, j]
    evaluation_log[[paste0("test_", metric[j], "_sd")]] <- run$log[, nm + j]
  }
  # The folds' models (at the mean's best iteration with early stopping) and
  # their predictions for the rows they held out.
  models <- vector("list", K)
  for (k in seq_len(K)) {
    r <- runs[[k]]
    r$early_stopping_rounds <- early_stopping_rounds
    best_k <- if (!is.null(early_stopping_rounds)) min(best_iter, niter[k]) else 0L
    runs[k] <- list(NULL)  # .hb_finish frees the booster
    models[[k]] <- .hb_finish(r, NULL, best_k, NULL, call)
  }
  task <- models[[1L]]$task
  classes <- models[[1L]]$classes
  pred <- if (task == "multiclass") {
    matrix(NA_real_, n, length(classes), dimnames = list(NULL, classes))
  } else {
    rep(NA_real_, n)
  }
  for (k in seq_len(K)) {
    p <- stats::predict(models[[k]], .hb_rows(x, folds[[k]]), nthreads = nthreads,
                        init_score = if (!is.null(init_score)) .hb_rows(init_score, folds[[k]]))
    if (is.matrix(pred)) pred[folds[[k]], ] <- p else pred[folds[[k]]] <- p
  }
  params <- c(list(nrounds = nrounds, early_stopping_rounds = early_stopping_rounds, seed = seed), dots)
  out <- list(evaluation_log = evaluation_log, best_iteration = best_iter, best_score = best_score,
              folds = folds, pred = pred, models = if (keep_models) models, task = task,
              metric = c(metric[watch], metric[-watch]),
              params = params, call = call)
  class(out) <- "hb_cv"
  out
}

#' @method print hb_cv
#' @export
print.hb_cv <- function(x, ...) {
  n_rows <- sum(lengths(x$folds))
  cat(sprintf("<hb_cv> %d-fold cross-validation, %s, %d held-out rows\n", length(x$folds), x$task, n_rows))
  log <- x$evaluation_log
  cat(sprintf("%d rounds; best iteration %d: mean test %s %.6g (sd %.3g)\n", nrow(log), x$best_iteration,
              x$metric[1L], x$best_score,
              log[[paste0("test_", x$metric[1L], "_sd")]][x$best_iteration]))
  if (nrow(log)) {
    show <- unique(c(utils::head(seq_len(nrow(log)), 3L), x$best_iteration, nrow(log)))
    show <- show[show >= 1L]
    print(log[sort(show), , drop = FALSE], row.names = FALSE, digits = 6)
  }
  invisible(x)
}


# Rows of a data.frame, matrix, dgCMatrix or vector (factors keep their levels).
.hb_rows <- function(x, rows) {
  if (is.data.frame(x) || is.matrix(x) || inherits(x, "Matrix")) x[rows, , drop = FALSE] else x[rows]
}

# Random folds: held-out rows of each, sorted. With `classes`, each class's
# rows (in random order) are dealt out to the folds in turn, continuing
# from one class to the next, so fold sizes differ by at most one and every
# fold gets each class's share up to one row.
# `nfold` checked against the `units` (rows or queries) there are to deal out.
.hb_fold_count <- function(nfold, available, units) {
  k <- .hb_number(nfold, "nfold", integer = TRUE, lower = 2)
  if (k > available) {
    .hb_abort("`nfold` is ", k, " but there are only ", available, " ", units, ", and each fold needs ",
              "at least one; give `nfold` between 2 and ", available, ".")
  }
  k
}

# Classification: a class whose every row is held out by one fold leaves
# that fold's training rows without it, and the fold cannot be validated.
# Said here in terms of the folds, before any fold is trained.
.hb_check_fold_classes <- function(folds, y, objective, given = FALSE) {
  is_class <- is.factor(y) || is.character(y) || is.logical(y) ||
    (is.character(objective) && isTRUE(objective[1L] %in% c("binary", "multiclass")))
  if (!is_class) return(invisible())
  yc <- as.character(y)
  n <- length(yc)
  for (k in seq_along(folds)) {
    te <- folds[[k]]
    held <- unique(yc[te][!is.na(yc[te])])
    gone <- setdiff(held, yc[-te])
    if (length(gone)) {
      cnt <- vapply(gone, function(g) sum(yc == g, na.rm = TRUE), 0L)
      .hb_abort("fold ", k, " holds out every row of class ", .hb_and(gone), " (",
                paste0(cnt, collapse = ", "), if (all(cnt == 1L)) " row" else " rows",
                "), so its training rows have none of ", if (length(gone) > 1L) "these classes" else "it",
                ". ", if (given && all(cnt >= 2L)) {
                  "Choose `folds` that leave some of its rows for training (or let hb_cv() make stratified folds)."
                } else {
                  paste0("Give every class at least 2 rows (stratified folds spread a class over the folds), ",
                         "drop the class from `y`, or choose `folds` that leave some of its rows for training.")
                })
    }
  }
  invisible()
}

.hb_make_folds <- function(n, nfold, classes = NULL) {
  if (is.null(classes)) {
    id <- sample(rep_len(seq_len(nfold), n))
  } else {
    g <- as.integer(factor(classes, exclude = NULL))
    ord <- unlist(lapply(split(seq_len(n), g), function(r) r[sample.int(length(r))]), use.names = FALSE)
    id <- integer(n)
    id[ord] <- (seq_along(ord) + sample.int(nfold, 1L)) %% nfold + 1L
  }
  unname(lapply(split(seq_len(n), factor(id, levels = seq_len(nfold))), sort))
}

.hb_check_folds <- function(folds, n) {
  if (!is.list(folds) || is.data.frame(folds) || length(folds) < 1L) {
    .hb_abort("`folds` must be a list of integer vectors, the held-out rows of each fold.")
  }
  for (k in seq_along(folds)) {
    f <- folds[[k]]
    ok <- is.numeric(f) && length(f) > 0L && !anyNA(f) && all(f == round(f)) && all(f >= 1 & f <= n)
    if (!ok) .hb_abort("`folds`: fold ", k, " must hold row numbers between 1 and ", n, ", at least one.")
    if (anyDuplicated(f)) .hb_abort("`folds`: fold ", k, " names a row twice.")
  }
  folds <- lapply(folds, function(f) sort(as.integer(f)))
  all_rows <- unlist(folds, use.names = FALSE)
  if (anyDuplicated(all_rows)) {
    .hb_abort("`folds` overlap: row ", all_rows[anyDuplicated(all_rows)], " is held out by two folds.")
  }
  unname(folds)
}

# expr evaluated with R's random numbers seeded from `seed` (NULL: the
# session's, as they are), and the session's state restored afterwards.
.hb_with_seed <- function(seed, expr) {
  if (is.null(seed)) return(expr)
  s <- suppressWarnings(as.numeric(seed))
  if (length(s) != 1L || !is.finite(s)) return(expr)  # a bad seed is refused later, by the checks of histboost()
  genv <- globalenv()
  had <- exists(".Random.seed", envir = genv, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = genv, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = genv) else rm(".Random.seed", envir = genv))
  set.seed(as.integer(s %% .Machine$integer.max))
  expr
}
