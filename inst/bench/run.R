# Benchmark harness for issue 3: histboost vs lightgbm vs xgboost on seeded synthetic workloads.
#
# Usage (from the repository root):
#   Rscript inst/bench/run.R cpu [--scale 1] [--reps 3] [--threads 2] [--rounds 100] [--max-bin 255]
#                                [--workloads 1,2,3,4,5] [--packages histboost,lightgbm,xgboost]
#                                [--lib PATH] [--out DIR] [--label NAME] [--comment TEXT]
#                                [--wait-policy passive] [--timeout 3600] [--notes FILE] [--keep]
#
# The parent generates each workload once (untimed), saves train and test to .rds files, then runs
# every training in a separate Rscript child (this same file with --child) so that each child's peak
# resident memory belongs to one training only. Children write their numbers to an .rds file that
# the parent reads. See inst/bench/README.md for what is matched and why.

options(warn = 1, stringsAsFactors = FALSE)

# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

bench_defaults <- list(scale = 1, reps = 3L, threads = 2L, rounds = 100L, "max-bin" = 255L,
                       workloads = "1,2,3,4,5", packages = "histboost,lightgbm,xgboost",
                       lib = "", out = "", label = "", comment = "", "wait-policy" = "",
                       timeout = 3600L, notes = "", keep = FALSE)

parse_args <- function(args) {
  opt <- bench_defaults
  pos <- character()
  i <- 1L
  while (i <= length(args)) {
    a <- args[[i]]
    if (startsWith(a, "--")) {
      key <- sub("^--", "", a)
      val <- NULL
      if (grepl("=", key, fixed = TRUE)) {
        val <- sub("^[^=]*=", "", key)
        key <- sub("=.*$", "", key)
      }
      if (key %in% c("keep", "child", "help")) {
        opt[[key]] <- TRUE
        i <- i + 1L
        next
      }
      if (!key %in% names(bench_defaults)) stop("unknown option --", key, call. = FALSE)
      if (is.null(val)) {
        if (i == length(args)) stop("option --", key, " needs a value", call. = FALSE)
        val <- args[[i + 1L]]
        i <- i + 1L
      }
      def <- bench_defaults[[key]]
      opt[[key]] <- if (is.integer(def)) as.integer(val) else if (is.numeric(def)) as.numeric(val) else val
    } else {
      pos <- c(pos, a)
    }
    i <- i + 1L
  }
  opt$positional <- pos
  opt
}

usage <- function() {
  cat("Usage: Rscript inst/bench/run.R cpu [--scale 1] [--reps 3] [--threads 2] [--rounds 100] [--max-bin 255]\n",
      "         [--workloads 1,2,3,4,5] [--packages histboost,lightgbm,xgboost] [--lib PATH]\n",
      "         [--out DIR] [--label NAME] [--comment TEXT] [--wait-policy passive|active]\n",
      "         [--timeout SECONDS] [--notes FILE] [--keep]\n",
      "  --scale    multiplies every workload's row count (0.02 for a smoke run)\n",
      "  --reps     training runs per package and workload; the table shows the median\n",
      "  --max-bin  most bins per feature, the same for every package (default 255)\n",
      "  --lib      a library directory searched first (e.g. a private histboost install)\n",
      "  --out      results directory (default inst/bench/results next to this script)\n",
      "  --label    base name of the result files (default: suite, date, and scale/reps when reduced)\n",
      "  --comment  a line of text put at the top of the results (e.g. what this run is)\n",
      "  --wait-policy  OMP_WAIT_POLICY for every child (default: inherited); passive keeps idle\n",
      "             OpenMP threads from spinning, which on a machine shared with other work stops a\n",
      "             descheduled thread from stalling the others by orders of magnitude\n",
      "  --timeout  seconds one training child may take before it is killed (0: no limit)\n",
      "  --notes    a markdown file appended to the results (e.g. profile findings)\n",
      "  --keep     keep the temporary data and child logs\n", sep = "")
}

script_path <- function() {
  a <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", a[grepl("^--file=", a)])
  if (length(f) == 0L) stop("run this file with Rscript", call. = FALSE)
  normalizePath(f[[1L]])
}

# ---------------------------------------------------------------------------------------------
# Workloads: seeded generators with nonlinear signal and interactions, so that the metrics are
# neither trivial nor noise. Each returns list(train = list(x, y), test = list(x, y)).
# ---------------------------------------------------------------------------------------------

workload_info <- list(
  "1" = list(name = "higgs-like dense binary", rows = 1e6, task = "binary", metric = "auc"),
  "2" = list(name = "dense regression", rows = 1e6, task = "regression", metric = "rmse"),
  "3" = list(name = "multiclass (5 classes)", rows = 5e5, task = "multiclass", metric = "mlogloss"),
  "4" = list(name = "airline-like data.frame (end to end)", rows = 1e6, task = "binary", metric = "auc"),
  "5" = list(name = "wide sparse one-hot dgCMatrix", rows = 5e5, task = "binary", metric = "auc")
)

test_fraction <- 0.2

split_rows <- function(n_train, n_test, x, y) {
  tr <- seq_len(n_train)
  te <- n_train + seq_len(n_test)
  if (is.data.frame(x)) {
    xtr <- x[tr, , drop = FALSE]
    xte <- x[te, , drop = FALSE]
    rownames(xtr) <- NULL
    rownames(xte) <- NULL
  } else {
    xtr <- x[tr, , drop = FALSE]
    xte <- x[te, , drop = FALSE]
  }
  list(train = list(x = xtr, y = y[tr]), test = list(x = xte, y = y[te]))
}

# Invariant mass of two massless objects given (pt, eta, phi): the Higgs data's high-level features
# are of this kind.
pair_mass <- function(pt1, eta1, phi1, pt2, eta2, phi2) {
  sqrt(pmax(2 * pt1 * pt2 * (cosh(eta1 - eta2) - cos(phi1 - phi2)), 0))
}

# For the smaller benchmark scripts (contrib.R, goss.R, objectives.R), which
# source this file: "--name value" pairs over `defaults`, each value taking
# its default's class (an unknown name stops with a pointer to the script's
# usage), a --lib library put first on the search path; the CPU's model and
# a package's version for their result headers.
bench_options <- function(args, defaults, script) {
  opt <- defaults
  i <- 1L
  while (i <= length(args)) {
    key <- gsub("-", "_", sub("^--", "", args[[i]]))
    if (!key %in% names(opt) || i == length(args)) {
      stop(sprintf("usage: see the top of inst/bench/%s", script), call. = FALSE)
    }
    opt[[key]] <- if (is.character(opt[[key]])) args[[i + 1L]] else as(args[[i + 1L]], class(opt[[key]]))
    i <- i + 2L
  }
  if (!is.null(opt$lib) && nzchar(opt$lib)) .libPaths(c(opt$lib, .libPaths()))
  opt
}
# The results folder: `out` when given, else inst/bench/results beside the
# script (`here`); created if missing.
bench_out <- function(out, here) {
  if (!nzchar(out)) out <- file.path(here, "results")
  dir.create(out, showWarnings = FALSE, recursive = TRUE)
  out
}
# Train and test rows of the Higgs-shaped data (a fifth as many test rows),
# drawn from `seed`.
higgs_split <- function(n, seed) {
  set.seed(seed)
  nt <- as.integer(n / 5)
  w <- gen_higgs(n + nt)
  list(xtr = w$x[seq_len(n), ], ytr = w$y[seq_len(n)], xte = w$x[n + seq_len(nt), ], yte = w$y[n + seq_len(nt)])
}
bench_cpu <- function() {
  tryCatch(sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
           error = function(e) "unknown")
}
bench_version <- function(p) {
  if (requireNamespace(p, quietly = TRUE)) as.character(utils::packageVersion(p)) else "not installed"
}

gen_higgs <- function(n) {
  pt <- function() 0.3 + rgamma(n, shape = 2, rate = 2)
  eta <- function() pmax(pmin(rnorm(n, sd = 1.1), 2.5), -2.5)
  phi <- function() runif(n, -pi, pi)
  btag <- function() sample(c(0, 1.09, 2.17), n, replace = TRUE, prob = c(0.6, 0.25, 0.15))
  l_pt <- pt(); l_eta <- eta(); l_phi <- phi()
  met <- 0.2 + rgamma(n, shape = 1.5, rate = 1.8); met_phi <- phi()
  j <- lapply(1:4, function(k) list(pt = pt(), eta = eta(), phi = phi(), b = btag()))
  m_jj <- pair_mass(j[[1]]$pt, j[[1]]$eta, j[[1]]$phi, j[[2]]$pt, j[[2]]$eta, j[[2]]$phi)
  m_bb <- pair_mass(j[[3]]$pt, j[[3]]$eta, j[[3]]$phi, j[[4]]$pt, j[[4]]$eta, j[[4]]$phi)
  m_lv <- pair_mass(l_pt, l_eta, l_phi, met, 0, met_phi)
  m_jlv <- sqrt(m_lv^2 + pair_mass(l_pt, l_eta, l_phi, j[[1]]$pt, j[[1]]$eta, j[[1]]$phi)^2)
  m_jjj <- sqrt(m_jj^2 + pair_mass(j[[2]]$pt, j[[2]]$eta, j[[2]]$phi, j[[3]]$pt, j[[3]]$eta, j[[3]]$phi)^2)
  m_wbb <- sqrt(m_bb^2 + m_lv^2)
  m_wwbb <- sqrt(m_wbb^2 + m_jj^2)
  x <- cbind(lepton_pt = l_pt, lepton_eta = l_eta, lepton_phi = l_phi,
             met = met, met_phi = met_phi,
             do.call(cbind, lapply(1:4, function(k) {
               m <- cbind(j[[k]]$pt, j[[k]]$eta, j[[k]]$phi, j[[k]]$b)
               colnames(m) <- paste0("jet", k, c("_pt", "_eta", "_phi", "_btag"))
               m
             })),
             m_jj = m_jj, m_jjj = m_jjj, m_lv = m_lv, m_jlv = m_jlv, m_bb = m_bb,
             m_wbb = m_wbb, m_wwbb = m_wwbb)
  # Signal: a resonance window in m_bb, b-tag coincidence, angular correlation gated by MET,
  # a product of momenta, and a mild dependence on pseudorapidity.
  score <- 1.6 * exp(-((m_bb - 1.2) / 0.35)^2) +
    0.7 * (j[[3]]$b > 1) * (j[[4]]$b > 1) +
    0.6 * cos(l_phi - met_phi) * (met > 0.9) +
    0.8 * tanh(l_pt * j[[1]]$pt - 1.2) -
    0.35 * abs(l_eta) + 0.4 * sin(2 * m_jj) * (m_wwbb > 2.5) +
    0.25 * log(m_wwbb + 0.1) - 0.55
  y <- as.numeric(runif(n) < plogis(1.3 * score))
  list(x = x, y = y)
}

gen_regression <- function(n, p = 100L) {
  u <- matrix(runif(n * 25), n, 25)
  z <- matrix(rnorm(n * 50), n, 50)
  corr <- 0.7 * z[, 1:15] + 0.3 * matrix(rnorm(n * 15), n, 15)
  disc <- matrix(sample.int(8L, n * 10, replace = TRUE) - 1, n, 10)
  x <- cbind(u, z, corr, disc)
  stopifnot(ncol(x) == p)
  colnames(x) <- sprintf("f%03d", seq_len(p))
  # Friedman #1 on the uniforms plus interactions across blocks and a small linear tail.
  y <- 10 * sin(pi * u[, 1] * u[, 2]) + 20 * (u[, 3] - 0.5)^2 + 10 * u[, 4] + 5 * u[, 5] +
    3 * z[, 1] * z[, 2] + 2 * abs(z[, 3]) * (z[, 4] > 0) + 4 * (disc[, 1] >= 5) * u[, 6] +
    2 * sin(3 * z[, 5]) * (u[, 7] > 0.5) + 0.15 * rowSums(z[, 11:30]) +
    rnorm(n, sd = 2)
  list(x = x, y = y)
}

gen_multiclass <- function(n, p = 50L, k = 5L) {
  x <- cbind(matrix(rnorm(n * 40), n, 40), matrix(runif(n * 10, -2, 2), n, 10))
  colnames(x) <- sprintf("f%02d", seq_len(p))
  s <- cbind(
    1.5 * sin(x[, 1]) + x[, 2] * x[, 3],
    (x[, 4]^2 - 1) + 0.8 * x[, 5] * (x[, 6] > 0),
    tanh(2 * x[, 7]) - 0.5 * x[, 1] * x[, 8] + 0.5 * (x[, 41] > 1),
    abs(x[, 9]) + 0.5 * x[, 10] * x[, 2] - 0.8,
    0.7 * cos(x[, 42] * x[, 43]) + 0.3 * x[, 11]
  )
  s <- 1.4 * s
  pr <- exp(s - apply(s, 1L, max))
  pr <- pr / rowSums(pr)
  cum <- pr %*% upper.tri(diag(k), diag = TRUE)
  y <- as.numeric(rowSums(cum < runif(n)))  # 0 .. k-1
  y <- pmin(y, k - 1)
  list(x = x, y = y)
}

zipf <- function(n, levels, a = 1.1) sample.int(levels, n, replace = TRUE, prob = 1 / seq_len(levels)^a)

gen_airline <- function(n) {
  lv <- function(prefix, k) sprintf("%s%04d", prefix, seq_len(k))
  month <- sample.int(12L, n, replace = TRUE)
  dom <- sample.int(31L, n, replace = TRUE)
  dow <- sample.int(7L, n, replace = TRUE)
  carrier <- zipf(n, 22L, 0.8)
  origin <- zipf(n, 300L)
  dest <- zipf(n, 300L)
  tail <- zipf(n, 5000L, 0.6)
  hour <- pmin(pmax(round(rnorm(n, 13, 4.5)), 0), 23)
  dep_time <- hour * 100 + sample.int(60L, n, replace = TRUE) - 1
  distance <- round(exp(rnorm(n, 6.5, 0.6)))
  elapsed <- round(distance / 7.5 + 25 + rnorm(n, sd = 10))
  taxi_out <- rgamma(n, shape = 3, rate = 0.2)
  wind <- rgamma(n, shape = 2, rate = 0.25)
  # Per-level effects: drawn from the same seeded stream, so every run sees the same world.
  e_carrier <- rnorm(22L, sd = 0.4); e_origin <- rnorm(300L, sd = 0.3)
  e_dest <- rnorm(300L, sd = 0.3); e_tail <- rnorm(5000L, sd = 0.5)
  e_month <- rnorm(12L, sd = 0.25); carrier_evening <- rnorm(22L, sd = 0.5)
  dep_missing <- runif(n) < 0.03
  logit <- -1.5 + e_carrier[carrier] + e_origin[origin] + e_dest[dest] + e_tail[tail] +
    e_month[month] + 0.9 * plogis((hour - 15) / 1.5) * (1 + carrier_evening[carrier]) +
    0.6 * (dow %in% c(5L, 7L)) * (e_origin[origin] > 0) + 0.3 * sin(distance / 300) +
    0.03 * pmax(taxi_out - 20, 0) + 0.04 * pmax(wind - 15, 0) * (month %in% c(12L, 1L, 2L)) +
    1.2 * dep_missing
  y <- as.numeric(runif(n) < plogis(logit))
  dep_time[dep_missing] <- NA
  distance[runif(n) < 0.01] <- NA
  taxi_out[runif(n) < 0.05] <- NA
  wind[runif(n) < 0.02] <- NA
  tail_f <- factor(lv("N", 5000L)[tail], levels = lv("N", 5000L))
  tail_f[runif(n) < 0.02] <- NA
  x <- data.frame(
    Month = factor(month.abb[month], levels = month.abb),
    DayofMonth = dom,
    DayOfWeek = dow,
    DepTime = dep_time,
    UniqueCarrier = factor(lv("C", 22L)[carrier], levels = lv("C", 22L)),
    Origin = factor(lv("O", 300L)[origin], levels = lv("O", 300L)),
    Dest = factor(lv("D", 300L)[dest], levels = lv("D", 300L)),
    TailNum = tail_f,
    Distance = distance,
    CRSElapsedTime = elapsed,
    TaxiOut = taxi_out,
    WindSpeed = wind
  )
  list(x = x, y = y)
}

gen_sparse <- function(n, fields = 10L, levels_per_field = 500L) {
  lev <- vapply(seq_len(fields), function(f) zipf(n, levels_per_field, 0.9), integer(n))
  present <- matrix(runif(n * fields) >= 0.03, n, fields)  # ~9.7 nonzeros per row
  eff <- matrix(rnorm(fields * levels_per_field, sd = 0.45), levels_per_field, fields)
  logit <- -0.3 + rowSums(ifelse(present, eff[cbind(as.vector(lev), rep(seq_len(fields), each = n))], 0))
  # Interactions between fields: a matching rule and a group-by-group table.
  logit <- logit + 1.0 * (present[, 1] & present[, 2] & (lev[, 1] %% 7L == lev[, 2] %% 7L))
  tab <- matrix(rnorm(25, sd = 0.8), 5, 5)
  logit <- logit + ifelse(present[, 3] & present[, 4], tab[cbind(lev[, 3] %% 5L + 1L, lev[, 4] %% 5L + 1L)], 0)
  y <- as.numeric(runif(n) < plogis(logit))
  i <- rep(seq_len(n), fields)[as.vector(present)]
  j <- (rep(seq_len(fields), each = n) - 1L) * levels_per_field + as.vector(lev)
  j <- j[as.vector(present)]
  x <- Matrix::sparseMatrix(i = i, j = j, x = 1, dims = c(n, fields * levels_per_field))
  colnames(x) <- sprintf("f%d_l%03d", rep(seq_len(fields), each = levels_per_field),
                         rep(seq_len(levels_per_field), fields))
  list(x = x, y = y)
}

generate_workload <- function(w, scale) {
  info <- workload_info[[as.character(w)]]
  n_train <- max(200L, as.integer(round(info$rows * scale)))
  n_test <- max(100L, as.integer(round(n_train * test_fraction)))
  n <- n_train + n_test
  RNGkind("Mersenne-Twister", "Inversion", "Rejection")
  set.seed(20240300L + w)
  d <- switch(as.character(w),
              "1" = gen_higgs(n), "2" = gen_regression(n), "3" = gen_multiclass(n),
              "4" = gen_airline(n), "5" = gen_sparse(n))
  split_rows(n_train, n_test, d$x, d$y)
}

# ---------------------------------------------------------------------------------------------
# Metrics: plain R, the same code for every package.
# ---------------------------------------------------------------------------------------------

metric_auc <- function(y, p) {
  r <- rank(p)  # average ranks for ties
  n1 <- as.numeric(sum(y == 1))  # double: n1 * n0 overflows an integer past ~92,000 rows of each class
  n0 <- length(y) - n1
  (sum(r[y == 1]) - n1 * (n1 + 1) / 2) / (n1 * n0)
}
metric_rmse <- function(y, p) sqrt(mean((y - p)^2))
metric_mlogloss <- function(y, p) {
  p <- pmin(pmax(p[cbind(seq_along(y), y + 1)], 1e-15), 1 - 1e-15)
  -mean(log(p))
}
compute_metric <- function(metric, y, p) {
  switch(metric, auc = metric_auc(y, p), rmse = metric_rmse(y, p), mlogloss = metric_mlogloss(y, p))
}

# ---------------------------------------------------------------------------------------------
# Package adapters. train(x, y, task, p) returns a model; predict(model, x, task, p) returns a
# vector (binary: P(y = 1); regression) or an n x K matrix (multiclass). Both include whatever
# conversion the package needs from the R object the workload provides.
# ---------------------------------------------------------------------------------------------

n_classes <- 5L

factor_columns <- function(df) names(df)[vapply(df, is.factor, logical(1))]

# xgboost's R package reads factor columns of a data.frame as native categorical features from
# version 2 on (CRAN went from 1.7.x straight to 3.x, which needs R >= 4.3). Version 1.7.x takes
# only matrices, so factors are one-hot encoded there. Decided from the installed version and the
# arguments xgb.DMatrix() has, not assumed.
xgb_native_categorical <- function() {
  utils::packageVersion("xgboost") >= "2.0.0" &&
    "feature_types" %in% names(formals(xgboost::xgb.DMatrix))
}

# One-hot dgCMatrix for xgboost 1.x: numeric columns as they are (NA kept, read as missing),
# each factor level one indicator column (an NA factor value gets no 1, so it reads as "none of
# the levels", which xgboost's missing-value direction then handles).
onehot_sparse <- function(df) {
  n <- nrow(df)
  blocks <- lapply(names(df), function(nm) {
    col <- df[[nm]]
    if (is.factor(col)) {
      code <- as.integer(col)
      ok <- which(!is.na(code))
      m <- Matrix::sparseMatrix(i = ok, j = code[ok], x = 1, dims = c(n, nlevels(col)))
      colnames(m) <- paste0(nm, "=", levels(col))
      m
    } else {
      m <- Matrix::sparseMatrix(i = seq_len(n), j = rep(1L, n), x = as.numeric(col), dims = c(n, 1L))
      colnames(m) <- nm
      m
    }
  })
  do.call(cbind, blocks)
}

adapters <- list(
  histboost = list(
    train = function(x, y, task, p) {
      yy <- switch(task, regression = y, binary = factor(y, levels = c(0, 1)),
                   multiclass = factor(y, levels = seq_len(n_classes) - 1))
      histboost::histboost(x, yy, nrounds = p$rounds, objective = task, learning_rate = 0.1,
                           num_leaves = 255L, max_depth = -1L, min_data_in_leaf = 20L,
                           max_bin = p$max_bin, nthreads = p$threads, seed = 1L, verbose = 0L)
    },
    predict = function(m, x, task, p) {
      pr <- stats::predict(m, x, type = "response", nthreads = p$threads)
      if (task == "multiclass") pr <- pr[, as.character(seq_len(n_classes) - 1), drop = FALSE]
      pr
    }
  ),
  lightgbm = list(
    params = function(task, p) {
      c(list(objective = switch(task, regression = "regression", binary = "binary",
                                multiclass = "multiclass"),
             num_leaves = 255L, max_depth = -1L, learning_rate = 0.1, min_data_in_leaf = 20L,
             min_sum_hessian_in_leaf = 1e-3, max_bin = p$max_bin, num_threads = p$threads,
             verbose = -1L, seed = 1L),
        if (task == "multiclass") list(num_class = n_classes))
    },
    train = function(x, y, task, p) {
      cat_cols <- NULL
      if (is.data.frame(x)) {
        # lightgbm takes a matrix: factors become their integer codes (1..K, NA stays NA, which
        # lightgbm reads as missing) and are declared categorical. data.matrix() is the cheapest
        # correct conversion; lgb.convert_with_rules() does the same coding, slower, and maps NA
        # to the category 0. The test set has the same factor levels, so the codes agree.
        cat_cols <- factor_columns(x)
        x <- data.matrix(x)
      }
      params <- adapters$lightgbm$params(task, p)
      ds <- lightgbm::lgb.Dataset(x, label = y, params = list(max_bin = p$max_bin, verbose = -1L),
                                  categorical_feature = cat_cols)
      lightgbm::lgb.train(params = params, data = ds, nrounds = p$rounds, verbose = -1L)
    },
    predict = function(m, x, task, p) {
      if (is.data.frame(x)) x <- data.matrix(x)
      pr <- stats::predict(m, x, params = list(num_threads = p$threads))
      if (task == "multiclass" && is.null(dim(pr))) pr <- matrix(pr, ncol = n_classes, byrow = TRUE)
      pr
    }
  ),
  xgboost = list(
    params = function(task, y, p) {
      # min_child_weight: xgboost has no row-count minimum, only a hessian sum. Use 20 rows'
      # worth of hessian at the starting score: 1 per row for squared error, p(1-p) for the
      # logistic loss at the label mean, 2 (1/K)(1 - 1/K) for xgboost's softmax (see README).
      h0 <- switch(task, regression = 1, binary = mean(y) * (1 - mean(y)),
                   multiclass = 2 * (1 / n_classes) * (1 - 1 / n_classes))
      c(list(booster = "gbtree",
             objective = switch(task, regression = "reg:squarederror", binary = "binary:logistic",
                                multiclass = "multi:softprob"),
             tree_method = "hist", grow_policy = "lossguide", max_leaves = 255L, max_depth = 0L,
             max_bin = p$max_bin, eta = 0.1, min_child_weight = 20 * h0,
             # lightgbm and histboost default to no L2 penalty (xgboost's default lambda is 1).
             lambda = 0, alpha = 0, gamma = 0, nthread = p$threads, seed = 1L, verbosity = 0L),
        if (task == "multiclass") list(num_class = n_classes),
        # Start from the label mean like lightgbm and histboost (xgboost 1.x starts at 0.5).
        if (task != "multiclass") list(base_score = mean(y)),
        # Categorical splits as lightgbm's and histboost's defaults allow (xgboost's is 64).
        if (isTRUE(p$xgb_categorical)) list(max_cat_threshold = 32L))
    },
    # The DMatrix: a data.frame goes in as it is where xgboost reads factors natively, else
    # one-hot encoded. Absent entries of a dgCMatrix are missing values to xgboost (its sparse
    # convention), which for one-hot columns learns the same splits as 0.
    dmatrix = function(x, y, p) {
      if (is.data.frame(x) && !isTRUE(p$xgb_categorical)) x <- onehot_sparse(x)
      if (is.null(y)) xgboost::xgb.DMatrix(x, missing = NA, nthread = p$threads)
      else xgboost::xgb.DMatrix(x, label = y, missing = NA, nthread = p$threads)
    },
    train = function(x, y, task, p) {
      p$xgb_categorical <- is.data.frame(x) && xgb_native_categorical()
      d <- adapters$xgboost$dmatrix(x, y, p)
      xgboost::xgb.train(params = adapters$xgboost$params(task, y, p), data = d,
                         nrounds = p$rounds, verbose = 0)
    },
    predict = function(m, x, task, p) {
      p$xgb_categorical <- is.data.frame(x) && xgb_native_categorical()
      d <- adapters$xgboost$dmatrix(x, NULL, p)
      pr <- stats::predict(m, d)
      if (task == "multiclass" && is.null(dim(pr))) pr <- matrix(pr, ncol = n_classes, byrow = TRUE)
      pr
    }
  )
)

peer_install <- list(
  lightgbm = 'Rscript -e \'install.packages("lightgbm", repos = "https://cloud.r-project.org")\'',
  # CRAN's current xgboost (3.x) needs R >= 4.3; on an older R, install.packages() finds none.
  xgboost = paste0(
    'Rscript -e \'install.packages("xgboost", repos = "https://cloud.r-project.org")\'   # R >= 4.3\n',
    '    # on R < 4.3 (e.g. 4.2.2): the newest xgboost_1.7.*.tar.gz from CRAN\'s archive,\n',
    '    # https://cloud.r-project.org/src/contrib/Archive/xgboost/ , then R CMD INSTALL xgboost_1.7.*.tar.gz'),
  histboost = "R CMD INSTALL .   # from the repository root (or: R CMD INSTALL -l /tmp/benchlib . and pass --lib /tmp/benchlib)"
)

# ---------------------------------------------------------------------------------------------
# Child: one training (and the prediction with it), in its own process.
# ---------------------------------------------------------------------------------------------

proc_status_kb <- function(field) {
  s <- readLines("/proc/self/status")
  v <- s[startsWith(s, paste0(field, ":"))]
  if (length(v) == 0L) return(NA_real_)
  as.numeric(gsub("[^0-9]", "", v))
}

# Microseconds that some runnable task has waited for a CPU, system-wide (Linux pressure stall
# information). Its growth over the training, as a share of the wall time, tells how much other
# load was competing for the cores: on a shared machine that, not the package, can dominate a time.
cpu_stall_us <- function() {
  l <- tryCatch(readLines("/proc/pressure/cpu", n = 1L), error = function(e) character(),
                warning = function(w) character())
  if (!length(l)) return(NA_real_)
  as.numeric(sub(".*total=([0-9]+).*", "\\1", l))
}

# Writing 5 to clear_refs resets the peak RSS (Linux >= 4.0), so that VmHWM afterwards covers
# the training only, not reading the data.
reset_peak_rss <- function() {
  ok <- tryCatch({ writeLines("5", "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE,
                 warning = function(w) FALSE)
  ok && proc_status_kb("VmHWM") <= proc_status_kb("VmRSS") + 1024
}

child_main <- function(opt) {
  a <- opt$positional  # package workload train.rds test.rds result.rds
  pkg <- a[[1]]; w <- a[[2]]; train_file <- a[[3]]; test_file <- a[[4]]; result_file <- a[[5]]
  info <- workload_info[[w]]
  p <- list(threads = opt$threads, rounds = opt$rounds, max_bin = opt[["max-bin"]])
  ad <- adapters[[pkg]]
  suppressPackageStartupMessages(library(pkg, character.only = TRUE))
  tr <- readRDS(train_file)
  invisible(gc(full = TRUE))
  peak_reset <- reset_peak_rss()
  rss_before <- proc_status_kb("VmRSS")
  stall0 <- cpu_stall_us()
  t0 <- proc.time()
  model <- ad$train(tr$x, tr$y, info$task, p)
  t1 <- proc.time()
  train_s <- t1[["elapsed"]] - t0[["elapsed"]]
  # CPU seconds of this process (children are none): above threads x wall means spinning.
  train_cpu_s <- sum(t1[c("user.self", "sys.self")]) - sum(t0[c("user.self", "sys.self")])
  # PSI totals are updated lazily, so a short window can read a little over 100%.
  stall_pct <- min(100, 100 * (cpu_stall_us() - stall0) / 1e6 / max(train_s, 1e-9))
  peak_kb <- proc_status_kb("VmHWM")
  rm(tr)
  invisible(gc(full = TRUE))
  te <- readRDS(test_file)
  invisible(gc(full = TRUE))
  t0 <- proc.time()[["elapsed"]]
  pred <- ad$predict(model, te$x, info$task, p)
  predict_s <- proc.time()[["elapsed"]] - t0
  metric <- compute_metric(info$metric, te$y, pred)
  saveRDS(list(train_s = train_s, train_cpu_s = train_cpu_s, cpu_stall_pct = stall_pct,
               predict_s = predict_s, test_rows = length(te$y),
               peak_rss_mb = peak_kb / 1024, base_rss_mb = rss_before / 1024,
               peak_reset = peak_reset, metric = metric,
               input = input_note(pkg, te$x)), result_file)
}

# How the package was given the workload's R object, for the results table.
input_note <- function(pkg, x) {
  if (is.data.frame(x)) {
    return(switch(pkg,
                  histboost = "data.frame, factors native",
                  lightgbm = "data.matrix(), factors as categorical_feature",
                  xgboost = if (xgb_native_categorical()) "data.frame, factors native categorical"
                            else "one-hot dgCMatrix (no R categorical support in this version)"))
  }
  if (inherits(x, "dgCMatrix")) return("dgCMatrix")
  "numeric matrix"
}

# ---------------------------------------------------------------------------------------------
# Parent
# ---------------------------------------------------------------------------------------------

machine_info <- function() {
  cpu <- tryCatch({
    l <- readLines("/proc/cpuinfo")
    m <- unique(sub("^model name\\s*:\\s*", "", l[grepl("^model name", l)]))
    if (length(m)) m[[1]] else NA_character_
  }, error = function(e) NA_character_)
  mem <- tryCatch({
    l <- readLines("/proc/meminfo")
    round(as.numeric(gsub("[^0-9]", "", l[startsWith(l, "MemTotal:")])) / 1024^2, 1)
  }, error = function(e) NA_real_)
  list(cpu = cpu, cores = parallel::detectCores(logical = TRUE), mem_gib = mem,
       os = paste(Sys.info()[["sysname"]], Sys.info()[["release"]]),
       r = R.version.string)
}

# 1-, 5- and 15-minute load averages: on a shared machine, the times mean little without them.
load_average <- function() {
  tryCatch(paste(strsplit(readLines("/proc/loadavg", n = 1L), " ")[[1]][1:3], collapse = " "),
           error = function(e) NA_character_)
}

pkg_version <- function(p) tryCatch(as.character(utils::packageVersion(p)), error = function(e) NA_character_)

git_commit <- function(dir) {
  # --dirty: a benchmark of uncommitted engine changes must say so.
  out <- tryCatch(suppressWarnings(system2("git", c("-C", shQuote(dir), "describe", "--always", "--dirty"),
                                           stdout = TRUE, stderr = FALSE)),
                  error = function(e) character())
  if (length(out) == 1L && nzchar(out)) out else NA_character_
}

# The packages that load, and for each one that does not, why (it is skipped, not fatal).
check_packages <- function(pkgs) {
  ok <- character()
  skipped <- character()
  for (p in pkgs) {
    if (!p %in% names(adapters)) stop("unknown package '", p, "'", call. = FALSE)
    res <- tryCatch({ suppressPackageStartupMessages(loadNamespace(p)); "" },
                    error = function(e) conditionMessage(e))
    if (nzchar(res)) {
      res <- gsub("\\s+", " ", res)
      cat(sprintf("SKIP %s: it cannot be loaded (%s)\n  install it with:\n    %s\n",
                  p, res, peer_install[[p]]))
      skipped[[p]] <- res
    } else {
      ok <- c(ok, p)
    }
  }
  list(ok = ok, skipped = skipped)
}

run_child <- function(self, opt, pkg, w, train_file, test_file, result_file, log_file) {
  rscript <- file.path(R.home("bin"), "Rscript")
  args <- c(shQuote(self), "--child", "--threads", opt$threads, "--rounds", opt$rounds, "--max-bin", opt[["max-bin"]],
            if (nzchar(opt$lib)) c("--lib", shQuote(opt$lib)),
            pkg, w, shQuote(train_file), shQuote(test_file), shQuote(result_file))
  cmd <- rscript
  if (nzchar(Sys.which("timeout")) && opt$timeout > 0) {
    args <- c(as.character(opt$timeout), shQuote(rscript), args)
    cmd <- Sys.which("timeout")
  }
  # Every package is also given the thread count explicitly; the environment covers OpenMP
  # regions a package does not size itself (and BLAS-like helpers).
  env <- c(sprintf("OMP_NUM_THREADS=%d", opt$threads),
           sprintf("HISTBOOST_NUM_THREADS=%d", opt$threads),
           if (nzchar(opt[["wait-policy"]])) sprintf("OMP_WAIT_POLICY=%s", opt[["wait-policy"]]))
  status <- system2(cmd, args, stdout = log_file, stderr = log_file, env = env)
  if (file.exists(result_file)) return(readRDS(result_file))
  tail_log <- tryCatch(utils::tail(readLines(log_file, warn = FALSE), 6), error = function(e) "")
  list(error = sprintf("child exited with status %s: %s", status, paste(tail_log, collapse = " | ")))
}

# Seconds to 3 significant digits (no trailing "." as formatC's "fg" with "#" gives for 109).
fmt <- function(x) ifelse(is.na(x), "NA", ifelse(x >= 100, sprintf("%.0f", x), sprintf("%.3g", x)))
fmt_rate <- function(x) ifelse(is.na(x), "NA", formatC(x, format = "d", big.mark = ","))

# Higher is better for AUC, lower for RMSE and multi-logloss.
metric_better <- function(metric) if (metric == "auc") max else min

summarise <- function(results, opt) {
  rows <- list()
  for (r in results) {
    ok <- Filter(function(x) is.null(x$error), r$runs)
    err <- Filter(function(x) !is.null(x$error), r$runs)
    med <- function(f) if (length(ok)) stats::median(vapply(ok, function(x) x[[f]], numeric(1))) else NA_real_
    rows[[length(rows) + 1L]] <- data.frame(
      workload = r$w, workload_name = workload_info[[r$w]]$name, package = r$pkg,
      version = pkg_version(r$pkg), train_rows = r$n_train, test_rows = r$n_test,
      n_ok = length(ok), train_s = med("train_s"), train_cpu_s = med("train_cpu_s"),
      cpu_stall_pct = med("cpu_stall_pct"),
      predict_rows_per_s = if (length(ok)) med("test_rows") / med("predict_s") else NA_real_,
      peak_rss_mb = med("peak_rss_mb"), train_rss_increase_mb = med("peak_rss_mb") - med("base_rss_mb"),
      metric_name = workload_info[[r$w]]$metric, metric = med("metric"),
      input = if (length(ok)) ok[[1]]$input else "",
      error = if (length(err)) err[[1]]$error else "", stringsAsFactors = FALSE)
  }
  tab <- do.call(rbind, rows)
  # Ratios of histboost to the best peer (time and memory: lower is better, so ratio < 1 wins;
  # prediction rate: higher is better, so ratio > 1 wins; metric: the ratio, and the difference
  # histboost - best, which is what the AUC and logloss goals are stated in).
  tab$ratio_train <- NA_real_; tab$ratio_predict <- NA_real_; tab$ratio_peak_rss <- NA_real_
  tab$ratio_metric <- NA_real_; tab$metric_diff <- NA_real_; tab$best_peer_train <- NA_character_
  for (w in unique(tab$workload)) {
    hb <- which(tab$workload == w & tab$package == "histboost" & tab$n_ok > 0)
    peers <- tab[tab$workload == w & tab$package != "histboost" & tab$n_ok > 0, , drop = FALSE]
    if (length(hb) != 1L || nrow(peers) == 0L) next
    bt <- which.min(peers$train_s)
    tab$best_peer_train[hb] <- peers$package[bt]
    tab$ratio_train[hb] <- tab$train_s[hb] / peers$train_s[bt]
    tab$ratio_predict[hb] <- tab$predict_rows_per_s[hb] / max(peers$predict_rows_per_s)
    tab$ratio_peak_rss[hb] <- tab$peak_rss_mb[hb] / min(peers$peak_rss_mb)
    best_metric <- metric_better(tab$metric_name[hb])(peers$metric)
    tab$ratio_metric[hb] <- tab$metric[hb] / best_metric
    tab$metric_diff[hb] <- tab$metric[hb] - best_metric
  }
  tab
}

goal_lines <- function(tab) {
  out <- character()
  if (!any(tab$package == "histboost" & tab$n_ok > 0)) {
    return("- Goals not evaluated: histboost has no successful run in this table.")
  }
  for (i in which(tab$package == "histboost" & tab$n_ok > 0)) {
    w <- tab$workload[i]
    peers <- tab[tab$workload == w & tab$package != "histboost" & tab$n_ok > 0, , drop = FALSE]
    lab <- sprintf("workload %s (%s)", w, tab$workload_name[i])
    if (nrow(peers) == 0L) {
      out <- c(out, sprintf("- %s: no peer result, goals not evaluated.", lab))
      next
    }
    train_goal <- switch(w, "1" = 0.7, "2" = 0.7, "3" = 0.7, "4" = 0.5, NA_real_)
    if (is.na(train_goal)) {
      out <- c(out, sprintf("- %s: training %.2fx the best peer (%s); the issue sets no training goal here.",
                            lab, tab$ratio_train[i], tab$best_peer_train[i]))
    } else {
      r <- tab$ratio_train[i]
      if (r <= train_goal) {
        out <- c(out, sprintf("- %s: training %.2fx the best peer (%s), goal <= %.2fx: met.",
                              lab, r, tab$best_peer_train[i], train_goal))
      } else {
        out <- c(out, sprintf(paste0("- %s: training MISSED: %.2fx the best peer (%s: %.3g s vs %.3g s), ",
                                     "goal <= %.2fx; needs %.0f%% less training time (%.3g s)."),
                              lab, r, tab$best_peer_train[i], tab$train_s[i],
                              tab$train_s[i] / r, train_goal, 100 * (1 - train_goal / r),
                              tab$train_s[i] * (1 - train_goal / r)))
      }
    }
    m <- tab$metric_name[i]; d <- tab$metric_diff[i]
    best <- tab$metric[i] - d
    miss <- switch(m, auc = -d - 0.001, rmse = tab$metric[i] / best - 1.005, mlogloss = d - 0.005)
    what <- switch(m, auc = sprintf("AUC %.4f vs best peer %.4f (allowed 0.001 lower)", tab$metric[i], best),
                   rmse = sprintf("RMSE %.4g vs best peer %.4g (allowed 0.5%% higher)", tab$metric[i], best),
                   mlogloss = sprintf("multi-logloss %.4f vs best peer %.4f (allowed 0.005 higher)", tab$metric[i], best))
    out <- c(out, if (miss <= 0) sprintf("- %s: metric met: %s.", lab, what)
             else sprintf("- %s: metric MISSED by %s: %s.", lab,
                          if (m == "rmse") sprintf("%.2f%%", 100 * miss) else sprintf("%.4f", miss), what))
    rp <- tab$ratio_predict[i]
    out <- c(out, if (rp >= 1.5) sprintf("- %s: prediction %.2fx the best peer's rows/s, goal >= 1.5x: met.", lab, rp)
             else sprintf("- %s: prediction MISSED: %.2fx the best peer's rows/s, goal >= 1.5x; needs %.2fx faster prediction.",
                          lab, rp, 1.5 / rp))
    rm_ <- tab$ratio_peak_rss[i]
    out <- c(out, if (rm_ <= 1) sprintf("- %s: peak training RSS %.2fx the best peer's, goal <= 1x: met.", lab, rm_)
             else sprintf("- %s: peak training RSS MISSED: %.2fx the best peer's (%.0f MB vs %.0f MB); needs %.0f MB less.",
                          lab, rm_, tab$peak_rss_mb[i], tab$peak_rss_mb[i] / rm_,
                          tab$peak_rss_mb[i] - tab$peak_rss_mb[i] / rm_))
  }
  out
}

# The arguments as a shell would need them typed (quoted where they hold spaces and the like).
command_line <- function(argv) {
  paste(vapply(argv, function(a) if (grepl("^[A-Za-z0-9_./,=:+-]+$", a)) a else shQuote(a), ""),
        collapse = " ")
}

write_results <- function(tab, opt, machine, pkgs_skipped, self, started, peak_reset) {
  # The issue's benchmark is full size with 3 reps; anything less is labelled as reduced.
  reduced <- opt$scale < 1 || opt$reps < 3L
  out_dir <- if (nzchar(opt$out)) opt$out else file.path(dirname(self), "results")
  dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)
  stamp <- format(started, "%Y-%m-%d")
  base <- if (nzchar(opt$label)) opt$label else
    sprintf("%s-%s%s", opt$suite, stamp,
            if (reduced) sprintf("-scale%s-reps%d", format(opt$scale), opt$reps) else "")
  csv <- file.path(out_dir, paste0(base, ".csv"))
  md <- file.path(out_dir, paste0(base, ".md"))
  repo <- dirname(dirname(dirname(self)))
  commit <- git_commit(repo)
  hb_lib <- tryCatch(dirname(find.package("histboost")), error = function(e) NA_character_)
  meta <- data.frame(date = format(started, "%Y-%m-%d %H:%M:%S %Z"), suite = opt$suite,
                     scale = opt$scale, reps = opt$reps, threads = opt$threads, rounds = opt$rounds,
                     cpu = machine$cpu, cores = machine$cores, mem_gib = machine$mem_gib,
                     os = machine$os, r_version = machine$r, histboost_commit = commit,
                     wait_policy = opt[["wait-policy"]],
                     load_start = machine$load_start, load_end = machine$load_end,
                     stringsAsFactors = FALSE)
  utils::write.csv(cbind(tab, meta[rep(1L, nrow(tab)), , drop = FALSE]), csv, row.names = FALSE)

  L <- character()
  title <- sprintf("# histboost %s benchmark, %s", opt$suite, stamp)
  L <- c(L, title, "")
  if (nzchar(opt$comment)) L <- c(L, paste0("**", opt$comment, "**"), "")
  if (reduced) {
    L <- c(L, sprintf(paste0("**Reduced run**: scale %s of the issue's row counts, %d rep(s) (the issue asks for ",
                             "scale 1 and the median of 3). Times do not scale linearly with rows, and one rep ",
                             "on a busy machine is noisy: read the ratios as indications only."),
                      format(opt$scale), opt$reps), "")
  }
  L <- c(L, "## Machine and software", "",
         sprintf("- CPU: %s, %d logical cores, %s GiB memory; %s", machine$cpu, machine$cores,
                 format(machine$mem_gib), machine$os),
         sprintf("- %s", machine$r),
         sprintf("- histboost %s (repository at %s, loaded from %s), lightgbm %s, xgboost %s, Matrix %s",
                 pkg_version("histboost"), commit, hb_lib, pkg_version("lightgbm"),
                 pkg_version("xgboost"), pkg_version("Matrix")),
         sprintf("- Date: %s", meta$date),
         sprintf("- Load average (1, 5, 15 min) at start: %s; at end: %s", machine$load_start,
                 machine$load_end),
         sprintf("- Command: `Rscript inst/bench/run.R %s`", command_line(opt$argv)),
         "")
  if (length(pkgs_skipped)) {
    L <- c(L, sprintf("- Skipped: %s", paste(sprintf("%s (%s)", names(pkgs_skipped), pkgs_skipped),
                                           collapse = "; ")), "")
  }
  L <- c(L, "## Parameters", "",
         sprintf("- %d rounds, %d threads, learning rate 0.1, 255 leaves, max_bin %d, min_data_in_leaf 20, no depth limit.",
                 opt$rounds, opt$threads, opt[["max-bin"]]),
         sprintf("- OMP_WAIT_POLICY: %s.", if (nzchar(opt[["wait-policy"]])) paste(opt[["wait-policy"]], "(set by --wait-policy, the same for every package)")
                 else "inherited (not set by the benchmark)"),
         "- lightgbm: min_sum_hessian_in_leaf = 1e-3 (histboost's default too), lambda 0, categorical defaults (max_cat_threshold 32, cat_smooth 10, cat_l2 10) which histboost shares.",
         "- xgboost: tree_method = \"hist\", grow_policy = \"lossguide\", max_leaves = 255, max_depth = 0, lambda = 0, base_score = label mean, min_child_weight = 20 x starting hessian (see inst/bench/README.md).",
         "- How each package got the data is in the 'input' column below; conversion is inside the timed region.",
         sprintf("- Training seconds: median of %d child process(es), from the R object in memory to a trained model, including each package's dataset construction and conversion; no evaluation inside.", opt$reps),
         "- CPU stall %: the share of the training's wall time during which some task on the machine waited for a CPU (Linux /proc/pressure/cpu, median over reps). Near 0 the time is clean; well above 0 other load competed for the cores and the time (especially a multi-threaded one, whose threads spin at OpenMP barriers) is inflated, possibly many times.",
         "- Prediction: test rows / seconds for predict() on the whole test set (conversion included), median over the runs.",
         sprintf("- Peak RSS: VmHWM of the training child, %s; 'RSS increase' subtracts the RSS just before training (data already loaded).",
                 if (isTRUE(peak_reset)) "reset after reading the training data (so it covers training)" else "since the child started (the reset was not possible)"),
         "- Metric on the held-out test set (20% of the training rows): AUC (binary), RMSE (regression), multi-logloss (multiclass).",
         "")
  L <- c(L, "## Results", "",
         "| workload | package | train rows | train s | ratio | CPU stall % | predict rows/s | ratio | peak RSS MB | ratio | RSS increase MB | metric | value | ratio | diff | input |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
  for (i in seq_len(nrow(tab))) {
    t <- tab[i, ]
    hb <- t$package == "histboost"
    rc <- function(v, d = 2) if (hb && !is.na(v)) sprintf(paste0("%.", d, "f"), v) else ""
    if (t$n_ok == 0) {
      L <- c(L, sprintf("| %s %s | %s %s | %s | FAILED: %s | | | | | | | | | | | | |", t$workload, t$workload_name,
                        t$package, t$version, fmt_rate(t$train_rows), gsub("\\|", "/", substr(t$error, 1, 200))))
      next
    }
    L <- c(L, sprintf("| %s %s | %s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                      t$workload, t$workload_name, t$package, t$version, fmt_rate(t$train_rows),
                      fmt(t$train_s), rc(t$ratio_train),
                      if (is.na(t$cpu_stall_pct)) "NA" else sprintf("%.0f", t$cpu_stall_pct),
                      fmt_rate(round(t$predict_rows_per_s)),
                      rc(t$ratio_predict), fmt_rate(round(t$peak_rss_mb)), rc(t$ratio_peak_rss),
                      fmt_rate(round(t$train_rss_increase_mb)), t$metric_name, sprintf("%.4f", t$metric),
                      rc(t$ratio_metric, 4),
                      if (hb && !is.na(t$metric_diff)) sprintf("%+.4f", t$metric_diff) else "",
                      t$input))
  }
  L <- c(L, "", paste("Ratios are histboost / best peer (the fastest, the smallest, the most accurate, each",
                      "taken separately): train and RSS want < 1, predict wants > 1; diff is histboost minus",
                      "the best peer's metric (AUC wants >= -0.001, multi-logloss <= +0.005, RMSE ratio <= 1.005)."), "")
  L <- c(L, "## Goals of issue 3", "", goal_lines(tab), "")
  L <- c(L, "## Profile", "")
  if (nzchar(opt$notes) && file.exists(opt$notes)) {
    L <- c(L, readLines(opt$notes, warn = FALSE), "")
  } else {
    L <- c(L, "No profile notes were given for this run (pass them with --notes FILE).", "")
  }
  writeLines(L, md)
  c(md = md, csv = csv)
}

parent_main <- function(opt, argv) {
  self <- script_path()
  if (length(opt$positional) != 1L || !opt$positional[[1]] %in% c("cpu")) {
    usage()
    stop("the first argument must be the suite: cpu", call. = FALSE)
  }
  opt$suite <- opt$positional[[1]]
  opt$argv <- argv
  started <- Sys.time()
  ws <- trimws(strsplit(opt$workloads, ",", fixed = TRUE)[[1]])
  bad <- setdiff(ws, names(workload_info))
  if (length(bad)) stop("unknown workload(s): ", paste(bad, collapse = ", "), call. = FALSE)
  if (!is.finite(opt$scale) || opt$scale <= 0) stop("--scale must be positive", call. = FALSE)
  if (opt$reps < 1L || opt$threads < 1L || opt$rounds < 1L) stop("--reps, --threads and --rounds must be >= 1", call. = FALSE)
  if (!opt[["wait-policy"]] %in% c("", "passive", "active")) stop("--wait-policy must be passive or active", call. = FALSE)
  pkgs <- trimws(strsplit(opt$packages, ",", fixed = TRUE)[[1]])
  chk <- check_packages(pkgs)
  avail <- chk$ok
  skipped <- chk$skipped
  if (!length(avail)) stop("no package can be loaded", call. = FALSE)
  machine <- machine_info()
  machine$load_start <- load_average()
  cat(sprintf("Machine: %s, %d cores; %s\n", machine$cpu, machine$cores, machine$r))
  cat(sprintf("Packages: %s\n", paste(sprintf("%s %s", avail, vapply(avail, pkg_version, "")), collapse = ", ")))
  tmp <- tempfile("hb-bench-")
  dir.create(tmp)
  if (!opt$keep) on.exit(unlink(tmp, recursive = TRUE), add = TRUE) else cat("Temporary files in", tmp, "\n")
  results <- list()
  peak_reset <- logical()
  for (w in ws) {
    info <- workload_info[[w]]
    cat(sprintf("\n== workload %s: %s ==\n", w, info$name))
    t0 <- proc.time()[["elapsed"]]
    d <- generate_workload(as.integer(w), opt$scale)
    train_file <- file.path(tmp, sprintf("w%s-train.rds", w))
    test_file <- file.path(tmp, sprintf("w%s-test.rds", w))
    saveRDS(d$train, train_file, compress = FALSE)
    saveRDS(d$test, test_file, compress = FALSE)
    n_train <- length(d$train$y); n_test <- length(d$test$y)
    cat(sprintf("generated %s train x %d features, %s test rows in %.1f s\n",
                fmt_rate(n_train), ncol(d$train$x), fmt_rate(n_test), proc.time()[["elapsed"]] - t0))
    rm(d); invisible(gc())
    for (pkg in avail) {
      runs <- list()
      for (rep in seq_len(opt$reps)) {
        rf <- file.path(tmp, sprintf("w%s-%s-%d.rds", w, pkg, rep))
        lf <- file.path(tmp, sprintf("w%s-%s-%d.log", w, pkg, rep))
        r <- run_child(self, opt, pkg, w, train_file, test_file, rf, lf)
        runs[[rep]] <- r
        if (!is.null(r$error)) {
          cat(sprintf("  %-9s rep %d FAILED: %s\n", pkg, rep, r$error))
          break  # a failure repeats; do not spend the other reps on it
        }
        peak_reset <- c(peak_reset, isTRUE(r$peak_reset))
        cat(sprintf("  %-9s rep %d: train %.3f s (CPU stall %.0f%%), predict %s rows/s, peak RSS %.0f MB, %s %.4f\n",
                    pkg, rep, r$train_s, r$cpu_stall_pct, fmt_rate(round(r$test_rows / r$predict_s)),
                    r$peak_rss_mb, info$metric, r$metric))
      }
      results[[length(results) + 1L]] <- list(w = w, pkg = pkg, runs = runs, n_train = n_train, n_test = n_test)
    }
    unlink(c(train_file, test_file))
  }
  machine$load_end <- load_average()
  tab <- summarise(results, opt)
  files <- write_results(tab, opt, machine, skipped, self, started,
                         length(peak_reset) > 0L && all(peak_reset))
  cat("\n", paste(goal_lines(tab), collapse = "\n"), "\n", sep = "")
  cat(sprintf("\nWrote %s\n      %s\n", files[["md"]], files[["csv"]]))
}

main <- function() {
  argv <- commandArgs(trailingOnly = TRUE)
  opt <- parse_args(argv)
  if (isTRUE(opt$help)) { usage(); return(invisible()) }
  if (nzchar(opt$lib)) .libPaths(c(opt$lib, .libPaths()))
  if (isTRUE(opt$child)) child_main(opt) else parent_main(opt, argv)
}

# Run only as a script (Rscript), not when another benchmark source()s this file for its generators.
if (sys.nframe() == 0L) main()
