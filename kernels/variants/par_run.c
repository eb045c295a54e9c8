#include "par_run.h"

#include "kutil.h"

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

static int fail(char *err, size_t len, const char *what)
{
    snprintf(err, len, "%s", what);
    return -1;
}

int par_case_prepare(par_case *c, const par_params *p, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->p = *p;
    size_t n = p->n > 0 ? (size_t)p->n : 0;
    switch (p->kernel) {
    case PAR_K_FIB:
        return p->n >= 0 && p->n <= 92 ? 0 : fail(err, errlen, "fib: n must be in 0..92");
    case PAR_K_NQUEENS:
        return p->n >= 1 && p->n <= 18 ? 0 : fail(err, errlen, "nqueens: n must be in 1..18");
    case PAR_K_MSORT:
        c->input = malloc(n * sizeof *c->input + 1);
        c->a = malloc(n * sizeof *c->a + 1);
        c->tmp = malloc(n * sizeof *c->tmp + 1);
        if (!c->input || !c->a || !c->tmp)
            return fail(err, errlen, "msort: out of memory");
        up_k_msort_fill(c->input, n, p->seed);
        c->sig = up_k_msort_signature(c->input, n);
        return 0;
    case PAR_K_SPARSELU:
        if (p->n < 1 || p->block < 1)
            return fail(err, errlen, "sparselu: need n (blocks) and block >= 1");
        return up_k_slu_init(&c->orig, (int)p->n, (int)p->block, p->seed)
                   ? fail(err, errlen, "sparselu: out of memory")
                   : 0;
    case PAR_K_STRASSEN:
        c->ma = malloc(n * n * sizeof(double) + 1);
        c->mb = malloc(n * n * sizeof(double) + 1);
        c->mc = malloc(n * n * sizeof(double) + 1);
        if (!c->ma || !c->mb || !c->mc)
            return fail(err, errlen, "strassen: out of memory");
        up_k_matrix_fill(c->ma, n, p->seed);
        up_k_matrix_fill(c->mb, n, p->seed + 1);
        return 0;
    case PAR_K_JACOBI:
        if (p->block < 1 || p->n % p->block || p->steps < 0)
            return fail(err, errlen, "jacobi: block must divide n");
        return up_k_jacobi_init(&c->jac, n, (size_t)p->block, p->seed)
                   ? fail(err, errlen, "jacobi: out of memory")
                   : 0;
    case PAR_K_TASKBENCH:
        return up_k_tb_init(&c->tb, (up_k_tb_pattern)p->pattern, (int)p->n, (int)p->steps, p->iters)
                   ? fail(err, errlen, "taskbench: bad pattern or size, or out of memory")
                   : 0;
    default:
        return fail(err, errlen, "unknown kernel");
    }
}

/* Puts the inputs back as prepare made them (the kernels work in place). */
static int reset(par_case *c)
{
    size_t n = (size_t)c->p.n;
    switch (c->p.kernel) {
    case PAR_K_MSORT:
        memcpy(c->a, c->input, n * sizeof *c->a);
        return 0;
    case PAR_K_SPARSELU:
        up_k_slu_free(&c->work);
        return up_k_slu_copy(&c->work, &c->orig);
    case PAR_K_JACOBI:
        up_k_jacobi_free(&c->jac);
        return up_k_jacobi_init(&c->jac, n, (size_t)c->p.block, c->p.seed);
    case PAR_K_TASKBENCH:
        memset(c->tb.grid, 0, (size_t)c->tb.width * (size_t)c->tb.steps * sizeof *c->tb.grid);
        return 0;
    default:
        return 0;
    }
}

int par_case_run(par_case *c, uint64_t *ns)
{
    if (reset(c))
        return c->run_rc = -1;
    size_t n = (size_t)c->p.n;
    int rc = 0;
    uint64_t t0 = now_ns();
    switch (c->p.kernel) {
    case PAR_K_FIB:
        c->result = par_fib((int)n);
        break;
    case PAR_K_NQUEENS:
        c->result = par_nqueens((int)n);
        break;
    case PAR_K_MSORT:
        par_msort(c->a, c->tmp, n);
        break;
    case PAR_K_SPARSELU:
        rc = par_sparselu(&c->work);
        break;
    case PAR_K_STRASSEN:
        rc = par_strassen((up_k_mat){c->ma, n}, (up_k_mat){c->mb, n}, (up_k_mat){c->mc, n}, n);
        break;
    case PAR_K_JACOBI:
        rc = par_jacobi(&c->jac, (int)c->p.steps);
        break;
    case PAR_K_TASKBENCH:
        rc = c->p.loop ? par_taskbench_loop(&c->tb) : par_taskbench(&c->tb);
        break;
    default:
        rc = -1;
    }
    *ns = now_ns() - t0;
    return c->run_rc = rc;
}

/* The sequential result the floating-point kernels are compared with,
 * computed by the kernel itself on the first check. */
static int make_reference(par_case *c)
{
    size_t n = (size_t)c->p.n;
    switch (c->p.kernel) {
    case PAR_K_SPARSELU:
        return up_k_slu_copy(&c->ref, &c->orig) || up_k_slu_factor(&c->ref) ? -1 : 0;
    case PAR_K_STRASSEN:
        c->mref = malloc(n * n * sizeof(double) + 1);
        if (!c->mref)
            return -1;
        return up_k_strassen((up_k_mat){c->ma, n}, (up_k_mat){c->mb, n}, (up_k_mat){c->mref, n}, n,
                             PAR_STRASSEN_LEAF);
    case PAR_K_JACOBI:
        if (up_k_jacobi_init(&c->jref, n, (size_t)c->p.block, c->p.seed))
            return -1;
        up_k_jacobi_run(&c->jref, (int)c->p.steps);
        return 0;
    default:
        return 0;
    }
}

int par_case_verify(par_case *c, double *rel_error, char *err, size_t errlen)
{
    *rel_error = 0;
    if (c->run_rc)
        return fail(err, errlen, "the run failed (out of memory?)");
    if (!c->has_ref) {
        if (make_reference(c))
            return fail(err, errlen, "no memory for the sequential reference");
        c->has_ref = 1;
    }
    size_t n = (size_t)c->p.n;
    int n_int = (int)c->p.n;
    switch (c->p.kernel) {
    case PAR_K_FIB:
        if (up_k_fib_verify(n_int, c->result)) {
            snprintf(err, errlen, "fib(%d) = %llu, expected %llu", n_int,
                     (unsigned long long)c->result, (unsigned long long)up_k_fib_iter(n_int));
            return -1;
        }
        return 0;
    case PAR_K_NQUEENS:
        if (up_k_nqueens_verify(n_int, c->result)) {
            snprintf(err, errlen, "nqueens(%d) = %llu, expected %llu", n_int,
                     (unsigned long long)c->result, (unsigned long long)up_k_nqueens_known(n_int));
            return -1;
        }
        return 0;
    case PAR_K_MSORT:
        return up_k_msort_verify(&c->sig, c->a, n)
                   ? fail(err, errlen, "msort: not a sorted permutation of the input")
                   : 0;
    case PAR_K_SPARSELU:
        *rel_error = up_k_slu_rel_error(&c->work, &c->ref);
        break;
    case PAR_K_STRASSEN:
        *rel_error = up_k_rel_error(c->mc, c->mref, n * n);
        break;
    case PAR_K_JACOBI:
        *rel_error = up_k_rel_error(up_k_jacobi_result(&c->jac, (int)c->p.steps),
                                    up_k_jacobi_result(&c->jref, (int)c->p.steps),
                                    up_k_jacobi_cells(&c->jac));
        break;
    case PAR_K_TASKBENCH:
        return up_k_tb_verify(&c->tb)
                   ? fail(err, errlen, "taskbench: a point does not match its dependencies")
                   : 0;
    default:
        return fail(err, errlen, "unknown kernel");
    }
    if (!(*rel_error <= PAR_MAX_REL_ERROR)) {
        snprintf(err, errlen, "%s: relative error %g > %g", par_kernel_name(c->p.kernel),
                 *rel_error, PAR_MAX_REL_ERROR);
        return -1;
    }
    return 0;
}

/* nqueens: every placement on rows 1..par_cut.nq_task_rows is a task. */
static uint64_t nq_tasks(const up_k_nq_state *s)
{
    if (!par_nq_spawns(s))
        return 0;
    uint64_t t = 0;
    for (uint32_t free = up_k_nq_free(s); free; free &= free - 1) {
        up_k_nq_state c = up_k_nq_place(s, free & -free);
        t += 1 + nq_tasks(&c);
    }
    return t;
}

/* Merge sort's tasks if every merge split halved its run: the split
 * points depend on the data, so this is an estimate. */
static uint64_t merge_tasks(double n)
{
    return n <= (double)par_cut.merge ? 0 : 2 + 2 * merge_tasks(n / 2);
}

static uint64_t msort_tasks(double n)
{
    return n <= (double)par_cut.msort ? 0 : 2 + 2 * msort_tasks(n / 2) + merge_tasks(n);
}

static uint64_t strassen_tasks(size_t n)
{
    if (!par_strassen_spawns(n))
        return 0;
    return 7 + 7 * strassen_tasks(n / 2) +
           (par_strassen_join_spawns(n) ? PAR_STRASSEN_JOIN_TASKS : 0);
}

uint64_t par_case_tasks(const par_case *c)
{
    switch (c->p.kernel) {
    case PAR_K_FIB:
        return up_k_fib_calls((int)c->p.n);
    case PAR_K_NQUEENS: {
        up_k_nq_state s = up_k_nq_start((int)c->p.n);
        return nq_tasks(&s);
    }
    case PAR_K_MSORT:
        return msort_tasks((double)c->p.n);
    case PAR_K_STRASSEN:
        return strassen_tasks((size_t)c->p.n);
    case PAR_K_TASKBENCH:
        return (uint64_t)c->p.n * (uint64_t)c->p.steps;
    default:
        return 0;
    }
}

void par_case_free(par_case *c)
{
    free(c->input);
    free(c->a);
    free(c->tmp);
    up_k_slu_free(&c->orig);
    up_k_slu_free(&c->work);
    up_k_slu_free(&c->ref);
    free(c->ma);
    free(c->mb);
    free(c->mc);
    free(c->mref);
    up_k_jacobi_free(&c->jac);
    up_k_jacobi_free(&c->jref);
    up_k_tb_free(&c->tb);
    memset(c, 0, sizeof *c);
}
