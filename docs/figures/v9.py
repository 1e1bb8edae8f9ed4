"""Figure of the v9 chapter: the tensor cores, the two consumer warpgroups and their turns
over the same work, cooperative (v8: both warpgroups on each 128 × 256 tile, then both
store it) and ping-pong (v9: each warpgroup takes 128 × 192 tiles of its own, and one
stores while the other's MMAs run).

The timeline comes from a small model of the order the kernels impose (v8's steps 6-13, v9's
steps P4-P6), with made-up durations in units of one warpgroup's MMAs for a K slice of v8's tile
(64 × 256 × 64; a slice of a 128 × 192 tile is 1.5 units): it shows orderings, not measured
times.  The loads are assumed to have
landed already.  The turn barriers are named barriers of 256 threads: bar.sync by the
warpgroup whose turn it is, bar.arrive by the other; warpgroup 1 gives warpgroup 0 the first
turn.  Each turn is labelled with its barrier and the parity of the warpgroup's wait on its
tile slot's mbarrier (tile_full[w]) for that tile."""
from common import COLORS, box, figure, save

TEXT = 10
K_TILES = 4      # K slices per tile: short K, where the epilogue weighs
EPILOGUE = 2.0   # store a 64 × 256 half of v8's tile; a 128 × 192 tile is 1.5 times that
SLICE = 1.5      # one K slice of a 128 × 192 tile, in units of a 64 × 256 half's
TILES = 4        # ping-pong tiles of 128 × 192 (three cooperative tiles of 128 × 256)


def cooperative():
    """v8: per 128 × 256 tile both warpgroups issue K slices of 64 × 256 (one unit each, the
    pipe runs them one after the other), wait for the last, and both store."""
    pipe, wgs, t = [], {0: [], 1: []}, 0.0
    for tile in range(TILES * 3 // 4):
        start = t
        for kt in range(K_TILES):
            for w in (0, 1):
                pipe.append((t, 1.0, f"T{tile}", w))
                t += 1.0
        for w in (0, 1):
            wgs[w].append((start, t - start, f"MMA T{tile}", "mma"))
            wgs[w].append((t, EPILOGUE, f"store T{tile}", "c"))
        t += EPILOGUE
    return pipe, wgs, [], t


def pingpong():
    """v9: warpgroup w takes tiles w, w + 2, …; its MMAs wait for its turn (the other's last
    issue), then it hands the turn over and stores while the other's MMAs run."""
    pipe, wgs, turns = [], {0: [], 1: []}, []
    pipe_free = 0.0
    turn_at = {0: 0.0}  # warpgroup 1's arrival at the start gives warpgroup 0 the first turn
    free_at = {0: 0.0, 1: 0.0}  # when each warpgroup is done with its last epilogue
    for tile in range(TILES):
        w = tile % 2
        start = max(turn_at[w], free_at[w], pipe_free)
        t = start
        for kt in range(K_TILES):
            pipe.append((t, SLICE, f"t{tile}", w))
            t += SLICE
        wgs[w].append((start, t - start, f"MMA t{tile}", "mma"))
        turns.append((start, w, tile // 2))  # warpgroup w's (tile // 2)-th tile
        turn_at[1 - w] = t - SLICE  # the arrival follows the last issue, not its completion
        pipe_free = t
        wgs[w].append((t, SLICE * EPILOGUE, f"store t{tile}", "c"))
        free_at[w] = t + SLICE * EPILOGUE
    return pipe, wgs, turns, max(free_at.values())


def timeline():
    fig, ax = figure(11.0, 5.6)
    step = 1.5  # rows apart: a box and a line of the barriers' names above it
    rows = {"pipe": 0, 0: 1, 1: 2}
    names = {"pipe": "tensor cores", 0: "warpgroup 0", 1: "warpgroup 1"}
    for panel, (title, model) in enumerate([("cooperative (v8)", cooperative),
                                            ("ping-pong (v9)", pingpong)]):
        pipe, wgs, turns, end = model()
        y0 = 6.4 - panel * 5.4
        idle = end - sum(w_ for _, w_, _, _ in pipe)
        ax.text(-0.3, y0 + 0.9, f"{title}: {end:.0f} units, the tensor cores idle {idle:.0f}",
                ha="left", va="bottom", fontsize=TEXT + 1, weight="bold")
        for key, row in rows.items():
            y = y0 - row * step
            ax.text(-0.3, y + 0.4, names[key], ha="right", va="center", fontsize=TEXT)
        for x, w_, label, owner in pipe:
            color = COLORS["mma"] if owner == 0 else COLORS["b"]
            box(ax, x, y0, w_, 0.8, label, color=color, fontsize=TEXT, alpha=0.85)
        for w in (0, 1):
            y = y0 - rows[w] * step
            for x, w_, label, kind in wgs[w]:
                box(ax, x, y, w_, 0.8, label, color=COLORS[kind], fontsize=TEXT, alpha=0.6)
        for x, w, i in turns:
            # The turn barrier returns; the slot's i-th claim was waited for with parity i & 1.
            y = y0 - rows[w] * step
            ax.plot([x, x], [y - 0.12, y + 0.92], color="black", lw=2.2)
            ax.text(x + 0.15, y + 0.88, f"bar.sync {4 + w} · tile_full[{w}] parity {i & 1}",
                    ha="left", va="bottom", fontsize=TEXT)
        if turns:  # warpgroup 1 gives warpgroup 0 the first turn
            y = y0 - rows[1] * step
            ax.text(0.15, y + 0.4, "bar.arrive 4", ha="left", va="center",
                    fontsize=TEXT)
    ax.set_xlim(-3.2, 30.5)
    ax.set_ylim(-2.6, 7.8)
    save(fig, "v9_timeline")


if __name__ == "__main__":
    timeline()
