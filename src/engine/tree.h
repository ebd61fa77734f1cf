/* tree.h: one regression tree as plain arrays. The same arrays serve
 * training-time score updates (on bins), prediction (on raw values), the
 * model text, the R tree table and, later, the GPU.
 *
 * A tree with L leaves has L-1 internal nodes 0..L-2 (node 0 is the root
 * when L > 1). A child index c >= 0 is an internal node; c < 0 is the leaf
 * ~c. A tree with one leaf has no internal nodes and predicts leaf_value[0]. */
#ifndef HB_TREE_H
#define HB_TREE_H
#include <stdint.h>
#include "dataset.h"
#include "tree_rules.h"  /* HB_DECISION_* and the split rule the GPU shares */

typedef struct {
  int num_leaves;       /* leaves in use */
  int max_leaves;       /* capacity of the arrays */
  /* internal nodes, max_leaves - 1 each */
  int *split_feature;   /* feature index in the model's schema */
  int *threshold_bin;   /* numeric: rows with bin <= threshold_bin go left */
  double *threshold;    /* numeric: rows with value <= threshold go left (= upper bound of threshold_bin) */
  uint8_t *decision;    /* HB_DECISION_* bits */
  int *cat_begin;       /* categorical: first word of this node's level bitset in cat_bits */
  int *cat_nwords;      /* categorical: words in the bitset (covers level codes 0..32*nwords-1) */
  int *left, *right;    /* children */
  double *split_gain;
  double *internal_value;  /* the node's output had it been a leaf (shrunk) */
  double *internal_hess;
  int *internal_count;
  /* leaves, max_leaves each */
  double *leaf_value;   /* shrunk output */
  double *leaf_hess;
  int *leaf_count;
  int *leaf_parent;     /* internal node above the leaf, -1 for a lone root leaf */
  int *leaf_depth;
  /* level bitsets of categorical splits: bit c set = level code c goes left.
   * Levels merged into the missing bin in training follow the default
   * direction, and their bits are set accordingly. */
  uint32_t *cat_bits;
  int cat_nbits_words;  /* words used */
  int cat_cap_words;    /* words allocated */
} hb_tree_t;

/* A tree with room for max_leaves leaves and one leaf of value 0. NULL on failure. */
hb_tree_t *hb_tree_create(int max_leaves);
void hb_tree_free(hb_tree_t *t);

/* Append a categorical bitset of nwords words; returns its first word or -1 (no memory). */
int hb_tree_add_cat_bits(hb_tree_t *t, const uint32_t *bits, int nwords);

/* Which way a raw value goes at internal node `node`: 1 left, 0 right.
 * Categorical values are level codes as doubles; NaN is missing. */
static inline int hb_tree_goes_left(const hb_tree_t *t, int node, double v) {
  return hb_rule_goes_left(t->decision[node], t->threshold[node], t->cat_bits, t->cat_begin[node],
                           t->cat_nwords[node], v);
}

/* A split of one leaf, in bin space, with what the two children hold. */
typedef struct {
  int feature;                /* the input column (the model's feature) */
  int is_cat;
  int threshold_bin;          /* numeric: value bins <= threshold_bin go left */
  int default_left;           /* missing values (the missing bin) go left */
  const uint32_t *left_bins;  /* categorical: bitset over the feature's bins going left */
  double gain;
  double value[2];            /* outputs of the left and right child, shrunk */
  double hess[2];
  int count[2];
} hb_tree_split_t;

/* Split leaf `leaf`: it stays the left child, the right child becomes leaf
 * t->num_leaves and the split internal node t->num_leaves - 1 (so leaves and
 * nodes are numbered in the order they were made, as in LightGBM). A
 * categorical split's bin set becomes a level bitset through mapper m.
 * Returns HB_OK, HB_ERR_NOMEM or HB_ERR_INPUT (no room for another leaf). */
int hb_tree_split_leaf(hb_tree_t *t, int leaf, const hb_binmapper_t *m, const hb_tree_split_t *s);

/* Which way a binned value goes (training, validation scores). */
int hb_tree_bin_goes_left(const hb_tree_t *t, int node, const hb_binmapper_t *m, int bin);

/* Leaf index for row `row` of a binned dataset. A split names an input
 * column; a factor spread over several features (dataset.h) is routed by
 * the level of whichever of them holds the row's level. */
int hb_tree_leaf_binned(const hb_tree_t *t, const hb_dataset_t *d, int row);

/* A tree's splits over one binned dataset, for walking many of its rows
 * (the rows out of a bag, validation rows): a node on a feature stored
 * densely reads the row's byte and looks its direction up in a 256-bit mask
 * made from hb_tree_bin_goes_left; others route as hb_tree_leaf_binned.
 * The same leaves as hb_tree_leaf_binned, without its calls per node. */
typedef struct {
  const uint8_t *bins;  /* the feature's bins, or NULL: route the general way */
  uint64_t left[4];     /* bit b: bin b goes left */
  int child[2];         /* right, left */
} hb_binnode_t;

/* n nodes (num_leaves - 1 of them, at least one) for t over d; NULL when memory runs out. */
hb_binnode_t *hb_tree_binnodes(const hb_tree_t *t, const hb_dataset_t *d);
int hb_tree_leaf_binnodes(const hb_tree_t *t, const hb_binnode_t *nodes, const hb_dataset_t *d, int row);
/* The same for rows[0..m), their leaves into leaf[]: four rows walked side
 * by side, so that their loads wait together rather than one after another. */
void hb_tree_leaves_binnodes(const hb_tree_t *t, const hb_binnode_t *nodes, const hb_dataset_t *d, const int *rows,
                             int m, int *leaf);

#endif
