/* test_interrupt.c: engine-only checks of interrupts (interrupt.h). A hook
 * that answers "stop" at its n-th call, for every n the call makes: the
 * engine returns HB_ERR_INTERRUPT, holds nothing (ASan's leak check or
 * valgrind run this file), and what it leaves is usable. A booster
 * interrupted before a round's scores change trains on to the model of a
 * training never interrupted, bit for bit (its model text); one
 * interrupted later refuses further use and holds only whole rounds. A
 * prediction or a dataset interrupted at any check, then made again, is the
 * same as one made without a hook. The reference everywhere is the same
 * call with no hook installed. Run by tools/Makefile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boost.h"
#include "dataset.h"
#include "error.h"
#include "interrupt.h"
#include "metric.h"
#include "model_io.h"
#include "predict.h"
#include "rng.h"

#include "test_check.h"

/* The hook: counts its calls and answers "stop" from call `at` on (0: never). */
typedef struct {
  int calls, at;
} counter_t;

static int stop_at(void *data) {
  counter_t *c = data;
  c->calls++;
  return c->at > 0 && c->calls >= c->at;
}

enum { N = 4000, P = 5 };
static double xd[P][N], y[N], ycls[N];

static void make_data(void) {
  for (int i = 0; i < N; i++) {
    for (int f = 0; f < P; f++) xd[f][i] = hb_rng_unif(7, 1, (uint64_t)f, (uint64_t)i);
    xd[1][i] = i % 17 == 0 ? NAN : xd[1][i];
    y[i] = 3 * xd[0][i] + (xd[2][i] > 0.5) + sin(6 * xd[3][i]) + 0.2 * hb_rng_unif(7, 2, 0, (uint64_t)i);
    ycls[i] = (double)((int)(3 * xd[0][i] + xd[2][i]) % 3);
  }
}

static void make_columns(hb_column_t *cols, const double (*x)[N]) {
  for (int f = 0; f < P; f++) {
    cols[f].type = HB_COL_DOUBLE;
    cols[f].dbl = x[f];
    cols[f].i32 = NULL;
    cols[f].nlevels = 0;
  }
}

static void make_schema(hb_schema_t *sc) {
  static char *names[P] = {"a", "b", "c", "d", "e"};
  static int types[P] = {0, 0, 0, 0, 0}, nlev[P] = {0, 0, 0, 0, 0};
  static char **levels[P] = {NULL, NULL, NULL, NULL, NULL};
  hb_schema_init(sc);
  sc->nfeat = P;
  sc->names = names;
  sc->types = types;
  sc->nlevels = nlev;
  sc->levels = levels;
}

static hb_dataset_t *make_dataset(const double *label) {
  hb_column_t cols[P];
  make_columns(cols, (const double (*)[N])xd);
  hb_input_t in = {N, P, cols, NULL, label, NULL, NULL, 0};
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.nthreads = 2;
  hb_dataset_t *d = NULL;
  if (hb_dataset_create(&in, &bp, NULL, &d) != HB_OK) printf("dataset: %s\n", hb_error_message());
  return d;
}

/* The model text of `rounds` rounds on d under cfg, with a validation set (d
 * itself) kept up to date; NULL on failure. */
static char *train_text(const hb_config_t *cfg, const hb_dataset_t *d, int rounds) {
  hb_schema_t sc;
  make_schema(&sc);
  hb_booster_t *b = NULL;
  if (hb_booster_create(cfg, d, &sc, &b) != HB_OK || hb_booster_add_valid(b, d) != HB_OK) {
    hb_booster_free(b);
    return NULL;
  }
  int fin, ok = 1;
  for (int r = 0; r < rounds && ok; r++) ok = hb_booster_update(b, &fin) == HB_OK;
  char *text = NULL;
  size_t len;
  if (!ok || hb_model_to_string(hb_booster_model(b), &text, &len) != HB_OK) text = NULL;
  hb_booster_free(b);
  return text;
}

/* Training: for each n, a training whose hook stops it at the n-th check
 * (of all its rounds); then the hook is removed and training goes on. */
static void test_booster(const char *what, const hb_config_t *cfg, const hb_dataset_t *d, int rounds) {
  char *ref = train_text(cfg, d, rounds);
  CHECK(ref != NULL, "%s: reference training: %s", what, hb_error_message());
  if (!ref) return;
  /* how many checks a whole training makes */
  counter_t count = {0, 0};
  hb_interrupt_set(stop_at, &count);
  char *again = train_text(cfg, d, rounds);
  hb_interrupt_set(NULL, NULL);
  CHECK(again && strcmp(again, ref) == 0, "%s: a hook that never stops changes nothing", what);
  free(again);
  const int K = cfg->objective == HB_OBJ_MULTICLASS ? cfg->num_class : 1;
  CHECK(count.calls >= rounds * K * 2, "%s: %d checks in %d rounds", what, count.calls, rounds);
  int undone = 0, broken = 0;
  hb_schema_t sc;
  make_schema(&sc);
  for (int at = 1; at <= count.calls; at++) {
    hb_booster_t *b = NULL;
    if (hb_booster_create(cfg, d, &sc, &b) != HB_OK || hb_booster_add_valid(b, d) != HB_OK) {
      CHECK(0, "%s: booster: %s", what, hb_error_message());
      hb_booster_free(b);
      break;
    }
    counter_t c = {0, at};
    hb_interrupt_set(stop_at, &c);
    int fin, st = HB_OK, done = 0;
    while (done < rounds && (st = hb_booster_update(b, &fin)) == HB_OK) done++;
    hb_interrupt_set(NULL, NULL);
    CHECK(st == HB_ERR_INTERRUPT && strcmp(hb_error_message(), "interrupted") == 0 && c.calls == at,
          "%s: stopped at check %d of %d: status %d (%s) after %d checks", what, at, count.calls, st,
          hb_error_message(), c.calls);
    hb_model_t *m = hb_booster_model(b);
    CHECK(m->num_trees == done * K, "%s: check %d: the model holds the %d whole rounds (%d trees)", what, at, done,
          m->num_trees);
    st = hb_booster_update(b, &fin);
    if (st == HB_ERR_STATE) {
      broken++;
      double v;
      int nrow = -1;
      CHECK(K > 1 && hb_booster_eval_at(b, 1, HB_METRIC_MULTI_LOGLOSS, 0, &v) == HB_ERR_STATE &&
                hb_booster_scores(b, 0, &nrow) == NULL && m->num_trees == done * K,
            "%s: check %d: a booster left half way through a round refuses further use", what, at);
    } else {
      undone++;
      for (int r = done + 1; r < rounds && st == HB_OK; r++) st = hb_booster_update(b, &fin);
      char *text = NULL;
      size_t len;
      CHECK(st == HB_OK && hb_model_to_string(m, &text, &len) == HB_OK && strcmp(text, ref) == 0,
            "%s: check %d: the round is undone and training goes on to the uninterrupted model", what, at);
      /* the validation scores too: they are the training rows' */
      int n0 = 0, n1 = 0;
      const double *s0 = hb_booster_scores(b, 0, &n0), *s1 = hb_booster_scores(b, 1, &n1);
      CHECK(s0 && s1 && n0 == n1 && memcmp(s0, s1, sizeof(double) * (size_t)n0 * K) == 0,
            "%s: check %d: validation scores match the training scores", what, at);
      free(text);
    }
    hb_booster_free(b);
  }
  /* one tree a round: every check comes before the round's scores change;
   * with more, some come between the trees */
  CHECK(K == 1 ? broken == 0 && undone == count.calls : broken > 0 && undone > 0,
        "%s: %d interrupted rounds undone, %d left broken", what, undone, broken);
  free(ref);
}

/* Prediction of every type on many rows: stopped at each check, then the
 * same call without a hook gives the reference again. */
static void test_predict(const hb_dataset_t *d) {
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 31;
  cfg.min_data_in_leaf = 5;
  cfg.nthreads = 2;
  hb_schema_t sc;
  make_schema(&sc);
  hb_booster_t *b = NULL;
  int fin, ok = hb_booster_create(&cfg, d, &sc, &b) == HB_OK;
  for (int r = 0; r < 60 && ok; r++) ok = hb_booster_update(b, &fin) == HB_OK;
  CHECK(ok, "predict: training: %s", hb_error_message());
  if (!ok) {
    hb_booster_free(b);
    return;
  }
  const hb_model_t *m = hb_booster_model(b);
  /* 70,000 rows (rows of the training data, repeated) x 60 trees: two groups of rows */
  const int nr = 70000, types[4] = {HB_PRED_RAW, HB_PRED_RESPONSE, HB_PRED_LEAF, HB_PRED_CONTRIB};
  static double big[P][70000];
  for (int f = 0; f < P; f++)
    for (int i = 0; i < nr; i++) big[f][i] = xd[f][(i * 7) % N];
  hb_column_t cols[P];
  for (int f = 0; f < P; f++) {
    cols[f].type = HB_COL_DOUBLE;
    cols[f].dbl = big[f];
    cols[f].i32 = NULL;
    cols[f].nlevels = 0;
  }
  for (int ti = 0; ti < 4; ti++) {
    const int type = types[ti];
    /* contributions cost far more a row: fewer rows make several groups */
    const int rows = type == HB_PRED_CONTRIB ? 400 : nr;
    const size_t width = type == HB_PRED_LEAF ? (size_t)m->num_trees : type == HB_PRED_CONTRIB ? P + 1 : 1;
    hb_input_t in = {rows, P, cols, NULL, NULL, NULL, NULL, 0};
    double *ref = malloc(sizeof(double) * rows * width), *out = malloc(sizeof(double) * rows * width);
    if (!ref || !out) {
      CHECK(0, "predict: memory");
      free(ref);
      free(out);
      break;
    }
    CHECK(hb_predict(m, &in, 0, 0, type, 2, ref) == HB_OK, "predict type %d: %s", type, hb_error_message());
    counter_t count = {0, 0};
    hb_interrupt_set(stop_at, &count);
    int st = hb_predict(m, &in, 0, 0, type, 2, out);
    hb_interrupt_set(NULL, NULL);
    CHECK(st == HB_OK && memcmp(out, ref, sizeof(double) * rows * width) == 0,
          "predict type %d: a hook that never stops changes nothing", type);
    CHECK(count.calls >= 1, "predict type %d: %d checks over %d rows", type, count.calls, rows);
    for (int at = 1; at <= count.calls; at++) {
      counter_t c = {0, at};
      hb_interrupt_set(stop_at, &c);
      st = hb_predict(m, &in, 0, 0, type, 2, out);
      hb_interrupt_set(NULL, NULL);
      CHECK(st == HB_ERR_INTERRUPT && c.calls == at, "predict type %d: stopped at check %d: status %d", type, at, st);
      memset(out, 0, sizeof(double) * rows * width);
      st = hb_predict(m, &in, 0, 0, type, 2, out);
      CHECK(st == HB_OK && memcmp(out, ref, sizeof(double) * rows * width) == 0,
            "predict type %d: after an interrupt at check %d the model predicts as before", type, at);
    }
    free(ref);
    free(out);
  }
  hb_booster_free(b);
}

/* Two datasets are the same: mappers and stored bins. */
static int same_dataset(const hb_dataset_t *a, const hb_dataset_t *b) {
  if (a->nrow != b->nrow || a->nfeat != b->nfeat || a->total_bins != b->total_bins) return 0;
  for (int f = 0; f < a->nfeat; f++) {
    const hb_binmapper_t *ma = &a->mappers[f], *mb = &b->mappers[f];
    const hb_featstore_t *sa = &a->store[f], *sb = &b->store[f];
    if (ma->num_bin != mb->num_bin || ma->default_bin != mb->default_bin || ma->trivial != mb->trivial) return 0;
    if (memcmp(ma->upper, mb->upper, sizeof(double) * (size_t)(ma->num_bin - 1)) != 0) return 0;
    if (sa->sparse != sb->sparse) return 0;
    if (sa->sparse ? sa->nnz != sb->nnz || memcmp(sa->rows, sb->rows, sizeof(int) * (size_t)sa->nnz) != 0 ||
                         memcmp(sa->vals, sb->vals, (size_t)sa->nnz) != 0
                   : memcmp(sa->bins, sb->bins, (size_t)a->nrow) != 0)
      return 0;
  }
  return 1;
}

/* Binning many rows of a sparse matrix, every row in the boundary sample:
 * the columns are binned a few at a time, with a check between. */
static void test_dataset(void) {
  const int nrow = 1 << 21, ncol = 16, per = 1500;
  int *p = malloc(sizeof(int) * (ncol + 1)), *ri = malloc(sizeof(int) * ncol * per);
  double *x = malloc(sizeof(double) * ncol * per);
  if (!p || !ri || !x) {
    CHECK(0, "dataset: memory");
    free(p);
    free(ri);
    free(x);
    return;
  }
  p[0] = 0;
  for (int c = 0; c < ncol; c++) {
    for (int k = 0; k < per; k++) {
      ri[c * per + k] = k * (nrow / per) + (int)(hb_rng_unif(3, 1, (uint64_t)c, (uint64_t)k) * (nrow / per));
      x[c * per + k] = hb_rng_unif(3, 2, (uint64_t)c, (uint64_t)k) - 0.5;
    }
    p[c + 1] = p[c] + per;
  }
  hb_csc_t csc = {p, ri, x};
  hb_input_t in = {nrow, ncol, NULL, &csc, NULL, NULL, NULL, 0};
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.nthreads = 2;
  bp.bin_sample_rows = 0;
  hb_dataset_t *ref = NULL, *d = NULL;
  CHECK(hb_dataset_create(&in, &bp, NULL, &ref) == HB_OK, "dataset: %s", hb_error_message());
  counter_t count = {0, 0};
  hb_interrupt_set(stop_at, &count);
  int st = hb_dataset_create(&in, &bp, NULL, &d);
  hb_interrupt_set(NULL, NULL);
  CHECK(st == HB_OK && ref && same_dataset(d, ref), "dataset: a hook that never stops changes nothing");
  hb_dataset_free(d);
  /* both passes (boundaries, then bins) check between their groups */
  CHECK(count.calls >= 4, "dataset: %d checks for %d columns of %d rows", count.calls, ncol, nrow);
  for (int at = 1; at <= count.calls && ref; at++) {
    counter_t c = {0, at};
    d = NULL;
    hb_interrupt_set(stop_at, &c);
    st = hb_dataset_create(&in, &bp, NULL, &d);
    hb_interrupt_set(NULL, NULL);
    CHECK(st == HB_ERR_INTERRUPT && d == NULL && c.calls == at, "dataset: stopped at check %d: status %d", at, st);
    st = hb_dataset_create(&in, &bp, NULL, &d);
    CHECK(st == HB_OK && same_dataset(d, ref), "dataset: after an interrupt at check %d the same bins", at);
    hb_dataset_free(d);
  }
  /* a validation set binned with the reference's mappers stops the same way */
  count.calls = 0;
  count.at = 2;
  d = NULL;
  hb_interrupt_set(stop_at, &count);
  st = hb_dataset_create(&in, &bp, ref, &d);
  hb_interrupt_set(NULL, NULL);
  CHECK(st == HB_ERR_INTERRUPT && d == NULL, "dataset with a reference: stopped: status %d", st);
  hb_dataset_free(ref);
  free(p);
  free(ri);
  free(x);
}

int main(void) {
  make_data();
  hb_dataset_t *d = make_dataset(y), *d3 = make_dataset(ycls);
  if (!d || !d3) {
    printf("test_interrupt: no dataset\n");
    return 1;
  }
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.num_leaves = 15;
  cfg.nthreads = 2;
  cfg.seed = 11;
  cfg.bagging_fraction = 0.7;
  cfg.bagging_freq = 2;
  cfg.feature_fraction = 0.8;
  test_booster("regression with bagging", &cfg, d, 4);
  cfg.quantized = 1;
  test_booster("quantized", &cfg, d, 3);
  hb_config_default(&cfg);
  cfg.num_leaves = 7;
  cfg.nthreads = 2;
  cfg.goss = 1;
  cfg.learning_rate = 0.5;
  test_booster("goss", &cfg, d, 4);
  hb_config_default(&cfg);
  cfg.objective = HB_OBJ_MULTICLASS;
  cfg.num_class = 3;
  cfg.num_leaves = 7;
  cfg.nthreads = 2;
  test_booster("multiclass", &cfg, d3, 3);
  test_predict(d);
  test_dataset();
  hb_dataset_free(d);
  hb_dataset_free(d3);
  printf("test_interrupt: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
