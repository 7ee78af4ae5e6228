"""The report's figures as inline SVG (matplotlib, Agg; text kept as text).

* `fast_p_curve`: fast_p as p varies, per group, with the 95% band of
  report/intervals.py's bootstrap; fast_p is a step function of p that drops
  at each sample's speedup, so it is drawn as steps through every such point.
* `speedup_histogram`: the speedups of the timed samples (correct, with a
  speedup) on a log axis, stacked by language, with 1x marked.
"""

from __future__ import annotations

import io
import math
import re
from collections import defaultdict
from typing import Callable, Sequence

from ..records import Verdict
from .intervals import bootstrap
from .metrics import _is_fast, not_run_flag

BAND_POINTS = 60  # p values the band is bootstrapped at
BAND_RESAMPLES = 300


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "kernelmill", "font.size": 9,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def svg_of(fig, plt, label: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.find("<svg"):]
    # ids must be unique in the page: matplotlib's are unique within one figure only
    text = re.sub(r'id="([^"]+)"', lambda m: f'id="{label}-{m.group(1)}"', text)
    text = re.sub(r'(url\(#|xlink:href="#|href="#)([^")]+)', lambda m: f"{m.group(1)}{label}-{m.group(2)}", text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{label}" class="figure" ', 1)


def _times_axis(ax) -> None:
    """Log-axis ticks read as speedups (0.1x, 1x, 10x), not powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _groups(verdicts: Sequence[Verdict]) -> list[list[Verdict]]:
    by_task: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        if not_run_flag(v) is None:
            by_task[v.task_id].append(v)
    return [sorted(by_task[t], key=lambda v: v.sample_id) for t in sorted(by_task)]


def fast_p_points(verdicts: Sequence[Verdict]) -> tuple[list[float], list[float]]:
    """(p, fast_p) at p = 0 and just at each distinct speedup (where fast_p drops)."""
    groups = _groups(verdicts)
    if not groups:
        return [], []
    speeds = sorted({v.speedup for vs in groups for v in vs if v.correct and v.speedup and v.speedup > 0})
    ps = [0.0] + speeds
    ys = [sum(sum(_is_fast(v, p) for v in vs) / len(vs) for vs in groups) / len(groups) for p in ps]
    return ps, ys


def fast_p_curve(named: dict[str, Sequence[Verdict]], seed: int = 0) -> str | None:
    """One step curve per group (e.g. per level and all); None if nothing was timed."""
    plt = pyplot()
    timed = [v.speedup for vs in named.values() for v in vs if v.correct and v.speedup and v.speedup > 0
             and not_run_flag(v) is None]
    if not timed:
        return None
    lo, hi = min(timed), max(timed)
    log_x = hi / lo > 20
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
    x_min = lo / 1.5 if log_x else 0.0
    x_max = hi * 1.5 if log_x else max(2.0, hi * 1.1)
    for i, (name, vs) in enumerate(named.items()):
        ps, ys = fast_p_points(vs)
        if not ps:
            continue
        colour = "black" if name == "all" else f"C{i}"
        xs = [max(p, x_min) for p in ps] + [x_max]
        ax.step(xs, [100 * y for y in ys] + [100 * ys[-1]], where="post", color=colour,
                lw=2.0 if name == "all" else 1.2, label=name)
        grid = ([x_min * (x_max / x_min) ** (k / (BAND_POINTS - 1)) for k in range(BAND_POINTS)] if log_x
                else [x_max * k / (BAND_POINTS - 1) for k in range(BAND_POINTS)])
        if name != "all":  # one band: several overlapping ones hide the curves
            continue
        band = bootstrap(_groups(vs), grid, resamples=BAND_RESAMPLES, seed=seed)
        ci = [band.fast[f"{p:g}"] for p in grid]
        if all(c is not None for c in ci):
            ax.fill_between(grid, [100 * c[0] for c in ci], [100 * c[1] for c in ci], step="post",
                            color=colour, alpha=0.10, lw=0)
    ax.axvline(1.0, color="grey", lw=0.8, ls="--")
    if log_x:
        ax.set_xscale("log")
        _times_axis(ax)
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(0, 100)
    ax.set_xlabel("p (speedup threshold over PyTorch eager)")
    ax.set_ylabel("fast_p (%)")
    ax.set_title("fast_p over p (band: 95% interval of all)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", frameon=False)
    return svg_of(fig, plt, "fast_p")


def speedup_histogram(verdicts: Sequence[Verdict], language: Callable[[Verdict], str]) -> str | None:
    plt = pyplot()
    import numpy as np

    timed = [v for v in verdicts if v.correct and v.speedup and v.speedup > 0 and not_run_flag(v) is None]
    if not timed:
        return None
    logs = [math.log10(v.speedup) for v in timed]
    lo, hi = math.floor(min(logs) * 4) / 4, math.ceil(max(logs) * 4) / 4
    if hi - lo < 0.5:
        lo, hi = lo - 0.25, hi + 0.25
    edges = np.logspace(lo, hi, max(6, min(40, int((hi - lo) * 12)) + 1))
    by_lang: dict[str, list[float]] = defaultdict(list)
    for v in timed:
        by_lang[language(v)].append(v.speedup)
    names = sorted(by_lang)
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
    ax.hist([by_lang[n] for n in names], bins=edges, stacked=True, label=[f"{n} ({len(by_lang[n])})" for n in names],
            color=[f"C{i}" for i in range(len(names))], edgecolor="white", linewidth=0.5)
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    gm = math.exp(sum(math.log(v.speedup) for v in timed) / len(timed))
    ax.axvline(gm, color="C3", lw=1.0, label=f"geometric mean {gm:.2f}x")
    ax.set_xscale("log")
    _times_axis(ax)
    ax.set_xlabel("speedup over PyTorch eager (log scale; dashed: 1x)")
    ax.set_ylabel("timed samples")
    ax.set_title(f"Speedups of the {len(timed)} correct, timed samples", fontsize=9)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(frameon=False, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return svg_of(fig, plt, "speedups")
