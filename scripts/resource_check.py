#!/usr/bin/env python3
"""The compiler resource check, in three modes.

report  -- runs nvcc with -Xptxas=-v and writes everything it printed to a report file
           (the build runs this for every version; the docs read the same file).
check   -- reads reports and fails unless every kernel has a 0-byte stack frame and no
           spills, and ptxas printed no warning (serialized wgmma, an injected warpgroup
           wait, an ignored setmaxnreg, spills, or anything else).
sass    -- disassembles each version's cubin with cuobjdump and checks its tensor-core
           instruction: v0 must use HMMA, every later version HGMMA.  Exits 77 (CTest's
           SKIPPED) when there is no cuobjdump.
"""
import argparse
import os
import re
import subprocess
import sys

SKIPPED = 77

# Warnings that mean a kernel runs slower than written; any other ptxas warning fails too.
KNOWN_WARNINGS = {
    "serialized wgmma": re.compile(r"wgmma.*serializ", re.I),
    "injected warpgroup wait": re.compile(r"warpgroup\.(arrive|wait).*inject", re.I),
    "setmaxnreg ignored": re.compile(r"setmaxnreg.*ignored|C7508", re.I),
    "spills": re.compile(r"spill", re.I),
}


# A line of the report that is a diagnostic.  ptxas prints some of those above as info lines,
# not warnings ("ptxas info : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; ..."),
# so a line counts when it says warning, carries a diagnostic number (C7508, C7517, ...) or
# says Performance Loss.
DIAGNOSTIC = re.compile(r"\bwarning\b|\(C\d{4}\)|Performance Loss", re.I)


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.splitlines()
        return dict(zip(names, out))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def parse_report(text):
    """Returns ({kernel: {registers, barriers, stack, spill_stores, spill_loads, smem}},
    [warnings]).  The docs' resource tables (docs/_ext/hm_docs.py) read reports with it too."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = kernels.setdefault(m.group(1), {})
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and current is not None:
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)),
                           spill_loads=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers(?:, used (\d+) barriers)?", line)
        if m and current is not None:
            current["registers"] = int(m.group(1))
            current["barriers"] = int(m.group(2) or 0)
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
    warnings = [l.strip() for l in text.splitlines() if DIAGNOSTIC.search(l)]
    return kernels, warnings


def cmd_report(args):
    result = subprocess.run(args.command, capture_output=True, text=True)
    with open(args.output, "w") as f:
        f.write(result.stdout + result.stderr)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
    return result.returncode


def cmd_check(args):
    failures = 0
    for path in args.reports:
        version = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            kernels, warnings = parse_report(f.read())
        if not kernels:
            print(f"FAIL {version}: no kernel found in {path}")
            failures += 1
            continue
        names = demangle(list(kernels))
        for mangled, r in sorted(kernels.items()):
            bad = [f"{key} {r.get(key)}" for key in ("stack", "spill_stores", "spill_loads")
                   if r.get(key) != 0]
            status = "FAIL" if bad else "ok  "
            failures += bool(bad)
            print(f"{status} {version}: {names[mangled]}: {r.get('registers')} registers, "
                  f"stack {r.get('stack')} B, spills {r.get('spill_stores')}/"
                  f"{r.get('spill_loads')} B" + (f"  <-- {', '.join(bad)}" if bad else ""))
        for w in warnings:
            kind = next((k for k, rx in KNOWN_WARNINGS.items() if rx.search(w)), "warning")
            print(f"FAIL {version}: ptxas {kind}: {w}")
            failures += 1
    print(f"resource check: {'FAILED' if failures else 'passed'} ({len(args.reports)} versions)")
    return 1 if failures else 0


def cmd_sass(args):
    tool = args.cuobjdump
    if not tool or tool.endswith("NOTFOUND") or not os.path.exists(tool):
        print("SKIPPED: cuobjdump is not installed here, so the SASS cannot be read")
        return SKIPPED
    failures = 0
    for cubin in args.cubins:
        version = os.path.splitext(os.path.basename(cubin))[0]
        sass = subprocess.run([tool, "--dump-sass", cubin], capture_output=True, text=True,
                              check=True).stdout
        counts = {op: len(re.findall(rf"\b{op}\b", sass)) for op in ("HMMA", "HGMMA")}
        wanted = "HMMA" if version.startswith("v0_") else "HGMMA"
        ok = counts[wanted] > 0
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {version}: {counts['HGMMA']} HGMMA, "
              f"{counts['HMMA']} HMMA (needs {wanted})")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("report")
    p.add_argument("--output", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("check")
    p.add_argument("reports", nargs="+")
    p = sub.add_parser("sass")
    p.add_argument("--cuobjdump", default="")
    p.add_argument("cubins", nargs="+")
    args = parser.parse_args()
    if args.mode == "report":
        if args.command and args.command[0] == "--":
            args.command = args.command[1:]
        return cmd_report(args)
    return {"check": cmd_check, "sass": cmd_sass}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
