#!/usr/bin/env python3
"""The cross-library benchmark driver (Python 3 standard library only).

Runs every (peer, workload, submitters, completion mode) cell through the
runner executables built under experiments/ (one process per run), in a
fresh random order in every round, after one calibration round that fixes
each cell's task count for runs of about --time seconds (one calibration
serves both completion modes: striped, a counter per thread, and shared,
one latch every task decrements; --completion picks one). Writes the raw log, runs.csv and
runs.json (every run plus the machine's metadata) and meta.json (the
metadata alone, in the format scripts/bench --par writes too: see
bench_meta.py) into experiments/results/<machine>/<timestamp>/ (the log as
raw.log.gz), then the tables and plots (scripts/bench_report.py).

Usage: scripts/bench [options]   (scripts/bench --help lists every mode and option)
"""
import argparse
import datetime
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, HERE)
import bench_meta  # noqa: E402
import bench_report  # noqa: E402

WORKLOADS = ["sleep-1us", "sleep-50ms", "sleep-1us-wait", "sleep-50ms-wait", "sha256-1k",
             "aes-cbc-1k", "aes-cbc-8k", "crc32-64", "bytesum-4k", "mixed", "mutex"]
# Every workload, the two wait rows included (docs/benchmarks.md).
DEFAULT_WORKLOADS = list(WORKLOADS)
# Keep in step with scripts/bench's lists (its --help) and PEER_ORDER in bench_report.py.
RUNNERS = ["bench_c", "bench_omp_gcc", "bench_omp_clang", "bench_tbb", "bench_go",
           "bench_go_ultrapool"]
# The runner that offers each peer (the left-out messages name the peer).
PEER_RUNNER = {"ultrapool": "bench_c", "glib": "bench_c", "textbook": "bench_c",
               "thread": "bench_c", "thread-sem": "bench_c", "loop": "bench_c", "inline": "bench_c",
               "omp-gomp-single": "bench_omp_gcc", "omp-gomp-team": "bench_omp_gcc",
               "omp-llvm-single": "bench_omp_clang", "omp-llvm-team": "bench_omp_clang",
               "tbb": "bench_tbb", "goroutines": "bench_go", "go-ultrapool": "go-ultrapool"}
GO_LIBRARY = "github.com/maurice2k/ultrapool/v2"
# How the runners count finished tasks (--completion; docs/benchmarks.md,
# "Counting finished tasks"), in the tables' order. Every run measures both
# unless --completion names one.
COMPLETIONS = bench_report.COMPLETIONS


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Cross-library benchmark: ultrapool against OpenMP (libgomp, libomp), "
                    "oneTBB, GLib, threads, a textbook pool and goroutines. "
                    "scripts/bench --help lists every mode, workload and peer.")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--time", type=float, default=0.2,
                    help="seconds per run, which fixes each cell's task count (default 0.2)")
    ap.add_argument("--submitters", default="2,100",
                    help="submitter threads S, a comma list (default 2,100; the Go tables use 100)")
    ap.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                    help="comma list of workloads (default: %s; known: %s)"
                    % (",".join(DEFAULT_WORKLOADS), ",".join(WORKLOADS)))
    ap.add_argument("--peers", default="",
                    help="comma list of peers (default: every peer built; inline and loop always run)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the run order")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "bench"),
                    help="the CMake build folder with experiments/ (default build/bench)")
    ap.add_argument("--out", default=None,
                    help="results folder (default experiments/results/<machine>/<timestamp>)")
    ap.add_argument("--full", action="store_true",
                    help="the full run: S=1,2,100, 5 rounds of 1 s")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds before a run is killed (default 120)")
    ap.add_argument("--completion", choices=COMPLETIONS, default=None,
                    help="how finished tasks are counted: striped (a counter per thread, "
                         "not shared) or shared (one latch every task decrements); "
                         "default both, interleaved")
    ap.add_argument("--hog", type=int, nargs="?", const=-1, default=0, metavar="N",
                    help="N busy processes beside the whole run (no N: one per usable CPU), "
                         "to see what the peers do on a loaded node (default none)")
    ap.add_argument("--check-args", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.full:
        a.rounds, a.time, a.submitters = max(a.rounds, 5), max(a.time, 1.0), "1,2,100"
    a.submitters = [int(x) for x in a.submitters.split(",") if x]
    a.workloads = [w for w in a.workloads.split(",") if w]
    unknown = [w for w in a.workloads if w not in WORKLOADS]
    if unknown:
        ap.error("unknown workloads %s (known: %s)" % (",".join(unknown), ",".join(WORKLOADS)))
    if a.hog < -1 or a.hog > 1024:
        ap.error("--hog must be 0 to 1024 busy processes, or given without a number")
    if not a.submitters or min(a.submitters) < 1 or a.rounds < 1 or a.time <= 0 or a.timeout <= 0:
        ap.error("submitters, rounds, time and timeout must be positive")
    a.peers = [p for p in a.peers.split(",") if p]
    unknown = [p for p in a.peers if p not in bench_report.PEER_ORDER]
    if unknown:
        ap.error("unknown peers %s (known: %s)" % (",".join(unknown), ",".join(bench_report.PEER_ORDER)))
    a.completions = [a.completion] if a.completion else list(COMPLETIONS)
    a.build = os.path.abspath(a.build)
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 40)
    return a


def run_cmd(cmd, timeout=30, env=None):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return r.returncode, r.stdout, r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, "", str(e)


def build_go_library(build_dir, log):
    """Builds the Go library's runner when its module can be fetched here.
    Returns None, or the reason it was left out."""
    go = shutil.which("go")
    if not go:
        return "no Go toolchain"
    src = os.path.join(ROOT, "experiments", "go")
    work = os.path.join(build_dir, "go-ultrapool")
    exe = os.path.join(build_dir, "bench_go_ultrapool")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(src, work)
    env = dict(os.environ, GOCACHE=os.path.join(build_dir, "go-cache"),
               GOPATH=os.path.join(build_dir, "go-path"), GOFLAGS="-mod=mod",
               GOTOOLCHAIN="local")
    rc, out, err = _in_dir(work, [go, "get", GO_LIBRARY + "@latest"], env)
    log.write("$ go get %s@latest\n%s%s\n" % (GO_LIBRARY, out, err))
    if rc != 0:
        reason = (err.strip().splitlines() or ["failed"])[0]
        if "dial tcp" in reason or "no such host" in reason:
            reason = "no network route to the module proxy"
        return "its module could not be fetched (%s)" % re.sub(r"\S+://\S+", "<url>", reason)
    rc, out, err = _in_dir(work, [go, "build", "-tags", "goultrapool", "-o", exe, "."], env)
    log.write("$ go build -tags goultrapool\n%s%s\n" % (out, err))
    if rc != 0:
        return "it did not build against the fetched module: %s" % (err.strip().splitlines() or ["?"])[-1]
    return None


def _in_dir(d, cmd, env):
    try:
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=180, env=env)
        return r.returncode, r.stdout, r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, "", str(e)


def discover(build_dir, log):
    """The runners present and the peers each offers (from --list)."""
    exp = os.path.join(build_dir, "experiments")
    peers, runners, missing = {}, {}, {}
    go_reason = build_go_library(exp, log) if os.path.isdir(exp) else "no build"
    for r in RUNNERS:
        path = os.path.join(exp, r)
        if not os.access(path, os.X_OK):
            if r == "bench_go_ultrapool":
                missing["go-ultrapool"] = go_reason or "not built"
            else:
                missing[r] = "not built (its compiler or library is missing)"
            continue
        rc, out, err = run_cmd([path, "--list"])
        if rc != 0:
            missing[r] = "--list failed: " + err.strip()
            continue
        for line in out.splitlines():
            kind, _, body = line.partition(" ")
            if kind == "PEER":
                p = json.loads(body)
                p["path"] = path
                peers[p["peer"]] = p
            elif kind == "RUNNER":
                runners[r] = json.loads(body)
    return peers, runners, missing


def metadata(args, runners, peers, missing, command):
    """bench_meta's common metadata (the keys meta.json has for both
    front-ends), plus this driver's settings under "run" and, for
    bench_report and older readers, at the top level too."""
    any_runner = next(iter(runners.values()), {})
    run = {
        "seed": args.seed, "rounds": args.rounds, "time_per_run_s": args.time,
        "submitters": args.submitters, "workloads": args.workloads,
        "completion": args.completions,
        "peers": {n: {"runner": p["runner"], "about": p["about"], "version": p["version"],
                      "s_independent": p["s_independent"]} for n, p in peers.items()},
        "left_out": missing, "hog": args.hog,
        "papi": any_runner.get("papi"), "openssl": any_runner.get("openssl"),
        "zlib": any_runner.get("zlib"), "likwid_built": any_runner.get("likwid"),
    }
    meta = bench_meta.start("scripts/bench", command, args.build, run)
    meta.update(run)
    return meta


def common_metadata(meta):
    """meta without the top-level copies of the run's settings: meta.json."""
    return {k: v for k, v in meta.items() if k not in meta["run"] or k == "run"}


def machine_name(meta):
    model = re.sub(r"\(.*?\)|processor|cpu|@.*", "", meta["cpu_model"] or "cpu", flags=re.I)
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "cpu"
    return "%s-%dcpu" % (slug, meta["cores_usable"] or 0)


def positive(kind):
    """An argparse type: a number of `kind` above zero, with a message that
    names the value otherwise (the experiment drivers' options)."""
    def parse(s):
        try:
            v = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError("not a number: %r" % s)
        if v <= 0:
            raise argparse.ArgumentTypeError("must be > 0: %r" % s)
        return v
    return parse


def results_folder(meta, suffix, out=None):
    """The folder of a run that is not the cross benchmark's own
    (experiments/results/<UP_MACHINE or machine>/<UTC timestamp><suffix>,
    or out), made, with meta.json written into it; meta["run"]["machine"]
    records the machine name."""
    import bench_meta
    machine = os.environ.get("UP_MACHINE") or machine_name(meta)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = out or os.path.join(ROOT, "experiments", "results", machine, stamp + suffix)
    os.makedirs(out, exist_ok=True)
    meta["run"]["machine"] = machine
    bench_meta.write(meta, os.path.join(out, "meta.json"))
    return out, machine


def fmt_eta(s):
    s = int(max(0, s))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


class Progress:
    def __init__(self, total):
        self.total, self.done, self.t0 = total, 0, time.time()
        self.tty = sys.stderr.isatty()

    def show(self, what):
        el = time.time() - self.t0
        eta = el / self.done * (self.total - self.done) if self.done else 0
        line = "%s  [%d/%d]  ETA %s" % (what, self.done + 1, self.total, fmt_eta(eta))
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def end(self):
        if self.tty:
            sys.stderr.write("\r\033[K")
        sys.stderr.write("done in %s\n" % fmt_eta(time.time() - self.t0))


def sleep_kind(workload, rec):
    """How a sleeping workload's tasks slept, from what the runner said:
    "waits" (through the runtime's wait, which parked the task: time.Sleep,
    or up_sleep_ns with parked tasks resumed), "waits, thread held"
    (up_sleep_ns was called but no task parked: it blocked its worker),
    "blocks" (clock_nanosleep); "" for workloads that do not sleep."""
    if not workload.startswith("sleep-"):
        return ""
    if not rec.get("wait"):
        return "blocks"
    return "waits, thread held" if rec.get("tasks_resumed") == 0 else "waits"


def one_run(peer, workload, s, completion, extra, log, timeout):
    cmd = [peer["path"], "--peer", peer["peer"], "--workload", workload, "--submitters", str(s),
           "--completion", completion] + extra
    t0 = time.time()
    rc, out, err = run_cmd(cmd, timeout=timeout)
    log.write("$ %s\n%s%s(exit %d, %.2f s)\n" % (" ".join(cmd[1:]), out, err, rc, time.time() - t0))
    log.flush()
    # A PEERSTATS line (the ultrapool peer's, before its result line) adds
    # the peer's own counters to the record.
    peer_stats = {}
    for line in out.splitlines():
        kind, _, body = line.partition(" ")
        if kind == "PEERSTATS":
            peer_stats.update(json.loads(body))
        elif kind in ("RESULT", "CALIBRATE"):
            rec = json.loads(body)
            rec.update(peer_stats)
            rec["exit"] = rc
            rec["sleep"] = sleep_kind(workload, rec)
            return rec
    return {"exit": rc, "check": "no result line (%s)" % (err.strip().splitlines() or ["crashed"])[-1]}


def start_hogs(n):
    """n processes that keep a CPU busy each, beside the run (--hog)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_hogs(hogs):
    for h in hogs:
        h.kill()
    for h in hogs:
        h.wait()


def completion_check(rec, completion):
    """A run whose runner did not say it counted as asked fails."""
    if rec.get("check") == "ok" and rec.get("completion") != completion:
        rec["check"] = "the runner counted completions %s, not %s" % (
            rec.get("completion") or "without saying how", completion)


def run_cells(args, cells, peers, rng, progress, log):
    """The calibration round, then the measured rounds: each cell's task
    count, and every run's record. A cell is (workload, peer, S, completion
    mode). One calibration serves every mode of a (workload, peer, S): it
    runs in the first mode asked for (striped when both), and each mode's
    runs then do the same number of tasks."""
    tasks, runs = {}, []
    order = list(dict.fromkeys(c[:3] for c in cells))
    rng.shuffle(order)
    first = args.completions[0]
    for c in order:
        w, name, s = c
        progress.show("calibrate  %-11s %-16s S=%-3d %s" % (w, name, s, first))
        rec = one_run(peers[name], w, s, first, ["--calibrate", str(args.time)], log, args.timeout)
        tasks[c] = rec.get("tasks") or 0
        progress.done += 1
    for r in range(args.rounds):
        order = cells[:]
        rng.shuffle(order)
        for k, c in enumerate(order):
            w, name, s, mode = c
            progress.show("round %d/%d  %-11s %-16s S=%-3d %-7s" % (
                r + 1, args.rounds, w, name, s, mode))
            n = tasks[c[:3]]
            if n:
                rec = one_run(peers[name], w, s, mode, ["--tasks", str(n)], log, args.timeout)
                completion_check(rec, mode)
            else:
                rec = {"exit": -1, "check": "calibration failed"}
            rec.update({"round": r, "position": k, "peer": name, "workload": w, "submitters": s,
                        "completion": mode, "s_independent": peers[name]["s_independent"]})
            rec.setdefault("tasks", n)
            runs.append(rec)
            progress.done += 1
    return tasks, runs


def main(argv):
    args = parse_args(argv)
    # scripts/bench adds --build; the command a user types is the rest.
    shown = [a for i, a in enumerate(argv) if a != "--build" and (i == 0 or argv[i - 1] != "--build")]
    command = " ".join(["scripts/bench"] + shown)
    tmp_log = []

    class Buf:
        def write(self, s):
            tmp_log.append(s)

        def flush(self):
            pass

    if args.check_args:
        return 0
    peers, runners, missing = discover(args.build, Buf())
    if not peers:
        sys.exit("bench: no runner found under %s/experiments (build first)" % args.build)
    # Every peer not built here is left out with a line saying why: the
    # configure step's reason (a library not found) when it gave one.
    cmake_left = bench_meta.build_info(args.build).get("left_out") or {}
    left = {}
    for p in bench_report.PEER_ORDER:
        if p not in peers and (not args.peers or p in args.peers):
            left[p] = cmake_left.get(p) or missing.get(PEER_RUNNER.get(p, ""), "not built")
    missing = left
    if args.peers:
        peers = {n: p for n, p in peers.items() if n in args.peers or n in bench_report.REFERENCES}
    meta = metadata(args, runners, peers, missing, command)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or os.path.join(ROOT, "experiments", "results", machine_name(meta), stamp)
    os.makedirs(out, exist_ok=True)
    log = open(os.path.join(out, "raw.log"), "w")
    log.write("# %s\n# %s\n" % (command, json.dumps({k: meta[k] for k in ("date", "seed", "git")})))
    log.write("".join(tmp_log))
    for what, why in sorted(missing.items()):
        print("bench: peer %s left out: %s" % (what, why), file=sys.stderr)

    cells = []
    for w in args.workloads:
        for name, p in sorted(peers.items()):
            for s in ([1] if p["s_independent"] else args.submitters):
                for mode in args.completions:
                    cells.append((w, name, s, mode))
    rng = random.Random(args.seed)
    calibrations = len(dict.fromkeys(c[:3] for c in cells))
    progress = Progress(calibrations + len(cells) * args.rounds)
    print("bench: %d cells (completion %s), %d rounds of about %.2f s runs, seed %d -> %s" % (
        len(cells), " and ".join(args.completions), args.rounds, args.time, args.seed,
        os.path.relpath(out, ROOT)), file=sys.stderr)

    if args.hog < 0:
        args.hog = meta["hog"] = meta["run"]["hog"] = meta["cores_usable"] or 1
    hogs = start_hogs(args.hog)
    try:
        tasks, runs = run_cells(args, cells, peers, rng, progress, log)
    finally:
        stop_hogs(hogs)
    progress.end()
    log.close()

    bench_meta.end(meta)
    bench_meta.write(common_metadata(meta), os.path.join(out, "meta.json"))
    with open(os.path.join(out, "runs.json"), "w") as f:
        json.dump({"metadata": meta, "runs": runs}, f, separators=(",", ":"))
    # The raw log is kept beside the tables, compressed: it is mostly the
    # result lines again, plus every command and the runners' messages.
    raw = os.path.join(out, "raw.log")
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    bench_report.write_runs_csv(runs, os.path.join(out, "runs.csv"))
    failed = [r for r in runs if r.get("check") != "ok" or r.get("exit") != 0]
    for r in failed[:10]:
        print("bench: failed run: %s %s S=%s %s round %s: %s" % (
            r["peer"], r["workload"], r["submitters"], r["completion"], r["round"], r.get("check")),
            file=sys.stderr)
    print(bench_report.report(out))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
