/* hist.h: gradient histograms of one leaf, in double precision (CPU).
 * Slot hist_offset[f] + b of a leaf histogram holds the sums over the leaf's
 * rows whose feature f falls in bin b. */
#ifndef HB_HIST_H
#define HB_HIST_H
#include <stddef.h>
#include <stdint.h>
#include "dataset.h"
#include "bundle.h"

/* No row count: split_rules.h estimates counts from hessian sums. */
typedef struct {
  double g;   /* sum of gradients */
  double h;   /* sum of hessians */
} hb_histbin_t;

/* A row-major copy of some dense features' bins (the CPU learner's own
 * layout, built from the dataset's columns): row r's bins for the block's
 * columns are the ncol bytes at bins + r * stride, so a leaf's histogram
 * reads one or two cache lines per row instead of one per feature. For
 * quantized training each row also carries its packed gradient (qoff), so
 * that a row of a scattered leaf costs one cache line, not two or three. */
typedef struct {
  int nrow, ncol;
  int stride;       /* bytes from one row's bins to the next's (ncol or more) */
  int qoff;         /* where a row's packed quantized gradient sits in its
                     * stride (an int32, hb_rowblock_set_q), or -1: none */
  int goff;         /* where a row's (gradient, hessian) pair sits in its
                     * stride (two doubles, hb_rowblock_set_gh), or -1: none */
  const double *gh_src;  /* the array whose pairs the rows hold (NULL: none yet) */
  int nfeat;        /* the dataset's feature count */
  /* Per-thread accumulators of the histogram kernels (HB_HIST_SCRATCH bytes
   * for each of nscratch threads; NULL when ncol is 0): a tile's columns
   * are summed there, column k at k * HB_ACC_STRIDE, and then copied out. */
  void *scratch;
  int nscratch;
  hb_histbin_t *half;   /* the dataset's total_bins: the second half's sums of a
                         * large leaf (hb_hist_build), or the second part's */
  hb_histbin_t *parts;  /* HB_HIST_MAX_PARTS - 2 times total_bins: the further
                         * parts' sums of a leaf summed in more than two parts
                         * (hb_hist_parts), or NULL: at most two */
  int exact;        /* the (gradient, hessian) pairs hb_hist_build is given sit on
                     * exact_sums' grid (quantize.h), where every sum is the same
                     * in any order: the parts may then follow the thread count
                     * (hb_hist_parts). Set by the grower for each tree; 0 after
                     * hb_rowblock_create. */
  /* A leaf's rows gathered (hb_hist_build): the bins of rows[i] at
   * gbins + i * stride and its (gradient, hessian) pair at ggh[2i], for
   * leaves of at most grows rows (0: none, the pointers NULL). */
  int grows;
  uint8_t *gbins;   /* aligned to 64 bytes */
  double *ggh;
  void *g_mem;      /* the allocation gbins lies in */
  int *feat;        /* ncol: the dataset feature held in each column, increasing */
  int *col_of;      /* nfeat: the column holding feature f, or -1 */
  uint8_t *bins;    /* nrow rows of stride bytes, row-major, aligned to 64 bytes */
  void *bins_mem;   /* the allocation bins lies in */
  /* The sparse features, row-wise (compressed sparse rows): row r's entries
   * off their default bin are sp_ent[k] = feature << 8 | bin for k in
   * [sp_ptr[r], sp_ptr[r + 1]), features increasing. A leaf's histogram
   * then costs its rows' entries, not a pass over the leaf per feature,
   * and a scattered row's entries one cache line. */
  int nsparse;      /* sparse features held (0: none, the sp_* are NULL) */
  uint8_t *in_sp;   /* nfeat: feature f is held here */
  int64_t *sp_ptr;  /* nrow + 1 */
  uint32_t *sp_ent; /* the entries: feature << 8 | bin */
  uint64_t *sp_has; /* nrow bits: row r has entries (a leaf's rows without
                     * any, often most, cost a bit of a small array, not a
                     * read of their pointers) */
  /* Factor columns spread over several features (dataset.h), some of them
   * sparse: per such column, a code per row, part * 256 + bin for the part
   * that holds the row's level, or nparts * 256 when none does (NA, a level
   * merged away); NULL for other columns (wcode itself NULL when there are
   * none). A partition on a sparse part decides each row from one two-byte
   * read (grow.c), and a column whose sparse parts store at least one row
   * in HB_WIDE_MIN_SHARE has their histograms summed from its codes, one
   * read a row, instead of through the compressed sparse rows (in_wide;
   * such features are not in the sp_* part). */
  int ncolumn;      /* the dataset's input columns */
  uint16_t **wcode; /* ncolumn */
  uint8_t *in_wide; /* nfeat, or NULL: feature f summed from its column's codes */
  int nwide;        /* columns with features in_wide */
  int *wide_col;    /* nwide: those columns, increasing */
  /* Wide columns whose codes also sit in each row, after its bins (full
   * precision only, and only with dense columns): the tile that reads a
   * leaf's rows then sums their in_wide parts from the same cache line,
   * instead of a pass of its own over the leaf's rows reading a code and a
   * gradient each (hist.c). Such a column's used sparse parts are all
   * in_wide, however few rows they store. A slot is one byte when one part
   * is summed (that part's bin, its missing bin for rows of other parts),
   * else two (the wide code). */
  int nwslot;
  int *wslot_col;   /* nwslot: the columns, increasing */
  int *wslot_off;   /* nwslot: a slot's first byte in a row */
  int *wslot_part;  /* nwslot: the summed part of a one-byte slot, or -1: two bytes */
  /* Exclusive feature bundles of sparse features (bundle.h), or NULL: their
   * bins row-major (bundle j of row r at bb_rows[r * bb_stride + j]), so a
   * leaf's bundles cost one or two cache lines a row; a bundled feature is
   * in neither the compressed sparse rows nor the column-wise features.
   * bhist and bhalf hold the bundles' histograms (slot_off[nbundle] pairs,
   * double or integer) of a leaf or of the second half of its rows. */
  hb_bundles_t *bundles;
  uint8_t *bb_rows;
  void *bb_mem;
  int bb_stride;
  int bb_goff;      /* where a bundle row holds its (gradient, hessian) pair
                     * (hb_rowblock_set_gh), or -1: none */
  void *bhist, *bhalf;
  uint8_t *by_col;  /* nfeat: feature f is read from its column store (hist.c) */
} hb_rowblock_t;

/* Feature f is summed through a bundle of rb. */
static inline int hb_rowblock_bundled(const hb_rowblock_t *rb, int f) {
  return rb && rb->bundles && rb->bundles->bundle_of[f] >= 0;
}

/* Most wide columns given slots in the rows (the others are summed in a
 * pass of their own). */
#define HB_WSLOT_MAX 8

/* A wide factor's sparse parts are summed from its row codes when they
 * store at least one row in this many (else a code read per row of a leaf
 * costs more than walking the few stored entries). */
#define HB_WIDE_MIN_SHARE 8

/* Prefetch a row's bytes p[0..last]: both ends, since a row whose stride is
 * not a power of two may run into the next cache line (a 100-byte row
 * spans three lines half the time). Prefetching only the first line left
 * workload 2's scattered leaves waiting on the others: a third of its
 * training time. */
static inline void hb_prefetch_row(const uint8_t *p, size_t last) {
#if defined(__GNUC__)
  __builtin_prefetch(p);
  __builtin_prefetch(p + last);
#else
  (void)p;
  (void)last;
#endif
}

/* A tile's accumulators of column k start at k * HB_ACC_STRIDE pairs (or
 * k * HB_QACC_STRIDE 32-bit words): one cache line more than a column's
 * 256 bins. With 256 pairs, exactly 4 KiB, column k + 1's bin b shares
 * its address's low 12 bits with column k's bin b, and a load of one
 * waits on a store to the other (4K aliasing): rows whose features fall
 * in equal bins, common with few bins, made the kernel 2.7x slower at 16
 * bins and 11x at 2 (Zen 5). The 32-bit accumulators (1 KiB a column
 * before, so column k + 4 met column k) do not stall that way but gain
 * from the spread (13% at 255 bins in the same probe). */
#define HB_ACC_STRIDE (HB_MAX_NUM_BIN + 4)
#define HB_QACC_STRIDE (HB_MAX_NUM_BIN + 16)

/* Bytes of one thread's accumulators: HB_HIST_TILE columns of
 * HB_ACC_STRIDE double pairs (or integer pairs, hb_qbin_t, the same 16
 * bytes), then HB_HIST_TILE columns of HB_QACC_STRIDE 32-bit accumulators
 * for the quantized kernel. */
#define HB_HIST_TILE 64
#define HB_HIST_SCRATCH \
  ((size_t)HB_HIST_TILE * (HB_ACC_STRIDE * sizeof(hb_histbin_t) + HB_QACC_STRIDE * sizeof(int32_t)))

/* Row block of the features f with use[f] != 0 (use == NULL: every
 * feature): the dense ones row-major when at least two qualify (one column
 * gains nothing over the column store: ncol is then 0), the sparse ones as
 * compressed sparse rows. *out is NULL (and HB_OK returned) when neither
 * part holds anything. On failure returns a status with a message set and
 * *out is NULL. */
int hb_rowblock_create(const hb_dataset_t *d, const uint8_t *use, int with_q, int nthreads,
                       hb_rowblock_t **out);
/* The same, and with max_conflict_rate >= 0 the used sparse features
 * bundled (hb_bundle_create) and summed per bundle; < 0: no bundles (what
 * hb_rowblock_create does). */
int hb_rowblock_create_bundled(const hb_dataset_t *d, const uint8_t *use, int with_q, double max_conflict_rate,
                               int nthreads, hb_rowblock_t **out);
/* Thread t's accumulators (t < nscratch). */
static inline void *hb_rowblock_scratch(const hb_rowblock_t *rb, int t) {
  return (char *)rb->scratch + (size_t)t * HB_HIST_SCRATCH;
}
/* Copy the packed quantized gradients q[0..nrow) into the rows (qoff >= 0). */
void hb_rowblock_set_q(hb_rowblock_t *rb, const int32_t *q, int nthreads);
/* Copy the (gradient, hessian) pairs gh[2r], gh[2r + 1] into the rows
 * (goff >= 0) and the bundles' rows (bb_goff >= 0; else nothing). hb_hist_build then reads a row's pair from the
 * row, not from gh, whenever it is given this same gh array: the caller
 * copies again whenever gh's contents change (hb_grow_tree: every tree). */
void hb_rowblock_set_gh(hb_rowblock_t *rb, const double *gh, int nthreads);
/* hb_rowblock_set_gh in pieces, for a caller that shares the rows out in a
 * parallel region of its own: the pairs of rows [lo, hi) on the calling
 * thread, and once every row is copied, gh made the rows' source. */
void hb_rowblock_set_gh_rows(hb_rowblock_t *rb, const double *gh, int lo, int hi);
void hb_rowblock_set_gh_src(hb_rowblock_t *rb, const double *gh);
void hb_rowblock_free(hb_rowblock_t *rb);
/* About the bytes rb holds (its rows, gathered rows, accumulators and
 * parts' buffers; total_bins: its dataset's), 0 for NULL. */
size_t hb_rowblock_bytes(const hb_rowblock_t *rb, int total_bins);

/* rb's rows hold nothing of a tree's gradients (no quantized values, no
 * gradient pairs: hb_rowblock_set_q and hb_rowblock_set_gh write nothing),
 * so that growers of different trees may read them at once. */
static inline int hb_rowblock_shareable(const hb_rowblock_t *rb) {
  return rb && rb->qoff < 0 && rb->goff < 0 && rb->bb_goff < 0;
}

/* A twin of rb for another grower building histograms at the same time as
 * rb's (learner_cpu.c's class workers, when hb_rowblock_shareable): rb's
 * rows, read only, and buffers of its own for what a build writes
 * (accumulators for nthreads threads, the halves' and parts' sums, the
 * gathered rows, the bundles' sums). It must not outlive rb, and rb's
 * fields are copied once: rb is not changed afterwards (no gradients go
 * into shareable rows). A twin is freed with hb_rowblock_twin_free, never
 * hb_rowblock_free; hb_rowblock_twin_bytes counts its own buffers.
 * HB_ERR_NOMEM without a message when an allocation failed. */
int hb_rowblock_twin(const hb_rowblock_t *rb, int total_bins, int nthreads, hb_rowblock_t **out);
void hb_rowblock_twin_free(hb_rowblock_t *twin);
size_t hb_rowblock_twin_bytes(const hb_rowblock_t *twin, int total_bins);

/* Rows from which hb_hist_build sums a leaf in two halves, rows[0..nrows/2)
 * and the rest, each in row order, then added (first + second): for the
 * row block's dense columns and its sparse part in any leaf. hb_qhist_build's threads
 * split a leaf's rows from here on, its columns below. */
#define HB_HIST_HALF_ROWS 4096

/* A leaf's dense columns are summed in more parts of its rows, one part
 * per HB_HIST_PART_ROWS rows rounded down to a power of two, at most
 * HB_HIST_MAX_PARTS (and never fewer than the two halves above), then added
 * in part order: the parts depend on the row count alone, so every sum is
 * the same whatever the thread count, and many threads split a large leaf's
 * rows rather than its columns (16 threads read each row of a 28-feature
 * leaf 8 times over in two halves, twice in eight parts). Smaller parts
 * cost every thread count a zeroing, copy and addition of the bins per
 * part: 4096 rows a part cut 16 threads' histograms of leaves of 16384 to
 * 65535 rows by a third but made inst/bench/run.R's workload 3 (50
 * features, 500k rows) 10% slower at 2 threads
 * (inst/bench/results/hist-parts-2026-12-01.md). Only where
 * total_bins <= HB_HIST_PARTS_MAX_BINS (the parts' buffers) and no wide
 * factor's slots ride in the dense tiles. */
#define HB_HIST_PART_ROWS 16384
#define HB_HIST_MAX_PARTS 8
#define HB_HIST_PARTS_MAX_BINS 65536
/* On exact_sums' grid (rb->exact) the parts' sums add up to the same
 * doubles however the rows are cut, so there a leaf worked on by nth >= 8
 * threads takes more parts, up to one for every two threads and at least
 * HB_HIST_EXACT_PART_ROWS rows each: fewer, wider column tiles, each row
 * fetched by fewer threads. Below 8 threads the parts above stay: each
 * part costs an addition of the whole histogram, and on the H200 host's
 * CPU one part a thread made 50-feature leaves of 4k-65k rows 9-26% slower
 * at 4 threads, and those of 8k-16k rows up to 42% slower at 8 (in one of
 * two sessions; inst/bench/results/exact-default-2026-12-02.md). */
#define HB_HIST_EXACT_PART_ROWS 1024
/* The parts hb_hist_build sums a leaf of nrows rows' dense columns in on
 * nth threads: 1, 2, or (row blocks with parts buffers) up to
 * HB_HIST_MAX_PARTS; the thread count matters only on the grid. */
int hb_hist_parts(const hb_rowblock_t *rb, int nrows, int nth);

/* A scattered leaf whose dense columns are summed by several column tiles
 * has each tile fetch every row's line and gradient pair on its own: at
 * 16 threads a 28-feature leaf's row is fetched by 8 to 16 threads. Such a
 * leaf's rows (their bins and pairs) are first copied, once, in row order,
 * to one contiguous block (the threads sharing the rows out), and the
 * tiles then stream that block: the same additions in the same order, so
 * the same sums bit for bit (and the same model at every thread count).
 * Done when there are at least HB_GATHER_MIN_TILES tiles for each of a
 * row's cache lines, for leaves that fit in HB_GATHER_MAX_BYTES (the
 * buffer's size, allocated only for full-precision row blocks built for
 * that many threads: 2 and 3 threads never gather). On the H200 host's 16
 * CPUs (Higgs shape, 2M rows) it cut the histograms of leaves of 1k-4k
 * rows by 18-40% at 4, 8 and 16 threads and of 4k-64k rows by 9-18% at
 * 16; on 10.5M rows those of 4k-64k rows by 29-41% at 16 threads and
 * 30-33% at 8 (inst/bench/results/gather-2026-12-02.md). */
#define HB_GATHER_MIN_TILES 4
#define HB_GATHER_MAX_BYTES ((size_t)32 << 20)

/* The threads hb_hist_build takes for a leaf of nrows rows of features
 * `active` (NULL: all) when given nthreads: one when the leaf's bin updates
 * plus two for each bin of its features (cleared and copied out, whatever
 * the rows) are fewer than 16384, else nthreads (at most the row block's
 * accumulator sets). The sums are the same whatever the count. */
int hb_hist_threads(const hb_dataset_t *d, const hb_rowblock_t *rb, int nrows, const uint8_t *active,
                    int nthreads);

/* Build the histogram of the rows rows[0..nrows) (increasing), row r
 * having gradient gh[2r] and hessian gh[2r+1] (interleaved, so one load
 * brings both), for every feature with active[f] != 0 (active == NULL: all).
 * rows == NULL means rows 0..nrows-1 (nrows must then be d->nrow). tot_g,
 * tot_h are the leaf's sums: a sparse feature's default bin is derived from
 * them. Features in the row block rb (may be NULL) are read row-wise, the
 * others from their column store. Every bin is summed in row order by one
 * thread, so the result does not depend on the thread count (and equals the
 * column-wise sums bit for bit, or for a leaf split in halves as above the
 * sum of the two halves' column-wise sums). */
void hb_hist_build(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                   const double *gh, double tot_g, double tot_h,
                   const uint8_t *active, hb_histbin_t *hist, int nthreads);

/* Work run by every thread of a parallel region's team of nth threads (its
 * loops are orphaned `HB_OMP(for ...)`s, shared out over that team). */
typedef void (*hb_team_fn)(void *arg, int nth);

/* hb_hist_build, and when it takes more than one thread, then(arg, nth)
 * run by every thread of the same parallel region once the histogram is
 * whole (one region a split instead of two: a region's start and end cost
 * about 5.6 us at 16 threads, a barrier 1.8; split-search-2026-12-02.md).
 * nth is the team size asked for: a sizing hint (chunks), not a bound to
 * index per-thread scratch by. Returns 1 when then ran, 0 when the
 * histogram took one thread (then did not run: the caller does its work in
 * its own way). */
int hb_hist_build_then(const hb_dataset_t *d, const hb_rowblock_t *rb, const int *rows, int nrows,
                       const double *gh, double tot_g, double tot_h, const uint8_t *active, hb_histbin_t *hist,
                       int nthreads, hb_team_fn then, void *arg);

#endif
