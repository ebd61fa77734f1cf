/* shap.c: TreeSHAP contributions (shap.h).
 *
 * The walk keeps, for the path from the root to the current node, the
 * distinct features split on and, for each subset size, the weight with
 * which the path's subsets of that size reach the node (extend). A feature
 * met again deeper down is first taken out of the path (unwind) and put back
 * with the product of both fractions. At a leaf, each feature's Shapley
 * weight is the sum over the subsets without it (unwound_sum), and it adds
 * that weight x (one - zero) x the leaf value. Each recursion level keeps its
 * own copy of the path, one step longer than its parent's, in the buffer
 * right after the parent's: a tree of depth D needs (D + 1)(D + 2) / 2
 * steps. */
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

/* Cover of child c (a node, or leaf ~c) of tree t whose node covers are nc. */
static inline double child_cover(const hb_tree_t *t, const double *nc, int c) {
  return c >= 0 ? nc[c] : (double)t->leaf_count[~c];
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

size_t hb_shap_path_steps(const hb_shap_t *s) {
  size_t d = (size_t)(s->max_depth > 0 ? s->max_depth : 0);
  return (d + 1) * (d + 2) / 2;
}

/* What one tree's walk for one row reads. inv[k] = 1 / k: the walk's
 * divisions by step counts become multiplications (one fractions are 0 or 1,
 * so dividing by them is no work either). */
typedef struct {
  const hb_tree_t *t;
  const double *nc;   /* the tree's node covers */
  const double *inv;  /* 1 / k for k = 1 .. max_depth + 1 */
  const double *x;
  double *phi;
  double *work;       /* leaf_shares' arrays, stride values each */
  size_t stride;
  int cond;           /* 0: plain; +1 / -1: feature cfeat held known / unknown (interactions) */
  int cfeat;
} walk_t;

/* Append the step (feature, zero, one) to a path of `depth` steps. */
static void extend(const double *inv, hb_shap_step_t *p, int depth, double zero, double one, int feature) {
  p[depth].feature = feature;
  p[depth].zero = zero;
  p[depth].one = one;
  p[depth].weight = depth == 0 ? 1.0 : 0.0;
  const double r1 = inv[depth + 1];
  for (int i = depth - 1; i >= 0; i--) {
    p[i + 1].weight += one * p[i].weight * (double)(i + 1) * r1;
    p[i].weight = zero * p[i].weight * (double)(depth - i) * r1;
  }
}

/* Take step k out of a path of depth + 1 steps (the inverse of extend). */
static void unwind(const double *inv, hb_shap_step_t *p, int depth, int k) {
  const double one = p[k].one, zero = p[k].zero, n1 = (double)(depth + 1);
  if (one != 0) {
    double next = p[depth].weight;
    for (int i = depth - 1; i >= 0; i--) {
      const double c = next * inv[i + 1];  /* one is 1 */
      next = p[i].weight - zero * (double)(depth - i) * c;
      p[i].weight = n1 * c;
    }
  } else {
    const double a = n1 / zero;
    for (int i = depth - 1; i >= 0; i--) p[i].weight *= a * inv[depth - i];
  }
  for (int i = k; i < depth; i++) {
    p[i].feature = p[i + 1].feature;
    p[i].zero = p[i + 1].zero;
    p[i].one = p[i + 1].one;
  }
}

/* Leaf value v's share for each step of the path (depth + 1 steps): the
 * total weight of the path's subsets were the step unwound, times (one -
 * zero) v. For a step x follows (one = 1) that total is a recurrence over
 * the subset sizes that depends on the step's zero fraction: run for all
 * such steps at once, each size's update independent between them (one
 * step at a time, every update waits on the one before). A step x does not
 * follow (one = 0) gets (n1 / zero) sum_i weight_i / (depth - i) times
 * (0 - zero) v: the same -n1 v sum for all of them. */
static void leaf_shares(const walk_t *w, const hb_shap_step_t *p, int depth, double v) {
  const double *inv = w->inv, n1 = (double)(depth + 1);
  double *z = w->work, *next = z + w->stride, *tot = next + w->stride;
  int *step = (int *)(tot + w->stride);
  int m = 0, cold = 0;
  for (int i = 1; i <= depth; i++) {
    if (p[i].one != 0) {
      z[m] = p[i].zero;
      next[m] = p[depth].weight;
      tot[m] = 0;
      step[m++] = i;
    } else {
      cold = 1;
    }
  }
  for (int i = depth - 1; i >= 0 && m > 0; i--) {
    const double wi = p[i].weight, ri = inv[i + 1], di = (double)(depth - i);
    for (int j = 0; j < m; j++) {
      const double c = next[j] * ri;
      tot[j] += c;
      next[j] = wi - z[j] * di * c;
    }
  }
  for (int j = 0; j < m; j++) w->phi[p[step[j]].feature] += n1 * tot[j] * (1.0 - z[j]) * v;
  if (cold) {
    double sum = 0;
    for (int i = depth - 1; i >= 0; i--) sum += p[i].weight * inv[depth - i];
    const double share = -n1 * sum * v;
    for (int i = 1; i <= depth; i++)
      if (p[i].one == 0) w->phi[p[i].feature] += share;
  }
}

/* The walk below `node` (a node, or leaf ~node) reached through a split on
 * `feature` with fractions (zero, one); its parent's path of `depth` steps
 * ends right before p. cf is the share of the walk that reaches here when
 * w->cond holds feature w->cfeat fixed (1 otherwise): that feature never
 * enters the path, and where it is split on, held known (cond +1) only x's
 * branch goes on, held unknown (cond -1) both go on weighed by their covers
 * (xgboost's TreeShap with condition, for interaction values). */
static void walk(const walk_t *w, int node, int depth, hb_shap_step_t *parent, double zero, double one, int feature,
                 double cf) {
  const hb_tree_t *t = w->t;
  hb_shap_step_t *p = parent + depth;
  if (depth > 0) memcpy(p, parent, sizeof *p * (size_t)depth);
  if (w->cond == 0 || feature != w->cfeat)
    extend(w->inv, p, depth, zero, one, feature);
  else
    depth--;  /* the held feature stays off the path: the parent's steps only */
  if (node < 0) {
    leaf_shares(w, p, depth, t->leaf_value[~node] * cf);
    return;
  }
  const int f = t->split_feature[node];
  const int left = hb_tree_goes_left(t, node, w->x[f]);
  const int hot = left ? t->left[node] : t->right[node], cold = left ? t->right[node] : t->left[node];
  const double rw = w->nc[node] > 0 ? 1.0 / w->nc[node] : 0.0;  /* no counted rows below: both sides weigh 0 */
  double in_zero = 1, in_one = 1;
  int k = 0;
  while (k <= depth && p[k].feature != f) k++;
  if (k <= depth) {  /* split on f above: undo it, and redo it with both fractions here */
    in_zero = p[k].zero;
    in_one = p[k].one;
    unwind(w->inv, p, depth, k);
    depth--;
  }
  const double hc = child_cover(t, w->nc, hot) * rw, cc = child_cover(t, w->nc, cold) * rw;
  const double hz = hc * in_zero, cz = cc * in_zero;
  double hcf = cf, ccf = cf;
  if (w->cond != 0 && f == w->cfeat) {
    if (w->cond > 0) {
      ccf = 0;
    } else {
      hcf *= hc;
      ccf *= cc;
    }
  }
  /* a branch no counted row reached weighs nothing in any subset: skipped
   * (its zero and one fractions would divide by zero) */
  if (hcf != 0 && (hz != 0 || in_one != 0)) walk(w, hot, depth + 1, p, hz, in_one, f, hcf);
  if (ccf != 0 && cz != 0) walk(w, cold, depth + 1, p, cz, 0.0, f, ccf);
}

size_t hb_shap_work_bytes(const hb_shap_t *s) {
  return (3 * sizeof(double) + sizeof(int)) * ((size_t)(s->max_depth > 0 ? s->max_depth : 0) + 1);
}

void hb_shap_row(const hb_shap_t *s, hb_tree_t *const *trees, int t0, int t1, int K, int nfeat, const double *x,
                 double *phi, hb_shap_step_t *path, double *work) {
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    double *ph = phi + (size_t)(t % K) * (size_t)(nfeat + 1);
    ph[nfeat] += s->expected[t - t0];
    if (tr->num_leaves > 1) {
      const walk_t w = {tr, s->cover + s->first[t - t0], s->inv, x, ph, work, (size_t)s->max_depth + 1, 0, -1};
      walk(&w, 0, 0, path, 1.0, 1.0, -1, 1.0);
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
    walk_t w = {tr, s->cover + s->first[t - t0], s->inv, x, c, work, (size_t)s->max_depth + 1, 0, -1};
    walk(&w, 0, 0, path, 1.0, 1.0, -1, 1.0);
    for (int u = 0; u < nu; u++) {
      const int i = used[u];
      w.cfeat = i;
      w.cond = 1;
      w.phi = on;
      walk(&w, 0, 0, path, 1.0, 1.0, -1, 1.0);
      w.cond = -1;
      w.phi = off;
      walk(&w, 0, 0, path, 1.0, 1.0, -1, 1.0);
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
