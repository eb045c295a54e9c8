/* Groups and memory.
 *
 * No allocation per task: after a warm-up, tasks that go through a group
 * (from the main thread, blocking at the limit, and nested from inside
 * tasks), and the waits for them, allocate nothing.
 *
 * No task touches a group after up_group_wait returns: rounds create a
 * group, run tasks (finishers race with the waiter, some through the slow
 * path because the waiter sleeps), wait, and destroy the group at once.
 * Every block freed meanwhile is filled with a poison byte and kept out of
 * circulation; at the end each must still hold only poison, so a late
 * write (a count update, a mutex unlock) is caught.
 *
 * Both use the counting allocator wrappers of tests/common/alloc_count.c
 * (glibc's allocator underneath). Sanitizer
 * builds bring their own allocator: there the rounds still run and
 * AddressSanitizer reports any use after free, read or write, itself. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include <ultrapool/group.h>

#include "check.h"

#include "alloc_count.h"

/* Freed blocks kept out of circulation, filled with poison. */
#define QUARANTINE_MAX 200000
#define POISON         0xa5
static struct {
    unsigned char *p;
    size_t n;
} quarantine[QUARANTINE_MAX];
static _Atomic size_t quarantined;

static int keep_poisoned(void *block, size_t n)
{
    size_t i = atomic_fetch_add(&quarantined, 1);
    if (i >= QUARANTINE_MAX)
        return 0;
    memset(block, POISON, n);
    quarantine[i].p = block;
    quarantine[i].n = n;
    return 1;
}

static _Atomic uint64_t ran;

static int tiny(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* Goes two more tasks into its own group (only used with limit 0, where a
 * nested go never waits for a slot). */
static int spawner(void *arg)
{
    (void)arg;
    up_group *g = up_group_current();
    CHECK_EQ(up_group_go(g, tiny, NULL), UP_OK);
    CHECK_EQ(up_group_go(g, tiny, NULL), UP_OK);
    atomic_fetch_add(&ran, 1);
    return 0;
}

static int sleeper(void *arg)
{
    (void)arg;
    test_sleep_ms(1);
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* Runs n tasks through a group of the given limit; returns how many
 * tasks ran in all (spawners add two each). */
static uint64_t through_group(up_pool *pool, unsigned limit, uint64_t n, uint64_t *rng, int sleepy)
{
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, limit), UP_OK);
    uint64_t expect = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = test_rand(rng);
        if (limit == 0 && r % 4 == 0) {
            CHECK_EQ(up_group_go(g, spawner, NULL), UP_OK);
            expect += 3;
        } else if (sleepy && r % 16 == 1) {
            CHECK_EQ(up_group_go(g, sleeper, NULL), UP_OK);
            expect += 1;
        } else {
            CHECK_EQ(up_group_go(g, tiny, NULL), UP_OK);
            expect += 1;
        }
    }
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(up_group_destroy(g), UP_OK); /* at once: no task may touch it now */
    return expect;
}

static void no_allocation_per_task(uint64_t seed)
{
    if (!alloc_count_enabled()) {
        printf("no allocation per task: not counted (needs glibc's allocator, no sanitizer)\n");
        return;
    }
    up_config cfg;
    up_config_init(&cfg);
    /* A fixed set of workers: creating a thread allocates its stack. */
    cfg.shard_min_workers = 2;
    cfg.shard_max_workers = 2;
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    uint64_t n = test_size("UP_TEST_GROUP_ALLOC_TASKS", 100000);
    up_group *bounded, *open;
    CHECK_EQ(up_group_create(&bounded, pool, 8), UP_OK);
    CHECK_EQ(up_group_create(&open, pool, 0), UP_OK);
    uint64_t expect = 0;
    for (int phase = 0; phase < 2; phase++) { /* phase 0 warms up */
        uint64_t before = alloc_count_calls();
        uint64_t rng = seed;
        for (uint64_t i = 0; i < (phase ? n : 1000); i++) {
            CHECK_EQ(up_group_go(bounded, tiny, NULL), UP_OK);
            expect++;
            if (test_rand(&rng) % 8 == 0) {
                CHECK_EQ(up_group_go(open, spawner, NULL), UP_OK);
                expect += 3;
            }
        }
        CHECK_EQ(up_group_wait(bounded), UP_OK);
        CHECK_EQ(up_group_wait(open), UP_OK);
        uint64_t during = alloc_count_calls() - before;
        CHECK_EQ(atomic_load(&ran), expect);
        if (phase == 1) {
            printf("no allocation per task: %llu group tasks, %llu allocations\n",
                   (unsigned long long)(expect - 1000), (unsigned long long)during);
            CHECK_GT(alloc_count_calls(), 0); /* the wrappers are live */
            CHECK_EQ(during, 0);
        }
    }
    CHECK_EQ(up_group_destroy(bounded), UP_OK);
    CHECK_EQ(up_group_destroy(open), UP_OK);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    atomic_store(&ran, 0);
}

static void no_touch_after_wait(uint64_t seed)
{
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    uint64_t rounds = test_size("UP_TEST_GROUP_ROUNDS", 20000);
    uint64_t rng = seed, expect = 0;
    atomic_store(&ran, 0);
    int counting = alloc_count_enabled();
    if (counting)
        alloc_count_set_free_hook(keep_poisoned);
    for (uint64_t r = 0; r < rounds; r++) {
        unsigned limit = (unsigned)(test_rand(&rng) % 9); /* 0: no limit */
        uint64_t n = 1 + test_rand(&rng) % 24;
        expect += through_group(pool, limit, n, &rng, r % 64 == 0);
    }
    alloc_count_set_free_hook(NULL);
    CHECK_EQ(atomic_load(&ran), expect);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    if (!counting) {
        printf("%llu groups destroyed as soon as their wait returned (AddressSanitizer "
               "watches)\n",
               (unsigned long long)rounds);
        return;
    }
    size_t q = atomic_load(&quarantined);
    CHECK_GE(q, rounds); /* every destroyed group went through it */
    CHECK_LE(q, QUARANTINE_MAX);
    for (size_t i = 0; i < q; i++)
        for (size_t k = 0; k < quarantine[i].n; k++)
            if (quarantine[i].p[k] != POISON) {
                fprintf(stderr, "block %zu (%zu bytes) written after free at byte %zu\n", i,
                        quarantine[i].n, k);
                CHECK(0);
            }
    printf("%llu groups destroyed as soon as their wait returned; %zu freed blocks untouched "
           "afterwards\n",
           (unsigned long long)rounds, q);
    for (size_t i = 0; i < q; i++)
        alloc_count_release(quarantine[i].p);
}

int main(void)
{
    uint64_t seed = test_seed();
    no_allocation_per_task(seed);
    no_touch_after_wait(seed);
    return 0;
}
