/* One runtime's versions of the kernels. The sequential, OpenMP and
 * ultrapool variants each define every function below under the same
 * names; an executable links exactly one of them (libgomp and libomp
 * cannot share a process), so the benchmark child and the kernel test are
 * each built once per runtime from the same source.
 *
 * The cutoffs are shared: every variant makes tasks at the same places,
 * so the comparison is between runtimes, not between decompositions.
 * Fib has none on purpose: every call is a task. */
#ifndef UP_PAR_VARIANT_H
#define UP_PAR_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "fib.h"
#include "jacobi.h"
#include "msort.h"
#include "nqueens.h"
#include "sparselu.h"
#include "strassen.h"
#include "taskbench.h"

/* Where the kernels stop making tasks. Every variant reads this one
 * variable, so a change moves every runtime's tasks alike; the benchmark
 * child sets it from --cutoff before the first kernel.
 *   nq_task_rows   nqueens: a task per queen placed on rows
 *                  [0, nq_task_rows); the rest of each branch is counted
 *                  sequentially
 *   msort          merge sort: runs of at most this many elements sort
 *                  sequentially
 *   merge          merges of at most this many elements merge sequentially
 *   strassen_min   Strassen: levels with n >= strassen_min run their seven
 *                  products as tasks, each forming its own operand sums
 *                  (the classical product takes over at n <=
 *                  PAR_STRASSEN_LEAF on every runtime, sequential too) */
typedef struct par_cutoffs {
    int nq_task_rows;
    size_t msort, merge, strassen_min;
} par_cutoffs;
/* About 1 us of sequential work per task for nqueens(13) and merge sort
 * of 2M int32 on the machines measured so far (the granularity of the
 * METG target); Strassen's 128 is the finest its 64 leaf allows. The
 * benchmark's grain experiment sweeps them. */
#define PAR_CUTOFFS_DEFAULT                                                                        \
    {                                                                                              \
        5, 128, 256, 128                                                                           \
    }
extern par_cutoffs par_cut;
#define PAR_STRASSEN_LEAF 64

/* Whether a node makes tasks, one definition for every variant and for
 * the task counts the benchmark reports. nqueens: a placement above the
 * task rows that is not yet a full board. Strassen: a level at or above
 * strassen_min, above the leaf, with an even side. */
static inline int par_nq_spawns(const up_k_nq_state *s)
{
    return s->row < par_cut.nq_task_rows && s->row != s->n;
}
static inline int par_strassen_spawns(size_t n)
{
    return n >= par_cut.strassen_min && n > PAR_STRASSEN_LEAF && n % 2 == 0;
}

/* Where Strassen's combination of the products into C runs as
 * PAR_STRASSEN_JOIN_TASKS tasks of rows: at levels with n >= 4 *
 * strassen_min, every level of tasks but the two lowest (1024 and 512 at
 * the benchmark's 1024 and the default 128). There it takes half a
 * millisecond or more (n = 512 and up, measured here); lower down it takes
 * a tenth of that or less and stays with the task that waited for the
 * products. */
#define PAR_STRASSEN_JOIN_TASKS 8
static inline int par_strassen_join_spawns(size_t n)
{
    return par_strassen_spawns(n) && n >= 4 * par_cut.strassen_min;
}
/* Row range [lo, hi) of join task k at a level of side n. */
static inline void par_strassen_join_range(size_t n, int k, size_t *lo, size_t *hi)
{
    size_t h = n / 2;
    *lo = h * (size_t)k / PAR_STRASSEN_JOIN_TASKS;
    *hi = h * (size_t)(k + 1) / PAR_STRASSEN_JOIN_TASKS;
}

/* "seq", "gomp", "libomp" or "ultrapool". */
extern const char par_runtime[];

/* Before the first kernel: the thread count every parallel region uses.
 * 0, or -1 (with a message on stderr). */
int par_setup(unsigned threads);
void par_teardown(void);
/* Threads the last parallel region really had (a runtime may give fewer
 * than asked for; the benchmark reports it). */
unsigned par_team_size(void);

uint64_t par_fib(int n);
uint64_t par_nqueens(int n);
/* Sorts a[0, n) in place with scratch tmp[0, n). */
void par_msort(int32_t *a, int32_t *tmp, size_t n);
/* Factors m in place; 0, or -1 when a fill-in block could not be made. */
int par_sparselu(up_k_slu *m);
/* c = a b (n x n); 0, or -1 when out of memory. */
int par_strassen(up_k_mat a, up_k_mat b, up_k_mat c, size_t n);
/* sweeps Jacobi sweeps over j, blocks as tasks with dependencies;
 * 0, or -1 when out of memory. */
int par_jacobi(up_k_jacobi *j, int sweeps);

/* Every point of the graph as a task with the pattern's dependencies;
 * 0, or -1 when the runtime refused a task. */
int par_taskbench(const up_k_tb *g);
/* The same graph as Task Bench's loop-based implementations run it: each
 * time step a worksharing loop over the points (static schedule), whose
 * closing barrier orders the steps; no tasks. 0, or -1 on a refusal. */
int par_taskbench_loop(const up_k_tb *g);

/* EPCC-style overhead tests (each thread's work is innerreps delays of
 * delay_iters iterations of up_k_tb_compute()):
 *   reference      each thread runs its delays in a parallel region
 *   parallel_task  each thread creates innerreps tasks of one delay
 *   master_task    the master creates innerreps x threads such tasks
 *   taskwait       each thread creates a task and waits for it, innerreps times
 *   depend         each thread creates a chain of innerreps tasks, each
 *                  inout on the same address (so they run one by one)
 *   taskloop       one thread runs a taskloop of innerreps x threads
 *                  iterations with grainsize 1
 *   parallel_for   the calling thread, outside any region, runs innerreps
 *                  parallel loops of threads iterations, one delay each:
 *                  `#pragma omp parallel for`, up_parallel_for (whose
 *                  team size par_setup sets through UP_NUM_THREADS)
 * overhead per repetition = (test time - reference time) / innerreps. */
typedef enum par_epcc_test {
    PAR_EPCC_REFERENCE,
    PAR_EPCC_PARALLEL_TASK,
    PAR_EPCC_MASTER_TASK,
    PAR_EPCC_TASKWAIT,
    PAR_EPCC_DEPEND,
    PAR_EPCC_TASKLOOP,
    PAR_EPCC_PARALLEL_FOR,
    PAR_EPCC_NTESTS
} par_epcc_test;
/* Runs one test once; 0, or -1 when this runtime has no such test. */
int par_epcc(par_epcc_test test, unsigned innerreps, uint64_t delay_iters);

/* The delay of the EPCC tests: its result goes to a thread-local sink so
 * the compiler cannot drop it. */
extern _Thread_local uint64_t par_sink;
static inline void par_delay(uint64_t iters) { par_sink ^= up_k_tb_compute(iters); }

#endif
