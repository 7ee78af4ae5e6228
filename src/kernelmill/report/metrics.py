"""KernelBench-style metrics over verdicts: Exec, fast_p, pass@k, geometric-mean speedup.

Definitions (SPEC.md section 1), with verdicts grouped by task:
* Exec = mean over tasks of (correct samples / samples): with one sample per
  task, the share of tasks with a correct kernel;
* fast_p = mean over tasks of (samples correct *and* speedup > p) / samples;
  fast_0 equals Exec; a correct sample whose speed was not measured counts as
  correct but never as fast;
* pass@k for Exec and fast_1: the unbiased estimator 1 - C(n-c, k) / C(n, k)
  per task (n samples, c successes), averaged over tasks with n >= k; tasks
  with fewer than k samples are left out and counted in `tasks_below_k`;
* G_speedup = geometric mean of speedups over correct samples with a speedup.
Reported per level and overall.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from ..records import STATUSES, Verdict


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: probability that k of n samples include a success."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    # product form of 1 - C(n-c, k) / C(n, k), stable for large n
    prob_fail = 1.0
    for i in range(n - c + 1, n + 1):
        prob_fail *= 1.0 - k / i
    return 1.0 - prob_fail


@dataclass
class MetricSet:
    tasks: int = 0
    samples: int = 0
    exec: float = 0.0
    fast: dict[str, float] = field(default_factory=dict)
    pass_exec: dict[str, float | None] = field(default_factory=dict)
    pass_fast1: dict[str, float | None] = field(default_factory=dict)
    tasks_below_k: dict[str, int] = field(default_factory=dict)
    geomean_speedup: float | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    # verdicts the guards rejected or failed, by flag (a verdict may carry several)
    guard_flags: dict[str, int] = field(default_factory=dict)


def _is_fast(v: Verdict, p: float) -> bool:
    return v.correct and v.speedup is not None and v.speedup > p


def compute(verdicts: list[Verdict], ps: Iterable[float], ks: Iterable[int]) -> MetricSet:
    by_task: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_task[v.task_id].append(v)
    ps, ks = list(ps), list(ks)
    m = MetricSet(tasks=len(by_task), samples=len(verdicts))
    m.statuses = {s: 0 for s in STATUSES}
    for v in verdicts:
        m.statuses[v.status] = m.statuses.get(v.status, 0) + 1
        if v.status in ("rejected", "incorrect"):
            for flag in v.flags:
                m.guard_flags[flag] = m.guard_flags.get(flag, 0) + 1
    if not by_task:
        return m
    m.exec = sum(sum(v.correct for v in vs) / len(vs) for vs in by_task.values()) / len(by_task)
    for p in ps:
        m.fast[f"{p:g}"] = sum(sum(_is_fast(v, p) for v in vs) / len(vs) for vs in by_task.values()) / len(by_task)
    for k in ks:
        eligible = [vs for vs in by_task.values() if len(vs) >= k]
        m.tasks_below_k[str(k)] = len(by_task) - len(eligible)
        if not eligible:
            m.pass_exec[str(k)] = m.pass_fast1[str(k)] = None
            continue
        m.pass_exec[str(k)] = sum(pass_at_k(len(vs), sum(v.correct for v in vs), k) for vs in eligible) / len(eligible)
        m.pass_fast1[str(k)] = sum(pass_at_k(len(vs), sum(_is_fast(v, 1.0) for v in vs), k)
                                   for vs in eligible) / len(eligible)
    speedups = [v.speedup for v in verdicts if v.correct and v.speedup and v.speedup > 0]
    if speedups:
        m.geomean_speedup = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    return m


def metrics_by_level(verdicts: list[Verdict], ps: Iterable[float] = (0, 0.5, 1, 1.5, 2),
                     ks: Iterable[int] = (1,)) -> dict[str, MetricSet]:
    """{"level1": ..., "level2": ..., "all": ...} (levels that appear, sorted)."""
    ps, ks = list(ps), list(ks)
    levels: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        levels[f"level{v.level}" if v.level is not None else "unlabelled"].append(v)
    out = {name: compute(levels[name], ps, ks) for name in sorted(levels)}
    out["all"] = compute(verdicts, ps, ks)
    return out
