/* quantize.c: the CPU's per-tree rounding of gradients and hessians
 * (quantize.h holds the rules it shares with the GPU, src/cuda/gradient.cu). */
#include <float.h>
#include <math.h>
#include "quantize.h"
#include "error.h"
#include "threads.h"
#include "dist.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Rows [i0, i1): q[i] = g * 65536 + h, each value rounded by
 * hb_quant_round with its draw (lhl == 0: h = 1). With SSE2 (every x86-64)
 * a row's (g, h) pair is one vector: the same IEEE divisions, additions,
 * clamps and truncations as the scalar rule the GPU runs, in half the time
 * (the scalar loop's two divisions and floors were most of the pass; the
 * draws are still two scalar hashes a row). */
static void round_rows(const double *gh, int32_t *q, int i0, int i1, double sg, double sh, int lg, int lhl,
                       int stoch, uint64_t head, uint64_t row0) {
#if defined(__SSE2__)
  const __m128d S = _mm_set_pd(lhl ? sh : 1.0, sg), LO = _mm_set_pd(0.0, (double)-lg),
                HI = _mm_set_pd((double)lhl, (double)lg), HALF = _mm_set1_pd(0.5);
  for (int i = i0; i < i1; i++) {
    __m128d u = stoch ? _mm_set_pd(lhl ? hb_quant_uniform_from(head, row0 + (uint64_t)i, 1) : 0.0,
                                   hb_quant_uniform_from(head, row0 + (uint64_t)i, 0))
                      : HALF;
    __m128d x = _mm_add_pd(_mm_div_pd(_mm_loadu_pd(gh + 2 * (size_t)i), S), u);
    /* hb_quant_round's clamps (x < lo ? lo : x, then x > hi ? hi : x):
     * maxpd and minpd return their second operand, the bound, only when
     * x is beyond it; gradients reach here finite */
    x = _mm_min_pd(_mm_max_pd(x, LO), HI);
    /* floor as truncation less one where that rounded up */
    __m128i t = _mm_cvttpd_epi32(x);
    __m128d up = _mm_cmplt_pd(x, _mm_cvtepi32_pd(t));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(_mm_castpd_si128(up), _MM_SHUFFLE(3, 3, 2, 0)));
    const int g = _mm_cvtsi128_si32(t), h = lhl ? _mm_cvtsi128_si32(_mm_srli_si128(t, 4)) : 1;
    q[i] = g * 65536 + h;
  }
#else
  for (int i = i0; i < i1; i++) {
    int g = hb_quant_round(gh[2 * (size_t)i], sg, hb_quant_uniform_from(head, row0 + (uint64_t)i, 0), stoch, -lg, lg);
    int h = lhl ? hb_quant_round(gh[2 * (size_t)i + 1], sh, hb_quant_uniform_from(head, row0 + (uint64_t)i, 1), stoch, 0,
                                 lhl)
                : 1;
    q[i] = g * 65536 + h;
  }
#endif
}

/* The largest |g| and |h| and the smallest |h| of the n rows' (g, h) pairs
 * in gh, over every shard's rows when dist is given (maxima and minima do
 * not depend on the order: the same on any number of threads or
 * processes). HB_ERR_INPUT when a value is not finite (NaN counts as
 * infinite). */
static int global_scales(int n, const double *gh, int nth, const hb_dist_t *dist, double *max_g, double *max_h,
                         double *min_h) {
  double mg = 0, mh = 0, lh = INFINITY;
  int nan = 0;
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static) reduction(max : mg, mh) reduction(min : lh)
       reduction(| : nan) if (n > 65536))
  for (int i = 0; i < n; i++) {
    double ag = fabs(gh[2 * (size_t)i]), ah = fabs(gh[2 * (size_t)i + 1]);
    if (ag != ag || ah != ah) { nan = 1; continue; }
    if (ag > mg) mg = ag;
    if (ah > mh) mh = ah;
    if (ah < lh) lh = ah;
  }
  if (nan) mg = INFINITY;
  if (dist) {
    double mx[2] = {mg, mh};
    int st = hb_dist_max_f64(dist, mx, 2);
    if (st == HB_OK) st = hb_dist_min_f64(dist, &lh, 1);
    if (st != HB_OK) return st;
    mg = mx[0];
    mh = mx[1];
  }
  if (!(mg <= 1e300) || !(mh <= 1e300))
    return hb_error_set(HB_ERR_INPUT, "gradients or hessians are not finite: training diverged");
  *max_g = mg;
  *max_h = mh;
  *min_h = lh;
  return HB_OK;
}

int hb_quantize_tree(const hb_config_t *cfg, uint64_t tree, int n, const double *gh, int32_t *q, hb_qtree_t *out,
                     int nthreads) {
  return hb_quantize_tree_dist(cfg, tree, n, gh, q, out, nthreads, NULL, 0, n);
}

int hb_quantize_tree_dist(const hb_config_t *cfg, uint64_t tree, int n, const double *gh, int32_t *q,
                          hb_qtree_t *out, int nthreads, const hb_dist_t *dist, int64_t row0, int64_t nglobal) {
  const int nth = hb_threads_use(nthreads);
  double mg, mh, lh;
  int st = global_scales(n, gh, nth, dist, &mg, &mh, &lh);
  if (st != HB_OK) return st;
  (void)nth;
  const int lg = hb_quant_grad_levels(cfg->grad_bits);
  const int lhl = lh == mh ? 0 : hb_quant_hess_levels(cfg->grad_bits);  /* a constant hessian stays exact */
  const double sg = hb_quant_scale(mg, lg), sh = lhl ? hb_quant_scale(mh, lhl) : (mh > 0 ? mh : 1.0);
  const int stoch = cfg->stochastic_rounding;
  const uint64_t head = hb_quant_head(cfg->seed, tree);
  const int nchunk = (int)(((int64_t)n + 16383) / 16384);
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int c = 0; c < nchunk; c++)
    round_rows(gh, q, c * 16384, c + 1 < nchunk ? (c + 1) * 16384 : n, sg, sh, lg, lhl, stoch, head,
               (uint64_t)row0);
  out->q = q;
  out->sg = sg;
  out->sh = sh;
  out->rows16 = hb_quant_rows16(lg, lhl ? lhl : 1);
  out->refit = cfg->refit_leaves;
  out->fg = hb_fixed_exponent(mg, (double)nglobal, 62);
  out->fh = hb_fixed_exponent(mh, (double)nglobal, 62);
  return HB_OK;
}

/* x rounded to the nearest whole number, ties to even (nearbyint in the
 * default rounding mode), for |x| <= 2^52: adding 2^52 leaves no bits
 * below the units, and taking it away again is exact. The sign is x's
 * (nearbyint(-0.3) is -0). */
static inline double round_units(double x) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 && !defined(__FAST_MATH__)
  const double two52 = 4503599627370496.0;
  return copysign((fabs(x) + two52) - two52, x);
#else  /* wider intermediates (x87) would keep the bits below the units, and
        * -ffast-math may fold the addition and subtraction away */
  return nearbyint(x);
#endif
}

int hb_exact_sums_dist(int n, double *gh, int nthreads, const hb_dist_t *dist, int64_t nglobal) {
  const int nth = hb_threads_use(nthreads);
  double mg, mh, lh;
  int st = global_scales(n, gh, nth, dist, &mg, &mh, &lh);
  if (st != HB_OK) return st;
  (void)nth;
  const int eg = hb_fixed_exponent(mg, (double)nglobal, 52), eh = hb_fixed_exponent(mh, (double)nglobal, 52);
  /* x 2^e and k 2^-e are exact multiplications by powers of two where both
   * are normal doubles (|e| <= 1000: a product too small for a normal
   * double is below a unit, and rounds to a zero of its sign either way),
   * and every value scaled is at most 2^52 units (hb_fixed_exponent): the
   * same doubles as ldexp(nearbyint(ldexp(x, e)), -e), twenty times faster
   * than those three calls of the C library (about 25 ms a tree for 2M
   * rows on 2 threads). Other exponents take the calls. */
  if (eg >= -1000 && eg <= 1000 && eh >= -1000 && eh <= 1000) {
    const double sg = ldexp(1.0, eg), ug = ldexp(1.0, -eg), sh = ldexp(1.0, eh), uh = ldexp(1.0, -eh);
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
    for (int i = 0; i < n; i++) {
      double *p = gh + 2 * (size_t)i;
      p[0] = round_units(p[0] * sg) * ug;
      p[1] = round_units(p[1] * sh) * uh;
    }
    return HB_OK;
  }
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int i = 0; i < n; i++) {
    double *p = gh + 2 * (size_t)i;
    p[0] = ldexp(nearbyint(ldexp(p[0], eg)), -eg);
    p[1] = ldexp(nearbyint(ldexp(p[1], eh)), -eh);
  }
  return HB_OK;
}
