"""Figures of the v2 chapter: the ring of stages, one stage's shared-memory layout, and a
timeline of loads and MMAs for v1 and v2.  The ring and the timeline replay the order of
events of the kernels' K loops (v1_wgmma/matmul.cu, v2_pipeline/matmul.cu) in Python."""
import heapq

from common import COLORS, box, figure, save

# v2_pipeline's configuration (section 2 of v2_pipeline/matmul.cu).
BM, BN, BK, K_ATOM, STAGES = 128, 256, 128, 64, 2


def slice_schedule(stages, k_tiles):
    """For every K slice j: (stage, parity, iteration that issues it or -1 for the prefill,
    iteration that reads it), following steps 4a, 4b and 5 of v2_pipeline's kernel."""
    issued = {}
    for j in range(min(stages - 1, k_tiles)):  # step 4a: the prefill
        issued[j] = -1
    for kt in range(k_tiles):  # step 4b: the refill at the top of iteration kt
        if kt + stages - 1 < k_tiles:
            issued[kt + stages - 1] = kt
    return [(j % stages, (j // stages) & 1, issued[j], j) for j in range(k_tiles)]


def ring_panel(ax, y0, stages, k_tiles, title):
    """One row per stage, one column per iteration (after a prefill column); a stage is
    either being filled by TMA (green) or read by the MMAs of the iteration (pink)."""
    w, h = 1.0, 0.55
    ax.text(-0.1, y0 + stages * h + 0.45, title, ha="left", va="bottom", fontsize=9)
    for col in range(k_tiles + 1):
        label = "prefill" if col == 0 else f"kt = {col - 1}"
        ax.text(col * w + w / 2, y0 + stages * h + 0.08, label, ha="center", va="bottom",
                fontsize=7.5)
    for s in range(stages):
        ax.text(-0.1, y0 + (stages - 1 - s) * h + h / 2, f"stage {s}", ha="right", va="center",
                fontsize=8)
    for stage, parity, issued, used in slice_schedule(stages, k_tiles):
        y = y0 + (stages - 1 - stage) * h
        x_issue = (issued + 1) * w  # the prefill is column 0, iteration kt is column kt + 1
        x_use = (used + 1) * w
        box(ax, x_issue, y, x_use - x_issue, h, f"TMA\nslice {used}", color=COLORS["tma"],
            alpha=0.35, fontsize=7.5)
        box(ax, x_use, y, w, h, f"read {used}\nparity {parity}", color=COLORS["mma"], alpha=0.35,
            fontsize=7.5)


def ring():
    """The ring for the chosen two stages and for the first attempt's four."""
    fig, ax = figure(9, 5.2)
    k_tiles = 8
    ring_panel(ax, 3.3, 2, k_tiles, "STAGES = 2, BK = 128 (chosen): one slice in flight while "
               "one is multiplied")
    ring_panel(ax, 0.0, 4, k_tiles, "STAGES = 4, BK = 64 (first attempt): three slices in "
               "flight")
    ax.text(4.5, -0.3, "At the top of iteration kt thread 0 issues slice kt+STAGES−1 into stage "
            "(kt−1) mod STAGES, the one iteration kt−1 has just read;\nthe MMAs of iteration kt "
            "wait on full[kt mod STAGES] for parity (kt / STAGES) & 1.", ha="center", va="top",
            fontsize=8)
    ax.set_xlim(-1.2, 9.2)
    ax.set_ylim(-1.0, 5.1)
    save(fig, "v2_ring")


def stage_layout():
    """Where the two stages of A and B lie in shared memory, and how one stage of A is
    split between the TMA boxes (along K) and the two warpgroups (along M)."""
    fig, ax = figure(9, 4.4)
    atom_a, atom_b = BM * K_ATOM * 2, BN * K_ATOM * 2  # bytes of one TMA box
    scale = 9.0 / (STAGES * (BM + BN) * BK * 2)  # the whole ring spans 9 units
    x, y = 0.0, 3.3
    ax.text(4.5, y + 0.75, f"shared memory: {STAGES} stages × (A {BM}×{BK} + B {BN}×{BK}) × 2 B = "
            f"{STAGES * (BM + BN) * BK * 2 // 1024} KiB, then {STAGES} barriers of 8 B",
            ha="center", fontsize=9)
    x_start = {}
    for operand, rows, atom in (("A", BM, atom_a), ("B", BN, atom_b)):
        x_start[operand] = x
        for s in range(STAGES):
            for j in range(BK // K_ATOM):
                color = COLORS["a"] if operand == "A" else COLORS["b"]
                box(ax, x, y, atom * scale, 0.5, f"s{s}\nbox {j}", color=color,
                    alpha=0.25 if s else 0.5, fontsize=7.5)
                x += atom * scale
        ax.text(x_start[operand] + (x - x_start[operand]) / 2, y - 0.08,
                f"{operand}: {STAGES} stages × {BK // K_ATOM} TMA boxes of [{rows}][64], "
                f"{atom // 1024} KiB each", ha="center", va="top", fontsize=7.5)
    ax.text(x + 0.05, y + 0.25, "full[0..1]", ha="left", va="center", fontsize=7.5)
    # Zoom: one stage of A, two boxes along K, two warpgroups along M, k16 steps of 32 B.
    x0, y0, cw, rh = 0.6, 0.2, 0.42, 1.1
    ax.text(x0 + 8 * cw / 2, y0 + 2 * rh + 0.2, "one stage of A: BK = 128 = two 64-wide "
            "swizzle atoms", ha="center", fontsize=8)
    for ks in range(BK // 16):
        j = ks // 4
        xx = x0 + ks * cw + j * 0.15
        for wg in range(2):
            box(ax, xx, y0 + (1 - wg) * rh, cw, rh, f"ks {ks}" if wg == 0 else "",
                color=COLORS["a"], alpha=0.5 if wg == 0 else 0.25, fontsize=7.5)
        ax.text(xx + cw / 2, y0 - 0.08, f"+{2 * (ks % 4)}", ha="center", va="top", fontsize=7.5)
    ax.text(x0 - 0.1, y0 + 1.5 * rh, "wg 0:\nrows 0–63", ha="right", va="center", fontsize=7.5)
    ax.text(x0 - 0.1, y0 + 0.5 * rh, "wg 1:\nrows 64–127\n(+8 KiB)", ha="right", va="center",
            fontsize=7.5)
    ax.text(x0 + 2 * cw, y0 - 0.42, "box 0: k 0–63", ha="center", va="top", fontsize=7.5)
    ax.text(x0 + 6 * cw + 0.15, y0 - 0.42, "box 1: k 64–127 (+16 KiB)", ha="center", va="top",
            fontsize=7.5)
    ax.text(5.2, y0 + rh, "descriptor of k16 step ks in stage s, warpgroup wg:\n"
            "desc_a + s·kStageA + (ks / 4)·(kAtomABytes >> 4)\n"
            "       + 2·(ks mod 4)     (units of 16 B)\n\n"
            "wg's rows start wg·64·128 B = 8 KiB into each box;\n"
            "B (256 rows) is read whole by both warpgroups.", ha="left", va="center",
            fontsize=8, family="monospace")
    ax.set_xlim(-0.6, 10.2)
    ax.set_ylim(-0.8, 4.3)
    save(fig, "v2_stage")


# Illustrative durations (not measured), in arbitrary time units: a TMA load from issue to
# barrier completion, the MMAs of one K slice, and the end-of-iteration drain
# (wait_group 0, then __syncthreads, then the next fence).  A v2 slice is 128×256×128, four
# times v1's 128×128×64.
LOAD, MMA_V1, DRAIN = 1.0, 0.4, 0.25
MMA_V2 = 4 * MMA_V1
T_END = 9.0


def simulate_v1(ctas, k_tiles):
    """v1: each CTA issues slice kt, waits for it, multiplies, drains, and only then issues
    slice kt+1.  The CTAs of an SM share its tensor cores, served in order of request."""
    lanes = {c: [] for c in range(ctas)}
    tc = []
    queue = [(LOAD, c, 0) for c in range(ctas)]  # (data ready, cta, kt); all issue at t = 0
    for c in range(ctas):
        lanes[c].append(("load", 0.0, LOAD, 0))
    heapq.heapify(queue)
    tc_free = 0.0
    while queue:
        ready, c, kt = heapq.heappop(queue)
        start = max(ready, tc_free)
        end = start + MMA_V1
        tc_free = end
        if start > ready:
            lanes[c].append(("queued", ready, start, kt))
        lanes[c].append(("mma", start, end, kt))
        lanes[c].append(("drain", end, end + DRAIN, kt))
        tc.append((start, end, c))
        if kt + 1 < k_tiles and end + DRAIN < T_END:
            t = end + DRAIN
            lanes[c].append(("load", t, t + LOAD, kt + 1))
            heapq.heappush(queue, (t + LOAD, c, kt + 1))
    return lanes, tc


def simulate_v2(k_tiles):
    """v2 (STAGES = 2): prefill slice 0; at the top of iteration kt issue slice kt+1, wait for
    slice kt, multiply, drain."""
    loads = {s: [] for s in range(STAGES)}
    ready = {}
    for j in range(min(STAGES - 1, k_tiles)):
        loads[j % STAGES].append((0.0, LOAD, j))
        ready[j] = LOAD
    tc, drains, t = [], [], 0.0
    for kt in range(k_tiles):
        if kt + STAGES - 1 < k_tiles:
            j = kt + STAGES - 1
            loads[j % STAGES].append((t, t + LOAD, j))
            ready[j] = t + LOAD
        start = max(t, ready[kt])
        tc.append((start, start + MMA_V2, kt))
        drains.append((start + MMA_V2, start + MMA_V2 + DRAIN))
        t = start + MMA_V2 + DRAIN
        if t > T_END:
            break
    return loads, tc, drains


def clip(x0, x1):
    return max(0.0, x0), min(T_END, x1)


def span(ax, y, x0, x1, h, text, color, alpha=0.45, hatch=None, fontsize=8):
    x0, x1 = clip(x0, x1)
    if x1 <= x0:
        return
    fits = x1 - x0 > 0.095 * len(text) + 0.1  # leave the label out where it would not fit
    box(ax, x0, y, x1 - x0, h, text if fits else "", color=color, alpha=alpha,
        fontsize=fontsize)
    if hatch:
        from matplotlib.patches import Rectangle
        ax.add_patch(Rectangle((x0, y), x1 - x0, h, fill=False, hatch=hatch, lw=0))


def timeline():
    """Top: v1, three CTAs per SM, each serialised load → MMA → drain; their MMAs share the
    tensor cores.  Bottom: v2, one CTA, slice kt+1 loading while slice kt is multiplied."""
    fig, ax = figure(10, 5.6)
    ax.set_aspect("auto")
    h, gap = 0.42, 0.12
    cta_colors = ["#e7298a", "#d95f02", "#7570b3"]
    lanes, tc = simulate_v1(3, 32)
    y = 5.0
    ax.text(0, y + 0.75, "v1: 128×128×64 per slice, one stage, three CTAs per SM", fontsize=9,
            ha="left")
    for c in range(3):
        ax.text(-0.1, y + h / 2, f"CTA {c}", ha="right", va="center", fontsize=8)
        for kind, x0, x1, kt in lanes[c]:
            if kind == "load":
                span(ax, y, x0, x1, h, f"TMA {kt}", COLORS["tma"], alpha=0.35)
            elif kind == "mma":
                span(ax, y, x0, x1, h, f"{kt}", cta_colors[c])
            elif kind == "queued":
                span(ax, y, x0, x1, h, "", "white")
            else:
                span(ax, y, x0, x1, h, "", COLORS["grey"], alpha=0.35, hatch="///")
        y -= h + gap
    ax.text(-0.1, y + h / 2, "tensor cores", ha="right", va="center", fontsize=8)
    box(ax, 0, y, T_END, h, color=COLORS["light"])
    for x0, x1, c in tc:
        span(ax, y, x0, x1, h, "", cta_colors[c])
    y_v1_tc = y

    loads, tc2, drains = simulate_v2(16)
    y -= 1.35
    ax.text(0, y + 0.75, "v2: 128×256×128 per slice, STAGES = 2, one CTA per SM (two "
            "warpgroups)", fontsize=9, ha="left")
    for s in range(STAGES):
        ax.text(-0.1, y + h / 2, f"TMA → stage {s}", ha="right", va="center", fontsize=8)
        for x0, x1, j in loads[s]:
            span(ax, y, x0, x1, h, f"slice {j}", COLORS["tma"], alpha=0.35)
        y -= h + gap
    ax.text(-0.1, y + h / 2, "tensor cores", ha="right", va="center", fontsize=8)
    box(ax, 0, y, T_END, h, color=COLORS["light"])
    for x0, x1, kt in tc2:
        span(ax, y, x0, x1, h, f"MMAs of slice {kt}", COLORS["mma"])
    for x0, x1 in drains:
        span(ax, y, x0, x1, h, "", COLORS["grey"], alpha=0.35, hatch="///")
    y_v2_tc = y

    # Legend.
    ly = y - 0.75
    items = [(COLORS["tma"], 0.35, None, "TMA load in flight (issue → barrier phase complete)"),
             (COLORS["mma"], 0.45, None, "wgmma of one K slice"),
             (COLORS["grey"], 0.35, "///", "drain: wait_group 0 + __syncthreads"),
             ("white", 1.0, None, "data ready, tensor cores busy with another CTA")]
    lx = 0.0
    for color, alpha, hatch, text in items[:2]:
        span(ax, ly, lx, lx + 0.35, 0.25, "", color, alpha=alpha, hatch=hatch)
        ax.text(lx + 0.45, ly + 0.125, text, va="center", fontsize=8)
        lx += 4.6
    ly -= 0.4
    lx = 0.0
    for color, alpha, hatch, text in items[2:]:
        span(ax, ly, lx, lx + 0.35, 0.25, "", color, alpha=alpha, hatch=hatch)
        ax.text(lx + 0.45, ly + 0.125, text, va="center", fontsize=8)
        lx += 4.6
    ax.text(T_END, y_v1_tc - 0.12, "three CTAs take turns: one's wait is another's math",
            ha="right", va="top", fontsize=8, style="italic")
    ax.text(T_END, y_v2_tc - 0.12, "loads hidden inside one CTA; nothing fills the drain",
            ha="right", va="top", fontsize=8, style="italic")
    ax.text(T_END, ly - 0.35, "time →  (durations illustrative, not measured)", ha="right",
            va="top", fontsize=8)
    ax.set_xlim(-1.5, T_END + 0.1)
    ax.set_ylim(ly - 0.6, 6.0)
    save(fig, "v2_timeline")


if __name__ == "__main__":
    ring()
    stage_layout()
    timeline()
