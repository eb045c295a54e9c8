/* The distributed farm under mpirun (-np 2 and -np 4): every index runs
 * exactly once across the ranks for each schedule and for edge sizes; the
 * reduction equals the sequential one; a failing body stops the farm and
 * is reported alike on every rank; the timeout stops it; bad or
 * mismatched arguments fail on every rank without a hang; up_mpi_wait
 * completes requests from pool tasks. */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <ultrapool/mpi.h>
#include <ultrapool/wait.h>

#include "check.h"
#include "gate.h"
#include "pool_helpers.h"

static int rank, size;
static up_pool *pool;

/* How much longer waits may take here: the sanitizers slow every MPI and
 * pool call about tenfold. */
#if defined(UP_SANITIZER_BUILD)
#define SLACK 10
#else
#define SLACK 1
#endif

typedef struct cover {
    unsigned char *hits;
    atomic_uint_fast64_t calls;
    uint64_t min_chunk_seen;
} cover;

static int mark(uint64_t begin, uint64_t end, void *ctx)
{
    cover *c = ctx;
    CHECK(begin < end);
    for (uint64_t i = begin; i < end; i++)
        c->hits[i]++; /* chunks are disjoint: no two lanes touch one index */
    atomic_fetch_add(&c->calls, 1);
    return 0;
}

/* Runs a farm over n and checks on rank 0 that each index ran once. */
static void check_cover(uint64_t n, const up_mpi_opts *opts, const char *what)
{
    cover c = {calloc(n ? n : 1, 1), 0, 0};
    CHECK(c.hits);
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o = *opts;
    o.report = &rep;
    int rc = up_mpi_for(MPI_COMM_WORLD, pool, n, &o, mark, &c);
    if (rc != UP_OK)
        fprintf(stderr, "rank %d %s: %s\n", rank, what, up_last_error());
    CHECK_EQ(rc, UP_OK);
    CHECK_EQ(rep.status, UP_OK);
    CHECK_EQ(rep.items_all, n);
    CHECK_EQ(rep.rank, -1);
    unsigned char *sum = rank == 0 ? calloc(n ? n : 1, 1) : NULL;
    if (n)
        MPI_Reduce(c.hits, sum, (int)n, MPI_UNSIGNED_CHAR, MPI_SUM, 0, MPI_COMM_WORLD);
    uint64_t mine = rep.items, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(total, n);
    if (rank == 0) {
        for (uint64_t i = 0; i < n; i++)
            if (sum[i] != 1) {
                fprintf(stderr, "%s: index %llu ran %u times\n", what, (unsigned long long)i,
                        sum[i]);
                CHECK(sum[i] == 1);
            }
        printf("cover %-28s n=%llu ok (rank 0: %llu items in %llu chunks)\n", what,
               (unsigned long long)n, (unsigned long long)rep.items,
               (unsigned long long)rep.chunks);
    }
    free(sum);
    free(c.hits);
}

static void test_cover(uint64_t n)
{
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    check_cover(n, &o, "guided");
    o.schedule = UP_MPI_DYNAMIC;
    o.min_chunk = 97;
    check_cover(n, &o, "dynamic, chunk 97");
    o.schedule = UP_MPI_STATIC;
    o.min_chunk = 1;
    check_cover(n, &o, "static");
    o.schedule = UP_MPI_GUIDED;
    o.min_chunk = 5;
    o.max_chunk = 1000;
    o.lanes = 3;
    check_cover(n, &o, "guided, 5..1000, 3 lanes");
    up_mpi_opts_init(&o);
    uint64_t small[] = {0, 1, 2, 3, 5};
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
        check_cover(small[i], &o, "guided, tiny");
        o.schedule = UP_MPI_STATIC;
        check_cover(small[i], &o, "static, tiny");
        o.schedule = UP_MPI_GUIDED;
    }
}

/* A reduction of three fields, to check combine over a struct. */
typedef struct stats {
    uint64_t sum, count;
    uint64_t max;
} stats;

static uint64_t value_of(uint64_t i) { return (i * 2654435761u) % 1000003u; }

static int add_stats(uint64_t begin, uint64_t end, void *acc, void *ctx)
{
    (void)ctx;
    stats *s = acc;
    for (uint64_t i = begin; i < end; i++) {
        uint64_t v = value_of(i);
        s->sum += v;
        s->count++;
        if (v > s->max)
            s->max = v;
    }
    return 0;
}

static void combine_stats(void *into, const void *from, void *ctx)
{
    CHECK(ctx == (void *)&rank);
    stats *a = into;
    const stats *b = from;
    a->sum += b->sum;
    a->count += b->count;
    if (b->max > a->max)
        a->max = b->max;
}

static void test_reduce(uint64_t n)
{
    stats want = {0, 0, 0};
    add_stats(0, n, &want, NULL);
    up_mpi_schedule scheds[] = {UP_MPI_GUIDED, UP_MPI_DYNAMIC, UP_MPI_STATIC};
    for (size_t k = 0; k < 3; k++) {
        up_mpi_opts o;
        up_mpi_opts_init(&o);
        o.schedule = scheds[k];
        o.min_chunk = k == 1 ? 1000 : 1;
        stats got = {0, 0, 0};
        int rc = up_mpi_reduce(MPI_COMM_WORLD, pool, n, &o, add_stats, combine_stats, &rank, &got,
                               sizeof got);
        CHECK_EQ(rc, UP_OK);
        CHECK_EQ(got.sum, want.sum);
        CHECK_EQ(got.count, n);
        CHECK_EQ(got.max, want.max);
    }
    if (rank == 0)
        printf("reduce n=%llu: sum %llu, max %llu as the sequential loop, 3 schedules\n",
               (unsigned long long)n, (unsigned long long)want.sum, (unsigned long long)want.max);
}

/* Index `bad` fails with -42; the others take 20 us each so several ranks
 * hold chunks when it fails. */
typedef struct failing {
    uint64_t bad;
    atomic_uint_fast64_t after_stop_calls;
} failing;

static int fail_at(uint64_t begin, uint64_t end, void *ctx)
{
    failing *f = ctx;
    for (uint64_t i = begin; i < end; i++) {
        if (i == f->bad)
            return -42;
        usleep(20);
    }
    return 0;
}

static void test_failure(uint64_t n)
{
    failing f = {n / 3, 0};
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.report = &rep;
    o.schedule = UP_MPI_DYNAMIC;
    o.min_chunk = 16;
    int rc = up_mpi_for(MPI_COMM_WORLD, pool, n, &o, fail_at, &f);
    CHECK_EQ(rc, UP_ECANCELED);
    CHECK_EQ(rep.status, UP_ECANCELED);
    CHECK_EQ(rep.body_code, -42);
    CHECK(rep.begin <= f.bad && f.bad < rep.end);
    CHECK(rep.rank >= 0 && rep.rank < size);
    CHECK(rep.items_all < n);
    CHECK(strstr(up_last_error(), "returned -42") != NULL);
    /* Every rank names the same failing rank. */
    int lo = rep.rank, hi = rep.rank;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK_EQ(lo, hi);
    if (rank == 0)
        printf("failure: rank %d chunk [%llu, %llu) code %d reported on every rank, %llu of %llu "
               "indexes ran\n",
               rep.rank, (unsigned long long)rep.begin, (unsigned long long)rep.end, rep.body_code,
               (unsigned long long)rep.items_all, (unsigned long long)n);
}

/* How promptly a failure stops the other ranks. Every call runs one index
 * for about 1 ms (a sleep, so a loaded machine still runs it on time); the
 * last rank's 20th call fails; that rank has one lane, so its farm's
 * lanes are all over the moment it fails, and the others two. Each rank notes when each of its
 * calls started, and after the farm the ranks count the calls that started after the failure. A
 * rank notices a failure at its next chunk grab or heartbeat (docs/mpi.md: within 100 ms), so after
 * the failure each of the 2 lanes of a rank can start at most what 100 ms of its own observed call
 * time holds, plus the two chunks the rank holds. The space is four times that budget past the
 * failure, so a farm that does not stop runs it all. Timestamps are compared across ranks, so this
 * needs every rank on one node (one CLOCK_MONOTONIC); elsewhere it says so and skips. */
#define NOTICE_NS   (100000000u * (uint64_t)SLACK)
#define PROMPT_FAIL 20 /* the failing rank's call that fails */

typedef struct prompt {
    uint64_t *starts; /* when each call began */
    atomic_uint_fast64_t calls, busy_ns;
    atomic_uint_fast64_t failed_at; /* 0 until the failing call returns */
    int fail_rank;
} prompt;

static int prompt_body(uint64_t begin, uint64_t end, void *ctx)
{
    prompt *p = ctx;
    (void)begin;
    (void)end;
    uint64_t t0 = test_now_ns();
    uint64_t k = atomic_fetch_add(&p->calls, 1);
    p->starts[k] = t0;
    if (rank == p->fail_rank && k + 1 == PROMPT_FAIL) {
        atomic_store(&p->failed_at, test_now_ns());
        return -7;
    }
    test_sleep_ms(1);
    atomic_fetch_add(&p->busy_ns, test_now_ns() - t0);
    return 0;
}

static bool one_node(void)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    MPI_Get_processor_name(name, &len);
    uint64_t h = 1469598103934665603u; /* FNV-1a of the name */
    for (int i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 1099511628211u;
    uint64_t lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

static void test_failure_prompt(void)
{
    if (!one_node()) {
        if (rank == 0)
            printf("failure notice: ranks on several nodes, no common clock: skipped\n");
        return;
    }
    enum { LANES = 2 };
    /* What one lane may start after the failure, in calls of ~1 ms. */
    uint64_t lane_budget = NOTICE_NS / 1000000u + 2;
    uint64_t allowed = (uint64_t)size * LANES * lane_budget;
    uint64_t n = (uint64_t)size * PROMPT_FAIL + 4 * allowed;
    prompt p = {calloc(n, sizeof(uint64_t)), 0, 0, 0, size - 1};
    CHECK(p.starts);
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.report = &rep;
    o.schedule = UP_MPI_DYNAMIC;
    o.min_chunk = 1;
    o.lanes = rank == size - 1 ? 1 : LANES;
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = up_mpi_for(MPI_COMM_WORLD, pool, n, &o, prompt_body, &p);
    uint64_t returned = test_now_ns();
    CHECK_EQ(rc, UP_ECANCELED);
    CHECK_EQ(rep.rank, size - 1);
    CHECK_EQ(rep.body_code, -7);
    uint64_t failed_at = atomic_load(&p.failed_at);
    MPI_Bcast(&failed_at, 1, MPI_UINT64_T, size - 1, MPI_COMM_WORLD);
    CHECK(failed_at != 0);
    /* This rank's calls begun after the failure, and its mean call. */
    uint64_t calls = atomic_load(&p.calls), after = 0, last = failed_at;
    for (uint64_t i = 0; i < calls; i++)
        if (p.starts[i] > failed_at) {
            after++;
            last = p.starts[i] > last ? p.starts[i] : last;
        }
    uint64_t call_ns =
        calls > 1 ? atomic_load(&p.busy_ns) / (calls - (rank == size - 1)) : 1000000u;
    /* The verdict per rank: its lanes started no more than the notice
     * time allows at the call time it observed, and it returned within
     * that time and a few calls (its last body, the final exchange). */
    uint64_t lane_allowed = NOTICE_NS / (call_ns ? call_ns : 1) + 2;
    uint64_t took = returned - failed_at, took_allowed = NOTICE_NS + 8 * call_ns + NOTICE_NS;
    uint64_t mine[4] = {after, (last - failed_at) / 1000u, took / 1000u, call_ns / 1000u};
    uint64_t all[4 * 64];
    CHECK(size <= 64);
    MPI_Allgather(mine, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T, MPI_COMM_WORLD);
    bool late = after > LANES * lane_allowed || took > took_allowed;
    int any_late = late;
    MPI_Allreduce(MPI_IN_PLACE, &any_late, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("failure notice: rank %d failed after %d calls; %llu of %llu indexes ran; per rank "
               "(calls started after the failure, the last one at, UP_ECANCELED at, mean call):\n",
               size - 1, PROMPT_FAIL, (unsigned long long)rep.items_all, (unsigned long long)n);
        for (int r = 0; r < size; r++)
            printf("  rank %d: %llu calls, +%.1f ms, +%.1f ms, %.2f ms\n", r,
                   (unsigned long long)all[4 * r], all[4 * r + 1] / 1e3, all[4 * r + 2] / 1e3,
                   all[4 * r + 3] / 1e3);
        fflush(stdout);
    }
    if (late)
        fprintf(stderr,
                "rank %d: %llu calls started after the failure (at most %llu), UP_ECANCELED "
                "%.1f ms after it (at most %.1f ms)\n",
                rank, (unsigned long long)after, (unsigned long long)(LANES * lane_allowed),
                took / 1e6, took_allowed / 1e6);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!any_late);
    free(p.starts);
}

static int slow(uint64_t begin, uint64_t end, void *ctx)
{
    (void)ctx;
    usleep((useconds_t)(end - begin) * 1000);
    return 0;
}

static void test_timeout(void)
{
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.report = &rep;
    o.schedule = UP_MPI_DYNAMIC;
    o.timeout_ns = 200000000u;
    uint64_t n = 1000000; /* 1000 s of work at 1 ms an index */
    double t0 = MPI_Wtime();
    int rc = up_mpi_for(MPI_COMM_WORLD, pool, n, &o, slow, NULL);
    double took = MPI_Wtime() - t0;
    CHECK_EQ(rc, UP_ETIMEDOUT);
    CHECK(rep.items_all > 0 && rep.items_all < n);
    CHECK(took < 30.0);
    if (rank == 0)
        printf("timeout 0.2 s: UP_ETIMEDOUT after %.2f s with %llu indexes run\n", took,
               (unsigned long long)rep.items_all);
}

/* The largest space: chunks stay inside it and never wrap, until the
 * timeout ends the farm. */
static int check_huge(uint64_t begin, uint64_t end, void *ctx)
{
    (void)ctx;
    CHECK(begin < end && end <= (UINT64_C(1) << 62));
    return 0;
}

static void test_huge(void)
{
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.report = &rep;
    o.timeout_ns = 50000000u;
    o.max_chunk = 1000;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, UINT64_C(1) << 62, &o, check_huge, NULL),
             UP_ETIMEDOUT);
    CHECK(rep.items_all > 0);
    /* Guided chunks of 2^62 / 4 and more: one rank's first chunk is
     * bigger than any body could run; the timeout still ends it. */
    o.max_chunk = 0;
    o.schedule = UP_MPI_DYNAMIC;
    o.min_chunk = UINT64_C(1) << 61;
    o.timeout_ns = 0; /* it must cover the space, however slow the machine */
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, UINT64_C(1) << 62, &o, check_huge, NULL), UP_OK);
    CHECK_EQ(rep.items_all, UINT64_C(1) << 62);
    if (rank == 0)
        printf("n = 2^62: chunks stay inside, timeout ends it; two chunks of 2^61 cover it\n");
}

/* A rank whose pool's queue stays full when the farm starts: it gives up
 * on its lanes after a heartbeat timeout of trying, without running a lane
 * on its own thread, and the others run its share (guided) or every rank
 * reports UP_EOVERLOAD (static, its block undone). */
static void test_full_queue(void)
{
    up_pool *full = test_one_worker_pool(2, NULL, NULL);
    static test_gate gate;
    test_gate_reset(&gate);
    bool victim = rank == size - 1;
    if (victim) {
        /* The one worker blocks and the queue fills behind it. The queue
         * is filled only once the worker runs the first task: filled
         * before (a loaded machine may take longer than any fixed sleep
         * to start it), a slot would free when the worker takes it, and a
         * lane submitted into it would wait behind a blocked task while
         * its rank held chunks, and the farm would never end. */
        CHECK_EQ(up_submit(full, test_gate_task, &gate), UP_OK);
        test_gate_wait_running(&gate, 1);
        while (up_submit(full, test_gate_task, &gate) == UP_OK)
            ;
    }
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.report = &rep;
    /* The victim gives up after a heartbeat timeout of trying, twice; the
     * other ranks' calls must not look hung meanwhile on a loaded machine,
     * where a rank can wait for the CPU for hundreds of milliseconds (a
     * 300 ms timeout was exceeded under ThreadSanitizer beside CPU hogs):
     * the default 1 s, 2 s under the sanitizers. */
    o.heartbeat_timeout_ns = SLACK > 1 ? 2000000000u : 1000000000u;
    cover c = {calloc(5000, 1), 0, 0};
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, victim ? full : pool, 5000, &o, mark, &c),
             size > 1 ? UP_OK : UP_EOVERLOAD);
    if (victim)
        CHECK_EQ(rep.items, 0);
    CHECK_EQ(rep.items_all, size > 1 ? 5000 : 0);
    o.schedule = UP_MPI_STATIC;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, victim ? full : pool, 5000, &o, mark, &c), UP_EOVERLOAD);
    free(c.hits);
    test_gate_open(&gate);
    up_pool_stop_and_wait(full);
    up_pool_destroy(full);
    if (rank == 0)
        printf("a full queue on rank %d: its share ran elsewhere (guided), UP_EOVERLOAD (static)\n",
               size - 1);
}

static void test_bad_args(void)
{
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    cover c = {calloc(16, 1), 0, 0};
    /* Everyone asks too much. */
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, (UINT64_C(1) << 62) + 1, &o, mark, &c), UP_EINVAL);
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, UINT64_MAX, &o, mark, &c), UP_EINVAL);
    /* One rank's bad argument fails them all, without a hang. */
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, rank == size - 1 ? NULL : mark, &c),
             UP_EINVAL);
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, rank == 0 ? NULL : pool, 16, &o, mark, &c), UP_EINVAL);
    /* Disagreeing sizes and timeouts; heartbeat timeouts may differ (the
     * longest serves everyone). */
    if (size > 1) {
        /* The ranks compared notes: the report is filled, on every rank. */
        up_mpi_report rep;
        memset(&rep, 0x5a, sizeof rep);
        rep.size = sizeof rep;
        o.report = &rep;
        CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 8 + (uint64_t)rank, &o, mark, &c), UP_EINVAL);
        CHECK(strstr(up_last_error(), "disagree on n") != NULL);
        CHECK_EQ(rep.status, UP_EINVAL);
        CHECK_EQ(rep.rank, -1);
        CHECK_EQ(rep.body_code, 0);
        CHECK_EQ(rep.begin, 0);
        CHECK_EQ(rep.end, 0);
        CHECK_EQ(rep.chunks, 0);
        CHECK_EQ(rep.items, 0);
        CHECK_EQ(rep.items_all, 0);
        CHECK_EQ(rep.size, sizeof rep);
        o.report = NULL;
        o.timeout_ns = rank == 0 ? 0 : 5000000000u;
        CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
        CHECK(strstr(up_last_error(), "disagree on timeout_ns") != NULL);
        o.timeout_ns = 0;
        o.heartbeat_timeout_ns = rank == 0 ? 20000000u : 2000000000u;
        for (int i = 0; i < 16; i++)
            c.hits[i] = 0;
        CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, slow, NULL), UP_OK);
        o.heartbeat_timeout_ns = 0;
    }
    /* A chunk far larger than the space: taken once, never wrapping. */
    o.min_chunk = UINT64_C(1) << 63;
    for (int i = 0; i < 16; i++)
        c.hits[i] = 0;
    up_mpi_report rep = UP_MPI_REPORT();
    o.report = &rep;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 100, &o, check_huge, NULL), UP_OK);
    CHECK_EQ(rep.items_all, 100);
    o.report = NULL;
    o.min_chunk = 1;
    o.min_chunk = 0;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    o.min_chunk = 10;
    o.max_chunk = 5;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    up_mpi_opts_init(&o);
    o.lanes = 4097;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    o.lanes = 0;
    o.schedule = (up_mpi_schedule)7;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    CHECK_EQ(up_mpi_for(MPI_COMM_NULL, pool, 16, NULL, mark, &c), UP_EINVAL);
    up_mpi_opts_init(&o);
    o.heartbeat_timeout_ns = 9999999; /* under 10 ms */
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    o.heartbeat_timeout_ns = 0;
    /* Options not made by up_mpi_opts_init (size 0) on one rank fail every
     * rank; so does a report not made by UP_MPI_REPORT, which is left as
     * it was. */
    up_mpi_opts unsized = o;
    unsized.size = 0;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, rank == 0 ? &unsized : &o, mark, &c), UP_EINVAL);
    if (rank == 0)
        CHECK(strstr(up_last_error(), "up_mpi_opts_init()") != NULL);
    up_mpi_report bare = {0};
    o.report = &bare;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    CHECK(strstr(up_last_error(), "UP_MPI_REPORT()") != NULL);
    CHECK_EQ(bare.size, 0);
    CHECK_EQ(bare.status, 0);
    o.report = NULL;
    /* A malformed variable on one rank fails every rank. */
    if (rank == 0)
        setenv("UP_MPI_HEARTBEAT_TIMEOUT", "2 seconds", 1);
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_EINVAL);
    if (rank == 0)
        CHECK(strstr(up_last_error(), "UP_MPI_HEARTBEAT_TIMEOUT") != NULL);
    setenv("UP_MPI_HEARTBEAT_TIMEOUT", "250ms", 1);
    for (int i = 0; i < 16; i++)
        c.hits[i] = 0;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, &o, mark, &c), UP_OK);
    unsetenv("UP_MPI_HEARTBEAT_TIMEOUT");
    CHECK_EQ(up_mpi_opts_init(NULL), UP_EINVAL);
    int r = 0;
    CHECK_EQ(up_mpi_reduce(MPI_COMM_WORLD, pool, 16, NULL, NULL, NULL, NULL, &r, sizeof r),
             UP_EINVAL);
    CHECK_EQ(up_mpi_wait(NULL, MPI_STATUS_IGNORE), UP_EINVAL);
    /* After all that, a good farm still covers once. */
    for (int i = 0; i < 16; i++)
        c.hits[i] = 0;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 16, NULL, mark, &c), UP_OK);
    free(c.hits);
    if (rank == 0)
        printf("bad arguments: UP_EINVAL on every rank, no hang\n");
}

/* Pool tasks exchange messages with the neighbouring ranks, each waiting
 * in up_mpi_wait. Fewer workers than tasks: a task that held its worker
 * while waiting would stall the ones that send. */
typedef struct exchange {
    int peer, tag;
    int sent, got;
    atomic_int *done;
} exchange;

static void exchange_task(void *arg)
{
    exchange *e = arg;
    MPI_Request reqs[2];
    MPI_Irecv(&e->got, 1, MPI_INT, e->peer, e->tag, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&e->sent, 1, MPI_INT, e->peer, e->tag, MPI_COMM_WORLD, &reqs[1]);
    CHECK_EQ(up_mpi_wait(&reqs[1], MPI_STATUS_IGNORE), UP_OK);
    CHECK_EQ(up_mpi_wait(&reqs[0], MPI_STATUS_IGNORE), UP_OK);
    atomic_fetch_add(e->done, 1);
}

static void test_wait(void)
{
    if (size < 2)
        return;
    enum { TASKS = 64 };
    exchange ex[TASKS];
    atomic_int done = 0;
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank; /* an odd rank out talks to itself */
    for (int i = 0; i < TASKS; i++) {
        ex[i] = (exchange){peer, i, rank * 1000 + i, -1, &done};
        CHECK_EQ(up_submit_wait(pool, exchange_task, &ex[i]), UP_OK);
    }
    while (atomic_load(&done) < TASKS)
        usleep(1000);
    for (int i = 0; i < TASKS; i++)
        CHECK_EQ(ex[i].got, peer * 1000 + i);
    /* A request that never completes times out and stays pending. */
    int never;
    MPI_Request req;
    MPI_Irecv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 99999, MPI_COMM_WORLD, &req);
    CHECK_EQ(up_mpi_wait_timeout(&req, MPI_STATUS_IGNORE, 20000000u), UP_ETIMEDOUT);
    MPI_Cancel(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("up_mpi_wait: %d exchanges per rank from pool tasks\n", TASKS);
}

/* On a pool of one worker, a task waits in up_mpi_wait for a message that
 * only a task queued behind it sends: it completes only if the waiting
 * task gives its worker away (it parks) instead of holding it. */
typedef struct self_msg {
    int value, got;
    MPI_Request req;
    atomic_int done;
} self_msg;

static void self_receiver(void *arg)
{
    self_msg *m = arg;
    MPI_Irecv(&m->got, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &m->req);
    CHECK_EQ(up_mpi_wait(&m->req, MPI_STATUS_IGNORE), UP_OK);
    atomic_fetch_add(&m->done, 1);
}

static void self_sender(void *arg)
{
    self_msg *m = arg;
    MPI_Send(&m->value, 1, MPI_INT, 0, 7, MPI_COMM_SELF);
    atomic_fetch_add(&m->done, 1);
}

static void test_wait_parks(void)
{
    up_pool *one = test_one_worker_pool(0, NULL, NULL);
    self_msg m = {.value = 4242, .got = 0};
    atomic_init(&m.done, 0);
    CHECK_EQ(up_submit(one, self_receiver, &m), UP_OK);
    usleep(20000); /* the receiver is waiting before the sender is queued */
    CHECK_EQ(up_submit(one, self_sender, &m), UP_OK);
    WAIT_UNTIL(atomic_load(&m.done) == 2, 10000);
    CHECK_EQ(m.got, 4242);
    up_stats st;
    up_pool_stats(one, &st);
    CHECK_EQ(st.workers_peak, 1);
    up_pool_stop_and_wait(one);
    up_pool_destroy(one);
    if (rank == 0)
        printf("up_mpi_wait parks: one worker ran the waiting receiver and the sender behind it\n");
}

/* Bodies that call MPI need MPI_THREAD_MULTIPLE, which this test asked
 * for: a body doing an MPI call of its own (on a communicator of its own)
 * runs. */
static int body_with_mpi(uint64_t begin, uint64_t end, void *ctx)
{
    (void)ctx;
    int r = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &r);
    CHECK_EQ(r, 0);
    (void)begin;
    (void)end;
    return 0;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), UP_OK);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = 4;
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    uint64_t n = test_size("UP_TEST_MPI_N", 200003);
    if (rank == 0)
        printf("%d ranks, %u CPUs in rank 0's pool, n=%llu\n", size, up_pool_cpus(pool),
               (unsigned long long)n);
        /* Each part's time on rank 0, to see where a slow run goes. */
#define PART(call)                                                                                 \
    do {                                                                                           \
        double t0_ = MPI_Wtime();                                                                  \
        call;                                                                                      \
        if (rank == 0)                                                                             \
            printf("  (%s: %.2f s)\n", #call, MPI_Wtime() - t0_);                                  \
        fflush(stdout);                                                                            \
    } while (0)
    PART(test_cover(n));
    PART(test_reduce(n));
    PART(test_failure(test_size("UP_TEST_MPI_FAIL_N", 20000)));
    PART(test_failure_prompt());
    PART(test_timeout());
    PART(test_huge());
    PART(test_full_queue());
    PART(test_bad_args());
    PART(test_wait());
    PART(test_wait_parks());
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.body_calls_mpi = 1;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 1000, &o, body_with_mpi, NULL), UP_OK);
    up_pool_stop_and_wait(pool);
    /* A stopped pool runs nothing here; the other ranks still finish. */
    cover c = {calloc(100, 1), 0, 0};
    up_mpi_report rep = UP_MPI_REPORT();
    up_mpi_opts_init(&o);
    o.report = &rep;
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 100, &o, mark, &c), UP_ESTOPPED);
    CHECK_EQ(rep.items, 0);
    free(c.hits);
    up_pool_destroy(pool);
    MPI_Finalize();
    return 0;
}
