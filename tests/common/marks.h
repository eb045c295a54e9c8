/* Run marks, for the exactly-once checks: a byte per id counts the times
 * the task (or item, or record) with that id was taken. At the end a test
 * counts the ids that ran other than once, or other than as often as
 * their submits were accepted (a second set of marks, which a submitter
 * sets to 1 on UP_OK): marks_wrong. A task that carries only its id, as
 * its argument, can be marks_task, which marks the test's set in
 * marks_runs and, where the test also allocates marks_cancelled, notes
 * there each id that ran with up_cancelled() true (a destroy released
 * it). Test code, header-only; needs check.h. */
#ifndef UP_TEST_MARKS_H
#define UP_TEST_MARKS_H

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/wait.h>

#include "check.h"

typedef _Atomic unsigned char test_mark;

/* n marks at 0; the test fails when there is no memory for them. */
static inline test_mark *marks_alloc(uint64_t n)
{
    test_mark *m = calloc(n ? n : 1, 1);
    CHECK(m != NULL);
    return m;
}

static inline void marks_clear(test_mark *m, uint64_t n) { memset((void *)m, 0, n); }

static inline void marks_free(test_mark *m) { free((void *)m); }

/* One more run of id. Relaxed: the counts are checked after a join or a
 * stop that waited for the runs, which orders them before the check. */
static inline void marks_add(test_mark *m, uint64_t id)
{
    atomic_fetch_add_explicit(&m[id], 1, memory_order_relaxed);
}

/* How many of ids [0, n) ran other than want[id] times, or other than
 * once where want is NULL. The first such id is named on stderr. */
static inline uint64_t marks_wrong(test_mark *m, uint64_t n, test_mark *want)
{
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < n; i++) {
        unsigned got = atomic_load(&m[i]), w = want ? atomic_load(&want[i]) : 1;
        if (got != w && wrong++ == 0)
            fprintf(stderr, "id %" PRIu64 " ran %u times, not %u\n", i, got, w);
    }
    return wrong;
}

/* The sum of ids [0, n)'s marks: the runs in all, or, of marks that are
 * 0 or 1 (the accepted submits, the cancelled runs), how many are set. */
static inline uint64_t marks_sum(test_mark *m, uint64_t n)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += atomic_load(&m[i]);
    return sum;
}

/* The test's marks for marks_task: marks_runs always, marks_cancelled
 * where the test looks at cancelled runs (else NULL). */
static test_mark *marks_runs, *marks_cancelled;

/* A task whose argument is its id (uintptr_t). */
static inline void marks_task(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    if (marks_cancelled && up_cancelled())
        atomic_store_explicit(&marks_cancelled[id], 1, memory_order_relaxed);
    marks_add(marks_runs, id);
}

#endif
