#!/bin/sh
# tools/gpu/check.sh [STEP ...]: on a GPU machine without R (see
# ../shared/gpu-host/README.md): install the portable R from gpu-host/,
# install histboost with its CUDA learner, then run the steps:
#   tests   the GPU tests (tests/testthat/test-cuda.R)
#   only    the tests of $ONLY_FILE whose description matches $ONLY_PATTERN
#           (tools/gpu/test-only.R)
#   mpi     the MPI tests (tests/testthat/test-mpi.R; with a GPU, its
#           one-GPU-a-process tests too)
#   suite   the whole testthat suite against the CUDA build
#   bench   Rscript inst/bench/gpu.R with $BENCH_ARGS
#   time    Rscript tools/gpu/profile.R $PROFILE_ARGS (a timed training)
#   ncu     the same under Nsight Compute: every kernel's duration, summed by kernel
#   kernels Rscript tools/gpu/kernels.R (the histogram kernel alone, by rows)
#   sanitize tools/gpu/sanitize.R under compute-sanitizer, memcheck then racecheck
#   sanitize-tests  tests/testthat/test-cuda.R under compute-sanitizer
#           (memcheck at full size; racecheck with HB_CUDA_TEST_SMALL=1;
#           the deliberate out-of-memory test is left to the oom step, as the
#           sanitizer reports its failed cudaMalloc as an API error;
#           SANITIZE_TOOLS picks the tools, SANITIZE_PARTS=n splits the file
#           into n parts, SANITIZE_ONLY and SANITIZE_JOBS pick which parts
#           and how many at once, SANITIZE_TIMEOUT bounds each)
#   oom     tools/gpu/oom.R: out of device memory beside tools/gpu/hog
# Logs go to $OUT when set (the device tool's output folder). Run from the
# repository root; gpu-host/ holds a copy of ../shared/gpu-host.
set -eu
out=${OUT:-/tmp/hb-gpu}
mkdir -p "${out}"
sh gpu-host/setup-r.sh gpu-host/r-4.2.2-bundle.txz > "${out}/setup.log" 2>&1 || { cat "${out}/setup.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv > "${out}/gpu.txt" 2>&1 || true
cat "${out}/gpu.txt"
MAKEFLAGS=-j$(nproc)
HISTBOOST_CUDA_ARCHS=${HISTBOOST_CUDA_ARCHS:-90}
export MAKEFLAGS HISTBOOST_CUDA_ARCHS
t0=$(date +%s)
if ! R CMD INSTALL --preclean . > "${out}/install.log" 2>&1; then
  grep -E "error|Error" "${out}/install.log" | head -40
  tail -20 "${out}/install.log"
  exit 1
fi
grep "histboost: OpenMP" "${out}/install.log"
echo "install: $(( $(date +%s) - t0 ))s"
Rscript -e 'i <- histboost::hb_device_info(); cat(i$status, "\n")'
for step in "$@"; do
  t0=$(date +%s)
  case "${step}" in
    tests)
      Rscript -e 'options(warn = 1); r <- testthat::test_file("tests/testthat/test-cuda.R", package = "histboost", load_package = "installed", reporter = "summary"); d <- as.data.frame(r); cat(sprintf("cuda tests: %d passed, %d failed, %d skipped\n", sum(d$passed), sum(d$failed) + sum(d$error), sum(d$skipped)))' 2>&1 | tee "${out}/tests.log" | tail -60 ;;
    only)
      Rscript tools/gpu/test-only.R "${ONLY_FILE}" "${ONLY_PATTERN}" 2>&1 | tee -a "${out}/only.log" | tail -40 || true ;;
    mpi)
      Rscript -e 'options(warn = 1); r <- testthat::test_file("tests/testthat/test-mpi.R", package = "histboost", load_package = "installed", reporter = "summary"); d <- as.data.frame(r); cat(sprintf("mpi tests: %d passed, %d failed, %d skipped\n", sum(d$passed), sum(d$failed) + sum(d$error), sum(d$skipped)))' 2>&1 | tee "${out}/mpi.log" | tail -60 ;;
    suite)
      HISTBOOST_NUM_THREADS=2 Rscript tools/run-tests.R > "${out}/suite.log" 2>&1 || true
      grep -E "Failing|^  |histboost tests" "${out}/suite.log" | tail -30 ;;
    bench)
      Rscript inst/bench/gpu.R ${BENCH_ARGS:-} 2>&1 | tee "${out}/bench.log" | tail -40 ;;
    time)
      Rscript tools/gpu/profile.R ${PROFILE_ARGS:-} 2>&1 | tee -a "${out}/time.log" ;;
    kernels)
      Rscript tools/gpu/kernels.R 2>&1 | tee "${out}/kernels.log" ;;
    ncu-detail)
      # a window of mid-tree launches at the GPU's own clocks: durations and
      # where the warps stall
      ncu --target-processes all --clock-control none --cache-control none --launch-skip ${NCU_SKIP:-600} \
        --launch-count ${NCU_COUNT:-12} --section SpeedOfLight --section WarpStateStats --section LaunchStats \
        --section Occupancy Rscript tools/gpu/profile.R ${NCU_ARGS:-2000000 3} > "${out}/ncu-detail.log" 2>&1 || true
      grep -E "^  k_|Duration|Stall|Warp Cycles Per|Achieved Occupancy|Registers|Block Size|Grid Size|Memory Throughput|Compute \(SM\)" \
        "${out}/ncu-detail.log" | head -150 ;;
    sanitize)
      for tool in memcheck racecheck; do
        rc=0
        compute-sanitizer --tool "${tool}" --target-processes all --error-exitcode 9 \
          Rscript tools/gpu/sanitize.R > "${out}/sanitize-${tool}.log" 2>&1 || rc=$?
        echo "compute-sanitizer ${tool}: exit ${rc}"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|sanitize:|Error" "${out}/sanitize-${tool}.log" | tail -5
      done ;;
    sanitize-tests)
      # SANITIZE_PARTS=n splits the file into n parts (HB_CUDA_TEST_PART: the
      # GPU tests whose number is i modulo n; with n = 25 each part is one
      # test), SANITIZE_ONLY="i j ..." runs only those parts, SANITIZE_JOBS=k
      # runs k of them at once (default: all), each under the sanitizer
      # (tools/gpu/sanitize-part.sh) and bounded by SANITIZE_TIMEOUT seconds.
      # racecheck is slow, and the parts share the card.
      parts=${SANITIZE_PARTS:-1}
      only=${SANITIZE_ONLY:-$(seq 1 "${parts}")}
      for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
        echo ${only} | tr ' ' '\n' | xargs -P "${SANITIZE_JOBS:-${parts}}" -I{} \
          sh tools/gpu/sanitize-part.sh "${tool}" {} "${parts}" "${out}" "${SANITIZE_TIMEOUT:-280}"
        for i in ${only}; do
          echo "-- ${tool} part ${i}:"
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|under sanitizer|Error" "${out}/sanitize-tests-${tool}-${i}.log" | tail -5
        done
      done ;;
    oom)
      nvcc -O2 -o tools/gpu/hog tools/gpu/hog.cu && Rscript tools/gpu/oom.R 2>&1 | tee "${out}/oom.log" | tail -8 ;;
    ncu)
      ncu --target-processes all --metrics gpu__time_duration.sum --print-summary per-kernel \
        Rscript tools/gpu/profile.R ${NCU_ARGS:-2000000 3} > "${out}/ncu.log" 2>&1 || true
      tail -60 "${out}/ncu.log" ;;
    *) echo "unknown step ${step}"; exit 2 ;;
  esac
  echo "${step}: $(( $(date +%s) - t0 ))s"
done
