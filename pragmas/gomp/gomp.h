/* GCC's OpenMP ABI (GOMP_* and omp_* entry points) on the parallel layer's
 * team, task, loop and dependency machinery (pragmas/src): the library
 * libgomp.so.1 that ultrapool installs in <libdir>/ultrapool/omp, so that
 * an unmodified gcc -fopenmp binary runs on the pool.
 *
 * Every file of this folder implements one group of entry points and
 * reaches the machinery through par_internal.h; what the ABI needs beyond
 * parallel.h's semantics is added there, not here, so that one scheduler
 * serves both. This header holds what the entry points share: the pool the
 * regions run on and OpenMP's internal control variables (ICVs). */
#ifndef UP_GOMP_H
#define UP_GOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "par_internal.h"

/* The entry points are exported by the version script (libgomp.map);
 * everything else in the library is hidden. */
#define GOMP_API __attribute__((visibility("default")))

/* The pool that a region opened on this thread runs on: the pool of the
 * task that opens it (so that OpenMP code called from a pool task shares
 * the pool's workers), else the process's own OpenMP pool, created on
 * first use and never destroyed (OpenMP threads live until exit). */
up_pool *gomp_pool(void);

/* OpenMP's internal control variables as one thread sees them. OpenMP
 * scopes most of them to a task's data environment; here a thread keeps
 * its own copy, which a region's members take from the thread that opens
 * the region (gomp_icv_inherit), so an omp_set_* call affects the regions
 * its thread opens afterwards, as the specification says. */
typedef struct gomp_icv {
    unsigned nthreads; /* nthreads-var at this level: team size of the next region */
    int dynamic;       /* dyn-var: 0 (libgomp's default) gives regions their full team */
    unsigned max_active_levels;
    int run_sched;           /* run-sched-var: an omp_sched_t value, monotonic flag included */
    int run_chunk;           /* its chunk, 0: the schedule's default */
    unsigned level_from_env; /* levels of OMP_NUM_THREADS consumed by the enclosing regions */
    /* The teams construct this thread runs in (target.c): the team's number
     * and the league's size, 0 outside any teams construct. Here so that
     * the members of a region opened inside a team inherit them. */
    unsigned team_num, num_teams;
} gomp_icv;

/* This thread's ICVs, initialized from the environment on first use. */
gomp_icv *gomp_icv_get(void);
/* Called by a member as it enters a region opened by a thread whose ICVs
 * were parent: copies them, one level down. */
void gomp_icv_inherit(const gomp_icv *parent);

/* teams (target.c): this thread's team number and league size (1
 * outside a teams construct), for omp_get_team_num and omp_get_num_teams. */
unsigned gomp_team_num(void);
unsigned gomp_num_teams(void);

/* safety.c: stops the process, naming it, when another OpenMP runtime is
 * loaded beside this one (when: at load, at the first region ...). */
void gomp_check_alone(const char *when);

/* Stops the process with a message naming what failed: for conditions the
 * ABI has no way to report (GOMP_parallel returns nothing), where running
 * on could compute a wrong answer. */
_Noreturn void gomp_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
