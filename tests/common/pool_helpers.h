/* Pools and tasks several tests share: a pool that can never have more
 * than one worker (a task that waits for other tasks then finishes only if
 * the waiting thread runs them), and a gate task that holds the thread
 * running it until the test opens the gate. */
#ifndef UP_TEST_POOL_HELPERS_H
#define UP_TEST_POOL_HELPERS_H

#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

/* The defaults, but one shard of exactly n workers, started at once and
 * never retired. */
static inline void test_fixed_config(up_config *cfg, unsigned n)
{
    up_config_init(cfg);
    cfg->shards = 1;
    cfg->shard_min_workers = n;
    cfg->shard_max_workers = n;
    cfg->max_workers = n;
}

/* One shard, one worker, never more. queue_capacity 0: the default;
 * start and ctx: the worker start hook and its context, or NULL. */
static inline up_pool *test_one_worker_pool(unsigned queue_capacity, up_worker_start_fn start,
                                            void *ctx)
{
    up_config cfg;
    test_fixed_config(&cfg, 1);
    if (queue_capacity)
        cfg.queue_capacity = queue_capacity;
    cfg.on_worker_start = start;
    cfg.hook_ctx = ctx;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    return p;
}

/* A pool of test_fixed_config(n). */
static inline up_pool *test_fixed_pool(unsigned n)
{
    up_config cfg;
    test_fixed_config(&cfg, n);
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    return p;
}

typedef struct test_gate {
    _Atomic int open, running;
} test_gate;

/* A task, with its gate as the argument: holds its thread until the gate
 * opens. */
static inline void test_gate_task(void *arg)
{
    test_gate *g = arg;
    atomic_store(&g->running, 1);
    while (!atomic_load(&g->open))
        test_sleep_ms(1);
}

/* Closes the gate. */
static inline void test_gate_reset(test_gate *g)
{
    atomic_store(&g->open, 0);
    atomic_store(&g->running, 0);
}

/* Waits until a thread runs the gate task. Tests wait for this before they
 * let a thread help: while the task is still queued, the helper could take
 * it and be held itself. */
static inline void test_gate_wait_running(test_gate *g)
{
    WAIT_UNTIL(atomic_load(&g->running), 10000);
    CHECK_EQ(atomic_load(&g->running), 1);
}

static inline void test_gate_open(test_gate *g) { atomic_store(&g->open, 1); }

#endif
