/* Do they respect the limit? 200 tasks of 1 ms with a limit of 4 through
 * every pattern, plain C and ultrapool; each task records how many tasks
 * were running when it started, and the program prints the highest count
 * (it must equal the limit: never above, and the limit is used) and the
 * time the batch took. 200 tasks over 4 slots are 50 rounds of a sleep
 * that lasts a little over 1 ms, so every pattern should take about
 * 50-60 ms here; a pattern that takes much longer is not using its slots.
 *
 * usage: bounded_peak [--tasks N] [--limit L] [--sleep-us U]
 * Exits 1 when a pattern's peak differs from the limit. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "bounded_patterns.h"

typedef struct peak_run {
    _Atomic int running, peak;
    uint64_t sleep_ns;
} peak_run;

static int sleepy_task(void *arg)
{
    peak_run *r = arg;
    int now = atomic_fetch_add(&r->running, 1) + 1;
    int old = atomic_load(&r->peak);
    while (now > old && !atomic_compare_exchange_weak(&r->peak, &old, now))
        ;
    bench_sleep_ns(r->sleep_ns);
    atomic_fetch_sub(&r->running, 1);
    return 0;
}

static int run_one(const bp_pattern *p, unsigned tasks, unsigned limit, uint64_t sleep_ns)
{
    peak_run r = {.sleep_ns = sleep_ns};
    uint64_t t0 = bench_now_ns();
    int rc = p->run(tasks, limit, sleepy_task, &r);
    uint64_t t1 = bench_now_ns();
    int peak = atomic_load(&r.peak);
    printf("%-16s %-9s peak concurrency %d, %3.0f ms%s\n", p->name, p->kind, peak,
           (double)(t1 - t0) / 1e6, rc ? "  (the pattern reported an error)" : "");
    return rc == 0 && peak == (int)limit;
}

int main(int argc, char **argv)
{
    unsigned tasks = 200, limit = 4;
    uint64_t sleep_us = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--tasks"))
            tasks = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--limit"))
            limit = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--sleep-us"))
            sleep_us = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: bounded_peak [--tasks N] [--limit L] [--sleep-us U]\n");
            return 2;
        }
    }
    if (argc % 2 == 0 || tasks == 0 || limit == 0 || limit > 256) {
        fprintf(stderr, "usage: bounded_peak [--tasks N] [--limit L (1..256)] [--sleep-us U]\n");
        return 2;
    }
    up_pool *pool;
    if (up_pool_create(&pool, NULL) != UP_OK) {
        fprintf(stderr, "bounded_peak: up_pool_create: %s\n", up_last_error());
        return 1;
    }
    bp_set_shared_pool(pool);
    printf("%u tasks of %llu us, limit %u, %u cores\n", tasks, (unsigned long long)sleep_us, limit,
           bench_cpus());
    int ok = 1;
    for (int i = 0; i < bp_plain_count; i++)
        ok &= run_one(&bp_plain_patterns[i], tasks, limit, sleep_us * 1000);
    for (int i = 0; i < bp_up_count; i++)
        ok &= run_one(&bp_up_patterns[i], tasks, limit, sleep_us * 1000);
    up_pool_destroy(pool);
    if (!ok) {
        fprintf(stderr, "bounded_peak: a pattern's peak differs from the limit %u\n", limit);
        return 1;
    }
    return 0;
}
