/* The interface between the parallel layer (libultrapool_par) and an
 * OpenMP backend module (libultrapool_omp_gomp, libultrapool_omp_llvm):
 * one table of functions, which the module returns from its only exported
 * symbol, up_omp_backend(). The layer checks every argument and sets every
 * error message before it calls the table, so a module only runs
 * constructs; it links its OpenMP runtime and nothing of ultrapool.
 *
 * Loops and taskloops arrive already flattened: the layer turns any int64
 * bounds, collapse(2) and the chunk rules into a count of units and hands
 * over a body for [b, e) of them, so the 2^64 - 1 iteration arithmetic
 * lives in one place (loops.c). */
#ifndef UP_OMP_OPS_H
#define UP_OMP_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <ultrapool/parallel.h>

/* Bumped whenever the table changes: a module built from other sources is
 * refused with a message, not called. */
#define UP_OMP_OPS_VERSION 4

typedef void (*up_omp_units_fn)(uint64_t b, uint64_t e, void *p);
typedef void (*up_omp_chunk_fn)(uint64_t k, void *p);
typedef void (*up_omp_combine_fn)(void *into, const void *from, void *cctx);

typedef struct up_omp_ops {
    unsigned version;    /* UP_OMP_OPS_VERSION */
    const char *runtime; /* "libgomp" or "libomp" */

    /* A region of nthreads (0: the runtime's default, which follows
     * OMP_NUM_THREADS). exact: all or nothing, UP_EAGAIN when the runtime
     * would give fewer, UP_EINVAL above its thread limit. */
    int (*parallel)(unsigned nthreads, int exact, up_fn fn, void *ctx);
    unsigned (*thread_num)(void);
    unsigned (*num_threads)(void);
    unsigned (*level)(void);
    void (*barrier)(void);
    int (*single)(void);

    /* Shares units [0, n) among the team by o->schedule and o->chunk
     * (chunk > 0, in units; 0 keeps the schedule's default), calling body
     * per range; a team of one gets one call for all of them. A barrier
     * follows unless o->nowait. */
    void (*share)(uint64_t n, const up_for_opts *o, up_omp_units_fn body, void *p);
    /* Combines size bytes at value across the team with combine (which
     * the layer supplies for the built-in operators too); implies a
     * barrier. UP_EINVAL in a team that up_parallel did not open (the
     * program's own #pragma omp parallel), which has no place for the
     * partial values. */
    int (*reduce)(void *value, size_t size, up_omp_combine_fn combine, void *cctx);

    /* A task running fn(arg), or fn(copy of payload) when size > 0, after
     * the sibling tasks that deps name. */
    int (*task)(up_fn fn, void *arg, const void *payload, size_t size, const up_dep *deps,
                size_t ndeps, const up_task_opts *opts);
    void (*taskwait)(void);
    void (*taskyield)(void);
    unsigned (*task_depth)(void);
    /* UP_ECANCELED when cancelled, else UP_OK. */
    int (*taskgroup)(up_fn fn, void *ctx);
    void (*cancel_taskgroup)(void);
    int (*cancelled)(void);
    /* Tasks for chunks 0 .. k - 1, one each, as children of the current
     * task (nogroup: the caller's taskgroup or taskwait collects them).
     * chunk(i, copy) gets a copy of size (<= 48) bytes of payload, so the
     * caller's frame may be gone when a chunk runs. */
    void (*taskloop)(uint64_t k, up_omp_chunk_fn chunk, const void *payload, size_t size);
    /* task() without payload, dependencies or options, up_task's common
     * case: the layer calls it straight from up_task, without building a
     * task description first. */
    int (*task_plain)(up_fn fn, void *arg);
    /* omp_get_active_level() and omp_get_max_active_levels(): the layer
     * names the limit when an exact region is refused for want of a
     * level that may be active. */
    unsigned (*active_level)(void);
    unsigned (*max_active_levels)(void);
} up_omp_ops;

/* Guided scheduling's take at offset i of [0, n): what is left over twice
 * the team, at least min, at most what is left. One formula for the
 * layer's guided loops and for the backends' (which walk it to deal the
 * same decreasing chunks through the runtime's dynamic schedule). */
static inline uint64_t up_omp_guided_take(uint64_t n, uint64_t i, uint64_t min, unsigned size)
{
    uint64_t take = (n - i) / (2 * (uint64_t)size);
    if (take < min)
        take = min;
    return take > n - i ? n - i : take;
}

/* The module's one exported symbol. */
typedef const up_omp_ops *(*up_omp_backend_fn)(void);
#define UP_OMP_BACKEND_SYMBOL "up_omp_backend"

#endif
