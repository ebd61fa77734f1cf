/* threads.h: the package's own thread count. OpenMP's global thread count is
 * never set; every parallel region says num_threads(hb_threads_use(n)). */
#ifndef HB_THREADS_H
#define HB_THREADS_H

/* HB_OMP(parallel for num_threads(nth) ...) is `#pragma omp parallel for
 * num_threads(nth) ...` when compiled with OpenMP and nothing without it, so
 * a build without OpenMP has no unknown pragmas (-Wunknown-pragmas) and the
 * loops simply run on the calling thread. Clauses may contain commas. */
#ifdef _OPENMP
#define HB_OMP_STR_(x) #x
#define HB_OMP(...) _Pragma(HB_OMP_STR_(omp __VA_ARGS__))
#else
#define HB_OMP(...)
#endif

/* Register the fork handler that makes a forked child single-threaded (see
 * threads.c); called once when the package is loaded. A no-op on Windows and
 * without OpenMP. */
void hb_threads_init(void);
/* 1 in a child made by fork() after hb_threads_init(): every count below is 1. */
int hb_threads_forked(void);
/* Cores available to OpenMP (1 when built without OpenMP). */
int hb_threads_cores(void);
/* Default: half the cores (at least 1), capped by OMP_THREAD_LIMIT. 1 in a
 * forked child, as are hb_threads_max() and hb_threads_use(). */
int hb_threads_default(void);
/* The most threads a request gets: 4 x cores, capped by OMP_THREAD_LIMIT. */
int hb_threads_max(void);
/* A request clamped to [1, hb_threads_max()]; requested <= 0 means default. */
int hb_threads_use(int requested);
/* The calling thread's number within its parallel region (0 outside one). */
int hb_threads_id(void);
/* Seconds on a wall clock, for the profiles' phase timers (omp_get_wtime;
 * without OpenMP C11's timespec_get, or where the C library lacks it the
 * processor time of the one thread). */
double hb_threads_wtime(void);
/* 1 when compiled with OpenMP. */
int hb_threads_have_openmp(void);

#endif
