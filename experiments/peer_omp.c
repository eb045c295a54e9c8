/* The OpenMP runner: tasks through the OpenMP runtime the compiler brings
 * (GCC: libgomp; clang: LLVM's libomp). The two runtimes cannot share a
 * process, so CMake builds this file once per compiler (bench_omp_gcc,
 * bench_omp_clang).
 *
 *   omp-*-single  one producer: a team of one thread per core, one of which
 *                 (omp single) creates every task; the canonical OpenMP
 *                 pattern, with no external submitters, so the same under
 *                 every S.
 *   omp-*-team    every team thread producing: a team of S threads (the S
 *                 submitters), each creating its share of the tasks and
 *                 running tasks at the barrier.
 * Each region ends in an implicit barrier that completes every task. */
#include <omp.h>
#include <stdio.h>
#include <time.h>

#include "harness.h"

#if defined(__clang__)
#define FAMILY  "llvm"
#define RUNNER  "bench_omp_clang"
#define RUNTIME "LLVM libomp, clang " __clang_version__
#else
#define FAMILY  "gomp"
#define RUNNER  "bench_omp_gcc"
#define RUNTIME "GCC libgomp, gcc " __VERSION__
#endif

static unsigned team_cores;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int omp_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    team_cores = cores;
    omp_set_dynamic(0); /* a team gets the threads it asks for */
    return 0;
}

static void single_run(uint64_t tasks, unsigned submitters, harness_fn fn, uint64_t *t0)
{
    (void)submitters;
#pragma omp parallel num_threads(team_cores)
    {
#pragma omp single
        {
            *t0 = now_ns();
            for (uint64_t i = 0; i < tasks; i++) {
#pragma omp task
                fn(NULL);
            }
        }
    }
}

static void team_run(uint64_t tasks, unsigned submitters, harness_fn fn, uint64_t *t0)
{
#pragma omp parallel num_threads(submitters)
    {
        /* The barrier closing the single makes every thread wait until the
         * clock has started, and starts it only once all have arrived. */
#pragma omp single
        *t0 = now_ns();
        uint64_t n = (uint64_t)omp_get_num_threads(), id = (uint64_t)omp_get_thread_num();
        uint64_t share = tasks / n + (id < tasks % n);
        for (uint64_t i = 0; i < share; i++) {
#pragma omp task
            fn(NULL);
        }
    }
}

static void omp_fini(void) {}

static const char *omp_version(void)
{
    static char v[160];
    snprintf(v, sizeof v, "%s, OpenMP %d", RUNTIME, _OPENMP);
    return v;
}

static const peer p_single = {
    .name = "omp-" FAMILY "-single",
    .about = "OpenMP tasks: one producer (omp single) in a team of one thread per core",
    .s_independent = 1,
    .init = omp_init,
    .run_all = single_run,
    .fini = omp_fini,
    .version = omp_version};
static const peer p_team = {.name = "omp-" FAMILY "-team",
                            .about =
                                "OpenMP tasks: a team of S threads, every one producing its share",
                            .init = omp_init,
                            .run_all = team_run,
                            .fini = omp_fini,
                            .version = omp_version};

int main(int argc, char **argv)
{
    static const peer *const peers[] = {&p_single, &p_team};
    return harness_main(argc, argv, RUNNER, peers, sizeof peers / sizeof peers[0]);
}
