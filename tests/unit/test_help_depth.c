/* The one bound on helping depth (runtime/src/help.h). Threads that wait
 * run queued tasks meanwhile, and a task run that way may wait and help in
 * turn, one level deeper on the same stack each time. On workers with the
 * smallest stack a pool accepts (64 KiB) this test nests such helping far
 * deeper than the stack could hold, in the two ways the runtime helps:
 *
 * - groups: DEPTH tasks each wait for one group whose only task is held
 *   back, so every waiter helps by running the next waiting task;
 * - full queues: a chain of tasks, each submitting (waiting) into a full
 *   queue of a second pool whose only worker is held, so each submit runs
 *   a queued task and then its own, which submits again.
 *
 * With the bound, a waiter at the limit sleeps instead, the pool adds
 * workers for the blocked ones (groups), or the chain waits until the
 * second pool's worker is let go (queues); every task runs once and no
 * stack holds more than the limit of nested levels. Without the bound
 * (up__help_enter always 1), both parts overflow a 64 KiB stack and the
 * test dies with SIGSEGV. */
#include <stdatomic.h>
#include <stdio.h>

#include <ultrapool/group.h>

#include "check.h"
#include "help.h"
#include "pool_helpers.h"

#define STACK (64u * 1024u)

static unsigned depth_goal; /* tasks nested at most, per part */

/* How many tasks of a part are nested on this thread right now, and the
 * most seen on any thread. */
static _Thread_local unsigned tls_nest;
static _Atomic unsigned max_nest;
static _Atomic unsigned max_limit; /* largest help limit of a nesting thread */

static void nest_in(void)
{
    unsigned n = ++tls_nest;
    unsigned m = atomic_load(&max_nest);
    while (n > m && !atomic_compare_exchange_weak(&max_nest, &m, n))
        ;
    unsigned l = up__help_limit(), ml = atomic_load(&max_limit);
    while (l > ml && !atomic_compare_exchange_weak(&max_limit, &ml, l))
        ;
}

static void nest_out(void) { tls_nest--; }

static up_pool *small_stack_pool(unsigned max_workers)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = 1024;
    cfg.max_workers = max_workers;
    cfg.stack_size = STACK;
    cfg.spawn_delay_ns = 1000000;
    return test_pool_create(&cfg);
}

static void sleep_until_set(_Atomic int *flag)
{
    while (!atomic_load(flag))
        test_sleep_ms(1);
}

/* ---- groups waiting inside tasks ---------------------------------- */

static up_group *hold_group;
static _Atomic int hold_released;
static _Atomic unsigned waiters_started, waiters_done;

static int hold_task(void *arg)
{
    (void)arg;
    sleep_until_set(&hold_released);
    return 0;
}

static void waiter_task(void *arg)
{
    (void)arg;
    nest_in();
    atomic_fetch_add(&waiters_started, 1);
    CHECK_EQ(up_group_wait(hold_group), UP_OK);
    atomic_fetch_add(&waiters_done, 1);
    nest_out();
}

static void groups_nest(void)
{
    up_pool *p = small_stack_pool(0);
    atomic_store(&max_nest, 0);
    atomic_store(&max_limit, 0);
    CHECK_EQ(up_group_create(&hold_group, p, 0), UP_OK);
    CHECK_EQ(up_group_go(hold_group, hold_task, NULL), UP_OK);
    for (unsigned i = 0; i < depth_goal; i++)
        CHECK_EQ(up_submit_wait(p, waiter_task, NULL), UP_OK);
    /* Every waiter is waiting (nested in some worker's help, or on a new
     * worker the pool added); generous bound for a loaded machine. */
    WAIT_UNTIL(atomic_load(&waiters_started) == depth_goal, 20000);
    CHECK_EQ(atomic_load(&waiters_started), depth_goal);
    atomic_store(&hold_released, 1);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&waiters_done), depth_goal);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.executed, st.submitted);
    printf("groups: %u waiters, deepest nesting %u (limit %u), %u workers at peak\n", depth_goal,
           atomic_load(&max_nest), atomic_load(&max_limit), st.workers_peak);
    CHECK_LE(atomic_load(&max_nest), atomic_load(&max_limit) + 1);
    CHECK_EQ(up_group_destroy(hold_group), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* ---- submits into a full queue ------------------------------------ */

static up_pool *full_pool; /* one worker, held; a tiny queue */
static _Atomic int chain_released, worker_held;
static _Atomic unsigned chain_levels, chain_done, leaves_run, leaves_submitted;

static void hold_worker(void *arg)
{
    (void)arg;
    atomic_store(&worker_held, 1);
    sleep_until_set(&chain_released);
}

static void leaf(void *arg)
{
    (void)arg;
    atomic_fetch_add(&leaves_run, 1);
}

static uint64_t helped_so_far(void)
{
    up_stats st;
    up_pool_stats(full_pool, &st);
    return st.helped;
}

static void submit_leaf(void)
{
    CHECK_EQ(up_submit_wait(full_pool, leaf, NULL), UP_OK);
    atomic_fetch_add(&leaves_submitted, 1);
}

/* Level d: leaves until one found the queue full (that submit ran a queued
 * task to make room, then its own), one more to take that room, then level
 * d + 1, which finds the queue full again and, helping, runs on this
 * stack. Once the held worker is let go, the rest of the chain runs
 * without leaves (on that worker, whose submits go to its own deque: with
 * leaves piling up there it would fill and the worker would run each next
 * level inline, which is the program's own recursion, not helping). */
static void chain(void *arg)
{
    uintptr_t d = (uintptr_t)arg;
    nest_in();
    atomic_fetch_add(&chain_levels, 1);
    if (!atomic_load(&chain_released)) {
        for (unsigned i = 0; i < 4; i++) {
            uint64_t before = helped_so_far();
            submit_leaf();
            if (helped_so_far() != before)
                break;
        }
        submit_leaf();
    }
    if (d + 1 < depth_goal)
        CHECK_EQ(up_submit_wait(full_pool, chain, (void *)(d + 1)), UP_OK);
    atomic_fetch_add(&chain_done, 1);
    nest_out();
}

static void queues_nest(void)
{
    up_config cfg;
    test_fixed_config(&cfg, 1);
    cfg.queue_capacity = 2;
    cfg.submit_help = 2;
    full_pool = test_pool_create(&cfg);
    CHECK_EQ(up_submit(full_pool, hold_worker, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&worker_held), 10000); /* then the queue holds leaves only */
    unsigned filled = 0;
    while (up_submit(full_pool, leaf, NULL) == UP_OK)
        filled++;
    CHECK_GE(filled, 1);

    up_pool *p = small_stack_pool(1);
    atomic_store(&max_nest, 0);
    atomic_store(&max_limit, 0);
    CHECK_EQ(up_submit(p, chain, (void *)(uintptr_t)0), UP_OK);
    /* The chain runs until its stack's limit, then waits for room. Let the
     * held worker go once it has made no progress for 200 ms (or is done). */
    unsigned last = 0, still = 0;
    for (unsigned ms = 0; ms < 20000 && still < 200; ms++) {
        test_sleep_ms(1);
        unsigned now = atomic_load(&chain_levels);
        still = now == last ? still + 1 : 0;
        last = now;
    }
    unsigned before_release = atomic_load(&chain_levels);
    atomic_store(&chain_released, 1);
    /* The rest of the chain runs on either pool; stop only once it is done. */
    WAIT_UNTIL(atomic_load(&chain_done) == depth_goal, 20000);
    CHECK_EQ(atomic_load(&chain_done), depth_goal);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(full_pool), UP_OK);
    CHECK_EQ(atomic_load(&chain_levels), depth_goal);
    CHECK_EQ(atomic_load(&leaves_run), filled + atomic_load(&leaves_submitted));
    printf("queues: %u levels (%u before the held worker went), deepest nesting %u (limit %u)\n",
           depth_goal, before_release, atomic_load(&max_nest), atomic_load(&max_limit));
    CHECK_LE(atomic_load(&max_nest), atomic_load(&max_limit) + 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    CHECK_EQ(up_pool_destroy(full_pool), UP_OK);
}

int main(void)
{
    /* A nesting depth, not a count: never scaled. */
    depth_goal = (unsigned)test_param("UP_TEST_HELP_DEPTH", 512);
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("help limit here %u; nesting %u levels on %u KiB stacks\n", up__help_limit(), depth_goal,
           STACK / 1024);
    CHECK(up__help_limit() >= 1 && up__help_limit() <= UP__HELP_MAX_DEPTH);
    groups_nest();
    queues_nest();
    return 0;
}
