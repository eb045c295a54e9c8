/* The runtime's one work-stealing deque with the OpenMP-style layer's
 * records (par_task: a header of four words, PAR_TASK_HDR): owner LIFO,
 * thief FIFO, capacity, the backlog count, the pointer-task push that
 * writes words without a record, and exactly-once with intact payloads
 * under an owner racing thieves. Every third task carries a copied payload
 * of five words that all hold its id, so a torn copy that a thief kept
 * would show as a mismatch. test_deque runs the same deque with the
 * pool's records. */
#include <inttypes.h>

#include "check.h"
#include "par_internal.h"
#include "steal_stress.h"

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
    t->parent = (par_frame *)(uintptr_t)(id * 64 + 64); /* checked, never followed */
}

/* The task's id (steal_stress checks its range); a copied payload must
 * hold it in every word, and the header must be the one pushed. */
static uint64_t task_id(const par_task *t)
{
    uint64_t id = t->words[0];
    if (t->size) {
        CHECK_EQ(t->size, PAYLOAD_WORDS * 8);
        for (int i = 1; i < PAYLOAD_WORDS; i++)
            CHECK_EQ(t->words[i], id);
    }
    CHECK_EQ(t->fn, noop);
    CHECK_EQ(t->parent, (par_frame *)(uintptr_t)(id * 64 + 64));
    CHECK(t->node == NULL);
    return id;
}

static int push_task(up__deque *d, const par_task *t)
{
    return up__deque_push_record(d, t, PAR_TASK_HDR);
}

/* What up_task's fast path writes for a pointer task (par_deque_push_ptr
 * without its wake-up, which needs a team). */
static int push_ptr(up__deque *d, up_fn fn, par_frame *parent, void *arg)
{
    int64_t b = up__deque_bottom(d);
    if (!up__deque_room(d, b))
        return UP__DEQUE_FULL;
    uint64_t w[PAR_TASK_HDR + 1] = {(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)parent, 0, 0,
                                    (uint64_t)(uintptr_t)arg};
    up__deque_write_words(d, b, w, PAR_TASK_HDR + 1);
    up__deque_publish_sb(d, b);
    return UP__DEQUE_OK;
}

static void single_thread(void)
{
    up__deque d;
    CHECK_EQ(up__deque_init_records(&d, 4, PAR_TASK_HDR), 0);
    par_task t, out;
    CHECK_EQ(par_deque_pop(&d, &out), UP__DEQUE_EMPTY);
    CHECK_EQ(par_deque_steal(&d, &out), UP__DEQUE_EMPTY);
    CHECK(!up__deque_holds(&d, 1));
    for (uint64_t i = 0; i < 4; i++) {
        make_task(&t, i);
        CHECK_EQ(push_task(&d, &t), UP__DEQUE_OK);
    }
    CHECK(up__deque_holds(&d, 4) && !up__deque_holds(&d, 5));
    CHECK_EQ(push_task(&d, &t), UP__DEQUE_FULL);
    CHECK_EQ(par_deque_steal(&d, &out), UP__DEQUE_OK); /* oldest */
    CHECK_EQ(task_id(&out), 0);
    CHECK(up__deque_holds(&d, 3) && !up__deque_holds(&d, 4));
    CHECK_EQ(push_ptr(&d, noop, (par_frame *)(uintptr_t)(7 * 64 + 64), (void *)(uintptr_t)7),
             UP__DEQUE_OK); /* room again */
    CHECK_EQ(up__deque_bottom(&d), 5);
    CHECK_EQ(par_deque_pop(&d, &out), UP__DEQUE_OK); /* newest */
    CHECK_EQ(task_id(&out), 7);
    CHECK_EQ(out.size, 0);
    for (uint64_t want = 3; want >= 1; want--) {
        CHECK_EQ(par_deque_pop(&d, &out), UP__DEQUE_OK);
        CHECK_EQ(task_id(&out), want);
    }
    CHECK_EQ(par_deque_pop(&d, &out), UP__DEQUE_EMPTY);
    CHECK_EQ(par_deque_steal(&d, &out), UP__DEQUE_EMPTY);
    CHECK_EQ(up__deque_bottom(&d), 2); /* the last pop won top's CAS at 1 */
    up__deque_free(&d);
}

static int push_id(void *dq, uint64_t id)
{
    par_task t;
    make_task(&t, id);
    if (id % 3 == 1) /* the fast path's words, for a pointer task */
        return push_ptr(dq, t.fn, t.parent, (void *)(uintptr_t)id) == UP__DEQUE_OK;
    return push_task(dq, &t) == UP__DEQUE_OK;
}

static int pop_id(void *dq, uint64_t *id)
{
    par_task t;
    if (par_deque_pop(dq, &t) != UP__DEQUE_OK)
        return 0;
    *id = task_id(&t);
    return 1;
}

static int steal_id(void *dq, uint64_t *id)
{
    par_task t;
    int rc = par_deque_steal(dq, &t);
    if (rc == UP__DEQUE_OK)
        *id = task_id(&t);
    return rc == UP__DEQUE_OK ? 1 : rc == UP__DEQUE_LOST ? -1 : 0;
}

int main(void)
{
    single_thread();
    uint64_t seed = test_seed();
    uint64_t items = test_size("UP_TEST_DEQUE_ITEMS", 1000000);
    /* A small capacity, so the owner also rewrites slots thieves may be
     * reading, and fills the deque now and then. */
    up__deque dq;
    CHECK_EQ(up__deque_init_records(&dq, 16, PAR_TASK_HDR), 0);
    static const steal_ops ops = {push_id, pop_id, steal_id};
    steal_counts c = steal_stress(&dq, &ops, items, 12, &seed);
    printf("task deque: %" PRIu64 " tasks, %" PRIu64 " stolen by %d thieves (%" PRIu64
           " lost races), full %" PRIu64 " times, each taken once and intact\n",
           items, c.stolen, STEAL_THIEVES, c.lost, c.full);
    up__deque_free(&dq);
    return 0;
}
