/* The environment registry (runtime/src/env_registry.c): the table is
 * well formed (no name twice, names in upper case, prefixes ending in _,
 * reserved names UP_ ones, a meaning for each); lookups cover exact names
 * and prefix families only; up__env is getenv; every variable the pool
 * prints in UP_PRINT_CONFIG's block, and every variable the parallel
 * layer's parser asks for, is registered for that layer, and every pool
 * UP_* variable of the table is one the pool prints; in UP_DEBUG builds
 * up__env aborts on a name the table lacks or reserves for the tools.
 *
 * With --list it prints the table instead, one "NAME LAYERS" line per
 * entry (a prefix as NAME*, LAYERS as pool,parallel,openmp,mpi or - for a
 * reserved name), for test_env_docs (check_env_docs.sh), which compares
 * it with docs/env.md. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "debug.h" /* UP_DEBUG_LEVEL */
#include "env_registry.h"
#include "par_env.h"
#include "pool_internal.h"

static int list(void)
{
    for (size_t i = 0; i < up__env_nvars; i++) {
        const up__env_var *v = &up__env_vars[i];
        char layers[64];
        up__env_layer_names(v->layers, layers, sizeof layers);
        printf("%s%s %s\n", v->name, v->flags & UP__ENV_PREFIX ? "*" : "", layers);
    }
    return 0;
}

static void check_table(void)
{
    CHECK(up__env_nvars > 0);
    for (size_t i = 0; i < up__env_nvars; i++) {
        const up__env_var *v = &up__env_vars[i];
        size_t len = strlen(v->name);
        CHECK(len > 0);
        for (const char *c = v->name; *c; c++)
            CHECK((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
        if (v->flags & UP__ENV_PREFIX)
            CHECK(v->name[len - 1] == '_');
        /* Reserved names keep the unknown-name warning away from the
         * tools' UP_* knobs; other software's names need no reserving. */
        if (v->layers == 0)
            CHECK(!strncmp(v->name, "UP_", 3));
        /* Suggestions are variables a library reads. */
        if (v->flags & UP__ENV_SUGGEST)
            CHECK(v->layers != 0 && !strncmp(v->name, "UP_", 3) && !(v->flags & UP__ENV_PREFIX));
        CHECK(v->meaning && *v->meaning && !strchr(v->meaning, '\n'));
        for (size_t j = 0; j < i; j++)
            if (!strcmp(v->name, up__env_vars[j].name)) {
                fprintf(stderr, "%s is in the table twice\n", v->name);
                CHECK(0);
            }
        /* Every name finds its own entry, not an earlier prefix's. */
        CHECK(up__env_lookup(v->name) == v);
    }
}

static void check_lookup(void)
{
    CHECK(up__env_lookup("UP_SHARDS") != NULL);
    CHECK(up__env_lookup("UP_SHARDS")->layers == UP__ENV_POOL);
    CHECK(up__env_lookup("OMP_PROC_BIND")->layers == (UP__ENV_POOL | UP__ENV_OPENMP));
    CHECK(up__env_lookup("UP_TEST_SCALE") == up__env_lookup("UP_TEST_"));
    CHECK(up__env_lookup("UP_TEST_SCALE")->layers == 0);
    CHECK(up__env_lookup("UP_BENCH_ROUNDS") != NULL);
    CHECK(up__env_lookup("UP_TEST") == NULL);
    CHECK(up__env_lookup("UP_SHARDSX") == NULL);
    CHECK(up__env_lookup("UP_SHARD") == NULL);
    CHECK(up__env_lookup("up_shards") == NULL);
    CHECK(up__env_lookup("PATH") == NULL);
    CHECK(up__env_lookup("LD_LIBRARY_PATH") == NULL);
    CHECK(up__env_lookup("") == NULL);

    CHECK(setenv("UP_SHARDS", "3", 1) == 0);
    CHECK(up__env("UP_SHARDS") && !strcmp(up__env("UP_SHARDS"), "3"));
    CHECK(unsetenv("UP_SHARDS") == 0);
    CHECK(up__env("UP_SHARDS") == NULL);
}

/* The variables of UP_PRINT_CONFIG's block (its NAME=value lines, before
 * the parallel layer's part) are the pool's variables of the table. */
static void check_pool_names(void)
{
    up_config cfg;
    CHECK(up_config_init(&cfg) == UP_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f);
    up__print_config(&cfg, NULL, f);
    fclose(f);
    unsigned printed = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (!strncmp(line, "# parallel layer", 16))
            break;
        size_t eq = strcspn(line, "=\n");
        if (line[0] != '#' && eq < n) {
            char name[64];
            CHECK(eq < sizeof name);
            memcpy(name, line, eq);
            name[eq] = '\0';
            const up__env_var *v = up__env_lookup(name);
            if (!v || !(v->layers & UP__ENV_POOL)) {
                fprintf(stderr, "UP_PRINT_CONFIG prints %s, which the table lacks for the pool\n",
                        name);
                CHECK(0);
            }
            printed++;
        }
        line = nl ? nl + 1 : line + n;
    }
    unsigned registered = 0;
    for (size_t i = 0; i < up__env_nvars; i++) {
        const up__env_var *v = &up__env_vars[i];
        if ((v->layers & UP__ENV_POOL) && !strncmp(v->name, "UP_", 3)) {
            registered++;
            if (!strstr(text, v->name)) {
                fprintf(stderr, "the table lists %s for the pool, which UP_PRINT_CONFIG lacks\n",
                        v->name);
                CHECK(0);
            }
        }
    }
    CHECK_EQ(printed, registered);
    free(text);
}

/* Every name the parallel layer's parser asks for is registered for it. */
static unsigned asked;
static const char *recording_getenv(const char *name)
{
    const up__env_var *v = up__env_lookup(name);
    if (!v || !(v->layers & UP__ENV_PARALLEL)) {
        fprintf(stderr, "the parallel layer reads %s, which the table lacks for it\n", name);
        CHECK(0);
    }
    asked++;
    return NULL;
}

static void check_layer_names(void)
{
    par_env e;
    par_env_parse(&e, recording_getenv);
    CHECK(asked >= 10); /* five UP_* variables and their OMP_* stand-ins */
}

#if UP_DEBUG_LEVEL >= 1
/* UP_DEBUG builds: up__env on a name the table lacks, or reserves for the
 * tools, is a broken invariant. */
static void expect_abort(const char *name)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        fclose(stderr); /* the expected assertion message */
        (void)up__env(name);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--list"))
        return list();
    check_table();
    check_lookup();
    check_pool_names();
    check_layer_names();
#if UP_DEBUG_LEVEL >= 1
    expect_abort("UP_NOT_A_VARIABLE");
    expect_abort("UP_TEST_SCALE");
    expect_abort("LD_LIBRARY_PATH");
    printf("test_env_registry: up__env asserts registration (UP_DEBUG level %d)\n", UP_DEBUG_LEVEL);
#endif
    printf("test_env_registry: %zu entries, OK\n", up__env_nvars);
    return 0;
}
