/* The one bounded multi-producer multi-consumer ring of the runtime: the
 * shard's task queue (mpmc.c) and the channels (chan.c) are both this
 * ring, each with its own shape. An array queue in the style of Dmitry
 * Vyukov's, with a sequence word per slot and a close bit in the tail word.
 *
 * A shape says what a slot looks like and how positions map to slots:
 *   stride     bytes from one slot to the next; every slot begins with its
 *              sequence word, an _Atomic uint64_t at offset 0;
 *   elem_off   where the element sits in its slot;
 *   elem_size  bytes copied in by a push and out by a pop (0: none);
 *   align      the alignment, a power of two, that both the element in its
 *              slot and the caller's buffer are known to have: the copy
 *              tells the compiler, so that on a strict-alignment target a
 *              constant-size copy is word moves, not a call to memcpy;
 *   seq_shift  0: sequence numbers count positions (capacity 2 or more);
 *              1: positions doubled, which any capacity, 1 included, needs;
 *   wrap       UP__RING_WRAP_MASK: the capacity is a power of two and the
 *              slot of pos is pos & mask; UP__RING_WRAP_ANY: any capacity,
 *              pos & mask for a power of two, else pos % capacity.
 * The functions below are always inlined and take the shape by value: a
 * caller that passes a constant (the task queue) gets code specialised to
 * it, as if written for its slot type; one whose shape is chosen at run
 * time (a channel, with its element size) builds it from the sizes that
 * up__ring_init recorded.
 *
 * Invariant. head and tail are positions that only grow, below 2^63 (bit
 * 63 of the tail word is the closed flag). With k = seq_shift and cap the
 * capacity, position pos lives in slot index(pos), and that slot's
 * sequence word says whose turn it is:
 *   seq == pos << k              free: the producer that reserves pos may
 *                                write the element;
 *   seq == (pos << k) + 1        full: holds the element written at pos,
 *                                for the consumer that reserves pos;
 *   seq == (pos + cap) << k      free again, for the producer of pos + cap,
 *                                the next position in the same slot.
 * A producer owns pos once its CAS moves tail from pos to pos + 1, which it
 * tries only after seeing seq == pos << k; a consumer owns pos once its CAS
 * moves head from pos to pos + 1 after seeing seq == (pos << k) + 1. The
 * CAS succeeds for one thread per position at each end, so each position
 * is written once and read once: every element pushed is popped exactly
 * once, and positions are taken in order at each end (FIFO). Only the owner changes a slot's word,
 * and only forward: free -> full by the producer of pos, full -> free for pos + cap by the consumer
 * of pos. So tail - head is at most cap, the producer of pos + cap waits for the consumer of pos
 * (its push says full) and the consumer of pos for the producer of pos (its pop says empty, also
 * while that producer is between its CAS and its store). Why doubling for capacity 1: with k = 0
 * the full mark of pos, pos + 1, equals the free mark of pos + cap when cap is 1, and the next
 * producer would overwrite an element not yet taken. With k = 1 the three marks 2 pos, 2 pos + 1
 * and 2 (pos + cap) differ for every cap >= 1; with k = 0 they differ for cap >= 2.
 *
 * Memory orders. The producer copies the element in, then stores the full
 * mark with release; a consumer loads the word with acquire before it
 * copies the element out, so it reads what was written. The consumer
 * copies the element out, then stores the next lap's free mark with
 * release; the producer of pos + cap loads the word with acquire before
 * it overwrites the slot, so a slow consumer's read is over before the
 * write. That pair of orders on the slot's own word is all the data needs.
 * The loads of head and tail are relaxed: they are only guesses, which the
 * CAS checks. For the ring alone the CASes could be relaxed too (their
 * atomicity gives the ownership; the slot word carries the ordering), but
 * they are sequentially consistent so that the users can pair them with
 * their own sequentially consistent operations in a Dekker handshake: the
 * pool's park protocol (worker.c) and space waiters (submit.c), and the
 * channels' sleeping senders and receivers (chan.c).
 *
 * Wrap and ABA. Positions are 64-bit and never wrap: a ring takes at most
 * 2^63 - 1 pushes (at one per nanosecond, 292 years; the push that moved
 * tail to 2^63 would make the ring read as closed). So a CAS, which
 * compares whole positions, cannot be fooled by a later lap: a thread that
 * read tail == pos and was then held off for any number of laps fails its
 * CAS, as tail never returns to pos. Ownership comes from that CAS alone.
 * And pos % cap stays continuous from one position to the next, which a
 * wrap at 2^64 would break for a capacity that is not a power of two.
 *   The sequence words are compared by the signed difference between the
 * word and the mark expected, taken modulo 2^64, so the marks themselves
 * may pass 2^63 and wrap (with k = 1 they pass 2^63 at position 2^62 and
 * the free marks of the last lap below position 2^63 wrap past 2^64;
 * test_ring starts rings at both). A difference of 0 is exact: the marks
 * of two positions differ modulo 2^64, as positions differ by less than
 * 2^63. For a guess of pos within a lap or so of the truth the difference
 * lies within +-(cap << k), at most 2^32 (a channel holds at most 2^31), and
 * its sign is right: below 0 the slot is a lap behind (push: full; pop:
 * empty, or its producer is between its CAS and its store), above 0
 * another thread has taken pos and the guess is read again. A guess older
 * than 2^(63 - k) positions could get the wrong sign, which turns a read
 * again into a spurious full or empty (the caller tries again or waits,
 * as after any full or empty), never into an ownership.
 *
 * Closing sets bit 63 of tail with one atomic OR; a producer's CAS expects
 * the bit clear, so no reservation succeeds after the close, and every one
 * made before it is below the final tail, where consumers still find it.
 *
 * Batch pop: the slots of pos .. pos + n - 1 were all seen full (each word
 * loaded with acquire) before one CAS moved head from pos to pos + n. Only
 * the consumer that owns a position empties its slot, and head never
 * returns to pos, so after that CAS all n are ours and still hold what was
 * seen. n is at most the capacity whatever the caller asks for: the slot
 * of pos + cap is the slot of pos, whose word is pos's mark, not the one
 * of pos + cap. */
#ifndef UP_RING_H
#define UP_RING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "atomic.h"
#include "debug.h"

#if defined(__GNUC__)
#define UP__RING_INLINE static inline __attribute__((always_inline))
#else
#define UP__RING_INLINE static inline
#endif

/* Set in the tail word once the ring is closed: no push succeeds after. */
#define UP__RING_CLOSED (UINT64_C(1) << 63)

enum { UP__RING_WRAP_MASK = 0, UP__RING_WRAP_ANY = 1 };
enum { UP__RING_OK = 0, UP__RING_FULL = 1, UP__RING_EMPTY = 2, UP__RING_CLOSED_ERR = 3 };

typedef struct up__ring_shape {
    size_t stride;      /* bytes per slot; the sequence word is at offset 0 */
    size_t elem_off;    /* the element's offset in its slot */
    size_t elem_size;   /* bytes copied in and out; 0: none */
    size_t align;       /* of the element in the slot and in the caller's buffer */
    unsigned seq_shift; /* 0: seq counts positions (cap >= 2); 1: doubled (any cap) */
    int wrap;           /* UP__RING_WRAP_MASK or UP__RING_WRAP_ANY */
} up__ring_shape;

typedef struct up__ring {
    /* Read-only after init, on a line of their own so neither end's
     * traffic evicts them. */
    UP_ALIGNED_LINE unsigned char *slots; /* (ro) cap slots of stride bytes */
    uint64_t mask;                        /* (ro) cap - 1 when cap is a power of two, else 0 */
    uint64_t cap;                         /* (ro) */
    /* (ro) The shape's sizes as up__ring_init was given them: a shape
     * chosen at run time (a channel's) is built from them; a constant one
     * (the task queue's) has its own. */
    size_t stride;
    size_t elem_size;
    UP_ALIGNED_LINE _Atomic uint64_t tail; /* (atomic) producers; bit 63: closed */
    UP_ALIGNED_LINE _Atomic uint64_t head; /* (atomic) consumers */
} up__ring;

/* The slot index of pos. */
UP__RING_INLINE uint64_t up__ring_index(const up__ring *r, up__ring_shape sh, uint64_t pos)
{
    if (sh.wrap == UP__RING_WRAP_MASK)
        return pos & r->mask;
    return r->mask ? pos & r->mask : pos % r->cap; /* capacity 1: mask 0, pos % 1 */
}

/* The capacity, which is also the distance in positions between two laps
 * of a slot. */
UP__RING_INLINE uint64_t up__ring_cap(const up__ring *r, up__ring_shape sh)
{
    return sh.wrap == UP__RING_WRAP_MASK ? r->mask + 1 : r->cap;
}

/* The free mark of the slot of pos for its next lap, pos + cap. */
UP__RING_INLINE uint64_t up__ring_lap_mark(const up__ring *r, up__ring_shape sh, uint64_t pos)
{
    return (pos + up__ring_cap(r, sh)) << sh.seq_shift;
}

/* The sequence word of the slot of pos. */
UP__RING_INLINE _Atomic uint64_t *up__ring_seq(const up__ring *r, up__ring_shape sh, uint64_t pos)
{
    return (_Atomic uint64_t *)(void *)(r->slots + up__ring_index(r, sh, pos) * sh.stride);
}

UP__RING_INLINE unsigned char *up__ring_elem(_Atomic uint64_t *seq, up__ring_shape sh)
{
    return (unsigned char *)(void *)seq + sh.elem_off;
}

/* Copies one element, telling the compiler the shape's alignment (a case
 * per power of two, as the builtin wants a constant; a constant shape
 * keeps one case). */
UP__RING_INLINE void up__ring_copy(void *dst, const void *src, up__ring_shape sh)
{
    if (sh.elem_size == 0)
        return;
#if defined(__GNUC__)
#define UP__RING_COPY_ALIGNED(a)                                                                   \
    case a:                                                                                        \
        memcpy(__builtin_assume_aligned(dst, a), __builtin_assume_aligned(src, a), sh.elem_size);  \
        return;
    switch (sh.align) {
        UP__RING_COPY_ALIGNED(64)
        UP__RING_COPY_ALIGNED(32)
        UP__RING_COPY_ALIGNED(16)
        UP__RING_COPY_ALIGNED(8)
        UP__RING_COPY_ALIGNED(4)
        UP__RING_COPY_ALIGNED(2)
    default:
        break;
    }
#undef UP__RING_COPY_ALIGNED
#endif
    memcpy(dst, src, sh.elem_size);
}

/* Lays out a ring on slots (cap slots of sh.stride bytes, aligned to at
 * least sh.align and 8) with head and tail at position first: 0 for the
 * runtime (up__ring_init); test_ring starts near 2^62 and 2^63. Before any
 * other thread sees the ring. */
static inline void up__ring_init_at(up__ring *r, void *slots, uint64_t cap, up__ring_shape sh,
                                    uint64_t first)
{
    up__assert(cap > 0 && (sh.seq_shift == 1 || cap >= 2));
    up__assert(sh.wrap == UP__RING_WRAP_ANY || (cap & (cap - 1)) == 0);
    up__assert(sh.align > 0 && (sh.align & (sh.align - 1)) == 0 && sh.elem_off % sh.align == 0 &&
               sh.stride % sh.align == 0);
    up__assert(sh.stride % sizeof(_Atomic uint64_t) == 0 &&
               sh.elem_off >= sizeof(_Atomic uint64_t) && sh.elem_off + sh.elem_size <= sh.stride);
    up__assert(first < UP__RING_CLOSED);
    r->slots = slots;
    r->cap = cap;
    r->mask = (cap & (cap - 1)) == 0 ? cap - 1 : 0;
    r->stride = sh.stride;
    r->elem_size = sh.elem_size;
    for (uint64_t i = 0; i < cap; i++)
        atomic_init(up__ring_seq(r, sh, first + i), (first + i) << sh.seq_shift);
    atomic_init(&r->tail, first);
    atomic_init(&r->head, first);
}

static inline void up__ring_init(up__ring *r, void *slots, uint64_t cap, up__ring_shape sh)
{
    up__ring_init_at(r, slots, cap, sh, 0);
}

/* Takes the position at one end: the tail for a push (full_bit 0: the
 * slot must hold pos's free mark) or the head for a pop (full_bit 1: its
 * full mark). UP__RING_OK with *pos and *seq set; UP__RING_FULL for a push
 * or UP__RING_EMPTY for a pop when the slot is a lap behind; for a push,
 * UP__RING_CLOSED_ERR (head never carries the bit). */
UP__RING_INLINE int up__ring_take_end(up__ring *r, up__ring_shape sh, _Atomic uint64_t *end,
                                      uint64_t full_bit, uint64_t *pos_out,
                                      _Atomic uint64_t **seq_out)
{
    uint64_t pos = up__load_relaxed(end);
    for (;;) {
        /* Only the tail carries the bit: a pop (full_bit 1, a constant
         * where this is inlined) skips the test, as the head never has it. */
        if (!full_bit && (pos & UP__RING_CLOSED))
            return UP__RING_CLOSED_ERR;
        _Atomic uint64_t *seq = up__ring_seq(r, sh, pos);
        int64_t dif = (int64_t)(up__load_acquire(seq) - ((pos << sh.seq_shift) + full_bit));
        if (dif == 0) {
            if (up__cas_weak_seqcst(end, &pos, pos + 1)) {
                *pos_out = pos;
                *seq_out = seq;
                return UP__RING_OK;
            }
        } else if (dif < 0) {
            return full_bit ? UP__RING_EMPTY : UP__RING_FULL;
        } else {
            pos = up__load_relaxed(end);
        }
    }
}

/* Copies *elem into the ring. UP__RING_OK, UP__RING_FULL (the slot of the
 * tail still holds the element of one lap ago) or UP__RING_CLOSED_ERR. */
UP__RING_INLINE int up__ring_try_push(up__ring *r, up__ring_shape sh, const void *elem)
{
    uint64_t pos;
    _Atomic uint64_t *seq;
    int rc = up__ring_take_end(r, sh, &r->tail, 0, &pos, &seq);
    if (rc != UP__RING_OK)
        return rc;
    /* pos is ours: its slot stays free until we publish it, so no consumer
     * has passed pos, and the one of pos - cap has left it. */
    up__assert_internal(up__load_relaxed(seq) == pos << sh.seq_shift);
    up__assert_expensive(up__load_relaxed(&r->head) <= pos &&
                         pos - up__load_relaxed(&r->head) < up__ring_cap(r, sh));
    up__ring_copy(up__ring_elem(seq, sh), elem, sh);
    up__store_release(seq, (pos << sh.seq_shift) + 1);
    return UP__RING_OK;
}

/* Copies the element at the head into *out. UP__RING_OK or UP__RING_EMPTY
 * (nothing published at the head: empty, or its producer is mid-copy). */
UP__RING_INLINE int up__ring_try_pop(up__ring *r, up__ring_shape sh, void *out)
{
    uint64_t pos;
    _Atomic uint64_t *seq;
    int rc = up__ring_take_end(r, sh, &r->head, 1, &pos, &seq);
    if (rc != UP__RING_OK)
        return rc;
    /* pos is ours and full until we free it; its producer moved tail past it. */
    up__assert_internal(up__load_relaxed(seq) == (pos << sh.seq_shift) + 1);
    up__assert_expensive((up__load_relaxed(&r->tail) & ~UP__RING_CLOSED) > pos);
    /* The next lap's mark is read before the copy, which the compiler
     * cannot tell apart from a store to *r. */
    uint64_t next = up__ring_lap_mark(r, sh, pos);
    up__ring_copy(out, up__ring_elem(seq, sh), sh);
    up__store_release(seq, next);
    return UP__RING_OK;
}

/* Takes up to max (1 or more: with 0 it would spin while an element is
 * published at the head) consecutive published elements with one CAS into
 * out[0 ..] (elem_size bytes apart, each aligned as the shape says);
 * returns how many, 0 when nothing is published at the head. */
UP__RING_INLINE unsigned up__ring_try_pop_batch(up__ring *r, up__ring_shape sh, void *out,
                                                unsigned max)
{
    up__assert(max > 0);
    uint64_t pos = up__load_relaxed(&r->head);
    unsigned n;
    for (;;) {
        n = 0;
        while (n < max) {
            uint64_t seq = up__load_acquire(up__ring_seq(r, sh, pos + n));
            if (seq != ((pos + n) << sh.seq_shift) + 1)
                break;
            n++;
        }
        if (n == 0) {
            uint64_t seq = up__load_acquire(up__ring_seq(r, sh, pos));
            if ((int64_t)(seq - ((pos << sh.seq_shift) + 1)) < 0)
                return 0;                     /* nothing published at head */
            pos = up__load_relaxed(&r->head); /* head moved on: retry */
            continue;
        }
        if (up__cas_weak_seqcst(&r->head, &pos, pos + n))
            break;
    }
    up__assert_internal(n <= max && n <= up__ring_cap(r, sh));
    for (unsigned i = 0; i < n; i++) {
        _Atomic uint64_t *seq = up__ring_seq(r, sh, pos + i);
        up__assert_internal(up__load_relaxed(seq) == ((pos + i) << sh.seq_shift) + 1);
        uint64_t next = up__ring_lap_mark(r, sh, pos + i); /* before the copy, as in pop */
        up__ring_copy((unsigned char *)out + (size_t)i * sh.elem_size, up__ring_elem(seq, sh), sh);
        up__store_release(seq, next);
    }
    return n;
}

/* Closes the ring; returns the tail word before (UP__RING_CLOSED set in it
 * if the ring was closed already). */
static inline uint64_t up__ring_close(up__ring *r)
{
    return up__fetch_or_seqcst(&r->tail, UP__RING_CLOSED);
}

#endif
