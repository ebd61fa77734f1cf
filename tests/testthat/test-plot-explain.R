# plot(type = "tree") and plot(type = "shap"): each draws on a null device
# and returns what it drew, checked against hb_trees() (the node table), the
# contributions of predict(type = "contrib") ordered and scaled in plain R,
# and the interaction values of predict(type = "interaction").

explain_data <- local({
  cache <- NULL
  function() {
    if (!is.null(cache)) return(cache)
    set.seed(61)
    n <- 400
    x <- data.frame(a = runif(n), b = runif(n), c = rnorm(n), d = rnorm(n),
                    f = factor(sample(c("p", "q", "r", "s", "t"), n, TRUE)))
    x$a[sample(n, 20)] <- NA
    y <- 3 * ifelse(is.na(x$a), 0.5, x$a) + sin(4 * x$b) + (x$f %in% c("q", "s")) + x$c * x$d +
      rnorm(n, sd = 0.3)
    fit <- hb_quiet(x, y, nrounds = 20L, learning_rate = 0.3, num_leaves = 8L, min_data_in_leaf = 5L,
                    cat_smooth = 1, min_data_per_group = 5L, max_cat_to_onehot = 2L, seed = 1)
    cache <<- list(x = x, y = y, fit = fit)
    cache
  }
})

test_that("type = 'tree' lays out the nodes of hb_trees() with their splits and leaf values", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- explain_data()
  tab <- hb_trees(d$fit)
  cat_tree <- unique(tab$tree[tab$split_type %in% "categorical"])[1L]
  expect_false(is.na(cat_tree))
  for (k in c(1L, cat_tree, max(tab$tree))) {
    out <- plot(d$fit, type = "tree", tree = k)
    nd <- tab[tab$tree == k, ]
    cols <- c("id", "is_leaf", "feature", "threshold", "categories", "default_left", "left", "right", "value", "count")
    expect_identical(out[cols], `rownames<-`(nd[cols], NULL))
    expect_identical(out$y, -nd$depth)
    # leaves at 1, 2, ... left to right; every node over the middle of its children, and the leaves
    # below its left child all left of those below its right child
    leaves <- out[out$is_leaf, ]
    expect_setequal(leaves$x, seq_len(nrow(leaves)))
    below <- function(id) if (startsWith(id, "L")) id else c(below(out$left[out$id == id]), below(out$right[out$id == id]))
    for (i in which(!out$is_leaf)) {
      xl <- out$x[out$id == out$left[i]]
      xr <- out$x[out$id == out$right[i]]
      expect_equal(out$x[i], (xl + xr) / 2)
      expect_lt(max(out$x[match(below(out$left[i]), out$id)]), min(out$x[match(below(out$right[i]), out$id)]))
    }
    # labels: the threshold to four digits, the levels sent left, the leaf value and count
    num <- which(!out$is_leaf & nd$split_type == "numeric")
    expect_equal(as.numeric(sub(".* <= ", "", out$label[num])), nd$threshold[num], tolerance = 1e-3)
    expect_true(all(startsWith(out$label[num], paste0(nd$feature[num], " <= "))))
    for (i in which(nd$split_type %in% "categorical")) {
      lv <- strsplit(nd$categories[i], "||", fixed = TRUE)[[1]]
      expect_identical(out$label[i], paste0(nd$feature[i], " in {", paste(lv, collapse = ", "), "}"))
    }
    lf <- which(out$is_leaf)
    expect_equal(as.numeric(sub("\n.*", "", out$label[lf])), nd$value[lf], tolerance = 1e-3)
    expect_identical(sub(".*\nn = ", "", out$label[lf]), as.character(nd$count[lf]))
    # edges: left is "yes", right is "no"; missing values follow default_left
    e <- attr(out, "edges")
    inner <- nd[!nd$is_leaf, ]
    expect_identical(e$to, c(inner$left, inner$right))
    expect_identical(e$missing, c(inner$default_left, !inner$default_left))
  }
  expect_input_error(plot(d$fit, type = "tree", tree = 0L), "`tree`")
  expect_input_error(plot(d$fit, type = "tree", tree = max(tab$tree) + 1L), "`tree`")
  expect_input_error(plot(d$fit, type = "tree", newdata = d$x), "`newdata`")
  expect_input_error(plot(d$fit, tree = 2L), "`tree`")
})

test_that("type = 'shap' summary orders features by mean |contribution| and colours by value rank", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- explain_data()
  nd <- d$x[1:150, ]
  ph <- predict(d$fit, nd, type = "contrib")[, 1:5]
  out <- plot(d$fit, type = "shap", newdata = nd)
  m <- colMeans(abs(ph))
  want <- names(sort(m, decreasing = TRUE))
  imp <- attr(out, "importance")
  expect_identical(imp$feature, want)
  expect_equal(imp$mean_abs_shap, unname(m[want]), tolerance = TOL$exact)
  expect_identical(unique(out$feature), want)
  for (f in want) {
    expect_identical(out$shap[out$feature == f], unname(ph[, f]))
    expect_identical(out$row[out$feature == f], 1:150)
  }
  # the colour scale: a value's rank among the rows, in [0, 1]; missing stays missing
  a <- nd$a
  r <- rank(a, na.last = "keep")
  expect_equal(out$color_value[out$feature == "a"], (r - 1) / (sum(!is.na(a)) - 1))
  expect_true(anyNA(a))
  # an unordered factor's levels have no low or high: NaN (drawn dark grey), missing values NA
  expect_true(!is.ordered(nd$f) && all(is.nan(out$color_value[out$feature == "f"]) == !is.na(nd$f)))
  # top
  expect_identical(unique(plot(d$fit, type = "shap", newdata = nd, top = 2L)$feature), want[1:2])
  expect_input_error(plot(d$fit, type = "shap"), "`newdata`")
  expect_input_error(plot(d$fit, type = "shap", newdata = nd, top = 0L), "`top`")
  expect_input_error(plot(d$fit, type = "shap", newdata = nd, class = "a"), "`class`")
  # multiclass: one class at a time
  m3 <- gen_task(62, n = 600, p = 6, task = "multiclass", K = 3)
  fm <- hb_quiet(m3$x, m3$y, nrounds = 5L, num_leaves = 7L, seed = 2)
  expect_input_error(plot(fm, type = "shap", newdata = m3$x[1:50, ]), "`class`")
  om <- plot(fm, type = "shap", newdata = m3$x[1:50, ], class = "c2")
  pm <- predict(fm, m3$x[1:50, ], type = "contrib")[, 1:6, 2]
  expect_identical(attr(om, "importance")$feature, names(sort(colMeans(abs(pm)), decreasing = TRUE)))
  expect_identical(plot(fm, type = "shap", newdata = m3$x[1:50, ], class = 2L), om)
})

test_that("type = 'shap' with a feature: its contributions against its values, coloured by its strongest interaction", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  d <- explain_data()
  nd <- d$x[1:200, ]
  ph <- predict(d$fit, nd, type = "contrib")
  out <- plot(d$fit, type = "shap", newdata = nd, feature = "c")
  expect_identical(out$shap, unname(ph[, "c"]))
  expect_identical(out$value, nd$c)
  # the colour feature: largest mean |interaction value| with c, from the interaction values
  it <- predict(d$fit, nd, type = "interaction")
  s <- colMeans(abs(it[, "c", c("a", "b", "d", "f")]))
  expect_identical(attr(out, "color_by"), names(which.max(s)))
  expect_identical(attr(out, "color_by"), "d")  # y has the term c * d
  r <- rank(nd$d)
  expect_equal(out$color_value, (r - 1) / (nrow(nd) - 1))
  # a factor: its levels as values; no colour when asked
  of <- plot(d$fit, type = "shap", newdata = nd, feature = "f", color_by = NA)
  expect_identical(of$value, as.character(nd$f))
  expect_identical(of$shap, unname(ph[, "f"]))
  expect_true(all(is.na(of$color_value)))
  expect_identical(plot(d$fit, type = "shap", newdata = nd, feature = "a", color_by = "b")$color_value,
                   (rank(nd$b) - 1) / (nrow(nd) - 1))
  # coloured by an unordered factor: its level codes (a colour a level)
  expect_identical(plot(d$fit, type = "shap", newdata = nd, feature = "a", color_by = "f")$color_value,
                   as.integer(nd$f))
  # beyond 1000 rows the colour feature comes from the interactions of 1000 evenly spaced rows
  big <- d$x[rep(seq_len(nrow(d$x)), length.out = 2500L), ]
  rows <- unique(round(seq(1, 2500, length.out = 1000L)))
  itb <- predict(d$fit, big[rows, ], type = "interaction")
  sb <- colMeans(abs(itb[, "a", c("b", "c", "d", "f")]))
  expect_identical(attr(plot(d$fit, type = "shap", newdata = big, feature = "a"), "color_by"), names(which.max(sb)))
  expect_input_error(plot(d$fit, type = "shap", newdata = nd, feature = "cc"), "`feature`.*Did you mean `c`")
  expect_input_error(plot(d$fit, type = "shap", newdata = nd, feature = "c", color_by = "zz"), "`color_by`")
  expect_input_error(plot(d$fit, type = "importance", feature = "c"), "`feature`")
})

test_that("a tree that could not split plots as its one leaf; empty or all-missing SHAP data are classed errors", {
  set.seed(3)
  X <- data.frame(a = rnorm(5), b = rnorm(5))
  f <- suppressWarnings(histboost(X, rnorm(5), nrounds = 2, verbose = 0))  # too few rows to split
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  lay <- plot(f, type = "tree", tree = 1)
  expect_identical(nrow(lay), 1L)
  expect_true(lay$is_leaf)
  expect_equal(lay$value, hb_trees(f)$value[hb_trees(f)$tree == 1])
  expect_identical(nrow(attr(lay, "edges")), 0L)
  set.seed(4)
  X <- data.frame(a = rnorm(300), b = rnorm(300))
  g <- histboost(X, X$a + rnorm(300), nrounds = 3, verbose = 0)
  expect_error(plot(g, type = "shap", newdata = X[0, ]), class = "histboost_error_input", regexp = "newdata")
  Xna <- X[1:20, ]
  Xna$a <- NA_real_
  expect_error(plot(g, type = "shap", newdata = Xna, feature = "a"), class = "histboost_error_input",
               regexp = "feature")
})
