# boost_more.R: DART, extremely randomized trees, interaction constraints,
# feature sampling by node, path smoothing and max_delta_step (issue 26),
# and exact sums (issue 24):
# their checks, what the engine gets, and how the model records them.
# LightGBM's semantics throughout. Exact sums train on the CPU only (the
# GPU's full-precision sums are fixed point already); the GPU learner
# honours the others.

# Their defaults (LightGBM's), in the order histboost() lists them.
.HB_MORE_DEFAULTS <- list(drop_rate = 0.1, max_drop = 50L, skip_drop = 0.5, xgboost_dart_mode = FALSE,
                          uniform_drop = FALSE, extra_trees = FALSE, interaction_constraints = NULL,
                          feature_fraction_bynode = 1, path_smooth = 0, max_delta_step = 0,
                          skip_unsplittable = FALSE, feature_pre_filter = TRUE)

# The checked values from histboost()'s arguments `a` (boosting and
# distributed already checked): a list of the parameters above plus `dart` (TRUE / FALSE).
.hb_more_args <- function(a, boosting, distributed = "no", device = "cpu") {
  v <- function(nm) if (is.null(a[[nm]])) .HB_MORE_DEFAULTS[[nm]] else a[[nm]]
  out <- list(
    dart = boosting == "dart",
    drop_rate = .hb_number(v("drop_rate"), "drop_rate", lower = 0, upper = 1),
    max_drop = .hb_number(v("max_drop"), "max_drop", integer = TRUE),
    skip_drop = .hb_number(v("skip_drop"), "skip_drop", lower = 0, upper = 1),
    xgboost_dart_mode = .hb_flag(v("xgboost_dart_mode"), "xgboost_dart_mode"),
    uniform_drop = .hb_flag(v("uniform_drop"), "uniform_drop"),
    extra_trees = .hb_flag(v("extra_trees"), "extra_trees"),
    interaction_constraints = .hb_interaction_values(a$interaction_constraints),
    feature_fraction_bynode = .hb_number(v("feature_fraction_bynode"), "feature_fraction_bynode", lower = 0,
                                         upper = 1, lower_open = TRUE),
    path_smooth = .hb_number(v("path_smooth"), "path_smooth", lower = 0),
    max_delta_step = .hb_number(v("max_delta_step"), "max_delta_step", lower = 0),
    skip_unsplittable = .hb_flag(v("skip_unsplittable"), "skip_unsplittable"),
    feature_pre_filter = .hb_flag(v("feature_pre_filter"), "feature_pre_filter"),
    # NULL: on wherever the CPU trains in full precision (.hb_setup settles
    # it once the device is known; the GPU's sums are integers, exact already)
    exact_sums = if (is.null(a$exact_sums)) device != "cuda" else .hb_flag(a$exact_sums, "exact_sums"),
    exact_sums_given = !is.null(a$exact_sums)
  )
  if (!out$dart) {
    set <- intersect(c("drop_rate", "max_drop", "skip_drop", "xgboost_dart_mode", "uniform_drop"),
                     names(a)[!vapply(a, is.null, NA)])
    set <- set[!vapply(set, function(nm) .hb_same_value(out[[nm]], .HB_MORE_DEFAULTS[[nm]]), NA)]
    if (length(set)) {
      .hb_abort(.hb_and(set), if (length(set) > 1L) " are" else " is",
                " used only by DART: give boosting = \"dart\", or leave ", if (length(set) > 1L) "them" else "it",
                " out.")
    }
  }
  out
}

# The names of the options of `m` (.hb_more_args()) that only the CPU
# learner implements, as the user set them.
.hb_more_cpu_only <- function(m) {
  if (isTRUE(m$exact_sums) && isTRUE(m$exact_sums_given)) "exact_sums" else character()
}

# Why the options .hb_more_cpu_only() names stay on the CPU, for the device
# messages (exact_sums is the only one).
.hb_cpu_only_why <- function(cpu_only) {
  paste("its grid is the CPU's; the GPU's full-precision sums are fixed point on a grid of their own,",
        "exact in any order already")
}

# interaction_constraints checked before the binning: NULL or a non-empty
# list of non-empty character vectors (column names) or whole numbers
# (1-based column indices).
.hb_interaction_values <- function(value) {
  if (is.null(value)) return(NULL)
  arg <- "`interaction_constraints`"
  if (!is.list(value) || is.data.frame(value) || !length(value)) {
    .hb_abort(arg, " must be NULL or a list of feature groups, each a vector of column names or (1-based) ",
              "column numbers, e.g. list(c(\"a\", \"b\"), c(\"c\", \"d\")).")
  }
  for (k in seq_along(value)) {
    g <- value[[k]]
    ok <- (is.character(g) && !anyNA(g) && all(nzchar(g))) ||
      (is.numeric(g) && !is.object(g) && all(is.finite(g)) && all(g >= 1) && all(g == round(g)))
    if (!ok || !length(g) || !is.null(dim(g))) {
      numbers <- is.numeric(g) && !is.object(g) && length(g) && is.null(dim(g))
      what <- if (numbers) {
        paste0("but its column number ", format(g[!is.finite(g) | g < 1 | g != round(g)][1L]),
               " is not a whole number >= 1")
      } else paste0("not ", .hb_describe(g))
      .hb_abort(arg, ": group ", k, " must be a non-empty vector of column names or whole column numbers >= 1, ",
                what, ".")
    }
  }
  value
}

# The groups as 0-based column indices of the training data (names:
# feature_names), for the engine: list(begin = , cols = ), and the groups
# by column name, for the model's params (the columns in no group given
# make one more group, as in LightGBM's R package).
.hb_interaction_columns <- function(value, names) {
  if (is.null(value)) return(NULL)
  arg <- "`interaction_constraints`"
  p <- length(names)
  groups <- lapply(seq_along(value), function(k) {
    g <- value[[k]]
    if (is.character(g)) {
      unknown <- setdiff(g, names)
      if (length(unknown)) {
        .hb_abort(arg, ": group ", k, " names ", .hb_and(unknown), ", not ",
                  if (length(unknown) > 1L) "columns" else "a column", " of the data.",
                  .hb_did_you_mean(unknown[1L], names))
      }
      idx <- match(g, names)
    } else {
      if (any(g > p)) {
        .hb_abort(arg, ": group ", k, " has column number ", format(max(g)), " but the data has ", p, " column",
                  if (p != 1L) "s", ".")
      }
      idx <- as.integer(g)
    }
    sort(unique(idx))
  })
  # columns in no group form one more group, as LightGBM's R package does
  rest <- setdiff(seq_len(p), unlist(groups))
  if (length(rest)) groups <- c(groups, list(rest))
  list(begin = as.integer(cumsum(c(0L, lengths(groups)))), cols = as.integer(unlist(groups) - 1L),
       by_name = lapply(groups, function(i) names[i]))
}

# The model's meta entries for these options, only those not at their
# defaults (so that other models' text is unchanged); exact_sums whenever
# it is on, which is the CPU's default since 6f4fc8f: a model says whether
# its sums were on the grid.
.hb_more_meta <- function(m) {
  if (is.null(m)) return(character())
  meta <- character()
  if (isTRUE(m$dart)) {
    meta[["r.boosting"]] <- "dart"
    meta[["r.drop_rate"]] <- .hb_num_text(m$drop_rate)
    meta[["r.max_drop"]] <- as.character(m$max_drop)
    meta[["r.skip_drop"]] <- .hb_num_text(m$skip_drop)
    meta[["r.xgboost_dart_mode"]] <- as.character(m$xgboost_dart_mode)
    meta[["r.uniform_drop"]] <- as.character(m$uniform_drop)
  }
  if (isTRUE(m$extra_trees)) meta[["r.extra_trees"]] <- "TRUE"
  if (!is.null(m$interaction_groups)) {
    meta[["r.interaction_constraints"]] <- paste(vapply(m$interaction_groups, function(g) {
      paste(.hb_csv_quote(g), collapse = ",")
    }, ""), collapse = "\n")
  }
  if (m$feature_fraction_bynode < 1) meta[["r.feature_fraction_bynode"]] <- .hb_num_text(m$feature_fraction_bynode)
  if (m$path_smooth > 0) meta[["r.path_smooth"]] <- .hb_num_text(m$path_smooth)
  if (m$max_delta_step > 0) meta[["r.max_delta_step"]] <- .hb_num_text(m$max_delta_step)
  if (isTRUE(m$exact_sums)) meta[["r.exact_sums"]] <- "TRUE"
  if (isTRUE(m$skip_unsplittable)) meta[["r.skip_unsplittable"]] <- "TRUE"
  if (isFALSE(m$feature_pre_filter)) meta[["r.feature_pre_filter"]] <- "FALSE"
  meta
}

# The params these options add to a model read from its text (meta), and
# whether it was trained with DART.
.hb_more_params <- function(meta) {
  num <- function(key, default) .hb_meta_value(meta, key, as.numeric) %||% default
  groups <- .hb_meta_value(meta, "r.interaction_constraints", function(v) {
    lapply(strsplit(v, "\n", fixed = TRUE)[[1L]], function(line) {
      g <- unlist(utils::read.csv(text = line, header = FALSE, colClasses = "character"), use.names = FALSE)
      if (!length(g) || anyNA(g)) stop("bad")
      g
    })
  })
  list(
    drop_rate = num("r.drop_rate", 0.1),
    max_drop = .hb_meta_value(meta, "r.max_drop", .hb_meta_int) %||% 50L,
    skip_drop = num("r.skip_drop", 0.5),
    xgboost_dart_mode = .hb_meta_value(meta, "r.xgboost_dart_mode", .hb_meta_bool) %||% FALSE,
    uniform_drop = .hb_meta_value(meta, "r.uniform_drop", .hb_meta_bool) %||% FALSE,
    extra_trees = .hb_meta_value(meta, "r.extra_trees", .hb_meta_bool) %||% FALSE,
    interaction_constraints = groups,
    feature_fraction_bynode = num("r.feature_fraction_bynode", 1),
    path_smooth = num("r.path_smooth", 0),
    max_delta_step = num("r.max_delta_step", 0),
    exact_sums = .hb_meta_value(meta, "r.exact_sums", .hb_meta_bool) %||% FALSE,
    skip_unsplittable = .hb_meta_value(meta, "r.skip_unsplittable", .hb_meta_bool) %||% FALSE,
    feature_pre_filter = .hb_meta_value(meta, "r.feature_pre_filter", .hb_meta_bool) %||% TRUE
  )
}
