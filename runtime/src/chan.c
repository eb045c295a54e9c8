/* Channels (chan.h): a bounded MPMC ring of fixed-size elements, with
 * sleeping for the full and empty cases and a close that lets receivers
 * drain.
 *
 * The ring is ring.h's (its comment has the invariant), with a shape built
 * at run time from the channel's element size: slots of whole cache lines,
 * the element after the sequence word, copied with memcpy (the caller's
 * buffer may have any alignment), any capacity from 1 (positions doubled
 * in the sequence words; the slot of pos is pos & mask for a power of two,
 * else pos % capacity). Closing sets bit 63 of tail (up__ring_close), and
 * receivers see "closed and drained" when head reaches the final tail.
 *
 * Sleeping (no lost wake-up). A blocked receiver counts itself in
 * recv_waiters (sequentially consistent RMW), reads the event key, then
 * re-checks tail != head (sequentially consistent loads) before sleeping
 * on the key. A producer's tail CAS is sequentially consistent and comes
 * before its load of recv_waiters. In the single order of these operations
 * either the receiver's re-check sees the reserved position (it retries
 * instead of sleeping; the element is being written) or the producer sees
 * the waiter and, after publishing the element, bumps the event, which
 * either changes the key before the receiver sleeps or wakes it. Senders
 * facing a full ring mirror this with send_waiters, head and not_full. */
#include <ultrapool/chan.h>

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "debug.h"
#include "os/park.h"
#include "pool_internal.h"
#include "ring.h"
#include "spin.h"

#define CLOSED   UP__RING_CLOSED
#define ELEM_MAX (UINT64_C(1) << 20)
#define CAP_MAX  (UINT64_C(1) << 31)
/* Polls of a blocked sender or receiver before it sleeps. */
#define SPIN 128
/* The element follows the slot's sequence word. */
#define ELEM_OFF sizeof(_Atomic uint64_t)

struct up_chan {
    up__ring r; /* slots (cap of r.stride bytes), mask, cap, r.elem_size; tail, head */
    UP_ALIGNED_LINE _Atomic uint32_t recv_waiters;
    up__event not_empty;
    UP_ALIGNED_LINE _Atomic uint32_t send_waiters;
    up__event not_full;
};

enum {
    TRY_OK = UP__RING_OK,
    TRY_FULL = UP__RING_FULL,
    TRY_EMPTY = UP__RING_EMPTY,
    TRY_CLOSED = UP__RING_CLOSED_ERR
};

static up__ring_shape shape_of(size_t stride, size_t elem_size)
{
    return (up__ring_shape){.stride = stride,
                            .elem_off = ELEM_OFF,
                            .elem_size = elem_size,
                            .align = 1,
                            .seq_shift = 1,
                            .wrap = UP__RING_WRAP_ANY};
}

static int try_push(up_chan *c, const void *elem)
{
    return up__ring_try_push(&c->r, shape_of(c->r.stride, c->r.elem_size), elem);
}

static int try_pop(up_chan *c, void *out)
{
    return up__ring_try_pop(&c->r, shape_of(c->r.stride, c->r.elem_size), out);
}

/* The re-checks before sleeping; sequentially consistent, see above. */
static int closed_and_drained(up_chan *c)
{
    uint64_t t = up__load_seqcst(&c->r.tail);
    return (t & CLOSED) && up__load_seqcst(&c->r.head) == (t & ~CLOSED);
}

static int may_sleep_receiving(up_chan *c)
{
    uint64_t t = up__load_seqcst(&c->r.tail);
    return !(t & CLOSED) && (t & ~CLOSED) == up__load_seqcst(&c->r.head);
}

static int may_sleep_sending(up_chan *c)
{
    uint64_t t = up__load_seqcst(&c->r.tail);
    return !(t & CLOSED) && (t & ~CLOSED) - up__load_seqcst(&c->r.head) >= c->r.cap;
}

/* After a failed attempt to send (sending) or receive: UP_ETIMEDOUT at the
 * deadline; else one step of polling, or, once SPIN polls are spent, a
 * sleep on the direction's event, with the re-check described above.
 * UP_OK means: try again. */
static int wait_turn(up_chan *c, int sending, uint64_t deadline, unsigned *spins)
{
    uint64_t left = up__remaining_ns(deadline);
    if (left == 0)
        return UP_ETIMEDOUT;
    if (*spins < SPIN) {
        up__spin_step(++*spins, 16);
        return UP_OK;
    }
    _Atomic uint32_t *waiters = sending ? &c->send_waiters : &c->recv_waiters;
    up__event *ev = sending ? &c->not_full : &c->not_empty;
    up__fetch_add_seqcst(waiters, 1);
    uint32_t key = up__event_key(ev);
    if (sending ? may_sleep_sending(c) : may_sleep_receiving(c))
        up__event_wait(ev, key, left);
    else
        sched_yield(); /* a peer is mid-copy, or the channel closed */
    up__fetch_sub_seqcst(waiters, 1);
    return UP_OK;
}

static int send_impl(up_chan *c, const void *elem, uint64_t deadline, int wait)
{
    if (!c || (!elem && c->r.elem_size)) {
        up__set_error("up_chan_send: %s is NULL", !c ? "channel" : "element");
        return UP_EINVAL;
    }
    for (unsigned spins = 0;;) {
        int r = try_push(c, elem);
        if (r == TRY_OK) {
            if (up__load_seqcst(&c->recv_waiters))
                up__event_notify_one(&c->not_empty);
            return UP_OK;
        }
        if (r == TRY_CLOSED) {
            up__set_error("up_chan_send: the channel is closed");
            return UP_ESTOPPED;
        }
        if (!wait) {
            up__set_error("up_chan_try_send: the channel is full");
            return UP_EAGAIN;
        }
        if (wait_turn(c, 1, deadline, &spins) != UP_OK) {
            up__set_error("up_chan_send: no room before the deadline");
            return UP_ETIMEDOUT;
        }
    }
}

static int recv_impl(up_chan *c, void *out, uint64_t deadline, int wait)
{
    if (!c || (!out && c->r.elem_size)) {
        up__set_error("up_chan_recv: %s is NULL", !c ? "channel" : "output");
        return UP_EINVAL;
    }
    for (unsigned spins = 0;;) {
        if (try_pop(c, out) == TRY_OK) {
            if (up__load_seqcst(&c->send_waiters))
                up__event_notify_one(&c->not_full);
            return UP_OK;
        }
        if (closed_and_drained(c)) {
            up__set_error("up_chan_recv: the channel is closed and drained");
            return UP_ESTOPPED;
        }
        if (!wait) {
            up__set_error("up_chan_try_recv: the channel is empty");
            return UP_EAGAIN;
        }
        if (wait_turn(c, 0, deadline, &spins) != UP_OK) {
            up__set_error("up_chan_recv: nothing before the deadline");
            return UP_ETIMEDOUT;
        }
    }
}

int up_chan_create(up_chan **out, size_t elem_size, size_t capacity)
{
    if (!out) {
        up__set_error("up_chan_create: out is NULL");
        return UP_EINVAL;
    }
    *out = NULL;
    if (elem_size > ELEM_MAX || capacity == 0 || capacity > CAP_MAX) {
        up__set_error("up_chan_create: element size %zu (0..2^20) or capacity %zu (1..2^31) "
                      "out of range",
                      elem_size, capacity);
        return UP_EINVAL;
    }
    /* Slots are whole cache lines, so neighbouring producers and consumers
     * do not share one. */
    size_t stride = (ELEM_OFF + elem_size + UP_CACHE_LINE - 1) / UP_CACHE_LINE * UP_CACHE_LINE;
    up_chan *c = aligned_alloc(UP_CACHE_LINE, sizeof *c);
    if (!c) {
        up__set_error("up_chan_create: out of memory");
        return UP_ENOMEM;
    }
    memset(c, 0, sizeof *c);
    unsigned char *ring = aligned_alloc(UP_CACHE_LINE, stride * capacity);
    if (!ring || up__event_init(&c->not_empty) != 0) {
        free(ring);
        free(c);
        up__set_error("up_chan_create: out of memory for %zu slots of %zu bytes", capacity, stride);
        return UP_ENOMEM;
    }
    if (up__event_init(&c->not_full) != 0) {
        up__event_destroy(&c->not_empty);
        free(ring);
        free(c);
        return UP_ENOMEM;
    }
    up__ring_init(&c->r, ring, capacity, shape_of(stride, elem_size));
    atomic_init(&c->recv_waiters, 0);
    atomic_init(&c->send_waiters, 0);
    *out = c;
    return UP_OK;
}

int up_chan_send(up_chan *c, const void *elem) { return send_impl(c, elem, UINT64_MAX, 1); }

int up_chan_send_timeout(up_chan *c, const void *elem, uint64_t timeout_ns)
{
    return send_impl(c, elem, up__deadline_after(timeout_ns), 1);
}

int up_chan_try_send(up_chan *c, const void *elem) { return send_impl(c, elem, 0, 0); }

int up_chan_recv(up_chan *c, void *out) { return recv_impl(c, out, UINT64_MAX, 1); }

int up_chan_recv_timeout(up_chan *c, void *out, uint64_t timeout_ns)
{
    return recv_impl(c, out, up__deadline_after(timeout_ns), 1);
}

int up_chan_try_recv(up_chan *c, void *out) { return recv_impl(c, out, 0, 0); }

int up_chan_close(up_chan *c)
{
    if (!c) {
        up__set_error("up_chan_close: channel is NULL");
        return UP_EINVAL;
    }
    if (up__ring_close(&c->r) & CLOSED) {
        up__set_error("up_chan_close: the channel is already closed");
        return UP_ESTOPPED;
    }
    up__event_notify_all(&c->not_empty);
    up__event_notify_all(&c->not_full);
    return UP_OK;
}

size_t up_chan_len(const up_chan *cc)
{
    if (!cc)
        return 0;
    up_chan *c = (up_chan *)cc; /* atomics are read only */
    uint64_t h = up__load_acquire(&c->r.head);
    uint64_t t = up__load_acquire(&c->r.tail) & ~CLOSED;
    return t > h ? (size_t)(t - h < c->r.cap ? t - h : c->r.cap) : 0;
}

size_t up_chan_cap(const up_chan *c) { return c ? (size_t)c->r.cap : 0; }

int up_chan_destroy(up_chan *c)
{
    if (!c) {
        up__set_error("up_chan_destroy: channel is NULL");
        return UP_EINVAL;
    }
    up__event_destroy(&c->not_full);
    up__event_destroy(&c->not_empty);
    free(c->r.slots);
    free(c);
    return UP_OK;
}
