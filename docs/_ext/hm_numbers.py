"""Numbers in prose, read from the recorded run, so that a chapter's sentences cannot drift
from results/h200/ when it is re-recorded.  Each role takes space-separated arguments and
renders one number; a missing result fails the build.

    :hm-ratio:`IMPL DTYPE SHAPE PROTOCOL`        IMPL's ratio to cuBLAS            1.038
    :hm-vs:`IMPL BASE DTYPE SHAPE PROTOCOL`      IMPL's time ratio over BASE's       1.050
    :hm-gain:`IMPL BASE DTYPE SHAPE PROTOCOL`    the same as a signed percentage     +5.0%
    :hm-geomean:`IMPL DTYPE FAMILY [BASE]`       geometric mean over a benchmark family
                                                 of the ratio to cuBLAS (or to BASE) 1.032
    :hm-range:`IMPL DTYPE FAMILY [BASE]`         the lowest and highest of those     0.957–1.018
    :hm-tflops:`IMPL DTYPE SHAPE`                TFLOPS in the benchmark             687
    :hm-commit:`PROTOCOL`                        the commit the run was recorded at  bc9773f

SHAPE is MxNxK, or FAMILY/MxNxK where a shape is in two benchmark families.  PROTOCOL is
``alt`` (alternating: the benchmark, results/h200/bench.json), ``sust`` (sustained: the
8192³ ladder, ladder_DTYPE.json) or ``sweep`` (the sustained sweep, sweep_bf16.json).
"""
import os
import sys

from docutils import nodes

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from hm_results import geomean, load, pick  # noqa: E402

_cache = {}


class NumberError(Exception):
    pass


def _rows(app, protocol, dtype):
    results = os.path.dirname(app.config.hm_results)
    path = {"alt": app.config.hm_results,
            "sust": os.path.join(results, f"ladder_{dtype}.json"),
            "sweep": os.path.join(results, f"sweep_{dtype}.json")}.get(protocol)
    if path is None:
        raise NumberError(f"protocol '{protocol}' is not alt, sust or sweep")
    if not os.path.exists(path):
        raise NumberError(f"no recorded results at {path}")
    app.env.note_dependency(path)
    if path not in _cache:
        _cache[path] = load(path)
    return _cache[path]


def _row(app, impl, dtype, shape, protocol):
    family, _, dims = shape.rpartition("/")
    try:
        m, n, k = (int(x) for x in dims.split("x"))
    except ValueError:
        raise NumberError(f"bad shape '{shape}' (expected MxNxK or FAMILY/MxNxK)")
    rows, _ = _rows(app, protocol, dtype)
    found = pick(rows, impl, dtype, (m, n, k), family or None)
    if found is None:
        raise NumberError(f"no {protocol} result for {impl} {dtype} {shape}")
    return found


def _args(text, counts):
    args = text.split()
    if len(args) not in counts:
        raise NumberError(f"expected {' or '.join(map(str, counts))} arguments, got '{text}'")
    return args


def ratio(app, text):
    impl, dtype, shape, protocol = _args(text, [4])
    return f"{_row(app, impl, dtype, shape, protocol)['ratio']:.3f}"


def _vs(app, text):
    impl, base, dtype, shape, protocol = _args(text, [5])
    return (_row(app, impl, dtype, shape, protocol)["ratio"] /
            _row(app, base, dtype, shape, protocol)["ratio"])


def vs(app, text):
    return f"{_vs(app, text):.3f}"


def gain(app, text):
    g = 100 * (_vs(app, text) - 1)
    return f"{'+' if g >= 0 else '−'}{abs(g):.1f}%"


def _family(app, text):
    """The ratios over a benchmark family, to cuBLAS or to BASE, shape by shape."""
    args = _args(text, [3, 4])
    impl, dtype, family = args[:3]
    rows, _ = _rows(app, "alt", dtype)
    mine = {(r["m"], r["n"], r["k"]): r["ratio"] for r in rows
            if r["impl"] == impl and r["dtype"] == dtype and r["family"] == family}
    if not mine:
        raise NumberError(f"no {family} results for {impl} {dtype}")
    if len(args) == 4:
        base = {(r["m"], r["n"], r["k"]): r["ratio"] for r in rows
                if r["impl"] == args[3] and r["dtype"] == dtype and r["family"] == family}
        if set(base) != set(mine):
            raise NumberError(f"{args[3]} and {impl} differ in their {family} shapes")
        return [mine[s] / base[s] for s in mine]
    return list(mine.values())


def geomean_role(app, text):
    return f"{geomean(_family(app, text)):.3f}"


def range_role(app, text):
    values = _family(app, text)
    return f"{min(values):.3f}–{max(values):.3f}"


def tflops(app, text):
    impl, dtype, shape = _args(text, [3])
    return f"{_row(app, impl, dtype, shape, 'alt')['tflops']:.0f}"


def commit(app, text):
    (protocol,) = _args(text, [1])
    _, env = _rows(app, protocol, "bf16")
    return str(env.get("commit", "?"))


def _role(fn):
    def role(name, rawtext, text, lineno, inliner, options=None, content=None):
        app = inliner.document.settings.env.app
        try:
            value = fn(app, text)
        except NumberError as e:
            msg = inliner.reporter.error(f"{name}: {e}", line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        if "nan" in value or "inf" in value:
            msg = inliner.reporter.error(f"{name}: '{text}' is not a number", line=lineno)
            return [inliner.problematic(rawtext, rawtext, msg)], [msg]
        return [nodes.Text(value)], []
    return role


def setup(app):
    for name, fn in (("hm-ratio", ratio), ("hm-vs", vs), ("hm-gain", gain),
                     ("hm-geomean", geomean_role), ("hm-range", range_role), ("hm-tflops", tflops),
                     ("hm-commit", commit)):
        app.add_role(name, _role(fn))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
