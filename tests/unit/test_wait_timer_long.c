/* The timer wheel's upper levels: deadlines from 0 to 6 s reach levels 0
 * to 2 (a level-0 slot is about 1 ms, level 1 spans 4.3 s), so tasks
 * cascade down one or two levels before they expire. Each runs exactly
 * once and never before its deadline (CLOCK_MONOTONIC). Takes about 6 s. */
#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/wait.h>

#include "check.h"

typedef struct due {
    uint64_t deadline;
    _Atomic uint64_t ran_at;
    _Atomic unsigned runs;
} due;

static void on_due(void *arg)
{
    due *d = arg;
    atomic_store(&d->ran_at, test_now_ns());
    atomic_fetch_add(&d->runs, 1);
}

int main(void)
{
    uint64_t seed = test_seed(), s = seed;
    uint64_t n = test_size("UP_TEST_WAIT_LONG_TIMERS", 3000);
    due *d = calloc(n, sizeof *d);
    CHECK(d);
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    for (uint64_t i = 0; i < n; i++) {
        /* Some exactly on level boundaries (64 and 4096 ticks of 2^20 ns). */
        uint64_t delay = test_rand(&s) % 6000000000ull;
        if (i % 10 == 0)
            delay = (i % 20 == 0 ? 64ull : 4096ull) << 20;
        d[i].deadline = test_now_ns() + delay;
        CHECK_EQ(up_submit_after(p, delay, on_due, &d[i]), UP_OK);
    }
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    uint64_t worst = 0;
    for (uint64_t i = 0; i < n; i++) {
        CHECK_EQ(atomic_load(&d[i].runs), 1);
        CHECK(atomic_load(&d[i].ran_at) >= d[i].deadline);
        uint64_t late = atomic_load(&d[i].ran_at) - d[i].deadline;
        worst = late > worst ? late : worst;
    }
    printf("%llu tasks up to 6 s ahead: none early, latest %.2f ms late\n", (unsigned long long)n,
           (double)worst / 1e6);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free(d);
    return 0;
}
