# errors.R: the package's classed conditions and the argument checks shared by
# every exported function (one helper per kind of argument, so messages agree).

# Signal an error of class c("histboost_error_<kind>", "histboost_error",
# "error", "condition"). Also called from C (src/r_util.c) for engine errors.
.hb_throw <- function(kind, message, call = NULL) {
  kind <- match.arg(kind, c("input", "format", "engine", "device"))
  cond <- structure(
    class = c(paste0("histboost_error_", kind), "histboost_error", "error", "condition"),
    list(message = paste0(message, collapse = ""), call = call)
  )
  stop(cond)
}

# An input error raised because `parent`, an error from the user's own code
# (a custom objective), happened: the message says whose code failed and
# repeats its message; the original condition is kept as `parent` (the
# convention rlang and cli follow), so nothing about it is lost.
.hb_abort_from <- function(parent, ...) {
  cond <- structure(
    class = c("histboost_error_input", "histboost_error", "error", "condition"),
    list(message = paste0(paste0(..., collapse = ""), conditionMessage(parent)), call = NULL, parent = parent)
  )
  stop(cond)
}

# `e` raised again with the message the pasted pieces make, its classes
# kept: a relay of another process's failure (.hb_dist_try) stays one, so
# that hb_mpi_run() reports the failing process's own error.
.hb_reraise <- function(e, ...) {
  e$message <- paste0(..., collapse = "")
  e$call <- NULL
  stop(e)
}

# A warning `w` given again with another message, its classes kept (from a
# calling handler: the original is muffled).
.hb_rewarn <- function(w, message) {
  w$message <- message
  warning(w)
  invokeRestart("muffleWarning")
}

# Input error whose message is the pasted pieces (most errors are this kind).
.hb_abort <- function(..., kind = "input") {
  .hb_throw(kind, paste0(..., collapse = ""))
}

.hb_warn <- function(...) {
  cond <- structure(
    class = c("histboost_warning", "warning", "condition"),
    list(message = paste0(..., collapse = ""), call = NULL)
  )
  warning(cond)
}

# "`a`, `b` and `c`" for messages.
.hb_and <- function(x, max = 10L) {
  x <- paste0("`", x, "`")
  if (length(x) > max) x <- c(x[seq_len(max)], sprintf("%d more", length(x) - max))
  if (length(x) <= 1L) return(x)
  paste0(paste(x[-length(x)], collapse = ", "), " and ", x[length(x)])
}

# Check a numeric scalar argument and return it as integer (integer = TRUE) or
# double. Logicals are refused (TRUE is not the number 1 to a user). lower/upper bounds are inclusive unless *_open; NULL allowed when
# null_ok. The error names the argument and the accepted range.
.hb_number <- function(value, name, integer = FALSE, lower = -Inf, upper = Inf,
                       lower_open = FALSE, upper_open = FALSE, null_ok = FALSE) {
  if (is.null(value)) {
    if (null_ok) return(NULL)
    .hb_abort("`", name, "` must not be NULL.")
  }
  # The usual case first: the message below is built only for a refused value
  # (building it cost a fifth of a 200-row fit, at 48 calls a fit).
  # TRUE is not a count: nrounds = TRUE or iteration = TRUE would act as 1.
  if (is.numeric(value) && !is.object(value) && length(value) == 1L) {
    v <- as.numeric(value)
    if (!is.na(v) && is.finite(v) &&
        (!integer || (v == round(v) && abs(v) <= .Machine$integer.max)) &&
        !(v < lower || (lower_open && v == lower) || v > upper || (upper_open && v == upper))) {
      return(if (integer) as.integer(v) else v)
    }
  }
  what <- if (integer) "a whole number" else "a number"
  range <- character()
  if (is.finite(lower)) range <- c(range, sprintf("%s %s", if (lower_open) ">" else ">=", format(lower)))
  if (is.finite(upper)) range <- c(range, sprintf("%s %s", if (upper_open) "<" else "<=", format(upper)))
  expect <- paste0(what, if (length(range)) paste0(" ", paste(range, collapse = " and ")) else "")
  # Say what was given as the user would see it: a string in quotes (so
  # "10" does not read as the number 10 it failed to be), else the value.
  shown <- if (is.character(value) && length(value) == 1L && !is.object(value)) {
    if (is.na(value)) "NA (a missing string)" else sprintf("the string \"%s\"", value)
  } else if (is.atomic(value) && length(value) == 1L && !is.object(value)) {
    format(value)
  } else {
    sprintf("an object of class %s and length %d", class(value)[1L], length(value))
  }
  if (is.character(value) && length(value) == 1L && !is.na(suppressWarnings(as.numeric(value)))) {
    opt <- sub("^options\\((.*)\\)$", "\\1", name)  # an option: options(name = 2), not options(name) = 2
    shown <- paste0(shown, " (write the number without quotes: ",
                    if (opt != name) sprintf("options(%s = %s)", opt, value) else paste0(name, " = ", value), ")")
  }
  .hb_abort("`", name, "` must be ", expect, ", not ", shown, ".")
}

# `verbose`: 0, 1 or 2; FALSE / TRUE as 0 / 1, and a negative whole number
# (LightGBM's -1, silent) as 0, as `params = list(verbose = -1)` takes it.
.hb_verbose <- function(verbose) {
  verbose <- .hb_verbose_norm(verbose)
  if (is.numeric(verbose) && length(verbose) == 1L && !is.na(verbose) && verbose < 0) {
    .hb_abort("`verbose` must be 0, 1 or 2 (a negative whole number, LightGBM's -1, means 0), not ",
              format(verbose), ".")
  }
  .hb_number(verbose, "verbose", integer = TRUE, lower = 0, upper = 2)
}
# The value `verbose` stands for, unchecked (also for comparing an argument with `params`' value).
.hb_verbose_norm <- function(verbose) {
  if (is.logical(verbose) && length(verbose) == 1L && !is.na(verbose)) return(as.integer(verbose))
  if (is.numeric(verbose) && !is.object(verbose) && length(verbose) == 1L && !is.na(verbose) &&
      verbose < 0 && verbose == round(verbose)) return(0L)
  verbose
}

# TRUE or FALSE (a logical of length one, not NA).
.hb_flag <- function(value, name) {
  if (!is.logical(value) || length(value) != 1L || is.na(value) || is.object(value)) {
    .hb_abort("`", name, "` must be TRUE or FALSE.")
  }
  value
}

# One of `choices` (a default spelled as the whole choice vector picks the first).
.hb_choice <- function(value, choices, name) {
  if (identical(value, choices)) return(choices[1L])
  if (!is.character(value) || length(value) != 1L || is.na(value)) {
    .hb_abort("`", name, "` must be one of ", .hb_and(choices), ".")
  }
  if (!value %in% choices) {
    .hb_abort("`", name, "` must be one of ", .hb_and(choices), ", not \"", value, "\".",
              .hb_did_you_mean(value, choices))
  }
  value
}

# " Did you mean `x`?" when a close candidate exists, else "".
.hb_did_you_mean <- function(x, candidates, aliases = NULL) {
  if (!is.null(aliases) && x %in% names(aliases)) {
    return(sprintf(" Did you mean `%s`?", aliases[[x]]))
  }
  if (!length(candidates)) return("")
  d <- utils::adist(x, candidates, ignore.case = TRUE)[1L, ]
  prefix <- startsWith(candidates, x) & nchar(x) >= 3L
  best <- if (any(prefix)) which(prefix)[1L] else which.min(d)
  if (any(prefix) || d[best] <= max(2L, nchar(x) %/% 3L)) {
    sprintf(" Did you mean `%s`?", candidates[best])
  } else {
    ""
  }
}

# LightGBM / xgboost spellings users will try, mapped to ours.
.hb_aliases <- c(
  eta = "learning_rate", shrinkage_rate = "learning_rate",
  num_iterations = "nrounds", num_iteration = "nrounds", n_iter = "nrounds",
  num_boost_round = "nrounds", n_estimators = "nrounds", num_trees = "nrounds",
  max_leaves = "num_leaves", num_leaf = "num_leaves",
  min_child_samples = "min_data_in_leaf", min_data = "min_data_in_leaf",
  min_child_weight = "min_sum_hessian_in_leaf", min_sum_hessian = "min_sum_hessian_in_leaf",
  reg_alpha = "lambda_l1", alpha = "lambda_l1", reg_lambda = "lambda_l2", lambda = "lambda_l2",
  min_split_gain = "min_gain_to_split", gamma = "min_gain_to_split",
  subsample = "bagging_fraction", bagging = "bagging_fraction", subsample_freq = "bagging_freq",
  colsample_bytree = "feature_fraction", sub_feature = "feature_fraction",
  num_threads = "nthreads", n_jobs = "nthreads", nthread = "nthreads",
  metric = "eval_metric", metrics = "eval_metric", early_stopping_round = "early_stopping_rounds",
  early_stopping = "early_stopping_rounds", random_state = "seed", random_seed = "seed",
  label = "y", weight = "weights", data = "x", valids = "valid", watchlist = "valid"
)

# Error on arguments that landed in `...` but are not known.
# lgb_names: the training functions, where LightGBM's storage hints and the
# names histboost has at their default only are taken as `params` takes them.
.hb_check_dots <- function(dots, known, fun, lgb_names = FALSE) {
  if (!length(dots)) return(invisible())
  nms <- names(dots)
  if (is.null(nms)) nms <- rep("", length(dots))
  if (any(nms == "")) {
    .hb_abort("`...` holds ", sum(nms == ""), " unnamed extra argument(s) given to ", fun,
              "(); name every argument after the data.")
  }
  # LightGBM's and xgboost's storage hints, and their names histboost has only at their default, as `params` takes them
  keep <- !lgb_names | (!(nms %in% .HB_PARAM_IGNORED) &
    !vapply(seq_along(nms), function(k) {
      nms[k] %in% names(.HB_PARAM_AT_DEFAULT) && .hb_at_default(dots[[k]], .HB_PARAM_AT_DEFAULT[[nms[k]]])
    }, NA))
  if (!any(keep)) return(invisible())
  nms <- nms[keep]
  # a name refused on purpose (a LightGBM seed, xgboost's tree_method, ...) says why; LightGBM's
  # names of data file columns, as arguments, are misspellings of ours (`weight` for `weights`): the hint below
  refused <- setdiff(intersect(nms, names(.HB_PARAM_REFUSED)), c("data", "label", "weight"))
  if (length(refused)) .hb_abort("`", refused[1L], "` ", .HB_PARAM_REFUSED[[refused[1L]]], ".")
  aliases <- c(.hb_aliases, .HB_PARAM_ALIASES[setdiff(names(.HB_PARAM_ALIASES), names(.hb_aliases))])
  aliases <- aliases[aliases %in% known]
  hints <- vapply(nms, .hb_did_you_mean, "", candidates = known, aliases = aliases)
  .hb_abort(.hb_and(nms), if (length(nms) > 1L) " are not arguments of " else " is not an argument of ",
            fun, "().", paste(unique(hints[hints != ""]), collapse = ""))
}
