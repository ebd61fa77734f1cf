#!/bin/sh
# tools/gpu/variants.sh SPEC ...: on a GPU machine (see check.sh), build
# variants of the working tree side by side and time each with
# tools/gpu/ab.R, in one session, so that their times compare. A SPEC is
#   NAME                  the working tree as it is
#   NAME:FILE:SED         the working tree with `sed -i SED FILE` applied
#   NAME:DIR/             the working tree with the files of DIR copied over
#                         src/cuda/ (e.g. the previous commit's, saved with
#                         git show before the run: the device has no git)
# e.g. tools/gpu/variants.sh new old:gpu-host/old/ \
#        'fast16:src/cuda/partition.cu:s/kFastPer = 8;/kFastPer = 16;/'
# $ROUNDS (default 500) rounds; logs in $OUT.
set -eu
out=${OUT:-/tmp/hb-gpu}
mkdir -p "${out}"
[ -x /usr/local/bin/Rscript ] || sh gpu-host/setup-r.sh gpu-host/r-4.2.2-bundle.txz > "${out}/setup.log" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
MAKEFLAGS=-j4
HISTBOOST_CUDA_ARCHS=${HISTBOOST_CUDA_ARCHS:-90}
export MAKEFLAGS HISTBOOST_CUDA_ARCHS
. tools/gpu/build-variants.sh
build_variants "$@"
for name in ${names}; do Rscript tools/gpu/ab.R "/tmp/lib-${name}" "${name}" "${ROUNDS:-500}" 2>&1; done
