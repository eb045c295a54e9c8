#include "bench_stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bench_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

double bench_quantile_sorted(const double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    p = p < 0 ? 0 : p > 1 ? 1 : p;
    double h = p * (double)(n - 1);
    size_t lo = (size_t)h;
    double frac = h - (double)lo;
    if (lo + 1 >= n || frac == 0 || v[lo] == v[lo + 1])
        return v[lo];
    /* A weighted sum rather than v[lo] + frac * (v[lo + 1] - v[lo]): at
     * frac 0.5 it rounds exactly as (a + b) / 2 does, the even-count
     * median every table printed before this helper existed. */
    return (1 - frac) * v[lo] + frac * v[lo + 1];
}

double bench_median(double *v, size_t n)
{
    bench_sort(v, n);
    return bench_quantile_sorted(v, n, 0.5);
}

bench_summary bench_summarize(double *v, size_t n)
{
    bench_sort(v, n);
    bench_summary s = {n,
                       bench_quantile_sorted(v, n, 0),
                       bench_quantile_sorted(v, n, 0.25),
                       bench_quantile_sorted(v, n, 0.5),
                       bench_quantile_sorted(v, n, 0.75),
                       bench_quantile_sorted(v, n, 1)};
    return s;
}
