/* Reliability: the first worker of an empty pool. With a floor of zero and
 * a 1 ms idle timeout every worker retires between bursts, so a submit
 * often finds no worker and starts one itself. Several threads do that at
 * once on a shard capped at one worker: one of them holds the shard's slot
 * before the pool's count shows it, and the others must wait for that
 * worker rather than refuse their task. A refusal here (UP_EAGAIN) would
 * be a lie: the OS never refused a thread. Every accepted task runs once.
 * The run stops after UP_TEST_FIRST_WORKER_ROUNDS rounds or its budget
 * (UP_TEST_FIRST_WORKER_BUDGET_MS), whichever comes first. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"

#define SUBMITTERS 4

static up_pool *pool;
static _Atomic unsigned round_go, arrived;
static _Atomic uint64_t accepted, refused;

static void *submitter(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg;
    unsigned seen = 0;
    for (;;) {
        unsigned r;
        while ((r = atomic_load(&round_go)) == seen)
            test_spin(64);
        if (r == UINT32_MAX)
            return NULL;
        seen = r;
        test_spin((unsigned)(test_rand(&rng) % 8));
        int rc = up_submit(pool, counted_task, NULL);
        if (rc == UP_OK)
            atomic_fetch_add(&accepted, 1);
        else {
            atomic_fetch_add(&refused, 1);
            fprintf(stderr, "round %u: up_submit returned %s (%s)\n", r, up_strerror(rc),
                    up_last_error());
        }
        atomic_fetch_add(&arrived, 1);
    }
}

static int retired_all(void)
{
    up_stats s;
    up_pool_stats(pool, &s);
    return s.workers == 0;
}

int main(void)
{
    uint64_t seed = test_seed();
    uint64_t rounds = test_size("UP_TEST_FIRST_WORKER_ROUNDS", 3000);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_max_workers = 1;
    cfg.shard_min_workers = 0;
    cfg.idle_timeout_ns = 1000000;
    cfg.spin = 4;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);

    pthread_t th[SUBMITTERS];
    for (uintptr_t i = 0; i < SUBMITTERS; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, submitter,
                                (void *)(seed ^ (i + 1) * 0x9e3779b97f4a7c15ull)),
                 0);
    test_budget budget = test_budget_start("UP_TEST_FIRST_WORKER_BUDGET_MS", 10000, 50);
    uint64_t done = 0, from_empty = 0;
    for (; done < rounds && test_budget_left(&budget, done); done++) {
        /* Wait (bounded) for the pool to retire its worker, so the round
         * starts from no worker at all. */
        uint64_t t0 = test_now_ns();
        while (!retired_all() && test_now_ns() - t0 < 50000000ull)
            test_sleep_ms(1);
        from_empty += retired_all();
        atomic_store(&arrived, 0);
        atomic_store(&round_go, (unsigned)done + 1);
        while (atomic_load(&arrived) < SUBMITTERS)
            test_spin(64);
    }
    atomic_store(&round_go, UINT32_MAX);
    for (int i = 0; i < SUBMITTERS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    up_stats s;
    up_pool_stats(pool, &s);
    printf("figure: %llu rounds of %d submits (%llu from no worker at all), %llu refused, %llu "
           "retirements, %.1f s\n",
           (unsigned long long)done, SUBMITTERS, (unsigned long long)from_empty,
           (unsigned long long)atomic_load(&refused), (unsigned long long)s.retired,
           test_budget_seconds(&budget));
    CHECK_EQ(atomic_load(&refused), 0);
    CHECK_EQ(atomic_load(&counted_ran), atomic_load(&accepted));
    CHECK_EQ(s.executed, atomic_load(&accepted));
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    if (from_empty == 0) {
        printf("no round started from an empty pool: nothing observed\n");
        return TEST_SKIP;
    }
    return 0;
}
