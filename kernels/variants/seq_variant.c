/* The sequential variant: the kernels' own sequential functions, no
 * runtime. It is the baseline of every speedup. */
#include "par_variant.h"

const char par_runtime[] = "seq";

int par_setup(unsigned threads)
{
    (void)threads;
    return 0;
}

void par_teardown(void) {}

unsigned par_team_size(void) { return 1; }

uint64_t par_fib(int n) { return up_k_fib(n); }

uint64_t par_nqueens(int n) { return up_k_nqueens(n); }

void par_msort(int32_t *a, int32_t *tmp, size_t n) { up_k_msort(a, tmp, n); }

int par_sparselu(up_k_slu *m) { return up_k_slu_factor(m); }

int par_strassen(up_k_mat a, up_k_mat b, up_k_mat c, size_t n)
{
    return up_k_strassen(a, b, c, n, PAR_STRASSEN_LEAF);
}

int par_jacobi(up_k_jacobi *j, int sweeps)
{
    up_k_jacobi_run(j, sweeps);
    return 0;
}

int par_taskbench(const up_k_tb *g)
{
    up_k_tb_run_seq(g);
    return 0;
}

int par_taskbench_loop(const up_k_tb *g)
{
    up_k_tb_run_seq(g);
    return 0;
}

int par_epcc(par_epcc_test test, unsigned innerreps, uint64_t delay_iters)
{
    if (test != PAR_EPCC_REFERENCE)
        return -1;
    for (unsigned i = 0; i < innerreps; i++)
        par_delay(delay_iters);
    return 0;
}
