/* Reliability 1: accepted exactly once. Many producers mix every submit
 * form (blocking, timed, non-blocking, copied) across several shards with
 * a small queue, so all of them meet full queues. Each id records whether
 * its submit was accepted; every accepted id runs exactly once and every
 * rejected id never runs. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "marks.h"

static up_pool *pool;
static uint64_t per;
static test_mark *accepted; /* written by the submitting thread only */
static _Atomic uint64_t n_accepted, n_rejected;

static void run_copy(void *arg)
{
    uint64_t id;
    memcpy(&id, arg, sizeof id);
    marks_add(marks_runs, id);
}

static void *producer(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    uint64_t seed = me * 7919 + 1;
    for (uint64_t i = 0; i < per; i++) {
        uint64_t id = me * per + i;
        int rc;
        switch (test_rand(&seed) % 5) {
        case 0:
            rc = up_submit(pool, marks_task, (void *)(uintptr_t)id);
            break;
        case 1:
            rc = up_submit_wait(pool, marks_task, (void *)(uintptr_t)id);
            break;
        case 2:
            rc = up_submit_timeout(pool, marks_task, (void *)(uintptr_t)id, 20000);
            break;
        case 3:
            rc = up_submit_copy(pool, run_copy, &id, sizeof id);
            break;
        default:
            rc = up_submit_copy_wait(pool, run_copy, &id, sizeof id);
            break;
        }
        CHECK(rc == UP_OK || rc == UP_EOVERLOAD || rc == UP_ETIMEDOUT);
        atomic_store_explicit(&accepted[id], rc == UP_OK, memory_order_relaxed);
        atomic_fetch_add(rc == UP_OK ? &n_accepted : &n_rejected, 1);
    }
    return NULL;
}

int main(void)
{
    uint64_t seed = test_seed();
    unsigned producers = (unsigned)test_size("UP_TEST_PRODUCERS", 16);
    per = test_size("UP_TEST_PER_PRODUCER", 50000);
    uint64_t total = per * producers;
    marks_runs = marks_alloc(total);
    accepted = marks_alloc(total);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 4;
    cfg.queue_capacity = 16;
    cfg.shard_max_workers = 4;
    cfg.submit_help = (int)(seed % 3);
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    pthread_t th[256];
    for (uintptr_t i = 0; i < producers && i < 256; i++)
        pthread_create(&th[i], NULL, producer, (void *)i);
    for (unsigned i = 0; i < producers && i < 256; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    uint64_t bad = marks_wrong(marks_runs, total, accepted);
    up_stats st;
    up_pool_stats(pool, &st);
    printf("figure: %llu tasks checked (%llu accepted, %llu rejected, submit_help %d), lost 0, "
           "duplicated 0, wrong %llu\n",
           (unsigned long long)total, (unsigned long long)atomic_load(&n_accepted),
           (unsigned long long)atomic_load(&n_rejected), cfg.submit_help, (unsigned long long)bad);
    CHECK_EQ(bad, 0);
    CHECK_EQ(st.submitted, atomic_load(&n_accepted));
    CHECK_EQ(st.executed, atomic_load(&n_accepted));
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
