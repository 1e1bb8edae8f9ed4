"""Directives that put generated facts into the chapters, so that none is typed in by hand.

.. hm-diff:: v2_pipeline
   The full unified diff from the previous version's matmul.cu to this one, computed from
   the files at build time, in two folded views (HTML ``<details>``, on the site and in the
   Markdown rendering): the full diff, and the same without the hunks that change only
   comments or blank lines.

.. hm-resources:: v2_pipeline
   The compiler's resource report for the version's kernels (registers, barriers, stack
   frame, spills, warnings), read from the ptxas report the CMake build writes
   (VERSION.txt in conf.py's hm_ptxas_dir), and the launch configuration from
   ``hopper-matmul list``'s kernels.json (in hm_ptxas_dir, or beside it as in a CMake build
   tree: build/release/ptxas/ and build/release/kernels.json).

.. hm-measured:: v2_pipeline
   The recorded H200 measurements of cuBLAS and every version up to this one: 8192³ bf16
   TFLOPS and ratio to cuBLAS, alternating (results/h200/bench.json) and sustained
   (results/h200/ladder_bf16.json), and the geometric-mean ratio over the transformer shapes.

.. hm-source-stats:: v2_pipeline
   One line: how many lines the version's file has and how many the diff changes.

.. hm-version-api::
   The API reference of every version folder, in ladder order: one Breathe
   ``doxygennamespace`` with its members per version (docs/api/versions.rst).

Each directive fails the build (an error, not a warning) when its input is missing.

hm_markdown.py (set up from here) adds the ``markdown`` builder: every page as GitHub-flavoured
Markdown, committed in docs/markdown/ (scripts/docs_markdown.sh).
"""
import difflib
import json
import os
import re
import sys

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles
from sphinx.transforms.post_transforms import SphinxPostTransform

# The readers the checks and the plots use, so that the docs read the same inputs the same way.
_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(_ROOT, "scripts"))
from hm_results import LADDER_SHAPE, geomean, load, pick  # noqa: E402
from resource_check import parse_report  # noqa: E402

VERSION = re.compile(r"^v(\d+)_[a-z_]+$")


def versions(root):
    found = [d for d in os.listdir(root)
             if VERSION.match(d) and os.path.isdir(os.path.join(root, d))]
    return sorted(found, key=lambda d: int(VERSION.match(d).group(1)))


def previous(root, version):
    all_versions = versions(root)
    i = all_versions.index(version)
    return all_versions[i - 1] if i > 0 else None


class HmDirective(Directive):
    required_arguments = 1

    @property
    def config(self):
        return self.state.document.settings.env.config

    def version(self):
        v = self.arguments[0]
        if v not in versions(self.config.hm_root):
            raise self.error(f"{self.name}: no version folder '{v}'")
        return v

    def depend(self, path):
        self.state.document.settings.env.note_dependency(path)

    def rst(self, text):
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(text.splitlines(), source=self.name), node)
        return node.children


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def diff_lines(root, version):
    before = previous(root, version)
    a = os.path.join(root, before, "matmul.cu")
    b = os.path.join(root, version, "matmul.cu")
    return before, a, b, list(difflib.unified_diff(
        read(a).splitlines(), read(b).splitlines(), fromfile=f"{before}/matmul.cu",
        tofile=f"{version}/matmul.cu", lineterm="", n=3))


# A C++ line's code, without its comments: the state carried from line to line is whether a
# /* */ comment is open.  String and character literals are skipped, so that a "//" inside one
# is not a comment.
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//|/\*|\*/')


def code_parts(text):
    """One string per line of text: the line's code with every comment removed."""
    out, in_comment = [], False
    for line in text.splitlines():
        code, pos = [], 0
        while pos <= len(line):
            if in_comment:
                end = line.find("*/", pos)
                if end < 0:
                    break
                in_comment, pos = False, end + 2
                continue
            m = _TOKEN.search(line, pos)
            if m is None:
                code.append(line[pos:])
                break
            token = m.group(0)
            code.append(line[pos:m.start()] + ("" if token in ("//", "/*") else token))
            pos = m.end()
            if token == "//":
                break
            if token == "/*":
                in_comment = True
        out.append(" ".join("".join(code).split()))
    return out


HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def hunks(lines):
    """The unified diff's header lines (---, +++) and its hunks, each a list of lines."""
    header, out = [], []
    for line in lines:
        if line.startswith("@@"):
            out.append([line])
        elif out:
            out[-1].append(line)
        else:
            header.append(line)
    return header, out


def changes_code(hunk, old_code, new_code):
    """Whether the hunk changes code: the code (comments and blank lines removed) of its
    removed lines differs from that of its added lines."""
    m = HUNK.match(hunk[0])
    old, new = int(m.group(1)) - 1, int(m.group(2)) - 1
    removed, added = [], []
    for line in hunk[1:]:
        if line.startswith("-"):
            removed.append(old_code[old])
            old += 1
        elif line.startswith("+"):
            added.append(new_code[new])
            new += 1
        else:
            old, new = old + 1, new + 1
    return [c for c in removed if c] != [c for c in added if c]


def changed(hunk_list, sign="+-"):
    """How many lines the hunks add and remove (sign "+-"), add ("+") or remove ("-")."""
    return sum(1 for h in hunk_list for l in h[1:] if l[:1] in sign)


class hm_diff(nodes.container):
    """The diff from the previous version: the hm_diff_view nodes, one per folded view."""


class hm_diff_view(nodes.container):
    """One folded view of a diff (HTML ``<details>``): an hm_diff_summary, then the diff."""


class hm_diff_summary(nodes.paragraph):
    """What a folded view holds and how big it is (HTML ``<summary>``)."""


def diff_view(summary, lines):
    view = hm_diff_view()
    view += hm_diff_summary(summary, summary)
    block = nodes.literal_block("\n".join(lines), "\n".join(lines))
    block["language"] = "diff"
    view += block
    return view


def visit_diff_html(self, node):
    self.body.append('<div class="hm-diff">\n')


def depart_diff_html(self, node):
    self.body.append("</div>\n")


def visit_view_html(self, node):
    self.body.append("<details>\n")


def depart_view_html(self, node):
    self.body.append("</details>\n")


def visit_summary_html(self, node):
    self.body.append("<summary>" + self.encode(node.astext()) + "</summary>\n")
    raise nodes.SkipNode


class FoldAnswers(SphinxPostTransform):
    """On the site, an exercise's answer (``.. admonition:: Answer`` with ``:class: hm-answer``)
    is folded like a view of the diff: ``<details><summary>Answer</summary>``.  The Markdown
    builder folds it on its own."""
    default_priority = 200
    formats = ("html",)

    def run(self):
        for node in list(self.document.traverse(nodes.admonition)):
            if "hm-answer" not in node["classes"]:
                continue
            title = node.next_node(nodes.title)
            view = hm_diff_view()
            view += hm_diff_summary(title.astext(), title.astext())
            view += [child.deepcopy() for child in node.children if child is not title]
            node.replace_self(view)


class DiffDirective(HmDirective):
    def run(self):
        version = self.version()
        root = self.config.hm_root
        if previous(root, version) is None:
            raise self.error(f"hm-diff: {version} is the first version; there is nothing to diff")
        before, a, b, lines = diff_lines(root, version)
        self.depend(a)
        self.depend(b)
        header, all_hunks = hunks(lines)
        old_code, new_code = code_parts(read(a)), code_parts(read(b))
        code = [h for h in all_hunks if changes_code(h, old_code, new_code)]
        n = changed(all_hunks)
        plural = lambda k, word: f"{k} {word}{'' if k == 1 else 's'}"
        node = hm_diff()
        every = "" if len(code) < len(all_hunks) else " (every hunk changes code)"
        node += diff_view(f"The full diff from {before}: {plural(n, 'changed line')} in "
                          f"{plural(len(all_hunks), 'hunk')}{every}", lines)
        if len(code) < len(all_hunks):
            code_lines = header + [l for h in code for l in h]
            left = len(all_hunks) - len(code)
            left = "1 hunk that changes" if left == 1 else f"{left} hunks that change"
            node += diff_view(
                f"Code only: {plural(changed(code), 'changed line')} in "
                f"{plural(len(code), 'hunk')} (left out: {left} only comments or blank lines)",
                code_lines)
        return [node]


class SourceStatsDirective(HmDirective):
    def run(self):
        version = self.version()
        root = self.config.hm_root
        path = os.path.join(root, version, "matmul.cu")
        self.depend(path)
        total = len(read(path).splitlines())
        text = f"``{version}/matmul.cu`` has {total} lines."
        if previous(root, version):
            before, _, _, lines = diff_lines(root, version)
            _, all_hunks = hunks(lines)
            added, removed = changed(all_hunks, "+"), changed(all_hunks, "-")
            text = (f"``{version}/matmul.cu`` has {total} lines; against ``{before}`` the diff "
                    f"adds {added} and removes {removed}.")
        return self.rst(text)


def kernel_label(mangled):
    """``matmul_kernel<bf16, true, 1>`` from the mangled name: the element type, then each
    bool or int template argument (Itanium ABI: ``Lb1E`` is true, ``Li2E`` is 2)."""
    kind = "bf16" if "nv_bfloat16" in mangled else "fp16" if "__half" in mangled else "?"
    name = re.search(r"\d+(matmul_kernel|[a-z_]+kernel)I?", mangled)
    args = [kind]
    if name:
        template = mangled[name.end():].split("EEv")[0]
        for t, v in re.findall(r"L([bi])(\d+)E", template):
            args.append(("false", "true")[int(v)] if t == "b" else v)
    return f"``{name.group(1) if name else mangled}<{', '.join(args)}>``"


class ResourcesDirective(HmDirective):
    def run(self):
        version = self.version()
        path = os.path.join(self.config.hm_ptxas_dir, f"{version}.txt")
        if not os.path.exists(path):
            raise self.error(f"hm-resources: no ptxas report at {path}; build the project first "
                             "(cmake --workflow --preset release) or set HM_PTXAS_DIR")
        self.depend(path)
        kernels, warnings = parse_report(read(path))
        rows = [dict(r, kernel=kernel_label(name)) for name, r in kernels.items()]
        if not rows:
            raise self.error(f"hm-resources: no kernel in {path}")
        # kernels.json sits in hm_ptxas_dir when the reports are committed, and beside it in
        # a CMake build tree (build/release/kernels.json beside build/release/ptxas/).
        ptxas_dir = os.path.normpath(self.config.hm_ptxas_dir)
        kernels = os.path.join(ptxas_dir, "kernels.json")
        if not os.path.exists(kernels):
            kernels = os.path.join(os.path.dirname(ptxas_dir), "kernels.json")
        if not os.path.exists(kernels):
            raise self.error(f"hm-resources: no kernels.json in {ptxas_dir} or beside it; "
                             "build hopper-matmul first")
        self.depend(kernels)
        k = next((v for v in json.loads(read(kernels))["versions"] if v["name"] == version), None)
        if k is None:
            raise self.error(f"hm-resources: {version} is not in {kernels}")
        out = [".. list-table::", "   :header-rows: 1", "",
               "   * - kernel", "     - registers per thread", "     - named barriers",
               "     - stack frame (bytes)", "     - spill stores / loads (bytes)"]
        for r in sorted(rows, key=lambda r: r["kernel"]):
            out += [f"   * - {r['kernel']}", f"     - {r.get('registers', '?')}",
                    f"     - {r.get('barriers', '?')}", f"     - {r.get('stack', '?')}",
                    f"     - {r.get('spill_stores', '?')} / {r.get('spill_loads', '?')}"]
        out += ["", "ptxas warnings: " + ("none." if not warnings else "; ".join(warnings)),
                "", f"Launch: {k['threads']} threads per CTA, "
                f"{k['smem_bytes']} bytes ({k['smem_bytes'] / 1024:.1f} KiB) of dynamic shared "
                f"memory per CTA, a {k['bm']}×{k['bn']} tile of C with {k['bk']} of K per stage, "
                f"{k['stages']} stage{'s' if k['stages'] > 1 else ''}, registers capped for "
                f"{k['ctas_per_sm']} CTA{'s' if k['ctas_per_sm'] > 1 else ''} per SM"
                + (f", launched in clusters of {k['cluster_ctas']} CTAs."
                   if k.get("cluster_ctas", 1) > 1 else "."),
                "", f"*From the build: ptxas's report* (``{os.path.basename(path)}``, "
                "``-O3 -Xptxas=-v``, sm_90a) *and* ``hopper-matmul list`` (``kernels.json``)."]
        return self.rst("\n".join(out))


class MeasuredDirective(HmDirective):
    """This version against the one before and cuBLAS at 8192³, in both types and both
    protocols, and over the transformer shapes; cuBLAS's row gives its TFLOPS."""

    def run(self):
        version = self.version()
        path = self.config.hm_results
        ladder_paths = {d: os.path.join(os.path.dirname(self.config.hm_ladder),
                                        f"ladder_{d}.json") for d in ("bf16", "fp16")}
        for p in (path, *ladder_paths.values()):
            if not os.path.exists(p):
                raise self.error(f"hm-measured: no recorded results at {p}")
            self.depend(p)
        rows, env = load(path)
        ladders = {d: load(p) for d, p in ladder_paths.items()}
        ladder_env = ladders["bf16"][1]
        proto = ladder_env.get("protocol", {})
        before = previous(self.config.hm_root, version)
        shown = ["cublas"] + ([before] if before else []) + [version]
        columns = [(d, proto_name) for d in ("bf16", "fp16") for proto_name in ("alt", "sust")]

        def result(impl, dtype, protocol):
            found = pick(rows if protocol == "alt" else ladders[dtype][0], impl, dtype,
                         LADDER_SHAPE)
            if found is None:
                raise self.error(f"hm-measured: no 8192³ {dtype} {protocol} result for {impl}")
            return found

        def transformer(impl):
            ratios = {(x["m"], x["n"], x["k"]): x["ratio"] for x in rows if x["impl"] == impl
                      and x["dtype"] == "bf16" and x["family"] == "transformer"}
            if not ratios:
                raise self.error(f"hm-measured: no transformer results for {impl}")
            return ratios

        out = [".. list-table::", "   :header-rows: 1", "",
               "   * - 8192³ unless named", "     - bf16, alternating", "     - bf16, sustained",
               "     - fp16, alternating", "     - fp16, sustained",
               "     - bf16, alternating, transformer shapes (geomean)"]
        for impl in shown:
            name = f"**{impl}**" if impl == version else impl
            out += [f"   * - {name}"]
            for dtype, protocol in columns:
                r = result(impl, dtype, protocol)
                out += [f"     - {r['ratio']:.3f}" + (f" ({r['tflops']:.0f} TFLOPS)"
                                                      if impl == "cublas" else "")]
            t = transformer(impl)
            out += [f"     - {geomean(list(t.values())):.3f} ({len(t)} shapes)"]
        if before:
            out += [f"   * - {version} ÷ {before}"]
            for dtype, protocol in columns:
                gain = (result(version, dtype, protocol)["ratio"] /
                        result(before, dtype, protocol)["ratio"])
                out += [f"     - {gain:.3f}"]
            mine, theirs = transformer(version), transformer(before)
            out += [f"     - {geomean([mine[s] / theirs[s] for s in mine if s in theirs]):.3f}"]
        out += ["", "*Ratio to cuBLAS: cuBLAS's time over the version's, in the same process.* "
                f"*Recorded on {env.get('name', '?')} ({env.get('sm_count', '?')} SMs, "
                f"{env.get('power_limit_w', '?')} W limit), CUDA "
                f"{env.get('runtime_version', '?')}, cuBLAS {env.get('cublas_version', '?')}, "
                f"commit {env.get('commit', '?')}.* Alternating: each benchmark times the "
                "kernel and cuBLAS one launch after the other and compares medians "
                "(``results/h200/bench.json``).  Sustained: "
                f"``hopper-matmul ladder`` (``results/h200/ladder_bf16.json`` and "
                f"``ladder_fp16.json``, commit {ladder_env.get('commit', '?')}), each "
                f"implementation timed after ~{proto.get('settle_ms', '?')} ms of its own "
                "launches, at the clock its own power allows (:doc:`../intro/measuring`)."]
        return self.rst("\n".join(out))


class VersionApiDirective(HmDirective):
    required_arguments = 0

    def run(self):
        return self.rst("\n\n".join(f".. doxygennamespace:: {v}\n   :members:"
                                     for v in versions(self.config.hm_root)))


def setup(app):
    app.add_config_value("hm_root", "", "env")
    app.add_config_value("hm_ptxas_dir", "", "env")
    app.add_config_value("hm_results", "", "env")
    app.add_config_value("hm_ladder", "", "env")
    app.add_node(hm_diff, html=(visit_diff_html, depart_diff_html))
    app.add_node(hm_diff_view, html=(visit_view_html, depart_view_html))
    app.add_node(hm_diff_summary, html=(visit_summary_html, None))
    app.add_post_transform(FoldAnswers)
    app.add_directive("hm-diff", DiffDirective)
    app.add_directive("hm-resources", ResourcesDirective)
    app.add_directive("hm-measured", MeasuredDirective)
    app.add_directive("hm-source-stats", SourceStatsDirective)
    app.add_directive("hm-version-api", VersionApiDirective)
    app.setup_extension("hm_markdown")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
