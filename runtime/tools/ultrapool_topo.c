/* ultrapool-topo: prints the shard plan a pool would use, as a Markdown
 * table, for this machine or for a topology given as hwloc XML or as a
 * synthetic description. The UP_* variables apply as in a pool
 * (UP_SHARD_MAX_CORES, UP_SHARDS, UP_SHARD_MIN_WORKERS ...); the options
 * below override them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/pool.h>

#include "topo.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ultrapool-topo [--xml FILE | --synthetic \"DESCRIPTION\"]\n"
               "                      [--shard-max-cores N] [--shards N] [--order]\n"
               "                      [--summary NAME] | --version\n"
               "Prints the shard plan (shard, cpus, cores, cache, NUMA node, package,\n"
               "core kind, workers) for this machine or the given hwloc topology.\n"
               "  --order          also print each shard's steal and overflow order\n"
               "  --summary NAME   print one Markdown table row about the plan instead\n"
               "  --version        print the library's version and exit\n");
}

static int parse_unsigned(const char *s, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > 4096)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int same_shape(const up__shard_plan *a, const up__shard_plan *b)
{
    return a->ncores == b->ncores && a->ncpus == b->ncpus && a->kind == b->kind &&
           a->cache_level == b->cache_level && a->cache_size == b->cache_size;
}

/* "6 x 8 cores (16 CPUs) in L3 35.75 MiB" style counts of the distinct
 * shard shapes. */
static void print_shapes(const up__plan *plan)
{
    unsigned done[64] = {0}, ndone = 0;
    for (unsigned s = 0; s < plan->nshards; s++) {
        const up__shard_plan *a = &plan->shards[s];
        int seen = 0;
        for (unsigned d = 0; d < ndone && !seen; d++)
            seen = same_shape(a, &plan->shards[done[d]]);
        if (seen || ndone == 64)
            continue;
        unsigned count = 0;
        for (unsigned t = 0; t < plan->nshards; t++)
            count += same_shape(a, &plan->shards[t]);
        printf("%s%u x %u core%s", ndone ? "; " : "", count, a->ncores, a->ncores == 1 ? "" : "s");
        if (a->ncpus != a->ncores)
            printf(" (%u CPUs)", a->ncpus);
        if (a->cache_level && a->cache_size)
            printf(" in L%u %.4g MiB", a->cache_level, (double)a->cache_size / (1 << 20));
        if (a->kind >= 0)
            printf(", kind %d%s%s", a->kind, *a->kind_name ? " " : "", a->kind_name);
        done[ndone++] = s;
    }
}

static int count_distinct(const up__plan *plan, int (*field)(const up__shard_plan *))
{
    int n = 0;
    for (unsigned s = 0; s < plan->nshards; s++) {
        int v = field(&plan->shards[s]), seen = 0;
        for (unsigned t = 0; t < s && !seen; t++)
            seen = field(&plan->shards[t]) == v;
        n += !seen;
    }
    return n;
}

static int package_of(const up__shard_plan *sp) { return sp->package; }
static int numa_of(const up__shard_plan *sp) { return sp->numa; }

static void print_summary(const up__plan *plan, const char *name)
{
    unsigned cpus = 0;
    for (unsigned s = 0; s < plan->nshards; s++)
        cpus += plan->shards[s].ncpus;
    printf("| %s | %u | %u | ", name, cpus, plan->nshards);
    print_shapes(plan);
    printf(" | %d | %d |\n", count_distinct(plan, package_of), count_distinct(plan, numa_of));
}

int main(int argc, char **argv)
{
    /* Answered before the UP_* variables are read, so that a malformed
     * one cannot hide the version. */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--version")) {
            printf("ultrapool-topo %s\n", up_version());
            return 0;
        }
    up_config cfg;
    if (up_config_init(&cfg) != UP_OK)
        return 1;
    up__topo_from from = UP__TOPO_SYSTEM;
    const char *arg = NULL, *summary = NULL;
    int order = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--order")) {
            order = 1;
            continue;
        }
        if (!v) {
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--xml")) {
            from = UP__TOPO_XML;
            arg = v;
        } else if (!strcmp(a, "--synthetic")) {
            from = UP__TOPO_SYNTHETIC;
            arg = v;
        } else if (!strcmp(a, "--summary")) {
            summary = v;
        } else if (!strcmp(a, "--shard-max-cores") &&
                   parse_unsigned(v, &cfg.shard_max_cores) == 0) {
        } else if (!strcmp(a, "--shards") && parse_unsigned(v, &cfg.shards) == 0) {
        } else {
            fprintf(stderr, "ultrapool-topo: bad option or value: %s %s\n", a, v);
            usage(stderr);
            return 2;
        }
    }
    if (up_config_validate(&cfg) != UP_OK) {
        fprintf(stderr, "ultrapool-topo: %s\n", up_last_error());
        return 2;
    }
    up__plan plan;
    int rc = up__plan_build_from(&plan, &cfg, from, arg);
    if (rc != UP_OK) {
        fprintf(stderr, "ultrapool-topo: %s (%s)\n", up_strerror(rc), up_last_error());
        return 1;
    }
    if (summary) {
        print_summary(&plan, summary);
        up__plan_free(&plan);
        return 0;
    }
    unsigned cpus = 0;
    for (unsigned s = 0; s < plan.nshards; s++)
        cpus += plan.shards[s].ncpus;
    printf("%s: %u shard%s over %u CPU%s", plan.source, plan.nshards, plan.nshards == 1 ? "" : "s",
           cpus, cpus == 1 ? "" : "s");
    if (plan.max_cores)
        printf(", at most %u cores per shard", plan.max_cores);
    printf("; binding %s\n\n", plan.pinned_externally ? "left to likwid-pin"
                               : plan.bind_supported  ? "supported"
                                                      : "not possible on this topology");
    up__plan_print(&plan, &cfg, stdout);
    if (order) {
        printf("\nsteal and overflow order, nearest first:\n");
        for (unsigned s = 0; s < plan.nshards; s++) {
            printf("  shard %u:", s);
            for (unsigned k = 0; k < plan.nshards; k++)
                printf(" %u", plan.order[s * plan.nshards + k]);
            printf("\n");
        }
    }
    up__plan_free(&plan);
    return 0;
}
