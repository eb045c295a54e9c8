/* The #pragma omp variant of the Task Bench graph and of the EPCC-style
 * overhead tests (built with libgomp and with libomp, like the kernels). */
#include <omp.h>

#include "par_variant.h"

extern unsigned par_omp_threads;
void par_omp_note_team(void);

/* ---- Task Bench ------------------------------------------------------ */

/* A task per point. Its "in" dependencies are the pattern's points of the
 * previous step, padded to the pattern's fixed count by repeating the
 * first one (OpenMP needs the clauses written out; a repeated "in" adds
 * no order). The trivial pattern has no dependencies at all. */
int par_taskbench(const up_k_tb *g)
{
    int width = g->width, steps = g->steps;
    up_k_tb_pattern pat = g->pattern;
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
        for (int t = 0; t < steps; t++)
            for (int x = 0; x < width; x++) {
                int d[UP_K_TB_MAX_DEPS];
                int n = up_k_tb_deps(g, t, x, d);
                const uint64_t *in[UP_K_TB_MAX_DEPS];
                for (int i = 0; i < UP_K_TB_MAX_DEPS; i++)
                    in[i] = n ? up_k_tb_cell(g, t - 1, d[i < n ? i : 0]) : NULL;
                uint64_t *out = up_k_tb_cell(g, t, x);
                if (pat == UP_K_TB_TRIVIAL) {
#pragma omp task firstprivate(t, x)
                    up_k_tb_run_point(g, t, x);
                } else if (n == 0) {
#pragma omp task firstprivate(t, x) depend(out : *out)
                    up_k_tb_run_point(g, t, x);
                } else if (pat == UP_K_TB_NO_COMM) {
#pragma omp task firstprivate(t, x) depend(in : *in[0]) depend(out : *out)
                    up_k_tb_run_point(g, t, x);
                } else if (pat == UP_K_TB_STENCIL) {
#pragma omp task firstprivate(t, x) depend(in : *in[0], *in[1], *in[2]) depend(out : *out)
                    up_k_tb_run_point(g, t, x);
                } else {
                    // clang-format off
#pragma omp task firstprivate(t, x) depend(in : *in[0], *in[1], *in[2], *in[3], *in[4]) depend(out : *out)
                    // clang-format on
                    up_k_tb_run_point(g, t, x);
                }
            }
    }
    return 0;
}

int par_taskbench_loop(const up_k_tb *g)
{
    int width = g->width, steps = g->steps;
#pragma omp parallel num_threads(par_omp_threads)
    {
        par_omp_note_team();
        for (int t = 0; t < steps; t++) {
#pragma omp for schedule(static)
            for (int x = 0; x < width; x++)
                up_k_tb_run_point(g, t, x);
        }
    }
    return 0;
}

/* ---- EPCC-style overheads -------------------------------------------- */

int par_epcc(par_epcc_test test, unsigned innerreps, uint64_t delay_iters)
{
    unsigned threads = par_omp_threads;
    switch (test) {
    case PAR_EPCC_REFERENCE:
#pragma omp parallel num_threads(threads)
    {
#pragma omp master
        par_omp_note_team();
        for (unsigned i = 0; i < innerreps; i++)
            par_delay(delay_iters);
    }
        return 0;
    case PAR_EPCC_PARALLEL_TASK:
#pragma omp parallel num_threads(threads)
        for (unsigned i = 0; i < innerreps; i++) {
#pragma omp task
            par_delay(delay_iters);
        }
        return 0;
    case PAR_EPCC_MASTER_TASK:
#pragma omp parallel num_threads(threads)
#pragma omp master
        for (unsigned i = 0; i < innerreps * threads; i++) {
#pragma omp task
            par_delay(delay_iters);
        }
        return 0;
    case PAR_EPCC_TASKWAIT:
#pragma omp parallel num_threads(threads)
        for (unsigned i = 0; i < innerreps; i++) {
#pragma omp task
            par_delay(delay_iters);
#pragma omp taskwait
        }
        return 0;
    case PAR_EPCC_DEPEND:
#pragma omp parallel num_threads(threads)
    {
        /* Each thread's chain hangs on a variable of its own. */
        char chain = 0;
        char *link = &chain;
        for (unsigned i = 0; i < innerreps; i++) {
#pragma omp task depend(inout : *link)
            par_delay(delay_iters);
        }
#pragma omp taskwait
    }
        return 0;
    case PAR_EPCC_PARALLEL_FOR:
        for (unsigned i = 0; i < innerreps; i++) {
#pragma omp parallel for num_threads(threads) schedule(static)
            for (unsigned j = 0; j < threads; j++) {
                if (j == 0)
                    par_omp_note_team();
                par_delay(delay_iters);
            }
        }
        return 0;
    case PAR_EPCC_TASKLOOP:
#pragma omp parallel num_threads(threads)
#pragma omp single
    {
#pragma omp taskloop grainsize(1)
        for (unsigned i = 0; i < innerreps * threads; i++)
            par_delay(delay_iters);
    }
        return 0;
    default:
        return -1;
    }
}
