# dataset.R: every check and conversion of user data lives here.
# data.frame / matrix / dgCMatrix -> the input description the C glue reads
# (src/r_util.c, hb_r_input): data.frame columns are passed one by one (double
# as is, integer and logical as integer, factors as their codes plus levels),
# matrices as a whole, sparse matrices as their p/i/x slots; nothing is
# densified and the user's objects are never modified.

# The column types (.HB_COL_*), input kinds (.HB_INPUT_*, spec$kind) and
# feature types (.HB_FEAT_TYPES) are the engine's codes, from
# src/engine/codes.def (R/params-generated.R).

# An ordered factor's treatment (`ordered_factors`): "ordinal" splits it on
# its level order as a numeric feature of level codes 1..nlevels (the model
# keeps the levels); "categorical" as any factor.
.hb_ordered_choice <- function(value) {
  .hb_choice(value, c("ordinal", "categorical"), "ordered_factors")
}

# "double", "integer", "logical", "factor" or NA (unsupported column).
.hb_column_kind <- function(col) {
  if (is.factor(col)) return("factor")
  if (!is.null(dim(col))) return(NA_character_)
  cls <- oldClass(col)
  if (!is.null(cls) && !identical(cls, "AsIs")) return(NA_character_)
  switch(typeof(col), double = "double", integer = "integer", logical = "logical", NA_character_)
}

# A one-column matrix (such as scale(x) gives) or a one-dimensional array,
# as lm() takes either: its values; any other column as it is.
.hb_flat_column <- function(col) {
  d <- dim(col)
  if (is.null(d) || !is.atomic(col) || !(is.null(oldClass(col)) || identical(oldClass(col), "AsIs"))) return(col)
  if (length(d) == 1L || (length(d) == 2L && d[2L] == 1L)) as.vector(col) else col
}

.hb_describe <- function(col) {
  if (!is.null(dim(col)) && !is.data.frame(col)) return("a matrix column")
  if (is.object(col)) return(paste0("of class ", paste(class(col), collapse = "/")))
  paste0("of type ", typeof(col))
}

.hb_column_hint <- function(col) {
  if (is.character(col)) return("convert it with factor() (categories) or as.numeric() (numbers)")
  if (inherits(col, c("Date", "POSIXt", "difftime"))) return("convert it with as.numeric() first")
  if (is.data.frame(col) || !is.null(dim(col))) return("split it into plain columns")
  if (is.list(col)) return("flatten it into atomic columns or drop it")
  if (is.complex(col)) return("use Re(), Im() or Mod() as numeric columns")
  "convert it to a numeric, integer, logical or factor column"
}

# Strings the model keeps (column names, factor levels, class labels) must
# be text: bytes that are not valid in their encoding (a latin1 file read in
# a UTF-8 session without `fileEncoding`) would be stored escaped, "caf<e9>",
# and never match the data they came from again.
.hb_check_text <- function(s, what) {
  if (!is.character(s) || !length(s)) return(invisible())
  enc <- Encoding(s)  # "latin1" and "UTF-8" strings convert; native ones must be valid in the session's
  bad <- which(!is.na(s) & (enc == "bytes" | (enc == "unknown" & is.na(iconv(s, from = "", to = "UTF-8")))))
  if (!length(bad)) return(invisible())
  shown <- iconv(s[bad[1L]], from = "", to = "ASCII", sub = "byte")
  if (is.na(shown)) shown <- paste(as.character(charToRaw(s[bad[1L]])), collapse = " ")
  .hb_abort(what, " ", if (length(bad) > 1L) paste0(length(bad), " strings") else "a string",
            " that ", if (length(bad) > 1L) "are" else "is", " not valid text in ",
            if (length(bad) > 1L) "their" else "its", " encoding (\"", shown, "\"): bytes of another ",
            "encoding, as when a latin1 file is read without `fileEncoding`. Read the file again with ",
            "fileEncoding = \"latin1\" (or its encoding), or convert the strings, e.g. ",
            "iconv(s, from = \"latin1\", to = \"UTF-8\").")
}

.hb_check_names <- function(nms, arg) {
  empty <- which(is.na(nms) | nms == "")
  if (length(empty)) {
    .hb_abort("`", arg, "` has empty column names (column ", paste(utils::head(empty, 10L), collapse = ", "),
              "); give every column a unique name.")
  }
  dup <- unique(nms[duplicated(nms)])
  if (length(dup)) {
    .hb_abort("`", arg, "` has duplicated column names: ", .hb_and(dup),
              "; make them unique, e.g. with make.unique().")
  }
  .hb_check_text(nms, paste0("`", arg, "` has column names with"))
}

# New data's column names `nms` against the columns `fn` it must hold: each
# of those must be there once (a second one would make it ambiguous); other
# columns are ignored, so their names, duplicated or empty, do not matter.
.hb_check_names_like <- function(nms, fn, arg) {
  dup <- fn[fn %in% nms[duplicated(nms)]]
  if (length(dup)) {
    .hb_abort("`", arg, "` has duplicated column names: ", .hb_and(dup),
              "; make them unique, e.g. with make.unique().")
  }
}

# Any sparse Matrix -> dgCMatrix (column-compressed, general, double), never dense.
.hb_as_dgc <- function(x, arg) {
  if (methods::is(x, "dgCMatrix")) return(x)
  y <- tryCatch({
    y <- methods::as(x, "CsparseMatrix")
    y <- methods::as(y, "generalMatrix")
    methods::as(y, "dMatrix")
  }, error = function(e) NULL)
  if (is.null(y) || !methods::is(y, "dgCMatrix")) {
    .hb_abort("`", arg, "` is a sparse matrix of class ", class(x)[1L],
              " that could not be converted; convert it with as(x, \"dgCMatrix\").")
  }
  y
}

.hb_not_data <- function(x, arg) {
  .hb_abort("`", arg, "` must be a data.frame, a numeric matrix or a dgCMatrix, not ",
            if (is.object(x)) paste0("an object of class ", class(x)[1L]) else if (is.null(x)) "NULL"
            else if (is.function(x)) "a function" else if (is.environment(x)) "an environment"
            else if (is.list(x)) "a list"
            else paste0("a ", typeof(x), if (is.null(dim(x))) " vector" else " array"), ".")
}

# Dense Matrix objects (dgeMatrix ...) are already dense: use the base matrix.
.hb_unwrap_matrix <- function(x) {
  if (inherits(x, "Matrix") && !methods::is(x, "sparseMatrix")) as.matrix(x) else x
}

# Training features: list(spec, nrow, names, types, levels, generated);
# ordered factors as `ordered` says (.hb_ordered_choice()). Columns without
# names are named V1..Vp, and `generated` is then TRUE: new data is matched
# to them by position, whatever its names (.hb_features_like()).
.hb_features <- function(x, arg = "x", ordered = "ordinal") {
  x <- .hb_unwrap_matrix(x)
  if (is.data.frame(x)) {
    n <- nrow(x)
    p <- length(x)
    nms <- names(x)
    # without names, named as a matrix without column names is
    generated <- is.null(nms)
    if (generated) nms <- paste0("V", seq_len(p)) else if (p > 0L) .hb_check_names(nms, arg)
    cols <- vector("list", p)
    types <- integer(p)
    nlev <- integer(p)
    ftypes <- rep("numeric", p)
    flev <- vector("list", p)
    for (j in seq_len(p)) {
      col <- .hb_flat_column(x[[j]])
      kind <- .hb_column_kind(col)
      if (is.na(kind)) {
        .hb_abort("`", arg, "` column `", nms[j], "` is ", .hb_describe(col), "; ",
                  .hb_column_hint(col), ".")
      }
      if (kind == "double") {
        cols[[j]] <- col
        types[j] <- .HB_COL_DOUBLE
      } else if (kind == "integer") {
        cols[[j]] <- col
        types[j] <- .HB_COL_INT
      } else if (kind == "logical") {
        cols[[j]] <- as.integer(col)
        types[j] <- .HB_COL_INT
      } else {
        # An NA level (factor(exclude = NULL)) cannot be stored by label: its rows are missing.
        # (its other levels are kept, used or not, in their order)
        if (anyNA(levels(col))) col <- factor(col, levels = levels(col)[!is.na(levels(col))])
        if (nlevels(col) == 0L) {
          # Nothing to learn from, and the engine needs at least one level.
          .hb_abort("`", arg, "` column `", nms[j], "` is a factor with no levels (all ", n,
                    " values are missing); drop the column, or give it its levels, e.g. ",
                    "factor(values, levels = c(...)).")
        }
        if (is.ordered(col) && ordered == "ordinal") {
          # Split on the level order: the codes as an integer column (NA stays NA).
          cols[[j]] <- as.integer(col)
          types[j] <- .HB_COL_INT
          ftypes[j] <- "ordinal"
        } else {
          cols[[j]] <- col
          types[j] <- .HB_COL_FACTOR
          nlev[j] <- nlevels(col)
          ftypes[j] <- "categorical"
        }
        .hb_check_text(levels(col), paste0("`", arg, "` column `", nms[j], "` has levels with"))
        flev[[j]] <- levels(col)
      }
    }
    spec <- list(kind = .HB_INPUT_FRAME, nrow = n, ncol = p, cols = cols, types = types, nlevels = nlev)
  } else if (is.matrix(x)) {
    if (!(is.numeric(x) || is.logical(x))) {
      .hb_abort("`", arg, "` is a ", typeof(x), " matrix; give a numeric matrix, or a data.frame ",
                "with factor columns for categories.")
    }
    n <- nrow(x)
    p <- ncol(x)
    nms <- colnames(x)
    generated <- is.null(nms)
    if (generated) nms <- paste0("V", seq_len(p)) else .hb_check_names(nms, arg)
    if (is.logical(x)) storage.mode(x) <- "integer" # a local copy, not the user's matrix
    spec <- list(kind = .HB_INPUT_MATRIX, nrow = n, ncol = p, mat = x)
    ftypes <- rep("numeric", p)
    flev <- vector("list", p)
  } else if (methods::is(x, "sparseMatrix")) {
    x <- .hb_as_dgc(x, arg)
    n <- nrow(x)
    p <- ncol(x)
    nms <- colnames(x)
    generated <- is.null(nms)
    if (generated) nms <- paste0("V", seq_len(p)) else .hb_check_names(nms, arg)
    spec <- list(kind = .HB_INPUT_SPARSE, nrow = n, ncol = p, p = x@p, i = x@i, x = x@x, arg = arg)
    ftypes <- rep("numeric", p)
    flev <- vector("list", p)
  } else {
    .hb_not_data(x, arg)
  }
  if (n == 0L) .hb_abort("`", arg, "` has zero rows; there is nothing to learn from.")
  if (p == 0L) .hb_abort("`", arg, "` has no columns; give at least one feature.")
  names(flev) <- nms
  list(spec = spec, nrow = n, names = nms, types = ftypes, levels = flev, generated = generated)
}

# Features of new data (validation, prediction) aligned to a schema
# list(names, types, levels, generated): columns matched by name, or by
# position when a matrix or data.frame has no column names or when the
# schema's names were made up for training data without names (`generated`:
# V1..Vp name no column of the user's); factor levels by label (unseen ->
# missing).
# `source` says where the schema came from, for messages: "model" (predict),
# "reference" (hb_dataset(reference =)) or "training" (validation sets).
.hb_features_like <- function(x, schema, arg = "newdata", allow_empty = TRUE,
                              source = c("model", "reference", "training")) {
  source <- match.arg(source)
  who <- switch(source, model = "the model", reference = "the reference dataset",
                training = "the training data")
  lacks <- switch(source, model = " that the model was trained on.",
                  reference = " that the reference dataset has.", training = " that the training data has.")
  as_in <- switch(source, model = "in training", reference = "in the reference dataset",
                  training = "in the training data")
  x <- .hb_unwrap_matrix(x)
  fn <- schema$names
  p <- length(fn)
  is_cat <- schema$types == "categorical"
  is_ord <- schema$types == "ordinal"
  by_position <- isTRUE(schema$generated)
  # the column count when matching by position
  count_check <- function(k, named) {
    if (k == p) return(invisible())
    if (named) {
      .hb_abort("`", arg, "` has ", k, " columns but ", who, " has ", p, ", matched by position: ", who,
                " was trained on data without column names (named `V1`, `V2`, ... for it), so `", arg,
                "` must have its columns in that order, whatever their names.")
    }
    .hb_abort("`", arg, "` has ", k, " columns and no column names; ", who, " has ", p,
              " columns: give them in its order, or name them.")
  }
  if (is.data.frame(x)) {
    n <- nrow(x)
    nms <- names(x)
    if (is.null(nms) || by_position) {
      # without names, by position (as a matrix without column names)
      count_check(length(x), !is.null(nms))
      pick <- seq_len(p)
    } else {
      .hb_check_names_like(nms, fn, arg)
      miss <- setdiff(fn, nms)
      if (length(miss)) {
        .hb_abort("`", arg, "` lacks ", if (length(miss) > 1L) "columns " else "column ", .hb_and(miss),
                  lacks)
      }
      pick <- match(fn, nms)
    }
    cols <- vector("list", p)
    types <- integer(p)
    nlev <- integer(p)
    unseen <- list()  # column -> its labels not seen in training (values, not NA), for one warning
    for (j in seq_len(p)) {
      col <- .hb_flat_column(x[[pick[j]]])
      if (is_cat[j] || is_ord[j]) {
        # (a factor's labels are read only when it has a level training lacked)
        lab <- if (is.factor(col)) {
          if (!all(levels(col) %in% schema$levels[[j]])) levels(col)[col]
        } else if (is.character(col)) col
        new <- unique(lab[!is.na(lab) & !lab %in% schema$levels[[j]]])
        if (length(new)) unseen[[fn[j]]] <- list(labels = new, n = sum(lab %in% new))
      }
      if (is_cat[j]) {
        if (is.character(col) && is.null(oldClass(col)) && is.null(dim(col))) {
          # strings where training had a factor: read as its levels (codes
          # 1..k), an unseen string as an unseen level, i.e. missing
          col <- match(col, schema$levels[[j]])
          storage.mode(col) <- "integer"
          col <- structure(col, levels = schema$levels[[j]], class = "factor")
        }
        if (!is.factor(col)) {
          .hb_abort("`", arg, "` column `", fn[j], "` must be a factor, as ", as_in, ", but it is ",
                    .hb_describe(col), ".")
        }
        lv <- schema$levels[[j]]
        # Levels are matched by label; an unseen level is missing, and so is
        # every value of a factor without levels (all NA).
        if (!identical(levels(col), lv)) col <- match(levels(col), lv)[as.integer(col)]
        cols[[j]] <- col
        types[j] <- .HB_COL_FACTOR
        nlev[j] <- length(lv)
      } else if (is_ord[j]) {
        # An ordered factor split on its level order: values matched to the
        # training levels by label, coded 1..nlevels; unseen labels and NA
        # are missing (they take the split's learned missing direction).
        if (!(is.factor(col) || is.character(col))) {
          .hb_abort("`", arg, "` column `", fn[j], "` must be an ordered factor (or its labels as ",
                    "characters), as ", as_in, ", but it is ", .hb_describe(col), ".")
        }
        lv <- schema$levels[[j]]
        cols[[j]] <- if (is.factor(col)) match(levels(col), lv)[as.integer(col)] else match(col, lv)
        types[j] <- .HB_COL_INT
      } else {
        kind <- .hb_column_kind(col)
        if (identical(kind, "factor")) {
          .hb_abort("`", arg, "` column `", fn[j], "` is a factor but was numeric ", as_in, "; ",
                    "convert it with as.numeric(as.character()) if it holds numbers.")
        }
        if (is.na(kind)) {
          .hb_abort("`", arg, "` column `", fn[j], "` is ", .hb_describe(col), "; ",
                    .hb_column_hint(col), ".")
        }
        cols[[j]] <- if (kind == "logical") as.integer(col) else col
        types[j] <- if (kind == "double") .HB_COL_DOUBLE else .HB_COL_INT
      }
    }
    spec <- list(kind = .HB_INPUT_FRAME, nrow = n, ncol = p, cols = cols, types = types, nlevels = nlev)
    if (length(unseen)) .hb_warn_unseen(unseen, arg, as_in)
  } else if (is.matrix(x) || methods::is(x, "sparseMatrix")) {
    sparse <- !is.matrix(x)
    if (any(is_cat | is_ord)) {
      .hb_abort("`", arg, "` is a matrix but ", who, " has factor features (", .hb_and(fn[is_cat | is_ord]),
                "); give a data.frame with those columns as factors.")
    }
    if (!sparse && !(is.numeric(x) || is.logical(x))) {
      .hb_abort("`", arg, "` is a ", typeof(x), " matrix; give a numeric matrix.")
    }
    if (sparse) x <- .hb_as_dgc(x, arg)
    nms <- colnames(x)
    if (is.null(nms) || by_position) {
      count_check(ncol(x), !is.null(nms))
    } else {
      .hb_check_names_like(nms, fn, arg)
      idx <- match(fn, nms)
      if (anyNA(idx)) {
        miss <- fn[is.na(idx)]
        .hb_abort("`", arg, "` lacks ", if (length(miss) > 1L) "columns " else "column ", .hb_and(miss),
                  lacks)
      }
      if (ncol(x) != p || !identical(idx, seq_len(p))) x <- x[, idx, drop = FALSE]
    }
    n <- nrow(x)
    if (sparse) {
      spec <- list(kind = .HB_INPUT_SPARSE, nrow = n, ncol = p, p = x@p, i = x@i, x = x@x, arg = arg)
    } else {
      if (is.logical(x)) storage.mode(x) <- "integer"
      spec <- list(kind = .HB_INPUT_MATRIX, nrow = n, ncol = p, mat = x)
    }
  } else {
    .hb_not_data(x, arg)
  }
  if (!allow_empty && n == 0L) .hb_abort("`", arg, "` has zero rows.")
  list(spec = spec, nrow = n)
}

# A warning (class histboost_warning_unseen_levels) that factor values with
# labels not seen in training are read as missing: a typo, another case or
# a recoding would otherwise lose the column's information without a sign
# (lm() refuses such levels; lightgbm maps them silently). `unseen`: column
# -> list(labels, n).
.hb_warn_unseen <- function(unseen, arg, as_in) {
  what <- vapply(names(unseen), function(nm) {
    u <- unseen[[nm]]
    labs <- paste0(paste0("\"", utils::head(u$labels, 3L), "\"", collapse = ", "),
                   if (length(u$labels) > 3L) {
                     k <- length(u$labels) - 3L
                     sprintf(" and %d more label%s", k, if (k == 1L) "" else "s")
                   } else "")
    sprintf("`%s` (%d %s: %s)", nm, u$n, if (u$n == 1L) "value" else "values", labs)
  }, "")
  msg <- paste0("`", arg, "` has factor labels not seen ", as_in, ", read as missing values (the splits' ",
                "direction for missing values): ", paste(what, collapse = "; "), ".")
  warning(structure(class = c("histboost_warning_unseen_levels", "histboost_warning", "warning", "condition"),
                    list(message = msg, call = NULL)))
}

# "`y` contains 3 missing or non-finite values (first at position 7); ..."
.hb_check_finite <- function(v, arg, what = "missing or non-finite values") {
  # one pass in C over double, integer and logical vectors (no vector of
  # every row's test): c(bad values, first bad position, all 0/1 with both)
  s <- if (typeof(v) %in% c("double", "integer", "logical")) .Call(C_hb_scan_values, v) else {
    bad <- which(!is.finite(v))
    c(length(bad), if (length(bad)) bad[1L] else 0, NA)
  }
  if (s[1L] > 0) {
    .hb_abort("`", arg, "` contains ", format(s[1L], scientific = FALSE), " ", what, " (first at position ",
              format(s[2L], scientific = FALSE), "); remove those rows or impute them.")
  }
  invisible(s)
}

# A vector as lm() takes it: I()'s class AsIs and a 1-d array's dim dropped.
.hb_unwrap_vector <- function(y) {
  if (inherits(y, "AsIs")) {
    cls <- setdiff(oldClass(y), "AsIs")
    oldClass(y) <- if (length(cls)) cls
  }
  if (length(dim(y)) == 1L) dim(y) <- NULL  # its dimnames go with it
  y
}

.hb_vector_arg <- function(y, n, arg, nrow_arg = "x") {
  y <- .hb_unwrap_vector(y)
  if (is.data.frame(y)) {
    .hb_abort("`", arg, "` is a data.frame; give a vector, e.g. df$column or df[[\"column\"]].")
  }
  if (!is.null(dim(y))) {
    if (length(dim(y)) == 2L && ncol(y) == 1L) {
      y <- if (is.factor(y)) y else y[, 1L]
    } else {
      .hb_abort("`", arg, "` must be a vector, not an array with dimensions ",
                paste(dim(y), collapse = " x "), ".")
    }
  }
  if (length(y) != n) {
    .hb_abort("`", arg, "` has ", length(y), " values but `", nrow_arg, "` has ", n, " rows.")
  }
  y
}

# Labels as a vector (.hb_vector_arg()), a factor's NA level (addNA(),
# factor(exclude = NULL)) made missing: a row labelled NA has no label,
# whatever the factor calls it, so it is refused as a plain NA is (and the
# level is no class).
.hb_label_vector <- function(y, n, arg) {
  y <- .hb_vector_arg(y, n, arg)
  if (is.factor(y) && anyNA(levels(y))) y <- factor(y, levels = levels(y), exclude = NA)
  y
}

# Training labels: list(label (double; classes as 0..K-1), task_hint, classes,
# binary_ok). Levels of a factor with no rows are dropped with a warning.
.hb_label <- function(y, n, arg = "y") {
  if (is.null(y)) return(NULL)
  if (inherits(y, "Surv")) return(.hb_surv_label(y, n, arg))
  y <- .hb_label_vector(y, n, arg)
  if (is.character(y)) {
    .hb_abort("`", arg, "` is a character vector; use factor(", arg, ") for classification or ",
              "as.numeric(", arg, ") for regression.")
  }
  if (is.factor(y)) {
    .hb_check_text(levels(y), paste0("`", arg, "` has levels with"))
    codes <- y  # a factor is its integer codes: the checks below read them without a copy
    .hb_check_finite(codes, arg, "missing values")
    return(.hb_factor_label(y, codes, tabulate(codes, nlevels(y)), arg))
  }
  if (is.logical(y) && !is.object(y)) {
    if (.hb_check_finite(y, arg, "missing values")[3L] == 0) {  # not both TRUE and FALSE
      .hb_abort("`", arg, "` has only one class (", y[1L], "); classification needs at least two.")
    }
    return(list(label = as.double(y), task_hint = "binary", classes = c("FALSE", "TRUE"),
                binary_ok = TRUE))
  }
  if (is.numeric(y) && !is.object(y)) {
    s <- .hb_check_finite(y, arg)
    return(list(label = as.double(y), task_hint = "regression", classes = NULL, binary_ok = s[3L] == 1))
  }
  .hb_abort("`", arg, "` must be a numeric vector (regression), a factor or a logical vector ",
            "(classification), not ", .hb_describe(y), ".")
}

# The labels of factor y (level codes `codes`) given the rows of each level,
# `counts`: this data's, or summed over the processes of a distributed data
# set (.hb_label_dist), which then says so in messages (`where`) and warns on
# one process only (`warn`). Levels without rows are dropped from the classes.
.hb_factor_label <- function(y, codes, counts, arg, where = "", warn = TRUE) {
  present <- levels(y)[counts > 0L]
  dropped <- levels(y)[counts == 0L]
  if (length(present) < 2L) {
    .hb_abort("`", arg, "` has only one class (\"", present, "\")", where, "; classification needs at least two.")
  }
  if (length(dropped) && warn) {
    .hb_warn("`", arg, "` has levels with no rows, dropped from the classes: ", .hb_and(dropped), ".")
  }
  label <- .Call(C_hb_map_codes, codes, as.double(cumsum(counts > 0L) - 1L))  # 0 .. classes - 1
  list(label = label, task_hint = if (length(present) == 2L) "binary" else "multiclass",
       classes = present, binary_ok = length(present) == 2L,
       # for predict(type = "class"): the factor's levels (unused ones too) and whether it is ordered
       class_levels = if (length(dropped)) levels(y), class_ordered = is.ordered(y))
}

# What a dataset keeps of its labels (.hb_label()'s result): the task they
# suggest, the classes, and the factor's own levels and order for
# predict(type = "class") (NULL and FALSE when they add nothing).
.hb_label_info <- function(lab) {
  if (is.null(lab)) return(NULL)
  list(task_hint = lab$task_hint, classes = lab$classes, binary_ok = lab$binary_ok,
       class_levels = lab$class_levels, class_ordered = isTRUE(lab$class_ordered))
}

# A right-censored survival::Surv response as labels in xgboost's coding
# for survival:cox: the time for an event, minus the time when censored.
.hb_surv_label <- function(y, n, arg = "y") {
  type <- attr(y, "type")
  if (!identical(type, "right") || !is.matrix(y) || ncol(y) != 2L) {
    .hb_abort("`", arg, "` is a survival response of type \"", if (is.null(type)) "unknown" else type,
              "\"; the cox objective needs right-censored times, Surv(time, status).")
  }
  if (nrow(y) != n) .hb_abort("`", arg, "` has ", nrow(y), " survival times but `x` has ", n, " rows.")
  time <- as.double(unclass(y)[, 1L])
  status <- as.double(unclass(y)[, 2L])
  .hb_check_finite(time, arg, "missing or non-finite survival times")
  .hb_check_finite(status, arg, "missing event indicators")
  bad <- which(!(time > 0))
  if (length(bad)) {
    .hb_abort("`", arg, "` needs survival times > 0, but time ", bad[1L], " is ", format(time[bad[1L]]), ".")
  }
  if (!any(status == 1)) .hb_abort("`", arg, "` has no events (every time is censored): the cox model needs some.")
  list(label = ifelse(status == 1, time, -time), task_hint = "survival", classes = NULL, binary_ok = FALSE)
}

# Labels of validation data, coded like the training labels (`info`).
.hb_label_like <- function(y, n, info, arg) {
  if (identical(info$task_hint, "survival") || inherits(y, "Surv")) {
    if (!identical(info$task_hint, "survival")) {
      .hb_abort("`", arg, "` is a survival response (Surv) but the training labels are not.")
    }
    if (!inherits(y, "Surv")) {
      .hb_abort("`", arg, "` must be a survival response, survival::Surv(time, status), like the training labels.")
    }
    return(list(label = .hb_surv_label(y, n, arg)$label))
  }
  y <- .hb_vector_arg(y, n, arg)
  if (!is.null(info$classes) && info$task_hint != "regression") {
    if (!(is.factor(y) || is.logical(y) || is.character(y))) {
      .hb_abort("`", arg, "` must be a factor (or logical) with the training classes ",
                .hb_and(info$classes), ".")
    }
    lab <- as.character(y)
    .hb_check_finite(ifelse(is.na(lab), NA, 0), arg, "missing values")
    code <- match(lab, info$classes)
    if (anyNA(code)) {
      .hb_abort("`", arg, "` has classes not seen in training: ", .hb_and(unique(lab[is.na(code)])), ".")
    }
    return(list(label = as.double(code - 1L)))
  }
  if (!is.numeric(y) || is.object(y)) {
    .hb_abort("`", arg, "` must be numeric, like the training labels, not ", .hb_describe(y), ".")
  }
  .hb_check_finite(y, arg)
  list(label = as.double(y))
}

.hb_weights <- function(w, n, arg = "weights") {
  if (is.null(w)) return(NULL)
  w <- .hb_unwrap_vector(w)
  if (!is.numeric(w) || is.object(w)) {
    .hb_abort("`", arg, "` must be a numeric vector, not ", .hb_describe(w), ".")
  }
  w <- .hb_vector_arg(w, n, arg)
  bad <- which(!is.finite(w))
  if (length(bad)) {
    .hb_abort("`", arg, "` contains ", length(bad), " missing or non-finite values (first at position ",
              bad[1L], "); weights must be finite numbers >= 0.")
  }
  neg <- which(w < 0)
  if (length(neg)) {
    .hb_abort("`", arg, "` contains ", length(neg), " negative values (first at position ", neg[1L],
              "); weights must be >= 0.")
  }
  if (!any(w > 0)) .hb_abort("`", arg, "` are all zero; at least one row needs a positive weight.")
  as.double(w)
}

# Per-row starting raw scores (an offset): NULL, a numeric vector of n values
# or a numeric matrix of n rows (one column per class of a multiclass model),
# finite; returned as a double vector or matrix without names.
.hb_init_score <- function(s, n, arg = "init_score", nrow_arg = "x") {
  if (is.null(s)) return(NULL)
  if (is.data.frame(s)) s <- as.matrix(s)
  if (!is.numeric(s) || (is.object(s) && !is.matrix(s))) {
    .hb_abort("`", arg, "` must be a numeric vector (one value per row) or a numeric matrix (one row per ",
              "row, one column per class), not ", .hb_describe(s), ".")
  }
  if (is.matrix(s)) {
    if (nrow(s) != n) .hb_abort("`", arg, "` has ", nrow(s), " rows but `", nrow_arg, "` has ", n, " rows.")
    if (ncol(s) < 1L) .hb_abort("`", arg, "` has no columns.")
    if (ncol(s) == 1L) s <- s[, 1L]
  } else {
    s <- .hb_vector_arg(s, n, arg, nrow_arg)
  }
  bad <- which(!is.finite(s))
  if (length(bad)) {
    .hb_abort("`", arg, "` contains ", length(bad), " missing or non-finite values (first at position ",
              bad[1L], "); starting scores must be finite numbers.")
  }
  out <- as.double(s)
  if (is.matrix(s)) dim(out) <- dim(s)
  out
}

# The number of starting-score columns of an init_score (NULL: 0).
.hb_init_score_ncol <- function(s) if (is.null(s)) 0L else if (is.matrix(s)) ncol(s) else 1L

.hb_state <- new.env(parent = emptyenv())
.hb_state$counter <- 0L

# An identifier for a dataset, unique across sessions without touching R's RNG.
.hb_new_id <- function() {
  .hb_state$counter <- .hb_state$counter + 1L
  paste(Sys.getpid(), format(as.numeric(Sys.time()), nsmall = 6), .hb_state$counter, sep = "-")
}

.hb_check_dataset <- function(d, arg) {
  if (!inherits(d, "hb_dataset")) .hb_abort("`", arg, "` must be an hb_dataset made by hb_dataset().")
  if (!isTRUE(.Call(C_hb_ptr_valid, d$ptr))) {
    .hb_abort("`", arg, "` is an hb_dataset whose binned data no longer exists (it was saved and ",
              "reloaded, or histboost was unloaded since); re-create it with hb_dataset().")
  }
  invisible(d)
}

#' Bin data once for training
#'
#' `hb_dataset()` checks and bins a data.frame, matrix or sparse matrix once,
#' so several models (or a model and its validation sets) can share one binning.
#' A validation set must be binned with the training set's bin boundaries:
#' pass the training dataset as `reference`; its columns are then matched by
#' name (by position when the training data had no column names) and factor
#' levels by label.
#'
#' @param x A data.frame (numeric, integer, logical or factor columns), a
#'   numeric or logical matrix, or a sparse `Matrix::dgCMatrix`. Missing values
#'   (`NA`, `NaN`) are allowed in features. Columns without names are named
#'   `V1`, `V2`, ...
#' @param y Labels: numeric (regression), a factor or logical vector
#'   (classification); `NULL` for a dataset without labels.
#' @param weights `NULL` or non-negative row weights.
#' @param max_bin Most bins per numeric feature, 2 to 255 (missing values
#'   take one of them when there are any). Bins are placed as LightGBM
#'   places them, from a sample of about `bin_sample_rows` rows, so that the same rows
#'   share a bin in both: negative values, 0 (with anything within 1e-35 of
#'   it) and positive values apart, 0 alone; on each side, values few enough
#'   for the side's share of bins are merged in increasing order until a bin
#'   holds `min_data_in_bin` sampled rows (a side's last bin
#'   may hold fewer), so that small data are not split between single rows;
#'   more values get bins of about equal rows, a value as frequent as an
#'   average bin alone. (LightGBM's empty zero bin, when no value is 0, is
#'   left out.) A factor's levels
#'   get bins as LightGBM gives them: most rows first; past the first two, a
#'   level of fewer than `min_data_in_bin` rows and every rarer
#'   one share the missing bin with `NA`, as does the rarest level once the
#'   others hold 99% of the non-missing rows (so a small table's rare levels
#'   do not make a 3-level factor a many-vs-many one). A factor with more
#'   levels than `max_bin` keeps them, while they are needed to hold 99% of
#'   its rows (up to 64 x `max_bin`): its levels are binned `max_bin` at a time
#'   into several internal features, and a split on any of them is a split on
#'   a set of the factor's levels. Ignored with a
#'   `reference` (its bins are used).
#' @param max_bin_by_feature `NULL` (every column binned by `max_bin`), or
#'   columns' own `max_bin` (LightGBM's `max_bin_by_feature`): whole numbers
#'   from 2 to 255, named by column (`c(age = 15, income = 63)`: the other
#'   columns keep `max_bin`), or unnamed with one a column in their order. A
#'   factor's value caps its levels' bins as `max_bin` does. Fewer bins for a
#'   column make its splits coarser and its histograms smaller. Ignored with
#'   a `reference`.
#' @param min_data_in_bin The fewest sampled rows a numeric feature's bin
#'   holds (its side's last bin apart), and a factor's level needs, past its
#'   two most frequent, to keep a bin of its own (counted over all rows);
#'   a whole number >= 1, 3 by default (LightGBM's `min_data_in_bin`, the
#'   name `params` also takes). 1 gives a bin to every value while there are
#'   at most `max_bin`, as exact split search on small data needs; larger
#'   values make fewer, fuller bins. Ordered factors binned as numbers
#'   (`ordered_factors = "ordinal"`) follow the numeric rule. Ignored with a
#'   `reference`.
#' @param bin_sample_rows About how many rows are sampled (each row drawn
#'   with probability `bin_sample_rows` / rows, reproducibly: the same rows
#'   for the same data) to place numeric bin boundaries: a whole number >= 1,
#'   200,000 by default (LightGBM's `bin_construct_sample_cnt`, also taken
#'   by `params`, as is `subsample_for_bin`). Every row is used when there
#'   are no more; more rows give boundaries closer to the full data's
#'   quantiles and cost binning time. Factor levels are always counted over
#'   every row. Ignored with a `reference`.
#' @param init_score `NULL`, or each row's starting raw score (an offset, on
#'   the scale of the raw prediction: log for poisson, gamma and tweedie,
#'   log-odds for binary): a numeric vector, or for a multiclass model a
#'   matrix with one column per class. Boosting starts from it instead of
#'   the labels' average (the model's own starting score is then 0), and the
#'   same offset must be given to [predict.histboost()] for new rows.
#' @param reference `NULL`, or the training `hb_dataset` whose bins this one reuses.
#' @param ordered_factors How ordered factors (`ordered()`) are split:
#'   `"ordinal"` (the default) on their level order, as rpart and ranger do:
#'   thresholds between consecutive levels (binned as a number's values are:
#'   levels of few rows merged in order until a bin holds 3 rows), with missing values (and, in new
#'   data, labels the training levels lack) sent the learned missing
#'   direction; `"categorical"` as unordered factors, by sets of levels.
#'   Unordered factors are always categorical. Not with a `reference` (whose
#'   columns decide).
#' @param group `NULL`, or for ranking (`objective = "lambdarank"`) the query
#'   of each row: a vector of ids (integer, factor or character, no `NA`), one
#'   per row. A query's rows need not be contiguous. With `distributed =
#'   "mpi"`, each process must hold whole queries (a query id on two
#'   processes is an error).
#' @param nthreads Threads for binning, a whole number >= 1 (capped at four per
#'   core, see [hb_threads()]); `NULL` uses [hb_threads()].
#' @param distributed `"no"` (the default), or `"mpi"`: this process holds
#'   one shard of the rows of a data set spread over the processes of an MPI
#'   job (`mpirun -np 4 Rscript script.R`), and every process calls
#'   `hb_dataset()` at once with its own rows (at least one each). The shards
#'   agree on bin boundaries (from the rows the one-process sample takes,
#'   gathered from every shard), factor levels (united by label, in rank
#'   order as [rbind()] unites them) and classes, so the dataset bins as the
#'   concatenation of the shards in rank order would; each feature is stored
#'   sparse or dense as the concatenation's would be. A validation shard
#'   takes the training shard as `reference`. Needs [hb_has_mpi()].
#' @param device Where the rows are binned: `"cpu"` (the default), `"cuda"`
#'   (the GPU: a column's values go up in chunks and come back as bins;
#'   columns of fewer than 8192 values, such as sparse columns with few
#'   entries, are binned on the CPU, where a GPU launch would cost more; an
#'   error when no GPU can be used, see [hb_has_cuda()]) or `"auto"` (the GPU
#'   when one can be used). Bin boundaries and factor levels are placed on
#'   the CPU from the same row sample either way, and the GPU applies the
#'   CPU's rules, so the dataset is the same on both: the same boundaries,
#'   the same bin of every row, the same models. [histboost()] bins `x` on
#'   the GPU when `device` is `"cuda"`, or `"auto"` with a GPU. With
#'   `distributed = "mpi"` each process bins its shard on its own GPU: the
#'   one of its rank among the processes on its machine, modulo the GPUs it
#'   sees (the GPU its training then uses).
#' @param ... Not used; unknown arguments are an error.
#' @return An object of class `"hb_dataset"`: a list with the external pointer
#'   `ptr`, `nrow`, `ncol`, `feature_names`, `feature_names_generated` (`TRUE`
#'   when `x` had no column names: a dataset binned with it as `reference`
#'   then matches columns by position), `feature_types`, `feature_levels`,
#'   `label_info`, `has_label`, `init_score_ncol` (0 without `init_score`),
#'   `max_bin`, `min_data_in_bin`, `bin_sample_rows`, `max_bin_by_feature` (the
#'   columns given their own, named, or `NULL`), `group` (the query codes, or
#'   `NULL`) and identifiers. It cannot be saved:
#'   after `saveRDS()`/`readRDS()` it must be re-created.
#' @examples
#' df <- data.frame(a = c(1.5, 2, NA, 4, 5, 6), g = factor(c("u", "v", "u", "w", "v", "u")))
#' d <- hb_dataset(df, y = c(1, 2, 3, 4, 5, 6), nthreads = 1)
#' d
#' v <- hb_dataset(df[1:3, ], y = c(1, 2, 3), reference = d, nthreads = 1)
#' dim(v)
#' @export
hb_dataset <- function(x, y = NULL, weights = NULL, max_bin = 255L, reference = NULL,
                       nthreads = NULL, init_score = NULL, group = NULL, ordered_factors = "ordinal",
                       distributed = "no", device = "cpu", min_data_in_bin = 3L, bin_sample_rows = 200000L,
                       max_bin_by_feature = NULL, ...) {
  .hb_check_dots(list(...), c("x", "y", "weights", "max_bin", "reference", "nthreads", "init_score", "group",
                              "ordered_factors", "distributed", "device", "min_data_in_bin", "bin_sample_rows",
                              "max_bin_by_feature"),
                 "hb_dataset")
  device <- .hb_device(.hb_choice(device, c("cpu", "cuda", "auto"), "device"))
  distributed <- .hb_distributed(distributed)
  if (inherits(reference, "hb_dataset") && !identical(reference$distributed %||% "no", distributed)) {
    .hb_abort("`distributed` (\"", distributed, "\") must match the reference dataset's (\"",
              reference$distributed %||% "no", "\").")
  }
  if (!is.null(reference) && !missing(ordered_factors)) {
    .hb_abort("`ordered_factors` must not be given with a `reference`: the reference dataset's columns ",
              "decide how each factor is split.")
  }
  binning <- list(max_bin = max_bin, min_data_in_bin = min_data_in_bin, bin_sample_rows = bin_sample_rows,
                  max_bin_by_feature = max_bin_by_feature)
  if (!is.null(reference)) {
    .hb_check_dataset(reference, "reference")
    given <- .HB_BIN_ARGS[c(!missing(max_bin), !missing(min_data_in_bin), !missing(bin_sample_rows),
                            !missing(max_bin_by_feature))]
    .hb_binning_same(binning, given, reference, "reference", function(nm, want, have) {
      paste0("`", nm, "` (", want, ") differs from the reference dataset's (", have, "); a dataset with a ",
             "reference reuses its bins.")
    })
  }
  .hb_dataset_build(x, y, weights, binning, reference, nthreads, init_score = init_score, group = group,
                    ordered = .hb_ordered_choice(ordered_factors), distributed = distributed, device = device)
}

# The binning parameters (hb_dataset()'s and histboost()'s max_bin,
# min_data_in_bin, bin_sample_rows and max_bin_by_feature, a list with those
# names; NULL or a missing element: the default), checked: the same list of
# integers (max_bin_by_feature: NULL, or whole numbers in 2..255, named or
# not, matched to the columns later by .hb_bin_by_col()).
.hb_binning <- function(b) {
  mbf <- b$max_bin_by_feature
  if (!is.null(mbf)) {
    nm <- names(mbf)
    ok <- is.numeric(mbf) && !is.object(mbf) && is.null(dim(mbf)) && length(mbf) >= 1L && !anyNA(mbf) &&
      all(mbf == round(mbf)) && all(mbf >= 2 & mbf <= 255) &&
      (is.null(nm) || (!anyNA(nm) && all(nzchar(nm)) && !anyDuplicated(nm)))
    if (!is.null(nm) && !anyNA(nm) && anyDuplicated(nm)) {
      .hb_abort("`max_bin_by_feature` names ", .hb_and(unique(nm[duplicated(nm)])), " twice; give each column once.")
    }
    if (!ok) {
      .hb_abort("`max_bin_by_feature` must be NULL or whole numbers from 2 to 255: one a column in the columns' ",
                "order, or named by column (c(age = 15, income = 63); the other columns keep `max_bin`).")
    }
    mbf <- stats::setNames(as.integer(mbf), nm)
  }
  list(max_bin = .hb_number(b$max_bin %||% 255L, "max_bin", integer = TRUE, lower = 2, upper = 255),
       min_data_in_bin = .hb_number(b$min_data_in_bin %||% 3L, "min_data_in_bin", integer = TRUE, lower = 1),
       bin_sample_rows = .hb_number(b$bin_sample_rows %||% 200000L, "bin_sample_rows", integer = TRUE, lower = 1),
       max_bin_by_feature = mbf)
}

# max_bin_by_feature (checked by .hb_binning()) against the columns `cols`
# of `arg`: the columns it sets, named, in the columns' order (NULL: none).
# Unnamed, it must have a value a column; named, every name a column.
.hb_bin_by_col <- function(mbf, cols, arg = "x") {
  if (is.null(mbf)) return(NULL)
  if (is.null(names(mbf))) {
    if (length(mbf) != length(cols)) {
      .hb_abort("`max_bin_by_feature` has ", length(mbf), " values but `", arg, "` has ", length(cols),
                " columns: give one a column, or name the columns it sets.")
    }
    return(stats::setNames(mbf, cols))
  }
  bad <- setdiff(names(mbf), cols)
  if (length(bad)) {
    .hb_abort("`max_bin_by_feature` names ", .hb_and(bad), ", not ", if (length(bad) > 1L) "columns" else "a column",
              " of `", arg, "`.", .hb_did_you_mean(bad[1L], cols))
  }
  mbf[order(match(names(mbf), cols))]
}

# The binning parameters a dataset `d` was made with (those of a dataset
# from before they were recorded: the defaults).
.hb_binning_of <- function(d) .hb_binning(d[c("max_bin", "min_data_in_bin", "bin_sample_rows", "max_bin_by_feature")])

# The integers the engine takes: max_bin, min_data_in_bin, bin_sample_rows,
# then with max_bin_by_feature each column's max_bin (0: max_bin's).
.hb_binning_ints <- function(binning, cols) {
  out <- c(binning$max_bin, binning$min_data_in_bin, binning$bin_sample_rows)
  mbf <- binning$max_bin_by_feature
  if (!is.null(mbf)) {
    per <- integer(length(cols))
    per[match(names(mbf), cols)] <- mbf
    out <- c(out, per)
  }
  as.integer(out)
}

# Those of `given` (names of .hb_binning()'s) among `binning` must be the
# dataset d's: a classed error naming the first that differs, as `say`
# (function(name, given value, the dataset's value), the values as R text)
# words it; `arg` names d for a column name max_bin_by_feature lacks.
.hb_binning_same <- function(binning, given, d, arg, say) {
  if (!length(given)) return(invisible(TRUE))
  have <- .hb_binning_of(d)
  want <- .hb_binning(binning)
  want$max_bin_by_feature <- .hb_bin_by_col(want$max_bin_by_feature, d$feature_names, arg)
  text <- function(v) if (is.null(v)) "NULL" else if (length(v) == 1L && is.null(names(v))) format(v) else
    paste0("c(", paste0(names(v), " = ", v, collapse = ", "), ")")
  for (nm in given) {
    if (!identical(want[[nm]], have[[nm]])) .hb_abort(say(nm, text(want[[nm]]), text(have[[nm]])))
  }
  invisible(TRUE)
}

# The work of hb_dataset(), with argument names for messages; `source` names
# the reference in messages (see .hb_features_like); `device` ("cpu" or
# "cuda", resolved) bins the rows there.
.hb_dataset_build <- function(x, y, weights, binning, reference, nthreads,
                              arg = "x", yarg = "y", warg = "weights", source = "reference",
                              init_score = NULL, iarg = "init_score", group = NULL, ordered = "ordinal",
                              distributed = "no", device = "cpu", check_only = FALSE) {
  nthreads <- .hb_nthreads(nthreads)
  if (distributed == "mpi") {
    return(.hb_dataset_build_mpi(x, y, weights, binning, reference, nthreads, arg, yarg, warg, source,
                                 init_score, iarg, group, ordered, device))
  }
  if (!is.null(reference)) {
    .hb_check_dataset(reference, "reference")
    feat <- .hb_features_of_reference(x, reference, arg, source)
    lab <- if (!is.null(y)) .hb_label_like(y, feat$nrow, reference$label_info, yarg)
    label_info <- reference$label_info
    binning <- .hb_binning_of(reference)
  } else {
    binning <- .hb_binning(binning)
    feat <- .hb_features(x, arg, ordered = ordered)
    binning$max_bin_by_feature <- .hb_bin_by_col(binning$max_bin_by_feature, feat$names, arg)
    lab <- .hb_label(y, feat$nrow, yarg)
    label_info <- .hb_label_info(lab)
  }
  w <- .hb_weights(weights, feat$nrow, warg)
  init_score <- .hb_init_score(init_score, feat$nrow, iarg, arg)
  grp <- .hb_group(group, feat$nrow, "group", arg)
  # check_only: the data checked, not binned (an object without its native data set, to read only)
  if (check_only) return(.hb_dataset_object(NULL, feat, lab, label_info, w, init_score, binning, grp, reference))
  ptr <- .Call(C_hb_dataset_create, feat$spec, lab$label, w, .hb_binning_ints(binning, feat$names), nthreads,
               if (!is.null(reference)) reference$ptr, init_score, as.integer(device == "cuda"))
  .hb_dataset_object(ptr, feat, lab, label_info, w, init_score, binning, grp, reference)
}

# The hb_dataset object around a native data set `ptr` (local or, with
# distributed = "mpi", this process's shard).
.hb_dataset_object <- function(ptr, feat, lab, label_info, w, init_score, binning, grp, reference,
                               distributed = NULL) {
  structure(c(list(
    ptr = ptr, nrow = feat$nrow, ncol = length(feat$names), feature_names = feat$names,
    feature_names_generated = isTRUE(feat$generated),
    feature_types = feat$types, feature_levels = feat$levels, label_info = label_info,
    has_label = !is.null(lab), has_weights = !is.null(w), init_score_ncol = .hb_init_score_ncol(init_score),
    max_bin = binning$max_bin, min_data_in_bin = binning$min_data_in_bin, bin_sample_rows = binning$bin_sample_rows,
    max_bin_by_feature = binning$max_bin_by_feature, group = grp),
    if (!is.null(distributed)) list(distributed = distributed), list(
    id = .hb_new_id(), reference_id = if (!is.null(reference)) reference$id
  )), class = "hb_dataset")
}

# .hb_dataset_build for this process's shard of a distributed data set
# (distributed.R): the shards agree on columns, levels and classes, each
# checks its own rows (a failure anywhere fails everywhere), then the engine
# bins them with boundaries agreed over all shards.
.hb_dataset_build_mpi <- function(x, y, weights, binning, reference, nthreads, arg, yarg, warg, source,
                                  init_score, iarg, group, ordered, device = "cpu") {
  if (is.null(reference)) {
    # every shard's boundaries come from one sample: one set of binning parameters
    # (checked on every process at once, so that none waits alone)
    binning <- .hb_dist_try(.hb_binning(binning))
    .hb_dist_same_params(binning, "hb_dataset() (or histboost())")
    al <- .hb_dist_align(x, y, arg, yarg)
    x <- al$x
    y <- al$y
    local <- .hb_dist_try({
      feat <- .hb_features(x, arg, ordered = ordered)
      if (inherits(y, "Surv")) {
        .hb_surv_label(y, feat$nrow, yarg)  # its checks; coded again by .hb_label_dist
      } else if (!is.null(y)) {
        y <- .hb_label_vector(y, feat$nrow, yarg)
        if (is.factor(y) || is.logical(y)) .hb_check_finite(as.integer(y), yarg, "missing values")
        else if (is.numeric(y) && !is.object(y)) .hb_check_finite(y, yarg)
      }
      list(feat = feat, w = .hb_weights(weights, feat$nrow, warg),
           init_score = .hb_init_score(init_score, feat$nrow, iarg, arg),
           mbf = .hb_bin_by_col(binning$max_bin_by_feature, feat$names, arg))
    })
    feat <- local$feat
    binning$max_bin_by_feature <- local$mbf
    lab <- .hb_label_dist(y, feat$nrow, yarg)
    label_info <- .hb_label_info(lab)
    nlev <- .hb_mpi_allgather(feat$levels)
    if (!all(vapply(nlev, identical, NA, feat$levels))) {
      .hb_abort("`", arg, "`: the processes' factor levels differ after uniting them (internal error).", kind = "engine")
    }
  } else {
    .hb_check_dataset(reference, "reference")
    local <- .hb_dist_try({
      feat <- .hb_features_of_reference(x, reference, arg, source)
      lab <- if (!is.null(y)) .hb_label_like(y, feat$nrow, reference$label_info, yarg)
      list(feat = feat, lab = lab, w = .hb_weights(weights, feat$nrow, warg),
           init_score = .hb_init_score(init_score, feat$nrow, iarg, arg))
    })
    feat <- local$feat
    lab <- local$lab
    label_info <- reference$label_info
    binning <- .hb_binning_of(reference)
  }
  w <- local$w
  init_score <- local$init_score
  grp <- .hb_group_dist(group, feat$nrow, "group", arg)
  ptr <- .Call(C_hb_dataset_create_mpi, feat$spec, lab$label, w, .hb_binning_ints(binning, feat$names), nthreads,
               if (!is.null(reference)) reference$ptr, init_score, as.integer(device == "cuda"))
  .hb_dataset_object(ptr, feat, lab, label_info, w, init_score, binning, grp, reference, distributed = "mpi")
}

#' @method print hb_dataset
#' @export
print.hb_dataset <- function(x, ...) {
  ncat <- sum(x$feature_types == "categorical")
  alive <- isTRUE(.Call(C_hb_ptr_valid, x$ptr))
  cat(sprintf("<hb_dataset> %d rows x %d features (%d categorical)%s\n", x$nrow, x$ncol, ncat,
              if (alive) "" else " [binned data gone: re-create it]"))
  if (x$has_label) {
    info <- x$label_info
    cat("  labels: ", if (is.null(info$classes)) "numeric" else
      paste0(length(info$classes), " classes (", paste(utils::head(info$classes, 5L), collapse = ", "),
             if (length(info$classes) > 5L) ", ..." else "", ")"),
      if (x$has_weights) ", weighted" else "", "\n", sep = "")
  }
  nis <- x$init_score_ncol %||% 0L
  if (nis > 0L) cat("  starting scores (init_score): ", nis, " column", if (nis > 1L) "s", "\n", sep = "")
  if (!is.null(x$group)) cat(sprintf("  %d queries (ranking)\n", x$group$nq))
  if (!is.null(x$reference_id)) cat("  binned with a reference dataset\n")
  invisible(x)
}

#' @export
dim.hb_dataset <- function(x) c(x$nrow, x$ncol)

# The CPU's integer histogram of quantized levels gq, hq (one per row) over
# `rows` (increasing, 1-based; NULL: all) and the features where `active`
# (logical, one per feature; NULL: all), for tests.
.hb_qhist <- function(x, gq, hq, bits, rows = NULL, active = NULL, nthreads = 2L) {
  .hb_check_dataset(x, "x")
  .hb_hook_call("C_hb_qhist_check", x$ptr, if (is.null(rows)) NULL else as.integer(rows), as.integer(gq),
                as.integer(hq), as.integer(bits), if (is.null(active)) NULL else as.logical(active),
                as.integer(nthreads))
}

# The dataset's bins (rows x features, 0-based; a feature's last bin is its
# missing bin), for tests that compute histograms in plain R.
.hb_dataset_bins <- function(x) {
  .hb_check_dataset(x, "x")
  .hb_hook_call("C_hb_dataset_bins", x$ptr)
}

# x's features read with a reference dataset's schema (its names, types and
# levels), for binning x with the reference's boundaries.
.hb_features_of_reference <- function(x, reference, arg, source) {
  schema <- list(names = reference$feature_names, types = reference$feature_types,
                 levels = reference$feature_levels, generated = isTRUE(reference$feature_names_generated))
  feat <- .hb_features_like(x, schema, arg, allow_empty = FALSE, source = source)
  feat$names <- schema$names
  feat$types <- schema$types
  feat$levels <- schema$levels
  feat$generated <- schema$generated
  feat
}
