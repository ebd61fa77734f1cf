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
# `objective` as given ("auto", "binary", ...).
.hb_imbalance_weights <- function(imb, y, weights, objective, n) {
  if (imb$scale_pos_weight == 1 && !imb$is_unbalance && is.null(imb$class_weights)) return(weights)
  lab <- suppressWarnings(.hb_label(y, n))  # its own warnings come with the training data's checks
  w <- if (is.null(weights)) rep(1, n) else .hb_weights(weights, n)
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
    if (np > nn) w_neg <- np / nn else w_pos <- nn / np
  }
  w * ifelse(pos, w_pos, w_neg)
}
