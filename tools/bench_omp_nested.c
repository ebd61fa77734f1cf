/* bench_omp_nested.c: what a nested OpenMP team costs on this machine (not
 * a test; nothing links the engine), the measurement behind the CPU
 * learner's class workers being POSIX threads (learner_cpu.c):
 *
 *   cc -O2 -fopenmp tools/bench_omp_nested.c -o /tmp/bench_omp_nested
 *   /tmp/bench_omp_nested
 *
 * For outer x inner threads (1 x 16 to 8 x 2), each outer thread starts an
 * inner parallel region 20,000 times, then runs 20,000 barriers in one;
 * microseconds each, the slowest outer thread's. libgomp makes a nested
 * team's threads anew at every region (hundreds of microseconds), where a
 * top-level team's cost a few (tools/bench_omp.c). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
static volatile double sink[64 * 16];
int main(int argc, char **argv) {
  int reps = 20000;
  omp_set_max_active_levels(2);
  int outs[] = {1, 2, 4, 5, 8}, ins[] = {16, 8, 4, 3, 2};
  for (int c = 0; c < 5; c++) {
    int o = outs[c], in = ins[c];
    double region = 0, barrier = 0;
#pragma omp parallel num_threads(o) reduction(max : region, barrier)
    {
#pragma omp parallel num_threads(in)
      sink[0] += 1;
      double t0 = omp_get_wtime();
      for (int r = 0; r < reps; r++) {
#pragma omp parallel num_threads(in)
        sink[(omp_get_thread_num() % 64) * 16] += 1;
      }
      double t1 = omp_get_wtime();
#pragma omp parallel num_threads(in)
      {
        for (int r = 0; r < reps; r++) {
#pragma omp barrier
        }
      }
      double t2 = omp_get_wtime();
      region = (t1 - t0) / reps * 1e6;
      barrier = (t2 - t1) / reps * 1e6;
    }
    printf("outer %d x inner %d: region %.2f us, barrier %.2f us (worst outer thread)\n", o, in, region, barrier);
  }
  return 0;
}
