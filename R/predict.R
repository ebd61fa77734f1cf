# predict.R: predictions from a histboost model on new data (raw values, no
# bins: any data with the training columns works, dense or sparse).

#' Predict with a histboost model
#'
#' @param object A `"histboost"` model.
#' @param newdata A data.frame, matrix or `dgCMatrix` with the training
#'   columns. Columns are matched by name when `newdata` has names (extra
#'   columns are ignored, whatever their names; each training column must
#'   appear once); without names there must be exactly the training
#'   columns, in order. A model trained on data without column names (whose
#'   columns it named `V1`, `V2`, ...) matches by position whatever
#'   `newdata`'s names: it needs exactly its number of columns, in the
#'   training order. Factor columns are matched by level label; a level
#'   unseen in training is treated as missing (so a factor without levels,
#'   all `NA`, is all missing). A character column where the model had a
#'   factor is read as that factor: each string is matched to the level of
#'   the same label, and a string that is not a level is missing like an
#'   unseen level. Values with such labels (not `NA`s) give a warning of
#'   class `histboost_warning_unseen_levels` naming the column, their count
#'   and labels: a typo, another case or a recoding of a level would
#'   otherwise lose the column's information without a sign (`lm()` refuses
#'   them; lightgbm maps them to missing silently). A model fitted with a formula
#'   takes the variables of the formula.
#' @param type `"response"` (regression: the prediction; ranking: the
#'   score that orders a query's rows, the same as `"raw"`; binary: the
#'   probability of the second class, `object$classes[2]`; multiclass: an
#'   n x K matrix of probabilities, for `"multiclassova"` each class's own
#'   sigmoid; `"cross_entropy"`: the probability; `"cox"`: the relative
#'   risk `exp(score)`; a custom objective: the raw score), `"class"` (a factor with the
#'   levels of the training `y`, unused ones too, ordered when it was; classification
#'   only), `"raw"` (scores before the link function), `"leaf"` (an integer
#'   matrix of 0-based leaf indices, one column per tree) or `"contrib"`
#'   (each feature's contribution to the raw score: SHAP values computed
#'   exactly by TreeSHAP, weighing each branch by the training rows that
#'   reached it; see Details) or `"interaction"` (SHAP interaction values,
#'   xgboost's `predinteraction`: for each row a (p + 1) x (p + 1) matrix
#'   whose off-diagonal entries share each pair's interaction between them
#'   and whose rows sum to the `"contrib"` values; see Details).
#' @param iteration `NULL` (the best iteration when early stopping chose one,
#'   else all) or the number of first iterations to use; more than the model
#'   has (`Inf` too) uses all of them (as lightgbm's `num_iteration`).
#' @param nthreads Threads, a whole number >= 1 (capped at four per core, see
#'   [hb_threads()]); `NULL` uses [hb_threads()].
#' @param init_score `NULL`, or the rows' starting raw scores (offsets), as
#'   given to [histboost()] for training: added to the raw score before the
#'   link function (and, for `"contrib"`, to `"(Intercept)"`, for
#'   `"interaction"` to its diagonal entry); not with
#'   `"leaf"`. A model fitted with a formula holding `offset()` takes its
#'   offset from `newdata` instead (a data.frame; other `newdata` needs the
#'   offset as `init_score`; `"leaf"` ignores it).
#' @param device `"cpu"` (the default), `"cuda"` or `"auto"`: where the
#'   trees are walked. `"cuda"` predicts on an NVIDIA GPU (see
#'   [hb_has_cuda()]) and gives the CPU's values (raw scores, responses and
#'   `"contrib"` contributions equal to within rounding, leaf indices
#'   identical), for every objective, with missing values, factors and
#'   sparse `newdata`; an error of class `histboost_error_device` when no
#'   GPU can be used or for `"interaction"`, which is computed on the CPU
#'   only. `"auto"` uses the GPU when there is one and the type allows it,
#'   else the CPU. The host still prepares the rows (and, for `"contrib"`,
#'   the trees' expected values and leaf paths), with `nthreads` threads.
#' @param ... Not used; unknown arguments are an error.
#' @details
#' With `type = "contrib"` each row's raw score is split between the
#' features: the contribution of feature j is its Shapley value in the game
#' whose payoff for a set S of known features is the model's expected raw
#' score given the values of S, the unknown features integrated out through
#' the training rows that followed each branch (Lundberg, Erion and Lee,
#' 2018; the same definition as LightGBM's and XGBoost's contributions). The
#' last column, `"(Intercept)"`, is the expected raw score over the training
#' rows, so each row of the result sums to `predict(type = "raw")`. A factor
#' spread over several internal features still gets one column. With bagging
#' the branches are weighed by the rows in each tree's bag, and with GOSS by
#' the rows each tree sampled, so there `"(Intercept)"` is
#' the mean over those rows rather than over the whole training set.
#'
#' With `type = "interaction"` the contribution of each feature is split
#' further (Lundberg, Erion and Lee, 2018, as XGBoost computes them): entry
#' `[, i, j]` for features i != j is half the Shapley interaction index of
#' i and j in the same game (so `[, i, j]` and `[, j, i]` together are the
#' whole interaction, and the matrix is symmetric), and the diagonal entry
#' `[, i, i]` is what is left of i's contribution, its main effect. Row i of
#' each matrix sums to i's `"contrib"` value, and the whole matrix to the
#' raw score. The `"(Intercept)"` row and column are zero except their
#' shared diagonal entry, which holds the `"contrib"` intercept. The values
#' are exact; each tree is walked once more for every feature it splits on,
#' held known and unknown, so they cost about 2 x (the features a tree
#' uses) times the contributions, and the result holds n (p + 1)^2 values a
#' class: ask for few rows of wide data.
#' @return A numeric vector, a matrix, an array or a factor, as described
#'   under `type`. `type = "contrib"` gives an n x (p + 1) matrix, columns
#'   the p features and `"(Intercept)"`; for a multiclass model an
#'   n x (p + 1) x K array, the third dimension the classes. `type = "interaction"`
#'   gives an n x (p + 1) x (p + 1) array, both feature dimensions named
#'   like the `"contrib"` columns; for a multiclass model an n x (p + 1) x
#'   (p + 1) x K array, the fourth dimension the classes (XGBoost's R package
#'   returns its classes as a list or in another dimension: here
#'   `out[, , , k]` is class k's, like `"contrib"`'s `out[, , k]`).
#' @examples
#' fit <- histboost(iris[, 1:4], iris$Species, nrounds = 10, min_data_in_leaf = 5,
#'                  nthreads = 1, verbose = 0)
#' head(predict(fit, iris))
#' table(predict(fit, iris, type = "class"), iris$Species)
#' dim(predict(fit, iris, type = "leaf"))
#' fit2 <- histboost(mtcars[, -1], mtcars$mpg, nrounds = 20, min_data_in_leaf = 5,
#'                   nthreads = 1, verbose = 0)
#' phi <- predict(fit2, mtcars[1:3, -1], type = "contrib")
#' round(phi, 2)
#' all.equal(rowSums(phi), predict(fit2, mtcars[1:3, -1], type = "raw"))
#' inter <- predict(fit2, mtcars[1:3, -1], type = "interaction")
#' round(inter[1, , ], 2)                       # row 1's interactions
#' all.equal(apply(inter, c(1, 2), sum), phi)   # rows sum to the contributions
#' @export
predict.histboost <- function(object, newdata,
                              type = c("response", "class", "raw", "leaf", "contrib", "interaction"),
                              iteration = NULL, nthreads = NULL, init_score = NULL,
                              device = c("cpu", "cuda", "auto"), ...) {
  .hb_check_dots(list(...), c("object", "newdata", "type", "iteration", "nthreads", "init_score", "device"),
                 "predict")
  .hb_check_model(object)
  truth <- .hb_model_truth(object)  # every field used below agrees with the text
  terms <- truth$terms
  type <- .hb_choice(type, c("response", "class", "raw", "leaf", "contrib", "interaction"), "type")
  device <- .hb_predict_device(.hb_choice(device, c("cpu", "cuda", "auto"), "device"), type)
  if (missing(newdata) || is.null(newdata)) {
    .hb_abort("`newdata` is required: a histboost model does not keep its training data.")
  }
  if (type == "class" && identical(object$params$objective, "custom") && object$task != "multiclass") {
    .hb_abort("`type` = \"class\" needs classes, and a model of a custom objective with one score a row keeps ",
              "none: it predicts raw scores (with a two-class `y`, for the labels 0 and 1 it was trained on, ",
              "1 for `y`'s second level). Apply your link and cut-off to predict(type = \"raw\").")
  }
  if (type == "class" && object$task %in% c("regression", "ranking", "survival")) {
    .hb_abort("`type` = \"class\" needs a classification model; this one is a ", object$task, ".")
  }
  niter <- object$niter
  iteration <- .hb_iteration(object, iteration)
  nthreads <- .hb_nthreads(nthreads)
  if (!is.null(terms) && is.list(newdata) && !is.data.frame(newdata) && length(newdata) &&
      !is.null(names(newdata)) && length(unique(lengths(newdata))) == 1L) {
    newdata <- list2DF(newdata)  # a list of columns, as predict.lm() takes it
  }
  if (!is.null(terms) && !is.data.frame(newdata) && !.hb_formula_plain(terms)) {
    # a matrix cannot hold the variables the formula transforms: its columns would be taken as the terms
    .hb_abort("`newdata` must be a data.frame (or a list of columns): the model's formula computes its ",
              "predictors (", .hb_and(sub("^`(.*)`$", "\\1", attr(terms, "term.labels"))), ") from the variables ",
              .hb_and(setdiff(all.vars(terms), .HB_FORMULA_CONSTANTS)), ".")
  }
  if (!is.null(terms) && is.data.frame(newdata)) {
    newdata <- .hb_formula_frame(terms, newdata)
    offset <- attr(newdata, "offset")
    if (!is.null(offset) && type != "leaf") {  # leaf indices do not depend on the offset
      if (!is.null(init_score)) {
        .hb_abort("`init_score` must not be given: the model's formula has an offset(), taken from `newdata`.")
      }
      .hb_check_offset(offset, "the model's formula offset()", "newdata")
      init_score <- offset
    }
  } else if (!is.null(terms) && !is.null(attr(terms, "offset")) && is.null(init_score) &&
             type != "leaf") {
    # a formula's offset() is computed from a data.frame's columns: any other newdata would silently lose it
    .hb_abort("the model's formula has an offset(): give `newdata` as a data.frame holding its variables, ",
              "or the offset as `init_score`.")
  }
  if (!is.null(init_score)) {
    if (type == "leaf") .hb_abort("`init_score` has no place in leaf predictions (`type` = \"leaf\").")
    nr <- if (is.data.frame(newdata) || is.matrix(newdata) || inherits(newdata, "Matrix")) nrow(newdata)
          else length(newdata)
    init_score <- .hb_init_score(init_score, nr, nrow_arg = "newdata")
    K <- length(object$classes) * (object$task == "multiclass") + (object$task != "multiclass")
    if (.hb_init_score_ncol(init_score) != K) {
      .hb_abort("`init_score` has ", .hb_init_score_ncol(init_score), " columns but the model has ",
                if (K > 1L) paste(K, "classes: give a matrix with one column per class.")
                else "one score a row: give a vector.")
    }
  }
  # names made up for training data without column names are matched by position (read from the text)
  schema <- list(names = object$feature_names, types = object$feature_types,
                 levels = object$feature_levels, generated = isTRUE(truth$feature_names_generated))
  feat <- .hb_features_like(newdata, schema, "newdata")
  ptr <- .hb_model_ptr(object)
  code <- switch(type, raw = 0L, response = 1L, class = 1L, leaf = 2L, contrib = 3L, interaction = 4L)
  # iteration 0 (a model without iterations) means "all" = none to the engine.
  out <- .Call(C_hb_model_predict, ptr, feat$spec, 0L, as.integer(iteration), code, nthreads, init_score,
               match(device, c("cpu", "cuda")) - 1L)
  if (type == "leaf") return(out)
  if (type == "contrib") {
    cols <- c(object$feature_names, "(Intercept)")
    if (object$task == "multiclass") {
      return(array(out, c(nrow(out), length(cols), length(object$classes)),
                   dimnames = list(NULL, cols, object$classes)))
    }
    colnames(out) <- cols
    return(out)
  }
  if (type == "interaction") {
    cols <- c(object$feature_names, "(Intercept)")
    P <- length(cols)
    if (object$task == "multiclass") {
      return(array(out, c(nrow(out), P, P, length(object$classes)),
                   dimnames = list(NULL, cols, cols, object$classes)))
    }
    return(array(out, c(nrow(out), P, P), dimnames = list(NULL, cols, cols)))
  }
  classes <- object$classes
  if (object$task == "multiclass") {
    if (type == "class") {
      return(.hb_class_factor(object, classes[max.col(out, ties.method = "first")]))
    }
    colnames(out) <- classes
    return(out)
  }
  out <- out[, 1L]
  if (type == "class") return(.hb_class_factor(object, classes[(out > 0.5) + 1L]))
  out
}

# The device a prediction of `type` runs on, "cpu" or "cuda": interactions
# are computed on the CPU only ("auto" takes the CPU for them; "cuda" is a
# device error), and .hb_device() says when "cuda" cannot be used. Checked
# before any work.
.hb_predict_device <- function(device, type) {
  if (type == "interaction") {
    if (device == "cuda") {
      .hb_abort("`device` = \"cuda\": `type` = \"", type, "\" is computed on the CPU only. Use device = \"cpu\" ",
                "(or \"auto\", which then uses the CPU).", kind = "device")
    }
    return("cpu")
  }
  .hb_device(device)
}

# The predictors of a formula model, evaluated on newdata (missing values kept).
.hb_formula_frame <- function(terms, newdata, arg = "newdata") {
  # Checked again right before evaluation (the object's terms may have been
  # edited since the model text was read), and evaluated where only the
  # allowed functions exist.
  why <- .hb_terms_problem(terms)
  if (!is.null(why)) .hb_throw("format", paste0("`object`: the model's formula is refused: ", why, "."))
  environment(terms) <- .hb_formula_env()
  vars <- setdiff(all.vars(terms), .HB_FORMULA_CONSTANTS)
  miss <- setdiff(vars, names(newdata))
  if (length(miss)) {
    .hb_abort("`", arg, "` lacks ", if (length(miss) > 1L) "columns " else "column ", .hb_and(miss),
              " used in the model's formula.")
  }
  .hb_formula_codes_newdata(terms, newdata, arg)
  mf <- tryCatch(stats::model.frame(terms, newdata, na.action = stats::na.pass),
                 error = function(e) .hb_abort("`", arg, "`: the model's formula could not be evaluated: ",
                                               conditionMessage(e)))
  out <- .hb_formula_columns(mf, terms)
  attr(out, "offset") <- stats::model.offset(mf)
  out
}

# The iterations a model's use takes (predict(), hb_importance()): NULL is
# the best iteration when early stopping found one, else all; more than the
# model has is all of them, as lightgbm's num_iteration (an early-stopped
# model has fewer iterations than the nrounds a caller may ask for).
.hb_iteration <- function(object, iteration) {
  niter <- object$niter
  if (is.null(iteration)) return(object$best_iteration %||% niter)
  if (is.numeric(iteration) && length(iteration) == 1L && !is.object(iteration) && isTRUE(iteration > niter) &&
      (is.infinite(iteration) || iteration == round(iteration))) {
    return(niter)  # 1e10 or Inf too: beyond an integer, still "all of them"
  }
  iteration <- .hb_number(iteration, "iteration", integer = TRUE, lower = 1)
  min(iteration, niter)
}

# Predicted classes as the training labels' factor: its levels, unused ones
# too, and its order (an ordered y gives ordered predictions), so that
# predictions compare with y (pred == y) and tabulate against it.
.hb_class_factor <- function(object, lab) {
  factor(lab, levels = object$class_levels %||% object$classes, ordered = isTRUE(object$class_ordered))
}
