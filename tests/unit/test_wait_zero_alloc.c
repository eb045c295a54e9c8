/* No allocation per waiting task once the slabs are warm: this program
 * counts every allocation (tests/common/alloc_count.c), launches and
 * drains a round of waiting tasks (on an event and on the timer wheel) to
 * warm the pool's slabs and thread caches, then checks that further rounds
 * of the same size allocate nothing. Sanitizers bring their own
 * allocator, so the sanitizer builds skip it. */
#include <stdatomic.h>

#include <ultrapool/wait.h>

#include "alloc_count.h"
#include "check.h"
#include "pool_helpers.h"

static _Atomic uint64_t ran;

static void task(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static uint64_t round_of(up_pool *p, up_event *ev, uint64_t n, uint64_t expect)
{
    for (uint64_t i = 0; i < n; i++) {
        CHECK_EQ(up_submit_on(p, ev, task, NULL), UP_OK);
        if (i % 64 == 0)
            CHECK_EQ(up_submit_after(p, 1000000, task, NULL), UP_OK);
    }
    expect += n + (n + 63) / 64;
    CHECK_EQ(up_event_set(ev), UP_OK);
    WAIT_UNTIL(atomic_load(&ran) == expect, 30000);
    CHECK_EQ(atomic_load(&ran), expect);
    CHECK_EQ(up_event_reset(ev), UP_OK);
    return expect;
}

int main(void)
{
    if (!alloc_count_enabled()) {
        printf("skipped: needs glibc's allocator and no sanitizer\n");
        return TEST_SKIP;
    }
    up_pool *p = test_fixed_pool(2); /* fixed workers: no thread starts while counting */
    up_event *ev;
    CHECK_EQ(up_event_create(&ev, p), UP_OK);
    uint64_t n = test_size("UP_TEST_ALLOC_WAITERS", 100000);
    uint64_t expect = round_of(p, ev, n, 0);
    uint64_t before = alloc_count_calls();
    CHECK_GT(before, 0);
    for (int r = 0; r < 3; r++)
        expect = round_of(p, ev, n, expect);
    uint64_t during = alloc_count_calls() - before;
    printf("zero allocation: %llu waiting tasks after warm-up, %llu allocations\n",
           (unsigned long long)(3 * n), (unsigned long long)during);
    CHECK_EQ(during, 0);
    CHECK_EQ(up_event_destroy(ev), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    return 0;
}
