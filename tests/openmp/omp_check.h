/* Shared by the OpenMP tests: each runs under ultrapool's libgomp.so.1
 * (found by its marker symbol) or fails, and counts its failures. */
#ifndef OMP_CHECK_H
#define OMP_CHECK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int omp_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (omp_failures++ < 20) {                                                             \
                fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void omp_require_ultrapool(void)
{
    if (!dlsym(RTLD_DEFAULT, "up_gomp_runtime") && !getenv("OMP_TEST_ANY_RUNTIME")) {
        fprintf(stderr, "not running on ultrapool's libgomp (up_gomp_runtime not found)\n");
        exit(1);
    }
}

static int omp_report(const char *name)
{
    if (omp_failures) {
        fprintf(stderr, "%s: %d failures\n", name, omp_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

#endif
