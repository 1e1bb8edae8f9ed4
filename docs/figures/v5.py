"""Figures of the v5 chapter: one consumer's wgmma groups and stage releases with
wait_group 0 (v4) and wait_group 1 (v5), the same for v4's two consumers sharing the tensor
cores, which stages of the ring each side holds, and how a cluster of two CTAs shares B.

The timelines come from a small model that replays the order of the consumer's K loop
(v4 and v5 matmul.cu, steps 6-9) with made-up durations; they show orderings, not measured
times.  The loads are assumed to have landed already (the producer is ahead)."""
from matplotlib.patches import Rectangle

from common import COLORS, arrow, box, figure, save

# Model durations, in units of one K slice's wgmma group on the tensor cores.
GROUP = 1.0     # one slice: four m64n256k16 wgmma of one consumer
ISSUE = 0.22    # fence + four wgmma + commit_group
LATENCY = 0.12  # from the end of the issue to the group's start on an idle tensor pipe
ARRIVE = 0.06   # lane 0 of each warp: mbarrier.arrive on empty[s]
EPILOGUE = 1.3  # convert and store the accumulators
K_TILES = 4     # K slices per tile in the picture
STAGES = 4


def consumer_v4(start, pipe_free, k_tiles=K_TILES):
    """v4's loop: issue slice kt, wait_group 0, release stage kt.  Returns the consumer's
    spans, the groups' spans on the tensor pipe, the releases and when the pipe is free."""
    ops, groups, releases = [], [], []
    t = start
    for kt in range(k_tiles):
        ops.append((t, t + ISSUE, f"issue {kt}", "issue"))
        g0 = max(t + ISSUE + LATENCY, pipe_free)
        groups.append((g0, g0 + GROUP, kt))
        pipe_free = g0 + GROUP
        ops.append((t + ISSUE, pipe_free, "wait_group 0", "wait"))
        releases.append((pipe_free, kt % STAGES, kt))
        t = pipe_free + ARRIVE
    ops.append((t, t + EPILOGUE, "epilogue", "epilogue"))
    return ops, groups, releases, pipe_free


def consumer_v5(start, pipe_free, k_tiles=K_TILES):
    """v5's loop: issue slice kt, wait_group 1 (slice kt-1's group retires), release stage
    kt-1; after the loop one wait_group 0 and the last stage's release."""
    ops, groups, releases = [], [], []
    t, done = start, []
    for kt in range(k_tiles):
        ops.append((t, t + ISSUE, f"issue {kt}", "issue"))
        g0 = max(t + ISSUE + LATENCY, pipe_free)
        groups.append((g0, g0 + GROUP, kt))
        pipe_free = g0 + GROUP
        done.append(pipe_free)
        t += ISSUE
        if kt > 0:  # at most one group left in flight: slice kt-1's must have retired
            ops.append((t, max(t, done[kt - 1]), "wait_group 1", "wait"))
            t = max(t, done[kt - 1])
            releases.append((t, (kt - 1) % STAGES, kt - 1))
            t += ARRIVE
    ops.append((t, done[-1], "wait_group 0", "wait"))
    releases.append((done[-1], (k_tiles - 1) % STAGES, k_tiles - 1))
    t = done[-1] + ARRIVE
    ops.append((t, t + EPILOGUE, "epilogue", "epilogue"))
    return ops, groups, releases, pipe_free


OP_COLOR = {"issue": COLORS["mma"], "wait": COLORS["light"], "epilogue": COLORS["c"]}
X = 1.6  # horizontal scale: figure units per model time unit


def draw_ops(ax, ops, y, h=0.42, alpha=0.55):
    for t0, t1, label, kind in ops:
        if t1 - t0 < 1e-9:
            continue
        text = label if (t1 - t0) * X > 0.55 else ""
        box(ax, t0 * X, y, (t1 - t0) * X, h, text, color=OP_COLOR[kind],
            alpha=alpha if kind != "wait" else 1.0, fontsize=7)


def draw_groups(ax, groups, y, h=0.42, color=None, prefix="group "):
    for g0, g1, kt in groups:
        box(ax, g0 * X, y, (g1 - g0) * X, h, f"{prefix}{kt}", color=color or COLORS["mma"],
            alpha=0.8, fontsize=7)


def draw_idle(ax, groups, y, h=0.42):
    """Hatch the gaps between consecutive groups: the tensor pipe has nothing to do."""
    for (_, a1, _), (b0, _, _) in zip(groups, groups[1:]):
        if b0 - a1 > 1e-9:
            ax.add_patch(Rectangle((a1 * X, y), (b0 - a1) * X, h, facecolor="none",
                                   edgecolor=COLORS["grey"], hatch="////", lw=0.5))


def draw_releases(ax, releases, y):
    for t, s, kt in releases:
        ax.plot([t * X, t * X], [y, y + 0.42], color=COLORS["tma"], lw=1.5)
        ax.plot([t * X], [y + 0.42], marker="v", color=COLORS["tma"], ms=5)
        ax.text(t * X + 0.04, y + 0.05, f"empty[{s}]\n(slice {kt})", fontsize=6.5,
                va="bottom", ha="left", color="#3d6b12")


def timeline():
    """One consumer warpgroup, alone on the tensor cores: v4 (wait_group 0) against v5."""
    fig, ax = figure(11, 4.9)
    panels = [("v4: wait_group 0 — the pipe drains after every slice", consumer_v4, 3.1),
              ("v5: wait_group 1 — slice kt+1 is issued while slice kt's group runs; the "
               "consumer holds both stages", consumer_v5, 0.0)]
    right = 0.0
    for title, fn, y0 in panels:
        ops, groups, releases, _ = fn(0.0, 0.0)
        ax.text(-0.1, y0 + 2.05, title, fontsize=9, ha="left", weight="bold")
        rows = [("consumer\n(instructions)", y0 + 1.25), ("tensor pipe\n(its groups)", y0 + 0.65),
                ("stage released\n(arrive on empty)", y0 + 0.05)]
        for label, y in rows:
            ax.text(-0.15, y + 0.21, label, ha="right", va="center", fontsize=7.5)
        draw_ops(ax, ops, y0 + 1.25)
        draw_groups(ax, groups, y0 + 0.65)
        draw_idle(ax, groups, y0 + 0.65)
        draw_releases(ax, releases, y0 + 0.05)
        end = ops[-1][0]
        ax.annotate("", xy=(end * X, y0 + 1.85), xytext=(0, y0 + 1.85),
                    arrowprops=dict(arrowstyle="<->", color=COLORS["grey"], lw=0.8))
        ax.text(end * X / 2, y0 + 1.88, f"K loop of one tile ({K_TILES} slices)",
                ha="center", va="bottom", fontsize=7, color="#555555")
        right = max(right, ops[-1][1])
    ax.text(0.0, -0.35, "hatched: tensor pipe idle.  A model that replays the consumer loop "
            "(steps 6–9) with illustrative durations; loads assumed ready.", fontsize=7,
            ha="left", va="top", color="#555555")
    ax.set_xlim(-1.6, right * X + 0.2)
    ax.set_ylim(-0.7, 5.3)
    save(fig, "v5_timeline")


def two_consumers():
    """v4's kernel as it really runs: two consumer warpgroups share the SM's tensor cores,
    and each one's drain is filled by the other's queued group."""
    fig, ax = figure(11, 2.7)
    names = ["consumer 1", "consumer 2"]
    colors = [COLORS["mma"], COLORS["b"]]
    ready = [0.0, 0.12]  # consumer 2 reaches the loop a little later
    issued = [0, 0]
    pipe_free = 0.0
    ops = [[], []]
    groups = []
    while min(issued) < K_TILES:
        c = min((i for i in range(2) if issued[i] < K_TILES), key=lambda i: ready[i])
        t = ready[c]
        ops[c].append((t, t + ISSUE, f"issue {issued[c]}", "issue"))
        g0 = max(t + ISSUE + LATENCY, pipe_free)
        pipe_free = g0 + GROUP
        groups.append((g0, pipe_free, c, issued[c]))
        ops[c].append((t + ISSUE, pipe_free, "wait_group 0", "wait"))
        ready[c] = pipe_free + ARRIVE
        issued[c] += 1
    for c in range(2):
        y = 1.3 - 0.6 * c
        ax.text(-0.15, y + 0.21, names[c], ha="right", va="center", fontsize=7.5)
        for t0, t1, label, kind in ops[c]:
            text = label if (t1 - t0) * X > 0.55 else ""
            box(ax, t0 * X, y, (t1 - t0) * X, 0.42, text,
                color=colors[c] if kind == "issue" else COLORS["light"],
                alpha=0.55 if kind == "issue" else 1.0, fontsize=7)
    ax.text(-0.15, 0.1 + 0.21, "tensor pipe\n(shared)", ha="right", va="center", fontsize=7.5)
    for g0, g1, c, kt in groups:
        box(ax, g0 * X, 0.1, (g1 - g0) * X, 0.42, f"c{c + 1}: slice {kt}", color=colors[c],
            alpha=0.8, fontsize=7)
    ax.text(-0.1, 2.0, "v4 with its two consumers: while one waits for its group and issues "
            "the next, the other's group keeps the pipe busy", fontsize=9, ha="left",
            weight="bold")
    ax.text(0.0, -0.15, "Same model and durations as above: in it the two consumers issue in "
            "turn, and wait_group 0 leaves the shared pipe no gap once both are running.",
            fontsize=7, ha="left", va="top", color="#555555")
    ax.set_xlim(-1.6, groups[-1][1] * X + 0.2)
    ax.set_ylim(-0.45, 2.3)
    save(fig, "v5_two_consumers")


def holdings(wait_depth, stages, j=4):
    """At the moment slice j's group runs, who holds each stage.  The consumers have
    released every slice before j (their groups retired); they hold slice j and the
    wait_depth slices issued behind it; the producer may fill slice i once slice
    i - stages was released, i.e. every slice up to j - 1 + stages."""
    owner = {}
    for i in range(j, j + wait_depth + 1):
        owner[i % stages] = (i, "running" if i == j else "queued")
    for i in range(j + wait_depth + 1, j + stages):
        owner[i % stages] = (i, "producer")
    return [owner[s] for s in range(stages)]


def ring():
    """The ring at one moment: v4 with 4 stages, v5 with 4 and with 3."""
    fig, ax = figure(9.5, 3.2)
    rows = [("v4, 4 stages (wait_group 0)", 0, 4), ("v5, 4 stages (wait_group 1)", 1, 4),
            ("v5, 3 stages (measured 0.970× v4)", 1, 3)]
    style = {"running": (COLORS["mma"], "slice j+{d}\nMMA running"),
             "queued": (COLORS["c"], "slice j+{d}\nissued, queued"),
             "producer": (COLORS["tma"], "slice j+{d}\nloaded / loading")}
    w, h = 1.6, 0.7
    for r, (label, depth, stages) in enumerate(rows):
        y = 2.1 - r * 0.95
        ax.text(-0.15, y + h / 2, label, ha="right", va="center", fontsize=8)
        j = 4
        ahead = 0
        for s, (i, kind) in enumerate(holdings(depth, stages, j)):
            color, text = style[kind]
            ahead += kind == "producer"
            box(ax, s * w, y, w, h, text.format(d=i - j).replace("j+0", "j"), color=color,
                alpha=0.45, fontsize=7)
            ax.text(s * w + w / 2, y + h + 0.02, f"stage {s}", fontsize=6, va="bottom", ha="center",
                    color="#555555")
        ax.text(4 * w + 0.2, y + h / 2, f"producer ahead of\nthe consumers: {ahead} "
                f"slice{'s' if ahead != 1 else ''}", va="center", fontsize=8)
    ax.text(2 * w, -0.05, "pink, orange: held by the consumers; green: the producer's.\n"
            "j = 4 here, so slice j sits in stage j mod STAGES; the producer may "
            "fill slice i once slice i − STAGES has been released.", ha="center", va="top",
            fontsize=7, color="#555555")
    ax.set_xlim(-3.0, 9.0)
    ax.set_ylim(-0.6, 2.9)
    save(fig, "v5_ring")


def cluster():
    """One K slice of one cluster tile: what each CTA of the pair loads and where it lands
    (the producer's loop, step 3 of v5's matmul.cu), and who releases the stage (the
    consumers' release())."""
    fig, ax = figure(9.0, 4.2)
    # Global memory: the two CTAs' rows of A, and the 256 rows of B both need, in halves.
    ax.text(0.8, 3.85, "global memory (via L2)", ha="center", fontsize=8)
    box(ax, 0, 2.7, 1.6, 0.7, "B rows n·256 …\n+127", color=COLORS["b"], alpha=0.35, fontsize=7)
    box(ax, 0, 2.0, 1.6, 0.7, "B rows n·256+128 …\n+255", color=COLORS["b"], alpha=0.6,
        fontsize=7)
    box(ax, 0, 0.9, 1.6, 0.7, "A rows of tile\nrow 2c", color=COLORS["a"], alpha=0.35, fontsize=7)
    box(ax, 0, 0.0, 1.6, 0.7, "A rows of tile\nrow 2c+1", color=COLORS["a"], alpha=0.6,
        fontsize=7)
    # The two CTAs of the cluster, one stage of each: [A | B rows 0-127 | B rows 128-255].
    w, h = 1.3, 0.7
    ctas = {0: 2.55, 1: 0.35}
    for rank, y in ctas.items():
        box(ax, 4.0 - 0.15, y - (0.25 if rank == 0 else 0.4), 3 * w + 0.3, h + 0.65,
            color=COLORS["light"], edge="#777777")
        ax.text(4.0 - 0.05, y + h + 0.12 if rank == 0 else y - 0.12,
                f"CTA rank {rank}: one stage of its shared memory", fontsize=7,
                va="bottom" if rank == 0 else "top")
        box(ax, 4.0, y, w, h, f"A (own load)\n16 KiB", color=COLORS["a"],
            alpha=0.35 if rank == 0 else 0.6, fontsize=7)
        box(ax, 4.0 + w, y, w, h, "B, first half\n16 KiB", color=COLORS["b"], alpha=0.35,
            fontsize=7)
        box(ax, 4.0 + 2 * w, y, w, h, "B, second half\n16 KiB", color=COLORS["b"], alpha=0.6,
            fontsize=7)
    # Loads: A to its own CTA; each B half multicast by one CTA into both.
    arrow(ax, 1.6, 1.25, 4.0, ctas[0] + 0.2, color=COLORS["a"])
    arrow(ax, 1.6, 0.35, 4.0, ctas[1] + 0.35, color=COLORS["a"])
    arrow(ax, 1.6, 3.05, 4.0 + 1.5 * w, ctas[0] + h, color=COLORS["b"])
    arrow(ax, 1.6, 3.05, 4.0 + 1.5 * w, ctas[1] + h, color=COLORS["b"])
    arrow(ax, 1.6, 2.35, 4.0 + 2.5 * w, ctas[0] + h, color="#4b4594")
    arrow(ax, 1.6, 2.35, 4.0 + 2.5 * w, ctas[1] + h, color="#4b4594")
    ax.text(2.35, 3.3, "loaded by rank 0,\nmulticast to both", fontsize=7, color=COLORS["b"],
            ha="center")
    ax.text(2.5, 1.75, "loaded by rank 1,\nmulticast to both", fontsize=7, color="#4b4594",
            ha="center")
    # Release: every consumer warp arrives on empty[s] in both CTAs.
    x = 4.0 + 3 * w + 0.35
    ax.annotate("", xy=(x, ctas[1] + h), xytext=(x, ctas[0]),
                arrowprops=dict(arrowstyle="<|-|>", color=COLORS["mma"], lw=1.2, ls="--"))
    ax.text(x + 0.12, (ctas[0] + ctas[1] + h) / 2,
            "empty[s] of both CTAs:\n8 consumer warps of each\narrive on it (16 arrivals)\n"
            "before either producer\nrefills stage s", fontsize=7, va="center",
            color=COLORS["mma"])
    ax.text(4.5, -0.6, "full[s] of each CTA expects 48 KiB: its own A, its own half of B and "
            "its partner's.  Per slice a CTA pulls 32 KiB from L2 instead of 48.", ha="center",
            fontsize=7, color="#555555")
    ax.set_xlim(-0.1, 9.9)
    ax.set_ylim(-0.85, 4.0)
    save(fig, "v5_cluster")


if __name__ == "__main__":
    timeline()
    two_consumers()
    ring()
    cluster()
