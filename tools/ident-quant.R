# ident-quant.R: an md5 of the saved model text (hb_save()) of every full-precision and
# quantized training path, so that a refactoring of the histogram, split and growth code
# (issue 27: full precision and quantized from one source) can show that it changes no model
# byte. Run it once with the library built before the change and once with the one after,
# and compare the two lists (they must be equal line for line):
#
#   git archive c873ae2 | tar -x -C /tmp/hb-base && R CMD INSTALL -l /tmp/lib-base /tmp/hb-base
#   Rscript tools/ident-quant.R /tmp/lib-base [--scale 0.01] > /tmp/before.txt
#   Rscript tools/ident-quant.R /tmp/lib-new  [--scale 0.01] > /tmp/after.txt
#   diff /tmp/before.txt /tmp/after.txt && echo identical
#
# The workloads: inst/bench/run.R's five (its generators and histboost parameters, rows scaled
# by --scale), each trained in full precision and quantized (quant-speed.R's configuration:
# 4-bit gradients, stochastic rounding, leaves refit); then variants of both kinds that reach
# the other paths: 2- and 8-bit gradients, rounding to nearest without refit, factors, missing
# values, multiclass, monotone constraints, bagging, GOSS, extra trees, max_delta_step, a sparse
# dgCMatrix with and without bundles, one thread and two.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1L) {
  cat("usage: Rscript tools/ident-quant.R LIB [--scale 0.01]\n")
  quit(status = 2)
}
lib <- args[[1L]]
scale <- if (length(args) >= 3L && args[[2L]] == "--scale") as.numeric(args[[3L]]) else 0.01
suppressPackageStartupMessages(library(histboost, lib.loc = lib))
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1L])
root <- dirname(dirname(normalizePath(me)))
source(file.path(root, "inst", "bench", "run.R"))  # generate_workload(), workload_info; main() does not run

out <- tempfile("ident-quant-")
dir.create(out)
md5_of <- function(fit, name) {
  f <- file.path(out, paste0(name, ".hbm"))
  hb_save(fit, f)
  unname(tools::md5sum(f))
}
report <- function(name, fit) cat(sprintf("%-34s %s\n", name, md5_of(fit, name)))

quant <- list(quantized = TRUE, grad_bits = 4L)   # quant-speed.R's defaults otherwise
task_of <- c("1" = "binary", "2" = "regression", "3" = "multiclass", "4" = "binary", "5" = "binary")
for (w in 1:5) {
  d <- generate_workload(w, scale)$train
  task <- task_of[[as.character(w)]]
  y <- switch(task, regression = d$y, binary = factor(d$y, levels = c(0, 1)),
              multiclass = factor(d$y, levels = 0:4))
  base <- list(x = d$x, y = y, nrounds = 20L, objective = task, learning_rate = 0.1, num_leaves = 255L,
               max_depth = -1L, min_data_in_leaf = 20L, max_bin = 255L, nthreads = 2L, seed = 1L, verbose = 0L)
  report(sprintf("w%d_full", w), do.call(histboost, base))
  report(sprintf("w%d_quant4", w), do.call(histboost, c(base, quant)))
  if (w == 1L) {  # quant-speed.R's workload: the other widths and options, and one thread
    report("w1_quant2", do.call(histboost, utils::modifyList(base, list(quantized = TRUE, grad_bits = 2L))))
    report("w1_quant8", do.call(histboost, utils::modifyList(base, list(quantized = TRUE, grad_bits = 8L))))
    report("w1_quant4_nearest_norefit", do.call(histboost, utils::modifyList(base, c(quant,
           list(stochastic_rounding = FALSE, refit_leaves = FALSE)))))
    report("w1_full_1thread", do.call(histboost, utils::modifyList(base, list(nthreads = 1L))))
    report("w1_quant4_1thread", do.call(histboost, utils::modifyList(base, c(quant, list(nthreads = 1L)))))
  }
  if (w == 5L) {  # the sparse columns summed column by column (no bundles)
    nb <- utils::modifyList(base, list(enable_bundle = FALSE))
    report("w5_full_nobundle", do.call(histboost, nb))
    report("w5_quant4_nobundle", do.call(histboost, c(nb, quant)))
  }
}

# Smaller variants on one data set with factors (unordered, many levels, ordered) and NAs.
set.seed(27)
n <- 6000L
x <- data.frame(a = runif(n), b = rnorm(n), c = rexp(n), d = sample(0:5, n, TRUE),
                f = factor(sample(letters[1:6], n, TRUE)),
                g = factor(sample(sprintf("L%03d", 1:300), n, TRUE)),
                o = factor(sample(c("low", "mid", "high"), n, TRUE), levels = c("low", "mid", "high"),
                           ordered = TRUE))
x$a[sample(n, 400)] <- NA
x$b[sample(n, 200)] <- NA
yr <- 2 * ifelse(is.na(x$a), 0.5, x$a) + sin(ifelse(is.na(x$b), 0, x$b)) + 0.3 * x$d +
  (x$f %in% c("a", "c")) - 0.5 * as.integer(x$o) + (as.integer(x$g) %% 7 == 0) + rnorm(n, sd = 0.2)
yb <- factor(yr > median(yr), labels = c("lo", "hi"))
ym <- cut(yr, quantile(yr, 0:4 / 4), include.lowest = TRUE, labels = c("q1", "q2", "q3", "q4"))
sp <- Matrix::rsparsematrix(n, 200, density = 0.02)
sp@x <- abs(sp@x)
ysp <- as.numeric(sp[, 1:5] %*% (1:5)) + rnorm(n, sd = 0.1)
common <- list(nrounds = 15L, verbose = 0L, nthreads = 2L, seed = 7L, num_leaves = 31L)
variants <- list(
  factors_na = list(x = x, y = yr),
  factors_onehot = list(x = x, y = yr, max_cat_to_onehot = 8L),
  factors_ordered_cat = list(x = x, y = yr, ordered_factors = "categorical", cat_smooth = 3, cat_l2 = 1),
  multiclass = list(x = x, y = ym),
  binary_bagging = list(x = x, y = yb, bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.75),
  goss = list(x = x, y = yr, goss = TRUE, top_rate = 0.3, other_rate = 0.2),
  monotone = list(x = x, y = yr, monotone_constraints = c(a = 1, c = -1)),
  l1_l2_mingain = list(x = x, y = yr, lambda_l1 = 0.5, lambda_l2 = 2, min_gain_to_split = 0.01,
                       min_sum_hessian_in_leaf = 0.5),
  max_delta_step = list(x = x, y = yr, max_delta_step = 0.3),
  extra_trees = list(x = x, y = yr, extra_trees = TRUE),
  sparse_bundle = list(x = sp, y = ysp),
  sparse_nobundle = list(x = sp, y = ysp, enable_bundle = FALSE)
)
for (nm in names(variants)) {
  a <- utils::modifyList(common, variants[[nm]], keep.null = TRUE)
  report(paste0(nm, "_full"), do.call(histboost, a))
  if (nm %in% c("max_delta_step", "extra_trees")) next  # full precision only (quantized refuses them)
  for (bits in c(2L, 4L, 8L))
    report(sprintf("%s_quant%d", nm, bits), do.call(histboost, c(a, list(quantized = TRUE, grad_bits = bits))))
}
unlink(out, recursive = TRUE)
