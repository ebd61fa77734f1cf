#!/bin/sh
# tools/gpu/sanitize-part.sh TOOL I N OUT TIMEOUT: runs part I of N of
# tests/testthat/test-cuda.R (HB_CUDA_TEST_PART) under compute-sanitizer's
# TOOL, bounded by TIMEOUT seconds; the log is OUT/sanitize-tests-TOOL-I.log.
# Called by tools/gpu/check.sh sanitize-tests, several at once.
# SANITIZE_FLAGS adds options, e.g. --kernel-name-exclude regex=cub (CUB's
# sort and select kernels, used by bagging and GOSS, are NVIDIA's code and
# the slowest under racecheck).
tool=$1; i=$2; n=$3; out=$4; limit=$5
part=""; [ "${n}" -gt 1 ] && part="${i}/${n}"
small=""; [ "${tool}" = racecheck ] && small=1
t1=$(date +%s); rc=0
HB_CUDA_UNDER_SANITIZER=1 HB_CUDA_TEST_SMALL=${small} HB_CUDA_TEST_PART=${part} timeout "${limit}" \
  compute-sanitizer --tool "${tool}" --target-processes all --error-exitcode 9 ${SANITIZE_FLAGS:-} \
  Rscript tools/gpu/sanitize-tests.R > "${out}/sanitize-tests-${tool}-${i}.log" 2>&1 || rc=$?
echo "compute-sanitizer ${tool} over test-cuda.R ${part:-whole}: exit ${rc}, $(( $(date +%s) - t1 ))s"
