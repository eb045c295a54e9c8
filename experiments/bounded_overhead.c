/* Overhead per task: 10,000 tasks that each do one atomic increment, with
 * a limit of 8, through every pattern (plain C and ultrapool), so the time
 * per task is nearly all machinery. Each round runs every pattern once in
 * a random order; the table gives, per pattern, the median over rounds of
 * ns per task, the spread, and the allocations made during a batch
 * (counted by wrappers around the allocator, after one uncounted warm-up
 * batch per pattern). Raw per-run figures go to --csv.
 *
 * usage: bounded_overhead [--rounds R] [--tasks N] [--limit L] [--seed S]
 *                         [--patterns a,b,...] [--csv FILE]
 * Exits 1 if a batch lost or duplicated a task. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_count.h"
#include "bench_stats.h"
#include "bench_util.h"
#include "bounded_patterns.h"

#define MAX_PATTERNS 16
#define MAX_ROUNDS   1000

static _Atomic uint64_t sink;

static int increment(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&sink, 1, memory_order_relaxed);
    return 0;
}

typedef struct sample {
    double ns_per_task;
    double allocs, bytes; /* per batch */
} sample;

static int measure(const bp_pattern *p, unsigned tasks, unsigned limit, sample *out)
{
    atomic_store(&sink, 0);
    uint64_t c0, b0, c1, b1;
    alloc_count_read(&c0, &b0);
    uint64_t t0 = bench_now_ns();
    int rc = p->run(tasks, limit, increment, NULL);
    uint64_t t1 = bench_now_ns();
    alloc_count_read(&c1, &b1);
    if (rc != 0 || atomic_load(&sink) != tasks) {
        fprintf(stderr, "bounded_overhead: %s ran %llu of %u tasks (rc %d)\n", p->name,
                (unsigned long long)atomic_load(&sink), tasks, rc);
        return -1;
    }
    out->ns_per_task = (double)(t1 - t0) / tasks;
    out->allocs = (double)(c1 - c0);
    out->bytes = (double)(b1 - b0);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bounded_overhead [--rounds R] [--tasks N] [--limit L] [--seed S]\n"
                    "                        [--patterns a,b,...] [--csv FILE]\n");
    exit(2);
}

static int selected(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *s = list; (s = strstr(s, name)) != NULL; s += n)
        if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned rounds = 9, tasks = 10000, limit = 8;
    uint64_t seed = bench_now_ns();
    const char *only = NULL, *csv_path = NULL;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            usage();
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--rounds"))
            rounds = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--tasks"))
            tasks = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--limit"))
            limit = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--patterns"))
            only = v;
        else if (!strcmp(a, "--csv"))
            csv_path = v;
        else
            usage();
    }
    if (rounds == 0 || rounds > MAX_ROUNDS || tasks == 0 || limit == 0 || limit > 256)
        usage();

    const bp_pattern *pats[MAX_PATTERNS];
    int np = 0;
    for (int i = 0; i < bp_plain_count; i++)
        if (selected(only, bp_plain_patterns[i].name))
            pats[np++] = &bp_plain_patterns[i];
    for (int i = 0; i < bp_up_count; i++)
        if (selected(only, bp_up_patterns[i].name))
            pats[np++] = &bp_up_patterns[i];
    if (np == 0)
        usage();

    up_pool *pool;
    if (up_pool_create(&pool, NULL) != UP_OK) {
        fprintf(stderr, "bounded_overhead: up_pool_create: %s\n", up_last_error());
        return 1;
    }
    bp_set_shared_pool(pool);

    static sample s[MAX_PATTERNS][MAX_ROUNDS];
    for (int k = 0; k < np; k++) { /* warm-up: first touches, thread caches */
        fprintf(stderr, "\rwarm-up %d/%d   ", k + 1, np);
        if (measure(pats[k], tasks, limit, &s[k][0]) != 0)
            return 1;
    }
    unsigned order[MAX_PATTERNS];
    for (unsigned r = 0; r < rounds; r++) {
        for (int k = 0; k < np; k++)
            order[k] = (unsigned)k;
        bench_shuffle(order, (size_t)np, &seed);
        for (int j = 0; j < np; j++) {
            int k = (int)order[j];
            fprintf(stderr, "\rround %u/%u %-16s", r + 1, rounds, pats[k]->name);
            if (measure(pats[k], tasks, limit, &s[k][r]) != 0)
                return 1;
        }
    }
    fprintf(stderr, "\r%40s\r", "");

    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv)
        fprintf(stderr, "bounded_overhead: cannot write %s\n", csv_path);
    if (csv)
        fprintf(csv, "pattern,kind,round,ns_per_task,allocs,bytes\n");
    double med[MAX_PATTERNS], lo[MAX_PATTERNS], hi[MAX_PATTERNS], allocs[MAX_PATTERNS],
        bytes[MAX_PATTERNS];
    for (int k = 0; k < np; k++) {
        static double v[MAX_ROUNDS], a[MAX_ROUNDS], b[MAX_ROUNDS];
        for (unsigned r = 0; r < rounds; r++) {
            v[r] = s[k][r].ns_per_task;
            a[r] = s[k][r].allocs;
            b[r] = s[k][r].bytes;
            if (csv)
                fprintf(csv, "%s,%s,%u,%.2f,%.0f,%.0f\n", pats[k]->name, pats[k]->kind, r, v[r],
                        a[r], b[r]);
        }
        bench_summary st = bench_summarize(v, rounds);
        med[k] = st.median;
        lo[k] = st.min;
        hi[k] = st.max;
        allocs[k] = bench_median(a, rounds);
        bytes[k] = bench_median(b, rounds);
    }
    if (csv)
        fclose(csv);

    int group = -1;
    for (int k = 0; k < np; k++)
        if (!strcmp(pats[k]->name, "up-group"))
            group = k;
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", localtime(&now));
    printf("%u tasks of one atomic increment, limit %u, %u rounds (median, min-max), "
           "%u cores, %s, seed %llu\n\n",
           tasks, limit, rounds, bench_cpus(), date, (unsigned long long)seed);
    int counted = alloc_count_enabled();
    printf("| pattern | kind | ns/task | min-max | allocs/batch | allocs/task | bytes/task |%s\n",
           group >= 0 ? " vs up-group |" : "");
    printf("|---|---|---:|---:|---:|---:|---:|%s\n", group >= 0 ? "---:|" : "");
    for (int k = 0; k < np; k++) {
        char ratio[32] = "";
        if (group >= 0 && k != group)
            snprintf(ratio, sizeof ratio, " %.1fx |", med[k] / med[group]);
        else if (group >= 0)
            snprintf(ratio, sizeof ratio, " 1 |");
        if (counted)
            printf("| %s | %s | %.1f | %.1f-%.1f | %.0f | %.4f | %.2f |%s\n", pats[k]->name,
                   pats[k]->kind, med[k], lo[k], hi[k], allocs[k], allocs[k] / tasks,
                   bytes[k] / tasks, ratio);
        else
            printf("| %s | %s | %.1f | %.1f-%.1f | - | - | - |%s\n", pats[k]->name, pats[k]->kind,
                   med[k], lo[k], hi[k], ratio);
    }
    if (group >= 0) {
        int cheapest = -1;
        for (int k = 0; k < np; k++)
            if (!strcmp(pats[k]->kind, "plain C") && (cheapest < 0 || med[k] < med[cheapest]))
                cheapest = k;
        printf("\nup-group: %.1f ns/task", med[group]);
        if (cheapest >= 0)
            printf("; cheapest plain-C pattern: %s at %.1f ns/task (%.1fx up-group's cost)",
                   pats[cheapest]->name, med[cheapest], med[cheapest] / med[group]);
        if (counted)
            printf("; up-group allocations per batch of %u tasks: %.0f (median)", tasks,
                   allocs[group]);
        printf("\n");
    }
    if (!counted)
        printf("(allocations not counted: needs glibc's allocator and no sanitizer)\n");

    up_stats st;
    up_pool_stop_and_wait(pool);
    up_pool_stats(pool, &st);
    up_pool_destroy(pool);
    /* Who ran the shared pool's tasks: on a busy machine the waiting
     * submitter runs most of them itself (helped), which is the fast case. */
    printf("shared pool (up-group, up-sem+pool): %llu tasks, %llu run by waiting threads, "
           "%llu wakes, %llu workers started, peak %u workers\n",
           (unsigned long long)st.executed, (unsigned long long)st.helped,
           (unsigned long long)st.wakes, (unsigned long long)st.spawned, st.workers_peak);
    if (st.executed != st.submitted) {
        fprintf(stderr, "bounded_overhead: the shared pool executed %llu of %llu tasks\n",
                (unsigned long long)st.executed, (unsigned long long)st.submitted);
        return 1;
    }
    return 0;
}
