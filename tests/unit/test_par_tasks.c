/* Explicit tasks: fib and nqueens by recursive tasks (every call a task),
 * taskwait, copied payloads, undeferred and final tasks, priorities,
 * taskyield, taskgroups with cancellation, taskloop (grainsize, num_tasks,
 * nogroup), tasks outside any region, and tasks from several members at
 * once. Results are checked against known values. */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <ultrapool/parallel.h>

#include "check.h"

static up_pool *pool;

typedef struct fib_arg {
    int n;
    long *out;
} fib_arg;

static void fib_task(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        *a->out = a->n;
        return;
    }
    long x, y;
    fib_arg l = {a->n - 1, &x}, r = {a->n - 2, &y};
    up_task(fib_task, &l, NULL);
    up_task(fib_task, &r, NULL);
    up_taskwait();
    *a->out = x + y;
}

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

typedef struct fib_job {
    int n;
    long result;
} fib_job;

static void fib_region(void *p)
{
    fib_job *j = p;
    if (up_single()) {
        fib_arg a = {j->n, &j->result};
        fib_task(&a);
    }
}

/* nqueens with copied payloads: the board prefix travels in the task. */
typedef struct queens {
    int n, row;
    uint8_t col[12];
    _Atomic long *count;
} queens;

static int safe(const queens *q, int c)
{
    for (int r = 0; r < q->row; r++) {
        int d = q->col[r] - c;
        if (d == 0 || d == q->row - r || -d == q->row - r)
            return 0;
    }
    return 1;
}

static void queens_task(void *p)
{
    queens q = *(queens *)p;
    if (q.row == q.n) {
        atomic_fetch_add_explicit(q.count, 1, memory_order_relaxed);
        return;
    }
    for (int c = 0; c < q.n; c++)
        if (safe(&q, c)) {
            queens next = q;
            next.col[q.row] = (uint8_t)c;
            next.row = q.row + 1;
            CHECK_EQ(up_task_copy(queens_task, &next, sizeof next, NULL), UP_OK);
        }
    up_taskwait();
}

static _Atomic long queens_count;
static void queens_region(void *p)
{
    int n = *(int *)p;
    if (up_single()) {
        queens q;
        memset(&q, 0, sizeof q);
        q.n = n;
        q.count = &queens_count;
        queens_task(&q);
    }
}

/* Every member creates tasks at once. */
static _Atomic long all_sum;
static unsigned all_n;
static void add_task(void *p) { atomic_fetch_add(&all_sum, (long)(intptr_t)p); }
static void all_create_region(void *p)
{
    (void)p;
    if (up_master())
        all_n = up_num_threads();
    for (long i = 1; i <= 1000; i++)
        up_task(add_task, (void *)(intptr_t)i, NULL);
    /* no taskwait: the region's end waits for them */
}

/* Options. */
static _Thread_local int ran_here;
static void mark_here(void *p)
{
    (void)p;
    ran_here = 1;
}
static _Atomic int final_children_inline;
static void final_child(void *p)
{
    int *flag = p;
    *flag = 1;
}
static void final_parent(void *p)
{
    (void)p;
    int flag = 0;
    up_task(final_child, &flag, NULL);
    if (flag) /* ran before up_task returned: undeferred, as final demands */
        atomic_fetch_add(&final_children_inline, 1);
}
static _Atomic int prio_order[8], prio_next;
static void prio_task(void *p) { prio_order[atomic_fetch_add(&prio_next, 1)] = (int)(intptr_t)p; }

static void options_region(void *p)
{
    (void)p;
    if (up_single()) {
        up_task_opts und = UP_TASK_OPTS(.undeferred = 1);
        ran_here = 0;
        up_task(mark_here, NULL, &und);
        CHECK_EQ(ran_here, 1); /* if(0): ran on this thread before returning */
        up_task_opts fin = UP_TASK_OPTS(.final = 1);
        up_task(final_parent, NULL, &fin);
        up_taskwait();
        CHECK_EQ(atomic_load(&final_children_inline), 1);
        for (int i = 1; i <= 4; i++) {
            up_task_opts pr = UP_TASK_OPTS(.priority = i);
            up_task(prio_task, (void *)(intptr_t)i, &pr);
        }
        up_taskyield();
        up_taskwait();
        CHECK_EQ(atomic_load(&prio_next), 4);
    }
}

/* Taskgroups and cancellation. */
static _Atomic long group_ran, group_skipped_seen;
static void group_leaf(void *p)
{
    (void)p;
    atomic_fetch_add(&group_ran, 1);
}
static void group_spawner(void *p)
{
    (void)p;
    for (int i = 0; i < 50; i++)
        up_task(group_leaf, NULL, NULL);
}
static void group_body(void *p)
{
    (void)p;
    for (int i = 0; i < 20; i++)
        up_task(group_spawner, NULL, NULL);
}
/* The body creates 200 leaves, cancels its group, opens a gate and creates
 * 200 more. Any leaf may run queued or at once (OpenMP lets a task run
 * undeferred), so which of the first 200 run depends on timing; none of
 * the last 200 may start. Leaf 0, created first and queued, is the
 * watcher: the body waits until the other member has taken it, and it
 * waits at the gate and must then see the cancel. On the body's own
 * thread it could not wait (the body would never get past it). */
#define CANCEL_BEFORE 200
static _Atomic int cancel_gate_open;
static _Atomic long ran_after_cancel, watcher_on_thief;
static unsigned cancel_team;
static _Thread_local int is_body_thread;
static void cancelling_leaf(void *p)
{
    long i = (long)(intptr_t)p;
    if (i == 0 && !is_body_thread) {
        atomic_store(&watcher_on_thief, 1);
        while (!atomic_load(&cancel_gate_open))
            sched_yield();
        if (up_cancelled())
            atomic_fetch_add(&group_skipped_seen, 1);
    }
    if (i >= CANCEL_BEFORE)
        atomic_fetch_add(&ran_after_cancel, 1);
    atomic_fetch_add(&group_ran, 1);
}
static void cancelling_body(void *p)
{
    (void)p;
    is_body_thread = 1;
    cancel_team = up_num_threads();
    for (long i = 0; i < CANCEL_BEFORE; i++)
        up_task(cancelling_leaf, (void *)(intptr_t)i, NULL);
    /* Wait for the other member to take the watcher (the oldest queued
     * task, public since its push; the member steals it from the barrier
     * at the end of the single); a team of one never does. */
    if (cancel_team > 1)
        WAIT_UNTIL(atomic_load(&watcher_on_thief), 30000);
    up_cancel_taskgroup();
    atomic_store(&cancel_gate_open, 1);
    for (long i = CANCEL_BEFORE; i < 2 * CANCEL_BEFORE; i++)
        up_task(cancelling_leaf, (void *)(intptr_t)i, NULL);
    is_body_thread = 0;
}
static int group_rc, cancel_rc;
static long ran_after_group;
static void group_region(void *p)
{
    (void)p;
    if (up_single()) {
        atomic_store(&group_ran, 0);
        group_rc = up_taskgroup(group_body, NULL);
        ran_after_group = atomic_load(&group_ran); /* every descendant done */
        atomic_store(&group_ran, 0);
        atomic_store(&cancel_gate_open, 0);
        cancel_rc = up_taskgroup(cancelling_body, NULL);
    }
}

/* Taskloop. */
static _Atomic unsigned char tl_hits[100003];
static void tl_body(int64_t lo, int64_t hi, void *p)
{
    (void)p;
    for (int64_t i = lo; i < hi; i++)
        atomic_fetch_add(&tl_hits[i], 1);
}
static void taskloop_region(void *p)
{
    (void)p;
    if (up_single()) {
        up_taskloop_opts g = UP_TASKLOOP_OPTS(.grainsize = 97),
                         n = UP_TASKLOOP_OPTS(.num_tasks = 13), d = UP_TASKLOOP_OPTS(),
                         ng = UP_TASKLOOP_OPTS(.grainsize = 1000, .nogroup = 1);
        CHECK_EQ(up_taskloop(0, 100003, &g, tl_body, NULL), UP_OK);
        CHECK_EQ(up_taskloop(0, 100003, &n, tl_body, NULL), UP_OK);
        CHECK_EQ(up_taskloop(0, 100003, &d, tl_body, NULL), UP_OK);
        CHECK_EQ(up_taskloop(0, 100003, NULL, tl_body, NULL), UP_OK);
        CHECK_EQ(up_taskloop(0, 100003, &ng, tl_body, NULL), UP_OK);
        up_taskwait(); /* nogroup: waited here */
    }
}

/* Chunks with children of their own, many more chunks than a member's
 * deque holds: whether a chunk ran queued or at once, its taskwait waits
 * for its own children. */
#define TL_PARENTS 20000
static _Atomic unsigned char tl_child_hits[TL_PARENTS];
static _Atomic int tl_wait_wrong;
static void tl_child(void *p) { atomic_fetch_add(&tl_child_hits[(intptr_t)p], 1); }
static void tl_parent_body(int64_t lo, int64_t hi, void *p)
{
    (void)p;
    for (int64_t i = lo; i < hi; i++)
        CHECK_EQ(up_task(tl_child, (void *)(intptr_t)i, NULL), UP_OK);
    up_taskwait();
    for (int64_t i = lo; i < hi; i++)
        if (atomic_load(&tl_child_hits[i]) != 1)
            atomic_store(&tl_wait_wrong, 1);
}
static void tl_parent_region(void *p)
{
    (void)p;
    up_taskloop_opts g = UP_TASKLOOP_OPTS(.grainsize = 2);
    if (up_single())
        CHECK_EQ(up_taskloop(0, TL_PARENTS, &g, tl_parent_body, NULL), UP_OK);
}

/* OpenMP's chunk rules: grainsize g gives chunks of at least min(g, n)
 * and fewer than 2g iterations; num_tasks t gives exactly min(t, n). */
static _Atomic int64_t tl_chunks, tl_iters, tl_min, tl_max;
static void tl_size_body(int64_t lo, int64_t hi, void *p)
{
    (void)p;
    int64_t s = hi - lo, m;
    atomic_fetch_add(&tl_chunks, 1);
    atomic_fetch_add(&tl_iters, s);
    for (m = atomic_load(&tl_min); s < m && !atomic_compare_exchange_weak(&tl_min, &m, s);)
        ;
    for (m = atomic_load(&tl_max); s > m && !atomic_compare_exchange_weak(&tl_max, &m, s);)
        ;
}
typedef struct tl_case {
    int64_t n;
    up_taskloop_opts o;
} tl_case;
static void tl_size_region(void *p)
{
    const tl_case *c = p;
    if (up_single())
        CHECK_EQ(up_taskloop(1000, 1000 + c->n, &c->o, tl_size_body, NULL), UP_OK);
}
static void check_chunks(unsigned threads, int64_t n, int64_t grain, int64_t tasks)
{
    tl_case c = {n, UP_TASKLOOP_OPTS(.grainsize = grain, .num_tasks = tasks)};
    atomic_store(&tl_chunks, 0);
    atomic_store(&tl_iters, 0);
    atomic_store(&tl_min, INT64_MAX);
    atomic_store(&tl_max, 0);
    CHECK_EQ(up_parallel(pool, threads, tl_size_region, &c), UP_OK);
    CHECK_EQ(atomic_load(&tl_iters), n);
    if (grain) {
        CHECK_GE(atomic_load(&tl_min), (grain < n ? grain : n));
        CHECK_LT(atomic_load(&tl_max), 2 * grain);
    } else {
        CHECK_EQ(atomic_load(&tl_chunks), tasks < n ? tasks : n);
    }
}

/* A taskloop whose first chunk cancels its taskgroup. In a team of one
 * its chunks run as plain calls in the order undeferred tasks would, and
 * every chunk after the cancel is skipped. */
static _Atomic long tl_cancel_ran;
static int tl_cancel_rc;
static void tl_cancel_body(int64_t lo, int64_t hi, void *p)
{
    (void)lo, (void)hi, (void)p;
    if (atomic_fetch_add(&tl_cancel_ran, 1) == 0)
        up_cancel_taskgroup();
}
static void taskloop_cancel_region(void *p)
{
    (void)p;
    up_taskloop_opts g = UP_TASKLOOP_OPTS(.grainsize = 10);
    if (up_single())
        tl_cancel_rc = up_taskloop(0, 1000, &g, tl_cancel_body, NULL);
}

int main(void)
{
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    /* fib's n is a shape (fixed); UP_TEST_SCALE scales the repetitions. */
    int n = (int)test_param("UP_TEST_FIB_N", 22);
    int reps = (int)test_size("UP_TEST_FIB_REPS", 4);
    for (int rep = 0; rep < reps; rep++) {
        for (unsigned threads = 1; threads <= 4; threads *= 2) {
            fib_job j = {n, 0};
            CHECK_EQ(up_parallel(pool, threads, fib_region, &j), UP_OK);
            CHECK_EQ(j.result, fib_seq(n));
        }
    }
    /* Outside a region tasks run on the caller. */
    long r = 0;
    fib_arg a = {20, &r};
    fib_task(&a);
    CHECK_EQ(r, 6765);

    static const long solutions[] = {1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680};
    for (int q = 4; q <= 9; q++) {
        atomic_store(&queens_count, 0);
        CHECK_EQ(up_parallel(pool, 2, queens_region, &q), UP_OK);
        CHECK_EQ(atomic_load(&queens_count), solutions[q - 1]);
    }

    CHECK_EQ(up_parallel(pool, 2, all_create_region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&all_sum), 500500 * (long)all_n);

    CHECK_EQ(up_parallel(pool, 2, options_region, NULL), UP_OK);

    CHECK_EQ(up_parallel(pool, 2, group_region, NULL), UP_OK);
    CHECK_EQ(group_rc, UP_OK);
    CHECK_EQ(ran_after_group, 20 * 50);
    CHECK_EQ(cancel_rc, UP_ECANCELED);
    /* No leaf created after the cancel started; a watcher a thief held at
     * the gate saw the cancel. */
    CHECK_EQ(atomic_load(&ran_after_cancel), 0);
    /* In a team of one every leaf before the cancel ran at once. In a team
     * of two, leaves 1 to 3 were queued (fewer than 4 were queued before
     * them) and nobody was free to run them before the cancel: the thief
     * held the watcher at the gate and the body never waits in the loop. */
    if (cancel_team > 1)
        CHECK_LE(atomic_load(&group_ran), CANCEL_BEFORE - 3);
    else
        CHECK_EQ(atomic_load(&group_ran), CANCEL_BEFORE);
    CHECK_EQ(atomic_load(&watcher_on_thief), cancel_team > 1);
    CHECK_EQ(atomic_load(&group_skipped_seen), cancel_team > 1);

    CHECK_EQ(up_parallel(pool, 2, taskloop_region, NULL), UP_OK);
    for (int i = 0; i < 100003; i++)
        CHECK_EQ(tl_hits[i], 5);
    /* A team of one, and no region at all: every task would run at once,
     * so the chunks run without tasks; each iteration still runs once. */
    CHECK_EQ(up_parallel(pool, 1, taskloop_region, NULL), UP_OK);
    taskloop_region(NULL);
    for (int i = 0; i < 100003; i++)
        CHECK_EQ(tl_hits[i], 15);
    for (unsigned threads = 1; threads <= 2; threads++) {
        check_chunks(threads, 100003, 97, 0);
        check_chunks(threads, 100003, 100003, 0);
        check_chunks(threads, 50, 97, 0); /* fewer iterations than the grain */
        check_chunks(threads, 1000, 1, 0);
        check_chunks(threads, 100003, 0, 13);
        check_chunks(threads, 100003, 0, 1024);
        check_chunks(threads, 7, 0, 100); /* more tasks asked than iterations */
    }
    CHECK_EQ(up_parallel(pool, 2, tl_parent_region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&tl_wait_wrong), 0);
    for (int i = 0; i < TL_PARENTS; i++)
        CHECK_EQ(tl_child_hits[i], 1);
    CHECK_EQ(up_parallel(pool, 1, taskloop_cancel_region, NULL), UP_OK);
    CHECK_EQ(tl_cancel_rc, UP_ECANCELED);
    CHECK_EQ(atomic_load(&tl_cancel_ran), 1);
    atomic_store(&tl_cancel_ran, 0);
    CHECK_EQ(up_parallel(pool, 2, taskloop_cancel_region, NULL), UP_OK);
    CHECK_EQ(tl_cancel_rc, UP_ECANCELED);
    CHECK(atomic_load(&tl_cancel_ran) >= 1 && atomic_load(&tl_cancel_ran) < 100);

    CHECK_EQ(up_task(NULL, NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_task_copy(add_task, NULL, 8, NULL), UP_EINVAL);
    CHECK_EQ(up_task_copy(add_task, &r, UP_PAYLOAD_MAX + 1, NULL), UP_EINVAL);
    CHECK_EQ(up_taskgroup(NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    printf("tasks: fib(%d) at 1, 2, 4 threads, nqueens 4..9, all-member creation, options, "
           "taskgroups (%ld of 400 ran around a cancel), taskloops\n",
           n, (long)atomic_load(&group_ran));
    return 0;
}
