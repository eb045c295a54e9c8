/* The backend named by UP_BACKEND (ctest runs this once per backend the
 * tree builds) runs the constructs of parallel.h with their documented
 * meaning, including where OpenMP's differs:
 *   - the backend in effect is the one asked for, and on an OpenMP backend
 *     the team's threads are not the pool's workers (the pool runs none of
 *     the region's work);
 *   - a task's children complete before it does;
 *   - taskgroup cancellation skips the tasks not yet started, without
 *     OMP_CANCELLATION;
 *   - dependency lists of any length, NULL addresses and mutexinoutset;
 *   - dynamic chunks of exactly c, guided chunks of at least c, and a
 *     guided loop over the whole int64 range, in O(chunks);
 *   - taskloop with nogroup, whose chunks run after the call returned;
 *   - up_parallel_exact all or nothing (with OMP_THREAD_LIMIT=8 set by
 *     ctest);
 *   - with "nested-exact" (ctest sets OMP_MAX_ACTIVE_LEVELS=1): inside an
 *     active region, a nested up_parallel_exact(2) runs nothing and
 *     returns UP_EAGAIN naming the limit, and a nested up_parallel runs
 *     on a team of one, on every backend alike. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ultrapool/parallel.h>

#include "check.h"

static up_pool *pool;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* ---- the backend and the team's threads ------------------------------- */

static _Atomic int members_on_pool_workers, members_seen;

static void who_region(void *arg)
{
    (void)arg;
    atomic_fetch_add(&members_seen, 1);
    if (up_thread_num() != 0 && up_current_pool() == pool)
        atomic_fetch_add(&members_on_pool_workers, 1);
    up_barrier();
}

static void team_region(void *arg)
{
    if (up_master())
        *(unsigned *)arg = up_num_threads();
}

/* With UP_NUM_THREADS or OMP_NUM_THREADS set (ctest's @threads runs),
 * nthreads 0 takes the team size from them, UP_NUM_THREADS first, on
 * every backend. */
static void check_default_team(void)
{
    const char *up = getenv("UP_NUM_THREADS"), *omp = getenv("OMP_NUM_THREADS");
    if (!up && !omp)
        return;
    unsigned got = 0;
    CHECK_EQ(up_parallel(pool, 0, team_region, &got), UP_OK);
    CHECK_EQ(got, (unsigned)atoi(up ? up : omp));
}

static void check_backend(up_backend want)
{
    CHECK_EQ(up_get_backend(), want);
    CHECK(
        !strcmp(up_backend_name(want), getenv("UP_BACKEND") ? getenv("UP_BACKEND") : "ultrapool"));
    CHECK(up_backend_name((up_backend)7) == NULL);
    CHECK_EQ(up_parallel(pool, 2, who_region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&members_seen), 2);
    if (want == UP_BACKEND_ULTRAPOOL)
        CHECK_EQ(atomic_load(&members_on_pool_workers), 1);
    else
        CHECK_EQ(atomic_load(&members_on_pool_workers), 0);
}

/* ---- children complete before their parent ---------------------------- */

static _Atomic int grandchildren_done;

static void grandchild(void *arg)
{
    (void)arg;
    pause_us(2000);
    atomic_fetch_add(&grandchildren_done, 1);
}

static void child(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        CHECK_EQ(up_task(grandchild, NULL, NULL), UP_OK);
    /* No taskwait: the task completes only after them all the same. */
}

static void children_region(void *arg)
{
    (void)arg;
    if (up_single()) {
        CHECK_EQ(up_task(child, NULL, NULL), UP_OK);
        CHECK_EQ(up_task(child, NULL, NULL), UP_OK);
        up_taskwait(); /* waits for the children, so for the grandchildren */
        CHECK_EQ(atomic_load(&grandchildren_done), 8);
    }
    up_barrier();
}

/* ---- cancellation ----------------------------------------------------- */

/* A watcher task runs while the group is cancelled and must see
 * up_cancelled() turn 1; of 200 short tasks, those that start after the
 * cancel are skipped. A task may have passed the skip check just before
 * the cancel, so at most one per thread starts after it. */
static _Atomic int cancel_ran, cancel_late, watcher_started, cancel_issued, watcher_saw;

static void cancel_task(void *arg)
{
    (void)arg;
    if (atomic_load(&cancel_issued))
        atomic_fetch_add(&cancel_late, 1);
    atomic_fetch_add(&cancel_ran, 1);
    pause_us(200);
}

static void watcher_task(void *arg)
{
    (void)arg;
    atomic_store(&watcher_started, 1);
    while (!atomic_load(&cancel_issued))
        pause_us(50);
    atomic_store(&watcher_saw, up_cancelled() ? 1 : 2);
}

static void cancel_body(void *arg)
{
    (void)arg;
    CHECK_EQ(up_task(watcher_task, NULL, NULL), UP_OK);
    for (int i = 0; i < 200; i++)
        CHECK_EQ(up_task(cancel_task, NULL, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&watcher_started), 10000);
    up_cancel_taskgroup();
    atomic_store(&cancel_issued, 1); /* after the cancel: the watcher must see it */
    CHECK_EQ(up_cancelled(), 1);
}

static void cancel_region(void *arg)
{
    (void)arg;
    if (up_single()) {
        CHECK_EQ(up_taskgroup(cancel_body, NULL), UP_ECANCELED);
        CHECK(strstr(up_last_error(), "up_taskgroup") != NULL);
        CHECK_EQ(up_cancelled(), 0); /* outside the group again */
    }
    up_barrier();
}

/* ---- dependencies ----------------------------------------------------- */

#define NSTAGE 40
static int stage_log[NSTAGE];
static _Atomic int stage_next, mutex_inside, mutex_overlap;
static char cells[64];

static void stage_task(void *arg)
{
    int k = (int)(intptr_t)arg;
    pause_us(100);
    stage_log[atomic_fetch_add(&stage_next, 1)] = k;
}

static void mutex_task(void *arg)
{
    (void)arg;
    if (atomic_fetch_add(&mutex_inside, 1) != 0)
        atomic_fetch_add(&mutex_overlap, 1);
    pause_us(200);
    atomic_fetch_sub(&mutex_inside, 1);
}

static void deps_region(void *arg)
{
    (void)arg;
    if (up_single()) {
        /* A chain through a list of 40 addresses (the heap path of the
         * backend beyond 16), NULL among them: each task writes them all,
         * so the tasks run in creation order. */
        up_dep list[NSTAGE];
        for (int i = 0; i < NSTAGE; i++)
            list[i] = (up_dep){i == 7 ? NULL : &cells[i], UP_DEP_INOUT};
        for (int k = 0; k < NSTAGE; k++)
            CHECK_EQ(up_task_deps(stage_task, (void *)(intptr_t)k, list, NSTAGE, NULL), UP_OK);
        up_taskwait();
        for (int k = 0; k < NSTAGE; k++)
            CHECK_EQ(stage_log[k], k);
        /* Only the NULL address in common still orders them. */
        atomic_store(&stage_next, 0);
        for (int k = 0; k < 8; k++) {
            up_dep d = {NULL, UP_DEP_INOUT};
            CHECK_EQ(up_task_deps(stage_task, (void *)(intptr_t)k, &d, 1, NULL), UP_OK);
        }
        up_taskwait();
        for (int k = 0; k < 8; k++)
            CHECK_EQ(stage_log[k], k);
        /* mutexinoutset: one at a time, in any order. */
        for (int k = 0; k < 8; k++) {
            up_dep d = {&cells[50], UP_DEP_MUTEXINOUTSET};
            CHECK_EQ(up_task_deps(mutex_task, NULL, &d, 1, NULL), UP_OK);
        }
        up_taskwait();
        CHECK_EQ(atomic_load(&mutex_overlap), 0);
    }
    up_barrier();
}

/* ---- loops ------------------------------------------------------------ */

typedef struct loop_log {
    _Atomic uint64_t covered, calls, small, big;
    int64_t chunk;
    int64_t hi;
} loop_log;

static void dyn_body(int64_t lo, int64_t hi, void *p)
{
    loop_log *l = p;
    uint64_t n = (uint64_t)hi - (uint64_t)lo;
    atomic_fetch_add(&l->covered, n);
    atomic_fetch_add(&l->calls, 1);
    if (n != (uint64_t)l->chunk && hi != l->hi)
        atomic_fetch_add(&l->small, 1); /* only the last chunk may be short */
}

static void guided_body(int64_t lo, int64_t hi, void *p)
{
    loop_log *l = p;
    uint64_t n = (uint64_t)hi - (uint64_t)lo;
    atomic_fetch_add(&l->covered, n);
    atomic_fetch_add(&l->calls, 1);
    if (n < (uint64_t)l->chunk && hi != l->hi)
        atomic_fetch_add(&l->small, 1);
}

static loop_log dyn, gd, whole;

static void loops_region(void *arg)
{
    (void)arg;
    up_for_opts o = UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = 7);
    CHECK_EQ(up_for(-3, 1000, &o, dyn_body, &dyn), UP_OK);
    o = UP_FOR_OPTS(.schedule = UP_SCHED_GUIDED, .chunk = 5);
    CHECK_EQ(up_for(-3, 1000, &o, guided_body, &gd), UP_OK);
    /* 2^64 - 1 iterations: one body call per chunk, or this never ends. */
    o = UP_FOR_OPTS(.schedule = UP_SCHED_GUIDED);
    CHECK_EQ(up_for(INT64_MIN, INT64_MAX, &o, guided_body, &whole), UP_OK);
}

/* ---- taskloop nogroup -------------------------------------------------- */

static _Atomic uint64_t tl_iters, tl_calls;

static void tl_body(int64_t lo, int64_t hi, void *ctx)
{
    (void)ctx;
    pause_us(50);
    atomic_fetch_add(&tl_iters, (uint64_t)(hi - lo));
    atomic_fetch_add(&tl_calls, 1);
}

static void start_taskloop(void)
{
    /* Returns before the chunks run; its frame is gone when they do. */
    up_taskloop_opts lo = UP_TASKLOOP_OPTS(.num_tasks = 25, .nogroup = 1);
    CHECK_EQ(up_taskloop(0, 1000, &lo, tl_body, NULL), UP_OK);
}

static void taskloop_region(void *arg)
{
    (void)arg;
    if (up_single()) {
        start_taskloop();
        up_taskwait();
        CHECK_EQ(atomic_load(&tl_iters), 1000);
        CHECK_EQ(atomic_load(&tl_calls), 25);
    }
    up_barrier();
}

/* ---- up_parallel_exact ------------------------------------------------ */

static void exact_region(void *arg) { atomic_fetch_add((_Atomic int *)arg, 1); }

static _Atomic int nested_ran, nested_team, nested_checked;

static void nested_team_region(void *arg)
{
    (void)arg;
    atomic_store(&nested_team, (int)up_num_threads());
}

/* The master of an active team of two, where no further level may be
 * active: all or nothing means nothing. */
static void nested_exact_region(void *arg)
{
    (void)arg;
    if (!up_master())
        return;
    CHECK_EQ(up_num_threads(), 2u);
    int rc = up_parallel_exact(pool, 2, exact_region, &nested_ran);
    const char *e = up_last_error();
    printf("nested up_parallel_exact(2): %d, \"%s\", ran %d\n", rc, e ? e : "",
           atomic_load(&nested_ran));
    CHECK_EQ(rc, UP_EAGAIN);
    CHECK_EQ(atomic_load(&nested_ran), 0);
    CHECK(e && strstr(e, "up_parallel_exact") && strstr(e, "MAX_ACTIVE_LEVELS"));
    CHECK_EQ(up_parallel(pool, 2, nested_team_region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&nested_team), 1);
    atomic_store(&nested_checked, 1);
}

static int nested_exact(void)
{
    CHECK_EQ(up_parallel_exact(pool, 2, nested_exact_region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&nested_checked), 1);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}

int main(int argc, char **argv)
{
    const char *want = getenv("UP_BACKEND");
    up_backend b = UP_BACKEND_ULTRAPOOL;
    if (want && !strcmp(want, "gomp"))
        b = UP_BACKEND_GOMP;
    else if (want && !strcmp(want, "llvm"))
        b = UP_BACKEND_LLVM;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    up_stats before, after;
    up_pool_stats(pool, &before);
    if (argc > 1 && !strcmp(argv[1], "nested-exact")) {
        CHECK_EQ(up_get_backend(), b);
        return nested_exact();
    }

    check_backend(b);
    check_default_team();
    CHECK_EQ(up_parallel(pool, 2, children_region, NULL), UP_OK);
    CHECK_EQ(up_parallel(pool, 2, cancel_region, NULL), UP_OK);
    CHECK_LT(atomic_load(&cancel_ran), 200); /* the ones not started were skipped */
    CHECK_LE(atomic_load(&cancel_late), 2);
    CHECK_EQ(atomic_load(&watcher_saw), 1);
    CHECK_EQ(up_parallel(pool, 2, deps_region, NULL), UP_OK);

    dyn.chunk = 7;
    dyn.hi = gd.hi = 1000;
    gd.chunk = 5;
    whole.chunk = 1;
    whole.hi = INT64_MAX;
    CHECK_EQ(up_parallel(pool, 2, loops_region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&dyn.covered), 1003);
    CHECK_EQ(atomic_load(&dyn.calls), 1003 / 7 + 1);
    CHECK_EQ(atomic_load(&dyn.small), 0);
    CHECK_EQ(atomic_load(&gd.covered), 1003);
    CHECK_EQ(atomic_load(&gd.small), 0);
    CHECK_LT(atomic_load(&gd.calls), 1003 / 5); /* decreasing chunks, not all of 5 */
    CHECK_EQ(atomic_load(&whole.covered), UINT64_MAX);
    CHECK_LT(atomic_load(&whole.calls), 10000);

    CHECK_EQ(up_parallel(pool, 2, taskloop_region, NULL), UP_OK);

    _Atomic int ran = 0;
    CHECK_EQ(up_parallel_exact(pool, 2, exact_region, &ran), UP_OK);
    CHECK_EQ(atomic_load(&ran), 2);
    if (b != UP_BACKEND_ULTRAPOOL) {
        /* OMP_THREAD_LIMIT=8 (ctest): 9 can never be had (UP_EINVAL, as
         * on ultrapool above UP_THREAD_LIMIT), and nothing runs. */
        atomic_store(&ran, 0);
        CHECK_EQ(up_parallel_exact(pool, 9, exact_region, &ran), UP_EINVAL);
        CHECK(strstr(up_last_error(), "up_parallel_exact") != NULL);
        CHECK_EQ(atomic_load(&ran), 0);
    }

    /* Outside a region: a team of one, tasks at once. */
    CHECK_EQ(up_num_threads(), 1u);
    CHECK_EQ(up_level(), 0u);
    atomic_store(&grandchildren_done, 0);
    CHECK_EQ(up_task(grandchild, NULL, NULL), UP_OK);
    CHECK_EQ(atomic_load(&grandchildren_done), 1);

    up_pool_stats(pool, &after);
    if (b != UP_BACKEND_ULTRAPOOL)
        CHECK_EQ(after.executed, before.executed); /* the pool ran none of it */
    else
        CHECK_GT(after.executed, before.executed);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
