/* Per-worker state: the start and stop hooks run exactly once in every
 * worker thread (the floor, workers added later under load, workers that
 * retire when idle, and those stopped at destroy), on that thread, with
 * the pool's context; every task reaches the state of the worker running
 * it, including tasks submitted while the queue is full and tasks of a
 * group the main thread waits for (neither may run them on a thread that
 * has no worker state); and a task of another pool run by a worker (while
 * that worker's task waits to submit to it) does not see the worker's
 * state; and a start hook that waits for a task does not keep the other
 * workers from running it (a thread in its start hook is not a worker
 * looking for work: a submit still wakes a parked one). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/group.h>

#include "check.h"
#include "gate.h"
#include "pool_helpers.h"

#define MAGIC      0x5eed5eedu
#define MAX_LOCALS 4096

typedef struct local {
    unsigned magic;
    pthread_t thread;
    unsigned shard, worker;
    _Atomic int stopped;
    _Atomic uint64_t tasks;
} local;

typedef struct hooks {
    unsigned magic;
    _Atomic unsigned starts, stops;
    local *locals[MAX_LOCALS];
} hooks;

static void *on_start(void *ctx, unsigned shard, unsigned worker)
{
    hooks *h = ctx;
    CHECK_EQ(h->magic, MAGIC);
    unsigned i = atomic_fetch_add(&h->starts, 1);
    CHECK_LT(i, MAX_LOCALS);
    local *l = calloc(1, sizeof *l);
    CHECK(l != NULL);
    l->magic = MAGIC;
    l->thread = pthread_self();
    l->shard = shard;
    l->worker = worker;
    h->locals[i] = l;
    return l;
}

static void on_stop(void *ctx, void *state)
{
    hooks *h = ctx;
    local *l = state;
    CHECK_EQ(h->magic, MAGIC);
    CHECK_EQ(l->magic, MAGIC);
    CHECK(pthread_equal(l->thread, pthread_self())); /* on the thread it started on */
    CHECK_EQ(atomic_exchange(&l->stopped, 1), 0);    /* once */
    atomic_fetch_add(&h->stops, 1);
}

static _Atomic uint64_t tasks_done, tasks_without_state;

/* Every task checks it runs on a worker thread with its own state. */
static void check_state(void)
{
    local *l = up_worker_local();
    if (!l || l->magic != MAGIC || !pthread_equal(l->thread, pthread_self()) ||
        atomic_load(&l->stopped)) {
        atomic_fetch_add(&tasks_without_state, 1);
        return;
    }
    atomic_fetch_add(&l->tasks, 1);
}

static void sleepy_task(void *arg)
{
    check_state();
    test_sleep_ms((unsigned)(uintptr_t)arg);
    atomic_fetch_add(&tasks_done, 1);
}

static int group_task(void *arg)
{
    check_state();
    for (volatile int i = 0; i < 1000; i++)
        ;
    (void)arg;
    atomic_fetch_add(&tasks_done, 1);
    return 0;
}

static void hooks_once_per_worker(void)
{
    static hooks h = {.magic = MAGIC};
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = 6;
    cfg.queue_capacity = 4;
    cfg.idle_timeout_ns = 30000000; /* 30 ms: extra workers retire quickly */
    cfg.on_worker_start = on_start;
    cfg.on_worker_stop = on_stop;
    cfg.hook_ctx = &h;
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    uint64_t expect = 0;
    for (int phase = 0; phase < 2; phase++) {
        /* Blocking tasks behind a tiny queue: the pool grows, and the
         * blocked submitter must not run them itself (no worker state). */
        for (int i = 0; i < 60; i++)
            CHECK_EQ(up_submit_wait(pool, sleepy_task, (void *)(uintptr_t)2), UP_OK);
        expect += 60;
        /* A group the main thread waits for: it must not help either. */
        up_group *g;
        CHECK_EQ(up_group_create(&g, pool, 3), UP_OK);
        for (int i = 0; i < 300; i++)
            CHECK_EQ(up_group_go(g, group_task, NULL), UP_OK);
        CHECK_EQ(up_group_wait(g), UP_OK);
        CHECK_EQ(up_group_destroy(g), UP_OK);
        expect += 300;
        WAIT_UNTIL(atomic_load(&tasks_done) == expect, 30000);
        CHECK_EQ(atomic_load(&tasks_done), expect);
        /* Idle: workers above the floor retire, and their stop hooks run. */
        up_stats st;
        unsigned stops = 0; /* read once per poll: a retiring worker may add
                               to retired and run its hook just after */
        for (int w = 0; w < 5000; w++) {
            up_pool_stats(pool, &st);
            stops = atomic_load(&h.stops);
            if (st.workers == 1 && stops == st.retired)
                break;
            test_sleep_ms(1);
        }
        printf("phase %d: %u workers started so far, %llu retired, %u stop hooks\n", phase,
               atomic_load(&h.starts), (unsigned long long)st.retired, stops);
        CHECK_EQ(st.workers, 1);
        CHECK_EQ(stops, st.retired);
    }
    up_stats st;
    up_pool_stats(pool, &st);
    CHECK_EQ(st.helped, 0);  /* no task ran outside a worker */
    CHECK_GT(st.spawned, 1); /* the pool did grow and so started workers later */
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    unsigned starts = atomic_load(&h.starts);
    CHECK_EQ(starts, st.spawned);
    CHECK_EQ(atomic_load(&h.stops), starts);
    uint64_t by_workers = 0;
    for (unsigned i = 0; i < starts; i++) {
        local *l = h.locals[i];
        CHECK_EQ(atomic_load(&l->stopped), 1);
        for (unsigned k = 0; k < i; k++) /* distinct ids */
            CHECK_NE(h.locals[k]->worker, l->worker);
        by_workers += atomic_load(&l->tasks);
    }
    CHECK_EQ(atomic_load(&tasks_without_state), 0);
    CHECK_EQ(by_workers, expect);
    printf("%u workers: start and stop hooks once each; %llu tasks, all with their worker's "
           "state\n",
           starts, (unsigned long long)by_workers);
    for (unsigned i = 0; i < starts; i++)
        free(h.locals[i]);
}

/* ---- another pool's task on a worker ----------------------------------- */

static test_gate gate;
static _Atomic int foreign_ran, foreign_saw_state, foreign_pool_ok;
static up_pool *other;

static void foreign_probe(void *arg)
{
    (void)arg;
    if (up_worker_local() != NULL)
        atomic_fetch_add(&foreign_saw_state, 1);
    if (up_current_pool() == other)
        atomic_fetch_add(&foreign_pool_ok, 1);
    atomic_fetch_add(&foreign_ran, 1);
}

/* A task of pool `main` fills pool `other` (whose only worker is blocked)
 * with up_submit_wait: the waiting worker of `main` runs `other`'s tasks,
 * which must see no worker state (they are not `main`'s tasks). */
static void feeder(void *arg)
{
    for (int i = 0; i < 6; i++)
        CHECK_EQ(up_submit_wait(other, foreign_probe, NULL), UP_OK);
    atomic_store((_Atomic int *)arg, 1);
}

static void *hook_start_plain(void *ctx, unsigned shard, unsigned worker)
{
    (void)shard;
    (void)worker;
    return ctx;
}

static void foreign_tasks_see_no_state(void)
{
    static int state_token;
    other = test_one_worker_pool(2, NULL, NULL);
    up_pool *mainp = test_one_worker_pool(64, hook_start_plain, &state_token);
    test_gate_reset(&gate);
    CHECK_EQ(up_submit(other, test_gate_task, &gate), UP_OK);
    test_gate_wait_running(&gate, 1); /* on other's worker, not queued */
    _Atomic int fed = 0;
    CHECK_EQ(up_submit(mainp, feeder, (void *)&fed), UP_OK);
    WAIT_UNTIL(atomic_load(&fed), 10000);
    CHECK_EQ(atomic_load(&fed), 1);
    test_gate_open(&gate);
    WAIT_UNTIL(atomic_load(&foreign_ran) == 6, 10000);
    CHECK_EQ(atomic_load(&foreign_ran), 6);
    CHECK_EQ(atomic_load(&foreign_saw_state), 0);
    CHECK_EQ(atomic_load(&foreign_pool_ok), 6);
    up_stats st;
    up_pool_stats(other, &st);
    printf("another pool's tasks: %llu of 6 run by the waiting worker, none saw its state\n",
           (unsigned long long)st.helped);
    CHECK_GT(st.helped, 0); /* the situation under test did happen */
    CHECK_EQ(up_pool_destroy(mainp), UP_OK);
    CHECK_EQ(up_pool_destroy(other), UP_OK);
}

/* Floor of two in one shard: the second thread's start hook waits until a
 * task has run (per-worker state that an init task prepares, say), while
 * the first worker parks. The init task, submitted then, must be run by
 * the parked worker; counting the thread in its hook as a searcher would
 * leave it queued for good. */
static _Atomic unsigned hook_starts;
static _Atomic int init_ran;

static void *hook_waits_for_task(void *ctx, unsigned shard, unsigned worker)
{
    (void)ctx, (void)shard, (void)worker;
    if (atomic_fetch_add(&hook_starts, 1) == 1)
        for (unsigned ms = 0; ms < 60000 && !atomic_load(&init_ran); ms++)
            test_sleep_ms(1);
    return NULL;
}

static void init_task(void *arg)
{
    (void)arg;
    atomic_store(&init_ran, 1);
}

static void start_hook_waits_for_a_task(void)
{
    up_config c;
    CHECK_EQ(up_config_init(&c), UP_OK);
    c.shards = 1;
    c.shard_min_workers = 2;
    c.on_worker_start = hook_waits_for_task;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &c), UP_OK);
    up_stats st;
    WAIT_UNTIL((up_pool_stats(p, &st), st.parked == 1 && atomic_load(&hook_starts) == 2), 10000);
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_submit(p, init_task, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&init_ran), 10000);
    printf("a start hook waiting for a task: the task ran after %.1f ms\n",
           (double)(test_now_ns() - t0) / 1e6);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

int main(void)
{
    test_seed(); /* the schedule varies, the sizes do not */
    hooks_once_per_worker();
    foreign_tasks_see_no_state();
    start_hook_waits_for_a_task();
    printf("worker hooks: ok\n");
    return 0;
}
