/* Tasks that count their runs, for tests that check how many of the tasks
 * they submitted ran: counted_task adds one to counted_ran and ignores its
 * argument; counted_slow_task sleeps 1 ms first, so that tasks are still
 * running or queued when the test looks (a stop that must wait for them).
 * A test resets counted_ran itself; other tasks of the test may add to it
 * too. Test code, header-only; needs check.h. */
#ifndef UP_TEST_COUNTED_H
#define UP_TEST_COUNTED_H

#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

static _Atomic uint64_t counted_ran;

static inline void counted_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&counted_ran, 1);
}

static inline void counted_slow_task(void *arg)
{
    (void)arg;
    test_sleep_ms(1);
    atomic_fetch_add(&counted_ran, 1);
}

#endif
