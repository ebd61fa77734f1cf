/* dataset.h: the binned dataset. Input columns (dense doubles, integers,
 * factor codes, or a compressed sparse column matrix) are binned once into
 * 8-bit bins per feature; a validation set is binned with the training set's
 * mappers. Immutable once built.
 *
 * Bin layout of one feature with num_bin bins:
 *   bins 0 .. num_bin-2  value bins (numeric: ordered by value; categorical:
 *                        one bin per kept level, most frequent first)
 *   bin  num_bin-1       the missing bin: NA/NaN, and for categoricals the
 *                        levels merged away (too rare, beyond max_bin) or
 *                        unseen in training.
 * So num_bin <= max_bin + 1 <= 256 and every bin fits in a uint8_t.
 *
 * Features and input columns: each input column is one feature, except a
 * factor with more levels than max_bin. Its levels, most frequent first,
 * are dealt out max_bin at a time to consecutive features of that column
 * (at most HB_MAX_COLUMN_FEATURES of them); in each, the levels of the
 * others share the missing bin with NA, which is also its default bin. A
 * categorical split on one of them is a split on a set of the column's
 * levels, so trees name columns (the model's features) and never see the
 * split. No level is merged away that a one-hot encoding would keep, up to
 * HB_MAX_COLUMN_FEATURES x max_bin levels. */
#ifndef HB_DATASET_H
#define HB_DATASET_H
#include <stdint.h>
#include <limits.h>

#define HB_NA_INT INT_MIN   /* R's NA_integer_ */
#define HB_MAX_BIN 255      /* value bins per feature at most */
#define HB_MAX_NUM_BIN 256  /* value bins + the missing bin */
#define HB_MAX_COLUMN_FEATURES 64  /* features one factor column may span */

/* Feature types. A bin mapper is NUMERIC or CATEGORICAL; a model's schema
 * may also say ORDINAL: a numeric feature whose values are the level codes
 * 1..nlevels of an ordered factor, the schema keeping the levels so new data
 * is coded the same way (its mapper and splits are numeric). */
enum {  /* codes.def, as the column types below and the input kinds */
#define HB_FEAT_TYPE(ID, name) HB_FEAT_##ID,
#include "codes.def"
  HB_FEAT_COUNT
};
enum {
#define HB_COL_TYPE(ID, name) HB_COL_##ID,
#include "codes.def"
  HB_COL_COUNT
};
enum {  /* the shape of an input (hb_r_input's spec$kind) */
#define HB_INPUT_KIND(ID, name) HB_INPUT_##ID,
#include "codes.def"
  HB_INPUT_COUNT
};

/* One dense input column, borrowed (never modified). */
typedef struct {
  int type;           /* HB_COL_DOUBLE, HB_COL_INT or HB_COL_FACTOR */
  const double *dbl;  /* HB_COL_DOUBLE: nrow values, NaN = missing, +-Inf allowed */
  const int *i32;     /* HB_COL_INT / HB_COL_FACTOR: nrow values, HB_NA_INT = missing;
                         factor codes are 1..nlevels, anything else is treated as missing */
  int nlevels;        /* HB_COL_FACTOR only */
} hb_column_t;

/* A sparse input matrix in compressed sparse column form, borrowed.
 * Implicit entries are 0.0 (not missing); an explicit NaN is missing. */
typedef struct {
  const int *p;       /* ncol + 1 column pointers */
  const int *i;       /* row indices, 0-based, increasing within a column */
  const double *x;    /* values */
} hb_csc_t;

/* What a dataset (or a prediction) is made from. Exactly one of cols / csc is set. */
typedef struct {
  int nrow, ncol;
  const hb_column_t *cols;  /* ncol columns, or NULL */
  const hb_csc_t *csc;      /* or NULL */
  const double *label;      /* nrow labels or NULL (classes as 0..K-1) */
  const double *weight;     /* nrow non-negative weights or NULL */
  const double *init_score; /* nrow x init_score_ncol finite starting raw scores (column k: class k), or NULL */
  int init_score_ncol;      /* 1, or the number of classes of a multiclass model */
} hb_input_t;

typedef struct {
  int max_bin;          /* value bins per feature, 2..255 (default 255) */
  const int *max_bin_by_col; /* NULL, or one per input column: that column's max_bin (2..255),
                                0 for max_bin's (LightGBM's max_bin_by_feature; default NULL) */
  int bin_sample_rows;  /* rows sampled to place boundaries (default 200000; <= 0: all) */
  int min_data_in_bin;  /* fewest sampled rows per numeric bin (default 3) */
  int min_data_per_level; /* categorical levels rarer than this go to the missing bin (default 1) */
  int lgb_bins;         /* 1: LightGBM's rules, as R's datasets are built: a factor's
                           levels kept by dataset.c's factor_levels_kept (rare ones share
                           the missing bin), a numeric feature's bounds by its lgb_bounds
                           (the signs apart, 0 alone, few values merged until a bin holds
                           min_data_in_bin sampled rows, a NaN bin within max_bin); 0: every
                           level, and at most max_bin values a bin each (default 0) */
  uint64_t seed;        /* for the row sample */
  int nthreads;
  int device;           /* 1: rows binned on the GPU (cuda.h's binner), boundaries and
                           levels still placed here from the sample: the same bins (default 0) */
  int device_min_rows;  /* with device: a feature of fewer values (a sparse column's entries)
                           is binned here, where a launch would cost more (default 8192) */
} hb_binparams_t;

void hb_binparams_default(hb_binparams_t *bp);

/* How values of one feature become bins. */
typedef struct {
  int type;           /* HB_FEAT_NUMERIC or HB_FEAT_CATEGORICAL */
  int num_bin;        /* value bins + 1; the missing bin is num_bin - 1 */
  int trivial;        /* 1 when no split is possible (one value bin and no missing seen) */
  int missing;        /* numeric: 1 when the binning sample had missing values (LightGBM's missing
                         type NaN: its split search also scans from the bottom, missing values
                         right; split.c), or the training rows had (a sample can miss them) */
  int count_right;    /* numeric: 1 when that scan counts the rows right of a threshold, missing
                         ones included, and takes the left as the rest (LightGBM's most frequent
                         bin is its first, dataset.c's lgb_first_bin_most); 0: counts the left */
  int na_alone_left;  /* numeric: 1 when LightGBM's first bin is its zero bin left empty here (every
                         sampled value above 0, some missing): its scan from the top then ends with
                         the missing values alone on the left (split.c) */
  int default_bin;    /* the bin of 0.0 (numeric), of the most frequent level (a column's first
                         categorical feature) or the missing bin (its further ones); sparse
                         storage omits it */
  double *upper;      /* numeric: num_bin-1 upper bounds, increasing; value v goes to the first
                         bin b with v <= upper[b]; upper[num_bin-2] = +Inf */
  int nlevels;        /* categorical: levels of the factor */
  uint8_t *level_bin; /* categorical: nlevels entries, level code c -> level_bin[c-1] */
  int *bin_level;     /* categorical: num_bin-1 entries, value bin -> level code */
} hb_binmapper_t;

/* The binned values of one feature. Dense: one byte per row. Sparse (chosen
 * when most rows sit in default_bin): the increasing rows whose bin differs
 * from default_bin, with their bins. */
typedef struct {
  int sparse;
  uint8_t *bins;      /* dense: nrow bins */
  int nnz;            /* sparse: entries */
  int *rows;          /* sparse: nnz increasing row indices */
  uint8_t *vals;      /* sparse: nnz bins */
} hb_featstore_t;

typedef struct hb_dataset {
  int nrow, nfeat;
  int ncol;                  /* input columns (the model's features) */
  int *col_first;            /* ncol + 1: column c's features are col_first[c] .. col_first[c+1]-1 */
  int *feat_col;             /* nfeat: the input column of feature f */
  hb_binmapper_t *mappers;   /* nfeat */
  hb_featstore_t *store;     /* nfeat */
  int *hist_offset;          /* nfeat + 1: first histogram slot of each feature */
  int total_bins;            /* hist_offset[nfeat] */
  double *label;             /* nrow or NULL */
  double *weight;            /* nrow or NULL */
  double *init_score;        /* nrow x init_score_ncol per-row starting scores (an offset), or NULL */
  int init_score_ncol;
  /* Data-parallel training (dist.h): this process's shard of the rows,
   * global rows row0 .. row0 + nrow - 1 of nrow_global; dist NULL (one
   * process, row0 0, nrow_global nrow) unless made by hb_dataset_create_dist. */
  const struct hb_dist *dist;
  int64_t row0, nrow_global;
} hb_dataset_t;

/* Bin `in` into a new dataset. With `reference` (a training set), reuse its
 * mappers (in->ncol must equal reference->ncol and column types must agree);
 * otherwise place boundaries from the data. Labels and weights are copied.
 * On failure returns a status, records a message and *out is NULL;
 * interrupts are checked between groups of columns (interrupt.h:
 * HB_ERR_INTERRUPT). */
int hb_dataset_create(const hb_input_t *in, const hb_binparams_t *bp,
                      const hb_dataset_t *reference, hb_dataset_t **out);
void hb_dataset_free(hb_dataset_t *d);

/* hb_dataset_create on one shard of the rows of a data-parallel training
 * (dist.h), called on every process at once with its rows. Without a
 * reference, every process places the same boundaries: numeric ones from
 * the rows the one-process sample takes (keyed by global row index,
 * gathered from every shard), a factor's levels from counts summed over the
 * shards, trivial features from bins used on any shard; so the mappers are
 * those hb_dataset_create gives the concatenated rows. With a reference
 * (a validation shard) the rows are binned with its mappers. Every process
 * returns the same status (a failure on one is reported on all). */
int hb_dataset_create_dist(const hb_input_t *in, const hb_binparams_t *bp, const hb_dataset_t *reference,
                           const struct hb_dist *dist, hb_dataset_t **out);

/* feature_pre_filter (LightGBM's BinMapper::NeedFilter): out[f] = 1 for a
 * feature on which no split can leave min_data rows on each side, counted
 * over every training row (every shard's; all processes call it): a numeric
 * one with no threshold in bin order (the missing bin last) that does, a
 * categorical one of one level (and missing values) where it or the
 * missing rows are too few (lightgbm 4.7.0, run beside it, did not filter
 * a factor of two levels, one of them in 12 of 500 rows, at
 * min_data_in_leaf 20). The split search's own row counts
 * (estimated from hessians, as LightGBM's) could otherwise pass such a
 * split. HB_OK, or an agreed error. */
int hb_dataset_prefilter(const hb_dataset_t *d, const struct hb_dist *dist, int min_data, int nthreads,
                         uint8_t *out);

/* Bins of feature f for rows row0 .. row0+n-1 into out[0..n), whatever the
 * storage (for uploads to the GPU and other bulk readers). */
void hb_dataset_feature_bins(const hb_dataset_t *d, int f, int row0, int n, uint8_t *out);

/* Rows row0 .. row0+n-1 packed four features to a 32-bit word (feature f in
 * byte f % 4 of word f / 4), `stride` >= (nfeat + 3) / 4 words per row, the
 * unused bytes zero: the layout the GPU learner uploads. HB_OK or
 * HB_ERR_NOMEM. */
int hb_dataset_pack_rows(const hb_dataset_t *d, int row0, int n, int stride, uint32_t *out, int nthreads);

/* Deep copy of a mapper (for references and models). */
int hb_binmapper_copy(const hb_binmapper_t *src, hb_binmapper_t *dst);
void hb_binmapper_clear(hb_binmapper_t *m);

#endif
