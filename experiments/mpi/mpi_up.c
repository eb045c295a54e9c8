/* The MPI experiments on ultrapool (experiments/mpi/):
 *   mpi_up calibrate                  iterations of the busy loop per us
 *   mpi_up farm --peer P [options]    P: up-guided, up-dynamic, up-static, serial
 *   mpi_up metg --peer P [options]    P: up, up-region, up-group, serial
 * Each rank runs its share on its own pool, created after MPI_Init so it
 * covers the CPUs mpirun bound the rank to. Farm: up_mpi_for with the
 * schedule named. Sweep, two ways of running a step's tasks on the pool:
 *   up        up_parallel_for, a team of the rank's CPUs (the calling
 *             thread and workers); with one CPU per rank the calling
 *             thread runs the step itself, no hand-off at all;
 *   up-group  one pool task per column through an up_group, then
 *             up_group_wait (which runs queued tasks meanwhile): the cost
 *             of real pool tasks per step, for comparison;
 *   up-region one parallel region (up_parallel) around the whole time
 *             loop: member 0, the main thread, exchanges the edges, a
 *             barrier, then up_for over the step's columns (as OpenMP
 *             codes keep one region around their time loop). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <ultrapool/group.h>
#include <ultrapool/mpi.h>
#include <ultrapool/parallel.h>

#include "counters.h"
#include "mb_common.h"
#include "mb_runs.h"

typedef struct up_ctx {
    up_pool *pool;
    up_mpi_schedule schedule;
    mb_farm_job *job;
    uint64_t grain;
    const uint64_t *prev;
    uint64_t *cur;
    uint64_t first;
    _Atomic uint64_t sum;
    up_group *group;      /* up-group */
    struct col_arg *args; /* up-group: one per column */
    int nargs;
    mb_metg_job *mjob; /* up-region */
} up_ctx;

typedef struct col_arg {
    up_ctx *c;
    int64_t k;
} col_arg;

static int farm_body(uint64_t begin, uint64_t end, void *arg)
{
    up_ctx *c = arg;
    for (uint64_t i = begin; i < end; i++)
        c->job->out[i] = mb_spin(c->job->cost[i], i);
    return 0;
}

static int farm_run(mb_farm_job *job, uint64_t *items, uint64_t *chunks, void *arg)
{
    up_ctx *c = arg;
    c->job = job;
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.schedule = c->schedule;
    o.report = &rep;
    int rc = up_mpi_for(MPI_COMM_WORLD, c->pool, job->n, &o, farm_body, c);
    if (rc != UP_OK)
        fprintf(stderr, "mpi_up: up_mpi_for: %s\n", up_last_error());
    *items = rep.items;
    *chunks = rep.chunks;
    return rc;
}

static void trivial_body(int64_t lo, int64_t hi, void *arg)
{
    up_ctx *c = arg;
    uint64_t s = 0;
    for (int64_t k = lo; k < hi; k++)
        s += mb_spin(c->grain, c->first + (uint64_t)k);
    atomic_fetch_add_explicit(&c->sum, s, memory_order_relaxed);
}

static void trivial(void *arg, uint64_t first, uint64_t ntasks, uint64_t grain, uint64_t *sum)
{
    up_ctx *c = arg;
    c->grain = grain;
    c->first = first;
    atomic_store(&c->sum, 0);
    up_for_opts o = UP_FOR_OPTS(.schedule = UP_SCHED_STATIC);
    up_parallel_for(c->pool, 0, (int64_t)ntasks, &o, trivial_body, c);
    *sum = atomic_load(&c->sum);
}

static void step_body(int64_t lo, int64_t hi, void *arg)
{
    up_ctx *c = arg;
    for (int64_t k = lo; k < hi; k++)
        c->cur[k] = mb_stencil_task(c->prev, (int)k, c->grain);
}

static void step(void *arg, const uint64_t *prev, uint64_t *cur, int ncols, uint64_t grain)
{
    up_ctx *c = arg;
    c->grain = grain;
    c->prev = prev;
    c->cur = cur;
    up_for_opts o = UP_FOR_OPTS(.schedule = UP_SCHED_STATIC);
    up_parallel_for(c->pool, 1, (int64_t)ncols + 1, &o, step_body, c);
}

static col_arg *group_args(up_ctx *c, int n)
{
    if (n > c->nargs) {
        free(c->args);
        c->args = malloc((size_t)n * sizeof *c->args);
        if (!c->args) {
            fprintf(stderr, "mpi_up: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        c->nargs = n;
        for (int i = 0; i < n; i++)
            c->args[i] = (col_arg){c, i};
    }
    return c->args;
}

static int group_trivial_task(void *arg)
{
    col_arg *a = arg;
    atomic_fetch_add_explicit(&a->c->sum, mb_spin(a->c->grain, a->c->first + (uint64_t)a->k),
                              memory_order_relaxed);
    return 0;
}

static void group_trivial(void *arg, uint64_t first, uint64_t ntasks, uint64_t grain, uint64_t *sum)
{
    up_ctx *c = arg;
    col_arg *a = group_args(c, (int)ntasks);
    c->grain = grain;
    c->first = first;
    atomic_store(&c->sum, 0);
    for (uint64_t k = 0; k < ntasks; k++)
        up_group_go(c->group, group_trivial_task, &a[k]);
    up_group_wait(c->group);
    *sum = atomic_load(&c->sum);
}

static int group_step_task(void *arg)
{
    col_arg *a = arg;
    a->c->cur[a->k] = mb_stencil_task(a->c->prev, (int)a->k, a->c->grain);
    return 0;
}

static void group_step(void *arg, const uint64_t *prev, uint64_t *cur, int ncols, uint64_t grain)
{
    up_ctx *c = arg;
    col_arg *a = group_args(c, ncols + 1);
    c->grain = grain;
    c->prev = prev;
    c->cur = cur;
    for (int k = 1; k <= ncols; k++)
        up_group_go(c->group, group_step_task, &a[k]);
    up_group_wait(c->group);
}

static void region_trivial_body(int64_t lo, int64_t hi, void *arg)
{
    up_ctx *c = arg;
    uint64_t s = 0;
    for (int64_t k = lo; k < hi; k++)
        s += mb_spin(c->mjob->grain, (uint64_t)k);
    atomic_fetch_add_explicit(&c->sum, s, memory_order_relaxed);
}

/* Every member computes the step's buffers from t, so nothing is written
 * between the barriers but the columns. */
static void region_step_body(int64_t lo, int64_t hi, void *arg)
{
    up_ctx *c = arg;
    const mb_metg_job *j = c->mjob;
    uint64_t t = c->first;
    const uint64_t *prev = j->buf[t & 1];
    uint64_t *cur = j->buf[(t + 1) & 1];
    for (int64_t k = lo; k < hi; k++)
        cur[k] = mb_stencil_task(prev, (int)k, j->grain);
}

static void region(void *arg)
{
    up_ctx *c = arg;
    mb_metg_job *j = c->mjob;
    up_for_opts o = UP_FOR_OPTS(.schedule = UP_SCHED_STATIC);
    for (uint64_t t = 0; t < j->steps; t++) {
        if (!j->stencil) {
            int64_t first = (int64_t)(t * (uint64_t)j->width + (uint64_t)j->c0);
            up_for(first, first + j->ncols, &o, region_trivial_body, c);
            continue;
        }
        if (up_master()) {
            mb_exchange(j->buf[t & 1], j->ncols, j->rank, j->size);
            c->first = t;
        }
        up_barrier();
        up_for(1, (int64_t)j->ncols + 1, &o, region_step_body, c); /* ends with a barrier */
    }
}

static void whole(void *arg, mb_metg_job *job)
{
    up_ctx *c = arg;
    c->mjob = job;
    atomic_store(&c->sum, 0);
    up_parallel(c->pool, 0, region, c);
    job->sum = atomic_load(&c->sum);
}

int main(int argc, char **argv)
{
    counters_init();
    int provided = 0;
    if (up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != UP_OK) {
        fprintf(stderr, "mpi_up: %s\n", up_last_error());
        return 1;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "";
    const char *peer = mb_opt(argc, argv, "--peer", "");
    up_ctx c;
    memset(&c, 0, sizeof c);
    int rc = 2;
    if (strcmp(what, "calibrate") == 0) {
        if (rank == 0)
            printf("RESULT exp=calibrate peer=none ipu=%.3f cpus=%d\n", mb_calibrate(), mb_cpus());
        rc = 0;
    } else if (strcmp(what, "farm") == 0 || strcmp(what, "metg") == 0) {
        if (up_pool_create(&c.pool, NULL) != UP_OK) {
            fprintf(stderr, "mpi_up: up_pool_create: %s\n", up_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0)
            printf("NOTE mpi_up rank 0: %d CPUs, pool of %u CPUs, %s\n", mb_cpus(),
                   up_pool_cpus(c.pool), up_mpi_level_name(provided));
        if (strcmp(what, "farm") == 0) {
            static const struct {
                const char *name;
                up_mpi_schedule s;
            } sched[] = {{"up-guided", UP_MPI_GUIDED},
                         {"up-dynamic", UP_MPI_DYNAMIC},
                         {"up-static", UP_MPI_STATIC}};
            for (size_t i = 0; i < sizeof sched / sizeof sched[0]; i++)
                if (strcmp(peer, sched[i].name) == 0) {
                    c.schedule = sched[i].s;
                    rc = mb_farm_main(argc, argv, peer, farm_run, &c);
                }
            if (strcmp(peer, "serial") == 0)
                rc = mb_farm_main(argc, argv, peer, farm_run, &c);
        } else if (strcmp(peer, "up") == 0 || strcmp(peer, "serial") == 0) {
            mb_metg_ops ops = {trivial, step, NULL, &c};
            rc = mb_metg_main(argc, argv, peer, &ops);
        } else if (strcmp(peer, "up-region") == 0) {
            mb_metg_ops ops = {NULL, NULL, whole, &c};
            rc = mb_metg_main(argc, argv, peer, &ops);
        } else if (strcmp(peer, "up-group") == 0) {
            if (up_group_create(&c.group, c.pool, 0) != UP_OK) {
                fprintf(stderr, "mpi_up: up_group_create: %s\n", up_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            mb_metg_ops ops = {group_trivial, group_step, NULL, &c};
            rc = mb_metg_main(argc, argv, peer, &ops);
            up_group_destroy(c.group);
            free(c.args);
        }
        up_pool_stop_and_wait(c.pool);
        up_pool_destroy(c.pool);
    }
    if (rc == 2 && rank == 0)
        fprintf(stderr,
                "usage: mpi_up calibrate | farm --peer up-guided|up-dynamic|up-static|serial "
                "| metg --peer up|up-region|up-group|serial [options]\n");
    MPI_Finalize();
    return rc;
}
