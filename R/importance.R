# importance.R: inspection of the trees: one row per node (hb_trees) and
# feature importance by total gain, split count or cover (hb_importance).

#' The trees of a model as a table
#'
#' @param model A `"histboost"` model.
#' @param ... Nothing (a name given here is an error that says so): every
#'   tree comes back; select them by `tree`.
#' @return A data.frame with one row per node: `tree` (1-based), `id`
#'   (`"N<k>"` for internal node k, `"L<k>"` for leaf k; k is 0-based),
#'   `is_leaf`, `depth` (root 0), `feature`, `split_type` (`"numeric"` or
#'   `"categorical"`), `threshold` (numeric splits send values `<= threshold`
#'   left; an ordered factor split on its level order is numeric, in level
#'   codes 1, 2, ...), `categories` (categorical splits: the levels sent left;
#'   ordered factors: the levels at or below the threshold; joined by `"||"`), `default_left` (where missing values go), `left`, `right` (child
#'   ids), `gain`, `value` (leaf value, or the internal node's value), `hessian`
#'   and `count`. Trees are in iteration order; a multiclass model has one
#'   tree per class per iteration (tree t is class `(t - 1) %% K + 1`'s tree
#'   of iteration `(t - 1) %/% K + 1`, for K classes).
#'
#'   The attribute `init_score` holds the model's starting raw score, one per
#'   class: what training started from (the label mean, log-odds, class
#'   priors, ...; 0 with `boost_from_average = FALSE` or a per-row
#'   `init_score`). A row's raw prediction is that plus its leaf's `value` in
#'   every tree (and its own `init_score`, if any). LightGBM folds the start
#'   into its first tree's leaves instead, so `lgb.model.dt.tree()`'s first
#'   tree differs from this one by it.
#' @examples
#' fit <- histboost(mtcars[, -1], mtcars$mpg, nrounds = 3, num_leaves = 4,
#'                  min_data_in_leaf = 5, nthreads = 1, verbose = 0)
#' hb_trees(fit)
#' @export
hb_trees <- function(model, ...) {
  .hb_check_dots(list(...), "model", "hb_trees")
  .hb_check_model(model, "model")
  .hb_model_truth(model, "model")  # feature names and levels as the text says
  nd <- .Call(C_hb_model_trees, .hb_model_ptr(model))
  leaf <- nd$is_leaf
  child_id <- function(c) ifelse(is.na(c), NA_character_, ifelse(c >= 0L, paste0("N", c), paste0("L", -c - 1L)))
  fname <- model$feature_names[nd$feature]
  categories <- rep(NA_character_, length(leaf))
  cat_rows <- which(!leaf & nd$categorical %in% TRUE)
  for (r in cat_rows) {
    lv <- model$feature_levels[[nd$feature[r]]]
    codes <- nd$cat_codes[[r]]
    codes <- codes[codes >= 1L & codes <= length(lv)] # bit c <-> level code c (1-based)
    categories[r] <- paste(lv[codes], collapse = "||")
  }
  # An ordered factor split on its level order: the levels at or below the
  # threshold (level codes 1..k) go left.
  ord_rows <- which(!leaf & !(nd$categorical %in% TRUE) & model$feature_types[nd$feature] %in% "ordinal")
  for (r in ord_rows) {
    lv <- model$feature_levels[[nd$feature[r]]]
    categories[r] <- paste(lv[seq_along(lv) <= nd$threshold[r]], collapse = "||")
  }
  out <- data.frame(
    tree = nd$tree,
    id = paste0(ifelse(leaf, "L", "N"), nd$index),
    is_leaf = leaf,
    depth = nd$depth,
    feature = fname,
    split_type = ifelse(leaf, NA_character_, ifelse(nd$categorical, "categorical", "numeric")),
    threshold = nd$threshold,
    categories = categories,
    default_left = nd$default_left,
    left = child_id(nd$left),
    right = child_id(nd$right),
    gain = nd$gain,
    value = nd$value,
    hessian = nd$hessian,
    count = nd$count,
    stringsAsFactors = FALSE
  )
  # the starting score the trees add to (LightGBM folds it into its first tree's leaves)
  start <- .Call(C_hb_model_info, .hb_model_ptr(model))$init_score
  if (length(start) > 1L && length(model$classes) == length(start)) names(start) <- model$classes
  attr(out, "init_score") <- start
  out
}

#' Feature importance
#'
#' Total split gain, number of splits and cover of each feature over the
#' trees that `predict()` sums: those of the best iteration when early
#' stopping found one (as `lgb.importance()` does), else all of them.
#'
#' @param model A `"histboost"` model.
#' @param iteration `NULL` (the model's best iteration, else all), or how
#'   many boosting rounds' trees to count, as `predict()`'s `iteration`.
#' @param type Sort by `"gain"` (total gain of the feature's splits),
#'   `"split"` (number of splits) or `"cover"` (the hessian sum of the
#'   training rows that reached the feature's splits, xgboost's
#'   `"total_cover"`; for unweighted squared error, the number of rows.
#'   `lgb.importance()`'s Cover counts the rows instead, so the two differ
#'   for weighted data and for losses whose hessians are not 1).
#' @return A data.frame with columns `feature`, `gain`, `splits`, `cover`
#'   and `fraction` (the feature's share of the total of `type`), sorted by
#'   `type` in decreasing order. Features never used in a split are omitted.
#' @examples
#' fit <- histboost(mtcars[, -1], mtcars$mpg, nrounds = 10, min_data_in_leaf = 5,
#'                  nthreads = 1, verbose = 0)
#' hb_importance(fit)
#' hb_importance(fit, type = "split")
#' hb_importance(fit, type = "cover")
#' @export
hb_importance <- function(model, type = c("gain", "split", "cover"), iteration = NULL) {
  .hb_check_model(model, "model")
  .hb_model_truth(model, "model")
  type <- .hb_choice(type, c("gain", "split", "cover"), "type")
  nd <- .Call(C_hb_model_trees, .hb_model_ptr(model))
  # the trees of the first `iteration` rounds (those predict() sums), a round's trees in a row
  per <- if (model$niter > 0L) length(unique(nd$tree)) %/% model$niter else 1L
  if (model$niter > 0L) iteration <- .hb_iteration(model, iteration)
  internal <- !nd$is_leaf & (model$niter == 0L | nd$tree <= iteration * per)
  f <- nd$feature[internal]
  nf <- length(model$feature_names)
  gain <- vapply(split(nd$gain[internal], factor(f, levels = seq_len(nf))), sum, 0)
  splits <- tabulate(f, nf)
  cover <- vapply(split(nd$hessian[internal], factor(f, levels = seq_len(nf))), sum, 0)
  used <- which(splits > 0L)
  measure <- switch(type, gain = gain, split = splits, cover = cover)
  key <- measure[used]
  ord <- used[order(-key, used)]
  total <- sum(key)
  data.frame(
    feature = model$feature_names[ord],
    gain = unname(gain[ord]),
    splits = splits[ord],
    cover = unname(cover[ord]),
    fraction = if (total > 0) unname(measure[ord] / total) else rep(NA_real_, length(ord)),
    stringsAsFactors = FALSE
  )
}
