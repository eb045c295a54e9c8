/* The shard plan without hwloc: one shard per CPU the process may use (the
 * affinity mask on Linux, the online count elsewhere; under likwid-pin the
 * CPUs of LIKWID_PIN), or cfg->shards shards splitting those CPUs evenly.
 * Nothing is known of caches, so no shard spans more than one CPU by
 * default. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool_internal.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

static int allowed_cpus(int **out, int *slots)
{
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        int *cpus = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
        if (!cpus)
            return -1;
        int k = 0, maxcpu = 0;
        for (int c = 0; c < CPU_SETSIZE && k < n; c++)
            if (CPU_ISSET(c, &set)) {
                cpus[k++] = c;
                maxcpu = c;
            }
        *out = cpus;
        *slots = maxcpu + 1;
        return k;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    int *cpus = malloc((size_t)n * sizeof(int));
    if (!cpus)
        return -1;
    for (long c = 0; c < n; c++)
        cpus[c] = (int)c;
    *out = cpus;
    *slots = (int)n;
    return (int)n;
}

int up__plan_build(up__plan *plan, const up_config *cfg)
{
    memset(plan, 0, sizeof *plan);
    int *cpus = NULL, slots = 0;
    /* likwid-pin pins the main thread to the first CPU of its list and
     * each new thread to the next: the list is what the program may use. */
    int n = up__likwid_pin_cpus(&cpus);
    if (n > 0) {
        plan->pinned_externally = 1;
        for (int i = 0; i < n; i++)
            if (cpus[i] + 1 > slots)
                slots = cpus[i] + 1;
    } else if (n == 0) {
        n = allowed_cpus(&cpus, &slots);
    }
    if (n < 0)
        return UP_ENOMEM;
    unsigned nshards = cfg->shards ? cfg->shards : (unsigned)n;
    if (up__plan_alloc(plan, nshards, slots) != 0 ||
        up__plan_split_flat(plan, cpus, (unsigned)n, nshards) != 0) {
        free(cpus);
        up__plan_free(plan);
        return UP_ENOMEM;
    }
    free(cpus);
    up__plan_ring_order(plan);
    plan->source = plan->pinned_externally ? "fallback, likwid-pin" : "fallback";
#if defined(__linux__)
    plan->bind_supported = 1;
#else
    plan->bind_supported = 0;
#endif
    return UP_OK;
}

int up__plan_build_from(up__plan *plan, const up_config *cfg, up__topo_from from, const char *arg)
{
    if (from == UP__TOPO_SYSTEM)
        return up__plan_build(plan, cfg);
    memset(plan, 0, sizeof *plan);
    up__set_error("cannot load the topology \"%s\": ultrapool was built without hwloc", arg);
    return UP_EINVAL;
}

int up__plan_bind_self(const up__plan *plan, unsigned shard, up_bind how, unsigned worker)
{
    if (how == UP_BIND_NONE || plan->pinned_externally)
        return 0;
    const up__shard_plan *sp = &plan->shards[shard];
    if (!plan->bind_supported || sp->ncpus == 0)
        return -1;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (how == UP_BIND_CORE) {
        CPU_SET(sp->cpus[worker % sp->ncpus], &set);
    } else {
        for (unsigned i = 0; i < sp->ncpus; i++)
            CPU_SET(sp->cpus[i], &set);
    }
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : -1;
#else
    (void)worker;
    return -1;
#endif
}
