/* renew_dist.c: the leaf refit of l1, quantile and MAPE (hb_booster_renew_leaves
 * in boost.c) over the shards of a data-parallel training (dist.h). A leaf's
 * value is a quantile of the residuals of its rows on every process; each
 * process computes the value one process computes on the concatenated rows:
 *   - a leaf whose rows all weigh 1 (over all processes) takes the k-th
 *     smallest residual (and the next one), found exactly by a radix select
 *     over the residuals' bit patterns, a byte at a time from the top, the
 *     counts of each byte value summed over the processes (as GOSS's
 *     threshold, goss.c): 2 x 8 sums of 256 integers per leaf, batched
 *     over the leaves, whatever the number of rows;
 *   - a leaf with other weights (or MAPE's) takes a weighted quantile whose
 *     running sums of weights depend on every value in sorted order: its
 *     residuals and weights are gathered from every process in rank order
 *     (the leaf's rows of the concatenated shards, in order) and the
 *     one-process rule (hb_objective_quantile) runs on them. This costs
 *     the leaf's rows in traffic, once per tree. */
#include <math.h>
#include <string.h>
#include "learner.h"
#include "dist.h"
#include "error.h"
#include "objective.h"

/* A double's bits as an unsigned key ordered as the doubles are (negative
 * values flipped, positive ones above them), and back. */
static uint64_t key_of(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | ((uint64_t)1 << 63));
}

static double value_of(uint64_t k) {
  const uint64_t u = (k >> 63) ? (k & ~((uint64_t)1 << 63)) : ~k;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* For each of the nq queries (leaf qleaf[q], 0-based rank qrank[q] among
 * that leaf's keys over all processes) the key of that rank, into out[q].
 * keys: this process's keys, leaf l's at keys[off[l] .. off[l + 1]). */
static int select_ranks_dist(const hb_dist_t *dist, const uint64_t *keys, const int64_t *off, int nq,
                             const int *qleaf, int64_t *qrank, uint64_t *out, int64_t *cnt) {
  for (int q = 0; q < nq; q++) out[q] = 0;
  for (int shift = 56; shift >= 0; shift -= 8) {
    memset(cnt, 0, sizeof *cnt * 256 * (size_t)nq);
    for (int q = 0; q < nq; q++) {
      const int l = qleaf[q];
      int64_t *c = cnt + 256 * (size_t)q;
      for (int64_t i = off[l]; i < off[l + 1]; i++) {
        const uint64_t u = keys[i];
        if (shift == 56 || (u >> (shift + 8)) == out[q]) c[(u >> shift) & 255]++;
      }
    }
    int st = hb_dist_sum_i64(dist, cnt, 256 * (int64_t)nq);
    if (st != HB_OK) return st;
    for (int q = 0; q < nq; q++) {
      const int64_t *c = cnt + 256 * (size_t)q;
      int byte = 0;
      while (byte < 255 && qrank[q] >= c[byte]) qrank[q] -= c[byte++];
      out[q] = (out[q] << 8) | (uint64_t)byte;
    }
  }
  return HB_OK;
}

int hb_booster_renew_leaves_dist(const hb_booster_t *b, const hb_leaf_rows_t *lr, hb_tree_t *t,
                                 const double *score, double rate) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dist_t *dist = b->dist;
  const hb_dataset_t *d = b->train;
  const double a = cfg->objective == HB_OBJ_QUANTILE ? cfg->quantile_alpha : 0.5;
  const int mape = cfg->objective == HB_OBJ_MAPE;
  const int L = t->num_leaves, P = dist->size;
  int st = HB_OK;
  /* this process's residuals and weights, leaf after leaf */
  int64_t *off = hb_calloc((size_t)L + 1, sizeof *off);
  int64_t *tot = hb_calloc(2 * (size_t)L, sizeof *tot);  /* per leaf: rows, rows not weighing 1 */
  for (int l = 0; off && l < L; l++) {
    int cnt;
    hb_leaf_rows_of(lr, l, &cnt);
    off[l + 1] = off[l] + cnt;
  }
  const int64_t n = off ? off[L] : 0;
  double *vw = hb_malloc(sizeof(double) * 2 * (size_t)(n > 0 ? n : 1));
  uint64_t *keys = hb_malloc(sizeof(uint64_t) * (size_t)(n > 0 ? n : 1));
  int *qleaf = hb_malloc(sizeof(int) * 2 * (size_t)L);
  int64_t *qrank = hb_malloc(sizeof(int64_t) * 2 * (size_t)L);
  uint64_t *qkey = hb_malloc(sizeof(uint64_t) * 2 * (size_t)L);
  int64_t *cnt256 = hb_malloc(sizeof(int64_t) * 256 * 2 * (size_t)L);
  if (!off || !tot || !vw || !keys || !qleaf || !qrank || !qkey || !cnt256)
    st = hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
  if (hb_dist_any(dist, st != HB_OK)) {  /* every process asks, whatever its own status */
    if (st == HB_OK) st = hb_error_set(HB_ERR_NOMEM, "another process ran out of memory refitting leaves");
    goto done;
  }
  for (int l = 0; l < L; l++) {
    int cnt;
    const int *rows = hb_leaf_rows_of(lr, l, &cnt);
    for (int i = 0; i < cnt; i++) {
      const int r = rows[i];
      const double v = d->label[r] - score[r];
      const double w = (d->weight ? d->weight[r] : 1.0) * (mape ? hb_objective_mape_weight(d->label[r]) : 1.0);
      const int64_t j = off[l] + i;
      vw[2 * j] = v;
      vw[2 * j + 1] = w;
      keys[j] = key_of(v);
      tot[2 * l + 1] += w != 1.0;
    }
    tot[2 * l] = cnt;
  }
  if ((st = hb_dist_sum_i64(dist, tot, 2 * (int64_t)L)) != HB_OK) goto done;

  /* leaves of unit weights: the ceil(a m)-th smallest, averaged with the
   * next when a m is whole (hb_objective_quantile's rule) */
  int nq = 0;
  for (int l = 0; l < L; l++) {
    const int64_t m = tot[2 * l];
    if (m == 0 || tot[2 * l + 1] != 0) continue;
    const double tq = a * (double)m;
    int64_t k = (int64_t)ceil(tq);
    if (k < 1) k = 1;
    if (k > m) k = m;
    qleaf[nq] = l; qrank[nq] = k - 1; nq++;
    qleaf[nq] = l; qrank[nq] = k < m ? k : m - 1; nq++;
  }
  if (nq > 0 && (st = select_ranks_dist(dist, keys, off, nq, qleaf, qrank, qkey, cnt256)) != HB_OK) goto done;
  for (int q = 0; q < nq; q += 2) {
    const int l = qleaf[q];
    const int64_t m = tot[2 * l];
    const double tq = a * (double)m;
    int64_t k = (int64_t)ceil(tq);
    if (k < 1) k = 1;
    if (k > m) k = m;
    const double v = value_of(qkey[q]);
    double o = ((double)k != tq || k == m) ? v : 0.5 * (v + value_of(qkey[q + 1]));
    if (cfg->max_delta_step > 0 && (o > cfg->max_delta_step || o < -cfg->max_delta_step))
      o = o > 0 ? cfg->max_delta_step : -cfg->max_delta_step;
    t->leaf_value[l] = rate * o;
  }

  /* weighted leaves: their pairs from every process, in rank order */
  int any_weighted = 0;
  for (int l = 0; l < L; l++) any_weighted |= tot[2 * l] > 0 && tot[2 * l + 1] != 0;
  if (any_weighted) {
    double *mine = hb_malloc(sizeof(double) * ((size_t)L + 2 * (size_t)(n > 0 ? n : 1)));
    double *allc = NULL, *allp = NULL;
    hb_objective_vw_t *p = NULL;
    int64_t nc = 0, np = 0, most = 0;
    st = mine ? HB_OK : hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
    int64_t at = 0;
    for (int l = 0; mine && l < L; l++) {  /* the counts (exact in doubles), then the pairs */
      const int w = tot[2 * l] > 0 && tot[2 * l + 1] != 0;
      mine[l] = w ? (double)(off[l + 1] - off[l]) : 0.0;
      if (w) {
        memcpy(mine + L + 2 * at, vw + 2 * off[l], sizeof(double) * 2 * (size_t)(off[l + 1] - off[l]));
        at += off[l + 1] - off[l];
      }
      if (w && tot[2 * l] > most) most = tot[2 * l];
    }
    if (hb_dist_any(dist, st != HB_OK)) {
      if (st == HB_OK) st = hb_error_set(HB_ERR_NOMEM, "another process ran out of memory refitting leaves");
      hb_free(mine);
      goto done;
    }
    /* every process's counts (P x L), then its pairs */
    st = hb_dist_gather_f64(dist, mine, L, &allc, &nc);
    if (st == HB_OK) st = hb_dist_gather_f64(dist, mine + L, 2 * at, &allp, &np);
    hb_free(mine);
    if (st == HB_OK && !(p = hb_malloc(sizeof *p * (size_t)(most > 0 ? most : 1))))
      st = hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
    if (st == HB_OK) {
      /* where each process's pairs start in allp, and each of its leaves */
      int64_t base = 0;
      int64_t *start = hb_malloc(sizeof(int64_t) * (size_t)P);
      if (!start) st = hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
      for (int r = 0; start && r < P; r++) {
        start[r] = base;
        for (int l = 0; l < L; l++) base += (int64_t)allc[(size_t)r * L + l];
      }
      for (int l = 0; start && l < L; l++) {
        if (!(tot[2 * l] > 0 && tot[2 * l + 1] != 0)) continue;
        int m = 0;
        for (int r = 0; r < P; r++) {
          const int64_t c = (int64_t)allc[(size_t)r * L + l];
          memcpy(p + m, allp + 2 * start[r], sizeof(double) * 2 * (size_t)c);
          start[r] += c;
          m += (int)c;
        }
        double o = hb_objective_quantile(p, m, a);
        if (cfg->max_delta_step > 0 && (o > cfg->max_delta_step || o < -cfg->max_delta_step))
          o = o > 0 ? cfg->max_delta_step : -cfg->max_delta_step;
        t->leaf_value[l] = rate * o;
      }
      hb_free(start);
    }
    hb_free(allc);
    hb_free(allp);
    hb_free(p);
  }
done:
  /* a failure after the last collective (an allocation) fails every process alike */
  if (hb_dist_any(dist, st != HB_OK) && st == HB_OK)
    st = hb_error_set(HB_ERR_NOMEM, "another process ran out of memory refitting leaves");
  hb_free(off);
  hb_free(tot);
  hb_free(vw);
  hb_free(keys);
  hb_free(qleaf);
  hb_free(qrank);
  hb_free(qkey);
  hb_free(cnt256);
  return st;
}
