/* Reliability 14: oversubscribed fairness. Four worker threads per core in
 * every shard, trees of nested submits started from one thread per shard;
 * everything completes, and every shard makes progress: the executed
 * counts of the busiest and the least busy shard are within a factor of
 * 20. The submitters go on for at least 300 ms: a run of a few
 * milliseconds (200 roots take about 30 on 2 CPUs) is decided by which
 * workers happen to wake first, not by how the shards share the CPUs. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

static up_pool *pool;
static _Atomic uint64_t done;

static void node(void *arg)
{
    uintptr_t depth = (uintptr_t)arg;
    test_spin(200);
    if (depth > 0) {
        CHECK_EQ(up_submit_wait(pool, node, (void *)(depth - 1)), UP_OK);
        CHECK_EQ(up_submit_wait(pool, node, (void *)(depth - 1)), UP_OK);
    }
    atomic_fetch_add(&done, 1);
}

static int roots;
static uint64_t started_ns;
static _Atomic uint64_t submitted;

#define MIN_RUN_NS 300000000u

static void *root_submitter(void *arg)
{
    (void)arg;
    for (int i = 0; i < roots || test_now_ns() - started_ns < MIN_RUN_NS; i++) {
        CHECK_EQ(up_submit_wait(pool, node, (void *)(uintptr_t)9), UP_OK);
        atomic_fetch_add(&submitted, 1);
    }
    return NULL;
}

int main(void)
{
    up_config cfg;
    up_config_init(&cfg);
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    unsigned shards = up_pool_shards(pool);
    up_pool_destroy(pool);
    /* Fairness between shards needs two of them: a machine with one
     * shared cache gets a plan of two shards over its CPUs. */
    if (shards < 2)
        cfg.shards = 2;
    cfg.shard_min_workers = 4; /* four threads per core (one core per shard here) */
    cfg.shard_max_workers = 4;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    shards = up_pool_shards(pool);
    if (shards < 2) {
        printf("skipped: one shard, so no progress between shards to compare\n");
        CHECK_EQ(up_pool_destroy(pool), UP_OK);
        return TEST_SKIP;
    }
    roots = (int)test_size("UP_TEST_FAIR_ROOTS", 200);
    pthread_t th[64];
    unsigned nsub = shards < 64 ? shards : 64;
    started_ns = test_now_ns();
    for (unsigned i = 0; i < nsub; i++)
        pthread_create(&th[i], NULL, root_submitter, NULL);
    for (unsigned i = 0; i < nsub; i++)
        pthread_join(th[i], NULL);
    uint64_t want = atomic_load(&submitted) * 1023; /* a full binary tree of depth 9 */
    WAIT_UNTIL(atomic_load(&done) == want, 120000);
    CHECK_EQ(atomic_load(&done), want);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (unsigned s = 0; s < shards; s++) {
        up_stats st;
        CHECK_EQ(up_pool_shard_stats(pool, s, &st), UP_OK);
        lo = st.executed < lo ? st.executed : lo;
        hi = st.executed > hi ? st.executed : hi;
    }
    printf("figure: %llu nested tasks on %u shards x 4 workers, per-shard executed %llu..%llu "
           "(ratio %.2f, bound 20)\n",
           (unsigned long long)want, shards, (unsigned long long)lo, (unsigned long long)hi,
           lo ? (double)hi / (double)lo : 0.0);
    CHECK_GT(lo, 0);
    CHECK_LE(hi, 20 * lo);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
