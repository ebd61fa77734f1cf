# Models of several configurations as hb_save text: args lib outdir.
# Compare two libs' outdirs byte for byte (cmp).
args <- commandArgs(TRUE); lib <- args[1]; out <- args[2]; dir.create(out, showWarnings = FALSE)
src <- readLines("inst/bench/run.R")
eval(parse(text = src[grep("^zipf <- ", src)]))
eval(parse(text = src[grep("^gen_airline <- ", src):(grep("^gen_sparse <- ", src) - 1)]))
eval(parse(text = src[grep("^split_rows <- ", src):(grep("^pair_mass <- ", src) - 1)]))
RNGkind("Mersenne-Twister", "Inversion", "Rejection"); set.seed(20240304L)
f <- "/tmp/w4-200000.rds"
if (!file.exists(f)) { n <- 2e5 + 2e5; d <- gen_airline(n); s <- split_rows(2e5, 2e5, d$x, d$y); saveRDS(s, f) } else s <- readRDS(f)
library(histboost, lib.loc = lib)
x <- s$train$x; y <- factor(s$train$y)
run <- function(name, ...) {
  m <- histboost(x, y, nrounds = 30, num_leaves = 255, verbose = 0, seed = 1, ...)
  hb_save(m, file.path(out, paste0(name, ".txt")))
}
run("w4-1t", nthreads = 1L)
run("w4-2t", nthreads = 2L)
run("w4-quant-2t", nthreads = 2L, quantized = TRUE)
run("w4-quant-1t", nthreads = 1L, quantized = TRUE)
run("w4-extra-2t", nthreads = 2L, extra_trees = TRUE)
run("w4-mct8-2t", nthreads = 2L, max_cat_threshold = 8L, cat_smooth = 1)
run("w4-goss-2t", nthreads = 2L, bagging_fraction = 0.5, bagging_freq = 1L, feature_fraction = 0.7)
# small data: factors of 3..300 levels, NAs, regression, few rows per leaf
set.seed(7); n <- 3000
df <- data.frame(a = factor(sample(letters[1:3], n, TRUE)), b = factor(sample(1:12, n, TRUE)),
                 c = factor(sample(1:300, n, TRUE)), d = factor(sample(1:40, n, TRUE, prob = (1:40)^-1.2)),
                 z = rnorm(n))
df$b[sample(n, 200)] <- NA
yy <- as.numeric(df$a) + (as.integer(df$c) %% 7) / 3 + (as.integer(df$d) %% 3) + rnorm(n)
for (th in 1:2) for (q in c(FALSE, TRUE)) for (cs in c(10, 0, 1)) {
  m <- histboost(df, yy, nrounds = 20, num_leaves = 31, min_data_in_leaf = 5, cat_smooth = cs,
                 min_data_per_group = 5, nthreads = th, quantized = q, verbose = 0, seed = 3)
  hb_save(m, file.path(out, sprintf("small-%d-%d-%g.txt", th, q, cs)))
}
cat("done", length(list.files(out)), "\n")
