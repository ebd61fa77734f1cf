/* learner_cpu.c: the CPU learner behind the learner interface
 * (learner.h): a round's gradients on the host, the bag or GOSS's sample,
 * each tree grown by grow.c (quantized gradients where asked), l1 / quantile
 * leaves refit, and the training scores updated from the grower's partition
 * (out-of-bag and validation rows walked through the tree). DART's drops and
 * normalization (boost.c) wrap the round, since the scores live here on the
 * host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "learner.h"
#include "error.h"
#include "goss.h"
#include "grow.h"
#include "interrupt.h"
#include "objective.h"
#include "quantize.h"
#include "rank.h"
#include "rng.h"
#include "threads.h"

typedef struct {
  hb_grow_ws_t *ws;
  int *bag;                        /* in-bag rows (increasing), with bagging or goss; else NULL */
  int bag_n;
  uint8_t *in_bag;                 /* n flags, with bagging or goss */
  double *goss_scratch;            /* 2n doubles, with goss */
  int32_t *q;                      /* quantized training: a tree's packed row values */
  int prof_on;                     /* the profile's round timer (the trees' phases: grow.h) */
  double prof_round_s;
  int prof_rounds;
} cpu_learner_t;

static void cpu_free(void *state) {
  cpu_learner_t *c = state;
  if (!c) return;
  hb_grow_ws_free(c->ws);
  hb_free(c->bag);
  hb_free(c->in_bag);
  hb_free(c->goss_scratch);
  hb_free(c->q);
  hb_free(c);
}

/* In-bag rows for this round: a row is in when its draw for (seed, bagging
 * round, row) is below the fraction, so the bag is thread-independent. */
static void resample_bag(const hb_booster_t *b, cpu_learner_t *c) {
  uint64_t round = (uint64_t)(b->iter / b->cfg.bagging_freq);
  int n = b->n, m = 0;
  const uint64_t row0 = (uint64_t)b->train->row0;  /* draws by global row (dist.h) */
  for (int i = 0; i < n; i++) {
    int in = hb_rng_unif(b->cfg.seed, HB_RNG_BAGGING, round, row0 + (uint64_t)i) < b->cfg.bagging_fraction;
    c->in_bag[i] = (uint8_t)in;
    if (in) c->bag[m++] = i;
  }
  if (!hb_dist_any(b->dist, m > 0)) {   /* an empty bag cannot grow a tree: keep every row this round */
    for (int i = 0; i < n; i++) { c->in_bag[i] = 1; c->bag[i] = i; }
    m = n;
  }
  c->bag_n = m;
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

/* A score that means nothing: not finite, or beyond exp()'s range under a log link. */
static inline int score_bad(double s, double hi) { return !(s <= hi) || !isfinite(s); }

/* One round: the booster checked for an interrupt just before. */
static int round_body(hb_booster_t *b, void *state, hb_tree_t **tr, int *single) {
  cpu_learner_t *c = state;
  const hb_dataset_t *d = b->train;
  const hb_config_t *cfg = &b->cfg;
  int n = b->n, K = b->K, nth = hb_threads_use(cfg->nthreads), st = HB_OK;
  (void)nth;
  /* An interrupt (hb_interrupt_check, before the round and between the
   * trees and the splits of a tree) before the first score changes undoes
   * the round: what it changed is redrawn the same way next time (the bag
   * and GOSS's sample depend on the round only), and a custom objective's
   * gradients stay given. One after that leaves the booster broken. */
  const int custom_given = b->custom_set;
  int touched = 0;
  /* DART: this round's drops leave the training scores before the gradients */
  hb_config_t gcfg = *cfg;  /* what the trees grow with: DART shrinks them more */
  if (cfg->dart) st = hb_booster_dart_begin(b, &gcfg.learning_rate, &touched);
  if (st == HB_OK && HB_HOST_GRADIENTS(cfg)) st = hb_booster_host_gradients(b);
  /* data-parallel: a local failure so far is every process's, before the
   * first collective operation (hb_dist_agree) */
  if ((st = hb_dist_agree(b->dist, st, "to start the round")) != HB_OK) return st;
  /* the objective's gradients, where the host did not give them above */
  const double *from = cfg->rf ? b->base : b->score;  /* a forest's trees all start from the starting score */
  if (HB_HOST_GRADIENTS(cfg))
    ;
  else if (cfg->objective == HB_OBJ_COX) {  /* the risk sets need the rows in time order */
    if ((st = hb_booster_cox_gradients(b, from)) != HB_OK) return st;
  } else
    hb_objective_gradients(cfg, n, d->label, d->weight, from, b->gh, cfg->nthreads);
  if (hb_dist_any(b->dist, !gradients_in_range(b->gh, n, K, b->dist ? (double)d->nrow_global : (double)n,
                                                cfg->nthreads)))
    return hb_booster_overflow(b, "gradients", 0, b->iter + 1, 1);
  const double score_hi = HB_OBJ_LOG_LINK(cfg->objective) ? HB_LOG_LINK_MAX : HUGE_VAL;
  /* this round's rows: a bag, GOSS's sample (after 1 / learning_rate
   * rounds on every row, as LightGBM), or all */
  const int *bag = NULL;
  if (cfg->goss) {
    if ((double)b->iter >= floor(1.0 / cfg->learning_rate)) {
      if ((st = hb_goss_sample_dist(b->gh, n, K, cfg->top_rate, cfg->other_rate, cfg->seed, (uint64_t)b->iter,
                                    c->goss_scratch, c->bag, c->in_bag, cfg->nthreads, b->dist, d->row0,
                                    b->dist ? d->nrow_global : n, &c->bag_n)) != HB_OK)
        return st;
      bag = c->bag;
    }
  } else if (c->bag) {
    if (b->iter % cfg->bagging_freq == 0) resample_bag(b, c);
    bag = c->bag;
  }
  for (int k = 0; k < K; k++) {
    /* data-parallel: an interrupt, like a failure, is agreed on here (the
     * grower checks none between splits then: each process would see it at
     * a different split) */
    if (k > 0) st = hb_interrupt_check();
    if (st == HB_OK && !(tr[k] = hb_tree_create(cfg->num_leaves))) st = HB_ERR_NOMEM;
    if (st == HB_OK) st = hb_booster_sample_features(b, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k);
    if ((st = hb_dist_agree(b->dist, st, "to start a tree")) != HB_OK) break;
    hb_grow_ws_set_tree(c->ws, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k);
    double *ghk = b->gh + 2 * (size_t)k * n;
    /* exact sums: this tree's gradients on their grid, after GOSS scaled its sample */
    if (cfg->exact_sums && !cfg->quantized &&
        (st = hb_exact_sums_dist(n, ghk, cfg->nthreads, b->dist, b->dist ? d->nrow_global : n)) != HB_OK)
      break;
    hb_qtree_t qt;
    if (cfg->quantized &&
        (st = hb_quantize_tree_dist(cfg, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k, n, ghk, c->q, &qt,
                                    cfg->nthreads, b->dist, d->row0, b->dist ? d->nrow_global : n)) != HB_OK)
      break;
    st = hb_grow_tree(c->ws, &gcfg, d, ghk, cfg->quantized ? &qt : NULL, bag, c->bag_n, b->active, tr[k]);
    /* residuals from the score the gradients were taken at (a forest's: the starting score) */
    if (st == HB_OK && HB_OBJ_RENEWS(cfg->objective)) {
      const hb_leaf_rows_t lr = {c->ws, NULL, NULL, NULL};
      st = hb_booster_renew_leaves(b, &lr, tr[k], cfg->rf ? b->base : b->score, gcfg.learning_rate);
    }
    if (st != HB_OK) break;
    touched = 1;
    hb_tree_t *t = tr[k];
    hb_booster_lone_root(cfg, t);
    if (!hb_booster_tree_finite(t)) { st = hb_booster_overflow(b, "leaf values", 0, b->iter + 1, 1); break; }
    if (t->num_leaves == 1) (*single)++;
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
      const int *rows = hb_grow_leaf_rows(c->ws, leaf, &cnt);
      double v = t->leaf_value[leaf];
      for (int i = 0; i < cnt; i++) {
        add_tree(&sk[rows[i]], v, rf ? row_start(d, ik, k, rows[i]) : 0.0, inv_t, rf);
        bad |= score_bad(sk[rows[i]], score_hi);
      }
    }
    int nomem = 0;
    if (bag) {  /* rows out of the bag, in blocks of HB_OOB_BLOCK */
      hb_binnode_t *nd = hb_tree_binnodes(t, d);
      nomem = !nd;
      const int nblk = (n + HB_OOB_BLOCK - 1) / HB_OOB_BLOCK;
HB_OMP(parallel for num_threads(nth) schedule(static) reduction(| : bad))
      for (int q = 0; q < (nd ? nblk : 0); q++) {
        int rows[HB_OOB_BLOCK], leaf[HB_OOB_BLOCK], m = 0;
        const int hi = (q + 1) * HB_OOB_BLOCK < n ? (q + 1) * HB_OOB_BLOCK : n;
        for (int i = q * HB_OOB_BLOCK; i < hi; i++)
          if (!c->in_bag[i]) rows[m++] = i;
        hb_tree_leaves_binnodes(t, nd, d, rows, m, leaf);
        for (int r = 0; r < m; r++) {
          add_tree(&sk[rows[r]], t->leaf_value[leaf[r]], rf ? row_start(d, ik, k, rows[r]) : 0.0, inv_t, rf);
          bad |= score_bad(sk[rows[r]], score_hi);
        }
      }
      hb_free(nd);
    }
    if ((st = hb_dist_agree(b->dist, nomem ? HB_ERR_NOMEM : HB_OK, "to place rows out of the bag")) != HB_OK) break;
    if (hb_dist_any(b->dist, bad)) { st = hb_booster_overflow(b, "scores", 0, b->iter + 1, 1); break; }
    for (int v = 0; v < b->nvalid; v++) {
      const hb_dataset_t *vd = b->valid[v];
      double *vs = b->vscore[v] + (size_t)k * vd->nrow;
      int vn = vd->nrow;
      hb_binnode_t *nd = hb_tree_binnodes(t, vd);
      if ((st = hb_dist_agree(b->dist, nd ? HB_OK : HB_ERR_NOMEM, "to place validation rows")) != HB_OK) {
        hb_free(nd);
        break;
      }
      const int nblk = (vn + HB_OOB_BLOCK - 1) / HB_OOB_BLOCK;
      int vbad = 0;
HB_OMP(parallel for num_threads(nth) schedule(static) reduction(| : vbad))
      for (int q = 0; q < nblk; q++) {
        int rows[HB_OOB_BLOCK], leaf[HB_OOB_BLOCK], m = 0;
        const int hi = (q + 1) * HB_OOB_BLOCK < vn ? (q + 1) * HB_OOB_BLOCK : vn;
        for (int i = q * HB_OOB_BLOCK; i < hi; i++) rows[m++] = i;
        hb_tree_leaves_binnodes(t, nd, vd, rows, m, leaf);
        for (int r = 0; r < m; r++) {
          add_tree(&vs[rows[r]], t->leaf_value[leaf[r]], rf ? row_start(vd, ik, k, rows[r]) : 0.0, inv_t, rf);
          vbad |= score_bad(vs[rows[r]], score_hi);
        }
      }
      hb_free(nd);
      if (hb_dist_any(b->dist, vbad)) { st = hb_booster_overflow(b, "scores", v + 1, b->iter + 1, 1); break; }
    }
    if (st != HB_OK) break;
  }
  if (st == HB_OK && cfg->dart) st = hb_booster_dart_end(b, gcfg.learning_rate);
  if (st != HB_OK && st != HB_ERR_INTERRUPT && cfg->dart && b->dart.ndrop > 0) b->broken = 1;
  if (st == HB_ERR_INTERRUPT) {
    if (touched) b->broken = 1;
    else b->custom_set = custom_given;
  }
  return st;
}

static int cpu_round(hb_booster_t *b, void *state, hb_tree_t **tr, int *single) {
  cpu_learner_t *c = state;
  const double t0 = c->prof_on ? hb_threads_wtime() : 0.0;
  const int st = round_body(b, state, tr, single);
  if (c->prof_on) {
    c->prof_round_s += hb_threads_wtime() - t0;
    c->prof_rounds++;
  }
  return st;
}

/* The profile (boost.h): rounds and their trees' phases. */
static void cpu_profile(void *state, int on) {
  cpu_learner_t *c = state;
  c->prof_on = on != 0;
  c->prof_round_s = 0;
  c->prof_rounds = 0;
  hb_grow_ws_profile(c->ws, on);
}

static int cpu_get_profile(const void *state, double out[HB_PROFILE_N]) {
  const cpu_learner_t *c = state;
  double g[HB_GROW_PROFILE_N];
  hb_grow_ws_get_profile(c->ws, g);
  for (int k = 0; k < HB_PROFILE_N; k++) out[k] = 0.0;
  out[0] = 1000 * c->prof_round_s;
  out[1] = 1000 * g[0];  /* partition */
  out[2] = 1000 * g[1];  /* histograms */
  out[3] = 1000 * g[2];  /* split search */
  out[4] = 1000 * g[3];  /* the trees, whole */
  out[5] = g[4];         /* splits */
  out[6] = c->prof_rounds;
  for (int k = 0; k < HB_PROF_ROW_CLASSES; k++) {
    out[10 + k] = 1000 * g[5 + k];
    out[10 + HB_PROF_ROW_CLASSES + k] = g[5 + HB_PROF_ROW_CLASSES + k];
  }
  return 1;
}

/* The grower's workspace (with the monotone constraints), the bag and
 * GOSS's buffers, quantized training's row values. */
static int cpu_create(hb_booster_t *b, const int *monotone, void **state) {
  const hb_config_t *cfg = &b->cfg;
  const hb_dataset_t *train = b->train;
  int st = HB_OK;
  *state = NULL;
  cpu_learner_t *c = hb_calloc(1, sizeof *c);
  if (c && cfg->quantized) c->q = hb_malloc(sizeof(int32_t) * (size_t)b->n);
  if (!c || (cfg->quantized && !c->q)) {
    /* data-parallel: the others agree in hb_grow_ws_create before its first collective */
    st = hb_dist_agree(b->dist, hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster (%d rows)",
                                             train->nrow), "to create the booster");
    cpu_free(c);
    return st;
  }
  if (!(c->ws = hb_grow_ws_create(cfg, train))) {  /* its message says why */
    cpu_free(c);
    return HB_ERR_NOMEM;
  }
  if (monotone && (st = hb_grow_ws_set_monotone(c->ws, train, monotone)) != HB_OK) {
    cpu_free(c);
    return st;
  }
  if ((cfg->bagging_freq > 0 && cfg->bagging_fraction < 1.0) || cfg->goss) {
    c->bag = hb_malloc(sizeof(int) * (size_t)b->n);
    c->in_bag = hb_malloc((size_t)b->n);
    if (!c->bag || !c->in_bag) goto nomem;
    if (cfg->goss && !(c->goss_scratch = hb_malloc(sizeof(double) * 2 * (size_t)b->n))) goto nomem;
  }
  *state = c;
  return HB_OK;
nomem:
  cpu_free(c);
  return hb_error_set(HB_ERR_NOMEM, "out of memory creating the booster (%d rows)", train->nrow);
}

static int cpu_set_interactions(hb_booster_t *b, void *state, int ngroups, const int *begin, const int *cols) {
  cpu_learner_t *c = state;
  return hb_grow_ws_set_interactions(c->ws, b->train, ngroups, begin, cols);
}

const hb_learner_ops_t hb_learner_cpu = {
  "cpu",
  0,                  /* on_gpu */
  0,                  /* own_gradients: every gradient is computed here, in b->gh */
  NULL,               /* trains data-parallel */
  NULL,               /* takes every objective */
  cpu_create,
  cpu_free,
  NULL,               /* add_valid: the booster's host scores are all it needs */
  cpu_round,
  NULL,               /* sync_scores: the scores live on the host */
  NULL,               /* add_tree: DART changes the host's scores */
  cpu_set_interactions,
  cpu_profile,
  cpu_get_profile,
};
