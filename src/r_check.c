/* r_check.c: .Call glue that runs single engine kernels on R data, for the
 * tests that compare them with sums computed in plain R and for
 * inst/bench/quant-speed.R. Test hooks: all of it is built only with
 * -DHB_TEST_HOOKS (configure; see src/README.md). */
#include <string.h>
#include "r_util.h"
#include "engine/error.h"
#include "engine/dataset.h"
#include "engine/hist.h"
#include "engine/hist_quant.h"
#include "engine/quantize.h"

#ifdef HB_TEST_HOOKS
/* Fault injection (error.h): the k-th engine allocation from now fails (k <=
 * 0: none); returns the allocations made since the previous call. */
SEXP C_hb_test_fail_alloc(SEXP k) {
  return Rf_ScalarReal((double)hb_test_fail_alloc((long)hb_r_int(k, "k")));
}

/* The 0-based rows of a 1-based, strictly increasing integer vector `rows`
 * (NULL: all of the dataset's rows, returned as NULL with *n = nrow). */
static int *rows_arg(SEXP rows, const hb_dataset_t *d, int *n) {
  *n = d->nrow;
  if (Rf_isNull(rows)) return NULL;
  if (TYPEOF(rows) != INTSXP) hb_r_throw("input", "`rows` must be an integer vector.");
  *n = (int)XLENGTH(rows);
  int *r0 = (int *)R_alloc((size_t)*n + 1, sizeof(int));
  for (int i = 0; i < *n; i++) {
    int r = INTEGER(rows)[i];
    if (r == NA_INTEGER || r < 1 || r > d->nrow || (i > 0 && r <= r0[i - 1] + 1))
      hb_r_throw("input", "`rows` must be increasing and in 1..%d.", d->nrow);
    r0[i] = r - 1;
  }
  return r0;
}

/* The CPU's integer histogram of a dataset's rows (1-based `rows`, or NULL
 * for all) with quantized levels gq, hq (whole numbers within `bits` bits'
 * range, one per row), through the learner's kernel (row block and column
 * store, 16-bit accumulators flushed every rows16 rows): list(g, h) of the
 * sums per histogram slot. */
SEXP C_hb_qhist_check(SEXP dataset, SEXP rows, SEXP gq, SEXP hq, SEXP bits, SEXP active, SEXP nthreads) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(dataset, hb_r_tag_dataset, "dataset");
  int b = hb_r_int(bits, "bits"), nth = hb_r_int(nthreads, "nthreads");
  if (b < 2 || b > 8) hb_r_throw("input", "`bits` must be in 2..8.");
  if (TYPEOF(gq) != INTSXP || TYPEOF(hq) != INTSXP || XLENGTH(gq) != d->nrow || XLENGTH(hq) != d->nrow)
    hb_r_throw("input", "`gq` and `hq` must be integer vectors of the dataset's %d rows.", d->nrow);
  int lg = hb_quant_grad_levels(b), lh = hb_quant_hess_levels(b);
  int32_t *q = (int32_t *)R_alloc((size_t)d->nrow + 1, sizeof(int32_t));
  for (int i = 0; i < d->nrow; i++) {
    int g = INTEGER(gq)[i], h = INTEGER(hq)[i];
    if (g == NA_INTEGER || g < -lg || g > lg || h == NA_INTEGER || h < 0 || h > lh)
      hb_r_throw("input", "row %d: levels (%d, %d) outside %d bits' range.", i + 1, g, h, b);
    q[i] = g * 65536 + h;
  }
  int nrows, *r0 = rows_arg(rows, d, &nrows);
  uint8_t *use = NULL;
  if (!Rf_isNull(active)) {
    if (TYPEOF(active) != LGLSXP || XLENGTH(active) != d->nfeat)
      hb_r_throw("input", "`active` must be a logical vector of the dataset's %d features.", d->nfeat);
    use = (uint8_t *)R_alloc((size_t)d->nfeat, 1);
    for (int f = 0; f < d->nfeat; f++) use[f] = LOGICAL(active)[f] == TRUE;
  }
  int64_t tg = 0, th = 0;
  for (int i = 0; i < nrows; i++) {
    int r = r0 ? r0[i] : i;
    tg += INTEGER(gq)[r];
    th += INTEGER(hq)[r];
  }
  hb_rowblock_t *rb = NULL;
  hb_error_clear();
  int st = hb_rowblock_create(d, NULL, 1, nth, &rb);
  if (st != HB_OK) hb_r_throw_status(st, "row block");
  hb_rowblock_set_q(rb, q, nth);
  hb_qbin_t *hist = (hb_qbin_t *)hb_malloc(sizeof(hb_qbin_t) * (size_t)(d->total_bins > 0 ? d->total_bins : 1));
  if (!hist) {
    hb_rowblock_free(rb);
    hb_r_throw("engine", "out of memory for a histogram");
  }
  hb_qhist_build(d, rb, r0, nrows, q, hb_quant_rows16(lg, lh), tg, th, use, hist, nth);
  hb_rowblock_free(rb);
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2)); nprot++;
  SEXP vg = PROTECT(Rf_allocVector(REALSXP, d->total_bins)); nprot++;
  SEXP vh = PROTECT(Rf_allocVector(REALSXP, d->total_bins)); nprot++;
  for (int k = 0; k < d->total_bins; k++) {
    REAL(vg)[k] = (double)hist[k].g;
    REAL(vh)[k] = (double)hist[k].h;
  }
  hb_free(hist);
  SET_VECTOR_ELT(out, 0, vg);
  SET_VECTOR_ELT(out, 1, vh);
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, 2)); nprot++;
  SET_STRING_ELT(nms, 0, Rf_mkChar("g"));
  SET_STRING_ELT(nms, 1, Rf_mkChar("h"));
  Rf_setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(nprot);
  return out;
}

/* The CPU histograms of a dataset's rows, full precision (g, h doubles)
 * and quantized (the same rows' levels gq, hq), each built `reps` times by
 * the learner's kernels: c(ms_full, ms_quantized), the median times, for
 * the benchmark. rows: 1-based increasing, or NULL for all. */
SEXP C_hb_hist_time(SEXP dataset, SEXP rows, SEXP g, SEXP h, SEXP gq, SEXP hq, SEXP bits, SEXP reps, SEXP nthreads) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(dataset, hb_r_tag_dataset, "dataset");
  int b = hb_r_int(bits, "bits"), rp = hb_r_int(reps, "reps"), nth = hb_r_int(nthreads, "nthreads");
  if (b < 2 || b > 8 || rp < 1 || rp > 1000) hb_r_throw("input", "`bits` must be in 2..8 and `reps` in 1..1000.");
  if (TYPEOF(g) != REALSXP || TYPEOF(h) != REALSXP || TYPEOF(gq) != INTSXP || TYPEOF(hq) != INTSXP ||
      XLENGTH(g) != d->nrow || XLENGTH(h) != d->nrow || XLENGTH(gq) != d->nrow || XLENGTH(hq) != d->nrow)
    hb_r_throw("input", "`g`, `h` (double) and `gq`, `hq` (integer) must have the dataset's %d rows.", d->nrow);
  int nrows, *r0 = rows_arg(rows, d, &nrows);
  double *gh = (double *)R_alloc(2 * (size_t)d->nrow + 1, sizeof(double));
  int32_t *q = (int32_t *)R_alloc((size_t)d->nrow + 1, sizeof(int32_t));
  double tg = 0, th = 0;
  int64_t qg = 0, qh = 0;
  for (int i = 0; i < d->nrow; i++) {
    gh[2 * (size_t)i] = REAL(g)[i];
    gh[2 * (size_t)i + 1] = REAL(h)[i];
    q[i] = INTEGER(gq)[i] * 65536 + INTEGER(hq)[i];
  }
  for (int i = 0; i < nrows; i++) {
    int r = r0 ? r0[i] : i;
    tg += REAL(g)[r];
    th += REAL(h)[r];
    qg += INTEGER(gq)[r];
    qh += INTEGER(hq)[r];
  }
  double *t = (double *)R_alloc(2 * (size_t)rp, sizeof(double));  /* before anything R cannot free */
  hb_rowblock_t *rb = NULL;
  hb_error_clear();
  int st = hb_rowblock_create(d, NULL, 0, nth, &rb), st2;
  if (st != HB_OK) hb_r_throw_status(st, "row block");
  hb_rowblock_t *rbq = NULL;
  st2 = hb_rowblock_create(d, NULL, 1, nth, &rbq);
  if (st2 != HB_OK) { hb_rowblock_free(rb); hb_r_throw_status(st2, "row block"); }
  hb_rowblock_set_q(rbq, q, nth);
  hb_histbin_t *hist = (hb_histbin_t *)hb_malloc(sizeof(hb_histbin_t) * (size_t)(d->total_bins + 1));
  if (!hist) {
    hb_rowblock_free(rb);
    hb_rowblock_free(rbq);
    hb_r_throw("engine", "out of memory for a histogram");
  }
  int rows16 = hb_quant_rows16(hb_quant_grad_levels(b), hb_quant_hess_levels(b));
  for (int k = 0; k < rp; k++) {
    double a = hb_r_wall_seconds();
    hb_hist_build(d, rb, r0, nrows, gh, tg, th, NULL, hist, nth);
    double m = hb_r_wall_seconds();
    hb_qhist_build(d, rbq, r0, nrows, q, rows16, qg, qh, NULL, (hb_qbin_t *)hist, nth);
    t[k] = 1000 * (m - a);
    t[rp + k] = 1000 * (hb_r_wall_seconds() - m);
  }
  hb_free(hist);
  hb_rowblock_free(rb);
  hb_rowblock_free(rbq);
  R_rsort(t, rp);
  R_rsort(t + rp, rp);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
  REAL(out)[0] = t[rp / 2];
  REAL(out)[1] = t[rp + rp / 2];
  UNPROTECT(1);
  return out;
}
#endif
