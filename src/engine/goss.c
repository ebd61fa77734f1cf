/* goss.c: gradient-based one-side sampling (goss.h). */
#include <math.h>
#include <string.h>
#include "goss.h"
#include "rng.h"
#include "select.h"
#include "threads.h"

int hb_goss_sample(double *gh, int n, int K, double top_rate, double other_rate, uint64_t seed, uint64_t round,
                   double *scratch, int *bag, uint8_t *in_bag, int nthreads) {
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
  int top = (int)ceil(top_rate * n);
  if (top > n) top = n;
  if (top < 1) top = 1;
  /* the threshold: the top-th largest size (a copy is reordered) */
  double *sel = scratch + n;
  memcpy(sel, scratch, sizeof(double) * (size_t)n);
  const double thr = hb_select_kth(sel, 1, n, n - top);
  int above = 0;
  for (int i = 0; i < n; i++) above += scratch[i] > thr;
  int ties = top - above;  /* rows equal to the threshold that are kept, in row order */
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
    if (in_bag[i] || !(hb_rng_bits_unif(hb_rng_key_tail(head, (uint64_t)i)) < keep)) continue;
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
  return m;
}
