"""Numbers in prose, read from the recorded run, so that a chapter's sentences cannot drift
from results/h200/ when it is re-recorded.  Each role takes space-separated arguments and
renders one number; a missing result fails the build.

    :hm-ratio:`IMPL DTYPE SHAPE PROTOCOL`        IMPL's ratio to cuBLAS            1.038
    :hm-vs:`IMPL BASE DTYPE SHAPE PROTOCOL`      IMPL's time ratio over BASE's       1.050
    :hm-gain:`IMPL BASE DTYPE SHAPE PROTOCOL`    the same as a signed percentage     +5.0%
    :hm-geomean:`IMPL DTYPE FAMILY [BASE]`
                                                 geometric mean over a benchmark family
                                                 of the ratio to cuBLAS (or to BASE) 1.032
    :hm-range:`IMPL DTYPE FAMILY [BASE]`
                                                 the lowest and highest of those     0.957–1.018
    :hm-tflops:`IMPL DTYPE SHAPE`                TFLOPS in the benchmark             687
    :hm-hbm:`IMPL DTYPE SHAPE PROTOCOL`          IMPL's HBM TB/s over the read
                                                 bandwidth measured in the same run  71%
    :hm-hbm-range:`IMPL DTYPE PROTOCOL MAX_M`    the lowest and highest of those over
                                                 the decode shapes with M ≤ MAX_M    41–78%
    :hm-read:`DTYPE PROTOCOL`                    that read bandwidth, TB/s           4.52
    :hm-of-read:`IMPL DTYPE SHAPE PROTOCOL`      IMPL's HBM TB/s over the plain read's
                                                 of the same bytes (IMPL ``read``)   83%
    :hm-of-read-range:`IMPL DTYPE PROTOCOL MAX_M`
                                                 the lowest and highest of those over
                                                 the decode shapes with M ≤ MAX_M    80–97%
    :hm-commit:`PROTOCOL`                        the commit the run was recorded at  bc9773f
    :hm-us:`IMPL DTYPE SHAPE PROTOCOL`           IMPL's median time, µs              18.4
    :hm-host-us:`IMPL DTYPE FAMILY`              the median over a benchmark family
                                                 of IMPL's host launch call, µs      7.0

SHAPE is MxNxK, or FAMILY/MxNxK where a shape is in two benchmark families.  PROTOCOL is
``alt`` (alternating: the benchmark, results/h200/bench.json), ``sust`` (sustained: the
8192³ ladder, ladder_DTYPE.json), ``sweep`` (the sustained sweep, sweep_bf16.json),
``decode`` (the sustained sweep of the decode and waves shapes, sweep_decode_DTYPE.json) or
``shortk`` (the sustained sweep of the short-K family, sweep_shortk_DTYPE.json).
HBM TB/s is a row's fewest bytes over its median time (the benchmark's counter hbm_TBps, a
sweep result's hbm_tbps; cuBLAS's own row for IMPL ``cublas``); the read bandwidth is
hm::measure_hbm_read's, at the start of the same run (the benchmark context's hbm_read_TBps,
a sweep's hbm_read_tbps).  The plain read, implementation ``read`` in a sweep recorded with
``--read-roofline on``, is a launch that only reads the problem's fewest bytes, timed in the
same rounds.  The decode shapes are the benchmark's decode family in ``alt`` and,
in a sweep, which names no families, every shape with M ≤ 256 (the same shapes: 1…256 tokens).

And one directive:

.. hm-hbm-table:: DTYPE PROTOCOL [IMPL ...]
   Every decode shape of PROTOCOL's results in DTYPE, one row each: cuBLAS's share of the
   read bandwidth (and the plain read's, where the results have it), and for each IMPL (by
   default the last two versions in those results) its ratio to cuBLAS and its share; a
   last row gives the geometric mean of each IMPL's ratios.

.. hm-sms-table:: DTYPE SHAPE
   scripts/fewer_sms.sh's recorded table (results/h200/fewer_sms/table.json) at one shape,
   one row per implementation: in each green context its slowdown against the whole GPU and,
   in brackets, that over the ideal 132 / SMs; beside the busy kernel its slowdown and, in
   brackets, that over cuBLAS's own slowdown in the same run.
"""
import json
import os
import statistics
import sys

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from hm_results import geomean, load, pick, versions_in  # noqa: E402

_cache = {}


class NumberError(Exception):
    pass


def _path(app, protocol, dtype):
    results = os.path.dirname(app.config.hm_results)
    path = {"alt": app.config.hm_results,
            "sust": os.path.join(results, f"ladder_{dtype}.json"),
            "sweep": os.path.join(results, f"sweep_{dtype}.json"),
            "decode": os.path.join(results, f"sweep_decode_{dtype}.json"),
            "shortk": os.path.join(results, f"sweep_shortk_{dtype}.json")}.get(protocol)
    if path is None:
        raise NumberError(f"protocol '{protocol}' is not alt, sust, sweep, decode or "
                          "shortk")
    return path


def _rows(app, protocol, dtype):
    path = _path(app, protocol, dtype)
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
    """The ratios over a benchmark family, to cuBLAS or to BASE, shape by shape, in the
    benchmark."""
    args = _args(text, [3, 4])
    protocol = "alt"
    impl, dtype, family = args[:3]
    rows, _ = _rows(app, protocol, dtype)
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


def _read_bandwidth(app, dtype, protocol):
    """The HBM read bandwidth measured at the start of the run, TB/s."""
    _, env = _rows(app, protocol, dtype)
    if env.get("hbm_read_tbps") is None:
        raise NumberError(f"the {protocol} {dtype} results record no measured HBM read bandwidth")
    return env["hbm_read_tbps"]


def _hbm_share(app, row, protocol):
    """The row's HBM TB/s over the run's read bandwidth, as a fraction."""
    if row.get("hbm_tbps") is None:
        raise NumberError(f"the {protocol} result for {row['impl']} {row['dtype']} "
                          f"{row['m']}x{row['n']}x{row['k']} records no HBM TB/s")
    return row["hbm_tbps"] / _read_bandwidth(app, row["dtype"], protocol)


def _percent(fraction):
    return f"{100 * fraction:.0f}%"


def hbm(app, text):
    impl, dtype, shape, protocol = _args(text, [4])
    return _percent(_hbm_share(app, _row(app, impl, dtype, shape, protocol), protocol))


def decode_rows(rows, dtype, protocol):
    """The decode shapes' rows: the benchmark's decode family, or a sweep's shapes of M ≤ 256."""
    if protocol == "alt":
        return [r for r in rows if r["dtype"] == dtype and r["family"] == "decode"]
    return [r for r in rows if r["dtype"] == dtype and r["m"] <= 256]


def _share_range(app, text, share):
    """``IMPL DTYPE PROTOCOL MAX_M``: the lowest and highest of share(app, row, protocol)
    over IMPL's decode shapes with M ≤ MAX_M."""
    impl, dtype, protocol, max_m = _args(text, [4])
    try:
        max_m = int(max_m)
    except ValueError:
        raise NumberError(f"MAX_M '{max_m}' is not a number")
    rows, _ = _rows(app, protocol, dtype)
    mine = [r for r in decode_rows(rows, dtype, protocol)
            if r["impl"] == impl and r["m"] <= max_m]
    if not mine:
        raise NumberError(f"no {protocol} result for {impl} {dtype} on a decode shape "
                          f"of M ≤ {max_m}")
    shares = [share(app, r, protocol) for r in mine]
    return f"{_percent(min(shares))[:-1]}–{_percent(max(shares))}"


def hbm_range(app, text):
    return _share_range(app, text, _hbm_share)


def _of_read(app, row, protocol):
    """The row's HBM TB/s over the plain read's of the same shape, as a fraction."""
    rows, _ = _rows(app, protocol, row["dtype"])
    read = pick(rows, "read", row["dtype"], (row["m"], row["n"], row["k"]))
    if read is None or read.get("hbm_tbps") is None or row.get("hbm_tbps") is None:
        raise NumberError(f"the {protocol} {row['dtype']} results have no plain read and "
                          f"{row['impl']} HBM TB/s at {row['m']}x{row['n']}x{row['k']}")
    return row["hbm_tbps"] / read["hbm_tbps"]


def of_read(app, text):
    impl, dtype, shape, protocol = _args(text, [4])
    return _percent(_of_read(app, _row(app, impl, dtype, shape, protocol), protocol))


def of_read_range(app, text):
    return _share_range(app, text, _of_read)


def read_role(app, text):
    dtype, protocol = _args(text, [2])
    return f"{_read_bandwidth(app, dtype, protocol):.2f}"


def us(app, text):
    impl, dtype, shape, protocol = _args(text, [4])
    row = _row(app, impl, dtype, shape, protocol)
    if row.get("us") is None:
        raise NumberError(f"the {protocol} result for {impl} {dtype} {shape} records no time")
    return f"{row['us']:.1f}"


def host_us(app, text):
    impl, dtype, family = _args(text, [3])
    rows, _ = _rows(app, "alt", dtype)
    calls = [r["host_us"] for r in rows if r["impl"] == impl and r["dtype"] == dtype
             and r["family"] == family and r.get("host_us") is not None]
    if not calls:
        raise NumberError(f"no host call times for {impl} {dtype} {family}")
    return f"{statistics.median(calls):.1f}"


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


class HbmTableDirective(Directive):
    """``.. hm-hbm-table:: DTYPE PROTOCOL [IMPL ...]`` (see the module's docstring)."""
    required_arguments = 2
    optional_arguments = 8

    def run(self):
        app = self.state.document.settings.env.app
        dtype, protocol = self.arguments[:2]
        try:
            rows, env = _rows(app, protocol, dtype)
            decode = decode_rows(rows, dtype, protocol)
            impls = self.arguments[2:] or versions_in(decode)[-2:]
            if not decode or not impls:
                raise NumberError(f"no decode shapes in the {protocol} {dtype} results")
            shapes = sorted({(r["m"], r["n"], r["k"]) for r in decode},
                            key=lambda s: (s[1] * s[2], s[1], s[0]))  # as scripts/plot.py
            # The plain read's column, where the sweep timed it beside the matmuls.
            plain = any(r["impl"] == "read" for r in decode)
            out = [".. list-table::", "   :header-rows: 1", "",
                   "   * - M × N × K", "     - cuBLAS: % of HBM read"]
            if plain:
                out += ["     - plain read: % of HBM read"]
            out += [f"     - {impl}: ratio (% of HBM read)" for impl in impls]
            ratios = {impl: [] for impl in impls}
            for m, n, k in shapes:
                found = {impl: pick(decode, impl, dtype, (m, n, k))
                         for impl in ["cublas", *(["read"] if plain else []), *impls]}
                for impl, r in found.items():
                    if r is None:
                        raise NumberError(f"no {protocol} result for {impl} {dtype} {m}x{n}x{k}")
                out += [f"   * - {m}×{n}×{k}",
                        f"     - {_percent(_hbm_share(app, found['cublas'], protocol))}"]
                if plain:
                    out += [f"     - {_percent(_hbm_share(app, found['read'], protocol))}"]
                for impl in impls:
                    r = found[impl]
                    ratios[impl].append(r["ratio"])
                    out += [f"     - {r['ratio']:.3f} ({_percent(_hbm_share(app, r, protocol))})"]
            out += ["   * - geometric mean", "     - —"] + (["     - —"] if plain else [])
            out += [f"     - {geomean(ratios[impl]):.3f}" for impl in impls]
            read = _read_bandwidth(app, dtype, protocol)
        except NumberError as e:
            raise self.error(f"hm-hbm-table: {e}")
        name = os.path.basename(_path(app, protocol, dtype))
        how = ("alternating, launch by launch" if protocol == "alt"
               else "sustained")
        out += ["", f"*{dtype}, {how}:* ``results/h200/{name}``, commit "
                f"{env.get('commit', '?')}.  *The ratio to cuBLAS, and in brackets the fewest "
                "bytes, 2·(MK + NK + MN), over the median time as a share of the HBM read "
                f"bandwidth measured at the start of the same run,* {read:.2f} *TB/s"
                + (".*" if not plain else
                   "*; *the plain read is a launch that only reads those bytes, timed in the "
                   "same rounds.*")]
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(out, source=self.name), node)
        return node.children


class SmsTableDirective(Directive):
    """``.. hm-sms-table:: DTYPE SHAPE`` (see the module's docstring)."""
    required_arguments = 2

    def run(self):
        app = self.state.document.settings.env.app
        dtype, shape = self.arguments
        results = os.path.join(os.path.dirname(app.config.hm_results), "fewer_sms")
        try:
            with open(os.path.join(results, "table.json")) as f:
                rows = [r for r in json.load(f) if r["dtype"] == dtype and r["shape"] == shape]
            with open(os.path.join(results, f"{dtype}_{shape.split('x')[0]}_all.json")) as f:
                env = json.load(f)["environment"]
        except (OSError, ValueError, KeyError) as e:
            raise self.error(f"hm-sms-table: results/h200/fewer_sms: {e}")
        if not rows:
            raise self.error(f"hm-sms-table: no {dtype} {shape} rows in results/h200/fewer_sms")
        cases = sorted({(r["case"], r["sms"]) for r in rows},
                       key=lambda c: (c[0] != "green", -c[1] if c[0] == "green" else c[1]))
        names = list(dict.fromkeys(r["version"] for r in rows))
        at = {(r["version"], r["case"], r["sms"]): r for r in rows}
        out = [".. list-table::", "   :header-rows: 1", "", "   * - implementation"]
        for kind, sms in cases:
            ref = at[("cublas", kind, sms)]["reference"]
            out += [f"     - green context of {sms} SMs (ideal ×{ref:.2f})" if kind == "green"
                    else f"     - another kernel on {sms} SMs (cuBLAS ×{ref:.2f})"]
        for name in names:
            out += [f"   * - {name}"]
            for kind, sms in cases:
                r = at.get((name, kind, sms))
                out += [f"     - ×{r['slowdown']:.2f} ({r['over_reference']:.2f})" if r else "     - —"]
        out += ["", f"*{dtype} {shape.replace('x', '×')}:* ``results/h200/fewer_sms``, commit "
                f"{env.get('commit', '?')[:7]}, ``scripts/fewer_sms.sh`` (3 rounds of 20 "
                "launches, each after 300 ms of settling).  *Each cell: the time over the time "
                "on the whole GPU in the same protocol, and in brackets that slowdown over the "
                "ideal (green contexts) or over cuBLAS's (beside the other kernel); at most "
                "1.05 and 1.00 are the targets.*"]
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(out, source=self.name), node)
        return node.children


def setup(app):
    for name, fn in (("hm-ratio", ratio), ("hm-vs", vs), ("hm-gain", gain),
                     ("hm-geomean", geomean_role), ("hm-range", range_role), ("hm-tflops", tflops),
                     ("hm-hbm", hbm), ("hm-hbm-range", hbm_range), ("hm-read", read_role),
                     ("hm-of-read", of_read), ("hm-of-read-range", of_read_range),
                     ("hm-commit", commit), ("hm-us", us), ("hm-host-us", host_us)):
        app.add_role(name, _role(fn))
    app.add_directive("hm-hbm-table", HbmTableDirective)
    app.add_directive("hm-sms-table", SmsTableDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
