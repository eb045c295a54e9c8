/* The timer wheel's upper levels: deadlines from 0 to 6 s reach levels 0
 * to 2 (a level-0 slot is about 1 ms, level 1 spans 4.3 s), so tasks
 * cascade down one or two levels before they expire. Each runs exactly
 * once and never before its deadline (CLOCK_MONOTONIC). Takes about 6 s. */
#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "due.h"

int main(void)
{
    uint64_t seed = test_seed(), s = seed;
    uint64_t n = test_size("UP_TEST_WAIT_LONG_TIMERS", 3000);
    timer_due *d = calloc(n, sizeof *d);
    CHECK(d);
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    for (uint64_t i = 0; i < n; i++) {
        /* Some exactly on level boundaries (64 and 4096 ticks of 2^20 ns). */
        uint64_t delay = test_rand(&s) % 6000000000ull;
        if (i % 10 == 0)
            delay = (i % 20 == 0 ? 64ull : 4096ull) << 20;
        CHECK_EQ(timer_due_after(p, &d[i], delay), UP_OK);
    }
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    uint64_t worst = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t late = timer_due_check(&d[i]);
        worst = late > worst ? late : worst;
    }
    printf("%llu tasks up to 6 s ahead: none early, latest %.2f ms late\n", (unsigned long long)n,
           (double)worst / 1e6);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free(d);
    return 0;
}
