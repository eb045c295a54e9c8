/* The shard plan: which CPUs each shard serves, and in which order a shard
 * looks at the others when it steals or overflows. Built from hwloc when the
 * library has it (topo_hwloc.c), otherwise from the affinity mask and the
 * CPU count (topo_fallback.c). Exactly one of the two is compiled. */
#ifndef UP_TOPO_H
#define UP_TOPO_H

#include <stdint.h>

#include <ultrapool/pool.h>

typedef struct up__shard_plan {
    unsigned ncpus;
    int *cpus;         /* OS indexes of the CPUs of this shard */
    int numa;          /* NUMA node, -1 unknown */
    int package;       /* package (socket), -1 unknown */
    int kind;          /* CPU kind index (0 most efficient), -1 unknown */
    unsigned cache_level; /* level of the shared cache that bounds the shard, 0 none */
    uint64_t cache_size;  /* bytes, 0 unknown */
} up__shard_plan;

typedef struct up__plan {
    unsigned nshards;
    up__shard_plan *shards;
    int ncpu_slots;       /* size of cpu_to_shard */
    int *cpu_to_shard;    /* OS cpu index -> shard, -1 when not allowed */
    unsigned *order;      /* nshards x nshards: row i lists shards nearest first, i itself first */
    const char *source;   /* "fallback", "hwloc", ... */
    int bind_supported;   /* binding means something on this topology */
} up__plan;

/* Builds the plan for cfg (shards, shard_max_cores). */
int up__plan_build(up__plan *plan, const up_config *cfg);
void up__plan_free(up__plan *plan);
/* Binds the calling thread to a shard's CPUs or to one of its cores.
 * Returns 0, or -1 when binding failed or is not supported here. */
int up__plan_bind_self(const up__plan *plan, unsigned shard, up_bind how, unsigned worker);

/* Shared by both implementations: allocates arrays, fills the ring order. */
int up__plan_alloc(up__plan *plan, unsigned nshards, int ncpu_slots);
void up__plan_ring_order(up__plan *plan);
/* Fills shards from a flat list of allowed CPUs split into nshards groups. */
int up__plan_split_flat(up__plan *plan, const int *cpus, unsigned ncpus, unsigned nshards);

#endif
