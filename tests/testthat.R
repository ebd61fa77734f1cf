library(testthat)
library(histboost)

test_check("histboost")
