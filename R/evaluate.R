# evaluate.R: the metrics of a training: built-in ones (computed by the
# engine) and R functions (eval_metric = function(preds, labels)), in the
# order given, on the training data (set 0) or the validation sets (1, 2, ...).

# `eval_metric` as given -> list(builtin = the names of the built-in ones,
# funs = the functions, entries = each metric in order, list(fun = index
# into funs) or list(name = a built-in name)). Names are checked later,
# against the objective (.hb_metric_check).
.hb_metric_split <- function(eval_metric) {
  if (is.null(eval_metric)) return(NULL)
  bad <- function() {
    .hb_abort("`eval_metric` must be NULL, metric names, a function(preds, labels) returning list(name = , ",
              "value = , higher_better = ), or a list of names and such functions.")
  }
  items <- if (is.function(eval_metric)) list(eval_metric) else if (is.character(eval_metric)) {
    as.list(eval_metric)
  } else if (is.list(eval_metric) && !is.object(eval_metric)) {
    eval_metric
  } else {
    bad()
  }
  if (!length(items)) bad()
  funs <- list()
  entries <- vector("list", length(items))
  for (k in seq_along(items)) {
    m <- items[[k]]
    if (is.function(m)) {
      f <- formals(m)
      if (length(f) < 2L && !"..." %in% names(f)) {
        .hb_abort("`eval_metric`, a function, must take two arguments (three to get the weights): ",
                  "function(preds, labels) or function(preds, labels, weights).")
      }
      funs[[length(funs) + 1L]] <- m
      entries[[k]] <- list(fun = length(funs))
    } else if (is.character(m) && length(m) == 1L && !is.na(m)) {
      # LightGBM's and xgboost's names (binary_logloss, merror, ...), as params = list(metric =) takes them
      if (m %in% names(.HB_METRIC_ALIASES)) m <- .HB_METRIC_ALIASES[[m]]
      entries[[k]] <- list(name = m)
    } else {
      bad()
    }
  }
  list(builtin = unlist(lapply(entries, `[[`, "name")), funs = funs, entries = entries)
}

# The metrics of a training, in order, once the built-in names are checked
# and expanded (ndcg -> ndcg@k for each of eval_at): list(builtin (logical),
# name (NA for a function until its first call), code, at, fun, higher).
# The state lives in an environment: a function's name and direction are
# learnt when it first returns.
.hb_metric_state <- function(split, builtin_expanded) {
  st <- new.env(parent = emptyenv())
  rows <- list()
  for (e in split$entries) {
    if (!is.null(e$fun)) {
      rows[[length(rows) + 1L]] <- list(builtin = FALSE, name = NA_character_, code = NA_integer_, at = 0L,
                                        fun = split$funs[[e$fun]], higher = NA)
    } else {
      for (nm in builtin_expanded[[e$name]]) {
        if (any(vapply(rows, function(r) identical(r$name, nm), NA))) next
        p <- .hb_metric_parse(nm)
        rows[[length(rows) + 1L]] <- list(builtin = TRUE, name = nm, code = p$code, at = p$at, fun = NULL,
                                          higher = p$name %in% .HB_HIGHER_BETTER)
      }
    }
  }
  st$rows <- rows
  st$builtin <- vapply(rows, `[[`, NA, "builtin")
  st$names <- vapply(rows, `[[`, "", "name")
  st$higher <- vapply(rows, `[[`, NA, "higher")
  st
}

# Each metric on each data set of `data` (0 train, 1.. valid): a vector,
# the metrics of the first set, then of the next, ...
.hb_eval <- function(tr, data) {
  st <- tr$metrics
  nm <- length(st$rows)
  out <- matrix(NA_real_, nm, length(data))
  bi <- which(st$builtin)
  if (length(bi)) {
    code <- vapply(st$rows[bi], `[[`, 0L, "code")
    at <- vapply(st$rows[bi], `[[`, 0L, "at")
    out[bi, ] <- .Call(C_hb_booster_eval, tr$booster, rep(as.integer(data), each = length(bi)),
                       rep(code, times = length(data)), rep(at, times = length(data)))
  }
  ci <- which(!st$builtin)
  for (j in seq_along(data)) {
    if (!length(ci)) break
    preds <- .hb_response(.Call(C_hb_booster_scores, tr$booster, as.integer(data[j])), tr$objective,
                          tr$classes)
    # distributed: every process's rows in rank order, so that the function
    # sees the concatenated data set on every process and returns one value
    if (identical(tr$distributed, "mpi")) preds <- .hb_mpi_gather_rows(preds)
    lab <- tr$set_labels[[data[j] + 1L]]
    vals <- function() vapply(ci, function(i) .hb_eval_fun(st, i, preds, lab$label, lab$weight), 0)
    if (!identical(tr$distributed, "mpi")) {
      out[ci, j] <- vals()
      next
    }
    # distributed: a function that fails on one process fails them all (not
    # a wait for the one that left), and every process takes process 0's
    # values, so that early stopping decides alike even if the function
    # answers otherwise elsewhere (it may read something of its own
    # process); names and directions must agree, or all stop alike
    got <- .hb_dist_try(list(value = vals(), names = st$names[ci], higher = st$higher[ci]), all = TRUE)
    for (p in seq_along(got)[-1L]) {
      if (!identical(got[[p]][c("names", "higher")], got[[1L]][c("names", "higher")])) {
        .hb_abort("`eval_metric`: a metric function answers with another name or direction on process ", p - 1L,
                  " (", .hb_and(got[[p]]$names), ") than on process 0 (", .hb_and(got[[1L]]$names),
                  "); it must answer alike on every process.")
      }
    }
    out[ci, j] <- got[[1L]]$value
  }
  as.vector(out)
}

# Call metric function i of the state and check what it returns; its name
# and direction are learnt from its first answer and must not change.
.hb_eval_fun <- function(st, i, preds, labels, weights) {
  f <- st$rows[[i]]$fun
  fa <- formals(f)
  with_w <- length(fa) >= 3L || "..." %in% names(fa)
  r <- tryCatch(if (with_w) f(preds, labels, weights) else f(preds, labels), error = function(e) {
    .hb_abort_from(e, "`eval_metric`, the metric function", if (!is.na(st$names[i])) paste0(" \"", st$names[i], "\""),
                   ", failed (called as f(preds, labels", if (with_w) ", weights", ") with ", NROW(preds),
                   " rows): ")
  })
  # which element is wrong, and what it was: "not of type list" does not say
  bad <- function(...) {
    .hb_abort("`eval_metric`: a metric function must return list(name = \"...\", value = <a number>, ",
              "higher_better = TRUE or FALSE)", ...)
  }
  if (!is.list(r)) bad(", not ", .hb_describe(r), ".")
  if (!is.character(r$name) || length(r$name) != 1L || is.na(r$name) || !nzchar(r$name)) {
    bad(", and its `name` must be a single non-empty string; it returned ", .hb_shown(r$name), ".")
  }
  if (!is.numeric(r$value) || length(r$value) != 1L || is.na(r$value)) {
    bad(", and its `value` must be a single non-missing number; \"", r$name, "\" returned ", .hb_shown(r$value), ".")
  }
  if (!is.logical(r$higher_better) || length(r$higher_better) != 1L || is.na(r$higher_better)) {
    bad(", and its `higher_better` must be TRUE or FALSE; \"", r$name, "\" returned ", .hb_shown(r$higher_better), ".")
  }
  if (is.na(st$names[i])) {
    if (!grepl("^[A-Za-z0-9_.@-]+$", r$name)) {
      .hb_abort("`eval_metric`: a metric function's name may hold letters, digits and _ . @ - only, not \"",
                r$name, "\".")
    }
    if (r$name %in% st$names) {
      .hb_abort("`eval_metric`: two metrics are called \"", r$name, "\"; give the function another name.")
    }
    st$names[i] <- r$name
    st$higher[i] <- r$higher_better
  } else if (!identical(st$names[i], r$name) || !identical(st$higher[i], r$higher_better)) {
    .hb_abort("`eval_metric`: the metric function \"", st$names[i], "\" changed its name or direction.")
  }
  as.double(r$value)
}

# An element of what a user's function returned, for messages: NULL, NA,
# the value when it is one, else its type and length.
.hb_shown <- function(v) {
  if (is.null(v)) return("no such element (NULL)")
  if (is.object(v)) return(sprintf("an object of class %s and length %d", class(v)[1L], length(v)))
  if (!is.atomic(v)) return(sprintf("a %s of length %d", typeof(v), length(v)))
  if (length(v) != 1L) return(sprintf("a %s vector of length %d", typeof(v), length(v)))
  if (is.na(v) && !is.nan(v)) return(if (is.logical(v)) "NA" else sprintf("NA (%s)", typeof(v)))
  if (is.character(v)) sprintf("the string \"%s\"", v) else sprintf("%s (%s)", format(v), typeof(v))
}

# The labels (and weights) of the training data and the validation sets,
# for metric functions: list(label, weight) per set, train first. With
# `distributed` = "mpi", those of every process's shard in rank order (as
# .hb_eval() gathers the predictions); a shard without weights weighs 1.
.hb_set_labels <- function(train, valid_sets, distributed = "no") {
  lapply(c(list(train), unname(valid_sets)), function(d) {
    lab <- .Call(C_hb_dataset_labels, d$ptr)
    if (!identical(distributed, "mpi")) return(lab)
    all <- .hb_mpi_allgather(lab)
    has_w <- vapply(all, function(l) !is.null(l$weight), NA)
    list(label = unlist(lapply(all, `[[`, "label"), use.names = FALSE),
         weight = if (any(has_w)) unlist(lapply(all, function(l) l$weight %||% rep(1, length(l$label))),
                                         use.names = FALSE))
  })
}

# The column of the evaluation log that early stopping watches: `spec` NULL
# (the first metric on the last validation set), a metric's name (on the
# last set) or a column name ("valid_auc").
.hb_watch <- function(spec, log_names, metric_names, set_names) {
  nm <- length(metric_names)
  last <- (length(set_names) - 1L) * nm
  if (is.null(spec)) return(last + 1L)
  if (spec %in% log_names) return(match(spec, log_names))
  if (spec %in% metric_names) return(last + match(spec, metric_names))
  # LightGBM's and xgboost's names, as eval_metric takes them ("binary_logloss", "valid_binary_logloss")
  for (a in names(.HB_METRIC_ALIASES)) {
    if (spec == a || endsWith(spec, paste0("_", a))) {
      alt <- paste0(substr(spec, 1L, nchar(spec) - nchar(a)), .HB_METRIC_ALIASES[[a]])
      if (alt %in% log_names) return(match(alt, log_names))
      if (alt %in% metric_names) return(last + match(alt, metric_names))
    }
  }
  .hb_abort("`early_stopping_metric` \"", spec, "\" is neither a metric (", .hb_and(metric_names),
            ") nor a column of the evaluation log (", .hb_and(log_names), ").")
}
