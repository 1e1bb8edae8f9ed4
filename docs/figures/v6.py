"""Figures of the v6 chapter: how one consumer's 64×256 tile leaves through two shared-memory
buffers and TMA stores while the next tile starts, and where the st.shared.b32 of a warp put
its rows in a 128-byte-swizzled buffer.

The chunk-to-buffer assignment, the store addresses and the swizzle are the epilogue's own
expressions (v6_tma_store/matmul.cu, step 11), rewritten in Python and checked against TMA's
swizzle and for bank conflicts.  The timeline is a small model that replays the order of that
loop with made-up durations; it shows orderings, not measured times, and asserts the rule the
code keeps: a buffer is written again only after TMA has finished reading it."""
import os
import re

from matplotlib.patches import Rectangle
from matplotlib.text import Text

from common import COLORS, HERE, arrow, box, figure, save

# As in v6_tma_store/matmul.cu, section 2.
BN, WM = 256, 64
STORE_COLS, STORE_BUFFERS = 64, 2
STORE_BOX_BYTES = WM * 64 * 2
CHUNKS = BN // STORE_COLS

CHUNK_COLORS = ["#d95f02", "#1f78b4", "#a6761d", "#7b3294"]
TEXT = 10  # every label at least this size: the figures are shown at the page's width
PAGE_PX = 736  # that width: Furo's content column, 46em of 16 px
HIGHLIGHT = 2  # the n8 block whose store the swizzle figure outlines


def save_readable(fig, name):
    """save(), then check that the smallest label is at least 10 px high once the SVG is
    scaled to the page's width."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
    save(fig, name)
    with open(os.path.join(HERE, name + ".svg")) as f:
        width_pt = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', f.read()).group(1))
    px = min(sizes) * PAGE_PX / width_pt
    assert px >= 10, f"{name}: {min(sizes)} pt text is {px:.1f} px at the page's width"


def buffer_of(chunk):
    """Step 11: chunk c goes through buffer c % kStoreBuffers."""
    return chunk % STORE_BUFFERS


def st_shared_address(warp, lane, jj, upper):
    """Byte offset inside a buffer that lane `lane` of warp `warp` writes with its
    st.shared.b32 for n8 block jj of the chunk (step 11, line by line): row warp·16 + g, or
    row + 8 for `upper`, and word t of the block's 16-byte unit, the unit's position
    swizzled by row % 8 (the same for row and row + 8)."""
    g, t = lane // 4, lane % 4
    row = warp * 16 + g
    at = (jj ^ (row % 8)) * 16 + 4 * t
    return at + (row + 8 * upper) * 128


def tma_swizzle_128b(offset):
    """Where TMA's 128-byte swizzle keeps the byte at `offset` of a box whose rows are 128
    bytes: the 16-byte unit index (bits 4-6) is XORed with the row inside the 8-row,
    1024-byte atom (bits 7-9)."""
    return offset ^ (((offset >> 7) & 7) << 4)


def bank(offset):
    """Shared memory's bank of a byte offset: 32 banks of 4 bytes."""
    return offset // 4 % 32


def check_layout():
    """The kernel's addresses are the TMA box's swizzled layout; the warpgroup's stores of a
    chunk write every 4-byte word of the buffer once; and each warp-wide st.shared.b32 (32
    lanes: 8 rows, 4 words each) hits all 32 banks once, where without the swizzle it would
    hit 4 banks 8 times each."""
    words = []
    for warp in range(4):
        for jj in range(STORE_COLS // 8):
            for upper in (0, 1):
                addresses = [st_shared_address(warp, lane, jj, upper) for lane in range(32)]
                for lane, a in enumerate(addresses):
                    g, t = lane // 4, lane % 4
                    logical = (warp * 16 + g + 8 * upper) * 128 + jj * 16 + 4 * t
                    assert a == tma_swizzle_128b(logical)
                    assert (a // 16) % 8 == jj ^ (g % 8)  # unit jj of row g, moved
                assert len({bank(a) for a in addresses}) == 32, "bank conflict"
                plain = [(warp * 16 + lane // 4 + 8 * upper) * 128 + jj * 16 + 4 * (lane % 4)
                         for lane in range(32)]
                assert len({bank(a) for a in plain}) == 4  # 8-way conflict unswizzled
                words += addresses
    assert sorted(words) == list(range(0, STORE_BOX_BYTES, 4)), "each word written once"


# Model durations, in units of one consumer's K-slice group on the tensor cores.
DRAIN = 0.65   # wait_group 0: the tile's last group retires
WRITE = 1.0    # one chunk: wait for its buffer, barrier, convert, 16 st.shared, fence, barrier
ISSUE = 0.15   # the leader issues the chunk's TMA store and commits it
READ = 0.45    # TMA reads the 8 KiB buffer
GLOBAL = 1.5   # TMA writes the chunk to global memory (through L2)
START = 0.3    # next tile: the full barrier (already complete), fence, first wgmma issued
GROUP = 1.0


def epilogue_model():
    """One consumer's epilogue of one tile and the start of the next, in the order of the
    code: returns the warpgroup's spans, each store's read and write spans, and the next
    tile's first groups."""
    t = DRAIN
    spans = [(0.0, DRAIN, "wait_group 0", None)]
    stores = []
    for chunk in range(CHUNKS):
        # The leader's bulk_wait_group_read<kStoreBuffers - 1>: the store kStoreBuffers
        # chunks ago, which read this buffer, must have finished reading it.
        if chunk >= STORE_BUFFERS:
            earlier = stores[chunk - STORE_BUFFERS]
            assert buffer_of(earlier["chunk"]) == buffer_of(chunk)
            t = max(t, earlier["read"][1])
        spans.append((t, t + WRITE, f"chunk {chunk}", chunk))
        t += WRITE
        spans.append((t, t + ISSUE, "", "issue"))
        t += ISSUE
        stores.append({"chunk": chunk, "issued": t, "read": (t, t + READ),
                       "write": (t + 0.1, t + READ + GLOBAL)})
    epilogue_end = t
    spans.append((t, t + START, "", "start"))
    groups = [(t + START + i * GROUP, t + START + (i + 1) * GROUP, i) for i in range(3)]
    spans.append((t + START, groups[-1][1], "next tile: K loop", "kloop"))
    for s in stores:  # a buffer's next write starts only once TMA has read it
        later = [w for w in spans if w[3] == s["chunk"] + STORE_BUFFERS]
        assert all(w[0] >= s["read"][1] for w in later)
    return spans, stores, groups, epilogue_end


def path(ax, y0):
    """The data path: accumulators → buffers → C, one arrow per chunk."""
    w, h = 2.0, 0.75
    x0 = 0.6
    ax.text(x0 - 0.15, y0 + 3.3 + h / 2, "registers\n(accumulators)", ha="right", va="center",
            fontsize=TEXT)
    ax.text(x0 - 0.15, y0 + 1.65 + h / 2, "shared\nmemory", ha="right", va="center",
            fontsize=TEXT)
    ax.text(x0 - 0.15, y0 + h / 2, "C in global\nmemory", ha="right", va="center",
            fontsize=TEXT)
    for chunk in range(CHUNKS):
        cols = f"columns {chunk * STORE_COLS}–{(chunk + 1) * STORE_COLS - 1}"
        box(ax, x0 + chunk * w, y0 + 3.3, w, h, f"chunk {chunk}\n{cols}",
            color=CHUNK_COLORS[chunk], alpha=0.35, fontsize=TEXT)
        box(ax, x0 + chunk * w, y0, w, h,
            f"n0 + {chunk * STORE_COLS}\n… n0 + {(chunk + 1) * STORE_COLS - 1}",
            color=CHUNK_COLORS[chunk], alpha=0.35, fontsize=TEXT)
    ax.text(x0 + 2 * w, y0 + 3.3 + h + 0.08, "one consumer's 64 × 256 tile, fp32, in 128 "
            "registers per thread", ha="center", va="bottom", fontsize=TEXT)
    bw = 2.7
    bx = [x0 + 0.45, x0 + 4 * w - 0.45 - bw]
    for b in range(STORE_BUFFERS):
        takes = ", ".join(str(c) for c in range(CHUNKS) if buffer_of(c) == b)
        box(ax, bx[b], y0 + 1.65, bw, h, f"buffer {b}: 8 KiB, swizzled\nchunks {takes}",
            color=COLORS["smem"], alpha=0.3, fontsize=TEXT)
    for chunk in range(CHUNKS):
        b = buffer_of(chunk)
        cx = x0 + chunk * w + w / 2
        tx = bx[b] + bw * (0.3 if chunk < STORE_BUFFERS else 0.7)
        arrow(ax, cx, y0 + 3.3, tx, y0 + 1.65 + h, color=CHUNK_COLORS[chunk])
        arrow(ax, tx, y0 + 1.65, cx, y0 + h, color=CHUNK_COLORS[chunk])
    ax.text(x0 + 2 * w, y0 - 0.1, "columns of the consumer's 64 rows of C (from row "
            "tc.m · 128 + consumer · 64); n0 = tc.n · 256", ha="center", va="top", fontsize=TEXT)
    ax.text(x0 + 4 * w + 0.2, y0 + 2.85, "to bf16,\nst.shared", fontsize=TEXT, va="center")
    ax.text(x0 + 4 * w + 0.2, y0 + 1.2, "TMA store,\none thread\nissues it", fontsize=TEXT,
            va="center")


def timeline(ax, y0):
    spans, stores, groups, end = epilogue_model()
    X = 1.15  # figure units per model time unit
    x0 = 0.6
    lanes = {"wg": y0 + 3.0, 0: y0 + 2.25, 1: y0 + 1.5, "c": y0 + 0.75, "pipe": y0}
    h = 0.5
    names = {"wg": "warpgroup", 0: "buffer 0", 1: "buffer 1", "c": "TMA writes C",
             "pipe": "tensor pipe"}
    for lane, y in lanes.items():
        ax.text(x0 - 0.15, y + h / 2, names[lane], ha="right", va="center", fontsize=TEXT)
    right = 0.0
    for t0, t1, label, kind in spans:
        x, wdt = x0 + t0 * X, (t1 - t0) * X
        right = max(right, x + wdt)
        if kind is None:
            box(ax, x, lanes["wg"], wdt, h, "wait", color=COLORS["light"], fontsize=TEXT)
        elif kind == "issue":
            box(ax, x, lanes["wg"], wdt, h, color="black")
        elif kind == "start":
            box(ax, x, lanes["wg"], wdt, h, color=COLORS["light"])
        elif kind == "kloop":
            box(ax, x, lanes["wg"], wdt, h, label, color=COLORS["mma"], alpha=0.35,
                fontsize=TEXT)
        else:  # the threads write chunk `kind` into its buffer
            box(ax, x, lanes["wg"], wdt, h, label, color=CHUNK_COLORS[kind], alpha=0.35,
                fontsize=TEXT)
            box(ax, x, lanes[buffer_of(kind)], wdt, h, f"written: {kind}",
                color=CHUNK_COLORS[kind], alpha=0.35, fontsize=TEXT)
    for i, s in enumerate(stores):
        c = s["chunk"]
        r0, r1 = s["read"]
        ax.add_patch(Rectangle((x0 + r0 * X, lanes[buffer_of(c)]), (r1 - r0) * X, h,
                               facecolor=CHUNK_COLORS[c], alpha=0.8, edgecolor="black",
                               hatch="///", lw=0.8))
        w0, w1 = s["write"]
        dy = 0.27 * (i % 2)
        box(ax, x0 + w0 * X, lanes["c"] + dy, (w1 - w0) * X, h - 0.27, color=CHUNK_COLORS[c],
            alpha=0.6, lw=0.6)
        ax.text(x0 + w1 * X + 0.05, lanes["c"] + dy + (h - 0.27) / 2, f"{c}", fontsize=TEXT,
                va="center", color=CHUNK_COLORS[c])
        right = max(right, x0 + w1 * X + 0.3)
    # The waits that let a buffer be written again: store c must have read it.
    for s in stores[:CHUNKS - STORE_BUFFERS]:
        c = s["chunk"]
        nxt = next(t0 for t0, _, _, k in spans if k == c + STORE_BUFFERS)
        y = lanes[buffer_of(c)] + h + 0.04
        ax.annotate("", xy=(x0 + nxt * X, y), xytext=(x0 + s["read"][1] * X, y),
                    arrowprops=dict(arrowstyle="-|>", color="#444444", lw=0.9, ls=":"))
    ax.add_patch(Rectangle((x0 + DRAIN * X, lanes["pipe"]), (end + START - DRAIN) * X, h,
                           facecolor="none", edgecolor=COLORS["grey"], hatch="////", lw=0.5))
    ax.text(x0 + (DRAIN + end) / 2 * X, lanes["pipe"] + h / 2, "idle: both consumers store",
            ha="center", va="center", fontsize=TEXT,
            bbox=dict(facecolor="white", edgecolor="none", pad=1))
    for g0, g1, i in groups:
        box(ax, x0 + g0 * X, lanes["pipe"], (g1 - g0) * X, h, f"slice {i}", color=COLORS["mma"],
            alpha=0.8, fontsize=TEXT)
    return right


def epilogue():
    fig, ax = figure(10.0, 9.5)
    ax.text(-1.2, 9.85, "a. Where each chunk goes (step 11)", fontsize=TEXT + 1, weight="bold",
            ha="left")
    path(ax, 5.45)
    ax.text(-1.2, 4.35, "b. When: the stores run under the next chunk and the next tile",
            fontsize=TEXT + 1, weight="bold", ha="left")
    right = timeline(ax, 0.3)
    ax.text(-1.2, 0.05, "Solid: the threads write the chunk.  Hatched: TMA reads the buffer, "
            "which is free again at its end\n(dotted arrow: the wait before a buffer is "
            "rewritten).  Black: one thread issues the store.  Durations invented.",
            fontsize=TEXT, va="top", ha="left", color="#444444")
    ax.set_xlim(-1.3, max(right, 8.6) + 0.1)
    ax.set_ylim(-0.75, 10.2)
    save_readable(fig, "v6_epilogue")


def swizzle():
    """Rows 0-7 of a buffer (a warp's rows g = 0…7), 16-byte units 0-7 of each 128-byte row:
    which n8 block of the chunk lands in which unit, without a swizzle and with the 128-byte
    swizzle v6 writes.  Outlined: the eight units one warp-wide st.shared.b32 writes (block
    HIGHLIGHT), and below, how lanes fill one unit."""
    check_layout()
    fig, ax = figure(10.0, 6.2)
    cw, ch = 0.62, 0.44
    panels = [("without a swizzle", lambda g, jj: jj),
              ("128-byte swizzle (v6, and the TMA box)",
               lambda g, jj: st_shared_address(0, 4 * g, jj, 0) % 128 // 16)]
    conflicts = []
    for p, (title, unit) in enumerate(panels):
        x0 = p * (8 * cw + 0.5)
        ax.text(x0 + 4 * cw, 8 * ch + 0.95, title, ha="center", fontsize=TEXT + 1,
                weight="bold")
        ax.text(x0 + 4 * cw, 8 * ch + 0.45, "16-byte unit p: banks 4p … 4p+3", ha="center",
                va="bottom", fontsize=TEXT)
        for pos in range(8):
            ax.text(x0 + pos * cw + cw / 2, 8 * ch + 0.08, f"{pos}", ha="center", va="bottom",
                    fontsize=TEXT)
        units = []
        for g in range(8):
            if p == 0:
                ax.text(-0.1, (7 - g) * ch + ch / 2, f"row {g}: lanes {4 * g}–{4 * g + 3}",
                        ha="right", va="center", fontsize=TEXT)
            for jj in range(8):
                pos = unit(g, jj)
                mine = jj == HIGHLIGHT
                if mine:
                    units.append(pos)
                box(ax, x0 + pos * cw, (7 - g) * ch, cw, ch, f"b{jj}",
                    color=CHUNK_COLORS[1] if mine else COLORS["light"],
                    alpha=0.55 if mine else 1.0, fontsize=TEXT, lw=1.8 if mine else 0.5)
        ways = 8 // len(set(units))
        conflicts.append(ways)
        text = (f"block {HIGHLIGHT} of 8 rows: 8 times the\nsame 4 banks, an 8-way conflict"
                if ways > 1 else f"block {HIGHLIGHT} of 8 rows: 8 different\nunits, all 32 "
                "banks once")
        ax.text(x0 + 4 * cw, -0.15, text, ha="center", va="top", fontsize=TEXT)
    assert conflicts == [8, 1]
    # One unit, word by word: lane 4g + t writes word t, two bf16 values.
    y, uw = -1.95, 1.8
    ux = -2.9
    ax.text(ux, y + 0.72, "one unit (row g, block b), word by word: its lane and columns",
            ha="left", va="bottom", fontsize=TEXT)
    for t in range(4):
        box(ax, ux + t * uw, y, uw, 0.7, f"lane 4g+{t}\n8b+{2 * t}, 8b+{2 * t + 1}",
            color=CHUNK_COLORS[1], alpha=0.25, fontsize=TEXT)
    ax.text(ux + 4 * uw + 0.3, y + 0.3, "4 bytes each: the pair a thread packs\nfrom "
            "acc[4j], acc[4j+1] (rows 8–15:\nacc[4j+2], acc[4j+3])", ha="left",
            va="center", fontsize=TEXT)
    ax.text(-3.1, -2.35, "Each unit is 16 bytes: 8 bf16 values of one row, from n8 block b "
            "of the chunk (columns 8b … 8b+7).  One st.shared.b32\nof the warp writes one "
            "block for its 8 rows at once, a 32-bit pair per lane; its second writes rows "
            "8–15, which\nhave the same row % 8 and so the same pattern, as do rows 16–63 "
            "of the other warps.", fontsize=TEXT, va="top", ha="left", color="#444444")
    ax.set_xlim(-3.2, 2 * 8 * cw + 0.6)
    ax.set_ylim(-3.4, 8 * ch + 1.3)
    save_readable(fig, "v6_swizzle")


if __name__ == "__main__":
    epilogue()
    swizzle()
