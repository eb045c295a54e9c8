/* A split work-stealing deque: the newest tasks may be private to the
 * owner (pushed and popped with plain loads and stores, no fence), the
 * older ones are public and thieves take them oldest first. The owner moves
 * the split up (publishes) when it chooses, and reclaims public tasks with
 * the Chase-Lev protocol when its private part is empty. The task layer
 * publishes at every push (tasks.c says why). See sdeque.c for the
 * invariant. */
#ifndef UP_PAR_SDEQUE_H
#define UP_PAR_SDEQUE_H

#include <stdatomic.h>
#include <stdint.h>

#include "par_internal.h"

/* A slot holds a par_task as words that thieves read with relaxed atomic
 * loads (the owner may rewrite a slot a thief is reading; the thief then
 * loses its CAS and drops what it read). */
#define SDQ_WORDS (sizeof(par_task) / 8)
/* Slots start on a cache line: a task's header and argument (5 words) then
 * sit in one line, which push writes and pop or steal reads. */
#define SDQ_STRIDE (((SDQ_WORDS * 8 + PAR_LINE - 1) / PAR_LINE) * PAR_LINE / 8)

typedef struct par_sdeque {
    _Alignas(PAR_LINE) _Atomic int64_t top;   /* (atomic) thieves CAS; owner on the last */
    _Alignas(PAR_LINE) _Atomic int64_t split; /* (owner writes) end of the public part */
    _Alignas(PAR_LINE) int64_t bottom;        /* (owner) end of the private part */
    int64_t split_cache;                      /* (owner) its own last store to split */
    int64_t top_cache;                        /* (owner) a top it read: top only grows */
    int64_t mask;                             /* (ro) capacity - 1 */
    _Atomic uint64_t *slots;                  /* (ro pointer) capacity x SDQ_STRIDE */
} par_sdeque;

par_sdeque *par_sdeque_new(int64_t capacity);
void par_sdeque_free(par_sdeque *d);

/* Words of a task that matter: the header (fn, parent, node, size) and the
 * argument, or the copied payload. */
static inline size_t par_task_words(uint64_t size)
{
    return 4 + (size ? (size_t)(size + 7) / 8 : 1);
}

static inline _Atomic uint64_t *par_sdeque_slot(par_sdeque *d, int64_t pos)
{
    return &d->slots[(size_t)(pos & d->mask) * SDQ_STRIDE];
}

static inline void par_slot_write(_Atomic uint64_t *s, const par_task *t)
{
    const uint64_t *w = (const uint64_t *)t;
    size_t n = par_task_words(t->size);
    for (size_t i = 0; i < n; i++)
        atomic_store_explicit(&s[i], w[i], memory_order_relaxed);
}

static inline void par_slot_read(_Atomic uint64_t *s, par_task *t)
{
    /* Written out for the header and the first word, which is all of a
     * pointer task (the common case); a copied payload loops. */
    uint64_t *w = (uint64_t *)t;
    w[0] = atomic_load_explicit(&s[0], memory_order_relaxed);
    w[1] = atomic_load_explicit(&s[1], memory_order_relaxed);
    w[2] = atomic_load_explicit(&s[2], memory_order_relaxed);
    w[3] = atomic_load_explicit(&s[3], memory_order_relaxed);
    w[4] = atomic_load_explicit(&s[4], memory_order_relaxed);
    if (t->size > 8) {
        size_t n = par_task_words(t->size);
        if (n > SDQ_WORDS) /* a torn read by a thief that will lose its CAS */
            n = SDQ_WORDS;
        for (size_t i = 5; i < n; i++)
            w[i] = atomic_load_explicit(&s[i], memory_order_relaxed);
    }
}

/* Owner: room for position b? top only grows, so the owner's last read of
 * it is a lower bound and top's line (which thieves CAS) is read again
 * only when the deque looks full. That read is an acquire: a thief's CAS
 * past position b - capacity comes after its read of that slot, which the
 * push is about to overwrite. */
static inline int par_sdeque_room(par_sdeque *d, int64_t b)
{
    if (b - d->top_cache <= d->mask)
        return 1;
    d->top_cache = atomic_load_explicit(&d->top, memory_order_acquire);
    return b - d->top_cache <= d->mask;
}

/* Owner: does the deque hold at least n tasks (private or public)? The
 * cached top is a lower bound, so the first test over-counts; top's line
 * is read again only when that test says yes, which with a full backlog is
 * every call: thieves write that line only when they steal, so it is
 * mostly a hit. The read is an acquire because top_cache serves
 * par_sdeque_room too. */
static inline int par_sdeque_holds(par_sdeque *d, int64_t n)
{
    if (d->bottom - d->top_cache < n)
        return 0;
    d->top_cache = atomic_load_explicit(&d->top, memory_order_acquire);
    return d->bottom - d->top_cache >= n;
}

/* Owner. push: 0, or -1 when full. */
static inline int par_sdeque_push(par_sdeque *d, const par_task *t)
{
    int64_t b = d->bottom;
    if (!par_sdeque_room(d, b))
        return -1;
    par_slot_write(par_sdeque_slot(d, b), t);
    d->bottom = b + 1;
    return 0;
}

/* Owner: the same for a task whose argument is a pointer (up_task's fast
 * path), written word by word without building a par_task first. */
static inline int par_sdeque_push_ptr(par_sdeque *d, up_task_fn fn, par_frame *parent, void *arg)
{
    int64_t b = d->bottom;
    if (!par_sdeque_room(d, b))
        return -1;
    _Atomic uint64_t *s = par_sdeque_slot(d, b);
    atomic_store_explicit(&s[0], (uint64_t)(uintptr_t)fn, memory_order_relaxed);
    atomic_store_explicit(&s[1], (uint64_t)(uintptr_t)parent, memory_order_relaxed);
    atomic_store_explicit(&s[2], 0, memory_order_relaxed); /* node */
    atomic_store_explicit(&s[3], 0, memory_order_relaxed); /* size: words[0] is arg */
    atomic_store_explicit(&s[4], (uint64_t)(uintptr_t)arg, memory_order_relaxed);
    d->bottom = b + 1;
    return 0;
}

/* Owner: makes every private task public. A release store is enough:
 * raising split only publishes slots already written (a thief's acquire
 * or seq_cst load of split then sees them); the total order matters only
 * when the owner lowers split to reclaim, which has its fence (sdeque.c). */
static inline void par_sdeque_publish(par_sdeque *d)
{
    if (d->bottom != d->split_cache) {
        d->split_cache = d->bottom;
        atomic_store_explicit(&d->split, d->bottom, memory_order_release);
    }
}

/* Owner: reclaims the newest public task (out of line). */
int par_sdeque_reclaim(par_sdeque *d, par_task *out);

/* Owner: the newest task, private or reclaimed; 1 when one was taken. */
static inline int par_sdeque_pop(par_sdeque *d, par_task *out)
{
    int64_t b = d->bottom;
    if (b > d->split_cache) {
        d->bottom = b - 1;
        par_slot_read(par_sdeque_slot(d, b - 1), out);
        return 1;
    }
    return par_sdeque_reclaim(d, out);
}

/* Any thread: the oldest public task; 1 taken, 0 empty, -1 lost a race. */
int par_sdeque_steal(par_sdeque *d, par_task *out);

#endif
