#!/bin/sh
# tools/cuda-compile.sh: compile every src/cuda/*.cu for sm_90 without a
# GPU, to catch compile errors before spending device time. Needs an nvcc:
# on Debian 12, as root, enable the non-free component in
# /etc/apt/sources.list.d/debian.sources and `apt-get install
# nvidia-cuda-toolkit` (CUDA 11.8). Its nvcc does not take Debian 12's
# gcc 12, so clang++-14 is the host compiler; with it, libstdc++ 12's
# <map> does not parse in C++17 inside thrust, so gradient.cu (thrust/cub)
# is compiled as C++14 here. The device's own build (CUDA 13, gcc) stays
# the real test: tools/gpu/check.sh. Run from the repository root.
set -eu
NVCC=${NVCC:-nvcc}
HOSTCXX=${HOSTCXX:-clang++-14}
out=$(mktemp -d)
trap 'rm -rf "${out}"' EXIT
fail=0
for f in src/cuda/*.cu; do
  b=$(basename "${f}" .cu)
  std=c++17
  [ "${b}" = gradient ] && std=c++14
  if ! "${NVCC}" -ccbin "${HOSTCXX}" -O0 -std=${std} -fmad=false -Xcompiler -fPIC -DHB_WITH_CUDA \
      -gencode arch=compute_90,code=sm_90 -Isrc/engine -Isrc -c "${f}" -o "${out}/${b}.o" > "${out}/${b}.log" 2>&1; then
    echo "FAILED ${f}"
    grep -E "error|warning" "${out}/${b}.log" | head -20
    fail=1
  else
    echo "ok ${f}"
  fi
done
exit ${fail}
