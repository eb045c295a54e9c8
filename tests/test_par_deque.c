/* The OpenMP-style layer's task deque on its own: owner LIFO, thief FIFO,
 * capacity, the backlog count, and exactly-once with intact payloads under
 * an owner racing thieves. Every third task carries a copied payload of
 * five words that all hold its id, so a torn copy that a thief kept would
 * show as a mismatch. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "task_deque.h"

static void noop(void *arg) { (void)arg; }

enum { PAYLOAD_WORDS = 5 };

static void make_task(par_task *t, uint64_t id)
{
    memset(t, 0, sizeof *t);
    t->fn = noop;
    if (id % 3 == 0) {
        t->size = PAYLOAD_WORDS * 8;
        for (int i = 0; i < PAYLOAD_WORDS; i++)
            t->words[i] = id;
    } else {
        t->words[0] = id; /* size 0: words[0] is the argument pointer */
    }
}

static uint64_t items;

/* The task's id; a copied payload must hold it in every word. */
static uint64_t task_id(const par_task *t)
{
    uint64_t id = t->words[0];
    CHECK(id < items || items == 0);
    if (t->size) {
        CHECK_EQ(t->size, PAYLOAD_WORDS * 8);
        for (int i = 1; i < PAYLOAD_WORDS; i++)
            CHECK_EQ(t->words[i], id);
    }
    CHECK(t->fn == noop);
    return id;
}

static void single_thread(void)
{
    par_deque *d = par_deque_new(4);
    CHECK(d != NULL);
    par_task t, out;
    CHECK_EQ(par_deque_pop(d, &out), 0);
    CHECK_EQ(par_deque_steal(d, &out), 0);
    CHECK(!par_deque_holds(d, 1));
    for (uint64_t i = 0; i < 4; i++) {
        make_task(&t, i);
        CHECK_EQ(par_deque_push(d, &t), 0);
    }
    CHECK(par_deque_holds(d, 4) && !par_deque_holds(d, 5));
    CHECK_EQ(par_deque_push(d, &t), -1);   /* full */
    CHECK_EQ(par_deque_steal(d, &out), 1); /* oldest */
    CHECK_EQ(task_id(&out), 0);
    CHECK(par_deque_holds(d, 3) && !par_deque_holds(d, 4));
    CHECK_EQ(par_deque_push_ptr(d, noop, NULL, (void *)(uintptr_t)7), 0); /* room again */
    CHECK_EQ(par_deque_bottom(d), 5);
    CHECK_EQ(par_deque_pop(d, &out), 1); /* newest */
    CHECK_EQ(task_id(&out), 7);
    CHECK(out.parent == NULL && out.node == NULL && out.size == 0);
    for (uint64_t want = 3; want >= 1; want--) {
        CHECK_EQ(par_deque_pop(d, &out), 1);
        CHECK_EQ(task_id(&out), want);
    }
    CHECK_EQ(par_deque_pop(d, &out), 0);
    CHECK_EQ(par_deque_steal(d, &out), 0);
    CHECK_EQ(par_deque_bottom(d), 2); /* the last pop won top's CAS at 1 */
    par_deque_free(d);
}

enum { THIEVES = 3 };
static par_deque *dq;
static _Atomic unsigned char *seen;
static _Atomic int owner_done;
static _Atomic uint64_t stolen, lost;

static void *thief(void *arg)
{
    (void)arg;
    par_task t;
    for (;;) {
        int rc = par_deque_steal(dq, &t);
        if (rc > 0) {
            atomic_fetch_add(&seen[task_id(&t)], 1);
            atomic_fetch_add(&stolen, 1);
        } else if (rc < 0) {
            atomic_fetch_add(&lost, 1);
        } else if (atomic_load(&owner_done)) {
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
    CHECK(seen != NULL);
    /* A small capacity, so the owner also rewrites slots thieves may be
     * reading, and fills the deque now and then. */
    dq = par_deque_new(16);
    CHECK(dq != NULL);
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, thief, NULL), 0);
    par_task t;
    uint64_t next = 0, full = 0;
    while (next < items) {
        /* A random burst of pushes, then pops of a random part of it: the
         * owner and the thieves meet at the last task often. */
        unsigned burst = 1 + test_rand(&seed) % 12, pops = test_rand(&seed) % (burst + 1);
        for (unsigned k = 0; k < burst && next < items; k++) {
            make_task(&t, next);
            if (par_deque_push(dq, &t) == 0)
                next++;
            else
                full++;
        }
        for (unsigned k = 0; k < pops; k++)
            if (par_deque_pop(dq, &t))
                atomic_fetch_add(&seen[task_id(&t)], 1);
    }
    while (par_deque_pop(dq, &t))
        atomic_fetch_add(&seen[task_id(&t)], 1);
    atomic_store(&owner_done, 1);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(par_deque_steal(dq, &t), 0);
    for (uint64_t i = 0; i < items; i++)
        CHECK_EQ(seen[i], 1);
    printf("task deque: %" PRIu64 " tasks, %" PRIu64 " stolen by %d thieves (%" PRIu64
           " lost races), full %" PRIu64 " times, each taken once and intact\n",
           items, atomic_load(&stolen), THIEVES, atomic_load(&lost), full);
    par_deque_free(dq);
    free((void *)seen);
    return 0;
}
