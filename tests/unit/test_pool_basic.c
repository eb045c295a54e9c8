/* The pool's everyday behaviour: default shard count, floors applied,
 * completeness across configurations, copied and typed payloads, nested
 * submits landing in the worker's deque, and one wake per submit. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"
#include "cpus.h"
#include "gate.h"
#include "pool_helpers.h"

static void default_shards(void)
{
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    /* Without a topology library one shard per allowed CPU; with hwloc one
     * per cache domain, never more shards than CPUs. */
    CHECK(up_pool_shards(p) >= 1 && up_pool_shards(p) <= test_cpus());
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.shards, up_pool_shards(p));
    CHECK_GE(st.workers, st.shards); /* floor of 1 per shard */
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

static void run_config(unsigned shards, unsigned min, unsigned max, unsigned queue, int help,
                       unsigned submitters, uint64_t per);

typedef struct sub_arg {
    up_pool *p;
    uint64_t n;
} sub_arg;

static void *submitter(void *arg)
{
    sub_arg *a = arg;
    for (uint64_t i = 0; i < a->n; i++)
        CHECK_EQ(up_submit_wait(a->p, counted_task, NULL), UP_OK);
    return NULL;
}

static void run_config(unsigned shards, unsigned min, unsigned max, unsigned queue, int help,
                       unsigned submitters, uint64_t per)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = shards;
    cfg.shard_min_workers = min;
    cfg.shard_max_workers = max;
    cfg.queue_capacity = queue;
    cfg.submit_help = help;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.shards, shards);
    CHECK_EQ(st.workers, shards * min);
    atomic_store(&counted_ran, 0);
    pthread_t th[16];
    sub_arg a = {p, per};
    for (unsigned i = 0; i < submitters; i++)
        pthread_create(&th[i], NULL, submitter, &a);
    for (unsigned i = 0; i < submitters; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), per * submitters);
    up_pool_stats(p, &st);
    CHECK_EQ(st.submitted, per * submitters);
    CHECK_EQ(st.executed, per * submitters);
    CHECK_LE(st.workers_peak, shards * max);
    CHECK_EQ(st.workers, 0);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Copied payloads and the typed front. */
typedef struct point {
    double x, y;
    int tag;
} point;

static _Atomic int64_t tag_sum;
static void on_point(point *pt)
{
    CHECK(pt->x == pt->tag * 0.5 && pt->y == -pt->tag);
    atomic_fetch_add(&tag_sum, pt->tag);
}
UP_TYPED(points, point, on_point)

static void on_bytes(void *arg)
{
    const unsigned char *b = arg;
    for (int i = 0; i < UP_PAYLOAD_MAX; i++)
        CHECK_EQ(b[i], (unsigned char)(b[0] + i));
    atomic_fetch_add(&counted_ran, 1);
}

static void payloads(void)
{
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    atomic_store(&counted_ran, 0);
    atomic_store(&tag_sum, 0);
    unsigned char buf[UP_PAYLOAD_MAX];
    for (int k = 0; k < 1000; k++) {
        for (int i = 0; i < UP_PAYLOAD_MAX; i++)
            buf[i] = (unsigned char)(k + i);
        CHECK_EQ(up_submit_copy_wait(p, on_bytes, buf, sizeof buf), UP_OK);
        memset(buf, 0xEE, sizeof buf); /* the pool holds its own copy */
        point pt = {k * 0.5, -k, k};
        CHECK_EQ(points_submit_wait(p, pt), UP_OK);
    }
    CHECK_EQ(up_submit_copy(p, on_bytes, buf, UP_PAYLOAD_MAX + 1), UP_EINVAL);
    CHECK_EQ(up_submit_copy(p, on_bytes, buf, 0), UP_EINVAL);
    CHECK_EQ(up_submit_copy(p, on_bytes, NULL, 8), UP_EINVAL);
    CHECK_EQ(up_submit(p, NULL, NULL), UP_EINVAL);
    CHECK(strstr(up_last_error(), "NULL") != NULL);
    CHECK_EQ(up_submit_wait(p, NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_submit(NULL, counted_task, NULL), UP_EINVAL);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), 1000);
    CHECK_EQ(atomic_load(&tag_sum), 999 * 1000 / 2);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Inside a task: the current pool is known, and nested submits go to the
 * worker's deque (counted as submitted, run exactly once). */
static up_pool *nested_pool;
static _Atomic int wrong_pool;

static void leaf(void *arg)
{
    (void)arg;
    if (up_current_pool() != nested_pool)
        atomic_store(&wrong_pool, 1);
    atomic_fetch_add(&counted_ran, 1);
}

static void parent(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        CHECK_EQ(up_submit_wait(nested_pool, leaf, NULL), UP_OK);
    atomic_fetch_add(&counted_ran, 1);
}

static void nested(void)
{
    CHECK(up_current_pool() == NULL);
    CHECK(up_worker_local() == NULL);
    CHECK_EQ(up_pool_create(&nested_pool, NULL), UP_OK);
    atomic_store(&counted_ran, 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(up_submit_wait(nested_pool, parent, NULL), UP_OK);
    /* Stop rejects nested submits too, so let the tree finish first. */
    WAIT_UNTIL(atomic_load(&counted_ran) == 1100, 10000);
    CHECK_EQ(up_pool_stop_and_wait(nested_pool), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), 1100);
    CHECK_EQ(atomic_load(&wrong_pool), 0);
    up_stats st;
    up_pool_stats(nested_pool, &st);
    CHECK_EQ(st.submitted, 1100);
    CHECK_EQ(st.executed, 1100);
    CHECK_EQ(up_pool_destroy(nested_pool), UP_OK);
}

/* With every worker parked, one submit wakes exactly one worker. */
static void wake_one(void)
{
    up_config cfg;
    test_fixed_config(&cfg, 4);
    cfg.spin = 0;
    up_pool *p = test_pool_create(&cfg);
    up_stats st;
    up_pool_stats(p, &st);
    WAIT_UNTIL((up_pool_stats(p, &st), st.parked == 4), 10000);
    CHECK_EQ(st.parked, 4);
    uint64_t wakes = st.wakes;
    static test_gate gate;
    test_gate_reset(&gate);
    CHECK_EQ(up_submit(p, test_gate_task, &gate), UP_OK);
    WAIT_UNTIL((up_pool_stats(p, &st), st.parked == 3 && st.searching == 0), 10000);
    test_sleep_ms(20);
    up_pool_stats(p, &st);
    CHECK_EQ(st.wakes - wakes, 1);
    CHECK_EQ(st.parked, 3);
    test_gate_open(&gate);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

int main(void)
{
    default_shards();
    uint64_t per = test_size("UP_TEST_PER_SUBMITTER", 20000);
    run_config(1, 1, 1, 2, 0, 4, per);
    run_config(1, 1, 1, 2, 1, 4, per);
    run_config(2, 1, 4, 16, 1, 3, per);
    run_config(4, 0, 2, 8, 0, 8, per);
    run_config(3, 2, 2, 1024, 1, 2, per);
    run_config(8, 1, 3, 4, 1, 16, per / 4);
    payloads();
    nested();
    wake_one();
    printf("pool basics: 6 configurations x %" PRIu64 " tasks per submitter complete, payloads, "
           "nesting and single wake-ups checked\n",
           per);
    return 0;
}
