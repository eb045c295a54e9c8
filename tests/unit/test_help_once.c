/* up__help_once, the runtime's "run one queued task of this pool here":
 * from an outside thread it takes a task from the shard queues, or steals
 * one from a worker's deque; from inside a worker it takes the worker's
 * own newest nested task first; it returns 0 when nothing is queued; it
 * runs nothing of a pool with a start hook on a thread that is not one of
 * that pool's workers; and tasks it runs count as executed, so a waiting
 * stop still balances. */
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "gate.h"
#include "pool_helpers.h"
#include "pool_internal.h"

static test_gate gate;
static _Atomic int ran_count;
static pthread_t ran_on;

static void record(void *arg)
{
    *(int *)arg = 1;
    ran_on = pthread_self();
    atomic_fetch_add(&ran_count, 1);
}

static void *hook(void *ctx, unsigned shard, unsigned worker)
{
    (void)shard;
    (void)worker;
    return ctx;
}

static up_pool *one_worker_pool(int with_hook)
{
    return test_one_worker_pool(0, with_hook ? hook : NULL, NULL);
}

/* The only worker is blocked; a queued task runs on this thread. */
static void outside_thread_takes_queued(void)
{
    up_pool *p = one_worker_pool(0);
    test_gate_reset(&gate);
    CHECK_EQ(up_submit(p, test_gate_task, &gate), UP_OK);
    test_gate_wait_running(&gate, 1);
    CHECK_EQ(up__help_once(p), 0); /* nothing queued */
    int ran = 0;
    CHECK_EQ(up_submit(p, record, &ran), UP_OK);
    CHECK_EQ(up__help_once(p), 1);
    CHECK_EQ(ran, 1);
    CHECK(pthread_equal(ran_on, pthread_self()));
    CHECK_EQ(up__help_once(p), 0);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.helped, 1);
    test_gate_open(&gate);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_pool_stats(p, &st);
    CHECK_EQ(st.executed, st.submitted);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* A task pushes a nested task into its worker's deque and then blocks:
 * an outside thread steals it from the deque. */
static int stolen_ran;
static void push_then_block(void *arg)
{
    up_pool *p = arg;
    CHECK_EQ(up_submit(p, record, &stolen_ran), UP_OK);
    test_gate_task(&gate);
}

static void outside_thread_steals_from_deque(void)
{
    up_pool *p = one_worker_pool(0);
    test_gate_reset(&gate);
    CHECK_EQ(up_submit(p, push_then_block, p), UP_OK);
    test_gate_wait_running(&gate, 1);
    CHECK_EQ(up__help_once(p), 1);
    CHECK_EQ(stolen_ran, 1);
    CHECK(pthread_equal(ran_on, pthread_self()));
    test_gate_open(&gate);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Inside a worker: the newest nested task first (the worker's own deque). */
typedef struct nested {
    up_pool *p;
    int first, second;
    int helped_first, helped_second, helped_none;
    _Atomic int done;
} nested;

static void inside_worker(void *arg)
{
    nested *n = arg;
    CHECK_EQ(up_submit(n->p, record, &n->first), UP_OK);
    CHECK_EQ(up_submit(n->p, record, &n->second), UP_OK);
    n->helped_second = up__help_once(n->p) == 1 && n->second == 1 && n->first == 0 &&
                       pthread_equal(ran_on, pthread_self());
    n->helped_first = up__help_once(n->p) == 1 && n->first == 1;
    n->helped_none = up__help_once(n->p) == 0;
    atomic_store(&n->done, 1);
}

static void worker_takes_own_newest(void)
{
    up_pool *p = one_worker_pool(0);
    nested n = {.p = p};
    CHECK_EQ(up_submit(p, inside_worker, &n), UP_OK);
    WAIT_UNTIL(atomic_load(&n.done), 10000);
    CHECK_EQ(atomic_load(&n.done), 1);
    CHECK_EQ(n.helped_second, 1);
    CHECK_EQ(n.helped_first, 1);
    CHECK_EQ(n.helped_none, 1);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.executed, st.submitted);
    CHECK_EQ(st.executed, 3);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* A pool with a start hook: outside threads run none of its tasks. */
static void hook_pool_not_helped_from_outside(void)
{
    up_pool *p = one_worker_pool(1);
    test_gate_reset(&gate);
    CHECK_EQ(up_submit(p, test_gate_task, &gate), UP_OK);
    test_gate_wait_running(&gate, 1);
    int ran = 0;
    CHECK_EQ(up_submit(p, record, &ran), UP_OK);
    CHECK_EQ(up__help_once(p), 0);
    CHECK_EQ(ran, 0);
    test_gate_open(&gate);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    CHECK_EQ(ran, 1); /* its worker ran it */
}

int main(void)
{
    test_seed(); /* the schedule varies, the sizes do not */
    outside_thread_takes_queued();
    outside_thread_steals_from_deque();
    worker_takes_own_newest();
    hook_pool_not_helped_from_outside();
    printf("help_once: ok (%d recorded runs)\n", atomic_load(&ran_count));
    return 0;
}
