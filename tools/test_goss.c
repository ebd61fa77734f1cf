/* test_goss.c: engine-only checks of gradient-based one-side sampling
 * (goss.h) against a brute force written here: every row's size sorted
 * (ties by row), the top share taken, the rest drawn from the same counter-
 * based draws and their (g, h) scaled; many ties, two classes, shares at
 * the edges. Run by tools/Makefile. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "goss.h"
#include "rng.h"
#include "test_check.h"

static const double *g_size;
static int by_size_desc(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  if (g_size[i] != g_size[j]) return g_size[i] > g_size[j] ? -1 : 1;
  return (i > j) - (i < j);
}

static void one_case(int n, int K, double top_rate, double other_rate, int levels, uint64_t seed, uint64_t round) {
  double *gh = malloc(sizeof(double) * 2 * (size_t)n * K), *want = malloc(sizeof(double) * 2 * (size_t)n * K);
  double *size = malloc(sizeof(double) * n), *scratch = malloc(sizeof(double) * 2 * n);
  int *order = malloc(sizeof(int) * n), *bag = malloc(sizeof(int) * n);
  uint8_t *in_bag = malloc(n), *want_in = calloc(n, 1);
  for (size_t j = 0; j < (size_t)n * K; j++) {
    double u = hb_rng_unif(seed + 1, 9, round, j);
    gh[2 * j] = levels ? floor(u * levels) / levels - 0.5 : u - 0.5;  /* few levels: many ties */
    gh[2 * j + 1] = levels ? 0.25 : 0.1 + u * u;
  }
  memcpy(want, gh, sizeof(double) * 2 * (size_t)n * K);
  for (int i = 0; i < n; i++) {
    size[i] = 0;
    for (int k = 0; k < K; k++) size[i] += fabs(gh[2 * ((size_t)k * n + i)] * gh[2 * ((size_t)k * n + i) + 1]);
    order[i] = i;
  }
  g_size = size;
  qsort(order, (size_t)n, sizeof(int), by_size_desc);
  int top = (int)ceil(top_rate * n);
  if (top > n) top = n;
  for (int r = 0; r < top; r++) want_in[order[r]] = 1;
  for (int i = 0; i < n; i++)
    if (!want_in[i] && hb_rng_unif(seed, HB_RNG_GOSS, round, (uint64_t)i) < other_rate / (1 - top_rate)) {
      want_in[i] = 2;
      for (int k = 0; k < K; k++) {
        want[2 * ((size_t)k * n + i)] *= (1 - top_rate) / other_rate;
        want[2 * ((size_t)k * n + i) + 1] *= (1 - top_rate) / other_rate;
      }
    }
  int m = hb_goss_sample(gh, n, K, top_rate, other_rate, seed, round, scratch, bag, in_bag, n % 3 + 1);
  int bad = 0, wm = 0, drawn = 0;
  for (int i = 0; i < n; i++) {
    bad += (in_bag[i] != 0) != (want_in[i] != 0);
    if (want_in[i]) {
      bad += m <= wm || bag[wm] != i;
      wm++;
    }
    drawn += want_in[i] == 2;
  }
  bad += memcmp(gh, want, sizeof(double) * 2 * (size_t)n * K) != 0;
  CHECK(bad == 0 && m == wm, "n %d K %d top %g other %g levels %d: %d differences, %d vs %d rows", n, K, top_rate,
        other_rate, levels, bad, m, wm);
  /* the rest is sampled at its rate (within five standard deviations) */
  double p = other_rate / (1 - top_rate), rest = n - top, sd = sqrt(rest * p * (1 - p));
  CHECK(fabs(drawn - rest * p) <= 5 * sd + 1, "rest sampled %d of %g, expected %g", drawn, rest, rest * p);
  free(gh); free(want); free(size); free(scratch); free(order); free(bag); free(in_bag); free(want_in);
}

int main(void) {
  const double tops[] = {0.2, 0.05, 0.5, 0.999}, others[] = {0.1, 0.3, 0.5, 0.001};
  for (int c = 0; c < 4; c++) {
    one_case(5000, 1, tops[c], others[c], 0, 7, 11);
    one_case(100000, 1, tops[c], others[c], 5, 9, 14);  /* enough rows for threads */
    one_case(5000, 1, tops[c], others[c], 6, 7, 12);  /* ties at the threshold */
    one_case(3001, 3, tops[c], others[c], 4, 8, 13);
  }
  one_case(1, 1, 0.2, 0.1, 0, 3, 1);   /* one row: it is the top */
  one_case(10, 1, 0.2, 0.8, 3, 4, 2);  /* top + other = 1: every row */
  printf("test_goss: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
