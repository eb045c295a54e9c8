#!/usr/bin/env python3
"""The plot of a massive-waiting run (scripts/bench --massive), with gnuplot
through scripts/bench_plot.py (Python 3 standard library only):

    massive_plot.py DIR    DIR/massive.png from DIR/massive.csv

Two panels against N (log scales): the RSS each waiting task costs, and the
launch rate from one thread, one line per mode. Each point is the median of
the runs of its (mode, N) (massive_run.py --repeats) with a bar from the
lowest to the highest; a folder from before --repeats holds one run per
point, and the plot says that it has no spread to show. A mode that stopped
early (a pthread per task meets the kernel's limits) is drawn at the count
that actually waited. Dashed lines: the seed's Go figures and the issue's
targets. The run's machine, date and commit are in the image's corner.
"""
import argparse
import csv
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))
import bench_plot  # noqa: E402
from bench_stats import summary  # noqa: E402

MODES = ["stackless", "stackful", "pthread", "goroutines"]
# One colour per mode in both panels.
COLOURS = {"stackless": "#1f4e9c", "stackful": "#8e44ad", "pthread": "#c0392b",
           "goroutines": "#16a085"}


def series(d):
    """mode -> [(tasks that waited, bytes per task median, lowest, highest,
    launches per s median, lowest, highest)] over the runs of each N; the
    points of runs that stopped short of their N: [(mode, point, N)]; and
    the most runs any point has."""
    runs = {}
    with open(os.path.join(d, "massive.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] not in ("ok", "failed") or not r["launched"]:
                continue
            try:
                run = (int(r["launched"]), float(r["bytes_per_task"]), float(r["launch_per_s"]))
            except ValueError:
                continue
            if run[0] > 0:
                runs.setdefault((r["mode"], int(r["n"])), []).append(run)
    out, short = {}, []
    for (mode, n), rs in runs.items():
        launched = summary([x[0] for x in rs]).median
        b, rate = summary([x[1] for x in rs]), summary([x[2] for x in rs])
        pt = (launched, b.median, b.min, b.max, rate.median, rate.min, rate.max)
        out.setdefault(mode, []).append(pt)
        if launched < n:
            short.append((mode, pt, n))
    most = max((len(rs) for rs in runs.values()), default=0)
    return {m: sorted(out[m]) for m in MODES if m in out}, short, most


def render(d):
    data, short, most = series(d)
    if not data:
        return "no data"
    q = bench_plot.quote
    lines = []
    for i, pts in enumerate(data.values()):
        lines += bench_plot.datablock("m%d" % i, pts)
    title = "Tasks waiting on one event: memory and launch rate from one thread"
    spread = bench_plot.spread_note(most, unit="run")
    xs = [p[0] for v in data.values() for p in v]
    lines += [
        "set multiplot layout 1,2 title %s" % '."\\n".'.join(q(t) for t in (title, spread)),
        "set logscale xy", "set grid", "set format x '%.0e'",
        "set xrange [%g:%g]" % (min(xs) / 2, max(xs) * 2),
        "set samples 200", "set bars 0.6",
        # A label stays readable where it crosses a line.
        "set style textbox opaque noborder margins 1,1",
        "set xlabel 'waiting tasks N'",
        "set title 'RSS per waiting task'", "set ylabel 'bytes per task'", "set yrange [10:100000]",
        "set key top right",
    ]

    def labels(col):
        """A run that stopped short says so beside its point; the Ns of a
        mode that stopped at the same count share one label, as their
        points fall on one spot."""
        out = ["unset label"]
        spots = {}
        for m, pt, n in short:
            spots.setdefault((m, int(pt[0])), (pt, []))[1].append(n)
        for (m, stop), (pt, ns) in sorted(spots.items()):
            of = " and ".join("{:,}".format(n) for n in sorted(ns))
            out.append("set label %s at %d,%g offset 1,-1 font ',9' tc rgb %s front boxed" % (
                q("%s stopped at %s of %s" % (m, "{:,}".format(stop), of)),
                pt[0], pt[col], q(COLOURS.get(m, "black"))))
        return out

    def plot(col, refs):
        parts = ["%s with lines dashtype 2 lc rgb %s title %s" % (v, q(c), q(t))
                 for v, c, t in refs]
        for i, m in enumerate(data):
            # Bars where some point has several runs; a single run has none.
            style = ("using 1:%d:%d:%d with yerrorlines" % (col + 1, col + 2, col + 3)
                     if most > 1 else "using 1:%d with linespoints" % (col + 1))
            parts.append("$m%d %s lw 2 pt 7 ps 0.9 lc rgb %s title %s"
                         % (i, style, q(COLOURS[m]), q(m)))
        return "plot " + ", ".join(parts)
    lines += labels(1)
    lines.append(plot(1, [(3072, "gray40", "seed: Go, about 3 KiB per goroutine"),
                          (64, "dark-green", "issue target: 64 bytes (stackless)")]))
    lines += ["set title 'Launch rate from one thread'", "set ylabel 'launches per second'",
              "set yrange [10:100000000]", "set key bottom right"]
    lines += labels(4)
    lines.append(plot(4, [(770000, "gray40", "seed: Go, up to 770k/s (10 cores)"),
                          (270000, "gray70", "seed: Go, down to 270k/s"),
                          (1e7, "dark-green", "issue target: 1e7/s (stackless)")]))
    lines.append("unset multiplot")
    return bench_plot.render(lines, os.path.join(d, "massive.png"), 1300, 580)


def main(argv):
    ap = argparse.ArgumentParser(prog="massive_plot.py", description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", metavar="RESULTS_DIR", help="a --massive run's results folder")
    d = ap.parse_args(argv).dir
    if not os.path.isfile(os.path.join(d, "massive.csv")):
        sys.stderr.write("massive_plot: no %s\n" % os.path.join(d, "massive.csv"))
        return 1
    err = render(d)
    if err:
        sys.stderr.write("massive_plot: %s\n" % err)
        return 1
    print("massive_plot: %s" % os.path.join(d, "massive.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
