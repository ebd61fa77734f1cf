/* metric.h: evaluation metrics on raw scores. Sums use a fixed chunking so the
 * value does not depend on the thread count. */
#ifndef HB_METRIC_H
#define HB_METRIC_H

#include "config.h"

/* poisson, gamma, tweedie, huber and quantile (the pinball loss at
 * quantile_alpha): the mean loss of those objectives
 * (objective_rules.h), LightGBM's definitions. */
enum {  /* codes.def */
#define HB_METRIC(ID, name, higher_better) HB_METRIC_##ID,
#include "codes.def"
  HB_METRIC_COUNT
};
/* xentropy: LightGBM's cross_entropy, the mean of -y log p - (1 - y) log(1 - p)
 * (p the sigmoid, its logs floored at log(1e-12)), labels in [0, 1]; mape:
 * |y - s| / max(1, |y|); fair: c^2 (|r|/c - log(1 + |r|/c)) at fair_c;
 * average_precision: LightGBM's, the sum over distinct scores (highest
 * first) of the positives' weight there times the precision at and above
 * it, over the positives' weight (1 with no positives or no negatives);
 * cox_nloglik: xgboost's, the negative log partial likelihood per event
 * (objective.h, hb_objective_cox_nloglik). multi_logloss of a
 * multiclassova model takes each class's sigmoid, as LightGBM does. */
/* HB_METRIC_NDCG (NDCG@k) and HB_METRIC_MAP (MAP@k) need the rows' queries:
 * hb_booster_eval_at() computes them with rank.h; hb_metric_eval() refuses them. */

/* 1 when a larger value is better (auc, ndcg, map, average_precision), else 0. */
int hb_metric_higher_better(int metric);
/* Metric of raw scores (column-major n x num_class: regression scores,
 * binary log-odds, multiclass scores before softmax) against labels
 * (classes as 0..K-1), optionally weighted. cfg (NULL: defaults) gives the
 * objective, whose response rmse and mae compare with the labels (exp(score)
 * for poisson, gamma and tweedie), and the losses' parameters. Returns HB_OK
 * or HB_ERR_INPUT. */
int hb_metric_eval(int metric, const hb_config_t *cfg, int n, int num_class, const double *score,
                   const double *label, const double *weight, int nthreads, double *out);

#endif
