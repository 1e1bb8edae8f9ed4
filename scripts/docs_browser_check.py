#!/usr/bin/env python3
"""Loads every page of the built site in headless Chromium at a 1400 px wide window (its scroll
bar shown, as a reader's is) and fails, naming the page and what is wrong, when

  - the page did not finish loading, or an image on it did not load, or a chapter shows no
    image at all;
  - the page is wider than the window, or furo's navigation, text column or contents end
    past its right edge;
  - a code block (pre: code, diffs, literal blocks) or a table is wider than the box it sits
    in (its content scrolls or is cut: scroll width > visible width + 1 px), or its right
    edge lies past the right edge of the text column (article[role=main]);
  - any text of an SVG figure renders under 10 px at that width.

The measuring is done in the page, by docs/_static/image-check.js when the address carries
?hm-check: it draws each SVG figure, hidden, at the size its <img> has on the page and
multiplies each text's font size by the scale of its screen transform (see that file); the
results come back through the DOM that Chromium dumps.  Optionally takes a screenshot of one
page at the same width.

    scripts/docs_browser_check.py HTML_DIR [--screenshot PNG --screenshot-page PAGE]
                                  [--width 1400] [--min-text-px 10]

Exits 77 (CTest's SKIPPED) when there is no Chromium, saying how to install it.
"""
import argparse
import concurrent.futures
import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

SKIPPED = 77
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MAX_LISTED = 8  # small texts listed per figure; the rest are counted


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def layout_problems(page, layout, width, min_px):
    """The layout failures of one page, as lines, and a one-line summary of what was seen."""
    problems = []
    if layout.get("error"):
        return [f"the layout check raised: {layout['error']}"], ""
    if layout.get("innerWidth") != width:
        problems.append(f"the window is {layout.get('innerWidth')} px wide, not {width}: the "
                        "measurements below are not at the width this check promises")
    window = layout["clientWidth"]
    if layout["scrollWidth"] > window + 1:
        problems.append(f"the page is {layout['scrollWidth']} px wide, wider than the "
                        f"{window} px of the window")
    for b in layout["boxes"]:
        if b["right"] > window + 1:
            problems.append(f"{b['selector']} ends at x = {b['right']:.0f} px, past the "
                            f"window's {window} px")
    column = layout["column"]["right"]
    for b in layout["blocks"]:
        what = "code block" if b["kind"] == "pre" else "table"
        where = (f"{what} in #{b['section'] or '(top)'} starting {b['first']!r}"
                 f" ({b['lang'].strip() or 'no class'})")
        if b["scrollWidth"] > b["clientWidth"] + 1:
            problems.append(f"{where} is cut: {b['scrollWidth']} px of content in "
                            f"{b['clientWidth']} px of box")
        if b["right"] > column + 1:
            problems.append(f"{where} ends at x = {b['right']:.0f} px, past the text "
                            f"column's right edge at {column:.0f} px")
    smallest = None
    for f in layout["figures"]:
        if not f["texts"]:
            if f["width"] > 0:
                problems.append(f"figure {f['src']}: no text found to measure")
            continue
        low = min(t["px"] for t in f["texts"])
        smallest = low if smallest is None else min(smallest, low)
        small = sorted((t for t in f["texts"] if t["px"] < min_px), key=lambda t: t["px"])
        if small:
            listed = ", ".join(f"{t['label']!r} {t['px']:.1f} px" for t in small[:MAX_LISTED])
            more = f" and {len(small) - MAX_LISTED} more" if len(small) > MAX_LISTED else ""
            problems.append(f"figure {f['src']} (drawn {f['width']:.0f} px wide, viewBox "
                            f"{f['viewBox']}): {len(small)} of {len(f['texts'])} texts render "
                            f"under {min_px} px: {listed}{more}")
    seen = (f"{len(layout['blocks'])} code blocks and tables, {len(layout['figures'])} SVG "
            "figures" + (f" (smallest text {smallest:.1f} px)" if smallest is not None else ""))
    return problems, seen


def marker(dom, name):
    m = re.search(rf'<div id="{name}"[^>]*>(.*?)</div>', dom, re.S)
    return m and (m.group(0), html.unescape(m.group(1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("html")
    ap.add_argument("--screenshot")
    ap.add_argument("--screenshot-page", default="index.html")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--min-text-px", type=float, default=10)
    args = ap.parse_args()
    browser = chromium()
    if not browser:
        print("SKIPPED: browser check: no Chromium here: sudo apt-get install -y chromium")
        return SKIPPED

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=args.html)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = sorted(os.path.relpath(os.path.join(d, f), args.html)
                   for d, _, files in os.walk(args.html) for f in files
                   if f.endswith(".html") and "_static" not in d and "_sources" not in d
                   and f not in ("search.html", "genindex.html"))
    failures = 0
    window = f"--window-size={args.width},1000"

    def check(page, profile):
        """What one page shows: the lines to print and whether it failed."""
        dom = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", window,
                              "--virtual-time-budget=20000", "--dump-dom",
                              base + page + "?hm-check"],
                             capture_output=True, text=True, timeout=120).stdout
        m = re.search(r'id="hm-image-check"[^>]*data-images="(\d+)"[^>]*data-broken="([^"]*)"', dom)
        layout = marker(dom, "hm-layout-check")
        if not m or not layout:
            return [f"FAIL {page}: did not finish loading (no image-check or layout marker)"], True
        images, broken = int(m.group(1)), m.group(2).split()
        problems = []
        if broken:
            problems.append("broken images: " + " ".join(broken))
        elif page.startswith("chapters/") and images == 0:
            problems.append("a chapter without a single figure or plot")
        more, seen = layout_problems(page, json.loads(layout[1]), args.width, args.min_text_px)
        problems += more
        lines = [f"{'FAIL' if problems else 'ok  '} {page}: {images} images, {seen}"]
        return lines + [f"       {p}" for p in problems], bool(problems)

    # One Chromium per page (its start is most of a page's time), as many at once as there
    # are cores, each with a profile of its own; the pages are reported in order.
    workers = max(1, min(len(pages), os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as profiles:
        def check_in_own_profile(page):
            profile = os.path.join(profiles, str(threading.get_ident()))
            return check(page, profile)

        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for lines, failed in pool.map(check_in_own_profile, pages):
                print("\n".join(lines))
                failures += failed
        profile = os.path.join(profiles, "screenshot")
        if args.screenshot:
            subprocess.run([browser, *FLAGS, "--hide-scrollbars", f"--user-data-dir={profile}",
                            "--virtual-time-budget=10000", f"--window-size={args.width},2400",
                            f"--screenshot={os.path.abspath(args.screenshot)}",
                            base + args.screenshot_page], capture_output=True, timeout=120)
            ok = os.path.exists(args.screenshot) and os.path.getsize(args.screenshot) > 10000
            print(f"{'ok  ' if ok else 'FAIL'} screenshot of {args.screenshot_page}: {args.screenshot}")
            failures += not ok
    server.shutdown()
    print(f"browser check: {'FAILED' if failures else 'passed'} ({len(pages)} pages at "
          f"{args.width} px; code, diffs and tables within the column; figure text "
          f">= {args.min_text_px:g} px)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
