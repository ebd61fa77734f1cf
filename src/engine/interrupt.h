/* interrupt.h: how a caller stops a long engine call (Ctrl-C in R).
 * The caller installs a hook; long loops call hb_interrupt_check() on the
 * main thread, outside parallel regions, between pieces of work that take
 * well under a second (a leaf split, a group of predicted rows, a group of
 * binned columns), so the engine reacts within a fraction of a second and
 * no thread is ever stopped in the middle of its work. Once the hook has
 * answered yes, every check says so until a hook is installed again, and
 * the engine unwinds with HB_ERR_INTERRUPT, freeing what it made, as on
 * any other error. Without a hook nothing is interrupted. Like the last
 * error message, this is process-wide state of the main thread. */
#ifndef HB_INTERRUPT_H
#define HB_INTERRUPT_H

/* The hook: non-zero means stop. It is called from the main thread only,
 * as often as the checks come (it may rate-limit itself). */
typedef int (*hb_interrupt_fn)(void *data);

/* Install `fn` (NULL: none) with its `data`, and forget any earlier yes. */
void hb_interrupt_set(hb_interrupt_fn fn, void *data);

/* HB_OK, or HB_ERR_INTERRUPT with the message recorded when the hook says
 * stop (now or at an earlier check since it was installed). Main thread,
 * outside parallel regions. */
int hb_interrupt_check(void);

/* Make the calling thread a worker of the main thread (the CPU learner's
 * class workers, learner_cpu.c): its checks never call the hook, they
 * answer HB_ERR_INTERRUPT, without a message, once the main thread's check
 * has seen a yes (the main thread keeps checking while they run). For the
 * thread's life. */
void hb_interrupt_worker(void);

#endif
