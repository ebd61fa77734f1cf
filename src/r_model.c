/* r_model.c: .Call glue for trained models: load from the model text into an
 * external pointer, serialize, describe, predict, and list the tree nodes. */
#include <string.h>
#include <limits.h>
#include "r_util.h"
#include "engine/error.h"
#include "engine/fileio.h"
#include "engine/model.h"
#include "engine/model_io.h"
#include "engine/objective.h"
#include "engine/predict.h"
#include "engine/refit.h"
#include "cuda/cuda.h"

static void model_finalize(SEXP ptr) {
  hb_model_t *m = (hb_model_t *)R_ExternalPtrAddr(ptr);
  if (m) {
    hb_model_free(m);
    R_ClearExternalPtr(ptr);
  }
}

static SEXP utf8_string(const char *s) {
  return s ? Rf_mkCharCE(s, CE_UTF8) : NA_STRING;
}

static SEXP named_list(int n, const char **names) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, n));
  for (int k = 0; k < n; k++) SET_STRING_ELT(nms, k, Rf_mkChar(names[k]));
  Rf_setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(2);
  return out;
}

/* Parse and validate a model text (character(1)); an hb_model pointer. */
SEXP C_hb_model_load(SEXP text) {
  if (TYPEOF(text) != STRSXP || XLENGTH(text) != 1 || STRING_ELT(text, 0) == NA_STRING)
    hb_r_throw("format", "`model_text` must be a single string holding a histboost model.");
  SEXP ch = STRING_ELT(text, 0);
  hb_model_t *m = NULL;
  hb_error_clear();
  int st = hb_model_from_string(CHAR(ch), (size_t)LENGTH(ch), &m);
  if (st != HB_OK || !m) {
    if (m) hb_model_free(m);
    /* A model text that does not parse is a format error whatever the cause,
     * except when memory ran out. */
    hb_r_throw_status(st == HB_ERR_NOMEM ? st : HB_ERR_FORMAT, "`model_text`");
  }
  return hb_r_model_ptr(m);
}

/* The identity of a model text in this session: the address of its string.
 * R keeps one copy of each string, so an unchanged model_text (copied
 * objects too) is the same string, and a text edited in R is another one
 * (R/model.R's .hb_text_key adds the checksum line and size). */
SEXP C_hb_text_id(SEXP text) {
  if (TYPEOF(text) != STRSXP || XLENGTH(text) != 1) return Rf_mkString("");
  char buf[32];
  snprintf(buf, sizeof buf, "%p", (void *)STRING_ELT(text, 0));
  return Rf_mkString(buf);
}

SEXP hb_r_model_ptr(hb_model_t *m) {
  return hb_r_make_ptr(m, hb_r_tag_model, R_NilValue, model_finalize);
}

/* A model's text form as character(1). */
SEXP hb_r_model_text(const hb_model_t *m) {
  char *buf = NULL;
  size_t len = 0;
  hb_error_clear();
  int st = hb_model_to_string(m, &buf, &len);
  if (st != HB_OK || !buf) {
    hb_free(buf);
    hb_r_throw_status(st != HB_OK ? st : HB_ERR_INTERNAL, "saving the model");
  }
  if (len > INT_MAX) {
    hb_free(buf);
    hb_r_throw("engine", "the model text (%zu bytes) is too large for an R string.", len);
  }
  SEXP out = PROTECT(Rf_allocVector(STRSXP, 1));
  SET_STRING_ELT(out, 0, Rf_mkCharLenCE(buf, (int)len, CE_UTF8));
  hb_free(buf);
  UNPROTECT(1);
  return out;
}

/* Serialize a loaded model: character(1). */
SEXP C_hb_model_to_text(SEXP ptr) {
  return hb_r_model_text((const hb_model_t *)hb_r_ptr(ptr, hb_r_tag_model, "model"));
}

/* Write `text` (character(1)) to the new file `path` (character(1), which
 * must not exist), every step checked (R's io.R renames it over the target).
 * NULL, or an input error with the system's reason. */
SEXP C_hb_write_file(SEXP path, SEXP text) {
  if (TYPEOF(path) != STRSXP || XLENGTH(path) != 1 || STRING_ELT(path, 0) == NA_STRING)
    hb_r_throw("input", "`path` must be a single file path.");
  if (TYPEOF(text) != STRSXP || XLENGTH(text) != 1 || STRING_ELT(text, 0) == NA_STRING)
    hb_r_throw("input", "`text` must be a single string.");
  SEXP ch = STRING_ELT(text, 0);
  const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(path, 0)));
  hb_error_clear();
  if (hb_file_write_new(p, CHAR(ch), (size_t)LENGTH(ch)) != HB_OK)
    hb_r_throw("input", "%s", hb_error_message());
  return R_NilValue;
}

/* Everything R needs to rebuild the "histboost" object from a model. */
SEXP C_hb_model_info(SEXP ptr) {
  const hb_model_t *m = (const hb_model_t *)hb_r_ptr(ptr, hb_r_tag_model, "model");
  int nprot = 0;
  const char *names[] = {"objective", "num_class", "trees_per_iter", "num_trees", "niter",
                         "best_iteration", "config", "feature_names", "feature_types",
                         "feature_levels", "label_levels", "meta", "init_score", "monotone_constraints"};
  SEXP out = PROTECT(named_list(14, names)); nprot++;
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(m->config.objective));
  SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(m->num_class));
  SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(m->trees_per_iter));
  SET_VECTOR_ELT(out, 3, Rf_ScalarInteger(m->num_trees));
  SET_VECTOR_ELT(out, 4, Rf_ScalarInteger(hb_model_num_iterations(m)));
  SET_VECTOR_ELT(out, 5, Rf_ScalarInteger(m->best_iteration));
  SET_VECTOR_ELT(out, 6, hb_r_config_list(&m->config));
  int nf = m->schema.nfeat;
  SEXP fn = PROTECT(Rf_allocVector(STRSXP, nf)); nprot++;
  SEXP ft = PROTECT(Rf_allocVector(INTSXP, nf)); nprot++;
  SEXP fl = PROTECT(Rf_allocVector(VECSXP, nf)); nprot++;
  for (int f = 0; f < nf; f++) {
    SET_STRING_ELT(fn, f, utf8_string(m->schema.names[f]));
    INTEGER(ft)[f] = m->schema.types[f];
    if (m->schema.types[f] == HB_FEAT_CATEGORICAL || m->schema.types[f] == HB_FEAT_ORDINAL) {
      int nl = m->schema.nlevels[f];
      SEXP lv = PROTECT(Rf_allocVector(STRSXP, nl));
      for (int l = 0; l < nl; l++) SET_STRING_ELT(lv, l, utf8_string(m->schema.levels[f][l]));
      SET_VECTOR_ELT(fl, f, lv);
      UNPROTECT(1);
    }
  }
  SET_VECTOR_ELT(out, 7, fn);
  SET_VECTOR_ELT(out, 8, ft);
  SET_VECTOR_ELT(out, 9, fl);
  if (m->nlabel_levels > 0) {
    SEXP ll = PROTECT(Rf_allocVector(STRSXP, m->nlabel_levels));
    for (int k = 0; k < m->nlabel_levels; k++) SET_STRING_ELT(ll, k, utf8_string(m->label_levels[k]));
    SET_VECTOR_ELT(out, 10, ll);
    UNPROTECT(1);
  }
  SEXP meta = PROTECT(Rf_allocVector(STRSXP, m->nmeta)); nprot++;
  SEXP mk = PROTECT(Rf_allocVector(STRSXP, m->nmeta)); nprot++;
  for (int k = 0; k < m->nmeta; k++) {
    SET_STRING_ELT(meta, k, utf8_string(m->meta_values[k]));
    SET_STRING_ELT(mk, k, utf8_string(m->meta_keys[k]));
  }
  Rf_setAttrib(meta, R_NamesSymbol, mk);
  SET_VECTOR_ELT(out, 11, meta);
  SEXP is = PROTECT(Rf_allocVector(REALSXP, m->trees_per_iter)); nprot++;
  for (int k = 0; k < m->trees_per_iter; k++) REAL(is)[k] = m->init_score ? m->init_score[k] : 0.0;
  SET_VECTOR_ELT(out, 12, is);
  if (m->schema.monotone) {  /* NULL when the model has no constraints */
    SEXP mc = PROTECT(Rf_allocVector(INTSXP, nf)); nprot++;
    for (int f = 0; f < nf; f++) INTEGER(mc)[f] = m->schema.monotone[f];
    SET_VECTOR_ELT(out, 13, mc);
  }
  UNPROTECT(nprot);
  return out;
}

/* Predict: spec as for datasets (columns in training order, factor codes of
 * the training levels); iterations [start_iter, start_iter + num_iter)
 * (num_iter <= 0: all remaining); type HB_PRED_*. Returns a double matrix
 * nrow x num_class (raw, response) or an integer matrix of leaf indices. */
SEXP C_hb_model_predict(SEXP ptr, SEXP spec, SEXP start_iter, SEXP num_iter, SEXP type,
                        SEXP nthreads, SEXP init_score, SEXP device) {
  const hb_model_t *m = (const hb_model_t *)hb_r_ptr(ptr, hb_r_tag_model, "model");
  hb_input_t in;
  hb_r_input(spec, &in);
  hb_r_init_score(init_score, &in);
  int start = hb_r_int(start_iter, "start_iter"), num = hb_r_int(num_iter, "iteration");
  int ty = hb_r_int(type, "type"), nt = hb_r_int(nthreads, "nthreads");
  int dev = hb_r_int(device, "device");  /* HB_DEVICE_*: R resolved "auto" and checked the GPU */
  int niter = hb_model_num_iterations(m);
  if (dev != HB_DEVICE_CPU && dev != HB_DEVICE_CUDA) hb_r_throw("input", "`device` code %d is unknown.", dev);
  if (dev == HB_DEVICE_CUDA && ty == HB_PRED_INTERACTION)
    hb_r_throw("device", "`device` = \"cuda\": interactions are computed on the CPU only; "
               "use device = \"cpu\" (or \"auto\").");
  if (dev == HB_DEVICE_CUDA && !hb_cuda_available())
    hb_r_throw("device", "`device` = \"cuda\": %s", hb_cuda_status());
  if (ty != HB_PRED_RAW && ty != HB_PRED_RESPONSE && ty != HB_PRED_LEAF && ty != HB_PRED_CONTRIB &&
      ty != HB_PRED_INTERACTION)
    hb_r_throw("input", "`type` code %d is unknown.", ty);
  if (start < 0 || start > niter)
    hb_r_throw("input", "`start_iter` must be between 0 and %d.", niter);
  if (num <= 0 || num > niter - start) num = niter - start;
  if (in.ncol != m->schema.nfeat)
    hb_r_throw("input", "`newdata` has %d columns; the model has %d features.", in.ncol,
               m->schema.nfeat);
  if (in.cols) {
    for (int f = 0; f < in.ncol; f++) {
      int cat = m->schema.types[f] == HB_FEAT_CATEGORICAL;
      if (cat != (in.cols[f].type == HB_COL_FACTOR))
        hb_r_throw("input", "`newdata`: column `%s` must be %s.", m->schema.names[f],
                   cat ? "a factor" : "numeric");
    }
  } else {
    for (int f = 0; f < in.ncol; f++)
      if (m->schema.types[f] == HB_FEAT_CATEGORICAL)
        hb_r_throw("input", "`newdata`: feature `%s` is a factor; a sparse matrix cannot supply it.",
                   m->schema.names[f]);
  }
  double wide = ty == HB_PRED_LEAF      ? (double)num * m->trees_per_iter
                : ty == HB_PRED_CONTRIB ? (double)m->trees_per_iter * (m->schema.nfeat + 1.0)
                : ty == HB_PRED_INTERACTION
                    ? (double)m->trees_per_iter * (m->schema.nfeat + 1.0) * (m->schema.nfeat + 1.0)
                                        : (double)m->num_class;
  if (wide * (in.nrow > 0 ? in.nrow : 1) > (double)R_XLEN_T_MAX || wide > INT_MAX)
    hb_r_throw("input", "the prediction for %d rows would have too many values for an R matrix; "
               "predict fewer rows at a time.", in.nrow);
  int ncol_out = (int)wide;
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, in.nrow, ncol_out)); nprot++;
  if (in.nrow > 0 && ncol_out > 0) {
    hb_error_clear();
    hb_r_interrupt_begin();
    int st = hb_predict_device(m, &in, start, num, ty, nt, dev, REAL(out));
    if (hb_r_interrupt_end()) st = HB_ERR_INTERRUPT;
    /* A failure of the GPU (out of its memory, a CUDA error) is a device error. */
    if (dev == HB_DEVICE_CUDA && st != HB_OK && st != HB_ERR_INPUT && st != HB_ERR_INTERRUPT)
      hb_r_throw("device", "predicting on the GPU: %s", hb_error_message());
    if (st != HB_OK) hb_r_throw_status(st, "`newdata`");
  }
  if (ty == HB_PRED_LEAF) {
    out = PROTECT(Rf_coerceVector(out, INTSXP)); nprot++;
  }
  UNPROTECT(nprot);
  return out;
}

/* All nodes of all trees, one entry per node (internal nodes of a tree, then
 * its leaves), as columns: tree (1-based), is_leaf, index (k of N<k>/L<k>),
 * depth, feature (1-based, NA for leaves), categorical, threshold, cat_codes
 * (list of the level codes whose bits are set), default_left, left, right
 * (child codes: >= 0 internal node, < 0 leaf ~c), gain, value, hessian, count. */
SEXP C_hb_model_trees(SEXP ptr) {
  const hb_model_t *m = (const hb_model_t *)hb_r_ptr(ptr, hb_r_tag_model, "model");
  R_xlen_t total = 0;
  int maxl = 1;
  for (int t = 0; t < m->num_trees; t++) {
    int L = m->trees[t]->num_leaves;
    total += 2 * (R_xlen_t)L - 1;
    if (L > maxl) maxl = L;
  }
  const char *names[] = {"tree", "is_leaf", "index", "depth", "feature", "categorical",
                         "threshold", "cat_codes", "default_left", "left", "right", "gain",
                         "value", "hessian", "count"};
  int nprot = 0;
  SEXP out = PROTECT(named_list(15, names)); nprot++;
  SEXPTYPE types[] = {INTSXP, LGLSXP, INTSXP, INTSXP, INTSXP, LGLSXP, REALSXP, VECSXP,
                      LGLSXP, INTSXP, INTSXP, REALSXP, REALSXP, REALSXP, INTSXP};
  for (int c = 0; c < 15; c++) SET_VECTOR_ELT(out, c, Rf_allocVector(types[c], total));
  int *tree = INTEGER(VECTOR_ELT(out, 0)), *is_leaf = LOGICAL(VECTOR_ELT(out, 1)),
      *index = INTEGER(VECTOR_ELT(out, 2)), *depth = INTEGER(VECTOR_ELT(out, 3)),
      *feature = INTEGER(VECTOR_ELT(out, 4)), *categ = LOGICAL(VECTOR_ELT(out, 5)),
      *defl = LOGICAL(VECTOR_ELT(out, 8)), *left = INTEGER(VECTOR_ELT(out, 9)),
      *right = INTEGER(VECTOR_ELT(out, 10)), *count = INTEGER(VECTOR_ELT(out, 14));
  double *thr = REAL(VECTOR_ELT(out, 6)), *gain = REAL(VECTOR_ELT(out, 11)),
         *value = REAL(VECTOR_ELT(out, 12)), *hess = REAL(VECTOR_ELT(out, 13));
  SEXP codes = VECTOR_ELT(out, 7);
  /* Depths by a walk from the root: internal nodes are numbered in creation
   * order, so a parent always precedes its children. */
  int *ndepth = (int *)R_alloc((size_t)maxl, sizeof(int));
  int *ldepth = (int *)R_alloc((size_t)maxl, sizeof(int));
  R_xlen_t r = 0;
  for (int t = 0; t < m->num_trees; t++) {
    const hb_tree_t *tr = m->trees[t];
    int L = tr->num_leaves;
    if (L < 1) hb_r_throw("engine", "tree %d has no leaves.", t + 1);
    for (int k = 0; k < L; k++) ldepth[k] = 0;
    if (L > 1) {
      ndepth[0] = 0;
      for (int k = 0; k < L - 1; k++) {
        int ch[2] = {tr->left[k], tr->right[k]};
        for (int s = 0; s < 2; s++) {
          int c = ch[s];
          if (c >= 0 && c < L - 1) ndepth[c] = ndepth[k] + 1;
          else if (c < 0 && ~c < L) ldepth[~c] = ndepth[k] + 1;
          else hb_r_throw("engine", "tree %d has a child index out of range.", t + 1);
        }
      }
    }
    for (int k = 0; k < L - 1; k++, r++) {
      tree[r] = t + 1; is_leaf[r] = 0; index[r] = k; depth[r] = ndepth[k];
      feature[r] = tr->split_feature[k] + 1;
      int iscat = (tr->decision[k] & HB_DECISION_CATEGORICAL) != 0;
      categ[r] = iscat;
      thr[r] = iscat ? NA_REAL : tr->threshold[k];
      defl[r] = (tr->decision[k] & HB_DECISION_DEFAULT_LEFT) != 0;
      left[r] = tr->left[k]; right[r] = tr->right[k];
      gain[r] = tr->split_gain[k]; value[r] = tr->internal_value[k];
      hess[r] = tr->internal_hess[k]; count[r] = tr->internal_count[k];
      if (iscat) {
        int b0 = tr->cat_begin[k], nw = tr->cat_nwords[k], n = 0;
        if (b0 < 0 || nw < 0 || b0 + nw > tr->cat_nbits_words)
          hb_r_throw("engine", "tree %d node %d has a category set out of range.", t + 1, k);
        for (int w = 0; w < nw; w++)
          for (int bit = 0; bit < 32; bit++) n += (tr->cat_bits[b0 + w] >> bit) & 1u;
        SEXP cv = PROTECT(Rf_allocVector(INTSXP, n));
        n = 0;
        for (int w = 0; w < nw; w++)
          for (int bit = 0; bit < 32; bit++)
            if ((tr->cat_bits[b0 + w] >> bit) & 1u) INTEGER(cv)[n++] = 32 * w + bit;
        SET_VECTOR_ELT(codes, r, cv);
        UNPROTECT(1);
      }
    }
    for (int k = 0; k < L; k++, r++) {
      tree[r] = t + 1; is_leaf[r] = 1; index[r] = k; depth[r] = ldepth[k];
      feature[r] = NA_INTEGER; categ[r] = NA_LOGICAL; thr[r] = NA_REAL; defl[r] = NA_LOGICAL;
      left[r] = NA_INTEGER; right[r] = NA_INTEGER; gain[r] = NA_REAL;
      value[r] = tr->leaf_value[k]; hess[r] = tr->leaf_hess[k]; count[r] = tr->leaf_count[k];
    }
  }
  UNPROTECT(nprot);
  return out;
}

/* Set (replace) key/value pairs (named character) in a loaded model. */
SEXP C_hb_model_set_meta(SEXP ptr, SEXP meta) {
  hb_model_t *m = (hb_model_t *)hb_r_ptr(ptr, hb_r_tag_model, "model");
  SEXP nms = Rf_getAttrib(meta, R_NamesSymbol);
  if (TYPEOF(meta) != STRSXP || TYPEOF(nms) != STRSXP)
    hb_r_throw("input", "`meta` must be a named character vector.");
  for (R_xlen_t k = 0; k < XLENGTH(meta); k++) {
    if (STRING_ELT(meta, k) == NA_STRING || STRING_ELT(nms, k) == NA_STRING) continue;
    hb_error_clear();
    int st = hb_model_set_meta(m, Rf_translateCharUTF8(STRING_ELT(nms, k)),
                               Rf_translateCharUTF8(STRING_ELT(meta, k)));
    if (st != HB_OK) hb_r_throw_status(st, "model metadata");
  }
  return R_NilValue;
}

/* A refitted copy of a model (refit.h): leaf (integer n x num_trees, 0-based
 * leaves), label and weight (double n, weight may be NULL), offset (double
 * n x K or NULL), decay_rate, lambda_l1, lambda_l2, cat_l2 (doubles), nthreads.
 * A new hb_model pointer; the model behind ptr is unchanged. */
SEXP C_hb_model_refit(SEXP ptr, SEXP leaf, SEXP label, SEXP weight, SEXP offset, SEXP decay_rate,
                      SEXP lambda_l1, SEXP lambda_l2, SEXP cat_l2, SEXP nthreads) {
  const hb_model_t *m = (const hb_model_t *)hb_r_ptr(ptr, hb_r_tag_model, "model");
  if (TYPEOF(label) != REALSXP) hb_r_throw("input", "`y` must be numeric labels.");
  const R_xlen_t n = XLENGTH(label);
  if (n < 1 || n > INT_MAX) hb_r_throw("input", "`x` must have between 1 and %d rows.", INT_MAX);
  if (TYPEOF(leaf) != INTSXP || XLENGTH(leaf) != n * (R_xlen_t)m->num_trees)
    hb_r_throw("input", "`leaf` must be an integer matrix of %lld x %d leaf indices.", (long long)n, m->num_trees);
  if (weight != R_NilValue && (TYPEOF(weight) != REALSXP || XLENGTH(weight) != n))
    hb_r_throw("input", "`weights` must be %lld numbers.", (long long)n);
  if (offset != R_NilValue && (TYPEOF(offset) != REALSXP || XLENGTH(offset) != n * (R_xlen_t)m->trees_per_iter))
    hb_r_throw("input", "`init_score` must have %lld x %d numbers.", (long long)n, m->trees_per_iter);
  hb_refit_params_t p;
  p.decay_rate = hb_r_dbl(decay_rate, "decay_rate");
  p.lambda_l1 = hb_r_dbl(lambda_l1, "lambda_l1");
  p.lambda_l2 = hb_r_dbl(lambda_l2, "lambda_l2");
  p.cat_l2 = hb_r_dbl(cat_l2, "cat_l2");
  p.nthreads = hb_r_int(nthreads, "nthreads");
  /* the copy: through the model text, which round-trips every double */
  char *buf = NULL;
  size_t len = 0;
  hb_model_t *copy = NULL;
  hb_error_clear();
  int st = hb_model_to_string(m, &buf, &len);
  if (st == HB_OK) st = hb_model_from_string(buf, len, &copy);
  hb_free(buf);
  if (st != HB_OK || !copy) {
    if (copy) hb_model_free(copy);
    hb_r_throw_status(st != HB_OK ? st : HB_ERR_INTERNAL, "copying the model");
  }
  /* the labels' error names `y`; any other the refit */
  if ((st = hb_objective_check_labels(&copy->config, (int)n, REAL(label))) != HB_OK) {
    hb_model_free(copy);
    hb_r_throw_status(st, "`y`");
  }
  hb_r_interrupt_begin();
  st = hb_refit_model(copy, (int)n, INTEGER(leaf), REAL(label), weight == R_NilValue ? NULL : REAL(weight),
                      offset == R_NilValue ? NULL : REAL(offset), &p);
  if (hb_r_interrupt_end()) st = HB_ERR_INTERRUPT;
  if (st != HB_OK) {
    hb_model_free(copy);
    hb_r_throw_status(st, "refitting");
  }
  return hb_r_model_ptr(copy);
}
