"""Figures of the v3 chapter: who waits on which barrier, the parities over the K loop, and a
timeline of the two consumer warpgroups sharing the tensor pipe.

The parities and the timeline come from a small event model of the kernel's protocol: an
mbarrier that behaves as the PTX ISA describes it (a phase completes when its arrivals and
its transaction bytes are all in; a parity wait returns once the latest phase of that
parity has completed, and a fresh barrier counts its phase "-1", parity 1, as complete),
driven by the loops of v3_warp_specialized/matmul.cu (and, for comparison, of
v2_pipeline/matmul.cu).  The barrier rules are the code's; the durations are assumptions
(see MODEL), so the timeline shows order, not measured time.
"""
import heapq

from common import COLORS, arrow, box, figure, save

# The kernel's configuration (v3_warp_specialized/matmul.cu, section 2).
BM, BN, BK, STAGES, CONSUMERS = 128, 256, 64, 4, 2
TILE_A_BYTES, TILE_B_BYTES = BM * BK * 2, BN * BK * 2
# v2_pipeline/matmul.cu's chosen configuration, for the comparison.
V2_BK, V2_STAGES = 128, 2

# Assumed durations, in units of one warpgroup's 64×256×64 slice of wgmma (four
# m64n256k16).  Not measured: chosen only to make the order of events readable.
MODEL = dict(
    wgmma=0.25,       # one m64n256k16 in the tensor pipe
    issue=0.02,       # between two wgmma issued by the same warpgroup
    wait_group=0.2,   # last wgmma of a group done -> wait_group returns, arrive
    restart=0.1,      # barrier seen complete -> fence -> first wgmma issued
    block_sync=0.1,   # v2 only: the __syncthreads that ends every iteration
    tma=2.5,          # TMA issued -> its bytes have landed
)


# -----------------------------------------------------------------------------------------
# The event model
# -----------------------------------------------------------------------------------------

class Sim:
    """Processes are generators that yield ("delay", dt), ("wait", barrier, parity) or
    ("wgmma", who); the last is answered with the time that wgmma leaves the pipe.  The
    tensor pipe runs wgmma one after another in the order they were issued."""

    def __init__(self):
        self.t, self.q, self.seq, self.pipe_free, self.pipe = 0.0, [], 0, 0.0, []

    def at(self, t, fn):
        heapq.heappush(self.q, (t, self.seq, fn))
        self.seq += 1

    def spawn(self, gen):
        self.at(self.t, lambda: self.step(gen, None))

    def step(self, gen, value):
        try:
            cmd = gen.send(value)
        except StopIteration:
            return
        if cmd[0] == "delay":
            self.at(self.t + cmd[1], lambda: self.step(gen, None))
        elif cmd[0] == "wait":
            bar, parity = cmd[1], cmd[2]
            if bar.ready(parity):
                self.at(self.t, lambda: self.step(gen, True))  # returned at once
            else:
                bar.waiters.append((parity, gen))
        elif cmd[0] == "wgmma":
            start = max(self.t, self.pipe_free)
            self.pipe_free = start + MODEL["wgmma"]
            self.pipe.append((start, self.pipe_free, cmd[1]))
            self.at(self.t, lambda end=self.pipe_free: self.step(gen, end))

    def run(self):
        while self.q:
            self.t, _, fn = heapq.heappop(self.q)
            fn()


class Barrier:
    """An mbarrier: `count` arrivals and the announced transaction bytes complete a phase."""

    def __init__(self, sim, count):
        self.sim, self.count, self.pending, self.tx = sim, count, count, 0
        self.completed, self.waiters, self.completion_times = 0, [], []

    def ready(self, parity):
        # The current phase has number `completed`; the latest phase with parity p has
        # completed iff the current phase's parity differs from p (PTX ISA, try_wait.parity).
        return (self.completed & 1) != parity

    def _check(self):
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count
            self.completion_times.append(self.sim.t)
            still = []
            for parity, gen in self.waiters:
                if self.ready(parity):
                    self.sim.at(self.sim.t, lambda g=gen: self.sim.step(g, False))
                else:
                    still.append((parity, gen))
            self.waiters = still

    def arrive(self):
        self.pending -= 1
        self._check()

    def arrive_expect_tx(self, nbytes):
        self.tx += nbytes
        self.arrive()

    def complete_tx(self, nbytes):
        self.tx -= nbytes
        self._check()


def tma_load(sim, bar, nbytes, log, slice_, stage):
    """One fill of a stage: the copies' bytes land on `bar` MODEL["tma"] later."""
    issued = sim.t
    bar.arrive_expect_tx(nbytes)

    def land():
        log.append(dict(slice=slice_, stage=stage, issued=issued, landed=sim.t))
        bar.complete_tx(nbytes)
    sim.at(sim.t + MODEL["tma"], land)


def model_v3(k_tiles):
    """v3's steps 2-8: one producer thread, CONSUMERS consumer warpgroups."""
    sim = Sim()
    full = [Barrier(sim, 1) for _ in range(STAGES)]
    empty = [Barrier(sim, 4 * CONSUMERS) for _ in range(STAGES)]
    loads, groups, producer_waits, consumer_waits = [], [], [], []

    def producer():
        for kt in range(k_tiles):
            s = kt % STAGES
            parity = ((kt // STAGES) & 1) ^ 1
            at_once = yield ("wait", empty[s], parity)
            producer_waits.append(dict(slice=kt, stage=s, parity=parity, at_once=at_once,
                                       completed=empty[s].completed))
            tma_load(sim, full[s], TILE_A_BYTES + TILE_B_BYTES, loads, kt, s)
            yield ("delay", MODEL["issue"])

    def consumer(c):
        for kt in range(k_tiles):
            s = kt % STAGES
            parity = (kt // STAGES) & 1
            yield ("wait", full[s], parity)
            consumer_waits.append(dict(slice=kt, stage=s, parity=parity, consumer=c))
            yield ("delay", MODEL["restart"])
            first = sim.t
            for _ in range(BK // 16):                   # 4 × m64n256k16
                done = yield ("wgmma", c)
                yield ("delay", MODEL["issue"])
            yield ("delay", max(0.0, done - sim.t) + MODEL["wait_group"])
            groups.append(dict(consumer=c, slice=kt, issued=first, done=done, released=sim.t))
            for _ in range(4):                          # lane 0 of each of the 4 warps
                empty[s].arrive()

    sim.spawn(producer())
    for c in range(CONSUMERS):
        sim.spawn(consumer(c))
    sim.run()
    release = {}
    for s in range(STAGES):  # phase j of empty[s] completes when slice s + j*STAGES is freed
        for j, t in enumerate(empty[s].completion_times):
            release[s + j * STAGES] = t
    return dict(loads=loads, groups=groups, pipe=sim.pipe, release=release,
                producer_waits=producer_waits, consumer_waits=consumer_waits)


def model_v2(k_tiles):
    """v2's steps 4-7: thread 0 (in warpgroup 0) loads, both warpgroups multiply, and a
    block barrier ends every iteration."""
    sim = Sim()
    full = [Barrier(sim, 1) for _ in range(V2_STAGES)]
    block = Barrier(sim, 2)  # __syncthreads, one arrival per warpgroup
    loads, groups, release = [], [], {}
    nbytes = (BM + BN) * V2_BK * 2

    def warpgroup(w):
        if w == 0:
            for sl in range(min(V2_STAGES - 1, k_tiles)):  # the prefill
                tma_load(sim, full[sl % V2_STAGES], nbytes, loads, sl, sl % V2_STAGES)
        for kt in range(k_tiles):
            s = kt % V2_STAGES
            nxt = kt + V2_STAGES - 1
            if w == 0 and nxt < k_tiles:
                tma_load(sim, full[nxt % V2_STAGES], nbytes, loads, nxt, nxt % V2_STAGES)
            yield ("wait", full[s], (kt // V2_STAGES) & 1)
            yield ("delay", MODEL["restart"])
            first = sim.t
            for _ in range(V2_BK // 16):                # 8 × m64n256k16
                done = yield ("wgmma", w)
                yield ("delay", MODEL["issue"])
            yield ("delay", max(0.0, done - sim.t) + MODEL["wait_group"])
            groups.append(dict(consumer=w, slice=kt, issued=first, done=done, released=sim.t))
            block.arrive()
            yield ("wait", block, kt & 1)
            release[kt] = sim.t
            yield ("delay", MODEL["block_sync"])

    for w in range(2):
        sim.spawn(warpgroup(w))
    sim.run()
    return dict(loads=loads, groups=groups, pipe=sim.pipe, release=release)


# -----------------------------------------------------------------------------------------
# Figure 1: the roles and the barriers
# -----------------------------------------------------------------------------------------

def roles():
    """Producer, ring, consumers; every arrow is an arrival or a wait, with its parity."""
    fig, ax = figure(10.45, 5.6)
    # The producer.
    pw = 3.1
    box(ax, 0, 0.5, pw, 3.4, color=COLORS["tma"], alpha=0.18)
    ax.text(pw / 2, 3.8, "warpgroup 0: producer", ha="center", va="top", fontsize=9,
            weight="bold")
    ax.text(pw / 2, 3.45, "setmaxnreg.dec → 40\nregisters; warps 1–3 and\n"
            "31 lanes of warp 0 return;\nthe lane elect.sync\nchooses runs the loop:", ha="center",
            va="top", fontsize=8)
    ax.text(0.12, 2.15, "for kt = 0, 1, …:\n  s = kt mod 4\n  wait empty[s]\n"
            "  arrive.expect_tx full[s]\n  TMA A box, TMA B box", ha="left", va="top",
            fontsize=8, family="monospace")

    # The ring: four stages, each with its two barriers.
    x0, w = 5.0, 1.0
    ring_l, ring_r = x0, x0 + STAGES * w - 0.08
    ax.text((ring_l + ring_r) / 2, 4.5, "shared memory: 4 stages × 48 KiB\n(stage s holds "
            "slice kt when kt mod 4 = s)", ha="center", va="bottom", fontsize=8)
    for s in range(STAGES):
        x = x0 + s * w
        box(ax, x, 3.35, w - 0.08, 0.8, "A\n128×64", color=COLORS["a"], alpha=0.3, fontsize=8)
        box(ax, x, 1.95, w - 0.08, 1.3, "B\n256×64", color=COLORS["b"], alpha=0.3, fontsize=8)
        ax.text(x + (w - 0.08) / 2, 4.2, f"stage {s}", ha="center", va="bottom", fontsize=8)
        box(ax, x, 1.3, w - 0.08, 0.45, f"full[{s}]", color=COLORS["smem"], alpha=0.5,
            fontsize=8)
        box(ax, x, 0.55, w - 0.08, 0.45, f"empty[{s}]", color=COLORS["grey"], alpha=0.35,
            fontsize=8)
    ax.text((ring_l + ring_r) / 2, 0.45, "full[s]: 1 arrival + 49152 B\nempty[s]: 8 arrivals",
            ha="center", va="top", fontsize=8)

    # The consumers.
    cx, cw = ring_r + 1.55, 2.55
    for c, (y, rows) in enumerate([(2.3, "0–63"), (0.45, "64–127")]):
        box(ax, cx, y, cw, 1.65, color=COLORS["a"] if c == 0 else COLORS["b"], alpha=0.18)
        ax.text(cx + cw / 2, y + 1.57, f"warpgroup {c + 1}: consumer", ha="center", va="top",
                fontsize=8, weight="bold")
        ax.text(cx + cw / 2, y + 1.3, f"setmaxnreg.inc → 232\nregisters; rows {rows}\n"
                "of the tile: a 64×256\naccumulator, 128 fp32\nper thread", ha="center",
                va="top", fontsize=8)
    ax.text(cx + cw / 2, 0.35, "each, for kt = 0, 1, …:\nwait full[s], 4 wgmma,\n"
            "commit, wait_group 0,\narrive on empty[s]", ha="center", va="top", fontsize=8)

    # Arrows: producer side.
    arrow(ax, pw, 3.0, ring_l, 3.0, "TMA writes stage s;\nits bytes count\non full[s]",
          color=COLORS["tma"], fontsize=8, offset=(0, 0.05))
    arrow(ax, pw, 1.52, ring_l, 1.52, "arrive.expect_tx:\n1 arrival, 49152 B",
          color="black", fontsize=8, offset=(0, 0.05))
    arrow(ax, ring_l, 0.77, pw, 0.77, "", color="black")
    ax.text((pw + ring_l) / 2, 0.68, "wait parity\n((kt/4) & 1) ^ 1\n(first pass:\n"
            "returns at once)", ha="center", va="top", fontsize=8)
    # Consumer side.
    arrow(ax, ring_r + 0.05, 3.0, cx, 3.0, "wgmma read\ntheir 64 rows\nof A, all of B",
          color=COLORS["mma"], fontsize=8, offset=(0, 0.05))
    arrow(ax, ring_r + 0.05, 1.52, cx, 1.52, "", color="black")
    ax.text((ring_r + cx) / 2, 1.6, "wait parity\n(kt/4) & 1", ha="center", va="bottom",
            fontsize=8)
    arrow(ax, cx, 0.77, ring_r + 0.05, 0.77, "", color="black")
    ax.text((ring_r + cx) / 2, 0.68, "arrive: lane 0\nof each warp", ha="center", va="top",
            fontsize=8)
    ax.set_xlim(-0.1, cx + cw + 0.1)
    ax.set_ylim(-0.65, 5.0)
    save(fig, "v3_roles")


# -----------------------------------------------------------------------------------------
# Figure 2: the parities over the K loop
# -----------------------------------------------------------------------------------------

def phases():
    """For slices 0-11: the stage, the parity each side waits on, and what that wait is for.
    Every cell is read from the event model's record of the waits, not typed in."""
    k_tiles = 12
    m = model_v3(k_tiles)
    prod = {w["slice"]: w for w in m["producer_waits"]}
    cons = {w["slice"]: w for w in m["consumer_waits"]}
    for kt, w in prod.items():  # the wait for slice kt returned after exactly kt/4 releases
        assert w["completed"] == kt // STAGES and (kt >= STAGES or w["at_once"]), w
    columns = [  # (header, cell text, cell colour)
        ("K slice\nkt", lambda kt: str(kt), lambda kt: "white"),
        ("stage s =\nkt mod 4", lambda kt: str(prod[kt]["stage"]), lambda kt: "white"),
        ("fill of\nstage s\n(kt / 4)", lambda kt: str(kt // STAGES), lambda kt: "white"),
        ("producer:\nwait empty[s],\nparity\n((kt/4) & 1) ^ 1",
         lambda kt: str(prod[kt]["parity"]),
         lambda kt: COLORS["smem"] if prod[kt]["parity"] else "white"),
        ("that phase is …",
         lambda kt: ("fresh: returns at once" if prod[kt]["at_once"] and prod[kt]["completed"] == 0
                     else f"slice {kt - STAGES} released"),
         lambda kt: COLORS["tma"] if prod[kt]["completed"] == 0 else "white"),
        ("consumers:\nwait full[s],\nparity\n(kt/4) & 1", lambda kt: str(cons[kt]["parity"]),
         lambda kt: COLORS["smem"] if cons[kt]["parity"] else "white"),
        ("that phase is …", lambda kt: f"slice {kt} landed", lambda kt: "white"),
    ]
    # One row per K slice, one column per fact.
    cws = [0.85, 1.0, 0.9, 1.5, 2.15, 1.2, 1.55]
    rh, hh = 0.3, 0.95  # row height, header height
    fig, ax = figure(8.0, 5.6)
    x = 0.0
    for (header, text, color), cw in zip(columns, cws):
        ax.text(x + cw / 2, k_tiles * rh + 0.08, header, ha="center", va="bottom", fontsize=8,
                weight="bold" if header.startswith("K slice") else "normal")
        for kt in range(k_tiles):
            c = color(kt)
            box(ax, x, (k_tiles - 1 - kt) * rh, cw, rh, text(kt), color=c,
                alpha=0.45 if c not in ("white",) else 1.0, fontsize=8)
        x += cw
    for p in range(1, k_tiles // STAGES):  # pass boundaries
        y = (k_tiles - p * STAGES) * rh
        ax.plot([-0.05, x + 0.05], [y, y], color="black", lw=2)
    ax.set_xlim(-0.1, x + 0.1)
    ax.set_ylim(-0.1, k_tiles * rh + hh)
    save(fig, "v3_phases")


# -----------------------------------------------------------------------------------------
# Figure 3: the timeline
# -----------------------------------------------------------------------------------------

def timeline():
    """v2 and v3 on the same K (512): stages, warpgroups and the tensor pipe over time."""
    k = 512
    v2, v3 = model_v2(k // V2_BK), model_v3(k // BK)
    end = max(max(e for _, e, _ in v2["pipe"]), max(e for _, e, _ in v3["pipe"])) + 0.6
    xs, rh = 0.48, 0.34
    wg_color = [COLORS["a"], COLORS["b"]]

    def panel(y_top, title, m, stages, names):
        ax.text(0, y_top + 0.12, title, ha="left", va="bottom", fontsize=9.5, weight="bold")
        labels = [f"stage {s}" for s in range(stages)] + names + ["tensor pipe"]
        for i, lab in enumerate(labels):
            y = y_top - (i + 1) * rh
            ax.text(-0.1, y + rh * 0.45, lab, ha="right", va="center", fontsize=8.5)
            ax.plot([0, end * xs], [y, y], color=COLORS["light"], lw=0.5)
        # Stages: loading (issue -> landed), then holding the slice until it is released.
        for ld in m["loads"]:
            y = y_top - (ld["stage"] + 1) * rh + 0.04
            box(ax, ld["issued"] * xs, y, (ld["landed"] - ld["issued"]) * xs, rh - 0.08,
                color=COLORS["tma"], alpha=0.25, lw=0.5)
            rel = m["release"][ld["slice"]]
            box(ax, ld["landed"] * xs, y, (rel - ld["landed"]) * xs, rh - 0.08,
                str(ld["slice"]), color=COLORS["smem"], alpha=0.6, lw=0.5, fontsize=8.5)
        # Warpgroups: from the group's first issue to wait_group's return.
        for g in m["groups"]:
            y = y_top - (stages + g["consumer"] + 1) * rh + 0.04
            box(ax, g["issued"] * xs, y, (g["done"] - g["issued"]) * xs, rh - 0.08,
                str(g["slice"]), color=wg_color[g["consumer"]], alpha=0.35, lw=0.5, fontsize=8.5)
            box(ax, g["done"] * xs, y, (g["released"] - g["done"]) * xs, rh - 0.08,
                color="black", alpha=0.7, lw=0.5)
        # The pipe: which warpgroup's wgmma runs; grey where nothing runs.
        y = y_top - (stages + len(names) + 1) * rh + 0.04
        first = min(s for s, _, _ in m["pipe"])
        last = max(e for _, e, _ in m["pipe"])
        box(ax, first * xs, y, (last - first) * xs, rh - 0.08, color=COLORS["grey"], alpha=0.35,
            lw=0)
        merged = []
        for s, e, who in sorted(m["pipe"]):
            if merged and merged[-1][2] == who and abs(merged[-1][1] - s) < 1e-9:
                merged[-1][1] = e
            else:
                merged.append([s, e, who])
        for s, e, who in merged:
            box(ax, s * xs, y, (e - s) * xs, rh - 0.08, color=wg_color[who], alpha=0.8, lw=0)
        return y

    n_rows = (V2_STAGES + 3) + (STAGES + 3)
    fig, ax = figure(end * xs + 1.6, n_rows * rh + 2.2)
    y2 = panel(n_rows * rh + 1.1, "v2: every warp loads and multiplies; a block barrier ends "
               "each 128-wide slice", v2, V2_STAGES, ["warpgroup 0", "warpgroup 1"])
    y3 = panel(y2 - 0.55, "v3: a producer thread and two consumer warpgroups; 64-wide slices",
               v3, STAGES, ["warpgroup 1", "warpgroup 2"])
    # Time axis.
    ax.plot([0, end * xs], [y3 - 0.12, y3 - 0.12], color="black", lw=0.8)
    for t in range(0, int(end) + 1, 2):
        ax.plot([t * xs, t * xs], [y3 - 0.12, y3 - 0.2], color="black", lw=0.8)
        ax.text(t * xs, y3 - 0.25, str(t), ha="center", va="top", fontsize=8.5)
    ax.text(end * xs / 2, y3 - 0.5, "time, in units of one warpgroup's 64×256×64 of wgmma "
            "(assumed durations: a model, not a measurement)", ha="center", va="top",
            fontsize=8.5)
    # Legend, three rows of two.
    ly = y3 - 0.95
    items = [(COLORS["tma"], 0.25, "TMA in flight"),
             (COLORS["a"], 0.35, "v2 warpgroup 0, v3 warpgroup 1: wgmma issued → done"),
             (COLORS["smem"], 0.6, "stage holds slice n until released"),
             (COLORS["b"], 0.35, "v2 warpgroup 1, v3 warpgroup 2: wgmma issued → done"),
             (COLORS["grey"], 0.35, "tensor pipe idle"),
             ("black", 0.7, "drain: wait_group, arrive (v2: and __syncthreads)")]
    for i, (color, alpha, text) in enumerate(items):
        x, y = (i % 2) * end * xs * 0.44, ly - (i // 2) * 0.28
        box(ax, x, y, 0.3, 0.18, color=color, alpha=alpha, lw=0.5)
        ax.text(x + 0.38, y + 0.09, text, ha="left", va="center", fontsize=8.5)
    ly -= 0.56
    ax.set_xlim(-1.5, end * xs + 0.1)
    ax.set_ylim(ly - 0.1, n_rows * rh + 1.5)
    save(fig, "v3_timeline")


if __name__ == "__main__":
    roles()
    phases()
    timeline()
