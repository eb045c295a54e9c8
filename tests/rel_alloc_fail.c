/* Reliability 10: allocation failure. The allocation functions are
 * wrapped at link time (-Wl,--wrap=...), so the n-th allocation after
 * arming fails, for n = 1, 2, ... until an operation goes through without
 * meeting the failure. Each failing operation must return UP_ENOMEM (or
 * UP_EAGAIN when what failed was a thread's start), crash nothing and leak
 * nothing: the wrappers also count what is still allocated, which must be
 * back to where it was. The operations: pool creation with several shards
 * and workers, parallel regions of the OpenMP-style layer, and tasks with
 * dependencies. Copied submits never allocate (their failure count is 0). */
#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>

#include "check.h"

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

static _Atomic int ran;
static void task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

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
        CHECK_EQ(up_submit_wait(p, task, NULL), UP_OK);
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
            int r = up_task_deps(task, NULL, &d, 1, NULL);
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

/* Waits until the shared pool has run every task it accepted (a region's
 * late member tasks hold their team until they run), so the count of live
 * allocations is steady. */
static void settle(void)
{
    up_stats st;
    WAIT_UNTIL((up_pool_stats(shared, &st), st.executed == st.submitted), 5000);
    test_sleep_ms(2);
}

/* Runs op with the n-th allocation failing, n = 1.. until it succeeds.
 * Returns how many failing runs there were. */
static int sweep(const char *name, int (*op)(void))
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
            break;
        }
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
    int a = sweep("pool creation", op_create);
    int b = sweep("parallel region with dependent tasks", op_region);

    /* Copied submits never allocate. */
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    CHECK_EQ(up_submit_wait(p, task, NULL), UP_OK);
    arm(1);
    long c0 = atomic_load(&count);
    for (int i = 0; i < 1000; i++) {
        uint64_t v = (uint64_t)i;
        CHECK_EQ(up_submit_copy_wait(p, task, &v, sizeof v), UP_OK);
    }
    long submit_allocs = atomic_load(&count) - c0;
    disarm();
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    CHECK_EQ(up_pool_destroy(shared), UP_OK);
    printf("figure: %ld allocation failures injected (%d in creation, %d in regions), 0 crashes, "
           "0 leaks; 1000 copied submits made %ld allocations\n",
           atomic_load(&injected), a, b, submit_allocs);
    CHECK(a > 3 && b > 0);
    CHECK_EQ(submit_allocs, 0);
    return 0;
}
