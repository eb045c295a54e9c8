/* Doacross loops (ordered(n) with depend(sink) and depend(source)):
 * GOMP_loop_doacross_*_start, GOMP_doacross_post and GOMP_doacross_wait,
 * long and unsigned long long.
 *
 * GCC shares the outermost of the ncounts loops (counts[0] iterations)
 * and numbers every loop's iterations from 0. One member runs all the
 * iterations of an outer iteration i, in lexicographic order, so one word
 * per outer iteration says how far it got: posted[i] is 1 + the flat
 * index (row-major over counts[1..]) of its last posted iteration, 0 for
 * none. A wait for (i, j...) returns once posted[i] passes the flat index
 * of j..., or at once for an iteration outside the space (nothing will
 * post it). A post is the only writer of its word: it adds the difference
 * with a seq_cst RMW and wakes parked waiters (the layer's
 * publish-then-check, par_ws_wait); the RMW's release and the waiter's
 * acquire order the iteration's effects before what follows the wait.
 *
 * The construct's shared block (par_ws_data) holds the counts, the flat
 * index's multipliers, the words and GCC's extra bytes; its size grows
 * with counts[0] (8 bytes per outer iteration). */
#include <stdarg.h>
#include <string.h>

#include "gomp.h"

typedef unsigned long long ull;

typedef struct doacross {
    unsigned ncounts;
    uint64_t *counts, *mult;
    _Atomic uint64_t *posted;
    void *extra;
} doacross;

typedef struct da_shape {
    unsigned ncounts;
    const uint64_t *counts;
    size_t words, extra;
} da_shape;

#define ALIGN16(x) (((x) + 15) & ~(size_t)15)

static void da_init(void *block, void *arg)
{
    const da_shape *sh = arg;
    doacross *d = block;
    char *p = (char *)block + ALIGN16(sizeof *d);
    d->ncounts = sh->ncounts;
    d->counts = (uint64_t *)p;
    d->mult = d->counts + sh->ncounts;
    d->posted = (_Atomic uint64_t *)(d->mult + sh->ncounts);
    d->extra = (char *)d->posted + ALIGN16(sh->words * 8);
    memcpy(d->counts, sh->counts, sh->ncounts * sizeof *d->counts);
    uint64_t m = 1;
    for (unsigned k = sh->ncounts; k-- > 1;) {
        d->mult[k] = m;
        if (d->counts[k] && __builtin_mul_overflow(m, d->counts[k], &m))
            gomp_fatal("a doacross loop nest whose inner loops have more than 2^64 iterations");
    }
    d->mult[0] = 0;
    if (m == UINT64_MAX)
        gomp_fatal("a doacross loop nest whose inner loops have more than 2^64 - 2 iterations");
    for (size_t i = 0; i < sh->words; i++)
        atomic_init(&d->posted[i], 0);
}

static bool doacross_start(unsigned ncounts, const uint64_t *counts, unsigned long sched,
                           uint64_t chunk, uint64_t *s, uint64_t *e, uintptr_t *reductions,
                           void **mem, const char *who)
{
    par_thread *th = gomp_ws_thread();
    int ps;
    uint64_t pc;
    if (ncounts == 0)
        gomp_fatal("%s: a doacross loop nest of no loops", who);
    gomp_ws_resolve(sched, chunk, &ps, &pc);
    par_ws_iter *it = gomp_ws_begin(th, counts[0], ps, pc, 0, 0, 1, counts[0]);
    gomp_ws_reductions(th, it, reductions, who);
    da_shape sh = {ncounts, counts, counts[0], mem ? (size_t)(uintptr_t)*mem : 0};
    size_t size = ALIGN16(sizeof(doacross)) + 2 * ncounts * sizeof(uint64_t);
    if (sh.words > (SIZE_MAX - size - sh.extra - 16) / 8)
        gomp_fatal("%s: %llu outer iterations are more than a doacross loop can track", who,
                   (ull)sh.words);
    size += ALIGN16(sh.words * 8) + sh.extra;
    doacross *d = par_ws_data(it, size, da_init, &sh);
    if (!d)
        gomp_fatal("%s: out of memory for the dependences of %llu outer iterations", who,
                   (ull)sh.words);
    if (mem)
        *mem = d->extra;
    return gomp_ws_next(s, e);
}

/* The construct's block, where posts and waits matter: NULL when the
 * thread runs the loop alone (in order, so every wait is satisfied). */
static doacross *current(par_thread **pth)
{
    par_thread *th = par_tls;
    *pth = th;
    if (!th || !th->c.ws_it.ws)
        return NULL;
    return up__load_acquire(&th->c.ws_it.ws->data);
}

static void post(const uint64_t *v)
{
    par_thread *th;
    doacross *d = current(&th);
    if (!d || v[0] >= d->counts[0])
        return;
    uint64_t flat = 1;
    for (unsigned k = 1; k < d->ncounts; k++)
        flat += v[k] * d->mult[k];
    _Atomic uint64_t *w = &d->posted[v[0]];
    uint64_t cur = up__load_relaxed(w);
    if (flat > cur) {
        up__fetch_add_seqcst(w, flat - cur);
        par_wake_team(th->c.team, th->c.slot);
    }
}

typedef struct da_wait {
    _Atomic uint64_t *w;
    uint64_t need;
} da_wait;

static int da_posted(par_thread *th, void *arg)
{
    (void)th;
    const da_wait *x = arg;
    return up__load_seqcst(x->w) >= x->need;
}

/* rest: the values of the loops after the outermost. */
static void wait_for(doacross *d, par_thread *th, uint64_t first, const uint64_t *rest)
{
    if (first >= d->counts[0])
        return;
    uint64_t flat = 1;
    for (unsigned k = 1; k < d->ncounts; k++) {
        if (rest[k - 1] >= d->counts[k])
            return;
        flat += rest[k - 1] * d->mult[k];
    }
    da_wait x = {&d->posted[first], flat};
    if (up__load_acquire(x.w) < flat)
        par_ws_wait(th, da_posted, &x);
}

#define MAX_COUNTS 64

static void check_counts(unsigned n)
{
    if (n > MAX_COUNTS)
        gomp_fatal("a doacross loop nest of %u loops (at most %u)", n, MAX_COUNTS);
}

/* A nest with an empty loop runs no body, so no post or wait comes; GCC
 * computes no count after the first zero one (they hold whatever was on
 * its stack, libgomp's doacross init stops at a zero too): zeroes from
 * there on, so that nothing reads them as sizes. */
static void empty_tail(uint64_t *c, unsigned n)
{
    unsigned k = 0;
    while (k < n && c[k] != 0)
        k++;
    for (; k < n; k++)
        c[k] = 0;
}

/* GOMP_doacross_post and its ull twin: the counts of the iteration done,
 * as long (sl) or as unsigned long long (ul), whichever is not NULL. */
static void post_counts(const long *sl, const ull *ul)
{
    par_thread *th;
    doacross *d = current(&th);
    if (!d)
        return;
    uint64_t v[MAX_COUNTS];
    for (unsigned k = 0; k < d->ncounts; k++)
        v[k] = sl ? (uint64_t)sl[k] : ul[k];
    post(v);
}

GOMP_API void GOMP_doacross_post(long *counts) { post_counts(counts, NULL); }
GOMP_API void GOMP_doacross_ull_post(ull *counts) { post_counts(NULL, counts); }

/* GOMP_doacross_wait and its ull twin: the iteration waited for, first
 * and ap's variable arguments after it, as long or (is_ull) as unsigned
 * long long. */
static void wait_counts(uint64_t first, va_list ap, bool is_ull)
{
    par_thread *th;
    doacross *d = current(&th);
    if (!d)
        return;
    uint64_t rest[MAX_COUNTS];
    for (unsigned k = 1; k < d->ncounts; k++)
        rest[k - 1] = is_ull ? va_arg(ap, ull) : (uint64_t)va_arg(ap, long);
    wait_for(d, th, first, rest);
}

GOMP_API void GOMP_doacross_wait(long first, ...)
{
    va_list ap;
    va_start(ap, first);
    wait_counts((uint64_t)first, ap, false);
    va_end(ap);
}

GOMP_API void GOMP_doacross_ull_wait(ull first, ...)
{
    va_list ap;
    va_start(ap, first);
    wait_counts(first, ap, true);
    va_end(ap);
}

/* The long starts: counts as long (non-negative), values as long. */
static bool start_long(unsigned ncounts, long *counts, unsigned long sched, long chunk,
                       long *istart, long *iend, uintptr_t *reductions, void **mem, const char *who)
{
    check_counts(ncounts);
    uint64_t c[MAX_COUNTS], s, e;
    for (unsigned k = 0; k < ncounts; k++)
        if ((c[k] = counts[k] > 0 ? (uint64_t)counts[k] : 0) == 0)
            break; /* an empty loop: GCC leaves the later counts unset */
    empty_tail(c, ncounts);
    if (!doacross_start(ncounts, c, sched, chunk > 0 ? (uint64_t)chunk : 0, &s, &e, reductions, mem,
                        who))
        return false;
    *istart = (long)s; /* offsets below counts[0], a long */
    *iend = (long)e;
    return true;
}

static bool start_ull(unsigned ncounts, ull *counts, unsigned long sched, ull chunk, ull *istart,
                      ull *iend, uintptr_t *reductions, void **mem, const char *who)
{
    check_counts(ncounts);
    uint64_t c[MAX_COUNTS], s, e;
    for (unsigned k = 0; k < ncounts; k++)
        if ((c[k] = counts[k]) == 0)
            break;
    empty_tail(c, ncounts);
    if (!doacross_start(ncounts, c, sched, chunk, &s, &e, reductions, mem, who))
        return false;
    *istart = s;
    *iend = e;
    return true;
}

#define DA_LONG(name, sched)                                                                       \
    GOMP_API bool name(unsigned ncounts, long *counts, long chunk, long *istart, long *iend)       \
    {                                                                                              \
        return start_long(ncounts, counts, sched, chunk, istart, iend, NULL, NULL, #name);         \
    }
#define DA_ULL(name, sched)                                                                        \
    GOMP_API bool name(unsigned ncounts, ull *counts, ull chunk, ull *istart, ull *iend)           \
    {                                                                                              \
        return start_ull(ncounts, counts, sched, chunk, istart, iend, NULL, NULL, #name);          \
    }
DA_LONG(GOMP_loop_doacross_static_start, 1)
DA_LONG(GOMP_loop_doacross_dynamic_start, 2)
DA_LONG(GOMP_loop_doacross_guided_start, 3)
DA_ULL(GOMP_loop_ull_doacross_static_start, 1)
DA_ULL(GOMP_loop_ull_doacross_dynamic_start, 2)
DA_ULL(GOMP_loop_ull_doacross_guided_start, 3)

GOMP_API bool GOMP_loop_doacross_runtime_start(unsigned ncounts, long *counts, long *istart,
                                               long *iend)
{
    return start_long(ncounts, counts, 0, 0, istart, iend, NULL, NULL,
                      "GOMP_loop_doacross_runtime_start");
}

GOMP_API bool GOMP_loop_ull_doacross_runtime_start(unsigned ncounts, ull *counts, ull *istart,
                                                   ull *iend)
{
    return start_ull(ncounts, counts, 0, 0, istart, iend, NULL, NULL,
                     "GOMP_loop_ull_doacross_runtime_start");
}

GOMP_API bool GOMP_loop_doacross_start(unsigned ncounts, long *counts, long sched, long chunk,
                                       long *istart, long *iend, uintptr_t *reductions, void **mem)
{
    return start_long(ncounts, counts, (unsigned long)sched, chunk, istart, iend, reductions, mem,
                      "GOMP_loop_doacross_start");
}

GOMP_API bool GOMP_loop_ull_doacross_start(unsigned ncounts, ull *counts, long sched, ull chunk,
                                           ull *istart, ull *iend, uintptr_t *reductions,
                                           void **mem)
{
    return start_ull(ncounts, counts, (unsigned long)sched, chunk, istart, iend, reductions, mem,
                     "GOMP_loop_ull_doacross_start");
}
