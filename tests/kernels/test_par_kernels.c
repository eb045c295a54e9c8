/* Every kernel verifies on the variant this program is linked with
 * (sequential, libgomp, libomp or ultrapool; one executable per runtime):
 * fib and nqueens against known values, merge sort as a sorted
 * permutation of its input, sparse LU, Strassen and Jacobi within a
 * relative error of 1e-6 of the sequential kernel, and every Task Bench
 * pattern point by point against its dependencies. Each kernel runs
 * twice (the second run reuses what the first left behind) with 1, 2 and
 * 3 threads (3 oversubscribes this 2-core machine on purpose), the
 * recursive ones also at cutoffs coarser and finer than the defaults. The EPCC
 * overhead tests run too; they must return (no deadlock).
 *
 * Sizes are small and scale with UP_TEST_SCALE; the seed varies the
 * inputs (UP_TEST_SEED replays one). */
#include <string.h>

#include "check.h"
#include "par_common.h"
#include "par_run.h"

static long at_least(uint64_t v, long min) { return (long)v < min ? min : (long)v; }

static void check_case(const par_params *p, unsigned threads)
{
    par_case c;
    char err[200] = "";
    if (par_case_prepare(&c, p, err, sizeof err)) {
        fprintf(stderr, "prepare %s: %s\n", par_kernel_name(p->kernel), err);
        CHECK(0);
    }
    for (int r = 0; r < 2; r++) {
        uint64_t ns;
        double rel;
        CHECK_EQ(par_case_run(&c, &ns), 0);
        if (par_case_verify(&c, &rel, err, sizeof err)) {
            fprintf(stderr, "%s %s threads %u: %s\n", par_runtime, par_kernel_name(p->kernel),
                    threads, err);
            CHECK(0);
        }
        CHECK(par_team_size() >= 1 && par_team_size() <= threads);
    }
    par_case_free(&c);
}

int main(void)
{
    uint64_t seed = test_seed();
    printf("runtime %s\n", par_runtime);
    static const unsigned thread_counts[] = {1, 2, 3};
    for (unsigned ti = 0; ti < sizeof thread_counts / sizeof *thread_counts; ti++) {
        unsigned threads = thread_counts[ti];
        CHECK_EQ(par_setup(threads), 0);
        par_params p;

        for (int n = 0; n <= 18; n += 6) { /* 0, 6, 12, 18 */
            p = (par_params){.kernel = PAR_K_FIB, .n = n};
            check_case(&p, threads);
        }
        for (int n = 1; n <= 9; n++) {
            p = (par_params){.kernel = PAR_K_NQUEENS, .n = n};
            check_case(&p, threads);
        }
        /* Odd sizes, and sizes at and around the cutoffs. */
        const long sorts[] = {0,
                              1,
                              2,
                              1000,
                              par_cut.msort,
                              par_cut.msort + 1,
                              at_least(test_size("UP_TEST_PAR_SORT_N", 100003), 3 * par_cut.merge)};
        for (unsigned i = 0; i < sizeof sorts / sizeof *sorts; i++) {
            p = (par_params){.kernel = PAR_K_MSORT, .n = sorts[i], .seed = seed + i};
            check_case(&p, threads);
        }
        p = (par_params){.kernel = PAR_K_SPARSELU, .n = 9, .block = 6, .seed = seed};
        check_case(&p, threads);
        /* Twice strassen_min makes two levels of tasks (strassen_min
         * alone, one, at reduced scale); 130 makes one level of tasks
         * with the default strassen_min of 128, and its halves, 65, are
         * odd and go to the classical product. */
        long big = test_size("UP_TEST_PAR_STRASSEN_N", 512) >= 512 ? 2 * par_cut.strassen_min
                                                                   : par_cut.strassen_min;
        const long mats[] = {big, 130, 1};
        for (unsigned i = 0; i < sizeof mats / sizeof *mats; i++) {
            p = (par_params){.kernel = PAR_K_STRASSEN, .n = mats[i], .seed = seed + i};
            check_case(&p, threads);
        }
        /* A strassen_min of 66 makes three levels of tasks at 264 (264,
         * 132 and 66; the halves of 66 are odd) and, at 264 = 4 * 66, runs
         * the combination of the products as tasks of rows. */
        const par_cutoffs before = par_cut;
        par_cut.strassen_min = 66;
        CHECK(par_strassen_join_spawns(264) && !par_strassen_join_spawns(132));
        p = (par_params){.kernel = PAR_K_STRASSEN, .n = 264, .seed = seed};
        check_case(&p, threads);
        par_case counted = {.p = p}; /* 7 + 49 + 343 products, 8 row tasks */
        CHECK_EQ(par_case_tasks(&counted), 407);
        par_cut = before;
        p = (par_params){.kernel = PAR_K_JACOBI, .n = 96, .block = 16, .steps = 9, .seed = seed};
        check_case(&p, threads);
        p = (par_params){.kernel = PAR_K_JACOBI, .n = 8, .block = 8, .steps = 3, .seed = seed};
        check_case(&p, threads);
        for (int pat = 0; pat < UP_K_TB_NPATTERNS; pat++)
            for (int loop = 0; loop <= 1; loop++) { /* tasks, then the loop form */
                p = (par_params){.kernel = PAR_K_TASKBENCH,
                                 .n = 2 * (long)threads + 3,
                                 .steps = at_least(test_size("UP_TEST_PAR_TB_STEPS", 40), 4),
                                 .pattern = pat,
                                 .loop = loop,
                                 .iters = 50,
                                 .seed = seed};
                check_case(&p, threads);
            }
        /* The grain experiment's other cutoffs: coarser and finer tasks
         * than the defaults, the same checks. */
        static const par_cutoffs others[] = {{1, 4096, 8192, 256}, {8, 16, 32, 512}};
        const par_cutoffs defaults = par_cut;
        for (unsigned i = 0; i < sizeof others / sizeof *others; i++) {
            par_cut = others[i];
            p = (par_params){.kernel = PAR_K_NQUEENS, .n = 9};
            check_case(&p, threads);
            p = (par_params){.kernel = PAR_K_MSORT, .n = 3 * (long)par_cut.merge + 7, .seed = seed};
            check_case(&p, threads);
            p = (par_params){.kernel = PAR_K_STRASSEN, .n = 256, .seed = seed};
            check_case(&p, threads);
        }
        par_cut = defaults;
        for (int t = 0; t < PAR_EPCC_NTESTS; t++) {
            int rc = par_epcc((par_epcc_test)t, 50, 20);
            /* The sequential variant has the reference only. */
            CHECK(rc == 0 ||
                  (rc == -1 && t != PAR_EPCC_REFERENCE && strcmp(par_runtime, "seq") == 0));
        }
        par_teardown();
        printf("threads %u: every kernel verified\n", threads);
    }
    return 0;
}
