/* The OpenMP-style layer's task deque on its own: owner LIFO, thief FIFO,
 * capacity, the backlog count, and exactly-once with intact payloads under
 * an owner racing thieves. Every third task carries a copied payload of
 * five words that all hold its id, so a torn copy that a thief kept would
 * show as a mismatch. */
#include <inttypes.h>

#include "check.h"
#include "steal_stress.h"
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

/* The task's id (steal_stress checks its range); a copied payload must
 * hold it in every word. */
static uint64_t task_id(const par_task *t)
{
    uint64_t id = t->words[0];
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

static int push_id(void *dq, uint64_t id)
{
    par_task t;
    make_task(&t, id);
    return par_deque_push(dq, &t) == 0;
}

static int pop_id(void *dq, uint64_t *id)
{
    par_task t;
    if (!par_deque_pop(dq, &t))
        return 0;
    *id = task_id(&t);
    return 1;
}

static int steal_id(void *dq, uint64_t *id)
{
    par_task t;
    int rc = par_deque_steal(dq, &t);
    if (rc > 0)
        *id = task_id(&t);
    return rc;
}

int main(void)
{
    single_thread();
    uint64_t seed = test_seed();
    uint64_t items = test_size("UP_TEST_DEQUE_ITEMS", 1000000);
    /* A small capacity, so the owner also rewrites slots thieves may be
     * reading, and fills the deque now and then. */
    par_deque *dq = par_deque_new(16);
    CHECK(dq != NULL);
    static const steal_ops ops = {push_id, pop_id, steal_id};
    steal_counts c = steal_stress(dq, &ops, items, 12, &seed);
    printf("task deque: %" PRIu64 " tasks, %" PRIu64 " stolen by %d thieves (%" PRIu64
           " lost races), full %" PRIu64 " times, each taken once and intact\n",
           items, c.stolen, STEAL_THIEVES, c.lost, c.full);
    par_deque_free(dq);
    return 0;
}
