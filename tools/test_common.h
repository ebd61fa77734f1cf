/* test_common.h: what the engine tests of the CPU learner share (included
 * by tools/test_*.c, not a test itself): test_check.h's CHECK, naive
 * histograms to compare kernels with, and tree equality. */
#ifndef HB_TEST_COMMON_H
#define HB_TEST_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rng.h"
#include "dataset.h"
#include "error.h"
#include "grow.h"
#include "hist.h"
#include "hist_quant.h"
#include "tree.h"
#include "test_engine.h"

#include "test_check.h"

/* n random (gradient, hessian) pairs, gradients in [-0.5, 0.5), hessians in
 * [0.05, 1.05), from key `key` (malloc'd). */
static inline double *random_gh(int n, uint64_t key) {
  double *gh = malloc(2 * sizeof(double) * (size_t)n);
  for (int i = 0; gh && i < n; i++) {
    gh[2 * i] = hb_rng_unif(key, 1, 0, (uint64_t)i) - 0.5;
    gh[2 * i + 1] = 0.05 + hb_rng_unif(key, 1, 1, (uint64_t)i);
  }
  return gh;
}

/* Every other feature and every `every`-th from 1 more (malloc'd flags):
 * a sample whose tiles are not contiguous. */
static inline uint8_t *some_features(const hb_dataset_t *d, int every) {
  uint8_t *use = malloc((size_t)d->nfeat);
  for (int f = 0; use && f < d->nfeat; f++) use[f] = (uint8_t)(f % 2 == 0 || f % every == 1);
  return use;
}

/* The training dataset of `in` with the default binning on two threads
 * (NULL, message printed, on failure). */
static inline hb_dataset_t *bin_input(const hb_input_t *in) {
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.nthreads = 2;
  hb_dataset_t *d = NULL;
  if (hb_dataset_create(in, &bp, NULL, &d) != HB_OK) printf("dataset: %s\n", hb_error_message());
  return d;
}

/* Rows 0..n-1 into rows[], each kept with probability frac (all when frac
 * is 1) by draws keyed (key, k); returns how many (increasing). */
static inline int pick_rows(int n, double frac, uint64_t key, uint64_t k, int *rows) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (frac == 1.0 || hb_rng_unif(key, 2, k, (uint64_t)i) < frac) rows[m++] = i;
  return m;
}

/* The histogram of rows rows[0..m) (NULL: 0..m-1) summed row by row from
 * each feature's bins, for the features with active[f] (NULL: all). */
static inline void naive_hist(const hb_dataset_t *d, const int *rows, int m, const double *gh, const uint8_t *active,
                       hb_histbin_t *out) {
  memset(out, 0, sizeof(hb_histbin_t) * (size_t)d->total_bins);
  for (int k = 0; k < m; k++) {
    int r = rows ? rows[k] : k;
    for (int f = 0; f < d->nfeat; f++) {
      if (active && !active[f]) continue;
      hb_histbin_t *b = out + d->hist_offset[f] + test_dataset_bin(d, f, r);
      b->g += gh[2 * r];
      b->h += gh[2 * r + 1];
    }
  }
}

/* The same for packed quantized values q (rows given). */
static inline void naive_qhist(const hb_dataset_t *d, const int *rows, int m, const int32_t *q, const uint8_t *active,
                        hb_qbin_t *out) {
  memset(out, 0, sizeof(hb_qbin_t) * (size_t)d->total_bins);
  for (int k = 0; k < m; k++) {
    int r = rows[k];
    for (int f = 0; f < d->nfeat; f++) {
      if (active && !active[f]) continue;
      hb_qbin_t *b = out + d->hist_offset[f] + test_dataset_bin(d, f, r);
      b->g += hb_qpack_g(q[r]);
      b->h += hb_qpack_h(q[r]);
    }
  }
}

/* Bins of active features where two integer histograms differ. */
static inline int qhist_differ(const hb_dataset_t *d, const uint8_t *active, const hb_qbin_t *a, const hb_qbin_t *b) {
  int n = 0;
  for (int f = 0; f < d->nfeat; f++) {
    if (active && !active[f]) continue;
    for (int k = d->hist_offset[f]; k < d->hist_offset[f + 1]; k++) n += a[k].g != b[k].g || a[k].h != b[k].h;
  }
  return n;
}

/* hb_qhist_build with rb on 1-3 threads (stale bins in got first) equals
 * `want` and the naive sums `naive` in every active bin (CHECKed, `what`
 * naming the row block). */
static inline void check_qhist_threads(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int m,
                                const int32_t *q, int64_t G, int64_t H, const uint8_t *active, const hb_qbin_t *want,
                                const hb_qbin_t *naive, hb_qbin_t *got, const char *what) {
  for (int th = 1; th <= 3; th++) {
    memset(got, 0x7f, sizeof(hb_qbin_t) * (size_t)d->total_bins);
    hb_qhist_build(d, rb, rows, m, q, 100, G, H, active, got, th);
    int differ = qhist_differ(d, active, got, want), off = qhist_differ(d, active, got, naive);
    CHECK(differ == 0 && off == 0, "%s quantized histogram: %d bins differ from the reference, %d from the plain "
          "sums (rows %d, active %d, %d threads)", what, differ, off, m, active != NULL, th);
  }
}

/* The same splits, gains, leaf values and counts. */
static inline int same_tree(const hb_tree_t *a, const hb_tree_t *b) {
  if (a->num_leaves != b->num_leaves) return 0;
  for (int k = 0; k < a->num_leaves - 1; k++)
    if (a->split_feature[k] != b->split_feature[k] || a->threshold_bin[k] != b->threshold_bin[k] ||
        a->split_gain[k] != b->split_gain[k] || a->decision[k] != b->decision[k] ||
        a->left[k] != b->left[k] || a->right[k] != b->right[k]) return 0;
  for (int l = 0; l < a->num_leaves; l++)
    if (a->leaf_value[l] != b->leaf_value[l] || a->leaf_count[l] != b->leaf_count[l]) return 0;
  return 1;
}

/* Grow one tree with cfg from gh over the bag (NULL: every one of d's
 * rows) and the active features; leaf_of[r] = row r's leaf (-1: none, -2:
 * several), and with leafrows each leaf's rows, leaf after leaf. NULL on
 * failure (message printed). */
static inline hb_tree_t *grow_tree(const hb_dataset_t *d, const hb_config_t *cfg, const double *gh, const int *bag,
                            int bag_n, const uint8_t *active, int *leaf_of, int *leafrows) {
  hb_grow_ws_t *ws = hb_grow_ws_create(cfg, d);
  hb_tree_t *t = hb_tree_create(cfg->num_leaves);
  if (!ws || !t || hb_grow_tree(ws, cfg, d, gh, NULL, bag, bag_n, active, t) != HB_OK) {
    printf("grow: %s\n", hb_error_message());
    hb_tree_free(t);
    t = NULL;
  } else {
    for (int i = 0; i < d->nrow; i++) leaf_of[i] = -1;
    int at = 0;
    for (int l = 0; l < t->num_leaves; l++) {
      int cnt;
      const int *r = hb_grow_leaf_rows(ws, l, &cnt);
      if (leafrows) memcpy(leafrows + at, r, sizeof(int) * (size_t)cnt);
      at += cnt;
      for (int k = 0; k < cnt; k++) leaf_of[r[k]] = leaf_of[r[k]] == -1 ? l : -2;
    }
  }
  hb_grow_ws_free(ws);
  return t;
}

#endif
