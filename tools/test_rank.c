/* test_rank.c: engine-only checks of learning to rank (rank.h) against a
 * brute force written here: LightGBM's lambdarank loop, NDCG@k and MAP@k run on
 * every order of the tied documents of a small query and averaged (the
 * expectation rank.h promises), then normalised; a three-document query
 * worked by hand; non-contiguous queries; the same values for 1 and 3
 * threads; label checks. Run by tools/Makefile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "rank.h"
#include "error.h"
#include "boost.h"
#include "dataset.h"
#include "metric.h"
#include "model_io.h"

#include "test_check.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1.0 + fabs(a) + fabs(b)); }

#define MAXM 7

/* LightGBM's GetGradientsForOneQuery for the documents in the order ord
 * (which sorts the scores descending), before normalisation: lam, hes and
 * the sum of |lambda| over pairs, added to the outputs. */
static void lgb_pairs(const hb_config_t *c, int m, const int *lab, const double *s, const int *ord, double inv,
                      double *lam, double *hes, double *sum) {
  const int norm = c->lambdarank_norm && s[ord[0]] != s[ord[m - 1]];
  for (int i = 0; i < m - 1 && i < c->lambdarank_truncation_level; i++)
    for (int j = i + 1; j < m; j++) {
      if (lab[ord[i]] == lab[ord[j]]) continue;
      const int hr = lab[ord[i]] > lab[ord[j]] ? i : j, lr = hr == i ? j : i;
      const int hi = ord[hr], lo = ord[lr];
      const double ds = s[hi] - s[lo];
      double delta = (c->label_gain[lab[hi]] - c->label_gain[lab[lo]]) *
                     fabs(1.0 / log2(2.0 + hr) - 1.0 / log2(2.0 + lr)) * inv;
      if (norm) delta /= 0.01 + fabs(ds);
      double p = 1.0 / (1.0 + exp(ds)), ph = p * (1.0 - p) * delta;
      p *= -delta;
      lam[lo] -= p;
      hes[lo] += ph;
      lam[hi] += p;
      hes[hi] += ph;
      *sum -= 2.0 * p;
    }
}

/* The m grades in out, largest first. */
static void sort_desc(const int *lab, int m, int *out) {
  memcpy(out, lab, sizeof(int) * m);
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m; j++)
      if (out[j] > out[i]) {
        int t = out[i];
        out[i] = out[j];
        out[j] = t;
      }
}

/* NDCG@k of one order, as LightGBM's metric computes it. */
static double lgb_ndcg(const hb_config_t *c, int m, const int *lab, const int *ord, int k) {
  int sorted[MAXM];
  sort_desc(lab, m, sorted);
  double dcg = 0, idcg = 0;
  for (int p = 0; p < m && p < k; p++) {
    dcg += c->label_gain[lab[ord[p]]] / log2(2.0 + p);
    idcg += c->label_gain[sorted[p]] / log2(2.0 + p);
  }
  return idcg > 0 ? dcg / idcg : 1.0;
}

/* MAP@k of one order, as LightGBM's metric (map_metric.hpp) computes it:
 * relevant means label > 0; 1 when no document is relevant. */
static double lgb_map(int m, const int *lab, const int *ord, int k) {
  int npos = 0, hit = 0;
  for (int i = 0; i < m; i++) npos += lab[i] > 0;
  const int top = k < m ? k : m;
  double sum = 0;
  for (int j = 0; j < top; j++)
    if (lab[ord[j]] > 0) sum += (double)++hit / (j + 1.0);
  return npos > 0 ? sum / (npos < top ? npos : top) : 1.0;
}

/* Every permutation of 0..m-1 that orders s descending, visited by fn. */
typedef struct {
  const hb_config_t *c;
  int m, k;
  const int *lab;
  const double *s;
  double inv, lam[MAXM], hes[MAXM], sum, ndcg, map;
  int count;
} acc_t;

static void visit(acc_t *a, int *perm, int depth, int *used) {
  if (depth == a->m) {
    for (int i = 1; i < a->m; i++)
      if (a->s[perm[i]] > a->s[perm[i - 1]]) return;
    lgb_pairs(a->c, a->m, a->lab, a->s, perm, a->inv, a->lam, a->hes, &a->sum);
    a->ndcg += lgb_ndcg(a->c, a->m, a->lab, perm, a->k);
    a->map += lgb_map(a->m, a->lab, perm, a->k);
    a->count++;
    return;
  }
  for (int v = 0; v < a->m; v++)
    if (!used[v]) {
      used[v] = 1;
      perm[depth] = v;
      visit(a, perm, depth + 1, used);
      used[v] = 0;
    }
}

/* One query of m documents checked against the brute force, as rows
 * `rows` of a data set of n rows split into two queries (the others are
 * filler with their own labels). */
static void one_query(const hb_config_t *c, int m, const int *lab, const double *s, int k, const char *what) {
  acc_t a;
  memset(&a, 0, sizeof a);
  a.c = c;
  a.m = m;
  a.k = k;
  a.lab = lab;
  a.s = s;
  /* max DCG at the truncation level */
  int srt[MAXM];
  sort_desc(lab, m, srt);
  double maxdcg = 0;
  for (int p = 0; p < m && p < c->lambdarank_truncation_level; p++) maxdcg += c->label_gain[srt[p]] / log2(2.0 + p);
  a.inv = maxdcg > 0 ? 1.0 / maxdcg : 0.0;
  int perm[MAXM], used[MAXM] = {0};
  visit(&a, perm, 0, used);
  double f = 1.0 / a.count;
  double want_l[MAXM], want_h[MAXM], sum = a.sum * f;
  double nf = c->lambdarank_norm && sum > 0 ? log2(1.0 + sum) / sum : 1.0;
  for (int i = 0; i < m; i++) {
    want_l[i] = a.lam[i] * f * nf;
    want_h[i] = a.hes[i] * f * nf;
  }
  /* the engine: the query's documents interleaved with a second query's, rows in reverse */
  const int n = 2 * m;
  int qid[2 * MAXM];
  double label[2 * MAXM], score[2 * MAXM], gh[4 * MAXM], gh3[4 * MAXM];
  for (int i = 0; i < m; i++) {
    const int r = n - 1 - 2 * i;  /* document i */
    qid[r] = 1;
    label[r] = lab[i];
    score[r] = s[i];
    qid[r - 1] = 0;
    label[r - 1] = (i * 7) % 3;
    score[r - 1] = 0.1 * i;
  }
  hb_rank_query_t *q = NULL;
  CHECK(hb_rank_query_create(n, qid, 2, &q) == HB_OK, "%s: query index", what);
  if (!q) return;
  CHECK(hb_rank_gradients(c, q, label, NULL, score, gh, 1) == HB_OK, "%s: gradients", what);
  CHECK(hb_rank_gradients(c, q, label, NULL, score, gh3, 3) == HB_OK, "%s: gradients, 3 threads", what);
  CHECK(memcmp(gh, gh3, sizeof(double) * 2 * n) == 0, "%s: 1 and 3 threads differ", what);
  for (int i = 0; i < m; i++) {
    const int r = n - 1 - 2 * i;
    CHECK(close_to(gh[2 * r], want_l[i]), "%s: doc %d lambda %.17g, brute force %.17g", what, i, gh[2 * r], want_l[i]);
    CHECK(close_to(gh[2 * r + 1], want_h[i]), "%s: doc %d hessian %.17g, brute force %.17g", what, i, gh[2 * r + 1],
          want_h[i]);
  }
  /* ndcg of this query alone: a data set with just it */
  hb_rank_query_t *q1 = NULL;
  int zero[MAXM] = {0};
  double lab1[MAXM];
  for (int i = 0; i < m; i++) lab1[i] = lab[i];
  CHECK(hb_rank_query_create(m, zero, 1, &q1) == HB_OK, "%s: one query", what);
  double nd = -1;
  CHECK(hb_rank_ndcg(c, q1, lab1, NULL, s, k, 2, &nd) == HB_OK, "%s: ndcg", what);
  CHECK(close_to(nd, a.ndcg * f), "%s: ndcg@%d %.17g, brute force %.17g", what, k, nd, a.ndcg * f);
  double mp = -1, mp1 = -1;
  CHECK(hb_rank_map(q1, lab1, NULL, s, k, 2, &mp) == HB_OK, "%s: map", what);
  CHECK(close_to(mp, a.map * f), "%s: map@%d %.17g, brute force %.17g", what, k, mp, a.map * f);
  /* in the two-query set, weighted: query 1 by its rows' mean weight (2 to 4 a row), query 0 by 1 */
  double w2[2 * MAXM], lab2[2 * MAXM], map0 = -1;
  for (int i = 0; i < n; i++) {
    w2[i] = qid[i] == 1 ? 2.0 + (i % 3) : 1.0;
    lab2[i] = label[i];
  }
  double qw1 = 0;
  for (int i = 0; i < n; i++) qw1 += qid[i] == 1 ? w2[i] : 0.0;
  qw1 /= m;
  /* query 0 alone (its rows in order) for its own AP */
  double lab0[MAXM], s0[MAXM];
  for (int i = 0; i < m; i++) {
    lab0[i] = label[n - 2 - 2 * i];
    s0[i] = score[n - 2 - 2 * i];
  }
  CHECK(hb_rank_map(q1, lab0, NULL, s0, k, 1, &map0) == HB_OK, "%s: map of query 0", what);
  CHECK(hb_rank_map(q, lab2, w2, score, k, 3, &mp1) == HB_OK, "%s: weighted map", what);
  CHECK(close_to(mp1, (map0 + qw1 * mp) / (1.0 + qw1)), "%s: weighted map@%d %.17g, want %.17g", what, k, mp1,
        (map0 + qw1 * mp) / (1.0 + qw1));
  hb_rank_query_free(q);
  hb_rank_query_free(q1);
}

/* A lambdarank booster end to end: queries interleaved, a validation set,
 * ndcg rising, the model text with its ranking keys read back, and the
 * errors of a booster without queries. */
static void booster_case(void) {
  enum { N = 600, NQ = 40 };
  static double x0[N], x1[N], y[N];
  static int qid[N];
  for (int i = 0; i < N; i++) {
    qid[i] = (i * 7) % NQ;
    x0[i] = sin(0.37 * i) + 0.1 * (i % 5);
    x1[i] = cos(1.3 * i);
    const double rel = x0[i] + 0.3 * x1[i];
    y[i] = rel > 0.9 ? 3 : rel > 0.4 ? 2 : rel > -0.2 ? 1 : 0;
  }
  hb_column_t cols[2] = {{HB_COL_DOUBLE, x0, NULL, 0}, {HB_COL_DOUBLE, x1, NULL, 0}};
  hb_input_t in = {N, 2, cols, NULL, y, NULL, NULL, 0};
  hb_binparams_t bp;
  hb_binparams_default(&bp);
  hb_dataset_t *d = NULL;
  CHECK(hb_dataset_create(&in, &bp, NULL, &d) == HB_OK, "dataset: %s", hb_error_message());
  if (!d) return;
  hb_config_t cfg;
  hb_config_default(&cfg);
  cfg.objective = HB_OBJ_LAMBDARANK;
  cfg.num_leaves = 7;
  cfg.min_data_in_leaf = 10;
  cfg.num_label_gain = 4;
  cfg.lambdarank_truncation_level = 10;
  hb_schema_t sc;
  hb_schema_init(&sc);
  char *names[2] = {"x0", "x1"};
  int types[2] = {0, 0}, nlev[2] = {0, 0};
  char **levels[2] = {NULL, NULL};
  sc.nfeat = 2; sc.names = names; sc.types = types; sc.nlevels = nlev; sc.levels = levels;
  hb_booster_t *b = NULL;
  CHECK(hb_booster_create(&cfg, d, &sc, &b) == HB_OK, "booster: %s", hb_error_message());
  if (!b) { hb_dataset_free(d); return; }
  CHECK(hb_booster_add_valid(b, d) == HB_OK, "valid");
  int fin = 0;
  double nd = 0;
  CHECK(hb_booster_update(b, &fin) == HB_ERR_STATE, "a round without queries is refused");
  CHECK(hb_booster_eval_at(b, 1, HB_METRIC_NDCG, 5, &nd) == HB_ERR_INPUT, "ndcg without queries is refused");
  CHECK(hb_booster_eval_at(b, 1, HB_METRIC_MAP, 5, &nd) == HB_ERR_INPUT, "map without queries is refused");
  CHECK(hb_booster_set_query(b, 0, N - 1, NQ, qid) == HB_ERR_INPUT, "a query per row is needed");
  CHECK(hb_booster_set_query(b, 0, N, NQ, qid) == HB_OK, "train queries");
  CHECK(hb_booster_set_query(b, 1, N, NQ, qid) == HB_OK, "valid queries");
  double first = 0, last = 0, mp = 0, map_first = 0, map_last = 0;
  /* map before any tree: every score 0, all tied */
  CHECK(hb_booster_eval_at(b, 1, HB_METRIC_MAP, 3, &map_first) == HB_OK, "map at the start");
  for (int r = 0; r < 8; r++) {
    CHECK(hb_booster_update(b, &fin) == HB_OK, "round %d: %s", r, hb_error_message());
    CHECK(hb_booster_eval_at(b, 1, HB_METRIC_NDCG, 5, &nd) == HB_OK, "ndcg");
    if (r == 0) first = nd;
    last = nd;
    CHECK(hb_booster_eval_at(b, 1, HB_METRIC_MAP, 3, &map_last) == HB_OK, "map");
  }
  /* the booster's map is hb_rank_map of its scores */
  int nr = 0;
  const double *vs = hb_booster_scores(b, 1, &nr);
  hb_rank_query_t *qq = NULL;
  CHECK(vs && nr == N && hb_rank_query_create(N, qid, NQ, &qq) == HB_OK, "scores and a query index");
  double direct = -1;
  CHECK(qq && hb_rank_map(qq, y, NULL, vs, 3, 1, &direct) == HB_OK && direct == map_last, "map through the booster");
  hb_rank_query_free(qq);
  CHECK(map_last > map_first && map_last > 0.9, "map@3 rose: %g -> %g", map_first, map_last);
  CHECK(hb_booster_eval_at(b, 1, HB_METRIC_MAP, 0, &mp) == HB_ERR_INPUT, "map@0 is refused");
  double nd0 = 0;
  CHECK(hb_booster_eval_at(b, 0, HB_METRIC_NDCG, 5, &nd0) == HB_OK && nd0 == last, "train and valid agree");
  CHECK(last > first && last > 0.8, "ndcg@5 rose: %g -> %g", first, last);
  char *text = NULL;
  size_t len = 0;
  CHECK(hb_model_to_string(hb_booster_model(b), &text, &len) == HB_OK, "model text");
  CHECK(text && strstr(text, "objective=lambdarank\n") && strstr(text, "label_gain=0 1 3 7\n") &&
            strstr(text, "lambdarank_truncation_level=10\nlambdarank_norm=1\n"),
        "the ranking keys are written");
  hb_model_t *m = NULL;
  CHECK(text && hb_model_from_string(text, len, &m) == HB_OK, "read back: %s", hb_error_message());
  if (m) {
    CHECK(m->config.num_label_gain == 4 && m->config.label_gain[3] == 7.0 && m->config.lambdarank_truncation_level == 10,
          "label_gain and truncation read back");
    hb_model_free(m);
  }
  free(text);
  hb_booster_free(b);
  hb_dataset_free(d);
}

int main(void) {
  booster_case();
  hb_config_t c;
  hb_config_default(&c);
  c.objective = HB_OBJ_LAMBDARANK;
  /* By hand: labels (2, 0, 1) at scores (1, 2, 0): order doc1, doc0, doc2;
   * no normalisation, truncation 30. Gains 3, 0, 1; maxDCG = 3 + 1/log2(3). */
  {
    hb_config_t h = c;
    h.lambdarank_norm = 0;
    int qid[3] = {0, 0, 0};
    double label[3] = {2, 0, 1}, score[3] = {1, 2, 0}, gh[6];
    hb_rank_query_t *q = NULL;
    CHECK(hb_rank_query_create(3, qid, 1, &q) == HB_OK, "hand: index");
    CHECK(hb_rank_gradients(&h, q, label, NULL, score, gh, 1) == HB_OK, "hand: gradients");
    const double inv = 1.0 / (3.0 + 1.0 / log2(3.0)), D0 = 1.0, D1 = 1.0 / log2(3.0), D2 = 0.5;
    /* pairs: (doc0 hi, doc1 lo) at positions 1, 0; (doc0 hi, doc2 lo) at 1, 2; (doc2 hi, doc1 lo) at 2, 0 */
    const double s01 = 1.0 / (1.0 + exp(1.0 - 2.0)), d01 = 3 * (D0 - D1) * inv;
    const double s02 = 1.0 / (1.0 + exp(1.0 - 0.0)), d02 = 2 * (D1 - D2) * inv;
    const double s21 = 1.0 / (1.0 + exp(0.0 - 2.0)), d21 = 1 * (D0 - D2) * inv;
    const double l0 = -s01 * d01 - s02 * d02, l1 = s01 * d01 + s21 * d21, l2 = s02 * d02 - s21 * d21;
    CHECK(close_to(gh[0], l0) && close_to(gh[2], l1) && close_to(gh[4], l2), "hand: lambdas %g %g %g, want %g %g %g",
          gh[0], gh[2], gh[4], l0, l1, l2);
    const double h0 = s01 * (1 - s01) * d01 + s02 * (1 - s02) * d02;
    CHECK(close_to(gh[1], h0), "hand: hessian %g, want %g", gh[1], h0);
    double nd;
    CHECK(hb_rank_ndcg(&h, q, label, NULL, score, 2, 1, &nd) == HB_OK, "hand: ndcg");
    CHECK(close_to(nd, (0 + 3 * D1) / (3 + D1)), "hand: ndcg@2 %g", nd);
    /* map: order doc1 (0), doc0 (2), doc2 (1); relevant at positions 2 and 3 */
    double mp;
    CHECK(hb_rank_map(q, label, NULL, score, 1, 1, &mp) == HB_OK && mp == 0.0, "hand: map@1 %g", mp);
    CHECK(hb_rank_map(q, label, NULL, score, 2, 1, &mp) == HB_OK && close_to(mp, 0.5 / 2), "hand: map@2 %g", mp);
    CHECK(hb_rank_map(q, label, NULL, score, 3, 1, &mp) == HB_OK && close_to(mp, (0.5 + 2.0 / 3) / 2),
          "hand: map@3 %g", mp);
    CHECK(hb_rank_map(q, label, NULL, score, 9, 1, &mp) == HB_OK && close_to(mp, (0.5 + 2.0 / 3) / 2),
          "hand: map@9 %g", mp);
    /* all three tied, one relevant: at each position with probability 1/3 */
    double one[3] = {0, 3, 0}, flat[3] = {0.5, 0.5, 0.5};
    CHECK(hb_rank_map(q, one, NULL, flat, 2, 1, &mp) == HB_OK && close_to(mp, (1.0 + 0.5) / 3), "hand: tied map@2 %g",
          mp);
    /* no relevant document: 1, as in LightGBM */
    double none[3] = {0, 0, 0};
    CHECK(hb_rank_map(q, none, NULL, score, 2, 1, &mp) == HB_OK && mp == 1.0, "no relevant: map 1");
    CHECK(hb_rank_map(q, label, NULL, score, 0, 1, &mp) == HB_ERR_INPUT, "map@0 is refused");
    CHECK(hb_metric_eval(HB_METRIC_MAP, NULL, 3, 1, score, label, NULL, 1, &mp) == HB_ERR_INPUT,
          "map needs the booster's queries");
    CHECK(hb_metric_higher_better(HB_METRIC_MAP) && hb_metric_higher_better(HB_METRIC_NDCG) &&
              !hb_metric_higher_better(HB_METRIC_RMSE),
          "map and ndcg: higher is better");
    /* all labels equal: zero gradients, ndcg 1 */
    double same[3] = {1, 1, 1};
    CHECK(hb_rank_gradients(&h, q, same, NULL, score, gh, 1) == HB_OK, "equal labels");
    CHECK(gh[0] == 0 && gh[1] == 0 && gh[2] == 0 && gh[5] == 0, "equal labels: zero gradients");
    CHECK(hb_rank_ndcg(&h, q, same, NULL, score, 3, 1, &nd) == HB_OK && nd == 1.0, "equal labels: ndcg 1");
    double bad[3] = {0, 31, 1};
    CHECK(hb_rank_check_labels(&h, 3, bad) == HB_ERR_INPUT, "a label beyond label_gain");
    bad[1] = 1.5;
    CHECK(hb_rank_check_labels(&h, 3, bad) == HB_ERR_INPUT, "a fractional label");
    bad[1] = -1;
    CHECK(hb_rank_check_labels(&h, 3, bad) == HB_ERR_INPUT, "a negative label");
    int badq[3] = {0, 2, 0};
    hb_rank_query_t *q2 = NULL;
    CHECK(hb_rank_query_create(3, badq, 2, &q2) == HB_ERR_INPUT && !q2, "a query code out of range");
    hb_rank_query_free(q);
  }
  /* Brute force: ties of every shape, with and without normalisation, truncation. */
  {
    const int lab_a[6] = {3, 0, 1, 0, 2, 1};
    const double s_all[6] = {0, 0, 0, 0, 0, 0};
    const double s_two[6] = {0.5, 0.5, -1, 0.5, -1, 2};
    const double s_none[6] = {0.3, -0.2, 1.1, 0.7, -0.9, 0.05};
    const double s_near[6] = {1, 1, 1, 0.25, 0.25, 1};
    const double *cases[4] = {s_all, s_two, s_none, s_near};
    const char *names[4] = {"all tied", "two blocks", "no ties", "big block"};
    for (int norm = 0; norm <= 1; norm++)
      for (int trunc = 1; trunc <= 30; trunc += 2) {
        if (trunc > 7 && trunc != 29) continue;
        hb_config_t t = c;
        t.lambdarank_norm = norm;
        t.lambdarank_truncation_level = trunc;
        for (int k = 0; k < 4; k++) {
          char what[96];
          snprintf(what, sizeof what, "%s, norm %d, truncation %d", names[k], norm, trunc);
          one_query(&t, 6, lab_a, cases[k], 1 + (trunc % 5), what);
        }
      }
    /* custom gains, some equal */
    hb_config_t g = c;
    g.num_label_gain = 4;
    const double gains[4] = {0, 1, 1, 5};
    memcpy(g.label_gain, gains, sizeof gains);
    one_query(&g, 6, lab_a, s_two, 3, "custom gains");
    one_query(&g, 6, lab_a, s_all, 2, "custom gains, all tied");
    /* map@k at every k, few relevant documents (k beyond them) and none */
    const int lab_b[6] = {0, 1, 0, 0, 0, 2}, lab_c[6] = {0, 0, 0, 0, 0, 0};
    const int *labs[3] = {lab_a, lab_b, lab_c};
    for (int l = 0; l < 3; l++)
      for (int k = 1; k <= 7; k++)
        for (int j = 0; j < 4; j++) {
          char what[96];
          snprintf(what, sizeof what, "map: labels %d, %s, k %d", l, names[j], k);
          one_query(&c, 6, labs[l], cases[j], k, what);
        }
  }
  printf("test_rank: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
