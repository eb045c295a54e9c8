#!/usr/bin/env python3
"""The plot of a massive-waiting run (scripts/bench --massive), with gnuplot
(Python 3 standard library only):

    massive_plot.py DIR    DIR/massive.png from DIR/massive.csv

Two panels against N (log scales): the RSS each waiting task costs, and the
launch rate from one thread, one line per mode. A mode that stopped early
(a pthread per task meets the kernel's limits) is drawn at the count that
actually waited. Dashed lines: the seed's Go figures and the issue's
targets. The title carries the run's provenance: machine, date, commit.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))
import bench_meta  # noqa: E402

MODES = ["stackless", "stackful", "pthread", "goroutines"]
# One colour per mode in both panels.
COLOURS = {"stackless": "#1f4e9c", "stackful": "#8e44ad", "pthread": "#c0392b",
           "goroutines": "#16a085"}


def quote(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')


def series(d):
    """mode -> [(tasks that waited, bytes per task, launches per s)], and
    the points of runs that stopped short of their N: [(mode, point, N)]."""
    out, short = {}, []
    with open(os.path.join(d, "massive.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] not in ("ok", "failed") or not r["launched"]:
                continue
            try:
                pt = (int(r["launched"]), float(r["bytes_per_task"]), float(r["launch_per_s"]))
            except ValueError:
                continue
            if pt[0] > 0:
                out.setdefault(r["mode"], []).append(pt)
                if pt[0] < int(r["n"]):
                    short.append((r["mode"], pt, int(r["n"])))
    return {m: sorted(out[m]) for m in MODES if m in out}, short


def render(d):
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot is not installed"
    data, short = series(d)
    if not data:
        return "no data"
    prov = bench_meta.provenance(d)
    fd, dat = tempfile.mkstemp(suffix=".dat", dir=d)
    with os.fdopen(fd, "w") as f:
        for pts in data.values():
            for p in pts:
                f.write("%d %.6g %.6g\n" % p)
            f.write("\n\n")
    title = "Tasks waiting on one event: memory and launch rate from one thread"
    lines = [
        "set terminal pngcairo size 1300,560 font ',10'",
        "set output %s" % quote(os.path.join(d, "massive.png")),
        "set termoption noenhanced",
        "set multiplot layout 1,2 title %s" % '."\\n".'.join(quote(t) for t in (title, prov)),
        "set logscale xy", "set grid", "set format x '%.0e'",
        "set xrange [%g:%g]" % (min(p[0] for v in data.values() for p in v) / 2,
                                max(p[0] for v in data.values() for p in v) * 2),
        "set samples 200",
        "set xlabel 'waiting tasks N'",
        "set title 'RSS per waiting task'", "set ylabel 'bytes per task'", "set yrange [10:100000]",
        "set key top right",
    ]
    def labels(col):
        """A run that stopped short says so beside its point."""
        out = ["unset label"]
        for m, pt, n in short:
            out.append("set label %s at %d,%g offset 1,-1 font ',9' tc rgb %s" % (
                quote("%s stopped at %s of %s" % (m, "{:,}".format(pt[0]), "{:,}".format(n))),
                pt[0], pt[col - 1], quote(COLOURS.get(m, "black"))))
        return out

    def plot(col, refs):
        parts = ["%s with lines dashtype 2 lc rgb %s title %s" % (v, quote(c), quote(t))
                 for v, c, t in refs]
        for i, m in enumerate(data):
            parts.append("%s index %d using 1:%d with linespoints lw 2 pt 7 ps 0.9 lc rgb %s title %s"
                         % (quote(dat), i, col, quote(COLOURS[m]), quote(m)))
        return "plot " + ", ".join(parts)
    lines += labels(2)
    lines.append(plot(2, [(3072, "gray40", "seed: Go, about 3 KiB per goroutine"),
                          (64, "dark-green", "issue target: 64 bytes (stackless)")]))
    lines += ["set title 'Launch rate from one thread'", "set ylabel 'launches per second'",
              "set yrange [1000:100000000]", "set key bottom left"]
    lines += labels(3)
    lines.append(plot(3, [(770000, "gray40", "seed: Go, up to 770k/s (10 cores)"),
                          (270000, "gray70", "seed: Go, down to 270k/s"),
                          (1e7, "dark-green", "issue target: 1e7/s (stackless)")]))
    lines.append("unset multiplot")
    r = subprocess.run([gp], input="\n".join(lines) + "\n", text=True, capture_output=True)
    os.remove(dat)
    return None if r.returncode == 0 else "gnuplot failed: " + r.stderr.strip()


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
