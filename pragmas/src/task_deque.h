/* A member's work-stealing deque of task records (Chase-Lev): the owner
 * pushes and pops at the bottom, newest first; thieves take the oldest
 * from the top. Every pushed task is visible to thieves at once: the task
 * layer keeps only a short backlog queued (tasks.c) and runs the rest as
 * plain calls, so the queued tasks are exactly the ones worth stealing.
 * See task_deque.c for the invariant. */
#ifndef UP_PAR_TASK_DEQUE_H
#define UP_PAR_TASK_DEQUE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "par_internal.h"

/* A slot holds a par_task as words that thieves read with relaxed atomic
 * loads (the owner may rewrite a slot a thief is reading; the thief then
 * loses its CAS and drops what it read). */
#define PAR_DQ_WORDS (sizeof(par_task) / 8)
_Static_assert(sizeof(void *) == 8 && sizeof(up_task_fn) == 8 && offsetof(par_task, size) == 24 &&
                   offsetof(par_task, words) == 32 && sizeof(par_task) % 8 == 0,
               "a task is a header of four 8-byte words, then its words");
/* Slots start on a cache line: a task's header and argument (5 words) then
 * sit in one line, which push writes and pop or steal reads. */
#define PAR_DQ_STRIDE (((PAR_DQ_WORDS * 8 + PAR_LINE - 1) / PAR_LINE) * PAR_LINE / 8)

typedef struct par_deque {
    _Alignas(PAR_LINE) _Atomic int64_t top;    /* (atomic) thieves CAS; owner on the last */
    _Alignas(PAR_LINE) _Atomic int64_t bottom; /* (owner writes) one past the newest */
    int64_t top_cache;                         /* (owner) a top it read: top only grows */
    int64_t mask;                              /* (ro) capacity - 1 */
    _Atomic uint64_t *slots;                   /* (ro pointer) capacity x PAR_DQ_STRIDE */
} par_deque;

/* capacity: a power of two. NULL when out of memory. */
par_deque *par_deque_new(int64_t capacity);
void par_deque_free(par_deque *d);

/* Words of a task that matter: the header (fn, parent, node, size) and the
 * argument, or the copied payload. */
static inline size_t par_task_words(uint64_t size)
{
    return 4 + (size ? (size_t)(size + 7) / 8 : 1);
}

static inline _Atomic uint64_t *par_deque_slot(par_deque *d, int64_t pos)
{
    return &d->slots[(size_t)(pos & d->mask) * PAR_DQ_STRIDE];
}

/* A slot's words: the header (fn, parent, node as 8-byte words, then size)
 * and the task's words. The pointers go through memcpy, since they may
 * not be read or written through a uint64_t lvalue (strict aliasing); a
 * constant 8-byte copy compiles to one move. */
static inline void par_slot_write(_Atomic uint64_t *s, const par_task *t)
{
    uint64_t h[3];
    memcpy(&h[0], &t->fn, 8);
    memcpy(&h[1], &t->parent, 8);
    memcpy(&h[2], &t->node, 8);
    for (size_t i = 0; i < 3; i++)
        atomic_store_explicit(&s[i], h[i], memory_order_relaxed);
    atomic_store_explicit(&s[3], t->size, memory_order_relaxed);
    size_t n = par_task_words(t->size) - 4;
    for (size_t i = 0; i < n; i++)
        atomic_store_explicit(&s[4 + i], t->words[i], memory_order_relaxed);
}

static inline void par_slot_read(_Atomic uint64_t *s, par_task *t)
{
    /* Written out for the header and the first word, which is all of a
     * pointer task (the common case); a copied payload loops. */
    uint64_t fn = atomic_load_explicit(&s[0], memory_order_relaxed);
    uint64_t parent = atomic_load_explicit(&s[1], memory_order_relaxed);
    uint64_t node = atomic_load_explicit(&s[2], memory_order_relaxed);
    memcpy(&t->fn, &fn, 8);
    memcpy(&t->parent, &parent, 8);
    memcpy(&t->node, &node, 8);
    t->size = atomic_load_explicit(&s[3], memory_order_relaxed);
    t->words[0] = atomic_load_explicit(&s[4], memory_order_relaxed);
    if (t->size > 8) {
        size_t n = par_task_words(t->size);
        if (n > PAR_DQ_WORDS) /* a torn read by a thief that will lose its CAS */
            n = PAR_DQ_WORDS;
        for (size_t i = 5; i < n; i++)
            t->words[i - 4] = atomic_load_explicit(&s[i], memory_order_relaxed);
    }
}

/* Owner: the position one past the newest task. Only the owner stores
 * bottom, so a relaxed load reads its own last store. Frames remember it
 * to tell their descendants from the tasks of the frames below. */
static inline int64_t par_deque_bottom(par_deque *d)
{
    return atomic_load_explicit(&d->bottom, memory_order_relaxed);
}

/* Owner: room for position b? top only grows, so the owner's last read of
 * it is a lower bound and top's line (which thieves CAS) is read again
 * only when the deque looks full. That read is an acquire: a thief's CAS
 * past position b - capacity comes after its read of that slot, which the
 * push is about to overwrite. */
static inline int par_deque_room(par_deque *d, int64_t b)
{
    if (b - d->top_cache <= d->mask)
        return 1;
    d->top_cache = atomic_load_explicit(&d->top, memory_order_acquire);
    return b - d->top_cache <= d->mask;
}

/* Owner: does the deque hold at least n tasks? The cached top is a lower
 * bound, so the first test over-counts; top's line is read again only
 * when that test says yes, which with a full backlog is every call:
 * thieves write that line only when they steal, so it is mostly a hit.
 * The read is an acquire because top_cache serves par_deque_room too. */
static inline int par_deque_holds(par_deque *d, int64_t n)
{
    int64_t b = par_deque_bottom(d);
    if (b - d->top_cache < n)
        return 0;
    d->top_cache = atomic_load_explicit(&d->top, memory_order_acquire);
    return b - d->top_cache >= n;
}

/* Owner: publishes the slot at b, written before this. A release store:
 * a thief that reads the new bottom (seq_cst, so at least acquire) then
 * reads the slot's words as written. */
static inline void par_deque_publish_slot(par_deque *d, int64_t b)
{
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}

/* Owner. push: 0, or -1 when full. */
static inline int par_deque_push(par_deque *d, const par_task *t)
{
    int64_t b = par_deque_bottom(d);
    if (!par_deque_room(d, b))
        return -1;
    par_slot_write(par_deque_slot(d, b), t);
    par_deque_publish_slot(d, b);
    return 0;
}

/* Owner: the same for a task whose argument is a pointer (up_task's fast
 * path), written word by word without building a par_task first. */
static inline int par_deque_push_ptr(par_deque *d, up_task_fn fn, par_frame *parent, void *arg)
{
    int64_t b = par_deque_bottom(d);
    if (!par_deque_room(d, b))
        return -1;
    _Atomic uint64_t *s = par_deque_slot(d, b);
    atomic_store_explicit(&s[0], (uint64_t)(uintptr_t)fn, memory_order_relaxed);
    atomic_store_explicit(&s[1], (uint64_t)(uintptr_t)parent, memory_order_relaxed);
    atomic_store_explicit(&s[2], 0, memory_order_relaxed); /* node */
    atomic_store_explicit(&s[3], 0, memory_order_relaxed); /* size: words[0] is arg */
    atomic_store_explicit(&s[4], (uint64_t)(uintptr_t)arg, memory_order_relaxed);
    par_deque_publish_slot(d, b);
    return 0;
}

/* Owner: the newest task; 1 when one was taken, 0 when empty. */
int par_deque_pop(par_deque *d, par_task *out);

/* Any thread: the oldest task; 1 taken, 0 empty, -1 lost a race. */
int par_deque_steal(par_deque *d, par_task *out);

#endif
