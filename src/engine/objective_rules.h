/* objective_rules.h: the gradient and hessian of one row's loss for the
 * objectives with one score a row (config.h: all but multiclass;
 * multiclassova takes the logistic loss of "is class k" for each class k), written
 * once for the CPU (objective.c) and the GPU (src/cuda/gradient.cu), from
 * hb_exp (math_rules.h), so that both train on the same numbers. With s the
 * raw score and y the label (LightGBM's definitions):
 *   squared error  (s - y)^2 / 2            g = s - y, h = 1
 *   logistic       log(1 + e^-s) or ...     g = p - y, h = p (1 - p), p = 1 / (1 + e^-s)
 *   Poisson        e^s - y s                g = e^s - y, h = e^(s + max_delta_step)
 *   gamma          y e^-s + s               g = 1 - y e^-s, h = y e^-s
 *   Tweedie (p)    -y e^((1-p)s) / (1-p) + e^((2-p)s) / (2-p)
 *                                           g = -y e^((1-p)s) + e^((2-p)s),
 *                                           h = -(1-p) y e^((1-p)s) + (2-p) e^((2-p)s)
 *   Huber (d)      r^2 / 2 if |r| <= d, else d (|r| - d / 2), r = s - y
 *                                           g = r clamped to [-d, d], h = 1
 *   absolute       |s - y|                  g = sign(s - y), h = 1
 *   quantile (a)   (1 - a)(s - y) if s >= y, else a (y - s)
 *                                           g = 1 - a if s >= y, else -a; h = 1
 *   cross-entropy  -y log p - (1 - y) log(1 - p), y in [0, 1]
 *                                           g = p - y, h = p (1 - p)
 *   MAPE           |s - y| / max(1, |y|)    g = sign(s - y) / max(1, |y|), h = 1
 *   Fair (c)       c^2 (|r|/c - log(1 + |r|/c)), r = s - y
 *                                           g = c r / (|r| + c), h = c^2 / (|r| + c)^2
 * (the hessian of MAPE is LightGBM's: 1, the weight alone)
 * (absolute, quantile and MAPE then refit each leaf to a quantile of its residuals:
 * objective.c, hb_objective_renew_leaf) 
 * each times the row's weight. */
#ifndef HB_OBJECTIVE_RULES_H
#define HB_OBJECTIVE_RULES_H

/* Where training stops because sums would overflow (boost.c's checks and
 * the GPU's, gradient.cu and score.cu): n x the largest |gradient| and
 * n x the largest hessian of a round's rows, and a score under a log link
 * (exp(709.78) is the largest finite double). */
#define HB_GRAD_SUM_MAX 1e150
#define HB_HESS_SUM_MAX 1e300
#define HB_LOG_LINK_MAX 709.0
/* An input whose n x largest magnitude exceeds this is named as a cause of an overflow
 * (hb_objective_overflow_cause). */
#define HB_INPUT_SUM_SUSPECT 1e50
#include "config.h"
#include "math_rules.h"

#ifdef __CUDACC__
#define HB_OFN static inline __host__ __device__
#else
#define HB_OFN static inline
#endif

/* What the losses take from the configuration. */
typedef struct {
  double tweedie_p, huber_delta, poisson_step, alpha, fair_c;
} hb_obj_param_t;

HB_OFN hb_obj_param_t hb_obj_param(const hb_config_t *c) {
  hb_obj_param_t p = {c->tweedie_variance_power, c->huber_delta, c->poisson_max_delta_step, c->quantile_alpha,
                      c->fair_c};
  return p;
}

/* Gradient *g and hessian *h of row (y, s, weight w) for a one-score objective. */
HB_OFN void hb_obj_row(int objective, hb_obj_param_t q, double y, double s, double w, double *g, double *h) {
  switch (objective) {
    case HB_OBJ_BINARY:
    case HB_OBJ_XENTROPY: {
      const double p = 1.0 / (1.0 + hb_exp(-s));
      *g = w * (p - y);
      *h = w * p * (1.0 - p);
      return;
    }
    case HB_OBJ_POISSON:
      *g = w * (hb_exp(s) - y);
      *h = w * hb_exp(s + q.poisson_step);
      return;
    case HB_OBJ_GAMMA: {
      const double e = y * hb_exp(-s);
      *g = w * (1.0 - e);
      *h = w * e;
      return;
    }
    case HB_OBJ_TWEEDIE: {
      const double a = y * hb_exp((1.0 - q.tweedie_p) * s), b = hb_exp((2.0 - q.tweedie_p) * s);
      *g = w * (b - a);
      *h = w * ((2.0 - q.tweedie_p) * b - (1.0 - q.tweedie_p) * a);
      return;
    }
    case HB_OBJ_HUBER: {
      const double r = s - y, d = q.huber_delta;
      *g = w * (r > d ? d : r < -d ? -d : r);
      *h = w;
      return;
    }
    case HB_OBJ_L1:
      *g = w * (s > y ? 1.0 : s < y ? -1.0 : 0.0);
      *h = w;
      return;
    case HB_OBJ_QUANTILE:
      *g = w * (s >= y ? 1.0 - q.alpha : -q.alpha);
      *h = w;
      return;
    case HB_OBJ_MAPE: {
      const double ay = y < 0 ? -y : y;
      *g = w * (s > y ? 1.0 : s < y ? -1.0 : 0.0) / (ay > 1.0 ? ay : 1.0);
      *h = w;
      return;
    }
    case HB_OBJ_FAIR: {
      const double r = s - y, c = q.fair_c, d = (r < 0 ? -r : r) + c;
      *g = w * c * r / d;
      *h = w * c * c / (d * d);
      return;
    }
    default:  /* squared error */
      *g = w * (s - y);
      *h = w;
  }
}

#endif
