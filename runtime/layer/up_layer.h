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

#include <ultrapool/pool.h>

/* The atomics and the store-buffering step (up__store_sb, up__fence_sb,
 * up__load_sb) of the runtime, so the layer's lock-free code follows the
 * same rules (one header for every atomic, see atomic.h). */
#include "../src/atomic.h"

/* up_submit_copy that wakes a parked worker when nobody is searching but
 * never starts one, except the first when the pool has none. */
int up__submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size);

/* Workers the pool has now (running, searching, parked or starting). */
unsigned up__pool_workers(const up_pool *p);

/* Errors: the layer's failures set the text that up_last_error() returns,
 * with the same printf-style call the runtime uses. */
void up__set_error(const char *fmt, ...);

/* The one bound on helping depth: a layer thread that runs tasks while it
 * waits enters each level with up__help_enter() (0 at the limit: then it
 * must not help) and leaves it with up__help_leave(), sharing the
 * thread-local depth and the stack-derived limit of the pool's own group
 * waiters and helping submitters (help.h says how the limit is chosen). */
#include "../src/help.h"

/* The one pseudo-random generator (up__rng_seed, up__rng_next,
 * up__rng_below; inline, a word of state per thread): for a thief's first
 * victim, as the pool's own workers choose theirs. */
#include "../src/rng.h"

#endif
