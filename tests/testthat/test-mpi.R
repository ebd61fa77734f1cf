# Data-parallel training over MPI (R/distributed.R, src/dist_mpi.c,
# src/engine/dist.h). Each test launches `mpirun -np N Rscript mpi-train.R`:
# every process trains on its shard (shuffled rows, uneven shares,
# mpi-cases.R) and rank 0 saves the model's text. The reference is the
# ordinary one-process histboost() on the shards' rows concatenated in rank
# order, which runs none of the MPI code.

mpi_launcher <- function() {
  if (!hb_has_mpi()) return(NULL)
  mpirun <- Sys.which("mpirun")
  if (!nzchar(mpirun)) return(NULL)
  ver <- tryCatch(system2(mpirun, "--version", stdout = TRUE, stderr = TRUE), error = function(e) "")
  flags <- character()
  if (any(grepl("Open MPI|OpenRTE", ver))) {
    flags <- "--oversubscribe"  # CI has 2 cores and runs up to 4 processes
    uid <- suppressWarnings(as.integer(system2("id", "-u", stdout = TRUE)))
    if (identical(uid, 0L)) flags <- c(flags, "--allow-run-as-root")
  }
  list(mpirun = unname(mpirun), flags = flags)
}

skip_without_mpi <- function() {
  if (!hb_has_mpi()) skip("histboost was built without MPI (hb_has_mpi() is FALSE)")
  if (is.null(mpi_launcher())) skip("MPI is built in but no `mpirun` is on the PATH")
}

# Run mpi-train.R on np processes; list(status, out (lines), model (text or NULL)).
run_mpi <- function(case, np, extra = character(), timeout = 120) {
  l <- mpi_launcher()
  out_file <- tempfile(fileext = ".txt")
  on.exit(unlink(out_file))
  rscript <- file.path(R.home("bin"), "Rscript")
  args <- c(l$flags, "-np", np, shQuote(rscript), shQuote(test_path("mpi-train.R")),
            shQuote(test_path("mpi-cases.R")), case, shQuote(out_file), extra)
  env <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  out <- suppressWarnings(system2(l$mpirun, args, stdout = TRUE, stderr = TRUE, timeout = timeout, env = env))
  status <- attr(out, "status") %||% 0L
  logs <- sprintf("%s.log%d.rds", out_file, seq_len(np) - 1L)  # each process's evaluation log
  on.exit(unlink(logs), add = TRUE)
  list(status = status, out = out, model = if (file.exists(out_file)) readLines(out_file),
       logs = lapply(logs, function(f) if (file.exists(f)) readRDS(f)))
}

reference_text <- function(case, np, extra = list()) {
  fit <- mpi_reference(case, np, extra)
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  hb_save(fit, f)
  readLines(f)
}

source(test_path("mpi-cases.R"), local = TRUE)

test_that("asking for MPI without it is a classed error that says how to get it", {
  if (hb_has_mpi()) skip("histboost is built with MPI here; the error is for builds without it")
  expect_error(histboost(iris[, 1:4], iris$Sepal.Length, distributed = "mpi", verbose = 0L),
               class = "histboost_error_input", regexp = "apt-get install openmpi-bin")
  expect_error(hb_dataset(iris[, 1:4], distributed = "mpi"), class = "histboost_error_input", regexp = "MPI")
})

test_that("`distributed` is checked like any choice", {
  expect_error(histboost(iris[, 1:4], iris$Sepal.Length, distributed = "mpl", verbose = 0L),
               class = "histboost_error_input", regexp = "distributed")
})

test_that("quantized models from 2, 3 and 4 processes equal the one-process model byte for byte", {
  skip_without_mpi()
  # regression with weights and bagging; binary with feature sampling;
  # multiclass: all with factors, NAs, a sharded validation set and early
  # stopping; binary with 8-bit gradients, whose histograms travel packed
  # in 64-bit as well as 32-bit integers (the others' in 32-bit ones)
  for (cc in list(c("regression", 2), c("regression", 3), c("regression", 4),
                  c("binary", 2), c("binary", 3), c("multiclass", 4), c("binary_wide", 3))) {
    case <- cc[1L]; np <- as.integer(cc[2L])
    r <- run_mpi(case, np)
    expect_identical(r$status, 0L, info = paste(c(case, np, r$out), collapse = "\n"))
    expect_true(all(grepl(": ok$", grep("^rank", r$out, value = TRUE))), info = paste(r$out, collapse = "\n"))
    expect_length(grep("^rank [0-9]+: ok$", r$out), np)
    ref <- reference_text(case, np)
    expect_identical(r$model, ref, info = paste(case, np))
  }
})

test_that("processes that own no feature of the split search still give the one-process model", {
  skip_without_mpi()
  # each process searches its block of features after the histograms are
  # summed into it; with two columns (mpi-cases.R's "narrow"), 2 processes
  # own one each, and of 3 or 4 the middle ones own none and contribute
  # only their rows' sums; quantized, and full precision on exact_sums' grid
  for (np in c(2L, 4L)) {
    r <- run_mpi("narrow", np)
    expect_identical(r$status, 0L, info = paste(c(np, r$out), collapse = "\n"))
    expect_length(grep("^rank [0-9]+: ok$", r$out), np)
    expect_identical(r$model, reference_text("narrow", np), info = np)
  }
  r <- run_mpi("narrow", 3L, "fullprec")
  expect_identical(r$status, 0L, info = paste(r$out, collapse = "\n"))
  expect_identical(r$model, reference_text("narrow", 3L, list(quantized = FALSE, exact_sums = TRUE)))
  # both columns split in the model, so the winners of process 0's block decided
  ref <- mpi_reference("narrow", 4L)
  tr <- hb_trees(ref)
  expect_setequal(unique(stats::na.omit(tr$feature)), c("a", "f"))
})

test_that("balanced bagging on 2 and 4 processes gives the one-process model byte for byte", {
  skip_without_mpi()
  for (np in c(2L, 4L)) {
    r <- run_mpi("balanced", np)
    expect_identical(r$status, 0L, info = paste(c(np, r$out), collapse = "\n"))
    expect_identical(r$model, reference_text("balanced", np), info = np)
  }
  # the bag took effect: the first tree holds about 90% of the positive rows and 30% of the others
  ref <- mpi_reference("balanced", 2L)
  d <- mpi_case("balanced")
  npos <- sum(d$y == "yes")
  tr <- hb_trees(ref)
  rows <- sum(tr$count[tr$tree == 1L & tr$is_leaf])
  expect_lt(abs(rows - 0.9 * npos - 0.3 * (length(d$y) - npos)), 5 * sqrt(npos * 0.09 + (length(d$y) - npos) * 0.21))
})

test_that("min_data_in_bin, bin_sample_rows and max_bin_by_feature on 2 and 3 processes give the one-process model byte for byte", {
  skip_without_mpi()
  for (np in 2:3) {
    r <- run_mpi("bins", np)
    expect_identical(r$status, 0L, info = paste(c(np, r$out), collapse = "\n"))
    expect_identical(r$model, reference_text("bins", np), info = np)
  }
  # the parameters took effect: a of 800 rows sampled to 300 in bins of 7 rows has at most 300 / 7 bins
  ref <- mpi_reference("bins", 2L)
  expect_identical(ref$params[c("min_data_in_bin", "bin_sample_rows", "max_bin_by_feature")],
                   list(min_data_in_bin = 7L, bin_sample_rows = 300L, max_bin_by_feature = c(a = 9L, f = 3L)))
  tr <- hb_trees(ref)
  expect_lte(length(unique(tr$threshold[!tr$is_leaf & tr$feature == "a"])), 7L)  # 9 bins: NA's and zero's apart
})

test_that("large shards on two threads a process give the one-process model byte for byte", {
  skip_without_mpi()
  # 170k rows (shards of 67,840 and 101,760), bagging, quantized: the
  # threaded paths of the distributed dataset and of the quantized tree
  # (the root's sums, the leaves' by-row refit), which the small cases
  # never reach; and full precision on exact_sums' grid. Four threads on
  # CI's two cores: they sleep at once when they wait, as hb_mpi_run() has
  # them (spinning OpenMP threads of one process starve the other's)
  old <- Sys.getenv("OMP_WAIT_POLICY", NA)
  Sys.setenv(OMP_WAIT_POLICY = "PASSIVE")
  on.exit(if (is.na(old)) Sys.unsetenv("OMP_WAIT_POLICY") else Sys.setenv(OMP_WAIT_POLICY = old))
  r <- run_mpi("threaded", 2L, timeout = 300)
  expect_identical(r$status, 0L, info = paste(r$out, collapse = "\n"))
  expect_identical(r$model, reference_text("threaded", 2L))
  r <- run_mpi("threaded", 2L, "fullprec", timeout = 300)
  expect_identical(r$status, 0L, info = paste(r$out, collapse = "\n"))
  expect_identical(r$model, reference_text("threaded", 2L, list(quantized = FALSE, exact_sums = TRUE)))
  expect_gt(lengths(mpi_case_shards(mpi_case("threaded"), 2L))[1L], 65536L)
})

test_that("lambdarank on 2, 3 and 4 processes holding whole queries gives the one-process model and metrics", {
  skip_without_mpi()
  # queries shuffled over the processes, unevenly, rows of each shuffled;
  # weights, bagging, quantized; ndcg@3,5 and map@3,5 on a sharded
  # validation set steer early stopping. The reference is one process on the
  # shards' rows concatenated: its gradients and metrics are per query and
  # do not depend on the order of a query's rows, its query codes are the
  # sorted ids, and its quantized histograms are integer sums, so the
  # sharded model must equal it byte for byte.
  for (np in 2:4) {
    r <- run_mpi("ranking", np)
    expect_identical(r$status, 0L, info = paste(c(np, r$out), collapse = "\n"))
    expect_length(grep("^rank [0-9]+: ok$", r$out), np)
    ref <- mpi_reference("ranking", np)
    expect_lt(ref$niter, 40L)  # early stopping ended it
    expect_identical(r$model, reference_text("ranking", np), info = paste("ranking", np))
    for (k in seq_len(np)) expect_identical(r$logs[[k]], ref$evaluation_log, info = paste("log of rank", k - 1L))
  }
  # and the metric itself, by hand from the sharded model's predictions:
  # the mean over validation queries of NDCG@3 with gains 2^y - 1, tied
  # scores sharing their positions' discounts (the expectation over their
  # orders, as documented)
  d <- mpi_case("ranking")
  vrows <- unlist(mpi_case_shards(d, 4L, valid = TRUE))
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  writeLines(r$model, f)
  fit <- hb_load(f)
  best <- ref$best_iteration
  s <- predict(fit, d$valid$x[vrows, ], type = "raw", iteration = best)
  y <- d$valid$y[vrows]
  ndcg3 <- vapply(split(seq_along(y), d$valid$group[vrows]), function(i) {
    gain <- 2^y[i] - 1
    disc <- ifelse(seq_along(i) <= 3L, 1 / log2(seq_along(i) + 1), 0)
    o <- order(-s[i])
    blk <- match(s[i][o], unique(s[i][o]))
    idcg <- sum(sort(gain, decreasing = TRUE) * disc)
    if (idcg == 0) 1 else sum(gain[o] * ave(disc, blk)) / idcg
  }, 0)
  expect_equal(ref$evaluation_log[["v_ndcg@3"]][best], mean(ndcg3), tolerance = 1e-12)
  expect_identical(r$logs[[1L]][["v_ndcg@3"]][best], ref$evaluation_log[["v_ndcg@3"]][best])
})

test_that("GOSS on 2, 3 and 4 processes keeps the one-process rows: quantized models equal byte for byte", {
  skip_without_mpi()
  # whole-number labels: many rows share a gradient, so the top share's
  # threshold has ties, kept in global row order (on 2 processes, GOSS's
  # first round has 197 rows above it and 7 at it, of which 3 are kept);
  # the rest drawn by global row
  for (np in 2:4) {
    r <- run_mpi("goss", np)
    expect_identical(r$status, 0L, info = paste(c(np, r$out), collapse = "\n"))
    expect_identical(r$model, reference_text("goss", np), info = paste("goss", np))
    # the data do test the ties: at GOSS's first round (floor(1 / 0.3) = 3
    # trees in) the rows' sizes |g h| = |score - y|, from the one-process
    # model in plain R, put the threshold in a group of tied rows on two or
    # more processes, of which only some are kept
    d <- mpi_case("goss")
    sh <- mpi_case_shards(d, np)
    dd <- mpi_case_data(d, unlist(sh), unlist(mpi_case_shards(d, np, valid = TRUE)))
    size <- abs(predict(mpi_reference("goss", np), dd$x, type = "raw", iteration = 3L) - dd$y)
    top <- ceiling(0.25 * length(size))
    thr <- sort(size, decreasing = TRUE)[top]
    at <- which(size == thr)
    kept <- top - sum(size > thr)
    expect_true(kept > 0 && kept < length(at), info = paste("goss", np))
    expect_gte(length(unique(rep(seq_len(np), lengths(sh))[at])), 2L)
  }
  # GOSS did choose rows: without it the one-process model differs
  d <- mpi_case("goss")
  d$args$goss <- FALSE
  rows <- unlist(mpi_case_shards(d, 2L)); vrows <- unlist(mpi_case_shards(d, 2L, valid = TRUE))
  plain <- do.call(histboost, c(mpi_case_data(d, rows, vrows), list(early_stopping_rounds = 3L), d$args))
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  hb_save(plain, f)
  expect_false(identical(readLines(f), reference_text("goss", 2L)))
})

test_that("a query whose rows are on two processes is a classed error naming `group` on every process", {
  skip_without_mpi()
  r <- run_mpi("ranking", 3, "splitq")
  expect_false(identical(r$status, 124L))
  lines <- grep("^rank", r$out, value = TRUE)
  expect_length(lines, 3L)
  expect_true(all(grepl("histboost_error_input .*`group`.*processes 0 and 1.*whole queries", lines)),
              info = paste(r$out, collapse = "\n"))
  expect_null(r$model)
})

test_that("the model from several processes predicts as the one-process model", {
  skip_without_mpi()
  r <- run_mpi("multiclass", 3)
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  writeLines(r$model, f)
  fit <- hb_load(f)
  ref <- mpi_reference("multiclass", 3)
  d <- mpi_case("multiclass")
  expect_identical(predict(fit, d$valid$x), predict(ref, d$valid$x))
  expect_gt(ncol(predict(fit, d$valid$x)), 2L)
})

test_that("full precision on 2, 3 and 4 processes: the one-process model with exact_sums, byte for byte", {
  skip_without_mpi()
  # distributed = "mpi" puts full-precision gradients on exact_sums' grid by
  # default: every histogram sum is then exact, whatever the process count
  for (np in 2:4) {
    r <- run_mpi("regression_full", np)
    expect_identical(r$status, 0L, info = paste(c(np, r$out), collapse = "\n"))
    expect_length(grep("^rank [0-9]+: ok$", r$out), np)
    expect_identical(r$model, reference_text("regression_full", np, list(exact_sums = TRUE)), info = np)
  }
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f))
  writeLines(r$model, f)
  fit <- hb_load(f)
  expect_true(fit$params$exact_sums)
  # without the grid (asked for), one process's double sums differ in their
  # last bits: the same trees, predictions to 1e-12
  ref <- mpi_reference("regression_full", 4, list(exact_sums = FALSE))
  expect_false(ref$params$exact_sums)
  tr <- hb_trees(fit)
  tr_ref <- hb_trees(ref)
  structure_cols <- intersect(c("tree", "node", "feature", "threshold", "left", "right", "count"), names(tr))
  expect_identical(tr[structure_cols], tr_ref[structure_cols])
  expect_false(identical(tr$value, tr_ref$value))
  d <- mpi_case("regression_full")
  expect_equal(predict(fit, d$valid$x), predict(ref, d$valid$x), tolerance = 1e-12)
  # exact_sums = FALSE asked for: rank-order double sums, not the grid's
  # model; the trees still one process's
  r <- run_mpi("regression_full", 3, "plainsums")
  expect_identical(r$status, 0L, info = paste(r$out, collapse = "\n"))
  expect_false(identical(r$model, reference_text("regression_full", 3, list(exact_sums = TRUE))))
  writeLines(r$model, f)
  plain <- hb_load(f)
  expect_false(plain$params$exact_sums)
  ref3 <- mpi_reference("regression_full", 3, list(exact_sums = FALSE))
  expect_identical(hb_trees(plain)[structure_cols], hb_trees(ref3)[structure_cols])
  expect_equal(predict(plain, d$valid$x), predict(ref3, d$valid$x), tolerance = 1e-12)
})

test_that("class labels are coded from the counts of every process as one process codes them", {
  skip_without_mpi()
  # a level without rows anywhere: dropped from the classes with one warning
  # (process 0's), and the model is the one-process model, which warns alike
  r <- run_mpi("binary", 3, "droplevel")
  expect_identical(r$status, 0L, info = paste(r$out, collapse = "\n"))
  expect_identical(grep("^warning", r$out, value = TRUE),
                   "warning on rank 0: `y` has levels with no rows, dropped from the classes: `never`.")
  d <- mpi_case("binary")
  rows <- unlist(mpi_case_shards(d, 3L)); vrows <- unlist(mpi_case_shards(d, 3L, valid = TRUE))
  dd <- mpi_case_data(d, rows, vrows)
  dd$y <- factor(dd$y, levels = c(levels(dd$y), "never"))
  expect_warning(ref <- do.call(histboost, c(dd, list(early_stopping_rounds = 3L), d$args)), "never")
  expect_identical(r$model, {f <- tempfile(); on.exit(unlink(f)); hb_save(ref, f); readLines(f)})
  # one class over all processes: a classed error on every process
  r <- run_mpi("binary", 2, "oneclass")
  lines <- grep("^rank", r$out, value = TRUE)
  expect_length(lines, 2L)
  expect_true(all(grepl("histboost_error_input `y` has only one class .* over all processes", lines)),
              info = paste(r$out, collapse = "\n"))
})

test_that("a shard with zero rows ends every process with a classed error, not a hang", {
  skip_without_mpi()
  r <- run_mpi("binary", 3, "empty", timeout = 120)
  expect_false(identical(r$status, 124L))
  lines <- grep("^rank", r$out, value = TRUE)
  expect_length(lines, 3L)
  expect_true(all(grepl("histboost_error_input .*zero rows", lines)), info = paste(r$out, collapse = "\n"))
  expect_null(r$model)
})

test_that("weights on some processes only are a classed input error on every process, not a hang", {
  skip_without_mpi()
  # the starting score gathers the weights of the processes that give them:
  # given on one process only, the processes' exchanges would not match
  # (240 s: under ASan on CI's two cores one of these runs once took over
  # 120 s after every process had printed its error; a hang still fails)
  for (np in 2:3) {
    r <- run_mpi("binary", np, "someweights", timeout = 240)
    expect_false(identical(r$status, 124L))
    lines <- grep("^rank", r$out, value = TRUE)
    expect_length(lines, np)
    expect_true(all(grepl(sprintf("histboost_error_input .*1 of %d processes give training weights", np), lines)),
                info = paste(r$out, collapse = "\n"))
    expect_null(r$model)
  }
})

test_that("arguments that differ, or that one process refuses, are classed errors naming them on every process", {
  skip_without_mpi()
  # (without `valid`, rank 1 refuses early stopping, naming `valid`, and the others say so; a renamed
  # set and a metric function on one process only are caught by comparing the calls' shapes)
  whats <- c(novalid = "`valid`", badarg = "`learning_rate` must be",
             validname = "passed another `valid` \\(whether given, and its sets' names\\)",
             metricfun = "passed another `eval_metric` \\(how many functions\\)",
             seed = "`seed` differs between processes \\(process 0: 11, process 1: 12\\)",
             charcol = "`x\\$f` is of type character, against factor on process 0 \\(convert it with factor\\(\\)")
  for (mode in names(whats)) {
    r <- run_mpi("binary", 2, mode, timeout = 120)
    expect_false(identical(r$status, 124L))
    lines <- grep("^rank", r$out, value = TRUE)
    expect_length(lines, 2L)
    what <- whats[[mode]]
    expect_true(all(grepl(paste0("histboost_error_input .*", what), lines)), info = paste(r$out, collapse = "\n"))
    expect_null(r$model)
  }
  # the thread count is each process's own, and an integer column where another process has doubles is
  # numbers as rbind() makes them: the one-process model
  for (mode in c("threads", "intcol")) {
    r <- run_mpi("binary", 2, mode, timeout = 120)
    expect_identical(r$model, reference_text("binary", 2), info = paste(mode, paste(r$out, collapse = "\n")))
  }
})

test_that("a script that fails on one process outside histboost ends the job within seconds", {
  skip_without_mpi()
  t0 <- Sys.time()
  r <- run_mpi("binary", 2, "scripterr", timeout = 120)
  expect_false(identical(r$status, 124L))
  expect_false(identical(r$status, 0L))
  expect_true(any(grepl("this process's own code failed", r$out)))
  expect_false(any(grepl("^rank 1:", r$out)))  # the failing script did not go on
  expect_null(r$model)
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 60)  # the exit wait alone is 15 s, the job's abort 10
  # every process failing alike: each stops there, and the job fails
  r <- run_mpi("binary", 2, "scripterr_all", timeout = 120)
  expect_false(identical(r$status, 124L))
  expect_false(identical(r$status, 0L))
  expect_false(any(grepl("^rank [01]:", r$out)))
})

test_that("a process that dies ends the job instead of leaving the others waiting", {
  skip_without_mpi()
  t0 <- Sys.time()
  r <- run_mpi("binary", 2, "die", timeout = 120)
  expect_false(identical(r$status, 124L))  # system2's timeout status: it hung
  expect_false(identical(r$status, 0L))
  expect_null(r$model)
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 110)
})

test_that("one process out of memory ends every process with a classed error, wherever it happens", {
  # rank 1's K-th engine allocation fails (the test hook hb_test_fail_alloc),
  # for K spread over every allocation of a training with binning, a
  # validation set, early stopping and metrics; the others must learn of it
  # at their next collective operation and report, not wait in it until the
  # job is ended (mpi-train.R gives up after 15 s: a missing line); a
  # failure after the last collective is rank 1's alone
  skip_without_mpi()
  skip_without_test_hooks()
  counted <- run_mpi("regression_full", 2, "countalloc")$out
  n <- as.integer(sub("^allocations on rank 1: ", "", grep("^allocations on rank 1: ", counted, value = TRUE)))
  expect_gt(n, 200L)
  for (k in unique(round(seq(1, n, length.out = 14L)))) {
    r <- run_mpi("regression_full", 2, paste0("failalloc=", k), timeout = 90)
    lines <- grep("^rank [01]: ", r$out, value = TRUE)
    info <- paste(c(paste("K =", k), r$out), collapse = "\n")
    expect_setequal(substr(lines, 1L, 6L), c("rank 0", "rank 1"))
    expect_match(grep("^rank 1", lines, value = TRUE), "^rank 1: histboost_error_.*out of memory", info = info)
    # after the last collective (rank 1 writing its copy of the model text)
    # rank 0 is done: its model is whole
    r0 <- grep("^rank 0", lines, value = TRUE)
    if (identical(r0, "rank 0: ok")) {
      expect_match(grep("^rank 1", lines, value = TRUE), "saving the model", info = info)
      expect_false(is.null(r$model))
    } else {
      expect_match(r0, "^rank 0: histboost_error_", info = info)
      expect_null(r$model)
    }
  }
})

test_that("device = \"cuda\" with distributed = \"mpi\" and no usable GPU is a classed device error on every process", {
  skip_without_mpi()
  if (isTRUE(hb_device_info()$available)) skip("a usable GPU is here: the next test trains on it")
  r <- run_mpi("binary", 2, "cuda")
  lines <- grep("^rank", r$out, value = TRUE)
  expect_length(lines, 2L)
  expect_true(all(grepl("histboost_error_device .*cuda", lines)), info = paste(r$out, collapse = "\n"))
})

test_that("exact_sums defaults on wherever the CPU trains, one process or many; off on the GPU, whose sums are exact already", {
  expect_true(histboost:::.hb_more_args(list(), "gbdt", "mpi", "cpu")$exact_sums)
  expect_true(histboost:::.hb_more_args(list(), "gbdt", "no", "cpu")$exact_sums)
  expect_false(histboost:::.hb_more_args(list(), "gbdt", "mpi", "cuda")$exact_sums)
  expect_false(histboost:::.hb_more_args(list(), "gbdt", "no", "cuda")$exact_sums)
  expect_true(histboost:::.hb_more_args(list(exact_sums = TRUE), "gbdt", "mpi", "cuda")$exact_sums)
  expect_false(histboost:::.hb_more_args(list(exact_sums = FALSE), "gbdt", "mpi", "cpu")$exact_sums)
})

test_that("on GPUs, one a process, models of 2 to 4 processes equal the one-GPU model byte for byte", {
  skip_without_mpi()
  info <- hb_device_info()
  if (!isTRUE(info$available)) skip(paste("no GPU for the CUDA tests:", info$status))
  # quantized regression with weights and bagging (draws keyed by the global
  # row, the bag's size summed); binary with feature sampling; multiclass;
  # full precision (fixed-point sums, the one-process scales from every
  # process's gradient range and rows); lambdarank (the host's gradients,
  # queries whole per shard); l1 (leaves refit on the host over every
  # process); 8-bit gradients. With a GPU each on one machine the sums go
  # peer to peer (2 processes on a 2-GPU machine); processes sharing a GPU
  # (one GPU, or 3 and 4 on two) sum through MPI via host memory. GOSS: its
  # threshold over every process's sizes (many tied), the ties kept in
  # global row order; Cox: the host's gradients over every shard's risk sets;
  # path_smooth and max_delta_step: each leaf's output from the summed sums;
  # extra_trees and feature_fraction_bynode: draws keyed by tree and node;
  # interaction constraints (with path_smooth and max_delta_step); DART:
  # the drops keyed by seed and round, each GPU rescaling its own scores.
  for (cc in list(c("regression", 2), c("regression", 3), c("binary", 2), c("multiclass", 4),
                  c("regression_full", 2), c("regression_full", 3), c("ranking", 2), c("l1", 3),
                  c("binary_wide", 3), c("goss", 2), c("goss", 3), c("cox", 2), c("smoothed", 2),
                  c("extra", 2), c("smooth", 3), c("dart", 2), c("skip", 2))) {
    case <- cc[1L]; np <- as.integer(cc[2L])
    r <- run_mpi(case, np, "cuda", timeout = 240)
    expect_identical(r$status, 0L, info = paste(c(case, np, r$out), collapse = "\n"))
    expect_length(grep("^rank [0-9]+: ok$", r$out), np)
    ref <- reference_text(case, np, list(device = "cuda"))
    expect_gt(length(grep("^\\[tree ", ref)), 4L)
    expect_identical(r$model, ref, info = paste(case, np))
  }
})

test_that("hb_mpi_run() launches the processes and brings back the model of one process", {
  skip_without_mpi()
  cases <- normalizePath(test_path("mpi-cases.R"))
  fit <- hb_mpi_run(2, function(cases) {
    source(file.path(dirname(cases), "helper-surv.R"))
    source(cases)
    options(histboost.mpi_exit_wait = 15)
    w <- hb_mpi_world()
    d <- mpi_case("multiclass")
    mine <- mpi_shards(nrow(d$x), w[["size"]])[[w[["rank"]] + 1L]]
    vmine <- mpi_shards(nrow(d$valid$x), w[["size"]], seed = 8L)[[w[["rank"]] + 1L]]
    do.call(histboost, c(list(x = d$x[mine, ], y = d$y[mine],
                              valid = list(v = list(x = d$valid$x[vmine, ], y = d$valid$y[vmine])),
                              early_stopping_rounds = 3L, distributed = "mpi"), d$args))
  }, cases = cases, timeout = 120)
  expect_s3_class(fit, "histboost")
  ref <- mpi_reference("multiclass", 2)
  f1 <- tempfile(); f2 <- tempfile()
  on.exit(unlink(c(f1, f2)))
  hb_save(fit, f1); hb_save(ref, f2)
  expect_identical(readLines(f1), readLines(f2))
  expect_error(hb_mpi_run(2, function() stop("no"), timeout = 60), class = "histboost_error_engine",
               regexp = "process [01] \\(MPI rank [01]\\) failed: no")
  # one process's error, the others waiting for it in histboost(): its condition, class kept, within seconds
  t0 <- Sys.time()
  expect_error(hb_mpi_run(2, function() {
    if (hb_mpi_world()[["rank"]] == 1L) stop("only on process 1")
    histboost(data.frame(a = 1:50), rnorm(50), distributed = "mpi", nrounds = 2L, verbose = 0L)
  }, timeout = 100), class = "histboost_error_engine", regexp = "process 1 \\(MPI rank 1\\) failed: only on process 1")
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 80)
  expect_error(hb_mpi_run(2, function() {
    histboost(data.frame(a = 1:50), rnorm(50), distributed = "mpi", verbose = 0L,
              nrounds = if (hb_mpi_world()[["rank"]] == 1L) -1L else 2L)
  }, timeout = 100), class = "histboost_error_input", regexp = "process 1 \\(MPI rank 1\\) failed: `nrounds` must be")
  # the script's own condition class is kept (a handler for it fires), and an error inside a validation set
  # is the failing process's, not process 0's relay of it
  err <- tryCatch(hb_mpi_run(2, function() {
    if (hb_mpi_world()[["rank"]] == 1L) stop(structure(class = c("my_shard_error", "error", "condition"),
                                                         list(message = "bad shard", call = NULL)))
    histboost(data.frame(a = 1:50), rnorm(50), distributed = "mpi", nrounds = 2L, verbose = 0L)
  }, timeout = 100), my_shard_error = function(e) e)
  expect_s3_class(err, c("my_shard_error", "histboost_error_engine"))
  # the job's files go to `workdir` (a folder every node sees, with a host file), and nothing is left there
  wd <- tempfile("hbwork")
  dir.create(wd)
  on.exit(unlink(wd, recursive = TRUE), add = TRUE)
  expect_identical(hb_mpi_run(2, function() hb_mpi_world()[["size"]], timeout = 100, workdir = wd), 2L)
  expect_length(list.files(wd), 0L)
  expect_input_error(hb_mpi_run(2, function() 1, workdir = file.path(wd, "none")), "`workdir` must be the path of an existing folder")
  expect_match(conditionMessage(err), "process 1 \\(MPI rank 1\\) failed: bad shard")
  expect_error(hb_mpi_run(2, function() {
    r <- hb_mpi_world()[["rank"]]
    vx <- if (r == 0L) data.frame(a = 1:10) else data.frame(a = integer(0))
    histboost(data.frame(a = 1:50), rnorm(50), distributed = "mpi", nrounds = 2L, verbose = 0L,
              valid = list(v = list(x = vx, y = rnorm(nrow(vx)))))
  }, timeout = 100), class = "histboost_error_input",
  regexp = "process 1 \\(MPI rank 1\\) failed: `valid` set \"v\": .*zero rows")
})

test_that("hb_mpi_run() gives each process its share of the session's threads, unless told otherwise", {
  skip_without_mpi()
  old <- options(histboost.nthreads = 5L)
  on.exit(options(old))
  withr_env <- Sys.getenv("HISTBOOST_NUM_THREADS", unset = NA)
  Sys.unsetenv("HISTBOOST_NUM_THREADS")
  on.exit(if (!is.na(withr_env)) Sys.setenv(HISTBOOST_NUM_THREADS = withr_env), add = TRUE)
  threads <- function() c(histboost::hb_threads(), histboost::hb_mpi_world()[["size"]])
  expect_identical(hb_mpi_run(2, threads, timeout = 90), c(2L, 2L))  # 5 %/% 2
  expect_identical(hb_mpi_run(3, threads, timeout = 90)[1], 1L)
  expect_identical(hb_mpi_run(2, threads, mpirun_args = c("-x", "HISTBOOST_NUM_THREADS=3"), timeout = 90)[1], 3L)
})

# Run R code in one child Rscript, MPI started there alone (a singleton,
# no mpirun), and return what it printed (timeout in seconds).
mpi_singleton <- function(code, timeout) {
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  env <- c("OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMP_WAIT_POLICY=PASSIVE",
           paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)))
  suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE, stderr = TRUE, env = env,
                           timeout = timeout))
}

# Each case of mpi-cases.R on each number of processes: every process
# succeeds, the model text of rank 0 is the one-process model's on the
# concatenated shards (mpi_reference) byte for byte, and (logs = TRUE) every
# process's evaluation log is the one-process log.
expect_mpi_identical <- function(case, nps, logs = TRUE) {
  for (np in nps) {
    r <- run_mpi(case, np)
    expect_identical(r$status, 0L, info = paste(c(case, np, r$out), collapse = "\n"))
    expect_length(grep("^rank [0-9]+: ok$", r$out), np)
    ref <- mpi_reference(case, np)
    expect_identical(r$model, reference_text(case, np), info = paste(case, np))
    if (logs) {
      for (k in seq_len(np)) expect_identical(r$logs[[k]], ref$evaluation_log, info = paste(case, np, "rank", k - 1L))
    }
  }
  invisible(ref)
}

test_that("is_unbalance and class_weights weigh rows by the classes of all processes: one-process models", {
  skip_without_mpi()
  expect_mpi_identical("unbalanced", c(2L, 4L))
  expect_mpi_identical("class_weights", 3L)
  # the weights are those of the counts over all rows: is_unbalance grows the
  # trees of weights n_negative / n_positive on the positive rows, computed
  # here in plain R from the concatenated labels
  d <- mpi_case("unbalanced")
  rows <- unlist(mpi_case_shards(d, 4L)); vrows <- unlist(mpi_case_shards(d, 4L, valid = TRUE))
  dd <- mpi_case_data(d, rows, vrows)
  y <- dd$y
  dd$weights <- ifelse(y == "yes", sum(y == "no") / sum(y == "yes"), 1)
  expect_gt(dd$weights[y == "yes"][1L], 3)  # a rare class: the weights matter
  a <- d$args
  a$is_unbalance <- NULL
  by_hand <- do.call(histboost, c(dd, list(early_stopping_rounds = 3L), a))
  expect_identical(hb_trees(by_hand), hb_trees(mpi_reference("unbalanced", 4L)))
})

test_that("init_model continues on 2 and 4 processes as on one: each scores its own rows", {
  skip_without_mpi()
  ref <- expect_mpi_identical("continue", c(2L, 4L))
  # the continued model holds the base's 4 iterations, then its own
  d <- mpi_case("continue")
  expect_gt(ref$niter, 4L)
  expect_identical(predict(ref, d$valid$x, iteration = 4L), predict(d$args$init_model, d$valid$x))
})

test_that("a custom objective and metric functions on 2, 3 and 4 processes give the one-process model and log", {
  skip_without_mpi()
  # squared error by hand and the median absolute error (which no sum over
  # shards gives) steering early stopping: the metric sees every process's
  # rows, so each logs the one-process values and all stop together
  ref <- expect_mpi_identical("custom", 2:4)
  expect_lt(ref$niter, 30L)  # early stopping on medae ended it
  expect_identical(names(ref$evaluation_log), c("iter", "v_medae", "v_rmse"))
  # the logged medae is the median absolute error of the model at that iteration, by hand
  d <- mpi_case("custom")
  vrows <- unlist(mpi_case_shards(d, 4L, valid = TRUE))
  pr <- predict(ref, d$valid$x[vrows, ], type = "raw", iteration = ref$best_iteration)
  expect_equal(ref$evaluation_log$v_medae[ref$best_iteration], median(abs(pr - d$valid$y[vrows])),
               tolerance = 1e-12)
  # a weighted metric function of class probabilities (a matrix), with a built-in objective
  expect_mpi_identical("metric_fun", 3L)
})

test_that("a metric function that answers otherwise, or fails, on one process: process 0's answer, or a classed error on all", {
  skip_without_mpi()
  # the last process's metric is off by 1000 (mpi-train.R): every process
  # logs process 0's values, which are the one-process model's log
  ref <- expect_mpi_identical("metric_local", 3L)
  expect_identical(names(ref$evaluation_log), c("iter", "v_medae"))
  expect_true(all(ref$evaluation_log$v_medae < 1000))
  # the last process's metric fails: every process ends with a classed
  # error naming it, none waits for the process that left
  r <- run_mpi("metric_local", 3, "metricfail", timeout = 120)
  lines <- sort(grep("^rank", r$out, value = TRUE))  # in rank order
  expect_length(lines, 3L)
  expect_match(lines[3], "^rank 2: .*this process's metric failed", info = paste(r$out, collapse = "\n"))
  for (k in 1:2) {
    expect_match(lines[k], sprintf("^rank %d: histboost_error.*process 2 \\(MPI rank 2\\) failed: .*this process's metric failed", k - 1L),
                 info = paste(r$out, collapse = "\n"))
  }
  # the last process names its metric otherwise: the same classed error on every process
  r <- run_mpi("metric_local", 3, "metricname", timeout = 120)
  lines <- sort(grep("^rank", r$out, value = TRUE))  # in rank order
  expect_length(lines, 3L)
  for (k in 1:3) {
    expect_match(lines[k], sprintf("^rank %d: histboost_error_input .*another name or direction on process 2", k - 1L),
                 info = paste(r$out, collapse = "\n"))
  }
})

test_that("a callback that stops training on one process stops every process at the same round", {
  skip_without_mpi()
  # only the last process asks to stop after round 5 (mpi-train.R); on one
  # process the callback always does
  for (np in c(2L, 4L)) {
    ref <- expect_mpi_identical("callback", np)
    expect_identical(ref$niter, 5L)
  }
})

test_that("max_conflict_rate > 0 bundles as one process does on 2 and 3 processes: the model equals byte for byte", {
  skip_without_mpi()
  # Sparse columns that share a few rows: the one-process model at
  # max_conflict_rate = 0.1 bundles them, losing the shared rows' values in
  # all but one member, so it predicts otherwise than at 0 (no conflicts,
  # which equals no bundling). The shards must choose those bundles from
  # every shard's counts, and store sparse the column that is sparse over
  # all rows though dense on the first shard, for the model to be the same.
  d <- mpi_case("bundle")
  rows <- unlist(mpi_case_shards(d, 2L))
  vrows <- unlist(mpi_case_shards(d, 2L, valid = TRUE))
  fit <- function(...) {
    a <- utils::modifyList(d$args, list(...))
    do.call(histboost::histboost, c(mpi_case_data(d, rows, vrows), mpi_case_stop(d), a))
  }
  ref <- fit()
  p_rate <- predict(ref, d$valid$x)
  expect_gt(max(abs(p_rate - predict(fit(max_conflict_rate = 0), d$valid$x))), 0.1)
  expect_equal(predict(fit(max_conflict_rate = 0), d$valid$x), predict(fit(enable_bundle = FALSE), d$valid$x))
  sh <- mpi_case_shards(d, 2L)
  expect_gt(mean(d$x$h[sh[[1L]]] != 0), 0.2)   # dense on the first shard by its own rows
  expect_lte(mean(d$x$h[rows] != 0), 0.2)      # sparse over all rows
  expect_mpi_identical("bundle", 2:3)
})

test_that("DART on 3 processes drops the one-process trees: the model equals byte for byte", {
  skip_without_mpi()
  ref <- expect_mpi_identical("dart", 3L)
  expect_true(any(lengths(ref$dart_dropped) > 0L))  # trees were dropped
})

test_that("skip_unsplittable on 2, 3 and 4 processes: the one-process model byte for byte", {
  skip_without_mpi()
  # each process searches its block of features and keeps their flags; the winners' exchange
  # carries the rest: the one-process trees, which the rule shaped
  ref <- expect_mpi_identical("skip", 2:4)
  d <- mpi_case("skip")
  rows <- unlist(mpi_case_shards(d, 4L))
  vrows <- unlist(mpi_case_shards(d, 4L, valid = TRUE))
  plain <- do.call(histboost, c(mpi_case_data(d, rows, vrows), mpi_case_stop(d),
                                utils::modifyList(d$args, list(skip_unsplittable = FALSE))))
  expect_false(identical(hb_trees(plain)[c("feature", "threshold")], hb_trees(ref)[c("feature", "threshold")]))
})

test_that("l1, quantile and mape refit leaves to the one-process quantiles on 2, 3 and 4 processes", {
  skip_without_mpi()
  # l1 without weights: each leaf's order statistics over the processes
  # (exact selection); quantile with weights and bagging, and mape (weights
  # 1 / |y|): weighted quantiles of every process's residuals
  expect_mpi_identical("l1", c(2L, 4L))
  expect_mpi_identical("quantile", c(3L, 4L))
  expect_mpi_identical("mape", 2L)
  # the leaves are quantiles: a one-tree l1 model's leaf values are the
  # medians of their rows' residuals from the starting score, by hand
  d <- mpi_case("l1")
  rows <- unlist(mpi_case_shards(d, 2L))
  a <- d$args
  a$nrounds <- 1L
  a$learning_rate <- 1
  one <- do.call(histboost, c(list(x = d$x[rows, ], y = d$y[rows]), a))
  leaf <- predict(one, d$x[rows, ], type = "leaf")
  res <- d$y[rows] - median(d$y[rows])
  raw <- predict(one, d$x[rows, ], type = "raw")
  expect_equal(unname(raw), unname(median(d$y[rows]) + ave(res, leaf, FUN = median)), tolerance = 1e-12)
})

test_that("extra trees, bynode sampling, path_smooth, max_delta_step, interaction constraints grow one-process trees", {
  skip_without_mpi()
  # these do not combine with quantized = TRUE, so the histograms are full
  # precision, on exact_sums' grid: the one-process model with exact_sums
  for (cc in list(c("extra", 2), c("extra", 4), c("smooth", 3))) {
    case <- cc[1L]; np <- as.integer(cc[2L])
    r <- run_mpi(case, np)
    expect_identical(r$status, 0L, info = paste(c(case, np, r$out), collapse = "\n"))
    ref <- mpi_reference(case, np, list(exact_sums = TRUE))
    f <- tempfile(fileext = ".txt")
    hb_save(ref, f)
    expect_identical(r$model, readLines(f), info = paste(case, np))
    unlink(f)
    cols <- c("tree", "id", "is_leaf", "depth", "feature", "split_type", "threshold", "categories", "default_left",
              "left", "right", "count")
    d <- mpi_case(case)
    # the options shaped the trees: without them the one-process trees differ
    a <- d$args
    a[c("extra_trees", "feature_fraction_bynode", "path_smooth", "max_delta_step", "interaction_constraints")] <- NULL
    rows <- unlist(mpi_case_shards(d, np)); vrows <- unlist(mpi_case_shards(d, np, valid = TRUE))
    plain <- do.call(histboost, c(mpi_case_data(d, rows, vrows), list(early_stopping_rounds = 3L), a))
    expect_false(identical(hb_trees(plain)[cols], hb_trees(ref)[cols]))
  }
})

test_that("hb_mpi_run() works after MPI started alone in the session", {
  skip_without_mpi()
  code <- c(
    "suppressPackageStartupMessages(library(histboost))",
    "w <- hb_mpi_world()  # MPI started without mpirun: a singleton",
    "r <- tryCatch(hb_mpi_run(2, function() hb_mpi_world()[['size']], timeout = 90),",
    "              error = function(e) paste(class(e)[1], conditionMessage(e)))",
    "cat('run:', r, '\\n')")
  out <- mpi_singleton(code, 150)
  expect_match(grep("^run:", out, value = TRUE), "^run: 2 $", info = paste(out, collapse = "\n"))
})

test_that("MPI that cannot start is a classed error in the session, which MPI_Init would have ended", {
  skip_without_mpi()
  # a PML that does not exist makes Open MPI's MPI_Init fail, which ends the process at once
  # (MPI_ERRORS_ARE_FATAL applies before a communicator exists): first without histboost, the cause
  probe <- c("suppressPackageStartupMessages(library(histboost))",
             "invisible(.Call(histboost:::C_hb_mpi_init))", "cat('after init\\n')")
  bad_env <- function(code) {
    f <- tempfile(fileext = ".R")
    writeLines(code, f)
    env <- c("OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_pml=no_such_pml",
             paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)))
    suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE, stderr = TRUE, env = env,
                             timeout = 120))
  }
  skip_if(!nzchar(Sys.which("ompi_info")), "the failure is provoked with an Open MPI setting (OMPI_MCA_pml)")
  raw <- bad_env(probe)
  expect_false("after init" %in% raw)
  expect_false(is.null(attr(raw, "status")))  # the process ended, not R's error
  # then histboost() there: a classed error, and the session goes on
  out <- bad_env(c(
    "suppressPackageStartupMessages(library(histboost))",
    "r <- tryCatch(histboost(mtcars[-1], mtcars$mpg, nrounds = 2, verbose = 0, distributed = 'mpi'),",
    "              error = function(e) e)",
    "cat('class:', class(r)[1], '\\n'); cat('message:', conditionMessage(r), '\\n'); cat('alive\\n')"))
  expect_true("alive" %in% out, info = paste(out, collapse = "\n"))
  expect_null(attr(out, "status"))
  expect_match(grep("^class:", out, value = TRUE), "histboost_error_engine", fixed = TRUE)
  expect_match(paste(out, collapse = "\n"), "could not start MPI: a test start in a child R process failed")
})

test_that("cox on 2 and 3 processes: risk sets over every shard give the one-process model and log", {
  skip_without_mpi()
  # tied times and censored rows, sharded unevenly: a row's risk set holds
  # rows of every process; cox_nloglik on the sharded validation set
  ref <- expect_mpi_identical("cox", 2:3)
  expect_identical(ref$params$objective, "cox")
})
