/* Reliability 5: a random mix of lifecycle calls from many threads on a
 * few shared pools (submit in every form, stats, stop, stop-and-wait,
 * stop with a timeout, destroy and re-create) under a watchdog: if no call
 * returns for UP_TEST_WATCHDOG_S seconds (30, longer under a sanitizer)
 * the watchdog aborts the run, so a hang fails. A busy machine slows the
 * run, but it keeps returning from calls. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"

#define POOLS 3

typedef struct slot {
    pthread_rwlock_t use; /* writers replace the pool, readers use it */
    up_pool *p;
} slot;

static slot slots[POOLS];
static _Atomic uint64_t ops;
static _Atomic uint64_t steps; /* calls returned: the watchdog's progress */
static uint64_t all_steps;     /* what steps reaches at the end */
static unsigned stall_s;

static void *watchdog(void *arg)
{
    (void)arg;
    WAIT_PROGRESS(atomic_load(&steps), all_steps, stall_s * 1000);
    return NULL;
}

static void *mixer(void *arg)
{
    uint64_t seed = (uint64_t)(uintptr_t)arg;
    int n = (int)test_size("UP_TEST_LIFECYCLE_OPS", 3000);
    for (int i = 0; i < n; i++) {
        slot *s = &slots[test_rand(&seed) % POOLS];
        unsigned op = (unsigned)(test_rand(&seed) % 100);
        if (op < 3) {
            /* Replace the pool: exclusive use. */
            pthread_rwlock_wrlock(&s->use);
            CHECK_EQ(up_pool_destroy(s->p), UP_OK);
            CHECK_EQ(up_pool_create(&s->p, NULL), UP_OK);
            pthread_rwlock_unlock(&s->use);
            atomic_fetch_add(&steps, 1);
            continue;
        }
        pthread_rwlock_rdlock(&s->use);
        int rc = UP_OK;
        if (op < 60)
            rc = up_submit(s->p, counted_task, NULL);
        else if (op < 80)
            rc = up_submit_timeout(s->p, counted_task, NULL, 100000);
        else if (op < 85)
            up_pool_stop(s->p);
        else if (op < 88)
            rc = up_pool_stop_timeout(s->p, 1000000);
        else if (op < 90)
            rc = up_pool_stop_and_wait(s->p);
        else {
            up_stats st;
            up_pool_stats(s->p, &st);
            CHECK_LE(st.executed, st.submitted);
        }
        CHECK(rc == UP_OK || rc == UP_ESTOPPED || rc == UP_EOVERLOAD || rc == UP_ETIMEDOUT);
        pthread_rwlock_unlock(&s->use);
        atomic_fetch_add(&ops, 1);
        atomic_fetch_add(&steps, 1);
    }
    return NULL;
}

int main(void)
{
    uint64_t seed = test_seed();
    for (int i = 0; i < POOLS; i++) {
        pthread_rwlock_init(&slots[i].use, NULL);
        CHECK_EQ(up_pool_create(&slots[i].p, NULL), UP_OK);
    }
    stall_s = (unsigned)test_param("UP_TEST_WATCHDOG_S", 30);
    all_steps = 12 * test_size("UP_TEST_LIFECYCLE_OPS", 3000) + POOLS;
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    pthread_t th[12];
    for (int i = 0; i < 12; i++)
        pthread_create(&th[i], NULL, mixer, (void *)(uintptr_t)(seed + (uint64_t)i * 1000003u));
    for (int i = 0; i < 12; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < POOLS; i++) {
        CHECK_EQ(up_pool_destroy(slots[i].p), UP_OK);
        atomic_fetch_add(&steps, 1);
    }
    pthread_join(wd, NULL);
    printf("figure: %llu lifecycle operations from 12 threads on %d pools, %llu tasks ran, "
           "hangs 0 (watchdog: %u s without a call returning)\n",
           (unsigned long long)atomic_load(&ops), POOLS,
           (unsigned long long)atomic_load(&counted_ran), stall_s * test_time_factor());
    return 0;
}
