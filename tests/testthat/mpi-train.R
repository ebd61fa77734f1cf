# mpi-train.R: run by test-mpi.R under mpirun. Each process takes its shard
# of a case's rows (mpi-cases.R) and trains with distributed = "mpi"; rank 0
# writes the model's text to the output file.
#   Rscript mpi-train.R <cases file> <case> <output file> [empty | die | cuda]
args <- commandArgs(TRUE)
source(args[1])
library(histboost)
options(histboost.mpi_exit_wait = 15)  # a process left alone ends the job after 15 s
w <- hb_mpi_world()
rank <- w[["rank"]]; np <- w[["size"]]
d <- mpi_case(args[2])
mine <- mpi_shards(nrow(d$x), np)[[rank + 1L]]
vmine <- mpi_shards(nrow(d$valid$x), np, seed = 8L)[[rank + 1L]]
if (identical(args[4], "empty") && rank == 1L) mine <- integer()
if (identical(args[4], "die") && rank == 1L) quit(status = 3)
res <- tryCatch({
  fit <- do.call(histboost, c(list(x = d$x[mine, ], y = d$y[mine], weights = d$weights[mine],
                                   valid = list(v = list(x = d$valid$x[vmine, ], y = d$valid$y[vmine])),
                                   early_stopping_rounds = 3L, distributed = "mpi",
                                   device = if (identical(args[4], "cuda")) "cuda" else "cpu"), d$args))
  if (rank == 0L) hb_save(fit, args[3])
  "ok"
}, error = function(e) paste(class(e)[1L], conditionMessage(e)))
cat(sprintf("rank %d: %s\n", rank, res))
