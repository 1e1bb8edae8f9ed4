"""Figures of the v5 chapter: one consumer's wgmma groups and stage releases with
wait_group 0 (v4) and wait_group 1 (v5), the same for v4's two consumers sharing the tensor
cores, and which stages of the ring each side holds, with the consumers in step and with one
of them a slice ahead.

The timelines come from a small model that replays the order of the consumer's K loop
(v4 and v5 matmul.cu, steps 6-9) with made-up durations; they show orderings, not measured
times.  The loads are assumed to have landed already (the producer is ahead).  The ring is
the release rule of the code (a stage goes back to the producer once every consumer has
released it), evaluated in holdings()."""
import os
import re

from matplotlib.patches import Rectangle
from matplotlib.text import Text

from common import COLORS, HERE, box, figure, save

TEXT = 10  # every label at least this size: the figures are shown at the page's width
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


def fitted_label(ax, x, y, w, h, candidates):
    """Writes the first of `candidates` that fits inside the box (x, y, w, h), or nothing.
    The axes' limits must already be final: the fit is measured in display units."""
    renderer = ax.figure.canvas.get_renderer()
    (x0, _), (x1, _) = ax.transData.transform([(x, y), (x + w, y)])
    for label in candidates:
        t = ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=TEXT)
        if t.get_window_extent(renderer).width <= 0.92 * (x1 - x0):
            return
        t.remove()

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
        width = (t1 - t0) * X
        box(ax, t0 * X, y, width, h, color=OP_COLOR[kind],
            alpha=alpha if kind != "wait" else 1.0)
        short = label.replace("wait_group", "wait").replace("issue ", "")
        fitted_label(ax, t0 * X, y, width, h, [label, short])


def draw_groups(ax, groups, y, h=0.42, color=None, prefix="group "):
    for g0, g1, kt in groups:
        box(ax, g0 * X, y, (g1 - g0) * X, h, f"{prefix}{kt}", color=color or COLORS["mma"],
            alpha=0.8, fontsize=TEXT)


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
        ax.text(t * X + 0.04, y + 0.02, f"empty[{s}]\n(slice {kt})", fontsize=TEXT,
                va="bottom", ha="left", color="#3d6b12")


def timeline():
    """One consumer warpgroup, alone on the tensor cores: v4 (wait_group 0) against v5."""
    fig, ax = figure(10.0, 5.6)
    panels = [("v4: wait_group 0 — the pipe drains after every slice", consumer_v4, 3.3),
              ("v5: wait_group 1 — the next slice is queued while a group runs", consumer_v5,
               0.0)]
    models = [(title, fn(0.0, 0.0), y0) for title, fn, y0 in panels]
    right = max(ops[-1][1] for _, (ops, _, _, _), _ in models)
    ax.set_xlim(-2.3, right * X + 0.2)
    ax.set_ylim(-0.95, 5.95)
    for title, (ops, groups, releases, _), y0 in models:
        ax.text(-2.2, y0 + 2.3, title, fontsize=TEXT + 1, ha="left", weight="bold")
        rows = [("consumer\n(instructions)", y0 + 1.25), ("tensor pipe\n(its groups)", y0 + 0.65),
                ("stage released\n(arrive on empty)", y0 + 0.05)]
        for label, y in rows:
            ax.text(-0.15, y + 0.21, label, ha="right", va="center", fontsize=TEXT)
        draw_ops(ax, ops, y0 + 1.25)
        draw_groups(ax, groups, y0 + 0.65)
        draw_idle(ax, groups, y0 + 0.65)
        draw_releases(ax, releases, y0 + 0.05)
        end = ops[-1][0]
        ax.annotate("", xy=(end * X, y0 + 1.85), xytext=(0, y0 + 1.85),
                    arrowprops=dict(arrowstyle="<->", color=COLORS["grey"], lw=0.8))
        ax.text(end * X / 2, y0 + 1.88, f"K loop of one tile ({K_TILES} slices)",
                ha="center", va="bottom", fontsize=TEXT, color="#555555")
    ax.text(-2.2, -0.4, "Hatched: tensor pipe idle.  Pink: fence, wgmma, commit_group "
            "(\"issue\").  A model that replays the consumer\nloop (steps 6–10) with "
            "illustrative durations; loads assumed ready.", fontsize=TEXT, ha="left",
            va="top", color="#555555")
    save_readable(fig, "v5_timeline")


def two_consumers():
    """v4's kernel as it really runs: two consumer warpgroups share the SM's tensor cores,
    and each one's drain is filled by the other's queued group."""
    fig, ax = figure(10.0, 3.0)
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
    for (_, a1, _, _), (b0, _, _, _) in zip(groups, groups[1:]):
        assert b0 <= a1 + 1e-9, "the shared pipe never idles once both consumers run"
    ax.set_xlim(-1.9, groups[-1][1] * X + 0.2)
    ax.set_ylim(-0.75, 2.35)
    for c in range(2):
        y = 1.3 - 0.6 * c
        ax.text(-0.15, y + 0.21, names[c], ha="right", va="center", fontsize=TEXT)
        for t0, t1, label, kind in ops[c]:
            box(ax, t0 * X, y, (t1 - t0) * X, 0.42,
                color=colors[c] if kind == "issue" else COLORS["light"],
                alpha=0.55 if kind == "issue" else 1.0)
            if kind == "wait":
                fitted_label(ax, t0 * X, y, (t1 - t0) * X, 0.42, [label, "wait 0"])
    ax.text(-0.15, 0.1 + 0.21, "tensor pipe\n(shared)", ha="right", va="center",
            fontsize=TEXT)
    for g0, g1, c, kt in groups:
        box(ax, g0 * X, 0.1, (g1 - g0) * X, 0.42, f"c{c + 1}: slice {kt}", color=colors[c],
            alpha=0.8, fontsize=TEXT)
    ax.text(-1.8, 2.0, "v4, two consumers: while one waits, the other's group keeps the "
            "pipe busy", fontsize=TEXT + 1, ha="left", weight="bold")
    ax.text(-1.8, -0.1, "Same model and durations as above.  The two consumers issue in "
            "turn, and once both run, wait_group 0\nleaves the shared pipe no gap.",
            fontsize=TEXT, ha="left", va="top", color="#555555")
    save_readable(fig, "v5_two_consumers")


def holdings(wait_depth, stages, j=4, drift=0):
    """At the moment consumer 1's slice j is the oldest group in flight, who holds each
    stage.  Consumer c (0 or 1) is drift·c slices further on: it has released every slice
    before its own oldest, j + drift·c, and holds that one and the wait_depth slices issued
    behind it.  A stage goes back to the producer only once both consumers have released it,
    and the producer may fill slice i once slice i - stages was released."""
    held = {}
    for c in range(2):
        oldest = j + drift * c
        for i in range(oldest, oldest + wait_depth + 1):
            held.setdefault(i, []).append(c)
    last_held = max(held)
    assert last_held - j < stages, "the consumers hold more slices than there are stages"
    owner = {}
    for i in range(j, j + stages):
        owner[i % stages] = (i, tuple(held[i]) if i in held else "producer")
    return [owner[s] for s in range(stages)]


def ring():
    """The ring at one moment: v4 with 4 stages; v5 with 4, its consumers in step and one
    a slice ahead of the other; v5 with 3."""
    fig, ax = figure(10.0, 5.2)
    rows = [("v4, 4 stages", "wait_group 0", 0, 4, 0),
            ("v5, 4 stages", "wait_group 1, consumers in step", 1, 4, 0),
            ("v5, 4 stages", "without the barrier: c2 a slice ahead", 1, 4, 1),
            ("v5, 3 stages", "wait_group 1, consumers in step", 1, 3, 0)]
    w, h = 2.05, 0.78
    for r, (label, how, depth, stages, drift) in enumerate(rows):
        y = 3.9 - r * 1.3
        ax.text(-0.2, y + h / 2 + 0.14, label, ha="right", va="center", fontsize=TEXT,
                weight="bold")
        ax.text(-0.2, y + h / 2 - 0.16, how, ha="right", va="center", fontsize=TEXT)
        j = 4
        ahead = 0
        for s, (i, who) in enumerate(holdings(depth, stages, j, drift)):
            d = "j" if i == j else f"j+{i - j}"
            if who == "producer":
                ahead += 1
                color, text = COLORS["tma"], f"slice {d}\nproducer's"
            elif len(who) == 2:
                color, text = COLORS["mma"], f"slice {d}\nheld by both"
            else:
                color, text = COLORS["c"], f"slice {d}\nheld by c{who[0] + 1} only"
            box(ax, s * w, y, w, h, text, color=color, alpha=0.45, fontsize=TEXT)
            ax.text(s * w + w / 2, y + h + 0.03, f"stage {s}", fontsize=TEXT, va="bottom",
                    ha="center", color="#555555")
        ax.text(4 * w + 0.25, y + h / 2, f"producer ahead:\n{ahead} "
                f"slice{'s' if ahead != 1 else ''}", va="center", fontsize=TEXT)
    ax.text(2 * w, -0.15, "Consumer 1 (c1) has released every slice before j; consumer 2 (c2) "
            "is level with it, or a slice further on.\nA stage returns to the producer once "
            "both have released it; the producer may fill slice i once slice i − STAGES has.",
            ha="center", va="top", fontsize=TEXT, color="#444444")
    ax.set_xlim(-3.9, 4 * w + 2.0)
    ax.set_ylim(-0.85, 4.95)
    save_readable(fig, "v5_ring")


if __name__ == "__main__":
    timeline()
    two_consumers()
    ring()
