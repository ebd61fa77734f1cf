/* config.c: training parameters: LightGBM-like defaults and range checks. */
#include <math.h>
#include "config.h"
#include "error.h"

/* A bound of params.def that is not there. */
#define HB_INF HUGE_VAL
/* Its `store` column is not needed here. */
#define HB_RPARAM(name, aliases, doc)

/* Fill cfg with the defaults of params.def. */
void hb_config_default(hb_config_t *cfg) {
#define HB_CFG_DEFAULT_INT(name, def) cfg->name = def;
#define HB_CFG_DEFAULT_DBL(name, def) cfg->name = def;
#define HB_CFG_DEFAULT_FLAG(name, def) cfg->name = def;
#define HB_CFG_DEFAULT_OBJ(name, def) cfg->name = def;
#define HB_CFG_DEFAULT_DEV(name, def) cfg->name = def;
#define HB_CFG_DEFAULT_U64(name, def) cfg->name = def;
#define HB_CFG_DEFAULT_GAINS(name, def) /* below */
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) \
  HB_CFG_DEFAULT_##type(name, def)
#include "params.def"
#undef HB_PARAM
  cfg->num_label_gain = 31;  /* LightGBM's default: grades 0..30 */
  for (int i = 0; i < HB_RANK_MAX_GAIN; i++) cfg->label_gain[i] = i < cfg->num_label_gain ? ldexp(1.0, i) - 1.0 : 0.0;
}

/* A finite, non-negative double (NaN fails). */
static int nonneg(double x) { return x >= 0.0 && isfinite(x); }

/* An INT of params.def within its bounds, else HB_ERR_INPUT naming it. */
static int check_int(const char *name, int v, double lo, int lo_open, double hi, int hi_open) {
  if ((lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi)) return HB_OK;
  if (isfinite(lo) && isfinite(hi))
    return hb_error_set(HB_ERR_INPUT, "%s must be between %.0f and %.0f (got %d)", name, lo_open ? lo + 1 : lo,
                        hi_open ? hi - 1 : hi, v);
  if (isfinite(lo)) return hb_error_set(HB_ERR_INPUT, "%s must be >= %.0f (got %d)", name, lo_open ? lo + 1 : lo, v);
  return hb_error_set(HB_ERR_INPUT, "%s must be <= %.0f (got %d)", name, hi_open ? hi - 1 : hi, v);
}

/* A DBL of params.def: finite and within its bounds (NaN fails), else HB_ERR_INPUT naming it. */
static int check_dbl(const char *name, double v, double lo, int lo_open, double hi, int hi_open) {
  if (isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi)) return HB_OK;
  if (isfinite(lo) && isfinite(hi))
    return hb_error_set(HB_ERR_INPUT, "%s must be in %c%g, %g%c (got %g)", name, lo_open ? '(' : '[', lo, hi,
                        hi_open ? ')' : ']', v);
  if (isfinite(lo)) return hb_error_set(HB_ERR_INPUT, "%s must be %s %g and finite (got %g)", name, lo_open ? ">" : ">=", lo, v);
  return hb_error_set(HB_ERR_INPUT, "%s must be %s %g and finite (got %g)", name, hi_open ? "<" : "<=", hi, v);
}

/* 0 when every field is in range, else HB_ERR_INPUT naming the parameter as R spells it. */
int hb_config_check(const hb_config_t *c) {
  if (!c) return hb_error_set(HB_ERR_INPUT, "no configuration given");
  if (c->objective < 0 || c->objective >= HB_OBJ_COUNT)
    return hb_error_set(HB_ERR_INPUT,
                        "objective must be one of regression, binary, multiclass, poisson, gamma, tweedie, huber, "
                        "l1, quantile, lambdarank, custom, multiclassova, cross_entropy, mape, fair, cox");
  if (c->device != HB_DEVICE_CPU && c->device != HB_DEVICE_CUDA)
    return hb_error_set(HB_ERR_INPUT, "device must be \"cpu\" or \"cuda\"");
  /* Each parameter's own range, from params.def (OBJ, DEV, U64 and GAINS by hand). */
  int st;
#define HB_CFG_CHECK_INT(name, lo, lo_open, hi, hi_open) \
  if ((st = check_int(#name, c->name, lo, lo_open, hi, hi_open)) != HB_OK) return st;
#define HB_CFG_CHECK_DBL(name, lo, lo_open, hi, hi_open) \
  if ((st = check_dbl(#name, c->name, lo, lo_open, hi, hi_open)) != HB_OK) return st;
#define HB_CFG_CHECK_FLAG(name, lo, lo_open, hi, hi_open) \
  if (c->name != 0 && c->name != 1) return hb_error_set(HB_ERR_INPUT, "%s must be TRUE or FALSE (1 or 0)", #name);
#define HB_CFG_CHECK_OBJ(name, lo, lo_open, hi, hi_open)
#define HB_CFG_CHECK_DEV(name, lo, lo_open, hi, hi_open)
#define HB_CFG_CHECK_U64(name, lo, lo_open, hi, hi_open)
#define HB_CFG_CHECK_GAINS(name, lo, lo_open, hi, hi_open)
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) \
  HB_CFG_CHECK_##type(name, lo, lo_open, hi, hi_open)
#include "params.def"
#undef HB_PARAM
  /* Rules that join parameters. */
  if (c->rf && !(hb_config_bagging(c) || c->feature_fraction < 1.0))
    return hb_error_set(HB_ERR_INPUT, "a random forest needs bagging (bagging_fraction < 1, bagging_freq > 0) or "
                        "feature_fraction < 1: otherwise its trees are all the same");
  if (c->rf && c->goss) return hb_error_set(HB_ERR_INPUT, "a random forest samples rows by bagging, not goss");
  if (!(c->top_rate + c->other_rate <= 1.0))
    return hb_error_set(HB_ERR_INPUT, "top_rate + other_rate must be at most 1");
  if (c->goss && hb_config_bagging(c))
    return hb_error_set(HB_ERR_INPUT, "goss and bagging both choose each tree's rows: use one of them");
  if (c->num_label_gain < 1 || c->num_label_gain > HB_RANK_MAX_GAIN)
    return hb_error_set(HB_ERR_INPUT, "label_gain must have 1 to %d values (got %d)", HB_RANK_MAX_GAIN,
                        c->num_label_gain);
  for (int i = 0; i < c->num_label_gain; i++)
    if (!nonneg(c->label_gain[i]) || (i > 0 && c->label_gain[i] < c->label_gain[i - 1]))
      return hb_error_set(HB_ERR_INPUT, "label_gain must be finite, >= 0 and non-decreasing (value %d is %g)",
                          i + 1, c->label_gain[i]);
  if (c->objective == HB_OBJ_MULTICLASS || c->objective == HB_OBJ_MULTICLASSOVA) {
    if (c->num_class < 3 || c->num_class > 1000000)
      return hb_error_set(HB_ERR_INPUT,
                          "num_class must be between 3 and 1000000 for the %s objective (got %d)",
                          c->objective == HB_OBJ_MULTICLASS ? "multiclass" : "multiclassova", c->num_class);
  } else if (c->objective == HB_OBJ_CUSTOM) {
    /* a custom objective: one score a row, or one per class (3 or more) */
    if (c->num_class != 1 && (c->num_class < 3 || c->num_class > 1000000))
      return hb_error_set(HB_ERR_INPUT, "num_class must be 1 or between 3 and 1000000 for a custom objective "
                          "(got %d)", c->num_class);
  } else if (c->num_class != 1) {
    return hb_error_set(HB_ERR_INPUT, "num_class must be 1 unless the objective is multiclass (got %d)",
                        c->num_class);
  }
  /* DART; exact sums (CPU only: the GPU's full-precision sums are fixed point on a grid of their own) */
  if (c->dart && c->rf) return hb_error_set(HB_ERR_INPUT, "boosting is dart or rf, not both");
  if (c->device == HB_DEVICE_CUDA && c->exact_sums && !c->quantized)
    return hb_error_set(HB_ERR_INPUT, "exact_sums trains on the CPU only");
  if (c->quantized && (c->extra_trees || c->path_smooth > 0.0 || c->max_delta_step > 0.0))
    return hb_error_set(HB_ERR_INPUT, "extra_trees, path_smooth and max_delta_step do not combine with quantized "
                        "training");
  /* max_depth <= 0 means no limit and nthreads <= 0 the default, so every int is valid for them
     (params.def gives them no bounds); every uint64 is a valid seed. */
  return HB_OK;
}
