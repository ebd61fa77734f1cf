// predict.cu: prediction on the device (cuda.h's hb_cuda_predictor_*). The
// engine (predict.c) flattens the trees and fills blocks of rows; here the
// trees live in device memory for the whole call, and each block of rows
// goes up, through one thread a row that walks every tree with the CPU's own
// split rule (tree_rules.h), and back. Each row adds its class's trees in
// iteration order from the same starting score as predict.c, with
// round-to-nearest additions that nothing can contract, so its raw scores
// are the CPU's bit for bit; leaf indices are the CPU's leaves.
//
// Dense rows come column-major; sparse rows as CSR, a feature's value found
// by binary search among the row's increasing column indices (absent: 0.0,
// as the CPU's sparse walk reads it), so one-hot data of many columns is
// never densified. Two slots (each a stream with its own pinned host and
// device buffers) let the host fill and collect one block while the device
// works on the other.
#include <climits>
#include <cstdlib>
#include <cstring>
#include "learner.cuh"
extern "C" {
#include "tree_rules.h"
}

namespace {
constexpr int kPredThreads = 128;
// Bytes of one slot's buffers a block aims at (rows, offsets and results): a
// block is then tens of milliseconds of work, so interrupts come quickly,
// and the pinned buffers stay small.
constexpr size_t kBlockBytes = (size_t)64 << 20;
// A block's dense rows are staged in shared memory when they fit in the 48
// KiB a kernel gets without opting in (48 features of 128 rows); wider rows
// are read from global memory.
constexpr size_t kMaxStageBytes = (size_t)48 << 10;

// The leaf of one tree (nodes nd, tree-local children) for the row whose
// value of feature f is value(f).
template <typename Value>
__device__ __forceinline__ int walk_tree(const hb_cuda_pnode_t *__restrict__ nd, int num_leaves,
                                         const uint32_t *__restrict__ cat, Value value) {
  if (num_leaves <= 1) return 0;
  int node = 0;
  while (node >= 0) {
    const hb_cuda_pnode_t *p = nd + node;
    const double v = value(p->feature);
    node = hb_rule_goes_left((unsigned)p->decision, p->threshold, cat, p->cat_begin, p->cat_nwords, v) ? p->child[0]
                                                                                                       : p->child[1];
  }
  return ~node;
}

// Every tree for one row: with leaf, each tree's leaf (leaf[j * nb + r]);
// else each class's raw score (raw[k * nb + r]) as predict.c adds it: from
// init[k] + off (or 0 for a forest, whose mean of trees is added to that
// start at the end), tree after tree.
template <typename Value>
__device__ __forceinline__ void predict_row(const hb_cuda_pnode_t *__restrict__ nodes,
                                            const hb_cuda_ptree_t *__restrict__ trees, const double *__restrict__ lv,
                                            const uint32_t *__restrict__ cat, const double *__restrict__ init,
                                            int ntrees, int K, int avg, const double *__restrict__ off, int nb, int r,
                                            double *__restrict__ raw, int *__restrict__ leaf, Value value) {
  if (leaf) {
    for (int j = 0; j < ntrees; j++) {
      const hb_cuda_ptree_t t = trees[j];
      leaf[(size_t)j * nb + r] = walk_tree(nodes + t.node_first, t.num_leaves, cat, value);
    }
    return;
  }
  for (int k = 0; k < K; k++) {
    // predict.c's start_score: (init or 0) + (offset or 0)
    const double start = __dadd_rn(init ? init[k] : 0.0, off ? off[(size_t)k * nb + r] : 0.0);
    double acc = avg ? 0.0 : start;
    for (int j = k; j < ntrees; j += K) {  // class k's trees, in iteration order
      const hb_cuda_ptree_t t = trees[j];
      acc = __dadd_rn(acc, lv[t.leaf_first + walk_tree(nodes + t.node_first, t.num_leaves, cat, value)]);
    }
    if (avg) acc = __dadd_rn(start, __ddiv_rn(acc, (double)avg));
    raw[(size_t)k * nb + r] = acc;
  }
}

// Dense rows: one thread a row of the block (nb rows, x column-major),
// staged in shared memory when `stage` (a warp reads 32 neighbouring rows
// of one feature at a time).
__global__ void __launch_bounds__(kPredThreads)
k_predict_dense(const hb_cuda_pnode_t *__restrict__ nodes, const hb_cuda_ptree_t *__restrict__ trees,
                const double *__restrict__ lv, const uint32_t *__restrict__ cat, const double *__restrict__ init,
                int ntrees, int K, int nfeat, int avg, const double *__restrict__ x, const double *__restrict__ off,
                int nb, int stage, double *__restrict__ raw, int *__restrict__ leaf) {
  extern __shared__ double sx[];
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  const double *xr = x + r;
  size_t xs = (size_t)nb;
  if (stage) {
    for (int f = 0; f < nfeat; f++)
      sx[(size_t)f * blockDim.x + threadIdx.x] = r < nb ? x[(size_t)f * nb + r] : 0.0;
    __syncthreads();
    xr = sx + threadIdx.x;
    xs = (size_t)blockDim.x;
  }
  if (r >= nb) return;
  predict_row(nodes, trees, lv, cat, init, ntrees, K, avg, off, nb, r, raw, leaf,
              [xr, xs](int f) { return xr[(size_t)f * xs]; });
}

// Sparse rows: one thread a row of the block, its entries p[r] .. p[r + 1]
// of j (increasing columns) and v.
__global__ void __launch_bounds__(kPredThreads)
k_predict_sparse(const hb_cuda_pnode_t *__restrict__ nodes, const hb_cuda_ptree_t *__restrict__ trees,
                 const double *__restrict__ lv, const uint32_t *__restrict__ cat, const double *__restrict__ init,
                 int ntrees, int K, int avg, const int *__restrict__ p, const int *__restrict__ j,
                 const double *__restrict__ v, const double *__restrict__ off, int nb, double *__restrict__ raw,
                 int *__restrict__ leaf) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nb) return;
  const int b = p[r], e = p[r + 1];
  predict_row(nodes, trees, lv, cat, init, ntrees, K, avg, off, nb, r, raw, leaf, [j, v, b, e](int f) {
    int lo = b, hi = e;  // the first entry whose column is >= f
    while (lo < hi) {
      const int mid = lo + ((hi - lo) >> 1);
      if (j[mid] < f)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < e && j[lo] == f ? v[lo] : 0.0;
  });
}
}  // namespace

struct hb_cuda_predictor {
  int nfeat, K, ntrees, avg, leaf, has_off, sparse, block, block_nnz, stage;
  hb_cuda_pnode_t *d_nodes;
  hb_cuda_ptree_t *d_trees;
  double *d_lv;
  uint32_t *d_cat;
  double *d_init;  // NULL when the model has no starting scores
  cudaStream_t st[2];
  int busy[2];
  // per slot: device buffers, and their pinned host twins
  double *d_x[2], *d_v[2], *d_off[2], *d_raw[2];
  int *d_p[2], *d_j[2], *d_leaf[2];
  double *h_x[2], *h_v[2], *h_off[2], *h_raw[2];
  int *h_p[2], *h_j[2], *h_leaf[2];
};

extern "C" void hb_cuda_predictor_free(hb_cuda_predictor_t *P) {
  if (!P) return;
  for (int s = 0; s < 2; s++)
    if (P->st[s]) cudaStreamSynchronize(P->st[s]);  // nothing is freed under a copy in flight
  void *dev[] = {P->d_nodes, P->d_trees, P->d_lv, P->d_cat, P->d_init};
  for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) cudaFree(dev[k]);
  for (int s = 0; s < 2; s++) {
    void *ds[] = {P->d_x[s], P->d_v[s], P->d_off[s], P->d_raw[s], P->d_p[s], P->d_j[s], P->d_leaf[s]};
    for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) cudaFree(ds[k]);
    void *hs[] = {P->h_x[s], P->h_v[s], P->h_off[s], P->h_raw[s], P->h_p[s], P->h_j[s], P->h_leaf[s]};
    for (size_t k = 0; k < sizeof hs / sizeof hs[0]; k++) cudaFreeHost(hs[k]);
    if (P->st[s]) cudaStreamDestroy(P->st[s]);
  }
  cudaGetLastError();  // a failure while freeing must not surface in the next call
  hb_free(P);
}

// device and pinned buffers of n elements (at least one, so that none is NULL)
#define PDALLOC(ptr, n) HB_CUDA_DALLOC1(ptr, n, "allocating device memory for prediction")
#define PHALLOC(ptr, n) HB_CUDA_HALLOC1(ptr, n, "allocating pinned memory for prediction")
#define PUP(dst, src, n)                                                                                 \
  do {                                                                                                   \
    if ((size_t)(n) > 0)                                                                                 \
      HB_CUDA_TRY_FAIL(cudaMemcpy((dst), (src), sizeof(*(dst)) * (size_t)(n), cudaMemcpyHostToDevice),             \
           "copying the trees to the GPU");                                                              \
  } while (0)

extern "C" int hb_cuda_predictor_create(const hb_cuda_forest_t *f, int nrow, int leaf, int has_offset, int sparse,
                                        int64_t nnz, int max_row_nnz, hb_cuda_predictor_t **out) {
  *out = NULL;
  if (!f || nrow < 1 || f->num_class < 1 || f->ntrees < 0 || f->nfeat < 0 || f->ntrees % f->num_class != 0 ||
      nnz < 0 || max_row_nnz < 0)
    return hb_error_set(HB_ERR_INTERNAL, "GPU prediction: bad forest or rows");
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  int st = HB_OK;
  size_t fr = 0, tot = 0;
  hb_cuda_predictor_t *P = (hb_cuda_predictor_t *)hb_calloc(1, sizeof *P);
  if (!P) return HB_ERR_NOMEM;
  P->nfeat = f->nfeat;
  P->K = f->num_class;
  P->ntrees = f->ntrees;
  P->avg = f->avg;
  P->leaf = leaf != 0;
  P->has_off = has_offset != 0;
  P->sparse = sparse != 0;
  {
    const size_t K = (size_t)P->K, F = (size_t)P->nfeat, T = (size_t)P->ntrees;
    // a row's bytes in one slot (dense values, or a sparse row's start;
    // offsets; results), and a sparse entry's (column and value)
    const size_t row_bytes = (P->sparse ? sizeof(int) : sizeof(double) * F) + (P->has_off ? sizeof(double) * K : 0) +
                             (P->leaf ? sizeof(int) * T : sizeof(double) * K);
    const size_t entry_bytes = sizeof(int) + sizeof(double);
    const double forest_bytes = (double)sizeof(hb_cuda_pnode_t) * f->nnodes + (double)sizeof(hb_cuda_ptree_t) * T +
                                (double)sizeof(double) * f->nleaves + (double)sizeof(uint32_t) * f->ncat_words +
                                (double)sizeof(double) * K;
    HB_CUDA_TRY_FAIL(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
    // the trees and both slots' blocks within 90% of the free memory; a
    // slot's share is at most kBlockBytes, and at least one row (with the
    // entries of the longest sparse row)
    const double avail = 0.9 * (double)fr - forest_bytes;
    const double least = (double)row_bytes + (P->sparse ? (double)entry_bytes * (max_row_nnz > 0 ? max_row_nnz : 1) : 0);
    if (avail < 2.0 * least) {
      st = hb_error_set(HB_ERR_NOMEM,
                        "predicting on the GPU needs at least %.0f MB (%.0f MB of them the trees), but %.0f MB of "
                        "the GPU's %.0f MB are free; use device = \"cpu\"",
                        (forest_bytes + 2.0 * least) / 1e6 + 0.5, forest_bytes / 1e6 + 0.5, (double)fr / 1e6,
                        (double)tot / 1e6);
      goto fail;
    }
    double budget = avail / 2.0 < (double)kBlockBytes ? avail / 2.0 : (double)kBlockBytes;
    if (budget < least) budget = least;
    size_t cap = 0;
    if (P->sparse) {  // half the budget for entries, unless the rows have fewer
      double c = budget / 2.0 / (double)entry_bytes;
      if (c > (double)nnz) c = (double)nnz;
      if (c < (double)max_row_nnz) c = (double)max_row_nnz;
      if (c > (double)INT_MAX) c = (double)INT_MAX;
      cap = c >= 1.0 ? (size_t)c : 1;
      budget -= (double)(cap * entry_bytes);
    }
    double rows = budget / (double)row_bytes;
    if (rows > (double)nrow) rows = (double)nrow;
    const size_t B = rows >= 1.0 ? (size_t)rows : 1;
    P->block = (int)B;
    P->block_nnz = (int)cap;
    P->stage = !P->sparse && F > 0 && F * kPredThreads * sizeof(double) <= kMaxStageBytes;

    PDALLOC(P->d_nodes, f->nnodes);
    PDALLOC(P->d_trees, T);
    PDALLOC(P->d_lv, f->nleaves);
    PDALLOC(P->d_cat, f->ncat_words);
    PUP(P->d_nodes, f->nodes, f->nnodes);
    PUP(P->d_trees, f->trees, T);
    PUP(P->d_lv, f->leaf_value, f->nleaves);
    PUP(P->d_cat, f->cat_bits, f->ncat_words);
    if (f->init_score) {
      PDALLOC(P->d_init, K);
      PUP(P->d_init, f->init_score, K);
    }
    for (int s = 0; s < 2; s++) {
      HB_CUDA_TRY_FAIL(cudaStreamCreateWithFlags(&P->st[s], cudaStreamNonBlocking), "creating a stream");
      if (P->sparse) {
        PDALLOC(P->d_p[s], B + 1);
        PHALLOC(P->h_p[s], B + 1);
        PDALLOC(P->d_j[s], cap);
        PHALLOC(P->h_j[s], cap);
        PDALLOC(P->d_v[s], cap);
        PHALLOC(P->h_v[s], cap);
      } else {
        PDALLOC(P->d_x[s], B * F);
        PHALLOC(P->h_x[s], B * F);
      }
      if (P->has_off) {
        PDALLOC(P->d_off[s], B * K);
        PHALLOC(P->h_off[s], B * K);
      }
      if (P->leaf) {
        PDALLOC(P->d_leaf[s], B * T);
        PHALLOC(P->h_leaf[s], B * T);
      } else {
        PDALLOC(P->d_raw[s], B * K);
        PHALLOC(P->h_raw[s], B * K);
      }
    }
    // The trees went up with cudaMemcpy from pageable memory on the legacy
    // default stream, which may return before the DMA has landed; the slots'
    // streams are non-blocking, so nothing orders their kernels after it.
    HB_CUDA_TRY_FAIL(cudaDeviceSynchronize(), "copying the trees to the GPU");
  }
  *out = P;
  return HB_OK;
fail:
  hb_cuda_predictor_free(P);
  return st;
}
#undef PUP
#undef PHALLOC
#undef PDALLOC

extern "C" int hb_cuda_predictor_block_rows(const hb_cuda_predictor_t *P) { return P ? P->block : 1; }
extern "C" int hb_cuda_predictor_block_nnz(const hb_cuda_predictor_t *P) { return P ? P->block_nnz : 0; }

extern "C" int hb_cuda_predictor_buffers(hb_cuda_predictor_t *P, int s, hb_cuda_pslot_t *out) {
  memset(out, 0, sizeof *out);
  if (!P || s < 0 || s > 1) return hb_error_set(HB_ERR_INTERNAL, "GPU prediction: no slot %d", s);
  out->x = P->h_x[s];
  out->p = P->h_p[s];
  out->j = P->h_j[s];
  out->v = P->h_v[s];
  out->off = P->h_off[s];
  out->raw = P->h_raw[s];
  out->leaf = P->h_leaf[s];
  return HB_OK;
}

extern "C" int hb_cuda_predictor_launch(hb_cuda_predictor_t *P, int s, int nb, int nnz) {
  if (!P || s < 0 || s > 1 || nb < 1 || nb > P->block || P->busy[s] ||
      (P->sparse && (nnz < 0 || nnz > P->block_nnz)))
    return hb_error_set(HB_ERR_INTERNAL, "GPU prediction: slot %d cannot take a block of %d rows and %d entries", s,
                        nb, nnz);
  cudaStream_t st = P->st[s];
  const size_t B = (size_t)nb, K = (size_t)P->K, F = (size_t)P->nfeat, T = (size_t)P->ntrees;
  P->busy[s] = 1;  // from here on the slot's buffers may be in use (wait, or free, synchronizes)
  if (P->sparse) {
    HB_CUDA_TRY(cudaMemcpyAsync(P->d_p[s], P->h_p[s], sizeof(int) * (B + 1), cudaMemcpyHostToDevice, st),
                "copying rows to the GPU");
    if (nnz > 0) {
      HB_CUDA_TRY(cudaMemcpyAsync(P->d_j[s], P->h_j[s], sizeof(int) * (size_t)nnz, cudaMemcpyHostToDevice, st),
                  "copying rows to the GPU");
      HB_CUDA_TRY(cudaMemcpyAsync(P->d_v[s], P->h_v[s], sizeof(double) * (size_t)nnz, cudaMemcpyHostToDevice, st),
                  "copying rows to the GPU");
    }
  } else if (F > 0) {
    HB_CUDA_TRY(cudaMemcpyAsync(P->d_x[s], P->h_x[s], sizeof(double) * B * F, cudaMemcpyHostToDevice, st),
                "copying rows to the GPU");
  }
  if (P->has_off)
    HB_CUDA_TRY(cudaMemcpyAsync(P->d_off[s], P->h_off[s], sizeof(double) * B * K, cudaMemcpyHostToDevice, st),
                "copying offsets to the GPU");
  const int grid = (int)((B + kPredThreads - 1) / kPredThreads);
  double *raw = P->leaf ? NULL : P->d_raw[s];
  int *leaf = P->leaf ? P->d_leaf[s] : NULL;
  const double *off = P->has_off ? P->d_off[s] : NULL;
  if (P->sparse) {
    HB_SAME_CARVEOUT(k_predict_sparse);
    k_predict_sparse<<<grid, kPredThreads, 0, st>>>(P->d_nodes, P->d_trees, P->d_lv, P->d_cat, P->d_init, P->ntrees,
                                                     P->K, P->avg, P->d_p[s], P->d_j[s], P->d_v[s], off, nb, raw,
                                                     leaf);
  } else {
    HB_SAME_CARVEOUT(k_predict_dense);
    const size_t smem = P->stage ? F * kPredThreads * sizeof(double) : 0;
    k_predict_dense<<<grid, kPredThreads, smem, st>>>(P->d_nodes, P->d_trees, P->d_lv, P->d_cat, P->d_init,
                                                       P->ntrees, P->K, P->nfeat, P->avg, P->d_x[s], off, nb,
                                                       P->stage, raw, leaf);
  }
  HB_CUDA_TRY(cudaGetLastError(), "the prediction kernel");
  if (P->leaf) {
    if (T > 0)
      HB_CUDA_TRY(cudaMemcpyAsync(P->h_leaf[s], P->d_leaf[s], sizeof(int) * B * T, cudaMemcpyDeviceToHost, st),
                  "copying leaf indices from the GPU");
  } else {
    HB_CUDA_TRY(cudaMemcpyAsync(P->h_raw[s], P->d_raw[s], sizeof(double) * B * K, cudaMemcpyDeviceToHost, st),
                "copying predictions from the GPU");
  }
  return HB_OK;
}

extern "C" int hb_cuda_predictor_wait(hb_cuda_predictor_t *P, int s) {
  if (!P || s < 0 || s > 1) return hb_error_set(HB_ERR_INTERNAL, "GPU prediction: no slot %d", s);
  if (!P->busy[s]) return HB_OK;
  P->busy[s] = 0;
  HB_CUDA_TRY(cudaStreamSynchronize(P->st[s]), "predicting on the GPU");
  return HB_OK;
}
