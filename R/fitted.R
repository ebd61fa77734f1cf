# fitted.R: fitted() and residuals() of a model trained with keep_fitted =
# TRUE, which keeps the training rows' predictions and labels.

# Raw scores -> predictions as predict(type = "response") gives them.
.hb_response <- function(raw, objective, classes) {
  switch(objective,
    binary = , cross_entropy = stats::plogis(raw),
    multiclassova = {
      p <- stats::plogis(raw)
      colnames(p) <- classes
      p
    },
    multiclass = {
      e <- exp(raw - apply(raw, 1L, max))
      p <- e / rowSums(e)
      colnames(p) <- classes
      p
    },
    poisson = , gamma = , tweedie = , cox = exp(raw),
    { if (is.matrix(raw)) colnames(raw) <- classes; raw }
  )
}

# Store the fitted values (from the training rows' raw scores) and the
# labels (numbers as the engine holds them: 0/1 or 0..K-1 for classes).
.hb_keep_fitted <- function(fit, raw, label) {
  fit$fitted.values <- .hb_response(raw, fit$params$objective, fit$classes)
  fit$y <- label
  fit
}

.hb_no_fitted <- function(what, object) {
  if (is.null(object$call)) {  # from hb_load(): the model file keeps the model, not its training rows' values
    .hb_abort(what, "(): a model read by hb_load() has no fitted values (the model file does not keep them, ",
              "saveRDS() does); use predict(fit, x) on the training data.")
  }
  .hb_abort(what, "(): the model kept no fitted values; train it with `keep_fitted = TRUE`, or use ",
            "predict(fit, x) on the training data.")
}

#' Fitted values and residuals of a histboost model
#'
#' For a model trained with `keep_fitted = TRUE`: `fitted()` gives the
#' training rows' predictions as [predict.histboost()] gives them with
#' `type = "response"` (at the best iteration when early stopping chose one,
#' with the rows' `init_score` offsets), and `residuals()` the labels minus
#' those: `y - fitted` for a numeric `y` (on the response scale, so for
#' `"poisson"` the counts minus the predicted means), `y - p` for a binary
#' model (`y` 0 or 1 for the first or second class, `p` the probability of
#' the second), and for a multiclass model the matrix of class indicators
#' minus the probabilities. A model trained without it (or loaded with
#' [hb_load()], whose text does not hold them) has none: these functions
#' then say so. For a formula fit with `na.action = na.exclude`, both give
#' `NA` for the rows of `data` that it dropped, so that they line up with
#' `data` (with `na.omit`, they cover the rows trained on), as for [lm()].
#'
#' @param object A `"histboost"` model.
#' @param ... Not used.
#' @return A numeric vector, or for a multiclass model an n x K matrix (one
#'   column per class).
#' @examples
#' fit <- histboost(mtcars[, -1], mtcars$mpg, nrounds = 20, min_data_in_leaf = 5,
#'                  keep_fitted = TRUE, nthreads = 1, verbose = 0)
#' all.equal(fitted(fit), predict(fit, mtcars[, -1]))
#' sqrt(mean(residuals(fit)^2))
#' @method fitted histboost
#' @export
fitted.histboost <- function(object, ...) {
  .hb_check_dots(list(...), "object", "fitted")
  if (is.null(object$fitted.values)) .hb_no_fitted("fitted", object)
  stats::napredict(object$na.action, object$fitted.values)  # (na.exclude: NA for the rows it dropped)
}

#' @rdname fitted.histboost
#' @method residuals histboost
#' @export
residuals.histboost <- function(object, ...) {
  .hb_check_dots(list(...), "object", "residuals")
  if (is.null(object$fitted.values) || is.null(object$y)) .hb_no_fitted("residuals", object)
  if (object$task == "ranking") {
    .hb_abort("residuals(): a ranking model's scores order the rows of a query; they have no residuals.")
  }
  if (object$task == "survival") {
    .hb_abort("residuals(): a cox model predicts relative risks, not the survival times: it has no residuals ",
              "of this kind (fitted() gives the risks).")
  }
  f <- object$fitted.values
  if (is.matrix(f)) {
    ind <- matrix(0, nrow(f), ncol(f), dimnames = dimnames(f))
    ind[cbind(seq_len(nrow(f)), object$y + 1L)] <- 1
    return(stats::naresid(object$na.action, ind - f))
  }
  stats::naresid(object$na.action, object$y - f)
}
