/* Worksharing loops of GCC's ABI: GOMP_loop_* for long and unsigned long
 * long loops of every schedule, up or down, ordered and doacross, their
 * ends, and the combined GOMP_parallel_loop_* forms.
 *
 * Every loop runs on the layer's worksharing iterator (par_ws_iter in
 * par_internal.h, loops.c of the layer), the one that up_for uses: the
 * loop becomes the offsets [0, n) of its n iterations, the iterator hands
 * out chunks of offsets, and a chunk [b, e) goes back to GCC's code as
 * the values start + b * incr and start + e * incr (the loop's own end for
 * the last chunk, so that no value outside the type is ever formed). The
 * arithmetic is modulo 2^64 on the values' bits, so a long loop, an
 * unsigned one, up or down, any step, and ranges touching the type's
 * bounds all take the same path. The iterator lives in the thread's
 * par_ctx, which the layer saves around nested regions. */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>

#include "gomp.h"
#include "gomp_tasks.h" /* gomp_barrier_cancel */

/* GCC's schedule kinds (libgomp's enum gomp_schedule_type). */
enum { GFS_RUNTIME = 0, GFS_STATIC = 1, GFS_DYNAMIC = 2, GFS_GUIDED = 3, GFS_AUTO = 4 };
#define GFS_MONOTONIC 0x80000000UL

typedef unsigned long long ull;

par_thread *gomp_ws_thread(void)
{
    par_thread *th = par_self();
    if (!th)
        gomp_fatal("out of memory for a thread's state");
    return th;
}

/* long's value of the 64 bits u, without an implementation-defined
 * conversion. */
static long to_long(uint64_t u)
{
    return u <= (uint64_t)LONG_MAX ? (long)u : -(long)(UINT64_MAX - u) - 1;
}

/* A schedule as GCC passes it (the monotonic flag ignored: every
 * schedule here is monotonic, which nonmonotonic allows) as the
 * iterator's schedule and chunk. Runtime (GFS_RUNTIME, or GFS_AUTO, which
 * GCC passes for schedule(nonmonotonic: runtime)) reads run-sched-var; its
 * default, and a value nobody set (0), is libgomp's dynamic with chunk 1.
 * Auto is static. Dynamic and guided chunks are at least 1; static chunk 0
 * is the balanced blocks. */
void gomp_ws_resolve(unsigned long sched, uint64_t chunk, int *psched, uint64_t *pchunk)
{
    sched &= ~GFS_MONOTONIC;
    if (sched == GFS_RUNTIME || sched == GFS_AUTO) {
        const gomp_icv *v = gomp_icv_get();
        sched = (unsigned)v->run_sched & ~(unsigned)GFS_MONOTONIC;
        chunk = v->run_chunk > 0 ? (uint64_t)v->run_chunk : 0;
        if (sched == GFS_AUTO) {
            sched = GFS_STATIC;
            chunk = 0;
        } else if (sched != GFS_STATIC && sched != GFS_GUIDED) {
            sched = GFS_DYNAMIC;
        }
    }
    switch (sched) {
    case GFS_STATIC:
        *psched = PAR_WS_STATIC;
        break;
    case GFS_DYNAMIC:
        *psched = PAR_WS_DYNAMIC;
        break;
    case GFS_GUIDED:
        *psched = PAR_WS_GUIDED;
        break;
    default:
        gomp_fatal("a worksharing loop with schedule kind %lu, which GCC 12 does not emit", sched);
    }
    *pchunk = *psched != PAR_WS_STATIC && chunk == 0 ? 1 : chunk;
}

/* Iterations of a loop from start by incr while below (up) or above
 * (down) end, on 64-bit patterns: up when start < end, down when start >
 * end, in the loop's own type (signed compares the long loops). */
uint64_t gomp_ws_count(uint64_t start, uint64_t end, uint64_t incr, int up, int is_signed)
{
    int more = is_signed ? (up ? (int64_t)start < (int64_t)end : (int64_t)start > (int64_t)end)
                         : (up ? start < end : start > end);
    if (!more)
        return 0;
    if (incr == 0)
        gomp_fatal("a worksharing loop with step 0");
    return up ? (end - start - 1) / incr + 1 : (start - end - 1) / (0 - incr) + 1;
}

/* Task reductions of a construct: the member that wins the construct's
 * aux word registers them, the others register theirs against its array
 * once it has (aux then holds it). */
#define CLAIMING ((void *)1)

typedef struct aux_wait {
    par_ws *ws;
} aux_wait;

static int aux_set(par_thread *th, void *arg)
{
    (void)th;
    void *p = up__load_seqcst(&((aux_wait *)arg)->ws->aux);
    return p != NULL && p != CLAIMING;
}

__attribute__((weak)) void gomp_ws_task_reductions(uintptr_t *reductions, uintptr_t *first,
                                                   const char *who)
{
    (void)reductions;
    (void)first;
    gomp_fatal("%s: reduction(task, ...) on a worksharing construct is not supported yet "
               "(task reductions)",
               who);
}

void gomp_ws_reductions(par_thread *th, par_ws_iter *it, uintptr_t *reductions, const char *who)
{
    if (!reductions)
        return;
    par_ws *ws = it->ws;
    if (!ws) {
        gomp_ws_task_reductions(reductions, NULL, who);
        return;
    }
    void *p = NULL;
    if (up__cas_strong_acq_rel(&ws->aux, &p, CLAIMING)) {
        gomp_ws_task_reductions(reductions, NULL, who);
        /* Publish with a seq_cst RMW, then wake (wait.c). */
        void *claim = CLAIMING;
        (void)up__cas_strong_seqcst(&ws->aux, &claim, (void *)reductions);
        par_wake_team(th->c.team, th->c.slot);
        return;
    }
    aux_wait w = {ws};
    par_ws_wait(th, aux_set, &w);
    gomp_ws_task_reductions(reductions, up__load_acquire(&ws->aux), who);
}

void *gomp_ws_mem(par_ws_iter *it, void **mem, const char *who)
{
    if (!mem)
        return NULL;
    void *p = par_ws_data(it, (size_t)(uintptr_t)*mem, NULL, NULL);
    if (!p)
        gomp_fatal("%s: out of memory for the construct's %zu shared bytes", who,
                   (size_t)(uintptr_t)*mem);
    *mem = p;
    return p;
}

/* Starts the thread's loop of n iterations; base, step and last map the
 * offsets back to values. */
par_ws_iter *gomp_ws_begin(par_thread *th, uint64_t n, int sched, uint64_t chunk, int ordered,
                           uint64_t base, uint64_t step, uint64_t last)
{
    par_ws_iter *it = &th->c.ws_it;
    if (it->state != 0)
        par_ws_end(th, it); /* an orphaned end never came: never leak the slot */
    par_ws_start(th, it, n, sched, chunk, ordered);
    it->base = base;
    it->step = step;
    it->last = last;
    return it;
}

/* The thread's next chunk as the values [*s, *e): 0 when none is left, or
 * the loop was cancelled. */
int gomp_ws_next(uint64_t *s, uint64_t *e)
{
    par_thread *th = par_tls;
    if (!th)
        return 0;
    par_ws_iter *it = &th->c.ws_it;
    uint64_t b, f;
    if (gomp_ws_cancelled() || !par_ws_next(th, it, &b, &f))
        return 0;
    *s = it->base + b * it->step;
    *e = f == it->n ? it->last : it->base + f * it->step;
    return 1;
}

static bool next_long(long *istart, long *iend)
{
    uint64_t s, e;
    if (!gomp_ws_next(&s, &e))
        return false;
    *istart = to_long(s);
    *iend = to_long(e);
    return true;
}

static bool next_ull(ull *istart, ull *iend)
{
    uint64_t s, e;
    if (!gomp_ws_next(&s, &e))
        return false;
    *istart = s;
    *iend = e;
    return true;
}

static bool start_long(long start, long end, long incr, unsigned long sched, long chunk,
                       long *istart, long *iend, int ordered, uintptr_t *reductions, void **mem,
                       const char *who)
{
    par_thread *th = gomp_ws_thread();
    int s;
    uint64_t c;
    gomp_ws_resolve(sched, chunk > 0 ? (uint64_t)chunk : 0, &s, &c);
    uint64_t n = gomp_ws_count((uint64_t)start, (uint64_t)end, (uint64_t)incr, incr > 0, 1);
    par_ws_iter *it =
        gomp_ws_begin(th, n, s, c, ordered, (uint64_t)start, (uint64_t)incr, (uint64_t)end);
    gomp_ws_reductions(th, it, reductions, who);
    gomp_ws_mem(it, mem, who);
    if (!istart)
        return true;
    return next_long(istart, iend);
}

static bool start_ull(bool up, ull start, ull end, ull incr, unsigned long sched, ull chunk,
                      ull *istart, ull *iend, int ordered, uintptr_t *reductions, void **mem,
                      const char *who)
{
    par_thread *th = gomp_ws_thread();
    int s;
    uint64_t c;
    gomp_ws_resolve(sched, chunk, &s, &c);
    uint64_t n = gomp_ws_count(start, end, incr, up, 0);
    par_ws_iter *it = gomp_ws_begin(th, n, s, c, ordered, start, incr, end);
    gomp_ws_reductions(th, it, reductions, who);
    gomp_ws_mem(it, mem, who);
    if (!istart)
        return true;
    return next_ull(istart, iend);
}

/* The long loops (GOMP_1.0, GOMP_4.5 nonmonotonic, GOMP_5.0 generic). */
#define LONG_START(name, sched, ordered)                                                           \
    GOMP_API bool name(long start, long end, long incr, long chunk, long *istart, long *iend)      \
    {                                                                                              \
        return start_long(start, end, incr, sched, chunk, istart, iend, ordered, NULL, NULL,       \
                          #name);                                                                  \
    }
#define LONG_RUNTIME_START(name, ordered)                                                          \
    GOMP_API bool name(long start, long end, long incr, long *istart, long *iend)                  \
    {                                                                                              \
        return start_long(start, end, incr, GFS_RUNTIME, 0, istart, iend, ordered, NULL, NULL,     \
                          #name);                                                                  \
    }
#define LONG_NEXT(name)                                                                            \
    GOMP_API bool name(long *istart, long *iend) { return next_long(istart, iend); }

LONG_START(GOMP_loop_static_start, GFS_STATIC, 0)
LONG_START(GOMP_loop_dynamic_start, GFS_DYNAMIC, 0)
LONG_START(GOMP_loop_guided_start, GFS_GUIDED, 0)
LONG_START(GOMP_loop_nonmonotonic_dynamic_start, GFS_DYNAMIC, 0)
LONG_START(GOMP_loop_nonmonotonic_guided_start, GFS_GUIDED, 0)
LONG_START(GOMP_loop_ordered_static_start, GFS_STATIC, 1)
LONG_START(GOMP_loop_ordered_dynamic_start, GFS_DYNAMIC, 1)
LONG_START(GOMP_loop_ordered_guided_start, GFS_GUIDED, 1)
LONG_RUNTIME_START(GOMP_loop_runtime_start, 0)
LONG_RUNTIME_START(GOMP_loop_nonmonotonic_runtime_start, 0)
LONG_RUNTIME_START(GOMP_loop_maybe_nonmonotonic_runtime_start, 0)
LONG_RUNTIME_START(GOMP_loop_ordered_runtime_start, 1)
LONG_NEXT(GOMP_loop_static_next)
LONG_NEXT(GOMP_loop_dynamic_next)
LONG_NEXT(GOMP_loop_guided_next)
LONG_NEXT(GOMP_loop_runtime_next)
LONG_NEXT(GOMP_loop_nonmonotonic_dynamic_next)
LONG_NEXT(GOMP_loop_nonmonotonic_guided_next)
LONG_NEXT(GOMP_loop_nonmonotonic_runtime_next)
LONG_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next)
LONG_NEXT(GOMP_loop_ordered_static_next)
LONG_NEXT(GOMP_loop_ordered_dynamic_next)
LONG_NEXT(GOMP_loop_ordered_guided_next)
LONG_NEXT(GOMP_loop_ordered_runtime_next)

/* GCC 12's generic forms: the schedule as an argument, task reductions,
 * and mem, which on entry holds a size and on return points to a zeroed
 * block of that size shared by the construct's members (lastprivate
 * conditional, scan). istart NULL: only the registrations, GCC computes
 * a static schedule itself. */
GOMP_API bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long *istart,
                              long *iend, uintptr_t *reductions, void **mem)
{
    return start_long(start, end, incr, (unsigned long)sched, chunk, istart, iend, 0, reductions,
                      mem, "GOMP_loop_start");
}

GOMP_API bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk,
                                      long *istart, long *iend, uintptr_t *reductions, void **mem)
{
    return start_long(start, end, incr, (unsigned long)sched, chunk, istart, iend, 1, reductions,
                      mem, "GOMP_loop_ordered_start");
}

/* The unsigned long long loops: up says the direction, incr is the step's
 * bits (a down loop's is negative). */
#define ULL_START(name, sched, ordered)                                                            \
    GOMP_API bool name(bool up, ull start, ull end, ull incr, ull chunk, ull *istart, ull *iend)   \
    {                                                                                              \
        return start_ull(up, start, end, incr, sched, chunk, istart, iend, ordered, NULL, NULL,    \
                         #name);                                                                   \
    }
#define ULL_RUNTIME_START(name, ordered)                                                           \
    GOMP_API bool name(bool up, ull start, ull end, ull incr, ull *istart, ull *iend)              \
    {                                                                                              \
        return start_ull(up, start, end, incr, GFS_RUNTIME, 0, istart, iend, ordered, NULL, NULL,  \
                         #name);                                                                   \
    }
#define ULL_NEXT(name)                                                                             \
    GOMP_API bool name(ull *istart, ull *iend) { return next_ull(istart, iend); }

ULL_START(GOMP_loop_ull_static_start, GFS_STATIC, 0)
ULL_START(GOMP_loop_ull_dynamic_start, GFS_DYNAMIC, 0)
ULL_START(GOMP_loop_ull_guided_start, GFS_GUIDED, 0)
ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start, GFS_DYNAMIC, 0)
ULL_START(GOMP_loop_ull_nonmonotonic_guided_start, GFS_GUIDED, 0)
ULL_START(GOMP_loop_ull_ordered_static_start, GFS_STATIC, 1)
ULL_START(GOMP_loop_ull_ordered_dynamic_start, GFS_DYNAMIC, 1)
ULL_START(GOMP_loop_ull_ordered_guided_start, GFS_GUIDED, 1)
ULL_RUNTIME_START(GOMP_loop_ull_runtime_start, 0)
ULL_RUNTIME_START(GOMP_loop_ull_nonmonotonic_runtime_start, 0)
ULL_RUNTIME_START(GOMP_loop_ull_maybe_nonmonotonic_runtime_start, 0)
ULL_RUNTIME_START(GOMP_loop_ull_ordered_runtime_start, 1)
ULL_NEXT(GOMP_loop_ull_static_next)
ULL_NEXT(GOMP_loop_ull_dynamic_next)
ULL_NEXT(GOMP_loop_ull_guided_next)
ULL_NEXT(GOMP_loop_ull_runtime_next)
ULL_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next)
ULL_NEXT(GOMP_loop_ull_nonmonotonic_guided_next)
ULL_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next)
ULL_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)
ULL_NEXT(GOMP_loop_ull_ordered_static_next)
ULL_NEXT(GOMP_loop_ull_ordered_dynamic_next)
ULL_NEXT(GOMP_loop_ull_ordered_guided_next)
ULL_NEXT(GOMP_loop_ull_ordered_runtime_next)

GOMP_API bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk,
                                  ull *istart, ull *iend, uintptr_t *reductions, void **mem)
{
    return start_ull(up, start, end, incr, (unsigned long)sched, chunk, istart, iend, 0, reductions,
                     mem, "GOMP_loop_ull_start");
}

GOMP_API bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched,
                                          ull chunk, ull *istart, ull *iend, uintptr_t *reductions,
                                          void **mem)
{
    return start_ull(up, start, end, incr, (unsigned long)sched, chunk, istart, iend, 1, reductions,
                     mem, "GOMP_loop_ull_ordered_start");
}

/* The ends of a loop or sections construct: leave it, then the barrier
 * unless nowait. */
void gomp_ws_finish(int barrier)
{
    par_thread *th = par_tls;
    if (!th)
        return;
    par_ws_end(th, &th->c.ws_it);
    if (barrier && th->c.team)
        par_barrier(th);
}

/* The construct's end at a cancellable barrier (cancel.c): whether the
 * region was cancelled, in which case the member leaves for the region's
 * end. */
bool gomp_ws_finish_cancel(void)
{
    par_thread *th = par_tls;
    if (!th)
        return false;
    par_ws_end(th, &th->c.ws_it);
    return th->c.team && gomp_barrier_cancel(th);
}

GOMP_API void GOMP_loop_end(void) { gomp_ws_finish(1); }
GOMP_API void GOMP_loop_end_nowait(void) { gomp_ws_finish(0); }
GOMP_API bool GOMP_loop_end_cancel(void) { return gomp_ws_finish_cancel(); }

void gomp_ws_cancel(void)
{
    par_thread *th = par_tls;
    if (th && th->c.team && th->c.ws_it.ws)
        up__store_release(&th->c.team->cancel_ws, th->c.ws_count);
}

bool gomp_ws_cancelled(void)
{
    par_thread *th = par_tls;
    return th && th->c.team && th->c.ws_it.ws &&
           up__load_acquire(&th->c.team->cancel_ws) == th->c.ws_count;
}

/* ordered: the chunk a member holds has the turn from its first ordered
 * part until it takes its next chunk (the layer's par_ws_ordered_wait). */
GOMP_API void GOMP_ordered_start(void)
{
    par_thread *th = par_tls;
    if (th)
        par_ws_ordered_wait(th, &th->c.ws_it);
}

GOMP_API void GOMP_ordered_end(void) {}

/* The combined parallel loops: each member starts the loop as it enters
 * the region (gomp_parallel_run's pre), and GCC's region function goes
 * straight to the next calls. */
typedef struct ploop {
    uint64_t n, chunk, base, step, last;
    int sched;
} ploop;

static void ploop_begin(const void *arg)
{
    const ploop *p = arg;
    gomp_ws_begin(gomp_ws_thread(), p->n, p->sched, p->chunk, 0, p->base, p->step, p->last);
}

static ploop make_ploop(long start, long end, long incr, unsigned long sched, long chunk)
{
    ploop p = {gomp_ws_count((uint64_t)start, (uint64_t)end, (uint64_t)incr, incr > 0, 1),
               0,
               (uint64_t)start,
               (uint64_t)incr,
               (uint64_t)end,
               0};
    gomp_ws_resolve(sched, chunk > 0 ? (uint64_t)chunk : 0, &p.sched, &p.chunk);
    return p;
}

static void parallel_loop(void (*fn)(void *), void *data, unsigned num_threads, long start,
                          long end, long incr, unsigned long sched, long chunk, unsigned flags)
{
    ploop p = make_ploop(start, end, incr, sched, chunk);
    gomp_parallel_run(fn, data, num_threads, flags, ploop_begin, &p);
}

#define PARALLEL_LOOP(name, sched)                                                                 \
    GOMP_API void name(void (*fn)(void *), void *data, unsigned num_threads, long start, long end, \
                       long incr, long chunk, unsigned flags)                                      \
    {                                                                                              \
        parallel_loop(fn, data, num_threads, start, end, incr, sched, chunk, flags);               \
    }
#define PARALLEL_LOOP_RUNTIME(name)                                                                \
    GOMP_API void name(void (*fn)(void *), void *data, unsigned num_threads, long start, long end, \
                       long incr, unsigned flags)                                                  \
    {                                                                                              \
        parallel_loop(fn, data, num_threads, start, end, incr, GFS_RUNTIME, 0, flags);             \
    }

PARALLEL_LOOP(GOMP_parallel_loop_static, GFS_STATIC)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic, GFS_DYNAMIC)
PARALLEL_LOOP(GOMP_parallel_loop_guided, GFS_GUIDED)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, GFS_DYNAMIC)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, GFS_GUIDED)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* GCC before 4.9's combined forms: GOMP_parallel_loop_*_start opens the
 * region (gomp_parallel_open) with the loop started in every member, the
 * caller included, which then runs the region function itself and closes
 * the region with GOMP_parallel_end. */
static void parallel_loop_start(void (*fn)(void *), void *data, unsigned num_threads, long start,
                                long end, long incr, unsigned long sched, long chunk,
                                const char *who)
{
    ploop p = make_ploop(start, end, incr, sched, chunk);
    gomp_parallel_open(fn, data, num_threads, ploop_begin, &p, sizeof p, who);
}

#define PARALLEL_LOOP_START(name, sched)                                                           \
    GOMP_API void name(void (*fn)(void *), void *data, unsigned num_threads, long start, long end, \
                       long incr, long chunk)                                                      \
    {                                                                                              \
        parallel_loop_start(fn, data, num_threads, start, end, incr, sched, chunk, #name);         \
    }
PARALLEL_LOOP_START(GOMP_parallel_loop_static_start, GFS_STATIC)
PARALLEL_LOOP_START(GOMP_parallel_loop_dynamic_start, GFS_DYNAMIC)
PARALLEL_LOOP_START(GOMP_parallel_loop_guided_start, GFS_GUIDED)

/* Its runtime form has no chunk. */
GOMP_API void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned num_threads,
                                               long start, long end, long incr)
{
    parallel_loop_start(fn, data, num_threads, start, end, incr, GFS_RUNTIME, 0,
                        "GOMP_parallel_loop_runtime_start");
}
