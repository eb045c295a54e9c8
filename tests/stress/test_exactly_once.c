/* 100 submitter threads x 100,000 tasks each (the Go library's largest
 * test): every task runs exactly once. Each task carries its id; a byte per
 * id counts its runs. Half the submitters block when full, half use the
 * non-blocking submit and retry on UP_EOVERLOAD. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "marks.h"

static uint64_t per;
static up_pool *pool;
static _Atomic uint64_t overloads;

static void *submitter(void *arg)
{
    uintptr_t base = (uintptr_t)arg * per;
    int blocking = (int)((uintptr_t)arg & 1);
    for (uint64_t i = 0; i < per; i++) {
        void *id = (void *)(base + i);
        if (blocking) {
            CHECK_EQ(up_submit_wait(pool, marks_task, id), UP_OK);
        } else {
            int rc;
            while ((rc = up_submit(pool, marks_task, id)) == UP_EOVERLOAD) {
                atomic_fetch_add_explicit(&overloads, 1, memory_order_relaxed);
                sched_yield();
            }
            CHECK_EQ(rc, UP_OK);
        }
    }
    return NULL;
}

int main(void)
{
    unsigned threads = (unsigned)test_size("UP_TEST_THREADS", 100);
    if (getenv("UP_TEST_THREADS") == NULL)
        threads = 100; /* the thread count is the point; only the per-thread count scales */
    per = test_size("UP_TEST_PER_THREAD", 100000);
    uint64_t total = per * threads;
    marks_runs = marks_alloc(total);
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    pthread_t *th = malloc(threads * sizeof *th);
    uint64_t t0 = test_now_ns();
    for (uintptr_t i = 0; i < threads; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, submitter, (void *)i), 0);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    double secs = (double)(test_now_ns() - t0) / 1e9;
    CHECK_EQ(marks_wrong(marks_runs, total, NULL), 0);
    up_stats st;
    up_pool_stats(pool, &st);
    CHECK_EQ(st.submitted, total);
    CHECK_EQ(st.executed, total);
    printf("exactly once: %u threads x %llu tasks = %llu, each ran once (%.2f s, %llu overload "
           "retries, %llu helped)\n",
           threads, (unsigned long long)per, (unsigned long long)total, secs,
           (unsigned long long)atomic_load(&overloads), (unsigned long long)st.helped);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    free(th);
    marks_free(marks_runs);
    return 0;
}
