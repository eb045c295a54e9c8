/* Adaptive sizing: the floor is started at creation and kept; workers are
 * added when tasks block (never above the caps); workers above the floor
 * retire after the idle timeout. */
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

static _Atomic int ran;

static void sleeper(void *arg)
{
    (void)arg;
    test_sleep_ms(20);
    atomic_fetch_add(&ran, 1);
}

int main(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 2;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = 8;
    cfg.max_workers = 12;
    cfg.idle_timeout_ns = 100000000ull; /* 100 ms */
    cfg.spawn_delay_ns = 1000000ull;    /* 1 ms */
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.workers, 2); /* the floor, started at creation */

    /* 200 tasks of 20 ms: with only the floor this takes 2 s; growing to
     * the cap of 12 takes a fraction of that. */
    int n = (int)test_size("UP_TEST_SLEEPERS", 200);
    uint64_t t0 = test_now_ns();
    for (int i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, sleeper, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&ran) == n, 20000);
    double secs = (double)(test_now_ns() - t0) / 1e9;
    CHECK_EQ(atomic_load(&ran), n);
    up_pool_stats(p, &st);
    printf("grew to %u workers (cap 12) for %d blocking tasks; %.2f s\n", st.workers_peak, n, secs);
    CHECK_GT(st.workers_peak, 2);
    CHECK_LE(st.workers_peak, 12);

    /* Quiet: everything above the floor retires after ~100 ms. The
     * counters are read one by one, and a retiring worker leaves `workers`
     * a moment before it counts in `retired` (a spawner likewise counts in
     * `workers` before `spawned`), so wait for all three to settle rather
     * than read them at the instant `workers` drops. */
    WAIT_UNTIL((up_pool_stats(p, &st), st.workers == 2 && st.retired >= st.workers_peak - 2 &&
                                           st.spawned >= st.workers_peak),
               5000);
    CHECK_EQ(st.workers, 2);
    CHECK_GE(st.retired, st.workers_peak - 2);
    /* Every worker ever counted was spawned. */
    CHECK_GE(st.spawned, st.workers_peak);
    /* And the floor stays. */
    test_sleep_ms(300);
    up_pool_stats(p, &st);
    CHECK_EQ(st.workers, 2);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("retired back to the floor of 2 (%llu retirements)\n", (unsigned long long)st.retired);
    return 0;
}
