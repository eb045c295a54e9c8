/* The one implementation of park.h: the parker and the event count, both
 * on a park word. What differs by system is the word alone, in the one
 * #if block below: a Linux futex, or (macOS and other systems without
 * futexes, and Linux with -DUP_PARKER=cond) a mutex and a condition
 * variable. With the futex, a wait returns on a wake, on a signal or
 * spuriously, so every wait sits in a loop that re-checks its condition.
 * With the condition variable, the atomic word is still the truth; the
 * lock, held across each check and each change of the word, only closes
 * the window between checking it and sleeping, and keeps a waiter that
 * sees the change from returning (and its owner from destroying the word)
 * before the changer has let go of the lock. */
#include "os/park.h"

#include "clock.h"

/* ---- the park word ---------------------------------------------------- */

/* word_lock and word_unlock bracket every check and change of the value;
 * word_sleep, called between them after a check found the value equal to
 * expected, sleeps until a word_wake, for at most left ns (UINT64_MAX: no
 * limit), or less (spuriously); word_wake wakes one sleeper, or all. */
#if defined(UP_PARK_COND)

static int word_init(up__park_word *w)
{
    atomic_init(&w->value, 0);
    if (pthread_mutex_init(&w->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        return -1;
    }
    return 0;
}

static void word_destroy(up__park_word *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

static void word_lock(up__park_word *w) { pthread_mutex_lock(&w->mu); }
static void word_unlock(up__park_word *w) { pthread_mutex_unlock(&w->mu); }

/* The condition variable keeps CLOCK_REALTIME: left is converted to it
 * at each call. */
static void word_sleep(up__park_word *w, uint32_t expected, uint64_t left)
{
    (void)expected; /* checked under the lock, which the wait releases */
    if (left == UINT64_MAX) {
        pthread_cond_wait(&w->cv, &w->mu);
        return;
    }
    struct timespec abs = up__realtime_after(left);
    pthread_cond_timedwait(&w->cv, &w->mu, &abs);
}

static void word_wake(up__park_word *w, int all)
{
    if (all)
        pthread_cond_broadcast(&w->cv);
    else
        pthread_cond_signal(&w->cv);
}

#else /* the futex calls of the OS layer (os.c), on words private to the process */

#include <limits.h>

#include "os/os.h"

static int word_init(up__park_word *w)
{
    atomic_init(&w->value, 0);
    return 0;
}

static void word_destroy(up__park_word *w) { (void)w; }
static void word_lock(up__park_word *w) { (void)w; }
static void word_unlock(up__park_word *w) { (void)w; }

static void word_sleep(up__park_word *w, uint32_t expected, uint64_t left)
{
    up__os_futex_wait(&w->value, expected, left);
}

static void word_wake(up__park_word *w, int all)
{
    up__os_futex_wake(&w->value, all ? INT_MAX : 1);
}

#endif

/* Waits until the value is no longer expected, at most timeout_ns
 * (UINT64_MAX: no limit): 1 when it moved, 0 on timeout. consume: the
 * check takes the value, putting expected back (the parker's token). */
static int word_wait(up__park_word *w, uint32_t expected, int consume, uint64_t timeout_ns)
{
    uint64_t deadline = up__deadline_after(timeout_ns);
    int moved = 0;
    word_lock(w);
    for (;;) {
        uint32_t now =
            consume ? up__exchange_acq_rel(&w->value, expected) : up__load_acquire(&w->value);
        if (now != expected) {
            moved = 1;
            break;
        }
        uint64_t left = up__remaining_ns(deadline);
        if (left == 0)
            break;
        word_sleep(w, expected, left);
    }
    word_unlock(w);
    return moved;
}

/* ---- the parker: a token, 0 or 1 -------------------------------------- */

int up__parker_init(up__parker *pk) { return word_init(&pk->token); }
void up__parker_destroy(up__parker *pk) { word_destroy(&pk->token); }
int up__parker_wait(up__parker *pk, uint64_t timeout_ns)
{
    return word_wait(&pk->token, 0, 1, timeout_ns);
}

void up__parker_post(up__parker *pk)
{
    word_lock(&pk->token);
    up__store_release(&pk->token.value, 1);
    word_wake(&pk->token, 0);
    word_unlock(&pk->token);
}

/* ---- the event count -------------------------------------------------- */

int up__event_init(up__event *ev) { return word_init(&ev->count); }
void up__event_destroy(up__event *ev) { word_destroy(&ev->count); }
int up__event_wait(up__event *ev, uint32_t key, uint64_t timeout_ns)
{
    return word_wait(&ev->count, key, 0, timeout_ns);
}

static void notify(up__event *ev, int all)
{
    word_lock(&ev->count);
    up__fetch_add_seqcst(&ev->count.value, 1);
    word_wake(&ev->count, all);
    word_unlock(&ev->count);
}

void up__event_notify_one(up__event *ev) { notify(ev, 0); }
void up__event_notify_all(up__event *ev) { notify(ev, 1); }
