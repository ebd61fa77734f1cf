/* r_interrupt.c: Ctrl-C during long engine calls (training rounds,
 * prediction, binning).
 *
 * While such a call runs, the engine's interrupt hook (engine/interrupt.h)
 * asks R, at most every POLL_SECONDS, whether to stop: R_CheckUserInterrupt()
 * inside R_UnwindProtect. Where R would jump (the user's interrupt; also an
 * error that a calling handler raises, or a time limit of setTimeLimit()),
 * the jump is held at the hook: the clean-up function long-jumps back into
 * the hook's own frame, leaving only R's frames behind (cpp11's
 * unwind_protect does the same), and the hook answers "stop". The engine
 * then unwinds through its ordinary error paths and frees what it made, the
 * glue frees its own, and only then is R's jump resumed (R_ContinueUnwind).
 * So no long jump ever crosses the engine's frames, and the user gets R's own
 * interrupt: tryCatch(interrupt = ) and withCallingHandlers() see the
 * condition R signals, RStudio's stop button works, and a script stops as
 * on any Ctrl-C. (Holding the jump rather than wrapping the check in
 * R_ToplevelExec keeps the condition R's own instead of one made up after
 * the fact, and lets an error from a handler or a time limit through as
 * what it is.) */
#include <setjmp.h>
#include "r_util.h"
#include "engine/error.h"
#include "engine/interrupt.h"

/* R is asked at most this often: an R_CheckUserInterrupt() costs little,
 * but the engine checks between leaf splits, which can come every few
 * microseconds. */
#define POLL_SECONDS 0.02

static SEXP token = NULL;   /* R_MakeUnwindCont(): where a held jump waits */
static int depth = 0;       /* engine calls in progress (a handler run by a check may start another) */
static int held = 0;        /* a jump is held, to be resumed once the engine has unwound */
static double last_poll = 0.0;

void hb_r_interrupt_init(void) {
  if (token) return;
  token = R_MakeUnwindCont();
  R_PreserveObject(token);
}

static SEXP check_r(void *data) {
  (void)data;
  R_CheckUserInterrupt();
  return R_NilValue;
}

static void hold_jump(void *data, Rboolean jump) {
  if (jump) longjmp(*(jmp_buf *)data, 1);
}

/* The engine's hook: 1 when R wants to jump (the jump is then held). */
static int poll_r(void *data) {
  (void)data;
  if (held) return 1;
  double now = hb_r_wall_seconds();
  if (now - last_poll < POLL_SECONDS && now >= last_poll) return 0;
  last_poll = now;
  jmp_buf here;
  if (setjmp(here)) {
    held = 1;
    return 1;
  }
  R_UnwindProtect(check_r, NULL, hold_jump, &here, token);
  return 0;
}

void hb_r_interrupt_begin(void) {
  if (depth++ == 0) held = 0;
  hb_interrupt_set(poll_r, NULL);
}

int hb_r_interrupt_end(void) {
  if (depth > 0 && --depth == 0) hb_interrupt_set(NULL, NULL);
  return held;
}

void hb_r_interrupt_resume(void) {
  if (!held) return;
  held = 0;
  R_ContinueUnwind(token);
}
