/* hist_walk.h: the parts of a leaf's histogram that the full-precision
 * kernels (hist.c, double sums) and the quantized ones (hist_quant.c,
 * integer sums) share, written once: which rows of a column store fall in
 * the leaf, the unrolled update of a tile's accumulators for one row, a
 * sparse feature's default bin from the leaf's totals, a tile's columns. Each is a macro whose
 * argument ADD (or the pair's type) is where the two differ: a double pair
 * added in row order, or a packed integer added into 16-bit halves and
 * flushed every rows16 rows. Expanded in place, so each kernel's loop is
 * what it was when written out by hand (same code, same speed). Internal to
 * the CPU kernels: nothing in src/cuda includes it. */
#ifndef HB_HIST_WALK_H
#define HB_HIST_WALK_H
#include "dataset.h"
#include "hist.h"

/* First k >= lo with a[k] >= key in the increasing array a[0..n). */
static inline int hb_lower_bound(const int *a, int lo, int n, int key) {
  int hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] < key) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* The row block's columns whose features are active (active NULL: all)
 * with active rank in [lo, hi): the columns col[], their features' bin
 * counts nb[] and histogram offsets off[]; returns how many (a tile's
 * columns in both kernels). */
static inline int hb_tile_columns(const hb_dataset_t *d, const hb_rowblock_t *rb, const uint8_t *active, int lo,
                                  int hi, int *col, int *nb, int *off) {
  int nc = 0;
  for (int c = 0, rank = 0; c < rb->ncol && rank < hi; c++) {
    const int f = rb->feat[c];
    if (active && !active[f]) continue;
    if (rank >= lo) {
      col[nc] = c;
      nb[nc] = d->mappers[f].num_bin;
      off[nc] = d->hist_offset[f];
      nc++;
    }
    rank++;
  }
  return nc;
}

/* ADD(bin, r) for each row r of rows[0..nrows) (increasing; NULL: rows
 * 0..nrows-1) in the dense column `bins`, in row order. */
#define HB_DENSE_WALK(bins, rows, nrows, ADD)                               \
  do {                                                                      \
    if (rows) {                                                             \
      for (int i_ = 0; i_ < (nrows); i_++) {                                \
        const size_t r_ = (size_t)(rows)[i_];                               \
        ADD((bins)[r_], r_);                                                \
      }                                                                     \
    } else {                                                                \
      for (int i_ = 0; i_ < (nrows); i_++) ADD((bins)[i_], (size_t)i_);     \
    }                                                                       \
  } while (0)

/* ADD(bin, r) for each row r stored in the sparse column s (hb_featstore_t:
 * rows off the default bin) that is among rows[0..nrows) (increasing; NULL:
 * every row), in row order. Rows of the leaf and of the column are both
 * increasing, so a merge finds the common ones; a galloping search instead
 * when one side is much shorter than the other (a small leaf of a long
 * column, or a column storing few of a large leaf's rows). */
#define HB_SPARSE_WALK(s, rows, nrows, ADD)                                                         \
  do {                                                                                              \
    const int nnz_ = (s)->nnz, nr_ = (nrows);                                                       \
    const int *srow_ = (s)->rows, *rw_ = (rows);                                                    \
    if (!rw_) {                                                                                     \
      for (int k_ = 0; k_ < nnz_; k_++) ADD((s)->vals[k_], (size_t)srow_[k_]);                      \
    } else if ((long long)nr_ * 16 < (long long)nnz_) {                                             \
      int k_ = 0;                                                                                   \
      for (int i_ = 0; i_ < nr_ && k_ < nnz_; i_++) {                                               \
        k_ = hb_lower_bound(srow_, k_, nnz_, rw_[i_]);                                              \
        if (k_ < nnz_ && srow_[k_] == rw_[i_]) ADD((s)->vals[k_], (size_t)rw_[i_]);                 \
      }                                                                                             \
    } else if ((long long)nnz_ * 16 < (long long)nr_) {                                             \
      /* each stored row looked up among the leaf's, galloping from the last one found */          \
      int i_ = 0, k_ = hb_lower_bound(srow_, 0, nnz_, rw_[0]);                                      \
      for (; k_ < nnz_ && i_ < nr_; k_++) {                                                         \
        const int c_ = srow_[k_];                                                                   \
        if (rw_[i_] < c_) {                                                                         \
          int step_ = 1;                                                                            \
          while (i_ + step_ < nr_ && rw_[i_ + step_] < c_) { i_ += step_; step_ *= 2; }             \
          i_ = hb_lower_bound(rw_, i_ + 1, i_ + step_ + 1 < nr_ ? i_ + step_ + 1 : nr_, c_);        \
          if (i_ >= nr_) break;                                                                     \
        }                                                                                           \
        if (rw_[i_] == c_) ADD((s)->vals[k_], (size_t)c_);                                          \
      }                                                                                             \
    } else {                                                                                        \
      int i_ = 0, k_ = 0;                                                                           \
      while (i_ < nr_ && k_ < nnz_) {                                                               \
        const int r_ = rw_[i_], c_ = srow_[k_];                                                     \
        if (r_ < c_) i_++;                                                                          \
        else if (c_ < r_) k_++;                                                                     \
        else {                                                                                      \
          ADD((s)->vals[k_], (size_t)r_);                                                           \
          i_++; k_++;                                                                               \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  } while (0)

/* A sparse feature's default bin of the histogram h (nb bins): the leaf's
 * totals (tot_g, tot_h, of type SUM_T: double or int64_t) less its other
 * bins, in bin order. */
#define HB_SPARSE_DEFAULT(SUM_T, h, default_bin, nb, tot_g, tot_h) \
  do {                                                            \
    SUM_T g_ = (tot_g), h_ = (tot_h);                             \
    for (int b_ = 0; b_ < (nb); b_++) {                           \
      if (b_ == (default_bin)) continue;                          \
      g_ -= (h)[b_].g;                                            \
      h_ -= (h)[b_].h;                                            \
    }                                                             \
    (h)[default_bin].g = g_;                                      \
    (h)[default_bin].h = h_;                                      \
  } while (0)

/* One row's update of a tile's nc accumulator columns (column k's at
 * acc + k * STRIDE, advanced as the columns go), its bins p[0..nc): ADD(j)
 * updates column k + j (k and acc in scope), eight columns at a time, then
 * four, then one. */
#define HB_TILE_ROW(acc, nc, STRIDE, ADD)                                                              \
  do {                                                                                                \
    int k = 0;                                                                                        \
    for (; k + 8 <= (nc); k += 8, acc += 8 * (STRIDE)) {                                               \
      ADD(0) ADD(1) ADD(2) ADD(3) ADD(4) ADD(5) ADD(6) ADD(7)                                         \
    }                                                                                                 \
    for (; k + 4 <= (nc); k += 4, acc += 4 * (STRIDE)) { ADD(0) ADD(1) ADD(2) ADD(3) }                \
    for (; k < (nc); k++, acc += (STRIDE)) ADD(0)                                                     \
  } while (0)

#endif
