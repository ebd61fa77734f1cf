/* shap_rules.h: TreeSHAP (Lundberg, Erion and Lee 2018) for one row and
 * one tree, written once for the CPU (shap.c) and the GPU (cuda/shap.cu),
 * so that the two cannot drift apart: the same steps, the same arithmetic
 * in the same order, the same additions to each feature's contribution in
 * the same order. With no fused multiply-adds (the CUDA files are built
 * with -fmad=false) and IEEE double division on both, the GPU's
 * contributions are then the CPU's bit for bit.
 *
 * Two forms of the same sums:
 *
 * Leaf paths (hb_shap_paths_tree: contributions, on the CPU and the GPU).
 * A tree's value for a row is the sum over its leaves; so are its Shapley
 * values. The path from the root to a leaf, its splits merged by feature
 * (a feature split on twice is one player whose fraction of covers is the
 * product and which x follows when it follows every one of its splits),
 * is a list of d distinct features with zero fractions (shap.h's
 * hb_shap_prepare computes them once per model) and one fractions (0 or 1:
 * whether x follows all of the feature's splits on the path). The leaf's
 * value v reaches x through the subsets of the path whose features are
 * all followed; extending the path one feature at a time gives, for each
 * subset size, the weight with which those subsets reach the leaf, and
 * each feature's share is the total weight of the subsets without it
 * (unwound sum) x (one - zero) x v. This is GPUTreeShap's decomposition
 * (Mitchell, Frank, Holmes 2022); a path needs only its d + 1 weights,
 * where the depth-first walk below copies a path at every node, so a GPU
 * thread can hold them in shared memory.
 *
 * The depth-first walk (hb_shap_walk_tree: interaction values, on the CPU;
 * Algorithm 2 of the paper). It keeps, for the path from the root to the
 * current node, the distinct features split on and, for each subset size,
 * the weight with which the path's subsets of that size reach the node
 * (extend). A feature met again deeper down is first taken out of the path
 * (unwind) and put back with the product of both fractions. At a leaf, each
 * feature's Shapley weight is the sum over the subsets without it
 * (unwound_sum), and it adds that weight x (one - zero) x the leaf value.
 * It can also hold one feature known or unknown throughout (cond), which
 * interaction values need.
 *
 * No recursion (a GPU thread's stack is small, and a tree of L leaves may be
 * L - 1 deep): the walk is depth first, the branch x follows before the
 * other, through an explicit stack of pending nodes. Each node keeps its own
 * copy of the path, one step longer than its parent's, in the buffer right
 * after the parent's; a pending sibling's parent copy is not touched until
 * it is taken (everything written in between lies beyond it). A tree of
 * depth D needs (D + 1)(D + 2) / 2 path steps, D stack entries and
 * hb_shap_rule_work_bytes(D) bytes of work space. */
#ifndef HB_SHAP_RULES_H
#define HB_SHAP_RULES_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tree_rules.h"

#ifdef __CUDACC__
#define HB_SHAP_RULE static inline __host__ __device__
#else
#define HB_SHAP_RULE static inline
#endif

/* One step of the path from the root to a node: the feature split on, the
 * fraction of covers that follow it when the feature is unknown (zero) and
 * whether x follows it (one: 1 or 0), and the path's permutation weight. */
typedef struct {
  int feature;
  double zero, one, weight;
} hb_shap_step_t;

/* A node waiting to be walked: as the recursive walk's arguments (the
 * node, or leaf ~node; the step count of its parent's path, which starts at
 * path + base; the fractions and feature of the split that led here; the
 * share cf of the walk that reaches it, see hb_shap_walk_t's cond). */
typedef struct {
  size_t base;
  int node, depth, feature, pad;
  double zero, one, cf;
} hb_shap_frame_t;

/* One tree as the walk reads it: internal nodes (split_feature, threshold,
 * decision, cat_begin, cat_nwords as tree.h keeps them; children >= 0
 * nodes, < 0 leaf ~c), each internal node's cover (the sum of its leaves'
 * counts) and each leaf's count and value. cat_bits is where cat_begin
 * counts from. */
typedef struct {
  const int *split_feature, *left, *right, *cat_begin, *cat_nwords;
  const double *threshold;
  const uint8_t *decision;
  const uint32_t *cat_bits;
  const double *cover;
  const int *leaf_count;
  const double *leaf_value;
} hb_shap_tree_t;

/* The row's value of feature f: x[f * xs] for dense values, or from a
 * sparse row's entries j[b .. e) (increasing columns) and v, 0.0 where the
 * row has no entry (x NULL). */
typedef struct {
  const double *x;
  size_t xs;
  const int *j;
  const double *v;
  int b, e;
} hb_shap_xrow_t;

HB_SHAP_RULE double hb_shap_value(const hb_shap_xrow_t *r, int f) {
  if (r->x) return r->x[(size_t)f * r->xs];
  int lo = r->b, hi = r->e;  /* the first entry whose column is >= f */
  while (lo < hi) {
    const int mid = lo + ((hi - lo) >> 1);
    if (r->j[mid] < f)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->e && r->j[lo] == f ? r->v[lo] : 0.0;
}

/* What one tree's walk for one row reads and writes. inv[k] = 1 / k for k =
 * 1 .. D + 1: the walk's divisions by step counts become multiplications
 * (one fractions are 0 or 1, so dividing by them is no work either). */
typedef struct {
  hb_shap_tree_t t;
  const double *inv;
  hb_shap_xrow_t x;
  double *phi;        /* contributions, added to at phi[feature] */
  double *work;       /* leaf_shares' arrays, stride values each */
  size_t stride;      /* D + 1 */
  int cond;           /* 0: plain; +1 / -1: feature cfeat held known / unknown (interactions) */
  int cfeat;
} hb_shap_walk_t;

/* Bytes of work space (aligned for doubles) for trees of depth <= D. */
HB_SHAP_RULE size_t hb_shap_rule_work_bytes(int D) {
  return (3 * sizeof(double) + sizeof(int)) * ((size_t)(D > 0 ? D : 0) + 1);
}

/* Append the step (feature, zero, one) to a path of `depth` steps. */
HB_SHAP_RULE void hb_shap_extend(const double *inv, hb_shap_step_t *p, int depth, double zero, double one,
                                 int feature) {
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
HB_SHAP_RULE void hb_shap_unwind(const double *inv, hb_shap_step_t *p, int depth, int k) {
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
HB_SHAP_RULE void hb_shap_leaf_shares(const hb_shap_walk_t *w, const hb_shap_step_t *p, int depth, double v) {
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

/* Cover of child c (a node, or leaf ~c). */
HB_SHAP_RULE double hb_shap_child_cover(const hb_shap_tree_t *t, int c) {
  return c >= 0 ? t->cover[c] : (double)t->leaf_count[~c];
}

/* Add the tree's contributions for the row to w->phi: the walk from the
 * root (the tree has at least one split). path: (D + 1)(D + 2) / 2 steps;
 * stack: D entries (at most one waiting sibling per level above the node
 * walked). When w->cond holds feature w->cfeat fixed, that feature never
 * enters the path, and where it is split on, held known (cond +1) only x's
 * branch goes on, held unknown (cond -1) both go on weighed by their covers
 * (xgboost's TreeShap with condition, for interaction values); cf is the
 * share of the walk that reaches a node that way (1 otherwise). */
HB_SHAP_RULE void hb_shap_walk_tree(const hb_shap_walk_t *w, hb_shap_step_t *path, hb_shap_frame_t *stack) {
  const hb_shap_tree_t *t = &w->t;
  int top = 0;
  /* the node walked now, as the recursive walk's arguments */
  size_t base = 0;
  int node = 0, depth = 0, feature = -1;
  double zero = 1.0, one = 1.0, cf = 1.0;
  for (;;) {
    const hb_shap_step_t *parent = path + base;
    hb_shap_step_t *p = path + base + (size_t)depth;
#ifdef __CUDA_ARCH__
    for (int i = 0; i < depth; i++) p[i] = parent[i];
#else
    if (depth > 0) memcpy(p, parent, sizeof *p * (size_t)depth);
#endif
    if (w->cond == 0 || feature != w->cfeat)
      hb_shap_extend(w->inv, p, depth, zero, one, feature);
    else
      depth--;  /* the held feature stays off the path: the parent's steps only */
    int go = 0;   /* 1: the walk goes on to x's branch below this node */
    if (node < 0) {
      hb_shap_leaf_shares(w, p, depth, t->leaf_value[~node] * cf);
    } else {
      const int f = t->split_feature[node];
      const int left = hb_rule_goes_left(t->decision[node], t->threshold[node], t->cat_bits, t->cat_begin[node],
                                         t->cat_nwords[node], hb_shap_value(&w->x, f));
      const int hot = left ? t->left[node] : t->right[node], cold = left ? t->right[node] : t->left[node];
      const double rw = t->cover[node] > 0 ? 1.0 / t->cover[node] : 0.0;  /* no counted rows below: both sides weigh 0 */
      double in_zero = 1, in_one = 1;
      int k = 0;
      while (k <= depth && p[k].feature != f) k++;
      if (k <= depth) {  /* split on f above: undo it, and redo it with both fractions here */
        in_zero = p[k].zero;
        in_one = p[k].one;
        hb_shap_unwind(w->inv, p, depth, k);
        depth--;
      }
      const double hc = hb_shap_child_cover(t, hot) * rw, cc = hb_shap_child_cover(t, cold) * rw;
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
       * (its zero and one fractions would divide by zero). The other branch
       * waits on the stack while x's branch is walked first. */
      base = (size_t)(p - path);
      if (ccf != 0 && cz != 0) {
        hb_shap_frame_t *c = &stack[top++];
        c->base = base;
        c->node = cold;
        c->depth = depth + 1;
        c->feature = f;
        c->pad = 0;
        c->zero = cz;
        c->one = 0.0;
        c->cf = ccf;
      }
      if (hcf != 0 && (hz != 0 || in_one != 0)) {
        node = hot;
        depth = depth + 1;
        feature = f;
        zero = hz;
        one = in_one;
        cf = hcf;
        go = 1;
      }
    }
    if (go) continue;
    if (top == 0) break;
    const hb_shap_frame_t *fr = &stack[--top];
    base = fr->base;
    node = fr->node;
    depth = fr->depth;
    feature = fr->feature;
    zero = fr->zero;
    one = fr->one;
    cf = fr->cf;
  }
}

/* ---- leaf paths (contributions) ---- */

/* One tree's leaf paths as hb_shap_prepare lays them out (shap.h): the
 * internal nodes' splits (tree.h's arrays, for the one fractions), the
 * leaves' values, and its num_leaves paths in depth-first order: path i
 * leads to leaf path_leaf[i], shares its first path_share[i] elements with
 * path i - 1, and has its distinct features as elements path_first[i] ..
 * path_first[i + 1] - 1, in the order of their last split from the root:
 * element e's slot (the feature's index among the tree's distinct split
 * features), its zero fraction, and its splits cond[c] for c in
 * cond_first[e] .. cond_first[e + 1] - 1, each (node << 1) | 1 when the
 * path goes left there, (node << 1) when it goes right. Element and
 * condition indices count from the start of their arrays. */
typedef struct {
  int num_leaves;
  const int *split_feature, *cat_begin, *cat_nwords;
  const double *threshold;
  const uint8_t *decision;
  const uint32_t *cat_bits;
  const double *leaf_value;
  const int64_t *path_first;         /* num_leaves + 1 */
  const int *path_leaf, *path_share; /* num_leaves */
  const int *elem_slot;
  const double *elem_zero;
  const int64_t *cond_first;
  const int *cond;
} hb_shap_paths_t;

/* Whether x goes left at internal node j. */
HB_SHAP_RULE int hb_shap_node_left(const hb_shap_paths_t *t, const hb_shap_xrow_t *x, int j) {
  return hb_rule_goes_left(t->decision[j], t->threshold[j], t->cat_bits, t->cat_begin[j], t->cat_nwords[j],
                           hb_shap_value(x, t->split_feature[j]));
}

/* The sides x goes at the tree's nn internal nodes, as bits: node j's in
 * bit j & 31 of word bits[(j >> 5) bs] (1: left). */
HB_SHAP_RULE void hb_shap_decide(const hb_shap_paths_t *t, const hb_shap_xrow_t *x, int nn, uint32_t *bits,
                                 size_t bs) {
  for (int w0 = 0; w0 < nn; w0 += 32) {
    uint32_t word = 0;
    const int n = nn - w0 < 32 ? nn - w0 : 32;
    for (int b = 0; b < n; b++) word |= (uint32_t)hb_shap_node_left(t, x, w0 + b) << b;
    bits[(size_t)(w0 >> 5) * bs] = word;
  }
}

/* What the CPU keeps from one path to the next (hb_shap_paths_tree): the
 * weights after each count of the last path's elements (those after k
 * elements at saved + k (k + 1) / 2), and room for the shares of the
 * elements x follows, computed side by side. */
typedef struct {
  double *saved;
  double *z, *next, *tot; /* longest path + 1 each */
  int *step;              /* longest path + 1 */
} hb_shap_keep_t;

/* Bytes of hb_shap_keep_t's arrays for paths of up to d elements (each part
 * a whole number of doubles). */
HB_SHAP_RULE size_t hb_shap_keep_bytes(int d) {
  const size_t d1 = (size_t)(d > 0 ? d : 0) + 1;
  return sizeof(double) * (d1 * (d1 + 1) / 2 + 3 * d1 + (d1 * sizeof(int) + sizeof(double) - 1) / sizeof(double));
}

/* hb_shap_keep_t's arrays laid out in mem (hb_shap_keep_bytes(d) bytes, aligned for doubles). */
HB_SHAP_RULE hb_shap_keep_t hb_shap_keep_in(double *mem, int d) {
  const size_t d1 = (size_t)(d > 0 ? d : 0) + 1;
  hb_shap_keep_t k;
  k.saved = mem;
  k.z = mem + d1 * (d1 + 1) / 2;
  k.next = k.z + d1;
  k.tot = k.next + d1;
  k.step = (int *)(k.tot + d1);
  return k;
}

/* Add the tree's contributions for the row x to phi, at phi[slot * ps] for
 * each of its distinct features' slots, path after path and, within a path,
 * in the order of its elements: first those x follows, then those it does
 * not. bits: hb_shap_decide's sides (stride bs), or NULL to decide at each
 * split (the same sides). one: the path's one fractions (one[k ws] for k = 1
 * .. d). The weights of the path's subsets: with keep NULL (the GPU), in w
 * (w[i ws] for i = 0 .. d), each path extended from the root and each
 * share's recurrence run alone; with keep (the CPU, ws 1, w unused), a path
 * extends only the elements it does not share with the path before it
 * (whose one fractions it shares too), and the shares' recurrences run side
 * by side, each independent of the others. Both do the same operations on
 * the same values, so their contributions are the same bit for bit. A path
 * with a feature x does not follow whose covers are all zero (no counted
 * row goes that way) adds nothing: skipped, as the walk skips such a
 * branch. */
HB_SHAP_RULE void hb_shap_paths_tree(const hb_shap_paths_t *t, const hb_shap_xrow_t *x, const uint32_t *bits,
                                     size_t bs, const double *inv, double *w, uint8_t *one, size_t ws,
                                     const hb_shap_keep_t *keep, double *phi, size_t ps) {
  /* with keep: the weights after this many elements of the last path
   * extended are valid, and the first element of the previous path that
   * makes a path dead (its length + 1 when none) */
  int kept = 0, dead_prev = 1;
  for (int pi = 0; pi < t->num_leaves; pi++) {
    const int64_t e0 = t->path_first[pi];
    const int d = (int)(t->path_first[pi + 1] - e0);
    const int from = keep ? (t->path_share[pi] < kept ? t->path_share[pi] : kept) : 0;
    const int same = keep ? t->path_share[pi] : 0;  /* elements whose one fractions the previous path has */
    int dead_at = keep && dead_prev <= same ? dead_prev : d + 1;
    for (int k = same + 1; k <= d; k++) {
      const int64_t e = e0 + k - 1;
      int o = 1;
      for (int64_t c = t->cond_first[e]; c < t->cond_first[e + 1] && o; c++) {
        const int j = t->cond[c] >> 1;
        const int left = bits ? (int)((bits[(size_t)(j >> 5) * bs] >> (j & 31)) & 1u) : hb_shap_node_left(t, x, j);
        o = left == (t->cond[c] & 1);
      }
      one[(size_t)k * ws] = (uint8_t)o;
      if (!o && t->elem_zero[e] == 0 && k < dead_at) dead_at = k;
    }
    dead_prev = dead_at;
    kept = from;
    if (dead_at <= d) continue;
    /* extend: the root's empty step, then the elements after the first `from` */
    double *wd = keep ? keep->saved : w;  /* the weights after the elements extended so far */
    wd[0] = 1.0;
    for (int k = 1; k <= d; k++) {
      const double zero = t->elem_zero[e0 + k - 1], o = (double)one[(size_t)k * ws], r1 = inv[k + 1];
      if (keep) {  /* from the weights after k - 1 elements into the next ones (unless shared) */
        const double *src = wd;
        wd = keep->saved + (size_t)k * (size_t)(k + 1) / 2;
        if (k <= from) continue;
        /* the in-place update's values: weight i gets zero's part of the
         * old weight i, then one's part of the old weight i - 1 added */
        wd[k] = 0.0 + o * src[k - 1] * (double)k * r1;
        for (int i = k - 1; i >= 1; i--)
          wd[i] = zero * src[i] * (double)(k - i) * r1 + o * src[i - 1] * (double)i * r1;
        wd[0] = zero * src[0] * (double)k * r1;
        continue;
      }
      wd[(size_t)k * ws] = 0.0;
      for (int i = k - 1; i >= 0; i--) {
        wd[(size_t)(i + 1) * ws] += o * wd[(size_t)i * ws] * (double)(i + 1) * r1;
        wd[(size_t)i * ws] = zero * wd[(size_t)i * ws] * (double)(k - i) * r1;
      }
    }
    if (keep) kept = d;
    /* each element's share: the unwound sum of an element x follows is a
     * recurrence through its zero fraction, over i = d - 1 .. 0: c = next /
     * (i + 1), tot += c, next = w_i - zero (d - i) c, from next = w_d; every
     * element x does not follow gets the same -(d + 1) v sum_i w_i / (d - i) */
    const double v = t->leaf_value[t->path_leaf[pi]], n1 = (double)(d + 1);
    int cold = 0;
    if (keep) {
      int m = 0;
      for (int k = 1; k <= d; k++) {
        if (!one[k]) {
          cold = 1;
          continue;
        }
        keep->z[m] = t->elem_zero[e0 + k - 1];
        keep->next[m] = wd[d];
        keep->tot[m] = 0;
        keep->step[m++] = k;
      }
      for (int i = d - 1; i >= 0 && m > 0; i--) {
        const double wi = wd[i], ri = inv[i + 1], di = (double)(d - i);
        for (int j = 0; j < m; j++) {
          const double c = keep->next[j] * ri;
          keep->tot[j] += c;
          keep->next[j] = wi - keep->z[j] * di * c;
        }
      }
      for (int j = 0; j < m; j++)
        phi[(size_t)t->elem_slot[e0 + keep->step[j] - 1] * ps] += n1 * keep->tot[j] * (1.0 - keep->z[j]) * v;
    } else {
      for (int k = 1; k <= d; k++) {
        if (!one[(size_t)k * ws]) {
          cold = 1;
          continue;
        }
        const double z = t->elem_zero[e0 + k - 1];
        double next = wd[(size_t)d * ws], tot = 0;
        for (int i = d - 1; i >= 0; i--) {
          const double c = next * inv[i + 1];
          tot += c;
          next = wd[(size_t)i * ws] - z * (double)(d - i) * c;
        }
        phi[(size_t)t->elem_slot[e0 + k - 1] * ps] += n1 * tot * (1.0 - z) * v;
      }
    }
    if (cold) {
      double sum = 0;
      for (int i = d - 1; i >= 0; i--) sum += wd[(size_t)i * ws] * inv[d - i];
      const double share = -n1 * sum * v;
      for (int k = 1; k <= d; k++)
        if (!one[(size_t)k * ws]) phi[(size_t)t->elem_slot[e0 + k - 1] * ps] += share;
    }
  }
}

#endif
