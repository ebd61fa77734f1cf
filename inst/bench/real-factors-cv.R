# Real tables with factors, histboost beside lightgbm by repeated k-fold
# cross-validation (the same folds for both, one thread each): nine small
# public tables shipped with R's recommended packages (survival, MASS, rpart):
# colon, Aids2, flchain, birthwt (binary, logloss and AUC), pbc, survey
# (multiclass, multi-logloss), Boston, car90, solder (regression, RMSE), with
# factors, ordered factors and NAs as they come. The same parameters for both
# (num_leaves 15, learning_rate 0.05, min_data_in_leaf 5, max_bin 255; 200
# rounds, or with --es up to 1000 rounds stopped after 20 without gain on a
# fifth of each training fold; lightgbm's categorical parameters set to
# histboost's defaults, which are LightGBM's), factors given to lightgbm as
# categorical features (0-based codes; ordered factors as numbers, as
# histboost's default ordered_factors = "ordinal" treats them). A row per
# table: both packages' mean and sd over the folds, histboost's relative
# difference in %, the folds each wins, a paired t test and a sign test.
#
#   Rscript inst/bench/real-factors-cv.R [--lib DIR] [--datasets colon,car90,...]
#           [--reps 3] [--folds 5] [--es FALSE] [--variant native] [--seedbase 0]
#           [--lgb-min-data-in-bin 3]
#           [--out FILE]
#
# --variant (prep_x below) changes both packages' data alike, to find what a
# gap comes from: ordcat, onehot, dropfac, nona, only_COLUMN, minus_COLUMN.
# Needs lightgbm (and survival, MASS, rpart, which come with R). Prints the
# table, and writes it as csv to FILE when given.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(dirname(script), "run.R"))  # bench_options()
opt <- bench_options(args, list(lib = "", datasets = "colon,aids2,flchain,birthwt,pbc,survey,boston,car90,solder",
                                reps = 3L, folds = 5L, es = FALSE, variant = "native", seedbase = 0L, lgb_min_data_in_bin = 3L,
                                out = ""), "real-factors-cv.R")
for (p in c("lightgbm", "histboost", "survival", "MASS", "rpart")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("real-factors-cv.R needs the package ", p, call. = FALSE)
}
suppressPackageStartupMessages({library(histboost); library(lightgbm)})
SEEDBASE <- opt$seedbase
LGBEXTRA <- list(min_data_in_bin = opt$lgb_min_data_in_bin)

## ---------------- datasets ----------------
get_ds <- function(name) {
  switch(name,
  colon = {
    d <- survival::colon[survival::colon$etype == 2, ]
    x <- d[, c("rx", "sex", "age", "obstruct", "perfor", "adhere", "nodes", "differ", "extent", "surg", "node4")]
    x$sex <- factor(x$sex); x$differ <- factor(x$differ, levels = 1:3, ordered = TRUE)
    x$extent <- factor(x$extent, levels = 1:4, ordered = TRUE)
    list(x = x, y = factor(d$status), task = "binary")
  },
  aids2 = {
    d <- MASS::Aids2
    x <- d[, c("state", "sex", "diag", "T.categ", "age")]
    list(x = x, y = d$status, task = "binary")
  },
  flchain = {
    d <- survival::flchain
    x <- d[, c("age", "sex", "sample.yr", "kappa", "lambda", "flc.grp", "creatinine", "mgus")]
    x$flc.grp <- factor(x$flc.grp)
    list(x = x, y = factor(d$death), task = "binary")
  },
  birthwt = {
    d <- MASS::birthwt
    x <- d[, c("age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv")]
    x$race <- factor(x$race, labels = c("white", "black", "other"))
    list(x = x, y = factor(d$low), task = "binary")
  },
  pbc = {
    d <- survival::pbc
    x <- d[, setdiff(names(d), c("id", "status"))]
    x$trt <- factor(x$trt); x$edema <- factor(x$edema)
    x$stage <- factor(x$stage, levels = 1:4, ordered = TRUE)
    list(x = x, y = factor(d$status), task = "multiclass")
  },
  survey = {
    d <- MASS::survey; d <- d[!is.na(d$Exer), ]
    x <- d[, setdiff(names(d), "Exer")]
    list(x = x, y = d$Exer, task = "multiclass")
  },
  boston = {
    d <- MASS::Boston
    x <- d[, setdiff(names(d), "medv")]
    x$chas <- factor(x$chas); x$rad <- factor(x$rad)
    list(x = x, y = d$medv, task = "regression")
  },
  car90 = {
    d <- rpart::car90; d <- d[!is.na(d$Price), ]
    x <- d[, setdiff(names(d), "Price")]
    for (j in names(x)) if (is.character(x[[j]])) x[[j]] <- factor(x[[j]])
    list(x = x, y = d$Price / 1000, task = "regression")
  },
  solder = {
    d <- rpart::solder
    x <- d[, setdiff(names(d), "skips")]
    list(x = x, y = d$skips, task = "regression")
  })
}

## ---------------- encodings ----------------
# variant: "native" (factors native; ordered -> ordinal in both),
#          "ordcat" (ordered factors categorical in both),
#          "onehot" (all factors one-hot, NA -> all dummies NA... use NA indicator),
#          "dropfac" (factor columns dropped), "nona" (NA rows imputed: numeric median, factor mode)
prep_x <- function(x, variant) {
  isf <- vapply(x, is.factor, TRUE)
  if (variant == "dropfac") return(x[, !isf, drop = FALSE])
  if (variant == "nona") {
    for (j in names(x)) { v <- x[[j]]; if (!anyNA(v)) next
      if (is.factor(v)) v[is.na(v)] <- names(which.max(table(v))) else v[is.na(v)] <- median(v, na.rm = TRUE)
      x[[j]] <- v }
    return(x)
  }
  if (startsWith(variant, "only_")) return(x[, sub("only_", "", variant), drop = FALSE])
  if (startsWith(variant, "minus_")) return(x[, setdiff(names(x), sub("minus_", "", variant)), drop = FALSE])
  if (variant == "nonum") return(x[, isf, drop = FALSE])
  if (variant == "onehot") {
    out <- x[, !isf, drop = FALSE]
    for (j in names(x)[isf]) {
      f <- x[[j]]
      for (l in levels(f)) out[[paste0(j, "__", make.names(l))]] <- as.numeric(f == l)  # NA stays NA
    }
    return(out)
  }
  x
}
lgb_matrix <- function(x, ordcat) {
  m <- matrix(NA_real_, nrow(x), ncol(x), dimnames = list(NULL, names(x)))
  cats <- integer(0)
  for (j in seq_along(x)) {
    v <- x[[j]]
    if (is.factor(v)) {
      m[, j] <- as.integer(v) - 1L
      if (!is.ordered(v) || ordcat) cats <- c(cats, j)
    } else m[, j] <- as.numeric(v)
  }
  list(m = m, cats = cats)
}

## ---------------- metrics ----------------
metric <- function(task, y, p) {
  if (task == "binary") {
    yy <- as.integer(y) - 1L; p <- pmin(pmax(p, 1e-15), 1 - 1e-15)
    ll <- -mean(yy * log(p) + (1 - yy) * log(1 - p))
    r <- rank(p); n1 <- sum(yy); n0 <- length(yy) - n1
    auc <- (sum(r[yy == 1]) - n1 * (n1 + 1) / 2) / (n1 * n0)
    c(loss = ll, auc = auc)
  } else if (task == "multiclass") {
    p <- pmin(pmax(p, 1e-15), 1)
    c(loss = -mean(log(p[cbind(seq_along(y), as.integer(y))])))
  } else c(loss = sqrt(mean((y - p)^2)))
}

## ---------------- fitting ----------------
HP <- list(num_leaves = 15L, learning_rate = 0.05, nrounds = 200L, min_data_in_leaf = 5L, max_bin = 255L)

fit_hb <- function(xtr, ytr, xte, task, ordcat, es, xva = NULL, yva = NULL) {
  args <- list(x = xtr, y = ytr, nrounds = if (es) 1000L else HP$nrounds,
               learning_rate = HP$learning_rate, num_leaves = HP$num_leaves,
               min_data_in_leaf = HP$min_data_in_leaf, max_bin = HP$max_bin,
               ordered_factors = if (ordcat) "categorical" else "ordinal",
               nthreads = 1L, seed = 1L, verbose = 0L)
  if (es) { args$valid <- list(v = list(x = xva, y = yva)); args$early_stopping_rounds <- 20L }
  fit <- do.call(histboost, args)
  p <- predict(fit, xte)
  if (task == "binary" && is.matrix(p)) p <- p[, 2]
  list(p = p, iter = if (es) fit$best_iteration else HP$nrounds)
}

lgb_lab <- function(y, task) if (task == "regression") y else as.integer(y) - 1L

fit_lgb <- function(xtr, ytr, xte, task, ordcat, es, xva = NULL, yva = NULL) {
  tr <- lgb_matrix(xtr, ordcat); te <- lgb_matrix(xte, ordcat)
  obj <- switch(task, binary = "binary", multiclass = "multiclass", regression = "regression")
  params <- list(objective = obj, num_leaves = HP$num_leaves, learning_rate = HP$learning_rate,
                 min_data_in_leaf = HP$min_data_in_leaf, max_bin = HP$max_bin,
                 num_threads = 1L, verbose = -1L, seed = 1L, deterministic = TRUE,
                 max_cat_to_onehot = 4L, cat_smooth = 10, cat_l2 = 10, min_data_per_group = 100L,
                 max_cat_threshold = 32L)
  if (task == "multiclass") params$num_class <- nlevels(ytr)
  params <- modifyList(params, LGBEXTRA)
  params$metric <- switch(task, binary = "binary_logloss", multiclass = "multi_logloss", regression = "l2")
  dtr <- lgb.Dataset(tr$m, label = lgb_lab(ytr, task), categorical_feature = if (length(tr$cats)) tr$cats else NULL,
                     params = modifyList(list(max_bin = HP$max_bin), LGBEXTRA))
  if (es) {
    va <- lgb_matrix(xva, ordcat)
    dva <- lgb.Dataset.create.valid(dtr, va$m, label = lgb_lab(yva, task))
    bst <- lgb.train(params, dtr, nrounds = 1000L, valids = list(v = dva), early_stopping_rounds = 20L, verbose = -1L)
    it <- bst$best_iter
  } else {
    bst <- lgb.train(params, dtr, nrounds = HP$nrounds, verbose = -1L)
    it <- HP$nrounds
  }
  p <- predict(bst, te$m)
  list(p = p, iter = it)
}

## ---------------- CV ----------------
run_cv <- function(name, variant = "native", es = FALSE, reps = 3, k = 5) {
  ds <- get_ds(name)
  x <- prep_x(ds$x, variant); y <- ds$y; task <- ds$task
  ordcat <- variant == "ordcat"
  res <- list()
  for (r in seq_len(reps)) {
    set.seed(SEEDBASE + 1000 + r)
    folds <- sample(rep(seq_len(k), length.out = nrow(x)))
    for (f in seq_len(k)) {
      te <- folds == f; tri <- which(!te)
      xva <- yva <- NULL
      if (es) {
        set.seed(SEEDBASE + 2000 + 10 * r + f)
        vi <- sample(tri, round(0.2 * length(tri)))
        tri <- setdiff(tri, vi)
        xva <- x[vi, , drop = FALSE]; yva <- y[vi]
      }
      xtr <- x[tri, , drop = FALSE]; ytr <- y[tri]; xte <- x[te, , drop = FALSE]; yte <- y[te]
      t0 <- proc.time()[3]
      h <- fit_hb(xtr, ytr, xte, task, ordcat, es, xva, yva)
      t1 <- proc.time()[3]
      l <- fit_lgb(xtr, ytr, xte, task, ordcat, es, xva, yva)
      t2 <- proc.time()[3]
      mh <- metric(task, yte, h$p); ml <- metric(task, yte, l$p)
      res[[length(res) + 1]] <- data.frame(ds = name, variant = variant, es = es, rep = r, fold = f,
        hb = mh[["loss"]], lgb = ml[["loss"]],
        hb_auc = if (task == "binary") mh[["auc"]] else NA, lgb_auc = if (task == "binary") ml[["auc"]] else NA,
        hb_iter = h$iter, lgb_iter = l$iter, hb_s = t1 - t0, lgb_s = t2 - t1)
    }
  }
  do.call(rbind, res)
}

summ <- function(d) {
  diff <- d$hb - d$lgb
  rel <- 100 * (mean(d$hb) / mean(d$lgb) - 1)
  tt <- if (sd(diff) > 0) t.test(d$hb, d$lgb, paired = TRUE)$p.value else NA
  st <- binom.test(sum(diff < 0), sum(diff != 0))$p.value
  data.frame(ds = d$ds[1], variant = d$variant[1], es = d$es[1],
             hb_mean = mean(d$hb), hb_sd = sd(d$hb), lgb_mean = mean(d$lgb), lgb_sd = sd(d$lgb),
             rel_pct = rel, hb_wins = sum(diff < 0), lgb_wins = sum(diff > 0), t_p = tt, sign_p = st,
             hb_auc = mean(d$hb_auc), lgb_auc = mean(d$lgb_auc),
             hb_iter = mean(d$hb_iter), lgb_iter = mean(d$lgb_iter),
             hb_s = sum(d$hb_s), lgb_s = sum(d$lgb_s))
}

## ---------------- main ----------------
rows <- lapply(strsplit(opt$datasets, ",", fixed = TRUE)[[1]], function(ds) {
  summ(run_cv(ds, variant = opt$variant, es = opt$es, reps = opt$reps, k = opt$folds))
})
tab <- do.call(rbind, rows)
cat(sprintf("histboost %s (%s), lightgbm %s; %d x %d-fold CV, %s\n", utils::packageVersion("histboost"),
            find.package("histboost"), utils::packageVersion("lightgbm"), opt$reps, opt$folds,
            if (opt$es) "early stopping" else "200 rounds"))
print(tab[, c("ds", "hb_mean", "hb_sd", "lgb_mean", "lgb_sd", "rel_pct", "hb_wins", "lgb_wins", "t_p", "sign_p",
              "hb_auc", "lgb_auc")], digits = 3, row.names = FALSE)
if (nzchar(opt$out)) utils::write.csv(tab, opt$out, row.names = FALSE)
