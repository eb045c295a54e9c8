/* Worksharing loops (static, dynamic, guided, auto; 2-D collapse), the
 * combined parallel loop, and taskloop.
 *
 * Dynamic and guided loops share one iteration counter per loop. Loops in
 * flight (members may run ahead with nowait) use a ring of PAR_WS_SLOTS
 * counters: the c-th dynamic loop of a region uses slot c % PAR_WS_SLOTS
 * once that slot's generation says c; the last member to leave resets the
 * counter and moves the generation to c + PAR_WS_SLOTS. Every member meets
 * the same loops in the same order (as OpenMP requires), so c agrees. */
#include <stdlib.h>

#include "par_internal.h"

static void run_static(int64_t lo, int64_t hi, int64_t chunk, unsigned me, unsigned size,
                       up_range_fn body, void *ctx)
{
    int64_t n = hi - lo;
    if (chunk <= 0) {
        int64_t per = n / size, extra = n % size;
        int64_t b = lo + per * me + (me < extra ? me : extra);
        int64_t e = b + per + (me < extra ? 1 : 0);
        if (b < e)
            body(b, e, ctx);
        return;
    }
    for (int64_t b = lo + chunk * me; b < hi; b += chunk * size)
        body(b, b + chunk < hi ? b + chunk : hi, ctx);
}

static par_ws *enter_ws(par_thread *th)
{
    uint64_t c = th->c.ws_count++;
    par_ws *ws = &th->c.team->ws[c % PAR_WS_SLOTS];
    unsigned spins = 0;
    while (atomic_load_explicit(&ws->gen, memory_order_acquire) != c)
        par_relax(&spins);
    return ws;
}

static void leave_ws(par_thread *th, par_ws *ws, unsigned size)
{
    if (atomic_fetch_add_explicit(&ws->done, 1, memory_order_acq_rel) == size - 1) {
        uint64_t c = atomic_load_explicit(&ws->gen, memory_order_relaxed);
        atomic_store_explicit(&ws->next, 0, memory_order_relaxed);
        atomic_store_explicit(&ws->done, 0, memory_order_relaxed);
        atomic_store_explicit(&ws->gen, c + PAR_WS_SLOTS, memory_order_release);
    }
    (void)th;
}

int up_for(int64_t lo, int64_t hi, const up_for_opts *opts, up_range_fn body, void *ctx)
{
    if (!body)
        return UP_EINVAL;
    up_for_opts o = opts ? *opts : (up_for_opts){UP_SCHED_STATIC, 0, 0};
    if ((unsigned)o.schedule > UP_SCHED_AUTO || o.chunk < 0)
        return UP_EINVAL;
    par_thread *th = par_tls;
    unsigned size =
        th && th->c.team ? atomic_load_explicit(&th->c.team->size, memory_order_relaxed) : 1;
    if (size < 2) {
        if (lo < hi)
            body(lo, hi, ctx);
        return UP_OK;
    }
    unsigned me = th->c.member;
    int64_t n = hi > lo ? hi - lo : 0;
    switch (o.schedule) {
    case UP_SCHED_STATIC:
    case UP_SCHED_AUTO:
        run_static(lo, hi, o.schedule == UP_SCHED_AUTO ? 0 : o.chunk, me, size, body, ctx);
        break;
    case UP_SCHED_DYNAMIC: {
        int64_t chunk = o.chunk ? o.chunk : 1;
        par_ws *ws = enter_ws(th);
        for (;;) {
            int64_t i = atomic_fetch_add_explicit(&ws->next, chunk, memory_order_relaxed);
            if (i >= n)
                break;
            body(lo + i, lo + (i + chunk < n ? i + chunk : n), ctx);
        }
        leave_ws(th, ws, size);
        break;
    }
    case UP_SCHED_GUIDED: {
        int64_t min = o.chunk ? o.chunk : 1;
        par_ws *ws = enter_ws(th);
        int64_t i = atomic_load_explicit(&ws->next, memory_order_relaxed);
        while (i < n) {
            int64_t take = (n - i) / (2 * (int64_t)size);
            if (take < min)
                take = min;
            if (i + take > n)
                take = n - i;
            if (atomic_compare_exchange_weak_explicit(&ws->next, &i, i + take, memory_order_relaxed,
                                                      memory_order_relaxed))
                body(lo + i, lo + i + take, ctx), i += take;
        }
        leave_ws(th, ws, size);
        break;
    }
    }
    if (!o.nowait)
        par_barrier(th);
    return UP_OK;
}

typedef struct flat2d {
    int64_t ilo, jlo, ncols;
    up_range2d_fn body;
    void *ctx;
} flat2d;

/* A flat range cut into row pieces. */
static void flat_body(int64_t a, int64_t b, void *p)
{
    flat2d *f = p;
    while (a < b) {
        int64_t i = a / f->ncols, j = a % f->ncols;
        int64_t end = (i + 1) * f->ncols < b ? (i + 1) * f->ncols : b;
        f->body(f->ilo + i, f->jlo + j, f->jlo + j + (end - a), f->ctx);
        a = end;
    }
}

int up_for_2d(int64_t ilo, int64_t ihi, int64_t jlo, int64_t jhi, const up_for_opts *opts,
              up_range2d_fn body, void *ctx)
{
    if (!body)
        return UP_EINVAL;
    int64_t rows = ihi > ilo ? ihi - ilo : 0, cols = jhi > jlo ? jhi - jlo : 0;
    flat2d f = {ilo, jlo, cols ? cols : 1, body, ctx};
    return up_for(0, rows * cols, opts, flat_body, &f);
}

typedef struct pfor {
    int64_t lo, hi;
    up_for_opts opts;
    up_range_fn body;
    void *ctx;
} pfor;

static void pfor_region(void *p)
{
    pfor *a = p;
    up_for_opts o = a->opts;
    o.nowait = 1; /* the region's closing barrier follows at once */
    up_for(a->lo, a->hi, &o, a->body, a->ctx);
}

int up_parallel_for(up_pool *pool, int64_t lo, int64_t hi, const up_for_opts *opts,
                    up_range_fn body, void *ctx)
{
    if (!body)
        return UP_EINVAL;
    pfor a = {lo, hi, opts ? *opts : (up_for_opts){UP_SCHED_STATIC, 0, 0}, body, ctx};
    if ((unsigned)a.opts.schedule > UP_SCHED_AUTO || a.opts.chunk < 0)
        return UP_EINVAL;
    return up_parallel(pool, 0, pfor_region, &a);
}

/* taskloop: the range is cut into k chunks of n / k or n / k + 1
 * iterations, and a task holding several chunks hands the second half of
 * them to a new task until it holds one: a binary tree, so the first
 * steals take half the range at a time. OpenMP's rules follow from the
 * choice of k: grainsize g gives k = n / g chunks, each of at least g and
 * fewer than 2g iterations (all of them when n < g); num_tasks t gives
 * exactly min(t, n) chunks. */
typedef struct tloop {
    int64_t lo, hi, chunks; /* [lo, hi) in chunks balanced pieces */
    up_range_fn body;
    void *ctx;
} tloop;

/* Where the first kl of a range's k balanced chunks end. */
static int64_t chunks_end(int64_t lo, int64_t hi, int64_t k, int64_t kl)
{
    uint64_t n = (uint64_t)hi - (uint64_t)lo;
    uint64_t q = n / (uint64_t)k, r = n % (uint64_t)k;
    uint64_t extra = (uint64_t)kl < r ? (uint64_t)kl : r;
    return (int64_t)((uint64_t)lo + (uint64_t)kl * q + extra);
}

/* Where every task would run at once anyway (a team of one, or a final
 * task), the same chunks run in order as plain calls, without a task
 * each. As with undeferred tasks of a cancelled taskgroup, the chunks left
 * are skipped once the group is cancelled. */
static void tloop_serial(const tloop *a, const par_frame *f)
{
    const par_group *g = f ? f->group : NULL;
    uint64_t n = (uint64_t)a->hi - (uint64_t)a->lo, k = (uint64_t)a->chunks;
    uint64_t q = n / k, r = n % k;
    int64_t lo = a->lo;
    for (uint64_t i = 0; i < k; i++) {
        int64_t hi = (int64_t)((uint64_t)lo + q + (i < r));
        if (g && atomic_load_explicit(&g->cancelled, memory_order_relaxed))
            return;
        a->body(lo, hi, a->ctx);
        lo = hi;
    }
}

/* The range travels inside each task (a copied payload), so a subtree
 * needs nothing from the stack of the task that made it. */
static void tloop_task(void *p)
{
    tloop a = *(tloop *)p;
    par_thread *th = par_tls;
    if (!th || !par_defers(th, th->c.frame)) {
        tloop_serial(&a, th ? th->c.frame : NULL);
        return;
    }
    while (a.chunks > 1) {
        int64_t kl = a.chunks - a.chunks / 2, mid = chunks_end(a.lo, a.hi, a.chunks, kl);
        tloop right = {mid, a.hi, a.chunks / 2, a.body, a.ctx};
        up_task_copy(tloop_task, &right, sizeof right, NULL);
        a.hi = mid;
        a.chunks = kl;
    }
    a.body(a.lo, a.hi, a.ctx);
}

static void tloop_group(void *p) { tloop_task(p); }

int up_taskloop(int64_t lo, int64_t hi, const up_taskloop_opts *opts, up_range_fn body, void *ctx)
{
    if (!body || (opts && (opts->grainsize < 0 || opts->num_tasks < 0)))
        return UP_EINVAL;
    if (hi <= lo)
        return UP_OK;
    int64_t n = hi - lo, k;
    if (opts && opts->grainsize)
        k = n / opts->grainsize;
    else if (opts && opts->num_tasks)
        k = opts->num_tasks;
    else
        k = 4 * (int64_t)up_num_threads();
    if (k > n)
        k = n;
    if (k < 1)
        k = 1;
    tloop root = {lo, hi, k, body, ctx};
    if (opts && opts->nogroup) /* the current task waits at its next taskwait or end */
        return up_task_copy(tloop_task, &root, sizeof root, NULL);
    return up_taskgroup(tloop_group, &root);
}
