/* up_pool_reserve: it wakes and starts workers within the per-shard and
 * global caps and returns how many workers are available (idle or
 * starting) afterwards, at most the number asked for. A request far above
 * the caps (UINT_MAX) is bounded by them: it returns the capped count, and
 * in about the time the few thread creations take, not after billions of
 * attempts, also while the workers it started retire as fast as it starts
 * them. The workers it counts are there when it returns: none retires
 * while it runs, even when starting threads takes far longer than the
 * extra idle timeout (pthread_create is wrapped at link time to be slow),
 * so up_pool_stats agrees with it. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "gate.h"
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
    /* Nobody retires during the test: neither above the floor nor beyond
     * one per CPU (extra_idle_timeout, 50 ms by default, would let a
     * worker the reserve started retire before the check on a slow
     * machine), unless the test asks for it. */
    cfg.idle_timeout_ns = 60ull * 1000000000u;
    cfg.extra_idle_timeout_ns = extra_idle_ns ? extra_idle_ns : cfg.idle_timeout_ns;
    return test_pool_create(&cfg);
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
    test_gate_wait_running(&g1, 1);
    CHECK_EQ(up_submit(p, test_gate_task, &g2), UP_OK);
    test_gate_wait_running(&g2, 1);
    /* The other four settle into searching or parked. */
    up_stats st;
    WAIT_UNTIL((up_pool_stats(p, &st), st.parked + st.searching == 4), 10000);
    unsigned got = up_pool_reserve(p, UINT_MAX);
    printf("two of six busy: reserve(UINT_MAX) = %u\n", got);
    CHECK_EQ(got, 4);
    test_gate_open(&g1);
    test_gate_open(&g2);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Workers beyond one per CPU that retire after 1 us idle, once no reserve
 * holds them: the reserve returns, having started at most the cap's worth
 * of threads (before retirement was held, each retirement gave its place
 * under the cap back while the reserve still started threads). A watchdog
 * fails the test if it does not return. */
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
    CHECK_LE(got, 64);
    CHECK_LE(st.spawned, 64 + 64); /* the floor's start, then at most the cap's room */
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* pthread_create, slowed while create_delay_ms is set; each slowed call
 * first reads the pool's retired count (the reserve is running then). */
int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic unsigned create_delay_ms, slowed_calls;
static _Atomic uint64_t retired_while_creating, last_create_ns;
static up_pool *_Atomic watched;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    unsigned ms = atomic_load(&create_delay_ms);
    if (ms) {
        up_stats st;
        up_pool_stats(atomic_load(&watched), &st);
        if (st.retired > atomic_load(&retired_while_creating))
            atomic_store(&retired_while_creating, st.retired);
        atomic_fetch_add(&slowed_calls, 1);
        test_sleep_ms(ms);
    }
    int rc = __real_pthread_create(t, a, fn, arg);
    atomic_store(&last_create_ns, test_now_ns());
    return rc;
}

/* Thread creation far slower than the extra idle timeout: before the fix
 * the first workers the reserve started (beyond one per CPU) retired while
 * it still started others, so it returned a count of threads started and
 * up_pool_stats showed fewer workers (1024 against 261 on a default pool).
 * Each creation takes 8 ms here and a worker beyond one per CPU retires
 * after 2 ms idle: none may retire before the reserve returns. */
static void slow_creation(void)
{
    unsigned cpus;
    {
        up_pool *probe = make(1, 1, 0);
        cpus = up_pool_cpus(probe);
        CHECK_EQ(up_pool_destroy(probe), UP_OK);
    }
    unsigned cap = cpus + 12;
    up_pool *p = make_with(1, cap, 0, 2000000);
    atomic_store(&watched, p);
    atomic_store(&create_delay_ms, 8);
    unsigned got = up_pool_reserve(p, UINT_MAX);
    atomic_store(&create_delay_ms, 0);
    up_stats st;
    up_pool_stats(p, &st);
    uint64_t read = test_now_ns(), last = atomic_load(&last_create_ns);
    printf("creation at 8 ms, retirement at 2 ms idle: reserve(UINT_MAX) = %u after %u slowed "
           "creations; retired while it ran: %llu; then %u workers, %llu retired (stats read "
           "%.2f ms after the last creation)\n",
           got, atomic_load(&slowed_calls),
           (unsigned long long)atomic_load(&retired_while_creating), st.workers,
           (unsigned long long)st.retired, (double)(read - last) / 1e6);
    CHECK_EQ(got, cap);
    CHECK_EQ(atomic_load(&retired_while_creating), 0);
    /* The hold lasts 2 ms after the return: when the read came in that
     * time, the count and the stats agree exactly. */
    if (read - last < 2000000) { /* the reserve returned after the last creation */
        CHECK_EQ(st.workers, got);
        CHECK_EQ(st.retired, 0);
    } else {
        printf("the stats were read too late to compare them with the count\n");
    }
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
    slow_creation();
    return 0;
}
