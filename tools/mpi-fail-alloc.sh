#!/bin/sh
# mpi-fail-alloc.sh: what a distributed training does when one process runs out of memory (issue 24).
# On 2 processes of tests/testthat/mpi-train.R, rank 1's K-th engine allocation of the training
# fails (the test hook hb_test_fail_alloc, error.h; a development checkout's build has it), for K
# spread over all the allocations rank 1 makes. Each line: K, seconds, and every rank's outcome.
# Both ranks should end with a classed error (or "ok" where the failing allocation was rank 1's
# own, after the last collective); a missing rank 0 line means rank 0 waited in a collective until
# rank 1's exit ended the job (histboost.mpi_exit_wait, 15 s in mpi-train.R).
#
#   sh tools/mpi-fail-alloc.sh [CASE] [POINTS]     CASE of mpi-cases.R (default regression_full),
#                                                   POINTS values of K (default 20)
# Needs histboost installed with MPI and test hooks, and mpirun on the PATH.
set -e
CASE=${1:-regression_full}; POINTS=${2:-20}
cd "$(dirname "$0")/../tests/testthat"
FLAGS="--oversubscribe"; [ "$(id -u)" = 0 ] && FLAGS="$FLAGS --allow-run-as-root"
OUT=$(mktemp); trap 'rm -f "$OUT" "$OUT".log*' EXIT
run() { timeout 90 mpirun $FLAGS -np 2 Rscript mpi-train.R mpi-cases.R "$CASE" "$OUT" "$1" 2>&1; }
N=$(run countalloc | sed -n 's/^allocations on rank 1: //p')
echo "case $CASE: $N engine allocations on rank 1"
ok=0; bad=0
for i in $(seq 1 "$POINTS"); do
  k=$(( (N * i + POINTS - 1) / POINTS ))
  t0=$(date +%s)
  lines=$(run "failalloc=$k" | grep '^rank' | sort)
  n=$(printf '%s\n' "$lines" | grep -c '^rank' || true)
  if [ "$n" = 2 ]; then ok=$((ok + 1)); tag=both; else bad=$((bad + 1)); tag=MISSING; fi
  echo "K=$k $(( $(date +%s) - t0 ))s $tag: $(printf '%s' "$lines" | tr '\n' '|' | cut -c1-200)"
done
echo "both ranks reported: $ok of $POINTS; a rank left waiting: $bad"
