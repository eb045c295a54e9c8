/* Reliability 12: the weighted semaphore's order and its timed-out waiter,
 * in many rounds of random sizes and timing (test_sem.c checks each rule
 * once, on a fixed schedule).
 *
 * A. First come, first served: a holder keeps some units; a large waiter
 *    that does not fit queues; then small threads hammer the semaphore
 *    with every form of acquire, asking only for what is free. None may
 *    get in before the holder lets go (the large waiter is ahead), and
 *    then the large waiter gets its units at once.
 * B. No starvation: small threads keep the semaphore busy without pause;
 *    a waiter for the whole capacity arrives at a random moment and must
 *    get it before the stream has acquired STARVE_ACQUISITIONS times.
 * C. golang/go#37852: a holder keeps some units, a large waiter with a
 *    random timeout queues, small waiters that would fit queue behind it;
 *    sometimes the holder gives some units back around the deadline. When
 *    the large waiter times out (or is served), the small ones must get in
 *    without any further release; the units held must
 *    then add up exactly.
 * D. Over-release: releasing more than is held is refused with UP_EINVAL
 *    and changes nothing, with and without queued waiters, and while other
 *    threads acquire and release around it.
 * Figure: rounds of each kind, the worst waits, over-releases detected. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include <ultrapool/sem.h>

#include "check.h"

/* B: a large waiter starves when the stream goes on acquiring while it
 * waits. A FIFO semaphore lets the stream acquire only until the large one
 * is queued, so a count of acquisitions from the moment it calls acquire,
 * not a time, tells starvation: a busy machine slows the stream and the
 * waiter alike. (About 5 million a second on the 2-CPU development
 * machine: a starving semaphore fails in seconds; the FIFO one showed at
 * most 0.37 million beside two CPU hogs, while its waiter tried before
 * it queued.) */
#define STARVE_ACQUISITIONS 10000000

/* WAIT_UNTIL, polling about every 20 us: the rounds place threads in a
 * queue at moments a millisecond poll would miss. ms only bounds a hang,
 * scaled by test_time_factor(); the test fails loudly when it passes. */
#define WAIT_FAST(cond, ms)                                                                        \
    do {                                                                                           \
        uint64_t t0_ = test_now_ns();                                                              \
        uint64_t bound_ = (uint64_t)(ms)*test_time_factor() * 1000000u;                            \
        while (!(cond)) {                                                                          \
            if (test_now_ns() - t0_ > bound_) {                                                    \
                fprintf(stderr,                                                                    \
                        "%s:%d: WAIT_FAST timed out after %.0f ms (bound %u ms x %u): %s\n",       \
                        __FILE__, __LINE__, (double)(test_now_ns() - t0_) / 1e6, (unsigned)(ms),   \
                        test_time_factor(), #cond);                                                \
                fflush(stdout);                                                                    \
                abort();                                                                           \
            }                                                                                      \
            struct timespec ts_ = {0, 20000};                                                      \
            nanosleep(&ts_, NULL);                                                                 \
        }                                                                                          \
    } while (0)

static void sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* A thread that acquires once (with a timeout unless UINT64_MAX), notes
 * when it returned, and optionally gives the units back. */
typedef struct one_acquire {
    up_sem *s;
    uint64_t weight, timeout_ns;
    int release_after;
    _Atomic int rc, started, done;
    _Atomic uint64_t done_at;
} one_acquire;

static void *one_acquire_main(void *arg)
{
    one_acquire *a = arg;
    atomic_store(&a->started, 1);
    int rc = a->timeout_ns == UINT64_MAX ? up_sem_acquire(a->s, a->weight)
                                         : up_sem_acquire_timeout(a->s, a->weight, a->timeout_ns);
    atomic_store(&a->done_at, test_now_ns());
    atomic_store(&a->rc, rc);
    if (rc == UP_OK && a->release_after)
        CHECK_EQ(up_sem_release(a->s, a->weight), UP_OK);
    atomic_store(&a->done, 1);
    return NULL;
}

static void start_one(pthread_t *th, one_acquire *a, up_sem *s, uint64_t weight,
                      uint64_t timeout_ns, int release_after)
{
    a->s = s;
    a->weight = weight;
    a->timeout_ns = timeout_ns;
    a->release_after = release_after;
    atomic_store(&a->done, 0);
    atomic_store(&a->started, 0);
    atomic_store(&a->rc, 1);
    CHECK_EQ(pthread_create(th, NULL, one_acquire_main, a), 0);
}

/* Small threads for A and B: acquire a random weight in 1..max_weight
 * with a random form, hold briefly, release, until told to stop. */
typedef struct stream {
    up_sem *s;
    uint64_t max_weight;
    _Atomic int stop;
    const _Atomic int *allowed; /* A: acquiring is a FIFO violation while 0 */
    _Atomic uint64_t acquired, refused;
} stream;

typedef struct stream_thread {
    stream *st;
    uint64_t seed;
} stream_thread;

static void *stream_main(void *arg)
{
    stream_thread *t = arg;
    stream *st = t->st;
    uint64_t rng = t->seed;
    while (!atomic_load(&st->stop)) {
        uint64_t r = test_rand(&rng);
        uint64_t w = 1 + r % st->max_weight;
        int rc;
        switch ((r >> 32) % 4) {
        case 0:
            rc = up_sem_try_acquire(st->s, w);
            break;
        case 1:
            rc = up_sem_acquire_timeout(st->s, w, (r >> 40) % 300000);
            break;
        default:
            /* Bounded too, so a stop is seen even while the large waiter
             * holds everything. */
            rc = up_sem_acquire_timeout(st->s, w, 20000000);
            break;
        }
        if (rc != UP_OK) {
            CHECK(rc == UP_EAGAIN || rc == UP_ETIMEDOUT);
            atomic_fetch_add(&st->refused, 1);
            continue;
        }
        if (st->allowed)
            CHECK(atomic_load(st->allowed)); /* nobody overtakes the large waiter */
        atomic_fetch_add(&st->acquired, 1);
        test_spin((unsigned)(r >> 50) % 500);
        CHECK_EQ(up_sem_release(st->s, w), UP_OK);
    }
    return NULL;
}

enum { STREAMS = 3 };

static void start_streams(stream *st, pthread_t *th, stream_thread *args, uint64_t seed)
{
    for (int i = 0; i < STREAMS; i++) {
        args[i] = (stream_thread){st, seed + (uint64_t)i * 7919};
        CHECK_EQ(pthread_create(&th[i], NULL, stream_main, &args[i]), 0);
    }
}

static void stop_streams(stream *st, pthread_t *th)
{
    atomic_store(&st->stop, 1);
    for (int i = 0; i < STREAMS; i++)
        CHECK_EQ(pthread_join(th[i], NULL), 0);
}

/* A round ends with nothing held and nobody waiting. */
static void destroy_idle(up_sem *s)
{
    CHECK_EQ(up_sem_held(s), 0);
    CHECK_EQ(up_sem_waiting(s), 0);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* ---- A: first come, first served --------------------------------------- */

static struct {
    uint64_t rounds, held_back, worst_ns;
} fifo;

static void fifo_round(uint64_t *rng)
{
    uint64_t cap = 4 + test_rand(rng) % 60;
    uint64_t held = 1 + test_rand(rng) % (cap - 1);
    uint64_t big_w = cap - held + 1 + test_rand(rng) % held; /* does not fit now */
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, cap), UP_OK);
    CHECK_EQ(up_sem_acquire(s, held), UP_OK);

    pthread_t big_th;
    one_acquire big;
    start_one(&big_th, &big, s, big_w, UINT64_MAX, 0);
    WAIT_FAST(up_sem_waiting(s) == 1, 10000);
    CHECK_EQ(up_sem_waiting(s), 1);

    _Atomic int allowed = 0;
    stream st = {.s = s, .max_weight = cap - held, .allowed = &allowed};
    pthread_t th[STREAMS];
    stream_thread args[STREAMS];
    start_streams(&st, th, args, test_rand(rng));
    sleep_us(test_rand(rng) % 2000);
    CHECK_EQ(up_sem_held(s), held); /* the small ones that fit did not get in */

    atomic_store(&allowed, 1); /* before the release: the flag may only be late */
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_sem_release(s, held), UP_OK);
    WAIT_FAST(atomic_load(&big.done), 10000);
    CHECK(atomic_load(&big.done));
    CHECK_EQ(atomic_load(&big.rc), UP_OK);
    fifo.worst_ns = max_u64(fifo.worst_ns, atomic_load(&big.done_at) - t0);
    CHECK_EQ(pthread_join(big_th, NULL), 0);
    sleep_us(test_rand(rng) % 200);
    CHECK_EQ(up_sem_release(s, big_w), UP_OK);
    sleep_us(test_rand(rng) % 500); /* the small ones run again */
    stop_streams(&st, th);

    destroy_idle(s);
    fifo.rounds++;
    fifo.held_back += atomic_load(&st.refused);
}

/* ---- B: no starvation under a stream ------------------------------------- */

static struct {
    uint64_t rounds, stream_acquired, worst_ns, worst_during;
} starve;

static void starve_round(uint64_t *rng)
{
    uint64_t cap = 2 + test_rand(rng) % 30;
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, cap), UP_OK);
    stream st = {.s = s, .max_weight = cap / 2 ? cap / 2 : 1};
    pthread_t th[STREAMS];
    stream_thread args[STREAMS];
    start_streams(&st, th, args, test_rand(rng));
    sleep_us(test_rand(rng) % 3000);

    /* All of it, from a thread, while this one counts what the stream
     * acquires meanwhile. */
    pthread_t big_th;
    one_acquire big;
    uint64_t t0 = test_now_ns();
    start_one(&big_th, &big, s, cap, UINT64_MAX, 0);
    WAIT_FAST(atomic_load(&big.started), 10000);
    uint64_t a0 = atomic_load(&st.acquired);
    WAIT_FAST(atomic_load(&big.done) || atomic_load(&st.acquired) - a0 > STARVE_ACQUISITIONS,
              60000);
    uint64_t during = atomic_load(&st.acquired) - a0;
    if (!atomic_load(&big.done)) {
        fprintf(stderr,
                "starved: the stream acquired %" PRIu64 " times in %.0f ms while a waiter "
                "for all %" PRIu64 " units waited\n",
                during, (double)(test_now_ns() - t0) / 1e6, cap);
        CHECK(atomic_load(&big.done));
    }
    CHECK_EQ(pthread_join(big_th, NULL), 0);
    CHECK_EQ(atomic_load(&big.rc), UP_OK);
    CHECK_EQ(up_sem_held(s), cap);
    starve.worst_ns = max_u64(starve.worst_ns, atomic_load(&big.done_at) - t0);
    starve.worst_during = max_u64(starve.worst_during, during);
    sleep_us(test_rand(rng) % 200);
    CHECK_EQ(up_sem_release(s, cap), UP_OK);
    stop_streams(&st, th);

    destroy_idle(s);
    starve.rounds++;
    starve.stream_acquired += atomic_load(&st.acquired);
}

/* ---- C: the timed-out large waiter (golang/go#37852) --------------------- */

enum { SMALL_MAX = 4 };

static struct {
    uint64_t rounds, exact, big_served, worst_ns;
    /* The shortest timeout drawn. It doubles (up to 51.2 ms) after a round
     * whose large waiter timed out before every small waiter had queued:
     * on a busy machine (or under a sanitizer) starting k threads can
     * take longer than 0.2 ms, and the scenario must still be reached. */
    uint64_t timeout_min;
} timed = {.timeout_min = 200000};

static void timed_round(uint64_t *rng)
{
    int k = 1 + (int)(test_rand(rng) % SMALL_MAX);
    uint64_t cap = (uint64_t)k + 1 + test_rand(rng) % 30;
    uint64_t held = 1 + test_rand(rng) % (cap - (uint64_t)k); /* leaves at least k free */
    uint64_t free_now = cap - held;
    uint64_t big_w = free_now + 1 + test_rand(rng) % held;
    uint64_t timeout = timed.timeout_min + test_rand(rng) % (15 * timed.timeout_min);
    /* Sometimes the holder gives some units back around the deadline. */
    uint64_t give_back = test_rand(rng) % 3 == 0 ? 1 + test_rand(rng) % held : 0;
    uint64_t give_at = test_rand(rng) % (2 * timeout);
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, cap), UP_OK);
    CHECK_EQ(up_sem_acquire(s, held), UP_OK);

    uint64_t t_start = test_now_ns();
    pthread_t big_th, small_th[SMALL_MAX];
    one_acquire big, small[SMALL_MAX];
    start_one(&big_th, &big, s, big_w, timeout, 1);
    WAIT_FAST(up_sem_waiting(s) == 1 || atomic_load(&big.done), 10000);

    /* Small waiters whose weights add up to at most what is free. */
    uint64_t left = free_now, small_sum = 0;
    for (int i = 0; i < k; i++) {
        uint64_t w = 1 + test_rand(rng) % (left - (uint64_t)(k - 1 - i));
        left -= w;
        small_sum += w;
        unsigned before = up_sem_waiting(s);
        start_one(&small_th[i], &small[i], s, w, UINT64_MAX, 0);
        WAIT_FAST(up_sem_waiting(s) > before || atomic_load(&small[i].done), 10000);
    }
    /* The exact 37852 scenario: everybody queued while the large one waits. */
    int exact = up_sem_waiting(s) == (unsigned)(1 + k) && !atomic_load(&big.done);

    if (give_back) {
        uint64_t now = test_now_ns() - t_start;
        if (give_at > now)
            sleep_us((give_at - now) / 1000);
        CHECK_EQ(up_sem_release(s, give_back), UP_OK);
    }
    WAIT_FAST(atomic_load(&big.done), 10000);
    CHECK(atomic_load(&big.done));
    CHECK_EQ(pthread_join(big_th, NULL), 0);
    int big_rc = atomic_load(&big.rc);
    CHECK(big_rc == UP_OK || big_rc == UP_ETIMEDOUT);
    if (big_rc == UP_OK)
        CHECK_GT(give_back, 0); /* only a release could have made room */
    uint64_t big_at = atomic_load(&big.done_at);

    /* Without any further release, every small waiter gets in. */
    for (int i = 0; i < k; i++) {
        WAIT_FAST(atomic_load(&small[i].done), 10000);
        CHECK(atomic_load(&small[i].done));
        CHECK_EQ(pthread_join(small_th[i], NULL), 0);
        CHECK_EQ(atomic_load(&small[i].rc), UP_OK);
        uint64_t at = atomic_load(&small[i].done_at);
        if (at > big_at)
            timed.worst_ns = max_u64(timed.worst_ns, at - big_at);
    }
    CHECK_EQ(up_sem_held(s), held - give_back + small_sum);
    CHECK_EQ(up_sem_waiting(s), 0);
    CHECK_EQ(up_sem_release(s, held - give_back + small_sum), UP_OK);
    CHECK_EQ(up_sem_held(s), 0);
    CHECK_EQ(up_sem_destroy(s), UP_OK);
    timed.rounds++;
    timed.exact += exact && big_rc == UP_ETIMEDOUT;
    timed.big_served += big_rc == UP_OK;
    if (!exact && big_rc == UP_ETIMEDOUT && timed.timeout_min < 50000000)
        timed.timeout_min *= 2;
}

/* ---- D: over-release ------------------------------------------------------- */

static uint64_t over_detected;

static void over_round(uint64_t *rng)
{
    uint64_t cap = 1 + test_rand(rng) % 50;
    uint64_t held = test_rand(rng) % (cap + 1);
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, cap), UP_OK);
    for (uint64_t h = 0; h < held;) {
        uint64_t w = 1 + test_rand(rng) % (held - h);
        CHECK_EQ(up_sem_acquire(s, w), UP_OK);
        h += w;
    }
    /* Half the time a waiter is queued, so the release takes the slow path. */
    int queue = held > 0 && test_rand(rng) % 2;
    pthread_t th;
    one_acquire w;
    if (queue) {
        start_one(&th, &w, s, cap - held + 1 + test_rand(rng) % held, UINT64_MAX, 1);
        WAIT_FAST(up_sem_waiting(s) == 1, 10000);
        CHECK_EQ(up_sem_waiting(s), 1);
    }
    uint64_t too_much = held + 1 + test_rand(rng) % (cap + 2);
    CHECK_EQ(up_sem_release(s, too_much), UP_EINVAL);
    over_detected++;
    CHECK_EQ(up_sem_held(s), held); /* nothing changed */
    CHECK_EQ(up_sem_waiting(s), (unsigned)queue);
    CHECK_EQ(up_sem_release(s, held), UP_OK); /* the right amount still works */
    if (queue) {
        CHECK_EQ(pthread_join(th, NULL), 0);
        CHECK_EQ(atomic_load(&w.rc), UP_OK);
    }
    CHECK_EQ(up_sem_held(s), 0);
    CHECK_EQ(up_sem_release(s, 1), UP_EINVAL);
    over_detected++;
    CHECK_EQ(up_sem_destroy(s), UP_OK);
}

/* Over-releases of more than the capacity while a stream acquires and
 * releases: each is refused, and the stream's accounting stays exact. */
static void over_under_stream(uint64_t *rng, uint64_t attempts)
{
    uint64_t cap = 2 + test_rand(rng) % 30;
    up_sem *s;
    CHECK_EQ(up_sem_create(&s, cap), UP_OK);
    stream st = {.s = s, .max_weight = cap};
    pthread_t th[STREAMS];
    stream_thread args[STREAMS];
    start_streams(&st, th, args, test_rand(rng));
    for (uint64_t i = 0; i < attempts; i++) {
        CHECK_EQ(up_sem_release(s, cap + 1 + test_rand(rng) % 8), UP_EINVAL);
        over_detected++;
        CHECK_LE(up_sem_held(s), cap);
        if (i % 16 == 0)
            sched_yield();
    }
    stop_streams(&st, th);
    destroy_idle(s);
}

int main(void)
{
    uint64_t seed = test_seed();
    uint64_t rounds = test_size("UP_TEST_SEM_ROUNDS", 150);
    uint64_t rng = seed;
    for (uint64_t i = 0; i < rounds; i++) {
        fifo_round(&rng);
        timed_round(&rng);
        over_round(&rng);
        if (i % 3 == 0)
            starve_round(&rng);
    }
    over_under_stream(&rng, 20 * rounds);
    printf("figure: A %" PRIu64 " FIFO rounds: %" PRIu64
           " small attempts held back behind the large waiter, none got ahead, worst wait of the "
           "large one after the release %.2f ms; B %" PRIu64
           " rounds of a full-capacity waiter against a stream (%" PRIu64
           " small acquisitions): worst wait %.2f ms, at most %" PRIu64
           " stream acquisitions during one (starving at %d); C %" PRIu64
           " timed-out-waiter rounds (%" PRIu64 " exactly go#37852, %" PRIu64
           " served by a late release; shortest timeout at the end %.1f ms): every small waiter "
           "got in, worst %.2f ms after; D %" PRIu64
           " over-releases refused, nothing changed; hangs 0\n",
           fifo.rounds, fifo.held_back, (double)fifo.worst_ns / 1e6, starve.rounds,
           starve.stream_acquired, (double)starve.worst_ns / 1e6, starve.worst_during,
           STARVE_ACQUISITIONS, timed.rounds, timed.exact, timed.big_served,
           (double)timed.timeout_min / 1e6, (double)timed.worst_ns / 1e6, over_detected);
    CHECK(timed.exact > 0 || rounds < 20);
    return 0;
}
