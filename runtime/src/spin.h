/* One step of a bounded busy wait, shared by the threads that poll before
 * they sleep (group waiters, semaphore and channel waiters). */
#ifndef UP_SPIN_H
#define UP_SPIN_H

#include <sched.h>

#include "atomic.h"

/* Step i (counting from 1) of a busy wait: a CPU pause, and every
 * yield_every-th step (a power of two) a yield instead, so a waiter that
 * shares its CPU with the thread it waits for lets that thread run. */
static inline void up__spin_step(unsigned i, unsigned yield_every)
{
    if ((i & (yield_every - 1)) == 0)
        sched_yield();
    else
        up__cpu_relax();
}

#endif
