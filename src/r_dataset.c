/* r_dataset.c: .Call glue for binned datasets (hb_dataset_t behind an
 * external pointer with a finalizer). */
#include <math.h>
#include <string.h>
#include "r_util.h"
#include "engine/error.h"
#include "engine/dist.h"
#include "cuda/cuda.h"

static void dataset_finalize(SEXP ptr) {
  hb_dataset_t *d = (hb_dataset_t *)R_ExternalPtrAddr(ptr);
  if (d) {
    hb_dataset_free(d);
    R_ClearExternalPtr(ptr);
  }
}

/* Optional per-row double vector (labels, weights): NULL or a double vector of nrow. */
static const double *row_vector(SEXP x, int nrow, const char *what) {
  if (Rf_isNull(x)) return NULL;
  if (TYPEOF(x) != REALSXP || XLENGTH(x) != nrow)
    hb_r_throw("input", "`%s` must be a double vector with one value per row (%d).", what, nrow);
  return REAL(x);
}

/* Bin the input described by `spec` (see .hb_input() in R/dataset.R).
 * label, weight: NULL or double vectors; reference: NULL or a dataset pointer
 * whose mappers are reused; init_score: NULL or a double matrix, one row per
 * row of x. dist: NULL for one process, else this process's shard of a
 * data-parallel training (hb_dataset_create_dist; every process calls at
 * once, so nothing here may stop one process alone: no interrupt window,
 * and the shape checks are the R side's, made before it agreed with the
 * others). Returns an external pointer (tag hb_dataset) whose protected
 * slot keeps the reference alive. */
SEXP hb_r_dataset_create(SEXP spec, SEXP label, SEXP weight, SEXP binning, SEXP nthreads, SEXP reference,
                         SEXP init_score, SEXP device, const hb_dist_t *dist) {
  hb_input_t in;
  hb_r_input(spec, &in);
  in.label = row_vector(label, in.nrow, "y");
  in.weight = row_vector(weight, in.nrow, "weights");
  hb_r_init_score(init_score, &in);
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.lgb_bins = 1;  /* LightGBM's binning (dataset.h): the same rows share a bin in both */
  /* binning: c(max_bin, min_data_in_bin, bin_sample_rows), then optionally
   * each input column's max_bin (0: max_bin's), checked by R */
  if (TYPEOF(binning) != INTSXP || (XLENGTH(binning) != 3 && XLENGTH(binning) != 3 + (R_xlen_t)in.ncol))
    hb_r_throw("input", "`binning` must be three integers (max_bin, min_data_in_bin, bin_sample_rows), then one "
               "max_bin a column or none.");
  bp.max_bin = INTEGER(binning)[0];
  bp.min_data_in_bin = INTEGER(binning)[1];
  bp.bin_sample_rows = INTEGER(binning)[2];
  if (XLENGTH(binning) > 3) bp.max_bin_by_col = INTEGER(binning) + 3;
  bp.nthreads = hb_r_int(nthreads, "nthreads");
  bp.seed = 0; /* binning does not depend on the training seed: one dataset serves many fits */
  bp.device = hb_r_int(device, "device");  /* 1: the rows binned on the GPU (the same bins) */
  const hb_dataset_t *ref = NULL;
  if (!Rf_isNull(reference)) ref = (const hb_dataset_t *)hb_r_ptr(reference, hb_r_tag_dataset, "reference");
  if (!dist && (bp.max_bin < 2 || bp.max_bin > HB_MAX_BIN))
    hb_r_throw("input", "`max_bin` must be between 2 and %d, not %d.", HB_MAX_BIN, bp.max_bin);
  if (!dist && (bp.min_data_in_bin < 1 || bp.bin_sample_rows < 1))
    hb_r_throw("input", "`min_data_in_bin` and `bin_sample_rows` must be at least 1, not %d and %d.",
               bp.min_data_in_bin, bp.bin_sample_rows);
  if (!dist && ref && in.ncol != ref->ncol)
    hb_r_throw("input", "`x` has %d columns but the reference dataset has %d.", in.ncol, ref->ncol);
  hb_error_clear();
  hb_dataset_t *d = NULL;
  int st;
  if (dist) {
    /* binning on the GPU: this process's, one a process by its rank on its
     * machine (a failure here is the binner's to report) */
    if (bp.device && hb_cuda_use_device_of(dist->local_rank) != HB_OK) hb_error_clear();
    st = hb_dataset_create_dist(&in, &bp, ref, dist, &d);
  } else {
    hb_r_interrupt_begin();
    st = hb_dataset_create(&in, &bp, ref, &d);
    if (hb_r_interrupt_end()) {  /* R wants to stop: whatever was made goes */
      hb_dataset_free(d);
      d = NULL;
      st = HB_ERR_INTERRUPT;
    }
  }
  if (st != HB_OK || !d) {
    if (d) hb_dataset_free(d);
    hb_r_throw_status(st != HB_OK ? st : HB_ERR_INTERNAL, "`x`");
  }
  /* Wrap at once so the finalizer owns d from here on. */
  return hb_r_make_ptr(d, hb_r_tag_dataset, Rf_isNull(reference) ? R_NilValue : reference, dataset_finalize);
}

SEXP C_hb_dataset_create(SEXP spec, SEXP label, SEXP weight, SEXP binning, SEXP nthreads,
                         SEXP reference, SEXP init_score, SEXP device) {
  return hb_r_dataset_create(spec, label, weight, binning, nthreads, reference, init_score, device, NULL);
}

/* One pass over a label, weight or code vector (double, integer or
 * logical) for the R side's checks, where R's vector operations made
 * temporary vectors of every row (10.5 million labels took half a second):
 * c(bad, first, binary) with bad the values that are NA, NaN or infinite,
 * first the 1-based position of the first (0: none), and binary 1 when
 * every other value is 0 or 1 and both occur. */
SEXP C_hb_scan_values(SEXP v) {
  const R_xlen_t n = XLENGTH(v);
  const int dbl = TYPEOF(v) == REALSXP;
  if (!dbl && TYPEOF(v) != INTSXP && TYPEOF(v) != LGLSXP)
    hb_r_throw("input", "internal: scanning a %s vector.", Rf_type2char(TYPEOF(v)));
  const double *xd = dbl ? REAL(v) : NULL;
  const int *xi = dbl ? NULL : TYPEOF(v) == INTSXP ? INTEGER(v) : LOGICAL(v);
  double cnt[4] = {0, 0, 0, 0}, first = 0;  /* bad, 0, 1, any other value */
  for (R_xlen_t i = 0; i < n; i++) {
    int c;
    if (dbl) {
      const double a = xd[i];
      c = !isfinite(a) ? 0 : a == 0 ? 1 : a == 1 ? 2 : 3;
    } else {
      const int a = xi[i];
      c = a == NA_INTEGER ? 0 : a == 0 ? 1 : a == 1 ? 2 : 3;
    }
    if (c == 0 && cnt[0] == 0) first = (double)i + 1;
    cnt[c]++;
  }
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 3));
  REAL(out)[0] = cnt[0];
  REAL(out)[1] = first;
  REAL(out)[2] = cnt[3] == 0 && cnt[1] > 0 && cnt[2] > 0;
  UNPROTECT(1);
  return out;
}

/* Class labels from level codes in one pass: map[code - 1] for each code
 * of `codes` (an integer vector or a factor, checked before for NA), NA for
 * a code outside 1..length(map). */
SEXP C_hb_map_codes(SEXP codes, SEXP map) {
  if (TYPEOF(codes) != INTSXP || TYPEOF(map) != REALSXP) hb_r_throw("input", "internal: mapping codes.");
  const R_xlen_t n = XLENGTH(codes);
  const int *c = INTEGER(codes), m = (int)XLENGTH(map);
  const double *to = REAL(map);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  double *o = REAL(out);
  for (R_xlen_t i = 0; i < n; i++) o[i] = c[i] >= 1 && c[i] <= m ? to[c[i] - 1] : NA_REAL;
  UNPROTECT(1);
  return out;
}

#ifdef HB_TEST_HOOKS
/* Test hook: built only with -DHB_TEST_HOOKS (configure; see src/README.md). */
/* list(nrow, nfeat, types, num_bin, trivial, has_label, has_weight, column,
 * upper, sparse): column is each feature's input column (1-based; a factor
 * with more levels than max_bin spans several features); upper each
 * feature's bin bounds (numeric) or level bins (categorical: level code c's
 * bin at c); sparse whether it is stored sparse. */
SEXP C_hb_dataset_info(SEXP ptr) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(ptr, hb_r_tag_dataset, "dataset");
  int nprot = 0;
  const char *names[] = {"nrow", "nfeat", "types", "num_bin", "trivial", "has_label", "has_weight", "column",
                         "upper", "sparse"};
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 10)); nprot++;
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, 10)); nprot++;
  for (int k = 0; k < 10; k++) SET_STRING_ELT(nms, k, Rf_mkChar(names[k]));
  Rf_setAttrib(out, R_NamesSymbol, nms);
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(d->nrow));
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(d->nfeat));
  SEXP types = PROTECT(Rf_allocVector(INTSXP, d->nfeat)); nprot++;
  SEXP nbin = PROTECT(Rf_allocVector(INTSXP, d->nfeat)); nprot++;
  SEXP triv = PROTECT(Rf_allocVector(LGLSXP, d->nfeat)); nprot++;
  SEXP col = PROTECT(Rf_allocVector(INTSXP, d->nfeat)); nprot++;
  SEXP upper = PROTECT(Rf_allocVector(VECSXP, d->nfeat)); nprot++;
  SEXP sparse = PROTECT(Rf_allocVector(LGLSXP, d->nfeat)); nprot++;
  for (int f = 0; f < d->nfeat; f++) {
    const hb_binmapper_t *m = &d->mappers[f];
    SEXP u;
    if (m->type == HB_FEAT_CATEGORICAL) {
      u = Rf_allocVector(INTSXP, m->nlevels);
      for (int c = 0; c < m->nlevels; c++) INTEGER(u)[c] = m->level_bin[c];
    } else {
      u = Rf_allocVector(REALSXP, m->num_bin > 1 ? m->num_bin - 1 : 0);
      for (int b = 0; b + 1 < m->num_bin; b++) REAL(u)[b] = m->upper[b];
    }
    SET_VECTOR_ELT(upper, f, u);
    LOGICAL(sparse)[f] = d->store[f].sparse != 0;
    INTEGER(col)[f] = d->feat_col[f] + 1;
    INTEGER(types)[f] = d->mappers[f].type;
    INTEGER(nbin)[f] = d->mappers[f].num_bin;
    LOGICAL(triv)[f] = d->mappers[f].trivial != 0;
  }
  SET_VECTOR_ELT(out, 2, types);
  SET_VECTOR_ELT(out, 3, nbin);
  SET_VECTOR_ELT(out, 4, triv);
  SET_VECTOR_ELT(out, 5, Rf_ScalarLogical(d->label != NULL));
  SET_VECTOR_ELT(out, 6, Rf_ScalarLogical(d->weight != NULL));
  SET_VECTOR_ELT(out, 7, col);
  SET_VECTOR_ELT(out, 8, upper);
  SET_VECTOR_ELT(out, 9, sparse);
  UNPROTECT(nprot);
  return out;
}
#endif

/* list(label, weight): the dataset's labels as the engine holds them
 * (numbers; classes as 0..K-1) and its weights, each a double vector or NULL. */
SEXP C_hb_dataset_labels(SEXP ptr) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(ptr, hb_r_tag_dataset, "dataset");
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2)); nprot++;
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, 2)); nprot++;
  SET_STRING_ELT(nms, 0, Rf_mkChar("label"));
  SET_STRING_ELT(nms, 1, Rf_mkChar("weight"));
  Rf_setAttrib(out, R_NamesSymbol, nms);
  const double *src[2] = {d->label, d->weight};
  for (int k = 0; k < 2; k++) {
    if (!src[k]) continue;
    SEXP v = Rf_allocVector(REALSXP, d->nrow);
    SET_VECTOR_ELT(out, k, v);
    if (d->nrow > 0) memcpy(REAL(v), src[k], sizeof(double) * (size_t)d->nrow);
  }
  UNPROTECT(nprot);
  return out;
}

/* TRUE when x is an external pointer whose native object still exists. */
SEXP C_hb_ptr_valid(SEXP x) {
  return Rf_ScalarLogical(TYPEOF(x) == EXTPTRSXP && R_ExternalPtrAddr(x) != NULL);
}

#ifdef HB_TEST_HOOKS
/* Test hook: built only with -DHB_TEST_HOOKS (configure; see src/README.md). */
/* The bins of a dataset as an integer matrix (rows x features, 0-based
 * bins; the last bin of a feature is its missing bin), for tests. */
SEXP C_hb_dataset_bins(SEXP ptr) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(ptr, hb_r_tag_dataset, "dataset");
  SEXP out = PROTECT(Rf_allocMatrix(INTSXP, d->nrow, d->nfeat));
  uint8_t *buf = (uint8_t *)R_alloc(d->nrow > 0 ? (size_t)d->nrow : 1, 1);
  for (int f = 0; f < d->nfeat; f++) {
    hb_dataset_feature_bins(d, f, 0, d->nrow, buf);
    int *col = INTEGER(out) + (R_xlen_t)f * d->nrow;
    for (int i = 0; i < d->nrow; i++) col[i] = buf[i];
  }
  UNPROTECT(1);
  return out;
}
#endif
