/* boost.c: the booster: the state every learner shares (scores, host
 * gradients, validation sets, queries, DART's weights), feature sampling,
 * one round per call driven through the learner interface (learner.h:
 * learner_cpu.c, learner_cuda.c), evaluation. Nothing here depends on the
 * device a learner runs on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boost.h"
#include "learner.h"
#include "metric.h"
#include "objective.h"
#include "rank.h"
#include "error.h"
#include "split_rules.h"
#include "interrupt.h"
#include "rng.h"
#include "threads.h"

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
  if (b->learner) b->learner->free(b->lstate);
  hb_free(b->base);
  hb_free(b->active);
  hb_free(b->filtered);
  if (b->query)
    for (int v = 0; v <= b->cap_valid; v++) hb_rank_query_free(b->query[v]);
  hb_free(b->query);
  hb_free(b->dart.w);
  hb_free(b->dart.drop);
  hb_free(b->cox_order);
  hb_free(b->cox_label);
  hb_free(b->cox_weight);
  hb_free(b);
}

int hb_booster_sync_scores(hb_booster_t *b, int data) {
  return b->learner->sync_scores ? b->learner->sync_scores(b, b->lstate, data) : HB_OK;
}

int hb_booster_cox_gradients(hb_booster_t *b, const double *score) {
  if (b->dist) return hb_booster_cox_gradients_dist(b, score);  /* risk sets over every shard */
  hb_objective_cox_gradients(b->n, b->train->label, b->train->weight, b->cox_order, score, b->gh);
  return HB_OK;
}

/* This round's gradients into b->gh for HB_TAKES_HOST_GRADIENTS objectives,
 * at the training scores (a forest's: the starting scores), brought back
 * from the learner first where they live there. */
int hb_booster_host_gradients(hb_booster_t *b) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *d = b->train;
  if (cfg->objective == HB_OBJ_COX) {
    int st = cfg->rf ? HB_OK : hb_booster_sync_scores(b, 0);
    if ((st = hb_dist_agree(b->dist, st, "to compute the gradients")) != HB_OK) return st;
    return hb_booster_cox_gradients(b, cfg->rf ? b->base : b->score);
  }
  if (cfg->objective == HB_OBJ_CUSTOM) {
    if (!b->custom_set) return hb_error_set(HB_ERR_INPUT, "a custom objective needs this round's gradients first");
    b->custom_set = 0;
    return HB_OK;
  }
  if (!b->query[0])
    return hb_error_set(HB_ERR_STATE, "the lambdarank objective needs the training rows' queries before the first round");
  int st = cfg->rf ? HB_OK : hb_booster_sync_scores(b, 0);
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

/* The learner of cfg->device. A new learner is chosen here (learner.h). */
static const hb_learner_ops_t *learner_for(const hb_config_t *cfg) {
  return cfg->device == HB_DEVICE_CUDA ? &hb_learner_cuda : &hb_learner_cpu;
}

/* Data-parallel: weights and offsets given on every process or on none (the
 * steps that gather them depend on it), an input error on every process
 * otherwise. One collective operation. */
static int dist_same_columns(const hb_dist_t *dist, const hb_dataset_t *d, const char *set) {
  if (!dist || dist->size < 2) return HB_OK;
  int64_t v[2] = {d->weight != NULL, d->init_score != NULL};
  int st = hb_dist_sum_i64(dist, v, 2);
  if (st != HB_OK) return st;
  for (int j = 0; j < 2; j++)
    if (v[j] != 0 && v[j] != dist->size)
      return hb_error_set(HB_ERR_INPUT, "%lld of %d processes give %s %s and the others do not; give them on every "
                          "process or on none", (long long)v[j], dist->size, set, j == 0 ? "weights" : "init_score");
  return HB_OK;
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
  const hb_learner_ops_t *learner = learner_for(cfg);
  if (learner->check && (st = learner->check(cfg)) != HB_OK) return st;
  /* DART moves scores through the learner where it keeps them (add_tree);
   * a learner with scores of its own and no add_tree cannot take it */
  if (cfg->dart && learner->sync_scores && !learner->add_tree)
    return hb_error_set(HB_ERR_INPUT, "boosting = \"dart\" does not train on the %s learner", learner->name);
  /* the learners see NULL when no column is constrained */
  const int *monotone = NULL;
  for (int c = 0; schema->monotone && c < schema->nfeat; c++)
    if (schema->monotone[c] != 0) monotone = schema->monotone;
  if (monotone && HB_OBJ_RENEWS(cfg->objective))
    return hb_error_set(HB_ERR_INPUT, "monotone constraints do not combine with the %s objective: its leaves are "
                        "refit to quantiles of their residuals, which would undo them",
                        cfg->objective == HB_OBJ_L1 ? "l1" : cfg->objective == HB_OBJ_MAPE ? "mape" : "quantile");
  const hb_dist_t *dist = train->dist && train->dist->size > 1 ? train->dist : NULL;
  if (dist) {  /* what the data-parallel learner does not do yet: refused on every process alike */
    const char *no = learner->no_distributed;
    if (no) return hb_error_set(HB_ERR_INPUT, "distributed training does not support %s yet", no);
  }
  /* In data-parallel training a local failure is agreed on (hb_dist_agree)
   * before the next collective operation and at the end. */
  hb_booster_t *b = hb_calloc(1, sizeof *b);
  if ((st = hb_dist_agree(dist, b ? HB_OK : hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster"),
                          "to create the booster")) != HB_OK) {
    hb_free(b);
    return st;
  }
  b->learner = learner;
  b->dist = dist;
  b->cfg = *cfg;
  if (cfg->rf) b->cfg.learning_rate = 1.0;  /* a forest's trees are averaged, not shrunk */
  cfg = &b->cfg;
  b->train = train;
  b->n = train->nrow;
  b->K = HB_OBJ_NSCORE(cfg);
  size_t nk = (size_t)b->n * (size_t)b->K;
  b->model = hb_model_create();
  b->score = hb_malloc(sizeof(double) * nk);
  b->active = hb_malloc((size_t)train->nfeat);
  b->query = hb_calloc(1, sizeof(hb_rank_query_t *));
  st = b->model && b->score && b->active && b->query ? HB_OK : HB_ERR_NOMEM;
  /* the host's gradients: all of them, or those the learner does not compute */
  if (st == HB_OK && (!learner->own_gradients || HB_TAKES_HOST_GRADIENTS(cfg)) &&
      !(b->gh = hb_malloc(2 * sizeof(double) * nk)))
    st = HB_ERR_NOMEM;
  hb_model_t *m = b->model;
  if (st == HB_OK) {
    m->config = *cfg;
    m->num_class = b->K;
    m->trees_per_iter = b->K;
    st = hb_schema_copy(schema, &m->schema);
  }
  if (st == HB_OK && !(m->init_score = hb_calloc((size_t)b->K, sizeof(double)))) st = HB_ERR_NOMEM;
  if (st == HB_ERR_NOMEM) hb_error_set(st, "out of memory creating the booster (%d rows)", train->nrow);
  if ((st = hb_dist_agree(dist, st, "to create the booster")) != HB_OK) {
    hb_booster_free(b);
    return st;
  }
  if ((st = dist_same_columns(dist, train, "training")) != HB_OK) {
    hb_booster_free(b);
    return st;
  }
  /* feature_pre_filter: the features no split can give min_data_in_leaf rows a side, left out of every
   * tree (and of feature_fraction's count) as LightGBM's trivial ones */
  if (cfg->feature_pre_filter && cfg->min_data_in_leaf > 1) {
    b->filtered = hb_malloc((size_t)(train->nfeat > 0 ? train->nfeat : 1));
    st = hb_dist_agree(dist, b->filtered ? HB_OK : hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster"),
                       "to create the booster");
    if (st == HB_OK) st = hb_dataset_prefilter(train, dist, cfg->min_data_in_leaf, cfg->nthreads, b->filtered);
    if (st != HB_OK) {
      hb_booster_free(b);
      return st;
    }
  }
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
    if ((st = hb_dist_agree(dist, st, "to create the booster")) != HB_OK) {
      hb_booster_free(b);
      return st;
    }
  } else if (!train->init_score &&
      hb_objective_init_score(cfg, b->n, train->label, train->weight, m->init_score) != HB_OK)
    goto nomem;
  start_scores(train, m->init_score, b->K, b->score);
  if (cfg->objective == HB_OBJ_COX && dist) {  /* risk sets over every shard (cox_dist.c) */
    if ((st = hb_booster_cox_setup_dist(b)) != HB_OK) { hb_booster_free(b); return st; }
  } else if (cfg->objective == HB_OBJ_COX && hb_objective_cox_order(b->n, train->label, &b->cox_order) != HB_OK)
    goto nomem;
  if (cfg->rf) {
    if (!(b->base = hb_malloc(sizeof(double) * nk))) goto nomem;
    memcpy(b->base, b->score, sizeof(double) * nk);
  }
  /* the learner last: it starts from the scores */
  const long mark = hb_dist_agreed_failures();
  st = learner->create(b, monotone, &b->lstate);
  if ((st = hb_dist_agree_end(dist, st, mark, "to create the booster")) != HB_OK) {
    hb_booster_free(b);
    return st;
  }
  *out = b;
  return HB_OK;
nomem:
  st = hb_dist_agree(dist, hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster (%d rows)", train->nrow),
                     "to create the booster");
  hb_booster_free(b);
  return st;
}

static int add_valid_local(hb_booster_t *b, const hb_dataset_t *valid);

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
  /* data-parallel: what failed here on one process fails on every one */
  const hb_dist_t *dist = b->dist && valid->dist ? b->dist : NULL;
  int st = dist_same_columns(dist, valid, "validation");
  if (st != HB_OK) return st;
  return hb_dist_agree(dist, add_valid_local(b, valid), "to add a validation set");
}

/* hb_booster_add_valid's work on this process, after the checks every process makes alike */
static int add_valid_local(hb_booster_t *b, const hb_dataset_t *valid) {
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
  if (b->learner->add_valid) {
    int st = b->learner->add_valid(b, b->lstate, b->nvalid);
    if (st != HB_OK) {  /* keep the booster consistent: the set is not added */
      b->nvalid--;
      hb_free(s);
      return st;
    }
  }
  return HB_OK;
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
int hb_booster_sample_features(hb_booster_t *b, uint64_t tree_id) {
  const hb_dataset_t *d = b->train;
  int nf = d->nfeat, nc = d->ncol, usable = 0;
  for (int f = 0; f < nf; f++) b->active[f] = (uint8_t)(!d->mappers[f].trivial && !(b->filtered && b->filtered[f]));
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

/* Record why training stopped (`what` went out of range in round `round`
 * (1-based) of data set `data`: 0 training, 1.. validation) and return
 * HB_ERR_INPUT. The
 * inputs are examined in order: a custom objective's gradients, then the
 * weights, labels and init_score of the data set; with none of them
 * extreme, the scores grew round by round and the learning rate is named
 * (or, without blame_rate, HB_OK is returned: no input is to blame). */
int hb_booster_overflow(const hb_booster_t *b, const char *what, int data, int round, int blame_rate) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
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
  const hb_overflow_inputs_t in = {d->nrow, d->label, d->weight, d->init_score, d->init_score ? d->init_score_ncol : 0,
                                   b->model->init_score, HB_OBJ_NSCORE(cfg)};
  int st = hb_objective_overflow_cause(cfg, &in, what, where, "round", round);
  if (st != HB_OK) return st;
  if (!blame_rate) return HB_OK;
  return hb_error_set(HB_ERR_INPUT,
                      "round %d: the %s%s went out of range: the scores grew without bound%s; lower "
                      "`learning_rate` (now %g)",
                      round, what, where,
                      HB_OBJ_LOG_LINK(cfg->objective) ? " (the response is exp(score))" : "",
                      cfg->learning_rate);
}


int hb_booster_tree_finite(const hb_tree_t *t) {
  for (int l = 0; l < t->num_leaves; l++)
    if (!isfinite(t->leaf_value[l])) return 0;
  return 1;
}

void hb_booster_lone_root(const hb_config_t *cfg, hb_tree_t *t) {
  if (t->num_leaves == 1 &&
      !hb_rule_lone_root_counts(t->leaf_count[0], t->leaf_hess[0], cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf))
    t->leaf_value[0] = 0.0;
}

const int *hb_leaf_rows_of(const hb_leaf_rows_t *lr, int l, int *count) {
  if (lr->ws) return hb_grow_leaf_rows(lr->ws, l, count);
  *count = lr->count[l];
  return lr->idx + lr->begin[l];
}

/* Absolute error, quantile and MAPE (HB_OBJ_RENEWS): each leaf of the tree
 * just grown gets the learning rate x the (weighted; for MAPE also by
 * 1 / max(1, |label|)) quantile of its rows' residuals label - score (LightGBM's leaf renewal; the gradients' -G/H
 * only pick the splits). Leaves in parallel, each thread sorting into its
 * own buffer; a leaf's value depends only on its rows. */
int hb_booster_renew_leaves(const hb_booster_t *b, const hb_leaf_rows_t *lr, hb_tree_t *t, const double *score,
                            double rate) {
  if (b->dist) return hb_booster_renew_leaves_dist(b, lr, t, score, rate);  /* renew_dist.c */
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *d = b->train;
  const double a = cfg->objective == HB_OBJ_QUANTILE ? cfg->quantile_alpha : 0.5;
  const int mape = cfg->objective == HB_OBJ_MAPE;
  const int L = t->num_leaves;
  int most = 0, nth = hb_threads_use(cfg->nthreads);
  for (int l = 0; l < L; l++) {
    int cnt;
    hb_leaf_rows_of(lr, l, &cnt);
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
    const int *rows = hb_leaf_rows_of(lr, l, &cnt);
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
  const int nblk = (n + HB_OOB_BLOCK - 1) / HB_OOB_BLOCK;
  (void)nth;
HB_OMP(parallel for num_threads(nth) schedule(static) if (n > 65536))
  for (int q = 0; q < nblk; q++) {
    int rows[HB_OOB_BLOCK], leaf[HB_OOB_BLOCK], m = 0;
    const int hi = (q + 1) * HB_OOB_BLOCK < n ? (q + 1) * HB_OOB_BLOCK : n;
    for (int i = q * HB_OOB_BLOCK; i < hi; i++) rows[m++] = i;
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
  b->dart.ndrop = 0;
  if (it + 1 > b->dart.cap) {
    int cap = b->dart.cap ? 2 * b->dart.cap : 64;
    if (cap < it + 1) cap = it + 1;
    double *w = hb_realloc(b->dart.w, sizeof(double) * (size_t)cap);
    if (!w) return hb_error_set(HB_ERR_NOMEM, "out of memory for DART's tree weights");
    b->dart.w = w;
    int *dr = hb_realloc(b->dart.drop, sizeof(int) * (size_t)cap);
    if (!dr) return hb_error_set(HB_ERR_NOMEM, "out of memory for DART's tree weights");
    b->dart.drop = dr;
    b->dart.cap = cap;
  }
  if (it == 0 || hb_rng_unif(cfg->seed, HB_RNG_DART, (uint64_t)it, 0) < cfg->skip_drop) return HB_OK;
  double rate = cfg->drop_rate;
  if (!cfg->uniform_drop) {
    const double inv_avg = (double)it / b->dart.sum;
    if (cfg->max_drop > 0) {
      const double cap = cfg->max_drop * inv_avg / b->dart.sum;
      if (cap < rate) rate = cap;
    }
    for (int i = 0; i < it; i++) {
      if (hb_rng_unif(cfg->seed, HB_RNG_DART, (uint64_t)it, 1 + (uint64_t)i) < rate * b->dart.w[i] * inv_avg) {
        b->dart.drop[b->dart.ndrop++] = i;
        if (cfg->max_drop > 0 && b->dart.ndrop >= cfg->max_drop) break;
      }
    }
  } else {
    if (cfg->max_drop > 0 && cfg->max_drop / (double)it < rate) rate = cfg->max_drop / (double)it;
    for (int i = 0; i < it; i++) {
      if (hb_rng_unif(cfg->seed, HB_RNG_DART, (uint64_t)it, 1 + (uint64_t)i) < rate) {
        b->dart.drop[b->dart.ndrop++] = i;
        if (cfg->max_drop > 0 && b->dart.ndrop >= cfg->max_drop) break;
      }
    }
  }
  return HB_OK;
}

/* factor x the model's tree number `tree` added to data set `data`'s
 * scores: by the learner where it keeps them (the GPU's), else here. */
static int dart_add(hb_booster_t *b, int data, size_t tree, double factor) {
  const hb_tree_t *t = b->model->trees[tree];
  if (b->learner->add_tree) return b->learner->add_tree(b, b->lstate, data, (int)tree, t, factor);
  return add_tree_scores(b, data, (int)(tree % (size_t)b->K), t, factor);
}

/* The dropped trees out of the training scores (the round's gradients are
 * taken without them). */
static int dart_drop_scores(hb_booster_t *b) {
  int st = HB_OK;
  for (int j = 0; j < b->dart.ndrop && st == HB_OK; j++)
    for (int k = 0; k < b->K && st == HB_OK; k++) st = dart_add(b, 0, (size_t)b->dart.drop[j] * b->K + k, -1.0);
  return st;
}

/* The learning rate of this round's new trees: lr / (1 + k) for k drops
 * (xgboost_dart_mode: lr / (lr + k), lr without drops). */
static double dart_rate(const hb_booster_t *b) {
  const double lr = b->cfg.learning_rate, k = (double)b->dart.ndrop;
  if (!b->cfg.xgboost_dart_mode) return lr / (1.0 + k);
  return b->dart.ndrop ? lr / (lr + k) : lr;
}

/* After the new trees: LightGBM's Normalize. A dropped tree of weight w
 * becomes w k / (k + 1) (xgboost_dart_mode: w k / (k + lr)): the training
 * scores, which lack it, get that back, the validation scores, which hold
 * w, lose w / (k + 1) (w lr / (k + lr)); the new iteration's weight is its
 * learning rate. */
static int dart_normalize(hb_booster_t *b, double new_rate) {
  const double k = (double)b->dart.ndrop, lr = b->cfg.learning_rate;
  const int xgb = b->cfg.xgboost_dart_mode;
  const double keep = xgb ? k / (k + lr) : k / (k + 1.0), vdel = xgb ? -lr / (k + lr) : -1.0 / (k + 1.0);
  int st = HB_OK;
  for (int j = 0; j < b->dart.ndrop && st == HB_OK; j++) {
    const int i = b->dart.drop[j];
    for (int c = 0; c < b->K && st == HB_OK; c++) {
      const size_t tree = (size_t)i * b->K + c;
      for (int v = 0; v < b->nvalid && st == HB_OK; v++) st = dart_add(b, v + 1, tree, vdel);
      if (st == HB_OK) st = dart_add(b, 0, tree, keep);
      if (st == HB_OK) scale_tree(b->model->trees[tree], keep);
    }
    b->dart.sum -= b->dart.w[i] * (xgb ? 1.0 / (k + lr) : 1.0 / (k + 1.0));
    b->dart.w[i] *= keep;
  }
  b->dart.w[b->iter] = new_rate;
  b->dart.sum += new_rate;
  return st;
}

int hb_booster_dart_dropped(const hb_booster_t *b, const int **iters) {
  *iters = b->dart.drop;
  return b->cfg.dart ? b->dart.ndrop : 0;
}

int hb_booster_dart_begin(hb_booster_t *b, double *rate, int *touched) {
  int st = dart_choose(b);
  if (st != HB_OK) return st;
  if (b->dart.ndrop > 0) {
    *touched = 1;
    if ((st = dart_drop_scores(b)) != HB_OK) { b->broken = 1; return st; }
  }
  *rate = dart_rate(b);
  return HB_OK;
}

int hb_booster_dart_end(hb_booster_t *b, double rate) { return dart_normalize(b, rate); }

int hb_booster_set_interactions(hb_booster_t *b, int ngroups, const int *begin, const int *cols) {
  if (!b->learner->set_interactions) return hb_error_set(HB_ERR_INPUT, "interaction constraints train on the CPU only");
  /* data-parallel: what failed on one process fails on every one */
  return hb_dist_agree(b->dist, b->learner->set_interactions(b, b->lstate, ngroups, begin, cols),
                       "to set its interaction constraints");
}


/* One round: an interrupt asked for before anything changes leaves the
 * booster as it was; the learner grows the round's trees and updates the
 * scores; the trees join the model together. */
int hb_booster_update(hb_booster_t *b, int *finished) {
  *finished = 0;
  int st = check_usable(b);
  if (st != HB_OK) return st;
  /* an interrupt seen on one process stops every process here (hb_dist_agree) */
  if ((st = hb_dist_agree(b->dist, hb_interrupt_check(), "(interrupted) before the round")) != HB_OK) return st;
  const int K = b->K;
  int single = 0;
  hb_tree_t *trees[256];
  hb_tree_t **tr = K <= 256 ? trees : hb_calloc((size_t)K, sizeof(hb_tree_t *));
  /* data-parallel: a failure on one process ends the round on every process
   * (hb_dist_agree here, at the end, and before each collective operation
   * of the round that follows local work) */
  if (K > 256 && (st = hb_dist_agree(b->dist, tr ? HB_OK : HB_ERR_NOMEM, "to start a round")) != HB_OK) {
    hb_free(tr);
    return st;
  }
  for (int k = 0; k < K; k++) tr[k] = NULL;
  const long mark = hb_dist_agreed_failures();
  st = b->learner->round(b, b->lstate, tr, &single);
  if (st == HB_OK) {
    for (int k = 0; k < K; k++) {
      if ((st = hb_model_push_tree(b->model, tr[k])) != HB_OK) {
        b->broken = 1;  /* the scores hold the whole round, the model part of it */
        break;
      }
      tr[k] = NULL;
    }
  }
  for (int k = 0; k < K; k++) hb_tree_free(tr[k]);
  if (tr != trees) hb_free(tr);
  if ((st = hb_dist_agree_end(b->dist, st, mark, "in this round")) != HB_OK) return st;
  b->iter++;
  *finished = single == K;
  return HB_OK;
}

int hb_booster_set_query(hb_booster_t *b, int data, int n, int nq, const int *qid) {
  if (data < 0 || data > b->nvalid) return hb_error_set(HB_ERR_INPUT, "no data set %d to give queries to", data);
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
  int st = n == d->nrow ? HB_OK
                        : hb_error_set(HB_ERR_INPUT, "the query of each row is needed: %d given for %d rows", n,
                                       d->nrow);
  hb_rank_query_t *q = NULL;
  if (st == HB_OK) st = hb_rank_query_create(d->nrow, qid, nq, &q);
  /* data-parallel: what failed on one process fails on every one */
  if (b->dist && d->dist) st = hb_dist_agree(b->dist, st, "to set up its queries");
  if (st != HB_OK) {
    hb_rank_query_free(q);
    return st;
  }
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
    st = hb_booster_overflow(b, "metric", data, b->iter, 0);  /* after round b->iter */
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
  st = hb_dist_agree(b->dist, st, "to evaluate a metric");
  for (int k = 0; k < K && st == HB_OK; k++) {  /* class-major: one column of scores at a time */
    st = hb_dist_gather_f64(b->dist, s + (size_t)k * d->nrow, d->nrow, &part, &np);
    if (st == HB_OK) memcpy(sc + (size_t)k * N, part, sizeof(double) * (size_t)np);
    hb_free(part);
    part = NULL;
  }
  if (st == HB_OK)
    st = hb_metric_eval(metric, &b->cfg, (int)N, K, sc, lab, d->weight ? w : NULL, b->cfg.nthreads, out);
  hb_free(lab); hb_free(w); hb_free(sc);
  return hb_dist_agree(b->dist, st, "to evaluate a metric");
}

static int eval_metric(hb_booster_t *b, int data, int metric, int k, double *out) {
  if (data < 0 || data > b->nvalid)
    return hb_error_set(HB_ERR_INPUT, "no data set %d to evaluate", data);
  int st = check_usable(b);
  if (st == HB_OK) st = hb_booster_sync_scores(b, data);
  const hb_dataset_t *d = data == 0 ? b->train : b->valid[data - 1];
  if (b->dist && d->dist) st = hb_dist_agree(b->dist, st, "to evaluate a metric");
  if (st != HB_OK) return st;
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
  if (data < 0 || data > b->nvalid || check_usable(b) != HB_OK || hb_booster_sync_scores(b, data) != HB_OK) {
    *nrow = 0;
    return NULL;
  }
  *nrow = data == 0 ? b->n : b->valid[data - 1]->nrow;
  return data == 0 ? b->score : b->vscore[data - 1];
}

hb_model_t *hb_booster_model(hb_booster_t *b) { return b->model; }

int hb_booster_on_gpu(const hb_booster_t *b) { return b->learner->on_gpu; }

void hb_booster_profile(hb_booster_t *b, int on) {
  if (b->learner->profile) b->learner->profile(b->lstate, on);
}

int hb_booster_get_profile(const hb_booster_t *b, double out[HB_PROFILE_N]) {
  return b->learner->get_profile ? b->learner->get_profile(b->lstate, out) : 0;
}

hb_model_t *hb_booster_release_model(hb_booster_t *b) {
  hb_model_t *m = b->model;
  b->model = NULL;
  return m;
}

