# tools/gpu/oom.R (tools/gpu/check.sh oom): with tools/gpu/hog holding all but
# 256 MB of the GPU, a GPU training that needs more is a classed histboost
# error that names the memory, R keeps running, nothing leaks on the device;
# once the hog has gone, the same training works and equals a fresh one.
library(histboost)
set.seed(1)
n <- 1e7
x <- matrix(runif(n * 28), n, 28)
y <- x[, 1] * 2 + rnorm(n)
d <- hb_dataset(x, y)
free0 <- hb_device_info()$free_memory
hog <- pipe("tools/gpu/hog 256", "w")   # its stdout goes to ours
Sys.sleep(5)
cat("free with the hog:", round(hb_device_info()$free_memory / 2^20), "MB\n")
e <- tryCatch(histboost(d, nrounds = 5L, num_leaves = 63L, device = "cuda", verbose = 0L), error = function(e) e)
cat("class:", paste(class(e), collapse = " "), "\nmessage:", conditionMessage(e), "\n")
ok1 <- inherits(e, "histboost_error") && grepl("memory", conditionMessage(e))
close(hog)
Sys.sleep(3)
fit <- histboost(d, nrounds = 5L, num_leaves = 63L, device = "cuda", verbose = 0L, seed = 1)
ref <- histboost(d, nrounds = 5L, num_leaves = 63L, device = "cuda", verbose = 0L, seed = 1)
ok2 <- identical(predict(fit, x[1:1000, ]), predict(ref, x[1:1000, ]))
free1 <- hb_device_info()$free_memory
cat(sprintf("oom: classed error %s, next training works %s, free memory before %.0f MB after %.0f MB\n", ok1, ok2,
            free0 / 2^20, free1 / 2^20))
