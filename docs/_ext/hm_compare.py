"""Directives for the page that compares every version (docs/compare.rst), generated from the
recorded runs in results/h200/ at build time, so that no number on it is typed in.

.. hm-compare-table:: FAMILY DTYPE
   Every shape of one family ("square", "transformer", "ragged") in one element type of the
   alternating benchmark run (results/h200/bench.json): one row per shape, cuBLAS's TFLOPS and
   every version's ratio to cuBLAS, the best version of the row in bold, and the geometric
   mean of the family as the last row.

.. hm-compare-sustained::
   The same table for the sustained protocol: the 8192³ ladders (ladder_bf16.json,
   ladder_fp16.json) and the shapes of the sustained sweep (sweep_bf16.json).

.. hm-compare-recorded:: bench.json
   One line: where a recorded file was measured (GPU, SMs, power limit, CUDA, cuBLAS, commit).

.. hm-compare-extremes:: alternating|sustained
   For each version, the shape where it is strongest and weakest against cuBLAS, and against
   the version before it.  ``:families:`` (alternating only) limits the shapes to some
   families, e.g. ``:families: square transformer``.

Each directive fails the build (an error, not a warning) when a recorded file is missing, or
when a version folder has no row in it.  The nodes are plain docutils tables and paragraphs.
"""
import os
import sys

from docutils import nodes
from docutils.parsers.rst import Directive, directives

_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(_ROOT, "scripts"))
from hm_results import LADDER_SHAPE, geomean, load, pick, versions_in  # noqa: E402

FAMILIES = ("square", "transformer", "ragged")
DTYPES = ("bf16", "fp16")


def shape_label(m, n, k):
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def short(version):
    """``v3_warp_specialized`` → ``v3``: the column headers stay narrow."""
    return version.split("_", 1)[0]


def para(*parts):
    """A paragraph of text and (bold, text) pairs."""
    p = nodes.paragraph()
    for part in parts:
        if isinstance(part, tuple):
            p += nodes.strong(text=part[1])
        else:
            p += nodes.Text(part)
    return p


def table(title, header, body, widths=None):
    """A docutils table: header is a list of strings, body a list of rows of cells, each cell
    a string or a (bold, text) pair."""
    t = nodes.table()
    if title:
        t += nodes.title(text=title)
    group = nodes.tgroup(cols=len(header))
    t += group
    text = lambda cell: cell[1] if isinstance(cell, tuple) else str(cell)
    # Relative widths: the longest text of each column (the text builder wraps to them).
    natural = [max(len(text(c)) for c in column) for column in zip(header, *body)]
    for w in widths or natural:
        group += nodes.colspec(colwidth=max(w, 1))
    head = nodes.thead()
    group += head
    row = nodes.row()
    for h in header:
        row += nodes.entry("", para(h))
    head += row
    tbody = nodes.tbody()
    group += tbody
    for cells in body:
        row = nodes.row()
        for c in cells:
            row += nodes.entry("", para(c))
        tbody += row
    return t


class CompareDirective(Directive):
    @property
    def config(self):
        return self.state.document.settings.env.config

    def recorded(self, name):
        """Rows and environment of results/h200/NAME (beside conf.py's hm_results)."""
        folder = self.config.hm_compare_dir or os.path.dirname(self.config.hm_results)
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            raise self.error(f"{self.name}: no recorded results at {path}")
        self.state.document.settings.env.note_dependency(path)
        rows, env = load(path)
        return rows, env, os.path.relpath(path, self.config.hm_root)

    def versions(self, rows, where):
        """The recorded versions, in ladder order; every version folder must have rows."""
        import hm_docs  # the folder list the chapters use

        folders = hm_docs.versions(self.config.hm_root)
        recorded = versions_in(rows)
        missing = [v for v in folders if v not in recorded]
        if missing:
            raise self.error(f"{self.name}: no recorded rows for {', '.join(missing)} in {where}")
        return recorded

    def source_line(self, files, env):
        return para(f"From {', '.join(files)}: {env.get('name', '?')} "
                    f"({env.get('sm_count', '?')} SMs, {env.get('power_limit_w', '?')} W "
                    f"limit), CUDA {env.get('runtime_version', '?')}, cuBLAS "
                    f"{env.get('cublas_version', '?')}, commit {env.get('commit', '?')}.")


def grid(title, rows, versions, problems, mean=True):
    """A table with one column per problem (label, dtype, shape) and one row per version:
    cuBLAS's TFLOPS in the first row, then each version's ratio to cuBLAS, the best version
    of each column in bold, and the geometric mean of the row as the last column.  Versions
    as rows keep the table narrow enough for the page however long a shape's name is."""
    ratios = {(v, i): (pick(rows, v, p[1], p[2]) or {}).get("ratio")
              for v in versions for i, p in enumerate(problems)}
    best = [max((ratios[(v, i)] for v in versions if ratios[(v, i)] is not None), default=None)
            for i in range(len(problems))]
    refs = [pick(rows, "cublas", p[1], p[2]) for p in problems]
    body = [["cuBLAS TFLOPS"] + [f"{r['tflops']:.0f}" if r else "—" for r in refs]
            + ([""] if mean else [])]
    for v in versions:
        cells, mine = [short(v)], []
        for i in range(len(problems)):
            r = ratios[(v, i)]
            if r is None:
                cells.append("—")
                continue
            mine.append(r)
            cells.append((True, f"{r:.3f}") if r == best[i] else f"{r:.3f}")
        if mean:
            cells.append(f"{geomean(mine):.3f}" if mine else "—")
        body.append(cells)
    head = [""] + [p[0] for p in problems] + (["geomean"] if mean else [])
    return table(title, head, body)


class TableDirective(CompareDirective):
    required_arguments = 2

    def run(self):
        family, dtype = self.arguments
        if family not in FAMILIES or dtype not in DTYPES:
            raise self.error(f"hm-compare-table: expected one of {FAMILIES} and one of {DTYPES}, "
                             f"not '{family} {dtype}'")
        rows, env, path = self.recorded("bench.json")
        versions = self.versions(rows, path)
        shapes = sorted({(r["m"], r["n"], r["k"]) for r in rows
                         if r["family"] == family and r["dtype"] == dtype})
        if not shapes:
            raise self.error(f"hm-compare-table: no {family} {dtype} rows in {path}")
        if family == "square":  # the columns say only M, so that ten of them fit
            return [grid(f"Square shapes (M = N = K), {dtype}: × cuBLAS, by M", rows,
                         versions, [(str(s[0]), dtype, s) for s in shapes])]
        if family != "transformer":  # spaced, so that a long name may wrap in its header
            return [grid(f"{family.capitalize()} shapes, {dtype}: × cuBLAS", rows, versions,
                         [(shape_label(*s).replace("×", " × "), dtype, s) for s in shapes])]
        # Transformer shapes: one table per weight N×K, its columns the numbers of tokens M,
        # and the geometric mean of all of them after.
        out = []
        for n, k in sorted({(s[1], s[2]) for s in shapes}):
            out.append(grid(f"Transformer shapes, {dtype}, weight N×K = {n}×{k}: × cuBLAS, "
                            "by M", rows, versions,
                            [(f"M = {s[0]}", dtype, s) for s in shapes if s[1:] == (n, k)]))
        body = []
        for v in versions:
            mine = [r["ratio"] for r in rows if r["impl"] == v and r["family"] == family
                    and r["dtype"] == dtype]
            body.append([short(v), f"{geomean(mine):.3f}" if mine else "—"])
        out.append(table(f"Transformer shapes, {dtype}: all {len(shapes)}", ["",
                         f"geomean of {len(shapes)}"], body))
        return out


class SustainedDirective(CompareDirective):
    def run(self):
        ladders = [self.recorded(f"ladder_{d}.json") for d in DTYPES]
        sweep, sweep_env, sweep_path = self.recorded("sweep_bf16.json")
        rows = [r for ladder in ladders for r in ladder[0]] + sweep
        versions = self.versions(rows, ", ".join([l[2] for l in ladders] + [sweep_path]))
        problems = [(f"{shape_label(*LADDER_SHAPE)} {d} (ladder)", d, LADDER_SHAPE)
                    for d in DTYPES]
        problems += [(f"{shape_label(*s)} bf16", "bf16", s)
                     for s in sorted({(r["m"], r["n"], r["k"]) for r in sweep})]
        # The ladders' 8192³ comes first; a sweep row of the same shape would only repeat it.
        seen, unique = set(), []
        for p in problems:
            if (p[1], p[2]) not in seen:
                seen.add((p[1], p[2]))
                unique.append(p)
        chunks = [unique[i:i + 4] for i in range(0, len(unique), 4)]
        proto = sweep_env.get("protocol", {})
        ladder_proto = ladders[0][1].get("protocol", {})
        out = [grid(f"Sustained: × cuBLAS ({i + 1} of {len(chunks)})", rows, versions, chunk,
                    mean=False) for i, chunk in enumerate(chunks)]
        return out + [
            para(f"The ladders: {ladder_proto.get('rounds', '?')} rounds of "
                 f"{ladder_proto.get('reps_per_round', '?')} launches per implementation; "
                 f"the sweep: {proto.get('rounds', '?')} rounds of "
                 f"{proto.get('reps_per_round', '?')}; each round after "
                 f"~{proto.get('settle_ms', '?')} ms of the implementation's own launches."),
            self.source_line([l[2] for l in ladders] + [sweep_path], sweep_env)]


class RecordedDirective(CompareDirective):
    required_arguments = 1

    def run(self):
        _, env, path = self.recorded(self.arguments[0])
        return [self.source_line([path], env)]


class ExtremesDirective(CompareDirective):
    required_arguments = 1
    option_spec = {"families": directives.unchanged}

    def run(self):
        protocol = self.arguments[0]
        if protocol == "alternating":
            rows, env, path = self.recorded("bench.json")
            files = [path]
            families = (self.options.get("families") or " ".join(FAMILIES)).split()
            unknown = [f for f in families if f not in FAMILIES]
            if unknown:
                raise self.error(f"hm-compare-extremes: unknown families {unknown}")
            rows = [r for r in rows if r["family"] in families or r["impl"] == "cublas"]
        elif protocol == "sustained":
            if "families" in self.options:
                raise self.error("hm-compare-extremes: :families: applies to 'alternating' only")
            recorded = [self.recorded(f) for f in
                        ("ladder_bf16.json", "ladder_fp16.json", "sweep_bf16.json")]
            rows, seen = [], set()
            for r in (r for rec in recorded for r in rec[0]):
                key = (r["impl"], r["dtype"], r["m"], r["n"], r["k"])
                if key not in seen:  # 8192³ bf16 from the ladder, not again from a sweep
                    seen.add(key)
                    rows.append(r)
            env, files = recorded[-1][1], [rec[2] for rec in recorded]
        else:
            raise self.error(f"hm-compare-extremes: 'alternating' or 'sustained', not "
                             f"'{protocol}'")
        versions = self.versions(rows, ", ".join(files))
        index = {(r["impl"], r["dtype"], r["m"], r["n"], r["k"]): r for r in rows}

        def where(r):
            return f"{shape_label(r['m'], r['n'], r['k'])} {r['dtype']}"

        def against_cublas(r):
            ref = index.get(("cublas", r["dtype"], r["m"], r["n"], r["k"]))
            at = f" (cuBLAS {ref['tflops']:.0f} TFLOPS)" if ref else ""
            return f"{where(r)}: {r['ratio']:.3f}{at}"

        cublas, previous = [], []
        for i, v in enumerate(versions):
            mine = [r for r in rows if r["impl"] == v]
            cublas.append([short(v), against_cublas(max(mine, key=lambda r: r["ratio"])),
                           against_cublas(min(mine, key=lambda r: r["ratio"]))])
            before = versions[i - 1] if i else None
            pairs = [(r["ratio"] / index[(before, r["dtype"], r["m"], r["n"], r["k"])]["ratio"],
                      r) for r in mine
                     if before and (before, r["dtype"], r["m"], r["n"], r["k"]) in index]
            if pairs:
                hi, lo = max(pairs, key=lambda p: p[0]), min(pairs, key=lambda p: p[0])
                previous.append([f"{short(v)} ÷ {short(before)}", f"{where(hi[1])}: {hi[0]:.3f}",
                                 f"{where(lo[1])}: {lo[0]:.3f}"])
        shapes = len({(r["dtype"], r["m"], r["n"], r["k"]) for r in rows if r["impl"] != "cublas"})
        over = f"{protocol}, over {shapes} shapes × types"
        return [table(f"Against cuBLAS ({over})", ["", "strongest", "weakest"], cublas,
                      [10, 45, 45]),
                table(f"Against the version before ({over})", ["", "largest gain",
                      "smallest gain"], previous, [10, 45, 45]),
                self.source_line(files, env)]


def setup(app):
    app.setup_extension("hm_docs")  # hm_root and hm_results, and the version folders
    app.add_config_value("hm_compare_dir", "", "env")
    app.add_directive("hm-compare-table", TableDirective)
    app.add_directive("hm-compare-sustained", SustainedDirective)
    app.add_directive("hm-compare-recorded", RecordedDirective)
    app.add_directive("hm-compare-extremes", ExtremesDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
