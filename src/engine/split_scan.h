/* split_scan.h: the parts of a leaf's split search that the full-precision
 * scan (split.c, double sums) and the quantized one (split_quant.c, exact
 * integer sums turned into doubles with the tree's scales) share, written
 * once so that a fix to one cannot miss the other:
 *  - which threshold of a numeric feature wins, from the candidates' gains
 *    (hb_scan_numeric_pick), and its bins (hb_scan_numeric_bits);
 *  - the whole categorical scan (one-vs-rest, or the sorted levels' ends),
 *    a template that split.c and split_quant.c each expand once.
 * Internal to the CPU search: nothing in src/cuda includes it. */
#ifndef HB_SPLIT_SCAN_H
#define HB_SPLIT_SCAN_H
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "split.h"
#include "split_rules.h"

/* The largest of m and g[0 .. T - 1]; NaN gains never count (m, never NaN
 * here, is 0.0 or an earlier result). */
static inline double hb_scan_max_gain(const double *g, int T, double m) {
  int t = 0;
#if defined(__SSE2__)
  /* _mm_max_pd(a, b) is a > b ? a : b lane by lane, the comparison below */
  __m128d v0 = _mm_set1_pd(m), v1 = v0;
  for (; t + 4 <= T; t += 4) {
    v0 = _mm_max_pd(_mm_loadu_pd(g + t), v0);
    v1 = _mm_max_pd(_mm_loadu_pd(g + t + 2), v1);
  }
  double w[4];
  _mm_storeu_pd(w, v0);
  _mm_storeu_pd(w + 2, v1);
  for (int k = 0; k < 4; k++) m = w[k] > m ? w[k] : m;
#endif
  for (; t < T; t++) m = g[t] > m ? g[t] : m;
  return m;
}

/* The winner among a numeric feature's candidates, taken in LightGBM's two
 * scans (FeatureHistogram::FindBestThresholdSequentially). First from the
 * top: each threshold t < T (value bins <= t left) with the missing bin on
 * the left, gain gr[t], whose left rows are the leaf's n less the estimate
 * of the value bins right of t. Then, only for a feature with missing
 * values in training (gf != NULL: LightGBM's missing type NaN), from the
 * bottom: each threshold with the missing bin on the right, gain gf[t],
 * whose left rows are the estimate of the bins <= t; last every value
 * left, the missing bin alone right, gain g3, as threshold M - 1. The first
 * scan ends, where LightGBM's first bin is an empty zero bin, with the
 * missing bin alone on the left, gain gz (-1 elsewhere): the partition of
 * g3, taken as g3's (threshold M - 1, values left). The first scan keeps
 * the highest of equal gains; the second wins only with a strictly larger
 * gain, its lowest threshold first. Returns the winner's gain, <= 0 when
 * none is valid (valid gains are > 0); *bt its threshold, *kind 0 (gr), 1
 * (gf), 2 (g3) or 3 (gz). Found as the largest gains (no branch a
 * candidate: a scan's gains rise and fall, and a running comparison
 * mispredicted about half of this search's time), then the candidate equal
 * to them. */
static inline double hb_scan_numeric_pick(const double *gr, double gz, const double *gf, double g3, int T, int M,
                                          int *bt, int *kind) {
  double br = hb_scan_max_gain(gr, T, 0.0);
  double bf = gf ? hb_scan_max_gain(gf, T, 0.0) : 0.0;
  if (gf && g3 > bf) bf = g3;
  *bt = -1;
  *kind = 0;
  if (gz > br) {  /* the first scan's last: the missing values alone left */
    br = gz;
    if (!(bf > br)) {
      *bt = M - 1;
      *kind = 3;
      return gz;
    }
  }
  if (bf > br) {  /* the second scan's */
    *kind = 1;
    for (int t = 0; t < T; t++)
      if (gf[t] == bf) {
        *bt = t;
        return bf;
      }
    *bt = M - 1;
    *kind = 2;
    return bf;
  }
  if (!(br > 0.0)) return 0.0;
  for (int t = T - 1; t >= 0; t--)
    if (gr[t] == br) {
      *bt = t;
      return br;
    }
  return 0.0;  /* not reached: br is one of the gains */
}

/* The bins a numeric split sends left: values 0..bt, and the missing bin M
 * when dl. */
static inline void hb_scan_numeric_bits(uint32_t *bits, int bt, int dl, int M) {
  memset(bits, 0, sizeof(uint32_t) * (HB_MAX_NUM_BIN / 32));
  hb_split_bits_upto(bits, bt);
  if (dl) bits[M >> 5] |= 1u << (M & 31);
}

#endif /* HB_SPLIT_SCAN_H */

/* ------------------------------------------------------------------------
 * The categorical scan, a template: define these, then include this file
 * (once per source file; the macros are undefined at the end).
 *   SCAN_CAT_NAME          the function's name
 *   SCAN_CTX               the leaf's context type (fields cfg, cnt_factor,
 *                          parent_gain)
 *   SCAN_BIN, SCAN_SUM     a histogram bin (fields g, h) and a sum of bins:
 *                          double, or int64_t (exact integer sums) - the one
 *                          real difference of the two searches, with:
 *   SCAN_D_G(c, x), SCAN_D_H(c, x)
 *                          a sum as the double the rules take: x itself, or
 *                          x times the quantization scale
 *   SCAN_N(c), SCAN_HD(c)  the leaf's rows and hessian (double)
 *   SCAN_CAND(c, gl, hl, nl, l2)
 *                          the gain of a left side with sums gl, hl (SCAN_SUM)
 *                          and nl rows, factors taking no monotone constraint
 *   SCAN_EXTRA(c, f, n)    extra_trees' one candidate of n, or -1 (no draw:
 *                          every candidate is scanned)
 * The function: feature f's nb bins h (a categorical feature, split_rules.h's
 * rules, LightGBM's): each bin alone on the left for at most
 * max_cat_to_onehot bins, else the levels with at least cat_smooth rows
 * sorted by G / (H + cat_smooth) (ties by bin) and the first k from either
 * end, min_data_per_group rows between two candidates. Returns 1 with the
 * winner (the first of the largest gain, which is > 0) in *gain, its left
 * bins in bits, its left sums in *lg, *lh and its rows in *ln; 0: no valid
 * candidate. */
#if defined(SCAN_CAT_NAME)
static int SCAN_CAT_NAME(const SCAN_CTX *c, int f, int nb, const SCAN_BIN *h, uint32_t *bits, double *gain,
                         SCAN_SUM *lg, SCAN_SUM *lh, int *ln) {
  const hb_config_t *cfg = c->cfg;
  const int onehot = hb_rule_cat_onehot(nb, cfg->max_cat_to_onehot);
  double best_gain = 0.0;
  SCAN_SUM bgl = 0, bhl = 0;
  int bnl = 0, bk = 0, bdir = 0, used = 0;   /* the winner: bin bk (one-vs-rest), or the first / last bk of
                                                 the used sorted categories */
  hb_cat_key_t keys[HB_MAX_NUM_BIN];
  int cnt[HB_MAX_NUM_BIN];
  (void)f;
  for (int b = 0; b < nb; b++) cnt[b] = hb_rule_count(SCAN_D_H(c, h[b].h), c->cnt_factor);
  if (onehot) {  /* each bin alone on the left, lambda_l2 */
    int nonempty = 0, lowest = -1;
    for (int b = 0; b < nb; b++)
      if (cnt[b] > 0) { if (lowest < 0) lowest = b; nonempty++; }
    bk = -1;
    const int rb = SCAN_EXTRA(c, f, nb);  /* extra_trees: one bin of nb */
    for (int b = 0; b < nb; b++) {
      if (rb >= 0 && b != rb) continue;
      if (hb_rule_cat_onehot_seen(nonempty, lowest, b)) continue;
      double g = SCAN_CAND(c, h[b].g, h[b].h, cnt[b], cfg->lambda_l2);
      if (g > best_gain) { best_gain = g; bk = b; bgl = h[b].g; bhl = h[b].h; bnl = cnt[b]; }
    }
    if (bk < 0) return 0;
  } else {  /* many against many */
    uint8_t first[HB_MAX_NUM_BIN];  /* whether the first k + 1 were a candidate of the first end */
    int dropped = 0, used_rows = 0;
    for (int b = 0; b < nb; b++) {  /* without a branch: whether a bin is used is a coin flip in small leaves */
      const int ok = hb_rule_cat_used(cnt[b], cfg->cat_smooth);
      dropped += (cnt[b] > 0) & !ok;
      used_rows += cnt[b] & -ok;
      keys[used].key = hb_rule_cat_key(SCAN_D_G(c, h[b].g), SCAN_D_H(c, h[b].h), cfg->cat_smooth);
      keys[used].bin = b;
      used += ok;
    }
    if (used < 1 || !hb_rule_cat_can_split(used_rows, cfg->min_data_in_leaf, cfg->min_data_per_group)) return 0;
    const double l2c = cfg->lambda_l2 + cfg->cat_l2;
    const int kmax = hb_rule_cat_max_left(used, cfg->max_cat_threshold);
    hb_cat_sort_ends(keys, used, kmax);  /* the scans read the first and the last kmax */
    memset(first, 0, (size_t)kmax);
    /* extra_trees: only the first rk + 1 from either end (LightGBM's draw in [0, kmax - 1)) */
    const int rk = SCAN_EXTRA(c, f, kmax - 1);
    for (int dir = 0; dir < 2; dir++) {
      SCAN_SUM gl = 0, hl = 0;
      int nl = 0, group = 0;
      for (int k = 1; k <= kmax; k++) {
        int b = keys[dir == 0 ? k - 1 : used - k].bin;
        gl += h[b].g; hl += h[b].h; nl += cnt[b];
        int st = hb_rule_cat_step(cnt[b], nl, SCAN_D_H(c, hl), SCAN_N(c), SCAN_HD(c), &group, cfg->min_data_in_leaf,
                                  cfg->min_sum_hessian_in_leaf, cfg->min_data_per_group);
        if (dir == 0) first[k - 1] = st > 0;
        if (st < 0) break;
        if (st == 0) continue;
        if (rk >= 0 && k != rk + 1) continue;
        if (dir == 1 && rk < 0 && hb_rule_cat_seen(dropped, used, k, kmax, first)) continue;
        double g = SCAN_CAND(c, gl, hl, nl, l2c);
        if (g > best_gain) { best_gain = g; bk = k; bdir = dir; bgl = gl; bhl = hl; bnl = nl; }
      }
    }
    if (bk == 0) return 0;
  }
  memset(bits, 0, sizeof(uint32_t) * (HB_MAX_NUM_BIN / 32));
  if (onehot) bits[bk >> 5] |= 1u << (bk & 31);
  else
    for (int k = 0; k < bk; k++) {
      const int b = keys[bdir == 0 ? k : used - 1 - k].bin;
      bits[b >> 5] |= 1u << (b & 31);
    }
  *gain = best_gain;
  *lg = bgl;
  *lh = bhl;
  *ln = bnl;
  return 1;
}
#undef SCAN_CAT_NAME
#undef SCAN_CTX
#undef SCAN_BIN
#undef SCAN_SUM
#undef SCAN_D_G
#undef SCAN_D_H
#undef SCAN_N
#undef SCAN_HD
#undef SCAN_CAND
#undef SCAN_EXTRA
#endif
