#!/bin/sh
# tools/gpu/cpu-variants.sh SPEC ...: on the GPU machine's CPUs (see
# check.sh), build variants of the working tree without CUDA, side by side,
# and time each with tools/gpu/cpu-ab.R at the thread counts $THREADS
# (default "16 8 2"), $REPS times (default 2), the builds alternating within
# a thread count, and lightgbm beside them where gpu-host/ has it (not
# with PEERS=no). A SPEC is
#   NAME                  the working tree as it is
#   NAME:FILE:SED         the working tree with `sed -i SED FILE` applied
# e.g. tools/gpu/cpu-variants.sh base \
#        'p4k:src/engine/hist.h:s/HB_HIST_PART_ROWS 16384/HB_HIST_PART_ROWS 4096/'
# $ROUNDS (default 50) rounds, $ROWS (default 2000000) rows; $ENV_name adds
# environment settings to variant NAME's runs (e.g. ENV_base="OMP_WAIT_POLICY=active").
set -eu
out=${OUT:-/tmp/hb-gpu}
mkdir -p "${out}"
[ -x /usr/local/bin/Rscript ] || sh gpu-host/setup-r.sh gpu-host/r-4.2.2-bundle.txz > "${out}/setup.log" 2>&1
peers=""
if [ "${PEERS:-yes}" != no ] && [ -f gpu-host/r-peers-lightgbm.txz ]; then
  mkdir -p /opt/r-peers && tar xJf gpu-host/r-peers-lightgbm.txz -C /opt/r-peers && peers=/opt/r-peers/peerlib
fi
HISTBOOST_CUDA=no
MAKEFLAGS=-j4
export HISTBOOST_CUDA MAKEFLAGS
. tools/gpu/build-variants.sh
build_variants "$@"
Rscript tools/gpu/cpu-ab.R --data data 1 1 "${ROWS:-2000000}"  # the data, made once
for t in ${THREADS:-16 8 2}; do
  rep=1
  while [ "${rep}" -le "${REPS:-2}" ]; do
    for name in ${names}; do
      eval "extra=\${ENV_${name}:-}"
      env ${extra} Rscript tools/gpu/cpu-ab.R "/tmp/lib-${name}" "${name}" "${t}" "${ROUNDS:-50}" "${ROWS:-2000000}" 2>&1 |
        tee -a "${out}/cpu-variants.log"
    done
    if [ -n "${peers}" ]; then
      R_LIBS=${peers} Rscript tools/gpu/cpu-ab.R lightgbm lightgbm "${t}" "${ROUNDS:-50}" "${ROWS:-2000000}" 2>&1 |
        tee -a "${out}/cpu-variants.log"
    fi
    rep=$((rep + 1))
  done
done
