/* Nested submits: fib(22) computed by a tree of tasks in which every call
 * with n >= 2 submits its two subcalls from inside the pool (to the
 * worker's deque) and every leaf adds its value. The leaves sum to fib(n)
 * and the tree has 2 * fib(n + 1) - 1 tasks. */
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

static up_pool *pool;
static _Atomic uint64_t sum, tasks;

static void fib_task(void *arg)
{
    uintptr_t n = (uintptr_t)arg;
    atomic_fetch_add_explicit(&tasks, 1, memory_order_relaxed);
    if (n < 2) {
        atomic_fetch_add_explicit(&sum, n, memory_order_relaxed);
        return;
    }
    CHECK_EQ(up_submit_wait(pool, fib_task, (void *)(n - 1)), UP_OK);
    CHECK_EQ(up_submit_wait(pool, fib_task, (void *)(n - 2)), UP_OK);
}

static uint64_t fib(unsigned n)
{
    uint64_t a = 0, b = 1;
    for (unsigned i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(void)
{
    /* The depth is fixed (a shape, not a size); UP_TEST_SCALE scales the
     * number of trees. */
    unsigned n = (unsigned)test_param("UP_TEST_FIB_N", 22);
    if (n > 32)
        n = 32;
    uint64_t rounds = test_size("UP_TEST_FIB_ROUNDS", 8);
    CHECK_EQ(fib(25), 75025);
    uint64_t per_tree = 2 * fib(n + 1) - 1;
    /* A small deque so the overflow paths (shard queue, running inline)
     * are taken too. */
    up_config cfg;
    up_config_init(&cfg);
    cfg.deque_capacity = 16;
    cfg.queue_capacity = 64;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    for (uint64_t r = 1; r <= rounds; r++) {
        CHECK_EQ(up_submit_wait(pool, fib_task, (void *)(uintptr_t)n), UP_OK);
        /* A leaf counts itself before it adds its value: wait for both. */
        WAIT_UNTIL(atomic_load(&tasks) == r * per_tree && atomic_load(&sum) == r * fib(n), 60000);
        CHECK_EQ(atomic_load(&tasks), r * per_tree);
        CHECK_EQ(atomic_load(&sum), r * fib(n));
    }
    uint64_t want_tasks = rounds * per_tree;
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    CHECK_EQ(atomic_load(&sum), rounds * fib(n));
    CHECK_EQ(atomic_load(&tasks), want_tasks);
    up_stats st;
    up_pool_stats(pool, &st);
    CHECK_EQ(st.submitted, want_tasks);
    CHECK_EQ(st.executed, want_tasks);
    printf("nested fib(%u) x %llu trees = %llu from %llu tasks (%llu steals)\n", n,
           (unsigned long long)rounds, (unsigned long long)atomic_load(&sum),
           (unsigned long long)want_tasks, (unsigned long long)st.steals);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
