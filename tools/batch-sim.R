# tools/batch-sim.R [ROWS] [ROUNDS]: how many steps a tree of 255 leaves
# would take if each step split several leaves at once (issue 25's GPU
# learner: each split pays about 10 us of fixed cost, gpu-split-timeline-
# 2026-12-02-h200.md; issue 23's CPU learner at many threads).
#
# Leaf-wise growth splits the best pending leaf, one at a time. A batched
# grower instead splits, in one step, the best leaf x and up to B - 1 of the
# next best pending leaves that no earlier step has split (speculatively:
# only among the `remaining budget` best), then replays the one-at-a-time
# order over the gains it now knows: a leaf already split is taken as it
# comes; the first leaf that is not ends the replay and starts the next
# step. The tree is the one-at-a-time tree by construction; splits that the
# replay never reaches before the budget runs out are wasted work.
#
# The gains come from a histboost model grown to 4,096 leaves: leaf-wise
# order makes its first 254 splits the 255-leaf tree's, and its later
# splits give the gains of the leaves that tree left pending. The script
# checks that the replay commits exactly those 254 splits. Data:
# inst/bench/higgs.R's shape (28 features), ROWS rows (default 300,000).
suppressPackageStartupMessages(library(histboost))
source("inst/bench/higgs.R")
a <- commandArgs(TRUE)
rows <- if (length(a) >= 1) as.numeric(a[1]) else 3e5
rounds <- if (length(a) >= 2) as.integer(a[2]) else 6L
d <- make_higgs(rows, 1)
fit <- histboost(d$x, as.integer(d$y == "s"), objective = "binary", nrounds = rounds, num_leaves = 4096,
                 min_data_in_leaf = 20, learning_rate = 0.1, verbose = 0, seed = 1)
trees <- hb_trees(fit)

# One tree: steps, wasted splits, whether the replay made the 255-leaf tree, mean leaves a step.
simulate <- function(t, S = 254L, B = Inf) {
  nodes <- t[!t$is_leaf, ]
  gain <- stats::setNames(nodes$gain, nodes$id)
  kids <- stats::setNames(Map(c, nodes$left, nodes$right), nodes$id)
  g <- function(v) ifelse(v %in% names(gain), gain[v], -Inf)  # a leaf of the big tree: never split
  V <- "N0"; P <- character(0); made <- character(0); steps <- 0L; sizes <- integer(0)
  while (length(made) < S) {
    gv <- g(V)
    if (!any(is.finite(gv))) break
    x <- V[which.max(gv)]  # first of equal gains: the lower id, as the growers
    if (x %in% P) {        # split already: commit it
      V <- c(setdiff(V, x), kids[[x]])
      P <- setdiff(P, x)
      made <- c(made, x)
      next
    }
    rem <- S - length(made)
    rk <- rank(-gv, ties.method = "first")
    cand <- V[!(V %in% P) & is.finite(gv) & rk <= rem]
    step <- utils::head(unique(c(x, cand[order(-g(cand))])), B)
    P <- c(P, step)
    steps <- steps + 1L
    sizes <- c(sizes, length(step))
  }
  c(steps = steps, wasted = length(P), same = setequal(made, paste0("N", 0:(S - 1L))), per_step = mean(sizes))
}

cat(sprintf("%g rows, %d trees of 255 leaves (from 4,096-leaf trees)\n", rows, rounds))
for (B in c(1, 2, 4, 8, 16, Inf)) {
  r <- t(sapply(split(trees, trees$tree), simulate, B = B))
  cat(sprintf("B %4s: steps a tree %6.1f, wasted splits a tree %5.1f, leaves a step %4.2f, replay = one at a time: %s\n",
              format(B), mean(r[, "steps"]), mean(r[, "wasted"]), mean(r[, "per_step"]), all(r[, "same"] == 1)))
}
