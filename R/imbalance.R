# imbalance.R: scale_pos_weight, is_unbalance and class_weights, which
# reweigh the training rows by class (LightGBM's and xgboost's class
# imbalance parameters). They are row weights: a model trained with them is
# the model trained with the matching `weights`.

# The checked options: list(scale_pos_weight, is_unbalance, class_weights),
# class_weights NULL or a named double vector.
.hb_imbalance_args <- function(a) {
  spw <- .hb_number(a$scale_pos_weight %||% 1, "scale_pos_weight", lower = 0, lower_open = TRUE)
  unb <- .hb_flag(a$is_unbalance %||% FALSE, "is_unbalance")
  cw <- a$class_weights
  if (!is.null(cw)) {
    ok <- is.numeric(cw) && !is.object(cw) && is.null(dim(cw)) && length(cw) >= 1L && !is.null(names(cw)) &&
      !anyNA(names(cw)) && all(nzchar(names(cw)))
    if (!ok) {
      .hb_abort("`class_weights` must be a numeric vector named by class, e.g. c(setosa = 1, virginica = 3).")
    }
    if (anyDuplicated(names(cw))) .hb_abort("`class_weights` names ", .hb_and(unique(names(cw)[duplicated(names(cw))])),
                                            " more than once.")
    bad <- which(!is.finite(cw) | cw <= 0)
    if (length(bad)) .hb_abort("`class_weights` must be finite and > 0; `", names(cw)[bad[1L]], "` is ", cw[bad[1L]], ".")
    cw <- stats::setNames(as.double(cw), names(cw))
  }
  if (!is.null(cw) && (unb || spw != 1)) {
    .hb_abort("`class_weights` and `scale_pos_weight` / `is_unbalance` both weigh the classes; use one of them.")
  }
  if (unb && spw != 1) {
    .hb_abort("`is_unbalance` = TRUE and `scale_pos_weight` both weigh the positive class; use one of them ",
              "(as LightGBM asks).")
  }
  list(scale_pos_weight = spw, is_unbalance = unb, class_weights = cw)
}

# Row weights with the class weights applied (`weights` NULL: all 1), or
# `weights` unchanged when no option is set. `y` the training labels,
# `objective` as given ("auto", "binary", ...). With `distributed` = "mpi",
# `y` is this process's shard: the classes and their counts are those of
# every shard's rows (.hb_imbalance_labels_dist), so each row gets the
# weight one process gives it on the concatenated rows.
.hb_imbalance_weights <- function(imb, y, weights, objective, n, distributed = "no") {
  if (imb$scale_pos_weight == 1 && !imb$is_unbalance && is.null(imb$class_weights)) return(weights)
  dist <- identical(distributed, "mpi")
  if (dist) {
    lw <- .hb_imbalance_labels_dist(y, weights, n)
    lab <- lw$lab
    w <- lw$w
  } else {
    lab <- suppressWarnings(.hb_label(y, n))  # its own warnings come with the training data's checks
    w <- if (is.null(weights)) rep(1, n) else .hb_weights(weights, n)
  }
  binary <- lab$task_hint == "binary" || (identical(objective, "binary") && isTRUE(lab$binary_ok))
  if (!is.null(imb$class_weights)) {
    classes <- if (lab$task_hint == "regression" && binary) c("0", "1") else lab$classes
    if (is.null(classes)) .hb_abort("`class_weights` weigh classes: `y` must be a factor or logical.")
    unknown <- setdiff(names(imb$class_weights), classes)
    if (length(unknown)) {
      .hb_abort("`class_weights` names ", .hb_and(unknown), ", not ",
                if (length(unknown) > 1L) "classes" else "a class", " of `y` (", .hb_and(classes), ").")
    }
    cw <- rep(1, length(classes))
    cw[match(names(imb$class_weights), classes)] <- imb$class_weights
    return(w * cw[lab$label + 1L])
  }
  if (!binary) {
    .hb_abort("`", if (imb$is_unbalance) "is_unbalance" else "scale_pos_weight", "` is for binary ",
              "classification (two classes); for more, give `class_weights`.")
  }
  pos <- lab$label == 1
  w_pos <- imb$scale_pos_weight
  w_neg <- 1
  if (imb$is_unbalance) {  # LightGBM: the rarer class weighs (count of the other) / (its count)
    np <- sum(pos)
    nn <- n - np
    if (dist) {  # the counts of all processes' rows
      cnt <- Reduce(`+`, .hb_mpi_allgather(c(np, nn)))
      np <- cnt[1L]
      nn <- cnt[2L]
    }
    if (np > nn) w_neg <- np / nn else w_pos <- nn / np
  }
  w * ifelse(pos, w_pos, w_neg)
}

# The labels of a distributed shard `y` coded over every process's classes
# (factor levels united in rank order, levels without rows anywhere
# dropped, as .hb_label_dist codes them), and the row weights (all 1 when
# NULL): list(lab, w). A bad `y` or `weights` on one process fails every
# process alike (.hb_dist_try), before the classes are agreed.
.hb_imbalance_labels_dist <- function(y, weights, n) {
  kind <- if (is.factor(y)) "factor" else if (is.logical(y)) "logical" else class(y)[1L]
  all <- .hb_mpi_allgather(list(kind = kind, levels = if (is.factor(y)) levels(y)))
  kinds <- unique(vapply(all, `[[`, "", "kind"))
  if (length(kinds) > 1L) {
    .hb_abort("`y` must be of one type on every process, but it is ", .hb_and(kinds), " on different processes.")
  }
  if (is.factor(y)) {
    lv <- unique(unlist(lapply(all, `[[`, "levels"), use.names = FALSE))
    if (!identical(levels(y), lv)) y <- factor(as.character(y), levels = lv)
  }
  w <- .hb_dist_try({
    yy <- .hb_label_vector(y, n, "y")
    if (is.factor(yy) || is.logical(yy)) .hb_check_finite(as.integer(yy), "y", "missing values")
    else suppressWarnings(.hb_label(yy, n))  # numbers checked; anything else refused by name
    if (is.null(weights)) rep(1, n) else .hb_weights(weights, n)
  })
  list(lab = suppressWarnings(.hb_label_dist(y, n)), w = w)
}
