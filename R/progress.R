# progress.R: the progress bar of a long training: rounds done, time spent and
# an estimate of the time left, on one line of stderr redrawn in place. Shown
# in interactive sessions once a training has run for a few seconds (so short
# fits stay silent), with verbose >= 1; the option histboost.progress says
# otherwise: FALSE never, TRUE as in interactive sessions, a number of
# seconds after which to show it.

.hb_progress <- function(nrounds, verbose, shift = 0L) {
  opt <- getOption("histboost.progress")
  after <- if (is.null(opt)) {
    if (interactive()) 3 else Inf
  } else if (isTRUE(opt)) {
    3
  } else if (is.numeric(opt) && length(opt) == 1L && !is.na(opt) && opt >= 0) {
    as.numeric(opt)
  } else {
    Inf
  }
  if (verbose < 1L) after <- Inf
  now <- function() proc.time()[["elapsed"]]
  start <- now()
  shown <- FALSE
  drawn_at <- -Inf
  width <- 0L
  clear <- function() {
    if (shown) cat("\r", strrep(" ", width), "\r", sep = "", file = stderr())
    shown <<- FALSE
  }
  list(
    tick = function(iter) {
      if (!is.finite(after)) return(invisible())
      t <- now()
      spent <- t - start
      # at most five redraws a second, and the last round always
      if (spent < after || (t - drawn_at < 0.2 && iter < nrounds)) return(invisible())
      drawn_at <<- t
      left <- spent / iter * (nrounds - iter)
      bar_w <- 20L
      full <- floor(bar_w * iter / nrounds)
      line <- sprintf("[%s%s] %d/%d rounds | %s spent | %s left", strrep("=", full), strrep(" ", bar_w - full),
                      shift + iter, shift + nrounds, .hb_duration(spent),
                      if (iter < nrounds) paste0("~", .hb_duration(left)) else "0s")
      width <<- max(width, nchar(line))
      cat("\r", formatC(line, width = -width), sep = "", file = stderr())
      shown <<- TRUE
      invisible()
    },
    clear = clear,
    done = clear
  )
}

# "4.2s", "3m05s", "1h02m" for the progress line.
.hb_duration <- function(sec) {
  sec <- max(0, sec)
  if (sec < 60) return(sprintf("%.1fs", sec))
  if (sec < 3600) return(sprintf("%dm%02ds", as.integer(sec %/% 60), as.integer(floor(sec %% 60))))
  sprintf("%dh%02dm", as.integer(sec %/% 3600), as.integer((sec %% 3600) %/% 60))
}
