/* The waiting counters of up_stats count each waiting task once: stackless
 * tasks (up_submit_on) in waiting, parked stackful tasks (up_event_wait,
 * also timed, whose task has two records) in tasks_parked, so waiting +
 * tasks_parked is every task waiting; once the event is set, released
 * counts the stackless ones and tasks_resumed the parked ones (before, a
 * parked task counted in waiting too, twice for a timed wait, and in
 * released once resumed). */
#include <stdatomic.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "pool_helpers.h"

enum { PLAIN = 40, PARKED = 30, TIMED = 20 };

typedef struct waiters {
    up_event *ev;
    _Atomic unsigned started, done, bad;
} waiters;

static void stackless(void *arg)
{
    waiters *w = arg;
    atomic_fetch_add(&w->done, 1);
}

static void parker(void *arg)
{
    waiters *w = arg;
    atomic_fetch_add(&w->started, 1);
    int rc = up_event_wait(w->ev);
    if (rc != UP_OK && rc != UP_ECANCELED)
        atomic_fetch_add(&w->bad, 1);
    atomic_fetch_add(&w->done, 1);
}

static void timed_parker(void *arg)
{
    waiters *w = arg;
    atomic_fetch_add(&w->started, 1);
    int rc = up_event_wait_timeout(w->ev, 3600ull * 1000000000u);
    if (rc != UP_OK && rc != UP_ECANCELED)
        atomic_fetch_add(&w->bad, 1);
    atomic_fetch_add(&w->done, 1);
}

static void show(const char *when, const up_stats *st)
{
    printf("%s: waiting %llu, tasks_parked %llu, released %llu, cancelled %llu, "
           "tasks_resumed %llu\n",
           when, (unsigned long long)st->waiting, (unsigned long long)st->tasks_parked,
           (unsigned long long)st->released, (unsigned long long)st->cancelled,
           (unsigned long long)st->tasks_resumed);
}

/* PLAIN stackless and PARKED + TIMED parked tasks on one event of a
 * one-worker pool (so the parkers must park for the others to run). set:
 * the event releases them, otherwise a destroy does. */
static void round_of(int set)
{
    up_pool *p = test_one_worker_pool(0, NULL, NULL);
    waiters w = {0};
    CHECK_EQ(up_event_create(&w.ev, p), UP_OK);
    for (unsigned i = 0; i < PLAIN; i++)
        CHECK_EQ(up_submit_on(p, w.ev, stackless, &w), UP_OK);
    for (unsigned i = 0; i < PARKED + TIMED; i++)
        CHECK_EQ(up_submit(p, i < PARKED ? parker : timed_parker, &w), UP_OK);
    up_stats st;
    WAIT_UNTIL((up_pool_stats(p, &st), st.tasks_parked == PARKED + TIMED), 20000);
    show("all waiting", &st);
    CHECK_EQ(atomic_load(&w.started), PARKED + TIMED);
    CHECK_EQ(st.tasks_parked, PARKED + TIMED);
    CHECK_EQ(st.waiting, PLAIN);
    CHECK_EQ(st.released, 0);
    CHECK_EQ(st.tasks_resumed, 0);
    if (set) {
        CHECK_EQ(up_event_set(w.ev), UP_OK);
        WAIT_UNTIL(atomic_load(&w.done) == PLAIN + PARKED + TIMED, 20000);
        CHECK_EQ(atomic_load(&w.done), PLAIN + PARKED + TIMED);
        /* A timed wait's timer record is taken back when the event wins;
         * wait for the counts to settle (a record in flight). */
        WAIT_UNTIL((up_pool_stats(p, &st), st.waiting == 0 && st.tasks_parked == 0), 20000);
        show("after the set", &st);
        CHECK_EQ(st.waiting, 0);
        CHECK_EQ(st.tasks_parked, 0);
        CHECK_EQ(st.released, PLAIN);
        CHECK_EQ(st.cancelled, 0);
        CHECK_EQ(st.tasks_resumed, PARKED + TIMED);
        CHECK_EQ(up_pool_destroy(p), UP_OK);
    } else {
        CHECK_EQ(up_pool_destroy(p), UP_OK); /* resumes and runs each once, cancelled */
        CHECK_EQ(atomic_load(&w.done), PLAIN + PARKED + TIMED);
    }
    CHECK_EQ(atomic_load(&w.bad), 0);
    CHECK_EQ(up_event_destroy(w.ev), UP_OK);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    round_of(1);
    round_of(0);
    return 0;
}
