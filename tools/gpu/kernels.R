# tools/gpu/kernels.R [ROWS]: times the histogram kernel alone on row
# subsets of several sizes (random rows, as a leaf's segment holds them) and
# on all rows, shared-memory and global-memory paths, at 255 and 63 bins:
# the fixed cost of a launch and the cost per row.
suppressPackageStartupMessages(library(histboost))
a <- commandArgs(trailingOnly = TRUE)
n <- if (length(a) >= 1) as.numeric(a[1]) else 2e6
set.seed(1)
x <- matrix(rnorm(n * 28), n, 28)
x[, 5:8] <- round(x[, 5:8] * 2) / 2
y <- rnorm(n)
g <- rnorm(n); h <- runif(n, 0.1, 0.25)
for (mb in c(255L, 63L)) {
  ds <- hb_dataset(x, y, max_bin = mb)
  for (mode in 1:2) {
    for (size in c(1e3, 1e4, 3e4, 1e5, 1e6, n)) {
      rows <- if (size >= n) NULL else sample.int(n, size)
      r <- histboost:::.hb_cuda_hist(ds, g, h, rows = rows, mode = mode, reps = 30L)
      cat(sprintf("max_bin %3d  %-6s  rows %8.0f  %8.1f us  %6.1f rows/ns\n", mb, c("shared", "global")[mode],
                  size, 1000 * r$ms, size / (r$ms * 1e6)))
    }
  }
}
