/* The runner side of the cross-library benchmark: one process runs one
 * cell (peer, workload, submitter threads S, task count) and prints one
 * machine-readable line. Each runner executable (one per peer family, as
 * libgomp and libomp cannot share a process) supplies its peers and calls
 * harness_main().
 *
 *   runner --list
 *   runner --peer P --workload W --submitters S --calibrate SECONDS [--completion C]
 *   runner --peer P --workload W --submitters S --tasks N [--completion C]
 *
 * A measured run: the peer is created, a warm-up of a tenth of the tasks
 * runs uncounted, then S submitter threads are started and wait at a
 * gate; the clock starts once all are ready and before any submits, each
 * submits its share, and the clock stops when every task has finished.
 * Finished tasks are counted by bench_done (bench_util.h) as --completion
 * says: striped (the default), a counter per thread, or shared, one latch
 * every task decrements; the result line records which. Peers that make
 * their own producing threads (OpenMP, the loop) run the whole batch
 * themselves instead. */
#ifndef UP_BENCH_HARNESS_H
#define UP_BENCH_HARNESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*harness_fn)(void *arg);

typedef struct peer {
    const char *name;
    const char *about; /* one line for --list */
    /* 1: S does not change what the peer runs (one producer, the loop);
     * the driver runs it once per workload and round. */
    int s_independent;
    /* Creates the peer for this many submitters on this many cores. */
    int (*init)(unsigned submitters, unsigned cores);
    /* External submission, called from the submitter threads; NULL for
     * peers that run the batch on their own threads (run_all). */
    void (*submit)(harness_fn fn, void *arg);
    /* Runs tasks calls of fn with the given submitters; sets *t0 once its
     * producers are ready and before the first task is created; returns
     * when all have run. */
    void (*run_all)(uint64_t tasks, unsigned submitters, harness_fn fn, uint64_t *t0);
    /* Waits for everything and frees the peer. */
    void (*fini)(void);
    /* The peak number of worker threads, when the peer knows it exactly
     * (NULL: sampled from the process's thread count). */
    unsigned (*workers_peak)(void);
    /* The library's version ("" for none). */
    const char *(*version)(void);
    /* 1: the peer is ultrapool, whose counters the process exports as
     * sde:::ULTRAPOOL::* events; they must match the run. */
    int exports_sde;
    /* Waits until the peer's own counters have counted every task that
     * ran (NULL: nothing to wait for). A task's completion reaches the
     * harness before its worker counts it executed: without this the
     * warm-up's last tasks could land in the measured run's counters. */
    void (*settle)(void);
} peer;

/* Parses the arguments, runs the cell and prints the result line. Returns
 * the process exit code. runner is the executable's family name. */
int harness_main(int argc, char **argv, const char *runner, const peer *const *peers,
                 unsigned npeers);

/* The number of CPUs this process may use. */
unsigned harness_cores(void);

#ifdef __cplusplus
}
#endif
#endif
