"""python -m parload FILE...: load files as the parload command does and
print its report, one line (or with --json one JSON object) per file.

The command's load of files of parload's own format: its load options
(OPTIONS below) are the library's settings (parload_settings_set), which
parse their values with the command's limits and messages.  The layout
options (--raw), --follow, --preallocate, the progress line, the embedded
default stream (no FILE) and the gen, info and extract commands are the C
command's alone.
"""

import argparse
import json
import sys

import parload
from parload import _parload

# The file header's flag: every view header holds its payload's CRC-32C
# (docs/FORMAT.md).
CRC32C = 1

DESCRIPTION = """\
Load raw image streams with parload.load and report, one line per FILE:
views, dimensions, pixel type, size, seconds from open until the dataset
is complete, GB/s (1 GB = 10^9 bytes), threads and strategy, as the
parload command does.  All FILEs are loaded by one parload.Loader.  A
FILE of - is standard input (named <stdin>)."""

EPILOG = """\
A selection that reaches past the end or selects nothing fails the file.
Exit status: 0 every file loaded; 1 a file failed, the others are still
loaded; 2 usage error.  The parload command (parload(1)) has the other
load options, the embedded default stream (no FILE), and gen, info and
extract."""


# The load options: each is the library's key of the same name, and
# whether it takes a value (its metavar) and its help.
OPTIONS = (
    ("threads", "N", "worker threads; 0 (the default) is one per core the "
     "process may run on"),
    ("strategy", "NAME", "parallel (the default), bulk, sequential, "
     "two-pass or mmap"),
    ("io", "NAME", "posix or stdio: the single-threaded strategies' I/O"),
    ("max-read", "SIZE", "largest single read (default 8M)"),
    ("verify", None, "check every payload against the CRC-32C in its view "
     "header; a bad view fails the file"),
    ("keep-going", None, "--verify, loading everything and listing the bad "
     "views"),
    ("verify-seed", "N", "check the data against 'parload gen --seed N'"),
    ("allow-truncated", None, "load the complete views of a file cut short"),
    ("no-bind", None, "do not bind workers or memory to NUMA nodes"),
    ("no-hugepages", None, "do not advise transparent huge pages"),
    ("map-sinograms", None, "copy sinograms straight from the file mapped "
     "into memory (see parload(1))"),
    ("cache", "MODE", "keep (the default), drop, direct or auto: what the "
     "load leaves in the page cache, as parload(1) says"),
    ("dataset", "PATH", "an HDF5 file's dataset"),
    ("frames", "F", "projections (the default), flats or darks of a "
     "DXchange or NXtomo file"),
    ("confine", None, "the files a file names must lie in its directory"),
    ("darks", "SRC", "correct by these dark frames (same: the file's own)"),
    ("flats", "SRC", "correct by these flat frames (same: the file's own)"),
    ("reduce", "NAME", "mean (the default) or median of the references"),
    ("minus-log", None, "then -ln(max(x, 1e-6))"),
    ("bin", "N", "average N x N pixels first"),
)
SELECTION = (
    ("views", "A:B[:S]", "views A to B (B excluded) in steps of S, as "
     "Python slices"),
    ("rows", "A:B", "detector rows A to B of each view"),
    ("cols", "A:B", "columns A to B of each row"),
    ("layout", "NAME", "views (the default) or sinograms"),
)


class Setting(argparse.Action):
    """--KEY [VALUE]: kept in order, as (key, value), for the library."""

    def __call__(self, parser, namespace, values, option_string=None):
        pairs = getattr(namespace, "settings", None) or []
        pairs.append((self.dest, None if self.nargs == 0 else values))
        namespace.settings = pairs


def add_setting(group, key, metavar, text, short=None):
    names = ("-" + short, "--" + key) if short else ("--" + key,)
    group.add_argument(*names, action=Setting, dest=key, metavar=metavar,
                       nargs=None if metavar else 0, help=text,
                       default=argparse.SUPPRESS)


def parser():
    p = argparse.ArgumentParser(
        prog="python -m parload", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE")
    for key, metavar, text in OPTIONS:
        add_setting(p, key, metavar, text, "t" if key == "threads" else None)
    p.add_argument("--json", action="store_true",
                   help="one JSON object per line per file instead")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing but errors; the exit status tells")
    p.add_argument("-V", "--version", action="version",
                   version="parload %s" % parload.__version__)
    sel = p.add_argument_group("selection (read only part of each file)")
    for key, metavar, text in SELECTION:
        add_setting(sel, key, metavar, text)
    return p


def human_bytes(n):
    if n < 1000:
        return "%d B" % n
    if n < 1000000:
        return "%.1f kB" % (n / 1e3)
    if n < 1000000000:
        return "%.1f MB" % (n / 1e6)
    return "%.2f GB" % (n / 1e9)


def selection_text(ds):
    """"views 0:10:4 of 10, rows 2:6 of 8, cols 0:16 of 16, layout views"."""
    h, v, r, c = ds.file_header, ds.views, ds.rows, ds.cols
    last = v[-1] + 1 if len(v) else v.start
    # Rows and columns as the command counts them: delivered (of a
    # binned load, bins) from the first.
    return ("views %d:%d:%d of %d, rows %d:%d of %d, cols %d:%d of %d, "
            "layout %s" % (v.start, last, v.step, h.view_count, r.start,
                           r.start + len(r), h.height, c.start,
                           c.start + len(c), h.width, ds.layout))


def report(label, ds, args, how):
    """The command's report line, or with --json its object."""
    h, st = ds.file_header, ds.stats
    file_bytes = h.file_header_size + h.view_count * (h.view_header_size +
                                                      h.payload_size)
    chosen = len(ds) * h.view_header_size + ds.pixels.nbytes
    size = chosen if how["selected"] else file_bytes
    seconds = st["seconds"]
    gbps = size / seconds / 1e9 if seconds > 0 else 0.0
    truncated = st["declared_views"] > h.view_count
    if args.json:
        return report_json(label, ds, how, file_bytes, chosen, gbps,
                           truncated)
    line = "%s: %d view%s %dx%d %s" % (label, len(ds),
                                       "" if len(ds) == 1 else "s",
                                       len(ds.cols), len(ds.rows),
                                       h.pixel_type)
    if how["selected"]:
        line += " (%s)" % selection_text(ds)
    if truncated:
        line += " (truncated: %d of %d views)" % (h.view_count,
                                                  st["declared_views"])
    if how["corrected"]:
        line += ", corrected to f32"
    line += ", %s in %s s, %.2f GB/s, %d thread%s (%s)" % (
        human_bytes(size), "%.4f" % seconds if seconds >= 0.001 else
        "%.6f" % seconds, gbps, st["threads"],
        "" if st["threads"] == 1 else "s", st["strategy"])
    if how["verify"]:
        line += ", " + ("no CRC-32C to verify" if not h.flags & CRC32C else
                        "CRC-32C mismatch" if ds.bad_views.size else
                        "CRC-32C verified")
    return line + cache_note(how["cache"], st["cache"])


def report_json(label, ds, how, file_bytes, chosen, gbps, truncated):
    h, st, v = ds.file_header, ds.stats, ds.views
    return json.dumps({
        "file": label, "views": len(ds), "view_start": v.start,
        "view_step": v.step, "rows": len(ds.rows),
        "row_start": ds.rows.start, "cols": len(ds.cols),
        "col_start": ds.cols.start, "layout": ds.layout,
        "file_views": h.view_count, "width": h.width,
        "height": h.height, "pixel_type": h.pixel_type,
        "bytes_per_pixel": h.bytes_per_pixel,
        "crc32c": bool(h.flags & CRC32C),
        "bytes": file_bytes, "selected_bytes": chosen,
        "bytes_read": st["bytes_read"], "read_calls": st["read_calls"],
        "seconds": round(st["seconds"], 9), "gbps": float("%.6g" % gbps),
        "threads": st["threads"], "strategy": st["strategy"],
        "io": "posix", "cache": st["cache"],
        "verified": how["seed"] is not None,
        "declared_views": st["declared_views"], "truncated": truncated,
        "crc_checked": st["crc_checked"],
        "bad_views": int(ds.bad_views.size),
        "format": ds.desc["format"],
        "strips_decoded": st["strips_decoded"], "codec": st["codec"],
        "serial": st["serial"]}, separators=(",", ":"),
        ensure_ascii=False)


def cache_note(asked, used):
    """", cache drop" when the mode used is not keep, and what was asked
    when it is not what ran, as the command says it."""
    if asked == used:
        return "" if used == "keep" else ", cache " + used
    if asked == "auto":
        return ", cache %s (auto)" % used
    if asked == "direct" and used == "drop":
        return ", cache drop (direct refused)"
    return ", cache %s (%s does not apply)" % (used, asked)


def joined(argv):
    """--views -3: as --views=-3: (argparse takes -3: for an option)."""
    out = []
    for word in argv:
        if out and out[-1] in ("--views", "--rows", "--cols"):
            out[-1] += "=" + word
        else:
            out.append(word)
    return out


def usage(text):
    """A usage error, said as the parload command says it: exit 2."""
    print("parload: %s\nTry 'python -m parload --help'." % text,
          file=sys.stderr)
    return 2


def how_of(loader_kw, load_kw, seed):
    """What the report needs of the settings."""
    whole = slice(None, None, None)
    corrected = bool(load_kw["darks"] or load_kw["flats"] or
                     load_kw["minus_log"] or load_kw["bin"] > 1)
    return {"verify": loader_kw["verify"], "cache": load_kw["cache"],
            "seed": seed, "corrected": corrected,
            "selected": corrected or load_kw["layout"] != "views" or
            any(load_kw[k] != whole for k in ("views", "rows", "cols"))}


def checked(label, ds, how):
    """--keep-going's bad views and --verify-seed, said on standard error
    as the command says them; whether the dataset passed."""
    ok = True
    for v in ds.bad_views:
        d = ds.desc
        print("parload: %s: view %d: payload CRC-32C mismatch (byte offset "
              "%d)" % (label, v, d["offset"] + int(v) * d["record_size"] +
                       d["header"]), file=sys.stderr)
        ok = False
    why = ds._verify_seed(how["seed"]) if how["seed"] is not None else None
    if why:
        print("parload: %s: %s" % (label, why), file=sys.stderr)
        ok = False
    return ok


def main(argv=None):
    args = parser().parse_args(joined(sys.argv[1:] if argv is None
                                      else argv))
    if args.files.count("-") > 1:
        parser().error("standard input (-) may be given once")
    try:
        loader_kw, load_kw, seed = _parload._settings(
            getattr(args, "settings", []))
    except ValueError as e:
        return usage(str(e))
    how = how_of(loader_kw, load_kw, seed)
    status = 0
    with parload.Loader(**loader_kw) as loader:
        for path in args.files:
            stdin = path == "-"
            label = "<stdin>" if stdin else path
            try:
                ds = loader.load(sys.stdin.buffer if stdin else path,
                                 **load_kw)
            except parload.Error as e:
                print("parload: %s" % e, file=sys.stderr)
                status = 1
                continue
            if not args.quiet:
                print(report(label, ds, args, how), flush=True)
            if not checked(label, ds, how):
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
