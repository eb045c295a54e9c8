/* OpenMP's simple and nestable locks with libgomp's layouts on Linux, in
 * both symbol versions, as GCC's omp.h and omp_lib declare them:
 *
 *   omp_lock_t       4 bytes: one word, 0 free, 1 held, 2 held with
 *                    waiters (the same in both versions);
 *   omp_nest_lock_t  16 bytes (OMP_3.0, the default omp_init_nest_lock@@):
 *                    { int lock; int count; void *owner; }, the owner a
 *                    task, as OpenMP 3.0 says locks are owned by tasks;
 *                    8 bytes (OMP_1.0, binaries built before GCC 4.4):
 *                    { int owner; int count; }, the owner a thread id.
 *
 * A waiter spins briefly, then sleeps on the word (a Linux futex: this
 * library is libgomp's Linux ABI), so a lock held long costs no CPU.
 * Invariant of the word: only the holder moves it to 0, only by its
 * release exchange; a waiter that sleeps has set it to 2 first, so the
 * holder's exchange sees 2 and wakes one. Acquire on taking it and
 * release on giving it back order the critical sections. */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gomp.h"

typedef _Atomic int lock_word;

typedef struct nest_lock {
    lock_word lock;
    int count;         /* (holder) */
    const void *owner; /* (atomic) the holding task, NULL when free */
} nest_lock;

typedef struct nest_lock_25 {
    lock_word owner; /* a thread id, 0 when free */
    int count;       /* (holder) */
} nest_lock_25;

_Static_assert(sizeof(lock_word) == 4 && sizeof(nest_lock) == 16 && sizeof(nest_lock_25) == 8,
               "omp.h's lock sizes on Linux");

/* The clock is read once every this many polls of a waiter's spin. */
#define LOCK_POLLS_PER_LOOK 64

static void futex_wait(lock_word *w, int expected)
{
    syscall(SYS_futex, (void *)w, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(lock_word *w, int n)
{
    syscall(SYS_futex, (void *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ---- the simple lock ------------------------------------------------------ */

static int word_try(lock_word *w)
{
    int free_ = 0;
    return up__cas_strong_acquire_relaxed(w, &free_, 1);
}

/* A waiter polls for PAR_SPIN_NS, as a team's waiters do (wait.c): about
 * what a futex wake-up costs, so a lock that comes free within that time
 * costs no sleep and no wake-up call, and one held longer costs the CPU
 * no more than the sleep would have. Timed, not counted, as a pause lasts
 * from a few to over a hundred cycles by processor. Poll i (from 1) of a
 * waiter whose spin began at *since (0 before the first look): 1 after a
 * pause while the spin may go on, 0 once it is over. */
static int spin_on(unsigned i, uint64_t *since)
{
    if (i % LOCK_POLLS_PER_LOOK == 0) {
        uint64_t now = up__now_ns();
        if (*since == 0)
            *since = now;
        else if (now - *since >= PAR_SPIN_NS)
            return 0;
    }
    up__cpu_relax();
    return 1;
}

static void word_lock(lock_word *w)
{
    /* The first try is a CAS alone: a lock most often free costs one
     * exclusive fetch of its line, not a shared one and then another. */
    if (word_try(w))
        return;
    uint64_t since = 0;
    for (unsigned i = 1;; i++) {
        if (!spin_on(i, &since))
            break;
        if (up__load_relaxed(w) == 0 && word_try(w))
            return;
    }
    /* Say there is a waiter, and sleep while it is held. */
    while (up__exchange_acquire(w, 2) != 0)
        futex_wait(w, 2);
}

static void word_unlock(lock_word *w)
{
    if (up__exchange_release(w, 0) == 2)
        futex_wake(w, 1);
}

/* The critical sections take the same word (parallel.c). */
void gomp_word_lock(_Atomic int *w) { word_lock(w); }
void gomp_word_unlock(_Atomic int *w) { word_unlock(w); }

static void lock_init(lock_word *w) { atomic_init(w, 0); }
static void lock_destroy(lock_word *w) { (void)w; }
static int lock_test(lock_word *w) { return word_try(w); }

/* ---- the nestable lock (OMP_3.0): owned by a task ------------------------------ */

static void nest_init(nest_lock *l)
{
    atomic_init(&l->lock, 0);
    l->count = 0;
    l->owner = NULL;
}

static void nest_destroy(nest_lock *l) { (void)l; }

static _Atomic(const void *) *owner_of(nest_lock *l) { return (_Atomic(const void *) *)&l->owner; }

static void nest_set(nest_lock *l)
{
    const void *me = gomp_task_id();
    /* Only the owner can see itself here: another task reads some other
     * value (or NULL), never me. */
    if (up__load_relaxed(owner_of(l)) != me) {
        word_lock(&l->lock);
        up__store_relaxed(owner_of(l), me);
        l->count = 0;
    }
    l->count++;
}

static void nest_unset(nest_lock *l)
{
    if (--l->count == 0) {
        up__store_relaxed(owner_of(l), NULL);
        word_unlock(&l->lock);
    }
}

static int nest_test(nest_lock *l)
{
    const void *me = gomp_task_id();
    if (up__load_relaxed(owner_of(l)) == me)
        return ++l->count;
    if (!word_try(&l->lock))
        return 0;
    up__store_relaxed(owner_of(l), me);
    l->count = 1;
    return 1;
}

/* ---- the nestable lock (OMP_1.0): owned by a thread, the word its id ------------ */

static int my_tid(void)
{
    static _Thread_local int tid;
    if (!tid)
        tid = (int)syscall(SYS_gettid);
    return tid;
}

static void nest25_init(nest_lock_25 *l)
{
    atomic_init(&l->owner, 0);
    l->count = 0;
}

static void nest25_destroy(nest_lock_25 *l) { (void)l; }

static int nest25_take(nest_lock_25 *l, int tid, int *seen)
{
    *seen = 0;
    return up__cas_strong_acquire_relaxed(&l->owner, seen, tid);
}

static void nest25_set(nest_lock_25 *l)
{
    int tid = my_tid(), seen;
    uint64_t since = 0;
    int spinning = 1;
    for (unsigned i = 1;; i++) {
        if (nest25_take(l, tid, &seen)) {
            l->count = 1;
            return;
        }
        if (seen == tid) {
            l->count++;
            return;
        }
        if (!spinning || !(spinning = spin_on(i, &since)))
            futex_wait(&l->owner, seen); /* woken by every release (below) */
    }
}

static void nest25_unset(nest_lock_25 *l)
{
    if (--l->count == 0) {
        up__store_release(&l->owner, 0);
        futex_wake(&l->owner, 1);
    }
}

static int nest25_test(nest_lock_25 *l)
{
    int tid = my_tid(), seen;
    if (nest25_take(l, tid, &seen)) {
        l->count = 1;
        return 1;
    }
    return seen == tid ? ++l->count : 0;
}

/* ---- the symbols: both versions, C and Fortran ------------------------------------ */

/* name@@OMP_3.0 is fn30, name@OMP_1.0 is fn25 (the version script lists
 * the name in both nodes, as libgomp.map does). */
#define VERSIONS(name, fn30, fn25)                                                                 \
    __asm__(".symver " #fn30 ", " #name "@@OMP_3.0");                                              \
    __asm__(".symver " #fn25 ", " #name "@OMP_1.0");

/* The simple lock is the same in both versions. Fortran passes it by
 * reference (omp_lock_kind 4: the word itself). */
#define SIMPLE(op, ret, call)                                                                      \
    GOMP_API ret gomp_##op##_lock_30(lock_word *w) { call; }                                       \
    GOMP_API ret gomp_##op##_lock_25(lock_word *w) { call; }                                       \
    GOMP_API ret gomp_##op##_lock_30_(lock_word *w) { call; }                                      \
    GOMP_API ret gomp_##op##_lock_25_(lock_word *w) { call; }                                      \
    VERSIONS(omp_##op##_lock, gomp_##op##_lock_30, gomp_##op##_lock_25)                            \
    VERSIONS(omp_##op##_lock_, gomp_##op##_lock_30_, gomp_##op##_lock_25_)

SIMPLE(init, void, lock_init(w))
SIMPLE(destroy, void, lock_destroy(w))
SIMPLE(set, void, word_lock(w))
SIMPLE(unset, void, word_unlock(w))
SIMPLE(test, int, return lock_test(w))

/* The nestable lock: C passes the lock; Fortran's omp_nest_lock_kind (8)
 * cannot hold the 16-byte OMP_3.0 lock, so its variable holds a pointer
 * to one that init allocates and destroy frees (libgomp's convention);
 * the 8-byte OMP_1.0 lock fits and is passed itself. */
#define NEST(op, ret, call30, call25)                                                              \
    GOMP_API ret gomp_##op##_nest_lock_30(nest_lock *l) { call30; }                                \
    GOMP_API ret gomp_##op##_nest_lock_25(nest_lock_25 *l) { call25; }                             \
    GOMP_API ret gomp_##op##_nest_lock_25_(nest_lock_25 *l) { call25; }                            \
    VERSIONS(omp_##op##_nest_lock, gomp_##op##_nest_lock_30, gomp_##op##_nest_lock_25)             \
    __asm__(".symver gomp_" #op "_nest_lock_25_, omp_" #op "_nest_lock_@OMP_1.0");

NEST(init, void, nest_init(l), nest25_init(l))
NEST(destroy, void, nest_destroy(l), nest25_destroy(l))
NEST(set, void, nest_set(l), nest25_set(l))
NEST(unset, void, nest_unset(l), nest25_unset(l))
NEST(test, int, return nest_test(l), return nest25_test(l))

GOMP_API void gomp_init_nest_lock_30_(nest_lock **l)
{
    *l = malloc(sizeof **l);
    if (!*l)
        gomp_fatal("omp_init_nest_lock: out of memory");
    nest_init(*l);
}

GOMP_API void gomp_destroy_nest_lock_30_(nest_lock **l)
{
    nest_destroy(*l);
    free(*l);
    *l = NULL;
}

GOMP_API void gomp_set_nest_lock_30_(nest_lock **l) { nest_set(*l); }
GOMP_API void gomp_unset_nest_lock_30_(nest_lock **l) { nest_unset(*l); }
GOMP_API int gomp_test_nest_lock_30_(nest_lock **l) { return nest_test(*l); }

__asm__(".symver gomp_init_nest_lock_30_, omp_init_nest_lock_@@OMP_3.0");
__asm__(".symver gomp_destroy_nest_lock_30_, omp_destroy_nest_lock_@@OMP_3.0");
__asm__(".symver gomp_set_nest_lock_30_, omp_set_nest_lock_@@OMP_3.0");
__asm__(".symver gomp_unset_nest_lock_30_, omp_unset_nest_lock_@@OMP_3.0");
__asm__(".symver gomp_test_nest_lock_30_, omp_test_nest_lock_@@OMP_3.0");
