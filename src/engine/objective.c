/* objective.c: the losses: label checks, starting scores, gradients
 * (one-score objectives by objective_rules.h's formulas, shared with the
 * GPU; softmax here). */
#include <math.h>
#include <stdlib.h>
#include "objective.h"
#include "objective_rules.h"
#include "rank.h"
#include "select.h"
#include "error.h"
#include "threads.h"
#include "math_rules.h"

int hb_objective_check_labels(const hb_config_t *cfg, int n, const double *label) {
  if (!label) return hb_error_set(HB_ERR_INPUT, "the training data has no labels");
  if (cfg->objective == HB_OBJ_LAMBDARANK) return hb_rank_check_labels(cfg, n, label);
  for (int i = 0; i < n; i++) {
    double y = label[i];
    if (!isfinite(y))
      return hb_error_set(HB_ERR_INPUT, "label %d is missing or not finite", i + 1);
    if (cfg->objective == HB_OBJ_BINARY && y != 0.0 && y != 1.0)
      return hb_error_set(HB_ERR_INPUT, "binary labels must be 0 or 1 (label %d is %g)", i + 1, y);
    if ((cfg->objective == HB_OBJ_MULTICLASS || cfg->objective == HB_OBJ_MULTICLASSOVA) &&
        (y < 0 || y >= cfg->num_class || y != floor(y)))
      return hb_error_set(HB_ERR_INPUT, "multiclass labels must be integers 0..%d (label %d is %g)",
                          cfg->num_class - 1, i + 1, y);
    if ((cfg->objective == HB_OBJ_POISSON || cfg->objective == HB_OBJ_TWEEDIE) && y < 0)
      return hb_error_set(HB_ERR_INPUT, "%s labels must be >= 0 (label %d is %g)",
                          cfg->objective == HB_OBJ_POISSON ? "poisson" : "tweedie", i + 1, y);
    if (cfg->objective == HB_OBJ_GAMMA && !(y > 0))
      return hb_error_set(HB_ERR_INPUT, "gamma labels must be > 0 (label %d is %g)", i + 1, y);
    if (cfg->objective == HB_OBJ_XENTROPY && !(y >= 0.0 && y <= 1.0))
      return hb_error_set(HB_ERR_INPUT, "cross_entropy labels must be in [0, 1] (label %d is %g)", i + 1, y);
    if (cfg->objective == HB_OBJ_COX && y == 0.0)
      return hb_error_set(HB_ERR_INPUT, "cox labels are survival times, > 0 for an event and < 0 for a censored "
                          "time (label %d is 0)", i + 1);
  }
  return HB_OK;
}

static int vw_cmp(const void *a, const void *b) {
  const double x = ((const hb_objective_vw_t *)a)->v, y = ((const hb_objective_vw_t *)b)->v;
  return (x > y) - (x < y);
}

double hb_objective_quantile(hb_objective_vw_t *p, int m, double a) {
  if (m <= 0) return 0.0;
  int unit_weights = 1;
  for (int i = 0; i < m && unit_weights; i++) unit_weights = p[i].w == 1.0;
  if (unit_weights) {
    /* no sort: the ceil(a m)-th smallest, averaged with the next when a m
     * is a whole number (the same rule as the weighted walk below) */
    const double t = a * (double)m;
    int k = (int)ceil(t);
    if (k < 1) k = 1;
    if (k > m) k = m;
    /* the values alone move (the weights are all 1): a stride over the pairs */
    _Static_assert(sizeof(hb_objective_vw_t) == 2 * sizeof(double), "value-weight pairs are two doubles");
    const double v = hb_select_kth(&p[0].v, 2, m, k - 1);
    if ((double)k != t || k == m) return v;
    double next = p[k].v;  /* the smallest of those after position k - 1 */
    for (int i = k + 1; i < m; i++)
      if (p[i].v < next) next = p[i].v;
    return 0.5 * (v + next);
  }
  qsort(p, (size_t)m, sizeof *p, vw_cmp);
  double W = 0.0;
  for (int i = 0; i < m; i++) W += p[i].w;
  const int unit = !(W > 0.0);
  if (unit) W = (double)m;
  const double t = a * W;
  double c = 0.0;
  for (int i = 0; i < m; i++) {
    const double w = unit ? 1.0 : p[i].w;
    if (w <= 0.0) continue;
    c += w;
    if (c >= t) {
      if (c == t)  /* exactly on a step: the mean with the next value that weighs */
        for (int j = i + 1; j < m; j++)
          if (unit || p[j].w > 0.0) return 0.5 * (p[i].v + p[j].v);
      return p[i].v;
    }
  }
  return p[m - 1].v;  /* rounding left c short of t */
}

int hb_objective_init_score(const hb_config_t *cfg, int n, const double *label,
                            const double *weight, double *init) {
  int K = HB_OBJ_NSCORE(cfg);
  for (int k = 0; k < K; k++) init[k] = 0.0;
  /* a ranking's scores only order the documents of a query: a start is
   * pointless; a custom objective starts from 0 */
  /* Cox's partial likelihood does not change when every score moves by the same amount: it starts from 0 */
  if (!cfg->boost_from_average || cfg->objective == HB_OBJ_LAMBDARANK || cfg->objective == HB_OBJ_CUSTOM ||
      cfg->objective == HB_OBJ_COX)
    return HB_OK;
  if (HB_OBJ_RENEWS(cfg->objective)) {
    hb_objective_vw_t *p = hb_malloc(sizeof *p * (size_t)(n > 0 ? n : 1));
    if (!p) return HB_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
      p[i].v = label[i];
      p[i].w = (weight ? weight[i] : 1.0) * (cfg->objective == HB_OBJ_MAPE ? hb_objective_mape_weight(label[i]) : 1.0);
    }
    init[0] = hb_objective_quantile(p, n, cfg->objective == HB_OBJ_L1 ? 0.5 : cfg->quantile_alpha);
    hb_free(p);
    return HB_OK;
  }
  /* Sequential sums: the order is fixed, so the start never depends on threads. */
  double sw = 0.0, swy = 0.0;
  if (cfg->objective == HB_OBJ_MULTICLASS || cfg->objective == HB_OBJ_MULTICLASSOVA) {
    /* each class's weighted share: softmax starts from its log, one-vs-all
     * from its log-odds against the rest */
    for (int i = 0; i < n; i++) {
      double w = weight ? weight[i] : 1.0;
      sw += w;
      init[(int)label[i]] += w;
    }
    for (int k = 0; k < K; k++) {
      double p = sw > 0 ? init[k] / sw : 1.0 / K;
      if (p < 1e-15) p = 1e-15;
      if (cfg->objective == HB_OBJ_MULTICLASS) {
        init[k] = log(p);
      } else {
        if (p > 1 - 1e-15) p = 1 - 1e-15;
        init[k] = log(p / (1 - p));
      }
    }
    return HB_OK;
  }
  for (int i = 0; i < n; i++) {
    double w = weight ? weight[i] : 1.0;
    sw += w;
    swy += w * label[i];
  }
  double mean = sw > 0 ? swy / sw : 0.0;
  if (cfg->objective == HB_OBJ_BINARY || cfg->objective == HB_OBJ_XENTROPY) {
    if (mean < 1e-15) mean = 1e-15;
    if (mean > 1 - 1e-15) mean = 1 - 1e-15;
    init[0] = log(mean / (1 - mean));
  } else if (HB_OBJ_LOG_LINK(cfg->objective)) {
    init[0] = log(mean > 1e-15 ? mean : 1e-15);  /* the log of the mean; all-zero counts start near 0 */
  } else {
    init[0] = mean;
  }
  return HB_OK;
}

void hb_objective_gradients(const hb_config_t *cfg, int n, const double *label,
                            const double *weight, const double *score,
                            double *gh, int nthreads) {
  int nth = hb_threads_use(nthreads);
  (void)nth;
  if (cfg->objective == HB_OBJ_REGRESSION) {
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int i = 0; i < n; i++) {
      double w = weight ? weight[i] : 1.0;
      gh[2 * (size_t)i] = w * (score[i] - label[i]);
      gh[2 * (size_t)i + 1] = w;
    }
  } else if (cfg->objective == HB_OBJ_BINARY) {
    /* Two rows at a time on SSE2's lanes, two such pairs a step (the exp's
     * long chain of dependent steps is most of the time; two independent
     * chains side by side run at once: 10.2 -> 8.3 ns a row on one thread
     * here, a third chain gained nothing): the same operations on each
     * lane, so the same gradients as the one-row loop, bit for bit. */
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int j = 0; j < (n + 3) / 4; j++) {
      int i = 4 * j;
#ifdef HB_HAVE_EXP_PAIR
      if (i + 3 < n) {
        const __m128d neg = _mm_set1_pd(-0.0), one = _mm_set1_pd(1.0);
        const __m128d x0 = _mm_xor_pd(_mm_loadu_pd(score + i), neg), x1 = _mm_xor_pd(_mm_loadu_pd(score + i + 2), neg);
        if (hb_exp_pair_ok(x0) && hb_exp_pair_ok(x1)) {
          const __m128d e0 = hb_exp_pair(x0), e1 = hb_exp_pair(x1);
          const __m128d w0 = weight ? _mm_loadu_pd(weight + i) : one, w1 = weight ? _mm_loadu_pd(weight + i + 2) : one;
          const __m128d p0 = _mm_div_pd(one, _mm_add_pd(one, e0)), p1 = _mm_div_pd(one, _mm_add_pd(one, e1));
          const __m128d g0 = _mm_mul_pd(w0, _mm_sub_pd(p0, _mm_loadu_pd(label + i)));
          const __m128d g1 = _mm_mul_pd(w1, _mm_sub_pd(p1, _mm_loadu_pd(label + i + 2)));
          const __m128d h0 = _mm_mul_pd(_mm_mul_pd(w0, p0), _mm_sub_pd(one, p0));
          const __m128d h1 = _mm_mul_pd(_mm_mul_pd(w1, p1), _mm_sub_pd(one, p1));
          _mm_storeu_pd(gh + 2 * (size_t)i, _mm_unpacklo_pd(g0, h0));
          _mm_storeu_pd(gh + 2 * (size_t)i + 2, _mm_unpackhi_pd(g0, h0));
          _mm_storeu_pd(gh + 2 * (size_t)i + 4, _mm_unpacklo_pd(g1, h1));
          _mm_storeu_pd(gh + 2 * (size_t)i + 6, _mm_unpackhi_pd(g1, h1));
          continue;
        }
      }
#endif
      for (int k = i; k < i + 4 && k < n; k++) {
        double w = weight ? weight[k] : 1.0;
        double p = 1.0 / (1.0 + hb_exp(-score[k]));
        gh[2 * (size_t)k] = w * (p - label[k]);
        gh[2 * (size_t)k + 1] = w * p * (1.0 - p);
      }
    }
  } else if (cfg->objective == HB_OBJ_MULTICLASSOVA) {
    /* class k against the rest: the logistic loss of "is class k" on its own score */
    const int K = cfg->num_class;
    const hb_obj_param_t q = hb_obj_param(cfg);
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int i = 0; i < n; i++) {
      const double w = weight ? weight[i] : 1.0;
      const int y = (int)label[i];
      for (int k = 0; k < K; k++) {
        const size_t j = (size_t)k * n + i;
        hb_obj_row(HB_OBJ_BINARY, q, k == y ? 1.0 : 0.0, score[j], w, &gh[2 * j], &gh[2 * j + 1]);
      }
    }
  } else if (cfg->objective != HB_OBJ_MULTICLASS) {
    const hb_obj_param_t q = hb_obj_param(cfg);
    const int obj = cfg->objective;
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int i = 0; i < n; i++)
      hb_obj_row(obj, q, label[i], score[i], weight ? weight[i] : 1.0, &gh[2 * (size_t)i], &gh[2 * (size_t)i + 1]);
  } else {
#define EXP_KEEP 64
    int K = cfg->num_class;
    double factor = (double)K / (K - 1);
HB_OMP(parallel for num_threads(nth) schedule(static))
    for (int i = 0; i < n; i++) {
      double w = weight ? weight[i] : 1.0;
      double mx = score[i];
      for (int k = 1; k < K; k++) {
        double s = score[(size_t)k * n + i];
        if (s > mx) mx = s;
      }
      /* each class's exp once (for the first EXP_KEEP classes; the rest are
       * computed again below, to the same double) */
      double e[EXP_KEEP], sum = 0.0;
      int done = 0;  /* e[0..done) from the two-lane exp, the same bits as hb_exp's */
#ifdef HB_HAVE_EXP_PAIR
      for (; done + 1 < K && done + 1 < EXP_KEEP; done += 2) {
        const __m128d x = _mm_set_pd(score[(size_t)(done + 1) * n + i] - mx, score[(size_t)done * n + i] - mx);
        if (!hb_exp_pair_ok(x)) break;
        _mm_storeu_pd(e + done, hb_exp_pair(x));
      }
#endif
      for (int k = 0; k < K; k++) {
        double v = k < done ? e[k] : hb_exp(score[(size_t)k * n + i] - mx);
        if (k < EXP_KEEP) e[k] = v;
        sum += v;
      }
      int y = (int)label[i];
      for (int k = 0; k < K; k++) {
        size_t j = (size_t)k * n + i;
        double p = (k < EXP_KEEP ? e[k] : hb_exp(score[j] - mx)) / sum;
        gh[2 * j] = w * (p - (k == y ? 1.0 : 0.0));
        gh[2 * j + 1] = w * factor * p * (1.0 - p);
      }
    }
#undef EXP_KEEP
  }
}

/* A row's survival time and number: sorted without state outside the pairs. */
typedef struct {
  double t;
  int i;
} cox_row_t;

static int cox_cmp(const void *a, const void *b) {
  const cox_row_t *p = a, *q = b;
  if (p->t != q->t) return p->t < q->t ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

int hb_objective_cox_order(int n, const double *label, int **order) {
  *order = NULL;
  int *o = hb_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  cox_row_t *r = hb_malloc(sizeof *r * (size_t)(n > 0 ? n : 1));
  if (!o || !r) {
    hb_free(o);
    hb_free(r);
    return HB_ERR_NOMEM;
  }
  for (int i = 0; i < n; i++) {
    r[i].t = fabs(label[i]);
    r[i].i = i;
  }
  qsort(r, (size_t)n, sizeof *r, cox_cmp);
  for (int i = 0; i < n; i++) o[i] = r[i].i;
  hb_free(r);
  *order = o;
  return HB_OK;
}

/* The risk set's sums at each time, from the latest time backwards: S(t) =
 * sum over rows with time >= t of w e^(s - c), c the largest score (the
 * ratios below do not change with c; it keeps exp finite). Written into
 * out[stride * row] for every row of the time. */
static double cox_risk_sums(int n, const double *label, const double *weight, const int *order,
                            const double *score, double *out, size_t stride) {
  double c = -HUGE_VAL;
  for (int i = 0; i < n; i++)
    if (score[i] > c) c = score[i];
  if (!isfinite(c)) c = 0.0;
  double S = 0.0;
  for (int b = n; b > 0;) {  /* the rows of one time: positions a .. b - 1 */
    int a = b - 1;
    while (a > 0 && fabs(label[order[a - 1]]) == fabs(label[order[b - 1]])) a--;
    for (int p = a; p < b; p++) S += (weight ? weight[order[p]] : 1.0) * exp(score[order[p]] - c);
    for (int p = a; p < b; p++) out[stride * (size_t)order[p]] = S;
    b = a;
  }
  return c;
}

void hb_objective_cox_gradients(int n, const double *label, const double *weight, const int *order,
                                const double *score, double *gh) {
  /* the risk sums go into the gradient slots first, then each time's rows
   * read theirs before it is overwritten */
  const double c = cox_risk_sums(n, label, weight, order, score, gh, 2);
  double A = 0.0, B = 0.0;  /* sums over event times so far of d / S and d / S^2 */
  for (int a = 0; a < n;) {
    int b = a + 1;
    while (b < n && fabs(label[order[b]]) == fabs(label[order[a]])) b++;
    const double S = gh[2 * (size_t)order[a]];
    double d = 0.0;  /* the weight of this time's events */
    for (int p = a; p < b; p++)
      if (label[order[p]] > 0) d += weight ? weight[order[p]] : 1.0;
    if (d > 0.0 && S > 0.0) {
      A += d / S;
      B += d / (S * S);
    }
    for (int p = a; p < b; p++) {
      const int i = order[p];
      const double w = weight ? weight[i] : 1.0, r = w * exp(score[i] - c);
      gh[2 * (size_t)i] = r * A - (label[i] > 0 ? w : 0.0);
      double h = r * A - r * r * B;
      gh[2 * (size_t)i + 1] = h > 0.0 ? h : 0.0;
    }
    a = b;
  }
}

int hb_objective_cox_nloglik(int n, const double *label, const double *weight, const double *score,
                             double *out) {
  int *order = NULL;
  double *S = hb_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!S || hb_objective_cox_order(n, label, &order) != HB_OK) {
    hb_free(S);
    return HB_ERR_NOMEM;
  }
  const double c = cox_risk_sums(n, label, weight, order, score, S, 1);
  double num = 0.0, den = 0.0;
  for (int p = 0; p < n; p++) {  /* in time order: a fixed order of summation */
    const int i = order[p];
    if (!(label[i] > 0)) continue;
    const double w = weight ? weight[i] : 1.0;
    if (w <= 0.0) continue;
    num -= w * (score[i] - c - log(S[i]));
    den += w;
  }
  hb_free(order);
  hb_free(S);
  *out = den > 0.0 ? num / den : 0.0;
  return HB_OK;
}

/* The largest |value| of n values (NULL: 0); INFINITY when one is NaN. */
static double max_abs(const double *v, size_t n) {
  double m = 0;
  if (!v) return 0;
  for (size_t i = 0; i < n; i++) {
    double a = fabs(v[i]);
    if (a != a) return INFINITY;
    if (a > m) m = a;
  }
  return m;
}

int hb_objective_overflow_cause(const hb_config_t *cfg, const hb_overflow_inputs_t *in, const char *what,
                                const char *where, const char *step, int round) {
  const double n = (double)in->n;
  const size_t N = (size_t)(in->n > 0 ? in->n : 0);
  double mw = max_abs(in->weight, N);
  if (mw * n > HB_INPUT_SUM_SUSPECT)
    return hb_error_set(HB_ERR_INPUT,
                        "%s %d: the %s%s overflowed because the weights%s are too large (largest %g); "
                        "rescale `weights` (for example to a mean of 1), or lower `scale_pos_weight` or "
                        "`class_weights`, which multiply them: only their ratios matter",
                        step, round, what, where, where, mw);
  if (cfg->objective != HB_OBJ_BINARY && cfg->objective != HB_OBJ_MULTICLASS) {
    double my = max_abs(in->label, N);
    if (my * n > HB_INPUT_SUM_SUSPECT)
      return hb_error_set(HB_ERR_INPUT,
                          "%s %d: the %s%s overflowed because the labels (`y`)%s are too large (largest |y| "
                          "%g); rescale them (for example divide them by %g) and scale the predictions back",
                          step, round, what, where, where, my, pow(10.0, floor(log10(my))));
  }
  double mi = max_abs(in->offset, N * (size_t)in->noffset_cols), ms = max_abs(in->start, (size_t)in->K);
  if (mi * n > HB_INPUT_SUM_SUSPECT || !isfinite(ms) ||
      (HB_OBJ_LOG_LINK(cfg->objective) && mi + ms > HB_LOG_LINK_MAX))
    return hb_error_set(HB_ERR_INPUT,
                        "%s %d: the %s%s overflowed because `init_score`%s is too large (largest |value| "
                        "%g%s); give raw scores of a sensible size (an offset such as log(exposure))",
                        step, round, what, where, where, mi,
                        HB_OBJ_LOG_LINK(cfg->objective) ? ", and the response is exp(score)" : "");
  if (cfg->objective == HB_OBJ_POISSON && cfg->poisson_max_delta_step > HB_LOG_LINK_MAX)
    return hb_error_set(HB_ERR_INPUT,
                        "%s %d: the %s%s overflowed because `poisson_max_delta_step` (%g) is too large: the "
                        "hessians are exp(score + poisson_max_delta_step); keep it small (the default is 0.7)",
                        step, round, what, where, cfg->poisson_max_delta_step);
  if (cfg->objective == HB_OBJ_LAMBDARANK) {
    double mg = max_abs(cfg->label_gain, (size_t)cfg->num_label_gain);
    if (mg * n > HB_INPUT_SUM_SUSPECT)
      return hb_error_set(HB_ERR_INPUT,
                          "%s %d: the %s%s overflowed because `label_gain` is too large (largest %g); "
                          "rescale it: only its ratios matter",
                          step, round, what, where, mg);
  }
  return HB_OK;
}

int hb_objective_gradients_in_range(const double *gh, int n, int K, double nsum, int nthreads) {
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
