/* The experiments' statistics helper (experiments/bench_stats.c): medians
 * of odd and even counts, one element, quartiles, clamped quantiles and
 * the empty sample's NAN, and, on random samples, the median's defining
 * property and the exact even-count rounding the tables relied on before
 * the helper replaced their own copies. */
#include <math.h>
#include <string.h>

#include "bench_stats.h"
#include "check.h"

/* Exact comparison on purpose: every expected value below is exactly
 * representable, and the helper must hit it, not come close. */
#define CHECK_D(x, want) CHECK((x) == (want))

static void fixed_samples(void)
{
    double odd[] = {5, 1, 3};
    CHECK_D(bench_median(odd, 3), 3);
    CHECK(odd[0] == 1 && odd[1] == 3 && odd[2] == 5); /* sorted in place */

    double even[] = {4, 1, 3, 2};
    CHECK_D(bench_median(even, 4), 2.5);

    double two[] = {10, -2};
    CHECK_D(bench_median(two, 2), 4);

    double one[] = {7.25};
    CHECK_D(bench_median(one, 1), 7.25);
    bench_summary s1 = bench_summarize(one, 1);
    CHECK_EQ(s1.n, 1);
    CHECK(s1.min == 7.25 && s1.q1 == 7.25 && s1.median == 7.25 && s1.q3 == 7.25 && s1.max == 7.25);

    /* Quartiles by linear interpolation at p * (n - 1): for 1..5 they
     * fall on elements, for 1..4 between them (1.75 and 3.25, as
     * Python's statistics.quantiles(method="inclusive") gives). */
    double five[] = {5, 4, 3, 2, 1};
    bench_summary s5 = bench_summarize(five, 5);
    CHECK_EQ(s5.n, 5);
    CHECK(s5.min == 1 && s5.q1 == 2 && s5.median == 3 && s5.q3 == 4 && s5.max == 5);
    double four[] = {3, 1, 4, 2};
    bench_summary s4 = bench_summarize(four, 4);
    CHECK(s4.min == 1 && s4.q1 == 1.75 && s4.median == 2.5 && s4.q3 == 3.25 && s4.max == 4);

    /* Equal neighbours give exactly their value, whatever the weight. */
    double flat[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
    bench_summary sf = bench_summarize(flat, 7);
    CHECK(sf.q1 == 0.1 && sf.q3 == 0.1);
    /* 0.7 * 0.1 + 0.3 * 0.1 is not 0.1 in doubles: the helper must not
     * interpolate between equal values. */
    CHECK(bench_quantile_sorted(flat, 2, 0.3) == 0.1 && bench_quantile_sorted(flat, 3, 0.1) == 0.1);

    /* p outside [0, 1] is the minimum or the maximum. */
    double sorted[] = {1, 2, 3};
    CHECK_D(bench_quantile_sorted(sorted, 3, -1), 1);
    CHECK_D(bench_quantile_sorted(sorted, 3, 2), 3);
    CHECK_D(bench_quantile_sorted(sorted, 3, 0.25), 1.5);

    /* The empty sample: NAN everywhere, documented in bench_stats.h. */
    CHECK(isnan(bench_median(NULL, 0)));
    CHECK(isnan(bench_quantile_sorted(NULL, 0, 0.5)));
    bench_summary s0 = bench_summarize(NULL, 0);
    CHECK_EQ(s0.n, 0);
    CHECK(isnan(s0.min) && isnan(s0.q1) && isnan(s0.median) && isnan(s0.q3) && isnan(s0.max));
}

static void random_samples(uint64_t seed)
{
    enum { MAXN = 64 };
    for (int round = 0; round < 2000; round++) {
        double v[MAXN], copy[MAXN];
        size_t n = 1 + test_rand(&seed) % MAXN;
        for (size_t i = 0; i < n; i++) {
            /* Few distinct values now and then, so ties are common. */
            uint64_t r = test_rand(&seed);
            v[i] = round % 3 ? (double)(r >> 11) / 9007199254740992.0 * 1e6 : (double)(r % 4);
        }
        memcpy(copy, v, n * sizeof v[0]);
        double m = bench_median(v, n);
        for (size_t i = 1; i < n; i++)
            CHECK(v[i - 1] <= v[i]);
        /* At most half the sample lies on either side of the median. */
        size_t below = 0, above = 0;
        for (size_t i = 0; i < n; i++) {
            below += copy[i] < m;
            above += copy[i] > m;
        }
        CHECK(2 * below <= n && 2 * above <= n);
        /* The exact value the tables printed before: the middle element,
         * or the two middle ones' sum halved. */
        double want = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        CHECK(m == want);
        bench_summary s = bench_summarize(copy, n);
        CHECK(s.min == v[0] && s.max == v[n - 1] && s.median == m);
        CHECK(s.min <= s.q1 && s.q1 <= s.median && s.median <= s.q3 && s.q3 <= s.max);
    }
}

int main(void)
{
    uint64_t seed = test_seed();
    fixed_samples();
    random_samples(seed);
    printf("test_bench_stats: ok\n");
    return 0;
}
