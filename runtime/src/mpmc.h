/* A bounded multi-producer multi-consumer queue of task slots (a shard's
 * queue). Lock-free on both ends: the ring of ring.h, whose comment has
 * the invariant, with the task queue's constant shape (mpmc.c). */
#ifndef UP_MPMC_H
#define UP_MPMC_H

#include "atomic.h"
#include "ring.h"
#include "task.h"

/* Set in the tail word once the queue is closed: no enqueue succeeds after. */
#define UP__MPMC_CLOSED UP__RING_CLOSED

/* The layout of a slot (the shape's stride, offset and size): one cache line. */
typedef struct up__slot {
    UP_ALIGNED_LINE _Atomic uint64_t seq; /* see the invariant in ring.h */
    up__task task;                        /* written by the producer that owns the slot */
} up__slot;

typedef struct up__mpmc {
    up__ring ring; /* slots, mask (capacity - 1), tail, head */
} up__mpmc;

enum {
    UP__MPMC_OK = UP__RING_OK,
    UP__MPMC_FULL = UP__RING_FULL,
    UP__MPMC_EMPTY = UP__RING_EMPTY,
    UP__MPMC_CLOSED_ERR = UP__RING_CLOSED_ERR
};

int up__mpmc_init(up__mpmc *q, uint64_t capacity); /* capacity: a power of two, 2 or more */
void up__mpmc_free(up__mpmc *q);
int up__mpmc_push(up__mpmc *q, const up__task *t);
int up__mpmc_pop(up__mpmc *q, up__task *out);
/* Takes up to max consecutive published tasks with one CAS; returns how
 * many (0 when none is ready). */
unsigned up__mpmc_pop_batch(up__mpmc *q, up__task *out, unsigned max);
/* Closes the queue; returns the final tail (count of accepted tasks). */
uint64_t up__mpmc_close(up__mpmc *q);

/* True while a task is reserved or published and not yet taken. The loads
 * are sequentially consistent: the park protocol pairs them with the
 * producers' sequentially consistent tail CAS. */
static inline int up__mpmc_nonempty(up__mpmc *q)
{
    uint64_t tail = up__load_seqcst(&q->ring.tail) & ~UP__MPMC_CLOSED;
    return tail != up__load_seqcst(&q->ring.head);
}

static inline uint64_t up__mpmc_accepted(up__mpmc *q)
{
    return up__load_relaxed(&q->ring.tail) & ~UP__MPMC_CLOSED;
}

static inline uint64_t up__mpmc_taken(up__mpmc *q) { return up__load_relaxed(&q->ring.head); }

#endif
