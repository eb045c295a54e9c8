/* Every error return of the OpenMP-style layer says what failed in
 * up_last_error(): before each failing call a runtime call leaves other
 * text there, and after it the text must begin with the failing call's
 * name. Covers bad arguments of every call that takes any, regions on a
 * stopped pool, an all-or-nothing region that cannot be gathered and a
 * cancelled taskgroup; the loop and reduction calls also inside a
 * region. */
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/parallel.h>

#include "check.h"
#include "pool_helpers.h"

static up_pool *pool, *stopped, *small;

static void region(void *p) { (void)p; }
static void task(void *p) { (void)p; }
static void body(int64_t lo, int64_t hi, void *p) { (void)lo, (void)hi, (void)p; }
static void body2d(int64_t i, int64_t lo, int64_t hi, void *p)
{
    (void)i, (void)lo, (void)hi, (void)p;
}
static void combine(void *into, const void *from) { (void)into, (void)from; }
static void cancel_group(void *p)
{
    (void)p;
    up_cancel_taskgroup();
}

/* Leaves text in up_last_error() that names no layer call. */
static void stale(void)
{
    CHECK_EQ(up_submit(NULL, task, NULL), UP_EINVAL);
    CHECK(strncmp(up_last_error(), "up_", 3) != 0);
}

static void expect(int rc, int want, const char *name, int line)
{
    const char *err = up_last_error();
    size_t n = strlen(name);
    if (rc != want || strncmp(err, name, n) != 0 || err[n] != ':') {
        fprintf(stderr, "line %d: %s returned %d (expected %d), up_last_error() is \"%s\"\n", line,
                name, rc, want, err);
        abort();
    }
}

#define EXPECT(call, want, name)                                                                   \
    do {                                                                                           \
        stale();                                                                                   \
        int rc_ = (call);                                                                          \
        expect(rc_, want, name, __LINE__);                                                         \
    } while (0)

/* Options with bad values (function-scope: the macros make compound
 * literals, which a static initializer cannot take in ISO C). */
#define BAD_SCHED  UP_FOR_OPTS(.schedule = (up_schedule)7)
#define BAD_CHUNK  UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = -1)
#define BAD_GRAIN  UP_TASKLOOP_OPTS(.grainsize = -1)
#define BAD_NTASKS UP_TASKLOOP_OPTS(.num_tasks = -5)
static int cell;

/* The calls that work inside a region as outside it. */
static void local_calls(void)
{
    const up_for_opts bad_sched = BAD_SCHED, bad_chunk = BAD_CHUNK, unsized = {0};
    const up_taskloop_opts bad_grain = BAD_GRAIN, bad_ntasks = BAD_NTASKS, tl_unsized = {0};
    const up_task_opts t_unsized = {0};
    int64_t v = 0;
    EXPECT(up_for(0, 10, NULL, NULL, NULL), UP_EINVAL, "up_for");
    EXPECT(up_for(0, 10, &unsized, body, NULL), UP_EINVAL, "up_for");
    EXPECT(up_for_2d(0, 2, 0, 2, &unsized, body2d, NULL), UP_EINVAL, "up_for_2d");
    EXPECT(up_taskloop(0, 10, &tl_unsized, body, NULL), UP_EINVAL, "up_taskloop");
    EXPECT(up_task(task, NULL, &t_unsized), UP_EINVAL, "up_task");
    EXPECT(up_task_copy(task, &v, sizeof v, &t_unsized), UP_EINVAL, "up_task_copy");
    EXPECT(up_for(0, 10, &bad_sched, body, NULL), UP_EINVAL, "up_for");
    EXPECT(up_for(0, 10, &bad_chunk, body, NULL), UP_EINVAL, "up_for");
    EXPECT(up_for_2d(0, 2, 0, 2, NULL, NULL, NULL), UP_EINVAL, "up_for_2d");
    EXPECT(up_for_2d(0, 2, 0, 2, &bad_chunk, body2d, NULL), UP_EINVAL, "up_for_2d");
    EXPECT(up_for_2d(0, 2, 0, 2, &bad_sched, body2d, NULL), UP_EINVAL, "up_for_2d");
    EXPECT(up_taskloop(0, 10, NULL, NULL, NULL), UP_EINVAL, "up_taskloop");
    EXPECT(up_taskloop(0, 10, &bad_grain, body, NULL), UP_EINVAL, "up_taskloop");
    EXPECT(up_taskloop(0, 10, &bad_ntasks, body, NULL), UP_EINVAL, "up_taskloop");
    EXPECT(up_reduce(NULL, UP_RED_SUM, UP_RED_INT64), UP_EINVAL, "up_reduce");
    EXPECT(up_reduce(&v, (up_red_op)9, UP_RED_INT64), UP_EINVAL, "up_reduce");
    EXPECT(up_reduce(&v, UP_RED_SUM, (up_red_type)9), UP_EINVAL, "up_reduce");
    EXPECT(up_reduce_user(NULL, 8, combine), UP_EINVAL, "up_reduce_user");
    EXPECT(up_reduce_user(&v, 8, NULL), UP_EINVAL, "up_reduce_user");
    EXPECT(up_reduce_user(&v, 0, combine), UP_EINVAL, "up_reduce_user");
    EXPECT(up_reduce_user(&v, 257, combine), UP_EINVAL, "up_reduce_user");
    char payload[64] = {0};
    up_dep dep = {&cell, UP_DEP_INOUT}, bad_dep = {&cell, (up_dep_kind)9};
    EXPECT(up_task(NULL, NULL, NULL), UP_EINVAL, "up_task");
    EXPECT(up_task_copy(task, NULL, 8, NULL), UP_EINVAL, "up_task_copy");
    EXPECT(up_task_copy(task, payload, 0, NULL), UP_EINVAL, "up_task_copy");
    EXPECT(up_task_copy(task, payload, UP_PAYLOAD_MAX + 1, NULL), UP_EINVAL, "up_task_copy");
    EXPECT(up_task_copy(NULL, payload, 8, NULL), UP_EINVAL, "up_task_copy");
    EXPECT(up_task_deps(task, NULL, NULL, 1, NULL), UP_EINVAL, "up_task_deps");
    EXPECT(up_task_deps(task, NULL, &bad_dep, 1, NULL), UP_EINVAL, "up_task_deps");
    EXPECT(up_task_deps(NULL, NULL, &dep, 1, NULL), UP_EINVAL, "up_task_deps");
    EXPECT(up_task_deps_copy(task, payload, 0, &dep, 1, NULL), UP_EINVAL, "up_task_deps_copy");
    EXPECT(up_task_deps_copy(task, payload, 8, &bad_dep, 1, NULL), UP_EINVAL, "up_task_deps_copy");
    EXPECT(up_task_deps_copy(NULL, payload, 8, &dep, 1, NULL), UP_EINVAL, "up_task_deps_copy");
    EXPECT(up_taskgroup(NULL, NULL), UP_EINVAL, "up_taskgroup");
    EXPECT(up_taskgroup(cancel_group, NULL), UP_ECANCELED, "up_taskgroup");
    up_taskwait();
}

static void in_region(void *p)
{
    (void)p;
    if (up_master())
        local_calls();
    up_barrier();
}

int main(void)
{
    const up_for_opts bad_sched = BAD_SCHED, bad_chunk = BAD_CHUNK, unsized = {0};
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    CHECK_EQ(up_pool_create(&stopped, NULL), UP_OK);
    up_pool_stop_and_wait(stopped);
    small = test_one_worker_pool(0, NULL, NULL);

    EXPECT(up_parallel(NULL, 1, region, NULL), UP_EINVAL, "up_parallel");
    EXPECT(up_parallel(pool, 1, NULL, NULL), UP_EINVAL, "up_parallel");
    EXPECT(up_parallel(pool, 1u << 20, region, NULL), UP_EINVAL, "up_parallel");
    EXPECT(up_parallel_exact(NULL, 1, region, NULL), UP_EINVAL, "up_parallel_exact");
    EXPECT(up_parallel_exact(pool, 1, NULL, NULL), UP_EINVAL, "up_parallel_exact");
    EXPECT(up_parallel_for(NULL, 0, 10, NULL, body, NULL), UP_EINVAL, "up_parallel_for");
    EXPECT(up_parallel_for(pool, 0, 10, NULL, NULL, NULL), UP_EINVAL, "up_parallel_for");
    EXPECT(up_parallel_for(pool, 0, 10, &bad_sched, body, NULL), UP_EINVAL, "up_parallel_for");
    EXPECT(up_parallel_for(pool, 0, 10, &bad_chunk, body, NULL), UP_EINVAL, "up_parallel_for");
    EXPECT(up_parallel_for(pool, 0, 10, &unsized, body, NULL), UP_EINVAL, "up_parallel_for");
    EXPECT(up_parallel(stopped, 1, region, NULL), UP_ESTOPPED, "up_parallel");
    EXPECT(up_parallel(stopped, 2, region, NULL), UP_ESTOPPED, "up_parallel");
    EXPECT(up_parallel_exact(stopped, 2, region, NULL), UP_ESTOPPED, "up_parallel_exact");
    EXPECT(up_parallel_for(stopped, 0, 10, NULL, body, NULL), UP_ESTOPPED, "up_parallel_for");
    /* One worker: four members can never be gathered (an OpenMP backend's
     * team does not come from the pool). */
    if (up_get_backend() == UP_BACKEND_ULTRAPOOL)
        EXPECT(up_parallel_exact(small, 4, region, NULL), UP_EAGAIN, "up_parallel_exact");

    local_calls();
    CHECK_EQ(up_parallel(pool, 2, in_region, NULL), UP_OK);

    up_pool_stop_and_wait(small);
    up_pool_destroy(small);
    up_pool_destroy(stopped);
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    return 0;
}
