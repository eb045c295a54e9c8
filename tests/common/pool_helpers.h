/* Pools several tests share: a pool created from a configuration or the
 * test fails, and pools of one shard with a fixed number of workers (with
 * one worker, a task that waits for other tasks finishes only if the
 * waiting thread runs them). The gate task that holds a worker of such a
 * pool is gate.h. */
#ifndef UP_TEST_POOL_HELPERS_H
#define UP_TEST_POOL_HELPERS_H

#include <ultrapool/pool.h>

#include "check.h"

/* A pool of cfg; a configuration the pool refuses fails the test. */
static inline up_pool *test_pool_create(const up_config *cfg)
{
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, cfg), UP_OK);
    return p;
}

/* The defaults, but one shard of exactly n workers, started at once and
 * never retired. */
static inline void test_fixed_config(up_config *cfg, unsigned n)
{
    CHECK_EQ(up_config_init(cfg), UP_OK);
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
    return test_pool_create(&cfg);
}

/* A pool of test_fixed_config(n). */
static inline up_pool *test_fixed_pool(unsigned n)
{
    up_config cfg;
    test_fixed_config(&cfg, n);
    return test_pool_create(&cfg);
}

#endif
