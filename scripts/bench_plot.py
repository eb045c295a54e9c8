"""The one way the benchmark scripts draw: gnuplot, driven from Python
(standard library only). Every plot of a results folder goes through here,
so that every image carries the same two things a reader needs to trust
it:

- its provenance, small in the bottom-right corner: the machine, the date
  and the commit of the run (bench_meta.provenance, from the folder's
  meta.json, runs.json or machine.md);
- what its marks are: the median over the run's rounds with a bar (or a
  band) for their spread, or a plain statement that a point is a single
  run where the data holds no repeats (spread_note).

Why gnuplot and not matplotlib: five of the six plotting scripts already
drew with it and scripts/setup installs it (gnuplot-nox; Homebrew's
gnuplot on macOS); it is a program found on PATH, so it works under any
python3 the scripts run with (a pyenv or a virtualenv cannot see Debian's
python3-matplotlib); and it draws everything these plots need: error bars,
bands, log scales, panels and text at a fixed place on the canvas.

A caller builds the gnuplot commands of its panels (datablock, quote)
and hands them to render(), which adds the terminal, the output file and
the provenance, runs gnuplot, and returns None or what went wrong.
"""
import os
import re
import shutil
import subprocess

import bench_meta

MISSING = ("gnuplot is not installed (Debian: apt-get install gnuplot-nox; "
           "scripts/setup bench installs it)")
PROVENANCE_TAG = 99  # the provenance label's number, clear of the callers' own labels


def gnuplot():
    return shutil.which("gnuplot")


def quote(text):
    """text as a gnuplot string in double quotes."""
    return '"%s"' % str(text).replace("\\", "\\\\").replace('"', '\\"')


def datablock(name, rows):
    """The lines of a gnuplot data block $name holding rows (sequences of
    numbers, written with %.6g, or strings, quoted); a row None is a blank
    line (a break in a line plot)."""
    out = ["$%s << EOD" % name]
    for row in rows:
        if row is None:
            out.append("")
            continue
        out.append(" ".join(quote(x) if isinstance(x, str) else "NaN" if x is None
                            else "%.6g" % x for x in row))
    out.append("EOD")
    return out


def spread_note(rounds, mark="points", bar="bars", unit="round"):
    """What a plot's marks are, for a caption: each mark the median over
    `rounds` rounds with a bar from the lowest to the highest, or, for one
    round, the plain fact that there is no spread to show."""
    if not rounds:
        return "%s: medians (the number of %ss is not recorded)" % (mark, unit)
    if rounds == 1:
        return "%s: one %s each, so no spread to show" % (mark, unit)
    return "%s: median of %d %ss; %s: lowest to highest %s" % (mark, rounds, unit, bar, unit)


STRIP_PX = 18  # the strip kept free for the provenance at the bottom of the image


def provenance_label(text, height):
    y = 0.5 * STRIP_PX / height
    return ("set label %d %s at screen 0.995,%.4f right front font ',8' tc rgb '#555555' "
            "noenhanced" % (PROVENANCE_TAG, quote(text), y))


def make_room(lines, height):
    """lines with every plot raised off the strip at the bottom where the
    provenance goes, so that it never sits on an axis label. A multiplot
    layout shrinks each panel about its centre (scale) and moves it
    (offset): raised by half the strip, shrunk by the strip, each panel
    keeps its top and frees the strip below itself, and the bottom row's
    is the image's strip. A single plot is simply drawn above it."""
    s = float(STRIP_PX) / height
    out, multi = [], False
    for l in lines:
        m = re.match(r"^(\s*set multiplot layout (\d+)\s*,\s*\d+)(.*)$", l)
        if m:
            multi = True
            rows = int(m.group(2))
            l = "%s%s scale 1,%.4f offset 0,%.4f" % (m.group(1), m.group(3), 1 - s * rows, s / 2)
        out.append(l)
    if not multi:
        out = ["set origin 0,%.4f" % s, "set size 1,%.4f" % (1 - s)] + out
    return out


def render(lines, png, width, height, results_dir=None, provenance=None, keep_script=None,
           enhanced=False):
    """Draws png (width x height pixels) with the gnuplot commands `lines`,
    which set up and plot the panels (and open and close a multiplot when
    there are several). The provenance line is bench_meta.provenance of
    results_dir (the folder png is in when not given) unless given. With
    keep_script (a file name), the whole script is also written there,
    beside png, and run from that folder, so that it redraws the image by
    itself (its data sit in data blocks). Text is plain unless enhanced
    (then "_" and "^" are markup: a caller that wants markup in one place,
    say 10^{%L} tic labels, marks its other texts noenhanced). Returns
    None, or why there is no image."""
    gp = gnuplot()
    if not gp:
        return MISSING
    folder = os.path.dirname(os.path.abspath(png))
    if provenance is None:
        provenance = bench_meta.provenance(results_dir or folder)
    head = ["set terminal %s size %d,%d font ',10'" % (
                "pngcairo" if has_cairo(gp) else "png", width, height),
            "set output %s" % quote(os.path.basename(png))]
    if not enhanced:
        head.append("set termoption noenhanced")
    # The label goes just before the last plot command: in a multiplot
    # every panel draws the labels set at its time, and one copy is
    # enough (drawn again, antialiased text turns bold).
    body = make_room(lines, height)
    last = max((i for i, l in enumerate(body) if l.lstrip().startswith("plot ")), default=None)
    if last is None:
        return "nothing to plot"
    body.insert(last, provenance_label(provenance, height))
    script = "\n".join(head + body) + "\n"
    if keep_script:
        with open(os.path.join(folder, keep_script), "w") as f:
            f.write(script)
        r = subprocess.run([gp, keep_script], cwd=folder, capture_output=True, text=True)
    else:
        r = subprocess.run([gp], input=script, cwd=folder, capture_output=True, text=True)
    if r.returncode != 0:
        return "gnuplot failed: %s" % r.stderr.strip()[:400]
    return None


def has_cairo(gp):
    r = subprocess.run([gp, "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (r.stdout + r.stderr)
