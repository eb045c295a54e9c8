/* The runtime's one work-stealing deque (deque.h) with the pool's records
 * (up__task, a header of two words): owner LIFO, thief FIFO, capacity, a
 * copied payload, and exactly-once under an owner racing thieves.
 * test_par_deque runs the same deque with the parallel layer's records. */
#include "check.h"
#include "deque.h"
#include "steal_stress.h"

static void noop(void *arg) { (void)arg; }

static void single_thread(void)
{
    up__deque d;
    CHECK_EQ(up__deque_init(&d, 4), 0);
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

static int push_id(void *dq, uint64_t id)
{
    up__task t;
    up__task_set_arg(&t, noop, (void *)(uintptr_t)id);
    return up__deque_push(dq, &t) == UP__DEQUE_OK;
}

static int pop_id(void *dq, uint64_t *id)
{
    up__task t;
    if (up__deque_pop(dq, &t) != UP__DEQUE_OK)
        return 0;
    *id = t.words[0];
    return 1;
}

static int steal_id(void *dq, uint64_t *id)
{
    up__task t;
    int rc = up__deque_steal(dq, &t);
    if (rc == UP__DEQUE_OK)
        *id = t.words[0];
    return rc == UP__DEQUE_OK ? 1 : rc == UP__DEQUE_LOST ? -1 : 0;
}

int main(void)
{
    single_thread();
    uint64_t seed = test_seed();
    uint64_t items = test_size("UP_TEST_DEQUE_ITEMS", 1000000);
    up__deque dq;
    CHECK_EQ(up__deque_init(&dq, 64), 0);
    static const steal_ops ops = {push_id, pop_id, steal_id};
    steal_counts c = steal_stress(&dq, &ops, items, 8, &seed);
    printf("deque: %" PRIu64 " items, %" PRIu64 " stolen by %d thieves, each taken once\n", items,
           c.stolen, STEAL_THIEVES);
    up__deque_free(&dq);
    return 0;
}
