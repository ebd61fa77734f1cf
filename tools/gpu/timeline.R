# tools/gpu/timeline.R: a split's timeline on the GPU (tools/gpu/timeline.sh).
#   Rscript tools/gpu/timeline.R train LIB ROUNDS   train run.R's Higgs shape
#     (10.5M x 28, tools/gpu/higgs-data.R, made once into /tmp/higgs.rds) with
#     the histboost in LIB, built with HB_CUDA_TIMELINE: the device prints a
#     line "TL ..." for every split of trees 10, 60, 110, ...
#   Rscript tools/gpu/timeline.R summary FILE   those lines, summarised: each
#     phase's microseconds by the smaller child's rows.
# The stamps (src/cuda/learner.cuh): 0 the partition's first block past its
# wait, 1 its last block's layout start, 2 the layout's end; 3 the
# histogram's first block past its wait, 4 its last block's end; 5 the split
# search's first block past its wait, 6 its last searching block's end, 7 the
# finish's start (the last block), 8 its end; 9, the end of the previous
# split's search, its printing included (gap_s_p: from there to this split's
# partition); 10 the partition's block 0 past its wait, 11 past its share of
# clearing the next histogram slot; 12 the finish past its first reduction;
# 13 the split search's block 0 (the smaller child's first feature) done.
# Only the full-precision shared-memory histogram kernel is stamped (a
# quantized or global-memory training shows no histogram time). The root's
# step has no partition: it counts in the other columns, and the counts n
# are of every split.
# Each line gives the tree, the leaves, the rows of the smaller and larger
# child (of the leaf this split partitions), the base time (ns: stamp 0, or
# 3 at the root) and the stamps 0-13 from it.
a <- commandArgs(TRUE)
if (a[1] == "train") {
  suppressPackageStartupMessages(library(histboost, lib.loc = a[2]))
  rounds <- as.integer(a[3])
  source("tools/gpu/higgs-data.R")
  w <- higgs_data()
  ds <- hb_dataset(w$x, factor(w$y), max_bin = 255L)
  invisible(histboost(ds, nrounds = 2L, num_leaves = 255L, device = "cuda", verbose = 0L))  # warm-up
  t <- system.time(histboost(ds, nrounds = rounds, num_leaves = 255L, min_data_in_leaf = 20L,
                             learning_rate = 0.1, seed = 1, verbose = 0L, device = "cuda"))[["elapsed"]]
  cat(sprintf("timeline build: %d rounds in %.3f s\n", rounds, t))
  quit(save = "no")
}
l <- grep("^TL ", readLines(a[2]), value = TRUE)
d <- read.table(text = l, colClasses = c("character", rep("numeric", 19)))[, -1]
names(d) <- c("tree", "nl", "small", "large", "base", paste0("s", 0:13))
for (k in paste0("s", 0:13)) d[[k]][abs(d[[k]]) > 1e12] <- NA  # not stamped
ph <- data.frame(
  partition = d$s2 - d$s0, layout = d$s2 - d$s1, gap_p_h = d$s3 - d$s2, hist = d$s4 - d$s3,
  gap_h_s = d$s5 - d$s4, search = d$s6 - d$s5, gap_ticket = d$s7 - d$s6, finish = d$s8 - d$s7,
  gap_s_p = d$s0 - d$s9, p_block0_late = d$s10 - d$s0, p_clear = d$s11 - d$s10, p_rows = d$s1 - d$s11,
  s_blk0_search = d$s13 - d$s5, f_first = d$s12 - d$s7) / 1000
ph$total <- rowSums(ph[, 1:9], na.rm = TRUE) - ph$layout
rows <- d$small
bucket <- cut(rows, c(-1, 4096, 16384, 65536, 262144, Inf), labels = c("<4k", "4k-16k", "16k-64k", "64k-256k", ">=256k"))
cat(sprintf("%d splits of %d trees\n", nrow(d), length(unique(d$tree))))
f <- function(x) sprintf("%6.1f", mean(x, na.rm = TRUE))
tab <- rbind(sapply(ph, f), do.call(rbind, lapply(split(ph, bucket), function(p) sapply(p, f))))
rownames(tab) <- c("all (mean us)", paste0(levels(bucket), " (n=", as.vector(table(bucket)), ")"))
print(noquote(tab))
cat("medians:\n")
print(noquote(sapply(ph, function(x) sprintf("%6.1f", median(x, na.rm = TRUE)))))
