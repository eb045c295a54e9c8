/* Task dependencies: random DAGs over a handful of addresses, with in,
 * out, inout and mutexinoutset, checked against OpenMP's ordering rules
 * from the start and end tickets each task records: a writer (out, inout)
 * starts after every earlier access of its address has ended (since the
 * previous writer); a reader (in) starts after the previous writer ended;
 * tasks of one mutexinoutset never overlap and are ordered against the
 * other kinds like writers. Some tasks are undeferred or final: those
 * still wait for their predecessors, then run on the creating thread
 * before the call returns, a final one with its children undeferred. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ultrapool/parallel.h>

#include "check.h"

#define ADDRS   6
#define MAXDEPS 3

typedef struct node {
    up_dep deps[MAXDEPS];
    int ndeps;
    uint64_t start, end;
    int spin;
    int mode; /* 0, or 1 undeferred, 2 final */
    pthread_t ran_on;
    int child_ran_inside; /* final: its child ran before up_task returned */
} node;

static int addr_cells[ADDRS];
static _Atomic uint64_t ticket;
static node *nodes;
static int nnodes;

static void child(void *p) { *(int *)p = 1; }

static void work(void *p)
{
    node *n = p;
    n->start = atomic_fetch_add(&ticket, 1);
    n->ran_on = pthread_self();
    if (n->mode == 2) {
        int ran = 0;
        CHECK_EQ(up_task(child, &ran, NULL), UP_OK);
        n->child_ran_inside = ran;
    }
    test_spin((unsigned)n->spin);
    n->end = atomic_fetch_add(&ticket, 1);
}

static void create(node *n)
{
    up_task_opts opts = UP_TASK_OPTS(.undeferred = n->mode == 1, .final = n->mode == 2);
    CHECK_EQ(up_task_deps(work, n, n->deps, (size_t)n->ndeps, n->mode ? &opts : NULL), UP_OK);
    if (n->mode) { /* done, here, before the call returned */
        CHECK_GT(n->end, n->start);
        CHECK(pthread_equal(n->ran_on, pthread_self()));
        if (n->mode == 2)
            CHECK(n->child_ran_inside);
    }
}

static void dag_region(void *p)
{
    (void)p;
    if (up_single()) {
        for (int i = 0; i < nnodes; i++)
            create(&nodes[i]);
        up_taskwait();
    }
}

static int writes(up_dep_kind k) { return k != UP_DEP_IN; }

/* The most readers that follow one writer of an address before the next
 * writer: the successors the runtime must record for that writer beyond
 * the few a node holds inline (pragmas/src/deps.c). */
static int max_fanout(void)
{
    int best = 0;
    for (int a = 0; a < ADDRS; a++) {
        int run = 0;
        for (int i = 0; i < nnodes; i++)
            for (int d = 0; d < nodes[i].ndeps; d++)
                if (nodes[i].deps[d].addr == &addr_cells[a]) {
                    run = writes(nodes[i].deps[d].kind) ? 0 : run + 1;
                    best = run > best ? run : best;
                }
    }
    return best;
}

static void check_dag(void)
{
    for (int b = 0; b < nnodes; b++)
        for (int d = 0; d < nodes[b].ndeps; d++) {
            const void *addr = nodes[b].deps[d].addr;
            up_dep_kind kb = nodes[b].deps[d].kind;
            /* Walk back over earlier accesses of this address. */
            for (int a = b - 1; a >= 0; a--) {
                int hit = -1;
                for (int e = 0; e < nodes[a].ndeps; e++)
                    if (nodes[a].deps[e].addr == addr)
                        hit = e;
                if (hit < 0)
                    continue;
                up_dep_kind ka = nodes[a].deps[hit].kind;
                if (ka == UP_DEP_MUTEXINOUTSET && kb == UP_DEP_MUTEXINOUTSET) {
                    /* Same set: mutual exclusion, any order. */
                    CHECK(nodes[a].end < nodes[b].start || nodes[b].end < nodes[a].start);
                    continue;
                }
                if (writes(ka) || writes(kb))
                    CHECK_LT(nodes[a].end, nodes[b].start);
                if (writes(ka) && ka != UP_DEP_MUTEXINOUTSET)
                    break; /* earlier accesses are ordered through this writer */
            }
        }
}

static void run_dag(up_pool *pool, unsigned threads)
{
    atomic_store(&ticket, 0);
    CHECK_EQ(up_parallel(pool, threads, dag_region, NULL), UP_OK);
    for (int i = 0; i < nnodes; i++)
        CHECK_GT(nodes[i].end, nodes[i].start);           /* ran */
    CHECK_EQ(atomic_load(&ticket), 2 * (uint64_t)nnodes); /* each exactly once */
    check_dag();
}

/* A writer, FANOUT readers, then a writer: the first writer gets FANOUT + 1
 * successors, far more than a node holds inline (4), at any test scale. */
#define FANOUT 40
static void fanout_dag(void)
{
    nnodes = FANOUT + 2;
    memset(nodes, 0, (size_t)nnodes * sizeof *nodes);
    for (int i = 0; i < nnodes; i++) {
        nodes[i].ndeps = 1;
        nodes[i].deps[0].addr = &addr_cells[0];
        nodes[i].deps[0].kind = i == 0 ? UP_DEP_OUT : i == FANOUT + 1 ? UP_DEP_INOUT : UP_DEP_IN;
        nodes[i].spin = 300 * (i % 4);
    }
}

int main(void)
{
    /* Undeferred and final tasks with dependencies are mixed in on the
     * ultrapool backend only: OpenMP may defer a final task itself, and
     * libomp 14 crashed now and then on undeferred ones (docs/interop.md). */
    const char *backend = getenv("UP_BACKEND");
    int own_backend = !backend || !*backend || !strcasecmp(backend, "ultrapool");
    uint64_t seed = test_seed();
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    int dags = (int)test_size("UP_TEST_DAGS", 60);
    nnodes = (int)test_size("UP_TEST_DAG_NODES", 300);
    nodes = calloc((size_t)(nnodes > FANOUT + 2 ? nnodes : FANOUT + 2), sizeof *nodes);
    long edges = 0;
    int fanout = 0;
    for (int g = 0; g < dags; g++) {
        /* Every fourth DAG mostly reads: long runs of readers after a
         * writer, so writers get many successors. */
        int read_mostly = g % 4 == 3;
        memset(nodes, 0, (size_t)nnodes * sizeof *nodes);
        for (int i = 0; i < nnodes; i++) {
            node *n = &nodes[i];
            n->ndeps = 1 + (int)(test_rand(&seed) % MAXDEPS);
            n->spin = (int)(test_rand(&seed) % 2000);
            unsigned r = (unsigned)(test_rand(&seed) % 16);
            n->mode = !own_backend ? 0 : r == 0 ? 1 : r == 1 ? 2 : 0;
            for (int d = 0; d < n->ndeps; d++) {
                int a;
                int dup;
                do { /* distinct addresses within one task */
                    a = (int)(test_rand(&seed) % ADDRS);
                    dup = 0;
                    for (int e = 0; e < d; e++)
                        dup |= n->deps[e].addr == &addr_cells[a];
                } while (dup);
                n->deps[d].addr = &addr_cells[a];
                if (read_mostly && test_rand(&seed) % 8 != 0)
                    n->deps[d].kind = UP_DEP_IN;
                else
                    n->deps[d].kind = (up_dep_kind)(test_rand(&seed) % 4);
                edges++;
            }
        }
        run_dag(pool, 1 + (unsigned)(g % 3));
        int f = max_fanout();
        fanout = f > fanout ? f : fanout;
    }
    int random_nodes = nnodes;
    for (unsigned threads = 1; threads <= 3; threads++) {
        fanout_dag();
        CHECK_EQ(max_fanout(), FANOUT);
        run_dag(pool, threads);
    }
    nnodes = random_nodes;
    CHECK_EQ(up_task_deps(work, NULL, NULL, 2, NULL), UP_EINVAL);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    printf("deps: %d random DAGs of %d tasks (%ld dependences, up to %d readers after one "
           "writer) and a writer with %d readers ran in an order OpenMP allows\n",
           dags, nnodes, edges, fanout, FANOUT);
    free(nodes);
    return 0;
}
