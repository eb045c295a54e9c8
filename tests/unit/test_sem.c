/* Weighted semaphore: accounting and argument checks, first come first
 * served (a large waiter is not overtaken by small ones that would fit),
 * strict order among partial fits, timeouts, the timed-out head waiter
 * that must let the ones behind it through (golang/go#37852), try_acquire
 * refusing to jump the queue, and a stress run whose holders check that
 * the capacity is never exceeded. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include <ultrapool/sem.h>

#include "check.h"

typedef struct waiter_arg {
    up_sem *s;
    uint64_t weight, timeout_ns; /* timeout UINT64_MAX: plain acquire */
    int release_after;           /* give the units back once recorded */
    _Atomic int rc, done;
    _Atomic int order; /* position in which it got the units */
} waiter_arg;

static _Atomic int next_order;

static void *waiter_main(void *arg)
{
    waiter_arg *w = arg;
    int rc = w->timeout_ns == UINT64_MAX ? up_sem_acquire(w->s, w->weight)
                                         : up_sem_acquire_timeout(w->s, w->weight, w->timeout_ns);
    if (rc == UP_OK) {
        atomic_store(&w->order, atomic_fetch_add(&next_order, 1));
        if (w->release_after)
            CHECK_EQ(up_sem_release(w->s, w->weight), UP_OK);
    }
    atomic_store(&w->rc, rc);
    atomic_store(&w->done, 1);
    return NULL;
}

/* Starts a waiter and returns once it is queued (or done). */
static void start_waiter(pthread_t *th, waiter_arg *w, up_sem *s, uint64_t weight,
                         uint64_t timeout_ns, int release_after)
{
    unsigned before = up_sem_waiting(s);
    w->s = s;
    w->weight = weight;
    w->timeout_ns = timeout_ns;
    w->release_after = release_after;
    atomic_store(&w->done, 0);
    atomic_store(&w->order, -1);
    CHECK_EQ(pthread_create(th, NULL, waiter_main, w), 0);
    WAIT_UNTIL(up_sem_waiting(s) > before || atomic_load(&w->done), 10000);
}

static void accounting(void)
{
    up_sem *s = (up_sem *)1;
    CHECK_EQ(up_sem_create(&s, 0), UP_EINVAL);
    CHECK_EQ(up_sem_create(&s, (UINT64_C(1) << 62) + 1), UP_EINVAL);
    CHECK_EQ(up_sem_create(NULL, 1), UP_EINVAL);
    CHECK_EQ(up_sem_create(&s, 10), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 11), UP_EINVAL); /* could never fit */
    CHECK_EQ(up_sem_try_acquire(s, 11), UP_EINVAL);
    CHECK_EQ(up_sem_acquire(s, 0), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 3), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 7), UP_OK);
    CHECK_EQ(up_sem_held(s), 10);
    CHECK_EQ(up_sem_try_acquire(s, 1), UP_EAGAIN);
    CHECK_EQ(up_sem_acquire_timeout(s, 1, 0), UP_ETIMEDOUT);
    CHECK_EQ(up_sem_release(s, 3), UP_OK);
    CHECK_EQ(up_sem_try_acquire(s, 1), UP_OK);
    CHECK_EQ(up_sem_held(s), 8);
    CHECK_EQ(up_sem_release(s, 9), UP_EINVAL); /* more than held: detected */
    CHECK_EQ(up_sem_held(s), 8);               /* and nothing changed */
    CHECK_EQ(up_sem_release(s, 8), UP_OK);
    CHECK_EQ(up_sem_release(s, 1), UP_EINVAL);
    CHECK_EQ(up_sem_held(s), 0);
    CHECK_EQ(up_sem_acquire(NULL, 1), UP_EINVAL);
    CHECK_EQ(up_sem_release(NULL, 1), UP_EINVAL);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* Over-release while waiters are queued goes through the slow path. */
static void over_release_with_waiters(void)
{
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, 4), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 4), UP_OK);
    pthread_t th;
    waiter_arg w;
    start_waiter(&th, &w, s, 2, UINT64_MAX, 0);
    CHECK_EQ(up_sem_waiting(s), 1);
    CHECK_EQ(up_sem_destroy(s), UP_EINVAL); /* a thread waits: refused */
    CHECK_EQ(up_sem_release(s, 5), UP_EINVAL);
    CHECK_EQ(up_sem_held(s), 4);
    CHECK_EQ(up_sem_release(s, 4), UP_OK);
    pthread_join(th, NULL);
    CHECK_EQ(atomic_load(&w.rc), UP_OK);
    CHECK_EQ(up_sem_held(s), 2);
    CHECK_EQ(up_sem_release(s, 2), UP_OK);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* A waiter for the whole capacity is queued; small waiters that would fit
 * arrive after it and must not get in first. */
static void large_not_starved(void)
{
    enum { SMALL = 6 };
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, 10), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 5), UP_OK);
    atomic_store(&next_order, 0);
    pthread_t big_th, small_th[SMALL];
    waiter_arg big, small[SMALL];
    start_waiter(&big_th, &big, s, 10, UINT64_MAX, 0);
    for (int i = 0; i < SMALL; i++)
        start_waiter(&small_th[i], &small[i], s, 1, UINT64_MAX, 0);
    CHECK_EQ(up_sem_waiting(s), 1 + SMALL);
    CHECK_EQ(up_sem_try_acquire(s, 1), UP_EAGAIN); /* no jumping the queue either */
    test_sleep_ms(20);
    CHECK_EQ(up_sem_held(s), 5); /* 5 free, yet no small waiter got in */
    CHECK_EQ(atomic_load(&next_order), 0);
    CHECK_EQ(up_sem_release(s, 5), UP_OK);
    pthread_join(big_th, NULL);
    CHECK_EQ(atomic_load(&big.order), 0);
    CHECK_EQ(up_sem_held(s), 10);
    CHECK_EQ(up_sem_release(s, 10), UP_OK);
    for (int i = 0; i < SMALL; i++) {
        pthread_join(small_th[i], NULL);
        CHECK_GT(atomic_load(&small[i].order), 0); /* all after the large one */
    }
    CHECK_EQ(up_sem_held(s), SMALL);
    CHECK_EQ(up_sem_release(s, SMALL), UP_OK);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* Capacity 1: waiters get the unit one at a time, in the order they
 * queued (each gives it back as soon as it has recorded its turn). */
static void one_at_a_time_in_order(void)
{
    enum { N = 8 };
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, 1), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 1), UP_OK);
    atomic_store(&next_order, 0);
    pthread_t th[N];
    waiter_arg w[N];
    for (int i = 0; i < N; i++) {
        start_waiter(&th[i], &w[i], s, 1, UINT64_MAX, 1);
    }
    CHECK_EQ(up_sem_waiting(s), N);
    CHECK_EQ(up_sem_release(s, 1), UP_OK);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(atomic_load(&w[i].order), i);
    }
    CHECK_EQ(up_sem_held(s), 0);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* Queue A(4) B(8) C(1) on a full semaphore of 10. Releasing everything
 * lets A in; B does not fit in the 6 left, and C, which would, waits
 * behind B. When A leaves, B and then C fit. */
static void partial_fits_in_order(void)
{
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, 10), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 10), UP_OK);
    atomic_store(&next_order, 0);
    pthread_t ta, tb, tc;
    waiter_arg a, b, c;
    start_waiter(&ta, &a, s, 4, UINT64_MAX, 0);
    start_waiter(&tb, &b, s, 8, UINT64_MAX, 0);
    start_waiter(&tc, &c, s, 1, UINT64_MAX, 0);
    CHECK_EQ(up_sem_release(s, 10), UP_OK);
    pthread_join(ta, NULL);
    test_sleep_ms(20);
    CHECK_EQ(up_sem_held(s), 4);
    CHECK_EQ(atomic_load(&c.done), 0);
    CHECK_EQ(up_sem_waiting(s), 2);
    CHECK_EQ(up_sem_release(s, 4), UP_OK);
    pthread_join(tb, NULL);
    pthread_join(tc, NULL);
    CHECK_EQ(atomic_load(&a.order), 0);
    /* B and C were granted by the same release: their wake-ups race. */
    CHECK(atomic_load(&b.order) >= 1 && atomic_load(&c.order) >= 1);
    CHECK_EQ(up_sem_held(s), 9);
    CHECK_EQ(up_sem_release(s, 9), UP_OK);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

static void timeout_expires(void)
{
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, 1), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 1), UP_OK);
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_sem_acquire_timeout(s, 1, 20000000), UP_ETIMEDOUT);
    uint64_t waited = test_now_ns() - t0;
    printf("timeout of 20 ms returned after %.1f ms\n", (double)waited / 1e6);
    CHECK_GE(waited, 20000000);
    CHECK_LT(waited, 5000000000u);
    CHECK_EQ(up_sem_waiting(s), 0);
    CHECK_EQ(up_sem_held(s), 1);
    CHECK_EQ(up_sem_release(s, 1), UP_OK);
    CHECK_EQ(up_sem_acquire_timeout(s, 1, 1000000), UP_OK); /* free: no wait */
    CHECK_EQ(up_sem_release(s, 1), UP_OK);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* golang/go#37852: capacity 10, all held. A waits for 10 with a timeout;
 * B waits for 1 behind it. One unit is released: B would fit but is
 * behind A. When A times out, B must get its unit without any further
 * release. */
static void timed_out_head_lets_others_through(void)
{
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, 10), UP_OK);
    CHECK_EQ(up_sem_acquire(s, 10), UP_OK);
    pthread_t ta, tb;
    waiter_arg a, b;
    start_waiter(&ta, &a, s, 10, 100000000, 0); /* 100 ms */
    start_waiter(&tb, &b, s, 1, UINT64_MAX, 0);
    CHECK_EQ(up_sem_waiting(s), 2);
    CHECK_EQ(up_sem_release(s, 1), UP_OK);
    CHECK_EQ(atomic_load(&b.done), 0);
    pthread_join(ta, NULL);
    CHECK_EQ(atomic_load(&a.rc), UP_ETIMEDOUT);
    WAIT_UNTIL(atomic_load(&b.done), 10000);
    CHECK_EQ(atomic_load(&b.done), 1);
    CHECK_EQ(atomic_load(&b.rc), UP_OK);
    pthread_join(tb, NULL);
    CHECK_EQ(up_sem_held(s), 10);
    CHECK_EQ(up_sem_waiting(s), 0);
    CHECK_EQ(up_sem_release(s, 10), UP_OK);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
    printf("a timed-out head waiter let the waiter behind it through\n");
}

/* ---- stress ------------------------------------------------------------ */

typedef struct stress {
    up_sem *s;
    uint64_t cap, iters;
    _Atomic uint64_t in_use, peak, acquired, refused;
} stress;

typedef struct stress_thread {
    stress *st;
    uint64_t seed;
} stress_thread;

static void *stress_main(void *arg)
{
    stress_thread *t = arg;
    stress *st = t->st;
    uint64_t rng = t->seed;
    for (uint64_t i = 0; i < st->iters; i++) {
        uint64_t r = test_rand(&rng);
        uint64_t w = 1 + r % st->cap;
        int rc;
        switch ((r >> 32) % 3) {
        case 0:
            rc = up_sem_acquire(st->s, w);
            break;
        case 1:
            rc = up_sem_acquire_timeout(st->s, w, (r >> 40) % 200000);
            break;
        default:
            rc = up_sem_try_acquire(st->s, w);
            break;
        }
        if (rc != UP_OK) {
            CHECK(rc == UP_ETIMEDOUT || rc == UP_EAGAIN);
            atomic_fetch_add(&st->refused, 1);
            continue;
        }
        uint64_t now = atomic_fetch_add(&st->in_use, w) + w;
        CHECK_LE(now, st->cap);
        uint64_t old = atomic_load(&st->peak);
        while (now > old && !atomic_compare_exchange_weak(&st->peak, &old, now))
            ;
        if ((r >> 50) % 4 == 0)
            sched_yield();
        atomic_fetch_sub(&st->in_use, w);
        CHECK_EQ(up_sem_release(st->s, w), UP_OK);
        atomic_fetch_add(&st->acquired, 1);
    }
    return NULL;
}

/* Threads take random weights with all three forms of acquire and check,
 * while holding, that the units in use never exceed the capacity. */
static void stress_run(uint64_t seed)
{
    enum { THREADS = 6 };
    stress st = {.cap = 16, .iters = test_size("UP_TEST_SEM_ITERS", 20000)};
    CHECK_EQ(up_sem_create(&st.s, st.cap), UP_OK);
    pthread_t th[THREADS];
    stress_thread args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (stress_thread){&st, seed + (uint64_t)i * 7919};
        CHECK_EQ(pthread_create(&th[i], NULL, stress_main, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    printf("stress: %llu acquisitions, %llu timeouts or refusals, peak %llu of %llu units\n",
           (unsigned long long)atomic_load(&st.acquired),
           (unsigned long long)atomic_load(&st.refused), (unsigned long long)atomic_load(&st.peak),
           (unsigned long long)st.cap);
    CHECK_LE(atomic_load(&st.peak), st.cap);
    CHECK_EQ(atomic_load(&st.acquired) + atomic_load(&st.refused), THREADS * st.iters);
    CHECK_GT(atomic_load(&st.acquired), 0);
    CHECK_EQ(up_sem_held(st.s), 0);
    CHECK_EQ(up_sem_waiting(st.s), 0);
    CHECK_EQ(up_sem_destroy(st.s), UP_OK);
}

int main(void)
{
    uint64_t seed = test_seed();
    accounting();
    over_release_with_waiters();
    large_not_starved();
    one_at_a_time_in_order();
    partial_fits_in_order();
    timeout_expires();
    timed_out_head_lets_others_through();
    stress_run(seed);
    printf("semaphore: ok\n");
    return 0;
}
