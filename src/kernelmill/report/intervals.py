"""95% intervals for Exec, fast_p and the geometric-mean speedup.

A fast_1 of 40% over 50 tasks moves by several points with another draw of 50
tasks, and a kernel timed at 1.02x with a speedup interval of [0.97, 1.08] is
"fast" or not by the luck of its timing rounds. One interval here covers both.

Definition. Each of `resamples` rounds (a numpy generator seeded with `seed`, so
the same verdicts give the same interval):

1. draw T tasks with replacement from the T tasks; a drawn task brings all of
   its samples (samples of one task are not independent of each other);
2. redraw every timed sample's speedup within its own `speedup_ci`: its log is
   drawn from a split normal centred on log(speedup) whose lower and upper
   halves put log(low) and log(high) at 1.96 standard deviations; a sample
   without `speedup_ci` (older verdict files) keeps its speedup;
3. compute the metrics as the point estimate does (Exec and fast_p: per-task
   shares averaged over the drawn tasks; G_speedup: geometric mean over the
   drawn timed samples).

The interval is the 2.5th and 97.5th percentiles of those values (percentile
bootstrap). Exec has no measurement part. "Timed" = correct with a positive
speedup, the samples that can count as fast or enter the geometric mean.
The work is vectorised: tasks drawn for a chunk of rounds become a
(rounds x tasks) count matrix, and redrawn speedups are summed per task with
`np.add.reduceat`, so 10,000 verdicts take a fraction of a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..records import Verdict

Z95 = 1.959963984540054  # standard normal quantile at 97.5%
CHUNK_ELEMENTS = 2_000_000  # rounds per chunk x max(tasks, noisy samples): bounds memory


@dataclass
class Intervals:
    """[low, high] per metric; None where the metric has no value in any round."""

    exec: list[float] | None = None
    fast: dict[str, list[float] | None] = field(default_factory=dict)
    geomean_speedup: list[float] | None = None


def log_spread(v: Verdict) -> tuple[float, float]:
    """Standard deviations of log speedup below and above the point, from `speedup_ci`.

    (0, 0) when the verdict has no usable interval (missing, not two positive
    finite numbers, or low above high), so the speedup is taken as exact.
    """
    ci = v.speedup_ci
    if not ci or len(ci) != 2 or not v.speedup or v.speedup <= 0:
        return 0.0, 0.0
    low, high = float(ci[0]), float(ci[1])
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 or high < low:
        return 0.0, 0.0
    mid = math.log(v.speedup)
    return max(0.0, mid - math.log(low)) / Z95, max(0.0, math.log(high) - mid) / Z95


def _percentiles(values: np.ndarray) -> list[float] | None:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]


def bootstrap(groups: Sequence[Sequence[Verdict]], ps: Sequence[float], resamples: int = 1000,
              seed: int = 0) -> Intervals:
    """Intervals for verdicts grouped by task (the groups' order fixes the draws)."""
    keys = {p: f"{p:g}" for p in ps}
    T = len(groups)
    if T == 0 or resamples <= 0:
        return Intervals(fast={keys[p]: None for p in ps})
    flat = [(t, v) for t, vs in enumerate(groups) for v in vs]
    task = np.fromiter((t for t, _ in flat), dtype=np.int64, count=len(flat))
    n = np.bincount(task, minlength=T).astype(float)
    correct = np.fromiter((v.correct for _, v in flat), dtype=bool, count=len(flat))
    timed = np.fromiter((bool(v.correct and v.speedup and v.speedup > 0) for _, v in flat), dtype=bool,
                        count=len(flat))
    log_s = np.array([math.log(v.speedup) if ok else 0.0 for (_, v), ok in zip(flat, timed)])
    spread = np.array([log_spread(v) if ok else (0.0, 0.0) for (_, v), ok in zip(flat, timed)]).reshape(-1, 2)
    noisy = timed & (spread.sum(axis=1) > 0)
    exact = timed & ~noisy
    log_p = {p: math.log(p) if p > 0 else -math.inf for p in ps}

    # per-task parts that do not change between rounds, one column each:
    # Exec share, timed samples, sum of exact log speedups, exact fast share per p
    fixed = np.stack([np.bincount(task, weights=correct, minlength=T) / n,
                      np.bincount(task, weights=timed, minlength=T),
                      np.bincount(task, weights=np.where(exact, log_s, 0.0), minlength=T)]
                     + [np.bincount(task, weights=exact & (log_s > log_p[p]), minlength=T) / n for p in ps], axis=1)
    # samples redrawn each round, one row each; `flat` is grouped by task, so each
    # task's rows are contiguous and np.add.reduceat sums them per task
    mu, lo, hi = log_s[noisy, None], spread[noisy, 0, None], spread[noisy, 1, None]
    seg_task, seg_start = np.unique(task[noisy], return_index=True)
    seg_n = n[seg_task, None]

    rng = np.random.default_rng(seed)
    out = np.empty((resamples, fixed.shape[1]))  # same columns as `fixed`, per round
    step = max(1, CHUNK_ELEMENTS // max(T, mu.size, 1))
    for start in range(0, resamples, step):
        b = min(step, resamples - start)
        drawn = rng.integers(0, T, size=(b, T))
        w = np.bincount((np.arange(b)[:, None] * T + drawn).ravel(), minlength=b * T).reshape(b, T).astype(float)
        rows = out[start:start + b]
        rows[:] = w @ fixed
        if mu.size:
            z = rng.standard_normal((mu.size, b))
            redrawn = mu + z * np.where(z > 0, hi, lo)
            ws = w.T[seg_task]  # (tasks with redrawn samples, rounds)
            rows[:, 2] += (ws * np.add.reduceat(redrawn, seg_start, axis=0)).sum(axis=0)
            for i, p in enumerate(ps):
                count = np.add.reduceat(redrawn > log_p[p], seg_start, axis=0, dtype=np.float64)
                rows[:, 3 + i] += (ws * count / seg_n).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        geo = np.where(out[:, 1] > 0, np.exp(out[:, 2] / out[:, 1]), np.nan)
    return Intervals(exec=_percentiles(out[:, 0] / T),
                     fast={keys[p]: _percentiles(out[:, 3 + i] / T) for i, p in enumerate(ps)},
                     geomean_speedup=_percentiles(geo))
