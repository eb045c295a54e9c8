#!/usr/bin/env python3
"""scripts/bench_plot.py, the one plotting path of the benchmark scripts:
gnuplot strings and data blocks, the caption of the spread, the strip kept
free for the provenance, and a real image drawn from a made-up results
folder whose meta.json names the machine, date and commit that the script
must write into it (skipped without gnuplot; scripts/setup test installs
it).

    python3 tests/scripts/test_bench_plot.py    (ctest: test_bench_plot_py)
"""
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import bench_plot  # noqa: E402


class Text(unittest.TestCase):
    def test_quote(self):
        self.assertEqual(bench_plot.quote('a "b" \\ c'), '"a \\"b\\" \\\\ c"')

    def test_datablock(self):
        self.assertEqual(bench_plot.datablock("d", [(1, 2.5, None, "x y"), None, (3,)]),
                         ["$d << EOD", '1 2.5 NaN "x y"', "", "3", "EOD"])

    def test_spread_note(self):
        self.assertEqual(bench_plot.spread_note(5),
                         "points: median of 5 rounds; bars: lowest to highest round")
        self.assertEqual(bench_plot.spread_note(3, "bars", "error bars", "run"),
                         "bars: median of 3 runs; error bars: lowest to highest run")
        # One run has no spread, and the caption must say so, not draw bars.
        self.assertIn("no spread", bench_plot.spread_note(1))
        self.assertIn("not recorded", bench_plot.spread_note(None))

    def test_room_for_the_provenance(self):
        s = 18.0 / 600
        multi = bench_plot.make_room(["set multiplot layout 2,3 title 't'", "plot x"], 600)
        self.assertEqual(multi[0], "set multiplot layout 2,3 title 't' scale 1,%.4f offset 0,%.4f"
                         % (1 - 2 * s, s / 2))
        single = bench_plot.make_room(["plot x"], 600)
        self.assertEqual(single[:2], ["set origin 0,%.4f" % s, "set size 1,%.4f" % (1 - s)])


class Render(unittest.TestCase):
    def folder(self, tmp):
        d = os.path.join(tmp, "results", "some-machine-2cpu", "20260101T000000Z-x")
        os.makedirs(d)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"cpu_model": "Some CPU", "cores_usable": 2, "date": "2026-01-01 00:00 UTC",
                       "git": "abc1234"}, f)
        return d

    def test_no_gnuplot(self):
        saved = bench_plot.gnuplot
        bench_plot.gnuplot = lambda: None
        try:
            with tempfile.TemporaryDirectory() as tmp:
                png = os.path.join(self.folder(tmp), "p.png")
                self.assertEqual(bench_plot.render(["plot x"], png, 300, 200), bench_plot.MISSING)
                self.assertFalse(os.path.exists(png))
        finally:
            bench_plot.gnuplot = saved

    @unittest.skipUnless(bench_plot.gnuplot(), "gnuplot is not installed")
    def test_image_with_provenance(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = self.folder(tmp)
            png = os.path.join(d, "p.png")
            lines = bench_plot.datablock("d", [(1, 2, 1.5, 2.5), (2, 3, 2, 4)]) + [
                "set multiplot layout 1,2", "plot $d using 1:2:3:4 with yerrorbars",
                "plot $d using 1:2 with lines", "unset multiplot"]
            self.assertIsNone(bench_plot.render(lines, png, 400, 300, keep_script="p.gp"))
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with open(os.path.join(d, "p.gp")) as f:
                script = f.read().splitlines()
            label = [i for i, l in enumerate(script) if l.startswith("set label 99 ")]
            self.assertEqual(len(label), 1)
            # The folder's machine, date and commit, once, just before the last panel.
            for part in ("some-machine-2cpu", "Some CPU, 2 CPUs", "2026-01-01 00:00 UTC",
                         "abc1234"):
                self.assertIn(part, script[label[0]])
            self.assertTrue(script[label[0] + 1].startswith("plot $d using 1:2 with lines"))

    @unittest.skipUnless(bench_plot.gnuplot(), "gnuplot is not installed")
    def test_gnuplot_error_is_returned(self):
        with tempfile.TemporaryDirectory() as tmp:
            err = bench_plot.render(["plot $missing using 1:2"], os.path.join(self.folder(tmp),
                                                                              "p.png"), 300, 200)
            self.assertTrue(err and err.startswith("gnuplot failed"), err)


if __name__ == "__main__":
    unittest.main()
