/* init.c: the one registration table of the package's .Call entry points. */
#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include "r_util.h"
#include "engine/threads.h"

SEXP C_hb_dataset_create(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_dataset_labels(SEXP);
SEXP C_hb_scan_values(SEXP);
SEXP C_hb_map_codes(SEXP, SEXP);
SEXP C_hb_ptr_valid(SEXP);
SEXP C_hb_text_id(SEXP);
SEXP C_hb_booster_create(SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_booster_add_valid(SEXP, SEXP);
SEXP C_hb_booster_train_scores(SEXP);
SEXP C_hb_booster_scores(SEXP, SEXP);
SEXP C_hb_booster_snapshot(SEXP, SEXP, SEXP);
SEXP C_hb_booster_set_gradients(SEXP, SEXP, SEXP);
SEXP C_hb_booster_update(SEXP);
SEXP C_hb_booster_dart_dropped(SEXP);
SEXP C_hb_booster_set_interactions(SEXP, SEXP, SEXP);
SEXP C_hb_booster_eval(SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_booster_set_query(SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_rank_gradients(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_rank_metric(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_booster_model_text(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_booster_free(SEXP);
SEXP C_hb_model_load(SEXP);
SEXP C_hb_model_to_text(SEXP);
SEXP C_hb_model_info(SEXP);
SEXP C_hb_model_predict(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_model_trees(SEXP);
SEXP C_hb_model_refit(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_model_set_meta(SEXP, SEXP);
SEXP C_hb_write_file(SEXP, SEXP);
SEXP C_hb_threads_default(void);
SEXP C_hb_threads_use(SEXP);
SEXP C_hb_booster_profile(SEXP, SEXP);
SEXP C_hb_cuda_info(void);
#ifdef HB_TEST_HOOKS
/* Test hooks: routines only the test suite and inst/bench call (single
 * kernels, a dataset's bins, the compiled registry, an objective's
 * gradients), registered only in a build with
 * -DHB_TEST_HOOKS, which configure turns on in a development checkout (see
 * src/README.md). R reaches them through .hb_hook_call() (R/histboost-package.R). */
SEXP C_hb_dataset_info(SEXP);
SEXP C_hb_dataset_bins(SEXP);
SEXP C_hb_qhist_check(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_hist_time(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_cuda_hist_check(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_cuda_copy_bandwidth(SEXP, SEXP);
SEXP C_hb_objective_gradients(SEXP, SEXP, SEXP, SEXP);
SEXP C_hb_registry(void);
SEXP C_hb_test_fail_alloc(SEXP);
#endif
SEXP C_hb_has_mpi(void);
SEXP C_hb_mpi_init(void);
SEXP C_hb_mpi_finalize(SEXP);
SEXP C_hb_mpi_abort(SEXP);
SEXP C_hb_mpi_traffic(void);
SEXP C_hb_mpi_allgather_raw(SEXP);
SEXP C_hb_dataset_create_mpi(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);

/* Through void (*)(void), the one function type that converts to any other
 * without a -Wcast-function-type warning. */
/* .onUnload(): the live models', datasets' and boosters' finalizers run
 * while their code is still mapped (R does not look up R_unload_histboost
 * in a library registered without dynamic symbols). */
static SEXP C_hb_finalize_all(void) {
  hb_r_finalize_all();
  return R_NilValue;
}

#define ENTRY(name, n) {#name, (DL_FUNC)(void (*)(void))&name, n}
static const R_CallMethodDef call_methods[] = {
  ENTRY(C_hb_dataset_create, 8),
  ENTRY(C_hb_dataset_labels, 1),
  ENTRY(C_hb_scan_values, 1),
  ENTRY(C_hb_map_codes, 2),
  ENTRY(C_hb_ptr_valid, 1),
  ENTRY(C_hb_text_id, 1),
  ENTRY(C_hb_booster_create, 4),
  ENTRY(C_hb_booster_add_valid, 2),
  ENTRY(C_hb_booster_train_scores, 1),
  ENTRY(C_hb_booster_scores, 2),
  ENTRY(C_hb_booster_snapshot, 3),
  ENTRY(C_hb_booster_set_gradients, 3),
  ENTRY(C_hb_booster_update, 1),
  ENTRY(C_hb_booster_dart_dropped, 1),
  ENTRY(C_hb_booster_set_interactions, 3),
  ENTRY(C_hb_booster_eval, 4),
  ENTRY(C_hb_booster_set_query, 4),
  ENTRY(C_hb_rank_gradients, 6),
  ENTRY(C_hb_rank_metric, 9),
  ENTRY(C_hb_booster_model_text, 6),
  ENTRY(C_hb_booster_free, 1),
  ENTRY(C_hb_model_load, 1),
  ENTRY(C_hb_model_to_text, 1),
  ENTRY(C_hb_model_info, 1),
  ENTRY(C_hb_model_predict, 8),
  ENTRY(C_hb_model_trees, 1),
  ENTRY(C_hb_model_refit, 10),
  ENTRY(C_hb_model_set_meta, 2),
  ENTRY(C_hb_write_file, 2),
  ENTRY(C_hb_threads_default, 0),
  ENTRY(C_hb_threads_use, 1),
  ENTRY(C_hb_booster_profile, 2),
  ENTRY(C_hb_cuda_info, 0),
#ifdef HB_TEST_HOOKS
  ENTRY(C_hb_dataset_info, 1),
  ENTRY(C_hb_dataset_bins, 1),
  ENTRY(C_hb_qhist_check, 7),
  ENTRY(C_hb_hist_time, 9),
  ENTRY(C_hb_cuda_hist_check, 8),
  ENTRY(C_hb_cuda_copy_bandwidth, 2),
  ENTRY(C_hb_objective_gradients, 4),
  ENTRY(C_hb_registry, 0),
  ENTRY(C_hb_test_fail_alloc, 1),
#endif
  ENTRY(C_hb_finalize_all, 0),
  ENTRY(C_hb_has_mpi, 0),
  ENTRY(C_hb_mpi_init, 0),
  ENTRY(C_hb_mpi_finalize, 1),
  ENTRY(C_hb_mpi_abort, 1),
  ENTRY(C_hb_mpi_traffic, 0),
  ENTRY(C_hb_mpi_allgather_raw, 1),
  ENTRY(C_hb_dataset_create_mpi, 8),
  {NULL, NULL, 0}
};

void R_init_histboost(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  hb_r_init_symbols();
  hb_threads_init();
}
