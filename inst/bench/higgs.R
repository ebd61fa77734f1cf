# Higgs-shaped data for the benchmarks (sourced by gpu.R and scaling.R):
# make_higgs(n, seed) and a rank AUC.

# Higgs-shaped binary data: 21 low-level kinematic features (momenta, angles,
# b-tags) and 7 high-level masses derived from them; the label depends on a
# resonance, b-tag coincidences and angular terms, with noise.
make_higgs <- function(n, seed) {
  set.seed(seed)
  pt <- function() 0.3 + rgamma(n, 2, 2)
  eta <- function() pmax(pmin(rnorm(n, sd = 1.1), 2.5), -2.5)
  phi <- function() runif(n, -pi, pi)
  btag <- function() c(0, 1.09, 2.17)[sample.int(3L, n, TRUE, c(0.6, 0.25, 0.15))]
  mass <- function(p1, e1, f1, p2, e2, f2) sqrt(pmax(2 * p1 * p2 * (cosh(e1 - e2) - cos(f1 - f2)), 0))
  x <- matrix(0, n, 28, dimnames = list(NULL, c("lep_pt", "lep_eta", "lep_phi", "met", "met_phi",
    paste0(rep(paste0("j", 1:4), each = 4), c("_pt", "_eta", "_phi", "_b")),
    "m_jj", "m_jjj", "m_lv", "m_jlv", "m_bb", "m_wbb", "m_wwbb")))
  x[, 1] <- pt(); x[, 2] <- eta(); x[, 3] <- phi(); x[, 4] <- 0.2 + rgamma(n, 1.5, 1.8); x[, 5] <- phi()
  for (k in 0:3) {
    x[, 6 + 4 * k] <- pt(); x[, 7 + 4 * k] <- eta(); x[, 8 + 4 * k] <- phi(); x[, 9 + 4 * k] <- btag()
  }
  x[, 22] <- mass(x[, 6], x[, 7], x[, 8], x[, 10], x[, 11], x[, 12])
  x[, 26] <- mass(x[, 14], x[, 15], x[, 16], x[, 18], x[, 19], x[, 20])
  x[, 24] <- mass(x[, 1], x[, 2], x[, 3], x[, 4], 0, x[, 5])
  x[, 25] <- sqrt(x[, 24]^2 + mass(x[, 1], x[, 2], x[, 3], x[, 6], x[, 7], x[, 8])^2)
  x[, 23] <- sqrt(x[, 22]^2 + mass(x[, 10], x[, 11], x[, 12], x[, 14], x[, 15], x[, 16])^2)
  x[, 27] <- sqrt(x[, 26]^2 + x[, 24]^2)
  x[, 28] <- sqrt(x[, 27]^2 + x[, 22]^2)
  s <- 1.6 * exp(-((x[, 26] - 1.2) / 0.35)^2) + 0.7 * (x[, 17] > 1) * (x[, 21] > 1) +
    0.6 * cos(x[, 3] - x[, 5]) * (x[, 4] > 0.9) + 0.8 * tanh(x[, 1] * x[, 6] - 1.2) -
    0.35 * abs(x[, 2]) + 0.4 * sin(2 * x[, 22]) * (x[, 28] > 2.5) + 0.25 * log(x[, 28] + 0.1) - 0.55
  x[runif(n * 28) < 0.002] <- NA  # a few missing values, as in the real data
  y <- factor(runif(n) < plogis(1.3 * s), levels = c(FALSE, TRUE), labels = c("b", "s"))
  list(x = x, y = y)
}

auc <- function(y, p) {
  r <- rank(p)
  n1 <- as.numeric(sum(y))
  (sum(r[y]) - n1 * (n1 + 1) / 2) / (n1 * (length(y) - n1))
}
