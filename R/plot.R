# plot.R: base-graphics plots of a model (its learning curves from the
# evaluation log, its feature importance, and through plot-explain.R one
# tree or its SHAP values) and of a cross-validation (the
# folds' mean curve with a band of one standard deviation). Each returns the
# data it drew, invisibly, so that a plot can be checked or redrawn.

#' Plot a histboost model: learning curves, importance, a tree or SHAP values
#'
#' `type = "log"` draws the learning curves of the evaluation log: one line per
#' logged data set (each validation set, in the order of `valid`) for one
#' metric, against the iteration, with a dotted vertical line at the best
#' iteration when early stopping chose one. `type = "importance"` draws a
#' horizontal bar chart of the `top` most important features of
#' [hb_importance()], the most important on top. `type = "tree"` draws tree
#' number `tree`: each split's test (`feature <= threshold`, or `feature in
#' {levels}` for the levels a categorical split sends left), the branch the
#' test sends rows to (`"yes"`, left) and the one missing values follow
#' (`"NA"`), and each leaf's value and training row count. `type = "shap"`
#' draws, for the rows of `newdata`, a SHAP summary: one row of points per
#' feature (the `top` features by mean absolute contribution, the largest on
#' top), each point a row's contribution ([predict.histboost()] with `type =
#' "contrib"`) coloured by the rank of the feature's value (blue low, red
#' high, grey missing; an unordered factor's points dark grey, its levels
#' having no order), points spread vertically where they crowd; with
#' `feature`, a SHAP dependence plot instead: the feature's contribution
#' against its value (missing values left out and counted in the subtitle),
#' coloured by the value of the feature in `color_by`.
#'
#' Only the data sets given in `valid` are logged: to see the training curve
#' too, pass the training data as one of them, e.g.
#' `valid = list(train = list(x = x, y = y), test = list(x = x_test, y = y_test))`.
#' A model trained without `valid` has no evaluation log, and asking for its
#' curves is an error (of class `histboost_error_input`). The log is kept by
#' [hb_save()], [hb_load()] and `saveRDS()`.
#'
#' Each argument after `type` belongs to some types; given with another type
#' it is an error, not silently ignored. The arguments after `...` must be
#' named in full.
#'
#' @param x A `"histboost"` model.
#' @param type `"log"` (learning curves), `"importance"` (feature importance),
#'   `"tree"` (one tree) or `"shap"` (SHAP summary or dependence plot).
#' @param metric For `type = "log"`: `NULL` (the first metric of
#'   `eval_metric`, the one early stopping watches) or the name of one logged
#'   metric, such as `"auc"`, `"ndcg@5"` or the name a metric function of
#'   `eval_metric` gives itself.
#' @param top For `type = "importance"` and the SHAP summary: how many
#'   features to show at most (all the used ones when fewer).
#' @param importance For `type = "importance"`: rank and measure features by
#'   `"gain"` (total gain of their splits), `"split"` (number of splits) or
#'   `"cover"` (hessian sum of the rows reaching them).
#' @param ... Graphical parameters passed on to [graphics::matplot()] (for
#'   `"log"`; `col`, `lty` and `lwd` also set the legend's),
#'   [graphics::barplot()] (for `"importance"`), [graphics::title()] (for
#'   `"tree"`, with `cex`, `col` and `leaf_col` for the boxes) or
#'   [graphics::plot()] (for `"shap"`), e.g. `main`, `ylim`, `col`.
#' @param tree For `type = "tree"`: the tree's number, 1 to the number of
#'   trees, as in [hb_trees()] (a multiclass model has one tree per class in
#'   each iteration, classes in order).
#' @param newdata For `type = "shap"`: the rows whose contributions to show,
#'   as for [predict.histboost()] (a model keeps no training data).
#' @param feature For `type = "shap"`: `NULL` (the summary) or the name of
#'   one feature (its dependence plot).
#' @param class For `type = "shap"` with a multiclass model: the class whose
#'   contributions to show, a class name or number (required there).
#' @param color_by For the dependence plot: `NULL` (the feature whose SHAP
#'   interaction values with `feature`, `type = "interaction"`, are largest
#'   in mean absolute value over at most 1000 of the rows, evenly spaced; no
#'   colour when those would exceed 2e7 values), `NA` (no colour) or a
#'   feature name. An unordered factor colours by level (with a legend of
#'   up to 12 levels), anything else from blue (low) to red (high).
#' @return Invisibly, the data drawn. For `"log"`, a data.frame in long form
#'   with columns `iteration`, `data` (the data set's name), `metric` and
#'   `value`, one row per data set and iteration (data sets in log order,
#'   iterations increasing), with attribute `best_iteration` (the iteration
#'   marked, or `NULL` when none is). For `"importance"`, the rows of
#'   [hb_importance()] drawn, most important first (top to bottom in the plot).
#'   For `"tree"`, one row per node of the tree, internal nodes then leaves
#'   as in [hb_trees()], with columns `id`, `is_leaf`, `x` and `y` (its
#'   place: leaves at 1, 2, ... from left to right, a node centred over its
#'   children, `y` minus the depth), `label` (the text drawn) and the
#'   [hb_trees()] columns `feature`, `threshold`, `categories`,
#'   `default_left`, `left`, `right`, `value` and `count`; attribute `edges`
#'   a data.frame of the branches (`from`, `to`, `side` `"yes"` or `"no"`,
#'   `missing`: whether missing values take it). For the SHAP summary, a
#'   data.frame in long form with columns `feature`, `row` (of `newdata`),
#'   `shap` (the contribution) and `color_value` (the value's rank scaled to
#'   \[0, 1\], `NA` when missing, `NaN` for an unordered factor's levels),
#'   features in the order drawn, with
#'   attribute `importance` (`feature`, `mean_abs_shap`). For the dependence
#'   plot, a data.frame with columns `row`, `value` (the feature's value; a
#'   factor's as its level), `shap` and `color_value` (the `color_by`
#'   feature's rank scaled to \[0, 1\], or an unordered factor's level code),
#'   with attribute `color_by` (the colouring feature, `NA` for none).
#' @seealso [hb_importance()], [hb_trees()], [predict.histboost()], [plot.hb_cv()]
#' @examples
#' set.seed(1)
#' x <- data.frame(a = runif(200), b = runif(200), c = runif(200))
#' y <- 2 * x$a + x$b + rnorm(200, sd = 0.2)
#' fit <- histboost(x[1:150, ], y[1:150], nrounds = 10, nthreads = 1, verbose = 0,
#'                  eval_metric = c("rmse", "mae"),
#'                  valid = list(train = list(x = x[1:150, ], y = y[1:150]),
#'                               test = list(x = x[151:200, ], y = y[151:200])))
#' plot(fit)                       # rmse of both data sets per iteration
#' curves <- plot(fit, metric = "mae", main = "Mean absolute error")
#' head(curves)
#' plot(fit, type = "importance")
#' plot(fit, type = "tree", tree = 1)
#' plot(fit, type = "shap", newdata = x)
#' plot(fit, type = "shap", newdata = x, feature = "a")
#' @method plot histboost
#' @export
plot.histboost <- function(x, type = c("log", "importance", "tree", "shap"), metric = NULL, top = 20L,
                           importance = c("gain", "split", "cover"), ..., tree = 1L, newdata = NULL,
                           feature = NULL, class = NULL, color_by = NULL) {
  # the arguments after `...` match by exact name only: graphical
  # parameters such as `col` must not be taken for `color_by`
  .hb_check_model(x, "x")
  type <- .hb_choice(type, c("log", "importance", "tree", "shap"), "type")
  # each argument belongs to some types: given for another, it would be silently ignored
  owner <- list(metric = "log", top = c("importance", "shap"), importance = "importance", tree = "tree",
                newdata = "shap", feature = "shap", class = "shap", color_by = "shap")
  given <- c(metric = !is.null(metric), top = !missing(top), importance = !missing(importance),
             tree = !missing(tree), newdata = !is.null(newdata), feature = !is.null(feature),
             class = !is.null(class), color_by = !is.null(color_by))
  for (a in names(given)[given]) {
    if (!type %in% owner[[a]]) {
      .hb_abort("`", a, "` applies to type = ", paste0("\"", owner[[a]], "\"", collapse = " or "),
                ", not to type = \"", type, "\".")
    }
  }
  switch(type,
    log = .hb_plot_log(x, metric, ...),
    importance = .hb_plot_importance(x, top, importance, ...),
    tree = .hb_plot_tree(x, tree, ...),
    shap = if (is.null(feature)) .hb_plot_shap_summary(x, newdata, top, class, ...)
           else .hb_plot_shap_dependence(x, newdata, feature, class, color_by, ...)
  )
}

# The columns of a model's evaluation log ("<set>_<metric>" after `iter`) as
# data.frame(column, data, metric), in log order. The log holds, for each set,
# one column per metric of `metrics` (the model's metrics, built-in and
# functions', in order); where the columns do not follow that layout, each
# column's metric is the longest of `metrics`, else of the built-in metric
# names, that it ends with ("test_trimmed_rmse" is set "test" of metric
# "trimmed_rmse" when that is a metric of the model).
.hb_log_layout <- function(log, metrics) {
  cols <- names(log)[-1L]
  m <- NULL
  if (length(metrics) && length(cols) %% length(metrics) == 0L) {
    m <- rep_len(metrics, length(cols))
    if (!all(endsWith(cols, paste0("_", m)) & nchar(cols) > nchar(m) + 1L)) m <- NULL
  }
  if (is.null(m)) {
    m <- vapply(cols, function(col) {
      known <- metrics[endsWith(col, paste0("_", metrics)) & nchar(col) > nchar(metrics) + 1L]
      if (length(known)) return(known[which.max(nchar(known))])
      hit <- regmatches(col, regexpr(paste0("_(", paste(names(.HB_METRICS), collapse = "|"),
                                             ")(@[0-9]+)?$"), col))
      if (!length(hit)) .hb_format_error("evaluation log column \"", col, "\" is not <data set>_<metric>.")
      substring(hit, 2L)
    }, "", USE.NAMES = FALSE)
  }
  data.frame(column = cols, data = substr(cols, 1L, nchar(cols) - nchar(m) - 1L), metric = m,
             stringsAsFactors = FALSE)
}

# The metric to plot: `metric` checked against those available (NULL: the first).
.hb_plot_metric <- function(metric, available) {
  if (is.null(metric)) return(available[1L])
  if (!is.character(metric) || length(metric) != 1L || is.na(metric)) {
    .hb_abort("`metric` must be NULL or one metric name; the logged metrics are ", .hb_and(available), ".")
  }
  if (!metric %in% available) {
    .hb_abort("`metric` \"", metric, "\" is not in the evaluation log; the logged metrics are ",
              .hb_and(available), ".", .hb_did_you_mean(metric, available))
  }
  metric
}

.HB_BEST_COL <- "grey40"

# Where a metric plot's legend goes, away from the curves (the columns of Y,
# one value a row and iteration): bottom right when they end above where they
# start (a metric that rises as training goes on: AUC, or a metric function
# with higher_better = TRUE, whose direction the log alone does not say),
# else top right.
.hb_legend_corner <- function(Y) {
  Y <- as.matrix(Y)
  end <- function(i) mean(Y[i, ][is.finite(Y[i, ])])
  first <- end(1L)
  last <- end(nrow(Y))
  if (is.finite(first) && is.finite(last) && last > first) "bottomright" else "topright"
}

.hb_plot_log <- function(x, metric, ...) {
  log <- x$evaluation_log
  if (is.null(log) || !nrow(log) || ncol(log) < 2L) {
    .hb_abort("`x` has no evaluation log to plot: it was trained without validation sets, so no ",
              "metric was logged. Train with `valid` (the training data may be one of the sets, e.g. ",
              "valid = list(train = list(x = , y = ))), or plot type = \"importance\".")
  }
  lay <- .hb_log_layout(log, x$params$metrics %||% x$params$eval_metric)
  metric <- .hb_plot_metric(metric, unique(lay$metric))
  lay <- lay[lay$metric == metric, , drop = FALSE]
  iter <- log$iter
  Y <- as.matrix(log[lay$column])
  colnames(Y) <- lay$data
  best <- x$best_iteration
  corner <- .hb_legend_corner(Y)
  k <- ncol(Y)
  draw <- function(..., xlab = "Iteration", ylab = metric, type = "l", lty = 1L, lwd = 1, col = seq_len(k)) {
    graphics::matplot(iter, Y, ..., xlab = xlab, ylab = ylab, type = type, lty = lty, lwd = lwd, col = col)
    leg <- colnames(Y)
    lcol <- rep_len(col, k)
    llty <- rep_len(lty, k)
    llwd <- rep_len(lwd, k)
    if (!is.null(best)) {
      graphics::abline(v = best, lty = 3L, col = .HB_BEST_COL)
      leg <- c(leg, sprintf("best iteration (%d)", best))
      lcol <- c(lcol, .HB_BEST_COL)
      llty <- c(llty, 3L)
      llwd <- c(llwd, 1)
    }
    graphics::legend(corner, legend = leg, col = lcol, lty = llty, lwd = llwd, bty = "n")
  }
  draw(...)
  out <- data.frame(iteration = rep(iter, k), data = rep(lay$data, each = length(iter)), metric = metric,
                    value = as.vector(Y), stringsAsFactors = FALSE)
  attr(out, "best_iteration") <- best
  invisible(out)
}

.hb_plot_importance <- function(x, top, importance, ...) {
  top <- .hb_number(top, "top", integer = TRUE, lower = 1)
  importance <- .hb_choice(importance, c("gain", "split", "cover"), "importance")
  imp <- hb_importance(x, importance)
  if (!nrow(imp)) .hb_abort("`x` has no splits, so there is no feature importance to plot.")
  shown <- imp[seq_len(min(top, nrow(imp))), , drop = FALSE]
  values <- switch(importance, gain = shown$gain, split = shown$splits, cover = shown$cover)
  # barplot() draws its first bar at the bottom: reversed, the largest is on top.
  draw <- function(..., xlab = switch(importance, gain = "Total gain", split = "Number of splits",
                                      cover = "Cover (hessian sum)"),
                   las = 1, cex.names = 1) {
    # room on the left for the feature names
    need <- max(graphics::strwidth(shown$feature, units = "inches", cex = cex.names)) /
      graphics::par("csi") + 1.5
    mar <- graphics::par("mar")
    if (need > mar[2L]) {
      old <- graphics::par(mar = c(mar[1L], need, mar[3L], mar[4L]))
      on.exit(graphics::par(old))
    }
    graphics::barplot(rev(values), names.arg = rev(shown$feature), horiz = TRUE, ..., xlab = xlab,
                      las = las, cex.names = cex.names)
  }
  draw(...)
  invisible(shown)
}

#' Plot a cross-validation's learning curve
#'
#' Draws, for one metric, the mean over the folds of the held-out metric at
#' each iteration, a band of one standard deviation over the folds either
#' side of it, and a dotted vertical line at the best iteration.
#'
#' @param x An `"hb_cv"` object made by [hb_cv()].
#' @param metric `NULL` (the first metric, the one early stopping watches) or
#'   the name of one metric of the cross-validation.
#' @param ... Graphical parameters passed on to [graphics::plot.default()], e.g.
#'   `main`, `ylim`, `log`; `col`, `lty`, `lwd` and `type` apply to the mean
#'   curve (the band is `col`, made translucent). On a logarithmic y axis
#'   (`log = "y"`) the band's lower edge stops at half the smallest positive
#'   mean where mean - sd is not positive.
#' @return Invisibly, the data drawn: a data.frame with columns `iteration`,
#'   `metric`, `mean` and `sd` (the fold mean and standard deviation from the
#'   object's evaluation log), one row per iteration, with attribute
#'   `best_iteration` (the iteration marked).
#' @seealso [hb_cv()], [plot.histboost()]
#' @examples
#' set.seed(1)
#' x <- data.frame(a = runif(200), b = runif(200))
#' y <- 2 * x$a + x$b + rnorm(200, sd = 0.2)
#' cv <- hb_cv(x, y, nfold = 3, nrounds = 10, eval_metric = c("rmse", "mae"),
#'             nthreads = 1, verbose = 0)
#' plot(cv)
#' curve <- plot(cv, metric = "mae", col = "darkblue")
#' head(curve)
#' @method plot hb_cv
#' @export
plot.hb_cv <- function(x, metric = NULL, ...) {
  if (!inherits(x, "hb_cv") || !is.data.frame(x$evaluation_log) || !"iter" %in% names(x$evaluation_log)) {
    .hb_abort("`x` must be a cross-validation made by hb_cv().")
  }
  log <- x$evaluation_log
  available <- x$metric %||% sub("^test_(.*)_mean$", "\\1", grep("^test_.*_mean$", names(log), value = TRUE))
  if (!nrow(log) || !length(available)) {
    .hb_abort("`x` has no rounds in its evaluation log to plot.")
  }
  metric <- .hb_plot_metric(metric, available)
  iter <- log$iter
  m <- log[[paste0("test_", metric, "_mean")]]
  s <- log[[paste0("test_", metric, "_sd")]]
  best <- x$best_iteration
  if (!is.null(best) && best < 1L) best <- NULL
  # The band's lower edge, m - s, can reach 0 or below, which a logarithmic
  # y axis cannot show: there it stops at half the smallest positive mean.
  lower <- function(log) {
    lo <- m - s
    if (is.character(log) && grepl("y", log, fixed = TRUE)) {
      floor <- min(m[is.finite(m) & m > 0], Inf) / 2
      if (is.finite(floor)) lo[is.finite(lo) & lo < floor] <- floor
    }
    lo
  }
  draw <- function(..., xlab = "Iteration", ylab = paste("mean test", metric), type = "l", col = 1L,
                   lty = 1L, lwd = 1.5, log = "", ylim = range(c(lower(log), m + s), finite = TRUE)) {
    graphics::plot(iter, m, ..., type = "n", xlab = xlab, ylab = ylab, ylim = ylim, log = log)
    band <- grDevices::adjustcolor(col, alpha.f = 0.25)
    lo <- lower(log)
    ok <- is.finite(m) & is.finite(s) & is.finite(lo)
    graphics::polygon(c(iter[ok], rev(iter[ok])), c(lo[ok], rev(m[ok] + s[ok])), col = band, border = NA)
    graphics::lines(iter, m, type = type, col = col, lty = lty, lwd = lwd)
    leg <- c("mean over folds", "mean +/- 1 sd")
    lcol <- c(col, band)
    llty <- c(lty, NA)
    lpch <- c(NA, 15L)
    if (!is.null(best)) {
      graphics::abline(v = best, lty = 3L, col = .HB_BEST_COL)
      leg <- c(leg, sprintf("best iteration (%d)", best))
      lcol <- c(lcol, .HB_BEST_COL)
      llty <- c(llty, 3L)
      lpch <- c(lpch, NA)
    }
    graphics::legend(.hb_legend_corner(m), legend = leg, col = lcol, lty = llty, pch = lpch, pt.cex = 2,
                     bty = "n")
  }
  draw(...)
  out <- data.frame(iteration = iter, metric = rep(metric, length(iter)), mean = m, sd = s,
                    stringsAsFactors = FALSE)
  attr(out, "best_iteration") <- best
  invisible(out)
}
