"""The ``markdown`` builder: every page of the site as GitHub-flavoured Markdown.

    sphinx-build -b markdown docs OUT      (scripts/docs_markdown.sh runs it and compares OUT
                                           with the committed rendering, docs/markdown/)

A code host shows the chapters' reStructuredText without what the directives generate (the
excerpts, the diff, the resource and measured tables); this builder writes what the site
shows, so that a chapter reads complete on a code host and offline.  Every page of the
toctree becomes OUT/<docname>.md; a page whose source already is Markdown (a MyST page such
as docs/notes/performance-log.md) is not written again, and links to it go to its source.

Links and images are relative to where the rendering is committed (``hm_markdown_dir``,
docs/markdown by default), not to OUT, so that OUT can be copied there as it is:

- a page links to a page as ``../intro/measuring.md``, and to a section of one by the anchor
  that GitHub derives from the heading's text (``#writing-a-buffer-stshared-and-the-128-byte-
  swizzle``); any other target (a glossary term, a label that is not a section) gets an
  ``<a id="…"></a>`` of its own, and footnotes are GFM footnotes (``[^1]``);
- an image is the file in the repository (``../../figures/v6_epilogue.svg``), which must exist;
- the diff of ``hm-diff`` and the exercises' answers (admonitions of class ``hm-answer``) are
  folded, ``<details><summary>…</summary>`` with the content after a blank line; of the
  diff's two views only the full one is written, the code-only one by its summary line (it
  would repeat most of the full one and double the chapter's length);
- the API pages (Breathe's ``doxygen*`` directives) are rendered simply, without Doxygen: each
  namespace is a line that links to the folder that declares it and names the site.

Every node a page produces has a rendering below; a node without one fails the build with
its name and source line, so that nothing new silently vanishes from the rendering.
"""
import os
import posixpath
import re
import unicodedata

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx import addnodes
from sphinx.builders import Builder
from sphinx.errors import SphinxError
from sphinx.util.osutil import ensuredir

import hm_docs

HEADER = ("<!-- Generated from {source} by the docs' markdown builder (docs/_ext/hm_markdown.py);"
          " do not edit: change the source and run scripts/docs_markdown.sh --update. -->")


class MarkdownError(SphinxError):
    category = "Markdown rendering"


def where(node):
    source, line = node.source, node.line
    while (source is None or line is None) and node.parent is not None:
        node = node.parent
        source, line = source or node.source, line or node.line
    return f"{os.path.relpath(source) if source else '?'}:{line or '?'}"


def fail(node, message):
    raise MarkdownError(f"{where(node)}: {message}")


# ---------------------------------------------------------------------------------------------
# Text

def is_punct(ch):
    return unicodedata.category(ch).startswith(("P", "S"))


def is_word(ch):
    return bool(ch) and not ch.isspace() and not is_punct(ch)


def escape(text):
    """Plain text in Markdown: every character that could start markup is escaped."""
    out = []
    for i, ch in enumerate(text):
        if ch in "\\`*[]<~$":
            out.append("\\" + ch)
        elif ch == "_":
            before = text[i - 1] if i > 0 else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            out.append("_" if before.isalnum() and after.isalnum() else "\\_")
        elif ch == "&" and re.match(r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);", text[i:]):
            out.append("&amp;")
        else:
            out.append(ch)
    return "".join(out)


LINE_START = re.compile(r"^(#|>|[-+=]|\d+[.)]|\|)")


def guard_line_start(text):
    """A paragraph whose first characters would start a heading, a quote or a list."""
    m = LINE_START.match(text)
    if not m:
        return text
    return text[: m.end() - 1] + "\\" + text[m.end() - 1:]


def code_span(text):
    text = text.replace("\n", " ")
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    if text.startswith("`") or text.endswith("`") or (
            text.startswith(" ") and text.endswith(" ") and text.strip()):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def fence_for(text, char="`"):
    runs = [len(r) for r in re.findall(re.escape(char) + "+", text)]
    return char * max(3, max(runs, default=0) + 1)


def html_escape(text, quote=False):
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


def link_destination(uri):
    uri = uri.replace(" ", "%20")
    return f"<{uri}>" if re.search(r"[()<>]", uri) else uri


def slugify(text):
    """The anchor GitHub gives a heading (github-slugger): lower case, every character that
    is not a letter, a digit, a mark, '_', '-' or a space removed, each space a '-'."""
    keep = []
    for ch in text.lower():
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LNM":
            keep.append(ch)
    return "".join(keep).replace(" ", "-")


def anchor_id(node_id):
    """The anchor of an id that is not a section's: lower case, as GitHub's own anchors."""
    return node_id.lower()


def indent(lines, first, rest):
    return [(first if i == 0 else rest) + l if l else "" for i, l in enumerate(lines)]


# ---------------------------------------------------------------------------------------------
# The rendering of one page

ADMONITIONS = {"note": "NOTE", "tip": "TIP", "hint": "TIP", "important": "IMPORTANT",
               "warning": "WARNING", "attention": "WARNING", "caution": "CAUTION",
               "danger": "CAUTION", "error": "CAUTION"}

# Admonitions with one of these classes are folded (<details>), as the exercises' answers are:
# ``.. admonition:: Answer`` with ``:class: hm-answer``.
FOLDED = {"hm-answer"}

# Nodes that produce nothing in Markdown: comments, index entries, substitution definitions,
# LaTeX-only column specs, metadata.
SILENT = (nodes.comment, nodes.substitution_definition, addnodes.index, nodes.meta,
          addnodes.tabular_col_spec, nodes.decoration, nodes.colspec)


def view_summary(view):
    """The summary line (hm_diff_summary) of one folded view of a diff."""
    summary = [c for c in view.children if isinstance(c, hm_docs.hm_diff_summary)]
    if len(summary) != 1:
        fail(view, "a diff view without its summary")
    return summary[0]


class Page:
    def __init__(self, builder, docname):
        self.builder = builder
        self.docname = docname
        self.footnotes = {}
        self.wanted = builder.link_targets(docname)

    # -- blocks: each a string of one or more lines, joined by blank lines ---------------------

    def blocks(self, node):
        return self.blocks_of(node.children)

    def blocks_of(self, children):
        out = []
        for child in children:
            out.extend(self.block(child))
        return out

    def block(self, node):
        if isinstance(node, SILENT):
            return []
        if isinstance(node, (nodes.system_message, nodes.problematic)):
            fail(node, f"the page has an error: {node.astext()[:200]}")
        for cls in type(node).__mro__:
            method = getattr(self, "b_" + cls.__name__, None)
            if method is not None:
                return method(node)
            if cls in (nodes.Element, nodes.Node, nodes.Text):
                break
        if isinstance(node, (nodes.Inline, nodes.Text)):
            return [self.paragraph_text(self.inlines([node]))]
        fail(node, f"no Markdown rendering for the node <{node.tagname}> "
                   f"({type(node).__module__}.{type(node).__name__}); add one to hm_markdown.py")

    def anchors(self, node):
        """An anchor for each id of the node that something can link to: a label, a glossary
        term, a target of this page's links (a section's anchor is its heading's)."""
        return "".join(f'<a id="{html_escape(anchor_id(i), True)}"></a>'
                       for i in node.get("ids", []) if i in self.wanted)

    def anchor_block(self, node):
        """The anchors of a block that cannot start with them (a fence, a table)."""
        anchors = self.anchors(node)
        return [anchors] if anchors else []

    def paragraph_text(self, text, node=None):
        text = guard_line_start(text.strip())
        return (self.anchors(node) if node is not None else "") + text

    def b_document(self, node):
        return self.blocks(node)

    def b_section(self, node):
        level = 1
        parent = node.parent
        while parent is not None:
            if isinstance(parent, nodes.section):
                level += 1
            parent = parent.parent
        if not node.children or not isinstance(node[0], nodes.title):
            fail(node, "a section without a title")
        title = self.inlines(node[0].children).strip()
        return [f"{'#' * min(level, 6)} {title}"] + self.blocks_of(node.children[1:])

    def b_title(self, node):  # a title outside a section: a table's, a toctree's caption
        return [self.paragraph_text(f"**{self.inlines(node.children).strip()}**", node)]

    def b_rubric(self, node):
        return self.b_title(node)

    def b_paragraph(self, node):
        text = self.paragraph_text(self.inlines(node.children), node)
        return [text] if text else []

    def b_compact_paragraph(self, node):
        if any(isinstance(c, nodes.Body) or isinstance(c, nodes.title) for c in node.children):
            return self.blocks(node)  # a resolved toctree: its caption and its list
        return self.b_paragraph(node)

    def b_compound(self, node):
        return self.blocks(node)

    def b_container(self, node):
        if "literal-block-wrapper" in node.get("classes", []):
            out = []
            for child in node.children:
                if isinstance(child, nodes.caption):
                    out.append(self.paragraph_text(f"**{self.inlines(child.children)}**", child))
                else:
                    out.extend(self.block(child))
            return out
        return self.blocks(node)

    def b_glossary(self, node):
        return self.blocks(node)

    def b_versionmodified(self, node):  # "New in version …": its paragraphs
        return self.blocks(node)

    def b_hlist(self, node):  # a list in columns: the columns one after the other
        return self.blocks(node)

    def b_hlistcol(self, node):
        return self.blocks(node)

    def b_centered(self, node):
        return [self.paragraph_text(f"**{self.inlines(node.children).strip()}**", node)]

    def b_only(self, node):
        fail(node, "an unresolved 'only' node")

    def b_pending_xref(self, node):
        fail(node, "an unresolved cross-reference")

    def b_transition(self, node):
        return ["***"]

    def b_target(self, node):
        # A label's id moves to the element after it; what is left is an anchor of its own.
        return [] if node.get("refuri") else self.anchor_block(node)

    def b_raw(self, node):
        fmt = node.get("format", "").split()
        if "html" in fmt or "markdown" in fmt:
            return [node.astext()]
        return []  # raw LaTeX and the like: for other builders only

    def b_literal_block(self, node):
        text = node.astext().rstrip("\n")
        lang = node.get("language", "")
        if isinstance(node, nodes.doctest_block):
            lang = "python"
        if lang in ("", "none", "default", "text"):
            lang = "text"
        lang = {"c++": "cpp"}.get(lang, lang)
        fence = fence_for(text)
        return self.anchor_block(node) + [f"{fence}{lang}\n{text}\n{fence}"]

    def b_doctest_block(self, node):
        return self.b_literal_block(node)

    def b_math_block(self, node):
        text = node.astext()
        fence = fence_for(text)
        return [f"{fence}math\n{text}\n{fence}"]

    def b_line_block(self, node):
        lines = []
        for line in node.findall(nodes.line):
            lines.append(self.inlines(line.children) or "")
        text = "\\\n".join(guard_line_start(l) for l in lines)
        return [text] if text else []

    def b_block_quote(self, node):
        inner = self.blocks(node)
        return [self.quote(inner)] if inner else []

    def b_attribution(self, node):
        return [f"— {self.inlines(node.children)}"]

    def quote(self, blocks):
        lines = "\n\n".join(blocks).split("\n")
        return "\n".join(("> " + l) if l else ">" for l in lines)

    def b_admonition(self, node):
        kind = type(node).__name__
        body = [c for c in node.children if not isinstance(c, nodes.title)]
        titles = [c for c in node.children if isinstance(c, nodes.title)]
        if kind in ADMONITIONS and not titles:
            return [self.quote([f"[!{ADMONITIONS[kind]}]"] + self.blocks_of(body))]
        title = self.inlines(titles[0].children) if titles else kind.capitalize()
        if isinstance(node, addnodes.seealso):
            title = "See also"
        if FOLDED & set(node.get("classes", [])):
            summary = html_escape(titles[0].astext() if titles else kind.capitalize())
            return [f"<details>\n<summary>{summary}</summary>"] + self.blocks_of(body) + [
                "</details>"]
        return [self.quote([f"**{title}**"] + self.blocks_of(body))]

    b_note = b_tip = b_hint = b_important = b_warning = b_attention = b_admonition
    b_caution = b_danger = b_error = b_seealso = b_admonition

    def b_topic(self, node):
        return self.b_admonition(node)

    def b_sidebar(self, node):
        return self.b_admonition(node)

    # Lists ----------------------------------------------------------------------------------

    def list_items(self, node, markers):
        items, loose = [], False
        for item, marker in zip(node.children, markers):
            if not isinstance(item, nodes.list_item):
                fail(item, f"<{item.tagname}> in a list")
            inner = self.blocks(item) or [""]
            loose = loose or len(inner) > 1
            lines = "\n\n".join(inner).split("\n")
            anchors = self.anchors(item)
            if anchors and lines[0].startswith(("`", "|", "<details>")):
                lines = [anchors, ""] + lines  # a fence, a table or a fold starts a line
            elif anchors:
                lines[0] = anchors + lines[0]
            items.append("\n".join(indent(lines, marker, " " * len(marker))))
        return ["\n\n".join(items) if loose else "\n".join(items)]

    def b_bullet_list(self, node):
        return self.list_items(node, ["- "] * len(node.children))

    def b_enumerated_list(self, node):
        start = node.get("start", 1)
        n = len(node.children)
        width = len(str(start + n - 1))
        return self.list_items(node, [f"{start + i}.".ljust(width + 1) + " " for i in range(n)])

    def definition_items(self, node, item_type, term_types, body_type):
        out = []
        for item in node.children:
            if not isinstance(item, item_type):
                fail(item, f"<{item.tagname}> in a <{node.tagname}>")
            terms = [c for c in item.children if isinstance(c, term_types)]
            bodies = [c for c in item.children if isinstance(c, body_type)]
            others = [c for c in item.children if not isinstance(c, term_types + (body_type,))]
            for c in others:
                if not isinstance(c, nodes.classifier):
                    fail(c, f"<{c.tagname}> in a <{item.tagname}>")
            head = " · ".join(f"{self.anchors(t)}**{self.inlines(t.children).strip()}**"
                              for t in terms)
            classifiers = [self.inlines(c.children) for c in others]
            if classifiers:
                head += " : " + " : ".join(f"*{c}*" for c in classifiers)
            body = []
            for b in bodies:
                body.extend(self.blocks(b))
            lines = "\n\n".join([head] + body).split("\n")
            out.append("\n".join(indent(lines, "- ", "  ")))
        return ["\n\n".join(out)]

    def b_definition_list(self, node):
        return self.definition_items(node, nodes.definition_list_item, (nodes.term,),
                                     nodes.definition)

    def b_field_list(self, node):
        return self.definition_items(node, nodes.field, (nodes.field_name,), nodes.field_body)

    # Tables ---------------------------------------------------------------------------------

    def cell(self, entry):
        if entry.get("morerows") or entry.get("morecols"):
            fail(entry, "a table cell that spans rows or columns has no GFM form")
        parts = []
        for child in entry.children:
            if isinstance(child, nodes.paragraph):
                parts.append(self.anchors(child) + self.inlines(child.children).strip())
            elif isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                for i, item in enumerate(child.children):
                    marker = "•" if isinstance(child, nodes.bullet_list) else f"{i + 1}."
                    if len(item.children) != 1 or not isinstance(item[0], nodes.paragraph):
                        fail(item, "a list item in a table cell must be one paragraph")
                    parts.append(f"{marker} {self.inlines(item[0].children).strip()}")
            else:
                fail(child, f"<{child.tagname}> in a table cell has no GFM form")
        return "<br>".join(parts).replace("|", "\\|")

    def b_table(self, node):
        out = []  # the title
        titles = [c for c in node.children if isinstance(c, nodes.title)]
        if titles:
            out.append(self.paragraph_text(f"**{self.inlines(titles[0].children).strip()}**"))
        groups = [c for c in node.children if isinstance(c, nodes.tgroup)]
        if len(groups) != 1:
            fail(node, "a table with other than one tgroup")
        group = groups[0]
        cols = group.get("cols") or len([c for c in group if isinstance(c, nodes.colspec)])
        head, body = [], []
        for part in group.children:
            if isinstance(part, nodes.colspec):
                continue
            if not isinstance(part, (nodes.thead, nodes.tbody)):
                fail(part, f"<{part.tagname}> in a table")
            rows = [[self.cell(e) for e in row.children] for row in part.children]
            (head if isinstance(part, nodes.thead) else body).extend(rows)
        for row in head + body:
            if len(row) != cols:
                fail(node, f"a table row with {len(row)} cells in a table of {cols} columns")
        if len(head) > 1:  # GFM has one header row; the others become bold body rows
            body = [[f"**{c}**" if c else c for c in r] for r in head[1:]] + body
        header = head[0] if head else [""] * cols
        line = lambda cells: "| " + " | ".join(cells) + " |"
        rows = [line(header), "|" + "|".join(["---"] * cols) + "|"] + [line(r) for r in body]
        return self.anchor_block(node) + out + ["\n".join(rows)]

    # Figures and images ---------------------------------------------------------------------

    def image_markdown(self, node):
        uri = node["uri"]
        if "://" not in uri:
            path = os.path.normpath(os.path.join(self.builder.srcdir, uri))
            if not os.path.isfile(path):
                fail(node, f"the image {uri} is not a file of the repository ({path})")
            uri = self.builder.relative_path(self.docname, path)
        alt = node.get("alt")
        if not alt and isinstance(node.parent, nodes.figure):
            # The caption's first sentence; the whole caption follows the image.
            captions = [c for c in node.parent.children if isinstance(c, nodes.caption)]
            alt = re.split(r"(?<=\.)\s", captions[0].astext())[0] if captions else ""
        alt = " ".join((alt or posixpath.basename(uri)).split())
        alt = alt.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
        return f"![{alt}]({link_destination(uri)})"

    def b_image(self, node):
        return [self.anchors(node) + self.image_markdown(node)]

    def b_figure(self, node):
        out, notes = [], []
        for child in node.children:
            if isinstance(child, nodes.image):
                out.append(self.anchors(node) + self.image_markdown(child))
            elif isinstance(child, nodes.reference) and len(child) == 1 and isinstance(
                    child[0], nodes.image):
                out.append(self.anchors(node) + self.inlines([child]))
            elif isinstance(child, nodes.caption):
                notes.append(guard_line_start(self.inlines(child.children).strip()))
            elif isinstance(child, nodes.legend):
                notes.extend(self.blocks(child))
            else:
                fail(child, f"<{child.tagname}> in a figure")
        if notes:
            out.append(self.quote(notes))
        return out

    def b_legend(self, node):
        return self.blocks(node)

    def b_caption(self, node):
        return [self.paragraph_text(self.inlines(node.children), node)]

    # Footnotes and citations ----------------------------------------------------------------

    def b_footnote(self, node):
        label = self.footnote_label(node["ids"][0])
        body = [c for c in node.children if not isinstance(c, nodes.label)]
        blocks = self.blocks_of(body)
        lines = "\n\n".join(blocks).split("\n")
        return ["\n".join(indent(lines, f"[^{label}]: ", "    "))]

    def b_citation(self, node):
        return self.b_footnote(node)

    def footnote_label(self, node_id):
        return self.footnotes.setdefault(node_id, str(len(self.footnotes) + 1))

    # The diff of hm-diff --------------------------------------------------------------------

    def b_hm_diff(self, node):
        # The full diff, folded; the site's second view (code only) would repeat most of it,
        # so here it is named by its summary alone.
        views = [c for c in node.children if isinstance(c, hm_docs.hm_diff_view)]
        if not views or len(views) != len(node.children):
            fail(node, "a diff whose children are not views")
        blocks = self.b_hm_diff_view(views[0])
        for view in views[1:]:
            text = view_summary(view).astext().removeprefix("Code only: ")
            blocks.append(f"On the site a second view shows the code only: {text}.")
        return blocks

    def b_hm_diff_view(self, node):
        summary = view_summary(node)
        body = self.blocks_of([c for c in node.children if c is not summary])
        return [f"<details>\n<summary>{html_escape(summary.astext())}</summary>"] + body + [
            "</details>"]

    # Breathe's API pages, rendered without Doxygen --------------------------------------------

    def b_hm_api_stub(self, node):
        name = node["namespace"]
        folder = "common" if name == "hm" else name
        path = os.path.join(self.builder.repo, folder)
        if os.path.isdir(path):
            home = f"declared in [`{folder}/`]({self.builder.relative_path(self.docname, path)})"
        else:
            home = "declared in the sources"
        return [f"**Namespace `{name}`**, {home}.  Its full reference, every declaration "
                "with its comment, is generated by Doxygen and Breathe on the site "
                "(`scripts/docs.sh`)."]

    # -- inline markup: a string ------------------------------------------------------------

    def inlines(self, children):
        # Emphasis is written *x* (or **x**) where CommonMark reads it back as emphasis, and
        # <em>x</em> where it would not: inner text that starts with punctuation right after a
        # letter, or ends with punctuation right before one.
        parts = [self.inline(child) for child in children]
        out = []
        for i, part in enumerate(parts):
            if not isinstance(part, tuple):
                out.append(part)
                continue
            delim, tag, inner = part
            lead = inner[: len(inner) - len(inner.lstrip())]
            trail = inner[len(inner.rstrip()):]
            inner = inner.strip()
            if not inner:
                out.append(lead + trail)
                continue
            done = "".join(out)
            before = lead[-1:] or done[-1:]
            after = trail[:1]
            for nxt in parts[i + 1:]:
                if after:
                    break
                after = delim[0] if isinstance(nxt, tuple) else nxt[:1]
            html = ((is_punct(inner[0]) and is_word(before))
                    or (is_punct(inner[-1]) and is_word(after)))
            out.append(lead + (f"<{tag}>{inner}</{tag}>" if html else f"{delim}{inner}{delim}")
                       + trail)
        return "".join(out)

    def inline(self, node):
        if isinstance(node, nodes.Text):
            return escape(node.astext().replace("\n", " "))
        if isinstance(node, SILENT):
            return ""
        if isinstance(node, (nodes.system_message, nodes.problematic)):
            fail(node, f"the page has an error: {node.astext()[:200]}")
        for cls in type(node).__mro__:
            method = getattr(self, "i_" + cls.__name__, None)
            if method is not None:
                return method(node)
            if cls in (nodes.Element, nodes.Node):
                break
        fail(node, f"no inline Markdown rendering for <{node.tagname}> "
                   f"({type(node).__module__}.{type(node).__name__}); add one to hm_markdown.py")

    def i_emphasis(self, node):
        return ("*", "em", self.inlines(node.children))

    def i_title_reference(self, node):
        return self.i_emphasis(node)

    def i_strong(self, node):
        return ("**", "strong", self.inlines(node.children))

    def i_literal(self, node):
        return code_span(node.astext())

    def i_literal_emphasis(self, node):
        return self.i_literal(node)

    def i_literal_strong(self, node):
        return self.i_literal(node)

    def i_subscript(self, node):
        return f"<sub>{self.inlines(node.children)}</sub>"

    def i_superscript(self, node):
        return f"<sup>{self.inlines(node.children)}</sup>"

    def i_inline(self, node):
        return self.anchors(node) + self.inlines(node.children)

    def i_generated(self, node):
        return self.inlines(node.children)

    def i_abbreviation(self, node):
        return self.inlines(node.children)

    def i_target(self, node):
        return self.anchors(node) + self.inlines(node.children)

    def i_math(self, node):
        return f"${node.astext()}$"

    def i_raw(self, node):
        fmt = node.get("format", "").split()
        return node.astext() if "html" in fmt or "markdown" in fmt else ""

    def i_image(self, node):
        return self.image_markdown(node)

    def i_footnote_reference(self, node):
        return f"[^{self.footnote_label(node['refid'])}]"

    def i_citation_reference(self, node):
        return self.i_footnote_reference(node)

    def i_reference(self, node):
        text = self.inlines(node.children)
        if "refuri" in node:
            uri = node["refuri"]
            if "://" in uri or uri.startswith("mailto:"):
                href = uri
            else:
                href = self.builder.fix_anchor(self.docname, uri, node)
        elif "refid" in node:
            href = "#" + self.builder.anchor(self.docname, node["refid"])
        else:
            fail(node, f"a reference without a target: {node.astext()}")
        if text == escape(href) and "://" in href:
            return f"<{href}>"
        return f"[{text}]({link_destination(href)})"

    def i_number_reference(self, node):
        return self.i_reference(node)

    def i_download_reference(self, node):
        path = os.path.normpath(os.path.join(self.builder.srcdir, node["reftarget"].lstrip("/")))
        if not os.path.exists(path):
            fail(node, f"the download {node['reftarget']} is not a file of the repository")
        return f"[{self.inlines(node.children)}]({self.builder.relative_path(self.docname, path)})"


# ---------------------------------------------------------------------------------------------
# Breathe without Doxygen

class hm_api_stub(nodes.General, nodes.Element):
    """A Breathe directive's place in the Markdown rendering: ``namespace`` names it."""


class ApiStub(Directive):
    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = True
    has_content = True
    option_spec = None  # any option is accepted and ignored

    def run(self):
        node = hm_api_stub()
        node["namespace"] = self.arguments[0]
        return [node]


class AnyOptions(dict):
    """Every option name is accepted (docutils parses options only if the spec is truthy)."""
    def __getitem__(self, key):
        return directives.unchanged

    def __bool__(self):
        return True


ApiStub.option_spec = AnyOptions()


def stub_breathe(app):
    """In the markdown builder, Breathe's directives become one line each, so that the
    rendering needs no Doxygen XML (the site has the full API reference)."""
    if app.builder.name != MarkdownBuilder.name:
        return
    for name in list(directives._directives) + ["doxygennamespace", "doxygenclass",
                                                "doxygenstruct", "doxygenfunction",
                                                "doxygenfile", "doxygengroup"]:
        if name.startswith("doxygen"):
            app.add_directive(name, ApiStub, override=True)


# ---------------------------------------------------------------------------------------------
# The builder

class MarkdownBuilder(Builder):
    name = "markdown"
    format = "markdown"
    epilog = "The Markdown rendering is in %(outdir)s."
    out_suffix = ".md"
    allow_parallel = False
    supported_image_types = ["image/svg+xml", "image/png", "image/gif", "image/jpeg"]

    def init(self):
        self.repo = os.path.abspath(self.config.hm_root or os.path.join(self.srcdir, ".."))
        self.final = os.path.abspath(self.config.hm_markdown_dir
                                     or os.path.join(self.srcdir, "markdown"))
        self._slugs = {}

    def get_outdated_docs(self):
        return self.env.found_docs

    def is_markdown_source(self, docname):
        return not self.env.doc2path(docname).endswith(".rst")

    def target_file(self, docname):
        if self.is_markdown_source(docname):
            return self.env.doc2path(docname)
        return os.path.join(self.final, docname + self.out_suffix)

    def relative_path(self, from_doc, path):
        here = os.path.dirname(os.path.join(self.final, from_doc))
        return os.path.relpath(path, here).replace(os.sep, "/")

    def get_target_uri(self, docname, typ=None):
        return docname + self.out_suffix

    def get_relative_uri(self, from_, to, typ=None):
        return self.relative_path(from_, self.target_file(to))

    # Anchors: a section's ids become the anchor GitHub derives from its heading.
    def slugs(self, docname):
        if docname not in self._slugs:
            doctree = self.env.get_doctree(docname)
            ids, seen = {}, {}
            for section in doctree.findall(nodes.section):
                base = slugify(section[0].astext()) if len(section) else ""
                slug = base if base not in seen else f"{base}-{seen[base]}"
                seen[base] = seen.get(base, 0) + 1
                for i in section["ids"]:
                    ids[i] = slug
            self._slugs[docname] = ids
        return self._slugs[docname]

    def link_targets(self, docname):
        """The ids of the page that a link can name: its labels and objects (glossary terms)
        in the std domain, and every id this page's own links point at."""
        std = self.env.get_domain("std")
        ids = {labelid for doc, labelid in std.anonlabels.values() if doc == docname}
        ids |= {labelid for doc, labelid in std.objects.values() if doc == docname}
        doctree = self.env.get_doctree(docname)
        ids |= {n["refid"] for n in doctree.findall(nodes.reference) if "refid" in n}
        return ids

    def anchor(self, docname, node_id):
        return self.slugs(docname).get(node_id) or anchor_id(node_id)

    def fix_anchor(self, from_doc, uri, node):
        path, _, anchor = uri.partition("#")
        if not path:
            return "#" + self.anchor(from_doc, anchor) if anchor else "#"
        target = os.path.normpath(os.path.join(os.path.dirname(os.path.join(self.final,
                                                                            from_doc)), path))
        if not hasattr(self, "_docs_by_file"):
            self._docs_by_file = {os.path.normpath(self.target_file(d)): d
                                  for d in self.env.found_docs}
        docname = self._docs_by_file.get(target)
        if docname is None:
            if not os.path.exists(target):
                fail(node, f"a link to {uri}, which is neither a page nor a file")
            return uri
        return path + ("#" + self.anchor(docname, anchor) if anchor else "")

    def prepare_writing(self, docnames):
        pass

    def write_doc(self, docname, doctree):
        if self.is_markdown_source(docname):
            return  # already Markdown: its links point at its source
        page = Page(self, docname)
        blocks = page.blocks(doctree)
        source = os.path.relpath(self.env.doc2path(docname), self.repo).replace(os.sep, "/")
        text = HEADER.format(source=source) + "\n\n" + "\n\n".join(b for b in blocks if b)
        text = re.sub(r"[ \t]+\n", "\n", text).rstrip("\n") + "\n"
        path = os.path.join(self.outdir, docname + self.out_suffix)
        ensuredir(os.path.dirname(path))
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)

    def finish(self):
        pass


def exclude_rendering(app, config):
    """The committed rendering lies inside the docs' source folder (docs/markdown/), and .md
    files are pages (MyST): keep every builder from reading it as a second copy of the site."""
    final = os.path.abspath(config.hm_markdown_dir or os.path.join(app.srcdir, "markdown"))
    rel = os.path.relpath(final, app.srcdir).replace(os.sep, "/")
    if not rel.startswith("..") and rel not in config.exclude_patterns:
        config.exclude_patterns = list(config.exclude_patterns) + [rel]


def setup(app):
    app.add_config_value("hm_markdown_dir", "", "env")
    app.connect("config-inited", exclude_rendering)
    app.add_builder(MarkdownBuilder)
    app.add_node(hm_api_stub)
    app.connect("builder-inited", stub_breathe)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
