/* Chase-Lev work-stealing deque over a fixed array (no growth: a full
 * deque makes the submitter fall back to the shard queue).
 *
 * Invariant. top <= bottom + 1 at all times; the tasks are at positions
 * [top, bottom). Only the owner writes bottom and writes slots; a slot at
 * position i is written only while i >= bottom, i.e. outside the live range.
 * A task at position t leaves the deque exactly once, through the one CAS
 * that moves top from t to t + 1 (a thief's, or the owner's when it takes
 * the last task), or through the owner's pop when t < bottom - 1, where no
 * thief can reach it because thieves only take the element at top and the
 * owner first lowers bottom to announce the take.
 *
 * Orderings. The owner's pop stores bottom, then a seq_cst fence, then
 * loads top; a thief's loads of top and then bottom are seq_cst. Suppose
 * the owner takes b without a CAS (it read top < b) and a thief also takes
 * b: the thief read top == b, written by a seq_cst CAS that the owner's
 * read of top did not see, so in the total order S the owner's fence comes
 * before that CAS, which comes before the thief's loads; and the thief read
 * the old bottom, not the owner's lowered one, so its load of bottom comes
 * before the owner's fence. The cycle is impossible (C11/C++20 rules for
 * seq_cst fences). This is the pop of Le, Pop, Cohen and Zappa Nardelli
 * (PPoPP 2013); their thief's fence is replaced by seq_cst loads, which
 * cost nothing extra on x86 and keep their order on AArch64 and in qemu.
 *
 * Why fences and not seq_cst loads and stores. Both are correct C11, and on
 * real AArch64 hardware stlr followed by ldar keeps its order. Under
 * qemu-user on an x86-64 host, though, test_deque saw a task taken twice in
 * 4 of 130 runs with the seq_cst pair and in none of 301 runs with this
 * code. Our reading: the emulator turns stlr;ldar into a host store and
 * load with no fence between them, which x86 may reorder, while a fence
 * becomes a full host fence. ThreadSanitizer builds use the seq_cst
 * accesses instead (atomic.h, up__store_sb and friends). The payload is published by the
 * release store of bottom in push and read after the thief's seq_cst (so
 * acquire) load of bottom.
 *
 * Slots are atomic words read relaxed: a thief copies the slot before its
 * CAS and discards the copy when the CAS fails. When the CAS succeeds the
 * copy is the task pushed at t, because the owner rewrites slot t & mask
 * only at position t + capacity, which needs top > t first. The push's
 * store of bottom is what publishes the slot (a thief loads bottom before
 * reading the slot). */
#include "deque.h"

#include <stdlib.h>

int up__deque_init(up__deque *d, int64_t capacity)
{
    d->slots = calloc((size_t)capacity, sizeof(up__dslot));
    if (!d->slots)
        return -1;
    d->mask = capacity - 1;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    return 0;
}

void up__deque_free(up__deque *d)
{
    free(d->slots);
    d->slots = NULL;
}

static void slot_write(up__dslot *s, const up__task *t)
{
    up__store_relaxed(&s->fn, (uintptr_t)t->fn);
    up__store_relaxed(&s->size, t->size);
    size_t n = t->size == 0 ? 1 : (size_t)(t->size + 7) / 8;
    for (size_t i = 0; i < n; i++)
        up__store_relaxed(&s->words[i], t->words[i]);
}

static void slot_read(up__dslot *s, up__task *t)
{
    t->fn = (up_fn)up__load_relaxed(&s->fn);
    t->size = up__load_relaxed(&s->size);
    size_t n = t->size == 0 ? 1 : (size_t)(t->size + 7) / 8;
    if (n > UP__TASK_WORDS) /* a torn read by a thief that will lose its CAS */
        n = UP__TASK_WORDS;
    for (size_t i = 0; i < n; i++)
        t->words[i] = up__load_relaxed(&s->words[i]);
}

int up__deque_push(up__deque *d, const up__task *t)
{
    int64_t b = up__load_relaxed(&d->bottom);
    int64_t top = up__load_acquire(&d->top);
    if (b - top > d->mask)
        return UP__DEQUE_FULL;
    slot_write(&d->slots[b & d->mask], t);
    up__store_release(&d->bottom, b + 1);
    return UP__DEQUE_OK;
}

int up__deque_pop(up__deque *d, up__task *out)
{
    int64_t b = up__load_relaxed(&d->bottom) - 1;
    up__store_sb(&d->bottom, b);
    up__fence_sb();
    int64_t t = up__load_sb(&d->top);
    if (t > b) {
        /* Empty: restore bottom. */
        up__store_relaxed(&d->bottom, b + 1);
        return UP__DEQUE_EMPTY;
    }
    slot_read(&d->slots[b & d->mask], out);
    if (t < b)
        return UP__DEQUE_OK; /* more than one left: no thief can reach b */
    /* The last task: race the thieves for it. */
    int won = up__cas_strong_seqcst(&d->top, &t, t + 1);
    up__store_relaxed(&d->bottom, b + 1);
    return won ? UP__DEQUE_OK : UP__DEQUE_EMPTY;
}

int up__deque_steal(up__deque *d, up__task *out)
{
    int64_t t = up__load_seqcst(&d->top);
    int64_t b = up__load_seqcst(&d->bottom);
    if (t >= b)
        return UP__DEQUE_EMPTY;
    slot_read(&d->slots[t & d->mask], out);
    if (!up__cas_strong_seqcst(&d->top, &t, t + 1))
        return UP__DEQUE_LOST;
    return UP__DEQUE_OK;
}
