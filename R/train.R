# train.R: histboost() and its methods: parameter checks and the setup of a
# booster (.hb_setup), then the boosting loop of R/rounds.R (shared with
# hb_cv(); on.exit() here frees the booster) and the model (.hb_finish).

# .HB_OBJECTIVES, .HB_REGRESSION_FAMILY (objectives of the regression task:
# a numeric y, one score a row), .HB_METRICS and .HB_HIGHER_BETTER come from
# src/engine/codes.def (R/params-generated.R), as the engine's codes do.
# Metrics each objective may use; the first is its default.
.HB_TASK_METRICS <- list(regression = c("rmse", "mae", "huber", "mape", "fair", "l2"),
                         binary = c("logloss", "auc", "error", "average_precision"),
                         multiclass = c("multi_logloss", "multi_error"), poisson = c("poisson", "rmse", "mae", "l2"),
                         gamma = c("gamma", "rmse", "mae", "l2"), tweedie = c("tweedie", "rmse", "mae", "l2"),
                         huber = c("huber", "rmse", "mae", "l2"), l1 = c("mae", "rmse", "mape", "l2"),
                         quantile = c("quantile", "mae", "rmse", "l2"), lambdarank = c("ndcg", "map"),
                         custom = c("rmse", "mae", "auc", "average_precision", "l2"),
                         multiclassova = c("multi_logloss", "multi_error"), cross_entropy = c("cross_entropy"),
                         mape = c("mape", "mae", "rmse", "l2"), fair = c("fair", "rmse", "mae", "l2"),
                         cox = c("cox_nloglik"))
# Metrics with a cut-off k ("ndcg@5"): given bare, one for each of `eval_at`.
.HB_AT_METRICS <- c("ndcg", "map")

# Metric names as given ("ndcg@5") -> list(name (without the cut-off), code, at (0: none)).
.hb_metric_parse <- function(m) {
  base <- sub("@.*$", "", m)
  at <- ifelse(grepl("@", m, fixed = TRUE), suppressWarnings(as.integer(sub("^[^@]*@", "", m))), 0L)
  list(name = base, code = unname(.HB_METRICS[base]), at = as.integer(at))
}

# Arguments of histboost.default() (for the unknown-argument check).
.HB_TRAIN_ARGS <- c(
  "x", "y", "weights", "init_score", "init_model", "nrounds", "objective", "learning_rate", "num_leaves",
  "max_depth", "min_data_in_leaf", "min_sum_hessian_in_leaf", "lambda_l1", "lambda_l2", "min_gain_to_split",
  "max_bin", "min_data_in_bin", "bin_sample_rows", "max_bin_by_feature", "max_cat_threshold", "cat_smooth", "cat_l2",
  "min_data_per_group", "max_cat_to_onehot",
  "ordered_factors", "bagging_fraction",
  "bagging_freq", "pos_bagging_fraction", "neg_bagging_fraction", "feature_fraction", "boost_from_average",
  "tweedie_variance_power",
  "huber_delta", "poisson_max_delta_step",
  "quantile_alpha", "fair_c", "group", "eval_at", "lambdarank_truncation_level", "lambdarank_norm", "label_gain", "goss",
  "top_rate", "other_rate", "boosting", "monotone_constraints", "valid", "early_stopping_rounds", "eval_metric",
  "nthreads", "seed", "device", "quantized", "grad_bits", "stochastic_rounding", "refit_leaves", "enable_bundle",
  "max_conflict_rate", "scale_pos_weight", "is_unbalance", "class_weights", "early_stopping_min_delta",
  "early_stopping_metric", "callbacks", "params", "keep_fitted", "verbose",
  "drop_rate", "max_drop", "skip_drop", "xgboost_dart_mode", "uniform_drop", "extra_trees",
  "interaction_constraints", "feature_fraction_bynode", "path_smooth", "max_delta_step", "exact_sums",
  "skip_unsplittable", "feature_pre_filter", "distributed", "gpu_column_copy"
)
# The binning parameters (hb_dataset()'s too; an hb_dataset fixes them).
.HB_BIN_ARGS <- c("max_bin", "min_data_in_bin", "bin_sample_rows", "max_bin_by_feature")
# Those `params` may not set: the data.
.HB_DATA_ARGS <- c("x", "y", "weights", "init_score", "init_model", "group", "valid", "params", "callbacks",
                   "distributed")

#' Train a histogram gradient-boosted tree model
#'
#' Fits gradient-boosted decision trees on binned features (LightGBM-style
#' leaf-wise growth, native categorical splits for factors, learned directions
#' for missing values). The task follows the class of `y`: numeric for
#' regression, a two-level factor (or logical) for binary classification, a
#' factor with more levels for multiclass classification.
#'
#' Missing values in `x` need no imputation. A numeric split learns where
#' `NA` goes from the training rows of its node that had it; where the node
#' had none, `NA` follows the child with more training rows (ties: left), so
#' a feature never missing in training still sends `NA` somewhere sensible at
#' prediction (LightGBM reads such an `NA` as 0 instead). For a factor,
#' `NA` is one more category (see `max_cat_to_onehot`).
#'
#' @param x A data.frame (numeric, integer, logical and factor columns; factors
#'   are split natively, without dummy coding), a numeric matrix, a
#'   `Matrix::dgCMatrix`, or an [hb_dataset()] (which then supplies `y`,
#'   `weights` and `max_bin`). Columns without names (a matrix without
#'   column names, a data.frame without names) are named `V1`, `V2`, ...,
#'   and the model then matches new data by position, whatever its names.
#'   For the formula method, a formula such as `y ~ .` (no interactions;
#'   factors stay factors).
#' @param ... For `histboost()`, arguments of the methods; for the formula
#'   method, any argument of the default method. Arguments after `...` are
#'   matched by their full names only (R's partial matching does not apply):
#'   an unknown, misspelt or shortened name (`nround`, `lambda`) is an error
#'   that suggests the right one.
#' @return An object of class `"histboost"` (with DART, also `dart_dropped`): a list with `model_text` (the
#'   serialized model), `.ptr` (a cache of the loaded native model), `task`,
#'   `classes`, `feature_names`, `feature_names_generated` (`TRUE` when `x`
#'   had no column names and `feature_names` were made up: `predict()` then
#'   matches columns by position; recorded in the model text, which
#'   `hb_save()` writes), `feature_types`, `feature_levels`, `params`
#'   (the training parameters; `params$metrics` names every metric of the
#'   evaluation log in order, a metric function's by the name it returns),
#'   `niter`, `best_iteration`, `best_score`, `evaluation_log` and `call`
#'   (calling `histboost()`, so that `update(fit, nrounds = 200)` refits with
#'   changed arguments, and `update(fit, . ~ . - x)` with a changed formula).
#'   `saveRDS()` works on it directly; see also [hb_save()].
#'   The fields restate what `model_text` says, and `predict()`, [hb_trees()]
#'   and [hb_importance()] refuse an object whose fields were edited (an error
#'   of class `histboost_error_format`): the text is what predicts.
#'   With `device = "cuda"` and `options(histboost.gpu_profile = TRUE)` (which
#'   times the kernels, so training is a little slower), also `gpu_profile`: a
#'   list of the device milliseconds of whole rounds (`round_ms`) and of the
#'   partition, histogram and split-search kernels in them (`partition_ms`,
#'   `hist_ms`, `split_ms`), the bytes the histogram kernels read
#'   (`hist_bytes`), `splits`, `rounds`; and device memory in bytes: what
#'   the training took (`device_bytes`: the GPU's free memory before its
#'   setup and validation sets less after), the GPU's used memory at its
#'   highest when sampled (`device_used_peak_bytes`: every process's, the CUDA
#'   context's too) and its total (`device_total_bytes`).
#'   On the CPU, `options(histboost.cpu_profile = TRUE)` adds `cpu_profile`:
#'   the wall-clock milliseconds of whole rounds (`round_ms`, gradients and
#'   score updates included), of the trees (`tree_ms`) and within them of the
#'   row partitions, the histograms (the root's and each smaller child's) and
#'   the split search (the root's, and each pair of children's subtraction
#'   and scan) (`partition_ms`, `hist_ms`, `split_ms`; summed over the
#'   classes' trees where they grow at once), `splits`, `rounds`,
#'   `class_workers` (how many of a round's class trees grow at once: 1, or
#'   for a multiclass model at many threads several, each on a share of the
#'   threads, with the same model), `class_worker_bytes` (about the memory
#'   the workers beyond the first add once their histogram pools are full;
#'   they read the first's row-wise bins when those hold no gradients: in
#'   full precision, with more than 16 dense features and no bundles of
#'   sparse ones), and `hist_by_rows`: the histograms and their milliseconds by
#'   the leaf's rows, in classes of a factor of 4 (`rows_from` to
#'   `rows_below`: under 1,024, then 1,024 to 4,095, ..., 1,048,576 or
#'   more); what `inst/bench/` uses to see where threads lose time.
#' @seealso [predict.histboost()], [hb_importance()], [hb_trees()], [hb_dataset()]
#' @examples
#' set.seed(1)
#' df <- data.frame(a = runif(300), b = factor(sample(c("x", "y", "z"), 300, TRUE)))
#' df$a[sample(300, 20)] <- NA
#' y <- ifelse(is.na(df$a), 0, df$a) * 2 + (df$b == "y") + rnorm(300, sd = 0.1)
#' fit <- histboost(df, y, nrounds = 20, nthreads = 1, verbose = 0)
#' fit
#' head(predict(fit, df))
#'
#' # Binary classification with a validation set and early stopping
#' cls <- factor(ifelse(y > 1, "high", "low"))
#' fit2 <- histboost(df[1:200, ], cls[1:200], nrounds = 50, nthreads = 1,
#'                   valid = list(test = list(x = df[201:300, ], y = cls[201:300])),
#'                   early_stopping_rounds = 5, verbose = 0)
#' fit2$best_iteration
#' table(predict(fit2, df[201:300, ], type = "class"), cls[201:300])
#'
#' # The formula interface
#' fit3 <- histboost(mpg ~ ., data = mtcars, nrounds = 10, min_data_in_leaf = 5,
#'                   nthreads = 1, verbose = 0)
#'
#' # Ranking: grades 0-3, rows grouped into queries
#' q <- rep(1:30, each = 10)
#' grade <- findInterval(ifelse(is.na(df$a), 0, df$a) + rnorm(300, sd = 0.2), c(0.3, 0.6, 0.9))
#' fit4 <- histboost(df, grade, group = q, objective = "lambdarank", nrounds = 10,
#'                   min_data_in_leaf = 5, nthreads = 1, verbose = 0)
#' head(predict(fit4, df))  # scores: higher ranks first within a query
#' @export
histboost <- function(x, ...) {
  # No data at all. (histboost(formula = , data = ), as update() calls a
  # formula fit again, dispatches on its first argument.)
  if (missing(x) && !...length()) {
    .hb_abort("`x` is required: give the data and the labels, histboost(x, y, ...), or a formula and a ",
              "data.frame, histboost(y ~ ., data = df, ...).")
  }
  UseMethod("histboost")
}

#' @rdname histboost
#' @param y Labels: a numeric vector (regression), a factor (classes; levels
#'   without rows are dropped with a warning), a logical vector, or a
#'   right-censored `survival::Surv(time, status)` (`objective = "cox"`).
#'   Missing values are not allowed (nor a factor's `NA` level, as from
#'   `addNA()`, which marks missing values too). A vector in `I()` or a 1-d
#'   array is taken as the plain vector, as [lm()] takes it; so are `weights`.
#' @param weights `NULL` or non-negative row weights.
#' @param init_score `NULL`, or each row's starting raw score, an offset on
#'   the raw (link) scale: a numeric vector, or for multiclass a matrix with
#'   one column per class. Boosting starts from it instead of the labels'
#'   average, and the model's own starting score is 0 (as in LightGBM), so
#'   predictions for new rows need their offset too (`predict(...,
#'   init_score =)`). For a Poisson rate with exposure `e`, give `log(e)`;
#'   the formula method takes `offset(log(e))`. Validation sets then need
#'   theirs: `list(x = , y = , init_score = )`.
#' @param init_model `NULL`, or a histboost model to continue: training starts
#'   from its raw predictions (at its best iteration, else all; plus any
#'   `init_score`) for `x` and the validation sets, and the result holds its
#'   trees followed by the new ones, so it predicts on its own. The data must
#'   have the model's features, classes and objective: columns are matched by
#'   name (by position when `x` has no column names, or the model was trained
#'   on data without them: then `x` needs exactly its columns, in order,
#'   whatever their names) and factor levels by label, as `predict()` matches
#'   them (a new batch
#'   may lack some levels or order them otherwise; a level the model never saw
#'   is an error, as a continued tree could not split on it); not for random forests
#'   or with `x` an `hb_dataset`, and validation sets as `list(x = , y = )`.
#'   The parameters of its loss (`tweedie_variance_power`, `huber_delta`,
#'   `quantile_alpha`, `fair_c`; for ranking `lambdarank_truncation_level`,
#'   `lambdarank_norm` and `label_gain`) must be the model's.
#'   The evaluation log and best iteration count the model's iterations too.
#'   Random draws (bagging, feature sampling, stochastic rounding) count the
#'   continuation's rounds from 1, so with them a continuation is not the
#'   same model as one longer training.
#' @param nrounds Number of boosting rounds (iterations).
#' @param objective `"auto"` (from `y`), `"regression"` (squared error),
#'   `"binary"` (also accepts numeric 0/1 labels), `"multiclass"`, or a loss
#'   for a numeric `y`: `"poisson"` (counts, `y >= 0`), `"gamma"` (`y > 0`),
#'   `"tweedie"` (`y >= 0`, e.g. claim amounts with zeros), which model the
#'   log of the mean (`predict()` returns `exp(score)`), `"huber"`
#'   (squared error for residuals within `huber_delta`, absolute beyond),
#'   `"l1"` (absolute error: the conditional median) or `"quantile"` (the
#'   pinball loss: the conditional `quantile_alpha` quantile). `"l1"` and
#'   `"quantile"` refit each leaf to the quantile of its rows' residuals,
#'   as LightGBM does (on the GPU the host refits the device's trees). The
#'   quantile is the one that minimises the leaf's loss exactly: the
#'   `ceiling(alpha * n)`-th smallest residual (the mean of it and the next
#'   where `alpha * n` is whole), by weight for weighted rows. LightGBM
#'   interpolates between two neighbouring residuals instead, so for
#'   `quantile_alpha` other than 0.5, for weighted rows and for `"mape"`
#'   the two packages' leaf values differ, and the later trees with them.
#'   `"lambdarank"` learns to
#'   rank the rows of each query given by `group` (LambdaRank with NDCG,
#'   as LightGBM's): `y` holds relevance grades 0, 1, 2, ... (higher is more
#'   relevant), scores order a query's rows, and the default metric is NDCG
#'   at `eval_at` (`"map"`, mean average precision, is the other; on the GPU
#'   the host computes each round's gradients).
#'   `"multiclassova"` (a factor `y` of three or more classes) fits one
#'   logistic score per class against the rest (LightGBM's one-vs-all);
#'   `predict()` returns each class's sigmoid, which need not sum to 1, as
#'   LightGBM's does. `"cross_entropy"` (LightGBM's `xentropy`) is the
#'   logistic loss for a numeric `y` of probabilities in \[0, 1\];
#'   `predict()` returns the probability. `"mape"` (mean absolute percentage
#'   error, `|y - score| / max(1, |y|)`, as LightGBM: labels below 1 in size
#'   count as 1) refits each leaf to the weighted median of its residuals,
#'   each row weighing `1 / max(1, |y|)`, and starts from that median of `y`
#'   (LightGBM interpolates its weighted median, so its start differs a
#'   little). `"fair"` is the Fair loss `c^2 (|r| / c - log(1 + |r| / c))` of
#'   the residual `r` at `c = fair_c`, robust to outliers, starting from the
#'   mean. `"cox"` (Cox proportional hazards, xgboost's `survival:cox`) takes
#'   a right-censored `survival::Surv(time, status)` response (times > 0):
#'   it minimises the negative log partial likelihood with Breslow's ties,
#'   weighted as `survival::coxph()` weighs, starts from 0 and `predict()`
#'   returns the relative risk `exp(score)` (`type = "raw"`: the log risk);
#'   a `Surv` response chooses it when `objective = "auto"`. Every objective
#'   trains on the GPU too (Cox's gradients are computed on the host, which
#'   keeps the rows in order of time).
#'   LightGBM's and xgboost's names of these objectives (`"l2"`, `"mse"`,
#'   `"mae"`, `"xentropy"`, `"binary:logistic"`, `"multi:softprob"`, ...)
#'   are taken too, as in `params`.
#'   Or a function `function(preds, labels)` returning `list(grad = , hess
#'   = )`: a custom loss's first and second derivatives with respect to the
#'   raw score, one value each per training row (hessians >= 0), called
#'   every round with the rows' current raw scores and numeric labels (0/1
#'   for a two-class `y`: 1 for its second level; the model keeps no classes
#'   and `predict()` only raw scores). Weights multiply what it returns; boosting starts
#'   from 0 (or `init_score`); `predict()` returns raw scores (apply your
#'   link yourself) and the metrics `"rmse"` (default), `"mae"`, `"auc"` and
#'   `"average_precision"` judge raw scores. One score a row, on the CPU or
#'   the GPU (whose scores come back to R each round), with `x` as data (not
#'   an `hb_dataset`). With a factor `y` of K >= 3 classes a custom objective
#'   has one score per class, as LightGBM's R package: `preds` is an n x K
#'   matrix of raw scores, `labels` the classes as 0 to K - 1, and `grad`
#'   and `hess` are n x K matrices (or vectors of n * K values, class after
#'   class); `predict()` gives an n x K matrix of raw scores (`type =
#'   "class"`: the class of the largest), the metrics are `"multi_logloss"`
#'   (default) and `"multi_error"` of their softmax.
#' @param learning_rate Shrinkage applied to each tree, > 0.
#' @param num_leaves Most leaves per tree, >= 2.
#' @param max_depth Most depth of a tree; <= 0 means no limit.
#' @param min_data_in_leaf Fewest rows in a leaf. While searching splits the
#'   rows of a candidate side are not counted but estimated from hessian sums,
#'   as LightGBM does (histograms hold only gradient and hessian sums): a
#'   histogram bin's count is `round(h * n / H)` (halves rounded up), with
#'   `h` its hessian sum and `n`, `H` the leaf's exact row count and hessian
#'   sum; a side's count is the sum of its bins' estimates, and the other
#'   side's is `n` minus that. The estimate is exact when every row has the
#'   same hessian (squared error without weights); with weights, or for
#'   classification, it can differ from the true count, so a leaf may get
#'   fewer rows than `min_data_in_leaf` and a split with enough rows may be
#'   passed over. Leaf counts reported by [hb_trees()] are exact.
#' @param min_sum_hessian_in_leaf Smallest sum of hessians in a leaf.
#' @param lambda_l1,lambda_l2 L1 and L2 regularization of leaf values, >= 0.
#' @param min_gain_to_split Smallest gain for a split to be made, >= 0.
#' @param max_bin Most bins per numeric feature, 2 to 255 (missing values
#'   take one of them when there are any). Bins are placed as LightGBM
#'   places them, from a sample of about `bin_sample_rows` rows, so that the same rows
#'   share a bin in both: negative values, 0 (with anything within 1e-35 of
#'   it) and positive values apart, 0 alone; on each side, values few enough
#'   for the side's share of bins are merged in increasing order until a bin
#'   holds `min_data_in_bin` sampled rows (a side's last bin
#'   may hold fewer), so that small data are not split between single rows;
#'   more values get bins of about equal rows, a value as frequent as an
#'   average bin alone. (LightGBM's empty zero bin, when no value is 0, is
#'   left out.) A factor's levels
#'   get bins as LightGBM gives them: most rows first; past the first two, a
#'   level of fewer than `min_data_in_bin` rows and every rarer
#'   one share the missing bin with `NA`, as does the rarest level once the
#'   others hold 99% of the non-missing rows (so a small table's rare levels
#'   do not make a 3-level factor a many-vs-many one). A factor with more
#'   levels than `max_bin` keeps them, while they are needed to hold 99% of
#'   its rows (up to 64 x `max_bin`): its levels are binned `max_bin` at a time
#'   into several internal features, and a split on any of them is a split on
#'   a set of the factor's levels.
#' @param max_bin_by_feature `NULL`, or columns' own `max_bin` (LightGBM's
#'   `max_bin_by_feature`): whole numbers from 2 to 255, named by column
#'   (`c(age = 15)`; the other columns keep `max_bin`) or one a column; see
#'   [hb_dataset()]. Fixed by an hb_dataset `x`.
#' @param min_data_in_bin,bin_sample_rows The fewest sampled rows a numeric
#'   bin holds (and a factor's level needs to keep a bin of its own), 3 by
#'   default; and about how many rows are sampled to place the bins (each
#'   with that share of the rows' chance), 200,000 by default
#'   (LightGBM's `min_data_in_bin` and `bin_construct_sample_cnt`, names that
#'   `params` takes): see [hb_dataset()]. Fixed by an hb_dataset `x`.
#' @param max_cat_threshold Most categories on the scanned side of a
#'   many-vs-many categorical split (at most half the categories scanned).
#' @param cat_smooth In a many-vs-many categorical split, the fewest rows a
#'   category needs in the leaf to enter the search (the others go right),
#'   and the smoothing added to its hessian sum when categories are ordered by
#'   `G / (H + cat_smooth)`; >= 0.
#' @param cat_l2 Extra L2 regularization of the children of a many-vs-many
#'   categorical split, >= 0.
#' @param min_data_per_group In a many-vs-many categorical split, the rows
#'   that must join the left side between two candidate splits of the scan,
#'   and the fewest rows on the right side.
#' @param max_cat_to_onehot A factor with at most this many bins (its levels
#'   plus one for missing values, so 3 levels by default) is split one
#'   category against the rest; larger ones many-vs-many. Categorical
#'   splits follow LightGBM's rules: a category's rows are estimated from
#'   its hessian sum like the counts of `min_data_in_leaf`, categories are
#'   ordered by `G / (H + cat_smooth)` and the first (or last) k go left.
#'   Missing values are one more category (LightGBM sends them right).
#' @param ordered_factors How ordered factors are split: `"ordinal"` (the
#'   default) on their level order, as numbers 1, 2, ... with a learned
#'   direction for missing values (and for labels unseen in training), as
#'   rpart and ranger do; `"categorical"` by sets of levels as any factor.
#'   See [hb_dataset()].
#' @param bagging_fraction Share of rows sampled every `bagging_freq` rounds,
#'   in (0, 1].
#' @param bagging_freq Resample rows every this many rounds; 0 disables bagging
#'   (a fraction below 1 then has no effect, and a warning says so).
#' @param pos_bagging_fraction,neg_bagging_fraction Balanced bagging (LightGBM's)
#'   for `objective = "binary"`: the share, in (0, 1], of the positive
#'   class's rows (the second level of a factor `y`, `TRUE`, or 1) and of the
#'   negative class's rows sampled every `bagging_freq` rounds, in place of
#'   `bagging_fraction`. Each row is in the bag when its draw for the seed,
#'   the bagging round and the row is below its class's share (the same draws
#'   as `bagging_fraction`'s, on the CPU, the GPU and over MPI), so
#'   `neg_bagging_fraction = 0.1` keeps every positive row and about a tenth
#'   of the negative ones: a rare class is kept whole while the trees see
#'   a smaller sample. Both 1 (the default): bagging as `bagging_fraction`
#'   says. Needs `bagging_freq` >= 1, as `bagging_fraction` does.
#' @param feature_fraction Share of features each tree may use, in (0, 1].
#' @param boost_from_average `TRUE` (LightGBM's default) starts every row
#'   from the objective's best constant score: the weighted label mean
#'   (`"regression"`, `"huber"`, `"fair"`), median (`"l1"`), quantile
#'   (`"quantile"`) or weighted median (`"mape"`), the log-odds (`"binary"`,
#'   `"cross_entropy"`), the log of the mean (`"poisson"`, `"gamma"`,
#'   `"tweedie"`), each class's log share (`"multiclass"`) or log-odds
#'   (`"multiclassova"`). `FALSE` starts from 0, as LightGBM's
#'   `boost_from_average = FALSE`, and the trees learn the level too.
#'   `"lambdarank"`, `"cox"` and a custom objective always start from 0, and
#'   so does a model given a per-row `init_score` (the offset takes the
#'   start's place) or continued from `init_model` (it starts from that
#'   model's scores).
#' @param tweedie_variance_power The Tweedie power p, in (1, 2): near 1 the
#'   loss is Poisson-like, near 2 gamma-like.
#' @param huber_delta Residuals up to this size count quadratically in the
#'   Huber loss, larger ones linearly; > 0. LightGBM calls it `alpha` and
#'   defaults it to 0.9 (histboost: 1): give `huber_delta = 0.9` for
#'   LightGBM's model.
#' @param poisson_max_delta_step The Poisson hessian is taken at
#'   `exp(score + poisson_max_delta_step)`, which damps the first steps
#'   (LightGBM's safeguard); >= 0.
#' @param quantile_alpha The quantile `objective = "quantile"` fits, in
#'   (0, 1): 0.9 predicts the 90th percentile of `y` given `x`. The default
#'   0.5 fits the median; LightGBM's `alpha` defaults to 0.9.
#' @param fair_c The scale `c` of the Fair loss (`objective = "fair"` and
#'   metric `"fair"`), > 0 (LightGBM's `fair_c`, default 1): residuals much
#'   smaller than it count about quadratically, larger ones about linearly.
#' @param group Ranking only: the query of each row, a vector of ids
#'   (integer, factor or character, no `NA`) as long as `y`. A query's rows
#'   need not be contiguous and may come in any order: tied scores are
#'   resolved by their expectation over the tied orders (see Details), so
#'   row order never decides a ranking; rows in another order only sum in
#'   another order, which can flip a split between candidates whose gains
#'   agree to the last bits. A validation set gives its own, `list(x = , y = , group = )`.
#' @param eval_at Cut-offs k of the `"ndcg"` and `"map"` metrics:
#'   `eval_metric = "ndcg"` (the default for ranking) logs `ndcg@k` for each,
#'   and `"map"` `map@k`, the first one steering early stopping (higher is
#'   better). `"ndcg@10"` or `"map@10"` may also be named directly in
#'   `eval_metric`.
#' @param lambdarank_truncation_level A pair of a query's rows counts only
#'   when one of them is among this many top-scored rows (LightGBM's
#'   `lambdarank_truncation_level`); >= 1.
#' @param lambdarank_norm `TRUE` normalises each query's gradients as
#'   LightGBM does (divides a pair's weight by 0.01 + the score gap and scales
#'   the query's gradients by log2(1 + S) / S, S their sum of absolute values).
#' @param label_gain `NULL` (the gain of grade i is `2^i - 1`, for grades 0 to
#'   30) or the gain of each grade 0, 1, 2, ...: non-negative and
#'   non-decreasing, at most 64 values. Labels must be below its length.
#' @param goss `TRUE` for gradient-based one-side sampling (Ke et al.
#'   2017): after the first `1 / learning_rate` rounds, each tree grows from
#'   the `top_rate` share of rows with the largest gradients (|g h| summed
#'   over classes) and a random `other_rate` share of the rest, whose
#'   gradients are scaled by `(1 - top_rate) / other_rate`. Faster on large
#'   data at little cost in accuracy; not with bagging. The CPU and the GPU
#'   draw the same rows (the draws depend on `seed`, the round and the row
#'   only) and grow the same trees.
#' @param top_rate,other_rate GOSS's shares, in (0, 1), summing to at most 1.
#' @param boosting `"gbdt"` (gradient boosting), `"dart"` (DART: dropouts
#'   meet boosting, as LightGBM's; see `drop_rate`) or `"rf"` (a random forest,
#'   as LightGBM's: every tree fits the gradients at the starting score from
#'   its own bag or feature sample, unshrunk (`learning_rate` is not used),
#'   and the prediction is the starting score plus the mean of the trees).
#'   `"rf"` needs bagging (`bagging_fraction` < 1, `bagging_freq` >= 1) or
#'   `feature_fraction` < 1; it trains on the CPU or the GPU (the same
#'   trees), not with GOSS.
#' @param drop_rate,max_drop,skip_drop,xgboost_dart_mode,uniform_drop DART
#'   (`boosting = "dart"`, LightGBM's): each round, unless it skips dropping
#'   (chance `skip_drop`, in \[0, 1\]), each earlier iteration is dropped with
#'   chance `drop_rate` (in \[0, 1\]) times its weight over the mean weight
#'   (`uniform_drop = TRUE`: `drop_rate` for each), at most `max_drop` of
#'   them (`<= 0`: no limit; the rate is first capped as LightGBM caps it).
#'   The new trees are fitted to the scores without the dropped ones and
#'   shrunk by `learning_rate / (1 + k)` for `k` dropped, and each dropped
#'   tree is scaled by `k / (k + 1)`; with `xgboost_dart_mode = TRUE`
#'   `learning_rate / (learning_rate + k)` and `k / (k + learning_rate)`
#'   (xgboost's `normalize_type = "tree"`). The trees keep their final
#'   weights in their leaf values, so `predict()`, [hb_save()] and
#'   [hb_load()] need nothing more; `fit$dart_dropped` lists, per iteration,
#'   the iterations it dropped (a record of the training kept in the R object:
#'   [saveRDS()] keeps it, the model file of [hb_save()] does not, so a model
#'   continued from a loaded file records no drops for its base). A model continued from `init_model` numbers
#'   them as its own iterations; the base model's trees are its starting
#'   score and are never dropped (its entries are the base's, or empty when
#'   the base was not DART). The draws depend on `seed`, the round and the
#'   tree only. The starting score (the label mean, log-odds, ...) stays
#'   apart from the trees and is never dropped or rescaled, as xgboost's
#'   base score; LightGBM instead folds it into its first tree, which DART
#'   then rescales, so the two agree where both start from 0 (tested with
#'   `init_score = 0` against LightGBM's `boost_from_average = FALSE`).
#'   On the CPU or the GPU (the same drops; the GPU routes its rows through
#'   the dropped trees on the device); not with early stopping (a later round rescales
#'   the trees of the best iteration, as in LightGBM) nor a custom
#'   `objective` function.
#' @param extra_trees `TRUE` for extremely randomized trees (LightGBM's
#'   `extra_trees`): at each node each feature offers one threshold, drawn
#'   uniformly among its bin boundaries (one category, or one prefix length,
#'   for a factor), and the best of these is taken. The draws depend on
#'   `seed`, the tree, the node and the feature only, on either device. Not
#'   with `quantized = TRUE`.
#' @param interaction_constraints `NULL`, or a list of groups of columns,
#'   each a vector of column names or (1-based) column numbers, e.g.
#'   `list(c("age", "income"), c("dose", "weight"))`: a branch of a tree may
#'   only split on the columns of a group that holds every column used
#'   above it (LightGBM's rule), so columns of two groups never interact.
#'   Columns named in no group make one more group, as in LightGBM's R
#'   package. The model keeps the groups by name
#'   (`fit$params$interaction_constraints`).
#' @param feature_fraction_bynode Share of the tree's features (columns)
#'   each node may split on, in (0, 1]: `round(share x columns)`, at least
#'   one, drawn afresh for every node (from `seed`, the tree and the node),
#'   the same columns on either device.
#' @param path_smooth At least 0: each leaf's output is pulled towards its
#'   parent's, `o * (n / path_smooth) / (n / path_smooth + 1) + parent /
#'   (n / path_smooth + 1)` with `n` its rows, and split gains are taken at
#'   these outputs (LightGBM's `path_smooth`); 0 disables it. Not with
#'   `quantized = TRUE`.
#' @param max_delta_step At least 0: each leaf's output (before `learning_rate`)
#'   is capped to `[-max_delta_step, max_delta_step]`, for every objective
#'   (leaves refit by `"l1"` and `"quantile"` too), and split gains are taken
#'   at the capped outputs (LightGBM's `max_delta_step`, xgboost's for every
#'   loss); 0 means no cap. Not `poisson_max_delta_step`, which damps the
#'   Poisson hessian. Not with `quantized = TRUE`.
#' @param skip_unsplittable `TRUE` follows LightGBM's rule (its
#'   `SerialTreeLearner::FindBestSplits`): a feature in which a leaf's search
#'   found no valid split (none passing `min_data_in_leaf`,
#'   `min_sum_hessian_in_leaf` and `min_gain_to_split`) is not searched again
#'   anywhere in that leaf's subtree. With it histboost grows LightGBM's
#'   trees where they would otherwise differ. `FALSE` (the default) searches
#'   every feature in every leaf, so a feature that says nothing on its own
#'   but matters after another split (an interaction, `y ~ xor(a, b)`) is
#'   still found. On 39 real tables (`inst/bench/real-data-cv.R`) the two
#'   were even: 8 cases better with it, 9 worse, by at most 1.7%.
#' @param feature_pre_filter `TRUE` (the default, as LightGBM's) never splits
#'   on a feature where no split could leave `min_data_in_leaf` training rows
#'   on each side (a sparse indicator set in fewer rows, a number whose
#'   values but a few are one), counted over all the training rows. Without
#'   it such a split can still be taken where the search's row counts,
#'   estimated from the hessians as LightGBM's are, pass `min_data_in_leaf`.
#'   LightGBM counts on its binning sample (at most `bin_construct_sample_cnt`
#'   rows), histboost on every row, so past 200,000 rows the two can differ.
#' @param exact_sums `TRUE` puts each tree's gradients and hessians (full
#'   precision) on a fixed grid before the tree grows: each is rounded to a
#'   multiple of \eqn{2^{-e}}, with \eqn{e} chosen from the largest value and
#'   the row count so that every sum of them is exact in a double. The
#'   trees' sums then do not depend on the order in which rows are added, on
#'   the thread count, or on how the rows are sharded over processes: with
#'   `distributed = "mpi"` the model of any number of processes is byte for
#'   byte the model of one process given all the rows (in rank order) and
#'   `exact_sums = TRUE`; and the processes' histograms are summed by MPI
#'   itself in any order (the same double), where without the grid every
#'   process gathers every other's and adds them in rank order. On one
#'   process, reordering the rows still changes
#'   what is drawn or summed by row position: the default starting score (a
#'   mean of the labels; give `init_score` to fix it), bagging and GOSS's
#'   draws, the binning sample of more than 200,000 rows, and the gradients
#'   of `"lambdarank"` and `"cox"`, which are taken in row order. The grid
#'   step is absolute, about \eqn{2^{-52}} of the row count times the largest
#'   gradient (about `1e-9` for ten million rows of binary log loss): rows
#'   whose gradients or hessians are far smaller than the largest keep fewer
#'   digits (with weights spanning nine orders of magnitude, predictions
#'   moved by about `1e-9` relative), and a hessian below half a step counts
#'   as 0. On the grid the CPU also sums a leaf's histogram in more parts of
#'   its rows from 8 threads on (each row then read by fewer threads), which
#'   the exact sums allow without giving up one model for every thread
#'   count: 7% less training time at 16 threads on 2M Higgs-shaped rows
#'   (`inst/bench/results/exact-default-2026-12-02.md`). `NULL` (the
#'   default) is `TRUE` wherever the CPU trains in full precision and
#'   `FALSE` on the GPU (continuing an `init_model` does not inherit its
#'   setting: the default applies); `FALSE` keeps plain doubles, summed in parts that
#'   depend on the row count alone (also one model for any thread count,
#'   but not for any number of processes, nor for reordered rows).
#'   Quantized training's sums are integers and exact already (`exact_sums`
#'   changes nothing there). CPU only: the GPU learner's full-precision sums
#'   are fixed point already, on a grid of their own.
#' @param monotone_constraints `NULL`, or the direction each numeric column
#'   must move the prediction in: `1` increasing, `-1` decreasing, `0` free.
#'   Either one value per column of `x` in order, or a vector named by
#'   column (columns not named are free), e.g. `c(age = 1, dose = -1)`.
#'   LightGBM's `"basic"` method: every leaf's output is bounded, a split on
#'   a constrained column is only taken when its two sides' outputs follow
#'   the direction, and their midpoint then bounds each side's subtree. The
#'   raw prediction (each class's, for multiclass) is then monotone in the
#'   column with the others held fixed; a missing value goes wherever the
#'   tree sent missing values and is not ordered against the numbers.
#'   Numeric columns only (not factors); the CPU and the GPU grow the same
#'   trees; not with `objective` `"l1"`, `"quantile"` or `"mape"`, whose refit leaves
#'   would break the constraints. Works with quantized training, bagging,
#'   GOSS and `boosting = "rf"`. The model keeps them
#'   (`fit$params$monotone_constraints`).
#' @param valid `NULL` or a list of validation sets, each an [hb_dataset()]
#'   made with `reference` = the training dataset, or `list(x = , y = ,
#'   weights = NULL, init_score = NULL, group = NULL)` (`group`: for
#'   ranking, where it is needed). Unnamed sets are called `"valid_1"`, `"valid_2"`, ...
#'   For the formula method a set may also be a data.frame holding the
#'   formula's variables, the response among them, or `list(x = <such a
#'   data.frame>, ...)`: its predictors, response (unless `y` is given) and
#'   `offset()` (as `init_score`, unless `init_score` is given) are computed
#'   from it as `predict()` does from `newdata` (`valid = list(test = df_test)`).
#' @param early_stopping_rounds `NULL`, or stop when the first metric on the
#'   last validation set (or the one `early_stopping_metric` names) has not
#'   improved (by more than `early_stopping_min_delta`) for this many rounds;
#'   the best iteration is then used by `predict()`.
#' @param eval_metric `NULL` (the objective's own loss: rmse, logloss,
#'   multi_logloss, poisson, gamma, tweedie or huber) or a character vector
#'   from `"rmse"`, `"mae"`, `"huber"` (regression), `"logloss"`, `"auc"`,
#'   `"error"` (binary), `"multi_logloss"`, `"multi_error"` (multiclass), and
#'   for `"poisson"`, `"gamma"` and `"tweedie"` their own loss, `"rmse"` and
#'   `"mae"` (of the response, `exp(score)`); `"huber"` also takes `"rmse"` and
#'   `"mae"`; `"l1"` `"mae"` and `"rmse"`; `"quantile"` its pinball loss
#'   (`"quantile"`), `"mae"` and `"rmse"`; `"lambdarank"` `"ndcg"` (NDCG at
#'   each of `eval_at`), `"map"` (MAP, mean average precision, at each of
#'   `eval_at`), `"ndcg@k"` or `"map@k"`. `"average_precision"` (binary,
#'   custom objectives) is the area under the precision-recall curve as
#'   LightGBM computes it (`aucpr` in xgboost's words): the positives'
#'   weight at each distinct score, highest first, times the precision there,
#'   over all positives' weight; higher is better and it can steer early
#'   stopping. `"l2"` (the mean squared error, LightGBM's name; `"mse"` is
#'   an alias) goes wherever `"rmse"` does. `"mape"` and `"fair"` (at `fair_c`) are also metrics of
#'   `"regression"` (and `"mape"` of `"l1"`); `"cross_entropy"`,
#'   `"mape"` and `"fair"` are the defaults of their objectives;
#'   `"multiclassova"` takes `"multi_logloss"` (of each class's sigmoid, as
#'   LightGBM) and `"multi_error"`; `"cox"` takes `"cox_nloglik"`, the
#'   negative log partial likelihood per unit of event weight (xgboost's
#'   `cox-nloglik`). LightGBM's and xgboost's names of these are taken too
#'   (`"binary_logloss"`, `"l2_root"`, `"merror"`, `"aucpr"`, ...).
#'   `"multi_error"` counts a row right when its class has the highest score,
#'   the first class among tied ones (as `predict(type = "class")`);
#'   LightGBM counts a tie as wrong. Or your own metric: a
#'   `function(preds, labels)` (or `function(preds, labels, weights)`)
#'   returning `list(name = , value = , higher_better = )`, called after
#'   every round for each validation set with its predictions as
#'   `predict(type = "response")` gives them (probabilities of the second
#'   class for binary, an n x K matrix for multiclass, raw scores for a
#'   custom objective), its labels as numbers (0/1 for two classes, 0 to K - 1
#'   for K, the values of a numeric `y`) and its weights (`NULL` when it has
#'   none). A list mixes names and functions, e.g. `list("auc", f1)`; the
#'   first metric steers early stopping (unless `early_stopping_metric` names
#'   another), and the log calls a function's columns by the name it
#'   returns. [hb_cv()] takes them too.
#' @param early_stopping_min_delta An improvement of the watched metric
#'   counts for early stopping only when it is larger than this, >= 0
#'   (LightGBM's `early_stopping_min_delta`).
#' @param early_stopping_metric `NULL` (the first metric on the last
#'   validation set), the name of a metric (`"auc"`; on the last validation
#'   set) or a column of the evaluation log (`"valid_auc"`): the metric early
#'   stopping watches, and that `best_score` reports (LightGBM's
#'   `first_metric_only = TRUE` is the default here; this picks another).
#' @param scale_pos_weight Binary classification: the weight of the rows of
#'   the positive class (the second level of `y`, `TRUE`, or 1), > 0, as in
#'   xgboost and LightGBM; they multiply `weights`.
#' @param is_unbalance Binary classification: `TRUE` weighs the rows of the
#'   rarer class by (the other class's rows) / (its own rows), as LightGBM's
#'   `is_unbalance`; not with `scale_pos_weight`.
#' @param class_weights `NULL`, or a weight per class, named by the levels
#'   of `y` (classes not named weigh 1), e.g. `c(setosa = 1, virginica = 3)`:
#'   each row's weight is multiplied by its class's.
#'   These three options are row weights: the model equals the one trained
#'   with the matching `weights` (the starting score too, which is the
#'   weighted average, where LightGBM starts from the unweighted
#'   one). Validation sets keep their own weights, so
#'   their metrics are not reweighted; the training data's are.
#' @param callbacks `NULL`, or a list of functions
#'   `function(iteration, evaluation_log, model)`, called in order after
#'   every round with the number of iterations so far (counting
#'   `init_model`'s), the evaluation log so far (a data.frame as the model's
#'   `evaluation_log`; `NULL` without validation sets) and the model so far
#'   (a `"histboost"` model that predicts; built only when a callback uses
#'   it, so cheap callbacks stay cheap). A callback that returns `TRUE`
#'   stops training after that round (as xgboost's); anything else goes on.
#'   Not in [hb_cv()].
#' @param nthreads Threads, a whole number >= 1 (capped at four per core, see
#'   [hb_threads()]); `NULL` uses [hb_threads()]. The model does not
#'   depend on it. With five or more classes and 10 or more threads a
#'   round's class trees grow at once, each on a share of the threads
#'   (faster there; up to 2 GiB more memory).
#' @param seed Seed for bagging and feature sampling; `NULL` draws one from R's
#'   random number generator (so `set.seed()` makes fits reproducible). Stored
#'   in `params`.
#' @param device `"cpu"`; `"cuda"` grows the trees on an NVIDIA GPU (the
#'   package must have been installed where the CUDA toolkit was found, see
#'   [hb_has_cuda()]; with `distributed = "mpi"`, one GPU a process); `"auto"`
#'   uses the GPU when there is one, else the CPU, and says which in a
#'   message (unless `verbose = 0`; with `distributed = "mpi"` it means the
#'   CPU).
#'   GPU and CPU grow the same trees from the same data up to rounding: the GPU
#'   sums gradients in fixed point (exact in any order, so GPU training is
#'   reproducible), and refits leaf values from the full-precision gradients
#'   (with `path_smooth` or `max_delta_step`, each leaf keeps the output its
#'   split's search computed, as on the CPU). DART trains on the GPU too:
#'   the device keeps each tree's routing and drops and rescales trees in
#'   its own scores. A given `exact_sums = TRUE` trains on the CPU only: `"cuda"`
#'   refuses it and `"auto"` takes the CPU for it.
#'   An `x` given as data (not an [hb_dataset()]) and the validation sets
#'   given as data are then binned on the GPU too, with the CPU's bins (see
#'   `device` in [hb_dataset()]).
#' @param gpu_column_copy With `device = "cuda"`: whether the GPU keeps a
#'   second copy of the bins, feature by feature (one byte a row and
#'   feature), beside the row-major copy the histograms read. Splitting rows
#'   and routing them through each finished tree read one feature at a time,
#'   which the copy makes cheaper: on an H200, 500 rounds of 10.5M x 28 rows
#'   trained in 4.42 s with it and 4.60 s without (the same model). Without
#'   it the GPU holds about 93 bytes a row at 28 features (binary or
#'   regression, no weights), with it 121. `-1` (the default) keeps it while
#'   it takes at most 1 GB (up to about 35 million rows of 28 features),
#'   `0` never, `1` whenever the training fits with it. Either way the copy
#'   is left out when only that makes the training fit. The model is the
#'   same whichever is chosen.
#' @param quantized `TRUE` to train on quantized gradients (Shi et al. 2022,
#'   "Quantized Training of Gradient Boosting Decision Trees"): each tree's
#'   gradients and hessians are rounded to `grad_bits`-bit integers, so
#'   histograms sum integers (faster, and exact in any order: quantized models
#'   are identical on the CPU and the GPU and for any thread count). A hessian
#'   that is the same for every row (squared error without weights) is kept
#'   exact.
#' @param grad_bits Bits of a quantized gradient, 2 to 8: gradients take
#'   `2^(grad_bits - 1) - 1` levels each side of zero, hessians `2^grad_bits - 1`.
#' @param stochastic_rounding `TRUE` rounds each value up or down at random
#'   with the probabilities that make the rounding unbiased (the draws depend
#'   on `seed`, the tree and the row only); `FALSE` rounds to nearest.
#' @param refit_leaves `TRUE` computes each leaf's value from the
#'   full-precision gradients of its rows once the tree is grown; `FALSE`
#'   from the quantized ones.
#' @param enable_bundle `TRUE` bundles sparse features that are rarely
#'   non-zero together (exclusive feature bundling, Ke et al. 2017, as
#'   LightGBM's `enable_bundle`): the members of a bundle share one byte a
#'   row, and a leaf's histogram is summed per bundle and split back into
#'   the members' histograms. `FALSE` sums the sparse features from a list
#'   of each row's non-zero entries (4 bytes each). Both cost one addition
#'   per non-zero entry, so bundling saves memory traffic rather than additions: on
#'   100,000 rows x 2,000 one-hot columns of a dgCMatrix it took 1.1 to 1.5
#'   times less CPU time (inst/bench/results/2026-11-27-bundle.md; LightGBM
#'   gains more there because its unbundled path is slower). The model is
#'   the same either way at `max_conflict_rate = 0`. Only features stored
#'   sparse (at least 80% of their rows in one bin) take part, and only on
#'   the CPU; trees, predictions and the model format still name the
#'   original features.
#' @param max_conflict_rate The share of rows, in [0, 1), in which the
#'   members of a bundle may be non-zero together. At 0 (the default, as
#'   LightGBM's) bundles are exact and the model is the same as with
#'   `enable_bundle = FALSE`; above 0 fewer, larger bundles form, and a row
#'   where several members are non-zero counts, in the histograms, only for
#'   the first of them (splits still send it by its own values), so the model
#'   changes a little. With `distributed = "mpi"` the bundles (and which
#'   features are stored sparse) are chosen from every process's rows
#'   together, as one process chooses them on the concatenated rows.
#' @param params `NULL`, or a named list of parameters as LightGBM's and
#'   xgboost's R packages take them, e.g. `list(eta = 0.05, max_leaves = 15,
#'   subsample = 0.8, reg_lambda = 1)`: histboost's own names and those
#'   libraries' aliases of them (`eta`, `num_iterations`, `num_threads`,
#'   `subsample`, `colsample_bytree`, `min_child_samples`,
#'   `min_child_weight`, `reg_lambda`, `reg_alpha`, `lambda`, `max_leaves`,
#'   `min_split_gain`, `gamma`, `metric`, `boosting_type`, `verbosity`, ...),
#'   and their spellings of some values (objectives such as
#'   `"binary:logistic"` or `"regression_l1"`, metrics such as
#'   `"binary_logloss"` or `"mlogloss"`, `boosting = "gbtree"` or `"goss"`,
#'   `device = "gpu"`; for DART and friends `rate_drop`, `sample_type`,
#'   `normalize_type = "tree"`, `colsample_bynode`, `extra_tree`,
#'   `max_leaf_output`). xgboost's `subsample` < 1 also sets `bagging_freq =
#'   1` (it draws rows every round) unless that is given. Every other name of
#'   LightGBM's parameters, and xgboost's common ones, is an error that says
#'   why and what to do instead: `alpha`, which the two libraries use for
#'   different things; names that do not apply (`num_class`: the classes
#'   come from `y`; `categorical_feature`: factors are categories; data file
#'   columns, network and GPU ids, prediction settings, with the argument or
#'   function to use); and what histboost does not have (`linear_tree`,
#'   `cegb_*`, `forcedsplits_filename`, `reg_sqrt`, ...). Those it does not
#'   have are accepted at the value that is what histboost does (mostly
#'   LightGBM's default: `use_missing = TRUE`, `zero_as_missing = FALSE`,
#'   `monotone_constraints_method = "basic"`, `sigmoid = 1`; xgboost's
#'   `grow_policy = "lossguide"`, not its default "depthwise", ...).
#'   LightGBM's `use_quantized_grad` is `quantized`, and its
#'   `quant_train_renew_leaf` (default `FALSE`) is `refit_leaves` (default
#'   `TRUE`). Hints of how to store or check
#'   the data, which histboost decides itself (`force_row_wise`,
#'   `force_col_wise`, `deterministic` (histboost always is),
#'   `is_enable_sparse`, `validate_parameters`, ...),
#'   are accepted and have no effect. A parameter set twice, by two aliases
#'   or by an argument and `params`, must have the same value both times.
#' @param keep_fitted `TRUE` keeps the training rows' predictions and labels
#'   in the model (n values, n x K for K classes, and n labels), for
#'   [fitted()][fitted.histboost] and [residuals()][fitted.histboost]; they
#'   make the object (and `saveRDS()` files) larger, and are not part of the
#'   model text ([hb_save()]).
#' @param distributed `"no"` (the default), or `"mpi"`: data-parallel training over MPI
#'   (see [hb_has_mpi()]). Every process of an MPI job (`mpirun -np 4 Rscript
#'   train.R`) calls `histboost()` at once with its own shard of the rows (at
#'   least one each; validation sets sharded alike) and the same arguments;
#'   all end with the same model. Bin boundaries, factor levels, classes,
#'   histograms, leaf sums, the starting score, gradient scales and metrics
#'   are agreed over the processes, and random draws (bagging, feature
#'   sampling, stochastic rounding) are keyed by the global row (the shards'
#'   rows in rank order), so the model is byte for byte the one-process
#'   model on the concatenated shards, with `quantized = TRUE` and in full
#'   precision with `exact_sums = TRUE` (the CPU's default); with
#'   `exact_sums = FALSE` the trees are the same up to the rounding of
#'   double sums added in another order. Arguments that differ between the
#'   processes (the thread count aside) are an error on every process,
#'   naming the argument, as is an argument refused on one process. Ranking (`objective = "lambdarank"`) needs each
#'   process to hold whole queries (every row of each of its queries; a query
#'   id found on two processes is an error naming `group`): its gradients are
#'   per query, its ndcg and map summed over the queries of every process.
#'   GOSS picks its top rows by the exact threshold over all processes; l1,
#'   quantile and mape refit leaves to the exact quantiles over all
#'   processes (weighted ones from the leaf's residuals gathered).
#'   `is_unbalance` and `class_weights` count the classes of all processes;
#'   `init_model` scores each process's rows. A custom `objective` function
#'   gets its process's scores and labels; a metric function in
#'   `eval_metric` gets every process's validation rows in rank order (all
#'   log one value); callbacks run on every process and one asking to stop
#'   on any stops all. Cox gathers every process's survival times (once) and
#'   scores (each round). Feature bundling chooses the bundles of the
#'   concatenated rows (counts of non-zero entries and of conflicts summed
#'   over the processes), so `max_conflict_rate > 0` also gives the
#'   one-process model. With `device = "cuda"` each process trains on one
#'   GPU (its rank among the processes on its machine, modulo the GPUs it
#'   sees, picks it): each split's histogram and the few counts and sums the
#'   GPU decides by are summed over the processes, peer to peer between the
#'   GPUs when every process has its own GPU on one machine, else through
#'   MPI via host memory, and the model is the one-GPU model of the
#'   concatenated rows (GOSS included). `device = "auto"` means the
#'   CPU here.
#'   Run it with [hb_mpi_run()] from a console. In a session not started by
#'   mpirun (a job of one process), MPI is first started in a child R
#'   process: an MPI that cannot start there (where `MPI_Init` would end the
#'   session) is an error of class `histboost_error_engine` with what MPI
#'   said.
#' @param verbose 0 silent; 1 prints the validation metrics (without
#'   validation sets, the training data's) every 10th round and the last; 2
#'   every round. `FALSE` and `TRUE` mean 0 and 1 (numeric parameters
#'   otherwise refuse logical values), and a negative whole number
#'   (LightGBM's `verbose = -1`) means 0. With `verbose >= 1` an interactive
#'   session shows a progress bar (rounds done, time spent, an estimate of
#'   the time left) once a training has run for 3 seconds; the option
#'   `histboost.progress` changes that: `FALSE` never, `TRUE` as in
#'   interactive sessions, a number the seconds after which to show it.
#'   Whatever `verbose` says, a training whose first round cannot split
#'   (every prediction the same, as with fewer than `2 * min_data_in_leaf`
#'   rows) warns.
#' @details
#' Ranking (`objective = "lambdarank"`): each round every pair of rows of a
#' query with different grades, one of them among the top
#' `lambdarank_truncation_level` rows by the current scores, pulls the
#' better row up and the other down with a weight |delta NDCG| (the change
#' of the query's NDCG at `lambdarank_truncation_level` were the two
#' swapped) times `sigmoid(score gap)`, LightGBM's lambdarank. Rows with the
#' same score have no order; where LightGBM takes their row order, histboost
#' takes the expectation over all orders of the tied rows (the first round,
#' where every score is 0, included), so the model does not depend on how
#' the rows are sorted; without ties the two agree. NDCG@k is likewise the
#' mean over the orders of tied rows, and a query whose grades all have gain
#' 0 counts as 1 (LightGBM's convention); a query whose grades are all equal
#' has zero gradients and NDCG 1. MAP@k (`"map"`, LightGBM's map) counts a
#' row relevant when its grade is > 0: a query's average precision at k is
#' the sum, over the positions i <= k holding a relevant row, of the share of
#' relevant rows among the first i, divided by min(k, the query's relevant
#' rows); a query with no relevant row counts as 1 (LightGBM's convention),
#' and tied rows again take the mean over their orders (LightGBM leaves
#' their order to its sort). With `weights`, each row's gradient is
#' multiplied by its weight and each query's NDCG or MAP weighted by its
#' rows' mean weight (LightGBM's query weights).
#'
#' Overflow: finite inputs can still overflow (weights or labels near 1e308
#' sum to infinity, a gain squares a gradient sum, a huge `learning_rate`
#' drives the scores past what `exp()` takes). Every round checks that no
#' gradient or hessian is missing and that the number of rows times the
#' largest |gradient| stays below 1e150 (times the largest hessian, 1e300),
#' that every leaf value and score is finite (and, for the log-link
#' objectives `"poisson"`, `"gamma"` and `"tweedie"`, a score at most 709,
#' so that `exp(score)` is finite), and that every logged metric is finite.
#' Otherwise training stops with an error of class `histboost_error_input`
#' that names the round and the likeliest cause: a custom objective's
#' gradients, `weights`, the labels, an `init_score` (of the training or a
#' validation set), or else the scores' growth and `learning_rate`. Scaling
#' labels or weights by a constant within these bounds changes nothing but
#' the scale.
#' @export
histboost.default <- function(x, y = NULL, ..., weights = NULL, init_score = NULL, init_model = NULL, nrounds = 100L,
                              objective = c("auto", "regression", "binary", "multiclass", "poisson", "gamma",
                                            "tweedie", "huber", "l1", "quantile", "lambdarank", "multiclassova",
                                            "cross_entropy", "mape", "fair", "cox"),
                              learning_rate = 0.1, num_leaves = 31L, max_depth = -1L,
                              min_data_in_leaf = 20L, min_sum_hessian_in_leaf = 1e-3,
                              lambda_l1 = 0, lambda_l2 = 0, min_gain_to_split = 0,
                              max_bin = 255L, min_data_in_bin = 3L, bin_sample_rows = 200000L,
                              max_bin_by_feature = NULL,
                              max_cat_threshold = 32L, cat_smooth = 10,
                              cat_l2 = 10, min_data_per_group = 100L, max_cat_to_onehot = 4L,
                              ordered_factors = c("ordinal", "categorical"), bagging_fraction = 1,
                              bagging_freq = 0L, pos_bagging_fraction = 1, neg_bagging_fraction = 1,
                              feature_fraction = 1, boost_from_average = TRUE, tweedie_variance_power = 1.5,
                              huber_delta = 1, poisson_max_delta_step = 0.7, quantile_alpha = 0.5,
                              fair_c = 1, group = NULL, eval_at = c(1L, 3L, 5L), lambdarank_truncation_level = 30L,
                              lambdarank_norm = TRUE, label_gain = NULL, goss = FALSE, top_rate = 0.2,
                              other_rate = 0.1, boosting = c("gbdt", "rf", "dart"), monotone_constraints = NULL, valid = NULL,
                              early_stopping_rounds = NULL, eval_metric = NULL, nthreads = NULL,
                              seed = NULL, device = c("cpu", "cuda", "auto"), quantized = FALSE,
                              grad_bits = 4L, stochastic_rounding = TRUE, refit_leaves = TRUE,
                              enable_bundle = TRUE, max_conflict_rate = 0,
                              scale_pos_weight = 1, is_unbalance = FALSE, class_weights = NULL,
                              early_stopping_min_delta = 0, early_stopping_metric = NULL, callbacks = NULL,
                              params = NULL, keep_fitted = FALSE, verbose = 1L,
                              drop_rate = 0.1, max_drop = 50L, skip_drop = 0.5, xgboost_dart_mode = FALSE,
                              uniform_drop = FALSE, extra_trees = FALSE, interaction_constraints = NULL,
                              feature_fraction_bynode = 1, path_smooth = 0, max_delta_step = 0,
                              exact_sums = NULL, skip_unsplittable = FALSE, feature_pre_filter = TRUE,
                              distributed = c("no", "mpi"),
                              gpu_column_copy = -1L) {
  call <- match.call()
  call[[1L]] <- quote(histboost)  # the generic, so that update() can call it again
  # Over MPI every argument check runs inside the processes' agreement: one refused on one process
  # is an error on all of them, not a wait for the one that stopped.
  mpi <- identical(distributed, "mpi") || (is.list(params) && identical(params[["distributed"]], "mpi"))
  agree <- if (mpi) { .hb_distributed("mpi"); .hb_dist_try } else identity
  resolved <- agree({
    # Arguments after `...` match by their exact names only: a misspelt or
    # shortened one lands in `...` and is an error that suggests the name.
    .hb_check_dots(list(...), .HB_TRAIN_ARGS, "histboost", lgb_names = TRUE)
    # LightGBM's and xgboost's objective names, as `params` takes them (before the two are compared)
    objective <- .hb_objective_alias(objective, "`objective`")
    .hb_callbacks(callbacks)
    res <- .hb_params_resolve(params, setdiff(.HB_TRAIN_ARGS, .HB_DATA_ARGS))
    args <- mget(setdiff(names(formals(histboost.default)), "..."), environment())
    args <- .hb_params_merge(args, res, names(call)[-1L])
    args$params <- NULL
    res
  })
  bin_given <- union(.HB_BIN_ARGS[c(!missing(max_bin), !missing(min_data_in_bin), !missing(bin_sample_rows),
                                    !missing(max_bin_by_feature))],
                     intersect(.HB_BIN_ARGS, names(resolved)))
  tr <- .hb_alias_errors(attr(resolved, "from"), .hb_setup(args, bin_given = bin_given,
                  ordered_given = !missing(ordered_factors) || "ordered_factors" %in% names(resolved)))
  on.exit(.Call(C_hb_booster_free, tr$booster), add = TRUE)
  callbacks <- .hb_callbacks(args$callbacks)
  shift <- tr$base_iter %||% 0L  # messages count a continued model's iterations, as its log does
  run <- .hb_rounds(list(tr), tr$nrounds, tr$verbose, tr$early_stopping_rounds, tr$stopping,
                    callbacks = callbacks, shift = shift)
  niter <- run$rounds
  best_iter <- run$best_iter
  evaluation_log <- NULL
  if (length(tr$valid_sets) && niter > 0L) {
    evaluation_log <- data.frame(iter = seq_len(niter), run$log, check.names = FALSE)
    names(evaluation_log) <- c("iter", run$log_names)
  }
  fitted_raw <- if (tr$keep_fitted) {
    # the training rows' scores at the iteration predict() uses
    if (best_iter > 0L && best_iter < niter) run$best_raw else .Call(C_hb_booster_scores, tr$booster, 0L)
  }
  fit <- .hb_finish(tr, evaluation_log, best_iter, run$best_score, call)
  if (tr$keep_fitted) fit <- .hb_keep_fitted(fit, fitted_raw, tr$train_label)
  if (tr$more$dart) fit$dart_dropped <- .hb_dart_dropped(run$dart_dropped[[1L]][seq_len(niter)], shift, args$init_model)
  fit
}

# fit$dart_dropped of a DART training: per iteration of the model, the
# iterations dropped, numbered as the model's. A continued model's first
# `base_iter` entries are init_model's (empty where it was not DART), and the
# new rounds' numbers, counted by the engine from the continuation's start,
# are shifted past them: the base's trees are the starting score, never dropped.
.hb_dart_dropped <- function(dropped, base_iter, init_model) {
  if (base_iter < 1L) return(dropped)
  prev <- init_model$dart_dropped
  prev <- if (length(prev) >= base_iter) prev[seq_len(base_iter)] else rep(list(integer(0)), base_iter)
  c(prev, lapply(dropped, function(v) as.integer(v) + base_iter))
}

# Everything histboost() does before its first round, from the values of its
# arguments (a named list `a`; bin_given: the names of the binning arguments
# (.HB_BIN_ARGS) that were passed; ordered_given: whether ordered_factors was): the checks, the binning, the validation
# sets and a booster ready to train, which the caller frees. Shared with
# hb_cv(), which sets one up per fold. The steps, in the order their checks
# run (the order decides which error a call with several mistakes gets):
#   .hb_check_train_args()    the parameters, before any data is touched
#   .hb_continue_from()       init_model: its predictions become init_score
#   .hb_build_train_data()    the training hb_dataset (binning)
#   .hb_resolve_task()        objective -> task and classes; label checks
#   .hb_resolve_monotone()    monotone constraints per column
#   .hb_resolve_metrics()     the metrics and their state
#   .hb_build_valid_sets()    the validation sets, binned like the training data
#   .hb_engine_params()       the seed, the engine's parameters and the schema
#   .hb_create_booster()      the native booster with its sets attached
# The engine's parameters are checked from the registry (.HB_PARAMS, see
# src/README.md); the rest by hand in these steps. With check_only, the steps
# through .hb_resolve_metrics() check the data without binning them
# (hb_cv()'s check of all its rows before the folds) and return nothing.
#
# The result, a list read by histboost(), hb_cv(), .hb_rounds() (R/rounds.R),
# .hb_eval(), .hb_custom_round(), .hb_run_callbacks() and .hb_finish():
#   booster               the native booster (free it with C_hb_booster_free)
#   valid_sets            named list of validation hb_datasets (binned like the training data)
#   nrounds               rounds to train, checked
#   early_stopping_rounds NULL or the rounds without improvement that stop training
#   verbose               0, 1 or 2
#   stopping              list(early_stopping_min_delta, early_stopping_metric), checked
#   metrics               .hb_metric_state(): an environment with the metrics' rows, names and
#                         higher-is-better flags (a metric function's are learnt at its first call)
#   eval_metric           the built-in metrics as logged ("ndcg@3"), for the model's params
#   set_labels            list(label, weight) of the training set, then of each validation set,
#                         for metric functions (NULL without them)
#   task                  "regression", "binary", "multiclass", "ranking" or "survival"
#   objective             the objective's name ("custom" for a function)
#   classes               the class labels (NULL for regression, ranking and survival)
#   nrow, min_data_in_leaf  the training rows and the parameter, for the "no tree could split" text
#   keep_fitted           TRUE: the model keeps the training rows' fitted values
#   train_label           with keep_fitted, the training labels (else NULL)
#   binning               the training data's binning parameters (.hb_binning_of())
#   feature_names_generated  TRUE when the training data had no column names (V1..Vp made up):
#                         the model then matches new data by position
#   device                the device used, "cpu" or "cuda" ("auto" resolved)
#   quant, sampling, bundle, imbalance  lists of R-side parameters the model's meta records
#                         (quantized ..., goss ..., enable_bundle ..., scale_pos_weight ...)
#   more                  .hb_more_args(): DART, extra trees, interaction constraints (with
#                         interaction_groups by name) ...; .hb_more_meta() records them
#   profile               "gpu" or "cpu" when that learner's profile is collected, else NULL
#   base_text, base_iter  init_model's text and its iterations (NULL and 0 without it)
#   custom                a custom objective function (NULL without)
#   custom_labels         its labels: numeric, or the classes as 0 .. K - 1 (NULL without)
#   distributed           "no" or "mpi" (this process trains its shard with the others)
#   custom_weights        the row weights its gradients are multiplied by (NULL: none)
.hb_setup <- function(a, bin_given = character(), ordered_given = FALSE, check_only = FALSE) {
  # I(y) and 1-d arrays as plain vectors, as lm() takes them (every step below reads them)
  a["y"] <- list(.hb_unwrap_vector(a$y))
  a["weights"] <- list(.hb_unwrap_vector(a$weights))
  # over MPI the checks run on every process at once: an argument refused on one process is an
  # error on all of them, not a wait for the one that stopped; then the call's shape is agreed
  # on (which data arguments are given) before any data moves
  mpi <- identical(.hb_distributed(a$distributed %||% "no"), "mpi")
  p <- if (mpi) .hb_dist_try(.hb_check_train_args(a)) else .hb_check_train_args(a)
  if (mpi) .hb_dist_same_params(.hb_dist_call_shape(a, p))
  cont <- if (p$distributed == "mpi") {  # each process scores its own rows; one failing fails all
    .hb_dist_try(.hb_continue_from(a$init_model, a$x, a$init_score, a$valid, p$boosting, p$nthreads))
  } else .hb_continue_from(a$init_model, a$x, a$init_score, a$valid, p$boosting, p$nthreads)
  x <- cont$x %||% a$x
  data <- .hb_build_train_data(x, a$y, a$weights, cont$init_score, a$group, p, bin_given, ordered_given,
                               check_only)
  train <- data$train
  tk <- .hb_resolve_task(p, train, x, a$y, a$init_model)
  .hb_check_balanced_bagging(p$sampling, tk$objective)
  monotone <- .hb_resolve_monotone(p$monotone_constraints, train, a$init_model, tk$objective)
  ms <- .hb_resolve_metrics(p$metric_split, p$custom, tk$task, tk$objective, p$eval_at)
  if (check_only) return(invisible())
  valid_sets <- .hb_build_valid_sets(cont$valid, train, tk$task, p$nthreads, p$distributed, p$device)
  engine <- .hb_engine_params(p, tk, train, monotone)
  if (p$distributed == "mpi") {
    # (the thread count is each process's own: the model does not depend on it)
    .hb_dist_same_params(c(engine$params[setdiff(names(engine$params), "nthreads")],
                           list("set of columns (names, types, levels, monotone constraints)" = engine$schema,
                                "classes of `y`" = tk$classes, eval_metric = ms$eval_metric, nrounds = p$nrounds)))
  }
  bst <- .hb_create_booster(train, valid_sets, engine, tk$classes, tk$task, p$device)
  keep_fitted <- p$keep_fitted
  custom <- p$custom
  list(booster = bst$booster, valid_sets = valid_sets, eval_metric = ms$eval_metric, nrounds = p$nrounds,
       nrow = train$nrow, min_data_in_leaf = p$eng$min_data_in_leaf,
       metrics = ms$metrics, classes = tk$classes, stopping = p$stopping, imbalance = p$imbalance,
       class_labels = .hb_class_labels(train$label_info, tk),
       more = engine$more,
       set_labels = if (length(p$metric_split$funs)) .hb_set_labels(train, valid_sets, p$distributed),
       distributed = p$distributed,
       keep_fitted = keep_fitted,
       train_label = if (keep_fitted) .Call(C_hb_dataset_labels, train$ptr)$label,
       early_stopping_rounds = p$early_stopping_rounds, verbose = p$verbose, task = tk$task,
       objective = tk$objective, binning = .hb_binning_of(train), device = p$device, quant = p$quant,
       feature_names_generated = isTRUE(train$feature_names_generated),
       sampling = p$sampling, bundle = p$bundle, profile = bst$profile,
       base_text = if (!is.null(a$init_model)) a$init_model$model_text, base_iter = cont$base_iter,
       custom = custom, custom_labels = if (!is.null(custom)) tk$custom_labels,
       custom_weights = if (!is.null(custom) && !is.null(data$weights)) as.double(data$weights))
}

# .hb_setup()'s first step: every parameter checked, cheaply and before the
# data are binned (a typo should not wait for the binning), `device` and
# `distributed` resolved and "auto" said. The result (`p` in the later steps):
# objective ("auto", a name, or "custom" with the function in custom),
# device, distributed, nthreads, nrounds, early_stopping_rounds,
# verbose, seed (NULL: drawn later), boosting, eng (the stored engine
# parameters), rank (the ranking loss's), train_only (the engine's training
# parameters), quant, sampling, bundle, more, imbalance, stopping,
# keep_fitted, eval_at, metric_split (.hb_metric_split(); NULL: the task's
# default), binning (.HB_BIN_ARGS as given), ordered_factors, monotone_constraints (checked
# values, not yet per column).
.hb_check_train_args <- function(a) {
  objective <- a$objective; nrounds <- a$nrounds
  binning <- a[.HB_BIN_ARGS]
  ordered_factors <- .hb_ordered_choice(a$ordered_factors %||% "ordinal")
  boosting <- a$boosting
  monotone_constraints <- .hb_monotone_values(a$monotone_constraints)
  early_stopping_rounds <- a$early_stopping_rounds; eval_metric <- a$eval_metric; nthreads <- a$nthreads
  seed <- a$seed; device <- a$device; verbose <- a$verbose

  # parameters that came after some callers' argument lists: NULL is their default
  a <- .hb_params_null_default(a, c("max_cat_to_onehot", "enable_bundle", "max_conflict_rate", "gpu_column_copy"))
  keep_fitted <- .hb_flag(a$keep_fitted %||% FALSE, "keep_fitted")
  imbalance <- .hb_imbalance_args(a)
  stopping <- list(
    early_stopping_min_delta = .hb_number(a$early_stopping_min_delta %||% 0, "early_stopping_min_delta", lower = 0),
    early_stopping_metric = a$early_stopping_metric
  )
  if (!is.null(stopping$early_stopping_metric) &&
      (!is.character(stopping$early_stopping_metric) || length(stopping$early_stopping_metric) != 1L ||
       is.na(stopping$early_stopping_metric))) {
    .hb_abort("`early_stopping_metric` must be NULL or the name of one metric, such as \"auc\" or \"valid_auc\".")
  }
  # Parameters first: cheap, and a typo should not wait for the binning.
  custom <- NULL
  if (is.function(objective)) {
    if (length(formals(objective)) < 2L && !"..." %in% names(formals(objective))) {
      .hb_abort("`objective`, a function, must take two arguments: function(preds, labels).")
    }
    custom <- objective
    objective <- "custom"
  } else if (identical(objective, "custom")) {
    .hb_abort("`objective` = \"custom\" is given as the function itself: objective = function(preds, labels) ",
              "list(grad = , hess = ).")
  } else {
    objective <- .hb_choice(objective, c("auto", setdiff(names(.HB_OBJECTIVES), "custom")), "objective")
  }
  device <- .hb_choice(device, c("cpu", "cuda", "auto"), "device")
  distributed <- .hb_distributed(a$distributed %||% "no")
  if (inherits(a$x, "hb_dataset") && identical(a$x$distributed, "mpi") && distributed != "mpi") {
    .hb_abort("`x` is an hb_dataset made with `distributed` = \"mpi\"; train it with distributed = \"mpi\" too.")
  }
  if (distributed == "mpi") {
    .hb_dist_refuse(a)
    if (device == "auto") device <- "cpu"  # every process alike; "cuda" asks for one GPU each
  }
  # The engine's parameters that R checks from the registry (src/engine/params.def): those the
  # model keeps, with the ranking loss's apart (the engine gets them only for ranking).
  rank_names <- .hb_param_names(stored = TRUE, objective = "lambdarank")
  eng <- .hb_params_check(a, setdiff(.hb_param_names(stored = TRUE), rank_names))
  rank <- c(.hb_params_check(a, rank_names), list(label_gain = .hb_label_gain(a$label_gain)))
  eval_at <- .hb_eval_at(a$eval_at)
  nrounds <- .hb_number(nrounds, "nrounds", integer = TRUE, lower = 1)
  early_stopping_rounds <- .hb_number(early_stopping_rounds, "early_stopping_rounds", integer = TRUE,
                                      lower = 1, null_ok = TRUE)
  # verbose is a level but reads as a flag: FALSE / TRUE are 0 / 1 on purpose.
  verbose <- .hb_verbose(verbose)
  if (!is.null(seed)) {
    ok <- is.numeric(seed) && !is.object(seed) && length(seed) == 1L && is.finite(seed) &&
      seed >= 0 && seed <= 2^53 && seed == round(seed)
    if (!ok) {
      .hb_abort("`seed` must be NULL or a whole number between 0 and 2^53, not ",
                if (is.numeric(seed) && !is.object(seed) && length(seed) == 1L) format(seed) else .hb_describe(seed),
                ".")
    }
    seed <- as.numeric(seed)
  }
  # ... and how it trains (not part of the model); the engine gets every one of them.
  train_only <- .hb_params_check(a, .hb_param_names(stored = FALSE))
  quant <- train_only[c("quantized", "grad_bits", "stochastic_rounding", "refit_leaves")]
  sampling <- c(train_only[c("goss", "top_rate", "other_rate")],
                eng[c("pos_bagging_fraction", "neg_bagging_fraction")])
  balanced <- sampling$pos_bagging_fraction < 1 || sampling$neg_bagging_fraction < 1
  bagging <- eng$bagging_freq > 0 && (eng$bagging_fraction < 1 || balanced)
  if (sampling$top_rate + sampling$other_rate > 1) {
    .hb_abort("`top_rate` + `other_rate` must be at most 1 (they are ", sampling$top_rate, " and ",
              sampling$other_rate, ").")
  }
  bundle <- train_only[c("enable_bundle", "max_conflict_rate")]
  boosting <- .hb_choice(boosting, c("gbdt", "rf", "dart"), "boosting")
  more <- .hb_more_args(a, boosting, distributed, device)
  if (quant$quantized) more$exact_sums <- FALSE  # integer sums: exact already
  if (boosting == "rf") {
    if (!(bagging || eng$feature_fraction < 1)) {
      .hb_abort("`boosting` = \"rf\" needs bagging (`bagging_fraction` < 1, or `pos_bagging_fraction` or ",
                "`neg_bagging_fraction` < 1 for a binary model, and `bagging_freq` >= 1) or ",
                "`feature_fraction` < 1: otherwise every tree of the forest is the same.")
    }
    if (sampling$goss) .hb_abort("`boosting` = \"rf\" samples rows by bagging; `goss` must be FALSE.")
    eng$learning_rate <- 1  # a forest's trees are averaged, not shrunk
  }
  fractions <- c(bagging_fraction = eng$bagging_fraction, pos_bagging_fraction = sampling$pos_bagging_fraction,
                 neg_bagging_fraction = sampling$neg_bagging_fraction)
  if (eng$bagging_freq == 0L && any(fractions < 1)) {  # LightGBM ignores them silently; say so
    first <- names(fractions)[fractions < 1][1L]
    .hb_warn("`", first, "` = ", fractions[[first]], " has no effect: rows are drawn every `bagging_freq` rounds, ",
             "and `bagging_freq` is 0 (LightGBM's rule); give `bagging_freq = 1` to draw them every round.")
  }
  if (sampling$goss && bagging) {
    .hb_abort("`goss` = TRUE and bagging (", if (balanced) "`pos_bagging_fraction` or `neg_bagging_fraction`" else
      "`bagging_fraction`", " < 1) both choose each tree's rows; use one of them.")
  }
  nthreads <- .hb_nthreads(nthreads)
  no_quant <- c(if (more$extra_trees) "extra_trees", if (more$path_smooth > 0) "path_smooth",
                if (more$max_delta_step > 0) "max_delta_step")
  if (quant$quantized && length(no_quant)) {
    .hb_abort("`quantized` = TRUE does not combine with ", .hb_and(no_quant), " yet; use quantized = FALSE.")
  }
  device_asked <- device
  cpu_only <- .hb_more_cpu_only(more)
  if (length(cpu_only)) {
    if (device == "cuda") {
      .hb_throw("device", paste0("`device` = \"cuda\": ", .hb_and(cpu_only), " train", if (length(cpu_only) == 1L) "s",
                                 " on the CPU only (", .hb_cpu_only_why(cpu_only), "); use device = \"cpu\"."))
    }
    if (device == "auto") device <- "cpu"  # what these need; said below with the choice
  }
  if (more$dart && is.function(a$objective)) {
    .hb_abort("`boosting` = \"dart\" drops trees before each round's gradients, which a custom `objective` ",
              "function computes before the round; use boosting = \"gbdt\".")
  }
  if (more$dart && !is.null(early_stopping_rounds)) {
    .hb_abort("`early_stopping_rounds` does not work with `boosting` = \"dart\": later rounds rescale earlier ",
              "trees, so the model at the best iteration is not kept (as in LightGBM). Leave it NULL.")
  }
  device <- .hb_device(device)
  if (device_asked == "auto" && verbose >= 1L) .hb_device_say(device, cpu_only)
  # exact_sums not given: the CPU's full-precision sums on their grid (the
  # histograms then follow the thread count), the GPU's fixed point as it is
  if (!more$exact_sums_given) more$exact_sums <- device == "cpu" && !quant$quantized
  metric_split <- .hb_metric_split(eval_metric)
  if (!is.null(early_stopping_rounds) && is.null(a$valid)) {
    .hb_abort("`early_stopping_rounds` needs validation data: give `valid`.")
  }
  list(objective = objective, custom = custom, device = device,
       distributed = distributed, nthreads = nthreads, nrounds = nrounds,
       early_stopping_rounds = early_stopping_rounds, verbose = verbose, seed = seed, boosting = boosting,
       eng = eng, rank = rank, train_only = train_only, quant = quant, sampling = sampling, bundle = bundle,
       more = more, imbalance = imbalance, stopping = stopping, keep_fitted = keep_fitted, eval_at = eval_at,
       metric_split = metric_split, binning = binning, ordered_factors = ordered_factors,
       monotone_constraints = monotone_constraints)
}

# A continued training (init_model) starts from the model's raw predictions
# (at its best iteration, else all), plus any init_score, for `x` and the
# validation sets given as list(x = , y = ): list(init_score, valid,
# base_iter (the model's iterations; 0 without init_model)).
.hb_continue_from <- function(init_model, x, init_score, valid, boosting, nthreads) {
  base_iter <- 0L
  if (!is.null(init_model)) {
    .hb_check_model(init_model, "init_model")
    .hb_model_truth(init_model, "init_model")  # an edited model is refused under its own name
    if (inherits(x, "hb_dataset")) {
      .hb_abort("`init_model` needs `x` as a data.frame, matrix or dgCMatrix, not an hb_dataset: training ",
                "continues from the model's predictions for `x`.")
    }
    if (identical(init_model$params$boosting, "rf") || boosting == "rf") {
      .hb_abort("`init_model`: a random forest cannot be continued or continue a model (its trees are ",
                "averaged, not added).")
    }
    base_iter <- init_model$best_iteration %||% init_model$niter
    base <- init_model
    base$terms <- NULL  # the trees' raw score alone: a formula's offset comes as init_score
    base_raw <- function(data, arg, offset, oarg) {
      raw <- tryCatch(withCallingHandlers(
                        stats::predict(base, data, type = "raw", iteration = if (base_iter > 0L) base_iter,
                                       nthreads = nthreads),
                        # a level the model lacks is refused after (.hb_conform_to_model), naming it
                        histboost_warning_unseen_levels = function(w) invokeRestart("muffleWarning")),
                      histboost_error_input = function(e) {
                        .hb_reraise(e, "`", arg, "` does not suit `init_model`: ",
                                  gsub("`newdata`", paste0("`", arg, "`"), conditionMessage(e), fixed = TRUE),
                                  if (!is.null(init_model$terms)) {
                                    paste(" `init_model` was fitted with a formula: continue it through the",
                                          "formula, histboost(formula, data = , init_model = ).")
                                  })
                      })
      raw <- if (is.matrix(raw)) unname(raw) else as.double(raw)
      if (is.null(offset)) return(raw)
      offset <- .hb_init_score(offset, NROW(raw), oarg, arg)
      if (.hb_init_score_ncol(offset) != .hb_init_score_ncol(raw)) {
        .hb_abort("`", oarg, "` has ", .hb_init_score_ncol(offset), " column(s) but `init_model` has ",
                  .hb_init_score_ncol(raw), " score(s) a row.")
      }
      raw + offset
    }
    init_score <- base_raw(x, "x", init_score, "init_score")
    x <- .hb_conform_to_model(x, init_model)
    if (is.list(valid) && !is.data.frame(valid) && !inherits(valid, "hb_dataset")) {
      for (k in seq_along(valid)) {
        v <- valid[[k]]
        if (inherits(v, "hb_dataset")) {
          .hb_abort("`valid`: with `init_model`, give validation sets as list(x = , y = ), not hb_datasets: ",
                    "they start from the model's predictions too.")
        }
        if (is.list(v) && !is.data.frame(v) && !is.null(v$x)) {
          valid[[k]]["init_score"] <- list(base_raw(v$x, "valid$x", v$init_score, "valid$init_score"))
        }
      }
    }
  }
  list(init_score = init_score, valid = valid, base_iter = base_iter, x = if (!is.null(init_model)) x)
}

# x's columns as init_model's features, for continuing it, matched as
# predict() matches them: by name (factor levels by label), in the model's
# order, or by position when x has no column names or the model's names were
# made up for training data without them (V1..Vp); a factor's levels become
# the model's. What cannot be matched is an error that names it: a feature
# the model lacks or lacks in x (a column count that differs, by position,
# predict() has refused before), a level the model's feature does not have (a continued tree cannot split on
# it), an ordered factor whose levels come in another order. By position, x
# comes back with the model's names, or without names when the model's were
# made up, so that the continuation's are made up alike.
.hb_conform_to_model <- function(x, init_model) {
  fn <- init_model$feature_names
  generated <- isTRUE(.hb_model_truth(init_model, "init_model")$feature_names_generated)
  nms <- if (is.data.frame(x)) names(x) else colnames(x)
  if (is.null(nms) || generated) {
    # by position (predict() has checked the column count, scoring x first):
    # the model's names, or none when the model's were made up
    nm <- if (generated) NULL else fn
    if (is.data.frame(x)) names(x) <- nm else colnames(x) <- nm
  } else if (anyNA(nms) || anyDuplicated(nms)) {
    return(x)  # refused by name when the data are binned
  } else {
    miss <- setdiff(fn, nms)
    extra <- setdiff(nms, fn)
    if (length(miss) || length(extra)) {
      .hb_abort("`x` must have `init_model`'s features to continue it",
                if (length(miss)) paste0("; it lacks ", .hb_and(miss)),
                if (length(extra)) paste0("; it has ", .hb_and(extra), ", which the model was not trained on",
                                          " (drop ", if (length(extra) > 1L) "them" else "it", ")"), ".")
    }
    x <- if (is.data.frame(x)) x[fn] else x[, fn, drop = FALSE]
  }
  types <- if (is.data.frame(x)) init_model$feature_types else character()
  for (j in which(types %in% c("categorical", "ordinal"))) {
    col <- x[[j]]
    lev <- init_model$feature_levels[[j]]
    if (!is.factor(col) || identical(levels(col), lev)) next
    used <- levels(droplevels(col))
    new <- setdiff(used, lev)
    if (length(new)) {
      .hb_abort("`x$", fn[j], "` has level", if (length(new) > 1L) "s " else " ", .hb_and(new),
                " that `init_model` was not trained with: the continued trees cannot split on ",
                if (length(new) > 1L) "them" else "it", ". Train a new model, or set those values to NA.")
    }
    if (types[j] == "ordinal" && is.ordered(col)) {
      common <- levels(col)[levels(col) %in% lev]
      if (!identical(common, lev[lev %in% common])) {
        .hb_abort("`x$", fn[j], "` orders its levels (", .hb_and(common), ") otherwise than `init_model` (",
                  .hb_and(lev), "): continuing it needs the model's order.")
      }
    }
    x[[j]] <- factor(as.character(col), levels = lev, ordered = is.ordered(col))
  }
  x
}

# The training data: `x` itself when it is an hb_dataset (after checking
# that nothing it fixes is given again), else binned from x and y with the
# weights (times any imbalance weights): list(train (an hb_dataset), weights
# (the row weights used, NULL: none)).
.hb_build_train_data <- function(x, y, weights, init_score, group, p, bin_given, ordered_given,
                                 check_only = FALSE) {
  binning <- p$binning; imbalance <- p$imbalance; objective <- p$objective; nthreads <- p$nthreads
  ordered_factors <- p$ordered_factors; distributed <- p$distributed
  if (inherits(x, "hb_dataset")) {
    .hb_check_dataset(x, "x")
    if (!is.null(y)) .hb_abort("`y` must not be given when `x` is an hb_dataset: it carries its labels.")
    if (!is.null(weights)) .hb_abort("`weights` must not be given when `x` is an hb_dataset: it carries them.")
    if (!is.null(init_score)) {
      .hb_abort("`init_score` must not be given when `x` is an hb_dataset: give it to hb_dataset().")
    }
    .hb_binning_same(binning, bin_given, x, "x", function(nm, want, have) {
      paste0("`", nm, "` must not be given when `x` is an hb_dataset: it was binned with ", nm, " = ", have, ".")
    })
    if (ordered_given) {
      .hb_abort("`ordered_factors` must not be given when `x` is an hb_dataset: give it to hb_dataset().")
    }
    if (!x$has_label) .hb_abort("`x` is an hb_dataset without labels; create it with `y`.")
    if (!is.null(group)) .hb_abort("`group` must not be given when `x` is an hb_dataset: give it to hb_dataset().")
    if (imbalance$scale_pos_weight != 1 || imbalance$is_unbalance || !is.null(imbalance$class_weights)) {
      .hb_abort("`scale_pos_weight`, `is_unbalance` and `class_weights` reweigh the rows of `x`: give `x` as ",
                "data, not an hb_dataset (whose weights are fixed).")
    }
    train <- x
  } else {
    if (is.null(y)) .hb_abort("`y` is required: give the labels to learn.")
    weights <- .hb_imbalance_weights(imbalance, y, weights, objective, NROW(y), distributed)
    train <- .hb_dataset_build(x, y, weights, binning, reference = NULL, nthreads = nthreads,
                               init_score = init_score, group = group, ordered = ordered_factors,
                               distributed = distributed, device = p$device, check_only = check_only)
    # Binning leaves large temporaries behind (label and factor conversions). A young-generation
    # collection (milliseconds) frees them before the engine allocates its training buffers,
    # which then reuse that memory: 40 MB less peak memory at 1M rows. Small data leaves
    # little to free, and the collection (about 3 ms) was a sixth of a 200-row fit.
    if (!check_only && as.double(NROW(y)) * max(1, NCOL(x)) >= 1e6) invisible(gc(full = FALSE))
  }
  list(train = train, weights = weights)
}

# LightGBM's balanced bagging draws the two classes of a binary model at
# their own rates: pos_bagging_fraction or neg_bagging_fraction below 1 with
# another objective is an error (LightGBM ignores them), not a silent no-op.
.hb_check_balanced_bagging <- function(sampling, objective) {
  set <- c("pos_bagging_fraction", "neg_bagging_fraction")[
    c(sampling$pos_bagging_fraction < 1, sampling$neg_bagging_fraction < 1)]
  if (length(set) && objective != "binary") {
    .hb_abort(.hb_and(set), " sample", if (length(set) == 1L) "s", " a positive and a negative class at their ",
              "own rates, for objective = \"binary\" only, not \"", objective, "\"; use `bagging_fraction`.")
  }
  invisible(TRUE)
}

# The task and classes of the objective and the labels, and the checks that
# the labels suit the objective (and init_model, when continuing):
# list(objective (the name, "auto" resolved), task, classes, num_class
# (scores a row), custom_labels (a custom objective's labels)).
.hb_resolve_task <- function(p, train, x, y, init_model) {
  objective <- p$objective; custom <- p$custom; boosting <- p$boosting
  rank <- p$rank; eng <- p$eng
  custom_labels <- NULL
  info <- train$label_info
  obj <- if (objective != "auto") objective else if (info$task_hint == "survival") "cox" else info$task_hint
  task <- .hb_task(obj)
  classes <- info$classes
  if (!is.null(custom)) {
    if (inherits(x, "hb_dataset")) {
      .hb_abort("a custom `objective` needs `x` as a data.frame, matrix or dgCMatrix (its labels are passed ",
                "to the function), not an hb_dataset.")
    }
    if (info$task_hint == "survival") {
      .hb_abort("a custom `objective` takes a numeric or factor `y`, not a survival response (Surv).")
    }
    if (boosting == "rf") .hb_abort("a custom `objective` boosts: not with `boosting` = \"rf\".")
    custom_labels <- if (info$task_hint == "regression") as.double(y)
      else if (p$distributed == "mpi") .Call(C_hb_dataset_labels, train$ptr)$label  # coded over all processes
      else as.double(.hb_label(y, length(y))$label)
    # more than two classes: one score per class, as LightGBM's custom multiclass objectives
    if (info$task_hint == "multiclass") task <- "multiclass" else classes <- NULL
  }
  if (task == "survival" && info$task_hint != "survival") {
    .hb_abort("`objective` = \"cox\" needs a survival response: `y` = survival::Surv(time, status) ",
              "(right-censored), or Surv(time, status) ~ ... in a formula.")
  }
  if (task != "survival" && info$task_hint == "survival") {
    .hb_abort("`y` is a survival response (Surv), which only `objective` = \"cox\" models (the objective is \"",
              obj, "\").")
  }
  if (obj == "cross_entropy" && !inherits(x, "hb_dataset")) {
    yy <- if (info$task_hint == "regression") as.double(y) else NULL
    if (is.null(yy)) {
      .hb_abort("`objective` = \"cross_entropy\" needs a numeric `y` with values in [0, 1] (probabilities ",
                "or 0/1 labels), not ", .hb_describe(y), ".")
    }
    bad <- which(yy < 0 | yy > 1)
    if (length(bad)) {
      .hb_abort("`objective` = \"cross_entropy\" needs `y` in [0, 1], but `y[", bad[1L], "]` is ",
                format(yy[bad[1L]]), ".")
    }
  }

  if (task == "ranking") {
    if (info$task_hint != "regression") {
      .hb_abort("`objective` = \"lambdarank\" needs numeric relevance grades in `y` (0, 1, 2, ...; higher is ",
                "more relevant), but `y` is categorical; convert it with as.integer().")
    }
    if (is.null(train$group)) {
      .hb_abort("`objective` = \"lambdarank\" needs `group`, the query of each row (e.g. group = query_id): ",
                "rows are ranked within their query.")
    }
    if (!inherits(x, "hb_dataset")) {  # a shard's bad grade fails every process alike
      if (p$distributed == "mpi") .hb_dist_try(.hb_check_grades(y, length(rank$label_gain)))
      else .hb_check_grades(y, length(rank$label_gain))
    }
    classes <- NULL
  } else if (!is.null(train$group)) {
    .hb_abort("`group` is used only for ranking: give objective = \"lambdarank\" (the objective is \"", obj, "\").")
  }
  if (is.null(custom) && task == "regression" && info$task_hint != "regression" && info$task_hint != "survival") {
    .hb_abort("`objective` = \"", obj, "\" needs a numeric `y`, but `y` is categorical.")
  }
  if (task == "binary" && info$task_hint != "binary") {
    if (info$task_hint == "regression" && isTRUE(info$binary_ok)) {
      classes <- c("0", "1")
    } else if (info$task_hint == "regression") {
      .hb_abort("`objective` = \"binary\" needs `y` with two classes: a two-level factor, a logical ",
                "vector or numbers 0 and 1.")
    } else {
      .hb_abort("`objective` = \"binary\" needs two classes, but `y` has ", length(classes),
                "; use objective = \"multiclass\".")
    }
  }
  if (task == "multiclass" && info$task_hint == "regression") {
    .hb_abort("`objective` = \"", obj, "\" needs a factor `y`; convert it with factor().")
  }
  if (task == "multiclass" && info$task_hint == "binary") {
    .hb_abort("`objective` = \"", obj, "\" needs `y` with three or more classes; for two, use ",
              "objective = \"binary\".")
  }
  num_class <- if (task == "multiclass") length(classes) else 1L
  if (!is.null(init_model)) .hb_check_continuation(init_model, obj, classes, eng, rank, train)
  nis <- train$init_score_ncol %||% 0L
  if (nis > 0L && nis != num_class) {
    .hb_abort("`init_score` has ", nis, " column", if (nis > 1L) "s", " but the ", task, " model has ",
              num_class, " score", if (num_class > 1L) "s", " a row: give ",
              if (num_class > 1L) paste0("a matrix with one column per class (", num_class, ")")
              else "one value per row", ".")
  }
  if (obj %in% c("poisson", "tweedie", "gamma") && !inherits(x, "hb_dataset")) {
    lo <- if (obj == "gamma") which(!(y > 0)) else which(y < 0)
    if (length(lo)) {
      .hb_abort("`objective` = \"", obj, "\" needs `y` ", if (obj == "gamma") "> 0" else ">= 0",
                ", but `y[", lo[1L], "]` is ", format(y[lo[1L]]), ".")
    }
  }
  list(objective = obj, task = task, classes = classes, num_class = num_class, custom_labels = custom_labels)
}

# init_model can be continued on these data only with its objective, classes,
# loss parameters and features.
.hb_check_continuation <- function(init_model, obj, classes, eng, rank, train) {
  if (!identical(obj, init_model$params$objective) || !identical(classes, init_model$classes)) {
    .hb_abort("`init_model` was trained with objective \"", init_model$params$objective, "\"",
              if (length(init_model$classes)) paste0(" on classes ", .hb_and(init_model$classes)),
              "; continuing it needs the same objective and classes (here \"", obj, "\"",
              if (length(classes)) paste0(", classes ", .hb_and(classes)), ").")
  }
  loss_par <- c(tweedie = "tweedie_variance_power", huber = "huber_delta", quantile = "quantile_alpha",
                fair = "fair_c")[obj]
  if (!is.na(loss_par) && !isTRUE(all.equal(eng[[loss_par]], init_model$params[[loss_par]]))) {
    .hb_abort("`", loss_par, "` (", eng[[loss_par]], ") differs from `init_model`'s (",
              init_model$params[[loss_par]], "): continuing it would mix two losses.")
  }
  if (obj == "lambdarank") {  # the ranking loss's own parameters, likewise
    for (rp in c("lambdarank_truncation_level", "lambdarank_norm", "label_gain")) {
      mine <- as.double(rank[[rp]])
      theirs <- as.double(init_model$params[[rp]])
      if (!isTRUE(all.equal(mine, theirs))) {
        .hb_abort("`", rp, "` (", paste(rank[[rp]], collapse = ", "), ") differs from `init_model`'s (",
                  paste(init_model$params[[rp]], collapse = ", "), "): continuing it would mix two losses.")
      }
    }
  }
  if (!identical(train$feature_names, init_model$feature_names) ||
      !identical(train$feature_types, init_model$feature_types) ||
      !identical(unname(train$feature_levels), unname(init_model$feature_levels))) {
    what <- if (!identical(train$feature_names, init_model$feature_names)) {
      paste0("`x`'s are ", .hb_and(train$feature_names))
    } else {
      k <- which(train$feature_types != init_model$feature_types |
                   !mapply(identical, unname(train$feature_levels), unname(init_model$feature_levels)))[1L]
      lv <- function(l) if (length(l)) paste0(" with levels ", .hb_and(l)) else ""
      paste0("`", train$feature_names[k], "` is ", train$feature_types[k], lv(train$feature_levels[[k]]),
             " in `x`, ", init_model$feature_types[k], lv(init_model$feature_levels[[k]]), " in the model")
    }
    .hb_abort("`x` must have `init_model`'s features (", .hb_and(init_model$feature_names),
              ", with their types and factor levels) to continue it: ", what, ".")
  }
}

# The monotone constraints, one per column of the training data (NULL:
# none); a continuation keeps init_model's.
.hb_resolve_monotone <- function(monotone_constraints, train, init_model, obj) {
  monotone <- .hb_monotone_columns(monotone_constraints, train$feature_names, train$feature_types)
  if (!is.null(init_model)) {
    # a continuation keeps the base's constraints: its trees must obey the same ones
    base_mono <- init_model$params$monotone_constraints
    base_mono <- if (is.null(base_mono)) integer(length(train$feature_names)) else as.integer(unname(base_mono))
    if (is.null(monotone_constraints) && any(base_mono != 0L)) {
      monotone <- base_mono
    } else if (!identical(monotone %||% integer(length(base_mono)), base_mono)) {
      .hb_abort("`monotone_constraints` differ from `init_model`'s; a continued model keeps them (leave ",
                "`monotone_constraints` NULL to take the model's).")
    }
  }
  if (!is.null(monotone) && obj %in% c("l1", "quantile", "mape")) {
    .hb_abort("`monotone_constraints` do not combine with `objective` = \"", obj, "\": its leaves are refit to ",
              "quantiles of their residuals, which would undo the constraints. Use another objective, or no ",
              "constraints.")
  }
  monotone
}

# The metrics: the task's default or those of eval_metric, checked against
# the objective, with ndcg / map expanded at each of eval_at:
# list(metrics (.hb_metric_state()), eval_metric (the built-in names, for
# the model's params)).
.hb_resolve_metrics <- function(metric_split, custom, task, obj, eval_at) {
  allowed <- .HB_TASK_METRICS[[if (!is.null(custom) && task == "multiclass") "multiclass" else obj]]
  if (is.null(metric_split)) metric_split <- .hb_metric_split(allowed[1L])
  eval_metric <- metric_split$builtin
  for (m in eval_metric) {
    base <- sub("@.*$", "", m)
    if (!base %in% names(.HB_METRICS)) {
      .hb_abort("`eval_metric` \"", m, "\" is unknown; choose from ", .hb_and(allowed), ".",
                .hb_did_you_mean(m, names(.HB_METRICS)))
    }
    if (base %in% .HB_AT_METRICS && m != base && !grepl(paste0("^", base, "@[1-9][0-9]{0,8}$"), m)) {
      .hb_abort("`eval_metric` \"", m, "\" must be \"", base, "\" (at each of `eval_at`) or \"", base,
                "@k\" with a whole number k >= 1, such as \"", base, "@10\".")
    }
    if (!base %in% .HB_AT_METRICS && m != base) {
      .hb_abort("`eval_metric` \"", m, "\": only \"ndcg\" and \"map\" take a cut-off @k.")
    }
    if (!base %in% allowed) {
      .hb_abort("`eval_metric` \"", m, "\" does not suit the ", obj, " objective; choose from ",
                .hb_and(allowed), ".")
    }
  }
  expanded <- stats::setNames(lapply(eval_metric, .hb_expand_at, eval_at = eval_at), eval_metric)
  metrics <- .hb_metric_state(metric_split, expanded)
  eval_metric <- unique(unlist(expanded, use.names = FALSE)) %||% character()  # the built-in ones, for params
  list(metrics = metrics, eval_metric = eval_metric)
}

# The validation sets (.hb_valid_sets()), checked against the training
# data's init_score columns and the task's use of `group`.
.hb_build_valid_sets <- function(valid, train, task, nthreads, distributed, device = "cpu") {
  nis <- train$init_score_ncol %||% 0L
  valid_sets <- .hb_valid_sets(valid, train, nthreads, distributed, device)
  for (k in seq_along(valid_sets)) {
    vis <- valid_sets[[k]]$init_score_ncol %||% 0L
    if (vis != nis) {
      .hb_abort("`valid` set \"", names(valid_sets)[k], "\" ",
                if (nis == 0L) "has an `init_score` but the training data has none"
                else if (vis == 0L) "needs an `init_score`, as the training data has one"
                else paste0("has ", vis, " `init_score` columns; the training data has ", nis), ".")
    }
    has <- !is.null(valid_sets[[k]]$group)
    if (task == "ranking" && !has) {
      .hb_abort("`valid` set \"", names(valid_sets)[k], "\" needs `group` for ranking: ",
                "list(x = , y = , group = ) or hb_dataset(..., group = ).")
    }
    if (task != "ranking" && has) {
      .hb_abort("`valid` set \"", names(valid_sets)[k], "\" has a `group`, which only ranking uses.")
    }
  }
  valid_sets
}

# The engine's parameters: the seed (drawn when NULL; rank 0's under MPI),
# the checked parameters as the engine takes them (flags as 0 / 1), the
# schema of the features and the interaction constraints by column:
# list(params, schema, interactions, more (with interaction_groups)).
.hb_engine_params <- function(p, tk, train, monotone) {
  seed <- p$seed; distributed <- p$distributed; obj <- tk$objective; num_class <- tk$num_class
  eng <- p$eng; nthreads <- p$nthreads; device <- p$device; train_only <- p$train_only
  boosting <- p$boosting; more <- p$more; task <- tk$task; rank <- p$rank
  if (distributed == "mpi") {
    # a seed given is given alike on every process (as every other argument); none given: rank 0's draw
    seeds <- unlist(.hb_mpi_allgather(if (is.null(seed)) NA_real_ else as.numeric(seed)))
    if (!all(is.na(seeds)) && (anyNA(seeds) || length(unique(seeds)) > 1L)) {
      .hb_abort("`seed` differs between processes (", paste0("process ", seq_along(seeds) - 1L, ": ",
                ifelse(is.na(seeds), "none", format(seeds)), collapse = ", "), "); give every process the same ",
                "seed, or none (process 0's draw is then used).")
    }
  }
  if (is.null(seed)) seed <- as.numeric(sample.int(.Machine$integer.max, 1L))
  if (distributed == "mpi") seed <- .hb_mpi_bcast(seed)  # one seed: rank 0's

  # flags travel as 0 / 1
  to_engine <- function(v) if (is.logical(v)) as.integer(v) else v
  eng_params <- c(list(objective = .HB_OBJECTIVES[[obj]], num_class = num_class), lapply(eng, to_engine),
                  list(seed = seed, nthreads = nthreads, device = match(device, c("cpu", "cuda")) - 1L),
                  lapply(train_only, to_engine), list(rf = as.integer(boosting == "rf")),
                  list(dart = as.integer(more$dart), drop_rate = more$drop_rate, max_drop = more$max_drop,
                       skip_drop = more$skip_drop, xgboost_dart_mode = as.integer(more$xgboost_dart_mode),
                       uniform_drop = as.integer(more$uniform_drop), extra_trees = as.integer(more$extra_trees),
                       feature_fraction_bynode = more$feature_fraction_bynode, path_smooth = more$path_smooth,
                       max_delta_step = more$max_delta_step, exact_sums = as.integer(more$exact_sums),
                       skip_unsplittable = as.integer(more$skip_unsplittable),
                       feature_pre_filter = as.integer(more$feature_pre_filter)))
  interactions <- .hb_interaction_columns(more$interaction_constraints, train$feature_names)
  more$interaction_groups <- interactions$by_name
  schema <- list(names = train$feature_names,
                 types = match(train$feature_types, .HB_FEAT_TYPES) - 1L,
                 levels = unname(train$feature_levels), monotone = monotone)
  if (task == "ranking") {
    eng_params <- c(eng_params, lapply(rank, to_engine))
    eng_params$label_gain <- as.double(rank$label_gain)
  }
  list(params = eng_params, schema = schema, interactions = interactions, more = more)
}

# The native booster on the training data, with the validation sets, the
# interaction constraints and the queries attached (freed if a step fails):
# list(booster, profile ("gpu" or "cpu": that profile is collected; NULL: none)).
.hb_create_booster <- function(train, valid_sets, engine, classes, task, device) {
  eng_params <- engine$params; schema <- engine$schema; interactions <- engine$interactions
  booster <- .Call(C_hb_booster_create, train$ptr, eng_params, schema, classes)
  ok <- FALSE
  on.exit(if (!ok) .Call(C_hb_booster_free, booster), add = TRUE)
  for (v in valid_sets) .Call(C_hb_booster_add_valid, booster, v$ptr)
  if (!is.null(interactions)) .Call(C_hb_booster_set_interactions, booster, interactions$begin, interactions$cols)
  if (task == "ranking") {  # data set 0 is the training set, then the validation sets in order
    sets <- c(list(train), valid_sets)
    for (k in seq_along(sets)) .Call(C_hb_booster_set_query, booster, k - 1L, sets[[k]]$group$codes, sets[[k]]$group$nq)
  }
  profile <- if (device == "cuda") {
    if (isTRUE(getOption("histboost.gpu_profile"))) "gpu"
  } else if (isTRUE(getOption("histboost.cpu_profile"))) "cpu"
  if (!is.null(profile)) .Call(C_hb_booster_profile, booster, 1L)
  ok <- TRUE
  list(booster = booster, profile = profile)
}

# A custom objective's round: its gradients at the training rows' scores,
# checked and weighted, handed to the booster before the round. With K
# classes the scores are an n x K matrix and the gradients and hessians n x K
# matrices (or vectors of n * K values, class after class), as LightGBM's
# R package takes them.
.hb_custom_round <- function(tr) {
  s <- .Call(C_hb_booster_train_scores, tr$booster)
  gh <- tryCatch(tr$custom(s, tr$custom_labels), error = function(e) {
    .hb_abort_from(e, "`objective`, the custom objective function, failed (called as objective(preds, ",
                   "labels) with ", if (is.matrix(s)) paste(nrow(s), "x", ncol(s), "scores") else
                     paste(length(s), "scores"), "): ")
  })
  n <- length(s)
  what <- paste0("`objective` must return list(grad = , hess = ) with numeric ",
                 if (is.matrix(s)) "matrices" else "vectors")
  if (!is.list(gh)) .hb_abort(what, ", not ", .hb_describe(gh), ".")
  for (nm in c("grad", "hess")) {  # which element is wrong, and what it was
    v <- gh[[nm]]
    if (is.null(v)) .hb_abort(what, "; it has no `", nm, "`.")
    if (!is.numeric(v)) .hb_abort(what, "; its `", nm, "` is ", .hb_shown(v), ".")
  }
  if (is.matrix(s)) {
    for (nm in c("grad", "hess")) {
      v <- gh[[nm]]
      if (is.matrix(v) && !identical(dim(v), dim(s))) {
        .hb_abort("`objective` returned `", nm, "` as a ", nrow(v), " x ", ncol(v), " matrix; it must be ",
                  nrow(s), " x ", ncol(s), " (rows x classes), like `preds`.")
      }
    }
  }
  if (length(gh$grad) != n || length(gh$hess) != n) {
    .hb_abort("`objective` returned ", length(gh$grad), " gradients and ", length(gh$hess),
              " hessians; it must return one of each per training row", if (is.matrix(s)) " and class", " (",
              n, ").")
  }
  g <- as.double(gh$grad)
  h <- as.double(gh$hess)
  bad <- which(!is.finite(g) | !is.finite(h) | h < 0)
  if (length(bad)) {
    nr <- NROW(s)
    .hb_abort("`objective` returned ", length(bad), " gradients or hessians that are missing, infinite or ",
              "negative (hessians), first at row ", (bad[1L] - 1L) %% nr + 1L,
              if (is.matrix(s)) paste0(", class ", (bad[1L] - 1L) %/% nr + 1L), ".")
  }
  if (!is.null(tr$custom_weights)) {
    g <- g * tr$custom_weights
    h <- h * tr$custom_weights
  }
  .Call(C_hb_booster_set_gradients, tr$booster, g, h)
}

# "regression", "binary", "multiclass", "ranking" or "survival" for an
# objective (a custom objective's is "regression" here; .hb_setup() makes it
# "multiclass" for a factor y of three or more classes).
.hb_task <- function(obj) {
  if (obj %in% .HB_REGRESSION_FAMILY) "regression" else if (obj == "lambdarank") "ranking"
  else if (obj == "multiclassova") "multiclass" else if (obj == "cox") "survival" else obj
}

# How predict(type = "class") labels a classifier's classes beyond the
# classes themselves: the training factor's levels, unused ones too
# (class_levels, when it had such), and its order (class_ordered, when
# ordered); an empty list when neither applies (the model text is then as
# before), or for other tasks.
.hb_class_labels <- function(label_info, tk) {
  if (is.null(label_info) || !tk$task %in% c("binary", "multiclass") ||
      !identical(label_info$classes, tk$classes)) {
    return(list())
  }
  c(if (!is.null(label_info$class_levels)) list(class_levels = label_info$class_levels),
    if (isTRUE(label_info$class_ordered)) list(class_ordered = TRUE))
}

# The model of a trained setup (.hb_setup()), best_iter its best iteration
# (0: none), the booster freed.
.hb_finish <- function(tr, evaluation_log, best_iter, best_score, call) {
  booster <- tr$booster
  quant <- tr$quant
  r_params <- c(list(nrounds = tr$nrounds, objective = tr$objective), tr$binning, list(
                     early_stopping_rounds = tr$early_stopping_rounds, eval_metric = tr$eval_metric,
                     metrics = tr$metrics$names,
                     device = tr$device, feature_names_generated = tr$feature_names_generated),
                quant, tr$sampling, tr$bundle, tr$imbalance, tr$stopping, tr$class_labels)
  # a continued model counts the iterations of the model it continued
  base_iter <- tr$base_iter %||% 0L
  if (best_iter > 0L) best_iter <- best_iter + base_iter
  if (!is.null(evaluation_log)) evaluation_log$iter <- evaluation_log$iter + base_iter
  meta <- c(.hb_meta_encode(tr$task, r_params, evaluation_log, best_score), .hb_more_meta(tr$more))
  # The text and the model it describes (not parsed back from the text).
  done <- .Call(C_hb_booster_model_text, booster, meta, best_iter, TRUE, tr$base_text, base_iter)
  prof <- if (!is.null(tr$profile)) .Call(C_hb_booster_profile, booster, NULL)
  .Call(C_hb_booster_free, booster)
  fit <- .hb_model_from_text(done[[1L]], call = call, ptr = done[[2L]])
  if (!is.null(prof) && tr$profile == "gpu") {
    fit$gpu_profile <- stats::setNames(as.list(prof[1:10]), c("round_ms", "partition_ms", "hist_ms", "split_ms",
                                                        "hist_bytes", "splits", "rounds", "device_bytes",
                                                        "device_used_peak_bytes", "device_total_bytes"))
  } else if (!is.null(prof)) {
    fit$cpu_profile <- stats::setNames(as.list(prof[1:9]), c("round_ms", "partition_ms", "hist_ms", "split_ms",
                                                             "tree_ms", "splits", "rounds", "class_workers",
                                                             "class_worker_bytes"))
    from <- c(0, 1024 * 4^(0:5))  # grow.h's classes of the leaf's rows
    fit$cpu_profile$hist_by_rows <- data.frame(rows_from = from, rows_below = c(from[-1], Inf),
                                               histograms = as.integer(prof[18:24]), ms = prof[11:17])
  }
  fit
}

# The warning when the first round could not split: what it means, and the
# likely cause when the data are too few for min_data_in_leaf.
.hb_no_split_text <- function(tr, shift = 0L) {
  msg <- if (shift > 0L) "no tree could split: training added nothing to `init_model`" else
    "no tree could split: the model predicts the same value for every row"
  n <- tr$nrow
  mdl <- tr$min_data_in_leaf
  if (!is.null(n) && !is.null(mdl) && n < 2 * mdl) {
    paste0(msg, ". With ", n, " training rows, `min_data_in_leaf` = ", mdl, " leaves no split with ", mdl,
           " rows on each side; lower it (e.g. min_data_in_leaf = ", max(1L, n %/% 10L), ").")
  } else {
    paste0(msg, ": no split gains enough (do the features vary? is `min_data_in_leaf` (", mdl %||% 20L, ") too ",
           "large for the data, with a side's rows counted from its hessians as LightGBM counts them, so that ",
           "uneven weights or offsets change the count? or `min_gain_to_split`, `min_sum_hessian_in_leaf` or ",
           "`lambda_l1`?).")
  }
}

# Validation sets as named hb_datasets binned with the training bins.
.hb_valid_sets <- function(valid, train, nthreads, distributed = "no", device = "cpu") {
  if (is.null(valid)) return(list())
  if (inherits(valid, "hb_dataset") || !is.list(valid) || is.data.frame(valid)) {
    .hb_abort("`valid` must be a list of validation sets, e.g. list(test = list(x = x_test, y = y_test)).")
  }
  if (!length(valid)) return(list())
  nms <- names(valid)
  if (is.null(nms)) nms <- rep("", length(valid))
  nms[is.na(nms) | nms == ""] <- paste0("valid_", seq_along(valid))[is.na(nms) | nms == ""]
  if (anyDuplicated(nms)) .hb_abort("`valid` has duplicated names: ", .hb_and(unique(nms[duplicated(nms)])), ".")
  out <- vector("list", length(valid))
  for (k in seq_along(valid)) {
    v <- valid[[k]]
    set <- sprintf("`valid` set \"%s\"", nms[k])
    if (is.null(v)) .hb_abort(set, " is NULL.")
    if (inherits(v, "hb_dataset")) {
      .hb_check_dataset(v, "valid")
      if (!identical(v$reference_id, train$id)) {
        .hb_abort(set, " must be an hb_dataset made with reference = the training dataset.")
      }
      if (!v$has_label) .hb_abort(set, " has no labels; create it with `y`.")
      if (!identical(v$distributed %||% "no", distributed)) {
        .hb_abort(set, " must be made with hb_dataset(distributed = \"", distributed, "\") as the training data is.")
      }
      out[[k]] <- v
    } else if (is.list(v) && !is.data.frame(v)) {
      extra <- setdiff(names(v), c("x", "y", "weights", "init_score", "group"))
      if (is.null(names(v)) || any(names(v) == "") || length(extra)) {
        .hb_abort(set, " must be list(x = , y = , weights = NULL, init_score = NULL, group = NULL) with named ",
                  "elements.")
      }
      if (is.null(v$x) || is.null(v$y)) .hb_abort(set, " needs both `x` and `y`.")
      # Messages name the set, then the element as the user wrote it: "`valid` set "test": `y` ...".
      out[[k]] <- tryCatch(
        withCallingHandlers(
          .hb_dataset_build(v$x, v$y, v$weights, binning = NULL, reference = train,
                            nthreads = nthreads, source = "training", init_score = v$init_score,
                            group = v$group, distributed = distributed, device = device),
          # the same warning, naming the set
          histboost_warning_unseen_levels = function(w) .hb_rewarn(w, paste0(set, ": ", w$message))),
        histboost_error_input = function(e) {
          .hb_reraise(e, set, ": ", conditionMessage(e))
        })
    } else {
      .hb_abort(set, " must be an hb_dataset (with reference = the training set) or ",
                "list(x = , y = ).")
    }
  }
  names(out) <- nms
  out
}

# monotone_constraints' values checked before the binning: NULL, or whole
# numbers -1, 0, 1 (names are checked against the columns later).
.hb_monotone_values <- function(value) {
  if (is.null(value)) return(NULL)
  arg <- "`monotone_constraints`"
  if (!is.numeric(value) || is.object(value) || !is.null(dim(value))) {
    .hb_abort(arg, " must be NULL or a vector of -1, 0 and 1 (one per column, or named by column).")
  }
  bad <- which(is.na(value) | !value %in% c(-1, 0, 1))
  if (length(bad)) {
    .hb_abort(arg, " must hold only -1 (decreasing), 0 (none) and 1 (increasing), not ", format(value[bad[1L]]),
              " (element ", bad[1L], ").")
  }
  nms <- names(value)
  if (!is.null(nms)) {
    if (anyNA(nms) || any(nms == "")) {
      .hb_abort(arg, " must be named for every element or for none.")
    }
    if (anyDuplicated(nms)) .hb_abort(arg, " names ", .hb_and(unique(nms[duplicated(nms)])), " more than once.")
  }
  stats::setNames(as.integer(value), nms)
}

# One constraint per column of the training data (names: feature_names,
# types: feature_types) from the checked values, or NULL when none is set.
.hb_monotone_columns <- function(value, names, types) {
  if (is.null(value)) return(NULL)
  arg <- "`monotone_constraints`"
  p <- length(names)
  if (is.null(names(value))) {
    if (length(value) != p) {
      .hb_abort(arg, " has ", length(value), " value", if (length(value) != 1L) "s", " but the data has ", p,
                " column", if (p != 1L) "s", ": give one per column, or name the constrained columns.")
    }
    out <- value
  } else {
    unknown <- setdiff(names(value), names)
    if (length(unknown)) {
      .hb_abort(arg, " names ", .hb_and(unknown), ", not ", if (length(unknown) > 1L) "columns" else "a column",
                " of the data.", .hb_did_you_mean(unknown[1L], names))
    }
    out <- integer(p)
    out[match(names(value), names)] <- unname(value)
  }
  out <- as.integer(unname(out))
  cat_set <- out != 0L & types == "categorical"
  if (any(cat_set)) {
    .hb_abort(arg, " applies to numeric columns only; ", .hb_and(names[cat_set]),
              if (sum(cat_set) > 1L) " are factors." else " is a factor.")
  }
  if (all(out == 0L)) NULL else out
}

#' @rdname histboost
#' @section Formulas:
#' A formula model stores its predictors' formula in the model and
#' `predict()` evaluates it on `newdata`, so a model file would run whatever
#' code its formula holds. A formula may therefore only name columns (any
#' name, backquoted or not) and use constants (numbers, strings, `TRUE`,
#' `FALSE`, `NA`, `Inf`, `pi`) and these functions, which work row by row (a
#' row's value never depends on the other rows):
#' arithmetic, comparison and logic (`+ - * / ^ %% %/%`, `== != < > <= >=`,
#' `& | !`, `%in%`, parentheses), `log`, `log1p`, `log2`, `log10`, `exp`,
#' `expm1`, `sqrt`, `abs`, `sign`, `floor`, `ceiling`, `trunc`, `round`,
#' `signif`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `sinh`, `cosh`,
#' `tanh`, `pmin`, `pmax`, `is.na`, `ifelse`, `as.numeric`, `as.double`,
#' `as.integer`, `as.character`, `as.factor`, `factor` (with `labels` only
#' together with `levels`), `cut` with its breaks given as values (`cut(x,
#' breaks = c(-Inf, 0, 1, Inf))`, not a number of intervals, which would be
#' recomputed from `newdata`), `c()` of constants where a set of values
#' belongs (`cut`'s breaks and labels, `factor`'s levels, labels and
#' exclude, the right of `%in%`; anywhere else it would be recycled along
#' the rows), `I()` and `offset()`.
#' Anything else (a function of your own, `pkg::fun`, `scale()`, `poly()`,
#' `mean()`, `cut(x, 3)`) is refused when training, with an error of class
#' `histboost_error_input` naming the call: compute such a column in `data`
#' before training. The same rule is checked when [hb_load()] reads a
#' model and again before `predict()` evaluates the
#' formula, where only these functions exist; a model file whose formula
#' breaks it is an error of class `histboost_error_format`.
#'
#' The predictors (and an offset) must come from the columns of `data`: a
#' variable of the workspace (`y ~ I(a > thr)`) is refused, since `predict()`
#' sees only `newdata`'s columns (the response may come from anywhere). So
#' is a number conversion of a factor (`as.numeric(g)`,
#' `as.integer(as.factor(s))`), whose level codes follow the levels that
#' `newdata` happens to have (one of a factor whose levels the formula fixes,
#' `cut()` at given breaks or `factor(x, levels = )`, is allowed);
#' `predict()` refuses it too when `newdata` gives a factor there. A column
#' named `pi` is refused where the formula uses it (it would read as the
#' constant when `newdata` lacks it). Such a model's `newdata` is a data.frame or a list of
#' columns (a matrix only when every term is a column itself).
#' @param formula A model formula, `response ~ predictors`; `.` means all other
#'   columns of `data`. Terms are used as columns as they are (no dummy coding,
#'   no interactions); a character column becomes a factor, as in [lm()]. An `offset(...)` term is the `init_score`, and
#'   `predict()` computes it from `newdata`. Only column names and the
#'   functions listed under \sQuote{Formulas} are allowed.
#' @param data A data.frame holding the variables of `formula`.
#' @param subset For the formula method, the rows of `data` to train on: a
#'   logical vector (rows where it is `NA` are dropped) or row numbers. As in
#'   [lm()], `subset` and `weights` are evaluated among the columns of `data`
#'   first (`weights = w` takes the column `w`), then where the formula was
#'   made.
#' @param na.action For the formula method, what to do with rows that hold
#'   `NA`s: `NULL` (the default) keeps them, since trees route a missing
#'   predictor to the side learned for it (as [rpart::rpart()] keeps such
#'   rows), and a missing response is an error naming its first row, never
#'   a silent drop. Give [na.omit()] or [na.exclude()] (a function or its
#'   name, as for [lm()]) to train on the complete rows alone: a row with an
#'   `NA` in the response, a predictor, an offset or `weights` is dropped,
#'   the model's `na.action` field records which, and with `na.exclude`
#'   [fitted()] and [residuals()] give `NA` for them, so that they line up
#'   with `data`. [na.fail()] makes any `NA` an error. The same action is
#'   applied to validation sets given as data.frames (`valid = list(v =
#'   df)`, or `list(v = list(x = df, y = ...))`, where the `y`, `weights`
#'   and `init_score` given beside `df` count too). `getOption("na.action")`
#'   is not consulted: its default, `na.omit`, would drop every row with a
#'   missing predictor.
#' @export
histboost.formula <- function(formula, data, ..., weights = NULL, subset = NULL, na.action = NULL,
                              valid = NULL) {
  call <- match.call()
  if ("x" %in% names(call) && (missing(formula) || !inherits(formula, "formula"))) {
    # histboost(x = y ~ ., data = df), the generic's name for the formula: called again with it as
    # `formula` (and histboost(x = y ~ ., df): the data given by position, which R matched to `formula`)
    if ("formula" %in% names(call) && !"data" %in% names(call)) names(call)[names(call) == "formula"] <- "data"
    k <- which(names(call) == "x")[1L]
    again <- as.call(c(list(quote(histboost), formula = call[[k]]), as.list(call)[-c(1L, k)]))
    return(eval(again, parent.frame()))
  }
  call[[1L]] <- quote(histboost)
  if (missing(data) || !is.data.frame(data)) {
    .hb_abort("`data` must be a data.frame holding the variables of `formula`.")
  }
  vars <- setdiff(all.vars(formula), ".")
  env <- environment(formula)
  if (is.null(env)) env <- parent.frame()
  n_data <- nrow(data)
  weights <- .hb_formula_arg(substitute(weights), data, env, parent.frame(), "weights")
  subset <- .hb_formula_arg(substitute(subset), data, env, parent.frame(), "subset")
  rows <- NULL  # the rows of `data` kept by `subset`, for messages
  if (!is.null(subset)) {
    .hb_check_row_drop("subset", weights, nrow(data), "init_score" %in% names(list(...)), "subset `data`")
    rows <- .hb_subset_rows(subset, nrow(data))
    # (a tibble's rows would be renumbered: as a data.frame they keep data's row names, as in lm())
    if (inherits(data, "tbl_df")) data <- as.data.frame(data)
    data <- data[rows, , drop = FALSE]
    if (!is.null(weights)) weights <- weights[rows]
  }
  miss <- vars[!vars %in% names(data) & !vapply(vars, exists, NA, envir = env)]
  if (length(miss)) .hb_abort("`data` lacks ", .hb_and(miss), " used in `formula`.")
  # The predictors' terms and offsets, `.` expanded and what the formula removes left out: the formula the
  # model keeps (so that y ~ . - id does not ask newdata for id), and the variables it uses
  tt <- stats::terms(formula, data = data)
  if (any(attr(tt, "order") > 1L)) {  # (a:b, a*b, (a + b)^2), before the check of the functions, `:` among them
    .hb_abort("`formula` has interaction terms; trees find interactions themselves, so list the ",
              "variables alone.")
  }
  rhs <- .hb_formula_rhs(tt)
  used <- all.vars(str2lang(rhs))
  if (any(.HB_FORMULA_CONSTANTS %in% used & .HB_FORMULA_CONSTANTS %in% names(data))) {
    .hb_abort("`formula` uses `pi`, which is a column of `data` here but the constant pi in a model's formula ",
              "(a newdata without that column would silently use 3.14159...); rename the column, or leave it ",
              "out (y ~ . - pi).")
  }
  # The predictors (and an offset) are evaluated again on newdata by predict(), where only newdata's
  # columns exist: a variable found elsewhere (a threshold or vector in the workspace) would train a model
  # that can never predict. The response may come from anywhere, as for lm().
  outside <- setdiff(used, c(names(data), .HB_FORMULA_CONSTANTS))
  if (length(outside)) {
    .hb_abort("`formula` uses ", .hb_and(outside), ", which ", if (length(outside) > 1L) "are not columns"
              else "is not a column", " of `data`; predict() evaluates the formula on `newdata`'s columns ",
              "alone, so the model could never predict. Put ", if (length(outside) > 1L) "them" else "it",
              " in `data` as a column, or write ", if (length(outside) > 1L) "their values" else "its value",
              " into the formula (e.g. I(a > 0.5)).")
  }
  # The predictors' formula is stored in the model and evaluated by predict():
  # only what a model file may safely carry (formula.R), checked before
  # anything is evaluated.
  if (attr(tt, "response") == 0L) .hb_abort("`formula` needs a response on its left-hand side.")
  why <- .hb_terms_problem(stats::delete.response(tt))
  if (!is.null(why)) .hb_abort("`formula` is refused: ", why, ".")
  mf <- stats::model.frame(formula, data = data, na.action = stats::na.pass,
                           drop.unused.levels = FALSE)
  tt <- attr(mf, "terms")
  na_action <- .hb_na_action(na.action)
  omitted <- NULL
  if (!is.null(na_action)) {
    .hb_check_row_drop("na.action", weights, nrow(data), "init_score" %in% names(list(...)),
                       "remove the rows from `data`")
    kept <- .hb_na_rows(na_action, mf, weights, "data")
    omitted <- kept$omitted
    if (length(kept$rows) < nrow(mf)) {
      mf <- mf[kept$rows, , drop = FALSE]
      attr(mf, "terms") <- tt  # (model.response() and model.offset() read it)
      if (!is.null(weights)) weights <- weights[kept$rows]
      rows <- if (is.null(rows)) kept$rows else rows[kept$rows]
    }
  }
  offset <- stats::model.offset(mf)
  if (!is.null(offset) && "init_score" %in% names(list(...))) {
    .hb_abort("`formula` has an offset() and `init_score` is given too: give the offset one way.")
  }
  labels <- attr(tt, "term.labels")
  if (!length(labels)) .hb_abort("`formula` has no predictors.")
  why <- .hb_formula_codes_problem(stats::delete.response(tt), data, env)
  if (!is.null(why)) .hb_abort("`formula` is refused: ", why, ".")
  y <- stats::model.response(mf)
  x <- .hb_formula_columns(mf, tt)
  if (!is.null(offset)) .hb_check_offset(offset, "`formula`'s offset()", "data", rows)
  x <- .hb_chars_as_factors(x)
  # the checks of x and y speak of the data the user gave: `data`'s columns and the formula's response
  resp <- .hb_formula_deparse(formula[[2L]])
  valid <- .hb_formula_valid(valid, tt, env, na_action)
  # a ranking `group` given for data's rows loses the rows subset and na.action dropped
  fit_default <- function(...) {
    if (is.null(offset)) histboost.default(x, y, weights = weights, valid = valid, ...)
    else histboost.default(x, y, weights = weights, init_score = offset, valid = valid, ...)
  }
  group <- if (!is.null(rows)) list(...)[["group"]]
  if (!is.null(group) && NROW(group) == n_data) {
    dots <- list(...)
    dots$group <- .hb_rows(group, rows)
  } else {
    dots <- NULL
  }
  fit <- tryCatch(
    if (!is.null(dots)) do.call(fit_default, dots) else fit_default(...),
    histboost_error_input = function(e) {
      msg <- conditionMessage(e)
      col <- sub("^`x` column `([^`]*)`.*$", "\\1", msg)
      to <- if (startsWith(msg, "`x` column ")) {
        sub("^`x` column ", if (col %in% names(data)) "`data` column " else "the formula's term ", msg)
      }
      if (startsWith(msg, "`y` ")) {
        to <- paste0("the response `", resp, "` ", substring(msg, 5L))
        to <- gsub("(y)", paste0("(", resp, ")"), to, fixed = TRUE)  # the hints' factor(y), as.numeric(y)
      }
      if (startsWith(msg, "`weights` ")) to <- sub("but `x` has", "but `data` has", msg, fixed = TRUE)
      if (is.null(to)) stop(e)
      # a position among the rows trained on is a row of `data` (subset: the rows it kept)
      at <- regmatches(to, regexec("first at position ([0-9]+)", to))[[1L]]
      if (length(at) == 2L) {
        k <- as.integer(at[2L])
        to <- sub(at[1L], paste0("first at row ", if (is.null(rows)) k else rows[k], " of `data`"), to,
                  fixed = TRUE)
      }
      .hb_reraise(e, to)
    })
  fit <- .hb_model_add_meta(fit, c(r.formula = rhs))
  fit$call <- call
  if (!is.null(omitted)) fit$na.action <- omitted
  fit
}

# `subset` or `na.action` (`what`) drops rows of `data` (n rows): `weights`
# must have one value a row of `data`, and an `init_score` given (init_given)
# is refused, since it would have to lose the same rows (`hint`: how the user
# drops them himself).
.hb_check_row_drop <- function(what, weights, n, init_given, hint) {
  if (!is.null(weights) && length(weights) != n) {
    .hb_abort("`weights` has ", length(weights), " values but `data` has ", n, " rows.")
  }
  if (init_given) {
    .hb_abort("`", what, "` and `init_score` together are ambiguous: give the offset in the formula as ",
              "offset(...), or ", hint, " and `init_score` yourself.")
  }
}

# A formula's offset() as computed from `arg` (data or newdata): every value
# finite, else an error naming `what` and the first bad row of `arg` (`rows`:
# the rows of `arg` it was computed on, when a subset), rather than the
# init_score it becomes, which the user never gave.
.hb_check_offset <- function(offset, what, arg, rows = NULL) {
  bad <- which(!is.finite(offset))
  if (!length(bad)) return(invisible())
  .hb_abort(what, " is missing or infinite for ", length(bad), " row", if (length(bad) > 1L) "s",
            " of `", arg, "` (first at row ", if (is.null(rows)) bad[1L] else rows[bad[1L]],
            "): give its variables finite values there.")
}

# The formula of a formula fit, its `.` expanded as for lm (so that
# update(fit, . ~ . - x) works): the response of the call's formula and the
# predictors the model kept.
#' @export
formula.histboost <- function(x, ...) {
  if (is.null(x$terms)) .hb_abort("the model was not fitted with a formula: it has none.")
  rhs <- stats::formula(x$terms)
  f <- x$call$formula
  f <- if (is.call(f) && identical(f[[1L]], as.name("~"))) f else tryCatch(eval(f, parent.frame()),
                                                                           error = function(e) NULL)
  if (length(f) == 3L) rhs <- call("~", f[[2L]], rhs[[2L]])
  rhs <- stats::as.formula(rhs)
  environment(rhs) <- parent.frame()  # (not the terms' own, where only the formula's functions exist)
  rhs
}

# update() refits from the call; a model without one (from hb_load(), which
# keeps the model, not how it was called) says so, classed, instead of
# stats' "need an object with call component".
#' @exportS3Method stats::update
update.histboost <- function(object, ...) {
  if (is.null(object$call)) {
    .hb_abort("`object` has no `call` (hb_load() restores the model, not how it was called), so update() cannot ",
              "train it again: call histboost() with the data, or continue the model with `init_model`.")
  }
  if (identical(object$call[[1L]], quote(hb_cv))) {
    .hb_abort("`object` is a fold model of hb_cv(): update() would run the cross-validation again. Call ",
              "hb_cv() for that, or histboost() for one model.")
  }
  # hb_parsnip_fit() and caret's fit name their own copies of the data, gone once they return:
  # update() would find whatever else is called so
  via <- vapply(as.list(object$call)[-1L], function(a) is.name(a) && startsWith(as.character(a), ".hb_"), NA)
  if (any(via)) {
    .hb_abort("`object` was fitted through ", if (any(grepl("caret", as.character(object$call[-1L][via]))))
      "caret's train()" else "parsnip's fit()", ", whose copies of the data are gone: update() cannot train it ",
      "again. Fit the model specification again, or call histboost() with your data.")
  }
  NextMethod()
}
