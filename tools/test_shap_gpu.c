/* test_shap_gpu.c: the host side of contributions on the GPU (predict.c's
 * contrib_gpu: expected values and leaf paths from hb_shap_prepare, the
 * trees flattened into cuda.h's hb_cuda_shap_forest_t with the lists that
 * add each feature's shares tree after tree, rows in blocks through two
 * slots, dense columns and CSR rows, the bias, offsets and a forest's
 * averaging added on the host) against the CPU's hb_predict(type contrib),
 * bit for bit, on random trees with NaN, infinities, factor codes,
 * categorical bitsets of several words, leaves no training row reached
 * (count 0) and chains as deep as their leaves allow. No GPU here: this file
 * defines cuda.h's hb_cuda_shap_* as a host emulation of cuda/shap.cu (its
 * two kernels: each tree's leaf paths for each row through shap_rules.h's
 * hb_shap_paths_tree into per-slot shares, then the shares summed by class
 * and feature in the listed order; the same CSR lookup), with tiny blocks,
 * so that the engine's block loop and the cutting of sparse blocks by their
 * entries are exercised. The emulation computes a block only when the
 * engine waits for it, hands out buffers full of garbage, and lays a
 * thread's path out as the device does (columns of a region of several
 * threads, with and without the sides by turns), each region in its own
 * allocation of exactly the size cuda/shap.cu gives it, so that
 * AddressSanitizer catches a path longer than max_path claims. (Its symbols
 * replace the stub's, so it also answers the predictor's calls, which
 * test_predict_gpu.c emulates; this test must not pull in the booster.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../src/cuda/cuda.h"
#include "error.h"
#include "model.h"
#include "predict.h"
#include "shap_rules.h"
#include "tree.h"
#include "test_check.h"

/* ---- the emulated device ---- */

struct hb_cuda_shap {
  hb_cuda_shap_forest_t f;  /* pointing at the copies below */
  hb_cuda_ptree_t *trees;
  int *slot_first, *split_feature, *cat_begin, *cat_nwords, *elem_slot, *cond, *sum_first, *sum_slot;
  double *threshold, *leaf_value, *elem_zero, *inv;
  int64_t *path_first, *cond_first;
  int *path_leaf, *path_share;
  uint8_t *decision;
  uint32_t *cat_bits;
  int sparse, block, block_nnz;
  int busy[2], nb[2], nnz[2];
  hb_cuda_sslot_t slot[2];
};

static int emu_block_rows = 7;   /* set by the tests */
static int emu_nnz_slack = 3;    /* block_nnz = max_row_nnz + this */
static int emu_launches = 0, emu_max_nnz_seen = 0, emu_max_path_seen = 0;

static void *garbage(size_t bytes) {
  void *p = malloc(bytes > 0 ? bytes : 1);
  if (p) memset(p, 0xA5, bytes > 0 ? bytes : 1);
  return p;
}

/* a copy of n elements of `size` bytes (garbage-filled when n is 0) */
static void *dup_of(const void *src, size_t n, size_t size) {
  void *p = garbage(n * size);
  if (p && n > 0) memcpy(p, src, n * size);
  return p;
}

void hb_cuda_shap_free(hb_cuda_shap_t *S) {
  if (!S) return;
  void *arr[] = {S->trees,     S->slot_first, S->split_feature, S->cat_begin, S->cat_nwords, S->elem_slot,
                 S->cond,      S->sum_first,  S->sum_slot,      S->threshold, S->leaf_value, S->elem_zero,
                 S->inv,       S->path_first, S->cond_first,    S->decision,  S->cat_bits,
                 S->path_leaf, S->path_share};
  for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++) free(arr[k]);
  for (int s = 0; s < 2; s++) {
    free(S->slot[s].x);
    free(S->slot[s].p);
    free(S->slot[s].j);
    free(S->slot[s].v);
    free(S->slot[s].phi);
  }
  free(S);
}

int hb_cuda_shap_create(const hb_cuda_shap_forest_t *f, int nrow, int sparse, int64_t nnz, int max_row_nnz,
                        hb_cuda_shap_t **out) {
  *out = NULL;
  if (!f || nrow < 1 || f->num_class < 1 || f->ntrees % f->num_class != 0 || f->max_path < 0 || f->max_nodes < 0 ||
      f->space != 0 || !f->inv || nnz < 0 || max_row_nnz < 0)
    return hb_error_set(HB_ERR_INTERNAL, "emulated GPU: bad forest or rows");
  hb_cuda_shap_t *S = calloc(1, sizeof *S);
  if (!S) return HB_ERR_NOMEM;
  const size_t NT = (size_t)f->ntrees, NN = (size_t)f->nnodes, NL = (size_t)f->nleaves, NE = (size_t)f->nelems,
               NC = (size_t)f->nconds, NQ = (size_t)f->nslots, NS = (size_t)f->num_class * (size_t)f->nfeat;
  S->trees = dup_of(f->trees, NT, sizeof(hb_cuda_ptree_t));
  S->slot_first = dup_of(f->slot_first, NT + 1, sizeof(int));
  S->split_feature = dup_of(f->split_feature, NN, sizeof(int));
  S->cat_begin = dup_of(f->cat_begin, NN, sizeof(int));
  S->cat_nwords = dup_of(f->cat_nwords, NN, sizeof(int));
  S->threshold = dup_of(f->threshold, NN, sizeof(double));
  S->decision = dup_of(f->decision, NN, sizeof(uint8_t));
  S->leaf_value = dup_of(f->leaf_value, NL, sizeof(double));
  S->path_first = dup_of(f->path_first, NL + 1, sizeof(int64_t));
  S->path_leaf = dup_of(f->path_leaf, NL, sizeof(int));
  S->path_share = dup_of(f->path_share, NL, sizeof(int));
  S->elem_slot = dup_of(f->elem_slot, NE, sizeof(int));
  S->elem_zero = dup_of(f->elem_zero, NE, sizeof(double));
  S->cond_first = dup_of(f->cond_first, NE + 1, sizeof(int64_t));
  S->cond = dup_of(f->cond, NC, sizeof(int));
  S->sum_first = dup_of(f->sum_first, NS + 1, sizeof(int));
  S->sum_slot = dup_of(f->sum_slot, NQ, sizeof(int));
  S->cat_bits = dup_of(f->cat_bits, (size_t)f->ncat_words, sizeof(uint32_t));
  S->inv = dup_of(f->inv, (size_t)f->max_path + 2, sizeof(double));
  /* what the caller handed over is a copy: the device never reads f's arrays again */
  S->f = *f;
  S->f.trees = S->trees;
  S->f.slot_first = S->slot_first;
  S->f.split_feature = S->split_feature;
  S->f.cat_begin = S->cat_begin;
  S->f.cat_nwords = S->cat_nwords;
  S->f.threshold = S->threshold;
  S->f.decision = S->decision;
  S->f.leaf_value = S->leaf_value;
  S->f.path_first = S->path_first;
  S->f.path_leaf = S->path_leaf;
  S->f.path_share = S->path_share;
  S->f.elem_slot = S->elem_slot;
  S->f.elem_zero = S->elem_zero;
  S->f.cond_first = S->cond_first;
  S->f.cond = S->cond;
  S->f.sum_first = S->sum_first;
  S->f.sum_slot = S->sum_slot;
  S->f.cat_bits = S->cat_bits;
  S->f.inv = S->inv;
  S->sparse = sparse;
  S->block = emu_block_rows < nrow ? emu_block_rows : nrow;
  S->block_nnz = sparse ? (max_row_nnz > 0 ? max_row_nnz : 1) + emu_nnz_slack : 0;
  const size_t B = (size_t)S->block, K = (size_t)f->num_class, F = (size_t)f->nfeat;
  for (int s = 0; s < 2; s++) {
    hb_cuda_sslot_t *b = &S->slot[s];
    if (sparse) {
      b->p = garbage(sizeof(int) * (B + 1));
      b->j = garbage(sizeof(int) * (size_t)S->block_nnz);
      b->v = garbage(sizeof(double) * (size_t)S->block_nnz);
    } else {
      b->x = garbage(sizeof(double) * B * F);
    }
    b->phi = garbage(sizeof(double) * B * K * (F + 1));
  }
  if (f->max_path > emu_max_path_seen) emu_max_path_seen = f->max_path;
  *out = S;
  return HB_OK;
}

int hb_cuda_shap_block_rows(const hb_cuda_shap_t *S) { return S->block; }
int hb_cuda_shap_block_nnz(const hb_cuda_shap_t *S) { return S->block_nnz; }

int hb_cuda_shap_buffers(hb_cuda_shap_t *S, int s, hb_cuda_sslot_t *out) {
  *out = S->slot[s];
  return HB_OK;
}

int hb_cuda_shap_launch(hb_cuda_shap_t *S, int s, int nb, int nnz) {
  if (s < 0 || s > 1 || nb < 1 || nb > S->block || S->busy[s] || (S->sparse && (nnz < 0 || nnz > S->block_nnz)))
    return hb_error_set(HB_ERR_INTERNAL, "emulated GPU: slot %d cannot take %d rows and %d entries", s, nb, nnz);
  S->busy[s] = 1;
  S->nb[s] = nb;
  S->nnz[s] = nnz;
  emu_launches++;
  if (nnz > emu_max_nnz_seen) emu_max_nnz_seen = nnz;
  return HB_OK;
}

/* cuda/shap.cu's k_shap_paths (a region of EMU_THREADS threads' columns,
 * the sides kept on odd launches only) and k_shap_sum, a row at a time */
#define EMU_THREADS 3
int hb_cuda_shap_wait(hb_cuda_shap_t *S, int s) {
  if (!S->busy[s]) return HB_OK;
  S->busy[s] = 0;
  hb_cuda_sslot_t *b = &S->slot[s];
  const hb_cuda_shap_forest_t *F = &S->f;
  const int nb = S->nb[s], K = F->num_class, nfeat = F->nfeat, sides = emu_launches % 2;
  if (S->sparse && (b->p[0] != 0 || b->p[nb] != S->nnz[s]))
    return hb_error_set(HB_ERR_INTERNAL, "emulated GPU: CSR block of %d entries, p from %d to %d", S->nnz[s], b->p[0],
                        b->p[nb]);
  const size_t P = (size_t)nfeat + 1, width = (size_t)K * P, n = EMU_THREADS, d1 = (size_t)F->max_path + 1,
               words = ((size_t)F->max_nodes + 31) / 32, NQ = (size_t)F->nslots;
  /* exactly the regions cuda/shap.cu lays out, each in its own allocation */
  double *w = garbage(sizeof(double) * d1 * n);
  uint32_t *bits = garbage(sizeof(uint32_t) * words * n);
  uint8_t *one = garbage(d1 * n);
  double *part = garbage(sizeof(double) * NQ * (size_t)nb);
  if (!w || !bits || !one || !part) {
    free(w);
    free(bits);
    free(one);
    free(part);
    return HB_ERR_NOMEM;
  }
  for (int r = 0; r < nb; r++) {
    const size_t g = (size_t)r % n;  /* the row's column in the region */
    hb_shap_xrow_t xr;
    if (!S->sparse) {
      xr.x = b->x + r;
      xr.xs = (size_t)nb;
      xr.j = NULL;
      xr.v = NULL;
      xr.b = xr.e = 0;
    } else {
      xr.x = NULL;
      xr.xs = 0;
      xr.j = b->j;
      xr.v = b->v;
      xr.b = b->p[r];
      xr.e = b->p[r + 1];
    }
    for (int t = 0; t < F->ntrees; t++) {
      const hb_cuda_ptree_t tr = F->trees[t];
      const int q0 = F->slot_first[t], nq = F->slot_first[t + 1] - q0;
      double *ph = part + (size_t)q0 * (size_t)nb + (size_t)r;
      for (int q = 0; q < nq; q++) ph[(size_t)q * (size_t)nb] = 0.0;
      if (tr.num_leaves <= 1) continue;
      hb_shap_paths_t pt;
      pt.num_leaves = tr.num_leaves;
      pt.split_feature = F->split_feature + tr.node_first;
      pt.cat_begin = F->cat_begin + tr.node_first;
      pt.cat_nwords = F->cat_nwords + tr.node_first;
      pt.threshold = F->threshold + tr.node_first;
      pt.decision = F->decision + tr.node_first;
      pt.cat_bits = F->cat_bits;
      pt.leaf_value = F->leaf_value + tr.leaf_first;
      pt.path_first = F->path_first + tr.leaf_first;
      pt.path_leaf = F->path_leaf + tr.leaf_first;
      pt.path_share = F->path_share + tr.leaf_first;
      pt.elem_slot = F->elem_slot;
      pt.elem_zero = F->elem_zero;
      pt.cond_first = F->cond_first;
      pt.cond = F->cond;
      if (sides) hb_shap_decide(&pt, &xr, tr.num_leaves - 1, bits + g, n);
      hb_shap_paths_tree(&pt, &xr, sides ? bits + g : NULL, n, F->inv, w + g, one + g, n, NULL, ph, (size_t)nb);
    }
  }
  for (int r = 0; r < nb; r++)
    for (size_t q = 0; q < width; q++) {
      const size_t k = q / P, f = q % P;
      double sum = 0.0;
      if (f < (size_t)nfeat)
        for (int e = F->sum_first[k * (size_t)nfeat + f]; e < F->sum_first[k * (size_t)nfeat + f + 1]; e++)
          sum += part[(size_t)F->sum_slot[e] * (size_t)nb + (size_t)r];
      b->phi[(size_t)r * width + q] = sum;
    }
  free(w);
  free(bits);
  free(one);
  free(part);
  return HB_OK;
}

/* the predictor: test_predict_gpu.c's (linked with cuda_stub.c's they would clash with the emulation above) */
int hb_cuda_predictor_create(const hb_cuda_forest_t *f, int nrow, int leaf, int has_offset, int sparse, int64_t nnz,
                             int max_row_nnz, hb_cuda_predictor_t **out) {
  (void)f; (void)nrow; (void)leaf; (void)has_offset; (void)sparse; (void)nnz; (void)max_row_nnz;
  *out = NULL;
  return hb_error_set(HB_ERR_INPUT, "prediction is not emulated in this test");
}
void hb_cuda_predictor_free(hb_cuda_predictor_t *P) { (void)P; }
int hb_cuda_predictor_block_rows(const hb_cuda_predictor_t *P) { (void)P; return 1; }
int hb_cuda_predictor_block_nnz(const hb_cuda_predictor_t *P) { (void)P; return 0; }
int hb_cuda_predictor_buffers(hb_cuda_predictor_t *P, int s, hb_cuda_pslot_t *out) {
  (void)P; (void)s;
  memset(out, 0, sizeof *out);
  return HB_ERR_INTERNAL;
}
int hb_cuda_predictor_launch(hb_cuda_predictor_t *P, int s, int nb, int nnz) {
  (void)P; (void)s; (void)nb; (void)nnz;
  return HB_ERR_INTERNAL;
}
int hb_cuda_predictor_wait(hb_cuda_predictor_t *P, int s) {
  (void)P; (void)s;
  return HB_ERR_INTERNAL;
}

/* ---- random models and rows ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static double unif(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

#define NFEAT 5
/* features 3 and 4 are factors of 40 and 5 levels: bitsets of two words and one */
static const int feat_levels[NFEAT] = {0, 0, 0, 40, 5};

/* A random tree of L leaves, grown as hb_tree_split_leaf numbers them; with
 * chain, each split splits the newest leaf (a tree L - 1 deep). Leaf counts
 * 0 .. 20, some zero (a branch no training row reached), leaf 0 at least 1. */
static hb_tree_t *random_tree(int L, int chain) {
  hb_tree_t *t = hb_tree_create(L);
  if (!t) return NULL;
  int par[256], side[256];  /* each leaf's parent node and whether it is its left child */
  t->num_leaves = 1;
  t->leaf_depth[0] = 0;
  t->leaf_parent[0] = -1;
  for (int i = 0; i < L - 1; i++) {
    const int nl = t->num_leaves, l = chain ? nl - 1 : (int)(rnd() % (uint64_t)nl);
    if (i > 0) {
      if (side[l])
        t->left[par[l]] = i;
      else
        t->right[par[l]] = i;
    }
    t->left[i] = ~l;
    t->right[i] = ~nl;
    par[l] = i;
    side[l] = 1;
    par[nl] = i;
    side[nl] = 0;
    t->leaf_parent[l] = t->leaf_parent[nl] = i;
    t->leaf_depth[nl] = ++t->leaf_depth[l];
    /* chains reuse few features, so that the walk unwinds a feature met again */
    const int f = chain ? (int)(rnd() % 3) : (int)(rnd() % NFEAT);
    t->split_feature[i] = f;
    uint8_t dec = (rnd() & 1) ? HB_DECISION_DEFAULT_LEFT : 0;
    if (feat_levels[f]) {
      dec |= HB_DECISION_CATEGORICAL;
      const int nw = (feat_levels[f] + 31) / 32;
      uint32_t bits[2] = {(uint32_t)rnd(), (uint32_t)rnd()};
      const int at = hb_tree_add_cat_bits(t, bits, nw);
      if (at < 0) {
        hb_tree_free(t);
        return NULL;
      }
      t->cat_begin[i] = at;
      t->cat_nwords[i] = nw;
    } else {
      t->threshold[i] = (rnd() % 4 == 0) ? 0.0 : 3.0 * unif() - 1.5;  /* zero thresholds: sparse zeros on the edge */
    }
    t->decision[i] = dec;
    t->num_leaves++;
  }
  for (int l = 0; l < L; l++) {
    t->leaf_value[l] = 2.0 * unif() - 1.0;
    t->leaf_count[l] = rnd() % 5 == 0 ? 0 : 1 + (int)(rnd() % 20);
  }
  if (t->leaf_count[0] == 0) t->leaf_count[0] = 1;
  return t;
}

static hb_model_t *random_model(int K, int niter, int rf, int objective, int with_init, int chain) {
  hb_model_t *m = hb_model_create();
  if (!m) return NULL;
  m->num_class = m->trees_per_iter = K;
  m->schema.nfeat = NFEAT;
  m->config.rf = rf;
  m->config.objective = objective;
  if (with_init) {
    m->init_score = hb_malloc(sizeof(double) * (size_t)K);
    for (int k = 0; m->init_score && k < K; k++) m->init_score[k] = unif() - 0.5;
  }
  for (int i = 0; i < niter * K; i++) {
    /* single-leaf trees too; chains up to 70 deep */
    const int L = (i % 5 == 4) ? 1 : chain ? 2 + (int)(rnd() % 70) : 2 + (int)(rnd() % 40);
    hb_tree_t *t = random_tree(L, chain);
    if (!t || hb_model_push_tree(m, t) != HB_OK) {
      hb_tree_free(t);
      hb_model_free(m);
      return NULL;
    }
  }
  return m;
}

/* Rows: numeric columns with NaN, infinities and exact zeros; factor codes
 * with NA, codes beyond the levels and beyond the bitsets. Dense columns
 * and the same values as a CSC matrix (factors as their codes; zeros and
 * NA codes left out of it, as NaN stored). */
typedef struct {
  int n;
  double *num[3];
  int *codes[2];
  hb_column_t cols[NFEAT];
  hb_input_t dense, sparse;
  hb_csc_t csc;
  int *cp, *ci;
  double *cx;
  double *off;
} rows_t;

static void rows_free(rows_t *r) {
  for (int f = 0; f < 3; f++) free(r->num[f]);
  for (int f = 0; f < 2; f++) free(r->codes[f]);
  free(r->cp);
  free(r->ci);
  free(r->cx);
  free(r->off);
}

static void rows_make(rows_t *r, int n, int K) {
  memset(r, 0, sizeof *r);
  r->n = n;
  for (int f = 0; f < 3; f++) {
    r->num[f] = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
      const uint64_t u = rnd() % 20;
      r->num[f][i] = u == 0 ? NAN : u == 1 ? INFINITY : u == 2 ? -INFINITY : u < 8 ? 0.0 : 3.0 * unif() - 1.5;
    }
    r->cols[f].type = HB_COL_DOUBLE;
    r->cols[f].dbl = r->num[f];
  }
  for (int c = 0; c < 2; c++) {
    const int nl = feat_levels[3 + c];
    r->codes[c] = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
      const uint64_t u = rnd() % 20;
      r->codes[c][i] = u == 0 ? HB_NA_INT : u == 1 ? nl + 1 + (int)(rnd() % 70) : 1 + (int)(rnd() % (uint64_t)nl);
    }
    r->cols[3 + c].type = HB_COL_FACTOR;
    r->cols[3 + c].i32 = r->codes[c];
    r->cols[3 + c].nlevels = nl;
  }
  r->dense.nrow = r->sparse.nrow = n;
  r->dense.ncol = r->sparse.ncol = NFEAT;
  r->dense.cols = r->cols;
  r->cp = calloc(NFEAT + 1, sizeof(int));
  r->ci = malloc(sizeof(int) * (size_t)(NFEAT * n + 1));
  r->cx = malloc(sizeof(double) * (size_t)(NFEAT * n + 1));
  int e = 0;
  for (int f = 0; f < NFEAT; f++) {
    for (int i = 0; i < n; i++) {
      double v;
      if (f < 3) {
        v = r->num[f][i];
      } else {
        const int c = r->codes[f - 3][i];
        v = (c < 1 || c > feat_levels[f]) ? NAN : (double)c;
      }
      if (v == 0.0) continue;
      r->ci[e] = i;
      r->cx[e++] = v;
    }
    r->cp[f + 1] = e;
  }
  r->csc.p = r->cp;
  r->csc.i = r->ci;
  r->csc.x = r->cx;
  r->sparse.csc = &r->csc;
  r->off = malloc(sizeof(double) * (size_t)(n * K > 0 ? n * K : 1));
  for (int i = 0; i < n * K; i++) r->off[i] = unif() - 0.5;
}

/* hb_predict_device(contrib) on the (emulated) GPU against hb_predict,
 * bit for bit; and each row's contributions sum to its raw score */
static void compare(const hb_model_t *m, const hb_input_t *in, int start, int num, const char *what) {
  const int K = m->trees_per_iter;
  const size_t P = NFEAT + 1, width = (size_t)K * P, N = (size_t)in->nrow;
  const size_t cells = width * (N > 0 ? N : 1);
  double *a = malloc(sizeof(double) * cells), *b = malloc(sizeof(double) * cells),
         *raw = malloc(sizeof(double) * (size_t)K * (N > 0 ? N : 1));
  memset(a, 0, sizeof(double) * cells);
  memset(b, 0x5A, sizeof(double) * cells);
  int sa = hb_predict(m, in, start, num, HB_PRED_CONTRIB, 2, a);
  int sb = hb_predict_device(m, in, start, num, HB_PRED_CONTRIB, 2, HB_DEVICE_CUDA, b);
  int sr = hb_predict(m, in, start, num, HB_PRED_RAW, 2, raw);
  CHECK(sa == HB_OK && sb == HB_OK && sr == HB_OK, "%s: status %d / %d / %d: %s", what, sa, sb, sr,
        hb_error_message());
  if (sa == HB_OK && sb == HB_OK && sr == HB_OK && N > 0) {
    size_t bad = 0, off_sum = 0;
    for (size_t c = 0; c < cells; c++)
      if (memcmp(&a[c], &b[c], sizeof(double)) != 0) bad++;
    CHECK(bad == 0, "%s: %zu of %zu values differ from the CPU's (first: %g vs %g)", what, bad, cells, a[0], b[0]);
    /* local accuracy (an independent check that both are contributions): bias + sum(phi) = raw */
    for (size_t i = 0; i < N; i++)
      for (int k = 0; k < K; k++) {
        double sum = 0;
        for (size_t c = 0; c < P; c++) sum += b[((size_t)k * P + c) * N + i];
        const double want = raw[(size_t)k * N + i];
        if (!(fabs(sum - want) <= 1e-9 * (1.0 + fabs(want)))) off_sum++;
      }
    CHECK(off_sum == 0, "%s: %zu rows' contributions do not sum to their raw scores", what, off_sum);
  }
  free(a);
  free(b);
  free(raw);
}

static void test_against_cpu(void) {
  const int objectives[] = {HB_OBJ_REGRESSION, HB_OBJ_BINARY, HB_OBJ_MULTICLASS};
  const int sizes[] = {1, 6, 8, 23, 120};
  char what[200];
  for (int o = 0; o < 3; o++) {
    const int obj = objectives[o];
    const int K = obj == HB_OBJ_MULTICLASS ? 3 : 1;
    for (int rf = 0; rf <= 1; rf++) {
      for (int chain = 0; chain <= 1; chain++) {
        hb_model_t *m = random_model(K, 6, rf, obj, (o + rf) % 2 == 0, chain);
        CHECK(m != NULL, "model");
        if (!m) continue;
        for (int z = 0; z < (int)(sizeof sizes / sizeof sizes[0]); z++) {
          rows_t r;
          rows_make(&r, sizes[z], K);
          for (int blk = 1; blk <= 8; blk += 7) {  /* one row a block, or eight */
            emu_block_rows = blk;
            for (int sp = 0; sp <= 1; sp++) {
              hb_input_t in = sp ? r.sparse : r.dense;
              const int windows[][2] = {{0, 0}, {0, 2}, {2, 3}, {5, 1}};
              for (int w = 0; w < 4; w++) {
                snprintf(what, sizeof what, "objective %d, rf %d, chain %d, %d rows, block %d, %s, window %d+%d", obj,
                         rf, chain, sizes[z], blk, sp ? "sparse" : "dense", windows[w][0], windows[w][1]);
                compare(m, &in, windows[w][0], windows[w][1], what);
              }
              in.init_score = r.off;  /* offsets, added to the bias */
              in.init_score_ncol = K;
              snprintf(what, sizeof what, "objective %d, rf %d, chain %d, %d rows, block %d, %s, offsets", obj, rf,
                       chain, sizes[z], blk, sp ? "sparse" : "dense");
              compare(m, &in, 1, 4, what);
            }
          }
          rows_free(&r);
        }
        hb_model_free(m);
      }
    }
  }
  CHECK(emu_max_path_seen == NFEAT, "paths reached %d of the %d features only", emu_max_path_seen, NFEAT);
  emu_block_rows = 7;
}

/* sparse blocks are cut by their entries: rows of very different lengths */
static void test_sparse_cuts(void) {
  hb_model_t *m = random_model(1, 4, 0, HB_OBJ_REGRESSION, 1, 0);
  rows_t r;
  rows_make(&r, 200, 1);
  emu_block_rows = 50;
  emu_nnz_slack = 0;
  emu_launches = 0;
  emu_max_nnz_seen = 0;
  compare(m, &r.sparse, 0, 0, "sparse blocks cut by entries");
  /* 200 rows of up to 5 entries, blocks of 50 rows but at most 5 entries: more blocks than rows / 50 */
  CHECK(emu_launches > 4 && emu_max_nnz_seen <= 5, "%d blocks, at most %d entries", emu_launches, emu_max_nnz_seen);
  emu_nnz_slack = 3;
  emu_block_rows = 7;
  rows_free(&r);
  hb_model_free(m);
}

/* what the GPU refuses as the CPU does, and what stays CPU-only */
static void test_refusals(void) {
  hb_model_t *m = random_model(1, 2, 0, HB_OBJ_REGRESSION, 0, 0);
  rows_t r;
  rows_make(&r, 10, 1);
  double out[10 * (NFEAT + 1) * (NFEAT + 1)];
  CHECK(hb_predict_device(m, &r.dense, 0, 0, HB_PRED_INTERACTION, 1, HB_DEVICE_CUDA, out) == HB_ERR_INPUT,
        "interactions are CPU-only");
  CHECK(hb_predict_device(m, &r.dense, 3, 0, HB_PRED_CONTRIB, 1, HB_DEVICE_CUDA, out) == HB_ERR_INPUT,
        "start beyond the iterations");
  /* a tree without leaf counts (a model text without them): the CPU's error, before any device work */
  hb_tree_t *t = m->trees[0];
  int saved[64];
  for (int l = 0; l < t->num_leaves && l < 64; l++) {
    saved[l] = t->leaf_count[l];
    t->leaf_count[l] = 0;
  }
  emu_launches = 0;
  const int sc = hb_predict(m, &r.dense, 0, 0, HB_PRED_CONTRIB, 1, out);
  const int sg = hb_predict_device(m, &r.dense, 0, 0, HB_PRED_CONTRIB, 1, HB_DEVICE_CUDA, out);
  CHECK(t->num_leaves <= 1 || (sc == HB_ERR_INPUT && sg == HB_ERR_INPUT && emu_launches == 0),
        "no counts: CPU %d, GPU %d, %d launches", sc, sg, emu_launches);
  for (int l = 0; l < t->num_leaves && l < 64; l++) t->leaf_count[l] = saved[l];
  rows_free(&r);
  hb_model_free(m);
}

int main(void) {
  test_against_cpu();
  test_sparse_cuts();
  test_refusals();
  printf("test_shap_gpu: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
