/* A deferred task's ICVs are its creator's, as OpenMP scopes them to the
 * data environment: after omp_set_num_threads, omp_set_schedule,
 * omp_set_max_active_levels and omp_set_dynamic in an implicit or an
 * explicit task, a task it creates afterwards queries and opens nested
 * regions with those values on whichever thread runs it; a task created
 * before the change keeps the values from before; a task whose runner
 * changed its own ICVs still sees its creator's. Each case makes sure
 * the other member of a team of two ran some of the tasks (the creator
 * waits for that before its taskwait or barrier). Also runs on GCC's
 * libgomp with OMP_TEST_ANY_RUNTIME=1, which answers the same. */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "omp_check.h"

#define NTASKS 64

/* What a task saw. */
typedef struct seen {
    int nthreads, kind, chunk, levels, dynamic, nested, thread;
} seen;

static seen record(void)
{
    seen s;
    s.nthreads = omp_get_max_threads();
    omp_sched_t k;
    omp_get_schedule(&k, &s.chunk);
    s.kind = (int)k & ~(int)omp_sched_monotonic;
    s.levels = omp_get_max_active_levels();
    s.dynamic = omp_get_dynamic();
    s.thread = omp_get_thread_num();
    int n = 0;
#pragma omp parallel shared(n)
    {
#pragma omp single
        n = omp_get_num_threads();
    }
    s.nested = n;
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits (5 s at most) until a task ran on a thread other than me. */
static void await_other(atomic_int *elsewhere)
{
    double end = now() + 5;
    while (!atomic_load(elsewhere) && now() < end)
        ;
}

/* Values a task expects: the team's (3 threads, libgomp's default
 * schedule, one active level, not dynamic) or the changed ones. */
static int is_team(const seen *s)
{
    return s->nthreads == 3 && s->kind == omp_sched_dynamic && s->chunk == 1 && s->levels == 1 &&
           !s->dynamic && s->nested == 1;
}

static int is_changed(const seen *s)
{
    return s->nthreads == 2 && s->kind == omp_sched_guided && s->chunk == 7 && s->levels == 2 &&
           s->dynamic && s->nested >= 1 && s->nested <= 2;
}

static void show(const char *what, const seen *s)
{
    fprintf(stderr,
            "  %s: nthreads %d schedule %d,%d max levels %d dynamic %d nested team %d (thread "
            "%d)\n",
            what, s->nthreads, s->kind, s->chunk, s->levels, s->dynamic, s->nested, s->thread);
}

/* In the current task: one task before the change, NTASKS after it; the
 * early one runs after the change too (it waits for it). me: the thread
 * this creator runs on. */
static void create(const char *where, int me)
{
    seen early, late[NTASKS];
    atomic_int changed = 0, elsewhere = 0;
#pragma omp task shared(early, changed, elsewhere)
    {
        double end = now() + 5;
        while (!atomic_load(&changed) && now() < end)
            ;
        early = record();
        if (early.thread != me)
            atomic_store(&elsewhere, 1);
    }
    omp_set_num_threads(2);
    omp_set_schedule(omp_sched_guided, 7);
    omp_set_max_active_levels(2);
    omp_set_dynamic(1);
    atomic_store(&changed, 1);
    for (int i = 0; i < NTASKS; i++) {
#pragma omp task shared(late, elsewhere) firstprivate(i)
        {
            late[i] = record();
            if (late[i].thread != me)
                atomic_store(&elsewhere, 1);
        }
    }
    await_other(&elsewhere);
#pragma omp taskwait
    EXPECT(atomic_load(&elsewhere), "%s: no task ran on another thread", where);
    if (!is_team(&early)) {
        EXPECT(0, "%s: a task created before the change sees it", where);
        show("early", &early);
    }
    int wrong = 0, other = 0;
    for (int i = 0; i < NTASKS; i++) {
        other += late[i].thread != me;
        if (!is_changed(&late[i]) && wrong++ == 0)
            show("late", &late[i]);
    }
    EXPECT(wrong == 0, "%s: %d of %d tasks (%d run elsewhere) missed their creator's ICVs", where,
           wrong, NTASKS, other);
    /* The creator's own values stay. */
    EXPECT(omp_get_max_threads() == 2 && omp_get_max_active_levels() == 2,
           "%s: the creator's values after taskwait: %d, %d", where, omp_get_max_threads(),
           omp_get_max_active_levels());
}

int main(void)
{
    require_ultrapool();
    omp_set_dynamic(0);
    omp_set_num_threads(3);
    omp_set_schedule(omp_sched_dynamic, 1);
    omp_set_max_active_levels(1);

    /* In an implicit task: the single's member; the other waits at the
     * single's barrier and runs tasks. */
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        create("implicit task", omp_get_thread_num());
    }

    /* In an explicit task, wherever it runs; its changes end with it. */
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        {
#pragma omp task
            create("explicit task", omp_get_thread_num());
#pragma omp taskwait
            EXPECT(omp_get_max_threads() == 3 && omp_get_max_active_levels() == 1,
                   "after the explicit task: %d, %d", omp_get_max_threads(),
                   omp_get_max_active_levels());
        }
    }

    /* A runner that changed its own ICVs runs its teammate's tasks with
     * the teammate's (the team's) values. */
    seen got[NTASKS];
    atomic_int elsewhere = 0;
#pragma omp parallel num_threads(2) shared(got, elsewhere)
    {
        if (omp_get_thread_num() == 1) {
            omp_set_num_threads(2);
            omp_set_schedule(omp_sched_guided, 7);
            omp_set_max_active_levels(2);
            omp_set_dynamic(1);
        }
#pragma omp barrier
        if (omp_get_thread_num() == 0) {
            for (int i = 0; i < NTASKS; i++) {
#pragma omp task shared(got, elsewhere) firstprivate(i)
                {
                    got[i] = record();
                    if (got[i].thread != 0)
                        atomic_store(&elsewhere, 1);
                }
            }
            await_other(&elsewhere);
        }
    }
    EXPECT(atomic_load(&elsewhere), "runner's change: no task ran on the other thread");
    int wrong = 0;
    for (int i = 0; i < NTASKS; i++)
        if (!is_team(&got[i]) && wrong++ == 0)
            show("teammate's task", &got[i]);
    EXPECT(wrong == 0, "%d of %d tasks saw their runner's changed ICVs", wrong, NTASKS);
    return omp_report("test_omp_task_icv");
}
