/* model_io.h: the one model format. A versioned, line-oriented UTF-8 text:
 *
 *   histboost_model
 *   format_version=1
 *   checksum=<FNV-1a 64 of every byte after this line, 16 hex digits>
 *   <sections: config, schema, labels, meta, init_score, trees>
 *
 * Strings are percent-encoded (every byte outside [A-Za-z0-9._-] as %XX), doubles
 * are written with %.17g so they read back bit for bit. The reader checks
 * the version, the checksum, every count and index, and returns
 * HB_ERR_FORMAT with a message instead of trusting the text. The full grammar
 * is documented at the top of model_io.c and in inst/model-format.md. */
#ifndef HB_MODEL_IO_H
#define HB_MODEL_IO_H
#include <stddef.h>
#include "model.h"

#define HB_MODEL_FORMAT_VERSION 1

/* Serialize. *out is a NUL-terminated buffer from hb_malloc, *len its length
 * without the NUL. */
int hb_model_to_string(const hb_model_t *m, char **out, size_t *len);
/* Parse and validate. On failure *out is NULL and a message is recorded. */
int hb_model_from_string(const char *text, size_t len, hb_model_t **out);

#endif
