/* r_mpi.c: .Call glue for data-parallel training over MPI (dist_mpi.c):
 * starting MPI, the shards' datasets, and an all-gather of serialized R
 * objects with which the R side agrees on levels, classes and arguments. */
#include <string.h>
#include "r_util.h"
#include "engine/error.h"
#include "dist_mpi.h"

SEXP C_hb_has_mpi(void) { return Rf_ScalarLogical(hb_mpi_available()); }

/* Start MPI (once); c(rank, size). */
SEXP C_hb_mpi_init(void) {
  hb_error_clear();
  int st = hb_mpi_init();
  if (st != HB_OK) hb_r_throw("engine", "could not start MPI: %s", hb_error_message());
  const hb_dist_t *w = hb_mpi_world();
  SEXP out = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(out)[0] = w->rank;
  INTEGER(out)[1] = w->size;
  UNPROTECT(1);
  return out;
}

SEXP C_hb_mpi_traffic(void) {
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 3));
  hb_mpi_traffic(REAL(out));
  UNPROTECT(1);
  return out;
}

SEXP C_hb_mpi_finalize(SEXP wait_s) {
  hb_mpi_finalize(Rf_asReal(wait_s));
  return R_NilValue;
}

SEXP C_hb_mpi_abort(SEXP code) {
  hb_mpi_abort(Rf_asInteger(code));
  return R_NilValue;
}

/* Every process's raw vector, in rank order: a list of raw vectors. */
SEXP C_hb_mpi_allgather_raw(SEXP x) {
  const hb_dist_t *w = hb_mpi_world();
  if (!w) hb_r_throw("engine", "MPI is not started");
  if (TYPEOF(x) != RAWSXP) hb_r_throw("input", "internal: a raw vector is gathered");
  int64_t *counts = (int64_t *)R_alloc((size_t)w->size, sizeof(int64_t));
  void *all = NULL;
  hb_error_clear();
  int st = w->allgather(w, RAW(x), (int64_t)XLENGTH(x), &all, counts);
  if (st != HB_OK) hb_r_throw_status(st, "gathering over MPI");
  SEXP out = PROTECT(Rf_allocVector(VECSXP, w->size));
  int64_t at = 0;
  for (int r = 0; r < w->size; r++) {
    SEXP v = Rf_allocVector(RAWSXP, (R_xlen_t)counts[r]);
    SET_VECTOR_ELT(out, r, v);
    if (counts[r] > 0) memcpy(RAW(v), (char *)all + at, (size_t)counts[r]);
    at += counts[r];
  }
  hb_free(all);
  UNPROTECT(1);
  return out;
}

/* C_hb_dataset_create (r_dataset.c) for this process's shard of a
 * data-parallel training: hb_dataset_create_dist over MPI_COMM_WORLD. Every
 * process must call it at once. */
SEXP C_hb_dataset_create_mpi(SEXP spec, SEXP label, SEXP weight, SEXP binning, SEXP nthreads,
                             SEXP reference, SEXP init_score, SEXP device) {
  const hb_dist_t *w = hb_mpi_world();
  if (!w) hb_r_throw("engine", "MPI is not started");
  return hb_r_dataset_create(spec, label, weight, binning, nthreads, reference, init_score, device, w);
}
