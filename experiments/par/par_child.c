/* The benchmark child: runs one kernel (or one EPCC test, or the
 * calibration of the Task Bench body) on the variant it was linked with,
 * and prints one line of key=value pairs per timed run. The driver
 * (par_bench) starts one child per cell and round, so every runtime runs
 * in a process of its own.
 *
 * usage: par_child_<runtime> --kernel K [--threads T] [--n N] [--block B]
 *            [--steps S] [--pattern P] [--loop 0|1] [--iters I] [--reps R]
 *            [--warmup W] [--seed S] [--cutoff C]
 * (--cutoff: where the kernel stops making tasks, par_cut: nqueens' task
 * rows, merge sort's sequential run (merges: twice that), Strassen's
 * smallest task level; the default is PAR_CUTOFFS_DEFAULT)
 * (--loop 1: the Task Bench graph in its loop form, par_taskbench_loop)
 *        par_child_<runtime> --epcc TEST [--threads T] [--innerreps R]
 *            [--iters DELAY] [--reps OUTER]
 *        par_child_<runtime> --calibrate
 * Exit status: 0, 1 when a result failed its check, 2 on bad usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "bench_stats.h"
#include "par_common.h"
#include "par_run.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int usage(const char *msg)
{
    fprintf(stderr, "par_child: %s\n", msg);
    return 2;
}

/* ns per iteration of the Task Bench body, the median of nine runs. */
static double calibrate(void)
{
    const uint64_t iters = 2000000;
    double t[9];
    par_delay(iters);
    for (int i = 0; i < 9; i++) {
        uint64_t t0 = now_ns();
        par_delay(iters);
        t[i] = (double)(now_ns() - t0);
    }
    return bench_median(t, 9) / (double)iters;
}

/* EPCC: the reference and the test alternate, outer times each; the
 * overhead per repetition is (median test - median reference) / innerreps. */
static int run_epcc(int test, unsigned threads, unsigned innerreps, uint64_t delay, int outer)
{
    if (outer < 1 || outer > 1000)
        return usage("--reps must be in 1..1000 for --epcc");
    double ref[1000], tst[1000];
    if (par_epcc((par_epcc_test)test, innerreps, delay) ||
        par_epcc(PAR_EPCC_REFERENCE, innerreps, delay)) {
        printf("epcc runtime=%s test=%s threads=%u supported=0\n", par_runtime,
               par_epcc_name((par_epcc_test)test), threads);
        return 0;
    }
    for (int r = 0; r < outer; r++) {
        uint64_t t0 = now_ns();
        par_epcc(PAR_EPCC_REFERENCE, innerreps, delay);
        uint64_t t1 = now_ns();
        par_epcc((par_epcc_test)test, innerreps, delay);
        uint64_t t2 = now_ns();
        ref[r] = (double)(t1 - t0);
        tst[r] = (double)(t2 - t1);
    }
    unsigned team = par_team_size();
    double mref = bench_median(ref, (size_t)outer);
    double mtst = bench_median(tst, (size_t)outer);
    printf("epcc runtime=%s test=%s threads=%u team=%u innerreps=%u delay_iters=%" PRIu64
           " ref_ns=%.0f test_ns=%.0f overhead_ns=%.2f supported=1\n",
           par_runtime, par_epcc_name((par_epcc_test)test), threads, team, innerreps, delay, mref,
           mtst, (mtst - mref) / innerreps);
    return 0;
}

/* The same allocator settings for every runtime, so that a kernel's time
 * is the kernel and its tasks, not page faults. With glibc's defaults,
 * Strassen's 2 MB temporaries are mapped and unmapped on every call, and
 * freed heap tops are trimmed back to the kernel and faulted in again:
 * measured here, that doubled Strassen's time at 1 and 2 threads on every
 * runtime, sequential included, and made the rounds bimodal. Memory freed
 * stays with the process instead (as with jemalloc or tcmalloc, which
 * HPC sites often preload). */
static void allocator_settings(void)
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's maximum on 64-bit */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
#endif
}

/* --cutoff for kernel k; -1 when k has none or c is out of its range. */
static int set_cutoff(par_kernel k, long c)
{
    switch (k) {
    case PAR_K_NQUEENS:
        if (c < 1 || c > UP_K_NQ_MAX)
            return -1;
        par_cut.nq_task_rows = (int)c;
        return 0;
    case PAR_K_MSORT:
        if (c < 16 || c > (1L << 40))
            return -1;
        par_cut.msort = (size_t)c;
        par_cut.merge = 2 * (size_t)c;
        return 0;
    case PAR_K_STRASSEN:
        if (c <= PAR_STRASSEN_LEAF || c > (1L << 20) || (c & (c - 1)))
            return -1;
        par_cut.strassen_min = (size_t)c;
        return 0;
    default:
        return -1;
    }
}

int main(int argc, char **argv)
{
    allocator_settings();
    par_params p = {.kernel = PAR_K_NKERNELS, .seed = 42, .steps = 1};
    unsigned threads = 1, innerreps = 1000;
    int reps = 1, warmup = 1, epcc = -1, calib = 0;
    long cutoff = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--calibrate") == 0) {
            calib = 1;
            continue;
        }
        if (!v)
            return usage("an option is missing its value");
        i++;
        if (strcmp(a, "--kernel") == 0) {
            int k = par_kernel_parse(v);
            if (k < 0)
                return usage("unknown kernel");
            p.kernel = (par_kernel)k;
        } else if (strcmp(a, "--epcc") == 0) {
            if ((epcc = par_epcc_parse(v)) < 0)
                return usage("unknown EPCC test");
        } else if (strcmp(a, "--pattern") == 0) {
            if ((p.pattern = up_k_tb_pattern_parse(v)) < 0)
                return usage("unknown pattern");
        } else if (strcmp(a, "--loop") == 0) {
            if (strcmp(v, "0") && strcmp(v, "1"))
                return usage("--loop takes 0 or 1");
            p.loop = v[0] == '1';
        } else if (strcmp(a, "--threads") == 0)
            threads = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(a, "--n") == 0)
            p.n = strtol(v, NULL, 10);
        else if (strcmp(a, "--block") == 0)
            p.block = strtol(v, NULL, 10);
        else if (strcmp(a, "--steps") == 0)
            p.steps = strtol(v, NULL, 10);
        else if (strcmp(a, "--iters") == 0)
            p.iters = strtoull(v, NULL, 10);
        else if (strcmp(a, "--innerreps") == 0)
            innerreps = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(a, "--reps") == 0)
            reps = atoi(v);
        else if (strcmp(a, "--warmup") == 0)
            warmup = atoi(v);
        else if (strcmp(a, "--seed") == 0)
            p.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--cutoff") == 0)
            cutoff = strtol(v, NULL, 10);
        else
            return usage("unknown option");
    }
    if (calib) {
        printf("calibrate runtime=%s ns_per_iter=%.6f\n", par_runtime, calibrate());
        return 0;
    }
    if (threads < 1 || reps < 1 || warmup < 0)
        return usage("--threads and --reps must be >= 1, --warmup >= 0");
    if (cutoff != -1 && set_cutoff(p.kernel, cutoff))
        return usage("--cutoff: nqueens takes 1..20 rows, msort 16.. elements, strassen a "
                     "power of two above 64; other kernels take none");
    if (par_setup(threads))
        return 2;
    int status = 0;
    if (epcc >= 0) {
        status = run_epcc(epcc, threads, innerreps, p.iters, reps);
        par_teardown();
        return status;
    }
    par_case c;
    char err[200];
    if (par_case_prepare(&c, &p, err, sizeof err)) {
        par_teardown();
        return usage(err);
    }
    for (int r = -warmup; r < reps && status == 0; r++) {
        uint64_t ns;
        double rel = 0;
        int rc = par_case_run(&c, &ns);
        int ok = rc == 0 && par_case_verify(&c, &rel, err, sizeof err) == 0;
        if (!ok) {
            fprintf(stderr, "par_child %s %s: %s\n", par_runtime, par_kernel_name(p.kernel), err);
            status = 1;
        }
        if (r < 0 && ok)
            continue;
        printf("run runtime=%s kernel=%s threads=%u team=%u n=%ld block=%ld steps=%ld "
               "pattern=%s loop=%d iters=%" PRIu64 " ns=%" PRIu64 " tasks=%" PRIu64
               " rel_error=%.3g verified=%d\n",
               par_runtime, par_kernel_name(p.kernel), threads, par_team_size(), p.n, p.block,
               p.steps, p.kernel == PAR_K_TASKBENCH ? up_k_tb_pattern_name(p.pattern) : "-", p.loop,
               p.iters, ns, par_case_tasks(&c), rel, ok);
        fflush(stdout);
    }
    par_case_free(&c);
    par_teardown();
    return status;
}
