/** @file
 * ultrapool: a sharded, adaptive worker pool for C.
 *
 * A pool is a set of shards. Each shard owns a bounded lock-free queue of
 * task slots and a set of worker threads that grows under backpressure and
 * shrinks when idle. A task is a function pointer plus either one pointer
 * argument or a small payload copied into the queue slot, so no submit path
 * allocates.
 *
 * Every function returns 0 (UP_OK) or a negative UP_E* code; up_strerror()
 * turns a code into text and up_last_error() gives the detailed message of
 * the last failure on the calling thread.
 *
 * Structs that grow. Every struct a program allocates and passes to the
 * library (up_config and up_stats here; up_mpi_opts and up_mpi_report of
 * <ultrapool/mpi.h>; up_for_opts, up_task_opts and up_taskloop_opts of
 * <ultrapool/parallel.h>) begins with `size_t size`: sizeof the struct as
 * the program was compiled, set by the call or macro that makes it
 * (up_config_init(), up_pool_stats(), UP_FOR_OPTS() ...), never by hand.
 * A later version adds fields only at the end of such a struct, each with
 * 0 as its default, so a program keeps working, without being rebuilt,
 * with a later library: the fields it lacks read as 0. A program built
 * against later headers works with this library as long as it leaves the
 * fields this one lacks at 0; one that sets them gets UP_EINVAL ("built
 * against a newer ultrapool"), never a setting silently ignored. A struct
 * whose size is 0 (never set) is UP_EINVAL too. docs/design.md, "Structs
 * that grow". */
#ifndef ULTRAPOOL_POOL_H
#define ULTRAPOOL_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ultrapool/export.h>
#include <ultrapool/version.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct up_pool up_pool; /**< opaque */
/** A task: a function of one pointer argument. */
typedef void (*up_fn)(void *arg);

/** Every error code, as XX(NAME, value, text) for the constant UP_NAME:
 * the one table behind the constants, up_strerror() and up_err_name().
 * UP_OK is 0 and every error is negative. A program may expand it with
 * its own XX, e.g. to map the codes onto its own. */
#define UP_ERRNO_MAP(XX)                                                                           \
    XX(OK, 0, "success")                                                                           \
    /* a bad argument or configuration value */                                                    \
    XX(EINVAL, -1, "invalid argument")                                                             \
    /* an allocation failed */                                                                     \
    XX(ENOMEM, -2, "out of memory")                                                                \
    /* the pool (or channel) is stopped */                                                         \
    XX(ESTOPPED, -3, "stopped")                                                                    \
    /* every queue is full and no worker can be added */                                           \
    XX(EOVERLOAD, -4, "overloaded: every queue is full")                                           \
    /* a timed operation ran out of time */                                                        \
    XX(ETIMEDOUT, -5, "timed out")                                                                 \
    /* the group was cancelled */                                                                  \
    XX(ECANCELED, -6, "cancelled")                                                                 \
    /* a resource (a thread) could not be had now */                                               \
    XX(EAGAIN, -7, "resource temporarily unavailable")                                             \
    /* waiting here would wait for the caller itself */                                            \
    XX(EDEADLK, -8, "would deadlock: called from one of the pool's own tasks")

/** The codes UP_ERRNO_MAP lists: UP_OK, UP_EINVAL, UP_ENOMEM, UP_ESTOPPED,
 * UP_EOVERLOAD, UP_ETIMEDOUT, UP_ECANCELED, UP_EAGAIN, UP_EDEADLK. */
enum {
/** One UP_ERRNO_MAP entry as an enumerator (undefined again below). */
#define UP__ERRNO_ENUM(name, value, text) UP_##name = (value),
    UP_ERRNO_MAP(UP__ERRNO_ENUM)
#undef UP__ERRNO_ENUM
};

/** The text of an error code ("invalid argument"); "unknown error" for a
 * value that is no code. */
UP_API const char *up_strerror(int err);
/** The name of an error code's constant ("UP_EINVAL"); "UP_UNKNOWN" for a
 * value that is no code. */
UP_API const char *up_err_name(int err);
/** The message of the last failed call on this thread ("" when none). */
UP_API const char *up_last_error(void);
/** The version of the library the program runs with, "MAJOR.MINOR.PATCH";
 * UP_VERSION_STRING (<ultrapool/version.h>) is that of the headers. */
UP_API const char *up_version(void);

/** Largest payload, in bytes, that up_submit_copy() and UP_TYPED store
 * inline in a queue slot, and that up_task_copy() and up_task_deps_copy()
 * (<ultrapool/parallel.h>) copy into a task. */
#define UP_PAYLOAD_MAX 40

/** How workers are bound to CPUs (up_config.bind, UP_BIND). */
typedef enum up_bind {
    UP_BIND_NONE = 0, /**< workers float; the OS places them       */
    UP_BIND_SHARD,    /**< workers bound to their shard's cpus     */
    UP_BIND_CORE      /**< each worker bound to one CPU of its shard, distinct cores first */
} up_bind;

/** Where a submit from outside the pool goes first (up_config.shard_choice). */
typedef enum up_shard_choice {
    UP_SHARD_LOCAL = 0, /**< the shard of the CPU the submitter runs on */
    UP_SHARD_RANDOM     /**< a random shard per submit (the Go pool's policy), for comparison */
} up_shard_choice;

/** Called once in every worker thread, after it starts and before it exits.
 * What start returns becomes the worker's local state (up_worker_local()).
 * The tasks of a pool with a start hook run only on its workers (blocked
 * submitters and group waiters do not run them), so each finds its state. */
typedef void *(*up_worker_start_fn)(void *ctx, unsigned shard, unsigned worker);
/** Called in every worker thread before it exits, with the local state its
 * start hook returned. */
typedef void (*up_worker_stop_fn)(void *ctx, void *local);

/** A pool's configuration (up_pool_create). up_config_init() is the one
 * way to make one: it sets size and every field, and a configuration
 * whose size was never set is UP_EINVAL.
 * Each field but size and the hooks has a variable, applied by
 * up_config_init(); a field the program sets after that wins over its
 * variable. Defaults, ranges and units: docs/env.md. A value out of range
 * is UP_EINVAL. A field added after 1.0 takes 0 as its default. */
typedef struct up_config {
    size_t size;                /**< sizeof(up_config) as the program was compiled, set by
                                   up_config_init() (see "Structs that grow" above) */
    unsigned shards;            /**< UP_SHARDS: shards; 0 (default): from the topology */
    unsigned shard_min_workers; /**< UP_SHARD_MIN_WORKERS: floor per shard, never retired (1) */
    unsigned shard_max_workers; /**< UP_SHARD_MAX_WORKERS: cap per shard (1024) */
    unsigned max_workers;       /**< UP_MAX_WORKERS: cap over all shards; 0 (default): none */
    unsigned queue_capacity;    /**< UP_QUEUE_CAPACITY: slots per shard, a power of two (1024) */
    unsigned deque_capacity;    /**< UP_DEQUE_CAPACITY: slots per worker for nested submits, a
                                   power of two (256) */
    uint64_t idle_timeout_ns;   /**< UP_IDLE_TIMEOUT: idle time before a worker above the floor
                                   retires (1 s) */
    uint64_t extra_idle_timeout_ns; /**< UP_EXTRA_IDLE_TIMEOUT: idle time before a worker beyond
                                       its shard's CPU count (started for blocked tasks)
                                       retires, if shorter than idle_timeout_ns (50 ms) */
    uint64_t spawn_delay_ns;        /**< UP_SPAWN_DELAY: how often the monitor looks at a backlog
                                       for blocked workers (1 ms) */
    unsigned spin;                  /**< UP_SPIN: polls of an idle worker before it parks (256) */
    int submit_help;                /**< UP_SUBMIT_HELP: a waiting submitter facing a full queue:
                                       0 sleeps, 1 runs queued tasks, 2 (default) runs queued
                                       ones then its own, and its own at once at a backlog of
                                       short tasks when that measured faster */
    up_bind bind;                   /**< UP_BIND: worker binding (UP_BIND_NONE) */
    unsigned shard_max_cores;       /**< UP_SHARD_MAX_CORES: cores per topology shard at most;
                                       0 (default): 8 */
    up_shard_choice shard_choice;   /**< UP_SHARD_CHOICE: where an outside submit goes first
                                       (UP_SHARD_LOCAL) */
    size_t stack_size;              /**< UP_STACK_SIZE: worker stack bytes; 0 (default): the
                                       system's */
    int omp_share;                  /**< UP_OMP_SHARE: 1 (default): OpenMP regions opened by a
                                       task get the CPUs the busy workers leave free
                                       (<ultrapool/omp.h>); 0: left as OpenMP sets them */
    up_worker_start_fn on_worker_start; /**< no variable: set by the program */
    up_worker_stop_fn on_worker_stop;   /**< no variable: set by the program */
    void *hook_ctx;                     /**< the ctx both hooks are called with */
} up_config;

/** Fills *cfg (an up_config *): sets its size, fills the defaults, then
 * applies the UP_* environment variables, and where one is unset the
 * OpenMP variable standing in for it (OMP_PROC_BIND and OMP_PLACES for
 * UP_BIND, OMP_STACKSIZE, OMP_WAIT_POLICY for UP_SPIN; docs/env.md,
 * "OpenMP's variables"). Returns UP_EINVAL (and names the variable in
 * up_last_error() and on stderr) when a variable is malformed; the fields
 * of valid variables are still applied. UP_EINVAL for a NULL cfg. The
 * first call of the process warns on stderr about UP_* names that are not
 * ultrapool's (docs/env.md). A macro: it passes the program's
 * sizeof(up_config) to up_config_init_sized(). */
#define up_config_init(cfg) up_config_init_sized((cfg), sizeof(up_config))
/** What up_config_init() calls, with size the program's sizeof(up_config):
 * fills that many bytes of *cfg (those of fields this library lacks with
 * 0) and sets cfg->size to size. UP_EINVAL for a size that is no
 * up_config's. Call it through up_config_init(). */
UP_API int up_config_init_sized(up_config *cfg, size_t size);
/** Checks a configuration without creating anything. A bad field gives
 * UP_EINVAL and a message naming the field and its variable, in
 * up_last_error() and on stderr; so does a cfg not made by
 * up_config_init() (its size not set) or one setting fields this library
 * lacks. */
UP_API int up_config_validate(const up_config *cfg);

/** Creates and starts a pool. cfg NULL: up_config_init() defaults; else a
 * configuration made by up_config_init() (UP_EINVAL otherwise, as
 * up_config_validate() says). */
UP_API int up_pool_create(up_pool **out, const up_config *cfg);

/** Never blocks. UP_EOVERLOAD when the chosen shard and its neighbours are
 * full and no worker can be added (from inside a task too: only the
 * waiting forms run a task on a full queue themselves); UP_EAGAIN when the
 * pool has no worker and none can be started; UP_ESTOPPED after stop. */
UP_API int up_submit(up_pool *p, up_fn fn, void *arg);
/** Blocks while full (optionally running queued tasks meanwhile). */
UP_API int up_submit_wait(up_pool *p, up_fn fn, void *arg);
/** As up_submit_wait for at most timeout_ns, then UP_ETIMEDOUT (the task
 * not accepted). A waiting submitter helps as submit_help says, so with
 * submit_help 1 or 2 the call may run queued tasks before it returns (the
 * time they take can pass the timeout), and at 2 it may run its own task
 * and return UP_OK, even with a timeout of 0. */
UP_API int up_submit_timeout(up_pool *p, up_fn fn, void *arg, uint64_t timeout_ns);
/** Copies size bytes (1 to UP_PAYLOAD_MAX) into the slot; fn receives a
 * pointer to a copy that lives while fn runs. UP_EINVAL for a NULL
 * payload or a size of 0 or above UP_PAYLOAD_MAX (a task with no data
 * uses up_submit). */
UP_API int up_submit_copy(up_pool *p, up_fn fn, const void *payload, size_t size);
/** As up_submit_copy, but blocks while full, as up_submit_wait does. */
UP_API int up_submit_copy_wait(up_pool *p, up_fn fn, const void *payload, size_t size);

/** No new tasks; queued and running ones finish. Idempotent. */
UP_API void up_pool_stop(up_pool *p);
/** Stop, then wait until every accepted task has run and workers exited.
 * UP_EDEADLK when called from one of the pool's own tasks. */
UP_API int up_pool_stop_and_wait(up_pool *p);
/** UP_OK, UP_ETIMEDOUT (work goes on in the background), or UP_EDEADLK. */
UP_API int up_pool_stop_timeout(up_pool *p, uint64_t timeout_ns);
/** Stops and waits if that was not done, then frees everything.
 * UP_EDEADLK (nothing freed) when called from one of the pool's tasks. */
UP_API int up_pool_destroy(up_pool *p);

/** Counters since create. Each is read on its own, so they need not agree
 * at one instant: a retiring worker leaves `workers` just before it counts
 * in `retired`, and a new one counts in `workers` before `spawned`. One
 * order holds in every snapshot: a task counts in `submitted` before it
 * can run and in `executed` after it returned, so executed <= submitted.
 * Filled by up_pool_stats() and up_pool_shard_stats(), which set size. */
typedef struct up_stats {
    size_t size;           /**< the bytes the library wrote: sizeof(up_stats) as the program
                              was compiled, or less when the library is older (the fields past
                              it were not written) */
    uint64_t submitted;    /**< tasks accepted by the pool's submit calls */
    uint64_t executed;     /**< tasks that ran to completion */
    uint64_t overloads;    /**< submits refused with UP_EOVERLOAD */
    uint64_t steals;       /**< tasks taken from another worker's deque */
    uint64_t spawned;      /**< worker threads started */
    uint64_t retired;      /**< worker threads that retired after idling */
    uint64_t parks;        /**< times an idle worker went to sleep */
    uint64_t wakes;        /**< wake-ups sent to parked workers */
    uint64_t helped;       /**< tasks run by waiting submitters: queued ones (the queue was full)
                              and their own */
    uint64_t inlined;      /**< of those, their own: at a full queue, or a backlog of short tasks */
    uint64_t spawn_failed; /**< thread creations that failed */
    uint64_t bind_failed;  /**< worker bindings that failed (never fatal) */
    unsigned workers;      /**< worker threads now */
    unsigned workers_peak; /**< most worker threads at once */
    unsigned shards;       /**< shards of the pool */
    unsigned parked;       /**< workers asleep now */
    unsigned searching;    /**< workers looking for work now */
    /* Waiting tasks (<ultrapool/wait.h>), pool-wide (up_pool_shard_stats
     * leaves them 0). Each waiting task counts in one of the two "now"
     * fields, never both, so waiting + tasks_parked is every task waiting
     * now. A stackless task (up_submit_on, up_submit_after) counts in
     * waiting until a worker takes it, then in released or cancelled and
     * in submitted. A stackful task (up_sleep_ns, up_event_wait, up_yield
     * inside a task) counts in tasks_parked from the moment it parked
     * until its resumption starts, then once in tasks_resumed (also when
     * a destroy resumed it), never in waiting, released or cancelled;
     * between its wake-up and its resumption it is a queued task. */
    uint64_t waiting;       /**< stackless tasks waiting now, released ones not yet taken
                               included */
    uint64_t released;      /**< stackless tasks taken to run after their event or timer
                               released them */
    uint64_t cancelled;     /**< stackless tasks taken to run after a destroy released them */
    uint64_t tasks_parked;  /**< stackful tasks parked now (0 while tasks block threads) */
    uint64_t tasks_resumed; /**< stackful tasks resumed after parking; a resumption is
                               queued and run like a task, so each also counts once
                               more in submitted and executed */
} up_stats;

/** Fills *out (an up_stats *) with the pool's counters; all 0 for a NULL
 * pool, nothing for a NULL out. A macro: it passes the program's
 * sizeof(up_stats) to up_pool_stats_sized(). */
#define up_pool_stats(p, out) up_pool_stats_sized((p), (out), sizeof(up_stats))
/** What up_pool_stats() calls, with size the program's sizeof(up_stats):
 * writes the smaller of size and the library's sizeof(up_stats) bytes,
 * never one past size, and sets out->size to that count. Call it through
 * up_pool_stats(). */
UP_API void up_pool_stats_sized(const up_pool *p, up_stats *out, size_t size);
/** The same for one shard (steals: taken from other shards by its workers;
 * workers_peak is the pool's). UP_EINVAL for a bad pool or shard or a
 * NULL out. A macro, as up_pool_stats(). */
#define up_pool_shard_stats(p, shard, out)                                                         \
    up_pool_shard_stats_sized((p), (shard), (out), sizeof(up_stats))
/** What up_pool_shard_stats() calls; writes as up_pool_stats_sized(). */
UP_API int up_pool_shard_stats_sized(const up_pool *p, unsigned shard, up_stats *out, size_t size);
/** The number of shards of the pool. */
UP_API unsigned up_pool_shards(const up_pool *p);
/** CPUs the pool's shards cover: those of the process's binding (an MPI
 * rank's, under mpirun or srun) unless the configuration names others;
 * 0 for NULL. */
UP_API unsigned up_pool_cpus(const up_pool *p);
/** Prints the effective configuration (what UP_PRINT_CONFIG=1 shows) on
 * file, or on stderr when file is NULL. Nothing for a NULL pool. */
UP_API void up_pool_print_config(const up_pool *p, FILE *file);

/** For layers that need n tasks running at the same time (a parallel
 * region's team): wakes parked workers and starts new ones (beyond one per
 * CPU) until n workers are available or the caps (shard_max_workers in
 * each shard, max_workers in all) allow no more. Available: searching for
 * work, just woken, or starting; a worker running a task is not. Returns
 * the number available when it returns, at most n, so n = UINT_MAX asks
 * for every worker the caps allow and costs no more than starting them:
 * it starts at most as many as the caps had room for when it was called.
 * The workers it counts are the pool's when it returns: no worker retires
 * while a reserve runs, nor for the shorter of idle_timeout_ns and
 * extra_idle_timeout_ns after it returned, so up_pool_stats taken then
 * shows workers >= the count (equal when every worker was available and n
 * not reached, as on an idle pool asked for UINT_MAX), unless the pool
 * stops. 0 for a NULL or stopped pool and for n = 0. */
UP_API unsigned up_pool_reserve(up_pool *p, unsigned n);

/** Inside a task: the local state of the running worker (what the start
 * hook returned); NULL outside a worker, and for a task of another pool
 * that the worker runs while it waits on that pool. */
UP_API void *up_worker_local(void);
/** Inside a task: the pool running it, NULL elsewhere. */
UP_API up_pool *up_current_pool(void);

/** Blocking regions, for a task about to block where the pool cannot see
 * it coming (a read on a pipe or a socket, a lock, a library call that
 * waits). Between up_blocking_begin() and up_blocking_end() the worker
 * counts as blocked: when tasks are queued in its shard and no worker is
 * looking for work, begin wakes a parked worker or starts one (beyond one
 * per CPU, under the caps) at once, instead of at the monitor's next look,
 * and the monitor counts the worker blocked without asking the OS (it asks
 * the OS for the others: docs/design.md, "Growing and shrinking"). Regions
 * nest. Inside a region the waits of <ultrapool/wait.h> block the thread
 * rather than park the task, and so do those of tasks that a helping wait
 * runs on the worker meanwhile. A region still open when the task returns
 * is closed then. Outside the pool's workers (a plain thread, a task run
 * by a helping submitter) both calls do nothing and return UP_OK;
 * up_blocking_end() on a worker with no region open returns UP_EINVAL. */
UP_API int up_blocking_begin(void);
/** Closes the innermost blocking region opened by up_blocking_begin(). */
UP_API int up_blocking_end(void);

/** Marks the functions UP_TYPED defines as possibly unused. */
#if defined(__GNUC__) || defined(__clang__)
#define UP_MAYBE_UNUSED __attribute__((unused))
#else
#define UP_MAYBE_UNUSED
#endif
/** C++ spells the static assertion differently (static_assert is a keyword
 * there, and _Static_assert only a compiler extension). */
#ifdef __cplusplus
#define UP_STATIC_ASSERT_ static_assert
#else
#define UP_STATIC_ASSERT_ _Static_assert
#endif
/** A typed front: UP_TYPED(name, T, handler) defines
 *   int name_submit(up_pool *, T value);       never blocks
 *   int name_submit_wait(up_pool *, T value);  blocks while full
 * where handler is void handler(T *value). T is stored inline in the slot. */
#define UP_TYPED(name, T, handler)                                                                 \
    UP_STATIC_ASSERT_(sizeof(T) <= UP_PAYLOAD_MAX, #T " does not fit in a queue slot");            \
    static inline void name##_trampoline_(void *p_) { handler((T *)p_); }                          \
    UP_MAYBE_UNUSED static inline int name##_submit(up_pool *pool_, T value_)                      \
    {                                                                                              \
        return up_submit_copy(pool_, name##_trampoline_, &value_, sizeof value_);                  \
    }                                                                                              \
    UP_MAYBE_UNUSED static inline int name##_submit_wait(up_pool *pool_, T value_)                 \
    {                                                                                              \
        return up_submit_copy_wait(pool_, name##_trampoline_, &value_, sizeof value_);             \
    }

#ifdef __cplusplus
}
#endif
#endif
