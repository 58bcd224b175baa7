"""Plots (gnuplot): bars with the middle 50% as whiskers, grouped by
what is compared, one colour per method with a legend, the group labels
whole and level under their bars (experiments 1, 2, 5, 6, 7, 9 and 13;
the floors drawn as lines where one floor holds for the whole chart, as
bars beside the loads where they differ from group to group); the
view-size sweep and the thread scaling as lines."""
import os
import subprocess

from . import log
from .sessions import EXPERIMENTS
from .medians import median, summary, sweep_series
from .points import EXTRA_TEXT, SINOGRAMS, V, plural
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


def plot_sweep(tools, out, series):
    if not series:
        return []
    dat = os.path.join(out, "exp3.dat")
    with open(dat, "w") as f:
        f.write("# payload r_v2posix r_v2stdio r_v3posix r_v3stdio best_ms "
                "parallel_ms floor_ms v2posix_ms fresh_ms\n")
        for size, _, ratios, _, best, par, floor, v2, fresh in series:
            vals = ["%.4f" % r if r else "NaN" for r in ratios]
            vals += ["%.4f" % (x * 1e3) if x else "NaN"
                     for x in (best, par, floor, v2, fresh)]
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
            "%s using 1:%d with linespoints lw 2 lc rgb \"%s\" title %s" % (
                gp_quote(dat), col, colour, gp_quote(text))
            for col, text, colour in curves)
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
              [(2, "V2 posix (own 4 KiB)", COLOURS["V2 sequential"]),
               (3, "V2 stdio", "#fdae6b"),
               (4, "V3 posix (own 4 KiB)", COLOURS["V3 two-pass"]),
               (5, "V3 stdio", "#bcbddc")])
    a = a.rstrip("\n") + ', \\\n     1 with lines lc rgb "black" notitle\n'
    b = lines("exp3-parallel", "parload parallel against the best article "
              "strategy", "ms (median)", 10,
              [(7, "parload parallel", COLOURS["parload parallel"]),
               (6, "best article strategy", "#e7298a"),
               (9, "V2 posix", COLOURS["V2 sequential"]),
               (8, "copy floor", COLOURS["copy floor"]),
               (10, "fresh-memory floor", COLOURS["fresh-memory floor"])])
    return [x for x in (run_gnuplot(tools, out, "exp3-buffering", a),
                        run_gnuplot(tools, out, "exp3-parallel", b)) if x]


# The lines of the thread scaling, by tool.
THREAD_LINES = {"parload": "parload parallel", "copyfloor": "copy floor",
                "freshfloor": "fresh-memory floor"}


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
            name = THREAD_LINES.get(key[0], key[0])
            plots.append("%s index %d using 1:2:3:4 with yerrorlines lw 2 "
                         "dt %d lc rgb \"%s\" title %s" % (
                             gp_quote(dat), i, 1 if key[1] == "warm" else 2,
                             COLOURS.get(name, "#333333"),
                             gp_quote("%s, %s cache" % (name, key[1]))))
    script = """
set terminal {term} size 1000,600
set output {png}
set title "Thread scaling on the reference stream"
set xlabel "threads"
set ylabel "ms (median; bars: middle 50%)"
set yrange [0:*]
set xrange [0.5:{xmax}]
set xtics 1
set grid
set key outside right
plot {plots}
""".format(term=tools.term, png=gp_quote(os.path.join(out, "exp4.png")),
           xmax="%.1f" % (max(t for pts in rows.values() for t, _ in pts)
                          + 0.5),
           plots=", \\\n     ".join(plots))
    return run_gnuplot(tools, out, "exp4", script)


# ---- grouped bars: experiments 1, 2 and 9 ----

# The colour of each method, the same in every chart.
COLOURS = {"V1 bulk": "#1b9e77", "V2 sequential": "#d95f02",
           "V3 two-pass": "#7570b3", "parload parallel": "#3b6ea8",
           "copy floor": "#8c8c8c", "fresh-memory floor": "#a6761d",
           "numpy memmap+slice+copy": "#66a61e",
           "parload full load + copy": "#e6ab02",
           "parload FILE (whole process)": "#9467bd", "numpy": "#bcbd22",
           "numpy fromfile+copy": "#b2df8a",
           "dd bs=1M": "#e7298a", "fio read bs=1M": "#17becf",
           "sinogram floor": "#c7c7c7",
           "sinogram floor (mapped file)": "#5f5f5f"}
OTHER_COLOURS = ("#8dd3c7", "#fb8072", "#80b1d3", "#fdb462")
# Pixels per bar, and about per character of a group's label.
UNIT_PX, CHAR_PX, LINE_CHARS = 46, 7, 16


def method(p):
    """What a bar's colour says: the loader or the floor."""
    names = {"copyfloor": "copy floor", "copyfloor-whole": "copy floor",
             "freshfloor": "fresh-memory floor",
             "sinofloor": "sinogram floor",
             "sinofloor-map": "sinogram floor (mapped file)",
             "uringfloor": "io_uring floor",
             "uringfloor-direct": "io_uring floor, O_DIRECT",
             "npselect": "numpy memmap+slice+copy",
             "selcopy": "parload full load + copy"}
    if p.tool in names:
        return names[p.tool]
    if p.tool == "npraw":
        return "numpy"
    if p.tool != "parload":
        return p.base_label()
    if p.strategy is None:
        return "parload FILE (whole process)"
    if p.strategy in V:
        return "%s %s" % (V[p.strategy], p.strategy)
    return "parload parallel" if p.strategy == "parallel" else p.strategy


# A group's words for the buffering of an article loader.
BUFFER_TEXT = {"none": "unbuffered", "stdio default": "default buffer",
               "4 KiB (own)": "own 4 KiB buffer"}


def group(s, p):
    """What a bar is compared within: the article loaders by API and
    buffer, the others by thread count; experiment 9 by selection; then
    the extra flags and the session's note."""
    if p.select is not None or p.tool == "npselect":
        text = p.select.name
    elif 9 in p.exps:
        text = "whole file"
    elif p.tool == "parload" and p.strategy in V:
        text = "%s, %s" % ("POSIX" if p.io == "posix" else p.io,
                           BUFFER_TEXT.get(p.buffer_text(),
                                           p.buffer_text() + " buffer"))
    else:
        text = plural(p.threads, "thread")
    if p.tool == "copyfloor-whole" or "--preallocate" in p.extra:
        text += ", into touched memory"
    for flag in p.extra:
        if flag != "--preallocate":
            text += ", " + EXTRA_TEXT.get(flag, flag)
    return text + (" [%s]" % s.note if s.note else "")


def group_by_cache(s, p):
    """Experiment 6: the cache state and the thread count."""
    return "%s cache, %s" % (s.cache, plural(p.threads, "thread"))


def group_by_file(s, p, threads=False):
    """Experiments 7 and 13: the file (its layout), the selection, the
    flags, and (threads) the thread count."""
    text = "file " + p.file(s).name
    if p.select is not None:
        text += ": " + p.select.name
    # The sinogram floors beside the loads of the whole file as sinograms.
    if p.tool in ("sinofloor", "sinofloor-map"):
        text += ": " + SINOGRAMS
    if p.tool == "sinofloor-map":
        text += ", " + EXTRA_TEXT["--map-sinograms"]
    for flag in p.extra:
        text += ", " + EXTRA_TEXT.get(flag, flag)
    if threads:
        text += ", " + plural(p.threads, "thread")
    return text


def wrap(text):
    """text in lines of about LINE_CHARS, broken at spaces."""
    lines = [""]
    for word in text.split():
        if lines[-1] and len(lines[-1]) + 1 + len(word) > LINE_CHARS:
            lines.append(word)
        else:
            lines[-1] = (lines[-1] + " " + word).strip()
    return lines


def layout(rows, group_of=group):
    """[(group, lines, [(x, method, stats)], centre)] and the x range: the
    bars of a group side by side, each group as wide as its label needs,
    a bar's width apart."""
    groups = []
    for s, p, t in rows:
        g = group_of(s, p)
        at = [x for x in groups if x[0] == g]
        if not at:
            groups.append((g, wrap(g), []))
            at = groups[-1:]
        at[0][2].append((method(p), t))
    out, x = [], 0.0
    for g, lines, bars in groups:
        need = max(len(line) for line in lines) * CHAR_PX / UNIT_PX + 0.3
        span = max(len(bars), need)
        first = x + (span - len(bars)) / 2 + 0.5
        out.append((g, lines, [(first + i, m, t) for i, (m, t) in
                               enumerate(bars)], x + span / 2))
        x += span + 0.8
    return out, x - 0.8


def value_text(v):
    return "%.1f" % v if v < 10 else "%.0f" % v


def grouped_script(tools, png, dat, title, groups, xmax, methods, floors,
                   logy):
    tics = ", ".join('"%s" %.2f' % ("\\n".join(lines).replace('"', "'"),
                                    centre)
                     for _, lines, _, centre in groups)
    lines = max(len(g[1]) for g in groups)
    # The title, then the legend (up to 3 rows), above the chart.
    keys = len(methods) + len(floors)
    top = 3 + min(3, keys) * 1.3
    plots = []
    for i, (m, colour) in enumerate(methods):
        plots.append('%s index %d using 1:2:(0.8) with boxes fs solid 0.85 '
                     'border lc rgb "#333333" lc rgb "%s" title %s' % (
                         gp_quote(dat), i, colour, gp_quote(m)))
        plots.append('%s index %d using 1:2:3:4 with yerrorbars ps 0 '
                     'lc rgb "black" notitle' % (gp_quote(dat), i))
        plots.append('%s index %d using 1:4:5 with labels offset 0,0.6 '
                     'font ",8" notitle' % (gp_quote(dat), i))
    for (text, ms_value), dt in zip(floors, (2, 4)):
        plots.append('%.6f with lines dt %d lw 2 lc rgb "#222222" title %s' %
                     (ms_value, dt, gp_quote("%s: %s ms" % (
                         text, value_text(ms_value)))))
    return """
set terminal {term} size {w},{h}
set output {png}
set label 1 {title} at screen 0.5, screen 0.985 center front font ",13"
set ylabel "ms from open to complete (median; whiskers: middle 50%)"
set xrange [0:{xmax}]
{yscale}
set xtics ({tics}) scale 0 font ",10"
set grid ytics
set key at screen 0.5, screen {keytop} center top horizontal maxrows 3 font ",10"
set tmargin {top}
set bmargin {bmargin}
plot {plots}
""".format(term=tools.term, w=max(900, int(xmax * UNIT_PX) + 200),
           h=650 + 14 * lines, png=gp_quote(png), title=gp_quote(title),
           xmax="%.2f" % xmax, yscale="set logscale y\nset yrange [*:*]" if logy
           else "set yrange [0:*]\nset offsets 0, 0, graph 0.08, 0", tics=tics, bmargin=2 + lines,
           top="%.1f" % top, keytop="%.3f" % (1 - 34.0 / (650 + 14 * lines)),
           plots=", \\\n     ".join(plots))


def plot_grouped(tools, out, name, title, rows, floors, group_of=group):
    """Bars grouped by what is compared (group_of(session, point)), one
    colour per method with a legend, the floors drawn as lines (floors:
    [(text, ms)])."""
    if not rows:
        return None
    groups, xmax = layout(rows, group_of)
    methods = []
    for _, _, bars, _ in groups:
        for _, m, _ in bars:
            if m not in methods:
                methods.append(m)
    others = iter(OTHER_COLOURS * 4)
    colours = [(m, COLOURS.get(m) or next(others)) for m in methods]
    dat = os.path.join(out, name + ".dat")
    with open(dat, "w") as f:
        for m in methods:
            f.write("# %s\n" % m)
            for _, _, bars, _ in groups:
                for x, bm, t in bars:
                    if bm == m:
                        f.write("%.2f %.6f %.6f %.6f %s\n" % (
                            x, t["median"] * 1e3, t["q1"] * 1e3,
                            t["q3"] * 1e3,
                            gp_quote(value_text(t["median"] * 1e3))))
            f.write("\n\n")
    meds = [t["median"] for _, _, bars, _ in groups for _, _, t in bars
            if t["median"]]
    logy = bool(meds) and max(meds) / min(meds) > 50
    script = grouped_script(tools, os.path.join(out, name + ".png"), dat,
                            title, groups, xmax, colours, floors, logy)
    return run_gnuplot(tools, out, name, script)


def session_floors(s, n):
    """[(text, ms)] of the session's copy floor and fresh-memory floor
    with every core."""
    out = []
    for tool, text in (("copyfloor", "copy floor"),
                       ("freshfloor", "fresh-memory floor")):
        x = median(s.find(lambda q, tool=tool: q.tool == tool and
                          q.threads == n))
        if x:
            out.append(("%s, %s" % (text, plural(n, "thread")), x * 1e3))
    return out


# What each experiment's bars are grouped by, and whether one floor (the
# first session's with every core) holds for the whole chart: experiment
# 6 compares the floors themselves, as bars, in both cache states; 7 and
# 13 compare files of their own (13's sinogram floors are bars beside
# its sinogram loads).
GROUP_OF = {6: group_by_cache, 7: lambda s, p: group_by_file(s, p, True),
            13: group_by_file}
FLOOR_LINES = (1, 2, 5)


def grouped_plots(tools, out, sessions, n, exp):
    """Experiment exp's grouped charts: one (experiment 9: one per file),
    the floors those of the first session that has them."""
    rows = table_rows(sessions, exp, n)
    title = "%d. %s" % (exp, EXPERIMENTS[exp])
    if exp != 9:
        floors = [] if exp not in FLOOR_LINES else next(
            (session_floors(s, n) for s, _, _ in rows
             if session_floors(s, n)), [])
        png = plot_grouped(tools, out, "exp%d" % exp, title, rows, floors,
                           GROUP_OF.get(exp, group))
        return [png] if png else []
    pngs = []
    for name in dict.fromkeys(s.stream.name for s, _, _ in rows):
        mine = [r for r in rows if r[0].stream.name == name]
        png = plot_grouped(tools, out, "exp9-%s" % name, "%s: file %s" % (
            title, name), mine, session_floors(mine[0][0], n))
        if png:
            pngs.append(png)
    return pngs


# The experiments drawn as bars of their points.
GROUPED = (1, 2, 5, 6, 7, 9, 13)


def make_plots(tools, out, sessions, n):
    """{experiment: [png, ...]} of every plot drawn."""
    if not tools.gnuplot:
        return {}
    choose_terminal(tools)
    plots = {exp: grouped_plots(tools, out, sessions, n, exp)
             for exp in GROUPED}
    plots[3] = plot_sweep(tools, out, sweep_series(sessions, n))
    png = plot_threads(tools, out, sessions)
    plots[4] = [png] if png else []
    return plots
