/* Rounds of racing waiting tasks: submitter threads queue tasks on two
 * events and on the timer wheel while other threads set and reset the
 * events, and the main thread stops the pool at a random moment, then
 * either sets the events and waits, or destroys the pool with tasks still
 * waiting. Every accepted task runs exactly once (with up_cancelled() true
 * exactly when a destroy released it), every refused one never. Size:
 * UP_TEST_WAIT_ROUNDS rounds of UP_TEST_WAIT_PER tasks per submitter. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "marks.h"

enum { SUBMITTERS = 4, TOGGLERS = 2 };

static test_mark *accepted;
static up_pool *pool;
static up_event *evs[2];
static uint64_t per;
static _Atomic int toggling;

typedef struct ctx {
    unsigned index;
    uint64_t seed;
} ctx;

static void *submitter(void *arg)
{
    ctx *c = arg;
    uint64_t s = c->seed;
    for (uint64_t i = 0; i < per; i++) {
        uintptr_t id = c->index * per + i;
        uint64_t r = test_rand(&s);
        int rc;
        if ((r & 15) == 0)
            rc = up_submit_after(pool, (r >> 8) % 3000000u, marks_task, (void *)id);
        else
            rc = up_submit_on(pool, evs[r & 1], marks_task, (void *)id);
        CHECK(rc == UP_OK || rc == UP_ESTOPPED);
        if (rc == UP_OK)
            atomic_store_explicit(&accepted[id], 1, memory_order_relaxed);
    }
    return NULL;
}

static void *toggler(void *arg)
{
    ctx *c = arg;
    uint64_t s = c->seed;
    while (atomic_load(&toggling)) {
        uint64_t r = test_rand(&s);
        if (r & 2)
            up_event_set(evs[r & 1]);
        else
            up_event_reset(evs[r & 1]);
        if ((r & 0x70) == 0)
            sched_yield();
    }
    return NULL;
}

int main(void)
{
    uint64_t seed = test_seed();
    uint64_t rounds = test_size("UP_TEST_WAIT_ROUNDS", 20);
    per = test_size("UP_TEST_WAIT_PER", 50000);
    uint64_t n = per * SUBMITTERS;
    marks_runs = marks_alloc(n);
    accepted = marks_alloc(n);
    marks_cancelled = marks_alloc(n);
    uint64_t s = seed, total = 0, total_cancelled = 0;
    for (uint64_t round = 0; round < rounds; round++) {
        marks_clear(marks_runs, n);
        marks_clear(accepted, n);
        marks_clear(marks_cancelled, n);
        up_config cfg;
        up_config_init(&cfg);
        cfg.shard_min_workers = (unsigned)(test_rand(&s) % 2); /* a floor of zero too */
        cfg.shard_max_workers = 1 + (unsigned)(test_rand(&s) % 3);
        cfg.queue_capacity = 64;
        CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
        CHECK_EQ(up_event_create(&evs[0], pool), UP_OK);
        CHECK_EQ(up_event_create(&evs[1], pool), UP_OK);
        pthread_t th[SUBMITTERS + TOGGLERS];
        ctx cs[SUBMITTERS + TOGGLERS];
        atomic_store(&toggling, 1);
        for (unsigned i = 0; i < SUBMITTERS + TOGGLERS; i++) {
            cs[i] = (ctx){i, test_rand(&s)};
            CHECK_EQ(pthread_create(&th[i], NULL, i < SUBMITTERS ? submitter : toggler, &cs[i]), 0);
        }
        test_sleep_ms((unsigned)(test_rand(&s) % 40));
        int destroy_waiting = (int)(test_rand(&s) & 1);
        up_pool_stop(pool);
        for (unsigned i = 0; i < SUBMITTERS; i++)
            pthread_join(th[i], NULL);
        atomic_store(&toggling, 0);
        for (unsigned i = SUBMITTERS; i < SUBMITTERS + TOGGLERS; i++)
            pthread_join(th[i], NULL);
        if (!destroy_waiting) {
            up_event_set(evs[0]);
            up_event_set(evs[1]);
            CHECK_EQ(up_pool_stop_and_wait(pool), UP_OK);
            up_stats st;
            up_pool_stats(pool, &st);
            CHECK_EQ(st.waiting, 0);
            CHECK_EQ(st.executed, st.submitted);
        }
        /* One event destroyed before the pool (its waiters cancelled
         * then), the other after it (the pool's destroy cancels them). */
        int early = (int)(test_rand(&s) & 1);
        if (early)
            CHECK_EQ(up_event_destroy(evs[0]), UP_OK);
        CHECK_EQ(up_pool_destroy(pool), UP_OK);
        if (marks_wrong(marks_runs, n, accepted) != 0) {
            fprintf(stderr, "round %llu: a task ran other than as accepted\n",
                    (unsigned long long)round);
            CHECK(0);
        }
        uint64_t canc = marks_sum(marks_cancelled, n);
        if (!destroy_waiting)
            CHECK_EQ(canc, 0);
        total += marks_sum(accepted, n);
        total_cancelled += canc;
        if (!early)
            CHECK_EQ(up_event_destroy(evs[0]), UP_OK);
        CHECK_EQ(up_event_destroy(evs[1]), UP_OK);
    }
    printf("%llu rounds: %llu accepted tasks ran once each, %llu of them cancelled\n",
           (unsigned long long)rounds, (unsigned long long)total,
           (unsigned long long)total_cancelled);
    marks_free(marks_runs);
    marks_free(accepted);
    marks_free(marks_cancelled);
    return 0;
}
