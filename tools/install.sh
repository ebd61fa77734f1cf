#!/bin/sh
# install.sh [--test]: installs histboost's missing R dependencies from CRAN
# (with --test also the test suite's: testthat, lightgbm, roxygen2), then installs the
# package from this checkout with R CMD INSTALL. Packages already installed
# are left alone. Non-interactive; POSIX sh.
#   HISTBOOST_CRAN   CRAN mirror (default https://cloud.r-project.org)
#   HISTBOOST_NCPUS  parallel package builds (default 2)
set -eu

usage() {
  echo "usage: sh tools/install.sh [--test]"
  echo "  installs missing dependencies from CRAN, then histboost from this checkout"
  echo "  --test  also installs the test dependencies (testthat, lightgbm, roxygen2)"
}

with_test=no
for arg in "$@"; do
  case "${arg}" in
    --test) with_test=yes ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
cd "${root}"

if ! command -v Rscript >/dev/null 2>&1; then
  # Only a machine without R needs the system package manager.
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "install.sh: R not found; installing r-base-dev with apt-get"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends r-base-dev
  else
    echo "install.sh: R (>= 4.1.0) is not installed; install R and a C compiler first" >&2
    exit 1
  fi
fi

# MPI (data-parallel training, hb_has_mpi()): configure builds it in when
# `mpicc` is found. As root on Debian/Ubuntu (CI) Open MPI comes from the
# system's packages when missing, so the MPI tests always run there;
# elsewhere histboost builds without it. HISTBOOST_MPI=no skips this.
if [ "${HISTBOOST_MPI:-yes}" != "no" ] && ! command -v mpicc >/dev/null 2>&1 &&
   command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "install.sh: no MPI found; installing openmpi-bin libopenmpi-dev with apt-get"
  if ! { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
           openmpi-bin libopenmpi-dev; }; then
    echo "install.sh: could not install Open MPI; histboost is built without MPI (hb_has_mpi() FALSE)" >&2
  fi
fi

HISTBOOST_CRAN=${HISTBOOST_CRAN:-https://cloud.r-project.org}
HISTBOOST_NCPUS=${HISTBOOST_NCPUS:-2}
export HISTBOOST_CRAN HISTBOOST_NCPUS

# The dependency list is read from DESCRIPTION (Imports, Depends), so it never
# drifts; base packages (methods, stats, utils) are always there.
Rscript - "${with_test}" <<'REOF'
args <- commandArgs(trailingOnly = TRUE)
with_test <- identical(args[1], "yes")
if (getRversion() < "4.1.0") stop("histboost needs R >= 4.1.0; this is R ", getRversion())
fields <- read.dcf("DESCRIPTION", fields = c("Depends", "Imports"))
deps <- unlist(strsplit(fields[!is.na(fields)], ","))
deps <- trimws(sub("\\(.*\\)", "", deps))
base <- rownames(installed.packages(priority = "base"))
deps <- setdiff(deps[nzchar(deps)], c("R", base))
# R CMD build builds the vignette (knitr, markdown); tools/check-docs.sh runs roxygen2.
if (with_test) deps <- c(deps, "testthat", "lightgbm", "knitr", "markdown", "roxygen2")
# The caret and parsnip tests need those packages (and their many
# dependencies); installing them is tried, and their tests say when they skip.
optional <- if (with_test) c("caret", "parsnip") else character()
# testthat 3rd edition needs testthat >= 3.0.0.
present <- function(p) {
  if (!nzchar(system.file(package = p))) return(FALSE)
  if (p == "testthat") return(utils::packageVersion("testthat") >= "3.0.0")
  TRUE
}
missing <- deps[!vapply(deps, present, logical(1))]
lib <- .libPaths()[1]
if (file.access(lib, 2) != 0) {
  # Not root and no writable site library: use the per-user library.
  lib <- Sys.getenv("R_LIBS_USER")
  dir.create(lib, recursive = TRUE, showWarnings = FALSE)
  .libPaths(c(lib, .libPaths()))
}
if (length(missing)) {
  cat("install.sh: installing from CRAN into", lib, ":", paste(missing, collapse = ", "), "\n")
  t0 <- Sys.time()
  utils::install.packages(missing, lib = lib, repos = Sys.getenv("HISTBOOST_CRAN"),
                          Ncpus = as.integer(Sys.getenv("HISTBOOST_NCPUS")), quiet = TRUE)
  cat(sprintf("install.sh: CRAN installs took %.0f s\n", as.numeric(Sys.time() - t0, units = "secs")))
  # install.packages() only warns when a build fails; make that an error.
  still <- missing[!vapply(missing, function(p) requireNamespace(p, lib.loc = .libPaths(), quietly = TRUE), logical(1))]
  if (length(still)) {
    cat("install.sh: could not install:", paste(still, collapse = ", "), "\n", file = stderr())
    quit(status = 1)
  }
} else {
  cat("install.sh: all dependencies present:", paste(deps, collapse = ", "), "\n")
}
opt_missing <- optional[!vapply(optional, present, logical(1))]
if (length(opt_missing)) {
  cat("install.sh: trying the optional test packages:", paste(opt_missing, collapse = ", "), "\n")
  t0 <- Sys.time()
  try(utils::install.packages(opt_missing, lib = lib, repos = Sys.getenv("HISTBOOST_CRAN"),
                              Ncpus = as.integer(Sys.getenv("HISTBOOST_NCPUS")), quiet = TRUE))
  got <- vapply(opt_missing, function(p) requireNamespace(p, lib.loc = .libPaths(), quietly = TRUE), logical(1))
  cat(sprintf("install.sh: optional installs took %.0f s; %s\n", as.numeric(Sys.time() - t0, units = "secs"),
              if (all(got)) "all installed" else paste("not installed (their tests skip):",
                                                        paste(opt_missing[!got], collapse = ", "))))
}
REOF

# Install into the same library the dependencies went to (per-user when the
# site library is not writable).
lib=$(Rscript -e 'l <- .libPaths()[1]; if (file.access(l, 2) != 0) l <- Sys.getenv("R_LIBS_USER"); cat(l)')
echo "install.sh: R CMD INSTALL . (into ${lib})"
R CMD INSTALL --preclean --no-multiarch --library="${lib}" .
