"""Figure of the v7 chapter: one K slice of one cluster tile, what each CTA of a pair loads
and where it lands, and who releases the stage.

The offsets and byte counts are the kernel's (v7_multicast/matmul.cu: kShareB and
kShareBBytes in section 2, the producer's loop in step 3, release() in the consumers), and
the script checks that the two CTAs' shares cover B's 256 rows once and that each CTA's full
barrier sees the bytes it expects."""
import os
import re

from matplotlib.text import Text

from common import COLORS, HERE, arrow, box, figure, save

# As in v7_multicast/matmul.cu, section 2.
BM, BN, BK, CLUSTER_M, CONSUMERS = 128, 256, 64, 2, 2
TILE_A_BYTES, TILE_B_BYTES = BM * BK * 2, BN * BK * 2
SHARE_B = BN // CLUSTER_M
SHARE_B_BYTES = SHARE_B * BK * 2
TEXT = 10  # every label at least this size: the figure is shown at the page's width
PAGE_PX = 736  # that width: Furo's content column, 46em of 16 px


def save_readable(fig, name):
    """save(), then check that the smallest label is at least 10 px high once the SVG is
    scaled to the page's width."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
    save(fig, name)
    with open(os.path.join(HERE, name + ".svg")) as f:
        width_pt = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', f.read()).group(1))
    px = min(sizes) * PAGE_PX / width_pt
    assert px >= 10, f"{name}: {min(sizes)} pt text is {px:.1f} px at the page's width"


def loads(rank):
    """What the producer of CTA `rank` issues for one slice (step 3): its own A, and its
    share of B at row offset rank · kShareB of the cluster tile's BN rows, landing at offset
    rank · kShareBBytes of the stage in every CTA of the cluster."""
    return {"a": (TILE_A_BYTES, [rank]),
            "b_rows": (rank * SHARE_B, (rank + 1) * SHARE_B),
            "b_offset": rank * SHARE_B_BYTES, "b": (SHARE_B_BYTES, list(range(CLUSTER_M)))}


def check():
    rows = sorted(loads(r)["b_rows"] for r in range(CLUSTER_M))
    assert rows[0][0] == 0 and rows[-1][1] == BN and all(
        a[1] == b[0] for a, b in zip(rows, rows[1:])), "the shares cover B's rows once"
    for cta in range(CLUSTER_M):  # full[s] of every CTA expects kTileABytes + kTileBBytes
        landed = sum(l["a"][0] for l in map(loads, range(CLUSTER_M)) if cta in l["a"][1])
        landed += sum(l["b"][0] for l in map(loads, range(CLUSTER_M)) if cta in l["b"][1])
        assert landed == TILE_A_BYTES + TILE_B_BYTES
    # empty[s]: one arrival per consumer warp of every CTA of the cluster.
    return 4 * CONSUMERS * CLUSTER_M


def cluster():
    arrivals = check()
    kib = lambda b: f"{b // 1024} KiB"  # noqa: E731
    fig, ax = figure(10.0, 5.6)
    ax.text(1.0, 4.85, "global memory (via L2)", ha="center", fontsize=TEXT, weight="bold")
    shade = [0.35, 0.65]
    b_colors = [COLORS["b"], "#4b4594"]
    gx, gw, gh = 0.0, 2.0, 0.8
    gy_b = [3.85, 3.05]
    gy_a = [1.6, 0.4]
    for r in range(CLUSTER_M):
        lo, hi = loads(r)["b_rows"]
        box(ax, gx, gy_b[r], gw, gh, f"B rows n0 + {lo}\n… n0 + {hi - 1}", color=COLORS["b"],
            alpha=shade[r], fontsize=TEXT)
        box(ax, gx, gy_a[r], gw, gh, f"A: the 128 rows\nof tile row 2c + {r}", color=COLORS["a"],
            alpha=shade[r], fontsize=TEXT)
    w, h = 1.55, 0.8
    sx = 4.6
    cy = {0: 3.45, 1: 0.55}
    for rank, y in cy.items():
        box(ax, sx - 0.15, y - (0.3 if rank == 0 else 0.55), 3 * w + 0.3, h + 0.85,
            color=COLORS["light"], edge="#777777")
        ax.text(sx - 0.05, y + h + 0.12 if rank == 0 else y - 0.12,
                f"CTA rank {rank}: one stage of its shared memory", fontsize=TEXT,
                va="bottom" if rank == 0 else "top")
        box(ax, sx, y, w, h, f"A, own load\n{kib(TILE_A_BYTES)}", color=COLORS["a"],
            alpha=shade[rank], fontsize=TEXT)
        for r in range(CLUSTER_M):
            box(ax, sx + (1 + r) * w, y, w, h,
                f"B {loads(r)['b_rows'][0]}–{loads(r)['b_rows'][1] - 1}\n"
                f"{kib(loads(r)['b'][0])}", color=COLORS["b"], alpha=shade[r], fontsize=TEXT)
    for r in range(CLUSTER_M):
        arrow(ax, gx + gw, gy_a[r] + gh / 2, sx, cy[r] + h / 2, color=COLORS["a"])
        for dst in loads(r)["b"][1]:
            arrow(ax, gx + gw, gy_b[r] + gh / 2, sx + (1.5 + r) * w, cy[dst] + h,
                  color=b_colors[r])
    ax.text(3.3, 4.35, "loaded by rank 0,\nmulticast to both", fontsize=TEXT,
            color=b_colors[0], ha="center")
    ax.text(3.3, 2.05, "loaded by rank 1,\nmulticast to both", fontsize=TEXT,
            color=b_colors[1], ha="center")
    x = sx + 3 * w + 0.4
    ax.annotate("", xy=(x, cy[1] + h), xytext=(x, cy[0]),
                arrowprops=dict(arrowstyle="<|-|>", color=COLORS["mma"], lw=1.2, ls="--"))
    ax.text(x + 0.15, (cy[0] + cy[1] + h) / 2,
            f"empty[s] of each CTA:\n{4 * CONSUMERS} consumer warps\nof both CTAs arrive\n"
            f"on it ({arrivals} arrivals)\nbefore its producer\nrefills stage s",
            fontsize=TEXT, va="center", color=COLORS["mma"])
    ax.text(-0.1, -0.45, f"full[s] of each CTA expects {kib(TILE_A_BYTES + TILE_B_BYTES)}: its "
            "own A, its own share of B and its partner's.\nPer slice a CTA pulls "
            f"{kib(TILE_A_BYTES + SHARE_B_BYTES)} from L2 instead of "
            f"{kib(TILE_A_BYTES + TILE_B_BYTES)}.  n0 = tc.n · 256; c is the cluster row.",
            ha="left", va="top", fontsize=TEXT, color="#444444")
    ax.set_xlim(-0.2, 11.4)
    ax.set_ylim(-1.35, 5.2)
    save_readable(fig, "v7_cluster")


if __name__ == "__main__":
    cluster()
