/* Task deque (Chase-Lev, with tasks stored by value).
 *
 * Invariant. Positions grow without wrapping (64 bits). top <= bottom,
 * except inside the owner's pop, where bottom is lowered by one before the
 * owner reads top. The tasks are at [top, bottom). Only the owner stores
 * bottom and writes slots; thieves read top and bottom and CAS top.
 *
 * A task at position t leaves the deque exactly once: by the CAS that
 * moves top from t to t + 1 (a thief's, or the owner's when it pops the
 * last task), or by the owner's pop of t when it lowered bottom to t and
 * then read top < t. In that case no thief can take t: a thief reads top,
 * then bottom (both seq_cst), then CASes top; the owner stores bottom, a
 * seq_cst fence, then reads top. To take t the thief must read top == t,
 * written by a CAS that the owner's read did not see, so in the total
 * order the owner's fence precedes that CAS and hence the thief's read of
 * bottom, which therefore sees bottom <= t: the thief finds it empty. (The
 * runtime's worker deque, runtime/src/deque.c, makes the same argument;
 * the fence and its ThreadSanitizer variant are the store-buffering
 * helpers of atomic.h.)
 *
 * Push writes the slot, then stores bottom with release, so a thief that
 * reads the new bottom reads the slot as written. A thief copies the slot
 * at t with relaxed loads before its CAS; the owner rewrites slot
 * t & mask only for position t + capacity, which needs top > t first (read
 * with acquire, or known from an earlier such read: top never decreases),
 * so a successful CAS means the copy is intact. A thief may also read a
 * bottom that pop stored (relaxed); the slots below it were published by
 * the pushes' release stores, and C11's release sequence (5.1.2.4) takes
 * in the owner's later stores to bottom, so the thief's load of it still
 * sees them. */
#include "task_deque.h"

#include <stdlib.h>
#include <string.h>

#include "up_layer.h" /* up__store_sb, up__fence_sb, up__load_sb */

par_deque *par_deque_new(int64_t capacity)
{
    par_deque *d = aligned_alloc(PAR_LINE, sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    size_t bytes = (size_t)capacity * PAR_DQ_STRIDE * sizeof(uint64_t);
    d->slots = aligned_alloc(PAR_LINE, bytes);
    if (!d->slots) {
        free(d);
        return NULL;
    }
    memset((void *)d->slots, 0, bytes);
    d->mask = capacity - 1;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    return d;
}

void par_deque_free(par_deque *d)
{
    if (d) {
        free((void *)d->slots);
        free(d);
    }
}

int par_deque_pop(par_deque *d, par_task *out)
{
    int64_t b = par_deque_bottom(d) - 1;
    /* Any value of top read is a lower bound of it now: past b, the deque
     * is empty, and the fence can be skipped. */
    if (atomic_load_explicit(&d->top, memory_order_relaxed) > b)
        return 0;
    up__store_sb(&d->bottom, b);
    up__fence_sb();
    int64_t t = up__load_sb(&d->top);
    if (t < b) {
        par_slot_read(par_deque_slot(d, b), out);
        return 1;
    }
    int took = 0;
    if (t == b) { /* the last task: the owner races the thieves for it */
        par_slot_read(par_deque_slot(d, b), out);
        took = atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                       memory_order_seq_cst);
    }
    /* Empty now: top == b + 1 (the last one went to us or to a thief). */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    return took;
}

int par_deque_steal(par_deque *d, par_task *out)
{
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_seq_cst);
    if (t >= b)
        return 0;
    par_slot_read(par_deque_slot(d, t), out);
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_seq_cst))
        return -1;
    return 1;
}
