// gradient.cu: what a tree starts from on the device: gradients and
// hessians of the loss (the CPU's formulas, src/engine/objective.c), the
// in-bag rows (the CPU's counter-based draws, rng.h), and the root: its rows
// in the first row buffer with their fixed-point (g, h), the scales of this
// tree, and a fresh control block.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include "learner.cuh"
extern "C" {
#include "rng.h"
#include "quantize.h"
#include "math_rules.h"
#include "objective_rules.h"
}

namespace hbc {

// g, h (K x n, column-major) of every row for the round's scores.
__global__ void k_gradients(int objective, hb_obj_param_t q, int n, int K, const double *__restrict__ label,
                            const double *__restrict__ weight, const double *__restrict__ score,
                            double *__restrict__ g, double *__restrict__ h) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double w = weight ? weight[i] : 1.0;
    if (objective == HB_OBJ_MULTICLASSOVA) {  // class k against the rest (objective.c's loop)
      const int y = (int)label[i];
      for (int k = 0; k < K; k++) {
        const size_t j = (size_t)k * n + i;
        hb_obj_row(HB_OBJ_BINARY, q, k == y ? 1.0 : 0.0, score[j], w, &g[j], &h[j]);
      }
    } else if (objective != HB_OBJ_MULTICLASS) {  // the CPU's formulas (objective_rules.h)
      hb_obj_row(objective, q, label[i], score[i], w, &g[i], &h[i]);
    } else {
      double mx = score[i];
      for (int k = 1; k < K; k++) mx = fmax(mx, score[(size_t)k * n + i]);
      double sum = 0.0;
      for (int k = 0; k < K; k++) sum += hb_exp(score[(size_t)k * n + i] - mx);
      const int y = (int)label[i];
      const double factor = (double)K / (K - 1);
      for (int k = 0; k < K; k++) {
        const size_t j = (size_t)k * n + i;
        const double p = hb_exp(score[j] - mx) / sum;
        g[j] = w * (p - (k == y ? 1.0 : 0.0));
        h[j] = w * factor * p * (1.0 - p);
      }
    }
  }
}

// Interleaved (g, h) pairs (the host's layout) into the g and h arrays.
__global__ void k_split_pairs(const double *__restrict__ gh, size_t m, double *__restrict__ g, double *__restrict__ h) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < m; j += (size_t)gridDim.x * blockDim.x) {
    g[j] = gh[2 * j];
    h[j] = gh[2 * j + 1];
  }
}

int split_pairs_launch(const double *gh, size_t m, double *g, double *h, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_split_pairs);
  k_split_pairs<<<grid, 256, 0, st>>>(gh, m, g, h);
  HB_CUDA_TRY(cudaGetLastError(), "the gradient upload kernel");
  return HB_OK;
}

// Largest |g| and |h|: non-negative doubles order like their bit patterns;
// NaN counts as infinite, so it is reported rather than lost.
__global__ void k_absmax(const double *__restrict__ g, const double *__restrict__ h, int n,
                         unsigned long long *out) {
  double mg = 0, mh = 0, lh = INFINITY;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double ag = fabs(g[i]), ah = fabs(h[i]);
    mg = fmax(mg, ag == ag ? ag : INFINITY);
    mh = fmax(mh, ah == ah ? ah : INFINITY);
    lh = fmin(lh, ah);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    mg = fmax(mg, __shfl_xor_sync(0xffffffffu, mg, o));
    mh = fmax(mh, __shfl_xor_sync(0xffffffffu, mh, o));
    lh = fmin(lh, __shfl_xor_sync(0xffffffffu, lh, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&out[0], (unsigned long long)__double_as_longlong(mg));
    atomicMax(&out[1], (unsigned long long)__double_as_longlong(mh));
    atomicMin(&out[2], (unsigned long long)__double_as_longlong(lh));
  }
}

// In-bag flag of each row for bagging round `round`: the CPU's draw, keyed
// by the row's global index.
__global__ void k_bag_flags(uint64_t seed, uint64_t round, BagRates r, int n, uint64_t row0, uint8_t *inbag) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    // as config.h's hb_config_bag_fraction
    const double frac = !r.label ? r.fraction : r.label[i] > 0 ? r.pos : r.neg;
    inbag[i] = hb_rng_key_unif(seed, HB_RNG_BAGGING, round, row0 + (uint64_t)i) < frac;
  }
}

// An empty bag cannot grow a tree: then every row is in (as on the CPU).
__global__ void k_bag_fix(int n, int *nbag, int *bag_all) { *bag_all = *nbag == 0; }
__global__ void k_bag_fill(int n, const int *bag_all, uint8_t *inbag) {
  if (!*bag_all) return;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) inbag[i] = 1;
}

// ---- GOSS (the CPU's hb_goss_sample, goss.c, step for step) ----

// Each row's size: the sum over classes of |g h|, in class order.
__global__ void k_goss_size(const double *__restrict__ g, const double *__restrict__ h, int n, int K,
                            double *__restrict__ size) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    double s = 0;
    for (int k = 0; k < K; k++) s += fabs(g[(size_t)k * n + i] * h[(size_t)k * n + i]);
    size[i] = s;
  }
}

// Rows above the threshold (*thr: the top-th largest size) are kept; rows
// equal to it are flagged in `eq`; the rows above are counted in *above.
__global__ void k_goss_above(const double *__restrict__ size, const double *__restrict__ thr_at, int n,
                             uint8_t *__restrict__ keep, uint8_t *__restrict__ eq, int *above) {
  const double thr = *thr_at;
  int cnt = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    keep[i] = size[i] > thr;
    eq[i] = size[i] == thr;
    cnt += size[i] > thr;
  }
  for (int o = 16; o > 0; o >>= 1) cnt += __shfl_xor_sync(0xffffffffu, cnt, o);
  if ((threadIdx.x & 31) == 0 && cnt) atomicAdd(above, cnt);
}

// The first top - above rows equal to the threshold, in row order (ties,
// their list), are kept too (above NULL: 0).
__global__ void k_goss_ties(const int *__restrict__ ties, const int *nties, int top, const int *above,
                            uint8_t *__restrict__ keep) {
  const int m = min(top - (above ? *above : 0), *nties);
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < m; j += gridDim.x * blockDim.x) keep[ties[j]] = 1;
}

// The rest are drawn with probability keep_p (the CPU's draws), and a drawn
// row's gradients and hessians of every class are scaled by amp.
// The draws key rows by their global index row0 + i.
__global__ void k_goss_draw(uint64_t head, double keep_p, double amp, int n, int K, uint64_t row0,
                            const uint8_t *__restrict__ keep, uint8_t *__restrict__ inbag, double *__restrict__ g,
                            double *__restrict__ h) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (keep[i]) {
      inbag[i] = 1;
      continue;
    }
    const bool drawn = hb_rng_bits_unif(hb_rng_key_tail(head, row0 + (uint64_t)i)) < keep_p;
    inbag[i] = drawn;
    if (!drawn) continue;
    for (int k = 0; k < K; k++) {
      g[(size_t)k * n + i] *= amp;
      h[(size_t)k * n + i] *= amp;
    }
  }
}

// Data-parallel: how many of the rows whose size's bits above `shift + 8`
// are `prefix` have each value of the byte at `shift` (all rows at shift
// 56): a step of goss.c's select_dist. cnt: 256 counters, cleared.
__global__ void k_goss_digit(const double *__restrict__ size, int n, int shift, unsigned long long prefix,
                             unsigned long long *cnt) {
  __shared__ unsigned int c[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) c[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned long long u = (unsigned long long)__double_as_longlong(size[i]);  // sizes >= 0: bits order
    if (shift == 56 || (u >> (shift + 8)) == prefix) atomicAdd(&c[(u >> shift) & 255], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (c[b]) atomicAdd(&cnt[b], (unsigned long long)c[b]);
}

// Before GOSS starts (or when it is off this round): every row.
__global__ void k_goss_all(int n, uint8_t *inbag, int *nbag, int *bag_all) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *nbag = n;
    *bag_all = 1;
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) inbag[i] = 1;
}

// One thread: this tree's scales, and a fresh tree: the root holds the
// in-bag rows (or all), every slot but the root's is free.
__global__ void k_root_prepare(TreeArgs a, const unsigned long long *absmax, int n, int block_rows,
                               const int *nbag, const int *bag_all, int *err, RoundScales *rs, QuantArgs q,
                               const int *tree, const long long *glob) {
  Ctl *c = a.ctl;
  const double mg = __longlong_as_double((long long)absmax[0]), mh = __longlong_as_double((long long)absmax[1]);
  const double lh = __longlong_as_double((long long)absmax[2]);
  const int nroot = nbag && !*bag_all ? *nbag : n;
  // rows and root rows over every process (data-parallel), else this one's
  const double N = glob ? (double)glob[0] : (double)n;
  const int nroot_all = glob ? (int)glob[1] : nroot;
  for (int w = threadIdx.x; w < a.okw; w += blockDim.x) a.ok[w] = ~0u;  // the root may search every feature
  if (threadIdx.x == 0) {
    c->done = 0;
    // boost.c's gradients_in_range: NaN, or sums that could overflow
    if (!(mg * N <= HB_GRAD_SUM_MAX) || !(mh * N <= HB_HESS_SUM_MAX)) {
      *err |= 1;
      c->done = 1;
    }
    // A block adds at most block_rows values into one int32 counter.
    const int eg = hb_fixed_exponent(mg, block_rows, 30), eh = hb_fixed_exponent(mh, block_rows, 30);
    c->scale_g = ldexp(1.0, -eg);
    c->scale_h = ldexp(1.0, -eh);
    rs->eg = eg;
    rs->eh = eh;
    // Refit sums: int64 with room for every row at the largest magnitude.
    rs->fg = hb_fixed_exponent(mg, N, 62);
    rs->fh = hb_fixed_exponent(mh, N, 62);
    rs->tree = *tree;
    if (q.on) {
      // Quantized: the search sees integer sums times these scales.
      const int lgl = hb_quant_grad_levels(q.bits);
      const int lhl = lh == mh ? 0 : hb_quant_hess_levels(q.bits);  // a constant hessian stays exact
      rs->qlevels_g = lgl;
      rs->qlevels_h = lhl;
      rs->qscale_g = hb_quant_scale(mg, lgl);
      rs->qscale_h = lhl ? hb_quant_scale(mh, lhl) : (mh > 0 ? mh : 1.0);
      rs->rows16 = hb_quant_rows16(lgl, lhl ? lhl : 1);
      c->scale_g = rs->qscale_g;
      c->scale_h = rs->qscale_h;
    }
    c->num_leaves = 1;
    c->cur_leaf = c->new_leaf = -1;
    c->small = 0;
    c->large = -1;
    c->find_small = 1;
    c->find_large = 0;
    c->build = 1;
    c->nfree = 0;
    for (int s = a.max_leaves - 1; s >= 1; s--) a.free_slots[c->nfree++] = s;
    c->small_slot = 0;
    c->parent_slot = -1;
    c->ticket = c->ticket2 = 0;
    c->part_left = c->part_right = 0;
    Leaf root;
    root.begin = 0;
    root.count = nroot;
    root.n = nroot_all;
    root.side = 0;
    root.depth = 0;
    root.slot = 0;
    root.splittable = 1;
    root.g = root.h = 0;
    root.lo = -INFINITY;
    root.hi = INFINITY;
    root.l2 = a.l2;
    root.out = NAN;  // max_delta_step: from its sums, once its histogram is scanned (root_out)
    if (a.ngroups > 0)  // interaction constraints: the root allows every group
      for (int w = 0; w < a.dr->gw; w++) {
        const int left = a.ngroups - 64 * w;
        a.dr->leaf_grp[w] = left >= 64 ? ~0ull : (1ull << left) - 1ull;
      }
    a.leaves[0] = root;
    c->child_lf[0] = root;
    c->child_lf[1] = root;  // read (unused) by the root's larger-child blocks of k_split
    a.splits[0].feature = -1;
    a.splits[0].gain = -1.0;
    a.leaf_parent[0] = -1;
    if (nroot_all < 1 || a.max_leaves < 2) {
      c->build = 0;
      c->find_small = 0;
      c->small = -1;
    }
  }
  for (int k = threadIdx.x; k < a.total_bins; k += blockDim.x) a.hist[k] = Bin{0, 0};
}

// A row's quantized (g, h) in tree rs->tree (quantize.h; the CPU rounds the
// same values with the same draws, keyed by the row's global index).
__device__ __forceinline__ int2 quant_row(const QuantArgs &q, const RoundScales *rs, double g, double h, int r) {
  const uint64_t tree = (uint64_t)rs->tree, row = q.row0 + (uint64_t)r;
  const int gq = hb_quant_round(g, rs->qscale_g, hb_quant_uniform(q.seed, tree, row, 0), q.stochastic,
                                -rs->qlevels_g, rs->qlevels_g);
  const int hq = rs->qlevels_h ? hb_quant_round(h, rs->qscale_h, hb_quant_uniform(q.seed, tree, row, 1),
                                                q.stochastic, 0, rs->qlevels_h)
                               : 1;
  return make_int2(gq, hq);
}

// The root's rows (in-bag list, or 0..n-1) and their fixed-point (g, h).
__global__ void k_root_rows(TreeArgs a, const double *__restrict__ g, const double *__restrict__ h, int n,
                            const int *bag, const int *nbag, const int *bag_all, const RoundScales *rs, QuantArgs q) {
  const int nroot = nbag && !*bag_all ? *nbag : n;
  const int eg = rs->eg, eh = rs->eh;
  const bool use_bag = nbag && !*bag_all;
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < nroot; p += gridDim.x * blockDim.x) {
    const int r = use_bag ? bag[p] : p;
    a.idx[0][p] = r;
    if (q.on)
      a.gh[0][p] = quant_row(q, rs, g[r], h[r], r);
    else
      a.gh[0][p] = make_int2(__double2int_rn(ldexp(g[r], eg)), __double2int_rn(ldexp(h[r], eh)));
  }
}

int gradients_launch(const hb_config_t *cfg, int n, int K, const double *label, const double *weight,
                     const double *score, double *g, double *h, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_gradients);
  k_gradients<<<grid, 256, 0, st>>>(cfg->objective, hb_obj_param(cfg), n, K, label, weight, score, g, h);
  HB_CUDA_TRY(cudaGetLastError(), "the gradient kernel");
  return HB_OK;
}

int absmax_launch(const double *g, const double *h, int n, unsigned long long *out, int grid, cudaStream_t st) {
  HB_CUDA_TRY(cudaMemsetAsync(out, 0, 2 * sizeof(unsigned long long), st), "clearing the gradient range");
  HB_CUDA_TRY(cudaMemsetAsync(out + 2, 0x7f, sizeof(unsigned long long), st), "clearing the gradient range");
  HB_SAME_CARVEOUT(k_absmax);
  k_absmax<<<grid, 256, 0, st>>>(g, h, n, out);
  HB_CUDA_TRY(cudaGetLastError(), "the gradient range kernel");
  return HB_OK;
}

// Bytes of temporary storage the bag compaction (and GOSS's sort) needs for n rows.
int bag_temp_bytes(int n, int goss, size_t *bytes) {
  *bytes = 0;
  thrust::counting_iterator<int> rows(0);
  HB_CUDA_TRY(cub::DeviceSelect::Flagged(NULL, *bytes, rows, (const uint8_t *)NULL, (int *)NULL, (int *)NULL, n),
              "sizing the bagging buffers");
  if (goss) {
    size_t sort_bytes = 0;
    HB_CUDA_TRY(cub::DeviceRadixSort::SortKeys(NULL, sort_bytes, (const double *)NULL, (double *)NULL, n),
                "sizing the GOSS buffers");
    if (sort_bytes > *bytes) *bytes = sort_bytes;
  }
  return HB_OK;
}

int goss_size_launch(const GossArgs &a, int n, int K, const double *g, const double *h, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_goss_size);
  k_goss_size<<<grid, 256, 0, st>>>(g, h, n, K, a.size);
  HB_CUDA_TRY(cudaGetLastError(), "the GOSS size kernel");
  return HB_OK;
}

int goss_digit_launch(const GossArgs &a, int n, int shift, uint64_t prefix, long long *cnt, int grid,
                      cudaStream_t st) {
  HB_CUDA_TRY(cudaMemsetAsync(cnt, 0, 256 * sizeof(long long), st), "clearing the GOSS counts");
  k_goss_digit<<<grid, 256, 0, st>>>(a.size, n, shift, (unsigned long long)prefix, (unsigned long long *)cnt);
  HB_CUDA_TRY(cudaGetLastError(), "the GOSS selection kernel");
  return HB_OK;
}

int goss_keep_launch(const GossArgs &a, const double *thr, int n, uint8_t *inbag, int *bag, int *nbag, void *temp,
                     size_t temp_bytes, int grid, cudaStream_t st) {
  HB_CUDA_TRY(cudaMemsetAsync(a.above, 0, sizeof(int), st), "clearing a counter");
  k_goss_above<<<grid, 256, 0, st>>>(a.size, thr, n, a.keep, inbag, a.above);
  HB_CUDA_TRY(cudaGetLastError(), "the GOSS threshold kernel");
  thrust::counting_iterator<int> rows(0);
  size_t tb = temp_bytes;
  HB_CUDA_TRY(cub::DeviceSelect::Flagged(temp, tb, rows, inbag, bag, nbag, n, st), "the GOSS ties");
  return HB_OK;
}

int goss_draw_launch(const GossArgs &a, uint64_t seed, uint64_t round, uint64_t row0, int ties, const int *above,
                     int n, int K, double *g, double *h, uint8_t *inbag, int *bag, int *nbag, void *temp,
                     size_t temp_bytes, int grid, cudaStream_t st) {
  k_goss_ties<<<grid, 256, 0, st>>>(bag, nbag, ties, above, a.keep);
  k_goss_draw<<<grid, 256, 0, st>>>(hb_rng_key_head(seed, HB_RNG_GOSS, round), a.keep_p, a.amp, n, K, row0, a.keep,
                                    inbag, g, h);
  HB_CUDA_TRY(cudaGetLastError(), "the GOSS sampling kernel");
  thrust::counting_iterator<int> rows(0);
  size_t tb = temp_bytes;
  HB_CUDA_TRY(cub::DeviceSelect::Flagged(temp, tb, rows, inbag, bag, nbag, n, st), "the GOSS selection");
  return HB_OK;
}

int goss_launch(const GossArgs &a, uint64_t seed, uint64_t round, int n, int K, double *g, double *h, uint8_t *inbag,
                int *bag, int *nbag, int *bag_all, void *temp, size_t temp_bytes, int grid, cudaStream_t st) {
  if (!a.on) {
    k_goss_all<<<grid, 256, 0, st>>>(n, inbag, nbag, bag_all);
    HB_CUDA_TRY(cudaGetLastError(), "the GOSS kernel");
    return HB_OK;
  }
  int rc = goss_size_launch(a, n, K, g, h, grid, st);
  if (rc != HB_OK) return rc;
  size_t tb = temp_bytes;
  HB_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp, tb, a.size, a.sorted, n, 0, 64, st), "the GOSS sort");
  // the threshold: the top-th largest size; the ties kept are top - above
  if ((rc = goss_keep_launch(a, a.sorted + (n - a.top), n, inbag, bag, nbag, temp, temp_bytes, grid, st)) != HB_OK ||
      (rc = goss_draw_launch(a, seed, round, 0, a.top, a.above, n, K, g, h, inbag, bag, nbag, temp, temp_bytes, grid,
                             st)) != HB_OK)
    return rc;
  k_bag_fix<<<1, 1, 0, st>>>(n, nbag, bag_all);
  HB_CUDA_TRY(cudaGetLastError(), "the GOSS selection");
  return HB_OK;
}

int bag_launch(uint64_t seed, uint64_t round, BagRates rates, int n, uint64_t row0, int alone, uint8_t *inbag,
               int *bag, int *nbag, int *bag_all, void *temp, size_t temp_bytes, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_bag_flags);
  k_bag_flags<<<grid, 256, 0, st>>>(seed, round, rates, n, row0, inbag);
  HB_CUDA_TRY(cudaGetLastError(), "the bagging kernel");
  thrust::counting_iterator<int> rows(0);
  HB_CUDA_TRY(cub::DeviceSelect::Flagged(temp, temp_bytes, rows, inbag, bag, nbag, n, st), "the bagging selection");
  if (!alone) return HB_OK;
  k_bag_fix<<<1, 1, 0, st>>>(n, nbag, bag_all);
  HB_CUDA_TRY(cudaGetLastError(), "the bagging kernel");
  return bag_fill_launch(n, bag_all, inbag, grid, st);
}

int bag_fill_launch(int n, const int *bag_all, uint8_t *inbag, int grid, cudaStream_t st) {
  k_bag_fill<<<grid, 256, 0, st>>>(n, bag_all, inbag);
  HB_CUDA_TRY(cudaGetLastError(), "the bagging kernel");
  return HB_OK;
}

int root_launch(const TreeArgs &a, const double *g, const double *h, const unsigned long long *absmax, int n,
                int block_rows, const int *bag, const int *nbag, const int *bag_all, int *err, RoundScales *rs,
                QuantArgs q, const int *tree, const long long *glob, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_root_prepare);
  k_root_prepare<<<1, 256, 0, st>>>(a, absmax, n, block_rows, nbag, bag_all, err, rs, q, tree, glob);
  HB_CUDA_TRY(cudaGetLastError(), "the root kernel");
  HB_SAME_CARVEOUT(k_root_rows);
  k_root_rows<<<grid, 256, 0, st>>>(a, g, h, n, bag, nbag, bag_all, rs, q);
  HB_CUDA_TRY(cudaGetLastError(), "the root rows kernel");
  return HB_OK;
}

}  // namespace hbc
