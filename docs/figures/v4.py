"""Figures of the v4 chapter: the grouped tile order, what the tiles in flight together read,
and the ring counter that carries across tiles.

The tile orders and the stage/parity arithmetic below are the kernels' own logic, rewritten
in Python line by line: v3 numbers tiles row by row (m0 = tile / tiles_n, n0 = tile % tiles_n),
v4 maps a tile number with tile_coord() (v4_persistent/matmul.cu, section 2), and CTA b of a
grid of G takes tiles b, b + G, b + 2G, ...
"""
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from common import COLORS, box, figure, save

BM, BN, STAGES, GROUP_M, SMS = 128, 256, 4, 8, 132  # as in v4_persistent/matmul.cu; H200 SMs


def tile_coord(tile, tiles_m, tiles_n, group_m):
    """v4_persistent::tile_coord, line by line."""
    group = tile // (group_m * tiles_n)
    first_m = group * group_m
    rows = min(group_m, tiles_m - first_m)  # tile rows in this group
    in_group = tile - first_m * tiles_n
    return first_m + in_group % rows, in_group // rows


def row_major(tile, tiles_m, tiles_n, group_m=None):
    """v3: blockIdx.x is the tile; m0 = blockIdx.x / tiles_n, n0 = blockIdx.x % tiles_n."""
    return tile // tiles_n, tile % tiles_n


def order(fn, tiles_m, tiles_n, group_m):
    """tile number of every (tile row, tile column); asserts every tile is visited once."""
    seen = {}
    for tile in range(tiles_m * tiles_n):
        seen[fn(tile, tiles_m, tiles_n, group_m)] = tile
    assert len(seen) == tiles_m * tiles_n and all(
        0 <= m < tiles_m and 0 <= n < tiles_n for m, n in seen), "not a permutation"
    return seen


def small_orders():
    """A 7×6 tile grid numbered row by row (v3) and in groups of 3 tile rows (v4), with a
    toy grid of 8 CTAs: the first 8 tiles are the ones computed at the same time."""
    tiles_m, tiles_n, group_m, grid = 7, 6, 3, 8
    fig, ax = figure(9.4, 4.6)
    cw, ch = 0.62, 0.5
    panels = [("v3: one CTA per tile, row by row", row_major),
              (f"v4: tile_coord(), GROUP_M = {group_m}", tile_coord)]
    for p, (title, fn) in enumerate(panels):
        x0 = p * 5.0
        where = order(fn, tiles_m, tiles_n, group_m)
        for (m, n), tile in where.items():
            wave = tile // grid
            color = COLORS["c"] if wave == 0 else ("white" if wave % 2 else COLORS["light"])
            box(ax, x0 + n * cw, (tiles_m - 1 - m) * ch, cw, ch, str(tile), color=color,
                alpha=0.55 if wave == 0 else 1.0, fontsize=8, edge=COLORS["grey"], lw=0.6)
        ax.add_patch(Rectangle((x0, 0), tiles_n * cw, tiles_m * ch, fill=False, lw=1.2))
        ax.text(x0 + tiles_n * cw / 2, tiles_m * ch + 0.25, title, ha="center", fontsize=9)
        if fn is tile_coord:  # the groups' edges; the last group holds the one row left over
            for first in range(group_m, tiles_m, group_m):
                y = (tiles_m - first) * ch
                ax.plot([x0 - 0.08, x0 + tiles_n * cw + 0.08], [y, y], color="black", lw=2.2)
            ax.text(x0 + tiles_n * cw + 0.15, (tiles_m - 1.5) * ch, "group 0", va="center",
                    fontsize=7)
            ax.text(x0 + tiles_n * cw + 0.15, (tiles_m - 4.5) * ch, "group 1", va="center",
                    fontsize=7)
            ax.text(x0 + tiles_n * cw + 0.15, 0.5 * ch, "group 2:\n1 row left", va="center",
                    fontsize=7)
        # What the first wave reads: its tile rows (of A) and tile columns (of B).
        first = [mn for mn, tile in where.items() if tile < grid]
        rows = sorted({m for m, _ in first})
        cols = sorted({n for _, n in first})
        ax.text(x0 + tiles_n * cw / 2, -0.3,
                f"tiles 0–{grid - 1} (one per CTA) read {len(rows)} tile rows of A\n"
                f"and {len(cols)} tile columns of B", ha="center", va="top", fontsize=8)
    ax.text(4.6, -1.25, f"Colours: the first wave of a grid of {grid} CTAs (orange), then "
            "alternate waves.  CTA b computes tiles b, b + 8, b + 16, …", ha="center",
            va="top", fontsize=8)
    ax.set_xlim(-0.2, 9.6)
    ax.set_ylim(-1.6, tiles_m * ch + 0.5)
    save(fig, "v4_order")


def runs(where, tiles_m, tiles_n, key):
    """Horizontal runs of tiles with the same key(tile): (row, first column, length, key)."""
    out = []
    for m in range(tiles_m):
        n = 0
        while n < tiles_n:
            k = key(where[(m, n)])
            e = n
            while e + 1 < tiles_n and key(where[(m, e + 1)]) == k:
                e += 1
            out.append((m, n, e - n + 1, k))
            n = e + 1
    return out


def waves():
    """The tile grids of 8192³ and 16384³ (128×256 tiles) cut into waves of 132 CTAs, in v3's
    row-major order and v4's grouped order; the tile rows of A and tile columns of B that the
    first wave reads are marked beside the grid."""
    fig, axes = plt.subplots(1, 4, figsize=(9.6, 3.9),
                             gridspec_kw=dict(width_ratios=[1, 1, 1, 1], wspace=0.3))
    cases = [(8192, row_major, "v3, row-major"), (8192, tile_coord, f"v4, GROUP_M = {GROUP_M}"),
             (16384, row_major, "v3, row-major"), (16384, tile_coord, f"v4, GROUP_M = {GROUP_M}")]
    for ax, (size, fn, name) in zip(axes, cases):
        ax.set_axis_off()
        ax.set_aspect("equal")
        tiles_m, tiles_n = size // BM, size // BN
        where = order(fn, tiles_m, tiles_n, GROUP_M)
        # One unit per 128 rows or columns of C, so the matrix is drawn square.
        for m, n, length, wave in runs(where, tiles_m, tiles_n, lambda t: t // SMS):
            color = COLORS["c"] if wave == 0 else ("#c8c8c8" if wave % 2 else "white")
            ax.add_patch(Rectangle((n * 2, tiles_m - 1 - m), 2 * length, 1, facecolor=color,
                                   edgecolor="none"))
        if fn is tile_coord:  # the groups' edges
            for first_m in range(GROUP_M, tiles_m, GROUP_M):
                ax.plot([0, 2 * tiles_n], [tiles_m - first_m] * 2, color="black", lw=0.4)
        ax.add_patch(Rectangle((0, 0), 2 * tiles_n, tiles_m, fill=False, lw=1))
        first = [mn for mn, tile in where.items() if tile < SMS]
        rows = sorted({m for m, _ in first})
        cols = sorted({n for _, n in first})
        pad = tiles_m * 0.03
        for m in rows:  # A's tile rows, left of the grid
            ax.add_patch(Rectangle((-3 * pad, tiles_m - 1 - m), 2 * pad, 1,
                                   facecolor=COLORS["a"], edgecolor="none"))
        for n in cols:  # B's tile columns, above the grid
            ax.add_patch(Rectangle((n * 2, tiles_m + pad), 2, 2 * pad, facecolor=COLORS["b"],
                                   edgecolor="none"))
        kib = len(rows) * BM * 64 * 2 // 1024 + len(cols) * BN * 64 * 2 // 1024
        ax.set_title(f"{size}³: {tiles_m}×{tiles_n} tiles\n{name}", fontsize=9)
        ax.text(tiles_n, -pad, f"wave 0 ({SMS} CTAs) reads\n{len(rows)} tile rows of A, "
                f"{len(cols)} of {tiles_n}\ntile columns of B: {kib} KiB\nper 64-wide K slice",
                ha="center", va="top", fontsize=8)
        ax.set_xlim(-4 * pad, 2 * tiles_n + pad)
        ax.set_ylim(-tiles_m * 0.33, tiles_m + 4 * pad)
    fig.text(0.5, 0.06, "Orange: the first 132 tiles, computed at the same time; grey and "
             "white: the waves after it;\nthin lines: the groups of 8 tile rows.  Green "
             "bars: the tile rows of A, purple bars: the tile\ncolumns of B that wave 0 "
             "needs.", ha="center", fontsize=8)
    save(fig, "v4_waves")


def ring():
    """Stage and parity of every K iteration of one CTA over three tiles, with 6 K slices per
    tile and STAGES = 4.  v4's counter `it` runs on across tiles.  The last row replays the
    same barriers with a counter that restarted at every tile (stage kt % 4, parity
    (kt / 4) & 1) and marks where that parity disagrees with the barrier's real phase."""
    k_tiles, n_tiles = 6, 3
    total = k_tiles * n_tiles
    fig, ax = figure(10.0, 3.7)
    cw, ch = 0.55, 0.46
    x0 = 2.6
    tile_colors = [COLORS["a"], COLORS["b"], COLORS["c"]]
    labels = ["tile (of this CTA)", "kt (K slice of the tile)", "it (the CTA's counter)",
              "stage = it % 4", "full parity = (it / 4) & 1", "empty parity = that ^ 1",
              "restarted counter:\nstage kt % 4 / parity"]
    fills = [0] * STAGES      # completed phases of each full barrier, v4
    fills_kt = [0] * STAGES   # the same with a per-tile counter
    wrong_at = []
    for it in range(total):
        tile, kt = divmod(it, k_tiles)
        s, parity = it % STAGES, (it // STAGES) & 1
        assert parity == fills[s] % 2  # the wait parity is the count of the stage's fills, mod 2
        fills[s] += 1
        s_kt, p_kt = kt % STAGES, (kt // STAGES) & 1
        wrong = p_kt != fills_kt[s_kt] % 2
        fills_kt[s_kt] += 1
        if wrong:
            wrong_at.append((tile, kt))
        values = [str(tile), str(kt), str(it), str(s), str(parity), str(parity ^ 1),
                  f"{s_kt}/{p_kt}"]
        x = x0 + it * cw
        for r, v in enumerate(values):
            y = (len(values) - 1 - r) * ch
            if r == len(values) - 1:
                color, alpha = (COLORS["mma"], 0.6) if wrong else ("white", 1.0)
            else:
                color, alpha = tile_colors[tile], 0.18 + 0.25 * (r == 0)
            box(ax, x, y, cw, ch, v, color=color, alpha=alpha, fontsize=8,
                edge=COLORS["grey"], lw=0.5)
    for r, lab in enumerate(labels):
        ax.text(x0 - 0.1, (len(labels) - 1 - r) * ch + ch / 2, lab, ha="right", va="center",
                fontsize=8)
    top = len(labels) * ch
    # While the consumers store tile 0, the producer may fill it = 6 … 9: iteration it needs
    # it - STAGES released, and every iteration of tile 0 (it <= 5) is.
    lo, hi = k_tiles, k_tiles + STAGES - 1
    ax.annotate("", xy=(x0 + lo * cw, top + 0.12), xytext=(x0 + (hi + 1) * cw, top + 0.12),
                arrowprops=dict(arrowstyle="|-|", color="black", lw=1, mutation_scale=3))
    ax.text(x0 + (lo + hi + 1) / 2 * cw, top + 0.22,
            f"may be loaded while the consumers store tile 0: it = {lo}…{hi}", ha="center",
            va="bottom", fontsize=8)
    where = ", ".join(f"tile {t} slice {k}" for t, k in wrong_at)
    ax.text(x0 + total * cw / 2, -0.2, f"Pink ({where}): a per-tile counter would wait on a "
            "phase that had\nalready completed and read a stage not yet refilled.", ha="center",
            va="top", fontsize=8)
    ax.set_xlim(-0.2, x0 + total * cw + 0.1)
    ax.set_ylim(-0.85, top + 0.6)
    save(fig, "v4_ring")


if __name__ == "__main__":
    small_orders()
    waves()
    ring()
