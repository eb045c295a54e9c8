/* In a program that uses the parallel layer, a plain pool task's waits
 * still park the task (on a pool capped at one worker, 200 sleeps of
 * 20 ms overlap), while the waits of a region member and of a layer task
 * block their thread: the layer's per-thread state would not follow a
 * parked task. */
#include <stdatomic.h>

#include <ultrapool/parallel.h>
#include <ultrapool/wait.h>

#include "check.h"
#include "pool_helpers.h"

#define SLEEPERS 200
#define SLEEP_NS UINT64_C(20000000)

static _Atomic unsigned slept;
static uint64_t slept_from[SLEEPERS], slept_to[SLEEPERS]; /* each sleeper's own */

static void sleeper(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    slept_from[i] = test_now_ns();
    CHECK_EQ(up_sleep_ns(SLEEP_NS), UP_OK);
    slept_to[i] = test_now_ns();
    atomic_fetch_add(&slept, 1);
}

/* The most sleeps that were under way at one moment. On one worker whose
 * sleeps block its thread, each starts after the previous one ended: 1. */
static unsigned most_at_once(void)
{
    unsigned most = 0;
    for (unsigned i = 0; i < SLEEPERS; i++) {
        unsigned n = 0;
        for (unsigned j = 0; j < SLEEPERS; j++)
            n += slept_from[j] <= slept_from[i] && slept_from[i] < slept_to[j];
        most = n > most ? n : most;
    }
    return most;
}

static uint64_t resumed(up_pool *p)
{
    up_stats st;
    up_pool_stats(p, &st);
    return st.tasks_resumed;
}

static _Atomic int slept_short; /* a blocking sleep returned early */

static void layer_task(void *arg)
{
    (void)arg;
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_sleep_ns(1000000), UP_OK);
    if (test_now_ns() - t0 < 1000000)
        atomic_store(&slept_short, 1);
}

static void region(void *arg)
{
    (void)arg;
    layer_task(NULL); /* the member itself */
    if (up_single()) {
        for (int i = 0; i < 4; i++)
            CHECK_EQ(up_task(layer_task, NULL, NULL), UP_OK);
        up_taskwait();
    }
}

int main(void)
{
    /* Plain tasks park, layer linked or not. */
    up_pool *p = test_one_worker_pool(0, NULL, NULL);
    uint64_t t0 = test_now_ns();
    for (uintptr_t i = 0; i < SLEEPERS; i++)
        CHECK_EQ(up_submit(p, sleeper, (void *)i), UP_OK);
    WAIT_UNTIL(atomic_load(&slept) == SLEEPERS, 30000);
    uint64_t took = test_now_ns() - t0;
    CHECK_EQ(atomic_load(&slept), SLEEPERS);
    uint64_t r = resumed(p);
    unsigned most = most_at_once();
    printf("figure: %d sleeps of 20 ms on one worker took %.0f ms, %llu parked and resumed, "
           "up to %u at once\n",
           SLEEPERS, (double)took / 1e6, (unsigned long long)r, most);
    CHECK_EQ(r, SLEEPERS);
    /* They overlapped, as the sleeps themselves saw it: the total time
     * depends on how much CPU the machine gives the worker, not on
     * whether the thread blocked. */
    CHECK_GE(most, 2);
    CHECK_EQ(up_pool_destroy(p), UP_OK);

    /* Region members and layer tasks block instead. */
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    uint64_t before = resumed(p);
    CHECK_EQ(up_parallel(p, 2, region, NULL), UP_OK);
    CHECK_EQ(resumed(p), before);
    CHECK_EQ(atomic_load(&slept_short), 0);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    return 0;
}
