/* config.h: everything that shapes training, with LightGBM-like defaults. */
#ifndef HB_CONFIG_H
#define HB_CONFIG_H
#include <stdint.h>

/* Objectives; all but multiclass and multiclassova (and a custom objective
 * given num_class > 1) have one score a row. Poisson, gamma and Tweedie
 * model the log of the mean (the response is exp(score)); Cox the log of
 * the hazard ratio (the response is the risk exp(score)). A custom
 * objective's gradients come from the caller each round
 * (hb_booster_set_gradients); its response is the raw score.
 * cross_entropy is logistic on labels in [0, 1]; multiclassova one logistic
 * score per class (one-vs-all, the response each class's sigmoid). */
enum {
  HB_OBJ_REGRESSION = 0, HB_OBJ_BINARY = 1, HB_OBJ_MULTICLASS = 2, HB_OBJ_POISSON = 3, HB_OBJ_GAMMA = 4,
  HB_OBJ_TWEEDIE = 5, HB_OBJ_HUBER = 6, HB_OBJ_L1 = 7, HB_OBJ_QUANTILE = 8, HB_OBJ_LAMBDARANK = 9, HB_OBJ_CUSTOM = 10,
  HB_OBJ_MULTICLASSOVA = 11, HB_OBJ_XENTROPY = 12, HB_OBJ_MAPE = 13, HB_OBJ_FAIR = 14, HB_OBJ_COX = 15
};
#define HB_OBJ_COUNT 16
/* Scores a row of an objective (its trees a round). */
#define HB_OBJ_NSCORE(c) \
  (((c)->objective == HB_OBJ_MULTICLASS || (c)->objective == HB_OBJ_MULTICLASSOVA || \
    (c)->objective == HB_OBJ_CUSTOM) ? (c)->num_class : 1)
/* 1 when the objective's response is the sigmoid of the score. */
#define HB_OBJ_SIGMOID(o) ((o) == HB_OBJ_BINARY || (o) == HB_OBJ_XENTROPY || (o) == HB_OBJ_MULTICLASSOVA)
/* Most relevance grades a ranking model's label_gain can list (grades 0..63). */
#define HB_RANK_MAX_GAIN 64
/* 1 when the objective refits each new leaf to a quantile of its rows'
 * residuals (absolute error: the median; quantile: quantile_alpha; mape:
 * the median weighted by 1 / max(1, |label|)). */
#define HB_OBJ_RENEWS(o) ((o) == HB_OBJ_L1 || (o) == HB_OBJ_QUANTILE || (o) == HB_OBJ_MAPE)
/* 1 when the objective's response is exp(score). */
#define HB_OBJ_LOG_LINK(o) ((o) == HB_OBJ_POISSON || (o) == HB_OBJ_GAMMA || (o) == HB_OBJ_TWEEDIE)
enum { HB_DEVICE_CPU = 0, HB_DEVICE_CUDA = 1 };

typedef struct {
  int objective;              /* HB_OBJ_* */
  int num_class;              /* 1 unless multiclass */
  double learning_rate;       /* 0.1 */
  int num_leaves;             /* 31 */
  int max_depth;              /* <= 0: no limit */
  int min_data_in_leaf;       /* 20 */
  double min_sum_hessian_in_leaf; /* 1e-3 */
  double lambda_l1;           /* 0 */
  double lambda_l2;           /* 0 */
  double min_gain_to_split;   /* 0 */
  int max_cat_threshold;      /* 32: most levels on the scanned side of a categorical split */
  int max_cat_to_onehot;      /* 4: categorical features of at most this many bins (levels + the missing
                                 bin) split one level against the rest */
  double cat_smooth;          /* 10: fewest rows for a level to enter the many-vs-many scan, and added to
                                 the hessian when ordering levels */
  double cat_l2;              /* 10: extra L2 for categorical splits */
  int min_data_per_group;     /* 100: rows between two candidates of a many-vs-many scan, and fewest on its right */
  double bagging_fraction;    /* 1 */
  int bagging_freq;           /* 0: no bagging */
  double feature_fraction;    /* 1: share of features each tree may use */
  int boost_from_average;     /* 1: start from the label mean / log-odds / class priors */
  int rf;                     /* 1: random forest: every tree fits the gradients at the starting score,
                                 unshrunk, from its bag or feature sample; the prediction averages them */
  double tweedie_variance_power; /* 1.5: the Tweedie power p, 1 < p < 2 */
  double huber_delta;         /* 1: residuals beyond it count linearly in the Huber loss */
  double poisson_max_delta_step; /* 0.7: the Poisson hessian is exp(score + this), damping the first steps */
  double quantile_alpha;      /* 0.5: the quantile the quantile objective fits, in (0, 1) */
  double fair_c;              /* 1: the Fair loss's scale c: c^2 (|r|/c - log(1 + |r|/c)) */
  /* LambdaRank (rank.h): one score a row, rows grouped into queries. */
  int lambdarank_truncation_level; /* 30: pairs need a document in the top this many of the current ranking */
  int lambdarank_norm;        /* 1: LightGBM's normalisation of each query's lambdas */
  int num_label_gain;         /* 31: entries of label_gain; labels must be below it */
  double label_gain[HB_RANK_MAX_GAIN]; /* gain of grade i: 2^i - 1 by default; non-decreasing */
  uint64_t seed;
  int nthreads;               /* <= 0: default */
  int device;                 /* HB_DEVICE_CPU, or HB_DEVICE_CUDA: grow trees on the GPU (not saved with a model) */
  /* Quantized training (quantize.h); not saved with a model either. */
  int quantized;              /* 0: full-precision gradients */
  int grad_bits;              /* 4: bits of a quantized gradient (2..8) */
  int stochastic_rounding;    /* 1: unbiased random rounding; 0: to nearest */
  int refit_leaves;           /* 1: leaf values from the full-precision gradients */
  /* Gradient-based one-side sampling (goss.h); not saved with a model. */
  int goss;                   /* 0: every row (or the bag) grows each tree */
  double top_rate;            /* 0.2: share of rows kept for their large gradients */
  double other_rate;          /* 0.1: share of rows sampled from the rest */
  /* Exclusive feature bundling of sparse features on the CPU (bundle.h); not saved with a model. */
  int enable_bundle;          /* 1: bundle; 0: every sparse feature summed alone */
  double max_conflict_rate;   /* 0: bundle only features never off default in one row (models unchanged);
                                 up to this share of rows may conflict, in [0, 1) */
} hb_config_t;

void hb_config_default(hb_config_t *cfg);
/* 0 when valid, else HB_ERR_INPUT with a message naming the parameter. */
int hb_config_check(const hb_config_t *cfg);

#endif
