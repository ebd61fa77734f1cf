/* objective.h: losses: starting scores, label checks, gradients and hessians. */
#ifndef HB_OBJECTIVE_H
#define HB_OBJECTIVE_H
#include "config.h"

/* HB_OK when every label suits the objective (binary: 0/1; multiclass:
 * integers 0..num_class-1; lambdarank: integers 0..num_label_gain-1;
 * regression: finite), else HB_ERR_INPUT. */
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

#endif
