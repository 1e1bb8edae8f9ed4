#!/usr/bin/env python3
"""Loads every page of the built site in headless Chromium and checks that it rendered and
that every image on it loaded (docs/_static/image-check.js records that in the DOM).  Every
chapter must show at least one image.  Optionally takes a screenshot of one page.

    scripts/docs_browser_check.py HTML_DIR [--screenshot PNG --screenshot-page PAGE]
"""
import argparse
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    sys.exit("no chromium found (sudo apt-get install chromium)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("html")
    ap.add_argument("--screenshot")
    ap.add_argument("--screenshot-page", default="index.html")
    args = ap.parse_args()
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=args.html)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    browser = chromium()
    pages = sorted(os.path.relpath(os.path.join(d, f), args.html)
                   for d, _, files in os.walk(args.html) for f in files
                   if f.endswith(".html") and "_static" not in d and "_sources" not in d
                   and f not in ("search.html", "genindex.html"))
    failures = 0
    with tempfile.TemporaryDirectory() as profile:
        for page in pages:
            dom = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                                  "--virtual-time-budget=10000", "--dump-dom", base + page],
                                 capture_output=True, text=True, timeout=120).stdout
            m = re.search(r'id="hm-image-check"[^>]*data-images="(\d+)"[^>]*data-broken="([^"]*)"', dom)
            if not m:
                print(f"FAIL {page}: did not finish loading (no image-check marker)")
                failures += 1
                continue
            images, broken = int(m.group(1)), m.group(2).split()
            problem = ""
            if broken:
                problem = "broken images: " + " ".join(broken)
            elif page.startswith("chapters/") and images == 0:
                problem = "a chapter without a single figure or plot"
            print(f"{'FAIL' if problem else 'ok  '} {page}: {images} images {problem}")
            failures += bool(problem)
        if args.screenshot:
            subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                            "--virtual-time-budget=10000", "--window-size=1280,2400",
                            f"--screenshot={os.path.abspath(args.screenshot)}",
                            base + args.screenshot_page], capture_output=True, timeout=120)
            ok = os.path.exists(args.screenshot) and os.path.getsize(args.screenshot) > 10000
            print(f"{'ok  ' if ok else 'FAIL'} screenshot of {args.screenshot_page}: {args.screenshot}")
            failures += not ok
    server.shutdown()
    print(f"browser check: {'FAILED' if failures else 'passed'} ({len(pages)} pages)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
