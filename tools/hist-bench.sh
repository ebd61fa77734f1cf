#!/bin/sh
# tools/hist-bench.sh BIN [TREE]: builds tools/bench_hist.c (the histogram
# kernel alone, timed by leaf size) against TREE's src/engine (default: this
# tree) into the program BIN, with ${CC:-cc} -O2 and OpenMP, as R builds the
# engine. Variants side by side: a copy of the tree per variant, one BIN
# each, then e.g. `BIN 2000000 28 16 30` for each (see bench_hist.c).
set -eu
bin=$1
tree=${2:-.}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
for src in "${tree}"/src/engine/*.c "${tree}"/src/cuda/cuda_stub.c; do
  ${CC:-cc} -std=c11 -O2 -fopenmp -I"${tree}/src/engine" -I"${tree}/src/cuda" -c "${src}" -o "${tmp}/$(basename "${src}" .c).o" &
done
wait
${CC:-cc} -std=c11 -O2 -fopenmp -I"${tree}/src/engine" "${here}/tools/bench_hist.c" "${tmp}"/*.o -o "${bin}" -lm
