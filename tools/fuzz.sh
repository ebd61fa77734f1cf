#!/bin/sh
# fuzz.sh OUTDIR: builds the model-loader fuzzer (tools/fuzz_model.c) against
# every src/engine/*.c with $CC $CFLAGS (tools/Makefile's `fuzz` target sets
# ASan + UBSan) and runs it for $FUZZ_ITERS cases (default 3000) from seed
# $FUZZ_SEED (default 1) on the seed models in tools/fuzz-seeds/. A fixed
# count and seed: the same cases every run, so CI is reproducible; change
# FUZZ_SEED to explore further. When a sanitizer aborts the run, the input
# it died on is kept as tools/fuzz-crashes/crash-<seed>-<time>.hbm: add it to
# tests/testthat/fixtures/fuzz/ so test-fuzz-fixtures.R keeps it fixed.
# Rejected cases sampled by the fuzzer land in OUTDIR (fixtures to pick from).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
out=$1
case "${out}" in /*) ;; *) out="${here}/${out}" ;; esac
CC=${CC:-gcc}
CFLAGS=${CFLAGS:-"-std=c11 -Wall -Wextra -Werror -g -O1 -fopenmp"}
LDLIBS=${LDLIBS:--lm}
FUZZ_ITERS=${FUZZ_ITERS:-3000}
FUZZ_SEED=${FUZZ_SEED:-1}

cd "${root}"
mkdir -p "${out}/engine"
rm -f "${out}"/engine/*.o "${out}"/*.hbm
objs=
for src in src/engine/*.c src/cuda/cuda_stub.c; do
  [ -f "${src}" ] || continue
  obj="${out}/engine/$(basename "${src}" .c).o"
  # shellcheck disable=SC2086
  ${CC} ${CFLAGS} -Isrc/engine -Isrc/cuda -c "${src}" -o "${obj}"
  objs="${objs} ${obj}"
done
echo "CC tools/fuzz_model.c"
# shellcheck disable=SC2086
${CC} ${CFLAGS} -Isrc/engine tools/fuzz_model.c ${objs} -o "${out}/fuzz_model" ${LDLIBS}

echo "RUN fuzz_model: ${FUZZ_ITERS} cases, seed ${FUZZ_SEED}"
status=0
"${out}/fuzz_model" "${FUZZ_ITERS}" "${FUZZ_SEED}" "${out}" tools/fuzz-seeds/*.hbm || status=$?
if [ -f "${out}/current.hbm" ]; then
  mkdir -p tools/fuzz-crashes
  keep="tools/fuzz-crashes/crash-${FUZZ_SEED}-$(date +%s).hbm"
  cp "${out}/current.hbm" "${keep}"
  echo "fuzz: the run died on an input; kept as ${keep}"
  [ "${status}" -ne 0 ] || status=1
fi
exit "${status}"
