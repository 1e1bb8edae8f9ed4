"""Figures of the v1 chapter: the operand data path of mma.sync against wgmma, the matrix
descriptor and how the K loop walks it, one K slice of the wgmma protocol, and the layout of
a wgmma accumulator.  The counts and offsets are computed here from v0's and v1's tile
configuration and from a Python copy of v1's smem_descriptor, not typed in."""
from common import COLORS, arrow, box, figure, save

# Tile configuration, as in v0_mma_sync/matmul.cu and v1_wgmma/matmul.cu.
BM, BN, BK = 128, 128, 64
V0_WARPS_M, V0_WARPS_N = 2, 2
V1_WARPGROUPS = 1


def v0_counts():
    """ldmatrix.x4 and mma.sync per K slice per CTA, from v0's loop nest."""
    wm, wn = BM // V0_WARPS_M, BN // V0_WARPS_N
    tiles_m, tiles_n = wm // 16, wn // 8
    warps, k_steps = V0_WARPS_M * V0_WARPS_N, BK // 16
    ldmatrix = warps * k_steps * (tiles_m + tiles_n // 2)
    mma = warps * k_steps * tiles_m * tiles_n
    return ldmatrix, mma


def v1_counts():
    """wgmma per K slice per CTA, from v1's loop nest (kMmaM m64 slabs per k16 step)."""
    mma_m = (BM // V1_WARPGROUPS) // 64
    return V1_WARPGROUPS * (BK // 16) * mma_m


def smem_descriptor(addr):
    """v1_wgmma::smem_descriptor, bit for bit."""
    return ((addr & 0x3FFFF) >> 4) | (16 >> 4) << 16 | (1024 >> 4) << 32 | 1 << 62


def datapath():
    """Where the operands travel: through registers for mma.sync, not for wgmma."""
    ldm, mma = v0_counts()
    wg = v1_counts()
    fig, ax = figure(9.4, 3.7)
    for panel, title in enumerate(["v0: ldmatrix + mma.sync", "v1: wgmma.mma_async"]):
        x0 = panel * 5.0
        ax.text(x0 + 2.1, 3.45, title, ha="center", fontsize=10, weight="bold")
        box(ax, x0 - 0.15, 1.9, 1.45, 1.05, "shared memory\nA 128×64\nB 128×64\n(TMA, swizzled)",
            color=COLORS["smem"], alpha=0.45, fontsize=7.5)
        box(ax, x0 + 3.05, 1.9, 1.2, 1.05, "tensor\ncores", color=COLORS["mma"], alpha=0.45,
            fontsize=8.5)
        box(ax, x0 + 2.95, 0.05, 1.4, 0.85, "accumulators\n(registers)\n128 fp32 / thread",
            color=COLORS["c"], alpha=0.35, fontsize=7)
        arrow(ax, x0 + 3.5, 1.9, x0 + 3.5, 0.9, style="<|-|>")
        if panel == 0:
            box(ax, x0 + 1.4, 0.05, 1.35, 0.85, "registers\nA, B fragments", color=COLORS["a"],
                alpha=0.35, fontsize=7)
            arrow(ax, x0 + 0.62, 1.9, x0 + 1.4, 0.55, color=COLORS["a"])
            ax.text(x0 + 0.55, 1.15, f"ldmatrix.x4\n{ldm} per slice", ha="right", va="center",
                    fontsize=7, color=COLORS["a"])
            arrow(ax, x0 + 2.75, 0.6, x0 + 3.2, 1.9, color=COLORS["mma"])
            ax.text(x0 + 2.0, 1.55, f"mma.sync\n{mma} per slice", ha="center", va="center",
                    fontsize=7, color=COLORS["mma"])
            ax.text(x0 + 2.1, -0.3, "every operand byte passes through the register file",
                    ha="center", va="top", fontsize=7.5)
        else:
            arrow(ax, x0 + 1.3, 2.55, x0 + 3.05, 2.55, color=COLORS["smem"])
            ax.text(x0 + 2.15, 2.65, "read directly", ha="center", va="bottom", fontsize=7,
                    color="black")
            box(ax, x0 + 1.3, 0.05, 1.45, 0.85, "registers\ndesc_a, desc_b\n(64-bit each)",
                color=COLORS["grey"], alpha=0.3, fontsize=7)
            arrow(ax, x0 + 2.6, 0.9, x0 + 3.2, 1.9, color=COLORS["mma"])
            ax.text(x0 + 2.2, 1.55, f"wgmma\n{wg} per slice", ha="center", va="center",
                    fontsize=7, color=COLORS["mma"])
            ax.text(x0 + 2.1, -0.3, "operands stay in shared memory; registers hold\n"
                    "only the descriptors and the accumulators", ha="center", va="top",
                    fontsize=7.5)
    ax.set_xlim(-1.0, 9.4)
    ax.set_ylim(-0.8, 3.65)
    save(fig, "v1_datapath")


FIELDS = [  # (first bit, last bit, name, value written by smem_descriptor)
    (0, 13, "start address\n>> 4", "addr >> 4"),
    (16, 29, "leading byte\noffset >> 4", "1 (16 B,\nunused)"),
    (32, 45, "stride byte\noffset >> 4", "64\n(1024 B)"),
    (49, 51, "base\noffset", "0"),
    (62, 63, "swizzle", "1\n(128 B)"),
]


def descriptor():
    """The 64-bit descriptor's fields, and the eight descriptors of one K slice of A."""
    fig, ax = figure(9.4, 6.4)
    # The 64 bits, bit 63 on the left as in a register diagram.
    w = 9.0 / 64
    y = 5.2

    def bx(bit):
        return (63 - bit) * w

    box(ax, 0, y, 64 * w, 0.45, color=COLORS["light"], lw=0.8)
    for lo, hi, name, value in FIELDS:
        box(ax, bx(hi), y, (hi - lo + 1) * w, 0.45, color=COLORS["b"], alpha=0.35, lw=0.8)
        mid = bx(hi) + (hi - lo + 1) * w / 2
        ax.text(mid, y + 0.55, name, ha="center", va="bottom", fontsize=7)
        ax.text(mid, y + 0.22, f"{hi}–{lo}" if hi != lo else str(lo), ha="center", va="center",
                fontsize=7)
        ax.text(mid, y - 0.07, value, ha="center", va="top", fontsize=7, color=COLORS["b"])
    ax.text(4.5, y + 1.15, "smem_descriptor(addr): 64 bits, unlabelled bits zero",
            ha="center", fontsize=9)

    # A's tile in shared memory, logical (unswizzled) view: 128 rows of 128 bytes.
    x0, y0, tw, th = 1.25, 0.3, 4.4, 3.6  # tile drawn 128 B wide, 128 rows high
    rh = th / BM
    kw = tw / (BK // 16)
    sa = 0x0400  # an example 1024-byte aligned address for sA
    base = smem_descriptor(sa)
    for mt in range(BM // 64):
        for ks in range(BK // 16):
            addr = sa + mt * 64 * BK * 2 + ks * 32
            delta = smem_descriptor(addr) - base
            cy = y0 + th - (mt + 1) * 64 * rh
            box(ax, x0 + ks * kw, cy, kw, 64 * rh, color=COLORS["a"], alpha=0.15 + 0.12 * ks,
                lw=0.8)
            ax.text(x0 + (ks + 0.5) * kw, cy + 32 * rh, f"mt {mt}, ks {ks}\ndesc_a + {delta}",
                    ha="center", va="center", fontsize=7, zorder=4,
                    bbox=dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none",
                              alpha=0.85))
    for atom in range(1, BM // 8):  # 8-row, 1024-byte swizzle atoms
        ax.plot([x0, x0 + tw], [y0 + th - atom * 8 * rh] * 2, color="black", lw=0.3)
    ax.text(x0 + tw / 2, y0 + th + 0.12, "sA: 128 rows × 128 B (64 elements of K), logical view;\n"
            f"cells: the {v1_counts()} wgmma of one K slice and their A descriptors",
            ha="center", va="bottom", fontsize=8)
    for ks in range(BK // 16):
        ax.text(x0 + (ks + 0.5) * kw, y0 - 0.05, f"bytes {32 * ks}–{32 * ks + 31}\n"
                f"k {16 * ks}–{16 * ks + 15}", ha="center", va="top", fontsize=7)
    ax.text(x0 - 0.1, y0 + th - 8 * rh / 2, "rows 0–7:\none atom", ha="right", va="center",
            fontsize=7)
    ax.text(x0 - 0.1, y0 + th - 64 * rh / 2, "m64 slab 0\nrows 0–63", ha="right",
            va="center", fontsize=7)
    ax.text(x0 - 0.1, y0 + th - 96 * rh, "m64 slab 1\nrows 64–127", ha="right", va="center",
            fontsize=7)

    # What each field does for this tile.
    tx = 5.95
    notes = [
        ("start address", "row 0, k 0 of the wgmma's operand: +2 per\n"
         f"k16 step (32 B), +{(64 * BK * 2) >> 4} per m64 slab (8 KiB)"),
        ("stride byte offset", "1024 B from one 8-row atom to the next:\n"
         "8 atoms for m64 of A, 16 for n128 of B"),
        ("leading byte offset", "not used here: a k16 slice (32 B) never\n"
         "leaves its 128-byte row"),
        ("swizzle = 128 B", "the hardware applies TMA's XOR itself, so\n"
         "the address is the unswizzled (logical) one"),
        ("base offset = 0", "every tile starts on a 1024-byte boundary"),
    ]
    for i, (head, text) in enumerate(notes):
        yy = 3.95 - i * 0.8
        ax.text(tx, yy, head, ha="left", va="top", fontsize=8, weight="bold")
        ax.text(tx, yy - 0.22, text, ha="left", va="top", fontsize=7)
    ax.set_xlim(-0.3, 9.6)
    ax.set_ylim(-0.5, 6.45)
    save(fig, "v1_descriptor")


def protocol():
    """One K slice of one CTA, in order: load, wait, fence, 8 wgmma, commit, wait, barrier."""
    n_wgmma = v1_counts()
    fig, ax = figure(9.4, 3.3)
    lanes = ["thread 0\n(also in the\nwarpgroup)", "warpgroup\n(128 threads)", "TMA engine",
             "tensor cores"]
    ys = [2.55, 1.8, 1.05, 0.3]
    for name, yy in zip(lanes, ys):
        ax.text(-0.1, yy + 0.25, name, ha="right", va="center", fontsize=8)
        ax.plot([0, 9.5], [yy + 0.25] * 2, color=COLORS["light"], lw=0.6, zorder=0)
    h = 0.5
    # thread 0: expect_tx and two copies
    box(ax, 0.0, ys[0], 0.95, h, "expect_tx\n+ 2 TMA", color=COLORS["tma"], alpha=0.5,
        fontsize=7.5)
    # TMA copies A and B
    box(ax, 0.95, ys[2], 2.15, h, "A and B tiles → sA, sB\n(bytes counted on full)",
        color=COLORS["tma"], alpha=0.35, fontsize=7.5)
    # warpgroup: waits on full, then the protocol
    box(ax, 0.0, ys[1], 3.1, h, "mbarrier_wait(full, kt & 1)", color=COLORS["light"],
        fontsize=7.5)
    steps = [(3.1, 0.55, "fence", COLORS["b"]), (3.65, 1.2, f"{n_wgmma} × wgmma\n(issue only)",
                                                   COLORS["mma"]),
             (4.85, 0.65, "commit", COLORS["b"]), (5.5, 1.5, "wait_group 0", COLORS["light"]),
             (7.0, 1.2, "fence_\naccumulators", COLORS["grey"]),
             (8.2, 1.3, "__syncthreads", COLORS["light"])]
    for x, w, text, color in steps:
        box(ax, x, ys[1], w, h, text, color=color, alpha=0.45, fontsize=7.5)
    # tensor cores run from the first issue until the group completes
    box(ax, 3.75, ys[3], 3.25, h, f"the {n_wgmma} MMAs run; they read\nsA and sB and write acc",
        color=COLORS["mma"], alpha=0.35, fontsize=7.5)
    arrow(ax, 3.1, ys[2] + 0.25, 3.1, ys[1] + h, color=COLORS["tma"], style="-|>")
    arrow(ax, 7.0, ys[3] + h, 7.0, ys[1], color=COLORS["mma"], style="-|>")
    ax.text(9.45, ys[0] + 0.25, "next slice →", ha="right", va="center", fontsize=7.5)
    ax.text(4.75, -0.15, "time → (not to scale).  Every wait here is a gap in this CTA's use of "
            "the tensor cores,\nwhich only the SM's two other resident CTAs can fill.",
            ha="center", va="top", fontsize=7.5)
    ax.set_xlim(-1.4, 9.6)
    ax.set_ylim(-0.5, 3.15)
    save(fig, "v1_protocol")


def accumulator():
    """Who holds which element of a 64×BN wgmma accumulator, from v1's epilogue indexing."""
    owner = {}  # (row, col) -> (warp, lane, register index)
    for warp in range(4):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            for j in range(BN // 8):
                for i in range(4):
                    row = warp * 16 + g + (8 if i >= 2 else 0)
                    col = j * 8 + 2 * t + (i % 2)
                    owner[(row, col)] = (warp, lane, 4 * j + i)
    assert len(owner) == 64 * BN  # every element exactly once

    fig, ax = figure(11.0, 5.6)
    # Left: the whole 64×128 accumulator, four warp bands, sixteen 8-column blocks.
    x0, y0, w, h = 0.0, 0.9, 2.6, 4.16
    for warp in range(4):
        yb = y0 + h - (warp + 1) * h / 4
        box(ax, x0, yb, w, h / 4, color=COLORS["c"], alpha=0.1 + 0.1 * warp, lw=0.8)
        ax.text(x0 + w / 2, yb + h / 8, f"warp {warp}:\nrows {16 * warp}–{16 * warp + 15}",
                ha="center", va="center", fontsize=8.5, zorder=4,
                bbox=dict(boxstyle="square,pad=0.2", facecolor="white", edgecolor="none"))
    for j in range(1, BN // 8):
        ax.plot([x0 + j * w / (BN // 8)] * 2, [y0, y0 + h], color="black", lw=0.3)
    box(ax, x0, y0 + h - h / 4, 2 * w / (BN // 8), h / 4, color="none", edge=COLORS["mma"], lw=1.6)
    ax.text(x0 + w / 2, y0 + h + 0.1, f"one m64n{BN}k16 accumulator:\n64 × {BN} fp32,\n"
            f"{64 * BN // 128} per thread", ha="center", va="bottom", fontsize=8.5)
    ax.text(x0 + w / 2, y0 - 0.08, "16 column blocks\nj = 0 … 15", ha="center", va="top",
            fontsize=8.5)
    # Right: warp 0, rows 0-15, columns 0-15 (blocks j = 0, 1), cell = lane and d index.
    zx, zy, cw, ch = 3.75, 0.9, 0.5, 0.26
    for r in range(16):
        for c in range(16):
            warp, lane, idx = owner[(r, c)]
            color = COLORS["a"] if lane == 0 else COLORS["b"] if lane == 5 else "white"
            box(ax, zx + c * cw, zy + (15 - r) * ch, cw, ch, f"{lane}:{idx}", color=color,
                alpha=0.4 if color != "white" else 1.0, fontsize=8.5, lw=0.3)
    for c in (0, 8):
        ax.text(zx + (c + 4) * cw, zy + 16 * ch + 0.05, f"block j = {c // 8}", ha="center",
                va="bottom", fontsize=8.5)
    ax.plot([zx + 8 * cw] * 2, [zy, zy + 16 * ch], color="black", lw=1.2)
    ax.plot([zx, zx + 16 * cw], [zy + 8 * ch] * 2, color="black", lw=1.2)
    ax.text(zx - 0.08, zy + 12 * ch, "row g", ha="right", va="center", fontsize=8.5)
    ax.text(zx - 0.08, zy + 4 * ch, "row g+8", ha="right", va="center", fontsize=8.5)
    ax.text(zx + 8 * cw, zy - 0.08, "warp 0, rows 0–15, columns 0–15; cell = lane : index in "
            "d[]\nlane 0 (green): d[4j], d[4j+1] at row 0, d[4j+2], d[4j+3] at row 8;\n"
            "lane 5 (g = 1, t = 1, purple): the same at rows 1 and 9, columns 8j+2, 8j+3",
            ha="center", va="top", fontsize=8.5)
    ax.annotate("", xy=(zx, zy + 16 * ch), xytext=(x0 + 2 * w / (BN // 8), y0 + h),
                arrowprops=dict(arrowstyle="-|>", color=COLORS["mma"]))
    ax.set_xlim(-0.1, zx + 16 * cw + 0.1)
    ax.set_ylim(-0.1, 6.2)
    save(fig, "v1_accumulator")


if __name__ == "__main__":
    datapath()
    descriptor()
    protocol()
    accumulator()
