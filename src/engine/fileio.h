/* fileio.h: writing a file so that a failure is never silent. Every write,
 * the flush, the sync to disk (where the system has one) and the close are
 * checked; the caller renames the finished file over its target, so that a
 * full disk or a file-size limit leaves either the whole new file or the old
 * one, never a truncated mix. */
#ifndef HB_FILEIO_H
#define HB_FILEIO_H
#include <stddef.h>

/* Create `path` (which must not exist yet: opened exclusively, so a file or
 * link someone else placed there is never written through), write the n
 * bytes, flush, sync and close it. HB_OK, or HB_ERR_INPUT with the system's
 * reason recorded; on failure the partial file is removed. */
int hb_file_write_new(const char *path, const char *bytes, size_t n);

#endif
