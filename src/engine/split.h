/* split.h: the best split of one leaf from its histogram. One gain formula,
 * one missing-value rule and one categorical rule (see the top of split.c). */
#ifndef HB_SPLIT_H
#define HB_SPLIT_H
#include <math.h>
#include <stdint.h>
#include "config.h"
#include "dataset.h"
#include "hist.h"

typedef struct {
  int feature;          /* -1: no valid split */
  double gain;
  int is_cat;
  int threshold_bin;    /* numeric: value bins <= threshold_bin go left */
  int default_left;     /* the missing bin goes left */
  uint32_t left_bins[HB_MAX_NUM_BIN / 32];  /* bins going left, the missing bin included when default_left */
  double left_g, left_h, right_g, right_h;
  int left_n, right_n;
} hb_split_t;

/* Sums of one leaf. */
typedef struct { double g, h; int n; } hb_leafsum_t;

/* -T(G)/(H + l2) with T the L1 soft threshold: the unshrunk leaf output. */
double hb_split_leaf_output(const hb_config_t *cfg, double g, double h);

/* Monotone constraints on one leaf's split (LightGBM's "basic" method,
 * split_rules.h: hb_rule_split_gain_bounded): the children's outputs
 * (unshrunk) stay within [lo, hi], and a numeric split on feature f with
 * mono[f] = 1 (-1) must not give the left side a larger (smaller) output
 * than the right. mono NULL: no feature is constrained. Leaves with
 * infinite bounds scan unconstrained features with the plain gains, bit for
 * bit and as fast as without constraints. */
typedef struct {
  double lo, hi;
  const int8_t *mono;   /* per feature of the dataset, or NULL */
  int bounded;          /* lo or hi is finite */
} hb_split_con_t;

/* {lo, hi, mono} with `bounded` set from the bounds. */
static inline hb_split_con_t hb_split_con_make(double lo, double hi, const int8_t *mono) {
  hb_split_con_t k;
  k.lo = lo;
  k.hi = hi;
  k.mono = mono;
  k.bounded = lo > -HUGE_VAL || hi < HUGE_VAL;
  return k;
}

/* What the scan of one leaf needs besides its histogram (set by
 * hb_split_leaf_init; read-only afterwards, so threads may share it). */
typedef struct {
  const hb_config_t *cfg;
  hb_leafsum_t tot;
  int splittable;       /* 0: no split of this leaf passes the constraints */
  double cnt_factor;    /* estimated rows per unit of hessian in this leaf */
  double parent_gain;   /* with lambda_l2 */
  double min_gain;
  hb_split_con_t con;   /* none unless the caller sets it after init */
  /* max_delta_step / path_smooth (hb_split_leaf_ext): gains from capped,
   * smoothed outputs (split_rules.h: hb_rule_split_gain_ext) */
  int ext;
  double parent_out;    /* the leaf's own output, unshrunk: its children smooth towards it */
  /* extra_trees (hb_split_leaf_extra): each feature's one candidate threshold
   * drawn from hb_rng_key_tail(rkey, feature) */
  int extra;
  uint64_t rkey;
} hb_split_leaf_t;

void hb_split_leaf_init(hb_split_leaf_t *c, const hb_config_t *cfg, hb_leafsum_t tot);
/* With cfg's max_delta_step or path_smooth > 0: the leaf's output (unshrunk)
 * is leaf_out, and gains are taken from capped, smoothed outputs. */
void hb_split_leaf_ext(hb_split_leaf_t *c, double leaf_out);
/* Best split of the leaf on feature f alone (f's bins at hist +
 * hist_offset[f]) into *best, which the caller set to feature = -1, gain =
 * -INFINITY or to the best of the features before f: *best changes only
 * when f's best gain is strictly larger, so calling this for every feature
 * in increasing order gives the leaf's best split (grow.c's scans merge each
 * feature's best alone in feature order, the same winner). */
void hb_split_feature(const hb_split_leaf_t *c, const hb_dataset_t *d, const hb_histbin_t *hist,
                      int f, hb_split_t *best);

/* A categorical bin's key (hb_rule_cat_key) for the sorted scan of its
 * levels; the full-precision and the quantized scans share the order. */
typedef struct {
  double key;
  int bin;
} hb_cat_key_t;

/* Sort keys[0..n) (n <= HB_MAX_NUM_BIN) by key, ties by bin: the order
 * qsort with that comparison gave, without its indirect calls (this runs
 * for every categorical feature of every leaf scanned). */
void hb_cat_sort(hb_cat_key_t *keys, int n);
/* What a scan from both ends needs of the sorted order, at less cost than
 * hb_cat_sort when k is small: keys[0, k) and keys[n - k, n) end as they
 * would in the sorted array (each in order); the middle in some order. */
void hb_cat_sort_ends(hb_cat_key_t *keys, int n, int k);


/* out[i] = hb_rule_split_gain(gl[i], hl[i], nl[i], g, h, n, ...) for
 * i < m (split_rules.h, with cfg's l1, min_data_in_leaf and
 * min_sum_hessian_in_leaf, and this l2, parent gain and min_gain), bit for
 * bit; two at a time with SSE2 when l1 is 0, so that two candidates share
 * each division (the divider bounds a threshold scan). */
void hb_split_gains(const hb_config_t *cfg, const double *gl, const double *hl, const int *nl, int m, double g,
                    double h, int n, double l2, double parent_gain, double min_gain, double *out);

/* hb_split_gains for a scan under constraints con of a feature whose
 * monotone constraint is mono: hb_split_gains itself when mono is 0 and con
 * is not bounded, else hb_rule_split_gain_bounded one candidate at a time. */
void hb_split_gains_con(const hb_config_t *cfg, const double *gl, const double *hl, const int *nl, int m,
                        double g, double h, int n, double l2, double parent_gain, double min_gain,
                        const hb_split_con_t *con, int mono, double *out);

/* Set bits 0..last of bits (HB_MAX_NUM_BIN of them), a word at a time. */
static inline void hb_split_bits_upto(uint32_t *bits, int last) {
  int n = last + 1, w = 0;
  for (; 32 * (w + 1) <= n; w++) bits[w] = 0xffffffffu;
  if (n > 32 * w) bits[w] |= (1u << (n - 32 * w)) - 1u;
}

/* 1 when bin `bin` goes left under split s. */
static inline int hb_split_bin_left(const hb_split_t *s, int bin) {
  return (s->left_bins[bin >> 5] >> (bin & 31)) & 1u;
}

#endif
