/* bundle.c: the greedy bundler of Exclusive Feature Bundling (bundle.h) and
 * the bundles' bin columns, built from a dataset's sparse feature stores. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "dist.h"
#include "error.h"
#include "threads.h"

/* A status of this file only: another process failed (dist.h). */
#define HB_ERR_DIST_OTHER (-1000)

void hb_bundle_free(hb_bundles_t *b) {
  if (!b) return;
  hb_free(b->first);
  hb_free(b->feat);
  hb_free(b->num_bin);
  hb_free(b->slot_off);
  hb_free(b->slot_feat);
  hb_free(b->slot_bin);
  hb_free(b->bundle_of);
  hb_free(b->conflicts);
  hb_free(b->col);
  hb_free(b);
}

/* Which bins of sparse feature f its stored rows use (used[b] = 1); returns
 * how many (the default bin is never stored). */
static int used_bins(const hb_featstore_t *s, uint8_t *used) {
  memset(used, 0, HB_MAX_NUM_BIN);
  int n = 0;
  for (int k = 0; k < s->nnz; k++) {
    n += !used[s->vals[k]];
    used[s->vals[k]] = 1;
  }
  return n;
}

typedef struct { int nnz, f; } cand_t;

/* More stored entries first; ties: lower feature first (a total order). */
static int cmp_cand(const void *a, const void *b) {
  const cand_t *x = a, *y = b;
  if (x->nnz != y->nnz) return x->nnz > y->nnz ? -1 : 1;
  return (x->f > y->f) - (x->f < y->f);
}

/* An open bundle of the greedy search: its rows as a bitmap, its slots and
 * the conflicts its members have met. */
typedef struct {
  uint64_t *rows;
  int nslot, nmember;
  int64_t conflicts;
} open_bundle_t;

/* Rows of s that open bundle o already holds, counting up to budget + 1. */
static int64_t count_conflicts(const open_bundle_t *o, const hb_featstore_t *s, int64_t budget) {
  int64_t c = 0;
  for (int k = 0; k < s->nnz; k++) {
    const int r = s->rows[k];
    if ((o->rows[r >> 6] >> (r & 63)) & 1)
      if (++c > budget) break;
  }
  return c;
}

/* The greedy search: assign[f] = the open bundle of each candidate (or -1);
 * nmember of each open bundle in *open, their number in *nopen_out. With
 * several processes (dist), each holds its shard's rows of the open
 * bundles, and a candidate's conflicts with the bundles it tries are summed
 * over the processes (one all-reduce a candidate), each process's count
 * capped at max_conf + 1 as one process's count stops past its budget: the
 * sum is the whole data's count wherever that is within a budget (every
 * budget is at most max_conf), and over the budget where it is, so every
 * process makes the choices of one process on the concatenated rows. HB_OK,
 * HB_ERR_NOMEM, or the communicator's status. */
static int greedy(const hb_dataset_t *d, const hb_dist_t *dist, const cand_t *cand, int nc, const int *nslot,
                  double rate, open_bundle_t *open, int *assign, int *nopen_out) {
  const int64_t max_conf = (int64_t)floor(rate * (double)(dist ? d->nrow_global : d->nrow));
  const size_t words = (size_t)d->nrow / 64 + 1;
  int nopen = 0, st = HB_OK;
  int tried_j[HB_BUNDLE_SEARCH];
  int64_t tried_c[HB_BUNDLE_SEARCH];
  *nopen_out = 0;
  for (int i = 0; i < nc; i++) {
    const int f = cand[i].f;
    const hb_featstore_t *s = &d->store[f];
    int chosen = -1;
    int64_t conf = 0;
    if (dist) {  /* the bundles tried, their summed conflicts, then the passes below on them */
      int nt = 0;
      for (int j = 0; j < nopen && nt < HB_BUNDLE_SEARCH; j++) {
        if (open[j].nslot + nslot[f] > HB_BUNDLE_MAX_BIN - 1) continue;
        tried_j[nt] = j;
        tried_c[nt++] = count_conflicts(&open[j], s, max_conf);
      }
      if ((st = hb_dist_sum_i64(dist, tried_c, nt)) != HB_OK) break;
      for (int pass = 0; pass < 1 + (max_conf > 0) && chosen < 0; pass++)
        for (int t = 0; t < nt; t++) {
          const int64_t budget = pass ? max_conf - open[tried_j[t]].conflicts : 0;
          if (tried_c[t] <= budget) { chosen = tried_j[t]; conf = tried_c[t]; break; }
        }
    }
    /* A bundle the feature never meets first; only then one whose budget of
     * conflicts takes it (else a few features that meet everything spend
     * the budgets, and the exclusive ones open bundles of their own). */
    for (int pass = 0; !dist && pass < 1 + (max_conf > 0) && chosen < 0; pass++) {
      for (int j = 0, tried = 0; j < nopen && tried < HB_BUNDLE_SEARCH; j++) {
        if (open[j].nslot + nslot[f] > HB_BUNDLE_MAX_BIN - 1) continue;  /* full: no search counted */
        tried++;
        const int64_t budget = pass ? max_conf - open[j].conflicts : 0;
        const int64_t c = count_conflicts(&open[j], s, budget);
        if (c <= budget) { chosen = j; conf = c; break; }
      }
    }
    if (chosen < 0) {
      if (nopen == HB_BUNDLE_MAX_OPEN) continue;  /* stays alone */
      open[nopen].rows = hb_calloc(words, sizeof(uint64_t));
      /* every process fails where one does (the others would wait for it) */
      if (dist ? hb_dist_any(dist, !open[nopen].rows) : !open[nopen].rows) {
        st = open[nopen].rows ? HB_ERR_DIST_OTHER : HB_ERR_NOMEM;
        break;
      }
      chosen = nopen++;
    }
    open_bundle_t *o = &open[chosen];
    for (int k = 0; k < s->nnz; k++) o->rows[s->rows[k] >> 6] |= (uint64_t)1 << (s->rows[k] & 63);
    o->nslot += nslot[f];
    o->nmember++;
    o->conflicts += conf;
    assign[f] = chosen;
  }
  *nopen_out = nopen;
  return st;
}

/* Slots, members and bundle_of of the bundles of at least two members;
 * gused (several processes): each feature's bins used on any process,
 * HB_MAX_NUM_BIN a feature, else each feature's stored bins here. */
static int lay_out(const hb_dataset_t *d, const open_bundle_t *open, int nopen, const int *assign,
                   const int *nslot, const uint8_t *gused, hb_bundles_t *b) {
  const int nf = d->nfeat;
  int *final = hb_malloc(sizeof(int) * (size_t)(nopen > 0 ? nopen : 1));
  if (!final) return HB_ERR_NOMEM;
  int nb = 0, nmem = 0;
  for (int j = 0; j < nopen; j++) {
    final[j] = open[j].nmember >= 2 ? nb++ : -1;
    if (final[j] >= 0) nmem += open[j].nmember;
  }
  b->nbundle = nb;
  b->first = hb_calloc((size_t)nb + 1, sizeof(int));
  b->feat = hb_malloc(sizeof(int) * (size_t)(nmem > 0 ? nmem : 1));
  b->num_bin = hb_malloc(sizeof(int) * (size_t)(nb > 0 ? nb : 1));
  b->slot_off = hb_calloc((size_t)nb + 1, sizeof(int));
  b->bundle_of = hb_malloc(sizeof(int) * (size_t)(nf > 0 ? nf : 1));
  b->conflicts = hb_calloc((size_t)(nb > 0 ? nb : 1), sizeof(int64_t));
  if (!b->first || !b->feat || !b->num_bin || !b->slot_off || !b->bundle_of || !b->conflicts) {
    hb_free(final);
    return HB_ERR_NOMEM;
  }
  for (int f = 0; f < nf; f++) {
    b->bundle_of[f] = assign[f] >= 0 ? final[assign[f]] : -1;
    if (b->bundle_of[f] >= 0) b->first[b->bundle_of[f] + 1]++;
  }
  for (int j = 0; j < nb; j++) b->first[j + 1] += b->first[j];
  int *pos = hb_malloc(sizeof(int) * (size_t)(nb > 0 ? nb : 1));
  if (!pos) { hb_free(final); return HB_ERR_NOMEM; }
  memcpy(pos, b->first, sizeof(int) * (size_t)nb);
  for (int f = 0; f < nf; f++)   /* increasing features within each bundle */
    if (b->bundle_of[f] >= 0) b->feat[pos[b->bundle_of[f]]++] = f;
  hb_free(pos);
  for (int j = 0; j < nopen; j++)
    if (final[j] >= 0) b->num_bin[final[j]] = 1 + open[j].nslot;
  for (int j = 0; j < nb; j++) b->slot_off[j + 1] = b->slot_off[j] + b->num_bin[j];
  hb_free(final);
  const int ns = b->slot_off[nb];
  b->slot_feat = hb_malloc(sizeof(int) * (size_t)(ns > 0 ? ns : 1));
  b->slot_bin = hb_malloc((size_t)(ns > 0 ? ns : 1));
  if (!b->slot_feat || !b->slot_bin) return HB_ERR_NOMEM;
  uint8_t used_here[HB_MAX_NUM_BIN];
  for (int j = 0; j < nb; j++) {
    int k = b->slot_off[j];
    b->slot_feat[k] = -1;
    b->slot_bin[k] = 0;
    k++;
    for (int m = b->first[j]; m < b->first[j + 1]; m++) {
      const int f = b->feat[m];
      const uint8_t *used = gused ? gused + (size_t)f * HB_MAX_NUM_BIN : used_here;
      int nused = 0;
      if (gused)
        for (int bin = 0; bin < HB_MAX_NUM_BIN; bin++) nused += used[bin];
      else
        nused = used_bins(&d->store[f], used_here);
      if (nused != nslot[f]) return HB_ERR_INTERNAL;
      for (int bin = 0; bin < d->mappers[f].num_bin; bin++)
        if (used[bin]) { b->slot_feat[k] = f; b->slot_bin[k] = (uint8_t)bin; k++; }
    }
    if (k != b->slot_off[j + 1]) return HB_ERR_INTERNAL;
  }
  return HB_OK;
}

/* Bundle j's column: each member's slot at its stored rows, the first
 * member's where several meet (those rows counted as conflicts). */
static void fill_column(const hb_dataset_t *d, hb_bundles_t *b, int j) {
  uint8_t *c = b->col + (size_t)j * (size_t)d->nrow;
  memset(c, 0, (size_t)d->nrow);
  uint8_t map[HB_MAX_NUM_BIN];
  int64_t conf = 0;
  int k = b->slot_off[j] + 1;
  for (int m = b->first[j]; m < b->first[j + 1]; m++) {
    const int f = b->feat[m];
    memset(map, 0, sizeof map);
    for (; k < b->slot_off[j + 1] && b->slot_feat[k] == f; k++) map[b->slot_bin[k]] = (uint8_t)(k - b->slot_off[j]);
    const hb_featstore_t *s = &d->store[f];
    for (int e = 0; e < s->nnz; e++) {
      uint8_t *at = c + s->rows[e];
      if (*at) conf++;
      else *at = map[s->vals[e]];
    }
  }
  b->conflicts[j] = conf;
}

int hb_bundle_create(const hb_dataset_t *d, const uint8_t *use, double max_conflict_rate, int nthreads,
                     hb_bundles_t **out) {
  *out = NULL;
  const int nf = d->nfeat;
  if (!(max_conflict_rate >= 0.0 && max_conflict_rate < 1.0))
    return hb_error_set(HB_ERR_INPUT, "max_conflict_rate must be in [0, 1) (got %g)", max_conflict_rate);
  /* Several processes (dist.h) bundle as one process would on the
   * concatenated rows: a feature's stored entries and used bins, and the
   * conflicts of the greedy search, summed over the processes (the
   * candidates, sparse single features, are the same on every process:
   * hb_dataset_create_dist decides storage from every shard's counts). Each
   * process then fills the bundles' columns of its own rows. */
  const hb_dist_t *dist = d->dist && d->dist->size > 1 ? d->dist : NULL;
  cand_t *cand = hb_malloc(sizeof(cand_t) * (size_t)(nf > 0 ? nf : 1));
  int *nslot = hb_calloc((size_t)(nf > 0 ? nf : 1), sizeof(int));
  int *assign = hb_malloc(sizeof(int) * (size_t)(nf > 0 ? nf : 1));
  open_bundle_t *open = hb_calloc(HB_BUNDLE_MAX_OPEN, sizeof(open_bundle_t));
  hb_bundles_t *b = hb_calloc(1, sizeof *b);
  uint8_t *gused = NULL;
  int32_t *ucount = NULL;
  int64_t *gnnz = NULL;
  int status = HB_OK, nc = 0, nopen = 0;
  if (!cand || !nslot || !assign || !open || !b) status = HB_ERR_NOMEM;
  if (dist && status == HB_OK) {
    gused = hb_calloc((size_t)(nf > 0 ? nf : 1) * HB_MAX_NUM_BIN, 1);
    gnnz = hb_calloc((size_t)(nf > 0 ? nf : 1), sizeof(int64_t));
    if (!gused || !gnnz) status = HB_ERR_NOMEM;
  }
  if (dist && hb_dist_any(dist, status != HB_OK) && status == HB_OK) status = HB_ERR_DIST_OTHER;
  if (status != HB_OK) goto done;
  uint8_t used[HB_MAX_NUM_BIN];
  for (int f = 0; f < nf; f++) {
    assign[f] = -1;
    const int c = d->feat_col[f];
    if (!d->store[f].sparse || (use && !use[f]) || d->col_first[c + 1] - d->col_first[c] != 1) continue;
    cand[nc].nnz = d->store[f].nnz;
    cand[nc].f = f;
    nc++;
  }
  if (dist && nc > 0) {  /* the candidates' stored entries and used bins over every process */
    ucount = hb_calloc((size_t)nc * HB_MAX_NUM_BIN, sizeof(int32_t));
    if (hb_dist_any(dist, !ucount)) { status = ucount ? HB_ERR_DIST_OTHER : HB_ERR_NOMEM; goto done; }
    for (int i = 0; i < nc; i++) {
      gnnz[i] = cand[i].nnz;
      used_bins(&d->store[cand[i].f], used);
      for (int bin = 0; bin < HB_MAX_NUM_BIN; bin++) ucount[(size_t)i * HB_MAX_NUM_BIN + bin] = used[bin];
    }
    if ((status = hb_dist_sum_i64(dist, gnnz, nc)) != HB_OK ||
        (status = hb_dist_sum_i32(dist, ucount, (int64_t)nc * HB_MAX_NUM_BIN)) != HB_OK)
      goto done;
  }
  int kept = 0;
  for (int i = 0; i < nc; i++) {
    const int f = cand[i].f;
    if (dist) {
      uint8_t *g = gused + (size_t)f * HB_MAX_NUM_BIN;
      for (int bin = 0; bin < HB_MAX_NUM_BIN; bin++) {
        g[bin] = ucount[(size_t)i * HB_MAX_NUM_BIN + bin] > 0;
        nslot[f] += g[bin];
      }
      cand[i].nnz = (int)gnnz[i];
    } else {
      nslot[f] = used_bins(&d->store[f], used);
    }
    if (nslot[f] < 1 || nslot[f] > HB_BUNDLE_MAX_BIN - 1) continue;
    cand[kept++] = cand[i];
  }
  nc = kept;
  if (nc < 2) goto done;
  qsort(cand, (size_t)nc, sizeof *cand, cmp_cand);
  status = greedy(d, dist, cand, nc, nslot, max_conflict_rate, open, assign, &nopen);
  if (status != HB_OK) { nopen = HB_BUNDLE_MAX_OPEN; goto done; }
  b->nrow = d->nrow;
  b->nfeat = nf;
  status = lay_out(d, open, nopen, assign, nslot, gused, b);
  if (status != HB_OK || b->nbundle == 0) goto done;
  b->col = hb_malloc((size_t)b->nbundle * (size_t)d->nrow);
  if (!b->col) { status = HB_ERR_NOMEM; goto done; }
  int nth = hb_threads_use(nthreads);
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1))
  for (int j = 0; j < b->nbundle; j++) fill_column(d, b, j);
done:
  /* every process fails where one does: the others would wait for it in
   * the learner's next collective operation */
  if (dist && hb_dist_any(dist, status != HB_OK) && status == HB_OK) status = HB_ERR_DIST_OTHER;
  if (status == HB_OK && b && b->nbundle > 0) {
    *out = b;
    b = NULL;
  }
  if (open)
    for (int j = 0; j < nopen; j++) hb_free(open[j].rows);
  hb_free(open);
  hb_free(cand);
  hb_free(nslot);
  hb_free(assign);
  hb_free(gused);
  hb_free(ucount);
  hb_free(gnnz);
  hb_bundle_free(b);
  if (status == HB_ERR_NOMEM) return hb_error_set(status, "out of memory bundling sparse features");
  if (status == HB_ERR_DIST_OTHER)
    return hb_error_set(HB_ERR_INPUT, "bundling sparse features failed on another process (its error says why)");
  if (status != HB_OK && status != HB_ERR_INTERNAL) return status;  /* the communicator's, its message set */
  if (status != HB_OK) return hb_error_set(status, "internal error bundling sparse features");
  return HB_OK;
}

void hb_bundle_side_table(const hb_bundles_t *b, const hb_dataset_t *d, int j, int f, const uint8_t *fgoleft,
                          uint8_t *goleft) {
  const uint8_t dflt = fgoleft[d->mappers[f].default_bin];
  const int s0 = b->slot_off[j];
  goleft[0] = dflt;
  for (int k = 1; k < b->num_bin[j]; k++) goleft[k] = b->slot_feat[s0 + k] == f ? fgoleft[b->slot_bin[s0 + k]] : dflt;
}
