/* EPCC syncbench's PARALLEL, BARRIER and FOR rows as a plain gcc -fopenmp
 * program, so that one executable runs on whichever libgomp.so.1 the
 * loader finds (experiments/omp_same_binary.py runs it on GCC's libgomp,
 * libomp's GOMP layer and ultrapool's).
 *
 * As in EPCC: the reference runs innerreps delays on one thread; each
 * test runs innerreps constructs with one delay per thread inside, so
 * (test time - reference time) / innerreps is the construct's overhead.
 * The reference and the test alternate outer times; the medians are
 * taken.
 *   PARALLEL  a parallel region per repetition
 *   BARRIER   one region, a barrier per repetition
 *   FOR       one region, a worksharing loop (static, one iteration per
 *             thread) per repetition; its closing barrier included
 *
 * usage: omp_syncbench [--threads T] [--innerreps R] [--outer O] [--delay D]
 * Prints one line per test:
 *   syncbench runtime=R test=T threads=T innerreps=R delay_ns=D ref_ns=.. test_ns=.. overhead_ns=..
 * (runtime: the library the OpenMP calls resolve to: ultrapool, libomp or
 * libgomp). */
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The delay: a dependent chain the compiler cannot drop (its result goes
 * to a per-thread sink). */
static _Thread_local uint64_t sink;
static void delay(unsigned iters)
{
    uint64_t x = sink | 1;
    for (unsigned i = 0; i < iters; i++)
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

enum { REFERENCE, PARALLEL, BARRIER, FOR, NTESTS };
static const char *const names[NTESTS] = {"REFERENCE", "PARALLEL", "BARRIER", "FOR"};

static void run(int test, int threads, unsigned innerreps, unsigned iters)
{
    switch (test) {
    case REFERENCE:
        for (unsigned r = 0; r < innerreps; r++)
            delay(iters);
        break;
    case PARALLEL:
        for (unsigned r = 0; r < innerreps; r++) {
#pragma omp parallel num_threads(threads)
            delay(iters);
        }
        break;
    case BARRIER:
#pragma omp parallel num_threads(threads)
        for (unsigned r = 0; r < innerreps; r++) {
            delay(iters);
#pragma omp barrier
        }
        break;
    case FOR:
#pragma omp parallel num_threads(threads)
        for (unsigned r = 0; r < innerreps; r++) {
#pragma omp for schedule(static)
            for (int j = 0; j < threads; j++)
                delay(iters);
        }
        break;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int threads = 2, outer = 20;
    unsigned innerreps = 2000, iters = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--threads") == 0 && v >= 1 && v <= 1024)
            threads = (int)v;
        else if (strcmp(argv[i], "--innerreps") == 0 && v >= 1)
            innerreps = (unsigned)v;
        else if (strcmp(argv[i], "--outer") == 0 && v >= 1 && v <= 1000)
            outer = (int)v;
        else if (strcmp(argv[i], "--delay") == 0 && v >= 0)
            iters = (unsigned)v;
        else {
            fprintf(stderr, "usage: omp_syncbench [--threads T] [--innerreps R] [--outer O] "
                            "[--delay ITERS]\n");
            return 2;
        }
    }
    if (argc % 2 == 0) {
        fprintf(stderr, "omp_syncbench: an option is missing its value\n");
        return 2;
    }
    omp_set_dynamic(0);
    const char *rt = loaded_runtime();
    /* The delay's length in ns, and a warm-up of each test (threads made). */
    uint64_t t0 = now_ns();
    delay(iters * 1000);
    double delay_ns = (double)(now_ns() - t0) / 1000;
    for (int t = 0; t < NTESTS; t++)
        run(t, threads, innerreps / 10 + 1, iters);
    static uint64_t ref[1000], tst[1000];
    for (int t = PARALLEL; t < NTESTS; t++) {
        for (int r = 0; r < outer; r++) {
            uint64_t a = now_ns();
            run(REFERENCE, threads, innerreps, iters);
            uint64_t b = now_ns();
            run(t, threads, innerreps, iters);
            uint64_t c = now_ns();
            ref[r] = b - a;
            tst[r] = c - b;
        }
        double mref = median(ref, outer), mtst = median(tst, outer);
        printf("syncbench runtime=%s test=%s threads=%d innerreps=%u delay_ns=%.1f ref_ns=%.0f "
               "test_ns=%.0f overhead_ns=%.1f\n",
               rt, names[t], threads, innerreps, delay_ns, mref, mtst, (mtst - mref) / innerreps);
    }
    return 0;
}
