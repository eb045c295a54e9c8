/* What the MPI experiments share (experiments/mpi/): a clock, the
 * calibrated busy loop every task runs, the farm's cost array, the output
 * lines the driver parses, and the usage counters of every run.
 *
 * Output: rank 0 prints one line per result, "RESULT k=v k=v ...", values
 * without spaces, and "NOTE text" lines the driver copies to raw.log. */
#ifndef UP_MB_COMMON_H
#define UP_MB_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

uint64_t mb_now_ns(void);

/* The task body: `iters` steps of a dependent multiply-add chain from
 * `seed`. The chain cannot be vectorised or folded, so its time is
 * proportional to iters and the same in every peer. */
uint64_t mb_spin(uint64_t iters, uint64_t seed);

/* Iterations of mb_spin per microsecond on this CPU (median of several
 * timings). The driver measures it once and passes it to every run, so
 * that every runtime executes the same iteration counts. */
double mb_calibrate(void);

/* CPUs this process may run on (what the launcher bound it to). */
int mb_cpus(void);

/* The farm's costs in iterations: a Pareto(alpha) sample per index from
 * seed, capped at cap times its minimum, times `heavy` in the first half of
 * the index space (a static split puts that half on the first ranks), then
 * scaled so the costs add up to total_iters. Returns a malloc'd array. */
uint64_t *mb_farm_costs(uint64_t n, double alpha, double cap, double heavy, uint64_t seed,
                        uint64_t total_iters);

/* Usage counters around a measured part, summed over the ranks of comm:
 * getrusage (user, system, context switches, faults) and the PAPI
 * hardware presets through experiments/counters.h, reported missing where
 * the build or the machine has none. */
typedef struct mb_usage {
    double t0[6];
} mb_usage;
void mb_usage_begin(mb_usage *u);
/* Collective; rank 0 prints "RESULT exp=<exp> peer=<peer> kind=usage ...". */
void mb_usage_end(mb_usage *u, MPI_Comm comm, const char *exp, const char *peer);

/* Options: "--name value" pairs; the value of name, or def. */
const char *mb_opt(int argc, char **argv, const char *name, const char *def);
double mb_opt_num(int argc, char **argv, const char *name, double def);

/* The CPUs of all ranks together, on every rank. */
int mb_total_cores(MPI_Comm comm);

/* Max of a per-rank value over comm, on rank 0. */
double mb_max(double v, MPI_Comm comm);

#endif
