#!/usr/bin/env python3
"""Checks that the Markdown a code host shows resolves: every relative link and image in
README.md and docs/markdown/**.md names a file of the repository, and every #anchor names a
heading (by GitHub's slug of its text) or an <a id> of the page it points to.  Parses with
markdown-it-py (CommonMark + GFM tables), the parser MyST uses.

    scripts/markdown_links.py [ROOT]        (exit 1 on a broken link, 77 without markdown-it)
"""
import os
import re
import sys
from urllib.parse import unquote

try:
    from markdown_it import MarkdownIt
except ImportError:
    print("SKIPPED: markdown_links needs markdown-it-py: sudo apt-get install -y "
          "python3-markdown-it")
    sys.exit(77)

# The heading anchors are the Markdown builder's own (GitHub's slugs of the heading text).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "_ext"))
from hm_markdown import slugify  # noqa: E402


def parse(md, path):
    with open(path, encoding="utf-8") as f:
        return md.parse(f.read())


def anchors(md, path, cache):
    """The anchors of a page: its headings' slugs (repeats numbered as GitHub does) and ids."""
    if path not in cache:
        found, seen = set(), {}
        tokens = parse(md, path)
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open":
                text = "".join(c.content for c in tokens[i + 1].children or []
                               if c.type in ("text", "code_inline"))
                base = slugify(text)
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            for html in ([tok.content] if tok.type in ("html_block", "html_inline") else []) + \
                    [c.content for c in tok.children or [] if c.type == "html_inline"]:
                found.update(re.findall(r'<a\s+id="([^"]+)"', html))
        cache[path] = found
    return cache[path]


def targets(tokens):
    """(kind, destination) of every link and image, inline or in raw HTML."""
    for tok in tokens:
        for c in [tok] + list(tok.children or []):
            if c.type == "link_open":
                yield "link", c.attrGet("href")
            elif c.type == "image":
                yield "image", c.attrGet("src")
            elif c.type in ("html_block", "html_inline"):
                for attr, dest in re.findall(r'\b(href|src)="([^"]+)"', c.content):
                    yield ("link" if attr == "href" else "image"), dest


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    md = MarkdownIt("commonmark").enable("table")
    pages = [os.path.join(root, "README.md")]
    for base, _, files in os.walk(os.path.join(root, "docs", "markdown")):
        pages += [os.path.join(base, f) for f in sorted(files) if f.endswith(".md")]
    cache, broken, checked = {}, [], 0
    for page in pages:
        for kind, dest in targets(parse(md, page)):
            if not dest or re.match(r"^[a-z]+:", dest) or dest.startswith("//"):
                continue  # external (https:, mailto:)
            checked += 1
            file_part, _, anchor = dest.partition("#")
            target = page if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(page), unquote(file_part)))
            where = f"{os.path.relpath(page, root)}: {kind} {dest}"
            if not os.path.exists(target):
                broken.append(f"{where}: no file {os.path.relpath(target, root)}")
            elif anchor and target.endswith(".md") and \
                    unquote(anchor) not in anchors(md, target, cache):
                broken.append(f"{where}: no anchor '{anchor}' in {os.path.relpath(target, root)}")
    for b in broken:
        print("FAIL " + b)
    print(f"markdown links: {'FAILED' if broken else 'passed'} ({checked} links and images "
          f"in {len(pages)} pages)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
