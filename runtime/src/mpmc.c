/* Bounded MPMC queue in the style of Dmitry Vyukov's array queue, with a
 * close bit in the tail word so shutdown needs no lock on the submit path.
 *
 * Invariant. head and tail are monotonic positions (63 bits, never wrap in
 * practice). The slot for position pos is slots[pos & mask], and its seq
 * word says whose turn it is:
 *   seq == pos          free: the producer that reserves pos may write it;
 *   seq == pos + 1      full: holds the task written at pos, for the
 *                       consumer that reserves pos;
 *   seq == pos + cap    free again, for the producer of the next lap.
 * A producer owns position pos once its CAS moves tail from pos to pos + 1,
 * which it only tries after seeing seq == pos; a consumer owns pos once its
 * CAS moves head from pos to pos + 1 after seeing seq == pos + 1. Exactly one
 * thread owns each position at each end, so every accepted task is taken
 * exactly once.
 *
 * Orderings. The producer writes the task, then stores seq = pos + 1 with
 * release; the consumer reads seq with acquire before reading the task. The
 * consumer reads the task, then stores seq = pos + cap with release; the
 * next producer reads seq with acquire before overwriting. The tail and head
 * CASes are sequentially consistent, not for the queue itself but so the
 * park protocol (worker.c) and the space waiters (submit.c) can pair them
 * with their own sequentially consistent operations (a Dekker handshake).
 *
 * Closing sets bit 63 of tail with one atomic OR; a producer's CAS expects
 * the bit clear, so no reservation can succeed after the close, and every
 * reservation made before it is counted in the final tail. */
#include "mpmc.h"

#include <stdlib.h>

#include "debug.h"

int up__mpmc_init(up__mpmc *q, uint64_t capacity)
{
    up__assert(capacity > 0 && (capacity & (capacity - 1)) == 0);
    q->slots = aligned_alloc(UP_CACHE_LINE, capacity * sizeof(up__slot));
    if (!q->slots)
        return -1;
    q->mask = capacity - 1;
    for (uint64_t i = 0; i < capacity; i++)
        atomic_init(&q->slots[i].seq, i);
    atomic_init(&q->tail, 0);
    atomic_init(&q->head, 0);
    return 0;
}

void up__mpmc_free(up__mpmc *q)
{
    free(q->slots);
    q->slots = NULL;
}

int up__mpmc_push(up__mpmc *q, const up__task *t)
{
    uint64_t pos = up__load_relaxed(&q->tail);
    up__slot *slot;
    for (;;) {
        if (pos & UP__MPMC_CLOSED)
            return UP__MPMC_CLOSED_ERR;
        slot = &q->slots[pos & q->mask];
        uint64_t seq = up__load_acquire(&slot->seq);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (up__cas_weak_seqcst(&q->tail, &pos, pos + 1))
                break;
        } else if (dif < 0) {
            /* The slot still holds a task from one lap ago: full. */
            return UP__MPMC_FULL;
        } else {
            pos = up__load_relaxed(&q->tail);
        }
    }
    /* pos is ours: its slot stays free until we publish it, so no consumer
     * has passed pos, and the one of pos - cap has left it. */
    up__assert_internal(up__load_relaxed(&slot->seq) == pos);
    up__assert_expensive(up__load_relaxed(&q->head) <= pos &&
                         pos - up__load_relaxed(&q->head) <= q->mask);
    slot->task = *t;
    up__store_release(&slot->seq, pos + 1);
    return UP__MPMC_OK;
}

int up__mpmc_pop(up__mpmc *q, up__task *out)
{
    uint64_t pos = up__load_relaxed(&q->head);
    up__slot *slot;
    for (;;) {
        slot = &q->slots[pos & q->mask];
        uint64_t seq = up__load_acquire(&slot->seq);
        int64_t dif = (int64_t)(seq - (pos + 1));
        if (dif == 0) {
            if (up__cas_weak_seqcst(&q->head, &pos, pos + 1))
                break;
        } else if (dif < 0) {
            /* Not yet written (empty, or a producer is mid-write). */
            return UP__MPMC_EMPTY;
        } else {
            pos = up__load_relaxed(&q->head);
        }
    }
    /* pos is ours and full until we free it; its producer moved tail past it. */
    up__assert_internal(up__load_relaxed(&slot->seq) == pos + 1);
    up__assert_expensive((up__load_relaxed(&q->tail) & ~UP__MPMC_CLOSED) > pos);
    *out = slot->task;
    up__store_release(&slot->seq, pos + q->mask + 1);
    return UP__MPMC_OK;
}

/* Batch form of pop: the slots pos .. pos + n - 1 were all seen full
 * (seq == position + 1) before the CAS moved head from pos to pos + n, and
 * only the consumer that owns a position can empty its slot, so after a
 * successful CAS all n are ours and still hold what was seen. */
unsigned up__mpmc_pop_batch(up__mpmc *q, up__task *out, unsigned max)
{
    uint64_t pos = up__load_relaxed(&q->head);
    unsigned n;
    for (;;) {
        n = 0;
        while (n < max) {
            uint64_t seq = up__load_acquire(&q->slots[(pos + n) & q->mask].seq);
            if (seq != pos + n + 1)
                break;
            n++;
        }
        if (n == 0) {
            uint64_t seq = up__load_acquire(&q->slots[pos & q->mask].seq);
            if ((int64_t)(seq - (pos + 1)) < 0)
                return 0;                     /* nothing published at head */
            pos = up__load_relaxed(&q->head); /* head moved on: retry */
            continue;
        }
        if (up__cas_weak_seqcst(&q->head, &pos, pos + n))
            break;
    }
    up__assert_internal(n <= max && n <= q->mask + 1);
    for (unsigned i = 0; i < n; i++) {
        up__slot *slot = &q->slots[(pos + i) & q->mask];
        up__assert_internal(up__load_relaxed(&slot->seq) == pos + i + 1);
        out[i] = slot->task;
        up__store_release(&slot->seq, pos + i + q->mask + 1);
    }
    return n;
}

uint64_t up__mpmc_close(up__mpmc *q)
{
    return up__fetch_or_seqcst(&q->tail, UP__MPMC_CLOSED) & ~UP__MPMC_CLOSED;
}
