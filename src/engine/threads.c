/* threads.c: the package's own thread count (OpenMP's global one is never set). */
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(_OPENMP) && !defined(_WIN32)
#include <pthread.h>
#define HB_HAVE_ATFORK 1
#endif
#include "threads.h"

/* GNU OpenMP's thread pool does not survive fork(): the child inherits the
 * pool's bookkeeping but not its threads, so the child's first parallel
 * region waits for them forever (parallel::mclapply, future's multicore,
 * doMC after a multi-threaded training in the parent). As data.table does
 * (src/openmp-utils.c), a pthread_atfork() child handler marks the process as
 * a forked child, and every thread count below is then 1: a team of one never
 * touches the pool. Results do not change, since nothing the engine computes
 * depends on the thread count. The mark is per process: the parent keeps its
 * threads, and a fresh R (PSOCK clusters, callr, future's multisession) is
 * not a forked child. */
static int forked_child = 0;

#ifdef HB_HAVE_ATFORK
static void threads_after_fork_child(void) { forked_child = 1; }
#endif

void hb_threads_init(void) {
#ifdef HB_HAVE_ATFORK
  /* Once per load. glibc forgets a shared object's handlers when it is
   * unloaded (they are registered with its DSO handle), so a reload does not
   * leave a dangling one. A registration that fails (out of memory) only
   * loses the protection. */
  static int registered = 0;
  if (!registered && pthread_atfork(NULL, NULL, threads_after_fork_child) == 0) registered = 1;
#endif
}

int hb_threads_forked(void) { return forked_child; }

int hb_threads_have_openmp(void) {
#ifdef _OPENMP
  return 1;
#else
  return 0;
#endif
}

/* omp_get_num_procs() asks the kernel for the process's CPU affinity (a
 * system call) each time, and every parallel region asks for its thread
 * count: a profile of a small training spent 2-3% of its time there. The
 * count is taken once. */
int hb_threads_cores(void) {
#ifdef _OPENMP
  static _Atomic int cached = 0;
  int n = cached;
  if (n == 0) {
    n = omp_get_num_procs();
    if (n < 1) n = 1;
    cached = n;
  }
  return n;
#else
  return 1;
#endif
}

static int thread_limit(void) {
#ifdef _OPENMP
  int lim = omp_get_thread_limit();
  const char *env = getenv("OMP_THREAD_LIMIT");
  if (env) {
    int e = atoi(env);
    if (e > 0 && e < lim) lim = e;
  }
  return lim > 0 ? lim : 1;
#else
  return 1;
#endif
}

int hb_threads_default(void) {
  if (forked_child) return 1;
  int n = hb_threads_cores() / 2;
  if (n < 1) n = 1;
  int lim = thread_limit();
  return n < lim ? n : lim;
}

/* Oversubscription beyond a few threads per core only adds overhead, and a
 * huge request (nthreads = 1e6) makes the OpenMP runtime exhaust memory and
 * stacks creating threads: R crashes. So a request is capped here, once, for
 * every parallel region. */
#define HB_THREADS_PER_CORE 4

int hb_threads_max(void) {
  if (forked_child) return 1;
  int cores = hb_threads_cores();
  int n = cores > INT_MAX / HB_THREADS_PER_CORE ? INT_MAX : HB_THREADS_PER_CORE * cores;
  int lim = thread_limit();
  return n < lim ? n : lim;
}

int hb_threads_use(int requested) {
  if (forked_child) return 1;
  if (requested <= 0) return hb_threads_default();
  int max = hb_threads_max();
  return requested < max ? requested : max;
}

int hb_threads_id(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

double hb_threads_wtime(void) {
#ifdef _OPENMP
  return omp_get_wtime();
#elif defined(TIME_UTC)
  struct timespec ts;
  if (timespec_get(&ts, TIME_UTC) != TIME_UTC) return 0.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#else  /* a C library without timespec_get (mingw's msvcrt): processor time, one thread's */
  return (double)clock() / CLOCKS_PER_SEC;
#endif
}
