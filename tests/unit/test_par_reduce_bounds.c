/* Reductions at the integer extremes, in teams of 1, 2 and 3: sums and
 * products of INT64_MAX, INT64_MIN, INT32_MAX and UINT64_MAX partials wrap
 * around modulo 2^width (as parallel.h documents) instead of overflowing,
 * which for the signed types would be undefined (UBSan halts on it), and
 * min and max keep the extremes. Every member gets the same result. */
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/parallel.h>

#include "check.h"

static _Atomic int errors;

/* member m's partial of a signed 64-bit reduction */
static int64_t part64(unsigned m) { return m % 2 ? INT64_MIN : INT64_MAX; }
static int32_t part32(unsigned m) { return m % 2 ? INT32_MIN : INT32_MAX; }

static void fail(const char *what, unsigned n, unsigned long long got, unsigned long long want)
{
    fprintf(stderr, "%s in a team of %u: %llx, expected %llx\n", what, n, got, want);
    atomic_fetch_add(&errors, 1);
}

static void region(void *p)
{
    (void)p;
    unsigned me = up_thread_num(), n = up_num_threads();
    uint64_t usum = 0, uprod = 1, u32sum = 0, u32prod = 1;
    for (unsigned m = 0; m < n; m++) {
        usum += (uint64_t)part64(m);
        uprod *= (uint64_t)part64(m);
        u32sum = (uint32_t)(u32sum + (uint32_t)part32(m));
        u32prod = (uint32_t)(u32prod * (uint32_t)part32(m));
    }
    int64_t v = part64(me);
    CHECK_EQ(up_reduce(&v, UP_RED_SUM, UP_RED_INT64), UP_OK);
    if ((uint64_t)v != usum)
        fail("int64 sum", n, (uint64_t)v, usum);
    v = part64(me);
    CHECK_EQ(up_reduce(&v, UP_RED_PROD, UP_RED_INT64), UP_OK);
    if ((uint64_t)v != uprod)
        fail("int64 product", n, (uint64_t)v, uprod);
    v = part64(me);
    CHECK_EQ(up_reduce(&v, UP_RED_MIN, UP_RED_INT64), UP_OK);
    if (v != (n > 1 ? INT64_MIN : INT64_MAX))
        fail("int64 min", n, (uint64_t)v, n > 1 ? (uint64_t)INT64_MIN : (uint64_t)INT64_MAX);
    v = part64(me);
    CHECK_EQ(up_reduce(&v, UP_RED_MAX, UP_RED_INT64), UP_OK);
    if (v != INT64_MAX)
        fail("int64 max", n, (uint64_t)v, (uint64_t)INT64_MAX);
    int32_t w = part32(me);
    CHECK_EQ(up_reduce(&w, UP_RED_SUM, UP_RED_INT32), UP_OK);
    if ((uint32_t)w != u32sum)
        fail("int32 sum", n, (uint32_t)w, u32sum);
    w = part32(me);
    CHECK_EQ(up_reduce(&w, UP_RED_PROD, UP_RED_INT32), UP_OK);
    if ((uint32_t)w != u32prod)
        fail("int32 product", n, (uint32_t)w, u32prod);
    uint64_t u = UINT64_MAX;
    CHECK_EQ(up_reduce(&u, UP_RED_SUM, UP_RED_UINT64), UP_OK);
    if (u != (uint64_t)0 - n)
        fail("uint64 sum", n, u, (uint64_t)0 - n);
}

int main(void)
{
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    for (unsigned threads = 1; threads <= 3; threads++)
        CHECK_EQ(up_parallel(pool, threads, region, NULL), UP_OK);
    region(NULL); /* outside a region */
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    CHECK_EQ(atomic_load(&errors), 0);
    return 0;
}
