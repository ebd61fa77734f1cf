// split.cu: split search on the device, and the choice of the next leaf.
//
// The rules are the CPU's (split_rules.h, src/engine/split.c): the same
// candidates in the same order, the same gain and count estimate, ties
// resolved the same way (the first candidate in scan order, then the lowest
// feature, then the lowest leaf). Prefix sums are taken over the integer
// histogram, so they are exact whatever order the threads add in, and each
// candidate's gain is evaluated in double by one thread.
//
// One block of 256 threads searches one (child, feature) pair, a thread per
// bin (a feature has at most 256): a candidate's gain costs a few double
// divisions, and spreading the candidates over many threads and blocks
// hides their latency (a warp per feature, eight bins a lane, was measured
// three times slower). A categorical feature's bins are sorted in shared
// memory by a bitonic network. The last block to finish reduces over
// features, records each child's best split, and picks the leaf the next
// split takes.
#include <climits>
#ifdef HB_CUDA_TIMELINE
#include <cstdio>
#endif
#include "learner.cuh"
#include "rng.h"

namespace hbc {

namespace {

constexpr int kThreads = 256;  // = the most bins of a feature
constexpr int kWarps = kThreads / 32;

// A candidate: larger gain wins, then the smaller index (scan order).
struct Cand {
  double gain;
  int idx;
};

__device__ __forceinline__ bool better(const Cand &a, const Cand &b) {
  return a.gain > b.gain || (a.gain == b.gain && a.idx < b.idx);
}

__device__ __forceinline__ Cand warp_best(Cand c) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Cand u;
    u.gain = __shfl_xor_sync(0xffffffffu, c.gain, o);
    u.idx = __shfl_xor_sync(0xffffffffu, c.idx, o);
    if (better(u, c)) c = u;
  }
  return c;
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename T>
__device__ __forceinline__ T warp_incl_scan(T v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    T u = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

// The block's best candidate, the same in every thread (two barriers).
static __device__ Cand block_best(Cand c, Cand *tmp) {
  c = warp_best(c);
  if ((threadIdx.x & 31) == 0) tmp[threadIdx.x >> 5] = c;
  __syncthreads();
  Cand b = tmp[0];
  for (int k = 1; k < (int)(blockDim.x >> 5); k++)
    if (better(tmp[k], b)) b = tmp[k];
  __syncthreads();
  return b;
}

// Inclusive prefix over the block of three sums (one barrier); `tg`, `th`,
// `tc` hold kWarps values each.
static __device__ void block_scan3(long long &g, long long &h, int &c, long long *tg, long long *th, int *tc) {
  const int w = threadIdx.x >> 5;
  g = warp_incl_scan(g);
  h = warp_incl_scan(h);
  c = warp_incl_scan(c);
  if ((threadIdx.x & 31) == 31) {
    tg[w] = g;
    th[w] = h;
    tc[w] = c;
  }
  __syncthreads();
  for (int k = 0; k < w; k++) {
    g += tg[k];
    h += th[k];
    c += tc[k];
  }
  __syncthreads();
}

// This tree's fixed-point scales (integer sums times these are the sums).
struct Scales {
  double g, h;
};

// The searched leaf as the search of one feature sees it: its output
// bounds and the feature's monotone constraint (split.h's hb_split_con_t):
// a leaf with finite bounds, or a constrained feature, takes the bounded
// gains, as on the CPU; under max_delta_step / path_smooth (a.ext) the
// leaf's own output too, which its children's are smoothed towards; with
// extra_trees the feature's one candidate.
struct LeafCtx {
  double lo, hi;
  int mono;
  bool on;     // mono != 0, or finite bounds
  double out;  // a.ext: the leaf's unshrunk output (Leaf::out; NAN: the root's, from its sums)
  bool extra;  // extra_trees: one candidate, drawn from `draw` (hb_rng_bits_pick)
  uint64_t draw;
};

// The worth a candidate's gain is taken against: L(G, H) with lambda_l2
// alone, or under a.ext the leaf's at its output (the CPU's
// hb_split_leaf_ext). Under a.ext, bd.out becomes the leaf's output. EXT
// is a.ext, a template argument so that the usual search carries none of
// the capped and smoothed gains' code (k_split<false, ...>).
template <bool EXT>
__device__ __forceinline__ double parent_gain(const TreeArgs &a, LeafCtx &bd, double Gd, double Hd, int n) {
  if (!EXT) return hb_rule_leaf_gain(Gd, Hd, a.l1, a.l2);
  bd.out = leaf_out_ext(a, bd.out, Gd, Hd, n);
  return hb_rule_parent_gain_ext(Gd, Hd, n, a.l1, a.l2, a.mds, a.smooth, bd.out);
}

template <bool EXT>
__device__ __forceinline__ double cand_gain(const TreeArgs &a, Scales sc, const LeafCtx &bd, long long gl,
                                            long long hl, int nl, double Gd, double Hd, int n, double l2,
                                            double parent) {
  if (EXT)
    return hb_rule_split_gain_ext((double)gl * sc.g, (double)hl * sc.h, nl, Gd, Hd, n, a.l1, l2, parent, a.min_data,
                                  a.min_hess, a.min_gain, bd.lo, bd.hi, bd.mono, a.mds, a.smooth, bd.out);
  if (bd.on)
    return hb_rule_split_gain_bounded((double)gl * sc.g, (double)hl * sc.h, nl, Gd, Hd, n, a.l1, l2, parent,
                                      a.min_data, a.min_hess, a.min_gain, bd.lo, bd.hi, bd.mono);
  return hb_rule_split_gain((double)gl * sc.g, (double)hl * sc.h, nl, Gd, Hd, n, a.l1, l2, parent,
                            a.min_data, a.min_hess, a.min_gain);
}

// Copy a split record with a warp's lanes, a word each.
__device__ __forceinline__ void copy_split(Split *dst, const Split *src) {
  const uint32_t *s = (const uint32_t *)src;
  uint32_t *d = (uint32_t *)dst;
  for (int k = threadIdx.x; k < (int)(sizeof(Split) / 4); k += blockDim.x) d[k] = s[k];
}

struct Shared {
  long long tg[kWarps], th[kWarps];
  int tc[kWarps];
  Cand cand[kWarps];
  long long na_g, na_h;
  int all;  // numeric: every value bin's estimated rows
  // categorical: per bin, then per sorted position
  double key[kThreads];
  int bin[kThreads];
  long long g[kThreads], h[kThreads];
  int cnt[kThreads];
  unsigned char ok[2][kThreads];  // many-vs-many: whether the first / last k + 1 are a candidate
};

// The search of feature f by the block: thread t holds bin t's sums (bg, bh);
// fl: its flags (learner.cuh's is_cat: categorical, missing values in
// training, the bottom scan counting from the right; read before the kernel
// waits). On return
// `res` (shared) holds the best split, or feature -1. EXT: a.ext;
// DRAW: the training draws (extra_trees or feature_fraction_bynode) or
// interaction constraints, so that without them none of their code is
// compiled in (k_split<EXT, false>).
template <bool EXT, bool DRAW>
static __device__ void search(const TreeArgs &a, Scales sc, LeafCtx bd, int f, int nb, int fl, long long bg,
                              long long bh, int n, Split &res, Shared &sm) {
  const bool cat = (fl & 1) != 0, nan_type = (fl & 2) != 0, count_right = (fl & 4) != 0, na_alone = (fl & 8) != 0;
  const int t = threadIdx.x, w = t >> 5;
  const long long wg = warp_sum(bg), wh = warp_sum(bh);
  if ((t & 31) == 0) {
    sm.tg[w] = wg;
    sm.th[w] = wh;
  }
  if (t == nb - 1) {  // the missing bin of a numeric feature
    sm.na_g = bg;
    sm.na_h = bh;
  }
  if (t == 0) {
    res.feature = -1;
    res.gain = -1.0;
  }
  __syncthreads();
  long long G = 0, H = 0;
  for (int k = 0; k < kWarps; k++) {
    G += sm.tg[k];
    H += sm.th[k];
  }
  const long long na_g0 = sm.na_g, na_h0 = sm.na_h;
  __syncthreads();
  if (t == 0) {
    res.tg = G;
    res.th = H;
  }
  const double Gd = (double)G * sc.g, Hd = (double)H * sc.h;
  if (!hb_rule_splittable(n, Hd, a.min_data, a.min_hess)) return;
  const double cf = hb_rule_count_factor(n, Hd);
  const int cnt = t < nb ? hb_rule_count((double)bh * sc.h, cf) : 0;
  if (!cat) {
    // Numeric: value bins 0..M-1, missing bin M; thresholds t in [0, M-1),
    // in LightGBM's two scans (split_rules.h, split.c's scan_numeric): from
    // the top, the missing bin left, then (nan_type) from the bottom, the
    // missing bin right, then every value left and missing alone right;
    // candidate indices in that order (the top scan's highest threshold
    // first), so that the lowest index wins a tie, as the CPU's order does.
    const int M = nb - 1;
    const long long na_g = na_g0, na_h = na_h0;
    const int na_n = hb_rule_count((double)na_h * sc.h, cf);
    const bool has_na = hb_rule_has_missing(na_n, (double)na_h * sc.h, Hd);
    const bool in = t < M - 1, val = t < M;
    long long pg = val ? bg : 0, ph = val ? bh : 0;
    int pc = val ? cnt : 0;
    block_scan3(pg, ph, pc, sm.tg, sm.th, sm.tc);
    if (t == M - 1) sm.all = pc;
    __syncthreads();
    const int all = sm.all;
    const double parent = parent_gain<EXT>(a, bd, Gd, Hd, n);
    Cand best = {-1.0, INT_MAX};
    int top = 1;
    long long lg = 0, lh = 0;
    int ln = 0;
    // extra_trees: threshold rt alone (of 0 .. M - 2) in either scan, never
    // every value alone (split.c's scan_numeric)
    const int rt = DRAW && bd.extra ? hb_rng_bits_pick(bd.draw, M - 1) : -1;
    if (in && (rt < 0 || t == rt)) {
      const long long tg = has_na ? na_g : 0, th = has_na ? na_h : 0;
      const int nt = hb_rule_top_scan_left(n, all, pc);
      best.gain = cand_gain<EXT>(a, sc, bd, pg + tg, ph + th, nt, Gd, Hd, n, a.l2, parent);
      best.idx = M - 2 - t;
      lg = pg + tg;
      lh = ph + th;
      ln = nt;
      if (nan_type) {
        const int nbm = hb_rule_bottom_scan_left(n, all, pc, na_n, count_right);
        Cand c2 = {cand_gain<EXT>(a, sc, bd, pg, ph, nbm, Gd, Hd, n, a.l2, parent), M + t};
        if (better(c2, best)) {
          best = c2;
          top = 0;
          lg = pg;
          lh = ph;
          ln = nbm;
        }
      }
    }
    // every value left, missing alone right (thread 0 holds it, the bottom scan's last, idx 2M - 1);
    // the same partition as the top scan's last where LightGBM's first bin is an empty zero bin,
    // missing alone left, values counted (thread 1 holds it, idx M - 1, after the top scan)
    Cand c3 = {-1.0, INT_MAX};
    if (t == 0 && nan_type && has_na && rt < 0) {
      c3.gain = cand_gain<EXT>(a, sc, bd, G - na_g, H - na_h, hb_rule_bottom_scan_all(n, all, na_n, count_right), Gd,
                               Hd, n, a.l2, parent);
      c3.idx = 2 * M - 1;
    }
    if (t == 1 && na_alone && has_na && rt < 0) {
      c3.gain = cand_gain<EXT>(a, sc, bd, G - na_g, H - na_h, all, Gd, Hd, n, a.l2, parent);
      c3.idx = M - 1;
    }
    const Cand win = block_best(better(c3, best) ? c3 : best, sm.cand);
    if (!(win.gain > 0)) return;
    if (win.idx == 2 * M - 1 || win.idx == M - 1) {
      if (t == (win.idx == M - 1 ? 1 : 0)) {
        res.threshold = M - 1;
        res.default_left = 0;
        res.lg = G - na_g;
        res.lh = H - na_h;
        res.ln = win.idx == M - 1 ? all : hb_rule_bottom_scan_all(n, all, na_n, count_right);
      }
    } else if (win.idx == best.idx) {
      res.threshold = t;
      res.default_left = hb_rule_missing_left(top, has_na, ln, n);
      res.lg = lg;
      res.lh = lh;
      res.ln = ln;
    }
    __syncthreads();
    if (t < kBinWords) {
      uint32_t word = 0;
      for (int k = 0; k < 32; k++) {
        const int b = 32 * t + k;
        if (b <= res.threshold || (res.default_left && b == M)) word |= 1u << k;
      }
      res.bins[t] = word;
    }
    if (t == 0) {
      res.gain = win.gain;
      res.feature = f;
      res.is_cat = 0;
    }
    __syncthreads();
    return;
  }
  // Categorical (split_rules.h, split_quant.c's candidates in its order).
  // The parent's gain takes lambda_l2 alone, the children's lambda_l2 +
  // cat_l2 in a many-vs-many scan.
  const double parent = parent_gain<EXT>(a, bd, Gd, Hd, n);
  if (hb_rule_cat_onehot(nb, a.max_cat_to_onehot)) {  // each bin alone on the left
    const bool has_rows = t < nb && cnt > 0;
    const int nonempty = __syncthreads_count(has_rows);
    // the lowest bin with rows: the lowest set bit of the block's vote
    if (t == 0) sm.tc[0] = INT_MAX;
    __syncthreads();
    if (has_rows) atomicMin(&sm.tc[0], t);
    __syncthreads();
    const int first = sm.tc[0];
    __syncthreads();
    Cand best = {-1.0, INT_MAX};
    const int rb = DRAW && bd.extra ? hb_rng_bits_pick(bd.draw, nb) : -1;  // extra_trees: bin rb alone
    if (t < nb && !hb_rule_cat_onehot_seen(nonempty, first, t) && (rb < 0 || t == rb)) {
      best.gain = cand_gain<EXT>(a, sc, bd, bg, bh, cnt, Gd, Hd, n, a.l2, parent);
      best.idx = t;
    }
    const Cand win = block_best(best, sm.cand);
    if (!(win.gain > 0)) return;
    if (t == win.idx) {
      res.lg = bg;
      res.lh = bh;
      res.ln = cnt;
    }
    if (t < kBinWords) res.bins[t] = 0;
    __syncthreads();
    if (t == 0) {
      res.bins[win.idx >> 5] = 1u << (win.idx & 31);
      res.gain = win.gain;
      res.feature = f;
      res.is_cat = 1;
      res.threshold = -1;
      res.default_left = win.idx == nb - 1;
    }
    __syncthreads();
    return;
  }
  // Many against many: bins (the missing bin among them) with at least
  // cat_smooth rows, ordered by G / (H + cat_smooth), ties by bin.
  const bool keep = t < nb && hb_rule_cat_used(cnt, a.cat_smooth);
  sm.key[t] = keep ? hb_rule_cat_key((double)bg * sc.g, (double)bh * sc.h, a.cat_smooth) : 0.0;
  sm.bin[t] = keep ? t : kThreads + t;  // not kept: after every kept bin, in bin order
  sm.g[t] = bg;
  sm.h[t] = bh;
  sm.cnt[t] = cnt;
  const int used = __syncthreads_count(keep);
  const int dropped = __syncthreads_count(t < nb && cnt > 0 && !keep);
  if (used < 1) return;
  // Bitonic sort of the (kept, key, bin) entries, ascending; a thread per pair.
  for (int size = 2; size <= kThreads; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      if (t < kThreads / 2) {
        const int lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
        const bool up = (lo & size) == 0;
        const int bl = sm.bin[lo], bhi = sm.bin[hi];
        const bool kl = bl < kThreads, kh = bhi < kThreads;
        bool gt;  // lo after hi: kept before not kept; kept by (key, bin); the rest by bin
        if (kl != kh) gt = !kl;
        else if (kl) gt = sm.key[lo] > sm.key[hi] || (sm.key[lo] == sm.key[hi] && bl > bhi);
        else gt = bl > bhi;
        if (gt == up) {
          const double tk = sm.key[lo];
          sm.key[lo] = sm.key[hi];
          sm.key[hi] = tk;
          sm.bin[lo] = bhi;
          sm.bin[hi] = bl;
        }
      }
      __syncthreads();
    }
  }
  const int kmax = hb_rule_cat_max_left(used, a.max_cat_threshold);
  // Prefix sums in sorted order (position t), kept in shared memory.
  const int sb = sm.bin[t];
  long long pg = t < used ? sm.g[sb] : 0, ph = t < used ? sm.h[sb] : 0;
  int pc = t < used ? sm.cnt[sb] : 0;
  block_scan3(pg, ph, pc, sm.tg, sm.th, sm.tc);
  sm.g[t] = pg;  // every read of the per-bin sums happened before block_scan3's barriers
  sm.h[t] = ph;
  sm.cnt[t] = pc;
  __syncthreads();
  const long long KG = sm.g[used - 1], KH = sm.h[used - 1];
  const int KC = sm.cnt[used - 1];
  // Which k of each end are candidates (hb_rule_cat_step: a walk, as its
  // row counts since the last candidate carry over): lane 0 of warp 0 walks
  // the first end, lane 0 of warp 1 the last; at most max_cat_threshold steps.
  if (t == 0 || t == 32) {
    const int dir = t == 32;
    int group = 0, k = 1;
    for (; k <= kmax; k++) {
      const int p = dir ? used - k : k - 1;  // the position joining the left side
      const int ck = sm.cnt[p] - (p > 0 ? sm.cnt[p - 1] : 0);
      long long lh;
      int ln;
      if (dir) {
        const int q = used - 1 - k;  // the last k = the kept total less the prefix through q
        lh = KH - (q >= 0 ? sm.h[q] : 0);
        ln = KC - (q >= 0 ? sm.cnt[q] : 0);
      } else {
        lh = sm.h[k - 1];
        ln = sm.cnt[k - 1];
      }
      const int st = hb_rule_cat_step(ck, ln, (double)lh * sc.h, n, Hd, &group, a.min_data, a.min_hess,
                                      a.min_data_per_group);
      if (st < 0) break;
      sm.ok[dir][k - 1] = st > 0;
    }
    for (; k <= kmax; k++) sm.ok[dir][k - 1] = 0;
  }
  __syncthreads();
  const double l2c = a.l2 + a.cat_l2;
  Cand best = {-1.0, INT_MAX};
  long long lg = 0, lh = 0;
  int ln = 0;
  // extra_trees: only the first and the last rk + 1 (split_scan.h)
  const int rk = DRAW && bd.extra ? hb_rng_bits_pick(bd.draw, kmax - 1) : -1;
  if (t < kmax && (rk < 0 || t == rk)) {  // candidate k = t + 1 from each end
    if (sm.ok[0][t]) {
      best.gain = cand_gain<EXT>(a, sc, bd, pg, ph, pc, Gd, Hd, n, l2c, parent);
      best.idx = t;
      lg = pg;
      lh = ph;
      ln = pc;
    }
    if (sm.ok[1][t] && (rk >= 0 || !hb_rule_cat_seen(dropped, used, t + 1, kmax, sm.ok[0]))) {
      const int q = used - 2 - t;  // the last t+1 = kept total minus the prefix through q
      const long long g1 = KG - (q >= 0 ? sm.g[q] : 0), h1 = KH - (q >= 0 ? sm.h[q] : 0);
      const int n1 = KC - (q >= 0 ? sm.cnt[q] : 0);
      Cand c1 = {cand_gain<EXT>(a, sc, bd, g1, h1, n1, Gd, Hd, n, l2c, parent), kmax + t};
      if (better(c1, best)) {
        best = c1;
        lg = g1;
        lh = h1;
        ln = n1;
      }
    }
  }
  const Cand win = block_best(best, sm.cand);
  if (!(win.gain > 0)) return;
  const int dir = win.idx >= kmax, k = (dir ? win.idx - kmax : win.idx) + 1;
  if (win.idx == best.idx) {
    res.lg = lg;
    res.lh = lh;
    res.ln = ln;
  }
  if (t < kBinWords) res.bins[t] = 0;
  __syncthreads();
  if (t < used && (dir ? t >= used - k : t < k)) atomicOr(&res.bins[sm.bin[t] >> 5], 1u << (sm.bin[t] & 31));
  __syncthreads();
  if (t == 0) {
    res.gain = win.gain;
    res.feature = f;
    res.is_cat = 1;
    res.threshold = -1;
    res.default_left = (res.bins[(nb - 1) >> 5] >> ((nb - 1) & 31)) & 1u;
  }
  __syncthreads();
}

}  // namespace

// The three best candidates of the block at once (two barriers): each
// child's best feature and the best pending split of the other leaves.
static __device__ void block_best3(Cand &x, Cand &y, Cand &z, Cand (*tmp)[kWarps]) {
  x = warp_best(x);
  y = warp_best(y);
  z = warp_best(z);
  const int w = threadIdx.x >> 5;
  if ((threadIdx.x & 31) == 0) {
    tmp[0][w] = x;
    tmp[1][w] = y;
    tmp[2][w] = z;
  }
  __syncthreads();
  x = tmp[0][0];
  y = tmp[1][0];
  z = tmp[2][0];
  for (int k = 1; k < (int)(blockDim.x >> 5); k++) {
    if (better(tmp[0][k], x)) x = tmp[0][k];
    if (better(tmp[1][k], y)) y = tmp[1][k];
    if (better(tmp[2][k], z)) z = tmp[2][k];
  }
  __syncthreads();
}

constexpr int kSplitWords = (int)(sizeof(Split) / 4);

// What k_split reads of the control block, all at its start.
struct CtlView {
  int done, num_leaves, nfree, new_leaf;
  int small, large, find_small, find_large, small_slot, parent_slot;
  int count;  // rows of this block's child (over every process: Leaf::n)
  double lo, hi;  // its output bounds
  double out;     // its output (Leaf::out)
  Scales sc;
};

struct Tail {
  Cand best[3][kWarps];
  uint32_t rec[3][kSplitWords];  // the children's best splits, the chosen leaf's
  Leaf lf;                       // the chosen leaf
  int parent, top;               // its parent (node * 2 + side, -1 the root), the free slot on top
};

// Run by the last block of k_split: record each child's best split, then
// split next the leaf with the best pending split (ties: the lowest leaf):
// its split becomes the next internal node, and the control block says
// which leaf the partition kernel takes. Everything the choice needs is read
// in one round of loads (the features' bests, the other leaves' pending
// gains), the chosen leaf's record in a second, and the rest is writes.
static __device__ void finish(const TreeArgs &a, const CtlView &v, Tail &tl) {
  Ctl *c = a.ctl;
  const int t = threadIdx.x, F = a.nfeat;
  const int nl = v.num_leaves, ch[2] = {v.small, v.large};
  const int fnd[2] = {v.find_small, v.find_large}, slot[2] = {v.small_slot, v.parent_slot};
  int nfree = v.nfree;
  // The children's rows of `ok`: the parent's (the left child's row, the lower index), less the features
  // each child's search found no valid split in; a word a thread, the right child's row written first.
  if (a.skip_unsplit) {
    const int left = ch[0] >= 0 && ch[1] >= 0 ? min(ch[0], ch[1]) : max(ch[0], ch[1]);
    const int right = ch[0] >= 0 && ch[1] >= 0 ? max(ch[0], ch[1]) : -1;
    const int yl = left == ch[0] ? 0 : 1;
    for (int w = t; left >= 0 && w < a.okw; w += blockDim.x) {
      const uint32_t p = a.ok[(size_t)left * a.okw + w];
      uint32_t off[2] = {0u, 0u};
      for (int bit = 0; bit < 32 && w * 32 + bit < F; bit++) {
        const int f = w * 32 + bit;
#pragma unroll
        for (int y = 0; y < 2; y++)
          if (ch[y] >= 0 && a.seen[y * F + f] && a.fbest[y * F + f].feature < 0) off[y] |= 1u << bit;
      }
      if (right >= 0) a.ok[(size_t)right * a.okw + w] = p & ~off[1 - yl];
      a.ok[(size_t)left * a.okw + w] = p & ~off[yl];
    }
  }
  Cand b[2] = {{-1.0, INT_MAX}, {-1.0, INT_MAX}}, other = {-1.0, INT_MAX};
  // A thread's records are loaded before any is compared (feature and gain
  // alike, whether or not a child was searched): the loads go out together,
  // one round trip to L2, where testing each feature before loading its
  // gain made a chain of them (the split's timeline, tools/gpu/timeline.sh).
  for (int k = t; k < F || k < nl; k += blockDim.x) {
    int fe[3] = {-1, -1, -1};
    double g[3] = {0.0, 0.0, 0.0};
    if (k < F) {
      fe[0] = a.fbest[k].feature;
      g[0] = a.fbest[k].gain;
      fe[1] = a.fbest[F + k].feature;
      g[1] = a.fbest[F + k].gain;
    }
    if (k < nl) {
      fe[2] = a.splits[k].feature;
      g[2] = a.splits[k].gain;
    }
#pragma unroll
    for (int y = 0; y < 2; y++) {
      const Cand cf = {g[y], k};
      if (ch[y] >= 0 && k < F && fe[y] >= 0 && better(cf, b[y])) b[y] = cf;
    }
    const Cand cl = {g[2], k};
    if (k < nl && k != ch[0] && k != ch[1] && fe[2] >= 0 && better(cl, other)) other = cl;
  }
  if (t == 0) tl.top = nfree > 0 ? a.free_slots[nfree - 1] : -1;
  block_best3(b[0], b[1], other, tl.best);
  HB_TL_MAX(c, 12);
  Cand pick = other;  // by leaf
#pragma unroll
  for (int y = 0; y < 2; y++) {
    const Cand cc = {b[y].gain, ch[y]};
    if (b[y].gain > 0 && better(cc, pick)) pick = cc;
  }
  const bool done = !(pick.gain > 0) || nl >= a.max_leaves;
  const int l = pick.idx, r = nl, node = nl - 1;
  const int pick_y = done ? -1 : l == ch[0] ? 0 : l == ch[1] ? 1 : 2;
  // Second round: the children's records and, for another leaf, its own.
  for (int k = t; k < 3 * kSplitWords; k += blockDim.x) {
    const int y = k / kSplitWords, w = k - y * kSplitWords;
    const Cand by = y == 0 ? b[0] : b[1];
    const Split *src = y < 2 ? (by.gain > 0 ? &a.fbest[y * F + by.idx] : NULL) : (pick_y == 2 ? &a.splits[l] : NULL);
    if (src) tl.rec[y][w] = ((const uint32_t *)src)[w];
  }
  if (t == 0 && !done) {
    tl.parent = a.leaf_parent[l];
    tl.lf = a.leaves[l];
  }
  __syncthreads();
  // The children: their best splits (the one split now is consumed), sums, slots.
  int pushed = 0, last_pushed = -1;
#pragma unroll
  for (int y = 0; y < 2; y++) {
    if (ch[y] < 0) continue;
    const Split &rs = *(const Split *)tl.rec[y];
    if (b[y].gain > 0) {
      if (y != pick_y)
        for (int w = t; w < kSplitWords; w += blockDim.x) ((uint32_t *)&a.splits[ch[y]])[w] = tl.rec[y][w];
      if (t == 0) {
        a.leaves[ch[y]].g = rs.tg;
        a.leaves[ch[y]].h = rs.th;
        a.leaves[ch[y]].slot = slot[y];
      }
    } else {
      // the smaller child's slot is free once the larger one is derived;
      // the larger child's slot only when it was searched (else the
      // partition freed the parent's slot already)
      if ((y == 0 || fnd[y]) && slot[y] >= 0) {
        if (t == 0) a.free_slots[nfree] = slot[y];
        nfree++;
        pushed = 1;
        last_pushed = slot[y];
      }
      if (t == 0) a.leaves[ch[y]].slot = -1;
    }
    if (t == 0 && (y == pick_y || !(b[y].gain > 0))) {
      a.splits[ch[y]].feature = -1;
      a.splits[ch[y]].gain = -1.0;
    }
  }
  if (done) {
    if (t == 0) {
      c->done = 1;
      c->nfree = nfree;
      c->ticket = 0;
    }
    return;
  }
  const uint32_t *rw = tl.rec[pick_y];
  const Split &s = *(const Split *)rw;
  for (int w = t; w < kSplitWords; w += blockDim.x) ((uint32_t *)&c->cur)[w] = rw[w];
  NodeOut &o = a.nodes[node];
  NodeRoute &rt = a.route[node];
  if (t < kBinWords) rt.bins[t] = o.bins[t] = s.bins[t];
  if (t == 0) {
    Leaf lf = tl.lf;
    if (pick_y < 2) {  // a child: its sums and slot are set above, in this kernel
      lf.g = s.tg;
      lf.h = s.th;
      lf.slot = slot[pick_y];
    }
    const long long pg = lf.g, ph = lf.h;
    c->cur_lf = lf;
    c->cur_leaf = l;
    c->new_leaf = r;
    o.leaf = l;
    o.feature = s.feature;
    o.threshold = s.threshold;
    o.flags = (s.default_left ? 1 : 0) | (s.is_cat ? 2 : 0);
    o.gain = s.gain;
    o.lg = s.lg;
    o.lh = s.lh;
    o.rg = pg - s.lg;
    o.rh = ph - s.lh;
    rt.feature = s.feature;
    const int p = tl.parent;
    if (p >= 0) {
      if (p & 1) a.route[p >> 1].right = node;
      else a.route[p >> 1].left = node;
    }
    rt.left = ~l;
    rt.right = ~r;
    a.leaf_parent[l] = 2 * node;
    a.leaf_parent[r] = 2 * node + 1;
    if (pick_y == 2) {
      a.splits[l].feature = -1;
      a.splits[l].gain = -1.0;
    }
    a.splits[r].feature = -1;
    a.splits[r].gain = -1.0;
    c->num_leaves = nl + 1;
    // A slot for the smaller child's histogram, cleared by the partition's
    // blocks (a free one exists: at most num_leaves < max_leaves are held).
    c->next_slot = pushed ? last_pushed : tl.top;
    c->nfree = nfree - 1;
    c->ticket = 0;
  }
}

// The node number of leaf `leaf` searched now, as grow.c numbers nodes
// for its draws: 0 the root, then 2r - 1 and 2r for the left and right
// child of the split that made leaf r (the split just made).
__device__ __forceinline__ uint64_t node_uid(const CtlView &v, int leaf) {
  if (v.num_leaves == 1) return 0;
  const uint64_t r = (uint64_t)v.new_leaf;
  return leaf == v.new_leaf ? 2 * r : 2 * r - 1;
}

// feature_fraction_bynode: whether the node whose draws start at `head`
// takes feature f: of the columns with a feature usable in this tree (m of
// them) that the leaf's interaction constraints allow (lw: its group words,
// NULL without constraints), the round(m x fraction) (at least 1, at most
// all) with the smallest draws (seed, tree, node, column), ties to the
// lower column (grow.c's leaf_mask, LightGBM's ColSampler::GetByNode), here
// as f's column's rank among them. The whole block; cnt: two ints of
// shared memory.
static __device__ bool node_samples(const TreeArgs &a, const DrawArgs &d, const unsigned long long *lw, uint64_t head,
                                    int f, int *cnt) {
  const int cf = d.fcol[f];
  const double uf = hb_rng_bits_unif(hb_rng_key_tail(head, (uint64_t)cf));
  int m = 0, below = 0;
  for (int c = threadIdx.x; c < d.ncol; c += blockDim.x) {
    int any = 0;
    for (int g = d.cfirst[c]; g < d.cfirst[c + 1] && !any; g++) any = a.usable[g];
    if (!any) continue;
    m++;
    if (lw) {  // drawn only among the columns a group the leaf still allows holds
      int ok = 0;
      for (int k = 0; k < d.ngroups && !ok; k++) ok = ((lw[k >> 6] >> (k & 63)) & 1ull) && d.grp_col[(size_t)k * d.ncol + c];
      if (!ok) continue;
    }
    const double u = hb_rng_bits_unif(hb_rng_key_tail(head, (uint64_t)c));
    below += u < uf || (u == uf && c < cf);
  }
  if (threadIdx.x == 0) cnt[0] = cnt[1] = 0;
  __syncthreads();
  if (m) atomicAdd(&cnt[0], m);
  if (below) atomicAdd(&cnt[1], below);
  __syncthreads();
  int keep = (int)floor(cnt[0] * d.bynode + 0.5);
  if (keep < 1) keep = 1;
  return cnt[1] < keep;
}

// Block `pair` = child * nfeat + feature (child 0 the smaller, whose
// histogram was just built; child 1 the larger, whose histogram is first
// made as parent minus smaller, in the parent's slot). EXT: a.ext; DRAW:
// a.draw (a.dr's extra, bynode < 1 or ngroups > 0) (search's template arguments).
template <bool EXT, bool DRAW>
__global__ void __launch_bounds__(kThreads) k_split(TreeArgs a) {
  const int t = threadIdx.x, F = a.nfeat, pair = blockIdx.x;
  const int y = pair >= F, f = y ? pair - F : pair;
  // What does not change within a tree, read before waiting.
  const int usable = a.usable[f], nb = a.nbin[f], hoff = a.hoff[f], mono = a.mono ? a.mono[f] : 0;
  const int fl = a.is_cat[f];  // categorical, missing values in training, the bottom scan's count (learner.cuh)
  HB_WAIT_PREVIOUS();
  Ctl *c = a.ctl;
  HB_TL_MIN(c, 5);
  // The control block's fields at once (one round trip), then the decision.
  CtlView v;
  v.done = c->done;
  v.num_leaves = c->num_leaves;
  v.nfree = c->nfree;
  v.new_leaf = c->new_leaf;
  v.small = c->small;
  v.large = c->large;
  v.find_small = c->find_small;
  v.find_large = c->find_large;
  v.small_slot = c->small_slot;
  v.parent_slot = c->parent_slot;
  v.count = c->child_lf[y].n;
  v.lo = c->child_lf[y].lo;
  v.hi = c->child_lf[y].hi;
  v.out = c->child_lf[y].out;
  v.sc.g = c->scale_g;
  v.sc.h = c->scale_h;
  if (v.done) return;
  __shared__ Split res;
  __shared__ union {
    Shared search;
    Tail tail;
  } sm;
  const int child = y ? v.large : v.small;
  const int find = child >= 0 && (y ? v.find_large : v.find_small);
  // skip_unsplittable (LightGBM's rule): a feature in which the parent's search found no valid split is
  // not searched (the parent's row is the left child's, the lower index; the root's, leaf 0's, is all set)
  const int parent = v.small >= 0 && v.large >= 0 ? min(v.small, v.large) : max(v.small, v.large);
  const bool inherit = !a.skip_unsplit || parent < 0 || ((a.ok[(size_t)parent * a.okw + (f >> 5)] >> (f & 31)) & 1u);
  if (a.skip_unsplit && t == 0) a.seen[pair] = 0;  // (without the rule nothing reads seen: no store)
  if (find && usable) {
    long long bg = 0, bh = 0;
    if (t < nb) {
      Bin *hb = a.hist + (size_t)(y ? v.parent_slot : v.small_slot) * a.total_bins + hoff;
      Bin hv = hb[t];
      if (y) {  // larger child = parent - smaller child, kept in the parent's slot
        const Bin s = a.hist[(size_t)v.small_slot * a.total_bins + hoff + t];
        hv.g -= s.g;
        hv.h -= s.h;
        hb[t] = hv;
      }
      bg = hv.g;
      bh = hv.h;
    }
    LeafCtx bd = {v.lo, v.hi, mono, mono != 0 || v.lo > -INFINITY || v.hi < INFINITY, v.out, false, 0};
    // (the larger child's histogram is made above whether or not the node takes f: a descendant that
    // does not inherit f never reads it, but the slot stays whole)
    bool drawn = true;  // the node's sample and interaction constraints allow f
    if (DRAW) {  // draws keyed by (seed, tree, node, ...), as the CPU's
      const DrawArgs &d = *a.dr;
      const uint64_t uid = node_uid(v, child), tree = (uint64_t)a.rs->tree;
      if (d.bynode < 1.0) {
        __shared__ int cnt[2];
        drawn = node_samples(a, d, d.ngroups > 0 ? d.leaf_grp + (size_t)child * d.gw : NULL,
                             hb_rng_key_tail(hb_rng_key_head(d.seed, HB_RNG_BYNODE, tree), uid), f, cnt);
      }
      if (d.ngroups > 0) {  // interaction constraints: a group the leaf still allows holds f
        const unsigned long long *lw = d.leaf_grp + (size_t)child * d.gw;
        int ok = 0;
        for (int k = t; k < d.ngroups && !ok; k += blockDim.x)
          ok = ((lw[k >> 6] >> (k & 63)) & 1ull) && d.grp_feat[(size_t)k * F + f];
        drawn = __syncthreads_or(ok) && drawn;
      }
      if (d.extra) {
        bd.extra = true;
        bd.draw = hb_rng_key_tail(hb_rng_key_tail(hb_rng_key_head(d.seed, HB_RNG_EXTRA, tree), uid), (uint64_t)f);
      }
    }
    const bool take = inherit && drawn;
    // skip_unsplittable: a feature the node's sample left out is searched for its flag alone (the
    // CPU's flag_only), as LightGBM searches every feature the parent allows and drops the unsampled
    // from the winners afterwards: seen with no split clears the flag, a split keeps the parent's
    const bool flag_only = a.skip_unsplit && inherit && !drawn;
    if (take || flag_only) {
      search<EXT, DRAW>(a, v.sc, bd, f, nb, fl, bg, bh, v.count, res, sm.search);
      __syncthreads();
      if (pair == 0) HB_TL_MAX(c, 13);
      if (take) {
        copy_split(&a.fbest[pair], &res);
        if (a.skip_unsplit && t == 0) a.seen[pair] = 1;
      } else if (t == 0) {
        a.seen[pair] = res.feature < 0;
        a.fbest[pair].feature = -1;
        a.fbest[pair].gain = -1.0;
      }
    } else if (t == 0) {
      a.fbest[pair].feature = -1;
      a.fbest[pair].gain = -1.0;
    }
  } else if (t == 0) {
    a.fbest[pair].feature = -1;
    a.fbest[pair].gain = -1.0;
  }
  // The last block to finish records the children's splits and picks the next.
  __threadfence();
  __syncthreads();
  HB_TL_MAX(c, 6);
  __shared__ int last;
  if (t == 0) last = atomicAdd(&c->ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  HB_TL_MAX(c, 7);
  finish(a, v, sm.tail);
#ifdef HB_CUDA_TIMELINE
  __syncthreads();
  if (t == 0) {
    HB_TL_MAX(c, 8);
    __threadfence();
    volatile unsigned long long *s = c->tl;
    const unsigned long long b = s[0] != ~0ull ? s[0] : s[3];
    const int tree = a.rs->tree;
    if (tree % 50 == 10 && b != ~0ull)
      printf("TL %d %d %d %d %llu %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n", tree,
             v.num_leaves, c->child_lf[0].count, c->child_lf[1].count, b, (long long)(s[0] - b),
             (long long)(s[1] - b), (long long)(s[2] - b), (long long)(s[3] - b), (long long)(s[4] - b),
             (long long)(s[5] - b), (long long)(s[6] - b), (long long)(s[7] - b), (long long)(s[8] - b),
             (long long)(s[9] - b), (long long)(s[10] - b), (long long)(s[11] - b), (long long)(s[12] - b),
             (long long)(s[13] - b));
    for (int k = 0; k < HB_TL_N; k++) s[k] = k == 0 || k == 3 || k == 5 ? ~0ull : 0ull;
    s[9] = hb_tl_now();  // this split's end, the printing included: the next line's first stamp
  }
#endif
}

template <bool EXT, bool DRAW>
static int split_launch_as(const TreeArgs &a, cudaStream_t st) {
  HB_SAME_CARVEOUT((k_split<EXT, DRAW>));
  return launch_pdl(k_split<EXT, DRAW>, dim3(2 * a.nfeat), dim3(kThreads), 0, st, "the split search kernel", a);
}

int split_launch(const TreeArgs &a, cudaStream_t st) {
  const bool draw = a.draw;
  if (a.ext) return draw ? split_launch_as<true, true>(a, st) : split_launch_as<true, false>(a, st);
  return draw ? split_launch_as<false, true>(a, st) : split_launch_as<false, false>(a, st);
}

}  // namespace hbc
