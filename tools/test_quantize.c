/* test_quantize.c: engine-only checks of gradient quantization (quantize.h):
 * stochastic rounding is unbiased and stays in range, rounding to nearest is
 * nearest, the draws depend on (seed, tree, row) only, and the packed
 * 32-bit and 64-bit sums the histogram kernels use unpack exactly, negative
 * gradients included. Run by tools/Makefile. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "error.h"
#include "quantize.h"
#include "rng.h"

#include "test_check.h"

static void test_levels(void) {
  CHECK(hb_quant_grad_levels(2) == 1 && hb_quant_hess_levels(2) == 3, "2 bits");
  CHECK(hb_quant_grad_levels(4) == 7 && hb_quant_hess_levels(4) == 15, "4 bits");
  CHECK(hb_quant_grad_levels(8) == 127 && hb_quant_hess_levels(8) == 255, "8 bits");
  CHECK(hb_quant_scale(0.0, 7) == 1.0, "a zero range still has a scale");
  /* rows16: the most rows whose sums fit the 16-bit halves */
  for (int b = 2; b <= 8; b++) {
    int lg = hb_quant_grad_levels(b), lh = hb_quant_hess_levels(b), r = hb_quant_rows16(lg, lh);
    CHECK((long)r * lg <= 32767 && (long)r * lh <= 65535 && ((long)(r + 1) * lg > 32767 || (long)(r + 1) * lh > 65535),
          "rows16 for %d bits is %d", b, r);
  }
}

/* The mean of many stochastic roundings of one value is that value (within
 * four standard errors), and every rounding is floor or ceiling of it. */
static void test_unbiased(void) {
  const double scale = 0.37;
  const double values[] = {0.0, 0.1, -0.1, 1.234, -2.5, 2.59, -2.59};
  const int draws = 200000;
  for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
    double v = values[k], x = v / scale, sum = 0, sumsq = 0;
    int in_range = 1;
    for (int i = 0; i < draws; i++) {
      int q = hb_quant_round(v, scale, hb_quant_uniform(11, 3, (uint64_t)i, 0), 1, -7, 7);
      in_range = in_range && (q == (int)floor(x) || q == (int)ceil(x));
      sum += q;
      sumsq += (double)q * q;
    }
    double mean = sum / draws, var = sumsq / draws - mean * mean, se = sqrt(var / draws) + 1e-12;
    CHECK(in_range, "value %g: a rounding is neither floor nor ceiling of %g", v, x);
    CHECK(fabs(mean - x) <= 4 * se + 1e-12, "value %g: mean %.6f of the roundings, expected %.6f (se %.2g)", v, mean, x,
          se);
  }
}

static void test_range_and_nearest(void) {
  /* the largest magnitude itself, and values a rounding error beyond it */
  const double mx = 0.3, scale = hb_quant_scale(mx, 7);
  for (int i = 0; i < 1000; i++) {
    double u = hb_quant_uniform(5, 1, (uint64_t)i, 0);
    int a = hb_quant_round(mx, scale, u, 1, -7, 7), b = hb_quant_round(-mx, scale, u, 1, -7, 7);
    int c = hb_quant_round(nextafter(mx, 1.0), scale, u, 1, -7, 7);
    CHECK(a == 7 && b == -7 && c == 7, "extremes: %d %d %d", a, b, c);
  }
  CHECK(hb_quant_round(1.26, 0.5, 0.99, 0, -7, 7) == 3, "nearest: 2.52 -> 3");
  CHECK(hb_quant_round(1.24, 0.5, 0.99, 0, -7, 7) == 2, "nearest: 2.48 -> 2");
  CHECK(hb_quant_round(-1.24, 0.5, 0.0, 0, -7, 7) == -2, "nearest: -2.48 -> -2");
  CHECK(hb_quant_round(3.0, 0.1, 0.5, 0, 0, 15) == 15, "a hessian beyond the range is clamped");
  CHECK(hb_quant_round(-0.01, 0.1, 0.99, 1, 0, 15) == 0, "a hessian never goes below zero");
}

/* The branch-free rounding equals the definition, floor(v / scale + u)
 * clamped to [lo, hi], everywhere: exact integers and values a hair either
 * side of them, negative ones (where truncation rounds up), far out of
 * range, both modes. */
static void test_round_is_floor(void) {
  const double scale = 0.25;
  int bad = 0;
  for (int i = -4000; i <= 4000; i++) {
    double base = i / 160.0;
    const double vs[] = {base, nextafter(base, -1e9), nextafter(base, 1e9), base * 1e3, base * 1e300};
    for (int k = 0; k < 5; k++)
      for (int st = 0; st < 2; st++) {
        double v = vs[k], u = st ? hb_quant_uniform(9, 4, (uint64_t)(i + 5000), k & 1) : 0.5;
        int lo = st ? -7 : 0, hi = st ? 7 : 15;
        double x = floor(v / scale + u);
        int want = x < lo ? lo : x > hi ? hi : (int)x;
        bad += hb_quant_round(v, scale, u, st, lo, hi) != want;
      }
  }
  CHECK(bad == 0, "%d roundings differ from floor(v / scale + u) clamped", bad);
}

static void test_draws(void) {
  /* A pure function of (seed, tree, row, which): the same call, the same draw. */
  CHECK(hb_quant_uniform(1, 2, 3, 0) == hb_quant_uniform(1, 2, 3, 0), "repeatable");
  CHECK(hb_quant_uniform(1, 2, 3, 0) != hb_quant_uniform(1, 2, 3, 1), "gradient and hessian draws differ");
  CHECK(hb_quant_uniform(1, 2, 3, 0) != hb_quant_uniform(1, 3, 3, 0), "trees differ");
  CHECK(hb_quant_uniform(1, 2, 3, 0) != hb_quant_uniform(2, 2, 3, 0), "seeds differ");
  double lo = 1, hi = 0;
  for (int i = 0; i < 100000; i++) {
    double u = hb_quant_uniform(9, 0, (uint64_t)i, i & 1);
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
  }
  CHECK(lo >= 0 && hi < 1 && lo < 1e-3 && hi > 1 - 1e-3, "draws in [0, 1): %g .. %g", lo, hi);
  /* the per-tree head and per-row tail (the CPU's rounding pass) give the
   * same draws as the whole key (the GPU's) */
  int differ = 0;
  const uint64_t seeds[3] = {0, 9, 0xffffffffffffffffULL}, trees[3] = {0, 7, 123456789};
  for (int s = 0; s < 3; s++)
    for (int t = 0; t < 3; t++) {
      uint64_t head = hb_quant_head(seeds[s], trees[t]);
      for (uint64_t r = 0; r < 2000; r += 1 + r / 7)
        for (int w = 0; w < 2; w++)
          differ += hb_quant_uniform_from(head, r * 977, w) != hb_quant_uniform(seeds[s], trees[t], r * 977, w);
    }
  CHECK(differ == 0, "%d draws from a tree's head differ from the whole key's", differ);
  /* and the stream itself is the one models were trained with (values of
   * the key before it was split in two, 47db664): a changed constant
   * changes every quantized model */
  CHECK(hb_rng_key(1, HB_RNG_QUANTIZE, 2, 3) == 0x6314004d5d4ca655ULL, "known key 1");
  CHECK(hb_rng_key(~0ULL, HB_RNG_QUANTIZE, 7, 1955) == 0x2c56f98e311bb632ULL, "known key 2");
  CHECK(hb_quant_uniform_from(hb_quant_head(20261125, 11), 123456, 1) == 0.57897639903967124, "known draw");
}

/* Packed sums unpack exactly: 16-bit halves in an int32 (as the GPU's shared
 * accumulators), 32-bit halves in an int64 (the flushed sums). */
static void test_packing(void) {
  for (int b = 2; b <= 8; b++) {
    int lg = hb_quant_grad_levels(b), lh = hb_quant_hess_levels(b), rows = hb_quant_rows16(lg, lh);
    for (int trial = 0; trial < 4; trial++) {
      int32_t p32 = 0;
      long long g = 0, h = 0, p64 = 0;
      for (int i = 0; i < rows; i++) {
        /* extremes on purpose: all most negative, all largest, or random */
        uint64_t bits = hb_rng_key(7, (uint64_t)b, (uint64_t)trial, (uint64_t)i);
        int gq = trial == 0 ? -lg : trial == 1 ? lg : (int)(bits % (uint64_t)(2 * lg + 1)) - lg;
        int hq = trial == 0 ? lh : trial == 1 ? lh : (int)((bits >> 20) % (uint64_t)(lh + 1));
        p32 += gq * 65536 + hq;
        g += gq;
        h += hq;
      }
      int32_t uh = p32 & 0xffff, ug = (p32 - uh) / 65536;  /* exact: no shift of a negative */
      CHECK(ug == g && uh == h, "%d bits, trial %d: packed 32 -> (%d, %d), sums (%lld, %lld)", b, trial, ug, uh, g, h);
      p64 = (long long)ug * 4294967296LL + uh;  /* flush */
      p64 += (long long)ug * 4294967296LL + uh;  /* and a second block's */
      long long vh = p64 & 0xffffffffLL, vg = (p64 - vh) / 4294967296LL;
      CHECK(vg == 2 * g && vh == 2 * h, "%d bits, trial %d: packed 64 -> (%lld, %lld)", b, trial, vg, vh);
    }
  }
}

/* The CPU's rounding pass (hb_quantize_tree, vectorized where the machine
 * has SSE2) gives every row the value of the scalar rule the GPU runs:
 * hb_quant_round with the row's draws and the pass's own scales, on values
 * at exact levels, a hair either side of them, at the largest magnitudes,
 * zeros and negative zeros; both rounding modes, 4 and 8 bits, a varying and
 * a constant hessian; rows enough for the threads to split them. */
static void test_pass_is_rule(void) {
  const int n = 200003;
  double *gh = malloc(sizeof(double) * 2 * (size_t)n);
  int32_t *q = malloc(sizeof(int32_t) * (size_t)n);
  if (!gh || !q) { CHECK(0, "out of memory"); free(gh); free(q); return; }
  for (int bits = 4; bits <= 8; bits += 4)
    for (int st = 0; st < 2; st++)
      for (int consth = 0; consth < 2; consth++) {
        hb_config_t cfg;
        hb_config_default(&cfg);
        cfg.grad_bits = bits;
        cfg.stochastic_rounding = st;
        cfg.seed = 77;
        const double mg = 0.75, mh = 0.25;
        const int lg = hb_quant_grad_levels(bits), lh = hb_quant_hess_levels(bits);
        for (int i = 0; i < n; i++) {
          double lvg = (double)((i % (2 * lg + 1)) - lg) * (mg / lg), lvh = (double)(i % (lh + 1)) * (mh / lh);
          double g, h;
          switch (i % 6) {
            case 0: g = lvg; h = lvh; break;
            case 1: g = nextafter(lvg, -1.0); h = nextafter(lvh, 1.0); break;
            case 2: g = nextafter(lvg, 1.0); h = nextafter(lvh, -1.0); break;
            case 3: g = (i & 8) ? mg : -mg; h = mh; break;
            case 4: g = (i & 8) ? 0.0 : -0.0; h = 0.0; break;
            default: g = sin((double)i) * mg; h = (0.5 + 0.5 * cos((double)i)) * mh; break;
          }
          gh[2 * (size_t)i] = g;
          gh[2 * (size_t)i + 1] = consth ? 0.125 : (h < 0 ? 0 : h);
        }
        gh[0] = mg;                          /* the largest magnitudes are met */
        gh[1] = consth ? 0.125 : mh;
        hb_qtree_t qt;
        int status = hb_quantize_tree(&cfg, 5, n, gh, q, &qt, 2);
        CHECK(status == HB_OK, "the pass failed");
        if (status != HB_OK) continue;
        const uint64_t head = hb_quant_head(cfg.seed, 5);
        int bad = 0, first = -1;
        for (int i = 0; i < n; i++) {
          int g = hb_quant_round(gh[2 * (size_t)i], qt.sg, hb_quant_uniform_from(head, (uint64_t)i, 0), st, -lg, lg);
          int h = consth ? 1
                         : hb_quant_round(gh[2 * (size_t)i + 1], qt.sh, hb_quant_uniform_from(head, (uint64_t)i, 1),
                                          st, 0, lh);
          if (q[i] != g * 65536 + h) { bad++; if (first < 0) first = i; }
        }
        CHECK(bad == 0, "%d bits, stochastic %d, constant hessian %d: %d rows differ from the rule (first %d)", bits,
              st, consth, bad, first);
        double ag = 0, ah = 0;  /* the scales come from the largest magnitudes (a hair above mg here) */
        for (int i = 0; i < n; i++) {
          if (fabs(gh[2 * (size_t)i]) > ag) ag = fabs(gh[2 * (size_t)i]);
          if (gh[2 * (size_t)i + 1] > ah) ah = gh[2 * (size_t)i + 1];
        }
        CHECK(ag > mg && qt.sg == ag / lg && qt.sh == (consth ? 0.125 : ah / lh), "scales %g %g", qt.sg, qt.sh);
      }
  free(gh);
  free(q);
}

/* Gradients so small that max / levels underflows to 0: the scale is 1
 * (every value rounds as 0 would), never a division by zero. */
static void test_denormal_scale(void) {
  double gh[8] = {4.9e-324, 0.25, 0.0, 0.25, -4.9e-324, 0.25, 9.9e-324, 0.25};
  int32_t q[4];
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.grad_bits = 8;
  hb_qtree_t qt;
  CHECK(hb_quant_scale(9.9e-324, 127) == 1.0, "an underflowing scale is 1");
  CHECK(hb_quantize_tree(&cfg, 0, 4, gh, q, &qt, 1) == HB_OK && qt.sg == 1.0, "denormal gradients quantize");
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= q[i] >= 0 * 65536 && q[i] <= 1 * 65536 + 1;
  CHECK(ok, "denormal gradients round to 0 or 1: %d %d %d %d", q[0], q[1], q[2], q[3]);
}

/* hb_fixed_exponent against its definition, the largest e with
 * m 2^e rows <= 2^bits, checked with exact power-of-two scalings: where
 * 2^bits / (m rows) is a normal double it is that quotient's ilogb (the
 * rule it replaced), and below that range, where the quotient overflows,
 * still the largest such e (up to 1074), not 1074 outright. */
static void test_fixed_exponent(void) {
  const int bits[3] = {30, 52, 62};
  int bad_def = 0, bad_ilogb = 0, n_tiny = 0;
  srand(7);
  for (int t = 0; t < 200000; t++) {
    const int b = bits[t % 3];
    const double m = ldexp(0.5 + 0.5 * rand() / ((double)RAND_MAX + 1), -1070 + rand() % 2090);
    const double rows = t % 5 == 0 ? 1.0 : floor(1 + ldexp(rand() / ((double)RAND_MAX + 1), rand() % 32));
    const int e = hb_fixed_exponent(m, rows, b);
    const double p = m * rows, q = ldexp(1.0, b) / p;
    if (isnormal(p) && isnormal(q) && ilogb(q) <= 1074) bad_ilogb += e != ilogb(q);
    if (!isnormal(q)) n_tiny++;
    /* m 2^e rows against 2^bits, both sides scaled so nothing overflows:
     * within two roundings (the product and the quotient) of the bound */
    const double at = ldexp(m, e - b) * rows, next = ldexp(m, e + 1 - b) * rows;
    if (!(at <= 1 + 1e-15) || (e < 1074 && !(next > 1 - 1e-15))) bad_def++;
  }
  CHECK(bad_ilogb == 0, "%d exponents differ from ilogb(2^bits / (m rows)) where that is a normal double",
        bad_ilogb);
  CHECK(bad_def == 0, "%d exponents are not the largest e with m 2^e rows <= 2^bits (up to 1074)", bad_def);
  CHECK(n_tiny > 1000, "only %d draws where the quotient is not a normal double", n_tiny);
  /* the case the old rule got wrong: m rows = 1e-296, about 2^-983, so 2^52 / (m rows)
   * overflows, yet e = 1035 already puts every value's sum within 2^52 units */
  const int e = hb_fixed_exponent(1e-300, 1e4, 52);
  CHECK(e == 52 + 983 - 1 || e == 52 + 983, "m 1e-300, 10^4 rows, 52 bits: e = %d, not 1034 or 1035", e);
  CHECK(ldexp(1e-300, e) * 1e4 <= ldexp(1.0, 52) && ldexp(1e-300, e + 1) * 1e4 > ldexp(1.0, 52),
        "m 1e-300: e = %d is not the largest", e);
  CHECK(hb_fixed_exponent(ldexp(1.0, -1074), 1.0, 30) == 1074, "the smallest double: the finest grid, 1074");
  CHECK(hb_fixed_exponent(0.0, 10.0, 30) == 0 && hb_fixed_exponent(INFINITY, 10.0, 30) == 0 &&
            hb_fixed_exponent(NAN, 10.0, 30) == 0,
        "zero, infinite and NaN magnitudes give 0");
}

/* hb_exact_sums_dist (exact_sums' grid) gives, value for value and bit for
 * bit, ldexp(nearbyint(ldexp(x, e)), -e) with e = hb_fixed_exponent(the
 * largest |x|, rows, 52): on its fast path (products by powers of two and
 * an addition of 2^52) and on the calls it takes for exponents beyond
 * +-1000; ties to even, negative ties, signed zeros, subnormal and
 * largest values included. The rounded values' sums are then the same in
 * any order. */
static void test_exact_grid(void) {
  const int n = 4000;
  double *gh = malloc(sizeof(double) * 2 * (size_t)n), *ref = malloc(sizeof(double) * 2 * (size_t)n);
  if (!gh || !ref) { CHECK(0, "out of memory"); free(gh); free(ref); return; }
  /* the scales: ordinary, large (e about -950, near the largest finite gradients accepted), tiny
   * (e about 740), e = 999, 1000 (the last on the fast path) and 1001 (the first of the calls), and
   * subnormal values (e about 1070: the calls) */
  const int scale[9] = {0, 40, -60, 990, -1030, -700, -958, -959, -960};
  int bad = 0, bad_sum = 0;
  srand(11);
  for (int k = 0; k < 9; k++) {
    for (int i = 0; i < 2 * n; i++) {
      double u = (double)rand() / RAND_MAX - 0.5;
      if (i % 97 == 0) u = 0.0;
      if (i % 89 == 0) u = -0.0;
      if (i % 83 == 0) u = ldexp(u, -40);  /* far below the largest: a few units or none */
      gh[i] = ldexp(u, scale[k]);
    }
    /* exact ties on the grid: half units, either sign */
    double mg = 0, mh = 0;
    for (int i = 0; i < n; i++) {
      if (fabs(gh[2 * i]) > mg) mg = fabs(gh[2 * i]);
      if (fabs(gh[2 * i + 1]) > mh) mh = fabs(gh[2 * i + 1]);
    }
    const int eg = hb_fixed_exponent(mg, (double)n, 52), eh = hb_fixed_exponent(mh, (double)n, 52);
    for (int i = 1; i < 60; i++) {
      gh[2 * i] = ldexp((i % 2 ? 1 : -1) * (i + 0.5), -eg);
      gh[2 * i + 1] = ldexp((i % 3 ? 1 : -1) * (2 * i + 0.5), -eh);
    }
    gh[0] = (k % 2 ? -1 : 1) * mg;  /* the largest magnitude itself */
    gh[1] = mh;
    for (int i = 0; i < n; i++) {
      ref[2 * i] = ldexp(nearbyint(ldexp(gh[2 * i], eg)), -eg);
      ref[2 * i + 1] = ldexp(nearbyint(ldexp(gh[2 * i + 1], eh)), -eh);
    }
    const int st = hb_exact_sums_dist(n, gh, 2, NULL, n);
    CHECK(st == HB_OK, "scale 2^%d: status %d", scale[k], st);
    for (int i = 0; i < 2 * n; i++) bad += memcmp(&gh[i], &ref[i], sizeof(double)) != 0;
    /* forward and backward sums of the rounded values: the same double */
    double fw = 0, bw = 0;
    for (int i = 0; i < n; i++) fw += gh[2 * i];
    for (int i = n - 1; i >= 0; i--) bw += gh[2 * i];
    bad_sum += fw != bw;
  }
  CHECK(bad == 0, "%d rounded values differ from ldexp(nearbyint(ldexp(x, e)), -e)", bad);
  CHECK(bad_sum == 0, "%d of 9 scales: the rounded gradients' sum depends on the order", bad_sum);
  /* one row: its value scaled to 2^51-2^52 units, where the addition of
   * 2^52 is closest to losing the units; exact ties there too */
  int bad1 = 0, n_tie = 0;
  for (int t = 0; t < 20000; t++) {
    double p[2], q[2];
    p[0] = ldexp((t % 2 ? -1 : 1) * (0.5 + 0.5 * rand() / ((double)RAND_MAX + 1)), -30 + rand() % 60);
    p[1] = ldexp(0.5 + 0.5 * rand() / ((double)RAND_MAX + 1), -30 + rand() % 60);
    if (t % 4 == 0) {  /* a tie: 2^52 - 1/2 - j units, j < 1000 */
      const double v = 4503599627370495.5 - (double)(rand() % 1000);
      p[0] = ldexp(t % 8 ? v : -v, -30 + rand() % 60);
      const double u = ldexp(fabs(p[0]), hb_fixed_exponent(fabs(p[0]), 1.0, 52));
      n_tie += u - floor(u) == 0.5;
    }
    const int eg = hb_fixed_exponent(fabs(p[0]), 1.0, 52), eh = hb_fixed_exponent(p[1], 1.0, 52);
    q[0] = ldexp(nearbyint(ldexp(p[0], eg)), -eg);
    q[1] = ldexp(nearbyint(ldexp(p[1], eh)), -eh);
    bad1 += hb_exact_sums_dist(1, p, 1, NULL, 1) != HB_OK || memcmp(p, q, sizeof p) != 0;
  }
  CHECK(bad1 == 0, "one row near 2^52 units: %d of 20000 differ from ldexp(nearbyint(ldexp(x, e)), -e)", bad1);
  CHECK(n_tie > 1000, "one row: only %d exact ties", n_tie);
  free(gh);
  free(ref);
}

int main(void) {
  test_levels();
  test_unbiased();
  test_range_and_nearest();
  test_round_is_floor();
  test_draws();
  test_packing();
  test_pass_is_rule();
  test_denormal_scale();
  test_fixed_exponent();
  test_exact_grid();
  printf("test_quantize: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
