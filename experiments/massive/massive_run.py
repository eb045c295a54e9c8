#!/usr/bin/env python3
"""The massive-waiting experiment's driver (scripts/bench --massive; Python 3
standard library only).

Runs, in one go, experiments/massive's program in each of its modes
(ultrapool stackless, ultrapool stackful when its calls park, a pthread per
task) and the goroutine program beside it, at each N of the list, --repeats
times (so that the plot can show the spread), each time every N's modes in
a fresh random order, one process per run. Writes into the results folder
(experiments/results/<machine>/<UTC timestamp>-massive/):

    raw.log       every run's output, as printed
    massive.csv   one row per run of a (mode, N) (column run; a mode that
                  cannot run at that N has one row, status "not run"):
                  bytes per waiting task, rates, the release and drain
                  times, the worst ticker delay, the lost, duplicated and
                  panicked counts, and the status
    summary.md    the same as a table, with the seed's figures beside it
    meta.json     the machine and build (scripts/bench_meta.py)
    massive.png   bytes per task and launch rate against N, medians with
                  the runs' spread (massive_plot.py)

usage: massive_run.py --build DIR [--n-list LIST | --n-max N] [--full]
                      [--modes LIST] [--repeats R] [--out DIR] [--timeout SEC]
                      [--seed S]
       massive_run.py --check-args [OPTIONS]   (check the options, run nothing)
"""
import argparse
import csv
import json
import math
import os
import random
import shlex
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_meta  # noqa: E402
import crossbench  # noqa: E402
import massive_plot  # noqa: E402

MODES = ["stackless", "stackful", "pthread", "goroutines"]
# A thread per task meets the machine's thread-id limits (kernel.pid_max,
# 32768 by default, for all processes together) in the tens of thousands,
# and the program stops a reserve short of them, so larger N would only
# repeat the same stop; the pthread mode runs at N up to this.
PTHREAD_MAX_N = 100000
# Only the stackless mode can hope to hold 1e8 on a machine like this one.
BIG_N = 10 ** 8
COLUMNS = ["mode", "n", "run", "launched", "bytes_per_task", "kernel_bytes_per_task",
           "launch_per_s", "start_per_s", "exit_per_s", "launch_s", "release_s", "drain_s", "worst_tick_ms",
           "worst_tick_launch_ms", "worst_tick_drain_ms", "ticks", "total_s", "lost", "duplicated", "panicked", "peak_rss_bytes", "status",
           "note"]


def parse_count(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return int(v) if v >= 1 and v == math.floor(v) and v <= 2 ** 53 else None


def n_label(n):
    e = int(round(math.log10(n)))
    return "1e%d" % e if 10 ** e == n else "{:,}".format(n)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="scripts/bench --massive",
                                 description="N waiting tasks: ultrapool stackless and stackful, "
                                 "a pthread per task, goroutines")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "bench"),
                    help="the build folder with experiments/massive [build/bench]")
    ap.add_argument("--n-list", help="comma list of N, e.g. 1e5,1e6,1e7 [1e5,1e6,1e7]")
    ap.add_argument("--n-max", help="the powers of ten from 1e5 up to this, e.g. 1e8")
    ap.add_argument("--full", action="store_true", help="add 1e8 (stackless only)")
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma list of %s [all]" % ",".join(MODES))
    ap.add_argument("--out", help="results folder "
                    "[experiments/results/<machine>/<UTC timestamp>-massive]")
    ap.add_argument("--repeats", type=crossbench.positive(int), default=3,
                    help="runs of every (mode, N), for the spread the plot shows [3]")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before a run is killed [900]")
    ap.add_argument("--seed", type=int, help="seed of the run order [drawn, recorded]")
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.n_list and a.n_max:
        ap.error("--n-list and --n-max: one or the other")
    if a.n_list:
        ns = [parse_count(x) for x in a.n_list.split(",")]
        if not ns or None in ns:
            ap.error("--n-list: whole numbers >= 1 such as 1e5,1e6, not '%s'" % a.n_list)
    elif a.n_max:
        top = parse_count(a.n_max)
        if top is None or top < 10 ** 5:
            ap.error("--n-max: a whole number >= 1e5, not '%s'" % a.n_max)
        ns = [10 ** e for e in range(5, 17) if 10 ** e <= top]
    else:
        ns = [10 ** 5, 10 ** 6, 10 ** 7]
    if a.full and BIG_N not in ns:
        ns.append(BIG_N)
    a.ns = sorted(set(ns))
    a.mode_list = [m for m in a.modes.split(",") if m]
    for m in a.mode_list:
        if m not in MODES:
            ap.error("--modes: unknown mode '%s' (known: %s)" % (m, ",".join(MODES)))
    if not a.mode_list:
        ap.error("--modes: the list is empty")
    if a.timeout <= 0:
        ap.error("--timeout: seconds > 0")
    return a


def parse_result(text):
    """The key=value pairs of the RESULT line, or None."""
    for line in reversed(text.splitlines()):
        if line.startswith("RESULT "):
            return dict(kv.split("=", 1) for kv in shlex.split(line[7:]) if "=" in kv)
    return None


def run_one(cmd, timeout, log):
    log.write("$ %s\n" % " ".join(cmd))
    log.flush()
    start = time.monotonic()
    try:
        # Each run in a session of its own: a process with tens of
        # thousands of threads then stays apart from the caller's terminal
        # and job control.
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           start_new_session=True)
        out, rc, err = p.stdout + p.stderr, p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        out += "\n(killed after %.0f s)\n" % timeout
        rc, err = None, ""
    log.write(out)
    log.write("(exit status %s, %.1f s)\n\n" % (rc, time.monotonic() - start))
    log.flush()
    sys.stdout.write(out if rc not in (0, None) else "".join(
        l + "\n" for l in out.splitlines() if not l.startswith("RESULT ")))
    sys.stdout.flush()
    return rc, out, err


def row_for(mode, n, rc, out, err):
    row = {c: "" for c in COLUMNS}
    row.update(mode=mode, n=n)
    res = parse_result(out)
    if rc is None:
        row.update(status="timeout", note="killed by the driver's --timeout")
    elif rc == 77 or (res and res.get("skipped") == "1"):
        row.update(status="skipped", note=(res or {}).get("stop", "the mode cannot run here"))
    elif res is None:
        # A refusal (too little memory, a bad option) says why on stderr.
        lines = [l for l in (err or out).splitlines() if l.strip() and "--help" not in l]
        row.update(status="refused" if rc == 2 else "failed",
                   note=" ".join(lines[:3])[:300] if lines else "no output")
    else:
        for c in COLUMNS:
            if c in res:
                row[c] = res[c]
        row["status"] = "ok" if rc == 0 else "failed"
        row["note"] = res.get("stop", "")
    return row


def main(argv):
    a = parse_args(argv)
    if a.check_args:
        return 0
    exe = os.path.join(a.build, "experiments", "massive", "massive")
    goexe = os.path.join(a.build, "experiments", "massive", "massive_go")
    if not os.access(exe, os.X_OK):
        sys.stderr.write("massive_run: %s is not built (cmake --build %s --target massive_all)\n"
                         % (exe, a.build))
        return 1
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(2 ** 31)
    rng = random.Random(seed)
    meta = bench_meta.start("scripts/bench --massive", "scripts/bench --massive " + " ".join(argv),
                            os.path.abspath(a.build),
                            {"ns": a.ns, "modes": a.mode_list, "seed": seed, "repeats": a.repeats})
    out, machine = crossbench.results_folder(meta, "-massive", a.out)
    rows = []
    with open(os.path.join(out, "raw.log"), "w") as log:
        probe = subprocess.run([exe, "--probe"], capture_output=True, text=True).stdout.strip()
        log.write("$ %s --probe\n%s\n\n" % (exe, probe))
        parks = probe.startswith("stackful: parks")
        print(probe)
        for n in a.ns:
            todo = []
            for m in a.mode_list:
                row = {c: "" for c in COLUMNS}
                row.update(mode=m, n=n, status="not run")
                if m == "stackful" and not parks:
                    row["note"] = "stackful calls block their thread in this build (%s)" % probe
                elif m == "stackful" and n > 10 ** 7:
                    row["note"] = "above 1e7 only the stackless mode runs"
                elif m == "pthread" and n > PTHREAD_MAX_N:
                    row["note"] = ("a thread per task stops below 1e5, at the thread-id "
                                   "limits less the reserve the program keeps")
                elif m == "goroutines" and not os.access(goexe, os.X_OK):
                    row["note"] = "Go not found when building (Debian: golang-go)"
                elif m == "goroutines" and n > 10 ** 7:
                    row["note"] = "above 1e7 only the stackless mode runs"
                else:
                    todo.append(m)
                    continue
                rows.append(row)
            for run in range(1, a.repeats + 1):
                rng.shuffle(todo)
                for m in todo:
                    cmd = ([goexe, "--n", str(n)] if m == "goroutines"
                           else [exe, "--mode", m, "--n", str(n)])
                    print("\n== %s, N = %s, run %d of %d" % (m, n_label(n), run, a.repeats))
                    rc, text, err = run_one(cmd, a.timeout, log)
                    row = row_for(m, n, rc, text, err)
                    row["run"] = run
                    rows.append(row)
    order = {m: i for i, m in enumerate(MODES)}
    rows.sort(key=lambda r: (order[r["mode"]], int(r["n"]), r["run"] or 0))
    with open(os.path.join(out, "massive.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    bench_meta.write(bench_meta.end(meta), os.path.join(out, "meta.json"))
    write_summary(out, rows, meta, seed, a.repeats)
    err = massive_plot.render(out)
    if err:
        sys.stderr.write("massive_run: no plot: %s\n" % err)
    print()
    with open(os.path.join(out, "summary.md")) as f:
        print(f.read())
    print("results: %s" % os.path.relpath(out, ROOT))
    bad = [r for r in rows if r["status"] in ("failed", "timeout")]
    return 1 if bad else 0


def meminfo_gib(field):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 2 ** 20
    except (OSError, ValueError, IndexError):
        pass
    return None


def fnum(v, fmt="{:,.0f}"):
    try:
        text = fmt.format(float(v))
    except (TypeError, ValueError):
        return ""
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text


def write_summary(out, rows, meta, seed, repeats):
    lines = [
        "# Massive waiting: N tasks on one event",
        "",
        "- command: %s" % meta["command"],
        "- %s" % bench_meta.provenance(out, meta),
        "- load average at start and end: %s / %s" % (meta["load_average"]["start"],
                                                       meta["load_average"]["end"]),
        "- %d run%s of each (mode, N), each time the modes of an N in a random order (seed %d)"
        % (repeats, "" if repeats == 1 else "s", seed),
        "- memory: MemTotal %s GiB" % fnum(meminfo_gib("MemTotal"), "{:.1f}"),
        "",
        "Each run launches N tasks from one thread that all wait on one event, holds them "
        "1.5 s, releases them and waits for every one. Bytes per task: the RSS growth from "
        "before the launch to when all are waiting, over N (the one-byte check slot per task "
        "is not in it). Kernel: KernelStack + PageTables growth, system-wide (other processes "
        "add noise). Launch rate: N over the launch loop's time, from one thread. Drain: from "
        "the release call until the last task ran. Ticker: the worst lateness of a 1 s "
        "periodic task during the launch and hold, and during the drain (0 when no tick fell "
        "in it: a drain shorter than a second may see none).",
        "",
        "| mode | N | run | status | bytes/task | kernel B/task | launches/s | starts/s "
        "| release (s) | drain (s) | exits/s | tick late, launch (ms) | tick late, drain (ms) "
        "| total (s) | lost | dup | panicked |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes, not_run = [], {}
    for r in rows:
        n = int(r["n"])
        status = r["status"]
        if status == "not run":
            not_run.setdefault((r["mode"], r["note"]), []).append(n_label(n))
            continue
        if r["note"]:
            notes.append("- %s, N = %s, run %s (%s): %s" % (r["mode"], n_label(n), r["run"],
                                                            status, r["note"]))
        if status not in ("ok", "failed"):
            lines.append("| %s | %s | %s | %s |%s" % (r["mode"], n_label(n), r["run"], status,
                                                      " |" * 13))
            continue
        launched = int(r["launched"] or 0)
        shown = n_label(n) if launched == n else "%s (%s ran)" % (n_label(n), "{:,}".format(launched))
        lines.append(("| %s " * 17 + "|") % (
            r["mode"], shown, r["run"], status, fnum(r["bytes_per_task"], "{:,.1f}"),
            fnum(r["kernel_bytes_per_task"], "{:,.0f}"), fnum(r["launch_per_s"]),
            fnum(r["start_per_s"]), fnum(r["release_s"], "{:.3f}"), fnum(r["drain_s"], "{:.3f}"),
            fnum(r["exit_per_s"]), fnum(r["worst_tick_launch_ms"], "{:.1f}"),
            fnum(r["worst_tick_drain_ms"], "{:.1f}"), fnum(r["total_s"], "{:.1f}"),
            r["lost"], r["duplicated"], r["panicked"]))
    for (mode, note), ns in not_run.items():
        notes.append("- %s, not run at N = %s: %s" % (mode, ", ".join(ns), note))
    lines += ["", "Notes:", ""] + (notes or ["- none"])
    lines += [
        "",
        "The seed's Go program on a 10-core laptop (64 GiB, Go 1.18): about 3 KiB per goroutine, "
        "270k-770k launches per second, a 1 s ticker up to 1 min 19 s late, and 70 minutes with "
        "heavy swapping for 1e8 goroutines.",
        "",
        "![bytes per task and launch rate against N: medians of the runs, bars from the lowest "
        "to the highest](massive.png)",
        "",
    ]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
