/* r_cuda.c: .Call glue for the GPU: what the build and the device are, and
 * checks of single kernels for the tests and the benchmark. */
#include <string.h>
#include "r_util.h"
#include "engine/error.h"
#include "engine/dataset.h"
#include "cuda/cuda.h"

/* list(built, available, status, name, compute, sms, memory, free_memory,
 * runtime, driver): the device fields are NA when there is no GPU. */
SEXP C_hb_cuda_info(void) {
  const char *names[] = {"built", "available", "status", "name", "compute_capability", "multiprocessors",
                         "memory", "free_memory", "cuda_runtime", "cuda_driver"};
  int n = (int)(sizeof names / sizeof names[0]), nprot = 0;
  int built = hb_cuda_built(), avail = hb_cuda_available();
  char status[512];
  snprintf(status, sizeof status, "%s", hb_cuda_status());
  hb_cuda_info_t info;
  int have = 0;
  if (avail) {
    hb_error_clear();
    have = hb_cuda_device_info(&info) == HB_OK;
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, n)); nprot++;
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, n)); nprot++;
  for (int k = 0; k < n; k++) SET_STRING_ELT(nms, k, Rf_mkChar(names[k]));
  SET_VECTOR_ELT(out, 0, Rf_ScalarLogical(built));
  SET_VECTOR_ELT(out, 1, Rf_ScalarLogical(avail && have));
  SET_VECTOR_ELT(out, 2, Rf_mkString(status));
  if (have) {
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", info.major, info.minor);
    char rt[32], dr[32];
    snprintf(rt, sizeof rt, "%d.%d", info.runtime_version / 1000, (info.runtime_version % 1000) / 10);
    snprintf(dr, sizeof dr, "%d.%d", info.driver_version / 1000, (info.driver_version % 1000) / 10);
    SET_VECTOR_ELT(out, 3, Rf_mkString(info.name));
    SET_VECTOR_ELT(out, 4, Rf_mkString(cc));
    SET_VECTOR_ELT(out, 5, Rf_ScalarInteger(info.sms));
    SET_VECTOR_ELT(out, 6, Rf_ScalarReal(info.total_mem));
    SET_VECTOR_ELT(out, 7, Rf_ScalarReal(info.free_mem));
    SET_VECTOR_ELT(out, 8, Rf_mkString(rt));
    SET_VECTOR_ELT(out, 9, Rf_mkString(dr));
  } else {
    SET_VECTOR_ELT(out, 3, Rf_ScalarString(NA_STRING));
    SET_VECTOR_ELT(out, 4, Rf_ScalarString(NA_STRING));
    SET_VECTOR_ELT(out, 5, Rf_ScalarInteger(NA_INTEGER));
    SET_VECTOR_ELT(out, 6, Rf_ScalarReal(NA_REAL));
    SET_VECTOR_ELT(out, 7, Rf_ScalarReal(NA_REAL));
    SET_VECTOR_ELT(out, 8, Rf_ScalarString(NA_STRING));
    SET_VECTOR_ELT(out, 9, Rf_ScalarString(NA_STRING));
  }
  Rf_setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(nprot);
  return out;
}

#ifdef HB_TEST_HOOKS
/* Test hooks (the tests and inst/bench/gpu.R): built only with -DHB_TEST_HOOKS
 * (configure; see src/README.md). */
/* The GPU histogram of a binned dataset's rows (1-based integer `rows`, or
 * NULL for all) with gradients g, h (double, nrow each): list(g, h, exp_g,
 * exp_h, ms) with g, h the sums per histogram slot (as doubles: exact below
 * 2^53): fixed point when quant_bits is 0, else the sums of g, h taken as
 * quantized levels by the quantized kernel. mode 0 auto, 1 shared, 2 global;
 * smem_limit bytes (0: default); reps > 0 also times the launch. */
SEXP C_hb_cuda_hist_check(SEXP dataset, SEXP rows, SEXP g, SEXP h, SEXP quant_bits, SEXP mode, SEXP smem_limit,
                          SEXP reps) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(dataset, hb_r_tag_dataset, "dataset");
  int md = hb_r_int(mode, "mode"), lim = hb_r_int(smem_limit, "smem_limit"), rp = hb_r_int(reps, "reps");
  int qb = hb_r_int(quant_bits, "quant_bits");
  if (qb != 0 && (qb < 2 || qb > 8)) hb_r_throw("input", "`quant_bits` must be 0 or in 2..8.");
  if (TYPEOF(g) != REALSXP || TYPEOF(h) != REALSXP || XLENGTH(g) != d->nrow || XLENGTH(h) != d->nrow)
    hb_r_throw("input", "`g` and `h` must be double vectors of the dataset's %d rows.", d->nrow);
  int nrows = d->nrow;
  int *r0 = NULL;
  if (!Rf_isNull(rows)) {
    if (TYPEOF(rows) != INTSXP) hb_r_throw("input", "`rows` must be an integer vector.");
    nrows = (int)XLENGTH(rows);
    r0 = (int *)R_alloc(nrows > 0 ? (size_t)nrows : 1, sizeof(int));
    for (int i = 0; i < nrows; i++) {
      int r = INTEGER(rows)[i];
      if (r == NA_INTEGER || r < 1 || r > d->nrow) hb_r_throw("input", "`rows` must be in 1..%d.", d->nrow);
      r0[i] = r - 1;
    }
  }
  int stride = hb_cuda_row_stride(d->nfeat);
  uint32_t *words = (uint32_t *)R_alloc((size_t)d->nrow * (size_t)stride, sizeof(uint32_t));
  hb_error_clear();
  int st = hb_dataset_pack_rows(d, 0, d->nrow, stride, words, 0);
  if (st != HB_OK) hb_r_throw_status(st, "packing rows");
  int *num_bin = (int *)R_alloc((size_t)d->nfeat, sizeof(int));
  for (int f = 0; f < d->nfeat; f++) num_bin[f] = d->mappers[f].num_bin;
  int64_t *og = (int64_t *)R_alloc((size_t)d->total_bins, sizeof(int64_t));
  int64_t *oh = (int64_t *)R_alloc((size_t)d->total_bins, sizeof(int64_t));
  int eg = 0, eh = 0;
  double ms = NA_REAL;
  st = hb_cuda_hist_check(d->nrow, d->nfeat, num_bin, d->hist_offset, d->total_bins, words, r0, nrows, REAL(g),
                          REAL(h), qb, md, lim, rp, og, oh, &eg, &eh, rp > 0 ? &ms : NULL);
  if (st != HB_OK) hb_r_throw(st == HB_ERR_INPUT ? "device" : "engine", "GPU histogram: %s", hb_error_message());
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 5)); nprot++;
  SEXP vg = PROTECT(Rf_allocVector(REALSXP, d->total_bins)); nprot++;
  SEXP vh = PROTECT(Rf_allocVector(REALSXP, d->total_bins)); nprot++;
  for (int k = 0; k < d->total_bins; k++) {
    REAL(vg)[k] = (double)og[k];
    REAL(vh)[k] = (double)oh[k];
  }
  SET_VECTOR_ELT(out, 0, vg);
  SET_VECTOR_ELT(out, 1, vh);
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(eg));
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(eh));
  SET_VECTOR_ELT(out, 4, Rf_ScalarReal(ms));
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, 5)); nprot++;
  const char *names[] = {"g", "h", "exp_g", "exp_h", "ms"};
  for (int k = 0; k < 5; k++) SET_STRING_ELT(nms, k, Rf_mkChar(names[k]));
  Rf_setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(nprot);
  return out;
}

/* Device-to-device copy bandwidth in GB/s (bytes read plus written). */
SEXP C_hb_cuda_copy_bandwidth(SEXP bytes, SEXP reps) {
  double gbps = 0;
  hb_error_clear();
  int st = hb_cuda_copy_bandwidth(hb_r_dbl(bytes, "bytes"), hb_r_int(reps, "reps"), &gbps);
  if (st != HB_OK) hb_r_throw("device", "%s", hb_error_message());
  return Rf_ScalarReal(gbps);
}
#endif
