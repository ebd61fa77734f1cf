/* interrupt.c: the caller's interrupt hook and the engine's checks of it. */
#include <stdatomic.h>
#include "interrupt.h"
#include "error.h"

static hb_interrupt_fn hook = 0;
static void *hook_data = 0;
static atomic_int stopped = 0;
static _Thread_local int worker = 0;

void hb_interrupt_set(hb_interrupt_fn fn, void *data) {
  hook = fn;
  hook_data = data;
  atomic_store(&stopped, 0);
}

void hb_interrupt_worker(void) { worker = 1; }

int hb_interrupt_check(void) {
  if (!hook) return HB_OK;
  if (worker) return atomic_load(&stopped) ? HB_ERR_INTERRUPT : HB_OK;  /* the main thread says why */
  if (!atomic_load(&stopped) && hook(hook_data)) atomic_store(&stopped, 1);
  return atomic_load(&stopped) ? hb_error_set(HB_ERR_INTERRUPT, "interrupted") : HB_OK;
}
