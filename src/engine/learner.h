/* learner.h: the learner interface (engine-internal; the glue sees only
 * boost.h). A learner grows a round's trees and keeps the scores up to date;
 * the booster (boost.c) holds what every learner shares (configuration,
 * model, scores, queries, DART's weights) and drives a learner through the
 * function pointers of hb_learner_ops_t, as LightGBM's GBDT drives its
 * TreeLearner, without knowing which device it runs on.
 *
 * Two learners: the CPU's (learner_cpu.c: host gradients, bagging, GOSS,
 * grow.c's trees, scores updated from the partition) and the GPU's adapter
 * (learner_cuda.c: the host-side half of device = "cuda", which calls the
 * GPU learner through cuda.h; in a build without CUDA, cuda_stub.c answers
 * its first call with "built without CUDA"). A new learner: one
 * hb_learner_ops_t in its own file, declared below, and its choice in
 * learner_for() (boost.c); see src/README.md. */
#ifndef HB_LEARNER_H
#define HB_LEARNER_H
#include <stdint.h>
#include "boost.h"
#include "dist.h"
#include "grow.h"
#include "rank.h"
#include "tree.h"
#include "objective_rules.h"

/* A learner's operations. `state` is the learner's own (what create made). */
typedef struct hb_learner_ops {
  const char *name;     /* "cpu", "cuda": for messages */
  int on_gpu;           /* 1: hb_booster_on_gpu() says so (the glue's GPU error advice) */
  int own_gradients;    /* 1: the learner computes the built-in objectives' gradients itself,
                           so b->gh is needed only for host-computed ones (HB_HOST_GRADIENTS) */
  /* NULL when the learner trains data-parallel (dist.h); else what it is,
   * for "distributed training does not support %s yet" */
  const char *no_distributed;
  /* What the learner refuses of a valid configuration (HB_ERR_INPUT with a
   * message), before anything is allocated; NULL: nothing. */
  int (*check)(const hb_config_t *cfg);
  /* After the booster's shared state (scores at their starting values, the
   * forest's base, the model's starting score) is set: the learner's state
   * in *state (NULL on error, with nothing left allocated). `monotone` is the
   * schema's per-column constraints, NULL when no column is constrained. */
  int (*create)(hb_booster_t *b, const int *monotone, void **state);
  void (*free)(void *state);
  /* Validation set number v (1-based) was just added to b (its scores at
   * b->vscore[v - 1], up to date on the host); on error the booster drops it. */
  int (*add_valid)(hb_booster_t *b, void *state, int v);
  /* One round: the K = b->K trees of round b->iter in tr[0..K) (tr[k] NULL
   * on entry; whatever is left there is freed by the caller, and pushed to
   * the model when HB_OK is returned), every data set's scores updated, and
   * *single the number of trees that could not split. The caller has
   * checked for an interrupt just before; the learner sets b->broken when
   * it fails after changing the scores (boost.h's rule). */
  int (*round)(hb_booster_t *b, void *state, hb_tree_t **tr, int *single);
  /* Make b->score (data 0) or b->vscore[data - 1] current on the host;
   * NULL: the host copy is always current. */
  int (*sync_scores)(hb_booster_t *b, void *state, int data);
  /* DART: factor x tree number `tree` of the model (t = b->model->trees[tree],
   * of class tree % K) added to data set `data`'s scores (0 training, 1..
   * validation), where the learner keeps them, each row's score s becoming
   * s + factor x the value of its leaf (a multiplication, then an addition,
   * rounded apart: boost.c's host version); NULL: the host's scores are the
   * learner's. */
  int (*add_tree)(hb_booster_t *b, void *state, int data, int tree, const hb_tree_t *t, double factor);
  /* Interaction constraints (grow.h), before the first round; NULL: not supported. */
  int (*set_interactions)(hb_booster_t *b, void *state, int ngroups, const int *begin, const int *cols);
  /* Profiling (boost.h: hb_booster_profile); NULL: none. */
  void (*profile)(void *state, int on);
  int (*get_profile)(const void *state, double out[HB_PROFILE_N]);
} hb_learner_ops_t;

extern const hb_learner_ops_t hb_learner_cpu;
extern const hb_learner_ops_t hb_learner_cuda;

/* DART's state (LightGBM's dart.hpp): each iteration's weight (its trees'
 * shrinkage so far, for drops by weight) and their sum; the iterations this
 * round dropped (0-based, increasing). */
typedef struct {
  double *w;
  double sum;
  int *drop;
  int ndrop, cap;
} hb_dart_t;

/* The booster: what every learner shares. */
struct hb_booster {
  hb_config_t cfg;
  const hb_dataset_t *train;
  hb_model_t *model;
  int n, K;
  int iter;
  double *score;                   /* n x K, column-major (a GPU learner's: a copy, see sync_scores) */
  double *gh;                      /* n x K (gradient, hessian) pairs, class-major; NULL where the
                                      learner computes them itself (own_gradients) */
  int custom_set;                  /* a custom objective: gh holds this round's gradients */
  int nvalid, cap_valid;
  const hb_dataset_t **valid;
  double **vscore;                 /* per validation set: nrow x K */
  uint8_t *active;                 /* nfeat flags: the features of the current tree (sample_features) */
  uint8_t *filtered;               /* nfeat flags: 1 for a feature feature_pre_filter leaves out (NULL: none) */
  int broken;                      /* interrupted after a round had changed scores: no further use */
  const hb_dist_t *dist;           /* data-parallel training (dist.h), or NULL: one process */
  /* objectives and boosting modes */
  hb_rank_query_t **query;         /* ranking: 1 + cap_valid, each data set's queries, or NULL */
  int *cox_order;                  /* cox: the training rows in order of time (hb_objective_cox_order);
                                      distributed, the rows of every shard (cox_dist.c) */
  double *cox_label, *cox_weight;  /* cox, distributed: every shard's labels and weights (NULL: none), */
  int cox_n;                       /* in rank order, cox_n of them */
  double *base;                    /* random forest: n x K starting scores, its trees' gradients' */
  hb_dart_t dart;                  /* DART (the learner's add_tree, or the host's scores) */
  /* the learner */
  const hb_learner_ops_t *learner;
  void *lstate;
};

/* ---- what boost.c shares with the learners ---- */

/* Objectives whose gradients the host computes, on either device: a custom
 * objective's come from R (hb_booster_set_gradients), LambdaRank's from
 * rank.c; a learner with own_gradients then takes them from b->gh. */
#define HB_HOST_GRADIENTS(cfg) ((cfg)->objective == HB_OBJ_LAMBDARANK || (cfg)->objective == HB_OBJ_CUSTOM)
/* The objectives a learner with own_gradients (the GPU's) takes from b->gh:
 * HB_HOST_GRADIENTS's, and Cox, whose risk sets need the rows in order of
 * time (over every shard when data-parallel), which the host keeps. */
#define HB_TAKES_HOST_GRADIENTS(cfg) (HB_HOST_GRADIENTS(cfg) || (cfg)->objective == HB_OBJ_COX)

/* This round's gradients into b->gh for HB_TAKES_HOST_GRADIENTS objectives,
 * at the training scores (a forest's: the starting scores), synced from the
 * learner first. Data-parallel Cox is a collective operation: every process
 * calls it, and a local failure before it is agreed on. */
int hb_booster_host_gradients(hb_booster_t *b);
/* Cox's gradients into b->gh at `score` (the booster's rows; over every
 * shard's risk sets when b->dist is set: collective). */
int hb_booster_cox_gradients(hb_booster_t *b, const double *score);
/* Bring the host copy of data set `data`'s scores up to date (sync_scores). */
int hb_booster_sync_scores(hb_booster_t *b, int data);
/* The features tree `tree_id` may use into b->active (feature_fraction). */
int hb_booster_sample_features(hb_booster_t *b, uint64_t tree_id);
/* 1 when every leaf value of t is finite. */
int hb_booster_tree_finite(const hb_tree_t *t);
/* A tree that could not split keeps its root's output only where the root
 * is a leaf the limits allow (split_rules.h's hb_rule_lone_root_counts);
 * else its value becomes 0. For the learners, before a tree's values reach
 * the scores (the GPU's leaf value kernel applies the same rule). */
void hb_booster_lone_root(const hb_config_t *cfg, hb_tree_t *t);
/* Record why `what` went out of range in round `round` (1-based) of data
 * set `data` and return HB_ERR_INPUT (HB_OK without blame_rate when no
 * input is to blame). */
int hb_booster_overflow(const hb_booster_t *b, const char *what, int data, int round, int blame_rate);

/* The rows of leaf l (their count in *count): the CPU grower's partition,
 * or rows grouped by leaf (idx[begin[l] ..), count[l] of them). */
typedef struct {
  const hb_grow_ws_t *ws;             /* the CPU's, or NULL */
  const int *idx, *begin, *count;
} hb_leaf_rows_t;
/* l1, quantile, MAPE (HB_OBJ_RENEWS): tree t's leaves refit to `rate` x
 * the quantile of their rows' residuals at `score`. */
int hb_booster_renew_leaves(const hb_booster_t *b, const hb_leaf_rows_t *lr, hb_tree_t *t, const double *score,
                            double rate);
/* The same over the shards of a data-parallel training (b->dist set;
 * renew_dist.c): every process gets the one-process leaf values. */
int hb_booster_renew_leaves_dist(const hb_booster_t *b, const hb_leaf_rows_t *lr, hb_tree_t *t,
                                 const double *score, double rate);
/* Cox over the shards of a data-parallel training (cox_dist.c): the risk
 * sets span every process, so _setup gathers every shard's labels and
 * weights once and orders them by time, and _gradients gathers the scores
 * each round and computes the one-process gradients, keeping this shard's. */
int hb_booster_cox_setup_dist(hb_booster_t *b);
int hb_booster_cox_gradients_dist(hb_booster_t *b, const double *score);
/* Leaf l's rows (their count in *count). */
const int *hb_leaf_rows_of(const hb_leaf_rows_t *lr, int l, int *count);

/* DART around a round of a learner: begin drops this round's trees from
 * the training scores and gives the new trees' learning rate (*touched set
 * when scores changed); end normalizes after the new trees. The scores
 * change through the learner's add_tree (on the host without one). */
int hb_booster_dart_begin(hb_booster_t *b, double *rate, int *touched);
int hb_booster_dart_end(hb_booster_t *b, double rate);

/* Rows walked through a tree together (out of the bag, validation). */
#define HB_OOB_BLOCK 256

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
 * A failed check names the likeliest cause (hb_booster_overflow). */
/* HB_GRAD_SUM_MAX, HB_HESS_SUM_MAX and HB_LOG_LINK_MAX: objective_rules.h
 * (the GPU's checks use them too) */

#endif
