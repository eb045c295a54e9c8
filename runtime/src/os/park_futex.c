/* Linux futex implementation of park.h, on the futex calls of the OS layer
 * (os.c). The futex words are private to the process; a wait returns on a
 * wake, on a signal, or spuriously, so every wait sits in a loop that
 * re-checks its condition. */
#include "os/park.h"

#include <limits.h>

#include "clock.h"
#include "os/os.h"

int up__parker_init(up__parker *pk)
{
    atomic_init(&pk->token, 0);
    return 0;
}

void up__parker_destroy(up__parker *pk) { (void)pk; }

int up__parker_wait(up__parker *pk, uint64_t timeout_ns)
{
    uint64_t deadline = up__deadline_after(timeout_ns);
    for (;;) {
        if (up__exchange_acq_rel(&pk->token, 0) == 1)
            return 1;
        uint64_t left = up__remaining_ns(deadline);
        if (left == 0)
            return 0;
        up__os_futex_wait(&pk->token, 0, left);
    }
}

void up__parker_post(up__parker *pk)
{
    up__store_release(&pk->token, 1);
    up__os_futex_wake(&pk->token, 1);
}

int up__event_init(up__event *ev)
{
    atomic_init(&ev->count, 0);
    return 0;
}

void up__event_destroy(up__event *ev) { (void)ev; }

int up__event_wait(up__event *ev, uint32_t key, uint64_t timeout_ns)
{
    uint64_t deadline = up__deadline_after(timeout_ns);
    for (;;) {
        if (up__load_acquire(&ev->count) != key)
            return 1;
        uint64_t left = up__remaining_ns(deadline);
        if (left == 0)
            return 0;
        up__os_futex_wait(&ev->count, key, left);
    }
}

void up__event_notify_one(up__event *ev)
{
    up__fetch_add_seqcst(&ev->count, 1);
    up__os_futex_wake(&ev->count, 1);
}

void up__event_notify_all(up__event *ev)
{
    up__fetch_add_seqcst(&ev->count, 1);
    up__os_futex_wake(&ev->count, INT_MAX);
}
