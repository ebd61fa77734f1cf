# parsnip.R: histboost as an engine of parsnip's boost_tree(), for
# tidymodels workflows. Registered when parsnip is loaded (before or after
# histboost); histboost does not depend on parsnip.

# boost_tree()'s arguments and the histboost() arguments they become. mtry
# (a number of predictors) and sample_size (a proportion, as for xgboost)
# are converted by hb_parsnip_fit().
.HB_PARSNIP_ARGS <- data.frame(
  parsnip = c("trees", "learn_rate", "tree_depth", "min_n", "loss_reduction", "sample_size", "mtry",
              "stop_iter"),
  original = c("nrounds", "learning_rate", "max_depth", "min_data_in_leaf", "min_gain_to_split",
               "sample_size", "mtry", "stop_iter"),
  dials = c("trees", "learn_rate", "tree_depth", "min_n", "loss_reduction", "sample_prop", "mtry",
            "stop_iter"),
  stringsAsFactors = FALSE
)

# Tuning ranges where dials' defaults do not suit boosting (as parsnip's
# xgboost engine sets them): learning rates 10^-3 to 10^-0.5 (not dials'
# 10^-10 to 10^-1, whose small values barely learn), and row shares 0.5 to 1.
.HB_PARSNIP_RANGES <- list(learn_rate = list(range = c(-3, -0.5)), sample_size = list(range = c(0.5, 1)))

# parsnip loaded now or later: register the engine then.
.onLoad <- function(libname, pkgname) {
  setHook(packageEvent("parsnip", "onLoad"), function(...) .hb_register_parsnip())
  if (isNamespaceLoaded("parsnip")) .hb_register_parsnip()
}

# Register the engine with parsnip, once per session.
.hb_register_parsnip <- function(...) {
  if (!requireNamespace("parsnip", quietly = TRUE)) return(invisible(FALSE))
  engines <- tryCatch(parsnip::show_engines("boost_tree"), error = function(e) NULL)
  if (!is.null(engines) && "histboost" %in% engines$engine) return(invisible(TRUE))
  for (mode in c("regression", "classification")) {
    parsnip::set_model_engine("boost_tree", mode = mode, eng = "histboost")
    parsnip::set_dependency("boost_tree", eng = "histboost", pkg = "histboost", mode = mode)
  }
  for (k in seq_len(nrow(.HB_PARSNIP_ARGS))) {
    a <- .HB_PARSNIP_ARGS[k, ]
    func <- c(list(pkg = "dials", fun = a$dials), .HB_PARSNIP_RANGES[[a$parsnip]])
    parsnip::set_model_arg(model = "boost_tree", eng = "histboost", parsnip = a$parsnip, original = a$original,
                           func = func, has_submodel = a$parsnip == "trees")
  }
  for (mode in c("regression", "classification")) {
    parsnip::set_fit(model = "boost_tree", eng = "histboost", mode = mode,
                     value = list(interface = "data.frame", protect = c("x", "y", "weights"),
                                  func = c(pkg = "histboost", fun = "hb_parsnip_fit"),
                                  defaults = list(verbose = 0L)))
    parsnip::set_encoding(model = "boost_tree", eng = "histboost", mode = mode,
                          options = list(predictor_indicators = "none", compute_intercept = FALSE,
                                         remove_intercept = FALSE, allow_sparse_x = TRUE))
  }
  pred <- function(type, post = NULL) {
    list(pre = NULL, post = post, func = c(fun = "predict"),
         args = list(object = quote(object$fit), newdata = quote(new_data), type = type))
  }
  parsnip::set_pred(model = "boost_tree", eng = "histboost", mode = "regression", type = "numeric",
                    value = pred("response"))
  parsnip::set_pred(model = "boost_tree", eng = "histboost", mode = "classification", type = "class",
                    value = pred("class"))
  parsnip::set_pred(model = "boost_tree", eng = "histboost", mode = "classification", type = "prob",
                    value = pred("response", post = .hb_parsnip_prob))
  parsnip::set_pred(model = "boost_tree", eng = "histboost", mode = "regression", type = "raw",
                    value = pred("raw"))
  parsnip::set_pred(model = "boost_tree", eng = "histboost", mode = "classification", type = "raw",
                    value = pred("raw"))
  # one fit predicts for every smaller `trees` (tune's submodels)
  registerS3method("multi_predict", "_histboost", .hb_multi_predict, envir = asNamespace("parsnip"))
  invisible(TRUE)
}

# parsnip::multi_predict() for the engine: predictions at each of `trees`
# iterations, one tibble per row of new_data with a row per value of trees,
# as parsnip's other engines return them. At most the iterations predict()
# uses: the best one under early stopping (`stop_iter`), else the model's;
# so that a submodel never uses more trees than the fit it comes from.
.hb_multi_predict <- function(object, new_data, type = NULL, trees = NULL, ...) {
  fit <- object$fit
  last <- fit$best_iteration %||% fit$niter
  if (is.null(trees)) trees <- last
  trees <- sort(unique(as.integer(trees)))
  if (!length(trees) || anyNA(trees) || any(trees < 1L)) .hb_abort("`trees` must be whole numbers >= 1.")
  if (is.null(type)) type <- if (object$spec$mode == "classification") "class" else "numeric"
  ok <- if (object$spec$mode == "classification") c("class", "prob") else "numeric"
  if (!is.character(type) || length(type) != 1L || !type %in% ok) {
    .hb_abort("`type` must be ", paste0("\"", ok, "\"", collapse = " or "), " for multi_predict() of a ",
              object$spec$mode, " fit, not ", if (is.character(type) && length(type) == 1L)
                paste0("\"", type, "\"") else .hb_describe(type), ".")
  }
  n <- nrow(new_data)
  long <- do.call(rbind, lapply(trees, function(k) {
    it <- min(k, last)
    p <- switch(type,
      numeric = data.frame(.pred = stats::predict(fit, new_data, iteration = it)),
      # the outcome's levels (parsnip's lvl, unused ones too) and its orderedness, as predict() gives them
      class = data.frame(.pred_class = factor(as.character(stats::predict(fit, new_data, type = "class",
                                                                           iteration = it)),
                                              levels = object$lvl, ordered = isTRUE(object$ordered))),
      prob = {
        pr <- .hb_parsnip_prob(stats::predict(fit, new_data, iteration = it), object)
        stats::setNames(pr, paste0(".pred_", names(pr)))
      })
    cbind(data.frame(.row = seq_len(n), trees = k), p)
  }))
  long <- long[order(long$.row, long$trees), , drop = FALSE]
  rows <- lapply(split(long[, -1L, drop = FALSE], long$.row), function(d) {
    rownames(d) <- NULL
    tibble::as_tibble(d)
  })
  tibble::tibble(.pred = unname(rows))
}

# Class probabilities as a data.frame, a column per class (parsnip prefixes
# ".pred_"): a column for each level of the outcome (parsnip's `lvl`), in
# its order, as tidymodels' metrics expect; a level without training rows
# (histboost trains without it, and warns) has probability 0.
.hb_parsnip_prob <- function(x, object) {
  cls <- object$fit$classes
  out <- if (is.matrix(x)) as.data.frame(x) else data.frame(1 - x, x)
  names(out) <- cls
  lvl <- object$lvl
  if (is.character(lvl) && all(cls %in% lvl) && !identical(lvl, cls)) {
    out[setdiff(lvl, cls)] <- 0
    out <- out[lvl]
  }
  out
}

# The rows `stop_iter` holds out for early stopping, a `validation` share,
# sorted; drawn with R's random numbers (set.seed() repeats them). For a
# factor `y` the share is drawn within each class (stratified): a class of
# n_c rows gives n_c * validation of them (rounded, halves up), at most n_c - 1, so
# that every class keeps a training row (a class of one row is never held
# out); at least one row is held out in all. An error when no row can be.
.hb_parsnip_holdout <- function(y, validation) {
  n <- NROW(y)
  if (!is.factor(y)) {
    if (n < 2L) {
      .hb_abort("`stop_iter` holds out a `validation` share of the rows for early stopping, which needs at ",
                "least 2 rows (there ", if (n == 1L) "is 1" else paste("are", n), "); leave `stop_iter` NULL.")
    }
    return(sort(sample.int(n, min(n - 1L, max(1L, floor(n * validation))))))
  }
  rows <- split(seq_len(n), y, drop = TRUE)
  size <- vapply(rows, length, 0L)
  take <- pmin(floor(size * validation + 0.5), size - 1L)
  if (!sum(take)) {
    if (!any(size >= 2L)) {
      .hb_abort("`stop_iter` holds out a `validation` share of the rows for early stopping, stratified by ",
                "class so that every class keeps a training row; but each class of `y` has a single row, ",
                "so none can be held out. Give more rows, or leave `stop_iter` NULL.")
    }
    take[which.max(size)] <- 1L  # too few rows for the share: one row of the largest class
  }
  held <- unlist(lapply(seq_along(rows), function(k) rows[[k]][sample.int(size[k], take[k])]), use.names = FALSE)
  sort(held)
}

#' Fit histboost for parsnip
#'
#' The fit function of the `"histboost"` engine of `parsnip::boost_tree()`:
#' `boost_tree(trees, learn_rate, tree_depth, min_n, loss_reduction,
#' sample_size, mtry, stop_iter) |> set_engine("histboost", ...)` becomes
#' `histboost(nrounds, learning_rate, max_depth, min_data_in_leaf,
#' min_gain_to_split, ...)`, with `sample_size` (a proportion) as
#' `bagging_fraction` (resampled every round), `mtry` (a number of
#' predictors, or a proportion with `counts = FALSE`) as
#' `feature_fraction_bynode` (the share each split may choose from, as
#' parsnip defines `mtry`), character columns as factors,
#' and `stop_iter` as early stopping on a random `validation` share of the
#' training rows (for classification, that share of each class's rows, but
#' never a class's last row, so that every class is trained on). Other
#' engine arguments go to [histboost()]; one that a main argument sets too
#' (`feature_fraction_bynode` with `mtry`, `bagging_fraction` with
#' `sample_size`, `early_stopping_rounds` or `valid` with `stop_iter`) is
#' an error, rather than one of the two lost. The engine is registered when
#' parsnip is loaded; you do not call this yourself. For data with missing
#' values use `parsnip::fit_xy()` (or a workflow without a formula):
#' parsnip's formula interface drops every row with an `NA` before histboost
#' sees it, where histboost would learn where missing values go. A fit's
#' `update()` is refused: the data it names were parsnip's copies.
#' `parsnip::multi_predict()` on such a fit predicts for several numbers of
#' `trees` from the one model (tune's submodels), each capped at the
#' iterations `predict()` uses: under `stop_iter`, the best iteration (a
#' count past it predicts as the fit does).
#'
#' @param x A data.frame or matrix of predictors.
#' @param y The outcome.
#' @param weights `NULL` or case weights.
#' @param mtry,sample_size,stop_iter See above; `NULL` leaves the default.
#' @param counts `TRUE` (default): `mtry` is a number of predictors (at
#'   least 1; more than there are means all); `FALSE`: a proportion of them
#'   in (0, 1]. An `mtry` below 1 with `counts = TRUE`, or above 1 with
#'   `counts = FALSE`, is an error (of class `histboost_error_input`), as in
#'   parsnip's xgboost engine.
#' @param validation Share of the rows held out for early stopping when
#'   `stop_iter` is given (default 0.1), drawn with R's random numbers
#'   (`set.seed()` repeats it). For a factor outcome it is drawn per class:
#'   a class of `n` rows gives `n * validation` of them rounded to the
#'   nearest whole number (halves up), at most `n - 1` (at least one row is
#'   held out in all).
#' @param ... Other [histboost()] arguments.
#' @return A `"histboost"` model.
#' @examples
#' # What parsnip calls: mtry = 2 of 4 predictors, 80% of the rows per round
#' fit <- hb_parsnip_fit(iris[, 1:4], iris$Species, mtry = 2, sample_size = 0.8,
#'                       nrounds = 10, nthreads = 1, verbose = 0)
#' fit$params$feature_fraction_bynode
#'
#' # Through parsnip (suggested, not required)
#' if (requireNamespace("parsnip", quietly = TRUE)) {
#'   spec <- parsnip::boost_tree(trees = 20, learn_rate = 0.1, min_n = 10) |>
#'     parsnip::set_engine("histboost", num_leaves = 7, nthreads = 1) |>
#'     parsnip::set_mode("classification")
#'   pfit <- parsnip::fit(spec, Species ~ ., data = iris)
#'   predict(pfit, iris[c(1, 51, 101), ], type = "prob")
#' }
#' @export
hb_parsnip_fit <- function(x, y, weights = NULL, mtry = NULL, sample_size = NULL, stop_iter = NULL, ...,
                           counts = TRUE, validation = 0.1) {
  args <- list(...)
  # (`counts` and `validation` after `...`: an engine argument `valid` is histboost()'s, not a partial
  # match of `validation`.) A main argument and the engine argument it becomes, both given: one would be
  # lost, so the two are refused, as histboost() refuses an argument given again in `params`.
  both <- c(mtry = "feature_fraction_bynode", sample_size = "bagging_fraction", stop_iter = "early_stopping_rounds",
            stop_iter = "valid")
  given <- c(mtry = !is.null(mtry), sample_size = !is.null(sample_size), stop_iter = !is.null(stop_iter))
  clash <- both[given[names(both)] & both %in% names(args)]
  if (length(clash)) {
    .hb_abort("`", names(clash)[1L], "` (parsnip's main argument) sets `", clash[[1L]], "`, which ",
              "set_engine() gives too; give one of them.", if (names(clash)[1L] == "stop_iter")
                " (`stop_iter` holds out a `validation` share of the rows for early stopping.)")
  }
  if (!is.null(weights)) weights <- as.numeric(weights)  # parsnip's case weights are a vctrs class
  p <- ncol(x)
  counts <- .hb_flag(counts, "counts")
  if (!is.null(mtry)) {
    if (!is.numeric(mtry) || length(mtry) != 1L || !(mtry > 0)) {
      .hb_abort("`mtry` must be a positive number of predictors (at most ", p, ")",
                if (!counts) " or, with `counts = FALSE`, a proportion of them in (0, 1]", ".")
    }
    # as parsnip's xgboost engine: a count below 1 or a proportion above 1
    # is a mistake about `counts`, not a value to round or clamp
    if (counts && mtry < 1) {
      .hb_abort("`mtry` = ", format(mtry), " is below 1, but with `counts = TRUE` (the default) it is a number ",
                "of predictors; give a number >= 1, or set_engine(\"histboost\", counts = FALSE) to read it as ",
                "a proportion of the ", p, " predictors.")
    }
    if (!counts && mtry > 1) {
      .hb_abort("`mtry` = ", format(mtry), " is above 1, but with `counts = FALSE` it is a proportion of the ",
                "predictors; give a proportion in (0, 1], or leave `counts = TRUE` to read it as a number of ",
                "predictors (of ", p, ").")
    }
    if (counts && mtry > p) {  # as parsnip's engines: the predictors there are, with a warning
      .hb_warn("`mtry` = ", format(mtry), " is more than the ", p, " predictors; all ", p, " are used.")
    }
    # sampled at each split, as parsnip defines mtry (xgboost's colsample_bynode, LightGBM's feature_fraction_bynode)
    args$feature_fraction_bynode <- if (counts) min(1, mtry / p) else mtry
  }
  if (is.data.frame(x)) x <- .hb_chars_as_factors(x)  # as histboost()'s formula interface takes them
  if (!is.null(sample_size)) {
    if (!is.numeric(sample_size) || length(sample_size) != 1L || !(sample_size > 0 && sample_size <= 1)) {
      .hb_abort("`sample_size` must be a proportion of the rows in (0, 1].")
    }
    args$bagging_fraction <- sample_size
    if (sample_size < 1 && is.null(args$bagging_freq)) args$bagging_freq <- 1L
  }
  if (!is.numeric(validation) || length(validation) != 1L || !(validation >= 0 && validation < 1)) {
    .hb_abort("`validation` must be a share of the rows in [0, 1) (held out for early stopping with `stop_iter`).")
  }
  if (!is.null(stop_iter)) {
    if (!(validation > 0)) {
      .hb_abort("`validation` must be a share of the rows in (0, 1) when `stop_iter` is given.")
    }
    n <- NROW(y)
    held <- .hb_parsnip_holdout(y, validation)
    keep <- setdiff(seq_len(n), held)
    args$valid <- list(validation = list(x = .hb_rows(x, held), y = .hb_rows(y, held),
                                         weights = if (!is.null(weights)) weights[held]))
    args$early_stopping_rounds <- as.integer(stop_iter)
    x <- .hb_rows(x, keep)
    y <- .hb_rows(y, keep)
    if (!is.null(weights)) weights <- weights[keep]
  }
  # The data as symbols in the call, as .hb_caret_fit() does: do.call() would
  # copy them into the model's `call` (and saveRDS() would write them out
  # with it). The data arguments are evaluated here, the parameters are
  # written into the call as values, so that it reads as the training did.
  data <- c(list(x = x, y = y, weights = weights), args[intersect(names(args), .HB_DATA_ARGS)])
  data <- data[!vapply(data, is.null, NA)]
  args <- args[setdiff(names(args), names(data))]
  # (under names of their own, which update() refuses: parsnip's copies of the data are gone by then)
  sym <- paste0(".hb_parsnip_", names(data))
  cl <- as.call(c(list(quote(histboost)), stats::setNames(lapply(sym, as.name), names(data)), args))
  eval(cl, list2env(stats::setNames(data, sym), parent = environment()))
}
