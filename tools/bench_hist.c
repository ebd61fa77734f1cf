/* bench_hist.c: the full-precision histogram kernel (hb_hist_build) alone,
 * timed by leaf size, for comparing engine variants on a noisy machine
 * (not a test; tools/hist-bench.sh builds and runs it).
 *
 *   bench_hist ROWS COLS THREADS [REPS [EXACT [INROW]]]
 *
 * ROWS x COLS uniform columns binned at max_bin 255 (the row block of the
 * CPU learner, built for THREADS threads), random (gradient, hessian)
 * pairs; leaves are random row subsets of 1k to ROWS rows (increasing row
 * order, as a leaf's rows are). Each leaf's histogram is built REPS times
 * (default 30) at THREADS threads; prints, per leaf size, the fastest and
 * the median time in microseconds and the checksum of the sums (equal
 * checksums: equal sums). The fastest of many runs is what a variant costs
 * where other work on the machine does not intrude. EXACT 1: the pairs on
 * exact_sums' grid and the row block told so (rb->exact: the parts then
 * follow the thread count), as the learner does by default; 0 (default):
 * plain doubles. INROW 1: the pairs copied into the rows' spare bytes
 * (hb_rowblock_set_gh), where the stride has room, as the learner does; 0
 * (default): read from the pairs' array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dataset.h"
#include "error.h"
#include "hist.h"
#include "quantize.h"
#include "rng.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_hist ROWS COLS THREADS [REPS [EXACT [INROW]]]\n");
    return 2;
  }
  const int n = atoi(argv[1]), p = atoi(argv[2]), th = atoi(argv[3]), reps = argc > 4 ? atoi(argv[4]) : 30;
  const int exact = argc > 5 ? atoi(argv[5]) : 0, inrow = argc > 6 ? atoi(argv[6]) : 0;
  if (n < 1024 || p < 2 || th < 1 || reps < 1 || (exact != 0 && exact != 1) || (inrow != 0 && inrow != 1)) {
    fprintf(stderr, "bench_hist: ROWS >= 1024, COLS >= 2, THREADS >= 1, REPS >= 1, EXACT and INROW 0 or 1\n");
    return 2;
  }
  double **x = malloc(sizeof(double *) * (size_t)p);
  hb_column_t *cols = malloc(sizeof(hb_column_t) * (size_t)p);
  double *yy = malloc(sizeof(double) * (size_t)n), *gh = malloc(2 * sizeof(double) * (size_t)n);
  int *rows = malloc(sizeof(int) * (size_t)n);
  if (!x || !cols || !yy || !gh || !rows) return 1;
  for (int f = 0; f < p; f++) {
    x[f] = malloc(sizeof(double) * (size_t)n);
    if (!x[f]) return 1;
    for (int i = 0; i < n; i++) x[f][i] = hb_rng_unif(21, 1, (uint64_t)f, (uint64_t)i);
    cols[f].type = HB_COL_DOUBLE; cols[f].dbl = x[f]; cols[f].i32 = NULL; cols[f].nlevels = 0;
  }
  for (int i = 0; i < n; i++) {
    yy[i] = hb_rng_unif(21, 2, 0, (uint64_t)i);
    gh[2 * i] = hb_rng_unif(21, 3, 0, (uint64_t)i) - 0.5;
    gh[2 * i + 1] = 0.05 + hb_rng_unif(21, 3, 1, (uint64_t)i);
  }
  hb_input_t in = { n, p, cols, NULL, yy, NULL, NULL, 0 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.nthreads = th;
  hb_dataset_t *d = NULL;
  hb_rowblock_t *rb = NULL;
  if (hb_dataset_create(&in, &bp, NULL, &d) != HB_OK || hb_rowblock_create(d, NULL, 0, th, &rb) != HB_OK) {
    fprintf(stderr, "bench_hist: %s\n", hb_error_message());
    return 1;
  }
  if (exact && hb_exact_sums_dist(n, gh, th, NULL, n) != HB_OK) {
    fprintf(stderr, "bench_hist: %s\n", hb_error_message());
    return 1;
  }
  rb->exact = exact;
  if (inrow) hb_rowblock_set_gh(rb, gh, th);
  hb_histbin_t *hist = malloc(sizeof(hb_histbin_t) * (size_t)d->total_bins);
  double *t = malloc(sizeof(double) * (size_t)reps);
  if (!hist || !t) return 1;
  printf("rows %d, cols %d, threads %d, reps %d, exact %d, pairs in the rows %d (stride %d)\n", n, p, th, reps, exact,
         inrow && rb->gh_src == gh, rb->stride);
  for (long long want = 1024; want <= n; want = want < n && 2 * want > n ? n : 2 * want) {  /* then all rows */
    const double frac = (double)want / n;
    int m = 0;
    double G = 0, H = 0;
    for (int i = 0; i < n; i++)
      if (frac >= 1.0 || hb_rng_unif(21, 4, (uint64_t)want, (uint64_t)i) < frac) {
        rows[m++] = i;
        G += gh[2 * i];
        H += gh[2 * i + 1];
      }
    for (int r = 0; r < reps; r++) {
      const double t0 = now_us();
      hb_hist_build(d, rb, frac >= 1.0 ? NULL : rows, m, gh, G, H, NULL, hist, th);
      t[r] = now_us() - t0;
    }
    double sum = 0;
    for (int k = 0; k < d->total_bins; k++) sum += hist[k].g * (1 + k % 7) + hist[k].h;
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    printf("leaf %8d rows: fastest %9.1f us, median %9.1f us, %6.2f ns a row; checksum %.17g\n", m, t[0],
           t[reps / 2], 1e3 * t[0] / m, sum);
  }
  free(t); free(hist); free(rows); free(gh); free(yy);
  for (int f = 0; f < p; f++) free(x[f]);
  free(x); free(cols);
  hb_rowblock_free(rb);
  hb_dataset_free(d);
  return 0;
}
