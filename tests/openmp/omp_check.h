/* Shared by the OpenMP tests: they run on ultrapool's libgomp.so.1 (ctest
 * puts its folder first on LD_LIBRARY_PATH) and say so, else fail. */
#ifndef OMP_CHECK_H
#define OMP_CHECK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* OpenMP's threads live until exit: the process's pool is never destroyed,
 * so workers that retired before exit are never joined (each test program
 * has one translation unit that includes this). */
#if defined(__SANITIZE_THREAD__)
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "report_thread_leaks=0"; }
#endif

static inline void require_ultrapool(void)
{
    if (!dlsym(RTLD_DEFAULT, "up_gomp_runtime")) {
        fprintf(stderr, "not running on ultrapool's libgomp.so.1 (LD_LIBRARY_PATH?)\n");
        exit(1);
    }
}

#endif
