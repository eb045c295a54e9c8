#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mb_common.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_stats.h"
#include "counters.h"

uint64_t mb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mb_spin(uint64_t iters, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (uint64_t i = 0; i < iters; i++) {
        x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        /* Keeps the compiler from computing the loop in closed form. */
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

double mb_calibrate(void)
{
    enum { TRIALS = 15 };
    const uint64_t iters = 2000000;
    double rate[TRIALS];
    uint64_t sink = 0;
    mb_spin(iters, 1); /* warm the clock up */
    for (int t = 0; t < TRIALS; t++) {
        uint64_t t0 = mb_now_ns();
        sink += mb_spin(iters, (uint64_t)t);
        uint64_t ns = mb_now_ns() - t0;
        rate[t] = (double)iters * 1000.0 / (double)(ns ? ns : 1);
    }
    if (sink == 42) /* never: keeps sink alive */
        fprintf(stderr, "#");
    return bench_median(rate, TRIALS);
}

int mb_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

static uint64_t splitmix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

uint64_t *mb_farm_costs(uint64_t n, double alpha, double cap, double heavy, uint64_t seed,
                        uint64_t total_iters)
{
    double *raw = malloc(n * sizeof *raw);
    uint64_t *cost = malloc(n * sizeof *cost);
    if (!raw || !cost) {
        fprintf(stderr, "mpi bench: out of memory for %llu costs\n", (unsigned long long)n);
        exit(1);
    }
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        /* u in (0, 1]: the inverse of the Pareto distribution function. */
        double u = (double)((splitmix(seed ^ (i * UINT64_C(0x2545f4914f6cdd1d))) >> 11) + 1) /
                   9007199254740992.0;
        double x = pow(u, -1.0 / alpha);
        if (x > cap)
            x = cap;
        raw[i] = x * (i < n / 2 ? heavy : 1.0);
        sum += raw[i];
    }
    for (uint64_t i = 0; i < n; i++) {
        double c = raw[i] / sum * (double)total_iters;
        cost[i] = c < 1 ? 1 : (uint64_t)llround(c);
    }
    free(raw);
    return cost;
}

static void usage_now(double v[6])
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    v[0] = (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3;
    v[1] = (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
    v[2] = (double)ru.ru_nvcsw;
    v[3] = (double)ru.ru_nivcsw;
    v[4] = (double)ru.ru_minflt;
    v[5] = (double)ru.ru_majflt;
}

void mb_usage_begin(mb_usage *u)
{
    counters_hw_start();
    usage_now(u->t0);
}

void mb_usage_end(mb_usage *u, MPI_Comm comm, const char *exp, const char *peer)
{
    double now[6], d[6], all[6];
    usage_now(now);
    counter_values hw;
    counters_hw_stop(&hw);
    for (int i = 0; i < 6; i++)
        d[i] = now[i] - u->t0[i];
    MPI_Reduce(d, all, 6, MPI_DOUBLE, MPI_SUM, 0, comm);
    /* Hardware counters: summed where every rank has them. */
    long long hv[COUNTERS_HW], hsum[COUNTERS_HW];
    int have[COUNTERS_HW], have_all[COUNTERS_HW];
    for (int i = 0; i < COUNTERS_HW; i++) {
        hv[i] = hw.have[i] ? hw.v[i] : 0;
        have[i] = hw.have[i] != 0;
    }
    MPI_Reduce(hv, hsum, COUNTERS_HW, MPI_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(have, have_all, COUNTERS_HW, MPI_INT, MPI_MIN, 0, comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0)
        return;
    printf("RESULT exp=%s peer=%s kind=usage utime_ms=%.1f stime_ms=%.1f nvcsw=%.0f "
           "nivcsw=%.0f minflt=%.0f majflt=%.0f",
           exp, peer, all[0], all[1], all[2], all[3], all[4], all[5]);
    for (int i = 0; i < COUNTERS_HW; i++) {
        if (have_all[i])
            printf(" %s=%lld", counters_hw_names[i], hsum[i]);
        else
            printf(" %s=missing", counters_hw_names[i]);
    }
    printf("\n");
    const char *note = counters_hw_note();
    if (note && *note)
        printf("NOTE hardware counters missing: %s\n", note);
    fflush(stdout);
}

const char *mb_opt(int argc, char **argv, const char *name, const char *def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

double mb_opt_num(int argc, char **argv, const char *name, double def)
{
    const char *v = mb_opt(argc, argv, name, NULL);
    if (!v)
        return def;
    char *end;
    double d = strtod(v, &end);
    if (*end || end == v) {
        fprintf(stderr, "mpi bench: %s: not a number: %s\n", name, v);
        exit(2);
    }
    return d;
}

double mb_max(double v, MPI_Comm comm)
{
    double out = v;
    MPI_Reduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    return out;
}

int mb_total_cores(MPI_Comm comm)
{
    int mine = mb_cpus(), all = mine;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, comm);
    return all;
}
