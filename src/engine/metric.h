/* metric.h: evaluation metrics on raw scores. Sums use a fixed chunking so the
 * value does not depend on the thread count. */
#ifndef HB_METRIC_H
#define HB_METRIC_H

enum {
  HB_METRIC_RMSE = 0, HB_METRIC_MAE = 1, HB_METRIC_LOGLOSS = 2, HB_METRIC_AUC = 3,
  HB_METRIC_ERROR = 4, HB_METRIC_MULTI_LOGLOSS = 5, HB_METRIC_MULTI_ERROR = 6
};

/* 1 when a larger value is better (auc), else 0. */
int hb_metric_higher_better(int metric);
/* Metric of raw scores (column-major n x num_class: regression scores,
 * binary log-odds, multiclass scores before softmax) against labels
 * (classes as 0..K-1), optionally weighted. Returns HB_OK or HB_ERR_INPUT. */
int hb_metric_eval(int metric, int n, int num_class, const double *score,
                   const double *label, const double *weight, int nthreads, double *out);

#endif
