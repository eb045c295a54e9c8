/* Parts of the shard plan that do not depend on where the topology comes
 * from: allocation, the flat split, and the ring steal order. */
#include "topo.h"

#include <stdlib.h>

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
