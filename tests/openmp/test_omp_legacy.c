/* GCC before 4.9's split regions, called directly: GOMP_parallel_start,
 * the master's own call of the region function, GOMP_parallel_end; the
 * combined GOMP_parallel_loop_*_start and GOMP_parallel_sections_start.
 * Team size and numbers, nesting, ICV inheritance and restoration, tasks
 * the master creates (finished by GOMP_parallel_end), every iteration and
 * section run once. `grow`: members leave a split region as they leave a
 * combined one, taking back what they saved on entry (the heap stays flat
 * across thousands of split regions). */
#include <malloc.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "omp_check.h"

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_static_start(void (*fn)(void *), void *data, unsigned num_threads,
                                     long start, long end, long incr, long chunk);
void GOMP_parallel_loop_dynamic_start(void (*fn)(void *), void *data, unsigned num_threads,
                                      long start, long end, long incr, long chunk);
void GOMP_parallel_loop_guided_start(void (*fn)(void *), void *data, unsigned num_threads,
                                     long start, long end, long incr, long chunk);
void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned num_threads,
                                      long start, long end, long incr);
void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned num_threads,
                                  unsigned count);
bool GOMP_loop_static_next(long *istart, long *iend);
bool GOMP_loop_dynamic_next(long *istart, long *iend);
bool GOMP_loop_guided_next(long *istart, long *iend);
bool GOMP_loop_runtime_next(long *istart, long *iend);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);
void GOMP_barrier(void);

#define NT 4
static atomic_int seen[NT], size_seen, level_seen, tasks_done, inner[NT][2];

static void region(void *data)
{
    (void)data;
    int me = omp_get_thread_num();
    if (me >= 0 && me < NT)
        atomic_fetch_add(&seen[me], 1);
    if (omp_get_num_threads() != NT)
        atomic_fetch_add(&size_seen, 1);
    if (omp_get_level() != 1)
        atomic_fetch_add(&level_seen, 1);
    for (int k = 0; k < 8; k++) {
#pragma omp task
        atomic_fetch_add(&tasks_done, 1);
    }
}

static void nested_inner(void *data)
{
    int outer = *(int *)data;
    int me = omp_get_thread_num();
    if (omp_get_level() == 2 && omp_get_ancestor_thread_num(1) == outer && me < 2)
        atomic_fetch_add(&inner[outer][me], 1);
}

static void nested_outer(void *data)
{
    (void)data;
    int me = omp_get_thread_num();
    GOMP_parallel_start(nested_inner, &me, 2);
    nested_inner(&me);
    GOMP_parallel_end();
    EXPECT(omp_get_level() == 1 && omp_get_thread_num() == me, "back in the outer region");
}

#define N 1000
static atomic_int hits[N];
typedef bool (*next_fn)(long *, long *);
static next_fn loop_next;

static void loop_body(void *data)
{
    (void)data;
    long s, e;
    while (loop_next(&s, &e))
        for (long i = s; i < e; i += 3)
            atomic_fetch_add(&hits[i], 1);
    GOMP_loop_end_nowait();
}

static void check_loop(const char *what)
{
    for (int i = 0; i < N; i++)
        EXPECT(atomic_load(&hits[i]) == (i % 3 == 1), "%s: iteration %d ran %d times", what, i,
               atomic_load(&hits[i]));
    memset(hits, 0, sizeof hits);
}

static atomic_int sec[5];

static void sections_body(void *data)
{
    (void)data;
    unsigned s;
    while ((s = GOMP_sections_next()) != 0)
        if (s <= 5)
            atomic_fetch_add(&sec[s - 1], 1);
    GOMP_sections_end_nowait();
}

static atomic_int icv_team;

static void icv_body(void *data)
{
    (void)data;
    if (omp_get_thread_num() == 0)
        omp_set_num_threads(2); /* the master's ICV inside; undone at the end */
    GOMP_barrier();
    atomic_store(&icv_team, omp_get_num_threads());
}

/* `icv` mode (OMP_NUM_THREADS=4,2: the region's nthreads-var is 2, the
 * opener's 4): a task the master creates without changing its ICVs runs
 * at GOMP_parallel_end's closing barrier, on the master (member 1 is busy
 * until the task has run), and must see the region's ICVs there. */
static atomic_int barrier_task_saw, barrier_task_ran;

static void barrier_task_body(void *data)
{
    (void)data;
    if (omp_get_thread_num() == 0) {
#pragma omp task
        {
            atomic_store(&barrier_task_saw, omp_get_max_threads());
            atomic_store(&barrier_task_ran, 1);
        }
        return;
    }
    /* Member 1 waits for the task (10 s at most) so that it cannot take it. */
    for (int i = 0; i < 10000 && !atomic_load(&barrier_task_ran); i++)
        test_sleep_ms(1);
}

static int icv_at_barrier(void)
{
    EXPECT(omp_get_max_threads() == 4, "OMP_NUM_THREADS=4,2 expected: max threads %d",
           omp_get_max_threads());
    GOMP_parallel_start(barrier_task_body, NULL, 2);
    barrier_task_body(NULL);
    GOMP_parallel_end();
    EXPECT(atomic_load(&barrier_task_ran) == 1, "the task did not run");
    EXPECT(atomic_load(&barrier_task_saw) == 2,
           "a task run at the closing barrier saw nthreads-var %d, the region's is 2",
           atomic_load(&barrier_task_saw));
    EXPECT(omp_get_max_threads() == 4, "the opener's ICV restored: %d", omp_get_max_threads());
    return omp_report("test_omp_legacy icv");
}

/* `grow` mode: each member saves its ICVs when it enters a region and
 * must take them back when it leaves, in the split form too; a member
 * that changed its own (and so made a snapshot) must release that. */
static void grow_body(void *data)
{
    (void)data;
    if (omp_get_thread_num() != 0)
        omp_set_num_threads(3);
}

static void split_regions(unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        GOMP_parallel_start(grow_body, NULL, NT);
        grow_body(NULL);
        GOMP_parallel_end();
    }
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
static size_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

static int no_growth(void)
{
    enum { PROBE = 1 << 16, WARM = 200, REGIONS = 2000, PER_REGION_MAX = 16 };
    size_t a = heap_in_use();
    void *probe = malloc(PROBE);
    size_t b = heap_in_use();
    free(probe);
    if (!probe || b < a + PROBE) {
        printf("test_omp_legacy grow: skipped, mallinfo2 does not see this process's heap (a "
               "sanitizer's allocator?)\n");
        return 77;
    }
    split_regions(WARM);
    size_t before = heap_in_use();
    split_regions(REGIONS);
    size_t after = heap_in_use();
    long long grew = (long long)after - (long long)before;
    /* A node kept per member and region would be at least 3 x 64 bytes
     * a region; the bound leaves room for the allocator's own noise. */
    EXPECT(grew <= (long long)REGIONS * PER_REGION_MAX,
           "the heap grew by %lld bytes over %d split regions of %d threads (%.1f a region)", grew,
           REGIONS, NT, (double)grew / REGIONS);
    printf("heap %+lld bytes over %d split regions\n", grew, REGIONS);
    return omp_report("test_omp_legacy grow");
}
#else
static int no_growth(void)
{
    printf("test_omp_legacy grow: skipped, no mallinfo2 here\n");
    return 77;
}
#endif

int main(int argc, char **argv)
{
    require_ultrapool();
    if (argc > 1 && !strcmp(argv[1], "icv"))
        return icv_at_barrier();
    if (argc > 1 && !strcmp(argv[1], "grow"))
        return no_growth();

    GOMP_parallel_start(region, NULL, NT);
    region(NULL);
    GOMP_parallel_end();
    for (int k = 0; k < NT; k++)
        EXPECT(atomic_load(&seen[k]) == 1, "member %d ran %d times", k, atomic_load(&seen[k]));
    EXPECT(atomic_load(&size_seen) == 0 && atomic_load(&level_seen) == 0, "team size / level");
    EXPECT(atomic_load(&tasks_done) == 8 * NT, "%d of %d tasks done at the region's end",
           atomic_load(&tasks_done), 8 * NT);
    EXPECT(omp_get_level() == 0 && omp_get_num_threads() == 1, "back outside");

    omp_set_max_active_levels(2);
    GOMP_parallel_start(nested_outer, NULL, NT);
    nested_outer(NULL);
    GOMP_parallel_end();
    for (int k = 0; k < NT; k++)
        for (int j = 0; j < 2; j++)
            EXPECT(atomic_load(&inner[k][j]) == 1, "nested: %d.%d ran %d times", k, j,
                   atomic_load(&inner[k][j]));

    /* The default team size comes from the opener's ICV. */
    omp_set_num_threads(3);
    GOMP_parallel_start(icv_body, NULL, 0);
    icv_body(NULL);
    GOMP_parallel_end();
    EXPECT(atomic_load(&icv_team) == 3, "team of %d, wanted 3", atomic_load(&icv_team));
    EXPECT(omp_get_max_threads() == 3, "the master's ICV restored: %d", omp_get_max_threads());
    omp_set_num_threads(NT);

    static const struct {
        const char *name;
        next_fn next;
        void (*start)(void (*)(void *), void *, unsigned, long, long, long, long);
        long chunk;
    } kinds[] = {{"static", GOMP_loop_static_next, GOMP_parallel_loop_static_start, 7},
                 {"dynamic", GOMP_loop_dynamic_next, GOMP_parallel_loop_dynamic_start, 5},
                 {"guided", GOMP_loop_guided_next, GOMP_parallel_loop_guided_start, 2},
                 {"runtime", GOMP_loop_runtime_next, NULL, 0}};
    for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        loop_next = kinds[k].next;
        if (kinds[k].start)
            kinds[k].start(loop_body, NULL, NT, 1, N, 3, kinds[k].chunk);
        else
            GOMP_parallel_loop_runtime_start(loop_body, NULL, NT, 1, N, 3);
        loop_body(NULL);
        GOMP_parallel_end();
        check_loop(kinds[k].name);
    }

    GOMP_parallel_sections_start(sections_body, NULL, NT, 5);
    sections_body(NULL);
    GOMP_parallel_end();
    for (int k = 0; k < 5; k++)
        EXPECT(atomic_load(&sec[k]) == 1, "section %d ran %d times", k + 1, atomic_load(&sec[k]));
    return omp_report("test_omp_legacy");
}
