/* test_model.c: engine-only checks of config.c, model.c, tree.c, model_io.c,
 * predict.c and metric.c against values computed by hand (or by an
 * independent brute force), plus corruption of model texts under ASan.
 * Also checks that routing binned rows (hb_tree_leaf_binned on a dataset
 * built by dataset.c) agrees with routing raw values (hb_predict), a factor
 * spread over several features included. Built and run by
 * `make -C tools engine-test` (tools/engine-test.sh).
 * Exit status is non-zero when a check fails; the last line says "N passed, N failed". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "dataset.h"
#include "error.h"
#include "metric.h"
#include "model.h"
#include "model_io.h"
#include "predict.h"
#include "refit.h"
#include "objective.h"
#include "tree.h"
#include "test_engine.h"

static int n_pass = 0, n_fail = 0;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (cond) n_pass++;                                      \
    else {                                                   \
      n_fail++;                                              \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1.0 + fabs(b)); }

static uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* ------------------------------------------------------------------ */
/* config                                                              */

static void test_config(void) {
  hb_config_t c;
  hb_config_default(&c);
  CHECK(hb_config_check(&c) == HB_OK, "defaults must be valid: %s", hb_error_message());
  CHECK(c.num_leaves == 31 && c.learning_rate == 0.1 && c.min_data_in_leaf == 20 && c.cat_smooth == 10.0 &&
            c.min_data_per_group == 100 && c.max_cat_threshold == 32 && c.max_cat_to_onehot == 4 && c.num_class == 1 &&
            c.objective == HB_OBJ_REGRESSION && c.boost_from_average == 1,
        "defaults");
  /* Each case: break one field, expect HB_ERR_INPUT and its R name in the message. */
#define EXPECT_BAD(field_stmt, name)                                                                \
  do {                                                                                              \
    hb_config_t x;                                                                                  \
    hb_config_default(&x);                                                                          \
    field_stmt;                                                                                     \
    int st_ = hb_config_check(&x);                                                                  \
    CHECK(st_ == HB_ERR_INPUT && strstr(hb_error_message(), name), "%s: st=%d msg=%s", name, st_,    \
          hb_error_message());                                                                      \
  } while (0)
  EXPECT_BAD(x.num_leaves = 1, "num_leaves must be between 2 and 131072");
  EXPECT_BAD(x.num_leaves = 131073, "num_leaves");
  EXPECT_BAD(x.learning_rate = 0, "learning_rate");
  EXPECT_BAD(x.learning_rate = INFINITY, "learning_rate");
  EXPECT_BAD(x.learning_rate = NAN, "learning_rate");
  EXPECT_BAD(x.lambda_l1 = -1, "lambda_l1");
  EXPECT_BAD(x.lambda_l2 = NAN, "lambda_l2");
  EXPECT_BAD(x.min_gain_to_split = -0.5, "min_gain_to_split");
  EXPECT_BAD(x.min_sum_hessian_in_leaf = -1, "min_sum_hessian_in_leaf");
  EXPECT_BAD(x.min_data_in_leaf = -1, "min_data_in_leaf");
  EXPECT_BAD(x.max_cat_threshold = 0, "max_cat_threshold");
  EXPECT_BAD(x.cat_smooth = -1, "cat_smooth");
  EXPECT_BAD(x.cat_l2 = INFINITY, "cat_l2");
  EXPECT_BAD(x.min_data_per_group = 0, "min_data_per_group");
  EXPECT_BAD(x.max_cat_to_onehot = 0, "max_cat_to_onehot");
  EXPECT_BAD(x.bagging_fraction = 0, "bagging_fraction");
  EXPECT_BAD(x.bagging_fraction = 1.01, "bagging_fraction");
  EXPECT_BAD(x.bagging_freq = -1, "bagging_freq");
  EXPECT_BAD(x.feature_fraction = NAN, "feature_fraction");
  EXPECT_BAD(x.boost_from_average = 2, "boost_from_average");
  EXPECT_BAD(x.objective = HB_OBJ_COUNT, "objective");
  EXPECT_BAD(x.objective = -1, "objective");
  EXPECT_BAD(x.tweedie_variance_power = 1, "tweedie_variance_power");
  EXPECT_BAD(x.tweedie_variance_power = 2, "tweedie_variance_power");
  EXPECT_BAD(x.huber_delta = 0, "huber_delta");
  EXPECT_BAD(x.poisson_max_delta_step = -0.1, "poisson_max_delta_step");
  EXPECT_BAD(x.quantile_alpha = 1, "quantile_alpha");
  EXPECT_BAD(x.quantile_alpha = NAN, "quantile_alpha");
  EXPECT_BAD(x.num_class = 3, "num_class");
  EXPECT_BAD((x.objective = HB_OBJ_MULTICLASS, x.num_class = 2), "num_class");
  hb_config_default(&c);
  c.objective = HB_OBJ_MULTICLASS;
  c.num_class = 3;
  c.max_depth = -5;
  c.nthreads = -1;
  c.bagging_fraction = 1.0;
  c.feature_fraction = 0.01;
  CHECK(hb_config_check(&c) == HB_OK, "multiclass 3 valid: %s", hb_error_message());
}

/* ------------------------------------------------------------------ */
/* hand-built trees                                                    */

/* Features: 0 numeric "x", 1 categorical "c" with levels a, b, c (codes 1..3). */
static void make_schema(hb_schema_t *s) {
  hb_schema_t src;
  char *names[2] = {"x", "c"};
  int types[2] = {HB_FEAT_NUMERIC, HB_FEAT_CATEGORICAL};
  int nlev[2] = {0, 3};
  char *lv[3] = {"a", "b", "c"};
  char **levels[2] = {NULL, lv};
  src.nfeat = 2;
  src.names = names;
  src.types = types;
  src.nlevels = nlev;
  src.levels = levels;
  src.monotone = NULL;
  hb_schema_init(s);
  int st = hb_schema_copy(&src, s);
  CHECK(st == HB_OK && s->nfeat == 2 && strcmp(s->levels[1][2], "c") == 0 && s->levels[0] == NULL,
        "schema copy");
}

/* Tree A: node 0: x <= 1.5 (NA left) ? leaf 0 : node 1; node 1: c in {1, 3} (NA right) ? leaf 1 : leaf 2.
 * Leaves 10, 20, 30. */
static hb_tree_t *tree_a(void) {
  hb_tree_t *t = hb_tree_create(4);  /* capacity larger than used, as in training */
  t->num_leaves = 3;
  t->split_feature[0] = 0;
  t->threshold_bin[0] = 1;
  t->threshold[0] = 1.5;
  t->decision[0] = HB_DECISION_DEFAULT_LEFT;
  t->left[0] = ~0;
  t->right[0] = 1;
  uint32_t bits = (1u << 1) | (1u << 3);
  int b = hb_tree_add_cat_bits(t, &bits, 1);
  t->split_feature[1] = 1;
  t->threshold_bin[1] = -1;
  t->decision[1] = HB_DECISION_CATEGORICAL;
  t->cat_begin[1] = b;
  t->cat_nwords[1] = 1;
  t->left[1] = ~1;
  t->right[1] = ~2;
  double lv[3] = {10, 20, 30};
  int par[3] = {0, 1, 1}, dep[3] = {1, 2, 2};
  for (int j = 0; j < 3; j++) {
    t->leaf_value[j] = lv[j];
    t->leaf_parent[j] = par[j];
    t->leaf_depth[j] = dep[j];
    t->leaf_count[j] = 5 + j;
    t->leaf_hess[j] = 1.25 * j;
  }
  t->split_gain[0] = 3.5;
  t->split_gain[1] = 1.0 / 3.0;
  t->internal_value[0] = 0.1;
  t->internal_count[0] = 18;
  t->internal_count[1] = 13;
  return t;
}

/* Tree B: one leaf, 0.5. */
static hb_tree_t *tree_b(void) {
  hb_tree_t *t = hb_tree_create(1);
  t->leaf_value[0] = 0.5;
  t->leaf_count[0] = 7;
  return t;
}

/* Tree C: x <= 0 (NA right) ? -1 : +1. */
static hb_tree_t *tree_c(void) {
  hb_tree_t *t = hb_tree_create(2);
  t->num_leaves = 2;
  t->split_feature[0] = 0;
  t->threshold_bin[0] = 0;
  t->threshold[0] = 0.0;
  t->decision[0] = 0;
  t->left[0] = ~0;
  t->right[0] = ~1;
  t->leaf_value[0] = -1;
  t->leaf_value[1] = 1;
  t->leaf_parent[0] = t->leaf_parent[1] = 0;
  t->leaf_depth[0] = t->leaf_depth[1] = 1;
  return t;
}

/* Regression model: trees A, B, C as 3 iterations, init 100. */
static hb_model_t *model_reg(void) {
  hb_model_t *m = hb_model_create();
  make_schema(&m->schema);
  m->init_score = hb_calloc(1, sizeof(double));
  m->init_score[0] = 100;
  hb_model_push_tree(m, tree_a());
  hb_model_push_tree(m, tree_b());
  hb_model_push_tree(m, tree_c());
  return m;
}

/* The 7 test rows (x, c code; NA as NaN / HB_NA_INT). */
#define NR 7
static const double X[NR] = {1.0, NAN, 2.0, 2.0, 3.0, 0.0, 5.0};
static const int C[NR] = {2, 1, 1, 2, HB_NA_INT, 3, 3};
/* By hand: leaf of A, B, C per row. */
static const int LEAF_A[NR] = {0, 0, 1, 2, 2, 0, 1};
static const int LEAF_C[NR] = {1, 1, 1, 1, 1, 0, 1};

static double hand_raw(int i, int from, int to, double init) {
  const double va[3] = {10, 20, 30}, vc[2] = {-1, 1};
  double s = init;
  for (int it = from; it < to; it++) s += it == 0 ? va[LEAF_A[i]] : it == 1 ? 0.5 : vc[LEAF_C[i]];
  return s;
}

typedef struct {
  hb_column_t cols[2];
  hb_input_t dense;
  int p[3], ri[2 * NR];
  double x[2 * NR];
  hb_csc_t csc;
  hb_input_t sparse;
} inputs_t;

static void make_inputs(inputs_t *in) {
  memset(in, 0, sizeof *in);
  in->cols[0].type = HB_COL_DOUBLE;
  in->cols[0].dbl = X;
  in->cols[1].type = HB_COL_FACTOR;
  in->cols[1].i32 = C;
  in->cols[1].nlevels = 3;
  in->dense.nrow = NR;
  in->dense.ncol = 2;
  in->dense.cols = in->cols;
  /* CSC: zeros of x stay implicit (they must read as 0.0, not missing); factor NA as NaN */
  int e = 0;
  in->p[0] = 0;
  for (int i = 0; i < NR; i++)
    if (X[i] != 0.0) {
      in->ri[e] = i;
      in->x[e++] = X[i];
    }
  in->p[1] = e;
  for (int i = 0; i < NR; i++) {
    in->ri[e] = i;
    in->x[e++] = C[i] == HB_NA_INT ? NAN : (double)C[i];
  }
  in->p[2] = e;
  in->csc.p = in->p;
  in->csc.i = in->ri;
  in->csc.x = in->x;
  in->sparse.nrow = NR;
  in->sparse.ncol = 2;
  in->sparse.csc = &in->csc;
}

static void test_tree_routing(void) {
  hb_tree_t *a = tree_a();
  /* raw routing */
  CHECK(hb_tree_goes_left(a, 0, 1.5) == 1 && hb_tree_goes_left(a, 0, 1.6) == 0, "numeric threshold");
  CHECK(hb_tree_goes_left(a, 0, NAN) == 1, "NA default left");
  CHECK(hb_tree_goes_left(a, 1, 1) == 1 && hb_tree_goes_left(a, 1, 2) == 0 && hb_tree_goes_left(a, 1, 3) == 1,
        "categorical bitset");
  CHECK(hb_tree_goes_left(a, 1, NAN) == 0 && hb_tree_goes_left(a, 1, 40) == 0 &&
            hb_tree_goes_left(a, 1, 1.5) == 0 && hb_tree_goes_left(a, 1, -1) == 0,
        "categorical missing/unseen/non-integer -> default right");
  /* binned routing: x has 3 value bins + missing bin 3; c has bins 0,1,2 -> levels 3,1,2 + missing bin 3 */
  double upper[3] = {1.0, 1.5, INFINITY};
  uint8_t level_bin[3] = {1, 2, 0};
  int bin_level[3] = {3, 1, 2};
  hb_binmapper_t mx = {.type = HB_FEAT_NUMERIC, .num_bin = 4, .upper = upper};
  hb_binmapper_t mc = {.type = HB_FEAT_CATEGORICAL, .num_bin = 4, .nlevels = 3, .level_bin = level_bin, .bin_level = bin_level};
  CHECK(hb_tree_bin_goes_left(a, 0, &mx, 0) == 1 && hb_tree_bin_goes_left(a, 0, &mx, 1) == 1 &&
            hb_tree_bin_goes_left(a, 0, &mx, 2) == 0,
        "numeric bins");
  CHECK(hb_tree_bin_goes_left(a, 0, &mx, 3) == 1, "numeric missing bin -> default left");
  CHECK(hb_tree_bin_goes_left(a, 1, &mc, 0) == 1 && hb_tree_bin_goes_left(a, 1, &mc, 1) == 1 &&
            hb_tree_bin_goes_left(a, 1, &mc, 2) == 0 && hb_tree_bin_goes_left(a, 1, &mc, 3) == 0,
        "categorical bins via bin_level");
  /* hb_tree_leaf_binned on a hand-built dataset: x dense, c sparse (default bin 0) */
  hb_binmapper_t maps[2] = {mx, mc};
  maps[1].default_bin = 0;
  uint8_t xb[5] = {0, 1, 2, 3, 2};
  int crows[3] = {1, 3, 4};
  uint8_t cvals[3] = {2, 3, 2};
  hb_featstore_t store[2];
  memset(store, 0, sizeof store);
  store[0].bins = xb;
  store[1].sparse = 1;
  store[1].nnz = 3;
  store[1].rows = crows;
  store[1].vals = cvals;
  hb_dataset_t d;
  memset(&d, 0, sizeof d);
  int col_first[3] = {0, 1, 2}, feat_col[2] = {0, 1};
  d.nrow = 5;
  d.nfeat = 2;
  d.ncol = 2;
  d.col_first = col_first;
  d.feat_col = feat_col;
  d.mappers = maps;
  d.store = store;
  /* c bins by row: 0,2,0,3,2 -> row 2: level 3 left (leaf 1); row 4: level 2 right (leaf 2) */
  int want[5] = {0, 0, 1, 0, 2};
  for (int i = 0; i < 5; i++)
    CHECK(hb_tree_leaf_binned(a, &d, i) == want[i], "leaf_binned row %d: %d", i, hb_tree_leaf_binned(a, &d, i));
  hb_tree_t *b = tree_b();
  CHECK(hb_tree_leaf_binned(b, &d, 3) == 0, "1-leaf tree -> leaf 0");
  hb_tree_free(a);
  hb_tree_free(b);
  hb_tree_free(NULL);
}

static void test_model_basics(void) {
  hb_model_t *m = hb_model_create();
  CHECK(m && m->num_class == 1 && m->trees_per_iter == 1 && hb_model_num_iterations(m) == 0, "create");
  CHECK(hb_model_set_meta(m, "a", "1") == HB_OK && hb_model_set_meta(m, "b", "2") == HB_OK &&
            hb_model_set_meta(m, "a", "3") == HB_OK,
        "set_meta");
  CHECK(m->nmeta == 2 && strcmp(test_model_get_meta(m, "a"), "3") == 0 && test_model_get_meta(m, "zz") == NULL,
        "get_meta replaces");
  const char *lv[2] = {"no", "yes"};
  CHECK(hb_model_set_label_levels(m, 2, lv) == HB_OK && m->nlabel_levels == 2 &&
            strcmp(m->label_levels[1], "yes") == 0,
        "label levels");
  CHECK(hb_model_set_label_levels(m, 1, lv) == HB_OK && m->nlabel_levels == 1, "label levels replaced");
  m->num_class = m->trees_per_iter = 3;
  for (int i = 0; i < 40; i++) CHECK(hb_model_push_tree(m, tree_b()) == HB_OK, "push %d", i);
  CHECK(m->num_trees == 40 && hb_model_num_iterations(m) == 13, "iterations = trees / trees_per_iter");
  CHECK(hb_model_push_tree(m, NULL) == HB_ERR_INPUT, "push NULL");
  hb_model_free(m);
  hb_model_free(NULL);
  CHECK(hb_tree_create(0) == NULL, "tree of 0 leaves refused");
}

/* ------------------------------------------------------------------ */
/* predict                                                             */

static void test_predict(void) {
  hb_model_t *m = model_reg();
  inputs_t in;
  make_inputs(&in);
  double out[NR * 3], out2[NR * 3];
  /* raw, all iterations, dense vs hand */
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 1, out) == HB_OK, "%s", hb_error_message());
  for (int i = 0; i < NR; i++) CHECK(out[i] == hand_raw(i, 0, 3, 100), "raw row %d: %g", i, out[i]);
  CHECK(out[0] == 111.5 && out[3] == 131.5 && out[5] == 109.5, "spot values");
  /* sparse agrees exactly, and thread count does not matter */
  CHECK(hb_predict(m, &in.sparse, 0, 0, HB_PRED_RAW, 2, out2) == HB_OK, "%s", hb_error_message());
  CHECK(memcmp(out, out2, sizeof(double) * NR) == 0, "csc == dense");
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 2, out2) == HB_OK && memcmp(out, out2, sizeof(double) * NR) == 0,
        "threads");
  /* response: identity for regression */
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RESPONSE, 1, out2) == HB_OK && memcmp(out, out2, sizeof(double) * NR) == 0,
        "regression response = raw");
  /* iteration ranges */
  int ranges[][2] = {{0, 1}, {1, 1}, {1, 0}, {2, 1}, {3, 0}, {0, 2}};
  for (int r = 0; r < 6; r++) {
    int s0 = ranges[r][0], n0 = ranges[r][1], to = n0 > 0 ? s0 + n0 : 3;
    CHECK(hb_predict(m, &in.sparse, s0, n0, HB_PRED_RAW, 2, out) == HB_OK, "%s", hb_error_message());
    for (int i = 0; i < NR; i++)
      CHECK(out[i] == hand_raw(i, s0, to, 100), "range [%d,+%d) row %d: %g", s0, n0, i, out[i]);
  }
  CHECK(hb_predict(m, &in.dense, 4, 0, HB_PRED_RAW, 1, out) == HB_ERR_INPUT, "start beyond");
  CHECK(hb_predict(m, &in.dense, 1, 3, HB_PRED_RAW, 1, out) == HB_ERR_INPUT, "range beyond");
  CHECK(hb_predict(m, &in.dense, -1, 0, HB_PRED_RAW, 1, out) == HB_ERR_INPUT, "negative start");
  CHECK(hb_predict(m, &in.dense, 0, 0, 9, 1, out) == HB_ERR_INPUT, "bad type");
  in.dense.ncol = 1;
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 1, out) == HB_ERR_INPUT &&
            strstr(hb_error_message(), "columns"),
        "ncol mismatch: %s", hb_error_message());
  in.dense.ncol = 2;
  /* leaf indices: nrow x 3 trees, then a range */
  double lf[NR * 3];
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_LEAF, 1, lf) == HB_OK, "leaf");
  for (int i = 0; i < NR; i++)
    CHECK(lf[i] == LEAF_A[i] && lf[NR + i] == 0 && lf[2 * NR + i] == LEAF_C[i], "leaf row %d", i);
  CHECK(hb_predict(m, &in.sparse, 0, 0, HB_PRED_LEAF, 2, out) == HB_OK && memcmp(out, lf, sizeof lf) == 0,
        "leaf csc == dense");
  CHECK(hb_predict(m, &in.dense, 2, 1, HB_PRED_LEAF, 1, out) == HB_OK && memcmp(out, lf + 2 * NR, sizeof(double) * NR) == 0,
        "leaf range");
  /* binary: response is the sigmoid of raw */
  m->config.objective = HB_OBJ_BINARY;
  m->init_score[0] = -11.5;
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RESPONSE, 1, out) == HB_OK, "binary");
  for (int i = 0; i < NR; i++) {
    double r = hand_raw(i, 0, 3, -11.5);
    CHECK(close_to(out[i], 1 / (1 + exp(-r))), "sigmoid row %d", i);
  }
  CHECK(out[0] == 0.5, "sigmoid(0) = 0.5");
  hb_model_free(m);

  /* multiclass, 3 classes, one iteration of trees A, B, C; init 0, 1, 2 */
  m = hb_model_create();
  make_schema(&m->schema);
  m->config.objective = HB_OBJ_MULTICLASS;
  m->config.num_class = m->num_class = m->trees_per_iter = 3;
  m->init_score = hb_calloc(3, sizeof(double));
  m->init_score[1] = 1;
  m->init_score[2] = 2;
  hb_model_push_tree(m, tree_a());
  hb_model_push_tree(m, tree_b());
  hb_model_push_tree(m, tree_c());
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 1, out) == HB_OK, "multi raw");
  CHECK(hb_predict(m, &in.sparse, 0, 0, HB_PRED_RESPONSE, 2, out2) == HB_OK, "multi response");
  const double va[3] = {10, 20, 30}, vc[2] = {-1, 1};
  for (int i = 0; i < NR; i++) {
    double s[3] = {va[LEAF_A[i]], 1.5, 2 + vc[LEAF_C[i]]}, z = 0;
    for (int k = 0; k < 3; k++) {
      CHECK(out[k * NR + i] == s[k], "multi raw row %d class %d", i, k);
      z += exp(s[k]);
    }
    for (int k = 0; k < 3; k++) CHECK(close_to(out2[k * NR + i], exp(s[k]) / z), "softmax row %d class %d", i, k);
  }
  /* softmax stays finite for huge scores */
  m->init_score[0] = 1e300;
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RESPONSE, 1, out2) == HB_OK && out2[0] == 1.0 && out2[NR] == 0.0,
        "stable softmax");
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_LEAF, 1, out2) == HB_OK && out2[2 * NR + 5] == 0, "multi leaf");
  hb_model_free(m);
}

/* Contributions (shap.c) against the Shapley values worked out by hand
 * from each tree's covers: trees A (x then c, leaf counts 5, 6, 7) and C
 * (x alone), so that with two features phi_x = ((v(x) - v()) + (f - v(c))) / 2
 * and phi_c = ((v(c) - v()) + (f - v(x))) / 2, v(S) the expected leaf value
 * with the features of S known; then a branch no row reached. */
/* Weighted quantiles (leaf renewal of the l1 and quantile objectives):
 * unit weights give R's quantile(type = 2), worked by hand. */
static void test_objective_quantile(void) {
  hb_objective_vw_t p[6];
  const double v[6] = {5, 1, 4, 2, 3, 6};
  for (int i = 0; i < 6; i++) p[i] = (hb_objective_vw_t){v[i], 1.0};
  CHECK(hb_objective_quantile(p, 6, 0.5) == 3.5, "median of 1..6 is 3.5");
  for (int i = 0; i < 6; i++) p[i] = (hb_objective_vw_t){v[i], 1.0};
  CHECK(hb_objective_quantile(p, 5, 0.5) == 3, "median of 5 1 4 2 3");
  for (int i = 0; i < 6; i++) p[i] = (hb_objective_vw_t){v[i], 1.0};
  CHECK(hb_objective_quantile(p, 6, 0.9) == 6 && hb_objective_quantile(p, 6, 0.1) == 1, "tails");
  for (int i = 0; i < 6; i++) p[i] = (hb_objective_vw_t){v[i], 1.0};
  CHECK(hb_objective_quantile(p, 6, 1.0 / 3) == 2.5, "on a step: the mean of 2 and 3");
  /* weights: 1 (w 1), 2 (w 1), 3 (w 6): the median is 3; zero weights are skipped */
  hb_objective_vw_t q[4] = {{3, 6}, {1, 1}, {2, 1}, {9, 0}};
  CHECK(hb_objective_quantile(q, 4, 0.5) == 3, "weighted median");
  hb_objective_vw_t r[3] = {{3, 0}, {1, 0}, {2, 0}};
  CHECK(hb_objective_quantile(r, 3, 0.5) == 2, "all-zero weights count as ones");
  CHECK(hb_objective_quantile(r, 0, 0.5) == 0, "no values");
  /* unit weights take a selection, not a sort: against the sorted values
   * (type 2: position ceil(a m), averaged with the next on a whole a m),
   * with ties (values from few levels) */
  hb_objective_vw_t big[101];
  double sorted[101];
  const double as[] = {0.1, 0.25, 0.5, 0.9, 1.0 / 3, 0.999};
  int bad = 0;
  for (int m = 1; m <= 101; m += 4)
    for (int qi = 0; qi < 6; qi++) {
      for (int i = 0; i < m; i++) {
        big[i].v = (double)((i * 37 + m * 11) % (qi + 3)) + 0.5 * (i % 2);
        big[i].w = 1.0;
        sorted[i] = big[i].v;
      }
      for (int i = 1; i < m; i++)  /* insertion sort of the copy */
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
          double t = sorted[j];
          sorted[j] = sorted[j - 1];
          sorted[j - 1] = t;
        }
      double t = as[qi] * m;
      int k = (int)ceil(t);
      if (k < 1) k = 1;
      double want = ((double)k == t && k < m) ? 0.5 * (sorted[k - 1] + sorted[k]) : sorted[k - 1];
      bad += hb_objective_quantile(big, m, as[qi]) != want;
    }
  CHECK(bad == 0, "%d selection quantiles differ from the sorted ones", bad);
}

static void test_predict_contrib(void) {
  hb_model_t *m = model_reg();
  m->trees[2]->leaf_count[0] = 4;
  m->trees[2]->leaf_count[1] = 14;
  inputs_t in;
  make_inputs(&in);
  double out[NR * 3], out2[NR * 3], raw[NR];
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_CONTRIB, 1, out) == HB_OK, "%s", hb_error_message());
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 1, raw) == HB_OK, "raw");
  const double ea = (10.0 * 5 + 20.0 * 6 + 30.0 * 7) / 18, ec = (-1.0 * 4 + 1.0 * 14) / 18;
  for (int i = 0; i < NR; i++) {
    /* tree A: x decides leaf 0 or node 1; c decides node 1's leaf */
    const int xl = LEAF_A[i] == 0, cl = hb_tree_goes_left(m->trees[0], 1, C[i] == HB_NA_INT ? NAN : (double)C[i]);
    const double vx = xl ? 10.0 : (20.0 * 6 + 30.0 * 7) / 13, vc = (5.0 * 10 + 13.0 * (cl ? 20 : 30)) / 18;
    const double fa = (double[]){10, 20, 30}[LEAF_A[i]], fc = LEAF_C[i] ? 1.0 : -1.0;
    const double px = ((vx - ea) + (fa - vc)) / 2 + (fc - ec), pc = ((vc - ea) + (fa - vx)) / 2;
    CHECK(close_to(out[i], px) && close_to(out[NR + i], pc) && close_to(out[2 * NR + i], 100 + ea + 0.5 + ec),
          "row %d: x %g (want %g), c %g (want %g), bias %g", i, out[i], px, out[NR + i], pc, out[2 * NR + i]);
    CHECK(close_to(out[i] + out[NR + i] + out[2 * NR + i], raw[i]), "row %d sums to the raw score", i);
  }
  CHECK(hb_predict(m, &in.sparse, 0, 0, HB_PRED_CONTRIB, 2, out2) == HB_OK && memcmp(out, out2, sizeof out) == 0,
        "csc == dense, threads");
  /* only tree C (iteration 3): phi_x = f - E */
  CHECK(hb_predict(m, &in.dense, 2, 1, HB_PRED_CONTRIB, 1, out) == HB_OK, "range");
  for (int i = 0; i < NR; i++)
    CHECK(close_to(out[i], (LEAF_C[i] ? 1.0 : -1.0) - ec) && out[NR + i] == 0 && close_to(out[2 * NR + i], 100 + ec),
          "range row %d", i);
  /* a leaf no row reached: its branch weighs nothing, the rows reaching it
   * get f - E all the same */
  m->trees[2]->leaf_count[0] = 0;
  CHECK(hb_predict(m, &in.dense, 2, 1, HB_PRED_CONTRIB, 1, out) == HB_OK, "empty leaf");
  for (int i = 0; i < NR; i++)
    CHECK(out[i] == (LEAF_C[i] ? 0.0 : -2.0) && out[2 * NR + i] == 101, "empty leaf row %d: %g", i, out[i]);
  /* a node no row reached (a model text may say so): finite, still summing to the raw score */
  m->trees[2]->leaf_count[0] = 4;
  m->trees[2]->leaf_count[1] = 14;
  m->trees[0]->leaf_count[1] = m->trees[0]->leaf_count[2] = 0;
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_CONTRIB, 2, out) == HB_OK, "zero-cover node");
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 1, raw) == HB_OK, "raw");
  for (int i = 0; i < NR; i++)
    CHECK(isfinite(out[i]) && isfinite(out[NR + i]) && close_to(out[i] + out[NR + i] + out[2 * NR + i], raw[i]),
          "zero-cover row %d: %g %g %g vs %g", i, out[i], out[NR + i], out[2 * NR + i], raw[i]);
  m->trees[0]->leaf_count[1] = 6;
  m->trees[0]->leaf_count[2] = 7;
  /* a tree with no counts at all has no expectation to start from */
  m->trees[2]->leaf_count[0] = 0;
  m->trees[2]->leaf_count[1] = 0;
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_CONTRIB, 1, out) == HB_ERR_INPUT && strstr(hb_error_message(), "tree 3"),
        "no counts: %s", hb_error_message());
  hb_model_free(m);
}

/* Interaction values (shap.c) against the Shapley interaction index of the
 * two features worked out by hand: with two players it is v(xc) - v(x) -
 * v(c) + v(), halved on each side; only tree A splits on both, so tree C
 * (x alone) adds to x's diagonal only. Each row of a matrix sums to the
 * contribution, and the bias sits at (bias, bias). */
static void test_predict_interaction(void) {
  hb_model_t *m = model_reg();
  m->trees[2]->leaf_count[0] = 4;
  m->trees[2]->leaf_count[1] = 14;
  inputs_t in;
  make_inputs(&in);
  double phi[NR * 3], out[NR * 9], out2[NR * 9];
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_INTERACTION, 1, out) == HB_OK, "%s", hb_error_message());
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_CONTRIB, 1, phi) == HB_OK, "contrib");
  const double ea = (10.0 * 5 + 20.0 * 6 + 30.0 * 7) / 18;
  for (int i = 0; i < NR; i++) {
    const int xl = LEAF_A[i] == 0, cl = hb_tree_goes_left(m->trees[0], 1, C[i] == HB_NA_INT ? NAN : (double)C[i]);
    const double vx = xl ? 10.0 : (20.0 * 6 + 30.0 * 7) / 13, vc = (5.0 * 10 + 13.0 * (cl ? 20 : 30)) / 18;
    const double fa = (double[]){10, 20, 30}[LEAF_A[i]], ixc = (fa - vx - vc + ea) / 2;
    /* entry (a, b) at column b * 3 + a */
    const double xx = out[0 * NR + i], cx = out[1 * NR + i], xc = out[3 * NR + i], cc = out[4 * NR + i];
    CHECK(close_to(xc, ixc) && close_to(cx, ixc), "row %d: interaction %g %g (want %g)", i, xc, cx, ixc);
    CHECK(close_to(xx + xc, phi[i]) && close_to(cx + cc, phi[NR + i]), "row %d: rows sum to the contributions", i);
    CHECK(out[2 * NR + i] == 0 && out[5 * NR + i] == 0 && out[6 * NR + i] == 0 && out[7 * NR + i] == 0 &&
              close_to(out[8 * NR + i], phi[2 * NR + i]),
          "row %d: the bias only at (bias, bias)", i);
  }
  CHECK(hb_predict(m, &in.sparse, 0, 0, HB_PRED_INTERACTION, 2, out2) == HB_OK && memcmp(out, out2, sizeof out) == 0,
        "csc == dense, threads");
  /* a leaf no row reached: finite, rows still summing to the contributions */
  m->trees[0]->leaf_count[1] = 0;
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_INTERACTION, 2, out) == HB_OK, "zero-cover leaf");
  CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_CONTRIB, 2, phi) == HB_OK, "contrib");
  for (int i = 0; i < NR; i++)
    CHECK(isfinite(out[3 * NR + i]) && close_to(out[i] + out[3 * NR + i], phi[i]) &&
              close_to(out[NR + i] + out[4 * NR + i], phi[NR + i]),
          "zero-cover row %d", i);
  hb_model_free(m);
}

/* Refit (refit.c) of model_reg on the 7 rows: each tree's leaves from the
 * squared-error gradients at the running score, by hand, with decay and L2;
 * then the refusals. */
static void test_refit(void) {
  /* min_data_in_leaf 1, then 20: tree 1 is a lone root of the 7 rows, which
   * refits to its rows' output only where the root is a leaf the limits
   * allow (as in training); else it adds nothing */
  for (int pass = 0; pass < 2; pass++) {
    hb_model_t *m = model_reg();
    m->config.min_data_in_leaf = pass == 0 ? 1 : 20;
    inputs_t in;
    make_inputs(&in);
    double lf[NR * 3];
    CHECK(hb_predict(m, &in.dense, 0, 0, HB_PRED_LEAF, 1, lf) == HB_OK, "leaves");
    int leaf[NR * 3];
    for (int e = 0; e < NR * 3; e++) leaf[e] = (int)lf[e];
    const double y[NR] = {101, 95, 130, 125, 140, 90, 110}, w[NR] = {1, 2, 1, 1, 0.5, 1, 3};
    const double lr = m->config.learning_rate, l2 = 2, decay = 0.25;
    /* by hand: the old values, the running score */
    double old[3][3] = {{10, 20, 30}, {0.5, 0, 0}, {-1, 1, 0}}, want[3][3] = {{0}}, score[NR];
    const int L[3] = {3, 1, 2};
    for (int i = 0; i < NR; i++) score[i] = 100;
    for (int t = 0; t < 3; t++) {
      for (int l = 0; l < L[t]; l++) {
        double G = 0, H = 0;
        int n = 0;
        for (int i = 0; i < NR; i++)
          if (leaf[t * NR + i] == l) {
            G += w[i] * (score[i] - y[i]);
            H += w[i];
            n++;
          }
        const int counts = L[t] > 1 || (n >= m->config.min_data_in_leaf && H >= m->config.min_sum_hessian_in_leaf);
        want[t][l] = decay * old[t][l] + (1 - decay) * (n && counts ? lr * -G / (H + l2) : 0.0);
      }
      for (int i = 0; i < NR; i++) score[i] += want[t][leaf[t * NR + i]];
    }
    hb_refit_params_t p = {decay, 0, l2, 0, 2};
    CHECK(hb_refit_model(m, NR, leaf, y, w, NULL, &p) == HB_OK, "refit: %s", hb_error_message());
    for (int t = 0; t < 3; t++)
      for (int l = 0; l < L[t]; l++)
        CHECK(close_to(m->trees[t]->leaf_value[l], want[t][l]), "tree %d leaf %d: %g (want %g)", t, l,
              m->trees[t]->leaf_value[l], want[t][l]);
    CHECK(m->trees[0]->leaf_count[0] == 3 && m->trees[0]->leaf_count[1] == 2 && m->trees[0]->internal_count[0] == NR,
          "counts are the new rows'");
    CHECK(pass == 0 || m->trees[1]->leaf_value[0] == decay * old[1][0], "a lone root of 7 rows under min_data_in_leaf 20");
    if (pass == 0) {
      hb_model_free(m);
      continue;
    }
    leaf[4] = 3;
    CHECK(hb_refit_model(m, NR, leaf, y, NULL, NULL, &p) == HB_ERR_INPUT && strstr(hb_error_message(), "row 5"),
          "a leaf out of range: %s", hb_error_message());
    leaf[4] = 2;
    p.decay_rate = 1.5;
    CHECK(hb_refit_model(m, NR, leaf, y, NULL, NULL, &p) == HB_ERR_INPUT, "decay out of range");
    p.decay_rate = 0;
    m->config.objective = HB_OBJ_LAMBDARANK;
    CHECK(hb_refit_model(m, NR, leaf, y, NULL, NULL, &p) == HB_ERR_INPUT, "lambdarank refused");
    hb_model_free(m);
  }
}

/* Sparse rows walk zero chains (predict.c): checked against walking each
 * tree with hb_tree_goes_left on the row's dense values, here, for random
 * trees with long chains (one side of most splits a leaf), thresholds on
 * both sides of zero, both missing directions and categorical nodes, on
 * rows from nothing stored to every column stored (explicit zeros, NaN,
 * negative values). */
static uint64_t rng_state = 88172645463325252ULL;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 32) % n;
}

static int random_subtree(hb_tree_t *t, int nleaves, int nfeat, int *next_node, int *next_leaf) {
  if (nleaves == 1) {
    int l = (*next_leaf)++;
    t->leaf_value[l] = (double)(int)rnd(1000) / 8.0 - 60.0;
    return ~l;
  }
  int j = (*next_node)++;
  int nl = rnd(10) < 7 ? (rnd(2) ? 1 : nleaves - 1) : 1 + (int)rnd((uint32_t)nleaves - 1);
  t->split_feature[j] = (int)rnd((uint32_t)nfeat);
  t->decision[j] = rnd(2) ? HB_DECISION_DEFAULT_LEFT : 0;
  if (rnd(8) == 0) {
    uint32_t bits = (uint32_t)rnd(0xffffffffu) | 1u;
    t->decision[j] |= HB_DECISION_CATEGORICAL;
    t->cat_begin[j] = hb_tree_add_cat_bits(t, &bits, 1);
    t->cat_nwords[j] = 1;
  } else {
    const double th[5] = {-1.5, -0.25, 0.0, 0.5, 1.5};
    t->threshold[j] = th[rnd(5)];
  }
  t->left[j] = random_subtree(t, nl, nfeat, next_node, next_leaf);
  t->right[j] = random_subtree(t, nleaves - nl, nfeat, next_node, next_leaf);
  return j;
}

static hb_tree_t *random_tree(int nleaves, int nfeat) {
  hb_tree_t *t = hb_tree_create(nleaves);
  int nn = 0, nl = 0;
  t->num_leaves = nleaves;
  if (nleaves == 1)
    t->leaf_value[0] = 2.5;
  else
    random_subtree(t, nleaves, nfeat, &nn, &nl);
  return t;
}

static void test_predict_sparse_chains(void) {
  enum { P = 150, N = 300, T = 12 };
  char *names[P];
  int types[P], nlev[P];
  char **levels[P];
  char buf[P][16];
  for (int f = 0; f < P; f++) {
    snprintf(buf[f], sizeof buf[f], "f%d", f);
    names[f] = buf[f];
    types[f] = HB_FEAT_NUMERIC;
    nlev[f] = 0;
    levels[f] = NULL;
  }
  hb_schema_t src = {P, names, types, nlev, levels, NULL};
  /* rows: stored entries and their values (dense copy, 0 where nothing is stored) */
  static double dense[N][P];
  static int stored[N][P];
  const double vals[8] = {1.0, -1.0, 2.0, 0.0, NAN, 0.3, -0.25, 3.0};
  for (int i = 0; i < N; i++) {
    int k = i % 50 == 7 ? P : i % 50 == 8 ? P / 3 : (int)rnd(6);  /* a few rows dense, most sparse */
    for (int e = 0; e < k; e++) {
      int f = k == P ? e : (int)rnd(P);
      stored[i][f] = 1;
      dense[i][f] = vals[rnd(8)];
    }
  }
  int *cp = calloc(P + 1, sizeof(int)), nnz = 0;
  for (int f = 0; f < P; f++)
    for (int i = 0; i < N; i++) nnz += stored[i][f];
  int *ri = malloc(sizeof(int) * (size_t)nnz);
  double *cx = malloc(sizeof(double) * (size_t)nnz);
  int e = 0;
  for (int f = 0; f < P; f++) {
    for (int i = 0; i < N; i++)
      if (stored[i][f]) {
        ri[e] = i;
        cx[e++] = dense[i][f];
      }
    cp[f + 1] = e;
  }
  hb_csc_t csc = {cp, ri, cx};
  hb_input_t in;
  memset(&in, 0, sizeof in);
  in.nrow = N;
  in.ncol = P;
  in.csc = &csc;
  for (int K = 1; K <= 3; K += 2) {
    hb_model_t *m = hb_model_create();
    hb_schema_copy(&src, &m->schema);
    m->config.objective = K == 1 ? HB_OBJ_REGRESSION : HB_OBJ_MULTICLASS;
    m->config.num_class = m->num_class = m->trees_per_iter = K;
    m->init_score = hb_calloc((size_t)K, sizeof(double));
    for (int k = 0; k < K; k++) m->init_score[k] = 0.5 * k - 3.0;
    for (int t = 0; t < T * K; t++) hb_model_push_tree(m, random_tree(t % 5 == 4 ? 1 : 2 + (int)rnd(120), P));
    double *out = malloc(sizeof(double) * N * T * K), *lf = malloc(sizeof(double) * N * T * K);
    int bad_raw = 0, bad_leaf = 0, bad_range = 0;
    CHECK(hb_predict(m, &in, 0, 0, HB_PRED_RAW, 2, out) == HB_OK, "%s", hb_error_message());
    CHECK(hb_predict(m, &in, 0, 0, HB_PRED_LEAF, 2, lf) == HB_OK, "%s", hb_error_message());
    for (int i = 0; i < N; i++) {
      double s[3];
      for (int k = 0; k < K; k++) s[k] = m->init_score[k];
      for (int t = 0; t < T * K; t++) {
        const hb_tree_t *tr = m->trees[t];
        int n = tr->num_leaves > 1 ? 0 : ~0;
        while (n >= 0) n = hb_tree_goes_left(tr, n, dense[i][tr->split_feature[n]]) ? tr->left[n] : tr->right[n];
        s[t % K] += tr->leaf_value[~n];
        bad_leaf += lf[(size_t)t * N + i] != (double)~n;
      }
      for (int k = 0; k < K; k++) bad_raw += bits_of(out[(size_t)k * N + i]) != bits_of(s[k]);
    }
    CHECK(bad_raw == 0 && bad_leaf == 0, "K=%d: %d raw and %d leaf mismatches against walking the dense rows", K,
          bad_raw, bad_leaf);
    /* iterations 2.. 4: the sums restart at the initial scores */
    CHECK(hb_predict(m, &in, 2, 3, HB_PRED_RAW, 1, out) == HB_OK, "%s", hb_error_message());
    for (int i = 0; i < N; i++) {
      double s[3];
      for (int k = 0; k < K; k++) s[k] = m->init_score[k];
      for (int t = 2 * K; t < 5 * K; t++) s[t % K] += m->trees[t]->leaf_value[(int)lf[(size_t)t * N + i]];
      for (int k = 0; k < K; k++) bad_range += bits_of(out[(size_t)k * N + i]) != bits_of(s[k]);
    }
    CHECK(bad_range == 0, "K=%d: %d mismatches in an iteration range", K, bad_range);
    free(out);
    free(lf);
    hb_model_free(m);
  }
  free(cp);
  free(ri);
  free(cx);
}

/* ------------------------------------------------------------------ */
/* model text                                                          */

static uint64_t fnv(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/* Rewrite the checksum line of text (in place; it has a fixed width) to match the body. */
static void rechecksum(char *text, size_t len) {
  char *c = strstr(text, "checksum=");
  if (!c) return;
  char *body = strchr(c, '\n') + 1;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv(body, len - (size_t)(body - text)));
  memcpy(c + 9, hex, 16);
}

/* Replace the first occurrence of `from` with `to` in a new buffer, then fix the checksum. */
static char *edit(const char *text, const char *from, const char *to, size_t *len) {
  const char *at = strstr(text, from);
  if (!at) return NULL;
  size_t n = strlen(text) - strlen(from) + strlen(to);
  char *o = malloc(n + 1);
  size_t pre = (size_t)(at - text);
  memcpy(o, text, pre);
  strcpy(o + pre, to);
  strcat(o, at + strlen(from));
  *len = n;
  rechecksum(o, n);
  return o;
}

static int parse_fails(const char *text, size_t len, const char *want_in_msg) {
  hb_model_t *m = (hb_model_t *)1;
  int st = hb_model_from_string(text, len, &m);
  int ok = st == HB_ERR_FORMAT && m == NULL && (!want_in_msg || strstr(hb_error_message(), want_in_msg));
  if (!ok) printf("  parse: st=%d msg=%s\n", st, hb_error_message());
  hb_model_free(st == HB_OK ? m : NULL);
  return ok;
}

static hb_model_t *model_rich(void) {
  hb_model_t *m = model_reg();
  m->config.seed = 18446744073709551615ULL;
  m->config.learning_rate = 0.1 + 1e-17;  /* a value %.6g would not keep */
  m->config.lambda_l2 = 1.0 / 3.0;
  m->config.nthreads = -1;
  /* awkward strings: spaces, '=', '%', newline, UTF-8, empty */
  hb_free(m->schema.names[0]);
  m->schema.names[0] = strcpy(hb_malloc(32), "my x = 50% \xc3\xa9\n");
  hb_free(m->schema.levels[1][1]);
  m->schema.levels[1][1] = strcpy(hb_malloc(1), "");
  const char *lv[2] = {"", "b c"};
  hb_model_set_label_levels(m, 2, lv);
  hb_model_set_meta(m, "eval log", "iter=1 rmse=0.5\n[tree 0]\nend");
  hb_model_set_meta(m, "", "");
  m->best_iteration = 2;
  /* special doubles */
  hb_tree_t *a = m->trees[0];
  a->split_gain[0] = NAN;
  uint64_t na_bits = 0x7ff00000000007a2ULL; /* R's NA_real_ */
  memcpy(&a->split_gain[1], &na_bits, 8);
  a->internal_hess[0] = -0.0;
  a->leaf_hess[0] = 4.9406564584124654e-324;
  a->leaf_hess[1] = -INFINITY;
  a->leaf_hess[2] = 1.7976931348623157e308;
  m->trees[2]->threshold[0] = -0.0;
  return m;
}

static void same_tree_bits(const hb_tree_t *a, const hb_tree_t *b, int ti) {
  int L = a->num_leaves, ni = L - 1, ok = b->num_leaves == L && a->cat_nbits_words == b->cat_nbits_words;
  for (int i = 0; ok && i < ni; i++)
    ok = a->split_feature[i] == b->split_feature[i] && a->threshold_bin[i] == b->threshold_bin[i] &&
         bits_of(a->threshold[i]) == bits_of(b->threshold[i]) && a->decision[i] == b->decision[i] &&
         a->left[i] == b->left[i] && a->right[i] == b->right[i] &&
         bits_of(a->split_gain[i]) == bits_of(b->split_gain[i]) &&
         bits_of(a->internal_value[i]) == bits_of(b->internal_value[i]) &&
         bits_of(a->internal_hess[i]) == bits_of(b->internal_hess[i]) &&
         a->internal_count[i] == b->internal_count[i] && a->cat_begin[i] == b->cat_begin[i] &&
         a->cat_nwords[i] == b->cat_nwords[i];
  for (int j = 0; ok && j < L; j++)
    ok = bits_of(a->leaf_value[j]) == bits_of(b->leaf_value[j]) && bits_of(a->leaf_hess[j]) == bits_of(b->leaf_hess[j]) &&
         a->leaf_count[j] == b->leaf_count[j] && a->leaf_parent[j] == b->leaf_parent[j] &&
         a->leaf_depth[j] == b->leaf_depth[j];
  for (int w = 0; ok && w < a->cat_nbits_words; w++) ok = a->cat_bits[w] == b->cat_bits[w];
  CHECK(ok, "tree %d arrays bit-identical after round trip", ti);
}

static void test_io(void) {
  hb_model_t *m = model_rich();
  char *s1 = NULL, *s2 = NULL;
  size_t n1 = 0, n2 = 0;
  CHECK(hb_model_to_string(m, &s1, &n1) == HB_OK && s1 && strlen(s1) == n1, "write: %s", hb_error_message());
  if (!s1) return;
  CHECK(strncmp(s1, "histboost_model\nformat_version=1\nchecksum=", 42) == 0, "header");
  CHECK(strstr(s1, "feature=my%20x%20%3D%2050%25%20%C3%A9%0A\n") != NULL, "percent-encoding");
  CHECK(strstr(s1, "split_gain=nan nan:7ff00000000007a2\n") != NULL, "NaN spelling");
  hb_model_t *r = NULL;
  CHECK(hb_model_from_string(s1, n1, &r) == HB_OK && r, "read: %s", hb_error_message());
  if (!r) return;
  CHECK(hb_model_to_string(r, &s2, &n2) == HB_OK && n1 == n2 && memcmp(s1, s2, n1) == 0,
        "written twice: byte-identical");
  CHECK(memcmp(&m->config, &r->config, sizeof(hb_config_t)) == 0 || (m->config.seed == r->config.seed &&
        bits_of(m->config.learning_rate) == bits_of(r->config.learning_rate)), "config");
  CHECK(r->config.seed == 18446744073709551615ULL && bits_of(r->config.learning_rate) == bits_of(0.1 + 1e-17),
        "config exact");
  CHECK(strcmp(r->schema.names[0], "my x = 50% \xc3\xa9\n") == 0 && strcmp(r->schema.levels[1][1], "") == 0 &&
            r->schema.types[1] == HB_FEAT_CATEGORICAL && r->schema.nlevels[1] == 3 && r->schema.levels[0] == NULL,
        "schema strings");
  CHECK(r->nlabel_levels == 2 && strcmp(r->label_levels[1], "b c") == 0 && strcmp(r->label_levels[0], "") == 0,
        "labels");
  CHECK(r->nmeta == 2 && strcmp(test_model_get_meta(r, "eval log"), "iter=1 rmse=0.5\n[tree 0]\nend") == 0 &&
            test_model_get_meta(r, "") != NULL,
        "meta");
  CHECK(r->best_iteration == 2 && r->num_trees == 3 && r->init_score[0] == 100, "model fields");
  for (int t = 0; t < 3; t++) same_tree_bits(m->trees[t], r->trees[t], t);
  inputs_t in;
  make_inputs(&in);
  double p1[NR * 3], p2[NR * 3];
  hb_predict(m, &in.dense, 0, 0, HB_PRED_RAW, 1, p1);
  hb_predict(r, &in.dense, 0, 0, HB_PRED_RAW, 1, p2);
  CHECK(memcmp(p1, p2, sizeof(double) * NR) == 0, "predictions identical after round trip");
  hb_model_free(r);
  free(s2);

  /* The thread count is not part of a model: the writer stores the default
   * whatever the config says (m has nthreads = -1), so models that differ only
   * in it have byte-identical text; the reader takes any value (old files). */
  CHECK(strstr(s1, "\nseed=18446744073709551615\nnthreads=0\n[schema]\n") != NULL, "nthreads written as 0");
  {
    char *s3 = NULL;
    size_t n3 = 0;
    m->config.nthreads = 7;
    CHECK(hb_model_to_string(m, &s3, &n3) == HB_OK && n3 == n1 && memcmp(s1, s3, n1) == 0,
          "nthreads = 7: the same text");
    free(s3);
    size_t ne = 0;
    char *e = edit(s1, "\nnthreads=0\n", "\nnthreads=12\n", &ne);
    hb_model_t *x = NULL;
    CHECK(e && hb_model_from_string(e, ne, &x) == HB_OK && x && x->config.nthreads == 12,
          "an old file's nthreads=12 is read: %s", hb_error_message());
    hb_model_free(x);
    free(e);
  }

  /* corruption */
  char *t = malloc(n1 + 1);
  memcpy(t, s1, n1 + 1);
  size_t body = (size_t)(strstr(t, "[config]") - t);
  t[body + 100] ^= 0x01;
  CHECK(parse_fails(t, n1, "checksum mismatch"), "one flipped byte");
  t[body + 100] ^= 0x01;
  t[n1 - 3] ^= 0x20;
  CHECK(parse_fails(t, n1, "checksum mismatch"), "flipped byte at the end");
  free(t);
  int trunc_ok = 1;
  for (size_t k = 0; k < n1 - 1; k++) {
    hb_model_t *x = NULL;
    int st = hb_model_from_string(s1, k, &x);
    if (st != HB_ERR_FORMAT || x) trunc_ok = 0;
    hb_model_free(x);
  }
  CHECK(trunc_ok, "every truncation rejected");
  /* truncation with a recomputed checksum still fails, on structure */
  {
    char *u = malloc(n1 + 1);
    size_t k = (size_t)(strstr(s1, "[tree 2]") - s1);
    memcpy(u, s1, k);
    u[k] = '\0';
    rechecksum(u, k);
    CHECK(parse_fails(u, k, NULL), "truncated at a tree, valid checksum");
    free(u);
  }
  /* the last newline is optional */
  {
    hb_model_t *x = NULL;
    CHECK(hb_model_from_string(s1, n1 - 1, &x) == HB_ERR_FORMAT, "dropping the final newline changes the checksum");
    char *u = malloc(n1 + 1);
    memcpy(u, s1, n1 + 1);
    u[n1 - 1] = '\0';
    rechecksum(u, n1 - 1);
    CHECK(hb_model_from_string(u, n1 - 1, &x) == HB_OK, "no final newline: %s", hb_error_message());
    hb_model_free(x);
    free(u);
  }
  size_t n;
  char *e;
#define EDIT_FAILS(from, to, msg)                                  \
  do {                                                             \
    e = edit(s1, from, to, &n);                                    \
    CHECK(e && parse_fails(e, n, msg), "edit '%s' -> '%s'", from, to); \
    free(e);                                                       \
  } while (0)
  EDIT_FAILS("format_version=1", "format_version=2", "newer");
  EDIT_FAILS("format_version=1", "format_version=0", "format_version");
  EDIT_FAILS("histboost_model", "histboost_modex", "not a histboost model");
  EDIT_FAILS("left=-1 -2", "left=-2 -2", "two parents");
  EDIT_FAILS("right=1 -3", "right=1 -1", "two parents");
  {
    /* node 1 made its own child: a detached cycle (depth and parent of leaf 2 fixed up so
     * that only reachability is wrong) */
    size_t n2x, n3x;
    char *e1 = edit(s1, "right=1 -3", "right=-3 1", &n);
    char *e2 = edit(e1, "leaf_parent=0 1 1", "leaf_parent=0 1 0", &n2x);
    char *e3 = edit(e2, "leaf_depth=1 2 2", "leaf_depth=1 2 1", &n3x);
    CHECK(parse_fails(e3, n3x, "not reachable from the root"), "cycle");
    free(e1);
    free(e2);
    free(e3);
  }
  EDIT_FAILS("right=1 -3", "right=5 -3", "right child 5");
  EDIT_FAILS("right=1 -3", "right=-9 -3", "leaf 8");
  EDIT_FAILS("right=1 -3", "right=0 -3", "right child 0");
  EDIT_FAILS("right=1 -3", "right=1 -2", "two parents");
  EDIT_FAILS("split_feature=0 1", "split_feature=0 2", "split_feature 2");
  EDIT_FAILS("split_feature=0 1", "split_feature=1 1", "numeric split on categorical");
  EDIT_FAILS("split_feature=0 1", "split_feature=0 1 1", "3 values, expected 2");
  EDIT_FAILS("split_feature=0 1", "split_feature=0  1", "values");
  EDIT_FAILS("split_feature=0 1", "split_feature=0 1 ", "values");
  EDIT_FAILS("split_feature=0 1", "split_feature=0 1x", "not valid");
  EDIT_FAILS("cat_begin=0 0", "cat_begin=0 1", "outside cat_bits");
  EDIT_FAILS("cat_nwords=0 1", "cat_nwords=0 2", "outside cat_bits");
  EDIT_FAILS("num_cat_words=1", "num_cat_words=0", "cat_bits has 1 values");
  EDIT_FAILS("leaf_depth=1 2 2", "leaf_depth=1 2 3", "leaf_depth");
  EDIT_FAILS("leaf_parent=0 1 1", "leaf_parent=0 0 1", "leaf_parent");
  EDIT_FAILS("num_leaves=3", "num_leaves=2000000000", "num_leaves");
  EDIT_FAILS("num_leaves=3", "num_leaves=99999999999", "num_leaves");
  EDIT_FAILS("num_trees=3", "num_trees=2147483647", "num_trees");
  EDIT_FAILS("num_features=2", "num_features=1000000000", "num_features");
  EDIT_FAILS("num_levels=3", "num_levels=2147483647", "num_levels");
  EDIT_FAILS("num_cat_words=1", "num_cat_words=1000000000", "num_cat_words");
  EDIT_FAILS("num_meta=2", "num_meta=-1", "num_meta");
  EDIT_FAILS("num_labels=2", "num_labels=3", "expected 'label='");
  EDIT_FAILS("[model]\nnum_class=1", "[model]\nnum_class=2", "num_class");
  EDIT_FAILS("best_iteration=2", "best_iteration=4", "best_iteration");
  EDIT_FAILS("num_leaves=31", "num_leaves=1", "num_leaves must be between");
  EDIT_FAILS("learning_rate=", "learning_rate=x", "learning_rate");
  EDIT_FAILS("objective=regression", "objective=listnet", "objective");
  EDIT_FAILS("seed=18446744073709551615", "seed=18446744073709551616", "seed");
  EDIT_FAILS("seed=18446744073709551615", "seed=-1", "seed");
  EDIT_FAILS("threshold=1.5", "threshold=1e999", "threshold");
  EDIT_FAILS("threshold=1.5", "threshold=0x1p3", "threshold");
  EDIT_FAILS("threshold=1.5", "threshold=infinity", "threshold");
  EDIT_FAILS("feature=c", "feature=c d", "percent-encoded");
  EDIT_FAILS("feature=c", "feature=%4", "percent escape");
  EDIT_FAILS("feature=c", "feature=%00", "percent escape");
  EDIT_FAILS("type=numeric", "type=interval", "type");
  EDIT_FAILS("type=numeric", "type=ordinal", "levels");  /* an ordinal feature keeps its levels */
  EDIT_FAILS("decision=1 2", "decision=5 2", "unknown bits");
  EDIT_FAILS("num_meta=2", "num_meta=3", "expected 'key='");
  EDIT_FAILS("num_meta=2\nkey=eval%20log", "num_meta=2\nkey=", "twice");
  EDIT_FAILS("[tree 1]", "[tree 7]", "expected '[tree 1]'");
  EDIT_FAILS("\nend\n", "\nend\nmore\n", "after 'end'");
  EDIT_FAILS("\nend\n", "\n", "'end'");
  EDIT_FAILS("[labels]", "[labels]\r", "carriage return");
  /* a detached cycle: 4-leaf tree whose nodes 1 and 2 point at each other */
  {
    hb_model_t *c = model_reg();
    hb_tree_t *big = hb_tree_create(4);
    big->num_leaves = 4;
    int sf[3] = {0, 0, 0}, lt[3] = {~0, 2, 1}, rt[3] = {~1, ~2, ~3};
    for (int i = 0; i < 3; i++) {
      big->split_feature[i] = sf[i];
      big->left[i] = lt[i];
      big->right[i] = rt[i];
    }
    hb_model_push_tree(c, big);
    char *cs = NULL;
    size_t cn = 0;
    CHECK(hb_model_to_string(c, &cs, &cn) == HB_ERR_INTERNAL && cs == NULL, "writer refuses a broken tree: %s",
          hb_error_message());
    hb_model_free(c);
  }
  /* random bytes and random text never crash */
  {
    uint64_t z = 12345;
    char buf[512];
    int ok = 1;
    for (int rep = 0; rep < 2000; rep++) {
      size_t k = (size_t)(rep % 511) + 1;
      for (size_t i = 0; i < k; i++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[i] = (char)(z >> 56);
      }
      if (rep % 2) memcpy(buf, "histboost_model\nformat_version=1\n", k < 33 ? k : 33);
      hb_model_t *x = NULL;
      if (hb_model_from_string(buf, k, &x) != HB_ERR_FORMAT || x) ok = 0;
      hb_model_free(x);
    }
    CHECK(ok, "random inputs rejected");
  }
  /* every byte changed (to a few values), checksum recomputed: parse either works
   * and re-serializes, or fails with HB_ERR_FORMAT; never anything else */
  {
    const char subs[] = {'0', '9', '-', ' ', '\n', 'x', '%', '='};
    size_t start = (size_t)(strstr(s1, "[config]") - s1);
    int ok = 1, nok = 0, nerr = 0;
    char *u = malloc(n1 + 1);
    for (size_t pos = start; pos < n1; pos++) {
      for (size_t q = 0; q < sizeof subs; q++) {
        if (s1[pos] == subs[q]) continue;
        memcpy(u, s1, n1 + 1);
        u[pos] = subs[q];
        rechecksum(u, n1);
        hb_model_t *x = NULL;
        int st = hb_model_from_string(u, n1, &x);
        if (st == HB_OK) {
          char *w = NULL;
          size_t wn;
          nok++;
          double pr[NR * 9];
          if (hb_model_to_string(x, &w, &wn) != HB_OK) ok = 0;
          int it = hb_model_num_iterations(x);
          /* the altered model must still predict without incident */
          if (x->schema.nfeat == 2 && hb_predict(x, &in.sparse, 0, 0, HB_PRED_RAW, 1, pr) != HB_OK &&
              x->num_class <= 9 && it >= 0)
            ok = 0;
          hb_free(w);
        } else if (st == HB_ERR_FORMAT) {
          nerr++;
        } else {
          ok = 0;
        }
        hb_model_free(x);
      }
    }
    free(u);
    CHECK(ok && nerr > 0, "single-byte edits: %d parsed, %d rejected", nok, nerr);
  }
  CHECK(parse_fails("", 0, "empty"), "empty");
  CHECK(parse_fails("histboost_model", 15, "format_version"), "header only");
  CHECK(parse_fails("histboost_model\0x", 17, "NUL"), "NUL byte");
  free(s1);
  hb_model_free(m);

  /* an empty model (no features, no trees, NULL init score) round-trips too */
  m = hb_model_create();
  CHECK(hb_model_to_string(m, &s1, &n1) == HB_OK, "empty model: %s", hb_error_message());
  CHECK(hb_model_from_string(s1, n1, &r) == HB_OK && r->num_trees == 0 && r->init_score[0] == 0.0, "empty back");
  CHECK(hb_model_to_string(r, &s2, &n2) == HB_OK && n1 == n2 && memcmp(s1, s2, n1) == 0, "empty twice");
  double o = -1;
  hb_input_t none = {1, 0, NULL, NULL, NULL, NULL, NULL, 0};
  hb_column_t nocol;
  none.cols = &nocol;
  CHECK(hb_predict(r, &none, 0, 0, HB_PRED_RAW, 1, &o) == HB_OK && o == 0.0, "empty model predicts 0");
  free(s1);
  free(s2);
  hb_model_free(m);
  hb_model_free(r);
}

/* Monotone constraints in the text: a line only when one is set, read back
 * as written, malformed values refused. */
static void test_io_monotone(void) {
  hb_model_t *m = model_reg(), *r = NULL;
  char *s1 = NULL, *s2 = NULL, *e;
  size_t n1 = 0, n2 = 0, ne = 0;
  CHECK(hb_model_to_string(m, &s1, &n1) == HB_OK && !strstr(s1, "monotone"), "a line without constraints");
  free(s1);
  m->schema.monotone = hb_calloc(2, sizeof(int));
  CHECK(hb_model_to_string(m, &s1, &n1) == HB_OK && !strstr(s1, "monotone"), "a line for all-zero constraints");
  free(s1);
  m->schema.monotone[0] = -1;
  CHECK(hb_model_to_string(m, &s1, &n1) == HB_OK && strstr(s1, "\nlevel=c\nmonotone_constraints=-1 0\n[labels]\n"),
        "the constraints line after the features");
  CHECK(hb_model_from_string(s1, n1, &r) == HB_OK && r->schema.monotone && r->schema.monotone[0] == -1 &&
        r->schema.monotone[1] == 0, "constraints read back: %s", hb_error_message());
  CHECK(r && hb_model_to_string(r, &s2, &n2) == HB_OK && n1 == n2 && memcmp(s1, s2, n1) == 0, "twice");
  e = edit(s1, "monotone_constraints=-1 0", "monotone_constraints=-1 1", &ne);
  CHECK(e && parse_fails(e, ne, "categorical"), "a constraint on a categorical feature");
  free(e);
  e = edit(s1, "monotone_constraints=-1 0", "monotone_constraints=2 0", &ne);
  CHECK(e && parse_fails(e, ne, "monotone_constraints"), "a constraint of 2");
  free(e);
  e = edit(s1, "monotone_constraints=-1 0", "monotone_constraints=-1", &ne);
  CHECK(e && parse_fails(e, ne, "monotone_constraints has 1 values, expected 2"), "one value for two features");
  free(e);
  m->schema.monotone[1] = 1;  /* the writer refuses what the reader would */
  char *bad = NULL;
  size_t nb = 0;
  CHECK(hb_model_to_string(m, &bad, &nb) != HB_OK && !bad, "wrote a constraint on a categorical feature");
  free(s1);
  free(s2);
  hb_model_free(m);
  hb_model_free(r);
}

/* Binned routing (training scores) and raw routing (prediction) agree on every row. */
static void test_binned_vs_raw(void) {
  inputs_t in;
  make_inputs(&in);
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.min_data_in_bin = 1;
  hb_dataset_t *d = NULL;
  /* dense only: from a CSC matrix, feature c would be binned as numeric, which a
   * categorical split cannot be routed on */
  for (int sparse = 0; sparse < 1; sparse++) {
    int st = hb_dataset_create(sparse ? &in.sparse : &in.dense, &bp, NULL, &d);
    CHECK(st == HB_OK, "dataset: %s", hb_error_message());
    if (st) return;
    hb_model_t *m = model_reg();
    /* thresholds from the dataset's own mapper, as the grower records them */
    m->trees[0]->threshold[0] = d->mappers[0].upper[m->trees[0]->threshold_bin[0]];
    m->trees[2]->threshold[0] = d->mappers[0].upper[m->trees[2]->threshold_bin[0]];
    CHECK(m->trees[0]->threshold[0] == 1.5 && m->trees[2]->threshold[0] == 0.5, "bin bounds %g %g",
          m->trees[0]->threshold[0], m->trees[2]->threshold[0]);
    double lf[NR * 3];
    CHECK(hb_predict(m, sparse ? &in.sparse : &in.dense, 0, 0, HB_PRED_LEAF, 2, lf) == HB_OK, "leaf");
    for (int t = 0; t < 3; t++)
      for (int i = 0; i < NR; i++)
        CHECK(hb_tree_leaf_binned(m->trees[t], d, i) == (int)lf[t * NR + i], "binned vs raw: tree %d row %d: %d vs %g", t, i, hb_tree_leaf_binned(m->trees[t], d, i), lf[t * NR + i]);
    hb_model_free(m);
    hb_dataset_free(d);
  }
}

/* A factor of 11 levels at max_bin 4 spans three features (levels by
 * frequency: 1-4, 5-8, 9-11). Splits recorded on its second and third
 * features name the column, and binned rows (their level found in whichever
 * feature holds it) go where raw level codes go, NA and levels merged away
 * included. */
static void test_binned_wide_factor(void) {
  enum { N = 80 };
  int x[N];
  double y[N];
  for (int r = 0; r < N; r++) {  /* level c has 13 - c rows (1..11), NA for the rest */
    int c = 1, k = r;
    while (c <= 11 && k >= 13 - c) { k -= 13 - c; c++; }
    x[r] = c <= 11 ? c : HB_NA_INT;
    y[r] = r;
  }
  hb_column_t col = {HB_COL_FACTOR, NULL, x, 12};  /* level 12 never seen */
  hb_input_t in = {N, 1, &col, NULL, y, NULL, NULL, 0};
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  bp.max_bin = 4;
  hb_dataset_t *d = NULL;
  int st = hb_dataset_create(&in, &bp, NULL, &d);
  CHECK(st == HB_OK && d->nfeat == 3 && d->ncol == 1, "wide dataset: %s", hb_error_message());
  if (st != HB_OK || d->nfeat != 3) { hb_dataset_free(d); return; }
  hb_tree_t *t = hb_tree_create(4);
  uint32_t bits1[8] = {0}, bits2[8] = {0};
  bits1[0] = (1u << 1) | (1u << 4);  /* feature 1: its bin 1 (level 6) and its missing bin go left */
  bits2[0] = 1u << 0;                /* feature 2: its bin 0 (level 9) goes left, missing right */
  hb_tree_split_t s1 = {0, 1, -1, 1, bits1, 1.0, {-1, 1}, {1, 1}, {1, 1}};
  hb_tree_split_t s2 = {0, 1, -1, 0, bits2, 1.0, {-2, 2}, {1, 1}, {1, 1}};
  CHECK(t && hb_tree_split_leaf(t, 0, &d->mappers[1], &s1) == HB_OK &&
            hb_tree_split_leaf(t, 0, &d->mappers[2], &s2) == HB_OK && t->split_feature[0] == 0 &&
            t->split_feature[1] == 0,
        "wide splits recorded on column 0");
  if (t && t->num_leaves == 3) {
    int ok = 1;
    double codes[] = {NAN, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    /* leaf by raw code (NaN, 1..12): at the root levels 5, 7, 8 go right (leaf 1), the rest
     * (level 6, and with the missing bin levels 1-4, 9-12 and NaN) left; there level 9 goes
     * left (leaf 0), and the missing bin (all but 9-11, NaN, unseen 12) right (leaf 2) */
    int want[] = {2, 2, 2, 2, 2, 1, 2, 1, 1, 0, 2, 2, 2};
    for (int k = 0; k < 13; k++) {
      int node = 0;
      while (node >= 0) node = hb_tree_goes_left(t, node, codes[k]) ? t->left[node] : t->right[node];
      ok = ok && ~node == want[k];
    }
    CHECK(ok, "wide factor: raw routing follows the level bits");
    ok = 1;
    for (int r = 0; r < N; r++) {
      int node = 0;
      double v = x[r] == HB_NA_INT ? NAN : x[r];
      while (node >= 0) node = hb_tree_goes_left(t, node, v) ? t->left[node] : t->right[node];
      ok = ok && hb_tree_leaf_binned(t, d, r) == ~node;
    }
    CHECK(ok, "wide factor: binned routing equals raw routing on every row");
  }
  hb_tree_free(t);
  hb_dataset_free(d);
}

/* ------------------------------------------------------------------ */
/* metrics                                                             */

static double brute_auc(int n, const double *s, const double *y, const double *w) {
  double num = 0, wp = 0, wn = 0;
  for (int i = 0; i < n; i++) {
    double wi = w ? w[i] : 1;
    if (y[i] == 1) wp += wi;
    else wn += wi;
    if (y[i] != 1) continue;
    for (int j = 0; j < n; j++) {
      if (y[j] != 0) continue;
      double wj = w ? w[j] : 1;
      num += wi * wj * (s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0);
    }
  }
  return num / (wp * wn);
}

static void test_metrics(void) {
  double v;
  double s[3] = {1, 2, 3}, y[3] = {1, 1, 1}, w[3] = {1, 2, 3};
  CHECK(hb_metric_eval(HB_METRIC_RMSE, NULL, 3, 1, s, y, NULL, 1, &v) == HB_OK && close_to(v, sqrt(5.0 / 3)), "rmse");
  CHECK(hb_metric_eval(HB_METRIC_RMSE, NULL, 3, 1, s, y, w, 1, &v) == HB_OK && close_to(v, sqrt(14.0 / 6)), "rmse w");
  CHECK(hb_metric_eval(HB_METRIC_MAE, NULL, 3, 1, s, y, NULL, 1, &v) == HB_OK && close_to(v, 1.0), "mae");
  CHECK(hb_metric_eval(HB_METRIC_MAE, NULL, 3, 1, s, y, w, 1, &v) == HB_OK && close_to(v, 8.0 / 6), "mae w");
  double sb[2] = {0, log(3.0)}, yb[2] = {1, 0}, wb[2] = {3, 1};
  CHECK(hb_metric_eval(HB_METRIC_LOGLOSS, NULL, 2, 1, sb, yb, NULL, 1, &v) == HB_OK &&
            close_to(v, (-log(0.5) - log(0.25)) / 2),
        "logloss %g", v);
  CHECK(hb_metric_eval(HB_METRIC_LOGLOSS, NULL, 2, 1, sb, yb, wb, 1, &v) == HB_OK &&
            close_to(v, (-3 * log(0.5) - log(0.25)) / 4),
        "logloss w");
  double sx[1] = {-1000}, yx[1] = {1};
  CHECK(hb_metric_eval(HB_METRIC_LOGLOSS, NULL, 1, 1, sx, yx, NULL, 1, &v) == HB_OK && close_to(v, -log(1e-15)),
        "logloss clipped");
  /* AUC with ties: scores 1,2,2,3, labels 0,0,1,1 -> 3.5/4; weighted 1,2,3,4 -> 18/21 */
  double sa[4] = {1, 2, 2, 3}, ya[4] = {0, 0, 1, 1}, wa[4] = {1, 2, 3, 4};
  CHECK(hb_metric_eval(HB_METRIC_AUC, NULL, 4, 1, sa, ya, NULL, 1, &v) == HB_OK && close_to(v, 0.875), "auc ties %g", v);
  CHECK(hb_metric_eval(HB_METRIC_AUC, NULL, 4, 1, sa, ya, wa, 1, &v) == HB_OK && close_to(v, 18.0 / 21), "auc w %g", v);
  CHECK(hb_metric_higher_better(HB_METRIC_AUC) == 1 && hb_metric_higher_better(HB_METRIC_RMSE) == 0, "higher better");
  double sc[3] = {-1, 0, 2}, yc[3] = {0, 1, 1};
  CHECK(hb_metric_eval(HB_METRIC_ERROR, NULL, 3, 1, sc, yc, NULL, 1, &v) == HB_OK && close_to(v, 1.0 / 3), "error");
  /* multiclass: row 0 scores (0,0,0) label 2; row 1 (0, ln2, 0) label 1 */
  double sm[6] = {0, 0, 0, log(2.0), 0, 0}, ym[2] = {2, 1}, wm[2] = {1, 3};
  CHECK(hb_metric_eval(HB_METRIC_MULTI_LOGLOSS, NULL, 2, 3, sm, ym, NULL, 1, &v) == HB_OK &&
            close_to(v, (log(3.0) + log(2.0)) / 2),
        "multi_logloss %g", v);
  CHECK(hb_metric_eval(HB_METRIC_MULTI_LOGLOSS, NULL, 2, 3, sm, ym, wm, 1, &v) == HB_OK &&
            close_to(v, (log(3.0) + 3 * log(2.0)) / 4),
        "multi_logloss w");
  /* multi_error: row 0 all tied -> class 0 (first max) != 2: error; row 1 argmax 1: right */
  CHECK(hb_metric_eval(HB_METRIC_MULTI_ERROR, NULL, 2, 3, sm, ym, NULL, 1, &v) == HB_OK && close_to(v, 0.5), "multi_error");
  double ym0[2] = {0, 1};
  CHECK(hb_metric_eval(HB_METRIC_MULTI_ERROR, NULL, 2, 3, sm, ym0, NULL, 1, &v) == HB_OK && v == 0.0, "first max wins");
  /* input errors */
  double ybad[2] = {2, 0};
  CHECK(hb_metric_eval(HB_METRIC_LOGLOSS, NULL, 2, 1, sb, ybad, NULL, 1, &v) == HB_ERR_INPUT, "binary label 2");
  double w0[2] = {0, 0};
  CHECK(hb_metric_eval(HB_METRIC_RMSE, NULL, 2, 1, sb, yb, w0, 1, &v) == HB_ERR_INPUT, "zero weights");
  double wneg[2] = {1, -1};
  CHECK(hb_metric_eval(HB_METRIC_RMSE, NULL, 2, 1, sb, yb, wneg, 1, &v) == HB_ERR_INPUT, "negative weight");
  CHECK(hb_metric_eval(HB_METRIC_MULTI_ERROR, NULL, 2, 1, sb, yb, NULL, 1, &v) == HB_ERR_INPUT, "multi needs K");
  CHECK(hb_metric_eval(HB_METRIC_RMSE, NULL, 0, 1, sb, yb, NULL, 1, &v) == HB_ERR_INPUT, "no rows");
  CHECK(hb_metric_eval(42, NULL, 2, 1, sb, yb, NULL, 1, &v) == HB_ERR_INPUT, "unknown metric");

  /* the regression family's losses, worked by hand: scores s = log(mu) */
  {
    const double s2[2] = {0.0, log(2.0)}, y2[2] = {1.0, 3.0}, w2[2] = {1.0, 3.0};
    hb_config_t c;
    hb_config_default(&c);
    c.objective = HB_OBJ_POISSON;
    /* poisson: mean of mu - y s */
    CHECK(hb_metric_eval(HB_METRIC_POISSON, &c, 2, 1, s2, y2, NULL, 1, &v) == HB_OK &&
              close_to(v, ((1 - 0) + (2 - 3 * log(2.0))) / 2),
          "poisson %g", v);
    /* rmse of the response exp(s) under a log link, weighted: ((1-1)^2 + 3 (2-3)^2) / 4 */
    CHECK(hb_metric_eval(HB_METRIC_RMSE, &c, 2, 1, s2, y2, w2, 1, &v) == HB_OK && close_to(v, sqrt(3.0 / 4)),
          "rmse on the response %g", v);
    CHECK(hb_metric_eval(HB_METRIC_MAE, &c, 2, 1, s2, y2, NULL, 1, &v) == HB_OK && close_to(v, 0.5), "mae response");
    /* gamma: y / mu + log mu */
    CHECK(hb_metric_eval(HB_METRIC_GAMMA, &c, 2, 1, s2, y2, NULL, 1, &v) == HB_OK &&
              close_to(v, (1.0 + (1.5 + log(2.0))) / 2),
          "gamma %g", v);
    /* tweedie p = 1.5: -y mu^-0.5 / -0.5 + mu^0.5 / 0.5 */
    c.tweedie_variance_power = 1.5;
    CHECK(hb_metric_eval(HB_METRIC_TWEEDIE, &c, 2, 1, s2, y2, NULL, 1, &v) == HB_OK &&
              close_to(v, ((2.0 + 2.0) + (2 * 3 / sqrt(2.0) + 2 * sqrt(2.0))) / 2),
          "tweedie %g", v);
    /* huber delta 1 on raw scores: residuals -1 (quadratic, 0.5) and log 2 - 3 (linear) */
    c.objective = HB_OBJ_HUBER;
    CHECK(hb_metric_eval(HB_METRIC_HUBER, &c, 2, 1, s2, y2, NULL, 1, &v) == HB_OK &&
              close_to(v, (0.5 + (3 - log(2.0) - 0.5)) / 2),
          "huber %g", v);
  }

  /* larger random set: AUC against the brute force; every metric independent of threads */
  int n = 3000, K = 3, big = 50000;
  double *S = malloc(sizeof(double) * (size_t)big * K), *Y = malloc(sizeof(double) * big),
         *W = malloc(sizeof(double) * big), *YK = malloc(sizeof(double) * big);
  uint64_t z = 99;
  for (int i = 0; i < big * K; i++) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    S[i] = (double)((z >> 40) % 50) / 7.0 - 3;  /* coarse: many ties */
  }
  for (int i = 0; i < big; i++) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    Y[i] = (double)((z >> 33) & 1);
    YK[i] = (double)((z >> 35) % 3);
    W[i] = (double)((z >> 45) % 5) * 0.25;
  }
  CHECK(hb_metric_eval(HB_METRIC_AUC, NULL, n, 1, S, Y, W, 2, &v) == HB_OK && close_to(v, brute_auc(n, S, Y, W)),
        "auc vs brute force (weighted)");
  CHECK(hb_metric_eval(HB_METRIC_AUC, NULL, n, 1, S, Y, NULL, 2, &v) == HB_OK && close_to(v, brute_auc(n, S, Y, NULL)),
        "auc vs brute force");
  int mets[7] = {HB_METRIC_RMSE, HB_METRIC_MAE, HB_METRIC_LOGLOSS, HB_METRIC_AUC, HB_METRIC_ERROR,
                 HB_METRIC_MULTI_LOGLOSS, HB_METRIC_MULTI_ERROR};
  for (int q = 0; q < 7; q++) {
    int kk = q >= 5 ? K : 1;
    const double *yy = q >= 5 ? YK : Y;
    double v1, v2, v3;
    int st = hb_metric_eval(mets[q], NULL, big, kk, S, yy, W, 1, &v1) |
             hb_metric_eval(mets[q], NULL, big, kk, S, yy, W, 2, &v2) |
             hb_metric_eval(mets[q], NULL, big, kk, S, yy, W, 7, &v3);
    CHECK(st == HB_OK && bits_of(v1) == bits_of(v2) && bits_of(v1) == bits_of(v3), "metric %d thread-independent",
          mets[q]);
  }
  /* weighted rmse against a direct double loop (different summation order, so a tolerance) */
  double sl = 0, sw = 0;
  for (int i = 0; i < big; i++) {
    sl += W[i] * (S[i] - Y[i]) * (S[i] - Y[i]);
    sw += W[i];
  }
  CHECK(hb_metric_eval(HB_METRIC_RMSE, NULL, big, 1, S, Y, W, 2, &v) == HB_OK && fabs(v - sqrt(sl / sw)) < 1e-10,
        "rmse large");
  free(S);
  free(Y);
  free(W);
  free(YK);
}

int main(void) {
  test_config();
  test_model_basics();
  test_tree_routing();
  test_predict();
  test_predict_sparse_chains();
  test_predict_contrib();
  test_predict_interaction();
  test_refit();
  test_objective_quantile();
  test_binned_vs_raw();
  test_binned_wide_factor();
  test_io();
  test_io_monotone();
  test_metrics();
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
