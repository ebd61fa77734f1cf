/* predict.h: prediction from raw values (no bins), so a model predicts on any
 * data with the training columns, dense or sparse. */
#ifndef HB_PREDICT_H
#define HB_PREDICT_H
#include "model.h"
#include "dataset.h"

enum { HB_PRED_RAW = 0, HB_PRED_RESPONSE = 1, HB_PRED_LEAF = 2, HB_PRED_CONTRIB = 3, HB_PRED_INTERACTION = 4 };

/* Predict in->nrow rows (in->ncol must equal the model's nfeat, columns in
 * training order, factor columns as level codes of the training levels).
 * Uses iterations [start_iter, start_iter + num_iter); num_iter <= 0 means all
 * remaining. Output is column-major:
 *   RAW, RESPONSE: nrow x num_class (response: identity, sigmoid or softmax);
 *   LEAF:          nrow x (num_iter * trees_per_iter) leaf indices (0-based);
 *   CONTRIB:       nrow x (num_class * (ncol + 1)): per class, each feature's
 *                  contribution to the raw score and last the bias (shap.h),
 *                  summing to the RAW prediction;
 *   INTERACTION:   nrow x (num_class * (ncol + 1)^2): per class, the
 *                  (ncol + 1) x (ncol + 1) SHAP interaction values
 *                  (hb_shap_interaction_row), entry (i, j) at column
 *                  j (ncol + 1) + i of the class's block; row i sums to
 *                  CONTRIB's value i.
 * Parallel over rows with nthreads threads, a group of rows at a time;
 * interrupts are checked between groups (interrupt.h: HB_ERR_INTERRUPT, out
 * then partly written). */
int hb_predict(const hb_model_t *m, const hb_input_t *in, int start_iter, int num_iter,
               int type, int nthreads, double *out);

/* hb_predict on `device` (HB_DEVICE_CPU: hb_predict itself; HB_DEVICE_CUDA:
 * the GPU, cuda.h). On the GPU, RAW, RESPONSE, LEAF and CONTRIB
 * (INTERACTION is HB_ERR_INPUT): the same values as the CPU's bit for bit
 * (each row sums its trees in the same order from the same start; the link
 * is the CPU's, on the host; contributions sum each tree's leaf paths with
 * the CPU's code, shap_rules.h, and add the trees in the CPU's order, the
 * expected values, offsets and a forest's
 * averaging added on the host as hb_predict adds them), dense or sparse
 * input (sparse rows go up as CSR, never densified). Rows go through the device in
 * blocks, interrupts checked between them. A device failure (out of its
 * memory: HB_ERR_NOMEM, else HB_ERR_INTERNAL; no GPU or a build without
 * CUDA: HB_ERR_INPUT) leaves out partly written. */
int hb_predict_device(const hb_model_t *m, const hb_input_t *in, int start_iter, int num_iter, int type,
                      int nthreads, int device, double *out);

#endif
