#!/usr/bin/env python3
"""The cross-library benchmark's completion modes (--completion striped or
shared, docs/benchmarks.md "Counting finished tasks"):

- the option's parsing: scripts/crossbench.py and scripts/bench's own check
  take striped and shared, default to both, and refuse anything else with
  a message that names the option (scripts/bench before it installs or
  builds anything);
- the reports: runs of both modes give a table and a plot of each, the
  plots' titles and names say the mode, runs.csv and summary.csv carry it,
  the latch's cost per peer is the ratio of the medians, and runs from
  before the option count as striped;
- the runners, when the build has them (UP_BENCH_C: bench_c; UP_BENCH_GO:
  bench_go, the ctest sets both): a bad value exits 2 naming the option,
  and small shared-mode runs of every kind of peer (a pool, a thread per
  task, one that runs the whole batch itself, the submitters alone) count
  every task exactly once ("check": "ok", which the harness gives only when
  the shared latch came down to exactly zero) and record the mode.

    python3 tests/scripts/test_bench_completion.py   (ctest: test_bench_completion_py)
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_plot  # noqa: E402
import bench_report  # noqa: E402
import crossbench  # noqa: E402


class Parsing(unittest.TestCase):
    def test_default_is_both_modes(self):
        self.assertEqual(crossbench.parse_args([]).completions, ["striped", "shared"])
        self.assertEqual(crossbench.parse_args(["--full"]).completions, ["striped", "shared"])

    def test_one_mode(self):
        for mode in ("striped", "shared"):
            self.assertEqual(crossbench.parse_args(["--completion", mode]).completions, [mode])

    def test_bad_values_refused(self):
        for bad in (["--completion", "both"], ["--completion", "Shared"], ["--completion", ""],
                    ["--completion"]):
            err = io.StringIO()
            with redirect_stderr(err), self.assertRaises(SystemExit) as e:
                crossbench.parse_args(bad)
            self.assertEqual(e.exception.code, 2)
            self.assertIn("--completion", err.getvalue())

    def test_front_end_refuses_before_installing(self):
        # A value the front-end's own check refuses; the --rounds 0 behind
        # it makes sure nothing is installed or built should that check
        # ever let the value through.
        for args, said in ((["--completion", "both", "--rounds", "0"], "--completion: striped or shared"),
                           (["--completion"], "--completion needs a value")):
            r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "bench")] + args,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(said, r.stderr)


def run(peer, workload, s, mode, ns, rnd=0, **extra):
    r = {"round": rnd, "position": 0, "peer": peer, "workload": workload, "submitters": s,
         "completion": mode, "tasks": 1000, "ns_per_op": ns, "wall_s": ns * 1e-6,
         "cpu_use": 0.9, "peak_threads": 4, "peak_runnable": 2, "peak_workers": 2,
         "workers_source": "peer", "nvcsw": 1, "nivcsw": 1, "maxrss_kb": 1024,
         "check": "ok", "exit": 0, "s_independent": 1 if peer == "loop" else 0, "sleep": ""}
    if mode is None:
        del r["completion"]
    r.update(extra)
    return r


class Reports(unittest.TestCase):
    def setUp(self):
        self.titles = []
        self.saved = bench_plot.render

        def render(lines, png, *a, **k):
            self.titles.append((os.path.basename(png), [l for l in lines if l.startswith("set title")]))
            return None
        bench_report.bench_plot.render = render

    def tearDown(self):
        bench_report.bench_plot.render = self.saved

    def folder(self, tmp, runs):
        meta = {"date": "2026-01-01 00:00 UTC", "command": "scripts/bench", "seed": 1,
                "git": "abc1234", "rounds": 3, "time_per_run_s": 0.2, "cpu_model": "Some CPU",
                "cores_usable": 2, "caches": {}, "kernel": "k", "virtualization": "none",
                "compilers": {"gcc": "gcc"}, "workloads": ["crc32-64"], "submitters": [2],
                "completion": ["striped", "shared"],
                "peers": {p: {"about": p, "version": "", "runner": "bench_c", "s_independent": 0}
                          for p in ("ultrapool", "textbook", "loop")}}
        with open(os.path.join(tmp, "runs.json"), "w") as f:
            json.dump({"metadata": meta, "runs": runs}, f)
        return tmp

    def test_both_modes(self):
        runs = []
        for rnd in range(3):
            runs += [run("ultrapool", "crc32-64", 2, "striped", 100 + rnd, rnd),
                     run("ultrapool", "crc32-64", 2, "shared", 150 + rnd, rnd),
                     run("textbook", "crc32-64", 2, "striped", 1000, rnd),
                     run("textbook", "crc32-64", 2, "shared", 1000, rnd),
                     run("loop", "crc32-64", 1, "striped", 50, rnd),
                     run("loop", "crc32-64", 1, "shared", 60, rnd)]
        with tempfile.TemporaryDirectory() as tmp:
            text = bench_report.report(self.folder(tmp, runs))
            self.assertIn("### Striped completion count", text)
            self.assertIn("### Shared completion latch", text)
            self.assertIn("Completion counting, both modes", text)
            # The latch's cost: medians 151 / 101, 1000 / 1000, 60 / 50.
            cost = text[text.index("### What the shared latch costs"):]
            row = [l for l in cost.splitlines() if l.startswith("| CRC32 64 B |")][0]
            self.assertEqual(row, "| CRC32 64 B | %.2f | 1.00 | 1.20 |" % (151 / 101))
            # One plot per mode, the mode in its name and title.
            names = dict(self.titles)
            self.assertEqual(sorted(names), ["plot_S2-shared.png", "plot_S2.png"])
            self.assertIn("shared completion latch", names["plot_S2-shared.png"][0])
            self.assertIn("striped completion count", names["plot_S2.png"][0])
            self.assertIn("(plot_S2-shared.png)", text)
            with open(os.path.join(tmp, "summary.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(sorted((r["peer"], r["completion"]) for r in rows),
                             sorted((p, m) for p in ("ultrapool", "textbook", "loop")
                                    for m in ("striped", "shared")))
            shared_up = [r for r in rows if r["peer"] == "ultrapool" and r["completion"] == "shared"]
            self.assertEqual(float(shared_up[0]["median"]), 151)
            bench_report.write_runs_csv(runs, os.path.join(tmp, "runs.csv"))
            with open(os.path.join(tmp, "runs.csv"), newline="") as f:
                modes = [r["completion"] for r in csv.DictReader(f)]
            self.assertEqual(modes.count("shared"), 9)
            self.assertEqual(modes.count("striped"), 9)

    def test_runs_from_before_the_option_are_striped(self):
        runs = [run("ultrapool", "crc32-64", 2, None, 100 + k, k) for k in range(3)]
        with tempfile.TemporaryDirectory() as tmp:
            text = bench_report.report(self.folder(tmp, runs))
        self.assertIn("### Striped completion count", text)
        self.assertNotIn("### Shared completion latch", text)
        self.assertNotIn("What the shared latch costs", text)
        self.assertEqual([n for n, _ in self.titles], ["plot_S2.png"])

    def test_runner_saying_another_mode_fails(self):
        rec = {"check": "ok", "completion": "striped"}
        crossbench.completion_check(rec, "shared")
        self.assertIn("not shared", rec["check"])
        rec = {"check": "ok", "completion": "shared"}
        crossbench.completion_check(rec, "shared")
        self.assertEqual(rec["check"], "ok")


def runner(var):
    path = os.environ.get(var, "")
    return path if path and os.access(path, os.X_OK) else None


def result(out):
    for line in out.splitlines():
        kind, _, body = line.partition(" ")
        if kind == "RESULT":
            return json.loads(body)
    return None


class Runners(unittest.TestCase):
    """Small runs of the built runners (skipped where the build has none)."""

    def check_runner(self, path, peers, workloads):
        base = [path, "--workload", "crc32-64", "--submitters", "2", "--tasks", "100"]
        for bad in (["--completion", "both"], ["--completion", "SHARED"]):
            r = subprocess.run(base + ["--peer", peers[0]] + bad, capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--completion", r.stderr)
            self.assertIsNone(result(r.stdout))
        for peer in peers:
            for workload in workloads:
                for mode in ("shared", "striped"):
                    with self.subTest(peer=peer, workload=workload, mode=mode):
                        cmd = [path, "--peer", peer, "--workload", workload, "--submitters", "2",
                               "--tasks", "3000", "--completion", mode]
                        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                        rec = result(r.stdout)
                        self.assertIsNotNone(rec, r.stderr)
                        self.assertEqual(rec["check"], "ok")
                        self.assertEqual(r.returncode, 0, r.stderr)
                        self.assertEqual(rec["completion"], mode)
                        self.assertEqual(rec["tasks"], 3000)

    def test_bench_c(self):
        path = runner("UP_BENCH_C")
        if not path:
            self.skipTest("UP_BENCH_C: no bench_c in this build")
        # A pool, a thread per task, the batch run by the peer itself (the
        # loop, as the OpenMP peers), the submitters alone (inline).
        self.check_runner(path, ["ultrapool", "textbook", "thread", "loop", "inline"],
                          ["crc32-64", "mutex"])

    def test_bench_go(self):
        path = runner("UP_BENCH_GO")
        if not path:
            self.skipTest("UP_BENCH_GO: no bench_go in this build")
        self.check_runner(path, ["goroutines"], ["crc32-64", "mutex"])


if __name__ == "__main__":
    unittest.main()
