"""KernelBench-style metrics over verdicts: Exec, fast_p, pass@k, geometric-mean speedup.

Definitions (SPEC.md section 1), with verdicts grouped by task:
* Exec = mean over tasks of (correct samples / samples): with one sample per
  task, the share of tasks with a correct kernel;
* fast_p = mean over tasks of (samples correct *and* speedup > p) / samples;
  fast_0 equals Exec; a correct sample whose speed was not measured counts as
  correct but never as fast;
* undecided at p = correct samples whose `speedup_ci` holds p (low <= p <= high):
  their timing cannot tell them from p, so fast_p may hinge on them;
  `fast_bounds` gives fast_p with all of them counted slow, then all fast;
* pass@k for Exec and fast_1: the unbiased estimator of Chen et al. (2021),
  1 - C(n-c, k) / C(n, k) per task (n samples, c successes), averaged over the
  tasks with n >= k. The estimator is undefined for n < k, and padding such
  tasks (pass@n in place of pass@k) would mix two quantities, so they are left
  out: `pass_tasks` says on how many tasks each k was computed, `tasks_below_k`
  how many were left out. A pass@k on fewer tasks than pass@(k-1) can sit
  below it; with every task kept it never does;
* G_speedup = geometric mean of speedups over correct samples with a speedup;
* over the compiled baseline (verdicts of `verify --compile-baseline`, which
  carry `speedup_compiled`): fast_p and G_speedup the same way with
  `speedup_compiled` in place of `speedup` (`fast_compiled`,
  `geomean_speedup_compiled`; no intervals); a correct sample without one (its
  task's reference did not compile) counts as not fast;
* not run: verdicts that say the candidate never ran through no fault of its
  own (`NOT_RUN_FLAGS`: a CUDA candidate on a machine without a GPU, a sample
  for a task the source does not have) count in no metric, neither as samples
  nor as failures; `not_run` counts them by flag and `not_run_tasks` names the
  unknown tasks.

Exec, fast_p and G_speedup carry 95% intervals (`exec_ci`, `fast_ci`,
`geomean_speedup_ci`): a bootstrap over tasks in which each speedup is also
redrawn within its own `speedup_ci` (report/intervals.py states the method).
Reported per level and overall.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..records import STATUSES, Verdict
from .intervals import bootstrap

# flags of verdicts for candidates that never ran, through no fault of theirs
# (verify/runner.py's static verdicts): the machine lacks the device the language
# needs, or the sample names a task the task source does not have
NOT_RUN_FLAGS = {
    "unsupported_device": "not run: this machine lacks the device the kernel language needs (e.g. CUDA without a GPU)",
    "unknown_task": "not run: the sample names a task the task source does not have",
    "reference_error": "not run: the task's reference program failed, so there was nothing to compare with",
}
RESAMPLES = 1000  # bootstrap rounds; the percentiles settle to about 0.1 point
SEED = 0


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
    # 95% intervals [low, high] (None: no value, or resamples=0)
    exec_ci: list[float] | None = None
    fast_ci: dict[str, list[float] | None] = field(default_factory=dict)
    geomean_speedup_ci: list[float] | None = None
    # correct samples whose speedup_ci holds p, and fast_p with them all slow / all fast
    fast_undecided: dict[str, int] = field(default_factory=dict)
    fast_bounds: dict[str, list[float]] = field(default_factory=dict)
    # tasks with at least k samples: those pass@k is averaged over
    pass_tasks: dict[str, int] = field(default_factory=dict)
    # timed samples (correct, with a speedup) and how many of them carry a speedup_ci
    timed_samples: int = 0
    samples_with_speedup_ci: int = 0
    ci_resamples: int = 0
    ci_seed: int = SEED
    # against the reference under torch.compile (verify --compile-baseline): filled when any sample has one
    fast_compiled: dict[str, float] = field(default_factory=dict)
    geomean_speedup_compiled: float | None = None
    timed_compiled_samples: int = 0
    # verdicts left out of every figure above because the candidate never ran (NOT_RUN_FLAGS)
    not_run: dict[str, int] = field(default_factory=dict)
    not_run_tasks: list[str] = field(default_factory=list)  # task ids of unknown_task verdicts


def not_run_flag(v: Verdict) -> str | None:
    """The NOT_RUN_FLAGS flag of a verdict whose candidate never ran, else None."""
    return next((f for f in v.flags if f in NOT_RUN_FLAGS), None)


def _is_fast(v: Verdict, p: float) -> bool:
    return v.correct and v.speedup is not None and v.speedup > p


def _is_undecided(v: Verdict, p: float) -> bool:
    ci = v.speedup_ci
    return bool(v.correct and v.speedup is not None and ci and len(ci) == 2 and ci[0] <= p <= ci[1])


def _task_mean(groups: list[list[Verdict]], hit) -> float:
    return sum(sum(map(hit, vs)) / len(vs) for vs in groups) / len(groups)


def compute(verdicts: list[Verdict], ps: Iterable[float], ks: Iterable[int], *,
            resamples: int = RESAMPLES, seed: int = SEED) -> MetricSet:
    """Metrics over `verdicts`; `resamples` bootstrap rounds (0: no intervals) from `seed`.
    Verdicts of candidates that never ran (`not_run_flag`) are counted apart."""
    not_run: dict[str, int] = {}
    unknown: set[str] = set()
    ran = []
    for v in verdicts:
        flag = not_run_flag(v)
        if flag is None:
            ran.append(v)
            continue
        not_run[flag] = not_run.get(flag, 0) + 1
        if flag == "unknown_task":
            unknown.add(v.task_id)
    verdicts = ran
    by_task: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_task[v.task_id].append(v)
    # task and sample order fixed by ids, so the bootstrap does not depend on file order
    groups = [sorted(by_task[t], key=lambda v: v.sample_id) for t in sorted(by_task)]
    ps, ks = list(ps), list(ks)
    m = MetricSet(tasks=len(by_task), samples=len(verdicts), ci_resamples=max(0, resamples), ci_seed=seed,
                  not_run=not_run, not_run_tasks=sorted(unknown))
    from ..verify import FLAGS as guard_catalogue

    m.statuses = {s: 0 for s in STATUSES}
    for v in verdicts:
        m.statuses[v.status] = m.statuses.get(v.status, 0) + 1
        if v.status in ("rejected", "incorrect"):
            for flag in v.flags:
                if flag in guard_catalogue:  # not the harness's notes (timing_skipped, ...)
                    m.guard_flags[flag] = m.guard_flags.get(flag, 0) + 1
    timed = [v for v in verdicts if v.correct and v.speedup and v.speedup > 0]
    m.timed_samples = len(timed)
    m.samples_with_speedup_ci = sum(1 for v in timed if v.speedup_ci)
    if not by_task:
        return m
    m.exec = _task_mean(groups, lambda v: v.correct)
    for p in ps:
        key = f"{p:g}"
        m.fast[key] = _task_mean(groups, lambda v: _is_fast(v, p))
        m.fast_undecided[key] = sum(_is_undecided(v, p) for v in verdicts)
        m.fast_bounds[key] = [_task_mean(groups, lambda v: _is_fast(v, p) and not _is_undecided(v, p)),
                              _task_mean(groups, lambda v: _is_fast(v, p) or _is_undecided(v, p))]
    for k in ks:
        eligible = [vs for vs in groups if len(vs) >= k]
        m.pass_tasks[str(k)] = len(eligible)
        m.tasks_below_k[str(k)] = len(groups) - len(eligible)
        if not eligible:
            m.pass_exec[str(k)] = m.pass_fast1[str(k)] = None
            continue
        m.pass_exec[str(k)] = sum(pass_at_k(len(vs), sum(v.correct for v in vs), k) for vs in eligible) / len(eligible)
        m.pass_fast1[str(k)] = sum(pass_at_k(len(vs), sum(_is_fast(v, 1.0) for v in vs), k)
                                   for vs in eligible) / len(eligible)
    if timed:
        m.geomean_speedup = math.exp(sum(math.log(v.speedup) for v in timed) / len(timed))
    timed_c = [v for v in verdicts if v.correct and v.speedup_compiled and v.speedup_compiled > 0]
    m.timed_compiled_samples = len(timed_c)
    if timed_c:
        for p in ps:
            m.fast_compiled[f"{p:g}"] = _task_mean(
                groups, lambda v: bool(v.correct and v.speedup_compiled is not None and v.speedup_compiled > p))
        m.geomean_speedup_compiled = math.exp(sum(math.log(v.speedup_compiled) for v in timed_c) / len(timed_c))
    ci = bootstrap(groups, ps, resamples=resamples, seed=seed)
    m.exec_ci, m.fast_ci, m.geomean_speedup_ci = ci.exec, ci.fast, ci.geomean_speedup
    return m


def level_name(v: Verdict) -> str:
    return f"level{v.level}" if v.level is not None else "unlabelled"


def metrics_by(verdicts: list[Verdict], key: Callable[[Verdict], str], ps: Iterable[float] = (0, 0.5, 1, 1.5, 2),
               ks: Iterable[int] = (1,), *, resamples: int = RESAMPLES, seed: int = SEED,
               overall: bool = True) -> dict[str, MetricSet]:
    """{group: metrics} over the groups `key` puts the verdicts in (sorted by
    name), then "all" over every verdict (with `overall`)."""
    ps, ks = list(ps), list(ks)
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        groups[key(v)].append(v)
    out = {name: compute(groups[name], ps, ks, resamples=resamples, seed=seed) for name in sorted(groups)}
    if overall:
        out["all"] = compute(verdicts, ps, ks, resamples=resamples, seed=seed)
    return out


def metrics_by_level(verdicts: list[Verdict], ps: Iterable[float] = (0, 0.5, 1, 1.5, 2),
                     ks: Iterable[int] = (1,), *, resamples: int = RESAMPLES,
                     seed: int = SEED) -> dict[str, MetricSet]:
    """{"level1": ..., "level2": ..., "all": ...} (levels that appear, sorted)."""
    return metrics_by(verdicts, level_name, ps, ks, resamples=resamples, seed=seed)
