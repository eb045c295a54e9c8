/* The two measured experiments with their runtime left open: the farm and
 * the Task Bench-style sweep (mb_farm.c, mb_metg.c). Each peer program
 * (mpi_up.c: ultrapool; mpi_omp.c: MPI + OpenMP) passes the functions that
 * run the work on its runtime; the timing, the data and the output are
 * shared, so every peer runs the same iterations and is timed the same way. */
#ifndef UP_MB_RUNS_H
#define UP_MB_RUNS_H

#include <stdint.h>

#include <mpi.h>

typedef struct mb_farm_job {
    uint64_t n;
    const uint64_t *cost; /* iterations per index */
    uint64_t *out;        /* out[i]: index i's result */
} mb_farm_job;

/* Runs every index of [0, n) exactly once across the ranks (collective);
 * *items and *chunks: what this rank ran and took. 0 on success. */
typedef int (*mb_farm_fn)(mb_farm_job *job, uint64_t *items, uint64_t *chunks, void *ctx);

/* The farm: options --n --work-ms --alpha --cap --heavy --seed --ipu. peer
 * "serial" runs every index on rank 0 alone (the single-threaded cost the
 * efficiencies divide by). */
int mb_farm_main(int argc, char **argv, const char *peer, mb_farm_fn run, void *ctx);

/* One task of the sweep: `grain` iterations seeded from its inputs. */
static inline uint64_t mb_task_seed(uint64_t a, uint64_t b, uint64_t c)
{
    return a * UINT64_C(0x9e3779b97f4a7c15) ^ b * UINT64_C(0xc2b2ae3d27d4eb4f) ^ c;
}

/* All the steps of one run, for peers that keep one parallel region
 * around the time loop instead of one loop call per step. */
typedef struct mb_metg_job {
    int stencil;
    uint64_t steps, grain;
    int c0, ncols, width, rank, size;
    uint64_t *buf[2]; /* stencil: step t reads buf[t & 1], writes buf[(t + 1) & 1] */
    uint64_t sum;     /* trivial: the tasks' results added (out) */
} mb_metg_job;

/* Stencil: the block's edge columns of prev to the neighbour ranks and
 * theirs into prev[0] and prev[ncols + 1] (MPI_Isend/MPI_Irecv, waited). */
void mb_exchange(uint64_t *prev, int ncols, int rank, int size);

typedef struct mb_metg_ops {
    /* trivial: ntasks tasks without dependencies, task k seeded by first+k;
     * their results added into *sum. */
    void (*trivial)(void *ctx, uint64_t first, uint64_t ntasks, uint64_t grain, uint64_t *sum);
    /* stencil: one timestep, cur[c] for c in 1..ncols from prev[c-1..c+1]
     * (prev[0] and prev[ncols+1] hold the neighbours' columns). */
    void (*step)(void *ctx, const uint64_t *prev, uint64_t *cur, int ncols, uint64_t grain);
    /* When set, runs every step of the job instead of trivial/step. */
    void (*whole)(void *ctx, mb_metg_job *job);
    void *ctx;
} mb_metg_ops;

/* The sweep: options --pattern trivial|stencil --grains-us LIST --ipu
 * --width W --budget-us --tmin --tmax. peer "serial" times the task alone
 * on rank 0 at every grain. */
int mb_metg_main(int argc, char **argv, const char *peer, const mb_metg_ops *ops);

/* Runs one stencil task (shared by the peers so the work is identical). */
uint64_t mb_stencil_task(const uint64_t *prev, int c, uint64_t grain);

#endif
