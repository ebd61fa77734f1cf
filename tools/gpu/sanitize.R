# tools/gpu/sanitize.R: a short GPU training of every path the CUDA learner
# has (regression, binary, multiclass; one-vs-rest and many-vs-many factors,
# an ordered factor, NAs; quantized; monotone; bagging, GOSS, forest; a
# validation set; l1 refit; prediction), small enough to run under
# compute-sanitizer (tools/gpu/check.sh sanitize): memcheck and racecheck
# must report nothing. Prints one line per case and "sanitize: N cases".
library(histboost)
if (!hb_has_cuda()) stop("sanitize.R needs a GPU build with a usable GPU")
set.seed(1)
n <- 6000
x <- data.frame(a = rnorm(n), b = runif(n), c = rexp(n),
                f3 = factor(sample(c("u", "v", "w"), n, TRUE)),
                f12 = factor(sample(paste0("L", 1:12), n, TRUE)),
                o = factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"), ordered = TRUE))
x$a[sample(n, 300)] <- NA
x$f12[sample(n, 200)] <- NA
f <- 2 * sin(x$b * 3) + ifelse(is.na(x$a), 1, x$a) + (x$f3 == "v") + ifelse(is.na(x$f12), 0, rnorm(12)[as.integer(x$f12)]) +
  as.integer(x$o)
y <- f + rnorm(n, sd = 0.3)
yb <- factor(y > median(y))
ym <- factor(cut(y, 3, labels = c("p", "q", "r")))
tr <- 1:5000
va <- 5001:n
cases <- list(
  regression = list(y = y),
  binary = list(y = yb, quantized = TRUE),
  multiclass = list(y = ym),
  small_groups = list(y = y, min_data_per_group = 5L, cat_smooth = 1, min_data_in_leaf = 5L),
  monotone = list(y = y, monotone_constraints = c(b = 1L)),
  bagging = list(y = y, bagging_fraction = 0.7, bagging_freq = 1L, feature_fraction = 0.8),
  goss = list(y = y, goss = TRUE),
  forest = list(y = y, boosting = "rf", bagging_fraction = 0.6, bagging_freq = 1L),
  l1 = list(y = y, objective = "l1"),
  quantized_l2 = list(y = y, quantized = TRUE, grad_bits = 8L)
)
for (nm in names(cases)) {
  a <- cases[[nm]]
  yy <- a$y
  a$y <- NULL
  fit <- do.call(histboost, c(list(x[tr, ], yy[tr], nrounds = 5L, num_leaves = 15L, device = "cuda", seed = 1,
                                   verbose = 0L, valid = list(v = list(x = x[va, ], y = yy[va]))), a))
  p <- predict(fit, x[va, ])
  cat(sprintf("%-14s %d trees, %d predictions\n", nm, length(unique(hb_trees(fit)$tree)), NROW(p)))
}
cat(sprintf("sanitize: %d cases\n", length(cases)))
