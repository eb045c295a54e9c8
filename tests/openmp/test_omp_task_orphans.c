/* OpenMP's tasks complete when their body returns, without waiting for
 * their children (pragmas/src/tasks.c: frames that outlive their body),
 * while a taskgroup's end, a barrier and the region's end still wait for
 * every descendant.
 *
 * The first checks make a child that waits for a flag which the
 * grandparent sets only after its taskwait on the parent: were the
 * parent's end to wait for its child, the three would wait for each
 * other. The child gives up after a timeout (never a hang) and the test
 * fails then. A watchdog alarm ends the program should anything else
 * hang. */
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "omp_check.h"

#define TIMEOUT_S 10.0

/* Spins until *flag is set or TIMEOUT_S passed: 1 when it was set. */
static int wait_flag(atomic_int *flag)
{
    double t0 = omp_get_wtime();
    while (!atomic_load(flag)) {
        if (omp_get_wtime() - t0 > TIMEOUT_S)
            return 0;
        sched_yield();
    }
    return 1;
}

/* One round: the parent task creates a child that waits for flag, set by
 * the grandparent (the implicit task of thread 0) after its taskwait.
 * undeferred: the parent runs at once on thread 0 (if(0)) and waits until
 * the other thread has taken the child, so the round always tests; else
 * the parent is an ordinary task, and a child that lands on thread 0
 * (which then runs it inside the taskwait, before it could set the flag,
 * as OpenMP allows) returns at once. icv: the grandparent changes an ICV
 * first, so the parent carries its creator's ICVs (the library's other
 * kind of in-record task). The tasks share one pointer, so that their
 * arguments fit in the task record. Returns 1 when the round tested. */
typedef struct {
    atomic_int flag, started, timed_out, child_done, tested;
} trip;

static int round_trip(int undeferred, int icv)
{
    trip state = {0}, *st = &state;
#pragma omp parallel num_threads(2) firstprivate(st)
    {
        if (omp_get_thread_num() == 0) {
            if (icv)
                omp_set_num_threads(3);
#pragma omp task if (!undeferred) firstprivate(st)
            {
#pragma omp task firstprivate(st)
                {
                    atomic_store(&st->started, 1);
                    if (omp_get_thread_num() != 0) {
                        atomic_store(&st->tested, 1);
                        if (!wait_flag(&st->flag))
                            atomic_store(&st->timed_out, 1);
                    }
                    atomic_store(&st->child_done, 1);
                }
                /* The other thread (in the region's barrier) takes it. */
                if (undeferred && !wait_flag(&st->started))
                    atomic_store(&st->timed_out, 2);
            }
#pragma omp taskwait
            atomic_store(&st->flag, 1);
        }
    }
    /* The region's end waited for the child. */
    EXPECT(atomic_load(&state.child_done), "round %d/%d: the child had not run at the region's end",
           undeferred, icv);
    EXPECT(atomic_load(&state.timed_out) != 1,
           "round %d/%d: the parent's end waited for its child (it waited %.0f s for a flag set "
           "after the parent's taskwait)",
           undeferred, icv, TIMEOUT_S);
    EXPECT(atomic_load(&state.timed_out) != 2,
           "round %d/%d: no other thread took the child in %.0f s", undeferred, icv, TIMEOUT_S);
    return atomic_load(&state.tested);
}

/* A tree of tasks whose parents return at once: fan children per task,
 * depth levels, each leaf adds one to *count after a short spin (so the
 * leaves outlive their ancestors' bodies). */
static void tree(atomic_long *count, int fan, int depth)
{
    if (depth == 0) {
        double t0 = omp_get_wtime();
        while (omp_get_wtime() - t0 < 20e-6)
            ;
        atomic_fetch_add(count, 1);
        return;
    }
    for (int i = 0; i < fan; i++) {
#pragma omp task firstprivate(fan, depth)
        tree(count, fan, depth - 1);
    }
}

static long leaves(int fan, int depth)
{
    long n = 1;
    for (int i = 0; i < depth; i++)
        n *= fan;
    return n;
}

int main(void)
{
    require_ultrapool();
    alarm(100); /* a watchdog: SIGALRM fails the test rather than hang it */

    for (int icv = 0; icv < 2; icv++) {
        round_trip(1, icv);
        int tested = 0;
        for (int r = 0; r < 10; r++)
            tested += round_trip(0, icv);
        printf("ordinary parent%s: %d of 10 rounds had the child on the other thread\n",
               icv ? " with its creator's ICVs" : "", tested);
    }

    /* A taskgroup's end waits for every descendant of its tasks. */
    for (int r = 0; r < 20; r++) {
        atomic_long count = 0;
        long seen = -1;
#pragma omp parallel num_threads(2) shared(count, seen)
#pragma omp single
        {
#pragma omp taskgroup
            {
#pragma omp task
                tree(&count, 3, 4);
            }
            seen = atomic_load(&count);
        }
        EXPECT(seen == leaves(3, 4), "taskgroup: %ld of %ld leaves done at its end", seen,
               leaves(3, 4));
    }

    /* A barrier, and the region's end, wait for every task of the team
     * (teams of 2 and 4: more threads than this machine's CPUs too). */
    for (int r = 0; r < 40; r++) {
        int nth = r % 2 ? 4 : 2;
        atomic_long count = 0;
        long at_barrier[4] = {-1, -1, -1, -1};
#pragma omp parallel num_threads(nth) shared(count, at_barrier)
        {
#pragma omp task
            tree(&count, 2, 5);
#pragma omp barrier
            at_barrier[omp_get_thread_num()] = atomic_load(&count);
#pragma omp barrier
#pragma omp task
            tree(&count, 2, 5);
        }
        for (int i = 0; i < nth; i++)
            EXPECT(at_barrier[i] == nth * leaves(2, 5),
                   "barrier: thread %d of %d saw %ld of %ld leaves", i, nth, at_barrier[i],
                   nth * leaves(2, 5));
        EXPECT(atomic_load(&count) == 2 * nth * leaves(2, 5), "region end: %ld of %ld leaves",
               (long)atomic_load(&count), 2 * nth * leaves(2, 5));
    }

    /* A taskwait waits for the children: each child's body is done (its
     * own children may not be). A dependent sibling runs after its
     * predecessor's body, whose children may still run. */
    for (int r = 0; r < 20; r++) {
        atomic_long count = 0, bodies = 0;
        int x = 0, y = -1;
#pragma omp parallel num_threads(2) shared(count, bodies, x, y)
#pragma omp single
        {
            for (int i = 0; i < 4; i++) {
#pragma omp task
                {
                    tree(&count, 2, 3);
                    atomic_fetch_add(&bodies, 1);
                }
            }
#pragma omp task depend(out : x) shared(x, count)
            {
                tree(&count, 2, 3);
                x = 1;
            }
#pragma omp task depend(in : x) shared(x, y)
            y = x;
#pragma omp taskwait
            EXPECT(atomic_load(&bodies) == 4, "taskwait: %ld of 4 children done",
                   (long)atomic_load(&bodies));
            EXPECT(y == 1, "depend: the reader ran before its writer (%d)", y);
        }
        EXPECT(atomic_load(&count) == 5 * leaves(2, 3), "region end: %ld of %ld leaves",
               (long)atomic_load(&count), 5 * leaves(2, 3));
    }
    return omp_report("test_omp_task_orphans");
}
