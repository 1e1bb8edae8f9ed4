#!/usr/bin/env python3
"""The inputs the documentation site reads from a CUDA build, committed under docs/from-build/
so that the site builds on a machine without the CUDA toolkit and without a GPU:

    docs/from-build/ptxas/VERSION.txt   ptxas's -v report on VERSION/matmul.cu (the
                                        hm-resources tables: registers, barriers, stack
                                        frame, spills, warnings)
    docs/from-build/kernels.json        `hopper-matmul list --json` (their launch lines)

A report is committed without what differs between two builds of the same sources: its
"Compile time = … ms" lines, the source tree's absolute path and nvcc's temporary file
names.  So a clean clone anywhere, with the same nvcc, writes the same bytes.

    scripts/docs_inputs.py [--check] [BUILD_DIR]   fails, naming every stale file and the
                                                   command that refreshes it, unless the
                                                   committed copy is what BUILD_DIR's build
                                                   wrote (default build/release; CTest
                                                   `docs_inputs` runs it on its own tree)
    scripts/docs_inputs.py --update [BUILD_DIR]    rewrites the committed copy from BUILD_DIR

BUILD_DIR is a CMake build of this tree (`cmake --workflow --preset release`): it holds
ptxas/VERSION.txt for every version folder and kernels.json.
"""
import argparse
import difflib
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
COMMITTED = os.path.join("docs", "from-build")
VERSION = re.compile(r"^v(\d+)_[a-z0-9_]+$")


def versions():
    found = [d for d in os.listdir(ROOT)
             if VERSION.match(d) and os.path.exists(os.path.join(ROOT, d, "matmul.cu"))]
    return sorted(found, key=lambda d: int(VERSION.match(d).group(1)))


def normalize_report(text):
    """A ptxas report without what changes from one build of the same sources to the next."""
    lines = [l for l in text.splitlines() if not re.search(r"\bCompile time = ", l)]
    text = "\n".join(lines) + "\n"
    text = text.replace(ROOT + os.sep, "")
    return re.sub(r"\S*tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_", "<tmp>/", text)


def expected(build):
    """{committed path (relative to ROOT): (its expected text, the build file it comes from)}."""
    out = {}
    for v in versions():
        src = os.path.join(build, "ptxas", f"{v}.txt")
        out[os.path.join(COMMITTED, "ptxas", f"{v}.txt")] = (
            normalize_report(read(src)) if os.path.exists(src) else None, src)
    src = os.path.join(build, "kernels.json")
    out[os.path.join(COMMITTED, "kernels.json")] = (
        read(src) if os.path.exists(src) else None, src)
    return out


def committed_files():
    found = set()
    for d, _, files in os.walk(os.path.join(ROOT, COMMITTED)):
        found.update(os.path.relpath(os.path.join(d, f), ROOT) for f in files)
    return found


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="the default")
    mode.add_argument("--update", action="store_true")
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build", "release"))
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    want = expected(build)
    missing = [src for text, src in want.values() if text is None]
    if missing:
        print("FAIL the build has not written: " + " ".join(missing) +
              f"\n     build it first: cmake --build {build}")
        return 1
    extra = sorted(committed_files() - set(want))
    shown = os.path.relpath(build, ROOT) if build.startswith(ROOT + os.sep) else build
    refresh = f"scripts/docs_inputs.py --update {shown}"
    if args.update:
        for path, (text, _) in want.items():
            full = os.path.join(ROOT, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if not os.path.exists(full) or read(full) != text:
                with open(full, "w", encoding="utf-8") as f:
                    f.write(text)
                print(f"updated {path}")
        for path in extra:
            os.remove(os.path.join(ROOT, path))
            print(f"removed {path} (no version folder writes it)")
        print(f"docs inputs: {COMMITTED} is {build}'s ({len(want)} files); commit it")
        return 0
    stale = 0
    for path, (text, src) in want.items():
        full = os.path.join(ROOT, path)
        if not os.path.exists(full):
            print(f"FAIL {path} is missing (the build has {src})")
            stale += 1
        elif read(full) != text:
            print(f"FAIL {path} is stale: it differs from {src}")
            diff = list(difflib.unified_diff(read(full).splitlines(), text.splitlines(),
                                             fromfile=path, tofile=src, lineterm="", n=1))
            print("\n".join("     " + l for l in diff[:20]))
            if len(diff) > 20:
                print(f"     … {len(diff) - 20} more diff lines")
            stale += 1
        else:
            print(f"ok   {path}")
    for path in extra:
        print(f"FAIL {path} is stale: no version folder writes it")
        stale += 1
    if stale:
        print(f"docs inputs: FAILED ({stale} stale); refresh and commit them:\n  {refresh}")
        return 1
    print(f"docs inputs: passed ({len(want)} files match {build})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
