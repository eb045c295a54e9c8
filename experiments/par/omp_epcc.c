/* EPCC-style OpenMP overheads with pragmas: the rows of syncbench,
 * schedbench and taskbench, written here (not EPCC's code, its method), as
 * one plain gcc -fopenmp program, so that one executable runs on whichever
 * libgomp.so.1 the loader finds: GCC's libgomp, libomp's GOMP layer or
 * ultrapool's (scripts/bench --omp, experiments/par/omp_run.py).
 *
 * It lives in experiments/par beside par_child_gomp because both are built
 * where this tree's compiler has OpenMP (the gomp variant's condition);
 * experiments/omp is the stand-alone per-compiler project of the cross
 * benchmark's OpenMP peer. One file for the three groups: they share the
 * delay, the clock, the options and the output, and one binary keeps the
 * runner's legs to one program per runtime.
 *
 * Method: a row's reference runs innerreps delays on one thread; its test
 * runs innerreps constructs with one delay per thread inside (the same
 * work per thread). Reference and test alternate `outer` times; the
 * overhead per construct is (median test - median reference) / innerreps.
 * Schedule rows run innerreps loops of iters x threads iterations, one
 * delay each (reference: innerreps x iters delays); ATOMIC's reference is
 * innerreps plain additions.
 *
 * usage: omp_epcc [--threads T] [--innerreps R] [--sched-innerreps R]
 *            [--iters I] [--chunks LIST] [--outer O] [--delay ITERS]
 *            [--rows LIST] [--seconds S] [--list]
 * --rows: row names or groups (sync, sched, task), comma separated.
 * --seconds: a budget; rows not started when it has run out are left out
 * (named on stderr).
 * Prints one line per row:
 *   omp_epcc runtime=R group=G row=NAME threads=T innerreps=R delay_ns=D
 *     ref_ns=.. test_ns=.. overhead_ns=.. min_ns=.. max_ns=..
 * (min/max: the lowest and highest of the outer repetitions' overheads),
 * then one line of the whole run's PAPI hardware counters (all threads):
 *   omp_epcc counters runtime=R PAPI_TOT_CYC=N|missing ... note=TEXT
 * Exit status: 0, 1 when a result failed its check, 2 on bad usage. */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "counters.h"

enum { MAX_OUTER = 1000, MAX_CHUNKS = 16 };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The delay: a dependent chain the compiler cannot drop (its result goes
 * to a per-thread sink). */
static _Thread_local uint64_t sink;
static unsigned delay_iters = 50;
static void delay(void)
{
    uint64_t x = sink | 1;
    for (unsigned i = 0; i < delay_iters; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    sink = x;
}

static const char *loaded_runtime(void)
{
    if (dlsym(RTLD_DEFAULT, "up_gomp_runtime"))
        return "ultrapool";
    if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call"))
        return "libomp";
    return "libgomp";
}

/* One row: its group, its name, what it runs. `reps` is innerreps; `arg`
 * a schedule's chunk (0: none). */
typedef enum { REF_DELAY, REF_SCHED, REF_ADD } ref_kind;
typedef struct row {
    const char *group;
    char name[32];
    ref_kind ref;
    void (*fn)(int threads, unsigned reps, int arg);
    int arg;
} row;

static int failed;           /* a check that did not hold */
static unsigned iters = 128; /* schedule rows: iterations per thread */

static void reference(ref_kind k, unsigned reps)
{
    static volatile double sum; /* a plain add the compiler must keep */
    unsigned n = k == REF_SCHED ? reps * iters : reps;
    for (unsigned r = 0; r < n; r++) {
        if (k == REF_ADD)
            sum += 1;
        else
            delay();
    }
}

/* syncbench */
static void t_parallel(int threads, unsigned reps, int arg)
{
    (void)arg;
    for (unsigned r = 0; r < reps; r++) {
#pragma omp parallel num_threads(threads)
        delay();
    }
}

static void t_for(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
#pragma omp for schedule(static)
        for (int j = 0; j < threads; j++)
            delay();
    }
}

static void t_parallel_for(int threads, unsigned reps, int arg)
{
    (void)arg;
    for (unsigned r = 0; r < reps; r++) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int j = 0; j < threads; j++)
            delay();
    }
}

static void t_barrier(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
        delay();
#pragma omp barrier
    }
}

static void t_single(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
#pragma omp single
        delay();
    }
}

static void t_critical(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps / (unsigned)threads; r++) {
#pragma omp critical
        delay();
    }
}

static omp_lock_t lock;
static void t_lock(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps / (unsigned)threads; r++) {
        omp_set_lock(&lock);
        delay();
        omp_unset_lock(&lock);
    }
}

static void t_atomic(int threads, unsigned reps, int arg)
{
    (void)arg;
    double sum = 0;
    unsigned each = reps / (unsigned)threads;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < each; r++) {
#pragma omp atomic
        sum += 1;
    }
    if (sum != (double)each * threads)
        failed = 1;
}

static void t_reduction(int threads, unsigned reps, int arg)
{
    (void)arg;
    for (unsigned r = 0; r < reps; r++) {
        int n = 0;
#pragma omp parallel num_threads(threads) reduction(+ : n)
        {
            delay();
            n += 1;
        }
        if (n != threads)
            failed = 1;
    }
}

/* schedbench: the schedule is the runtime's, set per row, so that one
 * loop serves every kind and chunk (schedule(runtime) reads it once per
 * loop, as a compiled-in schedule's loop start does). */
static void sched_loop(int threads, unsigned reps)
{
    int n = (int)iters * threads;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
#pragma omp for schedule(runtime)
        for (int j = 0; j < n; j++)
            delay();
    }
}
static void t_static(int threads, unsigned reps, int chunk)
{
    omp_set_schedule(omp_sched_static, chunk);
    sched_loop(threads, reps);
}
static void t_dynamic(int threads, unsigned reps, int chunk)
{
    omp_set_schedule(omp_sched_dynamic, chunk);
    sched_loop(threads, reps);
}
static void t_guided(int threads, unsigned reps, int chunk)
{
    omp_set_schedule(omp_sched_guided, chunk);
    sched_loop(threads, reps);
}

/* taskbench */
static void t_parallel_task(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
#pragma omp task
        delay();
    }
}

static void t_master_task(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
#pragma omp master
    for (unsigned r = 0; r < reps * (unsigned)threads; r++) {
#pragma omp task
        delay();
    }
}

static void t_task_wait(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
#pragma omp task
        delay();
#pragma omp taskwait
    }
}

static void t_task_barrier(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps; r++) {
#pragma omp task
        delay();
#pragma omp barrier
    }
}

static void t_nested_task(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    for (unsigned r = 0; r < reps / (unsigned)threads; r++) {
#pragma omp task
        {
            for (int i = 0; i < threads; i++) {
#pragma omp task
                delay();
            }
#pragma omp taskwait
        }
    }
}

static void t_taskloop(int threads, unsigned reps, int arg)
{
    (void)arg;
    int n = (int)reps * threads;
#pragma omp parallel num_threads(threads)
#pragma omp single
#pragma omp taskloop grainsize(1)
    for (int j = 0; j < n; j++)
        delay();
}

/* Each thread a chain of reps tasks ordered by depend on its own
 * variable: every link waits for the one before. */
static void t_depend_chain(int threads, unsigned reps, int arg)
{
    (void)arg;
#pragma omp parallel num_threads(threads)
    {
        int link = 0;
        for (unsigned r = 0; r < reps; r++) {
#pragma omp task depend(inout : link) shared(link)
            {
                delay();
                link++;
            }
        }
#pragma omp taskwait
        if (link != (int)reps)
            failed = 1;
    }
}

static row rows[64];
static int nrows;

static void add(const char *group, const char *name, ref_kind ref, void (*fn)(int, unsigned, int),
                int arg)
{
    row *r = &rows[nrows++];
    r->group = group;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->ref = ref;
    r->fn = fn;
    r->arg = arg;
}

static void make_rows(const int *chunks, int nchunks)
{
    add("sync", "PARALLEL", REF_DELAY, t_parallel, 0);
    add("sync", "FOR", REF_DELAY, t_for, 0);
    add("sync", "PARALLEL_FOR", REF_DELAY, t_parallel_for, 0);
    add("sync", "BARRIER", REF_DELAY, t_barrier, 0);
    add("sync", "SINGLE", REF_DELAY, t_single, 0);
    add("sync", "CRITICAL", REF_DELAY, t_critical, 0);
    add("sync", "LOCK_UNLOCK", REF_DELAY, t_lock, 0);
    add("sync", "ATOMIC", REF_ADD, t_atomic, 0);
    add("sync", "REDUCTION", REF_DELAY, t_reduction, 0);
    add("sched", "STATIC", REF_SCHED, t_static, 0);
    static const struct {
        const char *name;
        void (*fn)(int, unsigned, int);
    } kinds[] = {{"STATIC", t_static}, {"DYNAMIC", t_dynamic}, {"GUIDED", t_guided}};
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < nchunks; c++) {
            char name[32];
            snprintf(name, sizeof name, "%s_%d", kinds[k].name, chunks[c]);
            add("sched", name, REF_SCHED, kinds[k].fn, chunks[c]);
        }
    add("task", "PARALLEL_TASK", REF_DELAY, t_parallel_task, 0);
    add("task", "MASTER_TASK", REF_DELAY, t_master_task, 0);
    add("task", "TASK_WAIT", REF_DELAY, t_task_wait, 0);
    add("task", "TASK_BARRIER", REF_DELAY, t_task_barrier, 0);
    add("task", "NESTED_TASK", REF_DELAY, t_nested_task, 0);
    add("task", "TASKLOOP", REF_DELAY, t_taskloop, 0);
    add("task", "DEPEND_CHAIN", REF_DELAY, t_depend_chain, 0);
}

/* Is row r asked for by the comma list (names or groups)? */
static int wanted(const row *r, const char *list)
{
    if (!list)
        return 1;
    size_t ln = strlen(r->name), lg = strlen(r->group);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if ((n == ln && strncmp(p, r->name, n) == 0) || (n == lg && strncmp(p, r->group, n) == 0))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Every name of the list is a row or a group. */
static const char *unknown_name(const char *list)
{
    static char bad[64];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        int ok = 0;
        for (int i = 0; i < nrows && !ok; i++)
            ok = (strlen(rows[i].name) == n && strncmp(p, rows[i].name, n) == 0) ||
                 (strlen(rows[i].group) == n && strncmp(p, rows[i].group, n) == 0);
        if (!ok) {
            snprintf(bad, sizeof bad, "%.*s", (int)(n < 60 ? n : 60), p);
            return bad;
        }
        p += n + (p[n] == ',');
    }
    return NULL;
}

static int usage(const char *msg)
{
    fprintf(stderr,
            "omp_epcc: %s\nusage: omp_epcc [--threads T] [--innerreps R] [--sched-innerreps R] "
            "[--iters I] [--chunks LIST] [--outer O] [--delay ITERS] [--rows LIST] "
            "[--seconds S] [--list]\n",
            msg);
    return 2;
}

static int parse_chunks(const char *s, int *chunks)
{
    int n = 0;
    for (const char *p = s; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1 << 20 || n == MAX_CHUNKS || (*end && *end != ','))
            return -1;
        chunks[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    int threads = 2, outer = 10, nchunks = 8, list = 0;
    int chunks[MAX_CHUNKS] = {1, 2, 4, 8, 16, 32, 64, 128};
    unsigned innerreps = 1000, sched_innerreps = 100;
    double seconds = 0;
    const char *want = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--list") == 0) {
            list = 1;
            continue;
        }
        if (i + 1 == argc)
            return usage("an option without its value");
        const char *s = argv[++i];
        char *end;
        double v = strtod(s, &end);
        int num = end != s && *end == '\0' && isfinite(v);
        if (strcmp(a, "--rows") == 0)
            want = s;
        else if (strcmp(a, "--chunks") == 0) {
            if ((nchunks = parse_chunks(s, chunks)) < 1)
                return usage("--chunks: a comma list of 1 to 16 chunk sizes >= 1");
        } else if (!num || v < 0 || (strcmp(a, "--seconds") && v != (double)(long)v))
            return usage("a value that is not a whole number >= 0");
        else if (strcmp(a, "--threads") == 0 && v >= 1 && v <= 1024)
            threads = (int)v;
        else if (strcmp(a, "--innerreps") == 0 && v >= 1 && v <= 1e8)
            innerreps = (unsigned)v;
        else if (strcmp(a, "--sched-innerreps") == 0 && v >= 1 && v <= 1e8)
            sched_innerreps = (unsigned)v;
        else if (strcmp(a, "--iters") == 0 && v >= 1 && v <= 1e6)
            iters = (unsigned)v;
        else if (strcmp(a, "--outer") == 0 && v >= 1 && v <= MAX_OUTER)
            outer = (int)v;
        else if (strcmp(a, "--delay") == 0 && v <= 1e8)
            delay_iters = (unsigned)v;
        else if (strcmp(a, "--seconds") == 0)
            seconds = v;
        else
            return usage("unknown option or value out of range");
    }
    make_rows(chunks, nchunks);
    if (list) {
        for (int i = 0; i < nrows; i++)
            printf("%s %s\n", rows[i].group, rows[i].name);
        return 0;
    }
    const char *bad = want ? unknown_name(want) : NULL;
    if (bad) {
        fprintf(stderr, "omp_epcc: unknown row or group '%s' (--list names them)\n", bad);
        return 2;
    }
    /* Counters from before the first region, so that every thread of
     * the team inherits them. */
    counters_init();
    counters_hw_start();
    omp_set_dynamic(0);
    omp_init_lock(&lock);
    const char *rt = loaded_runtime();
    /* The delay's length in ns. */
    uint64_t t0 = now_ns(), start = t0;
    for (int i = 0; i < 1000; i++)
        delay();
    double delay_ns = (double)(now_ns() - t0) / 1000;
    static double ref[MAX_OUTER], tst[MAX_OUTER], ovh[MAX_OUTER];
    for (int i = 0; i < nrows; i++) {
        const row *w = &rows[i];
        if (!wanted(w, want))
            continue;
        if (seconds > 0 && (double)(now_ns() - start) / 1e9 > seconds) {
            fprintf(stderr, "omp_epcc: row %s left out (the %.1f s budget has run out)\n", w->name,
                    seconds);
            continue;
        }
        unsigned reps = w->ref == REF_SCHED ? sched_innerreps : innerreps;
        w->fn(threads, reps / 10 + 1, w->arg); /* warm-up: teams made, pages touched */
        for (int r = 0; r < outer; r++) {
            uint64_t a = now_ns();
            reference(w->ref, reps);
            uint64_t b = now_ns();
            w->fn(threads, reps, w->arg);
            uint64_t c = now_ns();
            ref[r] = (double)(b - a);
            tst[r] = (double)(c - b);
            ovh[r] = (tst[r] - ref[r]) / reps;
        }
        double mref = bench_median(ref, (size_t)outer), mtst = bench_median(tst, (size_t)outer);
        bench_summary spread = bench_summarize(ovh, (size_t)outer);
        printf("omp_epcc runtime=%s group=%s row=%s threads=%d innerreps=%u delay_ns=%.1f "
               "ref_ns=%.0f test_ns=%.0f overhead_ns=%.1f min_ns=%.1f max_ns=%.1f\n",
               rt, w->group, w->name, threads, reps, delay_ns, mref, mtst, (mtst - mref) / reps,
               spread.min, spread.max);
        fflush(stdout);
    }
    omp_destroy_lock(&lock);
    counter_values hw;
    counters_hw_stop(&hw);
    printf("omp_epcc counters runtime=%s", rt);
    for (int i = 0; i < COUNTERS_HW; i++) {
        if (hw.have[i])
            printf(" %s=%lld", counters_hw_names[i], hw.v[i]);
        else
            printf(" %s=missing", counters_hw_names[i]);
    }
    printf(" note=%s\n", counters_hw_note());
    if (failed)
        fprintf(stderr, "omp_epcc: a row's result failed its check (atomic, reduction or "
                        "depend count)\n");
    return failed;
}
