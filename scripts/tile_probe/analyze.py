#!/usr/bin/env python3
"""Summarises the records written by probe.cu:  analyze.py OUTDIR M N K
(v3 and v4: per tile of 128 x 256; v8: per CTA, the phases of its first stream-K unit, in us
from CTA entry or as durations)."""
import os
import statistics
import struct
import sys

out, m, n, k = sys.argv[1], *map(int, sys.argv[2:5])
tiles = -(-m // 128) * -(-n // 256)
slices = -(-k // 64)
med = statistics.median


def stream_k(name, values):
    """probe_v8's per-CTA records (make.py): the phases of each CTA's first unit, by role."""
    recs = [values[16 * i:16 * i + 16] for i in range(len(values) // 16)]
    recs = [r for r in recs if r[10] and r[2]]
    if not recs:
        print(f"{name}: no records")
        return
    t0 = min(r[10] for r in recs)
    end = max(max(r[8], r[14]) for r in recs)
    print(f"{name}: {len(recs)} CTAs, span {(end - t0) / 1e3:.1f} us from the first CTA's entry")
    roles = {1: "hands a partial over", 2: "owns a shared tile", 3: "a whole tile"}
    print(f"  {'role':22s} {'CTAs':>4s} {'slices':>6s} {'entry us':>8s} {'1st slice':>9s} "
          f"{'loop/slice':>10s} {'hand/flags':>10s} {'fix-up':>7s} {'stores':>7s} {'end us':>7s}")
    for role, label in roles.items():
        rs = [r for r in recs if r[1] & 0xFF == role]
        if not rs:
            continue
        us = lambda f: med(f(r) for r in rs) / 1e3  # noqa: E731
        slices = med(r[1] >> 8 for r in rs)
        loop = med((r[6] - r[4]) / max(1, (r[1] >> 8) - 1) for r in rs) / 1e3
        hand = us(lambda r: r[8] - r[6]) if all(r[8] for r in rs) else float("nan")
        fix = us(lambda r: r[12] - r[8]) if role == 2 else float("nan")
        stores = us(lambda r: r[14] - r[12]) if role != 1 else float("nan")
        last = us(lambda r: (r[8] if role == 1 else r[14]) - t0)
        print(f"  {label:22s} {len(rs):4d} {slices:6.0f} {us(lambda r: r[10] - t0):8.2f} "
              f"{us(lambda r: r[4] - r[10]):9.2f} {loop:10.3f} {hand:10.2f} {fix:7.2f} "
              f"{stores:7.2f} {last:7.2f}")


for name in sorted(f for f in os.listdir(out) if f.endswith(".bin") and f.startswith("v8_")):
    raw = open(os.path.join(out, name), "rb").read()
    stream_k(name[:-4], struct.unpack(f"{len(raw) // 8}Q", raw))
per_tile = sorted(f for f in os.listdir(out) if f.endswith(".bin") and not f.startswith("v8_"))
if per_tile:
    print(f"{m}x{n}x{k} bf16: {tiles} tiles of 128x256, {slices} K slices each; medians over "
          "tiles")
    print(f"{'records':24s} {'span us':>8s} {'K loop cyc/slice':>16s} {'first slice cyc':>15s} "
          f"{'epilogue cyc':>12s} {'MHz':>5s} {'gap us':>7s}")
for name in per_tile:
    raw = open(os.path.join(out, name), "rb").read()
    values = struct.unpack(f"{len(raw) // 8}Q", raw)
    recs = [values[16 * i:16 * i + 16] for i in range(tiles)]
    starts = [r[10] for r in recs if r[10]]  # CTA entries (v4: only each CTA's first tile)
    span = (max(r[8] for r in recs) - min(starts)) / 1e3
    loop = [(r[7] - r[3]) / slices for r in recs]
    first = [r[5] - r[3] for r in recs]
    epilogue = [r[9] - r[7] for r in recs]
    mhz = [(r[9] - r[3]) / (r[8] - r[2]) * 1e3 for r in recs]
    by_sm = {}
    for r in recs:
        by_sm.setdefault(r[0], []).append(r)
    gaps = []
    for rs in by_sm.values():
        rs.sort(key=lambda r: r[2])
        gaps += [(y[2] - x[8]) / 1e3 for x, y in zip(rs, rs[1:])]
    gap = f"{med(gaps):7.2f}" if gaps else "      -"
    print(f"{name[:-4]:24s} {span:8.1f} {med(loop):16.1f} {med(first):15.0f} {med(epilogue):12.0f} "
          f"{med(mhz):5.0f} {gap}")
