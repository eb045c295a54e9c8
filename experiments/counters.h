/* Counters around a benchmark run, read through PAPI: the hardware presets
 * (cycles, instructions, cache and branch misses) where the machine has
 * hardware counters, and the pool's Software Defined Events
 * (sde:::ULTRAPOOL::*) where the process has them. A counter PAPI cannot
 * give is reported as missing, never as zero. Without PAPI
 * (counters_null.c) everything is missing. CMake picks the implementation
 * (UP_HAVE_PAPI). */
#ifndef UP_BENCH_COUNTERS_H
#define UP_BENCH_COUNTERS_H

#define COUNTERS_HW  6
#define COUNTERS_SDE 11

extern const char *const counters_hw_names[COUNTERS_HW];   /* PAPI preset names */
extern const char *const counters_sde_names[COUNTERS_SDE]; /* after sde:::ULTRAPOOL:: */

typedef struct counter_values {
    long long v[COUNTERS_SDE > COUNTERS_HW ? COUNTERS_SDE : COUNTERS_HW];
    int have[COUNTERS_SDE > COUNTERS_HW ? COUNTERS_SDE : COUNTERS_HW];
} counter_values;

/* Initialises PAPI; safe to call once per process before any thread of a
 * peer exists. */
void counters_init(void);
/* The PAPI version ("7.0.0.0"), or "none". */
const char *counters_papi_version(void);
/* Hardware presets, counted in every thread created after the start
 * (inherited), so start before the peer creates its threads. */
void counters_hw_start(void);
void counters_hw_stop(counter_values *out);
/* Why hardware counters are missing ("" when they are not). */
const char *counters_hw_note(void);
/* The pool's SDE counters: deltas between start and stop. */
void counters_sde_start(void);
void counters_sde_stop(counter_values *out);

#endif
