/* fileio.c: checked writes of a new file (see fileio.h). */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno() and fsync() under -std=c11 */
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif
#include "error.h"
#include "fileio.h"

/* Record why `step` failed from errno (saved by the caller: fclose and
 * remove may change it), then return HB_ERR_INPUT. */
static int fail(const char *step, const char *path, int err) {
  return hb_error_set(HB_ERR_INPUT, "%s \"%s\" failed: %s", step, path,
                      err ? strerror(err) : "unknown error");
}

int hb_file_write_new(const char *path, const char *bytes, size_t n) {
  errno = 0;
  /* "x" (C11): fail if the path exists rather than follow or truncate it. */
  FILE *f = fopen(path, "wbx");
  if (!f) return fail("creating", path, errno);
  int err = 0;
  const char *step = NULL;
  errno = 0;
  if (n && fwrite(bytes, 1, n, f) != n) {
    err = errno;
    step = "writing";
  } else if (fflush(f) != 0 || ferror(f)) {
    /* A buffered write only fails here: a file-size limit, a full disk. */
    err = errno;
    step = "writing";
  }
#if !defined(_WIN32)
  /* The rename that follows must not reach the disk before the data does. */
  else if (fsync(fileno(f)) != 0 && errno != EINVAL && errno != ENOTSUP) {
    err = errno;
    step = "syncing";
  }
#endif
  errno = 0;
  if (fclose(f) != 0 && !step) {
    err = errno;
    step = "closing";
  }
  if (step) {
    remove(path);
    return fail(step, path, err);
  }
  return HB_OK;
}
