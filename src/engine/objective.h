/* objective.h: losses: starting scores, label checks, gradients and hessians. */
#ifndef HB_OBJECTIVE_H
#define HB_OBJECTIVE_H
#include "config.h"

/* HB_OK when every label suits the objective (binary: 0/1; multiclass and
 * multiclassova: integers 0..num_class-1; lambdarank: integers
 * 0..num_label_gain-1; cross_entropy: in [0, 1]; cox: not 0; regression:
 * finite), else HB_ERR_INPUT. */
int hb_objective_check_labels(const hb_config_t *cfg, int n, const double *label);

/* Starting score per class (num_class values) from the (weighted) labels:
 * their mean, log-odds, class priors, log mean, or (l1, quantile) their
 * quantile; 0 for lambdarank. HB_OK, or HB_ERR_NOMEM. */
int hb_objective_init_score(const hb_config_t *cfg, int n, const double *label,
                            const double *weight, double *init);

/* A value and its weight, for weighted quantiles. */
typedef struct {
  double v, w;
} hb_objective_vw_t;

/* The weighted a-quantile of m pairs (sorted in place): the smallest value
 * whose cumulative weight reaches a x the total, or the mean of it and the
 * next value when the cumulative weight equals that exactly (with unit
 * weights, R's quantile(type = 2); a = 0.5 is median()). 0 when m is 0;
 * all-zero weights count as unit weights. Unit weights take a linear-time
 * selection instead of the sort (the pairs are then only partly ordered). */
double hb_objective_quantile(hb_objective_vw_t *p, int m, double a);

/* Gradients and hessians of every row and class from the scores (column-
 * major n x num_class), multiplied by the weights when given, written as
 * interleaved pairs: row i of class k has its gradient at gh[2(kn + i)] and
 * its hessian right after it (a histogram reads both with one load).
 * Not for lambdarank, whose gradients need the queries (rank.h). */
void hb_objective_gradients(const hb_config_t *cfg, int n, const double *label,
                            const double *weight, const double *score,
                            double *gh, int nthreads);

/* The inputs that may make a loss's sums overflow, for naming the cause: n
 * rows' labels, weights (NULL: none) and per-row starting raw scores
 * (offset, n x noffset_cols values, NULL: none), and the model's own
 * starting score of each of its K scores (NULL: none). */
typedef struct {
  int n;
  const double *label, *weight, *offset;
  int noffset_cols;
  const double *start;
  int K;
} hb_overflow_inputs_t;

/* HB_ERR_INPUT with a message that names which input made `what` (e.g.
 * "gradients") of `where` (e.g. "" or " of validation set 2") go out of
 * range in `step` (e.g. "round" or "iteration") `round`: the weights, the labels, the starting scores, or
 * (lambdarank) label_gain, or (log links) a starting score or
 * poisson_max_delta_step past exp()'s range; HB_OK when no input is to
 * blame (the caller names what else it can: the learning rate). */
int hb_objective_overflow_cause(const hb_config_t *cfg, const hb_overflow_inputs_t *in, const char *what,
                                const char *where, const char *step, int round);

/* 1 when n x K (gradient, hessian) pairs can be summed over nsum rows (every
 * shard's in data-parallel training) without overflow: none NaN, nsum x the
 * largest |gradient| at most HB_GRAD_SUM_MAX and x the largest |hessian| at
 * most HB_HESS_SUM_MAX (objective_rules.h); training's and the refit's check. */
int hb_objective_gradients_in_range(const double *gh, int n, int K, double nsum, int nthreads);

/* MAPE's row weight 1 / max(1, |y|) (LightGBM's: labels below 1 in size count as 1). */
static inline double hb_objective_mape_weight(double y) {
  const double a = y < 0 ? -y : y;
  return 1.0 / (a > 1.0 ? a : 1.0);
}

/* Cox proportional hazards. A label is a survival time: y > 0 an event at
 * y, y < 0 a time censored at -y (xgboost's survival:cox coding). The loss
 * is the negative log partial likelihood with Breslow's ties (every row
 * whose time is >= t is at risk at t, tied events share one risk set),
 * weighted as survival::coxph weighs: -sum_i w_i d_i (s_i - log S(t_i)),
 * S(t) = sum over rows at risk at t of w_j e^(s_j). */

/* The rows in order of time |label| (ties by row number), in a new array
 * (*order, hb_free it). HB_OK or HB_ERR_NOMEM. */
int hb_objective_cox_order(int n, const double *label, int **order);

/* The loss's gradient and the diagonal of its hessian at scores `score`
 * (order from hb_objective_cox_order), interleaved into gh as
 * hb_objective_gradients writes them. Without weights, xgboost's
 * survival:cox gradients (which, with tied times, are those of its row
 * order; these are the exact derivatives for any order). */
void hb_objective_cox_gradients(int n, const double *label, const double *weight, const int *order,
                                const double *score, double *gh);

/* The loss per unit of event weight (xgboost's cox-nloglik: the mean over
 * events) into *out. HB_OK or HB_ERR_NOMEM. */
int hb_objective_cox_nloglik(int n, const double *label, const double *weight, const double *score,
                             double *out);

#endif
