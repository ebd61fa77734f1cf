// hist.cu: gradient histograms on the device (DESIGN.md sections 2-3; the
// kernel of Zhang, Si and Hsieh, "GPU-acceleration for large-scale tree
// boosting", adapted to integer sums).
//
// Bins sit on the device row-major, four 8-bit features to a 32-bit word
// (with the row's bank in the low bits of each, see below), or eight 4-bit
// features when every feature has 16 bins or fewer (max_bin <= 15): half
// the bytes, no room for banks, laid out as (4) below.
// Gradients and hessians arrive as fixed-point int32 (g * 2^exp_g, h *
// 2^exp_h, the exponents chosen each tree so that kRowsPerBlock rows of the
// largest magnitude stay within 2^30), so a block sums its rows in shared
// memory with 32-bit integer atomics (five times faster than float atomics on
// the H100, and exact) and merges its sums into the 64-bit global histogram
// with one atomic per nonzero bin. Integer sums do not depend on the order
// of the additions: the histogram is the same whatever the schedule, and
// histogram subtraction is exact.
//
// Shared-memory atomics bound the kernel (on the H100 about nine 32-bit
// atomic lanes per clock per multiprocessor, whatever the memory does), so
// everything around each atomic is kept to a few integer operations:
// (1) neighbouring lanes start at different features of a pair of words
// (the paper's interleaving), so a warp's 32 updates of one step spread over
// the pair's eight features, four lanes each; (2) a pair's eight histograms
// share its 2048 shared slots (of each sum) so that each feature owns four
// of the 32 memory banks: bin position p of feature k sits at slot 8p + k,
// bank (p % 4) * 8 + k, and the four lanes of a feature collide on banks as
// four balls in four bins rather than 32 in 32. A group's last word, when
// it has an odd count, is laid out alone: slot 4p + k, four features of
// eight banks and eight lanes each. A slot is one shift-add from the byte.
// On the H100 pairs took the root histogram from 0.275 to 0.256 ms at 255
// bins and 0.188 to 0.167 ms at 63 (words alone: 8 lanes in 8 banks).
// Quantized histograms keep words alone, pairs and octets having made
// them slower. (2b) A block that sums all of a group of five to eight
// words (a large leaf, the root) lays them out as an octet: 32 features,
// each owning one bank (slot 32p + f), lane l starting at feature l, so a
// warp's 32 atomics of a step fall in 32 banks, one wavefront each (Nsight
// Compute: 3.0 wavefronts per atomic for pairs, 37% of warp cycles stalled
// on a full MIO queue). Each lane rotates its row's eight words once (three
// select stages and a funnel shift) rather than indexing them per feature;
// a group of seven words (28 features) spends an eighth of its atomics on
// padding slots, which was still faster than masking those lanes in a
// standalone probe. (3) A feature with few bins keeps up to
// eight copies of its histogram ("banks", the paper's banked
// counters) so that the lanes adding to a three-valued feature do not pile
// onto three counters; the copies are summed when the block merges. The
// bank of a row is written into its bins once, when they are uploaded
// (hist_plan_bank_rows: position p = bin * copies + (row / 8) % copies in a
// pair, row / 4 alone), so the kernel finds a slot from the byte alone,
// with no per-feature table. (4) Words of 4-bit bins have 128 slots each,
// eight features of four banks (like a pair of 8-bit words), and a block
// summing a whole group of three or four of them lays it out as an octet of
// 16-position features (512 slots). Rows are split
// between blocks (grid.x), and feature words between blocks (grid.y) when
// one block's shared memory cannot hold every word. A global-memory kernel
// serves when even one word's histograms do not fit.
#include <cstdlib>
#include <cstring>
#include "learner.cuh"

namespace hbc {

namespace {
constexpr int kThreads = 512;
constexpr int kMinRows = 1024;  // fewest rows a block takes: small leaves use few blocks
}  // namespace

struct HistPlan {
  int nfeat, words, total_bins;
  int quant;                // quantized gradients: packed accumulators (12 bytes a slot, else 8)
  int pairs;                // words laid out in pairs (full precision), else alone (quantized)
  int octets;               // groups of 5-8 words are laid out as octets when a block takes all their words
  int nib;                  // every feature fits 4 bits (max_bin <= 15): eight features to a word, 128 slots a word
  int ngroups, max_slots, grid_x, ok;  // ok: every group fits in shared memory
  int sms;                  // the device's multiprocessors
  int *d_lg;       // per feature: log2 of its copies (bin position = bin << lg | bank)
  int *d_rsh;      // per feature: bank = (row >> rsh) % copies (k_bank_rows)
  int3 *d_groups;  // per group: first word, end word, shared slots
  int2 *d_merge;     // per bin, word by word: (first copy's slot | log2(copies) << 24 | copy shift << 27, out slot)
  int *d_merge8;     // the same .x for an octet group's blocks that take all its words
  int *d_merge_off;  // per word + 1: where its bins start in d_merge
  int *d_hoff;
};

// Which rows a histogram launch sums: the learner's smaller child (read from
// device memory when the kernel starts) or a list given by the caller.
struct RowSrc {
  const Ctl *ctl;          // non-null: leaf ctl->small (ctl->child_lf[0]), into slot ctl->small_slot
  int *idx[2];             // the learner's two row buffers
  int2 *gh[2];
  Bin *hist;               // the learner's slots
  int total_bins;
  unsigned long long *rows_seen;  // profiling: rows summed (may be null)
  const int *rows;         // caller's rows (null: 0..count-1) when ctl is null
  const int2 *rows_gh;     // caller's fixed-point (g, h) by position
  int count;
  Bin *out;
  const RoundScales *rs;   // quantized: rows a 16-bit accumulator may take
};

// Resolves a RowSrc on the device: returns false when nothing is to be built.
__device__ __forceinline__ bool resolve_rows(const RowSrc &s, const int *&idx, const int2 *&gh, int &n,
                                             Bin *&out) {
  if (s.ctl) {
    // The control block's fields at once (the smaller child is copied into it).
    const Ctl *c = s.ctl;
    const int done = c->done, build = c->build, slot = c->small_slot;
    const Leaf lf = c->child_lf[0];
    if (done || !build) return false;
    idx = (lf.side ? s.idx[1] : s.idx[0]) + lf.begin;
    gh = (lf.side ? s.gh[1] : s.gh[0]) + lf.begin;
    n = lf.count;
    out = s.hist + (size_t)slot * s.total_bins;
  } else {
    idx = s.rows;
    gh = s.rows_gh;
    n = s.count;
    out = s.out;
  }
  return n > 0;
}

// The rows [begin, end) block `b` of `nb` takes out of n: contiguous chunks
// of at least kMinRows rows (at most kRowsPerBlock, guaranteed by the grid).
__device__ __forceinline__ void block_chunk(int n, int b, int nb, int &begin, int &end) {
  int chunk = (n + nb - 1) / nb;
  if (chunk < kMinRows) chunk = kMinRows;
  chunk = (chunk + 31) & ~31;
  long long b0 = (long long)b * chunk;
  begin = b0 < n ? (int)b0 : n;
  end = b0 + chunk < n ? (int)(b0 + chunk) : n;
}

// The rows [begin, end) and feature words [wa, wb) of this block in group
// grp; false when it has none. A large leaf gives each block a chunk of rows
// and all the group's words; a leaf too small to fill the grid that way
// gives each block kMinRows rows and ONE word.
__device__ __forceinline__ bool block_work(int n, int3 grp, int pairs, int &begin, int &end, int &wa, int &wb) {
  const int per = pairs ? 2 : 1, nunit = (grp.y - grp.x + per - 1) / per;  // pairs of words (and a last word alone)
  const long long small_chunks = ((long long)n + kMinRows - 1) / kMinRows;
  if (nunit > 1 && small_chunks * nunit <= gridDim.x) {
    const int u = blockIdx.x;
    if (u >= small_chunks * nunit) return false;
    begin = (u / nunit) * kMinRows;
    end = begin + kMinRows < n ? begin + kMinRows : n;
    wa = grp.x + per * (u % nunit);
    wb = wa + per < grp.y ? wa + per : grp.y;
    return true;
  }
  block_chunk(n, blockIdx.x, gridDim.x, begin, end);
  wa = grp.x;
  wb = grp.y;
  return begin < end;
}

// What one block of a shared-memory kernel sums: the rows (resolved from
// src), its rows [begin, end) of them and its words [wa, wb) of group grp;
// false when it has nothing to do. Counts the rows for the profile.
struct BlockJob {
  const int *idx;
  const int2 *gh;
  Bin *out;
  int begin, end, wa, wb;
};

__device__ __forceinline__ bool block_job(const RowSrc &src, int3 grp, int pairs, BlockJob &j) {
  int n;
  if (!resolve_rows(src, j.idx, j.gh, n, j.out)) return false;
  if (!block_work(n, grp, pairs, j.begin, j.end, j.wa, j.wb)) return false;
  if (src.rows_seen && threadIdx.x == 0 && blockIdx.y == 0 && j.wa == grp.x)
    atomicAdd(src.rows_seen, (unsigned long long)(j.end - j.begin));
  return true;
}

// The shared slot of bin position p (bin << lg | bank) of feature k of a
// group's word wl standing alone (its last word, when the group has an odd
// count): eight banks per feature (see the top of the file).
__host__ __device__ __forceinline__ int word_slot(int wl, int k, int p) {
  return (wl << 10) | (p << 2) | k;  // bank (p % 8) * 4 + k
}

// The same for feature f8 (0..7) of the pair of words wl, wl + 1 (wl even):
// four banks per feature, worked by four lanes of a warp at a time.
__host__ __device__ __forceinline__ int pair_slot(int wl, int f8, int p) {
  return ((wl >> 1) << 11) | (p << 3) | f8;  // bank (p % 4) * 8 + f8
}

// The same for feature f32 (0..31) of an octet, the 5-8 words of a group
// that a block sums whole: one bank per feature (slot 32p + f32), lane l
// starting at feature l, so the 32 lanes of a warp add into 32 banks.
__host__ __device__ __forceinline__ int octet_slot(int f32, int p) { return (p << 5) | f32; }

// The same for feature f8 (0..7) of a word of 4-bit bins (nibbles, every
// feature with 16 bins or fewer): 128 slots a word, four banks per feature,
// worked by four lanes at a time, as in a pair of 8-bit words.
__host__ __device__ __forceinline__ int nib_slot(int wl, int f8, int p) { return (wl << 7) | (p << 3) | f8; }

// A group of nw words is laid out as an octet (by blocks taking all of it):
// five to eight 8-bit words, or three or four words of 4-bit bins.
__host__ __device__ __forceinline__ bool octet_group(int octets, int nib, int nw) {
  return octets && (nib ? nw >= 3 && nw <= 4 : nw >= 5 && nw <= 8);
}

// Shared slots of an octet: 32 features of 256 or 16 bin positions.
__host__ __device__ __forceinline__ int octet_slots(int nib) { return nib ? 512 : 8192; }

// Word wl of a group of n words is one of a pair.
__host__ __device__ __forceinline__ bool word_paired(int wl, int n) { return (wl | 1) < n; }

// Where copy b of a bin sits from its first copy: copies are consecutive
// positions (bin << lg | bank), four slots apart alone, eight in a pair,
// 32 in an octet (shift 2, 3, 5: bits 27-29 of a merge entry).
__device__ __forceinline__ int bank_step(int b, int shift) { return b << shift; }

// The shared slot of the first copy of a merge entry's bin, its copies and
// their spacing, from the table the block's layout uses.
__device__ __forceinline__ void merge_entry(int x, int &base, int &nbank, int &shift) {
  base = x & 0xffffff;
  nbank = 1 << ((x >> 24) & 7);
  shift = (x >> 27) & 7;
}

// One row's bins of the block's words rb[0..nw), the first of them word wl0
// of the block's group: add(slot) for each feature's shared-memory slot.
// Rows whose words start on a 16-byte boundary (vec) are read 16 bytes at a
// time; neighbouring lanes start at different features. Padding features
// of a last, partial word add into slots of their own that the merge skips.
template <bool kPairs, typename Add>
__device__ __forceinline__ void row_slots(const uint32_t *rb, int nw, int wl0, bool vec, int lane, Add add) {
  for (int w4 = 0; w4 < nw; w4 += 4) {
    uint32_t q4[4];
    if (vec) {
      const uint4 u = *(const uint4 *)(rb + w4);
      q4[0] = u.x; q4[1] = u.y; q4[2] = u.z; q4[3] = u.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; j++) q4[j] = w4 + j < nw ? rb[w4 + j] : 0u;
    }
#pragma unroll
    for (int j = 0; j < 4; j += kPairs ? 2 : 1) {
      const int w = w4 + j;  // wl0 is even: w and w + 1 are a pair when both are the block's
      if (w >= nw) break;
      if (kPairs && w + 1 < nw) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
          const int f8 = (k + lane) & 7;
          add(pair_slot(wl0 + w, f8, (int)(__byte_perm(q4[j], q4[j + 1], (unsigned)f8) & 255u)));
        }
      } else {
        const uint32_t q = q4[j];
#pragma unroll
        for (int k = 0; k < 4; k++) {
          const int kk = (k + lane) & 3;
          add(word_slot(wl0 + w, kk, (int)((q >> (8 * kk)) & 255u)));
        }
      }
    }
  }
}

// One row's 4-bit bins of the block's words rb[0..nw), the first of them
// word wl0 of the block's group: add(slot) for each of a word's eight
// features, neighbouring lanes starting at different features.
template <typename Add>
__device__ __forceinline__ void row_nibs(const uint32_t *rb, int nw, int wl0, int lane, Add add) {
  for (int w = 0; w < nw; w++) {
    const uint32_t q = rb[w];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const int f8 = (k + lane) & 7;
      add(nib_slot(wl0 + w, f8, (int)((q >> (4 * f8)) & 15u)));
    }
  }
}

// One row's bins of an octet (the block's words, kBits 8: five to eight
// words; kBits 4: three or four; words past nw count as zero, their
// padding slots never merged): add(slot) for each of the 32 features.
// Lane l takes word (j + l / f) % n at step j and feature (b + l) % f of it
// at step b (f features a word, n words an octet), so at every step the
// warp's 32 lanes hold 32 different features, one bank each: one
// shared-memory wavefront per atomic. The words are rotated once per row
// (select stages by l / f, a funnel shift by l % f) instead of indexed per
// feature.
template <int kBits, typename Add>
__device__ __forceinline__ void row_octet(const uint32_t *rb, int nw, bool vec, int lane, Add add) {
  constexpr int kFpw = 32 / kBits, kNw = 32 / kFpw;  // features a word, words an octet
  constexpr uint32_t kMask = (1u << kBits) - 1u;
  uint32_t q[kNw];
  if (vec) {
#pragma unroll
    for (int j = 0; j < kNw; j += 4) {
      const uint4 u = *(const uint4 *)(rb + j);
      q[j] = u.x; q[j + 1] = u.y; q[j + 2] = u.z; q[j + 3] = u.w;
    }
#pragma unroll
    for (int j = 0; j < kNw; j++) q[j] = j < nw ? q[j] : 0u;
  } else {
#pragma unroll
    for (int j = 0; j < kNw; j++) q[j] = j < nw ? rb[j] : 0u;
  }
  const int s = (lane / kFpw) & (kNw - 1), c = lane % kFpw;
#pragma unroll
  for (int k = 1; k < kNw; k <<= 1) {  // rotate by s, one power of two at a time
    uint32_t t[kNw];
#pragma unroll
    for (int j = 0; j < kNw; j++) t[j] = (s & k) ? q[(j + k) & (kNw - 1)] : q[j];
#pragma unroll
    for (int j = 0; j < kNw; j++) q[j] = t[j];
  }
#pragma unroll
  for (int j = 0; j < kNw; j++) {
    const uint32_t w = __funnelshift_r(q[j], q[j], kBits * c);  // feature b: the word's (b + c) % kFpw
    const int fw = ((j + s) & (kNw - 1)) * kFpw;
#pragma unroll
    for (int b = 0; b < kFpw; b++) add(octet_slot(fw | ((b + c) & (kFpw - 1)), (int)((w >> (kBits * b)) & kMask)));
  }
}

// Shared-memory kernel. Blocks of grid row y take the feature words of group
// y. A large leaf gives each block a chunk of rows and all the group's
// words. A leaf too small to fill the grid that way gives each block a chunk
// of kMinRows rows and ONE word: seven times the blocks for 28 features, each
// clearing and merging only its word's bins, so small leaves (most of a
// tree's splits) spread over the device instead of a few multiprocessors.
__global__ void __launch_bounds__(kThreads)
k_hist_shared(RowSrc src, const uint32_t *__restrict__ bins, int W, const int3 *__restrict__ groups,
              const int2 *__restrict__ merge, const int *__restrict__ merge8, const int *__restrict__ merge_off,
              int octets, int nib) {
  const int3 grp = groups[blockIdx.y];  // fixed: read before waiting
  HB_WAIT_PREVIOUS();
  if (src.ctl) HB_TL_MIN(src.ctl, 3);
  extern __shared__ int smem[];
  BlockJob j;
  if (!block_job(src, grp, !nib, j)) return;
  const int *idx = j.idx;
  const int2 *gh = j.gh;
  Bin *out = j.out;
  const int S = grp.z, begin = j.begin, end = j.end, wa = j.wa, wb = j.wb;
  const int nw = wb - wa, wl0 = wa - grp.x;
  const bool oct = octet_group(octets, nib, nw) && nw == grp.y - grp.x;
  const int wsh = nib ? 7 : 10;  // log2 of a word's slots
  const int s_lo = oct ? 0 : wl0 << wsh, s_hi = oct ? octet_slots(nib) : (wl0 + nw) << wsh;
  int *sg = smem, *sh = smem + S;
  for (int i = s_lo + threadIdx.x; i < s_hi; i += blockDim.x) {
    sg[i] = 0;
    sh[i] = 0;
  }
  __syncthreads();
  const int lane = threadIdx.x & 31;
  // One loop a layout (a layout choice inside the loop made the root
  // histogram 20-45% slower on the H100); 16-byte loads where rows allow.
  const bool vec = (W & 3) == 0 && (wa & 3) == 0 && (oct ? wa + (nib ? 4 : 8) <= W : nw >= 4);
#define HB_SUM_ROWS(ROW_CALL)                                     \
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {   \
    const int r = idx ? idx[i] : i;                               \
    const int2 v = gh[i];                                         \
    const uint32_t *rb = bins + (size_t)r * W + wa;               \
    auto add = [&](int slot) {                                    \
      atomicAdd(&sg[slot], v.x);                                  \
      atomicAdd(&sh[slot], v.y);                                  \
    };                                                            \
    ROW_CALL;                                                     \
  }
  if (oct && nib) {
    HB_SUM_ROWS(row_octet<4>(rb, nw, vec, lane, add))
  } else if (oct) {
    HB_SUM_ROWS(row_octet<8>(rb, nw, vec, lane, add))
  } else if (nib) {
    HB_SUM_ROWS(row_nibs(rb, nw, wl0, lane, add))
  } else {
    HB_SUM_ROWS(row_slots<true>(rb, nw, wl0, vec, lane, add))
  }
#undef HB_SUM_ROWS
  __syncthreads();
  // Merge, every thread taking bins of the block's words: the banks of each
  // bin, then one 64-bit atomic per nonzero sum.
  const int m1 = merge_off[wb];
  for (int k = merge_off[wa] + threadIdx.x; k < m1; k += blockDim.x) {
    const int2 it = merge[k];
    int base, nbank, shift;
    merge_entry(oct ? merge8[k] : it.x, base, nbank, shift);
    long long g = 0, h = 0;
    for (int b = 0; b < nbank; b++) {
      const int s = base + bank_step(b, shift);
      g += sg[s];
      h += sh[s];
    }
    Bin *o = out + it.y;
    if (g) atomicAdd((unsigned long long *)&o->g, (unsigned long long)g);
    if (h) atomicAdd((unsigned long long *)&o->h, (unsigned long long)h);
  }
  if (src.ctl) HB_TL_MAX(src.ctl, 4);
}

// Quantized gradients: one 32-bit atomic per row and feature, the gradient
// in the high 16 bits (signed) and the hessian in the low 16 (quantize.h).
// Every rs->rows16 rows, before a half could overflow, the block adds its
// packed 16-bit sums into packed 64-bit ones (gradient high, hessian low 32
// bits) and clears them; at the end it merges those into the histogram.
__global__ void __launch_bounds__(kThreads)
k_hist_quant(RowSrc src, const uint32_t *__restrict__ bins, int W, const int3 *__restrict__ groups,
             const int2 *__restrict__ merge, const int *__restrict__ merge_off, int nib) {
  const int3 grp = groups[blockIdx.y];  // fixed: read before waiting
  HB_WAIT_PREVIOUS();
  extern __shared__ int smem[];
  BlockJob j;
  if (!block_job(src, grp, 0, j)) return;
  const int *idx = j.idx;
  const int2 *gh = j.gh;
  Bin *out = j.out;
  const int S = grp.z;  // a multiple of 128: the 64-bit sums after S ints stay aligned
  const int begin = j.begin, end = j.end, wa = j.wa, wb = j.wb;
  const int wsh = nib ? 7 : 10;  // log2 of a word's slots
  const int nw = wb - wa, wl0 = wa - grp.x, s_lo = wl0 << wsh, s_hi = (wl0 + nw) << wsh;
  int *p32 = smem;
  long long *p64 = (long long *)(smem + S);
  for (int i = s_lo + threadIdx.x; i < s_hi; i += blockDim.x) {
    p32[i] = 0;
    p64[i] = 0;
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, step = src.rs->rows16;
  const bool vec = (W & 3) == 0 && (wa & 3) == 0 && nw >= 4;
  for (int sub = begin; sub < end; sub += step) {
    const int sub_end = sub + step < end ? sub + step : end;
    for (int i = sub + threadIdx.x; i < sub_end; i += blockDim.x) {
      const int r = idx ? idx[i] : i;
      const int2 v = gh[i];
      const int packed = v.x * 65536 + v.y;
      if (nib)
        row_nibs(bins + (size_t)r * W + wa, nw, wl0, lane, [&](int slot) { atomicAdd(&p32[slot], packed); });
      else
        row_slots<false>(bins + (size_t)r * W + wa, nw, wl0, vec, lane,
                         [&](int slot) { atomicAdd(&p32[slot], packed); });
    }
    __syncthreads();
    for (int i = s_lo + threadIdx.x; i < s_hi; i += blockDim.x) {
      const int p = p32[i];
      if (p) {
        const int h = p & 0xffff, g = (p - h) / 65536;  // exact division: no shift of a negative
        p64[i] += (long long)g * 4294967296LL + h;
        p32[i] = 0;
      }
    }
    __syncthreads();
  }
  const int m1 = merge_off[wb];
  for (int k = merge_off[wa] + threadIdx.x; k < m1; k += blockDim.x) {
    const int2 it = merge[k];
    int base, nbank, shift;
    merge_entry(it.x, base, nbank, shift);
    long long p = 0;
    for (int b = 0; b < nbank; b++) p += p64[base + bank_step(b, shift)];
    const long long h = p & 0xffffffffLL, g = (p - h) / 4294967296LL;
    Bin *o = out + it.y;
    if (g) atomicAdd((unsigned long long *)&o->g, (unsigned long long)g);
    if (h) atomicAdd((unsigned long long *)&o->h, (unsigned long long)h);
  }
}

// Fallback when a word's histograms do not fit in shared memory: 64-bit
// atomics straight into the global histogram (bin = position >> lg).
__global__ void __launch_bounds__(kThreads)
k_hist_global(RowSrc src, const uint32_t *__restrict__ bins, int W, int F, const int *__restrict__ hoff,
              const int *__restrict__ lg, int nib) {
  HB_WAIT_PREVIOUS();
  const int *idx;
  const int2 *gh;
  int n;
  Bin *out;
  if (!resolve_rows(src, idx, gh, n, out)) return;
  int begin, end;
  block_chunk(n, blockIdx.x, gridDim.x, begin, end);
  if (src.rows_seen && threadIdx.x == 0 && begin < end) atomicAdd(src.rows_seen, (unsigned long long)(end - begin));
  const int lane = threadIdx.x & 31;
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const int r = idx ? idx[i] : i;
    const int2 v = gh[i];
    const uint32_t *rb = bins + (size_t)r * W;
    const int fpw = nib ? 8 : 4, bits = nib ? 4 : 8;  // features a word, bits a feature
    const uint32_t mask = nib ? 15u : 255u;
    for (int w = 0; w < (F + fpw - 1) / fpw; w++) {
      const uint32_t q = rb[w];
      for (int k = 0; k < fpw; k++) {
        const int kk = (k + lane) & (fpw - 1);
        const int f = w * fpw + kk;
        if (f >= F) continue;
        const int pos = (int)((q >> (bits * kk)) & mask), shift = __ldg(lg + f);
        Bin *o = out + __ldg(hoff + f) + (pos >> shift);
        atomicAdd((unsigned long long *)&o->g, (unsigned long long)(long long)v.x);
        atomicAdd((unsigned long long *)&o->h, (unsigned long long)(long long)v.y);
      }
    }
  }
}

// Each row's bank into its bins, in place: byte f of row i becomes
// bin << lg[f] | (i >> rsh[f]) % 2^lg[f]. The lanes of a warp on one feature
// at once (at the root: rows 4 apart for a word alone, 8 apart for a pair's)
// take different banks.
__global__ void k_bank_rows(uint32_t *__restrict__ bins, int nrow, int W, int F, const int *__restrict__ lg,
                            const int *__restrict__ rsh) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nrow; i += gridDim.x * blockDim.x) {
    uint32_t *rb = bins + (size_t)i * W;
    for (int w = 0; w < (F + 3) / 4; w++) {
      uint32_t q = rb[w], o = 0;
      for (int k = 0; k < 4 && 4 * w + k < F; k++) {
        const int l = lg[4 * w + k];
        const uint32_t bin = (q >> (8 * k)) & 255u;
        o |= ((bin << l) | ((uint32_t)(i >> rsh[4 * w + k]) & ((1u << l) - 1u))) << (8 * k);
      }
      rb[w] = o;
    }
  }
}

// Copies of a feature with nb bins: the most powers of two up to eight (the
// lanes of a warp on one feature at once) that keep its bin positions below
// 256, the slots a feature has.
static int log2_banks(int nb) {
  int lg = 0;
  while (lg < 3 && (nb << (lg + 1)) <= 256) lg++;
  return lg;
}

void hist_plan_free(HistPlan *p) {
  if (!p) return;
  cudaFree(p->d_lg);
  cudaFree(p->d_rsh);
  cudaFree(p->d_groups);
  cudaFree(p->d_merge);
  cudaFree(p->d_merge8);
  cudaFree(p->d_merge_off);
  cudaFree(p->d_hoff);
  hb_free(p);
}

int hist_plan_grid(const HistPlan *p) { return p->grid_x; }

int hist_plan_row_bits(const HistPlan *p) { return p->nib ? 4 : 8; }

int hist_plan_stride(const HistPlan *p) { return row_stride_words(p->words); }

const int *hist_plan_lg(const HistPlan *p) { return p->d_lg; }

// Most rows one block sums for a histogram of up to nrow rows (block_chunk's
// largest chunk): the bound the fixed-point exponents are chosen for.
// The grid hist_plan_create gives nrow rows on a device of sms multiprocessors.
static int plan_grid_x(long long nrow, int sms) {
  const long long need = (nrow + kRowsPerBlock - 1) / kRowsPerBlock;
  return 2 * sms > need ? 2 * sms : (int)need;
}

static int block_rows_of(long long nrow, int grid_x) {
  long long chunk = (nrow + grid_x - 1) / grid_x;
  if (chunk < kMinRows) chunk = kMinRows;
  chunk = (chunk + 31) & ~31LL;
  return (int)(chunk < kRowsPerBlock ? chunk : kRowsPerBlock);
}

int hist_plan_block_rows(const HistPlan *p, int nrow) { return block_rows_of(nrow, p->grid_x); }

int hist_plan_block_rows_of(const HistPlan *p, long long N) { return block_rows_of(N, plan_grid_x(N, p->sms)); }

void hist_plan_limit_rows(HistPlan *p, int nrow, int limit) {
  const long long lim = limit & ~31;  // a chunk of at most lim rows rounds up to at most limit
  if (block_rows_of(nrow, p->grid_x) > limit && lim >= kMinRows) p->grid_x = (int)((nrow + lim - 1) / lim);
}

// Group the feature words so each group's histograms (1024 slots a word, of
// two int32 or, quantized, an int32 and an int64) fit in the shared memory a
// block may use, and size the row grid:
// enough blocks to fill the device twice over, and enough that no block sums
// more than kRowsPerBlock of nrow rows (the bound the fixed-point scale is
// chosen for).
int hist_plan_create(int nrow, int nfeat, const int *nbin, const int *hoff, int total_bins, int smem_limit,
                     int quant, HistPlan **out) {
  *out = NULL;
  int dev = 0, sms = 0, optin = 0, per_sm = 0;
  HB_CUDA_TRY(cudaGetDevice(&dev), "cudaGetDevice");
  HB_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "device query");
  HB_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "device query");
  HB_CUDA_TRY(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev),
              "device query");
  int limit = per_sm / 2 - 2048;  // two blocks per multiprocessor keep the memory system busy
  if (limit > optin) limit = optin;
  if (smem_limit > 0 && smem_limit < limit) limit = smem_limit;
  HistPlan *p = (HistPlan *)hb_calloc(1, sizeof *p);
  if (!p) return HB_ERR_NOMEM;
  p->nfeat = nfeat;
  p->words = (nfeat + 3) / 4;
  p->total_bins = total_bins;
  p->quant = quant;
  p->nib = nfeat > 0;
  for (int f = 0; f < nfeat; f++)
    if (nbin[f] > 16) p->nib = 0;
  if (p->nib) p->words = (nfeat + 7) / 8;
  p->pairs = !quant && !p->nib;
  const int W = p->words;
  int *lg = (int *)hb_malloc(sizeof(int) * (size_t)nfeat);
  int *rsh = (int *)hb_malloc(sizeof(int) * (size_t)nfeat);
  int3 *groups = (int3 *)hb_malloc(sizeof(int3) * (size_t)W);
  int2 *merge = NULL;
  int *merge8 = NULL, *merge_off = NULL;
  int nmerge = 0;
  int st = HB_OK;
  cudaError_t e = cudaSuccess;
  if (!lg || !rsh || !groups) {
    st = HB_ERR_NOMEM;
    goto done;
  }
  for (int f = 0; f < nfeat; f++) lg[f] = p->nib ? 0 : log2_banks(nbin[f]);  // no copies in 4 bits
  {
    const int wslots = p->nib ? 128 : 1024;  // shared slots a word
    const int slot_bytes = quant ? 12 : 8, per_group = limit / (slot_bytes * wslots);
    p->ok = per_group >= 1;  // else one word alone does not fit: the global kernel serves
    // Full precision: octets when an octet's words fit (eight 8-bit words,
    // 8192 slots; four of 4-bit bins, 512) and there are five (three) or
    // more; else as many words as fit, pairs kept whole.
    // Quantized: words alone, as many as fit (octets made its root
    // histogram slower on the H100: 0.270 against 0.210 ms at 255 bins).
    const int oct_words = p->nib ? 4 : 8;
    p->octets = !quant && per_group >= oct_words && octet_group(1, p->nib, W < oct_words ? W : oct_words);
    const int step = p->octets ? oct_words : per_group >= 2 && p->pairs ? per_group & ~1 : per_group >= 1 ? per_group : 1;
    for (int w = 0; w < W; w += step) {
      const int end = w + step < W ? w + step : W;
      const int slots = octet_group(p->octets, p->nib, end - w) ? octet_slots(p->nib) : (end - w) * wslots;
      groups[p->ngroups++] = make_int3(w, end, slots);
      if (slots > p->max_slots) p->max_slots = slots;
    }
  }
  p->sms = sms;
  p->grid_x = plan_grid_x(nrow, sms);
  // The merge table: word by word, its features' bins in output order, with
  // where the first of each bin's copies sits in shared memory (the copies
  // follow it).
  merge = (int2 *)hb_malloc(sizeof(int2) * (size_t)(total_bins > 0 ? total_bins : 1));
  merge8 = (int *)hb_calloc((size_t)(total_bins > 0 ? total_bins : 1), sizeof(int));
  merge_off = (int *)hb_malloc(sizeof(int) * (size_t)(W + 1));
  if (!merge || !merge8 || !merge_off) {
    st = HB_ERR_NOMEM;
    goto done;
  }
  {
    int k = 0, g = 0;
    for (int w = 0; w < W; w++) {
      while (w >= groups[g].y) g++;
      const int wl = w - groups[g].x;
      const int gw = groups[g].y - groups[g].x;
      const bool pair = p->pairs && word_paired(wl, gw), oct = octet_group(p->octets, p->nib, gw);
      merge_off[w] = k;
      if (p->nib) {
        for (int f = 8 * w; f < 8 * w + 8 && f < nfeat; f++) {
          rsh[f] = 0;
          for (int b = 0; b < nbin[f]; b++) {
            if (oct) merge8[k] = octet_slot(8 * wl + f - 8 * w, b) | (5 << 27);
            merge[k++] = make_int2(nib_slot(wl, f - 8 * w, b), hoff[f] + b);
          }
        }
        continue;
      }
      for (int f = 4 * w; f < 4 * w + 4 && f < nfeat; f++) {
        rsh[f] = pair ? 3 : 2;
        for (int b = 0; b < nbin[f]; b++) {
          const int slot = pair ? pair_slot(wl & ~1, (wl & 1) * 4 + f - 4 * w, b << lg[f])
                                : word_slot(wl, f - 4 * w, b << lg[f]);
          if (oct) merge8[k] = octet_slot(4 * wl + f - 4 * w, b << lg[f]) | (lg[f] << 24) | (5 << 27);
          merge[k++] = make_int2(slot | (lg[f] << 24) | ((pair ? 3 : 2) << 27), hoff[f] + b);
        }
      }
    }
    merge_off[W] = k;
    nmerge = k;
  }
  if ((e = cudaMalloc(&p->d_lg, sizeof(int) * (size_t)nfeat)) != cudaSuccess ||
      (e = cudaMalloc(&p->d_rsh, sizeof(int) * (size_t)nfeat)) != cudaSuccess ||
      (e = cudaMemcpy(p->d_rsh, rsh, sizeof(int) * (size_t)nfeat, cudaMemcpyHostToDevice)) != cudaSuccess ||
      (e = cudaMalloc(&p->d_groups, sizeof(int3) * (size_t)p->ngroups)) != cudaSuccess ||
      (e = cudaMalloc(&p->d_hoff, sizeof(int) * (size_t)nfeat)) != cudaSuccess ||
      (e = cudaMemcpy(p->d_lg, lg, sizeof(int) * (size_t)nfeat, cudaMemcpyHostToDevice)) != cudaSuccess ||
      (e = cudaMemcpy(p->d_groups, groups, sizeof(int3) * (size_t)p->ngroups, cudaMemcpyHostToDevice)) !=
          cudaSuccess ||
      (e = cudaMemcpy(p->d_hoff, hoff, sizeof(int) * (size_t)nfeat, cudaMemcpyHostToDevice)) != cudaSuccess ||
      (e = cudaMalloc(&p->d_merge, sizeof(int2) * (size_t)(nmerge > 0 ? nmerge : 1))) != cudaSuccess ||
      (e = cudaMalloc(&p->d_merge_off, sizeof(int) * (size_t)(W + 1))) != cudaSuccess ||
      (e = cudaMemcpy(p->d_merge, merge, sizeof(int2) * (size_t)nmerge, cudaMemcpyHostToDevice)) != cudaSuccess ||
      (e = cudaMalloc(&p->d_merge8, sizeof(int) * (size_t)(nmerge > 0 ? nmerge : 1))) != cudaSuccess ||
      (e = cudaMemcpy(p->d_merge8, merge8, sizeof(int) * (size_t)nmerge, cudaMemcpyHostToDevice)) != cudaSuccess ||
      (e = cudaMemcpy(p->d_merge_off, merge_off, sizeof(int) * (size_t)(W + 1), cudaMemcpyHostToDevice)) !=
          cudaSuccess ||
      (e = cudaFuncSetAttribute(k_hist_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, limit)) !=
          cudaSuccess ||
      (e = cudaFuncSetAttribute(k_hist_quant, cudaFuncAttributeMaxDynamicSharedMemorySize, limit)) != cudaSuccess) {
    st = hb_cuda_fail(e, "setting up the histogram kernel");
    goto done;
  }
done:
  hb_free(lg);
  hb_free(rsh);
  hb_free(groups);
  hb_free(merge);
  hb_free(merge8);
  hb_free(merge_off);
  if (st != HB_OK) {
    hist_plan_free(p);
    return st;
  }
  *out = p;
  return HB_OK;
}

static int launch(const HistPlan *p, const RowSrc &src, const uint32_t *bins, int stride, int mode,
                  cudaStream_t st) {
  if (mode == 0) mode = p->ok ? 1 : 2;
  if (mode == 1 && !p->ok)
    return hb_error_set(HB_ERR_INPUT, "a feature word's histograms exceed the shared memory of a block");
  if (mode == 2 && p->quant) return hb_error_set(HB_ERR_INPUT, "quantized histograms have no global-memory kernel");
  if (mode == 2) {
    HB_SAME_CARVEOUT(k_hist_global);
    return launch_pdl(k_hist_global, dim3(p->grid_x), dim3(kThreads), 0, st, "the global-memory histogram kernel", src,
                      bins, stride, p->nfeat, (const int *)p->d_hoff, (const int *)p->d_lg, p->nib);
  }
  if (p->quant) {
    HB_SAME_CARVEOUT(k_hist_quant);
    return launch_pdl(k_hist_quant, dim3((unsigned)p->grid_x, (unsigned)p->ngroups), dim3(kThreads),
                      (size_t)12 * p->max_slots, st, "the quantized histogram kernel", src, bins, stride,
                      (const int3 *)p->d_groups, (const int2 *)p->d_merge, (const int *)p->d_merge_off, p->nib);
  }
  HB_SAME_CARVEOUT(k_hist_shared);
  return launch_pdl(k_hist_shared, dim3((unsigned)p->grid_x, (unsigned)p->ngroups), dim3(kThreads),
                    (size_t)8 * p->max_slots, st, "the histogram kernel", src, bins, stride,
                    (const int3 *)p->d_groups, (const int2 *)p->d_merge, (const int *)p->d_merge8,
                    (const int *)p->d_merge_off, p->octets, p->nib);
}

int hist_plan_bank_rows(const HistPlan *p, uint32_t *bins, int nrow, int stride, cudaStream_t st) {
  if (nrow < 1 || p->nib) return HB_OK;  // 4-bit bins keep no copies
  const int grid = nrow / 256 + 1 < 4096 ? nrow / 256 + 1 : 4096;
  k_bank_rows<<<grid, 256, 0, st>>>(bins, nrow, stride, p->nfeat, p->d_lg, p->d_rsh);
  HB_CUDA_TRY(cudaGetLastError(), "the bank kernel");
  return HB_OK;
}

int hist_launch(const HistPlan *p, const TreeArgs &a, int mode, cudaStream_t st) {
  RowSrc src;
  memset(&src, 0, sizeof src);
  src.ctl = a.ctl;
  src.idx[0] = a.idx[0];
  src.idx[1] = a.idx[1];
  src.gh[0] = a.gh[0];
  src.gh[1] = a.gh[1];
  src.hist = a.hist;
  src.total_bins = a.total_bins;
  src.rows_seen = a.rows_seen;
  src.rs = a.rs;
  return launch(p, src, a.bins, a.stride, mode, st);
}

int hist_launch_rows(const HistPlan *p, const uint32_t *bins, int stride, const int *idx, const int2 *gh,
                     int count, Bin *out, const RoundScales *rs, int mode, cudaStream_t st) {
  RowSrc src;
  memset(&src, 0, sizeof src);
  src.rs = rs;
  src.rows = idx;
  src.rows_gh = gh;
  src.count = count;
  src.out = out;
  return launch(p, src, bins, stride, mode, st);
}

}  // namespace hbc
