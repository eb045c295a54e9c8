/* What the benchmark programs need from the system beyond C11 and POSIX
 * threads, in the one place where macOS differs: a counting semaphore.
 * macOS declares sem_init but does not implement unnamed semaphores (it
 * fails with ENOSYS), so there the semaphore is a count under a mutex and
 * a condition variable. Linux keeps sem_t, the peer the benchmarks mean.
 *
 * The runtime's own portable layer (runtime/src) is internal to the
 * library, and experiments use only public headers, hence this header.
 * Defining UP_PORTABLE_FALLBACKS selects the macOS paths on Linux, so that
 * they are compiled and run here (see kernels/sleep.c for the other one). */
#ifndef UP_BENCH_PORTABLE_H
#define UP_BENCH_PORTABLE_H

#include <pthread.h>

#if defined(__APPLE__) || defined(UP_PORTABLE_FALLBACKS)

typedef struct bench_sem {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned count; /* lock: mu */
} bench_sem;

static inline int bench_sem_init(bench_sem *s, unsigned n)
{
    s->count = n;
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        return -1;
    }
    return 0;
}

static inline void bench_sem_wait(bench_sem *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->count == 0)
        pthread_cond_wait(&s->cv, &s->mu);
    s->count--;
    pthread_mutex_unlock(&s->mu);
}

/* The poster touches the semaphore only while it holds the mutex, so a
 * waiter that took the last permit back may destroy it at once (as with
 * sem_post). */
static inline void bench_sem_post(bench_sem *s)
{
    pthread_mutex_lock(&s->mu);
    s->count++;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static inline void bench_sem_destroy(bench_sem *s)
{
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

#else

#include <semaphore.h>

typedef sem_t bench_sem;

static inline int bench_sem_init(bench_sem *s, unsigned n) { return sem_init(s, 0, n); }

static inline void bench_sem_wait(bench_sem *s)
{
    while (sem_wait(s) != 0)
        ; /* EINTR */
}

static inline void bench_sem_post(bench_sem *s) { sem_post(s); }

static inline void bench_sem_destroy(bench_sem *s) { sem_destroy(s); }

#endif

#endif
