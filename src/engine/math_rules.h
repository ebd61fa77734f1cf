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

#endif
