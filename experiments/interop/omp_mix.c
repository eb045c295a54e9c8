/* The pool and OpenMP in one process (docs/interop.md), built with this
 * tree's OpenMP. Three experiments, each case run in every round in a
 * random order, medians over the rounds:
 *
 *   mix    J jobs, each an OpenMP-parallel kernel (a parallel for with a
 *          reduction, about U us at one thread):
 *            openmp-alone  the jobs one after another, each on the whole
 *                          team (OpenMP alone);
 *            naive         a pool task per job, UP_OMP_SHARE=0: every
 *                          job's region asks for one thread per CPU;
 *            shared        the same with UP_OMP_SHARE=1 (the default);
 *            lend          the pool lends its CPUs (up_omp_lend) to the
 *                          OpenMP alone schedule while a backlog of pool
 *                          tasks waits.
 *          For each: the time, and the threads the kernel ran (state R,
 *          sampled about every millisecond; the peak held over two samples
 *          in a row, and the highest single sample); the time's and the
 *          held peak's lowest and highest round too.
 *   phases P pairs of phases of about U us of work each: an OpenMP region
 *          (a parallel for), then pool tasks (one per CPU); efficiency is
 *          the time of one runtime doing both kinds (OpenMP alone, the
 *          pool phase as a parallel for) over the time of the alternation.
 *          The alternation runs as it is, and with each run-time remedy
 *          the OpenMP runtime offers for its idle threads' polling:
 *          omp_pause_resource_all(omp_pause_soft) after every OpenMP
 *          phase, and (libomp, found with dlsym) kmp_set_blocktime(0)
 *          before the first.
 *   burn   the CPU time the process spends in the 1 ms .. 21 ms after the
 *          last phase (the sampler's own left out), over 20 ms x CPUs:
 *          what idle threads burn.
 *
 * usage: omp_mix [--rounds R] [--jobs J] [--job-us U] [--phases P]
 *                [--phase-us U] [--csv FILE]
 * Each case starts 300 ms after the previous one ended, once the idle
 * threads it left behind stopped polling.
 * Prints a markdown table per experiment on stdout. */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <ultrapool/group.h>
#include <ultrapool/omp.h>
#include <ultrapool/pool.h>

#include "bench_stats.h"
#include "runnable.h"

static unsigned ncpus;
static long iters_per_us = 1;

/* The kernel: n iterations of arithmetic the compiler cannot drop. */
static double kernel_serial(long lo, long hi)
{
    double acc = 0;
    for (long i = lo; i < hi; i++)
        acc += sqrt((double)i * 1.0001);
    return acc;
}

static double kernel_omp(long n)
{
    double acc = 0;
#pragma omp parallel for reduction(+ : acc) schedule(static)
    for (long i = 0; i < n; i++)
        acc += sqrt((double)i * 1.0001);
    return acc;
}

static volatile double sink;

static void calibrate(void)
{
    long n = 1000000;
    uint64_t t0 = runnable_now_ns();
    sink = kernel_serial(0, n);
    uint64_t ns = runnable_now_ns() - t0;
    iters_per_us = (long)(n * 1000.0 / (double)(ns ? ns : 1));
    if (iters_per_us < 1)
        iters_per_us = 1;
}

static up_pool *make_pool(int share)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = ncpus;
    cfg.omp_share = share;
    up_pool *p = NULL;
    if (up_pool_create(&p, &cfg) != UP_OK) {
        fprintf(stderr, "omp_mix: %s\n", up_last_error());
        exit(1);
    }
    up_pool_reserve(p, ncpus);
    return p;
}

/* ---- mix ---------------------------------------------------------------- */

static long job_iters;

static int job_task(void *arg)
{
    (void)arg;
    sink = kernel_omp(job_iters);
    return 0;
}

typedef struct outcome {
    double ms;
    int peak, single;
} outcome;

static int jobs;

static void run_alone(void *arg)
{
    (void)arg;
    for (int j = 0; j < jobs; j++)
        sink = kernel_omp(job_iters);
}

static void backlog_task(void *arg)
{
    (void)arg;
    sink = kernel_serial(0, iters_per_us * 500);
}

static outcome mix_case(const char *name, runnable_sampler *rs)
{
    outcome o;
    uint64_t t0 = runnable_now_ns(), t1;
    if (!strcmp(name, "openmp-alone")) {
        run_alone(NULL);
        t1 = runnable_now_ns();
    } else if (!strcmp(name, "lend")) {
        up_pool *p = make_pool(1);
        for (int i = 0; i < 4 * (int)ncpus; i++)
            up_submit_wait(p, backlog_task, NULL);
        t0 = runnable_now_ns();
        up_omp_lend(p, run_alone, NULL);
        t1 = runnable_now_ns();
        up_pool_stop_and_wait(p);
        up_pool_destroy(p);
    } else {
        up_pool *p = make_pool(!strcmp(name, "shared"));
        up_group *g = NULL;
        up_group_create(&g, p, 0);
        t0 = runnable_now_ns();
        for (int j = 0; j < jobs; j++)
            up_group_go(g, job_task, NULL);
        up_group_wait(g);
        t1 = runnable_now_ns();
        up_group_destroy(g);
        up_pool_stop_and_wait(p);
        up_pool_destroy(p);
    }
    o.ms = (double)(t1 - t0) / 1e6;
    o.peak = runnable_peak(rs, t0 + 1000000, t1, 1, NULL);
    o.single = runnable_peak(rs, t0 + 1000000, t1, 0, NULL);
    return o;
}

/* ---- phases and burn ---------------------------------------------------- */

static long phase_iters;

static int phase_task(void *arg)
{
    (void)arg;
    sink = kernel_serial(0, phase_iters / (long)ncpus);
    return 0;
}

static double process_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
           (double)ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

typedef struct phase_outcome {
    double ms, burn; /* burn: share of the CPUs used in the 20 ms after */
} phase_outcome;

/* The phase cases: OpenMP doing both kinds, then the alternation as it
 * is and with each remedy. */
enum { PH_ONE, PH_ALT, PH_ALT_PAUSE, PH_ALT_BLOCKTIME, NPH };
static const char *phase_names[NPH] = {
    "one runtime (OpenMP both phases)", "alternating OpenMP and pool",
    "alternating, omp_pause_resource_all(soft) after each OpenMP phase",
    "alternating, kmp_set_blocktime(0) before the first"};

/* libomp's blocktime calls, absent from libgomp: looked up, not linked. */
typedef void (*set_blocktime_fn)(int);
typedef int (*get_blocktime_fn)(void);
static set_blocktime_fn set_blocktime;
static get_blocktime_fn get_blocktime;

static void find_blocktime(void)
{
    void *set = dlsym(RTLD_DEFAULT, "kmp_set_blocktime");
    void *get = dlsym(RTLD_DEFAULT, "kmp_get_blocktime");
    if (set && get) {
        memcpy(&set_blocktime, &set, sizeof set);
        memcpy(&get_blocktime, &get, sizeof get);
    }
}

static phase_outcome phases_case(int kind, int phases, const runnable_sampler *rs)
{
    phase_outcome o;
    up_pool *p = kind != PH_ONE ? make_pool(1) : NULL;
    up_group *g = NULL;
    if (p)
        up_group_create(&g, p, 0);
    /* Per thread in libomp: the teams this thread opens from now on. */
    int blocktime_before = 0;
    if (kind == PH_ALT_BLOCKTIME) {
        blocktime_before = get_blocktime();
        set_blocktime(0);
    }
    uint64_t t0 = runnable_now_ns();
    for (int k = 0; k < phases; k++) {
        sink = kernel_omp(phase_iters);
        if (kind == PH_ALT_PAUSE)
            omp_pause_resource_all(omp_pause_soft);
        if (p) {
            for (unsigned i = 0; i < ncpus; i++)
                up_group_go(g, phase_task, NULL);
            up_group_wait(g);
        } else {
            sink = kernel_omp(phase_iters);
        }
    }
    uint64_t t1 = runnable_now_ns();
    struct timespec one = {0, 1000000}, twenty = {0, 20000000};
    nanosleep(&one, NULL);
    /* Without the sampler's own time: it is no idle thread of either
     * runtime. */
    double s0 = runnable_self_cpu_ns(rs) / 1e6, c0 = process_cpu_ms();
    nanosleep(&twenty, NULL);
    double c1 = process_cpu_ms(), s1 = runnable_self_cpu_ns(rs) / 1e6;
    c1 -= s1 - s0;
    o.ms = (double)(t1 - t0) / 1e6;
    o.burn = (c1 - c0) / (20.0 * ncpus);
    if (kind == PH_ALT_BLOCKTIME)
        set_blocktime(blocktime_before);
    if (p) {
        up_group_destroy(g);
        up_pool_stop_and_wait(p);
        up_pool_destroy(p);
    }
    return o;
}

/* ---- driver ------------------------------------------------------------- */

#define MAXR 64
static const char *mix_names[] = {"openmp-alone", "naive", "shared", "lend"};
#define NMIX 4

int main(int argc, char **argv)
{
    int rounds = 5, phases = 2000;
    double job_us = 4000, phase_us = 100;
    const char *csv = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "omp_mix: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--rounds"))
            rounds = atoi(v);
        else if (!strcmp(a, "--jobs"))
            jobs = atoi(v);
        else if (!strcmp(a, "--job-us"))
            job_us = atof(v);
        else if (!strcmp(a, "--phases"))
            phases = atoi(v);
        else if (!strcmp(a, "--phase-us"))
            phase_us = atof(v);
        else if (!strcmp(a, "--csv"))
            csv = v;
        else {
            fprintf(stderr, "omp_mix: unknown option %s\n", a);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAXR || phases < 1 || job_us <= 0 || phase_us <= 0) {
        fprintf(stderr, "omp_mix: rounds 1..%d, phases >= 1, job and phase times > 0\n", MAXR);
        return 2;
    }
    cpu_set_t set;
    ncpus = sched_getaffinity(0, sizeof set, &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
    if (jobs == 0)
        jobs = 8 * (int)ncpus;
    calibrate();
    job_iters = (long)(job_us * (double)iters_per_us);
    phase_iters = (long)(phase_us * (double)iters_per_us);
    runnable_sampler rs;
    int sampling = runnable_start(&rs);

    double mix_ms[NMIX][MAXR], mix_peak[NMIX][MAXR], mix_single[NMIX][MAXR];
    double ph_ms[NPH][MAXR], ph_burn[NPH][MAXR];
    find_blocktime();
    int nph = set_blocktime ? NPH : PH_ALT_BLOCKTIME;
    unsigned seed = (unsigned)runnable_now_ns();
    for (int r = 0; r < rounds; r++) {
        int order[NMIX + NPH], ncases = NMIX + nph;
        for (int i = 0; i < ncases; i++)
            order[i] = i;
        for (int i = ncases - 1; i > 0; i--) {
            seed = seed * 1103515245u + 12345u;
            int j = (int)((seed >> 8) % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < ncases; i++) {
            int c = order[i];
            /* The previous case's idle OpenMP threads poll for up to
             * 200 ms (libomp's default); they are not this case's. */
            struct timespec settle = {0, 300000000};
            nanosleep(&settle, NULL);
            if (c < NMIX) {
                outcome o = mix_case(mix_names[c], &rs);
                mix_ms[c][r] = o.ms;
                mix_peak[c][r] = o.peak;
                mix_single[c][r] = o.single;
            } else {
                phase_outcome o = phases_case(c - NMIX, phases, &rs);
                ph_ms[c - NMIX][r] = o.ms;
                ph_burn[c - NMIX][r] = o.burn;
            }
        }
        fprintf(stderr, "omp_mix: round %d/%d done\n", r + 1, rounds);
    }
    if (sampling)
        runnable_stop(&rs);

    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (out)
        fprintf(out,
                "experiment,case,median_ms,peak_runnable,peak_single_sample,burn,min_ms,max_ms,"
                "min_peak_runnable,max_peak_runnable\n");
    /* GCC's build runs on ultrapool's libgomp.so.1 too (first on the
     * library path), which exports up_gomp_runtime. */
    const char *runtime = dlsym(RTLD_DEFAULT, "up_gomp_runtime") ? "ultrapool"
#if defined(__clang__)
                                                                 : "libomp";
#else
                                                                 : "libgomp";
#endif
    printf("OpenMP runtime: %s; %u CPUs; %d jobs of %.0f us; medians of %d rounds\n\n", runtime,
           ncpus, jobs, job_us, rounds);
    /* The last four columns are the rounds' spread, for the plot's bars
     * (experiments/interop/interop_run.py). */
    printf("| case | ms | time / openmp-alone | peak runnable (held) | peak runnable (one "
           "sample) | ms, lowest round | ms, highest round | peak held, lowest round | peak "
           "held, highest round |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    double alone = bench_median(mix_ms[0], (size_t)rounds);
    for (int c = 0; c < NMIX; c++) {
        bench_summary ms = bench_summarize(mix_ms[c], (size_t)rounds),
                      pk = bench_summarize(mix_peak[c], (size_t)rounds);
        double sg = bench_median(mix_single[c], (size_t)rounds);
        printf("| %s | %.2f | %.3f | %s%.0f | %.0f | %.2f | %.2f | %.0f | %.0f |\n", mix_names[c],
               ms.median, ms.median / alone, sampling ? "" : "n/a ", pk.median, sg, ms.min, ms.max,
               pk.min, pk.max);
        if (out)
            fprintf(out, "mix,%s,%.3f,%.0f,%.0f,,%.3f,%.3f,%.0f,%.0f\n", mix_names[c], ms.median,
                    pk.median, sg, ms.min, ms.max, pk.min, pk.max);
    }
    printf("\n%d pairs of phases of %.0f us of work each\n\n", phases, phase_us);
    printf("| case | ms | efficiency | idle CPU burn 1-21 ms after |\n|---|---:|---:|---:|\n");
    double one = bench_median(ph_ms[PH_ONE], (size_t)rounds);
    for (int k = 0; k < nph; k++) {
        double ms = bench_median(ph_ms[k], (size_t)rounds),
               burn = bench_median(ph_burn[k], (size_t)rounds);
        printf("| %s | %.2f | %.3f | %.2f%% |\n", phase_names[k], ms, one / ms, 100 * burn);
        if (out)
            fprintf(out, "phases,%s,%.3f,,,%.4f\n", phase_names[k], ms, burn);
    }
    if (out)
        fclose(out);
    return 0;
}
