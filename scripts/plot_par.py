#!/usr/bin/env python3
"""The plots of a par_bench run (scripts/bench --par), with gnuplot through
scripts/bench_plot.py (Python 3 standard library only):

    plot_par.py metg DIR    DIR/metg.png: Task Bench-style efficiency against
                            task granularity, one panel per dependency
                            pattern, one line per runtime
    plot_par.py grain DIR   DIR/grain.png: speedup over sequential against the
                            sequential work per task, one panel per kernel

Each point is the median over the rounds (the *_median.csv par_bench wrote);
its error bar spans the lowest to the highest round (from metg.csv and
grain.csv). The run's machine, date and commit are in the image's corner.
"""
import argparse
import csv
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_plot  # noqa: E402
from bench_stats import median  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r and None not in r.values()]


def blocks_in_order(rows, key):
    """Groups rows by key(row), in the order the keys first appear."""
    out = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def metg_series(d):
    """(pattern, runtime) -> [(granularity_us, median, lo, hi)], threads, rounds."""
    med = read_csv(os.path.join(d, "metg_median.csv"))
    raw = read_csv(os.path.join(d, "metg.csv"))
    spread = {}
    for r in raw:
        k = (r["runtime"], r["pattern"], r["threads"], float(r["task_ns"]) / 1000)
        spread.setdefault(k, []).append(float(r["efficiency"]))
    series = {}
    rounds = max((len(v) for v in spread.values()), default=0)
    for r in med:
        g = float(r["granularity_us"])
        effs = [v for (rt, pat, th, us), v in spread.items()
                if rt == r["runtime"] and pat == r["pattern"] and th == r["threads"]
                and abs(us - g) <= 1e-6 * max(1.0, g) + 5e-5]
        effs = effs[0] if effs else [float(r["efficiency"])]
        series.setdefault((r["pattern"], r["runtime"]), []).append(
            (g, float(r["efficiency"]), min(effs), max(effs)))
    threads = med[0]["threads"] if med else "?"
    return series, threads, rounds


def grain_series(d):
    """(kernel, runtime) -> [(us_per_task, median speedup, lo, hi)], rounds.
    A round's speedup is the sequential median over that round's time, so
    the bar shows the spread of the runtime's rounds."""
    med = read_csv(os.path.join(d, "grain_median.csv"))
    raw = read_csv(os.path.join(d, "grain.csv"))
    seq, runs = {}, {}
    for r in raw:
        if r["runtime"] == "seq":
            seq.setdefault(r["kernel"], []).append(float(r["ns"]))
        else:
            runs.setdefault((r["kernel"], r["runtime"], r["cutoff"]), []).append(float(r["ns"]))
    series = {}
    for r in med:
        k = (r["kernel"], r["runtime"], r["cutoff"])
        s = float(r["speedup"])
        lo = hi = s
        if k in runs and seq.get(r["kernel"]):
            base = median(seq[r["kernel"]])
            lo, hi = base / max(runs[k]), base / min(runs[k])
        series.setdefault((r["kernel"], r["runtime"]), []).append(
            (float(r["us_per_task"]), s, lo, hi))
    rounds = max((len(v) for v in runs.values()), default=0)
    return series, rounds


def render(d, kind):
    if kind == "metg":
        series, threads, rounds = metg_series(d)
        panels = list(dict.fromkeys(p for p, _ in series))
        title = ("Task Bench-style efficiency, %s threads (METG(50%%): where a line crosses 0.5)"
                 % threads)
        layout, size = (2, 3), (1500, 940)
        xlabel, ylabel = "task granularity (us)", "efficiency"
        yrange, ref = "[0:1.1]", "0.5 with lines dashtype 2 lc rgb 'gray' title '50%'"
    else:
        series, rounds = grain_series(d)
        panels = list(dict.fromkeys(k for k, _ in series))
        threads = "?"
        try:
            with open(os.path.join(d, "grain.md")) as f:
                threads = f.readline().split()[0]
        except (OSError, IndexError):
            pass
        title = ("Speedup over sequential as the tasks get finer, %s threads "
                 "(same cutoffs on every runtime)" % threads)
        layout, size = (1, max(1, len(panels))), (500 * max(1, len(panels)), 490)
        xlabel, ylabel = "sequential work per task (us)", "speedup over sequential"
        yrange, ref = "[0:*]", "1 with lines dashtype 2 lc rgb 'gray' title 'sequential'"
    if not series:
        return "no data"
    spread = bench_plot.spread_note(rounds)
    if kind == "grain" and rounds > 1:
        spread += " (the sequential median over each round's time)"
    lines, names = [], {}
    for n, (key, pts) in enumerate(series.items()):
        names[key] = "s%d" % n
        lines += bench_plot.datablock(names[key], pts)
    lines += [
        "set multiplot layout %d,%d title %s" % (
            layout[0], layout[1], '."\\n".'.join(bench_plot.quote(t) for t in (title, spread))),
        "set logscale x", "set xrange [*:*] reverse", "set yrange %s" % yrange,
        "set xlabel %s" % bench_plot.quote(xlabel), "set ylabel %s" % bench_plot.quote(ylabel),
        "set grid", "set key bottom left", "set bars 0.6",
    ]
    for panel in panels:
        lines.append("set title %s" % bench_plot.quote(panel))
        plot = ["plot " + ref]
        for (p, rt), name in names.items():
            if p == panel:
                plot.append("$%s using 1:2:3:4 with yerrorlines pt 7 ps 0.6 title %s"
                            % (name, bench_plot.quote(rt)))
        lines.append(", ".join(plot))
    lines.append("unset multiplot")
    return bench_plot.render(lines, os.path.join(d, kind + ".png"), size[0], size[1])


def main(argv):
    ap = argparse.ArgumentParser(prog="plot_par.py", description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=("metg", "grain"), help="which plot")
    ap.add_argument("dir", metavar="RESULTS_DIR", help="the --par run's results folder")
    a = ap.parse_args(argv)
    kind, d = a.kind, a.dir
    need = os.path.join(d, kind + "_median.csv")
    if not os.path.isfile(need) or os.path.getsize(need) == 0:
        sys.stderr.write("plot-%s: no %s\n" % (kind, need))
        return 1
    err = render(d, kind)
    if err:
        sys.stderr.write("plot-%s: %s\n" % (kind, err))
        return 1
    print("plot-%s: %s" % (kind, os.path.join(d, kind + ".png")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
