// shap.cu: contributions (SHAP values) on the device (cuda.h's
// hb_cuda_shap_*). The engine (predict.c's contrib_gpu) computes the covers
// and expected values with the CPU's hb_shap_prepare, flattens the trees and
// fills blocks of rows; here the trees live in device memory for the whole
// call, and each block of rows goes up, through one thread a row that walks
// every tree in iteration order with the CPU's own TreeSHAP walk
// (engine/shap_rules.h), and back. A row's contributions are added in the
// order hb_shap_row adds them, with the same operations (this file is built
// with -fmad=false, like every .cu here, so no multiply-add is fused), so
// they are the CPU's bit for bit. The bias entries are left 0: the host
// fills them with the trees' expected values, the init score and offsets.
//
// Each thread's walk needs a path of (D + 1)(D + 2) / 2 steps, a stack of
// D entries (D + 2 are given) and leaf_shares' arrays (D the deepest leaf, up to
// num_leaves - 1): too much for registers or shared memory with deep trees,
// so they live in a device work space, one span per row of the block, sized
// by D when the runner is made. Every index into it is bounded by those
// sizes (shap_rules.h), whatever the row's values.
//
// Dense rows come column-major; sparse rows as CSR, a feature's value found
// by binary search among the row's increasing column indices (absent: 0.0,
// as the CPU's dense copy of the row reads it). Two slots (each a stream
// with its own pinned host and device buffers and work space) let the host
// fill and collect one block while the device works on the other.
#include <climits>
#include <cstdlib>
#include <cstring>
#include "learner.cuh"
extern "C" {
#include "shap_rules.h"
}

namespace {
constexpr int kShapThreads = 128;
// Bytes of one slot's buffers and work space a block aims at: the engine
// caps the rows by their work as well, so this bounds the memory only.
constexpr size_t kShapBlockBytes = (size_t)512 << 20;

// Bytes of one row's work space for trees of depth <= D: path, stack, leaf
// shares, each rounded to 16 bytes (so every part stays aligned for doubles
// and for the 8-byte fields of the path and stack records).
__host__ __device__ inline size_t round16(size_t b) { return (b + 15) / 16 * 16; }
__host__ __device__ inline size_t path_bytes(int D) {
  const size_t d = (size_t)(D > 0 ? D : 0);
  return round16(sizeof(hb_shap_step_t) * ((d + 1) * (d + 2) / 2));
}
__host__ __device__ inline size_t stack_bytes(int D) {
  return round16(sizeof(hb_shap_frame_t) * ((size_t)(D > 0 ? D : 0) + 2));
}
__host__ __device__ inline size_t span_bytes(int D) {
  return path_bytes(D) + stack_bytes(D) + round16(hb_shap_rule_work_bytes(D));
}

// The forest on the device: cuda.h's hb_cuda_shap_forest_t's arrays.
struct ShapForest {
  const hb_cuda_ptree_t *trees;
  const int *split_feature, *left, *right, *cat_begin, *cat_nwords, *leaf_count;
  const double *threshold, *cover, *leaf_value, *inv;
  const uint8_t *decision;
  const uint32_t *cat_bits;
  int ntrees, K, nfeat, max_depth;
};

// One thread a row of the block (nb rows): dense x column-major (x[f nb +
// r]) or sparse rows p, j, v; phi nb rows of K (nfeat + 1); work nb spans of
// span bytes.
__global__ void __launch_bounds__(kShapThreads)
k_shap(const ShapForest F, const double *__restrict__ x, const int *__restrict__ p, const int *__restrict__ j,
       const double *__restrict__ v, int nb, double *__restrict__ phi, char *__restrict__ work, size_t span) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nb) return;
  const size_t P = (size_t)F.nfeat + 1, width = (size_t)F.K * P;
  double *ph = phi + (size_t)r * width;
  for (size_t c = 0; c < width; c++) ph[c] = 0.0;
  char *wr = work + (size_t)r * span;
  hb_shap_step_t *path = (hb_shap_step_t *)wr;
  hb_shap_frame_t *stack = (hb_shap_frame_t *)(wr + path_bytes(F.max_depth));
  hb_shap_walk_t w;
  w.inv = F.inv;
  if (x) {
    w.x.x = x + r;
    w.x.xs = (size_t)nb;
    w.x.j = NULL;
    w.x.v = NULL;
    w.x.b = w.x.e = 0;
  } else {
    w.x.x = NULL;
    w.x.xs = 0;
    w.x.j = j;
    w.x.v = v;
    w.x.b = p[r];
    w.x.e = p[r + 1];
  }
  w.work = (double *)(wr + path_bytes(F.max_depth) + stack_bytes(F.max_depth));
  w.stride = (size_t)F.max_depth + 1;
  w.cond = 0;
  w.cfeat = -1;
  for (int t = 0; t < F.ntrees; t++) {  // hb_shap_row's order: tree after tree, class t % K
    const hb_cuda_ptree_t tr = F.trees[t];
    if (tr.num_leaves <= 1) continue;  // a lone leaf adds only its expected value (the host's)
    w.t.split_feature = F.split_feature + tr.node_first;
    w.t.left = F.left + tr.node_first;
    w.t.right = F.right + tr.node_first;
    w.t.cat_begin = F.cat_begin + tr.node_first;
    w.t.cat_nwords = F.cat_nwords + tr.node_first;
    w.t.threshold = F.threshold + tr.node_first;
    w.t.decision = F.decision + tr.node_first;
    w.t.cat_bits = F.cat_bits;
    w.t.cover = F.cover + tr.node_first;
    w.t.leaf_count = F.leaf_count + tr.leaf_first;
    w.t.leaf_value = F.leaf_value + tr.leaf_first;
    w.phi = ph + (size_t)(t % F.K) * P;
    hb_shap_walk_tree(&w, path, stack);
  }
}
}  // namespace

struct hb_cuda_shap {
  int nfeat, K, ntrees, max_depth, sparse, block, block_nnz;
  size_t span;
  // the forest's device arrays
  hb_cuda_ptree_t *d_trees;
  int *d_split_feature, *d_left, *d_right, *d_cat_begin, *d_cat_nwords, *d_leaf_count;
  double *d_threshold, *d_cover, *d_leaf_value, *d_inv;
  uint8_t *d_decision;
  uint32_t *d_cat_bits;
  cudaStream_t st[2];
  int busy[2];
  // per slot: device buffers and work space, and the pinned host twins
  double *d_x[2], *d_v[2], *d_phi[2];
  int *d_p[2], *d_j[2];
  char *d_work[2];
  double *h_x[2], *h_v[2], *h_phi[2];
  int *h_p[2], *h_j[2];
};

extern "C" void hb_cuda_shap_free(hb_cuda_shap_t *S) {
  if (!S) return;
  for (int s = 0; s < 2; s++)
    if (S->st[s]) cudaStreamSynchronize(S->st[s]);  // nothing is freed under a copy or kernel in flight
  void *dev[] = {S->d_trees,     S->d_split_feature, S->d_left,      S->d_right,      S->d_cat_begin,
                 S->d_cat_nwords, S->d_leaf_count,   S->d_threshold, S->d_cover,      S->d_leaf_value,
                 S->d_inv,        S->d_decision,     S->d_cat_bits};
  for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) cudaFree(dev[k]);
  for (int s = 0; s < 2; s++) {
    void *ds[] = {S->d_x[s], S->d_v[s], S->d_phi[s], S->d_p[s], S->d_j[s], S->d_work[s]};
    for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) cudaFree(ds[k]);
    void *hs[] = {S->h_x[s], S->h_v[s], S->h_phi[s], S->h_p[s], S->h_j[s]};
    for (size_t k = 0; k < sizeof hs / sizeof hs[0]; k++) cudaFreeHost(hs[k]);
    if (S->st[s]) cudaStreamDestroy(S->st[s]);
  }
  cudaGetLastError();  // a failure while freeing must not surface in the next call
  hb_free(S);
}

// device and pinned buffers of n elements (at least one, so that none is NULL)
#define SDALLOC(ptr, n) HB_CUDA_DALLOC1(ptr, n, "allocating device memory for contributions")
#define SHALLOC(ptr, n) HB_CUDA_HALLOC1(ptr, n, "allocating pinned memory for contributions")
// a forest array up: n elements, when there are any (src is then not NULL)
#define SUP(dst, src, n)                                                                                 \
  do {                                                                                                   \
    SDALLOC(dst, n);                                                                                     \
    if ((size_t)(n) > 0)                                                                                 \
      HB_CUDA_TRY_FAIL(cudaMemcpy((dst), (src), sizeof(*(dst)) * (size_t)(n), cudaMemcpyHostToDevice),             \
           "copying the trees to the GPU");                                                              \
  } while (0)

extern "C" int hb_cuda_shap_create(const hb_cuda_shap_forest_t *f, int nrow, int sparse, int64_t nnz,
                                   int max_row_nnz, hb_cuda_shap_t **out) {
  *out = NULL;
  if (!f || nrow < 1 || f->num_class < 1 || f->ntrees < 0 || f->nfeat < 0 || f->ntrees % f->num_class != 0 ||
      f->max_depth < 0 || f->nnodes < 0 || f->nleaves < 0 || f->ncat_words < 0 || !f->inv || nnz < 0 ||
      max_row_nnz < 0)
    return hb_error_set(HB_ERR_INTERNAL, "GPU contributions: bad forest or rows");
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  int st = HB_OK;
  size_t fr = 0, tot = 0;
  hb_cuda_shap_t *S = (hb_cuda_shap_t *)hb_calloc(1, sizeof *S);
  if (!S) return HB_ERR_NOMEM;
  S->nfeat = f->nfeat;
  S->K = f->num_class;
  S->ntrees = f->ntrees;
  S->max_depth = f->max_depth;
  S->sparse = sparse != 0;
  S->span = span_bytes(f->max_depth);
  {
    const size_t K = (size_t)S->K, F = (size_t)S->nfeat, T = (size_t)S->ntrees, NN = (size_t)f->nnodes,
                 NL = (size_t)f->nleaves, D2 = (size_t)f->max_depth + 2;
    // a row's bytes in one slot (dense values, or a sparse row's start;
    // contributions; work space), and a sparse entry's (column and value)
    const size_t row_bytes =
        (S->sparse ? sizeof(int) : sizeof(double) * F) + sizeof(double) * K * (F + 1) + S->span;
    const size_t entry_bytes = sizeof(int) + sizeof(double);
    const double forest_bytes = (double)sizeof(hb_cuda_ptree_t) * T +
                                (double)NN * (6 * sizeof(int) + 2 * sizeof(double) + sizeof(uint8_t)) +
                                (double)NL * (sizeof(int) + sizeof(double)) +
                                (double)sizeof(uint32_t) * f->ncat_words + (double)sizeof(double) * D2;
    HB_CUDA_TRY_FAIL(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
    // the trees and both slots' blocks within 90% of the free memory; a
    // slot's share is at most kShapBlockBytes, and at least one row (with
    // the entries of the longest sparse row)
    const double avail = 0.9 * (double)fr - forest_bytes;
    const double least =
        (double)row_bytes + (S->sparse ? (double)entry_bytes * (max_row_nnz > 0 ? max_row_nnz : 1) : 0);
    if (avail < 2.0 * least) {
      st = hb_error_set(HB_ERR_NOMEM,
                        "contributions on the GPU need at least %.0f MB (%.0f MB of them the trees, %.1f MB the "
                        "work space of a row's walks through trees %d deep), but %.0f MB of the GPU's %.0f MB are "
                        "free; use device = \"cpu\"",
                        (forest_bytes + 2.0 * least) / 1e6 + 0.5, forest_bytes / 1e6 + 0.5, (double)S->span / 1e6,
                        f->max_depth, (double)fr / 1e6, (double)tot / 1e6);
      goto fail;
    }
    double budget = avail / 2.0 < (double)kShapBlockBytes ? avail / 2.0 : (double)kShapBlockBytes;
    if (budget < least) budget = least;
    size_t cap = 0;
    if (S->sparse) {  // a quarter of the budget for entries, unless the rows have fewer
      double c = budget / 4.0 / (double)entry_bytes;
      if (c > (double)nnz) c = (double)nnz;
      if (c < (double)max_row_nnz) c = (double)max_row_nnz;
      if (c > (double)INT_MAX) c = (double)INT_MAX;
      cap = c >= 1.0 ? (size_t)c : 1;
      budget -= (double)(cap * entry_bytes);
    }
    double rows = budget / (double)row_bytes;
    if (rows > (double)nrow) rows = (double)nrow;
    const size_t B = rows >= 1.0 ? (size_t)rows : 1;
    S->block = (int)B;
    S->block_nnz = (int)cap;

    SUP(S->d_trees, f->trees, T);
    SUP(S->d_split_feature, f->split_feature, NN);
    SUP(S->d_left, f->left, NN);
    SUP(S->d_right, f->right, NN);
    SUP(S->d_cat_begin, f->cat_begin, NN);
    SUP(S->d_cat_nwords, f->cat_nwords, NN);
    SUP(S->d_threshold, f->threshold, NN);
    SUP(S->d_cover, f->cover, NN);
    SUP(S->d_decision, f->decision, NN);
    SUP(S->d_leaf_count, f->leaf_count, NL);
    SUP(S->d_leaf_value, f->leaf_value, NL);
    SUP(S->d_cat_bits, f->cat_bits, f->ncat_words);
    SUP(S->d_inv, f->inv, D2);
    for (int s = 0; s < 2; s++) {
      HB_CUDA_TRY_FAIL(cudaStreamCreateWithFlags(&S->st[s], cudaStreamNonBlocking), "creating a stream");
      if (S->sparse) {
        SDALLOC(S->d_p[s], B + 1);
        SHALLOC(S->h_p[s], B + 1);
        SDALLOC(S->d_j[s], cap);
        SHALLOC(S->h_j[s], cap);
        SDALLOC(S->d_v[s], cap);
        SHALLOC(S->h_v[s], cap);
      } else {
        SDALLOC(S->d_x[s], B * F);
        SHALLOC(S->h_x[s], B * F);
      }
      SDALLOC(S->d_phi[s], B * K * (F + 1));
      SHALLOC(S->h_phi[s], B * K * (F + 1));
      SDALLOC(S->d_work[s], B * S->span);
    }
    // The trees went up with cudaMemcpy from pageable memory on the legacy
    // default stream, which may return before the DMA has landed; the slots'
    // streams are non-blocking, so nothing orders their kernels after it.
    HB_CUDA_TRY_FAIL(cudaDeviceSynchronize(), "copying the trees to the GPU");
  }
  *out = S;
  return HB_OK;
fail:
  hb_cuda_shap_free(S);
  return st;
}
#undef SUP
#undef SHALLOC
#undef SDALLOC

extern "C" int hb_cuda_shap_block_rows(const hb_cuda_shap_t *S) { return S ? S->block : 1; }
extern "C" int hb_cuda_shap_block_nnz(const hb_cuda_shap_t *S) { return S ? S->block_nnz : 0; }

extern "C" int hb_cuda_shap_buffers(hb_cuda_shap_t *S, int s, hb_cuda_sslot_t *out) {
  memset(out, 0, sizeof *out);
  if (!S || s < 0 || s > 1) return hb_error_set(HB_ERR_INTERNAL, "GPU contributions: no slot %d", s);
  out->x = S->h_x[s];
  out->p = S->h_p[s];
  out->j = S->h_j[s];
  out->v = S->h_v[s];
  out->phi = S->h_phi[s];
  return HB_OK;
}

extern "C" int hb_cuda_shap_launch(hb_cuda_shap_t *S, int s, int nb, int nnz) {
  if (!S || s < 0 || s > 1 || nb < 1 || nb > S->block || S->busy[s] ||
      (S->sparse && (nnz < 0 || nnz > S->block_nnz)))
    return hb_error_set(HB_ERR_INTERNAL, "GPU contributions: slot %d cannot take a block of %d rows and %d entries",
                        s, nb, nnz);
  cudaStream_t st = S->st[s];
  const size_t B = (size_t)nb, K = (size_t)S->K, F = (size_t)S->nfeat;
  S->busy[s] = 1;  // from here on the slot's buffers may be in use (wait, or free, synchronizes)
  if (S->sparse) {
    HB_CUDA_TRY(cudaMemcpyAsync(S->d_p[s], S->h_p[s], sizeof(int) * (B + 1), cudaMemcpyHostToDevice, st),
                "copying rows to the GPU");
    if (nnz > 0) {
      HB_CUDA_TRY(cudaMemcpyAsync(S->d_j[s], S->h_j[s], sizeof(int) * (size_t)nnz, cudaMemcpyHostToDevice, st),
                  "copying rows to the GPU");
      HB_CUDA_TRY(cudaMemcpyAsync(S->d_v[s], S->h_v[s], sizeof(double) * (size_t)nnz, cudaMemcpyHostToDevice, st),
                  "copying rows to the GPU");
    }
  } else if (F > 0) {
    HB_CUDA_TRY(cudaMemcpyAsync(S->d_x[s], S->h_x[s], sizeof(double) * B * F, cudaMemcpyHostToDevice, st),
                "copying rows to the GPU");
  }
  ShapForest Fo;
  Fo.trees = S->d_trees;
  Fo.split_feature = S->d_split_feature;
  Fo.left = S->d_left;
  Fo.right = S->d_right;
  Fo.cat_begin = S->d_cat_begin;
  Fo.cat_nwords = S->d_cat_nwords;
  Fo.leaf_count = S->d_leaf_count;
  Fo.threshold = S->d_threshold;
  Fo.cover = S->d_cover;
  Fo.leaf_value = S->d_leaf_value;
  Fo.inv = S->d_inv;
  Fo.decision = S->d_decision;
  Fo.cat_bits = S->d_cat_bits;
  Fo.ntrees = S->ntrees;
  Fo.K = S->K;
  Fo.nfeat = S->nfeat;
  Fo.max_depth = S->max_depth;
  const int grid = (int)((B + kShapThreads - 1) / kShapThreads);
  // Not HB_SAME_CARVEOUT's split: this kernel uses no shared memory and
  // lives on its work space's reuse through L1, and no learner kernel runs
  // between its launches (the reason for one split everywhere else).
  static int carveout_set = 0;
  if (!carveout_set) {
    HB_CUDA_TRY(cudaFuncSetAttribute(k_shap, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxL1),
                "setting the contributions kernel's cache");
    carveout_set = 1;
  }
  // dense rows with no features still take the dense path (x is then never read)
  k_shap<<<grid, kShapThreads, 0, st>>>(Fo, S->sparse ? NULL : S->d_x[s], S->sparse ? S->d_p[s] : NULL,
                                        S->sparse ? S->d_j[s] : NULL, S->sparse ? S->d_v[s] : NULL, nb,
                                        S->d_phi[s], S->d_work[s], S->span);
  HB_CUDA_TRY(cudaGetLastError(), "the contributions kernel");
  HB_CUDA_TRY(cudaMemcpyAsync(S->h_phi[s], S->d_phi[s], sizeof(double) * B * K * (F + 1), cudaMemcpyDeviceToHost, st),
              "copying contributions from the GPU");
  return HB_OK;
}

extern "C" int hb_cuda_shap_wait(hb_cuda_shap_t *S, int s) {
  if (!S || s < 0 || s > 1) return hb_error_set(HB_ERR_INTERNAL, "GPU contributions: no slot %d", s);
  if (!S->busy[s]) return HB_OK;
  S->busy[s] = 0;
  HB_CUDA_TRY(cudaStreamSynchronize(S->st[s]), "computing contributions on the GPU");
  return HB_OK;
}
