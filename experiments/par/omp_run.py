#!/usr/bin/env python3
"""The OpenMP runtimes on the same binaries (scripts/bench --omp): one
gcc -fopenmp build of each program runs on GCC's libgomp (as linked), on
LLVM's libomp through its GOMP layer (a folder whose libgomp.so.1 links to
libomp.so.5, first on the library path) and on ultrapool's libgomp.so.1.

Programs: omp_epcc (EPCC-style syncbench, schedbench with chunk sweeps and
taskbench rows, overhead per construct in ns; experiments/par/omp_epcc.c)
and par_child_gomp, the pragma variant of the kernels: fib with every call
a task (ns per task) and the other kernels (ms per run), verified on every
run. The runtimes are interleaved: each round runs every runtime once, in
an order rotated from round to round, so a change in the machine's load
falls on all of them. Writes into experiments/results/<machine>/<UTC
timestamp>-omp/ (or --out):

    summary.md    a table per group: each runtime's median over the rounds,
                  the spread (min-max of the rounds), ultrapool / libgomp and
                  ultrapool / libomp; the PAPI counters (or why missing)
    omp.csv       every value of every round
    summary.csv   the tables' numbers
    counters.csv  PAPI presets of each omp_epcc run, "missing" where absent
    raw.log       the programs' commands and output
    meta.json     the machine, build and commit (scripts/bench_meta.py)
    omp.png       medians with min-max bars per group, the run's machine, date
                  and commit in a corner (gnuplot through scripts/bench_plot.py;
                  plot.gp redraws it; --replot DIR draws it again from omp.csv)

The quick run (default) takes a few minutes on 2 cores; --full runs more
rounds, more repetitions and the kernels at their full sizes.
"""
import argparse
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_meta  # noqa: E402
import bench_plot  # noqa: E402
import crossbench  # noqa: E402
from bench_stats import median, summary  # noqa: E402

RUNTIMES = ["libgomp", "libomp", "ultrapool"]
GROUPS = [("sync", "syncbench: overhead per construct (ns)"),
          ("sched", "schedbench: overhead per loop (ns)"),
          ("task", "taskbench: overhead per task construct (ns)"),
          ("kernels", "kernels, pragma variant (fib: ns per task; others: ms per run)")]
# The kernels' sizes (par_child_gomp arguments), quick and full: those of
# scripts/bench --par (experiments/par/par_bench_table.c).
KERNELS = {
    "nqueens": (["--n", "10", "--cutoff", "4"], ["--n", "13", "--cutoff", "5"]),
    "msort": (["--n", "200000", "--cutoff", "128"], ["--n", "2000000", "--cutoff", "128"]),
    "sparselu": (["--n", "10", "--block", "16"], ["--n", "80", "--block", "16"]),
    "strassen": (["--n", "256", "--cutoff", "128"], ["--n", "1024", "--cutoff", "128"]),
    "jacobi": (["--n", "256", "--block", "32", "--steps", "10"],
               ["--n", "2048", "--block", "128", "--steps", "40"]),
}
EPCC_ROWS = ["sync", "sched", "task", "PARALLEL", "FOR", "PARALLEL_FOR", "BARRIER", "SINGLE",
             "CRITICAL", "LOCK_UNLOCK", "ATOMIC", "REDUCTION", "STATIC", "PARALLEL_TASK",
             "MASTER_TASK", "TASK_WAIT", "TASK_BARRIER", "NESTED_TASK", "TASKLOOP",
             "DEPEND_CHAIN"]
QUICK = {"rounds": 5, "innerreps": 1000, "sched_innerreps": 100, "outer": 10, "fib": 27}
FULL = {"rounds": 11, "innerreps": 5000, "sched_innerreps": 500, "outer": 20, "fib": 30}

positive = crossbench.positive


def parse_args(argv):
    p = argparse.ArgumentParser(prog="scripts/bench --omp", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", action="store_true",
                   help="more rounds and repetitions, the kernels at full size")
    p.add_argument("--rounds", type=positive(int), help="rounds [5; --full: 11]")
    p.add_argument("--threads", type=positive(int), default=2, help="team size [2]")
    p.add_argument("--innerreps", type=positive(int),
                   help="constructs per timed repetition [1000; --full: 5000]")
    p.add_argument("--sched-innerreps", type=positive(int),
                   help="loops per timed repetition of the schedule rows [100; --full: 500]")
    p.add_argument("--outer", type=positive(int),
                   help="timed repetitions per row, of which the median [10; --full: 20]")
    p.add_argument("--delay", type=positive(int), help="delay iterations per thread [50]")
    p.add_argument("--iters", type=positive(int), default=128,
                   help="iterations per thread of each schedule row's loop [128]")
    p.add_argument("--chunks", help="chunk sweep of the schedule rows [1,2,4,8,16,32,64,128]")
    p.add_argument("--rows", help="omp_epcc rows or groups (sync, sched, task) [all]")
    p.add_argument("--seconds", type=positive(float),
                   help="budget of each omp_epcc run: rows not started by then are left out")
    p.add_argument("--fib", type=positive(int), help="fib's n [27; --full: 30]")
    p.add_argument("--kernels", default=",".join(["fib"] + list(KERNELS)),
                   help="kernels of the pragma variant, or 'none' [fib,%s]" % ",".join(KERNELS))
    p.add_argument("--runtimes", default=",".join(RUNTIMES),
                   help="comma list of %s [all found]" % ",".join(RUNTIMES))
    p.add_argument("--out", help="results folder [experiments/results/<machine>/<UTC>-omp]")
    p.add_argument("--build", default=os.path.join(ROOT, "build", "bench"),
                   help="build tree with the experiments [build/bench]")
    p.add_argument("--replot", metavar="DIR",
                   help="draw DIR/omp.png again from DIR/omp.csv, and run nothing")
    p.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    for k, v in (FULL if a.full else QUICK).items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.rounds > 100:
        p.error("--rounds: at most 100")
    if a.outer > 1000:
        p.error("--outer: at most 1000")
    known = ["fib"] + list(KERNELS)
    a.kernel_list = [] if a.kernels == "none" else a.kernels.split(",")
    for k in a.kernel_list:
        if k not in known:
            p.error("--kernels: unknown kernel %r (known: %s, or none)" % (k, ",".join(known)))
    a.runtime_list = a.runtimes.split(",")
    for r in a.runtime_list:
        if r not in RUNTIMES:
            p.error("--runtimes: unknown runtime %r (known: %s)" % (r, ",".join(RUNTIMES)))
    # omp_epcc's rows (omp_epcc --list), checked here so that a mistake
    # costs no build.
    for r in (a.rows.split(",") if a.rows else []):
        if r not in EPCC_ROWS and not re.fullmatch(r"(STATIC|DYNAMIC|GUIDED)_[1-9][0-9]*", r):
            p.error("--rows: unknown row or group %r (known: %s, STATIC_<chunk>, "
                    "DYNAMIC_<chunk>, GUIDED_<chunk>)" % (r, ",".join(EPCC_ROWS)))
    if a.chunks and not all(c.isdigit() and int(c) > 0 for c in a.chunks.split(",")):
        p.error("--chunks: a comma list of whole numbers >= 1, not %r" % a.chunks)
    return a


def programs(build):
    paths = {"epcc": os.path.join(build, "experiments", "par", "omp_epcc"),
             "child": os.path.join(build, "experiments", "par", "par_child_gomp"),
             "ours": os.path.join(build, "pragmas", "gomp", "lib", "libgomp.so.1")}
    missing = [p for p in paths.values() if not os.path.exists(p)]
    if missing:
        sys.exit("omp_run: not built: %s (build the targets omp_epcc, par_child_gomp and "
                 "ultrapool_gomp with the experiments, or give --build)" % ", ".join(missing))
    paths["ours"] = os.path.dirname(paths["ours"])
    return paths


def find_libomp():
    for pat in ("/usr/lib/x86_64-linux-gnu/libomp.so.5", "/usr/lib/aarch64-linux-gnu/libomp.so.5",
                "/usr/lib/llvm-*/lib/libomp.so.5"):
        for f in sorted(glob.glob(pat)):
            if os.path.isfile(f):
                return f
    return None


def environments(ours, tmp, wanted):
    """Each runtime's environment and what it loads."""
    base = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    envs = {"libgomp": (dict(base), "GCC's libgomp, as linked"),
            "ultrapool": (dict(base, LD_LIBRARY_PATH=ours), os.path.join(ours, "libgomp.so.1"))}
    libomp = find_libomp()
    if libomp:
        d = os.path.join(tmp, "libomp")
        os.mkdir(d)
        os.symlink(libomp, os.path.join(d, "libgomp.so.1"))
        envs["libomp"] = (dict(base, LD_LIBRARY_PATH=d), "libgomp.so.1 -> " + libomp)
    else:
        print("omp_run: libomp.so.5 not found (Debian: apt-get install libomp-dev): "
              "its column is left out")
    return {r: envs[r] for r in RUNTIMES if r in envs and r in wanted}


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def load1():
    """The 1-minute load average, or "?"."""
    return (bench_meta.load_average() or ["?"])[0]


class Runner:
    def __init__(self, log):
        self.log = log

    def run(self, cmd, env, rt):
        self.log.write("$ [%s] %s\n" % (rt, " ".join(cmd)))
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        self.log.write(p.stdout + p.stderr)
        self.log.flush()
        if p.returncode != 0:
            sys.exit("omp_run: %s failed on %s (exit %d):\n%s%s" %
                     (" ".join(cmd), rt, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
        if p.stderr:
            sys.stderr.write(p.stderr)
        return p.stdout


def epcc_args(a):
    args = ["--threads", str(a.threads), "--innerreps", str(a.innerreps), "--sched-innerreps",
            str(a.sched_innerreps), "--outer", str(a.outer), "--iters", str(a.iters)]
    for opt, v in (("--delay", a.delay), ("--chunks", a.chunks), ("--rows", a.rows),
                   ("--seconds", a.seconds)):
        if v is not None:
            args += [opt, str(v)]
    return args


def one_leg(r, paths, a, env, rt, rnd, values, counters):
    """Every program once on runtime rt: values[(group, row, unit)][rt]
    gets one value per round."""
    out = r.run([paths["epcc"]] + epcc_args(a), env, rt)
    for line in out.splitlines():
        if not line.startswith("omp_epcc "):
            continue
        f = fields(line)
        if f.get("runtime") != rt:
            sys.exit("omp_run: the %s leg ran on %s" % (rt, f.get("runtime")))
        if line.startswith("omp_epcc counters "):
            note = line.split(" note=", 1)[1] if " note=" in line else ""
            for k, v in f.items():
                if k.startswith("PAPI_"):
                    counters.append([rnd, rt, "omp_epcc", k, v, note if v == "missing" else ""])
            continue
        values.setdefault((f["group"], f["row"], "ns"), {}).setdefault(rt, []).append(
            float(f["overhead_ns"]))
    for k in a.kernel_list:
        size = ["--n", str(a.fib)] if k == "fib" else KERNELS[k][1 if a.full else 0]
        out = r.run([paths["child"], "--kernel", k, "--threads", str(a.threads), "--reps", "3",
                     "--warmup", "1"] + size, env, rt)
        runs = [fields(l) for l in out.splitlines() if l.startswith("run ")]
        if not runs or any(x.get("verified") != "1" for x in runs):
            sys.exit("omp_run: %s not verified on %s:\n%s" % (k, rt, out))
        ns = median(int(x["ns"]) for x in runs)
        if k == "fib":
            values.setdefault(("kernels", "fib(%d)" % a.fib, "ns/task"), {}).setdefault(
                rt, []).append(ns / int(runs[0]["tasks"]))
        else:
            values.setdefault(("kernels", k, "ms"), {}).setdefault(rt, []).append(ns / 1e6)


def num(x):
    """Three significant digits without an exponent."""
    return "%.0f" % x if abs(x) >= 100 else "%.1f" % x if abs(x) >= 10 else "%.2f" % x


def plot(out, values, rts, rounds):
    """omp.png through gnuplot (scripts/bench_plot.py, script kept as
    plot.gp): one panel per group, each runtime's median with a bar from
    the lowest to the highest round, log scale."""
    q = bench_plot.quote
    groups = [g for g, _ in GROUPS if any(k[0] == g for k in values)]
    lines = []
    floor = {}  # per group: below the lowest positive value (log scale)
    for g in groups:
        keys = [k for k in values if k[0] == g]
        pos = [x for k in keys for v in values[k].values() for x in v if x > 0]
        floor[g] = min(pos) / 2 if pos else 1e-3
        for j, rt in enumerate(rts):
            rows = []
            for i, k in enumerate(keys):
                s = summary(values[k].get(rt) or [])
                if s.n and s.median > 0:
                    # A bar reaching zero or below ends at the floor.
                    rows.append((i + (j - (len(rts) - 1) / 2) * 0.2, s.median,
                                 max(s.min, floor[g]), s.max, k[1]))
            lines += bench_plot.datablock("%s_%s" % (g, rt), rows)
    lines += ["set multiplot layout %d,1 title %s"
              % (len(groups), q(bench_plot.spread_note(rounds))),
              "set logscale y", "set key outside right",
              "set xtics rotate by -45 font ',8'", "set grid ytics"]
    titles = dict(GROUPS)
    for g in groups:
        lines.append("set title %s" % q(titles[g]))
        keys = [k for k in values if k[0] == g]
        lines.append("set xrange [-0.6:%g]" % (len(keys) - 0.4))
        lines.append("set xtics (%s)" % ", ".join("%s %d" % (q(k[1]), i)
                                                  for i, k in enumerate(keys)))
        lines.append("set yrange [%g:*]" % floor[g])
        lines.append("plot " + ", ".join(
            "$%s_%s using 1:2:3:4 with yerrorbars pt 7 lc %d title %s"
            % (g, rt, RUNTIMES.index(rt) + 1, q(rt)) for rt in rts))
    lines.append("unset multiplot")
    return bench_plot.render(lines, os.path.join(out, "omp.png"), 1400, 40 + 380 * len(groups),
                             keep_script="plot.gp")


def read_values(out):
    """values and runtimes again from a folder's omp.csv, in the order the
    run wrote them (as plot and write_results had them)."""
    values = {}
    with open(os.path.join(out, "omp.csv"), newline="") as f:
        for r in csv.DictReader(f):
            values.setdefault((r["group"], r["row"], r["unit"]), {}).setdefault(
                r["runtime"], []).append(float(r["value"]))
    found = {rt for per in values.values() for rt in per}
    return values, [rt for rt in RUNTIMES if rt in found]


def replot(out):
    """omp.png (and plot.gp) again from out/omp.csv; nothing else changes."""
    if not os.path.isfile(os.path.join(out, "omp.csv")):
        sys.stderr.write("omp_run: no %s\n" % os.path.join(out, "omp.csv"))
        return 1
    values, rts = read_values(out)
    rounds = max((len(v) for per in values.values() for v in per.values()), default=0)
    err = plot(out, values, rts, rounds)
    print("omp_run: %s" % (err or os.path.join(out, "omp.png")))
    return 1 if err else 0


def write_results(out, a, meta, machine, rts, loads, values, counters):
    others = [o for o in rts if o != "ultrapool"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["group", "row", "unit", "runtime", "median", "min", "max", "rounds"])
        for (g, row, unit), per in values.items():
            for rt in rts:
                v = per.get(rt, [])
                if v:
                    s = summary(v)
                    w.writerow([g, row, unit, rt, "%.6g" % s.median, "%.6g" % s.min,
                                "%.6g" % s.max, s.n])
    note = plot(out, values, rts, a.rounds)
    md = ["# OpenMP runtimes on the same binaries", "",
          "Machine: %s, %d CPUs usable. Command: `%s`. Commit %s, %s." %
          (machine, len(os.sched_getaffinity(0)), meta["command"], meta.get("git", "?"),
           meta.get("date", "?")),
          "", "Runtimes: " + "; ".join("%s (%s)" % (rt, meta["run"]["runtimes"][rt])
                                       for rt in rts) + ".",
          "",
          "%d threads; %d rounds, each running every runtime once in an order rotated from "
          "round to round (load average %s at the start, %s at the end). A cell is the median "
          "of the rounds [min-max of the rounds]; each round's omp_epcc value is the median of "
          "%d timed repetitions (innerreps %d, schedule rows %d loops of %d iterations per "
          "thread), a kernel's the median of 3 verified runs. Ratios: ultrapool's median over "
          "the other's (below 1: ultrapool faster). omp_epcc.c and docs/benchmarks.md say "
          "how each row is measured." % (a.threads, a.rounds, loads[0], loads[-1], a.outer,
                                         a.innerreps, a.sched_innerreps, a.iters),
          ""]
    if note:
        md += ["(%s)" % note, ""]
    else:
        md += ["![medians with min-max of the rounds](omp.png)", ""]
    for g, title in GROUPS:
        keys = [k for k in values if k[0] == g]
        if not keys:
            continue
        md += ["## " + title, "",
               "| row | unit | " + " | ".join(rts) + " | " +
               " | ".join("ultrapool / " + o for o in others) + " |",
               "|---|---|" + "---:|" * (len(rts) + len(others))]
        for k in keys:
            per, med, cells = values[k], {}, []
            for rt in rts:
                v = per.get(rt)
                if not v:
                    cells.append("missing")
                    continue
                s = summary(v)
                med[rt] = s.median
                cells.append("%s [%s-%s]" % (num(s.median), num(s.min), num(s.max)))
            ratios = ["%.2f" % (med["ultrapool"] / med[o])
                      if "ultrapool" in med and med.get(o, 0) > 0 else "-" for o in others]
            md.append("| %s | %s | %s | %s |" % (k[1], k[2], " | ".join(cells),
                                                 " | ".join(ratios)))
        md.append("")
    md += ["## Hardware counters", ""]
    missing = sorted(set(c[5] for c in counters if c[4] == "missing"))
    names = sorted(set(c[3] for c in counters))
    if not counters:
        md.append("No omp_epcc counter lines (see raw.log).")
    else:
        md += ["PAPI presets over each whole omp_epcc run (every thread; counters.csv), "
               "median of the rounds:", "", "| counter | " + " | ".join(rts) + " |",
               "|---|" + "---:|" * len(rts)]
        for n in names:
            cells = []
            for rt in rts:
                v = [c[4] for c in counters if c[1] == rt and c[3] == n]
                nums = [int(x) for x in v if x != "missing"]
                cells.append("%.4g" % median(nums) if nums and len(nums) == len(v)
                             else "missing")
            md.append("| %s | %s |" % (n, " | ".join(cells)))
        if missing:
            md += ["", "Missing: %s." % "; ".join(m or "no reason given" for m in missing)]
    md += ["", "The pool's own counters (PAPI SDE) are not read here: the programs are plain "
           "OpenMP binaries, which do not reach the pool's API. Raw output: raw.log.", ""]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md))


def main(argv):
    a = parse_args(argv)
    if a.check_args:
        return 0
    if a.replot:
        return replot(a.replot)
    paths = programs(a.build)
    with tempfile.TemporaryDirectory() as tmp:
        envs = environments(paths["ours"], tmp, a.runtime_list)
        rts = list(envs)
        run = {"rounds": a.rounds, "threads": a.threads, "innerreps": a.innerreps,
               "sched_innerreps": a.sched_innerreps, "iters": a.iters, "outer": a.outer, "full": a.full,
               "fib": a.fib, "kernels": a.kernel_list, "runtimes": {r: envs[r][1] for r in rts}}
        meta = bench_meta.start("scripts/bench --omp", "scripts/bench --omp " + " ".join(argv),
                                os.path.abspath(a.build), run)
        out, machine = crossbench.results_folder(meta, "-omp", a.out)
        values, counters, loads = {}, [], [load1()]
        order_log = []
        with open(os.path.join(out, "raw.log"), "w") as log:
            r = Runner(log)
            print("omp_run: %s, %d threads, %d rounds; results in %s" %
                  (", ".join(rts), a.threads, a.rounds, out), flush=True)
            for rnd in range(a.rounds):
                k = rnd % len(rts)
                order = rts[k:] + rts[:k]
                order_log.append(order)
                log.write("# round %d: %s\n" % (rnd + 1, " ".join(order)))
                for rt in order:
                    one_leg(r, paths, a, envs[rt][0], rt, rnd + 1, values, counters)
                print("omp_run: round %d of %d done (%s; load average %s)" %
                      (rnd + 1, a.rounds, " ".join(order), load1()),
                      flush=True)
        loads.append(load1())
    with open(os.path.join(out, "omp.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "runtime", "group", "row", "unit", "value"])
        for (g, row, unit), per in values.items():
            for rt, v in per.items():
                for i, x in enumerate(v):
                    w.writerow([i + 1, rt, g, row, unit, "%.6g" % x])
    with open(os.path.join(out, "counters.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "runtime", "program", "counter", "value", "why_missing"])
        w.writerows(counters)
    write_results(out, a, meta, machine, rts, loads, values, counters)
    meta["run"]["orders"] = order_log
    bench_meta.write(bench_meta.end(meta), os.path.join(out, "meta.json"))
    with open(os.path.join(out, "summary.md")) as f:
        print(f.read())
    print("omp_run: results in %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
