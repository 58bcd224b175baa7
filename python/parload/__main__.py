"""python -m parload FILE...: load files as the parload command does and
print its report, one line (or with --json one JSON object) per file.

The simple case of the command's load: the parallel strategy, --threads,
--verify, --allow-truncated, --cache and the selection (--views, --rows,
--cols, --layout).  The other load options, the embedded default stream (no FILE)
and the gen, info and extract commands are the C command's alone.
"""

import argparse
import json
import sys

import parload

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


def part(text, what, step):
    """A:B (or A:B:S when step) with parts omitted, as a slice."""
    words = text.split(":")
    if not 2 <= len(words) <= (3 if step else 2):
        raise argparse.ArgumentTypeError(
            "invalid %s '%s' (A:B%s)" % (what, text, "[:S]" if step else ""))
    try:
        return slice(*(int(w) if w.strip() else None for w in words))
    except ValueError:
        raise argparse.ArgumentTypeError(
            "invalid %s '%s' (integers)" % (what, text)) from None


def threads(text):
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n <= 4096:
        raise argparse.ArgumentTypeError(
            "invalid thread count '%s' (0 to 4096)" % text)
    return n


def parser():
    p = argparse.ArgumentParser(
        prog="python -m parload", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("-t", "--threads", type=threads, default=0, metavar="N",
                   help="worker threads; 0 (the default) is one per core "
                   "the process may run on")
    p.add_argument("--verify", action="store_true",
                   help="check every payload against the CRC-32C in its "
                   "view header; a bad view fails the file")
    p.add_argument("--allow-truncated", action="store_true",
                   help="load the complete views of a file cut short")
    p.add_argument("--cache", choices=("keep", "drop", "direct", "auto"),
                   default="keep", help="what the load leaves in the page "
                   "cache, as parload(1) says (default keep)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per line per file instead")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing but errors; the exit status tells")
    p.add_argument("-V", "--version", action="version",
                   version="parload %s" % parload.__version__)
    sel = p.add_argument_group("selection (read only part of each file)")
    sel.add_argument("--views", type=lambda s: part(s, "--views", True),
                     metavar="A:B[:S]", help="views A to B (B excluded) in "
                     "steps of S, as Python slices")
    sel.add_argument("--rows", type=lambda s: part(s, "--rows", False),
                     metavar="A:B", help="detector rows A to B of each view")
    sel.add_argument("--cols", type=lambda s: part(s, "--cols", False),
                     metavar="A:B", help="columns A to B of each row")
    sel.add_argument("--layout", choices=parload.layouts(), default="views",
                     help="views (the default) or sinograms")
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
    return ("views %d:%d:%d of %d, rows %d:%d of %d, cols %d:%d of %d, "
            "layout %s" % (v.start, last, v.step, h.view_count, r.start,
                           r.stop, h.height, c.start, c.stop, h.width,
                           ds.layout))


def report(label, ds, args, selected):
    """The command's report line, or with --json its object."""
    h, st = ds.file_header, ds.stats
    file_bytes = h.file_header_size + h.view_count * (h.view_header_size +
                                                      h.payload_size)
    chosen = len(ds) * (h.view_header_size +
                        len(ds.rows) * len(ds.cols) * h.bytes_per_pixel)
    size = chosen if selected else file_bytes
    seconds = st["seconds"]
    gbps = size / seconds / 1e9 if seconds > 0 else 0.0
    truncated = st["declared_views"] > h.view_count
    if args.json:
        v = ds.views
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
            "seconds": round(seconds, 9), "gbps": float("%.6g" % gbps),
            "threads": st["threads"], "strategy": st["strategy"],
            "io": "posix", "cache": st["cache"], "verified": False,
            "declared_views": st["declared_views"], "truncated": truncated,
            "crc_checked": st["crc_checked"],
            "bad_views": int(ds.bad_views.size),
            "format": ds.desc["format"],
            "strips_decoded": st["strips_decoded"],
            "serial": st["serial"]}, separators=(",", ":"),
            ensure_ascii=False)
    line = "%s: %d view%s %dx%d %s" % (label, len(ds),
                                       "" if len(ds) == 1 else "s",
                                       len(ds.cols), len(ds.rows),
                                       h.pixel_type)
    if selected:
        line += " (%s)" % selection_text(ds)
    if truncated:
        line += " (truncated: %d of %d views)" % (h.view_count,
                                                  st["declared_views"])
    line += ", %s in %s s, %.2f GB/s, %d thread%s (%s)" % (
        human_bytes(size), "%.4f" % seconds if seconds >= 0.001 else
        "%.6f" % seconds, gbps, st["threads"],
        "" if st["threads"] == 1 else "s", st["strategy"])
    if args.verify:
        line += ", " + ("CRC-32C verified" if h.flags & CRC32C else
                        "no CRC-32C to verify")
    return line + cache_note(args.cache, st["cache"])


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


def main(argv=None):
    args = parser().parse_args(joined(sys.argv[1:] if argv is None
                                      else argv))
    if args.files.count("-") > 1:
        parser().error("standard input (-) may be given once")
    sel = {"views": args.views, "rows": args.rows, "cols": args.cols,
           "layout": args.layout}
    selected = any(sel[k] is not None for k in ("views", "rows", "cols")) \
        or args.layout != "views"
    status = 0
    with parload.Loader(threads=args.threads, verify=args.verify,
                        allow_truncated=args.allow_truncated) as loader:
        for path in args.files:
            stdin = path == "-"
            label = "<stdin>" if stdin else path
            try:
                ds = loader.load(sys.stdin.buffer if stdin else path,
                                 cache=args.cache, **sel)
            except parload.Error as e:
                print("parload: %s" % e, file=sys.stderr)
                status = 1
                continue
            if not args.quiet:
                print(report(label, ds, args, selected), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
