/* sections, single with copyprivate and scope: worksharing constructs on
 * the same iterator as the loops (loops.c). Sections are a dynamic loop
 * over the section numbers, one at a time; GCC numbers them from 1 and
 * takes 0 for "none left". */
#include "gomp.h"

static unsigned next_section(void)
{
    /* Alone (no team, or a team of one) the iterator hands out every
     * section as one chunk [b, e), which GCC's code would take for its
     * first section only: they go out one at a time from the held chunk
     * (it->b moves on; nothing else reads it when alone). */
    par_thread *th = par_tls;
    if (th) {
        par_ws_iter *it = &th->c.ws_it;
        if (it->state == 1 && !it->ws && it->trip > 0 && it->b + 1 < it->e && !gomp_ws_cancelled())
            return (unsigned)(it->base + ++it->b * it->step);
    }
    uint64_t s, e;
    return gomp_ws_next(&s, &e) ? (unsigned)s : 0;
}

static par_ws_iter *begin_sections(par_thread *th, unsigned count)
{
    return gomp_ws_begin(th, count, PAR_WS_DYNAMIC, 1, 0, 1, 1, (uint64_t)count + 1);
}

GOMP_API unsigned GOMP_sections_start(unsigned count)
{
    begin_sections(gomp_ws_thread(), count);
    return next_section();
}

/* GCC 12's form with task reductions and the shared block (as
 * GOMP_loop_start's). */
GOMP_API unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem)
{
    par_thread *th = gomp_ws_thread();
    par_ws_iter *it = begin_sections(th, count);
    gomp_ws_reductions(th, it, reductions, "GOMP_sections2_start");
    gomp_ws_mem(it, mem, "GOMP_sections2_start");
    return next_section();
}

GOMP_API unsigned GOMP_sections_next(void) { return next_section(); }
GOMP_API void GOMP_sections_end(void) { gomp_ws_finish(1); }
GOMP_API void GOMP_sections_end_nowait(void) { gomp_ws_finish(0); }
GOMP_API bool GOMP_sections_end_cancel(void) { return gomp_ws_finish_cancel(); }

/* The combined form: every member starts the sections as it enters the
 * region, GCC's region function calls GOMP_sections_next. */
static void sections_begin(const void *arg)
{
    begin_sections(gomp_ws_thread(), *(const unsigned *)arg);
}

GOMP_API void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads,
                                     unsigned count, unsigned flags)
{
    gomp_parallel_run(fn, data, num_threads, flags, sections_begin, &count);
}

/* GCC before 4.9's form: the caller runs the region function itself and
 * closes the region with GOMP_parallel_end (gomp_parallel_open). */
GOMP_API void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned num_threads,
                                           unsigned count)
{
    gomp_parallel_open(fn, data, num_threads, sections_begin, &count, sizeof count,
                       "GOMP_parallel_sections_start");
}

/* single with copyprivate: the member that takes the construct's one
 * iteration runs the single region and returns NULL; at its end it
 * publishes the address of its values in the construct's aux word, then
 * meets the others at a barrier, after which they read it. GCC's code
 * follows with a barrier of its own after the copies, so the values stay
 * alive until every member copied them. */
GOMP_API void *GOMP_single_copy_start(void)
{
    par_thread *th = gomp_ws_thread();
    par_ws_iter *it = gomp_ws_begin(th, 1, PAR_WS_DYNAMIC, 1, 0, 0, 1, 1);
    uint64_t b, e;
    if (par_ws_next(th, it, &b, &e))
        return NULL;
    par_barrier(th);
    void *data = up__load_acquire(&it->ws->aux);
    par_ws_end(th, it);
    return data;
}

GOMP_API void GOMP_single_copy_end(void *data)
{
    par_thread *th = gomp_ws_thread();
    par_ws_iter *it = &th->c.ws_it;
    if (it->ws) {
        up__store_release(&it->ws->aux, data);
        par_barrier(th);
    }
    par_ws_end(th, it);
}

/* scope with task reductions (GCC calls the runtime for nothing else of
 * scope): every member registers them through the construct. */
GOMP_API void GOMP_scope_start(uintptr_t *reductions)
{
    par_thread *th = gomp_ws_thread();
    par_ws_iter *it = gomp_ws_begin(th, 0, PAR_WS_STATIC, 0, 0, 0, 1, 0);
    gomp_ws_reductions(th, it, reductions, "GOMP_scope_start");
    par_ws_end(th, it);
}
