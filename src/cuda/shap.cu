// shap.cu: contributions (SHAP values) on the device (cuda.h's
// hb_cuda_shap_*). The engine (predict.c's contrib_gpu) computes the
// expected values and leaf paths with the CPU's hb_shap_prepare and
// flattens the trees; here they live in device memory for the whole call,
// and each block of rows goes up, through two kernels, and back:
//
// k_shap_paths: one thread a row and tree (a block: one tree, consecutive
// rows, so a warp reads the same paths and splits) sums the tree's leaf
// paths into the tree's shares of the row, one per slot (distinct split
// feature), with the CPU's own code (engine/shap_rules.h's
// hb_shap_paths_tree; this file is built with -fmad=false, like every .cu
// here, so no multiply-add is fused). A path needs its weights and one
// fractions (the longest path's length plus one of each) and the sides the
// row takes at the tree's splits (a bit each): in shared memory, a column a
// thread, when a block of 32 or more threads fits there; otherwise in a
// device work space sized for the grid, which then walks the (tree, rows)
// items in turn. The sides are left out first when they do not fit (each
// split is then decided where a path meets it: the same sides).
//
// k_shap_sum: one thread a row, class and feature adds the feature's shares
// over the class's trees in iteration order, from zero: hb_shap_rows'
// order. So the contributions are the CPU's bit for bit. The bias entries
// are left 0: the host fills them with the trees' expected values, the init
// score and offsets.
//
// Dense rows come column-major; sparse rows as CSR, a feature's value found
// by binary search among the row's increasing column indices (absent: 0.0,
// as the CPU's dense copy of the row reads it). Two slots (each a stream
// with its own pinned host and device buffers and shares) let the host fill
// and collect one block while the device works on the other.
#include <climits>
#include <cstdlib>
#include <cstring>
#include "learner.cuh"
extern "C" {
#include "shap_rules.h"
}

namespace {
constexpr int kShapThreads = 128;  // most threads a block of k_shap_paths
constexpr int kSumThreads = 256;
// Shared memory a block of k_shap_paths may take (bytes): a few blocks a
// multiprocessor still fit.
constexpr size_t kShapSharedBytes = (size_t)64 << 10;
// Bytes of one slot's buffers a block of rows aims at: the engine caps the
// rows by their work as well, so this bounds the memory only.
constexpr size_t kShapBlockBytes = (size_t)512 << 20;

// The forest on the device: cuda.h's hb_cuda_shap_forest_t's arrays.
struct ShapForest {
  const hb_cuda_ptree_t *trees;
  const int *slot_first, *split_feature, *cat_begin, *cat_nwords, *elem_slot, *cond;
  const double *threshold, *leaf_value, *elem_zero, *inv;
  const int64_t *path_first, *cond_first;
  const int *path_leaf, *path_share;
  const uint8_t *decision;
  const uint32_t *cat_bits;
  int ntrees;
};

// Where a thread's path weights (w), sides (bits) and one fractions (one)
// lie: in a region of n threads' columns (stride n), thread g's column.
struct PathSpace {
  int d1, words;  // weights and one fractions a thread (longest path + 1); words of sides (0: none)
  __host__ __device__ size_t bytes(size_t n) const {
    return n * (sizeof(double) * (size_t)d1 + sizeof(uint32_t) * (size_t)words + (size_t)d1);
  }
};

// Rows r of the block (nb rows: dense x column-major, x[f nb + r], or sparse
// rows p, j, v) and trees t: the tree's shares of the row into part[(slot)
// nb + r] for each of its slots. chunks: blocks of blockDim.x rows a tree.
// work: NULL for shared memory, else the device work space of gridDim.x x
// blockDim.x threads.
__global__ void __launch_bounds__(kShapThreads)
k_shap_paths(const ShapForest F, const PathSpace sp, const double *__restrict__ x, const int *__restrict__ p,
             const int *__restrict__ j, const double *__restrict__ v, int nb, int chunks, double *__restrict__ part,
             char *__restrict__ work) {
  extern __shared__ double shap_smem[];
  const size_t n = work ? (size_t)gridDim.x * blockDim.x : (size_t)blockDim.x;
  const size_t g = work ? (size_t)blockIdx.x * blockDim.x + threadIdx.x : (size_t)threadIdx.x;
  double *base = work ? (double *)work : shap_smem;
  double *w = base + g;
  uint32_t *bits = (uint32_t *)(base + (size_t)sp.d1 * n) + g;
  uint8_t *one = (uint8_t *)((uint32_t *)(base + (size_t)sp.d1 * n) + (size_t)sp.words * n) + g;
  const long long items = (long long)F.ntrees * chunks;
  for (long long it = blockIdx.x; it < items; it += gridDim.x) {
    const int t = (int)(it / chunks), r = (int)(it % chunks) * (int)blockDim.x + (int)threadIdx.x;
    if (r >= nb) continue;
    const hb_cuda_ptree_t tr = F.trees[t];
    const int q0 = F.slot_first[t], nq = F.slot_first[t + 1] - q0;
    double *ph = part + (size_t)q0 * (size_t)nb + (size_t)r;
    for (int q = 0; q < nq; q++) ph[(size_t)q * (size_t)nb] = 0.0;
    if (tr.num_leaves <= 1) continue;  // a lone leaf adds only its expected value (the host's)
    hb_shap_paths_t pt;
    pt.num_leaves = tr.num_leaves;
    pt.split_feature = F.split_feature + tr.node_first;
    pt.cat_begin = F.cat_begin + tr.node_first;
    pt.cat_nwords = F.cat_nwords + tr.node_first;
    pt.threshold = F.threshold + tr.node_first;
    pt.decision = F.decision + tr.node_first;
    pt.cat_bits = F.cat_bits;
    pt.leaf_value = F.leaf_value + tr.leaf_first;
    pt.path_first = F.path_first + tr.leaf_first;
    pt.path_leaf = F.path_leaf + tr.leaf_first;
    pt.path_share = F.path_share + tr.leaf_first;
    pt.elem_slot = F.elem_slot;
    pt.elem_zero = F.elem_zero;
    pt.cond_first = F.cond_first;
    pt.cond = F.cond;
    hb_shap_xrow_t xr;
    if (x) {
      xr.x = x + r;
      xr.xs = (size_t)nb;
      xr.j = NULL;
      xr.v = NULL;
      xr.b = xr.e = 0;
    } else {
      xr.x = NULL;
      xr.xs = 0;
      xr.j = j;
      xr.v = v;
      xr.b = p[r];
      xr.e = p[r + 1];
    }
    const uint32_t *sides = NULL;
    if (sp.words > 0) {
      hb_shap_decide(&pt, &xr, tr.num_leaves - 1, bits, n);
      sides = bits;
    }
    hb_shap_paths_tree(&pt, &xr, sides, n, F.inv, w, one, n, NULL, ph, (size_t)nb);
  }
}

// One thread a row r, class k and feature f (i = (k (nfeat + 1) + f) nb +
// r): phi[r K (nfeat + 1) + k (nfeat + 1) + f] = the shares listed for (k, f)
// added in order from zero; the bias entries 0.
__global__ void __launch_bounds__(kSumThreads)
k_shap_sum(const int *__restrict__ sum_first, const int *__restrict__ sum_slot, const double *__restrict__ part,
           int nb, int K, int nfeat, double *__restrict__ phi) {
  const size_t P = (size_t)nfeat + 1, i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)nb * (size_t)K * P) return;
  const size_t r = i % (size_t)nb, q = i / (size_t)nb, k = q / P, f = q % P;
  double sum = 0.0;
  if (f < (size_t)nfeat) {
    const size_t c = k * (size_t)nfeat + f;
    for (int e = sum_first[c]; e < sum_first[c + 1]; e++) sum += part[(size_t)sum_slot[e] * (size_t)nb + r];
  }
  phi[r * (size_t)K * P + q] = sum;
}
}  // namespace

struct hb_cuda_shap {
  int nfeat, K, ntrees, nslots, sparse, block, block_nnz;
  PathSpace sp;
  int threads, grid;  // k_shap_paths' block size, and its grid when it uses the work space (0: shared memory)
  size_t smem;
  // the forest's device arrays
  hb_cuda_ptree_t *d_trees;
  int *d_slot_first, *d_split_feature, *d_cat_begin, *d_cat_nwords, *d_elem_slot, *d_cond, *d_sum_first, *d_sum_slot;
  double *d_threshold, *d_leaf_value, *d_elem_zero, *d_inv;
  int64_t *d_path_first, *d_cond_first;
  int *d_path_leaf, *d_path_share;
  uint8_t *d_decision;
  uint32_t *d_cat_bits;
  cudaStream_t st[2];
  int busy[2];
  // per slot: device buffers and the trees' shares, and the pinned host twins
  double *d_x[2], *d_v[2], *d_phi[2], *d_part[2];
  int *d_p[2], *d_j[2];
  char *d_work[2];
  double *h_x[2], *h_v[2], *h_phi[2];
  int *h_p[2], *h_j[2];
};

extern "C" void hb_cuda_shap_free(hb_cuda_shap_t *S) {
  if (!S) return;
  for (int s = 0; s < 2; s++)
    if (S->st[s]) cudaStreamSynchronize(S->st[s]);  // nothing is freed under a copy or kernel in flight
  void *dev[] = {S->d_trees,     S->d_slot_first, S->d_split_feature, S->d_cat_begin,  S->d_cat_nwords,
                 S->d_elem_slot, S->d_cond,       S->d_sum_first,     S->d_sum_slot,   S->d_threshold,
                 S->d_leaf_value, S->d_elem_zero, S->d_inv,           S->d_path_first, S->d_cond_first,
                 S->d_decision,  S->d_cat_bits,   S->d_path_leaf,     S->d_path_share};
  for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) cudaFree(dev[k]);
  for (int s = 0; s < 2; s++) {
    void *ds[] = {S->d_x[s], S->d_v[s], S->d_phi[s], S->d_part[s], S->d_p[s], S->d_j[s], S->d_work[s]};
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
      f->max_path < 0 || f->max_nodes < 0 || f->nnodes < 0 || f->nleaves < 0 || f->ncat_words < 0 || f->nslots < 0 ||
      f->nelems < 0 || f->nconds < 0 || f->space < 0 || f->space > 2 || !f->inv || nnz < 0 || max_row_nnz < 0)
    return hb_error_set(HB_ERR_INTERNAL, "GPU contributions: bad forest or rows");
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  int st = HB_OK, dev = 0, sms = 1, optin = 0;
  size_t fr = 0, tot = 0;
  hb_cuda_shap_t *S = (hb_cuda_shap_t *)hb_calloc(1, sizeof *S);
  if (!S) return HB_ERR_NOMEM;
  S->nfeat = f->nfeat;
  S->K = f->num_class;
  S->ntrees = f->ntrees;
  S->nslots = f->nslots;
  S->sparse = sparse != 0;
  {
    const size_t K = (size_t)S->K, F = (size_t)S->nfeat, T = (size_t)S->ntrees, NN = (size_t)f->nnodes,
                 NL = (size_t)f->nleaves, NE = (size_t)f->nelems, NC = (size_t)f->nconds, NQ = (size_t)f->nslots,
                 D2 = (size_t)f->max_path + 2;
    HB_CUDA_TRY_FAIL(cudaGetDevice(&dev), "querying the GPU");
    HB_CUDA_TRY_FAIL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "querying the GPU");
    HB_CUDA_TRY_FAIL(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
                     "querying the GPU");
    // A thread's path space: in shared memory with the sides, or without
    // them, in blocks of 128 down to 32 threads; else in the work space.
    S->sp.d1 = f->max_path + 1;
    S->sp.words = (f->max_nodes + 31) / 32;
    const size_t limit = kShapSharedBytes < (size_t)optin ? kShapSharedBytes : (size_t)optin;
    S->threads = 0;
    for (int th = kShapThreads; th >= 32 && !S->threads && f->space != 2; th /= 2) {
      PathSpace with = S->sp, without = S->sp;
      without.words = 0;
      if (with.bytes((size_t)th) <= limit && f->space == 0) {
        S->threads = th;
      } else if (without.bytes((size_t)th) <= limit) {
        S->sp = without;
        S->threads = th;
      }
    }
    double work_bytes = 0;
    if (S->threads) {
      S->smem = S->sp.bytes((size_t)S->threads);
      S->grid = 0;
    } else {  // too long a path for shared memory: the work space, 4 blocks of 128 a multiprocessor
      S->sp.words = 0;
      S->threads = kShapThreads;
      S->smem = 0;
      S->grid = 4 * sms;
      work_bytes = (double)S->sp.bytes((size_t)S->grid * (size_t)S->threads);
    }
    if (S->smem > 48 * 1024)
      HB_CUDA_TRY_FAIL(cudaFuncSetAttribute(k_shap_paths, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S->smem),
                       "setting the contributions kernel's shared memory");
    // a row's bytes in one slot (dense values, or a sparse row's start;
    // contributions; the trees' shares), and a sparse entry's (column and value)
    const size_t row_bytes =
        (S->sparse ? sizeof(int) : sizeof(double) * F) + sizeof(double) * K * (F + 1) + sizeof(double) * NQ;
    const size_t entry_bytes = sizeof(int) + sizeof(double);
    const double forest_bytes = (double)sizeof(hb_cuda_ptree_t) * T + (double)sizeof(int) * (T + 1 + NQ) +
                                (double)NN * (3 * sizeof(int) + sizeof(double) + sizeof(uint8_t)) +
                                (double)NL * (sizeof(double) + sizeof(int64_t) + 2 * sizeof(int)) +
                                (double)NE * (sizeof(int) + sizeof(double) + sizeof(int64_t)) +
                                (double)NC * sizeof(int) + (double)sizeof(int) * (K * F + 1) +
                                (double)sizeof(uint32_t) * f->ncat_words + (double)sizeof(double) * D2 +
                                2.0 * work_bytes;
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
                        "shares of a row in each of %d trees), but %.0f MB of the GPU's %.0f MB are free; use "
                        "device = \"cpu\"",
                        (forest_bytes + 2.0 * least) / 1e6 + 0.5, forest_bytes / 1e6 + 0.5,
                        (double)(sizeof(double) * NQ) / 1e6, S->ntrees, (double)fr / 1e6, (double)tot / 1e6);
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
    if (rows > (double)INT_MAX / 2) rows = (double)INT_MAX / 2;
    const size_t B = rows >= 1.0 ? (size_t)rows : 1;
    S->block = (int)B;
    S->block_nnz = (int)cap;

    SUP(S->d_trees, f->trees, T);
    SUP(S->d_slot_first, f->slot_first, T + 1);
    SUP(S->d_split_feature, f->split_feature, NN);
    SUP(S->d_cat_begin, f->cat_begin, NN);
    SUP(S->d_cat_nwords, f->cat_nwords, NN);
    SUP(S->d_threshold, f->threshold, NN);
    SUP(S->d_decision, f->decision, NN);
    SUP(S->d_leaf_value, f->leaf_value, NL);
    SUP(S->d_path_first, f->path_first, NL + 1);
    SUP(S->d_path_leaf, f->path_leaf, NL);
    SUP(S->d_path_share, f->path_share, NL);
    SUP(S->d_elem_slot, f->elem_slot, NE);
    SUP(S->d_elem_zero, f->elem_zero, NE);
    SUP(S->d_cond_first, f->cond_first, NE + 1);
    SUP(S->d_cond, f->cond, NC);
    SUP(S->d_sum_first, f->sum_first, K * F + 1);
    SUP(S->d_sum_slot, f->sum_slot, NQ);
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
      SDALLOC(S->d_part[s], B * NQ);
      if (S->grid) SDALLOC(S->d_work[s], (size_t)work_bytes);
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
  Fo.slot_first = S->d_slot_first;
  Fo.split_feature = S->d_split_feature;
  Fo.cat_begin = S->d_cat_begin;
  Fo.cat_nwords = S->d_cat_nwords;
  Fo.elem_slot = S->d_elem_slot;
  Fo.cond = S->d_cond;
  Fo.threshold = S->d_threshold;
  Fo.leaf_value = S->d_leaf_value;
  Fo.elem_zero = S->d_elem_zero;
  Fo.inv = S->d_inv;
  Fo.path_first = S->d_path_first;
  Fo.path_leaf = S->d_path_leaf;
  Fo.path_share = S->d_path_share;
  Fo.cond_first = S->d_cond_first;
  Fo.decision = S->d_decision;
  Fo.cat_bits = S->d_cat_bits;
  Fo.ntrees = S->ntrees;
  const int chunks = (nb + S->threads - 1) / S->threads;
  const long long items = (long long)S->ntrees * chunks;
  if (items > 0) {
    // shared memory: a block an item (capped; the blocks then walk the
    // items in turn); the work space: the grid it was sized for
    const long long most = S->grid ? S->grid : (long long)INT_MAX;
    const int grid = (int)(items < most ? items : most);
    // dense rows with no features still take the dense path (x is then never read)
    k_shap_paths<<<grid, S->threads, S->smem, st>>>(
        Fo, S->sp, S->sparse ? NULL : S->d_x[s], S->sparse ? S->d_p[s] : NULL, S->sparse ? S->d_j[s] : NULL,
        S->sparse ? S->d_v[s] : NULL, nb, chunks, S->d_part[s], S->grid ? S->d_work[s] : NULL);
    HB_CUDA_TRY(cudaGetLastError(), "the contributions kernel");
  }
  const size_t nsum = B * K * (F + 1);
  k_shap_sum<<<(unsigned)((nsum + kSumThreads - 1) / kSumThreads), kSumThreads, 0, st>>>(
      S->d_sum_first, S->d_sum_slot, S->d_part[s], nb, S->K, S->nfeat, S->d_phi[s]);
  HB_CUDA_TRY(cudaGetLastError(), "the contributions' sums");
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
