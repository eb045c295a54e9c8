/* Shared by the OpenMP tests: they run on ultrapool's libgomp.so.1 (ctest
 * puts its folder first on LD_LIBRARY_PATH) and say so, else fail. Two
 * kinds of check: CHECK (tests/common/check.h) stops at the first
 * failure; EXPECT counts failures (printing the first 20 with a message)
 * so that a test reports every broken case, and omp_report turns the
 * count into the exit code. */
#ifndef OMP_CHECK_H
#define OMP_CHECK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/check.h" /* CHECK: the project's, stops at the first failure */

static int omp_failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (omp_failures++ < 20) {                                                             \
                fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static inline int omp_report(const char *name)
{
    if (omp_failures) {
        fprintf(stderr, "%s: %d failures\n", name, omp_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* OpenMP's threads live until exit: the process's pool is never destroyed,
 * so workers that retired before exit are never joined (each test program
 * has one translation unit that includes this). */
#if defined(__SANITIZE_THREAD__)
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "report_thread_leaks=0"; }
#endif

/* OMP_TEST_ANY_RUNTIME=1 lets a test run on another libgomp.so.1 (to
 * compare with GCC's own), where it would otherwise refuse. */
static inline void require_ultrapool(void)
{
    if (!dlsym(RTLD_DEFAULT, "up_gomp_runtime") && !getenv("OMP_TEST_ANY_RUNTIME")) {
        fprintf(stderr, "not running on ultrapool's libgomp.so.1 (LD_LIBRARY_PATH?)\n");
        exit(1);
    }
}

#endif
