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
  if (!counts) return HB_ERR_NOMEM;
  int st = dist->allgather(dist, v, n * (int64_t)sizeof(double), &all, counts);
  if (st == HB_OK) {
    int64_t tot = 0;
    for (int r = 0; r < dist->size; r++) tot += counts[r];
    *out = all;
    *ntotal = tot / (int64_t)sizeof(double);
  }
  hb_free(counts);
  return st;
}
