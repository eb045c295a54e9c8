/* Parts of the shard plan that do not depend on where the topology comes
 * from: allocation, the flat split, the steal orders, likwid-pin's CPU
 * list, and printing. */
#include "topo.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "env_registry.h"

int up__plan_alloc(up__plan *plan, unsigned nshards, int ncpu_slots)
{
    plan->nshards = nshards;
    plan->ncpu_slots = ncpu_slots;
    plan->shards = calloc(nshards, sizeof *plan->shards);
    plan->cpu_to_shard = malloc((size_t)(ncpu_slots > 0 ? ncpu_slots : 1) * sizeof(int));
    plan->order = malloc((size_t)nshards * nshards * sizeof(unsigned));
    if (!plan->shards || !plan->cpu_to_shard || !plan->order) {
        up__plan_free(plan);
        return -1;
    }
    for (int i = 0; i < ncpu_slots; i++)
        plan->cpu_to_shard[i] = -1;
    for (unsigned s = 0; s < nshards; s++) {
        plan->shards[s].numa = -1;
        plan->shards[s].package = -1;
        plan->shards[s].kind = -1;
        plan->shards[s].domain = -1;
    }
    return 0;
}

void up__plan_free(up__plan *plan)
{
    if (plan->shards)
        for (unsigned s = 0; s < plan->nshards; s++)
            free(plan->shards[s].cpus);
    free(plan->shards);
    free(plan->cpu_to_shard);
    free(plan->order);
    if (plan->impl_free && plan->impl)
        plan->impl_free(plan->impl);
    plan->impl = NULL;
    plan->shards = NULL;
    plan->cpu_to_shard = NULL;
    plan->order = NULL;
    plan->nshards = 0;
}

void up__plan_ring_order(up__plan *plan)
{
    unsigned n = plan->nshards;
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < n; k++)
            plan->order[i * n + k] = (i + k) % n;
}

int up__plan_split_flat(up__plan *plan, const int *cpus, unsigned ncpus, unsigned nshards)
{
    /* Contiguous groups whose sizes differ by at most one; with more shards
     * than CPUs the extra shards get none and serve whoever picks them. */
    for (unsigned s = 0; s < nshards; s++) {
        unsigned lo = (unsigned)((uint64_t)ncpus * s / nshards);
        unsigned hi = (unsigned)((uint64_t)ncpus * (s + 1) / nshards);
        up__shard_plan *sp = &plan->shards[s];
        sp->ncpus = hi - lo;
        sp->ncores = sp->ncpus; /* nothing is known of hyperthreads here */
        sp->cpus = malloc((sp->ncpus ? sp->ncpus : 1) * sizeof(int));
        if (!sp->cpus)
            return -1;
        for (unsigned i = lo; i < hi; i++) {
            sp->cpus[i - lo] = cpus[i];
            if (cpus[i] >= 0 && cpus[i] < plan->ncpu_slots)
                plan->cpu_to_shard[cpus[i]] = (int)s;
        }
    }
    return 0;
}

/* How far shard b is from shard a; an unknown (-1) field never matches. */
static unsigned distance(const up__shard_plan *a, const up__shard_plan *b)
{
    unsigned d = 0;
    if (a->domain < 0 || a->domain != b->domain)
        d += 1;
    if (a->numa < 0 || a->numa != b->numa)
        d += 2;
    if (a->package < 0 || a->package != b->package)
        d += 4;
    return d;
}

void up__plan_near_order(up__plan *plan)
{
    unsigned n = plan->nshards;
    /* Distances are 0..7: each row lists the classes in order, each class
     * in ring order from i. One distance per pair, then a counting sort:
     * with 4096 shards, 8 passes over the pairs took a second. */
    unsigned char *dist = malloc(n ? n : 1);
    for (unsigned i = 0; i < n; i++) {
        unsigned *row = &plan->order[i * n];
        row[0] = i;
        if (!dist) { /* out of memory: the same order, 8 passes */
            unsigned k = 1;
            for (unsigned d = 0; d < 8; d++)
                for (unsigned step = 1; step < n; step++) {
                    unsigned j = (i + step) % n;
                    if (distance(&plan->shards[i], &plan->shards[j]) == d)
                        row[k++] = j;
                }
            continue;
        }
        unsigned start[9] = {0};
        for (unsigned step = 1; step < n; step++) {
            dist[step] = (unsigned char)distance(&plan->shards[i], &plan->shards[(i + step) % n]);
            start[dist[step] + 1]++;
        }
        start[0] = 1;
        for (unsigned d = 1; d < 9; d++)
            start[d] += start[d - 1];
        for (unsigned step = 1; step < n; step++)
            row[start[dist[step]]++] = (i + step) % n;
    }
    free(dist);
}

int up__likwid_pin_cpus(int **out)
{
    const char *s = up__env("LIKWID_PIN");
    *out = NULL;
    if (!s || !*s)
        return 0;
    int n = 1;
    for (const char *c = s; *c; c++)
        n += *c == ',';
    int *cpus = malloc((size_t)n * sizeof(int));
    if (!cpus)
        return -1;
    int k = 0;
    for (const char *c = s; *c;) {
        if (isdigit((unsigned char)*c)) {
            char *end;
            long v = strtol(c, &end, 10);
            if (v >= 0 && v < 1 << 20)
                cpus[k++] = (int)v;
            c = end;
        } else {
            c++;
        }
    }
    if (k == 0) {
        free(cpus);
        return 0;
    }
    *out = cpus;
    return k;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void up__format_cpus(const up__shard_plan *sp, char *buf, size_t size)
{
    buf[0] = '\0';
    if (sp->ncpus == 0) {
        snprintf(buf, size, "-");
        return;
    }
    int *v = malloc(sp->ncpus * sizeof(int));
    if (!v) {
        snprintf(buf, size, "?");
        return;
    }
    memcpy(v, sp->cpus, sp->ncpus * sizeof(int));
    qsort(v, sp->ncpus, sizeof(int), cmp_int);
    size_t len = 0;
    for (unsigned i = 0; i < sp->ncpus && len + 1 < size;) {
        unsigned j = i;
        while (j + 1 < sp->ncpus && v[j + 1] == v[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + len, size - len, "%s%d-%d", i ? "," : "", v[i], v[j])
                      : snprintf(buf + len, size - len, "%s%d", i ? "," : "", v[i]);
        if (w < 0 || (size_t)w >= size - len) {
            buf[len] = '\0';
            break;
        }
        len += (size_t)w;
        i = j + 1;
    }
    free(v);
}

static void format_size(uint64_t bytes, char *buf, size_t size)
{
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(buf, size, "%" PRIu64 " MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, size, "%" PRIu64 " KiB", bytes >> 10);
    else
        snprintf(buf, size, "%" PRIu64 " B", bytes);
}

void up__plan_print(const up__plan *plan, const up_config *cfg, FILE *f)
{
    fprintf(f, "| shard | cpus | cores | cache | NUMA node | package | core kind | workers |\n");
    fprintf(f, "|---:|---|---:|---|---:|---:|---|---:|\n");
    for (unsigned s = 0; s < plan->nshards; s++) {
        const up__shard_plan *sp = &plan->shards[s];
        char cpus[256], cache[48] = "-", numa[16] = "-", pkg[16] = "-", kind[40] = "-";
        up__format_cpus(sp, cpus, sizeof cpus);
        if (sp->cache_level) {
            char sz[24] = "";
            if (sp->cache_size)
                format_size(sp->cache_size, sz, sizeof sz);
            snprintf(cache, sizeof cache, "L%u%s%s", sp->cache_level, *sz ? " " : "", sz);
        }
        if (sp->numa >= 0)
            snprintf(numa, sizeof numa, "%d", sp->numa);
        if (sp->package >= 0)
            snprintf(pkg, sizeof pkg, "%d", sp->package);
        if (sp->kind >= 0)
            snprintf(kind, sizeof kind, "%d%s%s", sp->kind, *sp->kind_name ? " " : "",
                     sp->kind_name);
        /* The floor started at creation, then the target submitters grow
         * to when every worker is busy (one per CPU, under the cap). */
        unsigned target = sp->ncpus ? sp->ncpus : 1;
        if (target > cfg->shard_max_workers)
            target = cfg->shard_max_workers;
        fprintf(f, "| %u | %s | %u | %s | %s | %s | %s | %u-%u |\n", s, cpus, sp->ncores, cache,
                numa, pkg, kind, cfg->shard_min_workers, target);
    }
}
