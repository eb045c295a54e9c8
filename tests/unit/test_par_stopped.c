/* Regions on a stopped pool: every form (up_parallel, up_parallel_exact,
 * up_parallel_for) returns UP_ESTOPPED for every team size, a team of one
 * included, and runs nothing; so does a region nested in a region of a
 * live pool that names the stopped one. A pool stopped with
 * up_pool_stop and one stopped with up_pool_stop_and_wait behave alike. */
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/parallel.h>

#include "check.h"

static _Atomic int ran;
static up_pool *stopped;

static void region(void *p)
{
    (void)p;
    atomic_fetch_add(&ran, 1);
}

static void body(int64_t lo, int64_t hi, void *p)
{
    (void)lo, (void)hi, (void)p;
    atomic_fetch_add(&ran, 1);
}

static void check_all_forms(up_pool *pool, const char *how)
{
    static const unsigned threads[] = {0, 1, 2, 3};
    for (unsigned k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        int rc = up_parallel(pool, threads[k], region, NULL);
        if (rc != UP_ESTOPPED || atomic_load(&ran)) {
            fprintf(stderr, "%s: up_parallel(%u threads) returned %d and ran %d regions\n", how,
                    threads[k], rc, atomic_load(&ran));
            abort();
        }
        unsigned exact = threads[k] ? threads[k] : 1;
        rc = up_parallel_exact(pool, exact, region, NULL);
        if (rc != UP_ESTOPPED || atomic_load(&ran)) {
            fprintf(stderr, "%s: up_parallel_exact(%u threads) returned %d and ran %d regions\n",
                    how, exact, rc, atomic_load(&ran));
            abort();
        }
    }
    const up_for_opts opts[] = {UP_FOR_OPTS(.schedule = UP_SCHED_STATIC),
                                UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = 3, .nowait = 1)};
    for (unsigned k = 0; k < 2; k++) {
        int rc = up_parallel_for(pool, 0, 100, &opts[k], body, NULL);
        if (rc != UP_ESTOPPED || atomic_load(&ran)) {
            fprintf(stderr, "%s: up_parallel_for returned %d and ran %d bodies\n", how, rc,
                    atomic_load(&ran));
            abort();
        }
    }
    CHECK_EQ(up_parallel_for(pool, 0, 100, NULL, body, NULL), UP_ESTOPPED);
    CHECK_EQ(atomic_load(&ran), 0);
}

static void nested_region(void *p)
{
    (void)p;
    if (up_master())
        check_all_forms(stopped, "nested in a live region");
    up_barrier();
}

int main(void)
{
    up_pool *a, *b, *live;
    CHECK_EQ(up_pool_create(&a, NULL), UP_OK);
    CHECK_EQ(up_pool_create(&b, NULL), UP_OK);
    CHECK_EQ(up_pool_create(&live, NULL), UP_OK);
    up_pool_stop(a);
    check_all_forms(a, "after up_pool_stop");
    up_pool_stop_and_wait(b);
    check_all_forms(b, "after up_pool_stop_and_wait");
    stopped = b;
    CHECK_EQ(up_parallel(live, 2, nested_region, NULL), UP_OK);
    /* The live pool still runs regions. */
    CHECK_EQ(up_parallel(live, 1, region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&ran), 1);
    up_pool_stop_and_wait(a);
    up_pool_destroy(a);
    up_pool_destroy(b);
    up_pool_stop_and_wait(live);
    up_pool_destroy(live);
    return 0;
}
