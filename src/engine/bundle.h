/* bundle.h: Exclusive Feature Bundling (Ke et al. 2017, LightGBM's EFB) for
 * the CPU learner. Sparse features that are rarely off their default bin in
 * the same row are merged into bundles; a bundle's bin for a row is the
 * slot of the one member off its default bin there (its "offset" plus the
 * rank of its bin among the member's used non-default bins), or 0 when
 * every member is at its default. A leaf's histogram is then summed per
 * bundle (one byte a row for a whole bundle, instead of an entry per sparse
 * feature), and each member's histogram recovered from its slots, its
 * default bin from the leaf's totals as before.
 *
 * Bundles are a training detail of the CPU learner: the dataset, the model,
 * split search and prediction all stay on the original features. With
 * max_conflict_rate 0 (the default) no row has two members off their
 * default bins, so the recovered histograms equal the unbundled ones and
 * models are identical; with a positive rate, a row where several members
 * are off default keeps the first member's bin (increasing feature order)
 * and the others see it in their default bin. */
#ifndef HB_BUNDLE_H
#define HB_BUNDLE_H
#include <stdint.h>
#include "dataset.h"

/* Most bins of a bundle: bin 0 (every member at its default) and 255 slots. */
#define HB_BUNDLE_MAX_BIN 256
/* Bundles the greedy search tries for each feature (LightGBM's
 * max_search_group), and most bundles open at once (each keeps a bitmap of
 * its rows while bundling). */
#define HB_BUNDLE_SEARCH 128
#define HB_BUNDLE_MAX_OPEN 512

typedef struct {
  int nrow, nfeat;
  int nbundle;          /* bundles, each of at least two features */
  int *first;           /* nbundle + 1: bundle j's members are feat[first[j] .. first[j+1]) */
  int *feat;            /* the members, increasing within a bundle */
  int *num_bin;         /* nbundle: bins of bundle j (bin 0 and its slots), <= HB_BUNDLE_MAX_BIN */
  int *slot_off;        /* nbundle + 1: bundle j's bin k is slot slot_off[j] + k of all bundles' bins */
  int *slot_feat;       /* slot_off[nbundle]: the member feature of a slot (-1 for bin 0) */
  uint8_t *slot_bin;    /* slot_off[nbundle]: that feature's bin */
  int *bundle_of;       /* nfeat: the bundle holding feature f, or -1 */
  int64_t *conflicts;   /* nbundle: rows with two or more members off their default bins */
  uint8_t *col;         /* nbundle columns of nrow bundle bins (bundle j's at col + j * nrow) */
} hb_bundles_t;

/* Bundle the features f with use[f] != 0 (NULL: all) that are stored
 * sparse and are their column's only feature (wide factors' parts have row
 * codes of their own, hist.h), greedily: by decreasing stored entries, each
 * into the first of at most HB_BUNDLE_SEARCH open bundles whose bins it
 * fits and whose rows it never meets, else the first whose rows it meets in
 * at most max_conflict_rate * nrow rows (counted over the bundle's members
 * together), else into a new one. Bundles
 * left with one feature are dissolved. *out is NULL (HB_OK) when no bundle
 * of two features forms. On failure returns a status with a message set and
 * *out is NULL. */
int hb_bundle_create(const hb_dataset_t *d, const uint8_t *use, double max_conflict_rate, int nthreads,
                     hb_bundles_t **out);
void hb_bundle_free(hb_bundles_t *b);

/* goleft[0..num_bin) of bundle j for a split of member f whose side per
 * bin of f is fgoleft[0..f's num_bin): the other members' slots and bin 0
 * hold f at its default bin. */
void hb_bundle_side_table(const hb_bundles_t *b, const hb_dataset_t *d, int j, int f, const uint8_t *fgoleft,
                          uint8_t *goleft);

/* Bundle j's active members' histograms from its slots, the one loop of
 * the double and the integer histograms (hist.c, hist_quant.c): every bin
 * of a member written once, slot k's value SLOT(k) (a BIN_T) where the
 * member has one, zero elsewhere, and its default bin the totals (ACC_T)
 * less its other bins in bin order, as a sparse feature's default bin is
 * derived without bundles. A member's slots are consecutive, in bin order. */
#define HB_BUNDLE_RECOVER(BIN_T, ACC_T, b, d, j, active, hist, SLOT, tot_g, tot_h)     \
  do {                                                                                \
    const int s0_ = (b)->slot_off[j], nb_ = (b)->num_bin[j];                         \
    int k_ = 1;                                                                       \
    for (int m_ = (b)->first[j]; m_ < (b)->first[(j) + 1]; m_++) {                   \
      const int f_ = (b)->feat[m_];                                                   \
      int end_ = k_;                                                                  \
      while (end_ < nb_ && (b)->slot_feat[s0_ + end_] == f_) end_++;                  \
      if ((active) && !(active)[f_]) {                                                \
        k_ = end_;                                                                    \
        continue;                                                                     \
      }                                                                               \
      BIN_T *h_ = (hist) + (d)->hist_offset[f_];                                      \
      const int nbf_ = (d)->mappers[f_].num_bin, db_ = (d)->mappers[f_].default_bin; \
      ACC_T g_ = (tot_g), hh_ = (tot_h);                                              \
      for (int bin_ = 0; bin_ < nbf_; bin_++) {                                       \
        if (bin_ == db_) continue;                                                    \
        BIN_T v_ = {0, 0};                                                            \
        if (k_ < end_ && (b)->slot_bin[s0_ + k_] == bin_) v_ = SLOT(k_++);            \
        h_[bin_] = v_;                                                                \
        g_ -= v_.g;                                                                   \
        hh_ -= v_.h;                                                                  \
      }                                                                               \
      h_[db_].g = g_;                                                                 \
      h_[db_].h = hh_;                                                                \
      k_ = end_;                                                                      \
    }                                                                                 \
  } while (0)

#endif
