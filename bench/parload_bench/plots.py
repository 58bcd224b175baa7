"""Plots (gnuplot): bars with the middle 50% as whiskers, the view-size
sweep and the thread scaling."""
import os
import subprocess

from . import log
from .sessions import EXPERIMENTS
from .medians import summary, sweep_series
from .tables import table_rows


def gp_quote(s):
    return '"%s"' % s.replace('"', "'")


def run_gnuplot(tools, out, name, script):
    gp = os.path.join(out, name + ".gp")
    with open(gp, "w") as f:
        f.write(script)
    r = subprocess.run([tools.gnuplot, gp], capture_output=True, text=True)
    if r.returncode != 0:
        log("  gnuplot failed for %s: %s" % (name, r.stderr.strip()[-300:]))
        return None
    return name + ".png"


def choose_terminal(tools):
    r = subprocess.run([tools.gnuplot, "-e", "set terminal"],
                       capture_output=True, text=True)
    tools.term = "pngcairo" if "pngcairo" in r.stdout + r.stderr else "png"


def plot_bars(tools, out, name, title, rows):
    if not rows:
        return None
    dat = os.path.join(out, name + ".dat")
    with open(dat, "w") as f:
        for s, p, t in rows:
            label = p.label()
            if name in ("exp5", "exp6"):
                label = "%s, %s" % (label, s.cache)
            elif name in ("exp7", "exp9"):
                label = "%s: %s" % (s.stream.name, label)
            f.write("%s %.6f %.6f %.6f\n" % (gp_quote(label), t["median"] * 1e3,
                                             t["q1"] * 1e3, t["q3"] * 1e3))
    width = max(900, 60 * len(rows) + 200)
    script = """
set terminal {term} size {w},650
set output {png}
set title {title}
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set boxwidth 0.8
set ylabel "ms from open to complete (median; whiskers: middle 50%)"
set yrange [0:*]
set xtics rotate by -40 scale 0 font ",9"
set grid ytics
set bmargin 12
plot {dat} using 2:3:4:xtic(1) notitle lc rgb "#3b6ea8"
""".format(term=tools.term, w=width,
           png=gp_quote(os.path.join(out, name + ".png")),
           title=gp_quote(title), dat=gp_quote(dat))
    return run_gnuplot(tools, out, name, script)


def plot_sweep(tools, out, series):
    if not series:
        return []
    dat = os.path.join(out, "exp3.dat")
    with open(dat, "w") as f:
        f.write("# payload r_v2posix r_v2stdio r_v3posix r_v3stdio best_ms "
                "parallel_ms floor_ms v2posix_ms\n")
        for size, _, ratios, _, best, par, floor, v2 in series:
            vals = ["%.4f" % r if r else "NaN" for r in ratios]
            vals += ["%.4f" % (x * 1e3) if x else "NaN"
                     for x in (best, par, floor, v2)]
            f.write("%d %s\n" % (size, " ".join(vals)))
    common = """
set terminal {term} size 1000,600
set logscale x 2
set format x "%.0b%B"
set xlabel "view payload (bytes)"
set grid
set key outside right
""".format(term=tools.term)

    def lines(name, title, ylabel, logy, curves):
        plot = ", \\\n     ".join(
            "%s using 1:%d with linespoints title %s" % (
                gp_quote(dat), col, gp_quote(text)) for col, text in curves)
        return common + """
set output {png}
set title {title}
set ylabel {ylabel}
set logscale y {logy}
plot {plot}
""".format(png=gp_quote(os.path.join(out, name + ".png")),
           title=gp_quote(title), ylabel=gp_quote(ylabel), logy=logy,
           plot=plot)

    a = lines("exp3-buffering", "Unbuffered / buffered time (above 1: the "
              "buffer wins)", "time ratio unbuffered / buffered", 2,
              [(2, "V2 posix (own 4 KiB)"), (3, "V2 stdio"),
               (4, "V3 posix (own 4 KiB)"), (5, "V3 stdio")])
    a = a.rstrip("\n") + ', \\\n     1 with lines lc rgb "black" notitle\n'
    b = lines("exp3-parallel", "parload parallel against the best article "
              "strategy", "ms (median)", 10,
              [(7, "parallel"), (6, "best article strategy"),
               (9, "V2 posix"), (8, "copy floor")])
    return [x for x in (run_gnuplot(tools, out, "exp3-buffering", a),
                        run_gnuplot(tools, out, "exp3-parallel", b)) if x]


def plot_threads(tools, out, sessions):
    rows = {}
    for s in sessions:
        if s.stream.name != "reference":
            continue
        for p in s.points:
            if 4 in p.exps or (5 in p.exps and p.strategy == "parallel"):
                if not p.runs:
                    continue
                key = (p.tool, s.cache)
                rows.setdefault(key, []).append((p.threads, summary(p.runs)))
    if not rows:
        return None
    dat = os.path.join(out, "exp4.dat")
    plots = []
    with open(dat, "w") as f:
        for i, (key, pts) in enumerate(sorted(rows.items())):
            f.write("# %s %s\n" % key)
            for t, (med, q1, q3) in sorted(pts):
                f.write("%d %.6f %.6f %.6f\n" % (t, med * 1e3, q1 * 1e3, q3 * 1e3))
            f.write("\n\n")
            name = "parallel" if key[0] == "parload" else "copy floor"
            plots.append("%s index %d using 1:2:3:4 with yerrorlines title %s" % (
                gp_quote(dat), i, gp_quote("%s, %s cache" % (name, key[1]))))
    script = """
set terminal {term} size 1000,600
set output {png}
set title "Thread scaling on the reference stream"
set xlabel "threads"
set ylabel "ms (median; bars: middle 50%)"
set yrange [0:*]
set xtics 1
set grid
set key outside right
plot {plots}
""".format(term=tools.term, png=gp_quote(os.path.join(out, "exp4.png")),
           plots=", \\\n     ".join(plots))
    return run_gnuplot(tools, out, "exp4", script)


# The experiments drawn as bars of their points.
BARS = (1, 2, 5, 6, 7, 9, 13)


def make_plots(tools, out, sessions, n):
    """{experiment: [png, ...]} of every plot drawn."""
    if not tools.gnuplot:
        return {}
    choose_terminal(tools)
    plots = {}
    for exp in BARS:
        rows = table_rows(sessions, exp, n)
        png = plot_bars(tools, out, "exp%d" % exp,
                        "%d. %s" % (exp, EXPERIMENTS[exp]), rows)
        plots[exp] = [png] if png else []
    plots[3] = plot_sweep(tools, out, sweep_series(sessions, n))
    png = plot_threads(tools, out, sessions)
    plots[4] = [png] if png else []
    return plots
