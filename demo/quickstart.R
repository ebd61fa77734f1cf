## quickstart.R: histboost on a generated Higgs-like binary task.
## Run with: demo("quickstart", package = "histboost", ask = FALSE)
## 100,000 simulated collision events x 28 features: 21 "low-level" kinematic
## columns (transverse momenta, pseudorapidities, angles, b-tags) and 7
## "high-level" invariant masses derived from them, like the UCI HIGGS data.
## Events with only three jets have NA for the fourth jet, and the leading
## jet's b-tag is a factor. Trains on 70,000 rows with 10,000 for validation
## (early stopping on AUC) and reports AUC and logloss on 20,000 held out.
library(histboost)

set.seed(2026)
n <- 100000L

## Massless four-vectors -> invariant mass of a set of particles.
inv_mass <- function(...) {
  ps <- list(...)
  e <- px <- py <- pz <- 0
  for (p in ps) {
    e <- e + p$pt * cosh(p$eta)
    px <- px + p$pt * cos(p$phi)
    py <- py + p$pt * sin(p$phi)
    pz <- pz + p$pt * sinh(p$eta)
  }
  sqrt(pmax(e^2 - px^2 - py^2 - pz^2, 0))
}
particle <- function(n, pt_scale, eta_sd = 1.1) {
  list(pt = rlnorm(n, log(pt_scale), 0.45), eta = rnorm(n, 0, eta_sd), phi = runif(n, -pi, pi))
}

lep <- particle(n, 40)
met <- particle(n, 35, eta_sd = 0) # missing energy: transverse only (eta 0)
jets <- lapply(c(90, 60, 45, 30), function(s) particle(n, s))
btag <- matrix(rbeta(4 * n, 0.6, 1.2) * 2.2, n, 4)
btag1 <- cut(btag[, 1], c(-Inf, 0.5, 1, 1.6, Inf), labels = c("none", "loose", "medium", "tight"))

m_jj <- inv_mass(jets[[1]], jets[[2]])
m_jjj <- inv_mass(jets[[1]], jets[[2]], jets[[3]])
m_lv <- inv_mass(lep, met)
m_jlv <- inv_mass(jets[[1]], lep, met)
m_bb <- inv_mass(jets[[2]], jets[[3]])
m_wbb <- inv_mass(jets[[2]], jets[[3]], lep, met)
m_wwbb <- inv_mass(jets[[1]], jets[[2]], jets[[3]], lep, met)

## The signal: a resonance in m_bb near 125, b-tags, a hard lepton and a
## W-like m_lv, with interactions and label noise through a logistic link.
f <- -1.2 +
  2.0 * exp(-((m_bb - 125) / 30)^2) +
  0.9 * (btag1 %in% c("medium", "tight")) * (btag[, 2] > 0.8) +
  0.7 * tanh((lep$pt - 45) / 20) +
  0.8 * exp(-((m_lv - 80) / 25)^2) * (abs(lep$eta) < 1.5) -
  0.5 * (m_wwbb > 600) +
  0.4 * sin(jets[[1]]$phi - met$phi)
y <- factor(ifelse(runif(n) < plogis(f), "signal", "background"),
            levels = c("background", "signal"))

x <- data.frame(
  lepton_pt = lep$pt, lepton_eta = lep$eta, lepton_phi = lep$phi,
  missing_energy = met$pt, missing_energy_phi = met$phi,
  jet1_pt = jets[[1]]$pt, jet1_eta = jets[[1]]$eta, jet1_phi = jets[[1]]$phi, jet1_btag = btag1,
  jet2_pt = jets[[2]]$pt, jet2_eta = jets[[2]]$eta, jet2_phi = jets[[2]]$phi, jet2_btag = btag[, 2],
  jet3_pt = jets[[3]]$pt, jet3_eta = jets[[3]]$eta, jet3_phi = jets[[3]]$phi, jet3_btag = btag[, 3],
  jet4_pt = jets[[4]]$pt, jet4_eta = jets[[4]]$eta, jet4_phi = jets[[4]]$phi, jet4_btag = btag[, 4],
  m_jj = m_jj, m_jjj = m_jjj, m_lv = m_lv, m_jlv = m_jlv, m_bb = m_bb, m_wbb = m_wbb, m_wwbb = m_wwbb
)
## A quarter of the events have no fourth jet; the missing-energy angle is
## sometimes not measured.
no_jet4 <- runif(n) < 0.25
x[no_jet4, c("jet4_pt", "jet4_eta", "jet4_phi", "jet4_btag")] <- NA
x$missing_energy_phi[runif(n) < 0.02] <- NA

idx <- sample.int(n)
train <- idx[1:70000]
valid <- idx[70001:80000]
test <- idx[80001:100000]
cat(sprintf("data: %d rows x %d features (%d factor), %.1f%% signal, %d NAs\n",
            n, ncol(x), sum(vapply(x, is.factor, TRUE)), 100 * mean(y == "signal"),
            sum(is.na(x))))

timing <- system.time(
  model <- histboost(x[train, ], y[train],
                     nrounds = 100L, learning_rate = 0.1, num_leaves = 31L,
                     valid = list(valid = list(x = x[valid, ], y = y[valid])),
                     eval_metric = c("auc", "logloss"), early_stopping_rounds = 20L,
                     seed = 1L, verbose = 1L)
)
print(model)

## Test metrics computed here in plain R, independently of the package.
auc <- function(positive, score) {
  r <- rank(score) # ties get average ranks
  n1 <- sum(positive)
  n0 <- length(positive) - n1
  (sum(r[positive]) - n1 * (n1 + 1) / 2) / (n1 * n0)
}
logloss <- function(positive, p) {
  p <- pmin(pmax(p, 1e-15), 1 - 1e-15)
  -mean(ifelse(positive, log(p), log(1 - p)))
}
p_test <- predict(model, x[test, ]) # P(signal)
is_signal <- y[test] == "signal"

cat("\nTop features by gain:\n")
print(head(hb_importance(model), 10), row.names = FALSE)
cat(sprintf("\nthreads: %d; iterations: %d (best: %s)\n", hb_threads(), model$niter,
            if (is.null(model$best_iteration)) "all" else model$best_iteration))
cat(sprintf("test AUC: %.4f   test logloss: %.4f   accuracy: %.4f\n",
            auc(is_signal, p_test), logloss(is_signal, p_test),
            mean((p_test > 0.5) == is_signal)))
cat(sprintf("training time: %.2f s (elapsed)\n", timing[["elapsed"]]))
