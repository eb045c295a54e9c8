/* Events: a flag that tasks wait on without a thread (up_submit_on), and
 * the blocking fallbacks of the stackful calls (up_event_wait, up_sleep_ns,
 * up_yield) until fibers park them.
 *
 * The waiters of an event form a Treiber stack in its head word (records
 * linked by next); the word also encodes the state: UP__EV_EMPTY (unset,
 * no waiter), UP__EV_SET, or a pointer to the newest record (unset).
 *
 * The invariant: every record accepted onto an event is released exactly
 * once. A waiter publishes its record with a CAS from the head it read
 * (EMPTY or a chain) to the record. up_event_set exchanges the head for
 * SET and owns the chain it got back: every record whose CAS succeeded
 * before the exchange is on it. A CAS after the exchange fails (the head
 * is SET, not what the waiter read), the waiter re-reads SET and releases
 * its record itself, at once. up_event_reset only swaps SET back to EMPTY
 * and never touches a chain; a destroy (the event's or the pool's) swaps a
 * chain for EMPTY with a CAS and releases it cancelled. Each of these
 * takes a chain out of the head with one atomic operation, so no record is
 * on two chains. Orderings: the waiter's CAS is a release of the record's
 * fields, the exchange an acquire of every record on the chain (each CAS
 * of the chain is in the head's release sequence). The waiter's CAS and
 * its later load of ws->cancelling are sequentially consistent, as are a
 * destroy's store of cancelling and its sweep: either the sweep sees the
 * record or the waiter sees the flag and sweeps its event itself. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "pool_internal.h"
#include "wait_internal.h"

int up_event_create(up_event **out, up_pool *p)
{
    if (!out || !p) {
        up__set_error("event_create: %s is NULL", out ? "pool" : "out");
        if (out)
            *out = NULL;
        return UP_EINVAL;
    }
    *out = NULL;
    up__wait *ws = up__wait_get(p);
    if (!ws)
        return UP_ENOMEM;
    up_event *ev = aligned_alloc(UP_CACHE_LINE,
                                 (sizeof *ev + UP_CACHE_LINE - 1) / UP_CACHE_LINE * UP_CACHE_LINE);
    if (!ev) {
        up__set_error("out of memory for an event");
        return UP_ENOMEM;
    }
    memset(ev, 0, sizeof *ev);
    if (up__event_init(&ev->ec) != 0) {
        free(ev);
        up__set_error("out of memory for an event");
        return UP_ENOMEM;
    }
    atomic_init(&ev->head, UP__EV_EMPTY);
    ev->ws = ws;
    pthread_mutex_lock(&ws->reg_mu);
    ev->reg_next = ws->events;
    if (ws->events)
        ws->events->reg_prev = ev;
    ws->events = ev;
    ws->refs++;
    pthread_mutex_unlock(&ws->reg_mu);
    *out = ev;
    return UP_OK;
}

void up__event_cancel_waiters(up_event *ev)
{
    uintptr_t h = up__load_acquire(&ev->head);
    while (h != UP__EV_EMPTY && h != UP__EV_SET) {
        up__assert_internal(UP__EV_STATE_OK(h));
        if (up__cas_weak_seqcst(&ev->head, &h, UP__EV_EMPTY)) {
            up__wait_release(ev->ws, (up__wrec *)h, 1);
            return;
        }
    }
}

int up_event_set(up_event *ev)
{
    if (!ev) {
        up__set_error("event_set: event is NULL");
        return UP_EINVAL;
    }
    uintptr_t old = up__exchange_acq_rel(&ev->head, UP__EV_SET);
    up__assert_internal(UP__EV_STATE_OK(old));
    if (old == UP__EV_SET)
        return UP_OK;
    up__fetch_add_seqcst(&ev->sets, 1);
    if (old != UP__EV_EMPTY)
        up__wait_release(ev->ws, (up__wrec *)old, 0);
    /* An RMW, not a load: if it comes before a blocked thread's increment
     * in the counter's order, that thread's RMW reads it and so sees the
     * set; otherwise this one sees the thread and wakes it. */
    if (up__fetch_add_seqcst(&ev->blocked, 0) != 0)
        up__event_notify_all(&ev->ec);
    return UP_OK;
}

int up_event_reset(up_event *ev)
{
    if (!ev) {
        up__set_error("event_reset: event is NULL");
        return UP_EINVAL;
    }
    uintptr_t set = UP__EV_SET;
    up__cas_strong_acq_rel(&ev->head, &set, UP__EV_EMPTY);
    return UP_OK;
}

int up_event_is_set(const up_event *ev)
{
    return ev && up__load_acquire(&((up_event *)ev)->head) == UP__EV_SET;
}

int up_event_destroy(up_event *ev)
{
    if (!ev)
        return UP_OK;
    up__wait *ws = ev->ws;
    up__event_cancel_waiters(ev);
    pthread_mutex_lock(&ws->reg_mu);
    if (ev->reg_prev)
        ev->reg_prev->reg_next = ev->reg_next;
    else
        ws->events = ev->reg_next;
    if (ev->reg_next)
        ev->reg_next->reg_prev = ev->reg_prev;
    pthread_mutex_unlock(&ws->reg_mu);
    up__event_destroy(&ev->ec);
    free(ev);
    up__wait_unref(ws);
    return UP_OK;
}

int up_submit_on(up_pool *p, up_event *ev, up_fn fn, void *arg)
{
    if (!p || !ev || !fn) {
        up__set_error("submit_on: %s is NULL", !p ? "pool" : !ev ? "event" : "fn");
        return UP_EINVAL;
    }
    up__wait *ws = ev->ws;
    if (ws->pool != p) {
        up__set_error("submit_on: the event belongs to another pool");
        return UP_EINVAL;
    }
    uintptr_t h = up__load_acquire(&ev->head);
    if (h == UP__EV_SET)
        return up__wait_run_now(p, ws, fn, arg, "submit_on");
    int rc;
    up__wrec *r = up__wait_record(ws, fn, arg, "submit_on", &rc);
    if (!r)
        return rc;
    /* The head read before the record existed may be a released record
     * whose memory r now reuses: push from a fresh read. */
    up__event_push(ev, r, up__load_acquire(&ev->head));
    return UP_OK;
}

/* Detaches the whole list (one CAS, like a destroy), drops r from it and
 * puts the others back. A set that happened meanwhile (sets changed)
 * releases them instead, so a set during the detour is not missed; a set
 * and a reset both after the check leave them waiting for the next set,
 * as if they had arrived after that reset. Each record still leaves the
 * list once. */
int up__event_remove(up_event *ev, up__wrec *r, const void *arg)
{
    uint64_t sets = up__load_seqcst(&ev->sets);
    uintptr_t h = up__load_acquire(&ev->head);
    for (;;) {
        if (h == UP__EV_EMPTY || h == UP__EV_SET)
            return 0;
        if (up__cas_weak_seqcst(&ev->head, &h, UP__EV_EMPTY))
            break;
    }
    up__wrec *rest = NULL, *c = (up__wrec *)h;
    int found = 0;
    while (c) {
        up__wrec *next = c->next;
        /* The detached records are this thread's now. r off the list may
         * have been freed and its address reused by another waiter: only
         * a record that still holds arg is the caller's. */
        if (c == r && c->arg == arg) {
            found = 1;
        } else {
            c->next = rest;
            rest = c;
        }
        c = next;
    }
    if (up__load_seqcst(&ev->sets) != sets) {
        up__wait_release(ev->ws, rest, 0);
        return found;
    }
    while (rest) {
        up__wrec *next = rest->next;
        up__event_push(ev, rest, up__load_acquire(&ev->head));
        rest = next;
    }
    return found;
}

int up__event_push(up_event *ev, up__wrec *r, uintptr_t h)
{
    up__assert_internal(r != NULL && UP__EV_STATE_OK((uintptr_t)r) && (uintptr_t)r > UP__EV_SET);
    for (;;) {
        up__assert_internal(UP__EV_STATE_OK(h) && h != (uintptr_t)r);
        if (h == UP__EV_SET) {
            /* Set since we looked: released by us, now. */
            r->next = NULL;
            up__wait_release(ev->ws, r, 0);
            return 0;
        }
        r->next = (up__wrec *)h;
        if (up__cas_weak_seqcst(&ev->head, &h, (uintptr_t)r))
            break;
    }
    if (up__load_seqcst(&ev->ws->cancelling))
        up__event_cancel_waiters(ev);
    return 1;
}

/* The stackful calls. Inside a pool task that may park (park_task.c says
 * when), each pushes a record whose function resumes the task (on an
 * event: onto its head, as up_submit_on does; for a sleep: onto the timer
 * wheel; for a yield: onto the release list) and the worker runs other
 * tasks meanwhile. Every other caller blocks its thread, as documented in
 * wait.h. */
/* A pool task about to wait marks its shard, parked or not (cede.c): its
 * submitters must not run such tasks inline, where the wait may block the
 * thread that would end it. */
static void note_wait(void)
{
    up__worker *w = up__tls_worker;
    if (w)
        up__cede_note_wait(w);
}

int up_event_wait_timeout(up_event *ev, uint64_t timeout_ns)
{
    if (!ev) {
        up__set_error("event_wait: event is NULL");
        return UP_EINVAL;
    }
    note_wait();
    if (up_event_is_set(ev))
        return UP_OK;
    uint64_t deadline = up__deadline_after(timeout_ns);
    int prc;
    if (timeout_ns != 0 && up__park_event(ev, deadline, &prc)) {
        if (prc == UP_ETIMEDOUT)
            up__set_error("event_wait: not set within the timeout");
        else if (prc == UP_ECANCELED)
            up__set_error("event_wait: the wait was cancelled by a destroy");
        return prc;
    }
    up__fetch_add_seqcst(&ev->blocked, 1);
    uint64_t sets = up__load_seqcst(&ev->sets);
    int rc = UP_OK;
    for (;;) {
        uint32_t key = up__event_key(&ev->ec);
        /* A set since we began counts even if a reset followed. */
        if (up__load_seqcst(&ev->head) == UP__EV_SET || up__load_seqcst(&ev->sets) != sets)
            break;
        uint64_t left = up__remaining_ns(deadline);
        if (left == 0) {
            rc = UP_ETIMEDOUT;
            break;
        }
        up__event_wait(&ev->ec, key, left);
    }
    up__fetch_sub_seqcst(&ev->blocked, 1);
    if (rc == UP_ETIMEDOUT)
        up__set_error("event_wait: not set within the timeout");
    return rc;
}

int up_event_wait(up_event *ev) { return up_event_wait_timeout(ev, UINT64_MAX); }

/* Sleeps shorter than this park in naps until their time has passed: the
 * timer wheel's tick is about a millisecond (timer.c), twenty times
 * longer, while a nap is released at once and resumes when a worker takes
 * its turn with the released tasks, a few microseconds later on a busy
 * pool. A lone short sleeper keeps its worker cycling until its time, at
 * most this long. */
#define NAP_SLEEP_NS 50000u

int up_sleep_ns(uint64_t ns)
{
    if (ns == 0)
        return UP_OK;
    note_wait();
    int prc;
    uint64_t deadline = up__deadline_after(ns);
    if (ns < NAP_SLEEP_NS) {
        while (up__park_nap(&prc)) {
            if (prc != UP_OK || up__now_ns() >= deadline)
                return UP_OK; /* its time, or a destroy ended it */
        }
    } else if (up__park_sleep(deadline, &prc)) {
        return UP_OK;
    }
    struct timespec ts = up__timespec_from_ns(deadline);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    return UP_OK;
}

int up_yield(void)
{
    int prc;
    if (up__park_yield(&prc))
        return UP_OK;
    sched_yield();
    return UP_OK;
}
