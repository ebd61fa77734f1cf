#!/bin/sh
# ab-threads.sh: training time of two builds of histboost side by side at several thread counts
# (issue 23), on Higgs-shaped data (inst/bench/higgs.R), with the md5 of every model text (the same
# seed must give one model at every thread count, and both builds the same one unless a change is
# meant to move it).
#
#   sh tools/ab-threads.sh LIB_A LIB_B [THREADS] [ROWS] [ROUNDS] [REPS]
#     THREADS  comma-separated thread counts, default 2,4,8,16
#     ROWS     default 2000000;  ROUNDS default 50;  REPS default 2
#   AB_PARAMS  more arguments of histboost() for both builds, as R code, e.g.
#              AB_PARAMS='quantized = TRUE, grad_bits = 4L'
#
# e.g. main against a branch, each installed into its own library:
#   git archive c873ae2 | tar -x -C /tmp/hb-a && R CMD INSTALL -l /tmp/lib-a /tmp/hb-a
#   git archive split   | tar -x -C /tmp/hb-b && R CMD INSTALL -l /tmp/lib-b /tmp/hb-b
#   sh tools/ab-threads.sh /tmp/lib-a /tmp/lib-b
# The data are made once (uncompressed .rds in a temporary directory). Every run is its own Rscript
# process (two builds of one package cannot share a session): it reads the data, bins them
# (hb_dataset, the most threads asked for; not timed) and times histboost() alone: binary, 255
# leaves, learning rate 0.1, min_data_in_leaf 20, seed 1. Builds alternate within a thread count,
# REPS times over; the table shows each build's median and B / A. At the defaults about 3 minutes
# on a 16-core host (2M rows: 16 runs of 4-15 s, plus 3 s a run to read and bin).
set -e
if [ $# -lt 2 ]; then
  sed -n '2,23p' "$0"
  exit 2
fi
LIB_A=$1; LIB_B=$2; THREADS=${3:-2,4,8,16}; ROWS=${4:-2000000}; ROUNDS=${5:-50}; REPS=${6:-2}
HERE=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ab-threads.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
RSCRIPT="$(R RHOME)/bin/Rscript"

cat > "$TMP/make.R" <<'EOF'
a <- commandArgs(TRUE)
source(file.path(a[1], "inst", "bench", "higgs.R"))
h <- make_higgs(as.numeric(a[2]), 1)
saveRDS(list(x = h$x, y = as.integer(h$y == "s")), a[3], compress = FALSE)
EOF
cat > "$TMP/run.R" <<'EOF'
a <- commandArgs(TRUE)  # lib data threads rounds bin_threads
suppressPackageStartupMessages(library(histboost, lib.loc = a[1]))
d <- readRDS(a[2])
ds <- hb_dataset(d$x, d$y, max_bin = 255L, nthreads = as.integer(a[5]))
rm(d); invisible(gc())
extra <- eval(parse(text = paste0("list(", Sys.getenv("AB_PARAMS"), ")")))
args <- c(list(ds, objective = "binary", nrounds = as.integer(a[4]), num_leaves = 255L, learning_rate = 0.1,
               min_data_in_leaf = 20L, min_sum_hessian_in_leaf = 1e-3, nthreads = as.integer(a[3]), verbose = 0,
               seed = 1L), extra)
t <- system.time(m <- do.call(histboost, args))[["elapsed"]]
f <- tempfile(); hb_save(m, f)
cat(sprintf("%.3f %s\n", t, unname(tools::md5sum(f))))
EOF

echo "CPU: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //') ($(grep -c '^processor' /proc/cpuinfo) logical CPUs)"
echo "A: $LIB_A  B: $LIB_B  rows $ROWS  rounds $ROUNDS  threads $THREADS  reps $REPS  ${AB_PARAMS:+params: $AB_PARAMS}"
"$RSCRIPT" "$TMP/make.R" "$HERE" "$ROWS" "$TMP/data.rds"
MAXT=$(echo "$THREADS" | tr ',' '\n' | sort -n | tail -1)
: > "$TMP/times"
rep=1
while [ "$rep" -le "$REPS" ]; do
  for t in $(echo "$THREADS" | tr ',' ' '); do
    for b in A B; do
      if [ "$b" = A ]; then lib=$LIB_A; else lib=$LIB_B; fi
      out=$("$RSCRIPT" "$TMP/run.R" "$lib" "$TMP/data.rds" "$t" "$ROUNDS" "$MAXT")
      echo "$b $t $rep $out" | tee -a "$TMP/times"
    done
  done
  rep=$((rep + 1))
done

"$RSCRIPT" -e '
r <- read.table(commandArgs(TRUE)[1], col.names = c("build", "threads", "rep", "seconds", "md5"))
cat("\nthreads  A median s  B median s  B / A   A md5     B md5\n")
for (t in unique(r$threads)) {
  a <- r[r$build == "A" & r$threads == t, ]; b <- r[r$build == "B" & r$threads == t, ]
  ma <- median(a$seconds); mb <- median(b$seconds)
  cat(sprintf("%7d  %10.2f  %10.2f  %5.3f   %s  %s\n", t, ma, mb, mb / ma,
              paste(unique(substr(a$md5, 1, 8)), collapse = ","), paste(unique(substr(b$md5, 1, 8)), collapse = ",")))
}
one <- function(x) length(unique(x)) == 1L
cat(sprintf("\nmodels: A one model at every thread count: %s; B: %s; A and B the same model: %s\n",
            one(r$md5[r$build == "A"]), one(r$md5[r$build == "B"]), one(r$md5)))
' "$TMP/times"
