"""The targets of corrected sinograms (experiment 16): the correction's
cost over the raw load that writes the same output bytes, its lead over
NumPy's pipeline, and the corrected load's peak RSS, each from points
interleaved in the one session of experiment 16."""
from . import MIB
from .correct import BAND, CORRECTED, WHOLE, CorrectedScan
from .target import Measured, Note, Pick, Target, paired, ratio


def corr(mode, select, ptype=None):
    """parload.load() through bench/corrload.py: mode corrected or numpy
    (of the scan with its references), or raw of the file of pixel type
    ptype, of select."""
    def pred(p, n):
        return p.tool == "corrload" and p.mode == mode and \
            p.select is select and (ptype is None or (
                p.stream.ptype if p.stream else "u16") == ptype)
    return Pick("reference", "warm", pred, note=CORRECTED)


def command(corrected):
    """The command's whole-file sinograms: corrected, or the raw load of
    the float32 file."""
    return Pick("reference", "warm", lambda p, n: (
        p.tool == "parload" and p.select is WHOLE and
        isinstance(p.stream, CorrectedScan) == corrected), note=CORRECTED)


def worst_of(f, text, verdict=True):
    """The larger of f(BAND) and f(WHOLE), two ratios, both named in the
    detail (text: what each is); verdict False: the detail alone (a
    note's)."""
    def value(run):
        ms = [(sel, f(sel)(run)) for sel in (BAND, WHOLE)]
        ms = [(sel, m) for sel, m in ms if m]
        if not ms:
            return None
        detail = "; ".join("%s %s %.2f%s" % (
            sel.name, text, m.value, " (%s)" % m.detail if m.detail else "")
            for sel, m in ms)
        return Measured(max(m.value for _, m in ms) if verdict else None,
                        detail)
    return value


def over_f32(sel):
    return paired(corr("corrected", sel), corr("raw", sel, "f32"))


def over_u16(sel):
    return ratio(corr("corrected", sel), corr("raw", sel, "u16"))


def rss_over(run):
    """The command's corrected whole-file load: peak RSS - (the float32
    sinograms and view headers it delivers + the darks' and flats' means
    of every row, float32), MiB."""
    pick = command(True)
    p = pick.point(run)
    rss = run.get(Pick(pick.file, pick.cache, pick.pred, "peak_rss_kib",
                       note=CORRECTED)) if p else None
    if not rss:
        return None
    st = p.stream
    refs = 2 * st.width * st.height * 4
    need = WHOLE.output(st) + refs
    return Measured((rss * 1024 - need) / MIB, "peak %.1f MiB, output %.1f "
                    "MiB, means %.2f MiB" % (rss / 1024, WHOLE.output(st) /
                                             MIB, refs / MIB))


CORRECT_TARGETS = [
    Target("18a", "Corrected sinograms", "16",
           "parload.load() corrected -log float32 sinograms / the raw "
           "sinogram load of the same selection from a float32 file of the "
           "same shape, larger of the 32-row band and the whole file",
           worst_of(over_f32, "/ raw f32"), "<=", 1.25),
    Target("18b", "Corrected sinograms", "16",
           "NumPy pipeline (parload's raw load, astype, subtract, divide, "
           "log, negate) / parload.load() corrected, 32-row band",
           paired(corr("numpy", BAND), corr("corrected", BAND)), ">=", 3),
    Target("18c", "Corrected sinograms", "16",
           "`parload %s --layout sinograms FILE` peak RSS - (float32 "
           "output + the references' means)" % "--darks D --flats F "
           "--minus-log", rss_over, "<=", 16, "MiB"),
]

CORRECT_NOTES = [
    Note("18a", "parload.load() corrected / raw u16 sinograms of the same "
         "selection: %s.", worst_of(over_u16, "/ raw u16", False)),
    Note("18a", "The command's corrected whole-file sinograms / its raw "
         "load of the float32 file = %s.", ratio(command(True),
                                                command(False))),
]
