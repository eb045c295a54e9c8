/* Tasks meeting worksharing constructs on ultrapool's libgomp:
 * reduction(task, ...) on for, sections and scope (in a team, in a team
 * of one and orphaned), sections run alone with tasks in them, a
 * detached task in a team of one fulfilled by a later task, dependencies
 * between sibling tasks in different taskgroups, depend iterators of no
 * iterations, and a doacross nest with an empty inner loop. */
#include <omp.h>
#include <unistd.h>

#include "omp_check.h"

static int sum;

static void add_task(int v)
{
#pragma omp task in_reduction(+ : sum)
    sum += v;
}

/* Orphaned: in a team, or called outside any region. */
static void ws_for(int n)
{
#pragma omp for reduction(task, + : sum)
    for (int i = 0; i < n; i++)
        add_task(i);
}

static void ws_sections(void)
{
#pragma omp sections reduction(task, + : sum)
    {
        add_task(1);
#pragma omp section
        add_task(2);
#pragma omp section
        add_task(4);
#pragma omp section
        add_task(8);
    }
}

static void ws_scope(void)
{
#pragma omp scope reduction(task, + : sum)
    {
        add_task(1 + omp_get_thread_num());
    }
}

static void task_reductions(void)
{
    for (int threads = 1; threads <= 4; threads *= 2) {
        sum = 0;
#pragma omp parallel num_threads(threads)
        ws_for(100);
        EXPECT(sum == 4950, "for, %d threads: %d", threads, sum);
        sum = 0;
#pragma omp parallel num_threads(threads)
        ws_sections();
        EXPECT(sum == 15, "sections, %d threads: %d", threads, sum);
        sum = 0;
        int size = 0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp single
            size = omp_get_num_threads();
            ws_scope();
        }
        EXPECT(sum == size * (size + 1) / 2, "scope, %d threads: %d", size, sum);
    }
    sum = 0;
    ws_for(10);
    ws_sections();
    ws_scope();
    EXPECT(sum == 45 + 15 + 1, "outside a region: %d", sum);
}

/* Every section runs, each creating a task, with no team. */
static void sections_alone(void)
{
    int hits = 0;
#pragma omp sections
    {
#pragma omp task shared(hits)
        {
#pragma omp atomic
            hits++;
        }
#pragma omp section
        {
#pragma omp atomic
            hits++;
        }
#pragma omp section
        {
#pragma omp atomic
            hits++;
        }
    }
#pragma omp taskwait
    EXPECT(hits == 3, "sections alone: %d of 3 ran", hits);
}

/* The first task completes only when the last fulfils its event: a team
 * of one must not wait for it at its creation. */
static void detach_alone(void)
{
    omp_event_handle_t ev;
    int x = 0, y = 0;
#pragma omp parallel num_threads(1)
#pragma omp single
    {
#pragma omp task detach(ev) shared(x)
        x++;
#pragma omp task shared(y)
        {
            y++;
            omp_fulfill_event(ev);
        }
    }
    EXPECT(x == 1 && y == 1, "detach in a team of one: %d %d", x, y);
}

/* The writer, in an inner taskgroup, waits for the readers created
 * before it in enclosing taskgroups: all are children of one task. */
static void depend_taskgroups(void)
{
    int bad = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
        int x = 1;
#pragma omp taskgroup
        {
#pragma omp task shared(x, bad) depend(in : x)
            {
                usleep(5000);
                if (x != 1) {
#pragma omp atomic
                    bad++;
                }
            }
#pragma omp taskgroup
            {
#pragma omp task shared(x) depend(out : x)
                x = 2;
            }
        }
    }
    EXPECT(bad == 0, "a writer in an inner taskgroup ran before a reader");
}

static void depend_empty_iterator(int n)
{
    int p[4] = {n, 0, 0, 0}, v = 0;
    EXPECT(p[0] == n, "p");
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task depend(iterator(j = 0                                                             \
                                 : n),                                                             \
                        out                                                                        \
                        : p[j]) depend(iterator(j = 0                                              \
                                                : n),                                              \
                                       in                                                          \
                                       : p[j + 2]) shared(v)
        {
#pragma omp atomic
            v++;
}
#pragma omp taskwait
}
EXPECT(v == 1, "depend iterator of %d iterations: %d", n, v);
}

static void doacross_empty(int m)
{
    int runs = 0;
#pragma omp parallel num_threads(3)
#pragma omp for ordered(2)
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < m; j++) {
#pragma omp ordered depend(sink : i - 1, j)
#pragma omp atomic
            runs++;
#pragma omp ordered depend(source)
        }
    EXPECT(runs == 8 * (m > 0 ? m : 0), "doacross with %d inner iterations: %d", m, runs);
}

int main(void)
{
    require_ultrapool();
    task_reductions();
    sections_alone();
    detach_alone();
    for (int i = 0; i < 5; i++)
        depend_taskgroups();
    depend_empty_iterator(2);
    depend_empty_iterator(-1);
    for (int i = 0; i < 20; i++)
        doacross_empty(0);
    doacross_empty(3);
    return omp_report("omp_ws_tasks");
}
