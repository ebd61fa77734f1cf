/* cuda.h: the one C interface between the engine/glue and the GPU learner.
 * Pure C (extern "C" when compiled as C++/CUDA); no R headers. Built from
 * the .cu files of this folder when configure found a working nvcc
 * (HB_WITH_CUDA), from cuda_stub.c otherwise; the stub answers every call
 * with "built without CUDA", so callers need no #ifdef.
 *
 * The learner keeps everything a round needs on the device: the binned
 * training (and validation) rows, uploaded once; scores, gradients and
 * hessians; the row partition and histograms. A round computes gradients,
 * grows num_class trees leaf by leaf without returning to the host, updates
 * the scores, and then copies the finished trees back as split records that
 * the engine turns into trees (src/engine/learner_cuda.c, the GPU learner's
 * host side behind the engine's learner interface): nothing here calls the
 * engine's learner, only its error and allocation utilities. */
#ifndef HB_CUDA_H
#define HB_CUDA_H
#include <stdint.h>
#include "config.h"
#include "dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build has the GPU learner and a usable GPU is present. */
int hb_cuda_available(void);
/* A human-readable line saying why CUDA is (not) available; never NULL.
 * Static storage, refreshed by each call (main thread only). */
const char *hb_cuda_status(void);
/* 1 when the package was compiled with CUDA (whether or not a GPU is present). */
int hb_cuda_built(void);

/* What the GPU is: name, compute capability, multiprocessors, memory (bytes,
 * total and free), CUDA runtime and driver versions. HB_OK, or an error
 * (no GPU, built without CUDA) with a message. */
typedef struct {
  char name[256];
  int major, minor, sms;
  double total_mem, free_mem;
  int runtime_version, driver_version;
} hb_cuda_info_t;
int hb_cuda_device_info(hb_cuda_info_t *out);

typedef struct hb_cuda_learner hb_cuda_learner_t;
struct hb_dist;

/* Words per row of the packed bins the device takes for nfeat features:
 * feature f in byte f % 4 of word f / 4, rows padded to whole 16- or
 * 32-byte sectors so that a row's bins are read in one go. */
int hb_cuda_row_stride(int nfeat);

/* A learner for cfg on the training set d (its shape, bin counts, feature
 * types, labels, weights and bins are read and copied; d may go after this
 * call). The scores start at start[k * nrow + i] for row i and class k
 * (copied). Out of device memory is HB_ERR_NOMEM, with everything freed. */
int hb_cuda_learner_create(const hb_config_t *cfg, const hb_dataset_t *d, const double *start,
                           hb_cuda_learner_t **out);
void hb_cuda_learner_free(hb_cuda_learner_t *L);

/* A validation set of nrow rows (binned with the training mappers), whose
 * scores start at start[k * nrow + i]; returns its number (1, 2, ...) in
 * *data. Its bins follow with hb_cuda_learner_upload(L, *data, ...). */
int hb_cuda_learner_add_valid(hb_cuda_learner_t *L, int nrow, const double *start, int *data);

/* Rows row0 .. row0 + n - 1 of validation set `data` (1, 2, ...), packed as
 * hb_cuda_row_stride() words per row. */
int hb_cuda_learner_upload(hb_cuda_learner_t *L, int data, int row0, int n, const uint32_t *words);

/* A grown tree as the device made it: split i made internal node i by
 * splitting leaf `leaf` (which stays the left child; the right child is leaf
 * i + 1), as hb_tree_split_leaf() numbers them. */
typedef struct {
  int leaf, feature, threshold, default_left, is_cat;
  double gain;
  double left_g, left_h, right_g, right_h;  /* children's sums as the search saw them */
  double parent_g, parent_h;                /* the leaf's sums (its integer sums times the scales) */
  int left_count, right_count;              /* exact */
  double left_out, right_out;               /* max_delta_step / path_smooth: the children's unshrunk outputs */
  uint32_t left_bins[8];                    /* bins going left (the missing bin when default_left) */
} hb_cuda_split_t;
typedef struct {
  double value;   /* shrunk output, from the refit sums */
  double g, h;    /* the leaf's in-bag rows' gradient and hessian sums */
  int count;
} hb_cuda_leaf_t;
typedef struct {
  int num_leaves;
  const hb_cuda_split_t *splits;   /* num_leaves - 1 */
  const hb_cuda_leaf_t *leaves;    /* num_leaves */
} hb_cuda_tree_t;

/* One boosting round `iter` (0-based): gradients, the in-bag rows, and
 * num_class trees grown on the device (usable[k * nfeat + f] != 0 when tree
 * k may split on feature f), their leaves shrunk by `rate` (the learning
 * rate, or DART's for this round), scores of every data set updated.
 * trees[k] points into the learner's memory until the next round. Under
 * DART the device keeps each tree's routing for hb_cuda_learner_add_tree. */
int hb_cuda_learner_round(hb_cuda_learner_t *L, int iter, double rate, const uint8_t *usable, hb_cuda_tree_t *trees);

/* DART: room on the device for the routing of the trees of rounds
 * 0..iter, before the round changes anything (a failure leaves the
 * booster as it was). */
int hb_cuda_learner_reserve(hb_cuda_learner_t *L, int iter);

/* DART: factor x the values[0..num_leaves) of tree number `tree` (round
 * tree / num_class, class tree % num_class, grown by this learner) added to
 * data set `data`'s scores (0 training, 1.. validation), every row routed
 * through the tree on the device: s + factor x value, multiplied and added
 * apart, as the host does. */
int hb_cuda_learner_add_tree(hb_cuda_learner_t *L, int data, int tree, int num_leaves, const double *values,
                             double factor);

/* Monotone constraints (LightGBM's basic method, as the CPU learner's):
 * mono[f] in -1, 0, 1 for each of the dataset's nfeat internal features;
 * before the first round. */
int hb_cuda_learner_set_monotone(hb_cuda_learner_t *L, const int8_t *mono);

/* Interaction constraints (the CPU learner's rule, grow.h): ngroups groups,
 * grp_feat (ngroups x nfeat) and grp_col (ngroups x ncol) from
 * hb_interaction_tables; before the first round. */
int hb_cuda_learner_set_interactions(hb_cuda_learner_t *L, int ngroups, const uint8_t *grp_feat,
                                     const uint8_t *grp_col, const int *col_first, int ncol);

/* Data-parallel training (dist.h), before the first round: this process
 * trains global rows row0 .. row0 + nrow - 1 of nglobal with the others of
 * `dist`, one GPU each. Each split's histogram, the children's row counts,
 * the gradients' range, the bag's size and the leaf sums are then summed
 * over the processes through `dist` (copied through host memory), and the
 * draws key rows by their global index: every process grows the tree one
 * GPU grows on the concatenated rows; GOSS's threshold is the order
 * statistic of every process's sizes (goss.c's rule). */
int hb_cuda_learner_set_dist(hb_cuda_learner_t *L, const struct hb_dist *dist, int64_t row0, int64_t nglobal);
/* The GPU of a process with this rank among those on its machine
 * (local_rank modulo the GPUs it sees) becomes this thread's device: one
 * process per GPU. Before anything else on the GPU. */
int hb_cuda_use_device_of(int local_rank);

/* Gradients computed on the host (a custom objective's, LambdaRank's, Cox's) for
 * the next round, which then skips the device's gradient kernel: gh holds
 * the (g, h) pairs of class k's rows at gh + 2 k n, as the CPU learner keeps
 * them. */
int hb_cuda_learner_set_gradients(hb_cuda_learner_t *L, const double *gh);

/* l1, quantile and MAPE (HB_OBJ_RENEWS, one tree a round): the round leaves the
 * scores as they were; the host takes each training row's leaf in the
 * round's tree and whether it was in the tree's sample (nrow values each),
 * refits the leaves and hands their shrunk values (num_leaves of them) back,
 * which updates the scores of the training and validation rows. */
int hb_cuda_learner_leaf_rows(hb_cuda_learner_t *L, int *leaf_of_row, uint8_t *inbag);
int hb_cuda_learner_set_leaf_values(hb_cuda_learner_t *L, const double *values);

/* After a round (or hb_cuda_learner_set_leaf_values) that stopped because
 * values went out of range (HB_ERR_INPUT), what did: bit 1 the gradients or
 * hessians (NaN, or n x the largest above objective_rules.h's limits), bit
 * 2 << d the scores of data set d (0 training, 1.. validation; sets past
 * the 29th share 2 << 29); else 0. */
int hb_cuda_learner_diverged(const hb_cuda_learner_t *L);

/* Copy the current scores of data set `data` (0 train, 1.. validation) to
 * out (nrow x K, column-major). */
int hb_cuda_learner_scores(hb_cuda_learner_t *L, int data, double *out);

/* Accumulated device time (milliseconds) of whole rounds and, within them,
 * of the partition, histogram and split-search kernels of every split; the
 * bytes the histogram kernels read (bins, row indices and fixed-point
 * gradients of the rows they summed). Counted after hb_cuda_learner_profile(L, 1).
 * Device memory, counted always: the bytes the learner took (the GPU's free
 * memory before its setup and validation sets less after), the GPU's used
 * memory at its highest when sampled (after the setup, each validation set
 * and each hb_cuda_learner_get_profile; every process's use, the CUDA
 * context's too) and the GPU's total memory. */
typedef struct {
  double round_ms, partition_ms, hist_ms, split_ms, hist_bytes;
  long long splits, rounds;
  double device_bytes, device_used_peak, device_total;
} hb_cuda_profile_t;
void hb_cuda_learner_profile(hb_cuda_learner_t *L, int on);
void hb_cuda_learner_get_profile(const hb_cuda_learner_t *L, hb_cuda_profile_t *out);

/* ---- binning (engine/dataset.c's device path: hb_dataset(device = "cuda")) ---- */

/* One feature's rows to bin: n values, as doubles (NaN missing), as
 * integers (HB_NA_INT missing; binned as doubles) or as factor codes
 * (level_bin[code - 1], codes outside 1..nlevels to the missing bin),
 * with dataset.c's rules and the host's mapper (upper: the num_bin - 1
 * bounds of a numeric one). Their bins go to bins[0..n) and their counts
 * are added to cnt[0..num_bin) (the engine's bookkeeping; a binner run
 * reads the kind, num_bin and table). */
enum { HB_CUDA_BIN_DOUBLE, HB_CUDA_BIN_INT, HB_CUDA_BIN_FACTOR };
typedef struct {
  int kind;                  /* HB_CUDA_BIN_* */
  const double *dbl;         /* HB_CUDA_BIN_DOUBLE: n values (host memory) */
  const int *i32;            /* HB_CUDA_BIN_INT, HB_CUDA_BIN_FACTOR: n values */
  int64_t n;
  int num_bin;               /* value bins + the missing bin, 1..HB_MAX_NUM_BIN */
  const double *upper;       /* numeric: num_bin - 1 increasing bounds, the last +Inf */
  const uint8_t *level_bin;  /* factor: nlevels bins */
  int nlevels;
  uint8_t *bins;             /* out: n bins (host memory) */
  long long *cnt;            /* out: num_bin counts, added to */
} hb_cuda_bin_job_t;
/* A binner for chunks of at most `rows` values (fewer when that is more than
 * a chunk: hb_cuda_binner_rows) and factor tables of at most nlevels levels:
 * two slots, each a pinned host buffer that the caller stages a chunk's
 * values in (hb_cuda_binner_in: doubles, or int32 for the other kinds) and
 * a pinned buffer its bins come back to, so that the host stages one slot
 * while the device bins the other. Out of device or pinned memory is
 * HB_ERR_NOMEM (naming the memory needed and free when too little is free
 * at the start); no GPU is HB_ERR_INPUT. */
typedef struct hb_cuda_binner hb_cuda_binner_t;
int hb_cuda_binner_create(int64_t rows, int nlevels, hb_cuda_binner_t **out);
void hb_cuda_binner_free(hb_cuda_binner_t *B);
int64_t hb_cuda_binner_rows(const hb_cuda_binner_t *B);
void *hb_cuda_binner_in(hb_cuda_binner_t *B, int s);
const uint8_t *hb_cuda_binner_out(const hb_cuda_binner_t *B, int s);
/* Bin the m values staged in slot s as job J says (its kind, num_bin and
 * table; its dbl, i32, n, bins and cnt are not read): asynchronous. */
int hb_cuda_binner_run(hb_cuda_binner_t *B, int s, const hb_cuda_bin_job_t *J, int m);
/* Wait for slot s's run: its m bins are then at hb_cuda_binner_out(B, s),
 * and its counts (num_bin) are added to cnt. */
int hb_cuda_binner_wait(hb_cuda_binner_t *B, int s, int num_bin, long long *cnt);

/* ---- prediction (engine/predict.c's device path) ---- */

/* A model's trees flattened for the device, built by the engine from
 * iterations [start, start + niter): tree j (iteration-major, num_class a
 * iteration) has its split nodes at nodes[node_first ..] (children >= 0
 * nodes of the same tree, < 0 leaf ~c), its leaf values at
 * leaf_value[leaf_first ..], and its categorical nodes' bitsets at
 * cat_bits[cat_begin ..] (cat_begin already counts from the start of
 * cat_bits). The node record is the CPU's walk reads: tree_rules.h's
 * hb_rule_goes_left on (decision, threshold, cat_bits, cat_begin,
 * cat_nwords). */
typedef struct {
  double threshold;
  int feature;
  int decision;    /* HB_DECISION_* bits */
  int child[2];    /* left, right */
  int cat_begin;   /* categorical: first word of the bitset in cat_bits */
  int cat_nwords;
} hb_cuda_pnode_t;
typedef struct {
  int node_first, leaf_first, num_leaves, pad;
} hb_cuda_ptree_t;
typedef struct {
  int ntrees;                   /* niter * num_class */
  int num_class;
  int nfeat;
  int avg;                      /* a forest: raw = start + (sum of its trees) / avg; 0: start + sum */
  int nnodes, nleaves, ncat_words;
  const hb_cuda_pnode_t *nodes;  /* nnodes */
  const hb_cuda_ptree_t *trees;  /* ntrees */
  const double *leaf_value;      /* nleaves */
  const uint32_t *cat_bits;      /* ncat_words */
  const double *init_score;      /* num_class starting scores, or NULL (zero) */
} hb_cuda_forest_t;

typedef struct hb_cuda_predictor hb_cuda_predictor_t;

/* A predictor for the forest f (copied to the device; f may go after this
 * call) over at most nrow rows: leaf indices of every tree (leaf 1) or raw
 * scores (0), with per-row starting offsets when has_offset; rows given
 * dense, or (sparse 1) as CSR rows, nnz entries in all and at most
 * max_row_nnz in one row. It holds two slots, each a block of at most
 * hb_cuda_predictor_block_rows() rows (and, sparse, _block_nnz() entries) in
 * pinned host and device buffers, so that the host fills one block while the
 * device works on the other. Out of device or pinned memory is HB_ERR_NOMEM
 * with a message naming the memory needed and free, everything freed. */
int hb_cuda_predictor_create(const hb_cuda_forest_t *f, int nrow, int leaf, int has_offset, int sparse,
                             int64_t nnz, int max_row_nnz, hb_cuda_predictor_t **out);
void hb_cuda_predictor_free(hb_cuda_predictor_t *P);
/* Rows a block holds (>= 1); entries a sparse block holds (>= max_row_nnz, >= 1; 0 for dense rows). */
int hb_cuda_predictor_block_rows(const hb_cuda_predictor_t *P);
int hb_cuda_predictor_block_nnz(const hb_cuda_predictor_t *P);
/* A slot's pinned host buffers for a block of nb rows, column-major where a
 * matrix: what goes up (dense x: nb x nfeat values, feature f of row r at
 * x[f * nb + r]; or sparse p, j, v: the rows as CSR, p[0] = 0, p[nb] the
 * block's entries, column indices increasing within a row, an absent
 * column 0.0; off: nb x num_class offsets, when has_offset) and what comes
 * back (raw: nb x num_class doubles, or leaf: nb x ntrees ints). Pointers a
 * block does not use are NULL. Valid until the predictor is freed; not to be
 * touched between hb_cuda_predictor_launch and _wait of the slot. */
typedef struct {
  double *x;
  int *p, *j;
  double *v;
  double *off;
  double *raw;
  int *leaf;
} hb_cuda_pslot_t;
int hb_cuda_predictor_buffers(hb_cuda_predictor_t *P, int s, hb_cuda_pslot_t *out);
/* Start slot s's (0 or 1) block of nb rows (1 .. block rows) and nnz
 * entries (sparse) on the device, asynchronously: the rows and offsets up,
 * every tree walked, the result back into the slot's raw or leaf buffer.
 * Each row sums its class's trees in iteration order from its starting
 * score (init_score[k] + offset), as predict.c does, so raw scores equal the
 * CPU's bit for bit. */
int hb_cuda_predictor_launch(hb_cuda_predictor_t *P, int s, int nb, int nnz);
/* Wait for slot s's block (HB_OK at once when none is in flight); a device
 * failure is its status (out of memory HB_ERR_NOMEM, else HB_ERR_INTERNAL). */
int hb_cuda_predictor_wait(hb_cuda_predictor_t *P, int s);

/* ---- contributions (engine/predict.c's device path for type contrib) ---- */

/* A model's trees as contributions read them (engine/shap_rules.h's
 * hb_shap_paths_t, end to end), built by the engine from iterations [start,
 * start + niter) and its hb_shap_prepare: tree j (iteration-major,
 * num_class a iteration) has its internal nodes at [node_first, node_first
 * + num_leaves - 1) of the node arrays, its leaves at [leaf_first,
 * leaf_first + num_leaves) of the leaf arrays (a lone leaf counts one), its
 * categorical nodes' bitsets at cat_bits[cat_begin ..] (cat_begin already
 * counting from the start of cat_bits), and its slots (distinct split
 * features) at [slot_first[j], slot_first[j + 1]). Its paths (depth first)
 * take the same places as its leaves: path i leads to leaf path_leaf[i] of
 * the tree (path_share: hb_shap_paths_t's, which only the CPU uses), and
 * is elements [path_first[i], path_first[i + 1]), element e's splits cond
 * [cond_first[e], cond_first[e + 1]) (nodes counted within their tree).
 * sum_slot lists, for class k and feature f, the slots of that feature in
 * the class's trees in iteration order, at [sum_first[k nfeat + f],
 * sum_first[k nfeat + f + 1]): the order the CPU adds the trees' shares in.
 * inv: 1 / k for k = 1 .. max_path + 1 (inv[0] unused), the CPU's values. */
typedef struct {
  int ntrees;                   /* niter * num_class */
  int num_class;
  int nfeat;
  int max_path;                 /* most elements on one leaf's path */
  int max_nodes;                /* most internal nodes in one tree */
  int nnodes, nleaves, ncat_words, nslots;
  int64_t nelems, nconds;
  int space;                    /* where a thread's path lies: 0 the fastest that fits; for the tests,
                                   1 shared memory without the sides, 2 the device work space */
  const hb_cuda_ptree_t *trees; /* ntrees */
  const int *slot_first;        /* ntrees + 1 */
  const int *split_feature, *cat_begin, *cat_nwords;  /* nnodes each */
  const double *threshold;                            /* nnodes */
  const uint8_t *decision;                            /* nnodes */
  const double *leaf_value;                           /* nleaves */
  const int64_t *path_first;                          /* nleaves + 1 */
  const int *path_leaf, *path_share;                  /* nleaves each */
  const int *elem_slot;                               /* nelems */
  const double *elem_zero;                            /* nelems */
  const int64_t *cond_first;                          /* nelems + 1 */
  const int *cond;                                    /* nconds */
  const int *sum_first;                               /* num_class * nfeat + 1 */
  const int *sum_slot;                                /* nslots */
  const uint32_t *cat_bits;                           /* ncat_words */
  const double *inv;                                  /* max_path + 2 */
} hb_cuda_shap_forest_t;

typedef struct hb_cuda_shap hb_cuda_shap_t;

/* A TreeSHAP runner for the forest f (copied to the device; f may go after
 * this call) over at most nrow rows given dense, or (sparse 1) as CSR rows,
 * nnz entries in all and at most max_row_nnz in one row. Like the
 * predictor: two slots, each a block of at most hb_cuda_shap_block_rows()
 * rows (and, sparse, _block_nnz() entries) in pinned host and device
 * buffers, with the device buffer of the block's per-tree shares (a double
 * per row and slot). Out of device or pinned memory is HB_ERR_NOMEM with a
 * message naming the memory needed and free, everything freed. */
int hb_cuda_shap_create(const hb_cuda_shap_forest_t *f, int nrow, int sparse, int64_t nnz, int max_row_nnz,
                        hb_cuda_shap_t **out);
void hb_cuda_shap_free(hb_cuda_shap_t *S);
int hb_cuda_shap_block_rows(const hb_cuda_shap_t *S);
int hb_cuda_shap_block_nnz(const hb_cuda_shap_t *S);
/* A slot's pinned host buffers for a block of nb rows: what goes up (dense
 * x: feature f of row r at x[f * nb + r]; or sparse p, j, v, as for the
 * predictor) and what comes back (phi: nb rows of num_class (nfeat + 1)
 * values, row r's at phi + r num_class (nfeat + 1), class k's block at k
 * (nfeat + 1); each feature's contribution summed over the class's trees in
 * iteration order, the bias entry (k (nfeat + 1) + nfeat) 0: the expected
 * values, the init score, offsets and a forest's averaging are the host's).
 * Pointers a block does not use are NULL. Valid until the runner is freed;
 * not to be touched between hb_cuda_shap_launch and _wait of the slot. */
typedef struct {
  double *x;
  int *p, *j;
  double *v;
  double *phi;
} hb_cuda_sslot_t;
int hb_cuda_shap_buffers(hb_cuda_shap_t *S, int s, hb_cuda_sslot_t *out);
/* Start slot s's (0 or 1) block of nb rows (1 .. block rows) and nnz
 * entries (sparse), asynchronously: the rows up, one thread a row and tree
 * summing the tree's leaf paths through shap_rules.h (hb_shap_rows'
 * arithmetic), then one a row, class and feature adding the trees' shares
 * in iteration order (hb_shap_rows' order), phi back. The contributions
 * are the CPU's bit for bit. */
int hb_cuda_shap_launch(hb_cuda_shap_t *S, int s, int nb, int nnz);
/* Wait for slot s's block (HB_OK at once when none is in flight); a device
 * failure is its status (out of memory HB_ERR_NOMEM, else HB_ERR_INTERNAL). */
int hb_cuda_shap_wait(hb_cuda_shap_t *S, int s);

/* ---- checks of single kernels, for the tests and the benchmark ---- */

/* Histogram on the device, as the learner builds it, of the rows
 * rows[0..nrows) (NULL: 0..nrows-1) of nrow rows packed as `words` (host,
 * hb_cuda_row_stride(nfeat) words per row) with features of num_bin[f] bins
 * at slots hist_offset[f]: sums out_g[k], out_h[k] (k < total_bins) over the
 * rows, g and h given per row (nrow each). With quant_bits 0: fixed-point
 * sums of round(g * 2^exp_g), round(h * 2^exp_h), the exponents returned;
 * with quant_bits in 2..8, g and h are quantized levels (whole numbers within
 * that many bits' range) summed by the packed quantized kernel. mode 0: the
 * learner's choice, 1: the shared-memory kernel, 2: the global-memory kernel
 * (not quantized). smem_limit > 0 caps the shared memory of a block (forcing
 * feature groups). reps > 0 also times the launch: *ms the median. */
int hb_cuda_hist_check(int nrow, int nfeat, const int *num_bin, const int *hist_offset, int total_bins,
                       const uint32_t *words, const int *rows, int nrows, const double *g, const double *h,
                       int quant_bits, int mode, int smem_limit, int reps, int64_t *out_g, int64_t *out_h,
                       int *exp_g, int *exp_h, double *ms);

/* Device-to-device copy bandwidth (GB/s, bytes read plus written) over a
 * buffer of `bytes` bytes, the median of `reps` timed copies. */
int hb_cuda_copy_bandwidth(double bytes, int reps, double *gbps);

#ifdef __cplusplus
}
#endif
#endif
