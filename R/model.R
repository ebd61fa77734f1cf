# model.R: the "histboost" S3 object. Its one source of truth is model_text
# (the engine's serialized model, carrying the R-side fields as meta pairs);
# every other field is derived from it here, after training and after
# hb_load() alike. The native model behind .ptr is a cache, rebuilt from
# model_text whenever it is missing or dead (e.g. after readRDS()).

`%||%` <- function(a, b) if (is.null(a)) b else a

# Doubles written so that they read back bit for bit on every platform: as
# at most 15 significant digits where those read back as the same double and
# their digits, an integer, times or over a power of ten of at most 10^22
# make the number (then even a parser without an extended long double, as
# R's on arm64 macOS, reads them exactly: two exact numbers, one rounding),
# else in C99's hexadecimal notation ("0x1.62e42fefa39efp-1"), which R reads
# exactly.
.hb_num_text <- function(x) {
  x <- as.double(x)
  s <- sprintf("%.15g", x)
  mant <- sub("e.*$", "", s)
  e10 <- ifelse(grepl("e", s, fixed = TRUE), suppressWarnings(as.integer(sub("^.*e", "", s))), 0L) -
    ifelse(grepl(".", mant, fixed = TRUE), nchar(sub("^[^.]*[.]", "", mant)), 0L)
  back <- suppressWarnings(as.numeric(s))  # (NA's "NA" reads back as NA, with a warning)
  exact <- is.na(x) | !is.finite(x) | (back == x & abs(e10) <= 22L)
  s[!exact] <- sprintf("%a", x[!exact])
  s[is.na(x)] <- "NA"
  s
}

.hb_csv_quote <- function(x) paste0("\"", gsub("\"", "\"\"", x, fixed = TRUE), "\"")

# R-side extras as the meta pairs stored in the model text.
.hb_meta_encode <- function(task, r_params, evaluation_log, best_score) {
  meta <- c(
    r.task = task,
    r.nrounds = as.character(r_params$nrounds),
    r.objective = r_params$objective,
    r.max_bin = as.character(r_params$max_bin),
    r.eval_metric = paste(r_params$eval_metric, collapse = ","),
    r.device = r_params$device,
    r.quantized = as.character(isTRUE(r_params$quantized)),
    r.grad_bits = as.character(r_params$grad_bits %||% 4L),
    r.stochastic_rounding = as.character(!isFALSE(r_params$stochastic_rounding)),
    r.refit_leaves = as.character(!isFALSE(r_params$refit_leaves)),
    r.package_version = unname(getNamespaceVersion("histboost"))  # (packageVersion() reads the DESCRIPTION file)
  )
  # the other binning parameters: only when not the default, so that other models' text is unchanged
  if (!is.null(r_params$min_data_in_bin) && r_params$min_data_in_bin != 3L) {
    meta[["r.min_data_in_bin"]] <- as.character(r_params$min_data_in_bin)
  }
  if (!is.null(r_params$bin_sample_rows) && r_params$bin_sample_rows != 200000L) {
    meta[["r.bin_sample_rows"]] <- as.character(r_params$bin_sample_rows)
  }
  if (length(r_params$max_bin_by_feature)) {  # the columns given their own max_bin: names, then values
    mbf <- r_params$max_bin_by_feature
    meta[["r.max_bin_by_feature"]] <- paste(paste(.hb_csv_quote(names(mbf)), collapse = ","),
                                            paste(mbf, collapse = ","), sep = "\n")
  }
  if (!is.null(r_params$early_stopping_rounds)) {
    meta[["r.early_stopping_rounds"]] <- as.character(r_params$early_stopping_rounds)
  }
  if (isTRUE(r_params$goss)) {
    meta[["r.goss"]] <- "TRUE"
    meta[["r.top_rate"]] <- .hb_num_text(r_params$top_rate)
    meta[["r.other_rate"]] <- .hb_num_text(r_params$other_rate)
  }
  # Bundling is a training detail: recorded only when not the default, so
  # that other models' text is unchanged.
  if (isFALSE(r_params$enable_bundle)) meta[["r.enable_bundle"]] <- "FALSE"
  if (!is.null(r_params$max_conflict_rate) && r_params$max_conflict_rate > 0) {
    meta[["r.max_conflict_rate"]] <- .hb_num_text(r_params$max_conflict_rate)
  }
  # Class weights and early-stopping choices, likewise only when set.
  if (!is.null(r_params$scale_pos_weight) && r_params$scale_pos_weight != 1) {
    meta[["r.scale_pos_weight"]] <- .hb_num_text(r_params$scale_pos_weight)
  }
  if (isTRUE(r_params$is_unbalance)) meta[["r.is_unbalance"]] <- "TRUE"
  # predict(type = "class")'s labels, only when they are more than the classes (.hb_class_labels())
  if (length(r_params$class_levels)) meta[["r.class_levels"]] <- paste(.hb_csv_quote(r_params$class_levels), collapse = ",")
  if (isTRUE(r_params$class_ordered)) meta[["r.class_ordered"]] <- "TRUE"
  if (!is.null(r_params$class_weights)) {
    cw <- r_params$class_weights
    meta[["r.class_weights"]] <- paste(paste(.hb_csv_quote(names(cw)), collapse = ","),
                                       paste(.hb_num_text(cw), collapse = ","), sep = "\n")
  }
  if (!is.null(r_params$early_stopping_min_delta) && r_params$early_stopping_min_delta > 0) {
    meta[["r.early_stopping_min_delta"]] <- .hb_num_text(r_params$early_stopping_min_delta)
  }
  if (!is.null(r_params$early_stopping_metric)) meta[["r.early_stopping_metric"]] <- r_params$early_stopping_metric
  # Every logged metric's name in log order, metric functions' too (the log's
  # columns are "<set>_<metric>", and a function's name is not a built-in
  # one that r.eval_metric holds): recorded only when they differ from it.
  ms <- r_params$metrics
  if (!is.null(evaluation_log) && length(ms) && !anyNA(ms) && !identical(ms, r_params$eval_metric)) {
    meta[["r.metrics"]] <- paste(ms, collapse = ",")
  }
  if (!is.null(best_score)) meta[["r.best_score"]] <- .hb_num_text(best_score)
  # names V1..Vp made up for training data without column names: new data is matched by position
  if (isTRUE(r_params$feature_names_generated)) meta[["r.feature_names"]] <- "generated"
  if (!is.null(evaluation_log)) {
    rows <- do.call(paste, c(lapply(evaluation_log[-1L], .hb_num_text), sep = ","))
    rows <- paste(evaluation_log$iter, rows, sep = ",")
    meta[["r.evaluation_log"]] <- paste(c(paste(.hb_csv_quote(names(evaluation_log)), collapse = ","),
                                          rows), collapse = "\n")
  }
  meta
}

.hb_format_error <- function(...) .hb_throw("format", paste0(...))

# Decode one meta value with `fun`, turning any failure into a format error.
.hb_meta_value <- function(meta, key, fun = identity, keep = NULL) {
  if (!key %in% names(meta)) return(NULL)
  v <- meta[[key]]
  # An error of class `keep` is `fun`'s own message and passes through.
  out <- tryCatch(fun(v), error = function(e) if (!is.null(keep) && inherits(e, keep)) stop(e) else NULL,
                  warning = function(w) NULL)
  if (is.null(out)) .hb_format_error("`model_text`: the value of \"", key, "\" is malformed.")
  out
}

.hb_meta_int <- function(v) {
  n <- as.integer(v)
  if (length(n) != 1L || is.na(n)) stop("bad")
  n
}

.hb_meta_bool <- function(v) {
  if (!v %in% c("TRUE", "FALSE")) stop("bad")
  v == "TRUE"
}

.hb_meta_log <- function(v) {
  log <- utils::read.csv(text = v, check.names = FALSE, colClasses = "numeric",
                         stringsAsFactors = FALSE)
  if (!ncol(log) || names(log)[1L] != "iter") stop("bad")
  log$iter <- as.integer(log$iter)
  log
}

.hb_meta_formula <- function(v) {
  # Parsed, checked (only column names, constants and the functions of
  # formula.R), never evaluated: the formula object is built by hand.
  expr <- tryCatch(str2lang(v), error = function(e) {
    # R parses names of characters beyond ASCII only in a locale that has them (a model trained in a
    # UTF-8 session, read in the C locale of a cron job): the file is sound, the session cannot read it
    if (!isTRUE(l10n_info()[["UTF-8"]]) && grepl("[^ -~]", enc2utf8(v), useBytes = TRUE)) {
      .hb_throw("input", paste0(
        "the model's formula names columns with characters beyond ASCII, which R can parse only in a UTF-8 ",
        "locale, and this session's is ", Sys.getlocale("LC_CTYPE"), ". Start R in a UTF-8 locale (e.g. ",
        "LANG=C.UTF-8 or en_US.UTF-8) to read it; the model file is not damaged."))
    }
    stop(e)
  })
  if (!is.call(expr) || !identical(expr[[1L]], as.name("~")) || length(expr) != 2L) {
    .hb_format_error("`model_text`: the value of \"r.formula\" is not a one-sided formula.")
  }
  why <- .hb_formula_problem(expr)
  if (!is.null(why)) {
    .hb_format_error("`model_text`: the model's formula is refused: ", why, ".")
  }
  # No environment of its own: predict() evaluates it where only the allowed
  # functions exist (.hb_formula_frame), and an empty one costs nothing when
  # the model is serialized.
  stats::terms(structure(expr, class = "formula", .Environment = emptyenv()))
}

# Build the "histboost" object from a model text (training, hb_load, edits);
# `ptr`, when given, is the native model the text describes (training hands
# over the one it grew rather than have it parsed back).
.hb_model_from_text <- function(text, call = NULL, ptr = NULL) {
  if (!is.character(text) || length(text) != 1L || is.na(text)) {
    .hb_format_error("`model_text` must be a single string holding a histboost model.")
  }
  if (is.null(ptr)) ptr <- .Call(C_hb_model_load, text)
  info <- .Call(C_hb_model_info, ptr)
  meta <- info$meta
  if (!info$objective %in% .HB_OBJECTIVES) .hb_format_error("`model_text`: unknown objective.")
  objective <- names(.HB_OBJECTIVES)[info$objective + 1L]
  task <- .hb_task(objective)
  if (objective == "custom" && info$num_class > 1L) task <- "multiclass"  # a score per class
  classes <- info$label_levels
  if (!task %in% c("regression", "ranking", "survival") && length(classes) < 2L) {
    classes <- if (task == "binary") c("0", "1") else as.character(seq_len(info$num_class) - 1L)
  }
  if (task %in% c("regression", "ranking", "survival")) classes <- NULL
  fnames <- info$feature_names
  if (any(!info$feature_types %in% c(0L, 1L, 2L))) .hb_format_error("`model_text`: unknown feature type.")
  ftypes <- .HB_FEAT_TYPES[info$feature_types + 1L]
  flevels <- info$feature_levels
  names(flevels) <- fnames
  cfg <- info$config
  eval_metric <- .hb_meta_value(meta, "r.eval_metric", function(v) {
    m <- strsplit(v, ",", fixed = TRUE)[[1L]]
    if (!all(sub("@[0-9]+$", "", m) %in% names(.HB_METRICS))) stop("bad")
    m
  })
  metrics <- .hb_meta_value(meta, "r.metrics", function(v) {
    m <- strsplit(v, ",", fixed = TRUE)[[1L]]
    if (!length(m) || !all(grepl("^[A-Za-z0-9_.@-]+$", m)) || anyDuplicated(m)) stop("bad")
    m
  })
  params <- list(
    nrounds = .hb_meta_value(meta, "r.nrounds", .hb_meta_int) %||% info$niter,
    objective = objective,
    learning_rate = cfg$learning_rate, num_leaves = cfg$num_leaves, max_depth = cfg$max_depth,
    min_data_in_leaf = cfg$min_data_in_leaf, min_sum_hessian_in_leaf = cfg$min_sum_hessian_in_leaf,
    lambda_l1 = cfg$lambda_l1, lambda_l2 = cfg$lambda_l2, min_gain_to_split = cfg$min_gain_to_split,
    max_bin = .hb_meta_value(meta, "r.max_bin", .hb_meta_int),
    min_data_in_bin = .hb_meta_value(meta, "r.min_data_in_bin", .hb_meta_int) %||% 3L,
    bin_sample_rows = .hb_meta_value(meta, "r.bin_sample_rows", .hb_meta_int) %||% 200000L,
    max_bin_by_feature = .hb_meta_value(meta, "r.max_bin_by_feature", function(v) {
      m <- utils::read.csv(text = v, check.names = FALSE, colClasses = "integer", stringsAsFactors = FALSE)
      if (nrow(m) != 1L || anyNA(unlist(m))) stop("bad")
      unlist(m)
    }),
    max_cat_threshold = cfg$max_cat_threshold, cat_smooth = cfg$cat_smooth, cat_l2 = cfg$cat_l2,
    min_data_per_group = cfg$min_data_per_group, max_cat_to_onehot = cfg$max_cat_to_onehot,
    bagging_fraction = cfg$bagging_fraction,
    bagging_freq = cfg$bagging_freq, feature_fraction = cfg$feature_fraction,
    boost_from_average = !identical(as.integer(cfg$boost_from_average), 0L),
    boosting = if (isTRUE(cfg$rf == 1L)) "rf" else if (identical(.hb_meta_value(meta, "r.boosting"), "dart")) "dart" else "gbdt",
    monotone_constraints = if (!is.null(info$monotone_constraints)) {
      stats::setNames(info$monotone_constraints, fnames)
    },
    tweedie_variance_power = cfg$tweedie_variance_power, huber_delta = cfg$huber_delta,
    poisson_max_delta_step = cfg$poisson_max_delta_step, quantile_alpha = cfg$quantile_alpha,
    fair_c = cfg$fair_c,
    early_stopping_rounds = .hb_meta_value(meta, "r.early_stopping_rounds", .hb_meta_int),
    eval_metric = eval_metric,
    metrics = metrics %||% eval_metric,
    seed = cfg$seed,
    device = .hb_meta_value(meta, "r.device") %||% "cpu",
    quantized = .hb_meta_value(meta, "r.quantized", .hb_meta_bool) %||% FALSE,
    grad_bits = .hb_meta_value(meta, "r.grad_bits", .hb_meta_int) %||% 4L,
    stochastic_rounding = .hb_meta_value(meta, "r.stochastic_rounding", .hb_meta_bool) %||% TRUE,
    refit_leaves = .hb_meta_value(meta, "r.refit_leaves", .hb_meta_bool) %||% TRUE,
    goss = .hb_meta_value(meta, "r.goss", .hb_meta_bool) %||% FALSE,
    top_rate = .hb_meta_value(meta, "r.top_rate", as.numeric) %||% 0.2,
    other_rate = .hb_meta_value(meta, "r.other_rate", as.numeric) %||% 0.1,
    pos_bagging_fraction = cfg$pos_bagging_fraction %||% 1, neg_bagging_fraction = cfg$neg_bagging_fraction %||% 1,
    enable_bundle = .hb_meta_value(meta, "r.enable_bundle", .hb_meta_bool) %||% TRUE,
    max_conflict_rate = .hb_meta_value(meta, "r.max_conflict_rate", as.numeric) %||% 0,
    scale_pos_weight = .hb_meta_value(meta, "r.scale_pos_weight", as.numeric) %||% 1,
    is_unbalance = .hb_meta_value(meta, "r.is_unbalance", .hb_meta_bool) %||% FALSE,
    class_weights = .hb_meta_value(meta, "r.class_weights", function(v) {
      cw <- utils::read.csv(text = v, check.names = FALSE, colClasses = "numeric", stringsAsFactors = FALSE)
      if (nrow(cw) != 1L) stop("bad")
      unlist(cw)
    }),
    early_stopping_min_delta = .hb_meta_value(meta, "r.early_stopping_min_delta", as.numeric) %||% 0,
    early_stopping_metric = .hb_meta_value(meta, "r.early_stopping_metric")
  )
  params <- c(params, .hb_more_params(meta))
  if (task == "ranking") {
    params <- c(params, list(lambdarank_truncation_level = cfg$lambdarank_truncation_level,
                             lambdarank_norm = cfg$lambdarank_norm == 1L, label_gain = cfg$label_gain))
  }
  env <- new.env(parent = emptyenv())
  env$ptr <- ptr
  env$key <- .hb_text_key(text)
  structure(list(
    model_text = text,
    .ptr = env,
    task = task,
    classes = classes,
    feature_names = fnames,
    feature_names_generated = identical(.hb_meta_value(meta, "r.feature_names"), "generated"),
    feature_types = ftypes,
    feature_levels = flevels,
    params = params,
    niter = info$niter,
    best_iteration = if (info$best_iteration > 0L) info$best_iteration else NULL,
    best_score = .hb_meta_value(meta, "r.best_score", function(v) {
      x <- as.numeric(v)
      if (length(x) != 1L) stop("bad")
      x
    }),
    evaluation_log = .hb_meta_value(meta, "r.evaluation_log", .hb_meta_log),
    call = call,
    terms = .hb_meta_value(meta, "r.formula", .hb_meta_formula, keep = c("histboost_error_format", "histboost_error_input")),
    # predict(type = "class")'s factor: the training factor's levels (unused ones too) and order
    class_levels = if (!is.null(classes)) .hb_meta_value(meta, "r.class_levels", function(v) {
      lv <- scan(text = v, what = "", sep = ",", quote = "\"", na.strings = character(0), quiet = TRUE,
                 strip.white = FALSE, allowEscapes = FALSE, blank.lines.skip = FALSE, encoding = "UTF-8")
      if (!all(classes %in% lv) || anyDuplicated(lv)) stop("bad")
      lv
    }) %||% classes,
    class_ordered = if (!is.null(classes)) .hb_meta_value(meta, "r.class_ordered", .hb_meta_bool) %||% FALSE
  ), class = "histboost")
}

.hb_check_model <- function(object, arg = "object") {
  if (!inherits(object, "histboost") || !is.character(object$model_text) ||
      length(object$model_text) != 1L) {
    .hb_abort("`", arg, "` must be a histboost model made by histboost() or hb_load().")
  }
  invisible(object)
}

# A model text's identity, cheap to take and small to save with the object:
# its checksum line, its size, and the address of its string in this
# session (R keeps one copy of each string: an unchanged model_text is the
# same string; a text edited in R is another, even one that kept its size
# and checksum line, which alone let such an edit predict with the model
# before it).
.hb_text_key <- function(text) {
  head <- substr(text, 1L, 64L)
  m <- regexpr("checksum=[0-9a-f]+", head)
  paste(if (m > 0L) substr(head, m, m + attr(m, "match.length") - 1L), nchar(text, type = "bytes"),
        .Call(C_hb_text_id, text))
}

# The native model, reloaded from model_text when the cached pointer is
# missing or dead (after readRDS(), or in a forked worker), or was made from
# another text (a `.ptr` copied between objects).
.hb_model_ptr <- function(object, key = NULL) {
  .hb_check_model(object)
  env <- object$.ptr
  if (is.null(key)) key <- .hb_text_key(object$model_text)
  p <- if (is.environment(env) && identical(env$key, key)) env$ptr
  if (is.null(p) || !isTRUE(.Call(C_hb_ptr_valid, p))) {
    p <- .Call(C_hb_model_load, object$model_text)
    if (is.environment(env)) {  # (a key of another text, or of an older histboost, is replaced too)
      env$ptr <- p
      env$key <- key
    }
  }
  p
}

# The fields predict() and friends rely on must be what the model text says:
# the text is what predicts, and a field edited in R (feature_names
# reversed, classes relabelled) would otherwise silently mislabel or swap
# columns. Returns the object as rebuilt from its text (cached beside the
# native model); a field that disagrees is a format error naming it.
.HB_CHECKED_FIELDS <- c("task", "classes", "feature_names", "feature_types", "feature_levels",
                        "niter", "best_iteration", "class_levels", "class_ordered")
.HB_LATER_FIELDS <- c("class_levels", "class_ordered")
.hb_model_truth <- function(object, arg = "object") {
  .hb_check_model(object, arg)
  key <- .hb_text_key(object$model_text)
  ptr <- .hb_model_ptr(object, key)
  env <- object$.ptr
  truth <- if (is.environment(env) && identical(env$truth_key, key)) env$truth
  if (is.null(truth)) {
    truth <- tryCatch(.hb_model_from_text(object$model_text, ptr = ptr),
                      histboost_error_format = function(e) {
                        .hb_throw("format", paste0("`", arg, "`: its model text is not valid: ",
                                                   conditionMessage(e)))
                      })
    # only what is compared and used (the cache is saved with the object)
    truth <- truth[c(.HB_CHECKED_FIELDS, "terms", "feature_names_generated")]
    if (is.environment(env) && identical(env$key, key)) {
      env$truth <- truth
      env$truth_key <- key
    }
  }
  # A field removed (object$classes <- NULL) is an edit too: predict() would read it as empty, and `$`
  # would find feature_names_generated for feature_names. Only the fields added since histboost's first
  # snapshots may be missing (an object saved before them); they then follow the text.
  bad <- .HB_CHECKED_FIELDS[!vapply(.HB_CHECKED_FIELDS, function(f) identical(object[[f]], truth[[f]]) ||
                                      (f %in% .HB_LATER_FIELDS && !f %in% names(object)), NA)]
  # terms set to NULL ask for the trees alone (continued training does that);
  # other terms must be the text's, in every part model.frame() would use
  if (!is.null(object$terms) && !.hb_same_terms(object$terms, truth$terms)) bad <- c(bad, "terms")
  if (length(bad)) {
    .hb_throw("format", paste0(
      "`", arg, "`: its ", .hb_and(bad), if (length(bad) > 1L) " fields do" else " field does",
      " not agree with its model text, which is what predicts: the object was edited. Use the model ",
      "as histboost() or hb_load() returned it (its text is the truth: hb_save() and hb_load() ",
      "restore the fields from it)."))
  }
  if (is.null(object$terms)) truth["terms"] <- list(NULL)
  truth
}

.hb_same_terms <- function(a, b) {
  if (is.null(a) || is.null(b) || !inherits(a, "terms")) return(FALSE)
  parts <- function(tt) list(unclass(stats::formula(tt))[], attr(tt, "variables"), attr(tt, "predvars"),
                             attr(tt, "term.labels"), attr(tt, "offset"), attr(tt, "factors"))
  strip <- function(x) { attr(x, ".Environment") <- NULL; x }
  identical(lapply(parts(a), strip), lapply(parts(b), strip))
}

# Add meta pairs to a model's text and rebuild the object from it.
.hb_model_add_meta <- function(object, meta) {
  p <- .Call(C_hb_model_load, object$model_text) # a private copy: the cache stays as it was
  .Call(C_hb_model_set_meta, p, meta)
  text <- .Call(C_hb_model_to_text, p)
  out <- .hb_model_from_text(text, call = object$call)
  if (!is.null(object$fitted.values)) {  # not in the text: kept as they were
    out$fitted.values <- object$fitted.values
    out$y <- object$y
  }
  out
}

.hb_class_line <- function(object) {
  if (is.null(object$classes)) return("")
  k <- length(object$classes)
  shown <- utils::head(object$classes, 6L)
  sprintf(" (%d classes: %s%s)", k, paste(shown, collapse = ", "), if (k > 6L) ", ..." else "")
}

#' @method print histboost
#' @export
print.histboost <- function(x, ...) {
  cat("<histboost model>\n")
  obj <- x$params$objective
  cat("  task:       ", x$task, .hb_class_line(x),
      if (!is.null(obj) && obj != x$task) paste0(" (objective ", obj, ")"), "\n", sep = "")
  ncat <- sum(x$feature_types == "categorical")
  cat(sprintf("  features:   %d (%d categorical)\n", length(x$feature_names), ncat))
  it <- sprintf("  iterations: %d", x$niter)
  if (!is.null(x$best_iteration)) {
    it <- paste0(it, sprintf(" (best: %d", x$best_iteration),
                 if (!is.null(x$best_score)) sprintf(", score %.6g", x$best_score) else "", ")")
  }
  cat(it, "\n", sep = "")
  p <- x$params
  cat(sprintf("  params:     learning_rate = %g, num_leaves = %d, max_depth = %d, min_data_in_leaf = %d,\n",
              p$learning_rate, p$num_leaves, p$max_depth, p$min_data_in_leaf))
  cat(sprintf("              lambda_l2 = %g, max_bin = %s, seed = %.0f\n", p$lambda_l2,
              format(p$max_bin %||% NA), p$seed))
  mc <- p$monotone_constraints
  if (any(mc != 0L)) {
    set <- mc[mc != 0L]
    cat("  monotone:   ", paste0(names(set), " (", ifelse(set > 0L, "increasing", "decreasing"), ")",
                                 collapse = ", "), "\n", sep = "")
  }
  if (!is.null(x$evaluation_log) && nrow(x$evaluation_log)) {
    last <- x$evaluation_log[nrow(x$evaluation_log), -1L, drop = FALSE]
    cat("  last eval:  ", paste(sprintf("%s = %.6g", names(last), unlist(last)), collapse = ", "),
        "\n", sep = "")
  }
  if (length(x$na.action)) {  # as print.summary.lm() says it
    cat("  (", stats::naprint(x$na.action), ")\n", sep = "")
  }
  invisible(x)
}

#' Summarize a histboost model
#'
#' @param object A `"histboost"` model.
#' @param ... Not used.
#' @return An object of class `"summary.histboost"`: a list with `task`,
#'   `classes`, `niter`, `best_iteration`, `best_score`, `nfeatures`,
#'   `ncategorical`, `ntrees`, `nleaves` (leaves per tree: min, mean, max),
#'   `importance` (the ten most important features by gain), `evaluation`
#'   (the last row of the evaluation log, or `NULL`) and `params`.
#' @examples
#' fit <- histboost(mtcars[, -1], mtcars$mpg, nrounds = 5, min_data_in_leaf = 5,
#'                  nthreads = 1, verbose = 0)
#' summary(fit)
#' @method summary histboost
#' @export
summary.histboost <- function(object, ...) {
  tr <- hb_trees(object)
  leaves <- tabulate(tr$tree[tr$is_leaf], max(c(0L, tr$tree)))
  ev <- object$evaluation_log
  structure(list(
    task = object$task, classes = object$classes, niter = object$niter,
    best_iteration = object$best_iteration, best_score = object$best_score,
    nfeatures = length(object$feature_names),
    ncategorical = sum(object$feature_types == "categorical"),
    ntrees = length(leaves),
    nleaves = if (length(leaves)) c(min = min(leaves), mean = mean(leaves), max = max(leaves)),
    importance = utils::head(hb_importance(object), 10L),
    evaluation = if (!is.null(ev) && nrow(ev)) ev[nrow(ev), , drop = FALSE],
    params = object$params
  ), class = "summary.histboost")
}

#' @method print summary.histboost
#' @export
print.summary.histboost <- function(x, ...) {
  cat("histboost model summary\n")
  cat("  task:        ", x$task, if (!is.null(x$classes)) paste0(" (", length(x$classes), " classes)"),
      "\n", sep = "")
  cat(sprintf("  iterations:  %d%s\n", x$niter,
              if (!is.null(x$best_iteration)) sprintf(" (best %d)", x$best_iteration) else ""))
  cat(sprintf("  trees:       %d", x$ntrees))
  if (!is.null(x$nleaves)) {
    cat(sprintf(", leaves per tree %d to %d (mean %.1f)", as.integer(x$nleaves[["min"]]),
                as.integer(x$nleaves[["max"]]), x$nleaves[["mean"]]))
  }
  cat("\n")
  cat(sprintf("  features:    %d (%d categorical)\n", x$nfeatures, x$ncategorical))
  if (!is.null(x$evaluation)) {
    cat("  last evaluation:\n")
    print(x$evaluation, row.names = FALSE)
  }
  if (nrow(x$importance)) {
    cat("  top features by gain:\n")
    print(x$importance, row.names = FALSE, digits = 4)
  }
  invisible(x)
}
