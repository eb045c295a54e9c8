/** @file
 * Channels: a bounded multi-producer multi-consumer queue of fixed-size
 * elements, copied in and out, for pipelines that feed tasks while their
 * results are consumed.
 *
 *     up_chan *results;
 *     up_chan_create(&results, sizeof(result), 64);
 *     ... tasks: up_chan_send(results, &r);     // blocks while full
 *     ... all producers done: up_chan_close(results);
 *     result r;
 *     while (up_chan_recv(results, &r) == UP_OK) // drains, then UP_ESTOPPED
 *         consume(&r);
 *
 * Sends and receives are lock-free while the channel is neither full nor
 * empty; a blocked thread spins briefly, then sleeps until a peer makes
 * room or brings an element. Nothing is allocated after create. */
#ifndef ULTRAPOOL_CHAN_H
#define ULTRAPOOL_CHAN_H

#include <ultrapool/pool.h>
#include <ultrapool/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct up_chan up_chan; /**< opaque */

/** elem_size: bytes per element, 0 .. 2^20 (0: a channel of signals; the
 * element pointers may then be NULL). capacity: 1 .. 2^31 elements. */
UP_API int up_chan_create(up_chan **out, size_t elem_size, size_t capacity);

/** Copies *elem in, waiting while the channel is full. UP_ESTOPPED once the
 * channel is closed (nothing is sent). */
UP_API int up_chan_send(up_chan *c, const void *elem);
/** As up_chan_send, or UP_ETIMEDOUT after timeout_ns (nothing sent). */
UP_API int up_chan_send_timeout(up_chan *c, const void *elem, uint64_t timeout_ns);
/** Never waits: UP_EAGAIN when full. */
UP_API int up_chan_try_send(up_chan *c, const void *elem);

/** Copies the oldest element out, waiting while the channel is empty.
 * After close, the elements sent before it are still received; then
 * UP_ESTOPPED. */
UP_API int up_chan_recv(up_chan *c, void *out);
/** As up_chan_recv, or UP_ETIMEDOUT after timeout_ns (nothing received). */
UP_API int up_chan_recv_timeout(up_chan *c, void *out, uint64_t timeout_ns);
/** Never waits: UP_EAGAIN when empty (and not closed and drained). */
UP_API int up_chan_try_recv(up_chan *c, void *out);

/** No more sends; wakes every waiter. UP_ESTOPPED when already closed. */
UP_API int up_chan_close(up_chan *c);
/** Elements in the channel now (a snapshot), and its capacity. */
UP_API size_t up_chan_len(const up_chan *c);
/** The channel's capacity in elements. */
UP_API size_t up_chan_cap(const up_chan *c);

/** Frees the channel and any elements left in it. Call it only when no
 * thread is inside a send or receive on it. */
UP_API int up_chan_destroy(up_chan *c);

#ifdef __cplusplus
}
#endif
#endif
