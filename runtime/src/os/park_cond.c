/* Portable implementation of park.h on a mutex and a condition variable
 * (macOS and other systems without futexes). The atomic word is still the
 * truth; the lock only closes the window between checking it and sleeping. */
#include "os/park.h"

#include <errno.h>

#include "clock.h"

static int cond_init(pthread_mutex_t *mu, pthread_cond_t *cv)
{
    if (pthread_mutex_init(mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(cv, NULL) != 0) {
        pthread_mutex_destroy(mu);
        return -1;
    }
    return 0;
}

/* Waits on cv until the absolute CLOCK_REALTIME time for deadline (a
 * monotonic deadline converted at each call); returns nonzero on timeout. */
static int cond_wait_until(pthread_mutex_t *mu, pthread_cond_t *cv, uint64_t deadline)
{
    if (deadline == UINT64_MAX)
        return pthread_cond_wait(cv, mu) == ETIMEDOUT;
    uint64_t left = up__remaining_ns(deadline);
    if (left == 0)
        return 1;
    struct timespec abs = up__realtime_after(left);
    return pthread_cond_timedwait(cv, mu, &abs) == ETIMEDOUT;
}

int up__parker_init(up__parker *pk)
{
    atomic_init(&pk->token, 0);
    return cond_init(&pk->mu, &pk->cv);
}

void up__parker_destroy(up__parker *pk)
{
    pthread_cond_destroy(&pk->cv);
    pthread_mutex_destroy(&pk->mu);
}

int up__parker_wait(up__parker *pk, uint64_t timeout_ns)
{
    uint64_t deadline = up__deadline_after(timeout_ns);
    int got = 0;
    pthread_mutex_lock(&pk->mu);
    for (;;) {
        if (up__exchange_acq_rel(&pk->token, 0) == 1) {
            got = 1;
            break;
        }
        if (up__remaining_ns(deadline) == 0)
            break;
        cond_wait_until(&pk->mu, &pk->cv, deadline);
    }
    pthread_mutex_unlock(&pk->mu);
    return got;
}

void up__parker_post(up__parker *pk)
{
    pthread_mutex_lock(&pk->mu);
    up__store_release(&pk->token, 1);
    pthread_cond_signal(&pk->cv);
    pthread_mutex_unlock(&pk->mu);
}

int up__event_init(up__event *ev)
{
    atomic_init(&ev->count, 0);
    return cond_init(&ev->mu, &ev->cv);
}

void up__event_destroy(up__event *ev)
{
    pthread_cond_destroy(&ev->cv);
    pthread_mutex_destroy(&ev->mu);
}

int up__event_wait(up__event *ev, uint32_t key, uint64_t timeout_ns)
{
    uint64_t deadline = up__deadline_after(timeout_ns);
    int moved = 0;
    pthread_mutex_lock(&ev->mu);
    for (;;) {
        if (up__load_acquire(&ev->count) != key) {
            moved = 1;
            break;
        }
        if (up__remaining_ns(deadline) == 0)
            break;
        cond_wait_until(&ev->mu, &ev->cv, deadline);
    }
    pthread_mutex_unlock(&ev->mu);
    return moved;
}

static void notify(up__event *ev, int all)
{
    pthread_mutex_lock(&ev->mu);
    up__fetch_add_seqcst(&ev->count, 1);
    if (all)
        pthread_cond_broadcast(&ev->cv);
    else
        pthread_cond_signal(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
}

void up__event_notify_one(up__event *ev) { notify(ev, 0); }
void up__event_notify_all(up__event *ev) { notify(ev, 1); }
