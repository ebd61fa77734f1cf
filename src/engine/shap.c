/* shap.c: TreeSHAP contributions (shap.h): the covers, expected values and
 * leaf paths of a model's trees, and the rows' sums through shap_rules.h
 * (contributions by leaf paths, which the GPU runs too; interaction values
 * by the depth-first walk). */
#include <string.h>
#include "shap.h"
#include "error.h"

void hb_shap_free(hb_shap_t *s) {
  hb_free(s->cover);
  hb_free(s->first);
  hb_free(s->expected);
  hb_free(s->inv);
  hb_free(s->leaf_first);
  hb_free(s->path_first);
  hb_free(s->path_leaf);
  hb_free(s->path_share);
  hb_free(s->elem_slot);
  hb_free(s->elem_zero);
  hb_free(s->cond_first);
  hb_free(s->cond);
  hb_free(s->slot_first);
  hb_free(s->slot_feat);
  memset(s, 0, sizeof *s);
}

/* Each internal node's parent (up[0] = -1) for a tree with splits (children
 * may be numbered before their parents in a loaded model). */
static void parents(const hb_tree_t *tr, int *up) {
  up[0] = -1;
  for (int j = 0; j < tr->num_leaves - 1; j++) {
    if (tr->left[j] >= 0) up[tr->left[j]] = j;
    if (tr->right[j] >= 0) up[tr->right[j]] = j;
  }
}

/* The leaf paths of trees [t0, t1) into s (shap.h), from the covers s
 * already holds. */
static int prepare_paths(hb_tree_t *const *trees, int t0, int t1, hb_shap_t *s) {
  const int nt = t1 - t0 > 0 ? t1 - t0 : 0;
  int64_t nleaves = 0, nconds = 0;
  int most = 1, chain_most = 1, nfeat = 1, nslots = 0;
  int *up = NULL;
  /* sizes: leaves, splits on all paths, the longest path, the features */
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    const int ni = tr->num_leaves - 1;
    nleaves += ni > 0 ? tr->num_leaves : 1;
    if (ni <= 0) continue;
    if (ni > most) most = ni;
    nslots += ni;
    for (int j = 0; j < ni; j++)
      if (tr->split_feature[j] + 1 > nfeat) nfeat = tr->split_feature[j] + 1;
    for (int l = 0; l < tr->num_leaves; l++)
      nconds += tr->leaf_depth[l] > 0 ? tr->leaf_depth[l] : 0;
  }
  up = hb_malloc(sizeof(int) * (size_t)most);
  s->leaf_first = hb_malloc(sizeof(int64_t) * ((size_t)nt + 1));
  s->path_first = hb_malloc(sizeof(int64_t) * ((size_t)nleaves + 1));
  s->path_leaf = hb_malloc(sizeof(int) * (size_t)nleaves);
  s->path_share = hb_malloc(sizeof(int) * (size_t)nleaves);
  s->elem_slot = hb_malloc(sizeof(int) * (size_t)(nconds > 0 ? nconds : 1));
  s->elem_zero = hb_malloc(sizeof(double) * (size_t)(nconds > 0 ? nconds : 1));
  s->cond_first = hb_malloc(sizeof(int64_t) * ((size_t)nconds + 1));
  s->cond = hb_malloc(sizeof(int) * (size_t)(nconds > 0 ? nconds : 1));
  s->slot_first = hb_malloc(sizeof(int) * ((size_t)nt + 1));
  s->slot_feat = hb_malloc(sizeof(int) * (size_t)(nslots > 0 ? nslots : 1));
  int *slot_of = hb_malloc(sizeof(int) * (size_t)nfeat);
  /* one path, root first: its splits' nodes, sides (1 left) and the cover fraction of the side taken */
  int *cnode = NULL, *cleft = NULL, *efeat = NULL, *order = NULL, *stack = NULL;
  double *cfrac = NULL;
  int ok = up && s->leaf_first && s->path_first && s->path_leaf && s->path_share && s->elem_slot && s->elem_zero && s->cond_first && s->cond &&
           s->slot_first && s->slot_feat && slot_of;
  if (ok) {
    for (int t = t0; t < t1; t++) {
      const hb_tree_t *tr = trees[t];
      for (int l = 0; l < tr->num_leaves && tr->num_leaves > 1; l++)
        if (tr->leaf_depth[l] > chain_most) chain_most = tr->leaf_depth[l];
    }
    cnode = hb_malloc(sizeof(int) * (size_t)chain_most);
    cleft = hb_malloc(sizeof(int) * (size_t)chain_most);
    efeat = hb_malloc(sizeof(int) * (size_t)chain_most);
    cfrac = hb_malloc(sizeof(double) * (size_t)chain_most);
    order = hb_malloc(sizeof(int) * ((size_t)most + 1));
    stack = hb_malloc(sizeof(int) * ((size_t)most + 1));
    ok = cnode && cleft && efeat && cfrac && order && stack;
  }
  int st = ok ? HB_OK : HB_ERR_NOMEM;
  int64_t lf = 0, e = 0, c = 0;
  int sl = 0;
  if (ok) {
    for (int f = 0; f < nfeat; f++) slot_of[f] = -1;
    s->cond_first[0] = 0;
  }
  for (int t = t0; t < t1 && st == HB_OK; t++) {
    const hb_tree_t *tr = trees[t];
    const int ni = tr->num_leaves - 1;
    s->leaf_first[t - t0] = lf;
    s->slot_first[t - t0] = sl;
    if (ni <= 0) {
      s->path_leaf[lf] = 0;
      s->path_share[lf] = 0;
      s->path_first[lf++] = e;
      continue;
    }
    const int sl0 = sl;
    for (int j = 0; j < ni; j++) {
      const int f = tr->split_feature[j];
      if (slot_of[f] < 0) {
        slot_of[f] = sl - sl0;
        s->slot_feat[sl++] = f;
      }
    }
    if (sl - sl0 > s->max_slots) s->max_slots = sl - sl0;
    if (ni > s->max_nodes) s->max_nodes = ni;
    parents(tr, up);
    /* the leaves in depth-first order, left before right: consecutive
     * paths then share their first elements as far as they can */
    int nleaf = 0, top = 0, visits = 0;
    stack[top++] = 0;
    while (top > 0 && nleaf < tr->num_leaves && visits++ <= 2 * ni) {
      const int x = stack[--top];
      if (x < 0) {
        order[nleaf++] = ~x;
      } else if (x < ni && top + 2 <= ni + 1) {
        stack[top++] = tr->right[x];
        stack[top++] = tr->left[x];
      }
    }
    if (nleaf != tr->num_leaves) {
      st = hb_error_set(HB_ERR_INPUT, "tree %d: its nodes do not reach its %d leaves", t + 1, tr->num_leaves);
      break;
    }
    const double *nc = s->cover + s->first[t - t0];
    int64_t prev = -1;  /* the previous leaf's first element */
    for (int pos = 0; pos < tr->num_leaves; pos++) {
      const int l = order[pos];
      s->path_leaf[lf] = l;
      s->path_first[lf++] = e;
      /* the splits from the leaf up, then turned root first */
      int len = 0;
      for (int child = ~l, j = tr->leaf_parent[l]; j >= 0; child = j, j = up[j]) {
        if (len == chain_most) {
          st = hb_error_set(HB_ERR_INPUT, "tree %d: leaf %d lies deeper than its recorded depth", t + 1, l);
          break;
        }
        const double rw = nc[j] > 0 ? 1.0 / nc[j] : 0.0;  /* no counted rows below: both sides weigh 0 */
        const double cc = child >= 0 ? nc[child] : (double)tr->leaf_count[~child];
        cnode[len] = j;
        cleft[len] = tr->left[j] == child;
        cfrac[len++] = cc * rw;
      }
      if (st != HB_OK) break;
      for (int a = 0, b = len - 1; a < b; a++, b--) {
        int ti = cnode[a]; cnode[a] = cnode[b]; cnode[b] = ti;
        ti = cleft[a]; cleft[a] = cleft[b]; cleft[b] = ti;
        const double td = cfrac[a]; cfrac[a] = cfrac[b]; cfrac[b] = td;
      }
      /* distinct features in the order of their last split (the walk's
       * order at the leaf: a feature split on again moves to the end), so
       * that the paths of leaves below one node share every feature last
       * split on above it; each one's fraction the product over its splits
       * (the walk's order: the newer fraction times the older product) */
      int d = 0;
      for (int q = len - 1; q >= 0; q--) {
        const int f = tr->split_feature[cnode[q]];
        int k = 0;
        while (k < d && efeat[k] != f) k++;
        if (k == d) efeat[d++] = f;
      }
      for (int a = 0, b = d - 1; a < b; a++, b--) {
        const int ti = efeat[a];
        efeat[a] = efeat[b];
        efeat[b] = ti;
      }
      for (int k = 0; k < d; k++, e++) {
        double zero = 1.0;
        for (int q = 0; q < len; q++) {
          if (tr->split_feature[cnode[q]] != efeat[k]) continue;
          zero = cfrac[q] * zero;
          s->cond[c++] = (cnode[q] << 1) | cleft[q];
        }
        s->elem_slot[e] = slot_of[efeat[k]];
        s->elem_zero[e] = zero;
        s->cond_first[e + 1] = c;
      }
      /* the leading elements the previous path has too: same feature, same
       * fraction bit for bit, same splits */
      const int64_t e0 = e - d;
      int share = 0;
      if (prev >= 0) {
        const int pd = (int)(e0 - prev);
        while (share < d && share < pd) {
          const int64_t a = prev + share, b = e0 + share;
          const int64_t na = s->cond_first[a + 1] - s->cond_first[a], nb = s->cond_first[b + 1] - s->cond_first[b];
          if (s->elem_slot[a] != s->elem_slot[b] || memcmp(&s->elem_zero[a], &s->elem_zero[b], sizeof(double)) != 0 ||
              na != nb || memcmp(s->cond + s->cond_first[a], s->cond + s->cond_first[b], sizeof(int) * (size_t)na) != 0)
            break;
          share++;
        }
      }
      s->path_share[lf - 1] = share;
      prev = e0;
      if (d > s->max_path) s->max_path = d;
    }
    for (int q = sl0; q < sl; q++) slot_of[s->slot_feat[q]] = -1;
  }
  if (st == HB_OK) {
    s->leaf_first[nt] = lf;
    s->path_first[lf] = e;
    s->slot_first[nt] = sl;
    s->nleaves = lf;
    s->nelems = e;
    s->nconds = c;
    s->nslots = sl;
  }
  hb_free(up);
  hb_free(slot_of);
  hb_free(cnode);
  hb_free(cleft);
  hb_free(efeat);
  hb_free(cfrac);
  hb_free(order);
  hb_free(stack);
  return st;
}

int hb_shap_prepare(hb_tree_t *const *trees, int t0, int t1, int paths, hb_shap_t *s) {
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
    /* each leaf's count added to every node above it */
    parents(tr, up);
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
  const int st = paths ? prepare_paths(trees, t0, t1, s) : HB_OK;
  if (st != HB_OK) hb_shap_free(s);
  return st;
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

hb_shap_paths_t hb_shap_paths_view(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t) {
  const hb_tree_t *tr = trees[t];
  hb_shap_paths_t v;
  v.num_leaves = tr->num_leaves;
  v.split_feature = tr->split_feature;
  v.cat_begin = tr->cat_begin;
  v.cat_nwords = tr->cat_nwords;
  v.threshold = tr->threshold;
  v.decision = tr->decision;
  v.cat_bits = tr->cat_bits;
  v.leaf_value = tr->leaf_value;
  v.path_first = s->path_first + s->leaf_first[t - t0];
  v.path_leaf = s->path_leaf + s->leaf_first[t - t0];
  v.path_share = s->path_share + s->leaf_first[t - t0];
  v.elem_slot = s->elem_slot;
  v.elem_zero = s->elem_zero;
  v.cond_first = s->cond_first;
  v.cond = s->cond;
  return v;
}

/* hb_shap_rows' work space, in doubles: what hb_shap_paths_tree keeps from
 * path to path, the tree's contributions by slot, the sides taken at its
 * splits (bits), the path's one fractions (bytes). */
static size_t row_doubles(const hb_shap_t *s) {
  const size_t d1 = (size_t)s->max_path + 1, words = ((size_t)s->max_nodes + 31) / 32;
  return hb_shap_keep_bytes(s->max_path) / sizeof(double) + (size_t)s->max_slots +
         (words * sizeof(uint32_t) + sizeof(double) - 1) / sizeof(double) + (d1 + sizeof(double) - 1) / sizeof(double);
}

size_t hb_shap_work_bytes(const hb_shap_t *s) {
  const size_t walk = sizeof(double) * stack_doubles(s) + hb_shap_rule_work_bytes(s->max_depth),
               paths = sizeof(double) * row_doubles(s);
  return walk > paths ? walk : paths;
}

void hb_shap_rows(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t1, int K, int nfeat, int nr,
                  const double *x, size_t xs, double *phi, size_t phs, double *work) {
  const size_t words = ((size_t)s->max_nodes + 31) / 32;
  const hb_shap_keep_t keep = hb_shap_keep_in(work, s->max_path);
  double *pt = work + hb_shap_keep_bytes(s->max_path) / sizeof(double);
  uint32_t *bits = (uint32_t *)(pt + s->max_slots);
  uint8_t *one = (uint8_t *)(pt + s->max_slots + (words * sizeof(uint32_t) + sizeof(double) - 1) / sizeof(double));
  hb_shap_xrow_t xr;
  xr.xs = 1;
  xr.j = NULL;
  xr.v = NULL;
  xr.b = xr.e = 0;
  /* tree after tree, each for every row of the block: a tree's paths (far
   * larger than its nodes) are read from memory once a block */
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    const hb_shap_paths_t v = hb_shap_paths_view(s, trees, t0, t);
    const int q0 = s->slot_first[t - t0], nq = s->slot_first[t - t0 + 1] - q0;
    for (int r = 0; r < nr; r++) {
      double *ph = phi + (size_t)r * phs + (size_t)(t % K) * (size_t)(nfeat + 1);
      ph[nfeat] += s->expected[t - t0];
      if (tr->num_leaves <= 1) continue;
      xr.x = x + (size_t)r * xs;
      for (int q = 0; q < nq; q++) pt[q] = 0.0;
      hb_shap_decide(&v, &xr, tr->num_leaves - 1, bits, 1);
      hb_shap_paths_tree(&v, &xr, bits, 1, s->inv, NULL, one, 1, &keep, pt, 1);
      for (int q = 0; q < nq; q++) ph[s->slot_feat[q0 + q]] += pt[q];
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
