/* The workloads of the cross-library benchmark: each is a kernel from
 * kernels/ wrapped as one task that checks its own result cheaply (a
 * compare against a value its verifier established), so a peer that ran a
 * task wrongly, or not at all, is caught. */
#ifndef UP_BENCH_WORKLOADS_H
#define UP_BENCH_WORKLOADS_H

#include <stdint.h>

typedef struct workload {
    const char *name;  /* the command-line name, e.g. "sha256-1k"      */
    const char *title; /* the table's name, e.g. "SHA256 1 kB"         */
    void (*task)(void);
} workload;

extern const workload up_workloads[];
extern const unsigned up_nworkloads;

/* The sleeping workloads come in two kinds. sleep-1us and sleep-50ms
 * block their thread in clock_nanosleep (up_k_sleep_ns) on every peer.
 * sleep-1us-wait and sleep-50ms-wait sleep as long through the peer's own
 * wait when it has one (ultrapool installs up_sleep_ns here), so a
 * runtime that parks a sleeping task is measured doing so; a peer that
 * installs nothing runs the blocking kernel in these rows too. */
typedef void (*workload_wait_fn)(uint64_t ns);
/* Installs the wait the -wait workloads call (NULL: the blocking
 * kernel again). Called by a peer's init, before any task runs. */
void workload_set_wait(workload_wait_fn fn);
/* 1 when a task since the last workload_reset slept through an installed
 * wait rather than the blocking kernel. */
int workload_waited(void);

/* Looks a workload up by name; NULL when unknown. */
const workload *workload_find(const char *name);
/* Runs every kernel's verifier; returns 0, or -1 after printing which
 * failed. */
int workloads_verify(void);
/* Clears the wrong-result flag and the mutex counter before a run. */
void workload_reset(void);
/* After a run of n tasks: 0 when no task saw a wrong result and the mutex
 * counter (for the mutex workload) equals n; else -1 and a reason. */
int workload_check(const workload *w, uint64_t n, const char **why);

#endif
