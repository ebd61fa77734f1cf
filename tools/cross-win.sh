#!/bin/sh
# cross-win.sh: builds histboost's C code for 64-bit Windows with Debian's
# mingw-w64 cross compiler, so nothing POSIX-only creeps into the package
# (Windows users build it with Rtools; src/Makevars.win). Nothing is run.
#   1. every src/engine/*.c and src/cuda/cuda_stub.c, with and without
#      OpenMP, under -std=c11 -Wall -Wextra -Wshadow -pedantic -Werror, then
#      linked into a DLL with --no-undefined: the engine needs only the C
#      library and, with OpenMP, libgomp;
#   2. the R glue (src/*.c) against R's headers (those of the R running this
#      script: R's API is the same on Windows), -Wall -Wextra -Werror;
#   3. everything linked into histboost.dll against an import library made
#      from the symbols libR.so exports (skipped when R has no libR.so):
#      an undefined symbol that is neither R's nor Windows' fails the link.
# The flags follow src/Makevars.win (-D__USE_MINGW_ANSI_STDIO=1: C99 printf).
# Objects go to tools/build/win. POSIX sh.
#   MINGW_CC   the cross compiler (default x86_64-w64-mingw32-gcc-posix, the
#              thread model Rtools uses, else x86_64-w64-mingw32-gcc)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "${here}/.." && pwd)
cd "${root}"

CC=${MINGW_CC:-}
if [ -z "${CC}" ]; then
  for c in x86_64-w64-mingw32-gcc-posix x86_64-w64-mingw32-gcc; do
    if command -v "${c}" >/dev/null 2>&1; then CC=${c}; break; fi
  done
fi
if [ -z "${CC}" ] || ! command -v "${CC}" >/dev/null 2>&1; then
  echo "cross-win.sh: no mingw-w64 cross compiler (apt-get install gcc-mingw-w64-x86-64)" >&2
  exit 1
fi
DLLTOOL=${DLLTOOL:-x86_64-w64-mingw32-dlltool}

out="${root}/tools/build/win"
rm -rf "${out}"
mkdir -p "${out}/omp" "${out}/noomp" "${out}/glue"

DEFS="-D__USE_MINGW_ANSI_STDIO=1"
STRICT="-std=c11 -Wall -Wextra -Wshadow -pedantic -Werror -O2 -ffp-contract=off"

# 1. The engine, with and without OpenMP.
for mode in omp noomp; do
  omp=
  [ "${mode}" = omp ] && omp=-fopenmp
  objs=
  for src in src/engine/*.c src/cuda/cuda_stub.c; do
    obj="${out}/${mode}/$(basename "${src}" .c).o"
    # shellcheck disable=SC2086
    ${CC} ${STRICT} ${DEFS} ${omp} -Isrc/engine -Isrc/cuda -c "${src}" -o "${obj}"
    objs="${objs} ${obj}"
  done
  # shellcheck disable=SC2086
  ${CC} -shared -o "${out}/${mode}/engine.dll" ${objs} ${omp} -Wl,--no-undefined
  echo "cross-win.sh: engine ($(echo ${objs} | wc -w) files, ${mode}) compiles and links for Windows"
done

# 2. The R glue against R's headers (-isystem: R's own headers are not ours to warn about).
rinc=$(Rscript -e 'cat(R.home("include"))')
glue=
for src in src/*.c; do
  obj="${out}/glue/$(basename "${src}" .c).o"
  # shellcheck disable=SC2086
  ${CC} -std=c11 -Wall -Wextra -Werror -O2 ${DEFS} -fopenmp -isystem "${rinc}" -Isrc -Isrc/engine -Isrc/cuda \
    -c "${src}" -o "${obj}"
  glue="${glue} ${obj}"
done
echo "cross-win.sh: R glue ($(echo ${glue} | wc -w) files) compiles for Windows"

# 3. The whole DLL against R's exported symbols.
libr="$(Rscript -e 'cat(R.home("lib"))')/libR.so"
if [ -f "${libr}" ] && command -v "${DLLTOOL}" >/dev/null 2>&1; then
  { echo "LIBRARY R.dll"; echo "EXPORTS"; nm -D --defined-only "${libr}" | awk 'NF >= 3 { print $3 }'; } > "${out}/R.def"
  "${DLLTOOL}" -d "${out}/R.def" -D R.dll -l "${out}/libR.dll.a"
  # shellcheck disable=SC2086
  ${CC} -shared -o "${out}/histboost.dll" ${glue} "${out}"/omp/*.o -fopenmp -L"${out}" -lR.dll -Wl,--no-undefined
  echo "cross-win.sh: histboost.dll links (R's API and Windows' libraries only)"
else
  echo "cross-win.sh: no ${libr} or ${DLLTOOL}: the glue was compiled, not linked"
fi
