/* Choosing a backend that cannot be had is an error that says why, never
 * a silent fallback:
 *   - UP_BACKEND with a word that is no backend: every int-returning call
 *     of parallel.h fails with UP_EINVAL and a message naming UP_BACKEND
 *     (argv[1] "bad-env", run by ctest with UP_BACKEND=openmp);
 *   - up_set_backend with a value that is no up_backend, or inside a
 *     region: UP_EINVAL, and the backend stays;
 *   - a backend whose module is not built (the sanitizer trees build none):
 *     UP_EINVAL naming the module; with both built, switching from one
 *     OpenMP runtime to the other is refused, naming the one loaded;
 *   - up_set_backend(UP_BACKEND_ULTRAPOOL) always works, and recovers a
 *     process whose UP_BACKEND failed;
 *   - UP_BACKEND_PATH (argv[1] "backend-path"): an empty folder is tried
 *     first and named in the error; a malformed value is an error naming
 *     the variable; a folder holding a copy of the module is where it is
 *     loaded from.
 * UP_TEST_BACKENDS (ctest) lists the modules this tree built,
 * UP_TEST_MODULE_DIR the folder they are in. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ultrapool/parallel.h>

#include "check.h"
#include "loaded_image.h"

static _Atomic int ran;
static void region(void *arg)
{
    (void)arg;
    atomic_store(&ran, 1);
}
static void body(int64_t lo, int64_t hi, void *ctx) { (void)lo, (void)hi, (void)ctx; }
static void task(void *arg) { (void)arg; }

static void inside(void *arg)
{
    int *rc = arg;
    if (up_master())
        *rc = up_set_backend(UP_BACKEND_ULTRAPOOL);
}

static int built(const char *name)
{
    const char *list = getenv("UP_TEST_BACKENDS");
    return list && strstr(list, name) != NULL;
}

static void expect_error(int rc, const char *who, const char *what)
{
    CHECK_EQ(rc, UP_EINVAL);
    const char *e = up_last_error();
    if (strncmp(e, who, strlen(who)) != 0 || !strstr(e, what)) {
        fprintf(stderr, "error \"%s\": expected \"%s: ...%s...\"\n", e, who, what);
        exit(1);
    }
}

/* ---- UP_BACKEND_PATH ---------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    CHECK(in && out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK_EQ(fwrite(buf, 1, n, out), n);
    CHECK_EQ(fclose(in), 0);
    CHECK_EQ(fclose(out), 0);
}

static int backend_path(up_pool *pool)
{
    if (!getenv("UP_TEST_BACKENDS")) {
        fprintf(stderr, "UP_TEST_BACKENDS (the modules built, set by ctest) is not set\n");
        return 77;
    }
    const up_backend omp[2] = {UP_BACKEND_GOMP, UP_BACKEND_LLVM};
    up_backend b = built("gomp") || !built("llvm") ? omp[0] : omp[1];
    const char *name = up_backend_name(b);
    char module[64];
    snprintf(module, sizeof module, "libultrapool_omp_%s.so", name);
    char empty[] = "/tmp/up_backend_path_XXXXXX", full[] = "/tmp/up_backend_path_XXXXXX";
    CHECK(mkdtemp(empty) && mkdtemp(full));

    /* Malformed: relative, empty, an empty entry. Before any load: a
     * module once loaded stays, and is not looked for again. */
    const char *bad[] = {"lib/ultrapool", "", "/tmp::/usr/lib"};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(setenv("UP_BACKEND_PATH", bad[i], 1), 0);
        int rc = up_set_backend(b);
        printf("UP_BACKEND_PATH=\"%s\": %d \"%s\"\n", bad[i], rc, up_last_error());
        expect_error(rc, "up_set_backend", "UP_BACKEND_PATH=\"");
        CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);
    }

    const char *dir = getenv("UP_TEST_MODULE_DIR");
    if (!built(name) || !dir) {
        /* No module anywhere: the empty folder is tried and named, with
         * the others. (Where the module is built, the build tree's folder
         * comes after UP_BACKEND_PATH and has it; tests/consumer/run.sh
         * checks the message against an installed library.) */
        CHECK_EQ(setenv("UP_BACKEND_PATH", empty, 1), 0);
        int rc = up_set_backend(b);
        printf("UP_BACKEND_PATH=%s: %d \"%s\"\n", empty, rc, up_last_error());
        expect_error(rc, "up_set_backend", module);
        expect_error(rc, "up_set_backend", empty);
        CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);
    } else {
        /* A copy of the module in the second folder, which no other rule
         * would find: loaded from there, the empty folder tried first. */
        char from[1024], to[1024], path[2100], loaded[1024] = "";
        snprintf(from, sizeof from, "%s/%s", dir, module);
        snprintf(to, sizeof to, "%s/%s", full, module);
        copy_file(from, to);
        snprintf(path, sizeof path, "%s:%s", empty, full);
        CHECK_EQ(setenv("UP_BACKEND_PATH", path, 1), 0);
        int rc = up_set_backend(b);
        printf("UP_BACKEND_PATH=%s: %d \"%s\"\n", path, rc, rc ? up_last_error() : "");
        CHECK_EQ(rc, UP_OK);
        atomic_store(&ran, 0);
        CHECK_EQ(up_parallel(pool, 2, region, NULL), UP_OK);
        CHECK_EQ(atomic_load(&ran), 1);
        loaded_image("libultrapool_omp_", loaded, sizeof loaded);
        printf("loaded %s\n", loaded);
        CHECK(!loaded[0] || !strcmp(loaded, to));
        CHECK_EQ(up_set_backend(UP_BACKEND_ULTRAPOOL), UP_OK);
        CHECK_EQ(unlink(to), 0);
    }
    CHECK_EQ(rmdir(empty), 0);
    CHECK_EQ(rmdir(full), 0);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}

int main(int argc, char **argv)
{
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    if (argc > 1 && !strcmp(argv[1], "bad-env")) {
        expect_error(up_parallel(pool, 2, region, NULL), "up_parallel", "UP_BACKEND=\"openmp\"");
        CHECK_EQ(atomic_load(&ran), 0);
        expect_error(up_parallel_for(pool, 0, 10, NULL, body, NULL), "up_parallel_for",
                     "UP_BACKEND");
        expect_error(up_for(0, 10, NULL, body, NULL), "up_for", "UP_BACKEND");
        expect_error(up_task(task, NULL, NULL), "up_task", "UP_BACKEND");
        char payload[4] = {0};
        up_dep dep = {payload, UP_DEP_OUT};
        expect_error(up_task_copy(task, payload, sizeof payload, NULL), "up_task_copy",
                     "UP_BACKEND");
        expect_error(up_task_deps(task, NULL, &dep, 1, NULL), "up_task_deps", "UP_BACKEND");
        expect_error(up_task_deps_copy(task, payload, sizeof payload, &dep, 1, NULL),
                     "up_task_deps_copy", "UP_BACKEND");
        double v = 1;
        expect_error(up_reduce(&v, UP_RED_SUM, UP_RED_DOUBLE), "up_reduce", "UP_BACKEND");
        CHECK_EQ(up_set_backend(UP_BACKEND_ULTRAPOOL), UP_OK);
        CHECK_EQ(up_parallel(pool, 2, region, NULL), UP_OK);
        CHECK_EQ(atomic_load(&ran), 1);
        CHECK_EQ(up_pool_destroy(pool), UP_OK);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "env-case")) {
        /* UP_BACKEND's word in any case (ctest sets "UltraPool"). */
        CHECK_EQ(up_parallel(pool, 2, region, NULL), UP_OK);
        CHECK_EQ(atomic_load(&ran), 1);
        CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);
        CHECK_EQ(up_pool_destroy(pool), UP_OK);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "backend-path"))
        return backend_path(pool);
    if (!getenv("UP_TEST_BACKENDS")) {
        fprintf(stderr, "UP_TEST_BACKENDS (the modules built, set by ctest) is not set\n");
        return 77;
    }
    CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);
    expect_error(up_set_backend((up_backend)3), "up_set_backend", "not an up_backend");
    expect_error(up_set_backend((up_backend)-1), "up_set_backend", "not an up_backend");
    int rc = 0;
    CHECK_EQ(up_parallel(pool, 2, inside, &rc), UP_OK);
    CHECK_EQ(rc, UP_EINVAL);
    CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);

    const up_backend omp[2] = {UP_BACKEND_GOMP, UP_BACKEND_LLVM};
    const char *module[2] = {"libultrapool_omp_gomp", "libultrapool_omp_llvm"};
    for (int i = 0; i < 2; i++)
        if (!built(up_backend_name(omp[i]))) {
            expect_error(up_set_backend(omp[i]), "up_set_backend", module[i]);
            CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);
        }
    if (built("gomp") && built("llvm")) {
        CHECK_EQ(up_set_backend(UP_BACKEND_GOMP), UP_OK);
        CHECK_EQ(up_parallel(pool, 2, region, NULL), UP_OK);
        expect_error(up_set_backend(UP_BACKEND_LLVM), "up_set_backend",
                     "libgomp is already loaded");
        CHECK_EQ(up_get_backend(), UP_BACKEND_GOMP);
        CHECK_EQ(up_set_backend(UP_BACKEND_ULTRAPOOL), UP_OK);
        CHECK_EQ(up_get_backend(), UP_BACKEND_ULTRAPOOL);
        CHECK_EQ(up_set_backend(UP_BACKEND_GOMP), UP_OK); /* loaded once, kept */
        CHECK_EQ(up_set_backend(UP_BACKEND_ULTRAPOOL), UP_OK);
    }
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
