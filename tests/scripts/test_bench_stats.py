#!/usr/bin/env python3
"""scripts/bench_stats.py, the benchmark reports' statistics: medians of odd
and even counts, one value, quartiles, missing values, the empty sample's
None, and on random samples the same numbers as the standard library's
inclusive quantiles and as the C helper's formulas (experiments/bench_stats.c).

    python3 tests/scripts/test_bench_stats.py    (ctest: test_bench_stats_py)
"""
import os
import random
import statistics
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import bench_stats  # noqa: E402


class Fixed(unittest.TestCase):
    def test_median(self):
        self.assertEqual(bench_stats.median([5, 1, 3]), 3)
        self.assertEqual(bench_stats.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(bench_stats.median([10, -2]), 4)
        self.assertEqual(bench_stats.median([7.25]), 7.25)

    def test_missing_values_left_out(self):
        self.assertEqual(bench_stats.median([None, 4, None, 2]), 3)
        self.assertEqual(bench_stats.summary([None, 1, 2]).n, 2)

    def test_empty(self):
        for empty in ([], [None], iter(())):
            self.assertIsNone(bench_stats.median(empty))
        self.assertIsNone(bench_stats.quantile([], 0.5))
        self.assertEqual(bench_stats.summary([]), (0, None, None, None, None, None))
        self.assertIsNone(bench_stats.mean([]))
        self.assertIsNone(bench_stats.stdev([]))

    def test_quartiles(self):
        # On elements for 1..5, between them for 1..4 (as bench_stats.c).
        self.assertEqual(bench_stats.summary([5, 4, 3, 2, 1]), (5, 1, 2, 3, 4, 5))
        self.assertEqual(bench_stats.summary([3, 1, 4, 2]), (4, 1, 1.75, 2.5, 3.25, 4))
        self.assertEqual(bench_stats.summary([7.25]), (1, 7.25, 7.25, 7.25, 7.25, 7.25))
        # Equal neighbours give their value, not 0.7 * x + 0.3 * x.
        self.assertEqual(bench_stats.quantile([0.1, 0.1], 0.3), 0.1)
        self.assertEqual(bench_stats.quantile([1, 2, 3], -1), 1)
        self.assertEqual(bench_stats.quantile([1, 2, 3], 2), 3)

    def test_mean_stdev(self):
        self.assertEqual(bench_stats.mean([1, 2, 6]), 3)
        self.assertEqual(bench_stats.stdev([4.0]), 0.0)
        self.assertAlmostEqual(bench_stats.stdev([1, 2, 3, 4]), statistics.stdev([1, 2, 3, 4]))


class Random(unittest.TestCase):
    def test_against_the_standard_library_and_the_c_formulas(self):
        seed = int(os.environ.get("UP_TEST_SEED") or random.SystemRandom().randrange(2 ** 32))
        print("seed %d (UP_TEST_SEED to replay)" % seed)
        rng = random.Random(seed)
        for _ in range(2000):
            n = rng.randint(1, 64)
            v = [rng.random() * 1e6 if rng.random() < 0.7 else float(rng.randrange(4))
                 for _ in range(n)]
            s = sorted(v)
            m = bench_stats.median(v)
            # The exact value of the C helper's (and the old tables') median.
            self.assertEqual(m, s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2)
            self.assertEqual(bench_stats.quantile(v, 0.5), m)
            summ = bench_stats.summary(v)
            self.assertEqual((summ.min, summ.median, summ.max), (s[0], m, s[-1]))
            self.assertTrue(summ.min <= summ.q1 <= summ.median <= summ.q3 <= summ.max)
            if n >= 2:
                q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
                self.assertAlmostEqual(summ.q1, q1, delta=1e-9 * max(1.0, abs(q1)))
                self.assertAlmostEqual(summ.q3, q3, delta=1e-9 * max(1.0, abs(q3)))


if __name__ == "__main__":
    unittest.main()
