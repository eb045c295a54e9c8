/* Timers (<ultrapool/wait.h>): up_submit_after never runs a task before
 * its deadline (CLOCK_MONOTONIC) and runs each exactly once; periodic
 * timers run, skip runs that would overlap, and never run after
 * up_timer_stop returns; every deadline a periodic timer reaches is run
 * or counted skipped, also when the pool stalls or the period is below the
 * wheel's tick; the stop and destroy rules for tasks waiting on the
 * wheel. */
#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "due.h"
#include "pool_helpers.h"

static up_pool *make_pool(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = 2;
    return test_pool_create(&cfg);
}

/* Random delays from 0 to 40 ms, some equal, in random order. */
static void test_after(uint64_t seed)
{
    uint64_t n = test_size("UP_TEST_WAIT_TIMERS", 20000);
    timer_due *d = calloc(n, sizeof *d);
    CHECK(d);
    up_pool *p = make_pool();
    uint64_t s = seed;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t delay = (test_rand(&s) % 41) * 1000000u;
        if (i % 7 == 0)
            delay = 0;
        if (i % 11 == 0)
            delay = test_rand(&s) % 3000000u; /* below a tick or two */
        CHECK_EQ(timer_due_after(p, &d[i], delay), UP_OK);
    }
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK); /* waits for the wheel too */
    uint64_t worst = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t late = timer_due_check(&d[i]);
        CHECK_EQ(atomic_load(&d[i].cancelled), 0);
        if (late > worst)
            worst = late;
    }
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, 0);
    CHECK_EQ(st.executed, n);
    printf("after: %llu tasks, none early, latest %.2f ms late\n", (unsigned long long)n,
           (double)worst / 1e6);
    CHECK_EQ(up_submit_after(p, 1000, timer_due_task, &d[0]), UP_ESTOPPED);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free(d);
}

typedef struct tick {
    up_timer *t;
    _Atomic unsigned runs;
    _Atomic int after_stop; /* set once up_timer_stop returned */
    _Atomic unsigned late_runs;
    unsigned sleep_ms;
    _Atomic int self_stop_rc;
} tick;

static void on_tick(void *arg)
{
    tick *k = arg;
    if (atomic_load(&k->after_stop))
        atomic_fetch_add(&k->late_runs, 1);
    atomic_fetch_add(&k->runs, 1);
    if (k->sleep_ms)
        test_sleep_ms(k->sleep_ms);
}

static void on_tick_self_stop(void *arg)
{
    tick *k = arg;
    atomic_fetch_add(&k->runs, 1);
    atomic_store(&k->self_stop_rc, up_timer_stop(k->t));
}

static void test_periodic(void)
{
    up_pool *p = make_pool();
    tick k = {0};
    CHECK_EQ(up_timer_start(&k.t, p, 5000000, 5000000, on_tick, &k), UP_OK);
    WAIT_UNTIL(atomic_load(&k.runs) >= 5, 10000);
    CHECK_GE(atomic_load(&k.runs), 5);
    CHECK_EQ(up_timer_stop(k.t), UP_OK);
    atomic_store(&k.after_stop, 1);
    test_sleep_ms(30);
    CHECK_EQ(atomic_load(&k.late_runs), 0);

    /* Runs that would overlap are skipped. */
    tick slow = {0};
    slow.sleep_ms = 12;
    CHECK_EQ(up_timer_start(&slow.t, p, 0, 2000000, on_tick, &slow), UP_OK);
    WAIT_UNTIL(atomic_load(&slow.runs) >= 3, 10000);
    CHECK_GT(up_timer_skipped(slow.t), 0);
    CHECK_EQ(up_timer_stop(slow.t), UP_OK); /* waits for the run in progress */
    atomic_store(&slow.after_stop, 1);
    test_sleep_ms(30);
    CHECK_EQ(atomic_load(&slow.late_runs), 0);

    /* A timer stopped from its own run. */
    tick self = {0};
    atomic_store(&self.self_stop_rc, 1);
    CHECK_EQ(up_timer_start(&self.t, p, 1000000, 1000000, on_tick_self_stop, &self), UP_OK);
    WAIT_UNTIL(atomic_load(&self.self_stop_rc) != 1, 10000);
    CHECK_EQ(atomic_load(&self.self_stop_rc), UP_EDEADLK);
    test_sleep_ms(20);
    CHECK_EQ(atomic_load(&self.runs), 1);

    /* One run (period 0). */
    tick once = {0};
    CHECK_EQ(up_timer_start(&once.t, p, 1000000, 0, on_tick, &once), UP_OK);
    test_sleep_ms(30);
    CHECK_EQ(atomic_load(&once.runs), 1);
    CHECK_EQ(up_timer_stop(once.t), UP_OK);

    /* Periods too long for the clock: the first run only, at once, not
     * a run at every tick (a deadline that wrapped round). */
    const uint64_t huge[] = {UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 2 + 1};
    for (int i = 0; i < 3; i++) {
        tick far = {0};
        CHECK_EQ(up_timer_start(&far.t, p, 0, huge[i], on_tick, &far), UP_OK);
        WAIT_UNTIL(atomic_load(&far.runs) >= 1, 10000);
        test_sleep_ms(30);
        CHECK_EQ(atomic_load(&far.runs), 1);
        CHECK_EQ(up_timer_stop(far.t), UP_OK);
    }

    /* Stopped pool: no new timers; a running one stops firing. */
    tick ticker = {0};
    CHECK_EQ(up_timer_start(&ticker.t, p, 1000000, 1000000, on_tick, &ticker), UP_OK);
    WAIT_UNTIL(atomic_load(&ticker.runs) >= 2, 10000);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    unsigned at_stop = atomic_load(&ticker.runs);
    test_sleep_ms(20);
    CHECK_EQ(atomic_load(&ticker.runs), at_stop);
    up_timer *t2;
    CHECK_EQ(up_timer_start(&t2, p, 1000, 1000, on_tick, &ticker), UP_ESTOPPED);
    CHECK_EQ(up_timer_start(&t2, p, 1000, 1000, NULL, &ticker), UP_EINVAL);
    CHECK_EQ(up_timer_stop(NULL), UP_EINVAL);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    CHECK_EQ(up_timer_stop(ticker.t), UP_OK); /* after destroy: frees it */
    printf("periodic: ok (%u skipped)\n", 0u);
}

/* Tasks on the wheel: stop_timeout counts them; destroy cancels them;
 * one accepted before the stop still runs after it, at its time. */
static void test_stop_destroy(void)
{
    up_pool *p = make_pool();
    timer_due never[3] = {0}, later = {0};
    for (int i = 0; i < 3; i++)
        CHECK_EQ(
            up_submit_after(p, i == 0 ? UINT64_MAX : 3600000000000ull, timer_due_task, &never[i]),
            UP_OK);
    CHECK_EQ(timer_due_after(p, &later, 40000000u), UP_OK);
    CHECK_EQ(up_pool_stop_timeout(p, 5000000), UP_ETIMEDOUT);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, 4);
    WAIT_UNTIL(atomic_load(&later.runs) == 1, 10000);
    timer_due_check(&later);
    CHECK_EQ(up_pool_stop_timeout(p, 5000000), UP_ETIMEDOUT);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(atomic_load(&never[i].runs), 1);
        CHECK_EQ(atomic_load(&never[i].cancelled), 1);
    }
    CHECK_EQ(atomic_load(&later.cancelled), 0);
    printf("stop/destroy: ok\n");
}

/* A ticker that keeps the start times of its last three runs. */
typedef struct ticker {
    _Atomic uint64_t runs;
    _Atomic uint64_t at[3]; /* at[runs % 3]: start of that run */
} ticker;

static void on_ticker(void *arg)
{
    ticker *k = arg;
    uint64_t n = atomic_load(&k->runs);
    atomic_store(&k->at[n % 3], test_now_ns());
    atomic_store(&k->runs, n + 1); /* one run at a time: no race on n */
}

static void block_worker(void *arg) { test_sleep_ms(*(unsigned *)arg); }

/* Every deadline first + k * period that the timer reaches is run or
 * counted skipped (wait.h). Bounds from the observed clock:
 *   at most the deadlines up to the end (the first deadline is at least
 *   start0 + first);
 *   at least the deadlines up to the start of the third-to-last run: the
 *   timer thread queued the last run in a pass that began after it had
 *   queued the one before, which it could only do after the run before
 *   that had ended, and a pass counts every deadline up to its clock (the
 *   first deadline is at most start1 + first).
 * stall_ms: the pool's only worker is held that long in the middle, so
 * runs come due while the previous one has not started. */
static void check_deadlines(uint64_t first, uint64_t period, unsigned stall_ms)
{
    up_pool *p = test_one_worker_pool(0, NULL, NULL);
    ticker k = {0};
    up_timer *t;
    uint64_t start0 = test_now_ns();
    CHECK_EQ(up_timer_start(&t, p, first, period, on_ticker, &k), UP_OK);
    uint64_t start1 = test_now_ns();
    WAIT_UNTIL(atomic_load(&k.runs) >= 5, 20000);
    uint64_t before = atomic_load(&k.runs), stalled = before;
    if (stall_ms) {
        CHECK_EQ(up_submit(p, block_worker, &stall_ms), UP_OK);
        test_sleep_ms(stall_ms + 20);
        stalled = atomic_load(&k.runs);
    }
    WAIT_UNTIL(atomic_load(&k.runs) >= stalled + 5, 20000);
    /* The pool stops the timer firing; the runs it queued still run. */
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    uint64_t end = test_now_ns();
    uint64_t runs = atomic_load(&k.runs), skipped = up_timer_skipped(t);
    CHECK_GE(runs, 3);
    uint64_t third_last = atomic_load(&k.at[(runs - 3) % 3]);
    uint64_t hi = (end - start0 - first) / period + 1;
    uint64_t lo = third_last < start1 + first ? 0 : (third_last - start1 - first) / period + 1;
    printf("period %.3f ms, stall %u ms: %llu runs (%llu before the stall, %llu after it) + "
           "%llu skipped = %llu; deadlines passed: at least %llu (to the third-to-last run, "
           "%.1f ms), at most %llu (to the end, %.1f ms)\n",
           (double)period / 1e6, stall_ms, (unsigned long long)runs, (unsigned long long)before,
           (unsigned long long)(runs - stalled), (unsigned long long)skipped,
           (unsigned long long)(runs + skipped), (unsigned long long)lo,
           (double)(third_last - start0) / 1e6, (unsigned long long)hi,
           (double)(end - start0) / 1e6);
    CHECK_GE(runs + skipped, lo);
    CHECK_LE(runs + skipped, hi);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    CHECK_EQ(up_timer_stop(t), UP_OK);
}

/* Deadlines the timer passes while its pool is stalled, and those between
 * the wheel's ticks (a period below 2^20 ns: each pass of the timer
 * thread finds several due, as a late timer thread does). */
static void test_missed(void)
{
    check_deadlines(2000000, 2000000, 150);
    check_deadlines(250000, 250000, 0);
    check_deadlines(1000000, 300000, 60);
}

int main(void)
{
    uint64_t seed = test_seed();
    test_after(seed);
    test_periodic();
    test_missed();
    test_stop_destroy();
    return 0;
}
