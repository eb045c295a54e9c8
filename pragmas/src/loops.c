/* Worksharing loops (static, dynamic, guided, auto; 2-D collapse), the
 * combined parallel loop, and taskloop.
 *
 * Counts and offsets are unsigned. A range [lo, hi) of int64 bounds holds
 * up to 2^64 - 1 iterations, which hi - lo in int64 cannot represent, so
 * every loop works on offsets from lo in [0, n) with n = hi - lo computed
 * as uint64_t, and turns an offset back into an index only to call the
 * body (at()). No sum of offsets below ever exceeds n, except the
 * dynamic counter's, whose bound is checked before it is used.
 *
 * Dynamic and guided loops share one iteration counter per loop. Loops in
 * flight (members may run ahead with nowait) use a ring of PAR_WS_SLOTS
 * counters: the c-th dynamic loop of a region uses slot c % PAR_WS_SLOTS
 * once that slot's generation says c; the last member to leave resets the
 * counter and moves the generation to c + PAR_WS_SLOTS. Every member meets
 * the same loops in the same order (as OpenMP requires), so c agrees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par_env.h" /* what UP_SCHED_RUNTIME means */
#include "par_internal.h"
#include "up_layer.h" /* up__set_error */

/* Iterations of [lo, hi): 0 when hi <= lo. */
static uint64_t count_of(int64_t lo, int64_t hi)
{
    return hi > lo ? (uint64_t)hi - (uint64_t)lo : 0;
}

/* lo + off for an offset within the range, so the result is an int64: the
 * sum is taken modulo 2^64 and converted back without an
 * implementation-defined cast. */
static int64_t at(int64_t lo, uint64_t off)
{
    uint64_t u = (uint64_t)lo + off;
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

/* A loop body on offsets [b, e) of the shared range. */
typedef void (*span_fn)(uint64_t b, uint64_t e, void *ctx);

/* The chunks. Every worksharing construct, up_for's and the GOMP ABI's,
 * takes its chunks from these three functions through the iterator below,
 * which works out at the construct's start what needs a division
 * (chunk_limit), so that a take divides nothing but guided's share.
 *
 * Static: chunk 0 gives member me the me-th of size balanced blocks;
 * chunk c deals chunks k = me, me + size, ... of c iterations, trip
 * counting those member me took, limit how many it gets. trip stays below
 * limit, so k = me + trip * size stays below the number of chunks and
 * k * c < n never wraps. */
static int static_chunk(uint64_t n, uint64_t chunk, unsigned me, unsigned size, uint64_t trip,
                        uint64_t limit, uint64_t *b, uint64_t *e)
{
    if (chunk == 0) {
        uint64_t per = n / size, extra = n % size;
        *b = per * me + (me < extra ? me : extra);
        *e = *b + per + (me < extra ? 1 : 0);
        return trip == 0 && *b < *e;
    }
    if (trip >= limit)
        return 0;
    *b = (me + trip * size) * chunk;
    *e = n - *b > chunk ? *b + chunk : n;
    return 1;
}

/* Dynamic: chunks of c iterations from the shared counter. With a
 * fetch-and-add, the counter goes past n: every chunk handed out adds c,
 * and so does each member's last, failing, attempt (the iterator makes
 * exactly one), so it ends at most at n + (size + 1) * c. Where that could
 * wrap past 2^64 (a chunk near 2^63, a range near 2^64; fetch_add 0) the
 * counter would come back below n and hand out iterations again; there a
 * CAS takes min(c, n - i) instead and the counter never passes n.
 * Relaxed: the counter only divides the work; the construct's end (a
 * barrier, or the program's own synchronisation after nowait) orders the
 * bodies' effects. */
static int dynamic_chunk(par_ws *ws, uint64_t n, uint64_t c, int fetch_add, uint64_t *b,
                         uint64_t *e)
{
    if (fetch_add) {
        uint64_t i = up__fetch_add_relaxed(&ws->next, c);
        if (i >= n)
            return 0;
        *b = i;
        *e = n - i > c ? i + c : n;
        return 1;
    }
    uint64_t i = up__load_relaxed(&ws->next);
    while (i < n) {
        uint64_t take = n - i < c ? n - i : c;
        if (up__cas_weak_relaxed(&ws->next, &i, i + take)) {
            *b = i;
            *e = i + take;
            return 1;
        }
    }
    return 0;
}

/* The iterator's limit for a construct of n iterations (above). */
static uint64_t chunk_limit(int sched, uint64_t n, uint64_t chunk, unsigned me, unsigned size)
{
    if (sched == PAR_WS_DYNAMIC)
        return chunk <= (UINT64_MAX - n) / ((uint64_t)size + 1);
    if (sched != PAR_WS_STATIC || chunk == 0)
        return 0;
    uint64_t nchunks = n / chunk + (n % chunk != 0);
    return me < nchunks ? (nchunks - 1 - me) / size + 1 : 0;
}

/* Guided: each take is the remaining iterations over twice the team, at
 * least min, at most what is left; the counter never passes n. */
static int guided_chunk(par_ws *ws, uint64_t n, uint64_t min, unsigned size, uint64_t *b,
                        uint64_t *e)
{
    uint64_t i = up__load_relaxed(&ws->next);
    while (i < n) {
        uint64_t take = up_omp_guided_take(n, i, min, size);
        if (up__cas_weak_relaxed(&ws->next, &i, i + take)) {
            *b = i;
            *e = i + take;
            return 1;
        }
    }
    return 0;
}

/* The ring of construct slots. A member that reaches a construct whose
 * slot still serves the one PAR_WS_SLOTS constructs earlier (members that
 * ran ahead with nowait) waits for the last member of that one to free
 * it, through the layer's one wait step (wait.c): spin, then park. The
 * last leaver resets the slot, publishes the new generation with a
 * seq_cst RMW and then wakes the team's parked members, the
 * publish-then-check half of that protocol. The same holds for every
 * other wait on a slot's words (the ordered turn, the GOMP ABI's waits):
 * the publisher's write is a seq_cst RMW followed by par_wake_team, the
 * waiter's condition a seq_cst load. */
void par_ws_wait(par_thread *th, par_ready_fn ready, void *arg)
{
    unsigned spins = 0;
    while (!ready(th, arg))
        par_idle(th, th->c.slot, &spins, ready, arg, 0, UINT64_MAX);
}

/* The waits of this file on a slot's word: until the slot's generation
 * says the construct (enter_ws), or the ordered turn reaches the chunk
 * (par_ws_ordered_wait). */
typedef struct word_wait {
    _Atomic uint64_t *word;
    uint64_t want;
} word_wait;

static int word_is(par_thread *th, void *arg)
{
    const word_wait *w = arg;
    (void)th;
    return up__load_seqcst(w->word) == w->want;
}

static void wait_word(par_thread *th, _Atomic uint64_t *word, uint64_t want)
{
    word_wait w = {word, want};
    if (up__load_acquire(word) != want)
        par_ws_wait(th, word_is, &w);
}

static par_ws *enter_ws(par_thread *th)
{
    uint64_t c = th->c.ws_count++;
    par_ws *ws = &th->c.team->ws[c % PAR_WS_SLOTS];
    wait_word(th, &ws->gen, c);
    return ws;
}

static void leave_ws(par_thread *th, par_ws *ws, unsigned size)
{
    if (up__fetch_add_acq_rel(&ws->done, 1) == size - 1) {
        up__store_relaxed(&ws->next, 0);
        up__store_relaxed(&ws->done, 0);
        up__store_relaxed(&ws->ord, 0);
        /* The block outlives its construct (the ABI's code may read it
         * after the construct's end, as libgomp allows until the next
         * one ends): it is freed when the slot's next construct ends, or
         * with the team (par_ws_free). */
        free(up__exchange_relaxed(&ws->stale, up__load_relaxed(&ws->data)));
        up__store_relaxed(&ws->data, NULL);
        up__store_relaxed(&ws->aux, NULL);
        up__fetch_add_seqcst(&ws->gen, PAR_WS_SLOTS);
        par_wake_team(th->c.team, th->c.slot);
    }
}

void par_ws_free(par_team *t)
{
    for (unsigned i = 0; i < PAR_WS_SLOTS; i++) {
        void *stale = up__load_relaxed(&t->ws[i].stale), *data = up__load_relaxed(&t->ws[i].data);
        if (stale) /* mostly NULL: a reused team's reset skips the calls */
            free(stale);
        if (data)
            free(data);
    }
}

void par_ws_start(par_thread *th, par_ws_iter *it, uint64_t n, int sched, uint64_t chunk,
                  int ordered)
{
    par_team *t = th ? th->c.team : NULL;
    unsigned size = t ? up__load_relaxed(&t->size) : 1;
    it->ws = size > 1 ? enter_ws(th) : NULL;
    it->n = n;
    it->chunk = chunk;
    it->me = size > 1 ? th->c.member : 0;
    it->size = size;
    it->sched = sched;
    it->ordered = ordered;
    it->state = 1;
    it->holds = 0;
    it->trip = 0;
    it->b = it->e = 0;
    it->solo_data = NULL;
    it->limit = chunk_limit(sched, n, chunk, it->me, size);
}

/* Ordered chunks. ws->ord is the offset where the chunk holding the turn
 * begins: the chunks partition [0, n), and the member holding [b, e)
 * passes the turn on by moving ord from b to e once its chunk is done, so
 * the ordered parts of the iterations run in the order of their offsets
 * (those of one chunk in order on its member). A member passes on its
 * chunk before it takes the next, waiting for the turn if it did not need
 * it; the chunk with the lowest offset not yet passed never waits for
 * another, so the turn always moves. */
void par_ws_ordered_wait(par_thread *th, par_ws_iter *it)
{
    if (!it->ws || !it->holds)
        return;
    wait_word(th, &it->ws->ord, it->b);
}

static void ord_pass(par_thread *th, par_ws_iter *it)
{
    if (!it->holds)
        return;
    par_ws_ordered_wait(th, it);
    it->holds = 0;
    up__fetch_add_seqcst(&it->ws->ord, it->e - it->b);
    par_wake_team(th->c.team, th->c.slot);
}

int par_ws_next(par_thread *th, par_ws_iter *it, uint64_t *b, uint64_t *e)
{
    if (it->state != 1)
        return 0;
    ord_pass(th, it);
    int got;
    if (!it->ws) {
        got = it->trip++ == 0 && it->n > 0;
        *b = 0;
        *e = it->n;
    } else if (it->sched == PAR_WS_DYNAMIC) {
        got = dynamic_chunk(it->ws, it->n, it->chunk, (int)it->limit, b, e);
    } else if (it->sched == PAR_WS_GUIDED) {
        got = guided_chunk(it->ws, it->n, it->chunk, it->size, b, e);
    } else {
        got = static_chunk(it->n, it->chunk, it->me, it->size, it->trip++, it->limit, b, e);
    }
    if (!got) {
        it->state = 2;
        return 0;
    }
    it->b = *b;
    it->e = *e;
    it->holds = it->ordered && it->ws;
    return 1;
}

void par_ws_end(par_thread *th, par_ws_iter *it)
{
    if (it->state == 0)
        return;
    if (it->ws) {
        ord_pass(th, it); /* a construct left early (cancelled) still passes its turn */
        leave_ws(th, it->ws, it->size);
    } else {
        free(it->solo_data);
    }
    it->ws = NULL;
    it->solo_data = NULL;
    it->state = 0;
}

/* The first member to ask makes the block and publishes it with a CAS
 * (release: its zeroes and init's writes come with the pointer); a member
 * that lost the race frees its own. */
void *par_ws_data(par_ws_iter *it, size_t size, void (*init)(void *block, void *arg), void *arg)
{
    if (!it->ws) {
        if (!it->solo_data && (it->solo_data = calloc(1, size ? size : 1)) && init)
            init(it->solo_data, arg);
        return it->solo_data;
    }
    void *p = up__load_acquire(&it->ws->data);
    if (p)
        return p;
    void *fresh = calloc(1, size ? size : 1);
    if (!fresh)
        return NULL;
    if (init)
        init(fresh, arg);
    if (up__cas_strong_acq_rel(&it->ws->data, &p, fresh))
        return fresh;
    free(fresh);
    return p;
}

/* up_for_opts as this library reads it: 1.0's layout ends at nowait, a
 * name that never changes (abi_struct.h). */
static const up__struct_kind for_opts_kind =
    UP__STRUCT_KIND(up_for_opts, nowait, "UP_FOR_OPTS(...)");

/* The arguments of loop call who, with its options opts (NULL: the
 * defaults) read into o in this library's layout: UP_OK, or UP_EINVAL with
 * the reason in up_last_error(). UP_SCHED_RUNTIME becomes the schedule and
 * chunk that UP_SCHEDULE or OMP_SCHEDULE say (env.c), whatever o's chunk;
 * it fails while a variable of the layer is malformed, as regions do. */
static int loop_args(const char *who, int has_body, const up_for_opts *opts, up_for_opts *o)
{
    if (!opts)
        *o = UP_FOR_OPTS();
    else if (up__struct_in(who, &for_opts_kind, opts, o) != UP_OK)
        return UP_EINVAL;
    if (has_body && o->schedule == UP_SCHED_RUNTIME) {
        const par_env *env = par_env_get();
        if (env->bad) {
            up__set_error("%s: %s", who, env->error);
            return UP_EINVAL;
        }
        o->schedule = env->sched;
        o->chunk = env->chunk;
    }
    if (!has_body)
        up__set_error("%s: body is NULL", who);
    else if ((unsigned)o->schedule > UP_SCHED_AUTO)
        up__set_error("%s: schedule %d is not an up_schedule", who, (int)o->schedule);
    else if (o->chunk < 0)
        up__set_error("%s: chunk %lld is negative", who, (long long)o->chunk);
    else
        return UP_OK;
    return UP_EINVAL;
}

/* rc of a call made for who, with its error under who's name: "inner:
 * reason" becomes "who: reason". */
static int renamed(int rc, const char *who, const char *inner)
{
    if (rc == UP_OK)
        return rc;
    const char *e = up_last_error();
    size_t n = strlen(inner);
    if (strncmp(e, inner, n) == 0 && e[n] == ':')
        e += n + (e[n + 1] == ' ' ? 2 : 1);
    char reason[256];
    snprintf(reason, sizeof reason, "%s", e); /* e is the buffer written next */
    up__set_error("%s: %s", who, reason);
    return rc;
}

/* share() on an OpenMP backend: static blocks need nothing shared, so
 * the same arithmetic deals them by the runtime's thread numbers; dynamic
 * and guided take the runtime's own schedules. */
static void share_omp(const up_omp_ops *omp, uint64_t n, const up_for_opts *o, span_fn fn,
                      void *ctx)
{
    if (o->schedule == UP_SCHED_DYNAMIC || o->schedule == UP_SCHED_GUIDED) {
        omp->share(n, o, fn, ctx);
        return;
    }
    unsigned size = omp->num_threads();
    if (size < 2) {
        if (n)
            fn(0, n, ctx);
        return;
    }
    uint64_t chunk = o->schedule == UP_SCHED_AUTO ? 0 : (uint64_t)o->chunk, b, e;
    unsigned me = omp->thread_num();
    uint64_t limit = chunk_limit(PAR_WS_STATIC, n, chunk, me, size);
    for (uint64_t trip = 0; static_chunk(n, chunk, me, size, trip, limit, &b, &e); trip++)
        fn(b, e, ctx);
    if (!o->nowait)
        omp->barrier();
}

/* Shares offsets [0, n) among the current team by the schedule of o (a
 * team of one runs them in one call), then waits at the barrier unless
 * nowait. Every member calls it with the same n and o. */
static void share(uint64_t n, const up_for_opts *o, span_fn fn, void *ctx)
{
    const up_omp_ops *omp = par_omp();
    if (omp) {
        share_omp(omp, n, o, fn, ctx);
        return;
    }
    par_thread *th = par_tls;
    uint64_t chunk = (uint64_t)o->chunk;
    int sched = PAR_WS_STATIC;
    if (o->schedule == UP_SCHED_AUTO) /* UP_SCHED_RUNTIME is never here: see loop_args */
        chunk = 0;
    else if (o->schedule == UP_SCHED_DYNAMIC || o->schedule == UP_SCHED_GUIDED) {
        sched = o->schedule == UP_SCHED_DYNAMIC ? PAR_WS_DYNAMIC : PAR_WS_GUIDED;
        chunk = chunk ? chunk : 1;
    }
    par_ws_iter it;
    uint64_t b, e;
    par_ws_start(th, &it, n, sched, chunk, 0);
    while (par_ws_next(th, &it, &b, &e))
        fn(b, e, ctx);
    par_ws_end(th, &it);
    if (!o->nowait && th && th->c.team && up__load_relaxed(&th->c.team->size) > 1)
        par_barrier(th);
}

typedef struct flat1d {
    int64_t lo;
    up_range_fn body;
    void *ctx;
} flat1d;

static void flat1d_body(uint64_t b, uint64_t e, void *p)
{
    const flat1d *f = p;
    f->body(at(f->lo, b), at(f->lo, e), f->ctx);
}

int up_for(int64_t lo, int64_t hi, const up_for_opts *opts, up_range_fn body, void *ctx)
{
    up_for_opts o;
    int rc = loop_args("up_for", body != NULL, opts, &o);
    if (rc == UP_OK)
        rc = par_backend_check("up_for");
    if (rc != UP_OK)
        return rc;
    flat1d f = {lo, body, ctx};
    share(count_of(lo, hi), &o, flat1d_body, &f);
    return UP_OK;
}

typedef struct flat2d {
    int64_t ilo, jlo;
    uint64_t ncols;
    up_range2d_fn body;
    void *ctx;
} flat2d;

/* Collapsed cells [a, b), row-major, cut into row pieces: one division for
 * the first row, then whole rows. (i + 1) * ncols never wraps: the flat
 * space is only used when rows * ncols fits. */
static void cells_body(uint64_t a, uint64_t b, void *p)
{
    const flat2d *f = p;
    uint64_t i = a / f->ncols, j = a % f->ncols;
    while (a < b) {
        uint64_t row_end = (i + 1) * f->ncols;
        uint64_t end = row_end < b ? row_end : b;
        f->body(at(f->ilo, i), at(f->jlo, j), at(f->jlo, j + (end - a)), f->ctx);
        a = end;
        i++;
        j = 0;
    }
}

/* Rows [a, b), each whole. */
static void rows_body(uint64_t a, uint64_t b, void *p)
{
    const flat2d *f = p;
    for (uint64_t i = a; i < b; i++)
        f->body(at(f->ilo, i), f->jlo, at(f->jlo, f->ncols), f->ctx);
}

/* The rows x columns space is flattened and shared by cells while its size
 * fits in 64 bits; beyond 2^64 - 1 cells (every such loop has at least
 * 2^32 rows or columns) the rows are shared instead, and the chunk, still
 * counted in cells, becomes the whole rows it holds, at least one. */
int up_for_2d(int64_t ilo, int64_t ihi, int64_t jlo, int64_t jhi, const up_for_opts *opts,
              up_range2d_fn body, void *ctx)
{
    up_for_opts o;
    int rc = loop_args("up_for_2d", body != NULL, opts, &o);
    if (rc == UP_OK)
        rc = par_backend_check("up_for_2d");
    if (rc != UP_OK)
        return rc;
    uint64_t rows = count_of(ilo, ihi), cols = count_of(jlo, jhi);
    flat2d f = {ilo, jlo, cols, body, ctx};
    if (rows == 0 || cols == 0)
        share(0, &o, cells_body, &f);
    else if (rows <= UINT64_MAX / cols)
        share(rows * cols, &o, cells_body, &f);
    else {
        if (o.chunk > 0)
            o.chunk = (uint64_t)o.chunk / cols ? (int64_t)((uint64_t)o.chunk / cols) : 1;
        share(rows, &o, rows_body, &f);
    }
    return UP_OK;
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
    pfor a = {.lo = lo, .hi = hi, .body = body, .ctx = ctx};
    int rc = loop_args("up_parallel_for", body != NULL, opts, &a.opts);
    if (rc != UP_OK)
        return rc;
    return renamed(up_parallel(pool, 0, pfor_region, &a), "up_parallel_for", "up_parallel");
}

/* taskloop: the range is cut into k chunks of n / k or n / k + 1
 * iterations, and a task holding several chunks hands the second half of
 * them to a new task until it holds one: a binary tree, so the first
 * steals take half the range at a time. OpenMP's rules follow from the
 * choice of k: grainsize g gives k = n / g chunks, each of at least g and
 * fewer than 2g iterations (all of them when n < g); num_tasks t gives
 * exactly min(t, n) chunks. */
typedef struct tloop {
    int64_t lo, hi;  /* [lo, hi) */
    uint64_t chunks; /* in chunks balanced pieces, at most hi - lo */
    up_range_fn body;
    void *ctx;
} tloop;

/* Where the first kl of a range's k balanced chunks end. */
static int64_t chunks_end(int64_t lo, int64_t hi, uint64_t k, uint64_t kl)
{
    uint64_t n = count_of(lo, hi);
    uint64_t q = n / k, r = n % k;
    return at(lo, kl * q + (kl < r ? kl : r));
}

/* Where every task would run at once anyway (a team of one, or a final
 * task), the same chunks run in order as plain calls, without a task
 * each. As with undeferred tasks of a cancelled taskgroup, the chunks left
 * are skipped once the group is cancelled. */
static void tloop_serial(const tloop *a, const par_frame *f)
{
    const par_group *g = f ? f->group : NULL;
    uint64_t n = count_of(a->lo, a->hi), k = a->chunks;
    uint64_t q = n / k, r = n % k, off = 0;
    for (uint64_t i = 0; i < k; i++) {
        uint64_t end = off + q + (i < r);
        if (g && up__load_relaxed(&g->cancelled))
            return;
        a->body(at(a->lo, off), at(a->lo, end), a->ctx);
        off = end;
    }
}

/* One chunk run as an undeferred task (below). */
typedef struct tchunk {
    int64_t lo, hi;
    up_range_fn body;
    void *ctx;
} tchunk;

static void tchunk_run(void *p)
{
    const tchunk *c = p;
    c->body(c->lo, c->hi, c->ctx);
}

/* The range travels inside each task (a copied payload), so a subtree
 * needs nothing from the stack of the task that made it.
 *
 * Splitting is lazy: a task halves its range, queuing the second half,
 * only while its deque holds fewer than PAR_INLINE_BACKLOG tasks. With
 * that many queued, thieves have work (the oldest, largest halves), so it
 * runs its first chunk at once as an undeferred task (OpenMP lets any task
 * run undeferred, as up_task does past the same backlog) and looks again.
 * A loop whose members keep busy thus creates a few tasks per member, not
 * one per chunk, and a member that runs dry is fed again by the next
 * split. Every chunk keeps its bounds and its own task frame either way. */
/* Chunk k of a taskloop on an OpenMP backend, which makes one task per
 * chunk (each with a copy of the tloop). */
static void tloop_chunk(uint64_t k, void *p)
{
    const tloop *a = p;
    a->body(chunks_end(a->lo, a->hi, a->chunks, k), chunks_end(a->lo, a->hi, a->chunks, k + 1),
            a->ctx);
}

static void tloop_task(void *p)
{
    tloop a = *(tloop *)p;
    const up_omp_ops *omp = par_omp();
    if (omp) {
        omp->taskloop(a.chunks, tloop_chunk, &a, sizeof a);
        return;
    }
    par_thread *th = par_tls;
    if (!th || !par_defers(th, th->c.frame)) {
        tloop_serial(&a, th ? th->c.frame : NULL);
        return;
    }
    while (a.chunks > 1) {
        if (up__deque_holds(th->c.dq, PAR_INLINE_BACKLOG)) {
            /* The balanced chunks of what is left: the first r of q + 1
             * iterations, the rest of q; taking the first keeps that so. */
            uint64_t n = count_of(a.lo, a.hi), q = n / a.chunks, r = n % a.chunks;
            do {
                tchunk c = {a.lo, at(a.lo, q + (r != 0)), a.body, a.ctx};
                par_run_undeferred(th, tchunk_run, &c);
                a.lo = c.hi;
                a.chunks--;
                r -= r != 0;
            } while (a.chunks > 1 && up__deque_holds(th->c.dq, PAR_INLINE_BACKLOG));
            continue;
        }
        uint64_t kl = a.chunks - a.chunks / 2;
        int64_t mid = chunks_end(a.lo, a.hi, a.chunks, kl);
        tloop right = {mid, a.hi, a.chunks / 2, a.body, a.ctx};
        up_task_copy(tloop_task, &right, sizeof right, NULL);
        a.hi = mid;
        a.chunks = kl;
    }
    a.body(a.lo, a.hi, a.ctx);
}

static void tloop_group(void *p) { tloop_task(p); }

void par_taskloop_offsets(uint64_t n, uint64_t chunks, up_range_fn body, void *ctx)
{
    /* Offsets as int64 values from INT64_MIN: n up to 2^64 - 1 fits. */
    tloop root = {INT64_MIN, at(INT64_MIN, n), chunks, body, ctx};
    tloop_task(&root);
}

/* up_taskloop_opts as this library reads it: 1.0's layout ends at
 * nogroup (abi_struct.h). */
static const up__struct_kind taskloop_opts_kind =
    UP__STRUCT_KIND(up_taskloop_opts, nogroup, "UP_TASKLOOP_OPTS(...)");

int up_taskloop(int64_t lo, int64_t hi, const up_taskloop_opts *opts, up_range_fn body, void *ctx)
{
    up_taskloop_opts o = UP_TASKLOOP_OPTS();
    if (opts && up__struct_in("up_taskloop", &taskloop_opts_kind, opts, &o) != UP_OK)
        return UP_EINVAL;
    if (!body || o.grainsize < 0 || o.num_tasks < 0) {
        if (!body)
            up__set_error("up_taskloop: body is NULL");
        else
            up__set_error("up_taskloop: grainsize %lld or num_tasks %lld is negative",
                          (long long)o.grainsize, (long long)o.num_tasks);
        return UP_EINVAL;
    }
    uint64_t n = count_of(lo, hi), k;
    if (n == 0)
        return UP_OK;
    if (o.grainsize)
        k = n / (uint64_t)o.grainsize;
    else if (o.num_tasks)
        k = (uint64_t)o.num_tasks;
    else
        k = 4 * (uint64_t)up_num_threads();
    if (k > n)
        k = n;
    if (k < 1)
        k = 1;
    tloop root = {lo, hi, k, body, ctx};
    if (o.nogroup) /* the current task waits at its next taskwait or end */
        return renamed(up_task_copy(tloop_task, &root, sizeof root, NULL), "up_taskloop",
                       "up_task_copy");
    return renamed(up_taskgroup(tloop_group, &root), "up_taskloop", "up_taskgroup");
}
