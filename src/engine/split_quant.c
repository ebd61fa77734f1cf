/* split_quant.c: split search over an integer (quantized) histogram, the
 * CPU twin of the GPU's search (src/cuda/split.cu): for each candidate the
 * left sums are exact integer prefix sums, turned into doubles once with the
 * scales, and the gain, count estimate and missing-value rule come from
 * split_rules.h. Candidates are taken in the GPU's index order (numeric: at
 * each threshold missing-right then missing-left, then missing alone;
 * categorical: each bin alone (one-vs-rest), or the first k from one end
 * for every k the scan takes, then the last k), a
 * later one winning only with a strictly larger gain. Monotone constraints
 * (c->con) change the gains as in split.c, not the candidates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "split_quant.h"
#include "split_rules.h"
#include "math_rules.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The first T bins' left sums of a numeric scan: integer prefix sums ig, ih,
 * the estimated rows in (each bin's hb_rule_count, summed in bin order), and
 * the sums as doubles, dg = ig * sg, dh = ih * sh. With SSE2 the per-bin
 * conversions go two bins at a time: an integer x with |x| < 2^51 (every
 * sum here: fewer than 2^31 rows of at most 255 levels) becomes the double
 * x exactly as the bits of 1.5 * 2^52 + x less 1.5 * 2^52, and the rest
 * are the same IEEE operations in the same order, so every value is the
 * scalar loop's (and the GPU's). */
static void numeric_prefix(const hb_qsplit_leaf_t *c, const hb_qbin_t *h, int T, int64_t *ig, int64_t *ih, int *in,
                           double *dg, double *dh) {
  int64_t pg = 0, ph = 0;
  int pc = 0, t = 0;
#if defined(__SSE2__)
  int cnt[HB_MAX_NUM_BIN];
  const __m128d C = _mm_set1_pd(HB_ROUND_MAGIC), SH = _mm_set1_pd(c->sh), SG = _mm_set1_pd(c->sg),
                CF = _mm_set1_pd(c->cnt_factor), HALF = _mm_set1_pd(0.5), ONE = _mm_set1_pd(1.0);
  const __m128i CB = _mm_castpd_si128(C);
#define I64_TO_PD(x) _mm_sub_pd(_mm_castsi128_pd(_mm_add_epi64((x), CB)), C)
  for (; t + 2 <= T; t += 2) {  /* hb_rule_count((double)h * sh, cf) of two bins */
    __m128i b0 = _mm_loadu_si128((const __m128i *)&h[t]), b1 = _mm_loadu_si128((const __m128i *)&h[t + 1]);
    __m128d x = _mm_add_pd(_mm_mul_pd(_mm_mul_pd(I64_TO_PD(_mm_unpackhi_epi64(b0, b1)), SH), CF), HALF);
    __m128i k = _mm_and_si128(_mm_cvttpd_epi32(x), _mm_shuffle_epi32(_mm_castpd_si128(_mm_cmpge_pd(x, ONE)),
                                                                      _MM_SHUFFLE(3, 3, 2, 0)));
    cnt[t] = _mm_cvtsi128_si32(k);
    cnt[t + 1] = _mm_cvtsi128_si32(_mm_srli_si128(k, 4));
  }
  for (; t < T; t++) cnt[t] = hb_rule_count((double)h[t].h * c->sh, c->cnt_factor);
  for (t = 0; t < T; t++) {
    pg += h[t].g;
    ph += h[t].h;
    pc += cnt[t];
    ig[t] = pg; ih[t] = ph; in[t] = pc;
  }
  for (t = 0; t + 2 <= T; t += 2) {
    _mm_storeu_pd(dg + t, _mm_mul_pd(I64_TO_PD(_mm_loadu_si128((const __m128i *)(ig + t))), SG));
    _mm_storeu_pd(dh + t, _mm_mul_pd(I64_TO_PD(_mm_loadu_si128((const __m128i *)(ih + t))), SH));
  }
#undef I64_TO_PD
  for (; t < T; t++) {
    dg[t] = (double)ig[t] * c->sg;
    dh[t] = (double)ih[t] * c->sh;
  }
#else
  for (; t < T; t++) {
    pg += h[t].g;
    ph += h[t].h;
    pc += hb_rule_count((double)h[t].h * c->sh, c->cnt_factor);
    ig[t] = pg; ih[t] = ph; in[t] = pc;
    dg[t] = (double)pg * c->sg;
    dh[t] = (double)ph * c->sh;
  }
#endif
}

void hb_qsplit_leaf_init(hb_qsplit_leaf_t *c, const hb_config_t *cfg, int64_t G, int64_t H, int n, double sg,
                         double sh) {
  c->cfg = cfg;
  c->G = G;
  c->H = H;
  c->n = n;
  c->sg = sg;
  c->sh = sh;
  c->Gd = (double)G * sg;
  c->Hd = (double)H * sh;
  c->splittable = hb_rule_splittable(n, c->Hd, cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf);
  c->cnt_factor = hb_rule_count_factor(n, c->Hd);
  c->parent_gain = hb_rule_leaf_gain(c->Gd, c->Hd, cfg->lambda_l1, cfg->lambda_l2);
  c->min_gain = cfg->min_gain_to_split > 0 ? cfg->min_gain_to_split : 0.0;
  c->con = hb_split_con_make(-HUGE_VAL, HUGE_VAL, NULL);
}

/* mono: the feature's monotone constraint (split.h). */
static inline double cand(const hb_qsplit_leaf_t *c, int64_t gl, int64_t hl, int nl, double l2, double parent,
                          int mono) {
  const hb_config_t *cfg = c->cfg;
  if (mono || c->con.bounded)
    return hb_rule_split_gain_bounded((double)gl * c->sg, (double)hl * c->sh, nl, c->Gd, c->Hd, c->n, cfg->lambda_l1,
                                      l2, parent, cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf, c->min_gain,
                                      c->con.lo, c->con.hi, mono);
  return hb_rule_split_gain((double)gl * c->sg, (double)hl * c->sh, nl, c->Gd, c->Hd, c->n, cfg->lambda_l1, l2,
                            parent, cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf, c->min_gain);
}

/* Record the winner of feature f in *best when strictly better. */
static void take(const hb_qsplit_leaf_t *c, int f, double gain, int is_cat, int thr, int dl, const uint32_t *bins,
                 int64_t lg, int64_t lh, int ln, hb_split_t *best, int64_t *olg, int64_t *olh) {
  if (!(gain > best->gain)) return;
  best->feature = f;
  best->gain = gain;
  best->is_cat = is_cat;
  best->threshold_bin = thr;
  best->default_left = dl;
  memcpy(best->left_bins, bins, sizeof best->left_bins);
  best->left_g = (double)lg * c->sg;
  best->left_h = (double)lh * c->sh;
  best->right_g = (double)(c->G - lg) * c->sg;
  best->right_h = (double)(c->H - lh) * c->sh;
  best->left_n = ln;
  best->right_n = c->n - ln;
  if (olg) *olg = lg;
  if (olh) *olh = lh;
}

void hb_qsplit_feature(const hb_qsplit_leaf_t *c, const hb_dataset_t *d, const hb_qbin_t *hist, int f,
                       hb_split_t *best, int64_t *olg, int64_t *olh) {
  const hb_config_t *cfg = c->cfg;
  const hb_binmapper_t *m = &d->mappers[f];
  const hb_qbin_t *h = hist + d->hist_offset[f];
  const int nb = m->num_bin;
  if (!c->splittable || nb < 2 || nb > HB_MAX_NUM_BIN) return;
  uint32_t bits[HB_MAX_NUM_BIN / 32];
  if (m->type != HB_FEAT_CATEGORICAL) {
    const int M = nb - 1;
    const int64_t na_g = h[M].g, na_h = h[M].h;
    const int na_n = hb_rule_count((double)na_h * c->sh, c->cnt_factor);
    const int has_na = hb_rule_has_missing(na_n, (double)na_h * c->sh, c->Hd);
    const double l2 = cfg->lambda_l2, parent = c->parent_gain;
    const int mono = c->con.mono ? c->con.mono[f] : 0;
    double bgain = -1.0;
    int bt = -1, bdl = 0, bln = 0;
    int64_t blg = 0, blh = 0;
    int T = M - 1;
    /* the candidates' left sums (integers, and as doubles with the scales)
     * and their gains in one batch (split.c), the sums in one pass over the
     * bins */
    int64_t ig[HB_MAX_NUM_BIN], ih[HB_MAX_NUM_BIN];
    double dg[HB_MAX_NUM_BIN], dh[HB_MAX_NUM_BIN], g1[HB_MAX_NUM_BIN], g2[HB_MAX_NUM_BIN];
    int in[HB_MAX_NUM_BIN];
    dg[0] = dh[0] = 0;   /* T may be 0: nothing is read then, but compilers cannot tell */
    in[0] = 0;
    numeric_prefix(c, h, T, ig, ih, in, dg, dh);
    hb_split_gains_con(cfg, dg, dh, in, T, c->Gd, c->Hd, c->n, l2, parent, c->min_gain, &c->con, mono, g1);
    if (has_na) {
      for (int t = 0; t < T; t++) {
        dg[t] = (double)(ig[t] + na_g) * c->sg;
        dh[t] = (double)(ih[t] + na_h) * c->sh;
        in[t] += na_n;
      }
      hb_split_gains_con(cfg, dg, dh, in, T, c->Gd, c->Hd, c->n, l2, parent, c->min_gain, &c->con, mono, g2);
      for (int t = 0; t < T; t++) in[t] -= na_n;
    }
    for (int t = 0; t < T; t++) {
      if (g1[t] > bgain) {
        bgain = g1[t]; bt = t; blg = ig[t]; blh = ih[t]; bln = in[t];
        bdl = has_na ? 0 : in[t] >= c->n - in[t];
      }
      if (has_na && g2[t] > bgain) {
        bgain = g2[t]; bt = t; bdl = 1; blg = ig[t] + na_g; blh = ih[t] + na_h; bln = in[t] + na_n;
      }
    }
    if (has_na) {  /* every value left, missing alone right */
      double g3 = cand(c, c->G - na_g, c->H - na_h, c->n - na_n, l2, parent, mono);
      if (g3 > bgain) { bgain = g3; bt = M - 1; bdl = 0; blg = c->G - na_g; blh = c->H - na_h; bln = c->n - na_n; }
    }
    if (!(bgain > 0)) return;
    memset(bits, 0, sizeof bits);
    hb_split_bits_upto(bits, bt);
    if (bdl) bits[M >> 5] |= 1u << (M & 31);
    take(c, f, bgain, 0, bt, bdl, bits, blg, blh, bln, best, olg, olh);
    return;
  }
  /* Categorical (split_rules.h; the candidates in split.c's order). */
  int cnt[HB_MAX_NUM_BIN];
  for (int b = 0; b < nb; b++) cnt[b] = hb_rule_count((double)h[b].h * c->sh, c->cnt_factor);
  double bgain = -1.0;
  int bln = 0;
  int64_t blg = 0, blh = 0;
  memset(bits, 0, sizeof bits);
  if (hb_rule_cat_onehot(nb, cfg->max_cat_to_onehot)) {  /* each bin alone on the left, lambda_l2 */
    int bb = -1, nonempty = 0, lowest = -1;
    for (int b = 0; b < nb; b++)
      if (cnt[b] > 0) { if (lowest < 0) lowest = b; nonempty++; }
    for (int b = 0; b < nb; b++) {
      if (hb_rule_cat_onehot_seen(nonempty, lowest, b)) continue;
      double g = cand(c, h[b].g, h[b].h, cnt[b], cfg->lambda_l2, c->parent_gain, 0);
      if (g > bgain) { bgain = g; bb = b; blg = h[b].g; blh = h[b].h; bln = cnt[b]; }
    }
    if (!(bgain > 0)) return;
    bits[bb >> 5] |= 1u << (bb & 31);
  } else {  /* many against many: bins with at least cat_smooth rows, by G / (H + cat_smooth), ties by bin */
    hb_cat_key_t keys[HB_MAX_NUM_BIN];
    uint8_t first[HB_MAX_NUM_BIN];  /* whether the first k + 1 were a candidate of the first end */
    int used = 0, dropped = 0, used_rows = 0;
    for (int b = 0; b < nb; b++) {  /* without a branch, as split.c's */
      const int ok = hb_rule_cat_used(cnt[b], cfg->cat_smooth);
      dropped += (cnt[b] > 0) & !ok;
      used_rows += cnt[b] & -ok;
      keys[used].key = hb_rule_cat_key((double)h[b].g * c->sg, (double)h[b].h * c->sh, cfg->cat_smooth);
      keys[used].bin = b;
      used += ok;
    }
    if (used < 1 || !hb_rule_cat_can_split(used_rows, cfg->min_data_in_leaf, cfg->min_data_per_group)) return;
    const int kmax = hb_rule_cat_max_left(used, cfg->max_cat_threshold);
    hb_cat_sort_ends(keys, used, kmax);  /* the scans read the first and the last kmax */
    const double l2c = cfg->lambda_l2 + cfg->cat_l2;
    int bk = 0, bdir = 0;
    memset(first, 0, (size_t)kmax);
    for (int dir = 0; dir < 2; dir++) {
      int64_t lg = 0, lh = 0;
      int ln = 0, group = 0;
      for (int k = 1; k <= kmax; k++) {
        int b = keys[dir == 0 ? k - 1 : used - k].bin;
        lg += h[b].g;
        lh += h[b].h;
        ln += cnt[b];
        int st = hb_rule_cat_step(cnt[b], ln, (double)lh * c->sh, c->n, c->Hd, &group, cfg->min_data_in_leaf,
                                  cfg->min_sum_hessian_in_leaf, cfg->min_data_per_group);
        if (dir == 0) first[k - 1] = st > 0;
        if (st < 0) break;
        if (st == 0) continue;
        if (dir == 1 && hb_rule_cat_seen(dropped, used, k, kmax, first)) continue;
        double g = cand(c, lg, lh, ln, l2c, c->parent_gain, 0);
        if (g > bgain) { bgain = g; bk = k; bdir = dir; blg = lg; blh = lh; bln = ln; }
      }
    }
    if (!(bgain > 0)) return;
    for (int k = 0; k < bk; k++) {
      int b = keys[bdir ? used - 1 - k : k].bin;
      bits[b >> 5] |= 1u << (b & 31);
    }
  }
  int dl = (bits[(nb - 1) >> 5] >> ((nb - 1) & 31)) & 1u;
  take(c, f, bgain, 1, -1, dl, bits, blg, blh, bln, best, olg, olh);
}
