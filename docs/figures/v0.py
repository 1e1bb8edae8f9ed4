"""Figures of the v0 chapter: the tile hierarchy and the 128-byte swizzle."""
from common import COLORS, box, figure, save


def tiles():
    """A 128×128 CTA tile, its four 64×64 warp tiles, and one warp tile's 16×8 MMA tiles."""
    fig, ax = figure(9, 3.6)
    # CTA tile: 2 x 2 warps.
    s = 3.0 / 128
    for wm in range(2):
        for wn in range(2):
            box(ax, wn * 64 * s, (1 - wm) * 64 * s, 64 * s, 64 * s, f"warp {wm * 2 + wn}\n64×64",
                color=COLORS["c"] if (wm, wn) == (0, 1) else "white", alpha=0.35)
    ax.text(1.5, 3.15, "CTA tile of C: 128×128\n(4 warps, one 64×64 each)", ha="center", fontsize=9)
    # Warp tile: 4 m16 x 8 n8 MMA tiles.
    x0, s2 = 4.0, 3.0 / 64
    for mt in range(4):
        for nt in range(8):
            box(ax, x0 + nt * 8 * s2, (3 - mt) * 16 * s2, 8 * s2, 16 * s2,
                color=COLORS["mma"] if (mt, nt) == (0, 0) else "white", alpha=0.5)
    ax.text(x0 + 1.5, 3.15, "warp tile 64×64:\n4 × 8 mma.sync tiles of 16×8", ha="center",
            fontsize=9)
    ax.annotate("", xy=(x0, 3.0), xytext=(1.5 + 0.05, 2.95),
                arrowprops=dict(arrowstyle="-|>", color=COLORS["c"]))
    # One MMA: A 16x16, B 16x8, C 16x8.
    x1 = 8.0
    box(ax, x1, 1.6, 0.8, 0.8, "A frag\n16×16", color=COLORS["a"], alpha=0.4)
    box(ax, x1 + 1.1, 2.1, 0.4, 0.8, "B\n16×8", color=COLORS["b"], alpha=0.4, fontsize=7)
    box(ax, x1 + 1.1, 1.6, 0.4, 0.4, "C", color=COLORS["mma"], alpha=0.5, fontsize=7)
    ax.text(x1 + 0.75, 3.15, "mma.sync.m16n8k16:\nfragments in registers", ha="center", fontsize=9)
    ax.text(x1 + 0.75, 1.1, "ldmatrix.x4 loads A (16×16)\nor two B fragments (16×8 each)\n"
            "from shared memory", ha="center", va="top", fontsize=8)
    ax.set_xlim(-0.1, 9.9)
    ax.set_ylim(0, 3.6)
    save(fig, "v0_tiles")


def swizzle():
    """Where TMA's 128-byte swizzle puts 16-byte chunk c of row r: at c XOR (r mod 8)."""
    fig, ax = figure(8, 3.4)
    for panel, (title, fn) in enumerate([("row-major (no swizzle)", lambda r, c: c),
                                         ("SWIZZLE_128B: chunk c of row r at c ⊕ (r mod 8)",
                                          lambda r, c: c ^ (r % 8))]):
        x0 = panel * 5.0
        ax.text(x0 + 1.8, 3.2, title, ha="center", fontsize=9)
        for r in range(8):
            for slot in range(8):
                # Which logical chunk sits in this 16-byte slot of the row?
                c = next(c for c in range(8) if fn(r, c) == slot)
                box(ax, x0 + slot * 0.45, (7 - r) * 0.36, 0.45, 0.36, str(c),
                    color=COLORS["a"] if c == 0 else "white", alpha=0.5, fontsize=7.5)
        if panel == 0:
            ax.text(x0 - 0.1, 1.4, "rows 0–7\n(128 B each)", ha="right", va="center", fontsize=7.5)
        ax.text(x0 + 1.8, -0.25, "16-byte slots 0–7 = banks 0–31", ha="center", va="top",
                fontsize=7.5)
    ax.text(4.3, -0.62, "ldmatrix reads chunk 0 of eight consecutive rows: one bank group with no "
            "swizzle\n(8-way conflict), eight different bank groups with it.", ha="center",
            va="top", fontsize=8)
    ax.set_xlim(-1.2, 8.9)
    ax.set_ylim(-1.35, 3.5)
    save(fig, "v0_swizzle")


if __name__ == "__main__":
    tiles()
    swizzle()
