"""Figures of one or more evaluation runs (the paper's Table I rates and
Figure 10 KDE curves), and the combined summary of several runs.

One PNG with three panels: compilation / runtime / I/O correctness rates and
mean CodeBLEU per run (bars; a metric not measured is left out and named);
the kernel density estimate (scipy's gaussian_kde) of the latency deviation of
I/O-correct candidates per run; the same for the global-load efficiency
deviation. A run whose deviations are all equal (the reference as its own
candidate) has no density; it is drawn as a spike with its count. Every
value is also marked on a rug under its curve.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .metrics import summarize


def _values(rows: list[dict], key: str) -> list[float]:
    out = []
    for r in rows:
        v = r.get(key)
        if r.get("io_correct") and isinstance(v, (int, float)) and math.isfinite(v):
            out.append(float(v))
    return out


def _kde(ax, values: list[float], label: str, color, y_rug: float) -> None:
    import numpy as np

    if not values:
        return
    arr = np.asarray(values)
    if len(arr) >= 2 and float(arr.std()) > 1e-12:
        from scipy.stats import gaussian_kde
        lo, hi = float(arr.min()), float(arr.max())
        pad = 0.15 * (hi - lo) + 1e-9
        xs = np.linspace(lo - pad, hi + pad, 400)
        ax.plot(xs, gaussian_kde(arr)(xs), color=color, label=f"{label} (n={len(arr)})")
    else:
        ax.axvline(float(arr.mean()), color=color, label=f"{label} (n={len(arr)}, all {arr.mean():.3g})")
    # the rug sits at a fixed height of the axes (x in data, y in axes fraction)
    ax.plot(arr, [y_rug] * len(arr), "|", color=color, markersize=8, alpha=0.6, transform=ax.get_xaxis_transform())


def write_figures(runs: dict[str, list[dict]], path: Path, measured: dict[str, dict] | None = None) -> None:
    """Draw the three panels for `runs` (label -> result rows) into `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    metrics = [("compilation_rate", "compile"), ("runtime_correctness_rate", "runtime"),
               ("io_correctness_rate", "I/O"), ("codebleu", "CodeBLEU")]
    width = 0.8 / max(1, len(runs))
    missing = set()
    for k, (label, rows) in enumerate(runs.items()):
        s = (measured or {}).get(label) or summarize(rows, compiled_measured=True, run_measured=True)
        for j, (key, name) in enumerate(metrics):
            v = s.get(key)
            if isinstance(v, dict):
                v = v.get("codebleu")
            if v is None:
                missing.add(name)
                continue
            x = j + (k - (len(runs) - 1) / 2) * width
            axes[0].bar(x, v, width, color=colors[k % len(colors)], label=label if j == 0 else None)
            axes[0].text(x, v + 0.01, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    axes[0].set_xticks(range(len(metrics)), [m[1] for m in metrics])
    axes[0].set_ylim(0, 1.12)
    axes[0].set_title("rates and CodeBLEU" + (f" (not measured: {', '.join(sorted(missing))})" if missing else ""))
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=8)
    for ax, key, title, unit in ((axes[1], "latency_dev", "latency deviation (I/O-correct)",
                                  "(t_decompiled - t_reference) / t_reference"),
                                 (axes[2], "gld_eff_dev", "global-load efficiency deviation (I/O-correct)",
                                  "eff_decompiled - eff_reference (percentage points)")):
        any_vals = False
        for k, (label, rows) in enumerate(runs.items()):
            vals = _values(rows, key)
            any_vals |= bool(vals)
            _kde(ax, vals, label, colors[k % len(colors)], 0.02 + 0.03 * k)
        ax.axvline(0, color="grey", lw=0.5, ls=":")
        ax.set_title(title if any_vals else title + ": none measured")
        ax.set_xlabel(unit)
        ax.set_ylabel("density")
        if any_vals:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def combine(dirs: dict[str, Path], out_png: Path, out_json: Path | None = None) -> dict[str, Any]:
    """One figure and one summary for several evaluation folders (label -> folder)."""
    from ...records import iter_jsonl
    runs, summaries = {}, {}
    for label, d in dirs.items():
        d = Path(d)
        if not (d / "results.jsonl").exists():
            raise FileNotFoundError(f"no results.jsonl in {d}")
        runs[label] = list(iter_jsonl(d / "results.jsonl"))
        summaries[label] = (json.loads((d / "summary.json").read_text()) if (d / "summary.json").exists()
                            else summarize(runs[label], compiled_measured=True, run_measured=True))
    write_figures(runs, out_png, summaries)
    if out_json is not None:
        out_json.write_text(json.dumps(summaries, indent=2), encoding="utf-8")
    return summaries
