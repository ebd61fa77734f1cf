// score.cu: what follows a finished tree on the device. Every training row
// is routed through the tree on its bins; the in-bag rows' full-precision
// gradients and hessians are summed per leaf as 64-bit fixed point (exact,
// so the sums do not depend on the order of the additions, with about 2^-38
// of the largest value as resolution), the leaf values follow from the
// shared rule, and the scores of training and validation rows are updated
// (a forest's as the running mean of its trees above the starting scores).
#include "learner.cuh"
extern "C" {
#include "quantize.h"
}

namespace hbc {

namespace {
constexpr int kRouteThreads = 256;
constexpr int kMaxSharedNodes = 512;   // trees up to this many nodes are routed from shared memory (22 KB)
constexpr int kMaxSharedLeaves = 1024;  // leaf sums staged in shared memory up to this many leaves (16 KB)

// The leaf a row reaches; bin_of(f) reads its bin of feature f.
template <typename BinOf>
__device__ __forceinline__ int route_row(const NodeRoute *nodes, int nl, BinOf bin_of) {
  if (nl <= 1) return 0;
  int node = 0;
  while (node >= 0) {
    const NodeRoute &nd = nodes[node];
    const int bin = bin_of(nd.feature);
    node = (nd.bins[bin >> 5] >> (bin & 31)) & 1u ? nd.left : nd.right;
  }
  return ~node;
}

// Row-major words (validation sets): four features to a word.
__device__ __forceinline__ int route_words(const NodeRoute *nodes, int nl, const uint32_t *row) {
  return route_row(nodes, nl, [row](int f) { return (int)((row[f >> 2] >> (8 * (f & 3))) & 255u); });
}

// The tree's routing nodes, from shared memory when they fit.
__device__ __forceinline__ const NodeRoute *stage_nodes(const NodeRoute *route, int nl, NodeRoute *sh) {
  if (nl - 1 > kMaxSharedNodes) return route;
  for (int k = threadIdx.x; k < nl - 1; k += blockDim.x) sh[k] = route[k];
  __syncthreads();
  return sh;
}
}  // namespace

// Leaf of every training row (routed on the feature-major bins when the
// learner keeps them, so a warp reads each node's feature for 32
// neighbouring rows at once; else on the row-major words), and the
// in-bag rows' sums per leaf: the
// fixed-point refit sums, or (quantized training without refit) the sums of
// the rows' quantized values, rounded again exactly as the tree saw them.
__global__ void __launch_bounds__(kRouteThreads)
k_route_train(TreeArgs a, int n, const uint8_t *__restrict__ inbag, const double *__restrict__ g,
              const double *__restrict__ h, const RoundScales *rs, QuantArgs q, int *__restrict__ leaf_of_row,
              unsigned long long *__restrict__ sums) {
  __shared__ NodeRoute snodes[kMaxSharedNodes];
  __shared__ unsigned long long ssum[2 * kMaxSharedLeaves];
  const int nl = a.ctl->num_leaves;
  const NodeRoute *nodes = stage_nodes(a.route, nl, snodes);
  const bool stage = nl <= kMaxSharedLeaves;
  if (stage) {
    for (int k = threadIdx.x; k < 2 * nl; k += blockDim.x) ssum[k] = 0;
    __syncthreads();
  }
  unsigned long long *acc = stage ? ssum : sums;
  const int fg = rs->fg, fh = rs->fh;
  const bool quant_sums = q.on && !q.refit;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int leaf = route_row(nodes, nl, [&a, i](int f) { return read_bin(bin_reader(a, f), i); });
    leaf_of_row[i] = leaf;
    if (!inbag || inbag[i]) {
      long long sg, sh;
      if (quant_sums) {
        const uint64_t tree = (uint64_t)rs->tree, row = q.row0 + (uint64_t)i;
        sg = hb_quant_round(g[i], rs->qscale_g, hb_quant_uniform(q.seed, tree, row, 0), q.stochastic,
                            -rs->qlevels_g, rs->qlevels_g);
        sh = rs->qlevels_h ? hb_quant_round(h[i], rs->qscale_h, hb_quant_uniform(q.seed, tree, row, 1),
                                            q.stochastic, 0, rs->qlevels_h)
                           : 1;
      } else {
        sg = __double2ll_rn(ldexp(g[i], fg));
        sh = __double2ll_rn(ldexp(h[i], fh));
      }
      atomicAdd(&acc[2 * leaf], (unsigned long long)sg);
      atomicAdd(&acc[2 * leaf + 1], (unsigned long long)sh);
    }
  }
  if (stage) {
    __syncthreads();
    for (int k = threadIdx.x; k < 2 * nl; k += blockDim.x)
      if (ssum[k]) atomicAdd(&sums[k], ssum[k]);
  }
}

// Leaf values from the leaf sums (one thread per leaf), shrunk by *rate
// (the learning rate, or DART's for the round).
__global__ void k_leaf_values(TreeArgs a, const unsigned long long *sums, const RoundScales *rs, QuantArgs q,
                              const double *rate, LeafOut *__restrict__ out) {
  const Leaf *__restrict__ leaves = a.leaves;
  const double learning_rate = *rate;
  const int nl = a.ctl->num_leaves;
  const bool quant_sums = q.on && !q.refit;
  for (int l = blockIdx.x * blockDim.x + threadIdx.x; l < nl; l += gridDim.x * blockDim.x) {
    const long long sg = (long long)sums[2 * l], sh = (long long)sums[2 * l + 1];
    const double G = quant_sums ? (double)sg * rs->qscale_g : ldexp((double)sg, -rs->fg);
    const double H = quant_sums ? (double)sh * rs->qscale_h : ldexp((double)sh, -rs->fh);
    LeafOut o;
    o.g = G;
    o.h = H;
    o.count = leaves[l].n;
    o.depth = leaves[l].depth;
    // within the leaf's bounds under monotone constraints (infinite otherwise:
    // no change); a tree that could not split adds its root's output only
    // where the root is a leaf the limits allow (the CPU's learner_cpu.c);
    // under max_delta_step / path_smooth (a.ext) the output set when the
    // leaf was made, from the histogram's sums, as the CPU's (a lone root's
    // from these sums)
    const double u = a.ext ? leaf_out_ext(a, leaves[l].out, G, H, leaves[l].n)
                           : hb_rule_clamp(hb_rule_leaf_output(G, H, a.l1, leaves[l].l2), leaves[l].lo, leaves[l].hi);
    o.value = leaves[l].n > 0 && (nl > 1 || hb_rule_lone_root_counts(leaves[l].n, H, a.min_data, a.min_hess))
                  ? learning_rate * u
                  : 0.0;
    out[l] = o;
  }
}

// A tree's output v added to score s: plainly (boosting), or with base
// (a forest) as the running mean of the trees above the row's starting
// score, s += (v - (s - base)) * inv_t, inv_t = 1 / trees so far (the CPU's
// add_tree, learner_cpu.c, operation for operation: no fused multiply-add).
__device__ __forceinline__ double add_tree(double s, double v, const double *base, int i, const double *inv_t) {
  if (!base) return s + v;
  return __dadd_rn(s, __dmul_rn(__dsub_rn(v, __dsub_rn(s, base[i])), *inv_t));
}

// A score that means nothing (boost.c's score_bad): not finite, or above
// hi (exp()'s range under a log link, else infinity). The data set's bit
// goes into the learner's error flag, which the host reads after the round.
__device__ __forceinline__ void check_score(double s, ScoreCheck chk) {
  if (!(s <= chk.hi) || !isfinite(s)) atomicOr(chk.err, chk.bit);
}

__global__ void k_add_train(const int *__restrict__ leaf_of_row, const LeafOut *__restrict__ leaves, int n,
                            const double *__restrict__ base, const double *__restrict__ inv_t,
                            double *__restrict__ score, ScoreCheck chk) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double s = add_tree(score[i], leaves[leaf_of_row[i]].value, base, i, inv_t);
    score[i] = s;
    check_score(s, chk);
  }
}

// Validation rows: route and add in one pass.
__global__ void __launch_bounds__(kRouteThreads)
k_route_add(const NodeRoute *__restrict__ route, const Ctl *c, const LeafOut *__restrict__ leaves,
            const uint32_t *__restrict__ bins, int stride, int n, const double *__restrict__ base,
            const double *__restrict__ inv_t, double *__restrict__ score, ScoreCheck chk) {
  __shared__ NodeRoute snodes[kMaxSharedNodes];
  const int nl = c->num_leaves;
  const NodeRoute *nodes = stage_nodes(route, nl, snodes);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double s = add_tree(score[i], leaves[route_words(nodes, nl, bins + (size_t)i * stride)].value, base, i, inv_t);
    score[i] = s;
    check_score(s, chk);
  }
}

// DART: factor x a kept tree's leaf values (vals) added to a data set's
// scores: training rows (words NULL) routed on the learner's bins as
// k_route_train routes them, validation rows on their row-major words.
// s + factor x value, multiplied and added apart (boost.c's add_tree_scores).
__global__ void __launch_bounds__(kRouteThreads)
k_tree_add(TreeArgs a, const NodeRoute *__restrict__ route, int nl, const double *__restrict__ vals, double factor,
           const uint32_t *__restrict__ words, int stride, int n, double *__restrict__ score) {
  __shared__ NodeRoute snodes[kMaxSharedNodes];
  const NodeRoute *nodes = stage_nodes(route, nl, snodes);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int leaf = words ? route_words(nodes, nl, words + (size_t)i * stride)
                           : route_row(nodes, nl, [&a, i](int f) { return read_bin(bin_reader(a, f), i); });
    score[i] = __dadd_rn(score[i], __dmul_rn(factor, vals[leaf]));
  }
}

int tree_add_launch(const TreeArgs &a, const NodeRoute *route, int nl, const double *vals, double factor,
                    const uint32_t *words, int stride, int n, double *score, int grid, cudaStream_t st) {
  if (n < 1) return HB_OK;
  HB_SAME_CARVEOUT(k_tree_add);
  k_tree_add<<<grid, kRouteThreads, 0, st>>>(a, route, nl, vals, factor, words, stride, n, score);
  HB_CUDA_TRY(cudaGetLastError(), "the DART routing kernel");
  return HB_OK;
}

int route_train_launch(const TreeArgs &a, int n, const uint8_t *inbag, const double *g, const double *h,
                       const RoundScales *rs, QuantArgs q, int *leaf_of_row, unsigned long long *sums, int grid,
                       cudaStream_t st) {
  HB_CUDA_TRY(cudaMemsetAsync(sums, 0, sizeof(unsigned long long) * 2 * (size_t)a.max_leaves, st),
              "clearing the leaf sums");
  HB_SAME_CARVEOUT(k_route_train);
  k_route_train<<<grid, kRouteThreads, 0, st>>>(a, n, inbag, g, h, rs, q, leaf_of_row, sums);
  HB_CUDA_TRY(cudaGetLastError(), "the routing kernel");
  return HB_OK;
}

int leaf_values_launch(const TreeArgs &a, int n, const RoundScales *rs, QuantArgs q, int *leaf_of_row,
                       const unsigned long long *sums, LeafOut *leaf_out, const double *rate, const double *base,
                       const double *inv_t, double *score, ScoreCheck chk, int add, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_leaf_values);
  k_leaf_values<<<(a.max_leaves + 255) / 256, 256, 0, st>>>(a, sums, rs, q, rate, leaf_out);
  HB_CUDA_TRY(cudaGetLastError(), "the leaf value kernel");
  return add ? score_add_launch(leaf_of_row, leaf_out, n, base, inv_t, score, chk, grid, st) : HB_OK;
}

int score_add_launch(const int *leaf_of_row, const LeafOut *leaf_out, int n, const double *base, const double *inv_t,
                     double *score, ScoreCheck chk, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_add_train);
  k_add_train<<<grid, 256, 0, st>>>(leaf_of_row, leaf_out, n, base, inv_t, score, chk);
  HB_CUDA_TRY(cudaGetLastError(), "the score kernel");
  return HB_OK;
}

int score_valid_launch(const TreeArgs &a, const LeafOut *leaf_out, const uint32_t *bins, int stride, int n,
                       const double *base, const double *inv_t, double *score, ScoreCheck chk, int grid,
                       cudaStream_t st) {
  HB_SAME_CARVEOUT(k_route_add);
  k_route_add<<<grid, kRouteThreads, 0, st>>>(a.route, a.ctl, leaf_out, bins, stride, n, base, inv_t, score, chk);
  HB_CUDA_TRY(cudaGetLastError(), "the validation routing kernel");
  return HB_OK;
}

}  // namespace hbc
