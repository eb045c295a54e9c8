/* Channels: argument checks, FIFO order and bounds (power-of-two and other
 * capacities, capacity 1, empty elements), close semantics (receivers
 * drain then get UP_ESTOPPED, sends are refused, blocked senders and
 * receivers wake), timeouts, exactly-once delivery with several producers
 * and consumers (each consumer sees each producer's elements in order),
 * closing while producers are still sending, and a pipeline fed by pool
 * tasks. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/chan.h>
#include <ultrapool/group.h>

#include "check.h"

typedef struct item {
    uint32_t producer;
    uint32_t seq;
    uint64_t check; /* a function of the two, to catch torn copies */
} item;

static uint64_t check_of(uint32_t p, uint32_t s)
{
    return ((uint64_t)p * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)s * 0xc2b2ae3d27d4eb4full);
}

static void arguments(void)
{
    up_chan *c = (up_chan *)1;
    CHECK_EQ(up_chan_create(&c, 8, 0), UP_EINVAL);
    CHECK_EQ(up_chan_create(&c, (1u << 20) + 1, 4), UP_EINVAL);
    CHECK_EQ(up_chan_create(&c, 8, (size_t)1 << 32), UP_EINVAL);
    CHECK_EQ(up_chan_create(NULL, 8, 4), UP_EINVAL);
    CHECK_EQ(up_chan_create(&c, 8, 4), UP_OK);
    CHECK_EQ(up_chan_send(c, NULL), UP_EINVAL);
    CHECK_EQ(up_chan_recv(c, NULL), UP_EINVAL);
    CHECK_EQ(up_chan_send(NULL, &c), UP_EINVAL);
    CHECK_EQ(up_chan_close(NULL), UP_EINVAL);
    CHECK_EQ(up_chan_cap(c), 4);
    CHECK_EQ(up_chan_destroy(c), UP_OK);
}

/* Fills, overfills, drains and underdrains a channel on one thread. */
static void fifo_and_bounds(size_t cap)
{
    up_chan *c;
    CHECK_EQ(up_chan_create(&c, sizeof(item), cap), UP_OK);
    for (int lap = 0; lap < 3; lap++) {
        for (uint32_t i = 0; i < cap; i++) {
            item it = {0, i, check_of(0, i)};
            CHECK_EQ(up_chan_try_send(c, &it), UP_OK);
            CHECK_EQ(up_chan_len(c), i + 1);
        }
        item extra = {0, 999, 0};
        CHECK_EQ(up_chan_try_send(c, &extra), UP_EAGAIN);
        CHECK_EQ(up_chan_send_timeout(c, &extra, 1000000), UP_ETIMEDOUT);
        for (uint32_t i = 0; i < cap; i++) {
            item it;
            CHECK_EQ(up_chan_try_recv(c, &it), UP_OK);
            CHECK_EQ(it.seq, i);
            CHECK_EQ(it.check, check_of(0, i));
        }
        item none;
        CHECK_EQ(up_chan_try_recv(c, &none), UP_EAGAIN);
        CHECK_EQ(up_chan_len(c), 0);
    }
    CHECK_EQ(up_chan_destroy(c), UP_OK);
}

static void close_semantics(void)
{
    up_chan *c;
    CHECK_EQ(up_chan_create(&c, sizeof(int), 8), UP_OK);
    for (int i = 0; i < 5; i++)
        CHECK_EQ(up_chan_send(c, &i), UP_OK);
    CHECK_EQ(up_chan_close(c), UP_OK);
    CHECK_EQ(up_chan_close(c), UP_ESTOPPED);
    int v = 7;
    CHECK_EQ(up_chan_send(c, &v), UP_ESTOPPED);
    CHECK_EQ(up_chan_try_send(c, &v), UP_ESTOPPED);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(up_chan_recv(c, &v), UP_OK); /* drains what was sent before */
        CHECK_EQ(v, i);
    }
    CHECK_EQ(up_chan_recv(c, &v), UP_ESTOPPED);
    CHECK_EQ(up_chan_try_recv(c, &v), UP_ESTOPPED);
    CHECK_EQ(up_chan_recv_timeout(c, &v, 1000000), UP_ESTOPPED);
    CHECK_EQ(up_chan_destroy(c), UP_OK);
}

typedef struct blocked {
    up_chan *c;
    int send; /* 1: send, 0: receive */
    _Atomic int rc, done;
} blocked;

static void *blocked_main(void *arg)
{
    blocked *b = arg;
    int v = 1;
    atomic_store(&b->rc, b->send ? up_chan_send(b->c, &v) : up_chan_recv(b->c, &v));
    atomic_store(&b->done, 1);
    return NULL;
}

/* Threads blocked on an empty (or full) channel return UP_ESTOPPED when it
 * is closed. */
static void close_wakes(int send)
{
    enum { N = 4 };
    up_chan *c;
    CHECK_EQ(up_chan_create(&c, sizeof(int), 2), UP_OK);
    if (send) {
        int v = 0;
        CHECK_EQ(up_chan_send(c, &v), UP_OK);
        CHECK_EQ(up_chan_send(c, &v), UP_OK);
    }
    blocked b[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        b[i] = (blocked){.c = c, .send = send};
        CHECK_EQ(pthread_create(&th[i], NULL, blocked_main, &b[i]), 0);
    }
    test_sleep_ms(30);
    for (int i = 0; i < N; i++)
        CHECK_EQ(atomic_load(&b[i].done), 0);
    CHECK_EQ(up_chan_close(c), UP_OK);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(atomic_load(&b[i].rc), UP_ESTOPPED);
    }
    if (send) { /* what was in it is still received */
        int v;
        CHECK_EQ(up_chan_recv(c, &v), UP_OK);
        CHECK_EQ(up_chan_recv(c, &v), UP_OK);
        CHECK_EQ(up_chan_recv(c, &v), UP_ESTOPPED);
    }
    CHECK_EQ(up_chan_destroy(c), UP_OK);
}

static void timeouts(void)
{
    up_chan *c;
    CHECK_EQ(up_chan_create(&c, sizeof(int), 1), UP_OK);
    int v = 3;
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_chan_recv_timeout(c, &v, 20000000), UP_ETIMEDOUT);
    uint64_t waited = test_now_ns() - t0;
    CHECK(waited >= 20000000 && waited < 5000000000u);
    CHECK_EQ(up_chan_send(c, &v), UP_OK);
    t0 = test_now_ns();
    CHECK_EQ(up_chan_send_timeout(c, &v, 20000000), UP_ETIMEDOUT);
    waited = test_now_ns() - t0;
    CHECK(waited >= 20000000 && waited < 5000000000u);
    CHECK_EQ(up_chan_recv_timeout(c, &v, 20000000), UP_OK);
    CHECK_EQ(v, 3);
    CHECK_EQ(up_chan_destroy(c), UP_OK);
}

static void empty_elements(void)
{
    up_chan *c;
    CHECK_EQ(up_chan_create(&c, 0, 3), UP_OK);
    CHECK_EQ(up_chan_send(c, NULL), UP_OK);
    CHECK_EQ(up_chan_send(c, NULL), UP_OK);
    CHECK_EQ(up_chan_len(c), 2);
    CHECK_EQ(up_chan_recv(c, NULL), UP_OK);
    CHECK_EQ(up_chan_recv(c, NULL), UP_OK);
    CHECK_EQ(up_chan_try_recv(c, NULL), UP_EAGAIN);
    CHECK_EQ(up_chan_destroy(c), UP_OK);
}

/* ---- many producers and consumers -------------------------------------- */

typedef struct mpmc {
    up_chan *c;
    uint32_t producers, per;
    _Atomic uint32_t *seen; /* producers x per */
    _Atomic uint32_t next_id;
    _Atomic uint64_t received;
    _Atomic int stop_sending; /* for the close-while-sending run */
    _Atomic uint64_t sent;
} mpmc;

static void *producer_main(void *arg)
{
    mpmc *m = arg;
    uint32_t id = atomic_fetch_add(&m->next_id, 1);
    for (uint32_t s = 0; s < m->per; s++) {
        item it = {id, s, check_of(id, s)};
        int rc = (s & 3) == 0 ? up_chan_send_timeout(m->c, &it, UINT64_MAX / 2)
                              : up_chan_send(m->c, &it);
        if (rc == UP_ESTOPPED)
            return NULL;
        CHECK_EQ(rc, UP_OK);
        atomic_fetch_add(&m->sent, 1);
    }
    return NULL;
}

static void *consumer_main(void *arg)
{
    mpmc *m = arg;
    uint32_t *last = calloc(m->producers, sizeof *last); /* last seq + 1 per producer */
    CHECK(last != NULL);
    item it;
    int rc;
    while ((rc = up_chan_recv(m->c, &it)) == UP_OK) {
        CHECK(it.producer < m->producers && it.seq < m->per);
        CHECK_EQ(it.check, check_of(it.producer, it.seq));
        CHECK_GT(it.seq + 1, last[it.producer]); /* each producer's order kept */
        last[it.producer] = it.seq + 1;
        CHECK_EQ(atomic_fetch_add(&m->seen[(size_t)it.producer * m->per + it.seq], 1), 0);
        atomic_fetch_add(&m->received, 1);
    }
    CHECK_EQ(rc, UP_ESTOPPED);
    free(last);
    return NULL;
}

/* P producers and C consumers; close after the producers finish (or,
 * early_close, while they are still sending). */
static void many_to_many(uint32_t P, uint32_t C, size_t cap, uint32_t per, int early_close)
{
    mpmc m = {.producers = P, .per = per};
    CHECK_EQ(up_chan_create(&m.c, sizeof(item), cap), UP_OK);
    m.seen = calloc((size_t)P * per, sizeof *m.seen);
    CHECK(m.seen != NULL);
    pthread_t pt[16], ct[16];
    for (uint32_t i = 0; i < C; i++)
        CHECK_EQ(pthread_create(&ct[i], NULL, consumer_main, &m), 0);
    for (uint32_t i = 0; i < P; i++)
        CHECK_EQ(pthread_create(&pt[i], NULL, producer_main, &m), 0);
    if (early_close) {
        WAIT_UNTIL(atomic_load(&m.sent) >= (uint64_t)P * per / 3, 10000);
        CHECK_EQ(up_chan_close(m.c), UP_OK);
    }
    for (uint32_t i = 0; i < P; i++)
        pthread_join(pt[i], NULL);
    if (!early_close)
        CHECK_EQ(up_chan_close(m.c), UP_OK);
    for (uint32_t i = 0; i < C; i++)
        pthread_join(ct[i], NULL);
    uint64_t sent = atomic_load(&m.sent);
    CHECK_EQ(atomic_load(&m.received), sent);
    if (!early_close)
        CHECK_EQ(sent, (uint64_t)P * per);
    uint64_t ones = 0;
    for (size_t i = 0; i < (size_t)P * per; i++)
        ones += atomic_load(&m.seen[i]);
    CHECK_EQ(ones, sent);
    printf("%u producers, %u consumers, capacity %zu: %llu elements%s, each received once\n", P, C,
           cap, (unsigned long long)sent, early_close ? " (closed while sending)" : "");
    free(m.seen);
    CHECK_EQ(up_chan_destroy(m.c), UP_OK);
}

/* ---- a pipeline: pool tasks send results while the caller consumes ---- */

static up_chan *results;

static int square_task(void *arg)
{
    uint64_t x = (uint64_t)(uintptr_t)arg;
    uint64_t y = x * x;
    return up_chan_send(results, &y);
}

typedef struct feeder {
    up_group *g;
    uint64_t n;
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    for (uint64_t i = 1; i <= f->n; i++)
        CHECK_EQ(up_group_go(f->g, square_task, (void *)(uintptr_t)i), UP_OK);
    CHECK_EQ(up_group_wait(f->g), UP_OK);
    CHECK_EQ(up_chan_close(results), UP_OK);
    return NULL;
}

static void pipeline(uint64_t n)
{
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    CHECK_EQ(up_chan_create(&results, sizeof(uint64_t), 16), UP_OK);
    feeder f = {NULL, n};
    CHECK_EQ(up_group_create(&f.g, pool, 8), UP_OK);
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, feed, &f), 0);
    uint64_t sum = 0, count = 0, y;
    while (up_chan_recv(results, &y) == UP_OK) {
        sum += y;
        count++;
    }
    pthread_join(th, NULL);
    CHECK_EQ(count, n);
    CHECK_EQ(sum, n * (n + 1) * (2 * n + 1) / 6);
    CHECK_EQ(up_group_destroy(f.g), UP_OK);
    CHECK_EQ(up_chan_destroy(results), UP_OK);
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    printf("pipeline: %llu results consumed while tasks produced them\n", (unsigned long long)n);
}

int main(void)
{
    test_seed(); /* the schedule varies, the sizes do not */
    arguments();
    fifo_and_bounds(1);
    fifo_and_bounds(4);
    fifo_and_bounds(7);
    close_semantics();
    close_wakes(0);
    close_wakes(1);
    timeouts();
    empty_elements();
    uint32_t per = (uint32_t)test_size("UP_TEST_CHAN_ITEMS", 50000);
    many_to_many(1, 1, 1, per, 0);
    many_to_many(4, 4, 16, per, 0);
    many_to_many(3, 5, 7, per, 0);
    many_to_many(6, 2, 64, per, 0);
    many_to_many(4, 3, 8, per, 1);
    pipeline(test_size("UP_TEST_CHAN_PIPELINE", 20000));
    printf("channels: ok\n");
    return 0;
}
