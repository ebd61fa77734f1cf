/* objective.h: losses: starting scores, label checks, gradients and hessians. */
#ifndef HB_OBJECTIVE_H
#define HB_OBJECTIVE_H
#include "config.h"

/* HB_OK when every label suits the objective (binary: 0/1; multiclass:
 * integers 0..num_class-1; regression: finite), else HB_ERR_INPUT. */
int hb_objective_check_labels(const hb_config_t *cfg, int n, const double *label);

/* Starting score per class (num_class values) from the (weighted) labels. */
void hb_objective_init_score(const hb_config_t *cfg, int n, const double *label,
                             const double *weight, double *init);

/* Gradients and hessians of every row and class from the scores (column-
 * major n x num_class), multiplied by the weights when given, written as
 * interleaved pairs: row i of class k has its gradient at gh[2(kn + i)] and
 * its hessian right after it (a histogram reads both with one load). */
void hb_objective_gradients(const hb_config_t *cfg, int n, const double *label,
                            const double *weight, const double *score,
                            double *gh, int nthreads);

#endif
