#!/bin/sh
# tools/gpu/timeline.sh: on a GPU machine (see check.sh): the working tree
# built with HB_CUDA_TIMELINE (src/cuda/learner.cuh) into /tmp/lib-tl, a
# training of run.R's Higgs shape ($ROUNDS rounds, default 120) printing
# every split's stamps for some trees, and their summary by phase
# (tools/gpu/timeline.R); the working tree as it is (/tmp/lib-base) timed
# the same way first. Logs in $OUT.
set -eu
out=${OUT:-/tmp/hb-gpu}
mkdir -p "${out}"
[ -x /usr/local/bin/Rscript ] || sh gpu-host/setup-r.sh gpu-host/r-4.2.2-bundle.txz > "${out}/setup.log" 2>&1
MAKEFLAGS=-j8
HISTBOOST_CUDA_ARCHS=${HISTBOOST_CUDA_ARCHS:-90}
export MAKEFLAGS HISTBOOST_CUDA_ARCHS
. tools/gpu/build-variants.sh
build_variants base 'tl:src/cuda/learner.cuh:s|^// #define HB_CUDA_TIMELINE$|#define HB_CUDA_TIMELINE|'
grep -q "^#define HB_CUDA_TIMELINE" /tmp/v-tl/src/cuda/learner.cuh
for v in base tl; do
  [ -d "/tmp/lib-${v}/histboost" ] || { tail -20 "${out}/install-${v}.log"; exit 1; }
done
Rscript tools/gpu/timeline.R train /tmp/lib-base "${ROUNDS:-120}" 2>&1 | sed 's/timeline build/plain build/' | tee "${out}/timeline-base.log"
Rscript tools/gpu/timeline.R train /tmp/lib-tl "${ROUNDS:-120}" > "${out}/timeline-raw.log" 2>&1 || tail -20 "${out}/timeline-raw.log"
grep "timeline build" "${out}/timeline-raw.log" || true
Rscript tools/gpu/timeline.R summary "${out}/timeline-raw.log" | tee "${out}/timeline.txt"
