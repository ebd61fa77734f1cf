/* dist.h: data-parallel training across processes (DESIGN.md section 6).
 * The engine never calls MPI itself: a communicator is a small table of
 * collective operations that the caller fills in (src/dist_mpi.c does it
 * with MPI; tests may do it with anything). Every process holds a shard of
 * the training rows, in rank order: rank r's rows are global rows row0 ..
 * row0 + nrow - 1 of the concatenation of every shard. Each decision of the
 * learner is then a pure function of reduced integer sums, maxima and the
 * global row index, so N processes grow the tree one process grows on the
 * concatenated rows.
 *
 * A NULL communicator is one process: every helper below is then a no-op. */
#ifndef HB_DIST_H
#define HB_DIST_H
#include <stdint.h>

enum { HB_DIST_I64 = 0, HB_DIST_F64 = 1, HB_DIST_I32 = 2 };
/* HB_DIST_SUM_EXACT: a sum of doubles whose every partial sum is exact (each
 * value a multiple of one power of two, the total of their magnitudes within
 * 2^53 of it: exact_sums' grid), so any order of addition gives the same
 * double and the communicator may add in any order. */
enum { HB_DIST_SUM = 0, HB_DIST_MAX = 1, HB_DIST_MIN = 2, HB_DIST_SUM_EXACT = 3 };

typedef struct hb_dist hb_dist_t;
struct hb_dist {
  int rank, size;
  int local_rank;  /* rank among the processes on this machine (one GPU each) */
  void *ctx;
  /* In place over all processes: count values of `type` combined with `op`.
   * A sum of doubles must come out the same double on every process (the
   * MPI layer sums the processes' values in rank order). HB_OK or a status
   * with a message set. */
  int (*allreduce)(const hb_dist_t *dist, void *buf, int64_t count, int type, int op);
  /* Every process's nbytes bytes, concatenated in rank order, into *out
   * (hb_malloc'd, the caller frees it), with each process's byte count in
   * counts[0 .. size) when counts is not NULL. */
  int (*allgather)(const hb_dist_t *dist, const void *send, int64_t nbytes, void **out, int64_t *counts);
  /* Optional (NULL: the helpers below use allreduce instead). The same
   * reduction as allreduce, of values begin[size] values of an integer type
   * or with HB_DIST_SUM_EXACT, MAX or MIN, where this process needs only
   * values begin[rank] .. begin[rank + 1) of the result (begin[0] = 0,
   * nondecreasing): those end in place in buf, the rest of buf is left
   * unspecified. Half an allreduce's traffic (a reduce-scatter). */
  int (*reduce_scatter)(const hb_dist_t *dist, void *buf, const int64_t *begin, int type, int op);
};

/* Sums, maxima, minima in place (no-ops when dist is NULL or of size 1). */
int hb_dist_sum_i64(const hb_dist_t *dist, int64_t *v, int64_t n);
int hb_dist_sum_i32(const hb_dist_t *dist, int32_t *v, int64_t n);
int hb_dist_sum_f64(const hb_dist_t *dist, double *v, int64_t n);
/* The same for values on exact_sums' grid (HB_DIST_SUM_EXACT): no rank-order
 * gathering, the same result. */
int hb_dist_sum_f64_exact(const hb_dist_t *dist, double *v, int64_t n);
int hb_dist_max_f64(const hb_dist_t *dist, double *v, int64_t n);
int hb_dist_min_f64(const hb_dist_t *dist, double *v, int64_t n);
/* A reduction over all processes of which this one keeps only its block,
 * values begin[rank] .. begin[rank + 1) of the begin[size] in v (the
 * communicator's reduce_scatter, or an allreduce of all of them where it
 * has none); the rest of v is left unspecified. type HB_DIST_I64 or
 * HB_DIST_I32 with HB_DIST_SUM, or HB_DIST_F64 with HB_DIST_SUM_EXACT. */
int hb_dist_sum_block(const hb_dist_t *dist, void *v, const int64_t *begin, int type, int op);
/* 1 on every process when `flag` is nonzero on any (0 on error: the caller
 * then fails anyway). */
int hb_dist_any(const hb_dist_t *dist, int flag);
/* Agreement on a local step's status before the next collective operation:
 * a process that failed alone and went on would leave the others waiting in
 * that operation, or meet them in a different one. Returns st where it
 * failed; on the processes where st is HB_OK, HB_ERR_STATE ("another process
 * failed <what>; its error says why") when any process failed, else HB_OK.
 * Every process calls it at the same point. Without dist (one process): st. */
int hb_dist_agree(const hb_dist_t *dist, int st, const char *what);
/* How many agreements so far found a failure. A step that agrees at its end
 * on what failed after its last collective skips that agreement when one of
 * its own already found the failure: every process learnt it there, and
 * every process skips alike. */
long hb_dist_agreed_failures(void);
/* That end-of-step agreement: hb_dist_agree unless st failed and an
 * agreement since `mark` (hb_dist_agreed_failures() at the step's start)
 * found a failure. */
int hb_dist_agree_end(const hb_dist_t *dist, int st, long mark, const char *what);
/* Every process's n doubles concatenated in rank order into *out
 * (hb_malloc'd; *ntotal their number). Without dist, a copy. */
int hb_dist_gather_f64(const hb_dist_t *dist, const double *v, int64_t n, double **out, int64_t *ntotal);

#endif
