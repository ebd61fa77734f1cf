#!/bin/sh
# asan-tests.sh: the R test suite against an ASan + UBSan build of the
# package. The package is compiled with -fsanitize=address,undefined (via a
# private R_MAKEVARS_USER) and installed into a second library,
# tools/build/asan-lib, never the site library; R itself is not
# instrumented, so the ASan runtime is preloaded and leak detection is off
# (R frees much of its memory only at exit). Any report from our code stops
# the run with a non-zero exit. Extra arguments are test-file name filters
# (a regular expression, as testthat::test_dir's `filter`).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
cd "${root}"
lib="${root}/tools/build/asan-lib"
mkdir -p "${lib}"
mv="${root}/tools/build/asan-Makevars"
cat > "${mv}" <<'MK'
CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS = -fsanitize=address,undefined
MK
CC=${CC:-gcc}
asan=$(${CC} -print-file-name=libasan.so)
if [ ! -f "${asan}" ]; then
  echo "asan-tests: ${CC} has no libasan.so; cannot run the sanitized suite" >&2
  exit 1
fi
R_MAKEVARS_USER="${mv}" R CMD INSTALL --preclean --no-test-load --library="${lib}" . >"${root}/tools/build/asan-install.log" 2>&1 ||
  { tail -n 40 "${root}/tools/build/asan-install.log"; exit 1; }
# A fresh checkout's R CMD INSTALL leaves objects in src/: clean them so a
# later plain install does not reuse sanitized objects.
sh ./cleanup 2>/dev/null || true

R_LIBS="${lib}${R_LIBS:+:${R_LIBS}}" \
LD_PRELOAD="${asan}" \
ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:verify_asan_link_order=0" \
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
HISTBOOST_TEST_FILTER="${1:-}" \
  Rscript tools/run-tests.R
