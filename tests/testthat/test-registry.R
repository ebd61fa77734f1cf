# The parameter registry (src/engine/params.def, codes.def): the C engine is
# compiled from it and R/params-generated.R is written from it by
# tools/gen-params.R. These tests hold the two sides together: the generated
# R files are not stale, the compiled engine's table (C_hb_registry, a test
# hook: skipped in a build without hooks) is the R one, histboost()'s defaults are the registry's, and R and C refuse the same
# out-of-range values (each layer on its own: R before any .Call, C through a
# direct .Call that skips R's checks).

reg <- histboost:::.HB_PARAMS
# the compiled table (a test hook)
c_registry <- function() histboost:::.hb_hook_call("C_hb_registry")

# A booster straight from the C glue, bypassing every R check: `params` are
# engine names and values (codes, 0/1 flags).
c_create <- function(params) {
  set.seed(1)
  x <- matrix(runif(200), 100, 2, dimnames = list(NULL, c("a", "b")))
  d <- hb_dataset(x, x[, 1] + rnorm(100, sd = 0.1))
  schema <- list(names = c("a", "b"), types = c(0L, 0L), levels = list(NULL, NULL))
  b <- .Call(histboost:::C_hb_booster_create, d$ptr, c(list(objective = 0L), params), schema, NULL)
  .Call(histboost:::C_hb_booster_free, b)
  invisible(TRUE)
}

test_that("the generated R files are those tools/gen-params.R writes now (source tree only)", {
  root <- normalizePath(file.path("..", ".."), mustWork = FALSE)
  skip_if_not(file.exists(file.path(root, "tools", "gen-params.R")) &&
                file.exists(file.path(root, "src", "engine", "params.def")),
              "not run from a source tree: the registry's sources are not installed")
  out <- tempfile("gen-params-")
  on.exit(unlink(out, recursive = TRUE), add = TRUE)
  rscript <- file.path(R.home("bin"), "Rscript")
  st <- system2(rscript, c(shQuote(file.path(root, "tools", "gen-params.R")), shQuote(out)),
                env = paste0("HB_REGISTRY_ROOT=", shQuote(root)), stdout = FALSE, stderr = FALSE)
  expect_identical(st, 0L)
  for (f in c("R/params-generated.R", "man/histboost-parameters.Rd")) {
    expect_identical(readLines(file.path(out, f)), readLines(file.path(root, f)),
                     label = paste(f, "(stale: run `Rscript tools/gen-params.R`)"))
  }
})

test_that("the compiled engine's registry is R's generated one", {
  skip_without_test_hooks()
  creg <- c_registry()
  p <- creg$params
  expect_identical(p$name, names(reg))
  expect_identical(p$type, unname(vapply(reg, `[[`, "", "type")))
  num <- p$type %in% c("INT", "DBL")
  expect_identical(p$lower[num], unname(vapply(reg, `[[`, 0, "lower"))[num])
  expect_identical(p$upper[num], unname(vapply(reg, `[[`, 0, "upper"))[num])
  expect_identical(p$lower_open[num], unname(vapply(reg, `[[`, NA, "lower_open"))[num])
  expect_identical(p$upper_open[num], unname(vapply(reg, `[[`, NA, "upper_open"))[num])
  expect_identical(p$gpu, unname(vapply(reg, `[[`, NA, "gpu")))
  # defaults: hb_config_default()'s values, as R holds them
  for (k in which(p$type %in% c("INT", "DBL", "FLAG"))) {
    expect_identical(p$default[k], as.double(reg[[k]]$default), label = p$name[k])
  }
  expect_identical(p$default[p$name == "objective"], unname(as.double(histboost:::.HB_OBJECTIVES["regression"])))
  expect_identical(p$default[p$name == "max_depth"], -1)
  # store: -1 always, -2 not saved, an objective's code, or HB_OBJ_COUNT for "changed"
  nobj <- length(histboost:::.HB_OBJECTIVES)
  want <- vapply(reg, function(r) switch(r$store, always = -1L, no = -2L, changed = nobj,
                                         unname(histboost:::.HB_OBJECTIVES[r$store])), 0L)
  expect_identical(p$store, unname(want))
  # codes shared with R
  expect_identical(creg$objectives, names(histboost:::.HB_OBJECTIVES))
  expect_identical(unname(histboost:::.HB_OBJECTIVES), seq_along(creg$objectives) - 1L)
  expect_identical(creg$metrics, names(histboost:::.HB_METRICS))
  expect_identical(unname(histboost:::.HB_METRICS), seq_along(creg$metrics) - 1L)
  expect_identical(creg$metrics[creg$higher_better], histboost:::.HB_HIGHER_BETTER)
  expect_identical(creg$feature_types, histboost:::.HB_FEAT_TYPES)
  expect_identical(c(histboost:::.HB_COL_DOUBLE, histboost:::.HB_COL_INT, histboost:::.HB_COL_FACTOR),
                   match(c("double", "int", "factor"), creg$column_types) - 1L)
  expect_identical(c(histboost:::.HB_INPUT_FRAME, histboost:::.HB_INPUT_MATRIX, histboost:::.HB_INPUT_SPARSE),
                   match(c("frame", "matrix", "sparse"), creg$input_kinds) - 1L)
})

test_that("higher-is-better flags drive early stopping: auc stops at its maximum, rmse at its minimum", {
  # independent: the best iteration is where the logged metric (recomputed by
  # which.max / which.min) peaks, in the direction the registry gives
  d <- gen_task(3, n = 800L, task = "binary")
  v <- list(v = list(x = d$x[1:300, ], y = d$y[1:300]))
  fit <- hb_quiet(d$x[301:800, ], d$y[301:800], nrounds = 60L, valid = v, eval_metric = "auc",
                  early_stopping_rounds = 5L, learning_rate = 0.3, num_leaves = 63L, min_data_in_leaf = 2L)
  expect_identical(fit$best_iteration, which.max(fit$evaluation_log$v_auc))
  fit2 <- hb_quiet(d$x[301:800, ], as.numeric(d$y[301:800]), nrounds = 60L,
                   valid = list(v = list(x = d$x[1:300, ], y = as.numeric(d$y[1:300]))),
                   early_stopping_rounds = 5L, learning_rate = 0.3, num_leaves = 63L, min_data_in_leaf = 2L)
  expect_identical(fit2$best_iteration, which.min(fit2$evaluation_log$v_rmse))
})

test_that("histboost() and hb_cv() default to the registry's defaults", {
  args <- names(reg)[vapply(reg, function(r) r$r == "arg", NA)]
  f <- formals(histboost.default)
  for (a in args) {
    expect_true(a %in% names(f), label = a)
    expect_identical(eval(f[[a]], baseenv()), reg[[a]]$default, label = a)
    expect_true(a %in% histboost:::.HB_TRAIN_ARGS, label = a)
  }
  # every alias names a parameter histboost() takes
  al <- histboost:::.HB_PARAM_ALIASES
  expect_true(all(al %in% names(f)))
  expect_false(any(names(al) %in% names(f)))
})

test_that("min_data_in_leaf >= 1 at both layers: R refuses 0, and so does the engine", {
  d <- gen_task(2, n = 200L)
  expect_input_error(hb_quiet(d$x, d$y, nrounds = 2L, min_data_in_leaf = 0L), "`min_data_in_leaf` must be a whole number >= 1")
  # the engine on its own (a direct .Call, no R check in between)
  expect_error(c_create(list(min_data_in_leaf = 0L)), "min_data_in_leaf must be >= 1", class = "histboost_error_input")
  expect_error(c_create(list(min_data_in_leaf = -3L)), "min_data_in_leaf must be >= 1", class = "histboost_error_input")
  expect_true(c_create(list(min_data_in_leaf = 1L)))
  # and 1 really allows single-row leaves: one split of 2 distinct rows
  fit <- hb_quiet(data.frame(a = c(0, 1)), c(0, 10), nrounds = 1L, min_data_in_leaf = 1L, learning_rate = 1,
                  min_sum_hessian_in_leaf = 0)
  expect_equal(predict(fit, data.frame(a = c(0, 1))), c(0, 10), tolerance = TOL$exact)
})

test_that("max_depth: -1 is the default at both layers and any value <= 0 means no limit", {
  expect_identical(reg$max_depth$default, -1L)  # the engine's: in the registry test above
  d <- gen_task(4, n = 600L)
  fit_depth <- function(md) {
    hb_quiet(d$x, d$y, nrounds = 3L, num_leaves = 40L, min_data_in_leaf = 3L, max_depth = md, seed = 1)
  }
  # no limit: the same trees as a limit no tree of 40 leaves on 600 rows can reach
  ref <- hb_trees(fit_depth(1000L))
  for (md in c(-1L, 0L, -7L)) expect_identical(hb_trees(fit_depth(md)), ref, label = paste("max_depth", md))
  # a real limit: leaf depths counted from hb_trees()'s parent links stay within it
  # deepest leaf of each tree, walked from the root by the left / right links
  max_depth_of <- function(fit) {
    tr <- hb_trees(fit)
    vapply(split(tr, tr$tree), function(t) {
      depth <- c(N0 = 0L)
      for (i in seq_len(nrow(t))) {  # parents come before their children in a walk from N0
        todo <- t[!t$is_leaf & t$id %in% names(depth), ]
        for (k in seq_len(nrow(todo))) depth[c(todo$left[k], todo$right[k])] <- depth[[todo$id[k]]] + 1L
      }
      max(depth)
    }, 0L)
  }
  expect_true(all(max_depth_of(fit_depth(2L)) <= 2L))
  expect_true(any(max_depth_of(fit_depth(-1L)) > 2L))
  # the engine takes 0 and negative values without complaint too
  expect_true(c_create(list(max_depth = 0L)))
  expect_true(c_create(list(max_depth = -5L)))
})

test_that("every bounded parameter: R and the engine refuse the same values outside the registry's bounds", {
  d <- gen_task(5, n = 200L)
  args <- names(reg)[vapply(reg, function(r) r$r == "arg" && r$type %in% c("INT", "DBL", "FLAG"), NA)]
  checked <- 0L
  for (a in args) {
    r <- reg[[a]]
    bad <- list()
    if (r$type == "FLAG") {
      bad <- list(2L)
    } else {
      step <- if (r$type == "INT") 1 else 1e-6
      if (is.finite(r$lower)) bad <- c(bad, if (r$lower_open) r$lower else r$lower - step)
      if (is.finite(r$upper)) bad <- c(bad, if (r$upper_open) r$upper else r$upper + step)
    }
    for (v in bad) {
      rv <- if (r$type == "FLAG") v else if (r$type == "INT") as.integer(v) else v
      expect_input_error(do.call(hb_quiet, c(list(d$x, d$y, nrounds = 1L), stats::setNames(list(rv), a))),
                         paste0("`", a, "`"))
      expect_error(c_create(stats::setNames(list(if (r$type == "DBL") as.double(v) else as.integer(v)), a)),
                   paste0(a, " must"), class = "histboost_error_input")
      checked <- checked + 1L
    }
  }
  expect_gte(checked, 25L)
})
