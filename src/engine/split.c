/* split.c: split search on a leaf histogram.
 *
 * gain = L(GL,HL) + L(GR,HR) - L(G,H), L(G,H) = T(G)^2 / (H + l2), T the L1
 * soft threshold (split_rules.h). A candidate needs min_data_in_leaf rows
 * (estimated from hessian sums, bin by bin, as split_rules.h says) and
 * min_sum_hessian_in_leaf hessian on both sides and gain > min_gain_to_split
 * (and > 0). Numeric features scan thresholds as LightGBM does: from the top
 * with the missing bin on the left, then (features with missing values in
 * training) from the bottom with it on the right, and "missing alone on the
 * right", each scan counting rows its own way (split_rules.h); with no
 * missing rows in the leaf the missing direction follows the larger child.
 * Categorical features
 * follow LightGBM's rules (split_rules.h): one category against the rest
 * for features of at most max_cat_to_onehot bins, else the categories with
 * at least cat_smooth rows ordered by G/(H + cat_smooth) and prefixes
 * scanned from both ends, min_data_per_group rows between two candidates
 * and on the right. Ties keep the first candidate in scan
 * order, then the lower feature index, so the result is deterministic.
 * Under monotone constraints (split.h: hb_split_con_t) a constrained
 * feature or a bounded leaf takes the bounded gain of split_rules.h in
 * place of the batched one; the candidates and their order are the same. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "split.h"
#include "split_rules.h"
#include "split_scan.h"
#include "threads.h"
#include "rng.h"

double hb_split_leaf_output(const hb_config_t *cfg, double g, double h) {
  return hb_rule_leaf_output(g, h, cfg->lambda_l1, cfg->lambda_l2);
}

typedef hb_split_leaf_t scan_ctx;

/* Gain of left = (gl, hl, nl), or -1 when invalid (valid gains are > 0);
 * mono: the feature's monotone constraint. */
static inline double candidate(const scan_ctx *c, double gl, double hl, int nl,
                               double l2, double parent_gain, int mono) {
  const hb_config_t *cfg = c->cfg;
  if (c->ext)
    return hb_rule_split_gain_ext(gl, hl, nl, c->tot.g, c->tot.h, c->tot.n, cfg->lambda_l1, l2, parent_gain,
                                  cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf, c->min_gain, c->con.lo,
                                  c->con.hi, mono, cfg->max_delta_step, cfg->path_smooth, c->parent_out);
  if (mono || c->con.bounded)
    return hb_rule_split_gain_bounded(gl, hl, nl, c->tot.g, c->tot.h, c->tot.n, cfg->lambda_l1, l2, parent_gain,
                                      cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf, c->min_gain, c->con.lo,
                                      c->con.hi, mono);
  return hb_rule_split_gain(gl, hl, nl, c->tot.g, c->tot.h, c->tot.n, cfg->lambda_l1, l2,
                            parent_gain, cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf,
                            c->min_gain);
}

static void finish(const scan_ctx *c, hb_split_t *s, double gl, double hl, int nl) {
  s->left_g = gl; s->left_h = hl; s->left_n = nl;
  s->right_g = c->tot.g - gl; s->right_h = c->tot.h - hl; s->right_n = c->tot.n - nl;
}

void hb_split_gains(const hb_config_t *cfg, const double *gl, const double *hl, const int *nl, int m, double g,
                    double h, int n, double l2, double parent_gain, double min_gain, double *out) {
  const int md = cfg->min_data_in_leaf;
  const double mh = cfg->min_sum_hessian_in_leaf, l1 = cfg->lambda_l1;
  int i = 0;
#if defined(__SSE2__)
  if (!(l1 > 0)) {   /* the soft threshold is the identity: T(g) = g */
    const __m128d vg = _mm_set1_pd(g), vh = _mm_set1_pd(h), vl2 = _mm_set1_pd(l2), vpar = _mm_set1_pd(parent_gain),
                  vmg = _mm_set1_pd(min_gain), vmh = _mm_set1_pd(mh), zero = _mm_setzero_pd(),
                  none = _mm_set1_pd(-1.0);
    const __m128i vmd1 = _mm_set1_epi32(md > INT_MIN ? md - 1 : INT_MIN), vnn = _mm_set1_epi32(n);
    for (; i + 2 <= m; i += 2) {
      __m128d a = _mm_loadu_pd(gl + i), b = _mm_loadu_pd(hl + i);
      __m128d ar = _mm_sub_pd(vg, a), br = _mm_sub_pd(vh, b);
      __m128d dl = _mm_add_pd(b, vl2), dr = _mm_add_pd(br, vl2);
      /* L = t * t / den where den > 0, else 0 */
      __m128d ll = _mm_and_pd(_mm_div_pd(_mm_mul_pd(a, a), dl), _mm_cmpgt_pd(dl, zero));
      __m128d lr = _mm_and_pd(_mm_div_pd(_mm_mul_pd(ar, ar), dr), _mm_cmpgt_pd(dr, zero));
      __m128d gain = _mm_sub_pd(_mm_add_pd(ll, lr), vpar);
      /* valid: both sides with min_data rows and not less than min hessian, gain > min_gain */
      __m128d ok = _mm_and_pd(_mm_cmpnlt_pd(b, vmh), _mm_cmpnlt_pd(br, vmh));
      ok = _mm_and_pd(ok, _mm_cmpgt_pd(gain, vmg));
      /* nl >= md and n - nl >= md for the two counts at once, as
       * nl > md - 1 (counts are never negative, n - nl never overflows),
       * each 32-bit mask widened to its pair's 64 bits */
      __m128i vn = _mm_loadl_epi64((const __m128i *)(nl + i));
      __m128i okn = _mm_and_si128(_mm_cmpgt_epi32(vn, vmd1), _mm_cmpgt_epi32(_mm_sub_epi32(vnn, vn), vmd1));
      ok = _mm_and_pd(ok, _mm_castsi128_pd(_mm_unpacklo_epi32(okn, okn)));
      _mm_storeu_pd(out + i, _mm_or_pd(_mm_and_pd(ok, gain), _mm_andnot_pd(ok, none)));
    }
  }
#endif
  for (; i < m; i++) out[i] = hb_rule_split_gain(gl[i], hl[i], nl[i], g, h, n, l1, l2, parent_gain, md, mh, min_gain);
}

void hb_split_gains_con(const hb_config_t *cfg, const double *gl, const double *hl, const int *nl, int m,
                        double g, double h, int n, double l2, double parent_gain, double min_gain,
                        const hb_split_con_t *con, int mono, double *out) {
  if (!mono && !con->bounded) {
    hb_split_gains(cfg, gl, hl, nl, m, g, h, n, l2, parent_gain, min_gain, out);
    return;
  }
  for (int i = 0; i < m; i++)
    out[i] = hb_rule_split_gain_bounded(gl[i], hl[i], nl[i], g, h, n, cfg->lambda_l1, l2, parent_gain,
                                        cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf, min_gain, con->lo,
                                        con->hi, mono);
}

/* The gains of m candidates of a scan: batched, or one by one under
 * max_delta_step / path_smooth. */
static void scan_gains(const scan_ctx *c, const double *gl, const double *hl, const int *nl, int m, double l2,
                       int mono, double *out) {
  if (!c->ext) {
    hb_split_gains_con(c->cfg, gl, hl, nl, m, c->tot.g, c->tot.h, c->tot.n, l2, c->parent_gain, c->min_gain, &c->con,
                       mono, out);
    return;
  }
  for (int i = 0; i < m; i++) out[i] = candidate(c, gl[i], hl[i], nl[i], l2, c->parent_gain, mono);
}

/* extra_trees: feature f's one candidate of n (0..n-1), drawn uniformly
 * for this leaf (LightGBM's rand.NextInt(0, n)); 0 when n < 1. */
static int extra_pick(const scan_ctx *c, int f, int n) {
  return hb_rng_bits_pick(hb_rng_key_tail(c->rkey, (uint64_t)f), n);
}

/* A numeric feature: thresholds t = 0..M-2 (value bins <= t go left), the
 * left side's sums accumulated in bin order and the candidates' gains
 * computed in batches, as LightGBM's two scans count them (split_rules.h):
 * from the top with the missing bin on the left, then (a feature with
 * missing values in training) from the bottom with it on the right, and
 * every value against the missing bin alone (split_scan.h picks). */
static void scan_numeric(const scan_ctx *c, int f, const hb_binmapper_t *m,
                         const hb_histbin_t *h, hb_split_t *best) {
  const int M = m->num_bin - 1;     /* the missing bin; value bins 0..M-1 */
  const hb_histbin_t *na = h + M;
  const double l2 = c->cfg->lambda_l2, cf = c->cnt_factor;
  double gl[HB_MAX_NUM_BIN], hl[HB_MAX_NUM_BIN], gm[HB_MAX_NUM_BIN], hm[HB_MAX_NUM_BIN];
  double gr[HB_MAX_NUM_BIN], gf[HB_MAX_NUM_BIN];
  int nl[HB_MAX_NUM_BIN], nt[HB_MAX_NUM_BIN], nr[HB_MAX_NUM_BIN];
  const int n = c->tot.n, T = M - 1, na_n = hb_rule_count(na->h, cf);
  const int mono = c->con.mono ? c->con.mono[f] : 0;
  const int has_na = hb_rule_has_missing(na_n, na->h, c->tot.h);
  gl[0] = hl[0] = gm[0] = hm[0] = 0;   /* T may be 0: nothing is read then, but compilers cannot tell */
  nl[0] = nt[0] = nr[0] = 0;
  int all = 0;  /* every value bin's estimated rows */
  {
    double sg = 0, sh = 0;
    for (int t = 0; t < T; t++) {
      sg += h[t].g; sh += h[t].h; all += hb_rule_count(h[t].h, cf);
      gl[t] = sg; hl[t] = sh; nl[t] = all;
    }
    if (T >= 0) all += hb_rule_count(h[T].h, cf);
  }
  /* from the top: the missing bin left (its sums, when the leaf has any;
   * without, the left sums are the value bins' alone) */
  const double *gt = gl, *ht = hl;
  if (has_na) {
    for (int t = 0; t < T; t++) {
      gm[t] = gl[t] + na->g;
      hm[t] = hl[t] + na->h;
    }
    gt = gm; ht = hm;
  }
  for (int t = 0; t < T; t++) nt[t] = hb_rule_top_scan_left(n, all, nl[t]);
  scan_gains(c, gt, ht, nt, T, l2, mono, gr);
  /* extra_trees: only threshold rt (of 0..M-2) is a candidate in either
   * scan, never every value alone (LightGBM's rule: one draw in [0, num_bin - 2)) */
  const int rt = c->extra ? extra_pick(c, f, T) : -1;
  const int bottom = m->missing;
  double g3 = -1.0;
  const int *nb = nl;  /* the bottom scan's left rows */
  if (bottom) {
    if (m->count_right) {  /* counted from the right, the missing rows with them: n less both */
      for (int t = 0; t < T; t++) nr[t] = hb_rule_bottom_scan_left(n, all, nl[t], na_n, 1);
      nb = nr;
    }
    scan_gains(c, gl, hl, nb, T, l2, mono, gf);
    /* every value left, missing alone right */
    if (has_na && rt < 0)
      g3 = candidate(c, c->tot.g - na->g, c->tot.h - na->h, hb_rule_bottom_scan_all(n, all, na_n, m->count_right), l2,
                     c->parent_gain, mono);
  }
  if (rt >= 0)
    for (int t = 0; t < T; t++)
      if (t != rt) gr[t] = gf[t] = -1.0;
  /* the top scan's last where LightGBM's first bin is an empty zero bin: the
   * missing rows alone left, the values counted (g3's partition, taken as g3's) */
  const double gz = m->na_alone_left && has_na && rt < 0
                        ? candidate(c, c->tot.g - na->g, c->tot.h - na->h, all, l2, c->parent_gain, mono)
                        : -1.0;
  int bt, kind;
  const double best_gain = hb_scan_numeric_pick(gr, gz, bottom ? gf : NULL, g3, T, M, &bt, &kind);
  if (bt < 0 || !(best_gain > best->gain)) return;
  const int left_n = kind == 0 ? nt[bt] : kind == 1 ? nb[bt] : kind == 3 ? all
                                                     : hb_rule_bottom_scan_all(n, all, na_n, m->count_right);
  best->feature = f;
  best->gain = best_gain;
  best->is_cat = 0;
  best->threshold_bin = bt;
  best->default_left = kind >= 2 ? 0 : hb_rule_missing_left(kind == 0, has_na, left_n, n);
  hb_scan_numeric_bits(best->left_bins, bt, best->default_left, M);
  if (kind == 0) finish(c, best, gt[bt], ht[bt], left_n);
  else if (kind == 1) finish(c, best, gl[bt], hl[bt], left_n);
  else finish(c, best, c->tot.g - na->g, c->tot.h - na->h, left_n);
}

/* By key, ties by bin (bins are distinct: a total order, so any sort gives
 * the same sequence). */
static inline int cat_key_less(const hb_cat_key_t *x, const hb_cat_key_t *y) {
  return x->key < y->key || (!(y->key < x->key) && x->bin < y->bin);
}

/* Insertion sort of runs of CAT_RUN, merged bottom-up. */
#define CAT_RUN 8
static void cat_merge_sort(hb_cat_key_t *keys, int n) {
  hb_cat_key_t tmp[HB_MAX_NUM_BIN];
  for (int r = 0; r < n; r += CAT_RUN) {
    int e = r + CAT_RUN < n ? r + CAT_RUN : n;
    for (int i = r + 1; i < e; i++) {
      hb_cat_key_t v = keys[i];
      int j = i;
      while (j > r && cat_key_less(&v, &keys[j - 1])) { keys[j] = keys[j - 1]; j--; }
      keys[j] = v;
    }
  }
  hb_cat_key_t *a = keys, *b = tmp;
  for (int w = CAT_RUN; w < n; w *= 2) {
    for (int lo = 0; lo < n; lo += 2 * w) {
      int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi) b[k++] = cat_key_less(&a[j], &a[i]) ? a[j++] : a[i++];
      while (i < mid) b[k++] = a[i++];
      while (j < hi) b[k++] = a[j++];
    }
    hb_cat_key_t *t = a; a = b; b = t;
  }
  if (a != keys) memcpy(keys, a, sizeof(hb_cat_key_t) * (size_t)n);
}

/* A full sort of 24 keys or more by buckets of the key range: bucket(x) =
 * floor((x - mn) * nb / (mx - mn)) is non-decreasing in x (a subtraction,
 * a product by a positive number and a truncation are each monotone in
 * IEEE arithmetic), so keys placed bucket by bucket are in order but
 * within a bucket, whose few keys (ties among them: equal keys share a
 * bucket) an insertion sort orders, a crowded one the merge sort. About n
 * steps without a comparison to mispredict, where a comparison sort takes
 * n log n that the branch predictor gets wrong half the time (this sorts
 * every wide factor's part in every leaf scanned). Keys that are not all
 * finite and spread (NaN, an infinite or subnormal range, all equal) take
 * the merge sort. */
/* Each key's bucket (into bk) among nb <= 256 equal parts of the keys'
 * range [min, max]: (key - min) * nb / range, the last part closed, a
 * bucket index that never falls as the key rises. 0 when the keys are not
 * all finite and spread (NaN, an infinite or subnormal range, all equal). */
static int cat_buckets(const hb_cat_key_t *keys, int n, int nb, uint8_t *bk) {
  double mn = keys[0].key, mx = mn;
  int nan = 0;
  for (int i = 0; i < n; i++) {
    const double x = keys[i].key;
    mn = x < mn ? x : mn;
    mx = x > mx ? x : mx;
    nan |= x != x;
  }
  const double range = mx - mn, scale = (double)nb / range;
  if (nan || !(range > 0) || !(range < HUGE_VAL) || !(scale < HUGE_VAL)) return 0;
  for (int i = 0; i < n; i++) {
    int b = (int)((keys[i].key - mn) * scale);
    bk[i] = (uint8_t)(b < nb - 1 ? b : nb - 1);
  }
  return 1;
}

void hb_cat_sort(hb_cat_key_t *keys, int n) {
  uint8_t bk[HB_MAX_NUM_BIN];
  if (n < 24 || !cat_buckets(keys, n, n, bk)) {
    cat_merge_sort(keys, n);
    return;
  }
  int start[HB_MAX_NUM_BIN + 1], pos[HB_MAX_NUM_BIN];
  memset(start, 0, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) start[bk[i] + 1]++;
  for (int b = 0; b < n; b++) start[b + 1] += start[b];
  memcpy(pos, start, sizeof(int) * (size_t)n);
  hb_cat_key_t tmp[HB_MAX_NUM_BIN];
  for (int i = 0; i < n; i++) tmp[pos[bk[i]]++] = keys[i];
  for (int b = 0; b < n; b++) {
    const int s = start[b], e = start[b + 1];
    if (e - s > 16) {
      cat_merge_sort(tmp + s, e - s);
      continue;
    }
    for (int i = s + 1; i < e; i++) {
      hb_cat_key_t v = tmp[i];
      int j = i;
      while (j > s && cat_key_less(&v, &tmp[j - 1])) { tmp[j] = tmp[j - 1]; j--; }
      tmp[j] = v;
    }
  }
  memcpy(keys, tmp, sizeof(hb_cat_key_t) * (size_t)n);
}

/* The k smallest and the k largest in order, each end's candidates found
 * without comparing keys: the keys' range [mn, mx] is cut into CAT_NB
 * equal buckets (as in hb_cat_sort, bucket(x) is monotone), so the keys in the
 * buckets up to the first one where the count from below reaches k are the
 * smallest ones, ties included (equal keys share a bucket), k of them or a
 * few more; the same from above. Only those few are sorted (hb_cat_sort:
 * the same order, by key then bin, as sorting them all). On a wide
 * factor's leaves this replaced a heap of k at each end, whose sifts were
 * a tenth of workload 4's training. Keys that are not all finite and
 * spread (NaN, an infinite or subnormal range, all equal, the ends
 * sharing a bucket)
 * take a full sort.
 * The middle keeps the rest, in some order. */
#define CAT_NB 64
void hb_cat_sort_ends(hb_cat_key_t *keys, int n, int k) {
  if (n <= 2 * k + 16) {
    hb_cat_sort(keys, n);
    return;
  }
  uint8_t bk[HB_MAX_NUM_BIN];
  if (!cat_buckets(keys, n, CAT_NB, bk)) {
    hb_cat_sort(keys, n);
    return;
  }
  int cnt[CAT_NB];
  memset(cnt, 0, sizeof cnt);
  for (int i = 0; i < n; i++) cnt[bk[i]]++;
  int tlo = 0, thi = CAT_NB - 1;  /* the buckets at or below tlo hold the k smallest, at or above thi the largest */
  for (int acc = 0; acc + cnt[tlo] < k;) acc += cnt[tlo++];
  for (int acc = 0; acc + cnt[thi] < k;) acc += cnt[thi--];
  if (tlo >= thi) {  /* the two ends share a bucket: keys too bunched for the buckets to part them */
    hb_cat_sort(keys, n);
    return;
  }
  hb_cat_key_t lo[HB_MAX_NUM_BIN], hi[HB_MAX_NUM_BIN], mid[HB_MAX_NUM_BIN];
  int m = 0, mh = 0, q = 0;
  for (int i = 0; i < n; i++) {  /* without a branch: which side a key is on is a coin flip */
    const int b = bk[i];
    lo[m] = keys[i];
    m += b <= tlo;
    hi[mh] = keys[i];
    mh += b >= thi;
    mid[q] = keys[i];
    q += (b > tlo) & (b < thi);
  }
  hb_cat_sort(lo, m);
  hb_cat_sort(hi, mh);
  for (int i = k; i < m; i++) mid[q++] = lo[i];  /* candidates beyond the k kept: to the middle */
  for (int i = 0; i < mh - k; i++) mid[q++] = hi[i];
  memcpy(keys, lo, sizeof(hb_cat_key_t) * (size_t)k);
  memcpy(keys + k, mid, sizeof(hb_cat_key_t) * (size_t)q);
  memcpy(keys + (n - k), hi + (mh - k), sizeof(hb_cat_key_t) * (size_t)k);
}

/* A categorical feature: split_scan.h's scan over double sums, with
 * max_delta_step / path_smooth (candidate) and extra_trees (extra_pick). */
#define SCAN_CAT_NAME cat_scan
#define SCAN_CTX scan_ctx
#define SCAN_BIN hb_histbin_t
#define SCAN_SUM double
#define SCAN_D_G(c, x) (x)
#define SCAN_D_H(c, x) (x)
#define SCAN_N(c) ((c)->tot.n)
#define SCAN_HD(c) ((c)->tot.h)
#define SCAN_CAND(c, gl, hl, nl, l2) candidate(c, gl, hl, nl, l2, (c)->parent_gain, 0)
#define SCAN_EXTRA(c, f, n) ((c)->extra ? extra_pick(c, f, n) : -1)
#include "split_scan.h"

static void scan_categorical(const scan_ctx *c, int f, const hb_binmapper_t *m,
                             const hb_histbin_t *h, hb_split_t *best) {
  uint32_t bits[HB_MAX_NUM_BIN / 32];
  double gain, gl, hl;
  int nl;
  if (!cat_scan(c, f, m->num_bin, h, bits, &gain, &gl, &hl, &nl) || !(gain > best->gain)) return;
  best->feature = f;
  best->gain = gain;
  best->is_cat = 1;
  best->threshold_bin = -1;
  memcpy(best->left_bins, bits, sizeof best->left_bins);
  best->default_left = hb_split_bin_left(best, m->num_bin - 1);
  finish(c, best, gl, hl, nl);
}

void hb_split_leaf_init(hb_split_leaf_t *c, const hb_config_t *cfg, hb_leafsum_t tot) {
  c->cfg = cfg;
  c->tot = tot;
  c->splittable = hb_rule_splittable(tot.n, tot.h, cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf);
  c->cnt_factor = hb_rule_count_factor(tot.n, tot.h);
  c->parent_gain = hb_rule_leaf_gain(tot.g, tot.h, cfg->lambda_l1, cfg->lambda_l2);
  c->min_gain = cfg->min_gain_to_split > 0 ? cfg->min_gain_to_split : 0.0;
  c->con = hb_split_con_make(-HUGE_VAL, HUGE_VAL, NULL);
  c->ext = 0;
  c->parent_out = 0.0;
  c->extra = 0;
  c->rkey = 0;
}

void hb_split_leaf_ext(hb_split_leaf_t *c, double leaf_out) {
  const hb_config_t *cfg = c->cfg;
  if (!(cfg->max_delta_step > 0) && !(cfg->path_smooth > 0)) return;
  c->ext = 1;
  c->parent_out = leaf_out;
  /* lambda_l2 alone, as L(G, H) */
  c->parent_gain = hb_rule_parent_gain_ext(c->tot.g, c->tot.h, c->tot.n, cfg->lambda_l1, cfg->lambda_l2,
                                           cfg->max_delta_step, cfg->path_smooth, leaf_out);
}

/* 1 when no candidate of a feature can be valid because its histogram h
 * (nb bins) holds at most one bin that is not exactly empty (g = h = 0),
 * bin k, and the leaf's hessian beyond it, tot.h - h_k, is below
 * min_sum_hessian_in_leaf (> 0): every candidate's side, summed in bin
 * order with exact zeros, is then 0 or h_k, the other side tot.h less that
 * (or, for "missing alone", tot.h - 0 and its complement 0), so one side
 * fails the hessian rule. Most of a small leaf's one-hot features are so,
 * and their scans (the search's main cost on wide sparse data) are skipped
 * with the same result. */
static int no_candidate(const scan_ctx *c, const hb_histbin_t *h, int nb) {
  const double mh = c->cfg->min_sum_hessian_in_leaf;
  if (!(mh > 0)) return 0;
  int k = -1;
  for (int b = 0; b < nb; b++) {
    if (h[b].g == 0.0 && h[b].h == 0.0) continue;
    if (k >= 0) return 0;
    k = b;
  }
  return k < 0 || c->tot.h - h[k].h < mh;
}

void hb_split_feature(const hb_split_leaf_t *c, const hb_dataset_t *d, const hb_histbin_t *hist,
                      int f, hb_split_t *best) {
  const hb_binmapper_t *m = &d->mappers[f];
  if (!c->splittable || m->trivial) return;
  const hb_histbin_t *h = hist + d->hist_offset[f];
  if (no_candidate(c, h, m->num_bin)) return;
  if (m->type == HB_FEAT_CATEGORICAL) scan_categorical(c, f, m, h, best);
  else scan_numeric(c, f, m, h, best);
}

