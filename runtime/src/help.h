/* The one bound on helping depth. A thread that waits (a group waiter, a
 * submitter facing a full queue, a parallel-layer task waiting for its
 * children) runs queued tasks meanwhile, and such a task may wait and help
 * in turn, each time one level deeper on the same stack. Every kind of
 * helping enters through up__help_enter() and leaves through
 * up__help_leave(), so one thread-local depth counts them all and one
 * limit bounds the stack they use together.
 *
 * The limit. One level of helping is a waiting call's frames plus the
 * helped task's own. Measured with -fstack-usage (gcc -O2, x86-64): a
 * submitter's help is up_submit_wait 80 + submit_task 144 + help_one 1936
 * (its batch of 32 slots) bytes, about 2.2 KiB; a group waiter's is
 * up_group_wait + await 112 + up__help_once 176 + find_work 80 bytes plus
 * the group's record frame, under 0.5 KiB. UP__HELP_LEVEL_BYTES rounds the
 * larger up to 4 KiB to leave the helped task 2 KiB of its own, and
 * sanitizer builds, whose frames carry redzones, count four times that.
 * Helping may use half of the thread's stack: with the usual 8 MiB stack
 * that would be 1024 levels, capped at UP__HELP_MAX_DEPTH (256, beyond
 * which helping buys nothing); with the smallest stack_size a pool
 * accepts, 64 KiB, it is 8 levels (2 under a sanitizer). A thread whose
 * stack size the OS does not report is taken to have 512 KiB, the
 * smallest default of the systems supported (macOS secondary threads).
 * At the limit a waiter stops helping and sleeps; the work it leaves
 * queued is run by other workers (the monitor adds some when all are
 * blocked). */
#ifndef UP_HELP_H
#define UP_HELP_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UP__HELP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UP__HELP_SANITIZED 1
#endif
#endif
#if defined(UP__HELP_SANITIZED)
#define UP__HELP_LEVEL_BYTES (16u * 1024u)
#else
#define UP__HELP_LEVEL_BYTES (4u * 1024u)
#endif
#define UP__HELP_MAX_DEPTH     256u
#define UP__HELP_STACK_UNKNOWN (512u * 1024u)

/* Enters one level of helping: 1 when the calling thread may help (it
 * must then call up__help_leave() once the helped tasks have returned), 0
 * at its limit. The depth and the limit are thread-local (help.c); the
 * limit is computed from the thread's stack when it first helps. Out of
 * line so the parallel layer, in its own shared library, can call them
 * (layer/up_layer.h); one call is small beside the task it lets run. */
int up__help_enter(void);
void up__help_leave(void);
/* Levels of helping on the calling thread now (0: not inside a helping
 * wait); a task parks only at level 0 (park_task.c). */
unsigned up__help_depth(void);

/* The calling thread's limit (for tests and the layer's diagnostics). */
unsigned up__help_limit(void);

/* Sets the calling thread's limit from its stack size in bytes: for
 * threads that know it (a worker, from up_config.stack_size), before they
 * first help. */
void up__help_set_stack(size_t bytes);

#endif
