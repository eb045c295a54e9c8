/* The shard plan: which CPUs each shard serves, and in which order a shard
 * looks at the others when it steals or overflows. Built from hwloc when the
 * library has it (os/topo_hwloc.c), otherwise from the affinity mask and the
 * CPU count (os/topo_fallback.c). Exactly one of the two is compiled; what
 * they share is topo_common.c. */
#ifndef UP_TOPO_H
#define UP_TOPO_H

#include <stdint.h>
#include <stdio.h>

#include <ultrapool/pool.h>

/* Cores per shard when cfg.shard_max_cores is 0. A shared cache with more
 * cores than this is split into near-equal shards. Eight keeps an AMD CCX
 * (8 cores per L3) whole and cuts a 24-core Xeon L3 or Graviton4's 96-core
 * L3 into shards whose queue lines stay cheap to share; see the README's
 * "Topology" section for the measurement behind it. */
#define UP__SHARD_MAX_CORES_DEFAULT 8

typedef struct up__shard_plan {
    unsigned ncpus;
    unsigned ncores;      /* cores among those CPUs (hyperthreads of one core count once) */
    int *cpus;            /* OS indexes, in binding order: the first CPU of every core,
                             then the second of every core, and so on */
    int numa;             /* NUMA node (OS index), -1 unknown or mixed */
    int package;          /* package (socket, OS index), -1 unknown or mixed */
    int kind;             /* CPU kind index (0 the least powerful), -1 unknown or mixed */
    char kind_name[24];   /* the kind's CoreType when the OS names it, "" otherwise */
    int domain;           /* shared-cache domain the shard was cut from, -1 unknown */
    unsigned cache_level; /* level of the shared cache that bounds the shard, 0 none */
    uint64_t cache_size;  /* bytes, 0 unknown */
} up__shard_plan;

typedef struct up__plan {
    unsigned nshards;
    up__shard_plan *shards;
    int ncpu_slots;        /* size of cpu_to_shard */
    int *cpu_to_shard;     /* OS cpu index -> shard, -1 when not allowed */
    unsigned *order;       /* nshards x nshards: row i lists shards nearest first, i itself first */
    const char *source;    /* "fallback", "hwloc", ... */
    int bind_supported;    /* binding means something on this topology */
    int pinned_externally; /* likwid-pin places the threads: binding is left to it */
    unsigned max_cores;    /* the shard size limit the plan was cut with, 0 none */
    void *impl;            /* what the implementation keeps for binding */
    void (*impl_free)(void *impl);
} up__plan;

/* Where a plan's topology comes from: this machine (honouring hwloc's own
 * HWLOC_XMLFILE and HWLOC_SYNTHETIC variables), an XML file, or a
 * synthetic description. */
typedef enum up__topo_from { UP__TOPO_SYSTEM, UP__TOPO_XML, UP__TOPO_SYNTHETIC } up__topo_from;

/* Builds the plan for cfg (shards, shard_max_cores) on this machine. */
int up__plan_build(up__plan *plan, const up_config *cfg);
/* The same for a given topology; arg is the XML path or the synthetic
 * string. UP_EINVAL (with a message) when the topology cannot be loaded or
 * the library was built without hwloc. */
int up__plan_build_from(up__plan *plan, const up_config *cfg, up__topo_from from, const char *arg);
void up__plan_free(up__plan *plan);
/* Binds the calling thread to a shard's CPUs or, for UP_BIND_CORE, to one
 * CPU of it (worker-th in binding order, so distinct cores come first).
 * Returns 0, or -1 when binding failed or is not supported here. */
int up__plan_bind_self(const up__plan *plan, unsigned shard, up_bind how, unsigned worker);

/* Shared by both implementations: allocates arrays, fills the ring order. */
int up__plan_alloc(up__plan *plan, unsigned nshards, int ncpu_slots);
void up__plan_ring_order(up__plan *plan);
/* Fills shards from a flat list of allowed CPUs split into nshards groups. */
int up__plan_split_flat(up__plan *plan, const int *cpus, unsigned ncpus, unsigned nshards);
/* Steal and overflow order from what the shards share: row i starts with
 * i, then the shards cut from the same cache, the same NUMA node, the same
 * package, then the rest; ties go round the ring from i. */
void up__plan_near_order(up__plan *plan);
/* The CPUs listed in LIKWID_PIN (likwid-pin pins each new thread to the
 * next of them). Returns their count, 0 when the variable is unset or
 * empty, -1 when out of memory; *out is malloc'd when the count is > 0. */
int up__likwid_pin_cpus(int **out);
/* Prints the plan as a Markdown table: shard, cpus, cores, cache, NUMA
 * node, package, core kind, workers (floor - CPU-bound target). */
void up__plan_print(const up__plan *plan, const up_config *cfg, FILE *f);
/* Writes the CPUs of a shard as sorted ranges ("0-7,64-71") into buf. */
void up__format_cpus(const up__shard_plan *sp, char *buf, size_t size);

#endif
