"""Order statistics of the benchmark reports: the one place the Python
scripts take a median, quartiles, min-max spread, mean or standard
deviation from (Python 3 standard library only).

The definitions are those of experiments/bench_stats.h, so that a number a
C program printed and one a report recomputes from the same rounds agree:

- the median of an even count is the mean of the two middle values;
- the quantile at p (0 <= p <= 1) interpolates linearly between the order
  statistics around position p * (n - 1): quantile 0 is the minimum, 0.5
  the median, 1 the maximum (statistics.quantiles(method="inclusive"),
  which, unlike this, needs two values or more);
- None is a missing value (a counter the machine lacks, a run that
  failed) and is left out; a sample with nothing left has no statistics:
  None, never a number a table could mistake for a measurement.
"""
import collections
import statistics

# min, q1, median, q3 and max of n values; n == 0: the others are None.
Summary = collections.namedtuple("Summary", "n min q1 median q3 max")


def present(values):
    """values without the missing ones (None), as a list."""
    return [v for v in values if v is not None]


def median(values):
    v = present(values)
    return statistics.median(v) if v else None


def quantile_sorted(v, p):
    """The quantile at p of v, a list already in ascending order without
    None; p outside [0, 1] is clamped to it."""
    if not v:
        return None
    p = min(max(p, 0.0), 1.0)
    h = p * (len(v) - 1)
    lo = int(h)
    frac = h - lo
    if lo + 1 >= len(v) or frac == 0 or v[lo] == v[lo + 1]:
        return v[lo]
    # The weighted sum rounds at frac 0.5 exactly as (a + b) / 2, the
    # median's own formula (bench_stats.c does the same).
    return (1 - frac) * v[lo] + frac * v[lo + 1]


def quantile(values, p):
    return quantile_sorted(sorted(present(values)), p)


def summary(values):
    v = sorted(present(values))
    if not v:
        return Summary(0, None, None, None, None, None)
    return Summary(len(v), v[0], quantile_sorted(v, 0.25), median(v), quantile_sorted(v, 0.75),
                   v[-1])


def mean(values):
    v = present(values)
    return statistics.mean(v) if v else None


def stdev(values):
    """The sample standard deviation; 0.0 for a single value (no spread
    seen), None for none."""
    v = present(values)
    return statistics.stdev(v) if len(v) > 1 else 0.0 if v else None
