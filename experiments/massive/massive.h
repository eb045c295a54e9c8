/* The massive-waiting experiment (experiments/massive): what the program
 * shares between its driver (massive.c) and its modes (massive_up.c for
 * ultrapool's stackless and stackful waiting, massive_pthread.c for one
 * thread per waiting task). */
#ifndef UP_MASSIVE_H
#define UP_MASSIVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_util.h"

/* One run. The driver fills the options and the check array; a mode's
 * tasks and threads count into started and exited and mark their slot. */
typedef struct massive_run {
    uint64_t n;           /* tasks asked for */
    uint64_t ticker_ns;   /* period of the ticker task */
    uint64_t status_ns;   /* period of the status lines */
    uint64_t hold_ns;     /* how long the tasks are held after the launch */
    size_t stack_bytes;   /* pthread mode: the stack of each thread */
    size_t guard_bytes;   /* pthread mode: its guard area */
    uint64_t pid_reserve; /* pthread mode: thread ids left free (UINT64_MAX: default) */
    uint64_t mem_floor;   /* bytes of MemAvailable below which launching stops */
    uint64_t t0;          /* start of the run (bench_now_ns) */
    /* Every task adds one to its own byte, once, when it runs after the
     * release; the driver counts the bytes left at 0 (lost) and above 1
     * (duplicated) once everything has stopped. */
    _Atomic unsigned char *hits;
    /* Written by the launching thread only (relaxed): tasks accepted. */
    _Atomic uint64_t launched;
    /* Tasks that reached their wait (the pthread and stackful modes), and
     * tasks that ran after the release. Stackless tasks wait from the
     * moment they are accepted, so for them started is launched. */
    bench_done started, exited;
    int started_is_launched;
    /* Tasks that ran because they were cancelled (up_cancelled()) or whose
     * wait failed: the C counterpart of a goroutine's panic. */
    _Atomic uint64_t panicked;
} massive_run;

/* A way of waiting. setup creates what the tasks wait on and starts the
 * ticker; launch accepts up to run->n waiting tasks from the calling
 * thread and returns how many, with a reason when fewer; release lets
 * them all go; teardown waits for the ticker and frees everything, after
 * every task has run (or the drain gave up). */
typedef struct massive_mode {
    const char *name;
    /* 0 when this build cannot run the mode (the runtime lacks it). */
    int available;
    /* Bytes one waiting task is expected to need, for the memory check
     * before the run (a generous estimate, not a measurement). */
    double expected_bytes;
    int (*setup)(massive_run *run, char *why, size_t why_size);
    uint64_t (*launch)(massive_run *run, char *why, size_t why_size);
    void (*release)(massive_run *run);
    void (*teardown)(massive_run *run);
} massive_mode;

extern const massive_mode massive_stackless, massive_stackful, massive_pthread;

/* Whether ultrapool's stackful calls park a task or block its thread in
 * this build: 1 parks, 0 blocks, with a sentence in what. */
int massive_stackful_parks(char *what, size_t what_size);

/* The ticker: each mode calls this from its periodic task or thread with
 * the time of the run; it measures the gap since the previous tick (the
 * first against the start of the ticker), keeps the worst lateness and
 * prints an EXECUTION DELAY line when a tick is more than 10 ms late. */
void massive_ticker_start(massive_run *run);
void massive_tick(massive_run *run);

/* Whether launching should stop for want of memory: 1 (with a reason)
 * when MemAvailable fell below run->mem_floor. Cheap enough to call every
 * few thousand launches. */
int massive_memory_low(const massive_run *run, char *why, size_t why_size);

/* The first number in a file such as /proc/sys/vm/max_map_count; -1 when
 * it cannot be read. */
long long massive_read_number(const char *path);

/* Seconds since the start of the run, for the lines a mode prints. */
double massive_elapsed(const massive_run *run);

#endif
