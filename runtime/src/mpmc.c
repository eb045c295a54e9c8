/* The shard's task queue: the ring of ring.h (its comment has the
 * invariant, the memory orders and the close), with a constant shape, so
 * the compiler emits the code it would for a queue written for up__slot:
 * 64-byte slots indexed by a mask, the task copied as an aligned struct,
 * sequence numbers that count positions (the capacity is at least 2). */
#include "mpmc.h"

#include <stddef.h>
#include <stdlib.h>

#include "debug.h"

#define SHAPE                                                                                      \
    ((up__ring_shape){.stride = sizeof(up__slot),                                                  \
                      .elem_off = offsetof(up__slot, task),                                        \
                      .elem_size = sizeof(up__task),                                               \
                      .align = _Alignof(up__task),                                                 \
                      .seq_shift = 0,                                                              \
                      .wrap = UP__RING_WRAP_MASK})

_Static_assert(sizeof(up__slot) == UP_CACHE_LINE, "a task slot is one cache line");
_Static_assert(offsetof(up__slot, task) % _Alignof(up__task) == 0,
               "the task is aligned in its slot");

int up__mpmc_init(up__mpmc *q, uint64_t capacity)
{
    up__assert(capacity >= 2 && (capacity & (capacity - 1)) == 0);
    void *slots = aligned_alloc(UP_CACHE_LINE, capacity * sizeof(up__slot));
    if (!slots)
        return -1;
    up__ring_init(&q->ring, slots, capacity, SHAPE);
    return 0;
}

void up__mpmc_free(up__mpmc *q)
{
    free(q->ring.slots);
    q->ring.slots = NULL;
}

int up__mpmc_push(up__mpmc *q, const up__task *t) { return up__ring_try_push(&q->ring, SHAPE, t); }

int up__mpmc_pop(up__mpmc *q, up__task *out) { return up__ring_try_pop(&q->ring, SHAPE, out); }

unsigned up__mpmc_pop_batch(up__mpmc *q, up__task *out, unsigned max)
{
    return up__ring_try_pop_batch(&q->ring, SHAPE, out, max);
}

uint64_t up__mpmc_close(up__mpmc *q) { return up__ring_close(&q->ring) & ~UP__MPMC_CLOSED; }
