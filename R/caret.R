# caret.R: histboost as a caret model (caret::train(method = hb_caret_model())).
# caret takes a list describing the model; nothing here needs caret itself.

#' histboost as a caret model
#'
#' A model description for `caret::train(x, y, method = hb_caret_model())`
#' (caret's custom-model interface), for regression and classification. It
#' tunes `nrounds`, `num_leaves`, `learning_rate` and `min_data_in_leaf`;
#' any other [histboost()] argument given to `train()` (e.g. `objective`,
#' `lambda_l2`, `nthreads`, `verbose`; fits are quiet unless `verbose` is
#' given) is passed through to every fit. For each
#' combination of the other three, one model with the largest `nrounds` of
#' the grid is trained and predicts for the smaller ones from its first
#' iterations (caret's "submodels"), so a grid over `nrounds` costs one fit.
#' With early stopping (`valid` and `early_stopping_rounds` given to
#' `train()`), a submodel predicts with at most the fit's best iteration,
#' as a fit for that many rounds would. Class probabilities have a column
#' for each level of `y`, in its order: a class that a resample has no
#' training rows of gets probability 0. Character columns are taken as
#' factors, as by the formula method.
#' The default grid (`tuneLength`) holds `min_data_in_leaf` at LightGBM's 20
#' from 200 rows up and at a tenth of the rows (at least 2) below, so that
#' small data can split; random search draws it from 5 to a quarter of the
#' rows (at most 50).
#'
#' @return A list in caret's custom-model format: `library`, `type`,
#'   `parameters`, `grid`, `loop`, `fit`, `predict`, `prob`, `varImp`,
#'   `predictors`, `levels`, `tags` and `sort`.
#' @examples
#' m <- hb_caret_model()
#' m$parameters
#' # Two values of nrounds (one fit per fold: the smaller is a submodel),
#' # 2-fold cross-validation (caret is suggested, not required)
#' if (requireNamespace("caret", quietly = TRUE)) {
#'   fit <- caret::train(iris[, 1:4], iris$Species, method = hb_caret_model(),
#'                       trControl = caret::trainControl(method = "cv", number = 2),
#'                       tuneGrid = expand.grid(nrounds = c(10, 20), num_leaves = 3,
#'                                              learning_rate = 0.1, min_data_in_leaf = 10),
#'                       nthreads = 1)
#'   fit$bestTune
#' }
#' @export
hb_caret_model <- function() {
  list(
    label = "histboost (histogram gradient-boosted trees)",
    library = "histboost",
    type = c("Regression", "Classification"),
    parameters = data.frame(
      parameter = c("nrounds", "num_leaves", "learning_rate", "min_data_in_leaf"),
      class = rep("numeric", 4L),
      label = c("# Boosting Iterations", "# Leaves per Tree", "Learning Rate", "Min. Rows per Leaf"),
      stringsAsFactors = FALSE
    ),
    grid = .hb_caret_grid,
    loop = .hb_caret_loop,
    fit = .hb_caret_fit,
    predict = .hb_caret_predict,
    prob = .hb_caret_prob,
    varImp = function(object, ...) {
      imp <- hb_importance(object)
      out <- data.frame(Overall = rep(0, length(object$feature_names)), row.names = object$feature_names)
      out[imp$feature, "Overall"] <- imp$gain
      out
    },
    predictors = function(x, ...) unique(hb_importance(x)$feature),
    levels = function(x) x$class_levels %||% x$classes,  # (y's levels: a class no row had too)
    tags = c("Tree-Based Model", "Boosting", "Ensemble Model", "Implicit Feature Selection",
             "Handle Missing Predictor Data", "Accepts Case Weights"),
    sort = function(x) x[order(x$nrounds, x$num_leaves, -x$learning_rate, -x$min_data_in_leaf), , drop = FALSE]
  )
}

# len values per parameter (grid search) or len random combinations.
# min_data_in_leaf follows the data's size: LightGBM's 20 from 200 rows
# up, a tenth of the rows below (at least 2), so that the resamples of a
# small set (32 rows: folds of about 25) can split at all; random search
# draws it up to a quarter of the rows (at most 50).
.hb_caret_grid <- function(x, y, len = NULL, search = "grid") {
  if (is.null(len)) len <- 3L
  n <- NROW(x)
  if (search == "grid") {
    leaves <- c(7L, 15L, 31L, 63L, 127L)
    expand.grid(nrounds = 50L * seq_len(len), num_leaves = leaves[seq_len(min(len, length(leaves)))],
                learning_rate = 0.1, min_data_in_leaf = as.integer(max(2, min(20, n %/% 10))))
  } else {
    hi <- as.integer(max(2, min(50, n %/% 4)))
    lo <- min(5L, hi)
    data.frame(nrounds = sample.int(1000L, len, replace = TRUE),
               num_leaves = sample(4:128, len, replace = TRUE),
               learning_rate = stats::runif(len, 0.01, 0.3),
               min_data_in_leaf = lo - 1L + sample.int(hi - lo + 1L, len, replace = TRUE))
  }
}

# One fit per combination of the other parameters, at its largest nrounds;
# the smaller nrounds are its submodels.
.hb_caret_loop <- function(grid) {
  keys <- c("num_leaves", "learning_rate", "min_data_in_leaf")
  groups <- split(grid, grid[keys], drop = TRUE)
  loop <- do.call(rbind, lapply(groups, function(g) g[which.max(g$nrounds), , drop = FALSE]))
  submodels <- lapply(groups, function(g) {
    rest <- g$nrounds[g$nrounds != max(g$nrounds)]
    data.frame(nrounds = sort(unique(rest)))
  })
  rownames(loop) <- NULL
  list(loop = loop, submodels = unname(submodels))
}

# Arguments given to caret::train() reach here in `...`: `verbose` (quiet
# unless asked) may be among them, the tuned parameters may not.
.hb_caret_fit <- function(x, y, wts, param, lev, last, classProbs, ...) {
  extra <- list(...)
  tuned <- intersect(names(extra), c("nrounds", "num_leaves", "learning_rate", "min_data_in_leaf"))
  if (length(tuned)) {
    .hb_abort(.hb_and(tuned), if (length(tuned) > 1L) " are" else " is", " tuned by caret: give ",
              if (length(tuned) > 1L) "them" else "it", " in `tuneGrid`, not as an argument of train().")
  }
  if ("weights" %in% names(extra)) {
    .hb_abort("`weights` go to caret::train() itself (caret passes them on as case weights).")
  }
  if (is.null(extra$verbose)) extra$verbose <- 0L
  if (is.data.frame(x)) x <- .hb_chars_as_factors(x)  # as the formula method and parsnip's engine take them
  # The data as symbols in the call (do.call() would copy them into the model's `call`), under names of
  # their own, which update() refuses: caret's copies of the data are gone by then.
  .hb_caret_x <- x
  .hb_caret_y <- y
  .hb_caret_weights <- wts
  cl <- as.call(c(list(quote(histboost), x = quote(.hb_caret_x), y = quote(.hb_caret_y),
                       weights = quote(.hb_caret_weights),
                       nrounds = as.integer(param$nrounds), num_leaves = as.integer(param$num_leaves),
                       learning_rate = param$learning_rate,
                       min_data_in_leaf = as.integer(param$min_data_in_leaf)), extra))
  eval(cl)
}

# Predictions at the model's own nrounds, then at each submodel's, at most
# at the iterations predict() uses: the best one under early stopping (a
# model trained for more rounds than that predicts with it too), else the
# model's (one that stopped early, no tree able to split, has fewer: a model
# trained for k rounds would have stopped there too). As parsnip's
# multi_predict().
.hb_caret_each <- function(modelFit, submodels, one) {
  out <- one(NULL)
  if (is.null(submodels)) return(out)
  last <- modelFit$best_iteration %||% modelFit$niter
  c(list(out), lapply(submodels$nrounds, function(k) one(min(as.integer(k), last))))
}

.hb_caret_predict <- function(modelFit, newdata, preProc = NULL, submodels = NULL) {
  type <- if (modelFit$task == "regression") "response" else "class"
  .hb_caret_each(modelFit, submodels, function(k) {
    p <- stats::predict(modelFit, newdata, type = type, iteration = k)
    if (is.factor(p)) as.character(p) else p
  })
}

.hb_caret_prob <- function(modelFit, newdata, preProc = NULL, submodels = NULL) {
  .hb_caret_each(modelFit, submodels, function(k) {
    p <- stats::predict(modelFit, newdata, type = "response", iteration = k)
    cls <- modelFit$classes
    out <- if (is.matrix(p)) as.data.frame(p) else data.frame(1 - p, p)
    names(out) <- cls
    # a column for each level of y (caret's `lev`), in its order: a class a resample had no rows of has
    # probability 0 (caret's summaries, mnLogLoss among them, need every level's column)
    lev <- modelFit$class_levels %||% cls
    if (!identical(lev, cls)) {
      out[setdiff(lev, cls)] <- 0
      out <- out[lev]
    }
    out
  })
}
