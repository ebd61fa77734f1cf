/* test_learner.c: engine tests of the CPU learner: histograms against naive
 * sums, subtraction, dense vs sparse storage, thread independence of whole
 * models, and that every row lands in the leaf its bins lead to. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boost.h"
#include "dataset.h"
#include "error.h"
#include "grow.h"
#include "hist.h"
#include "model.h"
#include "predict.h"
#include "rng.h"
#include "split.h"
#include "split_rules.h"
#include "test_engine.h"

static int npass = 0, nfail = 0;
#define CHECK(cond, ...) do { if (cond) npass++; else { nfail++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { N = 3000, P = 6 };

/* Columns: 0 numeric with NaN, 1 few distinct ints, 2 mostly zero (sparse),
 * 3 factor with 7 levels and NA, 4 constant, 5 uniform. */
static double xd[P][N];
static int xf[N];
static double y[N];

static void make_data(void) {
  for (int i = 0; i < N; i++) {
    double u = hb_rng_unif(1, 9, 0, i), v = hb_rng_unif(1, 9, 1, i), w = hb_rng_unif(1, 9, 2, i);
    xd[0][i] = u < 0.1 ? NAN : u * 10;
    xd[1][i] = floor(v * 5);
    xd[2][i] = w < 0.9 ? 0.0 : w;
    xf[i] = (i % 13 == 0) ? HB_NA_INT : 1 + (int)(hb_rng_unif(1, 9, 3, i) * 7);
    xd[4][i] = 3.0;
    xd[5][i] = hb_rng_unif(1, 9, 5, i);
    y[i] = (isnan(xd[0][i]) ? 2 : xd[0][i] / 3) + xd[1][i] + (xf[i] == HB_NA_INT ? 0 : xf[i] % 3) +
           5 * xd[2][i] + 0.1 * hb_rng_unif(1, 9, 6, i);
  }
}

/* The data's columns: five numeric, the fourth a factor of 7 levels. */
static void make_columns(hb_column_t *cols) {
  for (int f = 0; f < P; f++) {
    cols[f].type = HB_COL_DOUBLE; cols[f].dbl = xd[f]; cols[f].i32 = NULL; cols[f].nlevels = 0;
  }
  cols[3].type = HB_COL_FACTOR; cols[3].dbl = NULL; cols[3].i32 = xf; cols[3].nlevels = 7;
}

/* Their names, types and levels (static storage: the schema borrows it). */
static void make_schema(hb_schema_t *sc) {
  static char *names[P] = { "a", "b", "c", "d", "e", "f" };
  static int types[P] = { 0, 0, 0, 1, 0, 0 }, nlev[P] = { 0, 0, 0, 7, 0, 0 };
  static char *lv[7] = { "l1", "l2", "l3", "l4", "l5", "l6", "l7" };
  static char **levels[P] = { NULL, NULL, NULL, lv, NULL, NULL };
  hb_schema_init(sc);
  sc->nfeat = P;
  sc->names = names; sc->types = types; sc->nlevels = nlev; sc->levels = levels;
}

static hb_dataset_t *make_dataset(int nthreads) {
  hb_column_t cols[P];
  make_columns(cols);
  hb_input_t in = { N, P, cols, NULL, y, NULL, NULL, 0 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 63;
  bp.nthreads = nthreads;
  hb_dataset_t *d = NULL;
  int st = hb_dataset_create(&in, &bp, NULL, &d);
  if (st != HB_OK) printf("dataset: %s\n", hb_error_message());
  return d;
}

static void test_hist(hb_dataset_t *d) {
  double g[N], h[N];
  for (int i = 0; i < N; i++) { g[i] = hb_rng_unif(2, 1, 0, i) - 0.5; h[i] = 0.1 + hb_rng_unif(2, 1, 1, i); }
  /* a subset of rows, increasing */
  int rows[N], m = 0;
  double gh[2 * N], G = 0, H = 0;
  for (int i = 0; i < N; i++) { gh[2 * i] = g[i]; gh[2 * i + 1] = h[i]; }
  for (int i = 0; i < N; i++)
    if (hb_rng_unif(2, 2, 0, i) < 0.3) { rows[m] = i; G += g[i]; H += h[i]; m++; }
  hb_histbin_t *hist = calloc((size_t)d->total_bins, sizeof *hist);
  hb_histbin_t *full = calloc((size_t)d->total_bins, sizeof *full);
  hb_histbin_t *naive = calloc((size_t)d->total_bins, sizeof *naive);
  hb_hist_build(d, NULL, rows, m, gh, G, H, NULL, hist, 2);
  for (int k = 0; k < m; k++)
    for (int f = 0; f < d->nfeat; f++) {
      hb_histbin_t *b = naive + d->hist_offset[f] + test_dataset_bin(d, f, rows[k]);
      b->g += g[rows[k]]; b->h += h[rows[k]];
    }
  double maxerr = 0;
  for (int k = 0; k < d->total_bins; k++)
    maxerr = fmax(maxerr, fabs(hist[k].g - naive[k].g) + fabs(hist[k].h - naive[k].h));
  CHECK(maxerr < 1e-9, "subset histogram differs from naive sums (g/h err %g)", maxerr);
  CHECK(d->store[2].sparse == 1, "mostly-zero feature should be stored sparse");
  /* whole-data histogram minus the subset equals the complement's naive sums */
  double GA = 0, HA = 0;
  for (int i = 0; i < N; i++) { GA += g[i]; HA += h[i]; }
  hb_hist_build(d, NULL, NULL, N, gh, GA, HA, NULL, full, 1);
  test_hist_subtract(d, NULL, full, hist);
  memset(naive, 0, sizeof(hb_histbin_t) * (size_t)d->total_bins);
  for (int i = 0, k = 0; i < N; i++) {
    if (k < m && rows[k] == i) { k++; continue; }
    for (int f = 0; f < d->nfeat; f++) {
      hb_histbin_t *b = naive + d->hist_offset[f] + test_dataset_bin(d, f, i);
      b->g += g[i]; b->h += h[i];
    }
  }
  maxerr = 0;
  for (int k = 0; k < d->total_bins; k++)
    maxerr = fmax(maxerr, fabs(full[k].g - naive[k].g) + fabs(full[k].h - naive[k].h));
  CHECK(maxerr < 1e-9, "subtracted histogram differs from the complement (err %g)", maxerr);
  free(hist); free(full); free(naive);
}

static hb_model_t *train(hb_dataset_t *d, int nthreads, int bagging, int rounds) {
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 15;
  cfg.min_data_in_leaf = 5;
  cfg.nthreads = nthreads;
  cfg.seed = 42;
  cfg.min_data_per_group = 10;
  if (bagging) { cfg.bagging_fraction = 0.7; cfg.bagging_freq = 1; cfg.feature_fraction = 0.6; }
  hb_schema_t sc;
  make_schema(&sc);
  hb_booster_t *b = NULL;
  if (hb_booster_create(&cfg, d, &sc, &b) != HB_OK) { printf("booster: %s\n", hb_error_message()); return NULL; }
  double prev = INFINITY;
  int rising = 0;
  for (int r = 0; r < rounds; r++) {
    int fin;
    if (hb_booster_update(b, &fin) != HB_OK) { printf("update: %s\n", hb_error_message()); break; }
    double rmse;
    hb_booster_eval_at(b, 0, 0, 0, &rmse);
    if (!bagging && rmse > prev + 1e-12) rising++;
    prev = rmse;
  }
  CHECK(rising == 0, "training rmse rose %d times", rising);
  /* every training row's score is init + the leaves its bins lead to, out-of-bag rows included */
  int nrow;
  const double *strain = hb_booster_scores(b, 0, &nrow);
  hb_model_t *m = hb_booster_model(b);
  double maxerr = 0;
  for (int i = 0; i < nrow; i++) {
    double s = m->init_score[0];
    for (int t = 0; t < m->num_trees; t++) s += m->trees[t]->leaf_value[hb_tree_leaf_binned(m->trees[t], d, i)];
    maxerr = fmax(maxerr, fabs(s - strain[i]));
  }
  CHECK(nrow == N && maxerr < 1e-9, "training scores differ from tree walks by %g (bagging %d)", maxerr, bagging);
  m = hb_booster_release_model(b);
  hb_booster_free(b);
  return m;
}

static int same_model(const hb_model_t *a, const hb_model_t *b) {
  if (a->num_trees != b->num_trees) return 0;
  for (int t = 0; t < a->num_trees; t++) {
    const hb_tree_t *x = a->trees[t], *y2 = b->trees[t];
    if (x->num_leaves != y2->num_leaves) return 0;
    for (int k = 0; k < x->num_leaves - 1; k++)
      if (x->split_feature[k] != y2->split_feature[k] || x->threshold_bin[k] != y2->threshold_bin[k] ||
          x->split_gain[k] != y2->split_gain[k] || x->decision[k] != y2->decision[k]) return 0;
    for (int l = 0; l < x->num_leaves; l++)
      if (x->leaf_value[l] != y2->leaf_value[l] || x->leaf_count[l] != y2->leaf_count[l]) return 0;
  }
  return 1;
}

static void test_models(hb_dataset_t *d) {
  for (int bag = 0; bag < 2; bag++) {
    hb_model_t *m1 = train(d, 1, bag, 20), *m2 = train(d, 2, bag, 20);
    CHECK(m1 && m2 && same_model(m1, m2), "1 and 2 threads grew different models (bagging %d)", bag);
    if (m1) {
      /* leaf counts of every tree add up to the rows it was grown on */
      int ok = 1;
      for (int t = 0; t < m1->num_trees; t++) {
        long s = 0;
        for (int l = 0; l < m1->trees[t]->num_leaves; l++) s += m1->trees[t]->leaf_count[l];
        if (!bag && s != N) ok = 0;
        /* each internal node's count is its children's */
        const hb_tree_t *tr = m1->trees[t];
        for (int k = 0; k < tr->num_leaves - 1; k++) {
          int cl = tr->left[k] >= 0 ? tr->internal_count[tr->left[k]] : tr->leaf_count[~tr->left[k]];
          int cr = tr->right[k] >= 0 ? tr->internal_count[tr->right[k]] : tr->leaf_count[~tr->right[k]];
          if (cl + cr != tr->internal_count[k]) ok = 0;
        }
      }
      CHECK(ok, "leaf/node counts inconsistent (bagging %d)", bag);
      CHECK(m1->num_trees == 20 && m1->trees[0]->num_leaves == 15, "expected 20 trees of 15 leaves, got %d / %d",
            m1->num_trees, m1->num_trees ? m1->trees[0]->num_leaves : 0);
    }
    hb_model_free(m1);
    hb_model_free(m2);
  }
}

/* hb_split_gains (batched, SSE2 when l1 is 0) equals hb_rule_split_gain
 * bit for bit, candidate by candidate: random sums around the constraints'
 * edges (min data, min hessian, a zero or negative denominator), odd and
 * even batch lengths, l1 zero and positive. */
static void test_gains(void) {
  enum { M = 255 };
  double gl[M], hl[M], out[M];
  int nl[M], bad = 0, valid = 0;
  for (int rep = 0; rep < 400; rep++) {
    hb_config_t cfg;
    hb_config_default(&cfg);
    cfg.min_data_in_leaf = 1 + rep % 30;
    cfg.min_sum_hessian_in_leaf = rep % 3 == 0 ? 0.0 : 0.5 * hb_rng_unif(5, 1, rep, 0);
    cfg.lambda_l1 = rep % 4 == 3 ? hb_rng_unif(5, 2, rep, 0) : 0.0;
    double l2 = rep % 5 == 0 ? 0.0 : hb_rng_unif(5, 3, rep, 0) * 2;
    double G = hb_rng_unif(5, 4, rep, 0) * 40 - 20, H = 1 + hb_rng_unif(5, 5, rep, 0) * 50;
    int n = 50 + rep, m = 1 + rep % M;
    double parent = hb_rule_leaf_gain(G, H, cfg.lambda_l1, l2), min_gain = rep % 7 == 0 ? 0.3 : 0.0;
    for (int t = 0; t < m; t++) {
      gl[t] = hb_rng_unif(5, 6, rep, t) * 2 * fabs(G) - fabs(G);
      hl[t] = hb_rng_unif(5, 7, rep, t) * H * 1.1 - 0.05 * H - (t % 17 == 0 ? l2 : 0);  /* some den <= 0 */
      nl[t] = (int)(hb_rng_unif(5, 8, rep, t) * (n + 1));
    }
    hb_split_gains(&cfg, gl, hl, nl, m, G, H, n, l2, parent, min_gain, out);
    for (int t = 0; t < m; t++) {
      double want = hb_rule_split_gain(gl[t], hl[t], nl[t], G, H, n, cfg.lambda_l1, l2, parent, cfg.min_data_in_leaf,
                                       cfg.min_sum_hessian_in_leaf, min_gain);
      bad += memcmp(&want, &out[t], sizeof want) != 0;
      valid += want > 0;
    }
  }
  CHECK(bad == 0, "batched split gains differ from split_rules.h in %d candidates", bad);
  CHECK(valid > 1000, "the gain test exercised too few valid candidates (%d)", valid);
}

/* hb_cat_sort gives the order of a qsort by (key, bin): lengths 0 to 256,
 * keys with many ties (so the bin decides), negative zeros, infinities,
 * bins in random order. */
static int cat_cmp(const void *a, const void *b) {
  const hb_cat_key_t *ka = a, *kb = b;
  if (ka->key < kb->key) return -1;
  if (ka->key > kb->key) return 1;
  return (ka->bin > kb->bin) - (ka->bin < kb->bin);
}

static void test_cat_sort(void) {
  hb_cat_key_t a[HB_MAX_NUM_BIN], b[HB_MAX_NUM_BIN];
  int bad = 0;
  for (int rep = 0; rep < 2000; rep++) {
    int n = rep % (HB_MAX_NUM_BIN + 1), ndistinct = 1 + rep % 40;
    for (int i = 0; i < n; i++) {   /* distinct bins, shuffled */
      int j = (int)(hb_rng_unif(7, 1, rep, i) * (i + 1));
      a[i] = a[j];
      a[j].bin = i;
      double u = floor(hb_rng_unif(7, 2, rep, i) * ndistinct) - ndistinct / 2;
      a[j].key = rep % 3 == 0 ? u / 7 : u == 0 && i % 2 ? -0.0 : u == 1 && rep % 5 == 1 ? INFINITY : u;
    }
    memcpy(b, a, sizeof(hb_cat_key_t) * (size_t)n);
    hb_cat_sort(a, n);
    qsort(b, (size_t)n, sizeof(hb_cat_key_t), cat_cmp);
    for (int i = 0; i < n; i++) bad += a[i].bin != b[i].bin || memcmp(&a[i].key, &b[i].key, sizeof(double)) != 0;
  }
  CHECK(bad == 0, "hb_cat_sort differs from qsort by (key, bin) in %d places", bad);
}

/* Quantized training with more features than half the leaves: the split
 * search's integer scratch (two sums per feature after one per leaf) once
 * overran its buffer here (num_leaves 31, 30 features); ASan and valgrind
 * see any write past it. Models grown with 1 and 2 threads must agree. */
enum { QN = 1500, QP = 40 };
static hb_model_t *train_quant_wide(hb_dataset_t *d, int nthreads) {
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 31;
  cfg.min_data_in_leaf = 5;
  cfg.nthreads = nthreads;
  cfg.seed = 3;
  cfg.quantized = 1;
  hb_schema_t sc;
  hb_schema_init(&sc);
  sc.nfeat = QP;
  char *names[QP], buf[QP][16];
  int types[QP], nlev[QP];
  char **levels[QP];
  for (int f = 0; f < QP; f++) {
    snprintf(buf[f], sizeof buf[f], "q%d", f);
    names[f] = buf[f]; types[f] = 0; nlev[f] = 0; levels[f] = NULL;
  }
  sc.names = names; sc.types = types; sc.nlevels = nlev; sc.levels = levels;
  hb_booster_t *b = NULL;
  if (hb_booster_create(&cfg, d, &sc, &b) != HB_OK) { printf("booster: %s\n", hb_error_message()); return NULL; }
  for (int r = 0; r < 3; r++) {
    int fin;
    if (hb_booster_update(b, &fin) != HB_OK) { printf("update: %s\n", hb_error_message()); break; }
  }
  hb_model_t *m = hb_booster_release_model(b);
  hb_booster_free(b);
  return m;
}

static void test_quant_wide(void) {
  static double qx[QP][QN], qy[QN];
  hb_column_t cols[QP];
  for (int i = 0; i < QN; i++) qy[i] = 0;
  for (int f = 0; f < QP; f++) {
    for (int i = 0; i < QN; i++) {
      qx[f][i] = hb_rng_unif(5, 1, (uint64_t)f, (uint64_t)i);
      if (f < 8) qy[i] += (f + 1) * (qx[f][i] > 0.5);
    }
    cols[f].type = HB_COL_DOUBLE; cols[f].dbl = qx[f]; cols[f].i32 = NULL; cols[f].nlevels = 0;
  }
  hb_input_t in = { QN, QP, cols, NULL, qy, NULL, NULL, 0 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_dataset_t *d = NULL;
  if (hb_dataset_create(&in, &bp, NULL, &d) != HB_OK) { CHECK(0, "dataset: %s", hb_error_message()); return; }
  hb_model_t *m1 = train_quant_wide(d, 1), *m2 = train_quant_wide(d, 2);
  CHECK(m1 && m2 && same_model(m1, m2), "quantized, 40 features: 1 and 2 threads grew different models");
  CHECK(m1 && m1->num_trees == 3 && m1->trees[0]->num_leaves == 31, "quantized, 40 features: expected 3 trees of 31 leaves");
  hb_model_free(m1);
  hb_model_free(m2);
  hb_dataset_free(d);
}

/* Per-row starting scores (init_score): the model's own starting score is
 * 0, every training row's score is its offset plus its leaves (a forest:
 * plus their mean), out-of-bag rows included, hb_predict() adds the offsets
 * it is given, and mismatched or non-finite offsets are refused. */
static void test_init_score(void) {
  static double off[N];
  for (int i = 0; i < N; i++) off[i] = 3 * sin(0.37 * i);
  hb_column_t cols[P];
  make_columns(cols);
  hb_input_t in = { N, P, cols, NULL, y, NULL, off, 1 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.nthreads = 2;
  hb_dataset_t *d = NULL;
  int st = hb_dataset_create(&in, &bp, NULL, &d);
  CHECK(st == HB_OK && d->init_score && d->init_score_ncol == 1 && d->init_score[5] == off[5],
        "dataset keeps init_score: %s", hb_error_message());
  if (st != HB_OK) return;
  hb_schema_t sc;
  make_schema(&sc);
  for (int rf = 0; rf < 2; rf++) {
    hb_config_t cfg;
    hb_config_default(&cfg);
    cfg.num_leaves = 7; cfg.nthreads = 2; cfg.seed = 3; cfg.rf = rf;
    cfg.bagging_fraction = 0.6; cfg.bagging_freq = 1; cfg.feature_fraction = 0.8;
    hb_booster_t *b = NULL;
    if (hb_booster_create(&cfg, d, &sc, &b) != HB_OK) { CHECK(0, "booster: %s", hb_error_message()); break; }
    int fin, ok = 1;
    for (int r = 0; r < 4 && ok; r++) ok = hb_booster_update(b, &fin) == HB_OK;
    CHECK(ok, "update with init_score: %s", hb_error_message());
    int nrow;
    const double *sc0 = hb_booster_scores(b, 0, &nrow);
    hb_model_t *m = hb_booster_model(b);
    double err = 0;
    for (int i = 0; i < nrow; i++) {
      double s = 0;
      for (int t = 0; t < m->num_trees; t++) s += m->trees[t]->leaf_value[hb_tree_leaf_binned(m->trees[t], d, i)];
      if (rf) s /= m->num_trees;
      err = fmax(err, fabs(off[i] + s - sc0[i]));
    }
    CHECK(m->init_score[0] == 0.0 && m->num_trees == 4 && err < 1e-9,
          "scores are offset + trees (rf %d): init %g, err %g", rf, m->init_score[0], err);
    /* a boosted model brings a late validation set up to date with its trees' sum;
     * a forest, whose scores are their mean, takes its sets before the first round */
    int vst = hb_booster_add_valid(b, d);
    CHECK(rf ? vst == HB_ERR_STATE && strstr(hb_error_message(), "before its first round") : vst == HB_OK,
          "a validation set after 4 rounds (rf %d): %d %s", rf, vst, hb_error_message());
    double *pr = malloc(sizeof(double) * N), *p0 = malloc(sizeof(double) * N);
    hb_input_t pin = { N, P, cols, NULL, NULL, NULL, off, 1 }, pin0 = { N, P, cols, NULL, NULL, NULL, NULL, 0 };
    CHECK(hb_predict(m, &pin, 0, 0, HB_PRED_RAW, 2, pr) == HB_OK &&
              hb_predict(m, &pin0, 0, 0, HB_PRED_RAW, 2, p0) == HB_OK,
          "predict with init_score");
    double e1 = 0, e2 = 0;
    for (int i = 0; i < N; i++) { e1 = fmax(e1, fabs(pr[i] - sc0[i])); e2 = fmax(e2, fabs(pr[i] - p0[i] - off[i])); }
    CHECK(e1 < 1e-9 && e2 < 1e-12, "predict adds the offsets (rf %d): %g %g", rf, e1, e2);
    CHECK(hb_predict(m, &pin, 0, 0, HB_PRED_LEAF, 2, pr) == HB_ERR_INPUT, "leaf prediction refuses offsets");
    pin.init_score_ncol = 2;
    CHECK(hb_predict(m, &pin, 0, 0, HB_PRED_RAW, 2, pr) == HB_ERR_INPUT, "predict refuses 2 offset columns");
    free(pr);
    free(p0);
    hb_booster_free(b);
  }
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.objective = HB_OBJ_MULTICLASS; cfg.num_class = 3;
  for (int i = 0; i < N; i++) y[i] = i % 3;
  hb_dataset_t *d3 = NULL;
  hb_booster_t *b = NULL;
  CHECK(hb_dataset_create(&in, &bp, NULL, &d3) == HB_OK &&
            hb_booster_create(&cfg, d3, &sc, &b) == HB_ERR_INPUT && !b &&
            strstr(hb_error_message(), "init_score has 1 column"),
        "1 offset column for 3 classes refused: %s", hb_error_message());
  hb_dataset_free(d3);
  make_data();  /* the labels back */
  hb_dataset_free(d);
  off[7] = NAN;
  d = NULL;
  CHECK(hb_dataset_create(&in, &bp, NULL, &d) == HB_ERR_INPUT && !d, "a NaN offset is refused");
}

/* hb_model_prepend: the base's first iterations go in front, the rest are
 * freed, its starting score moves over; a mismatch changes nothing. */
static void test_prepend(hb_dataset_t *d) {
  hb_model_t *a = train(d, 2, 0, 5), *b = train(d, 2, 0, 3), *c = train(d, 2, 0, 2);
  if (!a || !b || !c) {
    CHECK(0, "training for prepend");
    hb_model_free(a);
    hb_model_free(b);
    hb_model_free(c);
    return;
  }
  hb_tree_t *a0 = a->trees[0], *a1 = a->trees[1], *b0 = b->trees[0];
  double ai = a->init_score[0];
  CHECK(hb_model_prepend(b, a, 6) == HB_ERR_INPUT && b->num_trees == 3 && a->num_trees == 5,
        "prepend refuses more iterations than the base has");
  b->schema.monotone = calloc(P, sizeof(int));
  if (b->schema.monotone) b->schema.monotone[0] = 1;
  CHECK(hb_model_prepend(b, a, 2) == HB_ERR_INPUT && b->num_trees == 3 && a->num_trees == 5,
        "prepend refuses other monotone constraints");
  free(b->schema.monotone);
  b->schema.monotone = NULL;
  c->config.objective = HB_OBJ_BINARY;
  CHECK(hb_model_prepend(c, a, 2) == HB_ERR_INPUT && c->num_trees == 2 && a->num_trees == 5 && a->trees[0] == a0,
        "prepend refuses another objective, changing nothing");
  CHECK(hb_model_prepend(b, a, 2) == HB_OK && b->num_trees == 5 && b->trees[0] == a0 && b->trees[1] == a1 &&
            b->trees[2] == b0 && b->init_score[0] == ai && a->num_trees == 0,
        "prepend: two base trees in front of three, with the base's starting score");
  hb_model_free(a);
  hb_model_free(b);
  hb_model_free(c);
}

/* A custom objective grows, from gradients set each round, the model the
 * built-in squared error grows from 0; it refuses a round without them
 * and a negative hessian. */
static void test_custom(hb_dataset_t *d) {
  hb_schema_t sc;
  make_schema(&sc);
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 7; cfg.nthreads = 2; cfg.boost_from_average = 0;
  hb_booster_t *ref = NULL, *cu = NULL;
  CHECK(hb_booster_create(&cfg, d, &sc, &ref) == HB_OK, "reference booster");
  cfg.objective = HB_OBJ_CUSTOM;
  CHECK(hb_booster_create(&cfg, d, &sc, &cu) == HB_OK, "custom booster");
  if (!ref || !cu) { hb_booster_free(ref); hb_booster_free(cu); return; }
  int fin;
  CHECK(hb_booster_update(cu, &fin) == HB_ERR_INPUT, "a custom round without gradients is refused");
  static double g[N], h[N];
  for (int i = 0; i < N; i++) { g[i] = 0; h[i] = -1; }
  CHECK(hb_booster_set_gradients(cu, g, h) == HB_ERR_INPUT, "a negative hessian is refused");
  int ok = 1;
  for (int r = 0; r < 3 && ok; r++) {
    int n;
    const double *s = hb_booster_scores(cu, 0, &n);
    for (int i = 0; i < n; i++) { g[i] = s[i] - y[i]; h[i] = 1; }
    ok = hb_booster_set_gradients(cu, g, h) == HB_OK && hb_booster_update(cu, &fin) == HB_OK &&
         hb_booster_update(ref, &fin) == HB_OK;
  }
  CHECK(ok && same_model(hb_booster_model(cu), hb_booster_model(ref)),
        "custom squared-error gradients grow the built-in model: %s", hb_error_message());
  hb_booster_free(ref);
  hb_booster_free(cu);
}

/* A data set of more rows than one block of a tree's start (grow.c:
 * root_start, parallel from 65536 rows; large partitions in chunks): the
 * root's sums are added row after row whatever the thread count (the one
 * leaf of a tree that cannot split holds the hessian sum, compared bit for
 * bit with a plain loop; gradients of magnitudes 1e-3 to 1e3, so that
 * another order would round differently), and 1, 2 and 3 threads grow the
 * same 31-leaf trees, with and without a bag. */
enum { BN = 140000, BP = 4 };
static hb_model_t *train_big(hb_dataset_t *d, const double *g, const double *h, int nthreads, int min_data,
                             int bagging) {
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.objective = HB_OBJ_CUSTOM;
  cfg.num_leaves = 31;
  cfg.min_data_in_leaf = min_data;
  cfg.nthreads = nthreads;
  cfg.seed = 5;
  if (bagging) { cfg.bagging_fraction = 0.6; cfg.bagging_freq = 1; }
  hb_schema_t sc;
  hb_schema_init(&sc);
  static char *names[BP] = { "u", "v", "w", "z" };
  static int types[BP], nlev[BP];
  static char **levels[BP];
  sc.nfeat = BP; sc.names = names; sc.types = types; sc.nlevels = nlev; sc.levels = levels;
  hb_booster_t *b = NULL;
  if (hb_booster_create(&cfg, d, &sc, &b) != HB_OK) { printf("booster: %s\n", hb_error_message()); return NULL; }
  int fin, ok = 1;
  for (int r = 0; r < 2 && ok; r++)
    ok = hb_booster_set_gradients(b, g, h) == HB_OK && hb_booster_update(b, &fin) == HB_OK;
  if (!ok) printf("big round: %s\n", hb_error_message());
  hb_model_t *m = ok ? hb_booster_release_model(b) : NULL;
  hb_booster_free(b);
  return m;
}

static void test_big_root(void) {
  static double bx[BP][BN], by[BN], g[BN], h[BN];
  hb_column_t cols[BP];
  for (int i = 0; i < BN; i++) {
    for (int f = 0; f < BP; f++) bx[f][i] = hb_rng_unif(6, 1, (uint64_t)f, (uint64_t)i);
    by[i] = bx[0][i] + (bx[1][i] > 0.3);
    const double scale = pow(10.0, floor(hb_rng_unif(6, 2, 0, (uint64_t)i) * 7) - 3);
    g[i] = (hb_rng_unif(6, 2, 1, (uint64_t)i) - 0.5 + bx[0][i]) * scale;
    h[i] = (0.1 + hb_rng_unif(6, 2, 2, (uint64_t)i)) * scale;
  }
  for (int f = 0; f < BP; f++) { cols[f].type = HB_COL_DOUBLE; cols[f].dbl = bx[f]; cols[f].i32 = NULL; cols[f].nlevels = 0; }
  hb_input_t in = { BN, BP, cols, NULL, by, NULL, NULL, 0 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_dataset_t *d = NULL;
  if (hb_dataset_create(&in, &bp, NULL, &d) != HB_OK) { CHECK(0, "dataset: %s", hb_error_message()); return; }
  double H = 0;
  for (int i = 0; i < BN; i++) H += h[i];
  for (int t = 1; t <= 3; t++) {
    hb_model_t *m = train_big(d, g, h, t, BN, 0);   /* no split: the root alone */
    CHECK(m && m->num_trees >= 1 && m->trees[0]->num_leaves == 1 && m->trees[0]->leaf_hess[0] == H,
          "%d threads: the root's hessian sum is not the plain loop's (%.17g vs %.17g)", t,
          m && m->num_trees ? m->trees[0]->leaf_hess[0] : NAN, H);
    hb_model_free(m);
  }
  for (int bag = 0; bag < 2; bag++) {
    hb_model_t *m1 = train_big(d, g, h, 1, 20, bag);
    CHECK(m1 && m1->num_trees == 2 && m1->trees[1]->num_leaves == 31, "big data: expected 2 trees of 31 leaves");
    for (int t = 2; t <= 3; t++) {
      hb_model_t *mt = train_big(d, g, h, t, 20, bag);
      CHECK(m1 && mt && same_model(m1, mt), "big data, bagging %d: 1 and %d threads grew different models", bag, t);
      hb_model_free(mt);
    }
    hb_model_free(m1);
  }
  hb_dataset_free(d);
}

/* The booster picks its learner from cfg.device (learner.h). These tests
 * link cuda_stub.c, so the GPU learner's adapter must refuse cleanly: its
 * stub's "built without CUDA" after the booster and the adapter have
 * allocated (ASan's leak check sees anything left), or the adapter's own
 * refusal of an objective before anything is allocated. */
static void test_learner_choice(hb_dataset_t *d) {
  hb_schema_t sc;
  make_schema(&sc);
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 7; cfg.nthreads = 2;
  hb_booster_t *b = NULL;
  CHECK(hb_booster_create(&cfg, d, &sc, &b) == HB_OK, "cpu booster: %s", hb_error_message());
  if (b) {
    double prof[HB_PROFILE_N];
    /* its profile (boost.h) counts nothing until it is switched on */
    CHECK(!hb_booster_on_gpu(b) && hb_booster_get_profile(b, prof) == 1 && prof[5] == 0 && prof[6] == 0,
          "the CPU learner is not on the GPU, and its profile is empty");
    hb_booster_free(b);
  }
  /* regression, l1 (leaf rows), custom (host gradients), monotone */
  static const int objs[] = {HB_OBJ_REGRESSION, HB_OBJ_L1, HB_OBJ_CUSTOM, HB_OBJ_REGRESSION};
  static int mono[P] = {1, 0, 0, 0, 0, -1};
  for (int i = 0; i < 4; i++) {
    hb_config_t c = cfg;
    c.device = HB_DEVICE_CUDA;
    c.objective = objs[i];
    sc.monotone = i == 3 ? mono : NULL;
    b = NULL;
    int st = hb_booster_create(&c, d, &sc, &b);
    CHECK(st == HB_ERR_INPUT && b == NULL && strstr(hb_error_message(), "built without CUDA"),
          "device cuda without CUDA (case %d): status %d, %s", i, st, hb_error_message());
    hb_booster_free(b);
  }
  sc.monotone = NULL;
  hb_config_t c = cfg;
  c.device = HB_DEVICE_CUDA;
  c.objective = HB_OBJ_FAIR;
  b = NULL;
  int st = hb_booster_create(&c, d, &sc, &b);
  /* every objective trains on the GPU learner: fair gets as far as the device */
  CHECK(st == HB_ERR_INPUT && b == NULL && strstr(hb_error_message(), "built without CUDA"),
        "the fair objective on the GPU gets as far as the device: status %d, %s", st, hb_error_message());
  /* so do path_smooth, max_delta_step, extra_trees and feature_fraction_bynode */
  c = cfg;
  c.device = HB_DEVICE_CUDA;
  c.path_smooth = 2.0;
  c.max_delta_step = 0.5;
  c.extra_trees = 1;
  c.feature_fraction_bynode = 0.5;
  c.dart = 1;
  b = NULL;
  st = hb_booster_create(&c, d, &sc, &b);
  CHECK(st == HB_ERR_INPUT && b == NULL && strstr(hb_error_message(), "built without CUDA"),
        "path_smooth, max_delta_step, extra_trees, bynode sampling and DART on the GPU get as far as the device: %d, %s",
        st, hb_error_message());
  /* exact_sums is the CPU's (config.c refuses it before any device work);
   * quantized training's sums are exact already, so there it is moot */
  c = cfg;
  c.device = HB_DEVICE_CUDA;
  c.exact_sums = 1;
  b = NULL;
  st = hb_booster_create(&c, d, &sc, &b);
  CHECK(st == HB_ERR_INPUT && b == NULL && strstr(hb_error_message(), "exact_sums trains on the CPU only"),
        "the GPU learner refuses exact_sums: status %d, %s", st, hb_error_message());
  c.quantized = 1;
  st = hb_booster_create(&c, d, &sc, &b);
  CHECK(st == HB_ERR_INPUT && b == NULL && strstr(hb_error_message(), "built without CUDA"),
        "quantized exact_sums on the GPU gets as far as the device: status %d, %s", st, hb_error_message());
  hb_booster_free(b);
}

int main(void) {
  make_data();
  test_gains();
  test_cat_sort();
  test_quant_wide();
  test_init_score();
  test_big_root();
  hb_dataset_t *d = make_dataset(2), *d1 = make_dataset(1);
  CHECK(d != NULL && d1 != NULL, "dataset creation failed");
  if (d) {
    CHECK(d->mappers[4].trivial == 1, "constant feature must be trivial");
    test_hist(d);
    test_models(d);
    test_prepend(d);
    test_custom(d);
    test_learner_choice(d);
  }
  hb_dataset_free(d);
  hb_dataset_free(d1);
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
