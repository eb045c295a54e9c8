/* The pool's counters read as PAPI Software Defined Events
 * (sde:::ULTRAPOOL::*): across a pool's life the deltas equal what the
 * test submitted and what ran, and they survive the pool's destruction
 * (destroyed pools are folded into the totals). Skipped when the build has
 * no libsde or no PAPI. */
#include <stdatomic.h>
#include <stdio.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"

#if defined(UP_TEST_HAVE_SDE) && defined(UP_TEST_HAVE_PAPI)
#include <papi.h>

static const char *const names[] = {"sde:::ULTRAPOOL::tasks_submitted",
                                    "sde:::ULTRAPOOL::tasks_executed"};

int main(void)
{
    uint64_t n = test_size("UP_TEST_TASKS", 200000);
    CHECK_EQ(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
    /* The events exist once a pool has registered them. */
    up_pool *warm;
    CHECK_EQ(up_pool_create(&warm, NULL), UP_OK);
    CHECK_EQ(up_submit_wait(warm, counted_task, NULL), UP_OK);
    CHECK_EQ(up_pool_destroy(warm), UP_OK);

    int es = PAPI_NULL;
    CHECK_EQ(PAPI_create_eventset(&es), PAPI_OK);
    for (int i = 0; i < 2; i++) {
        int rc = PAPI_add_named_event(es, names[i]);
        if (rc != PAPI_OK) {
            fprintf(stderr, "cannot add %s: %s\n", names[i], PAPI_strerror(rc));
            return 1;
        }
    }
    long long v[2];
    CHECK_EQ(PAPI_start(es), PAPI_OK);
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(PAPI_read(es, v), PAPI_OK);
    printf("live pool: submitted %lld executed %lld of %llu\n", v[0], v[1], (unsigned long long)n);
    CHECK_EQ(v[0], n);
    CHECK_EQ(v[1], n);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    CHECK_EQ(PAPI_stop(es, v), PAPI_OK);
    printf("after destroy: submitted %lld executed %lld\n", v[0], v[1]);
    CHECK_EQ(v[0], n);
    CHECK_EQ(v[1], n);
    CHECK_EQ(atomic_load(&counted_ran), n + 1);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
    PAPI_shutdown();
    return 0;
}
#else
int main(void)
{
    printf("built without libsde or PAPI: skipped\n");
    return TEST_SKIP;
}
#endif
