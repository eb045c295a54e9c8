/* Dependencies on any address, NULL included (OpenMP orders a dependence
 * by its address alone and never dereferences it).
 *
 * Chains: many inout tasks on NULL, and as many on an ordinary address
 * beside them, created back to back in one frame so that far more than
 * the dependency table's first capacity are in flight; each task counts
 * itself in and out of an atomic in-flight counter for its address, and
 * no two may ever overlap. Then random DAGs whose addresses include NULL,
 * the address one past NULL, the highest address and addresses that hash
 * next to NULL's, checked against OpenMP's ordering rules from the start
 * and end tickets each task records. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/parallel.h>

#include "check.h"

static up_pool *pool;

/* ---- chains on NULL and beside it ---- */

#define CHAIN 200 /* tasks per address, all in flight at once */

typedef struct chain {
    _Atomic int inflight;
    _Atomic int overlaps;
    _Atomic int ran;
    int order_errors;
    int last; /* index of the last task that ran, under the ordering */
} chain;

static chain chains[2];
static _Atomic unsigned team_size;

typedef struct link {
    chain *c;
    int index;
} link;

static void link_task(void *p)
{
    const link *l = p;
    chain *c = l->c;
    if (atomic_fetch_add(&c->inflight, 1) != 0)
        atomic_fetch_add(&c->overlaps, 1);
    /* Ordered tasks run in creation order: the previous one was index - 1.
     * (Read and written only inside the ordered section.) */
    if (c->last != l->index - 1)
        c->order_errors++;
    c->last = l->index;
    test_spin(2000);
    atomic_fetch_sub(&c->inflight, 1);
    atomic_fetch_add(&c->ran, 1);
}

static void chains_region(void *p)
{
    static int beside;
    const void *addrs[2] = {NULL, &beside};
    int both = *(int *)p; /* 1: every task depends on both addresses */
    if (up_master())
        atomic_store(&team_size, up_num_threads());
    if (!up_single())
        return;
    for (int i = 0; i < CHAIN; i++)
        for (int a = 0; a < 2; a++) {
            link l = {&chains[a], i};
            up_dep d[2] = {{addrs[a], UP_DEP_INOUT}, {addrs[1 - a], UP_DEP_IN}};
            CHECK_EQ(up_task_deps_copy(link_task, &l, sizeof l, d, both ? 2 : 1, NULL), UP_OK);
        }
    up_taskwait();
}

static int chains_test(int both)
{
    for (int a = 0; a < 2; a++) {
        memset(&chains[a], 0, sizeof chains[a]);
        chains[a].last = -1;
    }
    CHECK_EQ(up_parallel(pool, 2, chains_region, &both), UP_OK);
    for (int a = 0; a < 2; a++) {
        printf("%s chain%s: %d ran, %d overlaps, %d out of order\n", a ? "beside" : "NULL",
               both ? " (deps on both)" : "", atomic_load(&chains[a].ran),
               atomic_load(&chains[a].overlaps), chains[a].order_errors);
        CHECK_EQ(atomic_load(&chains[a].ran), CHAIN);
        CHECK_EQ(atomic_load(&chains[a].overlaps), 0);
        CHECK_EQ(chains[a].order_errors, 0);
    }
    return atomic_load(&team_size) > 1;
}

/* ---- random DAGs on odd addresses ---- */

#define NADDR   8
#define MAXDEPS 3

typedef struct node {
    up_dep deps[MAXDEPS];
    int ndeps;
    uint64_t start, end;
    unsigned spin;
} node;

static const void *addr_pool[NADDR];
static _Atomic uint64_t ticket;
static node *nodes;
static int nnodes;

static void node_task(void *p)
{
    node *n = p;
    n->start = atomic_fetch_add(&ticket, 1);
    test_spin(n->spin);
    n->end = atomic_fetch_add(&ticket, 1);
}

static void dag_region(void *p)
{
    (void)p;
    if (up_single()) {
        for (int i = 0; i < nnodes; i++)
            CHECK_EQ(
                up_task_deps(node_task, &nodes[i], nodes[i].deps, (size_t)nodes[i].ndeps, NULL),
                UP_OK);
        up_taskwait();
    }
}

static int writes(up_dep_kind k) { return k != UP_DEP_IN; }

/* For every pair of tasks touching one address: an earlier writer ends
 * before a later access starts, and an earlier reader ends before a later
 * writer starts; two tasks of one mutexinoutset never overlap. */
static void check_dag(void)
{
    for (int b = 0; b < nnodes; b++)
        for (int d = 0; d < nodes[b].ndeps; d++)
            for (int a = 0; a < b; a++)
                for (int e = 0; e < nodes[a].ndeps; e++) {
                    if (nodes[a].deps[e].addr != nodes[b].deps[d].addr)
                        continue;
                    up_dep_kind ka = nodes[a].deps[e].kind, kb = nodes[b].deps[d].kind;
                    if (!writes(ka) && !writes(kb))
                        continue;
                    int ok;
                    if (ka == UP_DEP_MUTEXINOUTSET && kb == UP_DEP_MUTEXINOUTSET)
                        ok = nodes[a].end < nodes[b].start || nodes[b].end < nodes[a].start;
                    else
                        ok = nodes[a].end < nodes[b].start;
                    if (!ok) {
                        fprintf(
                            stderr,
                            "task %d (kind %d) and task %d (kind %d) on %p: [%llu, %llu] "
                            "vs [%llu, %llu]\n",
                            a, ka, b, kb, nodes[b].deps[d].addr, (unsigned long long)nodes[a].start,
                            (unsigned long long)nodes[a].end, (unsigned long long)nodes[b].start,
                            (unsigned long long)nodes[b].end);
                        abort();
                    }
                }
}

/* Odd addresses beside ordinary ones: 1 and 8 share NULL's cache line,
 * so their table slots neighbour NULL's, 64 starts the next line, and the
 * top of the address space wraps the table's hash. */
static void init_addrs(void)
{
    static char cells[2][64];
    addr_pool[0] = NULL;
    addr_pool[1] = (const void *)(uintptr_t)8;
    addr_pool[2] = (const void *)(uintptr_t)1;
    addr_pool[3] = (const void *)UINTPTR_MAX;
    addr_pool[4] = (const void *)(uintptr_t)64; /* NULL's next line */
    addr_pool[5] = &cells[0][0];
    addr_pool[6] = &cells[1][0];
    addr_pool[7] = (const void *)(UINTPTR_MAX - 7);
}

static void dag_test(uint64_t *seed, int n)
{
    nnodes = n;
    nodes = calloc((size_t)n, sizeof *nodes);
    CHECK(nodes);
    for (int i = 0; i < n; i++) {
        node *x = &nodes[i];
        x->ndeps = 1 + (int)(test_rand(seed) % MAXDEPS);
        for (int d = 0; d < x->ndeps; d++) {
            /* NULL half the time: it is what this test is about. */
            unsigned a = test_rand(seed) % 2 ? 0 : (unsigned)(test_rand(seed) % NADDR);
            x->deps[d].addr = addr_pool[a];
            x->deps[d].kind = (up_dep_kind)(test_rand(seed) % 4);
        }
        x->spin = (unsigned)(test_rand(seed) % 3000);
    }
    atomic_store(&ticket, 0);
    CHECK_EQ(up_parallel(pool, 2, dag_region, NULL), UP_OK);
    for (int i = 0; i < n; i++)
        CHECK_GT(nodes[i].end, nodes[i].start);
    check_dag();
    free(nodes);
}

int main(void)
{
    uint64_t seed = test_seed();
    uint64_t dags = test_size("UP_TEST_DAGS", 40);
    init_addrs();
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    int observed = 0;
    for (int round = 0; round < 5; round++) {
        observed |= chains_test(0);
        observed |= chains_test(1);
    }
    for (uint64_t k = 0; k < dags; k++)
        dag_test(&seed, 100 + (int)(test_rand(&seed) % 300));
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    if (!observed) {
        printf("every region ran on a team of one: no overlap could be observed\n");
        return TEST_SKIP;
    }
    return 0;
}
