"""95% intervals (bootstrap over tasks, speedups redrawn within speedup_ci) and undecided counts."""

from __future__ import annotations

import random

import pytest

from kernelmill.records import Verdict
from kernelmill.report import compute


def verdict(task, sample, correct, speedup=None, ci=None, level=1):
    return Verdict(sample_id=f"{task}-{sample}", task_id=task, status="ok" if correct else "incorrect",
                   correct=correct, speedup=speedup, speedup_ci=ci, level=level)


def dataset(tasks: int, samples: int = 3, seed: int = 7) -> list[Verdict]:
    """Correct with probability 0.6, log-normal speedups around 1.1x, each with a +-5% interval."""
    rng = random.Random(seed)
    out = []
    for t in range(tasks):
        for s in range(samples):
            ok = rng.random() < 0.6
            sp = rng.lognormvariate(0.1, 0.4) if ok else None
            out.append(verdict(f"t{t}", s, ok, sp, [sp * 0.95, sp * 1.05] if ok else None))
    return out


def width(ci):
    return ci[1] - ci[0]


def test_intervals_contain_the_point_and_narrow_with_more_tasks():
    small = compute(dataset(20), ps=[0.5, 1], ks=[1])
    large = compute(dataset(400), ps=[0.5, 1], ks=[1])
    for m in (small, large):
        assert m.exec_ci[0] <= m.exec <= m.exec_ci[1]
        for p in ("0.5", "1"):
            assert m.fast_ci[p][0] <= m.fast[p] <= m.fast_ci[p][1]
        assert m.geomean_speedup_ci[0] <= m.geomean_speedup <= m.geomean_speedup_ci[1]
    assert width(large.exec_ci) < width(small.exec_ci) / 2
    assert width(large.fast_ci["1"]) < width(small.fast_ci["1"]) / 2
    assert width(large.geomean_speedup_ci) < width(small.geomean_speedup_ci) / 2


def test_equal_speedups_with_tiny_intervals_give_a_tight_interval_at_the_value():
    verdicts = [verdict(f"t{t}", s, True, 2.0, [1.999, 2.001]) for t in range(30) for s in range(2)]
    m = compute(verdicts, ps=[1, 2], ks=[1])
    assert m.geomean_speedup == pytest.approx(2.0)
    assert m.geomean_speedup_ci[0] == pytest.approx(2.0, abs=1e-3)
    assert m.geomean_speedup_ci[1] == pytest.approx(2.0, abs=1e-3)
    assert m.fast_ci["1"] == [1.0, 1.0] and m.exec_ci == [1.0, 1.0]
    # 2.0 > 2 is false, but every interval holds 2: fast_2 hinges entirely on timing noise
    assert m.fast["2"] == 0.0 and m.fast_undecided["2"] == 60 and m.fast_undecided["1"] == 0
    assert m.fast_bounds["2"] == [0.0, 1.0]
    assert m.samples_with_speedup_ci == m.timed_samples == 60


def test_measurement_intervals_widen_the_speedup_interval():
    exact = [verdict(f"t{t}", 0, True, 1.0) for t in range(30)]
    noisy = [verdict(f"t{t}", 0, True, 1.0, [0.5, 2.0]) for t in range(30)]
    assert compute(exact, ps=[1], ks=[1]).geomean_speedup_ci == [1.0, 1.0]
    ci = compute(noisy, ps=[1], ks=[1]).geomean_speedup_ci
    assert ci[0] < 0.9 and ci[1] > 1.1 and ci[0] * ci[1] == pytest.approx(1.0, rel=0.1)


def test_undecided_counts_the_intervals_that_straddle_p():
    verdicts = [
        verdict("A", 0, True, 1.02, [0.97, 1.08]),  # fast_1 by its point, but its interval holds 1
        verdict("A", 1, True, 0.98, [0.95, 1.01]),  # slow by its point, interval holds 1
        verdict("B", 0, True, 1.30, [1.20, 1.40]),  # clearly fast at 1, undecided at 1.3
        verdict("B", 1, False, None),
    ]
    m = compute(verdicts, ps=[1, 1.3, 2], ks=[1])
    assert m.fast_undecided == {"1": 2, "1.3": 1, "2": 0}
    assert m.fast["1"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    # all undecided slow: A 0/2, B 1/2; all fast: A 2/2, B 1/2
    assert m.fast_bounds["1"] == pytest.approx([0.25, 0.75])
    assert m.fast_bounds["1.3"] == pytest.approx([0.0, 0.25])


def test_same_verdicts_in_any_order_give_the_same_intervals():
    verdicts = dataset(40)
    shuffled = verdicts[::-1]
    a, b = compute(verdicts, ps=[1], ks=[1]), compute(shuffled, ps=[1], ks=[1])
    assert (a.exec_ci, a.fast_ci, a.geomean_speedup_ci) == (b.exec_ci, b.fast_ci, b.geomean_speedup_ci)
    c = compute(verdicts, ps=[1], ks=[1], seed=1)
    assert c.fast_ci != a.fast_ci


def test_no_resamples_means_no_intervals():
    m = compute(dataset(10), ps=[1], ks=[1], resamples=0)
    assert m.exec_ci is None and m.fast_ci == {"1": None} and m.geomean_speedup_ci is None
    assert m.fast["1"] > 0


def test_malformed_speedup_ci_is_ignored():
    verdicts = [verdict(f"t{t}", 0, True, 1.5, [2.0, 1.0]) for t in range(5)]
    m = compute(verdicts, ps=[1.5], ks=[1])
    assert m.fast_undecided["1.5"] == 0 and m.geomean_speedup_ci == pytest.approx([1.5, 1.5])
