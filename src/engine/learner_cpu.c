/* learner_cpu.c: the CPU learner behind the learner interface
 * (learner.h): a round's gradients on the host, the bag or GOSS's sample,
 * each tree grown by grow.c (quantized gradients where asked), l1 / quantile
 * leaves refit, and the training scores updated from the grower's partition
 * (out-of-bag and validation rows walked through the tree). DART's drops and
 * normalization (boost.c) wrap the round, since the scores live here on the
 * host. A multiclass round at many threads grows its class trees at once on
 * class workers (below). */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime() under -std=c11 */
#endif
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
#if defined(_OPENMP) && !defined(_WIN32)
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#define HB_CLASS_WORKERS 1
#else
#define HB_CLASS_WORKERS 0
#endif

typedef struct {
  hb_grow_ws_t *ws;
  int *bag;                        /* in-bag rows (increasing), with bagging or goss; else NULL */
  int bag_n;
  uint8_t *in_bag;                 /* n flags, with bagging or goss */
  double *goss_scratch;            /* 2n doubles, with goss */
  int32_t *q;                      /* quantized training: a tree's packed row values */
  /* Class workers (grow_classes_at_once): ngrow growers, each with its own
   * workspace gws[w] and quantized values gq[w] (gws[0] is ws, gq[0] q)
   * and gth[w] threads; ngrow 1: the classes' trees grow one after another.
   * act: each class's features of the round (K x nfeat); cst, ctouched:
   * each class's status and whether its scores changed. */
  int ngrow;
  hb_grow_ws_t **gws;
  int32_t **gq;
  int *gth;
  uint8_t *act;
  int *cst, *ctouched;
  char *cmsg;                      /* K x CW_MSG: each class's error message */
  int prof_on;                     /* the profile's round timer (the trees' phases: grow.h) */
  double prof_round_s;
  int prof_rounds;
} cpu_learner_t;

static void cpu_free(void *state) {
  cpu_learner_t *c = state;
  if (!c) return;
  for (int w = 1; w < c->ngrow; w++) {  /* first: they may read c->ws's row block (hb_grow_ws_create_beside) */
    if (c->gws) hb_grow_ws_free(c->gws[w]);
    if (c->gq) hb_free(c->gq[w]);
  }
  hb_grow_ws_free(c->ws);
  hb_free(c->bag);
  hb_free(c->in_bag);
  hb_free(c->goss_scratch);
  hb_free(c->q);
  hb_free(c->gws);
  hb_free(c->gq);
  hb_free(c->gth);
  hb_free(c->act);
  hb_free(c->cst);
  hb_free(c->ctouched);
  hb_free(c->cmsg);
  hb_free(c);
}

/* In-bag rows for this round: a row is in when its draw for (seed, bagging
 * round, row) is below the fraction (its class's under balanced bagging),
 * so the bag is thread-independent. */
static void resample_bag(const hb_booster_t *b, cpu_learner_t *c) {
  uint64_t round = (uint64_t)(b->iter / b->cfg.bagging_freq);
  int n = b->n, m = 0;
  const uint64_t row0 = (uint64_t)b->train->row0;  /* draws by global row (dist.h) */
  const double *label = b->train->label;
  const int balanced = hb_config_balanced_bagging(&b->cfg) && label;
  for (int i = 0; i < n; i++) {
    const double frac = hb_config_bag_fraction(&b->cfg, balanced, balanced ? label[i] : 0.0);
    int in = hb_rng_unif(b->cfg.seed, HB_RNG_BAGGING, round, row0 + (uint64_t)i) < frac;
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

/* A score that means nothing: not finite, or beyond exp()'s range under a log link. */
static inline int score_bad(double s, double hi) { return !(s <= hi) || !isfinite(s); }

/* Class k's tree of this round made, empty, in tr[k], and its features
 * drawn into b->active. */
static int class_start(hb_booster_t *b, int k, hb_tree_t **tr) {
  if (!(tr[k] = hb_tree_create(b->cfg.num_leaves))) return HB_ERR_NOMEM;
  return hb_booster_sample_features(b, (uint64_t)b->iter * (uint64_t)b->K + (uint64_t)k);
}

/* Class k's tree of this round, grown in ws (qbuf: its quantized values, or
 * NULL) from the features `active` with gcfg (its thread count included),
 * then its training and validation scores updated. *touched is set once a
 * score has changed. Called for every class in turn on the main thread,
 * or on the class workers below (one process, no refit of the leaves);
 * a score or leaf value that overflows returns hb_booster_overflow's error. */
static int grow_class(hb_booster_t *b, cpu_learner_t *c, hb_grow_ws_t *ws, int32_t *qbuf, const hb_config_t *gcfg,
                      int k, const int *bag, const uint8_t *active, hb_tree_t *t, int *touched) {
  const hb_dataset_t *d = b->train;
  const hb_config_t *cfg = &b->cfg;
  const int n = b->n, K = b->K, nth = hb_threads_use(gcfg->nthreads);
  int st = HB_OK;
  (void)nth;
  const double score_hi = HB_OBJ_LOG_LINK(cfg->objective) ? HB_LOG_LINK_MAX : HUGE_VAL;
  hb_grow_ws_set_tree(ws, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k);
  double *ghk = b->gh + 2 * (size_t)k * n;
  /* exact sums: this tree's gradients on their grid, after GOSS scaled its sample */
  if (cfg->exact_sums && !cfg->quantized &&
      (st = hb_exact_sums_dist(n, ghk, gcfg->nthreads, b->dist, b->dist ? d->nrow_global : n)) != HB_OK)
    return st;
  hb_qtree_t qt;
  if (cfg->quantized &&
      (st = hb_quantize_tree_dist(cfg, (uint64_t)b->iter * (uint64_t)K + (uint64_t)k, n, ghk, qbuf, &qt,
                                  gcfg->nthreads, b->dist, d->row0, b->dist ? d->nrow_global : n)) != HB_OK)
    return st;
  st = hb_grow_tree(ws, gcfg, d, ghk, cfg->quantized ? &qt : NULL, bag, c->bag_n, active, t);
  /* residuals from the score the gradients were taken at (a forest's: the starting score) */
  if (st == HB_OK && HB_OBJ_RENEWS(cfg->objective)) {
    const hb_leaf_rows_t lr = {ws, NULL, NULL, NULL};
    st = hb_booster_renew_leaves(b, &lr, t, cfg->rf ? b->base : b->score, gcfg->learning_rate);
  }
  if (st != HB_OK) return st;
  *touched = 1;
  hb_booster_lone_root(cfg, t);
  if (!hb_booster_tree_finite(t)) return hb_booster_overflow(b, "leaf values", 0, b->iter + 1, 1);
  double *sk = b->score + (size_t)k * n;
  /* a forest keeps each score the starting score plus the mean of its trees */
  const int rf = cfg->rf;
  const double ik = b->model->init_score[k], inv_t = 1.0 / (double)(b->iter + 1);
  /* in-bag rows: each row's leaf from the partition, in blocks of rows (each
   * block's leaves, then its scores in row order: the scores are read and
   * written once, in order, not leaf by leaf at scattered rows); out-of-bag
   * rows: walk the tree */
  const int nleaf = t->num_leaves, blk = hb_row_leaf_block(nleaf), nsb = (int)(((int64_t)n + blk - 1) / blk);
  const double *lv = t->leaf_value;
  int *leaf_of = hb_grow_ws_scratch(ws), bad = 0;
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1) reduction(| : bad) if (nsb > 1))
  for (int q = 0; q < nsb; q++) {
    const int r0 = q * blk, r1 = n - r0 > blk ? r0 + blk : n;
    hb_grow_row_leaves(ws, nleaf, r0, r1, leaf_of);
    for (int i = r0; i < r1; i++)
      if (leaf_of[i] >= 0) {
        add_tree(&sk[i], lv[leaf_of[i]], rf ? row_start(d, ik, k, i) : 0.0, inv_t, rf);
        bad |= score_bad(sk[i], score_hi);
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
  if ((st = hb_dist_agree(b->dist, nomem ? HB_ERR_NOMEM : HB_OK, "to place rows out of the bag")) != HB_OK) return st;
  if (hb_dist_any(b->dist, bad)) return hb_booster_overflow(b, "scores", 0, b->iter + 1, 1);
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
  return st;
}

/* ---- class workers: a round's class trees grown at once ----
 *
 * A multiclass round grows K independent trees. At many threads a tree's
 * splits gain little from the last threads (per split, the parallel
 * regions' start and barriers and the small leaves' short loops), so there
 * the trees grow at once instead, each on a share of the threads: every
 * worker is a POSIX thread running the grower with its own workspace and
 * its own OpenMP team (OpenMP's nested teams are made anew at each region
 * under libgomp: 160-890 us a region on the H200 host's 16 CPUs, against
 * 5.6 us for a team of the main thread's), taking the next class when it
 * finishes one. A tree is the same whatever its thread count, so the model
 * is the one the trees grown in turn make. The main thread meanwhile checks
 * for interrupts (interrupt.h), which the workers' growers see between
 * splits. */

/* The workers' plan: predicted time, in trees grown alone on all nth
 * threads, of K trees on g workers of nth / g threads: ceil(K / g) waves of
 * trees each g^CW_ALPHA times slower than alone, over CW_EFF (the
 * workers' contention for memory and each round's wait for its slowest
 * tree). Fitted on inst/bench/run.R's workload 3's generator (400k x 50,
 * 5 classes, 20 rounds) on the H200 host's 16-CPU Xeon
 * (threads-classes-h200host-2026-12-03.md): 11.3, 8.2, 6.2, 4.5 and 3.2 s
 * at 2, 3, 4, 8 and 16 threads alone (time ~ threads^-0.6), and five
 * workers at 12 and 16 threads 0.83 of the time of the trees grown in turn
 * (three workers at 8 threads, two waves: level). */
#define CW_ALPHA 0.6
#define CW_EFF 0.66
/* Workers run at least 2 threads each (the fit's range) and are used when
 * predicted to save 15% or more. */
#define CW_MIN_THREADS 2
#define CW_GAIN 0.85
/* Their workspaces (each a copy of the row block and a histogram pool) may
 * add at most this many bytes. */
#define CW_MAX_BYTES ((size_t)2 << 30)
/* At most this many workers; a class's error message at most CW_MSG bytes. */
#define CW_MAX_WORKERS 64
#define CW_MSG 1024

/* OMP_PROC_BIND or OMP_PLACES asks OpenMP to pin threads: the main thread
 * is then pinned to one CPU, and a worker made by it would inherit that one
 * CPU for its whole team. No workers then. */
static int binding_asked(void) {
  const char *b = getenv("OMP_PROC_BIND"), *p = getenv("OMP_PLACES");
  return (b && *b && strcmp(b, "false") && strcmp(b, "FALSE")) || (p && *p);
}

static int class_workers_plan(int K, int nth, size_t ws_bytes) {
  if (!HB_CLASS_WORKERS || K < 2 || binding_asked()) return 1;
  int best = 1;
  double best_t = CW_GAIN * K;
  for (int g = 2; g <= K && g <= CW_MAX_WORKERS && g * CW_MIN_THREADS <= nth; g++) {
    if ((size_t)(g - 1) * ws_bytes > CW_MAX_BYTES) break;
    const int waves = (K + g - 1) / g;
    const double t = waves * pow((double)g, CW_ALPHA) / CW_EFF;
    if (t < best_t) {
      best_t = t;
      best = g;
    }
  }
  return best;
}

#if HB_CLASS_WORKERS
typedef struct {
  hb_booster_t *b;
  cpu_learner_t *c;
  const hb_config_t *gcfg;
  const int *bag;
  hb_tree_t **tr;
  atomic_int next;    /* the next class to grow */
  atomic_int failed;  /* a class failed: the others stop starting */
  int capture;        /* run on workers: their messages go to c->cmsg */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;           /* workers finished (under mu) */
} class_job_t;

typedef struct {
  class_job_t *job;
  int w;
} class_arg_t;

/* Worker w's classes, until none is left or one failed. */
static void run_classes(class_job_t *j, int w) {
  cpu_learner_t *c = j->c;
  const int K = j->b->K, nf = j->b->train->nfeat;
  hb_config_t g = *j->gcfg;
  g.nthreads = c->gth[w];
  for (;;) {
    const int k = atomic_fetch_add(&j->next, 1);
    if (k >= K) break;
    if (atomic_load(&j->failed)) continue;  /* its status stays -1: not grown */
    if (j->capture) hb_error_capture(c->cmsg + (size_t)k * CW_MSG, CW_MSG);
    c->cst[k] = grow_class(j->b, c, c->gws[w], c->gq ? c->gq[w] : NULL, &g, k, j->bag, c->act + (size_t)k * nf,
                           j->tr[k], &c->ctouched[k]);
    if (j->capture) hb_error_capture(NULL, 0);
    if (c->cst[k] != HB_OK) atomic_store(&j->failed, 1);
  }
}

static void *class_worker(void *p) {
  class_arg_t *a = p;
  hb_interrupt_worker();
  run_classes(a->job, a->w);
  pthread_mutex_lock(&a->job->mu);
  a->job->done++;
  pthread_cond_signal(&a->job->cv);
  pthread_mutex_unlock(&a->job->mu);
  return NULL;
}
#endif

/* The round's K class trees on c->ngrow workers (one process, no refit of
 * the leaves): each class's features drawn first, in class order, on this
 * thread; then the workers; this thread checks for interrupts every 20 ms
 * until they end (once it has seen a yes, no more). Each worker's messages
 * go to its class's buffer; the status: the first failure in class order
 * other than an interrupt, with its class's message, else an interrupt's,
 * else HB_OK. */
static int grow_classes_at_once(hb_booster_t *b, cpu_learner_t *c, const hb_config_t *gcfg, const int *bag,
                                hb_tree_t **tr, int *single, int *touched) {
  const int K = b->K, nf = b->train->nfeat;
  int st = HB_OK;
  for (int k = 0; k < K; k++) {
    c->cst[k] = -1;
    c->ctouched[k] = 0;
    if ((st = class_start(b, k, tr)) != HB_OK) return st;
    memcpy(c->act + (size_t)k * nf, b->active, (size_t)nf);
  }
#if HB_CLASS_WORKERS
  class_job_t job;
  job.b = b;
  job.c = c;
  job.gcfg = gcfg;
  job.bag = bag;
  job.tr = tr;
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  job.done = 0;
  job.capture = 1;
  class_arg_t arg[CW_MAX_WORKERS];
  pthread_t th[CW_MAX_WORKERS];
  int started = 0, seen = 0;
  const int G = c->ngrow < CW_MAX_WORKERS ? c->ngrow : CW_MAX_WORKERS;
  if (pthread_mutex_init(&job.mu, NULL) == 0) {
    if (pthread_cond_init(&job.cv, NULL) == 0) {
      pthread_attr_t attr;
      const int attr_ok = pthread_attr_init(&attr) == 0;
      if (attr_ok) pthread_attr_setstacksize(&attr, (size_t)8 << 20);
      for (int w = 0; w < G; w++) {
        arg[w].job = &job;
        arg[w].w = w;
        if (pthread_create(&th[w], attr_ok ? &attr : NULL, class_worker, &arg[w]) != 0) break;
        started++;
      }
      if (attr_ok) pthread_attr_destroy(&attr);
      pthread_mutex_lock(&job.mu);
      while (job.done < started) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000L;
        if (ts.tv_nsec >= 1000000000L) {
          ts.tv_sec++;
          ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&job.cv, &job.mu, &ts);
        pthread_mutex_unlock(&job.mu);
        if (!seen) seen = hb_interrupt_check() == HB_ERR_INTERRUPT;  /* a yes reaches the workers' checks */
        pthread_mutex_lock(&job.mu);
      }
      pthread_mutex_unlock(&job.mu);
      for (int w = 0; w < started; w++) pthread_join(th[w], NULL);
      pthread_cond_destroy(&job.cv);
    }
    pthread_mutex_destroy(&job.mu);
  }
  if (started == 0) {  /* no thread could start: this one grows them all, its messages its own */
    job.capture = 0;
    run_classes(&job, 0);
  }
#else
  (void)gcfg;
  (void)bag;
#endif
  int first = -1, intr = 0, ungrown = 0;
  for (int k = 0; k < K; k++) {
    if (c->ctouched[k]) *touched = 1;
    if (c->cst[k] == HB_ERR_INTERRUPT) intr = 1;
    else if (c->cst[k] == -1) ungrown = 1;
    else if (c->cst[k] != HB_OK && first < 0) first = k;
    if (c->cst[k] == HB_OK && tr[k]->num_leaves == 1) (*single)++;
  }
  if (first >= 0) {
#if HB_CLASS_WORKERS
    if (job.capture) return hb_error_set(c->cst[first], "%s", c->cmsg + (size_t)first * CW_MSG);
#endif
    return c->cst[first];
  }
  if (intr) return hb_error_set(HB_ERR_INTERRUPT, "interrupted");
  if (ungrown) return hb_error_set(HB_ERR_INTERNAL, "a class's tree of round %d was not grown", b->iter + 1);
  return HB_OK;
}

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
  if (hb_dist_any(b->dist, !hb_objective_gradients_in_range(b->gh, n, K, b->dist ? (double)d->nrow_global : (double)n,
                                                cfg->nthreads)))
    return hb_booster_overflow(b, "gradients", 0, b->iter + 1, 1);
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
  if (c->ngrow > 1 && !b->dist && !HB_OBJ_RENEWS(cfg->objective)) {
    st = grow_classes_at_once(b, c, &gcfg, bag, tr, single, &touched);
  } else {
    for (int k = 0; k < K; k++) {
      /* data-parallel: an interrupt, like a failure, is agreed on here (the
       * grower checks none between splits then: each process would see it at
       * a different split) */
      if (k > 0) st = hb_interrupt_check();
      if (st == HB_OK) st = class_start(b, k, tr);
      if ((st = hb_dist_agree(b->dist, st, "to start a tree")) != HB_OK) break;
      if ((st = grow_class(b, c, c->ws, c->q, &gcfg, k, bag, b->active, tr[k], &touched)) != HB_OK) break;
      if (tr[k]->num_leaves == 1) (*single)++;
    }
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
  for (int w = 1; w < c->ngrow; w++) hb_grow_ws_profile(c->gws[w], on);
}

static int cpu_get_profile(const void *state, double out[HB_PROFILE_N]) {
  const cpu_learner_t *c = state;
  double g[HB_GROW_PROFILE_N], gw[HB_GROW_PROFILE_N];
  hb_grow_ws_get_profile(c->ws, g);
  for (int w = 1; w < c->ngrow; w++) {  /* class workers: summed over them */
    hb_grow_ws_get_profile(c->gws[w], gw);
    for (int k = 0; k < HB_GROW_PROFILE_N; k++) g[k] += gw[k];
  }
  for (int k = 0; k < HB_PROFILE_N; k++) out[k] = 0.0;
  out[0] = 1000 * c->prof_round_s;
  out[1] = 1000 * g[0];  /* partition */
  out[2] = 1000 * g[1];  /* histograms */
  out[3] = 1000 * g[2];  /* split search */
  out[4] = 1000 * g[3];  /* the trees, whole */
  out[5] = g[4];         /* splits */
  out[6] = c->prof_rounds;
  out[7] = c->ngrow;     /* class trees grown at once */
  double wb = 0.0;       /* the bytes the workers beyond the first hold, pools full */
  for (int w = 1; w < c->ngrow; w++) wb += (double)hb_grow_ws_bytes(c->gws[w]);
  out[8] = wb;
  for (int k = 0; k < HB_PROF_ROW_CLASSES; k++) {
    out[10 + k] = 1000 * g[5 + k];
    out[10 + HB_PROF_ROW_CLASSES + k] = g[5 + HB_PROF_ROW_CLASSES + k];
  }
  return 1;
}

/* The class workers' state for G workers (class_workers_plan): their
 * thread shares (nth / G, the first nth % G one more), workspaces made as
 * c->ws (the same configuration and monotone constraints), quantized
 * values, and the per-class arrays. HB_OK or HB_ERR_NOMEM; what was made
 * stays in c for cpu_free. */
static int make_class_workers(hb_booster_t *b, cpu_learner_t *c, const int *monotone, int G) {
  const hb_config_t *cfg = &b->cfg;
  const int nth = hb_threads_use(cfg->nthreads), K = b->K;
  int st = HB_OK;
  c->gws = hb_calloc((size_t)G, sizeof *c->gws);
  c->gth = hb_calloc((size_t)G, sizeof *c->gth);
  c->act = hb_malloc((size_t)K * (size_t)b->train->nfeat);
  c->cst = hb_calloc((size_t)K, sizeof *c->cst);
  c->ctouched = hb_calloc((size_t)K, sizeof *c->ctouched);
  c->cmsg = hb_calloc((size_t)K, CW_MSG);
  if (cfg->quantized) c->gq = hb_calloc((size_t)G, sizeof *c->gq);
  if (!c->gws || !c->gth || !c->act || !c->cst || !c->ctouched || !c->cmsg || (cfg->quantized && !c->gq))
    return HB_ERR_NOMEM;
  c->ngrow = G;
  c->gws[0] = c->ws;
  if (c->gq) c->gq[0] = c->q;
  for (int w = 0; w < G; w++) c->gth[w] = nth / G + (w < nth % G);
  for (int w = 1; w < G; w++) {
    hb_config_t wc = *cfg;
    wc.nthreads = c->gth[w];
    if (!(c->gws[w] = hb_grow_ws_create_beside(&wc, b->train, c->ws))) return HB_ERR_NOMEM;
    if (monotone && (st = hb_grow_ws_set_monotone(c->gws[w], b->train, monotone)) != HB_OK) return st;
    if (c->gq && !(c->gq[w] = hb_malloc(sizeof(int32_t) * (size_t)b->n))) return HB_ERR_NOMEM;
  }
  return HB_OK;
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
  c->ngrow = 1;
  int G = b->dist || HB_OBJ_RENEWS(cfg->objective)
              ? 1
              : class_workers_plan(b->K, hb_threads_use(cfg->nthreads), hb_grow_ws_bytes(c->ws));
#ifdef HB_TEST_HOOKS
  /* the tests' way to the workers on a machine of few cores, and the
   * benchmarks' to any count of them (1: none) */
  const char *force = getenv("HISTBOOST_TEST_CLASS_WORKERS");
  if (force && atoi(force) > 0 && HB_CLASS_WORKERS && !b->dist && !HB_OBJ_RENEWS(cfg->objective)) {
    const int nth = hb_threads_use(cfg->nthreads);
    G = atoi(force) < b->K ? atoi(force) : b->K;
    if (G > nth) G = nth;
    if (G > CW_MAX_WORKERS) G = CW_MAX_WORKERS;
  }
#endif
  if (G > 1 && (st = make_class_workers(b, c, monotone, G)) != HB_OK) {
    cpu_free(c);
    return st;
  }
  if (hb_config_bagging(cfg) || cfg->goss) {
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
  int st = hb_grow_ws_set_interactions(c->ws, b->train, ngroups, begin, cols);
  for (int w = 1; w < c->ngrow && st == HB_OK; w++)
    st = hb_grow_ws_set_interactions(c->gws[w], b->train, ngroups, begin, cols);
  return st;
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
