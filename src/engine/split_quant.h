/* split_quant.h: the best split of one leaf from an integer histogram
 * (quantized training). The same candidates, order, gains and tie rules as
 * the GPU's search (src/cuda/split.cu), so that quantized trees are
 * identical on the CPU and the GPU: prefix sums over integers (exact),
 * converted to doubles once with the quantization scales, evaluated with
 * split_rules.h.
 *
 * A bin holds the integer sums of its rows' quantized gradients and
 * hessians (the accumulation kernels pack them into 32-bit words while they
 * sum, hist_quant.c; the bins themselves are pairs, which no number of rows
 * overflows). */
#ifndef HB_SPLIT_QUANT_H
#define HB_SPLIT_QUANT_H
#include <stdint.h>
#include "config.h"
#include "dataset.h"
#include "split.h"

/* One bin of an integer histogram. */
typedef struct {
  int64_t g, h;
} hb_qbin_t;

/* What the scan of one leaf needs: its integer totals, its exact row count,
 * the scales. */
typedef struct {
  const hb_config_t *cfg;
  int64_t G, H;          /* the leaf's quantized sums */
  int n;                 /* its rows */
  double sg, sh;         /* value of one quantized unit */
  int splittable;
  double Gd, Hd, cnt_factor, parent_gain, min_gain;
  hb_split_con_t con;    /* monotone constraints (split.h): none unless the caller sets them after init */
} hb_qsplit_leaf_t;

void hb_qsplit_leaf_init(hb_qsplit_leaf_t *c, const hb_config_t *cfg, int64_t G, int64_t H, int n, double sg,
                         double sh);

/* Best split of the leaf on feature f (its bins at hist + hist_offset[f])
 * into *best when strictly better than what it holds (call for features in
 * increasing order, *best starting with feature = -1, gain = -INFINITY).
 * The split's sums are the integer sums times the scales; lg, lh (may be
 * NULL) receive the left child's integer sums. */
void hb_qsplit_feature(const hb_qsplit_leaf_t *c, const hb_dataset_t *d, const hb_qbin_t *hist, int f,
                       hb_split_t *best, int64_t *lg, int64_t *lh);

#endif
