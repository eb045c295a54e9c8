/* This machine's plan under the CPUs the process may use: the whole
 * affinity mask, a mask narrowed with sched_setaffinity (as taskset or an
 * MPI launcher would), likwid-pin's CPU list, real binding of workers
 * (UP_BIND=shard and core) checked from inside each worker, and submits
 * landing on the submitting CPU's shard. Built twice: against the library
 * (hwloc when found) and against the fallback plan. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "pool_internal.h"

#if defined(__linux__)
#include <sched.h>

static cpu_set_t original;
static int first_cpu, last_cpu;

/* Every CPU of mask in exactly one shard, and no other CPU in any. */
static void check_covers(const up__plan *p, const cpu_set_t *mask)
{
    int seen[CPU_SETSIZE] = {0};
    unsigned total = 0;
    for (unsigned s = 0; s < p->nshards; s++)
        for (unsigned i = 0; i < p->shards[s].ncpus; i++) {
            int c = p->shards[s].cpus[i];
            CHECK(c >= 0 && c < CPU_SETSIZE && c < p->ncpu_slots);
            CHECK(CPU_ISSET(c, mask));
            CHECK_EQ(seen[c], 0);
            seen[c] = 1;
            CHECK_EQ(p->cpu_to_shard[c], (int)s);
            total++;
        }
    CHECK_EQ(total, (unsigned)CPU_COUNT(mask));
    for (int c = 0; c < p->ncpu_slots; c++)
        CHECK(seen[c] || p->cpu_to_shard[c] == -1);
}

static void build(up__plan *p, up_bind bind)
{
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.bind = bind;
    CHECK_EQ(up__plan_build(p, &cfg), UP_OK);
}

static _Atomic int task_cpu_wrong;
static _Atomic uint64_t ran;
static int expect_cpu = -1;

static void where_task(void *arg)
{
    (void)arg;
    if (expect_cpu >= 0 && sched_getcpu() != expect_cpu)
        atomic_store(&task_cpu_wrong, 1);
    atomic_fetch_add(&ran, 1);
}

static void run_pool(const up_config *cfg, unsigned expect_shards, up_stats *st)
{
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, cfg), UP_OK);
    CHECK_EQ(up_pool_shards(pool), expect_shards);
    uint64_t n = test_size("UP_TEST_TASKS", 5000);
    atomic_store(&ran, 0);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(pool, where_task, NULL), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
    CHECK_EQ(atomic_load(&ran), n);
    up_pool_stats(pool, st);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
}

/* Narrows this thread's mask to the last allowed CPU, as taskset would. */
static void narrow_to_last(cpu_set_t *one)
{
    CPU_ZERO(one);
    CPU_SET(last_cpu, one);
    CHECK_EQ(sched_setaffinity(0, sizeof *one, one), 0);
}

/* A mask narrowed to one CPU, then (with two or more) to the first and
 * the last: the plan covers exactly those, and a pool runs its tasks there. */
static void restricted(void)
{
    cpu_set_t one;
    narrow_to_last(&one);
    up__plan p;
    build(&p, UP_BIND_NONE);
    CHECK_EQ(p.nshards, 1);
    CHECK_EQ(p.shards[0].ncpus, 1);
    CHECK_EQ(p.shards[0].cpus[0], last_cpu);
    check_covers(&p, &one);
    up__plan_free(&p);
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    up_stats st;
    expect_cpu = last_cpu; /* workers inherit the narrowed mask */
    run_pool(&cfg, 1, &st);
    expect_cpu = -1;
    CHECK_EQ(atomic_load(&task_cpu_wrong), 0);

    if (first_cpu != last_cpu) {
        cpu_set_t two;
        CPU_ZERO(&two);
        CPU_SET(first_cpu, &two);
        CPU_SET(last_cpu, &two);
        CHECK_EQ(sched_setaffinity(0, sizeof two, &two), 0);
        build(&p, UP_BIND_NONE);
        check_covers(&p, &two);
        printf("mask {%d,%d}: %u shards (%s)\n", first_cpu, last_cpu, p.nshards, p.source);
        up__plan_free(&p);
    }
    CHECK_EQ(sched_setaffinity(0, sizeof original, &original), 0);
}

/* Under likwid-pin the main thread runs on the first listed CPU, and the
 * plan covers the whole list; binding is left to likwid. */
static void likwid(void)
{
    char list[4096] = "";
    size_t len = 0;
    for (int c = CPU_SETSIZE - 1; c >= 0; c--) /* reversed, as a user may list them */
        if (CPU_ISSET(c, &original))
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", c);
    setenv("LIKWID_PIN", list, 1);
    cpu_set_t one;
    narrow_to_last(&one);
    up__plan p;
    build(&p, UP_BIND_CORE);
    CHECK_EQ(p.pinned_externally, 1);
    check_covers(&p, &original);
    CHECK_EQ(up__plan_bind_self(&p, 0, UP_BIND_CORE, 0), 0);
    cpu_set_t now;
    CHECK_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    CHECK(CPU_EQUAL(&now, &one)); /* nothing was bound on top */
    printf("LIKWID_PIN=%s: %u shards (%s)\n", list, p.nshards, p.source);
    up__plan_free(&p);
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.bind = UP_BIND_CORE;
    up_stats st;
    build(&p, UP_BIND_CORE);
    unsigned shards = p.nshards;
    up__plan_free(&p);
    run_pool(&cfg, shards, &st);
    CHECK_EQ(st.bind_failed, 0);
    unsetenv("LIKWID_PIN");
    CHECK_EQ(sched_setaffinity(0, sizeof original, &original), 0);
}

/* Real binding: each worker checks its own mask as it starts. */
static up__plan bind_plan;
static up_bind bind_how;
static _Atomic int bind_wrong, bind_seen;

static void *on_start(void *ctx, unsigned shard, unsigned worker)
{
    (void)ctx;
    (void)worker;
    cpu_set_t mask;
    CHECK_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    const up__shard_plan *sp = &bind_plan.shards[shard];
    int inside = 1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) {
            int in = 0;
            for (unsigned i = 0; i < sp->ncpus; i++)
                in |= sp->cpus[i] == c;
            inside &= in;
        }
    unsigned want = bind_how == UP_BIND_CORE ? 1 : sp->ncpus;
    if (!inside || (unsigned)CPU_COUNT(&mask) != want)
        atomic_store(&bind_wrong, 1);
    atomic_fetch_add(&bind_seen, 1);
    return NULL;
}

static void binding(up_bind how)
{
    build(&bind_plan, how);
    if (!bind_plan.bind_supported) {
        printf("binding not supported here (%s)\n", bind_plan.source);
        up__plan_free(&bind_plan);
        return;
    }
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.bind = how;
    cfg.on_worker_start = on_start;
    bind_how = how;
    atomic_store(&bind_wrong, 0);
    atomic_store(&bind_seen, 0);
    up_stats st;
    run_pool(&cfg, bind_plan.nshards, &st);
    CHECK_EQ(st.bind_failed, 0);
    CHECK_GE(atomic_load(&bind_seen), (int)bind_plan.nshards);
    CHECK_EQ(atomic_load(&bind_wrong), 0);
    printf("bind=%s: %d workers bound inside their shard\n", how == UP_BIND_CORE ? "core" : "shard",
           atomic_load(&bind_seen));
    up__plan_free(&bind_plan);
    /* This thread was never bound. */
    cpu_set_t now;
    CHECK_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    CHECK(CPU_EQUAL(&now, &original));
}

/* Locality: a thread running on one CPU submits to that CPU's shard
 * (the queue is large enough never to overflow); with shard_choice random
 * every shard gets some. Counted as queue acceptances per shard, after 64
 * submits that let the cached CPU number refresh. */
static int locality(up_shard_choice choice)
{
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    cfg.queue_capacity = 1u << 16;
    cfg.shard_choice = choice;
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    unsigned ns = pool->nshards;
    if (ns < 2 && CPU_COUNT(&original) >= 2) {
        /* One shared cache: a plan of two shards, one per CPU group, makes
         * the choice of shard observable. */
        CHECK_EQ(up_pool_destroy(pool), UP_OK);
        cfg.shards = 2;
        CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
        ns = pool->nshards;
    }
    if (ns < 2) {
        CHECK_EQ(up_pool_destroy(pool), UP_OK);
        printf("one shard: locality not observable here\n");
        return 0;
    }
    cpu_set_t one;
    narrow_to_last(&one);
    for (int i = 0; i < 64; i++)
        CHECK_EQ(up_submit(pool, where_task, NULL), UP_OK);
    uint64_t before[64] = {0}, n = test_size("UP_TEST_TASKS", 5000);
    for (unsigned s = 0; s < ns && s < 64; s++)
        before[s] = up__mpmc_accepted(&pool->shards[s].q);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit(pool, where_task, NULL), UP_OK);
    unsigned home = (unsigned)pool->plan.cpu_to_shard[last_cpu], got = 0;
    for (unsigned s = 0; s < ns && s < 64; s++) {
        uint64_t d = up__mpmc_accepted(&pool->shards[s].q) - before[s];
        if (choice == UP_SHARD_LOCAL)
            CHECK_EQ(d, s == home ? n : 0);
        got += d > 0;
    }
    if (choice == UP_SHARD_RANDOM)
        CHECK_EQ(got, ns < 64 ? ns : 64);
    printf("shard_choice %s: %u of %u shards received the %llu submits of CPU %d\n",
           choice == UP_SHARD_LOCAL ? "local" : "random", got, ns, (unsigned long long)n, last_cpu);
    CHECK_EQ(sched_setaffinity(0, sizeof original, &original), 0);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 1;
}

int main(void)
{
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("LIKWID_PIN");
    unsetenv("UP_SHARDS");
    CHECK_EQ(sched_getaffinity(0, sizeof original, &original), 0);
    first_cpu = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &original)) {
            if (first_cpu < 0)
                first_cpu = c;
            last_cpu = c;
        }
    up__plan p;
    build(&p, UP_BIND_NONE);
    check_covers(&p, &original);
    printf("this machine: %u shards over %d CPUs (%s)\n", p.nshards, CPU_COUNT(&original),
           p.source);
    up__plan_free(&p);
    restricted();
    likwid();
    binding(UP_BIND_SHARD);
    binding(UP_BIND_CORE);
    int observed = locality(UP_SHARD_LOCAL);
    observed &= locality(UP_SHARD_RANDOM);
    if (!observed) {
        printf("skipped: the rest passed, but the choice of shard is not observable here\n");
        return TEST_SKIP;
    }
    printf("ok\n");
    return 0;
}
#else
int main(void)
{
    printf("affinity masks are a Linux interface; skipped\n");
    return TEST_SKIP;
}
#endif
