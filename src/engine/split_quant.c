/* split_quant.c: split search over an integer (quantized) histogram, the
 * CPU twin of the GPU's search (src/cuda/split.cu): for each candidate the
 * left sums are exact integer prefix sums, turned into doubles once with the
 * scales, and the gain, count estimate and missing-value rule come from
 * split_rules.h. Candidates are taken in the GPU's index order (numeric:
 * LightGBM's scan from the top, missing left, then its scan from the bottom,
 * missing right, then missing alone;
 * categorical: each bin alone (one-vs-rest), or the first k from one end
 * for every k the scan takes, then the last k), a
 * later one winning only with a strictly larger gain. Monotone constraints
 * (c->con) change the gains as in split.c, not the candidates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "split_quant.h"
#include "split_rules.h"
#include "split_scan.h"
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

/* The categorical scan of split_scan.h over integer sums: each sum turned
 * into a double with the scales where a rule reads it (what differs from
 * split.c's instance); no extra_trees draw. */
#define SCAN_CAT_NAME cat_scan_q
#define SCAN_CTX hb_qsplit_leaf_t
#define SCAN_BIN hb_qbin_t
#define SCAN_SUM int64_t
#define SCAN_D_G(c, x) ((double)(x) * (c)->sg)
#define SCAN_D_H(c, x) ((double)(x) * (c)->sh)
#define SCAN_N(c) ((c)->n)
#define SCAN_HD(c) ((c)->Hd)
#define SCAN_CAND(c, gl, hl, nl, l2) cand(c, gl, hl, nl, l2, (c)->parent_gain, 0)
#define SCAN_EXTRA(c, f, n) (-1)
#include "split_scan.h"

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
    int T = M - 1;
    /* the candidates' left sums (integers, and as doubles with the scales)
     * and their gains in batches (split.c), the sums in one pass over the
     * bins, in LightGBM's two scans (split.c's scan_numeric) */
    int64_t ig[HB_MAX_NUM_BIN], ih[HB_MAX_NUM_BIN];
    double dg[HB_MAX_NUM_BIN], dh[HB_MAX_NUM_BIN], gr[HB_MAX_NUM_BIN], gf[HB_MAX_NUM_BIN];
    int in[HB_MAX_NUM_BIN], it[HB_MAX_NUM_BIN];
    dg[0] = dh[0] = 0;   /* T may be 0: nothing is read then, but compilers cannot tell */
    in[0] = it[0] = 0;
    numeric_prefix(c, h, T, ig, ih, in, dg, dh);
    const int all = (T > 0 ? in[T - 1] : 0) + hb_rule_count((double)h[T].h * c->sh, c->cnt_factor);
    const int bottom = m->missing, cr = m->count_right;
    const int all_left = hb_rule_bottom_scan_all(c->n, all, na_n, cr);
    int ib[HB_MAX_NUM_BIN];  /* the bottom scan's left rows (only a feature with missing values has that scan) */
    ib[0] = 0;
    if (bottom) {
      for (int t = 0; t < T; t++) ib[t] = hb_rule_bottom_scan_left(c->n, all, in[t], na_n, cr);
      hb_split_gains_con(cfg, dg, dh, ib, T, c->Gd, c->Hd, c->n, l2, parent, c->min_gain, &c->con, mono, gf);
    }
    /* from the top: the missing bin left (its sums, when the leaf has any;
     * without, the left sums are the value bins' alone, dg and dh as they are) */
    const int64_t tg = has_na ? na_g : 0, th = has_na ? na_h : 0;
    if (has_na)
      for (int t = 0; t < T; t++) {
        dg[t] = (double)(ig[t] + tg) * c->sg;
        dh[t] = (double)(ih[t] + th) * c->sh;
      }
    for (int t = 0; t < T; t++) it[t] = hb_rule_top_scan_left(c->n, all, in[t]);
    hb_split_gains_con(cfg, dg, dh, it, T, c->Gd, c->Hd, c->n, l2, parent, c->min_gain, &c->con, mono, gr);
    double g3 = -1.0;
    if (bottom && has_na)  /* every value left, missing alone right */
      g3 = cand(c, c->G - na_g, c->H - na_h, all_left, l2, parent, mono);
    /* the top scan's last where LightGBM's first bin is an empty zero bin (split.c) */
    const double gz = m->na_alone_left && has_na ? cand(c, c->G - na_g, c->H - na_h, all, l2, parent, mono) : -1.0;
    int bt, kind;
    const double bgain = hb_scan_numeric_pick(gr, gz, bottom ? gf : NULL, g3, T, M, &bt, &kind);
    if (!(bgain > 0)) return;
    const int left_n = kind == 0 ? it[bt] : kind == 1 ? ib[bt] : kind == 3 ? all : all_left;
    const int bdl = kind >= 2 ? 0 : hb_rule_missing_left(kind == 0, has_na, left_n, c->n);
    hb_scan_numeric_bits(bits, bt, bdl, M);
    if (kind == 0) take(c, f, bgain, 0, bt, bdl, bits, ig[bt] + tg, ih[bt] + th, left_n, best, olg, olh);
    else if (kind == 1) take(c, f, bgain, 0, bt, bdl, bits, ig[bt], ih[bt], left_n, best, olg, olh);
    else take(c, f, bgain, 0, bt, bdl, bits, c->G - na_g, c->H - na_h, left_n, best, olg, olh);
    return;
  }
  /* Categorical: split_scan.h's scan, as split.c's, over integer sums */
  double gain;
  int64_t lg, lh;
  int ln;
  if (!cat_scan_q(c, f, nb, h, bits, &gain, &lg, &lh, &ln)) return;
  int dl = (bits[(nb - 1) >> 5] >> ((nb - 1) & 31)) & 1u;
  take(c, f, gain, 1, -1, dl, bits, lg, lh, ln, best, olg, olh);
}
