/* predict.h: prediction from raw values (no bins), so a model predicts on any
 * data with the training columns, dense or sparse. */
#ifndef HB_PREDICT_H
#define HB_PREDICT_H
#include "model.h"
#include "dataset.h"

enum { HB_PRED_RAW = 0, HB_PRED_RESPONSE = 1, HB_PRED_LEAF = 2 };

/* Predict in->nrow rows (in->ncol must equal the model's nfeat, columns in
 * training order, factor columns as level codes of the training levels).
 * Uses iterations [start_iter, start_iter + num_iter); num_iter <= 0 means all
 * remaining. Output is column-major:
 *   RAW, RESPONSE: nrow x num_class (response: identity, sigmoid or softmax);
 *   LEAF:          nrow x (num_iter * trees_per_iter) leaf indices (0-based).
 * Parallel over rows with nthreads threads. */
int hb_predict(const hb_model_t *m, const hb_input_t *in, int start_iter, int num_iter,
               int type, int nthreads, double *out);

#endif
