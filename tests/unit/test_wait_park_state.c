/* The runtime's thread-local state of a task goes with it when it parks
 * (pool_internal.h: up__task_tls). 1: while a group task is parked, the
 * next task on its worker is in no group, and may go into the group whose
 * only slot the parked task holds (once wrongly UP_EDEADLK: the thread's
 * chain of group frames still held the parked task's). 2: while a timer's
 * run is parked, another task on its worker stopping that timer waits for
 * the run instead of being refused as if it were the run itself. 3: group
 * tasks that park and resume, often on another worker, are still in their
 * group after each resume (once the frame chain stayed with the first
 * thread, and the task's end wrote it from the second: ThreadSanitizer
 * "TLS of thread"). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <ultrapool/group.h>
#include <ultrapool/wait.h>

#include "check.h"
#include "pool_helpers.h"

#define MS UINT64_C(1000000)

static uint64_t parked_now(up_pool *p)
{
    up_stats st;
    up_pool_stats(p, &st);
    return st.tasks_parked;
}

static int one_parked(void *p) { return parked_now(p) >= 1; }

/* Waits until one task is parked; 0 when none parks within 10 s (times
 * test_time_factor(); the pool cannot park here: no stacks). Not
 * WAIT_UNTIL, which fails the test: not parking is a skip. */
static int wait_parked(up_pool *p) { return test_poll_until(one_parked, p, 10000); }

/* 1. The group task stays parked on ev1 until the test has seen what it
 * checks (a short sleep ended before a slow machine's test thread looked). */
static up_group *g1;
static up_event *ev1;
static _Atomic int g1_parked, g1_ok;

static int sleeper(void *arg)
{
    (void)arg;
    int in = up_group_current() == g1;
    atomic_store(&g1_parked, 1);
    CHECK_EQ(up_event_wait(ev1), UP_OK);
    atomic_store(&g1_ok, in && up_group_current() == g1);
    return 0;
}

static int noop(void *arg)
{
    (void)arg;
    return 0;
}

static up_group *p_current = (up_group *)1;
static _Atomic int p_go = 1, p_looked, p_done;

static void outsider(void *arg)
{
    (void)arg;
    p_current = up_group_current();
    atomic_store(&p_looked, 1);
    atomic_store(&p_go, up_group_go(g1, noop, NULL));
    atomic_store(&p_done, 1);
}

static int parked_group_task(void)
{
    up_pool *p = test_one_worker_pool(0, NULL, NULL);
    CHECK_EQ(up_event_create(&ev1, p), UP_OK);
    CHECK_EQ(up_group_create(&g1, p, 1), UP_OK);
    CHECK_EQ(up_group_go(g1, sleeper, NULL), UP_OK);
    if (!wait_parked(p)) {
        printf("1: the task did not park; skipped\n");
        CHECK_EQ(up_event_set(ev1), UP_OK);
        CHECK_EQ(up_group_wait(g1), UP_OK);
        up_group_destroy(g1);
        up_pool_destroy(p);
        up_event_destroy(ev1);
        return 0;
    }
    /* The only worker runs outsider while sleeper is parked. */
    CHECK_EQ(up_submit(p, outsider, NULL), UP_OK);
    /* Its up_group_go waits for the slot the parked task holds. */
    WAIT_UNTIL(atomic_load(&p_looked), 30000);
    CHECK_EQ(up_event_set(ev1), UP_OK);
    WAIT_UNTIL(atomic_load(&p_done), 30000);
    CHECK_EQ(up_group_wait(g1), UP_OK);
    printf("1: outsider saw group %p (want NULL), go into the full group = %d (want 0); sleeper "
           "in its group across the park: %d\n",
           (void *)p_current, atomic_load(&p_go), atomic_load(&g1_ok));
    CHECK(p_current == NULL);
    CHECK_EQ(atomic_load(&p_go), UP_OK);
    CHECK_EQ(atomic_load(&g1_ok), 1);
    CHECK_EQ(up_group_destroy(g1), UP_OK);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    CHECK_EQ(up_event_destroy(ev1), UP_OK);
    return 1;
}

/* 2. */
static up_timer *t2;
static pthread_t run_thread;
static _Atomic int run_parked, run_done, stop_rc = 1, stopper_tries, stopper_ran;

static void timer_fn(void *arg)
{
    (void)arg;
    run_thread = pthread_self();
    atomic_store(&run_parked, 1);
    up_sleep_ns(100 * MS);
    atomic_store(&run_done, 1);
}

/* Stops t2 if it runs on the thread where the run parked. */
static void stopper(void *arg)
{
    (void)arg;
    if (!pthread_equal(pthread_self(), run_thread)) {
        atomic_fetch_add(&stopper_tries, 1);
        return;
    }
    atomic_store(&stop_rc, up_timer_stop(t2));
    atomic_store(&stopper_ran, 1);
}

static int parked_timer_run(void)
{
    up_pool *p = test_fixed_pool(2);
    CHECK_EQ(up_timer_start(&t2, p, MS, 0, timer_fn, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&run_parked), 10000);
    int parked = atomic_load(&run_parked) && wait_parked(p);
    /* Until a stopper lands on the run's thread while the run sleeps. */
    while (parked && !atomic_load(&stopper_ran) && !atomic_load(&run_done)) {
        int before = atomic_load(&stopper_tries);
        CHECK_EQ(up_submit(p, stopper, NULL), UP_OK);
        WAIT_UNTIL(atomic_load(&stopper_ran) || atomic_load(&stopper_tries) != before, 10000);
    }
    up_pool_stop_and_wait(p);
    int ran = atomic_load(&stopper_ran);
    printf("2: a stopper on the parked run's thread: %s, stop = %d (want 0), after %d on the other "
           "worker\n",
           ran ? "ran" : "never (the run ended first)", atomic_load(&stop_rc),
           atomic_load(&stopper_tries));
    if (ran) {
        CHECK_EQ(atomic_load(&stop_rc), UP_OK);
        CHECK_EQ(atomic_load(&run_done), 1);
    } else {
        CHECK_EQ(up_timer_stop(t2), UP_OK);
    }
    up_pool_destroy(p);
    return ran;
}

/* 3. */
#define ROUNDS 6
static up_group *g3;
static _Atomic unsigned wrong, resumes;

static int hopper(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    for (unsigned k = 0; k < ROUNDS; k++) {
        if (up_group_current() != g3)
            atomic_fetch_add(&wrong, 1);
        if ((i + k) & 1)
            up_yield();
        else
            up_sleep_ns((i + k) % 3 * MS / 2);
        atomic_fetch_add(&resumes, 1);
    }
    if (up_group_current() != g3)
        atomic_fetch_add(&wrong, 1);
    return 0;
}

static void plain(void *arg)
{
    (void)arg;
    if (up_group_current() != NULL)
        atomic_fetch_add(&wrong, 1);
}

static void hopping_group_tasks(void)
{
    up_pool *p = test_fixed_pool(3);
    CHECK_EQ(up_group_create(&g3, p, 0), UP_OK);
    unsigned n = (unsigned)test_size("UP_TEST_PARK_STATE_TASKS", 400);
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ(up_group_go(g3, hopper, (void *)(uintptr_t)i), UP_OK);
        CHECK_EQ(up_submit_wait(p, plain, NULL), UP_OK);
    }
    CHECK_EQ(up_group_wait(g3), UP_OK);
    up_pool_stop_and_wait(p);
    up_stats st;
    up_pool_stats(p, &st);
    printf("3: %u group tasks, %u resumes (%llu parked ones), %u out of their group\n", n,
           atomic_load(&resumes), (unsigned long long)st.tasks_resumed, atomic_load(&wrong));
    CHECK_EQ(atomic_load(&wrong), 0);
    CHECK_EQ(atomic_load(&resumes), n * ROUNDS);
    CHECK_EQ(up_group_destroy(g3), UP_OK);
    up_pool_destroy(p);
}

int main(void)
{
    int seen = parked_group_task();
    seen += parked_timer_run();
    hopping_group_tasks();
    if (!seen) {
        printf("no task parked where this test needs it: skipped\n");
        return TEST_SKIP;
    }
    return 0;
}
