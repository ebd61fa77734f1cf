/* dist_mpi.c: the MPI communicator behind the engine's dist.h, over
 * MPI_COMM_WORLD. No R headers: src/r_mpi.c is the R glue. Built with MPI
 * when configure finds it (HB_WITH_MPI); otherwise the same functions say
 * "built without MPI". */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, nanosleep */
#include <stdlib.h>
#include <string.h>
#include "dist_mpi.h"
#include "error.h"

#ifdef HB_WITH_MPI
#include <mpi.h>
#include <time.h>

static hb_dist_t world;
static MPI_Comm exit_comm = MPI_COMM_NULL;  /* a copy of the world for the exit barrier alone */
static int world_ready = 0;
static int we_initialized = 0;
/* what this process handed to the engine's collectives (benchmarks): bytes,
 * seconds inside them (waiting for the other processes included), calls */
static double bytes_sent = 0, seconds_in = 0, calls_made = 0;

/* MPI counts are ints: collectives go in pieces of at most this many values. */
#define PIECE ((int64_t)1 << 26)

static int mpi_fail(int rc, const char *what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) strcpy(msg, "unknown MPI error");
  return hb_error_set(HB_ERR_STATE, "MPI %s failed on rank %d: %s", what, world.rank, msg);
}

/* Agreement inside a collective: 1 on every process when `failed` is
 * nonzero on any (rc the MPI status). */
static int any_failed(int failed, int *rc) {
  int v = failed != 0;
  *rc = MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

/* The rank-order sum's buffer for every process's values, kept between
 * calls. Every process makes the same reductions with the same counts, so
 * all grow it at the same call, and agree there on whether all could. */
static double *sum_buf = NULL;
static size_t sum_cap = 0;

static int allreduce_untimed(void *buf, int64_t count, int type, int op) {
  bytes_sent += (type == HB_DIST_I32 ? 4.0 : 8.0) * (double)count;
  if (type == HB_DIST_F64 && op == HB_DIST_SUM) {
    /* MPI may combine doubles in any order, and differently on different
     * ranks: gather every rank's values and add them in rank order, so
     * every process gets the same double. */
    const int P = world.size;
    const size_t need = (size_t)P * (size_t)(count < PIECE ? count : PIECE);
    if (need > sum_cap) {
      free(sum_buf);
      sum_buf = malloc(sizeof(double) * need);
      sum_cap = sum_buf ? need : 0;
      int rc = MPI_SUCCESS;
      const int bad = any_failed(!sum_buf, &rc);
      if (rc != MPI_SUCCESS) return mpi_fail(rc, "Allreduce");
      if (bad) {
        const int mine = !sum_buf;
        free(sum_buf);
        sum_buf = NULL;
        sum_cap = 0;
        return hb_error_set(HB_ERR_NOMEM, "%s reducing %lld values over MPI",
                            mine ? "out of memory" : "another process ran out of memory", (long long)count);
      }
    }
    double *all = sum_buf, *v = buf;
    for (int64_t i0 = 0; i0 < count; i0 += PIECE) {
      int m = (int)(count - i0 < PIECE ? count - i0 : PIECE);
      int rc = MPI_Allgather(v + i0, m, MPI_DOUBLE, all, m, MPI_DOUBLE, MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS) return mpi_fail(rc, "Allgather");
      for (int i = 0; i < m; i++) {
        double s = all[i];
        for (int r = 1; r < P; r++) s += all[(size_t)r * m + i];
        v[i0 + i] = s;
      }
    }
    if (sum_cap > ((size_t)1 << 20)) {  /* beyond 8 MB it is not kept (the same choice on every process) */
      free(sum_buf);
      sum_buf = NULL;
      sum_cap = 0;
    }
    return HB_OK;
  }
  MPI_Datatype t = type == HB_DIST_I64 ? MPI_INT64_T : type == HB_DIST_I32 ? MPI_INT32_T : MPI_DOUBLE;
  /* integers, maxima, minima, and sums of doubles that are exact in any order (HB_DIST_SUM_EXACT) */
  MPI_Op o = op == HB_DIST_SUM || op == HB_DIST_SUM_EXACT ? MPI_SUM : op == HB_DIST_MAX ? MPI_MAX : MPI_MIN;
  size_t w = type == HB_DIST_I64 ? sizeof(int64_t) : type == HB_DIST_I32 ? sizeof(int32_t) : sizeof(double);
  for (int64_t i0 = 0; i0 < count; i0 += PIECE) {
    int m = (int)(count - i0 < PIECE ? count - i0 : PIECE);
    int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)buf + (size_t)i0 * w, m, t, o, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "Allreduce");
  }
  return HB_OK;
}

/* Each process's count in a reduce-scatter (world.size ints, allocated
 * and agreed on at initialization). */
static int *rs_counts = NULL;

/* dist.h's reduce_scatter: MPI_Reduce_scatter in place, then this
 * process's block moved from the buffer's start to its own place. Doubles
 * only on exact_sums' grid, where MPI's order of addition cannot matter;
 * vectors beyond MPI's int counts take the allreduce. */
static int reduce_scatter_untimed(void *buf, const int64_t *begin, int type, int op) {
  const int P = world.size, me = world.rank;
  const int64_t count = begin[P];
  if (count > PIECE || (type == HB_DIST_F64 && op == HB_DIST_SUM)) return allreduce_untimed(buf, count, type, op);
  const size_t w = type == HB_DIST_I64 ? sizeof(int64_t) : type == HB_DIST_I32 ? sizeof(int32_t) : sizeof(double);
  /* what leaves this process: its values of the other processes' blocks */
  bytes_sent += (double)w * (double)(count - (begin[me + 1] - begin[me]));
  for (int r = 0; r < P; r++) rs_counts[r] = (int)(begin[r + 1] - begin[r]);
  MPI_Datatype t = type == HB_DIST_I64 ? MPI_INT64_T : type == HB_DIST_I32 ? MPI_INT32_T : MPI_DOUBLE;
  MPI_Op o = op == HB_DIST_SUM || op == HB_DIST_SUM_EXACT ? MPI_SUM : op == HB_DIST_MAX ? MPI_MAX : MPI_MIN;
  int rc = MPI_Reduce_scatter(MPI_IN_PLACE, buf, rs_counts, t, o, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "Reduce_scatter");
  if (begin[me] > 0 && rs_counts[me] > 0)
    memmove((char *)buf + (size_t)begin[me] * w, buf, (size_t)rs_counts[me] * w);
  return HB_OK;
}

/* Each buffer is agreed on before the operation that needs it: one process
 * short of memory ends the call with an error on every process. */
static int allgather_untimed(const void *send, int64_t nbytes, void **out, int64_t *counts) {
  bytes_sent += (double)nbytes;
  *out = NULL;
  const int P = world.size;
  int64_t *cnt = malloc(sizeof(int64_t) * (size_t)P);
  int *rc_i = malloc(sizeof(int) * (size_t)P), *disp = malloc(sizeof(int) * (size_t)P);
  char *all = NULL;
  int rc = MPI_SUCCESS, st = HB_OK;
  const int mine = !cnt || !rc_i || !disp;
  if (any_failed(mine, &rc) || rc != MPI_SUCCESS) {
    st = rc != MPI_SUCCESS ? mpi_fail(rc, "Allreduce")
         : hb_error_set(HB_ERR_NOMEM, mine ? "out of memory gathering data over MPI"
                                           : "another process ran out of memory gathering data over MPI");
    goto done;
  }
  rc = MPI_Allgather(&nbytes, 1, MPI_INT64_T, cnt, 1, MPI_INT64_T, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) { st = mpi_fail(rc, "Allgather"); goto done; }
  int64_t tot = 0;
  for (int r = 0; r < P; r++) {
    if (tot > INT32_MAX - cnt[r]) {  /* the same counts on every process: all stop here */
      st = hb_error_set(HB_ERR_INPUT, "more than 2 GB to gather over MPI at once (binning sample too large); "
                        "lower bin_sample_rows");
      goto done;
    }
    disp[r] = (int)tot;
    rc_i[r] = (int)cnt[r];
    tot += cnt[r];
  }
  all = hb_malloc((size_t)(tot > 0 ? tot : 1));
  if (any_failed(!all, &rc) || rc != MPI_SUCCESS) {
    st = rc != MPI_SUCCESS ? mpi_fail(rc, "Allreduce")
         : all ? hb_error_set(HB_ERR_NOMEM, "another process ran out of memory gathering data over MPI")
               : HB_ERR_NOMEM;
    goto done;
  }
  rc = MPI_Allgatherv(send, (int)nbytes, MPI_BYTE, all, rc_i, disp, MPI_BYTE, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) { st = mpi_fail(rc, "Allgatherv"); goto done; }
  if (counts) memcpy(counts, cnt, sizeof(int64_t) * (size_t)P);
  *out = all;
  all = NULL;
done:
  hb_free(all);
  free(cnt); free(rc_i); free(disp);
  return st;
}

/* The communicator's two operations: the above, timed and counted. */
static int mpi_allreduce(const hb_dist_t *dist, void *buf, int64_t count, int type, int op) {
  (void)dist;
  const double t0 = MPI_Wtime();
  const int st = allreduce_untimed(buf, count, type, op);
  seconds_in += MPI_Wtime() - t0;
  calls_made += 1;
  return st;
}

static int mpi_allgather(const hb_dist_t *dist, const void *send, int64_t nbytes, void **out, int64_t *counts) {
  (void)dist;
  const double t0 = MPI_Wtime();
  const int st = allgather_untimed(send, nbytes, out, counts);
  seconds_in += MPI_Wtime() - t0;
  calls_made += 1;
  return st;
}

static int mpi_reduce_scatter(const hb_dist_t *dist, void *buf, const int64_t *begin, int type, int op) {
  (void)dist;
  const double t0 = MPI_Wtime();
  const int st = reduce_scatter_untimed(buf, begin, type, op);
  seconds_in += MPI_Wtime() - t0;
  calls_made += 1;
  return st;
}

int hb_mpi_available(void) { return 1; }
void hb_mpi_traffic(double out[3]) {
  out[0] = bytes_sent;
  out[1] = seconds_in;
  out[2] = calls_made;
}

int hb_mpi_init(void) {
  if (world_ready) return HB_OK;
  int inited = 0, fin = 0;
  MPI_Finalized(&fin);
  if (fin) return hb_error_set(HB_ERR_STATE, "MPI was already finalized in this process; start a new one");
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return hb_error_set(HB_ERR_STATE, "MPI_Init failed (code %d)", rc);
    we_initialized = 1;
  }
  /* errors come back as codes, so they become R errors instead of aborts */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (exit_comm == MPI_COMM_NULL) MPI_Comm_dup(MPI_COMM_WORLD, &exit_comm);
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  {  /* the processes sharing this machine, for one GPU each */
    MPI_Comm node = MPI_COMM_NULL;
    world.local_rank = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_rank(node, &world.local_rank);
      MPI_Comm_free(&node);
    }
  }
  world.ctx = NULL;
  world.allreduce = mpi_allreduce;
  world.allgather = mpi_allgather;
  /* every process takes the reduce-scatter, or none does (an int a
   * process); a failed agreement fails the start, so that no process goes
   * on with a choice the others did not make */
  if (!rs_counts) rs_counts = malloc(sizeof(int) * (size_t)world.size);
  {
    int rc = MPI_SUCCESS;
    const int bad = any_failed(!rs_counts, &rc);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "Allreduce");
    world.reduce_scatter = !bad ? mpi_reduce_scatter : NULL;
  }
  world_ready = 1;
  return HB_OK;
}

const hb_dist_t *hb_mpi_world(void) { return world_ready ? &world : NULL; }

void hb_mpi_finalize(double wait_s) {
  int inited = 0, fin = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&fin);
  if (!inited || fin || !we_initialized) { world_ready = 0; return; }
  /* MPI_Finalize waits for every process: one that exits while the others
   * are still in a collective operation (its script failed, or it quit)
   * would wait forever with them. A barrier of its own says whether all
   * are exiting; if they are not within wait_s seconds, the job is ended. */
  int done = exit_comm == MPI_COMM_NULL;
  if (!done) {
    MPI_Request req;
    if (MPI_Ibarrier(exit_comm, &req) == MPI_SUCCESS) {
      struct timespec t0, now, nap = {0, 10000000};
      clock_gettime(CLOCK_MONOTONIC, &t0);
      for (;;) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > wait_s) break;
        nanosleep(&nap, NULL);
      }
    }
  }
  if (!done) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
  world_ready = 0;
  free(sum_buf);
  sum_buf = NULL;
  sum_cap = 0;
  free(rs_counts);
  rs_counts = NULL;
  world.reduce_scatter = NULL;
}

void hb_mpi_abort(int code) {
  int inited = 0, fin = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&fin);
  if (inited && !fin) MPI_Abort(MPI_COMM_WORLD, code);
}

int hb_mpi_barrier(void) {
  if (!world_ready) return HB_OK;
  int rc = MPI_Barrier(MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? HB_OK : mpi_fail(rc, "Barrier");
}

#else  /* built without MPI */

int hb_mpi_available(void) { return 0; }
void hb_mpi_traffic(double out[3]) { out[0] = out[1] = out[2] = 0; }
int hb_mpi_init(void) {
  return hb_error_set(HB_ERR_STATE, "histboost was built without MPI");
}
const hb_dist_t *hb_mpi_world(void) { return NULL; }
void hb_mpi_finalize(double wait_s) { (void)wait_s; }
void hb_mpi_abort(int code) { (void)code; }
int hb_mpi_barrier(void) { return HB_OK; }

#endif
