/* A worker's own bounded work-stealing deque (Chase-Lev): the owner pushes
 * and pops at the bottom (newest first), thieves take from the top (oldest
 * first). Tasks submitted from inside a running task land here. */
#ifndef UP_DEQUE_H
#define UP_DEQUE_H

#include "atomic.h"
#include "task.h"

/* A task stored as words that thieves read with relaxed atomic loads: a
 * thief may read a slot the owner is rewriting, and only keeps what it read
 * if its CAS on top then succeeds (see deque.c). */
typedef struct up__dslot {
    _Atomic uintptr_t fn;
    _Atomic uint64_t size;
    _Atomic uint64_t words[UP__TASK_WORDS];
} up__dslot;

typedef struct up__deque {
    UP_ALIGNED_LINE up__dslot *slots; /* read-only after init */
    int64_t mask;
    UP_ALIGNED_LINE _Atomic int64_t top;    /* atomic: thieves CAS, owner CAS on the last one */
    UP_ALIGNED_LINE _Atomic int64_t bottom; /* owner writes; thieves read */
} up__deque;

enum { UP__DEQUE_OK = 0, UP__DEQUE_EMPTY = 1, UP__DEQUE_FULL = 2, UP__DEQUE_LOST = 3 };

int up__deque_init(up__deque *d, int64_t capacity); /* a power of two */
void up__deque_free(up__deque *d);
int up__deque_push(up__deque *d, const up__task *t); /* owner only */
int up__deque_pop(up__deque *d, up__task *out);      /* owner only */
int up__deque_steal(up__deque *d, up__task *out);    /* any thread; LOST: retry */

static inline int up__deque_nonempty(up__deque *d)
{
    return up__load_seqcst(&d->bottom) > up__load_seqcst(&d->top);
}

#endif
