# Checks that LightGBM's refit (its C API LGBM_BoosterRefit, which the R package does not
# expose; reached through shim.c) follows the rule hb_refit() is tested against in
# tests/testthat/test-refit.R (ref_refit): per leaf -lr G / (H + lambda_l2) at the running
# score, mixed with the old value by refit_decay_rate. Run from this folder:
#   R CMD SHLIB shim.c -o shim.so && Rscript cmp.R
# Result (lightgbm 4.7.0): max differences 3e-9 to 1e-8 (lightgbm's model text precision).
library(lightgbm)
set.seed(3); n <- 600
X <- matrix(rnorm(n * 4), n, 4)
y <- X[, 1] + sin(2 * X[, 2]) + rnorm(n, sd = 0.3)
yb <- as.numeric(y + rnorm(n) > 0.5)
dyn.load("shim.so")
lgb_so <- file.path(system.file("libs", package = "lightgbm"), "lightgbm.so")
run <- function(obj, lab, decay) {
  p <- list(objective = obj, num_leaves = 6, learning_rate = 0.2, min_data_in_leaf = 10, lambda_l2 = 1.5,
            boost_from_average = FALSE, verbose = -1, num_threads = 1)
  tr <- 1:300; te <- 301:600
  m <- lgb.train(p, lgb.Dataset(X[tr, ], label = lab[tr]), nrounds = 5, verbose = -1)
  ds2 <- lgb.Dataset(X[te, ], label = lab[te], params = list(verbose = -1))
  nb <- lightgbm:::Booster$new(params = c(p, refit_decay_rate = decay), train_set = ds2)
  .Call(lightgbm:::LGBM_BoosterMerge_R, nb$.__enclos_env__$private$handle, m$.__enclos_env__$private$handle)
  lf <- predict(m, X[te, ], type = "leaf")
  storage.mode(lf) <- "integer"
  stopifnot(.Call("shim_refit", lgb_so, nb$.__enclos_env__$private$handle, as.integer(t(lf)), nrow(lf), ncol(lf)) == 0L)
  old <- lgb.model.dt.tree(m); new <- lgb.model.dt.tree(nb)
  # plain R: the rule of hb_refit (ref_refit in test-refit.R)
  score <- rep(0, length(te)); worst <- 0
  for (t in seq_len(ncol(lf))) {
    if (obj == "regression") { g <- score - lab[te]; h <- rep(1, length(te)) }
    else { pr <- 1 / (1 + exp(-score)); g <- pr - lab[te]; h <- pr * (1 - pr) }
    o <- old[old$tree_index == t - 1 & !is.na(old$leaf_index), ]
    nw <- new[new$tree_index == t - 1 & !is.na(new$leaf_index), ]
    L <- nrow(o)
    ref <- vapply(0:(L - 1), function(l) {
      i <- lf[, t] == l
      out <- if (any(i)) -p$learning_rate * sum(g[i]) / (sum(h[i]) + p$lambda_l2) else 0
      decay * o$leaf_value[o$leaf_index == l] + (1 - decay) * out
    }, 0)
    got <- vapply(0:(L - 1), function(l) nw$leaf_value[nw$leaf_index == l], 0)
    worst <- max(worst, abs(got - ref))
    score <- score + ref[lf[, t] + 1]
  }
  cat(obj, "decay", decay, ": max |lightgbm refit - plain-R rule| =", worst, "\n")
}
run("regression", y, 0); run("regression", y, 0.6); run("binary", yb, 0); run("binary", yb, 0.3)
