// learner.cu: the GPU learner's host side: device memory for one training
// run, the launch sequence of a round, and the finished trees handed back
// as split records (cuda.h). The kernels are in gradient.cu (gradients,
// bagging, the root), hist.cu, partition.cu, split.cu and score.cu.
//
// A round enqueues everything on one stream and waits once: gradients; then
// per class the root, num_leaves - 1 fixed sequences of split kernels
// (learner.cuh says how they steer themselves), the routing of every row and
// the score updates; then one copy of the trees to pinned host memory.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include "learner.cuh"
extern "C" {
#include "goss.h"
#include "quantize.h"
}
#include "objective_rules.h"

using namespace hbc;

namespace {
constexpr int kGrid1D = 1024;  // blocks of the row-wise kernels (grid-stride loops)

struct Valid {
  int n;
  uint32_t *d_bins;
  double *d_score;  // n x K
  double *d_base;   // n x K starting scores (a forest), else NULL
};
}  // namespace

struct hb_cuda_learner {
  hb_config_t cfg;
  int n, nfeat, K, L, total_bins, part_grid;
  int ncol;     // input columns (d_fcol kept), else 0
  int stride;   // words a row of validation bins (8 bits a feature), read by the routing kernel
  int hstride;  // words a row of training bins, the histogram kernels' input (hist_plan_stride)
  cudaStream_t st;
  HistPlan *plan;
  // training rows
  uint32_t *d_bins;
  uint8_t *d_cols;  // the bins feature by feature, for the partition and routing, or NULL (BinReader)
  int keep_cols;
  double *d_label, *d_weight, *d_score, *d_grad, *d_hess;
  // per feature
  int *d_hoff, *d_nbin, *d_iscat;
  uint8_t *d_usable;  // K x nfeat
  // growing
  int *d_idx[2];
  int2 *d_gh[2];
  uint8_t *d_flags;
  Bin *d_hist;
  Leaf *d_leaves;
  Split *d_splits, *d_fbest;
  uint8_t *d_seen;      // 2 x nfeat
  uint32_t *d_ok;       // L x okw (TreeArgs::ok)
  int *d_free, *d_leaf_parent;
  Ctl *d_ctl;           // K
  NodeOut *d_nodes;     // K x (L - 1)
  NodeRoute *d_route;   // K x (L - 1)
  LeafOut *d_leafout;   // K x L
  RoundScales *d_rs;    // K
  int *d_leaf_of_row;
  unsigned long long *d_sums, *d_absmax, *d_rows_seen;
  int *d_err;
  int *d_tree, *h_tree;  // K: the number of each class's tree this round (read by the captured graph)
  // a forest (cfg.rf): the starting scores, which gradients are taken at and
  // scores average above, and 1 / (round + 1) (read by the captured graph)
  double *d_base, *d_inv_t, *h_inv_t;
  // the leaves' shrinkage: the learning rate, or DART's for the round (read
  // by the captured graph), and the value last uploaded
  double *d_rate, *h_rate, rate_up;
  // DART: every tree's routing nodes (L - 1 a tree, tree t at t (L - 1)),
  // kept for its drops and rescaling (hb_cuda_learner_add_tree); room for
  // kept_cap trees, kept_n of them made; and a tree's values for a drop
  NodeRoute *d_kept;
  long long kept_cap, kept_n;
  double *d_vals;
  // gradients from the host (hb_cuda_learner_set_gradients): their pairs as
  // uploaded (2 n K), and whether the next round takes them
  double *d_host_gh;
  int host_grad;
  int8_t *d_mono;  // per feature: monotone constraint, or NULL
  int *d_fcol, *d_cfirst;  // bynode sampling or interaction constraints: each feature's column, each column's first
                           // feature (ncol + 1)
  int ngroups, gw;         // interaction constraints: groups, 64-bit words of a leaf's set of groups
  uint8_t *d_grp_feat, *d_grp_col;        // ngroups x nfeat, ngroups x ncol (grow.h's hb_interaction_tables)
  unsigned long long *d_leaf_grp;         // max_leaves x gw: each leaf's groups still allowed
  DrawArgs *d_draw;  // what the draws and the groups need, in device memory (upload_draws)
  // l1, quantile and MAPE (HB_OBJ_RENEWS): the host refits a round's leaves, so
  // its scores are updated after (hb_cuda_learner_set_leaf_values)
  int renew;
  QuantArgs q;
  // bagging, or GOSS's sample (whose buffers are in goss)
  uint8_t *d_inbag;
  int *d_bag, *d_nbag, *d_bag_all;
  void *d_cub;
  size_t cub_bytes;
  GossArgs goss;
  // pinned host copies of the round's output
  Ctl *h_ctl;
  NodeOut *h_nodes;
  LeafOut *h_leafout;
  int *h_err;
  int diverged;  // the error flag's bits when a round stopped on it (hb_cuda_learner_diverged)
  unsigned long long *h_rows_seen;
  uint8_t *h_usable;
  hb_cuda_split_t *splits;  // K x (L - 1), the records handed out
  hb_cuda_leaf_t *leaves;   // K x L
  // validation sets
  int nvalid;
  Valid *valid;
  // profiling
  int profile;
  cudaEvent_t *ev;  // 2 per histogram launch of a round
  int nev;
  cudaEvent_t round_ev[2];
  hb_cuda_profile_t prof;
  // The trees of a round (roots to copies back) as one CUDA graph, captured
  // at the first round and replayed: its launches read every changing
  // quantity from device memory, so the same graph serves every round.
  cudaGraphExec_t graph;
  int graph_profile;  // whether it was captured with profiling events
  int no_graph;       // capture failed, or data-parallel training: launch directly
  // Data-parallel training (hb_cuda_learner_set_dist): the round is launched
  // directly, and between kernels the host sums over the processes what the
  // next kernel decides by (dist_* below).
  const hb_dist_t *dist;
  long long N;                 // rows over every process
  long long nroot;             // the root's rows over every process (the bag's)
  int root_rows;               // hist_plan_block_rows of one process holding all N rows
  long long *d_glob, *h_glob;  // {N, nroot}, read by the root kernel
  long long *h_stage;          // pinned: what a sum copies out and back
  Ctl *h_step;                 // pinned: a tree's control block, read between kernels
  int *h_bag;                  // pinned: {bag size, every row}
  Exchange *x;                 // a split's sums peer to peer between the GPUs (exchange.cu), or NULL: through MPI
  XArgs xa;
  cudaGraphExec_t *xgraph;     // peer to peer: each class's tree's splits as a graph (replay_steps), or NULL
  int no_graph_steps;          // their capture failed: launch directly
};

int hb_cuda_fail(cudaError_t e, const char *what) {
  cudaGetLastError();
  return hb_error_set(e == cudaErrorMemoryAllocation ? HB_ERR_NOMEM : HB_ERR_INTERNAL, "CUDA error in %s: %s",
                      what, cudaGetErrorString(e));
}

extern "C" int hb_cuda_row_stride(int nfeat) { return row_stride_words((nfeat + 3) / 4); }

extern "C" void hb_cuda_learner_free(hb_cuda_learner_t *L) {
  if (!L) return;
  if (L->st) cudaStreamSynchronize(L->st);
  hist_plan_free(L->plan);
  exchange_close(L->x);
  void *dev[] = {L->d_bins, L->d_cols, L->d_label, L->d_weight, L->d_score, L->d_grad, L->d_hess, L->d_hoff, L->d_nbin,
                 L->d_iscat, L->d_usable, L->d_idx[0], L->d_idx[1], L->d_gh[0], L->d_gh[1], L->d_flags,
                 L->d_hist, L->d_leaves, L->d_splits, L->d_fbest, L->d_seen, L->d_ok, L->d_free, L->d_leaf_parent,
                 L->d_ctl, L->d_nodes, L->d_route, L->d_leafout, L->d_rs, L->d_leaf_of_row, L->d_sums,
                 L->d_absmax, L->d_rows_seen, L->d_err, L->d_inbag, L->d_bag, L->d_nbag, L->d_bag_all, L->d_cub,
                 L->d_tree, L->d_base, L->d_inv_t, L->goss.size, L->goss.sorted, L->goss.keep, L->goss.above,
                 L->goss.cnt, L->d_host_gh, L->d_mono, L->d_glob, L->d_fcol, L->d_cfirst,
                 L->d_grp_feat, L->d_grp_col, L->d_leaf_grp, L->d_rate, L->d_kept, L->d_vals, L->d_draw};
  for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) cudaFree(dev[k]);
  void *pinned[] = {L->h_ctl, L->h_nodes, L->h_leafout, L->h_err, L->h_rows_seen, L->h_usable, L->h_tree,
                    L->h_inv_t, L->h_glob, L->h_stage, L->h_step, L->h_bag, L->h_rate};
  for (size_t k = 0; k < sizeof pinned / sizeof pinned[0]; k++) cudaFreeHost(pinned[k]);
  for (int v = 0; v < L->nvalid; v++) {
    cudaFree(L->valid[v].d_bins);
    cudaFree(L->valid[v].d_score);
    cudaFree(L->valid[v].d_base);
  }
  hb_free(L->valid);
  hb_free(L->splits);
  hb_free(L->leaves);
  if (L->ev) {
    for (int k = 0; k < L->nev; k++) cudaEventDestroy(L->ev[k]);
    hb_free(L->ev);
  }
  if (L->graph) cudaGraphExecDestroy(L->graph);
  for (int k = 0; L->xgraph && k < L->K; k++)
    if (L->xgraph[k]) cudaGraphExecDestroy(L->xgraph[k]);
  hb_free(L->xgraph);
  if (L->round_ev[0]) cudaEventDestroy(L->round_ev[0]);
  if (L->round_ev[1]) cudaEventDestroy(L->round_ev[1]);
  if (L->st) cudaStreamDestroy(L->st);
  cudaGetLastError();
  hb_free(L);
}

#define DALLOC(ptr, count) HB_CUDA_TRY_FAIL(cudaMalloc((void **)&(ptr), sizeof(*(ptr)) * (size_t)(count)), "allocating device memory")
#define HALLOC(ptr, count) HB_CUDA_TRY_FAIL(cudaMallocHost((void **)&(ptr), sizeof(*(ptr)) * (size_t)(count)), "allocating pinned memory")

// Each feature's column and each column's first feature (ncol + 1) up to
// the device, for bynode sampling and interaction constraints.
// The draws' and interaction groups' arguments (DrawArgs) to the device,
// once they are all known (at creation, and when groups are set).
static int upload_draws(hb_cuda_learner_t *L) {
  int st = HB_OK;
  DrawArgs h;
  memset(&h, 0, sizeof h);
  h.seed = L->cfg.seed;
  h.extra = L->cfg.extra_trees;
  h.bynode = L->cfg.feature_fraction_bynode;
  h.fcol = L->d_fcol;
  h.cfirst = L->d_cfirst;
  h.ncol = L->ncol;
  h.ngroups = L->ngroups;
  h.gw = L->gw;
  h.grp_feat = L->d_grp_feat;
  h.grp_col = L->d_grp_col;
  h.leaf_grp = L->d_leaf_grp;
  if (!L->d_draw) DALLOC(L->d_draw, 1);
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_draw, &h, sizeof h, cudaMemcpyHostToDevice), "uploading the draws' arguments");
  return HB_OK;
fail:
  return st;
}

static int upload_columns(hb_cuda_learner_t *L, const int *fcol, const int *col_first, int ncol) {
  int st = HB_OK;
  DALLOC(L->d_fcol, L->nfeat);
  DALLOC(L->d_cfirst, ncol + 1);
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_fcol, fcol, sizeof(int) * (size_t)L->nfeat, cudaMemcpyHostToDevice), "uploading");
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_cfirst, col_first, sizeof(int) * (size_t)(ncol + 1), cudaMemcpyHostToDevice),
                   "uploading");
  L->ncol = ncol;
  return HB_OK;
fail:
  return st;
}

// The training bins up to the device, feature by feature: each column
// through one of two pinned staging buffers (filled while the other is in
// flight), and the row-major words then built from the columns on the
// device, so the host never packs rows (packing 10 million rows of 28
// features and copying them up from pageable memory took 0.2 s). The
// columns land in the feature-major copy when the learner keeps one (all
// of them, then one packing launch); else a word's features at a time in
// the second gradient buffer, unused until the first tree (8 bytes a row,
// a word's features take 4, eight 4-bit features 8).
static int upload_train(hb_cuda_learner_t *L, const hb_dataset_t *d) {
  const int n = L->n, F = L->nfeat, chunk = n < (1 << 24) ? n : (1 << 24);
  const int bits = hist_plan_row_bits(L->plan), group = L->d_cols ? F : 32 / bits;
  uint8_t *cols = L->d_cols ? L->d_cols : (uint8_t *)L->d_gh[1];
  uint8_t *stage[2] = {NULL, NULL};
  cudaEvent_t ev[2] = {NULL, NULL};
  int st = HB_OK, used[2] = {0, 0}, k = 0;
  HALLOC(stage[0], chunk);
  HALLOC(stage[1], chunk);
  HB_CUDA_TRY_FAIL(cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming), "creating events");
  HB_CUDA_TRY_FAIL(cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming), "creating events");
  for (int f0 = 0; f0 < F; f0 += group) {
    const int f1 = F - f0 < group ? F : f0 + group;
    for (int f = f0; f < f1; f++) {
      for (int r0 = 0; r0 < n; r0 += chunk, k ^= 1) {
        const int m = n - r0 < chunk ? n - r0 : chunk;
        if (used[k]) HB_CUDA_TRY_FAIL(cudaEventSynchronize(ev[k]), "uploading bins");
        hb_dataset_feature_bins(d, f, r0, m, stage[k]);
        HB_CUDA_TRY_FAIL(cudaMemcpyAsync(cols + (size_t)(f - f0) * n + r0, stage[k], (size_t)m,
                                         cudaMemcpyHostToDevice, L->st),
                         "uploading bins");
        HB_CUDA_TRY_FAIL(cudaEventRecord(ev[k], L->st), "uploading bins");
        used[k] = 1;
      }
    }
    // (the stream orders the next group's copies after this launch's reads)
    if ((st = rows_launch(cols, f0, f1, F, n, L->d_bins, L->hstride, bits, L->st)) != HB_OK) goto fail;
  }
  if ((st = hist_plan_bank_rows(L->plan, L->d_bins, n, L->hstride, L->st)) != HB_OK) goto fail;
  HB_CUDA_TRY_FAIL(cudaStreamSynchronize(L->st), "uploading bins");
fail:
  if (L->st) cudaStreamSynchronize(L->st);  // nothing in flight reads a staging buffer
  for (int j = 0; j < 2; j++) {
    if (ev[j]) cudaEventDestroy(ev[j]);
    cudaFreeHost(stage[j]);
  }
  cudaGetLastError();
  return st;
}

// The device memory the learner allocates in proportion to the rows and to
// the leaves x bins (what decides whether it fits; the rest is a few
// kilobytes), from the same element types as the allocations below.
static size_t learner_bytes(const hb_config_t *cfg, const hb_dataset_t *d, int hstride, int K, int cols,
                            size_t *hist) {
  const size_t n = (size_t)d->nrow, F = (size_t)d->nfeat, NL = (size_t)cfg->num_leaves;
  *hist = NL * (size_t)d->total_bins * sizeof(Bin);                                 // d_hist
  size_t b = n * (size_t)hstride * sizeof(uint32_t) + (cols ? n * F : 0)            // d_bins, d_cols
             + n * sizeof(double) * (1 + (d->weight != NULL) + 3 * (size_t)K        // label, weight, score, grad, hess
                                     + (cfg->rf ? (size_t)K : 0))                   // a forest's d_base
             + 2 * n * (sizeof(int) + sizeof(int2))                                 // d_idx, d_gh
             + n * (sizeof(uint8_t) + sizeof(int))                                  // d_flags, d_leaf_of_row
             + *hist;
  if (hb_config_bagging(cfg) || cfg->goss) b += n * (sizeof(uint8_t) + sizeof(int));
  return b;
}

// Whether the learner keeps the feature-major copy of the bins (`copy`
// bytes): the partition and routing read one byte a row from it, where the
// row-major words cost a 32-byte sector a row. On the H200 at 10.5M x 28
// rows it made training about 4% faster (4.42 s against 4.60 s for 500
// rounds, the same model) for 28 bytes a row more (121 against 93 bytes a
// row in all), so by default (-1) it is kept while it takes at most 1 GB:
// beyond that the memory is worth more than the 4% (100M x 28 rows then
// train in 9.3 GB rather than 12.1). 0: never; 1: whenever it fits. Never
// when the learner would not fit with it (`fits`).
static int keep_columns(int want, size_t copy, int fits) {
  if (!fits || want == 0) return 0;
  return want == 1 || copy <= (size_t)1000000000;
}

// The GPU's free memory now, and its used memory folded into the peak.
static size_t memory_sample(hb_cuda_profile_t *p) {
  size_t fr = 0, tot = 0;
  if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if ((double)(tot - fr) > p->device_used_peak) p->device_used_peak = (double)(tot - fr);
  p->device_total = (double)tot;
  return fr;
}

extern "C" int hb_cuda_learner_create(const hb_config_t *cfg, const hb_dataset_t *d, const double *start,
                                      hb_cuda_learner_t **out) {
  *out = NULL;
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  if (!d || d->nrow < 1 || d->nfeat < 1 || !d->label)
    return hb_error_set(HB_ERR_INPUT, "the GPU learner needs a labelled training set with rows and features");
  hb_cuda_learner_t *L = (hb_cuda_learner_t *)hb_calloc(1, sizeof *L);
  if (!L) return HB_ERR_NOMEM;
  int st = HB_OK;
  size_t free0 = 0;
  const int n = d->nrow, F = d->nfeat;
  int *nbin = NULL, *iscat = NULL;
  L->cfg = *cfg;
  L->n = n;
  L->nfeat = F;
  L->K = HB_OBJ_NSCORE(cfg);
  L->L = cfg->num_leaves;
  L->stride = hb_cuda_row_stride(F);
  L->total_bins = d->total_bins;
  L->q.on = cfg->quantized;
  L->q.bits = cfg->grad_bits;
  L->q.stochastic = cfg->stochastic_rounding;
  L->q.refit = cfg->refit_leaves;
  L->q.seed = cfg->seed;
  L->renew = HB_OBJ_RENEWS(cfg->objective);
  const int K = L->K, NL = L->L;
  nbin = (int *)hb_malloc(sizeof(int) * (size_t)F);
  iscat = (int *)hb_malloc(sizeof(int) * (size_t)F);
  L->splits = (hb_cuda_split_t *)hb_malloc(sizeof(hb_cuda_split_t) * (size_t)K * (NL > 1 ? NL - 1 : 1));
  L->leaves = (hb_cuda_leaf_t *)hb_malloc(sizeof(hb_cuda_leaf_t) * (size_t)K * NL);
  if (!nbin || !iscat || !L->splits || !L->leaves) {
    st = hb_error_set(HB_ERR_NOMEM, "out of memory setting up the GPU learner");
    goto fail;
  }
  for (int f = 0; f < F; f++) {
    nbin[f] = d->mappers[f].num_bin;
    iscat[f] = (d->mappers[f].type == HB_FEAT_CATEGORICAL) | (d->mappers[f].missing ? 2 : 0) |
               (d->mappers[f].count_right ? 4 : 0) | (d->mappers[f].na_alone_left ? 8 : 0);
  }
  HB_CUDA_TRY_FAIL(cudaStreamCreateWithFlags(&L->st, cudaStreamNonBlocking), "creating a stream");
  free0 = memory_sample(&L->prof);
  if ((st = hist_plan_create(n, F, nbin, d->hist_offset, d->total_bins, 0, cfg->quantized, &L->plan)) != HB_OK)
    goto fail;
  L->part_grid = partition_grid();
  L->hstride = hist_plan_stride(L->plan);
  {  // say what it needs and what is free, before a cudaMalloc fails on part of it
    size_t fr = 0, tot = 0, hist = 0;
    const int known = cudaMemGetInfo(&fr, &tot) == cudaSuccess;
    L->keep_cols = keep_columns(cfg->gpu_column_copy, (size_t)n * F,
                                known ? learner_bytes(cfg, d, L->hstride, K, 1, &hist) <= fr : 1);
    const int cols = L->keep_cols;
    const size_t need = learner_bytes(cfg, d, L->hstride, K, cols, &hist);
    if (known && need > fr) {
      st = hb_error_set(HB_ERR_NOMEM,
                        "out of device memory: the GPU learner needs about %.0f MB for %d rows x %d features and %d "
                        "leaves (%.0f MB of them histograms), and %.0f MB of the GPU's %.0f MB are free; use fewer "
                        "leaves (`num_leaves`) or bins (`max_bin`), fewer rows, or device = \"cpu\"",
                        need / 1e6, n, F, NL, hist / 1e6, fr / 1e6, tot / 1e6);
      goto fail;
    }
    cudaGetLastError();
  }
  DALLOC(L->d_bins, (size_t)n * L->hstride);
  if (L->keep_cols) DALLOC(L->d_cols, (size_t)n * F);
  DALLOC(L->d_label, n);
  if (d->weight) DALLOC(L->d_weight, n);
  DALLOC(L->d_score, (size_t)n * K);
  DALLOC(L->d_grad, (size_t)n * K);
  DALLOC(L->d_hess, (size_t)n * K);
  DALLOC(L->d_hoff, F);
  DALLOC(L->d_nbin, F);
  DALLOC(L->d_iscat, F);
  DALLOC(L->d_usable, (size_t)K * F);
  for (int s = 0; s < 2; s++) {
    DALLOC(L->d_idx[s], n);
    DALLOC(L->d_gh[s], n);
  }
  DALLOC(L->d_flags, n);
  DALLOC(L->d_hist, (size_t)NL * d->total_bins);
  DALLOC(L->d_leaves, NL);
  DALLOC(L->d_splits, NL);
  DALLOC(L->d_fbest, 2 * F);
  DALLOC(L->d_seen, 2 * F);
  DALLOC(L->d_ok, (size_t)NL * (size_t)((F + 31) / 32 > 0 ? (F + 31) / 32 : 1));
  DALLOC(L->d_free, NL);
  DALLOC(L->d_leaf_parent, NL);
  DALLOC(L->d_ctl, K);
  DALLOC(L->d_nodes, (size_t)K * (NL > 1 ? NL - 1 : 1));
  DALLOC(L->d_route, (size_t)K * (NL > 1 ? NL - 1 : 1));
  DALLOC(L->d_leafout, (size_t)K * NL);
  DALLOC(L->d_rs, K);
  DALLOC(L->d_leaf_of_row, n);
  DALLOC(L->d_sums, 2 * NL);
  DALLOC(L->d_absmax, 3);
  DALLOC(L->d_tree, K);
  HALLOC(L->h_tree, K);
  DALLOC(L->d_rows_seen, 1);
  DALLOC(L->d_err, 1);
  HALLOC(L->h_ctl, K);
  HALLOC(L->h_nodes, (size_t)K * (NL > 1 ? NL - 1 : 1));
  HALLOC(L->h_leafout, (size_t)K * NL);
  HALLOC(L->h_err, 1);
  HALLOC(L->h_rows_seen, 1);
  HALLOC(L->h_usable, (size_t)K * F);
  if (cfg->rf) {
    DALLOC(L->d_base, (size_t)n * K);
    DALLOC(L->d_inv_t, 1);
    HALLOC(L->h_inv_t, 1);
  }
  DALLOC(L->d_rate, 1);
  HALLOC(L->h_rate, 1);
  *L->h_rate = L->rate_up = cfg->learning_rate;
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_rate, L->h_rate, sizeof(double), cudaMemcpyHostToDevice), "uploading the learning rate");
  if (cfg->dart) DALLOC(L->d_vals, NL);
  if (hb_config_bagging(cfg) || cfg->goss) {
    DALLOC(L->d_inbag, n);
    DALLOC(L->d_bag, n);
    DALLOC(L->d_nbag, 1);
    DALLOC(L->d_bag_all, 1);
    if ((st = bag_temp_bytes(n, cfg->goss, &L->cub_bytes)) != HB_OK) goto fail;
    HB_CUDA_TRY_FAIL(cudaMalloc(&L->d_cub, L->cub_bytes > 0 ? L->cub_bytes : 1), "allocating device memory");
  }
  if (cfg->feature_fraction_bynode < 1.0 && (st = upload_columns(L, d->feat_col, d->col_first, d->ncol)) != HB_OK)
    goto fail;  // the columns a node samples from
  if ((cfg->extra_trees || cfg->feature_fraction_bynode < 1.0) && (st = upload_draws(L)) != HB_OK) goto fail;
  if (cfg->goss) {  // goss.c's constants, computed as it computes them
    L->goss.top = (int)hb_goss_top(cfg->top_rate, n);
    L->goss.keep_p = cfg->other_rate / (1.0 - cfg->top_rate);
    L->goss.amp = (1.0 - cfg->top_rate) / cfg->other_rate;
    DALLOC(L->goss.size, n);
    DALLOC(L->goss.sorted, n);
    DALLOC(L->goss.keep, n);
    DALLOC(L->goss.above, 1);
  }
  // The trees' records are copied back (and DART's routing kept) whole, a
  // tree's unused records too: cleared once, so no copy reads memory never
  // written (compute-sanitizer's initcheck).
  HB_CUDA_TRY_FAIL(cudaMemset(L->d_ctl, 0, sizeof(Ctl) * (size_t)K), "clearing the trees' records");
  HB_CUDA_TRY_FAIL(cudaMemset(L->d_nodes, 0, sizeof(NodeOut) * (size_t)K * (NL > 1 ? NL - 1 : 1)),
                   "clearing the trees' records");
  HB_CUDA_TRY_FAIL(cudaMemset(L->d_route, 0, sizeof(NodeRoute) * (size_t)K * (NL > 1 ? NL - 1 : 1)),
                   "clearing the trees' records");
  HB_CUDA_TRY_FAIL(cudaMemset(L->d_leafout, 0, sizeof(LeafOut) * (size_t)K * NL), "clearing the trees' records");
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_label, d->label, sizeof(double) * (size_t)n, cudaMemcpyHostToDevice), "uploading labels");
  if (d->weight)
    HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_weight, d->weight, sizeof(double) * (size_t)n, cudaMemcpyHostToDevice), "uploading weights");
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_hoff, d->hist_offset, sizeof(int) * (size_t)F, cudaMemcpyHostToDevice), "uploading");
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_nbin, nbin, sizeof(int) * (size_t)F, cudaMemcpyHostToDevice), "uploading");
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_iscat, iscat, sizeof(int) * (size_t)F, cudaMemcpyHostToDevice), "uploading");
  // Scores start at each row's starting score (the model's, plus an offset where the data has one).
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_score, start, sizeof(double) * (size_t)n * L->K, cudaMemcpyHostToDevice),
      "uploading starting scores");
  if (L->d_base)
    HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_base, start, sizeof(double) * (size_t)n * L->K, cudaMemcpyHostToDevice),
        "uploading starting scores");
  if ((st = upload_train(L, d)) != HB_OK) goto fail;
  HB_CUDA_TRY_FAIL(cudaEventCreate(&L->round_ev[0]), "creating events");
  HB_CUDA_TRY_FAIL(cudaEventCreate(&L->round_ev[1]), "creating events");
  {
    const size_t free1 = memory_sample(&L->prof);
    if (free0 > free1) L->prof.device_bytes += (double)(free0 - free1);
  }
  hb_free(nbin);
  hb_free(iscat);
  *out = L;
  return HB_OK;
fail:
  hb_free(nbin);
  hb_free(iscat);
  hb_cuda_learner_free(L);
  return st;
}

extern "C" int hb_cuda_learner_add_valid(hb_cuda_learner_t *L, int nrow, const double *start, int *data) {
  int st = HB_OK;
  Valid v;
  memset(&v, 0, sizeof v);
  v.n = nrow;
  Valid *nv = (Valid *)hb_realloc(L->valid, sizeof(Valid) * (size_t)(L->nvalid + 1));
  if (!nv) return HB_ERR_NOMEM;
  L->valid = nv;
  const size_t free0 = memory_sample(&L->prof);
  if (nrow > 0) {
    DALLOC(v.d_bins, (size_t)nrow * L->stride);
    DALLOC(v.d_score, (size_t)nrow * L->K);
    HB_CUDA_TRY_FAIL(cudaMemcpy(v.d_score, start, sizeof(double) * (size_t)nrow * L->K, cudaMemcpyHostToDevice),
        "uploading validation scores");
    if (L->cfg.rf) {  // a forest's set comes before its first tree: start is its starting scores
      DALLOC(v.d_base, (size_t)nrow * L->K);
      HB_CUDA_TRY_FAIL(cudaMemcpy(v.d_base, start, sizeof(double) * (size_t)nrow * L->K, cudaMemcpyHostToDevice),
          "uploading validation scores");
    }
  }
  L->valid[L->nvalid++] = v;
  *data = L->nvalid;
  {
    const size_t free1 = memory_sample(&L->prof);
    if (free0 > free1) L->prof.device_bytes += (double)(free0 - free1);
  }
  if (L->graph) {  // the captured round updates the sets it knew: capture again with this one
    cudaGraphExecDestroy(L->graph);
    L->graph = NULL;
  }
  return HB_OK;
fail:
  cudaFree(v.d_bins);
  cudaFree(v.d_score);
  cudaFree(v.d_base);
  return st;
}

extern "C" int hb_cuda_learner_upload(hb_cuda_learner_t *L, int data, int row0, int n, const uint32_t *words) {
  if (data < 1 || data > L->nvalid) return hb_error_set(HB_ERR_INPUT, "no validation set %d on the device", data);
  const int nrow = L->valid[data - 1].n;
  if (row0 < 0 || n < 0 || row0 > nrow - n)
    return hb_error_set(HB_ERR_INPUT, "rows %d..%d are outside the %d rows of data set %d", row0, row0 + n - 1,
                        nrow, data);
  uint32_t *dst = L->valid[data - 1].d_bins + (size_t)row0 * L->stride;
  HB_CUDA_TRY(cudaMemcpy(dst, words, sizeof(uint32_t) * (size_t)n * L->stride, cudaMemcpyHostToDevice),
              "uploading bins");
  return HB_OK;
}

extern "C" void hb_cuda_learner_profile(hb_cuda_learner_t *L, int on) { L->profile = on; }

extern "C" void hb_cuda_learner_get_profile(const hb_cuda_learner_t *L, hb_cuda_profile_t *out) {
  *out = L->prof;
  memory_sample(out);
}

// Events for profiling the histogram launches of a round (2 per launch).
static int ensure_events(hb_cuda_learner_t *L, int need) {
  if (L->nev >= need) return HB_OK;
  cudaEvent_t *ev = (cudaEvent_t *)hb_realloc(L->ev, sizeof(cudaEvent_t) * (size_t)need);
  if (!ev) return HB_ERR_NOMEM;
  L->ev = ev;
  for (; L->nev < need; L->nev++) HB_CUDA_TRY(cudaEventCreate(&L->ev[L->nev]), "creating events");
  return HB_OK;
}

static TreeArgs tree_args(hb_cuda_learner_t *L, int k) {
  TreeArgs a;
  memset(&a, 0, sizeof a);
  const hb_config_t *c = &L->cfg;
  a.bins = L->d_bins;
  a.cols = L->d_cols;
  a.lg = hist_plan_lg(L->plan);
  a.bits = hist_plan_row_bits(L->plan);
  a.nrow = L->n;
  a.stride = L->hstride;
  a.nfeat = L->nfeat;
  a.hoff = L->d_hoff;
  a.nbin = L->d_nbin;
  a.is_cat = L->d_iscat;
  a.usable = L->d_usable + (size_t)k * L->nfeat;
  a.idx[0] = L->d_idx[0];
  a.idx[1] = L->d_idx[1];
  a.gh[0] = L->d_gh[0];
  a.gh[1] = L->d_gh[1];
  a.hist = L->d_hist;
  a.total_bins = L->total_bins;
  a.leaves = L->d_leaves;
  a.splits = L->d_splits;
  a.fbest = L->d_fbest;
  a.seen = L->d_seen;
  a.ok = L->d_ok;
  a.okw = (L->nfeat + 31) / 32 > 0 ? (L->nfeat + 31) / 32 : 1;
  a.skip_unsplit = c->skip_unsplittable;
  a.free_slots = L->d_free;
  a.flags = L->d_flags;
  a.ctl = L->d_ctl + k;
  const size_t nn = L->L > 1 ? (size_t)L->L - 1 : 1;
  a.nodes = L->d_nodes + (size_t)k * nn;
  a.route = L->d_route + (size_t)k * nn;
  a.leaf_parent = L->d_leaf_parent;
  a.rows_seen = L->profile ? L->d_rows_seen : NULL;
  a.rs = L->d_rs + k;
  a.max_leaves = L->L;
  a.dist = L->dist != NULL;
  a.x = L->xa;
  a.mono = L->d_mono;
  a.l1 = c->lambda_l1;
  a.l2 = c->lambda_l2;
  a.cat_l2 = c->cat_l2;
  a.cat_smooth = c->cat_smooth;
  a.min_hess = c->min_sum_hessian_in_leaf;
  a.min_gain = c->min_gain_to_split > 0 ? c->min_gain_to_split : 0.0;
  a.draw = c->extra_trees || c->feature_fraction_bynode < 1.0 || L->ngroups > 0;
  a.dr = a.draw ? L->d_draw : NULL;
  a.ngroups = L->ngroups;
  a.mds = c->max_delta_step;
  a.smooth = c->path_smooth;
  a.ext = a.mds > 0 || a.smooth > 0;
  a.min_data = c->min_data_in_leaf;
  a.max_depth = c->max_depth;
  a.max_cat_threshold = c->max_cat_threshold;
  a.max_cat_to_onehot = c->max_cat_to_onehot;
  a.min_data_per_group = c->min_data_per_group;
  return a;
}

// The score check of data set `data` (0 training, 1.. validation; bit 1 of
// the flag is the gradients'): its bit, 2 << data (validation sets past the
// 29th share the last), and the largest score that means something.
static ScoreCheck score_check(const hb_cuda_learner_t *L, int data) {
  ScoreCheck c;
  c.err = L->d_err;
  c.bit = 2 << (data < 29 ? data : 29);
  c.hi = HB_OBJ_LOG_LINK(L->cfg.objective) ? HB_LOG_LINK_MAX : HUGE_VAL;
  return c;
}

// ---- Data-parallel training: sums over the processes between kernels ----
// Each waits for the stream, copies what the next kernel decides by to
// pinned memory, sums it over the processes (dist.h; integers and maxima,
// the same in any order, so every process gets the one-process values)
// and copies it back. Every process calls them at the same points of the
// same launch sequence (what decides that sequence is itself summed).
// Each first agrees that no process failed since the last: a process that
// failed alone on its way here (a CUDA error, out of memory) meets the
// others in that agreement (hb_dist_agree, boost.c's at the round's end),
// not in a sum of another shape.
static int dist_ok(hb_cuda_learner_t *L) { return hb_dist_agree(L->dist, HB_OK, "in this round"); }

// count int64 at device address dev, summed over the processes into L->h_stage.
static int dist_sum_host(hb_cuda_learner_t *L, const void *dev, int64_t count, cudaStream_t s) {
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_stage, dev, sizeof(long long) * (size_t)count, cudaMemcpyDeviceToHost, s),
              "copying sums to the host");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "copying sums to the host");
  int st = dist_ok(L);
  if (st == HB_OK) st = hb_dist_sum_i64(L->dist, (int64_t *)L->h_stage, count);
  return st;
}

// count int64 at device address dev, in place.
static int dist_sum_dev(hb_cuda_learner_t *L, void *dev, int64_t count, cudaStream_t s) {
  int st = dist_sum_host(L, dev, count, s);
  if (st != HB_OK) return st;
  HB_CUDA_TRY(cudaMemcpyAsync(dev, L->h_stage, sizeof(long long) * (size_t)count, cudaMemcpyHostToDevice, s),
              "copying sums back");
  return HB_OK;
}

// The bag just drawn: its size over every process; empty everywhere, every
// row is in (the one-process rule, taken by every process alike).
static int dist_bag(hb_cuda_learner_t *L, cudaStream_t s) {
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_bag, L->d_nbag, sizeof(int), cudaMemcpyDeviceToHost, s), "copying the bag size");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "copying the bag size");
  int64_t nb = L->h_bag[0];
  int st = dist_ok(L);
  if (st == HB_OK) st = hb_dist_sum_i64(L->dist, &nb, 1);
  if (st != HB_OK) return st;
  L->h_bag[1] = nb == 0;
  L->nroot = nb == 0 ? L->N : nb;
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_bag_all, L->h_bag + 1, sizeof(int), cudaMemcpyHostToDevice, s),
              "copying the bag's rule");
  return bag_fill_launch(L->n, L->d_bag_all, L->d_inbag, kGrid1D, s);
}

// GOSS over every process's rows, as goss.c's hb_goss_sample_dist: the
// threshold is the exact order statistic of all the sizes, found a byte at
// a time from the top with each byte's counts summed over the processes;
// the rows equal to it are kept in global row order (the lower ranks'
// first), and the draws key rows by their global index. Every process
// keeps its share of the top ceil(top_rate N) rows and draws the rest, so
// the sample is the one process's on the concatenated rows.
static int dist_goss(hb_cuda_learner_t *L, int iter, cudaStream_t s) {
  const hb_config_t *cfg = &L->cfg;
  const GossArgs &a = L->goss;
  const int n = L->n, K = L->K;
  int st = goss_size_launch(a, n, K, L->d_grad, L->d_hess, kGrid1D, s);
  if (st != HB_OK) return st;
  int64_t r = L->N - a.top;  // the rank of the threshold among every size, increasing
  uint64_t prefix = 0;
  for (int shift = 56; shift >= 0; shift -= 8) {
    if ((st = goss_digit_launch(a, n, shift, prefix, a.cnt, kGrid1D, s)) != HB_OK ||
        (st = dist_sum_host(L, a.cnt, 256, s)) != HB_OK)
      return st;
    prefix = (prefix << 8) | (uint64_t)hb_goss_select_byte((const int64_t *)L->h_stage, &r);  // the sums
  }
  // the threshold goes up in place of a sorted copy, which this path does not make
  memcpy(L->h_stage, &prefix, sizeof prefix);  // the bits of a double
  HB_CUDA_TRY(cudaMemcpyAsync(a.sorted, L->h_stage, sizeof(double), cudaMemcpyHostToDevice, s),
              "copying the GOSS threshold");
  if ((st = goss_keep_launch(a, a.sorted, n, L->d_inbag, L->d_bag, L->d_nbag, L->d_cub, L->cub_bytes, kGrid1D, s)) !=
      HB_OK)
    return st;
  // the rows above it everywhere, and each process's rows equal to it
  int *hc = L->h_bag;  // pinned, 2 ints
  HB_CUDA_TRY(cudaMemcpyAsync(hc, a.above, sizeof(int), cudaMemcpyDeviceToHost, s), "copying the GOSS counts");
  HB_CUDA_TRY(cudaMemcpyAsync(hc + 1, L->d_nbag, sizeof(int), cudaMemcpyDeviceToHost, s), "copying the GOSS counts");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "copying the GOSS counts");
  const int here[2] = {hc[0], hc[1]};
  const int P = L->dist->size;
  int64_t *c = (int64_t *)L->h_stage;
  memset(c, 0, sizeof(int64_t) * ((size_t)P + 1));
  c[0] = here[0];
  c[1 + L->dist->rank] = here[1];
  if ((st = dist_ok(L)) != HB_OK || (st = hb_dist_sum_i64(L->dist, c, (int64_t)P + 1)) != HB_OK) return st;
  int64_t ties = hb_goss_ties_before(c, L->dist->rank, a.top);
  if (ties < 0) ties = 0;
  if (ties > here[1]) ties = here[1];
  if ((st = goss_draw_launch(a, cfg->seed, (uint64_t)iter, L->q.row0, (int)ties, NULL, n, K, L->d_grad, L->d_hess,
                             L->d_inbag, L->d_bag, L->d_nbag, L->d_cub, L->cub_bytes, kGrid1D, s)) != HB_OK)
    return st;
  // the rows of the tree over every process (at least top of them: never an empty bag)
  return dist_bag(L, s);
}

// A tree's gradient range over every process (largest |g| and |h| and,
// negated so that one maximum does, smallest |h|: doubles, exact), and
// {N, root rows} for the root kernel.
static int dist_root(hb_cuda_learner_t *L, cudaStream_t s) {
  unsigned long long *hv = (unsigned long long *)L->h_stage;
  HB_CUDA_TRY(cudaMemcpyAsync(hv, L->d_absmax, 3 * sizeof *hv, cudaMemcpyDeviceToHost, s), "copying the gradient range");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "copying the gradient range");
  double v[3];
  memcpy(v, hv, sizeof v);
  v[2] = -v[2];
  int st = dist_ok(L);
  if (st == HB_OK) st = hb_dist_max_f64(L->dist, v, 3);
  if (st != HB_OK) return st;
  v[2] = -v[2];
  memcpy(hv, v, sizeof v);
  L->h_glob[0] = L->N;
  L->h_glob[1] = L->nroot;
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_absmax, hv, 3 * sizeof *hv, cudaMemcpyHostToDevice, s), "copying the gradient range");
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_glob, L->h_glob, 2 * sizeof(long long), cudaMemcpyHostToDevice, s),
              "copying the row counts");
  return HB_OK;
}

// After the partition of a split of tree k: *done when the tree was
// finished before it (alike on every process: the search decided it on
// summed histograms); else the children's rows summed over the processes
// into the control block and the layout launched. L->h_step keeps the
// control block as the partition left it (its next_slot: the smaller
// child's histogram slot).
static int dist_layout(hb_cuda_learner_t *L, const TreeArgs &a, int k, cudaStream_t s, int *done) {
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_step, L->d_ctl + k, sizeof(Ctl), cudaMemcpyDeviceToHost, s),
              "copying the control block");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "copying the control block");
  const Ctl &c = *L->h_step;
  int st = dist_ok(L);
  if (st != HB_OK) return st;
  *done = c.done;
  if (c.done) return HB_OK;
  int64_t v[2] = {c.dist_left, (int64_t)c.cur_lf.count - c.dist_left};
  st = hb_dist_sum_i64(L->dist, v, 2);
  if (st != HB_OK) return st;
  int *g = (int *)L->h_stage;
  g[0] = (int)v[0];
  g[1] = (int)v[1];
  HB_CUDA_TRY(cudaMemcpyAsync(&L->d_ctl[k].glob_left, g, 2 * sizeof(int), cudaMemcpyHostToDevice, s),
              "copying the row counts");
  return layout_launch(a, s);
}

// Tree k's splits (its root made): num_leaves - 1 fixed sequences of
// kernels (learner.cuh). *ev_used counts profiling events.
static int enqueue_steps(hb_cuda_learner_t *L, const TreeArgs &a, int k, cudaStream_t s, int *ev_used,
                         int capturing) {
  const int NL = L->L;
  int st = HB_OK;
  // Profiling: four events per split: before the partition, before the
  // histogram, before the split search, after it.
// (cudaEventRecordExternal: under stream capture a plain record is only a
// dependency, and the event would never be timed.)
#define HB_MARK()                                                                                 \
  if (L->profile)                                                                                 \
  HB_CUDA_TRY(cudaEventRecordWithFlags(L->ev[(*ev_used)++], s, capturing ? cudaEventRecordExternal : 0), \
            "recording an event")
  for (int step = 0; step < NL; step++) {
    HB_MARK();
    if (step > 0 && (st = partition_launch(a, L->part_grid, s)) != HB_OK) return st;
    if (step > 0 && L->dist && !L->x) {  // the tree ends here on every process alike
      int done = 0;
      if ((st = dist_layout(L, a, k, s, &done)) != HB_OK) return st;
      if (done) {
        if (L->profile) (*ev_used)--;  // this step's first event is recorded again by the next
        break;
      }
    }
    HB_MARK();
    if ((st = hist_launch(L->plan, a, 0, s)) != HB_OK) return st;
    if (L->x) {
      if ((st = exchange_hist_launch(a, s)) != HB_OK) return st;
    } else if (L->dist &&
               (st = dist_sum_dev(L, L->d_hist + (size_t)(step == 0 ? 0 : L->h_step->next_slot) * L->total_bins,
                                  2 * (int64_t)L->total_bins, s)) != HB_OK) {
      return st;
    }
    HB_MARK();
    if ((st = split_launch(a, s)) != HB_OK) return st;
    HB_MARK();
  }
#undef HB_MARK
  return HB_OK;
}

// Peer to peer (exchange.cu), no host step among a tree's splits: tree k's
// splits as one graph, captured at its first tree and replayed (their
// kernels read what changes from device memory, as one GPU's round graph);
// on any failure of capture, direct launches.
static int replay_steps(hb_cuda_learner_t *L, const TreeArgs &a, int k, cudaStream_t s) {
  int ev = 0;
  if (!L->xgraph && !(L->xgraph = (cudaGraphExec_t *)hb_calloc((size_t)L->K, sizeof(cudaGraphExec_t))))
    return hb_error_set(HB_ERR_NOMEM, "out of memory launching a round");
  if (!L->xgraph[k] && !L->no_graph_steps) {
    cudaGraph_t g = NULL;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      const int st = enqueue_steps(L, a, k, s, &ev, 1);
      const cudaError_t e = cudaStreamEndCapture(s, &g);
      if (st != HB_OK || e != cudaSuccess || !g || cudaGraphInstantiateWithFlags(&L->xgraph[k], g, 0) != cudaSuccess) {
        L->xgraph[k] = NULL;
        L->no_graph_steps = 1;
      }
      if (g) cudaGraphDestroy(g);
    } else {
      L->no_graph_steps = 1;
    }
    cudaGetLastError();
    hb_error_clear();
  }
  if (!L->xgraph[k]) return enqueue_steps(L, a, k, s, &ev, 0);
  HB_CUDA_TRY(cudaGraphLaunch(L->xgraph[k], s), "launching a tree's splits");
  return HB_OK;
}

// Enqueue the K trees of a round on stream s, from the roots to the copies
// of the trees back to pinned memory. *ev_used counts profiling events.
static int enqueue_trees(hb_cuda_learner_t *L, cudaStream_t s, int *ev_used, int capturing) {
  const int n = L->n, K = L->K, NL = L->L;
  const size_t nn = NL > 1 ? (size_t)NL - 1 : 1;
  const int bagging = L->d_inbag != NULL;
  int st = HB_OK;
  *ev_used = 0;
  if (L->profile) HB_CUDA_TRY(cudaMemsetAsync(L->d_rows_seen, 0, sizeof(unsigned long long), s), "clearing a counter");
  for (int k = 0; k < K; k++) {
    TreeArgs a = tree_args(L, k);
    const double *g = L->d_grad + (size_t)k * n, *h = L->d_hess + (size_t)k * n;
    if ((st = absmax_launch(g, h, n, L->d_absmax, kGrid1D, s)) != HB_OK) return st;
    if (L->dist && (st = dist_root(L, s)) != HB_OK) return st;
    st = root_launch(a, g, h, L->d_absmax, n, L->dist ? L->root_rows : hist_plan_block_rows(L->plan, n),
                     bagging ? L->d_bag : NULL, bagging ? L->d_nbag : NULL, bagging ? L->d_bag_all : NULL, L->d_err,
                     L->d_rs + k, L->q, L->d_tree + k, L->dist ? L->d_glob : NULL, kGrid1D, s);
    if (st != HB_OK) return st;
    st = L->x && !L->profile && !capturing ? replay_steps(L, a, k, s) : enqueue_steps(L, a, k, s, ev_used, capturing);
    if (st != HB_OK) return st;
    st = route_train_launch(a, n, bagging ? L->d_inbag : NULL, g, h, L->d_rs + k, L->q, L->d_leaf_of_row, L->d_sums,
                            kGrid1D, s);
    if (st == HB_OK && L->dist) st = dist_sum_dev(L, L->d_sums, 2 * (int64_t)NL, s);
    if (st != HB_OK) return st;
    st = leaf_values_launch(a, n, L->d_rs + k, L->q, L->d_leaf_of_row, L->d_sums, L->d_leafout + (size_t)k * NL,
                            L->d_rate, L->d_base ? L->d_base + (size_t)k * n : NULL, L->d_inv_t,
                            L->d_score + (size_t)k * n, score_check(L, 0), !L->renew, kGrid1D, s);
    if (st != HB_OK) return st;
    for (int v = 0; v < L->nvalid && !L->renew; v++) {
      const Valid &vs = L->valid[v];
      if (vs.n < 1) continue;
      st = score_valid_launch(a, L->d_leafout + (size_t)k * NL, vs.d_bins, L->stride, vs.n,
                              vs.d_base ? vs.d_base + (size_t)k * vs.n : NULL, L->d_inv_t,
                              vs.d_score + (size_t)k * vs.n, score_check(L, v + 1), kGrid1D, s);
      if (st != HB_OK) return st;
    }
  }
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_ctl, L->d_ctl, sizeof(Ctl) * (size_t)K, cudaMemcpyDeviceToHost, s),
              "copying the trees back");
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_nodes, L->d_nodes, sizeof(NodeOut) * nn * K, cudaMemcpyDeviceToHost, s),
              "copying the trees back");
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_leafout, L->d_leafout, sizeof(LeafOut) * (size_t)NL * K,
                              cudaMemcpyDeviceToHost, s),
              "copying the trees back");
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_err, L->d_err, sizeof(int), cudaMemcpyDeviceToHost, s), "copying a flag back");
  if (L->profile)
    HB_CUDA_TRY(cudaMemcpyAsync(L->h_rows_seen, L->d_rows_seen, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s),
                "copying a counter back");
  return HB_OK;
}

// Capture the round's trees as a graph (once, or again when profiling was
// switched); on any failure of capture, fall back to direct launches.
static int run_trees(hb_cuda_learner_t *L, cudaStream_t s, int *ev_used) {
  int st = HB_OK;
  if (L->graph && L->graph_profile != L->profile) {
    cudaGraphExecDestroy(L->graph);
    L->graph = NULL;
  }
  if (!L->graph && !L->no_graph) {
    cudaGraph_t g = NULL;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      st = enqueue_trees(L, s, ev_used, 1);
      cudaError_t e = cudaStreamEndCapture(s, &g);
      if (st == HB_OK && e == cudaSuccess && g && cudaGraphInstantiateWithFlags(&L->graph, g, 0) == cudaSuccess) {
        L->graph_profile = L->profile;
      } else {
        L->graph = NULL;
        L->no_graph = 1;
      }
      if (g) cudaGraphDestroy(g);
    } else {
      L->no_graph = 1;
    }
    cudaGetLastError();
    hb_error_clear();
    st = HB_OK;
  }
  if (L->graph) {
    HB_CUDA_TRY(cudaGraphLaunch(L->graph, s), "launching a training round");
    return HB_OK;
  }
  return enqueue_trees(L, s, ev_used, 0);
}

// DART: room for the routing of the trees of rounds 0..iter (copied into
// a larger buffer when it runs out).
static int keep_room(hb_cuda_learner_t *L, int iter) {
  const long long need = ((long long)iter + 1) * L->K;
  if (need <= L->kept_cap) return HB_OK;
  const size_t nn = L->L > 1 ? (size_t)L->L - 1 : 1;
  long long cap = L->kept_cap ? 2 * L->kept_cap : 64;
  if (cap < need) cap = need;
  NodeRoute *p = NULL;
  HB_CUDA_TRY(cudaMalloc((void **)&p, sizeof(NodeRoute) * nn * (size_t)cap), "allocating DART's trees");
  if (L->kept_n > 0) {
    const cudaError_t e = cudaMemcpyAsync(p, L->d_kept, sizeof(NodeRoute) * nn * (size_t)L->kept_n,
                                          cudaMemcpyDeviceToDevice, L->st);
    const cudaError_t w = e == cudaSuccess ? cudaStreamSynchronize(L->st) : e;
    if (w != cudaSuccess) {
      cudaFree(p);
      return hb_cuda_fail(w, "copying DART's trees");
    }
  }
  cudaFree(L->d_kept);
  L->d_kept = p;
  L->kept_cap = cap;
  return HB_OK;
}

extern "C" int hb_cuda_learner_reserve(hb_cuda_learner_t *L, int iter) {
  return L->cfg.dart ? keep_room(L, iter) : HB_OK;
}

extern "C" int hb_cuda_learner_round(hb_cuda_learner_t *L, int iter, double rate, const uint8_t *usable,
                                     hb_cuda_tree_t *trees) {
  const hb_config_t *cfg = &L->cfg;
  const int n = L->n, K = L->K, NL = L->L, F = L->nfeat;
  const size_t nn = NL > 1 ? (size_t)NL - 1 : 1;  // split records per tree
  cudaStream_t s = L->st;
  int st = HB_OK, ev_used = 0;
  if (cfg->dart && (st = keep_room(L, iter)) != HB_OK) return st;
  if (L->profile) {
    if ((st = ensure_events(L, 4 * NL * K)) != HB_OK) return st;
    HB_CUDA_TRY(cudaEventRecord(L->round_ev[0], s), "recording an event");
  }
  HB_CUDA_TRY(cudaMemsetAsync(L->d_err, 0, sizeof(int), s), "clearing the error flag");
  // a forest's trees all fit the gradients at the starting scores; the
  // host's gradients, when it gave them, were split into d_grad and d_hess
  if (L->host_grad) {
    L->host_grad = 0;
  } else if ((st = gradients_launch(cfg, n, K, L->d_label, L->d_weight, L->d_base ? L->d_base : L->d_score,
                                    L->d_grad, L->d_hess, kGrid1D, s)) != HB_OK) {
    return st;
  }
  if (cfg->goss) {
    // this round's rows (after 1 / learning_rate rounds on every row, as learner_cpu.c)
    L->goss.on = (double)iter >= floor(1.0 / cfg->learning_rate);
    st = L->dist && L->goss.on
             ? dist_goss(L, iter, s)
             : goss_launch(L->goss, cfg->seed, (uint64_t)iter, n, K, L->d_grad, L->d_hess, L->d_inbag, L->d_bag,
                           L->d_nbag, L->d_bag_all, L->d_cub, L->cub_bytes, kGrid1D, s);
    if (st != HB_OK) return st;
    if (L->dist && !L->goss.on) L->nroot = L->N;  // every row of every process
  } else if (L->d_inbag && iter % cfg->bagging_freq == 0) {
    // balanced bagging: each row at its class's rate, the labels on the device
    const BagRates rates = {cfg->bagging_fraction, cfg->pos_bagging_fraction, cfg->neg_bagging_fraction,
                            hb_config_balanced_bagging(cfg) ? L->d_label : nullptr};
    st = bag_launch(cfg->seed, (uint64_t)(iter / cfg->bagging_freq), rates, n, L->q.row0, !L->dist,
                    L->d_inbag, L->d_bag, L->d_nbag, L->d_bag_all, L->d_cub, L->cub_bytes, kGrid1D, s);
    if (st == HB_OK && L->dist) st = dist_bag(L, s);
    if (st != HB_OK) return st;
  }
  memcpy(L->h_usable, usable, (size_t)K * F);
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_usable, L->h_usable, (size_t)K * F, cudaMemcpyHostToDevice, s),
              "uploading the feature sample");
  for (int k = 0; k < K; k++) L->h_tree[k] = iter * K + k;
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_tree, L->h_tree, sizeof(int) * (size_t)K, cudaMemcpyHostToDevice, s),
              "uploading the tree numbers");
  if (L->d_inv_t) {  // as learner_cpu.c's forest update: 1 / the trees of a class with this round's
    *L->h_inv_t = 1.0 / (double)(iter + 1);
    HB_CUDA_TRY(cudaMemcpyAsync(L->d_inv_t, L->h_inv_t, sizeof(double), cudaMemcpyHostToDevice, s),
                "uploading the forest's weight");
  }
  if (rate != L->rate_up) {  // DART's rate for this round (the graph reads it)
    *L->h_rate = rate;
    HB_CUDA_TRY(cudaMemcpyAsync(L->d_rate, L->h_rate, sizeof(double), cudaMemcpyHostToDevice, s),
                "uploading the learning rate");
    L->rate_up = rate;
  }
  if ((st = run_trees(L, s, &ev_used)) != HB_OK) return st;
  if (cfg->dart) {  // the round's trees' routing, kept for their drops
    HB_CUDA_TRY(cudaMemcpyAsync(L->d_kept + (size_t)iter * K * nn, L->d_route, sizeof(NodeRoute) * nn * K,
                                cudaMemcpyDeviceToDevice, s),
                "keeping DART's trees");
    if ((long long)(iter + 1) * K > L->kept_n) L->kept_n = (long long)(iter + 1) * K;
  }
  if (L->profile) HB_CUDA_TRY(cudaEventRecord(L->round_ev[1], s), "recording an event");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "a training round");
  if (L->x) {
    int late = 0;
    if ((st = exchange_timed_out(L->x, &late)) != HB_OK) return st;
    if (late)
      return hb_error_set(HB_ERR_STATE, "round %d: a GPU waited over two minutes for another process's sums (a "
                                        "process stopped or hung)", iter + 1);
  }
  if (*L->h_err) {
    L->diverged = *L->h_err;
    return hb_error_set(HB_ERR_INPUT, "round %d: the %s went out of range", iter + 1,
                        *L->h_err & 1 ? "gradients" : "scores");
  }
  if (L->profile) {
    float ms = 0;
    if (ev_used == 0) ev_used = L->graph ? 4 * NL * K : 0;  // a replayed graph records the same events
    for (int e = 0; e + 3 < ev_used; e += 4) {
      HB_CUDA_TRY(cudaEventElapsedTime(&ms, L->ev[e], L->ev[e + 1]), "reading an event");
      L->prof.partition_ms += ms;
      HB_CUDA_TRY(cudaEventElapsedTime(&ms, L->ev[e + 1], L->ev[e + 2]), "reading an event");
      L->prof.hist_ms += ms;
      HB_CUDA_TRY(cudaEventElapsedTime(&ms, L->ev[e + 2], L->ev[e + 3]), "reading an event");
      L->prof.split_ms += ms;
      L->prof.splits++;
    }
    HB_CUDA_TRY(cudaEventElapsedTime(&ms, L->round_ev[0], L->round_ev[1]), "reading an event");
    L->prof.round_ms += ms;
    L->prof.rounds++;
    // Bytes a histogram reads per row: its bins (the words of its features),
    // its row index and its fixed-point gradient pair.
    const double row_bytes = 4.0 * ((F + 3) / 4) + 4.0 + 8.0;
    L->prof.hist_bytes += (double)*L->h_rows_seen * row_bytes;
  }
  // Hand the trees out as split records.
  for (int k = 0; k < K; k++) {
    const Ctl &c = L->h_ctl[k];
    const int nl = c.num_leaves;
    hb_cuda_split_t *sp = L->splits + (size_t)k * nn;
    hb_cuda_leaf_t *lf = L->leaves + (size_t)k * NL;
    for (int i = 0; i < nl - 1; i++) {
      const NodeOut &o = L->h_nodes[(size_t)k * nn + i];
      hb_cuda_split_t &r = sp[i];
      r.leaf = o.leaf;
      r.feature = o.feature;
      r.threshold = o.threshold;
      r.default_left = o.flags & 1;
      r.is_cat = (o.flags >> 1) & 1;
      r.gain = o.gain;
      r.left_g = (double)o.lg * c.scale_g;
      r.left_h = (double)o.lh * c.scale_h;
      r.right_g = (double)o.rg * c.scale_g;
      r.right_h = (double)o.rh * c.scale_h;
      r.parent_g = (double)(o.lg + o.rg) * c.scale_g;
      r.parent_h = (double)(o.lh + o.rh) * c.scale_h;
      r.left_count = o.ln;
      r.right_count = o.rn;
      r.left_out = o.lout;
      r.right_out = o.rout;
      memcpy(r.left_bins, o.bins, sizeof r.left_bins);
    }
    for (int l = 0; l < nl; l++) {
      const LeafOut &o = L->h_leafout[(size_t)k * NL + l];
      lf[l].value = o.value;
      lf[l].g = o.g;
      lf[l].h = o.h;
      lf[l].count = o.count;
    }
    trees[k].num_leaves = nl;
    trees[k].splits = sp;
    trees[k].leaves = lf;
  }
  return HB_OK;
}

extern "C" int hb_cuda_learner_set_interactions(hb_cuda_learner_t *L, int ngroups, const uint8_t *grp_feat,
                                                 const uint8_t *grp_col, const int *col_first, int ncol) {
  int st = HB_OK;
  if (L->graph) return hb_error_set(HB_ERR_STATE, "interaction constraints are set before the first round");
  // none until the new groups are all on the device, in the draws' copy too
  // (a failure below leaves no pointer to freed groups there)
  L->ngroups = L->gw = 0;
  cudaFree(L->d_grp_feat);
  cudaFree(L->d_grp_col);
  cudaFree(L->d_leaf_grp);
  L->d_grp_feat = L->d_grp_col = NULL;
  L->d_leaf_grp = NULL;
  if (L->d_draw && (st = upload_draws(L)) != HB_OK) return st;
  if (ngroups <= 0) return HB_OK;
  const int F = L->nfeat, gw = (ngroups + 63) / 64;
  if (!L->d_fcol) {  // each feature's column, from the columns' first features
    int *fcol = (int *)hb_malloc(sizeof(int) * (size_t)F);
    if (!fcol) return hb_error_set(HB_ERR_NOMEM, "out of memory for interaction constraints");
    for (int c = 0; c < ncol; c++)
      for (int f = col_first[c]; f < col_first[c + 1]; f++) fcol[f] = c;
    st = upload_columns(L, fcol, col_first, ncol);
    hb_free(fcol);
    if (st != HB_OK) return st;
  }
  DALLOC(L->d_grp_feat, (size_t)ngroups * F);
  DALLOC(L->d_grp_col, (size_t)ngroups * ncol);
  DALLOC(L->d_leaf_grp, (size_t)L->L * gw);
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_grp_feat, grp_feat, (size_t)ngroups * F, cudaMemcpyHostToDevice),
                   "uploading interaction constraints");
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_grp_col, grp_col, (size_t)ngroups * ncol, cudaMemcpyHostToDevice),
                   "uploading interaction constraints");
  L->ngroups = ngroups;
  L->gw = gw;
  return upload_draws(L);
fail:
  return st;
}

extern "C" int hb_cuda_learner_set_monotone(hb_cuda_learner_t *L, const int8_t *mono) {
  int st = HB_OK;
  if (L->graph) return hb_error_set(HB_ERR_STATE, "monotone constraints are set before the first round");
  if (!L->d_mono) DALLOC(L->d_mono, L->nfeat);
  HB_CUDA_TRY_FAIL(cudaMemcpy(L->d_mono, mono, (size_t)L->nfeat, cudaMemcpyHostToDevice), "uploading monotone constraints");
  return HB_OK;
fail:
  return st;
}

extern "C" int hb_cuda_learner_set_dist(hb_cuda_learner_t *L, const hb_dist_t *dist, int64_t row0, int64_t nglobal) {
  int st = HB_OK;
  if (!dist || dist->size < 2) return HB_OK;
  if (L->graph || L->dist) return hb_error_set(HB_ERR_STATE, "data-parallel training is set once, before the first round");
  const int tb = L->total_bins;
  {  // what a sum goes through: a histogram, a tree's leaves, or GOSS's byte counts and rows at its threshold
    size_t stage = (size_t)(tb > L->L ? tb : L->L);
    if (stage < 256) stage = 256;
    if (stage < (size_t)dist->size + 1) stage = (size_t)dist->size + 1;
    HALLOC(L->h_stage, 2 * stage + 4);
  }
  if (L->cfg.goss) {  // the top share is of every process's rows (goss.c's constants)
    L->goss.top = (int)hb_goss_top(L->cfg.top_rate, nglobal);
    DALLOC(L->goss.cnt, 256);
  }
  HALLOC(L->h_glob, 2);
  HALLOC(L->h_step, 1);
  HALLOC(L->h_bag, 2);
  DALLOC(L->d_glob, 2);
fail:  // a failure here is agreed on before the exchange's collective operations
  if ((st = hb_dist_agree(dist, st, "to set up the GPU learner")) != HB_OK) return st;
  // peer to peer where every process has its own GPU on this machine (else through MPI)
  if ((st = exchange_open(dist, 2 * (long long)(tb > 1 ? tb : 1), &L->x)) != HB_OK) return st;
  if (L->x) L->xa = exchange_args(L->x);
  L->dist = dist;
  L->N = nglobal;
  L->nroot = nglobal;
  L->q.row0 = (uint64_t)row0;
  L->no_graph = 1;
  // the fixed-point scale of one process holding all N rows (the largest
  // over the processes' GPUs: alike everywhere, and each GPU's where they
  // are alike), and no block here summing more rows than that allows
  {
    double rows = hist_plan_block_rows_of(L->plan, nglobal);
    if ((st = hb_dist_max_f64(dist, &rows, 1)) != HB_OK) return st;
    L->root_rows = (int)rows;
  }
  hist_plan_limit_rows(L->plan, L->n, L->root_rows);
  return HB_OK;
}

extern "C" int hb_cuda_learner_set_gradients(hb_cuda_learner_t *L, const double *gh) {
  const size_t m = (size_t)L->n * L->K;
  int st = HB_OK;
  if (!L->d_host_gh) DALLOC(L->d_host_gh, 2 * m);
  HB_CUDA_TRY_FAIL(cudaMemcpyAsync(L->d_host_gh, gh, sizeof(double) * 2 * m, cudaMemcpyHostToDevice, L->st),
      "uploading gradients");
  if ((st = split_pairs_launch(L->d_host_gh, m, L->d_grad, L->d_hess, kGrid1D, L->st)) != HB_OK) return st;
  HB_CUDA_TRY(cudaStreamSynchronize(L->st), "uploading gradients");  // gh may change once we return
  L->host_grad = 1;
  return HB_OK;
fail:
  return st;
}

extern "C" int hb_cuda_learner_leaf_rows(hb_cuda_learner_t *L, int *leaf_of_row, uint8_t *inbag) {
  if (L->K != 1) return hb_error_set(HB_ERR_INPUT, "a round's leaves are handed out for one tree a round only");
  HB_CUDA_TRY(cudaMemcpyAsync(leaf_of_row, L->d_leaf_of_row, sizeof(int) * (size_t)L->n, cudaMemcpyDeviceToHost, L->st),
              "copying the rows' leaves back");
  if (L->d_inbag)
    HB_CUDA_TRY(cudaMemcpyAsync(inbag, L->d_inbag, (size_t)L->n, cudaMemcpyDeviceToHost, L->st),
                "copying the rows' leaves back");
  HB_CUDA_TRY(cudaStreamSynchronize(L->st), "copying the rows' leaves back");
  if (!L->d_inbag) memset(inbag, 1, (size_t)L->n);
  return HB_OK;
}

extern "C" int hb_cuda_learner_set_leaf_values(hb_cuda_learner_t *L, const double *values) {
  if (!L->renew || L->K != 1)
    return hb_error_set(HB_ERR_STATE, "leaf values are set only for l1, quantile and MAPE trees");
  const int NL = L->h_ctl[0].num_leaves, n = L->n;
  cudaStream_t s = L->st;
  for (int l = 0; l < NL; l++) L->h_leafout[l].value = values[l];
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_leafout, L->h_leafout, sizeof(LeafOut) * (size_t)NL, cudaMemcpyHostToDevice, s),
              "uploading leaf values");
  TreeArgs a = tree_args(L, 0);
  HB_CUDA_TRY(cudaMemsetAsync(L->d_err, 0, sizeof(int), s), "clearing the error flag");
  int st = score_add_launch(L->d_leaf_of_row, L->d_leafout, n, L->d_base, L->d_inv_t, L->d_score,
                            score_check(L, 0), kGrid1D, s);
  for (int v = 0; v < L->nvalid && st == HB_OK; v++) {
    const Valid &vs = L->valid[v];
    if (vs.n > 0)
      st = score_valid_launch(a, L->d_leafout, vs.d_bins, L->stride, vs.n, vs.d_base, L->d_inv_t, vs.d_score,
                              score_check(L, v + 1), kGrid1D, s);
  }
  if (st != HB_OK) return st;
  HB_CUDA_TRY(cudaMemcpyAsync(L->h_err, L->d_err, sizeof(int), cudaMemcpyDeviceToHost, s), "copying a flag back");
  HB_CUDA_TRY(cudaStreamSynchronize(s), "updating scores");  // h_leafout is reused by the next round
  if (*L->h_err) {
    L->diverged = *L->h_err;
    return hb_error_set(HB_ERR_INPUT, "the scores went out of range");
  }
  return HB_OK;
}

extern "C" int hb_cuda_learner_diverged(const hb_cuda_learner_t *L) { return L ? L->diverged : 0; }

extern "C" int hb_cuda_learner_add_tree(hb_cuda_learner_t *L, int data, int tree, int num_leaves, const double *values,
                                        double factor) {
  if (!L->cfg.dart || tree < 0 || tree >= L->kept_n || num_leaves < 1 || num_leaves > L->L)
    return hb_error_set(HB_ERR_INTERNAL, "histboost bug: the GPU keeps no tree %d of %d leaves for DART", tree,
                        num_leaves);
  if (data < 0 || data > L->nvalid) return hb_error_set(HB_ERR_INPUT, "no data set %d on the device", data);
  const int k = tree % L->K, nrow = data == 0 ? L->n : L->valid[data - 1].n;
  const size_t nn = L->L > 1 ? (size_t)L->L - 1 : 1;
  if (nrow < 1) return HB_OK;
  cudaStream_t s = L->st;
  // from pageable memory: the call returns once `values` is read
  HB_CUDA_TRY(cudaMemcpyAsync(L->d_vals, values, sizeof(double) * (size_t)num_leaves, cudaMemcpyHostToDevice, s),
              "uploading a tree's values");
  TreeArgs a = tree_args(L, k);
  double *score = (data == 0 ? L->d_score : L->valid[data - 1].d_score) + (size_t)k * nrow;
  const uint32_t *words = data == 0 ? NULL : L->valid[data - 1].d_bins;
  return tree_add_launch(a, L->d_kept + (size_t)tree * nn, num_leaves, L->d_vals, factor, words, L->stride, nrow,
                         score, kGrid1D, s);
}

extern "C" int hb_cuda_learner_scores(hb_cuda_learner_t *L, int data, double *out) {
  if (data < 0 || data > L->nvalid) return hb_error_set(HB_ERR_INPUT, "no data set %d on the device", data);
  const int nrow = data == 0 ? L->n : L->valid[data - 1].n;
  const double *src = data == 0 ? L->d_score : L->valid[data - 1].d_score;
  if (nrow < 1) return HB_OK;
  HB_CUDA_TRY(cudaMemcpyAsync(out, src, sizeof(double) * (size_t)nrow * L->K, cudaMemcpyDeviceToHost, L->st),
              "copying scores back");
  HB_CUDA_TRY(cudaStreamSynchronize(L->st), "copying scores back");
  return HB_OK;
}

// ---- kernel checks for tests and benchmarks ----

extern "C" int hb_cuda_hist_check(int nrow, int nfeat, const int *num_bin, const int *hist_offset, int total_bins,
                                  const uint32_t *words, const int *rows, int nrows, const double *g, const double *h,
                                  int quant_bits, int mode, int smem_limit, int reps, int64_t *out_g, int64_t *out_h,
                                  int *exp_g, int *exp_h, double *ms) {
  if (!hb_cuda_available()) return hb_error_set(HB_ERR_INPUT, "%s", hb_cuda_status());
  const int stride = hb_cuda_row_stride(nfeat);  // of `words`: 8 bits a feature
  int hstride = stride;                          // of the kernels' input (4 bits a feature when bins allow)
  HistPlan *plan = NULL;
  uint32_t *d_bins = NULL, *h_nib = NULL;
  int *d_rows = NULL;
  int2 *d_gh = NULL, *h_gh = NULL;
  Bin *d_out = NULL, *h_out = NULL;
  RoundScales *d_rs = NULL, h_rs;
  memset(&h_rs, 0, sizeof h_rs);
  cudaEvent_t *evs = NULL;
  float *times = NULL;
  int st = HB_OK;
  double mg = 0, mh = 0;
  for (int i = 0; i < nrow; i++) {
    if (fabs(g[i]) > mg) mg = fabs(g[i]);
    if (fabs(h[i]) > mh) mh = fabs(h[i]);
  }
  int eg = 0, eh = 0;
  if ((st = hist_plan_create(nrow, nfeat, num_bin, hist_offset, total_bins, smem_limit, quant_bits > 0, &plan)) !=
      HB_OK)
    goto fail;
  if (quant_bits > 0) {
    // g and h are quantized levels already (integers in range): summed as they are.
    h_rs.rows16 = hb_quant_rows16(hb_quant_grad_levels(quant_bits), hb_quant_hess_levels(quant_bits));
  } else {
    // Exponents as the learner picks them: the most rows a block sums, at
    // the largest magnitude, within 2^30.
    const double rows_bound = hist_plan_block_rows(plan, nrow);
    eg = hb_fixed_exponent(mg, rows_bound, 30);
    eh = hb_fixed_exponent(mh, rows_bound, 30);
  }
  *exp_g = eg;
  *exp_h = eh;
  h_gh = (int2 *)hb_malloc(sizeof(int2) * (size_t)(nrows > 0 ? nrows : 1));
  h_out = (Bin *)hb_malloc(sizeof(Bin) * (size_t)total_bins);
  if (!h_gh || !h_out) {
    st = HB_ERR_NOMEM;
    goto fail;
  }
  hstride = hist_plan_stride(plan);
  if (hist_plan_row_bits(plan) == 4) {
    // the learner builds these rows on the device (rows_launch); here from the 8-bit ones
    h_nib = (uint32_t *)hb_calloc((size_t)nrow * (size_t)hstride + 1, sizeof(uint32_t));
    if (!h_nib) {
      st = HB_ERR_NOMEM;
      goto fail;
    }
    for (int i = 0; i < nrow; i++)
      for (int f = 0; f < nfeat; f++) {
        const uint32_t b = (words[(size_t)i * stride + f / 4] >> (8 * (f % 4))) & 255u;
        h_nib[(size_t)i * hstride + f / 8] |= b << (4 * (f % 8));
      }
  }
  // The learner keeps (g, h) in segment order: position i holds row rows[i]'s.
  for (int i = 0; i < nrows; i++) {
    const int r = rows ? rows[i] : i;
    h_gh[i] = make_int2((int)nearbyint(ldexp(g[r], eg)), (int)nearbyint(ldexp(h[r], eh)));
  }
  DALLOC(d_bins, (size_t)nrow * hstride);
  DALLOC(d_gh, nrows > 0 ? nrows : 1);
  DALLOC(d_out, total_bins);
  DALLOC(d_rs, 1);
  HB_CUDA_TRY_FAIL(cudaMemcpy(d_rs, &h_rs, sizeof h_rs, cudaMemcpyHostToDevice), "uploading");
  if (rows) DALLOC(d_rows, nrows > 0 ? nrows : 1);
  HB_CUDA_TRY_FAIL(cudaMemcpy(d_bins, h_nib ? h_nib : words, sizeof(uint32_t) * (size_t)nrow * hstride, cudaMemcpyHostToDevice),
      "uploading bins");
  if ((st = hist_plan_bank_rows(plan, d_bins, nrow, hstride, 0)) != HB_OK) goto fail;
  HB_CUDA_TRY_FAIL(cudaMemcpy(d_gh, h_gh, sizeof(int2) * (size_t)nrows, cudaMemcpyHostToDevice), "uploading gradients");
  if (rows) HB_CUDA_TRY_FAIL(cudaMemcpy(d_rows, rows, sizeof(int) * (size_t)nrows, cudaMemcpyHostToDevice), "uploading rows");
  HB_CUDA_TRY_FAIL(cudaMemset(d_out, 0, sizeof(Bin) * (size_t)total_bins), "clearing the histogram");
  if ((st = hist_launch_rows(plan, d_bins, hstride, d_rows, d_gh, nrows, d_out, d_rs, mode, 0)) != HB_OK) goto fail;
  HB_CUDA_TRY_FAIL(cudaDeviceSynchronize(), "the histogram kernel");
  HB_CUDA_TRY_FAIL(cudaMemcpy(h_out, d_out, sizeof(Bin) * (size_t)total_bins, cudaMemcpyDeviceToHost), "copying the histogram");
  for (int k = 0; k < total_bins; k++) {
    out_g[k] = h_out[k].g;
    out_h[k] = h_out[k].h;
  }
  if (reps > 0 && ms) {
    // Back to back, no waiting in between: an idle GPU lowers its clocks,
    // which would make small launches look slower than they are in training.
    times = (float *)hb_malloc(sizeof(float) * (size_t)reps);
    evs = (cudaEvent_t *)hb_calloc(2 * (size_t)reps, sizeof(cudaEvent_t));
    if (!times || !evs) {
      st = HB_ERR_NOMEM;
      goto fail;
    }
    for (int r = 0; r < 2 * reps; r++) HB_CUDA_TRY_FAIL(cudaEventCreate(&evs[r]), "creating events");
    for (int r = 0; r < reps; r++) {
      HB_CUDA_TRY_FAIL(cudaMemsetAsync(d_out, 0, sizeof(Bin) * (size_t)total_bins, 0), "clearing the histogram");
      HB_CUDA_TRY_FAIL(cudaEventRecord(evs[2 * r], 0), "recording an event");
      if ((st = hist_launch_rows(plan, d_bins, hstride, d_rows, d_gh, nrows, d_out, d_rs, mode, 0)) != HB_OK) goto fail;
      HB_CUDA_TRY_FAIL(cudaEventRecord(evs[2 * r + 1], 0), "recording an event");
    }
    HB_CUDA_TRY_FAIL(cudaDeviceSynchronize(), "timing the histogram kernel");
    for (int r = 0; r < reps; r++) HB_CUDA_TRY_FAIL(cudaEventElapsedTime(&times[r], evs[2 * r], evs[2 * r + 1]), "reading an event");
    qsort(times, (size_t)reps, sizeof(float), [](const void *x, const void *y) {
      const float a = *(const float *)x, b = *(const float *)y;
      return (a > b) - (a < b);
    });
    *ms = times[reps / 2];
  }
fail:
  if (evs) {
    for (int r = 0; r < 2 * reps; r++)
      if (evs[r]) cudaEventDestroy(evs[r]);
    hb_free(evs);
  }
  hb_free(times);
  cudaFree(d_bins);
  cudaFree(d_rows);
  cudaFree(d_gh);
  cudaFree(d_out);
  cudaFree(d_rs);
  hist_plan_free(plan);
  hb_free(h_gh);
  hb_free(h_out);
  hb_free(h_nib);
  cudaGetLastError();
  return st;
}
