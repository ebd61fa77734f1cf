/* quantize.h: gradient quantization (Shi et al., "Quantized Training of
 * Gradient Boosting Decision Trees"), written once for the CPU and the GPU
 * learner so that both round every gradient to the same integer.
 *
 * A tree's gradients become integers in [-Lg, Lg] and its hessians in
 * [0, Lh], with Lg = 2^(bits-1) - 1 and Lh = 2^bits - 1: value / scale,
 * scale = the largest magnitude / L, rounded to an integer either
 * stochastically (floor(x + u), u uniform in [0, 1) drawn for (seed, tree,
 * row): unbiased, E = x) or to nearest (floor(x + 0.5)). A hessian that is the
 * same for every row (squared error without weights) is not quantized: every
 * row gets 1 and the scale is that hessian, so its sums stay exact.
 *
 * Sums of quantized values are integers, exact in any order: histograms,
 * their subtraction and the split search give the same result on any number
 * of threads and on the GPU. Only IEEE operations that every device rounds
 * the same way appear here (a division, an addition, a truncation). */
#ifndef HB_QUANTIZE_H
#define HB_QUANTIZE_H
#include <math.h>
#include <stdint.h>
#include "config.h"
#include "rng.h"

#ifdef __CUDACC__
#define HB_QFN static inline __host__ __device__
#else
#define HB_QFN static inline
#endif

/* The exponent of a fixed-point grid: the largest e with m 2^e rows <=
 * 2^bits, so that `rows` values of magnitude at most m, each a whole number
 * of units 2^-e, sum to at most 2^bits units (0 for m == 0, or m not
 * finite, which the callers reject). At most 1074: 2^-1074, the smallest
 * double, is the finest grid that holds anything, and every double is a
 * whole number of it. Taken from m's and rows' exponents apart: it equals
 * ilogb(2^bits / (m rows)) wherever that quotient is a normal double (the
 * same roundings, scaled by powers of two), and stays right where it
 * would overflow (m rows below about 2^-970). CPU and GPU alike. */
HB_QFN int hb_fixed_exponent(double m, double rows, int bits) {
  if (!(m > 0) || !(m <= 1.7976931348623157e308)) return 0;
  int em, er;
  const double fm = frexp(m, &em), fr = frexp(rows, &er);  /* fm, fr in [0.5, 1) */
  const int e = bits - em - er + ilogb(1.0 / (fm * fr));
  return e > 1074 ? 1074 : e;
}

/* Largest quantized gradient magnitude and hessian for `bits` bits. */
HB_QFN int hb_quant_grad_levels(int bits) { return (1 << (bits - 1)) - 1; }
HB_QFN int hb_quant_hess_levels(int bits) { return (1 << bits) - 1; }

/* The scale of values whose largest magnitude is `maxabs`, on `levels`
 * levels (a positive number even when every value is 0). */
HB_QFN double hb_quant_scale(double maxabs, int levels) {
  const double s = maxabs / levels;  /* 0 when maxabs is a denormal that underflows: then as if all were 0 */
  return s > 0 ? s : 1.0;
}

/* v / scale rounded, stochastically with u in [0, 1) or to nearest, and
 * kept within [lo, hi] (v / scale can land a rounding error past the largest
 * level). */
HB_QFN int hb_quant_round(double v, double scale, double u, int stochastic, int lo, int hi) {
  double x = v / scale + (stochastic ? u : 0.5);
  /* Kept within the integer bounds first (the same as clamping the floor),
   * then rounded down as truncation less one where that rounded up: no
   * branch, where floor() without SSE4.1 branches on every value, a coin
   * flip under stochastic rounding (half of the CPU's rounding pass). */
  x = x < lo ? (double)lo : x;
  x = x > hi ? (double)hi : x;
  int t = (int)x;
  return t - (x < (double)t);
}

/* The uniform draw that rounds the gradient (which = 0) or hessian (1) of
 * row `row` in tree `tree` (tree = round * num_class + class, as for feature
 * sampling): independent draws for the two. In two steps:
 * hb_quant_head(seed, tree) once per tree, then hb_quant_uniform_from(head,
 * row, which) per draw (the CPU's rounding pass); hb_quant_uniform does both
 * (the GPU's kernels). */
HB_QFN uint64_t hb_quant_head(uint64_t seed, uint64_t tree) { return hb_rng_key_head(seed, HB_RNG_QUANTIZE, tree); }
HB_QFN double hb_quant_uniform_from(uint64_t head, uint64_t row, int which) {
  return hb_rng_bits_unif(hb_rng_key_tail(head, 2 * row + (uint64_t)which));
}
HB_QFN double hb_quant_uniform(uint64_t seed, uint64_t tree, uint64_t row, int which) {
  return hb_quant_uniform_from(hb_quant_head(seed, tree), row, which);
}

/* Rows one 16-bit packed accumulator may sum before its gradient half
 * (signed, |sum| < 2^15) or hessian half (unsigned, < 2^16) could overflow. */
HB_QFN int hb_quant_rows16(int grad_levels, int hess_levels) {
  int a = 32767 / (grad_levels > 0 ? grad_levels : 1), b = 65535 / (hess_levels > 0 ? hess_levels : 1);
  return a < b ? a : b;
}

/* ---- the CPU's rounding pass (quantize.c) ---- */
#ifndef __CUDACC__
/* One tree's quantization: packed row values q[r] = g * 65536 + h, the
 * scales, and what refitting its leaves needs. */
typedef struct {
  const int32_t *q;       /* n packed values */
  double sg, sh;          /* value of one unit of g, of h */
  int rows16;             /* rows a 16-bit accumulator may sum */
  int refit;              /* leaf values from full precision (1) or from the quantized sums */
  int fg, fh;             /* refit sums: int64 fixed point with these exponents */
} hb_qtree_t;

/* Quantize the n rows' interleaved (g, h) pairs gh for tree `tree` of
 * cfg into q (n values) and describe the result in *out; scales come from
 * every row (as on the GPU). HB_ERR_INPUT when a gradient or hessian is not
 * finite. */
int hb_quantize_tree(const hb_config_t *cfg, uint64_t tree, int n, const double *gh, int32_t *q, hb_qtree_t *out,
                     int nthreads);
/* The same for one shard of a data-parallel training (dist.h): scales from
 * every shard's rows, draws keyed by the global row row0 + i, refit
 * exponents for nglobal rows; so each row gets the value one process gives it. */
struct hb_dist;
int hb_quantize_tree_dist(const hb_config_t *cfg, uint64_t tree, int n, const double *gh, int32_t *q,
                          hb_qtree_t *out, int nthreads, const struct hb_dist *dist, int64_t row0, int64_t nglobal);

/* Full precision with exact sums (exact_sums): each of the n rows' g and h
 * in gh rounded, in place and to nearest, to a multiple of 2^-e, one e for
 * g and one for h, chosen from the largest |g| (|h|) of every shard's rows
 * and nglobal so that nglobal of them, and so any sum of some of them, stay
 * below 2^53 units (2^52 before the half unit each rounding adds): every
 * such sum is then exact in a double, the same in any order of additions,
 * on any number of threads or processes. The grid step is absolute: about
 * 2^-52 of nglobal times the largest value (for 10M rows of binary log
 * loss, about 1e-9), so a row far smaller than the largest keeps fewer
 * digits; never finer than 2^-1074. HB_ERR_INPUT when a value is not finite. */
int hb_exact_sums_dist(int n, double *gh, int nthreads, const struct hb_dist *dist, int64_t nglobal);
#endif

#endif
