/* OpenMP's environment: valid values set the ICVs as libgomp does; a
 * malformed value is reported on stderr and ignored, the default stays,
 * and the regions still compute the right answer. The program runs itself
 * under each environment (with "child") to see its stderr too. */
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omp_check.h"

static long region_sum(int n)
{
    long sum = 0;
#pragma omp parallel for reduction(+ : sum) num_threads(2)
    for (int i = 1; i <= n; i++)
        sum += i;
    return sum;
}

/* The defaults, whatever the malformed variables said. */
static void child_bad(void)
{
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    CHECK(k == omp_sched_dynamic && c == 1);
    CHECK(omp_get_max_threads() == omp_get_num_procs());
    CHECK(omp_get_max_active_levels() == 1);
    CHECK(omp_get_thread_limit() == INT_MAX);
    CHECK(omp_get_dynamic() == 0);
    CHECK(omp_get_cancellation() == 0);
    CHECK(omp_get_max_task_priority() == 0);
    CHECK(omp_get_proc_bind() == omp_proc_bind_false);
    CHECK(omp_get_default_device() == 0);
    CHECK(region_sum(1000) == 500500);
    int n = 0;
#pragma omp parallel
    {
#pragma omp atomic
        n++;
    }
    CHECK(n == omp_get_num_procs());
}

static void child_good(void)
{
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    CHECK(k == (omp_sched_t)(omp_sched_guided | omp_sched_monotonic) && c == 7);
    CHECK(omp_get_max_threads() == 3);
    CHECK(omp_get_max_active_levels() == 2);
    CHECK(omp_get_thread_limit() == 4);
    CHECK(omp_get_dynamic() == 0);
    CHECK(omp_get_cancellation() == 1);
    CHECK(omp_get_max_task_priority() == 9);
    CHECK(omp_get_proc_bind() == omp_proc_bind_spread);
    int inner[3] = {0, 0, 0}, total = 0;
#pragma omp parallel
    {
        CHECK(omp_get_num_threads() == 3);
        CHECK(omp_get_max_threads() == 2);                 /* the list's next level */
        CHECK(omp_get_proc_bind() == omp_proc_bind_close); /* the bind list's too */
        int me = omp_get_thread_num();
#pragma omp parallel
        {
#pragma omp atomic
            inner[me]++;
        }
    }
    /* The thread limit (4) bounds all the threads at once: 3 outer ones,
     * so the inner teams have 1 or 2 members each and at most 4 in all
     * when they overlap; each is a full region, never more than asked. */
    for (int i = 0; i < 3; i++) {
        CHECK(inner[i] >= 1 && inner[i] <= 2);
        total += inner[i];
    }
    CHECK(total >= 3 && total <= 6);
    CHECK(region_sum(100) == 5050);
}

static void run(const char *self, const char *env, const char *mode, const char *const *expect)
{
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "env %s '%s' %s 2>&1", env, self, mode);
    FILE *p = popen(cmd, "r");
    CHECK(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    printf("--- %s %s:\n%s", env, mode, out);
    CHECK(rc == 0);
    CHECK(strstr(out, "child ok"));
    for (; *expect; expect++)
        if (!strstr(out, *expect)) {
            fprintf(stderr, "missing on stderr: %s\n", *expect);
            exit(1);
        }
}

int main(int argc, char **argv)
{
    require_ultrapool();
    if (argc > 1) {
        if (!strcmp(argv[1], "bad"))
            child_bad();
        else
            child_good();
        printf("child ok\n");
        return 0;
    }
    static const char *const bad_msgs[] = {
        "OMP_NUM_THREADS=\"abc\"",      "OMP_SCHEDULE=\"foo\"",
        "OMP_MAX_ACTIVE_LEVELS=\"-3\"", "OMP_THREAD_LIMIT=\"0\"",
        "OMP_DYNAMIC=\"maybe\"",        "OMP_CANCELLATION=\"2\"",
        "OMP_MAX_TASK_PRIORITY=\"-1\"", "OMP_DISPLAY_ENV=\"sometimes\"",
        "GOMP_SPINCOUNT=\"lots\"",      NULL};
    run(argv[0],
        "OMP_NUM_THREADS=abc OMP_SCHEDULE=foo OMP_MAX_ACTIVE_LEVELS=-3 OMP_THREAD_LIMIT=0 "
        "OMP_DYNAMIC=maybe OMP_CANCELLATION=2 OMP_MAX_TASK_PRIORITY=-1 OMP_PROC_BIND=bogus "
        "OMP_DISPLAY_ENV=sometimes GOMP_SPINCOUNT=lots",
        "bad", bad_msgs);
    static const char *const none[] = {NULL};
    run(argv[0],
        "OMP_NUM_THREADS=3,2 'OMP_SCHEDULE=monotonic:guided,7' OMP_MAX_ACTIVE_LEVELS=2 "
        "OMP_THREAD_LIMIT=4 OMP_CANCELLATION=true OMP_MAX_TASK_PRIORITY=9 "
        "OMP_PROC_BIND=spread,close",
        "good", none);
    printf("ok\n");
    return 0;
}
