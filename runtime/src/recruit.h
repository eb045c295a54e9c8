/* What a layer that gathers threads from the pool needs beyond the public
 * API (pragmas/src/team.c, a parallel region's team).
 *
 * A region asks for n threads at once. Right after the previous region,
 * the workers that served it are still on their way back to the queue:
 * neither searching nor parked, so an ordinary submit (or
 * up_pool_reserve) takes them for busy and starts new threads, which then
 * compete with the team for the CPUs. The gatherer instead queues its
 * member tasks without growing the pool, gives the workers it has a short
 * grace to take them, and asks up_pool_reserve only for the rest. */
#ifndef UP_RECRUIT_H
#define UP_RECRUIT_H

#include <stddef.h>

#include <ultrapool/pool.h>

/* up_submit_copy that wakes a parked worker when nobody is searching but
 * never starts one, except the first when the pool has none. */
int up__submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size);

/* Workers the pool has now (running, searching, parked or starting). */
unsigned up__pool_workers(const up_pool *p);

#endif
