/* goss.c: gradient-based one-side sampling (goss.h). */
#include <math.h>
#include <string.h>
#include "goss.h"
#include "dist.h"
#include "error.h"
#include "rng.h"
#include "select.h"
#include "threads.h"

int hb_goss_sample(double *gh, int n, int K, double top_rate, double other_rate, uint64_t seed, uint64_t round,
                   double *scratch, int *bag, uint8_t *in_bag, int nthreads) {
  int m = 0;
  hb_goss_sample_dist(gh, n, K, top_rate, other_rate, seed, round, scratch, bag, in_bag, nthreads, NULL, 0, n, &m);
  return m;
}

int64_t hb_goss_top(double top_rate, int64_t n) {
  int64_t top = (int64_t)ceil(top_rate * (double)n);
  if (top > n) top = n;
  return top < 1 ? 1 : top;
}

int hb_goss_select_byte(const int64_t *cnt, int64_t *r) {
  int b = 0;
  while (b < 255 && *r >= cnt[b]) *r -= cnt[b++];
  return b;
}

int64_t hb_goss_ties_before(const int64_t *c, int rank, int64_t top) {
  int64_t ties = top - c[0];
  for (int q = 0; q < rank; q++) ties -= c[1 + q];
  return ties;
}

static uint64_t size_bits(double v) {  /* sizes are >= 0 (never NaN): their bits order as they do */
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* The value of rank r (0-based, increasing) among every shard's n sizes:
 * a radix select over the bit patterns, a byte at a time from the top, the
 * counts of each byte value summed over the processes (8 exact sums of 256
 * integers). */
static int select_dist(const hb_dist_t *dist, const double *v, int n, int64_t r, double *out) {
  uint64_t prefix = 0;
  int64_t cnt[256];
  for (int shift = 56; shift >= 0; shift -= 8) {
    memset(cnt, 0, sizeof cnt);
    for (int i = 0; i < n; i++) {
      const uint64_t u = size_bits(v[i]);
      if (shift == 56 || (u >> (shift + 8)) == prefix) cnt[(u >> shift) & 255]++;
    }
    int st = hb_dist_sum_i64(dist, cnt, 256);
    if (st != HB_OK) return st;
    prefix = (prefix << 8) | (uint64_t)hb_goss_select_byte(cnt, &r);
  }
  memcpy(out, &prefix, sizeof *out);
  return HB_OK;
}

int hb_goss_sample_dist(double *gh, int n, int K, double top_rate, double other_rate, uint64_t seed,
                        uint64_t round, double *scratch, int *bag, uint8_t *in_bag, int nthreads,
                        const hb_dist_t *dist, int64_t row0, int64_t nglobal, int *m_out) {
  *m_out = 0;
  if (dist && dist->size <= 1) dist = NULL;
  const int nth = hb_threads_use(nthreads);
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int k = 0; k < K; k++) {
      const size_t j = 2 * ((size_t)k * (size_t)n + (size_t)i);
      s += fabs(gh[j] * gh[j + 1]);
    }
    scratch[i] = s;
  }
  const int64_t N = dist ? nglobal : n;  /* every shard's rows (dist.h) */
  const int64_t top = hb_goss_top(top_rate, N);
  /* the threshold: the top-th largest size over all rows */
  double thr;
  int64_t ties;  /* rows equal to the threshold that are kept here, in (global) row order */
  if (!dist) {
    double *sel = scratch + n;  /* a copy is reordered */
    memcpy(sel, scratch, sizeof(double) * (size_t)n);
    thr = hb_select_kth(sel, 1, n, (int)(n - top));
    int above = 0;
    for (int i = 0; i < n; i++) above += scratch[i] > thr;
    ties = top - above;
  } else {
    int st = select_dist(dist, scratch, n, N - top, &thr);
    /* rows above it everywhere, and the rows equal to it on each process:
     * the lower ranks' (earlier global rows) are kept first */
    int64_t *c = st == HB_OK ? hb_calloc((size_t)dist->size + 1, sizeof(int64_t)) : NULL;
    if (st == HB_OK && !c) st = hb_error_set(HB_ERR_NOMEM, "out of memory sampling rows (GOSS)");
    if (st == HB_OK) {  /* a failed allocation on one process fails the sum on all (hb_dist_any) */
      for (int i = 0; i < n; i++) {
        c[0] += scratch[i] > thr;
        c[1 + dist->rank] += scratch[i] == thr;
      }
    }
    const int bad = hb_dist_any(dist, st != HB_OK);  /* every process asks, whatever its own status */
    if (st != HB_OK || bad) {
      hb_free(c);
      return st != HB_OK ? st : hb_error_set(HB_ERR_NOMEM, "out of memory sampling rows (GOSS) on another process");
    }
    if ((st = hb_dist_sum_i64(dist, c, (int64_t)dist->size + 1)) != HB_OK) {
      hb_free(c);
      return st;
    }
    ties = hb_goss_ties_before(c, dist->rank, top);
    hb_free(c);
  }
  for (int i = 0; i < n; i++) {
    in_bag[i] = scratch[i] > thr;
    if (!in_bag[i] && scratch[i] == thr && ties > 0) {
      in_bag[i] = 1;
      ties--;
    }
  }
  const double keep = other_rate / (1.0 - top_rate), amp = (1.0 - top_rate) / other_rate;
  const uint64_t head = hb_rng_key_head(seed, HB_RNG_GOSS, round);
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int i = 0; i < n; i++) {
    if (in_bag[i] || !(hb_rng_bits_unif(hb_rng_key_tail(head, (uint64_t)(row0 + i))) < keep)) continue;
    in_bag[i] = 2;
    for (int k = 0; k < K; k++) {
      const size_t j = 2 * ((size_t)k * (size_t)n + (size_t)i);
      gh[j] *= amp;
      gh[j + 1] *= amp;
    }
  }
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (in_bag[i]) bag[m++] = i;
    in_bag[i] = in_bag[i] != 0;
  }
  *m_out = m;
  return HB_OK;
}
