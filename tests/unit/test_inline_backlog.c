/* A waiting submit facing a backlog of short tasks runs its own task on
 * the calling thread (submit_help 2, the default), counts it as helped and
 * inlined, and runs every accepted task exactly once; it never does so for
 * tasks that take long, park or call a wait, nor at submit_help 1; and a
 * stop racing with such submits neither loses a task nor lets one run
 * after the stop returned. The queue is made larger than the number of
 * tasks, so that it is never full and every task run on the submitter
 * comes from the backlog rule. Whether the rule fires depends on this
 * machine's speed, so it has a ctest entry of its own (argument "rule"),
 * the only part that may skip; the rest, the stop race among it, always
 * runs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/pool.h>
#include <ultrapool/wait.h>

#include "check.h"
#include "marks.h"
#include "pool_helpers.h"

#define SHORT_SPIN 200

static test_mark *runs; /* per task index: times it ran */
static _Atomic uint64_t on_submitter;
static _Atomic int late; /* a task ran after the stop returned */
static _Atomic int stop_returned;
static _Thread_local int is_submitter;

static void note_run(uint64_t i)
{
    marks_add(runs, i);
    if (is_submitter)
        atomic_fetch_add(&on_submitter, 1);
    if (atomic_load(&stop_returned))
        atomic_store(&late, 1);
}

static void short_task(void *arg)
{
    uint64_t i;
    memcpy(&i, arg, sizeof i);
    test_spin(SHORT_SPIN);
    note_run(i);
}

static void long_task(void *arg)
{
    uint64_t i;
    memcpy(&i, arg, sizeof i);
    test_sleep_ms(1); /* far longer than any task run inline */
    note_run(i);
}

/* Parks on its worker (a short stay for the worker, a long one for a
 * submitter, where the same call blocks). */
static void parking_task(void *arg)
{
    uint64_t i;
    memcpy(&i, arg, sizeof i);
    CHECK_EQ(up_sleep_ns(2000000), UP_OK);
    note_run(i);
}

/* Calls up_event_wait on an event that is set: it returns at once, but
 * another time the event may be reset and the wait would block a
 * submitter that was to set it. */
static up_event *set_event;
static void event_task(void *arg)
{
    uint64_t i;
    memcpy(&i, arg, sizeof i);
    CHECK_EQ(up_event_wait(set_event), UP_OK);
    test_spin(SHORT_SPIN);
    note_run(i);
}

static up_pool *one_worker_pool(int help, unsigned workers, unsigned capacity)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = workers;
    cfg.queue_capacity = capacity;
    cfg.submit_help = help;
    return test_pool_create(&cfg);
}

static void reset(uint64_t n)
{
    marks_clear(runs, n);
    atomic_store(&on_submitter, 0);
    atomic_store(&late, 0);
    atomic_store(&stop_returned, 0);
}

typedef struct warm_up {
    up_pool *p;
    uint64_t tasks;
} warm_up;

static int warmed_up(void *arg)
{
    warm_up *w = arg;
    up_stats st;
    up_pool_stats(w->p, &st);
    return st.executed >= w->tasks;
}

/* Submits n tasks from the calling thread; returns the pool's stats after
 * a waiting stop (the pool is left to the caller to destroy). The first
 * WARM_UP are waited for before the rest: the pool learns how long its
 * tasks take from its workers, and a worker thread may need milliseconds
 * to get a CPU on a loaded machine. A warm-up that has not ended after
 * 10 s is only noted: what the rest checks holds either way, and a pool
 * that never runs them fails at the stop. */
#define WARM_UP 256
static up_stats submit_all_keep(up_pool *p, up_fn fn, uint64_t n)
{
    is_submitter = 1;
    warm_up warm = {p, n < WARM_UP ? n : WARM_UP};
    for (uint64_t i = 0; i < n; i++) {
        CHECK_EQ(up_submit_copy_wait(p, fn, &i, sizeof i), UP_OK);
        if (i + 1 == warm.tasks && !test_poll_until(warmed_up, &warm, 10000))
            printf("note: the first %llu tasks had not all run after 10 s\n",
                   (unsigned long long)warm.tasks);
    }
    is_submitter = 0;
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    return st;
}

/* The same, then destroys the pool. */
static up_stats submit_all(up_pool *p, up_fn fn, uint64_t n)
{
    up_stats st = submit_all_keep(p, fn, n);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    return st;
}

/* The short task's cost here, in ns: under an emulator or a slow
 * sanitizer it may not count as short to the pool. */
static uint64_t short_task_ns(void)
{
    uint64_t t0 = test_now_ns();
    for (int i = 0; i < 1000; i++)
        test_spin(SHORT_SPIN);
    return (test_now_ns() - t0) / 1000;
}

typedef struct racer {
    up_pool *p;
    uint64_t n;
    test_mark *accepted;
} racer;

static void *race_submitter(void *arg)
{
    racer *r = arg;
    is_submitter = 1;
    for (uint64_t i = 0; i < r->n; i++) {
        int rc = up_submit_copy_wait(r->p, short_task, &i, sizeof i);
        CHECK(rc == UP_OK || rc == UP_ESTOPPED);
        atomic_store(&r->accepted[i], rc == UP_OK);
        if (rc == UP_ESTOPPED)
            break;
    }
    return NULL;
}

/* Level 2: one worker cannot keep up with a submitter, so a backlog forms
 * and the submitter runs tasks itself, each counted once. Whether the
 * backlog rule fires depends on how fast this machine runs the short task
 * (its cost against the pool's measure of short): the counts are checked
 * whatever happened, the rule itself only where it can be seen. */
static int backlog_rule(uint64_t n, unsigned capacity)
{
    reset(n);
    up_stats st = submit_all(one_worker_pool(2, 1, capacity), short_task, n);
    CHECK_EQ(marks_wrong(runs, n, NULL), 0);
    uint64_t mine = atomic_load(&on_submitter);
    CHECK_EQ(st.inlined, mine);
    CHECK_EQ(st.helped, mine);
    CHECK_EQ(st.submitted, n);
    CHECK_EQ(st.executed, n);
    uint64_t task_ns = short_task_ns();
    printf("figure: %llu of %llu short tasks (%llu ns each) ran on the submitter\n",
           (unsigned long long)mine, (unsigned long long)n, (unsigned long long)task_ns);
    if (mine == 0 && task_ns > 2000) {
        printf("skipped: a short task takes %llu ns here, too slow to see the rule\n",
               (unsigned long long)task_ns);
        return TEST_SKIP;
    }
    CHECK_GT(mine, 0);
    return 0;
}

/* A stop racing with submits that may run inline: every accepted task ran
 * exactly once, none after the stop returned, no rejected one. Holds
 * whether or not any task ran inline, so it never skips. */
static void stop_race(uint64_t n, unsigned capacity)
{
    for (int round = 0; round < 4; round++) {
        reset(n);
        racer r = {one_worker_pool(2, 2, capacity), n, marks_alloc(n)};
        pthread_t th;
        CHECK_EQ(pthread_create(&th, NULL, race_submitter, &r), 0);
        test_sleep_ms(5 + 5 * (unsigned)round);
        CHECK_EQ(up_pool_stop_and_wait(r.p), UP_OK);
        atomic_store(&stop_returned, 1);
        pthread_join(th, NULL);
        CHECK_EQ(atomic_load(&late), 0);
        CHECK_EQ(marks_wrong(runs, n, r.accepted), 0);
        uint64_t accepted = marks_sum(r.accepted, n);
        up_stats st;
        up_pool_stats(r.p, &st);
        CHECK_EQ(st.submitted, accepted);
        CHECK_EQ(st.executed, accepted);
        CHECK_EQ(up_pool_destroy(r.p), UP_OK);
        marks_free(r.accepted);
    }
    printf("a stop racing inline submits: 4 rounds, each accepted task ran once, none late\n");
}

/* Two ctest entries: test_inline_backlog (no argument) checks what holds
 * on any machine; test_inline_backlog_rule ("rule") checks that the
 * backlog rule fires, and alone may skip. */
int main(int argc, char **argv)
{
    const uint64_t n = test_size("UP_TEST_INLINE_TASKS", 50000);
    const unsigned capacity = 1u << 17; /* more than n: never full */
    runs = marks_alloc(n);
    if (argc > 1) {
        CHECK(strcmp(argv[1], "rule") == 0);
        int rc = backlog_rule(n, capacity);
        marks_free(runs);
        return rc;
    }

    /* Long tasks: never run inline, whatever the backlog. */
    uint64_t nl = n < 300 ? n : 300;
    reset(nl);
    up_stats st = submit_all(one_worker_pool(2, 1, capacity), long_task, nl);
    CHECK_EQ(marks_wrong(runs, nl, NULL), 0);
    CHECK_EQ(atomic_load(&on_submitter), 0);
    CHECK_EQ(st.inlined, 0);
    CHECK_EQ(st.submitted, nl);
    CHECK_EQ(st.executed, nl);

    /* Tasks that park: never run inline either, though each leaves its
     * worker at once (the queue never fills, so no task runs here). */
    uint64_t np = n / 5 < 10000 ? n / 5 + 1 : 10000;
    reset(np);
    st = submit_all(one_worker_pool(2, 1, capacity), parking_task, np);
    CHECK_EQ(marks_wrong(runs, np, NULL), 0);
    CHECK_EQ(atomic_load(&on_submitter), 0);
    CHECK_EQ(st.inlined, 0);
    CHECK_GT(st.tasks_resumed, 0); /* they did park */

    /* Tasks that call a wait, even one that returns at once: never run
     * inline either. */
    reset(n);
    up_pool *ep = one_worker_pool(2, 1, capacity);
    CHECK_EQ(up_event_create(&set_event, ep), UP_OK);
    up_event_set(set_event);
    st = submit_all_keep(ep, event_task, n);
    CHECK_EQ(marks_wrong(runs, n, NULL), 0);
    CHECK_EQ(atomic_load(&on_submitter), 0);
    CHECK_EQ(st.inlined, 0);
    up_event_destroy(set_event);
    CHECK_EQ(up_pool_destroy(ep), UP_OK);

    /* Level 1 queues its own task always. */
    reset(n);
    st = submit_all(one_worker_pool(1, 1, capacity), short_task, n);
    CHECK_EQ(marks_wrong(runs, n, NULL), 0);
    CHECK_EQ(atomic_load(&on_submitter), 0);
    CHECK_EQ(st.inlined, 0);

    stop_race(n, capacity);
    marks_free(runs);
    return 0;
}
