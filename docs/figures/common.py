"""Shared drawing helpers for the figure scripts (docs/figures/v*.py).  Each script draws its
chapter's figures as byte-stable SVG beside it:  python3 docs/figures/v0.py"""
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402

plt.rcParams["svg.hashsalt"] = "hopper-matmul"
plt.rcParams["font.size"] = 9

HERE = os.path.dirname(os.path.abspath(__file__))
COLORS = {"a": "#1b9e77", "b": "#7570b3", "c": "#d95f02", "smem": "#e6ab02", "grey": "#999999",
          "light": "#eeeeee", "tma": "#66a61e", "mma": "#e7298a"}


# The figures are shown at the text column's full width (:width: 100%), 793 px in the browser
# check's 1400 px window (docs/_static/hm.css, scripts/docs_browser_check.py), which fails
# under 10 px of text; save() asserts MIN_PX, which leaves a margin.
PAGE_PX = 793
MIN_PX = 10.5


def figure(width, height):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_axis_off()
    ax.set_aspect("equal")
    return fig, ax


def box(ax, x, y, w, h, text="", color="white", edge="black", fontsize=8, lw=1, alpha=1.0,
        text_color="black"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, lw=lw, alpha=alpha))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize,
                color=text_color)


def arrow(ax, x0, y0, x1, y1, text="", color="black", fontsize=8, style="-|>", offset=(0, 0.15)):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style, mutation_scale=10,
                                 color=color, lw=1.2))
    if text:
        ax.text((x0 + x1) / 2 + offset[0], (y0 + y1) / 2 + offset[1], text, ha="center",
                va="bottom", fontsize=fontsize, color=color)


def save(fig, name):
    """Writes name.svg beside the scripts (or into $HM_FIGURE_OUT: tests/figures_check.py),
    then asserts that its smallest text is at least MIN_PX high once the SVG is scaled to
    PAGE_PX wide."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
    path = os.path.join(os.environ.get("HM_FIGURE_OUT") or HERE, name + ".svg")
    fig.savefig(path, metadata={"Date": None}, bbox_inches="tight")
    if os.environ.get("HM_FIGURE_PREVIEW"):  # a PNG beside, for looking at while drawing
        fig.savefig(os.path.join(os.environ["HM_FIGURE_PREVIEW"], name + ".png"), dpi=110,
                    bbox_inches="tight")
    plt.close(fig)
    with open(path) as f:
        width_pt = float(re.search(r'<svg[^>]* width="([0-9.]+)pt"', f.read()).group(1))
    px = min(sizes) * PAGE_PX / width_pt
    print(f"wrote {path} (smallest text {px:.1f} px at {PAGE_PX} px wide)")
    assert px >= MIN_PX, f"{name}: {min(sizes)} pt text is {px:.1f} px at the page's width"
