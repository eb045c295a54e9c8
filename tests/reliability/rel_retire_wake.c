/* Reliability 6: retirement racing wake-up. With a 1 ms idle timeout,
 * workers above the floor retire constantly, and submits arrive around
 * those moments (after random pauses near 1 ms). Each submit waits for its
 * task to start before the next one, and the monitor (which would rescue a
 * stranded task) looks only every 10 s: so a wake-up lost to a retiring or
 * parking worker shows as a wait of seconds. No task may wait longer than
 * the bound. Each submit waits for a worker to be started or woken, which
 * on a busy machine takes as long as the scheduler makes it: the run stops
 * after n submits or 30 s (UP_TEST_RETIRE_BUDGET_MS), whichever comes
 * first, and after at least 100. */
#include <sched.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"

typedef struct stamp {
    uint64_t submitted;
    _Atomic uint64_t started;
} stamp;

static void task(void *arg)
{
    stamp *s = arg;
    atomic_store(&s->started, test_now_ns());
}

int main(void)
{
    uint64_t seed = test_seed();
    int n = (int)test_size("UP_TEST_RETIRE_TASKS", 2000);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shard_min_workers = 0; /* everything may retire */
    cfg.idle_timeout_ns = 1000000;
    cfg.spawn_delay_ns = 10000000000ull; /* no rescue by the monitor */
    cfg.spin = 16;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    stamp *st = calloc((size_t)n, sizeof *st);
    uint64_t worst = 0, total = 0;
    test_budget budget = test_budget_start("UP_TEST_RETIRE_BUDGET_MS", 30000, 100);
    int asked = n;
    for (int i = 0; i < n; i++) {
        if (!test_budget_left(&budget, (uint64_t)i)) {
            n = i; /* the budget is spent: check what ran */
            break;
        }
        /* Pause 0.5 to 1.5 ms: around the idle timeout. */
        uint64_t pause = 500000 + test_rand(&seed) % 1000000;
        uint64_t until = test_now_ns() + pause;
        while (test_now_ns() < until)
            ;
        st[i].submitted = test_now_ns();
        CHECK_EQ(up_submit_wait(p, task, &st[i]), UP_OK);
        while (!atomic_load(&st[i].started) && test_now_ns() - st[i].submitted < 20000000000ull)
            sched_yield();
    }
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    for (int i = 0; i < n; i++) {
        uint64_t s = atomic_load(&st[i].started);
        CHECK_GE(s, st[i].submitted);
        uint64_t w = s - st[i].submitted;
        total += w;
        worst = w > worst ? w : worst;
    }
    up_stats ps;
    up_pool_stats(p, &ps);
    printf("figure: %d submits (of %d; %.1f s) around a 1 ms idle timeout (floor 0), %llu "
           "retirements, mean wait %.1f us, worst %.1f us (bound 1 s), lost wake-ups 0\n",
           n, asked, test_budget_seconds(&budget), (unsigned long long)ps.retired,
           (double)total / n / 1e3, (double)worst / 1e3);
    /* Thread creation and wake-up cost tens of microseconds here, and up to
     * a few hundred milliseconds on a heavily loaded VM; a lost wake-up
     * costs the monitor's period, 10 s. */
    if (worst >= 1000000000ull) {
        int w = 0;
        for (int i = 0; i < n; i++)
            if (atomic_load(&st[i].started) - st[i].submitted == worst)
                w = i;
        fprintf(stderr, "task %d waited %.1f ms\n", w, (double)worst / 1e6);
    }
    CHECK_LT(worst, 1000000000ull);
    CHECK_GT(ps.retired, 0);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free(st);
    return 0;
}
