/* Reliability 4: create / submit / destroy churn, thousands of cycles,
 * some with the stop requested from inside a task. No thread is leaked
 * (the process's thread count comes back to where it started) and, in the
 * ASan build, LeakSanitizer finds no leaked memory at exit. */
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"
#include "threads.h"

static void stop_from_inside(void *arg)
{
    up_pool *p = arg;
    up_pool_stop(p); /* the non-waiting stop is allowed in a task */
    CHECK_EQ(up_pool_stop_and_wait(p), UP_EDEADLK);
    atomic_fetch_add(&counted_ran, 1);
}

int main(void)
{
    uint64_t seed = test_seed();
    /* Each cycle starts and joins threads, slow on a busy machine: the run
     * ends after the cycles asked or 20 s of them (UP_TEST_CHURN_BUDGET_MS),
     * whichever comes first, and after at least 50. */
    int asked = (int)test_size("UP_TEST_CHURN_CYCLES", 2000), cycles = 0;
    /* One cycle first: a sanitizer's runtime may start a thread of its
     * own on first use, which is not ours to count. */
    up_pool *warm;
    CHECK_EQ(up_pool_create(&warm, NULL), UP_OK);
    CHECK_EQ(up_pool_destroy(warm), UP_OK);
    test_sleep_ms(10);
    int before = test_threads();
    long tasks = 0;
    test_budget budget = test_budget_start("UP_TEST_CHURN_BUDGET_MS", 20000, 50);
    for (int c = 0; c < asked && test_budget_left(&budget, (uint64_t)c); c++, cycles++) {
        up_config cfg;
        up_config_init(&cfg);
        cfg.shards = 1 + (unsigned)(test_rand(&seed) % 4);
        cfg.shard_min_workers = (unsigned)(test_rand(&seed) % 3);
        cfg.shard_max_workers = 3;
        up_pool *p;
        CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
        atomic_store(&counted_ran, 0);
        int n = (int)(test_rand(&seed) % 50);
        for (int i = 0; i < n; i++)
            CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK);
        int inside = c % 3 == 0;
        if (inside)
            CHECK_EQ(up_submit_wait(p, stop_from_inside, p), UP_OK);
        CHECK_EQ(up_pool_destroy(p), UP_OK);
        CHECK_EQ(atomic_load(&counted_ran), n + inside);
        tasks += n + inside;
    }
    int after = test_threads();
    printf("figure: %d create/destroy cycles (of %d; %.1f s), %ld tasks, threads before %d after "
           "%d, leaked %d\n",
           cycles, asked, test_budget_seconds(&budget), tasks, before, after, after - before);
    CHECK_GT(before, 0);
    CHECK_EQ(after, before);
    return 0;
}
