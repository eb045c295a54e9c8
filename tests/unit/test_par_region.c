/* Parallel regions and worksharing: member numbering, barriers, single,
 * master, critical sections, every loop schedule (with and without
 * nowait), 2-D collapse, reductions against sequential results, the
 * combined parallel loop, regions inside pool tasks and nested regions. */
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/parallel.h>

#include "check.h"

static up_pool *pool;

/* ---- members, barrier, single, master, critical ---- */
typedef struct basics {
    _Atomic unsigned seen_mask;
    _Atomic int singles, masters, in_critical, critical_overlap;
    _Atomic int phase_errors;
    _Atomic int phase;
    long counter; /* guarded by the critical section */
    unsigned size;
} basics;

static void basics_region(void *p)
{
    basics *b = p;
    unsigned me = up_thread_num(), n = up_num_threads();
    CHECK_LT(me, n);
    if (up_master())
        b->size = n;
    atomic_fetch_or(&b->seen_mask, 1u << me);
    for (int round = 0; round < 50; round++) {
        if (up_single())
            atomic_fetch_add(&b->singles, 1);
        if (up_master())
            atomic_fetch_add(&b->masters, 1);
        /* Nobody passes the barrier before everybody reached it. */
        atomic_fetch_add(&b->phase, 1);
        up_barrier();
        if (atomic_load(&b->phase) < (int)n * (round + 1))
            atomic_fetch_add(&b->phase_errors, 1);
        up_barrier();
        for (int k = 0; k < 100; k++) {
            up_critical_begin("counter");
            if (atomic_fetch_add(&b->in_critical, 1) != 0)
                atomic_store(&b->critical_overlap, 1);
            b->counter++;
            atomic_fetch_sub(&b->in_critical, 1);
            up_critical_end("counter");
        }
    }
}

static void basics_test(unsigned threads)
{
    basics b;
    memset(&b, 0, sizeof b);
    CHECK_EQ(up_parallel(pool, threads, basics_region, &b), UP_OK);
    unsigned n = b.size;
    CHECK(n >= 1 && n <= threads);
    CHECK_EQ(atomic_load(&b.seen_mask), (1u << n) - 1);
    CHECK_EQ(atomic_load(&b.singles), 50);
    CHECK_EQ(atomic_load(&b.masters), 50);
    CHECK_EQ(atomic_load(&b.phase_errors), 0);
    CHECK_EQ(atomic_load(&b.critical_overlap), 0);
    CHECK_EQ(b.counter, 50 * 100 * (long)n);
}

/* ---- loops ---- */
#define N 10007
typedef struct loops {
    _Atomic unsigned char hits[N];
    up_for_opts opts;
    _Atomic int order_errors;
    double sum;
    int64_t imin, imax;
    double prod;
    unsigned n;
} loops;

static void mark_range(int64_t lo, int64_t hi, void *p)
{
    loops *l = p;
    CHECK(lo < hi && lo >= 0 && hi <= N);
    for (int64_t i = lo; i < hi; i++)
        atomic_fetch_add(&l->hits[i], 1);
}

typedef struct partial {
    loops *l;
    double s;
    int64_t mn, mx;
} partial;

static void sum_range(int64_t lo, int64_t hi, void *p)
{
    partial *pt = p;
    for (int64_t i = lo; i < hi; i++) {
        pt->s += (double)i * 0.5;
        int64_t v = (i * 7919) % 10007;
        if (v < pt->mn)
            pt->mn = v;
        if (v > pt->mx)
            pt->mx = v;
    }
}

static void loops_region(void *p)
{
    loops *l = p;
    /* Several loops in a row, with nowait, to cycle the shared counters. */
    for (int k = 0; k < 20; k++) {
        up_for_opts o = l->opts;
        o.nowait = k % 2;
        CHECK_EQ(up_for(0, N, &o, mark_range, l), UP_OK);
    }
    up_barrier();
    partial pt = {l, 0, INT64_MAX, INT64_MIN};
    CHECK_EQ(up_for(0, N, &l->opts, sum_range, &pt), UP_OK);
    double s = pt.s;
    int64_t mn = pt.mn, mx = pt.mx;
    CHECK_EQ(up_reduce(&s, UP_RED_SUM, UP_RED_DOUBLE), UP_OK);
    CHECK_EQ(up_reduce(&mn, UP_RED_MIN, UP_RED_INT64), UP_OK);
    CHECK_EQ(up_reduce(&mx, UP_RED_MAX, UP_RED_INT64), UP_OK);
    double pr = 2.0; /* the product over the team is 2^n */
    CHECK_EQ(up_reduce(&pr, UP_RED_PROD, UP_RED_DOUBLE), UP_OK);
    if (up_master()) {
        l->sum = s;
        l->imin = mn;
        l->imax = mx;
        l->prod = pr;
        l->n = up_num_threads();
    }
}

static void loops_test(up_schedule sched, int64_t chunk)
{
    static loops l;
    memset(&l, 0, sizeof l);
    l.opts = UP_FOR_OPTS(.schedule = sched, .chunk = chunk);
    CHECK_EQ(up_parallel(pool, 0, loops_region, &l), UP_OK);
    for (int i = 0; i < N; i++)
        CHECK_EQ(l.hits[i], 20);
    double want = 0;
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (int64_t i = 0; i < N; i++) {
        want += (double)i * 0.5;
        int64_t v = (i * 7919) % 10007;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    CHECK_EQ(l.sum, want); /* exact: halves of integers, summed well within 2^53 */
    CHECK_EQ(l.imin, mn);
    CHECK_EQ(l.imax, mx);
    CHECK_EQ(l.prod, (double)(1u << l.n));
}

/* ---- a member far ahead through nowait loops ----
 * Member 0 sleeps while member 1 runs 3 x 8 dynamic nowait loops: from
 * the ninth on, each needs the slot of a loop member 0 has not left, so
 * member 1 waits (spins, then parks) until member 0 frees it. A lost
 * wake-up hangs here (ctest's timeout); every iteration of every loop
 * must still run once. */
enum { AHEAD_LOOPS = 24, AHEAD_N = 64 };
static _Atomic unsigned ahead_hits[AHEAD_LOOPS][AHEAD_N];
typedef struct ahead_ctx {
    int loop;
} ahead_ctx;

static void ahead_body(int64_t lo, int64_t hi, void *p)
{
    ahead_ctx *c = p;
    for (int64_t i = lo; i < hi; i++)
        atomic_fetch_add(&ahead_hits[c->loop][i], 1);
}

static void ahead_region(void *p)
{
    (void)p;
    if (up_thread_num() == 0)
        test_sleep_ms(200);
    up_for_opts o = UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = 1, .nowait = 1);
    for (int k = 0; k < AHEAD_LOOPS; k++) {
        ahead_ctx c = {k};
        CHECK_EQ(up_for(0, AHEAD_N, &o, ahead_body, &c), UP_OK);
    }
    up_barrier();
}

static void ahead_test(void)
{
    memset((void *)ahead_hits, 0, sizeof ahead_hits);
    CHECK_EQ(up_parallel_exact(pool, 2, ahead_region, NULL), UP_OK);
    for (int k = 0; k < AHEAD_LOOPS; k++)
        for (int i = 0; i < AHEAD_N; i++)
            CHECK_EQ(ahead_hits[k][i], 1);
}

/* ---- collapse(2) ---- */
static _Atomic unsigned char grid[37][53];
static void cell(int64_t i, int64_t jlo, int64_t jhi, void *p)
{
    (void)p;
    for (int64_t j = jlo; j < jhi; j++)
        atomic_fetch_add(&grid[i - 3][j - 5], 1);
}
static void collapse_region(void *p)
{
    up_for_opts *o = p;
    CHECK_EQ(up_for_2d(3, 40, 5, 58, o, cell, NULL), UP_OK);
}

/* ---- user reduction ---- */
typedef struct mm {
    int64_t lo, hi;
} mm;
static void mm_combine(void *into, const void *from)
{
    mm *a = into;
    const mm *b = from;
    a->lo = b->lo < a->lo ? b->lo : a->lo;
    a->hi = b->hi > a->hi ? b->hi : a->hi;
}
static _Atomic int user_ok;
static void user_region(void *p)
{
    (void)p;
    mm v = {100 + up_thread_num(), 200 + up_thread_num()};
    CHECK_EQ(up_reduce_user(&v, sizeof v, mm_combine), UP_OK);
    if (v.lo == 100 && v.hi == 200 + (int64_t)up_num_threads() - 1)
        atomic_fetch_add(&user_ok, 1);
}

/* ---- parallel for ---- */
static _Atomic int64_t pfor_sum;
static void pfor_body(int64_t lo, int64_t hi, void *p)
{
    (void)p;
    int64_t s = 0;
    for (int64_t i = lo; i < hi; i++)
        s += i;
    atomic_fetch_add(&pfor_sum, s);
}

/* ---- regions inside pool tasks, and nested regions ---- */
static _Atomic int inner_members, nested_ok;
static void inner_region(void *p)
{
    (void)p;
    atomic_fetch_add(&inner_members, 1);
    if (up_level() >= 1)
        atomic_fetch_add(&nested_ok, 1);
}
static void outer_region(void *p)
{
    (void)p;
    CHECK_EQ(up_parallel(pool, 2, inner_region, NULL), UP_OK); /* nested: may get 1 thread */
    up_barrier();
}
static _Atomic int from_task_done;
static void region_from_task(void *p)
{
    (void)p;
    basics_test(2);
    atomic_fetch_add(&from_task_done, 1);
}

int main(void)
{
    up_config cfg;
    up_config_init(&cfg);
    CHECK_EQ(up_pool_create(&pool, &cfg), UP_OK);
    int rounds = (int)test_size("UP_TEST_PAR_ROUNDS", 20);
    for (int r = 0; r < rounds; r++) {
        basics_test(1);
        basics_test(2);
        basics_test(4);
    }
    up_schedule scheds[] = {UP_SCHED_STATIC, UP_SCHED_DYNAMIC, UP_SCHED_GUIDED, UP_SCHED_AUTO};
    for (int s = 0; s < 4; s++)
        for (int64_t chunk = 0; chunk <= 64; chunk += 7) {
            if (s == 3 && chunk)
                continue;
            loops_test(scheds[s], chunk);
        }
    ahead_test();
    for (int s = 0; s < 3; s++) {
        memset((void *)grid, 0, sizeof grid);
        up_for_opts o = UP_FOR_OPTS(.schedule = scheds[s], .chunk = s ? 5 : 0);
        CHECK_EQ(up_parallel(pool, 0, collapse_region, &o), UP_OK);
        for (int i = 0; i < 37; i++)
            for (int j = 0; j < 53; j++)
                CHECK_EQ(grid[i][j], 1);
    }
    CHECK_EQ(up_parallel(pool, 3, user_region, NULL), UP_OK);
    CHECK_GE(atomic_load(&user_ok), 1);
    up_for_opts dyn = UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = 100);
    CHECK_EQ(up_parallel_for(pool, 0, 100000, &dyn, pfor_body, NULL), UP_OK);
    CHECK_EQ(atomic_load(&pfor_sum), (int64_t)99999 * 100000 / 2);
    CHECK_EQ(up_parallel(pool, 2, outer_region, NULL), UP_OK);
    CHECK_GE(atomic_load(&inner_members), 2); /* at least one inner member per outer member */
    CHECK_EQ(atomic_load(&nested_ok), atomic_load(&inner_members));
    for (int i = 0; i < 4; i++)
        CHECK_EQ(up_submit_wait(pool, region_from_task, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&from_task_done) == 4, 30000);
    CHECK_EQ(atomic_load(&from_task_done), 4);
    /* All or nothing: exactly 2 members (a pool of 2 shards gathers them),
     * and a team larger than the pool's caps allow is refused whole. */
    basics eb;
    memset(&eb, 0, sizeof eb);
    CHECK_EQ(up_parallel_exact(pool, 2, basics_region, &eb), UP_OK);
    CHECK_EQ(eb.size, 2);
    up_config small;
    up_config_init(&small);
    small.shards = 1;
    small.shard_max_workers = 1;
    up_pool *one;
    CHECK_EQ(up_pool_create(&one, &small), UP_OK);
    /* One worker cannot make a team of 3 (an OpenMP backend's team does
     * not come from the pool). */
    if (up_get_backend() == UP_BACKEND_ULTRAPOOL) {
        memset(&eb, 0, sizeof eb);
        CHECK_EQ(up_parallel_exact(one, 3, basics_region, &eb), UP_EAGAIN);
        CHECK_EQ(eb.size, 0); /* nothing ran */
    }
    CHECK_EQ(up_pool_destroy(one), UP_OK);
    /* Bad input. */
    CHECK_EQ(up_parallel(NULL, 2, basics_region, NULL), UP_EINVAL);
    CHECK_EQ(up_parallel(pool, 2, NULL, NULL), UP_EINVAL);
    CHECK_EQ(up_for(0, 10, NULL, NULL, NULL), UP_EINVAL);
    up_for_opts bad = UP_FOR_OPTS(.schedule = (up_schedule)9);
    CHECK_EQ(up_for(0, 10, &bad, mark_range, NULL), UP_EINVAL);
    CHECK_EQ(up_reduce(NULL, UP_RED_SUM, UP_RED_DOUBLE), UP_EINVAL);
    /* Outside a region everything degrades to one thread. */
    CHECK_EQ(up_thread_num(), 0);
    CHECK_EQ(up_num_threads(), 1);
    CHECK(up_single() && up_master());
    up_barrier();
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    printf("regions: %d rounds of members/barrier/single/master/critical at 1, 2, 4 threads; "
           "31 loop schedules; collapse; reductions; nesting; regions inside pool tasks\n",
           rounds);
    return 0;
}
