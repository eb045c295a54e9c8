/* The worker deque on its own: owner LIFO, thief FIFO, capacity, and
 * exactly-once under an owner racing thieves. */
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "deque.h"

static void noop(void *arg) { (void)arg; }

static void single_thread(void)
{
    up__deque d;
    CHECK(up__deque_init(&d, 4) == 0);
    up__task t, out;
    for (uintptr_t i = 0; i < 4; i++) {
        up__task_set_arg(&t, noop, (void *)i);
        CHECK_EQ(up__deque_push(&d, &t), UP__DEQUE_OK);
    }
    CHECK_EQ(up__deque_push(&d, &t), UP__DEQUE_FULL);
    CHECK_EQ(up__deque_steal(&d, &out), UP__DEQUE_OK); /* oldest */
    CHECK_EQ(out.words[0], 0);
    CHECK_EQ(up__deque_pop(&d, &out), UP__DEQUE_OK); /* newest */
    CHECK_EQ(out.words[0], 3);
    CHECK_EQ(up__deque_pop(&d, &out), UP__DEQUE_OK);
    CHECK_EQ(out.words[0], 2);
    CHECK_EQ(up__deque_pop(&d, &out), UP__DEQUE_OK);
    CHECK_EQ(out.words[0], 1);
    CHECK_EQ(up__deque_pop(&d, &out), UP__DEQUE_EMPTY);
    CHECK_EQ(up__deque_steal(&d, &out), UP__DEQUE_EMPTY);
    char msg[24] = "a copied payload here";
    up__task_set_copy(&t, noop, msg, sizeof msg);
    CHECK_EQ(up__deque_push(&d, &t), UP__DEQUE_OK);
    CHECK_EQ(up__deque_steal(&d, &out), UP__DEQUE_OK);
    CHECK_EQ(out.size, sizeof msg);
    CHECK(memcmp(out.words, msg, sizeof msg) == 0);
    up__deque_free(&d);
}

enum { THIEVES = 3 };
static up__deque dq;
static uint64_t items;
static _Atomic unsigned char *seen;
static _Atomic int owner_done;
static _Atomic uint64_t stolen;

static void *thief(void *arg)
{
    (void)arg;
    up__task t;
    for (;;) {
        int rc = up__deque_steal(&dq, &t);
        if (rc == UP__DEQUE_OK) {
            atomic_fetch_add(&seen[t.words[0]], 1);
            atomic_fetch_add(&stolen, 1);
        } else if (rc == UP__DEQUE_EMPTY && atomic_load(&owner_done)) {
            return NULL;
        }
    }
}

int main(void)
{
    single_thread();
    uint64_t seed = test_seed();
    items = test_size("UP_TEST_DEQUE_ITEMS", 1000000);
    seen = calloc(items, 1);
    CHECK(up__deque_init(&dq, 64) == 0);
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        pthread_create(&th[i], NULL, thief, NULL);
    up__task t;
    uint64_t next = 0;
    while (next < items) {
        /* Push a random burst, pop a random part of it: owner and thieves
         * meet at the last element often. */
        unsigned burst = 1 + test_rand(&seed) % 8, pops = test_rand(&seed) % (burst + 1);
        for (unsigned k = 0; k < burst && next < items; k++) {
            up__task_set_arg(&t, noop, (void *)(uintptr_t)next);
            if (up__deque_push(&dq, &t) == UP__DEQUE_OK)
                next++;
        }
        for (unsigned k = 0; k < pops; k++)
            if (up__deque_pop(&dq, &t) == UP__DEQUE_OK)
                atomic_fetch_add(&seen[t.words[0]], 1);
    }
    while (up__deque_pop(&dq, &t) == UP__DEQUE_OK)
        atomic_fetch_add(&seen[t.words[0]], 1);
    atomic_store(&owner_done, 1);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    for (uint64_t i = 0; i < items; i++)
        CHECK_EQ(seen[i], 1);
    printf("deque: %" PRIu64 " items, %" PRIu64 " stolen by %d thieves, each taken once\n", items,
           atomic_load(&stolen), THIEVES);
    up__deque_free(&dq);
    free((void *)seen);
    return 0;
}
