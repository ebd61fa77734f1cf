/* interrupt.c: the caller's interrupt hook and the engine's checks of it. */
#include "interrupt.h"
#include "error.h"

static hb_interrupt_fn hook = 0;
static void *hook_data = 0;
static int stopped = 0;

void hb_interrupt_set(hb_interrupt_fn fn, void *data) {
  hook = fn;
  hook_data = data;
  stopped = 0;
}

int hb_interrupt_check(void) {
  if (!hook) return HB_OK;
  if (!stopped && hook(hook_data)) stopped = 1;
  return stopped ? hb_error_set(HB_ERR_INTERRUPT, "interrupted") : HB_OK;
}
