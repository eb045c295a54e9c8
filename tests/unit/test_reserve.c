/* up_pool_reserve: it wakes and starts workers within the per-shard and
 * global caps and returns how many workers are available (idle or
 * starting) afterwards, at most the number asked for. A request far above
 * the caps (UINT_MAX) is bounded by them: it returns the capped count, and
 * in about the time the few thread creations take, not after billions of
 * attempts, also while the workers it started retire as fast as it starts
 * them. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "pool_helpers.h"

/* extra_idle_ns 0: the default extra idle timeout. */
static up_pool *make_with(unsigned shards, unsigned shard_max, unsigned max_workers,
                          uint64_t extra_idle_ns)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = shards;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = shard_max;
    cfg.max_workers = max_workers;
    cfg.idle_timeout_ns = 60ull * 1000000000u; /* nobody retires during the test */
    if (extra_idle_ns)
        cfg.extra_idle_timeout_ns = extra_idle_ns; /* but those beyond one per CPU */
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    return p;
}

static up_pool *make(unsigned shards, unsigned shard_max, unsigned max_workers)
{
    return make_with(shards, shard_max, max_workers, 0);
}

static unsigned workers_of(up_pool *p)
{
    up_stats st;
    up_pool_stats(p, &st);
    return st.workers;
}

/* Asks for far more than the caps allow; the answer is the capped count. */
static void capped(unsigned shards, unsigned shard_max, unsigned max_workers, unsigned want)
{
    up_pool *p = make(shards, shard_max, max_workers);
    uint64_t t0 = test_now_ns();
    unsigned got = up_pool_reserve(p, UINT_MAX);
    double ms = (double)(test_now_ns() - t0) / 1e6;
    printf("shards %u x max %u, global %u: reserve(UINT_MAX) = %u in %.1f ms (%u workers)\n",
           shards, shard_max, max_workers, got, ms, workers_of(p));
    CHECK_EQ(got, want);
    CHECK_EQ(workers_of(p), want);
    /* Asking again finds everyone there already, and starts nobody. */
    up_stats before, after;
    up_pool_stats(p, &before);
    CHECK_EQ(up_pool_reserve(p, UINT_MAX), want);
    up_pool_stats(p, &after);
    CHECK_EQ(after.spawned, before.spawned);
    CHECK_EQ(up_pool_reserve(p, 2), 2);
    CHECK_EQ(up_pool_reserve(p, 0), 0);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Busy workers are not available: with two of six held in tasks, a
 * request for everything gets the other four. */
static void busy_not_counted(void)
{
    up_pool *p = make(1, 8, 6);
    static test_gate g1, g2;
    test_gate_reset(&g1);
    test_gate_reset(&g2);
    CHECK_EQ(up_pool_reserve(p, 6), 6);
    CHECK_EQ(up_submit(p, test_gate_task, &g1), UP_OK);
    test_gate_wait_running(&g1);
    CHECK_EQ(up_submit(p, test_gate_task, &g2), UP_OK);
    test_gate_wait_running(&g2);
    /* The other four settle into searching or parked. */
    up_stats st;
    for (unsigned ms = 0; ms < 10000; ms++) {
        up_pool_stats(p, &st);
        if (st.parked + st.searching == 4)
            break;
        test_sleep_ms(1);
    }
    CHECK_EQ(st.parked + st.searching, 4);
    unsigned got = up_pool_reserve(p, UINT_MAX);
    printf("two of six busy: reserve(UINT_MAX) = %u\n", got);
    CHECK_EQ(got, 4);
    test_gate_open(&g1);
    test_gate_open(&g2);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Workers beyond one per CPU that retire after 1 us: each retirement
 * gives its place under the cap back while the reserve still starts
 * threads. The reserve returns anyway, having started at most the cap's
 * worth of threads. A watchdog fails the test if it does not return. */
static _Atomic int reserve_returned;

static void *watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < 600 && !atomic_load(&reserve_returned); i++)
        test_sleep_ms(100);
    if (!atomic_load(&reserve_returned)) {
        fprintf(stderr, "up_pool_reserve(UINT_MAX) still running after 60 s\n");
        abort();
    }
    return NULL;
}

static void retiring_while_reserving(void)
{
    up_pool *p = make_with(1, 64, 0, 1000);
    pthread_t dog;
    CHECK_EQ(pthread_create(&dog, NULL, watchdog, NULL), 0);
    unsigned got = up_pool_reserve(p, UINT_MAX);
    atomic_store(&reserve_returned, 1);
    pthread_join(dog, NULL);
    up_stats st;
    up_pool_stats(p, &st);
    printf("retiring at 1 us: reserve(UINT_MAX) = %u, %llu started, %llu retired\n", got,
           (unsigned long long)st.spawned, (unsigned long long)st.retired);
    CHECK(got <= 64);
    CHECK(st.spawned <= 64 + 64); /* the floor's start, then at most the cap's room */
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    CHECK_EQ(up_pool_reserve(NULL, UINT_MAX), 0);
    capped(2, 4, 6, 6); /* the global cap binds */
    capped(2, 3, 0, 6); /* the per-shard caps bind */
    capped(3, 1, 0, 3); /* one each */
    capped(1, 4, 0, 4); /* one shard: the old bound of 2n + shards wrapped to UINT_MAX */
    busy_not_counted();
    retiring_while_reserving();
    return 0;
}
