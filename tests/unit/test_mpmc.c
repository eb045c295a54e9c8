/* The shard queue on its own: FIFO order, full and empty, close, and
 * exactly-once delivery under concurrent producers and consumers. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "check.h"
#include "marks.h"
#include "mpmc.h"

static void noop(void *arg) { (void)arg; }

static void single_thread(void)
{
    up__mpmc q;
    CHECK_EQ(up__mpmc_init(&q, 4), 0);
    up__task t, out;
    for (uintptr_t i = 0; i < 4; i++) {
        up__task_set_arg(&t, noop, (void *)i);
        CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_OK);
    }
    CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_FULL);
    for (uintptr_t i = 0; i < 4; i++) {
        CHECK_EQ(up__mpmc_pop(&q, &out), UP__MPMC_OK);
        CHECK_EQ(out.words[0], i);
    }
    CHECK_EQ(up__mpmc_pop(&q, &out), UP__MPMC_EMPTY);
    CHECK(!up__mpmc_nonempty(&q));
    /* Wrap around several laps. */
    for (uintptr_t i = 0; i < 37; i++) {
        up__task_set_arg(&t, noop, (void *)i);
        CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_OK);
        CHECK_EQ(up__mpmc_pop(&q, &out), UP__MPMC_OK);
        CHECK_EQ(out.words[0], i);
    }
    /* A copied payload survives. */
    char msg[UP_PAYLOAD_MAX] = "payload of forty bytes, give or take!!";
    up__task_set_copy(&t, noop, msg, sizeof msg);
    CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_OK);
    CHECK_EQ(up__mpmc_pop(&q, &out), UP__MPMC_OK);
    CHECK_EQ(out.size, sizeof msg);
    CHECK(memcmp(out.words, msg, sizeof msg) == 0);
    /* Batches: up to max, in order, and only what is published. */
    for (uintptr_t i = 0; i < 3; i++) {
        up__task_set_arg(&t, noop, (void *)(100 + i));
        CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_OK);
    }
    up__task b[8];
    CHECK_EQ(up__mpmc_pop_batch(&q, b, 2), 2);
    CHECK_EQ(b[0].words[0], 100);
    CHECK_EQ(b[1].words[0], 101);
    CHECK_EQ(up__mpmc_pop_batch(&q, b, 8), 1);
    CHECK_EQ(b[0].words[0], 102);
    CHECK_EQ(up__mpmc_pop_batch(&q, b, 8), 0);
    up__task_set_copy(&t, noop, msg, sizeof msg);
    /* Close: what was accepted stays takeable, nothing more gets in. */
    CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_OK);
    CHECK_EQ(up__mpmc_close(&q), 46);
    CHECK_EQ(up__mpmc_push(&q, &t), UP__MPMC_CLOSED_ERR);
    CHECK(up__mpmc_nonempty(&q));
    CHECK_EQ(up__mpmc_pop(&q, &out), UP__MPMC_OK);
    CHECK(!up__mpmc_nonempty(&q));
    up__mpmc_free(&q);
}

enum { PRODUCERS = 4, CONSUMERS = 4 };
static up__mpmc shared;
static uint64_t per_producer;
static test_mark *seen;
static _Atomic uint64_t taken;
static _Atomic int producers_done;

static void *producer(void *arg)
{
    uintptr_t base = (uintptr_t)arg * per_producer;
    up__task t;
    for (uint64_t i = 0; i < per_producer; i++) {
        up__task_set_arg(&t, noop, (void *)(base + i));
        while (up__mpmc_push(&shared, &t) != UP__MPMC_OK)
            sched_yield();
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

static void *consumer(void *arg)
{
    int batched = (int)(uintptr_t)arg & 1;
    up__task t, b[5];
    for (;;) {
        unsigned n = 0;
        if (batched) {
            n = up__mpmc_pop_batch(&shared, b, 5);
        } else if (up__mpmc_pop(&shared, &t) == UP__MPMC_OK) {
            b[0] = t;
            n = 1;
        }
        for (unsigned i = 0; i < n; i++) {
            marks_add(seen, b[i].words[0]);
            atomic_fetch_add(&taken, 1);
        }
        if (n == 0 && atomic_load(&producers_done) == PRODUCERS && !up__mpmc_nonempty(&shared))
            return NULL;
        if (n == 0)
            sched_yield();
    }
}

int main(void)
{
    single_thread();
    per_producer = test_size("UP_TEST_MPMC_ITEMS", 200000);
    uint64_t total = per_producer * PRODUCERS;
    seen = marks_alloc(total);
    CHECK_EQ(up__mpmc_init(&shared, 64), 0);
    pthread_t th[PRODUCERS + CONSUMERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&th[i], NULL, producer, (void *)i);
    for (uintptr_t i = 0; i < CONSUMERS; i++)
        pthread_create(&th[PRODUCERS + i], NULL, consumer, (void *)i);
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(atomic_load(&taken), total);
    CHECK_EQ(marks_wrong(seen, total, NULL), 0);
    printf("mpmc: %" PRIu64
           " items through %d producers and %d consumers (half batched), each taken once\n",
           total, PRODUCERS, CONSUMERS);
    up__mpmc_free(&shared);
    marks_free(seen);
    return 0;
}
