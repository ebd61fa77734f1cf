# formula.R: what a model's formula may hold. A formula model keeps its
# predictors' formula in the model text (meta key r.formula), and predict()
# evaluates it on newdata with model.frame(). A model file is data, so the
# formula it carries must never run code: it may only name columns and apply
# the pure, row-wise functions below. The rule is checked on the formula a
# user trains with (an input error: a model that could not be saved and
# reloaded is refused up front), when a model text is read (hb_load(),
# readRDS(), a format error), and again on the terms just before predict()
# evaluates them; the evaluation itself sees only these functions.

# Pure functions of their arguments, applied row by row: a row's value never
# depends on the other rows of newdata.
.HB_FORMULA_FUNS <- c(
  # the formula itself, parentheses, arithmetic, comparison and logic
  "~", "(", "+", "-", "*", "/", "^", "%%", "%/%",
  "==", "!=", "<", ">", "<=", ">=", "&", "|", "!", "%in%",
  # elementwise mathematics
  "log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "abs", "sign",
  "floor", "ceiling", "trunc", "round", "signif",
  "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
  "pmin", "pmax", "is.na", "ifelse",
  # conversions (a factor's levels are matched by name at prediction)
  "as.numeric", "as.double", "as.integer", "as.character", "as.factor", "factor",
  # binning at fixed breaks, a vector of constants, I() and offset()
  "cut", "c", "I", "offset"
)

# Names that stand for constants, not columns (when no column has the name);
# Inf, NaN, NA, TRUE and FALSE are constants to the parser already.
.HB_FORMULA_CONSTANTS <- "pi"

# NULL when `expr` (a formula, a call or a name) holds only column names,
# constants and the functions above, used row-wise; else why not, naming the
# first call refused.
.hb_formula_problem <- function(expr) {
  tryCatch(.hb_formula_walk(expr), error = function(e) {
    # a pathological tree (nested thousands deep) is refused, not a crash
    "it is too deeply nested to check"
  })
}

# `vector_ok`: `e` is an argument that takes a set of values (cut's breaks
# and labels, factor's levels, the table of %in%); anywhere else a c() of
# several values would be recycled along the rows of newdata, so a row's
# value would depend on its position.
.hb_formula_walk <- function(e, vector_ok = FALSE) {
  if (is.list(e) && !is.object(e)) {
    for (a in e) {
      why <- .hb_formula_walk(a)
      if (!is.null(why)) return(why)
    }
    return(NULL)
  }
  if (inherits(e, "formula")) e <- unclass(e)
  if (is.name(e)) {
    s <- as.character(e)
    if (s == "..." || grepl("^\\.\\.[0-9]+$", s)) return(sprintf("it uses `%s`", s))
    return(NULL)
  }
  if (is.null(e) || (is.atomic(e) && length(e) == 1L && is.null(attributes(e)))) return(NULL)
  if (!is.call(e)) {
    return(sprintf("it holds an object of class %s where a column name, a constant or a call belongs",
                   class(e)[1L]))
  }
  fun <- e[[1L]]
  shown <- .hb_formula_deparse(e)
  if (!is.name(fun)) {
    # base::system(), x$f(), f()(): only plain function names are looked up
    return(sprintf("`%s` calls a function given as `%s`; only the functions listed in ?histboost are allowed",
                   shown, .hb_formula_deparse(fun)))
  }
  f <- as.character(fun)
  if (!f %in% .HB_FORMULA_FUNS) {
    return(sprintf("`%s` calls `%s()`, which is not one of the functions a model formula may use (a model is data and never runs code); compute the column in the data before training, or use the functions listed in ?histboost",
                   shown, f))
  }
  args <- as.list(e)[-1L]
  nms <- names(args) %||% rep("", length(args))
  if (f == "c") {
    ok <- vapply(args, .hb_formula_is_constant, NA)
    if (!all(ok)) {
      return(sprintf("`%s` may only hold constants (numbers, strings, TRUE/FALSE, Inf, pi)", shown))
    }
    if (length(args) > 1L && !vector_ok) {
      return(sprintf("`%s` would be recycled along the rows of `newdata`, so a row's value would depend on its position; several values belong only in cut()'s breaks or labels, factor()'s levels, labels or exclude, and on the right of %%in%%",
                     shown))
    }
    return(NULL)
  }
  if (f == "cut") {
    b <- if ("breaks" %in% nms) args[[match("breaks", nms)]] else {
      pos <- which(nms == "")
      if (length(pos) >= 2L) args[[pos[2L]]]
    }
    if (is.null(b) || !.hb_formula_is_vector_of_breaks(b)) {
      return(sprintf("`%s` computes its breaks from the data, so a row's prediction would depend on which other rows are in `newdata`; give the breaks themselves, e.g. cut(x, breaks = c(-Inf, 0, 1, Inf)), or cut the column before training",
                     shown))
    }
  }
  if (f == "factor" && "labels" %in% nms && !"levels" %in% nms) {
    return(sprintf("`%s` gives `labels` without `levels`, so the labels would follow the levels found in `newdata`; give `levels` too, or make the factor before training",
                   shown))
  }
  # the data argument (the first) is per row; the others of these take sets
  sets <- f %in% c("cut", "factor", "%in%")
  for (k in seq_along(args)) {
    why <- .hb_formula_walk(args[[k]], vector_ok = sets && k > 1L)
    if (!is.null(why)) return(why)
  }
  NULL
}

# Whether a formula's predictors are its variables themselves (y ~ a + b),
# so that a matrix with those columns can stand for newdata (an offset() is
# not a term: predict() then asks for init_score).
.hb_formula_plain <- function(terms) {
  labs <- sub("^`(.*)`$", "\\1", attr(terms, "term.labels"))  # `my col` is the column "my col"
  all(labs %in% all.vars(terms))
}

# The one-sided formula, as text, of a terms object's predictors and
# offsets (no response, no intercept, nothing the formula only removes).
.hb_formula_rhs <- function(tt) {
  offs <- as.list(attr(tt, "variables"))[-1L][attr(tt, "offset")]
  parts <- c(attr(tt, "term.labels"), vapply(offs, .hb_formula_text, ""))
  paste("~", if (length(parts)) paste(parts, collapse = " + ") else "1")
}

.hb_formula_text <- function(e) paste(deparse(e, width.cutoff = 500L), collapse = " ")

# Character columns of a data.frame as factors (their sorted values the
# levels), as lm() and model.matrix() take them; predict() reads such a
# column of newdata by the levels' labels.
.hb_chars_as_factors <- function(x) {
  chr <- vapply(x, is.character, NA)
  if (any(chr)) x[chr] <- lapply(x[chr], factor)
  x
}

# The number conversions that read a factor as its level codes. Those codes
# follow the factor's levels: as.integer(as.factor(s)) of one row of newdata
# is 1 whatever s is, and as.numeric() of a factor column depends on the
# levels newdata's column has. A factor whose levels the formula fixes
# (cut() at its given breaks, factor(x, levels = ...)) has the same codes for
# any newdata and stays allowed.
.HB_FORMULA_NUMBERS <- c("as.numeric", "as.double", "as.integer")

# Each number conversion in the terms' variables: list(call, arg).
.hb_formula_conversions <- function(tt) {
  out <- list()
  walk <- function(e) {
    if (!is.call(e)) return(invisible())
    f <- e[[1L]]
    if (is.name(f) && as.character(f) %in% .HB_FORMULA_NUMBERS && length(e) >= 2L) {
      out[[length(out) + 1L]] <<- list(call = e, arg = e[[2L]])
    }
    # ifelse() puts a factor's level codes where `yes` or `no` is a factor
    if (identical(f, as.name("ifelse"))) {
      m <- tryCatch(match.call(base::ifelse, e), error = function(err) NULL)
      for (a in if (!is.null(m)) list(m$yes, m$no)) {
        if (!is.null(a)) out[[length(out) + 1L]] <<- list(call = e, arg = a)
      }
    }
    for (a in as.list(e)[-1L]) walk(a)
  }
  for (v in as.list(attr(tt, "variables"))[-1L]) walk(v)
  out
}

# Whether `a` makes a factor whose levels it fixes itself.
.hb_formula_fixed_levels <- function(a) {
  if (!is.call(a) || !is.name(a[[1L]])) return(FALSE)
  f <- as.character(a[[1L]])
  if (f == "cut") return(TRUE)  # .hb_formula_walk allows only cut() at given breaks
  if (f != "factor") return(FALSE)
  nms <- names(a) %||% rep("", length(a))
  "levels" %in% nms[-1L] || sum(nms[-1L] == "") >= 2L  # factor(x, levels) by name or position
}

# NULL, or why the predictors' formula `tt` (terms without the response)
# reads a factor as its level codes: a conversion of as.factor() or of
# factor() without levels, or of an argument that is a factor in the
# training `data` (evaluated there: the formula passed .hb_terms_problem, so
# only the allowed functions run).
.hb_formula_codes_problem <- function(tt, data, env) {
  for (cv in .hb_formula_conversions(tt)) {
    a <- cv$arg
    if (.hb_formula_fixed_levels(a)) next
    made <- is.call(a) && is.name(a[[1L]]) && as.character(a[[1L]]) %in% c("as.factor", "factor")
    if (made || is.factor(tryCatch(eval(a, data, env), error = function(err) NULL))) {
      return(.hb_formula_codes_why(.hb_formula_deparse(cv$call), as.character(cv$call[[1L]])))
    }
  }
  NULL
}

# The same at prediction: a conversion of a column that newdata gives as a
# factor (training had numbers there, or the model was refused).
.hb_formula_codes_newdata <- function(tt, newdata, arg = "newdata") {
  for (cv in .hb_formula_conversions(tt)) {
    a <- cv$arg
    if (is.name(a) && is.factor(newdata[[as.character(a)]])) {
      .hb_abort("`", arg, "` column `", as.character(a), "` is a factor, which `", .hb_formula_deparse(cv$call),
                "` in the model's formula would read as its level codes; give ",
                if (identical(cv$call[[1L]], as.name("ifelse"))) "the values the model was trained on (as.character(x) for a factor's labels)."
                else "the numbers the model was trained on (as.numeric(as.character(x)) if the factor holds them as labels).")
    }
  }
  invisible()
}

.hb_formula_codes_why <- function(shown, f) {
  if (f == "ifelse") {
    return(sprintf(paste0("`%s` reads a factor as its level codes (ifelse() returns a factor's codes, not its ",
                          "labels), which follow the levels that `newdata` has; give ifelse() ",
                          "as.character(x) for the factor x (the result then becomes a factor of labels)"), shown))
  }
  sprintf(paste0("`%s` reads a factor as its level codes, which follow the levels that `newdata` has (one row's ",
                 "as.factor() has one level, so its code is 1 whatever its value); use the factor itself (the ",
                 "trees split its levels), a comparison such as x == \"a\", factor(x, levels = ...) or cut() at ",
                 "given breaks, or %s(as.character(x)) for numbers stored as labels"), shown, f)
}

# A constant: a number, string or logical (Inf and NA included), possibly
# negated, or pi.
.hb_formula_is_constant <- function(a) {
  if (is.atomic(a) && length(a) == 1L && is.null(attributes(a))) return(TRUE)
  if (is.name(a)) return(as.character(a) %in% .HB_FORMULA_CONSTANTS)
  if (is.call(a) && identical(a[[1L]], as.name("-")) && length(a) == 2L) {
    return(.hb_formula_is_constant(a[[2L]]))
  }
  FALSE
}

# Breaks given as values: c(...) of at least two constants.
.hb_formula_is_vector_of_breaks <- function(b) {
  is.call(b) && identical(b[[1L]], as.name("c")) && length(b) >= 3L &&
    all(vapply(as.list(b)[-1L], .hb_formula_is_constant, NA))
}

.hb_formula_deparse <- function(e) {
  s <- paste(deparse(e, width.cutoff = 500L, nlines = 5L), collapse = " ")
  if (nchar(s) > 120L) s <- paste0(substr(s, 1L, 117L), "...")
  s
}

# The environment a model's formula is evaluated in: the allowed functions
# (and `list`, which model.frame() wraps the variables in) and nothing else;
# its parent is the empty environment, so no other function can be found.
.hb_formula_env <- local({
  env <- NULL
  function() {
    if (is.null(env)) {
      e <- new.env(parent = emptyenv())
      for (f in c(.HB_FORMULA_FUNS, "list")) {
        assign(f, if (f == "offset") stats::offset else get(f, envir = baseenv()), envir = e)
      }
      for (k in .HB_FORMULA_CONSTANTS) assign(k, get(k, envir = baseenv()), envir = e)
      lockEnvironment(e, bindings = TRUE)
      env <<- e
    }
    env
  }
})

# The reason a terms object cannot be evaluated safely, or NULL: its formula,
# the variables model.frame() evaluates and any predvars.
.hb_terms_problem <- function(tt) {
  if (!inherits(tt, "terms") || !inherits(tt, "formula")) return("it is not a terms object")
  # model.frame() evaluates `list(<variables>)`, or the predvars when present
  for (part in list(attr(tt, "variables"), attr(tt, "predvars"))) {
    if (is.null(part)) next
    if (!is.call(part) || !identical(part[[1L]], as.name("list"))) {
      return("its variables are not a list of columns and calls")
    }
    why <- .hb_formula_problem(as.list(part)[-1L])
    if (!is.null(why)) return(why)
  }
  .hb_formula_problem(stats::formula(tt))
}

# The predictor columns of a model frame, one per term, named as the frame
# names them (a term label keeps backquotes, `my col`, which the frame's
# column "my col" does not have). The frame's columns follow the terms'
# variables, and each term (main effects only) marks its variable in the
# "factors" matrix.
# The names of the columns .hb_formula_columns() gives (such as "log(a)").
.hb_formula_term_names <- function(tt) {
  fac <- attr(tt, "factors")
  rownames(fac)[apply(fac, 2L, function(col) which(col > 0)[1L])]
}

.hb_formula_columns <- function(mf, tt) {
  fac <- attr(tt, "factors")
  vi <- apply(fac, 2L, function(col) which(col > 0)[1L])
  mf[unname(vi)]
}

# `weights` or `subset` of the formula method, taken as lm() takes them: the
# unevaluated argument `expr` is evaluated among the columns of `data`, then
# where the formula was made (`env`), then in the caller's frame (`caller`).
.hb_formula_arg <- function(expr, data, env, caller, name) {
  if (is.null(expr)) return(NULL)
  first <- tryCatch(list(value = eval(expr, data, env)), error = function(e) e)
  if (!inherits(first, "error")) return(first$value)
  second <- tryCatch(list(value = eval(expr, caller)), error = function(e) NULL)
  if (!is.null(second)) return(second$value)
  .hb_abort_from(first, "`", name, "` could not be evaluated among the columns of `data` or where the ",
                 "formula was made: ")
}

# The rows of `data` a formula's `subset` keeps: a logical vector of one
# value a row (NA drops the row, as in lm()) or row numbers.
.hb_subset_rows <- function(subset, n) {
  if (is.logical(subset) && !is.object(subset)) {
    if (length(subset) != n) {
      .hb_abort("`subset` has ", length(subset), " values but `data` has ", n, " rows; give one TRUE or ",
                "FALSE a row, or row numbers.")
    }
    rows <- which(subset)
  } else if (is.numeric(subset) && !is.object(subset)) {
    if (anyNA(subset) || any(subset != round(subset)) || any(subset < 1 | subset > n)) {
      .hb_abort("`subset` must hold row numbers between 1 and ", n, " (the rows of `data`).")
    }
    rows <- as.integer(subset)
  } else {
    .hb_abort("`subset` must be a logical vector (one value a row) or row numbers, not ", .hb_describe(subset), ".")
  }
  if (!length(rows)) .hb_abort("`subset` keeps no rows of `data`.")
  rows
}

# The validation sets of a formula fit, each made what histboost.default()
# takes: a data.frame holding the formula's variables, the response among
# them, becomes list(x = its predictors, y = its response, init_score = its
# offset()), evaluated as predict() evaluates newdata; so does the `x` of
# list(x = <data.frame>, y = , weights = , init_score = , group = ), whose
# response (when `y` is not given) and offset (when `init_score` is not) come
# from it too. hb_datasets and other sets are left as they are. tt: the
# training terms, the response included; env: the formula's environment.
# The formula method's `na.action`: NULL (keep rows with NAs), else a
# function, or the name of one, as lm() takes it.
.hb_na_action <- function(na.action) {
  if (is.null(na.action) || is.function(na.action)) return(na.action)
  if (is.character(na.action) && length(na.action) == 1L && !is.na(na.action)) {
    f <- tryCatch(match.fun(na.action), error = function(e) NULL)
    if (is.function(f)) return(f)
    .hb_abort("`na.action` names no function: \"", na.action, "\". Give na.omit, na.exclude or na.fail ",
              "(or NULL, the default, to keep rows with NAs).")
  }
  .hb_abort("`na.action` must be a function such as na.omit or na.exclude, or its name, but it is ",
            .hb_describe(na.action), ".")
}

# The rows of model frame `mf` (with `weights`, when given) that `na_action`
# keeps: list(rows = their numbers in `mf`, omitted = the action's record of
# the others, as lm() keeps it in its na.action field; NULL when none went).
# `arg` names the data in messages.
.hb_na_rows <- function(na_action, mf, weights, arg) {
  fr <- mf
  if (!is.null(weights)) fr[["(weights)"]] <- weights
  res <- tryCatch(na_action(fr), error = function(e) {
    .hb_abort("`na.action` stopped at `", arg, "`: ", conditionMessage(e),
              if (anyNA(fr)) paste0(" (", sum(!stats::complete.cases(fr)), " of its ", nrow(fr),
                                    " rows hold NAs in the formula's variables)"), ".")
  })
  rows <- if (is.data.frame(res)) match(row.names(res), row.names(fr))
  if (is.null(rows) || anyNA(rows) || anyDuplicated(rows)) {
    .hb_abort("`na.action` must return the data frame it is given, less the rows it drops (as na.omit ",
              "does); it returned ", .hb_describe(res), ".")
  }
  if (!length(rows)) {
    .hb_abort("`na.action` dropped every row of `", arg, "`: each holds an NA in the formula's variables",
              if (!is.null(weights)) " or `weights`", ". Leave `na.action` out to keep rows with missing ",
              "predictors (trees route them), or impute.")
  }
  omitted <- NULL
  if (length(rows) < nrow(fr)) {
    omitted <- attr(res, "na.action")
    if (is.null(omitted)) {
      gone <- setdiff(seq_len(nrow(fr)), rows)
      omitted <- structure(gone, names = row.names(fr)[gone], class = "omit")
    }
  }
  list(rows = rows, omitted = omitted)
}

.hb_formula_valid <- function(valid, tt, env, na_action = NULL) {
  if (!is.list(valid) || is.data.frame(valid) || inherits(valid, "hb_dataset")) return(valid)  # (refused later)
  pt <- stats::delete.response(tt)
  resp <- attr(tt, "variables")[[attr(tt, "response") + 1L]]
  nms <- names(valid) %||% rep("", length(valid))
  for (k in seq_along(valid)) {
    v <- valid[[k]]
    if (inherits(v, "hb_dataset")) next
    whole <- is.data.frame(v)
    if (!whole && !(is.list(v) && is.data.frame(v$x))) next
    # (an x that holds the terms already, as columns named like them, is taken as it is)
    if (!whole && !all(setdiff(all.vars(pt), .HB_FORMULA_CONSTANTS) %in% names(v$x)) &&
        all(.hb_formula_term_names(pt) %in% names(v$x))) next
    arg <- if (nzchar(nms[k])) paste0("valid$", nms[k]) else paste0("valid[[", k, "]]")
    if (!is.null(na_action)) {  # the rows na.action keeps, as for `data`: of x and of the y, weights
      # and init_score given beside it (a frame that cannot be made is left to the errors below)
      own_y <- !whole && !is.null(v$y)
      vf <- tryCatch(stats::model.frame(if (own_y) pt else tt, data = if (whole) v else v$x,
                                        na.action = stats::na.pass, drop.unused.levels = FALSE),
                     error = function(e) NULL)
      if (!is.null(vf)) {
        given <- if (!whole) intersect(c("y", "weights", "init_score"), names(v)[!vapply(v, is.null, NA)])
        for (nm in given) if (NROW(v[[nm]]) == nrow(vf)) vf[[paste0("(", nm, ")")]] <- v[[nm]]
        keep <- .hb_na_rows(na_action, vf, NULL, arg)$rows
        if (length(keep) < nrow(vf)) {
          if (whole) {
            v <- v[keep, , drop = FALSE]
          } else {
            for (nm in intersect(c("x", "y", "weights", "init_score", "group"), names(v))) {
              if (!is.null(v[[nm]])) v[[nm]] <- .hb_rows(v[[nm]], keep)
            }
          }
        }
      }
    }
    df <- if (whole) v else v$x
    set <- if (whole) list() else v
    set$x <- .hb_formula_frame(pt, df, if (whole) arg else paste0(arg, "$x"))
    off <- attr(set$x, "offset")
    attr(set$x, "offset") <- NULL
    if (is.null(set$y)) {
      miss <- setdiff(all.vars(resp), names(df))
      if (length(miss)) {
        .hb_abort("`", arg, if (!whole) "$x", "` lacks ", .hb_and(miss), ", which the formula's response `",
                  .hb_formula_deparse(resp), "` uses: give ", if (whole) "it as a column" else "`y`", ".")
      }
      set$y <- eval(resp, df, env)  # (its variables are df's; env: where the formula's functions are)
    }
    if (!is.null(off) && is.null(set$init_score)) {  # (an init_score given is taken as it is)
      .hb_check_offset(off, "the formula's offset()", if (whole) arg else paste0(arg, "$x"))
      set$init_score <- off
    }
    valid[[k]] <- set
  }
  valid
}
