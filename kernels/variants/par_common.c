/* What every variant shares: the delay sink, the cutoffs and the names of the kernels
 * and of the EPCC tests. */
#include "par_common.h"

#include <string.h>

_Thread_local uint64_t par_sink;
par_cutoffs par_cut = PAR_CUTOFFS_DEFAULT;

static const char *const kernel_names[PAR_K_NKERNELS] = {
    "fib", "nqueens", "msort", "sparselu", "strassen", "jacobi", "taskbench"};
static const char *const epcc_names[PAR_EPCC_NTESTS] = {
    "reference", "parallel_task", "master_task", "taskwait", "depend", "taskloop", "parallel_for"};

static int lookup(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *par_kernel_name(par_kernel k)
{
    return k >= 0 && k < PAR_K_NKERNELS ? kernel_names[k] : "?";
}

int par_kernel_parse(const char *name) { return lookup(kernel_names, PAR_K_NKERNELS, name); }

const char *par_epcc_name(par_epcc_test t)
{
    return t >= 0 && t < PAR_EPCC_NTESTS ? epcc_names[t] : "?";
}

int par_epcc_parse(const char *name) { return lookup(epcc_names, PAR_EPCC_NTESTS, name); }
