/* The parallel layer's environment: team sizes, the thread limit, the
 * active levels, the runtime schedule and cancellation, from the UP_*
 * variables or, where one is unset, OpenMP's OMP_* ones (env.c; the
 * table of docs/env.md says what each means and which wins). */
#ifndef UP_PAR_ENV_H
#define UP_PAR_ENV_H

#include <stdint.h>
#include <stdio.h>

#include <ultrapool/parallel.h>

/* Levels whose team size a list such as OMP_NUM_THREADS=4,2,1 can set:
 * regions nested deeper run on a team of one anyway (PAR_MAX_LEVELS). */
#define PAR_ENV_LEVELS 8

/* Where one setting came from, for UP_PRINT_CONFIG: the variable read
 * (NULL when neither was set) and its text as it was. */
typedef struct par_env_source {
    const char *name;
    char text[96];
    int bad;     /* an UP_ variable is malformed: every region fails */
    int ignored; /* an OMP_ variable is malformed: the default stays */
} par_env_source;

typedef struct par_env {
    /* 1 when an UP_ variable is malformed: every region fails with
     * UP_EINVAL and error (the first problem; errors holds all of them,
     * one per line, as printed on stderr). A malformed OMP_ variable only
     * adds a line to warnings, printed on stderr too, and its setting
     * keeps the default, as in OpenMP. */
    int bad;
    char error[256];
    char errors[1024];
    char warnings[1024];
    /* Team sizes for nthreads 0 by level (1 = top level); nlevels 0: unset
     * (one thread per CPU). Levels past the list take its last value. */
    unsigned nthreads[PAR_ENV_LEVELS];
    unsigned nlevels;
    unsigned thread_limit; /* 0: none */
    unsigned max_active;   /* UINT32_MAX: no limit but PAR_MAX_LEVELS */
    up_schedule sched;     /* what UP_SCHED_RUNTIME means: never UP_SCHED_RUNTIME */
    int64_t chunk;         /* its chunk, 0: the schedule's default */
    int sched_monotonic;   /* 1 monotonic:, -1 nonmonotonic:, 0 neither (OpenMP's ICV keeps it) */
    int cancellation;      /* 0: up_cancel_taskgroup does nothing */
    par_env_source num_threads_from, thread_limit_from, max_active_from, schedule_from,
        cancellation_from;
} par_env;

/* The defaults of the settings no variable sets. The parallel layer's
 * (no limit on active levels, a static runtime schedule, cancellation on)
 * unless the library is OpenMP's runtime (pragmas/gomp, built with
 * PAR_ENV_OPENMP), which takes OpenMP's as libgomp sets them: one active
 * level (as many as supported when OMP_NUM_THREADS is a list), a dynamic
 * runtime schedule of chunk 1, cancellation off. */
#define PAR_ENV_SUPPORTED_LEVELS 255u /* OpenMP's supported active levels, as libgomp's */

/* Reads every variable through get (up__env, the runtime's one read path,
 * or a test's table) into e. */
typedef const char *(*par_getenv_fn)(const char *name);
void par_env_parse(par_env *e, par_getenv_fn get);

/* The readers of OpenMP's values, this layer's and libgomp's ICVs'
 * (pragmas/gomp/environ.c), spaces around a value allowed. A boolean (the
 * words of up__parse_bool): 0, or -1 when malformed. One whole number in
 * lo..hi and nothing else: 0, -1 when malformed, -2 when out of range. */
int par_env_bool(const char *v, int *out);
int par_env_whole(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* The process's settings, read from the environment on the first call
 * (the problems printed on stderr then, once) and fixed from then on. */
const par_env *par_env_get(void);

/* The team size nthreads 0 asks for at nesting level (1 = top level), 0
 * when no variable sets it. */
unsigned par_env_threads(const par_env *e, unsigned level);

/* The settings as UP_PRINT_CONFIG shows them: variable lines and comment
 * lines saying where each value came from. */
void par_env_print(const par_env *e, FILE *f);

#endif
