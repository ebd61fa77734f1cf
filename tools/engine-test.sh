#!/bin/sh
# engine-test.sh OUTDIR: compiles every src/engine/*.c (and the CUDA stub the
# booster links against: these tests never need a GPU) once into a static
# library in OUTDIR (so a test pulls in only the objects it uses), links
# each tools/test_*.c against it and runs it (under $RUNNER if set) from the
# repository root. Exits non-zero if anything fails to compile or any test
# fails. Called by tools/Makefile, which sets CC, CFLAGS, LDLIBS and RUNNER.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
out=$1
case "${out}" in /*) ;; *) out="${here}/${out}" ;; esac
CC=${CC:-gcc}
CFLAGS=${CFLAGS:-"-std=c11 -Wall -Wextra -Werror -g -O1 -fopenmp"}
LDLIBS=${LDLIBS:--lm}
RUNNER=${RUNNER:-}

cd "${root}"

tests=
for t in tools/test_*.c; do
  [ -f "${t}" ] && tests="${tests} ${t}"
done
if [ -z "${tests}" ]; then
  echo "engine-test: no tools/test_*.c files yet: nothing to build or run"
  exit 0
fi

mkdir -p "${out}/engine"
rm -f "${out}"/engine/*.o "${out}/libhbengine.a"
AR=${AR:-ar}

objs=
for src in src/engine/*.c src/cuda/cuda_stub.c; do
  [ -f "${src}" ] || continue
  obj="${out}/engine/$(basename "${src}" .c).o"
  echo "CC ${src}"
  # shellcheck disable=SC2086
  ${CC} ${CFLAGS} -Isrc/engine -Isrc/cuda -c "${src}" -o "${obj}"
  objs="${objs} ${obj}"
done
lib="${out}/libhbengine.a"
# shellcheck disable=SC2086
${AR} rcs "${lib}" ${objs}

pass=0
fail=0
failed=
for t in ${tests}; do
  name=$(basename "${t}" .c)
  exe="${out}/${name}"
  echo "CC ${t}"
  # shellcheck disable=SC2086
  ${CC} ${CFLAGS} -Isrc/engine "${t}" "${lib}" -o "${exe}" ${LDLIBS}
  echo "RUN ${name}"
  # shellcheck disable=SC2086
  if ${RUNNER} "${exe}"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    failed="${failed} ${name}"
    echo "FAILED: ${name}"
  fi
done

echo "engine tests: ${pass} passed, ${fail} failed"
if [ "${fail}" -ne 0 ]; then
  echo "failing:${failed}"
  exit 1
fi
exit 0
