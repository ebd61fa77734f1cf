# check-models-identical.R: trains the same small workloads with two installed builds of
# histboost and compares the saved model text (hb_save()) byte for byte; a refactoring that
# must not change behaviour (issue 27's registry) passes when every model is identical.
#
#   Rscript tools/check-models-identical.R OLD_LIB NEW_LIB
#
# e.g. the build before the change and after it:
#   git archive 4b97959 | tar -x -C /tmp/hb-old && R CMD INSTALL -l /tmp/lib-old /tmp/hb-old
#   R CMD INSTALL -l /tmp/lib-new .
#   Rscript tools/check-models-identical.R /tmp/lib-old /tmp/lib-new
# Each build trains in its own Rscript child (two builds of one package cannot share a
# session). The workloads are inst/bench/run.R's kinds at reduced size: regression with missing
# values, binary with bagging and feature sampling, multiclass, ranking, factors (unordered,
# ordered, many levels), quantized training, GOSS, a random forest, the other losses, a sparse
# matrix with bundling, depth limits and monotone constraints. Exit status 1 on any difference.

args <- commandArgs(trailingOnly = TRUE)

train_all <- function(lib, out_dir) {
  library(histboost, lib.loc = lib)
  set.seed(27)
  n <- 1500L
  num <- data.frame(a = runif(n), b = rnorm(n), c = rexp(n), d = sample(0:5, n, TRUE))
  num$a[sample(n, 100)] <- NA
  yr <- 2 * ifelse(is.na(num$a), 0.5, num$a) + sin(num$b) + 0.3 * num$d + rnorm(n, sd = 0.2)
  yb <- factor(yr > median(yr), labels = c("lo", "hi"))
  ym <- cut(yr, quantile(yr, 0:4 / 4), include.lowest = TRUE, labels = c("q1", "q2", "q3", "q4"))
  fac <- num
  fac$f <- factor(sample(letters[1:6], n, TRUE))
  fac$g <- factor(sample(sprintf("L%03d", 1:300), n, TRUE))
  fac$o <- factor(sample(c("low", "mid", "high"), n, TRUE), levels = c("low", "mid", "high"), ordered = TRUE)
  yf <- yr + (fac$f %in% c("a", "c")) - 0.5 * as.integer(fac$o) + (as.integer(fac$g) %% 7 == 0)
  q <- rep(seq_len(n / 10L), each = 10L)
  grade <- findInterval(yr + rnorm(n, sd = 0.3), quantile(yr, c(0.4, 0.7, 0.9)))
  cnt <- rpois(n, exp(0.3 * ifelse(is.na(num$a), 0.5, num$a) + 0.2 * num$d / 5))
  pos <- exp(yr / 3)
  sp <- Matrix::rsparsematrix(n, 60, density = 0.03)
  sp@x <- abs(sp@x)
  ysp <- as.numeric(sp[, 1:5] %*% (1:5)) + rnorm(n, sd = 0.1)
  common <- list(nrounds = 15L, verbose = 0, nthreads = 2L, seed = 7)
  runs <- list(
    regression = list(x = num, y = yr),
    regression_depth = list(x = num, y = yr, max_depth = 3L, num_leaves = 15L, min_data_in_leaf = 1L),
    regression_l1l2 = list(x = num, y = yr, lambda_l1 = 0.5, lambda_l2 = 2, min_gain_to_split = 0.01,
                           min_sum_hessian_in_leaf = 0.5, learning_rate = 0.3),
    binary_bagging = list(x = num, y = yb, bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.75),
    multiclass = list(x = num, y = ym, valid = list(v = list(x = num[1:300, ], y = ym[1:300])),
                      early_stopping_rounds = 5L),
    ranking = list(x = num, y = grade, group = q, objective = "lambdarank", min_data_in_leaf = 5L),
    ranking_gain = list(x = num, y = grade, group = q, objective = "lambdarank", label_gain = c(0, 1, 3, 7),
                        lambdarank_truncation_level = 5L, lambdarank_norm = FALSE, eval_at = 3L),
    factors = list(x = fac, y = yf),
    factors_params = list(x = fac, y = yf, max_cat_threshold = 8L, cat_smooth = 3, cat_l2 = 1,
                          min_data_per_group = 20L, max_cat_to_onehot = 8L, ordered_factors = "categorical"),
    quantized = list(x = fac, y = yf, quantized = TRUE),
    quantized_binary = list(x = num, y = yb, quantized = TRUE, grad_bits = 3L, stochastic_rounding = FALSE,
                            refit_leaves = FALSE),
    goss = list(x = num, y = yr, goss = TRUE, learning_rate = 0.5, top_rate = 0.3, other_rate = 0.2),
    rf = list(x = num, y = yb, boosting = "rf", bagging_fraction = 0.6, bagging_freq = 1L),
    poisson = list(x = num, y = cnt, objective = "poisson", poisson_max_delta_step = 0.5),
    gamma = list(x = num, y = pos, objective = "gamma"),
    tweedie = list(x = num, y = cnt, objective = "tweedie", tweedie_variance_power = 1.3),
    huber = list(x = num, y = yr, objective = "huber", huber_delta = 0.5),
    l1 = list(x = num, y = yr, objective = "l1"),
    quantile = list(x = num, y = yr, objective = "quantile", quantile_alpha = 0.8),
    sparse_bundle = list(x = sp, y = ysp, max_conflict_rate = 0.05),
    sparse_nobundle = list(x = sp, y = ysp, enable_bundle = FALSE),
    monotone = list(x = num, y = yr, monotone_constraints = c(a = 1, b = -1)),
    params_aliases = list(x = num, y = yb, params = list(eta = 0.2, subsample = 0.8, max_leaves = 7L,
                                                         min_child_samples = 10L, reg_lambda = 1))
  )
  for (nm in names(runs)) {
    a <- utils::modifyList(common, runs[[nm]], keep.null = TRUE)
    fit <- do.call(histboost, a)
    hb_save(fit, file.path(out_dir, paste0(nm, ".hbm")))
  }
  invisible(names(runs))
}

if (length(args) >= 3L && args[1L] == "--child") {
  train_all(args[2L], args[3L])
  quit(status = 0)
}
if (length(args) != 2L) {
  cat("usage: Rscript tools/check-models-identical.R OLD_LIB NEW_LIB\n")
  quit(status = 2)
}
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1L])
dirs <- file.path(tempfile("hb-models-"), c("old", "new"))
for (k in 1:2) {
  dir.create(dirs[k], recursive = TRUE)
  st <- system2(file.path(R.home("bin"), "Rscript"), c(shQuote(me), "--child", shQuote(args[k]), shQuote(dirs[k])),
                env = "HISTBOOST_NUM_THREADS=2")
  if (st != 0) stop("training with ", args[k], " failed")
}
files <- list.files(dirs[1L], "\\.hbm$")
same <- vapply(files, function(f) {
  a <- readBin(file.path(dirs[1L], f), "raw", 1e8)
  b <- readBin(file.path(dirs[2L], f), "raw", 1e8)
  identical(a, b)
}, NA)
for (f in files) cat(sprintf("%-20s %s\n", sub("\\.hbm$", "", f), if (same[[f]]) "identical" else "DIFFERENT"))
cat(sprintf("check-models-identical: %d of %d models identical\n", sum(same), length(same)))
quit(status = if (all(same) && length(same) == 23L) 0 else 1)
