/* predict.c: prediction from raw values (dense columns or a CSC matrix) by
 * walking the trees with hb_tree_goes_left (dense rows, blocks of them at a
 * time; sparse rows along the trees' zero chains). Each row is independent
 * and sums its trees in iteration order, so results never depend on the
 * thread count or the walk. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "predict.h"
#include "shap.h"
#include "error.h"
#include "interrupt.h"
#include "threads.h"
#include "cuda.h"

/* Value of feature f in `row` of dense input: INT NA and out-of-range factor codes are NaN. */
static inline double dense_value(const hb_column_t *c, int row) {
  switch (c->type) {
    case HB_COL_DOUBLE:
      return c->dbl[row];
    case HB_COL_INT: {
      int v = c->i32[row];
      return v == HB_NA_INT ? NAN : (double)v;
    }
    default: {
      int v = c->i32[row];
      return (v < 1 || v > c->nlevels) ? NAN : (double)v;
    }
  }
}

/* Rows predicted together: each tree is walked for a block of rows while
 * its nodes are in cache, instead of every tree for one row (a 255-leaf,
 * 100-tree model is larger than the L2 cache). Each row still adds its trees
 * in iteration order, so the sums are the row-at-a-time ones bit for bit. */
#define PRED_BLOCK 64
/* Most values in one thread's block (32 KiB, an L1 cache): wide data get fewer rows a block. */
#define PRED_BLOCK_VALUES 4096

/* Rows are predicted a group at a time, one parallel loop per group, and
 * interrupts are checked between groups (interrupt.h). A group holds about
 * PRED_GROUP_NODES node visits (a walk visits at most its tree's depth + 1
 * nodes: tens of milliseconds), and at least four blocks a thread;
 * contributions about CONTRIB_GROUP_WORK steps of TreeSHAP (leaves x
 * (depth + 1)^2 a row and tree), and at least a row a thread. A parallel
 * loop costs microseconds to start, so the groups cost nothing measurable. */
#define PRED_GROUP_NODES ((long long)1 << 24)
#define CONTRIB_GROUP_WORK ((long long)1 << 25)
/* Contributions on the GPU: steps of TreeSHAP a block of rows aims at, and
 * the fewest rows a block takes (contrib_gpu). */
#define SHAP_GPU_BLOCK_WORK ((long long)1 << 36)
#define SHAP_GPU_MIN_ROWS 16384

/* Units of work per group (at least min_units, at most total). */
static long long group_units(long long per_unit, long long target, long long min_units, long long total) {
  long long g = per_unit > 0 ? target / per_unit : total;
  if (g < min_units) g = min_units;
  if (g > total) g = total;
  return g > 0 ? g : 1;
}

/* The deepest leaf of a tree (0 for a single leaf). */
static int tree_depth(const hb_tree_t *t) {
  int d = 0;
  for (int l = 0; l < t->num_leaves; l++)
    if (t->leaf_depth[l] > d) d = t->leaf_depth[l];
  return d;
}

/* Leaf of a tree for the row of values x. */
static inline int walk(const hb_tree_t *t, const double *x) {
  if (t->num_leaves <= 1) return 0;
  int node = 0;
  while (node >= 0) node = hb_tree_goes_left(t, node, x[t->split_feature[node]]) ? t->left[node] : t->right[node];
  return ~node;
}

/* A numeric node as one 24-byte record: what a walk reads at each level in
 * one cache line, instead of five arrays. */
typedef struct {
  double threshold;
  int feature;
  int default_left;  /* 1: missing values go left */
  int child[2];      /* left, right */
} pnode_t;

/* Each tree's nodes as records, for trees without categorical splits (the
 * others walk with hb_tree_goes_left); first[t] is where tree t0 + t starts,
 * -1 for a tree that walks the plain way. Only dense input walks this way:
 * the rows of a sparse matrix are mostly zeros that go the same way at most
 * nodes, so predicted branches beat the branch-free walk there (100 trees of
 * 255 leaves on 50,000 one-hot rows of 400 columns: 0.12 s with branches,
 * 0.20-0.26 s without), while on dense values they mispredict (0.67 s with
 * branches, 0.43 s without, for 300,000 rows of 28 normal columns). */
typedef struct {
  pnode_t *nodes;
  int *first;
} flat_t;

static void flat_free(flat_t *f) {
  hb_free(f->nodes);
  hb_free(f->first);
}

static int flat_build(hb_tree_t *const *trees, int t0, int t1, flat_t *f) {
  size_t total = 0;
  f->nodes = NULL;
  f->first = hb_malloc(sizeof(int) * (size_t)(t1 - t0 > 0 ? t1 - t0 : 1));
  if (!f->first) return HB_ERR_NOMEM;
  for (int t = t0; t < t1; t++) total += trees[t]->num_leaves > 1 ? (size_t)trees[t]->num_leaves - 1 : 0;
  f->nodes = hb_malloc(sizeof(pnode_t) * (total > 0 ? total : 1));
  if (!f->nodes) {
    flat_free(f);
    return HB_ERR_NOMEM;
  }
  size_t k = 0;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    int nn = tr->num_leaves - 1, cat = 0;
    for (int j = 0; j < nn && !cat; j++) cat = (tr->decision[j] & HB_DECISION_CATEGORICAL) != 0;
    if (nn < 1 || cat) {
      f->first[t - t0] = -1;
      continue;
    }
    f->first[t - t0] = (int)k;
    for (int j = 0; j < nn; j++, k++) {
      pnode_t *p = &f->nodes[k];
      p->threshold = tr->threshold[j];
      p->feature = tr->split_feature[j];
      p->default_left = (tr->decision[j] & HB_DECISION_DEFAULT_LEFT) != 0;
      p->child[0] = tr->left[j];
      p->child[1] = tr->right[j];
    }
  }
  return HB_OK;
}

/* One level of a numeric walk, without branches: a row already at a leaf
 * (n < 0) stays there. hb_tree_goes_left's rule: missing goes the default
 * way, else v <= threshold goes left. */
static inline int step(const pnode_t *nd, int n, const double *x) {
  const pnode_t *p = nd + (n >= 0 ? n : 0);
  const int left = hb_rule_num_left(x[p->feature], p->threshold, p->default_left);
  const int c = p->child[1 - left];
  return n >= 0 ? c : n;
}

/* Leaves of four rows (values at x, rows `w` apart) through one numeric
 * tree, the four walks interleaved so that their memory waits overlap. */
static inline void walk4(const pnode_t *nd, const double *x, size_t w, int *leaf) {
  int a = 0, b = 0, c = 0, d = 0;
  while ((a & b & c & d) >= 0) {
    a = step(nd, a, x);
    b = step(nd, b, x + w);
    c = step(nd, c, x + 2 * w);
    d = step(nd, d, x + 3 * w);
  }
  leaf[0] = ~a;
  leaf[1] = ~b;
  leaf[2] = ~c;
  leaf[3] = ~d;
}

/* Leaves of rows 0..nb-1 of a block (values row-major, nfeat a row) in tree t. */
static inline void block_leaves(const hb_tree_t *t, const flat_t *f, int ft, const double *x, int nb, int nfeat,
                                int *leaf) {
  if (ft < 0) {
    for (int r = 0; r < nb; r++) leaf[r] = walk(t, x + (size_t)r * nfeat);
    return;
  }
  const pnode_t *nd = f->nodes + ft;
  int r = 0;
  for (; r + 4 <= nb; r += 4) walk4(nd, x + (size_t)r * nfeat, (size_t)nfeat, leaf + r);
  /* A lone row walks with branches: a branch-free walk waits for each
   * comparison before the next load, while predicted branches let the
   * loads run ahead. */
  for (; r < nb; r++) leaf[r] = walk(t, x + (size_t)r * nfeat);
}

/* Sparse rows walk each tree by its zero chains. Following from any node
 * the child a zero value goes to gives a chain ending at a leaf, and these
 * chains split the tree's nodes between them (a node is the zero child of at
 * most one parent). Stored chain after chain, an entry a node, a row of a
 * sparse matrix (about ten nonzeros among thousands of columns, on one-hot
 * data) runs along a chain while its node's feature is not among the row's
 * nonzeros: a scan of consecutive entries against a bitmap of the row's
 * columns, instead of a load of the next node that waits for the one before
 * (trees grown on one-hot columns peel off one level at a time: 100 trees of
 * 255 leaves on workload 5 average 109 nodes from root to leaf). Only at a
 * node whose feature the row stores is the split rule asked, with the stored
 * value; a row leaves the chain when that value goes the other way. The
 * leaves are those of hb_tree_goes_left's walk, so predictions are the same
 * bit for bit. */
typedef struct {
  int *feat;    /* per entry: the node's feature; nfeat at a chain's end (a leaf, whose bit is always set) */
  int *node;    /* per entry: the node, or ~leaf at a chain's end */
  int *next[2]; /* per entry: where a row goes right ([0]) or left ([1]): the next entry, or another chain's start */
  int *first;   /* per tree t0 + t: the entry of its root */
} zchain_t;

static void zchain_free(zchain_t *z) {
  hb_free(z->feat);
  hb_free(z->node);
  hb_free(z->next[0]);
  hb_free(z->next[1]);
  hb_free(z->first);
}

static int zchain_build(hb_tree_t *const *trees, int t0, int t1, int nfeat, zchain_t *z) {
  memset(z, 0, sizeof *z);
  size_t total = 0, maxn = 1;
  for (int t = t0; t < t1; t++) {
    size_t nl = trees[t]->num_leaves > 1 ? (size_t)trees[t]->num_leaves : 1;
    total += 2 * nl - 1;
    if (nl > maxn) maxn = nl;
  }
  if (total > (size_t)INT_MAX) return HB_ERR_NOMEM;
  if (total == 0) total = 1;
  z->feat = hb_malloc(sizeof(int) * total);
  z->node = hb_malloc(sizeof(int) * total);
  z->next[0] = hb_malloc(sizeof(int) * total);
  z->next[1] = hb_malloc(sizeof(int) * total);
  z->first = hb_malloc(sizeof(int) * (size_t)(t1 - t0 > 0 ? t1 - t0 : 1));
  /* chains still to lay out: their first node, and the entry that jumps to them */
  int *head = hb_malloc(sizeof(int) * maxn), *from = hb_malloc(sizeof(int) * maxn);
  if (!z->feat || !z->node || !z->next[0] || !z->next[1] || !z->first || !head || !from) {
    hb_free(head);
    hb_free(from);
    zchain_free(z);
    return HB_ERR_NOMEM;
  }
  int k = 0;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = trees[t];
    int top = 0;
    head[top] = tr->num_leaves > 1 ? 0 : ~0;
    from[top++] = -1;
    while (top > 0) {
      int n = head[--top], src = from[top];
      if (src < 0)
        z->first[t - t0] = k;
      else if (z->next[0][src] == -1)
        z->next[0][src] = k;
      else
        z->next[1][src] = k;
      for (; n >= 0; k++) {
        int zl = hb_tree_goes_left(tr, n, 0.0);
        z->feat[k] = tr->split_feature[n];
        z->node[k] = n;
        /* the zero side continues the chain; the other side waits on the stack */
        z->next[zl][k] = k + 1;
        z->next[!zl][k] = -1;
        head[top] = zl ? tr->right[n] : tr->left[n];
        from[top++] = k;
        n = zl ? tr->left[n] : tr->right[n];
      }
      z->feat[k] = nfeat;
      z->node[k] = n;
      z->next[0][k] = z->next[1][k] = -1;
      k++;
    }
  }
  hb_free(head);
  hb_free(from);
  return HB_OK;
}

/* Leaf of tree t for a row whose stored columns are set in `bits` (and bit
 * nfeat), values in x (zero elsewhere), starting at entry k (its root). */
static inline int zchain_walk(const hb_tree_t *t, const zchain_t *z, int k, const uint64_t *bits, const double *x) {
  const int *feat = z->feat;
  for (;;) {
    int f = feat[k];
    while (!((bits[f >> 6] >> (f & 63)) & 1u)) f = feat[++k];
    int n = z->node[k];
    if (n < 0) return ~n;
    k = z->next[hb_tree_goes_left(t, n, x[f])][k];
  }
}

/* Row-major copy of a CSC matrix (column indices increase within each row). */
typedef struct {
  int *p;     /* nrow + 1 */
  int *j;
  double *x;
} csr_t;

static void csr_free(csr_t *r) {
  hb_free(r->p);
  hb_free(r->j);
  hb_free(r->x);
}

/* Check the CSC arrays (so a bad matrix cannot make us write out of bounds) and transpose. */
static int csc_to_csr(const hb_csc_t *c, int nrow, int ncol, csr_t *r) {
  memset(r, 0, sizeof *r);
  if (!c->p || c->p[0] != 0) return hb_error_set(HB_ERR_INPUT, "sparse matrix: column pointers must start at 0");
  for (int k = 0; k < ncol; k++)
    if (c->p[k + 1] < c->p[k])
      return hb_error_set(HB_ERR_INPUT, "sparse matrix: column pointers decrease at column %d", k + 1);
  int nnz = c->p[ncol];
  if (nnz > 0 && (!c->i || !c->x)) return hb_error_set(HB_ERR_INPUT, "sparse matrix: missing row indices or values");
  for (int k = 0; k < ncol; k++)
    for (int e = c->p[k]; e < c->p[k + 1]; e++)
      if (c->i[e] < 0 || c->i[e] >= nrow || (e > c->p[k] && c->i[e] <= c->i[e - 1]))
        return hb_error_set(HB_ERR_INPUT,
                            "sparse matrix: row indices of column %d must be increasing and in 0..%d", k + 1,
                            nrow - 1);
  r->p = hb_calloc((size_t)nrow + 1, sizeof(int));
  r->j = hb_malloc((size_t)nnz * sizeof(int));
  r->x = hb_malloc((size_t)nnz * sizeof(double));
  if (!r->p || !r->j || !r->x) {
    csr_free(r);
    return HB_ERR_NOMEM;
  }
  for (int e = 0; e < nnz; e++) r->p[c->i[e] + 1]++;
  for (int i = 0; i < nrow; i++) r->p[i + 1] += r->p[i];
  int *fill = hb_malloc((size_t)nrow * sizeof(int));
  if (!fill) {
    csr_free(r);
    return HB_ERR_NOMEM;
  }
  memcpy(fill, r->p, (size_t)nrow * sizeof(int));
  for (int k = 0; k < ncol; k++)
    for (int e = c->p[k]; e < c->p[k + 1]; e++) {
      int d = fill[c->i[e]]++;
      r->j[d] = k;
      r->x[d] = c->x[e];
    }
  hb_free(fill);
  return HB_OK;
}

/* Turn the raw scores of one row (K values, stride nrow) into the response. */
static inline void response(int objective, int K, double *o, size_t stride) {
  if (HB_OBJ_LOG_LINK(objective) || objective == HB_OBJ_COX) {
    o[0] = exp(o[0]);
  } else if (objective == HB_OBJ_BINARY || objective == HB_OBJ_XENTROPY) {
    o[0] = 1.0 / (1.0 + exp(-o[0]));
  } else if (objective == HB_OBJ_MULTICLASSOVA) {  /* each class on its own, as LightGBM: they need not sum to 1 */
    for (int k = 0; k < K; k++) o[k * stride] = 1.0 / (1.0 + exp(-o[k * stride]));
  } else if (objective == HB_OBJ_MULTICLASS) {
    double mx = o[0], s = 0.0;
    for (int k = 1; k < K; k++)
      if (o[k * stride] > mx) mx = o[k * stride];
    for (int k = 0; k < K; k++) {
      o[k * stride] = exp(o[k * stride] - mx);
      s += o[k * stride];
    }
    for (int k = 0; k < K; k++) o[k * stride] /= s;
  }
}

/* Sparse blocks storing at most one column in CHAIN_SPARSITY walk the zero
 * chains; denser ones walk the trees a block at a time like dense rows.
 * 20,000 rows, 100 trees of 63 leaves, 60 or 500 columns, 2 threads: the
 * chains take 0.64x the time at 2% stored, the same at 5%, 1.3-1.6x at 10%
 * and 1.6-2.2x at 50-100% (every node asks its split rule there, through
 * one more load than the plain walk). */
#define CHAIN_SPARSITY 16

/* Row i's starting raw score of class k: the model's (init) plus the
 * caller's offset for the row (off: N x K, class-major), either may be NULL. */
static inline double start_score(const double *init, const double *off, int k, size_t N, size_t i) {
  return (init ? init[k] : 0.0) + (off ? off[(size_t)k * N + i] : 0.0);
}

/* Rows i0 .. i0 + nb - 1 of csr walked along the zero chains, row by row,
 * each row's trees added in iteration order; x (zero) and bits (only bit
 * nfeat set) are the thread's row of values and bitmap, left as found. */
static void chain_rows(hb_tree_t *const *trees, const zchain_t *zc, const csr_t *csr, int i0, int nb, uint64_t *bits,
                       double *x, int t0, int t1, int K, const double *init, const double *off, int avg,
                       int objective, int type, size_t N, double *out) {
  for (int i = i0; i < i0 + nb; i++) {
    for (int e = csr->p[i]; e < csr->p[i + 1]; e++) {
      x[csr->j[e]] = csr->x[e];
      bits[csr->j[e] >> 6] |= (uint64_t)1 << (csr->j[e] & 63);
    }
    if (type == HB_PRED_LEAF) {
      for (int t = t0; t < t1; t++)
        out[(size_t)(t - t0) * N + i] = (double)zchain_walk(trees[t], zc, zc->first[t - t0], bits, x);
    } else {
      for (int k = 0; k < K; k++) out[(size_t)k * N + i] = avg ? 0.0 : start_score(init, off, k, N, (size_t)i);
      for (int t = t0; t < t1; t++)
        out[(size_t)(t % K) * N + i] += trees[t]->leaf_value[zchain_walk(trees[t], zc, zc->first[t - t0], bits, x)];
      if (avg)
        for (int k = 0; k < K; k++)
          out[(size_t)k * N + i] = start_score(init, off, k, N, (size_t)i) + out[(size_t)k * N + i] / avg;
      if (type == HB_PRED_RESPONSE) response(objective, K, out + i, N);
    }
    for (int e = csr->p[i]; e < csr->p[i + 1]; e++) {
      x[csr->j[e]] = 0.0;
      bits[csr->j[e] >> 6] &= ~((uint64_t)1 << (csr->j[e] & 63));
    }
  }
}

/* Contributions (shap.h) of trees [t0, t1) for every row, dense columns or
 * the CSR copy of a sparse matrix, into out: nrow x K (nfeat + 1),
 * column-major, the bias of class k starting from its init score (plus
 * the row's offset, off: nrow x K or NULL); with inter, their interaction
 * values instead, nrow x K (nfeat + 1)^2, the init score and offset at
 * (bias, bias). Rows are independent, each one's trees added in order: the
 * thread count and the blocks of rows change nothing. */
static int contrib_rows(const hb_model_t *m, const hb_column_t *cols, const csr_t *csr, const double *off, int nrow,
                        int nfeat, int t0, int t1, int nth, int inter, double *out) {
  const int K = m->trees_per_iter;
  const size_t P = (size_t)nfeat + 1, N = (size_t)nrow, width = (size_t)K * P * (inter ? P : 1);
  hb_shap_t s;
  int st = hb_shap_prepare(m->trees, t0, t1, !inter, &s);
  if (st) return st;
  if (nth > nrow) nth = nrow;
  long long row_work = 0;
  for (int t = t0; t < t1; t++) {
    const long long d1 = tree_depth(m->trees[t]) + 1;
    /* interactions walk each tree once more with each of its features held known and unknown */
    row_work += (long long)m->trees[t]->num_leaves * d1 * d1 * (inter ? 2LL * m->trees[t]->num_leaves - 1 : 1);
  }
  const int group = (int)group_units(row_work, CONTRIB_GROUP_WORK, nth, nrow);
  /* contributions take rows a block at a time, tree after tree for the
   * whole block (hb_shap_rows), so that a tree's paths come from memory
   * once a block: up to 16 rows, fewer for wide rows (a block's values and
   * contributions within PRED_BLOCK_VALUES x 16) or to leave four blocks a
   * thread; interactions a row at a time */
  int rb = 1;
  if (!inter) {
    const long long per_row = (long long)width + (long long)P;
    rb = (int)(16LL * PRED_BLOCK_VALUES / per_row);
    if (rb > 16) rb = 16;
    if (rb > group / (4 * nth)) rb = group / (4 * nth);
    if (rb < 1) rb = 1;
  }
  /* per thread, in one block: the rows' values, their contributions, the
   * work space and path; blocks a cache line apart (threads writing next
   * to each other's contributions took twice as long) */
#define LINE_UP(b) (((b) + 63) / 64 * 64)
  const size_t xb = LINE_UP(sizeof(double) * P * (size_t)rb), pb = LINE_UP(sizeof(double) * width * (size_t)rb),
               wb = LINE_UP(hb_shap_work_bytes(&s)),
               sb = inter ? LINE_UP(sizeof(hb_shap_step_t) * hb_shap_path_steps(&s)) : 0,
               db = inter ? LINE_UP(sizeof(double) * hb_shap_interaction_doubles(nfeat)) : 0,
               span = xb + pb + wb + sb + db + (inter ? LINE_UP(sizeof(int) * hb_shap_interaction_ints(nfeat)) : 0) + 64;
#undef LINE_UP
  char *blocks = hb_calloc((size_t)nth, span);
  if (!blocks) {
    hb_shap_free(&s);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for contribution buffers");
  }
  /* blocks handed out a few at a time, one when a group has few */
  const int nblk_group = (group + rb - 1) / rb;
  const int chunk = nblk_group / (4 * nth) < 1 ? 1 : nblk_group / (4 * nth) > 16 ? 16 : nblk_group / (4 * nth);
  (void)nth;
  (void)chunk;
  for (int g0 = 0; g0 < nrow && st == HB_OK; g0 += group) {
    const int g1 = nrow - g0 < group ? nrow : g0 + group, nblk = (g1 - g0 + rb - 1) / rb;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nth) schedule(dynamic, chunk))
#endif
    for (int bi = 0; bi < nblk; bi++) {
#ifdef _OPENMP
      const int th = omp_get_thread_num();
#else
      const int th = 0;
#endif
      const int i0 = g0 + bi * rb, nr = g1 - i0 < rb ? g1 - i0 : rb;
      char *b = blocks + (size_t)th * span;
      double *x = (double *)b, *phi = (double *)(b + xb), *work = (double *)(b + xb + pb);
      hb_shap_step_t *path = (hb_shap_step_t *)(b + xb + pb + wb);
      double *scratch = (double *)(b + xb + pb + wb + sb);
      int *iscratch = (int *)(b + xb + pb + wb + sb + db);
      for (int r = 0; r < nr; r++) {
        double *xr = x + (size_t)r * P;
        if (cols) {
          for (int f = 0; f < nfeat; f++) xr[f] = dense_value(&cols[f], i0 + r);
        } else {
          for (int e = csr->p[i0 + r]; e < csr->p[i0 + r + 1]; e++) xr[csr->j[e]] = csr->x[e];
        }
      }
      memset(phi, 0, sizeof(double) * width * (size_t)nr);
      if (inter)
        hb_shap_interaction_row(&s, m->trees, t0, t1, K, nfeat, x, phi, path, work, scratch, iscratch);
      else
        hb_shap_rows(&s, m->trees, t0, t1, K, nfeat, nr, x, P, phi, width, work);
      for (int r = 0; r < nr; r++) {
        const size_t i = (size_t)(i0 + r);
        double *ph = phi + (size_t)r * width;
        if (m->config.rf && t1 > t0)  /* a forest: each tree's share of the mean */
          for (size_t c = 0; c < width; c++) ph[c] /= (double)((t1 - t0) / K);
        for (int k = 0; k < K; k++)
          ph[(size_t)k * P * (inter ? P : 1) + (inter ? (size_t)nfeat * P : 0) + (size_t)nfeat] +=
              start_score(m->init_score, off, k, N, i);
        for (size_t c = 0; c < width; c++) out[c * N + i] = ph[c];
        if (!cols)
          for (int e = csr->p[i]; e < csr->p[i + 1]; e++) x[(size_t)r * P + (size_t)csr->j[e]] = 0.0;
      }
    }
    if (g1 < nrow) st = hb_interrupt_check();
  }
  hb_free(blocks);
  hb_shap_free(&s);
  return st;
}

/* The checks every prediction makes before any work (hb_predict's
 * contract); *num_iter becomes the count of iterations used. */
static int predict_check(const hb_model_t *m, const hb_input_t *in, int start_iter, int *num_iter_io, int type,
                         const double *out) {
  int num_iter = *num_iter_io;
  if (!m || !in) return hb_error_set(HB_ERR_INPUT, "no model or data given");
  if (type != HB_PRED_RAW && type != HB_PRED_RESPONSE && type != HB_PRED_LEAF && type != HB_PRED_CONTRIB &&
      type != HB_PRED_INTERACTION)
    return hb_error_set(HB_ERR_INPUT, "type must be raw, response, leaf, contrib or interaction (got %d)", type);
  if (in->nrow < 0) return hb_error_set(HB_ERR_INPUT, "negative row count");
  if (in->ncol != m->schema.nfeat)
    return hb_error_set(HB_ERR_INPUT, "newdata has %d columns but the model was trained on %d features",
                        in->ncol, m->schema.nfeat);
  if ((in->cols == NULL) == (in->csc == NULL))
    return hb_error_set(HB_ERR_INPUT, "give exactly one of dense columns or a sparse matrix");
  int niter = hb_model_num_iterations(m);
  if (start_iter < 0 || start_iter > niter)
    return hb_error_set(HB_ERR_INPUT, "start_iteration must be between 0 and %d (got %d)", niter, start_iter);
  if (num_iter <= 0) num_iter = niter - start_iter;
  if (num_iter > niter - start_iter)
    return hb_error_set(HB_ERR_INPUT,
                        "start_iteration + num_iteration (%d + %d) exceeds the model's %d iterations", start_iter,
                        num_iter, niter);
  if (!out) return hb_error_set(HB_ERR_INPUT, "no output buffer given");
  if (in->cols) {
    for (int f = 0; f < in->ncol; f++) {
      const hb_column_t *c = &in->cols[f];
      if (c->type == HB_COL_DOUBLE ? !c->dbl : (c->type == HB_COL_INT || c->type == HB_COL_FACTOR) ? !c->i32 : 1)
        if (in->nrow > 0) return hb_error_set(HB_ERR_INPUT, "column %d has no data or an unknown type", f + 1);
    }
  }
  const int K = m->trees_per_iter;
  if (in->init_score && (in->init_score_ncol != K || type == HB_PRED_LEAF))
    return hb_error_set(HB_ERR_INPUT, type == HB_PRED_LEAF ? "init_score has no place in leaf predictions"
                                                           : "init_score needs %d column%s (one per class), not %d",
                        K, K == 1 ? "" : "s", in->init_score_ncol);
  *num_iter_io = num_iter;
  return HB_OK;
}

/* Predict rows of `in` into out (column-major); see predict.h. */
int hb_predict(const hb_model_t *m, const hb_input_t *in, int start_iter, int num_iter, int type, int nthreads,
               double *out) {
  int st0 = predict_check(m, in, start_iter, &num_iter, type, out);
  if (st0) return st0;
  int nrow = in->nrow, K = m->trees_per_iter, nfeat = in->ncol;
  if (nrow == 0) return HB_OK;
  int t0 = start_iter * K, t1 = (start_iter + num_iter) * K;
  size_t N = (size_t)nrow;
  int nth = hb_threads_use(nthreads);

  csr_t csr;
  memset(&csr, 0, sizeof csr);
  if (in->csc) {
    int st = csc_to_csr(in->csc, nrow, nfeat, &csr);
    if (st) return st;
  }
  if (type == HB_PRED_CONTRIB || type == HB_PRED_INTERACTION) {
    int st = contrib_rows(m, in->cols, in->csc ? &csr : NULL, in->init_score, nrow, nfeat, t0, t1, nth,
                          type == HB_PRED_INTERACTION, out);
    csr_free(&csr);
    return st;
  }
  const size_t width = (size_t)(nfeat > 0 ? nfeat : 1);
  const int brow = width * PRED_BLOCK <= PRED_BLOCK_VALUES ? PRED_BLOCK
                   : (int)(PRED_BLOCK_VALUES / width > 0 ? PRED_BLOCK_VALUES / width : 1);
  int nblock = (int)(((size_t)nrow + (size_t)brow - 1) / (size_t)brow);
  if (nth > nblock) nth = nblock;
  /* per thread: a block of rows' values, row-major (zeroed: sparse rows set
   * their entries and clear them after); sparse rows also a bitmap of their
   * stored columns, bit nfeat always set (it ends every chain) */
  double *blocks = hb_calloc((size_t)nth * (size_t)brow * width, sizeof(double));
  const size_t bwords = (size_t)nfeat / 64 + 1;
  uint64_t *bitmaps = in->csc ? hb_calloc((size_t)nth * bwords, sizeof(uint64_t)) : NULL;
  flat_t flat = {NULL, NULL};
  zchain_t zc;
  memset(&zc, 0, sizeof zc);
  /* Copying the trees into records costs about what walking a few dozen
   * rows through them does: fewer rows (one-row calls) walk the plain way. */
  const int use_flat = in->cols && nrow >= PRED_BLOCK;
  if (!blocks || (in->csc && (!bitmaps || zchain_build(m->trees, t0, t1, nfeat, &zc) != HB_OK)) ||
      (use_flat && flat_build(m->trees, t0, t1, &flat) != HB_OK)) {
    hb_free(blocks);
    hb_free(bitmaps);
    zchain_free(&zc);
    csr_free(&csr);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for prediction buffers");
  }
  if (bitmaps)
    for (int h = 0; h < nth; h++) bitmaps[(size_t)h * bwords + (size_t)nfeat / 64] |= (uint64_t)1 << (nfeat & 63);
  const hb_column_t *cols = in->cols;
  hb_tree_t *const *trees = m->trees;
  const double *init = m->init_score, *off = in->init_score;
  int objective = m->config.objective;
  const int avg = m->config.rf ? num_iter : 0;  /* a forest averages its iterations */
  long long row_nodes = 0;
  for (int t = t0; t < t1; t++) row_nodes += tree_depth(trees[t]) + 1;
  const int group = (int)group_units((long long)brow * row_nodes, PRED_GROUP_NODES, 4LL * nth, nblock);
  int st = HB_OK;
  (void)nth;

  for (int b0 = 0; b0 < nblock && st == HB_OK; b0 += group) {
    const int b1 = nblock - b0 < group ? nblock : b0 + group;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(nth) schedule(static))
#endif
    for (int b = b0; b < b1; b++) {
#ifdef _OPENMP
      const int th = omp_get_thread_num();
#else
      const int th = 0;
#endif
      double *x = blocks + (size_t)th * (size_t)brow * width;
      int i0 = b * brow, nb = nrow - i0 < brow ? nrow - i0 : brow;
      if (!cols && (size_t)(csr.p[i0 + nb] - csr.p[i0]) * CHAIN_SPARSITY <= (size_t)nb * (size_t)nfeat) {
        chain_rows(trees, &zc, &csr, i0, nb, bitmaps + (size_t)th * bwords, x, t0, t1, K, init, off, avg, objective,
                   type, N, out);
        continue;
      }
      if (cols) {
        for (int f = 0; f < nfeat; f++)
          for (int r = 0; r < nb; r++) x[(size_t)r * nfeat + f] = dense_value(&cols[f], i0 + r);
      } else {
        for (int r = 0; r < nb; r++)
          for (int e = csr.p[i0 + r]; e < csr.p[i0 + r + 1]; e++) x[(size_t)r * nfeat + csr.j[e]] = csr.x[e];
      }
      int leaf[PRED_BLOCK];
      if (type == HB_PRED_LEAF) {
        for (int t = t0; t < t1; t++) {
          double *o = out + (size_t)(t - t0) * N + i0;
          block_leaves(trees[t], &flat, flat.first ? flat.first[t - t0] : -1, x, nb, nfeat, leaf);
          for (int r = 0; r < nb; r++) o[r] = (double)leaf[r];
        }
      } else {
        for (int k = 0; k < K; k++)
          for (int r = 0; r < nb; r++)
            out[(size_t)k * N + i0 + r] = avg ? 0.0 : start_score(init, off, k, N, (size_t)(i0 + r));
        for (int t = t0; t < t1; t++) {
          const hb_tree_t *tr = trees[t];
          double *o = out + (size_t)(t % K) * N + i0;
          block_leaves(tr, &flat, flat.first ? flat.first[t - t0] : -1, x, nb, nfeat, leaf);
          for (int r = 0; r < nb; r++) o[r] += tr->leaf_value[leaf[r]];
        }
        if (avg)  /* a forest: the starting score plus the mean of its trees */
          for (int k = 0; k < K; k++)
            for (int r = 0; r < nb; r++)
              out[(size_t)k * N + i0 + r] =
                  start_score(init, off, k, N, (size_t)(i0 + r)) + out[(size_t)k * N + i0 + r] / avg;
        if (type == HB_PRED_RESPONSE)
          for (int r = 0; r < nb; r++) response(objective, K, out + i0 + r, N);
      }
      if (!cols)
        for (int r = 0; r < nb; r++)
          for (int e = csr.p[i0 + r]; e < csr.p[i0 + r + 1]; e++) x[(size_t)r * nfeat + csr.j[e]] = 0.0;
    }
    if (b1 < nblock) st = hb_interrupt_check();
  }
  hb_free(blocks);
  hb_free(bitmaps);
  zchain_free(&zc);
  flat_free(&flat);
  csr_free(&csr);
  return st;
}

/* ---- on the GPU (cuda.h) ---- */

/* The trees [t0, t1) as the device walks them (cuda.h's hb_cuda_forest_t):
 * their nodes, leaf values and bitsets end to end, each tree's offsets. */
typedef struct {
  hb_cuda_forest_t f;
  hb_cuda_pnode_t *nodes;
  hb_cuda_ptree_t *trees;
  double *leaf_value;
  uint32_t *cat_bits;
} gpu_forest_t;

static void gpu_forest_free(gpu_forest_t *g) {
  hb_free(g->nodes);
  hb_free(g->trees);
  hb_free(g->leaf_value);
  hb_free(g->cat_bits);
}

/* Trees t0 .. t1 - 1's internal nodes, leaves (a stump counts one) and
 * categorical bitset words, each of which the device indexes with an int. */
static int gpu_forest_sizes(const hb_model_t *m, int t0, int t1, const char *what, size_t *nn, size_t *nl,
                            size_t *nw) {
  *nn = *nl = *nw = 0;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = m->trees[t];
    *nn += tr->num_leaves > 1 ? (size_t)tr->num_leaves - 1 : 0;
    *nl += tr->num_leaves > 1 ? (size_t)tr->num_leaves : 1;
    *nw += tr->cat_nbits_words > 0 ? (size_t)tr->cat_nbits_words : 0;
  }
  if (*nn > (size_t)INT_MAX || *nl > (size_t)INT_MAX || *nw > (size_t)INT_MAX)
    return hb_error_set(HB_ERR_INPUT, "the model is too large %s; use device = \"cpu\"", what);
  return HB_OK;
}

static int gpu_forest_build(const hb_model_t *m, int t0, int t1, int avg, gpu_forest_t *g) {
  memset(g, 0, sizeof *g);
  size_t nn, nl, nw;
  int st = gpu_forest_sizes(m, t0, t1, "to predict on the GPU", &nn, &nl, &nw);
  if (st != HB_OK) return st;
  g->nodes = hb_malloc(sizeof(hb_cuda_pnode_t) * (nn > 0 ? nn : 1));
  g->trees = hb_malloc(sizeof(hb_cuda_ptree_t) * (size_t)(t1 - t0 > 0 ? t1 - t0 : 1));
  g->leaf_value = hb_malloc(sizeof(double) * nl);
  g->cat_bits = hb_malloc(sizeof(uint32_t) * (nw > 0 ? nw : 1));
  if (!g->nodes || !g->trees || !g->leaf_value || !g->cat_bits) {
    gpu_forest_free(g);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for the trees of a GPU prediction");
  }
  int k = 0, l = 0, w = 0;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = m->trees[t];
    const int nnode = tr->num_leaves > 1 ? tr->num_leaves - 1 : 0;
    hb_cuda_ptree_t *pt = &g->trees[t - t0];
    pt->node_first = k;
    pt->leaf_first = l;
    pt->num_leaves = tr->num_leaves > 1 ? tr->num_leaves : 1;
    pt->pad = 0;
    for (int j = 0; j < nnode; j++, k++) {
      hb_cuda_pnode_t *p = &g->nodes[k];
      const int cat = (tr->decision[j] & HB_DECISION_CATEGORICAL) != 0;
      p->threshold = tr->threshold[j];
      p->feature = tr->split_feature[j];
      p->decision = tr->decision[j];
      p->child[0] = tr->left[j];
      p->child[1] = tr->right[j];
      p->cat_begin = cat ? w + tr->cat_begin[j] : 0;
      p->cat_nwords = cat ? tr->cat_nwords[j] : 0;
    }
    for (int j = 0; j < pt->num_leaves; j++) g->leaf_value[l++] = tr->leaf_value[j];
    if (tr->cat_nbits_words > 0) {
      memcpy(g->cat_bits + w, tr->cat_bits, sizeof(uint32_t) * (size_t)tr->cat_nbits_words);
      w += tr->cat_nbits_words;
    }
  }
  hb_cuda_forest_t *f = &g->f;
  f->ntrees = t1 - t0;
  f->num_class = m->trees_per_iter;
  f->nfeat = m->schema.nfeat;
  f->avg = avg;
  f->nnodes = k;
  f->nleaves = l;
  f->ncat_words = w;
  f->nodes = g->nodes;
  f->trees = g->trees;
  f->leaf_value = g->leaf_value;
  f->cat_bits = g->cat_bits;
  f->init_score = m->init_score;
  return HB_OK;
}

/* Rows i0 .. i0 + nb - 1 of `in` into slot b: dense columns as a block of
 * values, column-major (x[f nb + r]) as the CPU's walk reads them, or the
 * rows of csr as they are (p rebased to 0); their offsets (nb x K) when
 * given. */
static void gpu_fill(const hb_input_t *in, const csr_t *csr, int i0, int nb, int K, int nth, const hb_cuda_pslot_t *b) {
  const int nfeat = in->ncol;
  const size_t N = (size_t)in->nrow, B = (size_t)nb;
  (void)nth;
  if (in->cols) {
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1))
    for (int f = 0; f < nfeat; f++) {
      const hb_column_t *c = &in->cols[f];
      double *xf = b->x + (size_t)f * B;
      if (c->type == HB_COL_DOUBLE)
        memcpy(xf, c->dbl + i0, sizeof(double) * B);
      else
        for (int r = 0; r < nb; r++) xf[r] = dense_value(c, i0 + r);
    }
  } else {
    const int e0 = csr->p[i0], ne = csr->p[i0 + nb] - e0;
    for (int r = 0; r <= nb; r++) b->p[r] = csr->p[i0 + r] - e0;
    memcpy(b->j, csr->j + e0, sizeof(int) * (size_t)ne);
    memcpy(b->v, csr->x + e0, sizeof(double) * (size_t)ne);
  }
  if (b->off)
    for (int k = 0; k < K; k++)
      memcpy(b->off + (size_t)k * B, in->init_score + (size_t)k * N + (size_t)i0, sizeof(double) * B);
}

/* A block's results (raw, or leaf indices) into out, at rows i0 ..; the
 * response through the CPU's own link (response()), so it is the CPU's bit
 * for bit given the same raw scores. */
static void gpu_collect(int objective, int type, int K, int ntrees, size_t N, int i0, int nb, int nth,
                        const hb_cuda_pslot_t *b, double *out) {
  const size_t B = (size_t)nb;
  (void)nth;
  if (type == HB_PRED_LEAF) {
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int j = 0; j < ntrees; j++) {
      double *o = out + (size_t)j * N + (size_t)i0;
      const int *lj = b->leaf + (size_t)j * B;
      for (int r = 0; r < nb; r++) o[r] = (double)lj[r];
    }
    return;
  }
  for (int k = 0; k < K; k++) memcpy(out + (size_t)k * N + (size_t)i0, b->raw + (size_t)k * B, sizeof(double) * B);
  if (type == HB_PRED_RESPONSE) {
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int r = 0; r < nb; r++) response(objective, K, out + (size_t)i0 + (size_t)r, N);
  }
}

/* ---- contributions on the GPU ---- */

/* The trees [t0, t1) as the device's contributions read them (cuda.h's
 * hb_cuda_shap_forest_t): their split and leaf arrays end to end, each
 * tree's offsets, and the leaf paths, slots and 1 / k of the CPU's
 * hb_shap_prepare (the path arrays are s's own), with the lists that add
 * the trees' shares to each class and feature in the CPU's order. */
typedef struct {
  hb_cuda_shap_forest_t f;
  hb_cuda_ptree_t *trees;
  int *split_feature, *cat_begin, *cat_nwords, *sum_first, *sum_slot;
  double *threshold, *leaf_value;
  uint8_t *decision;
  uint32_t *cat_bits;
} gpu_shap_forest_t;

static void gpu_shap_forest_free(gpu_shap_forest_t *g) {
  hb_free(g->trees);
  hb_free(g->split_feature);
  hb_free(g->cat_begin);
  hb_free(g->cat_nwords);
  hb_free(g->sum_first);
  hb_free(g->sum_slot);
  hb_free(g->threshold);
  hb_free(g->leaf_value);
  hb_free(g->decision);
  hb_free(g->cat_bits);
}

static int gpu_shap_forest_build(const hb_model_t *m, const hb_shap_t *s, int t0, int t1, gpu_shap_forest_t *g) {
  memset(g, 0, sizeof *g);
  size_t nn, nl, nw;
  int st = gpu_forest_sizes(m, t0, t1, "for contributions on the GPU", &nn, &nl, &nw);
  if (st != HB_OK) return st;
  const int K = m->trees_per_iter, nfeat = m->schema.nfeat;
  const size_t NN = nn > 0 ? nn : 1, NT = (size_t)(t1 - t0 > 0 ? t1 - t0 : 1), NS = (size_t)K * (size_t)nfeat;
  g->trees = hb_malloc(sizeof(hb_cuda_ptree_t) * NT);
  g->split_feature = hb_malloc(sizeof(int) * NN);
  g->cat_begin = hb_malloc(sizeof(int) * NN);
  g->cat_nwords = hb_malloc(sizeof(int) * NN);
  g->threshold = hb_malloc(sizeof(double) * NN);
  g->decision = hb_malloc(sizeof(uint8_t) * NN);
  g->leaf_value = hb_malloc(sizeof(double) * nl);
  g->cat_bits = hb_malloc(sizeof(uint32_t) * (nw > 0 ? nw : 1));
  g->sum_first = hb_calloc(NS + 1, sizeof(int));
  g->sum_slot = hb_malloc(sizeof(int) * (size_t)(s->nslots > 0 ? s->nslots : 1));
  if (!g->trees || !g->split_feature || !g->cat_begin || !g->cat_nwords || !g->threshold || !g->decision ||
      !g->leaf_value || !g->cat_bits || !g->sum_first || !g->sum_slot) {
    gpu_shap_forest_free(g);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for the trees of GPU contributions");
  }
  int k = 0, l = 0, w = 0;
  for (int t = t0; t < t1; t++) {
    const hb_tree_t *tr = m->trees[t];
    const int nnode = tr->num_leaves > 1 ? tr->num_leaves - 1 : 0, nleaf = nnode > 0 ? tr->num_leaves : 1;
    hb_cuda_ptree_t *pt = &g->trees[t - t0];
    pt->node_first = k;
    pt->leaf_first = l;
    pt->num_leaves = nleaf;
    pt->pad = 0;
    for (int j = 0; j < nnode; j++, k++) {
      const int cat = (tr->decision[j] & HB_DECISION_CATEGORICAL) != 0;
      g->split_feature[k] = tr->split_feature[j];
      g->cat_begin[k] = cat ? w + tr->cat_begin[j] : 0;
      g->cat_nwords[k] = cat ? tr->cat_nwords[j] : 0;
      g->threshold[k] = tr->threshold[j];
      g->decision[k] = tr->decision[j];
    }
    for (int j = 0; j < nleaf; j++, l++) g->leaf_value[l] = tr->leaf_value[j];
    if (tr->cat_nbits_words > 0) {
      memcpy(g->cat_bits + w, tr->cat_bits, sizeof(uint32_t) * (size_t)tr->cat_nbits_words);
      w += tr->cat_nbits_words;
    }
  }
  /* the slots of each (class, feature) in iteration order: counted, then placed */
  for (int t = t0; t < t1; t++)
    for (int q = s->slot_first[t - t0]; q < s->slot_first[t - t0 + 1]; q++)
      g->sum_first[(size_t)(t % K) * (size_t)nfeat + (size_t)s->slot_feat[q] + 1]++;
  for (size_t c = 0; c < NS; c++) g->sum_first[c + 1] += g->sum_first[c];
  for (int t = t0; t < t1; t++)
    for (int q = s->slot_first[t - t0]; q < s->slot_first[t - t0 + 1]; q++) {
      int *at = &g->sum_first[(size_t)(t % K) * (size_t)nfeat + (size_t)s->slot_feat[q]];
      g->sum_slot[(*at)++] = q;
    }
  for (size_t c = NS; c > 0; c--) g->sum_first[c] = g->sum_first[c - 1];  /* the counts' places back to starts */
  g->sum_first[0] = 0;
  hb_cuda_shap_forest_t *f = &g->f;
  f->ntrees = t1 - t0;
  f->num_class = K;
  f->nfeat = nfeat;
  f->max_path = s->max_path;
  f->max_nodes = s->max_nodes;
  f->nnodes = k;
  f->nleaves = l;
  f->ncat_words = w;
  f->nslots = s->nslots;
  f->nelems = s->nelems;
  f->nconds = s->nconds;
  f->space = 0;
#ifdef HB_TEST_HOOKS
  {  /* the tests reach the path space's fallbacks: "nosides" or "work" */
    const char *e = getenv("HISTBOOST_TEST_SHAP_SPACE");
    if (e) f->space = !strcmp(e, "nosides") ? 1 : !strcmp(e, "work") ? 2 : 0;
  }
#endif
  f->trees = g->trees;
  f->slot_first = s->slot_first;
  f->split_feature = g->split_feature;
  f->cat_begin = g->cat_begin;
  f->cat_nwords = g->cat_nwords;
  f->threshold = g->threshold;
  f->decision = g->decision;
  f->leaf_value = g->leaf_value;
  f->path_first = s->path_first;
  f->path_leaf = s->path_leaf;
  f->path_share = s->path_share;
  f->elem_slot = s->elem_slot;
  f->elem_zero = s->elem_zero;
  f->cond_first = s->cond_first;
  f->cond = s->cond;
  f->sum_first = g->sum_first;
  f->sum_slot = g->sum_slot;
  f->cat_bits = g->cat_bits;
  f->inv = s->inv;
  return HB_OK;
}

/* The two-slot block loop of the device paths (predict_gpu, contrib_gpu):
 * blocks of at most brow rows (and, sparse, bnnz entries) go through slots
 * 0 and 1 alternately; the host fills one block while the device works on
 * the other, and a slot's block comes back (wait, collect) before the slot
 * takes the next one. Interrupts are checked between blocks. */
typedef struct {
  void *ctx;
  int (*wait)(void *ctx, int s);
  void (*collect)(void *ctx, int s, int row0, int nb);
  /* fill slot s with rows row0 .. row0 + nb - 1 (nnz sparse entries) and start it */
  int (*launch)(void *ctx, int s, int row0, int nb, int nnz);
} gpu_blocks_t;

static int gpu_blocks_run(const gpu_blocks_t *b, const hb_input_t *in, const csr_t *csr, int brow, int bnnz) {
  const int nrow = in->nrow;
  int st = HB_OK, row0[2] = {0, 0}, nrows[2] = {0, 0}, next = 0;
  for (int s = 0; st == HB_OK && (next < nrow || nrows[0] > 0 || nrows[1] > 0); s ^= 1) {
    if (nrows[s] > 0) {
      st = b->wait(b->ctx, s);
      if (st == HB_OK) b->collect(b->ctx, s, row0[s], nrows[s]);
      nrows[s] = 0;
      if (st == HB_OK && next < nrow) st = hb_interrupt_check();
    }
    if (st == HB_OK && next < nrow) {
      int nb = nrow - next < brow ? nrow - next : brow;
      if (in->csc && csr->p[next + nb] - csr->p[next] > bnnz) {
        /* the most rows whose entries fit (one row always does: bnnz >= max_row_nnz) */
        int lo = 1, hi = nb;
        while (lo < hi) {
          const int mid = lo + (hi - lo + 1) / 2;
          if (csr->p[next + mid] - csr->p[next] <= bnnz) lo = mid;
          else hi = mid - 1;
        }
        nb = lo;
      }
      st = b->launch(b->ctx, s, next, nb, in->csc ? csr->p[next + nb] - csr->p[next] : 0);
      if (st == HB_OK) {
        row0[s] = next;
        nrows[s] = nb;
        next += nb;
      }
    }
  }
  return st;
}

/* A block's contributions (phi: nb rows of K (nfeat + 1), as the device
 * summed them) into out at rows i0 .., finished as contrib_rows finishes
 * hb_shap_rows': the bias entries the trees' expected values (bias[k],
 * summed in the CPU's order), a forest's division by its iterations, the
 * starting score added to the bias. */
static void gpu_shap_collect(const hb_model_t *m, const double *bias, const double *off, int t0, int t1, size_t N,
                             int nfeat, int i0, int nb, int nth, const double *phi, double *out) {
  (void)nth;
  const int K = m->trees_per_iter, rf = m->config.rf && t1 > t0;
  const size_t P = (size_t)nfeat + 1, width = (size_t)K * P;
  const int nt = (size_t)nb * width >= 4096 ? nth : 1;  /* no threads started for a few values */
  (void)nt;
HB_OMP(parallel for num_threads(nt) schedule(static))
  for (int r = 0; r < nb; r++) {
    const double *ph = phi + (size_t)r * width;
    const size_t i = (size_t)i0 + (size_t)r;
    for (int k = 0; k < K; k++) {
      for (size_t c = (size_t)k * P; c < (size_t)(k + 1) * P; c++) {
        double v = c == (size_t)k * P + (size_t)nfeat ? bias[k] : ph[c];
        if (rf) v /= (double)((t1 - t0) / K);
        if (c == (size_t)k * P + (size_t)nfeat) v += start_score(m->init_score, off, k, N, i);
        out[c * N + i] = v;
      }
    }
  }
}

/* contrib_gpu's blocks (gpu_blocks_run) */
typedef struct {
  const hb_model_t *m;
  const hb_input_t *in;
  const csr_t *csr;
  hb_cuda_shap_t *S;
  const double *bias;
  int t0, t1;
  size_t N;
  int nfeat, nth;
  hb_cuda_sslot_t slot[2];
  double *out;
} contrib_blocks_t;

static int contrib_wait(void *ctx, int s) { return hb_cuda_shap_wait(((contrib_blocks_t *)ctx)->S, s); }

static void contrib_collect(void *ctx, int s, int row0, int nb) {
  const contrib_blocks_t *c = ctx;
  gpu_shap_collect(c->m, c->bias, c->in->init_score, c->t0, c->t1, c->N, c->nfeat, row0, nb, c->nth, c->slot[s].phi,
                   c->out);
}

static int contrib_launch(void *ctx, int s, int row0, int nb, int nnz) {
  const contrib_blocks_t *c = ctx;
  /* the rows as predict_gpu sends them (no offsets: the host adds them) */
  hb_cuda_pslot_t up;
  memset(&up, 0, sizeof up);
  up.x = c->slot[s].x;
  up.p = c->slot[s].p;
  up.j = c->slot[s].j;
  up.v = c->slot[s].v;
  gpu_fill(c->in, c->csr, row0, nb, c->m->trees_per_iter, c->nth, &up);
  return hb_cuda_shap_launch(c->S, s, nb, nnz);
}

/* Contributions on the GPU, the same as the CPU's bit for bit: expected
 * values and leaf paths from the CPU's hb_shap_prepare, the trees flattened
 * once, then blocks of rows through two slots (as predict_gpu), the device
 * summing each tree's leaf paths and adding the trees up as hb_shap_rows
 * does. */
static int contrib_gpu(const hb_model_t *m, const hb_input_t *in, int t0, int t1, int nth, double *out) {
  const int nrow = in->nrow, K = m->trees_per_iter, nfeat = in->ncol;
  const size_t N = (size_t)nrow;
  csr_t csr;
  memset(&csr, 0, sizeof csr);
  int max_row_nnz = 0;
  if (in->csc) {
    int st = csc_to_csr(in->csc, nrow, nfeat, &csr);
    if (st) return st;
    for (int i = 0; i < nrow; i++)
      if (csr.p[i + 1] - csr.p[i] > max_row_nnz) max_row_nnz = csr.p[i + 1] - csr.p[i];
  }
  hb_shap_t s;
  int st = hb_shap_prepare(m->trees, t0, t1, 1, &s);
  if (st) {
    csr_free(&csr);
    return st;
  }
  /* the trees' expected values per class, added in the order hb_shap_rows adds them */
  double *bias = hb_calloc((size_t)K, sizeof(double));
  if (!bias) {
    hb_shap_free(&s);
    csr_free(&csr);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for contribution buffers");
  }
  for (int t = t0; t < t1; t++) bias[t % K] += s.expected[t - t0];
  /* a block holds about SHAP_GPU_BLOCK_WORK steps of TreeSHAP (seconds of
   * work at most, so interrupts come between blocks), and at least
   * SHAP_GPU_MIN_ROWS rows (enough threads to fill a GPU) */
  long long row_work = 0;
  for (int t = t0; t < t1; t++) {
    const long long d1 = tree_depth(m->trees[t]) + 1;
    row_work += (long long)m->trees[t]->num_leaves * d1 * d1;
  }
  const int cap = (int)group_units(row_work, SHAP_GPU_BLOCK_WORK, SHAP_GPU_MIN_ROWS, nrow);
  gpu_shap_forest_t g;
  st = gpu_shap_forest_build(m, &s, t0, t1, &g);
  hb_cuda_shap_t *S = NULL;
  if (st == HB_OK) {
    st = hb_cuda_shap_create(&g.f, cap, in->csc != NULL, in->csc ? (int64_t)csr.p[nrow] : 0, max_row_nnz, &S);
    gpu_shap_forest_free(&g);  /* the runner has its copy */
  }
  hb_shap_free(&s);
  if (st) {
    hb_free(bias);
    csr_free(&csr);
    return st;
  }
  contrib_blocks_t cb = {m, in, &csr, S, bias, t0, t1, N, nfeat, nth, {{0}}, out};
  st = hb_cuda_shap_buffers(S, 0, &cb.slot[0]);
  if (st == HB_OK) st = hb_cuda_shap_buffers(S, 1, &cb.slot[1]);
  if (st == HB_OK) {
    const gpu_blocks_t b = {&cb, contrib_wait, contrib_collect, contrib_launch};
    st = gpu_blocks_run(&b, in, &csr, hb_cuda_shap_block_rows(S), hb_cuda_shap_block_nnz(S));
  }
  hb_cuda_shap_free(S);  /* waits for anything still in flight */
  hb_free(bias);
  csr_free(&csr);
  return st;
}

/* predict_gpu's blocks (gpu_blocks_run) */
typedef struct {
  const hb_input_t *in;
  const csr_t *csr;
  hb_cuda_predictor_t *P;
  int objective, type, K, ntrees;
  size_t N;
  int nth;
  hb_cuda_pslot_t slot[2];
  double *out;
} predict_blocks_t;

static int predict_wait(void *ctx, int s) { return hb_cuda_predictor_wait(((predict_blocks_t *)ctx)->P, s); }

static void predict_collect(void *ctx, int s, int row0, int nb) {
  const predict_blocks_t *c = ctx;
  gpu_collect(c->objective, c->type, c->K, c->ntrees, c->N, row0, nb, c->nth, &c->slot[s], c->out);
}

static int predict_launch(void *ctx, int s, int row0, int nb, int nnz) {
  const predict_blocks_t *c = ctx;
  gpu_fill(c->in, c->csr, row0, nb, c->K, c->nth, &c->slot[s]);
  return hb_cuda_predictor_launch(c->P, s, nb, nnz);
}

/* Raw scores, responses or leaf indices on the GPU, the same as the CPU's:
 * the trees flattened once, then blocks of rows through two slots, the
 * host filling one block (and collecting the one before it) while the
 * device walks the other; interrupts checked between blocks. Sparse rows go
 * up as they are (CSR), so one-hot data of many columns is never densified. */
static int predict_gpu(const hb_model_t *m, const hb_input_t *in, int start_iter, int num_iter, int type,
                       int nthreads, double *out) {
  if (type == HB_PRED_INTERACTION)
    return hb_error_set(HB_ERR_INPUT, "interactions are computed on the CPU only: use device = \"cpu\"");
  const int nrow = in->nrow, K = m->trees_per_iter;
  if (nrow == 0) return HB_OK;
  const int t0 = start_iter * K, t1 = (start_iter + num_iter) * K, nth = hb_threads_use(nthreads);
  if (type == HB_PRED_CONTRIB) return contrib_gpu(m, in, t0, t1, nth, out);
  const size_t N = (size_t)nrow;
  csr_t csr;
  memset(&csr, 0, sizeof csr);
  int max_row_nnz = 0;
  if (in->csc) {
    int st = csc_to_csr(in->csc, nrow, in->ncol, &csr);
    if (st) return st;
    for (int i = 0; i < nrow; i++)
      if (csr.p[i + 1] - csr.p[i] > max_row_nnz) max_row_nnz = csr.p[i + 1] - csr.p[i];
  }
  gpu_forest_t g;
  int st = gpu_forest_build(m, t0, t1, m->config.rf ? num_iter : 0, &g);
  if (st) {
    csr_free(&csr);
    return st;
  }
  hb_cuda_predictor_t *P = NULL;
  st = hb_cuda_predictor_create(&g.f, nrow, type == HB_PRED_LEAF, in->init_score != NULL, in->csc != NULL,
                                in->csc ? (int64_t)csr.p[nrow] : 0, max_row_nnz, &P);
  gpu_forest_free(&g);  /* the predictor has its copy */
  if (st) {
    csr_free(&csr);
    return st;
  }
  predict_blocks_t pb = {in, &csr, P, m->config.objective, type, K, t1 - t0, N, nth, {{0}}, out};
  st = hb_cuda_predictor_buffers(P, 0, &pb.slot[0]);
  if (st == HB_OK) st = hb_cuda_predictor_buffers(P, 1, &pb.slot[1]);
  if (st == HB_OK) {
    const gpu_blocks_t b = {&pb, predict_wait, predict_collect, predict_launch};
    st = gpu_blocks_run(&b, in, &csr, hb_cuda_predictor_block_rows(P), hb_cuda_predictor_block_nnz(P));
  }
  hb_cuda_predictor_free(P);  /* waits for anything still in flight */
  csr_free(&csr);
  return st;
}

/* hb_predict on a device (predict.h). */
int hb_predict_device(const hb_model_t *m, const hb_input_t *in, int start_iter, int num_iter, int type,
                      int nthreads, int device, double *out) {
  if (device == HB_DEVICE_CPU) return hb_predict(m, in, start_iter, num_iter, type, nthreads, out);
  if (device != HB_DEVICE_CUDA) return hb_error_set(HB_ERR_INPUT, "device code %d is unknown", device);
  int st = predict_check(m, in, start_iter, &num_iter, type, out);
  if (st) return st;
  return predict_gpu(m, in, start_iter, num_iter, type, nthreads, out);
}
