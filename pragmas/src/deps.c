/* Task dependencies between siblings, on addresses (OpenMP's depend
 * clause). The creating frame keeps a table from address to the last task
 * that writes it and the tasks that read it since. Any address is a key,
 * NULL included (addresses are compared, never dereferenced): NULL, the
 * table's empty marker, has its entry beside the table. A new task depends on
 * the last writer (in) or on the last writer and every reader since (out,
 * inout); mutexinoutset is ordered like inout, which is one of the orders
 * OpenMP allows (the tasks of a set run one at a time, in creation order).
 *
 * A dependent task has a node: its task record, a count of unfinished
 * predecessors, and its successors, which completion closes. During
 * creation the count holds a large bias instead of the edges it will get:
 * each completing predecessor takes one off, and creation, once it knows
 * its k edges, takes off the bias less k in one atomic step. The count
 * reaches zero exactly when creation is over and all k predecessors are
 * done, with one atomic operation per task instead of one per edge.
 *
 * Successors. Only the thread creating the siblings adds edges (the
 * table belongs to their parent task's frame, also for the tasks it
 * creates inside a taskgroup, whose frame is a frame of its own), so each node has one producer
 * of successors and one consumer, its completion. The first SUCC_INLINE
 * successors go into an array on the node's first cache line, with the
 * count and the predecessor count, so that completing a task touches that
 * line and its successors' first lines and nothing the creator wrote
 * elsewhere. Invariant: nsucc counts the array slots written, and carries
 * NSUCC_CLOSED from completion on (never cleared while the node lives).
 * The creator writes slot k, then moves nsucc from k to k + 1 with a
 * release CAS that expects it open; completion swaps nsucc for
 * NSUCC_CLOSED (acq_rel) and releases the k slots it saw. So each slot
 * edge is either counted before the close, and seen, or its CAS failed,
 * and the creator does not count it: the predecessor is done. Successors
 * beyond the array go to a lock-free list, more: NULL or a chain of edges
 * while the node runs; the creator turns to it only after reading nsucc
 * full and open, and pushes with a CAS expecting an open list. Completion
 * closes nsucc first; if it found the array full it then swaps the chain
 * for SUCC_CLOSED, with the same either-or argument (if it found the
 * array not full, the creator can never reach more, which stays NULL).
 *
 * Nodes and tables (with their edge blocks) come from per-thread free
 * lists and go back when the creating frame's children are all done;
 * nothing else can touch them then, since a node completes before its task
 * reports to the parent. They go back to a process-wide stash, once per
 * frame under a mutex, and a thread whose list is empty takes the whole
 * stash: the thread that creates a region's tasks changes from one region
 * to the next (whoever wins up_single), and without the stash each change
 * would allocate and fault in every node again. */
#include <stdlib.h>
#include <string.h>

#include "par_internal.h"
#include "up_layer.h" /* up__set_error */

typedef struct par_edge {
    par_node *node;
    struct par_edge *next;
} par_edge;

#define SUCC_INLINE 4

/* Line 0 is what the creating and the completing thread share; the task
 * record follows on lines of its own. */
struct par_node {
    _Alignas(PAR_LINE) _Atomic uint32_t npred;
    _Atomic uint32_t nsucc;      /* (atomic) see the invariant above */
    par_node *succ[SUCC_INLINE]; /* slots below nsucc, written before it */
    par_edge *_Atomic more;      /* (atomic) successors past the array */
    par_node *next;              /* the nodes of one table, or a free list */
    par_hold *hold;              /* NULL, or the creator that runs it (par_hold) */
    _Alignas(PAR_LINE) par_task task;
};
_Static_assert(offsetof(par_node, task) == PAR_LINE, "a node's shared fields fill one line");

#define SUCC_CLOSED  ((par_edge *)(uintptr_t)1)
#define NSUCC_CLOSED (UINT32_C(1) << 31)
#define NPRED_BIAS   (1u << 30) /* more than the edges one task can get */

typedef struct dep_entry {
    const void *addr;
    par_node *last_out;
    par_edge *readers;
} dep_entry;

#define EDGE_BLOCK 64
typedef struct edge_block {
    struct edge_block *next;
    unsigned used;
    par_edge e[EDGE_BLOCK];
} edge_block;

struct par_deptable {
    par_deptable *next_free; /* free list; the first field */
    size_t cap, used;
    dep_entry *entries;
    par_node *nodes;      /* in use, chained by next */
    par_node *nodes_tail; /* the first one taken, last in the chain */
    edge_block *blocks;   /* in use; kept with the table when recycled */
    edge_block *spare;
    /* The entry of address NULL, which marks the empty slots of entries
     * and so cannot have one there. */
    dep_entry null_entry;
};

static pthread_mutex_t stash_lock = PTHREAD_MUTEX_INITIALIZER;
static par_node *stash_nodes;      /* (stash_lock) chained by next */
static par_deptable *stash_tables; /* (stash_lock) chained by next_free */

static par_deptable *table_get(par_thread *th)
{
    par_deptable *t = th->free_tables;
    if (!t) {
        pthread_mutex_lock(&stash_lock);
        t = th->free_tables = stash_tables;
        stash_tables = NULL;
        pthread_mutex_unlock(&stash_lock);
    }
    if (t) {
        th->free_tables = t->next_free;
        return t;
    }
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = 64;
    t->entries = calloc(t->cap, sizeof *t->entries);
    if (!t->entries) {
        free(t);
        return NULL;
    }
    return t;
}

static par_edge *edge_new(par_deptable *t, par_node *node, par_edge *next)
{
    if (!t->blocks || t->blocks->used == EDGE_BLOCK) {
        edge_block *b = t->spare;
        if (b)
            t->spare = b->next;
        else if (!(b = malloc(sizeof *b)))
            return NULL;
        b->used = 0;
        b->next = t->blocks;
        t->blocks = b;
    }
    par_edge *e = &t->blocks->e[t->blocks->used++];
    e->node = node;
    e->next = next;
    return e;
}

/* The addresses of one cache line get neighbouring slots (the line is
 * hashed, the word within it kept): a program's dependencies are often
 * neighbours in memory, cells of one row or step, and their entries then
 * share table lines instead of missing the cache once each. */
static size_t slot_of(const void *addr, size_t cap)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    uint64_t h = ((a >> 6) * 0x9e3779b97f4a7c15ull) >> 20;
    return (size_t)((h << 3) | ((a >> 3) & 7)) & (cap - 1);
}

static int grow(par_deptable *t)
{
    size_t ncap = t->cap * 2;
    dep_entry *ne = calloc(ncap, sizeof *ne);
    if (!ne)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->entries[i].addr) {
            size_t k = slot_of(t->entries[i].addr, ncap);
            while (ne[k].addr)
                k = (k + 1) & (ncap - 1);
            ne[k] = t->entries[i];
        }
    free(t->entries);
    t->entries = ne;
    t->cap = ncap;
    return 0;
}

static dep_entry *lookup(par_deptable *t, const void *addr)
{
    if (!addr)
        return &t->null_entry;
    if (2 * (t->used + 1) > t->cap && grow(t) != 0)
        return NULL;
    size_t k = slot_of(addr, t->cap);
    while (t->entries[k].addr && t->entries[k].addr != addr)
        k = (k + 1) & (t->cap - 1);
    if (!t->entries[k].addr) {
        t->entries[k].addr = addr;
        t->used++;
    }
    return &t->entries[k];
}

/* pred -> succ, unless pred already completed: 1 when the edge was added
 * (the caller counts it), 0 when not needed, -1 out of memory. */
static int add_edge(par_deptable *t, par_node *pred, par_node *succ)
{
    if (!pred || pred == succ)
        return 0;
    /* succ's count still holds the bias, so pred's completion may release
     * the edge at once without waking succ early. */
    uint32_t k = up__load_acquire(&pred->nsucc);
    if (k & NSUCC_CLOSED)
        return 0;
    if (k < SUCC_INLINE) {
        pred->succ[k] = succ;
        /* This thread is the only other writer: failing means closed. */
        return up__cas_strong_release_acquire(&pred->nsucc, &k, k + 1);
    }
    par_edge *old = up__load_acquire(&pred->more);
    if (old == SUCC_CLOSED)
        return 0;
    par_edge *e = edge_new(t, succ, old);
    if (!e)
        return -1;
    while (!up__cas_weak_release_acquire(&pred->more, &old, e)) {
        if (old == SUCC_CLOSED) /* completed meanwhile: no edge */
            return 0;
        e->next = old;
    }
    return 1;
}

int par_deps_create(par_thread *th, par_task *task, const up_dep *deps, size_t ndeps,
                    par_hold *hold)
{
    par_frame *f = th->c.frame;
    while (f->taskgroup) /* the task's table: its taskgroups end before its join frees it */
        f = f->parent;
    if (!f->deps && !(f->deps = table_get(th))) {
        up__set_error("task dependencies: out of memory for a dependency table");
        return UP_ENOMEM;
    }
    par_deptable *t = f->deps;
    if (!th->free_nodes) {
        pthread_mutex_lock(&stash_lock);
        th->free_nodes = stash_nodes;
        stash_nodes = NULL;
        pthread_mutex_unlock(&stash_lock);
    }
    par_node *n = th->free_nodes;
    if (n)
        th->free_nodes = n->next;
    else if (!(n = aligned_alloc(PAR_LINE, sizeof *n))) {
        up__set_error("task dependencies: out of memory for a task's node");
        return UP_ENOMEM;
    }
    atomic_init(&n->npred, NPRED_BIAS);
    atomic_init(&n->nsucc, 0);
    atomic_init(&n->more, NULL);
    n->hold = hold;
    if (!t->nodes)
        t->nodes_tail = n;
    n->next = t->nodes;
    t->nodes = n;
    task->node = n;
    n->task = *task;
    int edges = 0, rc;
    for (size_t i = 0; i < ndeps; i++) {
        dep_entry *e = lookup(t, deps[i].addr);
        if (!e || (rc = add_edge(t, e->last_out, n)) < 0)
            goto fail;
        edges += rc;
        if (deps[i].kind == UP_DEP_IN) {
            par_edge *r = edge_new(t, n, e->readers);
            if (!r)
                goto fail;
            e->readers = r;
        } else {
            for (par_edge *r = e->readers; r; r = r->next) {
                if ((rc = add_edge(t, r->node, n)) < 0)
                    goto fail;
                edges += rc;
            }
            e->readers = NULL;
            e->last_out = n;
        }
    }
    /* Drop the bias, keeping one count per edge: ready now unless some
     * predecessor is left. */
    return up__fetch_sub_acq_rel(&n->npred, NPRED_BIAS - (uint32_t)edges) ==
           NPRED_BIAS - (uint32_t)edges;
fail:
    /* The task is not created. Its node may already be a predecessor of
     * later tasks: mark it complete so they never wait for it, and keep the
     * bias so its own predecessors never run it. */
    up__store_release(&n->nsucc, NSUCC_CLOSED);
    up__store_release(&n->more, SUCC_CLOSED);
    up__set_error("task dependencies: out of memory for the table or its edges");
    return UP_ENOMEM;
}

void par_deps_thread_exit(par_thread *th)
{
    while (th->free_nodes) {
        par_node *n = th->free_nodes;
        th->free_nodes = n->next;
        free(n);
    }
    while (th->free_tables) {
        par_deptable *t = th->free_tables;
        th->free_tables = t->next_free;
        while (t->spare) {
            edge_block *b = t->spare;
            t->spare = b->next;
            free(b);
        }
        free(t->entries);
        free(t);
    }
}

static void release(par_thread *th, par_node *s)
{
    if (up__fetch_sub_acq_rel(&s->npred, 1) != 1)
        return;
    par_hold *h = s->hold;
    if (!h) {
        par_push_ready(th, &s->task);
        return;
    }
    /* The creator runs it; it may return once ready is set. */
    par_member *slot = h->slot;
    up__store_seqcst(&h->ready, 1);
    if (slot)
        par_wake_slot(slot);
}

void par_deps_complete(par_thread *th, par_node *n)
{
    /* acq_rel: a creator that finds the node closed adds no edge, and the
     * successor it then runs must see this task's writes. */
    uint32_t k = up__exchange_acq_rel(&n->nsucc, NSUCC_CLOSED);
    for (uint32_t i = 0; i < k; i++)
        release(th, n->succ[i]);
    if (k < SUCC_INLINE) /* the creator never went past the array */
        return;
    par_edge *e = up__exchange_acq_rel(&n->more, SUCC_CLOSED);
    for (; e; e = e->next)
        release(th, e->node);
}

void par_deps_free(par_thread *th, par_frame *f)
{
    (void)th;
    par_deptable *t = f->deps;
    f->deps = NULL;
    /* The table's chain of nodes is a free list as it is: handing it over
     * touches no node, whose lines the other members may hold. */
    par_node *head = t->nodes, *tail = t->nodes_tail;
    t->nodes = t->nodes_tail = NULL;
    while (t->blocks) {
        edge_block *b = t->blocks;
        t->blocks = b->next;
        b->next = t->spare;
        t->spare = b;
    }
    memset(t->entries, 0, t->cap * sizeof *t->entries);
    memset(&t->null_entry, 0, sizeof t->null_entry);
    t->used = 0;
    pthread_mutex_lock(&stash_lock);
    if (tail) {
        tail->next = stash_nodes;
        stash_nodes = head;
    }
    t->next_free = stash_tables;
    stash_tables = t;
    pthread_mutex_unlock(&stash_lock);
}
