/* dist.c: the engine's helpers over a communicator (dist.h); no MPI here. */
#include <string.h>
#include "dist.h"
#include "error.h"

static int active(const hb_dist_t *dist) { return dist && dist->size > 1; }

int hb_dist_sum_i64(const hb_dist_t *dist, int64_t *v, int64_t n) {
  return active(dist) && n > 0 ? dist->allreduce(dist, v, n, HB_DIST_I64, HB_DIST_SUM) : HB_OK;
}

int hb_dist_sum_i32(const hb_dist_t *dist, int32_t *v, int64_t n) {
  return active(dist) && n > 0 ? dist->allreduce(dist, v, n, HB_DIST_I32, HB_DIST_SUM) : HB_OK;
}

int hb_dist_sum_f64(const hb_dist_t *dist, double *v, int64_t n) {
  return active(dist) && n > 0 ? dist->allreduce(dist, v, n, HB_DIST_F64, HB_DIST_SUM) : HB_OK;
}

int hb_dist_sum_f64_exact(const hb_dist_t *dist, double *v, int64_t n) {
  return active(dist) && n > 0 ? dist->allreduce(dist, v, n, HB_DIST_F64, HB_DIST_SUM_EXACT) : HB_OK;
}

int hb_dist_sum_block(const hb_dist_t *dist, void *v, const int64_t *begin, int type, int op) {
  if (!active(dist) || begin[dist->size] <= 0) return HB_OK;
  if (!dist->reduce_scatter) return dist->allreduce(dist, v, begin[dist->size], type, op);
  return dist->reduce_scatter(dist, v, begin, type, op);
}

int hb_dist_max_f64(const hb_dist_t *dist, double *v, int64_t n) {
  return active(dist) && n > 0 ? dist->allreduce(dist, v, n, HB_DIST_F64, HB_DIST_MAX) : HB_OK;
}

int hb_dist_min_f64(const hb_dist_t *dist, double *v, int64_t n) {
  return active(dist) && n > 0 ? dist->allreduce(dist, v, n, HB_DIST_F64, HB_DIST_MIN) : HB_OK;
}

int hb_dist_any(const hb_dist_t *dist, int flag) {
  if (!active(dist)) return flag != 0;
  int64_t v = flag != 0;
  if (dist->allreduce(dist, &v, 1, HB_DIST_I64, HB_DIST_SUM) != HB_OK) return 0;
  return v > 0;
}

static long agreed_failures = 0;  /* main thread only, as every collective */

long hb_dist_agreed_failures(void) { return agreed_failures; }

int hb_dist_agree(const hb_dist_t *dist, int st, const char *what) {
  if (!active(dist)) return st;
  int64_t v = st != HB_OK;
  const int rc = dist->allreduce(dist, &v, 1, HB_DIST_I64, HB_DIST_SUM);
  if (rc == HB_OK && v > 0) agreed_failures++;
  if (st != HB_OK) return st;  /* its own message stays */
  if (rc != HB_OK) return rc;
  return v > 0 ? hb_error_set(HB_ERR_STATE, "another process failed %s; its error says why", what) : HB_OK;
}

int hb_dist_agree_end(const hb_dist_t *dist, int st, long mark, const char *what) {
  if (st != HB_OK && agreed_failures != mark) return st;
  return hb_dist_agree(dist, st, what);
}

int hb_dist_gather_f64(const hb_dist_t *dist, const double *v, int64_t n, double **out, int64_t *ntotal) {
  *out = NULL;
  *ntotal = 0;
  if (!active(dist)) {
    double *c = hb_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!c) return HB_ERR_NOMEM;
    if (n > 0) memcpy(c, v, sizeof(double) * (size_t)n);
    *out = c;
    *ntotal = n;
    return HB_OK;
  }
  void *all = NULL;
  int64_t *counts = hb_malloc(sizeof(int64_t) * (size_t)dist->size);
  int st = hb_dist_agree(dist, counts ? HB_OK : HB_ERR_NOMEM, "gathering values");
  if (st != HB_OK) { hb_free(counts); return st; }
  st = dist->allgather(dist, v, n * (int64_t)sizeof(double), &all, counts);
  if (st == HB_OK) {
    int64_t tot = 0;
    for (int r = 0; r < dist->size; r++) tot += counts[r];
    *out = all;
    *ntotal = tot / (int64_t)sizeof(double);
  }
  hb_free(counts);
  return st;
}
