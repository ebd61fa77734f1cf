# mpi-train.R: run by test-mpi.R under mpirun. Each process takes its shard
# of a case's rows (mpi-cases.R) and trains with distributed = "mpi"; rank 0
# writes the model's text to the output file.
#   Rscript mpi-train.R <cases file> <case> <output file> [empty | die | cuda | plainsums | fullprec | someweights |
#                                                          novalid | badarg | threads | intcol | scripterr |
#                                                          scripterr_all | metricfun | validname | ...]
args <- commandArgs(TRUE)
source(file.path(dirname(args[1]), "helper-surv.R"))  # what mpi-cases.R builds Cox responses with
source(args[1])
library(histboost)
options(histboost.mpi_exit_wait = 15)  # a process left alone ends the job after 15 s
w <- hb_mpi_world()
rank <- w[["rank"]]; np <- w[["size"]]
d <- mpi_case(args[2])
sh <- mpi_case_shards(d, np)
mine <- sh[[rank + 1L]]
vmine <- mpi_case_shards(d, np, valid = TRUE)[[rank + 1L]]
if (identical(args[4], "empty") && rank == 1L) mine <- integer()
if (identical(args[4], "splitq")) {  # the first row of rank 0's shard moves to rank 1: its query is split
  if (rank == 0L) mine <- mine[-1L]
  if (rank == 1L) mine <- c(sh[[1L]][1L], mine)
}
if (identical(args[4], "die") && rank == 1L) quit(status = 3)
if (identical(args[4], "oneclass")) d$y[] <- levels(d$y)[1L]          # one class over all processes
if (identical(args[4], "droplevel")) d$y <- factor(d$y, levels = c(levels(d$y), "never"))  # a level without rows
if (identical(args[4], "plainsums")) d$args$exact_sums <- FALSE  # rank-order double sums, as asked
if (identical(args[4], "fullprec")) d$args$quantized <- FALSE    # full precision (exact_sums by default)
if (identical(args[4], "someweights") && rank == 1L) d$weights <- rep(1, nrow(d$x))  # weights on one process only
# arguments that differ on rank 1: no validation set; a learning rate only it refuses; its own thread count
if (identical(args[4], "novalid") && rank == 1L) d$valid_off <- TRUE
if (identical(args[4], "badarg") && rank == 1L) d$args$learning_rate <- -1
if (identical(args[4], "threads") && rank == 1L) d$args$nthreads <- 2L
if (identical(args[4], "intcol") && rank == 1L) d$x$c <- as.double(d$x$c)  # doubles where the others have integers
if (identical(args[4], "seed") && rank == 1L) d$args$seed <- d$args$seed + 1  # another seed on one process
if (identical(args[4], "charcol") && rank == 1L) d$x$f <- as.character(d$x$f)  # strings where the others have a factor
if (identical(args[4], "scripterr") && rank == 1L) stop("this process's own code failed")  # uncaught, outside histboost
if (identical(args[4], "scripterr_all")) stop("every process's own code failed")  # the script must still stop
if (identical(args[4], "metricfun") && rank == 0L) {  # a metric function on process 0 only
  d$args$eval_metric <- list("logloss", function(p, l) list(name = "m", value = mean(p), higher_better = FALSE))
}
# "failalloc=K": on rank 1, the K-th engine allocation of the training fails
# (a test hook: error.h's hb_test_fail_alloc); "countalloc" prints how many
# allocations rank 1's training made
mode <- if (is.na(args[4])) "" else args[4]
hooked <- rank == 1L && (startsWith(mode, "failalloc=") || mode == "countalloc")
options(hb_test_stop_here = rank == np - 1L)  # the "callback" case: only the last process asks to stop
options(hb_test_metric_fail = mode == "metricfail" && rank == np - 1L)  # "metric_local": only the last fails,
options(hb_test_metric_name = mode == "metricname" && rank == np - 1L)  # or names its metric otherwise
warned <- character()
res <- tryCatch(withCallingHandlers({
  data <- mpi_case_data(d, mine, vmine)
  if (isTRUE(d$valid_off)) data$valid <- NULL
  if (identical(mode, "validname") && rank == 1L) names(data$valid) <- "w"  # another name for the same set
  if (hooked) histboost:::.hb_hook_call("C_hb_test_fail_alloc", if (mode == "countalloc") 0L else
                                          as.integer(sub("failalloc=", "", mode, fixed = TRUE)))
  fit <- do.call(histboost, c(data, mpi_case_stop(d), list(distributed = "mpi",
                                   device = if (identical(args[4], "cuda")) "cuda" else "cpu"), d$args))
  if (hooked) {
    made <- histboost:::.hb_hook_call("C_hb_test_fail_alloc", 0L)
    if (mode == "countalloc") cat(sprintf("allocations on rank 1: %d\n", as.integer(made)))
  }
  if (rank == 0L) hb_save(fit, args[3])
  saveRDS(fit$evaluation_log, sprintf("%s.log%d.rds", args[3], rank))  # every process's metrics
  "ok"
}, warning = function(w) {
  warned <<- c(warned, conditionMessage(w))
  invokeRestart("muffleWarning")
}), error = function(e) paste(class(e)[1L], conditionMessage(e)))
for (m in warned) cat(sprintf("warning on rank %d: %s\n", rank, gsub("\n", " ", m)))
cat(sprintf("rank %d: %s\n", rank, res))
