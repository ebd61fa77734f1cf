# Shared test setup: two threads, tolerances, small seeded data generators,
# and plain-R reference implementations of the learner rules in
# notes/ALGORITHM.md (a brute-force split search and a greedy leaf-wise
# grower). The references know nothing about the package; tests compare the
# package's numbers with theirs.

options(histboost.nthreads = 2L)

# ---- tolerances (one place) -------------------------------------------------
TOL <- list(
  exact = 1e-10,   # same algorithm, same data: only summation order differs
  split = 1e-9,    # gains and leaf values of a single split
  mono  = 1e-10,   # allowed rise of training loss between rounds (rounding only)
  prob  = 1e-12,   # probabilities recomputed from raw scores in R
  metric = 1e-8,   # evaluation-log metrics recomputed in R
  lgb_rmse = 0.02, lgb_auc = 0.01, lgb_logloss = 0.02, lgb_mlogloss = 0.03
)

# ---- small helpers -----------------------------------------------------------

# A deep copy: `y <- x` shares memory in R, so it would not reveal in-place
# modification by C code; a serialize round trip makes a real duplicate.
deep_copy <- function(x) unserialize(serialize(x, NULL))

hb_quiet <- function(...) histboost(..., verbose = 0L)

# Tests of single kernels reach them through test hooks, which a build from
# a development checkout has and one from a tarball (R CMD build) has not
# (configure's HISTBOOST_TEST_HOOKS; src/README.md).
skip_without_test_hooks <- function() {
  if (!exists("C_hb_dataset_bins", envir = asNamespace("histboost"), inherits = FALSE)) {
    skip("histboost was built without its test hooks (as from a tarball; HISTBOOST_TEST_HOOKS=yes builds them)")
  }
}

# A multiclass round's trees grow at once on class workers only at many
# threads (learner_cpu.c's plan); a build with test hooks takes
# HISTBOOST_TEST_CLASS_WORKERS workers whatever the machine. Sets it for
# the calling test (TRUE), or returns FALSE without test hooks.
force_class_workers <- function(n = 3L, env = parent.frame()) {
  if (!exists("C_hb_dataset_bins", envir = asNamespace("histboost"), inherits = FALSE)) return(FALSE)
  old <- Sys.getenv("HISTBOOST_TEST_CLASS_WORKERS", NA)
  Sys.setenv(HISTBOOST_TEST_CLASS_WORKERS = n)
  do.call(on.exit, list(substitute(if (is.na(old)) Sys.unsetenv("HISTBOOST_TEST_CLASS_WORKERS")
                                   else Sys.setenv(HISTBOOST_TEST_CLASS_WORKERS = old), list(old = old)),
                        add = TRUE), envir = env)
  TRUE
}

# expect an input error whose message names `what` (an argument in
# backticks, or a column name; a regular expression)
expect_input_error <- function(expr, what) {
  expect_error(expr, class = "histboost_error_input", regexp = what)
}

sigmoid <- function(s) 1 / (1 + exp(-s))
softmax_rows <- function(S) {
  S <- S - apply(S, 1, max)
  E <- exp(S)
  E / rowSums(E)
}

rmse <- function(y, p) sqrt(mean((y - p)^2))
mae <- function(y, p) mean(abs(y - p))
logloss <- function(y01, p) {
  p <- pmin(pmax(p, 1e-15), 1 - 1e-15)
  -mean(y01 * log(p) + (1 - y01) * log(1 - p))
}
multi_logloss <- function(yk, P) {   # yk: 1-based class index
  p <- P[cbind(seq_along(yk), yk)]
  -mean(log(pmax(p, 1e-15)))
}
# AUC by the Mann-Whitney statistic with average ranks for ties.
auc <- function(y01, p) {
  r <- rank(p)
  n1 <- sum(y01 == 1)
  n0 <- sum(y01 == 0)
  (sum(r[y01 == 1]) - n1 * (n1 + 1) / 2) / (n1 * n0)
}
binary_error <- function(y01, p) mean((p > 0.5) != (y01 == 1))
multi_error <- function(yk, P) mean(max.col(P, ties.method = "first") != yk)

# Two leaf-index vectors describe the same partition of the rows.
same_partition <- function(a, b) {
  tab <- table(a, b)
  all(rowSums(tab > 0) == 1) && all(colSums(tab > 0) == 1)
}

# Rscript of this R installation (for fresh-process tests).
rscript_path <- function() {
  exe <- if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript"
  file.path(R.home("bin"), exe)
}

# Installed in a library (not just loaded from source by pkgload, whose
# system.file() shim would answer for the source tree).
histboost_installed <- function() {
  length(find.package("histboost", lib.loc = .libPaths(), quiet = TRUE)) > 0
}

# ---- data generators (fixed seeds) ------------------------------------------

# n rows; `nnum` numeric columns taking `nval` distinct values each, every
# value repeated at least `minrep` times (so one bin per distinct value), a
# share `na` of NAs; `ncat` factor columns with `nlev` levels (and NAs).
# y: continuous (no gain ties). Returns list(x = data.frame, y).
gen_mixed <- function(seed, n = 80, nnum = 2, ncat = 1, nval = 8, nlev = 5,
                      na = 0.1, cat_na = 0.1) {
  set.seed(seed)
  x <- list()
  for (j in seq_len(nnum)) {
    vals <- sort(round(runif(nval, -3, 3), 4))
    while (anyDuplicated(vals)) vals <- sort(round(runif(nval, -3, 3), 4))
    v <- sample(rep_len(sample(vals), n))
    if (na > 0) v[sample.int(n, round(na * n))] <- NA
    x[[paste0("num", j)]] <- v
  }
  for (j in seq_len(ncat)) {
    lev <- paste0("L", letters[seq_len(nlev)])
    v <- factor(sample(rep_len(lev, n)), levels = lev)
    if (cat_na > 0) v[sample.int(n, round(cat_na * n))] <- NA
    x[[paste0("cat", j)]] <- v
  }
  x <- as.data.frame(x)
  eff <- rnorm(nlev)
  f <- 0
  for (j in seq_len(nnum)) f <- f + ifelse(is.na(x[[j]]), 0.7, sin(x[[j]]))
  for (j in seq_len(ncat)) {
    cj <- x[[nnum + j]]
    f <- f + ifelse(is.na(cj), -0.5, eff[as.integer(cj)])
  }
  y <- f + rnorm(n, sd = 0.5)
  list(x = x, y = y, f = f)
}

# A larger regression / classification problem (for lightgbm, loss, api).
gen_task <- function(seed, n = 2000, p = 6, task = c("regression", "binary", "multiclass"),
                     na = 0, factors = 0, nlev = 8, K = 3) {
  task <- match.arg(task)
  set.seed(seed)
  X <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("x", seq_len(p))))
  x <- as.data.frame(X)
  f <- 1.2 * X[, 1] - 0.8 * X[, 2]^2 + sin(2 * X[, 3]) + 0.5 * X[, 4] * X[, 5]
  if (factors > 0) {
    for (j in seq_len(factors)) {
      lev <- paste0("lv", seq_len(nlev))
      fj <- factor(sample(lev, n, replace = TRUE), levels = lev)
      x[[paste0("f", j)]] <- fj
      f <- f + rnorm(nlev)[as.integer(fj)]
    }
  }
  if (na > 0) {
    for (j in seq_len(p)) x[[j]][sample.int(n, round(na * n))] <- NA
  }
  y <- switch(task,
    regression = f + rnorm(n, sd = 0.5),
    binary = factor(ifelse(runif(n) < sigmoid(f - mean(f)), "yes", "no"), levels = c("no", "yes")),
    multiclass = {
      S <- cbind(f, -f, 1.5 * X[, 6])[, seq_len(min(K, 3)), drop = FALSE]
      if (K > 3) S <- cbind(S, matrix(rnorm(n * (K - 3)), n))
      P <- softmax_rows(S + matrix(rnorm(n * K, sd = 0.3), n))
      cls <- apply(P, 1, function(pr) sample.int(K, 1, prob = pr))
      factor(paste0("c", cls), levels = paste0("c", seq_len(K)))
    })
  list(x = x, y = y)
}

# ---- reference (a): brute-force best split of one node ----------------------

ref_soft <- function(G, l1) sign(G) * pmax(abs(G) - l1, 0)
ref_leaf_gain <- function(G, H, l1, l2) ref_soft(G, l1)^2 / (H + l2)
ref_leaf_output <- function(G, H, l1, l2) -ref_soft(G, l1) / (H + l2)

ref_params <- function(...) {
  p <- list(learning_rate = 1, num_leaves = 2L, max_depth = -1L,
            min_data_in_leaf = 1L, min_sum_hessian_in_leaf = 1e-3,
            lambda_l1 = 0, lambda_l2 = 0, min_gain_to_split = 0,
            max_cat_threshold = 32L, cat_smooth = 10, cat_l2 = 10,
            min_data_per_group = 100L, max_cat_to_onehot = 4L)
  a <- list(...)
  p[names(a)] <- a
  p
}

# Every partition of the node's rows that a split could make: for a numeric
# feature every threshold between consecutive distinct values with missing
# rows on either side, plus "all values vs missing"; for a factor EVERY
# subset of the categories present (NA being one more category) that may be
# scanned: categories with fewer than max(1, min_data_per_group) rows stay on
# the right, and the left side is a non-empty proper subset of the others.
# (This is the brute force's own restriction, not the engine's rule: the
# engine's scan finds the same best subset when cat_smooth = cat_l2 =
# lambda_l2 = 0, min_data_per_group = 1 and max_cat_threshold is large; its
# rules are ref_cat_split's.)
# max_cat_threshold is not modelled (use one >= the number of categories).
#
# counts = "exact" counts the rows of a side. counts = "estimate" counts them
# the way the engine does (no row counts in histograms): a group's count is
# round(h * n / H) (half up) from its hessian sum h and the node's n and H,
# where a group is one numeric value, the missing rows, or one category --
# the engine's bins when every distinct value is its own bin (each value on
# >= 3 rows, fewer than 255 values). A numeric threshold is scanned as
# LightGBM scans it: with the missing rows left, its left count is n less the
# estimates of the values right of it; in a column with NAs, also with them
# right, its left count the estimates of its values (or, where
# ref_count_right(), n less those of the values right of it and of the
# NAs); "all values vs missing" counts the values side by their estimates
# (or as n less the NAs'), and once more by their estimates where every
# value is above 0 (LightGBM's top scan ending with the NAs alone left); a
# category subset's left count is the sum of its estimates, and a category
# takes part only if its estimate is >= max(1, min_data_per_group).
# Returns list(feature, gain, left (logical over `rows`), second) where
# `second` is the best gain of any other partition (to show there is no tie).
ref_bruteforce_split <- function(X, g, h, params, rows = seq_along(g),
                                 counts = c("exact", "estimate")) {
  counts <- match.arg(counts)
  g <- g[rows]; h <- h[rows]
  n <- length(rows)
  G <- sum(g); H <- sum(h)
  l1 <- params$lambda_l1
  factor_nH <- if (H > 0) n / H else 0
  # rows of each group: exact, or estimated from the group's hessian sums
  group_n <- function(group, levels) {
    if (counts == "exact") return(tabulate(match(group, levels), length(levels)))
    hs <- vapply(levels, function(l) sum(h[which(group == l)]), 0)
    v <- hs * factor_nH + 0.5
    unname(ifelse(v >= 1, floor(v), 0))
  }
  cands <- list()
  consider <- function(j, left, l2, nL) {
    nR <- n - nL
    HL <- sum(h[left]); HR <- H - HL
    if (nL < params$min_data_in_leaf || nR < params$min_data_in_leaf) return(NULL)
    if (HL < params$min_sum_hessian_in_leaf || HR < params$min_sum_hessian_in_leaf) return(NULL)
    GL <- sum(g[left]); GR <- G - GL
    gain <- ref_leaf_gain(GL, HL, l1, l2) + ref_leaf_gain(GR, HR, l1, l2) -
      ref_leaf_gain(G, H, l1, l2)
    # a partition's key ignores which side is called left
    canon <- if (left[1]) left else !left
    list(feature = j, gain = gain, left = left, key = paste(as.integer(canon), collapse = ""))
  }
  for (j in seq_along(X)) {
    x <- X[[j]][rows]
    if (is.factor(x)) {
      cat <- as.character(x)
      cat[is.na(cat)] <- "<NA>"
      lev <- unique(cat)
      nc <- group_n(cat, lev)
      keep <- nc >= max(1, params$min_data_per_group)
      lev <- lev[keep]; nc <- nc[keep]
      m <- length(lev)
      if (m < 2) next
      l2 <- params$lambda_l2 + params$cat_l2
      for (mask in seq_len(2^m - 2)) {
        inset <- bitwAnd(mask, 2^(seq_len(m) - 1)) > 0
        cands[[length(cands) + 1]] <- consider(j, cat %in% lev[inset], l2, sum(nc[inset]))
      }
    } else {
      miss <- is.na(x)
      vals <- sort(unique(x[!miss]))
      nv <- group_n(x, vals)
      nm <- if (any(miss)) group_n(miss, TRUE) else 0
      if (any(miss) && nm == 0) {
        # the engine then treats the feature as having no missing rows in
        # this node; the reference does not model that case
        stop("ref_bruteforce_split: feature ", j, " has missing rows whose estimated count is 0")
      }
      l2 <- params$lambda_l2
      # LightGBM's two scans: from the top, missing rows left, the left side counted as n less the
      # values above; from the bottom (a column with NAs in training), missing rows right, the
      # left side's values counted
      nan_type <- anyNA(X[[j]])
      cr <- ref_count_right(X[[j]])
      for (t in seq_len(length(vals) - 1)) {
        le <- !miss & x <= vals[t]
        nL <- sum(nv[seq_len(t)])
        cands[[length(cands) + 1]] <- consider(j, le | miss, l2, n - sum(nv[-seq_len(t)]))
        if (nan_type) cands[[length(cands) + 1]] <- consider(j, le, l2, if (cr) n - sum(nv[-seq_len(t)]) - nm else nL)
      }
      if (any(miss) && length(vals) >= 1) {
        cands[[length(cands) + 1]] <- consider(j, !miss, l2, if (cr) n - nm else sum(nv))
        # every value above zero: LightGBM's first bin is an empty zero bin, and its top scan ends
        # with the NAs alone left, the values counted
        if (all(X[[j]] > .REF_LGB_ZERO, na.rm = TRUE)) cands[[length(cands) + 1]] <- consider(j, !miss, l2, sum(nv))
      }
    }
  }
  cands <- Filter(Negate(is.null), cands)
  if (!length(cands)) return(NULL)
  gains <- vapply(cands, `[[`, 0, "gain")
  b <- cands[[which.max(gains)]]
  keys <- vapply(cands, `[[`, "", "key")
  other <- gains[keys != b$key]
  list(feature = b$feature, gain = b$gain, left = b$left,
       second = if (length(other)) max(other) else -Inf)
}

# LightGBM's zero (kZeroThreshold, a float): values in (-it, it] are 0 to its binning.
.REF_LGB_ZERO <- 1.0000000180025095e-35

# Whether LightGBM's most frequent bin of numeric column x (each distinct
# value a bin of its own, NAs a last bin) is its first, as its
# BinMapper::FindBin decides: the bin holding most rows (the first of equal
# ones, in the order negatives, the zero bin (kept even empty), positives,
# NAs) stays the most frequent when it is the zero bin or holds 70% of the
# rows; else the zero bin is. Its first bin is the lowest negative value's,
# or the zero bin. Then its scan from the bottom counts the rows right of a
# threshold, NAs included (split_rules.h's hb_rule_bottom_scan_left).
ref_count_right <- function(x) {
  z <- .REF_LGB_ZERO
  v <- x[!is.na(x)]
  zeros <- sum(v > -z & v <= z)
  neg <- table(v[v <= -z]); pos <- table(v[v > z])
  cnt <- c(as.vector(neg), zeros, as.vector(pos), sum(is.na(x)))
  best <- which.max(cnt)
  zb <- length(neg) + 1L
  zero_most <- best == zb || cnt[best] / length(x) < 0.7
  if (length(neg)) !zero_most && best == 1L else zero_most
}

# ---- reference (b): greedy leaf-wise grower mirroring ALGORITHM.md ----------

# The levels of factor x that get bins of their own, as LightGBM chooses
# them (its documented binning of categorical features): most rows first
# (ties: level order); past the first two, a level of fewer than
# min_data_in_bin rows ends the list; so does holding 99% of the non-missing
# rows once the bins, the missing one counted, reach the number of distinct
# values (one more with NAs) or max_bin. The others share the missing bin.
ref_kept_levels <- function(x, max_bin = 255L, min_data_in_bin = 3L) {
  tab <- table(factor(x, levels = levels(x)))
  lv <- names(tab)[tab > 0]
  lv <- lv[order(-tab[lv], match(lv, levels(x)))]
  cnt <- as.vector(tab[lv])
  cut <- floor(sum(cnt) * 0.99000000953674316 + 0.5)  # LightGBM: 0.99f, rounded half up
  maxb <- min(length(lv) + anyNA(x), max_bin)
  k <- 0L; used <- 0; nbin <- 1L
  while (k < length(lv) && (used < cut || nbin < maxb)) {
    if (k >= 2L && cnt[k + 1L] < min_data_in_bin) break
    used <- used + cnt[k + 1L]; nbin <- nbin + 1L; k <- k + 1L
  }
  lv[seq_len(k)]
}

# LightGBM's GreedyFindBin: the upper bounds but the last of at most
# max_bin bins of distinct increasing values v with counts cnt.
ref_greedy_bins <- function(v, cnt, max_bin, min_data_in_bin) {
  n <- length(v); total <- sum(cnt)
  if (max_bin <= 1L) return(numeric(0))
  if (n <= max_bin) {
    b <- numeric(0); cur <- 0
    for (i in seq_len(n - 1L)) {
      cur <- cur + cnt[i]
      if (cur >= min_data_in_bin) { b <- c(b, v[i] / 2 + v[i + 1L] / 2); cur <- 0 }
    }
    return(b)
  }
  max_bin <- max(1L, min(max_bin, total %/% min_data_in_bin))
  if (max_bin <= 1L) return(numeric(0))
  mean <- total / max_bin; big <- cnt >= mean
  rest_bins <- max_bin - sum(big); rest <- total - sum(cnt[big])
  mean <- rest / rest_bins
  ub <- numeric(0); lb <- v[1L]; cur <- 0
  for (i in seq_len(n - 1L)) {
    if (!big[i]) rest <- rest - cnt[i]
    cur <- cur + cnt[i]
    if (big[i] || cur >= mean || (big[i + 1L] && cur >= max(1, mean * 0.5))) {
      ub <- c(ub, v[i]); lb <- c(lb, v[i + 1L])
      if (length(ub) >= max_bin - 1L) break
      cur <- 0
      if (!big[i]) { rest_bins <- rest_bins - 1L; mean <- rest / rest_bins }
    }
  }
  ub / 2 + lb[-1L] / 2
}

# The upper bounds of numeric x's value bins but the last (+Inf), as
# LightGBM's BinMapper::FindBin places them (its documented binning,
# FindBinWithZeroAsOneBin): values at most -z, about 0 (|v| <= z, z = 1e-35 as
# a float) and above z apart; the negative side's bins within its share of
# max_bin - 1 (by rows), its last bound -z; the zero bin's bound z; the
# positive side's bins within what is left but one; with NAs, max_bin - 1 in
# all. A side of at most its budget of distinct values is merged in
# increasing order until a bin holds min_data_in_bin rows (the last may hold
# fewer), each bound the midpoint of the values around it; more values are
# cut greedily at about equal rows (LightGBM's GreedyFindBin, above). The
# zero bin when no value is about 0 holds no row: it is left out, as the
# engine leaves it out. min_data_in_bin = 1 gives a bin a value on a side
# whose values fit its budget (hand-computed cases and the brute force split
# search take it so, on data with room for every value).
ref_numeric_upper <- function(x, max_bin = 255L, min_data_in_bin = 3L) {
  if (anyNA(x)) max_bin <- max_bin - 1L
  x <- x[!is.na(x)]
  v <- sort(unique(x)); cnt <- tabulate(match(x, v), length(v))
  z <- readBin(writeBin(1e-35, raw(), size = 4L), "double", size = 4L)  # 1e-35 as a float: LightGBM's kZeroThreshold
  neg <- v <= -z; pos <- v > z; zeros <- sum(cnt[!neg & !pos])
  out <- numeric(0)
  if (any(neg) && max_bin > 1L) {
    lmax <- max(1L, as.integer(sum(cnt[neg]) / (sum(cnt) - zeros) * (max_bin - 1L)))
    out <- c(ref_greedy_bins(v[neg], cnt[neg], lmax, min_data_in_bin), -z)
  }
  rmax <- max_bin - 1L - length(out)
  if (any(pos) && rmax > 0L) {
    if (zeros > 0) out <- c(out, z)
    return(c(out, ref_greedy_bins(v[pos], cnt[pos], rmax, min_data_in_bin)))
  }
  if (length(out) && zeros == 0 && !any(pos)) out <- out[-length(out)]
  out
}

# Dataset-level bin information: numeric -> its bins' upper bounds
# (ref_numeric_upper); factor -> the levels with bins of their own, most
# frequent first (ties: level order; ref_kept_levels).
ref_bin_info <- function(X, min_data_in_bin = 3L) {
  lapply(X, function(x) {
    if (is.factor(x)) {
      list(type = "categorical", levels = ref_kept_levels(x, min_data_in_bin = min_data_in_bin))
    } else {
      list(type = "numeric", upper = ref_numeric_upper(x, min_data_in_bin = min_data_in_bin))
    }
  })
}

# Best split of the rows `rows` by the exact scan rules; NULL if none is taken.
# Also returns `margin`: best gain minus the best gain of a different
# candidate partition (ties would make the engine's choice order-dependent).
ref_find_split <- function(X, info, g, h, rows, params) ref_find_split_v(X, info, g, h, rows, params)$best

# ref_find_split's best, with `valid`: the features (of `allowed`, NULL: all)
# in which some candidate passed the limits and gained more than
# min_gain_to_split, LightGBM's is_splittable_ (its children scan no other).
ref_find_split_v <- function(X, info, g, h, rows, params, allowed = NULL) {
  gg <- g[rows]; hh <- h[rows]
  valid <- integer(0)
  n <- length(rows)
  G <- sum(gg); H <- sum(hh)
  l1 <- params$lambda_l1
  best <- NULL
  all_gains <- numeric(0); all_keys <- character(0)
  # l2: the children's; the parent's gain takes lambda_l2 (a categorical split's children may take more)
  eval_cand <- function(GL, HL, nL, l2) {
    GR <- G - GL; HR <- H - HL; nR <- n - nL
    if (nL < params$min_data_in_leaf || nR < params$min_data_in_leaf) return(NA_real_)
    if (HL < params$min_sum_hessian_in_leaf || HR < params$min_sum_hessian_in_leaf) return(NA_real_)
    ref_leaf_gain(GL, HL, l1, l2) + ref_leaf_gain(GR, HR, l1, l2) - ref_leaf_gain(G, H, l1, params$lambda_l2)
  }
  offer <- function(gain, split, leftmask) {
    if (is.na(gain)) return()
    if (gain > params$min_gain_to_split && gain > 0) valid <<- union(valid, split$feature)
    canon <- if (leftmask[1]) leftmask else !leftmask
    all_gains <<- c(all_gains, gain)
    all_keys <<- c(all_keys, paste(as.integer(canon), collapse = ""))
    if (is.null(best) || gain > best$gain) {
      split$gain <- gain
      split$key <- all_keys[length(all_keys)]
      best <<- split
    }
  }
  for (j in seq_along(X)) {
    if (!is.null(allowed) && !(j %in% allowed)) next
    x <- X[[j]][rows]
    inf <- info[[j]]
    if (inf$type == "numeric") {
      up <- inf$upper
      B <- length(up) + 1L
      miss <- is.na(x)
      if (B < 2 && !any(is.na(X[[j]]))) next        # trivial feature
      bin <- findInterval(x, up, left.open = TRUE) + 1L  # x <= up[b]: bin b or lower
      l2 <- params$lambda_l2
      has_miss <- any(miss)
      Gm <- sum(gg[miss]); Hm <- sum(hh[miss]); nm <- sum(miss)
      for (t in seq_len(B - 1)) {
        le <- !miss & bin <= t
        GL <- sum(gg[le]); HL <- sum(hh[le]); nL <- sum(le)
        thr <- up[t]
        if (has_miss) {
          offer(eval_cand(GL, HL, nL, l2),
                list(feature = j, type = "numeric", threshold = thr, default_left = FALSE), le)
          offer(eval_cand(GL + Gm, HL + Hm, nL + nm, l2),
                list(feature = j, type = "numeric", threshold = thr, default_left = TRUE), le | miss)
        } else {
          offer(eval_cand(GL, HL, nL, l2),
                list(feature = j, type = "numeric", threshold = thr,
                     default_left = nL >= n - nL), le)
        }
      }
      if (has_miss) {
        le <- !miss
        offer(eval_cand(G - Gm, H - Hm, n - nm, l2),
              list(feature = j, type = "numeric", threshold = Inf, default_left = FALSE), le)
      }
    } else {
      lev <- inf$levels
      code <- match(as.character(x), lev)            # NA and levels without a bin -> missing bin
      if (length(lev) < 2 && !anyNA(match(as.character(X[[j]]), lev))) next
      nb <- length(lev) + 1L                         # value bins + missing bin
      code[is.na(code)] <- nb
      Gc <- vapply(seq_len(nb), function(b) sum(gg[code == b]), 0)
      Hc <- vapply(seq_len(nb), function(b) sum(hh[code == b]), 0)
      # LightGBM's rules (ref_cat_split): rows estimated from hessian sums
      est <- Hc * n / H + 0.5
      nc <- ifelse(est >= 1, floor(est), 0)
      cat_split <- function(lb, l2c) {
        list(feature = j, type = "categorical", left_levels = lev[lb[lb <= length(lev)]], trained_levels = lev,
             default_left = nb %in% lb, child_l2 = l2c)
      }
      onehot <- if (is.null(params$max_cat_to_onehot)) 4L else params$max_cat_to_onehot
      if (nb <= onehot) {
        # with rows in two bins only, the second alone is the first's complement: skipped, as the engine does
        nonempty <- which(nc > 0)
        for (b in seq_len(nb)) {
          if (length(nonempty) == 2L && b != nonempty[1]) next
          offer(eval_cand(Gc[b], Hc[b], nc[b], params$lambda_l2), cat_split(b, params$lambda_l2), code == b)
        }
        next
      }
      cons <- which(nc > 0 & nc >= params$cat_smooth)
      dropped <- sum(nc > 0) - length(cons)
      m <- length(cons)
      if (m < 1) next
      ratio <- Gc[cons] / (Hc[cons] + params$cat_smooth)
      ord <- cons[order(ratio, cons)]
      kmax <- min(params$max_cat_threshold, (m + 1L) %/% 2L)
      l2 <- params$lambda_l2 + params$cat_l2
      first <- logical(kmax)
      for (dirn in 1:2) {
        o <- if (dirn == 1) ord else rev(ord)
        group <- 0
        for (k in seq_len(kmax)) {
          lb <- o[seq_len(k)]
          nL <- sum(nc[lb]); HL <- sum(Hc[lb])
          group <- group + nc[o[k]]
          if (nL < params$min_data_in_leaf || HL < params$min_sum_hessian_in_leaf) next
          if (n - nL < params$min_data_in_leaf || n - nL < params$min_data_per_group ||
              H - HL < params$min_sum_hessian_in_leaf) break
          if (group < params$min_data_per_group) next
          group <- 0
          if (dirn == 1) first[k] <- TRUE
          # the complement of a partition the first end gave (the same gain): skipped, as the engine does
          if (dirn == 2 && dropped == 0 && m - k >= 1 && m - k <= kmax && first[m - k]) next
          offer(eval_cand(sum(Gc[lb]), HL, nL, l2), cat_split(lb, l2), code %in% lb)
        }
      }
    }
  }
  valid <- sort(valid)
  if (is.null(best)) return(list(best = NULL, valid = valid))
  if (!(best$gain > params$min_gain_to_split && best$gain > 0)) return(list(best = NULL, valid = valid))
  other <- all_gains[all_keys != best$key]
  best$margin <- best$gain - if (length(other)) max(other) else -Inf
  list(best = best, valid = valid)
}

# Which of the values x go left at a reference split.
ref_goes_left <- function(split, x) {
  miss <- is.na(x)
  if (split$type == "numeric") {
    out <- x <= split$threshold
  } else {
    xc <- as.character(x)
    miss <- miss | !(xc %in% split$trained_levels)
    out <- xc %in% split$left_levels
  }
  out[miss] <- split$default_left
  out
}

# Grow one tree on gradients g, hessians h (already weighted).
ref_grow_tree <- function(X, info, g, h, params, rows = seq_along(g)) {
  leaves <- list(rows)
  leaf_l2 <- params$lambda_l2        # the L2 of each leaf's output (its split's child_l2)
  depth <- 0L
  link <- list(NULL)                 # (node, side) each leaf hangs from
  root <- ref_find_split_v(X, info, g, h, rows, params)
  best <- list(root$best)
  ok <- list(root$valid)             # per leaf: the features its children may scan (skip_unsplittable)
  nodes <- list()
  margins <- numeric(0)
  depth_ok <- function(d) params$max_depth <= 0 || d < params$max_depth
  while (length(leaves) < params$num_leaves) {
    gains <- vapply(best, function(b) if (is.null(b)) -Inf else b$gain, 0)
    if (all(gains == -Inf)) break
    l <- which.max(gains)
    fin <- gains[is.finite(gains)]
    if (length(fin) > 1) margins <- c(margins, gains[l] - max(gains[-l]))
    s <- best[[l]]
    margins <- c(margins, s$margin)
    node <- length(nodes)            # 0-based
    r <- leaves[[l]]
    goes <- ref_goes_left(s, X[[s$feature]][r])
    newleaf <- length(leaves)        # 0-based index of the right child
    s$left <- -(l - 1L) - 1L         # ~(l-1)
    s$right <- -newleaf - 1L
    s$count <- length(r)
    nodes[[node + 1L]] <- s
    if (!is.null(link[[l]])) nodes[[link[[l]]$node + 1L]][[link[[l]]$side]] <- node
    leaves[[l]] <- r[goes]
    leaves[[newleaf + 1L]] <- r[!goes]
    leaf_l2[c(l, newleaf + 1L)] <- if (is.null(s$child_l2)) params$lambda_l2 else s$child_l2
    d <- depth[l] + 1L
    depth[c(l, newleaf + 1L)] <- d
    link[[l]] <- list(node = node, side = "left")
    link[[newleaf + 1L]] <- list(node = node, side = "right")
    parent_ok <- ok[[l]]
    for (k in c(l, newleaf + 1L)) {
      res <- if (depth_ok(d)) {
        ref_find_split_v(X, info, g, h, leaves[[k]], params,
                         allowed = if (isTRUE(params$skip_unsplittable)) parent_ok)
      }
      best[k] <- list(res$best)
      ok[k] <- list(if (is.null(res)) integer(0) else res$valid)
    }
  }
  values <- vapply(seq_along(leaves), function(k) {
    r <- leaves[[k]]
    params$learning_rate * ref_leaf_output(sum(g[r]), sum(h[r]), params$lambda_l1, leaf_l2[k])
  }, 0)
  list(nodes = nodes, leaf_values = values, leaf_rows = leaves,
       gains = vapply(nodes, `[[`, 0, "gain"), margins = margins)
}

# Leaf index (0-based) of each row of X in a reference tree.
ref_tree_leaf <- function(tree, X) {
  n <- nrow(X)
  if (!length(tree$nodes)) return(integer(n))
  node <- integer(n)           # current internal node of each row (>= 0) or leaf (< 0)
  repeat {
    act <- which(node >= 0)
    if (!length(act)) break
    for (k in unique(node[act])) {
      idx <- act[node[act] == k]
      s <- tree$nodes[[k + 1L]]
      goes <- ref_goes_left(s, X[[s$feature]][idx])
      node[idx] <- ifelse(goes, s$left, s$right)
    }
  }
  -node - 1L
}

ref_tree_predict <- function(tree, X) tree$leaf_values[ref_tree_leaf(tree, X) + 1L]

# Boosting with the reference grower. y: numeric (regression), 0/1 (binary),
# or 1..K class index (multiclass). Returns init, trees[[round]][[class]].
# With `offset` (n x K) the scores start from it and init is 0, as with
# histboost()'s init_score.
# (min_data_in_bin: the binning's, as ref_bin_info(); 1 gives a bin a
# value, for hand-computed cases; the engine's R datasets use 3)
ref_boost <- function(X, y, task, params, nrounds, weights = NULL, K = NULL, offset = NULL, min_data_in_bin = 3L) {
  n <- nrow(X)
  w <- if (is.null(weights)) rep(1, n) else weights
  info <- ref_bin_info(X, min_data_in_bin = min_data_in_bin)
  if (task == "regression") {
    init <- sum(w * y) / sum(w); K <- 1L
  } else if (task == "binary") {
    p <- sum(w * y) / sum(w); init <- log(p / (1 - p)); K <- 1L
  } else {
    pk <- vapply(seq_len(K), function(k) sum(w * (y == k)) / sum(w), 0)
    init <- log(pmax(pk, 1e-15))
  }
  if (!is.null(offset)) init <- rep(0, K)
  S <- matrix(rep(init, each = n), n, K)
  if (!is.null(offset)) S <- S + offset
  trees <- list()
  for (it in seq_len(nrounds)) {
    trees[[it]] <- list()
    if (task == "multiclass") P <- softmax_rows(S)
    for (k in seq_len(K)) {
      if (task == "regression") {
        g <- S[, 1] - y; h <- rep(1, n)
      } else if (task == "binary") {
        p <- sigmoid(S[, 1]); g <- p - y; h <- p * (1 - p)
      } else {
        g <- P[, k] - (y == k); h <- K / (K - 1) * P[, k] * (1 - P[, k])
      }
      tr <- ref_grow_tree(X, info, w * g, w * h, params)
      trees[[it]][[k]] <- tr
    }
    for (k in seq_len(K)) S[, k] <- S[, k] + ref_tree_predict(trees[[it]][[k]], X)
  }
  list(init = init, trees = trees, K = K)
}

# Raw scores of new data from a reference ensemble (n x K matrix).
ref_boost_raw <- function(fit, X) {
  n <- nrow(X)
  S <- matrix(rep(fit$init, each = n), n, fit$K)
  for (it in seq_along(fit$trees))
    for (k in seq_len(fit$K)) S[, k] <- S[, k] + ref_tree_predict(fit$trees[[it]][[k]], X)
  S
}

# A histogram in plain R: per feature of `bins` (0-based, num_bin[f] bins)
# and bin, the sum of v over `rows`, in the engine's slot order. With v the
# fixed-point or quantized values it is what the integer histograms must hold.
ref_bin_sums <- function(bins, num_bin, v, rows) {
  unlist(lapply(seq_len(ncol(bins)), function(f) {
    s <- tapply(v[rows], factor(bins[rows, f], levels = seq_len(num_bin[f]) - 1L), sum)
    s[is.na(s)] <- 0
    as.numeric(s)
  }))
}

# ---- reference: Shapley values by enumerating feature subsets ---------------
# From the definition (Lundberg, Erion and Lee 2018): v(S) is a tree's
# expected output with the features in S known, a node splitting on an
# unknown feature averaging its children by the training rows below them
# (hb_trees()' leaf counts); phi_j = sum over S without j of
# |S|! (p - |S| - 1)! / p! (v(S + j) - v(S)). Exponential in p: a handful of
# features only. Returns an n x (p + 1) x K array, the last column v() summed
# over the trees (the model's starting score not included).
ref_shap <- function(model, newdata) {
  g <- ref_tree_game(model)
  p <- g$p
  out <- array(0, c(nrow(newdata), p + 1L, g$K))
  for (i in seq_len(nrow(newdata))) {
    vt <- g$values(newdata[i, , drop = FALSE])
    for (ti in seq_len(ncol(vt))) {
      k <- (ti - 1L) %% g$K + 1L
      v <- vt[, ti]
      for (j in seq_len(p)) {
        for (S in g$subsets) {
          if (j %in% S) next
          w <- factorial(length(S)) * factorial(p - length(S) - 1) / factorial(p)
          out[i, j, k] <- out[i, j, k] + w * (v[g$idx(c(S, j))] - v[g$idx(S)])
        }
      }
      out[i, p + 1L, k] <- out[i, p + 1L, k] + v[1L]
    }
  }
  out
}

# The game behind ref_shap and the interaction reference (test-interaction.R):
# the model's feature count p, score count K, every subset S of the features
# (subsets[[b + 1]] for the bit mask b, idx(S) its index) and values(row), a
# matrix of v(S) for each subset (rows) and tree (columns, hb_trees()' order):
# the tree's expected output with the features in S known, a node splitting on
# an unknown feature averaging its children by the training rows below them
# (0 when no row is below it).
ref_tree_game <- function(model) {
  tab <- hb_trees(model)
  feats <- model$feature_names
  p <- length(feats)
  trees <- lapply(split(tab, tab$tree), function(t) split(t, t$id))
  goes_left <- function(nd, v) {
    if (is.na(v)) return(nd$default_left)
    if (identical(nd$split_type, "categorical")) {
      return(as.character(v) %in% strsplit(nd$categories, "||", fixed = TRUE)[[1]])
    }
    as.numeric(v) <= nd$threshold
  }
  cover <- function(t, id) {
    nd <- t[[id]]
    if (nd$is_leaf) nd$count else cover(t, nd$left) + cover(t, nd$right)
  }
  value <- function(t, id, row, S) {
    nd <- t[[id]]
    if (nd$is_leaf) return(nd$value)
    j <- match(nd$feature, feats)
    if (j %in% S) return(value(t, if (goes_left(nd, row[[j]])) nd$left else nd$right, row, S))
    cl <- cover(t, nd$left)
    cr <- cover(t, nd$right)
    # no counted row below (a refit on other rows): the node weighs nothing
    if (cl + cr == 0) return(0)
    (cl * value(t, nd$left, row, S) + cr * value(t, nd$right, row, S)) / (cl + cr)
  }
  subsets <- lapply(0:(2^p - 1), function(b) which(bitwAnd(b, 2^(0:(p - 1))) > 0))
  values <- function(row) {
    vapply(trees, function(t) {
      root <- if ("N0" %in% names(t)) "N0" else "L0"
      vapply(subsets, function(S) value(t, root, row, S), 0)
    }, numeric(length(subsets)))
  }
  list(p = p, K = if (model$task == "multiclass") length(model$classes) else 1L, subsets = subsets,
       idx = function(S) sum(2^(S - 1)) + 1, values = values)
}

# The weighted a-quantile the leaves are refit to, in plain R: the smallest
# value whose cumulative weight reaches a x the total, averaged with the
# next on an exact step (unit weights: quantile(type = 2)).
ref_wquantile <- function(v, w, a) {
  o <- order(v)
  v <- v[o]
  w <- w[o]
  cw <- cumsum(w)
  t <- a * sum(w)
  i <- which(cw >= t)[1L]
  if (cw[i] == t && i < length(v)) (v[i] + v[i + 1L]) / 2 else v[i]
}

# The L2 added to each leaf's output in tree k of `model` (hb_trees ids
# "L<j>"): cat_l2 for a leaf made by a many-vs-many categorical split (its
# factor has more than max_cat_to_onehot - 1 levels), else 0.
leaf_extra_l2 <- function(model, k = 1L) {
  tr <- hb_trees(model)
  tr <- tr[tr$tree == k, ]
  inner <- tr[!tr$is_leaf, ]
  leaves <- tr$id[tr$is_leaf]
  p <- model$params
  onehot <- if (is.null(p$max_cat_to_onehot)) 4L else p$max_cat_to_onehot
  extra <- vapply(leaves, function(id) {
    r <- inner[inner$left %in% id | inner$right %in% id, ]
    if (!nrow(r) || !identical(r$split_type, "categorical")) return(0)
    if (length(model$feature_levels[[r$feature]]) + 1L > onehot) p$cat_l2 else 0
  }, 0)
  stats::setNames(extra, leaves)
}

# LightGBM's categorical split rules (its FeatureHistogram categorical
# threshold search), written out in plain R from the documented behaviour,
# on the per-category sums of one leaf: g, h (gradient and hessian sums) and
# the leaf's n rows and H, one entry per category (the engine's bins: its
# levels in the engine's bin order, then missing values as one more
# category), num_bin = the feature's bins (levels kept in training + 1).
# Returns NULL (no valid split) or list(left = indices of the categories on
# the left, gain = L(left) + L(right) - L(parent)).
ref_cat_split <- function(g, h, n, G, H, num_bin, params) {
  cnt <- ifelse(h * n / H + 0.5 >= 1, floor(h * n / H + 0.5), 0)
  l1 <- params$lambda_l1; l2 <- params$lambda_l2
  parent <- ref_leaf_gain(G, H, l1, l2)
  min_gain <- max(params$min_gain_to_split, 0)
  mdl <- params$min_data_in_leaf; mh <- params$min_sum_hessian_in_leaf
  gain_of <- function(gl, hl, nl, l2c) {
    if (nl < mdl || n - nl < mdl || hl < mh || H - hl < mh) return(-Inf)
    v <- ref_leaf_gain(gl, hl, l1, l2c) + ref_leaf_gain(G - gl, H - hl, l1, l2c) - parent
    if (v > min_gain) v else -Inf
  }
  best <- NULL
  onehot <- if (is.null(params$max_cat_to_onehot)) 4L else params$max_cat_to_onehot
  if (num_bin <= onehot) {
    for (b in seq_along(g)) {
      v <- gain_of(g[b], h[b], cnt[b], l2)
      if (v > 0 && (is.null(best) || v > best$gain)) best <- list(left = b, gain = v)
    }
    return(best)
  }
  used <- which(cnt > 0 & cnt >= params$cat_smooth)
  if (!length(used)) return(NULL)
  key <- g[used] / (h[used] + params$cat_smooth)
  used <- used[order(key, used)]
  kmax <- min(params$max_cat_threshold, (length(used) + 1L) %/% 2L)
  l2c <- l2 + params$cat_l2
  for (dir in 1:2) {
    ord <- if (dir == 1L) used else rev(used)
    group <- 0
    for (k in seq_len(kmax)) {
      left <- ord[seq_len(k)]
      nl <- sum(cnt[left]); hl <- sum(h[left])
      group <- group + cnt[ord[k]]
      if (nl < mdl || hl < mh) next
      if (n - nl < mdl || n - nl < params$min_data_per_group || H - hl < mh) break
      if (group < params$min_data_per_group) next
      group <- 0
      v <- gain_of(sum(g[left]), hl, nl, l2c)
      if (v > 0 && (is.null(best) || v > best$gain)) best <- list(left = left, gain = v)
    }
  }
  best
}

# 1000 rows of two features and three classes, one of them rare: 30 rows of
# "rare" among "big" and "small" (x$a > 0 or not). With
# min_sum_hessian_in_leaf = 50 the rare class's hessian sum (~44) is below
# the limit and the others' (~375) are not (test-objectives.R, test-cuda.R).
rare_class_data <- function() {
  set.seed(41)
  n <- 1000L
  x <- data.frame(a = rnorm(n), b = runif(n))
  y <- ifelse(x$a > 0, "big", "small")
  y[sample(n, 30)] <- "rare"
  list(x = x, y = factor(y))
}

# Rows of x (a data.frame of numeric columns, no missing values) reaching
# each node of tree k of a model: a list named by node id ("N0", "L3").
tree_rows <- function(tr, x, k = 1L) {
  t <- tr[tr$tree == k, ]
  rows <- list()
  walk <- function(id, r) {
    rows[[id]] <<- r
    nd <- t[t$id == id, ]
    if (nd$is_leaf) return(invisible())
    left <- x[[nd$feature]][r] <= nd$threshold
    walk(nd$left, r[left])
    walk(nd$right, r[!left])
  }
  walk(if (any(t$id == "N0")) "N0" else "L0", seq_len(nrow(x)))
  rows
}
