/* test_monotone.c: engine tests of monotone constraints (LightGBM's basic
 * method): the bounded gain rule against hand-worked numbers, the
 * unconstrained path left bit for bit as it was, whole models whose
 * predictions are monotone in each constrained column on data where an
 * unconstrained model is not, and the refusals (GPU, l1 / quantile, factor
 * columns, values other than -1, 0, 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "boost.h"
#include "dataset.h"
#include "error.h"
#include "model_io.h"
#include "predict.h"
#include "rng.h"
#include "split.h"
#include "split_rules.h"

#include "test_check.h"

/* ---- the rule ------------------------------------------------------ */

static void test_rule(void) {
  /* left (G, H) = (-4, 2), right (6, 2): outputs 2 and -3; parent (2, 4) is worth 1 */
  double pg = hb_rule_leaf_gain(2, 4, 0, 0);
  CHECK(pg == 1.0, "parent gain %g", pg);
  double up = hb_rule_split_gain_bounded(-4, 2, 10, 2, 4, 20, 0, 0, pg, 1, 1e-3, 0, -HUGE_VAL, HUGE_VAL, 1);
  CHECK(up == -1.0, "an increasing constraint refuses left output 2 > right output -3 (got %g)", up);
  double down = hb_rule_split_gain_bounded(-4, 2, 10, 2, 4, 20, 0, 0, pg, 1, 1e-3, 0, -HUGE_VAL, HUGE_VAL, -1);
  CHECK(fabs(down - 25.0) < 1e-12, "a decreasing constraint takes it with the plain gain 16/2 + 36/2 - 1 (got %g)", down);
  /* bounds [-1, 1]: outputs clamp to 1 and -1; -(2 G o + H o^2): 6 and 10, less the parent's 1 */
  double b = hb_rule_split_gain_bounded(-4, 2, 10, 2, 4, 20, 0, 0, pg, 1, 1e-3, 0, -1, 1, -1);
  CHECK(fabs(b - 15.0) < 1e-12, "bounded gain 6 + 10 - 1 (got %g)", b);
  /* both outputs clamped to one bound: worth less than the parent, refused */
  double same = hb_rule_split_gain_bounded(-4, 2, 10, 2, 4, 20, 0, 0, pg, 1, 1e-3, 0, 5, 7, 0);
  CHECK(same == -1.0, "outputs clamped together are no split (got %g)", same);
  /* l1 and l2: the soft-thresholded G, H + l2 */
  double l1 = hb_rule_split_gain_bounded(-4, 2, 10, 2, 4, 20, 1, 1, hb_rule_leaf_gain(2, 4, 1, 1), 1, 1e-3, 0,
                                         -0.5, 0.5, 0);
  /* T(-4) = -3, o = clamp(1) = 0.5: 3 - 0.75 = 2.25; T(6) = 5, o = -0.5: 5 - 0.75 = 4.25; parent 1/5 */
  CHECK(fabs(l1 - (2.25 + 4.25 - 0.2)) < 1e-12, "l1/l2 bounded gain (got %g)", l1);
  /* the min_data and min_gain checks still apply */
  CHECK(hb_rule_split_gain_bounded(-4, 2, 3, 2, 4, 20, 0, 0, pg, 5, 1e-3, 0, -1, 1, -1) == -1.0, "min_data");
  CHECK(hb_rule_split_gain_bounded(-4, 2, 10, 2, 4, 20, 0, 0, pg, 1, 1e-3, 15, -1, 1, -1) == -1.0, "min_gain");
  /* unconstrained and unbounded it is the plain gain up to rounding */
  double maxrel = 0;
  for (int i = 0; i < 1000; i++) {
    double gl = hb_rng_unif(3, 1, 0, i) * 20 - 10, hl = 0.5 + hb_rng_unif(3, 1, 1, i) * 10;
    double g = gl + hb_rng_unif(3, 1, 2, i) * 20 - 10, h = hl + 0.5 + hb_rng_unif(3, 1, 3, i) * 10;
    double par = hb_rule_leaf_gain(g, h, 0.3, 1.5);
    double a = hb_rule_split_gain(gl, hl, 10, g, h, 20, 0.3, 1.5, par, 1, 1e-3, 0);
    double c = hb_rule_split_gain_bounded(gl, hl, 10, g, h, 20, 0.3, 1.5, par, 1, 1e-3, 0, -HUGE_VAL, HUGE_VAL, 0);
    if ((a < 0) != (c < 0) && fabs(a) > 1e-9) maxrel = 1;
    else if (a > 0 && c > 0) maxrel = fmax(maxrel, fabs(a - c) / fmax(1e-300, fabs(a)));
  }
  CHECK(maxrel < 1e-9, "unbounded, unconstrained bounded gain differs from the plain one (rel %g)", maxrel);
}

/* hb_split_gains_con without constraints is hb_split_gains, bit for bit;
 * with them it is the bounded rule per candidate. */
static void test_gains_con(void) {
  enum { M = 37 };
  double gl[M], hl[M], out1[M], out2[M], out3[M];
  int nl[M];
  double G = 3.0, H = 60.0;
  for (int i = 0; i < M; i++) {
    gl[i] = hb_rng_unif(4, 1, 0, i) * 10 - 5;
    hl[i] = 1 + i * 1.5;
    nl[i] = 1 + i;
  }
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.min_data_in_leaf = 2;
  double par = hb_rule_leaf_gain(G, H, 0, 0.5);
  hb_split_con_t none = hb_split_con_make(-HUGE_VAL, HUGE_VAL, NULL);
  hb_split_gains(&cfg, gl, hl, nl, M, G, H, 40, 0.5, par, 0, out1);
  hb_split_gains_con(&cfg, gl, hl, nl, M, G, H, 40, 0.5, par, 0, &none, 0, out2);
  CHECK(memcmp(out1, out2, sizeof out1) == 0, "no constraint: not the batched gains bit for bit");
  hb_split_con_t box = hb_split_con_make(-0.05, 0.08, NULL);
  hb_split_gains_con(&cfg, gl, hl, nl, M, G, H, 40, 0.5, par, 0, &box, 1, out3);
  int agree = 1, differs = 0;
  for (int i = 0; i < M; i++) {
    double want = hb_rule_split_gain_bounded(gl[i], hl[i], nl[i], G, H, 40, 0, 0.5, par, cfg.min_data_in_leaf,
                                             cfg.min_sum_hessian_in_leaf, 0, -0.05, 0.08, 1);
    if (out3[i] != want) agree = 0;
    if (out3[i] != out1[i]) differs = 1;
  }
  CHECK(agree, "bounded gains differ from the rule");
  CHECK(differs, "the bounds changed no gain: the case tests nothing");
}

/* ---- whole models -------------------------------------------------- */

enum { N = 4000, P = 4 };
static double xd[P][N], yv[N];
static int xf[N];

/* Columns: 0 numeric with NaN (y rises and falls in it), 1 numeric (y
 * falls then rises), 2 factor with 5 levels, 3 noise. */
static void make_data(void) {
  for (int i = 0; i < N; i++) {
    double u = hb_rng_unif(7, 1, 0, i), v = hb_rng_unif(7, 1, 1, i);
    xd[0][i] = hb_rng_unif(7, 1, 2, i) < 0.05 ? NAN : u;
    xd[1][i] = v;
    xf[i] = 1 + (int)(hb_rng_unif(7, 1, 3, i) * 5);
    xd[2][i] = 0;
    xd[3][i] = hb_rng_unif(7, 1, 4, i);
    double a = isnan(xd[0][i]) ? 0.3 : sin(6 * u);
    /* rising in a where b < 0.5, falling where not: a tree that splits on a
     * and then on b overshoots unless the first split bounds its subtrees */
    yv[i] = 0.5 * a + u * (v < 0.5 ? 3 : -2) - 1.5 * cos(5 * v) - 2 * v + 0.5 * (xf[i] % 3) +
            0.3 * (hb_rng_unif(7, 1, 5, i) - 0.5);
  }
}

static hb_dataset_t *make_dataset(void) {
  hb_column_t cols[P];
  for (int f = 0; f < P; f++) { cols[f].type = HB_COL_DOUBLE; cols[f].dbl = xd[f]; cols[f].i32 = NULL; cols[f].nlevels = 0; }
  cols[2].type = HB_COL_FACTOR; cols[2].dbl = NULL; cols[2].i32 = xf; cols[2].nlevels = 5;
  hb_input_t in = { N, P, cols, NULL, yv, NULL, NULL, 0 };
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 63;
  hb_dataset_t *d = NULL;
  if (hb_dataset_create(&in, &bp, NULL, &d) != HB_OK) printf("dataset: %s\n", hb_error_message());
  return d;
}

static char *names[P] = { "a", "b", "f", "z" };
static int types[P] = { 0, 0, 1, 0 }, nlev[P] = { 0, 0, 5, 0 };
static char *lv[5] = { "l1", "l2", "l3", "l4", "l5" };
static char **levels[P] = { NULL, NULL, lv, NULL };

static void schema(hb_schema_t *sc, int *mono) {
  hb_schema_init(sc);
  sc->nfeat = P;
  sc->names = names; sc->types = types; sc->nlevels = nlev; sc->levels = levels;
  sc->monotone = mono;
}

/* Train `rounds` rounds; NULL (message printed) on failure. */
static hb_model_t *train(const hb_dataset_t *d, hb_config_t *cfg, int *mono, int rounds) {
  hb_schema_t sc;
  schema(&sc, mono);
  hb_booster_t *b = NULL;
  if (hb_booster_create(cfg, d, &sc, &b) != HB_OK) { printf("booster: %s\n", hb_error_message()); return NULL; }
  for (int r = 0; r < rounds; r++) {
    int fin;
    if (hb_booster_update(b, &fin) != HB_OK) { printf("update: %s\n", hb_error_message()); break; }
  }
  hb_model_t *m = hb_booster_release_model(b);
  hb_booster_free(b);
  return m;
}

/* The smallest step dir * (p(x_j = v_{k+1}) - p(x_j = v_k)) of the raw
 * prediction over a grid of column j (below, across and above the data),
 * the other columns of 200 training rows held fixed; >= 0 means monotone
 * in direction dir. */
static double worst_step(const hb_model_t *m, int j, int dir) {
  enum { NG = 60, NR = 200 };
  static double c[P][NG];
  static int cf[NG];
  double out[NG], worst = HUGE_VAL;
  hb_column_t cols[P];
  for (int r = 0; r < NR; r++) {
    int row = r * (N / NR);
    for (int g = 0; g < NG; g++) {
      for (int f = 0; f < P; f++) c[f][g] = xd[f][row];
      cf[g] = xf[row];
      c[j][g] = -0.1 + 1.2 * g / (NG - 1);
    }
    for (int f = 0; f < P; f++) { cols[f].type = HB_COL_DOUBLE; cols[f].dbl = c[f]; cols[f].i32 = NULL; cols[f].nlevels = 0; }
    cols[2].type = HB_COL_FACTOR; cols[2].dbl = NULL; cols[2].i32 = cf; cols[2].nlevels = 5;
    hb_input_t in = { NG, P, cols, NULL, NULL, NULL, NULL, 0 };
    if (hb_predict(m, &in, 0, 0, HB_PRED_RAW, 1, out) != HB_OK) return -HUGE_VAL;
    for (int g = 0; g + 1 < NG; g++) worst = fmin(worst, dir * (out[g + 1] - out[g]));
  }
  return worst;
}

static void test_models(const hb_dataset_t *d) {
  int mono[P] = { 1, -1, 0, 0 };
  for (int variant = 0; variant < 4; variant++) {
    hb_config_t cfg;
    hb_config_default(&cfg);
    cfg.num_leaves = 31;
    cfg.min_data_in_leaf = 10;
    cfg.min_data_per_group = 20;
    cfg.nthreads = 2;
    cfg.seed = 5;
    if (variant == 1) cfg.quantized = 1;
    if (variant == 2) { cfg.bagging_fraction = 0.6; cfg.bagging_freq = 1; cfg.feature_fraction = 0.75; }
    if (variant == 3) { cfg.quantized = 1; cfg.refit_leaves = 0; cfg.lambda_l1 = 0.5; cfg.lambda_l2 = 2; }
    hb_model_t *free_m = train(d, &cfg, NULL, 30), *con = train(d, &cfg, mono, 30);
    CHECK(free_m && con, "training failed (variant %d)", variant);
    if (!free_m || !con) { hb_model_free(free_m); hb_model_free(con); continue; }
    double fa = worst_step(free_m, 0, 1), fb = worst_step(free_m, 1, -1);
    double ca = worst_step(con, 0, 1), cb = worst_step(con, 1, -1);
    CHECK(fa < -0.05 && fb < -0.05, "the unconstrained model is already monotone (variant %d: %g, %g)", variant, fa, fb);
    CHECK(ca >= 0, "not increasing in column a (variant %d, worst step %g)", variant, ca);
    CHECK(cb >= 0, "not decreasing in column b (variant %d, worst step %g)", variant, cb);
    /* the constrained model still learns the rest: some split on the factor */
    int on_f = 0;
    for (int t = 0; t < con->num_trees; t++)
      for (int k = 0; k < con->trees[t]->num_leaves - 1; k++) on_f += con->trees[t]->split_feature[k] == 2;
    CHECK(on_f > 0, "no split on the free factor column (variant %d)", variant);
    /* the model text records the constraints, and only where set */
    char *s1 = NULL, *s2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK(hb_model_to_string(con, &s1, &n1) == HB_OK && strstr(s1, "\nmonotone_constraints=1 -1 0 0\n"),
          "constraints missing from the model text");
    CHECK(hb_model_to_string(free_m, &s2, &n2) == HB_OK && !strstr(s2, "monotone_constraints"),
          "an unconstrained model's text names constraints");
    hb_model_t *back = NULL;
    CHECK(s1 && hb_model_from_string(s1, n1, &back) == HB_OK && back->schema.monotone &&
          back->schema.monotone[0] == 1 && back->schema.monotone[1] == -1 && back->schema.monotone[3] == 0,
          "constraints lost in a round trip");
    hb_model_free(back);
    hb_free(s1);
    hb_free(s2);
    hb_model_free(free_m);
    hb_model_free(con);
  }
  /* all zero is no constraint: the same trees as none */
  int zero[P] = { 0, 0, 0, 0 };
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.nthreads = 2;
  hb_model_t *a = train(d, &cfg, NULL, 5), *b = train(d, &cfg, zero, 5);
  char *sa = NULL, *sb = NULL;
  size_t na = 0, nb = 0;
  CHECK(a && b && hb_model_to_string(a, &sa, &na) == HB_OK && hb_model_to_string(b, &sb, &nb) == HB_OK &&
        na == nb && memcmp(sa, sb, na) == 0, "all-zero constraints changed the model");
  hb_free(sa);
  hb_free(sb);
  hb_model_free(a);
  hb_model_free(b);
}

static int refused(const hb_dataset_t *d, hb_config_t *cfg, int *mono, const char *msg) {
  hb_schema_t sc;
  schema(&sc, mono);
  hb_booster_t *b = (hb_booster_t *)1;
  int st = hb_booster_create(cfg, d, &sc, &b);
  int ok = st == HB_ERR_INPUT && b == NULL && strstr(hb_error_message(), msg);
  if (!ok) printf("  create: st=%d msg=%s\n", st, hb_error_message());
  if (st == HB_OK) hb_booster_free(b);
  return ok;
}

static void test_refusals(const hb_dataset_t *d) {
  int mono[P] = { 1, 0, 0, 0 }, on_factor[P] = { 0, 0, 1, 0 }, two[P] = { 2, 0, 0, 0 };
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.objective = HB_OBJ_L1;
  CHECK(refused(d, &cfg, mono, "l1 objective"), "l1 took monotone constraints");
  cfg.objective = HB_OBJ_QUANTILE;
  CHECK(refused(d, &cfg, mono, "quantile objective"), "quantile took monotone constraints");
  hb_config_default(&cfg);
  CHECK(refused(d, &cfg, on_factor, "numeric columns only"), "a factor column took a constraint");
  CHECK(refused(d, &cfg, two, "not -1, 0 or 1"), "a constraint of 2 was taken");
}

int main(void) {
  make_data();
  test_rule();
  test_gains_con();
  hb_dataset_t *d = make_dataset();
  CHECK(d != NULL, "dataset");
  if (d) {
    test_models(d);
    test_refusals(d);
    hb_dataset_free(d);
  }
  printf("test_monotone: %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
