/* Zero allocations per task: this program counts every allocation
 * (tests/common/alloc_count.c), warms a pool up, then submits
 * tasks through every submit path (plain, copied, typed, blocking,
 * non-blocking, nested) and checks that no allocation happened meanwhile.
 * Sanitizers bring their own allocator, so the sanitizer builds skip it;
 * so do systems without glibc's __libc_malloc. */
#include <stdatomic.h>
#include <stddef.h>

#include <ultrapool/pool.h>

#include "alloc_count.h"
#include "check.h"
#include "counted.h"

static up_pool *pool;
static void parent(void *arg)
{
    (void)arg;
    for (int i = 0; i < 8; i++)
        up_submit_wait(pool, counted_task, NULL);
    atomic_fetch_add(&counted_ran, 1);
}

typedef struct payload {
    uint64_t a, b, c;
} payload;
static void on_payload(payload *pl)
{
    if (pl->a + pl->b == pl->c)
        atomic_fetch_add(&counted_ran, 1);
}
UP_TYPED(pl, payload, on_payload)

static uint64_t burst(uint64_t n)
{
    uint64_t expect = 0;
    for (uint64_t i = 0; i < n; i++) {
        switch (i % 5) {
        case 0:
            while (up_submit(pool, counted_task, NULL) == UP_EOVERLOAD)
                ;
            expect += 1;
            break;
        case 1:
            up_submit_wait(pool, counted_task, NULL);
            expect += 1;
            break;
        case 2:
            up_submit_copy_wait(pool, counted_task, &i, sizeof i);
            expect += 1;
            break;
        case 3:
            pl_submit_wait(pool, (payload){i, 1, i + 1});
            expect += 1;
            break;
        default:
            up_submit_wait(pool, parent, NULL);
            expect += 9;
            break;
        }
    }
    return expect;
}

int main(void)
{
    if (!alloc_count_enabled()) {
        printf("skipped: needs glibc's allocator and no sanitizer\n");
        return TEST_SKIP;
    }
    up_config cfg;
    up_config_init(&cfg);
    /* A fixed set of workers, so no thread is created or retired during
     * the counted phase (creating a thread allocates its stack). */
    cfg.shard_min_workers = 2;
    cfg.shard_max_workers = 2;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    uint64_t n = test_size("UP_TEST_ALLOC_TASKS", 200000);
    uint64_t expect = burst(1000); /* warm-up: thread-locals, first touches */
    WAIT_UNTIL(atomic_load(&counted_ran) == expect, 10000);
    uint64_t before = alloc_count_calls();
    CHECK_GT(before, 0); /* the counting wrappers are live: creating the pool allocated */
    expect += burst(n);
    WAIT_UNTIL(atomic_load(&counted_ran) == expect, 30000);
    uint64_t during = alloc_count_calls() - before;
    CHECK_EQ(atomic_load(&counted_ran), expect);
    printf("zero allocation: %llu tasks through every submit path, %llu allocations\n",
           (unsigned long long)(expect), (unsigned long long)during);
    CHECK_EQ(during, 0);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
