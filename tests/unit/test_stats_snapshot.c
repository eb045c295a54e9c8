/* A stats snapshot taken while tasks come and go never shows more tasks
 * executed than submitted. Submitters outside the pool and tasks that
 * submit from inside it (their children go through worker deques, where a
 * thief may run them at once) keep every counter moving while one thread
 * reads up_pool_stats in a loop. Before the fix, the snapshot read each
 * shard's submitted count before its workers' executed counts, and a deque
 * push was counted only after it was visible. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

#define SUBMITTERS 2
#define CHILDREN   4

static up_pool *pool;
static _Atomic int stop_all;
static _Atomic uint64_t ran;

static void leaf(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static void parent(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
    for (int i = 0; i < CHILDREN; i++)
        if (up_submit(pool, leaf, NULL) != UP_OK)
            break;
}

static void *submitter(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_all))
        (void)up_submit(pool, parent, NULL); /* UP_EOVERLOAD is fine: retry */
    return NULL;
}

int main(void)
{
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.queue_capacity = 1024;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    pthread_t th[SUBMITTERS];
    for (int i = 0; i < SUBMITTERS; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, submitter, NULL), 0);
    uint64_t snapshots = 0, bad = 0, last_executed = 0;
    uint64_t t_end = test_now_ns() + 1500000000ull;
    while (test_now_ns() < t_end) {
        up_stats st;
        up_pool_stats(pool, &st);
        if (st.executed > st.submitted) {
            if (!bad)
                fprintf(stderr, "snapshot %llu: executed %llu > submitted %llu\n",
                        (unsigned long long)snapshots, (unsigned long long)st.executed,
                        (unsigned long long)st.submitted);
            bad++;
        }
        last_executed = st.executed;
        snapshots++;
    }
    atomic_store(&stop_all, 1);
    for (int i = 0; i < SUBMITTERS; i++)
        CHECK_EQ(pthread_join(th[i], NULL), 0);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    up_stats st;
    up_pool_stats(pool, &st);
    fprintf(stderr, "%llu snapshots, %llu bad; %llu tasks ran\n", (unsigned long long)snapshots,
            (unsigned long long)bad, (unsigned long long)atomic_load(&ran));
    CHECK_GT(last_executed, 0); /* the snapshots saw tasks moving */
    CHECK_EQ(bad, 0);
    CHECK_EQ(st.executed, st.submitted); /* and all of them ran in the end */
    CHECK_EQ(st.executed, atomic_load(&ran));
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
