/* Channels (chan.h): a bounded MPMC ring of fixed-size elements, with
 * sleeping for the full and empty cases and a close that lets receivers
 * drain.
 *
 * Invariant (the ring). head and tail are monotonic positions; bit 63 of
 * tail is the closed flag. The slot of position pos is pos mod capacity,
 * and its seq word says whose turn it is, with positions doubled so a
 * capacity of 1 stays unambiguous:
 *   seq == 2 pos              free for the producer that reserves pos;
 *   seq == 2 pos + 1          holds the element written at pos, for the
 *                             consumer that reserves pos;
 *   seq == 2 (pos + cap)      free again, for position pos + cap.
 * A producer owns pos once its CAS moves tail from pos to pos + 1, which it
 * only tries after seeing seq == 2 pos; a consumer owns pos once its CAS
 * moves head from pos to pos + 1 after seeing seq == 2 pos + 1. Each
 * position has one owner at each end, so every element sent is received
 * exactly once. The element is written before seq is stored with release
 * and read after seq is loaded with acquire, at both ends.
 *
 * Closing sets bit 63 of tail with one RMW; a producer's CAS expects it
 * clear, so no element is reserved after the close, and receivers see
 * "closed and drained" when head reaches the final tail.
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
#include "spin.h"

#define CLOSED   (UINT64_C(1) << 63)
#define ELEM_MAX (UINT64_C(1) << 20)
#define CAP_MAX  (UINT64_C(1) << 31)
/* Polls of a blocked sender or receiver before it sleeps. */
#define SPIN 128

typedef struct slot {
    _Atomic uint64_t seq;
    unsigned char data[]; /* elem_size bytes */
} slot;

struct up_chan {
    unsigned char *ring;                   /* (ro) cap slots of stride bytes */
    size_t stride;                         /* (ro) */
    size_t elem_size;                      /* (ro) */
    uint64_t cap;                          /* (ro) */
    uint64_t mask;                         /* (ro) cap - 1 when cap is a power of two, else 0 */
    UP_ALIGNED_LINE _Atomic uint64_t tail; /* (atomic) producers; bit 63: closed */
    UP_ALIGNED_LINE _Atomic uint64_t head; /* (atomic) consumers */
    UP_ALIGNED_LINE _Atomic uint32_t recv_waiters;
    up__event not_empty;
    UP_ALIGNED_LINE _Atomic uint32_t send_waiters;
    up__event not_full;
};

enum { TRY_OK, TRY_FULL, TRY_EMPTY, TRY_CLOSED };

static slot *slot_at(const up_chan *c, uint64_t pos)
{
    uint64_t i = c->mask ? pos & c->mask : pos % c->cap;
    return (slot *)(c->ring + i * c->stride);
}

static int try_push(up_chan *c, const void *elem)
{
    uint64_t pos = up__load_relaxed(&c->tail);
    slot *s;
    for (;;) {
        if (pos & CLOSED)
            return TRY_CLOSED;
        s = slot_at(c, pos);
        int64_t dif = (int64_t)(up__load_acquire(&s->seq) - 2 * pos);
        if (dif == 0) {
            if (up__cas_weak_seqcst(&c->tail, &pos, pos + 1))
                break;
        } else if (dif < 0) {
            return TRY_FULL; /* the element of the previous lap is still there */
        } else {
            pos = up__load_relaxed(&c->tail);
        }
    }
    /* pos is ours: its slot stays free until we publish it, so no receiver
     * has passed pos, and the one of pos - cap has left it. */
    up__assert_internal(up__load_relaxed(&s->seq) == 2 * pos);
    up__assert_expensive(up__load_relaxed(&c->head) <= pos &&
                         pos - up__load_relaxed(&c->head) < c->cap);
    if (c->elem_size)
        memcpy(s->data, elem, c->elem_size);
    up__store_release(&s->seq, 2 * pos + 1);
    return TRY_OK;
}

static int try_pop(up_chan *c, void *out)
{
    uint64_t pos = up__load_relaxed(&c->head);
    slot *s;
    for (;;) {
        s = slot_at(c, pos);
        int64_t dif = (int64_t)(up__load_acquire(&s->seq) - (2 * pos + 1));
        if (dif == 0) {
            if (up__cas_weak_seqcst(&c->head, &pos, pos + 1))
                break;
        } else if (dif < 0) {
            return TRY_EMPTY; /* not written yet */
        } else {
            pos = up__load_relaxed(&c->head);
        }
    }
    /* pos is ours and full until we free it; its sender moved tail past it. */
    up__assert_internal(up__load_relaxed(&s->seq) == 2 * pos + 1);
    up__assert_expensive((up__load_relaxed(&c->tail) & ~CLOSED) > pos);
    if (c->elem_size)
        memcpy(out, s->data, c->elem_size);
    up__store_release(&s->seq, 2 * (pos + c->cap));
    return TRY_OK;
}

/* The re-checks before sleeping; sequentially consistent, see above. */
static int closed_and_drained(up_chan *c)
{
    uint64_t t = up__load_seqcst(&c->tail);
    return (t & CLOSED) && up__load_seqcst(&c->head) == (t & ~CLOSED);
}

static int may_sleep_receiving(up_chan *c)
{
    uint64_t t = up__load_seqcst(&c->tail);
    return !(t & CLOSED) && (t & ~CLOSED) == up__load_seqcst(&c->head);
}

static int may_sleep_sending(up_chan *c)
{
    uint64_t t = up__load_seqcst(&c->tail);
    return !(t & CLOSED) && (t & ~CLOSED) - up__load_seqcst(&c->head) >= c->cap;
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
    if (!c || (!elem && c->elem_size)) {
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
    if (!c || (!out && c->elem_size)) {
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
    size_t stride = (sizeof(slot) + elem_size + UP_CACHE_LINE - 1) / UP_CACHE_LINE * UP_CACHE_LINE;
    up_chan *c = aligned_alloc(UP_CACHE_LINE, sizeof *c);
    if (!c) {
        up__set_error("up_chan_create: out of memory");
        return UP_ENOMEM;
    }
    memset(c, 0, sizeof *c);
    c->ring = aligned_alloc(UP_CACHE_LINE, stride * capacity);
    if (!c->ring || up__event_init(&c->not_empty) != 0) {
        free(c->ring);
        free(c);
        up__set_error("up_chan_create: out of memory for %zu slots of %zu bytes", capacity, stride);
        return UP_ENOMEM;
    }
    if (up__event_init(&c->not_full) != 0) {
        up__event_destroy(&c->not_empty);
        free(c->ring);
        free(c);
        return UP_ENOMEM;
    }
    c->stride = stride;
    c->elem_size = elem_size;
    c->cap = capacity;
    c->mask = (capacity & (capacity - 1)) == 0 ? capacity - 1 : 0; /* 1: pos % 1 */
    for (uint64_t i = 0; i < capacity; i++)
        atomic_init(&slot_at(c, i)->seq, 2 * i);
    atomic_init(&c->tail, 0);
    atomic_init(&c->head, 0);
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
    if (up__fetch_or_seqcst(&c->tail, CLOSED) & CLOSED) {
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
    uint64_t h = up__load_acquire(&c->head);
    uint64_t t = up__load_acquire(&c->tail) & ~CLOSED;
    return t > h ? (size_t)(t - h < c->cap ? t - h : c->cap) : 0;
}

size_t up_chan_cap(const up_chan *c) { return c ? (size_t)c->cap : 0; }

int up_chan_destroy(up_chan *c)
{
    if (!c) {
        up__set_error("up_chan_destroy: channel is NULL");
        return UP_EINVAL;
    }
    up__event_destroy(&c->not_full);
    up__event_destroy(&c->not_empty);
    free(c->ring);
    free(c);
    return UP_OK;
}
