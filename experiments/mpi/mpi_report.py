"""The analysis of scripts/bench --mpi (mpi_run.py runs, this reports):
medians over rounds, efficiencies, METG(50%), the tables of summary.md and
the figure (gnuplot through scripts/bench_plot.py). Rows are the programs'
RESULT lines as dicts, with the round and the run's label added."""
import io
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts"))
import bench_plot  # noqa: E402
from bench_stats import median, summary  # noqa: E402

OSC_FORCED = ["sm", "rdma", "pt2pt", "ucx"]  # the one-sided components grabs are timed with
FARM_OSC = ["pt2pt", "ucx"]  # components that need the target's progress, for the farm
FARM_PEERS = ["up-guided", "up-dynamic", "up-static", "omp"]
METG_PEERS = ["up-region", "up", "up-group", "omp-region", "omp"]
METG_MAIN = ("up-region", "omp")  # the ultrapool way measured against the targets, and its peer


def fmt(v, spec="%.3g"):
    return "-" if v is None else spec % v


def grab_tables(rows):
    """Per component: median over rounds of each case's median ns."""
    out = {}
    for r in rows:
        if r["exp"] == "grab" and "case" in r:
            out.setdefault(r["label"], {}).setdefault(r["case"], []).append(r["median_ns"])
    checks = {}
    for r in rows:
        if r["exp"] == "grab" and r.get("kind") == "check":
            checks.setdefault(r["label"], []).append(int(r["ok"]))
        if r["exp"] == "grab" and r.get("kind") == "first":
            checks.setdefault(r["label"] + ":first", []).append(r.get("first_value"))
    return {k: {c: median(v) for c, v in cases.items()} for k, cases in out.items()}, checks


def farm_tables(rows):
    t = {}
    work = {}
    for r in rows:
        if r["exp"] != "farm":
            continue
        if r.get("kind") == "time":
            t.setdefault(r["label"], []).append(r)
        elif r.get("kind") == "work" and r["label"] != "serial":
            work = r
    return t, work


def metg_tables(rows, cores, agg=None):
    """{pattern: {peer: [(grain_us, elapsed, tasks, task_ns, eff, gran_us, sums)]}}, elapsed
    the median over rounds (agg=min: the fastest round)."""
    agg = agg or median
    serial, runs = {}, {}
    for r in rows:
        if r["exp"] != "metg" or "grain_us" not in r:
            continue
        key = (r["pattern"], r["grain_us"])
        if r["peer"] == "serial":
            serial.setdefault(key, []).append(r["task_ns"])
        else:
            runs.setdefault((r["pattern"], r["peer"], r["grain_us"]), []).append(r)
    out = {}
    for (pattern, peer, g), rs in runs.items():
        el = agg([x["elapsed_ns"] for x in rs])
        tasks = rs[0]["tasks"]
        task_ns = median(serial.get((pattern, g), []))
        eff = tasks * task_ns / (el * cores) if task_ns and el else None
        gran_us = el * cores / tasks / 1000.0
        sums = sorted(set(x["checksum"] for x in rs))
        out.setdefault(pattern, {}).setdefault(peer, []).append(
            (g, el, tasks, task_ns, eff, gran_us, sums))
    for pattern in out:
        for peer in out[pattern]:
            out[pattern][peer].sort(key=lambda x: -x[0])
    return out


def metg_of(points):
    """METG(50%): the granularity at the smallest grain whose efficiency is
    still >= 0.5, interpolated (in log granularity) to 0.5 with the next
    smaller grain. Points run from the largest grain to the smallest.
    Returns (value_us, how)."""
    pts = [p for p in points if p[4] is not None]
    if not pts:
        return None, "no data"
    ok = [i for i, p in enumerate(pts) if p[4] >= 0.5]
    if not ok:
        return None, "below 50% at every grain"
    i = ok[-1]
    if i == len(pts) - 1:
        return pts[i][5], "at most: >= 50%% down to the smallest grain %g us" % pts[i][0]
    a, b = pts[i], pts[i + 1]
    f = (a[4] - 0.5) / (a[4] - b[4])
    v = math.exp(math.log(a[5]) + f * (math.log(b[5]) - math.log(a[5])))
    dips = sum(1 for p in pts[:i] if p[4] < 0.5)
    return v, "between grains %g and %g us%s" % (
        a[0], b[0], "; %d larger grain(s) below 50%%" % dips if dips else "")


def usage_table(rows):
    u = {}
    for r in rows:
        if r.get("kind") == "usage":
            u.setdefault((r["exp"], r["label"]), []).append(r)
    return u


def plot(out, rows, cores, rounds):
    """mpi.png through gnuplot (scripts/bench_plot.py, script kept as
    plot.gp, its data in data blocks): the sweep's efficiency against
    granularity per pattern, and the farm's efficiencies; each point the
    median over the rounds with a bar from the slowest round's efficiency
    to the fastest's."""
    q = bench_plot.quote
    metg = metg_tables(rows, cores)
    slowest, fastest = metg_tables(rows, cores, agg=max), metg_tables(rows, cores, agg=min)
    lines, blocks = [], []
    for pattern, peers in metg.items():
        for peer in [p for p in METG_PEERS if p in peers]:
            lo = {x[0]: x[4] for x in slowest[pattern][peer]}
            hi = {x[0]: x[4] for x in fastest[pattern][peer]}
            name = "%s_%s" % (pattern, peer.replace("-", "_"))
            lines += bench_plot.datablock(name, [(p[5], p[4], lo.get(p[0]), hi.get(p[0]))
                                                 for p in peers[peer] if p[4] is not None])
            blocks.append((pattern, peer, name))
    t, _ = farm_tables(rows)
    serial = median([r["elapsed_ns"] for r in t.get("serial", [])])
    farm = []
    for label in FARM_PEERS:
        el = summary([r["elapsed_ns"] for r in t.get(label, [])])
        if serial and el.n:
            eff = lambda ns: serial / (cores * ns)
            farm.append((len(farm), label, eff(el.median), eff(el.max), eff(el.min)))
    lines += bench_plot.datablock("farm", farm)
    lines += ["set multiplot layout 1,3 title %s" % q(bench_plot.spread_note(rounds)),
              "set bars 0.6"]
    for pattern in ("trivial", "stencil"):
        mine = [b for b in blocks if b[0] == pattern]
        if not mine:
            continue
        lines += ["set title 'METG sweep, %s'" % pattern, "set logscale x",
                  "set xlabel 'task granularity (us)'", "set ylabel 'efficiency'",
                  "set yrange [0:1.2]", "set key bottom right"]
        # One colour per peer in both panels.
        lines.append("plot " + ", ".join("$%s using 1:2:3:4 with yerrorlines pt 7 ps 0.6 lc %d "
                                         "title %s" % (n, METG_PEERS.index(peer) + 1, q(peer))
                                         for _, peer, n in mine)
                     + ", 0.5 with lines dashtype 2 title '50%'")
    lines += ["unset logscale x", "set title 'farm efficiency'", "set xlabel ''",
              "set style fill solid 0.8", "set boxwidth 0.6",
              "set xrange [-0.6:%g]" % (len(farm) - 0.4),
              "plot $farm using 1:3:xtic(2) with boxes notitle, "
              "$farm using 1:3:4:5 with yerrorbars lc rgb 'black' pt 7 ps 0.3 notitle",
              "unset multiplot"]
    return bench_plot.render(lines, os.path.join(out, "mpi.png"), 1400, 470, keep_script="plot.gp")


def write_summary(out, meta, a, params, launch, width, ipu, ipus, rows, notes, machine, seed,
                  have_omp, elapsed_s, failures, disturbed):
    md = io.StringIO()
    cores = launch.cores
    md.write("# The MPI mode's experiments\n\n")
    md.write("Machine: %s, %d usable CPUs (%s). Command: `%s`. %d rounds (%s), every run of a "
             "round in a random order (seed %d), medians over the rounds. Total %.0f s.\n\n"
             % (machine, launch.cpus, meta.get("cpu_model", "?"), meta["command"], a.rounds,
                "full" if a.full else "quick", seed, elapsed_s))
    md.write("Binding: %s. MPI: %s. Busy loop: %.1f iterations/us (highest of three "
             "calibrations: %s), passed to every run so every runtime executes the same "
             "iteration counts.\n\n" % (launch.binding, meta["run"].get("mpi", "?"), ipu,
                                          ", ".join("%.1f" % v for v in ipus)))
    la = meta.get("load_average", {})
    md.write("Load average (1, 5, 15 min) at the start: %s, at the end: %s (the machine is "
             "shared; other processes' load shows as spread between rounds).\n\n"
             % (la.get("start"), la.get("end")))
    known = [d for d in disturbed if d[4] is not None]
    if known:
        # Busy CPU time of processes other than the run's, over the run's wall time.
        heavy = [d for d in known if d[4] > 0.1 * d[3]]
        md.write("Other processes during the runs (/proc/stat busy time minus the runs' own "
                 "CPU time): median %.2f s of CPU per run; %d of %d runs had others using more "
                 "than 10%% of one CPU over the run (%s).\n\n" % (
                     median([d[4] for d in known]), len(heavy), len(known),
                     ", ".join("%s %s r%d: %.1f s in %.1f s" % (d[0], d[1], d[2], d[4], d[3])
                               for d in heavy[:12]) + (" ..." if len(heavy) > 12 else "")
                     if heavy else "none"))
    hw_notes = sorted(set(n.split(": ", 1)[-1] for n in notes if "counters missing" in n))
    md.write("Counters: getrusage of every run (summed over ranks, table at the end). "
             "Hardware counters (PAPI presets): %s.\n\n"
             % ("**missing** (%s)" % "; ".join(hw_notes) if hw_notes
                else "read where the runs report them (mpi.csv, PAPI_* columns)"))
    if failures:
        md.write("**Runs that failed** (see raw.log): %s\n\n" % ", ".join(failures))

    # 1. grab
    grab, checks = grab_tables(rows)
    md.write("## 1. Chunk grab latency (target <= 1 us)\n\n")
    md.write("One grab = `MPI_Fetch_and_op(MPI_SUM)` + `MPI_Win_flush` on a counter in rank 0's "
             "window (`MPI_Win_allocate`, `MPI_Win_lock_all(MPI_MODE_NOCHECK)`, as "
             "mpi/ledger.c). Per run: the median of %d inner rounds of %d grabs; "
             "here the median over rounds, ns per grab. *remote*: rank 1 grabs, rank 0 waits in "
             "MPI_Barrier; *local*: rank 0 grabs its own counter; *remote-busy*: rank 1 grabs "
             "while rank 0 computes outside MPI for 20 ms, as the farm's rank 0 does (median "
             "grab, and *worst* grab); *contended*: both ranks grab at once. Command: `%s`.\n\n"
             % (params["inner"], params["grabs"],
                " ".join(launch.cmd("mpi_grab", ["--grabs", str(params["grabs"]), "--inner",
                                                 str(params["inner"])]))))
    cases = ["remote", "local", "remote-busy", "remote-busy-worst", "contended-rank0",
             "contended-rank1"]
    md.write("| osc component | " + " | ".join(cases) + " | remote / local | counter check |\n")
    md.write("|---|" + "---:|" * (len(cases) + 2) + "\n")
    for label in ["default"] + ["osc-" + o for o in OSC_FORCED]:
        if label not in grab:
            if any(f.startswith("grab %s " % label) for f in failures):
                md.write("| %s | failed (raw.log) |\n" % label)
            continue
        g = grab[label]
        ratio = g["remote"] / g["local"] if g.get("remote") and g.get("local") else None
        ok = checks.get(label, [])
        md.write("| %s | %s | %s | %s |\n" % (
            label, " | ".join(fmt(g.get(c), "%.0f") for c in cases), fmt(ratio, "%.2f"),
            "ok" if ok and all(ok) else "FAILED" if ok else "-"))
    d = grab.get("default", {})
    if d:
        md.write("\nDefault component: remote grab %s ns (target <= 1000 ns: %s), local %s ns, "
                 "ratio remote/local %s.\n\n" % (
                     fmt(d.get("remote"), "%.0f"),
                     "met" if d.get("remote") and d["remote"] <= 1000 else "NOT met",
                     fmt(d.get("local"), "%.0f"),
                     fmt(d["remote"] / d["local"] if d.get("remote") and d.get("local") else None,
                         "%.2f")))
    md.write("A *remote-busy-worst* near 20 ms means the grab waited for rank 0 to enter MPI: "
             "the component needs the target's progress (pt2pt, ucx here), and the farm's rank 0 "
             "makes MPI calls only for its own grabs and its heartbeat.\n\n")

    # 2. farm
    t, work = farm_tables(rows)
    md.write("## 2. Load-imbalanced farm (targets: guided >= 0.9, static <= 0.6, ultrapool "
             "faster than MPI + OpenMP)\n\n")
    md.write("%d tasks, costs Pareto(alpha %s, capped at %s x the minimum) x %s in the first "
             "half of the index space, scaled to %d ms of single-core work, the same seed (%s) "
             "on every rank; each task a busy loop of its cost in iterations. A static split "
             "over %d ranks leaves %s of the work on the heaviest rank (static efficiency "
             "bound %s); the largest task is %s of the work. Efficiency = (single-threaded time "
             "/ %d cores) / elapsed. Commands: `%s`, and the same with `farm --peer serial` "
             "under `-np 1` (single-threaded) and `mpi_omp farm --peer omp`.\n\n"
             % (params["farm_n"], work.get("alpha"), work.get("cap"), work.get("heavy"),
                params["farm_ms"], work.get("seed"), launch.ranks,
                fmt(work.get("static_heaviest_share"), "%.3f"),
                fmt(1 / (launch.ranks * work["static_heaviest_share"])
                    if work.get("static_heaviest_share") else None, "%.3f"),
                fmt(work.get("largest_task_share"), "%.4f"), cores,
                " ".join(launch.cmd("mpi_up", ["farm", "--peer", "up-guided", "--n",
                                               str(params["farm_n"]), "--work-ms",
                                               str(params["farm_ms"]), "--ipu", "%.1f" % ipu]))))
    serial = median([r["elapsed_ns"] for r in t.get("serial", [])])
    farm_eff = []
    md.write("| run | elapsed ms (median) | min .. max | efficiency | time / up-guided | "
             "items rank 0 / rank 1 | chunks rank 0 / rank 1 | checksum |\n")
    md.write("|---|---:|---:|---:|---:|---:|---:|---|\n")
    ref = median([r["elapsed_ns"] for r in t.get("up-guided", [])])
    sums = set()
    order = ["serial"] + FARM_PEERS + ["%s/osc-%s" % (p, o) for o in FARM_OSC
                                        for p in ("up-guided", "up-dynamic")]
    effs = {}
    for label in order:
        rs = t.get(label)
        if not rs:
            continue
        el = median([r["elapsed_ns"] for r in rs])
        eff = serial / (cores * el) if serial and label != "serial" else None
        effs[label] = eff
        if eff is not None and "/" not in label:
            farm_eff.append((label, eff))
        first = rs[len(rs) // 2]
        items = "%s / %s" % (first.get("items_r0", "-"), first.get("items_r1", "-")) \
            if label != "serial" else "-"
        chunks = "%s / %s" % (first.get("chunks_r0", "-"), first.get("chunks_r1", "-")) \
            if label != "serial" else "-"
        cs = set(r["checksum"] for r in rs)
        sums |= cs
        md.write("| %s | %.1f | %.1f .. %.1f | %s | %s | %s | %s | %s |\n" % (
            label, el / 1e6, min(r["elapsed_ns"] for r in rs) / 1e6,
            max(r["elapsed_ns"] for r in rs) / 1e6, fmt(eff, "%.3f"),
            fmt(el / ref if ref else None, "%.2f"), items, chunks,
            "same" if len(cs) == 1 else "DIFFERS"))
    idle = []
    for label, rs in t.items():
        for r in rs:
            zero = [k[len("items_r"):] for k, v in r.items() if k.startswith("items_r") and v == 0]
            if zero:
                idle.append("%s (round %d: rank %s)" % (label, r["round"], ", ".join(zero)))
    if idle:
        md.write("\nRuns in which a rank ran no index at all: %s.\n" % "; ".join(sorted(idle)))
    md.write("\nChecksums of all farm runs %s.\n\n" % (
        "agree (every index ran once, with the same result)" if len(sums) == 1
        else "DIFFER between runs"))
    md.write("Against the targets: guided %s (>= 0.9: %s), dynamic %s, static %s (<= 0.6: %s), "
             "MPI + OpenMP %s; MPI + OpenMP time / up-guided time = %s (ultrapool faster: %s).\n\n"
             % (fmt(effs.get("up-guided"), "%.3f"),
                "met" if (effs.get("up-guided") or 0) >= 0.9 else "NOT met",
                fmt(effs.get("up-dynamic"), "%.3f"), fmt(effs.get("up-static"), "%.3f"),
                "met" if effs.get("up-static") is not None and effs["up-static"] <= 0.6
                else "NOT met", fmt(effs.get("omp"), "%.3f") if have_omp else "left out",
                fmt(effs["up-guided"] / effs["omp"] if effs.get("omp") and effs.get("up-guided")
                    else None, "%.2f"),
                "yes" if effs.get("omp") and effs.get("up-guided") and
                effs["up-guided"] > effs["omp"] else "no" if effs.get("omp") else "-"))

    # 3. METG
    metg = metg_tables(rows, cores)
    md.write("## 3. Task Bench-style METG (targets: trivial <= 1 us, stencil <= 5 us)\n\n")
    md.write("Width %d columns (ranks x cores per rank) in contiguous blocks over %d ranks; "
             "T steps, chosen per grain for about %d us of work per core (20 .. 20000 steps); "
             "each task a busy loop of the grain. trivial: no dependencies; stencil: column c "
             "at step t needs c-1, c, c+1 at t-1, block edges exchanged with the neighbour "
             "ranks by MPI_Isend/MPI_Irecv every step. Both go step by step. Efficiency = "
             "tasks x single-task time (the task alone, same pattern, same grain) / (elapsed x "
             "%d cores); granularity = elapsed x cores / tasks. METG(50%%) = the granularity "
             "where efficiency crosses 50%%, interpolated between the two grains around it. "
             "Peers: *up-region* = one up_parallel region on the rank's pool around the whole "
             "time loop (member 0, the main thread, exchanges the edges; up_barrier; up_for "
             "over the step's columns); *up* = up_parallel_for per step; *up-group* = one pool "
             "task per column through an up_group, then up_group_wait; *omp-region* = the "
             "same as up-region with `#pragma omp parallel` / `master` / `barrier` / `for`; "
             "*omp* = `#pragma omp parallel for schedule(static)` per step. Command: `%s`.\n\n"
             % (width, launch.ranks, params["budget_us"], cores,
                " ".join(launch.cmd("mpi_up", ["metg", "--peer", "up-region", "--pattern", "stencil",
                                               "--grains-us", "...", "--budget-us",
                                               str(params["budget_us"]), "--width", str(width),
                                               "--ipu", "%.1f" % ipu]))))
    metg_min = metg_tables(rows, cores, agg=min)
    md.write("| pattern | peer | METG(50%) us | how | METG, fastest round per grain | "
             "efficiency at 1 us grain | overhead per step at the smallest grain (us) |\n"
             "|---|---|---:|---|---:|---:|---:|\n")
    metg_vals = {}
    for pattern in ("trivial", "stencil"):
        for peer in METG_PEERS:
            pts = metg.get(pattern, {}).get(peer)
            if not pts:
                continue
            v, how = metg_of(pts)
            metg_vals[(pattern, peer)] = v
            at1 = [p[4] for p in pts if abs(p[0] - 1) < 1e-9]
            last = pts[-1]
            # elapsed per step minus the step's share of work per core
            steps_over = (last[1] / (last[2] / width) - last[3] * width / cores) / 1000.0 \
                if last[3] else None
            vmin, _ = metg_of(metg_min.get(pattern, {}).get(peer, []))
            md.write("| %s | %s | %s | %s | %s | %s | %s |\n" % (
                pattern, peer, fmt(v, "%.3f"), how, fmt(vmin, "%.3f"),
                fmt(at1[0] if at1 else None, "%.3f"), fmt(steps_over, "%.3f")))
    md.write("\nThe fastest-round column takes, at each grain, the round with the shortest "
             "elapsed time: other processes on the machine only ever slow a run down. "
             "Task Bench paper, MPI on a Cray: trivial 0.39 us, stencil 4.6 us.\n\n")
    ratios = []
    for pattern in ("trivial", "stencil"):
        for u_name, o_name in (("up-region", "omp-region"), ("up", "omp"), ("up-region", "omp")):
            u, o = metg_vals.get((pattern, u_name)), metg_vals.get((pattern, o_name))
            if u and o:
                ratios.append("%s: %s / %s = %.2f" % (pattern, u_name, o_name, u / o))
    if ratios:
        md.write("METG ratios (below 1: ultrapool reaches 50%% efficiency at finer tasks): "
                 "%s.\n\n" % "; ".join(ratios))
    best = []
    for pattern, target in (("trivial", 1.0), ("stencil", 5.0)):
        v = metg_vals.get((pattern, METG_MAIN[0]))
        best.append("%s %s us (target <= %g: %s)" % (
            pattern, fmt(v, "%.3f"), target,
            "met" if v is not None and v <= target else "NOT met" if v is not None else "-"))
    md.write("Against the targets (%s, the fastest ultrapool way here): %s. Why that way: "
             "with one CPU per rank the team of a region is the calling thread alone, so a "
             "step inside a kept region costs a barrier and an up_for; up_parallel_for opens "
             "a region every step, and a pool task per column hands each task to the pool's "
             "worker thread, which shares the rank's core with the caller (see its "
             "involuntary context switches below).\n\n" % (METG_MAIN[0], "; ".join(best)))
    for pattern in ("trivial", "stencil"):
        md.write("### %s: efficiency by grain (medians)\n\n" % pattern)
        peers = [p for p in METG_PEERS if p in metg.get(pattern, {})]
        if not peers:
            continue
        md.write("| grain us | task alone ns | " + " | ".join(
            "%s eff | %s gran us" % (p, p) for p in peers) + " | checksums |\n")
        md.write("|---:|---:|" + "---:|---:|" * len(peers) + "---|\n")
        grains = [p[0] for p in metg[pattern][peers[0]]]
        for gi, g in enumerate(grains):
            cells, sums = [], set()
            task_ns = None
            for p in peers:
                pts = {x[0]: x for x in metg[pattern][p]}
                x = pts.get(g)
                if x:
                    task_ns = x[3]
                    sums |= set(x[6])
                cells.append("%s | %s" % (fmt(x[4] if x else None, "%.3f"),
                                          fmt(x[5] if x else None, "%.3f")))
            md.write("| %g | %s | %s | %s |\n" % (g, fmt(task_ns, "%.1f"), " | ".join(cells),
                                                 "same" if len(sums) == 1 else "DIFFER"))
        md.write("\n")

    # usage
    md.write("## Usage counters (getrusage, summed over ranks; medians over rounds)\n\n")
    md.write("Hardware counters (PAPI_TOT_CYC, PAPI_TOT_INS, PAPI_L1_DCM, PAPI_L2_DCM, "
             "PAPI_L3_TCM, PAPI_BR_MSP, through experiments/counters.h): %s. The metg rows "
             "cover the whole sweep of a run.\n\n"
             % ("missing in every run (%s)" % "; ".join(hw_notes) if hw_notes
                else "see mpi.csv"))
    md.write("| experiment | run | user ms | system ms | voluntary switches | involuntary |\n"
             "|---|---|---:|---:|---:|---:|\n")
    for (exp, label), rs in sorted(usage_table(rows).items()):
        md.write("| %s | %s | %.0f | %.0f | %.0f | %.0f |\n" % (
            exp, label, median([r["utime_ms"] for r in rs]), median([r["stime_ms"] for r in rs]),
            median([r["nvcsw"] for r in rs]), median([r["nivcsw"] for r in rs])))
    md.write("\n")
    return md.getvalue(), metg, farm_eff, effs, metg_vals
