/* refit.h: new leaf values for a model's trees from other data, the trees'
 * structure kept (LightGBM's refit, XGBoost's process_type = "update" with
 * the "refresh" updater). */
#ifndef HB_REFIT_H
#define HB_REFIT_H
#include "model.h"

typedef struct {
  double decay_rate;  /* new value = decay_rate x old + (1 - decay_rate) x the refitted one, in [0, 1] */
  double lambda_l1, lambda_l2, cat_l2;  /* the leaf output's penalties (cat_l2 below many-vs-many splits) */
  int nthreads;
} hb_refit_params_t;

/* Refit every tree of m in place, iteration by iteration as training grew
 * them: the gradients of n rows (labels `label`, weights `weight` or NULL)
 * at the running raw score (m's starting scores plus `offset`, n x K
 * column-major or NULL, plus the refitted trees before), summed over the
 * rows of each leaf (leaf: n x num_trees, column-major, 0-based leaf of each
 * row in each tree), give the leaf's output -T(G) / (H + l2) times the
 * learning rate (absolute error and quantile: the learning rate times the
 * weighted quantile of the leaf's residuals, as in training); a leaf no row
 * reaches gets 0 before the decay (as LightGBM and XGBoost). Internal nodes
 * get their values the same way from their leaves' sums; every node's
 * hessian sum and row count become the new data's (the covers that
 * contributions weigh by). A random forest refits every tree at the starting
 * score. Not for lambdarank or custom objectives (HB_ERR_INPUT). On failure
 * (HB_ERR_INPUT, HB_ERR_NOMEM, HB_ERR_INTERRUPT) m may be partly refitted:
 * callers refit a copy. */
int hb_refit_model(hb_model_t *m, int n, const int *leaf, const double *label, const double *weight,
                   const double *offset, const hb_refit_params_t *p);

#endif
