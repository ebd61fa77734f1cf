#!/bin/sh
# test.sh: the whole test suite, as CI runs it (.ci/run) on a fresh machine:
#   1. install missing dependencies (incl. testthat, lightgbm) and the package
#   2. engine-only C tests under ASan/UBSan (make -C tools engine-test)
#   2b. the same C tests built without OpenMP (make -C tools engine-test-noomp)
#   2c. the C code cross-compiled for Windows with mingw-w64 (tools/cross-win.sh;
#       apt-get installs gcc-mingw-w64-x86-64 when missing and run as root)
#   2d. man/ and NAMESPACE up to date with the #' comments (tools/check-docs.sh)
#   3. R CMD build + R CMD check --no-manual --no-tests: fails on any ERROR or
#      WARNING (NOTEs are printed and allowed; README.md explains them)
#   4. the model-loader fuzzer under ASan/UBSan, a fixed 3000 cases (make -C tools fuzz)
#   5. the testthat suite against an ASan/UBSan build in a second library
#      (tools/asan-tests.sh; its closing line is printed, then overwritten by step 6's)
#   6. the testthat suite against the installed package, two threads, ending
#      with "histboost tests: N passed, N failed, N skipped"
# Prints the time each step took. Check results stay in tools/build/check.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
cd "${root}"

HISTBOOST_NUM_THREADS=${HISTBOOST_NUM_THREADS:-2}
export HISTBOOST_NUM_THREADS
start=$(date +%s)
summary=
# run-tests.R also writes its closing line here, so it can be the last line.
closing="${root}/tools/build/testthat-summary.txt"
mkdir -p "${root}/tools/build"
rm -f "${closing}"
HISTBOOST_TESTS_SUMMARY_FILE=${closing}
export HISTBOOST_TESTS_SUMMARY_FILE

# step NAME COMMAND...: runs a step, prints its time, stops the suite on failure.
step() {
  name=$1
  shift
  t0=$(date +%s)
  echo
  echo "==> [${name}] $*"
  rc=0
  "$@" || rc=$?
  dt=$(( $(date +%s) - t0 ))
  summary="${summary}  ${name}: ${dt}s
"
  if [ "${rc}" -ne 0 ]; then
    echo "==> [${name}] FAILED (exit ${rc}) after ${dt}s"
    printf 'step times:\n%s' "${summary}"
    if [ -f "${closing}" ]; then cat "${closing}"; fi
    exit "${rc}"
  fi
  echo "==> [${name}] done in ${dt}s"
}

# The Windows cross compiler, from apt when missing (CI runs as root).
need_mingw() {
  if command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    echo "mingw-w64: $(command -v x86_64-w64-mingw32-gcc)"
    return 0
  fi
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc-mingw-w64-x86-64
  else
    echo "x86_64-w64-mingw32-gcc not found and cannot apt-get it (not root): install gcc-mingw-w64-x86-64" >&2
    return 1
  fi
}

build_and_check() {
  checkdir="${root}/tools/build/check"
  rm -rf "${checkdir}"
  mkdir -p "${checkdir}"
  (cd "${checkdir}" && R CMD build --no-manual "${root}") || return 1
  tarball=$(ls "${checkdir}"/histboost_*.tar.gz)
  crc=0
  (cd "${checkdir}" &&
    _R_CHECK_FORCE_SUGGESTS_=false _R_CHECK_SYSTEM_CLOCK_=0 \
      R CMD check --no-manual --no-tests "${tarball}") || crc=$?
  log="${checkdir}/histboost.Rcheck/00check.log"
  if [ ! -f "${log}" ]; then
    echo "R CMD check wrote no log (exit ${crc})"
    return 1
  fi
  status=$(grep '^Status:' "${log}" || true)
  # Each NOTE with its details, so the README's explanations can be checked.
  awk '/\.\.\. NOTE$/ { p = 1; print; next } /^\* / { p = 0 } p' "${log}"
  if [ "${crc}" -ne 0 ] || [ -z "${status}" ] ||
     echo "${status}" | grep -Eq 'ERROR|WARNING'; then
    echo "---- ${log} ----"
    cat "${log}"
    if [ "${crc}" -ne 0 ] && [ -f "${checkdir}/histboost.Rcheck/00install.out" ]; then
      echo "---- 00install.out (tail) ----"
      tail -n 60 "${checkdir}/histboost.Rcheck/00install.out"
    fi
    echo "R CMD check: ${status:-no status} (exit ${crc}); ERRORs and WARNINGs are not allowed"
    return 1
  fi
  echo "R CMD check: ${status}"
}

step install sh tools/install.sh --test
step engine-test make -C tools engine-test
step engine-test-noomp make -C tools engine-test-noomp
step mingw-tools need_mingw
step cross-win sh tools/cross-win.sh
step docs sh tools/check-docs.sh
step check build_and_check
step fuzz make -C tools fuzz
step testthat-asan sh tools/asan-tests.sh
step testthat Rscript tools/run-tests.R

printf '\nstep times:\n%s  total: %ss\n' "${summary}" "$(( $(date +%s) - start ))"
cat "${closing}"
