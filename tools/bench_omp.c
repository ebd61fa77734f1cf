/* bench_omp.c: what OpenMP's own steps cost on this machine, for reading
 * the engine's per-split times at many threads (not a test; nothing links
 * the engine):
 *
 *   cc -std=c11 -O2 -fopenmp tools/bench_omp.c -o /tmp/bench_omp
 *   /tmp/bench_omp [ITERS]
 *
 * For 2, 4, 8 and 16 threads: an empty parallel region (start and end of a
 * team, as each of a split's regions pays), one barrier inside a region,
 * and 100 equal items (a split search's 2 x 50 features) of ITERS steps of
 * a multiply-add chain each (default 900, about 2.3 us on the 16-core
 * host's Xeon, longer than the engine's 1.4 us scan of a 255-bin feature)
 * handed out dynamically one, three or six at a take, or statically, each
 * figure with its region's start and end; "ideal" is the items' own time
 * shared out whole among the threads, without the region. Each figure in microseconds, averaged over thousands
 * of repetitions. OMP_WAIT_POLICY changes the first two a great deal
 * (passive: the threads sleep between regions). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double sink[16 * 64];

/* one item: a dependent chain of ITERS multiply-adds */
static void item(int w, int iters) {
  double x = w + 1.0;
  for (int i = 0; i < iters; i++) x = x * 0.999999 + 1e-9;
  sink[omp_get_thread_num() % 64 * 16] += x;
}

/* 100 items at n threads, dynamically `chunk` a take (0: static), us each */
static double items_us(int n, int chunk, int iters, int reps) {
  const double t0 = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    if (chunk > 0) {
#pragma omp parallel for num_threads(n) schedule(dynamic, chunk)
      for (int w = 0; w < 100; w++) item(w, iters);
    } else {
#pragma omp parallel for num_threads(n) schedule(static)
      for (int w = 0; w < 100; w++) item(w, iters);
    }
  }
  return (omp_get_wtime() - t0) / reps * 1e6;
}

int main(int argc, char **argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 900;
  double t0 = omp_get_wtime();
  for (int r = 0; r < 10000; r++) item(r, iters);
  const double one = (omp_get_wtime() - t0) / 10000 * 1e6;
  printf("one item: %.2f us\n", one);
  const int counts[] = {2, 4, 8, 16};
  for (int k = 0; k < 4; k++) {
    const int n = counts[k], reps = 20000;
#pragma omp parallel num_threads(n)
    item(0, 10);  /* the team made once before timing */
    t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) {
#pragma omp parallel num_threads(n)
      sink[omp_get_thread_num() % 64 * 16] += 1;
    }
    const double region = (omp_get_wtime() - t0) / reps * 1e6;
    t0 = omp_get_wtime();
#pragma omp parallel num_threads(n)
    for (int r = 0; r < reps; r++) {
#pragma omp barrier
    }
    const double barrier = (omp_get_wtime() - t0) / reps * 1e6;
    printf("threads %2d: empty region %.2f us, barrier %.2f us, 100 items: dynamic 1 %.2f, 3 %.2f, 6 %.2f, "
           "static %.2f us (ideal %.2f)\n",
           n, region, barrier, items_us(n, 1, iters, 5000), items_us(n, 3, iters, 5000), items_us(n, 6, iters, 5000),
           items_us(n, 0, iters, 5000), one * ((100 + n - 1) / n));
  }
  return 0;
}
