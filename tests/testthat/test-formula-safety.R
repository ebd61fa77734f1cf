# A model file is data, never code: the formula a model text carries
# (r.formula) may only name columns and use the row-wise functions listed in
# ?histboost. Edited files are made the way an attacker would: the formula is
# replaced in the text and the checksum recomputed (FNV-1a 64 in plain R,
# from inst/model-format.md), so every refusal below comes from the formula
# check, not from a damaged checksum.

# FNV-1a 64 over raw bytes, with the 64-bit state as four 16-bit limbs.
fnv1a64_hex <- function(bytes) {
  h <- c(0x2325, 0x8422, 0x9ce4, 0xcbf2)      # 0xcbf29ce484222325, low limb first
  for (b in as.integer(bytes)) {
    h[1] <- bitwXor(h[1], b)
    # times 0x100000001b3: limbs 0x01b3, 0, 0x0100, 0
    r <- c(h[1] * 0x1b3, h[2] * 0x1b3, h[3] * 0x1b3 + h[1] * 0x100, h[4] * 0x1b3 + h[2] * 0x100)
    carry <- 0
    for (k in 1:4) {
      v <- r[k] + carry
      h[k] <- v %% 65536
      carry <- v %/% 65536
    }
  }
  paste(sprintf("%04x", rev(as.integer(h))), collapse = "")
}

percent_encode <- function(s) {
  b <- charToRaw(enc2utf8(s))
  keep <- grepl("[A-Za-z0-9._-]", rawToChar(b, multiple = TRUE))
  paste0(ifelse(keep, rawToChar(b, multiple = TRUE), sprintf("%%%02X", as.integer(b))), collapse = "")
}

# The model text with its r.formula value replaced and a valid checksum.
with_formula <- function(text, formula_text) {
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  k <- match("key=r.formula", lines)
  stopifnot(!is.na(k), startsWith(lines[k + 1L], "value="))
  lines[k + 1L] <- paste0("value=", percent_encode(formula_text))
  body <- paste0(paste(lines[-(1:3)], collapse = "\n"), "\n")
  lines[3] <- paste0("checksum=", fnv1a64_hex(charToRaw(body)))
  paste0(paste(lines[1:3], collapse = "\n"), "\n", body)
}

safety_data <- function() {
  set.seed(11)
  n <- 300
  d <- data.frame(x = runif(n, 0.5, 3), a = rnorm(n), e = runif(n, 1, 2),
                  g = factor(sample(c("u", "v", "w"), n, TRUE)))
  d$`my col` <- rnorm(n)
  d$y <- log(d$x) + d$a^2 + 0.5 * d$`my col` + (d$g == "v") + log(d$e) + rnorm(n, sd = 0.2)
  d
}

fit_f <- function(f, d) hb_quiet(f, data = d, nrounds = 8L, num_leaves = 7L, min_data_in_leaf = 10L, seed = 1L)

save_text <- function(text) {
  f <- tempfile(fileext = ".hbm")
  writeBin(charToRaw(text), f)
  f
}

test_that("the R-side checksum helper agrees with the writer (the edits below are valid files)", {
  d <- safety_data()
  m <- fit_f(y ~ log(x) + a, d)
  # unchanged formula text: the recomputed checksum is the writer's own
  lines <- strsplit(m$model_text, "\n", fixed = TRUE)[[1]]
  v <- sub("^value=", "", lines[match("key=r.formula", lines) + 1L])
  expect_identical(with_formula(m$model_text, utils::URLdecode(v)), m$model_text)
})

test_that("formulas that would run code are refused at load, and nothing runs", {
  d <- safety_data()
  m <- fit_f(y ~ log(x) + a, d)
  marker <- tempfile("pwned")
  q <- function(s) gsub("MARK", marker, s, fixed = TRUE)
  bad <- c(
    system = q("~log(x) + a + system(\"touch MARK\")"),
    file.create_in_I = q("~log(x) + I(a + 0 * file.create(\"MARK\"))"),
    backquoted_function = q("~log(x) + `system`(\"touch MARK\")"),
    namespace = q("~log(x) + base::system(\"touch MARK\")"),
    namespace_of_allowed = "~base::log(x) + a",
    triple_colon = "~log(x) + stats:::offset(a)",
    anonymous_function = q("~log(x) + (function(v) { file.create(\"MARK\"); v })(a)"),
    nested_in_allowed = q("~log(x, base = 2 + 0 * file.create(\"MARK\")) + a"),
    eval_parse = q("~log(x) + eval(parse(text = \"file.create('MARK')\"))"),
    get = q("~log(x) + get(\"system\")(\"touch MARK\")"),
    do_call = q("~log(x) + do.call(\"file.create\", list(\"MARK\"))"),
    dollar = "~log(x) + d$a",
    brackets = "~log(x) + a[[1]]",
    assignment = "~log(x) + (a <- 1)",
    c_with_call = q("~cut(x, c(0, file.create(\"MARK\"), 5)) + a"),
    data_dependent_cut = "~cut(x, 3) + a",
    sum_over_rows = "~I(a - mean(a)) + x",
    dots = "~log(x) + ...",
    recycled_vector = "~log(x) + I(a + c(1, 2))"
  )
  for (k in names(bad)) {
    f <- save_text(with_formula(m$model_text, bad[[k]]))
    err <- expect_error(hb_load(f), class = "histboost_error_format", label = k)
    expect_match(conditionMessage(err), "formula", label = k)
    unlink(f)
    # the text through readRDS-like paths (the object rebuilt from its text) too
    expect_error(histboost:::.hb_model_from_text(with_formula(m$model_text, bad[[k]])),
                 class = "histboost_error_format", label = k)
  }
  expect_false(file.exists(marker))
  # the message names the refused call and why
  f <- save_text(with_formula(m$model_text, q("~log(x) + a + system(\"touch MARK\")")))
  err <- expect_error(hb_load(f), class = "histboost_error_format")
  expect_match(conditionMessage(err), "`system()`", fixed = TRUE)
  expect_match(conditionMessage(err), "never runs code", fixed = TRUE)
  f <- save_text(with_formula(m$model_text, "~cut(x, 3) + a"))
  err <- expect_error(hb_load(f), class = "histboost_error_format")
  expect_match(conditionMessage(err), "computes its breaks from the data", fixed = TRUE)
  # a second expression hidden after the formula is not a formula
  f <- save_text(with_formula(m$model_text, q("~log(x) + a; file.create(\"MARK\")")))
  expect_error(hb_load(f), class = "histboost_error_format")
  expect_false(file.exists(marker))
})

test_that("a model object whose terms were edited in R is refused before evaluation", {
  d <- safety_data()
  m <- fit_f(y ~ log(x) + a, d)
  ref <- predict(m, d)
  marker <- tempfile("pwned")
  bad <- m
  bad$terms <- stats::terms(stats::as.formula(sprintf("~log(x) + a + file.create(\"%s\")", marker)))
  expect_error(predict(bad, d), class = "histboost_error_format")
  expect_false(file.exists(marker))
  # an environment that redefines an allowed function is never used
  evil <- m
  env <- new.env()
  env$log <- function(v) {
    file.create(marker)
    v
  }
  environment(evil$terms) <- env
  expect_identical(predict(evil, d), ref)
  expect_false(file.exists(marker))
  # predvars are what model.frame() evaluates: checked too
  pv <- m
  attr(pv$terms, "predvars") <- str2lang(sprintf("list(log(x), file.create(\"%s\"))", marker))
  expect_error(predict(pv, d), class = "histboost_error_format")
  expect_false(file.exists(marker))
})

test_that("training refuses a formula a model could not carry, before evaluating it", {
  d <- safety_data()
  marker <- tempfile("pwned")
  myfun <- function(v) v * 2
  cases <- list(
    user_function = y ~ myfun(x) + a,
    side_effect = stats::as.formula(sprintf("y ~ I(x + 0 * file.create(\"%s\")) + a", marker)),
    namespace = y ~ stats::offset(x) + a,
    data_dependent = y ~ cut(x, 3) + a,
    factor_labels = y ~ factor(g, labels = c("A", "B", "C")) + a,
    recycled = y ~ pmin(a, c(0, 1)) + x
  )
  for (k in names(cases)) {
    err <- expect_error(fit_f(cases[[k]], d), class = "histboost_error_input", label = k)
    expect_match(conditionMessage(err), "^`formula` is refused: ", label = k)
  }
  expect_false(file.exists(marker))
})

test_that("legitimate formulas round-trip and match columns computed in plain R", {
  d <- safety_data()
  nd <- d[c(5, 1, 77, 200), ]
  forms <- list(
    dot = y ~ .,
    transforms = y ~ log(x) + I(a^2) + offset(log(e)),
    allowed_more = y ~ cut(x, breaks = c(-Inf, 1, 2, Inf)) + pmin(a, 1) + factor(g) + `my col` + I(pi * x),
    sets = y ~ factor(g, levels = c("w", "v", "u"), labels = c("W", "V", "U")) + I(g %in% c("u", "v")) + x,
    removed = y ~ . - e
  )
  for (k in names(forms)) {
    m <- fit_f(forms[[k]], d)
    f <- tempfile(fileext = ".hbm")
    hb_save(m, f)
    m2 <- hb_load(f)
    unlink(f)
    expect_identical(predict(m2, d), predict(m, d), label = k)
    expect_identical(predict(m2, nd), predict(m, nd), label = k)
    # a row's prediction does not depend on the other rows of newdata
    expect_identical(predict(m2, nd), predict(m2, d)[c(5, 1, 77, 200)], label = k)
  }
  # Independent reference: the same columns computed in plain R and given as
  # a data.frame (the offset as init_score) grow the same trees.
  m <- fit_f(y ~ log(x) + I(a^2) + offset(log(e)), d)
  x <- data.frame(lx = log(d$x), a2 = d$a^2)
  ref <- hb_quiet(x, d$y, init_score = log(d$e), nrounds = 8L, num_leaves = 7L,
                  min_data_in_leaf = 10L, seed = 1L)
  expect_identical(predict(hb_load({f <- tempfile(); hb_save(m, f); f}), nd),
                   predict(ref, data.frame(lx = log(nd$x), a2 = nd$a^2), init_score = log(nd$e)))
  m <- fit_f(y ~ cut(x, breaks = c(-Inf, 1, 2, Inf)) + a, d)
  ref <- hb_quiet(data.frame(cx = cut(d$x, c(-Inf, 1, 2, Inf)), a = d$a), d$y, nrounds = 8L,
                  num_leaves = 7L, min_data_in_leaf = 10L, seed = 1L)
  expect_identical(predict(m, nd), predict(ref, data.frame(cx = cut(nd$x, c(-Inf, 1, 2, Inf)), a = nd$a)))
})

test_that("a formula must get its predictors from data, and never read a factor as level codes", {
  set.seed(41)
  n <- 300
  df <- data.frame(a = runif(n), b = rnorm(n), s = sample(c("lo", "hi"), n, TRUE),
                   g = factor(sample(c("a", "b", "c"), n, TRUE)))
  df$y <- (df$s == "hi") * 5 + df$b
  fit_f <- function(f, ...) hb_quiet(f, data = df, nrounds = 5L, min_data_in_leaf = 5L, seed = 1L, ...)
  # a variable of the workspace: predict() could never find it, so training refuses it
  thr <- 0.5
  expect_input_error(fit_f(y ~ I(a > thr) + b), "uses `thr`, which is not a column of `data`.*could never predict")
  expect_input_error(fit_f(y ~ a + zz), "`data` lacks `zz`")
  zz <- rnorm(n)
  expect_input_error(fit_f(y ~ a + zz), "uses `zz`, which is not a column")
  # the response may come from anywhere, as for lm()
  yy <- df$y
  m <- fit_f(yy ~ a + b)
  expect_identical(predict(m, df), predict(fit_f(y ~ a + b), df))
  # level codes depend on the levels newdata has: one row's as.factor(s) is code 1 whatever s is
  expect_input_error(fit_f(y ~ as.integer(as.factor(s)) + b), "`as.integer\\(as.factor\\(s\\)\\)` reads a factor as its level codes")
  expect_input_error(fit_f(y ~ as.numeric(g) + b), "`as.numeric\\(g\\)` reads a factor")
  # numbers from numbers and logicals are row by row, and stay allowed
  m <- fit_f(y ~ as.numeric(s == "hi") + as.numeric(a) + b)
  p1 <- vapply(1:5, function(i) predict(m, df[i, ]), 0)
  expect_identical(p1, predict(m, df[1:5, ]))
  # a factor where training had numbers, under as.numeric(): refused at prediction too
  nd <- df[1:3, ]
  nd$a <- factor(nd$a)
  expect_input_error(predict(m, nd), "`newdata` column `a` is a factor, which `as.numeric\\(a\\)`")
  # codes of a factor whose levels the formula fixes are the same for any newdata: allowed, row by row
  for (f in list(y ~ as.numeric(cut(a, c(-Inf, 0.3, 0.6, Inf))) + b,
                 y ~ as.integer(factor(s, levels = c("lo", "hi"))) + b, y ~ as.integer(factor(s, c("lo", "hi"))) + b)) {
    mf <- fit_f(f)
    expect_identical(vapply(1:6, function(i) predict(mf, df[i, ]), 0), predict(mf, df[1:6, ]))
  }
  expect_input_error(fit_f(y ~ as.integer(factor(s)) + b), "reads a factor as its level codes")
  # ifelse() returns a factor's codes where `yes` or `no` is one
  expect_input_error(fit_f(y ~ ifelse(is.na(a), 0, g) + b), "`ifelse\\(is.na\\(a\\), 0, g\\)` reads a factor as its level codes.*as.character")
  expect_input_error(fit_f(y ~ ifelse(is.na(g), "none", g) + b), "ifelse\\(\\) returns a factor's codes")
  expect_input_error(fit_f(y ~ ifelse(b > 0, no = as.factor(s), yes = "x") + b), "reads a factor as its level codes")
  # its labels through as.character(): the same prediction whatever levels newdata's factor has
  m <- fit_f(y ~ ifelse(is.na(g), "none", as.character(g)) + b)
  nd <- droplevels(df[df$g != "a", ][1:6, ])
  expect_identical(predict(m, nd), predict(m, df[df$g != "a", ][1:6, ]))
})

test_that("a formula fit's validation sets are evaluated with its formula, as predict() evaluates newdata", {
  set.seed(43)
  df <- data.frame(a = runif(300, 0.1, 5), b = rnorm(300), g = factor(sample(c("u", "v", "w"), 300, TRUE)))
  df$y <- log(df$a) + df$b^2 + (df$g == "v") + rnorm(300, sd = 0.1)
  trn <- df[1:200, ]
  tv <- df[201:300, ]
  fit <- function(f, valid) hb_quiet(f, data = trn, nrounds = 8L, min_data_in_leaf = 5L, seed = 1L, valid = valid)
  m <- fit(y ~ log(a) + I(b^2) + g, list(t = tv))
  rm_t <- function(m, nd) sqrt(mean((predict(m, nd) - nd$y)^2))
  expect_equal(m$evaluation_log$t_rmse[8], rm_t(m, tv), tolerance = 1e-12)
  # list(x = data.frame, y =) is evaluated the same way; so is an x that has the terms as columns already
  m2 <- fit(y ~ log(a) + I(b^2) + g, list(t = list(x = tv, y = tv$y)))
  expect_identical(m2$evaluation_log, m$evaluation_log)
  vx <- data.frame(`log(a)` = log(tv$a), `I(b^2)` = tv$b^2, g = tv$g, check.names = FALSE)
  m3 <- fit(y ~ log(a) + I(b^2) + g, list(t = list(x = vx, y = tv$y)))
  expect_identical(m3$evaluation_log, m$evaluation_log)
  # an offset() becomes the set's init_score
  mo <- fit(y ~ a + b + offset(log(a)), list(t = tv))
  expect_equal(mo$evaluation_log$t_rmse[8], rm_t(mo, tv), tolerance = 1e-12)
  # an init_score given is taken as it is, in place of the offset
  mi <- fit(y ~ a + b + offset(log(a)), list(t = list(x = tv, init_score = rep(1, 100))))
  expect_equal(mi$evaluation_log$t_rmse[8], sqrt(mean((predict(mi, tv) - log(tv$a) + 1 - tv$y)^2)), tolerance = 1e-12)
  expect_input_error(fit(y ~ a + b, list(t = tv[c("a", "b")])), "`valid\\$t` lacks `y`, which the formula's response")
  expect_input_error(fit(y ~ a + b, list(tv[c("a", "y")])), "`valid\\[\\[1\\]\\]` lacks column `b`")
})

test_that("x = a formula is the formula method; a:b is an interaction; a loaded model's formula is usable", {
  set.seed(44)
  df <- data.frame(a = rnorm(100), b = rnorm(100))
  df$y <- df$a + rnorm(100)
  m1 <- hb_quiet(y ~ a + b, data = df, nrounds = 3L, seed = 1L)
  m2 <- hb_quiet(x = y ~ a + b, data = df, nrounds = 3L, seed = 1L)
  m3 <- hb_quiet(data = df, x = y ~ a + b, nrounds = 3L, seed = 1L)
  m4 <- hb_quiet(x = y ~ a + b, df, nrounds = 3L, seed = 1L)  # the data by position
  expect_identical(m2$model_text, m1$model_text)
  expect_identical(m3$model_text, m1$model_text)
  expect_identical(m4$model_text, m1$model_text)
  expect_input_error(hb_quiet(y ~ a:b, data = df), "`formula` has interaction terms")
  f <- tempfile(fileext = ".txt")
  on.exit(unlink(f), add = TRUE)
  hb_save(hb_quiet(y ~ a + log(abs(b)), data = df, nrounds = 2L), f)
  fo <- formula(hb_load(f))
  expect_identical(environment(fo), environment())
  mf <- model.frame(fo, df)
  expect_identical(mf[["log(abs(b))"]], log(abs(df$b)))
})

test_that("a formula model takes newdata as a data.frame or a list; a matrix only when the terms are its columns", {
  set.seed(42)
  df <- data.frame(a = runif(200, 1, 2), b = rnorm(200))
  df$y <- log(df$a) * 3 + df$b
  m <- hb_quiet(y ~ log(a) + b, data = df, nrounds = 5L, min_data_in_leaf = 5L)
  expect_input_error(predict(m, as.matrix(df[1:3, c("a", "b")])),
                     "`newdata` must be a data.frame.*predictors \\(`log\\(a\\)` and `b`\\) from the variables `a` and `b`")
  mx <- as.matrix(df[1:3, c("a", "b")])
  colnames(mx) <- c("log(a)", "b")  # named as the terms: still refused, not read untransformed
  expect_input_error(predict(m, mx), "must be a data.frame")
  expect_identical(predict(m, as.list(df[1:3, c("a", "b")])), predict(m, df[1:3, ]))
  plain <- hb_quiet(y ~ a + b, data = df, nrounds = 5L, min_data_in_leaf = 5L)
  expect_identical(predict(plain, as.matrix(df[1:3, c("a", "b")])), predict(plain, df[1:3, ]))
  # a column whose name needs backquotes is still a plain term
  dq <- data.frame(`my col` = df$a, b = df$b, y = df$y, check.names = FALSE)
  mq <- hb_quiet(y ~ ., data = dq, nrounds = 5L, min_data_in_leaf = 5L)
  expect_identical(predict(mq, as.matrix(dq[1:3, 1:2])), predict(mq, dq[1:3, ]))
})

test_that("the formula interface names data's columns and the response in its messages", {
  df <- data.frame(a = runif(50), d = Sys.Date() + 1:50)
  df$price <- df$a
  df$price[3] <- NA
  expect_input_error(hb_quiet(price ~ a, data = df), "^the response `price` contains 1 missing .*row 3 of `data`")
  # with subset, the row of `data` (not the position among the subset's rows)
  expect_input_error(hb_quiet(price ~ a, data = df, subset = 2:50), "first at row 3 of `data`")
  expect_input_error(hb_quiet(price ~ a, data = df, subset = a > -1, weights = rep(1, 10)), "`weights` has 10 values but `data` has 50 rows")
  df$cc <- ifelse(df$a > 0.5, "hi", "lo")
  expect_input_error(hb_quiet(cc ~ a, data = df), "use factor\\(cc\\) for classification or as.numeric\\(cc\\)")
  expect_input_error(hb_quiet(log(price) ~ a, data = df), "^the response `log\\(price\\)` contains")
  expect_input_error(hb_quiet(a ~ d, data = df), "^`data` column `d` is of class Date")
  expect_input_error(hb_quiet(a ~ I(d + 1), data = df), "^the formula's term `I\\(d \\+ 1\\)` is of class")
})

test_that("the kept formula asks newdata only for what the terms use; a column named pi is refused", {
  set.seed(43)
  df <- data.frame(a = runif(120), b = rnorm(120), id = 1:120, e = runif(120) + 1)
  df$y <- df$a + df$b
  m <- hb_quiet(y ~ . - id, data = df, nrounds = 3L, min_data_in_leaf = 5L)
  expect_identical(m$feature_names, c("a", "b", "e"))
  expect_identical(predict(m, df[c("a", "b", "e")]), predict(m, df))  # no `id` needed
  mo <- hb_quiet(y ~ a + b + offset(log(e)) - 1, data = df, nrounds = 3L, min_data_in_leaf = 5L)
  expect_identical(predict(mo, df[c("a", "b", "e")]), predict(mo, df))
  f <- tempfile(fileext = ".txt")
  hb_save(m, f)
  expect_identical(predict(hb_load(f), df[c("a", "b", "e")]), predict(m, df))
  unlink(f)
  df$pi <- 1
  expect_input_error(hb_quiet(y ~ pi + a, data = df), "uses `pi`, which is a column of `data`.*rename the column")
  expect_input_error(hb_quiet(y ~ ., data = df), "uses `pi`, which is a column")  # through `.` too
  mnp <- hb_quiet(y ~ . - pi, data = df, nrounds = 3L, min_data_in_leaf = 5L)    # left out: fine
  expect_false("pi" %in% mnp$feature_names)
  # the constant, where no column has the name, is fine
  mp <- hb_quiet(y ~ I(a * pi) + b, data = df[c("a", "b", "y")], nrounds = 3L, min_data_in_leaf = 5L)
  expect_identical(predict(mp, df[1:4, c("a", "b")]), predict(mp, df[1:4, c("a", "b", "y")]))
})
