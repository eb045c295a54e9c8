/* Weighted semaphore (sem.h): a word for the fast paths, a mutex and a
 * first-come-first-served queue of waiters for the rest.
 *
 * Invariant. state holds the units held (low 63 bits) and WAITERS (bit
 * 63). WAITERS is set exactly while some thread is in the queue, or while
 * a holder of the mutex is changing state. A fast path (acquire that fits,
 * release, try_acquire) is a CAS that expects WAITERS clear; so while it is
 * set, state changes only under the mutex, and a holder of the mutex first
 * sets it (fetch-or) to freeze the word, then computes and stores the new
 * value, clearing WAITERS if the queue is empty. A CAS that races with the
 * fetch-or fails and takes the slow path, so no fast acquire can overtake
 * a queued waiter: FIFO holds from the moment a waiter is queued.
 *
 * Waiters live on their own stacks: a node with the weight and a parker.
 * Whoever grants a waiter (a releaser, or a waiter that timed out and so
 * made room at the head) marks it granted and dequeues it under the mutex,
 * and posts its parker after unlocking. A waiter whose wait timed out
 * takes the mutex and, if it was granted meanwhile, waits for the post
 * that is coming (its node must outlive the post) and returns success;
 * otherwise it leaves the queue and grants the waiters that now fit, which
 * is what keeps a timed-out large waiter at the head from stranding small
 * ones behind it (the bug of golang/go#37852). */
#include <ultrapool/sem.h>

#include <stdlib.h>

#include "atomic.h"
#include "os/park.h"
#include "pool_internal.h"
#include "spin.h"

#define WAITERS      (UINT64_C(1) << 63)
#define HELD_MASK    (WAITERS - 1)
#define CAPACITY_MAX (UINT64_C(1) << 62)

typedef struct waiter {
    uint64_t weight;
    struct waiter *prev, *next; /* (lock mu) queue links */
    int granted;                /* (lock mu) */
    up__parker parker;
} waiter;

struct up_sem {
    uint64_t capacity;                      /* (ro) */
    UP_ALIGNED_LINE _Atomic uint64_t state; /* (atomic) held | WAITERS, see above */
    UP_ALIGNED_LINE pthread_mutex_t mu;
    waiter *head, *tail;       /* (lock mu) FIFO of waiting threads */
    _Atomic unsigned nwaiting; /* (written under mu) length of that queue */
};

static void unlink_waiter(up_sem *s, waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        s->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        s->tail = w->prev;
    up__store_relaxed(&s->nwaiting, up__load_relaxed(&s->nwaiting) - 1);
}

/* Under mu, with WAITERS set and held the units held: grants waiters from
 * the head while they fit, stores the new state, and returns the granted
 * ones (linked by next) for the caller to post after unlocking. */
static waiter *grant_and_store(up_sem *s, uint64_t held)
{
    waiter *first = NULL, **link = &first;
    while (s->head && s->head->weight <= s->capacity - held) {
        waiter *w = s->head;
        unlink_waiter(s, w);
        held += w->weight;
        w->granted = 1;
        w->next = NULL;
        *link = w;
        link = &w->next;
    }
    up__store_release(&s->state, held | (s->head ? WAITERS : 0));
    return first;
}

static void post_granted(waiter *w)
{
    while (w) {
        waiter *next = w->next; /* read first: once posted, w may be gone */
        up__parker_post(&w->parker);
        w = next;
    }
}

static int check_weight(const up_sem *s, uint64_t weight, const char *who)
{
    if (!s) {
        up__set_error("%s: semaphore is NULL", who);
        return UP_EINVAL;
    }
    if (weight > s->capacity) {
        up__set_error("%s: weight %llu is above the capacity %llu", who, (unsigned long long)weight,
                      (unsigned long long)s->capacity);
        return UP_EINVAL;
    }
    return UP_OK;
}

static int try_fast(up_sem *s, uint64_t weight)
{
    uint64_t st = up__load_relaxed(&s->state);
    while (!(st & WAITERS) && weight <= s->capacity - st)
        if (up__cas_weak_acq_rel(&s->state, &st, st + weight))
            return 1;
    return 0;
}

/* Before queuing, poll a while for room: waking a sleeping thread costs
 * tens of microseconds, while holders of short tasks give units back much
 * sooner. Only while nobody is queued, so a spinner never gets ahead of a
 * waiter (FIFO is untouched). */
#define SPIN 128
static int spin_fast(up_sem *s, uint64_t weight)
{
    for (unsigned i = 1; i <= SPIN; i++) {
        if (up__load_relaxed(&s->state) & WAITERS)
            return 0;
        up__spin_step(i, 16);
        if (try_fast(s, weight))
            return 1;
    }
    return 0;
}

static int acquire_slow(up_sem *s, uint64_t weight, uint64_t timeout_ns)
{
    pthread_mutex_lock(&s->mu);
    uint64_t held = up__fetch_or_acq_rel(&s->state, WAITERS) & HELD_MASK;
    if (!s->head && weight <= s->capacity - held) {
        up__store_release(&s->state, held + weight);
        pthread_mutex_unlock(&s->mu);
        return UP_OK;
    }
    if (timeout_ns == 0) {
        up__store_release(&s->state, held | (s->head ? WAITERS : 0));
        pthread_mutex_unlock(&s->mu);
        up__set_error("up_sem_acquire: no room before the deadline");
        return UP_ETIMEDOUT;
    }
    waiter me = {.weight = weight, .prev = s->tail, .next = NULL, .granted = 0};
    if (up__parker_init(&me.parker) != 0) {
        up__store_release(&s->state, held | (s->head ? WAITERS : 0));
        pthread_mutex_unlock(&s->mu);
        up__set_error("up_sem_acquire: cannot create a wait object");
        return UP_ENOMEM;
    }
    if (s->tail)
        s->tail->next = &me;
    else
        s->head = &me;
    s->tail = &me;
    up__store_relaxed(&s->nwaiting, up__load_relaxed(&s->nwaiting) + 1);
    /* state keeps WAITERS: the queue is not empty. */
    pthread_mutex_unlock(&s->mu);

    int rc = UP_OK;
    if (!up__parker_wait(&me.parker, timeout_ns)) {
        pthread_mutex_lock(&s->mu);
        if (me.granted) {
            pthread_mutex_unlock(&s->mu);
            up__parker_wait(&me.parker, UINT64_MAX); /* the post is on its way */
        } else {
            unlink_waiter(s, &me);
            uint64_t now_held = up__load_relaxed(&s->state) & HELD_MASK;
            waiter *granted = grant_and_store(s, now_held);
            pthread_mutex_unlock(&s->mu);
            post_granted(granted);
            up__set_error("up_sem_acquire: no room before the deadline");
            rc = UP_ETIMEDOUT;
        }
    }
    up__parker_destroy(&me.parker);
    return rc;
}

int up_sem_create(up_sem **out, uint64_t capacity)
{
    if (!out) {
        up__set_error("up_sem_create: out is NULL");
        return UP_EINVAL;
    }
    *out = NULL;
    if (capacity == 0 || capacity > CAPACITY_MAX) {
        up__set_error("up_sem_create: capacity %llu is not in 1..2^62",
                      (unsigned long long)capacity);
        return UP_EINVAL;
    }
    up_sem *s = aligned_alloc(UP_CACHE_LINE, sizeof *s);
    if (!s) {
        up__set_error("up_sem_create: out of memory");
        return UP_ENOMEM;
    }
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return UP_ENOMEM;
    }
    s->capacity = capacity;
    atomic_init(&s->state, 0);
    s->head = s->tail = NULL;
    atomic_init(&s->nwaiting, 0);
    *out = s;
    return UP_OK;
}

int up_sem_acquire_timeout(up_sem *s, uint64_t weight, uint64_t timeout_ns)
{
    int rc = check_weight(s, weight, "up_sem_acquire");
    if (rc != UP_OK)
        return rc;
    if (weight == 0 || try_fast(s, weight))
        return UP_OK;
    if (timeout_ns != 0 && spin_fast(s, weight))
        return UP_OK;
    return acquire_slow(s, weight, timeout_ns);
}

int up_sem_acquire(up_sem *s, uint64_t weight)
{
    return up_sem_acquire_timeout(s, weight, UINT64_MAX);
}

int up_sem_try_acquire(up_sem *s, uint64_t weight)
{
    int rc = check_weight(s, weight, "up_sem_try_acquire");
    if (rc != UP_OK)
        return rc;
    if (weight == 0 || try_fast(s, weight))
        return UP_OK;
    up__set_error("up_sem_try_acquire: %s",
                  up__load_relaxed(&s->state) & WAITERS ? "others are waiting" : "no room");
    return UP_EAGAIN;
}

static int over_release(const up_sem *s, uint64_t weight, uint64_t held)
{
    (void)s;
    up__set_error("up_sem_release: releasing %llu units but only %llu are held",
                  (unsigned long long)weight, (unsigned long long)held);
    return UP_EINVAL;
}

int up_sem_release(up_sem *s, uint64_t weight)
{
    if (!s) {
        up__set_error("up_sem_release: semaphore is NULL");
        return UP_EINVAL;
    }
    if (weight == 0)
        return UP_OK;
    uint64_t st = up__load_relaxed(&s->state);
    while (!(st & WAITERS)) {
        if (st < weight)
            return over_release(s, weight, st);
        if (up__cas_weak_acq_rel(&s->state, &st, st - weight))
            return UP_OK;
    }
    pthread_mutex_lock(&s->mu);
    uint64_t held = up__fetch_or_acq_rel(&s->state, WAITERS) & HELD_MASK;
    if (held < weight) {
        up__store_release(&s->state, held | (s->head ? WAITERS : 0));
        pthread_mutex_unlock(&s->mu);
        return over_release(s, weight, held);
    }
    waiter *granted = grant_and_store(s, held - weight);
    pthread_mutex_unlock(&s->mu);
    post_granted(granted);
    return UP_OK;
}

uint64_t up_sem_held(const up_sem *s)
{
    return s ? up__load_acquire(&((up_sem *)s)->state) & HELD_MASK : 0;
}

unsigned up_sem_waiting(const up_sem *s)
{
    return s ? up__load_relaxed(&((up_sem *)s)->nwaiting) : 0;
}

int up_sem_destroy(up_sem *s)
{
    if (!s) {
        up__set_error("up_sem_destroy: semaphore is NULL");
        return UP_EINVAL;
    }
    pthread_mutex_lock(&s->mu);
    int busy = s->head != NULL;
    pthread_mutex_unlock(&s->mu);
    if (busy) {
        up__set_error("up_sem_destroy: threads are waiting on the semaphore");
        return UP_EINVAL;
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
    return UP_OK;
}
