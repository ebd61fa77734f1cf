/* metric.c: evaluation metrics on raw scores. Sums run over fixed chunks of
 * CHUNK rows, merged in chunk order, so the value never depends on the thread count. */
#include <math.h>
#include <stdlib.h>
#include "metric.h"
#include "error.h"
#include "threads.h"
#include "objective.h"

#define CHUNK 8192
#define PROB_EPS 1e-15

/* 1 when larger is better (auc, ndcg, map), else 0. */
int hb_metric_higher_better(int metric) {
  static const int higher[HB_METRIC_COUNT] = {
#define HB_METRIC(ID, name, higher_better) higher_better,
#include "codes.def"
  };
  return metric >= 0 && metric < HB_METRIC_COUNT && higher[metric];
}

/* Loss of row i (weight not applied); loglink: the response is exp(score). */
static inline double row_loss(int metric, const hb_config_t *c, int loglink, int n, int K, const double *s,
                              const double *y, int i) {
  switch (metric) {
    case HB_METRIC_RMSE:
    case HB_METRIC_L2: {
      double d = (loglink ? exp(s[i]) : s[i]) - y[i];
      return d * d;
    }
    case HB_METRIC_MAE:
      return fabs((loglink ? exp(s[i]) : s[i]) - y[i]);
    case HB_METRIC_POISSON:
      return exp(s[i]) - y[i] * s[i];
    case HB_METRIC_GAMMA:
      return y[i] * exp(-s[i]) + s[i];
    case HB_METRIC_TWEEDIE: {
      const double p = c->tweedie_variance_power;
      return -y[i] * exp((1.0 - p) * s[i]) / (1.0 - p) + exp((2.0 - p) * s[i]) / (2.0 - p);
    }
    case HB_METRIC_QUANTILE: {
      const double r = y[i] - s[i], a = c->quantile_alpha;
      return r >= 0 ? a * r : (a - 1.0) * r;
    }
    case HB_METRIC_HUBER: {
      const double r = fabs(s[i] - y[i]), d = c->huber_delta;
      return r <= d ? 0.5 * r * r : d * (r - 0.5 * d);
    }
    case HB_METRIC_LOGLOSS: {
      double p = 1.0 / (1.0 + exp(-s[i]));
      if (p < PROB_EPS) p = PROB_EPS;
      if (p > 1.0 - PROB_EPS) p = 1.0 - PROB_EPS;
      return y[i] > 0.5 ? -log(p) : -log(1.0 - p);
    }
    case HB_METRIC_ERROR:
      return (double)((s[i] > 0.0) != (y[i] > 0.5));
    case HB_METRIC_XENTROPY: {
      const double p = 1.0 / (1.0 + exp(-s[i])), e = 1e-12;
      return -(y[i] * log(p > e ? p : e) + (1.0 - y[i]) * log(1.0 - p > e ? 1.0 - p : e));
    }
    case HB_METRIC_MAPE: {
      const double ay = fabs(y[i]);
      return fabs(y[i] - (loglink ? exp(s[i]) : s[i])) / (ay > 1.0 ? ay : 1.0);
    }
    case HB_METRIC_FAIR: {
      const double x = fabs(s[i] - y[i]), f = c->fair_c;
      return f * x - f * f * log1p(x / f);
    }
    case HB_METRIC_MULTI_LOGLOSS: {
      size_t N = (size_t)n;
      double mx = s[i];
      for (int k = 1; k < K; k++)
        if (s[k * N + i] > mx) mx = s[k * N + i];
      double z = 0.0;
      for (int k = 0; k < K; k++) z += exp(s[k * N + i] - mx);
      double p = exp(s[(size_t)y[i] * N + i] - mx) / z;
      if (c->objective == HB_OBJ_MULTICLASSOVA) p = 1.0 / (1.0 + exp(-s[(size_t)y[i] * N + i]));
      if (p < PROB_EPS) p = PROB_EPS;
      return -log(p);
    }
    default: { /* multi_error: argmax, first maximum wins */
      size_t N = (size_t)n;
      int best = 0;
      for (int k = 1; k < K; k++)
        if (s[k * N + i] > s[best * N + i]) best = k;
      return (double)(best != (int)y[i]);
    }
  }
}

/* A row's score and index: sorting these needs no global state for the comparator. */
typedef struct {
  double s;
  int i;
} scored_t;

/* Score ascending with NaN first (a total order qsort can rely on), then row index,
 * so the order, and hence the sum, is the same on every run. */
static int cmp_scored(const void *a, const void *b) {
  const scored_t *p = a, *q = b;
  int nx = p->s != p->s, ny = q->s != q->s;
  if (nx != ny) return nx ? -1 : 1;
  if (!nx && p->s < q->s) return -1;
  if (!nx && p->s > q->s) return 1;
  return (p->i > q->i) - (p->i < q->i);
}

static int same_score(double x, double y) { return (x != x && y != y) || x == y; }

/* Weighted AUC: P(score_pos > score_neg) + 0.5 P(tie), the Mann-Whitney statistic.
 * With only one class present it is 1, as LightGBM reports. */
static int auc(int n, const double *s, const double *y, const double *w, double *out) {
  scored_t *r = hb_malloc((size_t)n * sizeof(scored_t));
  if (!r) return HB_ERR_NOMEM;
  for (int i = 0; i < n; i++) {
    r[i].s = s[i];
    r[i].i = i;
  }
  qsort(r, (size_t)n, sizeof(scored_t), cmp_scored);
  double num = 0.0, neg_below = 0.0, wpos = 0.0, wneg = 0.0;
  for (int a = 0; a < n;) {
    int b = a;
    double gp = 0.0, gn = 0.0;
    while (b < n && same_score(r[b].s, r[a].s)) {
      int i = r[b].i;
      double wi = w ? w[i] : 1.0;
      if (y[i] > 0.5) gp += wi;
      else gn += wi;
      b++;
    }
    num += gp * neg_below + 0.5 * gp * gn;
    neg_below += gn;
    wpos += gp;
    wneg += gn;
    a = b;
  }
  hb_free(r);
  *out = (wpos > 0.0 && wneg > 0.0) ? num / (wpos * wneg) : 1.0;
  return HB_OK;
}

/* LightGBM's average precision: rows by score, highest first; at each
 * distinct score, the positives' weight there times the precision of every
 * row scored at least as high. */
static int average_precision(int n, const double *s, const double *y, const double *w, double *out) {
  scored_t *r = hb_malloc((size_t)n * sizeof(scored_t));
  if (!r) return HB_ERR_NOMEM;
  for (int i = 0; i < n; i++) {
    r[i].s = s[i];
    r[i].i = i;
  }
  qsort(r, (size_t)n, sizeof(scored_t), cmp_scored);  /* ascending: walked from the end */
  double pos = 0.0, all = 0.0, acc = 0.0;
  for (int b = n; b > 0;) {
    int a = b - 1;
    while (a > 0 && same_score(r[a - 1].s, r[b - 1].s)) a--;
    double gp = 0.0, gn = 0.0;
    for (int p = a; p < b; p++) {
      const int i = r[p].i;
      const double wi = w ? w[i] : 1.0;
      if (y[i] > 0.5) gp += wi;
      else gn += wi;
    }
    pos += gp;
    all += gp + gn;
    if (gp > 0.0) acc += gp * (pos / all);
    b = a;
  }
  hb_free(r);
  *out = (pos > 0.0 && pos != all) ? acc / pos : 1.0;
  return HB_OK;
}

/* Metric of raw scores against labels; see metric.h. */
int hb_metric_eval(int metric, const hb_config_t *cfg, int n, int num_class, const double *score,
                   const double *label, const double *weight, int nthreads, double *out) {
  if (metric == HB_METRIC_NDCG || metric == HB_METRIC_MAP)
    return hb_error_set(HB_ERR_INPUT, "%s needs the rows' queries: evaluate it through the booster",
                        metric == HB_METRIC_NDCG ? "ndcg" : "map");
  if (metric < HB_METRIC_RMSE || metric >= HB_METRIC_COUNT)
    return hb_error_set(HB_ERR_INPUT, "unknown metric %d", metric);
  hb_config_t dflt;
  if (!cfg) {
    hb_config_default(&dflt);
    cfg = &dflt;
  }
  const int loglink = HB_OBJ_LOG_LINK(cfg->objective);
  if (n < 1) return hb_error_set(HB_ERR_INPUT, "a metric needs at least one row");
  if (!score || !label || !out) return hb_error_set(HB_ERR_INPUT, "metric: no scores, labels or output given");
  int multi = metric == HB_METRIC_MULTI_LOGLOSS || metric == HB_METRIC_MULTI_ERROR;
  if (multi ? num_class < 2 : num_class != 1)
    return hb_error_set(HB_ERR_INPUT, "this metric needs %s (num_class is %d)",
                        multi ? "num_class >= 2" : "one score per row", num_class);
  int binary = metric == HB_METRIC_LOGLOSS || metric == HB_METRIC_AUC || metric == HB_METRIC_ERROR ||
               metric == HB_METRIC_AVERAGE_PRECISION;
  for (int i = 0; i < n; i++) {
    if (binary && label[i] != 0.0 && label[i] != 1.0)
      return hb_error_set(HB_ERR_INPUT, "binary metrics need labels 0 or 1 (row %d has %g)", i + 1, label[i]);
    if (metric == HB_METRIC_XENTROPY && !(label[i] >= 0.0 && label[i] <= 1.0))
      return hb_error_set(HB_ERR_INPUT, "cross_entropy needs labels in [0, 1] (row %d has %g)", i + 1, label[i]);
    if (metric == HB_METRIC_COX_NLOGLIK && !(label[i] != 0.0 && isfinite(label[i])))
      return hb_error_set(HB_ERR_INPUT, "cox_nloglik needs survival times coded as labels > 0 (events) and < 0 "
                          "(censored) (row %d has %g)", i + 1, label[i]);
    if (multi && !(label[i] >= 0.0 && label[i] < num_class && label[i] == floor(label[i])))
      return hb_error_set(HB_ERR_INPUT, "multiclass metrics need labels 0..%d (row %d has %g)", num_class - 1,
                          i + 1, label[i]);
    if (weight && !(weight[i] >= 0.0 && isfinite(weight[i])))
      return hb_error_set(HB_ERR_INPUT, "weights must be finite and non-negative (row %d)", i + 1);
  }
  if (metric == HB_METRIC_AUC) return auc(n, score, label, weight, out);
  if (metric == HB_METRIC_AVERAGE_PRECISION) return average_precision(n, score, label, weight, out);
  if (metric == HB_METRIC_COX_NLOGLIK) return hb_objective_cox_nloglik(n, label, weight, score, out);

  int nchunk = (n + CHUNK - 1) / CHUNK;
  double *part = hb_calloc((size_t)nchunk * 2, sizeof(double));
  if (!part) return HB_ERR_NOMEM;
#ifdef _OPENMP
HB_OMP(parallel for num_threads(hb_threads_use(nthreads)) schedule(static))
#endif
  for (int c = 0; c < nchunk; c++) {
    int lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
    double sl = 0.0, sw = 0.0;
    for (int i = lo; i < hi; i++) {
      double wi = weight ? weight[i] : 1.0;
      sl += wi * row_loss(metric, cfg, loglink, n, num_class, score, label, i);
      sw += wi;
    }
    part[2 * c] = sl;
    part[2 * c + 1] = sw;
  }
  double sl = 0.0, sw = 0.0;
  for (int c = 0; c < nchunk; c++) {
    sl += part[2 * c];
    sw += part[2 * c + 1];
  }
  hb_free(part);
  (void)nthreads;
  if (!(sw > 0.0)) return hb_error_set(HB_ERR_INPUT, "the weights sum to zero");
  double v = sl / sw;
  *out = metric == HB_METRIC_RMSE ? sqrt(v) : v;
  return HB_OK;
}
