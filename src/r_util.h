/* r_util.h: helpers shared by the .Call glue (r_dataset.c, r_booster.c,
 * r_model.c): classed R errors, argument checks, external pointers, and the
 * conversion of the R-side input description into an hb_input_t. */
#ifndef HB_R_UTIL_H
#define HB_R_UTIL_H
#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include "engine/dataset.h"
#include "engine/error.h"

/* Raise an R condition of class "histboost_error_<kind>" (kind: "input",
 * "format", "engine", "device") by calling the package's R function
 * .hb_throw(). Never returns. Free native memory BEFORE calling it. */
void hb_r_throw(const char *kind, const char *fmt, ...) HB_PRINTF_FMT(2, 3)
#if defined(__GNUC__)
  __attribute__((noreturn))
#endif
  ;
/* Raise the R error matching an engine status, with the engine's last
 * message after `context` (e.g. "`x`"); for HB_ERR_INTERRUPT, resume the
 * interrupt R signalled (see below). Never returns. */
void hb_r_throw_status(int status, const char *context)
#if defined(__GNUC__)
  __attribute__((noreturn))
#endif
  ;

/* Interrupts (r_interrupt.c). Around a long engine call:
 *   hb_r_interrupt_begin();
 *   int st = engine_call(...);
 *   if (hb_r_interrupt_end()) st = HB_ERR_INTERRUPT;
 *   ... free what the glue holds ...
 *   if (st != HB_OK) hb_r_throw_status(st, "...");
 * In between, the engine's checks ask R about Ctrl-C; end() returns 1 when
 * R wants to jump, and hb_r_throw_status(HB_ERR_INTERRUPT) then resumes
 * R's jump: the user's interrupt. Call end() before anything that may
 * raise an R error. hb_r_interrupt_resume() resumes a held jump (it does
 * not return then) and returns when none is held. */
void hb_r_interrupt_init(void);
void hb_r_interrupt_begin(void);
int hb_r_interrupt_end(void);
void hb_r_interrupt_resume(void);

/* Scalar arguments, checked (type, length 1, not NA); errors name `what`. */
int hb_r_int(SEXP x, const char *what);
double hb_r_dbl(SEXP x, const char *what);

/* The address behind an external pointer with tag `tag`; an input error
 * naming `what` when x is not such a pointer or it is dead (e.g. after
 * saveRDS/readRDS). */
void *hb_r_ptr(SEXP x, SEXP tag, const char *what);
/* A new external pointer to p (tag, prot as R_MakeExternalPtr's) whose
 * finalizer `fin` frees it: at garbage collection, at R's exit, or when the
 * package's library is unloaded (hb_r_finalize_all), whichever comes first,
 * so that no finalizer is left pointing into an unloaded library. */
SEXP hb_r_make_ptr(void *p, SEXP tag, SEXP prot, R_CFinalizer_t fin);
/* Runs the finalizer of every external pointer hb_r_make_ptr made that is
 * still alive (R_unload_histboost): their objects are freed and the
 * pointers cleared, so R's objects holding them say so when used. */
void hb_r_finalize_all(void);
/* Element `name` of the list x, or R_NilValue. */
SEXP hb_r_get(SEXP x, const char *name);

/* An hb_input_t built from the list made by R's .hb_input(): kind (0 column
 * list, 1 dense matrix, 2 dgCMatrix slots), nrow, ncol, and cols/types/nlevels,
 * mat, or p/i/x. Every array is borrowed from R or allocated with R_alloc, so
 * nothing needs freeing, even after an R error. Validates everything. */
void hb_r_input(SEXP spec, hb_input_t *in);
void hb_r_init_score(SEXP x, hb_input_t *in);
/* A dataset from the input `spec` (r_dataset.c): one process (dist NULL) or
 * this process's shard of a data-parallel training. */
struct hb_dist;
SEXP hb_r_dataset_create(SEXP spec, SEXP label, SEXP weight, SEXP binning, SEXP nthreads, SEXP reference,
                         SEXP init_score, SEXP device, const struct hb_dist *dist);

/* Wall-clock seconds (monotonic), for timing kernels. */
double hb_r_wall_seconds(void);

/* The engine configuration as a named R list (r_booster.c). */
#include "engine/config.h"
SEXP hb_r_config_list(const hb_config_t *cfg);

/* A model's text form as character(1), and a model as an external pointer
 * that owns it (r_model.c). */
#include "engine/model.h"
SEXP hb_r_model_text(const hb_model_t *m);
SEXP hb_r_model_ptr(hb_model_t *m);

/* Tags of the package's external pointers (installed at load). */
extern SEXP hb_r_tag_dataset, hb_r_tag_booster, hb_r_tag_model;
void hb_r_init_symbols(void);

#endif
