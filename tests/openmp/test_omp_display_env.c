/* OMP_DISPLAY_ENV=true|verbose and omp_display_env print libgomp's block
 * on stderr: the same lines in the same order. The program runs itself
 * with the variable set (mode "child") and reads what it printed. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "omp_check.h"

static const char *const lines[] = {"\nOPENMP DISPLAY ENVIRONMENT BEGIN\n",
                                    "  _OPENMP = '201511'\n",
                                    "  OMP_DYNAMIC = 'FALSE'\n",
                                    "  OMP_NESTED = 'TRUE'\n",
                                    "  OMP_NUM_THREADS = '3,2'\n",
                                    "  OMP_SCHEDULE = 'GUIDED,4'\n",
                                    "  OMP_PROC_BIND = 'FALSE'\n",
                                    "  OMP_PLACES = ''\n",
                                    "  OMP_STACKSIZE = '2097152'\n",
                                    "  OMP_WAIT_POLICY = 'PASSIVE'\n",
                                    "  OMP_THREAD_LIMIT = '4294967295'\n",
                                    "  OMP_MAX_ACTIVE_LEVELS = '255'\n",
                                    "  OMP_NUM_TEAMS = '0'\n",
                                    "  OMP_TEAMS_THREAD_LIMIT = '0'\n",
                                    "  OMP_CANCELLATION = 'FALSE'\n",
                                    "  OMP_DEFAULT_DEVICE = '0'\n",
                                    "  OMP_MAX_TASK_PRIORITY = '0'\n",
                                    "  OMP_DISPLAY_AFFINITY = 'FALSE'\n",
                                    "  OMP_AFFINITY_FORMAT = 'level %L thread %i affinity %A'\n",
                                    "  OMP_ALLOCATOR = 'omp_default_mem_alloc'\n",
                                    "  OMP_TARGET_OFFLOAD = 'DEFAULT'\n",
                                    NULL};
static const char *const verbose[] = {"  GOMP_CPU_AFFINITY = ''\n",
                                      "  GOMP_STACKSIZE = '2097152'\n",
                                      "  GOMP_SPINCOUNT = '300000'\n", NULL};
static const char *const end = "OPENMP DISPLAY ENVIRONMENT END\n";

/* The block's lines follow each other from the first one on. */
static const char *block(const char *out, int with_verbose)
{
    const char *p = strstr(out, lines[0]);
    CHECK(p);
    for (const char *const *l = lines; *l; l++) {
        if (strncmp(p, *l, strlen(*l))) {
            fprintf(stderr, "expected %s at: %.80s\n", *l, p);
            exit(1);
        }
        p += strlen(*l);
    }
    for (const char *const *l = verbose; with_verbose && *l; l++) {
        CHECK(!strncmp(p, *l, strlen(*l)));
        p += strlen(*l);
    }
    CHECK(!strncmp(p, end, strlen(end)));
    return p + strlen(end);
}

static void run(const char *self, const char *value, int nblocks, int with_verbose)
{
    char cmd[512], out[16384];
    snprintf(cmd, sizeof cmd,
             "env OMP_DISPLAY_ENV=%s OMP_NUM_THREADS=3,2 OMP_SCHEDULE=guided,4 "
             "OMP_STACKSIZE=2M '%s' child 2>&1",
             value, self);
    FILE *p = popen(cmd, "r");
    CHECK(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    CHECK(pclose(p) == 0);
    printf("--- OMP_DISPLAY_ENV=%s:\n%s", value, out);
    const char *at = out;
    for (int i = 0; i < nblocks; i++)
        at = block(at, with_verbose && i == 0);
    CHECK(strstr(at, "child ok"));
}

int main(int argc, char **argv)
{
    require_ultrapool();
    if (argc > 1) {
        /* omp_display_env shows the initial values, also from a region. */
#pragma omp parallel num_threads(2)
        {
#pragma omp master
            {
                omp_set_num_threads(7);
                fflush(stdout);
                omp_display_env(0);
            }
        }
        printf("child ok\n");
        return 0;
    }
    run(argv[0], "true", 2, 0);
    run(argv[0], "verbose", 2, 1);
    run(argv[0], "false", 1, 0);
    printf("ok\n");
    return 0;
}
