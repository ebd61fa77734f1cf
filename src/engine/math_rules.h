/* math_rules.h: arithmetic the CPU and the GPU must round identically,
 * written once from operations IEEE 754 defines exactly (+, -, *, floor,
 * ldexp) so that both produce the same double bit for bit. Library exp()
 * differs between libm and CUDA in the last bit, which was enough to make
 * quantized CPU and GPU models differ in their refit leaf values. */
#ifndef HB_MATH_RULES_H
#define HB_MATH_RULES_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* 1.5 * 2^52: for |x| < 2^51, (x + HB_ROUND_MAGIC) - HB_ROUND_MAGIC is x
 * rounded to the nearest integer (ties to even), and the low bits of
 * x + HB_ROUND_MAGIC, less those of HB_ROUND_MAGIC, are that integer; read
 * backwards, an integer i with |i| < 2^51 added to those bits gives the
 * double i + HB_ROUND_MAGIC exactly. The conversions without a library call
 * or a 64-bit vector convert (SSE2 has none). */
#define HB_ROUND_MAGIC 6755399441055744.0

#ifdef __CUDACC__
#define HB_MATH static inline __host__ __device__
#else
#define HB_MATH static inline
#endif

/* e^x to within about one ulp: x = k ln2 + r with |r| <= ln2 / 2 (ln2 in
 * two parts, so that k ln2 is exact to 2^-60), e^r by its Taylor series to
 * r^13 (remainder below 2^-57 relative), times 2^k. */
HB_MATH double hb_exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return HUGE_VAL;
  if (x < -745.1332191019412) return 0.0;
  const double log2e = 1.4426950408889634, ln2_hi = 6.93147180369123816490e-01,
               ln2_lo = 1.90821492927058770002e-10;
  const double k = floor(x * log2e + 0.5);
  const double r = (x - k * ln2_hi) - k * ln2_lo;
  double p = 1.0 / 6227020800.0;                       /* 1/13! */
  p = p * r + 1.0 / 479001600.0;                       /* 1/12! */
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  /* p * 2^k, exact like ldexp, with 2^k from its bits when it is a normal
   * double (a library call per row otherwise: 2-4% of a binary training) */
  if (k >= -1022 && k <= 1023) {
    uint64_t bits = (uint64_t)((int64_t)k + 1023) << 52;
    double s;
    memcpy(&s, &bits, sizeof s);
    return p * s;
  }
  return ldexp(p, (int)k);
}

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#define HB_HAVE_EXP_PAIR 1
/* hb_exp of two values at once (SSE2, in every x86-64 CPU), the same
 * operations in the same order, so the same bits; only for -708 <= x <= 709
 * in both lanes (NaN fails that), where k lies within [-1021, 1023] and 2^k
 * is a normal double: callers check hb_exp_pair_ok first. floor(t) for
 * |t| < 2^51 is t rounded to an integer by adding and subtracting 1.5 * 2^52,
 * less one where that rounded up; the same sum's low bits hold k, which
 * shifted into the exponent field (plus its bias) give 2^k. */
static inline int hb_exp_pair_ok(__m128d x) {
  const __m128d lo = _mm_set1_pd(-708.0), hi = _mm_set1_pd(709.0);
  return _mm_movemask_pd(_mm_and_pd(_mm_cmpge_pd(x, lo), _mm_cmple_pd(x, hi))) == 3;
}

static inline __m128d hb_exp_pair(__m128d x) {
  const __m128d magic = _mm_set1_pd(HB_ROUND_MAGIC);
  const __m128d t = _mm_add_pd(_mm_mul_pd(x, _mm_set1_pd(1.4426950408889634)), _mm_set1_pd(0.5));
  __m128d k = _mm_sub_pd(_mm_add_pd(t, magic), magic);
  k = _mm_sub_pd(k, _mm_and_pd(_mm_cmpgt_pd(k, t), _mm_set1_pd(1.0)));
  const __m128d r = _mm_sub_pd(_mm_sub_pd(x, _mm_mul_pd(k, _mm_set1_pd(6.93147180369123816490e-01))),
                               _mm_mul_pd(k, _mm_set1_pd(1.90821492927058770002e-10)));
  static const double c[14] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                               1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,      1.0 / 720.0,
                               1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,         0.5,
                               1.0,                1.0};
  __m128d p = _mm_set1_pd(c[0]);
  for (int j = 1; j < 14; j++) p = _mm_add_pd(_mm_mul_pd(p, r), _mm_set1_pd(c[j]));
  const __m128i e = _mm_slli_epi64(_mm_add_epi64(_mm_castpd_si128(_mm_add_pd(k, magic)), _mm_set1_epi64x(1023)), 52);
  return _mm_mul_pd(p, _mm_castsi128_pd(e));
}
#endif

#endif
