/* Sleeping tasks and a stop that comes at once (issue 31, part 4).
 *
 * n tasks that sleep 200 ms are submitted, most of them still queued when
 * up_pool_stop_and_wait is called. The stop accepts no new task, but each
 * task it accepted before waits the way it would have without the stop:
 * it parks, holding no thread. Before the fix a task that started after
 * the stop was refused its park (the stop check meant for new waits) and
 * blocked its worker for the whole sleep, so the monitor started a worker
 * for each (517-675 of them for 5,000 tasks) and the stop took about 3x
 * as long.
 *
 * The same run without the stop, in the same process, is the reference:
 * every task runs once and parks once in both, and the stopped run's
 * workers peak and time stay near the reference's (measured here, never
 * a fixed deadline; a second reference run is taken before a time
 * failure is called, since the machine may have been busy meanwhile).
 *
 * The destroy's side: tasks still queued when up_pool_destroy begins that
 * then wait on an event nobody sets park too, and the destroy ends their
 * waits at once, cancelled, as it does for tasks parked before it (the
 * old code blocked each until its timeout, on a thread of its own), and
 * no wait's timer record is left behind to hold the destroy until then. */
#include <stdatomic.h>
#include <stdio.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "marks.h"
#include "pool_helpers.h"

#define MS UINT64_C(1000000)

static test_mark *runs;
static _Atomic unsigned done;

static void sleeper(void *arg)
{
    CHECK_EQ(up_sleep_ns(200 * MS), UP_OK);
    marks_add(runs, (uintptr_t)arg);
    atomic_fetch_add(&done, 1);
}

/* One shard whose queue holds all n tasks, so they are all queued before
 * the stop, and a submitter that runs none of them (all on workers). */
static up_pool *queue_all_pool(unsigned n)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.submit_help = 0;
    unsigned cap = 2;
    while (cap < n)
        cap *= 2;
    cfg.queue_capacity = cap;
    return test_pool_create(&cfg);
}

typedef struct outcome {
    double seconds;
    unsigned peak, cpus, bad;
    unsigned long long resumed, executed, submitted;
} outcome;

/* One run of n sleepers; stop: stop_and_wait right after the last submit,
 * else wait for every task first. */
static outcome run(unsigned n, int stop)
{
    up_pool *p = queue_all_pool(n);
    marks_clear(runs, n);
    atomic_store(&done, 0);
    uint64_t t0 = test_now_ns();
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit(p, sleeper, (void *)(uintptr_t)i), UP_OK);
    if (!stop)
        while (atomic_load(&done) != n)
            test_sleep_ms(1);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    outcome o = {.seconds = (double)(test_now_ns() - t0) / 1e9, .cpus = up_pool_cpus(p)};
    up_stats st;
    up_pool_stats(p, &st);
    o.peak = st.workers_peak;
    o.resumed = (unsigned long long)st.tasks_resumed;
    o.executed = (unsigned long long)st.executed;
    o.submitted = (unsigned long long)st.submitted;
    o.bad = (unsigned)marks_wrong(runs, n, NULL);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("%-8s %u sleepers of 200 ms: %.2f s, workers peak %u (CPUs %u), %llu resumed, "
           "%llu/%llu executed/submitted, %u not run exactly once\n",
           stop ? "stop:" : "no stop:", n, o.seconds, o.peak, o.cpus, o.resumed, o.executed,
           o.submitted, o.bad);
    fflush(stdout);
    return o;
}

#define WAIT_NEVER_NS (20000 * MS)

static up_event *never;
static _Atomic unsigned cancelled_ok;

static void wait_never(void *arg)
{
    /* Long enough that only a destroy ends it; it bounds the old code's
     * blocked waits so that the test fails instead of hanging. */
    int rc = up_event_wait_timeout(never, WAIT_NEVER_NS);
    if (rc == UP_ECANCELED && up_cancelled())
        atomic_fetch_add(&cancelled_ok, 1);
    marks_add(runs, (uintptr_t)arg);
}

static void test_destroy_queued_waiters(unsigned n)
{
    up_pool *p = queue_all_pool(n);
    CHECK_EQ(up_event_create(&never, p), UP_OK);
    marks_clear(runs, n);
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit(p, wait_never, (void *)(uintptr_t)i), UP_OK);
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    double s = (double)(test_now_ns() - t0) / 1e9;
    unsigned bad = (unsigned)marks_wrong(runs, n, NULL);
    printf("destroy: %u tasks waiting on an unset event: %.2f s, %u cancelled, %u not run "
           "exactly once\n",
           n, s, atomic_load(&cancelled_ok), bad);
    CHECK_EQ(bad, 0u);
    CHECK_EQ(atomic_load(&cancelled_ok), n);
    /* Each wait's timer record went with it: one left on the wheel (the
     * event's record ran before it was pushed) held the destroy until the
     * timeout. */
    CHECK_LT(s, (double)WAIT_NEVER_NS / 1e9);
    up_event_destroy(never);
}

int main(void)
{
    const unsigned n = (unsigned)test_size("UP_TEST_PARK_STOP_TASKS", 5000);
    const unsigned nd = (unsigned)test_size("UP_TEST_PARK_DESTROY_TASKS", 500);
    runs = marks_alloc(n > nd ? n : nd);
    outcome ref = run(n, 0);
    outcome got = run(n, 1);
    CHECK_EQ(ref.bad, 0u);
    CHECK_EQ(got.bad, 0u);
    /* Every task parked once, none blocked its thread: the reference's
     * count, not fewer. */
    CHECK_EQ(ref.resumed, (unsigned long long)n);
    CHECK_EQ(got.resumed, ref.resumed);
    /* Parked tasks hold no thread: no more workers than the reference
     * needed (or one per CPU and one more), with room for the monitor's
     * timing; the blocked tasks of the old code took hundreds. */
    unsigned small = ref.peak > got.cpus + 1 ? ref.peak : got.cpus + 1;
    if (got.peak > 2 * small)
        fprintf(stderr, "stop: workers peak %u, the reference %u (CPUs %u)\n", got.peak, ref.peak,
                got.cpus);
    CHECK_LE(got.peak, 2 * small);
    /* Time comparable to the reference (blocked sleepers took 3x): twice
     * the slower of two reference runs plus one sleep, so a busy spell
     * during one run alone does not fail it. */
    if (got.seconds > 2 * ref.seconds + 0.2) {
        outcome again = run(n, 0);
        double slow = again.seconds > ref.seconds ? again.seconds : ref.seconds;
        if (got.seconds > 2 * slow + 0.2)
            fprintf(stderr, "stop: %.2f s, the references %.2f s and %.2f s\n", got.seconds,
                    ref.seconds, again.seconds);
        CHECK_LE(got.seconds, 2 * slow + 0.2);
    }
    test_destroy_queued_waiters(nd);
    marks_free(runs);
    return 0;
}
