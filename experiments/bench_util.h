/* Small pieces every benchmark program shares: a clock, a completion
 * counter striped over cache lines (so counting finished tasks does not
 * itself become the bottleneck), a seeded shuffle, and CPU counts. The
 * statistics are in bench_stats.h. */
#ifndef UP_BENCH_UTIL_H
#define UP_BENCH_UTIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

uint64_t bench_now_ns(void);
void bench_sleep_ns(uint64_t ns);

/* Each thread that finishes tasks bumps a counter of its own, on its own
 * cache line, with a plain load and store; the waiter sums them. Counters
 * below BENCH_OWNED are handed out explicitly (bench_done_claim, one per
 * submitter of a run); long-lived threads (workers of the pools) take one
 * of the rest on first use. Threads beyond that share a small set of
 * counters that are only ever updated with atomic adds, so an owned
 * counter never sees two writers. */
#define BENCH_OWNED   512
#define BENCH_STRIPES 1024
#define BENCH_SHARED  64
typedef struct bench_done {
    struct {
        _Alignas(64) _Atomic uint64_t n;
    } stripe[BENCH_STRIPES + BENCH_SHARED];
} bench_done;

void bench_done_reset(bench_done *d);
/* Gives the calling thread counter i (< BENCH_OWNED) for the next run. */
void bench_done_claim(unsigned i);
/* Called by each finished task. */
void bench_done_add(bench_done *d);
uint64_t bench_done_sum(bench_done *d);
/* Polls until the sum reaches target; returns the time it did (ns). */
uint64_t bench_done_wait(bench_done *d, uint64_t target);

uint64_t bench_rand(uint64_t *state);
void bench_shuffle(unsigned *v, size_t n, uint64_t *state);

unsigned bench_cpus(void); /* CPUs this process may run on */

/* Parses "1,2,100" into out (at most max); returns the count or -1. */
int bench_parse_list(const char *s, unsigned *out, int max);

#endif
