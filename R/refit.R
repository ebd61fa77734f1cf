# refit.R: new leaf values for a model's trees from new data, the trees'
# structure kept (LightGBM's refit, XGBoost's process_type = "update").

#' Refit a model's leaf values on new data
#'
#' Keeps every tree's structure (its splits: features, thresholds, level
#' sets, missing directions) and re-estimates its leaf values on new data,
#' as LightGBM's refit (Python's `Booster.refit()`, the CLI's `task =
#' refit`, with `refit_decay_rate`) and XGBoost's `process_type = "update"`
#' with the `"refresh"` updater do: iteration by
#' iteration, in training order, the gradients and hessians of the new rows
#' at the running raw score (the model's starting score, plus `init_score`,
#' plus the trees refitted before) are summed over the rows of each leaf,
#' and the leaf's refitted value is the learning rate times
#' \eqn{-T(G) / (H + \lambda_2)}{-T(G) / (H + lambda_l2)} (T the L1 soft
#' threshold), the same rule training uses. The new value is
#' `decay_rate * old + (1 - decay_rate) * refitted`; a leaf no new row
#' reaches is refitted to 0 (so keeps `decay_rate` times its value), as in
#' LightGBM and XGBoost.
#'
#' Absolute error (`"l1"`) and quantile models take, as in training, the
#' weighted quantile of each leaf's residuals instead. A random forest
#' refits every tree at the starting score. Leaves below a categorical split
#' of a factor with more than `max_cat_to_onehot - 1` levels add `cat_l2` to
#' `lambda_l2`, as training did. Each node's hessian sum and row count become
#' the new data's, so [predict.histboost()] contributions weigh branches by
#' the new rows. The model's starting score is kept; monotone constraints
#' are not re-imposed on the refitted values (as in LightGBM). Lambdarank and
#' custom-objective models cannot be refitted (their gradients need the
#' queries or the objective function).
#'
#' With `decay_rate = 0` and the training data, a model trained without
#' bagging, feature sampling or quantization gets its own leaf values back.
#' The weights of `scale_pos_weight`, `is_unbalance` and `class_weights`
#' the model was trained with are applied to the new rows too; `is_unbalance`
#' weighs them by the new rows' own class counts, as it weighed the training
#' rows by theirs (so a new set with the other class in the majority
#' weighs that class down). Every row of `x` is used: a formula model's
#' `na.action` (see [histboost()]) is not applied again, so remove the rows
#' it dropped, which `model$na.action` names (`data[-model$na.action, ]`
#' when no `subset` was given), to refit on the rows it was trained on.
#'
#' @param model A `"histboost"` model.
#' @param x New data with the model's features (as for [predict.histboost()];
#'   a model fitted with a formula takes its variables from a data.frame).
#' @param y The new labels, coded as for training: numeric for regression,
#'   a factor (or logical) with the model's classes for classification.
#' @param ... Not used; unknown arguments are an error.
#' @param weights `NULL` or a non-negative weight per row.
#' @param init_score `NULL` or the rows' starting raw scores (offsets), as
#'   for [histboost()]: a vector, or a matrix with a column per class. A
#'   formula model with `offset()` takes its offset from `x`.
#' @param decay_rate A number in \[0, 1\]: the share of each old leaf value
#'   kept (LightGBM's `refit_decay_rate`, default 0.9); 0 replaces the values.
#' @param lambda_l1,lambda_l2 `NULL` (the model's) or the penalties of the
#'   refitted leaf values, numbers >= 0.
#' @param nthreads Threads, a whole number >= 1; `NULL` uses [hb_threads()].
#' @return A new `"histboost"` model with the refitted trees; `model` is
#'   unchanged.
#' @seealso [histboost()] (`init_model` continues training with new trees).
#' @examples
#' set.seed(1)
#' x <- data.frame(a = runif(400), b = runif(400))
#' y <- 2 * x$a + x$b + rnorm(400, sd = 0.2)
#' fit <- histboost(x[1:200, ], y[1:200], nrounds = 20, nthreads = 1, verbose = 0)
#' # the new data has shifted: refit the leaves, keep the splits
#' y2 <- y + 0.5
#' new <- hb_refit(fit, x[201:400, ], y2[201:400], decay_rate = 0)
#' mean(predict(fit, x[201:400, ]) - y2[201:400])
#' mean(predict(new, x[201:400, ]) - y2[201:400])
#' @export
hb_refit <- function(model, x, y, ..., weights = NULL, init_score = NULL, decay_rate = 0.9, lambda_l1 = NULL,
                     lambda_l2 = NULL, nthreads = NULL) {
  .hb_check_dots(list(...), c("model", "x", "y", "weights", "init_score", "decay_rate", "lambda_l1",
                              "lambda_l2", "nthreads"), "hb_refit")
  .hb_check_model(model, "model")
  terms <- .hb_model_truth(model, "model")$terms
  if (missing(x) || is.null(x)) .hb_abort("`x` is required: give the new data to refit the leaves on.")
  if (missing(y) || is.null(y)) .hb_abort("`y` is required: give the labels of `x`.")
  if (model$task == "ranking") {
    .hb_abort("`model` is a ranking (lambdarank) model, whose gradients need the queries: it cannot be ",
              "refitted. Train a new one, or continue it with histboost(init_model = ).")
  }
  if (identical(model$params$objective, "custom")) {
    .hb_abort("`model` was trained with a custom objective, which the model does not keep: it cannot be ",
              "refitted.")
  }
  # Leaf values these options shape (DART's rescaled trees, outputs smoothed
  # towards their parents or capped) are not what the refit's -G / (H + l2)
  # would give: refuse rather than refit to something else.
  shaped <- c(dart = identical(model$params$boosting, "dart"),
              path_smooth = isTRUE(model$params$path_smooth > 0),
              max_delta_step = isTRUE(model$params$max_delta_step > 0))
  if (any(shaped)) {
    .hb_abort("`model` was trained with ", .hb_and(names(shaped)[shaped]),
              ", whose leaf values hb_refit() does not re-create: it cannot be refitted. Train a new model ",
              "on the new data instead.")
  }
  decay_rate <- .hb_number(decay_rate, "decay_rate", lower = 0, upper = 1)
  l1 <- .hb_number(lambda_l1 %||% model$params$lambda_l1, "lambda_l1", lower = 0)
  l2 <- .hb_number(lambda_l2 %||% model$params$lambda_l2, "lambda_l2", lower = 0)
  nthreads <- .hb_nthreads(nthreads)
  n <- if (is.data.frame(x) || is.matrix(x) || inherits(x, "Matrix")) nrow(x) else NROW(x)
  if (!isTRUE(n >= 1L)) .hb_abort("`x` has no rows to refit on.")
  if (!is.null(terms) && is.data.frame(x)) {
    offset <- attr(.hb_formula_frame(terms, x), "offset")
    if (!is.null(offset)) {
      if (!is.null(init_score)) {
        .hb_abort("`init_score` must not be given: the model's formula has an offset(), taken from `x`.")
      }
      init_score <- offset
    }
  }
  K <- if (model$task == "multiclass") length(model$classes) else 1L
  if (!is.null(init_score)) {
    init_score <- .hb_init_score(init_score, n, nrow_arg = "x")
    if (.hb_init_score_ncol(init_score) != K) {
      .hb_abort("`init_score` has ", .hb_init_score_ncol(init_score), " columns but the model has ",
                if (K > 1L) paste(K, "classes: give a matrix with one column per class.")
                else "one score a row: give a vector.")
    }
    init_score <- as.double(init_score)
  }
  label <- .hb_refit_label(model, y, n)
  w <- .hb_imbalance_weights(.hb_imbalance_args(model$params), .hb_refit_label_y(model, y, label), weights,
                             model$params$objective, n)
  if (!is.null(w)) w <- as.double(.hb_weights(w, n))
  if (!model$niter) return(model)  # no trees: nothing to refit
  leaf <- tryCatch(
    withCallingHandlers(
      stats::predict(model, x, type = "leaf", iteration = max(1L, model$niter), nthreads = nthreads),
      # (predict's argument is hb_refit()'s `x`)
      histboost_warning_unseen_levels = function(w) .hb_rewarn(w, sub("`newdata`", "`x`", w$message, fixed = TRUE))),
    histboost_error_input = function(e) .hb_abort(sub("`newdata`", "`x`", conditionMessage(e), fixed = TRUE)))
  storage.mode(leaf) <- "integer"
  ptr <- .Call(C_hb_model_refit, .hb_model_ptr(model), leaf, label, w, init_score, decay_rate, l1, l2,
               as.double(model$params$cat_l2), nthreads)
  .hb_model_from_text(.Call(C_hb_model_to_text, ptr), call = model$call, ptr = ptr)
}

# The labels of y coded as the model's training labels (0-based classes).
.hb_refit_label <- function(model, y, n) {
  if (model$task %in% c("binary", "multiclass")) {
    yv <- .hb_vector_arg(y, n, "y")
    if (model$task == "binary" && is.numeric(yv) && !is.object(yv) && identical(model$classes, c("0", "1"))) {
      .hb_check_finite(yv, "y")
      if (!all(yv %in% c(0, 1))) .hb_abort("`y` must hold 0 and 1 only, the model's classes.")
      return(as.double(yv))
    }
    return(.hb_label_like(yv, n, list(classes = model$classes, task_hint = model$task), "y")$label)
  }
  hint <- if (identical(model$params$objective, "cox")) "survival" else "regression"
  .hb_label_like(y, n, list(classes = NULL, task_hint = hint), "y")$label
}

# y as .hb_imbalance_weights reads it (a factor of the model's classes for classification).
.hb_refit_label_y <- function(model, y, label) {
  if (is.null(model$classes)) return(label)
  factor(model$classes[label + 1L], levels = model$classes)
}
