/* Names shared by the benchmark child, the driver and the tests. */
#ifndef UP_PAR_COMMON_H
#define UP_PAR_COMMON_H

#include "par_variant.h"

typedef enum par_kernel {
    PAR_K_FIB,
    PAR_K_NQUEENS,
    PAR_K_MSORT,
    PAR_K_SPARSELU,
    PAR_K_STRASSEN,
    PAR_K_JACOBI,
    PAR_K_TASKBENCH,
    PAR_K_NKERNELS
} par_kernel;

/* Names and their inverses (-1 for an unknown name). */
const char *par_kernel_name(par_kernel k);
int par_kernel_parse(const char *name);
const char *par_epcc_name(par_epcc_test t);
int par_epcc_parse(const char *name);

#endif
