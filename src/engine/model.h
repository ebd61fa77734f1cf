/* model.h: a trained model: what prediction, saving and inspection need, and
 * nothing of the training data. The booster owns one while it trains. */
#ifndef HB_MODEL_H
#define HB_MODEL_H
#include "config.h"
#include "tree.h"

/* Names, types and factor levels of the model's features, in training order. */
typedef struct {
  int nfeat;
  char **names;        /* nfeat UTF-8 strings */
  int *types;          /* HB_FEAT_* */
  int *nlevels;        /* categorical: number of levels; 0 for numeric */
  char ***levels;      /* categorical: nlevels strings; NULL for numeric */
  int *monotone;       /* nfeat monotone constraints (-1, 0, 1; numeric features only), or NULL: none */
} hb_schema_t;

void hb_schema_init(hb_schema_t *s);
void hb_schema_clear(hb_schema_t *s);
int hb_schema_copy(const hb_schema_t *src, hb_schema_t *dst);

typedef struct {
  hb_config_t config;        /* the parameters it was trained with */
  hb_schema_t schema;
  int num_class;             /* 1 for regression and binary */
  int trees_per_iter;        /* num_class */
  double *init_score;        /* trees_per_iter starting scores */
  int num_trees;
  int cap_trees;
  hb_tree_t **trees;         /* num_trees, iteration-major: tree k of iteration i is trees[i*trees_per_iter + k] */
  int best_iteration;        /* 1-based; 0 when none was chosen */
  int nlabel_levels;         /* classification: the class labels of y, in class order */
  char **label_levels;
  int nmeta;                 /* free-form key/value pairs stored with the model (R's eval log, ...) */
  char **meta_keys;
  char **meta_values;
} hb_model_t;

hb_model_t *hb_model_create(void);
void hb_model_free(hb_model_t *m);
/* Take ownership of t and append it. */
int hb_model_push_tree(hb_model_t *m, hb_tree_t *t);
/* Set (replace) a key/value pair; both are copied. */
int hb_model_set_meta(hb_model_t *m, const char *key, const char *value);
int hb_model_set_label_levels(hb_model_t *m, int n, const char *const *levels);
/* Continue base: put the trees of its first base_iter iterations in front
 * of m's (base is left without trees, m owns them) and give m base's
 * starting scores, so that m predicts base's raw score at base_iter
 * iterations plus its own trees (m was trained from those predictions).
 * HB_ERR_INPUT, with m unchanged, unless both have the same objective,
 * classes, features and monotone constraints and neither is a random
 * forest. */
int hb_model_prepend(hb_model_t *m, hb_model_t *base, int base_iter);
/* Number of complete iterations. */
int hb_model_num_iterations(const hb_model_t *m);

#endif
