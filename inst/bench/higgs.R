# Higgs-shaped data for the benchmarks (sourced by gpu.R, scaling.R and
# binning.R): make_higgs(n, seed) and a rank AUC; and what those scripts
# share: bench_options() (--key value arguments), bench_packages() and
# cpu_model().

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

# The command line's "--key value" pairs over the defaults `opt` (a key's
# dashes read as underscores; each value converted to its default's class);
# an unknown key stops with a pointer to `script`'s header.
bench_options <- function(opt, script) {
  args <- commandArgs(trailingOnly = TRUE)
  i <- 1L
  while (i <= length(args)) {
    key <- gsub("-", "_", sub("^--", "", args[[i]]))
    if (!key %in% names(opt) || i == length(args)) stop("usage: see the top of ", script, call. = FALSE)
    opt[[key]] <- if (is.character(opt[[key]])) args[[i + 1L]] else as(args[[i + 1L]], class(opt[[key]]))
    i <- i + 2L
  }
  opt
}

# The comma-separated packages of `spec`, without lightgbm when it is not installed.
bench_packages <- function(spec) {
  pkgs <- strsplit(spec, ",")[[1]]
  if ("lightgbm" %in% pkgs && !requireNamespace("lightgbm", quietly = TRUE)) {
    message("lightgbm is not installed: histboost alone")
    pkgs <- setdiff(pkgs, "lightgbm")
  }
  pkgs
}

# "model (n logical CPUs)" from /proc/cpuinfo.
cpu_model <- function() {
  tryCatch({
    l <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)
    sprintf("%s (%d logical CPUs)", trimws(sub(".*:", "", l[1])), length(l))
  }, error = function(e) "unknown CPU")
}
