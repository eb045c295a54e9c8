/* A task that first needs the pool's timer while a destroy runs (the soak
 * run's crash, seed 1796585010: glibc's assertion in
 * __pthread_tpp_change_priority, and under ASan the timer thread reading
 * the pool's freed wait state).
 *
 * A destroy closes the timer wheel and joins its thread (up__timer_cancel_all),
 * then waits for the tasks it accepted before. Such a task may park after
 * that with a sleep or a timed event wait. When the pool had never used a
 * timer, that park started the wheel and its thread then: nothing joined
 * the thread, and the pool's end freed the wheel and the wait state under
 * it. The thread lived on in freed memory (its mutex, its parker, the
 * release list).
 *
 * Each part makes a pool that has used no timer, holds one worker with a
 * task until the destroy has cancelled the waiters (a task waiting on an
 * event, released cancelled, says so) and a while longer, then parks with
 * a timer. The destroy must return with the process's thread count back
 * where it was before the pool: the old code left the timer thread behind
 * (and the test prints the count it saw). The while longer is what lets
 * the destroy pass its timer cancel; on a machine so busy that it did not,
 * the old code would pass this part, never the new code fail it. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "pool_helpers.h"
#include "threads.h"

#define MS UINT64_C(1000000)

enum { PART_TIMED_WAIT, PART_SLEEP, PART_SLEEP_FIRST_WAIT, PARTS };
static const char *part_names[PARTS] = {"timed event wait", "sleep",
                                        "sleep, the pool's first wait"};

static up_pool *pool;
static up_event *cancel_ev, *never_ev;
static _Atomic int swept, part, waited_rc;

static void noop(void *arg) { (void)arg; }

/* Waits on cancel_ev, which nobody sets: only the destroy's sweep runs it. */
static void sweep_seen(void *arg)
{
    (void)arg;
    atomic_store(&swept, 1);
}

static void late_timer_user(void *arg)
{
    (void)arg;
    /* Without events (the pool has no waiting state yet), the stop's
     * refusal says the destroy has begun; its cancel follows at once. */
    while (atomic_load(&part) == PART_SLEEP_FIRST_WAIT ? up_submit(pool, noop, NULL) != UP_ESTOPPED
                                                       : !atomic_load(&swept))
        test_sleep_ms(1);
    test_sleep_ms(50); /* let the destroy go past its timer cancel */
    if (atomic_load(&part) == PART_TIMED_WAIT)
        atomic_store(&waited_rc, up_event_wait_timeout(never_ev, 10000 * MS));
    else
        atomic_store(&waited_rc, up_sleep_ns(10000 * MS));
}

int main(void)
{
    if (test_threads() < 1) {
        printf("no thread count in /proc/self/status\n");
        return 77;
    }
    /* A pool made and destroyed first: threads that start with the first
     * pthread_create and stay (ThreadSanitizer's) are in every count. */
    CHECK_EQ(up_pool_destroy(test_fixed_pool(2)), UP_OK);
    for (int k = 0; k < PARTS; k++) {
        atomic_store(&part, k);
        atomic_store(&swept, 0);
        atomic_store(&waited_rc, 1);
        /* The previous part's threads may still be listed (qemu-user). */
        int before = test_threads_settled();
        up_pool *p = pool =
            test_fixed_pool(2); /* one worker holds the task, one runs the sweep's */
        int events = k != PART_SLEEP_FIRST_WAIT;
        if (events) {
            CHECK_EQ(up_event_create(&cancel_ev, p), UP_OK);
            CHECK_EQ(up_event_create(&never_ev, p), UP_OK);
            CHECK_EQ(up_submit_on(p, cancel_ev, sweep_seen, NULL), UP_OK);
        }
        CHECK_EQ(up_submit(p, late_timer_user, NULL), UP_OK);
        uint64_t t0 = test_now_ns();
        CHECK_EQ(up_pool_destroy(p), UP_OK);
        double s = (double)(test_now_ns() - t0) / 1e9;
        /* A joined thread can stay listed a moment longer (qemu-user
         * ends its host thread after the join); a leaked one stays. So
         * can one of the previous part's pool when `before` is counted,
         * and be gone now: fewer threads than before is no leak. */
        int after = test_threads(), rc = atomic_load(&waited_rc);
        for (uint64_t w0 = test_now_ns();
             after > before && test_now_ns() - w0 < 2000000000ull * test_time_factor();
             after = test_threads())
            test_sleep_ms(10);
        printf("%s: destroy %.3f s, the wait returned %d, threads %d before the pool, %d "
               "after its destroy\n",
               part_names[k], s, rc, before, after);
        fflush(stdout);
        CHECK_EQ(atomic_load(&swept), events);
        /* A timed wait parked during the destroy ends cancelled; a sleep
         * ends (early, like a parked one the destroy releases). */
        CHECK(k == PART_TIMED_WAIT ? rc == UP_ECANCELED : rc == UP_OK);
        /* Every thread the pool started was joined: the timer thread too. */
        CHECK_LE(after, before);
        if (events) {
            up_event_destroy(cancel_ev);
            up_event_destroy(never_ev);
        }
    }
    return 0;
}
