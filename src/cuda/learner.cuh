// learner.cuh: what the .cu files of the GPU learner share: device-side
// state of one tree (leaves, splits, the control block that the kernels of a
// split read instead of asking the host), error handling, and the launchers
// each file exports. Internal to src/cuda; the outside sees only cuda.h.
//
// How a tree grows without the host: every split is the same fixed sequence
// of launches (partition the rows of the leaf being split;
// build the smaller child's histogram; subtract for the larger one, search
// both children's splits and pick the leaf to split next). Each kernel reads what to do from the
// control block `Ctl` in device memory, which the previous kernel wrote, and
// returns at once when the tree is finished. So the host enqueues
// num_leaves - 1 such sequences and waits once, for the finished tree.
#ifndef HB_CUDA_LEARNER_CUH
#define HB_CUDA_LEARNER_CUH
#include <cstdint>
#include <cstring>
#include <utility>
#include <cuda_runtime.h>
extern "C" {
#include "error.h"
#include "config.h"
#include "dataset.h"
#include "tree.h"
#include "split_rules.h"
#include "dist.h"
}
#include "cuda.h"

// Records a CUDA failure as an engine error (out of memory: HB_ERR_NOMEM) and
// returns the status; clears the runtime's error so later calls start clean.
int hb_cuda_fail(cudaError_t e, const char *what);
#define HB_CUDA_TRY(call, what)                                   \
  do {                                                            \
    cudaError_t e_ = (call);                                      \
    if (e_ != cudaSuccess) return hb_cuda_fail(e_, what);         \
  } while (0)
// The same inside a function with an `int st` and a `fail:` label that frees
// what was allocated: the error is recorded in st and control jumps there.
#define HB_CUDA_TRY_FAIL(call, what)              \
  do {                                            \
    cudaError_t e_ = (call);                      \
    if (e_ != cudaSuccess) {                      \
      st = hb_cuda_fail(e_, what);                \
      goto fail;                                  \
    }                                             \
  } while (0)
// Device and pinned buffers of n elements, at least one so that none is NULL.
#define HB_CUDA_DALLOC1(ptr, n, what) \
  HB_CUDA_TRY_FAIL(cudaMalloc((void **)&(ptr), sizeof(*(ptr)) * ((size_t)(n) > 0 ? (size_t)(n) : (size_t)1)), what)
#define HB_CUDA_HALLOC1(ptr, n, what) \
  HB_CUDA_TRY_FAIL(cudaMallocHost((void **)&(ptr), sizeof(*(ptr)) * ((size_t)(n) > 0 ? (size_t)(n) : (size_t)1)), what)

// Every kernel asks for the same L1/shared-memory split, the largest share
// for shared memory: consecutive kernels with different preferences make the
// multiprocessors drain and reconfigure between launches. Called once per
// kernel, at its first launch.
#define HB_SAME_CARVEOUT(kernel)                                                                       \
  do {                                                                                                 \
    static int set_ = 0;                                                                               \
    if (!set_) {                                                                                       \
      HB_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,         \
                                       cudaSharedmemCarveoutMaxShared),                                \
                  "setting a kernel's shared memory");                                                \
      set_ = 1;                                                                                        \
    }                                                                                                  \
  } while (0)

// Programmatic dependent launch (Hopper and later): a kernel of a split may
// be launched while its predecessor drains, overlapping the launch latency;
// it waits here, before reading anything its predecessor wrote.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HB_WAIT_PREVIOUS() asm volatile("griddepcontrol.wait;" ::: "memory")
#else
#define HB_WAIT_PREVIOUS() ((void)0)
#endif

// A split's timeline, for diagnostics only (tools/gpu/timeline.sh builds
// with HB_CUDA_TIMELINE defined): each kernel of a split stamps the global
// timer into the control block (the earliest block past its wait, the
// latest block end, the last blocks' tails), and the split search's last
// block prints the stamps of every split of some trees and resets them.
// Off, the stamps compile to nothing.
// #define HB_CUDA_TIMELINE
#ifdef HB_CUDA_TIMELINE
#define HB_TL_N 14
__device__ __forceinline__ unsigned long long hb_tl_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#define HB_TL_MIN(c, i)                                              \
  do {                                                               \
    if (threadIdx.x == 0) atomicMin(&((Ctl *)(c))->tl[i], hb_tl_now()); \
  } while (0)
#define HB_TL_MAX(c, i)                                              \
  do {                                                               \
    if (threadIdx.x == 0) atomicMax(&((Ctl *)(c))->tl[i], hb_tl_now()); \
  } while (0)
#else
#define HB_TL_MIN(c, i) ((void)0)
#define HB_TL_MAX(c, i) ((void)0)
#endif

namespace hbc {

// 1 when the device supports programmatic dependent launch (compute >= 9.0).
int pdl_supported();

// Launch `kernel` on stream st, as a programmatic dependent of the previous
// kernel when the device supports it.
template <typename... Params, typename... Args>
int launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t st, const char *what,
               Args &&...args) {
  cudaLaunchConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl_supported() ? 1 : 0;
  HB_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...), what);
  return HB_OK;
}

constexpr int kBinWords = 8;        // 256-bit bin sets (uint32 words)
constexpr int kRowsPerBlock = 65536;  // most rows one histogram block sums (the grid guarantees it)

// Fixed-point histogram bin: sum of round(g * 2^exp_g), round(h * 2^exp_h).
struct Bin {
  long long g, h;
};

// A leaf's best split, in bin space.
struct Split {
  double gain;           // > 0 when valid
  int feature;           // -1: no valid split
  int threshold;         // numeric: value bins <= threshold go left
  int default_left;
  int is_cat;
  long long lg, lh;      // left child's fixed-point sums
  int ln;                // left child's estimated rows
  uint32_t bins[kBinWords];  // bins going left (missing bin included when default_left)
  long long tg, th;      // the leaf's totals (scratch of the search)
};

// Exponents of this tree's fixed point: histogram sums (eg, eh: int32 per
// block) and the leaf refit sums (fg, fh: int64 over all rows); with
// quantized training, the quantization instead (quantize.h).
struct RoundScales {
  int eg, eh, fg, fh;
  double qscale_g, qscale_h;  // quantized: value per unit
  int qlevels_g, qlevels_h;   // quantized: largest magnitudes (qlevels_h 0: hessian constant, every row 1)
  int rows16;                 // quantized: rows a 16-bit packed accumulator may sum
  int tree;                   // the tree's number (round * num_class + class), for the rounding draws
};

// Quantization of a training run (constant across its rounds).
struct QuantArgs {
  int on, bits, stochastic, refit;
  uint64_t seed;
  uint64_t row0;  // global index of this process's first row (data-parallel; 0 alone): the draws' row keys
};

struct Leaf {
  int begin, count, side;  // segment [begin, begin + count) of the row buffers `side`
  int n;                   // rows over every process (data-parallel training; else count): what the
                           // search, the counts handed out and the leaf values go by
  int depth, slot;         // slot: histogram slot or -1
  int splittable;
  long long g, h;          // fixed-point sums (set when its histogram is scanned)
  double lo, hi;           // bounds of its (unshrunk) output: monotone constraints, else infinite
  double l2;               // the L2 of its output (hb_rule_child_l2)
  double out;              // max_delta_step / path_smooth (TreeArgs::ext): its unshrunk output, capped, smoothed
                           // towards its parent's and bounded (set with its sums; NAN for the root until then)
};

// Control of the tree being grown (one per learner, in device memory). The
// kernels of a split read what they need of it at once, at their start: the
// leaves they work on are copied in here, so that no kernel reads an index
// here and then the leaf it names (two dependent memory round trips).
struct Ctl {
  int done;               // no further split this tree
  int num_leaves;
  int cur_leaf, new_leaf; // the split being made
  Split cur;
  int small, large;       // children: which is histogrammed, which subtracted (-1: none)
  int small_slot, parent_slot;
  int build;              // small's histogram is needed
  int find_small, find_large;
  int nfree;
  Leaf cur_lf;            // the leaf being split (a copy of leaves[cur_leaf])
  Leaf child_lf[2];       // copies of leaves[small] and leaves[large] once laid out
  int part_left, part_right;  // rows the partition's blocks have placed on each side (reset by its last block)
  int next_slot;          // histogram slot taken when the leaf was picked, cleared by the partition
  unsigned int ticket;    // last-block-done counters (reset by the last block)
  unsigned int ticket2;
  // Data-parallel training (TreeArgs::dist): the partition leaves the layout
  // to k_layout, which runs once the host has summed the processes' counts.
  int dist_left;          // this process's rows of the split leaf going left (the partition's)
  int glob_left, glob_right;  // every process's, written by the host
  double scale_g, scale_h;  // 2^-exp: fixed point back to double (this tree)
#ifdef HB_CUDA_TIMELINE
  unsigned long long tl[HB_TL_N];  // the split's stamps (HB_TL_MIN / HB_TL_MAX)
#endif
};

// What the host needs of each split (node i of the tree is made by the i-th
// split) and of each leaf, copied back once the tree is finished.
struct NodeOut {
  int leaf, feature, threshold, flags;  // flags: 1 default left, 2 categorical
  double gain;
  long long lg, lh, rg, rh;             // children's fixed-point sums
  int ln, rn;                           // children's exact row counts
  double lout, rout;                    // TreeArgs::ext: the children's unshrunk outputs (Leaf::out)
  uint32_t bins[kBinWords];             // bins going left
};
struct LeafOut {
  double value;      // shrunk output
  double g, h;       // sums of the leaf's rows' gradients and hessians (refit, full precision)
  int count, depth;
};
// Routing of the tree on the device (training and validation score updates).
struct NodeRoute {
  int feature, left, right;  // children: >= 0 node, < 0 leaf ~c
  uint32_t bins[kBinWords];
};

// ---- exchange.cu: sums over the processes' GPUs, peer to peer ----
// Data-parallel training with one GPU a process on one machine, every GPU
// able to read the others' memory (NVLink or PCIe peer access): each
// process exports one exchange buffer (CUDA IPC) and maps the others', and
// a split's sums (the children's rows, the smaller child's histogram) are
// added on the GPUs themselves, between the kernels of the split, without
// the host: each GPU posts its values in its buffer and raises its flag,
// waits for every other's flag, and adds every process's values in rank
// order (integers: the one-process sums). The processes' GPUs run the same
// exchanges in the same order (what decides them is itself summed), so a
// sequence number kept on each GPU numbers them alike; values alternate
// between two halves of the buffer, so a process posts the next values
// only where every other has finished reading.
struct XHead {
  unsigned long long flag;  // the last exchange whose values this process has posted
  unsigned long long seq;   // exchanges this GPU has made
  unsigned int ticket;      // blocks of the current exchange that have posted their share
  int timeout;              // 1: a wait ran out (another process stopped)
};
constexpr int kXHeadBytes = 256;  // the values start here
struct XArgs {
  XHead *const *peers;  // every process's buffer, in rank order (this one's included), device memory
  int rank, size;
  long long len;        // int64 values each half holds
};
__device__ __forceinline__ long long *xvalues(XHead *h, long long len, unsigned long long epoch) {
  return (long long *)((char *)h + kXHeadBytes) + (size_t)(epoch & 1) * (size_t)len;
}
__device__ __forceinline__ unsigned long long xnow() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// One thread: wait until every process has posted exchange `epoch` (or,
// after two minutes, mark the timeout and go on, and from then on wait no
// more: the host reports it after the round).
__device__ __forceinline__ void xwait(const XArgs &x, unsigned long long epoch) {
  if (*(volatile int *)&x.peers[x.rank]->timeout) return;  // once one wait ran out, none waits again
  const unsigned long long t0 = xnow();
  for (int p = 0; p < x.size; p++) {
    const volatile unsigned long long *f = &x.peers[p]->flag;
    while (*f < epoch) {
      if (xnow() - t0 > 120000000000ull) {
        x.peers[x.rank]->timeout = 1;
        return;
      }
    }
  }
  __threadfence_system();
}
// One thread, after its values are written (and fenced): raise the flag.
__device__ __forceinline__ void xpost(XHead *me, unsigned long long epoch) {
  me->seq = epoch;
  __threadfence_system();
  *(volatile unsigned long long *)&me->flag = epoch;
}
// Everything one tree's kernels need, passed by value.
// Draws keyed by (seed, tree, node, feature or column), the CPU's (grow.c):
// extra_trees' one candidate a feature, feature_fraction_bynode's columns a
// node (fcol: each feature's column, cfirst: each column's first feature,
// ncol + 1 of them; NULL unless bynode < 1 or ngroups > 0); and interaction
// constraints (grow.c's rule): ngroups groups (0: none), grp_feat (ngroups x
// nfeat) and grp_col (ngroups x ncol) whether a group holds a feature or
// column, leaf_grp (max_leaves x gw words) each leaf's groups still allowed:
// those holding every column split on above it. In device memory (TreeArgs::dr).
struct DrawArgs {
  uint64_t seed;
  int extra;
  double bynode;
  const int *fcol, *cfirst;
  int ncol;
  int ngroups, gw;
  const uint8_t *grp_feat, *grp_col;
  unsigned long long *leaf_grp;
};

struct TreeArgs {
  const uint32_t *bins;    // nrow x stride words (row-major, 4 features of 8 bits or 8 of 4 bits a word), banked
                           // for the histogram kernels, their only reader (hist_plan_row_bits, hist_plan_stride)
  const uint8_t *cols;     // the bins feature by feature (nfeat x nrow bytes), for the partition and routing,
                           // or NULL: they read `bins` (see BinReader)
  const int *lg;           // per feature: log2 of its copies in `bins` (hist_plan_lg)
  int bits;                // bits a feature in `bins`: 8 or 4
  int nrow;
  int stride, nfeat;
  const int *hoff, *nbin;  // per feature: first histogram slot, bins (missing bin last)
  const int *is_cat;       // per feature: 1 categorical, | 2 missing values in training, | 4 the
                           // bottom scan counts from the right, | 8 the top scan ends with missing
                           // values alone left (hb_binmapper_t's missing, count_right, na_alone_left)
  const uint8_t *usable;   // per feature: may be split on in this tree (active, not trivial)
  int *idx[2];             // row buffers (ping-pong by leaf side)
  int2 *gh[2];             // fixed-point (g, h) of the rows, in segment order
  Bin *hist;               // slots x total_bins
  int total_bins;
  Leaf *leaves;
  Split *splits;           // per leaf
  Split *fbest;            // 2 x nfeat: per child, per feature
  uint8_t *seen;           // 2 x nfeat: whether fbest's feature was searched (for `ok`)
  uint32_t *ok;            // max_leaves x okw words: the features a leaf's children may search (LightGBM's
  int okw;                 // rule: not one in which the leaf's own search found no valid split); row 0 the root's
  int skip_unsplit;        // skip_unsplittable: the rule is on (else every row of `ok` stays all set)
  int *free_slots;
  uint8_t *flags;          // partition: per position, 1 = goes left
  Ctl *ctl;
  NodeOut *nodes;          // max_leaves - 1
  NodeRoute *route;        // max_leaves - 1
  int *leaf_parent;        // max_leaves
  unsigned long long *rows_seen;  // profiling: rows the histogram kernels summed
  const RoundScales *rs;   // this tree's scales
  int max_leaves;
  int dist;                // data-parallel: the children's rows are summed over the processes before the
                           // layout: by the partition's last block peer to peer (x.peers), else by the host
                           // between the partition and k_layout
  XArgs x;                 // peer to peer (exchange.cu), or x.peers NULL
  const int8_t *mono;      // per feature: monotone constraint (-1, 0, 1), or NULL for none
  // configuration
  double l1, l2, cat_l2, cat_smooth, min_hess, min_gain;
  int ext;                 // max_delta_step > 0 or path_smooth > 0: leaf outputs capped and smoothed (split_rules.h's
  double mds, smooth;      // hb_rule_leaf_output_ext), their gains taken at those outputs, as on the CPU
  // extra_trees, feature_fraction_bynode < 1 or interaction constraints (draw: 1, the split search's
  // DRAW instantiation): what they need in device memory (dr, NULL otherwise), so that every launch's
  // arguments stay as small as without them (their size costs each of a split's launches); ngroups:
  // the interaction groups (0: none), for the partition's and the root's checks
  const DrawArgs *dr;
  int draw, ngroups;
  int min_data, max_depth, max_cat_threshold, max_cat_to_onehot, min_data_per_group;
};

// A leaf's unshrunk output under max_delta_step / path_smooth (a.ext): its
// `out`, or the root's (NAN there until it splits) from its sums G, H and
// n rows, capped and never smoothed, as the CPU's grow.c.
__device__ __forceinline__ double leaf_out_ext(const TreeArgs &a, double out, double G, double H, int n) {
  return isnan(out) ? hb_rule_leaf_output_ext(G, H, n, a.l1, a.l2, a.mds, 0.0, 0.0) : out;
}

// The bins of one feature, for the partition and the routing: from the
// feature-major copy when the learner keeps one (a warp's reads of
// neighbouring rows share 32-byte sectors), else unpacked from the
// histogram kernels' row-major words (a sector a row for one byte, and
// no copy: 28 bytes a row fewer at 28 features).
struct BinReader {
  const uint8_t *col;    // the feature's column, or NULL
  const uint32_t *word;  // the feature's word of row 0
  int stride, shift, lg;
  uint32_t mask;
};
__device__ __forceinline__ BinReader bin_reader(const TreeArgs &a, int f) {
  BinReader r;
  const int fpw = 32 / a.bits;
  r.col = a.cols ? a.cols + (size_t)f * a.nrow : NULL;
  r.word = a.bins + f / fpw;
  r.stride = a.stride;
  r.shift = a.bits * (f % fpw);
  r.mask = (1u << a.bits) - 1u;
  r.lg = a.cols ? 0 : __ldg(a.lg + f);
  return r;
}
__device__ __forceinline__ int read_bin(const BinReader &r, int row) {
  if (r.col) return r.col[row];
  return (int)(((__ldg(r.word + (size_t)row * r.stride) >> r.shift) & r.mask) >> r.lg);
}

// Words a row is padded to for w words of bins: as they are up to two, four
// up to four, else a multiple of eight (16- and 32-byte loads stay aligned).
__host__ __device__ __forceinline__ int row_stride_words(int w) { return w <= 2 ? w : w <= 4 ? 4 : (w + 7) & ~7; }

// ---- launchers (each .cu exports its own) ----

// hist.cu
struct HistPlan;  // shared-memory layout of the histogram kernel
int hist_plan_create(int nrow, int nfeat, const int *nbin, const int *hoff, int total_bins, int smem_limit,
                     int quant, HistPlan **out);
void hist_plan_free(HistPlan *p);
int hist_plan_grid(const HistPlan *p);
int hist_plan_block_rows(const HistPlan *p, int nrow);
// Data-parallel training: hist_plan_block_rows of one process holding all
// N rows on this device (the bound the fixed-point scale of the
// one-process model is chosen for), after which this process's grid is
// widened so that no block of its nrow rows sums more than that.
int hist_plan_block_rows_of(const HistPlan *p, long long N);
void hist_plan_limit_rows(HistPlan *p, int nrow, int limit);
// The histogram kernels' row-major input: bits a feature (8, or 4 when every
// feature has 16 bins or fewer) and words a row.
int hist_plan_row_bits(const HistPlan *p);
int hist_plan_stride(const HistPlan *p);
// Per feature (device memory): log2 of the copies its bins are spread over
// in the row-major words (a byte holds bin << lg | copy; 0 with 4 bits).
const int *hist_plan_lg(const HistPlan *p);
// Rewrites row-major bins, in place, into the kernels' input: each byte the
// feature's bin position (bin << copies | the row's copy). Only the
// histogram kernels read the result.
int hist_plan_bank_rows(const HistPlan *p, uint32_t *bins, int nrow, int stride, cudaStream_t st);
// Histogram of leaf ctl->small (or of rows given explicitly when leaf < 0:
// idx/gh/count from `rows_*`) into slot ctl->small_slot. mode: 0 auto, 1 shared, 2 global.
int hist_launch(const HistPlan *p, const TreeArgs &a, int mode, cudaStream_t st);
int hist_launch_rows(const HistPlan *p, const uint32_t *bins, int stride, const int *idx, const int2 *gh,
                     int count, Bin *out, const RoundScales *rs, int mode, cudaStream_t st);

// gradient.cu
int gradients_launch(const hb_config_t *cfg, int n, int K, const double *label, const double *weight,
                     const double *score, double *g, double *h, int grid, cudaStream_t st);
// The host's interleaved (g, h) pairs (m of them) into g and h.
int split_pairs_launch(const double *gh, size_t m, double *g, double *h, int grid, cudaStream_t st);
// out[0..2]: largest |g|, largest |h|, smallest |h| (as the bits of non-negative doubles).
int absmax_launch(const double *g, const double *h, int n, unsigned long long *out, int grid, cudaStream_t st);
int bag_temp_bytes(int n, int goss, size_t *bytes);
// GOSS (the CPU's goss.c): this round's rows, as a bag: the top rows by
// the sum over classes of |g h|, ties at the threshold in row order, and a
// draw of the rest whose g and h are scaled by amp (in place). Off (before
// 1 / learning_rate rounds): every row.
struct GossArgs {
  int on, top;           // top = ceil(top_rate * n), within [1, n] (data-parallel: of every process's rows)
  double keep_p, amp;    // other_rate / (1 - top_rate), (1 - top_rate) / other_rate
  double *size, *sorted; // n each
  uint8_t *keep;         // n
  int *above;            // 1
  long long *cnt;        // data-parallel: 256 byte counts (learner.cu's dist_goss)
};
int goss_launch(const GossArgs &a, uint64_t seed, uint64_t round, int n, int K, double *g, double *h, uint8_t *inbag,
                int *bag, int *nbag, int *bag_all, void *temp, size_t temp_bytes, int grid, cudaStream_t st);
// Its steps, which data-parallel training (learner.cu's dist_goss) runs
// with sums over the processes between them: the sizes (into a.size); the
// counts of a byte of the sizes among those of a prefix (goss.c's
// select_dist, into 256 cleared counters); the rows above the threshold
// *thr (device memory) into a.keep and their count into a.above, the rows
// equal to it listed in bag (nbag of them; inbag their flags); then the
// first ties - (*above, or 0 when NULL) of those kept, the draws of the
// rest (keyed by the global row row0 + i), and the bag of every kept row.
int goss_size_launch(const GossArgs &a, int n, int K, const double *g, const double *h, int grid, cudaStream_t st);
int goss_digit_launch(const GossArgs &a, int n, int shift, uint64_t prefix, long long *cnt, int grid,
                      cudaStream_t st);
int goss_keep_launch(const GossArgs &a, const double *thr, int n, uint8_t *inbag, int *bag, int *nbag, void *temp,
                     size_t temp_bytes, int grid, cudaStream_t st);
int goss_draw_launch(const GossArgs &a, uint64_t seed, uint64_t round, uint64_t row0, int ties, const int *above,
                     int n, int K, double *g, double *h, uint8_t *inbag, int *bag, int *nbag, void *temp,
                     size_t temp_bytes, int grid, cudaStream_t st);
// Bagging: the draws key rows by row0 + i (their global index). `alone`:
// an empty bag then means every row (bag_all); else (data-parallel) the
// host decides that over every process and calls bag_fill_launch.
// rates: bagging_fraction, or with label (the rows' labels on the device)
// LightGBM's balanced bagging, each row at pos (label > 0) or neg (config.h).
struct BagRates {
  double fraction, pos, neg;
  const double *label;
};
int bag_launch(uint64_t seed, uint64_t round, BagRates rates, int n, uint64_t row0, int alone, uint8_t *inbag,
               int *bag, int *nbag, int *bag_all, void *temp, size_t temp_bytes, int grid, cudaStream_t st);
int bag_fill_launch(int n, const int *bag_all, uint8_t *inbag, int grid, cudaStream_t st);
// glob: NULL (one process), or device memory {rows, root rows} over every
// process (data-parallel), which the scales, the range check and the root
// then go by; absmax is then every process's.
int root_launch(const TreeArgs &a, const double *g, const double *h, const unsigned long long *absmax, int n,
                int block_rows, const int *bag, const int *nbag, const int *bag_all, int *err, RoundScales *rs,
                QuantArgs q, const int *tree, const long long *glob, int grid, cudaStream_t st);

// The check of every updated score (boost.c's score_bad): a score that is
// not finite or above hi sets `bit` in *err (device memory).
struct ScoreCheck {
  int *err;
  int bit;
  double hi;
};

// score.cu. base: NULL, or (a forest) the rows' starting scores, the
// scores then the running mean of the trees above them, inv_t (device
// memory) = 1 / the number of trees with this one.
// After a tree, in two launches (data-parallel training sums the processes'
// leaf sums between them): every training row routed to its leaf and the
// leaf sums (2 x max_leaves), then the leaf values and, with `add`, the
// training scores.
int route_train_launch(const TreeArgs &a, int n, const uint8_t *inbag, const double *g, const double *h,
                       const RoundScales *rs, QuantArgs q, int *leaf_of_row, unsigned long long *sums, int grid,
                       cudaStream_t st);
int leaf_values_launch(const TreeArgs &a, int n, const RoundScales *rs, QuantArgs q, int *leaf_of_row,
                       const unsigned long long *sums, LeafOut *leaf_out, const double *rate, const double *base,
                       const double *inv_t, double *score, ScoreCheck chk, int add, int grid, cudaStream_t st);
// The training rows' scores plus their leaves' values (what leaf_values_launch
// does last when `add`).
int score_add_launch(const int *leaf_of_row, const LeafOut *leaf_out, int n, const double *base, const double *inv_t,
                     double *score, ScoreCheck chk, int grid, cudaStream_t st);
int score_valid_launch(const TreeArgs &a, const LeafOut *leaf_out, const uint32_t *bins, int stride, int n,
                       const double *base, const double *inv_t, double *score, ScoreCheck chk, int grid,
                       cudaStream_t st);
// DART: factor x vals[leaf] added to each row's score, the rows routed
// through a kept tree of nl leaves (route: its nl - 1 nodes): the training
// rows on a's bins when words is NULL, else rows of row-major words.
int tree_add_launch(const TreeArgs &a, const NodeRoute *route, int nl, const double *vals, double factor,
                    const uint32_t *words, int stride, int n, double *score, int grid, cudaStream_t st);

// partition.cu
int partition_grid();
// Row-major bins (stride words per row, `bits` 8 or 4 a feature) of
// features f0 to f1 - 1 from their feature-major bins (cols: (f1 - f0) x
// nrow bytes). f0 starts a word; the group that ends at nfeat also writes
// the row's padding words (zero).
int rows_launch(const uint8_t *cols, int f0, int f1, int nfeat, int nrow, uint32_t *bins, int stride, int bits,
                cudaStream_t st);
int partition_launch(const TreeArgs &a, int grid, cudaStream_t st);
// Data-parallel: the children of the leaf just partitioned laid out from
// ctl's dist_left (this process) and glob_left / glob_right (every process).
int layout_launch(const TreeArgs &a, cudaStream_t st);

// split.cu: the split search of both children, then the choice of the next split
int split_launch(const TreeArgs &a, cudaStream_t st);

// exchange.cu: the buffers of the peer-to-peer sums (declared above).
struct Exchange;  // the buffers and peers of a training run (exchange.cu)
// HB_OK with *out NULL when the processes cannot exchange peer to peer (not
// on one machine, two on one GPU, no peer access, HISTBOOST_GPU_P2P=0):
// decided alike on every process. len: int64 values an exchange carries at most.
int exchange_open(const hb_dist_t *dist, long long len, Exchange **out);
void exchange_close(Exchange *x);
XArgs exchange_args(const Exchange *x);
int exchange_timed_out(const Exchange *x, int *out);
// The smaller child's histogram summed over the processes, in its slot.
int exchange_hist_launch(const TreeArgs &a, cudaStream_t st);


}  // namespace hbc

#endif
