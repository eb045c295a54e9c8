/* Parked tasks in bulk, submitted with up_submit_wait as a program would:
 *
 * 1. A submitter that faces a full queue runs none of the shard's tasks
 *    once they are known to park: each of them would block the submitter
 *    for its whole sleep. Every task runs once, on a worker.
 * 2. More sleeping tasks than the process may map guarded stacks for
 *    (vm.max_map_count, one or two mappings a stack; under the sanitizers
 *    a budget lowered to a scaled 1,000): every one parks (none blocks
 *    its thread), runs once, and the pool stays at one worker per CPU
 *    plus one, where it used to grow to its cap of threads blocked in
 *    clock_nanosleep. Skipped (77) where the limit cannot be read or is
 *    raised so far that the run would take minutes.
 * 3. Sleeps shorter than the timer's tick park too and never end early.
 * 4. A worker short of stacks for longer than the 250 ms "no stack came
 *    back" rule (wait.h), while stacks do come back all along: every task
 *    parks. The rule used to time from the worker's first shortage, not
 *    from the last stack it got back, so in a long run the first miss
 *    after 250 ms started a task that then blocked its thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "marks.h"
#include "pool_helpers.h"
#include "os/stack_pool.h"

#if defined(__SANITIZE_THREAD__)
#define UP_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UP_TEST_TSAN 1
#endif
#endif
#ifndef UP_TEST_TSAN
#define UP_TEST_TSAN 0
#endif

#define MS UINT64_C(1000000)

static pthread_t submitter;
static _Atomic unsigned on_submitter, done;
static test_mark *runs;

static void sleep_then_count(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    if (pthread_equal(pthread_self(), submitter))
        atomic_fetch_add(&on_submitter, 1);
    CHECK_EQ(up_sleep_ns(5 * MS), UP_OK);
    marks_add(runs, id);
    atomic_fetch_add(&done, 1);
}

static void test_helpers_skip_parking_tasks(void)
{
    const unsigned n = (unsigned)test_size("UP_TEST_PARK_HELP_TASKS", 3000);
    runs = marks_alloc(n + 1);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.queue_capacity = 16;
    cfg.submit_help = 2;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    submitter = pthread_self();
    /* One task that parks marks the shard; it is submitted without
     * helping, and the flood starts once it has run. */
    atomic_store(&done, 0);
    CHECK_EQ(up_submit(p, sleep_then_count, (void *)(uintptr_t)n), UP_OK);
    WAIT_UNTIL(atomic_load(&done) == 1, 10000);
    CHECK_EQ(atomic_load(&done), 1u);
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, sleep_then_count, (void *)(uintptr_t)i), UP_OK);
    /* Tasks accepted before a stop park after it too (wait.h). */
    up_pool_stop_and_wait(p);
    up_stats st;
    up_pool_stats(p, &st);
    printf("help: %u sleeping tasks through a 16-slot queue: %u ran on the submitter, "
           "%llu resumed, workers peak %u\n",
           n, atomic_load(&on_submitter), (unsigned long long)st.tasks_resumed, st.workers_peak);
    CHECK_EQ(atomic_load(&on_submitter), 0u);
    CHECK_EQ(atomic_load(&done), n + 1);
    CHECK_EQ(marks_wrong(runs, n, NULL), 0);
    CHECK_EQ(st.tasks_resumed, (uint64_t)n + 1);
    up_pool_destroy(p);
    marks_free(runs);
}

static _Atomic unsigned long slept_long;
static void sleep_long(void *arg)
{
    CHECK_EQ(up_sleep_ns(100 * MS), UP_OK);
    marks_add(runs, (uintptr_t)arg);
    atomic_fetch_add(&slept_long, 1);
}

/* What the budget run has done so far, on stderr every 10 s while it
 * runs: a run that never ends (a ctest timeout) shows where it stood. */
typedef struct watch {
    up_pool *p;
    unsigned n;
    _Atomic int stop;
    uint64_t t0;
} watch;

static void *watch_main(void *arg)
{
    watch *wt = arg;
    for (unsigned i = 1; !atomic_load(&wt->stop); i++) {
        test_sleep_ms(100);
        if (i % 100 != 0)
            continue;
        up_stats st;
        up_pool_stats(wt->p, &st);
        fprintf(stderr,
                "budget: after %.0f s, %lu of %u ran; workers %u (peak %u), parked tasks %llu, "
                "resumed %llu, waiting %llu\n",
                (double)(test_now_ns() - wt->t0) / 1e9, atomic_load(&slept_long), wt->n, st.workers,
                st.workers_peak, (unsigned long long)st.tasks_parked,
                (unsigned long long)st.tasks_resumed, (unsigned long long)st.waiting);
    }
    return NULL;
}

/* The run goes beyond the stack budget whatever its size. Under the
 * sanitizers (UP_TEST_SCALE below 1) the budget is lowered to 1,000
 * stacks times the scale (100 under ThreadSanitizer): every park there
 * costs about a millisecond of CPU (ThreadSanitizer makes and frees a
 * context of its own for each fiber, ~0.8 MB mapped and unmapped), and the
 * 78,000 parks of an unscaled run took over 15 minutes on a loaded 2-CPU
 * machine, 8,700 still 90 s, and with parks that slow only a few dozen
 * tasks were parked at a time. */
static int test_beyond_the_stack_budget(void)
{
    size_t real = up__stack_guarded_budget();
    if (real == SIZE_MAX || real > 150000) {
        printf("budget: %zu guarded stacks: no limit to reach, or too high to reach here\n", real);
        return TEST_SKIP;
    }
    /* Scaled runs start from 1,000 stacks, which the scale then shrinks:
     * the limit is what the part checks, not its size, and parks that slow
     * would keep a larger budget from being reached at all. */
    const char *sc = getenv("UP_TEST_SCALE");
    int scaled = sc && *sc && atof(sc) < 1.0;
    unsigned budget = (unsigned)test_size("UP_TEST_PARK_BUDGET", scaled ? 1000 : real);
    if (budget > real)
        budget = (unsigned)real;
    up__stack_lower_budget(budget);
    unsigned n = budget + budget / 4 + 1000;
    runs = marks_alloc(n);
    /* No helping submitter: the mark that keeps one from running tasks
     * that wait is per shard and a hint (wait.h). With a shard per CPU,
     * a submitter that moved to a CPU whose shard no sleeper had marked
     * yet ran a queued task and its own (help_one, then run_inline), and
     * both blocked it: 2 of 77,793 not resumed, 4 runs in 20 under load.
     * Part 1 checks the mark; here every task must park. */
    up_config cfg;
    up_config_init(&cfg);
    cfg.submit_help = 0;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    unsigned cpus = up_pool_cpus(p);
    /* One sleeper first, so the run starts with tasks parked. */
    CHECK_EQ(up_submit(p, sleep_long, (void *)(uintptr_t)0), UP_OK);
    WAIT_UNTIL(atomic_load(&slept_long) == 1, 10000);
    CHECK_EQ(atomic_load(&slept_long), 1ul);
    atomic_store(&runs[0], 0);
    atomic_store(&slept_long, 0);
    watch wt = {.p = p, .n = n, .t0 = test_now_ns()};
    pthread_t watcher;
    CHECK_EQ(pthread_create(&watcher, NULL, watch_main, &wt), 0);
    uint64_t t0 = test_now_ns();
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, sleep_long, (void *)(uintptr_t)i), UP_OK);
    /* No deadline: the watcher shows the progress of a run that hangs. */
    while (atomic_load(&slept_long) != n)
        test_sleep_ms(10);
    up_pool_stop_and_wait(p);
    double s = (double)(test_now_ns() - t0) / 1e9;
    atomic_store(&wt.stop, 1);
    pthread_join(watcher, NULL);
    up_stats st;
    up_pool_stats(p, &st);
    printf("budget: %u tasks sleeping 100 ms, at most %u guarded stacks (%zu here): %.2f s, "
           "%llu resumed, workers peak %u (CPUs %u)\n",
           n, budget, real, s, (unsigned long long)st.tasks_resumed, st.workers_peak, cpus);
    CHECK_EQ(atomic_load(&slept_long), (unsigned long)n);
    CHECK_EQ(marks_wrong(runs, n, NULL), 0);
    CHECK_EQ(st.tasks_resumed, (uint64_t)n + 1); /* every one parked, none blocked */
#if UP_TEST_TSAN
    /* ThreadSanitizer's fiber contexts are made under its global lock:
     * workers wait there in the kernel, look blocked, and the monitor adds
     * workers for them. What must hold is that no task blocked its thread
     * (above) and the pool did not grow to its cap, as it used to. */
    CHECK_LT(st.workers_peak, 1024);
#else
    CHECK_LE(st.workers_peak, cpus + 1);
#endif
    up_pool_destroy(p);
    marks_free(runs);
    return 0;
}

/* 3. Sleeps shorter than the timer's tick park too (as naps, event.c) and
 *    never end early. */
static _Atomic unsigned short_done, short_early;
static void sleep_short(void *arg)
{
    uint64_t ns = (uint64_t)(uintptr_t)arg, t0 = test_now_ns();
    CHECK_EQ(up_sleep_ns(ns), UP_OK);
    if (test_now_ns() - t0 < ns)
        atomic_fetch_add(&short_early, 1);
    atomic_fetch_add(&short_done, 1);
}

static void test_short_sleeps(void)
{
    up_pool *p = test_one_worker_pool(0, NULL, NULL);
    const unsigned n = 400;
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit(p, sleep_short, (void *)(uintptr_t)(1000 + (i % 8) * 6000)), UP_OK);
    WAIT_UNTIL(atomic_load(&short_done) == n, 30000);
    up_stats st;
    up_pool_stats(p, &st);
    printf("short: %u sleeps of 1-43 us on one worker: %u early, %llu resumes\n", n,
           atomic_load(&short_early), (unsigned long long)st.tasks_resumed);
    CHECK_EQ(atomic_load(&short_done), n);
    CHECK_EQ(atomic_load(&short_early), 0u);
    CHECK_GE(st.tasks_resumed, n); /* each parked at least once: none held the worker */
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
}

/* 4. One worker and a budget of 5 stacks: its loop's and 4 for parked
 *    tasks, as many as its cache holds, so once all 5 are mapped every
 *    stack that comes back goes through the cache and none through the
 *    process's pool. 4 tasks park at a time: 120 sleeps of 20 ms keep
 *    the worker short of stacks for 0.6 s or more, while a stack comes
 *    back every 5 ms or so. */
static _Atomic unsigned short_of_done;
static void sleep_20ms(void *arg)
{
    (void)arg;
    if (pthread_equal(pthread_self(), submitter))
        atomic_fetch_add(&on_submitter, 1);
    CHECK_EQ(up_sleep_ns(20 * MS), UP_OK);
    atomic_fetch_add(&short_of_done, 1);
}

static void test_long_shortage(void)
{
    const unsigned n = 120;
    up__stack_lower_budget(UP__STACK_CACHE + 1);
    up_pool *p = test_one_worker_pool(256, NULL, NULL) /* room for all n */;
    submitter = pthread_self();
    atomic_store(&on_submitter, 0);
    uint64_t t0 = test_now_ns();
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(up_submit(p, sleep_20ms, NULL), UP_OK);
    /* No deadline of its own: a task that blocks still ends. */
    while (atomic_load(&short_of_done) != n)
        test_sleep_ms(5);
    double s = (double)(test_now_ns() - t0) / 1e9;
    up_pool_stop_and_wait(p);
    up_stats st;
    up_pool_stats(p, &st);
    printf("shortage: %u sleeps of 20 ms on one worker, %u stacks: %.2f s, %llu resumed, "
           "%u ran on the submitter\n",
           n, UP__STACK_CACHE + 1, s, (unsigned long long)st.tasks_resumed,
           atomic_load(&on_submitter));
    CHECK_EQ(atomic_load(&on_submitter), 0u);
    CHECK_EQ(st.tasks_resumed, (uint64_t)n); /* every one parked, none blocked */
    up_pool_destroy(p);
}

int main(void)
{
    test_helpers_skip_parking_tasks();
    test_short_sleeps();
    int rc = test_beyond_the_stack_budget();
    /* Last: it lowers the process's stack budget for good. */
    test_long_shortage();
    return rc;
}
