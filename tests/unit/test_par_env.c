/* The parallel layer's environment (pragmas/src/env.c): UP_NUM_THREADS,
 * UP_THREAD_LIMIT, UP_MAX_ACTIVE_LEVELS, UP_SCHEDULE, UP_CANCELLATION
 * and OpenMP's variables standing in for them.
 *
 * The parser is checked directly on tables of values: lists and their
 * levels, precedence (a set UP_ variable wins and the OMP_ one is not
 * read), and the extremes (0, negative, huge, garbage, empty), each
 * malformed one with a message naming its variable. The layer reads the
 * real environment once per process, so each behaviour is checked in a
 * child process of this program started with its own environment: team
 * sizes (what a region asked for, from the team's internal state, and
 * what it got), the thread limit across nested regions, active levels,
 * UP_SCHED_RUNTIME's chunks, cancellation turned off, a malformed UP_
 * value failing every region with one message on stderr, a malformed OMP_
 * one giving one warning and the default (OpenMP's convention) with the
 * regions running, and OMP_DISPLAY_ENV.
 *
 * Built twice: against the static libraries with every check, and
 * (PAR_ENV_SHARED) against the shared ones, where only the public API is
 * visible, for the shared library's hooks (layer_shared.c). */
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>

#include "check.h"
#include "cpus.h"

#ifndef PAR_ENV_SHARED
#include "par_env.h"
#include "par_internal.h"
#endif

extern char **environ;

static up_pool *pool;

/* ---- the parser, on tables ------------------------------------------- */

#ifndef PAR_ENV_SHARED
static const char *const *table; /* NAME, value, NAME, value, ..., NULL */

static const char *table_get(const char *name)
{
    for (size_t i = 0; table && table[i]; i += 2)
        if (!strcmp(table[i], name))
            return table[i + 1];
    return NULL;
}

static par_env parse(const char *const *vars)
{
    par_env e;
    table = vars;
    par_env_parse(&e, table_get);
    return e;
}

/* name=value must be refused, with a message naming name. */
static void expect_bad(const char *name, const char *value)
{
    const char *vars[] = {name, value, NULL};
    par_env e = parse(vars);
    if (!e.bad || !strstr(e.error, name)) {
        fprintf(stderr, "%s=\"%s\" was accepted or its message lacks the name: \"%s\"\n", name,
                value, e.error);
        CHECK(0);
    }
}

/* name=value, an OMP_ variable, must be ignored: no failure, a warning
 * naming name and the value, and every setting at its default. */
static void expect_ignored(const char *name, const char *value)
{
    const char *vars[] = {name, value, NULL}, *none[] = {NULL};
    par_env e = parse(vars), d = parse(none);
    char quoted[160];
    snprintf(quoted, sizeof quoted, "%s=\"%s\"", name, value);
    if (e.bad || !strstr(e.warnings, quoted) || !strstr(e.warnings, "the default stays") ||
        e.nlevels != d.nlevels || e.thread_limit != d.thread_limit ||
        e.max_active != d.max_active || e.sched != d.sched || e.chunk != d.chunk ||
        e.cancellation != d.cancellation) {
        fprintf(stderr, "%s=\"%s\": bad %d, warnings \"%s\", error \"%s\"\n", name, value, e.bad,
                e.warnings, e.error);
        CHECK(0);
    }
}

static void check_defaults(void)
{
    const char *vars[] = {NULL};
    par_env e = parse(vars);
    CHECK(!e.bad);
    CHECK_EQ(e.nlevels, 0);
    CHECK_EQ(par_env_threads(&e, 1), 0);
    CHECK_EQ(e.thread_limit, 0);
    CHECK_EQ(e.max_active, UINT32_MAX);
    CHECK_EQ(e.sched, UP_SCHED_STATIC);
    CHECK_EQ(e.chunk, 0);
    CHECK_EQ(e.cancellation, 1);
}

static void check_num_threads(void)
{
    const char *list[] = {"OMP_NUM_THREADS", "4,2,1", NULL};
    par_env e = parse(list);
    CHECK(!e.bad);
    CHECK_EQ(par_env_threads(&e, 1), 4);
    CHECK_EQ(par_env_threads(&e, 2), 2);
    CHECK_EQ(par_env_threads(&e, 3), 1);
    CHECK_EQ(par_env_threads(&e, 7), 1); /* past the list: its last value */
    const char *spaced[] = {"OMP_NUM_THREADS", " 3 , 5 ", NULL};
    e = parse(spaced);
    CHECK(!e.bad);
    CHECK_EQ(par_env_threads(&e, 1), 3);
    CHECK_EQ(par_env_threads(&e, 2), 5);
    CHECK_EQ(par_env_threads(&e, 3), 5);
    const char *one[] = {"OMP_NUM_THREADS", "1024", NULL};
    e = parse(one);
    CHECK(!e.bad);
    CHECK_EQ(par_env_threads(&e, 1), 1024);
    CHECK_EQ(par_env_threads(&e, 8), 1024);
    const char *longer[] = {"UP_NUM_THREADS", "1,2,3,4,5,6,7,8,9,10,11", NULL};
    e = parse(longer); /* checked past PAR_ENV_LEVELS, kept up to it */
    CHECK(!e.bad);
    CHECK_EQ(par_env_threads(&e, 8), 8);
    /* UP_ wins, and the OMP_ one is not even read. */
    const char *both[] = {"UP_NUM_THREADS", "2", "OMP_NUM_THREADS", "1", NULL};
    e = parse(both);
    CHECK_EQ(par_env_threads(&e, 1), 2);
    CHECK(!strcmp(e.num_threads_from.name, "UP_NUM_THREADS"));
    const char *shadow[] = {"UP_NUM_THREADS", "2", "OMP_NUM_THREADS", "garbage", NULL};
    e = parse(shadow);
    CHECK(!e.bad);
    static const char *const bad[] = {"",
                                      " ",
                                      "0",
                                      "-1",
                                      "+4",
                                      "4,",
                                      ",4",
                                      "4,,2",
                                      "4 2",
                                      "4.5",
                                      "abc",
                                      "0x4",
                                      "1025",
                                      "4,0",
                                      "4,-2",
                                      "99999999999999999999999",
                                      "18446744073709551617"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_ignored("OMP_NUM_THREADS", bad[i]);
        expect_bad("UP_NUM_THREADS", bad[i]);
    }
}

static void check_thread_limit(void)
{
    const char *four[] = {"OMP_THREAD_LIMIT", "4", NULL};
    par_env e = parse(four);
    CHECK(!e.bad);
    CHECK_EQ(e.thread_limit, 4);
    const char *max[] = {"OMP_THREAD_LIMIT", " 2147483647 ", NULL};
    e = parse(max);
    CHECK(!e.bad);
    CHECK_EQ(e.thread_limit, 2147483647u);
    const char *both[] = {"UP_THREAD_LIMIT", "3", "OMP_THREAD_LIMIT", "x", NULL};
    e = parse(both);
    CHECK(!e.bad);
    CHECK_EQ(e.thread_limit, 3);
    static const char *const bad[] = {"",  "0",   "-1", "2147483648", "99999999999999999999",
                                      "x", "4,2", "4k"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_ignored("OMP_THREAD_LIMIT", bad[i]);
        expect_bad("UP_THREAD_LIMIT", bad[i]);
    }
}

static void check_max_active(void)
{
    const char *zero[] = {"OMP_MAX_ACTIVE_LEVELS", "0", NULL};
    par_env e = parse(zero);
    CHECK(!e.bad);
    CHECK_EQ(e.max_active, 0);
    const char *huge[] = {"OMP_MAX_ACTIVE_LEVELS", "2147483647", NULL};
    e = parse(huge);
    CHECK_EQ(e.max_active, 2147483647u);
    const char *nested_off[] = {"OMP_NESTED", "false", NULL};
    e = parse(nested_off);
    CHECK(!e.bad);
    CHECK_EQ(e.max_active, 1);
    const char *nested_on[] = {"OMP_NESTED", "TRUE", NULL};
    e = parse(nested_on);
    CHECK_EQ(e.max_active, UINT32_MAX);
    /* OMP_MAX_ACTIVE_LEVELS before OMP_NESTED, UP_ before both. */
    const char *omp[] = {"OMP_MAX_ACTIVE_LEVELS", "3", "OMP_NESTED", "false", NULL};
    e = parse(omp);
    CHECK_EQ(e.max_active, 3);
    const char *up[] = {
        "UP_MAX_ACTIVE_LEVELS", "2", "OMP_MAX_ACTIVE_LEVELS", "x", "OMP_NESTED", "x", NULL};
    e = parse(up);
    CHECK(!e.bad);
    CHECK_EQ(e.max_active, 2);
    static const char *const bad[] = {"", "-1", "2147483648", "two", "1,1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_ignored("OMP_MAX_ACTIVE_LEVELS", bad[i]);
        expect_bad("UP_MAX_ACTIVE_LEVELS", bad[i]);
    }
    expect_ignored("OMP_NESTED", "");
    expect_ignored("OMP_NESTED", "maybe");
}

static void check_schedule(void)
{
    static const struct {
        const char *text;
        up_schedule kind;
        int64_t chunk;
    } good[] = {
        {"dynamic,3", UP_SCHED_DYNAMIC, 3},
        {" DYNAMIC , 3 ", UP_SCHED_DYNAMIC, 3},
        {"guided", UP_SCHED_GUIDED, 0},
        {"Guided,8", UP_SCHED_GUIDED, 8},
        {"static", UP_SCHED_STATIC, 0},
        {"static,5", UP_SCHED_STATIC, 5},
        {"static,0", UP_SCHED_STATIC, 0},
        {"auto", UP_SCHED_AUTO, 0},
        {"monotonic:dynamic,4", UP_SCHED_DYNAMIC, 4},
        {"NonMonotonic : guided , 2", UP_SCHED_GUIDED, 2},
        {"dynamic,9223372036854775807", UP_SCHED_DYNAMIC, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *vars[] = {"OMP_SCHEDULE", good[i].text, NULL};
        par_env e = parse(vars);
        if (e.bad)
            fprintf(stderr, "OMP_SCHEDULE=\"%s\" refused: %s\n", good[i].text, e.error);
        CHECK(!e.bad);
        CHECK_EQ(e.sched, good[i].kind);
        CHECK_EQ(e.chunk, good[i].chunk);
    }
    const char *both[] = {"UP_SCHEDULE", "guided", "OMP_SCHEDULE", "dynamic,3", NULL};
    par_env e = parse(both);
    CHECK_EQ(e.sched, UP_SCHED_GUIDED);
    static const char *const bad[] = {"",
                                      "dyn",
                                      "dynamic,",
                                      "dynamic,-1",
                                      "dynamic,x",
                                      "dynamic,3,4",
                                      "dynamic 3",
                                      "weird:dynamic",
                                      ":dynamic",
                                      "monotonic:",
                                      "runtime",
                                      "dynamic,9223372036854775808",
                                      "dynamic,99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_ignored("OMP_SCHEDULE", bad[i]);
        expect_bad("UP_SCHEDULE", bad[i]);
    }
}

static void check_cancellation(void)
{
    static const char *const off[] = {"false", "FALSE", " False ", "0", "no", "off"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        const char *vars[] = {"OMP_CANCELLATION", off[i], NULL};
        par_env e = parse(vars);
        CHECK(!e.bad);
        CHECK_EQ(e.cancellation, 0);
    }
    const char *on[] = {"OMP_CANCELLATION", "true", NULL};
    par_env e = parse(on);
    CHECK_EQ(e.cancellation, 1);
    const char *both[] = {"UP_CANCELLATION", "1", "OMP_CANCELLATION", "false", NULL};
    e = parse(both);
    CHECK_EQ(e.cancellation, 1);
    static const char *const bad[] = {"", "maybe", "2", "-1", "truefalse"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_ignored("OMP_CANCELLATION", bad[i]);
        expect_bad("UP_CANCELLATION", bad[i]);
    }
}

/* Every problem is kept, the first one for up_last_error(); OMP_ ones
 * only as warnings, beside them. */
static void check_several_errors(void)
{
    const char *vars[] = {"UP_NUM_THREADS", "x", "UP_SCHEDULE", "y", "OMP_THREAD_LIMIT", "z", NULL};
    par_env e = parse(vars);
    CHECK(e.bad);
    CHECK(strstr(e.error, "UP_NUM_THREADS") && !strstr(e.error, "UP_SCHEDULE"));
    CHECK(strstr(e.errors, "UP_NUM_THREADS") && strstr(e.errors, "UP_SCHEDULE"));
    CHECK(!strstr(e.errors, "OMP_THREAD_LIMIT") && strstr(e.warnings, "OMP_THREAD_LIMIT"));
    const char *omp[] = {"OMP_NUM_THREADS", "x", "OMP_SCHEDULE", "y", NULL};
    e = parse(omp);
    CHECK(!e.bad);
    CHECK(strstr(e.warnings, "OMP_NUM_THREADS") && strstr(e.warnings, "OMP_SCHEDULE"));
}

static void check_print(void)
{
    const char *vars[] = {"OMP_SCHEDULE",
                          "dynamic,3",
                          "UP_THREAD_LIMIT",
                          "4",
                          "OMP_NUM_THREADS",
                          "4, 2",
                          "OMP_NESTED",
                          "false",
                          "UP_CANCELLATION",
                          "nope",
                          NULL};
    par_env e = parse(vars);
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    CHECK(f != NULL);
    par_env_print(&e, f);
    fclose(f);
    static const char *const lines[] = {
        "UP_NUM_THREADS=4,2\n",
        "# UP_NUM_THREADS from OMP_NUM_THREADS=4, 2\n",
        "UP_THREAD_LIMIT=4\n",
        "UP_MAX_ACTIVE_LEVELS=1\n",
        "# UP_MAX_ACTIVE_LEVELS from OMP_NESTED=false\n",
        "UP_SCHEDULE=dynamic,3\n",
        "# UP_SCHEDULE from OMP_SCHEDULE=dynamic,3\n",
        "# UP_CANCELLATION not in effect: UP_CANCELLATION=nope is malformed",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(buf, lines[i])) {
            fprintf(stderr, "the print lacks \"%s\":\n%s", lines[i], buf);
            CHECK(0);
        }
    CHECK(!strstr(buf, "# UP_THREAD_LIMIT from")); /* set by its own name */
    CHECK(!strstr(buf, "\nUP_CANCELLATION="));     /* no line that would parse back */
    /* A malformed OMP_ variable: the default's line, and why. */
    const char *ignored[] = {"OMP_CANCELLATION", "nope", NULL};
    e = parse(ignored);
    f = fmemopen(buf, sizeof buf - 1, "w");
    CHECK(f != NULL);
    par_env_print(&e, f);
    fclose(f);
    if (!strstr(buf, "UP_CANCELLATION=1\n# OMP_CANCELLATION=nope is malformed and ignored: "
                     "UP_CANCELLATION keeps its default\n")) {
        fprintf(stderr, "the print lacks the ignored OMP_CANCELLATION:\n%s", buf);
        CHECK(0);
    }
}
#endif

/* ---- behaviour, in child processes ----------------------------------- */

/* What a region saw: its size and (static build) what it asked for. */
typedef struct seen {
    unsigned size, requested;
} seen;

static seen look(void)
{
    seen s = {up_num_threads(), 0};
#ifndef PAR_ENV_SHARED
    s.requested = par_tls && par_tls->c.team ? par_tls->c.team->requested : 0;
#endif
    return s;
}

static seen top, inner[4];
static unsigned inner_depth;

static void record_top(void *ctx)
{
    (void)ctx;
    if (up_master())
        top = look();
}

/* Records the team of each level on member 0's path, and opens the next
 * level with nthreads (0: from the environment), down to inner_depth. */
static unsigned nested_n;
static void record_nested(void *ctx)
{
    unsigned level = (unsigned)(uintptr_t)ctx;
    if (!up_master())
        return;
    if (level == 0)
        top = look();
    else
        inner[level - 1] = look();
    if (level < inner_depth)
        CHECK_EQ(up_parallel(pool, nested_n, record_nested, (void *)(uintptr_t)(level + 1)), UP_OK);
}

static _Atomic unsigned for_size, for_requested;
static void record_for(int64_t lo, int64_t hi, void *ctx)
{
    (void)lo;
    (void)hi;
    (void)ctx;
    seen s = look();
    atomic_store(&for_size, s.size);
    atomic_store(&for_requested, s.requested);
}

/* nthreads 0 asks for want threads: up_parallel and up_parallel_for. */
static void case_threads(unsigned want)
{
    CHECK_EQ(up_parallel(pool, 0, record_top, NULL), UP_OK);
    CHECK(top.size >= 1 && top.size <= want);
#ifndef PAR_ENV_SHARED
    CHECK_EQ(top.requested, want);
#endif
    CHECK_EQ(up_parallel_for(pool, 0, 1000, NULL, record_for, NULL), UP_OK);
    CHECK(atomic_load(&for_size) >= 1 && atomic_load(&for_size) <= want);
#ifndef PAR_ENV_SHARED
    CHECK_EQ(atomic_load(&for_requested), want);
#endif
}

/* OMP_NUM_THREADS=4,3,1 (or the like): every level asks for its value,
 * and levels past the list for the last one. */
static void case_list(void)
{
    inner_depth = 3;
    nested_n = 0;
    CHECK_EQ(up_parallel(pool, 0, record_nested, (void *)(uintptr_t)0), UP_OK);
#ifndef PAR_ENV_SHARED
    CHECK_EQ(top.requested, 2);
    CHECK_EQ(inner[0].requested, 3);
    CHECK_EQ(inner[1].requested, 1);
    CHECK_EQ(inner[2].requested, 1);
#endif
    CHECK_EQ(inner[1].size, 1);
    CHECK_EQ(inner[2].size, 1);
}

/* OMP_THREAD_LIMIT=2: a top-level team of at most 2, explicit sizes
 * included; exact above it is refused; a region nested in a team of 2
 * has nothing left, one nested in a team of one has one thread more. */
static void case_limit(void)
{
    CHECK_EQ(up_parallel(pool, 0, record_top, NULL), UP_OK); /* OMP_NUM_THREADS=4 */
    CHECK_LE(top.size, 2);
#ifndef PAR_ENV_SHARED
    CHECK_EQ(top.requested, 2);
#endif
    CHECK_EQ(up_parallel(pool, 3, record_top, NULL), UP_OK);
    CHECK_LE(top.size, 2);
    CHECK_EQ(up_parallel_exact(pool, 3, record_top, NULL), UP_EINVAL);
    CHECK(strstr(up_last_error(), "OMP_THREAD_LIMIT") != NULL);
    inner_depth = 1;
    nested_n = 2;
    for (int round = 0; round < 3; round++) { /* the count is given back each time */
        CHECK_EQ(up_parallel(pool, 2, record_nested, (void *)(uintptr_t)0), UP_OK);
        CHECK_LE(inner[0].size, 1 + (2 - top.size));
#ifndef PAR_ENV_SHARED
        CHECK_EQ(inner[0].requested, 1 + (2 - top.size));
#endif
    }
    CHECK_EQ(up_parallel(pool, 1, record_nested, (void *)(uintptr_t)0), UP_OK);
#ifndef PAR_ENV_SHARED
    CHECK_EQ(inner[0].requested, 2);
#endif
}

/* max_active active levels (1 for OMP_MAX_ACTIVE_LEVELS=1 or
 * OMP_NESTED=false): a region inside a team of 2 is a team of one; inside
 * a team of one (inactive) it may have 2. */
static void case_active(unsigned max_active)
{
    inner_depth = 1;
    nested_n = 2;
    CHECK_EQ(up_parallel(pool, 2, record_nested, (void *)(uintptr_t)0), UP_OK);
    if (max_active == 0) {
        CHECK_EQ(top.size, 1);
#ifndef PAR_ENV_SHARED
        CHECK_EQ(top.requested, 1);
#endif
        return;
    }
    if (top.size == 2) {
        CHECK_EQ(inner[0].size, max_active >= 2 ? inner[0].size : 1);
#ifndef PAR_ENV_SHARED
        CHECK_EQ(inner[0].requested, max_active >= 2 ? 2 : 1);
#endif
    }
    CHECK_EQ(up_parallel(pool, 1, record_nested, (void *)(uintptr_t)0), UP_OK);
#ifndef PAR_ENV_SHARED
    CHECK_EQ(inner[0].requested, 2);
#endif
}

/* UP_SCHED_RUNTIME's chunks: every range a body gets, with its member. */
#define ITERS 60
typedef struct chunks {
    _Atomic unsigned n;
    int64_t lo[ITERS], hi[ITERS];
    unsigned member[ITERS];
    _Atomic int slept;
    unsigned sleeper;
    char kind; /* the case's schedule, see case_schedule */
} chunks;

static chunks got;

static void chunk_body(int64_t lo, int64_t hi, void *ctx)
{
    (void)ctx;
    unsigned i = atomic_fetch_add(&got.n, 1);
    CHECK_LT(i, ITERS);
    got.lo[i] = lo;
    got.hi[i] = hi;
    got.member[i] = up_thread_num();
    if (!atomic_exchange(&got.slept, 1)) {
        /* Under a dynamic schedule the first chunk holds its member until
         * the other one has taken every other chunk (the check: one chunk
         * for the sleeper). The bound is on the other member's progress,
         * not on a clock: on a busy machine it may start seconds late.
         * The other schedules do not wait; a team of one cannot. */
        got.sleeper = up_thread_num();
        if (got.kind == 'd' && up_num_threads() > 1)
            WAIT_PROGRESS(atomic_load(&got.n), ITERS / 3, 30000);
    }
}

static seen loop_team;

static void runtime_loop(void *ctx)
{
    (void)ctx;
    if (up_master())
        loop_team = look();
    up_for_opts o = UP_FOR_OPTS(.schedule = UP_SCHED_RUNTIME, .chunk = 7); /* 7 is ignored */
    CHECK_EQ(up_for(0, ITERS, &o, chunk_body, NULL), UP_OK);
}

/* 'd': dynamic,3; 's': static,5; '0': unset (static blocks); 'g': guided. */
static void case_schedule(char kind)
{
    memset(&got, 0, sizeof got);
    got.kind = kind;
    CHECK_EQ(up_parallel(pool, 2, runtime_loop, NULL), UP_OK);
    unsigned n = atomic_load(&got.n), size = loop_team.size;
    int64_t covered = 0, largest = 0;
    unsigned sleeper_chunks = 0;
    for (unsigned i = 0; i < n; i++) {
        int64_t len = got.hi[i] - got.lo[i];
        covered += len;
        largest = len > largest ? len : largest;
        sleeper_chunks += got.member[i] == got.sleeper;
        if (size < 2)
            continue;
        if (kind == 'd')
            CHECK_EQ(len, 3);
        if (kind == 's') {
            CHECK_EQ(len, 5);
            CHECK_EQ(got.member[i], (unsigned)(got.lo[i] / 5) % size);
        }
        if (kind == '0')
            CHECK_EQ(len, ITERS / size);
    }
    CHECK_EQ(covered, ITERS);
    if (size < 2) {
        CHECK_EQ(n, 1); /* a team of one runs the loop in one call */
        return;
    }
    if (kind == 'd') /* dynamic, not static,3 (10 chunks each) */
        CHECK_EQ(sleeper_chunks, 1);
    if (kind == 'g')
        CHECK_EQ(largest, ITERS / (2 * (int64_t)size));
}

/* Cancellation off: cancel does nothing, the group's later tasks run. */
static _Atomic int task_ran;
static void mark(void *arg)
{
    (void)arg;
    atomic_store(&task_ran, 1);
}

static _Atomic int saw_cancelled;
static void cancel_then_task(void *ctx)
{
    (void)ctx;
    up_cancel_taskgroup();
    atomic_store(&saw_cancelled, up_cancelled());
    CHECK_EQ(up_task(mark, NULL, NULL), UP_OK);
}

static int group_rc;
static void group_in_region(void *ctx)
{
    (void)ctx;
    if (up_single())
        group_rc = up_taskgroup(cancel_then_task, NULL);
    up_barrier();
}

static void case_cancel(int enabled)
{
    for (int in_region = 0; in_region < 2; in_region++) {
        atomic_store(&task_ran, 0);
        if (in_region)
            CHECK_EQ(up_parallel(pool, 2, group_in_region, NULL), UP_OK);
        else
            group_rc = up_taskgroup(cancel_then_task, NULL);
        CHECK_EQ(group_rc, enabled ? UP_ECANCELED : UP_OK);
        CHECK_EQ(atomic_load(&saw_cancelled), enabled);
        CHECK_EQ(atomic_load(&task_ran), !enabled);
    }
}

static _Atomic int region_ran;
static void count_region(void *ctx)
{
    (void)ctx;
    atomic_store(&region_ran, 1);
}

static void nop_range(int64_t lo, int64_t hi, void *ctx)
{
    (void)lo;
    (void)hi;
    (void)ctx;
}

/* A malformed variable (var): every region fails, with its name in the
 * error; loops with UP_SCHED_RUNTIME fail too, other loops run. */
static void case_bad(const char *var)
{
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(up_parallel(pool, 2, count_region, NULL), UP_EINVAL);
        CHECK_EQ(strstr(up_last_error(), "up_parallel: "), up_last_error());
        CHECK(strstr(up_last_error(), var) != NULL);
        CHECK_EQ(up_parallel_exact(pool, 1, count_region, NULL), UP_EINVAL);
        CHECK_EQ(up_parallel_for(pool, 0, 10, NULL, nop_range, NULL), UP_EINVAL);
        CHECK_EQ(strstr(up_last_error(), "up_parallel_for: "), up_last_error());
    }
    CHECK_EQ(atomic_load(&region_ran), 0);
    up_for_opts rt = UP_FOR_OPTS(.schedule = UP_SCHED_RUNTIME);
    CHECK_EQ(up_for(0, 10, &rt, nop_range, NULL), UP_EINVAL);
    CHECK(strstr(up_last_error(), var) != NULL);
    CHECK_EQ(up_for(0, 10, NULL, nop_range, NULL), UP_OK);
}

/* A malformed OMP_ variable: ignored, so regions run with the defaults
 * (the parser's tests check each value), a team of one thread per CPU. */
static void case_ignored(void)
{
    case_threads(test_cpus());
    up_for_opts rt = UP_FOR_OPTS(.schedule = UP_SCHED_RUNTIME);
    CHECK_EQ(up_for(0, 10, &rt, nop_range, NULL), UP_OK);
    CHECK_EQ(up_parallel_for(pool, 0, 10, &rt, nop_range, NULL), UP_OK);
}

static int run_case(const char *name)
{
    if (!strcmp(name, "display")) {
        /* The pool prints its configuration when created (stderr). */
        CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
        CHECK_EQ(up_parallel(pool, 1, count_region, NULL), UP_OK);
        up_pool_stop_and_wait(pool);
        up_pool_destroy(pool);
        return 0;
    }
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    if (!strcmp(name, "one"))
        case_threads(1);
    else if (!strcmp(name, "three"))
        case_threads(3);
    else if (!strcmp(name, "up_wins"))
        case_threads(2);
    else if (!strcmp(name, "list"))
        case_list();
    else if (!strcmp(name, "limit"))
        case_limit();
    else if (!strcmp(name, "active0"))
        case_active(0);
    else if (!strcmp(name, "active1"))
        case_active(1);
    else if (!strcmp(name, "active2"))
        case_active(2);
    else if (!strncmp(name, "sched_", 6))
        case_schedule(name[6]);
    else if (!strcmp(name, "cancel_off"))
        case_cancel(0);
    else if (!strcmp(name, "cancel_on"))
        case_cancel(1);
    else if (!strcmp(name, "ignored"))
        case_ignored();
    else if (!strncmp(name, "bad_", 4))
        case_bad(name + 4);
    else {
        fprintf(stderr, "unknown case %s\n", name);
        return 2;
    }
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    return 0;
}

/* Runs this program on case name with the variables of vars ("NAME=value"
 * strings, NULL-terminated) and none of the layer's or OpenMP's from the
 * test's own environment; its stderr goes to a file, returned in out. */
static const char *self;
static char out[65536];

static int is_layer_var(const char *e)
{
    static const char *const names[] = {
        "OMP_",         "UP_NUM_THREADS=",  "UP_THREAD_LIMIT=", "UP_MAX_ACTIVE_LEVELS=",
        "UP_SCHEDULE=", "UP_CANCELLATION=", "UP_PRINT_CONFIG="};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strncmp(e, names[i], strlen(names[i])))
            return 1;
    return 0;
}

static void spawn_case(const char *name, const char *const *vars)
{
    char *env[512];
    size_t n = 0;
    for (size_t i = 0; environ[i] && n < 400; i++)
        if (!is_layer_var(environ[i]))
            env[n++] = environ[i];
    for (size_t i = 0; vars[i]; i++)
        env[n++] = (char *)vars[i];
    env[n] = NULL;
    char path[] = "/tmp/test_par_env_XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    unlink(path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    /* Under an emulator (a cross build's tests, UP_TEST_EMULATOR from
     * ctest) the child runs under it too: its words come first. */
    char *argv[16], emu[256] = "";
    size_t argc = 0;
    const char *e = getenv("UP_TEST_EMULATOR");
    if (e && *e) {
        snprintf(emu, sizeof emu, "%s", e);
        for (char *w = strtok(emu, " "); w && argc < 12; w = strtok(NULL, " "))
            argv[argc++] = w;
    }
    argv[argc++] = (char *)self;
    argv[argc++] = (char *)name;
    argv[argc] = NULL;
    pid_t pid;
    CHECK_EQ(posix_spawnp(&pid, argv[0], &fa, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&fa);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    ssize_t len = pread(fd, out, sizeof out - 1, 0);
    close(fd);
    out[len > 0 ? len : 0] = '\0';
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "case %s failed (status %d); its stderr:\n%s\n", name, status, out);
        CHECK(0);
    }
    printf("case %s: ok\n", name);
}

static unsigned count(const char *hay, const char *needle)
{
    unsigned c = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        c++;
    return c;
}

#define VARS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_out(const char *needle)
{
    if (!strstr(out, needle)) {
        fprintf(stderr, "the output lacks \"%s\":\n%s\n", needle, out);
        CHECK(0);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return run_case(argv[1]);
    self = argv[0];
#ifndef PAR_ENV_SHARED
    check_defaults();
    check_num_threads();
    check_thread_limit();
    check_max_active();
    check_schedule();
    check_cancellation();
    check_several_errors();
    check_print();
    printf("parser: ok\n");
#endif
    spawn_case("one", VARS("OMP_NUM_THREADS=1"));
    spawn_case("three", VARS("OMP_NUM_THREADS=3"));
    spawn_case("up_wins", VARS("UP_NUM_THREADS=2", "OMP_NUM_THREADS=1"));
    spawn_case("list", VARS("OMP_NUM_THREADS=2,3,1"));
    spawn_case("limit", VARS("OMP_THREAD_LIMIT=2", "OMP_NUM_THREADS=4"));
    spawn_case("active0", VARS("OMP_MAX_ACTIVE_LEVELS=0"));
    spawn_case("active1", VARS("OMP_MAX_ACTIVE_LEVELS=1"));
    spawn_case("active1", VARS("OMP_NESTED=false"));
    spawn_case("active2", VARS("UP_MAX_ACTIVE_LEVELS=2", "OMP_NESTED=false"));
    spawn_case("sched_d", VARS("OMP_SCHEDULE=dynamic,3"));
    spawn_case("sched_s", VARS("OMP_SCHEDULE=static,5"));
    spawn_case("sched_0", VARS("UP_TEST_NOTHING=1"));
    spawn_case("sched_g", VARS("UP_SCHEDULE=guided", "OMP_SCHEDULE=dynamic,3"));
    spawn_case("cancel_off", VARS("OMP_CANCELLATION=false"));
    spawn_case("cancel_on", VARS("UP_TEST_NOTHING=1"));
    spawn_case("cancel_on", VARS("UP_CANCELLATION=yes", "OMP_CANCELLATION=false"));
    /* Malformed UP_ values: every region fails, one message each. */
    spawn_case("bad_UP_NUM_THREADS", VARS("UP_NUM_THREADS=abc", "OMP_NUM_THREADS=2"));
    CHECK_EQ(count(out, "UP_NUM_THREADS=\"abc\""), 1); /* printed once */
    expect_out("ultrapool: UP_NUM_THREADS=\"abc\"");
    expect_out("every parallel region fails with UP_EINVAL");
    spawn_case("bad_UP_SCHEDULE", VARS("UP_SCHEDULE="));
    spawn_case("bad_UP_THREAD_LIMIT", VARS("UP_THREAD_LIMIT=0", "OMP_THREAD_LIMIT=4"));
    spawn_case("bad_UP_MAX_ACTIVE_LEVELS", VARS("UP_MAX_ACTIVE_LEVELS=-1"));
    spawn_case("bad_UP_CANCELLATION", VARS("UP_CANCELLATION=sometimes"));
    /* Malformed OMP_ values: one warning for each, naming the variable
     * and its value, then the defaults, and the regions run. Several
     * variables share a child, to keep the children few. */
    static const char *const ignored[][6] = {
        {"OMP_NUM_THREADS=abc", "OMP_SCHEDULE=bogus", "OMP_MAX_ACTIVE_LEVELS=junk",
         "OMP_THREAD_LIMIT=0", "OMP_CANCELLATION=sometimes", NULL},
        {"OMP_NUM_THREADS=0", "OMP_NESTED=junk", "OMP_SCHEDULE=dynamic,-3", NULL},
        {"OMP_NUM_THREADS=-1", NULL},
        {"OMP_NUM_THREADS=", NULL},
        {"OMP_NUM_THREADS=99999999999999999999", NULL},
        {"OMP_NUM_THREADS=4,x", NULL}};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        spawn_case("ignored", ignored[i]);
        unsigned n = 0;
        for (; ignored[i][n]; n++) {
            const char *eq = strchr(ignored[i][n], '=');
            char quoted[160];
            snprintf(quoted, sizeof quoted, "ultrapool: %.*s=\"%s\"", (int)(eq - ignored[i][n]),
                     ignored[i][n], eq + 1);
            expect_out(quoted);
        }
        CHECK_EQ(count(out, "ultrapool: "), n); /* one warning each */
        CHECK_EQ(count(out, "ignored, the default stays"), n);
        CHECK(!strstr(out, "fails with UP_EINVAL"));
    }
    spawn_case("display",
               VARS("OMP_DISPLAY_ENV=true", "OMP_SCHEDULE=dynamic,3", "OMP_STACKSIZE=4M"));
    expect_out("# ULTRAPOOL CONFIGURATION BEGIN");
    expect_out("UP_PRINT_CONFIG=1\n# UP_PRINT_CONFIG from OMP_DISPLAY_ENV=true\n");
    expect_out("UP_STACK_SIZE=4M\n# UP_STACK_SIZE from OMP_STACKSIZE=4M\n");
    expect_out("UP_SCHEDULE=dynamic,3\n# UP_SCHEDULE from OMP_SCHEDULE=dynamic,3\n");
    CHECK_EQ(count(out, "# ULTRAPOOL CONFIGURATION BEGIN"), 1);
    spawn_case("display", VARS("OMP_DISPLAY_ENV=VERBOSE"));
    expect_out("# UP_PRINT_CONFIG from OMP_DISPLAY_ENV=VERBOSE");
    spawn_case("display", VARS("OMP_DISPLAY_ENV=true", "UP_PRINT_CONFIG=0"));
    CHECK(!strstr(out, "CONFIGURATION BEGIN"));
    spawn_case("display", VARS("OMP_DISPLAY_ENV=false"));
    CHECK(!strstr(out, "CONFIGURATION BEGIN"));
    printf("test_par_env: ok\n");
    return 0;
}
