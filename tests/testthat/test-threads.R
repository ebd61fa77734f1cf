# The model does not depend on the thread count, and the seed (given, or
# drawn from R's RNG) decides every random choice.

# The whole model text, checksum included: the thread count is not recorded.
expect_same_model <- function(a, b, x, label) {
  expect_identical(a$model_text, b$model_text, label = paste(label, "model text"))
  expect_identical(hb_trees(a), hb_trees(b), label = paste(label, "hb_trees"))
  expect_identical(predict(a, x, type = "raw"), predict(b, x, type = "raw"),
                   label = paste(label, "raw predictions"))
  expect_identical(predict(a, x, type = "leaf"), predict(b, x, type = "leaf"),
                   label = paste(label, "leaf predictions"))
}

thr_data <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      cache <<- list(reg = gen_task(71, n = 3000, task = "regression", na = 0.05, factors = 1),
                     bin = gen_task(72, n = 3000, task = "binary", na = 0.05, factors = 1),
                     mc = gen_task(73, n = 2000, task = "multiclass", factors = 1, K = 3))
    }
    cache
  }
})

test_that("1 and 2 threads give identical models (regression, binary, multiclass)", {
  for (k in names(thr_data())) {
    d <- thr_data()[[k]]
    m1 <- hb_quiet(d$x, d$y, nrounds = 15L, num_leaves = 15L, seed = 5L, nthreads = 1L)
    m2 <- hb_quiet(d$x, d$y, nrounds = 15L, num_leaves = 15L, seed = 5L, nthreads = 2L)
    # the configuration block stores the default, not the count used
    expect_true(grepl("\nnthreads=0\n", m1$model_text, fixed = TRUE), label = paste(k, "nthreads=0 stored"))
    expect_null(m1$params$nthreads)
    expect_same_model(m1, m2, d$x, k)
    # prediction itself with 1 or 2 threads
    expect_identical(predict(m1, d$x, type = "raw", nthreads = 1L),
                     predict(m1, d$x, type = "raw", nthreads = 2L), label = paste(k, "predict threads"))
  }
})

test_that("1 and 2 threads give identical models with bagging and feature_fraction", {
  for (k in c("reg", "bin")) {
    d <- thr_data()[[k]]
    fit <- function(nt) hb_quiet(d$x, d$y, nrounds = 15L, num_leaves = 15L, seed = 11L,
                                 bagging_fraction = 0.6, bagging_freq = 1L,
                                 feature_fraction = 0.7, nthreads = nt)
    expect_same_model(fit(1L), fit(2L), d$x, paste(k, "bagged"))
  }
})

test_that("8 threads, which copy a scattered leaf's rows together before summing them, give the 1-thread model", {
  # 24,000 rows x 10 columns: at 8 threads (allowed on any machine: up to 4
  # a core) a bagged root and the leaves of 600 rows or more are summed by
  # 4 to 8 column tiles, and so from their rows gathered first (hist.h)
  d <- gen_task(74, n = 24000, p = 10, task = "binary", na = 0.05, factors = 1)
  fit <- function(nt) hb_quiet(d$x, d$y, nrounds = 8L, num_leaves = 31L, seed = 2L, nthreads = nt,
                               bagging_fraction = 0.7, bagging_freq = 1L)
  expect_same_model(fit(1L), fit(8L), d$x, "8 threads, gathered rows")
})

test_that("a dgCMatrix trains the same model with 1 and 2 threads", {
  skip_if_not_installed("Matrix")
  d <- thr_data()$reg
  X <- as.matrix(d$x[, 1:6])
  X[abs(X) < 0.7] <- 0                 # mostly zeros: the sparse path
  S <- Matrix::Matrix(X, sparse = TRUE)
  m1 <- hb_quiet(S, d$y, nrounds = 10L, seed = 3L, nthreads = 1L, bagging_fraction = 0.5, bagging_freq = 2L)
  m2 <- hb_quiet(S, d$y, nrounds = 10L, seed = 3L, nthreads = 2L, bagging_fraction = 0.5, bagging_freq = 2L)
  expect_same_model(m1, m2, S, "sparse")
})

test_that("the same seed twice gives the identical model; another seed a different bagged model", {
  d <- thr_data()$bin
  fit <- function(seed) hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 15L, seed = seed,
                                 bagging_fraction = 0.5, bagging_freq = 1L, feature_fraction = 0.5)
  a <- fit(123L)
  b <- fit(123L)
  expect_identical(a$model_text, b$model_text)
  expect_identical(predict(a, d$x), predict(b, d$x))
  c <- fit(124L)
  expect_false(identical(predict(a, d$x, type = "raw"), predict(c, d$x, type = "raw")))
  expect_equal(a$params$seed, 123)
})

test_that("seed = NULL draws the seed from R's RNG (set.seed reproduces the model)", {
  d <- thr_data()$reg
  fit <- function() hb_quiet(d$x, d$y, nrounds = 10L, num_leaves = 15L,
                             bagging_fraction = 0.5, bagging_freq = 1L, feature_fraction = 0.6)
  set.seed(1)
  expected_seed <- sample.int(.Machine$integer.max, 1)
  set.seed(1)
  a <- fit()
  set.seed(1)
  b <- fit()
  set.seed(2)
  c <- fit()
  expect_equal(as.numeric(a$params$seed), as.numeric(expected_seed))
  expect_identical(a$model_text, b$model_text)
  expect_identical(predict(a, d$x, type = "raw"), predict(b, d$x, type = "raw"))
  expect_false(isTRUE(all.equal(a$params$seed, c$params$seed)))
  expect_false(identical(predict(a, d$x, type = "raw"), predict(c, d$x, type = "raw")))
})

# Run `lines` in a fresh R process (a crash there is a failed test, not a
# crashed test run); returns the status and output.
run_fresh <- function(lines) {
  dir <- tempfile("hbthr")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  script <- file.path(dir, "run.R")
  writeLines(c("suppressPackageStartupMessages(library(histboost))", lines), script)
  libs <- paste(normalizePath(.libPaths(), mustWork = FALSE), collapse = .Platform$path.sep)
  out <- suppressWarnings(system2(rscript_path(), c("--vanilla", shQuote(script)),
                                  env = paste0("R_LIBS=", shQuote(libs)), stdout = TRUE, stderr = TRUE))
  list(status = attr(out, "status") %||% 0L, output = paste(out, collapse = "\n"))
}
`%||%` <- function(a, b) if (is.null(a)) b else a

test_that("a huge thread count is capped at 4 per core and trains the same model (no crash)", {
  skip_if_not(histboost_installed(), "histboost is not installed, so a fresh R process cannot load it")
  skip_on_os("windows")
  # Before the cap, each of these crashed R (a segfault, or "C stack overflow").
  res <- run_fresh(c(
    "set.seed(1); x <- data.frame(a = rnorm(200), b = rnorm(200)); y <- x$a + rnorm(200)",
    "m1 <- histboost(x, y, nrounds = 5, nthreads = 1, seed = 1, verbose = 0)",
    "mb <- histboost(x, y, nrounds = 5, nthreads = 1e6, seed = 1, verbose = 0)",
    "d <- hb_dataset(x, y, nthreads = 1e6)",
    "md <- histboost(d, nrounds = 5, nthreads = 1e5, seed = 1, verbose = 0)",
    "options(histboost.nthreads = 1e6)",
    "mo <- histboost(x, y, nrounds = 5, seed = 1, verbose = 0)",
    "p <- predict(m1, x, nthreads = 1e6)",
    "stopifnot(identical(m1$model_text, mb$model_text), identical(m1$model_text, md$model_text),",
    "          identical(m1$model_text, mo$model_text), identical(p, predict(m1, x, nthreads = 1)))",
    "cat('threads used:', hb_threads(), '\\n')"))
  expect_equal(res$status, 0L, label = res$output)
  skip_if(res$status != 0L)
  used <- as.integer(sub(".*threads used: ([0-9]+).*", "\\1", res$output))
  expect_gte(used, 1L)
  expect_lte(used, 4L * parallel::detectCores())
})

test_that("a large request is capped, a small one kept (hb_threads with the option)", {
  old <- options(histboost.nthreads = 1e6)
  on.exit(options(old))
  big <- hb_threads()
  expect_gte(big, 1L)
  expect_lte(big, 4L * parallel::detectCores())
  options(histboost.nthreads = 1L)
  expect_identical(hb_threads(), 1L)
  # the cap is the same whatever the excess
  options(histboost.nthreads = .Machine$integer.max)
  expect_identical(hb_threads(), big)
})

test_that("nonsense thread counts are classed errors naming where they came from", {
  set.seed(2)
  x <- data.frame(a = rnorm(60))
  y <- x$a + rnorm(60)
  m <- hb_quiet(x, y, nrounds = 2L, min_data_in_leaf = 5L)
  for (bad in list(0, -1, 2.5, NA, NA_integer_, Inf, 1e10, "2", c(1, 2), list(2))) {
    lab <- deparse(bad)
    expect_error(hb_quiet(x, y, nrounds = 2L, nthreads = bad), class = "histboost_error_input",
                 regexp = "`nthreads`", label = lab)
    expect_error(predict(m, x, nthreads = bad), class = "histboost_error_input",
                 regexp = "`nthreads`", label = lab)
    expect_error(hb_dataset(x, y, nthreads = bad), class = "histboost_error_input",
                 regexp = "`nthreads`", label = lab)
  }

  old <- options(histboost.nthreads = 0)
  on.exit(options(old))
  for (bad in list(0, -2, 1.5, "4", NA)) {
    options(histboost.nthreads = bad)
    expect_error(hb_threads(), class = "histboost_error_input",
                 regexp = "options(histboost.nthreads)", fixed = TRUE)
    # nthreads = NULL falls back to the option, and the error says so
    expect_error(hb_quiet(x, y, nrounds = 2L), class = "histboost_error_input",
                 regexp = "options(histboost.nthreads)", fixed = TRUE)
    expect_error(predict(m, x), class = "histboost_error_input",
                 regexp = "options(histboost.nthreads)", fixed = TRUE)
  }

  options(histboost.nthreads = NULL)
  old_env <- Sys.getenv("HISTBOOST_NUM_THREADS", unset = NA)
  on.exit(if (is.na(old_env)) Sys.unsetenv("HISTBOOST_NUM_THREADS") else
    Sys.setenv(HISTBOOST_NUM_THREADS = old_env), add = TRUE)
  for (bad in c("0", "-1", "2.5", "two", "Inf", "1e10")) {
    Sys.setenv(HISTBOOST_NUM_THREADS = bad)
    expect_error(hb_threads(), class = "histboost_error_input", regexp = "HISTBOOST_NUM_THREADS",
                 label = bad)
    expect_error(hb_dataset(x, y), class = "histboost_error_input", regexp = "HISTBOOST_NUM_THREADS",
                 label = bad)
  }
  Sys.setenv(HISTBOOST_NUM_THREADS = " 1 ")
  expect_identical(hb_threads(), 1L)
  Sys.setenv(HISTBOOST_NUM_THREADS = "1000000")
  expect_lte(hb_threads(), 4L * parallel::detectCores())
})

test_that("options(histboost.cpu_profile) times the CPU learner's phases and counts its splits", {
  d <- thr_data()$mc
  old <- options(histboost.cpu_profile = TRUE)
  on.exit(options(old))
  forced <- force_class_workers(3L)
  for (q in c(FALSE, TRUE)) for (nt in c(2L, 8L)) {
    m <- hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 15L, seed = 5L, nthreads = nt, quantized = q)
    p <- m$cpu_profile
    expect_named(p, c("round_ms", "partition_ms", "hist_ms", "split_ms", "tree_ms", "splits", "rounds",
                      "class_workers", "class_worker_bytes", "hist_by_rows"))
    # at 8 threads the 3 classes' trees grow at once: their phases are summed
    # over the workers, so the trees may take up to that many rounds' time
    expect_identical(p$class_workers, if (forced) 2 + (nt == 8L) else 1)
    expect_null(m$gpu_profile)
    # the counts: every internal node of hb_trees() is one split; 3 classes a round
    tr <- hb_trees(m)
    expect_identical(p$splits, as.double(sum(!tr$is_leaf)), label = paste("splits, quantized", q))
    expect_identical(p$rounds, 6)
    # the phases lie inside the trees, the trees inside the rounds
    expect_true(all(unlist(p[1:5]) >= 0))
    expect_lte(p$partition_ms + p$hist_ms + p$split_ms, p$tree_ms * (1 + 1e-9))
    expect_lte(p$tree_ms, p$round_ms * p$class_workers * (1 + 1e-9))
    expect_gt(p$hist_ms, 0)
    # the histograms by the leaf's rows: the root's, then each split's smaller
    # child's, unless neither child could split again (so at most those of
    # hb_trees(), class by class, counted here from its node counts), and
    # their times add up to hist_ms
    h <- p$hist_by_rows
    expect_identical(h$rows_from, c(0, 4^(1:6) * 256))
    expect_identical(h$rows_below, c(4^(1:6) * 256, Inf))
    cls <- function(n) findInterval(n, h$rows_from)
    cnt <- stats::setNames(tr$count, paste(tr$tree, tr$id))
    inner <- tr[!tr$is_leaf, ]
    small <- pmin(cnt[paste(inner$tree, inner$left)], cnt[paste(inner$tree, inner$right)])
    roots <- tapply(tr$count, tr$tree, max)
    most <- tabulate(cls(c(roots, small)), nbins = 7L)
    expect_true(all(h$histograms <= most), label = paste("histograms within hb_trees()' nodes, quantized", q))
    expect_gte(h$histograms[cls(nrow(d$x))], length(roots))
    expect_gt(sum(h$histograms), length(roots))
    expect_equal(sum(h$ms), p$hist_ms, tolerance = 1e-9)
    # the profile changes nothing in the model, and without the option there is none
    options(histboost.cpu_profile = NULL)
    m0 <- hb_quiet(d$x, d$y, nrounds = 6L, num_leaves = 15L, seed = 5L, nthreads = nt, quantized = q)
    options(histboost.cpu_profile = TRUE)
    expect_identical(m0$model_text, m$model_text)
    expect_null(m0$cpu_profile)
  }
})

test_that("a multiclass round's trees grown at once (8 threads) are the trees grown one after another", {
  # With 3 class workers at 8 threads a 3-class round's trees grow at once,
  # each on a share of the threads (learner_cpu.c; a machine of many cores
  # needs no hook for it); at 1 thread one after another, the path every
  # other test checks. Every option that reaches
  # a class's tree: its drawn features, the bag, GOSS's sample, quantized
  # values, constraints, validation scores, a forest's means, DART's drops.
  d <- gen_task(75, n = 6000, p = 6, task = "multiclass", na = 0.05, factors = 1, K = 3)
  v <- 1:1000
  cases <- list(
    plain = list(),
    sampled = list(bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.7,
                   feature_fraction_bynode = 0.8, extra_trees = TRUE),
    goss = list(goss = TRUE, learning_rate = 0.5),
    quantized = list(quantized = TRUE),
    constrained = list(monotone_constraints = c(x1 = 1), interaction_constraints = list(c("x1", "x2"), c("x3", "x4", "f1"))),
    valid = list(valid = list(list(x = d$x[v, ], y = d$y[v])), early_stopping_rounds = 3L),
    forest = list(boosting = "rf", bagging_fraction = 0.6, bagging_freq = 1L),
    dart = list(boosting = "dart", drop_rate = 0.3),
    ova = list(objective = "multiclassova")
  )
  skip_without_test_hooks()
  force_class_workers(3L)
  old <- options(histboost.cpu_profile = TRUE)
  on.exit(options(old), add = TRUE)
  for (k in names(cases)) {
    fit <- function(nt) do.call(hb_quiet, c(list(d$x[-v, ], d$y[-v], nrounds = 12L, num_leaves = 15L,
                                                 min_data_in_leaf = 10L, seed = 9L, nthreads = nt), cases[[k]]))
    one <- fit(1L)
    eight <- fit(8L)
    expect_equal(one$cpu_profile$class_workers, 1, label = paste(k, "class workers at 1 thread"))
    expect_identical(eight$cpu_profile$class_workers, 3, label = paste(k, "class workers at 8 threads"))
    expect_same_model(one, eight, d$x, paste(k, "classes at once"))
  }
})

test_that("class workers read the first one's row-wise bins when those hold no gradients, with the same model", {
  # 20 numeric features make rows of 20 bytes: in full precision they hold
  # bins alone, and the workers beyond the first read them through twins
  # (hist.h); quantized rows also hold each class's values, so each worker
  # keeps its own copy. The two extra workers' bytes therefore differ by at
  # least their two copies of n rows of 20 bytes. More than 4096 rows: the
  # root's histogram is summed in two halves, in the twins' own buffers;
  # at 3, 3 and 2 threads no worker gathers rows (4 or more).
  skip_without_test_hooks()
  force_class_workers(3L)
  n <- 6000L
  d <- gen_task(77, n = n, p = 20, task = "multiclass", K = 3)
  old <- options(histboost.cpu_profile = TRUE)
  on.exit(options(old), add = TRUE)
  fit <- function(nt, q, ...) hb_quiet(d$x, d$y, nrounds = 8L, num_leaves = 31L, min_data_in_leaf = 10L, seed = 2L,
                                      nthreads = nt, quantized = q, ...)
  bytes <- c()
  for (q in c(FALSE, TRUE)) {
    one <- fit(1L, q)
    eight <- fit(8L, q)
    expect_identical(eight$cpu_profile$class_workers, 3)
    expect_same_model(one, eight, d$x, paste("quantized", q, "classes at once"))
    bytes[[as.character(q)]] <- eight$cpu_profile$class_worker_bytes
  }
  expect_gte(bytes[["TRUE"]] - bytes[["FALSE"]], 2 * n * 20)
  # bagged rows and sampled features read the same shared bins
  expect_same_model(fit(1L, FALSE, bagging_fraction = 0.6, bagging_freq = 1L, feature_fraction = 0.5),
                    fit(8L, FALSE, bagging_fraction = 0.6, bagging_freq = 1L, feature_fraction = 0.5), d$x,
                    "bagged, classes at once on shared bins")
})

test_that("an allocation failing on a class worker is a classed error with its own message, and nothing breaks", {
  skip_without_test_hooks()
  force_class_workers(3L)
  d <- gen_task(76, n = 3000, p = 20, task = "multiclass", K = 3)  # 20 features: the workers' twins (hist.h)
  v <- 1:500
  fit <- function() hb_quiet(d$x[-v, ], d$y[-v], nrounds = 4L, num_leaves = 15L, nthreads = 6L, seed = 4L,
                             bagging_fraction = 0.7, bagging_freq = 1L,
                             valid = list(list(x = d$x[v, ], y = d$y[v])))
  ref <- fit()$model_text
  hook <- function(k) histboost:::.hb_hook_call("C_hb_test_fail_alloc", as.integer(k))
  hook(0L)
  invisible(fit())
  made <- hook(0L)  # the allocations of one training (which worker makes a histogram slot varies a little)
  expect_gt(made, 50)
  failed <- 0L
  for (k in unique(round(seq(1, made * 0.95, length.out = 40)))) {
    hook(k)
    res <- tryCatch(fit()$model_text, histboost_error = function(e) e)
    hook(0L)
    if (inherits(res, "condition")) {
      failed <- failed + 1L
      expect_s3_class(res, "histboost_error_engine")
      expect_match(conditionMessage(res), "out of memory", label = paste("allocation", k))
    } else {
      expect_identical(res, ref, label = paste("allocation", k, "did not fail: the same model"))
    }
  }
  expect_gte(failed, 35L)
  expect_identical(fit()$model_text, ref)
})
