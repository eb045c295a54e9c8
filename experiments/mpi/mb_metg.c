/* The Task Bench-style sweep (mb_runs.h). Width W columns in contiguous
 * blocks over the ranks, T timesteps; a task is `grain` iterations of the
 * busy loop. trivial: no dependencies (a rank's T x cols tasks in one
 * loop, since nothing orders them). stencil: column c at step t needs
 * columns c-1, c, c+1 of step t-1; the block edges come from the
 * neighbour ranks with MPI_Isend/MPI_Irecv every step. The serial peer
 * times the same task of the same pattern alone, one after the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mb_common.h"
#include "mb_runs.h"

uint64_t mb_stencil_task(const uint64_t *prev, int c, uint64_t grain)
{
    return mb_spin(grain, mb_task_seed(prev[c - 1], prev[c], prev[c + 1]));
}

/* The grains, in microseconds, from a comma list. */
static int parse_grains(const char *s, double *g, int max)
{
    int k = 0;
    while (*s && k < max) {
        char *end;
        g[k] = strtod(s, &end);
        if (end == s || g[k] <= 0)
            return -1;
        k++;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return k;
}

void mb_exchange(uint64_t *prev, int ncols, int rank, int size)
{
    MPI_Request req[4];
    int k = 0;
    if (rank > 0) {
        MPI_Irecv(&prev[0], 1, MPI_UINT64_T, rank - 1, 1, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&prev[1], 1, MPI_UINT64_T, rank - 1, 0, MPI_COMM_WORLD, &req[k++]);
    }
    if (rank < size - 1) {
        MPI_Irecv(&prev[ncols + 1], 1, MPI_UINT64_T, rank + 1, 0, MPI_COMM_WORLD, &req[k++]);
        MPI_Isend(&prev[ncols], 1, MPI_UINT64_T, rank + 1, 1, MPI_COMM_WORLD, &req[k++]);
    }
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
}

/* T steps of the pattern on this rank; the checksum of its part. Both
 * patterns go step by step, as Task Bench does: a step's tasks are one
 * call of the peer's loop, so the runtime's cost per step is measured even
 * where no message orders the steps. */
static uint64_t run_pattern(const mb_metg_ops *ops, int stencil, uint64_t steps, uint64_t grain,
                            int c0, int ncols, int width, uint64_t **bufs, int rank, int size)
{
    if (ops->whole) {
        mb_metg_job job = {stencil, steps, grain, c0, ncols, width, rank, size, {bufs[0], bufs[1]},
                           0};
        for (int c = 0; c < ncols + 2; c++)
            bufs[0][c] = bufs[1][c] = (uint64_t)(c0 + c);
        ops->whole(ops->ctx, &job);
        if (!stencil)
            return job.sum;
        uint64_t sum = 0;
        for (int c = 1; c <= ncols; c++)
            sum += bufs[steps & 1][c];
        return sum;
    }
    if (!stencil) {
        uint64_t sum = 0;
        for (uint64_t t = 0; t < steps; t++) {
            uint64_t s = 0;
            ops->trivial(ops->ctx, t * (uint64_t)width + (uint64_t)c0, (uint64_t)ncols, grain, &s);
            sum += s;
        }
        return sum;
    }
    uint64_t *prev = bufs[0], *cur = bufs[1];
    for (int c = 0; c < ncols + 2; c++)
        prev[c] = cur[c] = (uint64_t)(c0 + c);
    for (uint64_t t = 0; t < steps; t++) {
        mb_exchange(prev, ncols, rank, size);
        ops->step(ops->ctx, prev, cur, ncols, grain);
        uint64_t *x = prev;
        prev = cur;
        cur = x;
    }
    uint64_t sum = 0;
    for (int c = 1; c <= ncols; c++)
        sum += prev[c];
    return sum;
}

int mb_metg_main(int argc, char **argv, const char *peer, const mb_metg_ops *ops)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *pattern = mb_opt(argc, argv, "--pattern", "trivial");
    int stencil = strcmp(pattern, "stencil") == 0;
    if (!stencil && strcmp(pattern, "trivial") != 0) {
        if (rank == 0)
            fprintf(stderr, "metg: --pattern trivial or stencil, not %s\n", pattern);
        return 2;
    }
    double grains[64];
    int ng = parse_grains(
        mb_opt(argc, argv, "--grains-us",
               "1000,300,100,30,10,5,3,2,1.5,1,0.7,0.5,0.3,0.2,0.15,0.1,0.07,0.05,0.03,0.02"),
        grains, 64);
    double ipu = mb_opt_num(argc, argv, "--ipu", 0);
    if (ipu <= 0)
        ipu = mb_calibrate();
    int cores = mb_total_cores(MPI_COMM_WORLD);
    int width = (int)mb_opt_num(argc, argv, "--width", cores);
    double budget_us = mb_opt_num(argc, argv, "--budget-us", 20000);
    double tmin = mb_opt_num(argc, argv, "--tmin", 20),
           tmax = mb_opt_num(argc, argv, "--tmax", 20000);
    if (ng < 1 || width < size || budget_us <= 0 || tmin < 1 || tmax < tmin) {
        if (rank == 0)
            fprintf(stderr, "metg: --grains-us a comma list of us > 0, --width >= ranks, "
                            "--budget-us > 0, 1 <= --tmin <= --tmax\n");
        return 2;
    }
    int c0 = (int)((long)width * rank / size), c1 = (int)((long)width * (rank + 1) / size);
    int ncols = c1 - c0;
    uint64_t *bufs[2] = {calloc((size_t)ncols + 2, sizeof(uint64_t)),
                         calloc((size_t)ncols + 2, sizeof(uint64_t))};
    mb_usage usage;
    mb_usage_begin(&usage);
    for (int gi = 0; gi < ng; gi++) {
        uint64_t grain = (uint64_t)(grains[gi] * ipu + 0.5);
        if (grain < 1)
            grain = 1;
        if (strcmp(peer, "serial") == 0) {
            /* The task alone, on rank 0: what the efficiency divides by. */
            if (rank == 0) {
                double cnt = budget_us / grains[gi];
                uint64_t count = cnt < 20 ? 20 : cnt > 200000 ? 200000 : (uint64_t)cnt;
                uint64_t row[3] = {1, 2, 3}, t0 = mb_now_ns();
                if (stencil)
                    for (uint64_t k = 0; k < count; k++)
                        row[1] = mb_stencil_task(row, 1, grain);
                else
                    for (uint64_t k = 0; k < count; k++)
                        row[1] += mb_spin(grain, k);
                uint64_t ns = mb_now_ns() - t0;
                printf("RESULT exp=metg peer=serial pattern=%s grain_us=%g grain_iters=%llu "
                       "tasks=%llu elapsed_ns=%llu task_ns=%.2f checksum=%llu\n",
                       pattern, grains[gi], (unsigned long long)grain, (unsigned long long)count,
                       (unsigned long long)ns, (double)ns / (double)count,
                       (unsigned long long)row[1]);
                fflush(stdout);
            }
            continue;
        }
        /* Steps: about budget_us of work per core at this grain. */
        double tt = budget_us * cores / (grains[gi] * width);
        uint64_t steps = tt < tmin ? (uint64_t)tmin : tt > tmax ? (uint64_t)tmax : (uint64_t)tt;
        run_pattern(ops, stencil, steps / 10 + 1, grain, c0, ncols, width, bufs, rank,
                    size); /* warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t t0 = mb_now_ns();
        uint64_t sum = run_pattern(ops, stencil, steps, grain, c0, ncols, width, bufs, rank, size);
        double ns = mb_max((double)(mb_now_ns() - t0), MPI_COMM_WORLD);
        uint64_t sum_all = 0;
        MPI_Reduce(&sum, &sum_all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("RESULT exp=metg peer=%s pattern=%s grain_us=%g grain_iters=%llu steps=%llu "
                   "width=%d cores=%d ranks=%d tasks=%llu elapsed_ns=%.0f checksum=%llu\n",
                   peer, pattern, grains[gi], (unsigned long long)grain, (unsigned long long)steps,
                   width, cores, size, (unsigned long long)(steps * (uint64_t)width), ns,
                   (unsigned long long)sum_all);
            fflush(stdout);
        }
    }
    mb_usage_end(&usage, MPI_COMM_WORLD, "metg", peer);
    free(bufs[0]);
    free(bufs[1]);
    return 0;
}
