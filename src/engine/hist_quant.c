/* hist_quant.c: integer histograms of quantized gradients on the CPU, the
 * paper's hierarchical buffers: a tile of columns accumulates each row's
 * packed value (one 32-bit add per feature instead of two 64-bit ones) into
 * 16-bit halves, and every rows16 rows, before a half could overflow, adds
 * them into 64-bit pairs. For a leaf of HB_HIST_HALF_ROWS rows or more the
 * threads split a tile's rows, not its columns (as hist.c must, to keep its
 * double sums in row order): each thread's pairs are then added up bin by
 * bin, which integer sums make exact in any order, and each row of a
 * scattered leaf is fetched by one thread only, which halves the cache
 * misses of a leaf's histogram on two threads. A smaller leaf's columns
 * are split instead: adding up the threads' pairs would cost more than its
 * rows. */
#include <stdlib.h>
#include <string.h>
#include "hist_quant.h"
#include "hist_walk.h"
#include "threads.h"

#define QPAR_MIN_UPDATES 16384

/* Add the accumulators acc[0..nb) into the pairs h[0..nb) and clear them
 * (no test for empty ones: a branch per bin costs more than the adds). */
static void flush(int32_t *restrict acc, hb_qbin_t *restrict h, int nb) {
  for (int b = 0; b < nb; b++) {
    int32_t p = acc[b];
    h[b].g += hb_qpack_g(p);
    h[b].h += hb_qpack_h(p);
    acc[b] = 0;
  }
}

/* The first flush of a histogram: the pairs take the accumulators' values
 * (no clearing of h before, no read of it). */
static void flush_first(int32_t *restrict acc, hb_qbin_t *restrict h, int nb) {
  for (int b = 0; b < nb; b++) {
    int32_t p = acc[b];
    h[b].g = hb_qpack_g(p);
    h[b].h = hb_qpack_h(p);
    acc[b] = 0;
  }
}

/* A tile's accumulators: column k's at acc + k * QSTRIDE, whatever its
 * number of bins, so that every address below is a row's byte plus a
 * constant (a line more than 256 bins: hist.h); a share's pairs column k's
 * at k * HB_ACC_STRIDE. */
#define QSTRIDE HB_QACC_STRIDE

/* Add v to accumulator p[k] of column k for k < nc, each add one
 * read-modify-write of memory: with its address the row's byte plus a
 * constant (no per-column pointer to load), an update costs about one
 * cycle on Zen 5, where loading a block of eight accumulators first and
 * storing them after took 1.7. */
#define QADD(j) acc[(j) * QSTRIDE + p[k + (j)]] += v;
static inline void row_add_q(int32_t *acc, const uint8_t *p, int nc, int32_t v) {
  HB_TILE_ROW(acc, nc, QSTRIDE, QADD);  /* hist_walk.h, as hist.c's */
}
#undef QADD

/* Row-major bins a tile reads: the row block's dense columns, or its
 * bundles (no packed gradient in the rows: qoff -1). */
typedef struct {
  const uint8_t *bins;
  int stride, qoff;
} qblock_t;

/* Rows [i0, i1) of rows (NULL: the rows themselves) over the tile's nc
 * columns of the block (col[k]), summed in acc and added every rows16
 * rows into the pairs out[k] (nb[k] bins each: the first flush stores,
 * later ones add; cleared when there are no rows). */
static void tile_rows(const qblock_t *rb, const int *rows, int i0, int i1, const int32_t *q, int rows16,
                      const int *col, const int *nb, int nc, int32_t *acc, hb_qbin_t *const *out) {
  const size_t stride = (size_t)rb->stride;
  const int contiguous = col[nc - 1] - col[0] == nc - 1;
  const uint8_t *base = rb->bins + (contiguous ? col[0] : 0);
  const int qo = rb->qoff >= 0 ? rb->qoff - (contiguous ? col[0] : 0) : 0;
  /* the last byte a row's reads touch (from base + r * stride) */
  int last = contiguous ? nc - 1 : col[nc - 1];
  if (rb->qoff >= 0 && qo + 3 > last) last = qo + 3;
  uint8_t pick[HB_HIST_TILE];
  for (int k = 0; k < nc; k++) memset(acc + (size_t)k * QSTRIDE, 0, sizeof(int32_t) * (size_t)nb[k]);
  if (i0 >= i1)
    for (int k = 0; k < nc; k++) memset(out[k], 0, sizeof(hb_qbin_t) * (size_t)nb[k]);
  for (int j0 = i0; j0 < i1; j0 += rows16) {
    int j1 = j0 + rows16 < i1 ? j0 + rows16 : i1;
    for (int i = j0; i < j1; i++) {
      size_t r = rows ? (size_t)rows[i] : (size_t)i;
      if (rows && i + 16 < i1) {
        size_t ra = (size_t)rows[i + 16];
        hb_prefetch_row(base + ra * stride, (size_t)last);
#if defined(__GNUC__)
        if (rb->qoff < 0) __builtin_prefetch(q + ra);
#endif
      }
      const uint8_t *p = base + r * stride;
      int32_t v;
      if (rb->qoff >= 0) memcpy(&v, p + qo, sizeof v); else v = q[r];
      if (!contiguous) {
        for (int k = 0; k < nc; k++) pick[k] = p[col[k]];
        p = pick;
      }
      row_add_q(acc, p, nc, v);
    }
    if (j0 == i0)
      for (int k = 0; k < nc; k++) flush_first(acc + (size_t)k * QSTRIDE, out[k], nb[k]);
    else
      for (int k = 0; k < nc; k++) flush(acc + (size_t)k * QSTRIDE, out[k], nb[k]);
  }
}

/* The columns of tile t of ntile over the row block's n_act active ones
 * (hist.c's tiles): col[], their features' bin counts nb[] and histograms hp[];
 * returns how many. */
static int tile_cols(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int t, int ntile,
                     int n_act, hb_qbin_t *hist, int *col, int *nb, hb_qbin_t **hp) {
  int off[HB_HIST_TILE];
  const int nc = hb_tile_columns(d, rb, active, (int)((long long)t * n_act / ntile),
                                 (int)((long long)(t + 1) * n_act / ntile), col, nb, off);  /* hist_walk.h */
  for (int k = 0; k < nc; k++) hp[k] = hist + off[k];
  return nc;
}

/* Part c of the scratch: the pairs of one share of the rows, then their
 * 16-bit accumulators. */
static hb_qbin_t *part_pairs(const hb_rowblock_t *rb, int c) { return (hb_qbin_t *)hb_rowblock_scratch(rb, c); }
static int32_t *part_acc(const hb_rowblock_t *rb, int c) {
  return (int32_t *)(part_pairs(rb, c) + (size_t)HB_HIST_TILE * HB_ACC_STRIDE);
}

/* A sparse feature's default bin: the totals less its other bins. */
static void qdefault(hb_qbin_t *h, int default_bin, int nb, int64_t tot_g, int64_t tot_h) {
  HB_SPARSE_DEFAULT(int64_t, h, default_bin, nb, tot_g, tot_h);  /* hist_walk.h, as hist.c's */
}

/* One feature from its column store; a sparse one's default bin is the
 * rest of the totals. */
static void run_column(const hb_dataset_t *d, int f, const int *rows, int nrows, const int32_t *q, int rows16,
                       int64_t tot_g, int64_t tot_h, hb_qbin_t *hist, int32_t *acc) {
  const hb_binmapper_t *m = &d->mappers[f];
  const hb_featstore_t *s = &d->store[f];
  hb_qbin_t *h = hist + d->hist_offset[f];
  int nb = m->num_bin, since = 0;
  memset(h, 0, sizeof(hb_qbin_t) * (size_t)nb);
  memset(acc, 0, sizeof(int32_t) * (size_t)nb);
/* the walks of hist_walk.h (hist.c's), each row's packed value added into
 * the 16-bit halves, flushed into the pairs every rows16 rows */
#define QADD(bin, r)                                           \
  do {                                                         \
    acc[bin] += q[r];                                          \
    if (++since == rows16) { flush(acc, h, nb); since = 0; }   \
  } while (0)
  if (!s->sparse) HB_DENSE_WALK(s->bins, rows, nrows, QADD);
  else HB_SPARSE_WALK(s, rows, nrows, QADD);
#undef QADD
  flush(acc, h, nb);
  if (s->sparse) qdefault(h, m->default_bin, nb, tot_g, tot_h);
}

/* Bundle j's active members' histograms from its integer slots in
 * rb->bhist, their default bins the rest of the totals. */
static void bundle_finish_q(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int j,
                            int64_t tot_g, int64_t tot_h, hb_qbin_t *hist) {
  const hb_bundles_t *b = rb->bundles;
  const hb_qbin_t *src = (const hb_qbin_t *)rb->bhist + b->slot_off[j];
#define SLOT(k) src[k]
  HB_BUNDLE_RECOVER(hb_qbin_t, int64_t, b, d, j, active, hist, SLOT, tot_g, tot_h);
#undef SLOT
}

/* Feature f is summed from its column store. */
static int q_column_wise(const hb_rowblock_t *rb, int f) {
  return !rb || (rb->col_of[f] < 0 && !hb_rowblock_bundled(rb, f));
}

int hb_qhist_build_then(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                        const int32_t *q, int rows16, int64_t tot_g, int64_t tot_h, const uint8_t *active,
                        hb_qbin_t *hist, int nthreads, hb_team_fn then, void *arg) {
  int n_act = 0, n_col = 0;
  if (rb)
    for (int c = 0; c < rb->ncol; c++) n_act += !active || active[rb->feat[c]];
  for (int f = 0; f < d->nfeat; f++) n_col += q_column_wise(rb, f) && (!active || active[f]);
  const int nbundle = rb && rb->bundles ? rb->bundles->nbundle : 0;
  int nth = hb_threads_use(nthreads);
  if ((long long)nrows * (n_act + n_col + nbundle) < QPAR_MIN_UPDATES) nth = 1;
  if ((n_act > 0 || nbundle > 0) && nth > rb->nscratch) nth = rb->nscratch;  /* one set of accumulators per thread */
  /* the bundles in tiles of at most HB_HIST_TILE, one a thread at least */
  int nbt = (nbundle + HB_HIST_TILE - 1) / HB_HIST_TILE;
  if (nbt < nth) nbt = nth < nbundle ? nth : nbundle;
  const qblock_t blk = { rb ? rb->bins : NULL, rb ? rb->stride : 0, rb ? rb->qoff : -1 };
  const qblock_t bblk = { nbundle > 0 ? rb->bb_rows : NULL, nbundle > 0 ? rb->bb_stride : 0, -1 };
  /* the rows' shares: one per thread, each in its own part of the scratch */
  int nshare = n_act > 0 ? nth : 1;
  if (nshare > nrows) nshare = nrows > 0 ? nrows : 1;
  int ntile = (n_act + HB_HIST_TILE - 1) / HB_HIST_TILE;
  /* A leaf of fewer than HB_HIST_HALF_ROWS rows: the threads split its
   * columns instead, each tile's rows summed straight into the histogram.
   * Adding up every thread's pairs costs a pass over all the bins, more
   * than what a small leaf's rows save by being fetched once. */
  const int by_cols = nth > 1 && n_act > 1 && nrows < HB_HIST_HALF_ROWS;
  if (by_cols) {
    nshare = 1;
    if (ntile < nth) ntile = nth < n_act ? nth : n_act;
  }
  (void)nth;
HB_OMP(parallel num_threads(nth))
  {
    int32_t col_acc[HB_MAX_NUM_BIN];
    if (by_cols) {
      /* no barrier after: the column-store features below are others */
HB_OMP(for schedule(static) nowait)
      for (int t = 0; t < ntile; t++) {
        int col[HB_HIST_TILE], nb[HB_HIST_TILE];
        hb_qbin_t *hp[HB_HIST_TILE];
        int nc = tile_cols(d, rb, active, t, ntile, n_act, hist, col, nb, hp);
        if (nc > 0) tile_rows(&blk, rows, 0, nrows, q, rows16, col, nb, nc, part_acc(rb, hb_threads_id()), hp);
      }
    }
    for (int t = 0; !by_cols && t < ntile; t++) {
      int col[HB_HIST_TILE], nb[HB_HIST_TILE];
      hb_qbin_t *hp[HB_HIST_TILE];
      int nc = tile_cols(d, rb, active, t, ntile, n_act, hist, col, nb, hp);
HB_OMP(for schedule(static))
      for (int c = 0; c < nshare; c++) {
        int i0 = (int)((long long)c * nrows / nshare), i1 = (int)((long long)(c + 1) * nrows / nshare);
        hb_qbin_t *out[HB_HIST_TILE];  /* one share: straight into the histogram */
        for (int k = 0; k < nc; k++) out[k] = nshare == 1 ? hp[k] : part_pairs(rb, c) + (size_t)k * HB_ACC_STRIDE;
        tile_rows(&blk, rows, i0, i1, q, rows16, col, nb, nc, part_acc(rb, c), out);
      }
      if (nshare == 1) continue;  /* the same for every thread */
HB_OMP(for schedule(static))
      for (int k = 0; k < nc; k++) {
        const hb_qbin_t *p0 = part_pairs(rb, 0) + (size_t)k * HB_ACC_STRIDE;
        hb_qbin_t *h = hp[k];
        for (int b = 0; b < nb[k]; b++) h[b] = p0[b];
        for (int c = 1; c < nshare; c++) {
          const hb_qbin_t *pc = part_pairs(rb, c) + (size_t)k * HB_ACC_STRIDE;
          for (int b = 0; b < nb[k]; b++) { h[b].g += pc[b].g; h[b].h += pc[b].h; }
        }
      }
    }
    if (nbundle > 0) {
      /* each bundle summed over all the leaf's rows by one thread, then its
       * members recovered (after the barrier: every tile done) */
HB_OMP(for schedule(static))
      for (int t = 0; t < nbt; t++) {
        const hb_bundles_t *b = rb->bundles;
        const int j0 = (int)((long long)t * nbundle / nbt), j1 = (int)((long long)(t + 1) * nbundle / nbt);
        int col[HB_HIST_TILE], nb[HB_HIST_TILE];
        hb_qbin_t *hp[HB_HIST_TILE];
        for (int j = j0; j < j1; j++) {
          col[j - j0] = j;
          nb[j - j0] = b->num_bin[j];
          hp[j - j0] = (hb_qbin_t *)rb->bhist + b->slot_off[j];
        }
        if (j1 > j0) tile_rows(&bblk, rows, 0, nrows, q, rows16, col, nb, j1 - j0, part_acc(rb, hb_threads_id()), hp);
      }
HB_OMP(for schedule(static) nowait)
      for (int j = 0; j < nbundle; j++) bundle_finish_q(d, rb, active, j, tot_g, tot_h, hist);
    }
HB_OMP(for schedule(dynamic, 1))
    for (int f = 0; f < d->nfeat; f++)
      if (q_column_wise(rb, f) && (!active || active[f]))
        run_column(d, f, rows, nrows, q, rows16, tot_g, tot_h, hist, col_acc);
    /* the histogram whole (the loop's barrier): the caller's work on the same team */
    if (then && nth > 1) then(arg, nth);
  }
  return then != NULL && nth > 1;
}

void hb_qhist_build(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                    const int32_t *q, int rows16, int64_t tot_g, int64_t tot_h, const uint8_t *active,
                    hb_qbin_t *hist, int nthreads) {
  (void)hb_qhist_build_then(d, rb, rows, nrows, q, rows16, tot_g, tot_h, active, hist, nthreads, NULL, NULL);
}
