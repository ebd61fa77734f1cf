/* shap.c: TreeSHAP contributions (shap.h): the covers and expected values
 * of a model's trees, and the rows' walks through shap_rules.h (the walk the
 * GPU runs too). */
#include <string.h>
#include "shap.h"
#include "error.h"

void hb_shap_free(hb_shap_t *s) {
  hb_free(s->cover);
  hb_free(s->first);
  hb_free(s->expected);
  hb_free(s->inv);
  memset(s, 0, sizeof *s);
}

int hb_shap_prepare(hb_tree_t *const *trees, int t0, int t1, hb_shap_t *s) {
  memset(s, 0, sizeof *s);
  const int nt = t1 - t0 > 0 ? t1 - t0 : 0;
  size_t total = 0, most = 1;
  for (int t = t0; t < t1; t++) {
    size_t ni = trees[t]->num_leaves > 1 ? (size_t)trees[t]->num_leaves - 1 : 0;
    total += ni;
    if (ni > most) most = ni;
  }
  s->cover = hb_calloc(total > 0 ? total : 1, sizeof(double));
  s->first = hb_malloc(sizeof(size_t) * (size_t)(nt > 0 ? nt : 1));
  s->expected = hb_malloc(sizeof(double) * (size_t)(nt > 0 ? nt : 1));
  int *up = hb_malloc(sizeof(int) * most);  /* an internal node's parent */
  if (!s->cover || !s->first || !s->expected || !up) {
    hb_free(up);
    hb_shap_free(s);
    return HB_ERR_NOMEM;
  }
  size_t k = 0;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    const int L = tr->num_leaves, ni = L - 1;
    double *nc = s->cover + k;
    s->first[t - t0] = k;
    k += ni > 0 ? (size_t)ni : 0;
    double sum = 0, wsum = 0;
    for (int l = 0; l < L; l++) {
      sum += (double)tr->leaf_count[l];
      wsum += (double)tr->leaf_count[l] * tr->leaf_value[l];
      if (tr->leaf_depth[l] > s->max_depth) s->max_depth = tr->leaf_depth[l];
    }
    if (ni <= 0) {
      s->expected[t - t0] = tr->leaf_value[0];
      continue;
    }
    if (!(sum > 0)) {
      hb_free(up);
      hb_shap_free(s);
      return hb_error_set(HB_ERR_INPUT,
                          "tree %d has no row counts in its leaves, which contributions weigh its branches by", t + 1);
    }
    s->expected[t - t0] = wsum / sum;
    /* each leaf's count added to every node above it (children may be
     * numbered before their parents in a loaded model) */
    up[0] = -1;
    for (int j = 0; j < ni; j++) {
      if (tr->left[j] >= 0) up[tr->left[j]] = j;
      if (tr->right[j] >= 0) up[tr->right[j]] = j;
    }
    for (int l = 0; l < L; l++)
      for (int j = tr->leaf_parent[l]; j >= 0; j = up[j]) nc[j] += (double)tr->leaf_count[l];
  }
  hb_free(up);
  s->inv = hb_malloc(sizeof(double) * ((size_t)s->max_depth + 2));
  if (!s->inv) {
    hb_shap_free(s);
    return HB_ERR_NOMEM;
  }
  s->inv[0] = 0;
  for (int d = 1; d <= s->max_depth + 1; d++) s->inv[d] = 1.0 / d;
  return HB_OK;
}

/* Doubles of work space the walk's stack takes (max_depth + 2 entries; the
 * walk needs max_depth). */
static size_t stack_doubles(const hb_shap_t *s) {
  const size_t frames = (size_t)(s->max_depth > 0 ? s->max_depth : 0) + 2;
  return (sizeof(hb_shap_frame_t) * frames + sizeof(double) - 1) / sizeof(double);
}

size_t hb_shap_path_steps(const hb_shap_t *s) {
  size_t d = (size_t)(s->max_depth > 0 ? s->max_depth : 0);
  return (d + 1) * (d + 2) / 2;
}

hb_shap_tree_t hb_shap_tree_view(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t) {
  const hb_tree_t *tr = trees[t];
  hb_shap_tree_t v;
  v.split_feature = tr->split_feature;
  v.left = tr->left;
  v.right = tr->right;
  v.cat_begin = tr->cat_begin;
  v.cat_nwords = tr->cat_nwords;
  v.threshold = tr->threshold;
  v.decision = tr->decision;
  v.cat_bits = tr->cat_bits;
  v.cover = s->cover + s->first[t - t0];
  v.leaf_count = tr->leaf_count;
  v.leaf_value = tr->leaf_value;
  return v;
}

/* A walk of tree t for the dense row x into phi; the work space holds the
 * walk's stack and then leaf_shares' arrays. */
static hb_shap_walk_t walk_of(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t, const double *x, double *phi,
                              double *work) {
  hb_shap_walk_t w;
  w.t = hb_shap_tree_view(s, trees, t0, t);
  w.inv = s->inv;
  w.x.x = x;
  w.x.xs = 1;
  w.x.j = NULL;
  w.x.v = NULL;
  w.x.b = w.x.e = 0;
  w.phi = phi;
  w.work = work + stack_doubles(s);
  w.stride = (size_t)s->max_depth + 1;
  w.cond = 0;
  w.cfeat = -1;
  return w;
}

size_t hb_shap_work_bytes(const hb_shap_t *s) {
  return sizeof(double) * stack_doubles(s) + hb_shap_rule_work_bytes(s->max_depth);
}

void hb_shap_row(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t1, int K, int nfeat, const double *x,
                 double *phi, hb_shap_step_t *path, double *work) {
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    double *ph = phi + (size_t)(t % K) * (size_t)(nfeat + 1);
    ph[nfeat] += s->expected[t - t0];
    if (tr->num_leaves > 1) {
      const hb_shap_walk_t w = walk_of(s, trees, t0, t, x, ph, work);
      hb_shap_walk_tree(&w, path, (hb_shap_frame_t *)work);
    }
  }
}

size_t hb_shap_interaction_doubles(int nfeat) {
  return 3 * ((size_t)nfeat + 1);
}

size_t hb_shap_interaction_ints(int nfeat) {
  return 2 * ((size_t)nfeat + 1);
}

/* Per tree: c = the tree's contributions; for each feature i the tree
 * splits on, on / off = the contributions of the other features with i held
 * known / unknown; (on_j - off_j) / 2 is half the Shapley interaction index
 * of i and j, and the diagonal gets what is left of c_i, so that row i sums
 * to c_i exactly. Features the tree does not split on interact with nothing
 * in it (on = off) and have c = 0: only the tree's own features are walked
 * and touched, and the scratch is left zero for the next tree. */
void hb_shap_interaction_row(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t1, int K, int nfeat,
                             const double *x, double *inter, hb_shap_step_t *path, double *work, double *scratch,
                             int *iscratch) {
  const size_t P = (size_t)nfeat + 1;
  double *c = scratch, *on = scratch + P, *off = scratch + 2 * P;
  int *seen = iscratch, *used = iscratch + P;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    double *blk = inter + (size_t)(t % K) * P * P;
    blk[(size_t)nfeat * P + (size_t)nfeat] += s->expected[t - t0];
    if (tr->num_leaves <= 1) continue;
    int nu = 0;
    for (int j = 0; j < tr->num_leaves - 1; j++) {
      const int f = tr->split_feature[j];
      if (!seen[f]) {
        seen[f] = 1;
        used[nu++] = f;
      }
    }
    hb_shap_walk_t w = walk_of(s, trees, t0, t, x, c, work);
    hb_shap_frame_t *stack = (hb_shap_frame_t *)work;
    hb_shap_walk_tree(&w, path, stack);
    for (int u = 0; u < nu; u++) {
      const int i = used[u];
      w.cfeat = i;
      w.cond = 1;
      w.phi = on;
      hb_shap_walk_tree(&w, path, stack);
      w.cond = -1;
      w.phi = off;
      hb_shap_walk_tree(&w, path, stack);
      double rest = 0;
      for (int v = 0; v < nu; v++) {
        const int j = used[v];
        if (j == i) continue;
        const double d = (on[j] - off[j]) / 2;
        blk[(size_t)j * P + (size_t)i] += d;
        rest += d;
      }
      blk[(size_t)i * P + (size_t)i] += c[i] - rest;
      for (int v = 0; v < nu; v++) on[used[v]] = off[used[v]] = 0;
    }
    for (int u = 0; u < nu; u++) {
      c[used[u]] = 0;
      seen[used[u]] = 0;
    }
  }
}
