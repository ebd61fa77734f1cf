/* tree.c: the tree arrays: creation, categorical bitsets, and routing binned
 * rows (training and validation score updates). Raw-value routing is the
 * inline hb_tree_goes_left in tree.h. */
#include <string.h>
#include "tree.h"
#include "error.h"

/* A tree with room for max_leaves leaves, one leaf of value 0, all arrays zeroed. NULL on failure. */
hb_tree_t *hb_tree_create(int max_leaves) {
  if (max_leaves < 1) {
    hb_error_set(HB_ERR_INPUT, "a tree needs room for at least one leaf (got %d)", max_leaves);
    return NULL;
  }
  hb_tree_t *t = hb_calloc(1, sizeof *t);
  if (!t) return NULL;
  size_t ni = (size_t)max_leaves - 1, nl = (size_t)max_leaves;
  t->max_leaves = max_leaves;
  t->num_leaves = 1;
  t->split_feature = hb_calloc(ni, sizeof(int));
  t->threshold_bin = hb_calloc(ni, sizeof(int));
  t->threshold = hb_calloc(ni, sizeof(double));
  t->decision = hb_calloc(ni, sizeof(uint8_t));
  t->cat_begin = hb_calloc(ni, sizeof(int));
  t->cat_nwords = hb_calloc(ni, sizeof(int));
  t->left = hb_calloc(ni, sizeof(int));
  t->right = hb_calloc(ni, sizeof(int));
  t->split_gain = hb_calloc(ni, sizeof(double));
  t->internal_value = hb_calloc(ni, sizeof(double));
  t->internal_hess = hb_calloc(ni, sizeof(double));
  t->internal_count = hb_calloc(ni, sizeof(int));
  t->leaf_value = hb_calloc(nl, sizeof(double));
  t->leaf_hess = hb_calloc(nl, sizeof(double));
  t->leaf_count = hb_calloc(nl, sizeof(int));
  t->leaf_parent = hb_calloc(nl, sizeof(int));
  t->leaf_depth = hb_calloc(nl, sizeof(int));
  if (!t->split_feature || !t->threshold_bin || !t->threshold || !t->decision || !t->cat_begin ||
      !t->cat_nwords || !t->left || !t->right || !t->split_gain || !t->internal_value ||
      !t->internal_hess || !t->internal_count || !t->leaf_value || !t->leaf_hess ||
      !t->leaf_count || !t->leaf_parent || !t->leaf_depth) {
    hb_tree_free(t);
    hb_error_set(HB_ERR_NOMEM, "out of memory creating a tree of %d leaves", max_leaves);
    return NULL;
  }
  t->leaf_parent[0] = -1;
  return t;
}

/* Free t and its arrays (NULL-safe). */
void hb_tree_free(hb_tree_t *t) {
  if (!t) return;
  hb_free(t->split_feature);
  hb_free(t->threshold_bin);
  hb_free(t->threshold);
  hb_free(t->decision);
  hb_free(t->cat_begin);
  hb_free(t->cat_nwords);
  hb_free(t->left);
  hb_free(t->right);
  hb_free(t->split_gain);
  hb_free(t->internal_value);
  hb_free(t->internal_hess);
  hb_free(t->internal_count);
  hb_free(t->leaf_value);
  hb_free(t->leaf_hess);
  hb_free(t->leaf_count);
  hb_free(t->leaf_parent);
  hb_free(t->leaf_depth);
  hb_free(t->cat_bits);
  hb_free(t);
}

/* Append nwords (>= 1) words to cat_bits, growing it geometrically; the first word's index or -1. */
int hb_tree_add_cat_bits(hb_tree_t *t, const uint32_t *bits, int nwords) {
  if (!t || !bits || nwords < 1) {
    hb_error_set(HB_ERR_INPUT, "a categorical bitset needs at least one word");
    return -1;
  }
  if (nwords > (1 << 28) - t->cat_nbits_words) {
    hb_error_set(HB_ERR_NOMEM, "categorical bitsets too large");
    return -1;
  }
  int need = t->cat_nbits_words + nwords;
  if (need > t->cat_cap_words) {
    int cap = t->cat_cap_words ? t->cat_cap_words : 8;
    while (cap < need) cap *= 2;
    uint32_t *p = hb_realloc(t->cat_bits, (size_t)cap * sizeof(uint32_t));
    if (!p) return -1;
    t->cat_bits = p;
    t->cat_cap_words = cap;
  }
  int begin = t->cat_nbits_words;
  memcpy(t->cat_bits + begin, bits, (size_t)nwords * sizeof(uint32_t));
  t->cat_nbits_words = need;
  return begin;
}

int hb_tree_split_leaf(hb_tree_t *t, int leaf, const hb_binmapper_t *m, const hb_tree_split_t *s) {
  if (t->num_leaves >= t->max_leaves || leaf < 0 || leaf >= t->num_leaves)
    return hb_error_set(HB_ERR_INPUT, "tree: cannot split leaf %d of a tree with %d of %d leaves", leaf,
                        t->num_leaves, t->max_leaves);
  int node = t->num_leaves - 1, r = t->num_leaves;
  t->split_feature[node] = s->feature;
  t->split_gain[node] = s->gain;
  t->decision[node] = (uint8_t)((s->default_left ? HB_DECISION_DEFAULT_LEFT : 0u) |
                                (s->is_cat ? HB_DECISION_CATEGORICAL : 0u));
  t->cat_begin[node] = -1;
  t->cat_nwords[node] = 0;
  if (s->is_cat) {
    /* Level codes 1..nlevels; a level merged into the missing bin follows it. */
    int nwords = (m->nlevels + 1 + 31) / 32;
    uint32_t stackbits[64];
    uint32_t *bits = nwords <= 64 ? stackbits : hb_calloc((size_t)nwords, sizeof(uint32_t));
    if (!bits) return HB_ERR_NOMEM;
    if (bits == stackbits) memset(bits, 0, sizeof(uint32_t) * (size_t)nwords);
    for (int c = 1; c <= m->nlevels; c++) {
      int b = m->level_bin[c - 1];
      if ((s->left_bins[b >> 5] >> (b & 31)) & 1u) bits[c >> 5] |= 1u << (c & 31);
    }
    int at = hb_tree_add_cat_bits(t, bits, nwords);
    if (bits != stackbits) hb_free(bits);
    if (at < 0) return HB_ERR_NOMEM;
    t->cat_begin[node] = at;
    t->cat_nwords[node] = nwords;
    t->threshold_bin[node] = -1;
    t->threshold[node] = 0.0;
  } else {
    t->threshold_bin[node] = s->threshold_bin;
    t->threshold[node] = m->upper[s->threshold_bin];
  }
  t->internal_value[node] = t->leaf_value[leaf];
  t->internal_hess[node] = t->leaf_hess[leaf];
  t->internal_count[node] = t->leaf_count[leaf];
  int p = t->leaf_parent[leaf];
  if (p >= 0) {
    if (t->left[p] == ~leaf) t->left[p] = node; else t->right[p] = node;
  }
  t->left[node] = ~leaf;
  t->right[node] = ~r;
  t->leaf_parent[leaf] = node;
  t->leaf_parent[r] = node;
  t->leaf_depth[leaf] += 1;
  t->leaf_depth[r] = t->leaf_depth[leaf];
  t->leaf_value[leaf] = s->value[0];
  t->leaf_value[r] = s->value[1];
  t->leaf_hess[leaf] = s->hess[0];
  t->leaf_hess[r] = s->hess[1];
  t->leaf_count[leaf] = s->count[0];
  t->leaf_count[r] = s->count[1];
  t->num_leaves++;
  return HB_OK;
}

/* Which way bin `bin` of feature mapper m goes at `node`: 1 left, 0 right. The missing
 * bin follows the default direction; a categorical value bin is routed by its level
 * code through hb_tree_goes_left, so binned and raw routing agree by construction. */
int hb_tree_bin_goes_left(const hb_tree_t *t, int node, const hb_binmapper_t *m, int bin) {
  uint8_t dec = t->decision[node];
  if (bin < 0 || bin >= m->num_bin - 1) return (dec & HB_DECISION_DEFAULT_LEFT) != 0;
  if (dec & HB_DECISION_CATEGORICAL) {
    if (m->type != HB_FEAT_CATEGORICAL || !m->bin_level) return (dec & HB_DECISION_DEFAULT_LEFT) != 0;
    return hb_tree_goes_left(t, node, (double)m->bin_level[bin]);
  }
  return bin <= t->threshold_bin[node];
}

/* Bin of (feature f, row) read from the store directly (same rule as hb_dataset_bin:
 * sparse rows absent from the list hold default_bin), so this module does not
 * depend on dataset.c. */
static int stored_bin(const hb_dataset_t *d, int f, int row) {
  const hb_featstore_t *s = &d->store[f];
  if (!s->sparse) return s->bins[row];
  int lo = 0, hi = s->nnz - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int r = s->rows[mid];
    if (r == row) return s->vals[mid];
    if (r < row) lo = mid + 1;
    else hi = mid - 1;
  }
  return d->mappers[f].default_bin;
}

/* Which way (row, input column c) goes at `node`. A column of one feature
 * is routed by its bin; a factor over several features by the level in the
 * one whose value bin holds it, or as missing when none does. */
static int binned_goes_left(const hb_tree_t *t, int node, const hb_dataset_t *d, int c, int row) {
  int f = d->col_first[c], f_end = d->col_first[c + 1];
  if (f_end - f == 1) return hb_tree_bin_goes_left(t, node, &d->mappers[f], stored_bin(d, f, row));
  for (int g = f; g < f_end; g++) {
    const hb_binmapper_t *m = &d->mappers[g];
    int bin = stored_bin(d, g, row);
    if (bin < m->num_bin - 1) return hb_tree_bin_goes_left(t, node, m, bin);
  }
  return hb_tree_bin_goes_left(t, node, &d->mappers[f], d->mappers[f].num_bin - 1);
}

hb_binnode_t *hb_tree_binnodes(const hb_tree_t *t, const hb_dataset_t *d) {
  int ni = t->num_leaves - 1;
  hb_binnode_t *nd = hb_calloc((size_t)(ni > 0 ? ni : 1), sizeof *nd);
  if (!nd) return NULL;
  for (int j = 0; j < ni; j++) {
    int c = t->split_feature[j], f = d->col_first[c];
    nd[j].child[0] = t->right[j];
    nd[j].child[1] = t->left[j];
    if (d->col_first[c + 1] - f != 1 || d->store[f].sparse) continue;  /* nd[j].bins stays NULL */
    nd[j].bins = d->store[f].bins;
    for (int b = 0; b < 256; b++)
      if (hb_tree_bin_goes_left(t, j, &d->mappers[f], b)) nd[j].left[b >> 6] |= (uint64_t)1 << (b & 63);
  }
  return nd;
}

/* One step of row `row` from node n (n < 0: already at a leaf, kept). */
static inline int binnode_step(const hb_tree_t *t, const hb_binnode_t *nodes, const hb_dataset_t *d, int n, int row) {
  if (n < 0) return n;
  const hb_binnode_t *p = &nodes[n];
  int left;
  if (p->bins) {
    const int b = p->bins[row];
    left = (int)((p->left[b >> 6] >> (b & 63)) & 1u);
  } else {
    left = binned_goes_left(t, n, d, t->split_feature[n], row);
  }
  return p->child[left];
}

int hb_tree_leaf_binnodes(const hb_tree_t *t, const hb_binnode_t *nodes, const hb_dataset_t *d, int row) {
  if (t->num_leaves <= 1) return 0;
  int node = 0;
  while (node >= 0) node = binnode_step(t, nodes, d, node, row);
  return ~node;
}

void hb_tree_leaves_binnodes(const hb_tree_t *t, const hb_binnode_t *nodes, const hb_dataset_t *d, const int *rows,
                             int m, int *leaf) {
  if (t->num_leaves <= 1) {
    for (int i = 0; i < m; i++) leaf[i] = 0;
    return;
  }
  int i = 0;
  for (; i + 4 <= m; i += 4) {
    int a = 0, b = 0, c = 0, e = 0;
    while ((a & b & c & e) >= 0) {
      a = binnode_step(t, nodes, d, a, rows[i]);
      b = binnode_step(t, nodes, d, b, rows[i + 1]);
      c = binnode_step(t, nodes, d, c, rows[i + 2]);
      e = binnode_step(t, nodes, d, e, rows[i + 3]);
    }
    leaf[i] = ~a;
    leaf[i + 1] = ~b;
    leaf[i + 2] = ~c;
    leaf[i + 3] = ~e;
  }
  for (; i < m; i++) leaf[i] = hb_tree_leaf_binnodes(t, nodes, d, rows[i]);
}

/* Leaf index (0-based) of row `row` of binned dataset d; a 1-leaf tree gives 0. */
int hb_tree_leaf_binned(const hb_tree_t *t, const hb_dataset_t *d, int row) {
  if (t->num_leaves <= 1) return 0;
  int node = 0;
  while (node >= 0) node = binned_goes_left(t, node, d, t->split_feature[node], row) ? t->left[node] : t->right[node];
  return ~node;
}
