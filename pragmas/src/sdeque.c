/* Split deque.
 *
 * Invariant. Positions grow without wrapping (64 bits). top <= split <=
 * bottom, except inside the owner's reclaim, where split is lowered by one
 * before the owner checks top. The tasks are at [top, bottom): [top, split)
 * is public, [split, bottom) private. Thieves read top and split only;
 * bottom and the private slots are the owner's alone, so private push and
 * pop are plain operations on the owner's cache lines.
 *
 * A public task at position t leaves the deque exactly once: by the CAS
 * that moves top from t to t + 1 (a thief's, or the owner's when it
 * reclaims the last public task), or by the owner's reclaim of t when it
 * lowered split to t and then saw top < t, in which case no thief can take
 * t: a thief reads top, then split (both seq_cst), then CASes top; the
 * owner stores split, a seq_cst fence, then reads top. To take t the thief
 * must read top == t, written by a CAS the owner's read did not see, so in
 * the total order the owner's fence precedes that CAS and hence the
 * thief's read of split, which therefore sees split <= t: the thief backs
 * off. This is the Chase-Lev pop argument with split in the role of bottom
 * (runtime/src/deque.c spells it out); the fence and its ThreadSanitizer
 * variant are the runtime's store-buffering helpers (atomic.h).
 *
 * Publishing stores split = bottom (a release store, so the slots written
 * before it are visible to a thief that reads the new split). A
 * thief copies the slot at t with relaxed loads before its CAS; the owner
 * rewrites slot t & mask only at position t + capacity, which needs
 * top > t first (read with acquire, or known from an earlier such read:
 * top never decreases), so a successful CAS means the copy is intact. */
#include "sdeque.h"

#include <stdlib.h>
#include <string.h>

#include "atomic.h" /* up__store_sb, up__fence_sb, up__load_sb */

par_sdeque *par_sdeque_new(int64_t capacity)
{
    par_sdeque *d = aligned_alloc(PAR_LINE, sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    size_t bytes = (size_t)capacity * SDQ_STRIDE * sizeof(uint64_t);
    d->slots = aligned_alloc(PAR_LINE, bytes);
    if (!d->slots) {
        free(d);
        return NULL;
    }
    memset((void *)d->slots, 0, bytes);
    d->mask = capacity - 1;
    atomic_init(&d->top, 0);
    atomic_init(&d->split, 0);
    return d;
}

void par_sdeque_free(par_sdeque *d)
{
    if (d) {
        free((void *)d->slots);
        free(d);
    }
}

int par_sdeque_reclaim(par_sdeque *d, par_task *out)
{
    int64_t s = d->split_cache - 1;
    if (atomic_load_explicit(&d->top, memory_order_relaxed) > s)
        return 0;
    up__store_sb(&d->split, s);
    up__fence_sb();
    int64_t t = up__load_sb(&d->top);
    if (t < s) {
        d->split_cache = s;
        d->bottom = s;
        par_slot_read(par_sdeque_slot(d, s), out);
        return 1;
    }
    int took = 0;
    if (t == s) {
        par_slot_read(par_sdeque_slot(d, s), out);
        took = atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                       memory_order_seq_cst);
    }
    /* Empty now: top == s + 1 (the last one went to us or to a thief). */
    d->split_cache = s + 1;
    d->bottom = s + 1;
    atomic_store_explicit(&d->split, s + 1, memory_order_relaxed);
    return took;
}

int par_sdeque_steal(par_sdeque *d, par_task *out)
{
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    int64_t s = atomic_load_explicit(&d->split, memory_order_seq_cst);
    if (t >= s)
        return 0;
    par_slot_read(par_sdeque_slot(d, t), out);
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_seq_cst))
        return -1;
    return 1;
}
