#!/usr/bin/env python3
"""Checks the chapters' figures without a GPU: every docs/figures/v*.py runs (and with it the
replicas' own checks against the code and the host tests, such as v8.py's check()), into a
temporary directory, and draws exactly the SVGs committed beside it, byte for byte.  A
script that fails, or a figure that is stale, fails with the command that redraws it.  The
bytes depend on matplotlib's version, so where it is not the one that drew the committed
figures (their metadata names it) the scripts still run and check, and the comparison is
reported SKIPPED."""
import filecmp
import glob
import os
import re
import subprocess
import sys
import tempfile

import matplotlib

root = sys.argv[1]
figures = os.path.join(root, "docs", "figures")
failures, drawn = [], 0
drawn_by = set()
for svg in glob.glob(os.path.join(figures, "*.svg")):
    with open(svg, encoding="utf-8") as f:
        found = re.search(r"Matplotlib v([0-9][\w.+]*)", f.read(4096))
    drawn_by.add(found.group(1) if found else "unknown")
compare = drawn_by == {matplotlib.__version__}
with tempfile.TemporaryDirectory() as tmp:
    for script in sorted(glob.glob(os.path.join(figures, "v*.py"))):
        name = os.path.basename(script)
        run = subprocess.run([sys.executable, script], cwd=figures, capture_output=True,
                             text=True, env=dict(os.environ, HM_FIGURE_OUT=tmp))
        if run.returncode != 0:
            failures.append(f"{name} failed:\n{run.stderr.strip()}")
    for svg in sorted(glob.glob(os.path.join(tmp, "*.svg"))):
        drawn += 1
        committed = os.path.join(figures, os.path.basename(svg))
        if not os.path.exists(committed):
            failures.append(f"{os.path.basename(svg)} is drawn but not committed")
        elif compare and not filecmp.cmp(svg, committed, shallow=False):
            failures.append(f"{os.path.basename(svg)} is stale")
for f in failures:
    print("FAIL", f)
if failures:
    print("figures check: FAILED; redraw with: cd docs/figures && python3 vN.py")
    sys.exit(1)
if not compare:
    print(f"figures check: {drawn} figures drawn and their scripts' checks passed; the "
          f"byte comparison SKIPPED: matplotlib {matplotlib.__version__} here, the committed "
          f"figures drawn by {', '.join(sorted(drawn_by))}")
    sys.exit(0)
print(f"figures check: passed ({drawn} figures)")
