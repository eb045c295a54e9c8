/* The soak run (scripts/test soak --minutes N; docs/testing.md, "Soak").
 *
 * Rounds follow one another until the time is up. Each round creates a
 * pool of a random configuration, runs 1 to 4 submitter threads that each
 * do a random sequence of operations (every submit form, events, timers,
 * waits inside and outside tasks, regions, groups, semaphores, channels),
 * ends with one of the stop forms (some racing the submitters), destroys
 * the pool and checks the accounting: every accepted task ran exactly
 * once, every rejected one never, each group's tasks ran or were skipped,
 * nothing was accepted after a stop had returned.
 *
 * Every choice (configurations, operations, their sizes, what each task
 * does, from its id) follows from the seed, so --seed S replays each
 * thread's sequence of operations (the threads' interleaving is the
 * machine's, and with it which ids the tasks get); --first-round R
 * starts at round R of that sequence. A violation prints the seed and the
 * round and exits 1; a round that does not end within --hang seconds is
 * reported the same way (exit 2).
 *
 *   soak [--minutes M | --seconds S] [--seed S] [--first-round R]
 *        [--rounds N] [--progress S] [--hang S] [--skip-actions A,B...]
 * --skip-actions turns task actions (spin, sleep, yield, event_wait,
 * nested, sem, deadlk) into plain runs, to narrow a failure down.
 * Without a duration it runs 15 s scaled by UP_TEST_SCALE (at least 3 s),
 * its ctest entry. */
#include "soak.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

soak_round R;
_Atomic unsigned char *soak_runs;
unsigned char *soak_expect;
_Atomic uint64_t soak_ops[OP_KINDS], soak_acts[ACT_KINDS];
_Atomic uint64_t soak_accepted, soak_rejected, soak_group_accepted, soak_group_ran,
    soak_group_skipped;

static uint64_t seed0;
static _Atomic uint64_t round_started_ns, round_now;
static _Atomic uint64_t n_overload, n_timedout, n_stopped, n_ran, n_timer_runs, n_timer_skipped;
static unsigned max_workers_seen;

static const char *op_names[OP_KINDS] = {"submit", "submit_wait",  "submit_timeout", "submit_copy",
                                         "typed",  "submit_on",    "submit_after",   "event",
                                         "timer",  "region",       "group",          "sem",
                                         "chan",   "wait_outside", "idle",           "stats"};
static const char *act_names[ACT_KINDS] = {"plain",      "spin",   "sleep", "yield",
                                           "event_wait", "nested", "sem",   "deadlk"};
enum { END_STOP, END_STOP_AND_WAIT, END_STOP_TIMEOUT, END_DESTROY, END_RACE, END_KINDS };
static const char *end_names[END_KINDS] = {"stop", "stop_and_wait", "stop_timeout", "destroy",
                                           "stop_racing"};
static uint64_t n_ends[END_KINDS];

void soak_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "soak: FAILED seed %" PRIu64 " round %" PRIu64 ": ", seed0, R.index);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nsoak: replay with --seed %" PRIu64 " --first-round %" PRIu64 "\n", seed0,
            R.index);
    fflush(stderr);
    _exit(1);
}

uint64_t soak_mix(uint64_t x) { return test_rand(&x); }

uint64_t soak_new_id(void)
{
    uint64_t id = atomic_fetch_add(&R.next_id, 1);
    return id < SOAK_IDS ? id : SOAK_NO_ID;
}

void soak_submitted(uint64_t id, int rc, int stopped, const char *what)
{
    if (rc == UP_OK) {
        if (stopped)
            soak_fail("%s accepted task %" PRIu64 " after a stop had returned", what, id);
        soak_expect[id] = EXPECT_ONCE;
        atomic_fetch_add_explicit(&soak_accepted, 1, memory_order_relaxed);
        return;
    }
    soak_expect[id] = EXPECT_NEVER;
    atomic_fetch_add_explicit(&soak_rejected, 1, memory_order_relaxed);
    if (rc == UP_ESTOPPED && atomic_load(&R.stop_begun))
        atomic_fetch_add_explicit(&n_stopped, 1, memory_order_relaxed);
    else if (rc == UP_EOVERLOAD)
        atomic_fetch_add_explicit(&n_overload, 1, memory_order_relaxed);
    else if (rc == UP_ETIMEDOUT)
        atomic_fetch_add_explicit(&n_timedout, 1, memory_order_relaxed);
    else
        soak_fail("%s of task %" PRIu64 " returned %s (%s)", what, id, up_strerror(rc),
                  up_last_error());
}

/* Task actions turned off by --skip-actions (bit per ACT_*), to tell
 * which one a failure needs. */
static unsigned skipped_acts;

/* A task's action, from its id: most tasks only count their run. */
static unsigned action_of(uint64_t id)
{
    unsigned a = (unsigned)(soak_mix(R.seed ^ id) % 40);
    return a < ACT_KINDS && !(skipped_acts >> a & 1) ? a : ACT_NONE;
}

void soak_task_body(uint64_t id)
{
    if (atomic_fetch_add_explicit(&soak_runs[id], 1, memory_order_relaxed) != 0)
        soak_fail("task %" PRIu64 " ran twice", id);
    atomic_fetch_add_explicit(&n_ran, 1, memory_order_relaxed);
    uint64_t h = soak_mix(R.seed ^ id ^ 0x5a5a);
    unsigned act = action_of(id);
    atomic_fetch_add_explicit(&soak_acts[act], 1, memory_order_relaxed);
    switch (act) {
    case ACT_SPIN:
        test_spin((unsigned)(h % 20000));
        break;
    case ACT_SLEEP: /* parks on a worker: short naps and wheel sleeps */
        up_sleep_ns(h % 4 ? h % 40000 : h % 2000000);
        break;
    case ACT_YIELD:
        up_yield();
        break;
    case ACT_EVENT_WAIT: {
        int rc = up_event_wait_timeout(R.ev[h & 1], 1000000 + h % 20000000);
        if (rc != UP_OK && rc != UP_ETIMEDOUT && rc != UP_ECANCELED)
            soak_fail("up_event_wait_timeout in task %" PRIu64 ": %s", id, up_strerror(rc));
        break;
    }
    case ACT_NESTED: {
        uint64_t child = soak_new_id();
        if (child == SOAK_NO_ID)
            break;
        int stopped = atomic_load(&R.stop_returned);
        int rc = h & 1 ? up_submit(R.pool, soak_run_ptr, (void *)(uintptr_t)child)
                       : up_submit_wait(R.pool, soak_run_ptr, (void *)(uintptr_t)child);
        soak_submitted(child, rc, stopped, "nested submit");
        break;
    }
    case ACT_SEM: {
        uint64_t w = 1 + h % R.sem_cap;
        if (up_sem_acquire_timeout(R.sem, w, 2000000) == UP_OK) {
            if (atomic_fetch_add(&R.sem_units, w) + w > R.sem_cap)
                soak_fail("semaphore over capacity in task %" PRIu64, id);
            atomic_fetch_sub(&R.sem_units, w);
            if (up_sem_release(R.sem, w) != UP_OK)
                soak_fail("up_sem_release(%" PRIu64 ") refused", w);
        }
        break;
    }
    case ACT_DEADLK: /* waiting stops and destroys are refused from the pool's own tasks */
        if (up_current_pool() == R.pool) {
            if (up_pool_stop_and_wait(R.pool) != UP_EDEADLK)
                soak_fail("up_pool_stop_and_wait inside task %" PRIu64 " not UP_EDEADLK", id);
            if (up_pool_destroy(R.pool) != UP_EDEADLK)
                soak_fail("up_pool_destroy inside task %" PRIu64 " not UP_EDEADLK", id);
        }
        break;
    default:
        break;
    }
}

void soak_run_ptr(void *arg) { soak_task_body((uint64_t)(uintptr_t)arg); }

/* Copied payloads carry their id and a check word, sized 16 to 40 bytes. */
typedef struct soak_item {
    uint64_t id, check;
} soak_item;
static void run_copy(void *arg)
{
    soak_item it;
    memcpy(&it, arg, sizeof it);
    if (it.check != soak_mix(it.id))
        soak_fail("copied payload of task %" PRIu64 " damaged", it.id);
    soak_task_body(it.id);
}
static void typed_handler(soak_item *it)
{
    if (it->check != soak_mix(it->id))
        soak_fail("typed payload of task %" PRIu64 " damaged", it->id);
    soak_task_body(it->id);
}
UP_TYPED(soak_typed, soak_item, typed_handler)

/* A burst of 1 to 64 tasks through one submit form. */
static void op_submit(int kind, uint64_t *rng)
{
    unsigned n = 1 + (unsigned)(test_rand(rng) % 64);
    uint64_t tmo = test_rand(rng) % 200000;
    for (unsigned i = 0; i < n; i++) {
        uint64_t id = soak_new_id();
        if (id == SOAK_NO_ID)
            return;
        void *arg = (void *)(uintptr_t)id;
        unsigned char buf[UP_PAYLOAD_MAX] = {0};
        soak_item it = {id, soak_mix(id)};
        memcpy(buf, &it, sizeof it);
        size_t size = sizeof it + test_rand(rng) % (UP_PAYLOAD_MAX - sizeof it + 1);
        int stopped = atomic_load(&R.stop_returned), rc;
        switch (kind) {
        case OP_SUBMIT:
            rc = up_submit(R.pool, soak_run_ptr, arg);
            break;
        case OP_SUBMIT_WAIT:
            rc = up_submit_wait(R.pool, soak_run_ptr, arg);
            break;
        case OP_SUBMIT_TIMEOUT:
            rc = up_submit_timeout(R.pool, soak_run_ptr, arg, tmo);
            break;
        case OP_SUBMIT_COPY:
            rc = i & 1 ? up_submit_copy(R.pool, run_copy, buf, size)
                       : up_submit_copy_wait(R.pool, run_copy, buf, size);
            break;
        case OP_TYPED:
            rc = i & 1 ? soak_typed_submit(R.pool, it) : soak_typed_submit_wait(R.pool, it);
            break;
        case OP_SUBMIT_ON:
            rc = up_submit_on(R.pool, R.ev[i & 1], soak_run_ptr, arg);
            break;
        default: { /* OP_SUBMIT_AFTER: 0 to 3 ms, or never when the round ends in a destroy */
            uint64_t d = test_rand(rng);
            d = R.never_ok && d % 50 == 0 ? UINT64_MAX : d % 3000000;
            rc = up_submit_after(R.pool, d, soak_run_ptr, arg);
            break;
        }
        }
        soak_submitted(id, rc, stopped, op_names[kind]);
    }
}

static void op_event(uint64_t *rng)
{
    up_event *ev = R.ev[test_rand(rng) & 1];
    if (R.never_ok && test_rand(rng) % 3 == 0)
        up_event_reset(ev);
    else
        up_event_set(ev);
}

/* A periodic or one-shot timer, stopped by its owner or by its own run. */
typedef struct tick {
    up_timer *t;
    uint64_t self_stop_at;
    _Atomic uint64_t runs;
    _Atomic int in_run, claimed, done, stopped;
} tick;

static void tick_run(void *arg)
{
    tick *k = arg;
    if (atomic_exchange(&k->in_run, 1))
        soak_fail("two runs of one timer at once");
    if (atomic_load(&k->stopped))
        soak_fail("a timer ran after up_timer_stop returned");
    uint64_t n = atomic_fetch_add(&k->runs, 1) + 1;
    if (n == k->self_stop_at && !atomic_exchange(&k->claimed, 1)) {
        int rc = up_timer_stop(k->t);
        if (rc != UP_EDEADLK)
            soak_fail("up_timer_stop from the timer's run returned %s", up_strerror(rc));
        atomic_store(&k->in_run, 0);
        atomic_store(&k->done, 1); /* the last touch of k: its owner frees it */
        return;
    }
    atomic_store(&k->in_run, 0);
}

static void op_timer(uint64_t *rng)
{
    tick *k = calloc(1, sizeof *k);
    CHECK(k);
    uint64_t first = test_rand(rng) % 2000000;
    uint64_t period = test_rand(rng) % 4 ? 100000 + test_rand(rng) % 2000000 : 0;
    k->self_stop_at = test_rand(rng) % 4 == 0 ? 1 + test_rand(rng) % 3 : 0;
    int rc = up_timer_start(&k->t, R.pool, first, period, tick_run, k);
    if (rc != UP_OK) {
        if (rc != UP_ESTOPPED || !atomic_load(&R.stop_begun))
            soak_fail("up_timer_start returned %s (%s)", up_strerror(rc), up_last_error());
        free(k);
        return;
    }
    test_sleep_ms((unsigned)(test_rand(rng) % 8));
    if (!atomic_exchange(&k->claimed, 1)) {
        atomic_fetch_add(&n_timer_skipped, up_timer_skipped(k->t));
        if ((rc = up_timer_stop(k->t)) != UP_OK)
            soak_fail("up_timer_stop returned %s", up_strerror(rc));
        atomic_store(&k->stopped, 1);
        test_sleep_ms(1); /* a run starting now would see stopped */
    } else {
        while (!atomic_load(&k->done))
            test_sleep_ms(1);
    }
    atomic_fetch_add(&n_timer_runs, atomic_load(&k->runs));
    free(k);
}

/* The waits outside tasks: they block the calling thread. */
static void op_wait_outside(uint64_t *rng)
{
    switch (test_rand(rng) % 3) {
    case 0:
        up_sleep_ns(test_rand(rng) % 300000);
        break;
    case 1:
        up_yield();
        break;
    default: {
        int rc = up_event_wait_timeout(R.ev[test_rand(rng) & 1], test_rand(rng) % 2000000);
        if (rc != UP_OK && rc != UP_ETIMEDOUT)
            soak_fail("up_event_wait_timeout outside tasks: %s", up_strerror(rc));
    }
    }
}

static void op_stats(void)
{
    up_stats st;
    up_pool_stats(R.pool, &st);
    if (st.executed > st.submitted)
        soak_fail("stats: executed %" PRIu64 " > submitted %" PRIu64, st.executed, st.submitted);
}

static void do_op(uint64_t *rng)
{
    unsigned k = (unsigned)(test_rand(rng) % OP_KINDS);
    atomic_fetch_add_explicit(&soak_ops[k], 1, memory_order_relaxed);
    switch (k) {
    case OP_EVENT:
        op_event(rng);
        break;
    case OP_TIMER:
        op_timer(rng);
        break;
    case OP_REGION:
        soak_op_region(rng);
        break;
    case OP_GROUP:
        soak_op_group(rng);
        break;
    case OP_SEM:
        soak_op_sem(rng);
        break;
    case OP_CHAN:
        soak_op_chan(rng);
        break;
    case OP_WAIT_OUTSIDE:
        op_wait_outside(rng);
        break;
    case OP_IDLE:
        test_sleep_ms((unsigned)(test_rand(rng) % 25));
        break; /* workers park, retire */
    case OP_STATS:
        op_stats();
        break;
    default:
        op_submit((int)k, rng);
        break;
    }
}

typedef struct submitter {
    pthread_t th;
    uint64_t rng;
    unsigned ops;
} submitter;

static void *submitter_main(void *arg)
{
    submitter *s = arg;
    for (unsigned i = 0; i < s->ops; i++)
        do_op(&s->rng);
    return NULL;
}

static void stop_task(void *arg)
{
    (void)arg;
    up_pool_stop(R.pool);
    atomic_store(&R.stop_returned, 1);
}

/* Stops the pool the way `how` says (0 stop, 1 stop_and_wait, 2 timed
 * stops, 3 a task that stops it), then tells the submitters. */
static void stop_pool(int how, uint64_t *rng)
{
    if (how == 1 || how == 2) { /* events set: a waiting stop waits for every waiting task */
        up_event_set(R.ev[0]);
        up_event_set(R.ev[1]);
    }
    atomic_store(&R.stop_begun, 1);
    int rc;
    switch (how) {
    case 0:
        up_pool_stop(R.pool);
        break;
    case 1:
        if ((rc = up_pool_stop_and_wait(R.pool)) != UP_OK)
            soak_fail("up_pool_stop_and_wait returned %s", up_strerror(rc));
        break;
    case 2:
        while ((rc = up_pool_stop_timeout(R.pool, test_rand(rng) % 5000000)) != UP_OK)
            if (rc != UP_ETIMEDOUT)
                soak_fail("up_pool_stop_timeout returned %s", up_strerror(rc));
        break;
    default:
        if (up_submit_wait(R.pool, stop_task, NULL) == UP_OK) {
            while (!atomic_load(&R.stop_returned))
                test_sleep_ms(1);
            return;
        }
        up_pool_stop(R.pool);
        break;
    }
    atomic_store(&R.stop_returned, 1);
}

typedef struct stopper {
    pthread_t th;
    uint64_t rng;
} stopper;

static void *stopper_main(void *arg)
{
    stopper *s = arg;
    test_sleep_ms((unsigned)(test_rand(&s->rng) % 40));
    stop_pool((int)(test_rand(&s->rng) % 4), &s->rng);
    return NULL;
}

static void random_config(up_config *cfg, uint64_t *rng)
{
    static const unsigned queues[] = {16, 64, 256, 1024};
    up_config_init(cfg);
    cfg->shards = 1 + (unsigned)(test_rand(rng) % 3);
    cfg->queue_capacity = queues[test_rand(rng) % 4];
    cfg->shard_max_workers = 1 + (unsigned)(test_rand(rng) % 8);
    cfg->shard_min_workers = (unsigned)(test_rand(rng) % 2);
    cfg->max_workers = test_rand(rng) % 2 ? 0 : cfg->shards + (unsigned)(test_rand(rng) % 8);
    cfg->idle_timeout_ns = 1000000 + test_rand(rng) % 100000000;
    cfg->submit_help = (int)(test_rand(rng) % 3);
    cfg->spin = test_rand(rng) % 2 ? 256 : (unsigned)(test_rand(rng) % 32);
}

/* One round: its choices follow from its index and the seed alone. */
static void run_round(uint64_t index)
{
    memset(&R, 0, sizeof R);
    R.index = index;
    R.seed = soak_mix(seed0 ^ (index * 0x9e3779b97f4a7c15ull));
    uint64_t rng = R.seed;
    int end = (int)(test_rand(&rng) % END_KINDS);
    R.never_ok = end == END_STOP || end == END_DESTROY;
    n_ends[end]++;
    up_config cfg;
    random_config(&cfg, &rng);
    int rc = up_pool_create(&R.pool, &cfg);
    if (rc != UP_OK)
        soak_fail("up_pool_create returned %s (%s)", up_strerror(rc), up_last_error());
    CHECK_EQ(up_event_create(&R.ev[0], R.pool), UP_OK);
    CHECK_EQ(up_event_create(&R.ev[1], R.pool), UP_OK);
    R.sem_cap = 1 + test_rand(&rng) % 16;
    CHECK_EQ(up_sem_create(&R.sem, R.sem_cap), UP_OK);
    memset((void *)soak_runs, 0, SOAK_IDS);
    memset(soak_expect, 0, SOAK_IDS);

    unsigned nsub = 1 + (unsigned)(test_rand(&rng) % 4);
    submitter subs[4];
    for (unsigned i = 0; i < nsub; i++) {
        subs[i].rng = soak_mix(R.seed ^ (i + 1) * 0x2545f4914f6cdd1dull);
        subs[i].ops = 10 + (unsigned)(test_rand(&rng) % 50);
        CHECK_EQ(pthread_create(&subs[i].th, NULL, submitter_main, &subs[i]), 0);
    }
    stopper st = {.rng = soak_mix(R.seed ^ 0x570b)};
    if (end == END_RACE)
        CHECK_EQ(pthread_create(&st.th, NULL, stopper_main, &st), 0);
    for (unsigned i = 0; i < nsub; i++)
        pthread_join(subs[i].th, NULL);
    if (end == END_RACE)
        pthread_join(st.th, NULL);

    up_stats s;
    switch (end) {
    case END_STOP:
        stop_pool(0, &rng);
        break;
    case END_STOP_AND_WAIT:
        stop_pool(1, &rng);
        up_pool_stats(R.pool, &s);
        if (s.executed != s.submitted || s.waiting != 0 || s.tasks_parked != 0)
            soak_fail("after up_pool_stop_and_wait: submitted %" PRIu64 " executed %" PRIu64
                      " waiting %" PRIu64 " parked %" PRIu64,
                      s.submitted, s.executed, s.waiting, s.tasks_parked);
        break;
    case END_STOP_TIMEOUT:
        stop_pool(2, &rng);
        break;
    default:
        break;
    }
    up_pool_stats(R.pool, &s);
    if (s.workers_peak > max_workers_seen)
        max_workers_seen = s.workers_peak;
    atomic_store(&R.stop_begun, 1); /* a destroy stops the pool first */
    if ((rc = up_pool_destroy(R.pool)) != UP_OK)
        soak_fail("up_pool_destroy returned %s", up_strerror(rc));
    up_event_destroy(R.ev[0]);
    up_event_destroy(R.ev[1]);
    if (atomic_load(&R.sem_units) != 0 || up_sem_held(R.sem) != 0)
        soak_fail("semaphore still holds %" PRIu64 " units", up_sem_held(R.sem));
    CHECK_EQ(up_sem_destroy(R.sem), UP_OK);

    /* The accounting: every id handed out this round. */
    uint64_t ids = atomic_load(&R.next_id);
    if (ids > SOAK_IDS)
        ids = SOAK_IDS;
    for (uint64_t id = 0; id < ids; id++) {
        unsigned runs = atomic_load_explicit(&soak_runs[id], memory_order_relaxed);
        unsigned want = soak_expect[id];
        if (want == EXPECT_ONCE && runs != 1)
            soak_fail("accepted task %" PRIu64 " ran %u times (%" PRIu64 " ids)", id, runs, ids);
        if (want == EXPECT_NEVER && runs != 0)
            soak_fail("rejected task %" PRIu64 " ran %u times", id, runs);
        if (want == EXPECT_AT_MOST_ONCE && runs > 1)
            soak_fail("group task %" PRIu64 " ran %u times", id, runs);
    }
}

static void *watchdog_main(void *arg)
{
    uint64_t hang_ns = *(uint64_t *)arg;
    for (;;) {
        test_sleep_ms(1000);
        uint64_t started = atomic_load(&round_started_ns);
        if (started && test_now_ns() - started > hang_ns) {
            fprintf(stderr,
                    "soak: FAILED seed %" PRIu64 " round %" PRIu64 ": the round has not ended "
                    "after %" PRIu64 " s (a hang)\nsoak: replay with --seed %" PRIu64
                    " --first-round %" PRIu64 "\n",
                    seed0, atomic_load(&round_now), hang_ns / 1000000000u, seed0,
                    atomic_load(&round_now));
            fflush(stderr);
            _exit(2);
        }
    }
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: soak [--minutes M | --seconds S] [--seed S] [--first-round R] "
                    "[--rounds N] [--progress S] [--hang S] [--skip-actions A,B...]\n");
    exit(2);
}

/* "sleep,event_wait": those task actions become plain runs. */
static void skip_actions(const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (unsigned a = 1; a < ACT_KINDS; a++)
            if (strlen(act_names[a]) == n && !strncmp(p, act_names[a], n))
                skipped_acts |= 1u << a, found = 1;
        if (!found) {
            fprintf(stderr, "soak: no task action '%.*s'\n", (int)n, p);
            usage();
        }
        p += n + (p[n] == ',');
    }
}

static void summary_line(const char *head, const char *const *names, _Atomic uint64_t *counts,
                         int n)
{
    printf("soak: %s:", head);
    for (int i = 0; i < n; i++)
        printf(" %s %" PRIu64 "%s", names[i], atomic_load(&counts[i]), i + 1 < n ? "," : "");
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *sc = getenv("UP_TEST_SCALE");
    double seconds = 15 * (sc && *sc ? atof(sc) : 1.0);
    if (seconds < 3)
        seconds = 3;
    double progress = 15, hang = 300;
    uint64_t first = 0, rounds = UINT64_MAX;
    int have_seed = 0;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "--minutes"))
            seconds = 60 * atof(v);
        else if (!strcmp(a, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(a, "--seed"))
            seed0 = strtoull(v, NULL, 10), have_seed = 1;
        else if (!strcmp(a, "--first-round"))
            first = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--rounds"))
            rounds = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--progress"))
            progress = atof(v);
        else if (!strcmp(a, "--hang"))
            hang = atof(v);
        else if (!strcmp(a, "--skip-actions"))
            skip_actions(v);
        else
            usage();
    }
    if (!have_seed)
        seed0 = test_seed();
    printf("soak: seed %" PRIu64 " (--seed to replay), %.0f s, from round %" PRIu64
           ", ultrapool %s\n",
           seed0, seconds, first, up_version());
    fflush(stdout);
    soak_runs = calloc(SOAK_IDS, 1);
    soak_expect = calloc(SOAK_IDS, 1);
    CHECK(soak_runs && soak_expect);
    uint64_t hang_ns = (uint64_t)(hang * 1e9);
    pthread_t wd;
    CHECK_EQ(pthread_create(&wd, NULL, watchdog_main, &hang_ns), 0);
    pthread_detach(wd);

    uint64_t t0 = test_now_ns(), next_progress = t0 + (uint64_t)(progress * 1e9), done = 0;
    uint64_t end_ns = t0 + (uint64_t)(seconds * 1e9);
    for (uint64_t r = first; done < rounds && test_now_ns() < end_ns; r++, done++) {
        atomic_store(&round_now, r);
        atomic_store(&round_started_ns, test_now_ns());
        run_round(r);
        uint64_t now = test_now_ns();
        if (now >= next_progress) {
            printf("soak: %.0f s, %" PRIu64 " rounds, tasks accepted %" PRIu64 " rejected %" PRIu64
                   ", max workers %u\n",
                   (double)(now - t0) / 1e9, done + 1, atomic_load(&soak_accepted),
                   atomic_load(&soak_rejected), max_workers_seen);
            fflush(stdout);
            next_progress = now + (uint64_t)(progress * 1e9);
        }
    }
    atomic_store(&round_started_ns, 0);

    printf("soak: seed %" PRIu64 ", %" PRIu64 " rounds (%" PRIu64 "..%" PRIu64 ") in %.1f s, "
           "max workers %u\n",
           seed0, done, first, first + done - (done > 0), (double)(test_now_ns() - t0) / 1e9,
           max_workers_seen);
    printf("soak: tasks accepted %" PRIu64 ", rejected %" PRIu64 " (overload %" PRIu64
           ", timed out %" PRIu64 ", stopped %" PRIu64 "), ran %" PRIu64 "\n",
           atomic_load(&soak_accepted), atomic_load(&soak_rejected), atomic_load(&n_overload),
           atomic_load(&n_timedout), atomic_load(&n_stopped), atomic_load(&n_ran));
    printf("soak: group tasks accepted %" PRIu64 ", ran %" PRIu64 ", skipped %" PRIu64
           "; timer runs %" PRIu64 ", skipped %" PRIu64 "\n",
           atomic_load(&soak_group_accepted), atomic_load(&soak_group_ran),
           atomic_load(&soak_group_skipped), atomic_load(&n_timer_runs),
           atomic_load(&n_timer_skipped));
    summary_line("operations", op_names, soak_ops, OP_KINDS);
    summary_line("task actions", act_names, soak_acts, ACT_KINDS);
    printf("soak: round ends:");
    for (int i = 0; i < END_KINDS; i++)
        printf(" %s %" PRIu64 "%s", end_names[i], n_ends[i], i + 1 < END_KINDS ? "," : "");
    printf("\nsoak: failures=0\n");
    return 0;
}
