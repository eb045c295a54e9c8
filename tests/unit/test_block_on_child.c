/* A task that blocks, without helping, until its own nested child runs:
 * as many such tasks as the pool has workers, each child in its parent's
 * deque. No worker is searching and the CPUs are idle, so only a new
 * worker can steal the children: the monitor must count tasks waiting in
 * deques as backlog and add one. Before it did, two roots on a pool of
 * two workers waited for ever. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

enum { ROOTS = 2 };

static up_pool *pool;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int posted[ROOTS];
static _Atomic int done;

static void child(void *arg)
{
    long i = (long)arg;
    pthread_mutex_lock(&mu);
    posted[i] = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void root(void *arg)
{
    long i = (long)arg;
    CHECK_EQ(up_submit(pool, child, arg), UP_OK); /* nested: this worker's deque */
    pthread_mutex_lock(&mu);
    while (!posted[i])
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    atomic_fetch_add(&done, 1);
}

int main(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = ROOTS;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    test_sleep_ms(50); /* both workers started and idle */
    uint64_t rounds = test_size("UP_TEST_BLOCK_ROUNDS", 20);
    for (uint64_t r = 0; r < rounds; r++) {
        pthread_mutex_lock(&mu);
        for (int i = 0; i < ROOTS; i++)
            posted[i] = 0;
        pthread_mutex_unlock(&mu);
        atomic_store(&done, 0);
        for (long i = 0; i < ROOTS; i++)
            CHECK_EQ(up_submit(pool, root, (void *)i), UP_OK);
        WAIT_UNTIL(atomic_load(&done) == ROOTS, 20000);
        CHECK_EQ(atomic_load(&done), ROOTS);
    }
    up_stats st;
    up_pool_stats(pool, &st);
    printf("%llu rounds of %d roots blocked on their own nested children: all done "
           "(workers peak %u, spawned %llu)\n",
           (unsigned long long)rounds, ROOTS, st.workers_peak, (unsigned long long)st.spawned);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
