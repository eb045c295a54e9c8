/* ordered loops: the ordered parts run in iteration order, whatever the
 * schedule, including iterations that skip theirs; doacross loops with a
 * 2-D dependence pattern (each cell after its north and west neighbours)
 * compute the same as the sequential loop, long and unsigned long long. */
#include <omp.h>
#include <string.h>

#include "omp_check.h"

#define N  400
#define NT 4

static long seq[N];
static int pos;

#define P(...) _Pragma(#__VA_ARGS__)
#define ORDERED(name, ...)                                                                         \
    static void ordered_##name(long lo, long st)                                                   \
    {                                                                                              \
        pos = 0;                                                                                   \
        P(omp parallel for ordered num_threads(NT) schedule(__VA_ARGS__))                          \
        for (long i = lo; i < lo + N * st; i += st) {                                              \
            if ((i / st) % 7 == 3)                                                                 \
                continue; /* no ordered part */                                                    \
            P(omp ordered)                                                                         \
            seq[pos++] = i;                                                                        \
        }                                                                                          \
        int k = 0;                                                                                 \
        for (long j = 0; j < N; j++) {                                                             \
            long i = lo + j * st;                                                                  \
            if ((i / st) % 7 == 3)                                                                 \
                continue;                                                                          \
            EXPECT(k < pos && seq[k] == i, "ordered " #name ": place %d holds %ld, not %ld", k,    \
                   k < pos ? seq[k] : -1L, i);                                                     \
            k++;                                                                                   \
        }                                                                                          \
        EXPECT(k == pos, "ordered " #name ": %d ordered parts ran, %d expected", pos, k);          \
    }

ORDERED(static_, static)
ORDERED(static1, static, 1)
ORDERED(static5, static, 5)
ORDERED(dynamic, dynamic)
ORDERED(dynamic3, dynamic, 3)
ORDERED(guided, guided)
ORDERED(runtime, runtime)

static void ordered_down_ull(void)
{
    unsigned long long out[N];
    int n = 0;
#pragma omp parallel for ordered num_threads(NT) schedule(dynamic, 2)
    for (unsigned long long i = N; i > 0; i--) {
#pragma omp ordered
        out[n++] = i;
    }
    EXPECT(n == N, "ordered ull down: %d parts", n);
    for (int k = 0; k < n; k++)
        EXPECT(out[k] == (unsigned long long)(N - k), "ordered ull down: place %d holds %llu", k,
               out[k]);
}

#define R 60
#define C 50
static long grid[R][C], want[R][C];

static long cell(long n, long w, long i, long j) { return (n * 3 + w * 5 + i * 7 + j) % 1000003; }

static void reference(void)
{
    for (long i = 0; i < R; i++)
        for (long j = 0; j < C; j++)
            want[i][j] = cell(i ? want[i - 1][j] : 1, j ? want[i][j - 1] : 2, i, j);
}

#define DOACROSS(name, T, ...)                                                                     \
    static void doacross_##name(void)                                                              \
    {                                                                                              \
        memset(grid, 0, sizeof grid);                                                              \
        P(omp parallel for ordered(2) num_threads(NT) schedule(__VA_ARGS__))                       \
        for (T i = 0; i < R; i++)                                                                  \
            for (T j = 0; j < C; j++) {                                                            \
                P(omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1))                     \
                grid[i][j] =                                                                       \
                    cell(i ? grid[i - 1][j] : 1, j ? grid[i][j - 1] : 2, (long)i, (long)j);        \
                P(omp ordered depend(source))                                                      \
            }                                                                                      \
        for (long i = 0; i < R; i++)                                                               \
            for (long j = 0; j < C; j++)                                                           \
                EXPECT(grid[i][j] == want[i][j], "doacross " #name ": cell %ld,%ld", i, j);        \
    }

DOACROSS(static_, long, static)
DOACROSS(static1, long, static, 1)
DOACROSS(dynamic, long, dynamic)
DOACROSS(guided, long, guided)
DOACROSS(ull_dynamic, unsigned long long, dynamic, 2)
DOACROSS(ull_static, unsigned long long, static)

int main(void)
{
    require_ultrapool();
    for (int rep = 0; rep < 3; rep++) {
        ordered_static_(0, 1);
        ordered_static1(-50, 3);
        ordered_static5(7, 1);
        ordered_dynamic(0, 2);
        ordered_dynamic3(100, 1);
        ordered_guided(0, 1);
        ordered_runtime(-7, 7);
        ordered_down_ull();
    }
    reference();
    for (int rep = 0; rep < 3; rep++) {
        doacross_static_();
        doacross_static1();
        doacross_dynamic();
        doacross_guided();
        doacross_ull_dynamic();
        doacross_ull_static();
    }
    return omp_report("omp_ordered");
}
