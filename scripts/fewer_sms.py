#!/usr/bin/env python3
"""The table of scripts/fewer_sms.sh: each version's slowdown when it has fewer SMs.

    python3 scripts/fewer_sms.py RUN.json...          (the JSONs of hopper-matmul run)
    python3 scripts/fewer_sms.py --json OUT RUN.json...  (also the table as JSON)

Runs of the same problem are grouped; the one with neither a green context nor a busy
kernel is the whole GPU.  A green context of S SMs: slowdown t(S) / t(all), against the
ideal 132 / S (the GPU's SMs over S), and its ratio to the ideal (target: <= 1.05).  Another
kernel holding B SMs: slowdown t(busy) / t(all) against cuBLAS's own in the same run
(target: no more than cuBLAS's).
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hm_results import load as load_results  # noqa: E402


def load(paths):
    """problem -> case -> {implementation: TFLOPS}, and problem -> the GPU's SM count.  At
    equal flops a slowdown is the ratio of TFLOPS."""
    runs = defaultdict(lambda: defaultdict(dict))
    sms_all = {}
    for path in paths:
        rows, env = load_results(path)
        proto = env["protocol"]
        green, busy = proto.get("green_context_sms", 0), proto.get("busy_sms", 0)
        case = ("green", green) if green else ("busy", busy) if busy else ("all", 0)
        for r in rows:
            key = (r["m"], r["n"], r["k"], r["dtype"])
            sms_all[key] = env["sm_count"]
            runs[key][case][r["impl"]] = r["tflops"]
    return runs, sms_all


def table(runs, sms_all):
    rows = []
    for key in sorted(runs, key=lambda k: (k[3], -k[0])):
        cases = runs[key]
        base = cases.get(("all", 0))
        if not base:
            continue
        for case in sorted(c for c in cases if c[0] != "all"):
            kind, count = case
            t = cases[case]
            cublas = base["cublas"] / t["cublas"]
            ideal = sms_all[key] / count if kind == "green" else cublas
            for name, tflops in t.items():
                if name not in base:
                    continue
                slow = base[name] / tflops
                rows.append({"shape": "%dx%dx%d" % key[:3], "dtype": key[3], "case": kind,
                             "sms": count, "version": name, "slowdown": slow,
                             "reference": ideal, "over_reference": slow / ideal})
    return rows


def main(argv):
    out = None
    if argv[:1] == ["--json"]:
        out, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    rows = table(*load(argv))
    print("%-16s %-5s %-14s %-20s %9s %9s %9s" % ("shape", "dtype", "case", "version",
                                                   "slowdown", "reference", "ratio"))
    for r in rows:
        case = ("green %d SMs" if r["case"] == "green" else "busy %d SMs") % r["sms"]
        print("%-16s %-5s %-14s %-20s %9.3f %9.3f %9.3f%s" % (
            r["shape"], r["dtype"], case, r["version"], r["slowdown"], r["reference"],
            r["over_reference"], "" if r["over_reference"] <= (1.05 if r["case"] == "green"
                                                              else 1.0) else "  over"))
    if out:
        with open(out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
