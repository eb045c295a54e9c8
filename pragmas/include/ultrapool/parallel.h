/** @file
 * ultrapool's OpenMP-style API without pragmas (library ultrapool_par).
 *
 * A parallel region runs a function on a team of threads: the calling
 * thread (member 0) and workers of an ultrapool pool. Inside a region the
 * usual OpenMP constructs are plain calls: worksharing loops, reductions,
 * barriers, single, master, critical sections, explicit tasks with
 * taskwait, taskgroups (with cancellation), taskloops and dependencies.
 *
 * OpenMP construct -> call
 *   \#pragma omp parallel num_threads(n)  -> up_parallel(pool, n, fn, ctx)
 *   omp_get_thread_num/num_threads       -> up_thread_num(), up_num_threads()
 *   \#pragma omp barrier                  -> up_barrier()
 *   \#pragma omp single [nowait]          -> if (up_single()) {...} [up_barrier()]
 *   \#pragma omp master / masked          -> if (up_master()) {...}
 *   \#pragma omp critical(name)           -> up_critical_begin("name") ... up_critical_end("name")
 *   \#pragma omp for schedule(s, c)       -> up_for(lo, hi, &opts, body, ctx)
 *   \#pragma omp for collapse(2)          -> up_for_2d(...)
 *   reduction(+: x)                      -> up_reduce(&x, UP_RED_SUM, UP_RED_DOUBLE) after the loop
 *   \#pragma omp parallel for             -> up_parallel_for(pool, lo, hi, &opts, body, ctx)
 *   \#pragma omp task [if/final/priority] -> up_task(fn, arg, &topts) / up_task_copy(...)
 *   \#pragma omp taskwait                 -> up_taskwait()
 *   \#pragma omp taskgroup                -> up_taskgroup(fn, ctx)
 *   \#pragma omp cancel taskgroup         -> up_cancel_taskgroup(); up_cancelled() polls
 *   \#pragma omp taskloop grainsize(g)    -> up_taskloop(lo, hi, &lopts, body, ctx)
 *   \#pragma omp taskyield                -> up_taskyield()
 *   depend(in/out/inout/mutexinoutset)   -> up_task_deps(fn, arg, deps, ndeps, &topts)
 *
 * One difference from OpenMP, on purpose: a task's children complete before
 * the task itself does (as if every task ended with a taskwait), so
 * up_taskwait waits for every descendant, not only the children, and data
 * on the stack of a task that waits stays valid for all of them. The wait
 * at a task's end comes after its function has returned, and its locals
 * end there, as in C: a task that passes a child a pointer to its locals
 * calls up_taskwait before it returns. No task record is ever allocated
 * for a task without dependencies.
 *
 * Outside a region, the calling thread is a team of one: up_task runs the
 * task at once (OpenMP's initial thread behaves the same), so library code
 * using these calls works whether or not a region is active.
 *
 * Options. A call's options are a struct (up_for_opts, up_task_opts,
 * up_taskloop_opts) passed by pointer, NULL for the defaults; 0 is the
 * default of every field. Make one with its macro, which sets its size
 * (<ultrapool/pool.h>, "Structs that grow") and takes designated
 * initializers for the rest: &UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC,
 * .chunk = 4). A struct whose size is not set is UP_EINVAL.
 *
 * Errors: calls that return int return 0 or a negative UP_E* code; after
 * an error, up_last_error() (<ultrapool/pool.h>, per thread) begins with
 * the name of the call that failed and says why, e.g. "up_for: chunk -1
 * is negative". */
#ifndef ULTRAPOOL_PARALLEL_H
#define ULTRAPOOL_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include <ultrapool/pool.h>
#include <ultrapool/export.h>
#include <ultrapool/wait.h> /* up_cancelled */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Parallel regions ------------------------------------------------ */

/** Runs fn(ctx) on a team of up to nthreads threads and returns when all
 * of them, and every task they created, are done. nthreads 0 is the size
 * UP_NUM_THREADS, else OMP_NUM_THREADS, gives the region's nesting level
 * (a list "4,2": 4 at the top level, 2 below, the last value for deeper
 * levels), else one thread per CPU the process may use (counted at the
 * first region that needs it, as OpenMP counts them once). UP_THREAD_LIMIT
 * (OMP_THREAD_LIMIT) bounds the threads of a top-level region and all the
 * regions nested in it together; past UP_MAX_ACTIVE_LEVELS
 * (OMP_MAX_ACTIVE_LEVELS) nested regions of more than one thread, a
 * region runs on a team of one. These variables are read once per
 * process, at the first region; while an UP_ one is malformed (the
 * message is printed on stderr once), every region fails with UP_EINVAL
 * and that message in up_last_error(); a malformed OMP_ one is a warning
 * on stderr, and its default stays. docs/env.md has the details. A nested
 * region (called from inside a region) gets the idle
 * workers it can find right away, possibly none: it never waits for a
 * thread, so it cannot deadlock. A team has at most 1024 threads:
 * nthreads above that is UP_EINVAL. Returns UP_OK, UP_EINVAL, or
 * UP_ESTOPPED when the pool is stopped: then the region does not run,
 * whatever nthreads (a team of one included). up_parallel_exact and
 * up_parallel_for return UP_ESTOPPED the same way. */
UP_API int up_parallel(up_pool *pool, unsigned nthreads, up_fn fn, void *ctx);

/** Like up_parallel, but all or nothing: when fewer than nthreads members
 * can be gathered in time, runs nothing and returns UP_EAGAIN. For code
 * that partitions its data by up_thread_num(). Under a thread limit it
 * returns UP_EINVAL for nthreads above the limit, and UP_EAGAIN when the
 * enclosing regions use the threads it needs. Where a region could only
 * be a team of one (no further active level allowed, or nested too
 * deep), nthreads above 1 gives UP_EAGAIN, on every backend; each
 * refusal names the call and the limit in up_last_error(). */
/* up_level() counts the regions enclosing the caller, teams of one
 * included (OpenMP's omp_get_level), at any depth. Regions nested more
 * than 8 deep run on a team of one, whose tasks run at once. */
UP_API int up_parallel_exact(up_pool *pool, unsigned nthreads, up_fn fn, void *ctx);

UP_API unsigned up_thread_num(void);  /**< 0 .. up_num_threads() - 1; 0 outside */
UP_API unsigned up_num_threads(void); /**< 1 outside a region */
UP_API unsigned up_level(void);       /**< enclosing regions, any depth (above) */

/** Waits for every member of the team and for every task the team created.
 * Waiting members run tasks meanwhile. */
UP_API void up_barrier(void);
/** 1 for exactly one member per encounter (the first to arrive); no
 * barrier is implied: call up_barrier() for OpenMP's default. */
UP_API int up_single(void);
UP_API int up_master(void); /**< 1 for member 0 */
/** Critical sections by name (NULL is the unnamed one); names are compared
 * by content. */
UP_API void up_critical_begin(const char *name);
/** Ends the critical section up_critical_begin(name) began. */
UP_API void up_critical_end(const char *name);

/* ---- Backends ------------------------------------------------------- */

/** Which runtime runs the calls of this header. The same program, unchanged
 * and in the same binary, runs on ultrapool's own scheduler (the default)
 * or on a real OpenMP runtime: GCC's libgomp or LLVM's libomp. Each OpenMP
 * backend is a module of its own (libultrapool_omp_gomp.so,
 * libultrapool_omp_llvm.so), built with its compiler's OpenMP and loaded
 * on first use, since the two OpenMP runtimes cannot share a process:
 * from the folders of UP_BACKEND_PATH (colon-separated, absolute), then
 * beside libultrapool_par.so (for the static library, the libdir it was
 * configured for), then the loader's search path; the error of a module
 * found nowhere lists every folder tried (docs/interop.md). The
 * choice comes from up_set_backend(), else from UP_BACKEND=ultrapool|gomp|
 * llvm, read at the first call of this header that needs it. A backend
 * that cannot be loaded is an error naming the module and the reason,
 * never a silent fallback: with UP_BACKEND, every int-returning call of
 * this header then fails with UP_EINVAL and that message (printed once on
 * stderr too); up_set_backend returns it and keeps the backend it had.
 *
 * On an OpenMP backend the pool argument of up_parallel is checked (not
 * NULL, not stopped) but its workers take no part: the OpenMP runtime's
 * threads form the team, its nthreads 0 means the runtime's default
 * (OMP_NUM_THREADS), and the OpenMP variables configure it. Every call
 * keeps the meaning this header gives it, where OpenMP's differs too: a
 * task's children complete before it does, taskgroup cancellation follows
 * UP_CANCELLATION / OMP_CANCELLATION as on ultrapool (on unless set
 * false), up_parallel_exact is all or nothing.
 * docs/interop.md has the details. */
typedef enum up_backend {
    UP_BACKEND_ULTRAPOOL = 0, /**< ultrapool's own scheduler (default) */
    UP_BACKEND_GOMP,          /**< GCC's libgomp */
    UP_BACKEND_LLVM           /**< LLVM's libomp */
} up_backend;

/** Selects the backend for every thread of the process. Call it outside
 * any region, while no other thread is inside a call of this header.
 * UP_EINVAL: not an up_backend, called inside a region, the module cannot
 * be loaded, or the other OpenMP runtime is already in the process
 * (up_last_error() says which). */
UP_API int up_set_backend(up_backend backend);
/** The backend in effect (resolving UP_BACKEND on first use). */
UP_API up_backend up_get_backend(void);
/** "ultrapool", "gomp", "llvm"; NULL for a value that is not an up_backend. */
UP_API const char *up_backend_name(up_backend backend);

/* ---- Worksharing loops ----------------------------------------------- */

/** The schedules of a worksharing loop, as OpenMP's schedule clause. */
typedef enum up_schedule {
    UP_SCHED_STATIC = 0, /**< chunk 0: one contiguous block per member */
    UP_SCHED_DYNAMIC,    /**< chunk 0: 1 */
    UP_SCHED_GUIDED,     /**< chunk: the smallest chunk */
    UP_SCHED_AUTO,       /**< the runtime decides (static blocks) */
    /** OpenMP's schedule(runtime): the schedule and chunk of UP_SCHEDULE,
     * else OMP_SCHEDULE ("dynamic,4", "guided", "nonmonotonic:dynamic",
     * any case), else static; the chunk in up_for_opts is ignored. Read
     * once per process; while UP_SCHEDULE (or another of the layer's UP_
     * variables, docs/env.md) is malformed, a loop with this schedule
     * fails with UP_EINVAL. */
    UP_SCHED_RUNTIME
} up_schedule;

/** Options of a worksharing loop (up_for, up_for_2d, up_parallel_for),
 * made with UP_FOR_OPTS(); 0 in every field is the default (as NULL). */
typedef struct up_for_opts {
    size_t size;          /**< sizeof(up_for_opts) as the program was compiled, set by
                             UP_FOR_OPTS() */
    up_schedule schedule; /**< the schedule (see up_schedule); 0: UP_SCHED_STATIC */
    int64_t chunk;        /**< the chunk, as the schedule reads it */
    int nowait;           /**< 1: no barrier at the end */
} up_for_opts;
/** An up_for_opts with its size set, the other fields from designated
 * initializers and 0 where none is given: &UP_FOR_OPTS(.schedule =
 * UP_SCHED_DYNAMIC, .chunk = 4) for schedule(dynamic, 4), UP_FOR_OPTS()
 * for the defaults. A compound literal (C; C++ sets size itself). */
#define UP_FOR_OPTS(...) ((up_for_opts){.size = sizeof(up_for_opts), __VA_ARGS__})

/** body(lo, hi, ctx) is called for disjoint ranges covering [lo, hi)
 * exactly: any int64 bounds, up to 2^64 - 1 iterations (INT64_MIN to
 * INT64_MAX), for every schedule and chunk; hi <= lo is an empty loop. The
 * ranges follow the schedule (static chunk c: chunks of c iterations dealt
 * round robin by member; dynamic: chunks of c; guided: at least c), except
 * in a team of one, where body runs once over all of [lo, hi). */
typedef void (*up_range_fn)(int64_t lo, int64_t hi, void *ctx);
/** body(i, jlo, jhi, ctx): row i, columns [jlo, jhi). */
typedef void (*up_range2d_fn)(int64_t i, int64_t jlo, int64_t jhi, void *ctx);

/** Inside a region: shares [lo, hi) among the members. opts NULL: static. */
UP_API int up_for(int64_t lo, int64_t hi, const up_for_opts *opts, up_range_fn body, void *ctx);
/** collapse(2): the rows x columns space flattened and shared, chunk
 * counted in cells and body called per row piece. A space of more than
 * 2^64 - 1 cells (say 2^32 x 2^32) cannot be flattened: its rows are
 * shared instead, whole, chunk / (hi - lo columns) of them at a time (at
 * least one). */
UP_API int up_for_2d(int64_t ilo, int64_t ihi, int64_t jlo, int64_t jhi, const up_for_opts *opts,
                     up_range2d_fn body, void *ctx);
/** A region that runs one shared loop: \#pragma omp parallel for. */
UP_API int up_parallel_for(up_pool *pool, int64_t lo, int64_t hi, const up_for_opts *opts,
                           up_range_fn body, void *ctx);

/* ---- Reductions ------------------------------------------------------ */

/** The operators of up_reduce. */
typedef enum up_red_op {
    UP_RED_SUM = 0, /**< reduction(+: x) */
    UP_RED_PROD,    /**< reduction(*: x) */
    UP_RED_MIN,     /**< reduction(min: x) */
    UP_RED_MAX      /**< reduction(max: x) */
} up_red_op;
/** The value types of up_reduce. */
typedef enum up_red_type {
    UP_RED_INT64 = 0, /**< int64_t */
    UP_RED_UINT64,    /**< uint64_t */
    UP_RED_DOUBLE,    /**< double */
    UP_RED_FLOAT,     /**< float */
    UP_RED_INT32      /**< int32_t */
} up_red_type;
/** Combines *value across the team (every member calls it with its partial
 * value); on return *value holds the result in every member. Partials live
 * on separate cache lines. Implies a barrier. Integer sums and products
 * wrap around modulo 2^width, as two's complement arithmetic does (no
 * overflow, signed or not); min and max take the extremes as they are. */
UP_API int up_reduce(void *value, up_red_op op, up_red_type type);
/** A user combiner: combine(into, from) for values of size bytes (1 to
 * 256; UP_EINVAL otherwise). */
typedef void (*up_combine_fn)(void *into, const void *from);
/** As up_reduce, for values of size bytes combined by combine. */
UP_API int up_reduce_user(void *value, size_t size, up_combine_fn combine);

/* ---- Tasks ----------------------------------------------------------- */

/** Options of a task (up_task and its kinds), made with UP_TASK_OPTS();
 * 0 in every field is the default (as NULL). */
typedef struct up_task_opts {
    size_t size;    /**< sizeof(up_task_opts) as the program was compiled, set by
                       UP_TASK_OPTS() */
    int priority;   /**< > 0: taken before ordinary tasks by idle members (a hint) */
    int undeferred; /**< OpenMP if(0): run now, on this thread */
    int final;      /**< the task and all its descendants run undeferred
                       (OpenMP backends: its descendants; docs/interop.md) */
} up_task_opts;
/** An up_task_opts with its size set and the fields given, as
 * UP_FOR_OPTS(): &UP_TASK_OPTS(.undeferred = 1) for if(0). */
#define UP_TASK_OPTS(...) ((up_task_opts){.size = sizeof(up_task_opts), __VA_ARGS__})

/** Creates a task running fn(arg); opts may be NULL. arg must stay valid
 * until the task has run: data on the creating task's stack does when
 * that task calls up_taskwait before it returns. An undeferred or final
 * task with dependencies (up_task_deps) first waits for its predecessors,
 * running other tasks meanwhile, then runs on this thread.
 * As OpenMP allows, the task may run at once on the calling thread (it
 * does when this thread already has tasks queued for others to take), so
 * a task must not wait for something a task created after it provides. */
UP_API int up_task(up_fn fn, void *arg, const up_task_opts *opts);
/** Like up_task, with size (1 to UP_PAYLOAD_MAX; UP_EINVAL otherwise)
 * bytes copied into the task (firstprivate); fn receives a pointer to the
 * copy. */
UP_API int up_task_copy(up_fn fn, const void *payload, size_t size, const up_task_opts *opts);
/** Waits for the children of the current task; runs tasks meanwhile. */
UP_API void up_taskwait(void);
/** Runs one other pending task if there is one. */
UP_API void up_taskyield(void);
/** Runs fn(ctx) and waits for every task created inside it (and their
 * descendants). UP_ECANCELED when the group was cancelled. */
UP_API int up_taskgroup(up_fn fn, void *ctx);
/** Inside a taskgroup: tasks of the innermost group not yet started are
 * skipped (a task inside a nested up_taskgroup, or inside a taskloop's
 * implicit group, belongs to that group, as in OpenMP);
 * running ones see up_cancelled() become 1. With UP_CANCELLATION (else
 * OMP_CANCELLATION) false it does nothing, as OpenMP ignores cancel
 * then; unset, it cancels (OpenMP's default is false). */
UP_API void up_cancel_taskgroup(void);
/* up_cancelled() (<ultrapool/wait.h>, the runtime's) is 1 inside a task
 * of a cancelled taskgroup, as inside a waiting task a destroy released. */
/** Nesting depth of task frames on this thread (the bound on helping). */
UP_API unsigned up_task_depth(void);

/** Dependencies between sibling tasks, on addresses. Any address orders
 * the tasks that name it, NULL and addresses of no object included: they
 * are compared, never dereferenced. */
typedef enum up_dep_kind { UP_DEP_IN, UP_DEP_OUT, UP_DEP_INOUT, UP_DEP_MUTEXINOUTSET } up_dep_kind;
/** One dependence of a task: an address and how the task uses it. An
 * element of an array, so it has no size field and never grows (unlike
 * the option structs): a new kind of dependence comes as a new
 * up_dep_kind value, which an older library refuses with UP_EINVAL. */
typedef struct up_dep {
    const void *addr; /**< the address the tasks are ordered on */
    up_dep_kind kind; /**< in, out, inout or mutexinoutset */
} up_dep;
/** As up_task, with ndeps dependences deps on its sibling tasks. */
UP_API int up_task_deps(up_fn fn, void *arg, const up_dep *deps, size_t ndeps,
                        const up_task_opts *opts);
/** The same with size (<= UP_PAYLOAD_MAX) bytes copied into the task. */
UP_API int up_task_deps_copy(up_fn fn, const void *payload, size_t size, const up_dep *deps,
                             size_t ndeps, const up_task_opts *opts);

/** Options of a taskloop (up_taskloop), made with UP_TASKLOOP_OPTS(); 0 in
 * every field is the default (as NULL). */
typedef struct up_taskloop_opts {
    size_t size;       /**< sizeof(up_taskloop_opts) as the program was compiled, set by
                          UP_TASKLOOP_OPTS() */
    int64_t grainsize; /**< iterations per task (0: from num_tasks); wins when both are set */
    int64_t num_tasks; /**< tasks to create (0 and grainsize 0: 4 per member) */
    int nogroup;       /**< 1: no implicit taskgroup at the end */
} up_taskloop_opts;
/** An up_taskloop_opts with its size set and the fields given, as
 * UP_FOR_OPTS(): &UP_TASKLOOP_OPTS(.grainsize = 64). */
#define UP_TASKLOOP_OPTS(...) ((up_taskloop_opts){.size = sizeof(up_taskloop_opts), __VA_ARGS__})
/** Splits [lo, hi) (any int64 bounds, as up_for) into tasks running body
 * on their ranges. */
UP_API int up_taskloop(int64_t lo, int64_t hi, const up_taskloop_opts *opts, up_range_fn body,
                       void *ctx);

#ifdef __cplusplus
}
#endif
#endif
