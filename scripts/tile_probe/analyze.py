#!/usr/bin/env python3
"""Summarises the tile records written by probe.cu:  analyze.py OUTDIR M N K"""
import os
import statistics
import struct
import sys

out, m, n, k = sys.argv[1], *map(int, sys.argv[2:5])
tiles = -(-m // 128) * -(-n // 256)
slices = -(-k // 64)
med = statistics.median
print(f"{m}x{n}x{k} bf16: {tiles} tiles of 128x256, {slices} K slices each; medians over tiles")
print(f"{'records':24s} {'span us':>8s} {'K loop cyc/slice':>16s} {'first slice cyc':>15s} "
      f"{'epilogue cyc':>12s} {'MHz':>5s} {'gap us':>7s}")
for name in sorted(f for f in os.listdir(out) if f.endswith(".bin")):
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
