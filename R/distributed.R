# distributed.R: data-parallel training over MPI, SPMD style (as pbdMPI):
# `mpirun -np 4 Rscript train.R`, each process passing its own shard of rows
# to histboost(..., distributed = "mpi") or hb_dataset(..., distributed = "mpi").
# Here the R side: starting MPI, and making the shards agree (column kinds,
# factor levels united by name, classes, the seed) before the engine bins
# and trains them (src/engine/dist.h, src/dist_mpi.c).

#' Is histboost built with MPI?
#'
#' `TRUE` when the package was built against an MPI library (Open MPI or
#' MPICH, found by `configure` through `mpicc` or `pkg-config`), so that
#' `histboost(..., distributed = "mpi")` can train on several processes.
#' Without MPI, install one (Debian/Ubuntu: `apt-get install openmpi-bin
#' libopenmpi-dev`; macOS: `brew install open-mpi`) and reinstall histboost.
#'
#' @return `TRUE` or `FALSE`.
#' @seealso [histboost()] (argument `distributed`), [hb_mpi_run()].
#' @examples
#' hb_has_mpi()
#' @export
hb_has_mpi <- function() isTRUE(.Call(C_hb_has_mpi))

.hb_mpi_state <- new.env(parent = emptyenv())

# "no" or "mpi", checked; "mpi" starts MPI (once) or is a classed error.
.hb_distributed <- function(distributed) {
  distributed <- .hb_choice(distributed, c("no", "mpi"), "distributed")
  if (distributed == "mpi") .hb_mpi_start()
  distributed
}

# Start MPI once per process; it is finalized when R exits.
.hb_mpi_start <- function() {
  if (!hb_has_mpi()) {
    .hb_abort("`distributed` = \"mpi\" needs histboost built with MPI, and it was built without: install ",
              "Open MPI or MPICH (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev; macOS: brew ",
              "install open-mpi), then reinstall histboost (configure finds `mpicc`; HISTBOOST_MPI=no ",
              "skips MPI). hb_has_mpi() says whether it is there.")
  }
  if (is.null(.hb_mpi_state$world)) {
    # the launcher's variables before MPI starts: a singleton start adds its
    # own, which a later hb_mpi_run() must not hand to mpirun
    .hb_mpi_state$env_before <- grep("^(OMPI_|PMIX_|PMI_)", names(Sys.getenv()), value = TRUE)
    if (!any(nzchar(Sys.getenv(c("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"))))) .hb_mpi_probe()
    .hb_mpi_state$world <- .Call(C_hb_mpi_init)
    # MPI_Finalize at exit (mpirun reports a process that ends without it as
    # failed), once all processes exit: one that exits while the others still
    # wait for it (its script failed) ends the job after
    # getOption("histboost.mpi_exit_wait", 300) seconds instead of a hang.
    # A script run by mpirun that fails outside histboost (its own code, on one process) ends the
    # job at once instead of leaving the others waiting for it: MPI_Abort from R's error option,
    # unless the script set one. Interactive sessions keep theirs.
    if (!interactive() && is.null(getOption("error")) && .hb_mpi_state$world[2L] > 1L) {
      options(error = .hb_mpi_exit_on_error)
    }
    reg.finalizer(.hb_mpi_state, function(e) {
      wait <- suppressWarnings(as.numeric(getOption("histboost.mpi_exit_wait", 300)))
      .Call(C_hb_mpi_finalize, if (length(wait) == 1L && !is.na(wait) && wait >= 0) wait else 300)
    }, onexit = TRUE)
    # a script run without mpirun is a job of this process alone: said once, since it trains on its own rows only
    if (.hb_mpi_state$world[2L] == 1L && !nzchar(Sys.getenv("OMPI_COMM_WORLD_SIZE")) &&
        !nzchar(Sys.getenv("PMI_SIZE"))) {
      message("histboost: `distributed` = \"mpi\" in an MPI job of one process (this R was not started by ",
              "mpirun): training uses this process's rows alone.")
    }
  }
  invisible(.hb_mpi_state$world)
}

# MPI started without a launcher (a singleton: an R session, a script run
# without mpirun) is first started in a child R process. MPI_Init that fails
# (an MPI installation that cannot start a singleton, a bad OMPI_MCA_
# setting) ends its process at once, before any error handler exists: here
# that is the child, and the user's session gets a classed error with what
# MPI said, instead of losing R. A child that cannot load histboost (a
# development load) proves nothing either way: MPI is then started as is.
.hb_mpi_probe <- function() {
  lib <- dirname(getNamespaceInfo("histboost", "path"))
  code <- paste0(".libPaths(c(", deparse(lib), ", .libPaths())); ",
                 "if (requireNamespace('histboost', quietly = TRUE)) { cat('histboost-loaded\\n'); ",
                 "invisible(.Call(histboost:::C_hb_mpi_init)); cat('histboost-mpi-ok\\n'); ",
                 "invisible(.Call(histboost:::C_hb_mpi_finalize, 0)) }")
  out <- suppressWarnings(tryCatch(
    system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(code)), stdout = TRUE,
            stderr = TRUE, timeout = 120),
    error = function(e) c("histboost-loaded", conditionMessage(e))))
  if (any(out == "histboost-mpi-ok") || !any(out == "histboost-loaded")) return(invisible())
  said <- trimws(out[nzchar(trimws(out)) & out != "histboost-loaded"])
  said <- utils::tail(said, 8L)
  .hb_throw("engine", paste0(
    "could not start MPI: a test start in a child R process failed", if (!is.null(attr(out, "status")))
      paste0(" (exit status ", attr(out, "status"), ")"), ", and MPI_Init would have ended this R session ",
    "the same way. MPI said:\n", paste0("  ", said, collapse = "\n"), "\n",
    "Check that MPI starts outside R (mpirun -n 1 hostname), and any OMPI_MCA_ settings; or run the ",
    "script under mpirun, or with hb_mpi_run()."))
}

# On an uncaught error of a script under mpirun: wait a few seconds
# (getOption("histboost.mpi_error_wait", 10)) for the other processes to
# exit as well (an error every process raised alike), then end the job
# (MPI_Abort) if they have not: they are waiting for this one.
# R's error option does not end a script by itself: it quits, status 1, as
# Rscript does on an error without one.
.hb_mpi_exit_on_error <- function(quit = TRUE) {
  wait <- suppressWarnings(as.numeric(getOption("histboost.mpi_error_wait", 10)))
  .Call(C_hb_mpi_finalize, if (length(wait) == 1L && !is.na(wait) && wait >= 0) wait else 10)
  if (quit) base::quit(save = "no", status = 1L, runLast = FALSE)
}

.hb_mpi_rank <- function() .hb_mpi_state$world[1L]
.hb_mpi_size <- function() .hb_mpi_state$world[2L]

# Every process's `obj`, in rank order (a list).
.hb_mpi_allgather <- function(obj) {
  raw <- .Call(C_hb_mpi_allgather_raw, serialize(obj, NULL, xdr = FALSE))
  lapply(raw, unserialize)
}

# Run `expr` on every process; an error on any ends every process's call
# with an error (the failing process's own, the others' naming it), so no
# process waits alone in a collective operation. The value: this process's,
# or with `all` = TRUE every process's, in rank order (a list), gathered in
# the same step.
.hb_dist_try <- function(expr, all = FALSE) {
  res <- tryCatch(list(ok = TRUE, value = expr), error = function(e) list(ok = FALSE, error = e))
  msg <- if (res$ok) "" else {  # never empty on failure: an empty message is how success is told
    m <- conditionMessage(res$error)
    if (length(m) == 1L && !is.na(m) && nzchar(m)) m else "an error without a message"
  }
  got <- .hb_mpi_allgather(if (all) list(msg = msg, value = if (res$ok) res$value) else msg)
  st <- if (all) lapply(got, `[[`, "msg") else got
  bad <- which(nzchar(unlist(st)))
  if (length(bad)) {
    if (!res$ok) stop(res$error)
    # (an input error here, classed as a relay: hb_mpi_run() reports the failing process's own)
    cond <- structure(class = c("histboost_error_input", "histboost_error_relay", "histboost_error", "error",
                                "condition"),
                      list(message = paste0("process ", bad[1L] - 1L, " (MPI rank ", bad[1L] - 1L, ") failed: ",
                                            st[[bad[1L]]]), call = NULL))
    stop(cond)
  }
  if (all) lapply(got, `[[`, "value") else res$value
}

# Every process's rows of a vector or matrix `v` (a matrix's rows bound in
# rank order, a vector's values concatenated): the rows of the concatenated
# shards, on every process.
.hb_mpi_gather_rows <- function(v) {
  parts <- .hb_mpi_allgather(v)
  if (is.matrix(v)) do.call(rbind, parts) else unlist(parts, use.names = FALSE)
}

# The shards of one distributed data set made to agree: column names and
# kinds the same on every process, every factor column with the union of
# the shards' levels (in rank order, as rbind() unites them), and y likewise.
# Returns list(x, y) with the local shard recoded; the user's objects are not
# changed (these are copies).
.hb_dist_align <- function(x, y, arg = "x", yarg = "y") {
  x <- .hb_unwrap_matrix(x)
  n <- NROW(x)
  # each column's kind, and for one histboost cannot read its description and what to do (as one process says it)
  col_kinds <- if (is.data.frame(x)) vapply(x, function(col) {
    kind <- .hb_column_kind(.hb_flat_column(col))
    if (is.na(kind)) c(.hb_describe(col), .hb_column_hint(col)) else c(kind, "")
  }, c("", ""))
  desc <- list(n = n, df = is.data.frame(x), names = if (is.data.frame(x)) names(x) else colnames(x),
               ncol = NCOL(x),
               kinds = if (is.data.frame(x)) col_kinds[1L, ], hints = if (is.data.frame(x)) col_kinds[2L, ],
               ordered = if (is.data.frame(x)) vapply(x, is.ordered, NA) else NULL,
               levels = if (is.data.frame(x)) lapply(x, function(col) if (is.factor(col)) levels(col)) else NULL,
               ykind = if (is.null(y)) "none" else if (is.factor(y)) "factor" else if (is.logical(y)) "logical"
                       else if (inherits(y, "Surv")) "survival" else "other",
               ylevels = if (is.factor(y)) levels(y),
               ycounts = if (is.factor(y)) tabulate(as.integer(y), nlevels(y)))
  all <- .hb_mpi_allgather(desc)
  ns <- vapply(all, function(d) as.double(d$n), 0)
  if (any(ns == 0)) {
    r <- which(ns == 0)[1L] - 1L
    .hb_abort("`", arg, "` of process ", r, " (MPI rank ", r, ") has zero rows; give every process at least ",
              "one row of the data.")
  }
  # integer and double columns are numbers alike (rbind() of the shards makes them double): compared as one
  num <- function(k) if (is.null(k)) k else replace(k, k %in% c("integer", "double"), "number")
  for (r in seq_along(all)[-1L]) {
    d <- all[[r]]
    d0 <- all[[1L]]
    why <- if (!identical(d$df, d0$df)) {
      paste0("`", arg, "` is ", if (d$df) "a data.frame" else "a matrix", ", against ",
             if (d0$df) "a data.frame" else "a matrix", " on process 0")
    } else if (!identical(d$ncol, d0$ncol)) {
      paste0("`", arg, "` has ", d$ncol, " columns, against ", d0$ncol, " on process 0")
    } else if (!identical(d$names, d0$names)) {
      k <- which(d$names != d0$names | is.na(d$names) != is.na(d0$names))[1L]
      if (is.na(k)) paste0("`", arg, "`'s column names differ from process 0's") else
        paste0("`", arg, "`'s column ", k, " is `", d$names[k], "`, against `", d0$names[k], "` on process 0")
    } else if (!identical(num(d$kinds), num(d0$kinds))) {
      k <- which(num(d$kinds) != num(d0$kinds))[1L]
      paste0("`", arg, "$", d$names[k], "` is ", d$kinds[k], ", against ", d0$kinds[k], " on process 0",
             if (nzchar(d$hints[k])) paste0(" (", d$hints[k], ")") else if (nzchar(d0$hints[k])) {
               paste0(" (on process 0, ", d0$hints[k], ")")
             })
    } else if (!identical(d$ordered, d0$ordered)) {
      k <- which(d$ordered != d0$ordered)[1L]
      paste0("`", arg, "$", d$names[k], "` is ", if (d$ordered[k]) "an ordered" else "an unordered",
             " factor, against ", if (d0$ordered[k]) "an ordered" else "an unordered", " one on process 0")
    } else if (!identical(d$ykind, d0$ykind)) {
      paste0("`", yarg, "` is ", d$ykind, ", against ", d0$ykind, " on process 0")
    }
    if (!is.null(why)) {
      .hb_abort("`", arg, "` and `", yarg, "` must have the same columns, column types and label type on every ",
                "process, but on process ", r - 1L, " (MPI rank ", r - 1L, ") ", why, ".")
    }
  }
  if (isTRUE(desc$df)) {  # a column of integers where another process has doubles: doubles, as rbind() makes it
    for (j in which(desc$kinds == "integer")) {
      if (any(vapply(all, function(d) identical(d$kinds[[j]], "double"), NA))) x[[j]] <- as.double(x[[j]])
    }
  }
  if (isTRUE(desc$df)) {
    for (j in which(vapply(x, is.factor, NA))) {
      lv <- unique(unlist(lapply(all, function(d) d$levels[[j]]), use.names = FALSE))
      if (!identical(levels(x[[j]]), lv)) {
        x[[j]] <- factor(as.character(x[[j]]), levels = lv, ordered = is.ordered(x[[j]]))
      }
    }
  }
  if (is.factor(y)) {
    lv <- unique(unlist(lapply(all, function(d) d$ylevels), use.names = FALSE))
    if (!identical(levels(y), lv)) y <- factor(as.character(y), levels = lv)
  }
  list(x = x, y = y)
}

`%|na|%` <- function(a, b) if (is.na(a)) b else a

# .hb_label() for a shard: classes (and the binary check of numeric labels)
# from every shard's labels, as .hb_label() decides them on the concatenated
# labels; y's levels are already united (.hb_dist_align).
.hb_label_dist <- function(y, n, arg = "y") {
  if (is.null(y)) return(NULL)
  if (inherits(y, "Surv")) return(.hb_label(y, n, arg))  # row by row: nothing to agree on
  y <- .hb_label_vector(y, n, arg)
  if (is.factor(y)) {
    codes <- as.integer(y)
    .hb_check_finite(codes, arg, "missing values")
    counts <- Reduce(`+`, .hb_mpi_allgather(tabulate(codes, nlevels(y))))
    return(.hb_factor_label(y, codes, counts, arg, where = " over all processes", warn = .hb_mpi_rank() == 0L))
  }
  if (is.logical(y) && !is.object(y)) {
    .hb_check_finite(as.integer(y), arg, "missing values")
    both <- .hb_mpi_allgather(c(any(y), any(!y)))
    if (!any(vapply(both, `[`, NA, 1L)) || !any(vapply(both, `[`, NA, 2L))) {
      .hb_abort("`", arg, "` has only one class (", y[1L], ") over all processes; classification needs at least two.")
    }
    return(list(label = as.double(y), task_hint = "binary", classes = c("FALSE", "TRUE"), binary_ok = TRUE))
  }
  lab <- .hb_label(y, n, arg)
  ok <- .hb_mpi_allgather(c(all(lab$label == 0 | lab$label == 1), any(lab$label == 0), any(lab$label == 1)))
  ok <- do.call(rbind, ok)
  lab$binary_ok <- all(ok[, 1L]) && any(ok[, 2L]) && any(ok[, 3L])
  lab
}

# .hb_group() for a shard: the query of each row coded over every process's
# queries, as .hb_group() codes the concatenated ids (sorted ids; a factor's
# levels united in rank order, those without rows dropped), so the engine
# indexes, ranks and averages queries as one process does. Every query must
# lie whole on one process (LambdaRank's pairs and NDCG are per query):
# an id found on two processes is an error naming `group`.
.hb_group_dist <- function(group, n, arg = "group", nrow_arg = "x") {
  given <- unlist(.hb_mpi_allgather(!is.null(group)))
  if (!all(given) && any(given)) {
    .hb_abort("`", arg, "` is given on processes ", paste(which(given) - 1L, collapse = ", "), " but not on ",
              paste(which(!given) - 1L, collapse = ", "), "; give it on all or none.")
  }
  if (is.null(group)) return(NULL)
  local <- .hb_dist_try({
    .hb_group(group, n, arg, nrow_arg)  # the checks of one process
    g <- if (is.null(dim(group))) group else group[, 1L]
    list(kind = if (is.factor(g)) "factor" else class(g)[1L], vals = if (is.factor(g)) levels(g) else unique(g),
         present = if (is.factor(g)) levels(droplevels(g)))
  })
  all <- .hb_mpi_allgather(local[c("kind", "vals", "present")])
  kinds <- vapply(all, `[[`, "", "kind")
  if (length(unique(kinds)) > 1L) {
    .hb_abort("`", arg, "` must be of one type on every process, but it is ", .hb_and(unique(kinds)),
              " on different processes.")
  }
  g <- if (is.null(dim(group))) group else group[, 1L]
  if (is.factor(g)) {
    lv <- unique(unlist(lapply(all, `[[`, "vals"), use.names = FALSE))
    lv <- lv[lv %in% unlist(lapply(all, `[[`, "present"), use.names = FALSE)]
  } else {
    lv <- levels(factor(do.call(c, lapply(all, `[[`, "vals"))))
  }
  ids <- as.character(g)
  # each query's process: an id on two processes splits a query
  owners <- lapply(all, function(a) unique(as.character(if (is.null(a$present)) a$vals else a$present)))
  own <- unlist(owners, use.names = FALSE)
  split_ids <- unique(own[duplicated(own)])
  if (length(split_ids)) {
    on <- which(vapply(owners, function(o) split_ids[1L] %in% o, NA)) - 1L
    .hb_abort("`", arg, "`: query \"", split_ids[1L], "\" has rows on processes ", paste(on, collapse = " and "),
              if (length(split_ids) > 1L) paste0(" (and ", length(split_ids) - 1L, " more queries are split)"),
              "; with `distributed` = \"mpi\" every process must hold whole queries (all the rows of each of its ",
              "queries): shard the rows by query.")
  }
  list(codes = match(ids, lv) - 1L, nq = length(lv), ids = lv)
}

# The value of rank 0 on every process (the seed when none is given).
.hb_mpi_bcast <- function(obj) .hb_mpi_allgather(obj)[[1L]]

# Every process must train with the same arguments: `p`, a named list, compared
# element by element; the first that differs is named.
.hb_dist_same_params <- function(p, fun = "histboost()") {
  all <- .hb_mpi_allgather(lapply(p, function(v) serialize(v, NULL, xdr = FALSE)))
  for (r in seq_along(all)[-1L]) {
    k <- which(!mapply(identical, all[[r]], all[[1L]]))
    if (length(k)) {
      nm <- names(p)[k[1L]]
      if (!startsWith(nm, "`") && !grepl(" ", nm, fixed = TRUE)) nm <- paste0("`", nm, "`")
      .hb_abort("every process must call ", fun, " with the same arguments, but process ", r - 1L, " (MPI rank ",
                r - 1L, ") passed another ", nm, " than process 0.")
    }
  }
  invisible(TRUE)
}

# What of a histboost() call every process must give alike before any data
# moves: which data arguments are given at all (each one's collective steps
# must meet the others'; weights and group are agreed where they are used,
# naming the processes), the validation sets' names (the log's columns),
# and the early stopping rule. `p`: .hb_check_train_args()'s result.
.hb_dist_call_shape <- function(a, p) {
  v <- a$valid
  list("`valid` (whether given, and its sets' names)" =
         if (!is.null(v)) list(length(v), names(v), vapply(v, inherits, NA, "hb_dataset")),
       "`init_score` (given or not)" = !is.null(a$init_score),
       "`init_model` (given or not)" = !is.null(a$init_model),
       "`callbacks` (how many)" = length(if (is.function(a$callbacks)) list(a$callbacks) else a$callbacks),
       "`eval_metric` (how many functions)" = length(p$metric_split$funs),
       "`objective` (a function or a name)" = is.function(a$objective),
       "`x` (an hb_dataset or data)" = inherits(a$x, "hb_dataset"),
       "`early_stopping_rounds`" = p$early_stopping_rounds,
       "`early_stopping_metric` or `early_stopping_min_delta`" = p$stopping,
       "`keep_fitted`" = p$keep_fitted)
}

# What histboost(distributed = "mpi") refuses: an hb_dataset binned for one
# process. Refused on every process alike (the arguments are the same
# everywhere), before any data moves.
.hb_dist_refuse <- function(a) {
  if (inherits(a$x, "hb_dataset") && !identical(a$x$distributed %||% "no", "mpi")) {
    .hb_abort("`x` is an hb_dataset made without `distributed` = \"mpi\"; make it with ",
              "hb_dataset(..., distributed = \"mpi\") on every process.")
  }
  invisible(TRUE)
}

#' This process's place in an MPI job
#'
#' Starts MPI if needed and returns this process's rank (0 .. size - 1) and
#' the number of processes, so that a script run by `mpirun -np 4 Rscript
#' script.R` can pick its shard of the rows.
#'
#' @return An integer vector `c(rank = , size = )`.
#' @seealso [histboost()] (argument `distributed`), [hb_mpi_run()].
#' @examples
#' if (hb_has_mpi() && nzchar(Sys.getenv("OMPI_COMM_WORLD_SIZE"))) hb_mpi_world()
#' @export
hb_mpi_world <- function() {
  w <- .hb_mpi_start()
  c(rank = w[1L], size = w[2L])
}

#' Train on several processes from an interactive session
#'
#' Launches `mpirun` with `np` R processes (on this machine, or on the hosts
#' of a host file), runs `fun` (or the R script `script`) on every one of
#' them, and returns what process 0 returned: typically the model of
#' `histboost(..., distributed = "mpi")`, which every process holds alike.
#' A console user thus never writes the launcher by hand. Inside `fun`,
#' [hb_mpi_world()] gives the process's rank and the number of processes,
#' from which it picks its shard of the rows.
#'
#' @param np Number of processes, a whole number >= 1.
#' @param fun A function run on every process with the arguments in `...`
#'   (it and they are serialized: anything else it needs it must load itself,
#'   such as its shard of a file); or `NULL` with `script`.
#' @param ... Arguments passed to `fun`.
#' @param script Instead of `fun`, the path of an R script run on every
#'   process; the value of its last expression on process 0 is returned.
#' @param hostfile `NULL` (this machine), or the path of an MPI host file
#'   (Open MPI: lines such as `node1 slots=8`), passed as `--hostfile`. The
#'   job's files (the function and its arguments, each process's error, the
#'   result) are exchanged through `workdir`, which every node must then
#'   see at the same path: a shared file system.
#' @param workdir The folder the job's files are written to (in a folder of
#'   their own, removed after): [tempdir()] by default, which is enough on
#'   this machine; with a `hostfile`, a folder on a file system every node
#'   shares (a home or project folder).
#' @param mpirun The launcher, `"mpirun"` by default (or `mpiexec`, `srun`
#'   wrappers that take the same arguments).
#' @param mpirun_args Further arguments to `mpirun`, such as
#'   `c("--bind-to", "none")` or `c("-x", "HISTBOOST_NUM_THREADS=8")`. On this
#'   machine with Open MPI, `--oversubscribe` is added (more processes than
#'   cores run, slower), and `--allow-run-as-root` when R runs as root.
#' @details On this machine (no `hostfile`) each process trains with its
#'   share of this session's threads, `max(1, hb_threads() %/% np)`, unless
#'   `HISTBOOST_NUM_THREADS` is set here or in `mpirun_args`: `np` processes
#'   of [hb_threads()] threads each would put `np` threads on every core.
#'   With a host file each process keeps its own default. OpenMP threads
#'   wait passively (`OMP_WAIT_POLICY=PASSIVE`, unless it is set): spinning
#'   threads of a process that waits in MPI can starve the others of the
#'   cores they share. With GNU OpenMP they first spin briefly
#'   (`GOMP_SPINCOUNT=10000`, about 0.1 ms, unless it is set), which keeps
#'   them awake between the parallel regions of one split: on the H200
#'   host's 16 CPUs (2M rows, 50 rounds of 255 leaves) 2 and 4 processes
#'   trained 8 to 18% faster than with passive waiting alone (one run each;
#'   inst/bench/results/distributed-2026-11-27-spin.md).
#' @param timeout Seconds after which the job is stopped (0: none).
#' @return Process 0's value of `fun` (or of the script).
#' @seealso [histboost()] (argument `distributed`), [hb_mpi_world()].
#' @examples
#' \dontrun{
#' fit <- hb_mpi_run(4, function(path) {
#'   w <- hb_mpi_world()
#'   d <- readRDS(path)
#'   mine <- which(seq_len(nrow(d)) %% w[["size"]] == w[["rank"]])
#'   histboost(d[mine, -1], d$y[mine], distributed = "mpi", quantized = TRUE, verbose = 0)
#' }, path = "train.rds")
#' }
#' @export
hb_mpi_run <- function(np, fun = NULL, ..., script = NULL, hostfile = NULL, mpirun = "mpirun",
                       mpirun_args = character(), timeout = 0, workdir = tempdir()) {
  np <- .hb_number(np, "np", integer = TRUE, lower = 1)
  timeout <- .hb_number(timeout, "timeout", lower = 0)
  if (!hb_has_mpi()) .hb_mpi_start()  # the classed error that says how to get MPI
  if (is.null(fun) == is.null(script)) .hb_abort("give exactly one of `fun` (a function) and `script` (a path).")
  if (!is.null(fun) && !is.function(fun)) .hb_abort("`fun` must be a function, not ", .hb_describe(fun), ".")
  if (!is.null(script) && (!is.character(script) || length(script) != 1L || !file.exists(script))) {
    .hb_abort("`script` must be the path of an existing R script.")
  }
  if (!is.null(hostfile) && (!is.character(hostfile) || length(hostfile) != 1L || !file.exists(hostfile))) {
    .hb_abort("`hostfile` must be NULL or the path of an existing MPI host file.")
  }
  launcher <- Sys.which(mpirun)
  if (!nzchar(launcher)) {
    .hb_abort("`mpirun` (\"", mpirun, "\") is not on the PATH; install Open MPI or MPICH (Debian/Ubuntu: ",
              "apt-get install openmpi-bin), or give its full path.")
  }
  if (!is.character(workdir) || length(workdir) != 1L || is.na(workdir) || !dir.exists(workdir)) {
    .hb_abort("`workdir` must be the path of an existing folder (with a host file, one that every node sees ",
              "at the same path).")
  }
  dir <- tempfile("hb_mpi_", tmpdir = normalizePath(workdir))
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  job <- file.path(dir, "job.rds")
  out <- file.path(dir, "result.rds")
  driver <- file.path(dir, "driver.R")
  saveRDS(list(fun = fun, args = list(...), script = if (!is.null(script)) normalizePath(script)), job)
  # A process whose `fun` fails writes its condition for this session, then exits, ending the job
  # (MPI_Abort) unless the others exit within seconds too: they may be waiting for it in a collective
  # step, and would wait until the exit timeout (histboost.mpi_exit_wait) otherwise.
  # (the processes load the histboost this session runs, wherever it was loaded from)
  lib <- dirname(getNamespaceInfo("histboost", "path"))
  from <- if (file.exists(file.path(lib, "histboost", "Meta", "package.rds"))) paste0(", lib.loc = ", deparse(lib))
  writeLines(c(
    sprintf("suppressPackageStartupMessages(library(histboost%s))", from %||% ""),
    "w <- hb_mpi_world()",
    sprintf("job <- readRDS(%s)", deparse(job)),
    "res <- tryCatch(if (is.null(job$script)) do.call(job$fun, job$args) else source(job$script)$value,",
    "  error = function(e) {",
    sprintf("    saveRDS(e, file.path(%s, sprintf('error-%%05d.rds', w[['rank']])))", deparse(dir)),
    "    message('process ', w[['rank']], ': ', conditionMessage(e))",
    "    histboost:::.hb_mpi_exit_on_error()",
    "  })",
    sprintf("if (w[['rank']] == 0L) saveRDS(res, %s)", deparse(out))
  ), driver)
  ver <- tryCatch(system2(launcher, "--version", stdout = TRUE, stderr = TRUE), error = function(e) "")
  flags <- character()
  if (any(grepl("Open MPI|OpenRTE", ver))) {
    if (is.null(hostfile)) flags <- c(flags, "--oversubscribe")
    uid <- suppressWarnings(as.integer(system2("id", "-u", stdout = TRUE)))
    if (identical(uid, 0L)) flags <- c(flags, "--allow-run-as-root")
  }
  if (!is.null(hostfile)) flags <- c(flags, "--hostfile", shQuote(normalizePath(hostfile)))
  args <- c(flags, mpirun_args, "-np", np, shQuote(file.path(R.home("bin"), "Rscript")), shQuote(driver))
  # OpenMP threads that spin while their process waits in MPI starve the
  # other processes of an oversubscribed machine (a 2-core machine running 2
  # processes of 2 threads made no progress at all): passive waiting, unless set.
  # GNU OpenMP's threads then spin a moment before sleeping (GOMP_SPINCOUNT,
  # about 0.1 ms): a split's parallel regions follow each other within
  # microseconds, so its threads stay awake between them, and sleep while
  # their process waits in MPI.
  wait <- if (nzchar(Sys.getenv("OMP_WAIT_POLICY"))) Sys.getenv("OMP_WAIT_POLICY") else "PASSIVE"
  spin <- if (nzchar(Sys.getenv("GOMP_SPINCOUNT"))) Sys.getenv("GOMP_SPINCOUNT") else "10000"
  if (any(grepl("Open MPI|OpenRTE", ver))) args <- c("-x", "OMP_WAIT_POLICY", "-x", "GOMP_SPINCOUNT", args)
  env <- c(paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)), paste0("OMP_WAIT_POLICY=", wait),
           paste0("GOMP_SPINCOUNT=", spin))
  # On this machine, each process's share of this session's threads (see Details).
  threads_given <- nzchar(Sys.getenv("HISTBOOST_NUM_THREADS")) || any(grepl("HISTBOOST_NUM_THREADS", mpirun_args))
  if (is.null(hostfile) && !threads_given) {
    env <- c(env, paste0("HISTBOOST_NUM_THREADS=", max(1L, hb_threads() %/% np)))
    if (any(grepl("Open MPI|OpenRTE", ver))) args <- c("-x", "HISTBOOST_NUM_THREADS", args)
  }
  # MPI started in this session without mpirun (a singleton) leaves its own
  # OMPI_* / PMIX_* variables, with which mpirun exits at once: hide them
  # from the launcher, and put them back after.
  if (!is.null(.hb_mpi_state$world)) {
    added <- setdiff(grep("^(OMPI_|PMIX_|PMI_)", names(Sys.getenv()), value = TRUE), .hb_mpi_state$env_before)
    if (length(added)) {
      saved <- as.list(Sys.getenv(added, names = TRUE))
      Sys.unsetenv(added)
      on.exit(do.call(Sys.setenv, saved), add = TRUE)
    }
  }
  status <- suppressWarnings(system2(launcher, args, env = env, timeout = timeout))
  failed <- sort(list.files(dir, pattern = "^error-[0-9]+[.]rds$", full.names = TRUE))
  if (length(failed)) {  # the failing process's own condition (not another's relay of it), its class kept
    conds <- lapply(failed, function(f) tryCatch(readRDS(f), error = function(e2) NULL))
    own <- which(!vapply(conds, inherits, NA, "histboost_error_relay"))
    k <- if (length(own)) own[1L] else 1L
    e <- conds[[k]]
    r <- as.integer(sub("^error-([0-9]+)[.]rds$", "\\1", basename(failed[k])))
    if (inherits(e, "condition")) {
      kinds <- c("input", "format", "device", "engine")
      kind <- kinds[vapply(paste0("histboost_error_", kinds), inherits, NA, x = e)]
      kind <- if (length(kind)) kind[1L] else "engine"
      # the process's own classes first (a handler for the script's own condition class fires), then histboost's
      own <- setdiff(class(e), c("histboost_error_relay", "histboost_error", "error", "condition",
                                 paste0("histboost_error_", kinds)))
      stop(structure(class = c(own, paste0("histboost_error_", kind), "histboost_error", "error", "condition"),
                     list(message = paste0("in the MPI job, process ", r, " (MPI rank ", r, ") failed: ",
                                           conditionMessage(e)), call = NULL)))
    }
  }
  if (!identical(as.integer(status), 0L) || !file.exists(out)) {
    .hb_abort("the MPI job (", mpirun, " -np ", np, ") failed with status ", status,
              if (identical(as.integer(status), 124L)) " (timed out)", "; its output above says why.",
              kind = "engine")
  }
  readRDS(out)
}

# This process's MPI collectives so far (inst/bench/distributed.R): bytes it
# sent, seconds spent in them (waiting for the other processes included),
# and how many.
.hb_mpi_traffic <- function() stats::setNames(.Call(C_hb_mpi_traffic), c("bytes", "seconds", "calls"))
.hb_mpi_bytes <- function() .hb_mpi_traffic()[["bytes"]]
