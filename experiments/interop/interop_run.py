#!/usr/bin/env python3
"""The pool beside OpenMP (scripts/bench --interop): runs omp_mix with each
OpenMP runtime built (libgomp: build/bench/experiments/interop/omp_mix;
libomp: build/bench/pragmas/interop/omp_mix_llvm), under OpenMP's default
wait policy and under OMP_WAIT_POLICY=passive, and writes into the results
folder (experiments/results/<machine>/<UTC timestamp>-interop/):

    summary.md    the tables of every run, and what the issue's targets say
    interop.csv   every row: runtime, wait policy, experiment, case, values
    raw.log       the programs' output
    meta.json     the machine and build (scripts/bench_meta.py)
    interop.png   time and peak runnable threads per case (with matplotlib)

Options: --rounds R [5], --jobs J [8 x CPUs], --job-us U [4000],
--phases P [2000], --phase-us U [100], --out DIR, --build DIR [build/bench].
"""
import argparse
import csv
import io
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_meta  # noqa: E402
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
    p.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.rounds > 64:
        p.error("--rounds: at most 64")
    return a


def programs(build):
    found = []
    for runtime, rel in (("libgomp", "experiments/interop/omp_mix"),
                         ("libomp", "pragmas/interop/omp_mix_llvm")):
        path = os.path.join(build, rel)
        if os.access(path, os.X_OK):
            found.append((runtime, path))
        else:
            print("interop_run: %s left out (%s is not built)" % (runtime, path))
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


def plot(out, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no interop.png"
    keys = [k for k in results if results[k]["mix"]]
    if not keys:
        return "no mix rows: no interop.png"
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    cases = [r[0] for r in results[keys[0]]["mix"]]
    width = 0.8 / len(keys)
    for i, k in enumerate(keys):
        rows = results[k]["mix"]
        xs = [j + i * width for j in range(len(rows))]
        axes[0].bar(xs, [float(r[2]) for r in rows], width, label="%s, %s" % k)
        axes[1].bar(xs, [float(r[3]) for r in rows], width, label="%s, %s" % k)
    for ax, title in ((axes[0], "time / OpenMP alone (lower is better)"),
                      (axes[1], "peak runnable threads (held over two samples)")):
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(cases))])
        ax.set_xticklabels(cases)
        ax.set_title(title)
    axes[1].axhline(float(results[keys[0]]["cpus"]) + 1, color="grey", linestyle="--",
                    label="CPUs + 1")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "interop.png"), dpi=110)
    return None


def main(argv):
    a = parse_args(argv)
    if a.check_args:
        return 0
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
        for runtime, path in progs:
            for policy, value in POLICIES:
                env = dict(os.environ)
                env.pop("OMP_WAIT_POLICY", None)
                if value:
                    env["OMP_WAIT_POLICY"] = value
                cmd = [path] + opts
                print("interop_run: %s, wait policy %s" % (runtime, policy), flush=True)
                r = subprocess.run(cmd, env=env, capture_output=True, text=True)
                log.write("$ %s%s\n%s%s\n" % ("OMP_WAIT_POLICY=%s " % value if value else "",
                                                " ".join(cmd), r.stdout, r.stderr))
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
                    "peak_runnable_or_burn", "peak_single_sample"])
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
    note = plot(out, results)
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
