/* A gate that holds the tasks that reach it until the test opens it, for
 * tests that need workers busy for as long as they look: a full pool, a
 * stop that must wait, a helper that must not take a held task. Test
 * code, header-only; needs check.h. */
#ifndef UP_TEST_GATE_H
#define UP_TEST_GATE_H

#include <stdatomic.h>

#include "check.h"

typedef struct test_gate {
    _Atomic int open;
    _Atomic int running; /* tasks that reached the gate, held or let through */
    _Atomic int passed;  /* tasks that went through once it opened */
} test_gate;

/* A task, with its gate as the argument: holds its thread until the gate
 * opens. */
static inline void test_gate_task(void *arg)
{
    test_gate *g = arg;
    atomic_fetch_add(&g->running, 1);
    while (!atomic_load(&g->open))
        test_sleep_ms(1);
    atomic_fetch_add(&g->passed, 1);
}

/* Closes the gate and clears its counts. */
static inline void test_gate_reset(test_gate *g)
{
    atomic_store(&g->open, 0);
    atomic_store(&g->running, 0);
    atomic_store(&g->passed, 0);
}

/* Waits until n threads run the gate task. Tests wait for this before
 * they fill a queue or let a thread help: while a gate task is still
 * queued it takes a slot, and a helper could take it and be held itself.
 * A worker thread may need milliseconds to get a CPU on a loaded machine;
 * 10 s (times the sanitizers' factor) is a hang. */
static inline void test_gate_wait_running(test_gate *g, int n)
{
    WAIT_UNTIL(atomic_load(&g->running) >= n, 10000);
    CHECK_EQ(atomic_load(&g->running), n);
}

static inline void test_gate_open(test_gate *g) { atomic_store(&g->open, 1); }

#endif
