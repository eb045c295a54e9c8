/* Small pieces every benchmark program shares: a clock, a completion
 * counter (striped over cache lines by default, so counting finished tasks
 * does not itself become the bottleneck; or one shared latch, as programs
 * count), a seeded shuffle, and CPU counts. The statistics are in
 * bench_stats.h. */
#ifndef UP_BENCH_UTIL_H
#define UP_BENCH_UTIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

uint64_t bench_now_ns(void);
void bench_sleep_ns(uint64_t ns);

/* How finished tasks are counted (docs/benchmarks.md, "Counting finished
 * tasks").
 *
 * striped (the default): each thread that finishes tasks bumps a counter
 * of its own, on its own cache line, with a plain load and store; the
 * waiter sums them. Counters below BENCH_OWNED are handed out explicitly
 * (bench_done_claim, one per submitter of a run); long-lived threads
 * (workers of the pools) take one of the rest on first use. Threads beyond
 * that share a small set of counters that are only ever updated with
 * atomic adds, so an owned counter never sees two writers. No two
 * finishing threads share a cache line: the cost of the count is left out
 * of the measurement.
 *
 * shared: the counting a program does when it waits for a batch of tasks
 * (a latch, Go's WaitGroup, OpenMP's taskgroup): bench_done_arm sets one
 * counter, alone on its cache line, to the batch's size; every finished
 * task decrements it with one acq_rel fetch-sub; the waiter waits for it
 * to reach zero. Every finishing thread writes that one line, so the
 * measurement includes what the line's traffic costs the peer. */
typedef enum bench_completion {
    BENCH_COMPLETION_STRIPED = 0,
    BENCH_COMPLETION_SHARED = 1,
} bench_completion;

#define BENCH_OWNED   512
#define BENCH_STRIPES 1024
#define BENCH_SHARED  64 /* the counters threads beyond BENCH_STRIPES share */
typedef struct bench_done {
    struct {
        _Alignas(64) _Atomic uint64_t n;
    } stripe[BENCH_STRIPES + BENCH_SHARED];
    /* The shared mode's latch: the tasks of the armed batch that have not
     * finished (below zero: some finished twice). */
    struct {
        _Alignas(64) _Atomic int64_t left;
    } latch;
    /* Set before a run, only read while tasks run: on a line of their own,
     * away from the latch's, so reading them costs the tasks nothing. */
    _Alignas(64) bench_completion mode;
    uint64_t armed;
} bench_done;

/* "striped" or "shared" into *mode: 0, or -1 for any other text. */
int bench_completion_parse(const char *text, bench_completion *mode);
const char *bench_completion_name(bench_completion mode);

/* Chooses how d counts, before any task of a run can count (the default,
 * a zeroed bench_done, is striped). */
void bench_done_set_mode(bench_done *d, bench_completion mode);
/* Zeroes every counter and disarms the latch; a striped count may then
 * start. */
void bench_done_reset(bench_done *d);
/* bench_done_reset, then the latch holds tasks: starts a batch of that
 * many tasks in either mode (the shared mode needs it). */
void bench_done_arm(bench_done *d, uint64_t tasks);
/* Gives the calling thread counter i (< BENCH_OWNED) for the next run. */
void bench_done_claim(unsigned i);
/* Called by each finished task. */
void bench_done_add(bench_done *d);
/* The tasks counted since the reset or arm, in either mode: the stripes'
 * sum plus the armed batch's decrements, so a task counted twice shows as
 * one too many. */
uint64_t bench_done_sum(bench_done *d);
/* Polls every millisecond until target tasks are counted (striped) or the
 * latch is down to zero (shared; target is then the armed size); returns
 * the time it saw it (ns). */
uint64_t bench_done_wait(bench_done *d, uint64_t target);

uint64_t bench_rand(uint64_t *state);
void bench_shuffle(unsigned *v, size_t n, uint64_t *state);

unsigned bench_cpus(void); /* CPUs this process may run on */

/* Parses "1,2,100" into out (at most max); returns the count or -1. */
int bench_parse_list(const char *s, unsigned *out, int max);

#endif
