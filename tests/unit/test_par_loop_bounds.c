/* Worksharing loops at the int64 extremes: up_for (every schedule, chunk
 * 0, 1, 7, huge and INT64_MAX, with and without nowait), up_parallel_for,
 * up_for_2d and up_taskloop, in teams of 1, 2 and 3. Every range a body
 * receives is recorded; the ranges must tile [lo, hi) exactly (sorted,
 * each starting where the previous one ended, none empty, none outside),
 * which is exact coverage without a duplicate. Ranges of up to 2^64 - 1
 * iterations are checked through their chunks, never iteration by
 * iteration: a case runs only when the number of chunks its schedule
 * implies is small. The chunk sizes each schedule promises are checked
 * too (static round robin, dynamic chunks, guided minimum, taskloop
 * grainsize and num_tasks).
 *
 * up_for_2d over 2^32 x 2^32 cells calls its body once per row at least,
 * 2^32 times: a child process runs it and stops after the first pieces of
 * every member, which must continue one another in row-major order from
 * where the member's static block starts. */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ultrapool/parallel.h>

#include "check.h"

#define CAP    (1u << 15) /* ranges one loop may hand out before it counts as a runaway */
#define BUDGET 20000u     /* cases whose schedule implies more chunks are not run */
#define NLOOPS 3          /* loops run back to back with nowait before one check */

typedef struct rec {
    int64_t b, e, row;
    unsigned member;
} rec;

typedef struct recset {
    int64_t lo, hi;     /* the loop's range (columns for 2-D) */
    int64_t ilo, ihi;   /* rows for 2-D */
    _Atomic unsigned n; /* ranges recorded */
    _Atomic int bad;    /* a range out of bounds or empty */
    rec r[CAP];
} recset;

static up_pool *pool;
static recset *sets; /* NLOOPS of them */
static unsigned sizes_seen[4];

static void put(recset *s, int64_t row, int64_t b, int64_t e)
{
    unsigned k = atomic_fetch_add(&s->n, 1);
    if (k >= CAP) {
        /* A runaway loop: stop it here rather than after 2^64 calls. */
        fprintf(stderr, "more than %u ranges in one loop (last [%lld, %lld))\n", CAP, (long long)b,
                (long long)e);
        abort();
    }
    s->r[k] = (rec){b, e, row, up_thread_num()};
}

static void body1d(int64_t b, int64_t e, void *ctx)
{
    recset *s = ctx;
    if (!(b < e && b >= s->lo && e <= s->hi))
        atomic_store(&s->bad, 1);
    put(s, 0, b, e);
}

static void body2d(int64_t i, int64_t jlo, int64_t jhi, void *ctx)
{
    recset *s = ctx;
    if (!(jlo < jhi && jlo >= s->lo && jhi <= s->hi && i >= s->ilo && i < s->ihi))
        atomic_store(&s->bad, 1);
    put(s, i, jlo, jhi);
}

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static uint64_t span(int64_t lo, int64_t hi) { return hi > lo ? (uint64_t)hi - (uint64_t)lo : 0; }

/* How many chunks a schedule hands out over n iterations, at most. */
static uint64_t chunks_of(up_schedule s, int64_t chunk, uint64_t n, unsigned size)
{
    if (n == 0)
        return 0;
    switch (s) {
    case UP_SCHED_STATIC:
        if (chunk == 0)
            return size;
        return n / (uint64_t)chunk + (n % (uint64_t)chunk != 0);
    case UP_SCHED_DYNAMIC: {
        uint64_t c = chunk ? (uint64_t)chunk : 1;
        return n / c + (n % c != 0);
    }
    case UP_SCHED_GUIDED:
        return 2 * size * 64 + 2 * size; /* halving steps, then the minimum chunks */
    case UP_SCHED_AUTO:
        return size;
    case UP_SCHED_RUNTIME: /* not used here (test_par_env checks it) */
        break;
    }
    return UINT64_MAX;
}

static const char *sched_name[] = {"static", "dynamic", "guided", "auto"};

/* The ranges of one 1-D loop tile [lo, hi) and have the sizes the
 * schedule promises; a team of one runs the whole range at once. size 0:
 * the team is not known, check the tiling only. */
static void check_1d(recset *s, up_schedule sched, int64_t chunk, unsigned size)
{
    unsigned n = atomic_load(&s->n);
    uint64_t total = span(s->lo, s->hi);
    if (atomic_load(&s->bad) || (total == 0) != (n == 0)) {
        fprintf(stderr, "%s chunk %lld on [%lld, %lld), team %u: %u ranges, bad %d\n",
                sched_name[sched], (long long)chunk, (long long)s->lo, (long long)s->hi, size, n,
                atomic_load(&s->bad));
        abort();
    }
    if (n == 0)
        return;
    qsort(s->r, n, sizeof s->r[0], cmp_rec);
    if (size == 1 && n != 1) {
        fprintf(stderr, "%s chunk %lld on [%lld, %lld), team of one: %u ranges, not one\n",
                sched_name[sched], (long long)chunk, (long long)s->lo, (long long)s->hi, n);
        abort();
    }
    if (size <= 1)
        sched = UP_SCHED_AUTO; /* the tiling alone */
    uint64_t sum = 0;
    for (unsigned k = 0; k < n; k++) {
        const rec *r = &s->r[k];
        uint64_t len = (uint64_t)r->e - (uint64_t)r->b;
        int ok = (k == 0 ? r->b == s->lo : r->b == s->r[k - 1].e);
        int last = k == n - 1;
        if (last)
            ok = ok && r->e == s->hi;
        /* The sizes each schedule promises. */
        uint64_t off = (uint64_t)r->b - (uint64_t)s->lo;
        switch (sched) {
        case UP_SCHED_STATIC:
            if (chunk > 0)
                ok = ok && (len == (uint64_t)chunk || (last && len < (uint64_t)chunk)) &&
                     r->member == (off / (uint64_t)chunk) % size;
            else
                ok = ok && (k == 0 || r->member > s->r[k - 1].member);
            break;
        case UP_SCHED_DYNAMIC:
            ok = ok && (len == (uint64_t)(chunk ? chunk : 1) ||
                        (last && len < (uint64_t)(chunk ? chunk : 1)));
            break;
        case UP_SCHED_GUIDED:
            ok = ok && (len >= (uint64_t)(chunk ? chunk : 1) || last);
            break;
        case UP_SCHED_AUTO:
        case UP_SCHED_RUNTIME:
            break;
        }
        if (!ok) {
            fprintf(stderr,
                    "%s chunk %lld on [%lld, %lld), team %u: range %u of %u is [%lld, %lld) "
                    "from member %u\n",
                    sched_name[sched], (long long)chunk, (long long)s->lo, (long long)s->hi, size,
                    k, n, (long long)r->b, (long long)r->e, r->member);
            abort();
        }
        sum += len;
    }
    CHECK_EQ(sum, total);
}

static void reset(recset *s, int64_t lo, int64_t hi)
{
    s->lo = lo;
    s->hi = hi;
    atomic_store(&s->n, 0);
    atomic_store(&s->bad, 0);
}

static const int64_t ranges[][2] = {
    {INT64_MIN, INT64_MAX},
    {INT64_MIN, INT64_MIN + 1000},
    {INT64_MAX - 1000, INT64_MAX},
    {INT64_MAX - 1, INT64_MAX},
    {INT64_MIN, INT64_MIN + 1},
    {INT64_MIN, 0},
    {-1, INT64_MAX},
    {INT64_MIN + 1, INT64_MAX},
    {-500, 500},
    {INT64_MIN, INT64_MIN},
    {INT64_MAX, INT64_MIN},
    {0, 0},
};
#define NRANGES (sizeof ranges / sizeof ranges[0])
static const int64_t chunks[] = {0, 1, 7, INT64_C(1) << 52, INT64_MAX - 1, INT64_MAX};
#define NCHUNKS (sizeof chunks / sizeof chunks[0])

/* Every member runs the same loops in the same order (as the API asks),
 * NLOOPS of them back to back when nowait is set, then one checks. */
static void loops_region(void *p)
{
    (void)p;
    unsigned size = up_num_threads();
    if (up_master())
        sizes_seen[size < 4 ? size : 3]++;
    for (int sched = UP_SCHED_STATIC; sched <= UP_SCHED_AUTO; sched++)
        for (unsigned c = 0; c < NCHUNKS; c++)
            for (unsigned r = 0; r < NRANGES; r++)
                for (int nowait = 0; nowait < 2; nowait++) {
                    int64_t lo = ranges[r][0], hi = ranges[r][1], chunk = chunks[c];
                    if (chunks_of((up_schedule)sched, chunk, span(lo, hi), size) > BUDGET)
                        continue;
                    if (up_master())
                        for (int k = 0; k < NLOOPS; k++)
                            reset(&sets[k], lo, hi);
                    up_barrier();
                    up_for_opts o = UP_FOR_OPTS(.schedule = (up_schedule)sched, .chunk = chunk,
                                                .nowait = nowait);
                    for (int k = 0; k < (nowait ? NLOOPS : 1); k++)
                        CHECK_EQ(up_for(lo, hi, &o, body1d, &sets[k]), UP_OK);
                    up_barrier();
                    if (up_master())
                        for (int k = 0; k < (nowait ? NLOOPS : 1); k++)
                            check_1d(&sets[k], (up_schedule)sched, chunk, size);
                    up_barrier();
                }
}

/* ---- 2-D ---- */

typedef struct case2d {
    int64_t ilo, ihi, jlo, jhi;
} case2d;

static const case2d cases2d[] = {
    {0, 3, INT64_MIN, INT64_MIN + (INT64_C(1) << 62)}, /* 3 x 2^62: fits in 64 bits */
    {INT64_MAX - 2, INT64_MAX, INT64_MIN, INT64_MAX},  /* 2 x (2^64 - 1) */
    {INT64_MIN, INT64_MIN + 3, -1, INT64_MAX},         /* 3 x 2^63 */
    {INT64_MAX - 1000, INT64_MAX, INT64_MAX - 7, INT64_MAX},
    {INT64_MIN, INT64_MIN + 1000, INT64_MIN, INT64_MIN + 3},
    {INT64_MAX - 5, INT64_MAX, 5, 5},
    {INT64_MAX, INT64_MIN, 0, 10},
};
#define NCASES2D (sizeof cases2d / sizeof cases2d[0])

/* Pieces of one row each: per row, they tile [jlo, jhi); every row of
 * [ilo, ihi) appears. */
static void check_2d(recset *s, const case2d *c, up_schedule sched, int64_t chunk, unsigned size)
{
    unsigned n = atomic_load(&s->n);
    uint64_t rows = span(c->ilo, c->ihi), cols = span(c->jlo, c->jhi);
    int fail = atomic_load(&s->bad) || ((rows == 0 || cols == 0) != (n == 0));
    if (!fail && n) {
        qsort(s->r, n, sizeof s->r[0], cmp_rec);
        uint64_t row = 0;
        for (unsigned k = 0; k < n && !fail; k++) {
            const rec *r = &s->r[k];
            int first = k == 0 || r->row != s->r[k - 1].row;
            if (first) {
                /* A new row: the previous one ended at jhi, this is the next. */
                if (k > 0 &&
                    (s->r[k - 1].e != c->jhi || (uint64_t)r->row - (uint64_t)c->ilo != ++row))
                    fail = 1;
                if (k == 0 && r->row != c->ilo)
                    fail = 1;
                if (r->b != c->jlo)
                    fail = 1;
            } else if (r->b != s->r[k - 1].e) {
                fail = 1;
            }
        }
        fail = fail || s->r[n - 1].e != c->jhi || row != rows - 1;
    }
    if (fail) {
        fprintf(stderr, "2-D %s chunk %lld over [%lld, %lld) x [%lld, %lld), team %u: %u pieces\n",
                sched_name[sched], (long long)chunk, (long long)c->ilo, (long long)c->ihi,
                (long long)c->jlo, (long long)c->jhi, size, n);
        abort();
    }
}

static void loops2d_region(void *p)
{
    (void)p;
    unsigned size = up_num_threads();
    for (int sched = UP_SCHED_STATIC; sched <= UP_SCHED_AUTO; sched++)
        for (unsigned c = 0; c < NCHUNKS; c++)
            for (unsigned k = 0; k < NCASES2D; k++) {
                const case2d *cs = &cases2d[k];
                int64_t chunk = chunks[c];
                uint64_t rows = span(cs->ilo, cs->ihi), cols = span(cs->jlo, cs->jhi);
                /* Pieces: at most one per chunk plus one per row it crosses. */
                uint64_t flat = cols && rows > UINT64_MAX / cols ? UINT64_MAX : rows * cols;
                uint64_t est = chunks_of((up_schedule)sched, chunk, flat, size);
                if (est > BUDGET || rows > BUDGET)
                    continue;
                if (up_master()) {
                    reset(&sets[0], cs->jlo, cs->jhi);
                    sets[0].ilo = cs->ilo;
                    sets[0].ihi = cs->ihi;
                }
                up_barrier();
                up_for_opts o = UP_FOR_OPTS(.schedule = (up_schedule)sched, .chunk = chunk);
                CHECK_EQ(up_for_2d(cs->ilo, cs->ihi, cs->jlo, cs->jhi, &o, body2d, &sets[0]),
                         UP_OK);
                if (up_master())
                    check_2d(&sets[0], cs, (up_schedule)sched, chunk, size);
                up_barrier();
            }
}

/* ---- taskloop ---- */

static void check_taskloop(recset *s, int64_t grain, int64_t ntasks)
{
    unsigned n = atomic_load(&s->n);
    check_1d(s, UP_SCHED_AUTO, 0, 0); /* the tiling */
    uint64_t total = span(s->lo, s->hi);
    for (unsigned k = 0; k < n; k++) {
        uint64_t len = (uint64_t)s->r[k].e - (uint64_t)s->r[k].b;
        if (grain && total >= (uint64_t)grain)
            CHECK(len >= (uint64_t)grain && len / 2 < (uint64_t)grain);
    }
    if (!grain && ntasks)
        CHECK_EQ(n, total < (uint64_t)ntasks ? total : (uint64_t)ntasks);
}

static void taskloop_region(void *p)
{
    (void)p;
    static const int64_t grains[] = {0, 1, 7, INT64_C(1) << 52, INT64_MAX};
    static const int64_t ntasks[] = {0, 1, 5, 1000};
    for (unsigned r = 0; r < NRANGES; r++)
        for (unsigned g = 0; g < sizeof grains / sizeof grains[0]; g++)
            for (unsigned t = 0; t < sizeof ntasks / sizeof ntasks[0]; t++) {
                int64_t lo = ranges[r][0], hi = ranges[r][1];
                uint64_t n = span(lo, hi);
                if (grains[g] && n / (uint64_t)grains[g] > BUDGET)
                    continue;
                if (up_single()) {
                    reset(&sets[0], lo, hi);
                    up_taskloop_opts o =
                        UP_TASKLOOP_OPTS(.grainsize = grains[g], .num_tasks = ntasks[t]);
                    CHECK_EQ(up_taskloop(lo, hi, &o, body1d, &sets[0]), UP_OK);
                    check_taskloop(&sets[0], grains[g], grains[g] ? 0 : ntasks[t]);
                }
                up_barrier();
            }
}

/* ---- up_for_2d over 2^32 x 2^32, in a child process ---- */

#define HUGE_K 1000 /* pieces each member records before the child stops */
typedef struct huge_shared {
    _Atomic unsigned size, finished, returned;
    _Atomic unsigned count[3];
    rec r[3][HUGE_K];
} huge_shared;
static huge_shared *hs;

/* The 2^32 x 2^32 child ends with _exit while its pool's workers still
 * run (or have finished and are not joined yet), on purpose: under
 * ThreadSanitizer that is a "thread leak" report and a failed exit
 * status. The process is about to vanish, so those reports say nothing
 * here (rel_churn checks for leaked threads). */
#if defined(__SANITIZE_THREAD__)
#define LOOP_BOUNDS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOOP_BOUNDS_TSAN 1
#endif
#endif
#if defined(LOOP_BOUNDS_TSAN)
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "report_thread_leaks=0"; }
#endif
static const int64_t HUGE_ILO = INT64_MIN, HUGE_JLO = INT64_MAX - (INT64_C(1) << 32);
#define HUGE_SIDE (INT64_C(1) << 32)

static void huge_body(int64_t i, int64_t jlo, int64_t jhi, void *ctx)
{
    (void)ctx;
    unsigned me = up_thread_num();
    if (me >= 3)
        _exit(4);
    unsigned k = atomic_load_explicit(&hs->count[me], memory_order_relaxed);
    if (k < HUGE_K) {
        hs->r[me][k] = (rec){jlo, jhi, i, me};
        atomic_store(&hs->count[me], k + 1);
        if (k + 1 == HUGE_K && atomic_fetch_add(&hs->finished, 1) + 1 == atomic_load(&hs->size))
            _exit(0); /* every member showed its first pieces */
    }
}

static void huge_region(void *p)
{
    (void)p;
    if (up_master())
        atomic_store(&hs->size, up_num_threads());
    up_barrier();
    up_for_2d(HUGE_ILO, HUGE_ILO + HUGE_SIDE, HUGE_JLO, HUGE_JLO + HUGE_SIDE, NULL, huge_body,
              NULL);
    atomic_store(&hs->returned, 1);
}

static void huge_2d_test(void)
{
    hs = mmap(NULL, sizeof *hs, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK_NE(hs, MAP_FAILED);
    memset(hs, 0, sizeof *hs);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        alarm(300);
        up_pool *cp;
        if (up_pool_create(&cp, NULL) != UP_OK)
            _exit(5);
        up_parallel(cp, 2, huge_region, NULL);
        _exit(3); /* the loop returned: it skipped almost all of its 2^64 cells */
    }
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    unsigned size = atomic_load(&hs->size);
    printf("2-D 2^32 x 2^32: team %u, child status %d, first pieces %u %u\n", size,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1, atomic_load(&hs->count[0]),
           atomic_load(&hs->count[1]));
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (unsigned m = 0; m < size; m++) {
        /* Static blocks: member 0 starts at the first cell, member 1 of
         * two at the middle row (2^64 cells split in halves or 2^32 rows,
         * the same place); each piece continues the previous one. */
        int64_t row = m == 0 ? HUGE_ILO : HUGE_ILO + HUGE_SIDE / 2, col = HUGE_JLO;
        if (m > 0 && size > 2) {
            row = hs->r[m][0].row;
            col = hs->r[m][0].b;
        }
        for (unsigned k = 0; k < HUGE_K; k++) {
            const rec *r = &hs->r[m][k];
            if (r->row != row || r->b != col || r->e <= r->b || r->e > HUGE_JLO + HUGE_SIDE) {
                fprintf(stderr,
                        "member %u piece %u: row %lld [%lld, %lld), expected row %lld from %lld\n",
                        m, k, (long long)r->row, (long long)r->b, (long long)r->e, (long long)row,
                        (long long)col);
                abort();
            }
            if (r->e == HUGE_JLO + HUGE_SIDE) {
                row++;
                col = HUGE_JLO;
            } else {
                col = r->e;
            }
        }
    }
    munmap(hs, sizeof *hs);
}

/* ---- up_parallel_for ---- */

static void parallel_for_test(void)
{
    static const up_schedule s[] = {UP_SCHED_STATIC, UP_SCHED_DYNAMIC, UP_SCHED_GUIDED,
                                    UP_SCHED_AUTO};
    for (unsigned k = 0; k < 4; k++)
        for (unsigned r = 0; r < NRANGES; r++) {
            int64_t chunk = s[k] == UP_SCHED_DYNAMIC ? INT64_C(1) << 52 : 0;
            if (chunks_of(s[k], chunk, span(ranges[r][0], ranges[r][1]), 64) > BUDGET)
                continue;
            reset(&sets[0], ranges[r][0], ranges[r][1]);
            up_for_opts o = UP_FOR_OPTS(.schedule = s[k], .chunk = chunk);
            CHECK_EQ(up_parallel_for(pool, ranges[r][0], ranges[r][1], &o, body1d, &sets[0]),
                     UP_OK);
            /* The team size is not known here: check the tiling only. */
            check_1d(&sets[0], UP_SCHED_AUTO, 0, 0);
        }
}

int main(void)
{
    huge_2d_test(); /* first: the child forks before this process has threads */
    sets = calloc(NLOOPS, sizeof *sets);
    CHECK(sets);
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    for (unsigned threads = 1; threads <= 3; threads++) {
        CHECK_EQ(up_parallel(pool, threads, loops_region, NULL), UP_OK);
        CHECK_EQ(up_parallel(pool, threads, loops2d_region, NULL), UP_OK);
        CHECK_EQ(up_parallel(pool, threads, taskloop_region, NULL), UP_OK);
    }
    /* Outside any region: a team of one. */
    loops_region(NULL);
    loops2d_region(NULL);
    taskloop_region(NULL);
    parallel_for_test();
    printf("teams seen: %u of 1, %u of 2, %u of 3\n", sizes_seen[1], sizes_seen[2], sizes_seen[3]);
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    free(sets);
    return 0;
}
