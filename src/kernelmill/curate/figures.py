"""The three figures of ConCuR's observations, drawn from `analysis.analyze`.

Matplotlib with the Agg backend (no display needed). Each figure is drawn from
the same generations the JSON numbers come from, so a figure and its number
never disagree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .analysis import analyze
from .inputs import Generation


def _plt():
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the install
        raise RuntimeError("figures need matplotlib: pip install 'kernelmill[curate]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def boxplot_lengths(gens: list[Generation], path: Path) -> None:
    plt = _plt()
    right = [g.length for g in gens if g.length is not None and g.correct]
    wrong = [g.length for g in gens if g.length is not None and not g.correct]
    fig, ax = plt.subplots(figsize=(5, 4.5))
    data, labels = [], []
    for vals, name in ((right, "correct"), (wrong, "incorrect")):
        if vals:
            data.append(vals)
            labels.append(f"{name}\n(n={len(vals)})")
    if data:
        ax.boxplot(data, tick_labels=labels, showfliers=False, widths=0.5)
    ax.set_ylabel("reasoning length (tokens)")
    ax.set_title("Reasoning length by correctness")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def accuracy_by_bin(stats: dict, path: Path) -> None:
    plt = _plt()
    bins = [b for b in stats["accuracy_by_length_bin"]["bins"] if b["count"]]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels = [f"{int(b['lo'] / 1000)}-{int(b['hi'] / 1000)}k" for b in bins]
    xs = list(range(len(bins)))
    w = 0.4
    # two bars per bin (accuracy left, sample count right): the bins are categories, so
    # neither quantity is drawn as a line across them
    acc = ax.bar([x - w / 2 for x in xs], [100 * b["accuracy"] for b in bins], width=w, color="tab:blue",
                 alpha=0.85, label="accuracy (%)")
    ax.set_ylabel("accuracy (%)", color="tab:blue")
    ax.set_xlabel("reasoning length bin (tokens)")
    ax.set_xticks(xs, labels, rotation=45, ha="right")
    ax.set_ylim(0, 100)
    twin = ax.twinx()
    cnt = twin.bar([x + w / 2 for x in xs], [b["count"] for b in bins], width=w, color="tab:red", alpha=0.6,
                   label="samples per bin")
    twin.set_ylabel("samples per bin", color="tab:red")
    twin.set_ylim(bottom=0)
    ax.legend(handles=[acc, cnt], loc="upper right")
    ax.set_title("Accuracy per reasoning-length bin")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def length_speedup_scatter(gens: list[Generation], stats: dict, path: Path) -> None:
    plt = _plt()
    # a log speedup axis (ratios: 0.5x and 2x equally far from 1); points sized to be seen
    pts = [(g.length, g.speedup) for g in gens if g.length is not None and g.speedup is not None and g.speedup > 0]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if pts:
        xs, ys = zip(*pts)
        size = 28 if len(pts) < 200 else 14 if len(pts) < 2000 else 6
        ax.scatter(xs, ys, s=size, alpha=0.7 if len(pts) < 2000 else 0.4, color="tab:blue",
                   edgecolors="navy", linewidths=0.4)
        ax.set_yscale("log")
        from matplotlib.ticker import FuncFormatter

        label = FuncFormatter(lambda v, _: f"{v:g}x")
        ax.yaxis.set_major_formatter(label)
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}x" if str(v)[0] in "25" else ""))
        fit = stats["length_vs_speedup"]
        if "slope_log10" in fit:
            lo, hi = min(xs), max(xs)
            ax.plot([lo, hi], [10 ** (fit["intercept_log10"] + fit["slope_log10"] * v) for v in (lo, hi)],
                    color="tab:red", label=f"fit on log speedup: Pearson r = {fit['pearson_r_log']:.3f} "
                                           f"(p = {fit['p_value_log']:.2g}), Spearman \u03c1 = "
                                           f"{fit['spearman_rho']:.3f} (p = {fit['spearman_p']:.2g})")
            ax.legend(loc="upper right", fontsize=8)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("reasoning length (tokens)")
    ax.set_ylabel("speedup over eager PyTorch (log scale)")
    ax.set_title(f"Reasoning length vs speedup (correct kernels, n={len(pts)})")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


FIGURES = ("length_boxplot.png", "accuracy_by_length.png", "length_vs_speedup.png")


def write_analysis(gens: list[Generation], out_dir: str | os.PathLike, bin_width: float = 2000.0,
                   extra: dict | None = None) -> dict:
    """Write the three PNGs and `analysis.json` (every number) into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stats = analyze(gens, bin_width)
    if extra:
        stats.update(extra)
    boxplot_lengths(gens, out / FIGURES[0])
    accuracy_by_bin(stats, out / FIGURES[1])
    length_speedup_scatter(gens, stats, out / FIGURES[2])
    stats["figures"] = list(FIGURES)
    tmp = out / ".analysis.json.tmp"
    tmp.write_text(json.dumps(stats, indent=2, allow_nan=False, default=str) + "\n")
    os.replace(tmp, out / "analysis.json")
    return stats
