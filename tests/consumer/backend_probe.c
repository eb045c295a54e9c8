/* Which OpenMP backend module a program built against the installed tree
 * loads: selects the backend named by argv[1] (gomp or llvm), runs a
 * region on it and prints "loaded: FILE" with the module's file, or
 * "error: MESSAGE" (up_last_error) and exits 2. run.sh checks where the
 * file came from and which folders the message lists. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dl_iterate_phdr (loaded_image.h) */
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <ultrapool/parallel.h>

#include "loaded_image.h" /* tests/common */

static atomic_int members;
static void region(void *arg)
{
    (void)arg;
    atomic_fetch_add(&members, 1);
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "gomp";
    up_backend b = strcmp(name, "llvm") ? UP_BACKEND_GOMP : UP_BACKEND_LLVM;
    if (up_set_backend(b) != UP_OK) {
        printf("error: %s\n", up_last_error());
        return 2;
    }
    up_pool *pool;
    if (up_pool_create(&pool, NULL) != UP_OK || up_parallel(pool, 2, region, NULL) != UP_OK ||
        atomic_load(&members) < 1) {
        printf("error: the region did not run: %s\n", up_last_error());
        return 1;
    }
    up_pool_destroy(pool);
    char file[1024];
    loaded_image("libultrapool_omp_", file, sizeof file);
    printf("loaded: %s\n", file);
    return 0;
}
