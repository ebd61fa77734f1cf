/* fileio.c: checked writes of a new file (see fileio.h). */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno() and fsync() under -std=c11 */
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#else
#include <unistd.h>
#endif
#include "error.h"
#include "fileio.h"

/* A new file for writing, NULL (errno set) if `path` exists. */
static FILE *open_new(const char *path) {
#if defined(_WIN32)
  /* fopen's "x" is C11, but the msvcrt of older Windows toolchains rejects
   * it; _O_EXCL is the same atomic "create, fail if it exists". */
  int fd = _open(path, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY, _S_IREAD | _S_IWRITE);
  if (fd < 0) return NULL;
  FILE *f = _fdopen(fd, "wb");
  if (!f) {
    int err = errno;
    _close(fd);
    remove(path);
    errno = err;
  }
  return f;
#else
  /* "x" (C11): fail if the path exists rather than follow or truncate it. */
  return fopen(path, "wbx");
#endif
}

/* Flush the file's data to the disk (after fflush). */
static int sync_file(FILE *f) {
#if defined(_WIN32)
  return _commit(_fileno(f));
#else
  return fsync(fileno(f));
#endif
}

/* Record why `step` failed from errno (saved by the caller: fclose and
 * remove may change it), then return HB_ERR_INPUT. */
static int fail(const char *step, const char *path, int err) {
  return hb_error_set(HB_ERR_INPUT, "%s \"%s\" failed: %s", step, path,
                      err ? strerror(err) : "unknown error");
}

int hb_file_write_new(const char *path, const char *bytes, size_t n) {
  errno = 0;
  FILE *f = open_new(path);
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
  /* The rename that follows must not reach the disk before the data does. */
  else if (sync_file(f) != 0 && errno != EINVAL && errno != ENOTSUP) {
    err = errno;
    step = "syncing";
  }
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
