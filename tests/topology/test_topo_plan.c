/* The shard plan hwloc gives on the machines the project targets, loaded
 * from XML files and synthetic descriptions (tests/topology/topologies/README.md).
 * Each plan is checked against the topology by code that does not share
 * the planner's logic: every CPU in exactly one shard, each shard inside one
 * L3 (or, without L3, one L2), one NUMA node, one package and one CPU kind,
 * hyperthread siblings together, no shard above the core limit, a steal
 * order that is a permutation going outward. Then the figures each machine
 * must show: 16 shards of 8 cores on 2 x EPYC 7763 (also through
 * HWLOC_XMLFILE and a pool), M2 Max efficiency cores on their own, c5.metal
 * never mixing sockets. And the plan of this machine, against what hwloc
 * finds here by itself. */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"
#include "pool_internal.h"

#define GRAVITON4                                                                                  \
    "package:1 [numa(memory=192GiB)] l3:1(size=36MiB) l2:96(size=2MiB) l1d:1(size=64KiB) "         \
    "l1i:1(size=64KiB) core:1 pu:1"
#define MILAN48                                                                                    \
    "package:1 [numa(memory=192GiB)] l3:6(size=32MiB) l2:8(size=512KiB) l1d:1(size=32KiB) "        \
    "l1i:1(size=32KiB) core:1 pu:1"
#define C5METAL                                                                                    \
    "package:2 [numa(memory=96GiB)] l3:1(size=36608KiB) l2:24(size=1MiB) l1d:1(size=32KiB) "       \
    "l1i:1(size=32KiB) core:1 pu:2(indexes=core:package)"
/* Not one of the targets: two NUMA nodes per package under one L3 (as
 * Intel's sub-NUMA clustering shows), so NUMA must cut the L3. */
#define SNC2 "package:2 l3:1(size=32MiB) group:2 [numa(memory=8GiB)] core:6 pu:2"

static char xml_path[4096];

static const char *xml(const char *name)
{
    snprintf(xml_path, sizeof xml_path, "%s/%s", UP_TEST_TOPOLOGIES, name);
    return xml_path;
}

static hwloc_topology_t load(up__topo_from from, const char *arg)
{
    hwloc_topology_t t;
    CHECK_EQ(hwloc_topology_init(&t), 0);
    if (from == UP__TOPO_XML)
        CHECK_EQ(hwloc_topology_set_xml(t, arg), 0);
    else if (from == UP__TOPO_SYNTHETIC)
        CHECK_EQ(hwloc_topology_set_synthetic(t, arg), 0);
    CHECK_EQ(hwloc_topology_load(t), 0);
    return t;
}

static hwloc_obj_t pu_of(hwloc_topology_t t, int os)
{
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t, (unsigned)os);
    CHECK(pu != NULL);
    return pu;
}

/* The cache a shard must stay inside: the L3 above the PU, else the L2. */
static hwloc_obj_t cache_domain(hwloc_topology_t t, int os)
{
    hwloc_obj_t pu = pu_of(t, os);
    hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L3CACHE, pu);
    return l3 ? l3 : hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L2CACHE, pu);
}

/* Bit i set when NUMA node (logical) i holds the PU. */
static uint64_t numa_nodes(hwloc_topology_t t, int os)
{
    uint64_t mask = 0;
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n)) != NULL)
        if (hwloc_bitmap_isset(n->cpuset, (unsigned)os))
            mask |= UINT64_C(1) << (n->logical_index % 64);
    return mask;
}

static int kind(hwloc_topology_t t, int os)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, (unsigned)os);
    int k = hwloc_cpukinds_get_by_cpuset(t, set, 0);
    hwloc_bitmap_free(set);
    return k;
}

typedef struct expect {
    unsigned shards;
    unsigned max_cores; /* no shard above this many cores */
} expect;

/* Checks plan p against topology t, whose CPUs it must cover (npu of
 * them); returns the number of CPUs in the plan. */
static unsigned check_plan(hwloc_topology_t t, const up__plan *p, unsigned max_cores, int npu)
{
    int *owner = malloc((size_t)(p->ncpu_slots + 1) * sizeof(int));
    for (int i = 0; i < p->ncpu_slots; i++)
        owner[i] = -1;
    unsigned total = 0;
    for (unsigned s = 0; s < p->nshards; s++) {
        const up__shard_plan *sp = &p->shards[s];
        CHECK_GT(sp->ncpus, 0);
        int c0 = sp->cpus[0];
        hwloc_obj_t core0 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu_of(t, c0));
        unsigned cores = 0;
        for (unsigned i = 0; i < sp->ncpus; i++) {
            int c = sp->cpus[i];
            CHECK(c >= 0 && c < p->ncpu_slots);
            CHECK_EQ(owner[c], -1); /* in exactly one shard */
            owner[c] = (int)s;
            CHECK_EQ(p->cpu_to_shard[c], (int)s);
            CHECK_EQ(cache_domain(t, c), cache_domain(t, c0));
            CHECK_EQ(numa_nodes(t, c), numa_nodes(t, c0));
            CHECK_EQ(hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu_of(t, c)),
                     hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu_of(t, c0)));
            CHECK_EQ(kind(t, c), kind(t, c0));
            CHECK_EQ(sp->kind, kind(t, c0));
            /* Siblings together: every PU of this CPU's core that shares
             * its kind is in this shard too. */
            hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu_of(t, c));
            if (core) {
                int first = 1;
                for (unsigned j = 0; j < i && first; j++)
                    first = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE,
                                                           pu_of(t, sp->cpus[j])) != core;
                cores += (unsigned)first;
                hwloc_obj_t sib = NULL;
                while ((sib = hwloc_get_next_obj_inside_cpuset_by_type(t, core->cpuset,
                                                                       HWLOC_OBJ_PU, sib))) {
                    int in = 0;
                    for (unsigned j = 0; j < sp->ncpus; j++)
                        in |= sp->cpus[j] == (int)sib->os_index;
                    CHECK(in || kind(t, (int)sib->os_index) != kind(t, c));
                }
            }
        }
        (void)core0;
        CHECK_EQ(sp->ncores, cores);
        CHECK_LE(sp->ncores, max_cores);
        total += sp->ncpus;
        /* The order: a permutation, starting with s, going outward. */
        const unsigned *row = &p->order[s * p->nshards];
        CHECK_EQ(row[0], s);
        int dist_prev = -1;
        for (unsigned k = 0; k < p->nshards; k++) {
            for (unsigned m = 0; m < k; m++)
                CHECK_NE(row[m], row[k]);
            const up__shard_plan *o = &p->shards[row[k]];
            int d = (o->numa != sp->numa) * 2 + (o->package != sp->package) * 4 +
                    (cache_domain(t, o->cpus[0]) != cache_domain(t, c0));
            CHECK_GE(d, dist_prev);
            dist_prev = d;
        }
    }
    CHECK_EQ(total, (unsigned)npu); /* every CPU of the machine */
    free(owner);
    return total;
}

static void plan_for(up__plan *p, up__topo_from from, const char *arg, unsigned max_cores,
                     unsigned shards)
{
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.shard_max_cores = max_cores;
    cfg.shards = shards;
    int rc = up__plan_build_from(p, &cfg, from, arg);
    if (rc != UP_OK)
        fprintf(stderr, "plan: %s\n", up_last_error());
    CHECK_EQ(rc, UP_OK);
    CHECK_EQ(p->bind_supported, 0); /* not this machine */
}

/* Builds, checks and frees the plan; returns its shard count. */
static unsigned check_machine(const char *name, up__topo_from from, const char *arg,
                              unsigned max_cores, unsigned expect_shards)
{
    hwloc_topology_t t = load(from, arg);
    up__plan p;
    plan_for(&p, from, arg, max_cores, 0);
    unsigned limit = max_cores ? max_cores : UP__SHARD_MAX_CORES_DEFAULT;
    unsigned cpus = check_plan(t, &p, limit, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
    printf("%-14s shard_max_cores %-2u: %u shards over %u CPUs\n", name, limit, p.nshards, cpus);
    CHECK_EQ(p.nshards, expect_shards);
    unsigned n = p.nshards;
    up__plan_free(&p);
    hwloc_topology_destroy(t);
    return n;
}

/* This machine: the plan a pool uses, checked against the topology hwloc
 * finds here on its own (as lstopo would), over the CPUs this thread may
 * use. */
static void this_machine(void)
{
    hwloc_topology_t t = load(UP__TOPO_SYSTEM, NULL);
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    CHECK_EQ(hwloc_get_cpubind(t, mine, HWLOC_CPUBIND_THREAD), 0);
    hwloc_bitmap_and(mine, mine, hwloc_topology_get_topology_cpuset(t));
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    up__plan p;
    CHECK_EQ(up__plan_build(&p, &cfg), UP_OK);
    unsigned cpus = check_plan(t, &p, UP__SHARD_MAX_CORES_DEFAULT, hwloc_bitmap_weight(mine));
    printf("%-14s shard_max_cores %-2u: %u shards over %u CPUs\n", "this machine",
           UP__SHARD_MAX_CORES_DEFAULT, p.nshards, cpus);
    up__plan_free(&p);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(t);
}

static unsigned shard_of(const up__plan *p, int cpu) { return (unsigned)p->cpu_to_shard[cpu]; }

static void m2max(void)
{
    up__plan p;
    plan_for(&p, UP__TOPO_XML, xml("m2max.xml"), 0, 0);
    /* Efficiency cores (kind 0, CPUs 0-3) alone in one shard, and no
     * other shard has one. */
    const up__shard_plan *e = &p.shards[shard_of(&p, 0)];
    CHECK_EQ(e->ncpus, 4);
    CHECK_EQ(e->kind, 0);
    CHECK_EQ(e->cache_level, 2);
    CHECK_EQ(e->cache_size, 4u << 20);
    CHECK(strcmp(e->kind_name, "Blizzard") == 0);
    for (unsigned s = 0; s < p.nshards; s++)
        if (s != shard_of(&p, 0)) {
            CHECK_EQ(p.shards[s].kind, 1);
            CHECK_EQ(p.shards[s].ncpus, 4);
            CHECK_EQ(p.shards[s].cache_size, 16u << 20);
        }
    /* Even with room for all twelve cores in one shard, kinds stay apart
     * and the clusters (separate L2s) too. */
    up__plan_free(&p);
    plan_for(&p, UP__TOPO_XML, xml("m2max.xml"), 64, 0);
    CHECK_EQ(p.nshards, 3);
    up__plan_free(&p);
}

static void zen3(void)
{
    up__plan p;
    plan_for(&p, UP__TOPO_XML, xml("zen3-2x7763.xml"), 0, 0);
    CHECK_EQ(p.nshards, 16);
    for (unsigned s = 0; s < 16; s++) {
        CHECK_EQ(p.shards[s].ncores, 8);
        CHECK_EQ(p.shards[s].ncpus, 8);
        CHECK_EQ(p.shards[s].cache_level, 3);
        CHECK_EQ(p.shards[s].cache_size, 32u << 20);
        CHECK_EQ(p.shards[s].package, s < 8 ? 0 : 1);
        /* Nearest first: the seven other shards of the package come
         * before any of the other package. */
        for (unsigned k = 1; k < 16; k++)
            CHECK_EQ(p.shards[p.order[s * 16 + k]].package == p.shards[s].package, k < 8);
    }
    up__plan_free(&p);
}

static void c5metal(void)
{
    up__plan p;
    plan_for(&p, UP__TOPO_SYNTHETIC, C5METAL, 0, 0);
    CHECK_EQ(p.nshards, 6);
    for (unsigned s = 0; s < p.nshards; s++) {
        const up__shard_plan *sp = &p.shards[s];
        CHECK_EQ(sp->ncores, 8);
        CHECK_EQ(sp->ncpus, 16);
        /* Socket 0 holds CPUs 0-23 and their siblings 48-71. */
        int socket = sp->cpus[0] % 48 >= 24;
        for (unsigned i = 0; i < sp->ncpus; i++)
            CHECK_EQ(sp->cpus[i] % 48 >= 24, socket);
        /* Binding order: the first CPU of every core, then the siblings. */
        for (unsigned i = 0; i < 8; i++)
            CHECK_EQ(sp->cpus[i + 8], sp->cpus[i] + 48);
    }
    up__plan_free(&p);
}

/* UP_SHARDS set: the cores are split evenly, siblings still together. */
static void forced(void)
{
    hwloc_topology_t t = load(UP__TOPO_SYNTHETIC, C5METAL);
    up__plan p;
    plan_for(&p, UP__TOPO_SYNTHETIC, C5METAL, 0, 5);
    CHECK_EQ(p.nshards, 5);
    unsigned total = 0;
    for (unsigned s = 0; s < 5; s++) {
        CHECK(p.shards[s].ncores == 9 || p.shards[s].ncores == 10);
        CHECK_EQ(p.shards[s].ncpus, 2 * p.shards[s].ncores);
        for (unsigned i = 0; i < p.shards[s].ncpus; i++) {
            int c = p.shards[s].cpus[i];
            CHECK_EQ(p.cpu_to_shard[(c + 48) % 96], (int)s);
        }
        total += p.shards[s].ncpus;
    }
    CHECK_EQ(total, 96);
    CHECK_EQ(p.shards[2].package, -1); /* the middle one spans both sockets */
    up__plan_free(&p);
    /* More shards than CPUs: each CPU once, the rest empty. */
    plan_for(&p, UP__TOPO_SYNTHETIC, "package:1 core:2 pu:2", 0, 6);
    CHECK_EQ(p.nshards, 6);
    unsigned seen = 0;
    for (unsigned s = 0; s < 6; s++)
        seen += p.shards[s].ncpus;
    CHECK_EQ(seen, 4);
    up__plan_free(&p);
    hwloc_topology_destroy(t);
}

/* HWLOC_XMLFILE works for any program: a pool created with it reports the
 * 16 shards of 8 cores of the 2 x EPYC 7763, binding there is refused and
 * counted, and tasks still run. */
static void pool_from_env(void)
{
    setenv("HWLOC_XMLFILE", xml("zen3-2x7763.xml"), 1);
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.bind = UP_BIND_SHARD;
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    CHECK_EQ(up_pool_shards(pool), 16);
    for (unsigned s = 0; s < 16; s++)
        CHECK_EQ(pool->plan.shards[s].ncores, 8);
    for (int i = 0; i < 20000; i++)
        CHECK_EQ(up_submit_wait(pool, counted_task, NULL), UP_OK);
    up_stats st;
    WAIT_UNTIL((up_pool_stats(pool, &st), st.bind_failed == st.spawned), 10000);
    up_pool_stats(pool, &st);
    CHECK_EQ(st.shards, 16);
    CHECK_GE(st.spawned, 16);
    CHECK_EQ(st.bind_failed, st.spawned);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), 20000);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    printf("HWLOC_XMLFILE=zen3-2x7763.xml: pool of %u shards of 8 cores, %llu bindings refused\n",
           st.shards, (unsigned long long)st.bind_failed);
    unsetenv("HWLOC_XMLFILE");
}

int main(void)
{
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("UP_SHARDS");
    unsetenv("UP_SHARD_MAX_CORES");
    check_machine("m2max", UP__TOPO_XML, xml("m2max.xml"), 0, 3);
    check_machine("zen3-2x7763", UP__TOPO_XML, xml("zen3-2x7763.xml"), 0, 16);
    check_machine("zen3-2x7763", UP__TOPO_XML, xml("zen3-2x7763.xml"), 4, 32);
    check_machine("zen3-2x7763", UP__TOPO_XML, xml("zen3-2x7763.xml"), 16, 16);
    check_machine("clx-2x6230", UP__TOPO_XML, xml("clx-2x6230.xml"), 0, 6);
    check_machine("clx-2x6230", UP__TOPO_XML, xml("clx-2x6230.xml"), 20, 2);
    check_machine("fakecpukinds", UP__TOPO_XML, xml("fakecpukinds.xml"), 0, 3);
    check_machine("graviton4", UP__TOPO_SYNTHETIC, GRAVITON4, 0, 12);
    check_machine("graviton4", UP__TOPO_SYNTHETIC, GRAVITON4, 16, 6);
    check_machine("graviton4", UP__TOPO_SYNTHETIC, GRAVITON4, 1, 96);
    check_machine("milan48", UP__TOPO_SYNTHETIC, MILAN48, 0, 6);
    check_machine("c5metal", UP__TOPO_SYNTHETIC, C5METAL, 0, 6);
    check_machine("c5metal", UP__TOPO_SYNTHETIC, C5METAL, 5, 10);
    check_machine("c5metal", UP__TOPO_SYNTHETIC, C5METAL, 64, 2);
    check_machine("snc2", UP__TOPO_SYNTHETIC, SNC2, 0, 4);
    check_machine("snc2", UP__TOPO_SYNTHETIC, SNC2, 16, 4);
    this_machine();
    m2max();
    zen3();
    c5metal();
    forced();
    pool_from_env();

    up__plan p;
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(up__plan_build_from(&p, &cfg, UP__TOPO_XML, "/nonexistent/topology.xml"), UP_EINVAL);
    CHECK(strstr(up_last_error(), "/nonexistent/topology.xml") != NULL);
    CHECK_EQ(up__plan_build_from(&p, &cfg, UP__TOPO_SYNTHETIC, "bogus:7"), UP_EINVAL);
    CHECK(strstr(up_last_error(), "bogus:7") != NULL);
    printf("ok\n");
    return 0;
}
