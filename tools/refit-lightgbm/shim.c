/* shim.c: calls LightGBM's LGBM_BoosterRefit on an R lightgbm booster handle (see cmp.R). */
#include <R.h>
#include <Rinternals.h>
#include <dlfcn.h>
typedef int (*refit_fn)(void *, const int *, int, int);
SEXP shim_refit(SEXP path, SEXP handle, SEXP leaf, SEXP nrow, SEXP ncol) {
  void *lib = dlopen(CHAR(STRING_ELT(path, 0)), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) Rf_error("not loaded");
  refit_fn f = (refit_fn)dlsym(lib, "LGBM_BoosterRefit");
  if (!f) Rf_error("no symbol");
  return Rf_ScalarInteger(f(R_ExternalPtrAddr(handle), INTEGER(leaf), Rf_asInteger(nrow), Rf_asInteger(ncol)));
}
