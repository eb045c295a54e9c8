/* The pragma variant of the kernels (kernels/variants/omp_variant.c:
 * fib, nqueens, merge sort, sparse LU, Strassen, Jacobi with
 * dependencies, each a parallel region whose single thread makes the
 * tasks), built once with gcc -fopenmp, on whichever libgomp.so.1 the
 * dynamic loader finds. same_binary.sh runs this one executable on GCC's
 * libgomp, on LLVM's libomp loaded as libgomp.so.1 and on ultrapool's.
 *
 * usage: omp_kernels RUNTIME   (libgomp, libomp or ultrapool)
 * Checks that RUNTIME is the one loaded, then runs every kernel twice at
 * small sizes with 1, 2 and 3 threads and verifies each result (fib and
 * nqueens against known values, merge sort as a sorted permutation of
 * its input, the floating-point kernels within a relative error of 1e-6
 * of the sequential kernel). Exit status 0, 1 on a wrong result or the
 * wrong runtime, 2 on bad usage. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par_common.h"
#include "par_run.h"

/* Which OpenMP runtime this process runs on: ultrapool's library defines
 * a marker, libomp its own ABI's entry points; anything else that
 * provides omp_get_num_threads is taken for GCC's libgomp. *path gets the
 * file the OpenMP calls resolve to. */
static const char *loaded_runtime(const char **path)
{
    Dl_info info;
    *path = dladdr((void *)omp_get_num_threads, &info) && info.dli_fname ? info.dli_fname : "?";
    if (dlsym(RTLD_DEFAULT, "up_gomp_runtime"))
        return "ultrapool";
    if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call"))
        return "libomp";
    return "libgomp";
}

static int failures;

static void check_case(const char *rt, const par_params *p, unsigned threads)
{
    par_case c;
    char err[200] = "";
    if (par_case_prepare(&c, p, err, sizeof err)) {
        fprintf(stderr, "prepare %s: %s\n", par_kernel_name(p->kernel), err);
        exit(2);
    }
    for (int r = 0; r < 2; r++) {
        uint64_t ns;
        double rel;
        if (par_case_run(&c, &ns)) {
            fprintf(stderr, "%s %s n=%ld threads %u: the run failed\n", rt,
                    par_kernel_name(p->kernel), p->n, threads);
            failures++;
        } else if (par_case_verify(&c, &rel, err, sizeof err)) {
            fprintf(stderr, "%s %s n=%ld threads %u: %s\n", rt, par_kernel_name(p->kernel), p->n,
                    threads, err);
            failures++;
        } else if (par_team_size() != threads) {
            /* Dynamic adjustment is off (par_setup): a region gets the
             * team it asked for on every runtime. */
            fprintf(stderr, "%s %s threads %u: a team of %u\n", rt, par_kernel_name(p->kernel),
                    threads, par_team_size());
            failures++;
        }
    }
    par_case_free(&c);
}

int main(int argc, char **argv)
{
    if (argc != 2 ||
        (strcmp(argv[1], "libgomp") && strcmp(argv[1], "libomp") && strcmp(argv[1], "ultrapool"))) {
        fprintf(stderr, "usage: omp_kernels libgomp|libomp|ultrapool\n");
        return 2;
    }
    const char *path, *rt = loaded_runtime(&path);
    printf("runtime %s (%s)\n", rt, path);
    if (strcmp(rt, argv[1])) {
        fprintf(stderr, "expected to run on %s, but the OpenMP calls go to %s (%s)\n", argv[1], rt,
                path);
        return 1;
    }
    uint64_t seed = 12345;
    for (unsigned threads = 1; threads <= 3; threads++) {
        if (par_setup(threads))
            return 1;
        par_params p;
        for (int n = 0; n <= 20; n += 5) {
            p = (par_params){.kernel = PAR_K_FIB, .n = n};
            check_case(rt, &p, threads);
        }
        for (int n = 1; n <= 9; n += 4) {
            p = (par_params){.kernel = PAR_K_NQUEENS, .n = n};
            check_case(rt, &p, threads);
        }
        const long sorts[] = {0, 1, 1000, 100003};
        for (unsigned i = 0; i < sizeof sorts / sizeof *sorts; i++) {
            p = (par_params){.kernel = PAR_K_MSORT, .n = sorts[i], .seed = seed + i};
            check_case(rt, &p, threads);
        }
        p = (par_params){.kernel = PAR_K_SPARSELU, .n = 9, .block = 6, .seed = seed};
        check_case(rt, &p, threads);
        /* 256: two levels of tasks at the default cutoff (128); 130: one,
         * whose odd halves go to the classical product. */
        const long mats[] = {256, 130};
        for (unsigned i = 0; i < sizeof mats / sizeof *mats; i++) {
            p = (par_params){.kernel = PAR_K_STRASSEN, .n = mats[i], .seed = seed + i};
            check_case(rt, &p, threads);
        }
        p = (par_params){.kernel = PAR_K_JACOBI, .n = 96, .block = 16, .steps = 9, .seed = seed};
        check_case(rt, &p, threads);
        par_teardown();
        if (failures)
            break;
        printf("%s threads %u: fib nqueens msort sparselu strassen jacobi verified\n", rt, threads);
    }
    return failures ? 1 : 0;
}
