#!/usr/bin/env python3
"""Plots and the README results table, drawn from recorded measurements only.

    scripts/plot.py [--bench results/h200/bench.json] [--ladder results/h200/ladder_bf16.json]
                    [--out results/h200/plots] [--mine FILE ...] [--readme README.md]

--bench   the Google Benchmark JSON of a full run (scripts/record.sh writes it).
--ladder  the 8192³ bf16 `hopper-matmul ladder --json` of the same recording: each
          implementation timed in blocks after its clock has settled (sustained speed).
          Adds a column to the README table.
--mine    your own runs to overlay: `hopper-matmul ladder|sweep --json FILE` output or
          another benchmark JSON.  They are drawn as open markers beside the recorded run.
--readme  regenerate the results table of the card the run was measured on, between the
          markers <!-- results:CARD:begin --> and <!-- results:CARD:end --> (CARD: h100 or
          h200, from the GPU's name in --bench).

Writes, in --out: ladder.svg/.png (TFLOPS of every version at 8192³ bf16, with cuBLAS and
the dense peak as reference lines), ladder_vN.svg (the same "up to vN", one per docs
chapter), sizes.svg/.png (TFLOPS against the size of square problems) and, when --bench has
the decode family, decode.svg/.png (HBM TB/s of cuBLAS and the last two versions on each
decode shape, against the read bandwidth measured in the same run).  Of the other families,
transformer is in the README table's geomean; ragged and waves are in no plot.  SVG output is
byte-stable (fixed hash salt, no dates), so regenerating unchanged data changes no file.
"""
import argparse
import os
import re
import sys

from hm_results import LADDER_SHAPE, geomean, load, pick, versions_in

# matplotlib is imported here but needed only to draw, so that --help works without it and
# a missing install is one line that says what to install, not a traceback.
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
else:
    plt.rcParams["svg.hashsalt"] = "hopper-matmul"
    plt.rcParams["font.size"] = 9

# Dense bf16/fp16 tensor-core peak of the H100/H200 SXM at boost clock (NVIDIA datasheet).
DENSE_PEAK_TFLOPS = 989.4
def short(technique, width=30):
    words, lines, line = technique.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    lines.append(line)
    return "\n".join(lines)


def card_of(env):
    """'h100' or 'h200' from the GPU's name ("NVIDIA H100 80GB HBM3"), else the name."""
    name = env.get("name", "GPU")
    m = re.search(r"\bH(100|200)\b", name)
    return f"h{m.group(1)}" if m else re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def gpu_label(env):
    return env.get("name", "GPU") + (f", commit {env['commit']}" if env.get("commit") else "")


def save(fig, out, name, png=False):
    """Writes name.svg (and .png), after checking that no text is under MIN_PX once the plot
    is scaled to PAGE_PX wide."""
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    px = min(sizes) * PAGE_PX / (fig.get_figwidth() * 72)
    if px < MIN_PX:
        sys.exit(f"{name}: {min(sizes)} pt text is {px:.1f} px at the page's width")
    fig.savefig(os.path.join(out, name + ".svg"), metadata={"Date": None})
    if png:
        fig.savefig(os.path.join(out, name + ".png"), dpi=150)
    plt.close(fig)


# The plots are shown at the docs' text column's full width (793 px in the browser check's
# 1400 px window, scripts/docs_browser_check.py), which fails under 10 px of text: a
# FIGSIZE-wide plot scales its points by 793 / 518 there, so no text is under 7.5 pt.
FIGSIZE = (7.2, 4.8)
PAGE_PX = 793
MIN_PX = 10.5


def plot_ladder(rows, env, mine, out, upto=None):
    versions = versions_in(rows)
    shown = versions if upto is None else versions[: upto + 1]
    fig, ax = plt.subplots(figsize=FIGSIZE)
    cublas = pick(rows, "cublas", "bf16", LADDER_SHAPE)
    top = max([DENSE_PEAK_TFLOPS] + [r["tflops"] for r in rows]) * 1.12
    for i, v in enumerate(shown):
        r = pick(rows, v, "bf16", LADDER_SHAPE)
        if not r:
            continue
        current = upto is not None and i == upto
        ax.bar(i, r["tflops"], color="#d95f02" if current else "#1b9e77", width=0.6)
        ax.text(i, r["tflops"] + top * 0.01, f"{r['tflops']:.0f}\n{r['ratio']:.2f}×",
                ha="center", va="bottom", fontsize=8, zorder=3,
                bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none"))
        ax.text(i, top * 0.02, short(r["technique"], 22), ha="center", va="bottom", fontsize=7.5,
                color="white", rotation=90, linespacing=1.1)
        for label, mrows, _ in mine:
            mr = pick(mrows, v, "bf16", LADDER_SHAPE)
            if mr:
                ax.plot(i + 0.2, mr["tflops"], "o", mfc="none", mec="black")
    if cublas:
        ax.axhline(cublas["tflops"], color="#7570b3", ls="--", lw=1)
        ax.text(-0.55, cublas["tflops"], f"cuBLAS {cublas['tflops']:.0f}",
                ha="left", va="bottom", color="#7570b3", fontsize=8)
    ax.axhline(DENSE_PEAK_TFLOPS, color="grey", ls=":", lw=1)
    ax.text(-0.55, DENSE_PEAK_TFLOPS, f"dense bf16 peak {DENSE_PEAK_TFLOPS:.0f} (datasheet)",
            ha="left", va="bottom", color="grey", fontsize=8)
    for label, _, _ in mine:
        ax.plot([], [], "o", mfc="none", mec="black", label=f"yours: {label}")
    if mine:
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xticks(range(len(versions)))
    ax.set_xticklabels([v.replace("_", "\n", 1) if v in shown else "" for v in versions],
                       fontsize=8)
    ax.set_xlim(-0.6, len(versions) - 0.4)
    ax.set_ylim(0, top)
    ax.set_ylabel("TFLOPS (2·M·N·K / median time)")
    ax.set_title(f"C = A·Bᵀ, 8192³ bf16 — {gpu_label(env)}\nabove each bar: TFLOPS and the "
                 "ratio to cuBLAS", fontsize=9)
    fig.tight_layout()
    save(fig, out, "ladder" if upto is None else f"ladder_v{upto}", png=upto is None)


def plot_sizes(rows, env, mine, out):
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for impl in ["cublas"] + versions_in(rows):
        pts = sorted((r["m"], r["tflops"]) for r in rows
                     if r["impl"] == impl and r["dtype"] == "bf16" and r["family"] == "square")
        if pts:
            style = dict(color="black", lw=2, ls="--") if impl == "cublas" else dict(lw=1.3)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=impl, **style)
    for label, mrows, _ in mine:
        pts = sorted((r["m"], r["tflops"]) for r in mrows
                     if r["dtype"] == "bf16" and r["family"] == "square")
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", mfc="none", mec="black",
                    label=f"yours: {label}")
    ax.axhline(DENSE_PEAK_TFLOPS, color="grey", ls=":", lw=1, label="dense peak")
    sizes = sorted({r["m"] for r in rows if r["family"] == "square"})
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOPS")
    ax.set_title(f"Square problems, bf16 — {gpu_label(env)}", fontsize=9)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    save(fig, out, "sizes", png=True)


def plot_decode(rows, env, out):
    """HBM TB/s (the fewest bytes over the median time) of cuBLAS and the last two versions
    on every bf16 decode shape, with the HBM read bandwidth measured at the start of the same
    run as the roofline.  False, drawing nothing, when the run has no decode shapes."""
    decode = [r for r in rows if r["family"] == "decode" and r["dtype"] == "bf16"
              and r.get("hbm_tbps") is not None]
    if not decode:
        return False
    impls = ["cublas"] + versions_in(decode)[-2:]
    shapes = sorted({(r["m"], r["n"], r["k"]) for r in decode},
                    key=lambda s: (s[1] * s[2], s[1], s[0]))  # by weight matrix, then tokens
    fig, ax = plt.subplots(figsize=FIGSIZE)
    width = 0.8 / len(impls)
    colors = {"cublas": "#7570b3"}
    palette = iter(["#1b9e77", "#d95f02"])
    for j, impl in enumerate(impls):
        pts = [(i, pick(decode, impl, "bf16", s)) for i, s in enumerate(shapes)]
        pts = [(i, r["hbm_tbps"]) for i, r in pts if r]
        color = colors.get(impl) or next(palette)
        ax.bar([i + (j - (len(impls) - 1) / 2) * width for i, _ in pts], [t for _, t in pts],
               width=width, color=color, label=impl)
    roof = env.get("hbm_read_tbps")
    if roof:
        ax.axhline(roof, color="grey", ls=":", lw=1)
        ax.text(-0.5, roof, f"HBM read, measured in this run: {roof:.2f} TB/s", ha="left",
                va="bottom", color="grey", fontsize=8)
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([f"{m}×{n}×{k}" for m, n, k in shapes], rotation=90, fontsize=7.5)
    ax.set_xlim(-0.6, len(shapes) - 0.4)
    ax.set_ylim(0, max([roof or 0] + [r["hbm_tbps"] for r in decode]) * 1.15)
    ax.set_xlabel("M × N × K (M tokens against an N × K weight matrix)")
    ax.set_ylabel("HBM TB/s (2·(MK + NK + MN) bytes / median time)")
    ax.set_title(f"Decode shapes, bf16 — {gpu_label(env)}", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", ncol=len(impls))
    fig.tight_layout()
    save(fig, out, "decode", png=True)
    return True


def results_table(rows, env, bench_path, ladder=None, ladder_env=None, ladder_path=None):
    sustained = ""
    if ladder:
        lenv = ladder_env or {}
        proto = lenv.get("protocol", {})
        sustained = (f" Sustained: `hopper-matmul ladder` (`{os.path.relpath(ladder_path)}`, commit "
                     f"{lenv.get('commit', '?')}), {proto.get('rounds', '?')} rounds of "
                     f"{proto.get('reps_per_round', '?')} launches per implementation, each round "
                     f"after ~{proto.get('settle_ms', '?')} ms of that implementation's own "
                     "launches, so that the clock has settled to the power it draws.")
    lines = [
        f"Measured on {env.get('name', '?')} ({env.get('sm_count', '?')} SMs, power limit "
        f"{env.get('power_limit_w', '?')} W), driver {env.get('driver_release', '?')}, CUDA "
        f"{env.get('runtime_version', '?')}, cuBLAS {env.get('cublas_version', '?')}, commit "
        f"{env.get('commit', '?')}.  Alternating: the median launch, timed launch by launch "
        "alternately with cuBLAS in the same process (bench/bench.cpp states the protocol); "
        f"`{os.path.relpath(bench_path)}` holds every shape." + sustained,
        "",
        "| version | what it adds | 8192³ bf16 TFLOPS | × cuBLAS, 8192³ bf16, alternating | "
        + ("× cuBLAS, 8192³ bf16, sustained | " if ladder else "")
        + "× cuBLAS, geomean of the transformer shapes (bf16) |",
        "|---|---|---|---|---|" + ("---|" if ladder else ""),
    ]
    for impl in ["cublas"] + versions_in(rows):
        r = pick(rows, impl, "bf16", LADDER_SHAPE)
        tr = [x["ratio"] for x in rows
              if x["impl"] == impl and x["dtype"] == "bf16" and x["family"] == "transformer"]
        if not r:
            continue
        cells = [impl, r["technique"], f"{r['tflops']:.0f}", f"{r['ratio']:.3f}"]
        if ladder:
            s = pick(ladder, impl, "bf16", LADDER_SHAPE)
            cells.append(f"{s['ratio']:.3f}" if s else "—")
        cells.append(f"{geomean(tr):.3f} ({len(tr)} shapes)")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def update_readme(path, card, table):
    with open(path) as f:
        text = f.read()
    begin, end = f"<!-- results:{card}:begin -->", f"<!-- results:{card}:end -->"
    if begin not in text or end not in text:
        sys.exit(f"{path} has no {begin} … {end} markers: add a section for the {card}'s "
                 "results (the plots are drawn)")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(f"{head}{begin}\n{table}\n{end}{tail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="results/h200/bench.json")
    ap.add_argument("--ladder")
    ap.add_argument("--out", default="results/h200/plots")
    ap.add_argument("--mine", nargs="*", default=[])
    ap.add_argument("--readme")
    args = ap.parse_args()
    if plt is None:
        sys.exit("plot.py needs matplotlib: sudo apt-get install python3-matplotlib")
    rows, env = load(args.bench)
    if not pick(rows, "cublas", "bf16", LADDER_SHAPE):
        sys.exit(f"{args.bench} has no 8192³ bf16 cuBLAS result to plot against")
    mine = []
    for path in args.mine:
        mrows, menv = load(path)
        mine.append((menv.get("name", os.path.basename(path)), mrows, menv))
    os.makedirs(args.out, exist_ok=True)
    plot_ladder(rows, env, mine, args.out)
    for n in range(len(versions_in(rows))):
        plot_ladder(rows, env, mine, args.out, upto=n)
    plot_sizes(rows, env, mine, args.out)
    plot_decode(rows, env, args.out)
    if args.readme:
        ladder, ladder_env = load(args.ladder) if args.ladder else (None, None)
        update_readme(args.readme, card_of(env),
                      results_table(rows, env, args.bench, ladder, ladder_env, args.ladder))
    print(f"plots written to {args.out}")


if __name__ == "__main__":
    main()
