/* test_predict_gpu.c: the host side of GPU prediction (predict.c's
 * predict_gpu: the trees flattened, rows in blocks through two slots, dense
 * columns and CSR rows, offsets, the link, leaf indices) against the CPU's
 * hb_predict, bit for bit, on random trees with NaN, infinities, factor
 * codes and categorical bitsets of several words. No GPU here: this file
 * defines cuda.h's hb_cuda_predictor_* as a host emulation of
 * cuda/predict.cu (the same walk through tree_rules.h, the same sums, the
 * same CSR lookup), with tiny blocks, so that the engine's block loop, the
 * cutting of sparse blocks by their entries and the slot hand-over are all
 * exercised. The emulation computes a block only when the engine waits for
 * it, and hands out buffers full of garbage, so an engine that reads results
 * early, touches a slot in flight or relies on zeroed buffers fails here.
 * (Its symbols replace the stub's, so it defines every function of
 * cuda_stub.c that predict.c calls: the contributions' runner answers "not
 * emulated here", test_shap_gpu.c emulates it; this test must not pull in
 * the booster.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../src/cuda/cuda.h"
#include "error.h"
#include "model.h"
#include "predict.h"
#include "tree.h"
#include "tree_rules.h"
#include "test_check.h"

/* ---- the emulated device ---- */

struct hb_cuda_predictor {
  hb_cuda_forest_t f;
  hb_cuda_pnode_t *nodes;
  hb_cuda_ptree_t *trees;
  double *lv, *init;
  uint32_t *cat;
  int leaf, has_off, sparse, block, block_nnz;
  int busy[2], nb[2], nnz[2];
  hb_cuda_pslot_t slot[2];
};

static int emu_block_rows = 7;   /* set by the tests */
static int emu_nnz_slack = 3;    /* block_nnz = max_row_nnz + this */
static int emu_launches = 0, emu_max_nnz_seen = 0;

static void *garbage(size_t bytes) {
  void *p = malloc(bytes > 0 ? bytes : 1);
  if (p) memset(p, 0xA5, bytes > 0 ? bytes : 1);
  return p;
}

void hb_cuda_predictor_free(hb_cuda_predictor_t *P) {
  if (!P) return;
  free(P->nodes);
  free(P->trees);
  free(P->lv);
  free(P->init);
  free(P->cat);
  for (int s = 0; s < 2; s++) {
    free(P->slot[s].x);
    free(P->slot[s].p);
    free(P->slot[s].j);
    free(P->slot[s].v);
    free(P->slot[s].off);
    free(P->slot[s].raw);
    free(P->slot[s].leaf);
  }
  free(P);
}

int hb_cuda_predictor_create(const hb_cuda_forest_t *f, int nrow, int leaf, int has_offset, int sparse, int64_t nnz,
                             int max_row_nnz, hb_cuda_predictor_t **out) {
  *out = NULL;
  if (!f || nrow < 1 || f->num_class < 1 || f->ntrees % f->num_class != 0 || nnz < 0 || max_row_nnz < 0)
    return hb_error_set(HB_ERR_INTERNAL, "emulated GPU: bad forest or rows");
  hb_cuda_predictor_t *P = calloc(1, sizeof *P);
  if (!P) return HB_ERR_NOMEM;
  P->f = *f;
  P->nodes = garbage(sizeof(hb_cuda_pnode_t) * (size_t)f->nnodes);
  P->trees = garbage(sizeof(hb_cuda_ptree_t) * (size_t)f->ntrees);
  P->lv = garbage(sizeof(double) * (size_t)f->nleaves);
  P->cat = garbage(sizeof(uint32_t) * (size_t)f->ncat_words);
  P->init = f->init_score ? garbage(sizeof(double) * (size_t)f->num_class) : NULL;
  if (f->nnodes) memcpy(P->nodes, f->nodes, sizeof(hb_cuda_pnode_t) * (size_t)f->nnodes);
  if (f->ntrees) memcpy(P->trees, f->trees, sizeof(hb_cuda_ptree_t) * (size_t)f->ntrees);
  if (f->nleaves) memcpy(P->lv, f->leaf_value, sizeof(double) * (size_t)f->nleaves);
  if (f->ncat_words) memcpy(P->cat, f->cat_bits, sizeof(uint32_t) * (size_t)f->ncat_words);
  if (P->init) memcpy(P->init, f->init_score, sizeof(double) * (size_t)f->num_class);
  /* what the caller handed over is a copy: the device never reads f again */
  P->f.nodes = NULL;
  P->f.trees = NULL;
  P->f.leaf_value = NULL;
  P->f.cat_bits = NULL;
  P->f.init_score = NULL;
  P->leaf = leaf;
  P->has_off = has_offset;
  P->sparse = sparse;
  P->block = emu_block_rows < nrow ? emu_block_rows : nrow;
  P->block_nnz = sparse ? (max_row_nnz > 0 ? max_row_nnz : 1) + emu_nnz_slack : 0;
  const size_t B = (size_t)P->block, K = (size_t)f->num_class, F = (size_t)f->nfeat, T = (size_t)f->ntrees;
  for (int s = 0; s < 2; s++) {
    hb_cuda_pslot_t *b = &P->slot[s];
    if (sparse) {
      b->p = garbage(sizeof(int) * (B + 1));
      b->j = garbage(sizeof(int) * (size_t)P->block_nnz);
      b->v = garbage(sizeof(double) * (size_t)P->block_nnz);
    } else {
      b->x = garbage(sizeof(double) * B * F);
    }
    if (has_offset) b->off = garbage(sizeof(double) * B * K);
    if (leaf)
      b->leaf = garbage(sizeof(int) * B * T);
    else
      b->raw = garbage(sizeof(double) * B * K);
  }
  *out = P;
  return HB_OK;
}

int hb_cuda_predictor_block_rows(const hb_cuda_predictor_t *P) { return P->block; }
int hb_cuda_predictor_block_nnz(const hb_cuda_predictor_t *P) { return P->block_nnz; }

int hb_cuda_predictor_buffers(hb_cuda_predictor_t *P, int s, hb_cuda_pslot_t *out) {
  *out = P->slot[s];
  return HB_OK;
}

int hb_cuda_predictor_launch(hb_cuda_predictor_t *P, int s, int nb, int nnz) {
  if (s < 0 || s > 1 || nb < 1 || nb > P->block || P->busy[s] || (P->sparse && (nnz < 0 || nnz > P->block_nnz)))
    return hb_error_set(HB_ERR_INTERNAL, "emulated GPU: slot %d cannot take %d rows and %d entries", s, nb, nnz);
  P->busy[s] = 1;
  P->nb[s] = nb;
  P->nnz[s] = nnz;
  emu_launches++;
  if (nnz > emu_max_nnz_seen) emu_max_nnz_seen = nnz;
  return HB_OK;
}

/* cuda/predict.cu's walk_tree, predict_row and the CSR lookup, for the host */
static double emu_value(const hb_cuda_predictor_t *P, const hb_cuda_pslot_t *b, int nb, int r, int f) {
  if (!P->sparse) return b->x[(size_t)f * (size_t)nb + (size_t)r];
  const int e = b->p[r + 1];
  int lo = b->p[r], hi = e;
  while (lo < hi) {
    const int mid = lo + ((hi - lo) >> 1);
    if (b->j[mid] < f)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < e && b->j[lo] == f ? b->v[lo] : 0.0;
}

static int emu_walk(const hb_cuda_predictor_t *P, const hb_cuda_ptree_t *t, const hb_cuda_pslot_t *b, int nb, int r) {
  if (t->num_leaves <= 1) return 0;
  const hb_cuda_pnode_t *nd = P->nodes + t->node_first;
  int node = 0;
  while (node >= 0) {
    const hb_cuda_pnode_t *p = nd + node;
    const double v = emu_value(P, b, nb, r, p->feature);
    node = hb_rule_goes_left((unsigned)p->decision, p->threshold, P->cat, p->cat_begin, p->cat_nwords, v) ? p->child[0]
                                                                                                         : p->child[1];
  }
  return ~node;
}

int hb_cuda_predictor_wait(hb_cuda_predictor_t *P, int s) {
  if (!P->busy[s]) return HB_OK;
  P->busy[s] = 0;
  hb_cuda_pslot_t *b = &P->slot[s];
  const int nb = P->nb[s], K = P->f.num_class, T = P->f.ntrees;
  if (P->sparse && (b->p[0] != 0 || b->p[nb] != P->nnz[s]))
    return hb_error_set(HB_ERR_INTERNAL, "emulated GPU: CSR block of %d entries, p from %d to %d", P->nnz[s], b->p[0],
                        b->p[nb]);
  for (int r = 0; r < nb; r++) {
    if (P->leaf) {
      for (int j = 0; j < T; j++) b->leaf[(size_t)j * (size_t)nb + (size_t)r] = emu_walk(P, &P->trees[j], b, nb, r);
      continue;
    }
    for (int k = 0; k < K; k++) {
      const double start = (P->init ? P->init[k] : 0.0) + (b->off ? b->off[(size_t)k * (size_t)nb + (size_t)r] : 0.0);
      double acc = P->f.avg ? 0.0 : start;
      for (int j = k; j < T; j += K) acc += P->lv[P->trees[j].leaf_first + emu_walk(P, &P->trees[j], b, nb, r)];
      if (P->f.avg) acc = start + acc / (double)P->f.avg;
      b->raw[(size_t)k * (size_t)nb + (size_t)r] = acc;
    }
  }
  return HB_OK;
}

/* contributions: test_shap_gpu.c's (linked with cuda_stub.c's they would clash with the emulation above) */
int hb_cuda_shap_create(const hb_cuda_shap_forest_t *f, int nrow, int sparse, int64_t nnz, int max_row_nnz,
                        hb_cuda_shap_t **out) {
  (void)f; (void)nrow; (void)sparse; (void)nnz; (void)max_row_nnz;
  *out = NULL;
  return hb_error_set(HB_ERR_INPUT, "contributions are not emulated in this test");
}
void hb_cuda_shap_free(hb_cuda_shap_t *S) { (void)S; }
int hb_cuda_shap_block_rows(const hb_cuda_shap_t *S) { (void)S; return 1; }
int hb_cuda_shap_block_nnz(const hb_cuda_shap_t *S) { (void)S; return 0; }
int hb_cuda_shap_buffers(hb_cuda_shap_t *S, int s, hb_cuda_sslot_t *out) {
  (void)S; (void)s;
  memset(out, 0, sizeof *out);
  return HB_ERR_INTERNAL;
}
int hb_cuda_shap_launch(hb_cuda_shap_t *S, int s, int nb, int nnz) {
  (void)S; (void)s; (void)nb; (void)nnz;
  return HB_ERR_INTERNAL;
}
int hb_cuda_shap_wait(hb_cuda_shap_t *S, int s) {
  (void)S; (void)s;
  return HB_ERR_INTERNAL;
}

/* ---- random models and rows ---- */

static uint64_t rng_state = 88172645463325252ULL;
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

/* A random tree of L leaves, grown as hb_tree_split_leaf numbers them. */
static hb_tree_t *random_tree(int L) {
  hb_tree_t *t = hb_tree_create(L);
  if (!t) return NULL;
  int par[256], side[256];  /* each leaf's parent node and whether it is its left child */
  t->num_leaves = 1;
  t->leaf_depth[0] = 0;
  for (int i = 0; i < L - 1; i++) {
    const int l = (int)(rnd() % (uint64_t)t->num_leaves), nl = t->num_leaves;
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
    t->leaf_depth[nl] = ++t->leaf_depth[l];
    const int f = (int)(rnd() % NFEAT);
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
  for (int l = 0; l < L; l++) t->leaf_value[l] = 2.0 * unif() - 1.0;
  return t;
}

static hb_model_t *random_model(int K, int niter, int rf, int objective, int with_init) {
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
    const int L = (i % 5 == 4) ? 1 : 2 + (int)(rnd() % 40);  /* single-leaf trees too */
    hb_tree_t *t = random_tree(L);
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
  /* CSC: every nonzero value; a factor's NA or out-of-range code as NaN (missing, as dense_value reads it) */
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

/* hb_predict_device on the (emulated) GPU against hb_predict, bit for bit */
static void compare(const hb_model_t *m, const hb_input_t *in, int start, int num, int type, const char *what) {
  const int niter = hb_model_num_iterations(m), K = m->trees_per_iter;
  const int used = num > 0 ? num : niter - start;
  const size_t width = type == HB_PRED_LEAF ? (size_t)used * (size_t)K : (size_t)K;
  const size_t cells = width * (size_t)(in->nrow > 0 ? in->nrow : 1);
  double *a = malloc(sizeof(double) * cells), *b = malloc(sizeof(double) * cells);
  memset(a, 0, sizeof(double) * cells);
  memset(b, 0x5A, sizeof(double) * cells);
  int sa = hb_predict(m, in, start, num, type, 2, a);
  int sb = hb_predict_device(m, in, start, num, type, 2, HB_DEVICE_CUDA, b);
  CHECK(sa == HB_OK && sb == HB_OK, "%s: status %d / %d: %s", what, sa, sb, hb_error_message());
  if (sa == HB_OK && sb == HB_OK && in->nrow > 0) {
    size_t bad = 0;
    for (size_t c = 0; c < width * (size_t)in->nrow; c++)
      if (memcmp(&a[c], &b[c], sizeof(double)) != 0) bad++;
    CHECK(bad == 0, "%s: %zu of %zu values differ from the CPU's (first: %g vs %g)", what, bad,
          width * (size_t)in->nrow, a[0], b[0]);
  }
  free(a);
  free(b);
}

static void test_against_cpu(void) {
  const int objectives[] = {HB_OBJ_REGRESSION, HB_OBJ_BINARY, HB_OBJ_POISSON, HB_OBJ_MULTICLASS,
                            HB_OBJ_MULTICLASSOVA, HB_OBJ_XENTROPY};
  const int nobj = (int)(sizeof objectives / sizeof objectives[0]);
  const int sizes[] = {1, 6, 7, 8, 23, 150};
  char what[200];
  for (int o = 0; o < nobj; o++) {
    const int obj = objectives[o];
    const int K = (obj == HB_OBJ_MULTICLASS || obj == HB_OBJ_MULTICLASSOVA) ? 3 : 1;
    for (int rf = 0; rf <= 1; rf++) {
      hb_model_t *m = random_model(K, 6, rf, obj, (o + rf) % 2 == 0);
      CHECK(m != NULL, "model");
      if (!m) continue;
      for (int z = 0; z < (int)(sizeof sizes / sizeof sizes[0]); z++) {
        rows_t r;
        rows_make(&r, sizes[z], K);
        for (int blk = 1; blk <= 8; blk += 7) {  /* one row a block, or seven */
          emu_block_rows = blk;
          for (int sp = 0; sp <= 1; sp++) {
            hb_input_t in = sp ? r.sparse : r.dense;
            const int windows[][2] = {{0, 0}, {0, 2}, {2, 3}, {5, 1}, {6, 0}};
            for (int w = 0; w < 5; w++) {
              for (int type = HB_PRED_RAW; type <= HB_PRED_LEAF; type++) {
                snprintf(what, sizeof what, "objective %d, rf %d, %d rows, block %d, %s, window %d+%d, type %d", obj,
                         rf, sizes[z], blk, sp ? "sparse" : "dense", windows[w][0], windows[w][1], type);
                compare(m, &in, windows[w][0], windows[w][1], type, what);
              }
            }
            /* offsets */
            in.init_score = r.off;
            in.init_score_ncol = K;
            for (int type = HB_PRED_RAW; type <= HB_PRED_RESPONSE; type++) {
              snprintf(what, sizeof what, "objective %d, rf %d, %d rows, block %d, %s, offsets, type %d", obj, rf,
                       sizes[z], blk, sp ? "sparse" : "dense", type);
              compare(m, &in, 1, 4, type, what);
            }
          }
        }
        rows_free(&r);
      }
      hb_model_free(m);
    }
  }
  emu_block_rows = 7;
}

/* sparse blocks are cut by their entries: rows of very different lengths */
static void test_sparse_cuts(void) {
  hb_model_t *m = random_model(1, 4, 0, HB_OBJ_REGRESSION, 1);
  rows_t r;
  rows_make(&r, 200, 1);
  emu_block_rows = 50;
  emu_nnz_slack = 0;
  emu_launches = 0;
  emu_max_nnz_seen = 0;
  compare(m, &r.sparse, 0, 0, HB_PRED_RAW, "sparse blocks cut by entries");
  /* 200 rows of up to 5 entries, blocks of 50 rows but at most 5 entries: more blocks than rows / 50 */
  CHECK(emu_launches > 4 && emu_max_nnz_seen <= 5, "%d blocks, at most %d entries", emu_launches, emu_max_nnz_seen);
  emu_nnz_slack = 3;
  emu_block_rows = 7;
  rows_free(&r);
  hb_model_free(m);
}

/* what the GPU refuses, and the stub's own answer is tested in the R suite */
static void test_refusals(void) {
  hb_model_t *m = random_model(1, 2, 0, HB_OBJ_REGRESSION, 0);
  rows_t r;
  rows_make(&r, 10, 1);
  double out[10 * (NFEAT + 1) * (NFEAT + 1)];
  CHECK(hb_predict_device(m, &r.dense, 0, 0, HB_PRED_INTERACTION, 1, HB_DEVICE_CUDA, out) == HB_ERR_INPUT,
        "interactions are CPU-only");
  CHECK(hb_predict_device(m, &r.dense, 0, 0, HB_PRED_RAW, 1, 7, out) == HB_ERR_INPUT, "unknown device");
  CHECK(hb_predict_device(m, &r.dense, 3, 0, HB_PRED_RAW, 1, HB_DEVICE_CUDA, out) == HB_ERR_INPUT,
        "start beyond the iterations");
  rows_free(&r);
  hb_model_free(m);
}

int main(void) {
  test_against_cpu();
  test_sparse_cuts();
  test_refusals();
  printf("test_predict_gpu: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
