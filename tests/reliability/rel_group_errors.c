/* Reliability 11: a group's first error and its cancellation, in many
 * rounds of random shape (the unit test test_group.c checks each rule once,
 * on a fixed schedule).
 *
 * A round runs n tasks through a group with a random limit (0 = none),
 * from 1 to 3 submitting threads, on a pool of one worker or on a pool of
 * several. Some tasks fail (each with its own code), one may cancel the
 * group (a task, or the submitter after a random go), and in some rounds
 * the tasks are themselves rounds on inner groups, returning their inner
 * group's result; some rounds run as a whole inside a pool task. After
 * up_group_wait the group is destroyed at once (AddressSanitizer reports
 * any task touching it later), then the round checks:
 *  - the result is "the first non-zero result of a task", first meaning
 *    first to be recorded, which need not be the failing task of lowest
 *    index nor the one that returned first: so it must be the code of a
 *    failing task that ran; exactly that code when one task failed; and,
 *    with limit 1 and one submitter (tasks then run one after another), the
 *    only failing task that ran; and never the code of a task that returned
 *    after it saw the group cancelled (some failing tasks wait for that).
 *    Else UP_ECANCELED if up_group_cancel was called, else 0;
 *  - every task ran at most once; a refused one never; ran + skipped ==
 *    accepted (lost = 0);
 *  - once up_group_go returned UP_ECANCELED to a submitter, the group
 *    reports cancelled and every later go of that submitter is refused.
 * A watchdog aborts the test when no round completes for 60 s (a hang).
 * Figure: rounds, tasks, skipped, refused, lost. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/group.h>

#include "check.h"
#include "pool_helpers.h"

#define MAX_TASKS 128
#define MAX_INNER 24

typedef struct round round;

typedef struct slot {
    round *r;
    int index;
    int code;        /* what the task returns (tasks running an inner round: its result) */
    int cancel_here; /* the task calls up_group_cancel */
    int inner;       /* the task runs an inner round */
    int late;        /* a failing task that waits (a while) for the group to be cancelled */
    unsigned spin;   /* work before returning */
    int sleep_us;    /* or a short sleep */
    uint64_t seed;   /* of the inner round */
    int accepted;    /* written by the submitter, read after it is joined */
    _Atomic int ran; /* times the function ran */
    _Atomic int returned;
    _Atomic int saw_cancel; /* the group was cancelled when the task returned */
} slot;

struct round {
    up_pool *pool;
    up_group *g;
    int n, submitters, depth;
    unsigned limit;
    int cancel_after_go; /* the first submitter cancels after this go (-1: never) */
    _Atomic int user_cancelled;
    slot *slots;
};

static struct {
    _Atomic uint64_t rounds, nested_rounds, tasks_accepted, tasks_ran, skipped, refused;
    _Atomic uint64_t error_rounds, cancel_rounds, multi_error_rounds, late_failures;
} totals;

/* Failure codes, unique in the whole run, so a result names its task. */
static _Atomic int next_code = 1000;

static void sleep_us(int us)
{
    struct timespec ts = {0, (long)us * 1000L};
    nanosleep(&ts, NULL);
}

static int run_round(up_pool *pool, uint64_t seed, int depth, int submitters);

static int task_fn(void *arg)
{
    slot *s = arg;
    atomic_fetch_add(&s->ran, 1);
    CHECK_EQ(up_group_current(), s->r->g);
    int rc = s->code;
    if (s->inner) {
        rc = run_round(s->r->pool, s->seed, s->r->depth + 1, 1);
    } else if (s->sleep_us) {
        sleep_us(s->sleep_us);
    } else {
        for (unsigned i = 0; i < s->spin && !up_group_cancelled(s->r->g); i++)
            test_spin(64);
    }
    if (s->cancel_here) {
        atomic_store(&s->r->user_cancelled, 1);
        up_group_cancel(up_group_current());
    }
    if (s->late) {
        uint64_t until = test_now_ns() + 2000000;
        while (!up_group_cancelled(s->r->g) && test_now_ns() < until)
            test_spin(64);
    }
    atomic_store(&s->returned, rc);
    atomic_store(&s->saw_cancel, up_group_cancelled(s->r->g));
    return rc;
}

typedef struct submitter {
    round *r;
    int first, step;
} submitter;

static void *submit_main(void *arg)
{
    submitter *sub = arg;
    round *r = sub->r;
    int refused = 0;
    for (int i = sub->first; i < r->n; i += sub->step) {
        slot *s = &r->slots[i];
        int rc = up_group_go(r->g, task_fn, s);
        if (refused) {
            CHECK_EQ(rc, UP_ECANCELED); /* cancellation sticks */
        } else if (rc == UP_ECANCELED) {
            refused = 1;
            CHECK(up_group_cancelled(r->g));
        } else {
            CHECK_EQ(rc, UP_OK);
        }
        s->accepted = rc == UP_OK;
        if (sub->first == 0 && i == r->cancel_after_go) {
            atomic_store(&r->user_cancelled, 1);
            up_group_cancel(r->g);
            refused = 1; /* every later go of this thread must be refused */
        }
    }
    return NULL;
}

/* Runs one round and checks it; returns the group's result. */
static int run_round(up_pool *pool, uint64_t seed, int depth, int submitters)
{
    uint64_t rng = seed;
    round r = {.pool = pool, .depth = depth, .submitters = submitters, .cancel_after_go = -1};
    int max_n = depth ? MAX_INNER : MAX_TASKS;
    r.n = 1 + (int)(test_rand(&rng) % (uint64_t)max_n);
    r.limit = (unsigned)(test_rand(&rng) % 9); /* 0: no limit */
    r.slots = calloc((size_t)r.n, sizeof *r.slots);
    CHECK(r.slots != NULL);
    int kind = (int)(test_rand(&rng) % 8);
    /* 0: no failure; 1-3: one failing task; 4-5: several; 6: a cancel
     * (by a task or the submitter), with one failure half the time;
     * 7: the tasks are inner rounds (only at depth 0). */
    if (kind == 7 && depth > 0)
        kind = 1;
    int failures = kind == 0   ? 0
                   : kind <= 3 ? 1
                   : kind <= 5 ? 2 + (int)(test_rand(&rng) % 4)
                   : kind == 6 ? (int)(test_rand(&rng) % 2)
                               : 0;
    for (int i = 0; i < r.n; i++) {
        slot *s = &r.slots[i];
        s->r = &r;
        s->index = i;
        uint64_t x = test_rand(&rng);
        s->spin = (unsigned)(x % 64);
        s->sleep_us = x % 97 == 0 ? 50 + (int)(x >> 40) % 200 : 0;
        s->inner = kind == 7 && (x >> 20) % 3 != 0;
        s->seed = test_rand(&rng);
    }
    /* Positive codes: never an UP_* code. With several failures, half of
     * the failing tasks wait for the group to be cancelled before they
     * return: their result then comes after the first one for sure. */
    for (int k = 0; k < failures; k++) {
        slot *s = &r.slots[test_rand(&rng) % (uint64_t)r.n];
        s->code = atomic_fetch_add(&next_code, 1);
        s->late = failures > 1 && test_rand(&rng) % 2;
    }
    if (kind == 6) {
        if (test_rand(&rng) % 2)
            r.slots[test_rand(&rng) % (uint64_t)r.n].cancel_here = 1;
        else
            r.cancel_after_go = (int)(test_rand(&rng) % (uint64_t)r.n);
    }

    CHECK_EQ(up_group_create(&r.g, pool, r.limit), UP_OK);
    submitter subs[3];
    pthread_t th[3];
    for (int k = 0; k < submitters; k++) {
        subs[k] = (submitter){&r, k, submitters};
        if (k > 0)
            CHECK_EQ(pthread_create(&th[k], NULL, submit_main, &subs[k]), 0);
    }
    submit_main(&subs[0]);
    for (int k = 1; k < submitters; k++)
        CHECK_EQ(pthread_join(th[k], NULL), 0);
    int result = up_group_wait(r.g);
    uint64_t skipped = up_group_skipped(r.g);
    int cancelled = up_group_cancelled(r.g);
    CHECK_EQ(up_group_destroy(r.g), UP_OK); /* at once: no task may touch it now */

    uint64_t accepted = 0, ran = 0;
    int failed_ran = 0, result_found = 0, lowest_failed = -1;
    for (int i = 0; i < r.n; i++) {
        slot *s = &r.slots[i];
        int n_ran = atomic_load(&s->ran);
        CHECK(n_ran == 0 || n_ran == 1);
        if (!s->accepted)
            CHECK_EQ(n_ran, 0); /* a refused task never runs */
        accepted += (uint64_t)s->accepted;
        ran += (uint64_t)n_ran;
        int ret = atomic_load(&s->returned);
        if (n_ran && ret != 0) {
            failed_ran++;
            if (lowest_failed < 0)
                lowest_failed = i;
            result_found |= ret == result;
            /* A result returned once the group was cancelled, with no
             * up_group_cancel called, came after the first error. */
            if (ret > 0 && atomic_load(&s->saw_cancel) && !atomic_load(&r.user_cancelled)) {
                CHECK_NE(ret, result);
                atomic_fetch_add(&totals.late_failures, 1);
            }
        }
    }
    CHECK_EQ(ran + skipped, accepted); /* lost = 0 */
    int one_failure = failures == 1 && kind != 6;
    if (one_failure)
        CHECK_EQ(failed_ran, 1); /* nothing could cancel the group before it ran */
    if (failed_ran) {
        CHECK(result_found); /* the result is the code of a failing task that ran */
        CHECK(cancelled);
        if (one_failure)
            CHECK_EQ(result, r.slots[lowest_failed].code); /* the one failing task */
        if (r.limit == 1 && submitters == 1) {
            /* One at a time: the first failure is recorded before the next
             * go finds room, so that go and all later ones are refused. */
            CHECK_EQ(failed_ran, 1);
            CHECK_EQ(result, atomic_load(&r.slots[lowest_failed].returned));
            for (int i = lowest_failed + 1; i < r.n; i++)
                CHECK_EQ(r.slots[i].accepted, 0);
        }
        atomic_fetch_add(&totals.error_rounds, 1);
        if (failed_ran > 1)
            atomic_fetch_add(&totals.multi_error_rounds, 1);
    } else if (atomic_load(&r.user_cancelled)) {
        CHECK_EQ(result, UP_ECANCELED);
        atomic_fetch_add(&totals.cancel_rounds, 1);
    } else {
        CHECK_EQ(result, UP_OK);
        CHECK_EQ(skipped, 0);
        CHECK_EQ(accepted, (uint64_t)r.n); /* nothing refused while nothing failed */
    }
    if (kind == 0)
        CHECK_EQ(result, UP_OK);

    atomic_fetch_add(&totals.rounds, 1);
    if (depth)
        atomic_fetch_add(&totals.nested_rounds, 1);
    atomic_fetch_add(&totals.tasks_accepted, accepted);
    atomic_fetch_add(&totals.tasks_ran, ran);
    atomic_fetch_add(&totals.skipped, skipped);
    atomic_fetch_add(&totals.refused, (uint64_t)r.n - accepted);
    free(r.slots);
    return result;
}

/* ---- rounds inside pool tasks ----------------------------------------- */

typedef struct in_task {
    up_pool *pool;
    uint64_t seed;
    _Atomic int done;
} in_task;

static void round_task(void *arg)
{
    in_task *t = arg;
    run_round(t->pool, t->seed, 0, 1);
    atomic_store(&t->done, 1);
}

/* ---- watchdog ------------------------------------------------------------ */

static _Atomic int finished;

static void *watchdog_main(void *arg)
{
    (void)arg;
    uint64_t last = 0;
    int still = 0;
    while (!atomic_load(&finished)) {
        test_sleep_ms(100);
        uint64_t now = atomic_load(&totals.rounds);
        still = now == last ? still + 1 : 0;
        last = now;
        if (still >= 600) {
            fprintf(stderr, "rel_group_errors: no round completed for 60 s: a hang\n");
            abort();
        }
    }
    return NULL;
}

int main(void)
{
    uint64_t seed = test_seed();
    uint64_t rounds = test_size("UP_TEST_GROUP_ROUNDS", 1500);
    printf("%" PRIu64 " rounds\n", rounds);
    pthread_t dog;
    CHECK_EQ(pthread_create(&dog, NULL, watchdog_main, NULL), 0);

    up_pool *one = test_one_worker_pool(0, NULL, NULL);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 2;
    up_pool *several;
    CHECK_EQ(up_pool_create(&several, &cfg), UP_OK);

    uint64_t rng = seed;
    for (uint64_t i = 0; i < rounds; i++) {
        uint64_t x = test_rand(&rng);
        up_pool *pool = x % 3 == 0 ? one : several;
        if ((x >> 8) % 5 == 0) {
            /* One to three rounds at once, each inside a task of the pool. */
            in_task t[3];
            int k = 1 + (int)((x >> 16) % 3);
            for (int j = 0; j < k; j++) {
                t[j] = (in_task){.pool = pool, .seed = test_rand(&rng)};
                CHECK_EQ(up_submit(pool, round_task, &t[j]), UP_OK);
            }
            for (int j = 0; j < k; j++) {
                WAIT_UNTIL(atomic_load(&t[j].done), 120000);
                CHECK(atomic_load(&t[j].done));
            }
        } else {
            run_round(pool, test_rand(&rng), 0, 1 + (int)((x >> 16) % 3));
        }
    }
    atomic_store(&finished, 1);
    CHECK_EQ(pthread_join(dog, NULL), 0);
    CHECK_EQ(up_pool_destroy(one), UP_OK);
    CHECK_EQ(up_pool_destroy(several), UP_OK);

    uint64_t lost = atomic_load(&totals.tasks_accepted) - atomic_load(&totals.tasks_ran) -
                    atomic_load(&totals.skipped);
    printf("figure: %" PRIu64 " rounds (%" PRIu64 " of them inner groups), %" PRIu64
           " tasks accepted: %" PRIu64 " ran, %" PRIu64
           " skipped after an error or cancel, %" PRIu64 " refused (UP_ECANCELED), lost %" PRIu64
           "; first error right in %" PRIu64 " rounds (%" PRIu64 " with several failures; %" PRIu64
           " failures returned after the cancellation, none taken "
           "as the first), UP_ECANCELED in %" PRIu64 " cancelled rounds; hangs 0\n",
           atomic_load(&totals.rounds), atomic_load(&totals.nested_rounds),
           atomic_load(&totals.tasks_accepted), atomic_load(&totals.tasks_ran),
           atomic_load(&totals.skipped), atomic_load(&totals.refused), lost,
           atomic_load(&totals.error_rounds), atomic_load(&totals.multi_error_rounds),
           atomic_load(&totals.late_failures), atomic_load(&totals.cancel_rounds));
    CHECK_EQ(lost, 0);
    CHECK(atomic_load(&totals.error_rounds) > 0 || rounds < 20);
    CHECK(atomic_load(&totals.skipped) > 0 || rounds < 100);
    CHECK(atomic_load(&totals.late_failures) > 0 || rounds < 100);
    return 0;
}
