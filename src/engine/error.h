/* error.h: status codes and the engine's last-error message.
 * The engine never calls R, exit or printf: a failing function records a
 * message with hb_error_set() and returns its status; the R glue turns that
 * into a classed R condition after freeing what it owns. */
#ifndef HB_ERROR_H
#define HB_ERROR_H
#include <stddef.h>
#include <stdio.h> /* on mingw-w64 also defines __MINGW_PRINTF_FORMAT */

/* Lets the compiler check a printf-style function's format against its
 * arguments (`f` the format's position, `a` the first argument's). On
 * Windows the format is mingw-w64's C99 printf (src/Makevars.win defines
 * __USE_MINGW_ANSI_STDIO, as UCRT's printf is anyway), which knows %zu and
 * %lld, not the old msvcrt's. */
#if defined(__MINGW_PRINTF_FORMAT)
#define HB_PRINTF_FMT(f, a) __attribute__((format(__MINGW_PRINTF_FORMAT, f, a)))
#elif defined(__GNUC__)
#define HB_PRINTF_FMT(f, a) __attribute__((format(printf, f, a)))
#else
#define HB_PRINTF_FMT(f, a)
#endif

enum {
  HB_OK = 0,
  HB_ERR_NOMEM = 1,    /* an allocation failed */
  HB_ERR_INPUT = 2,    /* the caller passed data the engine cannot use */
  HB_ERR_FORMAT = 3,   /* a model text is malformed or fails its checksum */
  HB_ERR_STATE = 4,    /* an object is used out of order (e.g. no trees) */
  HB_ERR_INTERNAL = 5, /* a broken invariant: a bug in histboost */
  HB_ERR_INTERRUPT = 6 /* the caller asked the engine to stop (interrupt.h) */
};

/* Record a printf-style message for `code` and return `code`. Main thread
 * only, or a thread that captures its messages (below). */
int hb_error_set(int code, const char *fmt, ...) HB_PRINTF_FMT(2, 3);
/* Make the calling thread's messages go to buf (size bytes, emptied here)
 * instead of the process's last message; NULL: back to it. The CPU
 * learner's class workers (learner_cpu.c), whose main thread then records
 * the message of the failure it reports. */
void hb_error_capture(char *buf, size_t size);
/* The last message recorded (never NULL; "" when none). */
const char *hb_error_message(void);
/* Forget the last message. */
void hb_error_clear(void);

/* Allocation helpers that record HB_ERR_NOMEM on failure; size 0 returns a
 * valid unique pointer so callers need no special case. */
void *hb_malloc(size_t n);
void *hb_calloc(size_t count, size_t size);
void *hb_realloc(void *p, size_t n);
void hb_free(void *p);

#ifdef HB_TEST_HOOKS
/* Fault injection for the tests (test builds only): from now on, the k-th
 * call of hb_malloc / hb_calloc / hb_realloc (1-based) fails as if memory had
 * run out; k <= 0: none fails. Returns how many calls were made since the
 * previous call of this function. */
long hb_test_fail_alloc(long k);
#endif

#endif
