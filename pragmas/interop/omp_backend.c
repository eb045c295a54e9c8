/* An OpenMP backend of <ultrapool/parallel.h>: every construct of the
 * layer run by the OpenMP runtime this file is compiled against. Built
 * once per runtime, as a module of its own (libultrapool_omp_gomp with
 * GCC and libgomp, libultrapool_omp_llvm with clang and libomp), because
 * the two runtimes cannot share a process; the layer loads the one asked
 * for on first use (pragmas/src/backend.c) and calls it through the table
 * of up_omp_ops.h, after checking the arguments.
 *
 * Where ultrapool's semantics go further than OpenMP's, this file adds
 * what is missing on top of plain OpenMP constructs:
 *   - a task's children complete before the task does: every task that
 *     created tasks ends with a taskwait, so its descendants are done
 *     when it completes;
 *   - taskgroup cancellation is the layer's own flag, carried by every
 *     task created inside the group, so it works whatever
 *     OMP_CANCELLATION says, and a task of a cancelled group that has not
 *     started is skipped (undeferred ones too);
 *   - a region, a reduction and a dependency list take values known only
 *     at run time (team sizes, operators, lists of any length), through
 *     OpenMP 5.0 depend iterators and a team record of this file. */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "up_omp_ops.h"

/* The runtime's atomics (one header for every atomic, see atomic.h). */
#include "../../runtime/src/atomic.h"

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

/* A taskgroup: its flag, read by the tasks created inside it. */
typedef struct group {
    atomic_int cancelled;
} group;

/* A region's shared record, on the stack of the thread that opened it. */
#define SLOT  256 /* the largest reduction value (parallel.h) */
#define ALIGN 64
#define NSETS 2
typedef struct team {
    _Atomic(unsigned char *) slots; /* NSETS x size slots, made by the first reduction */
    atomic_int short_handed;        /* exact region that got fewer threads */
} team;

/* What the thread is running: its team, the taskgroup of the running
 * task, the task nesting depth, the reductions it has met in this team,
 * and whether the running task created tasks (only then does it need the
 * taskwait that makes its children complete before it). Saved and
 * restored around every region and task this thread runs, which nest like
 * calls because every task is tied. */
typedef struct context {
    team *t;
    group *g;
    unsigned depth;
    unsigned reduces;
    int spawned;
} context;
static _Thread_local context cur;

static int group_cancelled(const group *g) { return g && up__load_relaxed(&g->cancelled); }

/* ---- regions ---------------------------------------------------------- */

static int parallel(unsigned nthreads, int exact, up_fn fn, void *ctx)
{
    /* As on ultrapool: above the thread limit is a team that can never
     * be (UP_EINVAL), no level left to be active one that cannot be now. */
    if (exact && nthreads > (unsigned)omp_get_thread_limit())
        return UP_EINVAL;
    if (exact && nthreads > 1 && omp_get_active_level() >= omp_get_max_active_levels())
        return UP_EAGAIN;
    unsigned want = nthreads ? nthreads : (unsigned)omp_get_max_threads();
    int dynamic = omp_get_dynamic();
    if (exact && dynamic)
        omp_set_dynamic(0);
    team t;
    atomic_init(&t.slots, NULL);
    atomic_init(&t.short_handed, 0);
    context outer = cur;
#pragma omp parallel num_threads(want)
    {
        context saved = cur;
        cur = (context){&t, NULL, 1, 0, 0};
        if (exact && (unsigned)omp_get_num_threads() != want)
            up__store_relaxed(&t.short_handed, 1);
        else
            fn(ctx);
        cur = saved;
    }
    cur = outer;
    if (exact && dynamic)
        omp_set_dynamic(dynamic);
    free(up__load_relaxed(&t.slots));
    return up__load_relaxed(&t.short_handed) ? UP_EAGAIN : UP_OK;
}

static unsigned thread_num(void) { return (unsigned)omp_get_thread_num(); }
static unsigned num_threads(void) { return (unsigned)omp_get_num_threads(); }
static unsigned level(void) { return (unsigned)omp_get_level(); }
static unsigned active_level(void) { return (unsigned)omp_get_active_level(); }
static unsigned max_active_levels(void) { return (unsigned)omp_get_max_active_levels(); }

static void barrier(void)
{
#pragma omp barrier
}

static int single(void)
{
    int mine = 0;
#pragma omp single nowait
    mine = 1;
    return mine;
}

/* ---- loops ------------------------------------------------------------ */

/* Dynamic: chunk k of c units is [k c, min((k + 1) c, n)), one body call
 * each, handed out by the runtime's dynamic schedule over chunk indices.
 *
 * Guided: the runtime's guided schedule would hand out its grabs one
 * iteration at a time to the loop body, which for a range of 2^63
 * iterations never ends. Instead the chunks are the layer's guided
 * sequence (up_omp_guided_take from offset 0, as if taken one after the
 * other: decreasing, at least c), numbered, and handed out by a monotonic
 * dynamic schedule over their numbers; a member gets increasing numbers,
 * so it walks the sequence forward once. There are O(team * log n) of
 * them. */
static uint64_t guided_chunks(uint64_t n, uint64_t c, unsigned size)
{
    uint64_t count = 0;
    for (uint64_t i = 0; i < n; count++)
        i += up_omp_guided_take(n, i, c, size);
    return count;
}

static void share(uint64_t n, const up_for_opts *o, up_omp_units_fn body, void *p)
{
    unsigned size = (unsigned)omp_get_num_threads();
    if (size < 2) {
        if (n)
            body(0, n, p);
        return;
    }
    uint64_t c = o->chunk > 0 ? (uint64_t)o->chunk : 1;
    if (o->schedule == UP_SCHED_GUIDED) {
        uint64_t nchunks = guided_chunks(n, c, size), at = 0, off = 0;
#pragma omp for schedule(monotonic : dynamic, 1) nowait
        for (uint64_t k = 0; k < nchunks; k++) {
            for (; at < k; at++)
                off += up_omp_guided_take(n, off, c, size);
            uint64_t take = up_omp_guided_take(n, off, c, size);
            body(off, off + take, p);
        }
    } else {
        uint64_t nchunks = n / c + (n % c != 0);
#pragma omp for schedule(monotonic : dynamic, 1) nowait
        for (uint64_t k = 0; k < nchunks; k++) {
            uint64_t b = k * c;
            body(b, n - b > c ? b + c : n, p);
        }
    }
    if (!o->nowait) {
#pragma omp barrier
    }
}

/* Every member puts its value in its slot of this reduction's set, and
 * after the barrier every member combines all slots in member order, so
 * all of them get the same result, bit for bit. Two sets alternate: a
 * member can write a set again only two reductions later, after the
 * barrier of the one between, which every member reaches only when done
 * reading. The slots come with the first reduction of the team (a CAS
 * decides whose allocation is kept), so regions without one pay nothing. */
static unsigned char *team_slots(team *t, unsigned size)
{
    unsigned char *s = up__load_acquire(&t->slots);
    if (s)
        return s;
    unsigned char *mine = aligned_alloc(ALIGN, (size_t)NSETS * size * SLOT);
    if (!mine)
        abort(); /* a team's few kB: nothing sensible is left to do */
    if (up__cas_strong_acq_rel(&t->slots, &s, mine))
        return mine;
    free(mine);
    return s;
}

static int reduce(void *value, size_t size, up_omp_combine_fn combine, void *cctx)
{
    unsigned n = (unsigned)omp_get_num_threads();
    if (n < 2)
        return UP_OK;
    if (!cur.t) /* a team of the program's own #pragma omp parallel */
        return UP_EINVAL;
    unsigned char *slots = team_slots(cur.t, n);
    unsigned set = cur.reduces++ % NSETS;
    unsigned char *base = slots + (size_t)set * n * SLOT;
    memcpy(base + (size_t)omp_get_thread_num() * SLOT, value, size);
#pragma omp barrier
    unsigned char acc[SLOT];
    memcpy(acc, base, size);
    for (unsigned m = 1; m < n; m++)
        combine(acc, base + (size_t)m * SLOT, cctx);
    memcpy(value, acc, size);
    return UP_OK;
}

/* ---- tasks ------------------------------------------------------------ */

/* What a task carries: its own small record when fn takes a pointer (the
 * common case, and what the runtime copies for every task), the payload
 * beside it only for up_task_copy. */
typedef struct task_rec {
    up_fn fn;
    void *arg;
    group *g;
    unsigned depth;
} task_rec;

typedef struct copy_rec {
    task_rec r;
    union {
        max_align_t align;
        unsigned char bytes[UP_PAYLOAD_MAX];
    } pay;
} copy_rec;

static void run_task(const task_rec *r, void *arg)
{
    context saved = cur;
    cur.g = r->g;
    cur.depth = r->depth;
    cur.spawned = 0;
    if (!group_cancelled(r->g))
        r->fn(arg);
    if (cur.spawned) {
#pragma omp taskwait
    }
    cur = saved;
}

/* OpenMP depend clauses name lvalues; the address is all that is used,
 * and nothing is read through it. NULL stands for an address of its own,
 * since a runtime may take a null address for "no dependency". */
static char null_stand_in;

/* The common case on its own: a small frame, and the record built where
 * OpenMP copies it from. */
static int task_plain(up_fn fn, void *arg)
{
    task_rec r = {fn, arg, cur.g, cur.depth + 1};
    cur.spawned = 1;
    /* A team of one runs every task at once (parallel.h). */
    if (omp_get_num_threads() < 2) {
        run_task(&r, arg);
        return UP_OK;
    }
#pragma omp task firstprivate(r)
    run_task(&r, r.arg);
    return UP_OK;
}

static int task(up_fn fn, void *arg, const void *payload, size_t size, const up_dep *deps,
                size_t ndeps, const up_task_opts *opts)
{
    if (!opts && !size && ndeps == 0)
        return task_plain(fn, arg);
    cur.spawned = 1;
    copy_rec c;
    c.r.fn = fn;
    c.r.arg = arg;
    c.r.g = cur.g;
    c.r.depth = cur.depth + 1;
    if (size)
        memcpy(c.pay.bytes, payload, size);
    /* A team of one runs every task at once, in order (parallel.h), which
     * also satisfies any dependency. */
    if (omp_get_num_threads() < 2) {
        run_task(&c.r, size ? (void *)c.pay.bytes : arg);
        return UP_OK;
    }
    int undeferred = opts && opts->undeferred, final = opts && opts->final;
    int priority = opts && opts->priority > 0 ? opts->priority : 0;
    if (ndeps == 0) {
#pragma omp task firstprivate(c) if (!undeferred) final(final) priority(priority)
        run_task(&c.r, size ? (void *)c.pay.bytes : c.r.arg);
        return UP_OK;
    }
    /* The addresses by kind, for one depend iterator per kind. */
    char *local[4][16];
    char **lists[4];
    size_t count[4] = {0, 0, 0, 0};
    char **heap = NULL;
    if (ndeps <= 16) {
        for (int k = 0; k < 4; k++)
            lists[k] = local[k];
    } else {
        heap = malloc(4 * ndeps * sizeof *heap);
        if (!heap)
            return UP_ENOMEM;
        for (int k = 0; k < 4; k++)
            lists[k] = heap + (size_t)k * ndeps;
    }
    for (size_t i = 0; i < ndeps; i++) {
        int k = (int)deps[i].kind;
        char *a = deps[i].addr ? (char *)(uintptr_t)deps[i].addr : &null_stand_in;
        lists[k][count[k]++] = a;
    }
    char **in = lists[UP_DEP_IN], **out = lists[UP_DEP_OUT], **inout = lists[UP_DEP_INOUT],
         **mutex = lists[UP_DEP_MUTEXINOUTSET];
    size_t nin = count[UP_DEP_IN], nout = count[UP_DEP_OUT], ninout = count[UP_DEP_INOUT],
           nmutex = count[UP_DEP_MUTEXINOUTSET];
    /* GCC 12 does not count a use inside a depend iterator. */
    (void)nin, (void)nout, (void)ninout, (void)nmutex;
/* clang-format off */
#pragma omp task firstprivate(c) if (!undeferred) final(final) priority(priority) \
    depend(iterator(size_t i = 0 : nin), in : *in[i]) \
    depend(iterator(size_t i = 0 : nout), out : *out[i]) \
    depend(iterator(size_t i = 0 : ninout), inout : *inout[i]) \
    depend(iterator(size_t i = 0 : nmutex), mutexinoutset : *mutex[i])
    /* clang-format on */
    run_task(&c.r, size ? (void *)c.pay.bytes : c.r.arg);
    free(heap);
    return UP_OK;
}

/* Every child is complete after it, and each child completed its own
 * children first (run_task): the running task needs no taskwait at its
 * end for the tasks it created so far. */
static void taskwait(void)
{
#pragma omp taskwait
    cur.spawned = 0;
}

static void taskyield(void)
{
#pragma omp taskyield
}

static unsigned task_depth(void) { return cur.depth; }

static int taskgroup(up_fn fn, void *ctx)
{
    group g;
    atomic_init(&g.cancelled, 0);
    group *outer = cur.g;
    cur.g = &g;
#pragma omp taskgroup
    fn(ctx);
    cur.g = outer;
    return up__load_relaxed(&g.cancelled) ? UP_ECANCELED : UP_OK;
}

static void cancel_taskgroup(void)
{
    if (cur.g)
        up__store_relaxed(&cur.g->cancelled, 1);
}

static int cancelled(void) { return group_cancelled(cur.g); }

/* ---- taskloop --------------------------------------------------------- */

#define LOOP_PAYLOAD 48
typedef struct loop_rec {
    up_omp_chunk_fn chunk;
    group *g;
    unsigned depth;
    union {
        max_align_t align;
        unsigned char bytes[LOOP_PAYLOAD];
    } pay;
} loop_rec;

static void run_chunk(loop_rec *r, uint64_t k)
{
    context saved = cur;
    cur.g = r->g;
    cur.depth = r->depth;
    cur.spawned = 0;
    if (!group_cancelled(r->g))
        r->chunk(k, r->pay.bytes);
    if (cur.spawned) {
#pragma omp taskwait
    }
    cur = saved;
}

/* The chunks as tasks: libgomp runs a whole taskloop on the encountering
 * thread, undeferred, when its tasks would pass 64 per thread in flight,
 * so at most TASKS_PER_THREAD tasks per thread are made, each running a
 * run of consecutive chunks (the body still once per chunk). The
 * description travels in each task, so the caller's frame may be gone
 * (nogroup). */
#define TASKS_PER_THREAD 8
static void taskloop(uint64_t k, up_omp_chunk_fn chunk, const void *payload, size_t size)
{
    cur.spawned = 1;
    loop_rec r;
    r.chunk = chunk;
    r.g = cur.g;
    r.depth = cur.depth + 1;
    memcpy(r.pay.bytes, payload, size < LOOP_PAYLOAD ? size : LOOP_PAYLOAD);
    if (omp_get_num_threads() < 2) {
        for (uint64_t i = 0; i < k && !group_cancelled(r.g); i++)
            run_chunk(&r, i);
        return;
    }
    uint64_t cap = TASKS_PER_THREAD * (uint64_t)omp_get_num_threads();
    uint64_t tasks = k < cap ? k : cap, per = k / tasks, extra = k % tasks;
#pragma omp taskloop num_tasks(tasks) nogroup firstprivate(r)
    for (uint64_t t = 0; t < tasks; t++) {
        uint64_t lo = per * t + (t < extra ? t : extra), hi = lo + per + (t < extra);
        for (uint64_t i = lo; i < hi; i++)
            run_chunk(&r, i);
    }
}

/* ---- the table -------------------------------------------------------- */

#if defined(__clang__)
#define RUNTIME_NAME "libomp"
#else
#define RUNTIME_NAME "libgomp"
#endif

static const up_omp_ops ops = {
    UP_OMP_OPS_VERSION,
    RUNTIME_NAME,
    parallel,
    thread_num,
    num_threads,
    level,
    barrier,
    single,
    share,
    reduce,
    task,
    taskwait,
    taskyield,
    task_depth,
    taskgroup,
    cancel_taskgroup,
    cancelled,
    taskloop,
    task_plain,
    active_level,
    max_active_levels,
};

EXPORT const up_omp_ops *up_omp_backend(void) { return &ops; }
