/* sections run each exactly once (in a region, combined, with nowait);
 * single with copyprivate broadcasts the value to every member; loops in
 * nested regions; many nowait loops in a row (more than the ring of
 * construct slots) with dynamic schedules; GOMP_loop_start's shared block
 * (lastprivate(conditional)). */
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

#include "omp_check.h"

#define NT 4
static atomic_int sec[8];

static void check_sections(const char *what, int n)
{
    for (int k = 0; k < n; k++)
        EXPECT(atomic_load(&sec[k]) == 1, "%s: section %d ran %d times", what, k,
               atomic_load(&sec[k]));
    memset(sec, 0, sizeof sec);
}

static void sections(void)
{
#pragma omp parallel sections num_threads(NT)
    {
#pragma omp section
        atomic_fetch_add(&sec[0], 1);
#pragma omp section
        atomic_fetch_add(&sec[1], 1);
#pragma omp section
        atomic_fetch_add(&sec[2], 1);
#pragma omp section
        atomic_fetch_add(&sec[3], 1);
#pragma omp section
        atomic_fetch_add(&sec[4], 1);
    }
    check_sections("parallel sections", 5);
#pragma omp parallel num_threads(NT)
    {
        for (int r = 0; r < 12; r++) {
#pragma omp sections nowait
            {
#pragma omp section
                atomic_fetch_add(&sec[0], r == 5);
#pragma omp section
                atomic_fetch_add(&sec[1], r == 5);
#pragma omp section
                atomic_fetch_add(&sec[2], r == 5);
            }
        }
#pragma omp barrier
#pragma omp sections
        {
#pragma omp section
            atomic_fetch_add(&sec[3], 1);
#pragma omp section
            atomic_fetch_add(&sec[4], 1);
        }
    }
    check_sections("sections in a region", 5);
}

static void copyprivate(void)
{
    atomic_int wrong = 0;
#pragma omp parallel num_threads(NT)
    {
        for (int r = 0; r < 20; r++) {
            long v = -1;
            double d = 0;
#pragma omp single copyprivate(v, d)
            {
                v = 1000 + r * 7 + omp_get_thread_num() * 0;
                d = r * 0.5;
            }
            if (v != 1000 + r * 7 || d != r * 0.5)
                atomic_fetch_add(&wrong, 1);
        }
    }
    EXPECT(wrong == 0, "copyprivate: %d members saw a wrong value", (int)wrong);
}

#define M 300
static atomic_int hits[NT][M];

/* Active inner regions where OMP_MAX_ACTIVE_LEVELS allows them (ctest sets 2). */
static void nested(void)
{
    memset(hits, 0, sizeof hits);
#pragma omp parallel for num_threads(2) schedule(dynamic)
    for (int o = 0; o < NT; o++) {
#pragma omp parallel for num_threads(2) schedule(guided, 3)
        for (int i = 0; i < M; i++)
            atomic_fetch_add(&hits[o][i], 1);
    }
    for (int o = 0; o < NT; o++)
        for (int i = 0; i < M; i++)
            EXPECT(atomic_load(&hits[o][i]) == 1, "nested: %d,%d ran %d times", o, i,
                   atomic_load(&hits[o][i]));
}

static atomic_int ring[40][M];

static void nowait_ring(void)
{
#pragma omp parallel num_threads(NT)
    {
        for (int r = 0; r < 40; r++) {
#pragma omp for schedule(dynamic, 3) nowait
            for (int i = 0; i < M; i++)
                atomic_fetch_add(&ring[r][i], 1);
        }
    }
    for (int r = 0; r < 40; r++)
        for (int i = 0; i < M; i++)
            EXPECT(atomic_load(&ring[r][i]) == 1, "nowait ring: loop %d iteration %d ran %d times",
                   r, i, atomic_load(&ring[r][i]));
}

static void conditional(void)
{
    int last = -1;
#pragma omp parallel for lastprivate(conditional : last) num_threads(NT) schedule(dynamic, 4)
    for (int i = 0; i < 1000; i++)
        if (i % 97 == 5)
            last = i;
    EXPECT(last == 975, "lastprivate(conditional): %d, not 975", last);
}

int main(void)
{
    require_ultrapool();
    for (int rep = 0; rep < 3; rep++) {
        sections();
        copyprivate();
        nested();
        memset(ring, 0, sizeof ring);
        nowait_ring();
        conditional();
    }
    return omp_report("omp_sections");
}
