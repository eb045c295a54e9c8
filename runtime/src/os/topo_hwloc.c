/* The shard plan from hwloc.
 *
 * Which CPUs: those of the topology the process may use. On this machine
 * hwloc loads with IS_THISSYSTEM and RESTRICT_TO_CPUBINDING, so an MPI
 * launcher's or taskset's binding and the cgroup's cpuset are honoured, and
 * the calling thread's own mask narrows it further (the fallback reads the
 * same mask). Under likwid-pin the main thread is pinned to one CPU and
 * every new thread to the next CPU of LIKWID_PIN, so the plan covers that
 * list instead and binding is left to likwid. A topology loaded from XML or
 * a synthetic description (here, or through HWLOC_XMLFILE/HWLOC_SYNTHETIC)
 * is not this machine: the plan covers all of it and binding is refused.
 *
 * The shards: every CPU gets a key (bounding shared cache, NUMA node,
 * package, CPU kind); CPUs with equal keys form a domain, so no domain
 * mixes caches, NUMA nodes, packages or kinds. The bounding cache is the
 * L3, or without one a shared L2 (Apple and many Arm clusters); a machine
 * with neither is bounded by its NUMA nodes and packages alone. A domain
 * with more than shard_max_cores cores is cut into near-equal shards along
 * core boundaries, in hwloc's logical order, so hyperthread siblings stay
 * together and neighbouring cores (an L2 cluster) tend to land together.
 * With cfg.shards set, the allowed cores are split evenly instead and a
 * shard's fields are filled only where all its CPUs agree. */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "env_registry.h"
#include "pool_internal.h"

typedef struct pu_rec {
    int os;            /* OS index */
    hwloc_obj_t core;  /* the core, or the PU itself when hwloc knows no core */
    hwloc_obj_t cache; /* bounding shared cache, NULL none */
    int numa, package, kind;
    int domain; /* index of the (cache, numa, package, kind) key */
    int unit;   /* index of the (core, domain) pair: the thing shards are cut along */
    int rank;   /* this PU's position among the PUs of its unit */
} pu_rec;

typedef struct kinds {
    int n;
    hwloc_bitmap_t *sets;
    char (*names)[24];
} kinds;

static int os_or_logical(hwloc_obj_t o)
{
    return o->os_index != HWLOC_UNKNOWN_INDEX ? (int)o->os_index : (int)o->logical_index;
}

static void free_topology(void *impl) { hwloc_topology_destroy((hwloc_topology_t)impl); }

static void kinds_free(kinds *k)
{
    for (int i = 0; i < k->n; i++)
        hwloc_bitmap_free(k->sets[i]);
    free(k->sets);
    free(k->names);
}

static int kinds_load(hwloc_topology_t t, kinds *k)
{
    memset(k, 0, sizeof *k);
    int n = hwloc_cpukinds_get_nr(t, 0);
    if (n <= 0)
        return 0;
    k->sets = calloc((size_t)n, sizeof *k->sets);
    k->names = calloc((size_t)n, sizeof *k->names);
    if (!k->sets || !k->names) {
        kinds_free(k);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        unsigned ninfos = 0;
        struct hwloc_info_s *infos = NULL;
        int efficiency;
        k->sets[i] = hwloc_bitmap_alloc();
        k->n = i + 1;
        if (!k->sets[i] ||
            hwloc_cpukinds_get_info(t, (unsigned)i, k->sets[i], &efficiency, &ninfos, &infos, 0))
            continue;
        for (unsigned j = 0; j < ninfos; j++)
            if (!strcmp(infos[j].name, "CoreType"))
                snprintf(k->names[i], sizeof k->names[i], "%s", infos[j].value);
    }
    return 0;
}

static int kind_of(const kinds *k, int os)
{
    for (int i = 0; i < k->n; i++)
        if (k->sets[i] && hwloc_bitmap_isset(k->sets[i], (unsigned)os))
            return i;
    return -1;
}

/* The most local NUMA node holding this PU (the one with the fewest CPUs,
 * so a high-bandwidth node spanning a whole package does not win). */
static int numa_of(hwloc_topology_t t, int os)
{
    hwloc_obj_t best = NULL, n = NULL;
    while ((n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n)) != NULL)
        if (n->cpuset && hwloc_bitmap_isset(n->cpuset, (unsigned)os) &&
            (!best || hwloc_bitmap_weight(n->cpuset) < hwloc_bitmap_weight(best->cpuset)))
            best = n;
    return best ? os_or_logical(best) : -1;
}

static int cores_under(hwloc_topology_t t, hwloc_obj_t o)
{
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_CORE);
    return n > 0 ? n : hwloc_get_nbobjs_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_PU);
}

/* The L3 above the PU; without one, an L2 shared by several cores. */
static hwloc_obj_t bounding_cache(hwloc_topology_t t, hwloc_obj_t pu)
{
    hwloc_obj_t l2 = NULL;
    for (hwloc_obj_t a = pu->parent; a; a = a->parent) {
        if (a->type == HWLOC_OBJ_L3CACHE)
            return a;
        if (a->type == HWLOC_OBJ_L2CACHE && !l2)
            l2 = a;
    }
    return l2 && cores_under(t, l2) > 1 ? l2 : NULL;
}

/* What shards are cut along: a core within a domain (the plan's own
 * shards); a core (the shard count is forced, cores are never split); a
 * PU (forced, with more shards than cores). */
enum { UNIT_CORE_IN_DOMAIN, UNIT_CORE, UNIT_PU };

/* Reads the allowed PUs into recs (logical order) with their keys. */
static int describe(hwloc_topology_t t, hwloc_const_bitmap_t allowed, const kinds *k, pu_rec *recs,
                    int unit_mode)
{
    int n = 0, ndomains = 0;
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_PU, pu))) {
        pu_rec *r = &recs[n];
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu);
        r->os = (int)pu->os_index;
        r->core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
        if (!r->core)
            r->core = pu;
        r->cache = bounding_cache(t, pu);
        r->numa = numa_of(t, r->os);
        r->package = pkg ? os_or_logical(pkg) : -1;
        r->kind = kind_of(k, r->os);
        r->domain = -1;
        for (int i = 0; i < n && r->domain < 0; i++)
            if (recs[i].cache == r->cache && recs[i].numa == r->numa &&
                recs[i].package == r->package && recs[i].kind == r->kind)
                r->domain = recs[i].domain;
        if (r->domain < 0)
            r->domain = ndomains++;
        r->unit = -1;
        r->rank = 0;
        int nunits = 0;
        for (int i = 0; i < n; i++) {
            if (unit_mode != UNIT_PU && recs[i].core == r->core &&
                (unit_mode == UNIT_CORE || recs[i].domain == r->domain)) {
                r->unit = recs[i].unit;
                r->rank++;
            }
            if (recs[i].unit + 1 > nunits)
                nunits = recs[i].unit + 1;
        }
        if (r->unit < 0)
            r->unit = nunits;
        n++;
    }
    return n;
}

/* Fills shard s with the PUs whose unit belongs to group g, first PUs of
 * every unit first, then the second ones, and so on. */
static int fill_shard(up__plan *plan, unsigned s, const pu_rec *recs, int n, const int *group_of,
                      int g, const kinds *k)
{
    up__shard_plan *sp = &plan->shards[s];
    int count = 0, maxrank = 0;
    for (int i = 0; i < n; i++)
        if (group_of[recs[i].unit] == g) {
            count++;
            if (recs[i].rank > maxrank)
                maxrank = recs[i].rank;
        }
    sp->cpus = malloc((size_t)(count ? count : 1) * sizeof(int));
    hwloc_obj_t *cores = malloc((size_t)(count ? count : 1) * sizeof *cores);
    if (!sp->cpus || !cores) {
        free(cores);
        return -1;
    }
    const pu_rec *first = NULL;
    int same_cache = 1;
    sp->ncpus = 0;
    sp->ncores = 0;
    for (int rank = 0; rank <= maxrank; rank++)
        for (int i = 0; i < n; i++) {
            const pu_rec *r = &recs[i];
            if (group_of[r->unit] != g || r->rank != rank)
                continue;
            cores[sp->ncpus] = r->core;
            sp->cpus[sp->ncpus++] = r->os;
            plan->cpu_to_shard[r->os] = (int)s;
            unsigned j = 0;
            while (cores[j] != r->core)
                j++;
            sp->ncores += j + 1 == sp->ncpus; /* the first CPU of its core here */
            if (!first) {
                first = r;
                sp->numa = r->numa;
                sp->package = r->package;
                sp->kind = r->kind;
                sp->domain = r->domain;
                continue;
            }
            if (r->numa != sp->numa)
                sp->numa = -1;
            if (r->package != sp->package)
                sp->package = -1;
            if (r->kind != sp->kind)
                sp->kind = -1;
            if (r->domain != sp->domain)
                sp->domain = -1;
            if (r->cache != first->cache)
                same_cache = 0;
        }
    if (first && same_cache && first->cache) {
        sp->cache_level = first->cache->attr->cache.depth;
        sp->cache_size = first->cache->attr->cache.size;
    }
    if (sp->kind >= 0)
        snprintf(sp->kind_name, sizeof sp->kind_name, "%s", k->names[sp->kind]);
    free(cores);
    return 0;
}

static int count_units(const pu_rec *recs, int n)
{
    int nunits = 0;
    for (int i = 0; i < n; i++)
        if (recs[i].unit + 1 > nunits)
            nunits = recs[i].unit + 1;
    return nunits;
}

/* Assigns units to groups (shards): each domain cut into pieces of at most
 * max_cores units, or, forced, all units split into nforced groups.
 * Returns the number of groups. */
static unsigned plan_groups(const pu_rec *recs, int n, int nunits, unsigned max_cores,
                            unsigned nforced, int *group_of)
{
    if (nforced) {
        for (int u = 0; u < nunits; u++)
            group_of[u] = (int)((uint64_t)u * nforced / (unsigned)nunits);
        return nforced;
    }
    int *units = malloc((size_t)(nunits ? nunits : 1) * sizeof(int));
    if (!units)
        return 0;
    unsigned groups = 0;
    for (int d = 0;; d++) {
        int nu = 0;
        for (int i = 0; i < n; i++)
            if (recs[i].domain == d && recs[i].rank == 0)
                units[nu++] = recs[i].unit;
        if (nu == 0)
            break;
        unsigned pieces = ((unsigned)nu + max_cores - 1) / max_cores;
        for (int j = 0; j < nu; j++)
            group_of[units[j]] = (int)(groups + (uint64_t)j * pieces / (unsigned)nu);
        groups += pieces;
    }
    free(units);
    return groups;
}

/* PUs the process may use: see the comment at the top. */
static int allowed_set(hwloc_topology_t t, hwloc_bitmap_t allowed, int *likwid)
{
    hwloc_bitmap_and(allowed, hwloc_topology_get_topology_cpuset(t),
                     hwloc_topology_get_allowed_cpuset(t));
    *likwid = 0;
    if (!hwloc_topology_is_thissystem(t))
        return 0;
    hwloc_bitmap_t narrow = hwloc_bitmap_alloc();
    if (!narrow)
        return -1;
    int *list = NULL;
    int nlist = up__likwid_pin_cpus(&list);
    if (nlist < 0) {
        hwloc_bitmap_free(narrow);
        return -1;
    }
    int have = 0;
    if (nlist > 0) {
        for (int i = 0; i < nlist; i++)
            hwloc_bitmap_set(narrow, (unsigned)list[i]);
        *likwid = have = 1;
    } else if (hwloc_get_cpubind(t, narrow, HWLOC_CPUBIND_THREAD) == 0) {
        have = 1;
    }
    free(list);
    if (have && hwloc_bitmap_intersects(allowed, narrow))
        hwloc_bitmap_and(allowed, allowed, narrow);
    else
        *likwid = 0;
    hwloc_bitmap_free(narrow);
    return 0;
}

static int load(hwloc_topology_t *out, up__topo_from from, const char *arg, int native)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) {
        up__set_error("hwloc_topology_init failed");
        return UP_ENOMEM;
    }
    int rc = 0;
    if (from == UP__TOPO_XML)
        rc = hwloc_topology_set_xml(t, arg);
    else if (from == UP__TOPO_SYNTHETIC)
        rc = hwloc_topology_set_synthetic(t, arg);
    if (rc != 0) {
        up__set_error("hwloc cannot read the %s topology \"%s\"",
                      from == UP__TOPO_XML ? "XML" : "synthetic", arg);
        hwloc_topology_destroy(t);
        return UP_EINVAL;
    }
    unsigned long flags = 0;
    /* Restricting to the process binding makes sense for this machine only,
     * and not under likwid-pin, which pins the main thread to one CPU. */
    if (native && !up__env("LIKWID_PIN"))
        flags |= HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM | HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING;
        /* Distances and memory attributes are not used: skipping them makes
         * loading cheaper. (DONT_CHANGE_BINDING is not set: the x86 backend
         * moves the calling thread to each CPU to read its caches, and some
         * virtual machines report caches that way only.) */
#if HWLOC_API_VERSION >= 0x00020800
    flags |= HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS;
#endif
    if (hwloc_topology_set_flags(t, flags) != 0 || hwloc_topology_load(t) != 0) {
        up__set_error("hwloc cannot load the topology%s%s", arg ? " " : "", arg ? arg : "");
        hwloc_topology_destroy(t);
        return UP_EINVAL;
    }
    *out = t;
    return UP_OK;
}

static int build(up__plan *plan, const up_config *cfg, hwloc_topology_t t)
{
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    kinds k;
    int likwid = 0;
    if (!allowed || kinds_load(t, &k) != 0) {
        hwloc_bitmap_free(allowed);
        return UP_ENOMEM;
    }
    pu_rec *recs = NULL;
    int *group_of = NULL, rc = UP_ENOMEM;
    if (allowed_set(t, allowed, &likwid) != 0)
        goto out;
    int npu = hwloc_bitmap_weight(allowed);
    if (npu <= 0) {
        up__set_error("the topology has no CPU this process may use");
        rc = UP_EINVAL;
        goto out;
    }
    recs = calloc((size_t)npu, sizeof *recs);
    group_of = malloc((size_t)npu * sizeof *group_of);
    if (!recs || !group_of)
        goto out;
    int n = describe(t, allowed, &k, recs, cfg->shards ? UNIT_CORE : UNIT_CORE_IN_DOMAIN);
    int nunits = count_units(recs, n);
    if (cfg->shards > (unsigned)nunits) {
        n = describe(t, allowed, &k, recs, UNIT_PU);
        nunits = count_units(recs, n);
    }
    unsigned max_cores = cfg->shard_max_cores ? cfg->shard_max_cores : UP__SHARD_MAX_CORES_DEFAULT;
    unsigned nshards = plan_groups(recs, n, nunits, max_cores, cfg->shards, group_of);
    if (nshards == 0 || up__plan_alloc(plan, nshards, hwloc_bitmap_last(allowed) + 1) != 0)
        goto out;
    plan->max_cores = cfg->shards ? 0 : max_cores;
    for (unsigned s = 0; s < nshards; s++)
        if (fill_shard(plan, s, recs, n, group_of, (int)s, &k) != 0) {
            up__plan_free(plan);
            goto out;
        }
    up__plan_near_order(plan);
    const struct hwloc_topology_support *sup = hwloc_topology_get_support(t);
    plan->pinned_externally = likwid;
    plan->bind_supported = hwloc_topology_is_thissystem(t) && sup->cpubind->set_thisthread_cpubind;
    rc = UP_OK;
out:
    free(recs);
    free(group_of);
    kinds_free(&k);
    hwloc_bitmap_free(allowed);
    return rc;
}

int up__plan_build_from(up__plan *plan, const up_config *cfg, up__topo_from from, const char *arg)
{
    memset(plan, 0, sizeof *plan);
    const char *xml_env = up__env("HWLOC_XMLFILE"), *syn_env = up__env("HWLOC_SYNTHETIC");
    int native = from == UP__TOPO_SYSTEM && !(xml_env && *xml_env) && !(syn_env && *syn_env);
    hwloc_topology_t t;
    int rc = load(&t, from, arg, native);
    if (rc != UP_OK)
        return rc;
    rc = build(plan, cfg, t);
    if (rc != UP_OK) {
        hwloc_topology_destroy(t);
        return rc;
    }
    plan->source = from == UP__TOPO_XML         ? "hwloc xml"
                   : from == UP__TOPO_SYNTHETIC ? "hwloc synthetic"
                   : plan->pinned_externally    ? "hwloc, likwid-pin"
                   : native                     ? "hwloc"
                   : xml_env && *xml_env        ? "hwloc HWLOC_XMLFILE"
                                                : "hwloc HWLOC_SYNTHETIC";
    if (plan->bind_supported && !plan->pinned_externally) {
        plan->impl = t; /* binding needs it */
        plan->impl_free = free_topology;
    } else {
        hwloc_topology_destroy(t);
    }
    return UP_OK;
}

int up__plan_build(up__plan *plan, const up_config *cfg)
{
    return up__plan_build_from(plan, cfg, UP__TOPO_SYSTEM, NULL);
}

int up__plan_bind_self(const up__plan *plan, unsigned shard, up_bind how, unsigned worker)
{
    if (how == UP_BIND_NONE || plan->pinned_externally)
        return 0;
    if (!plan->bind_supported || !plan->impl || shard >= plan->nshards)
        return -1;
    const up__shard_plan *sp = &plan->shards[shard];
    if (sp->ncpus == 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return -1;
    if (how == UP_BIND_CORE)
        hwloc_bitmap_only(set, (unsigned)sp->cpus[worker % sp->ncpus]);
    else
        for (unsigned i = 0; i < sp->ncpus; i++)
            hwloc_bitmap_set(set, (unsigned)sp->cpus[i]);
    int rc = hwloc_set_cpubind((hwloc_topology_t)plan->impl, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
    return rc == 0 ? 0 : -1;
}
