/* A task with a deadline, for the timer tests: timer_due_after notes the
 * deadline (CLOCK_MONOTONIC) before it submits the task with
 * up_submit_after, and the task records when it ran, how many times, and
 * whether up_cancelled() said a destroy released it. The deadline is read
 * before the submit, so a task run on time never seems early. Test code,
 * header-only; needs check.h. */
#ifndef UP_TEST_DUE_H
#define UP_TEST_DUE_H

#include <stdatomic.h>

#include <ultrapool/wait.h>

#include "check.h"

typedef struct timer_due {
    uint64_t deadline; /* monotonic ns */
    _Atomic uint64_t ran_at;
    _Atomic unsigned runs;
    _Atomic int cancelled;
} timer_due;

static inline void timer_due_task(void *arg)
{
    timer_due *d = arg;
    atomic_store(&d->ran_at, test_now_ns());
    atomic_store(&d->cancelled, up_cancelled());
    atomic_fetch_add(&d->runs, 1);
}

/* up_submit_after(p, delay_ns) of d's task, its deadline noted first. */
static inline int timer_due_after(up_pool *p, timer_due *d, uint64_t delay_ns)
{
    d->deadline = test_now_ns() + delay_ns;
    return up_submit_after(p, delay_ns, timer_due_task, d);
}

/* Checks that d ran exactly once and not before its deadline, and
 * returns how late it ran, in ns. */
static inline uint64_t timer_due_check(const timer_due *d)
{
    CHECK_EQ(atomic_load(&d->runs), 1);
    CHECK_GE(atomic_load(&d->ran_at), d->deadline);
    return atomic_load(&d->ran_at) - d->deadline;
}

#endif
