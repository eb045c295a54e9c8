/* The MPI + OpenMP peer of the experiments (experiments/mpi/):
 *   mpi_omp farm --peer omp [options]   a static block of the index space
 *                                       per rank, schedule(dynamic) inside
 *   mpi_omp metg --peer omp [options]   each step's tasks in a parallel for
 *   mpi_omp metg --peer omp-region      one parallel region around the time
 *                                       loop: master exchanges, barrier, omp for
 * OpenMP's team on each rank is one thread per CPU the rank is bound to
 * (set explicitly, as libgomp would from the binding). */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"
#include "mb_common.h"
#include "mb_runs.h"

static int farm_run(mb_farm_job *job, uint64_t *items, uint64_t *chunks, void *arg)
{
    (void)arg;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t n = job->n, P = (uint64_t)size, r = (uint64_t)rank;
    int64_t b = (int64_t)(n / P * r + (r < n % P ? r : n % P));
    int64_t e = b + (int64_t)(n / P + (r < n % P));
    const uint64_t *cost = job->cost;
    uint64_t *out = job->out;
#pragma omp parallel for schedule(dynamic)
    for (int64_t i = b; i < e; i++)
        out[i] = mb_spin(cost[i], (uint64_t)i);
    *items = (uint64_t)(e - b);
    *chunks = 1;
    return 0;
}

static void trivial(void *arg, uint64_t first, uint64_t ntasks, uint64_t grain, uint64_t *sum)
{
    (void)arg;
    uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t k = 0; k < (int64_t)ntasks; k++)
        s += mb_spin(grain, first + (uint64_t)k);
    *sum = s;
}

static void step(void *arg, const uint64_t *prev, uint64_t *cur, int ncols, uint64_t grain)
{
    (void)arg;
#pragma omp parallel for schedule(static)
    for (int c = 1; c <= ncols; c++)
        cur[c] = mb_stencil_task(prev, c, grain);
}

static void whole(void *arg, mb_metg_job *j)
{
    (void)arg;
    uint64_t s = 0;
    const uint64_t steps = j->steps, grain = j->grain;
    const int ncols = j->ncols, stencil = j->stencil;
#pragma omp parallel reduction(+ : s)
    for (uint64_t t = 0; t < steps; t++) {
        if (!stencil) {
            int64_t first = (int64_t)(t * (uint64_t)j->width + (uint64_t)j->c0);
#pragma omp for schedule(static)
            for (int64_t k = first; k < first + ncols; k++)
                s += mb_spin(grain, (uint64_t)k);
            continue;
        }
#pragma omp master
        mb_exchange(j->buf[t & 1], ncols, j->rank, j->size);
#pragma omp barrier
        const uint64_t *prev = j->buf[t & 1];
        uint64_t *cur = j->buf[(t + 1) & 1];
#pragma omp for schedule(static)
        for (int c = 1; c <= ncols; c++)
            cur[c] = mb_stencil_task(prev, c, grain);
    }
    j->sum = s;
}

int main(int argc, char **argv)
{
    counters_init();
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    omp_set_num_threads(mb_cpus());
    const char *what = argc > 1 ? argv[1] : "";
    const char *peer = mb_opt(argc, argv, "--peer", "");
    int rc = 2;
    if (rank == 0)
        printf("NOTE mpi_omp rank 0: %d CPUs, %d OpenMP threads\n", mb_cpus(),
               omp_get_max_threads());
    if (strcmp(peer, "omp") == 0 && strcmp(what, "farm") == 0)
        rc = mb_farm_main(argc, argv, peer, farm_run, NULL);
    else if (strcmp(peer, "omp") == 0 && strcmp(what, "metg") == 0) {
        mb_metg_ops ops = {trivial, step, NULL, NULL};
        rc = mb_metg_main(argc, argv, peer, &ops);
    } else if (strcmp(peer, "omp-region") == 0 && strcmp(what, "metg") == 0) {
        mb_metg_ops ops = {NULL, NULL, whole, NULL};
        rc = mb_metg_main(argc, argv, peer, &ops);
    }
    if (rc == 2 && rank == 0)
        fprintf(stderr, "usage: mpi_omp farm --peer omp | metg --peer omp|omp-region [options]\n");
    MPI_Finalize();
    return rc;
}
