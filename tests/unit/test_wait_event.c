/* Events and stackless waiting tasks (<ultrapool/wait.h>): every task
 * accepted by up_submit_on runs exactly once, after its event is set, or,
 * when a destroy releases it, with up_cancelled() true; a refused one
 * never runs. Each task carries its id; a byte per id counts its runs and
 * a second byte records whether it saw up_cancelled(). Also the stop
 * rules, the counters, a large release, and the blocking fallbacks. */
#include <pthread.h>
#include <stdatomic.h>

#include <ultrapool/wait.h>

#include "check.h"
#include "counted.h"
#include "marks.h"
#include "pool_helpers.h"

static up_event *gate; /* when set, tasks check it was set when they run */
static _Atomic uint64_t early;

static void mark_after_gate(void *arg)
{
    if (!up_event_is_set(gate) && !up_cancelled())
        atomic_fetch_add(&early, 1);
    marks_task(arg);
}

static void alloc_ids(uint64_t n)
{
    marks_runs = marks_alloc(n);
    marks_cancelled = marks_alloc(n);
}

static void free_ids(void)
{
    marks_free(marks_runs);
    marks_free(marks_cancelled);
}

static up_pool *make_pool(unsigned workers)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = workers;
    cfg.queue_capacity = 64; /* small: waiting tasks must not need slots */
    return test_pool_create(&cfg);
}

static void check_all_once(uint64_t n, int cancelled)
{
    CHECK_EQ(marks_wrong(marks_runs, n, NULL), 0);
    CHECK_EQ(marks_sum(marks_cancelled, n), cancelled ? n : 0); /* each 0, or each 1 */
}

/* Set after and before the submits; reset; the counters. */
static void test_basic(void)
{
    const uint64_t n = 1000;
    alloc_ids(2 * n);
    up_pool *p = make_pool(2);
    CHECK_EQ(up_event_create(&gate, p), UP_OK);
    CHECK_EQ(up_event_is_set(gate), 0);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_on(p, gate, mark_after_gate, (void *)(uintptr_t)i), UP_OK);
    test_sleep_ms(20);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(marks_runs[i], 0);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, n);
    CHECK_EQ(st.released, 0);
    CHECK_EQ(up_event_set(gate), UP_OK);
    CHECK_EQ(up_event_set(gate), UP_OK); /* idempotent */
    CHECK_EQ(up_event_is_set(gate), 1);
    /* Set: submits run at once. */
    for (uint64_t i = n; i < 2 * n; i++)
        CHECK_EQ(up_submit_on(p, gate, mark_after_gate, (void *)(uintptr_t)i), UP_OK);
    WAIT_UNTIL((up_pool_stats(p, &st), st.executed == 2 * n), 10000);
    CHECK_EQ(up_event_reset(gate), UP_OK);
    CHECK_EQ(up_event_is_set(gate), 0);
    CHECK_EQ(up_event_reset(gate), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    check_all_once(2 * n, 0);
    CHECK_EQ(atomic_load(&early), 0);
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, 0);
    /* The submits on the set event are plain submits unless the queue was
     * full, when they became released records. */
    CHECK_GE(st.released, n);
    CHECK_EQ(st.cancelled, 0);
    CHECK_EQ(st.executed, st.submitted);
    CHECK_EQ(st.executed, 2 * n);
    CHECK_EQ(up_submit_on(p, gate, marks_task, NULL), UP_ESTOPPED);
    CHECK_EQ(up_event_destroy(gate), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free_ids();
    printf("basic: ok\n");
}

static void nop(void *arg) { (void)arg; }

static void test_errors(void)
{
    up_pool *p = make_pool(1), *q = make_pool(1);
    up_event *ev;
    CHECK_EQ(up_event_create(&ev, NULL), UP_EINVAL);
    CHECK(ev == NULL);
    CHECK_EQ(up_event_create(NULL, p), UP_EINVAL);
    CHECK_EQ(up_event_create(&ev, p), UP_OK);
    CHECK_EQ(up_submit_on(NULL, ev, nop, NULL), UP_EINVAL);
    CHECK_EQ(up_submit_on(p, NULL, nop, NULL), UP_EINVAL);
    CHECK_EQ(up_submit_on(p, ev, NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_submit_on(q, ev, nop, NULL), UP_EINVAL); /* another pool's event */
    CHECK_EQ(up_event_set(NULL), UP_EINVAL);
    CHECK_EQ(up_event_reset(NULL), UP_EINVAL);
    CHECK_EQ(up_event_is_set(NULL), 0);
    CHECK_EQ(up_event_destroy(NULL), UP_OK);
    CHECK_EQ(up_event_wait(NULL), UP_EINVAL);
    CHECK_EQ(up_event_wait_timeout(ev, 1000000), UP_ETIMEDOUT);
    CHECK_EQ(up_event_wait_timeout(ev, 0), UP_ETIMEDOUT);
    CHECK_EQ(up_event_destroy(ev), UP_OK);
    CHECK_EQ(up_pool_destroy(q), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("errors: ok\n");
}

/* Destroying the pool releases the waiters cancelled; the event outlives
 * the pool as a flag. Destroying an event releases its own waiters. */
static void test_destroy(void)
{
    const uint64_t n = 5000;
    alloc_ids(2 * n);
    up_pool *p = make_pool(2);
    up_event *a, *b;
    CHECK_EQ(up_event_create(&a, p), UP_OK);
    CHECK_EQ(up_event_create(&b, p), UP_OK);
    for (uint64_t i = 0; i < n; i++) {
        CHECK_EQ(up_submit_on(p, a, marks_task, (void *)(uintptr_t)i), UP_OK);
        CHECK_EQ(up_submit_on(p, b, marks_task, (void *)(uintptr_t)(n + i)), UP_OK);
    }
    CHECK_EQ(up_event_destroy(b), UP_OK); /* b's waiters run cancelled */
    up_stats st;
    WAIT_UNTIL((up_pool_stats(p, &st), st.cancelled == n), 10000);
    CHECK_EQ(st.cancelled, n);
    CHECK_EQ(st.waiting, n);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    check_all_once(2 * n, 1);
    CHECK_EQ(up_event_is_set(a), 0);
    CHECK_EQ(up_event_set(a), UP_OK);
    CHECK_EQ(up_event_is_set(a), 1);
    CHECK_EQ(up_event_wait(a), UP_OK);
    CHECK_EQ(up_event_destroy(a), UP_OK);
    free_ids();
    printf("destroy: ok\n");
}

/* stop_timeout reports the waiters left; a set after stop runs them; the
 * second stop waits for them. */
static void test_stop_rules(void)
{
    const uint64_t n = 2000;
    alloc_ids(n + 1);
    up_pool *p = make_pool(2);
    CHECK_EQ(up_event_create(&gate, p), UP_OK);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_on(p, gate, mark_after_gate, (void *)(uintptr_t)i), UP_OK);
    CHECK_EQ(up_pool_stop_timeout(p, 30000000), UP_ETIMEDOUT);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, n);
    CHECK_EQ(up_submit_on(p, gate, marks_task, (void *)(uintptr_t)n), UP_ESTOPPED);
    test_sleep_ms(20); /* the workers have exited: the set must start one */
    CHECK_EQ(up_event_set(gate), UP_OK);
    WAIT_UNTIL((up_pool_stats(p, &st), st.executed == n), 10000);
    CHECK_EQ(st.executed, n); /* ran without anyone waiting for the stop */
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    check_all_once(n, 0);
    CHECK_EQ(marks_runs[n], 0); /* refused: never ran */
    CHECK_EQ(atomic_load(&early), 0);
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, 0);
    CHECK_EQ(st.released, n);
    CHECK_EQ(up_event_destroy(gate), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free_ids();
    printf("stop rules: ok\n");
}

/* Racing submit_on, set, reset and stop from several threads: each
 * accepted id runs exactly once, each refused id never. */
typedef struct racer {
    up_pool *p;
    up_event *ev;
    uint64_t first, count;
    test_mark *accepted;
} racer;

static _Atomic int race_stop;

static void *race_submitter(void *arg)
{
    racer *r = arg;
    for (uint64_t i = r->first; i < r->first + r->count; i++) {
        int rc = up_submit_on(r->p, r->ev, marks_task, (void *)(uintptr_t)i);
        CHECK(rc == UP_OK || rc == UP_ESTOPPED);
        if (rc == UP_OK)
            atomic_store_explicit(&r->accepted[i], 1, memory_order_relaxed);
    }
    return NULL;
}

static void *race_toggler(void *arg)
{
    racer *r = arg;
    uint64_t s = r->first;
    while (!atomic_load(&race_stop)) {
        if (test_rand(&s) & 1)
            up_event_set(r->ev);
        else
            up_event_reset(r->ev);
        if ((test_rand(&s) & 7) == 0)
            sched_yield();
    }
    return NULL;
}

static void test_race(uint64_t seed)
{
    enum { SUBMITTERS = 3, TOGGLERS = 2 };
    uint64_t per = test_size("UP_TEST_WAIT_RACE", 100000);
    uint64_t n = per * SUBMITTERS;
    alloc_ids(n);
    test_mark *accepted = marks_alloc(n);
    up_pool *p = make_pool(2);
    up_event *ev;
    CHECK_EQ(up_event_create(&ev, p), UP_OK);
    racer rs[SUBMITTERS + TOGGLERS];
    pthread_t th[SUBMITTERS + TOGGLERS];
    atomic_store(&race_stop, 0);
    for (int i = 0; i < SUBMITTERS + TOGGLERS; i++) {
        rs[i] = (racer){p, ev, i < SUBMITTERS ? (uint64_t)i * per : seed + (uint64_t)i,
                        i < SUBMITTERS ? per : 0, accepted};
        CHECK_EQ(
            pthread_create(&th[i], NULL, i < SUBMITTERS ? race_submitter : race_toggler, &rs[i]),
            0);
    }
    /* Stop somewhere in the middle of the submits. */
    uint64_t s = seed;
    test_sleep_ms((unsigned)(test_rand(&s) % 30));
    up_pool_stop(p);
    for (int i = 0; i < SUBMITTERS; i++)
        pthread_join(th[i], NULL);
    atomic_store(&race_stop, 1);
    for (int i = SUBMITTERS; i < SUBMITTERS + TOGGLERS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_event_set(ev), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(marks_wrong(marks_runs, n, accepted), 0);
    CHECK_EQ(marks_sum(marks_cancelled, n), 0);
    uint64_t acc = marks_sum(accepted, n);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, 0);
    CHECK_EQ(st.executed, acc);
    CHECK_EQ(st.executed, st.submitted);
    printf("race: %llu of %llu accepted, each ran once\n", (unsigned long long)acc,
           (unsigned long long)n);
    CHECK_EQ(up_event_destroy(ev), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    marks_free(accepted);
    free_ids();
}

/* One set racing with submits, and no set after it: a submit that loses
 * its race with the set must run at once on its own (the event stays set),
 * not wait for a set that never comes. */
/* busy counts the submitters between their look at go and their count
 * of an accepted submit: once go is 0 and busy is 0, accepted is final
 * for the round (each submitter adds to busy, then reads go; the round
 * stores go, then reads busy: sequentially consistent, so one of the two
 * sees the other's write). */
typedef struct set_race {
    up_pool *p;
    up_event *ev;
    _Atomic int go, stop, busy;
    _Atomic uint64_t accepted;
} set_race;

static void *set_race_submitter(void *arg)
{
    set_race *r = arg;
    while (!atomic_load(&r->stop)) {
        atomic_fetch_add(&r->busy, 1);
        if (!atomic_load(&r->go)) {
            atomic_fetch_sub(&r->busy, 1);
            sched_yield();
            continue;
        }
        if (up_submit_on(r->p, r->ev, counted_task, NULL) == UP_OK)
            atomic_fetch_add(&r->accepted, 1);
        atomic_fetch_sub(&r->busy, 1);
    }
    return NULL;
}

static void test_set_race(uint64_t seed)
{
    enum { THREADS = 3 };
    uint64_t rounds = test_size("UP_TEST_WAIT_SET_ROUNDS", 200);
    set_race r = {0};
    r.p = make_pool(2);
    CHECK_EQ(up_event_create(&r.ev, r.p), UP_OK);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, set_race_submitter, &r), 0);
    uint64_t s = seed;
    for (uint64_t k = 0; k < rounds; k++) {
        /* Submits before the set and after it, the set at a random one. */
        uint64_t base = atomic_load(&r.accepted), before = 1 + test_rand(&s) % 2000;
        atomic_store(&r.go, 1);
        while (atomic_load(&r.accepted) < base + before)
            sched_yield();
        CHECK_EQ(up_event_set(r.ev), UP_OK);
        base = atomic_load(&r.accepted);
        while (atomic_load(&r.accepted) < base + 100)
            sched_yield();
        atomic_store(&r.go, 0);
        /* The submitters finish their call: a fixed 1 ms was not enough
         * for one held off its CPU (14,618 runs of 14,619 accepted, under
         * ThreadSanitizer). */
        while (atomic_load(&r.busy) != 0)
            sched_yield();
        WAIT_UNTIL(atomic_load(&counted_ran) == atomic_load(&r.accepted), 5000);
        CHECK_EQ(atomic_load(&counted_ran), atomic_load(&r.accepted));
        CHECK_EQ(up_event_is_set(r.ev), 1);
        CHECK_EQ(up_event_reset(r.ev), UP_OK);
        /* The next round's early submits wait for its set. */
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_event_set(r.ev), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(r.p), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), atomic_load(&r.accepted));
    printf("set race: %llu rounds, %llu tasks\n", (unsigned long long)rounds,
           (unsigned long long)atomic_load(&r.accepted));
    CHECK_EQ(up_event_destroy(r.ev), UP_OK);
    CHECK_EQ(up_pool_destroy(r.p), UP_OK);
}

/* Many waiters on one event, released with one set and drained. */
static void test_large(void)
{
    uint64_t n = test_size("UP_TEST_WAIT_LARGE", 1000000);
    alloc_ids(n);
    up_pool *p = make_pool(2);
    CHECK_EQ(up_event_create(&gate, p), UP_OK);
    uint64_t t0 = test_now_ns();
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_on(p, gate, mark_after_gate, (void *)(uintptr_t)i), UP_OK);
    uint64_t t1 = test_now_ns();
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.waiting, n);
    CHECK_EQ(up_event_set(gate), UP_OK);
    uint64_t t2 = test_now_ns();
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    uint64_t t3 = test_now_ns();
    check_all_once(n, 0);
    CHECK_EQ(atomic_load(&early), 0);
    up_pool_stats(p, &st);
    CHECK_EQ(st.released, n);
    CHECK_EQ(st.executed, n);
    printf("large: %llu waiters, launch %.1f ms, set %.3f ms, drain %.1f ms\n",
           (unsigned long long)n, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
           (double)(t3 - t2) / 1e6);
    CHECK_EQ(up_event_destroy(gate), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    free_ids();
}

/* The blocking fallback: a thread blocked in up_event_wait returns on
 * set; up_sleep_ns sleeps at least its time. */
static void *waiter(void *arg)
{
    CHECK_EQ(up_event_wait(arg), UP_OK);
    return NULL;
}

static void test_blocking(void)
{
    up_pool *p = make_pool(1);
    up_event *ev;
    CHECK_EQ(up_event_create(&ev, p), UP_OK);
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, waiter, ev), 0);
    test_sleep_ms(10);
    CHECK_EQ(up_event_set(ev), UP_OK);
    CHECK_EQ(up_event_reset(ev), UP_OK); /* a set seen by waiters even if reset at once */
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_sleep_ns(3000000), UP_OK);
    CHECK_GE(test_now_ns() - t0, 3000000);
    CHECK_EQ(up_sleep_ns(0), UP_OK);
    CHECK_EQ(up_yield(), UP_OK);
    CHECK_EQ(up_cancelled(), 0);
    CHECK_EQ(up_event_destroy(ev), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("blocking: ok\n");
}

int main(void)
{
    uint64_t seed = test_seed();
    test_basic();
    test_errors();
    test_destroy();
    test_stop_rules();
    test_race(seed);
    test_set_race(seed);
    test_large();
    test_blocking();
    return 0;
}
