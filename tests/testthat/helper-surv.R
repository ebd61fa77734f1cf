# survival::Surv(time, status)'s right-censored object and its rows, built
# by hand: the GPU machine's R has no survival package. test-cuda.R's Cox
# prediction test checks surv_by_hand() against survival::Surv() where the
# package is installed. mpi-cases.R uses these too; the scripts that source
# it outside testthat (mpi-train.R, hb_mpi_run()'s test) source this first.
surv_by_hand <- function(time, status) structure(cbind(time = time, status = status), type = "right", class = "Surv")
surv_rows <- function(y, i) {
  if (inherits(y, "Surv")) structure(unclass(y)[i, , drop = FALSE], type = "right", class = "Surv") else y[i]
}
