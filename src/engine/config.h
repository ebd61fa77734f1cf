/* config.h: everything that shapes training, with LightGBM-like defaults. */
#ifndef HB_CONFIG_H
#define HB_CONFIG_H
#include <stdint.h>

/* Objectives; all but multiclass and multiclassova (and a custom objective
 * given num_class > 1) have one score a row. Poisson, gamma and Tweedie
 * model the log of the mean (the response is exp(score)); Cox the log of
 * the hazard ratio (the response is the risk exp(score)). A custom
 * objective's gradients come from the caller each round
 * (hb_booster_set_gradients); its response is the raw score.
 * cross_entropy is logistic on labels in [0, 1]; multiclassova one logistic
 * score per class (one-vs-all, the response each class's sigmoid). */
enum {
#define HB_OBJECTIVE(ID, name, task) HB_OBJ_##ID,
#include "codes.def"
  HB_OBJ_COUNT
};
/* Scores a row of an objective (its trees a round). */
#define HB_OBJ_NSCORE(c) \
  (((c)->objective == HB_OBJ_MULTICLASS || (c)->objective == HB_OBJ_MULTICLASSOVA || \
    (c)->objective == HB_OBJ_CUSTOM) ? (c)->num_class : 1)
/* 1 when the objective's response is the sigmoid of the score. */
#define HB_OBJ_SIGMOID(o) ((o) == HB_OBJ_BINARY || (o) == HB_OBJ_XENTROPY || (o) == HB_OBJ_MULTICLASSOVA)
/* Most relevance grades a ranking model's label_gain can list (grades 0..63). */
#define HB_RANK_MAX_GAIN 64
/* 1 when the objective refits each new leaf to a quantile of its rows'
 * residuals (absolute error: the median; quantile: quantile_alpha; mape:
 * the median weighted by 1 / max(1, |label|)). */
#define HB_OBJ_RENEWS(o) ((o) == HB_OBJ_L1 || (o) == HB_OBJ_QUANTILE || (o) == HB_OBJ_MAPE)
/* 1 when the objective's response is exp(score). */
#define HB_OBJ_LOG_LINK(o) ((o) == HB_OBJ_POISSON || (o) == HB_OBJ_GAMMA || (o) == HB_OBJ_TWEEDIE)
enum { HB_DEVICE_CPU = 0, HB_DEVICE_CUDA = 1 };

/* One field per parameter of params.def, in its order (HB_PARAM's comment says what each type
 * becomes); label_gain brings its count num_label_gain. Each field's meaning, default and range
 * are in params.def. */
typedef struct {
#define HB_CFG_FIELD_INT(name) int name;
#define HB_CFG_FIELD_DBL(name) double name;
#define HB_CFG_FIELD_FLAG(name) int name;
#define HB_CFG_FIELD_OBJ(name) int name;
#define HB_CFG_FIELD_DEV(name) int name;
#define HB_CFG_FIELD_U64(name) uint64_t name;
#define HB_CFG_FIELD_GAINS(name) int num_##name; double name[HB_RANK_MAX_GAIN];
#define HB_PARAM(name, type, def, lo, lo_open, hi, hi_open, store, gpu, r, aliases, doc) HB_CFG_FIELD_##type(name)
#define HB_RPARAM(name, aliases, doc)
#include "params.def"
#undef HB_PARAM
#undef HB_RPARAM
} hb_config_t;

/* params.def's `store` column as a code (HB_STORE_##store): -1 every model file has the key;
 * an objective: written for it or when changed; HB_OBJ_COUNT: when changed; -2: not stored. */
#define HB_STORE_ALWAYS (-1)
#define HB_STORE_CHANGED HB_OBJ_COUNT
#define HB_STORE_NO (-2)
#define HB_STORE_OBJ(x) HB_OBJ_##x

/* LightGBM's balanced bagging: a binary model whose pos_bagging_fraction or
 * neg_bagging_fraction is below 1 draws each class's rows at its own rate
 * (bagging_fraction is then not used). */
static inline int hb_config_balanced_bagging(const hb_config_t *c) {
  return c->objective == HB_OBJ_BINARY && (c->pos_bagging_fraction < 1.0 || c->neg_bagging_fraction < 1.0);
}

/* Whether rows are bagged: every bagging_freq rounds, at bagging_fraction
 * or at the balanced fractions. */
static inline int hb_config_bagging(const hb_config_t *c) {
  return c->bagging_freq > 0 && (c->bagging_fraction < 1.0 || hb_config_balanced_bagging(c));
}

/* A row's chance to be in the bag: its class's under balanced bagging
 * (label > 0: the positive class, as LightGBM tells it), else bagging_fraction. */
static inline double hb_config_bag_fraction(const hb_config_t *c, int balanced, double label) {
  return !balanced ? c->bagging_fraction : label > 0 ? c->pos_bagging_fraction : c->neg_bagging_fraction;
}

void hb_config_default(hb_config_t *cfg);
/* 0 when valid, else HB_ERR_INPUT with a message naming the parameter. */
int hb_config_check(const hb_config_t *cfg);

#endif
