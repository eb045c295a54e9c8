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
#include <stdint.h>

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
} gomp_icv;

/* This thread's ICVs, initialized from the environment on first use. */
gomp_icv *gomp_icv_get(void);
/* Called by a member as it enters a region opened by a thread whose ICVs
 * were parent: copies them, one level down. */
void gomp_icv_inherit(const gomp_icv *parent);

/* GOMP_parallel's path, for the combined constructs: every member runs
 * pre(pre_arg) as it enters the region, before fn(data) (loops.c starts
 * the worksharing construct of GOMP_parallel_loop_* there). */
void gomp_parallel_run(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags,
                       void (*pre)(const void *), const void *pre_arg);

/* Cancellation of worksharing constructs (loops.c), for GOMP_cancel and
 * GOMP_cancellation_point: marks the loop or sections construct the
 * calling thread is in as cancelled (par_team's cancel_ws; no more
 * chunks or sections are handed out), and tells whether it is. A
 * cancelled region is par_team's cancel_parallel, which
 * GOMP_loop_end_cancel and GOMP_sections_end_cancel report. */
void gomp_ws_cancel(void);
bool gomp_ws_cancelled(void);

/* Task reductions on a worksharing construct (reduction(task, ...) on a
 * loop, sections or scope: the reductions argument of GOMP_loop_start,
 * GOMP_sections2_start, GOMP_scope_start ...). Called on every member as
 * it starts the construct: first is NULL on the one member that registers
 * the construct's reductions (it returns before any other member is
 * called), else the registering member's reductions array. The tasks
 * engineer defines it (task reductions, taskgroups); the weak default in
 * loops.c stops the program naming the construct. */
void gomp_ws_task_reductions(uintptr_t *reductions, uintptr_t *first, const char *who);

/* The worksharing constructs' common steps (loops.c), for sections.c
 * and ordered.c. The thread (made on first use; stops when out of
 * memory). */
par_thread *gomp_ws_thread(void);
/* A schedule as GCC passes it (GFS_* with the monotonic flag; runtime
 * reads run-sched-var) as the iterator's schedule and chunk. */
void gomp_ws_resolve(unsigned long sched, uint64_t chunk, int *psched, uint64_t *pchunk);
/* Iterations of the loop from start by incr while below (up) or above
 * end, the values' 64 bits compared as signed or not. */
uint64_t gomp_ws_count(uint64_t start, uint64_t end, uint64_t incr, int up, int is_signed);
/* Starts the thread's construct (th->c.ws_it) over n iterations whose
 * offset k is the value base + k * step, offset n the value last. */
par_ws_iter *gomp_ws_begin(par_thread *th, uint64_t n, int sched, uint64_t chunk, int ordered,
                           uint64_t base, uint64_t step, uint64_t last);
/* The next chunk as values [*s, *e): 0 when none is left or the
 * construct was cancelled. */
int gomp_ws_next(uint64_t *s, uint64_t *e);
/* The reductions and mem arguments of GCC 12's generic starts. */
void gomp_ws_reductions(par_thread *th, par_ws_iter *it, uintptr_t *reductions, const char *who);
void *gomp_ws_mem(par_ws_iter *it, void **mem, const char *who);
/* Leaves the construct, then the barrier if asked; _cancel also says
 * whether the region was cancelled. */
void gomp_ws_finish(int barrier);
bool gomp_ws_finish_cancel(void);

/* Stops the process with a message naming what failed: for conditions the
 * ABI has no way to report (GOMP_parallel returns nothing), where running
 * on could compute a wrong answer. */
_Noreturn void gomp_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
