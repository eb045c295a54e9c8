/* Worksharing loops of every schedule and chunk, long and unsigned long
 * long, counting up and down, small and huge steps, ranges touching the
 * types' bounds: every iteration runs exactly once with its right value,
 * combined (GOMP_parallel_loop_*) and inside a region (GOMP_loop_*), with
 * and without nowait. */
#include <limits.h>
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

#include "omp_check.h"

#define MAXN 4096
#define NT   4
static atomic_int cnt[MAXN];
static atomic_int bad;

typedef unsigned long long ull;

static void mark(ull off, ull step, ull k)
{
    if (off % step != 0 || k >= MAXN)
        atomic_fetch_add(&bad, 1);
    else
        atomic_fetch_add(&cnt[k], 1);
}

static void verify(const char *what, ull n)
{
    EXPECT(atomic_load(&bad) == 0, "%s: %d iterations with a wrong value", what, atomic_load(&bad));
    for (ull k = 0; k < n && k < MAXN; k++)
        EXPECT(atomic_load(&cnt[k]) == 1, "%s: iteration %llu ran %d times", what, k,
               atomic_load(&cnt[k]));
    for (ull k = n; k < MAXN; k++)
        EXPECT(atomic_load(&cnt[k]) == 0, "%s: iteration %llu past the end ran", what, k);
    memset(cnt, 0, sizeof cnt);
    atomic_store(&bad, 0);
}

#define P(...) _Pragma(#__VA_ARGS__)

/* Four loops per schedule: long up, long down, ull up, ull down; each
 * combined, in a region, and in a region with nowait (three in a row). */
#define DEF(name, ...)                                                                             \
    static void long_up_##name(long lo, long hi, long st, int form)                                \
    {                                                                                              \
        if (form == 0) {                                                                           \
            P(omp parallel for num_threads(NT) schedule(__VA_ARGS__))                              \
            for (long i = lo; i < hi; i += st)                                                     \
                mark((ull)i - (ull)lo, (ull)st, ((ull)i - (ull)lo) / (ull)st);                     \
        } else {                                                                                   \
            P(omp parallel num_threads(NT))                                                        \
            {                                                                                      \
                if (form == 1) {                                                                   \
                    P(omp for schedule(__VA_ARGS__))                                               \
                    for (long i = lo; i < hi; i += st)                                             \
                        mark((ull)i - (ull)lo, (ull)st, ((ull)i - (ull)lo) / (ull)st);             \
                } else {                                                                           \
                    for (int r = 0; r < 3; r++) {                                                  \
                        P(omp for schedule(__VA_ARGS__) nowait)                                    \
                        for (long i = lo; i < hi; i += st)                                         \
                            if (r == 1)                                                            \
                                mark((ull)i - (ull)lo, (ull)st, ((ull)i - (ull)lo) / (ull)st);     \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void long_down_##name(long lo, long hi, long st, int form)                              \
    {                                                                                              \
        (void)form;                                                                                \
        P(omp parallel for num_threads(NT) schedule(__VA_ARGS__))                                  \
        for (long i = hi; i > lo; i -= st)                                                         \
            mark((ull)hi - (ull)i, (ull)st, ((ull)hi - (ull)i) / (ull)st);                         \
    }                                                                                              \
    static void ull_up_##name(ull lo, ull hi, ull st, int form)                                    \
    {                                                                                              \
        if (form == 0) {                                                                           \
            P(omp parallel for num_threads(NT) schedule(__VA_ARGS__))                              \
            for (ull i = lo; i < hi; i += st)                                                      \
                mark(i - lo, st, (i - lo) / st);                                                   \
        } else {                                                                                   \
            P(omp parallel num_threads(NT))                                                        \
            {                                                                                      \
                P(omp for schedule(__VA_ARGS__))                                                   \
                for (ull i = lo; i < hi; i += st)                                                  \
                    mark(i - lo, st, (i - lo) / st);                                               \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void ull_down_##name(ull lo, ull hi, ull st, int form)                                  \
    {                                                                                              \
        if (form == 0) {                                                                           \
            P(omp parallel for num_threads(NT) schedule(__VA_ARGS__))                              \
            for (ull i = hi; i > lo; i -= st)                                                      \
                mark(hi - i, st, (hi - i) / st);                                                   \
        } else {                                                                                   \
            P(omp parallel num_threads(NT))                                                        \
            {                                                                                      \
                P(omp for schedule(__VA_ARGS__))                                                   \
                for (ull i = hi; i > lo; i -= st)                                                  \
                    mark(hi - i, st, (hi - i) / st);                                               \
            }                                                                                      \
        }                                                                                          \
    }

DEF(static_, static)
DEF(static1, static, 1)
DEF(static3, static, 3)
DEF(dynamic, dynamic)
DEF(dynamic5, dynamic, 5)
DEF(mdynamic, monotonic : dynamic, 2)
DEF(guided, guided)
DEF(guided2, guided, 2)
DEF(mguided, monotonic : guided)
DEF(runtime, runtime)
DEF(nmruntime, nonmonotonic : runtime)
DEF(auto_, auto)

typedef struct lrange {
    long lo, hi, st;
} lrange;
typedef struct urange {
    ull lo, hi, st;
} urange;

/* GCC's code steps past the last iteration before it compares, so the
 * value after the last one must exist in the type: the ranges that touch
 * a bound end exactly on it (hi = lo + n * st). And it counts a long
 * loop's iterations in long: hi - lo + st - 1 stays below LONG_MAX. */
#define S_L (LONG_MAX / 50)
#define S_U (ULLONG_MAX / 40)
static const lrange lr[] = {
    {0, 1000, 1},
    {-1000, 1000, 7},
    {LONG_MIN, LONG_MIN + 1500, 3},
    {LONG_MAX - 13 * 300, LONG_MAX, 13},
    {LONG_MIN, LONG_MIN + 45 * S_L, S_L},
    {5, 5, 1},
    {10, 0, 1},
};
static const urange ur[] = {
    {0, 1000, 1},         {ULLONG_MAX - 7 * 500, ULLONG_MAX, 7},     {0, 20 * S_U, S_U},
    {1, 1 + 3 * 1000, 3}, {0, 2 * (ULLONG_MAX / 4), ULLONG_MAX / 4}, {7, 7, 1},
    {0, 1000, 10},
};

static ull count_up(ull lo, ull hi, ull st) { return hi > lo ? (hi - lo - 1) / st + 1 : 0; }

typedef void (*lfn)(long, long, long, int);
typedef void (*ufn)(ull, ull, ull, int);

#define SCHED(name)                                                                                \
    {                                                                                              \
#name, long_up_##name, long_down_##name, ull_up_##name, ull_down_##name                    \
    }
static const struct sched {
    const char *name;
    lfn lup, ldown;
    ufn uup, udown;
} scheds[] = {SCHED(static_),  SCHED(static1),  SCHED(static3),   SCHED(dynamic),
              SCHED(dynamic5), SCHED(mdynamic), SCHED(guided),    SCHED(guided2),
              SCHED(mguided),  SCHED(runtime),  SCHED(nmruntime), SCHED(auto_)};

static int inline_static(const char *name)
{
    return !strncmp(name, "static", 6) || !strcmp(name, "auto_");
}

int main(void)
{
    require_ultrapool();
    char what[160];
    for (size_t s = 0; s < sizeof scheds / sizeof *scheds; s++) {
        for (size_t r = 0; r < sizeof lr / sizeof *lr; r++) {
            const lrange *x = &lr[r];
            ull n = x->hi > x->lo ? ((ull)x->hi - (ull)x->lo - 1) / (ull)x->st + 1 : 0;
            /* GCC expands static schedules inline, and its iteration count
             * of a loop that touches a bound of long overflows a long
             * (UBSan reports it in the test's own code, with any runtime):
             * not ours to test. */
            if ((x->lo == LONG_MIN || x->hi > LONG_MAX - x->st) && inline_static(scheds[s].name))
                continue;
            for (int form = 0; form < 3; form++) {
                snprintf(what, sizeof what, "%s long up [%ld, %ld) by %ld form %d", scheds[s].name,
                         x->lo, x->hi, x->st, form);
                scheds[s].lup(x->lo, x->hi, x->st, form);
                verify(what, n);
            }
            snprintf(what, sizeof what, "%s long down (%ld, %ld] by %ld", scheds[s].name, x->lo,
                     x->hi, x->st);
            scheds[s].ldown(x->lo, x->hi, x->st, 0);
            verify(what, n);
        }
        for (size_t r = 0; r < sizeof ur / sizeof *ur; r++) {
            const urange *x = &ur[r];
            ull n = count_up(x->lo, x->hi, x->st);
            for (int form = 0; form < 2; form++) {
                snprintf(what, sizeof what, "%s ull up [%llu, %llu) by %llu form %d",
                         scheds[s].name, x->lo, x->hi, x->st, form);
                scheds[s].uup(x->lo, x->hi, x->st, form);
                verify(what, n);
                snprintf(what, sizeof what, "%s ull down (%llu, %llu] by %llu form %d",
                         scheds[s].name, x->lo, x->hi, x->st, form);
                scheds[s].udown(x->lo, x->hi, x->st, form);
                verify(what, n);
            }
        }
    }
    return omp_report("omp_loops");
}
