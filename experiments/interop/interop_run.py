#!/usr/bin/env python3
"""The pool beside OpenMP (scripts/bench --interop): runs omp_mix with each
OpenMP runtime built (libgomp: build/bench/experiments/interop/omp_mix;
libomp: build/bench/pragmas/interop/omp_mix_llvm; ultrapool: GCC's
omp_mix on build/bench/pragmas/gomp/lib/libgomp.so.1), under OpenMP's default
wait policy and under OMP_WAIT_POLICY=passive, and writes into the results
folder (experiments/results/<machine>/<UTC timestamp>-interop/):

    summary.md    the tables of every run, and what the issue's targets say
    interop.csv   every row: runtime, wait policy, experiment, case, values
                  (mix rows: also the time's and the held peak's lowest and
                  highest round)
    raw.log       the programs' output
    meta.json     the machine and build (scripts/bench_meta.py)
    interop.png   time and peak runnable threads per case, medians with the
                  rounds' spread, the run's machine, date and commit in a
                  corner (gnuplot through scripts/bench_plot.py)

Options: --rounds R [5], --jobs J [8 x CPUs], --job-us U [4000],
--phases P [2000], --phase-us U [100], --out DIR, --build DIR [build/bench];
--replot DIR draws DIR/interop.png again from its interop.csv.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_meta  # noqa: E402
import bench_plot  # noqa: E402
import crossbench  # noqa: E402

POLICIES = [("default", None), ("passive", "passive")]


positive = crossbench.positive


def parse_args(argv):
    p = argparse.ArgumentParser(prog="scripts/bench --interop", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=positive(int), default=5)
    p.add_argument("--jobs", type=positive(int), default=None)
    p.add_argument("--job-us", type=positive(float), default=4000)
    p.add_argument("--phases", type=positive(int), default=2000)
    p.add_argument("--phase-us", type=positive(float), default=100)
    p.add_argument("--out", default=None)
    p.add_argument("--build", default=os.path.join(ROOT, "build", "bench"))
    p.add_argument("--replot", metavar="DIR",
                   help="draw DIR/interop.png again from DIR/interop.csv, and run nothing")
    p.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.rounds > 64:
        p.error("--rounds: at most 64")
    return a


def programs(build):
    """(runtime, program, folder to put first on the library path or None):
    GCC's build on libgomp and on ultrapool's libgomp.so.1, clang's on
    libomp."""
    found = []
    ours = os.path.join(build, "pragmas", "gomp", "lib")
    for runtime, rel, libdir in (("libgomp", "experiments/interop/omp_mix", None),
                                 ("libomp", "pragmas/interop/omp_mix_llvm", None),
                                 ("ultrapool", "experiments/interop/omp_mix", ours)):
        path = os.path.join(build, rel)
        if not os.access(path, os.X_OK):
            print("interop_run: %s left out (%s is not built)" % (runtime, path))
        elif libdir and not os.path.exists(os.path.join(libdir, "libgomp.so.1")):
            print("interop_run: %s left out (no %s/libgomp.so.1)" % (runtime, libdir))
        else:
            found.append((runtime, path, libdir))
    return found


def parse_tables(text):
    """The markdown rows of omp_mix's two tables: (experiment, cells)."""
    rows, experiment = [], None
    for line in text.splitlines():
        if line.startswith("| case | ms | time"):
            experiment = "mix"
        elif line.startswith("| case | ms | efficiency"):
            experiment = "phases"
        elif line.startswith("| ") and experiment and not line.startswith("| case"):
            rows.append((experiment, [c.strip() for c in line.strip("|").split("|")]))
    return rows


def leading_number(cell):
    """The number in a table cell ("n/a 2" where nothing was sampled: None)."""
    try:
        return float(cell)
    except ValueError:
        return None


def plot(out, results, rounds):
    """interop.png through gnuplot (scripts/bench_plot.py): per (runtime,
    wait policy), each mix case's time over OpenMP alone's and its peak
    runnable threads; medians with bars from the lowest to the highest
    round (the last four columns of omp_mix's mix table)."""
    keys = [k for k in results if results[k]["mix"]]
    if not keys:
        return "no mix rows: no interop.png"
    if any(len(c) < 9 for k in keys for c in results[k]["mix"]):
        return ("omp_mix printed medians only (before it printed the rounds' spread): "
                "no interop.png without the spread")
    q = bench_plot.quote
    cases = [c[0] for c in results[keys[0]]["mix"]]
    width = 0.8 / len(keys)
    lines = []
    for i, k in enumerate(keys):
        mix = results[k]["mix"]
        alone = float(mix[0][1]) / float(mix[0][2])  # OpenMP alone's median ms
        time_rows, peak_rows = [], []
        for j, c in enumerate(mix):
            x = j + (i - (len(keys) - 1) / 2) * width
            time_rows.append((x, float(c[2]), float(c[5]) / alone, float(c[6]) / alone))
            pk = leading_number(c[3])
            peak_rows.append((x, pk, float(c[7]), float(c[8])) if pk is not None else None)
        lines += bench_plot.datablock("time%d" % i, time_rows)
        lines += bench_plot.datablock("peak%d" % i, [r for r in peak_rows if r])
    xtics = "set xtics (%s)" % ", ".join("%s %d" % (q(c), j) for j, c in enumerate(cases))
    lines += ["set multiplot layout 1,2 title %s" % q(bench_plot.spread_note(rounds)),
              "set style fill solid 0.8", "set boxwidth %g" % (width * 0.9), "set bars 0.5",
              "set xrange [-0.6:%g]" % (len(cases) - 0.4), xtics, "set grid ytics",
              "set key top left", "set yrange [0:*]",
              "set title 'time / OpenMP alone (lower is better)'"]
    bars = lambda block: ", ".join(
        "$%s%d using 1:2 with boxes lc %d title %s, $%s%d using 1:2:3:4 with yerrorbars "
        "lc rgb 'black' pt 7 ps 0.3 notitle" % (block, i, i + 1, q("%s, %s" % k), block, i)
        for i, k in enumerate(keys))
    lines.append("plot " + bars("time"))
    cpus = float(results[keys[0]]["cpus"])
    lines += ["set title 'peak runnable threads (held over two samples)'",
              "set yrange [0:%g]" % (max([cpus + 2] + [float(c[8]) + 1 for k in keys
                                                        for c in results[k]["mix"]])),
              "plot " + bars("peak") + ", %g with lines dashtype 2 lc rgb 'gray' title 'CPUs + 1'"
              % (cpus + 1), "unset multiplot"]
    return bench_plot.render(lines, os.path.join(out, "interop.png"), 1300, 500)


def read_results(out):
    """The results dict of main again, from a folder's interop.csv and
    meta.json."""
    results = {}
    with open(os.path.join(out, "meta.json")) as f:
        cpus = json.load(f).get("cores_usable")
    with open(os.path.join(out, "interop.csv"), newline="") as f:
        for row in list(csv.reader(f))[1:]:
            res = results.setdefault((row[0], row[1]), {"mix": [], "phases": [], "cpus": cpus})
            res[row[2]].append([c for c in row[3:]])
    return results


def replot(out):
    """interop.png again from out/interop.csv; nothing else changes."""
    if not os.path.isfile(os.path.join(out, "interop.csv")):
        sys.stderr.write("interop_run: no %s\n" % os.path.join(out, "interop.csv"))
        return 1
    with open(os.path.join(out, "meta.json")) as f:
        rounds = json.load(f).get("run", {}).get("rounds")
    err = plot(out, read_results(out), rounds)
    print("interop_run: %s" % (err or os.path.join(out, "interop.png")))
    return 1 if err else 0


def main(argv):
    a = parse_args(argv)
    if a.check_args:
        return 0
    if a.replot:
        return replot(a.replot)
    progs = programs(a.build)
    if not progs:
        sys.stderr.write("interop_run: no omp_mix built under %s\n" % a.build)
        return 1
    meta = bench_meta.start("scripts/bench --interop", "scripts/bench --interop " + " ".join(argv),
                            os.path.abspath(a.build), {"rounds": a.rounds})
    out, machine = crossbench.results_folder(meta, "-interop", a.out)
    opts = ["--rounds", str(a.rounds), "--job-us", str(a.job_us), "--phases", str(a.phases),
            "--phase-us", str(a.phase_us)]
    if a.jobs:
        opts += ["--jobs", str(a.jobs)]
    results, md = {}, io.StringIO()
    ncpus = len(os.sched_getaffinity(0))
    with open(os.path.join(out, "raw.log"), "w") as log:
        for runtime, path, libdir in progs:
            for policy, value in POLICIES:
                env = dict(os.environ)
                env.pop("OMP_WAIT_POLICY", None)
                prefix = ""
                if value:
                    env["OMP_WAIT_POLICY"] = value
                    prefix += "OMP_WAIT_POLICY=%s " % value
                if libdir:
                    env["LD_LIBRARY_PATH"] = libdir + (
                        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
                    prefix += "LD_LIBRARY_PATH=%s " % libdir
                cmd = [path] + opts
                print("interop_run: %s, wait policy %s" % (runtime, policy), flush=True)
                r = subprocess.run(cmd, env=env, capture_output=True, text=True)
                log.write("$ %s%s\n%s%s\n" % (prefix, " ".join(cmd), r.stdout, r.stderr))
                if r.returncode != 0:
                    md.write("## %s, wait policy %s\n\nfailed (status %d); see raw.log\n\n"
                             % (runtime, policy, r.returncode))
                    continue
                rows = parse_tables(r.stdout)
                results[(runtime, policy)] = {
                    "mix": [c for e, c in rows if e == "mix"],
                    "phases": [c for e, c in rows if e == "phases"],
                    "cpus": ncpus}
                md.write("## %s, wait policy %s\n\n%s\n" % (runtime, policy, r.stdout))
    with open(os.path.join(out, "interop.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["runtime", "wait_policy", "experiment", "case", "ms", "ratio",
                    "peak_runnable_or_burn", "peak_single_sample", "ms_min", "ms_max",
                    "peak_runnable_min", "peak_runnable_max"])
        for (runtime, policy), res in results.items():
            for c in res["mix"]:
                w.writerow([runtime, policy, "mix"] + c)
            for c in res["phases"]:
                w.writerow([runtime, policy, "phases"] + c)
    targets = io.StringIO()
    for (runtime, policy), res in results.items():
        peaks = {c[0]: float(c[3]) for c in res["mix"]}
        ph = {c[0]: c for c in res["phases"]}
        alt = [c for k, c in ph.items() if k.startswith("alternating")]
        line = "- %s, %s: shared peak runnable %s, lend %s (target <= CPUs + 1 = %d)" % (
            runtime, policy, peaks.get("shared", "?"), peaks.get("lend", "?"), ncpus + 1)
        if alt:
            line += "; phase efficiency %s (target >= 0.9), idle burn %s (target <= 1%%)" % (
                alt[0][2], alt[0][3])
        for c in alt[1:]:
            line += "\n  - %s: efficiency %s, idle burn %s" % (c[0], c[2], c[3])
        targets.write(line + "\n")
    note = plot(out, results, a.rounds)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("# The pool beside OpenMP\n\nMachine: %s, %d CPUs. Command: `%s`. "
                "Medians of %d rounds, cases interleaved in random order.\n\n"
                % (machine, ncpus, meta["command"],
                   a.rounds))
        f.write("## Against the targets\n\n%s\n" % targets.getvalue())
        if note:
            f.write("(%s)\n\n" % note)
        else:
            f.write("![time and runnable threads](interop.png)\n\n")
        f.write(md.getvalue())
    bench_meta.write(bench_meta.end(meta), os.path.join(out, "meta.json"))
    print("interop_run: results in %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
