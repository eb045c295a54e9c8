/* Overload and backpressure: a full pool gives UP_EOVERLOAD at once; a
 * blocking submit waits (without burning a CPU) until room appears; a
 * timed submit gives up at its deadline; a helping submitter runs queued
 * tasks instead of sleeping. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"
#include "gate.h"
#include "pool_helpers.h"

static test_gate gate; /* holds the one worker */

/* One shard, one worker, a queue of 4: one held task plus four queued. */
static up_pool *small_pool(int help)
{
    up_config cfg;
    test_fixed_config(&cfg, 1);
    cfg.queue_capacity = 4;
    cfg.submit_help = help;
    return test_pool_create(&cfg);
}

static void fill(up_pool *p)
{
    test_gate_reset(&gate);
    atomic_store(&counted_ran, 0);
    CHECK_EQ(up_submit(p, test_gate_task, &gate), UP_OK);
    /* Wait for the worker to take it: until then it occupies one of the
     * queue's four places. */
    test_gate_wait_running(&gate, 1);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(up_submit(p, counted_task, NULL), UP_OK);
}

static pthread_t submitter_thread;
static int on_submitter;
static void where(void *arg)
{
    (void)arg;
    on_submitter = pthread_equal(pthread_self(), submitter_thread) ? 1 : 2;
}

static void *blocked_submitter(void *arg)
{
    up_pool *p = arg;
    CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK);
    return NULL;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

int main(void)
{
    /* Immediate overload. */
    up_pool *p = small_pool(0);
    fill(p);
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_submit(p, counted_task, NULL), UP_EOVERLOAD);
    CHECK_LT(test_now_ns() - t0, 50000000ull); /* "at once": well under 50 ms */
    CHECK_EQ(up_submit_copy(p, counted_task, "x", 1), UP_EOVERLOAD);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.overloads, 2);

    /* A timed submit expires. */
    t0 = test_now_ns();
    CHECK_EQ(up_submit_timeout(p, counted_task, NULL, 30000000ull), UP_ETIMEDOUT);
    uint64_t waited = test_now_ns() - t0;
    CHECK(waited >= 30000000ull && waited < 2000000000ull);
    CHECK_EQ(up_submit_timeout(p, counted_task, NULL, 0), UP_ETIMEDOUT);

    /* A blocking submit waits, asleep, and proceeds once room appears. */
    pthread_t th;
    double c0 = cpu_seconds();
    pthread_create(&th, NULL, blocked_submitter, p);
    test_sleep_ms(200);
    CHECK_EQ(atomic_load(&counted_ran), 0); /* nothing moved: it is still waiting */
    double burnt = cpu_seconds() - c0;
    CHECK_LT(burnt, 0.1); /* 200 ms of waiting cost far less than a CPU */
    test_gate_open(&gate);
    pthread_join(th, NULL);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), 5);
    CHECK_EQ(atomic_load(&gate.passed), 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);

    /* At level 2 a submitter facing the full queue runs the queued tasks
     * and then its own, on its own thread. */
    p = small_pool(2);
    fill(p);
    on_submitter = 0;
    submitter_thread = pthread_self();
    CHECK_EQ(up_submit_wait(p, where, NULL), UP_OK);
    CHECK_EQ(on_submitter, 1); /* already ran, here */
    up_pool_stats(p, &st);
    CHECK_EQ(st.inlined, 1);
    CHECK_GE(st.helped, 2); /* at least one queued task and its own */
    test_gate_open(&gate);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_pool_stats(p, &st);
    CHECK_EQ(st.submitted, st.executed);
    CHECK_EQ(up_pool_destroy(p), UP_OK);

    /* At level 1 a submitter facing the full queue runs queued tasks. */
    p = small_pool(1);
    fill(p);
    CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK); /* runs a queued counted_task */
    up_pool_stats(p, &st);
    CHECK_GE(st.helped, 1);
    CHECK_GE(atomic_load(&counted_ran), 1);
    test_gate_open(&gate);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), 5);
    CHECK_EQ(atomic_load(&gate.passed), 1);
    up_pool_stats(p, &st);
    CHECK_EQ(st.submitted, st.executed);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("overload: immediate UP_EOVERLOAD, timed expiry after %.1f ms, sleeping wait "
           "(%.3f CPU-s in 200 ms), helping submit\n",
           (double)waited / 1e6, burnt);
    return 0;
}
