/* Reliability 15: bad input. Every public function gets NULL, zero, huge
 * and garbage arguments; each returns an error (or, for the void ones,
 * does nothing), and a pool used alongside keeps working. Garbage in every
 * UP_* variable is refused by name (also in test_config; the fuzz target
 * goes further). */
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"

static void range(int64_t lo, int64_t hi, void *arg)
{
    (void)lo;
    (void)hi;
    (void)arg;
}

static int checks;
#define EXPECT(call, rc)                                                                           \
    do {                                                                                           \
        CHECK_EQ(call, rc);                                                                        \
        checks++;                                                                                  \
    } while (0)

static void still_works(up_pool *p)
{
    uint64_t before = atomic_load(&counted_ran);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&counted_ran) == before + 100, 10000);
    CHECK_EQ(atomic_load(&counted_ran), before + 100);
}

int main(void)
{
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);

    /* Configuration. */
    EXPECT(up_config_init(NULL), UP_EINVAL);
    EXPECT(up_config_validate(NULL), UP_EINVAL);
    EXPECT(up_pool_create(NULL, NULL), UP_EINVAL);
    up_config cfg;
    up_config_init(&cfg);
    up_config bad = cfg;
    bad.shards = 1000000;
    up_pool *q = (up_pool *)&cfg; /* garbage, must be overwritten with NULL */
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    CHECK(q == NULL);
    bad = cfg;
    bad.queue_capacity = 3;
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    bad.queue_capacity = 0xffffffffu;
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    bad.idle_timeout_ns = 0;
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    bad.idle_timeout_ns = UINT64_MAX;
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    bad.submit_help = -1;
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    bad.stack_size = 1;
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    memset(&bad, 0xA5, sizeof bad); /* every field garbage, the size too */
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad.size = sizeof bad; /* every field garbage but the size */
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    bad = cfg;
    bad.size = 0; /* not made by up_config_init */
    EXPECT(up_pool_create(&q, &bad), UP_EINVAL);
    EXPECT(up_config_validate(&bad), UP_EINVAL);
    EXPECT(up_config_init_sized(&bad, 0), UP_EINVAL);
    still_works(p);

    /* Submits. */
    EXPECT(up_submit(NULL, counted_task, NULL), UP_EINVAL);
    EXPECT(up_submit(p, NULL, NULL), UP_EINVAL);
    EXPECT(up_submit_wait(NULL, counted_task, NULL), UP_EINVAL);
    EXPECT(up_submit_wait(p, NULL, NULL), UP_EINVAL);
    EXPECT(up_submit_timeout(p, NULL, NULL, 1), UP_EINVAL);
    EXPECT(up_submit_copy(p, counted_task, NULL, 1), UP_EINVAL);
    EXPECT(up_submit_copy(p, counted_task, "x", 0), UP_EINVAL);
    EXPECT(up_submit_copy(p, counted_task, "x", (size_t)-1), UP_EINVAL);
    EXPECT(up_submit_copy(p, NULL, "x", 1), UP_EINVAL);
    EXPECT(up_submit_copy_wait(p, counted_task, "x", UP_PAYLOAD_MAX + 1), UP_EINVAL);
    uint64_t before = atomic_load(&counted_ran);
    EXPECT(up_submit_timeout(p, counted_task, NULL, UINT64_MAX),
           UP_OK); /* a huge timeout is fine */
    WAIT_UNTIL(atomic_load(&counted_ran) == before + 1, 10000);
    CHECK_EQ(atomic_load(&counted_ran), before + 1);
    still_works(p);

    /* Lifecycle and introspection. */
    up_pool_stop(NULL);
    EXPECT(up_pool_stop_and_wait(NULL), UP_EINVAL);
    EXPECT(up_pool_stop_timeout(NULL, 1), UP_EINVAL);
    EXPECT(up_pool_destroy(NULL), UP_EINVAL);
    up_stats st;
    memset(&st, 0xff, sizeof st);
    up_pool_stats(NULL, &st);
    CHECK_EQ(st.submitted, 0);
    up_pool_stats(p, NULL);
    EXPECT(up_pool_shard_stats(NULL, 0, &st), UP_EINVAL);
    EXPECT(up_pool_shard_stats(p, 1u << 30, &st), UP_EINVAL);
    EXPECT(up_pool_shard_stats(p, 0, NULL), UP_EINVAL);
    EXPECT(up_pool_shards(NULL), 0);
    EXPECT(up_pool_reserve(NULL, 4), 0);
    EXPECT(up_pool_reserve(p, 0), 0);
    up_pool_print_config(NULL, NULL);
    CHECK_GT(strlen(up_strerror(-12345)), 0);
    CHECK_GT(strlen(up_strerror(12345)), 0);
    CHECK(up_worker_local() == NULL);
    CHECK(up_current_pool() == NULL);
    still_works(p);

    /* The OpenMP-style layer. */
    EXPECT(up_parallel(NULL, 2, (up_fn)counted_task, NULL), UP_EINVAL);
    EXPECT(up_parallel(p, 2, NULL, NULL), UP_EINVAL);
    EXPECT(up_parallel(p, 1u << 30, (up_fn)counted_task, NULL), UP_EINVAL);
    EXPECT(up_for(0, 10, NULL, NULL, NULL), UP_EINVAL);
    up_for_opts fo = UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = -5);
    EXPECT(up_for(0, 10, &fo, range, NULL), UP_EINVAL);
    EXPECT(up_for_2d(0, 1, 0, 1, NULL, NULL, NULL), UP_EINVAL);
    EXPECT(up_parallel_for(p, 0, 10, &fo, range, NULL), UP_EINVAL);
    EXPECT(up_reduce(NULL, UP_RED_SUM, UP_RED_INT64), UP_EINVAL);
    int64_t v = 0;
    EXPECT(up_reduce(&v, (up_red_op)77, UP_RED_INT64), UP_EINVAL);
    EXPECT(up_reduce(&v, UP_RED_SUM, (up_red_type)77), UP_EINVAL);
    EXPECT(up_reduce_user(&v, 0, NULL), UP_EINVAL);
    EXPECT(up_reduce_user(&v, 100000, NULL), UP_EINVAL);
    EXPECT(up_task(NULL, NULL, NULL), UP_EINVAL);
    EXPECT(up_task_copy(counted_task, NULL, 4, NULL), UP_EINVAL);
    EXPECT(up_task_copy(counted_task, &v, 0, NULL), UP_EINVAL);
    EXPECT(up_task_deps(counted_task, NULL, NULL, 3, NULL), UP_EINVAL);
    up_dep d = {&v, (up_dep_kind)99};
    EXPECT(up_task_deps(counted_task, NULL, &d, 1, NULL), UP_EINVAL);
    EXPECT(up_taskgroup(NULL, NULL), UP_EINVAL);
    up_taskloop_opts lo = UP_TASKLOOP_OPTS(.grainsize = -1);
    EXPECT(up_taskloop(0, 10, &lo, range, NULL), UP_EINVAL);
    EXPECT(up_taskloop(0, 10, NULL, NULL, NULL), UP_EINVAL);
    still_works(p);

    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("figure: %d bad calls refused with the right code, the pool kept working after each "
           "group\n",
           checks);
    return 0;
}
