#!/usr/bin/env python3
"""The same gcc -fopenmp binaries on three OpenMP runtimes: GCC's libgomp
(as linked), LLVM's libomp through its GOMP layer (a folder whose
libgomp.so.1 links to libomp.so.5, first on the library path) and
ultrapool's libgomp.so.1.

Rows: fib with every call a task (par_child_gomp, the pragma variant of
the kernels, verified each run) and EPCC syncbench's PARALLEL, BARRIER and
FOR overheads (omp_syncbench). The runtimes are interleaved: each round
runs every runtime once, in an order rotated from round to round, so a
change in the machine's load falls on all of them. The table gives each
runtime's median over the rounds, the spread (min-max of the rounds) and
the ratios to ultrapool.

usage: experiments/omp_same_binary.py [--build DIR] [--rounds N]
           [--threads T] [--fib N] [--innerreps R] [--outer O]
DIR is a build tree with the experiments and the kernels (default: the
first of build/* that has par_child_gomp and omp_syncbench).
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNTIMES = ["libgomp", "libomp", "ultrapool"]


def find_build(arg):
    cands = [arg] if arg else sorted(glob.glob(os.path.join(ROOT, "build", "*")))
    for d in cands:
        child = os.path.join(d, "experiments", "par", "par_child_gomp")
        sync = os.path.join(d, "experiments", "par", "omp_syncbench")
        lib = os.path.join(d, "pragmas", "gomp", "lib", "libgomp.so.1")
        if all(os.path.exists(p) for p in (child, sync, lib)):
            return child, sync, os.path.dirname(lib)
    sys.exit("omp_same_binary: no build with par_child_gomp, omp_syncbench and "
             "pragmas/gomp/lib/libgomp.so.1 (build the targets par_child_gomp, "
             "omp_syncbench and ultrapool_gomp, or give --build)")


def find_libomp():
    pats = ["/usr/lib/x86_64-linux-gnu/libomp.so.5", "/usr/lib/aarch64-linux-gnu/libomp.so.5",
            "/usr/lib/llvm-*/lib/libomp.so.5"]
    for p in pats:
        for f in sorted(glob.glob(p)):
            if os.path.isfile(f):
                return f
    return None


def environments(ours, tmp):
    base = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    envs = {"libgomp": dict(base), "ultrapool": dict(base, LD_LIBRARY_PATH=ours)}
    libomp = find_libomp()
    if libomp:
        d = os.path.join(tmp, "libomp")
        os.mkdir(d)
        os.symlink(libomp, os.path.join(d, "libgomp.so.1"))
        envs["libomp"] = dict(base, LD_LIBRARY_PATH=d)
    else:
        print("libomp.so.5 not found (Debian: apt-get install libomp-dev): its column is left out")
    return envs


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("omp_same_binary: %s failed (exit %d):\n%s%s" %
                 (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def num(x):
    """Three significant digits without an exponent."""
    return "%.0f" % x if abs(x) >= 100 else "%.1f" % x if abs(x) >= 10 else "%.2f" % x


def load():
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fib", type=int, default=27)
    ap.add_argument("--innerreps", type=int, default=1000)
    ap.add_argument("--outer", type=int, default=10)
    a = ap.parse_args()
    child, sync, ours = find_build(a.build)
    rows = ["fib(%d) ms" % a.fib, "PARALLEL us", "BARRIER us", "FOR us"]
    data = {}  # (row, runtime) -> values, one per round
    with tempfile.TemporaryDirectory() as tmp:
        envs = environments(ours, tmp)
        rts = [r for r in RUNTIMES if r in envs]
        print("threads %d, %d rounds, load average %s at the start" % (a.threads, a.rounds, load()))
        for rnd in range(a.rounds):
            k = rnd % len(rts)
            for rt in rts[k:] + rts[:k]:
                out = run([child, "--kernel", "fib", "--n", str(a.fib), "--threads",
                           str(a.threads), "--reps", "3", "--warmup", "1"], envs[rt])
                runs = [fields(l) for l in out.splitlines() if l.startswith("run ")]
                if not runs or any(r.get("verified") != "1" for r in runs):
                    sys.exit("omp_same_binary: fib not verified on %s:\n%s" % (rt, out))
                data.setdefault((rows[0], rt), []).append(
                    statistics.median(int(r["ns"]) for r in runs) / 1e6)
                out = run([sync, "--threads", str(a.threads), "--innerreps", str(a.innerreps),
                           "--outer", str(a.outer)], envs[rt])
                for l in out.splitlines():
                    f = fields(l)
                    if f.get("runtime") != rt:
                        sys.exit("omp_same_binary: the %s leg ran on %s" % (rt, f.get("runtime")))
                    data.setdefault((f["test"] + " us", rt), []).append(
                        float(f["overhead_ns"]) / 1e3)
            print("round %d done (load average %s)" % (rnd + 1, load()), flush=True)
    # The table: median [min-max] per runtime, then ultrapool's ratios.
    others = [r for r in rts if r != "ultrapool"]
    print()
    print("%-12s" % "row" + "".join("%-22s" % r for r in rts) +
          "".join("%-20s" % ("ultrapool/" + o) for o in others))
    for row in rows:
        line = "%-12s" % row
        med = {}
        for rt in rts:
            v = data[(row, rt)]
            med[rt] = statistics.median(v)
            line += "%-22s" % ("%s [%s-%s]" % (num(med[rt]), num(min(v)), num(max(v))))
        line += "".join("%-20s" % ("%.2f" % (med["ultrapool"] / med[o]) if med[o] > 0 else "-")
                        for o in others)
        print(line)
    print("(median of %d rounds [min-max of the rounds]; fib: median of 3 timed runs per round; "
          "syncbench: overhead per construct, median of %d outer repetitions per round)" %
          (a.rounds, a.outer))


if __name__ == "__main__":
    main()
