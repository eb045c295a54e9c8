/* The pool beside an OpenMP runtime:
 *
 *  1. OpenMP inside pool tasks (built with OpenMP only): twice as many
 *     tasks as CPUs, each opening an OpenMP region of CPU-bound work, on a
 *     pool with a worker per CPU. With up_config.omp_share (the default)
 *     some region's team is smaller than OpenMP's default, down to the
 *     worker alone; with omp_share 0 (the naive mix) every region gets
 *     OpenMP's default. The threads the kernel runs (state R, sampled
 *     about every millisecond, tests/common/runnable.h) are printed for
 *     both; the bound on them is measured where the machine is quiet
 *     (experiments/interop), since on a loaded machine a thread woken for
 *     microseconds stays runnable for milliseconds.
 *  2. up_omp_lend: a backlog of CPU-bound pool tasks, then a lend whose
 *     function runs a CPU-bound team of one thread per CPU (an OpenMP
 *     region when built with OpenMP, else plain threads). At most one
 *     task per worker starts during the lend (one it took just before the
 *     lend began), at most CPUs + 1 threads use a CPU for a tenth or
 *     more of the window from 1 ms after the last task that ran into the
 *     lend ended to the team's end (their time on a CPU, not their state
 *     letter: beside other load a thread woken for microseconds waits
 *     runnable for milliseconds), and after it every task runs exactly
 *     once.
 *
 *  3. The pool inside OpenMP (built with OpenMP only): every thread of an
 *     OpenMP region submits tasks to one pool through a group of its own
 *     and waits for them; every task runs exactly once. The runnable
 *     threads are printed.
 *
 *  4. Tasks a submitter runs itself (built with OpenMP only): with every
 *     worker busy and the queue full, the queued tasks a waiting submit
 *     runs on its own thread see a team of one, and the submitter's own
 *     setting is back after them.
 *
 * ctest runs the OpenMP build with OMP_WAIT_POLICY=passive: by default
 * OpenMP's idle threads poll for a while after each region, runnable
 * without work, which is a question of phases (docs/interop.md).
 * Exits 77 where thread states cannot be read or with a single CPU. */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <ultrapool/group.h>
#include <ultrapool/omp.h>
#include <ultrapool/pool.h>

#include "check.h"
#include "cpus.h"
#include "pool_helpers.h"
#include "runnable.h"

static unsigned ncpus;

static void spin_ns(uint64_t ns)
{
    uint64_t end = runnable_now_ns() + ns;
    while (runnable_now_ns() < end)
        ;
}

static up_pool *make_pool(int omp_share)
{
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.shards = 1;
    cfg.shard_min_workers = ncpus; /* a worker per CPU from the start */
    cfg.omp_share = omp_share;
    return test_pool_create(&cfg);
}

#ifdef _OPENMP
/* ---- 1. OpenMP regions inside pool tasks ------------------------------ */

static _Atomic int smallest_team, largest_team;
static unsigned regions_done; /* (done_lock) */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;

static void region_task(void *arg)
{
    (void)arg;
#pragma omp parallel
    {
#pragma omp master
        {
            int n = omp_get_num_threads();
            int s = atomic_load(&smallest_team);
            while (n < s && !atomic_compare_exchange_weak(&smallest_team, &s, n))
                ;
            int l = atomic_load(&largest_team);
            while (n > l && !atomic_compare_exchange_weak(&largest_team, &l, n))
                ;
        }
        spin_ns(40000000);
    }
    pthread_mutex_lock(&done_lock);
    regions_done++;
    pthread_cond_signal(&done_cv);
    pthread_mutex_unlock(&done_lock);
}

static int regions_peak(int omp_share, runnable_sampler *rs, int *single)
{
    atomic_store(&smallest_team, 1 << 20);
    atomic_store(&largest_team, 0);
    up_pool *p = make_pool(omp_share);
    up_pool_reserve(p, ncpus);
    struct timespec settle = {0, 20000000};
    nanosleep(&settle, NULL);
    uint64_t from = runnable_now_ns();
    regions_done = 0;
    for (unsigned i = 0; i < 2 * ncpus; i++)
        CHECK_EQ(up_submit(p, region_task, NULL), UP_OK);
    /* Waited for asleep: a thread waiting in up_pool_stop_and_wait runs
     * queued tasks itself, a runner beside the workers. */
    pthread_mutex_lock(&done_lock);
    while (regions_done < 2 * ncpus)
        pthread_cond_wait(&done_cv, &done_lock);
    pthread_mutex_unlock(&done_lock);
    /* Up to the last region's end: OpenMP's idle threads spin a while
     * after it, which is the next test's concern (phases), not this one. */
    uint64_t to = runnable_now_ns();
    unsigned n;
    int peak = runnable_peak(rs, from + 2000000, to - 2000000, 1, &n);
    *single = runnable_peak(rs, from + 2000000, to - 2000000, 0, NULL);
    CHECK_GT(n, 10);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    return peak;
}

/* ---- 4. Tasks a submitter runs itself ---------------------------------- */

/* With every worker busy and a full queue, a waiting submit runs queued
 * tasks on the submitter's thread: those get the share too (here one
 * thread, as no CPU is free), and the submitter's own setting comes back
 * after each. */
static _Atomic int workers_hold = 1;
static _Atomic unsigned holding;
static pthread_t submitter_thread;
static _Atomic int on_submitter, largest_on_submitter, probes_ran;

static void hold_worker(void *arg)
{
    (void)arg;
    if (pthread_equal(pthread_self(), submitter_thread))
        return; /* never on the thread that lets them go */
    atomic_fetch_add(&holding, 1);
    while (atomic_load(&workers_hold))
        spin_ns(100000);
}

static void team_probe(void *arg)
{
    (void)arg;
    atomic_fetch_add(&probes_ran, 1);
    if (!pthread_equal(pthread_self(), submitter_thread))
        return;
    atomic_fetch_add(&on_submitter, 1);
    int n = omp_get_max_threads();
    int l = atomic_load(&largest_on_submitter);
    while (n > l && !atomic_compare_exchange_weak(&largest_on_submitter, &l, n))
        ;
}

static void submitter_runs(void)
{
    up_config cfg;
    test_fixed_config(&cfg, ncpus); /* busy workers stay the only ones */
    cfg.queue_capacity = 2;
    cfg.submit_help = 1; /* a full queue: run queued tasks here, then queue */
    up_pool *p = test_pool_create(&cfg);
    submitter_thread = pthread_self();
    int mine = omp_get_max_threads();
    /* One at a time, each taken by a worker before the next is queued, so
     * that none waits in the small queue for this thread to run it. */
    for (unsigned i = 0; i < ncpus; i++) {
        CHECK_EQ(up_submit_wait(p, hold_worker, NULL), UP_OK);
        WAIT_UNTIL(atomic_load(&holding) == i + 1, 10000);
        CHECK_EQ(atomic_load(&holding), i + 1);
    }
    /* Every worker holds one; what follows queues behind them. */
    for (int i = 0; i < 200; i++)
        CHECK_EQ(up_submit_wait(p, team_probe, NULL), UP_OK);
    atomic_store(&workers_hold, 0);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("tasks run by the submitter: %d, largest team they saw %d (OpenMP's default %d)\n",
           atomic_load(&on_submitter), atomic_load(&largest_on_submitter), mine);
    CHECK_EQ(atomic_load(&probes_ran), 200); /* every accepted task ran once */
    CHECK_GT(atomic_load(&on_submitter), 0);
    CHECK_EQ(atomic_load(&largest_on_submitter), 1);
    CHECK_EQ(omp_get_max_threads(), mine); /* the submitter's own setting is back */
}

/* ---- 3. The pool inside OpenMP ---------------------------------------- */

#define PER_THREAD 200
static _Atomic unsigned inner_runs[64 * PER_THREAD];

static int counted_task(void *arg)
{
    atomic_fetch_add(&inner_runs[(uintptr_t)arg], 1);
    spin_ns(200000);
    return 0;
}

/* Every thread of an OpenMP region submits to one pool through a group of
 * its own and waits for it: each task runs exactly once. The runnable
 * threads are printed: the waiting OpenMP threads run queued tasks beside
 * the workers. */
static void pool_inside_openmp(runnable_sampler *rs)
{
    up_pool *p = make_pool(1);
    unsigned team = ncpus < 64 ? ncpus : 64;
    uint64_t from = runnable_now_ns();
#pragma omp parallel num_threads((int)team)
    {
        unsigned me = (unsigned)omp_get_thread_num();
        up_group *g = NULL;
        CHECK_EQ(up_group_create(&g, p, 0), UP_OK);
        for (unsigned i = 0; i < PER_THREAD; i++)
            CHECK_EQ(up_group_go(g, counted_task, (void *)(uintptr_t)(me * PER_THREAD + i)), UP_OK);
        CHECK_EQ(up_group_wait(g), 0);
        CHECK_EQ(up_group_destroy(g), UP_OK);
    }
    uint64_t to = runnable_now_ns();
    for (unsigned i = 0; i < team * PER_THREAD; i++)
        CHECK_EQ(atomic_load(&inner_runs[i]), 1u);
    printf("pool inside OpenMP: %u threads x %u tasks each ran once, peak runnable %d (CPUs %u)\n",
           team, PER_THREAD, runnable_peak(rs, from + 1000000, to, 1, NULL), ncpus);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}
#endif

/* ---- 2. up_omp_lend --------------------------------------------------- */

#define NTASKS 300
static uint64_t started_at[NTASKS], ended_at[NTASKS];
static _Atomic unsigned runs[NTASKS];
static _Atomic unsigned tasks_started, tasks_ended; /* for the lend's master */

static void cpu_task(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    started_at[i] = runnable_now_ns();
    atomic_fetch_add(&tasks_started, 1);
    atomic_fetch_add(&runs[i], 1);
    spin_ns(1000000);
    ended_at[i] = runnable_now_ns();
    atomic_fetch_add(&tasks_ended, 1);
}

/* The lend's window: from 1 ms after the last task that ran into it ended
 * (quiet) to the end of the team's spin, with every thread's CPU time at
 * both ends (cpu_ok: both read). */
typedef struct lend_span {
    uint64_t begin, end, quiet, quiet_end;
    runnable_cpu at_quiet, at_end;
    int cpu_ok;
} lend_span;

/* The master's part of the lend: waits for the tasks that ran into the
 * lend to end, then takes the window's first snapshot, spins to the
 * team's 60 ms, takes the second. */
static void master_part(lend_span *span)
{
    while (atomic_load(&tasks_ended) != atomic_load(&tasks_started) &&
           runnable_now_ns() - span->begin < 50000000)
        ;
    spin_ns(1000000);
    span->quiet = runnable_now_ns();
    span->cpu_ok = runnable_cpu_snapshot(&span->at_quiet);
    uint64_t left = span->begin + 60000000;
    uint64_t now = runnable_now_ns();
    spin_ns(left > now ? left - now : 0);
    span->quiet_end = runnable_now_ns();
    span->cpu_ok = span->cpu_ok && runnable_cpu_snapshot(&span->at_end);
}

#ifndef _OPENMP
static void *team_thread(void *arg)
{
    (void)arg;
    spin_ns(60000000);
    return NULL;
}
#endif

static void lent_region(void *arg)
{
    lend_span *span = arg;
    span->begin = runnable_now_ns();
#ifdef _OPENMP
#pragma omp parallel num_threads((int)ncpus)
    {
        if (omp_get_thread_num() == 0)
            master_part(span);
        else
            spin_ns(60000000);
    }
#else
    pthread_t th[64];
    unsigned n = ncpus < 64 ? ncpus : 64;
    for (unsigned i = 1; i < n; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, team_thread, NULL), 0);
    master_part(span);
    for (unsigned i = 1; i < n; i++)
        pthread_join(th[i], NULL);
#endif
    span->end = runnable_now_ns();
}

static void lend(runnable_sampler *rs)
{
    up_pool *p = make_pool(1);
    up_pool_reserve(p, ncpus);
    for (unsigned i = 0; i < NTASKS; i++)
        CHECK_EQ(up_submit_wait(p, cpu_task, (void *)(uintptr_t)i), UP_OK);
    struct timespec busy = {0, 10000000}; /* the workers are in the backlog */
    nanosleep(&busy, NULL);
    static lend_span span; /* two snapshots: too big for the stack */
    memset(&span, 0, sizeof span);
    CHECK_EQ(up_omp_lend(p, lent_region, &span), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    /* The lend does not stop running tasks: the window starts 1 ms after
     * the last one that ran into it ended (on a loaded machine a 1 ms task
     * can take far longer). */
    unsigned late = 0, ran = 0;
    uint64_t quiet = span.begin + 1000000;
    for (unsigned i = 0; i < NTASKS; i++) {
        CHECK_EQ(atomic_load(&runs[i]), 1u);
        ran++;
        if (started_at[i] >= span.begin && started_at[i] < span.end)
            late++;
        if (started_at[i] < span.end && ended_at[i] + 1000000 > quiet)
            quiet = ended_at[i] + 1000000;
    }
    unsigned n = 0;
    int peak = runnable_peak(rs, quiet, span.end, 1, &n);
    int single = runnable_peak(rs, quiet, span.end, 0, NULL);
    /* The bound is on threads that use a CPU: a tenth of the window or
     * more. The state samples are printed, not checked: beside other
     * load a thread woken for microseconds waits in the run queue,
     * runnable, for milliseconds (tests/common/runnable.h). */
    uint64_t window = span.quiet_end - span.quiet;
    unsigned users =
        span.cpu_ok ? runnable_cpu_users(rs, &span.at_quiet, &span.at_end, window / 10) : 0;
    printf("lend: %u tasks ran, %u started during the lend, peak runnable %d (single sample %d) "
           "over %u samples; threads that used a CPU for a tenth of the %.1f ms window: %u%s; "
           "CPUs %u\n",
           ran, late, peak, single, n, (double)window / 1e6, users,
           span.cpu_ok ? "" : " (not readable)", ncpus);
    /* A worker that looked just before the lend began starts one more. */
    CHECK_LE(late, ncpus);
    if (span.cpu_ok && window >= 10000000)
        CHECK_LE(users, ncpus + 1);
    CHECK_EQ(up_omp_lend(NULL, lent_region, &span), UP_EINVAL);
    CHECK_EQ(up_omp_lend(p, NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

int main(void)
{
    ncpus = test_cpus();
    if (ncpus < 2) {
        printf("one CPU: no room to share\n");
        return 77;
    }
    runnable_sampler rs;
    if (!runnable_start(&rs)) {
        printf("thread states are not visible here\n");
        return 77;
    }
#ifdef _OPENMP
    int naive_single, shared_single;
    int naive = regions_peak(0, &rs, &naive_single);
    int naive_team = atomic_load(&largest_team);
    int shared = regions_peak(1, &rs, &shared_single);
    int small = atomic_load(&smallest_team);
    printf("OpenMP in tasks: peak runnable %d shared (single sample %d, smallest team %d), %d "
           "naive (single sample %d, teams of %d); CPUs %u\n",
           shared, shared_single, small, naive, naive_single, naive_team, ncpus);
    CHECK_EQ(naive_team, omp_get_max_threads()); /* the naive mix: OpenMP's default */
    CHECK_LT(small, omp_get_max_threads());
    pool_inside_openmp(&rs);
    submitter_runs();
#endif
    lend(&rs);
    runnable_stop(&rs);
    return 0;
}
