/* shap.h: per-feature contributions to a prediction (SHAP values): for a
 * row x, phi[f] for every feature and a bias, the model's expected raw score,
 * such that bias + sum(phi) is the raw prediction. Computed exactly in
 * polynomial time by Lundberg, Erion and Lee's TreeSHAP ("Consistent
 * individualized feature attribution for tree ensembles", 2018, Algorithm
 * 2): the Shapley values of the game v(S) = E[f(x) | x_S], the expectation
 * taken over the training rows through each node's row count (its cover),
 * where a node splitting on a feature outside S averages its children by
 * their covers. */
#ifndef HB_SHAP_H
#define HB_SHAP_H
#include <stddef.h>
#include <stdint.h>
#include "tree.h"
#include "shap_rules.h"  /* the walk itself, shared with the GPU; hb_shap_step_t */

/* What the contributions of trees [t0, t1) share: each internal node's
 * cover (the sum of its leaves' row counts, so that a node's children
 * always divide it whole), each tree's expected value, the deepest leaf, and
 * every leaf's path (shap_rules.h's hb_shap_paths_t: its distinct features'
 * slots and zero fractions, and the splits that decide its one fractions).
 * A tree's slots are its distinct split features in the order of its
 * internal nodes. */
typedef struct {
  double *cover;     /* internal nodes of every tree, tree after tree */
  size_t *first;     /* per tree: where its nodes start in cover */
  double *expected;  /* per tree: sum of leaf value x count over the sum of counts */
  double *inv;       /* 1 / k for k = 1 .. max_depth + 1 (inv[0] unused) */
  int max_depth;
  /* leaf paths: every tree's leaves (a lone leaf counts one, with an empty
   * path), tree after tree, each tree's in depth-first order */
  int64_t *leaf_first;  /* per tree + 1: its first leaf in path_first */
  int64_t *path_first;  /* per path + 1: its first element (a tree's paths in depth-first order) */
  int *path_leaf;       /* per path: its leaf in the tree */
  int *path_share;      /* per path: its leading elements the tree's previous path has too */
  int *elem_slot;       /* per element */
  double *elem_zero;
  int64_t *cond_first;  /* per element + 1: its first split in cond */
  int *cond;            /* (node << 1) | goes left */
  int *slot_first;      /* per tree + 1: its first slot in slot_feat */
  int *slot_feat;       /* per slot: the feature */
  int64_t nleaves, nelems, nconds;
  int nslots;
  int max_path;   /* most elements of one path */
  int max_nodes;  /* most internal nodes of one tree */
  int max_slots;  /* most slots of one tree */
} hb_shap_t;

/* Covers, expected values and depth for trees [t0, t1), and with paths
 * their leaf paths (contributions; interaction values walk the trees and do
 * without). HB_ERR_INPUT when a
 * tree with splits has no rows counted in its leaves (a model text without
 * counts), HB_ERR_NOMEM when memory runs out; on failure nothing is held. */
int hb_shap_prepare(hb_tree_t *const *trees, int t0, int t1, int paths, hb_shap_t *s);
void hb_shap_free(hb_shap_t *s);

/* Tree t's view for shap_rules.h's walk and for its leaf paths (its own
 * arrays, the covers and paths of s); t in [t0, t1) of the trees s was
 * prepared for, with splits. */
hb_shap_tree_t hb_shap_tree_view(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t);
hb_shap_paths_t hb_shap_paths_view(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t);

/* Steps of path buffer (interaction values' walk), and bytes of work space
 * (aligned for doubles) that one row's contributions or interactions need
 * (per thread). */
size_t hb_shap_path_steps(const hb_shap_t *s);
size_t hb_shap_work_bytes(const hb_shap_t *s);

/* Add the contributions of trees [t0, t1) for nr rows of raw values (row r
 * at x + r xs: nfeat values, hb_tree_goes_left's encoding) to their phi
 * (row r's at phi + r phs): tree t's to class t % K, a row's phi holding K
 * blocks of nfeat + 1 values (the last of each block the bias, which gets
 * the trees' expected values). Each tree's contributions to a row are
 * summed from zero over its leaf paths (hb_shap_paths_tree), then added to
 * the row's phi tree after tree: the GPU sums them in the same order, and
 * the rows of a block do not change each other's values. work:
 * hb_shap_work_bytes(s) bytes. */
void hb_shap_rows(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t1, int K, int nfeat, int nr,
                  const double *x, size_t xs, double *phi, size_t phs, double *work);

/* SHAP interaction values (Lundberg et al. 2018, as xgboost computes them):
 * for the row x, add the interactions of trees [t0, t1) to inter: K blocks
 * (tree t's to class t % K) of (nfeat + 1)^2 values, entry (i, j) of a
 * block at j (nfeat + 1) + i. Off the diagonal, half the Shapley interaction
 * index of features i and j (from TreeSHAP with i held known and unknown);
 * on it, i's contribution less its interactions, so that entry row i sums
 * to i's contribution; the bias (index nfeat) gets the trees' expected values
 * at (nfeat, nfeat) and nothing else. path: hb_shap_path_steps(s) steps, work: hb_shap_work_bytes(s) bytes;
 * scratch: hb_shap_interaction_doubles(nfeat) doubles and iscratch:
 * hb_shap_interaction_ints(nfeat) ints, all zero, left zero. */
size_t hb_shap_interaction_doubles(int nfeat);
size_t hb_shap_interaction_ints(int nfeat);
void hb_shap_interaction_row(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t1, int K, int nfeat,
                             const double *x, double *inter, hb_shap_step_t *path, double *work, double *scratch,
                             int *iscratch);

#endif
