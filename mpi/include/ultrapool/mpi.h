/** @file
 * ultrapool's MPI mode: one index space farmed out over the ranks of a
 * communicator, each rank running its share on its own pool.
 *
 * Library ultrapool_mpi (CMake target ultrapool::mpi), built when CMake
 * finds MPI. Launch the program the cluster's way (mpirun, mpiexec, srun);
 * each rank's pool covers the CPUs the launcher bound the rank to, so
 * `mpirun --map-by` and `srun --cpu-bind` decide how many threads a rank
 * runs, and ranks sharing a node do not oversubscribe each other
 * (docs/mpi.md).
 *
 * How a farm runs. Rank 0 holds a counter in an MPI window; every rank
 * takes chunks of [0, n) from it with one MPI_Fetch_and_op each, sized
 * from what is left (guided: large first, down to min_chunk at the end),
 * and splits each chunk among its lanes, pool tasks that run the body. The
 * calling thread of each rank makes every MPI call of the farm (so
 * MPI_THREAD_FUNNELED is enough when it is the main thread) and takes the
 * next chunk while the lanes still work on the current one. Every index
 * runs exactly once on exactly one rank, unless a failure or the timeout
 * stops the farm: then no index runs twice, and indexes may be left out.
 *
 * Failures. The farm's MPI calls use a duplicate of the communicator with
 * MPI_ERRORS_RETURN. A body that returns non-zero stops the farm on every
 * rank (chunks already started finish; the other ranks see it at their
 * next chunk grab, within 100 ms at the latest); every rank's call returns
 * UP_ECANCELED and fills the report with the failing rank, chunk and code
 * (the lowest rank's, when several fail). Each rank's calling thread beats
 * a heartbeat every 100 ms and watches the next rank's; a rank whose
 * process has ended (seen when it ran on the watcher's node) or that is
 * silent for heartbeat_timeout_ns (one that died elsewhere, or hangs) is
 * reported on stderr by its watcher with its rank and the chunk it was
 * running, and the watcher aborts the job with MPI_Abort error code 70
 * (the standard offers nothing gentler); a body still running a heartbeat
 * timeout after the farm's timeout aborts it with 71. The job's exit
 * status is the launcher's: Open MPI's mpirun gives 128 + the signal of a
 * rank killed by one (137 for SIGKILL). If the launcher ends the job first
 * (Open MPI's mpirun sends SIGTERM to the other ranks about a second after
 * one dies), each rank still running a farm prints what it last knew of
 * the rank it watches from its SIGTERM handler before it exits.
 * A rank stopped inside an MPI call can keep a lock the other ranks' calls
 * need, so that their calls never return and no heartbeat is read: with
 * more than one rank, each rank's farm therefore runs a watchdog thread,
 * and a call of the farm on its window that has not returned after the
 * heartbeat timeout is reported by that rank (with its last view of the
 * rank it watches), which aborts the job with MPI_Abort from the watchdog
 * thread.
 *
 * Every function returns UP_OK or a negative UP_E* code, with the detail in
 * up_last_error(). */
#ifndef ULTRAPOOL_MPI_H
#define ULTRAPOOL_MPI_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <ultrapool/pool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Initialises MPI with at least `required` (MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE) and
 * stores the level MPI provides in *provided (may be NULL). When MPI is
 * already initialised, only checks the level.
 * UP_EINVAL when the level provided is below the one required, with a
 * message naming both (MPI stays initialised; the caller finalises it);
 * UP_EINVAL for a required level out of range. */
UP_API int up_mpi_init(int *argc, char ***argv, int required, int *provided);
/** UP_OK when MPI is initialised with at least `required`; UP_EINVAL
 * (naming both levels) otherwise, also when MPI is not initialised. */
UP_API int up_mpi_require(int required);
/** "MPI_THREAD_SINGLE" ... "MPI_THREAD_MULTIPLE"; "unknown" otherwise. */
UP_API const char *up_mpi_level_name(int level);

/** How a farm hands out the index space. */
typedef enum up_mpi_schedule {
    UP_MPI_GUIDED = 0,  /**< chunks of what is left / (2 * ranks), at least min_chunk (default) */
    UP_MPI_DYNAMIC = 1, /**< chunks of min_chunk (both: at most n / ranks + 1) */
    UP_MPI_STATIC = 2   /**< rank r takes the r-th of P consecutive blocks of n / P
                           indexes, the first n % P ranks one more, each lane an
                           equal part of it; no counter, no balancing (the
                           baseline to compare with) */
} up_mpi_schedule;

/** How a farm ended, filled on every rank whenever the ranks got to
 * compare notes (every return but the local UP_EINVAL of check failures
 * that forbid talking to them: no MPI, a thread level too low for the
 * calling thread to take part, no communicator). Made with
 * UP_MPI_REPORT(), which sets size; a report whose size was never set is
 * UP_EINVAL (<ultrapool/pool.h>, "Structs that grow"). */
typedef struct up_mpi_report {
    size_t size;        /**< set by UP_MPI_REPORT(): sizeof(up_mpi_report) as the program
                           was compiled; the farm sets it to the bytes it wrote (fewer
                           when the library is older: the fields past it were not
                           written) */
    int status;         /**< the call's return code                              */
    int rank;           /**< UP_ECANCELED: the failing rank; -1 otherwise        */
    int body_code;      /**< UP_ECANCELED: what the body returned                */
    uint64_t begin;     /**< UP_ECANCELED: the failing chunk [begin, end)        */
    uint64_t end;       /**< UP_ECANCELED: the end of that chunk                 */
    uint64_t items;     /**< indexes this rank ran                               */
    uint64_t chunks;    /**< chunks this rank took from the counter              */
    uint64_t items_all; /**< indexes all ranks ran                              */
} up_mpi_report;
/** An up_mpi_report with its size set and every other field 0, for
 * up_mpi_opts.report: up_mpi_report rep = UP_MPI_REPORT(); a compound
 * literal (C; C++ sets size itself). */
#define UP_MPI_REPORT() ((up_mpi_report){.size = sizeof(up_mpi_report)})

/** Options of a farm (up_mpi_for, up_mpi_reduce); up_mpi_opts_init(), the
 * one way to make one, sets size and the defaults named by each field.
 * A field added after 1.0 takes 0 as its default. */
typedef struct up_mpi_opts {
    size_t size;                   /**< sizeof(up_mpi_opts) as the program was compiled, set
                                      by up_mpi_opts_init()                        */
    up_mpi_schedule schedule;      /**< UP_MPI_GUIDED                                  */
    uint64_t min_chunk;            /**< smallest chunk a rank takes and a lane runs (1);
                                      the last piece of a rank's chunk, and the
                                      end of the space, may be shorter          */
    uint64_t max_chunk;            /**< largest chunk a rank takes, 0: no bound        */
    unsigned lanes;                /**< pool tasks per rank running bodies, 0 .. 4096;
                                      0: the pool's CPUs                           */
    uint64_t timeout_ns;           /**< whole farm, the same on every rank; 0: none.
                                      Past it no chunk starts on any rank and the
                                      call returns UP_ETIMEDOUT                    */
    uint64_t heartbeat_timeout_ns; /**< silence after which a rank counts as dead,
                                      10 ms .. 1 h; 0: UP_MPI_HEARTBEAT_TIMEOUT (a
                                      duration such as 2s, docs/env.md), else 1 s. The
                                      longest of any rank's serves them all        */
    int body_calls_mpi;            /**< 1: bodies call MPI themselves, which needs
                                      MPI_THREAD_MULTIPLE (checked)                */
    up_mpi_report *report;         /**< out, may be NULL; made with UP_MPI_REPORT()      */
} up_mpi_opts;

/** Fills *opts (an up_mpi_opts *): its size and the defaults (above).
 * UP_EINVAL for NULL. A macro: it passes the program's sizeof(up_mpi_opts)
 * to up_mpi_opts_init_sized(). */
#define up_mpi_opts_init(opts) up_mpi_opts_init_sized((opts), sizeof(up_mpi_opts))
/** What up_mpi_opts_init() calls, with size the program's
 * sizeof(up_mpi_opts): fills that many bytes (those of fields this library
 * lacks with 0) and sets opts->size to size. UP_EINVAL for NULL or a size
 * that is no up_mpi_opts'. Call it through up_mpi_opts_init(). */
UP_API int up_mpi_opts_init_sized(up_mpi_opts *opts, size_t size);

/** The body of a farm: runs indexes [begin, end) (never empty) on a lane;
 * 0 on success, anything else fails the farm with that code. */
typedef int (*up_mpi_body)(uint64_t begin, uint64_t end, void *ctx);

/** Collective over comm: every rank calls it with the same n, schedule and
 * timeout. Runs body over [0, n) across the ranks on each rank's pool (a
 * started pool the calling thread is not a worker of). opts may be NULL
 * (defaults). The same return on every rank: UP_OK (every index ran),
 * UP_ECANCELED (a body failed somewhere), UP_ETIMEDOUT, UP_EINVAL (on any
 * rank: opts not made by up_mpi_opts_init() or setting fields this library
 * lacks, a report not made by UP_MPI_REPORT(), NULL pool or body, n above
 * 2^62, min_chunk 0 or above max_chunk,
 * lanes above 4096, a schedule out of range, a call from a task of the same
 * pool, a malformed UP_MPI_HEARTBEAT_TIMEOUT (read only when
 * heartbeat_timeout_ns is 0), ranks that disagree on n,
 * the schedule, the timeout or the reduction's size, a failed MPI call),
 * UP_ENOMEM. A rank that can start no lane (its pool is stopped, its queue
 * stays full for a heartbeat timeout, no memory for accumulators) runs
 * nothing and the other ranks run its share; when they cannot (the static
 * schedule, or no rank has lanes) every rank returns that rank's reason:
 * UP_ESTOPPED, UP_EOVERLOAD or UP_ENOMEM. Without MPI, with a thread level
 * below what the calling thread needs, or with MPI_COMM_NULL, the call
 * returns UP_EINVAL at once, on that rank only. Lanes are started with
 * up_submit, never a waiting submit, so the calling thread never runs a
 * body. Calls on the same communicator must not overlap. */
UP_API int up_mpi_for(MPI_Comm comm, up_pool *pool, uint64_t n, const up_mpi_opts *opts,
                      up_mpi_body body, void *ctx);

/** The body of a reduction farm: adds indexes [begin, end) into acc. */
typedef int (*up_mpi_reduce_body)(uint64_t begin, uint64_t end, void *acc, void *ctx);
/** Folds the accumulator from into into (up_mpi_reduce). */
typedef void (*up_mpi_combine)(void *into, const void *from, void *ctx);

/** The reduction form. The body adds indexes [begin, end) into acc, a lane's
 * accumulator of `size` bytes that starts as a copy of *result (the
 * identity, the same on every rank). combine(into, from, ctx) folds one
 * accumulator into another; it must be associative and commutative,
 * because chunks go to whichever rank asks first. The lanes' accumulators
 * are combined on each rank, then across ranks with MPI_Allreduce over a
 * user operation (combine runs on the calling thread, inside it), and the
 * total is stored in *result on every rank. On failure or timeout *result
 * is left as it was. size 1 .. INT_MAX. */
UP_API int up_mpi_reduce(MPI_Comm comm, up_pool *pool, uint64_t n, const up_mpi_opts *opts,
                         up_mpi_reduce_body body, up_mpi_combine combine, void *ctx, void *result,
                         size_t size);

/** Completes a request from a task without holding its worker: tests the
 * request, and between tests yields (a task on a pooled stack parks and the
 * worker runs other tasks; elsewhere the thread yields, then sleeps in
 * steps of up to 100 us). Calling MPI from pool tasks needs
 * MPI_THREAD_MULTIPLE (checked: UP_EINVAL otherwise; outside pool tasks
 * the main thread may call it with FUNNELED or better). status may be MPI_STATUS_IGNORE.
 * UP_OK; UP_EINVAL for a NULL request, before MPI_Init or after
 * MPI_Finalize, or an MPI error (its text in up_last_error()).
 * up_mpi_wait_timeout returns UP_ETIMEDOUT when the
 * request is still pending after timeout_ns (it stays active). */
UP_API int up_mpi_wait(MPI_Request *req, MPI_Status *status);
/** As up_mpi_wait, with a limit of timeout_ns (see up_mpi_wait). */
UP_API int up_mpi_wait_timeout(MPI_Request *req, MPI_Status *status, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif
