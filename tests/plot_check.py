#!/usr/bin/env python3
"""Checks scripts/plot.py on the recorded H200 run, without a GPU: every plot is drawn, the
SVG output is byte-identical when drawn twice, and the README's results table is what the
recorded JSON gives (a stale table fails)."""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1]
bench = os.path.join(root, "results", "h200", "bench.json")
ladder = os.path.join("results", "h200", "ladder_bf16.json")  # relative: the README names it
readme = os.path.join(root, "README.md")
expected = ["ladder.svg", "ladder.png", "sizes.svg", "sizes.png"] + [
    f"ladder_v{n}.svg" for n in range(len([d for d in os.listdir(root) if d[:1] == "v" and d[1].isdigit()]))]
failures = []
with tempfile.TemporaryDirectory() as tmp:
    outs = []
    for run in ("a", "b"):
        out = os.path.join(tmp, run)
        copy = os.path.join(tmp, f"README.{run}.md")
        shutil.copy(readme, copy)
        subprocess.run([sys.executable, os.path.join(root, "scripts", "plot.py"), "--bench", bench,
                        "--ladder", ladder, "--out", out, "--readme", copy], check=True, cwd=root)
        outs.append((out, copy))
    (a, readme_a), (b, _) = outs
    for name in expected:
        if not os.path.exists(os.path.join(a, name)):
            failures.append(f"{name} was not drawn")
        elif name.endswith(".svg") and not filecmp.cmp(os.path.join(a, name), os.path.join(b, name),
                                                       shallow=False):
            failures.append(f"{name} differs between two runs on the same data")
    if not filecmp.cmp(readme_a, readme, shallow=False):
        failures.append("README.md's results table is stale: run scripts/plot.py --ladder "
                        "results/h200/ladder_bf16.json --readme README.md")
for f in failures:
    print("FAIL", f)
print("plot check:", "FAILED" if failures else f"passed ({len(expected)} plots)")
sys.exit(1 if failures else 0)
