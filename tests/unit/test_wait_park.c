/* Stackful waits inside pool tasks park the task, not the thread: on a
 * pool capped at one worker, 1000 sleeping tasks overlap, a waiter and its
 * setter queued behind it both finish, a yield lets a queued task run
 * first; a task resumed on another worker finds its stack intact and the
 * new worker's state; timed waits time out or succeed; a destroy resumes
 * each parked waiter once, cancelled; racing set/reset resumes each
 * waiter exactly once. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "pool_helpers.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static up_pool *make_pool(unsigned workers, up_config *cfgp)
{
    up_config cfg;
    if (cfgp)
        cfg = *cfgp;
    else
        up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = cfgp ? cfgp->shard_min_workers : 1;
    cfg.shard_max_workers = workers;
    cfg.max_workers = workers;
    return test_pool_create(&cfg);
}

#define SECOND UINT64_C(1000000000)

/* 1. Sleeps overlap on one worker. */
static _Atomic unsigned slept;
static void sleeper(void *arg)
{
    (void)arg;
    CHECK_EQ(up_sleep_ns(20000000), UP_OK);
    atomic_fetch_add(&slept, 1);
}

static void test_sleep_one_worker(void)
{
    up_pool *p = make_pool(1, NULL);
    const unsigned n = 1000;
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, sleeper, NULL), UP_OK);
    WAIT_PROGRESS(atomic_load(&slept), n, 10000);
    double ms = (double)(now_ns() - t0) / 1e6;
    up_stats st;
    up_pool_stats(p, &st);
    printf("sleep: %u tasks x 20 ms on one worker in %.1f ms; parked now %llu, resumed %llu, "
           "workers peak %u\n",
           n, ms, (unsigned long long)st.tasks_parked, (unsigned long long)st.tasks_resumed,
           st.workers_peak);
    CHECK_GE(st.tasks_resumed, n);
    CHECK_EQ(st.workers_peak, 1);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
}

/* 2. A waits for B, which is queued behind it on the same worker. */
static up_event *ev_ab;
static _Atomic unsigned ab_done;
static void task_a(void *arg)
{
    (void)arg;
    CHECK_EQ(up_event_wait(ev_ab), UP_OK);
    atomic_fetch_add(&ab_done, 1);
}
static void task_b(void *arg)
{
    (void)arg;
    CHECK_EQ(up_event_set(ev_ab), UP_OK);
    atomic_fetch_add(&ab_done, 1);
}

static void test_wait_then_set_one_worker(void)
{
    up_pool *p = make_pool(1, NULL);
    CHECK_EQ(up_event_create(&ev_ab, p), UP_OK);
    for (int round = 0; round < 50; round++) {
        atomic_store(&ab_done, 0);
        up_event_reset(ev_ab);
        CHECK_EQ(up_submit_wait(p, task_a, NULL), UP_OK);
        CHECK_EQ(up_submit_wait(p, task_b, NULL), UP_OK);
        WAIT_PROGRESS(atomic_load(&ab_done), 2, 10000);
    }
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    up_event_destroy(ev_ab);
}

/* 3. Resumed on another worker: the stack is intact, the worker state is
 * the new worker's. */
/* The kernel's thread id: pthread_self() is declared const, so a compiler
 * may reuse its value across a park, which is what this test must not
 * do. */
static long tid(void) { return syscall(SYS_gettid); }

static _Atomic unsigned hook_n;
static struct {
    long t;
    void *local;
} hooks[8];
static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static char hook_marks[8];

static void *on_start(void *ctx, unsigned shard, unsigned id)
{
    (void)ctx;
    (void)shard;
    (void)id;
    pthread_mutex_lock(&hook_mu);
    unsigned i = atomic_load(&hook_n);
    CHECK_LT(i, 8);
    hooks[i].t = tid();
    hooks[i].local = &hook_marks[i];
    atomic_store(&hook_n, i + 1);
    pthread_mutex_unlock(&hook_mu);
    return &hook_marks[i];
}

__attribute__((noinline)) static void *local_of_self(void)
{
    pthread_mutex_lock(&hook_mu);
    void *l = NULL;
    for (unsigned i = 0; i < atomic_load(&hook_n); i++)
        if (hooks[i].t == tid())
            l = hooks[i].local;
    pthread_mutex_unlock(&hook_mu);
    return l;
}

static up_pool *mig_pool;
static _Atomic unsigned mig_done, migrated;

static void migrant(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    volatile unsigned char pattern[2048];
    for (unsigned i = 0; i < sizeof pattern; i++)
        pattern[i] = (unsigned char)(i * 31u + id);
    volatile double x = 1.0 + (double)id;
    long before = tid();
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(up_sleep_ns(1000000 + (id % 7) * 100000), UP_OK);
        CHECK_EQ(up_current_pool(), mig_pool);
        CHECK_EQ(up_worker_local(), local_of_self());
        x = x * 1.5 + 0.25;
        /* Keep both workers busy, so that resumes land on either. */
        uint64_t t0 = now_ns();
        while (now_ns() - t0 < 200000)
            ;
    }
    for (unsigned i = 0; i < sizeof pattern; i++)
        CHECK_EQ(pattern[i], (unsigned char)(i * 31u + id));
    double want = 1.0 + (double)id;
    for (int k = 0; k < 3; k++)
        want = want * 1.5 + 0.25;
    CHECK_EQ(x, want);
    if (before != tid())
        atomic_fetch_add(&migrated, 1);
    atomic_fetch_add(&mig_done, 1);
}

static void test_migration(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.on_worker_start = on_start;
    cfg.shard_min_workers = 2;
    mig_pool = make_pool(2, &cfg);
    const unsigned n = 400;
    for (uintptr_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(mig_pool, migrant, (void *)i), UP_OK);
    WAIT_PROGRESS(atomic_load(&mig_done), n, 30000);
    printf("migration: %u of %u tasks ended on another thread than they began\n",
           atomic_load(&migrated), n);
    /* Two workers busy in turn: resumes land on both. */
    CHECK_GT(atomic_load(&migrated), 0);
    up_pool_stop_and_wait(mig_pool);
    up_pool_destroy(mig_pool);
}

/* 4. up_yield lets a queued task run first. */
static _Atomic int b_ran, yield_ok;
static _Atomic unsigned y_done;
static void yielder(void *arg)
{
    (void)arg;
    atomic_store(&b_ran, 0);
    CHECK_EQ(up_yield(), UP_OK);
    atomic_store(&yield_ok, atomic_load(&b_ran));
    atomic_fetch_add(&y_done, 1);
}
static void queued(void *arg)
{
    (void)arg;
    atomic_store(&b_ran, 1);
    atomic_fetch_add(&y_done, 1);
}

static _Atomic int go;
static void blocker(void *arg)
{
    (void)arg;
    while (!atomic_load(&go))
        sched_yield();
}

static void test_yield(void)
{
    up_pool *p = make_pool(1, NULL);
    /* A blocker holds the worker so both tasks are queued before A runs. */
    CHECK_EQ(up_submit_wait(p, blocker, NULL), UP_OK);
    CHECK_EQ(up_submit_wait(p, yielder, NULL), UP_OK);
    CHECK_EQ(up_submit_wait(p, queued, NULL), UP_OK);
    atomic_store(&go, 1);
    WAIT_PROGRESS(atomic_load(&y_done), 2, 10000);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    CHECK_EQ(atomic_load(&yield_ok), 1);
}

/* 5. Timed waits. */
static up_event *ev_t;
static _Atomic int rc_timeout = 1, rc_set = 1;
static _Atomic unsigned t_done;
static void waits_timeout(void *arg)
{
    (void)arg;
    uint64_t t0 = now_ns();
    atomic_store(&rc_timeout, up_event_wait_timeout(ev_t, 30000000));
    CHECK_GE(now_ns() - t0, 30000000);
    atomic_fetch_add(&t_done, 1);
}
static up_event *ev_s;
static void waits_set(void *arg)
{
    (void)arg;
    atomic_store(&rc_set, up_event_wait_timeout(ev_s, 5 * SECOND));
    atomic_fetch_add(&t_done, 1);
}
static void sets_later(void *arg)
{
    (void)arg;
    CHECK_EQ(up_sleep_ns(10000000), UP_OK);
    up_event_set(ev_s);
    atomic_fetch_add(&t_done, 1);
}

static void test_timeouts(void)
{
    up_pool *p = make_pool(1, NULL);
    CHECK_EQ(up_event_create(&ev_t, p), UP_OK);
    CHECK_EQ(up_event_create(&ev_s, p), UP_OK);
    CHECK_EQ(up_submit_wait(p, waits_timeout, NULL), UP_OK);
    CHECK_EQ(up_submit_wait(p, waits_set, NULL), UP_OK);
    CHECK_EQ(up_submit_wait(p, sets_later, NULL), UP_OK);
    WAIT_PROGRESS(atomic_load(&t_done), 3, 10000);
    CHECK_EQ(atomic_load(&rc_timeout), UP_ETIMEDOUT);
    CHECK_EQ(atomic_load(&rc_set), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_GE(st.tasks_resumed, 3);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    up_event_destroy(ev_t);
    up_event_destroy(ev_s);
}

/* 6. Destroy with parked waiters on a never-set event. */
#define NDESTROY 200
static up_event *ev_never;
static _Atomic unsigned char d_runs[NDESTROY], d_cancel[NDESTROY];
static _Atomic unsigned d_started;
static void waits_never(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    atomic_fetch_add(&d_started, 1);
    int rc = up_event_wait(ev_never);
    if (rc == UP_ECANCELED && up_cancelled())
        atomic_store(&d_cancel[id], 1);
    atomic_fetch_add(&d_runs[id], 1);
}

static void test_destroy_parked(void)
{
    up_pool *p = make_pool(1, NULL);
    CHECK_EQ(up_event_create(&ev_never, p), UP_OK);
    for (uintptr_t i = 0; i < NDESTROY; i++)
        CHECK_EQ(up_submit_wait(p, waits_never, (void *)i), UP_OK);
    WAIT_PROGRESS(atomic_load(&d_started), NDESTROY, 10000);
    for (int k = 0; k < 10000; k++) {
        up_stats st;
        up_pool_stats(p, &st);
        if (st.tasks_parked == NDESTROY)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.tasks_parked, NDESTROY);
    up_pool_stop(p);
    up_pool_destroy(p);
    for (unsigned i = 0; i < NDESTROY; i++) {
        CHECK_EQ(atomic_load(&d_runs[i]), 1);
        CHECK_EQ(atomic_load(&d_cancel[i]), 1);
    }
    up_event_destroy(ev_never);
}

/* 7. Racing set/reset: each waiter resumes and finishes exactly once. */
#define NRACE 300
static up_event *ev_race;
static _Atomic unsigned char r_runs[NRACE];
static _Atomic unsigned r_done;
static void race_waiter(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (int k = 0; k < 4; k++)
        CHECK_EQ(up_event_wait(ev_race), UP_OK);
    atomic_fetch_add(&r_runs[id], 1);
    atomic_fetch_add(&r_done, 1);
}

static void test_race_set_reset(void)
{
    up_pool *p = make_pool(2, NULL);
    CHECK_EQ(up_event_create(&ev_race, p), UP_OK);
    for (uintptr_t i = 0; i < NRACE; i++) {
        CHECK_EQ(up_submit_wait(p, race_waiter, (void *)i), UP_OK);
        if (i % 7 == 0)
            up_event_set(ev_race);
        if (i % 5 == 0)
            up_event_reset(ev_race);
    }
    uint64_t t0 = now_ns();
    while (atomic_load(&r_done) < NRACE && now_ns() - t0 < 20 * SECOND) {
        up_event_set(ev_race);
        up_event_reset(ev_race);
    }
    up_event_set(ev_race);
    WAIT_PROGRESS(atomic_load(&r_done), NRACE, 10000);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    for (unsigned i = 0; i < NRACE; i++)
        CHECK_EQ(atomic_load(&r_runs[i]), 1);
    up_event_destroy(ev_race);
}

/* 8. Many yields on two workers: each yield is released at once, so
 * another worker may resume the task while it is still switching away;
 * the parking protocol must make that impossible. */
#define NYIELD 64
static _Atomic unsigned yy_done;
static _Atomic uint64_t yy_sum;
static void many_yields(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    volatile uint64_t acc = id;
    for (int k = 0; k < 200; k++) {
        CHECK_EQ(up_yield(), UP_OK);
        acc = acc + (uint64_t)k;
    }
    atomic_fetch_add(&yy_sum, acc);
    atomic_fetch_add(&yy_done, 1);
}

static void test_yield_storm(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shard_min_workers = 2;
    up_pool *p = make_pool(2, &cfg);
    for (uintptr_t i = 0; i < NYIELD; i++)
        CHECK_EQ(up_submit_wait(p, many_yields, (void *)i), UP_OK);
    WAIT_PROGRESS(atomic_load(&yy_done), NYIELD, 60000);
    uint64_t want = 0;
    for (uint64_t i = 0; i < NYIELD; i++)
        want += i + 199 * 200 / 2;
    CHECK_EQ(atomic_load(&yy_sum), want);
    up_stats st;
    up_pool_stats(p, &st);
    printf("yield storm: %llu resumes\n", (unsigned long long)st.tasks_resumed);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
}

/* Outside a pool task the calls block, as before. */
static void test_plain_thread(void)
{
    uint64_t t0 = now_ns();
    CHECK_EQ(up_sleep_ns(2000000), UP_OK);
    CHECK_GE(now_ns() - t0, 2000000);
    CHECK_EQ(up_yield(), UP_OK);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    test_plain_thread();
    test_sleep_one_worker();
    test_wait_then_set_one_worker();
    test_yield();
    test_timeouts();
    test_migration();
    test_destroy_parked();
    test_race_set_reset();
    test_yield_storm();
    printf("test_wait_park: ok\n");
    return 0;
}
