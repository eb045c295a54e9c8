/* The runtime's one interface to the layers built on it (the OpenMP-style
 * API in pragmas/): everything such a layer may use beyond the public
 * headers, each with the reason it needs it. Nothing else of runtime/src
 * crosses; the layer's CMake target sees only this folder.
 *
 * Gathering a team. A region asks for n threads at once. Right after the previous region,
 * the workers that served it are still on their way back to the queue:
 * neither searching nor parked, so an ordinary submit (or
 * up_pool_reserve) takes them for busy and starts new threads, which then
 * compete with the team for the CPUs. The gatherer instead queues its
 * member tasks without growing the pool, gives the workers it has a short
 * grace to take them, and asks up_pool_reserve only for the rest. */
#ifndef UP_LAYER_H
#define UP_LAYER_H

#include <stddef.h>
#include <stdio.h>

#include <ultrapool/pool.h>

/* The atomics and the store-buffering step (up__store_sb, up__fence_sb,
 * up__load_sb) of the runtime, so the layer's lock-free code follows the
 * same rules (one header for every atomic, see atomic.h). */
#include "../src/atomic.h"

/* The internal assertions (up__assert, up__assert_internal,
 * up__assert_expensive), so the layer checks its invariants at the same
 * UP_DEBUG levels and costs nothing in a release build. */
#include "../src/debug.h"

/* The work-stealing deque, for the members' deques of task records: one
 * implementation, proof and return convention (UP__DEQUE_*) for the pool's
 * nested tasks and the layer's region tasks. The layer's records have a
 * longer header (their parent frame and dependency node); deque.h says
 * how a record is laid out. Every operation the layer uses is inline. */
#include "../src/deque.h"

/* The runtime's monotonic clock (up__now_ns), for the layer's deadlines. */
#include "../src/clock.h"

/* The initial-exec model for hot thread-local variables (UP__TLS_IE), so
 * the layer's follow the runtime's rule. */
#include "../src/tls.h"

/* Trimming variable values (up__trimmed), for the layer's environment. */
#include "../src/text.h"

/* up_submit_copy that wakes a parked worker when nobody is searching but
 * never starts one, except the first when the pool has none. */
int up__submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size);

/* Workers the pool has now (running, searching, parked or starting). */
unsigned up__pool_workers(const up_pool *p);

/* How many tasks sit queued or pushed in p that no worker has taken yet,
 * counted up to limit (an estimate: a push still being published may be
 * missed, so a caller that must not miss one looks again later, as the
 * gatherer does each grace period). A gatherer asks the pool for workers
 * only for member tasks still there: a worker that took one is on its way
 * to join, though on a loaded machine it may be held for a time slice
 * before its member task counts it (pragmas/src/team.c). */
unsigned up__pool_queued(up_pool *p, unsigned limit);

/* 1 once the pool is stopped (its queues closed): a region of one, which
 * submits nothing, runs on a stopped pool no more than a larger one. */
int up__pool_stopped(const up_pool *p);

/* Durations in the pool's syntax (500ms, 2s; docs/env.md), for the MPI
 * mode's variables, which follow the pool's conventions. 0 or UP_EINVAL. */
int up__parse_duration(const char *s, uint64_t *out);

/* Errors: the layer's failures set the text that up_last_error() returns,
 * with the same printf-style call the runtime uses. */
void up__set_error(const char *fmt, ...);

/* The structs a later version will grow (abi_struct.h): the layer reads
 * its option structs (up_for_opts, up_task_opts, up_taskloop_opts) with
 * the runtime's up__struct_in, so that every library accepts and refuses
 * a program's struct by the same rule and message. The MPI mode, a static
 * library on the static runtime, also fills and writes its structs with
 * up__struct_size, up__struct_init and up__struct_out; the shared parallel
 * library reaches only up__struct_in (up_layer_abi.h). */
#include "../src/abi_struct.h"

/* The one bound on helping depth: a layer thread that runs tasks while it
 * waits enters each level with up__help_enter() (0 at the limit: then it
 * must not help) and leaves it with up__help_leave(), sharing the
 * thread-local depth and the stack-derived limit of the pool's own group
 * waiters and helping submitters (help.h says how the limit is chosen). */
#include "../src/help.h"

/* 1 when the calling thread is a worker of p running a task straight from
 * its loop: not nested in another task's wait or in a submitter's helping.
 * Only such a task may keep its thread after its work is done (a region
 * member that docks for its master's next region, pragmas/src/crew.c):
 * a nested one would hold up the wait it runs in. */
int up__worker_at_loop(const up_pool *p);

/* A released thread on its way back. A docked member that its master's
 * end releases (crew.c) may take a while, on a busy machine, to wake and
 * leave its task; until its loop looks for work it is neither searching
 * nor parked, so a region gathered meanwhile would have up_pool_reserve
 * start a thread for work this one is about to take. The releaser calls
 * up__return_expected(p, 1) before its post (and (p, -1) if the post
 * failed): the worker counts as starting, which up_pool_reserve and the
 * monitor take for available. The released task calls up__return_mark(p)
 * once it has read the post; its loop then moves the worker from starting
 * to searching in one step when the task returns, as a new thread's does.
 * A task that is not one of p's workers at its loop gives the count back
 * at once. */
void up__return_expected(up_pool *p, int n);
void up__return_mark(up_pool *p);

/* The one pseudo-random generator (up__rng_seed, up__rng_next,
 * up__rng_below; inline, a word of state per thread): for a thief's first
 * victim, as the pool's own workers choose theirs. */
#include "../src/rng.h"

/* The one busy-wait step (a pause, every n-th a yield) of the pool's
 * waiters, for a waiting member's spin before it parks. */
#include "../src/spin.h"

/* Waiting through the pool's idle protocol. A region member that waits
 * (at a barrier, for its children, for its team to gather) spins for the
 * pool's budget, as an idle worker does, then parks, so that an idle
 * region burns no CPU and the pool's statistics and monitor see its
 * members as what they are. The layer keeps the protocol's state (who is
 * parked, who wakes whom: pragmas/src/wait.c); the runtime lends it what
 * makes the sleep a pool's sleep: */

/* The spin budget of the pool's idle workers (up_config.spin): the rounds
 * a waiter polls before it parks. */
unsigned up__pool_spin(const up_pool *p);

/* The calling thread's parker. A worker's own (the pool never posts it
 * while the worker runs a task, so the layer may use it meanwhile, and
 * must leave no token on it when the task returns); any other thread gets
 * one of its own, made on first use and freed when the thread exits. NULL
 * when out of memory. */
typedef struct up__parker up__parker;
up__parker *up__self_parker(void);

/* Sleeps on pk, the caller's own parker, until up__waiter_wake(pk) or
 * timeout_ns (UINT64_MAX: no limit); 1 when woken (the token consumed), 0
 * on timeout. Counted in p's statistics (up_stats.parks, and
 * up_stats.parked while it sleeps). */
int up__waiter_park(up_pool *p, up__parker *pk, uint64_t timeout_ns);

/* Wakes the thread sleeping, or about to sleep, on pk: leaves it one
 * token. Call it once per wake-up claimed (wait.c), never more. */
void up__waiter_wake(up__parker *pk);

/* up_cancelled() is the runtime's (wait.c): 1 inside a waiting task that
 * a destroy released, or when fn, the layer's test for the calling
 * thread's task (a cancelled taskgroup), says so. The layer sets fn once,
 * before any task runs (a constructor); fn must be safe on any thread. */
void up__set_cancel_hook(int (*fn)(void));

/* Whether the calling thread's task holds state of the layer that cannot
 * move to another thread (a region member's team, task frames on its
 * stack): fn answers 1 and the task's waits block its thread instead of
 * parking the task (park_task.c). Set once by the layer, like the cancel
 * hook; fn must be safe on any thread. */
void up__set_pinned_hook(int (*fn)(void));

/* The layer's environment variables (pragmas/src/env.c): the runtime's
 * one boolean parser (1 0 true false yes no on off y n, any case; 0, or
 * -1 when s is none of them), so that every boolean variable takes the
 * same words; and a hook that prints the layer's settings inside
 * UP_PRINT_CONFIG's block (set once by the layer when it is loaded, like
 * the cancel hook). */
int up__parse_bool(const char *s, int *out);
void up__set_print_hook(void (*fn)(FILE *f));

/* The one path by which every library reads the environment: getenv for a
 * variable listed in the runtime's environment registry
 * (runtime/src/env_registry.c), which asserts in UP_DEBUG builds that the
 * name is listed there. So the table that the unknown-name warning and
 * docs/env.md's check rely on cannot miss a variable that a layer reads. */
const char *up__env(const char *name);

#endif
