/* cox_dist.c: the Cox objective over the shards of a data-parallel training
 * (dist.h). A row's gradient sums over its risk set, the rows of every
 * process whose time is not earlier, in the order of time with running
 * double sums that no reduction reproduces to the bit. So every process
 * holds every shard's labels and weights (gathered once, in rank order: the
 * concatenated rows), gathers the scores each round, runs the one-process
 * gradients (hb_objective_cox_gradients) on all rows and keeps its own
 * rows'. Exact, at the cost of every row's score in traffic each round and
 * 2 x 8 bytes a row (all rows) of memory on every process. */
#include <string.h>
#include "learner.h"
#include "dist.h"
#include "error.h"
#include "objective.h"

int hb_booster_cox_setup_dist(hb_booster_t *b) {
  const hb_dataset_t *d = b->train;
  int64_t nl = 0, nw = 0;
  int st = hb_dist_gather_f64(b->dist, d->label, b->n, &b->cox_label, &nl);
  /* weights on all processes or none: hb_dataset_create_dist agreed on that */
  if (st == HB_OK && d->weight) st = hb_dist_gather_f64(b->dist, d->weight, b->n, &b->cox_weight, &nw);
  if (st == HB_OK && d->weight && nw != nl)
    st = hb_error_set(HB_ERR_INPUT, "some processes give weights and others do not; give them on all or none");
  if (st == HB_OK && nl > (int64_t)2147483647)
    st = hb_error_set(HB_ERR_INPUT, "the cox objective over several processes takes at most 2^31 - 1 rows in all");
  if (st == HB_OK) {
    b->cox_n = (int)nl;
    if (hb_objective_cox_order(b->cox_n, b->cox_label, &b->cox_order) != HB_OK)
      st = hb_error_set(HB_ERR_NOMEM, "out of memory ordering %d survival times", b->cox_n);
  }
  if (hb_dist_any(b->dist, st != HB_OK) && st == HB_OK)  /* fail on every process alike */
    st = hb_error_set(HB_ERR_NOMEM, "another process could not set up the cox objective");
  return st;
}

int hb_booster_cox_gradients_dist(hb_booster_t *b, const double *score) {
  const int64_t row0 = b->train->row0;
  double *all = NULL, *gh = NULL;
  int64_t N = 0;
  int st = hb_dist_gather_f64(b->dist, score, b->n, &all, &N);
  if (st == HB_OK && N != b->cox_n)
    st = hb_error_set(HB_ERR_STATE, "the processes' scores (%lld) do not match their rows (%d)", (long long)N,
                      b->cox_n);
  if (st == HB_OK && !(gh = hb_malloc(2 * sizeof(double) * (size_t)(N > 0 ? N : 1))))
    st = hb_error_set(HB_ERR_NOMEM, "out of memory for the cox gradients of %lld rows", (long long)N);
  if (st == HB_OK) {
    hb_objective_cox_gradients(b->cox_n, b->cox_label, b->cox_weight, b->cox_order, all, gh);
    memcpy(b->gh, gh + 2 * row0, 2 * sizeof(double) * (size_t)b->n);
  }
  hb_free(all);
  hb_free(gh);
  if (hb_dist_any(b->dist, st != HB_OK) && st == HB_OK)
    st = hb_error_set(HB_ERR_NOMEM, "another process could not compute the cox gradients");
  return st;
}
