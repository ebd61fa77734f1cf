// partition.cu: splitting a leaf's rows between its two children on the
// device.
//
// A leaf owns the segment [begin, begin + count) of one of two row buffers
// (its "side"); each position holds a row index and the row's fixed-point
// (g, h), so a histogram reads a leaf's gradients contiguously. Splitting the
// leaf scatters its segment into the other buffer at the same place, left
// rows first, in one kernel: each block counts its chunk, reserves room for
// it on each side with an atomic add, and scatters it (so a side's rows keep
// their order within a chunk, not across chunks: every sum over a leaf's
// rows is an integer sum, the same in any order). The other leaves'
// segments stay where they are, in whichever buffer holds them, so nothing
// is copied back.
//
// The count reads the split feature's bin of each row from a
// feature-major copy of the bins (one byte per row and feature, made once
// when the rows are uploaded): a leaf's rows come in long ascending runs (a
// chunk keeps its order), so those of a large leaf share 32-byte memory sectors, where the row-major
// bins cost a sector per row for the one byte wanted. On an H100 at 10.5
// million rows this took the partition from 28 to 18 us per split.
//
// The last block to finish then lays out the children: exact
// counts and sums, which child's histogram is built (the smaller) and which
// is derived by subtraction, histogram slots, and whether each child may be
// split further.
#include "learner.cuh"

namespace hbc {

namespace {
constexpr int kPartThreads = 512;
constexpr int kFastPer = 8;                          // rows per thread of the one-block path
constexpr int kFastRows = kFastPer * kPartThreads;   // leaves up to this many rows take it
// Rows a thread has in flight at once in the passes over large leaves: each
// row's reads (its index, then its bin) wait on memory, so a thread issues
// those of several rows before it uses any.
constexpr int kCountBatch = 8;
constexpr int kScatterBatch = 4;

__device__ __forceinline__ void chunk_of(int n, int b, int nb, int &begin, int &end) {
  int chunk = (n + nb - 1) / nb;
  if (chunk < kPartThreads) chunk = kPartThreads;
  long long b0 = (long long)b * chunk;
  begin = b0 < n ? (int)b0 : n;
  end = b0 + chunk < n ? (int)(b0 + chunk) : n;
}

__device__ __forceinline__ int goes_left(const uint32_t *sbits, int bin) { return (sbits[bin >> 5] >> (bin & 31)) & 1u; }

__device__ __forceinline__ int block_count(int v, int *tmp) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (lane == 0) tmp[w] = v;
  __syncthreads();
  int s = 0;
  for (int k = 0; k < nw; k++) s += tmp[k];
  __syncthreads();
  return s;
}

// Exclusive rank of each thread's flag among the block's flags, and the total.
__device__ __forceinline__ int block_rank(int flag, int *tmp, int &total) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const unsigned m = __ballot_sync(0xffffffffu, flag);
  const int in_warp = __popc(m & ((1u << lane) - 1u));
  if (lane == 0) tmp[w] = __popc(m);
  __syncthreads();
  int before = 0;
  total = 0;
  for (int k = 0; k < nw; k++) {
    if (k < w) before += tmp[k];
    total += tmp[k];
  }
  __syncthreads();
  return before + in_warp;
}
}  // namespace

// What the partition kernel reads of the control block, all at their start
// (one round trip): the leaf being split is copied into it (learner.cuh).
struct PartView {
  int done, l, r, feature, is_cat, next_slot, num_leaves, nfree;
  long long lg, lh;  // the split's left sums
  int ln;            // the split's left rows as its search estimated them
  double scale_g, scale_h;
  Leaf lf;
};

__device__ __forceinline__ PartView part_view(const Ctl *c) {
  PartView v;
  v.done = c->done;
  v.l = c->cur_leaf;
  v.r = c->new_leaf;
  v.feature = c->cur.feature;
  v.is_cat = c->cur.is_cat;
  v.next_slot = c->next_slot;
  v.num_leaves = c->num_leaves;
  v.nfree = c->nfree;
  v.lg = c->cur.lg;
  v.lh = c->cur.lh;
  v.ln = c->cur.ln;
  v.scale_g = c->scale_g;
  v.scale_h = c->scale_h;
  v.lf = c->cur_lf;
  return v;
}

// Lay out the two children of the leaf being split (total_left of its rows
// going left) once its rows are scattered: exact counts and sums, which
// child's histogram is built and which derived, slots, and whether each may
// split. gl, gr: the children's rows over every process (data-parallel;
// else total_left and the rest), which everything but the segments goes by,
// so that every process decides alike. Run by one whole block.
static __device__ void layout_children(const TreeArgs &a, Ctl *c, const PartView &v, int total_left, int gl,
                                       int gr) {
  const Leaf &lf = v.lf;
  const int n = lf.count, l = v.l, r = v.r;
  if (threadIdx.x == 0) {
    const int cl = total_left, cr = n - total_left;
    const int depth = lf.depth + 1;
    int nfree = v.nfree;
    Leaf L = lf, R = lf;
    L.count = cl;
    L.n = gl;
    L.side = R.side = 1 - lf.side;
    R.begin = lf.begin + cl;
    R.count = cr;
    R.n = gr;
    L.depth = R.depth = depth;
    L.g = v.lg;
    L.h = v.lh;
    R.g = lf.g - v.lg;
    R.h = lf.h - v.lh;
    L.slot = R.slot = -1;
    L.l2 = R.l2 = hb_rule_child_l2(v.is_cat, a.nbin[v.feature], a.max_cat_to_onehot, a.l2, a.cat_l2);
    if (a.ext) {
      // the children's outputs, capped and smoothed towards the leaf's with
      // the rows the search counted, then bounded (the CPU's record_split)
      const double gl_ = (double)L.g * v.scale_g, hl_ = (double)L.h * v.scale_h;
      const double gr_ = (double)R.g * v.scale_g, hr_ = (double)R.h * v.scale_h;
      const double po = leaf_out_ext(a, lf.out, (double)lf.g * v.scale_g, (double)lf.h * v.scale_h, lf.n);
      double o[2] = {hb_rule_leaf_output_ext(gl_, hl_, v.ln, a.l1, L.l2, a.mds, a.smooth, po),
                     hb_rule_leaf_output_ext(gr_, hr_, lf.n - v.ln, a.l1, L.l2, a.mds, a.smooth, po)};
      if (a.mono) {
        double b[4];
        hb_rule_bound_children_given(lf.lo, lf.hi, o[0], o[1], v.is_cat ? 0 : a.mono[v.feature], b, o);
        L.lo = b[0];
        L.hi = b[1];
        R.lo = b[2];
        R.hi = b[3];
      }
      L.out = o[0];
      R.out = o[1];
    } else if (a.mono) {  // the children's output bounds (split_rules.h, as the CPU's)
      double b[4], o[2];
      hb_rule_bound_children(lf.lo, lf.hi, (double)L.g * v.scale_g, (double)L.h * v.scale_h, (double)R.g * v.scale_g,
                             (double)R.h * v.scale_h, a.l1, L.l2, v.is_cat ? 0 : a.mono[v.feature], b, o);
      L.lo = b[0];
      L.hi = b[1];
      R.lo = b[2];
      R.hi = b[3];
    }
    if (a.ngroups > 0) {  // the children keep the groups that hold the split's column (grow.c's record_split)
      const DrawArgs &d = *a.dr;
      const int col = d.fcol[v.feature];
      unsigned long long *wl = d.leaf_grp + (size_t)l * d.gw, *wr = d.leaf_grp + (size_t)r * d.gw;
      for (int k = 0; k < a.ngroups; k++)
        if (!d.grp_col[(size_t)k * d.ncol + col]) wl[k >> 6] &= ~(1ull << (k & 63));
      for (int w = 0; w < d.gw; w++) wr[w] = wl[w];
    }
    const int node = r - 1;
    a.nodes[node].ln = gl;
    a.nodes[node].rn = gr;
    a.nodes[node].lout = L.out;  // the host's tree keeps them as internal values (a.ext)
    a.nodes[node].rout = R.out;
    const int full = v.num_leaves >= a.max_leaves;
    const int depth_ok = a.max_depth <= 0 || depth < a.max_depth;
    L.splittable = !full && depth_ok && hb_rule_splittable(gl, (double)L.h * v.scale_h, a.min_data, a.min_hess);
    R.splittable = !full && depth_ok && hb_rule_splittable(gr, (double)R.h * v.scale_h, a.min_data, a.min_hess);
    const int parent_slot = lf.slot;
    if (!L.splittable && !R.splittable) {
      if (parent_slot >= 0) a.free_slots[nfree++] = parent_slot;
      a.free_slots[nfree++] = v.next_slot;
      c->build = 0;
      c->small = c->large = -1;
      c->find_small = c->find_large = 0;
      c->small_slot = c->parent_slot = -1;
    } else {
      const int small = gl <= gr ? l : r;
      const Leaf &S = small == l ? L : R;
      const Leaf &B = small == l ? R : L;
      c->small = small;
      c->large = small == l ? r : l;
      c->child_lf[0] = S;
      c->child_lf[1] = B;
      c->find_small = S.splittable;
      c->find_large = B.splittable;
      c->small_slot = v.next_slot;
      c->parent_slot = parent_slot;
      c->build = 1;
      if (!B.splittable) {  // the larger child needs no histogram: the parent's slot is free now
        a.free_slots[nfree++] = parent_slot;
        c->parent_slot = -1;
      }
    }
    c->nfree = nfree;
    a.leaves[l] = L;
    a.leaves[r] = R;
    c->ticket2 = 0;
  }
  __syncthreads();
}

// Data-parallel training (a.dist), by the block that has this process's
// count (total_left of the leaf's n rows going left): peer to peer, the
// counts posted, every process's added and the children laid out here;
// else the count left for the host, which sums the processes' and launches
// k_layout.
static __device__ void layout_dist(const TreeArgs &a, Ctl *c, const PartView &v, int total_left) {
  const XArgs &x = a.x;
  if (!x.peers) {
    if (threadIdx.x == 0) c->dist_left = total_left;
    return;
  }
  __shared__ long long sum[2];
  if (threadIdx.x == 0) {
    XHead *me = x.peers[x.rank];
    const unsigned long long epoch = me->seq + 1;
    long long *out = xvalues(me, x.len, epoch);
    out[0] = total_left;
    out[1] = (long long)v.lf.count - total_left;
    __threadfence_system();
    xpost(me, epoch);
    xwait(x, epoch);
    sum[0] = sum[1] = 0;
    for (int p = 0; p < x.size; p++) {
      const volatile long long *in = xvalues(x.peers[p], x.len, epoch);
      sum[0] += in[0];
      sum[1] += in[1];
    }
  }
  __syncthreads();
  layout_children(a, c, v, total_left, (int)sum[0], (int)sum[1]);
}

// Clear this block's share of the slot the smaller child's histogram will
// sum into (the histogram kernel adds with atomics).
__device__ __forceinline__ void clear_slot_share(const TreeArgs &a, int slot) {
  const int per = (a.total_bins + gridDim.x - 1) / gridDim.x;
  const int k0 = blockIdx.x * per, k1 = k0 + per < a.total_bins ? k0 + per : a.total_bins;
  Bin *h = a.hist + (size_t)slot * a.total_bins;
  for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) h[k] = Bin{0, 0};
}

// A thread per row: its bytes of features f0 to f1 - 1 in from their
// columns (the reads of a warp from one column are contiguous), their words
// out; the last group (f1 == nfeat) also zeroes the padding words.
__global__ void k_rows(const uint8_t *__restrict__ cols, int f0, int f1, int nfeat, int nrow,
                       uint32_t *__restrict__ bins, int stride, int bits) {
  const int fpw = 32 / bits;  // features a word
  const int w0 = f0 / fpw, w1 = f1 == nfeat ? stride : (f1 + fpw - 1) / fpw;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nrow; i += gridDim.x * blockDim.x) {
    uint32_t *rb = bins + (size_t)i * stride;
    for (int w = w0; w < w1; w++) {
      uint32_t q = 0;
      for (int k = 0; k < fpw && fpw * w + k < f1; k++)
        q |= (uint32_t)cols[(size_t)(fpw * w + k - f0) * nrow + i] << (bits * k);
      rb[w] = q;
    }
  }
}

// One pass: each block counts the left-going rows of its chunk (keeping
// the per-row decisions in `flags`), reserves room for its left rows at the
// front of the segment and for its right rows at the back with one atomic
// add each, and scatters its chunk there; the last block to finish lays out
// the children. Within a block's chunk each side keeps its order; the
// chunks' places depend on which block reserved first, so the order of a
// leaf's rows is not the row order. Nothing depends on it: every sum over
// rows is an integer sum (exact in any order), and the rows handed to the
// host (l1, quantile) come from the routing, in row order. A small leaf is
// done by block 0 alone.
__global__ void __launch_bounds__(kPartThreads) k_partition(TreeArgs a) {
  HB_WAIT_PREVIOUS();
  Ctl *c = a.ctl;
  HB_TL_MIN(c, 0);
  if (blockIdx.x == 0) HB_TL_MAX(c, 10);
  __shared__ uint32_t sbits[kBinWords];
  __shared__ int tmp[32];
  const PartView v = part_view(c);
  if (threadIdx.x < kBinWords) sbits[threadIdx.x] = c->cur.bins[threadIdx.x];
  if (v.done) return;
  const Leaf &lf = v.lf;
  // The split feature's bins (its column when there is one: the rows of a
  // chunk, in ascending runs, share its 32-byte sectors).
  const BinReader col = bin_reader(a, v.feature);
  clear_slot_share(a, v.next_slot);
  __syncthreads();
  if (blockIdx.x == 0) HB_TL_MAX(c, 11);
  const int n = lf.count;
  const int *idx = (lf.side ? a.idx[1] : a.idx[0]) + lf.begin;
  const int2 *gh_in = (lf.side ? a.gh[1] : a.gh[0]) + lf.begin;
  int *idx_out = (lf.side ? a.idx[0] : a.idx[1]) + lf.begin;
  int2 *gh_out = (lf.side ? a.gh[0] : a.gh[1]) + lf.begin;
  if (n <= kFastRows) {
    // A small leaf: block 0 does the whole partition and the layout.
    if (blockIdx.x != 0) return;
    int fl[kFastPer], mine = 0;
#pragma unroll
    for (int k = 0; k < kFastPer; k++) {
      const int i = threadIdx.x + k * kPartThreads;
      fl[k] = 0;
      if (i < n) {
        fl[k] = goes_left(sbits, read_bin(col, idx[i]));
      }
      mine += fl[k];
    }
    const int total_left = block_count(mine, tmp);
    int before = 0;
#pragma unroll
    for (int k = 0; k < kFastPer; k++) {
      if (k * kPartThreads >= n) break;
      const int i = threadIdx.x + k * kPartThreads;
      int tile_left;
      const int rank = block_rank(fl[k], tmp, tile_left);
      if (i < n) {
        const int lefts_before = before + rank;
        const int dst = fl[k] ? lefts_before : total_left + (i - lefts_before);
        idx_out[dst] = idx[i];
        gh_out[dst] = gh_in[i];
      }
      before += tile_left;
    }
    HB_TL_MAX(c, 1);
    if (a.dist) layout_dist(a, c, v, total_left);
    else layout_children(a, c, v, total_left, total_left, n - total_left);
    HB_TL_MAX(c, 2);
    return;
  }
  int begin, end;
  chunk_of(n, blockIdx.x, gridDim.x, begin, end);
  uint8_t *flags = a.flags + lf.begin;
  int mine = 0;
  for (int i0 = begin + threadIdx.x; i0 < end; i0 += kCountBatch * kPartThreads) {
    int r[kCountBatch], q[kCountBatch];
#pragma unroll
    for (int u = 0; u < kCountBatch; u++) {
      const int i = i0 + u * kPartThreads;
      r[u] = i < end ? idx[i] : -1;
    }
#pragma unroll
    for (int u = 0; u < kCountBatch; u++) q[u] = r[u] >= 0 ? read_bin(col, r[u]) : 0;
#pragma unroll
    for (int u = 0; u < kCountBatch; u++) {
      if (r[u] < 0) break;
      const int fl = goes_left(sbits, q[u]);
      flags[i0 + u * kPartThreads] = (uint8_t)fl;
      mine += fl;
    }
  }
  const int chunk_left = block_count(mine, tmp);  // (each thread reads back only the flags it wrote)
  // Room for the chunk: its left rows from the front, its right rows from the back.
  __shared__ int s_left0, s_right0;
  if (threadIdx.x == 0 && begin < end) {
    s_left0 = atomicAdd(&c->part_left, chunk_left);
    s_right0 = n - atomicAdd(&c->part_right, (end - begin) - chunk_left) - ((end - begin) - chunk_left);
  }
  __syncthreads();
  const int left0 = s_left0, right0 = s_right0;
  int before = 0;  // left rows of the chunk before the current tile
  // kScatterBatch tiles of a row per thread at once: their reads first, then
  // one barrier for the ranks of all of them.
  __shared__ int wcnt[kScatterBatch][kPartThreads / 32];  // left rows per tile and warp
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const unsigned lanes_before = (1u << lane) - 1u;
  for (int s = begin; s < end; s += kScatterBatch * kPartThreads) {
    int fl[kScatterBatch], id[kScatterBatch], in_warp[kScatterBatch];
    int2 gv[kScatterBatch];
#pragma unroll
    for (int u = 0; u < kScatterBatch; u++) {
      const int i = s + u * kPartThreads + threadIdx.x;
      fl[u] = i < end ? flags[i] : 0;
      id[u] = i < end ? idx[i] : 0;
      gv[u] = i < end ? gh_in[i] : make_int2(0, 0);
    }
#pragma unroll
    for (int u = 0; u < kScatterBatch; u++) {
      const unsigned m = __ballot_sync(0xffffffffu, fl[u]);
      in_warp[u] = __popc(m & lanes_before);
      if (lane == 0) wcnt[u][w] = __popc(m);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kScatterBatch; u++) {
      int wb = 0, tile_left = 0;
      for (int k = 0; k < kPartThreads / 32; k++) {
        const int c2 = wcnt[u][k];
        tile_left += c2;
        if (k < w) wb += c2;
      }
      const int i = s + u * kPartThreads + threadIdx.x;
      if (i < end) {
        const int lefts_before = before + wb + in_warp[u];
        const int dst = fl[u] ? left0 + lefts_before : right0 + (i - begin - lefts_before);
        idx_out[dst] = id[u];
        gh_out[dst] = gv[u];
      }
      before += tile_left;
    }
    __syncthreads();
  }
  // The last block to finish lays out the two children.
  __threadfence();
  __shared__ int last;
  if (threadIdx.x == 0) last = atomicAdd(&c->ticket2, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  HB_TL_MAX(c, 1);
  __shared__ int s_total_left;
  if (threadIdx.x == 0) {
    s_total_left = *(volatile int *)&c->part_left;
    c->part_left = c->part_right = 0;
  }
  __syncthreads();
  if (a.dist) {
    if (threadIdx.x == 0) c->ticket2 = 0;  // (layout_children resets it too)
    layout_dist(a, c, v, s_total_left);
  } else {
    layout_children(a, c, v, s_total_left, s_total_left, n - s_total_left);
  }
  HB_TL_MAX(c, 2);
}

// Data-parallel training: the layout, once the host has written every
// process's counts into the control block.
__global__ void k_layout(TreeArgs a) {
  Ctl *c = a.ctl;
  const PartView v = part_view(c);
  if (v.done) return;
  layout_children(a, c, v, c->dist_left, c->glob_left, c->glob_right);
}

int layout_launch(const TreeArgs &a, cudaStream_t st) {
  k_layout<<<1, 32, 0, st>>>(a);
  HB_CUDA_TRY(cudaGetLastError(), "the layout kernel");
  return HB_OK;
}

int rows_launch(const uint8_t *cols, int f0, int f1, int nfeat, int nrow, uint32_t *bins, int stride, int bits,
                cudaStream_t st) {
  if (nrow < 1) return HB_OK;
  const int grid = nrow / 256 + 1 < 4096 ? nrow / 256 + 1 : 4096;
  k_rows<<<grid, 256, 0, st>>>(cols, f0, f1, nfeat, nrow, bins, stride, bits);
  HB_CUDA_TRY(cudaGetLastError(), "the row packing kernel");
  return HB_OK;
}

int partition_grid() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    cudaGetLastError();
    return 128;
  }
  return 2 * sms;
}

int partition_launch(const TreeArgs &a, int grid, cudaStream_t st) {
  HB_SAME_CARVEOUT(k_partition);
  return launch_pdl(k_partition, dim3(grid), dim3(kPartThreads), 0, st, "the partition kernel", a);
}

}  // namespace hbc
