#!/usr/bin/env python3
"""Tables and plots of a cross-library benchmark run (Python 3 standard
library; plots with gnuplot through scripts/bench_plot.py). Each plot shows
the median of every cell with an error bar from its fastest to its slowest
round, and the run's machine, date and commit in its corner.

    scripts/bench --summary DIR      (or: python3 scripts/bench_report.py DIR)

reads DIR/runs.json and writes DIR/summary.md (a table per S and
completion mode in the Go README's format, ultrapool against the best
peer, the details of every cell, and with both modes what the shared latch
costs each peer), DIR/summary.csv, and DIR/plot_S<S>.png (striped) and
DIR/plot_S<S>-shared.png (shared); prints summary.md. With --plots it
draws the plots alone, also for a folder that keeps runs.csv and meta.json
but not runs.json (docs/results.md). Runs that do not say how they counted
completions (results from before --completion) count as striped.
"""
import argparse
import csv
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_meta  # noqa: E402
import bench_plot  # noqa: E402
from bench_stats import mean, median, stdev, summary  # noqa: E402

# The columns of the tables, in this order when present.
PEER_ORDER = ["ultrapool", "go-ultrapool", "omp-gomp-single", "omp-gomp-team", "omp-llvm-single",
              "omp-llvm-team", "tbb", "glib", "textbook", "thread", "thread-sem", "goroutines",
              "inline", "loop"]
# The limits, not contenders: the loop (one thread) and inline (each
# submitter running its own tasks: what S threads can do with no runtime).
REFERENCES = ("inline", "loop")
TITLES = {"sleep-1us": "Sleep 1µs", "sleep-50ms": "Sleep 50ms",
          "sleep-1us-wait": "Sleep 1µs (wait)", "sleep-50ms-wait": "Sleep 50ms (wait)",
          "sha256-1k": "SHA256 1 kB",
          "aes-cbc-1k": "AES-CBC 1 kB", "aes-cbc-8k": "AES-CBC 8 kB", "crc32-64": "CRC32 64 B",
          "bytesum-4k": "MemScan 4 kB", "mixed": "Mixed bimodal", "mutex": "Mutex contention"}
# One colour per peer, ultrapool's the strongest.
COLORS = {"ultrapool": "#d62728", "go-ultrapool": "#ff9896", "omp-gomp-single": "#1f77b4",
          "omp-gomp-team": "#aec7e8", "omp-llvm-single": "#2ca02c", "omp-llvm-team": "#98df8a",
          "tbb": "#9467bd", "glib": "#8c564b", "textbook": "#e377c2", "thread": "#bcbd22",
          "thread-sem": "#dbdb8d", "goroutines": "#17becf", "inline": "#7f7f7f",
          "loop": "#404040"}
HW = ["PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L3_TCM", "PAPI_BR_MSP"]
SDE = ["tasks_submitted", "tasks_executed", "tasks_helped", "tasks_inlined", "steals",
       "workers_spawned", "parks", "wakes", "overloads", "workers_peak"]
# How the runners counted finished tasks (their --completion), in the
# tables' order; docs/benchmarks.md, "Counting finished tasks".
COMPLETIONS = ("striped", "shared")
COMPLETION_TITLES = {
    "striped": "striped completion count (each thread counts on a cache line of its own)",
    "shared": "shared completion latch (every task decrements one counter)"}
CSV_RUN_FIELDS = ["round", "position", "workload", "peer", "submitters", "completion", "tasks",
                  "ns_per_op",
                  "wall_s", "cpu_use", "peak_threads", "peak_runnable", "runnable_sweeps",
                  "peak_workers", "workers_source", "nvcsw", "nivcsw", "maxrss_kb", "sleep", "wait",
                  "tasks_resumed", "check", "exit"]
# How a sleeping row's tasks slept (crossbench.sleep_kind), and the mark a
# table cell gets when its peer slept otherwise than its row says: a -wait
# row asks for the runtime's wait, the other sleep rows for clock_nanosleep.
SLEEP_MARKS = {
    "blocks": ("†", "no wait of its own: the task blocked its thread in clock_nanosleep, "
                    "as in the blocking row"),
    "waits, thread held": ("‡", "up_sleep_ns was called but no task parked: in this build it "
                                "held its worker thread for the sleep"),
    "waits": ("§", "the peer's sleep is its runtime's wait (Go's time.Sleep parks the goroutine) "
                   "in the blocking rows too"),
}


def write_runs_csv(runs, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_RUN_FIELDS + HW + ["sde_" + s for s in SDE])
        for r in runs:
            papi, sde = r.get("papi") or {}, r.get("sde") or {}
            w.writerow([r.get(k, "") for k in CSV_RUN_FIELDS] +
                       ["" if papi.get(k) is None else papi[k] for k in HW] +
                       ["" if sde.get(k) is None else sde[k] for k in SDE])


def completion_of(run):
    """A run's completion mode; runs from before the option were striped."""
    return run.get("completion") or "striped"


def by_completion(runs):
    """{mode: cell_stats of that mode's runs} for the modes present, in
    COMPLETIONS order."""
    out = {}
    for mode in COMPLETIONS:
        rs = [r for r in runs if completion_of(r) == mode]
        if rs:
            out[mode] = cell_stats(rs)
    return out


def peer_rank(p):
    return (PEER_ORDER.index(p) if p in PEER_ORDER else len(PEER_ORDER), p)


def cell_stats(runs):
    """Per (workload, peer, S): statistics over the rounds' good runs."""
    cells = {}
    for r in runs:
        cells.setdefault((r["workload"], r["peer"], r["submitters"]), []).append(r)
    out = {}
    for key, rs in cells.items():
        good = [r for r in rs if r.get("check") == "ok" and r.get("exit") == 0]
        ns = [r["ns_per_op"] for r in good]
        spread = summary(ns)
        c = {"workload": key[0], "peer": key[1], "submitters": key[2], "runs": len(rs),
             "good": len(good), "s_independent": rs[0].get("s_independent", 0),
             "tasks": rs[0].get("tasks"),
             "median": spread.median, "mean": mean(ns), "stdev": stdev(ns),
             "min": spread.min, "max": spread.max,
             "failures": sorted({r.get("check", "?") for r in rs if r not in good})}
        for k in ("cpu_use", "peak_threads", "peak_workers", "nvcsw", "nivcsw", "maxrss_kb"):
            c[k] = median([r[k] for r in good if r.get(k) is not None])
        # Missing in runs of runners without the sampler (Go) and in results
        # from before it; -1 where the system did not say.
        c["peak_runnable"] = median([r["peak_runnable"] for r in good
                                     if r.get("peak_runnable") is not None and r["peak_runnable"] >= 0])
        c["workers_source"] = good[0].get("workers_source") if good else ""
        kinds = sorted({r.get("sleep") or "" for r in good})
        c["sleep"] = "/".join(kinds)
        c["tasks_resumed"] = median([r["tasks_resumed"] for r in good
                                     if r.get("tasks_resumed") is not None])
        for k in HW:
            v = [r["papi"][k] for r in good if (r.get("papi") or {}).get(k) is not None]
            c[k] = median(v) if v and len(v) == len(good) else None
        c["papi_note"] = good[0].get("papi_note", "") if good else ""
        for k in SDE:
            v = [r["sde"][k] for r in good if (r.get("sde") or {}).get(k) is not None]
            c["sde_" + k] = sum(v) if v and len(v) == len(good) else None
        c["sde_tasks_run"] = sum(r["tasks"] for r in good) if c["sde_tasks_submitted"] is not None else None
        out[key] = c
    return out


def fmt_ns(ns):
    if ns is None:
        return "–"
    if ns >= 1e7:
        return "%.1f ms" % (ns / 1e6)
    if ns >= 1e5:
        return "%.0f µs" % (ns / 1e3)
    if ns >= 100:
        return "%.0f ns" % ns
    return "%.1f ns" % ns


def fmt_delta(up, other):
    """The Go README's delta: the peer's throughput relative to ultrapool."""
    d = up / other - 1
    sign = "+" if d >= 0 else "−"
    return "%s%.0f%%" % (sign, abs(d) * 100)


def sleep_mark(workload, c):
    """The mark of a cell whose peer slept otherwise than its row says
    (SLEEP_MARKS), or ""."""
    if not c or not c.get("sleep"):
        return ""
    wanted = "waits" if workload.endswith("-wait") else "blocks"
    return "" if c["sleep"] == wanted else SLEEP_MARKS.get(c["sleep"], ("?", ""))[0]


def table_for(stats, s, workloads, peers, meta):
    """The Go README's table for S submitters, with a footnote for every
    sleep mark used."""
    cols = [p for p in peers if p not in REFERENCES]
    refs = [p for p in REFERENCES if p in peers]
    ref_titles = {"inline": "inline (S threads)", "loop": "loop (1 thread)"}
    used = set()
    lines = ["| Workload | " + " | ".join(cols + [ref_titles[r] for r in refs]) + " |",
             "|---|" + "---|" * (len(cols) + len(refs))]
    for w in workloads:
        row = {p: stats.get((w, p, 1 if stat_s_indep(stats, w, p) else s)) for p in peers}
        meds = {p: c["median"] for p, c in row.items() if c and c["median"] is not None}
        contenders = {p: v for p, v in meds.items() if p not in REFERENCES}
        best = min(contenders, key=contenders.get) if contenders else None
        up = meds.get("ultrapool")
        cells = []
        for p in cols:
            v = meds.get(p)
            if v is None:
                cells.append("–")
                continue
            text = fmt_ns(v)
            if p == best:
                text = "🟢 " + text
            if up and p != "ultrapool":
                text += " (%s)" % fmt_delta(up, v)
            mark = sleep_mark(w, row[p])
            if mark:
                text += " " + mark
                used.add(mark)
            cells.append(text)
        for r in refs:
            mark = sleep_mark(w, row.get(r))
            if mark:
                used.add(mark)
            cells.append(fmt_ns(meds.get(r)) + (" " + mark if mark else ""))
        lines.append("| %s | %s |" % (TITLES.get(w, w), " | ".join(cells)))
    notes = ["%s %s." % (m, why) for m, why in SLEEP_MARKS.values() if m in used]
    if notes:
        lines += [""] + [" ".join(notes)]
    return "\n".join(lines)


def stat_s_indep(stats, w, p):
    c = stats.get((w, p, 1))
    return bool(c and c["s_independent"])


def versus_best(stats, s, workloads, peers):
    """Rows of (workload, ultrapool ns, best other peer, its ns, ratio,
    inline's ns or None)."""
    rows = []
    for w in workloads:
        up = stats.get((w, "ultrapool", s))
        others = []
        for p in peers:
            if p == "ultrapool" or p in REFERENCES:
                continue
            c = stats.get((w, p, 1 if stat_s_indep(stats, w, p) else s))
            if c and c["median"] is not None:
                others.append((c["median"], p))
        if not up or up["median"] is None or not others:
            continue
        best_ns, best = min(others)
        lim = stats.get((w, "inline", s))
        lim_ns = lim["median"] if lim and lim["median"] else None
        rows.append((w, up["median"], best, best_ns, up["median"] / best_ns, lim_ns))
    return rows


def details(stats, s, workloads, peers, cores):
    head = ("| workload | peer | ns/op median | mean ± sd | eff. | CPU | workers | threads | "
            "runnable | ctx sw vol/invol | RSS MB | SDE submitted / executed (tasks run) | cycles/op | instr/op | "
            "sleep |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    for w in workloads:
        loop = stats.get((w, "loop", 1))
        for p in peers:
            c = stats.get((w, p, 1 if stat_s_indep(stats, w, p) else s))
            if not c:
                continue
            if c["median"] is None:
                lines.append("| %s | %s | failed: %s |" % (w, p, "; ".join(c["failures"])))
                continue
            eff = (loop["median"] / cores) / c["median"] if loop and loop["median"] else None
            sde = "–"
            if c["sde_tasks_submitted"] is not None:
                sde = "%d / %d (%d)" % (c["sde_tasks_submitted"], c["sde_tasks_executed"],
                                        c["sde_tasks_run"])
            per = lambda k: "–" if c[k] is None or not c["tasks"] else "%.0f" % (c[k] / c["tasks"])
            sleep = c["sleep"] or "–"
            if c["tasks_resumed"] is not None and c["sleep"]:
                sleep += " (%.0f resumed)" % c["tasks_resumed"]
            lines.append("| %s | %s%s | %s | %s ± %.0f%% | %s | %.0f%% | %s | %s | %s | %s/%s | %.0f | %s | %s | %s | %s |" % (
                w, p, " (S-independent)" if c["s_independent"] else "", fmt_ns(c["median"]),
                fmt_ns(c["mean"]), 100 * c["stdev"] / c["mean"] if c["mean"] else 0,
                "%.2f" % eff if eff else "–", 100 * (c["cpu_use"] or 0),
                "%.0f%s" % (c["peak_workers"], "" if c["workers_source"] == "peer" else "*")
                if c["peak_workers"] is not None else "–",
                "%.0f" % c["peak_threads"] if c["peak_threads"] is not None else "–",
                "%.0f" % c["peak_runnable"] if c["peak_runnable"] is not None else "–",
                "%.0f" % (c["nvcsw"] or 0), "%.0f" % (c["nivcsw"] or 0), (c["maxrss_kb"] or 0) / 1024,
                sde, per("PAPI_TOT_CYC"), per("PAPI_TOT_INS"), sleep))
    return "\n".join(lines)


def write_summary_csv(modes, path):
    """One row per cell and completion mode (modes: by_completion's)."""
    keys = ["workload", "peer", "submitters", "completion", "s_independent", "runs", "good",
            "tasks", "median",
            "mean", "stdev", "min", "max", "cpu_use", "peak_workers", "workers_source", "peak_threads",
            "peak_runnable", "nvcsw", "nivcsw", "maxrss_kb", "sleep", "tasks_resumed"] + HW + \
        ["sde_" + k for k in SDE] + ["sde_tasks_run"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for mode, stats in modes.items():
            for k in sorted(stats, key=lambda k: (k[0], peer_rank(k[1]), k[2])):
                row = dict(stats[k], completion=mode)
                w.writerow(["" if row.get(x) is None else row[x] for x in keys])


def plot_name(s, mode):
    """The plot of S submitters in one completion mode (the striped plots
    keep the name they had before the shared mode)."""
    return "plot_S%d.png" % s if mode == "striped" else "plot_S%d-%s.png" % (s, mode)


def plot(stats, s, mode, workloads, peers, path, meta, provenance):
    """A clustered bar chart of median ns/op, log scale (gnuplot, through
    bench_plot); each bar's error bar spans the cell's fastest to its
    slowest round. The title names the completion mode."""
    rows = []
    for w in workloads:
        row = [TITLES.get(w, w)]
        for p in peers:
            c = stats.get((w, p, 1 if stat_s_indep(stats, w, p) else s))
            row += [c["median"], c["min"], c["max"]] if c and c["median"] else [None] * 3
        rows.append(row)
    title = ["ns per task, S=%d submitters, %s (log scale; lower is better)" % (
                 s, COMPLETION_TITLES.get(mode, mode).split(" (")[0]),
             bench_plot.spread_note(meta.get("rounds"), "bars", "error bars")]
    lines = bench_plot.datablock("cells", rows) + [
        "set title %s noenhanced" % '."\\n".'.join(bench_plot.quote(t) for t in title),
        "set logscale y", "set format y '10^{%L}'", "set ylabel 'ns/op'",
        "set style data histograms", "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.85 border -1", "set boxwidth 0.9", "set bars front",
        "set key outside right top vertical noenhanced", "set grid ytics",
        "set xtics nomirror rotate by -20 noenhanced",
        "colors = '%s'" % " ".join(COLORS.get(p, "#7f7f7f") for p in peers),
        "names = '%s'" % " ".join(peers),
        "plot for [i=1:%d] $cells using (column(3*i-1)):(column(3*i)):(column(3*i+1)):xtic(1) "
        "title word(names, i) lc rgb word(colors, i)" % len(peers)]
    return bench_plot.render(lines, path, 1500, 680, provenance=provenance, enhanced=True)


def cell_keys(modes):
    """Every (workload, peer, S) measured in any mode."""
    return {k for stats in modes.values() for k in stats}


def plot_all(out, modes, meta):
    """plot_name(S, mode) for every S and completion mode of the run (modes:
    by_completion's); returns {(S, mode): None or why not}."""
    keys = cell_keys(modes)
    workloads = [w for w in meta["workloads"] if any(k[0] == w for k in keys)]
    peers = sorted({k[1] for k in keys}, key=peer_rank)
    prov = bench_meta.provenance(out, meta)
    return {(s, mode): plot(stats, s, mode, workloads, peers, os.path.join(out, plot_name(s, mode)),
                            meta, prov)
            for s in meta["submitters"] for mode, stats in modes.items()}


def latch_cost(modes, s, workloads, peers):
    """What the shared latch costs each peer at S: its median ns/op with
    the shared latch over that with the striped count, per workload."""
    striped, shared = modes["striped"], modes["shared"]
    lines = ["| Workload | " + " | ".join(peers) + " |", "|---|" + "---:|" * len(peers)]
    for w in workloads:
        cells = []
        for p in peers:
            indep = stat_s_indep(striped, w, p) or stat_s_indep(shared, w, p)
            a, b = striped.get((w, p, 1 if indep else s)), shared.get((w, p, 1 if indep else s))
            ok = a and b and a["median"] and b["median"]
            cells.append("%.2f" % (b["median"] / a["median"]) if ok else "–")
        lines.append("| %s | %s |" % (TITLES.get(w, w), " | ".join(cells)))
    return "\n".join(lines)


def number(text):
    """A runs.csv field as written from runs.json: "" is None, numbers
    are numbers."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def load(out):
    """(metadata, runs) of a results folder: from runs.json, or, where a
    folder keeps only runs.csv and meta.json (results.md says which), from
    those, with each peer's s_independent from the metadata."""
    path = os.path.join(out, "runs.json")
    if os.path.isfile(path):
        with open(path) as f:
            data = json.load(f)
        return data["metadata"], data["runs"]
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    meta.update(meta.get("run", {}))
    with open(os.path.join(out, "runs.csv"), newline="") as f:
        runs = [{k: number(v) for k, v in r.items()} for r in csv.DictReader(f)]
    for r in runs:
        r["s_independent"] = meta["peers"].get(r["peer"], {}).get("s_independent", 0)
    return meta, runs


def completion_note(modes):
    """The paragraph of summary.md saying how the run counted finished
    tasks."""
    how = {"striped": "each thread counts the tasks it finishes on a cache line of its own, "
                      "so the count costs the peers nothing shared (the runtime alone)",
           "shared": "every finished task decrements one shared counter (acq_rel), and the run "
                     "ends when it reaches zero: a latch, as a program waiting for its tasks "
                     "counts them (Go's WaitGroup, an OpenMP taskgroup)"}
    said = "; ".join("%s: %s" % (m, how[m]) for m in modes)
    if len(modes) > 1:
        return ("Completion counting, both modes, interleaved in every round with the same task "
                "counts: %s. Each S has a table of each, then the shared latch's cost per peer "
                "(its ns/op with the latch over its ns/op with the striped count)." % said)
    return "Completion counting: %s (`--completion`)." % said


def report(out):
    with open(os.path.join(out, "runs.json")) as f:
        data = json.load(f)
    meta, runs = data["metadata"], data["runs"]
    modes = by_completion(runs)
    plots = plot_all(out, modes, meta)
    write_summary_csv(modes, os.path.join(out, "summary.csv"))
    keys = cell_keys(modes)
    workloads = [w for w in meta["workloads"] if any(k[0] == w for k in keys)]
    peers = sorted({k[1] for k in keys}, key=peer_rank)
    cores = meta.get("cores_usable") or 1
    md = ["# Cross-library benchmark, %s" % meta["date"], "",
          "`%s` (seed %s, git %s): %d rounds, runs of about %.2f s, every (peer, workload, S, "
          "completion mode) once per round in a random order; each cell's task count fixed by a "
          "calibration round. "
          "ns/op = wall time of the run / tasks, from the moment every submitter is ready until "
          "the last task has finished; the median over rounds." % (
              meta["command"], meta["seed"], meta["git"], meta["rounds"], meta["time_per_run_s"]),
          "", completion_note(list(modes)), "",
          "Machine: %s, %s CPUs usable, caches %s, %s (%s); %s." % (
              meta["cpu_model"], cores,
              ", ".join("%s %s" % kv for kv in sorted(meta["caches"].items())) or "unknown",
              meta["kernel"], meta["virtualization"], meta["compilers"].get("gcc") or "no gcc"),
          ""]
    md += ["Peers:", ""] + ["- `%s`: %s%s" % (p, meta["peers"][p]["about"],
                                            " (%s)" % meta["peers"][p]["version"]
                                            if meta["peers"][p]["version"] else "")
                           for p in peers if p in meta["peers"]]
    for what, why in sorted(meta.get("left_out", {}).items()):
        md.append("- left out: `%s`, %s" % (what, why))
    if meta.get("hog"):
        md += ["Load: %d busy process%s (`--hog`) ran beside the whole run, so the peers "
               "shared the CPUs with them." % (meta["hog"], "" if meta["hog"] == 1 else "es"), ""]
    notes = {c["papi_note"] for stats in modes.values() for c in stats.values() if c["papi_note"]}
    md += ["", "Hardware counters: %s." % ("; ".join(sorted(notes)) if notes else "read"), ""]
    for s in meta["submitters"]:
        md += ["## S = %d submitter threads" % s, ""]
        for mode, stats in modes.items():
            md += section(stats, s, mode, workloads, peers, cores, meta, plots[(s, mode)])
        if len(modes) == len(COMPLETIONS):
            md += ["### What the shared latch costs, S = %d" % s, "",
                   "Each peer's ns/op with the shared completion latch over its ns/op with the "
                   "striped count (medians; 1.00: the latch costs nothing measurable, above 1: "
                   "the peer is slower when every task writes one shared line).", "",
                   latch_cost(modes, s, workloads, peers), ""]
    text = "\n".join(md)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    return text


def section(stats, s, mode, workloads, peers, cores, meta, plot_err):
    """summary.md's tables of S submitters in one completion mode."""
    md = ["### %s%s, S = %d" % (COMPLETION_TITLES[mode][0].upper(), COMPLETION_TITLES[mode][1:], s),
          "",
          "ns/op (lower is better); 🟢 fastest in row (inline and the loop are limits, not "
          "contenders: inline is each submitter running its own tasks, no runtime); "
          "(±x%) is the peer's throughput relative to ultrapool, as in the Go tables. "
          "One-producer peers and the loop do not depend on S.", "",
          table_for(stats, s, workloads, peers, meta), ""]
    rows = versus_best(stats, s, workloads, peers)
    if rows:
        md += ["ultrapool against the best other peer (ratio < 1: ultrapool is faster):", "",
               "| workload | ultrapool | best other peer | its ns/op | ultrapool / best | "
               "inline (S threads) | ultrapool / inline |",
               "|---|---:|---|---:|---:|---:|---:|"]
        mark = lambda w, p: sleep_mark(w, stats.get((w, p, 1 if stat_s_indep(stats, w, p) else s)))
        md += ["| %s | %s | %s | %s | %.2f%s | %s | %s |" % (
            TITLES.get(w, w), (fmt_ns(u) + " " + mark(w, "ultrapool")).strip(),
            (b + " " + mark(w, b)).strip(), fmt_ns(bn), r, "" if r <= 1 else " (not fastest)",
            fmt_ns(ln), "%.2f" % (u / ln) if ln else "–")
            for w, u, b, bn, r, ln in rows]
        md.append("")
    md += ["<details><summary>Every cell at S=%d, %s completion</summary>" % (s, mode), "",
           "eff. = (loop ns / %d cores) / ns; workers: the peak of worker threads (* sampled from "
           "the process's thread count less main, sampler and submitters; otherwise the peer's "
           "own count); threads: peak OS threads sampled every ms; runnable: peak of the threads "
           "running or waiting for a CPU (state R: submitters, main and the peer's own threads, "
           "not the sampler), sampled every 10 ms, less often with many threads, – where not "
           "sampled; ctx sw and RSS from getrusage; "
           "SDE: ultrapool's counters read through PAPI, summed over rounds; cycles and "
           "instructions per task over the whole runner process, – where missing; sleep: how a sleep "
           "row's tasks slept (waits: the runtime's wait parked them; blocks: clock_nanosleep held "
           "the thread; resumed: ultrapool's parked tasks that resumed, warm-up included)." % cores, "",
           details(stats, s, workloads, peers, cores), "", "</details>", ""]
    md += ["![ns/op at S=%d, %s completion](%s)" % (s, mode, plot_name(s, mode))
           if not plot_err else "(%s)" % plot_err, ""]
    return md


def main(argv):
    ap = argparse.ArgumentParser(prog="bench_report.py", description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", metavar="RESULTS_DIR", help="a cross-library run's folder, with runs.json")
    ap.add_argument("--plots", action="store_true",
                    help="draw plot_S<S>.png (and plot_S<S>-shared.png) again and nothing else, "
                    "from runs.json or, where the folder keeps only runs.csv and meta.json, from "
                    "those")
    a = ap.parse_args(argv)
    if a.plots:
        if not any(os.path.isfile(os.path.join(a.dir, f)) for f in ("runs.json", "runs.csv")):
            sys.exit("bench_report.py: no runs.json or runs.csv in %s" % a.dir)
        meta, runs = load(a.dir)
        failed = 0
        for (s, mode), err in plot_all(a.dir, by_completion(runs), meta).items():
            print("bench_report.py: %s" % (err or os.path.join(a.dir, plot_name(s, mode))))
            failed += err is not None
        return 1 if failed else 0
    if not os.path.isfile(os.path.join(a.dir, "runs.json")):
        sys.exit("bench_report.py: no %s" % os.path.join(a.dir, "runs.json"))
    print(report(a.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
