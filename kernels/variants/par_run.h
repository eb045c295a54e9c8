/* One kernel prepared for timed runs on the linked variant: inputs made
 * once, reset before every run (untimed), the run timed, the result
 * checked. The benchmark child and the kernel test share it. */
#ifndef UP_PAR_RUN_H
#define UP_PAR_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "par_common.h"

typedef struct par_params {
    par_kernel kernel;
    long n;         /* fib/nqueens: n; msort: elements; sparselu: blocks per
                       side; strassen, jacobi: matrix side; taskbench: width */
    long block;     /* sparselu, jacobi: block side */
    long steps;     /* jacobi: sweeps; taskbench: time steps */
    int pattern;    /* taskbench */
    int loop;       /* taskbench: 1 for the loop form (par_taskbench_loop) */
    uint64_t iters; /* taskbench: body iterations per task */
    uint64_t seed;
} par_params;

typedef struct par_case {
    par_params p;
    uint64_t result;          /* fib, nqueens */
    int32_t *input, *a, *tmp; /* msort */
    up_k_msort_sig sig;
    up_k_slu orig, work, ref;    /* sparselu */
    double *ma, *mb, *mc, *mref; /* strassen */
    up_k_jacobi jac, jref;       /* jacobi */
    up_k_tb tb;                  /* taskbench */
    int has_ref, run_rc;
} par_case;

/* Makes the inputs. 0, or -1 with a message in err. */
int par_case_prepare(par_case *c, const par_params *p, char *err, size_t errlen);
/* Resets the inputs, then runs the kernel on the variant; *ns gets the
 * time of the run alone. 0, or -1 when the run itself failed. */
int par_case_run(par_case *c, uint64_t *ns);
/* Checks the last run: 0, or -1 with what was wrong in err. The
 * floating-point kernels compare against the sequential kernel
 * (relative error <= PAR_MAX_REL_ERROR); *rel_error gets the error
 * (0 for the exact kernels). */
#define PAR_MAX_REL_ERROR 1e-6
int par_case_verify(par_case *c, double *rel_error, char *err, size_t errlen);
/* Tasks a run creates, where the kernel knows (fib: one per call;
 * nqueens: one per placement above the cutoff; Strassen: seven per level
 * above it; taskbench: one per point; merge sort: an estimate, as if every
 * merge split in halves); 0 otherwise. */
uint64_t par_case_tasks(const par_case *c);
void par_case_free(par_case *c);

#endif
