# tools/gpu/higgs-data.R: higgs_data(), inst/bench/run.R's Higgs shape
# (gen_higgs(10500000), seed 20261122: 10.5M rows x 28 features and a binary
# label), made once into /tmp/higgs.rds so that every build and every tool
# times the same rows. Sourced by tools/gpu/ab.R and tools/gpu/timeline.R,
# run from the repository root.
higgs_data <- function() {
  if (!file.exists("/tmp/higgs.rds")) {
    source("inst/bench/run.R")  # gen_higgs()
    set.seed(20261122)
    saveRDS(gen_higgs(10500000), "/tmp/higgs.rds", compress = FALSE)
  }
  readRDS("/tmp/higgs.rds")
}
