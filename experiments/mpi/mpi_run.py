#!/usr/bin/env python3
"""The MPI mode's experiments (scripts/bench --mpi): runs the programs of
experiments/mpi under mpirun and writes into the results folder
(experiments/results/<machine>/<UTC timestamp>-mpi/):

    summary.md    what ran, the commands, medians and ratios against the targets
    mpi.csv       every result line of every run (one row per RESULT line)
    metg.csv      the sweep's medians: efficiency against task granularity
    raw.log       the programs' output, with each command
    meta.json     the machine and build (scripts/bench_meta.py)
    mpi.png       the sweep and the farm, medians with the rounds' spread, the
                  run's machine, date and commit in a corner (gnuplot through
                  scripts/bench_plot.py; plot.gp redraws it; --replot DIR draws
                  it again from mpi.csv)

Experiments, each run once per round, all runs of a round in a random order:
  grab   one chunk grab (MPI_Fetch_and_op + MPI_Win_flush on rank 0's
         counter, as mpi/ledger.c does), remote and local, with MPI's
         default one-sided component and with each one forced (--mca osc)
  farm   a load-imbalanced farm (Pareto costs, the heavy half first):
         up_mpi_for guided, dynamic, static; MPI + OpenMP (static blocks per
         rank, schedule(dynamic) inside); the single-threaded run it is
         measured against; and up_mpi_for under the components that need the
         target's progress (osc pt2pt, ucx)
  metg   Task Bench-style sweep, trivial and stencil: ultrapool (one region
         around the time loop, up_parallel_for per step, pool tasks through a
         group), MPI + OpenMP (one region, a parallel for per step), and the
         task alone

Options: --quick (default) or --full, --rounds R [quick 5, full 9], --ranks P
[2], --seed N [the clock], --out DIR, --build DIR [build/bench].
"""
import argparse
import csv
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_meta  # noqa: E402
import crossbench  # noqa: E402
from mpi_report import (FARM_OSC, FARM_PEERS, METG_PEERS, OSC_FORCED, fmt,  # noqa: E402
                        plot, write_summary)

QUICK = {"rounds": 5, "farm_n": 4000, "farm_ms": 400, "grabs": 20000, "inner": 11,
         "budget_us": 20000,
         "grains": "1000,300,100,30,10,5,3,2,1.5,1,0.7,0.5,0.3,0.2,0.15,0.1,0.07,0.05,0.03,0.02"}
FULL = {"rounds": 9, "farm_n": 20000, "farm_ms": 2000, "grabs": 50000, "inner": 21,
        "budget_us": 60000,
        "grains": "3000,1000,500,300,200,100,50,30,20,10,7,5,4,3,2.5,2,1.5,1.2,1,0.85,0.7,0.6,"
                  "0.5,0.4,0.3,0.25,0.2,0.15,0.12,0.1,0.07,0.05,0.03,0.02,0.01"}


positive = crossbench.positive


def parse_args(argv):
    p = argparse.ArgumentParser(prog="scripts/bench --mpi", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the quick run (default)")
    g.add_argument("--full", action="store_true", help="more rounds, grains and work")
    p.add_argument("--rounds", type=positive(int), default=None)
    p.add_argument("--ranks", type=positive(int), default=2)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--timeout", type=positive(float), default=300)
    p.add_argument("--out", default=None)
    p.add_argument("--build", default=os.path.join(ROOT, "build", "bench"))
    p.add_argument("--replot", metavar="DIR",
                   help="draw DIR/mpi.png (and plot.gp) again from DIR/mpi.csv, and run nothing")
    p.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.rounds is not None and a.rounds > 64:
        p.error("--rounds: at most 64")
    if a.ranks > 64:
        p.error("--ranks: at most 64")
    return a

def value(v):
    """A RESULT field's value: a number where it parses as one."""
    try:
        return float(v) if any(c in v for c in ".e") or not v.lstrip("-").isdigit() else int(v)
    except ValueError:
        return v


def parse_results(text):
    """RESULT lines as dicts (numbers where they parse) and NOTE lines."""
    rows, notes = [], []
    for line in text.splitlines():
        if line.startswith("RESULT "):
            d = {}
            for item in line.split()[1:]:
                k, _, v = item.partition("=")
                d[k] = value(v)
            rows.append(d)
        elif line.startswith("NOTE "):
            notes.append(line[5:])
    return rows, notes


class Launcher:
    """mpirun with the binding the machine allows."""

    def __init__(self, ranks):
        self.cpus = len(os.sched_getaffinity(0))
        self.ranks = ranks
        self.root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        # Cores the runs use: one per rank when bound, all of them otherwise.
        self.cores = min(ranks, self.cpus)
        if ranks <= self.cpus:
            self.bind = ["--bind-to", "core", "--map-by", "core"]
            self.binding = ("`mpirun --bind-to core --map-by core`: each of the %d ranks bound to "
                            "one core of its own (%d usable CPUs), so each rank's pool and "
                            "OpenMP team have one CPU" % (ranks, self.cpus))
        else:
            self.bind = ["--oversubscribe", "--bind-to", "none"]
            self.binding = ("%d ranks on %d CPUs: `mpirun --oversubscribe --bind-to none`, "
                            "ranks not bound (more ranks than cores)" % (ranks, self.cpus))

    def cmd(self, prog, args, np=None, mca=None):
        np = np or self.ranks
        bind = ["--bind-to", "core"] if np == 1 else self.bind
        extra = ["--mca", "osc", mca] if mca else []
        return ["mpirun", "-np", str(np)] + self.root + bind + extra + [prog] + args


def build_runs(progs, launch, params, ipu, have_omp):
    """Every run of one round: (experiment, label, command)."""
    farm = ["--n", str(params["farm_n"]), "--work-ms", str(params["farm_ms"]), "--ipu", "%.3f" % ipu]
    width = launch.ranks  # ranks x one core each (one column per rank when oversubscribed)
    metg = ["--grains-us", params["grains"], "--budget-us", str(params["budget_us"]),
            "--ipu", "%.3f" % ipu, "--width", str(width)]
    grab = ["--grabs", str(params["grabs"]), "--inner", str(params["inner"])]
    runs = []
    if launch.ranks >= 2:
        runs.append(("grab", "default", launch.cmd(progs["grab"], grab)))
        for osc in OSC_FORCED:
            runs.append(("grab", "osc-" + osc, launch.cmd(progs["grab"], grab, mca=osc)))
    runs.append(("farm", "serial", launch.cmd(progs["up"], ["farm", "--peer", "serial"] + farm, np=1)))
    for peer in FARM_PEERS:
        if peer == "omp":
            if have_omp:
                runs.append(("farm", peer, launch.cmd(progs["omp"], ["farm", "--peer", peer] + farm)))
            continue
        runs.append(("farm", peer, launch.cmd(progs["up"], ["farm", "--peer", peer] + farm)))
    if launch.ranks >= 2:
        for osc in FARM_OSC:
            for peer in ("up-guided", "up-dynamic"):
                runs.append(("farm", "%s/osc-%s" % (peer, osc),
                             launch.cmd(progs["up"], ["farm", "--peer", peer] + farm, mca=osc)))
    for pattern in ("trivial", "stencil"):
        pat = ["--pattern", pattern]
        runs.append(("metg", "serial/" + pattern,
                     launch.cmd(progs["up"], ["metg", "--peer", "serial"] + pat + metg, np=1)))
        for peer in METG_PEERS:
            if peer.startswith("omp") and not have_omp:
                continue
            prog = progs["omp"] if peer.startswith("omp") else progs["up"]
            runs.append(("metg", "%s/%s" % (peer, pattern),
                         launch.cmd(prog, ["metg", "--peer", peer] + pat + metg)))
    return runs, width


def cpu_busy_s():
    """CPU time the whole machine spent busy so far (/proc/stat), seconds."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def calibrate(progs, launch, log):
    """Iterations per us of the busy loop: the highest of three medians
    (another process on the core only ever lowers it)."""
    vals = []
    for _ in range(3):
        cmd = launch.cmd(progs["up"], ["calibrate"], np=1)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        log.write("$ %s\n%s%s\n" % (" ".join(cmd), r.stdout, r.stderr))
        for row in parse_results(r.stdout)[0]:
            if row.get("exp") == "calibrate":
                vals.append(float(row["ipu"]))
    if not vals:
        raise RuntimeError("calibration failed; see raw.log")
    return max(vals), vals

def replot(out):
    """mpi.png again from out/mpi.csv, whose rows are the runs' RESULT
    lines (an empty cell: a field that line did not have), with the
    cores and rounds of out/meta.json; nothing else changes."""
    path = os.path.join(out, "mpi.csv")
    if not os.path.isfile(path):
        sys.stderr.write("mpi_run: no %s\n" % path)
        return 1
    with open(path, newline="") as f:
        rows = [{k: value(v) for k, v in r.items() if v != ""} for r in csv.DictReader(f)]
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    cores = min(meta["run"]["ranks"], meta.get("cores_usable") or meta["run"]["ranks"])
    err = plot(out, rows, cores, meta["run"]["rounds"])
    print("mpi_run: %s" % (err or os.path.join(out, "mpi.png")))
    return 1 if err else 0


def main(argv):
    a = parse_args(argv)
    if a.check_args:
        return 0
    if a.replot:
        return replot(a.replot)
    params = dict(FULL if a.full else QUICK)
    a.rounds = a.rounds or params["rounds"]
    exe = os.path.join(a.build, "experiments", "mpi")
    progs = {"grab": os.path.join(exe, "mpi_grab"), "up": os.path.join(exe, "mpi_up"),
             "omp": os.path.join(exe, "mpi_omp")}
    for k in ("grab", "up"):
        if not os.access(progs[k], os.X_OK):
            sys.stderr.write("mpi_run: %s is not built (the MPI mode needs MPI: "
                             "libopenmpi-dev)\n" % progs[k])
            return 1
    if not shutil.which("mpirun"):
        sys.stderr.write("mpi_run: mpirun not found\n")
        return 1
    have_omp = os.access(progs["omp"], os.X_OK)
    launch = Launcher(a.ranks)
    seed = a.seed if a.seed is not None else int(time.time())
    mpi_version = (subprocess.run(["mpirun", "--version"], capture_output=True, text=True)
                   .stdout.splitlines() or ["?"])[0]
    meta = bench_meta.start("scripts/bench --mpi", "scripts/bench --mpi " + " ".join(argv),
                            os.path.abspath(a.build),
                            {"rounds": a.rounds, "ranks": a.ranks, "seed": seed,
                             "mode": "full" if a.full else "quick", "binding": launch.binding,
                             "mpi": mpi_version, "params": params,
                             "mpi_omp": "built" if have_omp else "left out (no OpenMP)"})
    out, machine = crossbench.results_folder(meta, "-mpi", a.out)
    t_start = time.time()
    rows, notes, failures, disturbed = [], [], [], []
    with open(os.path.join(out, "raw.log"), "w") as log:
        ipu, ipus = calibrate(progs, launch, log)
        meta["run"]["iters_per_us"] = ipu
        runs, width = build_runs(progs, launch, params, ipu, have_omp)
        meta["run"]["width"] = width
        prog = crossbench.Progress(len(runs) * a.rounds)
        for rnd in range(a.rounds):
            order = list(runs)
            random.Random(seed * 1000 + rnd).shuffle(order)
            for exp, label, cmd in order:
                prog.show("mpi_run: round %d/%d %s %s" % (rnd + 1, a.rounds, exp, label))
                env = dict(os.environ)
                env.pop("OMP_NUM_THREADS", None)
                busy0, own0, wall0 = cpu_busy_s(), children_cpu_s(), time.time()
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                       timeout=a.timeout)
                    rc, stdout, stderr = r.returncode, r.stdout, r.stderr
                except subprocess.TimeoutExpired as e:
                    rc, stdout, stderr = "timeout", e.stdout or "", e.stderr or ""
                    if isinstance(stdout, bytes):
                        stdout, stderr = stdout.decode(), stderr.decode() if stderr else ""
                busy1, own1, wall = cpu_busy_s(), children_cpu_s(), time.time() - wall0
                others = busy1 - busy0 - (own1 - own0) if busy0 is not None else None
                disturbed.append((exp, label, rnd + 1, wall, others))
                log.write("$ %s\n# round %d, %s %s, status %s, %.2f s, other processes' CPU "
                          "%s s\n%s%s\n" % (" ".join(cmd), rnd + 1, exp, label, rc, wall,
                                             fmt(others, "%.2f"), stdout, stderr))
                log.flush()
                prog.done += 1
                if rc != 0:
                    failures.append("%s %s (round %d, status %s)" % (exp, label, rnd + 1, rc))
                    continue
                res, nts = parse_results(stdout)
                notes += nts
                for row in res:
                    row["round"] = rnd + 1
                    row["label"] = label
                    row["run_wall_s"] = round(wall, 3)
                    row["others_cpu_s"] = round(others, 3) if others is not None else ""
                    rows.append(row)
        prog.end()
    keys = ["round", "exp", "label"]
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(out, "mpi.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    meta = bench_meta.end(meta)
    text, metg, farm_eff, effs, metg_vals = write_summary(
        out, meta, a, params, launch, width, ipu, ipus, rows, notes, machine, seed, have_omp,
        time.time() - t_start, failures, disturbed)
    with open(os.path.join(out, "metg.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["pattern", "peer", "grain_us", "elapsed_ns_median", "tasks",
                    "task_alone_ns", "efficiency", "granularity_us"])
        for pattern, peers in metg.items():
            for peer, pts in peers.items():
                for p in pts:
                    w.writerow([pattern, peer, p[0], p[1], p[2], p[3], p[4], p[5]])
    note = plot(out, rows, launch.cores, a.rounds)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
        f.write("## Plot\n\n%s\n" % (note or "![sweep and farm](mpi.png)"))
        if not have_omp:
            f.write("\nMPI + OpenMP left out: this build has no OpenMP for its compiler.\n")
    meta["run"]["farm_efficiency"] = effs
    meta["run"]["metg_us"] = {"%s/%s" % k: v for k, v in metg_vals.items()}
    bench_meta.write(meta, os.path.join(out, "meta.json"))
    print("mpi_run: results in %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
