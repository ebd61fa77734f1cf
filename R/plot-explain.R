# plot-explain.R: plots that explain a model, in base graphics: one tree
# (its splits and leaf values), a SHAP summary (each feature's contributions
# over rows, coloured by the feature's value) and a SHAP dependence plot
# (one feature's contribution against its value). Each returns, invisibly,
# the data it drew.

# ---- one tree -------------------------------------------------------------

# The label of an internal node of hb_trees(): the test that sends rows left.
.hb_split_label <- function(nd, max_levels = 6L) {
  if (identical(nd$split_type, "categorical") || !is.na(nd$categories)) {
    lv <- if (is.na(nd$categories) || !nzchar(nd$categories)) character() else
      strsplit(nd$categories, "||", fixed = TRUE)[[1L]]
    shown <- if (length(lv) > max_levels) c(lv[seq_len(max_levels)], sprintf("+%d more", length(lv) - max_levels))
             else lv
    return(paste0(nd$feature, " in {", paste(shown, collapse = ", "), "}"))
  }
  paste0(nd$feature, " <= ", formatC(nd$threshold, digits = 4L, format = "g"))
}

.hb_plot_tree <- function(model, tree, ...) {
  tab <- hb_trees(model)
  if (!nrow(tab)) .hb_abort("`x` has no trees to plot.")
  ntree <- max(tab$tree)
  tree <- .hb_number(tree, "tree", integer = TRUE, lower = 1, upper = ntree)
  nd <- tab[tab$tree == tree, , drop = FALSE]
  rownames(nd) <- nd$id
  # leaves left to right in the order a walk that goes left first meets them;
  # an internal node centred over its children, one level per depth
  pos <- stats::setNames(numeric(nrow(nd)), nd$id)
  nleaf <- 0
  place <- function(id) {
    if (nd[id, "is_leaf"]) {
      nleaf <<- nleaf + 1
      pos[id] <<- nleaf
    } else {
      place(nd[id, "left"])
      place(nd[id, "right"])
      pos[id] <<- (pos[[nd[id, "left"]]] + pos[[nd[id, "right"]]]) / 2
    }
  }
  root <- if ("N0" %in% nd$id) "N0" else "L0"
  place(root)
  label <- ifelse(nd$is_leaf, paste0(formatC(nd$value, digits = 4L, format = "g"), "\nn = ", nd$count),
                  vapply(seq_len(nrow(nd)), function(i) .hb_split_label(nd[i, ]), ""))
  out <- data.frame(id = nd$id, is_leaf = nd$is_leaf, x = unname(pos[nd$id]), y = -nd$depth, label = label,
                    feature = nd$feature, threshold = nd$threshold, categories = nd$categories,
                    default_left = nd$default_left, left = nd$left, right = nd$right, value = nd$value,
                    count = nd$count, stringsAsFactors = FALSE)
  inner <- out[!out$is_leaf, , drop = FALSE]
  edges <- data.frame(
    from = rep(inner$id, 2L), to = c(inner$left, inner$right), side = rep(c("yes", "no"), each = nrow(inner)),
    missing = c(inner$default_left, !inner$default_left), stringsAsFactors = FALSE)
  # the title says which class and iteration a tree is, and what its leaves add to
  K <- if (identical(model$task, "multiclass")) length(model$classes) else 1L
  start <- attr(tab, "init_score")
  k <- (tree - 1L) %% K + 1L
  title <- if (K > 1L) sprintf("Tree %d: class %s, iteration %d", tree, model$classes[k], (tree - 1L) %/% K + 1L)
           else sprintf("Tree %d", tree)
  sub0 <- if (length(start) >= k && start[k] != 0) {
    sprintf("leaf values add to the starting score %s (and every other tree's)", formatC(start[k], digits = 4L,
                                                                                          format = "g"))
  }
  draw <- function(..., main = title, sub = sub0, cex = NULL, col = "grey95", border = "grey40",
                   leaf_col = "lightyellow") {
    depth <- max(nd$depth)
    cex <- cex %||% max(0.45, min(1, 9 / max(nleaf, 1)))
    graphics::plot.new()
    graphics::plot.window(xlim = c(0.4, nleaf + 0.6), ylim = c(-depth - 0.5, 0.5))
    graphics::title(main = main, sub = sub, ...)
    if (nrow(edges)) {  # a tree that could not split is its one leaf
      xy <- out[match(edges$from, out$id), c("x", "y")]
      to <- out[match(edges$to, out$id), c("x", "y")]
      graphics::segments(xy$x, xy$y, to$x, to$y, col = border)
      elab <- paste0(edges$side, ifelse(edges$missing, ", NA", ""))
      graphics::text((xy$x + to$x) / 2, (xy$y + to$y) / 2, elab, cex = 0.8 * cex, col = "grey30")
    }
    w <- graphics::strwidth(out$label, cex = cex) / 2 + graphics::strwidth("m", cex = cex) / 2
    h <- graphics::strheight(out$label, cex = cex) / 2 + graphics::strheight("M", cex = cex) / 2
    graphics::rect(out$x - w, out$y - h, out$x + w, out$y + h, col = ifelse(out$is_leaf, leaf_col, col),
                   border = border)
    graphics::text(out$x, out$y, out$label, cex = cex)
  }
  draw(...)
  attr(out, "edges") <- edges
  invisible(out)
}

# ---- SHAP -------------------------------------------------------------------

# The contributions of newdata for one class: list(phi = n x p matrix, bias,
# newdata as the model's features (a data.frame), class).
.hb_shap_data <- function(model, newdata, class) {
  if (is.null(newdata)) {
    .hb_abort("`newdata` is required for type = \"shap\": give the rows whose contributions to plot ",
              "(a histboost model does not keep its training data).")
  }
  if (NROW(newdata) < 1L) .hb_abort("`newdata` has no rows: give the rows whose contributions to plot.")
  phi <- stats::predict(model, newdata, type = "contrib")
  if (model$task == "multiclass") {
    if (is.null(class)) {
      .hb_abort("`class` is required for a multiclass model: give one of ", .hb_and(model$classes),
                " (or its number).")
    }
    k <- if (is.character(class) && length(class) == 1L && class %in% model$classes) match(class, model$classes)
         else if (is.numeric(class) && length(class) == 1L && class %in% seq_along(model$classes)) as.integer(class)
         else .hb_abort("`class` must be one of ", .hb_and(model$classes), " or its number.")
    phi <- phi[, , k]
    class <- model$classes[k]
  } else if (!is.null(class)) {
    .hb_abort("`class` applies to multiclass models only; this one is a ", model$task, " model.")
  }
  p <- length(model$feature_names)
  vals <- .hb_feature_values(model, newdata)
  list(phi = phi[, seq_len(p), drop = FALSE], bias = phi[, p + 1L], values = vals, class = class)
}

# newdata's values of the model's features, as a data.frame (factors kept).
.hb_feature_values <- function(model, newdata) {
  terms <- model$terms
  if (!is.null(terms) && is.data.frame(newdata)) newdata <- .hb_formula_frame(terms, newdata)
  if (inherits(newdata, "Matrix")) newdata <- as.matrix(newdata)
  nm <- model$feature_names
  # by position, as predict() matched them: without names, or names the model made up
  if (is.null(colnames(newdata)) || isTRUE(.hb_model_truth(model, "model")$feature_names_generated)) {
    colnames(newdata) <- nm
  }
  as.data.frame(lapply(stats::setNames(nm, nm), function(f) {
    v <- if (is.data.frame(newdata)) newdata[[f]] else newdata[, f]
    if (is.character(v)) v <- factor(v, levels = model$feature_levels[[f]])
    v
  }), stringsAsFactors = FALSE, check.names = FALSE)
}

# A value's place in [0, 1] among the column's values (its rank), NA kept:
# the colour scale of numeric values and of factor levels alike.
.hb_unit_rank <- function(v) {
  v <- if (is.factor(v)) as.integer(v) else as.numeric(v)
  r <- rank(v, na.last = "keep", ties.method = "average")
  m <- sum(!is.na(r))
  if (m <= 1L) return(ifelse(is.na(r), NA_real_, 0.5))
  (r - 1) / (m - 1)
}

# u in [0, 1] along the palette; NA (missing) na_col; NaN (an unordered factor's level) nan_col.
.hb_shap_colors <- function(u, palette = c("#1E88E5", "#8E24AA", "#FF0052"), na_col = "grey60", nan_col = "grey25") {
  ramp <- grDevices::colorRamp(palette)
  out <- rep(na_col, length(u))
  out[is.nan(u)] <- nan_col
  ok <- !is.na(u)
  if (any(ok)) out[ok] <- grDevices::rgb(ramp(u[ok]), maxColorValue = 255)
  out
}

# Vertical offsets that spread points with close x values apart (a
# beeswarm made with bins): points in a crowded bin spread further.
.hb_swarm <- function(x, width = 0.4, nbins = 60L) {
  off <- numeric(length(x))
  if (!length(x)) return(off)
  r <- range(x, finite = TRUE)
  b <- if (r[2L] > r[1L]) cut(x, seq(r[1L], r[2L], length.out = nbins + 1L), include.lowest = TRUE, labels = FALSE)
       else rep(1L, length(x))
  cnt <- tabulate(b, nbins)
  most <- max(cnt)
  for (k in which(cnt > 1L)) {
    i <- which(b == k)
    i <- i[order(x[i])]
    j <- seq_along(i) - 1L
    side <- ifelse(j %% 2L == 0L, 1, -1) * ceiling(j / 2)  # 0, 1, -1, 2, -2, ...
    off[i] <- side / max(1, most / 2) * width * min(1, length(i) / most * 2)
  }
  off
}

.hb_plot_shap_summary <- function(model, newdata, top, class, ...) {
  top <- .hb_number(top, "top", integer = TRUE, lower = 1)
  s <- .hb_shap_data(model, newdata, class)
  mean_abs <- colMeans(abs(s$phi))
  ord <- order(-mean_abs, seq_along(mean_abs))
  ord <- ord[seq_len(min(top, length(ord)))]
  feats <- colnames(s$phi)[ord]
  imp <- data.frame(feature = feats, mean_abs_shap = unname(mean_abs[ord]), stringsAsFactors = FALSE)
  n <- nrow(s$phi)
  # an unordered factor's levels have no low or high: its points stay grey (NaN), apart from missing (NA)
  unordered <- vapply(feats, function(f) is.factor(s$values[[f]]) && !is.ordered(s$values[[f]]), NA)
  cv <- lapply(feats, function(f) {
    u <- .hb_unit_rank(s$values[[f]])
    if (unordered[[f]]) ifelse(is.na(u), NA_real_, NaN) else u
  })
  out <- data.frame(feature = rep(feats, each = n), row = rep(seq_len(n), length(feats)),
                    shap = as.vector(s$phi[, ord, drop = FALSE]), color_value = unlist(cv, use.names = FALSE),
                    stringsAsFactors = FALSE)
  k <- length(feats)
  draw <- function(..., main = if (is.null(s$class)) "SHAP summary" else paste("SHAP summary, class", s$class),
                   xlab = "Contribution to the raw score (SHAP value)", pch = 16, cex = 0.6, las = 1) {
    need <- max(graphics::strwidth(feats, units = "inches")) / graphics::par("csi") + 1.5
    mar <- graphics::par("mar")
    if (need > mar[2L]) {
      old <- graphics::par(mar = c(mar[1L], need, mar[3L], mar[4L]))
      on.exit(graphics::par(old))
    }
    xr <- range(out$shap, finite = TRUE)
    graphics::plot(NA, xlim = xr, ylim = c(0.5, k + 0.5), yaxt = "n", ylab = "", xlab = xlab, main = main, ...)
    graphics::abline(v = 0, col = "grey70")
    graphics::axis(2, at = k:1, labels = feats, las = las, tick = FALSE)
    for (j in seq_len(k)) {
      i <- out$feature == feats[j]
      graphics::points(out$shap[i], k + 1 - j + .hb_swarm(out$shap[i]), pch = pch, cex = cex,
                       col = .hb_shap_colors(out$color_value[i]))
    }
    leg <- c("high feature value", "low feature value", "missing", if (any(unordered)) "a factor (no order)")
    graphics::legend("bottomright", legend = leg, col = .hb_shap_colors(c(1, 0, NA, NaN)[seq_along(leg)]), pch = pch,
                     bty = "n", cex = 0.8)
  }
  draw(...)
  attr(out, "importance") <- imp
  invisible(out)
}

.hb_plot_shap_dependence <- function(model, newdata, feature, class, color_by, ...) {
  nm <- model$feature_names
  if (!is.character(feature) || length(feature) != 1L || is.na(feature) || !feature %in% nm) {
    .hb_abort("`feature` must be the name of one of the model's features (",
              .hb_and(nm), ").", if (is.character(feature) && length(feature) == 1L && !is.na(feature))
                .hb_did_you_mean(feature, nm) else "")
  }
  s <- .hb_shap_data(model, newdata, class)
  j <- match(feature, nm)
  if (is.null(color_by)) {
    # the feature interacting most with `feature`: largest mean |interaction value|
    n <- nrow(s$phi)
    P <- length(nm) + 1
    color_by <- NA_character_
    # over at most 1000 of the rows, evenly spaced: the interactions cost P times the contributions
    rows <- if (n > 1000L) unique(round(seq(1, n, length.out = 1000L))) else seq_len(n)
    m <- length(rows)
    if (length(nm) > 1L && m * P * P * (if (model$task == "multiclass") length(model$classes) else 1) <= 2e7) {
      it <- stats::predict(model, if (m < n) newdata[rows, , drop = FALSE] else newdata, type = "interaction")
      it <- if (model$task == "multiclass") it[, j, -P, match(s$class, model$classes)] else it[, j, -P]
      it <- matrix(it, nrow = m)
      strength <- colMeans(abs(it))
      strength[j] <- -Inf
      if (max(strength) > 0) color_by <- nm[which.max(strength)]
    }
  } else if (length(color_by) == 1L && is.atomic(color_by) && is.na(color_by)) {
    color_by <- NA_character_
  } else if (!(is.character(color_by) && length(color_by) == 1L && color_by %in% nm)) {
    .hb_abort("`color_by` must be NULL (the feature interacting most with `feature`), NA (no colour) or ",
              "the name of one of the model's features.")
  }
  v <- s$values[[feature]]
  is_fac <- is.factor(v)
  xv <- if (is_fac) as.integer(v) else as.numeric(v)
  cv <- if (!is.na(color_by)) s$values[[color_by]]
  by_level <- is.factor(cv) && !is.ordered(cv)  # an unordered factor: a colour a level, not low to high
  cu <- if (is.na(color_by)) rep(NA_real_, length(xv)) else if (by_level) as.integer(cv) else .hb_unit_rank(cv)
  out <- data.frame(row = seq_along(xv), value = if (is_fac) as.character(v) else xv, shap = s$phi[, j],
                    color_value = cu, stringsAsFactors = FALSE)
  attr(out, "color_by") <- color_by
  shown <- !is.na(xv)
  if (!any(shown)) {
    .hb_abort("`feature` \"", feature, "\" is missing in every row of `newdata`: a dependence plot needs ",
              "rows where it has a value.")
  }
  draw <- function(..., main = paste("SHAP dependence:", feature), xlab = feature,
                   ylab = paste("SHAP value of", feature), pch = 16, cex = 0.7) {
    x <- xv[shown] + if (is_fac) stats::runif(sum(shown), -0.15, 0.15) else 0
    pal <- if (by_level) grDevices::hcl.colors(max(1L, nlevels(cv)), "Dark 3")
    col <- if (is.na(color_by)) rep("grey30", sum(shown))
           else if (by_level) ifelse(is.na(cu[shown]), "grey60", pal[cu[shown]])
           else .hb_shap_colors(cu[shown])
    graphics::plot(x, out$shap[shown], xlab = xlab, ylab = ylab, main = main, pch = pch, cex = cex, col = col,
                   xaxt = if (is_fac) "n" else "s", ...)
    if (is_fac) graphics::axis(1, at = seq_along(levels(v)), labels = levels(v))
    graphics::abline(h = 0, col = "grey70")
    notes <- character()
    if (!is.na(color_by)) {
      notes <- c(notes, paste0("colour: ", color_by, if (by_level) " (a colour a level)" else " (blue low, red high)"))
      if (by_level && nlevels(cv) <= 12L) {
        graphics::legend("topright", legend = levels(cv), col = pal, pch = pch, bty = "n", cex = 0.7)
      }
    }
    if (any(!shown)) notes <- c(notes, paste0(sum(!shown), " rows with ", feature, " missing not shown"))
    if (length(notes)) graphics::mtext(paste(notes, collapse = "; "), side = 3, line = 0.2, cex = 0.8)
  }
  draw(...)
  invisible(out)
}
