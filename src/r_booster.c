/* r_booster.c: .Call glue for training: a booster behind an external pointer
 * (its protected slot keeps the training and validation datasets alive), one
 * call per boosting round (R runs callbacks and evaluation between rounds;
 * Ctrl-C is honoured within a round too, r_interrupt.c). */
#include <stddef.h>
#include <string.h>
#include "r_util.h"
#include "engine/error.h"
#include "engine/boost.h"
#include "engine/model_io.h"
#include "engine/metric.h"
#include "engine/rank.h"
#include "engine/objective.h"

static void booster_finalize(SEXP ptr) {
  hb_booster_t *b = (hb_booster_t *)R_ExternalPtrAddr(ptr);
  if (b) {
    hb_booster_free(b);
    R_ClearExternalPtr(ptr);
  }
}

/* How each named R parameter maps onto hb_config_t: every parameter of
 * engine/params.def; `stored`: part of the model (hb_r_config_list). */
enum { P_INT, P_DBL, P_SEED, P_GAINS };  /* P_GAINS: label_gain, a double vector */
#define P_FLAG P_INT
#define P_OBJ P_INT
#define P_DEV P_INT
#define P_U64 P_SEED
typedef struct { const char *name; int kind; size_t off; int stored; } param_t;
static const param_t params_table[] = {
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) \
  {#name, P_##type, offsetof(hb_config_t, name), HB_STORE_##store != HB_STORE_NO},
#define HB_RPARAM(name, aliases, doc)
#include "engine/params.def"
#undef HB_PARAM
#undef HB_RPARAM
};

/* Fill cfg from a named list; unknown names are an input error. */
static void config_from_list(SEXP params, hb_config_t *cfg) {
  hb_config_default(cfg);
  if (Rf_isNull(params)) return;
  SEXP nms = Rf_getAttrib(params, R_NamesSymbol);
  if (TYPEOF(params) != VECSXP || TYPEOF(nms) != STRSXP)
    hb_r_throw("input", "`params` must be a named list.");
  R_xlen_t n = XLENGTH(params);
  size_t np = sizeof params_table / sizeof params_table[0];
  for (R_xlen_t k = 0; k < n; k++) {
    const char *nm = CHAR(STRING_ELT(nms, k));
    const param_t *p = NULL;
    for (size_t q = 0; q < np; q++)
      if (strcmp(params_table[q].name, nm) == 0) p = &params_table[q];
    if (!p) hb_r_throw("input", "`%s` is not a parameter of the histboost engine.", nm);
    SEXP v = VECTOR_ELT(params, k);
    char *base = (char *)cfg + p->off;
    if (p->kind == P_GAINS) {
      if (TYPEOF(v) != REALSXP || XLENGTH(v) < 1 || XLENGTH(v) > HB_RANK_MAX_GAIN)
        hb_r_throw("input", "`label_gain` must be a numeric vector of 1 to %d values.", HB_RANK_MAX_GAIN);
      cfg->num_label_gain = (int)XLENGTH(v);
      for (int i = 0; i < HB_RANK_MAX_GAIN; i++) cfg->label_gain[i] = i < cfg->num_label_gain ? REAL(v)[i] : 0.0;
    } else if (p->kind == P_INT) {
      int iv = hb_r_int(v, nm);
      memcpy(base, &iv, sizeof iv);
    } else if (p->kind == P_DBL) {
      double dv = hb_r_dbl(v, nm);
      memcpy(base, &dv, sizeof dv);
    } else {
      double dv = hb_r_dbl(v, nm);
      /* The seed travels from R as a double holding a whole number. */
      if (!(dv >= 0.0) || dv > 9007199254740992.0 || dv != (double)(uint64_t)dv)
        hb_r_throw("input", "`seed` must be a whole number between 0 and 2^53.");
      uint64_t sv = (uint64_t)dv;
      memcpy(base, &sv, sizeof sv);
    }
  }
}

/* The schema (names, HB_FEAT_* types, levels, monotone constraints) from
 * list(names, types, levels, monotone = NULL);
 * all memory from R_alloc (the booster copies it). */
static void schema_from_list(SEXP s, int nfeat, hb_schema_t *out) {
  SEXP names = hb_r_get(s, "names"), types = hb_r_get(s, "types"), levels = hb_r_get(s, "levels");
  if (TYPEOF(names) != STRSXP || XLENGTH(names) != nfeat || TYPEOF(types) != INTSXP ||
      XLENGTH(types) != nfeat || TYPEOF(levels) != VECSXP || XLENGTH(levels) != nfeat)
    hb_r_throw("input", "`schema`: names, types and levels must describe the %d features.", nfeat);
  size_t nf = nfeat > 0 ? (size_t)nfeat : 1;
  out->nfeat = nfeat;
  out->names = (char **)R_alloc(nf, sizeof(char *));
  out->types = (int *)R_alloc(nf, sizeof(int));
  out->nlevels = (int *)R_alloc(nf, sizeof(int));
  out->levels = (char ***)R_alloc(nf, sizeof(char **));
  out->monotone = NULL;
  SEXP mono = hb_r_get(s, "monotone");  /* NULL, or one -1 / 0 / 1 per feature */
  if (!Rf_isNull(mono)) {
    if (TYPEOF(mono) != INTSXP || XLENGTH(mono) != nfeat)
      hb_r_throw("input", "`schema`: monotone must be %d integers.", nfeat);
    out->monotone = (int *)R_alloc(nf, sizeof(int));
    for (int f = 0; f < nfeat; f++) out->monotone[f] = INTEGER(mono)[f];
  }
  for (int f = 0; f < nfeat; f++) {
    const char *nm = Rf_translateCharUTF8(STRING_ELT(names, f));
    out->names[f] = strcpy(R_alloc(strlen(nm) + 1, 1), nm);
    out->types[f] = INTEGER(types)[f];
    SEXP lv = VECTOR_ELT(levels, f);
    if (out->types[f] == HB_FEAT_CATEGORICAL || out->types[f] == HB_FEAT_ORDINAL) {
      if (TYPEOF(lv) != STRSXP) hb_r_throw("input", "`schema`: feature %d has no levels.", f + 1);
      int nl = (int)XLENGTH(lv);
      out->nlevels[f] = nl;
      out->levels[f] = (char **)R_alloc(nl > 0 ? (size_t)nl : 1, sizeof(char *));
      for (int l = 0; l < nl; l++) {
        const char *s2 = Rf_translateCharUTF8(STRING_ELT(lv, l));
        out->levels[f][l] = strcpy(R_alloc(strlen(s2) + 1, 1), s2);
      }
    } else if (out->types[f] == HB_FEAT_NUMERIC) {
      out->nlevels[f] = 0;
      out->levels[f] = NULL;
    } else {
      hb_r_throw("input", "`schema`: feature %d has an unknown type.", f + 1);
    }
  }
}

/* Create a booster on the training dataset `train` with parameters `params`
 * (named list mapped onto hb_config_t), feature `schema` and class labels
 * `label_levels` (character or NULL). */
SEXP C_hb_booster_create(SEXP train, SEXP params, SEXP schema, SEXP label_levels) {
  const hb_dataset_t *d = (const hb_dataset_t *)hb_r_ptr(train, hb_r_tag_dataset, "x");
  if (!d->label) hb_r_throw("input", "`y` is required: the training dataset has no labels.");
  hb_config_t cfg;
  config_from_list(params, &cfg);
  hb_schema_t sch;
  schema_from_list(schema, d->ncol, &sch);
  int nlab = 0;
  const char **labs = NULL;
  if (!Rf_isNull(label_levels)) {
    if (TYPEOF(label_levels) != STRSXP) hb_r_throw("input", "`label_levels` must be character.");
    nlab = (int)XLENGTH(label_levels);
    labs = (const char **)R_alloc(nlab > 0 ? (size_t)nlab : 1, sizeof(char *));
    for (int k = 0; k < nlab; k++) labs[k] = Rf_translateCharUTF8(STRING_ELT(label_levels, k));
  }
  hb_error_clear();
  int st = hb_config_check(&cfg);
  if (st != HB_OK) hb_r_throw_status(st, "parameters");
  hb_booster_t *b = NULL;
  st = hb_booster_create(&cfg, d, &sch, &b);
  if (st != HB_OK || !b) {
    if (b) hb_booster_free(b);
    /* A failure of the GPU (no device, out of its memory) is a device error. */
    if (cfg.device == HB_DEVICE_CUDA && st != HB_ERR_INPUT)
      hb_r_throw("device", "training on the GPU: %s", hb_error_message());
    hb_r_throw_status(st != HB_OK ? st : HB_ERR_INTERNAL, "training");
  }
  int nprot = 0;
  SEXP keep = PROTECT(Rf_cons(train, R_NilValue)); nprot++;
  SEXP ptr = PROTECT(hb_r_make_ptr(b, hb_r_tag_booster, keep, booster_finalize)); nprot++;
  if (nlab > 0) {
    st = hb_model_set_label_levels(hb_booster_model(b), nlab, labs);
    if (st != HB_OK) hb_r_throw_status(st, "training"); /* the finalizer frees b */
  }
  UNPROTECT(nprot);
  return ptr;
}

/* Add a validation dataset (binned with the training set as reference). */
SEXP C_hb_booster_add_valid(SEXP booster, SEXP valid) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  const hb_dataset_t *v = (const hb_dataset_t *)hb_r_ptr(valid, hb_r_tag_dataset, "valid");
  if (!v->label) hb_r_throw("input", "`valid`: a validation set needs labels.");
  hb_error_clear();
  int st = hb_booster_add_valid(b, v);
  if (st != HB_OK && hb_booster_on_gpu(b) && st != HB_ERR_INPUT)
    hb_r_throw("device", "`valid` on the GPU: %s", hb_error_message());
  if (st != HB_OK) hb_r_throw_status(st, "`valid`");
  /* The booster borrows v: keep its R handle reachable from the booster's. */
  SEXP keep = PROTECT(Rf_cons(valid, R_ExternalPtrProtected(booster)));
  R_SetExternalPtrProtected(booster, keep);
  UNPROTECT(1);
  return R_NilValue;
}

/* A custom objective's round: the training rows' raw scores (double n, or
 * an n x K matrix for a custom objective of K classes). */
SEXP C_hb_booster_train_scores(SEXP booster) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  const int K = hb_booster_model(b)->num_class > 1 ? hb_booster_model(b)->num_class : 1;
  int n = 0;
  hb_error_clear();
  const double *s = hb_booster_scores(b, 0, &n);
  if (!s) hb_r_throw_status(HB_ERR_NOMEM, "training");
  SEXP out = PROTECT(K > 1 ? Rf_allocMatrix(REALSXP, n, K) : Rf_allocVector(REALSXP, n));
  memcpy(REAL(out), s, sizeof(double) * (size_t)n * (size_t)K);
  UNPROTECT(1);
  return out;
}

/* The raw scores of data set `data` (0 train, 1.. valid) after the rounds so
 * far: a double vector of nrow, or an nrow x K matrix for K > 1 classes. */
SEXP C_hb_booster_scores(SEXP booster, SEXP data) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  const int dat = hb_r_int(data, "data");
  const int K = hb_booster_model(b)->num_class > 1 ? hb_booster_model(b)->num_class : 1;
  int n = 0;
  hb_error_clear();
  const double *s = hb_booster_scores(b, dat, &n);
  if (!s) hb_r_throw_status(HB_ERR_NOMEM, "training");
  SEXP out = PROTECT(K > 1 ? Rf_allocMatrix(REALSXP, n, K) : Rf_allocVector(REALSXP, n));
  memcpy(REAL(out), s, sizeof(double) * (size_t)n * (size_t)K);
  UNPROTECT(1);
  return out;
}

/* ... and its gradients and hessians for those scores (double vectors of n). */
SEXP C_hb_booster_set_gradients(SEXP booster, SEXP g, SEXP h) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  int n = 0;
  hb_booster_scores(b, 0, &n);
  const R_xlen_t nk = (R_xlen_t)n * hb_booster_model(b)->num_class;  /* a value per row and class */
  if (TYPEOF(g) != REALSXP || TYPEOF(h) != REALSXP || XLENGTH(g) != nk || XLENGTH(h) != nk)
    hb_r_throw("input", "`objective`: grad and hess must be double vectors of %lld values.", (long long)nk);
  hb_error_clear();
  int st = hb_booster_set_gradients(b, REAL(g), REAL(h));
  if (st != HB_OK) hb_r_throw_status(st, "`objective`");
  return R_NilValue;
}

/* One boosting round: integer c(finished, iterations in the model). */
SEXP C_hb_booster_update(SEXP booster) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  int finished = 0;
  hb_error_clear();
  hb_r_interrupt_begin();
  int st = hb_booster_update(b, &finished);
  if (hb_r_interrupt_end()) st = HB_ERR_INTERRUPT;
  if (st != HB_OK && hb_booster_on_gpu(b) && st != HB_ERR_INPUT && st != HB_ERR_INTERRUPT)
    hb_r_throw("device", "training on the GPU: %s", hb_error_message());
  if (st != HB_OK) hb_r_throw_status(st, "training");
  SEXP out = PROTECT(Rf_allocVector(INTSXP, 2));
  INTEGER(out)[0] = finished;
  INTEGER(out)[1] = hb_model_num_iterations(hb_booster_model(b));
  UNPROTECT(1);
  return out;
}

/* DART: the iterations (1-based) the last round dropped. */
SEXP C_hb_booster_dart_dropped(SEXP booster) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  const int *it = NULL;
  int n = hb_booster_dart_dropped(b, &it);
  SEXP out = PROTECT(Rf_allocVector(INTSXP, n));
  for (int i = 0; i < n; i++) INTEGER(out)[i] = it[i] + 1;
  UNPROTECT(1);
  return out;
}

/* Interaction constraints: group g is the 0-based columns cols[begin[g] ..
 * begin[g + 1]) (integer vectors, begin of length groups + 1). */
SEXP C_hb_booster_set_interactions(SEXP booster, SEXP begin, SEXP cols) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  if (TYPEOF(begin) != INTSXP || TYPEOF(cols) != INTSXP || XLENGTH(begin) < 1 ||
      INTEGER(begin)[0] != 0 || INTEGER(begin)[XLENGTH(begin) - 1] != XLENGTH(cols))
    hb_r_throw("input", "`interaction_constraints` must be passed as group offsets and column indices.");
  for (R_xlen_t g = 1; g < XLENGTH(begin); g++)
    if (INTEGER(begin)[g] < INTEGER(begin)[g - 1])
      hb_r_throw("input", "`interaction_constraints` must be passed as group offsets and column indices.");
  hb_error_clear();
  int st = hb_booster_set_interactions(b, (int)XLENGTH(begin) - 1, INTEGER(begin), INTEGER(cols));
  if (st != HB_OK) hb_r_throw_status(st, "`interaction_constraints`");
  return R_NilValue;
}
/* Metrics: for each k, metric[k] (HB_METRIC_*) on dataset data[k] (0 train,
 * 1.. valid), with cut-off at[k] (ndcg@k; `at` may be NULL: none). */
SEXP C_hb_booster_eval(SEXP booster, SEXP data, SEXP metric, SEXP at) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  if (TYPEOF(data) != INTSXP || TYPEOF(metric) != INTSXP || XLENGTH(data) != XLENGTH(metric) ||
      (!Rf_isNull(at) && (TYPEOF(at) != INTSXP || XLENGTH(at) != XLENGTH(data))))
    hb_r_throw("input", "`data`, `metric` and `at` must be integer vectors of the same length.");
  R_xlen_t n = XLENGTH(data);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  for (R_xlen_t k = 0; k < n; k++) {
    hb_error_clear();
    int st = hb_booster_eval_at(b, INTEGER(data)[k], INTEGER(metric)[k], Rf_isNull(at) ? 0 : INTEGER(at)[k],
                                REAL(out) + k);
    if (st != HB_OK) hb_r_throw_status(st, "`eval_metric`");
  }
  UNPROTECT(1);
  return out;
}

/* The queries of data set `data` (0 train, 1.. valid): `qid` an integer
 * vector of 0-based query codes, one a row, below `nq`. */
SEXP C_hb_booster_set_query(SEXP booster, SEXP data, SEXP qid, SEXP nq) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  int dat = hb_r_int(data, "data"), nqv = hb_r_int(nq, "nq");
  if (TYPEOF(qid) != INTSXP) hb_r_throw("input", "`group` must be passed as integer query codes.");
  hb_error_clear();
  int st = hb_booster_set_query(b, dat, (int)XLENGTH(qid), nqv, INTEGER(qid));
  if (st != HB_OK) hb_r_throw_status(st, "`group`");
  return R_NilValue;
}

/* The query index of rows with labels `label` and 0-based query codes
 * `qid` (below nq), after checking the configuration and the labels (R
 * errors otherwise), for the test entry points below. */
static hb_rank_query_t *rank_query_checked(const hb_config_t *cfg, int n, SEXP label, SEXP qid, SEXP nq) {
  hb_error_clear();
  int st = hb_config_check(cfg);
  if (st == HB_OK) st = hb_rank_check_labels(cfg, n, REAL(label));
  if (st != HB_OK) hb_r_throw_status(st, "`label`");
  hb_rank_query_t *q = NULL;
  st = hb_rank_query_create(n, INTEGER(qid), hb_r_int(nq, "nq"), &q);
  if (st != HB_OK) hb_r_throw_status(st, "`qid`");
  return q;
}

/* LambdaRank's gradients and hessians (an n x 2 matrix) of rows with
 * labels `label`, 0-based query codes `qid` (below nq) and scores `score`,
 * under `params` (as for the booster), for tests. */
SEXP C_hb_rank_gradients(SEXP label, SEXP qid, SEXP nq, SEXP score, SEXP params, SEXP nthreads) {
  hb_config_t cfg;
  config_from_list(params, &cfg);
  R_xlen_t n = XLENGTH(label);
  if (TYPEOF(label) != REALSXP || TYPEOF(score) != REALSXP || TYPEOF(qid) != INTSXP || XLENGTH(score) != n ||
      XLENGTH(qid) != n)
    hb_r_throw("input", "`label`, `score` (double) and `qid` (integer) must have one value per row.");
  hb_rank_query_t *q = rank_query_checked(&cfg, (int)n, label, qid, nq);
  double *gh = (double *)R_alloc(2 * (size_t)(n > 0 ? n : 1), sizeof(double));
  int st = hb_rank_gradients(&cfg, q, REAL(label), NULL, REAL(score), gh, hb_r_int(nthreads, "nthreads"));
  hb_rank_query_free(q);
  if (st != HB_OK) hb_r_throw_status(st, "ranking gradients");
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int)n, 2));
  for (R_xlen_t i = 0; i < n; i++) {
    REAL(out)[i] = gh[2 * i];
    REAL(out)[n + i] = gh[2 * i + 1];
  }
  UNPROTECT(1);
  return out;
}

#ifdef HB_TEST_HOOKS
/* A test hook (src/README.md): the gradients and hessians of an objective
 * (params: its engine parameters, num_class among them) at raw scores
 * `score` (n x num_class, class-major), with weights `weight` (NULL: none),
 * and its starting scores: list(grad, hess, init) as a booster computes them. */
SEXP C_hb_objective_gradients(SEXP params, SEXP label, SEXP weight, SEXP score) {
  hb_config_t cfg;
  config_from_list(params, &cfg);
  hb_error_clear();
  if (hb_config_check(&cfg) != HB_OK) hb_r_throw_status(HB_ERR_INPUT, "`params`");
  if (cfg.objective == HB_OBJ_LAMBDARANK || cfg.objective == HB_OBJ_CUSTOM)
    hb_r_throw("input", "`params`: the objective's gradients do not come from the labels alone.");
  const R_xlen_t n = XLENGTH(label);
  const int K = HB_OBJ_NSCORE(&cfg);
  if (TYPEOF(label) != REALSXP || TYPEOF(score) != REALSXP || XLENGTH(score) != n * K ||
      (!Rf_isNull(weight) && (TYPEOF(weight) != REALSXP || XLENGTH(weight) != n)) || n > 2147483647)
    hb_r_throw("input", "`label`, `weight` (double, one a row) and `score` (double, one a row and class) mismatch.");
  const double *w = Rf_isNull(weight) ? NULL : REAL(weight);
  if (hb_objective_check_labels(&cfg, (int)n, REAL(label)) != HB_OK) hb_r_throw_status(HB_ERR_INPUT, "`label`");
  double *gh = (double *)R_alloc(2 * (size_t)(n > 0 ? n : 1) * (size_t)K, sizeof(double));
  if (cfg.objective == HB_OBJ_COX) {
    int *order = NULL;
    if (hb_objective_cox_order((int)n, REAL(label), &order) != HB_OK) hb_r_throw_status(HB_ERR_NOMEM, "cox");
    hb_objective_cox_gradients((int)n, REAL(label), w, order, REAL(score), gh);
    hb_free(order);
  } else {
    hb_objective_gradients(&cfg, (int)n, REAL(label), w, REAL(score), gh, 1);
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
  SEXP g = Rf_allocMatrix(REALSXP, (int)n, K);
  SET_VECTOR_ELT(out, 0, g);
  SEXP h = Rf_allocMatrix(REALSXP, (int)n, K);
  SET_VECTOR_ELT(out, 1, h);
  for (R_xlen_t i = 0; i < n * K; i++) {
    REAL(g)[i] = gh[2 * i];
    REAL(h)[i] = gh[2 * i + 1];
  }
  SEXP init = Rf_allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 2, init);
  if (hb_objective_init_score(&cfg, (int)n, REAL(label), w, REAL(init)) != HB_OK)
    hb_r_throw_status(HB_ERR_NOMEM, "init score");
  SEXP nms = Rf_allocVector(STRSXP, 3);
  Rf_setAttrib(out, R_NamesSymbol, nms);
  SET_STRING_ELT(nms, 0, Rf_mkChar("grad"));
  SET_STRING_ELT(nms, 1, Rf_mkChar("hess"));
  SET_STRING_ELT(nms, 2, Rf_mkChar("init"));
  UNPROTECT(1);
  return out;
}
#endif

/* NDCG@k or MAP@k (metric: HB_METRIC_NDCG or HB_METRIC_MAP) of rows with
 * labels `label`, 0-based query codes `qid` (below nq), scores `score` and
 * weights `weight` (NULL: none), under `params`, as a booster computes it,
 * for tests. */
SEXP C_hb_rank_metric(SEXP label, SEXP qid, SEXP nq, SEXP score, SEXP weight, SEXP metric, SEXP k, SEXP params,
                      SEXP nthreads) {
  hb_config_t cfg;
  config_from_list(params, &cfg);
  R_xlen_t n = XLENGTH(label);
  if (TYPEOF(label) != REALSXP || TYPEOF(score) != REALSXP || TYPEOF(qid) != INTSXP || XLENGTH(score) != n ||
      XLENGTH(qid) != n || (!Rf_isNull(weight) && (TYPEOF(weight) != REALSXP || XLENGTH(weight) != n)))
    hb_r_throw("input", "`label`, `score`, `weight` (double) and `qid` (integer) must have one value per row.");
  const int mc = hb_r_int(metric, "metric"), kk = hb_r_int(k, "k"), nth = hb_r_int(nthreads, "nthreads");
  if (mc != HB_METRIC_NDCG && mc != HB_METRIC_MAP) hb_r_throw("input", "`metric` must be ndcg or map.");
  hb_rank_query_t *q = rank_query_checked(&cfg, (int)n, label, qid, nq);
  const double *w = Rf_isNull(weight) ? NULL : REAL(weight);
  double out = 0.0;
  int st = mc == HB_METRIC_MAP ? hb_rank_map(q, REAL(label), w, REAL(score), kk, nth, &out)
                           : hb_rank_ndcg(&cfg, q, REAL(label), w, REAL(score), kk, nth, &out);
  hb_rank_query_free(q);
  if (st != HB_OK) hb_r_throw_status(st, "`eval_metric`");
  return Rf_ScalarReal(out);
}

/* Store R-side extras (named character `meta`) and the best iteration
 * (0: none, else counted in the final model) in the booster's model, then
 * serialize it: character(1); with `release` TRUE, list(text, model
 * pointer), the booster keeping no model. With `base_text` (the model text
 * a training was continued from) the trees of its first `base_iter`
 * iterations go in front first: called once training is over. */
SEXP C_hb_booster_model_text(SEXP booster, SEXP meta, SEXP best_iteration, SEXP release, SEXP base_text,
                             SEXP base_iter) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  hb_model_t *m = hb_booster_model(b);
  if (!Rf_isNull(base_text)) {
    /* a continued training: the base model's trees go in front (parsed
     * afresh from its text, so its own R object is untouched) */
    if (TYPEOF(base_text) != STRSXP || XLENGTH(base_text) != 1 || STRING_ELT(base_text, 0) == NA_STRING)
      hb_r_throw("input", "`init_model`: its model text is missing.");
    SEXP ch = STRING_ELT(base_text, 0);
    hb_model_t *base = NULL;
    hb_error_clear();
    int st = hb_model_from_string(CHAR(ch), (size_t)LENGTH(ch), &base);
    if (st == HB_OK) st = hb_model_prepend(m, base, hb_r_int(base_iter, "base_iter"));
    hb_model_free(base);
    if (st != HB_OK) hb_r_throw_status(st, "`init_model`");
  }
  int best = hb_r_int(best_iteration, "best_iteration");
  if (best < 0 || best > hb_model_num_iterations(m))
    hb_r_throw("input", "`best_iteration` (%d) is outside the model's iterations.", best);
  if (!Rf_isNull(meta)) {
    SEXP nms = Rf_getAttrib(meta, R_NamesSymbol);
    if (TYPEOF(meta) != STRSXP || TYPEOF(nms) != STRSXP)
      hb_r_throw("input", "`meta` must be a named character vector.");
    for (R_xlen_t k = 0; k < XLENGTH(meta); k++) {
      if (STRING_ELT(meta, k) == NA_STRING) continue;
      hb_error_clear();
      int st = hb_model_set_meta(m, Rf_translateCharUTF8(STRING_ELT(nms, k)),
                                 Rf_translateCharUTF8(STRING_ELT(meta, k)));
      if (st != HB_OK) hb_r_throw_status(st, "saving the model");
    }
  }
  m->best_iteration = best;
  SEXP text = PROTECT(hb_r_model_text(m));
  if (!Rf_asLogical(release)) {
    UNPROTECT(1);
    return text;
  }
  /* The model itself too, taken from the booster: what parsing the text would
   * give back (the text holds every field exactly, and the thread count as 0),
   * without parsing it. */
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, text);
  SEXP ptr = PROTECT(hb_r_model_ptr(NULL));  /* allocated before the model changes hands */
  SET_VECTOR_ELT(out, 1, ptr);
  m = hb_booster_release_model(b);
  m->config.nthreads = 0;
  R_SetExternalPtrAddr(ptr, m);
  UNPROTECT(3);
  return out;
}

/* The model grown so far as text, for callbacks: the booster keeps it. With
 * `base_text` (a continued training) the trees of the base's first
 * `base_iter` iterations go in front, in a copy. */
SEXP C_hb_booster_snapshot(SEXP booster, SEXP base_text, SEXP base_iter) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  hb_model_t *m = hb_booster_model(b);
  if (Rf_isNull(base_text)) return hb_r_model_text(m);
  if (TYPEOF(base_text) != STRSXP || XLENGTH(base_text) != 1 || STRING_ELT(base_text, 0) == NA_STRING)
    hb_r_throw("input", "`init_model`: its model text is missing.");
  const int bi = hb_r_int(base_iter, "base_iter");
  /* the copy lives behind a pointer made first, so an R error cannot leak it */
  SEXP ptr = PROTECT(hb_r_model_ptr(NULL));
  char *buf = NULL;
  size_t len = 0;
  hb_model_t *copy = NULL, *base = NULL;
  hb_error_clear();
  int st = hb_model_to_string(m, &buf, &len);
  if (st == HB_OK) st = hb_model_from_string(buf, len, &copy);
  hb_free(buf);
  R_SetExternalPtrAddr(ptr, copy);
  SEXP ch = STRING_ELT(base_text, 0);
  if (st == HB_OK) st = hb_model_from_string(CHAR(ch), (size_t)LENGTH(ch), &base);
  if (st == HB_OK) st = hb_model_prepend(copy, base, bi);
  hb_model_free(base);
  if (st != HB_OK) hb_r_throw_status(st, "`callbacks`");
  SEXP out = hb_r_model_text(copy);
  UNPROTECT(1);
  return out;
}

/* GPU profiling: `on` (integer or NULL) switches it; returns the counts so
 * far, c(round_ms, partition_ms, hist_ms, split_ms, hist_bytes, splits,
 * rounds), or NULL on the CPU. */
SEXP C_hb_booster_profile(SEXP booster, SEXP on) {
  hb_booster_t *b = (hb_booster_t *)hb_r_ptr(booster, hb_r_tag_booster, "booster");
  if (!Rf_isNull(on)) hb_booster_profile(b, hb_r_int(on, "on"));
  double v[HB_PROFILE_N];
  if (!hb_booster_get_profile(b, v)) return R_NilValue;
  SEXP out = PROTECT(Rf_allocVector(REALSXP, HB_PROFILE_N));
  memcpy(REAL(out), v, sizeof v);
  UNPROTECT(1);
  return out;
}

/* Free the booster now (the model text has been taken); later use errors. */
SEXP C_hb_booster_free(SEXP booster) {
  if (TYPEOF(booster) == EXTPTRSXP && R_ExternalPtrTag(booster) == hb_r_tag_booster) {
    booster_finalize(booster);
    R_SetExternalPtrProtected(booster, R_NilValue);
  }
  return R_NilValue;
}

/* The configuration as a named list (names as in params_table). */
SEXP hb_r_config_list(const hb_config_t *cfg) {
  size_t np = sizeof params_table / sizeof params_table[0];
  R_xlen_t nout = 0;
  for (size_t q = 0; q < np; q++) nout += params_table[q].stored;
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, nout)); nprot++;
  SEXP nms = PROTECT(Rf_allocVector(STRSXP, nout)); nprot++;
  R_xlen_t at = 0;
  for (size_t q = 0; q < np; q++) {
    if (!params_table[q].stored) continue;
    const char *base = (const char *)cfg + params_table[q].off;
    SET_STRING_ELT(nms, at, Rf_mkChar(params_table[q].name));
    if (params_table[q].kind == P_INT) {
      int iv;
      memcpy(&iv, base, sizeof iv);
      SET_VECTOR_ELT(out, at, Rf_ScalarInteger(iv));
    } else if (params_table[q].kind == P_DBL) {
      double dv;
      memcpy(&dv, base, sizeof dv);
      SET_VECTOR_ELT(out, at, Rf_ScalarReal(dv));
    } else if (params_table[q].kind == P_GAINS) {
      SEXP g = Rf_allocVector(REALSXP, cfg->num_label_gain);
      SET_VECTOR_ELT(out, at, g);
      memcpy(REAL(g), cfg->label_gain, sizeof(double) * (size_t)cfg->num_label_gain);
    } else {
      uint64_t sv;
      memcpy(&sv, base, sizeof sv);
      SET_VECTOR_ELT(out, at, Rf_ScalarReal((double)sv));
    }
    at++;
  }
  Rf_setAttrib(out, R_NamesSymbol, nms);
  UNPROTECT(nprot);
  return out;
}

#ifdef HB_TEST_HOOKS
/* A test hook (src/README.md): the registry as the compiled engine sees it
 * (engine/params.def, codes.def), for the test that R's generated copy
 * (R/params-generated.R) agrees:
 * list(params = list(name, type, default, lower, lower_open, upper,
 * upper_open, store, gpu), objectives, metrics, higher_better, feature_types,
 * column_types, input_kinds). A default of label_gain is NA (it is a vector). */
#define HB_INF R_PosInf
SEXP C_hb_registry(void) {
  static const char *const names[] = {
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) #name,
#define HB_RPARAM(name, aliases, doc)
#include "engine/params.def"
#undef HB_PARAM
  };
  static const char *const types[] = {
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) #type,
#include "engine/params.def"
#undef HB_PARAM
  };
  hb_config_t dflt;
  hb_config_default(&dflt);
  const int np = (int)(sizeof names / sizeof names[0]);
  int nprot = 0;
  SEXP p = PROTECT(Rf_allocVector(VECSXP, 9)); nprot++;
  SEXP nm = Rf_allocVector(STRSXP, np), ty = Rf_allocVector(STRSXP, np);
  SET_VECTOR_ELT(p, 0, nm);
  SET_VECTOR_ELT(p, 1, ty);
  SEXP de = Rf_allocVector(REALSXP, np); SET_VECTOR_ELT(p, 2, de);
  SEXP lo = Rf_allocVector(REALSXP, np); SET_VECTOR_ELT(p, 3, lo);
  SEXP lop = Rf_allocVector(LGLSXP, np); SET_VECTOR_ELT(p, 4, lop);
  SEXP hi = Rf_allocVector(REALSXP, np); SET_VECTOR_ELT(p, 5, hi);
  SEXP hip = Rf_allocVector(LGLSXP, np); SET_VECTOR_ELT(p, 6, hip);
  SEXP st = Rf_allocVector(INTSXP, np); SET_VECTOR_ELT(p, 7, st);
  SEXP gp = Rf_allocVector(LGLSXP, np); SET_VECTOR_ELT(p, 8, gp);
  int k = 0;
#define HB_CFG_VALUE_INT(name) (double)dflt.name
#define HB_CFG_VALUE_DBL(name) dflt.name
#define HB_CFG_VALUE_FLAG(name) (double)dflt.name
#define HB_CFG_VALUE_OBJ(name) (double)dflt.name
#define HB_CFG_VALUE_DEV(name) (double)dflt.name
#define HB_CFG_VALUE_U64(name) (double)dflt.name
#define HB_CFG_VALUE_GAINS(name) NA_REAL
#define HB_PARAM(name, type, def, lo_, lo_open, hi_, hi_open, store, gpu, r, aliases, doc) \
  SET_STRING_ELT(nm, k, Rf_mkChar(names[k]));                                                  \
  SET_STRING_ELT(ty, k, Rf_mkChar(types[k]));                                                  \
  REAL(de)[k] = HB_CFG_VALUE_##type(name);                                                     \
  REAL(lo)[k] = lo_;                                                                           \
  LOGICAL(lop)[k] = lo_open;                                                                   \
  REAL(hi)[k] = hi_;                                                                           \
  LOGICAL(hip)[k] = hi_open;                                                                   \
  INTEGER(st)[k] = HB_STORE_##store;                                                           \
  LOGICAL(gp)[k] = gpu;                                                                        \
  k++;
#include "engine/params.def"
#undef HB_PARAM
#undef HB_RPARAM
  SEXP pn = PROTECT(Rf_allocVector(STRSXP, 9)); nprot++;
  const char *const pnames[] = {"name", "type", "default", "lower", "lower_open", "upper", "upper_open", "store", "gpu"};
  for (int i = 0; i < 9; i++) SET_STRING_ELT(pn, i, Rf_mkChar(pnames[i]));
  Rf_setAttrib(p, R_NamesSymbol, pn);

  static const char *const obj[] = {
#define HB_OBJECTIVE(ID, name, task) #name,
#include "engine/codes.def"
  };
  static const char *const met[] = {
#define HB_METRIC(ID, name, higher_better) #name,
#include "engine/codes.def"
  };
  static const char *const feat[] = {
#define HB_FEAT_TYPE(ID, name) #name,
#include "engine/codes.def"
  };
  static const char *const col[] = {
#define HB_COL_TYPE(ID, name) #name,
#include "engine/codes.def"
  };
  static const char *const kinds[] = {
#define HB_INPUT_KIND(ID, name) #name,
#include "engine/codes.def"
  };
  const char *const *tabs[] = {obj, met, feat, col, kinds};
  const int ns[] = {HB_OBJ_COUNT, HB_METRIC_COUNT, HB_FEAT_COUNT, HB_COL_COUNT, HB_INPUT_COUNT};
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 7)); nprot++;
  SET_VECTOR_ELT(out, 0, p);
  for (int t = 0; t < 5; t++) {
    SEXP v = Rf_allocVector(STRSXP, ns[t]);
    SET_VECTOR_ELT(out, t < 2 ? t + 1 : t + 2, v);
    for (int i = 0; i < ns[t]; i++) SET_STRING_ELT(v, i, Rf_mkChar(tabs[t][i]));
  }
  SEXP hb = Rf_allocVector(LGLSXP, HB_METRIC_COUNT);
  SET_VECTOR_ELT(out, 3, hb);
  for (int i = 0; i < HB_METRIC_COUNT; i++) LOGICAL(hb)[i] = hb_metric_higher_better(i);
  SEXP on = PROTECT(Rf_allocVector(STRSXP, 7)); nprot++;
  const char *const onames[] = {"params", "objectives", "metrics", "higher_better", "feature_types", "column_types",
                                "input_kinds"};
  for (int i = 0; i < 7; i++) SET_STRING_ELT(on, i, Rf_mkChar(onames[i]));
  Rf_setAttrib(out, R_NamesSymbol, on);
  UNPROTECT(nprot);
  return out;
}
#endif
