/* r_util.c: helpers shared by the .Call glue: classed errors raised through
 * the package's R function .hb_throw(), scalar and pointer checks, and the
 * R input description -> hb_input_t conversion used by datasets and
 * prediction. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "r_util.h"
#include "engine/error.h"

SEXP hb_r_tag_dataset = NULL, hb_r_tag_booster = NULL, hb_r_tag_model = NULL;

void hb_r_init_symbols(void) {
  hb_r_tag_dataset = Rf_install("hb_dataset");
  hb_r_tag_booster = Rf_install("hb_booster");
  hb_r_tag_model = Rf_install("hb_model");
  hb_r_interrupt_init();
}

void hb_r_throw(const char *kind, const char *fmt, ...) {
  /* Static so that the long jump leaves nothing on the C heap. */
  static char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("histboost")));
  SEXP kind_s = PROTECT(Rf_mkString(kind));
  SEXP msg_s = PROTECT(Rf_allocVector(STRSXP, 1));
  SET_STRING_ELT(msg_s, 0, Rf_mkCharCE(msg, CE_UTF8));
  SEXP call = PROTECT(Rf_lang3(Rf_install(".hb_throw"), kind_s, msg_s));
  Rf_eval(call, ns);
  /* .hb_throw() always signals an error; this is only a safety net. */
  UNPROTECT(4);
  Rf_error("%s", msg);
}

void hb_r_throw_status(int status, const char *context) {
  /* R's own jump (the user's interrupt) waits since the engine stopped for it */
  if (status == HB_ERR_INTERRUPT) hb_r_interrupt_resume();
  const char *kind = "engine";
  if (status == HB_ERR_INPUT) kind = "input";
  else if (status == HB_ERR_FORMAT) kind = "format";
  const char *em = hb_error_message();
  if (!em[0]) em = "unknown engine error";
  if (status == HB_ERR_INTERNAL)
    hb_r_throw(kind, "%s: internal error in the histboost engine (please report): %s", context, em);
  hb_r_throw(kind, "%s: %s", context, em);
}

int hb_r_int(SEXP x, const char *what) {
  if ((TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP && TYPEOF(x) != LGLSXP) || XLENGTH(x) != 1)
    hb_r_throw("input", "`%s` must be a single number.", what);
  if (TYPEOF(x) == REALSXP) {
    double v = REAL(x)[0];
    if (!(v == v) || v < -2147483647.0 || v > 2147483647.0 || v != (double)(int)v)
      hb_r_throw("input", "`%s` must be a whole number within the integer range.", what);
    return (int)v;
  }
  int v = TYPEOF(x) == INTSXP ? INTEGER(x)[0] : LOGICAL(x)[0];
  if (v == NA_INTEGER) hb_r_throw("input", "`%s` must not be NA.", what);
  return v;
}

double hb_r_dbl(SEXP x, const char *what) {
  if ((TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP) || XLENGTH(x) != 1)
    hb_r_throw("input", "`%s` must be a single number.", what);
  if (TYPEOF(x) == INTSXP) {
    if (INTEGER(x)[0] == NA_INTEGER) hb_r_throw("input", "`%s` must not be NA.", what);
    return (double)INTEGER(x)[0];
  }
  double v = REAL(x)[0];
  if (ISNAN(v)) hb_r_throw("input", "`%s` must not be NA.", what);
  return v;
}

void *hb_r_ptr(SEXP x, SEXP tag, const char *what) {
  if (TYPEOF(x) != EXTPTRSXP || R_ExternalPtrTag(x) != tag)
    hb_r_throw("input", "`%s` is not a histboost %s handle.", what, CHAR(PRINTNAME(tag)));
  void *p = R_ExternalPtrAddr(x);
  if (!p)
    hb_r_throw("input", "`%s` refers to a native object that no longer exists (it was saved and "
               "reloaded, or freed); re-create it.", what);
  return p;
}

/* The weak references (key: an external pointer, C finalizer: its free) of
 * hb_r_make_ptr, newest first, in CDR(registry): R keeps them until its
 * exit or until their key is collected; the package keeps them to run the
 * live ones' finalizers before its library is unloaded (a finalizer left
 * registered would then call into unmapped code at the next gc). Entries
 * whose key is gone are pruned as the list grows. */
static SEXP registry = NULL;
static long reg_n = 0, reg_live = 0;

static void registry_prune(void) {
  SEXP prev = registry;
  reg_live = 0;
  for (SEXP c = CDR(registry); c != R_NilValue; c = CDR(c)) {
    if (R_WeakRefKey(CAR(c)) == R_NilValue) {
      SETCDR(prev, CDR(c));
    } else {
      prev = c;
      reg_live++;
    }
  }
  reg_n = reg_live;
}

SEXP hb_r_make_ptr(void *p, SEXP tag, SEXP prot, R_CFinalizer_t fin) {
  SEXP ptr = PROTECT(R_MakeExternalPtr(p, tag, prot));
  SEXP w = PROTECT(R_MakeWeakRefC(ptr, R_NilValue, fin, TRUE));
  if (!registry) {
    registry = Rf_cons(R_NilValue, R_NilValue);
    R_PreserveObject(registry);
  }
  if (reg_n >= 2 * reg_live + 64) registry_prune();
  SETCDR(registry, Rf_cons(w, CDR(registry)));
  reg_n++;
  UNPROTECT(2);
  return ptr;
}

void hb_r_finalize_all(void) {
  if (!registry) return;
  /* newest first: a booster before the dataset it trains on */
  for (SEXP c = CDR(registry); c != R_NilValue; c = CDR(c)) R_RunWeakRefFinalizer(CAR(c));
  R_ReleaseObject(registry);
  registry = NULL;
  reg_n = reg_live = 0;
}

SEXP hb_r_get(SEXP x, const char *name) {
  if (TYPEOF(x) != VECSXP) return R_NilValue;
  SEXP nms = Rf_getAttrib(x, R_NamesSymbol);
  if (TYPEOF(nms) != STRSXP) return R_NilValue;
  R_xlen_t n = XLENGTH(x);
  for (R_xlen_t k = 0; k < n; k++)
    if (strcmp(CHAR(STRING_ELT(nms, k)), name) == 0) return VECTOR_ELT(x, k);
  return R_NilValue;
}

/* arg: the R argument the matrix was given as (the spec's "arg"), for messages. */
static void check_csc(const int *p, const int *i, R_xlen_t nnz, int nrow, int ncol, const char *arg) {
  if (p[0] != 0 || (R_xlen_t)p[ncol] != nnz)
    hb_r_throw("input", "`%s`: malformed sparse matrix (column pointers do not match the entries).", arg);
  for (int j = 0; j < ncol; j++) {
    if (p[j + 1] < p[j])
      hb_r_throw("input", "`%s`: malformed sparse matrix (decreasing column pointers).", arg);
    for (int k = p[j]; k < p[j + 1]; k++) {
      if (i[k] < 0 || i[k] >= nrow || (k > p[j] && i[k] <= i[k - 1]))
        hb_r_throw("input", "`%s`: malformed sparse matrix (row indices out of range or not "
                   "increasing within column %d).", arg, j + 1);
    }
  }
}

void hb_r_input(SEXP spec, hb_input_t *in) {
  if (TYPEOF(spec) != VECSXP) hb_r_throw("input", "`x`: internal input description is not a list.");
  int kind = hb_r_int(hb_r_get(spec, "kind"), "kind");
  int nrow = hb_r_int(hb_r_get(spec, "nrow"), "nrow");
  int ncol = hb_r_int(hb_r_get(spec, "ncol"), "ncol");
  if (nrow < 0 || ncol < 0) hb_r_throw("input", "`x`: negative dimensions.");
  memset(in, 0, sizeof *in);
  in->nrow = nrow;
  in->ncol = ncol;
  if (kind == HB_INPUT_FRAME || kind == HB_INPUT_MATRIX) {
    hb_column_t *cols = (hb_column_t *)R_alloc(ncol > 0 ? (size_t)ncol : 1, sizeof(hb_column_t));
    memset(cols, 0, (ncol > 0 ? (size_t)ncol : 1) * sizeof(hb_column_t));
    if (kind == HB_INPUT_FRAME) {
      SEXP lst = hb_r_get(spec, "cols"), types = hb_r_get(spec, "types"),
           nlev = hb_r_get(spec, "nlevels");
      if (TYPEOF(lst) != VECSXP || XLENGTH(lst) != ncol || TYPEOF(types) != INTSXP ||
          XLENGTH(types) != ncol || TYPEOF(nlev) != INTSXP || XLENGTH(nlev) != ncol)
        hb_r_throw("input", "`x`: internal column description is inconsistent.");
      for (int j = 0; j < ncol; j++) {
        SEXP c = VECTOR_ELT(lst, j);
        int t = INTEGER(types)[j];
        if (XLENGTH(c) != nrow)
          hb_r_throw("input", "`x`: column %d has %lld values, expected %d.", j + 1,
                     (long long)XLENGTH(c), nrow);
        cols[j].type = t;
        if (t == HB_COL_DOUBLE && TYPEOF(c) == REALSXP) {
          cols[j].dbl = REAL(c);
        } else if ((t == HB_COL_INT || t == HB_COL_FACTOR) && TYPEOF(c) == INTSXP) {
          cols[j].i32 = INTEGER(c);
          cols[j].nlevels = INTEGER(nlev)[j];
          if (t == HB_COL_FACTOR && cols[j].nlevels < 0)
            hb_r_throw("input", "`x`: column %d has a negative level count.", j + 1);
        } else {
          hb_r_throw("input", "`x`: column %d has an unsupported storage type.", j + 1);
        }
      }
    } else {
      SEXP mat = hb_r_get(spec, "mat");
      if ((TYPEOF(mat) != REALSXP && TYPEOF(mat) != INTSXP) ||
          XLENGTH(mat) != (R_xlen_t)nrow * (R_xlen_t)ncol)
        hb_r_throw("input", "`x`: the matrix is not numeric or its size does not match.");
      for (int j = 0; j < ncol; j++) {
        R_xlen_t off = (R_xlen_t)j * (R_xlen_t)nrow;
        if (TYPEOF(mat) == REALSXP) {
          cols[j].type = HB_COL_DOUBLE;
          cols[j].dbl = REAL(mat) + off;
        } else {
          cols[j].type = HB_COL_INT;
          cols[j].i32 = INTEGER(mat) + off;
        }
      }
    }
    in->cols = cols;
  } else if (kind == HB_INPUT_SPARSE) {
    SEXP p = hb_r_get(spec, "p"), i = hb_r_get(spec, "i"), x = hb_r_get(spec, "x"), a = hb_r_get(spec, "arg");
    const char *arg = TYPEOF(a) == STRSXP && XLENGTH(a) == 1 && STRING_ELT(a, 0) != NA_STRING ? CHAR(STRING_ELT(a, 0)) : "x";
    if (TYPEOF(p) != INTSXP || XLENGTH(p) != (R_xlen_t)ncol + 1 || TYPEOF(i) != INTSXP ||
        TYPEOF(x) != REALSXP || XLENGTH(i) != XLENGTH(x))
      hb_r_throw("input", "`%s`: malformed sparse matrix slots (need integer p, i and double x).", arg);
    check_csc(INTEGER(p), INTEGER(i), XLENGTH(i), nrow, ncol, arg);
    hb_csc_t *csc = (hb_csc_t *)R_alloc(1, sizeof(hb_csc_t));
    csc->p = INTEGER(p);
    csc->i = INTEGER(i);
    csc->x = REAL(x);
    in->csc = csc;
  } else {
    hb_r_throw("input", "`x`: unknown input kind %d.", kind);
  }
}

#include <time.h>
double hb_r_wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Package-level queries. */
#include "engine/threads.h"

SEXP C_hb_threads_default(void) { return Rf_ScalarInteger(hb_threads_default()); }
SEXP C_hb_threads_use(SEXP n) { return Rf_ScalarInteger(hb_threads_use(hb_r_int(n, "nthreads"))); }

/* Per-row starting scores: NULL, or a double vector (one column) or matrix
 * with one row per row of `in`, set into in->init_score. */
void hb_r_init_score(SEXP x, hb_input_t *in) {
  if (Rf_isNull(x)) return;
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  int ncol = Rf_isNull(dim) ? 1 : (LENGTH(dim) == 2 ? INTEGER(dim)[1] : -1);  /* an array of other rank: refused */
  if (TYPEOF(x) != REALSXP || XLENGTH(x) != (R_xlen_t)in->nrow * ncol || ncol < 1)
    hb_r_throw("input", "`init_score` must be a double vector with one value per row (%d) or a matrix "
               "with one row per row and one column per class.", in->nrow);
  in->init_score = REAL(x);
  in->init_score_ncol = ncol;
}

