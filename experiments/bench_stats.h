/* Order statistics of a sample: the one place every experiment takes its
 * median, quartiles and min-max spread from, so that a table, its CSV and
 * its plot cannot disagree about what "median" means.
 *
 * Definitions (scripts/bench_stats.py uses the same ones, so a number the
 * C programs print and one the Python reports recompute agree):
 * - the median of an even count is the mean of the two middle values;
 * - the quantile at p (0 <= p <= 1) interpolates linearly between the
 *   order statistics around position p * (n - 1), so quantile 0 is the
 *   minimum, 0.5 the median and 1 the maximum (Hyndman and Fan's type 7,
 *   Python's statistics.quantiles(method="inclusive"));
 * - an empty sample has no statistics: every function returns NAN for
 *   it, never a number a table could mistake for a measurement.
 * NaN samples are not supported (they have no place in an order). */
#ifndef UP_BENCH_STATS_H
#define UP_BENCH_STATS_H

#include <stddef.h>

typedef struct bench_summary {
    size_t n; /* samples; 0: every other field is NAN */
    double min, q1, median, q3, max;
} bench_summary;

/* Sorts v ascending in place. */
void bench_sort(double *v, size_t n);

/* The quantile at p of v, which must already be ascending (bench_sort);
 * p outside [0, 1] is clamped to it. */
double bench_quantile_sorted(const double *v, size_t n, double p);

/* The median of v; sorts v in place, so v[0] and v[n - 1] are then the
 * minimum and the maximum. */
double bench_median(double *v, size_t n);

/* Minimum, quartiles, median and maximum of v; sorts v in place. */
bench_summary bench_summarize(double *v, size_t n);

#endif
