#!/bin/sh
# check-docs.sh: fails when man/ or NAMESPACE are not what roxygen2 writes
# from the #' comments in R/ (the comments are the source; man/*.Rd and
# NAMESPACE are generated and committed). Runs roxygen2::roxygenise() in a
# copy of DESCRIPTION, NAMESPACE, R/ and man/, so the checkout is never
# touched, and prints the diff. The R files are sourced, not compiled
# (load_code = "source"), so this needs no C compiler and takes seconds.
# To fix a failure, run in the repository root:
#   Rscript -e 'roxygen2::roxygenise(load_code = "source")'
# and commit man/ and NAMESPACE. POSIX sh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
cd "${root}"

if ! Rscript -e 'quit(status = !requireNamespace("roxygen2", quietly = TRUE))' >/dev/null 2>&1; then
  echo "check-docs.sh: roxygen2 is not installed (sh tools/install.sh --test installs it)" >&2
  exit 1
fi

tmp=$(mktemp -d 2>/dev/null || echo "/tmp/hb-check-docs.$$")
mkdir -p "${tmp}"
trap 'rm -rf "${tmp}"' EXIT
trap 'exit 1' INT TERM

copy="${tmp}/histboost"
mkdir -p "${copy}"
cp -R DESCRIPTION NAMESPACE R man "${copy}/"

# DESCRIPTION says which roxygen2 wrote the files (Config/roxygen2/version;
# RoxygenNote before roxygen2 8, which replaces it); another version can
# format man/ differently, so say when they differ.
(cd "${copy}" && Rscript -e '
  d <- read.dcf("DESCRIPTION", fields = c("Config/roxygen2/version", "RoxygenNote"))[1, ]
  note <- if (!is.na(d[[1]])) d[[1]] else d[[2]]
  have <- as.character(utils::packageVersion("roxygen2"))
  if (!is.na(note) && note != have)
    cat("check-docs.sh: note: DESCRIPTION says roxygen2", note, "but roxygen2", have, "is installed\n")
  suppressPackageStartupMessages(roxygen2::roxygenise(load_code = "source"))
') || { echo "check-docs.sh: roxygen2::roxygenise() failed" >&2; exit 1; }

rc=0
diff -ru man "${copy}/man" || rc=1
diff -u NAMESPACE "${copy}/NAMESPACE" || rc=1
if [ "${rc}" -ne 0 ]; then
  echo "check-docs.sh: man/ or NAMESPACE differ from what roxygen2 writes from R/ (diff above)." >&2
  echo "  Run: Rscript -e 'roxygen2::roxygenise(load_code = \"source\")' and commit man/ and NAMESPACE." >&2
  exit 1
fi
# Every Rd file parses cleanly: a stray `\\%` (roxygen's markdown turns
# `\%` into it) starts an Rd comment that hides the rest of the line, its
# closing brace too, and R CMD check fails minutes later.
Rscript -e '
  bad <- 0L
  for (f in list.files("man", "[.]Rd$", full.names = TRUE)) {
    msg <- tryCatch(utils::capture.output(tools::checkRd(f)), warning = function(w) conditionMessage(w),
                    error = function(e) conditionMessage(e))
    if (length(msg)) { cat(f, ": ", paste(msg, collapse = "\n"), "\n", sep = ""); bad <- bad + 1L }
  }
  quit(status = bad > 0L)
' || { echo "check-docs.sh: man/ has Rd problems (above); in roxygen markdown write a plain %" >&2; exit 1; }
echo "check-docs.sh: man/ and NAMESPACE match roxygen2's output, and every Rd file parses cleanly"
