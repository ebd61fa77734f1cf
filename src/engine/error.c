/* error.c: the engine's last-error message and checked allocation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include "error.h"

static char hb_errbuf[1024];
/* Writers take turns: the main thread, and any thread of a class worker's
 * OpenMP team (a worker thread itself writes to its own buffer,
 * hb_error_capture; its team's threads do not). */
static atomic_flag hb_errlock = ATOMIC_FLAG_INIT;
static void lock(void) {
  while (atomic_flag_test_and_set_explicit(&hb_errlock, memory_order_acquire)) {
  }
}
static void unlock(void) { atomic_flag_clear_explicit(&hb_errlock, memory_order_release); }

/* A class worker's messages go to its own buffer (hb_error_capture). */
static _Thread_local char *capture = NULL;
static _Thread_local size_t capture_size = 0;

void hb_error_capture(char *buf, size_t size) {
  capture = buf;
  capture_size = size;
  if (buf && size) buf[0] = '\0';
}

int hb_error_set(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (capture) {
    vsnprintf(capture, capture_size, fmt, ap);
    va_end(ap);
    return code;
  }
  lock();
  vsnprintf(hb_errbuf, sizeof hb_errbuf, fmt, ap);
  unlock();
  va_end(ap);
  return code;
}

const char *hb_error_message(void) { return hb_errbuf; }

void hb_error_clear(void) {
  lock();
  hb_errbuf[0] = '\0';
  unlock();
}

#ifdef HB_TEST_HOOKS
#include <stdatomic.h>
static atomic_long alloc_calls, alloc_fail_at;
long hb_test_fail_alloc(long k) {
  long made = atomic_exchange(&alloc_calls, 0);
  atomic_store(&alloc_fail_at, k);
  return made;
}
/* 1 when this allocation is the one to fail */
static int injected(void) {
  long at = atomic_load(&alloc_fail_at);
  return atomic_fetch_add(&alloc_calls, 1) + 1 == at;
}
#else
static int injected(void) { return 0; }
#endif

void *hb_malloc(size_t n) {
  void *p = injected() ? NULL : malloc(n ? n : 1);
  if (!p) hb_error_set(HB_ERR_NOMEM, "out of memory allocating %zu bytes", n);
  return p;
}

void *hb_calloc(size_t count, size_t size) {
  void *p = injected() ? NULL : calloc(count ? count : 1, size ? size : 1);
  if (!p) hb_error_set(HB_ERR_NOMEM, "out of memory allocating %zu x %zu bytes", count, size);
  return p;
}

void *hb_realloc(void *p, size_t n) {
  void *q = injected() ? NULL : realloc(p, n ? n : 1);
  if (!q) hb_error_set(HB_ERR_NOMEM, "out of memory growing a buffer to %zu bytes", n);
  return q;
}

void hb_free(void *p) { free(p); }
