# The GPU learner (device = "cuda"). What does not need a GPU runs
# everywhere: the device errors and "auto" falling back to the CPU. The rest
# runs where hb_has_cuda() is TRUE and is skipped elsewhere with the reason
# the package gives (built without CUDA, or no usable GPU).

gpu_skip_reason <- function() {
  info <- hb_device_info()
  if (isTRUE(info$available)) NULL else info$status
}
# Under compute-sanitizer (tools/gpu/check.sh sanitize-tests) the racecheck
# pass sets HB_CUDA_TEST_SMALL=1: the tests of 100,000+ rows then use 30,000,
# which keeps every kernel path (the paths are forced by mode and
# shared-memory limit, not chosen by size) at a size racecheck finishes, and
# the quantized-accuracy test trains its five models for 8 rounds, not 60
# (over 7 minutes under racecheck): the same kernels, with its accuracy
# comparisons, which need the 60 rounds, left to the plain run.
test_small <- function() nzchar(Sys.getenv("HB_CUDA_TEST_SMALL"))
test_rows <- function(n) if (test_small()) min(n, 30000L) else n
# racecheck is slow enough that tools/gpu/check.sh runs this file under it in
# parts at once: HB_CUDA_TEST_PART=i/n runs the GPU tests whose number is i
# modulo n (HB_CUDA_TEST_HALF=1 or 2 is i/2).
gpu_test_count <- new.env()
gpu_test_count$n <- 0L
skip_without_gpu <- function() {
  why <- gpu_skip_reason()
  if (!is.null(why)) skip(paste("no GPU for the CUDA tests:", why))
  part <- Sys.getenv("HB_CUDA_TEST_PART")
  if (!nzchar(part) && nzchar(Sys.getenv("HB_CUDA_TEST_HALF"))) part <- paste0(Sys.getenv("HB_CUDA_TEST_HALF"), "/2")
  if (nzchar(part)) {
    ij <- as.integer(strsplit(part, "/", fixed = TRUE)[[1]])
    gpu_test_count$n <- gpu_test_count$n + 1L
    if (gpu_test_count$n %% ij[2] != ij[1] %% ij[2]) skip(paste("another part of test-cuda.R (HB_CUDA_TEST_PART)"))
  }
}

# ---- everywhere -------------------------------------------------------------

test_that("hb_has_cuda() and hb_device_info() agree", {
  info <- hb_device_info()
  expect_named(info, c("built", "available", "status", "name", "compute_capability", "multiprocessors",
                       "memory", "free_memory", "cuda_runtime", "cuda_driver"))
  expect_identical(hb_has_cuda(), info$available)
  expect_identical(hb_has_cuda(built_only = TRUE), info$built)
  expect_true(nzchar(info$status))
  if (!info$built) expect_false(info$available)
  if (info$available) {
    expect_gt(info$multiprocessors, 0L)
    expect_gt(info$memory, 0)
  } else {
    expect_true(is.na(info$name) && is.na(info$memory))
  }
  expect_error(hb_has_cuda(built_only = NA), class = "histboost_error_input", regexp = "`built_only`")
})

test_that("device = \"cuda\" without a usable GPU is a device error that says which and how to fix it", {
  if (hb_has_cuda()) skip("a GPU is available here: the no-GPU error cannot occur")
  d <- gen_task(1, n = 200)
  built <- hb_has_cuda(built_only = TRUE)
  expect_error(hb_quiet(d$x, d$y, nrounds = 2L, device = "cuda"), class = "histboost_error_device",
               regexp = if (built) "no GPU can be used.*device = \"cpu\"" else "without its CUDA learner.*reinstall")
})

test_that("device = \"auto\" without a GPU trains on the CPU: the same model", {
  if (hb_has_cuda()) skip("a GPU is available here: \"auto\" uses it")
  d <- gen_task(2, n = 500, factors = 1, na = 0.1)
  a <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 3, device = "auto")
  b <- hb_quiet(d$x, d$y, nrounds = 5L, seed = 3, device = "cpu")
  expect_identical(a$model_text, b$model_text)
  expect_identical(a$params$device, "cpu")
})

test_that("hb_dataset(device = \"cuda\") without a usable GPU is a device error; \"auto\" bins on the CPU", {
  d <- gen_task(8, n = 300, factors = 1, na = 0.1)
  expect_error(hb_dataset(d$x, d$y, device = "gpu"), class = "histboost_error_input", regexp = "`device`")
  if (hb_has_cuda()) skip("a GPU is available here: the no-GPU error cannot occur")
  built <- hb_has_cuda(built_only = TRUE)
  expect_error(hb_dataset(d$x, d$y, device = "cuda"), class = "histboost_error_device",
               regexp = if (built) "no GPU can be used.*device = \"cpu\"" else "without its CUDA learner.*reinstall")
  a <- hb_dataset(d$x, d$y, device = "auto")
  b <- hb_dataset(d$x, d$y)
  skip_without_test_hooks()
  expect_identical(histboost:::.hb_dataset_bins(a), histboost:::.hb_dataset_bins(b))
})

test_that("device is checked before any work", {
  d <- gen_task(3, n = 100)
  expect_error(hb_quiet(d$x, d$y, device = "gpu"), class = "histboost_error_input", regexp = "`device`")
})

test_that("predict()'s device is checked before any work, naming the argument", {
  d <- gen_task(4, n = 200)
  fit <- hb_quiet(d$x, d$y, nrounds = 2L)
  for (bad in list("gpu", NA_character_, c("cpu", "cuda"), 1L)) {
    expect_error(predict(fit, d$x, device = bad), class = "histboost_error_input", regexp = "`device`")
  }
  # before newdata is looked at
  expect_error(predict(fit, "not data", device = "gpu"), class = "histboost_error_input", regexp = "`device`")
})

test_that("predict(device = \"cuda\") without a usable GPU is a device error that says which and how to fix it", {
  if (hb_has_cuda()) skip("a GPU is available here: the no-GPU error cannot occur")
  d <- gen_task(5, n = 200, task = "binary")
  fit <- hb_quiet(d$x, d$y, nrounds = 2L)
  built <- hb_has_cuda(built_only = TRUE)
  for (type in c("response", "raw", "class", "leaf", "contrib")) {
    expect_error(predict(fit, d$x, type = type, device = "cuda"), class = "histboost_error_device",
                 regexp = if (built) "no GPU can be used.*device = \"cpu\"" else "without its CUDA learner.*reinstall",
                 label = type)
  }
})

test_that("interactions on device = \"cuda\" are a device error; \"auto\" gives the CPU's contributions and interactions", {
  d <- gen_task(6, n = 300, factors = 1, na = 0.1)
  fit <- hb_quiet(d$x, d$y, nrounds = 4L)
  # with or without a GPU: interaction values are computed on the CPU only
  expect_error(predict(fit, d$x[1:20, ], type = "interaction", device = "cuda"), class = "histboost_error_device",
               regexp = "`type` = \"interaction\" is computed on the CPU only.*device = \"cpu\"")
  expect_identical(predict(fit, d$x[1:20, ], type = "interaction", device = "auto"),
                   predict(fit, d$x[1:20, ], type = "interaction", device = "cpu"))
  # contributions: the GPU's when there is one, the same values as the CPU's either way
  phi <- predict(fit, d$x[1:20, ], type = "contrib", device = "auto")
  expect_identical(phi, predict(fit, d$x[1:20, ], type = "contrib", device = "cpu"))
  # and they add up to the raw scores, wherever "auto" computes those
  expect_equal(rowSums(phi), predict(fit, d$x[1:20, ], type = "raw", device = "auto"), tolerance = 1e-10)
})

test_that("predict(device = \"auto\") gives the CPU's predictions, with or without a GPU", {
  d <- gen_task(7, n = 600, task = "multiclass", factors = 1, na = 0.1)
  fit <- hb_quiet(d$x, d$y, nrounds = 5L, num_leaves = 7L)
  raw <- predict(fit, d$x, type = "raw", device = "auto")
  expect_equal(raw, predict(fit, d$x, type = "raw", device = "cpu"), tolerance = 1e-6)
  if (!hb_has_cuda()) expect_identical(raw, predict(fit, d$x, type = "raw", device = "cpu"))
  # the probabilities are the softmax of those raw scores
  expect_equal(predict(fit, d$x, device = "auto"), softmax_rows(raw), tolerance = TOL$prob)
  expect_identical(predict(fit, d$x, type = "leaf", device = "auto"), predict(fit, d$x, type = "leaf"))
  expect_identical(predict(fit, d$x, type = "class", device = "auto"), predict(fit, d$x, type = "class"))
})

# ---- on a GPU: the histogram kernel against plain R ---------------------------

# Data for the histogram checks: wide-range numeric columns (255 value bins),
# a column with three values (banked counters), one with NAs, a factor.
hist_data <- function(n, seed) {
  set.seed(seed)
  x <- data.frame(a = rnorm(n), b = sample(c(-1, 0, 2.5), n, TRUE), c = runif(n),
                  d = factor(sample(letters[1:7], n, TRUE)), e = rexp(n), f = rnorm(n) * 10)
  x$c[sample.int(n, n %/% 10)] <- NA
  list(x = x, g = rnorm(n) * 2, h = runif(n, 0.05, 1))
}

test_that("GPU histograms equal the fixed-point sums computed in plain R (every kernel path)", {
  skip_without_gpu()
  skip_without_test_hooks()
  for (seed in 1:2) {
    dd <- hist_data(6000 * seed, seed)
    ds <- hb_dataset(dd$x, rnorm(nrow(dd$x)))
    bins <- histboost:::.hb_dataset_bins(ds)
    num_bin <- .Call(histboost:::C_hb_dataset_info, ds$ptr)$num_bin
    expect_lte(max(bins[, 2]), 3L)   # the three-valued feature has few bins
    # 9000 bytes of shared memory hold the first word's banked histograms
    # (1024 slots of two int32) but not both words': two feature groups.
    subset <- sample.int(nrow(bins), nrow(bins) %/% 3)  # unsorted, as the learner's segments are
    for (rows in list(NULL, subset)) {
      for (cfg in list(list(mode = 1L, lim = 0L), list(mode = 2L, lim = 0L), list(mode = 1L, lim = 9000L),
                       list(mode = 0L, lim = 0L))) {
        res <- histboost:::.hb_cuda_hist(ds, dd$g, dd$h, rows = rows, mode = cfg$mode, smem_limit = cfg$lim)
        r <- if (is.null(rows)) seq_len(nrow(bins)) else rows
        want_g <- ref_bin_sums(bins, num_bin, round(dd$g * 2^res$exp_g), r)
        want_h <- ref_bin_sums(bins, num_bin, round(dd$h * 2^res$exp_h), r)
        what <- sprintf("seed %d, %s rows, mode %d, smem %d", seed, if (is.null(rows)) "all" else "some",
                        cfg$mode, cfg$lim)
        expect_identical(res$g, want_g, label = paste("g sums,", what))
        expect_identical(res$h, want_h, label = paste("h sums,", what))
        # The scale keeps a block's int32 sums safe yet fine: |g| * 2^e well above 1.
        expect_gt(max(abs(dd$g)) * 2^res$exp_g, 2^10)
      }
    }
  }
})

# Many features: 255-bin numerics, three-valued ones (banked copies), a
# factor and NAs, so that groups of five to eight words are laid out as
# octets (one shared-memory bank per feature) by blocks that take them whole.
wide_hist_data <- function(n, p, seed) {
  set.seed(seed)
  x <- as.data.frame(matrix(rnorm(n * p), n, p))
  for (j in seq(3, p, by = 7)) x[[j]] <- sample(c(-1, 0, 2.5), n, TRUE)
  x[[5]] <- factor(sample(letters[1:11], n, TRUE))
  x[[2]][sample.int(n, n %/% 10)] <- NA
  # exact zeros: LightGBM's binning gives 0 a bin of its own between the two
  # signs' bins, so this column fills max_bin (16 bins at max_bin 15, every
  # 4-bit code; normals without a zero take one fewer)
  x[[1]][sample.int(n, n %/% 20)] <- 0
  list(x = x, g = rnorm(n) * 2, h = runif(n, 0.05, 1))
}

test_that("GPU histograms of 28, 30 and 41 features (octets, pairs, words, 4-bit bins) equal plain R's sums", {
  skip_without_gpu()
  skip_without_test_hooks()
  n <- test_rows(150000L)
  for (p in c(28L, 30L, 41L)) for (mb in c(255L, 15L)) {
    dd <- wide_hist_data(n, p, p)
    ds <- hb_dataset(dd$x, rnorm(n), max_bin = mb)
    bins <- histboost:::.hb_dataset_bins(ds)
    num_bin <- .Call(histboost:::C_hb_dataset_info, ds$ptr)$num_bin
    expect_identical(ncol(bins), p)
    if (mb == 255L) {
      expect_gte(max(num_bin), 255L)  # 255-bin numerics (their NA bin on top where they have NAs)
    } else {
      expect_identical(max(num_bin), 16L)  # 4-bit bins on the device: eight features a word
    }
    # max_bin 255: all rows and two thirds of them: blocks take every word of a
    # group (octets); 3,000 rows: blocks take a pair of words each (a small
    # leaf); 40,000 bytes of shared memory: groups of four words, no octets.
    # max_bin 15: words of eight 4-bit features, in groups or (3,000 rows) alone.
    for (rows in list(NULL, sample.int(n, (n * 2L) %/% 3L), sample.int(n, 3000L))) {
      r <- if (is.null(rows)) seq_len(n) else rows
      for (cfg in list(list(mode = 1L, lim = 0L), list(mode = 1L, lim = 40000L), list(mode = 2L, lim = 0L))) {
        res <- histboost:::.hb_cuda_hist(ds, dd$g, dd$h, rows = rows, mode = cfg$mode, smem_limit = cfg$lim)
        what <- sprintf("%d features, max_bin %d, %d rows, mode %d, smem %d", p, mb, length(r), cfg$mode, cfg$lim)
        expect_identical(res$g, ref_bin_sums(bins, num_bin, round(dd$g * 2^res$exp_g), r), label = paste("g,", what))
        expect_identical(res$h, ref_bin_sums(bins, num_bin, round(dd$h * 2^res$exp_h), r), label = paste("h,", what))
      }
      set.seed(p)
      gq <- sample(c(-7L, 7L, sample(-7:7, 10, TRUE)), n, TRUE)
      hq <- sample(c(0L, 15L, sample(0:15, 10, TRUE)), n, TRUE)
      res <- histboost:::.hb_cuda_hist(ds, gq, hq, rows = rows, quant_bits = 4L)
      what <- sprintf("quantized, %d features, max_bin %d, %d rows", p, mb, length(r))
      expect_identical(res$g, ref_bin_sums(bins, num_bin, gq, r), label = paste("g,", what))
      expect_identical(res$h, ref_bin_sums(bins, num_bin, hq, r), label = paste("h,", what))
    }
  }
})

# ---- on a GPU: GPU and CPU models agree ----------------------------------------

# Data designed without ties: continuous features with distinct values and a
# strong signal, so that no two candidate splits have nearly the same gain.
tiefree <- function(seed, n = 4000, task = "regression") {
  set.seed(seed)
  x <- data.frame(x1 = rnorm(n), x2 = runif(n), x3 = rnorm(n), x4 = rexp(n))
  f <- 3 * sin(2 * x$x1) + 4 * (x$x2 > 0.6) + x$x3 * (x$x4 > 1) + 0.5 * x$x4
  y <- switch(task,
              regression = f + rnorm(n, sd = 0.3),
              binary = factor(ifelse(runif(n) < sigmoid(f - mean(f)), "yes", "no")),
              multiclass = factor(cut(f + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi"))))
  list(x = x, y = y)
}

# tiefree()'s regression and a factor of 60 levels (200 NAs) that moves
# y: wider than max_bin = 15, it spans four internal features.
wide_factor_data <- function() {
  d <- tiefree(14, n = 5000)
  set.seed(14)
  code <- sample(60L, 5000, TRUE, prob = 1 / seq_len(60)^0.3)
  d$x$g <- factor(paste0("L", code), levels = paste0("L", 1:60))
  d$x$g[sample.int(5000, 200)] <- NA
  d$y <- d$y + rnorm(60, sd = 1.5)[code]
  d
}

# Trees of two models: same structure (features, thresholds, directions,
# counts), leaf values within `tol`, internal values within `tol_internal`.
expect_same_trees <- function(a, b, tol, label, tol_internal = 1e-6) {
  ta <- hb_trees(a)
  tb <- hb_trees(b)
  expect_identical(nrow(ta), nrow(tb), label = paste(label, "node count"))
  if (nrow(ta) != nrow(tb)) return(invisible())
  cols <- c("tree", "id", "is_leaf", "depth", "feature", "split_type", "threshold", "categories",
            "default_left", "left", "right", "count")
  expect_identical(ta[cols], tb[cols], label = paste(label, "structure"))
  # leaf values (refit from full-precision gradients) and internal values
  # (from the search's fixed-point sums)
  expect_equal(ta$value[ta$is_leaf], tb$value[tb$is_leaf], tolerance = tol, label = paste(label, "leaf values"))
  expect_equal(ta$value, tb$value, tolerance = tol_internal, label = paste(label, "values"))
  # gains: the GPU's from fixed-point sums, the CPU's from doubles
  expect_equal(ta$gain, tb$gain, tolerance = 1e-4, label = paste(label, "gains"))
}

# `args` (histboost()'s, a validation set among them) trained on both
# devices: the GPU trained it, with the CPU's trees, predictions on `x` and
# evaluation log; list(cpu, gpu).
expect_gpu_as_cpu <- function(args, x, label) {
  cpu <- do.call(hb_quiet, c(args, device = "cpu"))
  gpu <- do.call(hb_quiet, c(args, device = "cuda"))
  expect_identical(gpu$params$device, "cuda", label = label)
  expect_same_trees(cpu, gpu, tol = 1e-8, label = label)
  expect_lt(max(abs(predict(cpu, x, type = "raw") - predict(gpu, x, type = "raw"))), 1e-6, label = label)
  expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-7, label = paste(label, "log"))
  list(cpu = cpu, gpu = gpu)
}

gpu_params <- list(nrounds = 15L, num_leaves = 15L, min_data_in_leaf = 20L, learning_rate = 0.2, seed = 7)

# A case list(d = data, a = options) trained on both devices with
# gpu_params and `...`: list(label, args, cpu, gpu); checks that the GPU
# trained it and, with `categorical`, that the CPU's trees split a factor.
both_devices <- function(cs, categorical = FALSE, ...) {
  label <- paste(names(cs$a), vapply(cs$a, function(e) paste(e, collapse = "/"), ""), collapse = ", ")
  args <- c(list(cs$d$x, cs$d$y, ...), modifyList(gpu_params, cs$a))
  cpu <- do.call(hb_quiet, c(args, device = "cpu"))
  gpu <- do.call(hb_quiet, c(args, device = "cuda"))
  expect_identical(gpu$params$device, "cuda", label = label)
  if (categorical) expect_true(any(hb_trees(cpu)$split_type %in% "categorical"), label = label)
  list(label = label, args = args, cpu = cpu, gpu = gpu)
}

test_that("GPU and CPU grow the same trees: regression, binary, multiclass on tie-free data", {
  skip_without_gpu()
  for (task in c("regression", "binary", "multiclass")) {
    d <- tiefree(11, task = task)
    cpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu"), gpu_params))
    gpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cuda"), gpu_params))
    expect_identical(gpu$params$device, "cuda")
    expect_same_trees(cpu, gpu, tol = 1e-8, label = task)
    pc <- predict(cpu, d$x, type = "raw")
    pg <- predict(gpu, d$x, type = "raw")
    expect_lt(max(abs(pc - pg)), 1e-6, label = paste(task, "raw predictions"))
  }
})

test_that("GPU and CPU: a rare class's trees that cannot split, their roots below min_sum_hessian_in_leaf, add nothing", {
  skip_without_gpu()
  # test-objectives.R's case: the rare class's hessian sum (~44) is below
  # min_sum_hessian_in_leaf = 50, so its unsplit trees add 0 on both
  # devices (the GPU's leaf value kernel, the CPU's learner); the others split
  d <- rare_class_data()
  x <- d$x
  y <- d$y
  n <- nrow(x)
  for (q in c(FALSE, TRUE)) {
    fits <- lapply(c("cpu", "cuda"), function(dev) {
      hb_quiet(x, y, nrounds = 10L, num_leaves = 4L, min_sum_hessian_in_leaf = 50, min_data_in_leaf = 5L,
               quantized = q, seed = 1, device = dev)
    })
    label <- if (q) "quantized" else "full precision"
    tg <- hb_trees(fits[[2L]])
    rare <- seq(match("rare", levels(y)), max(tg$tree), by = 3L)
    expect_identical(tg$value[tg$tree %in% rare], rep(0, length(rare)), label = paste(label, "rare trees"))
    expect_same_trees(fits[[1L]], fits[[2L]], tol = 1e-8, label = label)
    expect_equal(unname(predict(fits[[2L]], x, type = "raw")[, match("rare", levels(y))]), rep(log(30 / n), n),
                 tolerance = TOL$exact, label = paste(label, "rare raw scores"))
  }
})

test_that("GPU and CPU grow the same trees from a per-row init_score, and log the same validation metric", {
  skip_without_gpu()
  d <- tiefree(17)
  set.seed(17)
  off <- 0.5 * sin(3 * d$x$x2) + rnorm(4000, sd = 0.3)
  mu <- exp(off + 0.3 * d$x$x1)
  ys <- list(regression = d$y, poisson = rpois(4000, mu))
  tr <- 1:3000; va <- 3001:4000
  for (obj in names(ys)) {
    y <- ys[[obj]]
    args <- c(list(d$x[tr, ], y[tr], objective = obj, init_score = off[tr],
                   valid = list(v = list(x = d$x[va, ], y = y[va], init_score = off[va]))), gpu_params)
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    expect_identical(gpu$params$device, "cuda")
    expect_same_trees(cpu, gpu, tol = 1e-8, label = paste(obj, "with an offset"), tol_internal = 1e-5)
    expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-7, label = paste(obj, "validation log"))
    expect_lt(max(abs(predict(cpu, d$x, type = "raw", init_score = off) -
                      predict(gpu, d$x, type = "raw", init_score = off))), 1e-6)
  }
})

test_that("the GPU continues a CPU model (init_model) into the trees of one CPU training", {
  skip_without_gpu()
  d <- tiefree(19, task = "binary")
  base <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu"), modifyList(gpu_params, list(nrounds = 8L))))
  gpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cuda", init_model = base),
                             modifyList(gpu_params, list(nrounds = 7L))))
  cpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu"), gpu_params))
  expect_identical(gpu$niter, 15L)
  expect_same_trees(cpu, gpu, tol = 1e-8, label = "continued on the GPU")
})

test_that("a custom objective trains on the GPU: the CPU's trees, from the device's scores each round", {
  skip_without_gpu()
  d <- tiefree(23)
  b <- tiefree(24, task = "binary")
  yb <- as.integer(b$y) - 1L
  sq <- function(preds, labels) list(grad = preds - labels, hess = rep(1, length(preds)))
  seen <- list()
  lg <- function(preds, labels) {  # logistic loss, recording the scores it was called with
    seen[[length(seen) + 1L]] <<- preds
    p <- 1 / (1 + exp(-preds))
    list(grad = p - labels, hess = p * (1 - p))
  }
  w <- runif(4000, 0.5, 2)
  cases <- list(list(x = d$x, y = d$y, objective = sq, label = "squared error"),
                list(x = d$x, y = d$y, objective = sq, weights = w, quantized = TRUE, label = "weighted, quantized"),
                list(x = b$x, y = yb, objective = lg, valid = list(v = list(x = b$x[1:500, ], y = yb[1:500])),
                     eval_metric = "auc", label = "logistic"),
                list(x = b$x, y = yb, objective = lg, goss = TRUE, learning_rate = 0.25, label = "logistic, GOSS"))
  for (cs in cases) {
    label <- cs$label
    cs$label <- NULL
    args <- c(cs, list(nrounds = 10L, num_leaves = 15L, min_data_in_leaf = 20L, seed = 3))
    seen <- list()
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    seen_cpu <- seen
    seen <- list()
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    expect_identical(gpu$params$device, "cuda")
    expect_same_trees(cpu, gpu, tol = 1e-8, label = label)
    expect_lt(max(abs(predict(cpu, cs$x) - predict(gpu, cs$x))), 1e-6, label = label)
    expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-7, label = paste(label, "log"))
    if (length(seen)) {
      # the function saw the device's scores: round k's are the raw predictions of the first k - 1 trees
      expect_length(seen, 10L)
      expect_equal(seen[[6]], predict(gpu, cs$x, iteration = 5L), tolerance = 1e-12, label = label)
      expect_equal(seen, seen_cpu, tolerance = 1e-9, label = label)
    }
  }
})

test_that("LambdaRank trains on the GPU: the CPU's trees and NDCG and MAP logs", {
  skip_without_gpu()
  d <- tiefree(16)
  grade <- findInterval(d$y, stats::quantile(d$y, c(0.5, 0.8, 0.95)))
  set.seed(16)
  qs <- sort(sample.int(200, 4000, TRUE))  # queries of different sizes, rows grouped
  tr <- 1:3000
  va <- 3001:4000
  for (v in list(list(), list(quantized = TRUE), list(lambdarank_truncation_level = 5L, eval_at = c(3L, 10L)),
                 list(eval_metric = c("map", "ndcg"), eval_at = c(2L, 5L), early_stopping_rounds = 3L))) {
    label <- if (length(v)) paste(names(v), collapse = ", ") else "defaults"
    args <- c(list(d$x[tr, ], grade[tr], group = qs[tr], objective = "lambdarank", nrounds = 12L, num_leaves = 15L,
                   min_data_in_leaf = 10L, seed = 1,
                   valid = list(v = list(x = d$x[va, ], y = grade[va], group = qs[va]))), v)
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    expect_identical(gpu$params$device, "cuda")
    expect_same_trees(cpu, gpu, tol = 1e-8, label = label)
    expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-9, label = paste(label, "log"))
    expect_lt(max(abs(predict(cpu, d$x) - predict(gpu, d$x))), 1e-6, label = label)
    if (!is.null(v$eval_metric)) {
      # the values are the CPU's (above), which test-rank.R checks against
      # plain R; here: which metrics, and early stopping on the first
      expect_identical(names(gpu$evaluation_log), c("iter", "v_map@2", "v_map@5", "v_ndcg@2", "v_ndcg@5"))
      expect_equal(gpu$best_iteration, which.max(gpu$evaluation_log[["v_map@2"]]))
    }
  }
})

test_that("GPU and CPU grow the same trees for the Poisson, gamma, Tweedie and Huber losses", {
  skip_without_gpu()
  d <- tiefree(13)
  f <- 3 * sin(2 * d$x$x1) + 4 * (d$x$x2 > 0.6) + d$x$x3 * (d$x$x4 > 1) + 0.5 * d$x$x4
  set.seed(13)
  mu <- exp(0.25 * f)
  ys <- list(poisson = rpois(4000, mu), gamma = rgamma(4000, shape = 3, rate = 3 / mu),
             tweedie = rpois(4000, mu) * rgamma(4000, shape = 2, rate = 2), huber = d$y)
  for (obj in names(ys)) {
    args <- c(list(d$x, ys[[obj]], objective = obj, tweedie_variance_power = 1.3, huber_delta = 0.5), gpu_params)
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    expect_identical(gpu$params$objective, obj)
    # internal values come from the GPU's fixed-point sums, whose unit the
    # largest |gradient| sets: Poisson's counts (up to about 40 here, most
    # gradients under 1) leave them about 1e-7 from the CPU's doubles
    expect_same_trees(cpu, gpu, tol = 1e-8, label = obj, tol_internal = 1e-5)
    expect_lt(max(abs(predict(cpu, d$x, type = "raw") - predict(gpu, d$x, type = "raw"))), 1e-6,
              label = paste(obj, "raw predictions"))
  }
})

test_that("cross_entropy, fair, MAPE, multiclassova and Cox train on the GPU: the CPU's trees and logs", {
  skip_without_gpu()
  d <- tiefree(17)
  f <- 3 * sin(2 * d$x$x1) + 4 * (d$x$x2 > 0.6) + d$x$x3 * (d$x$x4 > 1) + 0.5 * d$x$x4
  m <- tiefree(18, task = "multiclass")
  set.seed(17)
  w <- runif(4000, 0.5, 2)
  # survival times from the risk exp(f / 2), a third of them censored
  # (helper-surv.R: survival::Surv(tt, ev) built by hand)
  tt <- rexp(4000, exp((f - mean(f)) / 2))
  ev <- rbinom(4000, 1, 2 / 3)
  surv <- surv_by_hand(tt, ev)
  tr <- 1:3000
  va <- 3001:4000
  cases <- list(
    list(label = "cross_entropy", objective = "cross_entropy", y = sigmoid((f - mean(f)) / 2), x = d$x),
    list(label = "cross_entropy, weighted, GOSS", objective = "cross_entropy", y = sigmoid((f - mean(f)) / 2),
         x = d$x, weights = w, goss = TRUE, learning_rate = 0.25),
    list(label = "fair", objective = "fair", fair_c = 0.7, y = d$y, x = d$x),
    list(label = "fair, quantized", objective = "fair", y = d$y, x = d$x, quantized = TRUE),
    list(label = "mape", objective = "mape", y = exp(f / 4) + 0.5, x = d$x),
    list(label = "mape, weighted, bagged", objective = "mape", y = exp(f / 4) + 0.5, x = d$x, weights = w,
         bagging_fraction = 0.7, bagging_freq = 2L),
    list(label = "multiclassova", objective = "multiclassova", y = m$y, x = m$x),
    # quantized: at full precision on an H200 this forest's CPU and GPU trees
    # parted at a split of 52 rows deep in tree 1 (a near tie of the GPU's
    # fixed-point sums and the CPU's doubles), the boosted model above not;
    # quantized histograms are the same integers on both devices
    list(label = "multiclassova, forest", objective = "multiclassova", y = m$y, x = m$x, boosting = "rf",
         bagging_fraction = 0.6, bagging_freq = 1L, quantized = TRUE),
    list(label = "cox", objective = "cox", y = surv, x = d$x),
    list(label = "cox, weighted", objective = "cox", y = surv, x = d$x, weights = w))
  for (cs in cases) {
    label <- cs$label
    y <- cs$y
    yt <- surv_rows(y, tr)
    yv <- surv_rows(y, va)
    args <- c(list(cs$x[tr, ], yt, valid = list(v = list(x = cs$x[va, ], y = yv))),
              cs[setdiff(names(cs), c("label", "x", "y", "weights"))],
              if (!is.null(cs$weights)) list(weights = cs$weights[tr]),
              list(nrounds = 12L, num_leaves = 15L, min_data_in_leaf = 20L, seed = 5))
    if (is.null(args$learning_rate)) args$learning_rate <- 0.2
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    expect_identical(gpu$params$device, "cuda", label = label)
    expect_identical(gpu$params$objective, cs$objective, label = label)
    # MAPE's leaves are weighted medians of residuals (the same numbers);
    # the others' leaves come from full-precision gradients on both devices
    expect_same_trees(cpu, gpu, tol = 1e-8, label = label, tol_internal = 1e-5)
    expect_lt(max(abs(predict(cpu, cs$x, type = "raw") - predict(gpu, cs$x, type = "raw"))), 1e-6, label = label)
    expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-7, label = paste(label, "log"))
  }
  # the GPU's multiclassova gradients are each class's logistic loss on its
  # own score: the first round's trees of a model with one round, fitted in
  # plain R from the starting scores, are their leaves' -G / H x the rate
  one <- hb_quiet(m$x, m$y, objective = "multiclassova", nrounds = 1L, num_leaves = 4L, learning_rate = 0.5,
                  min_data_in_leaf = 50L, device = "cuda")
  leaves <- predict(one, m$x, type = "leaf")
  tab <- hb_trees(one)
  yk <- as.integer(m$y) - 1L
  for (k in 0:2) {
    pk <- mean(yk == k)
    p0 <- pk  # the sigmoid of the starting log-odds
    g <- p0 - (yk == k)
    h <- rep(p0 * (1 - p0), length(g))
    lt <- tab[tab$tree == k + 1L & tab$is_leaf, ]
    want <- vapply(split(seq_along(g), leaves[, k + 1L]), function(r) -0.5 * sum(g[r]) / sum(h[r]), 0)
    expect_equal(lt$value[match(paste0("L", names(want)), lt$id)], unname(want), tolerance = 1e-8,
                 label = paste("multiclassova class", k))
  }
})

test_that("a custom multiclass objective trains on the GPU: the CPU's trees", {
  skip_without_gpu()
  m <- tiefree(19, task = "multiclass")
  softmax_obj <- function(preds, labels) {
    e <- exp(preds - apply(preds, 1, max))
    p <- e / rowSums(e)
    Y <- outer(labels, 0:2, "==") * 1
    list(grad = p - Y, hess = 1.5 * p * (1 - p))
  }
  # quantized: at full precision on an H200 the CPU's and GPU's first trees
  # parted at their 12th split (88 rows), a near tie of fixed-point sums and
  # doubles; quantized histograms are the same integers on both devices.
  # test-objectives-more.R checks this objective against the built-in softmax.
  args <- list(m$x, m$y, objective = softmax_obj, nrounds = 8L, num_leaves = 15L, min_data_in_leaf = 20L,
               learning_rate = 0.3, seed = 2, quantized = TRUE)
  cpu <- do.call(hb_quiet, c(args, device = "cpu"))
  gpu <- do.call(hb_quiet, c(args, device = "cuda"))
  expect_identical(gpu$params$device, "cuda")
  expect_identical(hb_trees(gpu), hb_trees(cpu))
  expect_identical(predict(gpu, m$x), predict(cpu, m$x))
})

test_that("l1 and quantile on the GPU: the CPU's trees, leaves refit to the same residual quantiles", {
  skip_without_gpu()
  d <- tiefree(15)
  set.seed(15)
  w <- runif(4000, 0.5, 2)
  tr <- 1:3000
  va <- 3001:4000
  variants <- list(list(), list(weights = w[tr]), list(bagging_fraction = 0.7, bagging_freq = 2L),
                   list(goss = TRUE, learning_rate = 0.25), list(quantized = TRUE),
                   list(boosting = "rf", feature_fraction = 0.6))
  for (obj in c("l1", "quantile")) {
    for (v in variants) {
      label <- paste(obj, paste(names(v), if (length(v)) sapply(v, function(z) if (length(z) > 1) "w" else z),
                                collapse = ", "))
      args <- c(list(d$x[tr, ], d$y[tr], objective = obj, quantile_alpha = 0.8, nrounds = 10L, num_leaves = 15L,
                     min_data_in_leaf = 20L, seed = 4, valid = list(v = list(x = d$x[va, ], y = d$y[va]))), v)
      if (is.null(v$learning_rate)) args$learning_rate <- 0.2
      cpu <- do.call(hb_quiet, c(args, device = "cpu"))
      gpu <- do.call(hb_quiet, c(args, device = "cuda"))
      expect_identical(gpu$params$device, "cuda")
      # leaves are quantiles of residuals: the same numbers (to rounding), not refit sums;
      # internal nodes keep the search's -G/H, from fixed-point sums whose scale GOSS's
      # scaled-up sampled gradients coarsen (about 1e-5 of the CPU's doubles)
      expect_same_trees(cpu, gpu, tol = 1e-12, label = label, tol_internal = 1e-5)
      expect_lt(max(abs(predict(cpu, d$x) - predict(gpu, d$x))), 1e-9, label = label)
      expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-9, label = paste(label, "log"))
    }
  }
  # the GPU model's leaves, round by round: the weighted 0.8 quantile of each
  # leaf's residuals at the scores before the round (plain R, as test-objectives.R)
  fit <- hb_quiet(d$x, d$y, objective = "quantile", quantile_alpha = 0.8, weights = w, nrounds = 2L,
                  num_leaves = 7L, learning_rate = 0.5, device = "cuda")
  leaves <- predict(fit, d$x, type = "leaf")
  tab <- hb_trees(fit)
  s <- rep(ref_wquantile(d$y, w, 0.8), 4000)
  for (t in 1:2) {
    lt <- tab[tab$tree == t & tab$is_leaf, ]
    want <- vapply(split(seq_along(s), leaves[, t]), function(r) 0.5 * ref_wquantile(d$y[r] - s[r], w[r], 0.8), 0)
    expect_equal(lt$value[match(paste0("L", names(want)), lt$id)], unname(want), tolerance = 1e-12,
                 label = paste("GPU quantile tree", t))
    s <- s + lt$value[match(paste0("L", leaves[, t]), lt$id)]
  }
  expect_equal(predict(fit, d$x), s, tolerance = 1e-12)
})

test_that("GOSS samples the CPU's rows on the GPU: the same trees and logs (ties at the threshold too)", {
  skip_without_gpu()
  cases <- list(regression = tiefree(43), binary = tiefree(44, task = "binary"),
                multiclass = tiefree(45, task = "multiclass"))
  # integer labels: rows of a leaf share their |g h|, so many tie at the threshold
  cases$ties <- cases$regression
  cases$ties$y <- round(cases$ties$y)
  for (nm in names(cases)) {
    d <- cases[[nm]]
    tr <- 1:3000
    va <- 3001:4000
    for (q in c(FALSE, TRUE)) {
      label <- paste(nm, if (q) "quantized" else "")
      # learning_rate 0.25: GOSS samples from round 5 on
      args <- list(d$x[tr, ], d$y[tr], goss = TRUE, top_rate = 0.25, other_rate = 0.15, nrounds = 14L,
                   num_leaves = 15L, min_data_in_leaf = 10L, learning_rate = 0.25, seed = 8, quantized = q,
                   valid = list(v = list(x = d$x[va, ], y = d$y[va])))
      expect_gpu_as_cpu(args, d$x, label)
    }
  }
  # the sample is a sample: later trees hold fewer rows than the first ones
  d <- cases$regression
  gpu <- hb_quiet(d$x, d$y, goss = TRUE, top_rate = 0.2, other_rate = 0.1, nrounds = 8L, num_leaves = 4L,
                  learning_rate = 0.25, seed = 8, device = "cuda")
  tt <- hb_trees(gpu)
  rows <- as.vector(tapply(tt$count[tt$is_leaf], tt$tree[tt$is_leaf], sum))
  expect_equal(rows[1:4], rep(4000, 4))
  expect_true(all(rows[5:8] < 4000 * 0.35) && all(rows[5:8] >= 4000 * 0.2))
})

test_that("balanced bagging bags the CPU's rows on the GPU: the same trees and logs", {
  skip_without_gpu()
  d <- tiefree(46, task = "binary")
  tr <- 1:3000
  va <- 3001:4000
  pos <- d$y[tr] == levels(d$y)[2L]
  for (smp in list(list(neg_bagging_fraction = 0.3, quantized = FALSE),
                   list(pos_bagging_fraction = 0.6, neg_bagging_fraction = 0.8, bagging_freq = 2L, quantized = TRUE),
                   list(neg_bagging_fraction = 0.4, boosting = "rf", quantized = TRUE))) {
    label <- paste(names(smp), unlist(smp), collapse = ", ")
    args <- c(list(d$x[tr, ], d$y[tr], nrounds = 12L, num_leaves = 15L, min_data_in_leaf = 10L, seed = 9,
                   valid = list(v = list(x = d$x[va, ], y = d$y[va]))),
              utils::modifyList(list(bagging_freq = 1L), smp))
    expect_gpu_as_cpu(args, d$x, label)
  }
  # the bag: every positive row and about 30% of the negative ones in each tree
  gpu <- hb_quiet(d$x[tr, ], d$y[tr], nrounds = 4L, num_leaves = 4L, bagging_freq = 1L, neg_bagging_fraction = 0.3,
                  seed = 9, device = "cuda")
  tt <- hb_trees(gpu)
  rows <- as.vector(tapply(tt$count[tt$is_leaf], tt$tree[tt$is_leaf], sum))
  nneg <- sum(!pos)
  expect_true(all(abs(rows - sum(pos) - 0.3 * nneg) < 5 * sqrt(nneg * 0.21)), label = paste(rows, collapse = " "))
})

test_that("a random forest grows the CPU's trees on the GPU, and its scores are the mean of its trees", {
  skip_without_gpu()
  for (task in c("regression", "binary", "multiclass")) {
    d <- tiefree(41, task = task)
    tr <- 1:3000
    va <- 3001:4000
    samplings <- list(list(bagging_fraction = 0.6, bagging_freq = 1L), list(feature_fraction = 0.5),
                      list(bagging_fraction = 0.7, bagging_freq = 2L, feature_fraction = 0.75, quantized = TRUE))
    for (smp in samplings) {
      label <- paste(task, paste(names(smp), unlist(smp), collapse = ", "))
      args <- c(list(d$x[tr, ], d$y[tr], boosting = "rf", nrounds = 12L, num_leaves = 15L, min_data_in_leaf = 20L,
                     seed = 5, valid = list(v = list(x = d$x[va, ], y = d$y[va]))), smp)
      # the logs come from the device's running means of the trees (train and validation rows)
      gpu <- expect_gpu_as_cpu(args, d$x, label)$gpu
      expect_identical(gpu$params$boosting, "rf")
      # and the last validation entry is the metric of predict()'s forest mean
      pv <- predict(gpu, d$x[va, ], type = "raw")
      last <- tail(gpu$evaluation_log, 1)
      if (task == "regression") {
        expect_equal(last$v_rmse, sqrt(mean((d$y[va] - pv)^2)), tolerance = 1e-9, label = label)
      } else if (task == "binary") {
        yv <- as.integer(d$y[va]) - 1L
        expect_equal(last$v_logloss, logloss(yv, sigmoid(pv)), tolerance = 1e-9, label = label)
      } else {
        pr <- exp(pv - apply(pv, 1, max))
        pr <- pr / rowSums(pr)
        yv <- as.integer(d$y[va])
        expect_equal(last$v_multi_logloss, -mean(log(pr[cbind(seq_along(yv), yv)])), tolerance = 1e-9, label = label)
      }
    }
  }
  # a per-row offset: the forest averages above each row's own start
  d <- tiefree(42)
  off <- 0.5 * sin(3 * d$x$x2)
  args <- list(d$x, d$y, boosting = "rf", feature_fraction = 0.5, nrounds = 8L, num_leaves = 15L, seed = 2,
               init_score = off)
  cpu <- do.call(hb_quiet, c(args, device = "cpu"))
  gpu <- do.call(hb_quiet, c(args, device = "cuda"))
  expect_same_trees(cpu, gpu, tol = 1e-8, label = "rf with an offset")
  expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-7)
})

test_that("monotone constraints on the GPU: the CPU's trees, and predictions monotone along each constrained column", {
  skip_without_gpu()
  # x1 rises then falls and x3 matters with x4: constraints bind
  tasks <- list(regression = tiefree(46), binary = tiefree(47, task = "binary"),
                multiclass = tiefree(48, task = "multiclass"))
  tasks$na <- tasks$regression
  tasks$na$x$x1[seq(5, 4000, by = 9)] <- NA
  variants <- list(list(), list(quantized = TRUE), list(bagging_fraction = 0.7, bagging_freq = 1L, lambda_l1 = 0.3),
                   list(max_depth = 4L, lambda_l2 = 3))
  mc <- c(x1 = 1, x3 = -1)
  for (nm in names(tasks)) {
    d <- tasks[[nm]]
    for (v in if (nm == "regression") variants else variants[1:2]) {
      label <- paste(nm, paste(names(v), unlist(v), collapse = ", "))
      args <- c(list(d$x, d$y, nrounds = 12L, num_leaves = 15L, min_data_in_leaf = 20L, learning_rate = 0.2, seed = 7,
                     monotone_constraints = mc), v)
      cpu <- do.call(hb_quiet, c(args, device = "cpu"))
      gpu <- do.call(hb_quiet, c(args, device = "cuda"))
      expect_identical(gpu$params$device, "cuda")
      # a leaf held at a bound takes the midpoint of its parent split's two
      # outputs, which come from the search's sums (fixed point on the GPU,
      # about 1e-8 from the CPU's doubles): leaf values as close as internal ones
      expect_same_trees(cpu, gpu, tol = 1e-6, label = label)
      expect_lt(max(abs(predict(cpu, d$x, type = "raw") - predict(gpu, d$x, type = "raw"))), 1e-6, label = label)
      # monotone along x1 (up) and x3 (down) at 60 rows, the other columns held
      grid <- seq(-3, 3, length.out = 41)
      for (col in c("x1", "x3")) {
        rows <- d$x[rep(seq(1, 4000, length.out = 60), each = length(grid)), ]
        rows[[col]] <- rep(grid, 60)
        p <- matrix(predict(gpu, rows, type = "raw"), nrow = length(grid))
        steps <- diff(p) * mc[[col]]
        expect_true(all(steps >= -1e-12), label = paste(label, col, "monotone"))
      }
    }
  }
})

test_that("path_smooth and max_delta_step on the GPU: leaves from their rows in plain R, and the CPU's trees", {
  skip_without_gpu()
  # Plain R: regression from init_score 0 (each row's gradient -y, hessian
  # 1), lambda 0: a node's own output is its rows' mean of y, capped to
  # [-mds, mds]; a child's is then smoothed towards its parent's output by
  # its rows (w = rows / path_smooth: o w / (w + 1) + parent / (w + 1));
  # the root is capped only. Leaves carry 0.5 (the learning rate) times it.
  # The outputs come from the search's histogram sums, fixed point on the
  # GPU: equal to plain R's within 1e-6 (about 1e-8 here).
  d <- tiefree(51, n = 3000)
  y <- d$y - mean(d$y) + 2  # the root's mean, 2, is above the cap; some children are below it
  for (v in list(list(path_smooth = 40), list(max_delta_step = 1.5), list(path_smooth = 40, max_delta_step = 1.5))) {
    label <- paste(names(v), unlist(v), collapse = ", ")
    alpha <- if (is.null(v$path_smooth)) 0 else v$path_smooth
    mds <- if (is.null(v$max_delta_step)) 0 else v$max_delta_step
    gpu <- do.call(hb_quiet, c(list(d$x, y, init_score = rep(0, 3000), nrounds = 1L, num_leaves = 8L,
                                    min_data_in_leaf = 20L, learning_rate = 0.5, device = "cuda"), v))
    expect_identical(gpu$params$device, "cuda")
    tr <- hb_trees(gpu)
    expect_gte(sum(tr$is_leaf), 6L, label = label)
    rows <- tree_rows(tr, d$x)
    cap <- function(o) if (mds > 0) max(-mds, min(mds, o)) else o
    out <- list(N0 = cap(mean(y)))
    for (id in tr$id[!tr$is_leaf]) {
      nd <- tr[tr$id == id, ]
      for (ch in c(nd$left, nd$right)) {
        r <- rows[[ch]]
        o <- cap(mean(y[r]))
        if (alpha > 0) o <- o * (length(r) / alpha) / (length(r) / alpha + 1) + out[[id]] / (length(r) / alpha + 1)
        out[[ch]] <- o
      }
    }
    leaves <- tr[tr$is_leaf, ]
    expect_equal(leaves$value, unname(0.5 * unlist(out[leaves$id])), tolerance = 1e-6, label = label)
    # the options change the leaves: plain means differ
    expect_gt(max(abs(leaves$value - 0.5 * vapply(rows[leaves$id], function(r) mean(y[r]), 0))), 1e-3,
              label = label)
  }
  # The CPU's trees: with NAs, monotone constraints, bagging, L1/L2, every
  # task, leaves refit by l1 (capped on the host), categorical splits. Each
  # case's CPU trees (on exact_sums' grid, the CPU's default) are those of
  # plain doubles (exact_sums = FALSE): sums a little off give the same splits. (A cap that binds at most leaves
  # makes near ties: where both children of a candidate are capped, its
  # gain barely depends on the threshold; multiclass with max_delta_step
  # 0.8 parts from its exact_sums trees at the 72nd node.)
  reg <- tiefree(52)
  reg$x$x1[seq(3, 4000, by = 11)] <- NA
  cat <- tiefree(16, n = 6000)
  set.seed(16)
  cat$x$b <- factor(sample(paste0("B", 1:12), 6000, TRUE, prob = c(40, 30, 20, 10, 5, 4, 3, 2, 1, 1, 0.5, 0.5)))
  cat$x$a <- factor(sample(c("u", "v", "w"), 6000, TRUE))
  cat$x$b[sample.int(6000, 300)] <- NA
  cat$y <- cat$y + c(1, -1, 0.3)[as.integer(cat$x$a)] +
    ifelse(is.na(cat$x$b), 0.5, rnorm(12, sd = 1.5)[as.integer(cat$x$b)])
  cases <- list(
    list(d = reg, a = list(path_smooth = 10)),
    list(d = reg, a = list(max_delta_step = 0.4, path_smooth = 5, monotone_constraints = c(x1 = 1, x3 = -1))),
    list(d = reg, a = list(max_delta_step = 0.3, bagging_fraction = 0.7, bagging_freq = 1L, lambda_l1 = 0.3,
                           lambda_l2 = 2)),
    list(d = reg, a = list(objective = "l1", max_delta_step = 0.5)),
    list(d = tiefree(53, task = "binary"), a = list(max_delta_step = 0.3, path_smooth = 20)),
    list(d = tiefree(54, task = "multiclass"), a = list(path_smooth = 3, max_delta_step = 2)),
    list(d = cat, a = list(path_smooth = 10, cat_l2 = 3, min_data_per_group = 10L, max_delta_step = 1))
  )
  for (cs in cases) {
    r <- both_devices(cs, categorical = !is.null(cs$a$cat_l2))
    label <- r$label; args <- r$args; cpu <- r$cpu; gpu <- r$gpu
    plain <- do.call(hb_quiet, c(args, device = "cpu", exact_sums = FALSE))
    splits <- c("feature", "threshold", "count")
    expect_identical(hb_trees(plain)[splits], hb_trees(cpu)[splits], label = paste(label, "exact_sums = FALSE"))
    # leaves from the search's sums (fixed point on the GPU, doubles on the
    # CPU), each output then capped, smoothed and bounded: within 1e-5
    expect_same_trees(cpu, gpu, tol = 1e-5, label = label, tol_internal = 1e-5)
    expect_lt(max(abs(predict(cpu, cs$d$x, type = "raw") - predict(gpu, cs$d$x, type = "raw"))), 1e-5, label = label)
    if (!is.null(cs$a$max_delta_step)) {
      v <- hb_trees(gpu)$value[hb_trees(gpu)$is_leaf]
      lr <- if (is.null(cs$a$learning_rate)) gpu_params$learning_rate else cs$a$learning_rate
      expect_lte(max(abs(v)), lr * cs$a$max_delta_step + 1e-12, label = label)
    }
  }
  # quantized training does not take them, on either device
  expect_error(hb_quiet(reg$x, reg$y, nrounds = 2L, path_smooth = 1, quantized = TRUE, device = "cuda"),
               class = "histboost_error_input", regexp = "quantized")
})

test_that("extra_trees, feature_fraction_bynode and interaction constraints on the GPU: the CPU's trees", {
  skip_without_gpu()
  # The draws are keyed by (seed, tree, node, feature or column) on both
  # devices. Node sampling and interaction constraints with quantized
  # gradients: the same integers, so byte for byte the CPU's trees (a factor
  # wider than max_bin is one column of four features, sampled and grouped
  # as one); extremely randomized trees (full precision only): the CPU's
  # trees, leaves within 1e-8. Each case's first option is the one that
  # must bind: without it the trees differ.
  wide <- wide_factor_data()
  wide$x$z <- wide$x$x2 + rnorm(5000, sd = 0.1)  # six columns: node samples of 2 and 3 differ
  reg <- tiefree(61)
  reg$x$x1[seq(5, 4000, by = 13)] <- NA
  cat <- tiefree(62, n = 6000)
  set.seed(62)
  cat$x$a <- factor(sample(c("u", "v", "w"), 6000, TRUE))
  cat$x$b <- factor(sample(paste0("B", 1:12), 6000, TRUE))
  cat$y <- cat$y + c(1, -1, 0.3)[as.integer(cat$x$a)] + rnorm(12, sd = 1.5)[as.integer(cat$x$b)]
  sampled <- list(
    list(d = wide, a = list(feature_fraction_bynode = 0.5, max_bin = 15L, min_data_per_group = 20L)),
    list(d = wide, a = list(feature_fraction_bynode = 0.3, feature_fraction = 0.8, max_bin = 15L)),
    list(d = tiefree(63, task = "multiclass"), a = list(feature_fraction_bynode = 0.6)),
    list(d = reg, a = list(feature_fraction_bynode = 0.5, bagging_fraction = 0.7, bagging_freq = 1L)),
    list(d = reg, a = list(interaction_constraints = list(c("x1", "x2"), c("x3", "x4")))),
    list(d = wide, a = list(interaction_constraints = list(c("g", "x1"), c("x2", "x3", "z")),
                            feature_fraction_bynode = 0.7, max_bin = 15L)),
    list(d = tiefree(63, task = "multiclass"), a = list(interaction_constraints = list(c("x1", "x3"), c("x2", "x4"))))
  )
  for (cs in sampled) {
    r <- both_devices(cs, quantized = TRUE)
    label <- r$label; args <- r$args; gpu <- r$gpu
    expect_identical(hb_trees(gpu), hb_trees(r$cpu), label = label)
    plain <- do.call(hb_quiet, c(args[names(args) != names(cs$a)[1]], device = "cuda"))
    expect_false(identical(hb_trees(plain)$feature, hb_trees(gpu)$feature), label = label)
  }
  extra <- list(
    list(d = reg, a = list(extra_trees = TRUE)),
    list(d = tiefree(64, task = "binary"), a = list(extra_trees = TRUE, feature_fraction_bynode = 0.6)),
    list(d = cat, a = list(extra_trees = TRUE, min_data_per_group = 10L, cat_smooth = 5)),
    list(d = reg, a = list(extra_trees = TRUE, path_smooth = 5, monotone_constraints = c(x1 = 1)))
  )
  for (cs in extra) {
    r <- both_devices(cs, categorical = identical(cs$d, cat))
    label <- r$label; args <- r$args; cpu <- r$cpu; gpu <- r$gpu
    tol <- if (is.null(cs$a$path_smooth)) 1e-8 else 1e-5  # smoothed leaves: from the search's sums
    expect_same_trees(cpu, gpu, tol = tol, label = label, tol_internal = 1e-5)
    expect_lt(max(abs(predict(cpu, cs$d$x, type = "raw") - predict(gpu, cs$d$x, type = "raw"))), 1e-5, label = label)
    plain <- do.call(hb_quiet, c(args[names(args) != names(cs$a)[1]], device = "cuda"))
    expect_false(identical(hb_trees(plain)$threshold, hb_trees(gpu)$threshold), label = label)
  }
})

test_that("DART on the GPU: the CPU's drops, rescaled trees and validation logs", {
  skip_without_gpu()
  # The drops depend on seed and round only, so both devices drop the same
  # iterations; the GPU keeps each tree's routing and routes its training
  # and validation rows through the dropped trees on the device (out before
  # the round, back in rescaled after it). Quantized: the same integers and
  # the same score arithmetic, so byte for byte the CPU's trees and logs
  # (multiclass: tree number = round x 3 + class); full precision: the CPU's
  # trees, leaves within 1e-8, on cases whose CPU splits are those of plain
  # doubles too (exact_sums = FALSE: no near ties). Each case must drop trees, and DART must bind: the same
  # arguments with boosting = "gbdt" give other trees.
  reg <- tiefree(71)
  reg$x$x1[seq(7, 4000, by = 17)] <- NA
  base <- list(boosting = "dart", drop_rate = 0.4, skip_drop = 0.2, nrounds = 20L)
  dart_args <- c("boosting", "drop_rate", "skip_drop", "xgboost_dart_mode", "uniform_drop", "max_drop")
  run <- function(cs, ...) {
    nv <- 1000L
    r <- both_devices(cs, valid = list(v = list(x = cs$d$x[seq_len(nv), ], y = cs$d$y[seq_len(nv)])), ...)
    expect_gte(sum(lengths(r$gpu$dart_dropped)), 5L, label = r$label)
    expect_identical(r$gpu$dart_dropped, r$cpu$dart_dropped, label = r$label)
    gbdt <- do.call(hb_quiet, c(r$args[!names(r$args) %in% dart_args], device = "cuda"))
    expect_false(isTRUE(all.equal(hb_trees(gbdt)$value, hb_trees(r$gpu)$value)), label = r$label)
    r
  }
  quant <- list(
    list(d = reg, a = c(base, list(bagging_fraction = 0.8, bagging_freq = 1L))),
    list(d = tiefree(73, task = "binary"), a = c(base, list(xgboost_dart_mode = TRUE, uniform_drop = TRUE,
                                                            max_drop = 3L))),
    list(d = tiefree(74, task = "multiclass"), a = c(base, list(max_drop = 4L)))
  )
  for (cs in quant) {
    r <- run(cs, quantized = TRUE)
    expect_identical(hb_trees(r$gpu), hb_trees(r$cpu), label = r$label)
    expect_identical(r$gpu$evaluation_log, r$cpu$evaluation_log, label = r$label)
  }
  full <- list(
    list(d = reg, a = base),
    list(d = tiefree(75, task = "binary"), a = c(base, list(xgboost_dart_mode = TRUE))),
    list(d = reg, a = c(base, list(objective = "l1")))  # leaves refit on the host, from the scores after the drops
  )
  for (cs in full) {
    r <- run(cs)
    label <- r$label
    plain <- do.call(hb_quiet, c(r$args, device = "cpu", exact_sums = FALSE))
    splits <- c("feature", "threshold", "count")
    expect_identical(hb_trees(plain)[splits], hb_trees(r$cpu)[splits], label = paste(label, "exact_sums = FALSE"))
    expect_same_trees(r$cpu, r$gpu, tol = 1e-8, label = label)
    expect_lt(max(abs(predict(r$cpu, cs$d$x, type = "raw") - predict(r$gpu, cs$d$x, type = "raw"))), 1e-6,
              label = label)
    expect_equal(r$gpu$evaluation_log, r$cpu$evaluation_log, tolerance = 1e-8, label = paste(label, "log"))
  }
})

test_that("DART on the GPU with host gradients, GOSS, two validation sets, monotone bounds: the CPU's trees", {
  skip_without_gpu()
  # Quantized, so byte for byte: LambdaRank's and Cox's gradients are the
  # host's, from the scores the device hands back after its drops; GOSS
  # samples from the gradients after the drops; two validation sets are
  # each rescaled on the device; monotone bounds under DART's rates.
  d <- tiefree(76)
  f <- 3 * sin(2 * d$x$x1) + 4 * (d$x$x2 > 0.6) + d$x$x3 * (d$x$x4 > 1) + 0.5 * d$x$x4
  grade <- findInterval(d$y, stats::quantile(d$y, c(0.5, 0.8, 0.95)))
  set.seed(76)
  qs <- sort(sample.int(200, 4000, TRUE))
  surv <- surv_by_hand(rexp(4000, exp((f - mean(f)) / 2)), rbinom(4000, 1, 2 / 3))
  tr <- 1:3000
  va <- 3001:4000
  vb <- 1:500
  dart <- list(boosting = "dart", drop_rate = 0.4, skip_drop = 0.2, nrounds = 20L, num_leaves = 15L,
               min_data_in_leaf = 20L, learning_rate = 0.2, seed = 7, quantized = TRUE)
  cases <- list(
    list(label = "lambdarank", x = d$x[tr, ], y = grade[tr], group = qs[tr], objective = "lambdarank",
         valid = list(v = list(x = d$x[va, ], y = grade[va], group = qs[va]))),
    list(label = "cox", x = d$x[tr, ], y = surv_rows(surv, tr), objective = "cox",
         valid = list(v = list(x = d$x[va, ], y = surv_rows(surv, va)))),
    list(label = "goss", x = d$x, y = d$y, goss = TRUE, valid = list(v = list(x = d$x[vb, ], y = d$y[vb]))),
    list(label = "two validation sets, monotone", x = d$x[tr, ], y = d$y[tr], monotone_constraints = c(x1 = 1),
         valid = list(a = list(x = d$x[va, ], y = d$y[va]), b = list(x = d$x[vb, ], y = d$y[vb]))))
  for (cs in cases) {
    label <- cs$label
    args <- c(cs[setdiff(names(cs), "label")], dart)
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    expect_identical(gpu$params$device, "cuda", label = label)
    expect_gte(sum(lengths(gpu$dart_dropped)), 5L, label = label)
    expect_identical(gpu$dart_dropped, cpu$dart_dropped, label = label)
    expect_identical(hb_trees(gpu), hb_trees(cpu), label = label)
    expect_identical(gpu$evaluation_log, cpu$evaluation_log, label = label)
  }
})

test_that("a GPU model's contributions sum to its raw scores and equal the CPU model's", {
  skip_without_gpu()
  d <- tiefree(14, task = "binary")
  cpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu"), gpu_params))
  gpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cuda"), gpu_params))
  pg <- predict(gpu, d$x[1:300, ], type = "contrib")
  expect_equal(rowSums(pg), predict(gpu, d$x[1:300, ], type = "raw"), tolerance = 1e-10)
  # the same trees and leaf counts: the same contributions up to the leaf values' rounding
  expect_equal(pg, predict(cpu, d$x[1:300, ], type = "contrib"), tolerance = 1e-6)
})

test_that("GPU and CPU agree with NAs, factors, L1/L2, depth limits, bagging and feature sampling", {
  skip_without_gpu()
  d <- tiefree(12, n = 5000)
  d$x$x2[sample.int(5000, 400)] <- NA
  set.seed(12)
  d$x$g <- factor(sample(paste0("L", 1:9), 5000, TRUE))
  d$y <- d$y + c(2, -1, 0.5, 0, 3, -2, 1, -0.5, 1.5)[as.integer(d$x$g)]
  variants <- list(
    list(),
    list(lambda_l1 = 0.5, lambda_l2 = 2, max_depth = 4L),
    list(bagging_fraction = 0.7, bagging_freq = 2L, feature_fraction = 0.8),
    list(min_data_per_group = 50L, cat_smooth = 5, max_cat_threshold = 4L)
  )
  for (v in variants) {
    p <- modifyList(gpu_params, v)
    cpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu"), p))
    gpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cuda"), p))
    label <- paste(names(v), unlist(v), collapse = ", ")
    if (!nzchar(label)) label <- "defaults"
    expect_same_trees(cpu, gpu, tol = 1e-8, label = label)
    expect_lt(max(abs(predict(cpu, d$x, type = "raw") - predict(gpu, d$x, type = "raw"))), 1e-6, label = label)
  }
})

test_that("GPU and CPU grow the same trees on 30 features and 120,000 rows (octets; 4-bit bins)", {
  skip_without_gpu()
  set.seed(15)
  n <- test_rows(120000L)
  x <- as.data.frame(matrix(runif(n * 30), n, 30))
  x$V7 <- round(x$V7 * 2)
  x$V9[sample.int(n, n %/% 24L)] <- NA
  y <- 3 * sin(4 * x$V1) + 4 * (x$V2 > 0.6) + 2 * x$V3 * (x$V4 > 0.3) + x$V7 + 2 * x$V12^2 + rnorm(n, sd = 0.3)
  # max_bin 15: the histogram kernels read 4-bit bins, eight features a word
  for (mb in c(255L, 15L)) {
    p <- modifyList(gpu_params, list(nrounds = 8L, num_leaves = 31L, max_bin = mb))
    label <- sprintf("30 features, max_bin %d", mb)
    cpu <- do.call(hb_quiet, c(list(x, y, device = "cpu"), p))
    gpu <- do.call(hb_quiet, c(list(x, y, device = "cuda"), p))
    expect_same_trees(cpu, gpu, tol = 1e-8, label = label)
    expect_lt(max(abs(predict(cpu, x, type = "raw") - predict(gpu, x, type = "raw"))), 1e-6, label = label)
    qc <- do.call(hb_quiet, c(list(x, y, device = "cpu", quantized = TRUE), p))
    qg <- do.call(hb_quiet, c(list(x, y, device = "cuda", quantized = TRUE), p))
    expect_identical(hb_trees(qg), hb_trees(qc), label = paste(label, "quantized"))
  }
})

test_that("categorical rules on the GPU are the CPU's: one-vs-rest, cat_smooth, min_data_per_group, cat_l2 leaves", {
  skip_without_gpu()
  d <- tiefree(16, n = 6000)
  set.seed(16)
  d$x$a <- factor(sample(c("u", "v", "w"), 6000, TRUE))                               # 4 bins: one-vs-rest
  d$x$b <- factor(sample(paste0("B", 1:12), 6000, TRUE, prob = c(40, 30, 20, 10, 5, 4, 3, 2, 1, 1, 0.5, 0.5)))
  d$x$c <- factor(sample(paste0("C", 1:30), 6000, TRUE))
  d$x$b[sample.int(6000, 300)] <- NA
  d$y <- d$y + c(1, -1, 0.3)[as.integer(d$x$a)] + ifelse(is.na(d$x$b), 0.5, rnorm(12, sd = 1.5)[as.integer(d$x$b)]) +
    rnorm(30)[as.integer(d$x$c)]
  variants <- list(
    list(),
    list(min_data_per_group = 5L, cat_smooth = 1, cat_l2 = 3, min_data_in_leaf = 5L, num_leaves = 31L),
    list(min_data_per_group = 30L, cat_smooth = 50, max_cat_threshold = 3L, max_cat_to_onehot = 13L),
    list(min_data_per_group = 10L, monotone_constraints = c(x4 = 1L))
  )
  for (v in variants) {
    p <- modifyList(gpu_params, v)
    label <- paste(names(v), vapply(v, function(e) paste(e, collapse = "/"), ""), collapse = ", ")
    if (!nzchar(label)) label <- "defaults"
    cpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu"), p))
    gpu <- do.call(hb_quiet, c(list(d$x, d$y, device = "cuda"), p))
    expect_true(any(hb_trees(cpu)$split_type %in% "categorical"), label = label)
    expect_same_trees(cpu, gpu, tol = 1e-8, label = label)
    expect_lt(max(abs(predict(cpu, d$x, type = "raw") - predict(gpu, d$x, type = "raw"))), 1e-6, label = label)
    qc <- do.call(hb_quiet, c(list(d$x, d$y, device = "cpu", quantized = TRUE), p))
    qg <- do.call(hb_quiet, c(list(d$x, d$y, device = "cuda", quantized = TRUE), p))
    expect_identical(hb_trees(qg), hb_trees(qc), label = paste(label, "quantized"))
  }
})

test_that("skip_unsplittable on the GPU: the CPU's trees, full precision and quantized, and the rule binds", {
  skip_without_gpu()
  # LightGBM's rule: a feature with no valid split in a leaf is not searched below it. Each case
  # trains with and without it on both devices; with it the GPU grows the CPU's trees, and the
  # trees differ from those without it (the rule binds).
  cat <- tiefree(17, n = 6000)
  set.seed(17)
  cat$x$a <- factor(sample(c("u", "v", "w"), 6000, TRUE))
  cat$x$b <- factor(sample(paste0("B", 1:12), 6000, TRUE))
  cat$x$b[sample.int(6000, 300)] <- NA
  cat$y <- cat$y + c(1, -1, 0.3)[as.integer(cat$x$a)] + c(rnorm(12, sd = 0.4), 0.5)[ifelse(is.na(cat$x$b), 13L, as.integer(cat$x$b))]
  a <- rep(c(0, 1), c(1200, 800))  # b alone says nothing at the root; within a's halves, everything
  b <- rep(c(0, 1, 0, 1), c(600, 600, 400, 400))
  inter <- list(x = data.frame(a = a, b = b, c = rep_len(c(0.1, 0.2, 0.7, 1.9), 2000)))
  inter$y <- ifelse(a == 0, 2 * b, 1 + 3 * (1 - b)) + 0.3 * inter$x$c
  barley <- list(x = lattice::barley[, c("variety", "year", "site")], y = lattice::barley$yield)
  cases <- list(
    list(d = cat, a = list(min_gain_to_split = 20, cat_l2 = 20, min_data_per_group = 10L, cat_smooth = 5,
                           num_leaves = 31L)),
    list(d = cat, a = list(min_gain_to_split = 2, cat_l2 = 20, min_data_per_group = 10L, cat_smooth = 5,
                           num_leaves = 63L, min_data_in_leaf = 5L)),
    list(d = cat, a = list(min_gain_to_split = 5, feature_fraction_bynode = 0.6, monotone_constraints = c(x4 = 1L),
                           num_leaves = 31L)),
    list(d = tiefree(18, task = "multiclass"), a = list(min_gain_to_split = 0.5, num_leaves = 31L)),
    list(d = inter, a = list(min_gain_to_split = 1e-3, num_leaves = 4L)),
    list(d = barley, a = list(num_leaves = 15L, learning_rate = 0.05, min_data_in_leaf = 5L,
                              min_data_per_group = 10L, cat_smooth = 5))
  )
  for (cs in cases) {
    r <- both_devices(list(d = cs$d, a = c(list(skip_unsplittable = TRUE), cs$a)))
    expect_same_trees(r$cpu, r$gpu, tol = 1e-8, label = r$label)
    expect_lt(max(abs(predict(r$cpu, cs$d$x, type = "raw") - predict(r$gpu, cs$d$x, type = "raw"))), 1e-6,
              label = r$label)
    plain <- do.call(hb_quiet, c(r$args[names(r$args) != "skip_unsplittable"], device = "cuda"))
    expect_false(identical(hb_trees(plain)[c("feature", "threshold")], hb_trees(r$gpu)[c("feature", "threshold")]),
                 label = paste(r$label, "binds"))
    qc <- do.call(hb_quiet, c(r$args, device = "cpu", quantized = TRUE))
    qg <- do.call(hb_quiet, c(r$args, device = "cuda", quantized = TRUE))
    expect_identical(hb_trees(qg), hb_trees(qc), label = paste(r$label, "quantized"))
  }
})

test_that("a factor wider than max_bin (several internal features) trains alike on the GPU and the CPU", {
  skip_without_gpu()
  d <- wide_factor_data()
  tr <- 1:4000; va <- 4001:5000
  # max_bin 15: the factor's 60 levels span four features
  p <- modifyList(gpu_params, list(max_bin = 15L, min_data_per_group = 20L, eval_metric = "rmse"))
  args <- c(list(d$x[tr, ], d$y[tr], valid = list(list(x = d$x[va, ], y = d$y[va]))), p)
  cpu <- do.call(hb_quiet, c(args, device = "cpu"))
  gpu <- do.call(hb_quiet, c(args, device = "cuda"))
  expect_true(any(hb_trees(cpu)$feature == "g", na.rm = TRUE))
  expect_same_trees(cpu, gpu, tol = 1e-8, label = "wide factor")
  expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-8)
  qa <- c(args, quantized = TRUE)
  qc <- do.call(hb_quiet, c(qa, device = "cpu"))
  qg <- do.call(hb_quiet, c(qa, device = "cuda"))
  expect_identical(hb_trees(qg), hb_trees(qc), label = "wide factor, quantized")
})

test_that("a sparse dgCMatrix trains on the GPU as its dense copy does, and as on the CPU", {
  # the training bins go up feature by feature from the dataset's own
  # (sparse or dense) storage: a column's zeros and nonzeros must land right
  skip_without_gpu()
  skip_if_not_installed("Matrix")
  set.seed(13)
  n <- 4000
  X <- matrix(0, n, 12)
  for (j in 1:12) {
    nz <- sample.int(n, round(n * c(0.02, 0.3, 0.9)[(j - 1) %% 3 + 1]))
    X[nz, j] <- round(rnorm(length(nz)), 3) + j
  }
  y <- X[, 1] - 0.5 * X[, 2] + 0.2 * X[, 3] * (X[, 4] > 0) + rnorm(n, sd = 0.1)
  S <- Matrix::Matrix(X, sparse = TRUE)
  expect_s4_class(S, "dgCMatrix")
  p <- modifyList(gpu_params, list(nrounds = 10L))
  gs <- do.call(hb_quiet, c(list(S, y, device = "cuda"), p))
  gd <- do.call(hb_quiet, c(list(X, y, device = "cuda"), p))
  cs <- do.call(hb_quiet, c(list(S, y, device = "cpu"), p))
  expect_identical(hb_trees(gs), hb_trees(gd))
  expect_same_trees(cs, gs, tol = 1e-8, label = "sparse")
  expect_lt(max(abs(predict(cs, S, type = "raw") - predict(gs, S, type = "raw"))), 1e-6)
})

test_that("GPU training is reproducible: two runs give the identical model", {
  skip_without_gpu()
  d <- gen_task(21, n = 3000, task = "binary", factors = 2, na = 0.05)
  a <- hb_quiet(d$x, d$y, nrounds = 20L, seed = 1, bagging_fraction = 0.8, bagging_freq = 1L, device = "cuda")
  b <- hb_quiet(d$x, d$y, nrounds = 20L, seed = 1, bagging_fraction = 0.8, bagging_freq = 1L, device = "cuda")
  expect_identical(a$model_text, b$model_text)
})

test_that("GPU validation scores and early stopping match the CPU's", {
  skip_without_gpu()
  d <- tiefree(31, n = 4000, task = "binary")
  v <- tiefree(32, n = 1500, task = "binary")
  args <- c(list(d$x, d$y, valid = list(test = list(x = v$x, y = v$y)), eval_metric = c("logloss", "auc"),
                 early_stopping_rounds = 5L, nrounds = 200L), gpu_params[c("num_leaves", "seed")])
  cpu <- do.call(hb_quiet, c(args, device = "cpu"))
  gpu <- do.call(hb_quiet, c(args, device = "cuda"))
  expect_identical(gpu$best_iteration, cpu$best_iteration)
  expect_equal(gpu$evaluation_log, cpu$evaluation_log, tolerance = 1e-6)
  # the validation log equals the metric of the model's own predictions
  p <- predict(gpu, v$x, iteration = nrow(gpu$evaluation_log))
  expect_equal(tail(gpu$evaluation_log$test_logloss, 1), logloss(as.integer(v$y) - 1L, p),
               tolerance = TOL$metric)
})

test_that("running out of GPU memory is a device error, and the GPU works afterwards", {
  skip_without_gpu()
  if (nzchar(Sys.getenv("HB_CUDA_UNDER_SANITIZER")))
    skip("under compute-sanitizer the deliberate failed cudaMalloc counts as an API error; tools/gpu/check.sh oom tests this")
  # 300 features of 256 bins and 131072 leaves: 160 GB of histogram slots.
  set.seed(41)
  x <- as.data.frame(matrix(rnorm(2000 * 300), 2000, 300))
  y <- rnorm(2000)
  err <- expect_error(hb_quiet(x, y, nrounds = 1L, num_leaves = 131072L, min_data_in_leaf = 1L, device = "cuda"),
                      class = "histboost_error_device", regexp = "memory")
  # the error says what it needs: 16 bytes a bin and leaf, each of the 300
  # continuous features in 255 or 256 bins (max_bin, and a missing-value bin)
  hist_mb <- as.numeric(sub(".*\\(([0-9]+) MB of them histograms.*", "\\1", conditionMessage(err)))
  expect_gte(hist_mb, floor(131072 * 300 * 255 * 16 / 1e6))
  expect_lte(hist_mb, ceiling(131072 * 300 * 256 * 16 / 1e6))
  expect_match(conditionMessage(err), "MB of the GPU's [0-9]+ MB are free")
  d <- tiefree(42, n = 1000)
  fit <- hb_quiet(d$x, d$y, nrounds = 3L, device = "cuda")
  expect_identical(fit$niter, 3L)
})

# ---- on a GPU: quantized training ----------------------------------------------

test_that("GPU quantized histograms equal the integer sums computed in plain R (2, 4 and 8 bits)", {
  skip_without_gpu()
  skip_without_test_hooks()
  dd <- hist_data(200000, 7)
  ds <- hb_dataset(dd$x, rnorm(nrow(dd$x)))
  bins <- histboost:::.hb_dataset_bins(ds)
  num_bin <- .Call(histboost:::C_hb_dataset_info, ds$ptr)$num_bin
  n <- nrow(bins)
  set.seed(8)
  for (bits in c(2L, 4L, 8L)) {
    lg <- 2L^(bits - 1L) - 1L
    lh <- 2L^bits - 1L
    # levels at the extremes as often as in between: the packed halves and
    # their 16-bit flushes are stressed (8 bits: a flush every 257 rows)
    gq <- sample(c(-lg, lg, sample(-lg:lg, 10, TRUE)), n, TRUE)
    hq <- sample(c(0L, lh, sample(0:lh, 10, TRUE)), n, TRUE)
    for (rows in list(NULL, sample.int(n, 3000), sample.int(n, 60000))) {
      res <- histboost:::.hb_cuda_hist(ds, gq, hq, rows = rows, quant_bits = bits)
      r <- if (is.null(rows)) seq_len(n) else rows
      what <- sprintf("%d bits, %d rows", bits, length(r))
      expect_identical(res$g, ref_bin_sums(bins, num_bin, gq, r), label = paste("g sums,", what))
      expect_identical(res$h, ref_bin_sums(bins, num_bin, hq, r), label = paste("h sums,", what))
    }
  }
})

test_that("quantized GPU training is reproducible and as accurate as full precision", {
  skip_without_gpu()
  d <- tiefree(51, n = 20000, task = "binary")
  v <- tiefree(52, n = 10000, task = "binary")
  rounds <- if (test_small()) 8L else 60L
  args <- list(d$x, d$y, nrounds = rounds, num_leaves = 31L, learning_rate = 0.1, seed = 3, device = "cuda",
               bagging_fraction = 0.8, bagging_freq = 1L)
  q1 <- do.call(hb_quiet, c(args, quantized = TRUE))
  q2 <- do.call(hb_quiet, c(args, quantized = TRUE))
  expect_identical(q1$model_text, q2$model_text)
  expect_true(q1$params$quantized)
  full <- do.call(hb_quiet, args)
  yv <- as.integer(v$y == "yes")
  if (!test_small()) expect_gt(auc(yv, predict(q1, v$x)), auc(yv, predict(full, v$x)) - 0.002)
  r <- tiefree(53, n = 20000)
  rv <- tiefree(54, n = 10000)
  rargs <- list(r$x, r$y, nrounds = rounds, num_leaves = 31L, seed = 3, device = "cuda")
  qr <- do.call(hb_quiet, c(rargs, quantized = TRUE))
  fr <- do.call(hb_quiet, rargs)
  if (!test_small()) expect_lt(rmse(rv$y, predict(qr, rv$x)), 1.01 * rmse(rv$y, predict(fr, rv$x)))
  # stochastic rounding draws differ with the seed: the model does too
  q3 <- do.call(hb_quiet, modifyList(c(args, quantized = TRUE), list(seed = 4)))
  expect_false(identical(q1$model_text, q3$model_text))
})

test_that("quantized CPU and GPU models are identical, tree by tree and split by split", {
  skip_without_gpu()
  d <- gen_task(71, n = 6000, task = "binary", factors = 2, na = 0.05)
  r <- gen_task(72, n = 6000, task = "regression", factors = 1, na = 0.05)
  m <- gen_task(73, n = 6000, task = "multiclass", factors = 1, K = 3)
  w <- runif(6000, 0.5, 2)
  cases <- list(
    list(d, list()),
    list(d, list(grad_bits = 2L, stochastic_rounding = FALSE)),
    list(d, list(grad_bits = 8L, refit_leaves = FALSE, bagging_fraction = 0.7, bagging_freq = 1L,
                 feature_fraction = 0.7)),
    list(r, list(lambda_l1 = 0.2, lambda_l2 = 1, max_depth = 5L)),
    list(r, list(weights = w, grad_bits = 5L)),
    list(m, list(min_data_per_group = 30L, cat_smooth = 5))
  )
  for (cs in cases) {
    data <- cs[[1]]
    args <- c(list(data$x, data$y, nrounds = 12L, num_leaves = 31L, quantized = TRUE, seed = 9), cs[[2]])
    cpu <- do.call(hb_quiet, c(args, device = "cpu"))
    gpu <- do.call(hb_quiet, c(args, device = "cuda"))
    label <- paste(names(cs[[2]]), vapply(cs[[2]], function(v) format(v)[1], ""), collapse = ", ")
    label <- paste("quantized", if (nzchar(label)) label else "defaults")
    # every node of every tree: features, thresholds, categories, gains,
    # values, hessians, counts (the model text differs only in the device it records)
    expect_identical(hb_trees(gpu), hb_trees(cpu), label = label)
    expect_identical(predict(gpu, data$x, type = "raw"), predict(cpu, data$x, type = "raw"), label = label)
  }
})

test_that("GPU training stops on overflow with the CPU's classed error and cause (test-overflow.R's cases)", {
  skip_without_gpu()
  set.seed(21)
  n <- 400
  x <- data.frame(a = rnorm(n), b = runif(n), f = factor(sample(letters[1:4], n, TRUE)))
  y <- x$a + 2 * x$b + (x$f == "b") + rnorm(n, sd = 0.3)
  cnt <- rpois(n, exp(0.4 * x$a))
  v_big_init <- list(x = x[1:50, ], y = y[1:50], init_score = rep(1e308, 50))
  huge <- function(preds, labels) list(grad = rep(1e308, length(preds)), hess = rep(1, length(preds)))
  fit <- function(device, ...) {
    hb_quiet(x, ..., nrounds = 6L, num_leaves = 7L, min_data_in_leaf = 10L, lambda_l1 = 0, lambda_l2 = 0,
             seed = 1L, device = device)
  }
  before <- fit("cuda", y = y)
  cases <- list(
    weights = list(y = y, weights = rep(1e308, n)),
    one_weight = list(y = y, weights = c(rep(1, n - 1), 1e300)),
    labels_rmse = list(y = y * 1e200, eval_metric = "rmse"),
    labels = list(y = runif(n, 0.5, 1) * 1e308),
    valid_labels = list(y = y, valid = list(v = list(x = x[1:50, ], y = y[1:50] * 1e200))),
    init_score = list(y = y, init_score = rep(1e308, n)),
    valid_init_score = list(y = y, init_score = rep(0, n), valid = list(v = v_big_init)),
    custom = list(y = y, objective = huge),
    poisson_rate = list(y = cnt, objective = "poisson", learning_rate = 1e6),
    rmse_rate = list(y = y, learning_rate = 1e306)
  )
  for (nm in names(cases)) {
    cpu <- tryCatch(do.call(fit, c("cpu", cases[[nm]])), error = identity)
    gpu <- tryCatch(do.call(fit, c("cuda", cases[[nm]])), error = identity)
    expect_s3_class(cpu, "histboost_error_input")
    expect_s3_class(gpu, "histboost_error_input")
    # the same round and cause; a leaf value that overflows is seen on the
    # GPU in the scores it went into
    norm <- function(e) sub("the leaf values", "the scores", conditionMessage(e), fixed = TRUE)
    expect_identical(norm(gpu), norm(cpu), label = nm)
  }
  # and the GPU trains afterwards exactly as before the errors
  after <- fit("cuda", y = y)
  expect_identical(predict(after, x), predict(before, x))
  expect_lt(sqrt(mean((predict(after, x) - y)^2)), sd(y))
})

# ---- on a GPU: prediction (predict(device = "cuda")) ---------------------------

# predict() on the GPU against the CPU: raw scores and responses equal (each
# row adds the same trees in the same order from the same start, and the
# link is the CPU's: the same doubles), leaf indices and classes identical.
# pred_newdata()'s rows hold levels unseen in training on purpose (read as
# missing values on both devices): their warning (class
# histboost_warning_unseen_levels, which test-input.R tests) is muffled in
# these comparisons.
quiet_unseen <- function(expr) {
  withCallingHandlers(expr, histboost_warning_unseen_levels = function(w) invokeRestart("muffleWarning"))
}
predict_unseen <- function(...) quiet_unseen(predict(...))

expect_gpu_predicts_as_cpu <- function(fit, newdata, label, types = c("raw", "response", "leaf"), ...) {
  for (type in types) {
    cpu <- predict_unseen(fit, newdata, type = type, device = "cpu", ...)
    gpu <- predict_unseen(fit, newdata, type = type, device = "cuda", ...)
    lab <- paste(label, type)
    if (type %in% c("leaf", "class")) {
      expect_identical(gpu, cpu, label = lab)
    } else {
      expect_equal(gpu, cpu, tolerance = 1e-6, label = lab)
    }
  }
}

# Rows for prediction: numeric columns with NAs, an integer column with NAs,
# a factor of 40 levels (bitsets of two words) with NAs, one of three
# levels (one-vs-rest splits); f the signal.
pred_data <- function(n, seed) {
  set.seed(seed)
  lev <- paste0("L", 1:40)
  x <- data.frame(a = rnorm(n), b = runif(n), c = rexp(n), i = sample(-3:3, n, TRUE),
                  f = factor(sample(lev, n, TRUE), levels = lev), g = factor(sample(c("u", "v", "w"), n, TRUE)))
  x$a[sample.int(n, n %/% 10)] <- NA
  x$i[sample.int(n, n %/% 20)] <- NA
  x$f[sample.int(n, n %/% 20)] <- NA
  eff <- rnorm(40)
  f <- sin(2 * ifelse(is.na(x$a), 1, x$a)) + 2 * (x$b > 0.5) + 0.3 * x$c + 0.2 * ifelse(is.na(x$i), 2, x$i) +
    ifelse(is.na(x$f), -1, eff[as.integer(x$f)]) + (x$g == "v")
  list(x = x, f = f)
}
# The rows with what training never saw: infinities, NaN, a level unseen in
# training (missing to the model).
pred_newdata <- function(x) {
  x$a[1:3] <- c(Inf, -Inf, NaN)
  x$c[4] <- -Inf
  x$f <- factor(as.character(x$f), levels = c(levels(x$f), "unseen"))
  x$f[5:8] <- "unseen"
  x
}

test_that("GPU predictions equal the CPU's for every objective, with NAs, infinities, factors and unseen levels", {
  skip_without_gpu()
  n <- 3000L
  d <- pred_data(n, 51)
  f <- d$f
  set.seed(52)
  cls3 <- factor(cut(f + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi")))
  pr <- sigmoid(f - mean(f))
  mu <- exp(0.3 * (f - mean(f)))
  reg <- f + rnorm(n, sd = 0.3)
  cases <- list(
    regression = list(y = reg),
    huber = list(y = reg, objective = "huber"),
    fair = list(y = reg, objective = "fair"),
    l1 = list(y = reg, objective = "l1"),
    quantile = list(y = reg, objective = "quantile", quantile_alpha = 0.8),
    mape = list(y = reg + 10, objective = "mape"),
    poisson = list(y = rpois(n, mu), objective = "poisson"),
    gamma = list(y = rgamma(n, shape = 2, rate = 2 / mu), objective = "gamma"),
    tweedie = list(y = rpois(n, mu) * runif(n, 0.5, 1.5), objective = "tweedie"),
    binary = list(y = factor(ifelse(runif(n) < pr, "yes", "no"))),
    cross_entropy = list(y = pr, objective = "cross_entropy"),
    multiclass = list(y = cls3),
    multiclassova = list(y = cls3, objective = "multiclassova"),
    custom = list(y = reg, objective = function(preds, labels) list(grad = preds - labels, hess = rep(1, length(preds))))
  )
  newx <- pred_newdata(d$x)
  for (nm in names(cases)) {
    fit <- do.call(hb_quiet, c(list(d$x, nrounds = 15L, num_leaves = 15L, min_data_in_leaf = 10L, seed = 1),
                               cases[[nm]]))
    expect_gpu_predicts_as_cpu(fit, newx, nm,
                               c("raw", "response", "leaf", if (fit$task %in% c("binary", "multiclass")) "class"))
  }
  # the response is the link of the raw score, on the GPU too
  fit <- hb_quiet(d$x, cases$poisson$y, objective = "poisson", nrounds = 10L, seed = 1)
  # the GPU's prediction warns of the unseen level, as the CPU's does
  expect_warning(predict(fit, newx, device = "cuda"), class = "histboost_warning_unseen_levels")
  expect_equal(predict_unseen(fit, newx, device = "cuda"), exp(predict_unseen(fit, newx, type = "raw", device = "cuda")),
               tolerance = 1e-12)
})

test_that("GPU predictions equal the CPU's for LambdaRank and Cox models", {
  skip_without_gpu()
  d <- pred_data(2000L, 53)
  grade <- findInterval(d$f, stats::quantile(d$f, c(0.5, 0.8, 0.95)))
  set.seed(54)
  qs <- sort(sample.int(100, 2000, TRUE))
  rank <- hb_quiet(d$x, grade, group = qs, objective = "lambdarank", nrounds = 12L, num_leaves = 15L, seed = 1)
  expect_gpu_predicts_as_cpu(rank, pred_newdata(d$x), "lambdarank")
  # survival::Surv(time, status)'s object, built by hand: the GPU machine's R
  # has no survival package
  time <- rexp(2000, exp(0.5 * d$f))
  status <- rbinom(2000, 1, 0.8)
  surv <- surv_by_hand(time, status)
  if (requireNamespace("survival", quietly = TRUE)) expect_identical(surv, survival::Surv(time, status))
  cox <- hb_quiet(d$x, surv, objective = "cox", nrounds = 10L, seed = 1)
  expect_gpu_predicts_as_cpu(cox, pred_newdata(d$x), "cox")
})

test_that("GPU predictions of forests, DART models, offsets and iteration windows equal the CPU's", {
  skip_without_gpu()
  n <- 2500L
  d <- pred_data(n, 55)
  set.seed(56)
  cls3 <- factor(cut(d$f + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi")))
  reg <- d$f + rnorm(n, sd = 0.3)
  newx <- pred_newdata(d$x)
  for (y in list(reg, cls3)) {
    K <- if (is.factor(y)) 3L else 1L
    off <- if (K == 1L) runif(n) else matrix(runif(3 * n), n, 3)
    label <- if (K == 1L) "regression" else "multiclass"
    rf <- hb_quiet(d$x, y, boosting = "rf", bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.8,
                   nrounds = 12L, num_leaves = 15L, seed = 2)
    expect_gpu_predicts_as_cpu(rf, newx, paste(label, "forest"))
    expect_gpu_predicts_as_cpu(rf, newx, paste(label, "forest, 5 trees"), iteration = 5L)
    expect_gpu_predicts_as_cpu(rf, newx, paste(label, "forest with offsets"), c("raw", "response"), init_score = off)
    dart <- hb_quiet(d$x, y, boosting = "dart", drop_rate = 0.3, nrounds = 12L, num_leaves = 15L, seed = 3)
    expect_gpu_predicts_as_cpu(dart, newx, paste(label, "dart"))
    gb <- hb_quiet(d$x, y, nrounds = 20L, num_leaves = 31L, seed = 4)
    for (it in c(1L, 7L, 20L)) expect_gpu_predicts_as_cpu(gb, newx, paste(label, "iteration", it), iteration = it)
    expect_gpu_predicts_as_cpu(gb, newx, paste(label, "offsets"), c("raw", "response"), init_score = off)
    # a window of iterations [s, s + m) (the engine's start_iter): its leaves
    # are those columns of all the leaves; its raw scores the CPU's
    spec <- quiet_unseen(histboost:::.hb_features_like(newx, list(names = gb$feature_names, types = gb$feature_types,
                                                                   levels = gb$feature_levels), "newdata"))$spec
    window <- function(s, m, code, device) {
      .Call(histboost:::C_hb_model_predict, histboost:::.hb_model_ptr(gb), spec, s, m, code, 2L, NULL, device)
    }
    all_leaves <- predict_unseen(gb, newx, type = "leaf", device = "cpu")
    for (w in list(c(3L, 5L), c(10L, 10L), c(19L, 1L))) {
      lab <- paste(label, "window", w[1], "+", w[2])
      cols <- (w[1] * K + 1L):((w[1] + w[2]) * K)
      expect_identical(window(w[1], w[2], 2L, 1L), all_leaves[, cols, drop = FALSE], label = lab)
      expect_equal(window(w[1], w[2], 0L, 1L), window(w[1], w[2], 0L, 0L), tolerance = 1e-6, label = lab)
    }
  }
})

test_that("GPU predictions on sparse dgCMatrix rows (explicit NaN, one-hot columns) equal the CPU's", {
  skip_without_gpu()
  set.seed(57)
  n <- 3000L
  S <- Matrix::rsparsematrix(n, 40, density = 0.2)
  colnames(S) <- paste0("s", 1:40)
  y <- as.numeric(S[, 1] - 2 * S[, 2] + (S[, 3] > 0)) + rnorm(n, sd = 0.2)
  fit <- hb_quiet(S, y, nrounds = 15L, num_leaves = 15L, seed = 1)
  S2 <- S
  S2@x[seq(1, length(S2@x), by = 37)] <- NaN  # stored NaN is missing; absent entries are 0
  expect_gpu_predicts_as_cpu(fit, S2, "sparse")
  expect_gpu_predicts_as_cpu(fit, as.matrix(S2), "its dense copy")
  expect_equal(predict(fit, S2, type = "raw", device = "cuda"), predict(fit, as.matrix(S2), type = "raw"),
               tolerance = 1e-6)
  # one-hot rows of 2,000 columns: a row holds one entry
  g <- sample.int(2000, n, TRUE)
  H <- Matrix::sparseMatrix(i = seq_len(n), j = g, x = 1, dims = c(n, 2000), dimnames = list(NULL, paste0("h", 1:2000)))
  fit_h <- hb_quiet(H, rnorm(2000)[g] + rnorm(n, sd = 0.1), nrounds = 10L, num_leaves = 31L, min_data_in_leaf = 2L,
                    seed = 1)
  expect_gpu_predicts_as_cpu(fit_h, H, "one-hot")
})

# ---- on a GPU: contributions (predict(type = "contrib", device = "cuda")) ------

# Contributions on the GPU against the CPU: identical, not just close. The
# device sums each tree's leaf paths for a row with the CPU's own code
# (src/engine/shap_rules.h, built for both, with no fused multiply-adds on
# the device), then adds each feature's shares tree after tree in the CPU's
# order, and the host adds the expected values, offsets and a forest's
# averaging as the CPU does. And, independently of the CPU, each row's
# contributions sum to its raw score (SHAP's local accuracy).
expect_gpu_contrib_as_cpu <- function(fit, newdata, label, ...) {
  cpu <- predict_unseen(fit, newdata, type = "contrib", device = "cpu", ...)
  gpu <- predict_unseen(fit, newdata, type = "contrib", device = "cuda", ...)
  expect_identical(gpu, cpu, label = paste(label, "contributions"))
  raw <- predict_unseen(fit, newdata, type = "raw", device = "cpu", ...)
  sums <- if (length(dim(gpu)) == 3L) apply(gpu, c(1, 3), sum) else rowSums(gpu)
  if (is.matrix(sums)) dimnames(sums) <- dimnames(raw)
  expect_equal(sums, raw, tolerance = 1e-10, label = paste(label, "contributions' row sums"))
}

test_that("GPU contributions are the CPU's for regression, binary and multiclass models with NAs, factors and unseen levels", {
  skip_without_gpu()
  n <- 3000L
  d <- pred_data(n, 71)
  set.seed(72)
  cls3 <- factor(cut(d$f + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi")))
  newx <- pred_newdata(d$x)
  cases <- list(regression = list(y = d$f + rnorm(n, sd = 0.3)),
                binary = list(y = factor(ifelse(runif(n) < sigmoid(d$f - mean(d$f)), "yes", "no"))),
                multiclass = list(y = cls3),
                poisson = list(y = rpois(n, exp(0.3 * (d$f - mean(d$f)))), objective = "poisson"))
  for (nm in names(cases)) {
    fit <- do.call(hb_quiet, c(list(d$x, nrounds = 15L, num_leaves = 15L, min_data_in_leaf = 10L, seed = 1),
                               cases[[nm]]))
    expect_gpu_contrib_as_cpu(fit, newx, nm)
  }
  # "auto" takes the GPU here: the same values
  fit <- hb_quiet(d$x, cls3, nrounds = 5L, num_leaves = 7L, seed = 1)
  expect_identical(predict_unseen(fit, newx, type = "contrib", device = "auto"),
                   predict_unseen(fit, newx, type = "contrib", device = "cpu"))
})

test_that("GPU contributions are the CPU's for forests, offsets, iteration windows and deep trees", {
  skip_without_gpu()
  n <- 2500L
  d <- pred_data(n, 73)
  set.seed(74)
  cls3 <- factor(cut(d$f + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi")))
  reg <- d$f + rnorm(n, sd = 0.3)
  newx <- pred_newdata(d$x)
  for (y in list(reg, cls3)) {
    K <- if (is.factor(y)) 3L else 1L
    off <- if (K == 1L) runif(n) else matrix(runif(3 * n), n, 3)
    label <- if (K == 1L) "regression" else "multiclass"
    rf <- hb_quiet(d$x, y, boosting = "rf", bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.8,
                   nrounds = 12L, num_leaves = 15L, seed = 2)
    expect_gpu_contrib_as_cpu(rf, newx, paste(label, "forest"))
    expect_gpu_contrib_as_cpu(rf, newx, paste(label, "forest, 5 trees"), iteration = 5L)
    expect_gpu_contrib_as_cpu(rf, newx, paste(label, "forest with offsets"), init_score = off)
    gb <- hb_quiet(d$x, y, nrounds = 20L, num_leaves = 31L, bagging_fraction = 0.8, bagging_freq = 1L, seed = 4)
    for (it in c(1L, 7L, 20L)) expect_gpu_contrib_as_cpu(gb, newx, paste(label, "iteration", it), iteration = it)
    expect_gpu_contrib_as_cpu(gb, newx, paste(label, "offsets"), init_score = off)
    # a window of iterations [s, s + m) (the engine's start_iter)
    spec <- quiet_unseen(histboost:::.hb_features_like(newx, list(names = gb$feature_names, types = gb$feature_types,
                                                                   levels = gb$feature_levels), "newdata"))$spec
    window <- function(s, m, device) {
      .Call(histboost:::C_hb_model_predict, histboost:::.hb_model_ptr(gb), spec, s, m, 3L, 2L, NULL, device)
    }
    for (w in list(c(3L, 5L), c(10L, 10L), c(19L, 1L))) {
      expect_identical(window(w[1], w[2], 1L), window(w[1], w[2], 0L), label = paste(label, "window", w[1], "+", w[2]))
    }
  }
  # deep trees: leaves split off one at a time down a steep curve, trees
  # dozens of levels deep (the device's work space grows with the depth)
  set.seed(75)
  x <- data.frame(a = sort(runif(4000)), b = rnorm(4000), c = sample(c(NA, 1:5), 4000, TRUE))
  y <- exp(12 * x$a) + x$b
  deep <- hb_quiet(x, y, nrounds = 5L, num_leaves = 255L, min_data_in_leaf = 1L, min_sum_hessian_in_leaf = 0,
                   learning_rate = 1, seed = 1)
  depth <- max(hb_trees(deep)$depth)
  expect_gt(depth, 30)
  expect_gpu_contrib_as_cpu(deep, x, paste("trees", depth, "deep"))
})

test_that("GPU contributions are the CPU's wherever a thread's path lies: shared memory with or without the sides, or the work space", {
  skip_without_gpu()
  skip_without_test_hooks()
  # A thread keeps its path's weights and one fractions, and the sides its
  # row takes at the tree's splits, in shared memory; paths of hundreds of
  # distinct features leave the sides out (each split decided where a path
  # meets it), then move to a device work space walked by a fixed grid.
  # The test hook HISTBOOST_TEST_SHAP_SPACE (predict.c) takes those ways
  # with ordinary models: dense, sparse, multiclass with factors and NAs,
  # and trees dozens of levels deep.
  on.exit(Sys.unsetenv("HISTBOOST_TEST_SHAP_SPACE"), add = TRUE)
  n <- 2000L
  d <- pred_data(n, 78)
  set.seed(79)
  cls3 <- factor(cut(d$f + rnorm(n, sd = 0.5), 3, labels = c("lo", "mid", "hi")))
  newx <- pred_newdata(d$x)
  multi <- hb_quiet(d$x, cls3, nrounds = 10L, num_leaves = 31L, seed = 1)
  x <- data.frame(a = sort(runif(3000)), b = rnorm(3000), c = sample(c(NA, 1:5), 3000, TRUE))
  deep <- hb_quiet(x, exp(12 * x$a) + x$b, nrounds = 4L, num_leaves = 127L, min_data_in_leaf = 1L,
                   min_sum_hessian_in_leaf = 0, learning_rate = 1, seed = 1)
  S <- Matrix::rsparsematrix(n, 30, density = 0.2)
  colnames(S) <- paste0("s", 1:30)
  sparse <- hb_quiet(S, as.numeric(S[, 1] - 2 * S[, 2]) + rnorm(n, sd = 0.2), nrounds = 10L, num_leaves = 15L,
                     seed = 1)
  for (space in c("nosides", "work")) {
    Sys.setenv(HISTBOOST_TEST_SHAP_SPACE = space)
    expect_gpu_contrib_as_cpu(multi, newx, paste(space, "multiclass"))
    expect_gpu_contrib_as_cpu(deep, x, paste(space, "deep trees"))
    expect_gpu_contrib_as_cpu(sparse, S, paste(space, "sparse"))
  }
})

test_that("GPU contributions on sparse dgCMatrix rows (explicit NaN, one-hot columns) are the CPU's", {
  skip_without_gpu()
  set.seed(76)
  n <- 3000L
  S <- Matrix::rsparsematrix(n, 40, density = 0.2)
  colnames(S) <- paste0("s", 1:40)
  y <- as.numeric(S[, 1] - 2 * S[, 2] + (S[, 3] > 0)) + rnorm(n, sd = 0.2)
  fit <- hb_quiet(S, y, nrounds = 15L, num_leaves = 15L, seed = 1)
  S2 <- S
  S2@x[seq(1, length(S2@x), by = 37)] <- NaN  # stored NaN is missing; absent entries are 0
  expect_gpu_contrib_as_cpu(fit, S2, "sparse")
  # the sparse rows' contributions are their dense copy's, on the GPU as on the CPU
  expect_identical(predict(fit, S2, type = "contrib", device = "cuda"),
                   predict(fit, as.matrix(S2), type = "contrib", device = "cuda"))
  g <- sample.int(2000, n, TRUE)
  H <- Matrix::sparseMatrix(i = seq_len(n), j = g, x = 1, dims = c(n, 2000), dimnames = list(NULL, paste0("h", 1:2000)))
  fit_h <- hb_quiet(H, rnorm(2000)[g] + rnorm(n, sd = 0.1), nrounds = 10L, num_leaves = 31L, min_data_in_leaf = 2L,
                    seed = 1)
  expect_gpu_contrib_as_cpu(fit_h, H[1:500, ], "one-hot")
})

test_that("GPU contributions of many blocks of rows (dense and sparse) are the CPU's", {
  skip_without_gpu()
  # 300,000 rows through trees 20 deep: more rows than a block's work space
  # holds, so the device takes them a block at a time through two slots
  n <- test_rows(300000L)
  set.seed(77)
  X <- matrix(rnorm(n * 6), n, 6, dimnames = list(NULL, paste0("x", 1:6)))
  X[sample.int(length(X), length(X) %/% 50)] <- NA
  y <- ifelse(is.na(X[, 1]), 0, X[, 1]) - ifelse(is.na(X[, 2]), 1, X[, 2]^2) + rnorm(n, sd = 0.3)
  fit <- hb_quiet(X[1:20000, ], y[1:20000], nrounds = 10L, num_leaves = 63L, min_data_in_leaf = 5L, seed = 1)
  expect_gpu_contrib_as_cpu(fit, X, "dense")
  Xs <- X
  Xs[abs(Xs) < 1 & !is.na(Xs)] <- 0
  expect_gpu_contrib_as_cpu(fit, Matrix::Matrix(Xs, sparse = TRUE), "sparse")
})

test_that("GPU predictions of many blocks of rows (dense and sparse, with offsets) equal the CPU's", {
  skip_without_gpu()
  # 1.3 million rows: the device takes them a block at a time through two
  # slots (dense raw scores in two blocks, leaves of 30 trees in four,
  # sparse rows in blocks cut by their entries)
  n <- test_rows(1300000L)
  set.seed(58)
  X <- matrix(rnorm(n * 6), n, 6, dimnames = list(NULL, paste0("x", 1:6)))
  X[sample.int(length(X), length(X) %/% 50)] <- NA
  y <- ifelse(is.na(X[, 1]), 0, X[, 1]) - ifelse(is.na(X[, 2]), 1, X[, 2]^2) + rnorm(n, sd = 0.3)
  fit <- hb_quiet(X[1:20000, ], y[1:20000], nrounds = 30L, num_leaves = 31L, seed = 1)
  expect_gpu_predicts_as_cpu(fit, X, "dense", c("raw", "leaf"))
  off <- runif(n)
  expect_gpu_predicts_as_cpu(fit, X, "dense with offsets", "response", init_score = off)
  S <- Matrix::rsparsematrix(n, 6, density = 0.5)
  colnames(S) <- colnames(X)
  expect_gpu_predicts_as_cpu(fit, S, "sparse", c("raw", "leaf"))
})

test_that("$gpu_profile reports the device memory training took, within plain R's count of the buffers", {
  skip_without_gpu()
  n <- test_rows(400000L)
  nf <- 28L
  set.seed(81)
  x <- matrix(runif(n * nf), n, nf)
  y <- x[, 1] + rnorm(n)
  old <- options(histboost.gpu_profile = TRUE)
  on.exit(options(old))
  args <- list(nrounds = 3L, num_leaves = 31L, device = "cuda", seed = 1)
  p <- do.call(hb_quiet, c(list(x, y), args))$gpu_profile
  # per row: its bins twice (packed by row, one byte a feature by column);
  # label, score, gradient and hessian doubles; two row-index and two
  # fixed-point gradient-pair buffers; a flag byte and a leaf index
  rows_bytes <- n * (2 * nf + 4 * 8 + 2 * (4 + 8) + 1 + 4)
  expect_gt(p$device_bytes, rows_bytes)
  # the rest: 31 histograms of 28 x 255 bins, small buffers, allocation granularity
  expect_lt(p$device_bytes, 1.5 * rows_bytes + 64e6)
  expect_gte(p$device_used_peak_bytes, p$device_bytes)
  expect_equal(p$device_total_bytes, hb_device_info()$memory)
  # a validation set of m rows adds its packed bins and its scores
  m <- n %/% 2L
  p2 <- do.call(hb_quiet, c(list(x, y, valid = list(v = list(x = x[seq_len(m), ], y = y[seq_len(m)]))),
                            args))$gpu_profile
  dv <- p2$device_bytes - p$device_bytes
  expect_gt(dv, m * (nf / 2 + 8))
  expect_lt(dv, m * (4 * nf + 16) + 16e6)
})

test_that("without its column copy (gpu_column_copy = 0) the GPU grows the same model in n x features fewer bytes", {
  skip_without_gpu()
  # the copy changes where the partition and the routing read a row's bin
  # (its column, or the histograms' row-major words: 8- or 4-bit, banked),
  # never what they read: the models must be identical, and the CPU's
  n <- test_rows(60000L)
  d <- gen_task(41, n = n, task = "binary", factors = 2, na = 0.05)
  nf <- ncol(d$x)
  variants <- list(
    list(),
    list(max_bin = 15L),
    list(quantized = TRUE),
    list(bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.8),
    list(goss = TRUE, learning_rate = 0.5)
  )
  for (v in variants) {
    label <- paste(names(v), unlist(v), collapse = ", ")
    if (!nzchar(label)) label <- "defaults"
    p <- modifyList(list(nrounds = 12L, num_leaves = 31L, seed = 3, device = "cuda"), v)
    with <- do.call(hb_quiet, c(list(d$x, d$y, gpu_column_copy = 1L), p))
    without <- do.call(hb_quiet, c(list(d$x, d$y, gpu_column_copy = 0L), p))
    expect_identical(without$model_text, with$model_text, label = label)
  }
  # and the CPU's trees (on data without near ties, as the tests above)
  dt <- tiefree(43, n = 5000)
  cpu <- do.call(hb_quiet, c(list(dt$x, dt$y, device = "cpu"), gpu_params))
  without <- do.call(hb_quiet, c(list(dt$x, dt$y, device = "cuda", gpu_column_copy = 0L), gpu_params))
  expect_same_trees(cpu, without, tol = 1e-8, label = "CPU")
  # multiclass: three trees a round route through the same words
  d3 <- gen_task(42, n = 5000, task = "multiclass", factors = 1, na = 0.05)
  mc <- lapply(0:1, function(cc) hb_quiet(d3$x, d3$y, nrounds = 6L, num_leaves = 15L, seed = 3, device = "cuda",
                                          gpu_column_copy = cc))
  expect_identical(mc[[1]]$model_text, mc[[2]]$model_text)
  # the memory: the copy is n x (internal features) bytes (cudaMalloc rounds to 2 MiB)
  m <- test_rows(400000L)
  x <- matrix(runif(m * 28), m, 28)
  y <- x[, 1] + rnorm(m)
  old <- options(histboost.gpu_profile = TRUE)
  on.exit(options(old))
  b <- vapply(c(1L, 0L, -1L), function(cc) {
    hb_quiet(x, y, nrounds = 2L, num_leaves = 15L, device = "cuda", gpu_column_copy = cc)$gpu_profile$device_bytes
  }, 0)
  expect_equal(b[1] - b[2], m * 28, tolerance = 4.2e6 / (m * 28))
  expect_equal(b[3], b[1])  # by default a copy this small is kept
})

# ---- binning on the device (hb_dataset(device = "cuda")) ----------------------

# Columns of every kind the binning rules treat apart: wide-range values with
# NAs and infinities, few values with ties, a constant column, an all-NA
# one, an integer one with NAs, a mostly-zero (sparse-stored) one, factors
# with NAs, unused levels and more levels than max_bin, an ordered factor,
# a logical.
bin_data <- function(n, seed) {
  set.seed(seed)
  x <- data.frame(wide = rnorm(n) * 1e3, ties = sample(c(-2, 0, 0.5, 7), n, TRUE), const = rep(3.25, n),
                  allna = rep(NA_real_, n), int = sample(c(-5L, 0L, 9L, 1000L, NA), n, TRUE),
                  zeros = ifelse(runif(n) < 0.95, 0, rexp(n)),
                  fac = factor(sample(c(letters[1:9], NA), n, TRUE), levels = c(letters[1:9], "unused")),
                  many = factor(paste0("L", sample.int(400L, n, TRUE))),
                  ord = factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE),
                  flag = sample(c(TRUE, FALSE, NA), n, TRUE))
  x$wide[sample.int(n, n %/% 20)] <- NA
  x$wide[1:3] <- c(Inf, -Inf, -0)
  x
}
expect_same_bins <- function(a, b, label) {
  ia <- .Call(histboost:::C_hb_dataset_info, a$ptr)
  ib <- .Call(histboost:::C_hb_dataset_info, b$ptr)
  expect_identical(ib, ia, label = paste(label, ": boundaries, levels, bins counts and storage"))
  expect_identical(histboost:::.hb_dataset_bins(b), histboost:::.hb_dataset_bins(a), label = paste(label, ": bin codes"))
}

test_that("hb_dataset(device = \"cuda\") places the CPU's boundaries and gives every row the CPU's bin", {
  skip_without_gpu()
  skip_without_test_hooks()
  x <- bin_data(test_rows(60000L), 81)
  y <- rnorm(nrow(x))
  for (mb in c(255L, 63L, 15L)) {
    cpu <- hb_dataset(x, y, max_bin = mb, device = "cpu")
    gpu <- hb_dataset(x, y, max_bin = mb, device = "cuda")
    expect_same_bins(cpu, gpu, paste("data.frame, max_bin", mb))
  }
  info <- .Call(histboost:::C_hb_dataset_info, cpu$ptr)
  # the data reach every rule: sparse storage, trivial features, a factor spread over several features
  expect_true(any(info$sparse) && any(info$trivial) && any(duplicated(info$column)))
  # a numeric matrix (the benchmark's input), and a validation set binned with the training mappers,
  # with values and levels the training rows lack
  m <- as.matrix(x[, c("wide", "ties", "zeros")])
  expect_same_bins(hb_dataset(m, y, device = "cpu"), hb_dataset(m, y, device = "cuda"), "matrix")
  v <- bin_data(20000L, 82)  # 8192 rows or more: binned on the device too
  v$wide[1:50] <- v$wide[1:50] * 100
  levels(v$fac)[1] <- "new"
  ref <- hb_dataset(x, y)
  unseen <- function(expr) expect_warning(expr, class = "histboost_warning_unseen_levels")  # the "new" level
  expect_same_bins(unseen(hb_dataset(v, reference = ref, device = "cpu")),
                   unseen(hb_dataset(v, reference = ref, device = "cuda")), "validation set")
})

test_that("device binning of a dgCMatrix (explicit zeros and NaN) and of chunks of millions of rows is the CPU's", {
  skip_without_gpu()
  skip_without_test_hooks()
  set.seed(83)
  n <- test_rows(200000L)  # columns of 8192 entries or more go to the device
  s <- Matrix::rsparsematrix(n, 6, density = 0.1)
  s[, 5] <- 0  # an empty column, binned on the host beside the others
  s@x[1:20] <- 0
  s@x[21:40] <- NaN
  s[, 6] <- rnorm(n)  # one dense column
  y <- rnorm(n)
  expect_same_bins(hb_dataset(s, y, device = "cpu"), hb_dataset(s, y, device = "cuda"), "dgCMatrix")
  # more rows than one chunk of the device's (2^22): the chunks' bins and counts join up
  big <- test_rows(4500000L)
  xb <- matrix(c(runif(big), sample(c(1, 2, NA), big, TRUE)), big, 2)
  yb <- runif(big)
  expect_same_bins(hb_dataset(xb, yb, device = "cpu"), hb_dataset(xb, yb, device = "cuda"), "4.5M rows")
})

test_that("histboost(device = \"cuda\") bins x and the validation sets on the GPU: the model of CPU-binned data", {
  skip_without_gpu()
  d <- gen_task(84, n = test_rows(20000L), task = "binary", factors = 2, na = 0.05)
  v <- gen_task(85, n = 10000L, task = "binary", factors = 2, na = 0.05)
  args <- list(nrounds = 8L, num_leaves = 31L, seed = 2L, device = "cuda", verbose = 0L)
  a <- do.call(histboost, c(list(d$x, d$y, valid = list(v = list(x = v$x, y = v$y))), args))
  ds <- hb_dataset(d$x, d$y, device = "cpu")
  vs <- hb_dataset(v$x, v$y, reference = ds, device = "cpu")
  b <- do.call(histboost, c(list(ds, valid = list(v = vs)), args))
  expect_identical(a$model_text, b$model_text)
  expect_identical(a$evaluation_log, b$evaluation_log)
})
