/* Exactly-once stress for the work-stealing deque, shared by its tests
 * with the pool's records and with the parallel layer's. One owner pushes
 * ids 0..items-1 in random bursts and after each burst either pops a
 * random part of what it holds or, every other burst on average, pops
 * until it finds the deque empty, so owner and thieves often meet at the
 * last task (the race a pop that skipped its CAS would lose); THIEVES
 * threads steal until the owner is done and the deque is empty. Every id
 * must be taken exactly once. The deque is reached through callbacks, so
 * each test keeps its own task type and its own checks of what it got. */
#ifndef UP_TEST_STEAL_STRESS_H
#define UP_TEST_STEAL_STRESS_H

#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "marks.h"

typedef struct steal_ops {
    int (*push)(void *dq, uint64_t id);   /* 1 pushed, 0 full */
    int (*pop)(void *dq, uint64_t *id);   /* 1 taken, 0 empty */
    int (*steal)(void *dq, uint64_t *id); /* 1 taken, 0 empty, -1 lost a race */
} steal_ops;

typedef struct steal_counts {
    uint64_t stolen, lost, full;
} steal_counts;

enum { STEAL_THIEVES = 3 };

typedef struct steal_run {
    void *dq;
    const steal_ops *ops;
    uint64_t items;
    test_mark *seen;
    _Atomic int owner_done;
    _Atomic int started; /* thieves running: the owner waits for all */
    _Atomic uint64_t stolen, lost;
} steal_run;

static inline void steal_take(steal_run *r, uint64_t id)
{
    CHECK_LT(id, r->items);
    marks_add(r->seen, id);
}

static inline void *steal_thief(void *arg)
{
    steal_run *r = arg;
    atomic_fetch_add(&r->started, 1);
    for (;;) {
        uint64_t id;
        int rc = r->ops->steal(r->dq, &id);
        if (rc > 0) {
            steal_take(r, id);
            atomic_fetch_add(&r->stolen, 1);
        } else if (rc < 0) {
            atomic_fetch_add(&r->lost, 1);
        } else if (atomic_load(&r->owner_done)) {
            return NULL;
        }
    }
}

/* Runs the stress on an empty deque; bursts are 1..max_burst pushes. */
static inline steal_counts steal_stress(void *dq, const steal_ops *ops, uint64_t items,
                                        unsigned max_burst, uint64_t *seed)
{
    steal_run r = {.dq = dq, .ops = ops, .items = items};
    r.seen = marks_alloc(items);
    pthread_t th[STEAL_THIEVES];
    for (int i = 0; i < STEAL_THIEVES; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, steal_thief, &r), 0);
    while (atomic_load(&r.started) < STEAL_THIEVES)
        test_spin(64); /* a run whose thieves start late would test little */
    steal_counts c = {0, 0, 0};
    uint64_t next = 0, id;
    while (next < items) {
        unsigned burst = 1 + test_rand(seed) % max_burst, pops = test_rand(seed) % (burst + 1);
        int drain = test_rand(seed) % 2;
        for (unsigned k = 0; k < burst && next < items; k++) {
            if (ops->push(dq, next))
                next++;
            else
                c.full++;
        }
        /* A pause, so thieves find the burst and take some of it first. */
        test_spin(test_rand(seed) % 256);
        if (drain) {
            while (ops->pop(dq, &id))
                steal_take(&r, id);
        } else {
            for (unsigned k = 0; k < pops; k++)
                if (ops->pop(dq, &id))
                    steal_take(&r, id);
        }
    }
    while (ops->pop(dq, &id))
        steal_take(&r, id);
    atomic_store(&r.owner_done, 1);
    for (int i = 0; i < STEAL_THIEVES; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(ops->steal(dq, &id), 0);
    CHECK_EQ(marks_wrong(r.seen, items, NULL), 0);
    marks_free(r.seen);
    c.stolen = atomic_load(&r.stolen);
    c.lost = atomic_load(&r.lost);
    return c;
}

#endif
