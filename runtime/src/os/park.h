/* Blocking primitives for idle threads, both on a park word (park.c): a
 * futex word on Linux; the portable fallback a word with a mutex and a
 * condition variable. */
#ifndef UP_PARK_H
#define UP_PARK_H

#include <stdint.h>

#include "atomic.h"

/* UP_PARK_COND selects the portable park word: CMake sets it where there
 * is no futex, and on Linux too with -DUP_PARKER=cond. */
#if !defined(__linux__) && !defined(UP_PARK_COND)
#define UP_PARK_COND 1
#endif
#if defined(UP_PARK_COND)
#include <pthread.h>
#endif

/* A park word: a 32-bit value that threads sleep on while it holds the
 * value they expect, and what wakes them. park.c is its only user. */
typedef struct up__park_word {
    _Atomic uint32_t value;
#if defined(UP_PARK_COND)
    pthread_mutex_t mu; /* held across each check and change of value */
    pthread_cond_t cv;
#endif
} up__park_word;

/* A binary semaphore owned by one waiting thread: up__parker_wait()
 * consumes the token that up__parker_post() leaves, whichever comes first. */
typedef struct up__parker {
    up__park_word token; /* atomic: 1 when posted and not yet consumed */
} up__parker;

int up__parker_init(up__parker *pk);
void up__parker_destroy(up__parker *pk);
/* Returns 1 when the token was consumed, 0 when timeout_ns passed first.
 * UINT64_MAX waits without limit. */
int up__parker_wait(up__parker *pk, uint64_t timeout_ns);
void up__parker_post(up__parker *pk);

/* An event count: a waiter reads a key, re-checks its condition, then
 * waits only while the count still equals the key; a notifier bumps the
 * count before waking, so a notification between the re-check and the
 * wait is never lost. */
typedef struct up__event {
    up__park_word count;
} up__event;

int up__event_init(up__event *ev);
void up__event_destroy(up__event *ev);
static inline uint32_t up__event_key(up__event *ev) { return up__load_seqcst(&ev->count.value); }
/* Returns 1 when the count moved, 0 on timeout (UINT64_MAX: no limit). */
int up__event_wait(up__event *ev, uint32_t key, uint64_t timeout_ns);
void up__event_notify_one(up__event *ev);
void up__event_notify_all(up__event *ev);

#endif
