/* Task groups: the limit is never exceeded (every task start is checked,
 * and a sampler thread watches too), the first error is returned and the
 * tasks that had not started are skipped, cancellation (by hand, and
 * waking a blocked up_group_go), several submitting threads, groups used
 * from inside pool tasks on a pool of one worker (only helping can finish
 * them), the deadlocks that are detected, and the argument checks. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include <ultrapool/group.h>

#include "check.h"
#include "gate.h"
#include "pool_helpers.h"

/* ---- limits ---------------------------------------------------------- */

typedef struct limit_run {
    _Atomic int running, peak, sampled_peak, done;
    unsigned limit;
    int sleep_every; /* every n-th task sleeps 1 ms, the rest spin briefly */
    _Atomic int stop_sampler;
} limit_run;

static int bounded_task(void *arg)
{
    limit_run *r = arg;
    int now = atomic_fetch_add(&r->running, 1) + 1;
    int old = atomic_load(&r->peak);
    while (now > old && !atomic_compare_exchange_weak(&r->peak, &old, now))
        ;
    int n = atomic_fetch_add(&r->done, 1);
    if (r->sleep_every && n % r->sleep_every == 0)
        test_sleep_ms(1);
    else
        for (volatile int i = 0; i < 200; i++)
            ;
    atomic_fetch_sub(&r->running, 1);
    return 0;
}

static void *sampler(void *arg)
{
    limit_run *r = arg;
    while (!atomic_load(&r->stop_sampler)) {
        int now = atomic_load(&r->running);
        if (now > atomic_load(&r->sampled_peak))
            atomic_store(&r->sampled_peak, now);
        sched_yield();
    }
    return NULL;
}

static void limits(up_pool *pool, unsigned limit, int sleep_every, int n)
{
    limit_run r = {.limit = limit, .sleep_every = sleep_every};
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, sampler, &r), 0);
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, limit), UP_OK);
    for (int i = 0; i < n; i++)
        CHECK_EQ(up_group_go(g, bounded_task, &r), UP_OK);
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(atomic_load(&r.done), n);
    CHECK_EQ(atomic_load(&r.running), 0);
    CHECK_EQ(up_group_skipped(g), 0);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    atomic_store(&r.stop_sampler, 1);
    pthread_join(th, NULL);
    printf("limit %u, %d tasks: peak %d (sampled %d)\n", limit, n, atomic_load(&r.peak),
           atomic_load(&r.sampled_peak));
    CHECK_LE(atomic_load(&r.peak), (int)limit);
    CHECK_LE(atomic_load(&r.sampled_peak), (int)limit);
    /* Sleeping tasks overlap: a limit this small is reached (two workers
     * and the helping submitter at least). */
    if (sleep_every == 1 && limit <= 3)
        CHECK_EQ(atomic_load(&r.peak), (int)limit);
}

/* ---- first error ------------------------------------------------------ */

typedef struct err_run {
    _Atomic int submitted_all, ran;
} err_run;

static int fail_when_all_queued(void *arg)
{
    err_run *r = arg;
    while (!atomic_load(&r->submitted_all))
        sched_yield();
    return 42;
}

static int count_run(void *arg)
{
    atomic_fetch_add(&((err_run *)arg)->ran, 1);
    return 0;
}

/* One worker; the first task holds it until every task is queued, then
 * fails: the queued ones must all be skipped, and go must refuse more. */
static void first_error_skips(void)
{
    up_pool *pool = test_one_worker_pool(0, NULL, NULL);
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, 0), UP_OK);
    err_run r = {0};
    int n = (int)test_size("UP_TEST_GROUP_QUEUED", 500);
    if (n > 1000)
        n = 1000; /* must fit the queue: no helping before the failure */
    CHECK_EQ(up_group_go(g, fail_when_all_queued, &r), UP_OK);
    for (int i = 1; i < n; i++)
        CHECK_EQ(up_group_go(g, count_run, &r), UP_OK);
    atomic_store(&r.submitted_all, 1);
    WAIT_UNTIL(up_group_cancelled(g), 10000);
    CHECK(up_group_cancelled(g));
    CHECK_EQ(up_group_go(g, count_run, &r), UP_ECANCELED);
    CHECK_EQ(up_group_wait(g), 42);
    CHECK_EQ(atomic_load(&r.ran), 0);
    CHECK_EQ(up_group_skipped(g), n - 1);
    printf("first error: 42 returned, %d queued tasks skipped\n", n - 1);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
}

static int return_arg(void *arg) { return (int)(intptr_t)arg; }

/* With limit 1 the tasks run one after another, so "first" is defined:
 * task 5 fails, the go for task 6 waits for it and is refused. */
static void first_error_sequential(up_pool *pool)
{
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, 1), UP_OK);
    int rc = UP_OK, i;
    for (i = 0; i < 20 && rc == UP_OK; i++)
        rc = up_group_go(g, return_arg, (void *)(intptr_t)(i == 5 ? 5 : i == 6 ? 6 : 0));
    CHECK_EQ(rc, UP_ECANCELED);
    CHECK_EQ(i, 7); /* go number 7 (task 6) was refused */
    CHECK_EQ(up_group_wait(g), 5);
    CHECK_EQ(up_group_destroy(g), UP_OK);
}

/* ---- cancellation ----------------------------------------------------- */

static test_gate gate;
static _Atomic int polled_out, poll_started;

static int poll_until_cancelled(void *arg)
{
    (void)arg;
    atomic_fetch_add(&poll_started, 1);
    up_group *g = up_group_current();
    CHECK(g != NULL);
    while (!up_group_cancelled(g))
        sched_yield();
    atomic_fetch_add(&polled_out, 1);
    return 0;
}

static void cancel_by_hand(up_pool *pool)
{
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, 2), UP_OK);
    atomic_store(&polled_out, 0);
    CHECK_EQ(up_group_go(g, poll_until_cancelled, NULL), UP_OK);
    CHECK_EQ(up_group_go(g, poll_until_cancelled, NULL), UP_OK);
    /* Both must be running: cancelling skips the tasks not yet started. */
    WAIT_UNTIL(atomic_load(&poll_started) == 2, 10000);
    CHECK_EQ(atomic_load(&poll_started), 2);
    CHECK(!up_group_cancelled(g));
    up_group_cancel(g);
    CHECK(up_group_cancelled(g));
    CHECK_EQ(up_group_go(g, return_arg, NULL), UP_ECANCELED);
    CHECK_EQ(up_group_wait(g), UP_ECANCELED);
    CHECK_EQ(atomic_load(&polled_out), 2);
    CHECK_EQ(up_group_destroy(g), UP_OK);
}

static int gate_in_group(void *arg)
{
    test_gate_task(arg);
    return 0;
}

typedef struct go_arg {
    up_group *g;
    _Atomic int rc, returned;
} go_arg;

static void *blocked_go(void *arg)
{
    go_arg *a = arg;
    atomic_store(&a->rc, up_group_go(a->g, return_arg, NULL));
    atomic_store(&a->returned, 1);
    return NULL;
}

/* A thread blocked in up_group_go at the limit returns UP_ECANCELED as soon
 * as the group is cancelled, while the task holding the slot still runs. */
static void cancel_wakes_blocked_go(up_pool *pool)
{
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, 1), UP_OK);
    test_gate_reset(&gate);
    CHECK_EQ(up_group_go(g, gate_in_group, &gate), UP_OK);
    test_gate_wait_running(&gate, 1); /* on a worker: the blocked go below helps */
    go_arg a = {.g = g};
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, blocked_go, &a), 0);
    test_sleep_ms(20);
    CHECK_EQ(atomic_load(&a.returned), 0); /* blocked: the slot is taken */
    up_group_cancel(g);
    WAIT_UNTIL(atomic_load(&a.returned), 10000);
    CHECK_EQ(atomic_load(&a.returned), 1);
    CHECK_EQ(atomic_load(&a.rc), UP_ECANCELED);
    pthread_join(th, NULL);
    test_gate_open(&gate);
    CHECK_EQ(up_group_wait(g), UP_ECANCELED);
    CHECK_EQ(up_group_destroy(g), UP_OK);
}

/* ---- several submitters ---------------------------------------------- */

typedef struct multi {
    up_group *g;
    limit_run *r;
    int n;
} multi;

static void *submit_many(void *arg)
{
    multi *m = arg;
    for (int i = 0; i < m->n; i++)
        CHECK_EQ(up_group_go(m->g, bounded_task, m->r), UP_OK);
    return NULL;
}

static void several_submitters(up_pool *pool, int threads, int per)
{
    limit_run r = {.limit = 4};
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, 4), UP_OK);
    pthread_t th[8];
    multi m = {g, &r, per};
    for (int i = 0; i < threads; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, submit_many, &m), 0);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(atomic_load(&r.done), threads * per);
    CHECK_LE(atomic_load(&r.peak), 4);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    printf("%d submitters x %d tasks, limit 4: peak %d\n", threads, per, atomic_load(&r.peak));
}

/* ---- inside pool tasks -------------------------------------------------- */

typedef struct fib_arg {
    int n;
    long result;
} fib_arg;

static int fib_task(void *arg)
{
    fib_arg *f = arg;
    if (f->n < 2) {
        f->result = f->n;
        return 0;
    }
    fib_arg a = {f->n - 1, 0}, b = {f->n - 2, 0};
    up_group *g;
    CHECK_EQ(up_group_create(&g, up_current_pool(), 2), UP_OK);
    CHECK_EQ(up_group_go(g, fib_task, &a), UP_OK);
    CHECK_EQ(up_group_go(g, fib_task, &b), UP_OK);
    int rc = up_group_wait(g);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    f->result = a.result + b.result;
    return rc;
}

static long fib_plain(int n) { return n < 2 ? n : fib_plain(n - 1) + fib_plain(n - 2); }

typedef struct outer {
    fib_arg fib;
    _Atomic int finished;
    int rc;
} outer;

static void run_fib_in_task(void *arg)
{
    outer *o = arg;
    o->rc = fib_task(&o->fib);
    atomic_store(&o->finished, 1);
}

/* On a pool that can never have more than one worker, a task that waits
 * for a group of subtasks finishes only if the waiting worker runs them. */
static void inside_one_worker_pool(int n)
{
    up_pool *pool = test_one_worker_pool(0, NULL, NULL);
    outer o = {.fib = {n, 0}};
    CHECK_EQ(up_submit(pool, run_fib_in_task, &o), UP_OK);
    WAIT_UNTIL(atomic_load(&o.finished), 60000);
    CHECK_EQ(atomic_load(&o.finished), 1);
    CHECK_EQ(o.rc, 0);
    CHECK_EQ(o.fib.result, fib_plain(n));
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    printf("fib(%d) from nested groups on one worker: %ld\n", n, o.fib.result);
}

static void fib_from_main(up_pool *pool, int n)
{
    up_group *g;
    fib_arg f = {n, 0};
    CHECK_EQ(up_group_create(&g, pool, 0), UP_OK);
    CHECK_EQ(up_group_go(g, fib_task, &f), UP_OK);
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    CHECK_EQ(f.result, fib_plain(n));
}

/* ---- detected deadlocks ----------------------------------------------- */

static int wait_own_group(void *arg)
{
    up_group *g = up_group_current();
    *(int *)arg = up_group_wait(g) == UP_EDEADLK && up_group_destroy(g) == UP_EDEADLK;
    return 0;
}

static int go_at_own_limit(void *arg)
{
    *(int *)arg = up_group_go(up_group_current(), return_arg, NULL) == UP_EDEADLK;
    return 0;
}

static void plain_task_sees_no_group(void *arg)
{
    atomic_store((_Atomic int *)arg, up_group_current() == NULL);
}

static void deadlocks_detected(up_pool *pool)
{
    int ok1 = 0, ok2 = 0;
    _Atomic int ok3 = 0;
    up_group *g;
    CHECK_EQ(up_group_create(&g, pool, 0), UP_OK);
    CHECK_EQ(up_group_go(g, wait_own_group, &ok1), UP_OK);
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    CHECK_EQ(up_group_create(&g, pool, 1), UP_OK);
    CHECK_EQ(up_group_go(g, go_at_own_limit, &ok2), UP_OK);
    CHECK_EQ(up_group_wait(g), UP_OK);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    CHECK_EQ(ok1, 1);
    CHECK_EQ(ok2, 1);
    CHECK_EQ(up_submit_wait(pool, plain_task_sees_no_group, (void *)&ok3), UP_OK);
    WAIT_UNTIL(atomic_load(&ok3), 10000);
    CHECK_EQ(atomic_load(&ok3), 1);
    CHECK(up_group_current() == NULL);
}

/* ---- arguments, stopped pool, reuse ------------------------------------ */

static void arguments_and_stop(void)
{
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    up_group *g = (up_group *)1;
    CHECK_EQ(up_group_create(&g, NULL, 1), UP_EINVAL);
    CHECK(g == NULL);
    CHECK_EQ(up_group_create(NULL, pool, 1), UP_EINVAL);
    g = (up_group *)1;
    CHECK_EQ(up_group_create(&g, pool, 0x80000000u), UP_EINVAL);
    CHECK(g == NULL);
    CHECK_EQ(up_group_create(&g, pool, 3), UP_OK);
    CHECK_EQ(up_group_go(g, NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_group_go(NULL, return_arg, NULL), UP_EINVAL);
    CHECK_EQ(up_group_wait(NULL), UP_EINVAL);
    CHECK_EQ(up_group_destroy(NULL), UP_EINVAL);
    /* Reuse after a wait. */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++)
            CHECK_EQ(up_group_go(g, return_arg, NULL), UP_OK);
        CHECK_EQ(up_group_wait(g), UP_OK);
    }
    up_pool_stop(pool);
    CHECK_EQ(up_group_go(g, return_arg, NULL), UP_ESTOPPED);
    CHECK_EQ(up_group_wait(g), UP_OK); /* the refused task gave its slot back */
    CHECK_EQ(up_group_destroy(g), UP_OK);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
}

int main(void)
{
    test_seed(); /* the schedule varies, the sizes do not */
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    int n = (int)test_size("UP_TEST_GROUP_TASKS", 20000);
    limits(pool, 1, 0, n);
    limits(pool, 3, 0, n);
    limits(pool, 8, 0, n);
    limits(pool, 2, 1, 100);
    limits(pool, 3, 1, 100);
    limits(pool, 4, 5, 1000);
    first_error_skips();
    first_error_sequential(pool);
    cancel_by_hand(pool);
    cancel_wakes_blocked_go(pool);
    several_submitters(pool, 4, n / 4 + 1);
    fib_from_main(pool, 18);
    deadlocks_detected(pool);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    inside_one_worker_pool(16);
    arguments_and_stop();
    printf("groups: ok\n");
    return 0;
}
