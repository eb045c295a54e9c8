/** @file
 * Sharing the machine with an OpenMP runtime in the same process (part of
 * libultrapool; it needs no OpenMP to build or to run).
 *
 * OpenMP inside pool tasks. A task that opens an OpenMP region (its own
 * \#pragma omp parallel, or a library's: BLAS, FFTW, a solver) would get a
 * team of one thread per CPU, however many of the pool's workers are busy
 * beside it. With up_config.omp_share (UP_OMP_SHARE, on by default) each
 * worker sets, before every task, OpenMP's default team size for regions
 * opened on its thread (omp_set_num_threads, found at run time in the
 * OpenMP runtime the program links) to the CPUs of its shard that the
 * pool's busy workers leave free, counting its own: from one per CPU when
 * the worker is alone down to one (the worker itself) when every CPU has a
 * busy worker, and never above what the runtime would give (its
 * OMP_NUM_THREADS). A region with an explicit num_threads keeps it. In a
 * process without an OpenMP runtime nothing is done. docs/interop.md. */
#ifndef ULTRAPOOL_OMP_H
#define ULTRAPOOL_OMP_H

#include <ultrapool/export.h>
#include <ultrapool/pool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Lends the pool's CPUs to an OpenMP region: runs fn(ctx) on the calling
 * thread while the pool's workers take no task (each finishes the one it
 * runs, then waits without spinning), and gives the CPUs back when fn
 * returns: the workers take the queued tasks again. Threads waiting in
 * groups run none meanwhile either; tasks submitted meanwhile are queued,
 * and a submitter waiting on a full queue may still run some itself. fn
 * runs with OpenMP's default team size (its regions get the CPUs, even
 * when the caller is a worker whose share was smaller). Lends from several
 * threads may overlap: the workers return when the last one ends. fn must
 * not wait for tasks of this pool, which nothing runs meanwhile, nor stop
 * or destroy it: those wait for the lend to end (a pool task that calls
 * up_omp_lend is fine: its worker runs fn). UP_OK, or UP_EINVAL for a
 * NULL pool or fn. */
UP_API int up_omp_lend(up_pool *pool, up_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
