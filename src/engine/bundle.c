/* bundle.c: the greedy bundler of Exclusive Feature Bundling (bundle.h) and
 * the bundles' bin columns, built from a dataset's sparse feature stores. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bundle.h"
#include "error.h"
#include "threads.h"

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
 * nmember of each open bundle in *open. Returns the number of open bundles,
 * or -1 on no memory. */
static int greedy(const hb_dataset_t *d, const cand_t *cand, int nc, const int *nslot, double rate,
                  open_bundle_t *open, int *assign) {
  const int64_t max_conf = (int64_t)floor(rate * (double)d->nrow);
  const size_t words = (size_t)d->nrow / 64 + 1;
  int nopen = 0;
  for (int i = 0; i < nc; i++) {
    const int f = cand[i].f;
    const hb_featstore_t *s = &d->store[f];
    int chosen = -1;
    int64_t conf = 0;
    /* A bundle the feature never meets first; only then one whose budget of
     * conflicts takes it (else a few features that meet everything spend
     * the budgets, and the exclusive ones open bundles of their own). */
    for (int pass = 0; pass < 1 + (max_conf > 0) && chosen < 0; pass++) {
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
      if (!open[nopen].rows) return -1;
      chosen = nopen++;
    }
    open_bundle_t *o = &open[chosen];
    for (int k = 0; k < s->nnz; k++) o->rows[s->rows[k] >> 6] |= (uint64_t)1 << (s->rows[k] & 63);
    o->nslot += nslot[f];
    o->nmember++;
    o->conflicts += conf;
    assign[f] = chosen;
  }
  return nopen;
}

/* Slots, members and bundle_of of the bundles of at least two members. */
static int lay_out(const hb_dataset_t *d, const open_bundle_t *open, int nopen, const int *assign,
                   const int *nslot, hb_bundles_t *b) {
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
  uint8_t used[HB_MAX_NUM_BIN];
  for (int j = 0; j < nb; j++) {
    int k = b->slot_off[j];
    b->slot_feat[k] = -1;
    b->slot_bin[k] = 0;
    k++;
    for (int m = b->first[j]; m < b->first[j + 1]; m++) {
      const int f = b->feat[m];
      if (used_bins(&d->store[f], used) != nslot[f]) return HB_ERR_INTERNAL;
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
  cand_t *cand = hb_malloc(sizeof(cand_t) * (size_t)(nf > 0 ? nf : 1));
  int *nslot = hb_calloc((size_t)(nf > 0 ? nf : 1), sizeof(int));
  int *assign = hb_malloc(sizeof(int) * (size_t)(nf > 0 ? nf : 1));
  open_bundle_t *open = hb_calloc(HB_BUNDLE_MAX_OPEN, sizeof(open_bundle_t));
  hb_bundles_t *b = hb_calloc(1, sizeof *b);
  int status = HB_OK, nc = 0, nopen = 0;
  if (!cand || !nslot || !assign || !open || !b) { status = HB_ERR_NOMEM; goto done; }
  uint8_t used[HB_MAX_NUM_BIN];
  for (int f = 0; f < nf; f++) {
    assign[f] = -1;
    const int c = d->feat_col[f];
    if (!d->store[f].sparse || (use && !use[f]) || d->col_first[c + 1] - d->col_first[c] != 1) continue;
    nslot[f] = used_bins(&d->store[f], used);
    if (nslot[f] < 1 || nslot[f] > HB_BUNDLE_MAX_BIN - 1) continue;
    cand[nc].nnz = d->store[f].nnz;
    cand[nc].f = f;
    nc++;
  }
  if (nc < 2) goto done;
  qsort(cand, (size_t)nc, sizeof *cand, cmp_cand);
  nopen = greedy(d, cand, nc, nslot, max_conflict_rate, open, assign);
  if (nopen < 0) { status = HB_ERR_NOMEM; nopen = HB_BUNDLE_MAX_OPEN; goto done; }
  b->nrow = d->nrow;
  b->nfeat = nf;
  status = lay_out(d, open, nopen, assign, nslot, b);
  if (status != HB_OK || b->nbundle == 0) goto done;
  b->col = hb_malloc((size_t)b->nbundle * (size_t)d->nrow);
  if (!b->col) { status = HB_ERR_NOMEM; goto done; }
  int nth = hb_threads_use(nthreads);
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1))
  for (int j = 0; j < b->nbundle; j++) fill_column(d, b, j);
  *out = b;
  b = NULL;
done:
  if (open)
    for (int j = 0; j < nopen; j++) hb_free(open[j].rows);
  hb_free(open);
  hb_free(cand);
  hb_free(nslot);
  hb_free(assign);
  hb_bundle_free(b);
  if (status == HB_ERR_NOMEM) return hb_error_set(status, "out of memory bundling sparse features");
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
