/* learner_cuda.c: the GPU learner's host side, behind the learner
 * interface (learner.h). The device grows a round's trees in one launch
 * sequence (src/cuda, reached only through cuda.h) and keeps the data, the
 * gradients of the built-in objectives (a custom objective's, LambdaRank's
 * and Cox's come from the host), the bag and the scores; here: the
 * validation rows packed and uploaded, each tree's feature sample, the
 * device's split records replayed into trees (with the monotone bounds the
 * device used), l1 / quantile / MAPE leaves refit on the host, DART's
 * drops and rescaling (boost.c) applied to the device's scores, and the
 * host copy of the scores refreshed when asked. Compiled in every build: without CUDA,
 * cuda_stub.c answers hb_cuda_learner_create() with "built without CUDA". */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "learner.h"
#include "cuda.h"
#include "error.h"
#include "split.h"
#include "split_rules.h"

typedef struct {
  hb_cuda_learner_t *gpu;
  uint8_t *usable;                 /* K x nfeat: features each tree of a round may split on */
  uint8_t *stale;                  /* 1 + nvalid: the host copy of the scores is behind */
  int8_t *mono;                    /* nfeat monotone constraints of the learner's features, or NULL */
  double *lo, *hi;                 /* with mono: each leaf's output bounds while a tree is rebuilt */
  int *leaf_of;                    /* l1, quantile: each row's leaf in the round's tree */
  uint8_t *in_bag;                 /* l1, quantile: whether the row was in the tree's sample */
} cuda_learner_t;

static void cuda_free(void *state) {
  cuda_learner_t *g = state;
  if (!g) return;
  hb_cuda_learner_free(g->gpu);
  hb_free(g->usable); hb_free(g->stale);
  hb_free(g->mono); hb_free(g->lo); hb_free(g->hi);
  hb_free(g->leaf_of); hb_free(g->in_bag);
  hb_free(g);
}

/* Pack rows of validation set `data` for the GPU and upload them, a block of
 * rows at a time, so the host never holds a second copy of the bins. (The
 * learner uploads the training bins itself, feature by feature.) */
static int gpu_upload(const hb_booster_t *b, cuda_learner_t *gl, const hb_dataset_t *d, int data) {
  const int block = 1 << 20, stride = hb_cuda_row_stride(d->nfeat);
  int n0 = d->nrow < block ? d->nrow : block;
  uint32_t *words = hb_malloc(sizeof(uint32_t) * (size_t)stride * (size_t)(n0 > 0 ? n0 : 1));
  if (!words) return hb_error_set(HB_ERR_NOMEM, "out of memory packing rows for the GPU");
  int st = HB_OK;
  for (int r0 = 0; r0 < d->nrow && st == HB_OK; r0 += block) {
    int n = d->nrow - r0 < block ? d->nrow - r0 : block;
    st = hb_dataset_pack_rows(d, r0, n, stride, words, b->cfg.nthreads);
    if (st == HB_OK) st = hb_cuda_learner_upload(gl->gpu, data, r0, n, words);
  }
  hb_free(words);
  return st;
}

/* Bring the host copy of data set `data`'s scores up to date with the GPU. */
static int cuda_sync_scores(hb_booster_t *b, void *state, int data) {
  cuda_learner_t *gl = state;
  if (!gl->gpu || !gl->stale[data]) return HB_OK;
  int st = hb_cuda_learner_scores(gl->gpu, data, data == 0 ? b->score : b->vscore[data - 1]);
  if (st == HB_OK) gl->stale[data] = 0;
  return st;
}

/* Under monotone constraints, the unshrunk outputs o[0], o[1] of the GPU's
 * split r of leaf l and the children's bounds (the right child is leaf
 * nr): hb_rule_bound_children on the split's sums, the doubles the device
 * computed its bounds from, so the bounds are the device's. */
static void gpu_bound_children(const hb_booster_t *b, cuda_learner_t *gl, const hb_cuda_split_t *r, int l, int nr,
                               double l2, double o[2]) {
  const hb_config_t *cfg = &b->cfg;
  double bd[4];
  hb_rule_bound_children(gl->lo[l], gl->hi[l], r->left_g, r->left_h, r->right_g, r->right_h, cfg->lambda_l1,
                         l2, r->is_cat ? 0 : gl->mono[r->feature], bd, o);
  gl->lo[l] = bd[0]; gl->hi[l] = bd[1];
  gl->lo[nr] = bd[2]; gl->hi[nr] = bd[3];
}

/* Turn the GPU's split records into tree t, shrunk by lr (the learning
 * rate, or DART's): the splits replayed in order through
 * hb_tree_split_leaf (as the CPU grower records them), then the leaf
 * values refit on the device. */
static int gpu_build_tree(const hb_booster_t *b, cuda_learner_t *gl, const hb_cuda_tree_t *g, double lr,
                          hb_tree_t *t) {
  const hb_config_t *cfg = &b->cfg;
  t->num_leaves = 1;
  t->cat_nbits_words = 0;
  t->leaf_parent[0] = -1;
  t->leaf_depth[0] = 0;
  const int ext = cfg->max_delta_step > 0 || cfg->path_smooth > 0;
  if (g->num_leaves > 1) {  /* the root before its split, as the CPU grower has it */
    const hb_cuda_split_t *r = &g->splits[0];
    t->leaf_value[0] = lr * (ext ? hb_rule_leaf_output_ext(r->parent_g, r->parent_h, r->left_count + r->right_count,
                                                           cfg->lambda_l1, cfg->lambda_l2, cfg->max_delta_step, 0.0,
                                                           0.0)
                                 : hb_split_leaf_output(cfg, r->parent_g, r->parent_h));
    t->leaf_hess[0] = r->parent_h;
    t->leaf_count[0] = r->left_count + r->right_count;
  }
  for (int i = 0; i < g->num_leaves - 1; i++) {
    const hb_cuda_split_t *r = &g->splits[i];
    if (r->feature < 0 || r->feature >= b->train->nfeat || r->leaf < 0 || r->leaf >= t->num_leaves)
      return hb_error_set(HB_ERR_INTERNAL, "histboost bug: the GPU returned split %d on feature %d of leaf %d", i,
                          r->feature, r->leaf);
    hb_tree_split_t ts;
    ts.feature = b->train->feat_col[r->feature];  /* trees name input columns */
    ts.is_cat = r->is_cat;
    ts.threshold_bin = r->threshold;
    ts.default_left = r->default_left;
    ts.left_bins = r->left_bins;
    ts.gain = r->gain;
    const double l2 = hb_rule_child_l2(r->is_cat, b->train->mappers[r->feature].num_bin, cfg->max_cat_to_onehot,
                                       cfg->lambda_l2, cfg->cat_l2);
    if (ext) {  /* capped, smoothed and bounded on the device, as the CPU's record_split */
      ts.value[0] = lr * r->left_out;
      ts.value[1] = lr * r->right_out;
    } else if (gl->mono) {  /* internal nodes keep their clamped outputs, as the CPU's */
      double o[2];
      if (i == 0) { gl->lo[0] = -HUGE_VAL; gl->hi[0] = HUGE_VAL; }
      gpu_bound_children(b, gl, r, r->leaf, t->num_leaves, l2, o);
      ts.value[0] = lr * o[0];
      ts.value[1] = lr * o[1];
    } else {
      ts.value[0] = lr * hb_rule_leaf_output(r->left_g, r->left_h, cfg->lambda_l1, l2);
      ts.value[1] = lr * hb_rule_leaf_output(r->right_g, r->right_h, cfg->lambda_l1, l2);
    }
    ts.hess[0] = r->left_h;
    ts.hess[1] = r->right_h;
    ts.count[0] = r->left_count;
    ts.count[1] = r->right_count;
    int st = hb_tree_split_leaf(t, r->leaf, &b->train->mappers[r->feature], &ts);
    if (st != HB_OK) return st;
  }
  for (int l = 0; l < g->num_leaves; l++) {
    t->leaf_value[l] = g->leaves[l].value;
    t->leaf_hess[l] = g->leaves[l].h;
    t->leaf_count[l] = g->leaves[l].count;
  }
  return HB_OK;
}

/* l1, quantile and MAPE on the GPU: the round's tree t (one a round) refit to the
 * quantiles of its leaves' in-bag residuals at `score` (the scores the
 * gradients were taken at), shrunk by `rate`, by hb_booster_renew_leaves, the rows grouped by
 * the leaf the device routed them to; the device then adds the refit values.
 * st: the tree's status so far. Data-parallel, the refit sums over the
 * processes, so a failure before it (this process's, or st) is agreed on
 * first. */
static int gpu_renew_leaves(const hb_booster_t *b, cuda_learner_t *gl, int st, hb_tree_t *t, const double *score,
                            double rate) {
  const int n = b->n, L = st == HB_OK ? t->num_leaves : 1;
  if (st == HB_OK) st = hb_cuda_learner_leaf_rows(gl->gpu, gl->leaf_of, gl->in_bag);
  int *begin = hb_calloc((size_t)L + 1, sizeof(int)), *count = hb_calloc((size_t)L, sizeof(int));
  int *idx = hb_malloc(sizeof(int) * (size_t)n);
  if (st == HB_OK && (!begin || !count || !idx))
    st = hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
  if ((st = hb_dist_agree(b->dist, st, "to refit the leaves")) != HB_OK) {
    hb_free(begin); hb_free(count); hb_free(idx);
    return st;
  }
  for (int i = 0; i < n; i++)
    if (gl->in_bag[i]) count[gl->leaf_of[i]]++;
  for (int l = 0; l < L; l++) begin[l + 1] = begin[l] + count[l];
  memcpy(count, begin, sizeof(int) * (size_t)L);  /* fill positions, then counts again */
  for (int i = 0; i < n; i++)
    if (gl->in_bag[i]) idx[count[gl->leaf_of[i]]++] = i;  /* in row order within a leaf, as the CPU's partition */
  for (int l = 0; l < L; l++) count[l] = begin[l + 1] - begin[l];
  const hb_leaf_rows_t lr = {NULL, idx, begin, count};
  st = hb_booster_renew_leaves(b, &lr, t, score, rate);
  if (st == HB_OK) hb_booster_lone_root(&b->cfg, t);  /* as the device's leaf values do */
  if (st == HB_OK) st = hb_cuda_learner_set_leaf_values(gl->gpu, t->leaf_value);
  hb_free(begin); hb_free(count); hb_free(idx);
  return st;
}

/* One round on the GPU: the feature samples of the K trees, the round on
 * the device, the trees built from its records. The device grows a round's
 * trees in one launch sequence: the booster asked about interrupts once,
 * before anything changed. */
/* A GPU round that stopped because values went out of range (the device
 * checks its gradients and every score it updates, as the CPU's round
 * does): the same classed error naming the cause as on the CPU. */
static int gpu_overflow(const hb_booster_t *b, const cuda_learner_t *gl, int st) {
  const int why = hb_cuda_learner_diverged(gl->gpu);
  if (!why) return st;
  if (why & 1) return hb_booster_overflow(b, "gradients", 0, b->iter + 1, 1);
  int data = 0;
  while (data < 29 && !(why & (2 << data))) data++;
  if (data > b->nvalid) data = b->nvalid;
  return hb_booster_overflow(b, "scores", data, b->iter + 1, 1);
}

static int round_body(hb_booster_t *b, cuda_learner_t *gl, double rate, hb_tree_t **tr, int *single) {
  int K = b->K, nf = b->train->nfeat, st = HB_OK;
  if (HB_TAKES_HOST_GRADIENTS(&b->cfg) &&
      ((st = hb_booster_host_gradients(b)) != HB_OK || (st = hb_cuda_learner_set_gradients(gl->gpu, b->gh)) != HB_OK))
    return st;
  /* l1, quantile and MAPE refit from the residuals at this round's scores */
  const int renew = HB_OBJ_RENEWS(b->cfg.objective);
  if (renew && !b->cfg.rf && (st = hb_booster_sync_scores(b, 0)) != HB_OK) return st;
  for (int k = 0; k < K; k++) {
    if ((st = hb_booster_sample_features(b, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k)) != HB_OK) return st;
    memcpy(gl->usable + (size_t)k * nf, b->active, (size_t)nf);
  }
  hb_cuda_tree_t gtrees[256];
  hb_cuda_tree_t *gt = K <= 256 ? gtrees : hb_malloc(sizeof(hb_cuda_tree_t) * (size_t)K);
  if (!gt) return HB_ERR_NOMEM;
  st = gpu_overflow(b, gl, hb_cuda_learner_round(gl->gpu, b->iter, rate, gl->usable, gt));
  for (int k = 0; k < K && st == HB_OK; k++) {
    st = (tr[k] = hb_tree_create(b->cfg.num_leaves)) ? gpu_build_tree(b, gl, &gt[k], rate, tr[k]) : HB_ERR_NOMEM;
    if (renew) st = gpu_overflow(b, gl, gpu_renew_leaves(b, gl, st, tr[k], b->cfg.rf ? b->base : b->score, rate));
    if (st == HB_OK && !hb_booster_tree_finite(tr[k]))
      st = hb_booster_overflow(b, "leaf values", 0, b->iter + 1, 1);
    if (st == HB_OK && tr[k]->num_leaves == 1) (*single)++;
  }
  if (gt != gtrees) hb_free(gt);
  if (st == HB_OK) memset(gl->stale, 1, (size_t)b->nvalid + 1);
  return st;
}

/* A round, within DART's drops and normalization (boost.c; the scores
 * change on the device, through cuda_add_tree) when asked for. As on the
 * CPU (learner_cpu.c): a failure after the drops changed the scores leaves
 * the booster broken. */
static int cuda_round(hb_booster_t *b, void *state, hb_tree_t **tr, int *single) {
  cuda_learner_t *gl = state;
  double rate = b->cfg.learning_rate;
  int touched = 0, st = HB_OK;
  /* DART: the device's room for this round's trees first, so that running
   * out of it leaves the scores as they were */
  if (b->cfg.dart && (st = hb_cuda_learner_reserve(gl->gpu, b->iter)) != HB_OK) return st;
  if (b->cfg.dart) st = hb_booster_dart_begin(b, &rate, &touched);
  if (st == HB_OK) st = round_body(b, gl, rate, tr, single);
  if (st == HB_OK && b->cfg.dart) st = hb_booster_dart_end(b, rate);
  if (st != HB_OK && b->cfg.dart && (touched || b->dart.ndrop > 0)) b->broken = 1;
  return st;
}

/* DART: a tree of this learner's in or out of a data set's scores, on the device. */
static int cuda_add_tree(hb_booster_t *b, void *state, int data, int tree, const hb_tree_t *t, double factor) {
  cuda_learner_t *gl = state;
  (void)b;
  const int st = hb_cuda_learner_add_tree(gl->gpu, data, tree, t->num_leaves, t->leaf_value, factor);
  if (st == HB_OK) gl->stale[data] = 1;
  return st;
}

/* The device learner on the training set, its scores starting at b->score;
 * under monotone constraints, the bounds it replays splits with. */
static int cuda_create(hb_booster_t *b, const int *monotone, void **state) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *train = b->train;
  int st = HB_OK;
  *state = NULL;
  cuda_learner_t *gl = hb_calloc(1, sizeof *gl);
  if (!gl) goto nomem;
  /* The GPU learner keeps gradients, the partition and the bag itself;
   * the booster computes those of a custom objective, LambdaRank and Cox. */
  gl->usable = hb_malloc((size_t)b->K * (size_t)train->nfeat);
  gl->stale = hb_calloc(1, 1);
  if (!gl->usable || !gl->stale) goto nomem;
  /* l1, quantile and MAPE: each row's leaf (in bag) and sample flag of a round's tree */
  if (HB_OBJ_RENEWS(cfg->objective) &&
      (!(gl->leaf_of = hb_malloc(sizeof(int) * (size_t)b->n)) || !(gl->in_bag = hb_malloc((size_t)b->n))))
    goto nomem;
  /* data-parallel (dist.h): one GPU a process, chosen by its rank on its
   * machine; the learner then sums what it decides by over the processes.
   * A local failure is agreed on before set_dist's collective operations. */
  if (b->dist) st = hb_cuda_use_device_of(b->dist->local_rank);
  if (st == HB_OK) st = hb_cuda_learner_create(cfg, train, b->score, &gl->gpu);
  st = hb_dist_agree(b->dist, st, "to create the GPU learner");
  if (st == HB_OK && b->dist) st = hb_cuda_learner_set_dist(gl->gpu, b->dist, train->row0, train->nrow_global);
  if (st == HB_OK && monotone) st = hb_monotone_features(train, monotone, &gl->mono);
  if (st != HB_OK) {
    cuda_free(gl);
    return st;
  }
  if (gl->mono) {
    gl->lo = hb_malloc(sizeof(double) * (size_t)cfg->num_leaves);
    gl->hi = hb_malloc(sizeof(double) * (size_t)cfg->num_leaves);
    if (!gl->lo || !gl->hi) goto nomem;
    if ((st = hb_cuda_learner_set_monotone(gl->gpu, gl->mono)) != HB_OK) {
      cuda_free(gl);
      return st;
    }
  }
  *state = gl;
  return HB_OK;
nomem:
  cuda_free(gl);
  return hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster (%d rows)", train->nrow);
}

/* Interaction constraints: the CPU learner's tables (grow.h) go to the device. */
static int cuda_set_interactions(hb_booster_t *b, void *state, int ngroups, const int *begin, const int *cols) {
  cuda_learner_t *gl = state;
  const hb_dataset_t *d = b->train;
  if (ngroups <= 0) return hb_cuda_learner_set_interactions(gl->gpu, 0, NULL, NULL, d->col_first, d->ncol);
  uint8_t *gf = NULL, *gc = NULL;
  int st = hb_interaction_tables(d, ngroups, begin, cols, &gf, &gc);
  if (st == HB_OK) st = hb_cuda_learner_set_interactions(gl->gpu, ngroups, gf, gc, d->col_first, d->ncol);
  hb_free(gf);
  hb_free(gc);
  return st;
}

/* A validation set: its starting scores and its bins go to the device. */
static int cuda_add_valid(hb_booster_t *b, void *state, int v) {
  cuda_learner_t *gl = state;
  uint8_t *ns = hb_realloc(gl->stale, (size_t)b->nvalid + 1);
  if (!ns) return HB_ERR_NOMEM;
  gl->stale = ns;
  gl->stale[v] = 0;
  const hb_dataset_t *valid = b->valid[v - 1];
  int data = 0, st = hb_cuda_learner_add_valid(gl->gpu, valid->nrow, b->vscore[v - 1], &data);
  if (st == HB_OK) st = gpu_upload(b, gl, valid, data);
  return st;
}

static void cuda_profile(void *state, int on) {
  cuda_learner_t *gl = state;
  hb_cuda_learner_profile(gl->gpu, on);
}

static int cuda_get_profile(const void *state, double out[HB_PROFILE_N]) {
  const cuda_learner_t *gl = state;
  hb_cuda_profile_t p;
  hb_cuda_learner_get_profile(gl->gpu, &p);
  for (int k = 0; k < HB_PROFILE_N; k++) out[k] = 0.0;
  out[0] = p.round_ms;
  out[1] = p.partition_ms;
  out[2] = p.hist_ms;
  out[3] = p.split_ms;
  out[4] = p.hist_bytes;
  out[5] = (double)p.splits;
  out[6] = (double)p.rounds;
  out[7] = p.device_bytes;
  out[8] = p.device_used_peak;
  out[9] = p.device_total;
  return 1;
}

const hb_learner_ops_t hb_learner_cuda = {
  "cuda",
  1,                  /* on_gpu */
  1,                  /* own_gradients */
  NULL,               /* data-parallel: one GPU a process (hb_cuda_learner_set_dist) */
  NULL,               /* check: every objective trains on the GPU */
  cuda_create,
  cuda_free,
  cuda_add_valid,
  cuda_round,
  cuda_sync_scores,
  cuda_add_tree,
  cuda_set_interactions,
  cuda_profile,
  cuda_get_profile,
};
