/* Timed event waits whose event is set about when they time out, among
 * other waits on the same event and the same wheel. Both records of such
 * a wait (park_task.c: the event's and the wheel's) are then released and
 * taken at about the same time, and the first to run takes the other back
 * if it is still waiting. Once that took back whatever record sat at the
 * other's address, although the other had been freed and reused by
 * another wait: that wait's task was lost (a sleeper that never woke, a
 * task of up_submit_on or up_submit_after that never ran), its record
 * freed twice and a ticket dropped once too often (glibc aborted in 5 of
 * 6 runs: "malloc(): unaligned tcache chunk detected"); ThreadSanitizer
 * saw the read of the freed record.
 *
 * Checks: every waiter ends its rounds; every task submitted on the event
 * or after a delay runs exactly once; the pool stops with nothing left. */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "marks.h"
#include "pool_helpers.h"

#define US UINT64_C(1000)

static up_pool *pool;
static up_event *ev;
static _Atomic unsigned waiters_done, rounds_done, timeouts;
static unsigned rounds;

/* A waiter: timed waits of 0.1 to 1.6 ms on ev, each followed by a short
 * sleep on the wheel (a record that may reuse a freed one). */
static void waiter(void *arg)
{
    uint64_t s = (uintptr_t)arg;
    for (unsigned k = 0; k < rounds; k++) {
        int rc = up_event_wait_timeout(ev, 100 * US + test_rand(&s) % (1500 * US));
        CHECK(rc == UP_OK || rc == UP_ETIMEDOUT);
        if (rc == UP_ETIMEDOUT)
            atomic_fetch_add(&timeouts, 1);
        up_sleep_ns(test_rand(&s) % (300 * US));
        atomic_fetch_add(&rounds_done, 1);
    }
    atomic_fetch_add(&waiters_done, 1);
}

int main(void)
{
    uint64_t seed = test_seed();
    unsigned nwaiters = (unsigned)test_param("UP_TEST_TIMED_RACE_WAITERS", 48);
    rounds = (unsigned)test_size("UP_TEST_TIMED_RACE_ROUNDS", 500);
    unsigned nvictims = nwaiters * rounds * 2;
    marks_runs = marks_alloc(nvictims); /* per victim task id */

    pool = test_fixed_pool(4);
    CHECK_EQ(up_event_create(&ev, pool), UP_OK);
    for (unsigned i = 0; i < nwaiters; i++)
        CHECK_EQ(up_submit_wait(pool, waiter, (void *)(uintptr_t)(seed + i)), UP_OK);

    /* Sets and resets at random within the waits' timeouts, each set
     * with tasks on the event and after a short delay: their records go
     * where the waits' records went. Until the waiters are done or have
     * made no progress for 10 s (scaled up under sanitizers by the
     * rounds' own pace: progress is what is measured). */
    uint64_t s = seed, last_change = test_now_ns();
    unsigned last_rounds = 0, v = 0;
    while (atomic_load(&waiters_done) < nwaiters) {
        if (v + 2 <= nvictims) {
            CHECK_EQ(up_submit_on(pool, ev, marks_task, (void *)(uintptr_t)v), UP_OK);
            v++;
            CHECK_EQ(
                up_submit_after(pool, test_rand(&s) % (800 * US), marks_task, (void *)(uintptr_t)v),
                UP_OK);
            v++;
        }
        struct timespec ts = {0, (long)(test_rand(&s) % (600 * US))};
        nanosleep(&ts, NULL);
        up_event_set(ev);
        if (test_rand(&s) & 1)
            sched_yield();
        up_event_reset(ev);
        unsigned r = atomic_load(&rounds_done);
        if (r != last_rounds) {
            last_rounds = r;
            last_change = test_now_ns();
        } else if (test_now_ns() - last_change > 10 * UINT64_C(1000000000)) {
            fprintf(stderr, "no wait ended for 10 s: %u of %u waiters done, %u of %u rounds\n",
                    atomic_load(&waiters_done), nwaiters, r, nwaiters * rounds);
            CHECK(!"a waiter was lost");
        }
    }
    up_event_set(ev); /* the last tasks on it */
    up_pool_stop_and_wait(pool);

    unsigned missing = 0, twice = 0;
    for (unsigned i = 0; i < v; i++) {
        missing += marks_runs[i] == 0;
        twice += marks_runs[i] > 1;
    }
    up_stats st;
    up_pool_stats(pool, &st);
    printf("%u waiters x %u rounds (%u timed out), %u tasks on the event or a delay: %u never ran, "
           "%u ran twice; executed %llu of %llu, waiting %llu\n",
           nwaiters, rounds, atomic_load(&timeouts), v, missing, twice,
           (unsigned long long)st.executed, (unsigned long long)st.submitted,
           (unsigned long long)st.waiting);
    CHECK_EQ(missing, 0);
    CHECK_EQ(twice, 0);
    CHECK_EQ(st.executed, st.submitted);
    CHECK_EQ(st.waiting, 0);
    up_event_destroy(ev);
    up_pool_destroy(pool);
    marks_free(marks_runs);
    return 0;
}
