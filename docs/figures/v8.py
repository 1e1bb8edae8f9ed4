"""Figures of the v8 chapter: wave quantization at 5120³ with whole tiles and with the
stream-K remainder, the decode roofline of the H200, a stream-K schedule on a line of K
slices, and the transposed small-M tile.

make_schedule(), unit_begin() and work_unit() below are v8_stream_k/matmul.cu's (section 2),
rewritten in Python line by line, with the tuning macros' defaults read from that file, so
that a retuned default redraws with the code.  check() replays every expectation of the host
test StreamK.ScheduleRuleV8 (tests/host_tests.cpp), read from that file, and the cases of
StreamK.SmallMTilingRuleV8 and StreamK.TheOwnerOfASplitTileOf256ColumnsTakesMoreSlicesV8,
so that the replica cannot drift from the kernel's rules unnoticed.
"""
import math
import os
import re

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, NullFormatter

from common import COLORS, HERE, arrow, box, figure, save

SOURCE = os.path.join(HERE, "..", "..", "v8_stream_k", "matmul.cu")
HOST_TESTS = os.path.join(HERE, "..", "..", "tests", "host_tests.cpp")
SMS = 132  # H200
# The H200's datasheet: dense bf16 tensor-core peak and HBM3e bandwidth (not a measurement).
PEAK_TFLOPS, HBM_TBPS = 990, 4.8
LABEL = dict(facecolor="white", edgecolor="none", alpha=0.9, pad=1.5)  # behind a label


def defaults():
    """The tile sizes and the tuning macros' defaults, as v8_stream_k/matmul.cu has them."""
    with open(SOURCE) as f:
        text = f.read()
    found = {name: int(value) for name, value in
             re.findall(r"#ifndef (HM_\w+)\n#define \1 (\d+)\n", text)}
    for name in ("BM", "BN", "BK"):
        found[name] = int(re.search(rf"constexpr int {name} = (\d+);", text).group(1))
    found["kSmallM64RowsK"] = int(
        re.search(r"constexpr int64_t kSmallM64RowsK = (\d+);", text).group(1))
    with open(os.path.join(os.path.dirname(SOURCE), "matmul.h")) as f:
        found["kMaxUnits"] = int(re.search(r"constexpr int kMaxUnits = (\d+);", f.read()).group(1))
    return found


D = defaults()
BM, BN, BK = D["BM"], D["BN"], D["BK"]
MIN_SLICES = D["HM_STREAM_K_MIN_SLICES"]   # kMinUnitSlices
FIXUP = D["HM_STREAM_K_FIXUP"]             # kFixupCost, tenths of a slice
MIN_GAIN = D["HM_STREAM_K_MIN_GAIN"]       # kMinGainPercent
SLICE_COST = D["HM_STREAM_K_SLICE_COST"]   # kStreamKSliceCost, tenths of a slice
CROSS = D["HM_STREAM_K_CROSS"]             # kStreamKCross
RING_BYTES = D["HM_SMALL_M_RING_KIB"] * 1024  # kSmallMRingBytes
SMALL_M_64_ROWS = D["HM_SMALL_M_64_ROWS"]  # kSmallM64Rows
SMALL_M_NARROW = D["HM_SMALL_M_NARROW"]    # kSmallMNarrow
SMALL_M_64_ROWS_K = D["kSmallM64RowsK"]
MAX_UNITS = D["kMaxUnits"]
OWNER_EXTRA = D["HM_STREAM_K_OWNER_EXTRA"]  # kOwnerExtra


class Schedule:
    def __init__(self, tiles, k_tiles, workers, sk_tiles, units, min_slices):
        self.tiles, self.k_tiles, self.workers = tiles, k_tiles, workers
        self.sk_tiles, self.units, self.min_slices = sk_tiles, units, min_slices
        self.owner_extra = 0


def min_unit_slices(transposed, bn):
    return 1 if transposed and bn < BN else MIN_SLICES


def candidates(tiles, k_tiles, max_workers, transposed=False, bn=BN, bm=BM):
    """v8_stream_k::make_schedule's loop, line by line: the whole-tile schedule and its cost,
    and each stream-K candidate with its cost (tenths of a whole-tile K slice), or None where
    make_schedule() returns whole tiles before the loop."""
    min_slices = min_unit_slices(transposed, bn)
    slice_cost = 10 if transposed else SLICE_COST
    fixup_cost = FIXUP * bn // BN * bm // BM
    whole = Schedule(tiles, k_tiles, min(tiles, max_workers), 0, 0, min_slices)
    full, tail = tiles // max_workers, tiles % max_workers
    if tail == 0 or k_tiles < 2 * min_slices:
        return whole, None, []
    whole_cost = (full + 1) * k_tiles * 10
    out = []
    cross = CROSS and transposed and bn < BN and full == 1 and 3 * tail >= max_workers
    for dp_waves in range(full if cross else max(full - 1, 0), full + 1):
        sk_tiles = tiles - dp_waves * max_workers
        sk_slices = sk_tiles * k_tiles
        most = sk_slices // min_slices  # units of min_slices or more
        units = min(most, max_workers, MAX_UNITS)
        if units > sk_tiles and not cross:
            units -= units % sk_tiles  # the same units per tile
        if units < 2:
            continue
        per_unit = -(-sk_slices // units)
        waits = -(-units // sk_tiles)  # partials an owner adds
        cost = dp_waves * k_tiles * 10 + per_unit * slice_cost + waits * fixup_cost
        out.append((Schedule(tiles, k_tiles, max_workers if full > 0 else units, sk_tiles,
                             units, min_slices), cost))
    return whole, whole_cost, out


def split_k_pieces(s):
    """v8_stream_k::split_k_pieces: a stream-K tile's pieces under split-K, else 0."""
    split = s.sk_tiles > 0 and s.units > s.sk_tiles and s.units % s.sk_tiles == 0
    return s.units // s.sk_tiles if split else 0


def make_schedule(tiles, k_tiles, max_workers, transposed=False, bn=BN, bm=BM):
    """v8_stream_k::make_schedule: the cheapest candidate, if it beats whole tiles by
    kMinGainPercent."""
    whole, whole_cost, out = candidates(tiles, k_tiles, max_workers, transposed, bn, bm)
    if whole_cost is None:
        return whole
    best, best_cost = whole, whole_cost * (100 - MIN_GAIN) // 100
    for s, cost in out:
        if cost < best_cost:
            best, best_cost = s, cost
    pieces = split_k_pieces(best)
    if pieces > 0 and bn == BN:  # each piece still min_slices or more
        best.owner_extra = max(0, min(OWNER_EXTRA, k_tiles - pieces * best.min_slices))
    return best


def unit_begin(s, unit):
    if s.owner_extra > 0:  # split-K: the tile's first piece owner_extra slices longer
        pieces = split_k_pieces(s)
        r = unit % pieces
        rest = (s.k_tiles - s.owner_extra) * r // pieces
        return unit // pieces * s.k_tiles + (0 if r == 0 else s.owner_extra + rest)
    slices = s.sk_tiles * s.k_tiles
    begin = slices * unit // s.units
    into = begin % s.k_tiles
    if into != 0 and into < s.min_slices:
        return begin - into
    if into != 0 and s.k_tiles - into < s.min_slices:
        return begin + (s.k_tiles - into)
    return begin


def work(s, worker):
    """Every (tile, k_begin, k_end) of work_unit(s, worker, u) for u = 0, 1, … in order."""
    out = []
    if worker < s.units:
        begin, end = unit_begin(s, worker), unit_begin(s, worker + 1)
        if begin < end:
            for tile in range(begin // s.k_tiles, (end - 1) // s.k_tiles + 1):
                base = tile * s.k_tiles
                out.append((tile, max(begin, base) - base, min(end, base + s.k_tiles) - base))
    tile = s.sk_tiles + worker
    while tile < s.tiles:
        out.append((tile, 0, s.k_tiles))
        tile += s.workers
    return out


def contributors(s, tile, owner):
    """The units whose partial sums the owner of `tile` adds, in the kernel's order (step 12):
    the next non-empty units that begin before the tile's end."""
    tile_end = (tile + 1) * s.k_tiles
    out, other = [], owner + 1
    while other <= s.units and unit_begin(s, other) < tile_end:
        if unit_begin(s, other + 1) != unit_begin(s, other):
            out.append(other)
        other += 1
    return out


def choose_tiling(m, n, k=5120, sms=SMS):
    """v8_stream_k::choose_tiling: (transposed, bn, bm)."""
    tiles = -(-m // BM) * -(-n // BN)  # v7's, of C
    transposed, bn = False, BN
    if m <= 64:
        transposed = True
        bn = 16 if SMALL_M_NARROW and m <= 16 else 32 if SMALL_M_NARROW and m <= 32 else 64
    elif 128 < m <= BN:
        transposed, bn = True, BN
    elif m <= 128 and tiles * 4 < sms * 3:
        transposed, bn = True, 128
    rows64 = (transposed and SMALL_M_64_ROWS and -(-n // 64) <= sms and
              k * max(bn, 128) <= SMALL_M_64_ROWS_K * 128)
    return transposed, bn, 64 if rows64 else BM


def stages_for(bn, transposed, stages=4, bm=BM):
    return RING_BYTES // (bm * BK * 2 + bn * BK * 2) if transposed else stages


def test_body(name):
    with open(HOST_TESTS) as f:
        text = f.read()
    start = text.index(f"TEST(StreamK, {name})")
    return text[start:text.index("\n}\n", start)]


def check():
    """Replays StreamK.ScheduleRuleV8 (sk(tiles, k_tiles, tiling) on 132 workers, each
    EXPECT_EQ on a field of the schedule, read from tests/host_tests.cpp) and the cases of
    StreamK.SmallMTilingRuleV8 on the replica, and checks the ring sizes of
    kSmallMRingBytes' comment."""
    body = test_body("ScheduleRuleV8")
    tilings = {name: (t == "true", int(bn), int(bm or BM)) for name, t, bn, bm in
               re.findall(r"(\w+)\{(true|false), (\d+)(?:, (\d+))?\}", body)}
    sk = lambda tiles, k, t: make_schedule(int(tiles), int(k), SMS, *tilings[t])  # noqa: E731
    named = {name: sk(*args) for name, *args in
             re.findall(r"Schedule (\w+) = sk\((\d+), (\d+), (\w+)\)", body)}
    checked = 0
    for call, name, field, value in re.findall(
            r"EXPECT_EQ\((?:sk\((\d+, \d+, \w+)\)|(\w+))\.(\w+), (\d+)\)", body):
        s = sk(*call.split(", ")) if call else named[name]
        assert getattr(s, field) == int(value), f"ScheduleRuleV8: {call or name}.{field}"
        checked += 1
    assert checked >= 13, "ScheduleRuleV8 not found as expected"
    # StreamK.TheOwnerOfASplitTileOf256ColumnsTakesMoreSlicesV8's two schedules.
    wide = make_schedule(40, 80, SMS, True, BN)
    assert (wide.units, wide.owner_extra) == (120, OWNER_EXTRA), "256x5120x5120: 3 pieces"
    pieces = [0, OWNER_EXTRA + (80 - OWNER_EXTRA) // 3, OWNER_EXTRA + (80 - OWNER_EXTRA) * 2 // 3]
    assert [unit_begin(wide, u) for u in range(4)] == pieces + [80], "the owner's longer piece"
    narrow = make_schedule(40, 216, SMS, True, 64)
    assert (narrow.units, narrow.owner_extra, unit_begin(narrow, 1)) == (120, 0, 72)
    # StreamK.SmallMTilingRuleV8's cases, as the test has them.
    for m in (1, 8, 9, 16, 17, 32, 33, 64):
        for n in (256, 5120, 27648):
            assert choose_tiling(m, n)[:2] == (True, 16 if m <= 16 else 32 if m <= 32 else 64)
    assert choose_tiling(100, 5120)[0] and choose_tiling(128, 15360)[:2] == (True, 128)
    assert not choose_tiling(128, 27648)[0] and not choose_tiling(100, 27648)[0]
    for m in (129, 200, 256):
        for n in (64, 13824, 15360, 27648):
            assert choose_tiling(m, n)[:2] == (True, BN), (m, n)
    assert choose_tiling(257, 64)[:2] == (False, BN) and choose_tiling(8192, 64)[:2] == (False, BN)
    for m in (1, 64, 100, 128):
        assert [choose_tiling(m, n, k)[2] for n, k in ((5120, 5120), (5120, 8192), (5120, 13824),
                (8448, 5120), (8449, 5120), (15360, 5120))] == [64, 64, 128, 64, 128, 128], m
    assert choose_tiling(256, 5120, 4096)[2] == 64 and choose_tiling(256, 5120)[2] == BM
    assert choose_tiling(64, 5120, 5120, 64)[2] == BM and choose_tiling(8192, 5120)[2] == BM
    assert [stages_for(bn, True) for bn in (16, 32, 64, 128, 256)] == [10, 9, 8, 6, 4]
    assert [stages_for(bn, True, bm=64) for bn in (16, 32, 64, 128, 256)] == [19, 16, 12, 8, 4]
    # What the chapter says of the benchmark's waves family (bench/bench.cpp) and 8192³:
    # whole tiles, on the kernel built without stream-K.
    for m, n, k in ((1024, 34048, 4096), (2304, 8448, 8192), (1536, 1536, 1536),
                    (3072, 3072, 3072), (5120, 5120, 5120), (8192, 8192, 8192)):
        assert not choose_tiling(m, n)[0] and n % 8 == 0  # 128 × 256 tiles, one CTA each
        assert make_schedule(-(-m // BM) * -(-n // BN), -(-k // BK), SMS).units == 0, (m, n, k)


def timeline(s, transposed=False, bn=BN, bm=BM):
    """Each worker's pieces on the model's clock (tenths of a whole-tile K slice, as
    make_schedule() counts): (start, length, kind), kind 'whole', 'sk' or 'fixup'."""
    slice_cost = 10 if transposed else SLICE_COST
    fixup_cost = FIXUP * bn // BN * bm // BM
    rows = []
    for worker in range(s.workers):
        t, row = 0, []
        for i, (tile, k0, k1) in enumerate(work(s, worker)):
            shared = k1 - k0 < s.k_tiles
            length = (k1 - k0) * (slice_cost if shared else 10)
            row.append((t, length, "sk" if shared else ("whole", i)))
            t += length
            if shared and k0 == 0:
                partials = len(contributors(s, tile, worker))
                row.append((t, partials * fixup_cost, "fixup"))
                t += partials * fixup_cost
        rows.append(row)
    return rows


def waves():
    """5120³: 800 tiles of 128 × 256, 80 K slices each, on 132 SMs, with whole tiles (v7's
    schedule, and what make_schedule() keeps) and with the candidate that shares the partial
    wave's tiles, on the model's clock."""
    tiles, k_tiles = (5120 // BM) * (5120 // BN), 5120 // BK
    whole, whole_cost, out = candidates(tiles, k_tiles, SMS)
    chosen = make_schedule(tiles, k_tiles, SMS)
    remainder, cost = next((s, c) for s, c in out if s.sk_tiles == tiles % SMS)
    fig, axes = plt.subplots(2, 1, figsize=(9.0, 5.2), sharex=True,
                             gridspec_kw=dict(hspace=0.35))
    shade = ["#c8c8c8", "#e6e6e6"]
    panels = ((axes[0], whole, whole_cost, f"whole tiles (v7's schedule): {tiles} tiles = "
               f"{tiles / SMS:.2f} waves"),
              (axes[1], remainder, cost, f"the partial wave's {remainder.sk_tiles} tiles, "
               f"{remainder.sk_tiles * k_tiles} K slices, shared by {remainder.units} "
               "stream-K units, then whole tiles"))
    for ax, s, c, title in panels:
        rows = timeline(s)
        first = 0
        for worker in range(1, len(rows) + 1):  # consecutive equal rows as one rectangle
            if worker < len(rows) and rows[worker] == rows[first]:
                continue
            for start, length, kind in rows[first]:
                color = (COLORS["c"] if kind == "sk" else COLORS["mma"] if kind == "fixup"
                         else shade[kind[1] % 2])
                ax.add_patch(Rectangle((start / 10, SMS - worker), length / 10, worker - first,
                                       facecolor=color, edgecolor="none"))
            first = worker
        ax.axvline(c / 10, color="black", lw=1, ls="--")
        mark = "  (kept)" if s.units == chosen.units else ""
        ax.text(c / 10 + 4, SMS * 0.15, f"model:\n{c / 10:.0f}{mark}", va="center",
                fontsize=9)
        ax.set_xlim(0, 640)
        ax.set_ylim(0, SMS)
        ax.set_yticks([SMS - 0.5, SMS - 40.5, SMS - 80.5, 0.5])
        ax.set_yticklabels(["SM 0", "SM 40", "SM 80", f"SM {SMS - 1}"], fontsize=9)
        ax.tick_params(labelsize=9)
        ax.set_title(title, fontsize=10)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    idle = SMS - tiles % SMS
    axes[0].annotate(f"wave 7: {tiles % SMS} tiles (SMs 0–{tiles % SMS - 1}),\n{idle} SMs idle",
                     xy=(520, SMS * 0.55), xytext=(566, SMS * 0.62), fontsize=9, ha="left",
                     va="center", bbox=LABEL, arrowprops=dict(arrowstyle="->", lw=0.8))
    per = remainder.sk_tiles * k_tiles // remainder.units
    owners = sorted({u for u in range(remainder.units)
                     for tile, k0, k1 in work(remainder, u) if k0 == 0 and k1 < k_tiles})
    axes[1].annotate(f"SMs 0–{remainder.units - 1}: {remainder.units} units of {per} slices, "
                     f"each slice charged {SLICE_COST / 10:g}×", xy=(12, SMS - 60),
                     xytext=(90, SMS * 0.2), fontsize=9, ha="left", va="center",
                     bbox=LABEL, arrowprops=dict(arrowstyle="->", lw=0.8))
    axes[1].annotate(f"owners, SMs {', '.join(map(str, owners[:3]))}, …, {owners[-1]}: add "
                     f"{len(contributors(remainder, 0, owners[0]))} partials each (pink)",
                     xy=(30, SMS - 1 - owners[1]), xytext=(90, SMS * 0.42), fontsize=9,
                     ha="left", va="center", bbox=LABEL,
                     arrowprops=dict(arrowstyle="->", lw=0.8))
    axes[1].set_xlabel("time on make_schedule()'s clock, in K slices of a whole tile", fontsize=9)
    verdict = ("less than" if cost >= whole_cost * (100 - MIN_GAIN) // 100 else "more than")
    fig.text(0.5, 0.0, "Grey: whole tiles, each worker's in turn; orange: stream-K pieces; "
             f"pink: an owner adding partial sums ({FIXUP / 10:g} slices each).\nThe model "
             f"saves {100 * (1 - cost / whole_cost):.1f}%, {verdict} the {MIN_GAIN}% stream-K "
             f"must win by: v8 {'keeps whole tiles' if chosen.units == 0 else 'shares'} here.",
             ha="center", va="top", fontsize=9)
    save(fig, "v8_waves")


def intensity(m, n, k):
    """flop per byte: 2·M·N·K over the fewest bytes, 2·(MK + NK + MN) (16-bit elements)."""
    return 2 * m * n * k / (2 * (m * k + n * k + m * n))


def roofline():
    """The H200's roofline with the decode shapes of the benchmark (M = 1…256 tokens against
    four weight matrices), and the SMs that v7's and v8's tiles give work at M = 64."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9.6, 4.2),
                                 gridspec_kw=dict(width_ratios=[1.35, 1], wspace=0.38))
    ridge = PEAK_TFLOPS / HBM_TBPS
    xs = [0.5 * 1.1 ** i for i in range(100)]
    ax.plot(xs, [min(PEAK_TFLOPS, HBM_TBPS * x) for x in xs], color="black", lw=1.2)
    ax.axvline(ridge, color=COLORS["grey"], ls=":", lw=1)
    ax.text(ridge * 1.1, 12, f"ridge: {ridge:.0f}\nflop/byte", fontsize=9, color="#555555")
    weights = [(5120, 5120), (15360, 5120), (27648, 5120), (5120, 13824)]
    tokens = [1, 16, 32, 64, 128, 256]
    for m in tokens:
        x = [intensity(m, n, k) for n, k in weights]
        ax.scatter(x, [min(PEAK_TFLOPS, HBM_TBPS * v) for v in x], s=18, zorder=3,
                   color=COLORS["c"] if m <= 128 else COLORS["b"])
        ax.text(min(x) * (1.3 if m == 1 else 0.9), min(PEAK_TFLOPS, HBM_TBPS * min(x)) *
                (0.8 if m == 1 else 1.25), f"M = {m}", fontsize=9,
                ha="left" if m == 1 else "right" if m < 128 else "center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers: mathtext's exponents come out small
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlim(0.5, 2000)
    ax.set_ylim(2, 2000)
    ax.set_xlabel("intensity, flop per byte of A, B and C", fontsize=9)
    ax.set_ylabel("attainable TFLOP/s", fontsize=9)
    ax.set_title(f"H200 roofline: {HBM_TBPS} TB/s, {PEAK_TFLOPS} TFLOP/s (datasheet)",
                 fontsize=10)
    ax.tick_params(labelsize=9)
    # The SMs with work at M = 64: v7's 128 × 256 tiles of C, and v8's schedule of its
    # transposed tiles (make_schedule()'s workers).
    m = 64
    v7, v8, names, kinds = [], [], [], []
    for n, k in weights:
        transposed, bn, bm = choose_tiling(m, n, k)
        assert transposed and bn == 64
        v7.append(min(SMS, math.ceil(m / BM) * math.ceil(n / BN)))
        s = make_schedule(math.ceil(n / bm) * math.ceil(m / bn), math.ceil(k / BK), SMS,
                          transposed=transposed, bn=bn, bm=bm)
        v8.append(s.workers)
        kinds.append(f"{bm}×{bn}, " + ("whole" if s.units == 0 else
                     f"split-K {s.units // s.sk_tiles}" if s.units % s.sk_tiles == 0
                     else "stream-K"))
        names.append(f"{n}\n×{k}")
    at = range(len(weights))
    bx.bar([i - 0.2 for i in at], v7, width=0.4, color=COLORS["grey"], label="v7: 128×256 of C")
    bx.bar([i + 0.2 for i in at], v8, width=0.4, color=COLORS["c"],
           label="v8: tiles of Cᵀ, make_schedule()")
    for i in at:
        bx.text(i - 0.2, v7[i] + 2, str(v7[i]), ha="center", fontsize=9)
        bx.text(i + 0.2, v8[i] + 2, str(v8[i]), ha="center", fontsize=9)
        bx.text(i + 0.2, 6, kinds[i], rotation=90, ha="center", va="bottom", fontsize=9,
                color="white")
    bx.axhline(SMS, color="black", lw=0.8, ls=":")
    bx.set_xticks(list(at))
    bx.set_xticklabels(names, fontsize=9)
    bx.set_ylim(0, 175)
    bx.set_xlabel(f"weights N × K, M = {m}", fontsize=9)
    bx.set_ylabel(f"SMs with work (of {SMS})", fontsize=9)
    bx.set_title("SMs the tiles keep busy", fontsize=10)
    bx.legend(fontsize=9, loc="upper left", frameon=False)
    bx.tick_params(labelsize=9)
    for a in (ax, bx):
        for side in ("top", "right"):
            a.spines[side].set_visible(False)
    save(fig, "v8_roofline")


UNIT_COLORS = [COLORS["a"], COLORS["b"], COLORS["c"], COLORS["mma"], COLORS["tma"],
               COLORS["smem"], "#1f78b4"]


def line(name, tiles, k_tiles, workers, title):
    """A toy schedule of the small-M rule (units split anywhere) on the line of its stream-K
    tiles' K slices, as make_schedule(), unit_begin() and work_unit() make it: the slices
    coloured by unit, each unit's pieces, the flags from contributors to owners numbered in
    the order the owner adds them, and each unit's actions in order."""
    s = make_schedule(tiles, k_tiles, workers, transposed=True, bn=64)
    assert s.units > 0 and s.sk_tiles == tiles, "the toy is all stream-K"
    slices = s.sk_tiles * s.k_tiles
    cw, rh = 8.4 / slices, 0.5
    fig, ax = figure(10.0, 1.6 + rh * s.workers + 0.22 * s.units)
    y_line = 0.0
    bounds = [unit_begin(s, u) for u in range(s.units + 1)]
    for i in range(slices):
        unit = max(u for u in range(s.units) if bounds[u] <= i)
        box(ax, i * cw, y_line, cw, 0.36, str(i % s.k_tiles), color=UNIT_COLORS[unit],
            alpha=0.45, fontsize=9, edge="white", lw=0.8)
    for t in range(s.sk_tiles):
        ax.add_patch(Rectangle((t * s.k_tiles * cw, y_line), s.k_tiles * cw, 0.36, fill=False,
                               lw=2))
        ax.text((t + 0.5) * s.k_tiles * cw, y_line + 0.45, f"tile {t}", ha="center",
                fontsize=10)
    for u, begin in enumerate(bounds):
        ax.plot([begin * cw] * 2, [y_line - 0.1, y_line], color="black", lw=1)
        ax.text(begin * cw, y_line - 0.12, str(begin), ha="center", va="top", fontsize=9)
    ax.text(-0.1, y_line + 0.18, "K slices", ha="right", va="center", fontsize=10)
    ax.text(-0.1, y_line - 0.25, "unit_begin(u)", ha="right", va="center", fontsize=10)
    ax.text(-1.45, y_line + 0.85, title, ha="left", fontsize=10.5, weight="bold")
    where = {}
    for u in range(s.workers):
        y = y_line - 0.95 - rh * u
        ax.text(-0.1, y + 0.18, f"unit {u}" if u < s.units else f"worker {u}: idle",
                ha="right", va="center", fontsize=10,
                color=UNIT_COLORS[u % len(UNIT_COLORS)] if u < s.units else "black")
        for tile, k0, k1 in work(s, u):
            owner = k0 == 0
            label = ("owner" if owner else "partial") if (k1 - k0) * cw > 0.62 else ""
            box(ax, (tile * s.k_tiles + k0) * cw, y, (k1 - k0) * cw, 0.36, label,
                color=UNIT_COLORS[u], fontsize=9,
                alpha=0.85 if owner else 0.35, lw=1.6 if owner else 0.6)
            where[(u, tile)] = ((tile * s.k_tiles + k0) * cw, (k1 - k0) * cw, y)
    for u in range(s.units):
        for tile, k0, k1 in work(s, u):
            if k0 != 0:
                continue
            ox, ow, oy = where[(u, tile)]
            for order, other in enumerate(contributors(s, tile, u), 1):
                cx, cwid, cy = where[(other, tile)]
                ax.annotate("", xy=(ox + ow * 0.75, oy), xytext=(cx + cwid * 0.25, cy + 0.36),
                            arrowprops=dict(arrowstyle="-|>", color="black", lw=0.9,
                                            connectionstyle="arc3,rad=-0.2"))
                ax.text(cx + cwid * 0.5, cy + 0.42, f"flag; added {order}.", fontsize=9,
                        ha="left", va="bottom")
    steps = []
    for u in range(s.units):
        acts = []
        for tile, k0, k1 in work(s, u):
            if k0 > 0:
                acts.append(f"tile {tile} slices {k0}–{k1 - 1}, write the partial, raise the "
                            "flag")
                continue
            others = contributors(s, tile, u)
            wait = (f", wait for unit {others[0]}'s flag, add its partial" if len(others) == 1
                    else f", wait for units {' and '.join(map(str, others))}, add theirs in "
                    "that order" if others else "")
            acts.append(f"tile {tile} slices {k0}–{k1 - 1}{wait}, store C")
        steps.append(f"unit {u}: " + "; then ".join(acts))
    bottom = y_line - 0.95 - rh * (s.workers - 1) - 0.15
    steps.append("Bold: the piece that owns its tile (its K slice 0); pale: a partial handed "
                 "over.")
    ax.text(-1.45, bottom, "\n".join(steps), ha="left", va="top", fontsize=9.5,
            linespacing=1.4)
    ax.set_xlim(-1.5, slices * cw + 0.1)
    ax.set_ylim(bottom - 0.24 * (s.units + 1) - 0.1, y_line + 1.05)
    save(fig, name)


def transposed():
    """M = 64, N = 5120: one K slice of a v7 tile of C and of a v8 tile of Cᵀ = B·Aᵀ, each
    with its two operand boxes (the kernel's A on the left, its B above), and where the v8
    tile's values land in C (through stmatrix's transposing stores and TMA)."""
    m, n = 64, 5120
    transposed_, bn, bm = choose_tiling(m, n)
    assert transposed_
    u = 1.5 / BM  # drawing units per row or column
    kw = BK * u * 0.8  # a K slice's width, drawn a little narrower
    fig, ax = figure(10.0, 4.6)

    def tile(x, y, rows, cols, real_rows, real_cols, a_label, b_label, a_color, b_color, title):
        """A tile of rows × cols with its A box (rows × BK) left and its B box (cols × BK)
        above; the part past the problem's edge white."""
        ax.text(x - kw - 0.1, y + rows * u + kw + 0.75, title, fontsize=11, weight="bold")
        box(ax, x - kw - 0.1, y, kw, rows * u, color="white", lw=1)
        box(ax, x - kw - 0.1, y + (rows - real_rows) * u, kw, real_rows * u, color=a_color,
            alpha=0.5, lw=1)
        ax.text(x - kw - 0.2, y + rows * u / 2, a_label, ha="right", va="center", fontsize=10)
        box(ax, x, y + rows * u + 0.1, cols * u, kw, color="white", lw=1)
        box(ax, x, y + rows * u + 0.1, real_cols * u, kw, color=b_color, alpha=0.5, lw=1)
        ax.text(x + cols * u / 2, y + rows * u + kw + 0.18, b_label, ha="center",
                va="bottom", fontsize=10)
        box(ax, x, y, cols * u, rows * u, color="white", lw=1.2)
        box(ax, x, y + (rows - real_rows) * u, real_cols * u, real_rows * u,
            color=COLORS["c"], alpha=0.45, lw=0.8)

    # v7: a tile of C, 128 rows of which M fills 64, and 256 columns.
    x7, y = 2.2, 0.9
    tile(x7, y, BM, BN, m, BN, f"A: a {BM}-row box,\n{m} rows of tokens\n+ {BM - m} "
         "zero-filled", f"B: {BN} weight rows", COLORS["a"], COLORS["b"],
         f"v7: C = A·Bᵀ, {BM} × {BN} tiles")
    ax.text(x7 + BN * u / 2, y + (BM - m) * u / 2, f"{BM - m} rows past M:\nMMAs on zeros",
            ha="center", va="center", fontsize=10, color="#555555")
    ax.text(x7 + BN * u / 2, y + (BM - m / 2) * u, f"{m} × {BN} of C", ha="center",
            va="center", fontsize=10)
    ax.text(x7 - kw - 0.1, y - 0.2, f"N = {n}: {-(-n // BN)} tiles for {SMS} SMs", va="top",
            fontsize=10)
    # v8: a tile of Cᵀ, bm weight rows by bn token columns, all of them real.
    x8 = 8.0
    tile(x8, y, bm, bn, bm, m, f"B: {bm} weight\nrows, the\nkernel's A",
         f"A: {m} token rows,\nthe kernel's B", COLORS["b"], COLORS["a"],
         f"v8: Cᵀ = B·Aᵀ, {bm} × {bn} tiles")
    ax.text(x8 - kw - 0.1, y - 0.2, f"{bm} × {bn} of Cᵀ; N = {n}: {-(-n // bm)} tiles",
            va="top", fontsize=10)
    # The epilogue: column c of the tile of Cᵀ is row c of C.
    xc = x8 + bn * u + 0.9
    c = 36  # the column drawn
    ax.add_patch(Rectangle((x8 + c * u, y), 2 * u, bm * u, facecolor="black",
                           edgecolor="black", lw=1))
    box(ax, xc, y + 0.5, bm * u, 8 * u, color=COLORS["c"], alpha=0.45, lw=1.6)
    ax.annotate("", xy=(xc, y + 0.5 + 4 * u), xytext=(x8 + (c + 2) * u, y + bm * u * 0.4),
                arrowprops=dict(arrowstyle="-|>", color="black", lw=1,
                                connectionstyle="arc3,rad=0.3"))
    ax.text(xc, y + 0.5 + 8 * u + 0.12, f"a column of the tile: {bm} values\nof a row of C "
            "(one token)", fontsize=10, va="bottom")
    ax.text(xc, y + 0.35, "Cᵀ[r, c] → C[c, r]: stmatrix\n.trans, then a TMA store", fontsize=10,
            va="top")
    ax.set_xlim(-0.2, 11.2)
    ax.set_ylim(0.2, y + BM * u + kw + 1.15)
    save(fig, "v8_transposed")


if __name__ == "__main__":
    check()
    waves()
    roofline()
    line("v8_line", 5, 8, 4, "5 tiles of 8 K slices on 4 workers: units cross tiles")
    line("v8_split", 2, 12, 7, "2 tiles of 12 K slices, at most 7 workers: 6 units, 3 per tile "
         "(the 7th is not launched)")
    transposed()
