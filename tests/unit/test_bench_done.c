/* The benchmark harness's completion count (experiments/bench_util.c,
 * compiled into the test): in both modes, striped and shared, threads that
 * finish tasks concurrently are each counted exactly once, the wait ends
 * only when the whole batch is counted, a task counted twice shows as one
 * too many (the harness's check then fails the run), a new batch starts
 * from nothing, and the mode's names parse and anything else is refused. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "bench_util.h"
#include "check.h"

enum { THREADS = 8 };

static bench_done done;
static unsigned per_thread;
static atomic_int started;

static void *finisher(void *arg)
{
    (void)arg;
    atomic_fetch_add(&started, 1);
    for (unsigned i = 0; i < per_thread; i++)
        bench_done_add(&done);
    return NULL;
}

/* THREADS threads finish per_thread tasks each while this thread waits. */
static void batch(bench_completion mode)
{
    uint64_t total = (uint64_t)THREADS * per_thread;
    bench_done_set_mode(&done, mode);
    bench_done_arm(&done, total);
    CHECK_EQ(bench_done_sum(&done), (uint64_t)0);
    atomic_store(&started, 0);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, finisher, NULL) == 0);
    uint64_t t = bench_done_wait(&done, total);
    CHECK(t > 0);
    /* The wait ended: every task was counted, and so far none twice. */
    uint64_t seen = bench_done_sum(&done);
    CHECK_EQ(seen, total);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(atomic_load(&started), THREADS);
    CHECK_EQ(bench_done_sum(&done), total);

    /* One task counted twice is one too many: the harness compares the
     * sum with the task count and fails the run. */
    bench_done_add(&done);
    CHECK_EQ(bench_done_sum(&done), total + 1);

    /* A new batch starts from nothing, in either mode. */
    bench_done_arm(&done, 3);
    CHECK_EQ(bench_done_sum(&done), (uint64_t)0);
    bench_done_add(&done);
    bench_done_add(&done);
    CHECK_EQ(bench_done_sum(&done), (uint64_t)2);
    bench_done_add(&done);
    CHECK_EQ(bench_done_sum(&done), (uint64_t)3);
    bench_done_wait(&done, 3); /* returns: the batch is complete */
}

int main(void)
{
    per_thread = (unsigned)test_size("UP_TEST_BENCH_DONE_TASKS", 20000);

    bench_completion m;
    CHECK(bench_completion_parse("striped", &m) == 0 && m == BENCH_COMPLETION_STRIPED);
    CHECK(bench_completion_parse("shared", &m) == 0 && m == BENCH_COMPLETION_SHARED);
    m = BENCH_COMPLETION_SHARED;
    CHECK(bench_completion_parse("Shared", &m) == -1 && m == BENCH_COMPLETION_SHARED);
    CHECK(bench_completion_parse("", &m) == -1);
    CHECK(bench_completion_parse("both", &m) == -1);
    CHECK(!strcmp(bench_completion_name(BENCH_COMPLETION_STRIPED), "striped"));
    CHECK(!strcmp(bench_completion_name(BENCH_COMPLETION_SHARED), "shared"));

    /* A zeroed bench_done counts striped, as every program but the harness
     * expects. */
    CHECK(done.mode == BENCH_COMPLETION_STRIPED);

    batch(BENCH_COMPLETION_STRIPED);
    batch(BENCH_COMPLETION_SHARED);
    /* Back to striped after shared: the latch no longer counts. */
    batch(BENCH_COMPLETION_STRIPED);

    /* The shared mode's latch is what counts: the stripes stay untouched. */
    bench_done_set_mode(&done, BENCH_COMPLETION_SHARED);
    bench_done_arm(&done, 2);
    bench_done_add(&done);
    for (int i = 0; i < BENCH_STRIPES + BENCH_SHARED; i++)
        CHECK_EQ(atomic_load(&done.stripe[i].n), (uint64_t)0);
    CHECK_EQ(atomic_load(&done.latch.left), (int64_t)1);

    printf("test_bench_done: %u tasks on each of %d threads, both modes: ok\n", per_thread,
           THREADS);
    return 0;
}
