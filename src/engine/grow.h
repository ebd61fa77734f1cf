/* grow.h: leaf-wise (best-first) growth of one tree on the CPU: the
 * histogram pool, the row partition and the growth order. The rules are in
 * /split.c (gain) and here (order, depth, subtraction). */
#ifndef HB_GROW_H
#define HB_GROW_H
#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "dataset.h"
#include "tree.h"
#include "quantize.h"

typedef struct hb_grow_ws hb_grow_ws_t;

/* Workspace for trees of up to cfg->num_leaves leaves on dataset d (buffers
 * reused from tree to tree). NULL on failure (message recorded). */
hb_grow_ws_t *hb_grow_ws_create(const hb_config_t *cfg, const hb_dataset_t *d);
/* A workspace like hb_grow_ws_create's for trees grown at the same time as
 * first's (learner_cpu.c's class workers; cfg may differ from first's in
 * nthreads alone): where first's row block holds nothing of a tree's
 * gradients (hist.h: hb_rowblock_shareable), it reads first's rows through
 * a twin instead of a copy of its own (first must then outlive it). */
hb_grow_ws_t *hb_grow_ws_create_beside(const hb_config_t *cfg, const hb_dataset_t *d, const hb_grow_ws_t *first);
void hb_grow_ws_free(hb_grow_ws_t *ws);
/* About the bytes ws holds once its histogram pool is full (every leaf a
 * slot): its row buffers, the pool and its row block. */
size_t hb_grow_ws_bytes(const hb_grow_ws_t *ws);

/* Monotone constraints for the trees ws grows on d: col_mono[c] (-1, 0, 1)
 * for each input column of d (numeric columns only), or NULL or all zero
 * for none. HB_OK, or HB_ERR_INPUT / HB_ERR_NOMEM with a message (ws then
 * has none). */
int hb_grow_ws_set_monotone(hb_grow_ws_t *ws, const hb_dataset_t *d, const int *col_mono);

/* The id of the next tree grown (seeds extra_trees' and
 * feature_fraction_bynode's per-node draws with cfg->seed). */
void hb_grow_ws_set_tree(hb_grow_ws_t *ws, uint64_t tree_id);

/* Interaction constraints: ngroups groups of input columns of d, group g
 * being cols[begin[g] .. begin[g + 1]); a branch may only split on columns of
 * a group that holds every column used above it (LightGBM's rule; columns
 * in no group are never split on). ngroups 0: none. HB_OK, HB_ERR_INPUT
 * (a column out of range) or HB_ERR_NOMEM; ws then has none. */
int hb_grow_ws_set_interactions(hb_grow_ws_t *ws, const hb_dataset_t *d, int ngroups, const int *begin,
                                const int *cols);

/* Interaction constraints' tables for d (groups as above): grp_feat,
 * ngroups x nfeat, and grp_col, ngroups x ncol, 1 where group g holds the
 * feature or column (both allocated; the caller frees them). HB_OK,
 * HB_ERR_INPUT (a column out of range) or HB_ERR_NOMEM, both then NULL.
 * The CPU learner's and the GPU learner's. */
int hb_interaction_tables(const hb_dataset_t *d, int ngroups, const int *begin, const int *cols, uint8_t **grp_feat,
                          uint8_t **grp_col);

/* The constraint of each internal feature of d (nfeat values, *out
 * allocated) from col_mono as above, checked; *out NULL when no column is
 * constrained. The CPU learner's and the GPU learner's. */
int hb_monotone_features(const hb_dataset_t *d, const int *col_mono, int8_t **out);

/* Grow one tree from row-indexed (gradient, hessian) pairs gh (row r's at
 * gh[2r], gh[2r+1]; 2 d->nrow values) over the rows
 * bag[0..bag_n) (increasing), or all rows when bag is NULL, using only the
 * features with active[f] != 0. `tree` must have room for cfg->num_leaves
 * leaves; it is overwritten. Leaf values include the learning rate.
 * With qt (quantized training) the tree grows from qt's integer values as
 * the GPU grows it (split_quant.h), and its leaf values are refit from gh
 * (or taken from the quantized sums) in 64-bit fixed point as on the GPU. */
/* Interrupts are checked between splits (interrupt.h): HB_ERR_INTERRUPT
 * leaves `tree` half grown, for the caller to throw away. */
int hb_grow_tree(hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_dataset_t *d,
                 const double *gh, const hb_qtree_t *qt, const int *bag, int bag_n,
                 const uint8_t *active, hb_tree_t *tree);

/* Phase timers (learner_cpu.c's profile, boost.h): on, every tree grown
 * adds its wall-clock seconds in partitions, histograms (the root's and each
 * smaller child's), split search (the root's scan, each pair's subtraction
 * and scan) and in the whole of hb_grow_tree, and its splits, to the sums
 * hb_grow_ws_get_profile reads: out[0..5) = partition, histogram, split
 * search, tree seconds and splits; then the histograms' seconds by the
 * leaf's rows (this process's), in HB_PROF_ROW_CLASSES classes of a factor
 * of 4 each (under 1024 rows, under 4096, ..., 1048576 or more), and their
 * counts in the same classes. Switching it on zeroes the sums. */
#define HB_PROF_ROW_CLASSES 7
#define HB_GROW_PROFILE_N (5 + 2 * HB_PROF_ROW_CLASSES)
void hb_grow_ws_profile(hb_grow_ws_t *ws, int on);
void hb_grow_ws_get_profile(const hb_grow_ws_t *ws, double out[HB_GROW_PROFILE_N]);

/* Rows that ended in leaf `leaf` of the last grown tree (increasing). */
const int *hb_grow_leaf_rows(const hb_grow_ws_t *ws, int leaf, int *count);

/* Each row's leaf in the last grown tree (of L leaves) for rows r0 .. r1 - 1,
 * into leaf_of[r0 .. r1) (-1 for a row in no leaf: out of the bag). Each
 * leaf's rows are entered at r0 by a binary search, so threads that fill
 * ranges of their own write only there (scattered by leaf, every thread
 * would write into every cache line), and a range small enough to stay in
 * cache is then read in row order. */
void hb_grow_row_leaves(const hb_grow_ws_t *ws, int L, int r0, int r1, int *leaf_of);
/* Rows a range of it for a thread at a time, for a tree of L leaves:
 * 65,536 (the range's leaf numbers, 256 KB, and its rows' scores, 512 KB,
 * stay in cache), or 64 a leaf for trees of more than 1024 leaves, so that
 * the binary searches (L a range) stay a small part of the work. */
#define HB_ROW_LEAF_BLOCK 65536
static inline int hb_row_leaf_block(int L) { return L > HB_ROW_LEAF_BLOCK / 64 ? 64 * L : HB_ROW_LEAF_BLOCK; }

/* nrow ints that the workspace uses only while it grows a tree: the
 * caller's between trees (hb_grow_row_leaves' output). */
int *hb_grow_ws_scratch(hb_grow_ws_t *ws);

#endif
