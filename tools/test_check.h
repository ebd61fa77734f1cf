/* test_check.h: the counting check of the engine's C tests that use it:
 * CHECK(cond, printf-style message) counts a check and, when cond is false,
 * a failure, printing where and why; the test prints both counts at the end. */
#ifndef HB_TEST_CHECK_H
#define HB_TEST_CHECK_H
#include <stdio.h>

static int failures = 0, checks = 0;
#define CHECK(cond, ...)                              \
  do {                                                \
    checks++;                                         \
    if (!(cond)) {                                    \
      failures++;                                     \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                   \
      fprintf(stderr, "\n");                          \
    }                                                 \
  } while (0)

#endif
