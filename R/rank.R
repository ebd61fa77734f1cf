# rank.R: learning to rank (objective = "lambdarank"): checks of the query
# ids, relevance grades, gains and cut-offs, and a test hook for the engine's
# gradients and metrics (src/engine/rank.c). histboost() and hb_cv() call these.

# Query ids of the rows (ranking): NULL, or list(codes = 0-based integer
# codes in the order of the sorted ids, nq = number of queries, ids = the
# sorted ids as text). Any atomic
# vector of ids works: integer, numeric, factor or character; rows of a query
# need not be contiguous.
.hb_group <- function(group, n, arg = "group", nrow_arg = "x") {
  if (is.null(group)) return(NULL)
  if (is.list(group) || !is.atomic(group) || !(is.numeric(group) || is.factor(group) || is.character(group)) ||
      (!is.null(dim(group)) && !(length(dim(group)) == 2L && ncol(group) == 1L))) {
    .hb_abort("`", arg, "` must be a vector of query ids, one per row (integer, factor or character), not ",
              .hb_describe(group), ".")
  }
  g1 <- if (is.null(dim(group))) group else group[, 1L]
  if (is.numeric(g1) && length(g1) != n && length(g1) > 0L && !anyNA(g1) && all(g1 >= 1 & g1 == round(g1)) &&
      sum(g1) == n) {
    # LightGBM's and xgboost's form: the queries' sizes, in row order
    .hb_abort("`", arg, "` has ", length(g1), " values summing to the ", n, " rows of `", nrow_arg, "`: the ",
              "queries' sizes, as LightGBM and xgboost take them. histboost takes one query id a row: give `",
              arg, " = rep(seq_along(sizes), sizes)`.")
  }
  group <- .hb_vector_arg(g1, n, arg, nrow_arg)
  if (anyNA(group)) {
    bad <- which(is.na(group))
    .hb_abort("`", arg, "` contains ", length(bad), " missing query ids (first at position ", bad[1L],
              "); every row must belong to a query.")
  }
  f <- if (is.factor(group)) droplevels(group) else factor(group)
  list(codes = as.integer(f) - 1L, nq = nlevels(f), ids = levels(f))
}

# Ranking labels: whole numbers from 0 to length(label_gain) - 1.
.hb_check_grades <- function(y, ngain, arg = "y") {
  bad <- which(!(y >= 0 & y == round(y)))
  if (length(bad)) {
    .hb_abort("`", arg, "` must hold relevance grades, whole numbers >= 0, for objective = \"lambdarank\"; `",
              arg, "[", bad[1L], "]` is ", format(y[bad[1L]]), ".")
  }
  big <- which(y >= ngain)
  if (length(big)) {
    .hb_abort("`", arg, "[", big[1L], "]` is ", format(y[big[1L]]), ", beyond `label_gain`, which has ", ngain,
              " values (grades 0 to ", ngain - 1L, "); give a longer `label_gain`.")
  }
  invisible(y)
}

# label_gain: NULL (2^i - 1 for grades 0..30, LightGBM's) or a checked numeric vector.
.hb_label_gain <- function(g) {
  if (is.null(g)) return(2^(0:30) - 1)
  ok <- is.numeric(g) && !is.object(g) && is.null(dim(g)) && length(g) >= 1L && length(g) <= 64L &&
    all(is.finite(g)) && all(g >= 0) && !is.unsorted(g)
  if (!ok) {
    .hb_abort("`label_gain` must be NULL or the gains of grades 0, 1, 2, ...: 1 to 64 finite numbers >= 0, ",
              "non-decreasing, e.g. 2^(0:4) - 1.")
  }
  as.double(g)
}

# eval_at: distinct whole numbers >= 1.
.hb_eval_at <- function(k) {
  ok <- is.numeric(k) && !is.object(k) && length(k) >= 1L && all(is.finite(k)) && all(k >= 1) &&
    all(k == round(k)) && all(k < .Machine$integer.max) && !anyDuplicated(k)
  if (!ok) {
    .hb_abort("`eval_at` must be distinct whole numbers >= 1 (the cut-offs k of ndcg@k and map@k), e.g. c(1, 3, 5).")
  }
  as.integer(k)
}

# "ndcg" -> "ndcg@k" and "map" -> "map@k" for each k of eval_at; other names as they are.
.hb_expand_at <- function(metric, eval_at) {
  unlist(lapply(metric, function(m) if (m %in% .HB_AT_METRICS) paste0(m, "@", eval_at) else m), use.names = FALSE)
}

# LambdaRank's gradients and hessians (an n x 2 matrix, columns g and h) of
# rows with grades `label`, query ids `group` and scores `score`, for tests.
.hb_rank_gradients <- function(label, group, score, lambdarank_truncation_level = 30L, lambdarank_norm = TRUE,
                               label_gain = NULL, nthreads = 2L) {
  grp <- .hb_group(group, length(label))
  params <- list(objective = .HB_OBJECTIVES[["lambdarank"]],
                 lambdarank_truncation_level = as.integer(lambdarank_truncation_level),
                 lambdarank_norm = as.integer(lambdarank_norm), label_gain = .hb_label_gain(label_gain))
  out <- .Call(C_hb_rank_gradients, as.double(label), grp$codes, grp$nq, as.double(score), params,
               as.integer(nthreads))
  colnames(out) <- c("g", "h")
  out
}

# NDCG@k or MAP@k ("ndcg" or "map") of rows with grades `label`, query ids
# `group`, scores `score` and optional `weights`, as the booster logs it, for tests.
.hb_rank_metric <- function(label, group, score, metric = c("ndcg", "map"), k = 1L, weights = NULL,
                            label_gain = NULL, nthreads = 2L) {
  metric <- match.arg(metric)
  grp <- .hb_group(group, length(label))
  params <- list(objective = .HB_OBJECTIVES[["lambdarank"]], label_gain = .hb_label_gain(label_gain))
  .Call(C_hb_rank_metric, as.double(label), grp$codes, grp$nq, as.double(score),
        if (!is.null(weights)) as.double(weights), .HB_METRICS[[metric]], as.integer(k), params, as.integer(nthreads))
}
