# A/B of the exact-sum reduction over MPI (issue 24): run under mpirun with R_LIBS set to each build;
# rank 0 prints the training time, bytes handed to collectives and the model text's md5.
#   R_LIBS=LIB mpirun -np P Rscript inst/bench/mpi-exact-ab.R
suppressPackageStartupMessages(library(histboost))
options(histboost.mpi_exit_wait = 30)
w <- hb_mpi_world()
r <- w[["rank"]]; P <- w[["size"]]
n <- 400000L; nf <- 28L
set.seed(1)
x <- matrix(runif(n * nf), n, nf)
y <- x[, 1] + 0.5 * x[, 2] * x[, 3] + rnorm(n, sd = 0.3)
mine <- which((seq_len(n) - 1L) %% P == r)
b0 <- histboost:::.hb_mpi_bytes()
t <- system.time(fit <- histboost(x[mine, ], y[mine], nrounds = 40L, num_leaves = 255L, nthreads = 1L,
                                  distributed = "mpi", verbose = 0L))[["elapsed"]]
if (r == 0L) cat(sprintf("lib=%s P=%d train %.2f s, bytes sent %.1f MB, md5 %s\n", .libPaths()[1], P, t,
                         (histboost:::.hb_mpi_bytes() - b0) / 1e6, digest <- tools::md5sum({f <- tempfile(); hb_save(fit, f); f})))
