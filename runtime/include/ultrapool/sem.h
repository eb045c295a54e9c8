/** @file
 * A weighted semaphore: `capacity` units shared by holders that take
 * different amounts (megabytes of memory, connections of a database ...),
 * for limits a count of tasks cannot express.
 *
 *     up_sem *mem;
 *     up_sem_create(&mem, 1024);                 // 1 GiB, in MiB
 *     up_sem_acquire(mem, need_mib);             // blocks until it fits
 *     ... use the memory ...
 *     up_sem_release(mem, need_mib);
 *
 * Waiters are served first come, first served: a large request at the head
 * of the queue is not overtaken by small ones that would fit, so it is
 * never starved. A waiter that gives up (timeout) leaves the queue and lets
 * the waiters behind it through if they now fit. Neither acquiring nor
 * releasing allocates. */
#ifndef ULTRAPOOL_SEM_H
#define ULTRAPOOL_SEM_H

#include <ultrapool/pool.h>
#include <ultrapool/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct up_sem up_sem; /**< opaque */

/** capacity: 1 .. 2^62 units. */
UP_API int up_sem_create(up_sem **out, uint64_t capacity);

/** Takes weight units, waiting in line until they are free. A weight of 0
 * succeeds at once; above the capacity is UP_EINVAL (it could never fit). */
UP_API int up_sem_acquire(up_sem *s, uint64_t weight);
/** As up_sem_acquire, or UP_ETIMEDOUT after timeout_ns (nothing taken). */
UP_API int up_sem_acquire_timeout(up_sem *s, uint64_t weight, uint64_t timeout_ns);
/** Takes weight units only if they are free and nobody is waiting;
 * UP_EAGAIN otherwise. A weight of 0 always succeeds. */
UP_API int up_sem_try_acquire(up_sem *s, uint64_t weight);
/** Returns weight units and wakes the waiters that now fit, in order.
 * UP_EINVAL, and nothing changes, when more would be returned than is held. */
UP_API int up_sem_release(up_sem *s, uint64_t weight);

/** Units held now (a snapshot). */
UP_API uint64_t up_sem_held(const up_sem *s);
/** Threads waiting now (a snapshot). */
UP_API unsigned up_sem_waiting(const up_sem *s);

/** Frees the semaphore. UP_EINVAL (nothing freed) while a thread waits. */
UP_API int up_sem_destroy(up_sem *s);

#ifdef __cplusplus
}
#endif
#endif
