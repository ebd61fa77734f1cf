# More real tables beside lightgbm, by repeated k-fold cross-validation (the
# same folds for both, one thread each): 39 cases on 22 small public tables
# from packages many R users have (datasets, MASS, survival, rpart, boot,
# lattice, nlme, ggplot2, caret, dplyr), with factors, ordered factors, NAs,
# offsets and the objectives regression, huber, l1, binary, multiclass,
# poisson, gamma and tweedie (real-factors-cv.R has nine tables, four of them
# here too with other settings). Parameters by
# size (small tables 150 rounds at 0.05 with 15 leaves and min_data_in_leaf
# 5, mid-size 200 rounds and 10, over 1,000 rows 150 rounds at 0.1 with 31
# leaves and 20); the `_cat` cases set min_data_per_group 10 and cat_smooth
# 5 so that the many-vs-many categorical search runs. lightgbm gets factors
# as integer codes (categorical_feature), ordered factors as numbers (or as
# categories in the `_ordcat` cases, as histboost's ordered_factors =
# "categorical"), histboost's huber_delta as its alpha. With --es TRUE both
# stop after 20 rounds without gain on the same fifth of each training fold.
# One row per case: both packages' metric (mean over the folds and
# repetitions), histboost's relative difference in % (below 0: histboost
# better) and its range over the repetitions.
#
#   Rscript inst/bench/real-data-cv.R [--lib DIR] [--cases all|airq_l2,mpg_l2_cat,...] [--es FALSE]
#           [--reps 3] [--folds 5] [--out FILE]
#
# A case whose package is missing is skipped, saying so. --out writes the
# table as csv.
options(warn = 1)
args <- commandArgs(trailingOnly = TRUE)
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(dirname(script), "run.R"))  # bench_options()
opt <- bench_options(args, list(lib = "", cases = "all", es = FALSE, reps = 3L, folds = 5L, out = ""),
                     "real-data-cv.R")
for (p in c("lightgbm", "histboost")) {
  if (!requireNamespace(p, quietly = TRUE)) stop("real-data-cv.R needs the package ", p, call. = FALSE)
}
suppressPackageStartupMessages({library(histboost); library(lightgbm)})

## ---------------- both packages on the same folds ----------------
## data.frame -> numeric matrix for lightgbm: unordered factors -> integer codes
## (categorical_feature), ordered factors -> integer codes as numeric (or categorical)
to_lgb <- function(X, ordered_as = c("numeric", "categorical")) {
  ordered_as <- match.arg(ordered_as)
  cats <- character(0)
  M <- sapply(names(X), function(n) {
    v <- X[[n]]
    if (is.factor(v)) as.numeric(as.integer(v)) else as.numeric(v)
  })
  if (is.null(dim(M))) M <- matrix(M, nrow = 1, dimnames = list(NULL, names(X)))
  for (n in names(X)) {
    v <- X[[n]]
    if (is.factor(v) && (!is.ordered(v) || ordered_as == "categorical")) cats <- c(cats, n)
  }
  list(M = M, cats = cats)
}

lgb_obj <- function(obj) switch(obj, regression = "regression", binary = "binary",
  multiclass = "multiclass", poisson = "poisson", gamma = "gamma", tweedie = "tweedie",
  huber = "huber", l1 = "regression_l1", obj)

## evaluation metric on response scale
metric_fn <- function(obj, y, p, tvp = 1.5) {
  switch(obj,
    regression = sqrt(mean((y - p)^2)),
    huber = sqrt(mean((y - p)^2)),
    l1 = mean(abs(y - p)),
    binary = { p <- pmin(pmax(p, 1e-15), 1 - 1e-15); yy <- as.integer(y) - 1L
               -mean(yy * log(p) + (1 - yy) * log(1 - p)) },
    multiclass = { p <- pmax(p, 1e-15); -mean(log(p[cbind(seq_along(y), as.integer(y))])) },
    poisson = 2 * mean(ifelse(y > 0, y * log(y / p), 0) - (y - p)),
    gamma = 2 * mean(-log(y / p) + (y - p) / p),
    tweedie = { mu <- p; 2 * mean(ifelse(y > 0, y^(2 - tvp) / ((1 - tvp) * (2 - tvp)), 0) -
                  y * mu^(1 - tvp) / (1 - tvp) + mu^(2 - tvp) / (2 - tvp)) })
}
metric_name <- c(regression = "rmse", huber = "rmse", l1 = "mae", binary = "logloss",
  multiclass = "mlogloss", poisson = "pois_dev", gamma = "gamma_dev", tweedie = "tweedie_dev")

## one fit+predict for each package
fit_pair <- function(Xtr, ytr, Xte, obj, par, offtr = NULL, offte = NULL,
                     es = FALSE, ordered_as = "numeric", seed = 1) {
  nr <- par$nrounds
  hbpar <- par[setdiff(names(par), "nrounds")]
  ## inner validation split for early stopping (same rows for both)
  if (es) {
    set.seed(seed + 1000)
    iv <- sample(nrow(Xtr), round(0.2 * nrow(Xtr)))
    Xv <- Xtr[iv, , drop = FALSE]; yv <- ytr[iv]; offv <- offtr[iv]
    Xtr <- Xtr[-iv, , drop = FALSE]; ytr <- ytr[-iv]; if (!is.null(offtr)) offtr <- offtr[-iv]
  }
  ## ---- histboost
  hb_args <- c(list(x = Xtr, y = ytr, objective = obj, nrounds = nr, nthreads = 1,
                    verbose = 0, seed = 1, init_score = offtr,
                    ordered_factors = if (ordered_as == "numeric") "ordinal" else "categorical"),
               hbpar)
  if (es) {
    hb_args$valid <- list(v = list(x = Xv, y = yv, init_score = offv))
    hb_args$early_stopping_rounds <- 20
  }
  hb_warn <- character(0)
  fit <- withCallingHandlers(do.call(histboost, hb_args),
    warning = function(w) { hb_warn <<- c(hb_warn, conditionMessage(w)); invokeRestart("muffleWarning") })
  ph <- predict(fit, Xte, type = "raw", init_score = offte)
  ## ---- lightgbm
  L <- to_lgb(Xtr, ordered_as); Lte <- to_lgb(Xte, ordered_as)
  ylab <- if (obj %in% c("binary", "multiclass")) as.integer(ytr) - 1L else ytr
  lpar <- c(list(objective = lgb_obj(obj), num_threads = 1, verbose = -1, seed = 1,
                 deterministic = TRUE), hbpar)
  if (obj == "multiclass") lpar$num_class <- nlevels(ytr)
  if (!is.null(lpar$huber_delta)) { lpar$alpha <- lpar$huber_delta; lpar$huber_delta <- NULL }
  dtr <- lgb.Dataset(L$M, label = ylab, categorical_feature = if (length(L$cats)) L$cats else NULL,
                     init_score = offtr, params = lpar)
  valids <- list()
  if (es) {
    Lv <- to_lgb(Xv, ordered_as)
    ylv <- if (obj %in% c("binary", "multiclass")) as.integer(yv) - 1L else yv
    dv <- lgb.Dataset.create.valid(dtr, Lv$M, label = ylv, init_score = offv)
    valids <- list(v = dv)
  }
  bst <- lgb.train(lpar, dtr, nrounds = nr, valids = valids, verbose = -1,
                   early_stopping_rounds = if (es) 20 else NULL)
  pl <- predict(bst, Lte$M, type = "raw",
                num_iteration = if (es) bst$best_iter else NULL)
  if (obj == "multiclass" && is.null(dim(pl))) pl <- matrix(pl, ncol = nlevels(ytr), byrow = TRUE)
  if (!is.null(offte)) pl <- pl + offte
  list(ph = ph, pl = pl, fit = fit, bst = bst, hb_warn = hb_warn,
       hb_iter = if (es) fit$best_iteration else nr, lgb_iter = if (es) bst$best_iter else nr)
}

link_inv <- function(obj, raw) {
  switch(obj,
    binary = 1 / (1 + exp(-raw)),
    multiclass = { e <- exp(raw - apply(raw, 1, max)); e / rowSums(e) },
    poisson = , gamma = , tweedie = exp(raw),
    raw)
}

run_case <- function(name, X, y, obj, par, offset = NULL, reps = 3, k = 5,
                     es = FALSE, ordered_as = "numeric", tvp = 1.5) {
  res <- list(); warns <- character(0)
  for (r in seq_len(reps)) {
    set.seed(r)
    fold <- sample(rep_len(seq_len(k), length(y)))
    ph_all <- pl_all <- NULL
    mh <- ml <- numeric(k); ih <- il <- numeric(k)
    for (f in seq_len(k)) {
      te <- fold == f
      out <- fit_pair(X[!te, , drop = FALSE], y[!te], X[te, , drop = FALSE], obj, par,
                      offtr = offset[!te], offte = offset[te], es = es,
                      ordered_as = ordered_as, seed = r * 10 + f)
      warns <- c(warns, out$hb_warn)
      mh[f] <- metric_fn(obj, y[te], link_inv(obj, out$ph), tvp)
      ml[f] <- metric_fn(obj, y[te], link_inv(obj, out$pl), tvp)
      ih[f] <- out$hb_iter; il[f] <- out$lgb_iter
    }
    res[[r]] <- data.frame(case = name, obj = obj, es = es, rep = r,
                           hb = mean(mh), lgb = mean(ml), hb_iter = mean(ih), lgb_iter = mean(il))
  }
  res <- do.call(rbind, res)
  res$rel <- (res$hb - res$lgb) / abs(res$lgb)
  attr(res, "warns") <- unique(warns)
  res
}

summ <- function(res) {
  data.frame(case = res$case[1], obj = res$obj[1], es = res$es[1],
             metric = metric_name[[res$obj[1]]],
             hb = mean(res$hb), lgb = mean(res$lgb), rel_pct = 100 * mean(res$rel),
             rel_min = 100 * min(res$rel), rel_max = 100 * max(res$rel),
             iters = paste0(round(mean(res$hb_iter)), "/", round(mean(res$lgb_iter))),
             warns = paste(attr(res, "warns"), collapse = " | "))
}

## ---------------- cases ----------------
## case definitions: each returns list(X, y, obj, par, offset)
P_small <- list(nrounds = 150, learning_rate = 0.05, num_leaves = 15, min_data_in_leaf = 5)
P_med   <- list(nrounds = 200, learning_rate = 0.05, num_leaves = 15, min_data_in_leaf = 10)
P_large <- list(nrounds = 150, learning_rate = 0.1,  num_leaves = 31, min_data_in_leaf = 20)
P_cat   <- list(min_data_per_group = 10, cat_smooth = 5)   # exercise many-vs-many splits

chr2f <- function(d) { for (n in names(d)) if (is.character(d[[n]])) d[[n]] <- factor(d[[n]]); d }

cases <- list(
  airq_l2 = function() { d <- airquality[!is.na(airquality$Ozone), ]; d$Month <- factor(d$Month)
    list(X = d[, c("Solar.R", "Wind", "Temp", "Month", "Day")], y = d$Ozone, obj = "regression", par = P_small) },
  airq_gamma = function() { d <- airquality[!is.na(airquality$Ozone), ]; d$Month <- factor(d$Month)
    list(X = d[, c("Solar.R", "Wind", "Temp", "Month", "Day")], y = d$Ozone, obj = "gamma", par = P_small) },
  mpg_l2 = function() { d <- chr2f(as.data.frame(ggplot2::mpg))
    list(X = d[, c("manufacturer", "model", "displ", "year", "cyl", "trans", "drv", "fl", "class")],
         y = d$hwy, obj = "regression", par = P_med) },
  mpg_l2_cat = function() { d <- chr2f(as.data.frame(ggplot2::mpg))
    list(X = d[, c("manufacturer", "model", "displ", "year", "cyl", "trans", "drv", "fl", "class")],
         y = d$hwy, obj = "regression", par = c(P_med, P_cat)) },
  mpg_pois = function() { d <- chr2f(as.data.frame(ggplot2::mpg))
    list(X = d[, c("manufacturer", "model", "displ", "year", "cyl", "trans", "drv", "fl", "class")],
         y = d$hwy, obj = "poisson", par = P_med) },
  mpg_huber = function() { d <- chr2f(as.data.frame(ggplot2::mpg))
    list(X = d[, c("manufacturer", "model", "displ", "year", "cyl", "trans", "drv", "fl", "class")],
         y = d$hwy, obj = "huber", par = P_med) },
  msleep_l2 = function() { d <- chr2f(as.data.frame(ggplot2::msleep))
    list(X = d[, c("vore", "order", "conservation", "sleep_rem", "sleep_cycle", "brainwt", "bodywt")],
         y = d$sleep_total, obj = "regression", par = P_small) },
  cars93_l2 = function() { d <- MASS::Cars93
    list(X = d[, c("Manufacturer", "Type", "MPG.city", "MPG.highway", "AirBags", "DriveTrain", "Cylinders",
                   "EngineSize", "Horsepower", "RPM", "Rev.per.mile", "Man.trans.avail", "Fuel.tank.capacity",
                   "Passengers", "Length", "Wheelbase", "Width", "Turn.circle", "Rear.seat.room",
                   "Luggage.room", "Weight", "Origin")], y = d$Price, obj = "regression", par = P_small) },
  cars93_multi = function() { d <- MASS::Cars93
    list(X = d[, c("Manufacturer", "MPG.city", "MPG.highway", "AirBags", "DriveTrain", "Cylinders",
                   "EngineSize", "Horsepower", "RPM", "Rev.per.mile", "Man.trans.avail", "Fuel.tank.capacity",
                   "Passengers", "Length", "Wheelbase", "Width", "Turn.circle", "Rear.seat.room",
                   "Luggage.room", "Weight", "Origin", "Price")], y = d$Type, obj = "multiclass", par = P_small) },
  survey_bin = function() { d <- MASS::survey; d <- d[!is.na(d$Sex), ]
    list(X = d[, setdiff(names(d), "Sex")], y = d$Sex, obj = "binary", par = P_med) },
  survey_multi = function() { d <- MASS::survey; d <- d[!is.na(d$Exer), ]
    list(X = d[, setdiff(names(d), "Exer")], y = d$Exer, obj = "multiclass", par = P_med) },
  biopsy_bin = function() { d <- MASS::biopsy
    list(X = d[, paste0("V", 1:9)], y = d$class, obj = "binary", par = P_med) },
  insurance_pois = function() { d <- MASS::Insurance
    list(X = d[, c("District", "Group", "Age")], y = d$Claims, obj = "poisson", par = P_small,
         offset = log(d$Holders)) },
  insurance_pois_ordcat = function() { d <- MASS::Insurance
    list(X = d[, c("District", "Group", "Age")], y = d$Claims, obj = "poisson", par = P_small,
         offset = log(d$Holders), ordered_as = "categorical") },
  quine_pois = function() { d <- MASS::quine
    list(X = d[, c("Eth", "Sex", "Age", "Lrn")], y = d$Days, obj = "poisson", par = P_small) },
  quine_tweedie = function() { d <- MASS::quine
    list(X = d[, c("Eth", "Sex", "Age", "Lrn")], y = d$Days, obj = "tweedie", par = P_small) },
  esoph_pois = function() { d <- datasets::esoph
    list(X = d[, c("agegp", "alcgp", "tobgp")], y = d$ncases, obj = "poisson", par = P_small,
         offset = log(d$ncases + d$ncontrols)) },
  flchain_bin = function() { d <- survival::flchain
    list(X = d[, c("age", "sex", "sample.yr", "kappa", "lambda", "flc.grp", "creatinine", "mgus")],
         y = factor(d$death), obj = "binary", par = P_large) },
  scat_multi = function() { data(scat, package = "caret", envir = environment())
    list(X = scat[, -1], y = scat$Species, obj = "multiclass", par = P_small) },
  sacr_gamma = function() { data(Sacramento, package = "caret", envir = environment()); d <- Sacramento
    list(X = d[, c("city", "zip", "beds", "baths", "sqft", "type", "latitude", "longitude")],
         y = d$price, obj = "gamma", par = P_med) },
  sacr_gamma_cat = function() { data(Sacramento, package = "caret", envir = environment()); d <- Sacramento
    list(X = d[, c("city", "zip", "beds", "baths", "sqft", "type", "latitude", "longitude")],
         y = d$price, obj = "gamma", par = c(P_med, P_cat)) },
  sacr_l1 = function() { data(Sacramento, package = "caret", envir = environment()); d <- Sacramento
    list(X = d[, c("city", "zip", "beds", "baths", "sqft", "type", "latitude", "longitude")],
         y = d$price / 1000, obj = "l1", par = P_med) },
  sacr_l2log = function() { data(Sacramento, package = "caret", envir = environment()); d <- Sacramento
    list(X = d[, c("city", "zip", "beds", "baths", "sqft", "type", "latitude", "longitude")],
         y = log(d$price), obj = "regression", par = P_med) },
  barley_l2 = function() { d <- lattice::barley
    list(X = d[, c("variety", "year", "site")], y = d$yield, obj = "regression", par = P_small) },
  barley_l2_cat = function() { d <- lattice::barley
    list(X = d[, c("variety", "year", "site")], y = d$yield, obj = "regression", par = c(P_small, P_cat)) },
  mathach_l2 = function() { d <- as.data.frame(nlme::MathAchieve); d$School <- factor(as.character(d$School))
    list(X = d[, c("School", "Minority", "Sex", "SES", "MEANSES")], y = d$MathAch, obj = "regression", par = P_large) },
  mathach_l2_cat = function() { d <- as.data.frame(nlme::MathAchieve); d$School <- factor(as.character(d$School))
    list(X = d[, c("School", "Minority", "Sex", "SES", "MEANSES")], y = d$MathAch, obj = "regression",
         par = c(P_large, P_cat)) },
  mathach_huber = function() { d <- as.data.frame(nlme::MathAchieve); d$School <- factor(as.character(d$School))
    list(X = d[, c("School", "Minority", "Sex", "SES", "MEANSES")], y = d$MathAch, obj = "huber", par = P_large) },
  cu_l2 = function() { d <- rpart::cu.summary
    list(X = d[, c("Country", "Reliability", "Mileage", "Type")], y = d$Price, obj = "regression", par = P_small) },
  cu_multi = function() { d <- rpart::cu.summary; d <- d[!is.na(d$Reliability), ]
    list(X = d[, c("Country", "Price", "Mileage", "Type")], y = factor(d$Reliability, ordered = FALSE),
         obj = "multiclass", par = P_small) },
  solder_pois = function() { d <- survival::solder
    list(X = d[, c("Opening", "Solder", "Mask", "PadType", "Panel")], y = d$skips, obj = "poisson", par = P_med) },
  storms_multi = function() { d <- as.data.frame(dplyr::storms); set.seed(42); d <- d[sample(nrow(d), 4000), ]
    d$status <- droplevels(d$status)
    list(X = d[, c("year", "month", "lat", "long", "wind", "pressure", "category",
                   "tropicalstorm_force_diameter", "hurricane_force_diameter")],
         y = d$status, obj = "multiclass", par = P_large) },
  aids2_bin = function() { d <- MASS::Aids2
    list(X = d[, c("state", "sex", "diag", "T.categ", "age")], y = d$status, obj = "binary", par = P_large) },
  diamonds_gamma = function() { d <- as.data.frame(ggplot2::diamonds); set.seed(7); d <- d[sample(nrow(d), 5000), ]
    list(X = d[, c("carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z")], y = d$price,
         obj = "gamma", par = P_large) },
  diamonds_l2_ordcat = function() { d <- as.data.frame(ggplot2::diamonds); set.seed(7); d <- d[sample(nrow(d), 5000), ]
    list(X = d[, c("carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z")], y = log(d$price),
         obj = "regression", par = P_large, ordered_as = "categorical") },
  diamonds_l2 = function() { d <- as.data.frame(ggplot2::diamonds); set.seed(7); d <- d[sample(nrow(d), 5000), ]
    list(X = d[, c("carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z")], y = log(d$price),
         obj = "regression", par = P_large) },
  iris_multi = function() list(X = iris[, 1:4], y = iris$Species, obj = "multiclass", par = P_small),
  urine_bin = function() { d <- boot::urine; d <- d[!is.na(d$r), ]
    list(X = d[, -1], y = factor(d$r), obj = "binary", par = P_small) },
  warpbreaks_pois = function() list(X = warpbreaks[, c("wool", "tension")], y = warpbreaks$breaks,
                                    obj = "poisson", par = P_small)
)

## ---------------- run ----------------
case_pkgs <- function(f) {
  b <- paste(deparse(body(f)), collapse = " ")
  p <- unique(c(regmatches(b, gregexpr("[A-Za-z][A-Za-z0-9.]*(?=::)", b, perl = TRUE))[[1]],
                regmatches(b, gregexpr("(?<=package = \")[A-Za-z0-9.]+", b, perl = TRUE))[[1]]))
  setdiff(p, c("base", "stats", "datasets", "utils"))
}
nm <- if (identical(opt$cases, "all")) names(cases) else strsplit(opt$cases, ",")[[1]]
bad <- setdiff(nm, names(cases))
if (length(bad)) stop("unknown case(s): ", paste(bad, collapse = ", "), call. = FALSE)
rows <- list()
for (n in nm) {
  miss <- Filter(function(p) !requireNamespace(p, quietly = TRUE), case_pkgs(cases[[n]]))
  if (length(miss)) {
    cat(sprintf("%-22s skipped: needs %s\n", n, paste(miss, collapse = ", ")))
    next
  }
  cs <- cases[[n]]()
  r <- run_case(n, cs$X, cs$y, cs$obj, cs$par, offset = cs$offset, reps = opt$reps, k = opt$folds, es = opt$es,
                ordered_as = if (is.null(cs$ordered_as)) "numeric" else cs$ordered_as)
  s <- summ(r)
  cat(sprintf("%-22s %-10s %-9s histboost %9.4g  lightgbm %9.4g  %+6.2f%% [%+.1f, %+.1f]  rounds %s%s\n", s$case,
              s$obj, s$metric, s$hb, s$lgb, s$rel_pct, s$rel_min, s$rel_max, s$iters,
              if (nzchar(s$warns)) paste0("  (histboost warned: ", s$warns, ")") else ""))
  rows[[n]] <- s
}
tab <- do.call(rbind, rows)
if (nzchar(opt$out) && !is.null(tab)) utils::write.csv(tab, opt$out, row.names = FALSE)
