/* hist.c: CPU histogram construction. Dense features in a row block are
 * read row-wise (a row's bins are contiguous: one or two cache lines per row
 * for all of them), everything else column-wise (one feature per task).
 *
 * Threads split the row block's active columns into tiles, each tile summed
 * over all the leaf's rows by one thread: every bin is then summed in row
 * order by one thread whatever the thread count, with no partial histograms
 * to merge. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "hist.h"
#include "hist_walk.h"
#include "dist.h"
#include "error.h"
#include "threads.h"

#if defined(__GNUC__)
#define HB_PREFETCH(p) __builtin_prefetch(p)
#else
#define HB_PREFETCH(p) ((void)0)
#endif

/* Rows ahead whose bins are prefetched when a leaf's rows are scattered. */
#define PREFETCH_AHEAD 16
/* Work below which a histogram is built by one thread: starting the others
 * costs more than they save. The work is the leaf's bin updates plus two
 * for each bin of its features (each is cleared and copied out of a
 * thread's accumulators, whatever the rows): a leaf of 200 rows of 50
 * features of 255 bins moves 400 KB of bins for 10,000 updates. Counting
 * them, the histograms of leaves under 1,024 rows took 24-43% less time on
 * two threads (run.R's workload 3 generator,
 * inst/bench/results/threads-multiclass-2026-12-02.md). */
#define PAR_MIN_UPDATES 16384

/* ------------------------------------------------------------ row block */

void hb_rowblock_free(hb_rowblock_t *rb) {
  if (!rb) return;
  hb_free(rb->feat);
  hb_free(rb->col_of);
  hb_free(rb->bins_mem);
  hb_free(rb->g_mem);
  hb_free(rb->scratch);
  hb_free(rb->half);
  hb_free(rb->parts);
  hb_free(rb->in_sp);
  hb_free(rb->sp_ptr);
  hb_free(rb->sp_ent);
  hb_free(rb->sp_has);
  if (rb->wcode)
    for (int c = 0; c < rb->ncolumn; c++) hb_free(rb->wcode[c]);
  hb_free(rb->wcode);
  hb_free(rb->in_wide);
  hb_free(rb->wide_col);
  hb_free(rb->wslot_col);
  hb_free(rb->wslot_off);
  hb_free(rb->wslot_part);
  hb_bundle_free(rb->bundles);
  hb_free(rb->by_col);
  hb_free(rb->bb_mem);
  hb_free(rb->bhist);
  hb_free(rb->bhalf);
  hb_free(rb);
}

/* The gathered rows' block for n rows of rb's stride (best effort: grows
 * stays 0 without it). */
static void gather_alloc(hb_rowblock_t *rb, size_t n) {
  rb->g_mem = hb_malloc(n * ((size_t)rb->stride + 2 * sizeof(double)) + 128);
  if (!rb->g_mem) return;
  rb->grows = (int)n;
  rb->gbins = (uint8_t *)rb->g_mem + (64 - (uintptr_t)rb->g_mem % 64) % 64;
  rb->ggh = (double *)(void *)(rb->gbins + n * (size_t)rb->stride + (64 - n * (size_t)rb->stride % 64) % 64);
}

/* The bytes of the buffers a histogram build writes (what a twin owns):
 * the gathered rows, the accumulators, the halves' and parts' sums and the
 * bundles' sums. */
static size_t build_bytes(const hb_rowblock_t *rb, int total_bins) {
  const size_t tb = (size_t)total_bins;
  size_t b = (size_t)rb->grows * ((size_t)rb->stride + 2 * sizeof(double));
  b += (size_t)rb->nscratch * HB_HIST_SCRATCH + tb * sizeof(hb_histbin_t);
  if (rb->parts) b += (HB_HIST_MAX_PARTS - 2) * tb * sizeof(hb_histbin_t);
  if (rb->bhist) b += 2 * sizeof(hb_histbin_t) * (size_t)rb->bundles->slot_off[rb->bundles->nbundle];
  return b;
}

size_t hb_rowblock_bytes(const hb_rowblock_t *rb, int total_bins) {
  if (!rb) return 0;
  const size_t n = (size_t)rb->nrow;
  size_t b = n * (size_t)rb->stride + build_bytes(rb, total_bins);
  if (rb->nsparse) b += (n + 1) * sizeof(int64_t) + (size_t)rb->sp_ptr[n] * sizeof(uint32_t) + n / 8;
  if (rb->bb_rows) b += n * (size_t)rb->bb_stride;
  if (rb->wcode)
    for (int c = 0; c < rb->ncolumn; c++)
      if (rb->wcode[c]) b += n * sizeof(uint16_t);
  return b;
}

/* Rows per block of the wide codes' construction. */
#define WCODE_BLOCK 16384

/* Column c spans several features (a wide factor), at least one of them sparse. */
static int wide_with_sparse(const hb_dataset_t *d, int c) {
  if (d->col_first[c + 1] - d->col_first[c] < 2) return 0;
  int sparse = 0;
  for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) sparse |= d->store[f].sparse;
  return sparse;
}

/* The codes of every factor column spread over several features of which
 * at least one is sparse, and which of their used sparse features are
 * summed from them (in_wide). With `slots`, the first HB_WSLOT_MAX such
 * columns with a used sparse part get slots in the rows (placed by the
 * caller), and all their used sparse parts are in_wide. */
static int rowblock_wide(const hb_dataset_t *d, const uint8_t *use, int nthreads, int slots, hb_rowblock_t *rb) {
  int any = 0;
  for (int c = 0; c < d->ncol && !any; c++) any = wide_with_sparse(d, c);
  if (!any) return HB_OK;
  rb->ncolumn = d->ncol;
  rb->wcode = hb_calloc((size_t)d->ncol, sizeof *rb->wcode);
  rb->in_wide = hb_calloc((size_t)d->nfeat, 1);
  rb->wide_col = hb_malloc(sizeof(int) * (size_t)d->ncol);
  rb->wslot_col = hb_malloc(sizeof(int) * HB_WSLOT_MAX);
  rb->wslot_off = hb_malloc(sizeof(int) * HB_WSLOT_MAX);
  rb->wslot_part = hb_malloc(sizeof(int) * HB_WSLOT_MAX);
  if (!rb->wcode || !rb->in_wide || !rb->wide_col || !rb->wslot_col || !rb->wslot_off || !rb->wslot_part)
    return HB_ERR_NOMEM;
  const int n = d->nrow, nblock = (n + WCODE_BLOCK - 1) / WCODE_BLOCK;
  int nth = hb_threads_use(nthreads);
  (void)nth;
  for (int c = 0; c < d->ncol; c++) {
    if (!wide_with_sparse(d, c)) continue;
    const int first = d->col_first[c], np = d->col_first[c + 1] - first;
    int64_t nnz = 0;
    for (int f = first; f < first + np; f++)
      if (d->store[f].sparse && (!use || use[f])) nnz += d->store[f].nnz;
    uint16_t *code = rb->wcode[c] = hb_malloc(sizeof(uint16_t) * (size_t)(n > 0 ? n : 1));
    if (!code) return HB_ERR_NOMEM;
HB_OMP(parallel for num_threads(nth) schedule(static) if (nblock > 1))
    for (int b = 0; b < nblock; b++) {
      uint8_t bins[WCODE_BLOCK];
      const int r0 = b * WCODE_BLOCK, m = n - r0 < WCODE_BLOCK ? n - r0 : WCODE_BLOCK;
      for (int i = 0; i < m; i++) code[r0 + i] = (uint16_t)(np * 256);
      for (int j = 0; j < np; j++) {
        const int miss = d->mappers[first + j].num_bin - 1;
        hb_dataset_feature_bins(d, first + j, r0, m, bins);
        for (int i = 0; i < m; i++)
          if (bins[i] != miss) code[r0 + i] = (uint16_t)(j * 256 + bins[i]);
      }
    }
    const int slot = slots && nnz > 0 && rb->nwslot < HB_WSLOT_MAX;
    if (slot || (nnz > 0 && nnz * HB_WIDE_MIN_SHARE >= (int64_t)n)) {
      rb->wide_col[rb->nwide++] = c;
      int nin = 0, part = -1;
      for (int f = first; f < first + np; f++) {
        rb->in_wide[f] = d->store[f].sparse && (!use || use[f]);
        if (rb->in_wide[f]) { nin++; part = f - first; }
      }
      if (slot) {  /* while slots last, every wide column takes one: they are wide_col[0 .. nwslot) */
        rb->wslot_col[rb->nwslot] = c;
        rb->wslot_part[rb->nwslot] = nin == 1 ? part : -1;
        rb->nwslot++;
      }
    }
  }
  return HB_OK;
}

/* The sparse part of a row block: every used sparse feature's entries
 * (but those summed from wide codes), regrouped by row (features in
 * increasing order within a row). */
static int rowblock_sparse(const hb_dataset_t *d, const uint8_t *use, hb_rowblock_t *rb) {
  int64_t nnz = 0;
  if (d->nfeat > (1 << 24)) return HB_OK;  /* entries hold features in 24 bits: column-wise instead */
#define IN_CSR(f) \
  (d->store[f].sparse && (!use || use[f]) && !(rb->in_wide && rb->in_wide[f]) && !hb_rowblock_bundled(rb, f))
  for (int f = 0; f < d->nfeat; f++)
    if (IN_CSR(f)) { rb->nsparse++; nnz += d->store[f].nnz; }
  if (rb->nsparse == 0) return HB_OK;
  rb->in_sp = hb_calloc((size_t)d->nfeat, 1);
  rb->sp_ptr = hb_calloc((size_t)d->nrow + 1, sizeof(int64_t));
  rb->sp_ent = hb_malloc(sizeof(uint32_t) * (size_t)(nnz > 0 ? nnz : 1));
  rb->sp_has = hb_calloc((size_t)d->nrow / 64 + 1, sizeof(uint64_t));
  if (!rb->in_sp || !rb->sp_ptr || !rb->sp_ent || !rb->sp_has)
    return hb_error_set(HB_ERR_NOMEM, "out of memory for the row-wise sparse bins (%lld entries)", (long long)nnz);
  for (int f = 0; f < d->nfeat; f++) {
    const hb_featstore_t *s = &d->store[f];
    if (!IN_CSR(f)) continue;
    rb->in_sp[f] = 1;
    for (int k = 0; k < s->nnz; k++) rb->sp_ptr[s->rows[k] + 1]++;
  }
  for (int r = 0; r < d->nrow; r++) {
    if (rb->sp_ptr[r + 1] > 0) rb->sp_has[r >> 6] |= (uint64_t)1 << (r & 63);
    rb->sp_ptr[r + 1] += rb->sp_ptr[r];
  }
  int64_t *pos = hb_malloc(sizeof(int64_t) * (size_t)(d->nrow > 0 ? d->nrow : 1));
  if (!pos) return hb_error_set(HB_ERR_NOMEM, "out of memory for the row-wise sparse bins");
  memcpy(pos, rb->sp_ptr, sizeof(int64_t) * (size_t)d->nrow);
  for (int f = 0; f < d->nfeat; f++) {
    const hb_featstore_t *s = &d->store[f];
    if (!rb->in_sp[f]) continue;
    for (int k = 0; k < s->nnz; k++) {
      int64_t at = pos[s->rows[k]]++;
      rb->sp_ent[at] = (uint32_t)f << 8 | s->vals[k];
    }
  }
  hb_free(pos);
  return HB_OK;
#undef IN_CSR
}

/* Bytes per row: the bins, and with with_q a 4-byte slot for the packed
 * quantized gradient after them. A row of a scattered leaf costs every
 * cache line it touches, so rows are padded to a power of two when that
 * takes at most a quarter more memory (a 28-byte row straddles two lines
 * 42% of the time, a 32-byte one never), and long rows to whole lines.
 * With with_gh (bins of at most 16 bytes), 16 bytes for the row's
 * (gradient, hessian) pair after the bins (8-byte aligned) at *goff, in a
 * 32-byte row: one line, where 24 bytes for 8 bins would straddle two a
 * quarter of the time. */
static int row_stride(int ncol, int with_q, int with_gh, int *qoff, int *goff) {
  *qoff = -1;
  *goff = -1;
  if (ncol == 0) return 0;
  int s = ncol, p = 8;
  if (with_q) {
    *qoff = (ncol + 3) & ~3;
    s = *qoff + 4;
  } else if (with_gh) {
    *goff = (ncol + 7) & ~7;
    return 32;
  }
  while (p < s) p *= 2;
  if (p <= 64 && 4 * p <= 5 * s) return p;
  if (s > 64 && 4 * ((s + 63) & ~63) <= 5 * s) return (s + 63) & ~63;
  return with_q ? (s + 3) & ~3 : s;
}

/* The bundles' bins row-major (from their columns) and their histograms.
 * Without with_q, rows of at most 48 bundles also carry the row's
 * (gradient, hessian) pair (bb_goff, hb_rowblock_set_gh) in a 32- or
 * 64-byte row: a scattered leaf's row is then one cache line, not one for
 * its bundles and one for its pair. */
static int rowblock_bundle_rows(const hb_dataset_t *d, hb_rowblock_t *rb, int with_q, int nthreads) {
  const hb_bundles_t *b = rb->bundles;
  int qoff, goff;
  rb->bb_goff = -1;
  const int with_gh = (b->nbundle + 7) / 8 * 8 + 16;
  if (!with_q && with_gh <= 64) {
    rb->bb_goff = (b->nbundle + 7) / 8 * 8;
    rb->bb_stride = with_gh <= 32 ? 32 : 64;
  } else {
    rb->bb_stride = row_stride(b->nbundle, 0, 0, &qoff, &goff);
  }
  rb->bb_mem = hb_malloc((size_t)d->nrow * (size_t)rb->bb_stride + 64);
  rb->bhist = hb_malloc(sizeof(hb_histbin_t) * (size_t)b->slot_off[b->nbundle]);
  rb->bhalf = hb_malloc(sizeof(hb_histbin_t) * (size_t)b->slot_off[b->nbundle]);
  if (!rb->bb_mem || !rb->bhist || !rb->bhalf)
    return hb_error_set(HB_ERR_NOMEM, "out of memory for the bundles' rows (%d rows x %d bundles)", d->nrow,
                        b->nbundle);
  rb->bb_rows = (uint8_t *)rb->bb_mem + (64 - (uintptr_t)rb->bb_mem % 64) % 64;
  const int nblk = (d->nrow + 1023) / 1024, nb = b->nbundle;
  const size_t stride = (size_t)rb->bb_stride;
  int nth = hb_threads_use(nthreads);
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static))
  for (int k = 0; k < nblk; k++) {
    const int r0 = k * 1024, r1 = r0 + 1024 < d->nrow ? r0 + 1024 : d->nrow;
    for (int r = r0; r < r1; r++) memset(rb->bb_rows + (size_t)r * stride + nb, 0, stride - (size_t)nb);
    for (int j = 0; j < nb; j++) {
      const uint8_t *src = b->col + (size_t)j * (size_t)d->nrow;
      uint8_t *dst = rb->bb_rows + (size_t)r0 * stride + j;
      for (int r = r0; r < r1; r++, dst += stride) *dst = src[r];
    }
  }
  return HB_OK;
}

int hb_rowblock_create(const hb_dataset_t *d, const uint8_t *use, int with_q, int nthreads,
                       hb_rowblock_t **out) {
  return hb_rowblock_create_bundled(d, use, with_q, -1.0, nthreads, out);
}

int hb_rowblock_create_bundled(const hb_dataset_t *d, const uint8_t *use, int with_q, double max_conflict_rate,
                               int nthreads, hb_rowblock_t **out) {
  *out = NULL;
  int ncol = 0, nsp = 0;
  for (int f = 0; f < d->nfeat; f++) {
    ncol += !d->store[f].sparse && (!use || use[f]);
    nsp += d->store[f].sparse && (!use || use[f]);
  }
  if (ncol < 2) ncol = 0;
  if (ncol == 0 && nsp == 0) return HB_OK;
  const hb_dist_t *dist = d->dist && d->dist->size > 1 ? d->dist : NULL;
  hb_rowblock_t *rb = hb_calloc(1, sizeof *rb);
  int st = rb ? HB_OK : hb_error_set(HB_ERR_NOMEM, "out of memory for the row block");
  if (rb) {
    rb->nrow = d->nrow;
    rb->ncol = ncol;
    rb->nfeat = d->nfeat;
    rb->bb_goff = -1;
    if ((st = rowblock_wide(d, use, nthreads, ncol > 0 && !with_q, rb)) != HB_OK)
      st = hb_error_set(HB_ERR_NOMEM, "out of memory for the wide factors' row codes");
  }
  /* Several processes bundle together (bundle.c), whatever their own
   * stores (a wide factor's parts are stored as each process's rows say),
   * after agreeing that each could get this far. */
  const int bundling = max_conflict_rate >= 0 && (nsp >= 2 || dist);
  if (bundling && dist) st = hb_dist_agree(dist, st, "to set up its row block");
  if (st != HB_OK) {
    hb_rowblock_free(rb);
    return st;
  }
  if (bundling) {
    st = hb_bundle_create(d, use, max_conflict_rate, nthreads, &rb->bundles);
    if (st == HB_OK && rb->bundles) st = rowblock_bundle_rows(d, rb, with_q, nthreads);
    if (st != HB_OK) {
      hb_rowblock_free(rb);
      return st;
    }
  }
  int row_bytes = ncol;
  for (int s = 0; s < rb->nwslot; s++) {
    rb->wslot_off[s] = row_bytes;
    row_bytes += rb->wslot_part[s] >= 0 ? 1 : 2;
  }
  /* A scattered leaf's row costs a line for its bins and another for its
   * gradient pair (16 bytes of a 16-byte-a-row array): rows of at most 16
   * bytes carry the pair too, padded to 32 bytes, so that a row is one
   * line. (Wider rows would grow past 32 bytes, and straddle lines or
   * double their size; not measured.) */
  rb->stride = row_stride(row_bytes, with_q, !with_q && row_bytes <= 16, &rb->qoff, &rb->goff);
  rb->feat = hb_malloc(sizeof(int) * (size_t)(ncol > 0 ? ncol : 1));
  rb->col_of = hb_malloc(sizeof(int) * (size_t)(d->nfeat > 0 ? d->nfeat : 1));
  if (ncol > 0) {
    rb->bins_mem = hb_calloc((size_t)d->nrow * (size_t)rb->stride + 64, 1);
    if (rb->bins_mem) rb->bins = (uint8_t *)rb->bins_mem + (64 - (uintptr_t)rb->bins_mem % 64) % 64;
  }
  if (ncol > 0 && !with_q && hb_threads_use(nthreads) >= HB_GATHER_MIN_TILES && d->nrow >= HB_HIST_HALF_ROWS) {
    /* the gathered rows' block: best effort (without it leaves are summed
     * where their rows lie) */
    const size_t n = HB_GATHER_MAX_BYTES / ((size_t)rb->stride + 2 * sizeof(double));
    gather_alloc(rb, n < (size_t)d->nrow ? n : (size_t)d->nrow);
  }
  if (ncol > 0 || rb->bundles) {  /* the bundles are summed in the same accumulators */
    rb->nscratch = hb_threads_use(nthreads);
    rb->scratch = hb_malloc(HB_HIST_SCRATCH * (size_t)rb->nscratch);
  }
  rb->half = hb_malloc(sizeof(hb_histbin_t) * (size_t)(d->total_bins > 0 ? d->total_bins : 1));
  if (ncol > 0 && d->total_bins > 0 && d->total_bins <= HB_HIST_PARTS_MAX_BINS) {
    rb->parts = hb_malloc(sizeof(hb_histbin_t) * (size_t)(HB_HIST_MAX_PARTS - 2) * (size_t)d->total_bins);
    if (!rb->parts) { hb_rowblock_free(rb); return hb_error_set(HB_ERR_NOMEM, "out of memory for the row-wise bins"); }
  }
  if (!rb->feat || !rb->col_of || !rb->half || (ncol > 0 && !rb->bins) || (rb->nscratch > 0 && !rb->scratch)) {
    hb_rowblock_free(rb);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for the row-wise bins (%d rows x %d features)",
                        d->nrow, ncol);
  }
  for (int f = 0, c = 0; f < d->nfeat; f++) {
    rb->col_of[f] = -1;
    if (ncol > 0 && !d->store[f].sparse && (!use || use[f])) { rb->feat[c] = f; rb->col_of[f] = c++; }
  }
  st = rowblock_sparse(d, use, rb);
  if (st != HB_OK) {
    hb_rowblock_free(rb);
    return st;
  }
  rb->by_col = hb_malloc((size_t)(d->nfeat > 0 ? d->nfeat : 1));
  if (!rb->by_col) {
    hb_rowblock_free(rb);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for the row block");
  }
  for (int f = 0; f < d->nfeat; f++)
    rb->by_col[f] = (uint8_t)(rb->col_of[f] < 0 && !(rb->nsparse > 0 && rb->in_sp[f]) &&
                              !(rb->nwide > 0 && rb->in_wide[f]) && !hb_rowblock_bundled(rb, f));
  /* Transpose in blocks of rows, so that each column's slice and the
   * block's rows both stay in cache. */
  int nth = hb_threads_use(nthreads), nblk = (d->nrow + 1023) / 1024;
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static))
  for (int k = 0; k < nblk; k++) {
    int r0 = k * 1024, r1 = r0 + 1024 < d->nrow ? r0 + 1024 : d->nrow;
    for (int c = 0; c < ncol; c++) {
      const uint8_t *src = d->store[rb->feat[c]].bins;
      uint8_t *dst = rb->bins + (size_t)r0 * rb->stride + c;
      for (int r = r0; r < r1; r++, dst += rb->stride) *dst = src[r];
    }
    for (int s = 0; s < rb->nwslot; s++) {
      const uint16_t *code = rb->wcode[rb->wslot_col[s]];
      uint8_t *dst = rb->bins + (size_t)r0 * rb->stride + rb->wslot_off[s];
      const int part = rb->wslot_part[s];
      if (part >= 0) {
        const uint8_t miss = (uint8_t)(d->mappers[d->col_first[rb->wslot_col[s]] + part].num_bin - 1);
        for (int r = r0; r < r1; r++, dst += rb->stride) *dst = code[r] >> 8 == part ? (uint8_t)code[r] : miss;
      } else {
        for (int r = r0; r < r1; r++, dst += rb->stride) {  /* low byte first, whatever the machine's order */
          dst[0] = (uint8_t)code[r];
          dst[1] = (uint8_t)(code[r] >> 8);
        }
      }
    }
  }
  *out = rb;
  return HB_OK;
}

/* Row r's `size` bytes of src (src + r * size) into its row at byte off. */
static void copy_into_rows(uint8_t *rows, int n, int stride_bytes, int off, const void *src, size_t size,
                           int nthreads) {
  int nth = hb_threads_use(nthreads);
  const size_t stride = (size_t)stride_bytes;
  uint8_t *dst = rows + off;
  const uint8_t *from = src;
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int r = 0; r < n; r++) memcpy(dst + (size_t)r * stride, from + (size_t)r * size, size);
}

void hb_rowblock_set_q(hb_rowblock_t *rb, const int32_t *q, int nthreads) {
  if (rb && rb->qoff >= 0) copy_into_rows(rb->bins, rb->nrow, rb->stride, rb->qoff, q, sizeof(int32_t), nthreads);
}

void hb_rowblock_set_gh(hb_rowblock_t *rb, const double *gh, int nthreads) {
  if (!rb || (rb->goff < 0 && rb->bb_goff < 0)) return;
  if (rb->goff >= 0) copy_into_rows(rb->bins, rb->nrow, rb->stride, rb->goff, gh, 2 * sizeof(double), nthreads);
  if (rb->bb_goff >= 0)
    copy_into_rows(rb->bb_rows, rb->nrow, rb->bb_stride, rb->bb_goff, gh, 2 * sizeof(double), nthreads);
  rb->gh_src = gh;
}

void hb_rowblock_set_gh_rows(hb_rowblock_t *rb, const double *gh, int lo, int hi) {
  if (!rb) return;
  if (rb->goff >= 0)
    for (int r = lo; r < hi; r++)
      memcpy(rb->bins + (size_t)r * (size_t)rb->stride + rb->goff, gh + 2 * (size_t)r, 2 * sizeof(double));
  if (rb->bb_goff >= 0)
    for (int r = lo; r < hi; r++)
      memcpy(rb->bb_rows + (size_t)r * (size_t)rb->bb_stride + rb->bb_goff, gh + 2 * (size_t)r, 2 * sizeof(double));
}

void hb_rowblock_set_gh_src(hb_rowblock_t *rb, const double *gh) {
  if (rb && (rb->goff >= 0 || rb->bb_goff >= 0)) rb->gh_src = gh;
}

/* ------------------------------------------------------------ kernels */

static inline void bin_add(hb_histbin_t *b, double g, double h) {
  b->g += g;
  b->h += h;
}

/* Add (g, h) to accumulator p[k] of column k (at acc + k * HB_ACC_STRIDE)
 * for k < nc: each address is the row's byte plus a constant, no pointer
 * per column to load, and the pair is one 16-byte load, add and store
 * (SSE2: the same two IEEE additions). 1.3 times as fast as adding into
 * the histogram's own bins through a pointer per column (Zen 5). */
#if defined(__SSE2__)
#define ROW_ADD(j)                                                           \
  {                                                                          \
    double *b_ = (double *)(acc + (j) * HB_ACC_STRIDE + p[k + (j)]);        \
    _mm_storeu_pd(b_, _mm_add_pd(_mm_loadu_pd(b_), v));                      \
  }
#else
#define ROW_ADD(j) bin_add(acc + (j) * HB_ACC_STRIDE + p[k + (j)], g, h);
#endif
static inline void row_add(hb_histbin_t *acc, const uint8_t *p, int nc, double g, double h) {
#if defined(__SSE2__)
  const __m128d v = _mm_set_pd(h, g);
#endif
  HB_TILE_ROW(acc, nc, HB_ACC_STRIDE, ROW_ADD);  /* hist_walk.h, as hist_quant.c's */
}
#undef ROW_ADD

/* The in_wide parts of the row block's slot columns that a tile sums
 * alongside its columns (hist.h): for rows i < split of the tile's rows
 * into dst[0], the rest into dst[1] (a leaf whose wide parts are summed in
 * halves while its tile is not: the whole data). */
typedef struct {
  int ns;                     /* slots summed (0: none) */
  int off[HB_WSLOT_MAX];      /* the slot's byte in a row */
  int one[HB_WSLOT_MAX];      /* one-byte slot */
  int split;
  hb_histbin_t *dst[2];
  /* the histogram slot of bin 0 of each code's part (two-byte slots, the
   * index code >> 8) or of the summed part (one-byte slots), into dst[0];
   * parts not summed here (dense, inactive, none) point into junk */
  long long part[HB_WSLOT_MAX][HB_MAX_COLUMN_FEATURES + 1];
} tile_wide_t;

static inline void wide_add(const tile_wide_t *tw, hb_histbin_t *const *pp, const uint8_t *row, double g,
                            double h) {
#if defined(__SSE2__)
  const __m128d v = _mm_set_pd(h, g);
#endif
  for (int s = 0; s < tw->ns; s++) {
    const uint8_t *q = row + tw->off[s];
    hb_histbin_t *b;
    if (tw->one[s]) {
      b = pp[s * (HB_MAX_COLUMN_FEATURES + 1)] + q[0];
    } else {
      const int cd = q[0] | q[1] << 8;
      b = pp[s * (HB_MAX_COLUMN_FEATURES + 1) + (cd >> 8)] + (cd & 255);
    }
#if defined(__SSE2__)
    _mm_storeu_pd((double *)b, _mm_add_pd(_mm_loadu_pd((double *)b), v));
#else
    bin_add(b, g, h);
#endif
  }
}

/* The part pointers of tw into dst (junk where a part is not summed). */
static void wide_ptrs(const tile_wide_t *tw, hb_histbin_t *dst, hb_histbin_t *junk, hb_histbin_t **pp) {
  for (int s = 0; s < tw->ns; s++)
    for (int j = 0; j <= HB_MAX_COLUMN_FEATURES; j++)
      pp[s * (HB_MAX_COLUMN_FEATURES + 1) + j] = tw->part[s][j] >= 0 ? dst + tw->part[s][j] : junk;
}

/* What a tile's row loop reads (build_tile). */
typedef struct {
  const uint8_t *base;      /* the row block's bins + c0 */
  size_t stride, last, goff;
  int c0;                   /* the first column when contiguous, else 0 */
  const int *rows, *col;
  int nrows, r0, nc, contiguous;
  const double *gh;
  hb_histbin_t *acc;
  const tile_wide_t *tw;
  hb_histbin_t *const *pp;
} tile_rows_t;

#if defined(__GNUC__)
#define HB_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define HB_ALWAYS_INLINE inline
#endif

/* Rows lo..hi-1 of a tile; wide: also the slots (t->tw, t->pp); in_row:
 * the pairs from the rows. Called with constant flags, so that the plain
 * tile (every workload without wide factors or narrow rows) keeps a loop
 * without either. */
static HB_ALWAYS_INLINE void tile_rows(const tile_rows_t *t, int lo, int hi, const int wide, const int in_row) {
  const uint8_t *base = t->base;
  const size_t stride = t->stride, last = t->last, goff = t->goff;
  const int *rows = t->rows, nrows = t->nrows, nc = t->nc, c0 = t->c0;
  const double *gh = t->gh;
  hb_histbin_t *acc = t->acc;
#define WIDE_ADD(row, g, h) if (wide) wide_add(t->tw, t->pp, (row) - c0, g, h)
/* row r's pair, from its line (row: its first byte) or from gh */
#define ROW_GH(row, r, g, h)                                       \
  do {                                                             \
    if (in_row) {                                                  \
      memcpy(&(g), (row) + goff, sizeof(double));                  \
      memcpy(&(h), (row) + goff + sizeof(double), sizeof(double)); \
    } else {                                                       \
      (g) = gh[2 * (r)];                                           \
      (h) = gh[2 * (r) + 1];                                       \
    }                                                              \
  } while (0)
  if (t->contiguous) {
    if (!rows) {
      const uint8_t *p = base + (size_t)(t->r0 + lo) * stride;
      const double *g = gh + 2 * (size_t)t->r0;
      for (int i = lo; i < hi; i++, p += stride) {
        row_add(acc, p, nc, g[2 * i], g[2 * i + 1]);
        WIDE_ADD(p, g[2 * i], g[2 * i + 1]);
      }
    } else {
      for (int i = lo; i < hi; i++) {
        if (i + PREFETCH_AHEAD < nrows) {
          size_t ra = (size_t)rows[i + PREFETCH_AHEAD];
          hb_prefetch_row(base + ra * stride, last);
          if (!in_row) HB_PREFETCH(gh + 2 * ra);
        }
        size_t r = (size_t)rows[i];
        const uint8_t *p = base + r * stride;
        double g, h;
        ROW_GH(p - c0, r, g, h);
        row_add(acc, p, nc, g, h);
        WIDE_ADD(p, g, h);
      }
    }
  } else {
    uint8_t pick[HB_HIST_TILE];
    const int *col = t->col;
    for (int i = lo; i < hi; i++) {
      size_t r = rows ? (size_t)rows[i] : (size_t)(t->r0 + i);
      if (rows && i + PREFETCH_AHEAD < nrows) {
        size_t ra = (size_t)rows[i + PREFETCH_AHEAD];
        hb_prefetch_row(base + ra * stride, last);
        if (!in_row) HB_PREFETCH(gh + 2 * ra);
      }
      const uint8_t *p = base + r * stride;
      for (int k = 0; k < nc; k++) pick[k] = p[col[k]];
      double g, h;
      ROW_GH(p, r, g, h);
      row_add(acc, pick, nc, g, h);
      WIDE_ADD(p, g, h);
    }
  }
#undef ROW_GH
#undef WIDE_ADD
}

/* One tile of nc row-block columns, its rows' bins at bins (rb->bins, or
 * the gathered rows), the row block's stride apart: col[k] is the column, hp[k] the
 * histogram of its feature (nb[k] bins), summed in the accumulators acc
 * and copied there at the end; with tw (may be NULL) also the wide parts.
 * With contiguous columns (col[k] = col[0] + k) the row's bytes are read
 * straight; otherwise they are picked into a small buffer first. */
static void build_tile(const hb_rowblock_t *rb, const uint8_t *bins, const int *rows, int nrows, int r0, const double *gh,
                       const int *col, hb_histbin_t *const *hp, const int *nb, int nc, hb_histbin_t *acc,
                       const tile_wide_t *tw) {
  for (int k = 0; k < nc; k++) memset(acc + (size_t)k * HB_ACC_STRIDE, 0, sizeof(hb_histbin_t) * (size_t)nb[k]);
  hb_histbin_t junk[HB_MAX_NUM_BIN];
  hb_histbin_t *pp[HB_WSLOT_MAX * (HB_MAX_COLUMN_FEATURES + 1)];
  tile_rows_t t;
  t.contiguous = col[nc - 1] - col[0] == nc - 1;
  t.c0 = t.contiguous ? col[0] : 0;
  t.base = bins + t.c0;
  t.stride = (size_t)rb->stride;
  t.last = (size_t)(col[nc - 1] - t.c0);   /* the last byte a row's reads touch, from base */
  t.rows = rows; t.col = col; t.nrows = nrows; t.r0 = r0; t.nc = nc; t.gh = gh; t.acc = acc;
  t.tw = tw; t.pp = pp;
  /* the rows carry this gh's pairs: read a row's pair from its own line */
  const int in_row = rows && rb->goff >= 0 && rb->gh_src == gh;
  t.goff = in_row ? (size_t)rb->goff : 0;
  if (in_row && t.goff + 15 - (size_t)t.c0 > t.last) t.last = t.goff + 15 - (size_t)t.c0;
  const int wide = tw && tw->ns > 0;
  int nseg = 1, split = nrows;
  if (wide) {
    for (int s = 0; s < tw->ns; s++) {
      size_t e = (size_t)(tw->off[s] + (tw->one[s] ? 0 : 1) - t.c0);
      if (e > t.last) t.last = e;
    }
    if (tw->split < nrows) { nseg = 2; split = tw->split; }
    memset(junk, 0, sizeof junk);
  }
  for (int seg = 0; seg < nseg; seg++) {
    const int lo = seg ? split : 0, hi = seg || nseg == 1 ? nrows : split;
    if (wide) wide_ptrs(tw, tw->dst[seg], junk, pp);
    if (wide && in_row) tile_rows(&t, lo, hi, 1, 1);
    else if (wide) tile_rows(&t, lo, hi, 1, 0);
    else if (in_row) tile_rows(&t, lo, hi, 0, 1);
    else tile_rows(&t, lo, hi, 0, 0);
  }
  for (int k = 0; k < nc; k++) memcpy(hp[k], acc + (size_t)k * HB_ACC_STRIDE, sizeof(hb_histbin_t) * (size_t)nb[k]);
}

/* (g, h) of row r (gh) added into bin b of h: the full-precision update of
 * the column walks (hist_walk.h). */
#define GH_ADD(b, r) bin_add(h + (b), gh[2 * (r)], gh[2 * (r) + 1])

static void build_dense(const uint8_t *bins, const int *rows, int nrows,
                        const double *gh, hb_histbin_t *h) {
  HB_DENSE_WALK(bins, rows, nrows, GH_ADD);
}

/* A sparse feature's default bin: the leaf's totals less its other bins
 * (in bin order). */
static void sparse_default(hb_histbin_t *h, int default_bin, int num_bin, double tot_g, double tot_h) {
  HB_SPARSE_DEFAULT(double, h, default_bin, num_bin, tot_g, tot_h);
}

/* Sparse column: only rows off the default bin are stored (hist_walk.h
 * finds the leaf's among them); the default bin gets the leaf's totals
 * minus everything else. */
static void build_sparse(const hb_featstore_t *s, int default_bin, const int *rows, int nrows,
                         const double *gh, double tot_g, double tot_h,
                         int num_bin, hb_histbin_t *h) {
  HB_SPARSE_WALK(s, rows, nrows, GH_ADD);
  sparse_default(h, default_bin, num_bin, tot_g, tot_h);
}
#undef GH_ADD

/* Features [f_lo, f_hi) of a row block's sparse part: each active one's
 * bins summed over the rows rows[0..nrows) (rows == NULL: r0 .. r0+nrows-1)
 * in row order, into hist, default bins left for sparse_finish. */
static void build_sparse_rows(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int f_lo,
                              int f_hi, const int *rows, int nrows, int r0, const double *gh, hb_histbin_t *hist) {
  int any = 0;
  for (int f = f_lo; f < f_hi; f++)
    if (rb->in_sp[f] && (!active || active[f])) {
      memset(hist + d->hist_offset[f], 0, sizeof(hb_histbin_t) * (size_t)d->mappers[f].num_bin);
      any = 1;
    }
  if (!any) return;
  const int *off = d->hist_offset;
  const uint32_t *ent = rb->sp_ent;
  const uint64_t *has = rb->sp_has;
#define HAS_ENTRIES(r) ((has[(r) >> 6] >> ((r) & 63)) & 1)
  for (int i = 0; i < nrows; i++) {
    size_t r = rows ? (size_t)rows[i] : (size_t)(r0 + i);
    if (rows && i + PREFETCH_AHEAD < nrows) {
      /* a row's pointers PREFETCH_AHEAD rows ahead, its entries (through
       * pointers fetched by then) half as far; only rows that have some */
      size_t ra = (size_t)rows[i + PREFETCH_AHEAD], rh = (size_t)rows[i + PREFETCH_AHEAD / 2];
      if (HAS_ENTRIES(ra)) {
        HB_PREFETCH(rb->sp_ptr + ra);
        HB_PREFETCH(gh + 2 * ra);
      }
      if (HAS_ENTRIES(rh)) HB_PREFETCH(ent + rb->sp_ptr[rh]);
    }
    if (!HAS_ENTRIES(r)) continue;
    const double g = gh[2 * r], h = gh[2 * r + 1];
    for (int64_t k = rb->sp_ptr[r], e = rb->sp_ptr[r + 1]; k < e; k++) {
      int f = (int)(ent[k] >> 8);
      if (f < f_lo) continue;
      if (f >= f_hi) break;
      if (active && !active[f]) continue;
      bin_add(hist + off[f] + (ent[k] & 255u), g, h);
    }
  }
#undef HAS_ENTRIES
}

/* The first bundle of tile t of ntile over the row block's bundles. */
static int bundle_tile_start(const hb_rowblock_t *rb, int t, int ntile) {
  return (int)((long long)t * rb->bundles->nbundle / ntile);
}

/* Tile t of ntile of the row block's bundles summed over the rows
 * rows[0..nrows) (rows == NULL: r0 .. r0+nrows-1) in row order, into the
 * bundle slots of dst (rb->bhist or rb->bhalf), through this thread's
 * accumulators: each slot the same additions in the same order as the
 * compressed sparse rows make for its feature's bin. */
static void build_bundle_rows(const hb_rowblock_t *rb, int t, int ntile, const int *rows, int nrows, int r0,
                              const double *gh, hb_histbin_t *dst) {
  const hb_bundles_t *b = rb->bundles;
  const int j0 = bundle_tile_start(rb, t, ntile), nc = bundle_tile_start(rb, t + 1, ntile) - j0;
  if (nc <= 0) return;
  hb_histbin_t *acc = (hb_histbin_t *)hb_rowblock_scratch(rb, hb_threads_id());
  for (int k = 0; k < nc; k++)
    memset(acc + (size_t)k * HB_ACC_STRIDE, 0, sizeof(hb_histbin_t) * (size_t)b->num_bin[j0 + k]);
  const uint8_t *base = rb->bb_rows + j0;
  const size_t stride = (size_t)rb->bb_stride;
  if (rows && rb->bb_goff >= 0 && rb->gh_src == gh) {
    /* the pairs from the rows: one line a row */
    const size_t goff = (size_t)(rb->bb_goff - j0);
    for (int i = 0; i < nrows; i++) {
      if (i + PREFETCH_AHEAD < nrows) HB_PREFETCH(base + (size_t)rows[i + PREFETCH_AHEAD] * stride);
      const uint8_t *p = base + (size_t)rows[i] * stride;
      double g, h;
      memcpy(&g, p + goff, sizeof g);
      memcpy(&h, p + goff + sizeof g, sizeof h);
      row_add(acc, p, nc, g, h);
    }
  } else {
    for (int i = 0; i < nrows; i++) {
      const size_t r = rows ? (size_t)rows[i] : (size_t)(r0 + i);
      if (rows && i + PREFETCH_AHEAD < nrows) {
        const size_t ra = (size_t)rows[i + PREFETCH_AHEAD];
        hb_prefetch_row(base + ra * stride, (size_t)nc - 1);
        HB_PREFETCH(gh + 2 * ra);
      }
      row_add(acc, base + r * stride, nc, gh[2 * r], gh[2 * r + 1]);
    }
  }
  for (int k = 0; k < nc; k++)
    memcpy(dst + b->slot_off[j0 + k], acc + (size_t)k * HB_ACC_STRIDE,
           sizeof(hb_histbin_t) * (size_t)b->num_bin[j0 + k]);
}

/* The in_wide features of wide column c (active ones) summed over the rows
 * rows[0..nrows) (rows == NULL: r0 .. r0+nrows-1) in row order from the
 * column's codes, into hist, default bins left for sparse_finish: the same
 * additions in the same order as build_sparse_rows makes. */
static void build_wide_rows(const hb_dataset_t *d, const hb_rowblock_t *rb, int c, const uint8_t *active,
                            const int *rows, int nrows, int r0, const double *gh, hb_histbin_t *hist) {
  const int first = d->col_first[c], np = d->col_first[c + 1] - first;
  int part_off[HB_MAX_COLUMN_FEATURES + 1];  /* histogram slot of part j's bin 0, or -1: not summed here */
  int any = 0;
  for (int j = 0; j < np; j++) {
    const int f = first + j;
    part_off[j] = -1;
    if (!rb->in_wide[f] || (active && !active[f])) continue;
    part_off[j] = d->hist_offset[f];
    memset(hist + part_off[j], 0, sizeof(hb_histbin_t) * (size_t)d->mappers[f].num_bin);
    any = 1;
  }
  part_off[np] = -1;  /* no part holds the row's level */
  if (!any) return;
  const uint16_t *code = rb->wcode[c];
  for (int i = 0; i < nrows; i++) {
    size_t r = rows ? (size_t)rows[i] : (size_t)(r0 + i);
    if (rows && i + PREFETCH_AHEAD < nrows) {
      size_t ra = (size_t)rows[i + PREFETCH_AHEAD];
      HB_PREFETCH(code + ra);
      HB_PREFETCH(gh + 2 * ra);
    }
    const int cd = code[r], o = part_off[cd >> 8];
    if (o >= 0) bin_add(hist + o + (cd & 255), gh[2 * r], gh[2 * r + 1]);
  }
}

/* hist += rb->half over the bins of feature f: a leaf summed in two halves. */
static void add_feature_half(const hb_dataset_t *d, const hb_rowblock_t *rb, int f, hb_histbin_t *hist) {
  for (int b = d->hist_offset[f]; b < d->hist_offset[f + 1]; b++) {
    hist[b].g += rb->half[b].g;
    hist[b].h += rb->half[b].h;
  }
}

/* Sparse feature f of a row block, once its rows are summed: the second
 * half's sums added (when the leaf was summed in halves), then the bin its
 * rows did not add to from the leaf's totals: a compressed sparse feature's
 * default bin; a wide factor's part summed from the row codes its missing
 * bin (the codes give every row of the part, its default bin included, and
 * nothing for the rows of other parts or NA: those are the part's missing
 * bin, which the part's default bin is not when it is the first part). */
static void sparse_finish(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int f, int halves,
                          double tot_g, double tot_h, hb_histbin_t *hist) {
  if (!((rb->nsparse > 0 && rb->in_sp[f]) || (rb->nwide > 0 && rb->in_wide[f])) || (active && !active[f])) return;
  if (halves) add_feature_half(d, rb, f, hist);
  const int nb = d->mappers[f].num_bin;
  const int left = rb->nwide > 0 && rb->in_wide[f] ? nb - 1 : d->mappers[f].default_bin;
  sparse_default(hist + d->hist_offset[f], left, nb, tot_g, tot_h);
}

/* Slot k of a bundle's bins: the first half's sums, plus the second's when
 * the leaf was summed in halves (first + second, as add_feature_half adds). */
static inline hb_histbin_t slot_value(const hb_histbin_t *b1, const hb_histbin_t *b2, int halves, int k) {
  hb_histbin_t v = b1[k];
  if (halves) {
    v.g += b2[k].g;
    v.h += b2[k].h;
  }
  return v;
}

/* Bundle j's active members' histograms from rb->bhist (and rb->bhalf),
 * their default bins from the leaf's totals: the unbundled bins bit for bit. */
static void bundle_finish(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int j, int halves,
                          double tot_g, double tot_h, hb_histbin_t *hist) {
  const hb_bundles_t *b = rb->bundles;
  const hb_histbin_t *b1 = (const hb_histbin_t *)rb->bhist + b->slot_off[j];
  const hb_histbin_t *b2 = (const hb_histbin_t *)rb->bhalf + b->slot_off[j];
#define SLOT(k) slot_value(b1, b2, halves, k)
  HB_BUNDLE_RECOVER(hb_histbin_t, double, b, d, j, active, hist, SLOT, tot_g, tot_h);
#undef SLOT
}

/* The first feature of part t of nparts of a row block's sparse part, the
 * parts holding about equal numbers of entries (part nparts starts at nfeat). */
static int sparse_part_start(const hb_dataset_t *d, const hb_rowblock_t *rb, int t, int nparts) {
  if (t <= 0) return 0;
  if (t >= nparts) return d->nfeat;
  int64_t total = rb->sp_ptr[rb->nrow], want = total * t / nparts, seen = 0;
  for (int f = 0; f < d->nfeat; f++) {
    if (seen >= want) return f;
    if (rb->in_sp[f]) seen += d->store[f].nnz;
  }
  return d->nfeat;
}

/* ------------------------------------------------------------ driver */

/* Columns' worth of work of one wide slot in a tile (a code read, a pointer
 * looked up, a read-modify-write in the histogram). */
#define TILE_SLOT_COLS 2

/* Tile t of ntile over the row block's n_act active columns: the active
 * columns with active rank in [t*n_act/ntile, (t+1)*n_act/ntile); the
 * rows' bins at bins (as build_tile). */
static void run_tile(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *bins, const uint8_t *active,
                     int t, int ntile, int n_act, const int *rows, int nrows, int r0, const double *gh,
                     hb_histbin_t *hist, const tile_wide_t *tw) {
  /* The last tile also sums the wide slots (tw): counted as TILE_SLOT_COLS
   * columns each, so that it takes fewer columns, while keeping one. */
  int extra = 0;
  if (tw && tw->ns > 0 && ntile > 1) {
    extra = TILE_SLOT_COLS * tw->ns;
    int most = (int)((long long)(n_act - 1) * ntile / (ntile - 1)) - n_act;  /* last tile keeps a column */
    if (extra > most) extra = most > 0 ? most : 0;
    if (extra > HB_HIST_TILE * ntile - n_act) extra = HB_HIST_TILE * ntile - n_act;  /* no tile too wide */
  }
  const int total = n_act + extra;
  int lo = (int)((long long)t * total / ntile), hi = (int)((long long)(t + 1) * total / ntile);
  if (t == ntile - 1 || hi > n_act) hi = n_act;
  int col[HB_HIST_TILE], nb[HB_HIST_TILE], off[HB_HIST_TILE];
  hb_histbin_t *hp[HB_HIST_TILE];
  const int nc = hb_tile_columns(d, rb, active, lo, hi, col, nb, off);
  for (int k = 0; k < nc; k++) hp[k] = hist + off[k];
  if (nc > 0)
    build_tile(rb, bins, rows, nrows, r0, gh, col, hp, nb, nc, (hb_histbin_t *)hb_rowblock_scratch(rb, hb_threads_id()),
               t == ntile - 1 ? tw : NULL);
}

/* The slot columns' in_wide parts (active ones) to sum in a tile of nrows
 * rows into dst0, or with split < nrows its rows from split on into dst1;
 * their bins there zeroed. tw->ns is 0 when there are none. */
static void tile_wide_init(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int nrows,
                           int split, hb_histbin_t *dst0, hb_histbin_t *dst1, tile_wide_t *tw) {
  tw->ns = 0;
  tw->split = split < nrows ? split : nrows;
  tw->dst[0] = dst0;
  tw->dst[1] = dst1;
  for (int s = 0; s < rb->nwslot; s++) {
    const int c = rb->wslot_col[s], first = d->col_first[c], np = d->col_first[c + 1] - first;
    const int one = rb->wslot_part[s] >= 0;
    long long *part = tw->part[tw->ns];
    int any = 0;
    for (int j = 0; j <= HB_MAX_COLUMN_FEATURES; j++) part[j] = -1;
    for (int j = 0; j < np; j++) {
      const int f = first + j;
      if (!rb->in_wide[f] || (active && !active[f])) continue;
      part[one ? 0 : j] = d->hist_offset[f];
      for (int k = 0; k < 1 + (tw->split < nrows); k++)
        memset(tw->dst[k] + d->hist_offset[f], 0, sizeof(hb_histbin_t) * (size_t)d->mappers[f].num_bin);
      any = 1;
    }
    if (!any) continue;
    tw->off[tw->ns] = rb->wslot_off[s];
    tw->one[tw->ns] = one;
    tw->ns++;
  }
}

/* Rows rows[lo..hi) copied to the row block's gathered rows (hist.h):
 * their bins and their pairs from gh. */
static void gather_rows(const hb_rowblock_t *rb, const int *rows, int lo, int hi, int nrows, const double *gh) {
  const size_t stride = (size_t)rb->stride;
  const uint8_t *src = rb->bins;
  uint8_t *dst = rb->gbins + (size_t)lo * stride;
  double *g = rb->ggh + 2 * (size_t)lo;
  for (int i = lo; i < hi; i++, dst += stride, g += 2) {
    if (i + PREFETCH_AHEAD < nrows) {
      const size_t ra = (size_t)rows[i + PREFETCH_AHEAD];
      hb_prefetch_row(src + ra * stride, stride - 1);
      HB_PREFETCH(gh + 2 * ra);
    }
    const size_t r = (size_t)rows[i];
    memcpy(dst, src + r * stride, stride);
    g[0] = gh[2 * r];
    g[1] = gh[2 * r + 1];
  }
}

int hb_hist_parts(const hb_rowblock_t *rb, int nrows, int nth) {
  if (nrows < HB_HIST_HALF_ROWS) return 1;
  if (!rb || !rb->parts || rb->nwslot > 0) return 2;
  int p = 2;
  while (p < HB_HIST_MAX_PARTS && (long long)nrows >= 2LL * p * HB_HIST_PART_ROWS) p *= 2;
  if (rb->exact)  /* from 8 threads: 4 * 2 <= nth */
    while (p < HB_HIST_MAX_PARTS && 4 * p <= nth && (long long)nrows >= 2LL * p * HB_HIST_EXACT_PART_ROWS) p *= 2;
  return p;
}

/* The sums of part s (>= 1) of a leaf summed in parts. */
static hb_histbin_t *part_hist(const hb_dataset_t *d, const hb_rowblock_t *rb, int s) {
  return s == 1 ? rb->half : rb->parts + (size_t)(s - 2) * (size_t)d->total_bins;
}

/* hist += the sums of parts 1 .. nparts - 1, in part order, over the bins of
 * row-block column c (when active). */
static void add_parts(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int c, int nparts,
                      hb_histbin_t *hist) {
  int f = rb->feat[c];
  if (active && !active[f]) return;
  add_feature_half(d, rb, f, hist);
  for (int s = 2; s < nparts; s++) {
    const hb_histbin_t *p = part_hist(d, rb, s);
    for (int b = d->hist_offset[f]; b < d->hist_offset[f + 1]; b++) {
      hist[b].g += p[b].g;
      hist[b].h += p[b].h;
    }
  }
}

/* Feature f is read from its column store (neither row-wise part holds it). */
static int column_wise(const hb_rowblock_t *rb, int f) {
  return !rb || rb->by_col[f];
}

static void run_column(const hb_dataset_t *d, int f, const int *rows, int nrows, const double *gh,
                       double tot_g, double tot_h, hb_histbin_t *hist) {
  const hb_binmapper_t *m = &d->mappers[f];
  hb_histbin_t *h = hist + d->hist_offset[f];
  memset(h, 0, sizeof(hb_histbin_t) * (size_t)m->num_bin);
  const hb_featstore_t *s = &d->store[f];
  if (s->sparse)
    build_sparse(s, m->default_bin, rows, nrows, gh, tot_g, tot_h, m->num_bin, h);
  else
    build_dense(s->bins, rows, nrows, gh, h);
}

/* What a leaf's histogram sums, whatever its rows: the row block's active
 * columns, the column-wise features, the sparse part's entries a row (at
 * least one, when it has one), the bundles, and the bins of every active
 * feature. */
typedef struct {
  int n_act, n_col, nbundle;
  long long sp_per_row, nbin;
} hist_shape_t;

static hist_shape_t hist_shape(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active) {
  hist_shape_t s = {0, 0, 0, 0, 0};
  if (rb)
    for (int c = 0; c < rb->ncol; c++) s.n_act += !active || active[rb->feat[c]];
  for (int f = 0; f < d->nfeat; f++) {
    s.n_col += column_wise(rb, f) && (!active || active[f]);
    if (!active || active[f]) s.nbin += d->mappers[f].num_bin;
  }
  if (rb && rb->nsparse > 0) {
    s.sp_per_row = rb->nrow > 0 ? rb->sp_ptr[rb->nrow] / rb->nrow : 0;
    if (s.sp_per_row < 1) s.sp_per_row = 1;
  }
  s.nbundle = rb && rb->bundles ? rb->bundles->nbundle : 0;
  return s;
}

static int hist_threads(const hist_shape_t *s, const hb_rowblock_t *rb, int nrows, int nthreads) {
  int nth = hb_threads_use(nthreads);
  const long long per_row = s->n_act + s->n_col + s->sp_per_row + (rb ? rb->nwide : 0) + s->nbundle;
  if ((long long)nrows * per_row + 2 * s->nbin < PAR_MIN_UPDATES) nth = 1;
  /* one set of accumulators per thread */
  if ((s->n_act > 0 || s->nbundle > 0) && nth > rb->nscratch) nth = rb->nscratch;
  return nth;
}

int hb_hist_threads(const hb_dataset_t *d, const hb_rowblock_t *rb, int nrows, const uint8_t *active,
                    int nthreads) {
  const hist_shape_t s = hist_shape(d, rb, active);
  return hist_threads(&s, rb, nrows, nthreads);
}

int hb_hist_build_then(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                       const double *gh, double tot_g, double tot_h, const uint8_t *active, hb_histbin_t *hist,
                       int nthreads, hb_team_fn then, void *arg) {
  const hist_shape_t shape = hist_shape(d, rb, active);
  const int n_act = shape.n_act, n_col = shape.n_col, nbundle = shape.nbundle;
  int nth = hist_threads(&shape, rb, nrows, nthreads);
  /* A leaf of HB_HIST_HALF_ROWS rows or more (the root too) is summed in two
   * halves of its rows, the first into hist and the second into rb->half,
   * then added: threads then split its rows as well as its columns, so each
   * of its rows is fetched by fewer threads (at 16 threads the root's
   * column tiles had each thread stream every row), and every sum is the
   * same whatever the thread count. */
  int nhalf = n_act > 0 ? hb_hist_parts(rb, nrows, nth) : 1, mid = nrows / 2;
  int ntile = (n_act + HB_HIST_TILE - 1) / HB_HIST_TILE;
  if (n_act > 0 && nth > 1) {
    /* tiles times halves a multiple of the threads, each tile at least a few columns wide */
    int per = (nth + nhalf - 1) / nhalf;
    int want = ((ntile + per - 1) / per) * per;
    if (want > n_act) want = n_act;
    ntile = want > ntile ? want : ntile;
  }
  int nitem = ntile * nhalf;
  /* the leaf's rows gathered first (hist.h), when enough tiles read each of their lines */
  const int gather = rows && nth > 1 && rb && rb->grows >= nrows &&
                     ntile >= HB_GATHER_MIN_TILES * ((rb->stride + 63) / 64);
  const uint8_t *tbins = gather ? rb->gbins : rb ? rb->bins : NULL;
  const double *tgh = gather ? rb->ggh : gh;
  const int *trows = gather ? NULL : rows;
  /* The sparse part, read row by row: in halves of the rows the same way
   * (any leaf of HB_HIST_HALF_ROWS rows), times parts of its features with
   * about equal entries, so that the threads share out its rows as well;
   * and each wide column's codes, in the same halves. Items run half by
   * half (w = half * nper + k), so that the threads each take a half of
   * everything rather than all of one kind. */
  int nwide = rb ? rb->nwide : 0;
  int shalf = rb && (rb->nsparse > 0 || nwide > 0 || nbundle > 0) && nrows >= HB_HIST_HALF_ROWS ? 2 : 1;
  int nsp = rb && rb->nsparse > 0 ? (nth + shalf - 1) / shalf : 0;
  /* The bundles in tiles of at most HB_HIST_TILE (the accumulators' width),
   * as many as the threads when the rows are not halved. */
  int nbt = (nbundle + HB_HIST_TILE - 1) / HB_HIST_TILE;
  if (shalf == 1 && nbt < nth) nbt = nth < nbundle ? nth : nbundle;
  /* The slot columns' parts are summed by the last tile, from the rows it
   * reads anyway, in the same halves (the whole data: its tile is not
   * halved, its wide parts are, at mid); the other wide columns in a pass
   * of their own. */
  tile_wide_t tw[2];
  const int *wide_list = nwide > 0 ? rb->wide_col : NULL;
  tw[0].ns = tw[1].ns = 0;
  if (n_act > 0 && rb->nwslot > 0) {
    if (nhalf == 2) {
      tile_wide_init(d, rb, active, nrows - mid, nrows, rb->half, NULL, &tw[1]);
      tile_wide_init(d, rb, active, mid, mid, hist, NULL, &tw[0]);
    } else {
      tile_wide_init(d, rb, active, nrows, shalf == 2 ? mid : nrows, hist, rb->half, &tw[0]);
    }
    /* the slot columns are the first wide columns (rowblock_wide) */
    wide_list = rb->wide_col + rb->nwslot;
    nwide = rb->nwide - rb->nwslot;
  }
  int nper = nsp + nwide + nbt, finish = nsp + nwide > 0 || tw[0].ns > 0 || tw[1].ns > 0;
#define RUN_ITEM(w)                                                                                     \
  do {                                                                                                  \
    int t_ = (w) / nhalf, s_ = (w) % nhalf;                                                             \
    int lo_ = (int)((long long)s_ * nrows / nhalf), hi_ = (int)((long long)(s_ + 1) * nrows / nhalf);   \
    run_tile(d, rb, tbins, active, t_, ntile, n_act, trows ? trows + lo_ : NULL, hi_ - lo_, trows ? 0 : lo_, \
             tgh, s_ ? part_hist(d, rb, s_) : hist, &tw[s_ < 2 ? s_ : 0]);                              \
  } while (0)
#define RUN_SPARSE(w)                                                                                         \
  do {                                                                                                        \
    int t_ = (w) % nper, s_ = (w) / nper, lo_ = s_ ? mid : 0, hi_ = s_ || shalf == 1 ? nrows : mid;          \
    if (t_ < nsp)                                                                                             \
      build_sparse_rows(d, rb, active, sparse_part_start(d, rb, t_, nsp), sparse_part_start(d, rb, t_ + 1, nsp), \
                        rows ? rows + lo_ : NULL, hi_ - lo_, lo_, gh, s_ ? rb->half : hist);                  \
    else if (t_ < nsp + nwide)                                                                                \
      build_wide_rows(d, rb, wide_list[t_ - nsp], active, rows ? rows + lo_ : NULL, hi_ - lo_, lo_, gh,      \
                      s_ ? rb->half : hist);                                                                  \
    else                                                                                                      \
      build_bundle_rows(rb, t_ - nsp - nwide, nbt, rows ? rows + lo_ : NULL, hi_ - lo_, lo_, gh,              \
                        (hb_histbin_t *)(s_ ? rb->bhalf : rb->bhist));                                        \
  } while (0)
  if (nth == 1) {
    for (int w = 0; w < nitem; w++) RUN_ITEM(w);
    if (nhalf > 1)
      for (int c = 0; c < rb->ncol; c++) add_parts(d, rb, active, c, nhalf, hist);
    for (int w = 0; w < nper * shalf; w++) RUN_SPARSE(w);
    for (int f = 0; finish && f < d->nfeat; f++) sparse_finish(d, rb, active, f, shalf == 2, tot_g, tot_h, hist);
    for (int j = 0; j < nbundle; j++) bundle_finish(d, rb, active, j, shalf == 2, tot_g, tot_h, hist);
    for (int f = 0; f < d->nfeat; f++)
      if (column_wise(rb, f) && (!active || active[f]))
        run_column(d, f, rows, nrows, gh, tot_g, tot_h, hist);
    return 0;
  }
  /* Barriers: one after the row-wise items when something reads their
   * sums (the parts' additions, the sparse and bundle finishes), one before
   * `then` (the histogram whole), and the region's end; the column-wise
   * features need none of them. */
  const int after = nhalf > 1 || finish || nbundle > 0;
HB_OMP(parallel num_threads(nth))
  {
    if (gather) {  /* its barrier: every row copied before a tile reads */
HB_OMP(for schedule(static))
      for (int k = 0; k < nth; k++)
        gather_rows(rb, rows, (int)((long long)k * nrows / nth), (int)((long long)(k + 1) * nrows / nth), nrows, gh);
    }
HB_OMP(for schedule(static) nowait)
    for (int w = 0; w < nitem; w++) RUN_ITEM(w);
    if (nper * shalf > 0) {
HB_OMP(for schedule(static) nowait)
      for (int w = 0; w < nper * shalf; w++) RUN_SPARSE(w);
    }
    if (after) {
HB_OMP(barrier)
    }
    if (nhalf > 1) {
HB_OMP(for schedule(static) nowait)
      for (int c = 0; c < rb->ncol; c++) add_parts(d, rb, active, c, nhalf, hist);
    }
    if (finish) {
HB_OMP(for schedule(static) nowait)
      for (int f = 0; f < d->nfeat; f++) sparse_finish(d, rb, active, f, shalf == 2, tot_g, tot_h, hist);
    }
    if (nbundle > 0) {
HB_OMP(for schedule(static) nowait)
      for (int j = 0; j < nbundle; j++) bundle_finish(d, rb, active, j, shalf == 2, tot_g, tot_h, hist);
    }
    if (n_col > 0) {
HB_OMP(for schedule(dynamic, 1) nowait)
      for (int f = 0; f < d->nfeat; f++)
        if (column_wise(rb, f) && (!active || active[f]))
          run_column(d, f, rows, nrows, gh, tot_g, tot_h, hist);
    }
    if (then) {  /* the histogram whole, then the caller's work on the same team */
HB_OMP(barrier)
      then(arg, nth);
    }
  }
#undef RUN_SPARSE
#undef RUN_ITEM
  return then != NULL;
}

void hb_hist_build(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                   const double *gh, double tot_g, double tot_h,
                   const uint8_t *active, hb_histbin_t *hist, int nthreads) {
  (void)hb_hist_build_then(d, rb, rows, nrows, gh, tot_g, tot_h, active, hist, nthreads, NULL, NULL);
}

/* ---------------------------------------------------------------- twins */

/* The buffers a twin owns: everything a histogram build writes. */
#define TWIN_OWNED(X) X(scratch) X(half) X(parts) X(g_mem) X(bhist) X(bhalf)

int hb_rowblock_twin(const hb_rowblock_t *rb, int total_bins, int nthreads, hb_rowblock_t **out) {
  *out = NULL;
  hb_rowblock_t *t = hb_calloc(1, sizeof *t);
  if (!t) return HB_ERR_NOMEM;
  *t = *rb;  /* rb's rows and tables, read only */
#define TWIN_NONE(f) t->f = NULL;
  TWIN_OWNED(TWIN_NONE)
#undef TWIN_NONE
  t->nscratch = t->grows = 0;
  t->gbins = NULL;
  t->ggh = NULL;
  const size_t tb = (size_t)(total_bins > 0 ? total_bins : 1);
  int ok = 1;
  if (rb->scratch) {
    t->nscratch = hb_threads_use(nthreads);
    ok &= (t->scratch = hb_malloc(HB_HIST_SCRATCH * (size_t)t->nscratch)) != NULL;
  }
  ok &= (t->half = hb_malloc(sizeof(hb_histbin_t) * tb)) != NULL;
  if (rb->parts) ok &= (t->parts = hb_malloc(sizeof(hb_histbin_t) * (size_t)(HB_HIST_MAX_PARTS - 2) * tb)) != NULL;
  if (rb->bhist) {
    const size_t nb = (size_t)rb->bundles->slot_off[rb->bundles->nbundle];
    ok &= (t->bhist = hb_malloc(sizeof(hb_histbin_t) * (nb > 0 ? nb : 1))) != NULL;
    ok &= (t->bhalf = hb_malloc(sizeof(hb_histbin_t) * (nb > 0 ? nb : 1))) != NULL;
  }
  if (rb->g_mem && hb_threads_use(nthreads) >= HB_GATHER_MIN_TILES) gather_alloc(t, (size_t)rb->grows);
  if (!ok) {
    hb_rowblock_twin_free(t);
    return HB_ERR_NOMEM;
  }
  *out = t;
  return HB_OK;
}

size_t hb_rowblock_twin_bytes(const hb_rowblock_t *twin, int total_bins) {
  return twin ? build_bytes(twin, total_bins) : 0;
}

void hb_rowblock_twin_free(hb_rowblock_t *twin) {
  if (!twin) return;
#define TWIN_FREE(f) hb_free(twin->f);
  TWIN_OWNED(TWIN_FREE)
#undef TWIN_FREE
  hb_free(twin);
}
#undef TWIN_OWNED
