/* boost.c: the boosting loop state: scores, gradients, bagging, feature
 * sampling, one round per call, evaluation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boost.h"
#include "grow.h"
#include "metric.h"
#include "objective.h"
#include "objective_rules.h"
#include "goss.h"
#include "rank.h"
#include "error.h"
#include "interrupt.h"
#include "rng.h"
#include "threads.h"
#include "split.h"
#include "split_rules.h"
#include "cuda.h"
#include "dist.h"

struct hb_booster {
  hb_config_t cfg;
  const hb_dataset_t *train;
  hb_model_t *model;
  int n, K;
  double *score;                   /* n x K, column-major */
  double *gh;                      /* n x K (gradient, hessian) pairs, class-major */
  int nvalid, cap_valid;
  const hb_dataset_t **valid;
  double **vscore;                 /* per validation set: nrow x K */
  hb_grow_ws_t *ws;
  int *bag;                        /* in-bag rows (increasing), with bagging or goss; else NULL */
  int bag_n;
  uint8_t *in_bag;                 /* n flags, with bagging or goss */
  double *goss_scratch;            /* 2n doubles, with goss */
  double *base;                    /* n x K starting scores, for a random forest's gradients */
  uint8_t *active;                 /* nfeat flags for the current tree */
  int iter;
  /* device = cuda: the GPU learner holds the data and the scores; score and
   * vscore are copies refreshed when a data set's stale flag says so. */
  hb_cuda_learner_t *gpu;
  uint8_t *usable;                 /* K x nfeat: features each tree of a GPU round may split on */
  uint8_t *stale;                  /* 1 + nvalid: the host copy of the scores is behind */
  int8_t *mono;                    /* nfeat monotone constraints of a GPU learner's features, or NULL */
  double *lo, *hi;                 /* with mono: each leaf's output bounds while a GPU tree is rebuilt */
  int *leaf_of;                    /* l1, quantile on the GPU: each row's leaf in the round's tree (in_bag: sampled) */
  int32_t *q;                      /* quantized training on the CPU: a tree's packed row values */
  int custom_set;                  /* a custom objective: gh holds this round's gradients */
  hb_rank_query_t **query;         /* 1 + cap_valid: each data set's queries (ranking), or NULL */
  int broken;                      /* interrupted after a round had changed scores: no further use */
  /* DART (LightGBM's dart.hpp): each iteration's weight (its trees' shrinkage
   * so far, for drops by weight) and their sum; the iterations this round
   * dropped (0-based, increasing) */
  double *dart_w;
  double dart_sum;
  int *dart_drop;
  int dart_ndrop, dart_cap;
  int *cox_order;                  /* cox: the training rows in order of time (hb_objective_cox_order) */
  const hb_dist_t *dist;           /* data-parallel training (dist.h), or NULL: one process */
};

/* HB_ERR_STATE for a booster whose round an interrupt left half done (its
 * scores then hold some of the round's trees, its model none of them). */
static int check_usable(const hb_booster_t *b) {
  return b->broken ? hb_error_set(HB_ERR_STATE, "this booster was interrupted in the middle of a round and cannot "
                                  "be used further; start the training again")
                   : HB_OK;
}

void hb_booster_free(hb_booster_t *b) {
  if (!b) return;
  hb_model_free(b->model);
  hb_free(b->score); hb_free(b->gh);
  for (int v = 0; v < b->nvalid; v++) hb_free(b->vscore[v]);
  hb_free(b->vscore);
  hb_free(b->valid);
  hb_grow_ws_free(b->ws);
  hb_free(b->bag);
  hb_free(b->in_bag);
  hb_free(b->goss_scratch);
  hb_free(b->base);
  hb_free(b->mono); hb_free(b->lo); hb_free(b->hi); hb_free(b->leaf_of);
  hb_free(b->active);
  hb_cuda_learner_free(b->gpu);
  hb_free(b->q);
  hb_free(b->usable);
  hb_free(b->stale);
  if (b->query)
    for (int v = 0; v <= b->cap_valid; v++) hb_rank_query_free(b->query[v]);
  hb_free(b->query);
  hb_free(b->dart_w);
  hb_free(b->dart_drop);
  hb_free(b->cox_order);
  hb_free(b);
}

/* Pack rows of validation set `data` for the GPU and upload them, a block of
 * rows at a time, so the host never holds a second copy of the bins. (The
 * learner uploads the training bins itself, feature by feature.) */
static int gpu_upload(hb_booster_t *b, const hb_dataset_t *d, int data) {
  const int block = 1 << 20, stride = hb_cuda_row_stride(d->nfeat);
  int n0 = d->nrow < block ? d->nrow : block;
  uint32_t *words = hb_malloc(sizeof(uint32_t) * (size_t)stride * (size_t)(n0 > 0 ? n0 : 1));
  if (!words) return hb_error_set(HB_ERR_NOMEM, "out of memory packing rows for the GPU");
  int st = HB_OK;
  for (int r0 = 0; r0 < d->nrow && st == HB_OK; r0 += block) {
    int n = d->nrow - r0 < block ? d->nrow - r0 : block;
    st = hb_dataset_pack_rows(d, r0, n, stride, words, b->cfg.nthreads);
    if (st == HB_OK) st = hb_cuda_learner_upload(b->gpu, data, r0, n, words);
  }
  hb_free(words);
  return st;
}

/* Bring the host copy of data set `data`'s scores up to date with the GPU. */
static int gpu_sync_scores(hb_booster_t *b, int data) {
  if (!b->gpu || !b->stale[data]) return HB_OK;
  int st = hb_cuda_learner_scores(b->gpu, data, data == 0 ? b->score : b->vscore[data - 1]);
  if (st == HB_OK) b->stale[data] = 0;
  return st;
}

/* Objectives whose gradients the host computes, on either device: a custom
 * objective's come from R (hb_booster_set_gradients), LambdaRank's from
 * rank.c; the GPU learner then takes them from b->gh. */
#define HOST_GRADIENTS(cfg) ((cfg)->objective == HB_OBJ_LAMBDARANK || (cfg)->objective == HB_OBJ_CUSTOM)

/* This round's gradients into b->gh for HOST_GRADIENTS objectives, at the
 * training scores (a forest's: the starting scores), brought back from the
 * GPU first where they live there. */
static int host_gradients(hb_booster_t *b) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *d = b->train;
  if (cfg->objective == HB_OBJ_CUSTOM) {
    if (!b->custom_set) return hb_error_set(HB_ERR_INPUT, "a custom objective needs this round's gradients first");
    b->custom_set = 0;
    return HB_OK;
  }
  if (!b->query[0])
    return hb_error_set(HB_ERR_STATE, "the lambdarank objective needs the training rows' queries before the first round");
  int st = cfg->rf ? HB_OK : gpu_sync_scores(b, 0);
  if (st != HB_OK) return st;
  return hb_rank_gradients(cfg, b->query[0], d->label, d->weight, cfg->rf ? b->base : b->score, b->gh, cfg->nthreads);
}

/* The K columns of per-row starting scores a dataset brings, if any, must
 * match the model's classes. */
static int check_init_score(const hb_config_t *cfg, const hb_dataset_t *d) {
  int K = HB_OBJ_NSCORE(cfg);
  if (d && d->init_score && d->init_score_ncol != K)
    return hb_error_set(HB_ERR_INPUT, "init_score has %d column%s; the model has %d class%s (one column each)",
                        d->init_score_ncol, d->init_score_ncol == 1 ? "" : "s", K, K == 1 ? "" : "es");
  return HB_OK;
}

/* Each row's starting raw score of class k: the model's starting score plus
 * the dataset's own (an offset), class-major as the booster's scores. */
static void start_scores(const hb_dataset_t *d, const double *init, int K, double *s) {
  size_t n = (size_t)d->nrow;
  for (int k = 0; k < K; k++)
    for (size_t i = 0; i < n; i++)
      s[(size_t)k * n + i] = init[k] + (d->init_score ? d->init_score[(size_t)k * n + i] : 0.0);
}

int hb_booster_create(const hb_config_t *cfg, const hb_dataset_t *train,
                      const hb_schema_t *schema, hb_booster_t **out) {
  *out = NULL;
  int st = hb_config_check(cfg);
  if (st != HB_OK) return st;
  if (!train || train->nrow < 1) return hb_error_set(HB_ERR_INPUT, "the training data has no rows");
  if (!schema || schema->nfeat != train->ncol)
    return hb_error_set(HB_ERR_INPUT, "the feature schema does not match the training data (%d vs %d columns)",
                        schema ? schema->nfeat : -1, train->ncol);
  st = hb_objective_check_labels(cfg, train->nrow, train->label);
  if (st == HB_OK) st = check_init_score(cfg, train);
  if (train->dist && train->dist->size > 1 && hb_dist_any(train->dist, st != HB_OK) && st == HB_OK)
    st = hb_error_set(HB_ERR_INPUT, "another process's labels or init_score do not suit the objective (its error says why)");
  if (st != HB_OK) return st;
  if (cfg->objective == HB_OBJ_CUSTOM && cfg->rf)
    return hb_error_set(HB_ERR_INPUT, "a custom objective boosts (no random forest)");
  /* the GPU learner computes the gradients of the objectives it was written
   * for; these, and a custom objective's class scores, it does not take */
  if (cfg->device == HB_DEVICE_CUDA &&
      (cfg->objective >= HB_OBJ_MULTICLASSOVA || (cfg->objective == HB_OBJ_CUSTOM && cfg->num_class > 1)))
    return hb_error_set(HB_ERR_INPUT, "this objective trains on the CPU only (device = \"cpu\")");
  int any_mono = 0;
  for (int c = 0; schema->monotone && c < schema->nfeat; c++) any_mono |= schema->monotone[c] != 0;
  if (any_mono && HB_OBJ_RENEWS(cfg->objective))
    return hb_error_set(HB_ERR_INPUT, "monotone constraints do not combine with the %s objective: its leaves are "
                        "refit to quantiles of their residuals, which would undo them",
                        cfg->objective == HB_OBJ_L1 ? "l1" : "quantile");
  const hb_dist_t *dist = train->dist && train->dist->size > 1 ? train->dist : NULL;
  if (dist) {  /* what the data-parallel learner does not do yet: refused on every process alike */
    const char *no = cfg->device == HB_DEVICE_CUDA ? "device = \"cuda\" (one GPU per process is not built yet)"
                     : HB_OBJ_RENEWS(cfg->objective) ? "the l1 and quantile objectives (leaf quantiles)"
                     : cfg->objective == HB_OBJ_CUSTOM ? "a custom objective"
                     : cfg->enable_bundle && cfg->max_conflict_rate > 0 ? "max_conflict_rate > 0"
                     : NULL;
    if (no) return hb_error_set(HB_ERR_INPUT, "distributed training does not support %s yet", no);
  }
  hb_booster_t *b = hb_calloc(1, sizeof *b);
  if (!b) return HB_ERR_NOMEM;
  b->dist = dist;
  b->cfg = *cfg;
  if (cfg->rf) b->cfg.learning_rate = 1.0;  /* a forest's trees are averaged, not shrunk */
  cfg = &b->cfg;
  b->train = train;
  b->n = train->nrow;
  b->K = HB_OBJ_NSCORE(cfg);
  size_t nk = (size_t)b->n * (size_t)b->K;
  int gpu = cfg->device == HB_DEVICE_CUDA;
  b->model = hb_model_create();
  b->score = hb_malloc(sizeof(double) * nk);
  b->active = hb_malloc((size_t)train->nfeat);
  b->query = hb_calloc(1, sizeof(hb_rank_query_t *));
  if (!b->model || !b->score || !b->active || !b->query) goto nomem;
  if (gpu) {
    /* The GPU learner keeps gradients, the partition and the bag itself;
     * the host computes those of a custom objective and of LambdaRank. */
    b->usable = hb_malloc((size_t)b->K * (size_t)train->nfeat);
    b->stale = hb_calloc(1, 1);
    if (!b->usable || !b->stale) goto nomem;
    if (HOST_GRADIENTS(cfg) && !(b->gh = hb_malloc(2 * sizeof(double) * nk))) goto nomem;
    /* l1 and quantile: each row's leaf (in bag) and sample flag of a round's tree */
    if (HB_OBJ_RENEWS(cfg->objective) &&
        (!(b->leaf_of = hb_malloc(sizeof(int) * (size_t)b->n)) || !(b->in_bag = hb_malloc((size_t)b->n))))
      goto nomem;
  } else {
    b->gh = hb_malloc(2 * sizeof(double) * nk);
    if (!b->gh) goto nomem;
    if (cfg->quantized && !(b->q = hb_malloc(sizeof(int32_t) * (size_t)b->n))) goto nomem;
    if (!(b->ws = hb_grow_ws_create(cfg, train))) goto nomem;
    if (any_mono && (st = hb_grow_ws_set_monotone(b->ws, train, schema->monotone)) != HB_OK) {
      hb_booster_free(b);
      return st;
    }
  }
  if (!gpu && ((cfg->bagging_freq > 0 && cfg->bagging_fraction < 1.0) || cfg->goss)) {
    b->bag = hb_malloc(sizeof(int) * (size_t)b->n);
    b->in_bag = hb_malloc((size_t)b->n);
    if (!b->bag || !b->in_bag) goto nomem;
    if (cfg->goss && !(b->goss_scratch = hb_malloc(sizeof(double) * 2 * (size_t)b->n))) goto nomem;
  }
  hb_model_t *m = b->model;
  m->config = *cfg;
  m->num_class = b->K;
  m->trees_per_iter = b->K;
  if ((st = hb_schema_copy(schema, &m->schema)) != HB_OK) { hb_booster_free(b); return st; }
  m->init_score = hb_calloc((size_t)b->K, sizeof(double));
  if (!m->init_score) goto nomem;
  /* With per-row starting scores (an offset) the model's own starting score
   * is 0, as in LightGBM: the offset takes the place of the average. */
  if (!train->init_score && dist) {
    /* the starting score of the concatenated rows: every shard's labels
     * and weights, in rank order, through the one-process rule */
    double *lab = NULL, *w = NULL;
    int64_t nl = 0, nw = 0;
    st = hb_dist_gather_f64(dist, train->label, b->n, &lab, &nl);
    if (st == HB_OK && train->weight) st = hb_dist_gather_f64(dist, train->weight, b->n, &w, &nw);
    if (st == HB_OK && train->weight && nw != nl)
      st = hb_error_set(HB_ERR_INPUT, "some processes give weights and others do not; give them on all or none");
    if (st == HB_OK && hb_objective_init_score(cfg, (int)nl, lab, w, m->init_score) != HB_OK) st = HB_ERR_NOMEM;
    hb_free(lab);
    hb_free(w);
    if (st != HB_OK) { hb_booster_free(b); return st; }
  } else if (!train->init_score &&
      hb_objective_init_score(cfg, b->n, train->label, train->weight, m->init_score) != HB_OK)
    goto nomem;
  start_scores(train, m->init_score, b->K, b->score);
  if (cfg->objective == HB_OBJ_COX && hb_objective_cox_order(b->n, train->label, &b->cox_order) != HB_OK)
    goto nomem;
  if (cfg->rf) {
    if (!(b->base = hb_malloc(sizeof(double) * nk))) goto nomem;
    memcpy(b->base, b->score, sizeof(double) * nk);
  }
  if (gpu) {
    if ((st = hb_cuda_learner_create(cfg, train, b->score, &b->gpu)) != HB_OK ||
        (any_mono && (st = hb_monotone_features(train, schema->monotone, &b->mono)) != HB_OK)) {
      hb_booster_free(b);
      return st;
    }
    if (b->mono) {
      b->lo = hb_malloc(sizeof(double) * (size_t)cfg->num_leaves);
      b->hi = hb_malloc(sizeof(double) * (size_t)cfg->num_leaves);
      if (!b->lo || !b->hi) goto nomem;
      if ((st = hb_cuda_learner_set_monotone(b->gpu, b->mono)) != HB_OK) {
        hb_booster_free(b);
        return st;
      }
    }
  }
  *out = b;
  return HB_OK;
nomem:
  hb_booster_free(b);
  return hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster (%d rows)", train->nrow);
}

int hb_booster_add_valid(hb_booster_t *b, const hb_dataset_t *valid) {
  if (valid && valid->label) {  /* a loss of labels out of its range would steer early stopping by nonsense */
    int st = hb_objective_check_labels(&b->cfg, valid->nrow, valid->label);
    if (b->dist && valid->dist && hb_dist_any(b->dist, st != HB_OK) && st == HB_OK)  /* fail on every process alike */
      st = hb_error_set(HB_ERR_INPUT, "another process's validation labels do not suit the objective (its error says why)");
    if (st != HB_OK) return st;
  }
  if (!valid || valid->nfeat != b->train->nfeat)
    return hb_error_set(HB_ERR_INPUT, "a validation set must have the training set's %d features",
                        b->train->nfeat);
  int st0 = check_init_score(&b->cfg, valid);
  if (st0 != HB_OK) return st0;
  if (b->cfg.rf && b->model->num_trees > 0)  /* its scores would need the mean of the trees, not their sum */
    return hb_error_set(HB_ERR_STATE, "a random forest takes its validation sets before its first round");
  if (b->nvalid == b->cap_valid) {
    int cap = b->cap_valid ? 2 * b->cap_valid : 4;
    const hb_dataset_t **nv = hb_realloc(b->valid, sizeof(*nv) * (size_t)cap);
    if (!nv) return HB_ERR_NOMEM;
    b->valid = nv;
    double **ns = hb_realloc(b->vscore, sizeof(*ns) * (size_t)cap);
    if (!ns) return HB_ERR_NOMEM;
    b->vscore = ns;
    hb_rank_query_t **nq = hb_realloc(b->query, sizeof(*nq) * ((size_t)cap + 1));
    if (!nq) return HB_ERR_NOMEM;
    for (int v = b->cap_valid + 1; v <= cap; v++) nq[v] = NULL;
    b->query = nq;
    b->cap_valid = cap;
  }
  size_t nk = (size_t)valid->nrow * (size_t)b->K;
  double *s = hb_malloc(sizeof(double) * nk);
  if (!s) return HB_ERR_NOMEM;
  /* Bring the new set up to date with the trees grown so far. */
  const hb_model_t *m = b->model;
  start_scores(valid, m->init_score, b->K, s);
  for (int t = 0; t < m->num_trees; t++) {
    const hb_tree_t *tr = m->trees[t];
    double *sk = s + (size_t)(t % b->K) * valid->nrow;
    for (int i = 0; i < valid->nrow; i++) sk[i] += tr->leaf_value[hb_tree_leaf_binned(tr, valid, i)];
  }
  b->valid[b->nvalid] = valid;
  b->vscore[b->nvalid] = s;
  b->nvalid++;
  if (b->gpu) {
    uint8_t *ns = hb_realloc(b->stale, (size_t)b->nvalid + 1);
    if (!ns) return HB_ERR_NOMEM;
    b->stale = ns;
    b->stale[b->nvalid] = 0;
    int data = 0, st = hb_cuda_learner_add_valid(b->gpu, valid->nrow, s, &data);
    if (st == HB_OK) st = gpu_upload(b, valid, data);
    if (st != HB_OK) {  /* keep the booster consistent: the set is not added */
      b->nvalid--;
      hb_free(s);
      return st;
    }
  }
  return HB_OK;
}

/* In-bag rows for this round: a row is in when its draw for (seed, bagging
 * round, row) is below the fraction, so the bag is thread-independent. */
static void resample_bag(hb_booster_t *b) {
  uint64_t round = (uint64_t)(b->iter / b->cfg.bagging_freq);
  int n = b->n, m = 0;
  const uint64_t row0 = (uint64_t)b->train->row0;  /* draws by global row (dist.h) */
  for (int i = 0; i < n; i++) {
    int in = hb_rng_unif(b->cfg.seed, HB_RNG_BAGGING, round, row0 + (uint64_t)i) < b->cfg.bagging_fraction;
    b->in_bag[i] = (uint8_t)in;
    if (in) b->bag[m++] = i;
  }
  if (!hb_dist_any(b->dist, m > 0)) {   /* an empty bag cannot grow a tree: keep every row this round */
    for (int i = 0; i < n; i++) { b->in_bag[i] = 1; b->bag[i] = i; }
    m = n;
  }
  b->bag_n = m;
}

typedef struct { double u; int f; } feat_draw;

static int feat_draw_cmp(const void *a, const void *b) {
  const feat_draw *x = a, *y = b;
  if (x->u != y->u) return x->u < y->u ? -1 : 1;
  return (x->f > y->f) - (x->f < y->f);
}

/* Column c has a feature in active (one not trivial). */
static int column_active(const hb_dataset_t *d, const uint8_t *active, int c) {
  int any = 0;
  for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) any |= active[f];
  return any;
}

/* Features tree `tree_id` may use: round(feature_fraction x splittable
 * input columns), at least one, taken as those with the smallest draws for
 * (seed, tree, column), so the choice is thread- and platform-independent;
 * a column drawn brings all its splittable features (dataset.h). */
static int sample_features(hb_booster_t *b, uint64_t tree_id) {
  const hb_dataset_t *d = b->train;
  int nf = d->nfeat, nc = d->ncol, usable = 0;
  for (int f = 0; f < nf; f++) b->active[f] = (uint8_t)!d->mappers[f].trivial;
  for (int c = 0; c < nc; c++) usable += column_active(d, b->active, c);
  if (b->cfg.feature_fraction >= 1.0 || usable <= 1) return HB_OK;
  int keep = (int)floor(usable * b->cfg.feature_fraction + 0.5);
  if (keep < 1) keep = 1;
  if (keep >= usable) return HB_OK;
  feat_draw *dr = hb_malloc(sizeof(feat_draw) * (size_t)usable);
  if (!dr) return HB_ERR_NOMEM;
  int m = 0;
  for (int c = 0; c < nc; c++)
    if (column_active(d, b->active, c)) {
      dr[m].u = hb_rng_unif(b->cfg.seed, HB_RNG_FEATURE, tree_id, (uint64_t)c);
      dr[m].f = c;
      m++;
    }
  qsort(dr, (size_t)m, sizeof(feat_draw), feat_draw_cmp);
  for (int k = keep; k < m; k++)  /* the columns not drawn */
    for (int f = d->col_first[dr[k].f]; f < d->col_first[dr[k].f + 1]; f++) b->active[f] = 0;
  hb_free(dr);
  return HB_OK;
}

/* Add a tree's output v to score *s: plainly (boosting), or as the
 * running mean of the trees over the starting score `init` (a forest of
 * 1 / inv_t trees with this one). */
static inline void add_tree(double *s, double v, double init, double inv_t, int rf) {
  if (rf)
    *s += (v - (*s - init)) * inv_t;
  else
    *s += v;
}

/* Row r's starting score of class k in dataset d: the model's, ik, plus the
 * data's offset if it has one (a forest's trees average above it). */
static inline double row_start(const hb_dataset_t *d, double ik, int k, int r) {
  return d->init_score ? ik + d->init_score[(size_t)k * d->nrow + r] : ik;
}

/* Rows walked through a tree together (out of the bag, validation). */
#define OOB_BLOCK 256

/* ---- numbers out of range: stop with the cause named ---------------------
 * Finite inputs can still overflow: weights or labels of 1e308 sum to
 * infinity, a gain squares a gradient sum, a huge learning rate drives the
 * scores past what exp() can take. Each round checks, cheaply and in an
 * order that no thread count changes (maxima, flags):
 *  - the gradients and hessians: none NaN, and n x the largest |gradient| at
 *    most HB_GRAD_SUM_MAX (so every gradient sum, and its square in a gain,
 *    is finite) and n x the largest hessian at most HB_HESS_SUM_MAX;
 *  - every leaf value of the new trees: finite;
 *  - every training and validation score: finite, and at most
 *    HB_LOG_LINK_MAX for log-link objectives (whose response is exp(score)).
 * A failed check names the likeliest cause (overflow_cause). */
/* HB_GRAD_SUM_MAX, HB_HESS_SUM_MAX and HB_LOG_LINK_MAX: objective_rules.h */
/* An input whose n x largest magnitude exceeds this is named as a cause. */
#define HB_INPUT_SUM_SUSPECT 1e50

/* nsum: the rows summed (every shard's in data-parallel training). */
static int gradients_in_range(const double *gh, int n, int K, double nsum, int nthreads) {
  double mg = 0, mh = 0;
  int nan = 0, nth = hb_threads_use(nthreads);
  (void)nth;
  const long m = (long)n * K;
HB_OMP(parallel for num_threads(nth) schedule(static) reduction(max : mg, mh) reduction(| : nan)
       if (m > 65536))
  for (long i = 0; i < m; i++) {
    double ag = fabs(gh[2 * (size_t)i]), ah = fabs(gh[2 * (size_t)i + 1]);
    if (ag != ag || ah != ah) { nan = 1; continue; }
    if (ag > mg) mg = ag;
    if (ah > mh) mh = ah;
  }
  return !nan && mg * nsum <= HB_GRAD_SUM_MAX && mh * nsum <= HB_HESS_SUM_MAX;
}

static int tree_values_finite(const hb_tree_t *t) {
  for (int l = 0; l < t->num_leaves; l++)
    if (!isfinite(t->leaf_value[l])) return 0;
  return 1;
}

/* A score that means nothing: not finite, or beyond exp()'s range under a log link. */
static inline int score_bad(double s, double hi) { return !(s <= hi) || !isfinite(s); }

/* The largest |v[i]| over n values (NaN counts as infinite), 0 for NULL. */
static double max_abs(const double *v, size_t n) {
  double m = 0;
  if (!v) return 0;
  for (size_t i = 0; i < n; i++) {
    double a = fabs(v[i]);
    if (a != a) return INFINITY;
    if (a > m) m = a;
  }
  return m;
}

/* Record why training stopped (`what` went out of range in round `round`
 * (1-based) of data set `data`: 0 training, 1.. validation) and return
 * HB_ERR_INPUT. The
 * inputs are examined in order: a custom objective's gradients, then the
 * weights, labels and init_score of the data set; with none of them
 * extreme, the scores grew round by round and the learning rate is named
 * (or, without blame_rate, HB_OK is returned: no input is to blame). */
static int overflow_cause(const hb_booster_t *b, const char *what, int data, int round, int blame_rate) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
  const double n = (double)d->nrow;
  char where[48] = "";
  if (data > 0) snprintf(where, sizeof where, " of validation set %d", data);
  if (data == 0 && cfg->objective == HB_OBJ_CUSTOM && !strcmp(what, "gradients")) {
    double mg = 0, mh = 0;
    for (int i = 0; i < b->n; i++) {
      double ag = fabs(b->gh[2 * (size_t)i]), ah = fabs(b->gh[2 * (size_t)i + 1]);
      if (ag > mg) mg = ag;
      if (ah > mh) mh = ah;
    }
    return hb_error_set(HB_ERR_INPUT,
                        "round %d: the custom objective's gradients or hessians are too large to sum without "
                        "overflow (largest |gradient| %g, largest hessian %g, over %d rows); scale them down "
                        "(their sums over the rows must stay below %g)",
                        round, mg, mh, b->n, HB_GRAD_SUM_MAX);
  }
  double mw = max_abs(d->weight, (size_t)d->nrow);
  if (mw * n > HB_INPUT_SUM_SUSPECT)
    return hb_error_set(HB_ERR_INPUT,
                        "round %d: the %s%s overflowed because the weights%s are too large (largest %g); "
                        "rescale `weights` (for example to a mean of 1): only their ratios matter",
                        round, what, where, where, mw);
  if (cfg->objective != HB_OBJ_BINARY && cfg->objective != HB_OBJ_MULTICLASS) {
    double my = max_abs(d->label, (size_t)d->nrow);
    if (my * n > HB_INPUT_SUM_SUSPECT)
      return hb_error_set(HB_ERR_INPUT,
                          "round %d: the %s%s overflowed because the labels (`y`)%s are too large (largest |y| "
                          "%g); rescale them (for example divide them by %g) and scale the predictions back",
                          round, what, where, where, my, pow(10.0, floor(log10(my))));
  }
  int K = HB_OBJ_NSCORE(cfg);
  double mi = max_abs(d->init_score, d->init_score ? (size_t)d->nrow * (size_t)d->init_score_ncol : 0);
  if (mi * n > HB_INPUT_SUM_SUSPECT || !isfinite(max_abs(b->model->init_score, (size_t)K)))
    return hb_error_set(HB_ERR_INPUT,
                        "round %d: the %s%s overflowed because `init_score`%s is too large (largest |value| "
                        "%g); give raw scores of a sensible size (an offset such as log(exposure))",
                        round, what, where, where, mi);
  if (!blame_rate) return HB_OK;
  return hb_error_set(HB_ERR_INPUT,
                      "round %d: the %s%s went out of range: the scores grew without bound%s; lower "
                      "`learning_rate` (now %g)",
                      round, what, where,
                      HB_OBJ_LOG_LINK(cfg->objective) ? " (the response is exp(score))" : "",
                      cfg->learning_rate);
}


/* The rows of leaf l (their count in *count): the CPU grower's partition,
 * or the rows of a GPU tree grouped by leaf. */
typedef struct {
  const hb_grow_ws_t *ws;             /* the CPU's, or NULL */
  const int *idx, *begin, *count;     /* the GPU's: idx[begin[l] ..) */
} leaf_rows_t;

static const int *leaf_rows(const leaf_rows_t *lr, int l, int *count) {
  if (lr->ws) return hb_grow_leaf_rows(lr->ws, l, count);
  *count = lr->count[l];
  return lr->idx + lr->begin[l];
}

/* Absolute error, quantile and MAPE (HB_OBJ_RENEWS): each leaf of the tree
 * just grown gets the learning rate x the (weighted; for MAPE also by
 * 1 / max(1, |label|)) quantile of its rows' residuals label - score (LightGBM's leaf renewal; the gradients' -G/H
 * only pick the splits). Leaves in parallel, each thread sorting into its
 * own buffer; a leaf's value depends only on its rows. */
static int renew_leaves(const hb_booster_t *b, const leaf_rows_t *lr, hb_tree_t *t, const double *score,
                        double rate) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *d = b->train;
  const double a = cfg->objective == HB_OBJ_QUANTILE ? cfg->quantile_alpha : 0.5;
  const int mape = cfg->objective == HB_OBJ_MAPE;
  const int L = t->num_leaves;
  int most = 0, nth = hb_threads_use(cfg->nthreads);
  for (int l = 0; l < L; l++) {
    int cnt;
    leaf_rows(lr, l, &cnt);
    if (cnt > most) most = cnt;
  }
  if (nth > L) nth = L;
  hb_objective_vw_t *buf = hb_malloc(sizeof *buf * (size_t)nth * (size_t)(most > 0 ? most : 1));
  if (!buf) return hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1) if (nth > 1))
  for (int l = 0; l < L; l++) {
    hb_objective_vw_t *p = buf + (size_t)hb_threads_id() * (size_t)most;
    int cnt;
    const int *rows = leaf_rows(lr, l, &cnt);
    for (int i = 0; i < cnt; i++) {
      p[i].v = d->label[rows[i]] - score[rows[i]];
      p[i].w = (d->weight ? d->weight[rows[i]] : 1.0) * (mape ? hb_objective_mape_weight(d->label[rows[i]]) : 1.0);
    }
    if (cnt > 0) {  /* max_delta_step caps the refit outputs too */
      double o = hb_objective_quantile(p, cnt, a);
      if (cfg->max_delta_step > 0 && (o > cfg->max_delta_step || o < -cfg->max_delta_step))
        o = o > 0 ? cfg->max_delta_step : -cfg->max_delta_step;
      t->leaf_value[l] = rate * o;
    }
  }
  hb_free(buf);
  return HB_OK;
}

/* Under monotone constraints, the unshrunk outputs o[0], o[1] of the GPU's
 * split r of leaf l and the children's bounds (the right child is leaf
 * nr): hb_rule_bound_children on the split's sums, the doubles the device
 * computed its bounds from, so the bounds are the device's. */
static void gpu_bound_children(const hb_booster_t *b, const hb_cuda_split_t *r, int l, int nr, double l2,
                               double o[2]) {
  const hb_config_t *cfg = &b->cfg;
  double bd[4];
  hb_rule_bound_children(b->lo[l], b->hi[l], r->left_g, r->left_h, r->right_g, r->right_h, cfg->lambda_l1,
                         l2, r->is_cat ? 0 : b->mono[r->feature], bd, o);
  b->lo[l] = bd[0]; b->hi[l] = bd[1];
  b->lo[nr] = bd[2]; b->hi[nr] = bd[3];
}

/* Turn the GPU's split records into tree t: the splits replayed in order
 * through hb_tree_split_leaf (as the CPU grower records them), then the leaf
 * values refit on the device. */
static int gpu_build_tree(const hb_booster_t *b, const hb_cuda_tree_t *g, hb_tree_t *t) {
  const hb_config_t *cfg = &b->cfg;
  double lr = cfg->learning_rate;
  t->num_leaves = 1;
  t->cat_nbits_words = 0;
  t->leaf_parent[0] = -1;
  t->leaf_depth[0] = 0;
  if (g->num_leaves > 1) {  /* the root before its split, as the CPU grower has it */
    const hb_cuda_split_t *r = &g->splits[0];
    t->leaf_value[0] = lr * hb_split_leaf_output(cfg, r->parent_g, r->parent_h);
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
    if (b->mono) {  /* internal nodes keep their clamped outputs, as the CPU's */
      double o[2];
      if (i == 0) { b->lo[0] = -HUGE_VAL; b->hi[0] = HUGE_VAL; }
      gpu_bound_children(b, r, r->leaf, t->num_leaves, l2, o);
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


/* l1 and quantile on the GPU: the round's tree t (one a round) refit to the
 * quantiles of its leaves' in-bag residuals at `score` (the scores the
 * gradients were taken at) by renew_leaves, the rows grouped by the leaf the
 * device routed them to; the device then adds the refit values. */
static int gpu_renew_leaves(hb_booster_t *b, hb_tree_t *t, const double *score) {
  const int n = b->n, L = t->num_leaves;
  int st = hb_cuda_learner_leaf_rows(b->gpu, b->leaf_of, b->in_bag);
  if (st != HB_OK) return st;
  int *begin = hb_calloc((size_t)L + 1, sizeof(int)), *count = hb_calloc((size_t)L, sizeof(int));
  int *idx = hb_malloc(sizeof(int) * (size_t)n);
  if (!begin || !count || !idx) {
    hb_free(begin); hb_free(count); hb_free(idx);
    return hb_error_set(HB_ERR_NOMEM, "out of memory refitting leaves to quantiles");
  }
  for (int i = 0; i < n; i++)
    if (b->in_bag[i]) count[b->leaf_of[i]]++;
  for (int l = 0; l < L; l++) begin[l + 1] = begin[l] + count[l];
  memcpy(count, begin, sizeof(int) * (size_t)L);  /* fill positions, then counts again */
  for (int i = 0; i < n; i++)
    if (b->in_bag[i]) idx[count[b->leaf_of[i]]++] = i;  /* in row order within a leaf, as the CPU's partition */
  for (int l = 0; l < L; l++) count[l] = begin[l + 1] - begin[l];
  const leaf_rows_t lr = {NULL, idx, begin, count};
  st = renew_leaves(b, &lr, t, score, b->cfg.learning_rate);
  if (st == HB_OK) st = hb_cuda_learner_set_leaf_values(b->gpu, t->leaf_value);
  hb_free(begin); hb_free(count); hb_free(idx);
  return st;
}

/* A GPU round that stopped because values went out of range (the device
 * checks its gradients and every score it updates, as the CPU's round
 * does): the same classed error naming the cause as on the CPU. */
static int gpu_overflow(hb_booster_t *b, int st) {
  const int why = hb_cuda_learner_diverged(b->gpu);
  if (!why) return st;
  if (why & 1) return overflow_cause(b, "gradients", 0, b->iter + 1, 1);
  int data = 0;
  while (data < 29 && !(why & (2 << data))) data++;
  if (data > b->nvalid) data = b->nvalid;
  return overflow_cause(b, "scores", data, b->iter + 1, 1);
}

/* One round on the GPU: the feature samples of the K trees, the round on
 * the device, the trees built from its records. */
static int update_gpu(hb_booster_t *b, int *finished) {
  int K = b->K, nf = b->train->nfeat, st = HB_OK, single = 0;
  /* the device grows a round's trees in one launch sequence: the host asks
   * about interrupts once a round, before anything changes */
  if ((st = hb_interrupt_check()) != HB_OK) return st;
  if (HOST_GRADIENTS(&b->cfg) &&
      ((st = host_gradients(b)) != HB_OK || (st = hb_cuda_learner_set_gradients(b->gpu, b->gh)) != HB_OK))
    return st;
  /* l1 and quantile refit from the residuals at this round's scores */
  const int renew = HB_OBJ_RENEWS(b->cfg.objective);
  if (renew && !b->cfg.rf && (st = gpu_sync_scores(b, 0)) != HB_OK) return st;
  for (int k = 0; k < K; k++) {
    if ((st = sample_features(b, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k)) != HB_OK) return st;
    memcpy(b->usable + (size_t)k * nf, b->active, (size_t)nf);
  }
  hb_cuda_tree_t gtrees[256];
  hb_cuda_tree_t *gt = K <= 256 ? gtrees : hb_malloc(sizeof(hb_cuda_tree_t) * (size_t)K);
  hb_tree_t *trees[256];
  hb_tree_t **tr = K <= 256 ? trees : hb_calloc((size_t)K, sizeof(hb_tree_t *));
  if (!gt || !tr) {
    if (gt != gtrees) hb_free(gt);
    if (tr != trees) hb_free(tr);
    return HB_ERR_NOMEM;
  }
  for (int k = 0; k < K; k++) tr[k] = NULL;
  st = gpu_overflow(b, hb_cuda_learner_round(b->gpu, b->iter, b->usable, gt));
  for (int k = 0; k < K && st == HB_OK; k++) {
    if (!(tr[k] = hb_tree_create(b->cfg.num_leaves))) { st = HB_ERR_NOMEM; break; }
    st = gpu_build_tree(b, &gt[k], tr[k]);
    if (st == HB_OK && renew) st = gpu_overflow(b, gpu_renew_leaves(b, tr[k], b->cfg.rf ? b->base : b->score));
    if (st == HB_OK && !tree_values_finite(tr[k])) st = overflow_cause(b, "leaf values", 0, b->iter + 1, 1);
    if (st == HB_OK && tr[k]->num_leaves == 1) single++;
  }
  for (int k = 0; k < K && st == HB_OK; k++) {
    if ((st = hb_model_push_tree(b->model, tr[k])) != HB_OK) break;
    tr[k] = NULL;
  }
  for (int k = 0; k < K; k++) hb_tree_free(tr[k]);
  if (gt != gtrees) hb_free(gt);
  if (tr != trees) hb_free(tr);
  if (st != HB_OK) return st;
  memset(b->stale, 1, (size_t)b->nvalid + 1);
  b->iter++;
  *finished = single == K;
  return HB_OK;
}

int hb_booster_set_gradients(hb_booster_t *b, const double *g, const double *h) {
  if (b->cfg.objective != HB_OBJ_CUSTOM || !b->gh)
    return hb_error_set(HB_ERR_INPUT, "gradients are given only for a custom objective");
  const size_t nk = (size_t)b->n * (size_t)b->K;  /* class-major, n a class */
  for (size_t i = 0; i < nk; i++)
    if (!isfinite(g[i]) || !(h[i] >= 0) || !isfinite(h[i]))
      return hb_error_set(HB_ERR_INPUT, "the custom objective's gradient or hessian of row %d%s is %s",
                          (int)(i % (size_t)b->n) + 1, b->K > 1 ? " (a class of it)" : "",
                          isfinite(g[i]) && isfinite(h[i]) ? "negative" : "missing or infinite");
  for (size_t i = 0; i < nk; i++) {
    b->gh[2 * i] = g[i];
    b->gh[2 * i + 1] = h[i];
  }
  b->custom_set = 1;
  return HB_OK;
}

/* Add factor x tree t's output to class k's scores of data set `data` (0
 * training, 1.. validation): each row walked through the tree on its bins,
 * rows independent, so any thread count gives the same scores. */
static int add_tree_scores(hb_booster_t *b, int data, int k, const hb_tree_t *t, double factor) {
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
  const int n = d->nrow, nth = hb_threads_use(b->cfg.nthreads);
  double *s = (data == 0 ? b->score : b->vscore[data - 1]) + (size_t)k * n;
  hb_binnode_t *nd = hb_tree_binnodes(t, d);
  if (!nd) return hb_error_set(HB_ERR_NOMEM, "out of memory walking a tree");
  const int nblk = (n + OOB_BLOCK - 1) / OOB_BLOCK;
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int q = 0; q < nblk; q++) {
    int rows[OOB_BLOCK], leaf[OOB_BLOCK], m = 0;
    const int hi = (q + 1) * OOB_BLOCK < n ? (q + 1) * OOB_BLOCK : n;
    for (int i = q * OOB_BLOCK; i < hi; i++) rows[m++] = i;
    hb_tree_leaves_binnodes(t, nd, d, rows, m, leaf);
    for (int r = 0; r < m; r++) s[rows[r]] += factor * t->leaf_value[leaf[r]];
  }
  hb_free(nd);
  return HB_OK;
}

/* Multiply a tree's outputs (leaves and internal nodes) by f. */
static void scale_tree(hb_tree_t *t, double f) {
  for (int l = 0; l < t->num_leaves; l++) t->leaf_value[l] *= f;
  for (int j = 0; j + 1 < t->num_leaves; j++) t->internal_value[j] *= f;
}

/* DART's drops for this round, LightGBM's DroppingTrees: with chance
 * skip_drop none; else iteration i of the earlier ones with chance
 * drop_rate (uniform_drop), or drop_rate x its weight / the mean weight,
 * drop_rate first capped by max_drop as LightGBM caps it, stopping at
 * max_drop drops. The draws are (seed, round, 0) and (seed, round, 1 + i):
 * the same for any thread count. */
static int dart_choose(hb_booster_t *b) {
  const hb_config_t *cfg = &b->cfg;
  const int it = b->iter;
  b->dart_ndrop = 0;
  if (it + 1 > b->dart_cap) {
    int cap = b->dart_cap ? 2 * b->dart_cap : 64;
    if (cap < it + 1) cap = it + 1;
    double *w = hb_realloc(b->dart_w, sizeof(double) * (size_t)cap);
    if (!w) return hb_error_set(HB_ERR_NOMEM, "out of memory for DART's tree weights");
    b->dart_w = w;
    int *dr = hb_realloc(b->dart_drop, sizeof(int) * (size_t)cap);
    if (!dr) return hb_error_set(HB_ERR_NOMEM, "out of memory for DART's tree weights");
    b->dart_drop = dr;
    b->dart_cap = cap;
  }
  if (it == 0 || hb_rng_unif(cfg->seed, HB_RNG_DART, (uint64_t)it, 0) < cfg->skip_drop) return HB_OK;
  double rate = cfg->drop_rate;
  if (!cfg->uniform_drop) {
    const double inv_avg = (double)it / b->dart_sum;
    if (cfg->max_drop > 0) {
      const double cap = cfg->max_drop * inv_avg / b->dart_sum;
      if (cap < rate) rate = cap;
    }
    for (int i = 0; i < it; i++) {
      if (hb_rng_unif(cfg->seed, HB_RNG_DART, (uint64_t)it, 1 + (uint64_t)i) < rate * b->dart_w[i] * inv_avg) {
        b->dart_drop[b->dart_ndrop++] = i;
        if (cfg->max_drop > 0 && b->dart_ndrop >= cfg->max_drop) break;
      }
    }
  } else {
    if (cfg->max_drop > 0 && cfg->max_drop / (double)it < rate) rate = cfg->max_drop / (double)it;
    for (int i = 0; i < it; i++) {
      if (hb_rng_unif(cfg->seed, HB_RNG_DART, (uint64_t)it, 1 + (uint64_t)i) < rate) {
        b->dart_drop[b->dart_ndrop++] = i;
        if (cfg->max_drop > 0 && b->dart_ndrop >= cfg->max_drop) break;
      }
    }
  }
  return HB_OK;
}

/* The dropped trees out of the training scores (the round's gradients are
 * taken without them). */
static int dart_drop_scores(hb_booster_t *b) {
  int st = HB_OK;
  for (int j = 0; j < b->dart_ndrop && st == HB_OK; j++)
    for (int k = 0; k < b->K && st == HB_OK; k++)
      st = add_tree_scores(b, 0, k, b->model->trees[(size_t)b->dart_drop[j] * b->K + k], -1.0);
  return st;
}

/* The learning rate of this round's new trees: lr / (1 + k) for k drops
 * (xgboost_dart_mode: lr / (lr + k), lr without drops). */
static double dart_rate(const hb_booster_t *b) {
  const double lr = b->cfg.learning_rate, k = (double)b->dart_ndrop;
  if (!b->cfg.xgboost_dart_mode) return lr / (1.0 + k);
  return b->dart_ndrop ? lr / (lr + k) : lr;
}

/* After the new trees: LightGBM's Normalize. A dropped tree of weight w
 * becomes w k / (k + 1) (xgboost_dart_mode: w k / (k + lr)): the training
 * scores, which lack it, get that back, the validation scores, which hold
 * w, lose w / (k + 1) (w lr / (k + lr)); the new iteration's weight is its
 * learning rate. */
static int dart_normalize(hb_booster_t *b, double new_rate) {
  const double k = (double)b->dart_ndrop, lr = b->cfg.learning_rate;
  const int xgb = b->cfg.xgboost_dart_mode;
  const double keep = xgb ? k / (k + lr) : k / (k + 1.0), vdel = xgb ? -lr / (k + lr) : -1.0 / (k + 1.0);
  int st = HB_OK;
  for (int j = 0; j < b->dart_ndrop && st == HB_OK; j++) {
    const int i = b->dart_drop[j];
    for (int c = 0; c < b->K && st == HB_OK; c++) {
      hb_tree_t *t = b->model->trees[(size_t)i * b->K + c];
      for (int v = 0; v < b->nvalid && st == HB_OK; v++) st = add_tree_scores(b, v + 1, c, t, vdel);
      if (st == HB_OK) st = add_tree_scores(b, 0, c, t, keep);
      if (st == HB_OK) scale_tree(t, keep);
    }
    b->dart_sum -= b->dart_w[i] * (xgb ? 1.0 / (k + lr) : 1.0 / (k + 1.0));
    b->dart_w[i] *= keep;
  }
  b->dart_w[b->iter] = new_rate;
  b->dart_sum += new_rate;
  return st;
}

int hb_booster_dart_dropped(const hb_booster_t *b, const int **iters) {
  *iters = b->dart_drop;
  return b->cfg.dart ? b->dart_ndrop : 0;
}

int hb_booster_set_interactions(hb_booster_t *b, int ngroups, const int *begin, const int *cols) {
  if (!b->ws) return hb_error_set(HB_ERR_INPUT, "interaction constraints train on the CPU only");
  return hb_grow_ws_set_interactions(b->ws, b->train, ngroups, begin, cols);
}

int hb_booster_update(hb_booster_t *b, int *finished) {
  *finished = 0;
  int st = check_usable(b);
  if (st != HB_OK) return st;
  if (b->gpu) return update_gpu(b, finished);
  const hb_dataset_t *d = b->train;
  hb_config_t *cfg = &b->cfg;
  int n = b->n, K = b->K, nth = hb_threads_use(cfg->nthreads);
  (void)nth;
  /* An interrupt (hb_interrupt_check, here and between the splits of a
   * tree) before the first score changes undoes the round: what it changed
   * is redrawn the same way next time (the bag and GOSS's sample depend on
   * the round only), and a custom objective's gradients stay given. One
   * after that leaves the booster broken (check_usable). */
  if ((st = hb_interrupt_check()) != HB_OK) return st;
  const int custom_given = b->custom_set;
  int touched = 0;
  /* DART: this round's drops leave the training scores before the gradients */
  hb_config_t gcfg = *cfg;  /* what the trees grow with: DART shrinks them more */
  if (cfg->dart) {
    if ((st = dart_choose(b)) != HB_OK) return st;
    if (b->dart_ndrop > 0) {
      touched = 1;
      if ((st = dart_drop_scores(b)) != HB_OK) { b->broken = 1; return st; }
    }
    gcfg.learning_rate = dart_rate(b);
  }
  if (HOST_GRADIENTS(cfg)) {
    if ((st = host_gradients(b)) != HB_OK) return st;
  } else if (cfg->objective == HB_OBJ_COX) {  /* the risk sets need the rows in time order */
    hb_objective_cox_gradients(n, d->label, d->weight, b->cox_order, cfg->rf ? b->base : b->score, b->gh);
  } else {  /* a forest's trees all start from the starting score */
    hb_objective_gradients(cfg, n, d->label, d->weight, cfg->rf ? b->base : b->score, b->gh, cfg->nthreads);
  }
  if (hb_dist_any(b->dist, !gradients_in_range(b->gh, n, K, b->dist ? (double)d->nrow_global : (double)n,
                                                cfg->nthreads)))
    return overflow_cause(b, "gradients", 0, b->iter + 1, 1);
  const double score_hi = HB_OBJ_LOG_LINK(cfg->objective) ? HB_LOG_LINK_MAX : HUGE_VAL;
  /* this round's rows: a bag, GOSS's sample (after 1 / learning_rate
   * rounds on every row, as LightGBM), or all */
  const int *bag = NULL;
  if (cfg->goss) {
    if ((double)b->iter >= floor(1.0 / cfg->learning_rate)) {
      if ((st = hb_goss_sample_dist(b->gh, n, K, cfg->top_rate, cfg->other_rate, cfg->seed, (uint64_t)b->iter,
                                    b->goss_scratch, b->bag, b->in_bag, cfg->nthreads, b->dist, d->row0,
                                    b->dist ? d->nrow_global : n, &b->bag_n)) != HB_OK)
        return st;
      bag = b->bag;
    }
  } else if (b->bag) {
    if (b->iter % cfg->bagging_freq == 0) resample_bag(b);
    bag = b->bag;
  }
  int single = 0;
  hb_tree_t *trees[256];
  hb_tree_t **tr = K <= 256 ? trees : hb_calloc((size_t)K, sizeof(hb_tree_t *));
  if (!tr) return HB_ERR_NOMEM;
  for (int k = 0; k < K; k++) tr[k] = NULL;
  for (int k = 0; k < K; k++) {
    if (k > 0 && (st = hb_interrupt_check()) != HB_OK) break;
    if (!(tr[k] = hb_tree_create(cfg->num_leaves))) { st = HB_ERR_NOMEM; break; }
    if ((st = sample_features(b, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k)) != HB_OK) break;
    hb_grow_ws_set_tree(b->ws, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k);
    const double *ghk = b->gh + 2 * (size_t)k * n;
    hb_qtree_t qt;
    if (cfg->quantized &&
        (st = hb_quantize_tree_dist(cfg, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k, n, ghk, b->q, &qt,
                                    cfg->nthreads, b->dist, d->row0, b->dist ? d->nrow_global : n)) != HB_OK)
      break;
    st = hb_grow_tree(b->ws, &gcfg, d, ghk, cfg->quantized ? &qt : NULL, bag, b->bag_n, b->active, tr[k]);
    /* residuals from the score the gradients were taken at (a forest's: the starting score) */
    if (st == HB_OK && HB_OBJ_RENEWS(cfg->objective)) {
      const leaf_rows_t lr = {b->ws, NULL, NULL, NULL};
      st = renew_leaves(b, &lr, tr[k], cfg->rf ? b->base : b->score, gcfg.learning_rate);
    }
    if (st != HB_OK) break;
    touched = 1;
    hb_tree_t *t = tr[k];
    if (!tree_values_finite(t)) { st = overflow_cause(b, "leaf values", 0, b->iter + 1, 1); break; }
    if (t->num_leaves == 1) single++;
    double *sk = b->score + (size_t)k * n;
    /* a forest keeps each score the starting score plus the mean of its trees */
    const int rf = cfg->rf;
    const double ik = b->model->init_score[k], inv_t = 1.0 / (double)(b->iter + 1);
    /* in-bag rows: from the partition (leaves in parallel: their rows are
     * disjoint); out-of-bag rows: walk the tree */
    int nleaf = t->num_leaves, bad = 0;
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : bad) if (n > 65536))
    for (int leaf = 0; leaf < nleaf; leaf++) {
      int cnt;
      const int *rows = hb_grow_leaf_rows(b->ws, leaf, &cnt);
      double v = t->leaf_value[leaf];
      for (int i = 0; i < cnt; i++) {
        add_tree(&sk[rows[i]], v, rf ? row_start(d, ik, k, rows[i]) : 0.0, inv_t, rf);
        bad |= score_bad(sk[rows[i]], score_hi);
      }
    }
    if (bag) {  /* rows out of the bag, in blocks of OOB_BLOCK */
      hb_binnode_t *nd = hb_tree_binnodes(t, d);
      if (!nd) { st = HB_ERR_NOMEM; break; }
      const int nblk = (n + OOB_BLOCK - 1) / OOB_BLOCK;
HB_OMP(parallel for num_threads(nth) schedule(static) reduction(| : bad))
      for (int q = 0; q < nblk; q++) {
        int rows[OOB_BLOCK], leaf[OOB_BLOCK], m = 0;
        const int hi = (q + 1) * OOB_BLOCK < n ? (q + 1) * OOB_BLOCK : n;
        for (int i = q * OOB_BLOCK; i < hi; i++)
          if (!b->in_bag[i]) rows[m++] = i;
        hb_tree_leaves_binnodes(t, nd, d, rows, m, leaf);
        for (int r = 0; r < m; r++) {
          add_tree(&sk[rows[r]], t->leaf_value[leaf[r]], rf ? row_start(d, ik, k, rows[r]) : 0.0, inv_t, rf);
          bad |= score_bad(sk[rows[r]], score_hi);
        }
      }
      hb_free(nd);
    }
    if (hb_dist_any(b->dist, bad)) { st = overflow_cause(b, "scores", 0, b->iter + 1, 1); break; }
    for (int v = 0; v < b->nvalid; v++) {
      const hb_dataset_t *vd = b->valid[v];
      double *vs = b->vscore[v] + (size_t)k * vd->nrow;
      int vn = vd->nrow;
      hb_binnode_t *nd = hb_tree_binnodes(t, vd);
      if (!nd) { st = HB_ERR_NOMEM; break; }
      const int nblk = (vn + OOB_BLOCK - 1) / OOB_BLOCK;
      int vbad = 0;
HB_OMP(parallel for num_threads(nth) schedule(static) reduction(| : vbad))
      for (int q = 0; q < nblk; q++) {
        int rows[OOB_BLOCK], leaf[OOB_BLOCK], m = 0;
        const int hi = (q + 1) * OOB_BLOCK < vn ? (q + 1) * OOB_BLOCK : vn;
        for (int i = q * OOB_BLOCK; i < hi; i++) rows[m++] = i;
        hb_tree_leaves_binnodes(t, nd, vd, rows, m, leaf);
        for (int r = 0; r < m; r++) {
          add_tree(&vs[rows[r]], t->leaf_value[leaf[r]], rf ? row_start(vd, ik, k, rows[r]) : 0.0, inv_t, rf);
          vbad |= score_bad(vs[rows[r]], score_hi);
        }
      }
      hb_free(nd);
      if (hb_dist_any(b->dist, vbad)) { st = overflow_cause(b, "scores", v + 1, b->iter + 1, 1); break; }
    }
    if (st != HB_OK) break;
  }
  if (st == HB_OK && cfg->dart) st = dart_normalize(b, gcfg.learning_rate);
  if (st == HB_OK) {
    for (int k = 0; k < K; k++) {
      if ((st = hb_model_push_tree(b->model, tr[k])) != HB_OK) break;
      tr[k] = NULL;
    }
  }
  for (int k = 0; k < K; k++) hb_tree_free(tr[k]);
  if (tr != trees) hb_free(tr);
  if (st != HB_OK && st != HB_ERR_INTERRUPT && cfg->dart && b->dart_ndrop > 0) b->broken = 1;
  if (st == HB_ERR_INTERRUPT) {
    if (touched) b->broken = 1;
    else b->custom_set = custom_given;
  }
  if (st != HB_OK) return st;
  b->iter++;
  *finished = single == K;
  return HB_OK;
}

int hb_booster_set_query(hb_booster_t *b, int data, int n, int nq, const int *qid) {
  if (data < 0 || data > b->nvalid) return hb_error_set(HB_ERR_INPUT, "no data set %d to give queries to", data);
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
  if (n != d->nrow)
    return hb_error_set(HB_ERR_INPUT, "the query of each row is needed: %d given for %d rows", n, d->nrow);
  hb_rank_query_t *q = NULL;
  int st = hb_rank_query_create(d->nrow, qid, nq, &q);
  if (st != HB_OK) return st;
  hb_rank_query_free(b->query[data]);
  b->query[data] = q;
  return HB_OK;
}

static int eval_metric(hb_booster_t *b, int data, int metric, int k, double *out);

/* A metric that is not finite because an input of its data set is extreme
 * (a validation set's labels or init_score of 1e308) is an error naming it. */
int hb_booster_eval_at(hb_booster_t *b, int data, int metric, int k, double *out) {
  int st = eval_metric(b, data, metric, k, out);
  if (st == HB_OK && !isfinite(*out)) {
    st = overflow_cause(b, "metric", data, b->iter, 0);  /* after round b->iter */
  }
  return st;
}

/* A metric of a data set sharded over the processes: every shard's scores,
 * labels and weights gathered in rank order, then the one-process metric,
 * so every process gets the value one process gets on the concatenated rows
 * (and early stopping decides alike everywhere). */
static int eval_metric_dist(hb_booster_t *b, const hb_dataset_t *d, const double *s, int metric, double *out) {
  const int K = b->K;
  double *lab = NULL, *w = NULL, *sc = NULL, *part = NULL;
  int64_t N = 0, nw = 0, np = 0;
  int st = hb_dist_gather_f64(b->dist, d->label, d->nrow, &lab, &N);
  if (st == HB_OK && d->weight) st = hb_dist_gather_f64(b->dist, d->weight, d->nrow, &w, &nw);
  if (st == HB_OK && !(sc = hb_malloc(sizeof(double) * (size_t)(N * K + 1)))) st = HB_ERR_NOMEM;
  for (int k = 0; k < K && st == HB_OK; k++) {  /* class-major: one column of scores at a time */
    st = hb_dist_gather_f64(b->dist, s + (size_t)k * d->nrow, d->nrow, &part, &np);
    if (st == HB_OK) memcpy(sc + (size_t)k * N, part, sizeof(double) * (size_t)np);
    hb_free(part);
    part = NULL;
  }
  if (st == HB_OK)
    st = hb_metric_eval(metric, &b->cfg, (int)N, K, sc, lab, d->weight ? w : NULL, b->cfg.nthreads, out);
  hb_free(lab); hb_free(w); hb_free(sc);
  return st;
}

static int eval_metric(hb_booster_t *b, int data, int metric, int k, double *out) {
  if (data < 0 || data > b->nvalid)
    return hb_error_set(HB_ERR_INPUT, "no data set %d to evaluate", data);
  int st = check_usable(b);
  if (st == HB_OK) st = gpu_sync_scores(b, data);
  if (st != HB_OK) return st;
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
  const double *s = data == 0 ? b->score : b->vscore[data - 1];
  if (!d->label) return hb_error_set(HB_ERR_INPUT, "data set %d has no labels to evaluate against", data);
  if (metric == HB_METRIC_NDCG || metric == HB_METRIC_MAP) {
    const char *name = metric == HB_METRIC_NDCG ? "ndcg" : "map";
    if (!b->query[data]) return hb_error_set(HB_ERR_INPUT, "%s needs the queries of data set %d", name, data);
    st = hb_rank_check_labels(&b->cfg, d->nrow, d->label);
    if (b->dist && d->dist && hb_dist_any(b->dist, st != HB_OK) && st == HB_OK)
      st = hb_error_set(HB_ERR_INPUT, "another process's labels are not ranking grades (its error says why)");
    if (st != HB_OK) return st;
    return hb_rank_metric_dist(&b->cfg, b->query[data], d->label, d->weight, s, k, metric == HB_METRIC_MAP,
                               b->cfg.nthreads, b->dist && d->dist ? b->dist : NULL, out);
  }
  if (b->dist && d->dist) return eval_metric_dist(b, d, s, metric, out);
  return hb_metric_eval(metric, &b->cfg, d->nrow, b->K, s, d->label, d->weight, b->cfg.nthreads, out);
}

const double *hb_booster_scores(hb_booster_t *b, int data, int *nrow) {
  if (data < 0 || data > b->nvalid || check_usable(b) != HB_OK || gpu_sync_scores(b, data) != HB_OK) {
    *nrow = 0;
    return NULL;
  }
  *nrow = data == 0 ? b->n : b->valid[data - 1]->nrow;
  return data == 0 ? b->score : b->vscore[data - 1];
}

hb_model_t *hb_booster_model(hb_booster_t *b) { return b->model; }

int hb_booster_on_gpu(const hb_booster_t *b) { return b->gpu != NULL; }

void hb_booster_profile(hb_booster_t *b, int on) {
  if (b->gpu) hb_cuda_learner_profile(b->gpu, on);
}

int hb_booster_get_profile(const hb_booster_t *b, double out[7]) {
  if (!b->gpu) return 0;
  hb_cuda_profile_t p;
  hb_cuda_learner_get_profile(b->gpu, &p);
  out[0] = p.round_ms;
  out[1] = p.partition_ms;
  out[2] = p.hist_ms;
  out[3] = p.split_ms;
  out[4] = p.hist_bytes;
  out[5] = (double)p.splits;
  out[6] = (double)p.rounds;
  return 1;
}

hb_model_t *hb_booster_release_model(hb_booster_t *b) {
  hb_model_t *m = b->model;
  b->model = NULL;
  return m;
}
