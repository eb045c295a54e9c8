/* Reliability 10: allocation failure. The allocation functions are
 * wrapped at link time (-Wl,--wrap=...), so the n-th allocation after
 * arming fails, for n = 1, 2, ... until an operation goes through without
 * meeting the failure. Each failing operation must return UP_ENOMEM (or
 * UP_EAGAIN when what failed was a thread's start), crash nothing and leak
 * nothing: the wrappers also count what is still allocated, which must be
 * back to where it was. The operations: pool creation with several shards
 * and workers, parallel regions of the OpenMP-style layer (opened by a
 * new thread, whose team and caches are all new), tasks with
 * dependencies, and the creation of task groups, channels and semaphores
 * (each then used while the failure stays armed, so their use must not
 * allocate either). What must never allocate is counted with nothing
 * failing: copied submits, group tasks and waits, channel messages and
 * semaphore acquisitions, contended ones included. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/chan.h>
#include <ultrapool/group.h>
#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>
#include <ultrapool/sem.h>

#include "check.h"
#include "counted.h"

void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void *__real_aligned_alloc(size_t, size_t);
void __real_free(void *);

static _Atomic long armed_at, count, outstanding, injected;

static int should_fail(void)
{
    long at = atomic_load(&armed_at);
    if (at <= 0)
        return 0;
    if (atomic_fetch_add(&count, 1) + 1 == at) {
        atomic_fetch_add(&injected, 1);
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_malloc(n);
    if (p)
        atomic_fetch_add(&outstanding, 1);
    return p;
}
void *__wrap_calloc(size_t a, size_t b)
{
    if (should_fail())
        return NULL;
    void *p = __real_calloc(a, b);
    if (p)
        atomic_fetch_add(&outstanding, 1);
    return p;
}
void *__wrap_realloc(void *old, size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_realloc(old, n);
    if (p && !old)
        atomic_fetch_add(&outstanding, 1);
    return p;
}
void *__wrap_aligned_alloc(size_t a, size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_aligned_alloc(a, n);
    if (p)
        atomic_fetch_add(&outstanding, 1);
    return p;
}
void __wrap_free(void *p)
{
    if (p)
        atomic_fetch_sub(&outstanding, 1);
    __real_free(p);
}

static void arm(long n)
{
    atomic_store(&count, 0);
    atomic_store(&armed_at, n);
}
static void disarm(void) { atomic_store(&armed_at, 0); }

/* One pool creation; returns its rc. */
static int op_create(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 3;
    cfg.shard_min_workers = 2;
    up_pool *p;
    int rc = up_pool_create(&p, &cfg);
    if (rc == UP_OK) {
        disarm(); /* the pool must work; later failures are another test */
        CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK);
        CHECK_EQ(up_pool_destroy(p), UP_OK);
    }
    return rc;
}

static up_pool *shared;
static int dep_cells[4];
static void dep_region(void *arg)
{
    int *rc = arg;
    /* The master creates the tasks: the calling thread's caches are the
     * warmed-up ones (another member's first use would fill its own). */
    if (up_master()) {
        for (int i = 0; i < 64; i++) {
            up_dep d = {&dep_cells[i % 4], i % 3 ? UP_DEP_INOUT : UP_DEP_IN};
            int r = up_task_deps(counted_task, NULL, &d, 1, NULL);
            if (r != UP_OK)
                *rc = r;
        }
    }
}

static int op_region(void)
{
    int rc = UP_OK;
    int r = up_parallel(shared, 2, dep_region, &rc);
    return r != UP_OK ? r : rc;
}

static void *region_thread(void *arg)
{
    *(int *)arg = op_region();
    return NULL;
}

/* A region from a thread that never opened one: a master keeps its team
 * for its next region, so only a new master allocates one (with its
 * thread's state and deques), and its end must free all of it. */
static int op_region_new_master(void)
{
    int rc = UP_OK;
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, region_thread, &rc), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    return rc;
}

/* Waits until the shared pool has run every task it accepted (a region's
 * late member tasks hold their team until they run), so the count of live
 * allocations is steady. */
static void settle(void)
{
    up_stats st;
    WAIT_UNTIL((up_pool_stats(shared, &st), st.executed == st.submitted), 10000);
    test_sleep_ms(2);
}

/* Runs op with the n-th allocation failing, n = 1.. until it succeeds.
 * Returns how many failing runs there were. strict: every failure must be
 * UP_ENOMEM, and a successful run must leave nothing allocated either (the
 * operation frees what it made). */
static int sweep(const char *name, int (*op)(void), int strict)
{
    int n;
    for (n = 1; n < 10000; n++) {
        settle();
        long before = atomic_load(&outstanding);
        arm(n);
        int rc = op();
        disarm();
        if (atomic_load(&count) < n) {
            CHECK_EQ(rc, UP_OK); /* no failure was met: done */
            if (strict)
                CHECK_EQ(atomic_load(&outstanding), before);
            break;
        }
        if (strict)
            CHECK_EQ(rc, UP_ENOMEM);
        CHECK(rc == UP_ENOMEM || rc == UP_EAGAIN || rc == UP_OK);
        if (rc != UP_OK) {
            /* A failed operation leaves nothing behind. */
            settle();
            CHECK_EQ(atomic_load(&outstanding), before);
        }
    }
    printf("  %s: failed at allocation 1..%d, each returned an error or degraded, no leak\n", name,
           n - 1);
    return n - 1;
}

static int group_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&counted_ran, 1);
    return 0;
}

/* A group of limit 4 on the shared pool; once created, 64 tasks and a
 * wait, with the failure still armed. */
static int op_group(void)
{
    up_group *g = (up_group *)&g; /* must be reset to NULL on failure */
    int rc = up_group_create(&g, shared, 4);
    if (rc != UP_OK) {
        CHECK(g == NULL);
        return rc;
    }
    for (int i = 0; i < 64; i++)
        CHECK_EQ(up_group_go(g, group_task, NULL), UP_OK);
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    return UP_OK;
}

/* A channel of 5 slots of 24 bytes (the structure, then the ring); once
 * created, messages in and out, a close, and the elements left freed. */
static int op_chan(void)
{
    up_chan *c = (up_chan *)&c;
    int rc = up_chan_create(&c, 24, 5);
    if (rc != UP_OK) {
        CHECK(c == NULL);
        return rc;
    }
    char in[24] = "message", out[24];
    for (int i = 0; i < 12; i++) {
        CHECK_EQ(up_chan_try_send(c, in), i < 5 ? UP_OK : UP_EAGAIN);
    }
    CHECK_EQ(up_chan_recv(c, out), UP_OK);
    CHECK_EQ(up_chan_close(c), UP_OK);
    CHECK_EQ(up_chan_destroy(c), UP_OK); /* four left in it */
    return UP_OK;
}

static int op_sem(void)
{
    up_sem *s = (up_sem *)&s;
    int rc = up_sem_create(&s, 8);
    if (rc != UP_OK) {
        CHECK(s == NULL);
        return rc;
    }
    CHECK_EQ(up_sem_acquire(s, 5), UP_OK);
    CHECK_EQ(up_sem_try_acquire(s, 4), UP_EAGAIN);
    CHECK_EQ(up_sem_acquire_timeout(s, 4, 1000), UP_ETIMEDOUT);
    CHECK_EQ(up_sem_release(s, 5), UP_OK);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
    return UP_OK;
}

/* ---- what never allocates ---------------------------------------------- */

/* Counts the allocations (of every thread) made while body runs; none
 * fails. */
static long allocations_in(void (*body)(void))
{
    arm(LONG_MAX);
    body();
    long n = atomic_load(&count);
    disarm();
    return n;
}

enum { STEADY_OPS = 1000 };
static up_pool *steady;

static void copied_submits(void)
{
    up_stats st;
    up_pool_stats(steady, &st);
    uint64_t target = st.executed + 2 * STEADY_OPS;
    for (int i = 0; i < STEADY_OPS; i++) {
        uint64_t v = (uint64_t)i;
        CHECK_EQ(up_submit_copy_wait(steady, counted_task, &v, sizeof v), UP_OK);
        int rc;
        while ((rc = up_submit_copy(steady, counted_task, &v, sizeof v)) == UP_EOVERLOAD)
            test_spin(1000);
        CHECK_EQ(rc, UP_OK);
    }
    WAIT_UNTIL((up_pool_stats(steady, &st), st.executed >= target), 10000);
    CHECK_GE(st.executed, target);
}

/* Limit 2 on a pool of two workers: go blocks at the limit and the main
 * thread helps or sleeps, so the slow paths are taken too. */
static up_group *steady_group;
static void group_tasks(void)
{
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < STEADY_OPS / 10; i++)
            CHECK_EQ(up_group_go(steady_group, group_task, NULL), UP_OK);
        CHECK_EQ(up_group_wait(steady_group), UP_OK);
    }
}

static up_chan *steady_chan;
static up_sem *steady_sem;

/* The peer thread: receives what the main thread sends, and contends for
 * the semaphore of one unit with it. Made before counting starts. */
static void *peer_main(void *arg)
{
    (void)arg;
    uint64_t v;
    for (int i = 0; i < STEADY_OPS; i++) {
        CHECK_EQ(up_chan_recv(steady_chan, &v), UP_OK);
        CHECK_EQ(v, (uint64_t)i);
    }
    for (int i = 0; i < STEADY_OPS; i++) {
        CHECK_EQ(up_sem_acquire(steady_sem, 1), UP_OK);
        test_spin(200);
        CHECK_EQ(up_sem_release(steady_sem, 1), UP_OK);
    }
    return NULL;
}

static void chan_and_sem(void)
{
    /* A channel of 2: the sender fills it and blocks, the receiver empties
     * it and blocks, so both sleeping paths are met. */
    for (uint64_t i = 0; i < STEADY_OPS; i++)
        CHECK_EQ(up_chan_send(steady_chan, &i), UP_OK);
    for (int i = 0; i < STEADY_OPS; i++) {
        CHECK_EQ(up_sem_acquire(steady_sem, 1), UP_OK);
        test_spin(200);
        CHECK_EQ(up_sem_release(steady_sem, 1), UP_OK);
    }
}

int main(void)
{
    /* Thread-local caches of the parallel layer live as long as their
     * thread; warm them up so they are not counted as leaks. */
    up_config cfg;
    up_config_init(&cfg);
    cfg.shard_min_workers = 2; /* a fixed set of threads: no new thread caches later */
    cfg.shard_max_workers = 2;
    CHECK_EQ(up_pool_create(&shared, &cfg), UP_OK);
    for (int i = 0; i < 3; i++)
        op_region();
    int a = sweep("pool creation", op_create, 0);
    int b = sweep("parallel region of a new master, with dependent tasks", op_region_new_master, 0);
    int c = sweep("group creation, 64 tasks and a wait", op_group, 1);
    int d = sweep("channel creation and use", op_chan, 1);
    int e = sweep("semaphore creation and use", op_sem, 1);

    /* What never allocates, after a warm-up of each. */
    up_config_init(&cfg);
    cfg.shard_min_workers = 2;
    cfg.shard_max_workers = 2;
    CHECK_EQ(up_pool_create(&steady, &cfg), UP_OK);
    CHECK_EQ(up_chan_create(&steady_chan, sizeof(uint64_t), 2), UP_OK);
    CHECK_EQ(up_sem_create(&steady_sem, 1), UP_OK);
    CHECK_EQ(up_group_create(&steady_group, steady, 2), UP_OK);
    copied_submits();
    group_tasks();
    long submit_allocs = allocations_in(copied_submits);
    long group_allocs = allocations_in(group_tasks);
    pthread_t peer;
    CHECK_EQ(pthread_create(&peer, NULL, peer_main, NULL), 0);
    long chan_sem_allocs = allocations_in(chan_and_sem);
    CHECK_EQ(pthread_join(peer, NULL), 0);
    CHECK_EQ(up_group_destroy(steady_group), UP_OK);
    CHECK_EQ(up_chan_destroy(steady_chan), UP_OK);
    CHECK_EQ(up_sem_destroy(steady_sem), UP_OK);
    CHECK_EQ(up_pool_destroy(steady), UP_OK);
    CHECK_EQ(up_pool_destroy(shared), UP_OK);

    printf("figure: %ld allocation failures injected (%d in pool creation, %d in regions, %d in "
           "group creation, %d in channel creation, %d in semaphore creation), each UP_ENOMEM or "
           "degraded, 0 crashes, 0 leaks; allocations made by %d copied submits: %ld, group "
           "tasks: %ld, channel messages and semaphore acquisitions: %ld\n",
           atomic_load(&injected), a, b, c, d, e, 2 * STEADY_OPS, submit_allocs, group_allocs,
           chan_sem_allocs);
    CHECK(a > 3 && b > 0);
    CHECK_EQ(c, 1); /* the group structure */
    CHECK_EQ(d, 2); /* the channel structure, then its ring */
    CHECK_EQ(e, 1); /* the semaphore structure */
    CHECK_EQ(submit_allocs, 0);
    CHECK_EQ(group_allocs, 0);
    CHECK_EQ(chan_sem_allocs, 0);
    return 0;
}
