/* config.c: training parameters: LightGBM-like defaults and range checks. */
#include <math.h>
#include "config.h"
#include "error.h"

/* Fill cfg with the defaults documented in config.h. */
void hb_config_default(hb_config_t *cfg) {
  cfg->objective = HB_OBJ_REGRESSION;
  cfg->num_class = 1;
  cfg->learning_rate = 0.1;
  cfg->num_leaves = 31;
  cfg->max_depth = 0;
  cfg->min_data_in_leaf = 20;
  cfg->min_sum_hessian_in_leaf = 1e-3;
  cfg->lambda_l1 = 0.0;
  cfg->lambda_l2 = 0.0;
  cfg->min_gain_to_split = 0.0;
  cfg->max_cat_threshold = 32;
  cfg->max_cat_to_onehot = 4;
  cfg->cat_smooth = 10.0;
  cfg->cat_l2 = 10.0;
  cfg->min_data_per_group = 100;
  cfg->bagging_fraction = 1.0;
  cfg->bagging_freq = 0;
  cfg->feature_fraction = 1.0;
  cfg->boost_from_average = 1;
  cfg->rf = 0;
  cfg->tweedie_variance_power = 1.5;
  cfg->huber_delta = 1.0;
  cfg->poisson_max_delta_step = 0.7;
  cfg->quantile_alpha = 0.5;
  cfg->fair_c = 1.0;
  cfg->lambdarank_truncation_level = 30;
  cfg->lambdarank_norm = 1;
  cfg->num_label_gain = 31;  /* LightGBM's default: grades 0..30 */
  for (int i = 0; i < HB_RANK_MAX_GAIN; i++) cfg->label_gain[i] = i < cfg->num_label_gain ? ldexp(1.0, i) - 1.0 : 0.0;
  cfg->seed = 0;
  cfg->nthreads = 0;
  cfg->device = HB_DEVICE_CPU;
  cfg->quantized = 0;
  cfg->grad_bits = 4;
  cfg->stochastic_rounding = 1;
  cfg->refit_leaves = 1;
  cfg->goss = 0;
  cfg->top_rate = 0.2;
  cfg->other_rate = 0.1;
  cfg->enable_bundle = 1;
  cfg->max_conflict_rate = 0.0;
}

/* A finite, non-negative double (NaN fails). */
static int nonneg(double x) { return x >= 0.0 && isfinite(x); }
/* A fraction in (0, 1] (NaN fails). */
static int fraction(double x) { return x > 0.0 && x <= 1.0; }

/* 0 when every field is in range, else HB_ERR_INPUT naming the parameter as R spells it. */
int hb_config_check(const hb_config_t *c) {
  if (!c) return hb_error_set(HB_ERR_INPUT, "no configuration given");
  if (c->objective < 0 || c->objective >= HB_OBJ_COUNT)
    return hb_error_set(HB_ERR_INPUT,
                        "objective must be one of regression, binary, multiclass, poisson, gamma, tweedie, huber, "
                        "l1, quantile, lambdarank, custom, multiclassova, cross_entropy, mape, fair, cox");
  if (c->goss != 0 && c->goss != 1) return hb_error_set(HB_ERR_INPUT, "goss must be TRUE or FALSE");
  if (c->rf != 0 && c->rf != 1) return hb_error_set(HB_ERR_INPUT, "rf must be 0 or 1");
  if (c->rf && !((c->bagging_freq > 0 && c->bagging_fraction < 1.0) || c->feature_fraction < 1.0))
    return hb_error_set(HB_ERR_INPUT, "a random forest needs bagging (bagging_fraction < 1, bagging_freq > 0) or "
                        "feature_fraction < 1: otherwise its trees are all the same");
  if (c->rf && c->goss) return hb_error_set(HB_ERR_INPUT, "a random forest samples rows by bagging, not goss");
  if (!(c->top_rate > 0.0 && c->top_rate < 1.0))
    return hb_error_set(HB_ERR_INPUT, "top_rate must be above 0 and below 1");
  if (!(c->other_rate > 0.0 && c->other_rate <= 1.0) || !(c->top_rate + c->other_rate <= 1.0))
    return hb_error_set(HB_ERR_INPUT, "other_rate must be above 0 and top_rate + other_rate at most 1");
  if (c->goss && c->bagging_freq > 0 && c->bagging_fraction < 1.0)
    return hb_error_set(HB_ERR_INPUT, "goss and bagging both choose each tree's rows: use one of them");
  if (!(c->quantile_alpha > 0.0 && c->quantile_alpha < 1.0))
    return hb_error_set(HB_ERR_INPUT, "quantile_alpha must be above 0 and below 1");
  if (!(c->tweedie_variance_power > 1.0 && c->tweedie_variance_power < 2.0))
    return hb_error_set(HB_ERR_INPUT, "tweedie_variance_power must be above 1 and below 2");
  if (!(c->huber_delta > 0.0) || !isfinite(c->huber_delta))
    return hb_error_set(HB_ERR_INPUT, "huber_delta must be positive and finite");
  if (c->lambdarank_truncation_level < 1)
    return hb_error_set(HB_ERR_INPUT, "lambdarank_truncation_level must be >= 1 (got %d)",
                        c->lambdarank_truncation_level);
  if (c->lambdarank_norm != 0 && c->lambdarank_norm != 1)
    return hb_error_set(HB_ERR_INPUT, "lambdarank_norm must be TRUE or FALSE");
  if (c->num_label_gain < 1 || c->num_label_gain > HB_RANK_MAX_GAIN)
    return hb_error_set(HB_ERR_INPUT, "label_gain must have 1 to %d values (got %d)", HB_RANK_MAX_GAIN,
                        c->num_label_gain);
  for (int i = 0; i < c->num_label_gain; i++)
    if (!nonneg(c->label_gain[i]) || (i > 0 && c->label_gain[i] < c->label_gain[i - 1]))
      return hb_error_set(HB_ERR_INPUT, "label_gain must be finite, >= 0 and non-decreasing (value %d is %g)",
                          i + 1, c->label_gain[i]);
  if (!(c->fair_c > 0.0) || !isfinite(c->fair_c))
    return hb_error_set(HB_ERR_INPUT, "fair_c must be positive and finite");
  if (!nonneg(c->poisson_max_delta_step))
    return hb_error_set(HB_ERR_INPUT, "poisson_max_delta_step must be >= 0 and finite");
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
  if (!(c->learning_rate > 0.0) || !isfinite(c->learning_rate))
    return hb_error_set(HB_ERR_INPUT, "learning_rate must be positive and finite");
  if (c->num_leaves < 2 || c->num_leaves > 131072)
    return hb_error_set(HB_ERR_INPUT, "num_leaves must be between 2 and 131072 (got %d)", c->num_leaves);
  if (c->min_data_in_leaf < 0)
    return hb_error_set(HB_ERR_INPUT, "min_data_in_leaf must be >= 0 (got %d)", c->min_data_in_leaf);
  if (!nonneg(c->min_sum_hessian_in_leaf))
    return hb_error_set(HB_ERR_INPUT, "min_sum_hessian_in_leaf must be >= 0 and finite");
  if (!nonneg(c->lambda_l1))
    return hb_error_set(HB_ERR_INPUT, "lambda_l1 must be >= 0 and finite");
  if (!nonneg(c->lambda_l2))
    return hb_error_set(HB_ERR_INPUT, "lambda_l2 must be >= 0 and finite");
  if (!nonneg(c->min_gain_to_split))
    return hb_error_set(HB_ERR_INPUT, "min_gain_to_split must be >= 0 and finite");
  if (c->max_cat_threshold < 1)
    return hb_error_set(HB_ERR_INPUT, "max_cat_threshold must be >= 1 (got %d)", c->max_cat_threshold);
  if (c->max_cat_to_onehot < 1)
    return hb_error_set(HB_ERR_INPUT, "max_cat_to_onehot must be >= 1 (got %d)", c->max_cat_to_onehot);
  if (!nonneg(c->cat_smooth))
    return hb_error_set(HB_ERR_INPUT, "cat_smooth must be >= 0 and finite");
  if (!nonneg(c->cat_l2))
    return hb_error_set(HB_ERR_INPUT, "cat_l2 must be >= 0 and finite");
  if (c->min_data_per_group < 1)
    return hb_error_set(HB_ERR_INPUT, "min_data_per_group must be >= 1 (got %d)", c->min_data_per_group);
  if (!fraction(c->bagging_fraction))
    return hb_error_set(HB_ERR_INPUT, "bagging_fraction must be in (0, 1]");
  if (c->bagging_freq < 0)
    return hb_error_set(HB_ERR_INPUT, "bagging_freq must be >= 0 (got %d)", c->bagging_freq);
  if (!fraction(c->feature_fraction))
    return hb_error_set(HB_ERR_INPUT, "feature_fraction must be in (0, 1]");
  if (c->boost_from_average != 0 && c->boost_from_average != 1)
    return hb_error_set(HB_ERR_INPUT, "boost_from_average must be TRUE or FALSE");
  if (c->quantized != 0 && c->quantized != 1)
    return hb_error_set(HB_ERR_INPUT, "quantized must be TRUE or FALSE");
  if (c->grad_bits < 2 || c->grad_bits > 8)
    return hb_error_set(HB_ERR_INPUT, "grad_bits must be in 2..8 (got %d)", c->grad_bits);
  if (c->stochastic_rounding != 0 && c->stochastic_rounding != 1)
    return hb_error_set(HB_ERR_INPUT, "stochastic_rounding must be TRUE or FALSE");
  if (c->refit_leaves != 0 && c->refit_leaves != 1)
    return hb_error_set(HB_ERR_INPUT, "refit_leaves must be TRUE or FALSE");
  if (c->enable_bundle != 0 && c->enable_bundle != 1)
    return hb_error_set(HB_ERR_INPUT, "enable_bundle must be TRUE or FALSE");
  if (!(c->max_conflict_rate >= 0.0 && c->max_conflict_rate < 1.0))
    return hb_error_set(HB_ERR_INPUT, "max_conflict_rate must be >= 0 and below 1");
  if (c->device != HB_DEVICE_CPU && c->device != HB_DEVICE_CUDA)
    return hb_error_set(HB_ERR_INPUT, "device must be \"cpu\" or \"cuda\"");
  /* max_depth <= 0 means no limit and nthreads <= 0 the default, so every int is valid;
     every uint64 is a valid seed. */
  return HB_OK;
}
