#!/usr/bin/env python3
"""The run metadata of both benchmark front-ends, in one format (Python 3
standard library only).

scripts/bench (crossbench.py) and scripts/bench --par (bench-par) each write
DIR/meta.json with the same keys: what ran (frontend, command, run), when
(date, date_end), from which tree (git), on what machine (hostname, CPU,
caches, kernel, virtualization, the CPU frequency governor), how loaded the
machine was (load_average at start and end), and how the library was built
(build: build type, compilers and versions, the UP_WITH_* options asked for
and the UP_HAVE_* libraries found, the peers left out).

    bench_meta.py start OUT.json --frontend F --command C --build DIR [--run JSON]
    bench_meta.py end OUT.json
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCHEMA = "ultrapool-bench-meta/1"
# The file experiments/CMakeLists.txt writes at configure time.
BUILD_INFO = "ultrapool-build-info.json"


def run_cmd(cmd, timeout=30):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, "", str(e)


def first_line(cmd):
    rc, out, err = run_cmd(cmd)
    text = (out or err).strip().splitlines()
    return text[0] if rc == 0 and text else None


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def load_average():
    """The 1, 5 and 15 minute load averages, or None where unreadable."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def cpufreq_governor():
    """The scaling governor of every CPU: one name when they agree, else
    "cpu0: a; cpu1: b"; "unreadable" when the files are absent (most VMs,
    macOS) or cannot be read."""
    found = {}
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"):
        cpu = int(re.search(r"cpu(\d+)/cpufreq", path).group(1))
        try:
            with open(path) as f:
                found[cpu] = f.read().strip()
        except OSError:
            pass
    if not found:
        return "unreadable"
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    return "; ".join("cpu%d: %s" % (c, g) for c, g in sorted(found.items()))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return first_line(["sysctl", "-n", "machdep.cpu.brand_string"]) or platform.processor()


def topology():
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("hwloc-ls")
    if not lstopo:
        return ""
    rc, out, _ = run_cmd([lstopo, "--of", "console", "--no-io"])
    return out.strip() if rc == 0 else ""


def git_commit():
    git = first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]) or "unknown"
    dirty = run_cmd(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])[1].strip()
    return git + ("-dirty" if dirty else "")


def read_cache(build_dir):
    """Name -> value of the CMake cache of build_dir (types dropped)."""
    cache = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    cache[m.group(1)] = m.group(2)
    except OSError:
        pass
    return cache


def build_info(build_dir):
    """How the library and the experiments in build_dir were built: from
    the file the configure step wrote, else from the CMake cache (which
    lacks the UP_HAVE_* results and the compilers' versions)."""
    inside = build_dir and os.path.abspath(build_dir).startswith(ROOT + os.sep)
    info = {"dir": os.path.relpath(build_dir, ROOT) if inside else build_dir or None}
    path = os.path.join(build_dir, BUILD_INFO) if build_dir else ""
    if path and os.path.isfile(path):
        with open(path) as f:
            info.update(json.load(f))
        info["source"] = BUILD_INFO
        return info
    cache = read_cache(build_dir) if build_dir else {}
    if not cache:
        info["source"] = "none (no build found)"
        return info
    info.update({
        "source": "CMakeCache.txt",
        "build_type": cache.get("CMAKE_BUILD_TYPE"),
        "c_compiler": {"path": cache.get("CMAKE_C_COMPILER")},
        "options": {k: v for k, v in sorted(cache.items())
                    if re.match(r"^UP_(WITH_|BUILD_|SANITIZE$|WERROR$|PARKER$)", k)},
        "found": None,
    })
    return info


def environment():
    return {k: v for k, v in sorted(os.environ.items())
            if re.match(r"^(OMP_|GOMP_|KMP_|UP_|GOMAXPROCS|TBB_|G_)", k)}


def start(frontend, command, build_dir, run=None):
    """The metadata at the start of a run; end() completes it."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    topo = topology()
    caches = {}
    for level, size in re.findall(r"\b(L\d[di]?) L#\d+ \((\d+[KMG]?B)\)", topo):
        caches.setdefault(level, size)
    return {
        "schema": SCHEMA,
        "frontend": frontend,
        "command": command,
        "date": now_utc(),
        "date_end": None,
        "git": git_commit(),
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "cores_online": os.cpu_count(),
        "cores_usable": usable,
        "caches": caches,
        "topology": topo,
        "kernel": "%s %s %s" % (platform.system(), platform.release(), platform.machine()),
        "virtualization": first_line(["systemd-detect-virt"]) or "unknown",
        "cpufreq_governor": cpufreq_governor(),
        "load_average": {"start": load_average(), "end": None},
        "build": build_info(build_dir),
        "compilers": {c: first_line([c, "--version"]) for c in ("gcc", "g++", "clang")},
        "go": first_line(["go", "version"]),
        "python": platform.python_version(),
        "environment": environment(),
        "run": run or {},
    }


def end(meta):
    meta["date_end"] = now_utc()
    meta["load_average"]["end"] = load_average()
    return meta


def write(meta, path):
    with open(path, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def read_for_plots(results_dir):
    """The metadata of a results folder for its plots: meta.json, else the
    metadata in runs.json, else the fields of an older machine.md."""
    for name in ("meta.json", "runs.json"):
        path = os.path.join(results_dir, name)
        if os.path.isfile(path):
            with open(path) as f:
                data = json.load(f)
            return data.get("metadata", data) if name == "runs.json" else data
    meta = {}
    try:
        with open(os.path.join(results_dir, "machine.md")) as f:
            for line in f:
                m = re.match(r"^- (date|commit|machine): (.*)$", line.strip())
                if m:
                    meta[{"commit": "git", "machine": "kernel"}.get(m.group(1), m.group(1))] = m.group(2)
    except OSError:
        pass
    return meta


def provenance(results_dir, meta=None):
    """One line that says where a plot's numbers come from: the machine
    (the results folder's machine name, the CPU and its count), the date
    and the commit."""
    meta = meta if meta is not None else read_for_plots(results_dir)
    parent = os.path.abspath(results_dir)
    name = os.path.basename(os.path.dirname(parent))
    if os.path.basename(os.path.dirname(os.path.dirname(parent))) != "results":
        name = meta.get("hostname") or ""
    cpu = meta.get("cpu_model")
    if cpu and meta.get("cores_usable"):
        cpu = "%s, %s CPUs" % (cpu, meta["cores_usable"])
    cpu = cpu or meta.get("kernel")
    machine = "%s (%s)" % (name, cpu) if name and cpu else name or cpu or "unknown"
    return "machine %s | %s | commit %s" % (
        machine, meta.get("date", "date unknown"), meta.get("git", "unknown"))


def main(argv):
    ap = argparse.ArgumentParser(prog="bench_meta.py", description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True, metavar="start|end")
    sp = sub.add_parser("start", help="write OUT.json: the metadata at the start of a run")
    sp.add_argument("out", metavar="OUT.json")
    sp.add_argument("--frontend", required=True, help="the front-end's name")
    sp.add_argument("--command", required=True, help="the command line that started the run")
    sp.add_argument("--build", default="", help="the build folder the run uses")
    sp.add_argument("--run", default="{}", help="a JSON object of the front-end's settings")
    ep = sub.add_parser("end", help="complete OUT.json at the end of the run")
    ep.add_argument("out", metavar="OUT.json")
    a = ap.parse_args(argv)
    if a.step == "start":
        build = os.path.abspath(a.build) if a.build else ""
        write(start(a.frontend, a.command, build, json.loads(a.run)), a.out)
    else:
        with open(a.out) as f:
            meta = json.load(f)
        write(end(meta), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
