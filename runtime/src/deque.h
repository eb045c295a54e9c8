/* The work-stealing deque (Chase-Lev, bounded) of both schedulers: a pool
 * worker's deque of nested tasks (up__task) and a region member's deque of
 * task records (the OpenMP-style layer's par_task). The owner pushes and
 * pops at the bottom (newest first); thieves take from the top (oldest
 * first). A full deque is never grown: the caller falls back (to the shard
 * queue, or to running the task at once).
 *
 * Records. A deque stores records of one shape, fixed at init: hdr header
 * words whose last holds the payload size in bytes, then the payload, of
 * at most UP__TASK_WORDS words; size 0 means one payload word, an argument
 * pointer. An up__task is {fn, size} then its words (hdr 2); the layer's
 * record adds its parent frame and dependency node (hdr 4). Only the words
 * a record uses are copied, so a pointer task costs hdr + 1 word stores.
 * Slots are whole cache lines, so a pointer task's words share one line.
 *
 * Invariant. Positions grow without wrapping (64 bits). top <= bottom,
 * except inside the owner's pop, which lowers bottom by one before it
 * reads top. The records are at positions [top, bottom). Only the owner
 * stores bottom and writes slots, and it writes the slot of position i
 * only while i >= bottom, outside the live range. A record at position t
 * leaves the deque exactly once: through the one CAS that moves top from t
 * to t + 1 (a thief's, or the owner's when it pops the last record), or
 * through the owner's pop of t when it lowered bottom to t and then read
 * top < t, where no thief can take it (below).
 *
 * Orderings. The owner's pop stores bottom, then a seq_cst fence, then
 * loads top; a thief loads top and then bottom, both seq_cst. Suppose the
 * owner takes t without a CAS (it read top < t) and a thief also takes t:
 * the thief read top == t, written by a seq_cst CAS that the owner's read
 * of top did not see, so in the total order S the owner's fence comes
 * before that CAS, which comes before the thief's loads; and the thief
 * read the old bottom, not the owner's lowered one, so its load of bottom
 * comes before the owner's fence. The cycle is impossible (C11/C++20 rules
 * for seq_cst fences). This is the pop of Le, Pop, Cohen and Zappa
 * Nardelli (PPoPP 2013), with the thief's fence replaced by seq_cst loads,
 * which cost nothing extra on x86 and keep their order on AArch64.
 *
 * Why a fence and not a seq_cst store and load in pop. Both are correct
 * C11, and on real AArch64 hardware stlr followed by ldar keeps its order.
 * Under qemu-user on an x86-64 host, though, test_deque saw a task taken
 * twice in 4 of 130 runs with the seq_cst pair and in none of 301 runs
 * with the fence: the emulator turns stlr;ldar into a host store and load
 * with no fence between them, which x86 may reorder, while a fence becomes
 * a full host fence. ThreadSanitizer builds use the seq_cst accesses
 * instead (atomic.h: up__store_sb and friends).
 *
 * Publication. Push writes the slot, then stores bottom with release, so a
 * thief that reads the new bottom (seq_cst, hence acquire) reads the slot
 * as written. A thief may also read a bottom that pop stored (relaxed):
 * the slots below it were published by earlier pushes' release stores, and
 * C11's release sequence takes in the owner's later stores to bottom.
 *
 * Torn copies. A thief copies the slot at t with relaxed loads before its
 * CAS and drops the copy when the CAS fails. When it succeeds the copy is
 * the record pushed at t: the owner rewrites slot t & mask only for
 * position t + capacity, which needs top > t first, and the owner learns
 * top with an acquire load (or from an earlier one: top never decreases),
 * so the thief's reads of the slot come before the rewrite. A torn size
 * word is clamped to the slot before it is used. */
#ifndef UP_DEQUE_H
#define UP_DEQUE_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "debug.h"
#include "task.h"

typedef struct up__deque {
    UP_ALIGNED_LINE _Atomic int64_t top;    /* (atomic) thieves CAS; the owner on the last */
    UP_ALIGNED_LINE _Atomic int64_t bottom; /* (owner writes, thieves read) one past the newest */
    int64_t top_cache;                      /* (owner) a value of top it read: top only grows */
    int64_t mask;                           /* (ro) capacity - 1 */
    _Atomic uint64_t *slots;                /* (ro) capacity slots of 1 << shift words */
    unsigned shift;                         /* (ro) log2 of the words per slot */
    unsigned hdr;                           /* (ro) header words of a record */
} up__deque;

enum { UP__DEQUE_OK = 0, UP__DEQUE_EMPTY = 1, UP__DEQUE_FULL = 2, UP__DEQUE_LOST = 3 };

/* capacity: a power of two. 0, or -1 when out of memory. Inline, like the
 * operations, so the layer needs no symbol of the runtime for its deque.
 * Slots are whole cache lines: a record's header and first word (all of a
 * pointer task) share one line, which push writes and pop or steal read. */
static inline int up__deque_init_records(up__deque *d, int64_t capacity, unsigned hdr)
{
    up__assert(capacity > 0 && (capacity & (capacity - 1)) == 0 && hdr >= 1);
    size_t words = hdr + UP__TASK_WORDS, per_line = UP_CACHE_LINE / 8;
    unsigned shift = 0;
    while (((size_t)1 << shift) < (words + per_line - 1) / per_line * per_line)
        shift++;
    size_t bytes = ((size_t)capacity << shift) * sizeof(uint64_t);
    d->slots = aligned_alloc(UP_CACHE_LINE, bytes);
    if (!d->slots)
        return -1;
    memset((void *)d->slots, 0, bytes);
    d->mask = capacity - 1;
    d->shift = shift;
    d->hdr = hdr;
    d->top_cache = 0;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    return 0;
}

static inline void up__deque_free(up__deque *d)
{
    free((void *)d->slots);
    d->slots = NULL;
}

/* The words a record of payload size bytes uses. */
static inline size_t up__deque_record_words(uint64_t size, unsigned hdr)
{
    if (size > 8 * UP__TASK_WORDS) /* only a torn read by a thief that will lose its CAS */
        return hdr + UP__TASK_WORDS;
    return hdr + (size ? (size_t)(size + 7) / 8 : 1);
}

static inline _Atomic uint64_t *up__deque_slot(const up__deque *d, int64_t pos)
{
    return &d->slots[(size_t)(pos & d->mask) << d->shift];
}

/* Owner: one past the newest record. Only the owner stores bottom, so a
 * relaxed load reads its own last store. The layer's frames remember it to
 * tell their descendants from the records of the frames below them. */
static inline int64_t up__deque_bottom(up__deque *d) { return up__load_relaxed(&d->bottom); }

/* Owner: room for position b? top only grows, so the owner's last read of
 * it is a lower bound, and top's line (which thieves CAS) is read again
 * only when the deque looks full. That read is an acquire: a thief's CAS
 * past position b - capacity comes after its read of that slot, which the
 * push is about to overwrite. */
static inline int up__deque_room(up__deque *d, int64_t b)
{
    /* Outside the owner's pop top <= bottom, and b is bottom. */
    up__assert_internal(d->top_cache <= b && b == up__deque_bottom(d));
    if (b - d->top_cache <= d->mask)
        return 1;
    d->top_cache = up__load_acquire(&d->top);
    up__assert_internal(d->top_cache <= b);
    return b - d->top_cache <= d->mask;
}

/* Owner: does the deque hold at least n records? The cached top is a
 * lower bound, so the first test over-counts, and top's line is read again
 * only when it says yes (thieves write that line only when they steal, so
 * it is mostly a cache hit). An acquire, since top_cache serves room too. */
static inline int up__deque_holds(up__deque *d, int64_t n)
{
    int64_t b = up__deque_bottom(d);
    if (b - d->top_cache < n)
        return 0;
    d->top_cache = up__load_acquire(&d->top);
    return b - d->top_cache >= n;
}

/* Any thread: does it look non-empty? Sequentially consistent loads, for
 * the last look of an idle protocol (the pool's, and the layer's). */
static inline int up__deque_nonempty(up__deque *d)
{
    return up__load_seqcst(&d->bottom) > up__load_seqcst(&d->top);
}

/* Words go through memcpy: a record holds pointers, which may not be read
 * or written through a uint64_t lvalue; a constant 8-byte copy is one move. */
static inline uint64_t up__deque_word_of(const void *rec, size_t i)
{
    uint64_t w;
    memcpy(&w, (const unsigned char *)rec + 8 * i, 8);
    return w;
}

/* A push in two steps, for owners that publish differently: write the
 * slot of position b (after up__deque_room(d, b) said yes), then publish.
 * The n words of a record (n <= hdr + UP__TASK_WORDS), for callers that
 * have the words at hand instead of a record (the layer's pointer tasks): */
static inline void up__deque_write_words(up__deque *d, int64_t b, const uint64_t *w, size_t n)
{
    _Atomic uint64_t *s = up__deque_slot(d, b);
    up__assert_internal(n >= d->hdr && n <= d->hdr + UP__TASK_WORDS && b - d->top_cache <= d->mask);
    for (size_t i = 0; i < n; i++)
        up__store_relaxed(&s[i], w[i]);
}

/* ... or a record of hdr header words (the deque's shape): */
static inline void up__deque_write_record(up__deque *d, int64_t b, const void *rec, unsigned hdr)
{
    _Atomic uint64_t *s = up__deque_slot(d, b);
    size_t n = up__deque_record_words(up__deque_word_of(rec, hdr - 1), hdr);
    up__assert_internal(hdr == d->hdr && b - d->top_cache <= d->mask);
    up__assert_internal(up__deque_word_of(rec, hdr - 1) <= 8 * UP__TASK_WORDS);
    for (size_t i = 0; i < n; i++)
        up__store_relaxed(&s[i], up__deque_word_of(rec, i));
}

/* Publishes the slot at b, written before this: a release store, so a
 * thief that reads the new bottom reads the slot as written. */
static inline void up__deque_publish(up__deque *d, int64_t b)
{
    /* The owner publishes the next position, and the deque holds at most
     * capacity records after it (room said yes for b). */
    up__assert_internal(b == up__deque_bottom(d) && b - d->top_cache <= d->mask);
    up__store_release(&d->bottom, b + 1);
}

/* The same, and orders the store before the caller's next load (the first
 * half of the store-buffering step of atomic.h): for an owner that then
 * checks for parked thieves to wake (the layer's idle protocol). Under
 * ThreadSanitizer a seq_cst store, which is also a release. */
static inline void up__deque_publish_sb(up__deque *d, int64_t b)
{
    up__assert_internal(b == up__deque_bottom(d) && b - d->top_cache <= d->mask);
#if defined(UP__TSAN)
    up__store_seqcst(&d->bottom, b + 1);
#else
    up__store_release(&d->bottom, b + 1);
    up__fence_sb();
#endif
}

/* Owner: pushes a record. UP__DEQUE_OK or UP__DEQUE_FULL. sb: publish
 * with the store-buffering step (up__deque_publish_sb), for a pusher that
 * next reads whether anyone is idle. */
static inline int up__deque_push_record_as(up__deque *d, const void *rec, unsigned hdr, int sb)
{
    int64_t b = up__deque_bottom(d);
    if (!up__deque_room(d, b))
        return UP__DEQUE_FULL;
    up__deque_write_record(d, b, rec, hdr);
    if (sb)
        up__deque_publish_sb(d, b);
    else
        up__deque_publish(d, b);
    return UP__DEQUE_OK;
}

static inline int up__deque_push_record(up__deque *d, const void *rec, unsigned hdr)
{
    return up__deque_push_record_as(d, rec, hdr, 0);
}

/* Copies the record in slot s to out: the header and the first payload
 * word (all of a pointer task) written out, a copied payload's other words
 * in a loop. */
static inline void up__deque_read(_Atomic uint64_t *s, void *out, unsigned hdr)
{
    unsigned char *o = out;
    for (size_t i = 0; i <= hdr; i++) {
        uint64_t w = up__load_relaxed(&s[i]);
        memcpy(o + 8 * i, &w, 8);
    }
    uint64_t size = up__deque_word_of(out, hdr - 1);
    if (size > 8) {
        size_t n = up__deque_record_words(size, hdr);
        for (size_t i = hdr + 1; i < n; i++) {
            uint64_t w = up__load_relaxed(&s[i]);
            memcpy(o + 8 * i, &w, 8);
        }
    }
}

/* Owner: the newest record. UP__DEQUE_OK or UP__DEQUE_EMPTY. */
static inline int up__deque_pop_record(up__deque *d, void *out, unsigned hdr)
{
    int64_t b = up__deque_bottom(d) - 1;
    /* Any value of top read is a lower bound of it now: past b, the deque
     * is empty, and the fence can be skipped (an idle owner polls here). */
    if (up__load_relaxed(&d->top) > b)
        return UP__DEQUE_EMPTY;
    up__store_sb(&d->bottom, b);
    up__fence_sb();
    int64_t t = up__load_sb(&d->top);
    /* top <= bottom before the lowering, and at most capacity below it. */
    up__assert_internal(t <= b + 1 && b - t < d->mask + 1);
    if (t < b) {
        up__deque_read(up__deque_slot(d, b), out, hdr);
        return UP__DEQUE_OK; /* more than one left: no thief can reach b */
    }
    int rc = UP__DEQUE_EMPTY;
    if (t == b) { /* the last record: race the thieves for it */
        up__deque_read(up__deque_slot(d, b), out, hdr);
        if (up__cas_strong_seqcst(&d->top, &t, t + 1))
            rc = UP__DEQUE_OK;
    }
    /* Empty now: top == b + 1 (the last one went to us or to a thief). */
    up__store_relaxed(&d->bottom, b + 1);
    return rc;
}

/* Any thread: the oldest record. UP__DEQUE_OK, UP__DEQUE_EMPTY, or
 * UP__DEQUE_LOST when another thread took it first (the deque was not
 * empty: retry). */
static inline int up__deque_steal_record(up__deque *d, void *out, unsigned hdr)
{
    int64_t t = up__load_seqcst(&d->top);
    int64_t b = up__load_seqcst(&d->bottom);
    if (t >= b)
        return UP__DEQUE_EMPTY;
    up__deque_read(up__deque_slot(d, t), out, hdr);
    if (!up__cas_strong_seqcst(&d->top, &t, t + 1))
        return UP__DEQUE_LOST;
    /* The CAS found top still at t, and top only grows, so top was t when
     * b was read: the deque then held b - t records, at most capacity. */
    up__assert_internal(b - t <= d->mask + 1);
    return UP__DEQUE_OK;
}

/* The pool's worker deque: records of up__task. */
#define UP__TASK_HDR 2
_Static_assert(offsetof(up__task, size) == 8 * (UP__TASK_HDR - 1) &&
                   offsetof(up__task, words) == 8 * UP__TASK_HDR,
               "an up__task is fn and size, then its words");

int up__deque_init(up__deque *d, int64_t capacity);  /* a power of two */
int up__deque_push(up__deque *d, const up__task *t); /* owner only */
/* Owner: the pool's nested submit, which then reads the idle word while a
 * parking worker's last look reads bottom: a store-buffering pair, so the
 * push is published with the fence (see up__deque_publish_sb). */
int up__deque_push_sb(up__deque *d, const up__task *t);
int up__deque_pop(up__deque *d, up__task *out);   /* owner only */
int up__deque_steal(up__deque *d, up__task *out); /* any thread; LOST: retry */

#endif
