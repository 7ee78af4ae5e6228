"""Metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from kernelmill.records import Verdict
from kernelmill.report import compute, metrics_by_level, pass_at_k


def v(task, correct, speedup=None, level=1):
    return Verdict(sample_id=f"{task}-{id(object())}", task_id=task, status="ok" if correct else "incorrect",
                   correct=correct, speedup=speedup, level=level)


def test_pass_at_k_hand_values():
    # n=5, c=2, k=1: 2/5; k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(10, 1, 10) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_pass_at_k_when_failures_fewer_than_k():
    assert pass_at_k(5, 3, 3) == 1.0


def test_exec_fast_p_and_geomean():
    # task A: 2 samples, one correct at 2x; task B: 2 samples, both correct at 0.5x and 4x
    verdicts = [v("A", True, 2.0), v("A", False), v("B", True, 0.5), v("B", True, 4.0)]
    m = compute(verdicts, ps=[0, 1, 3], ks=[1, 2])
    assert m.exec == pytest.approx((0.5 + 1.0) / 2)
    assert m.fast["0"] == pytest.approx(m.exec)
    assert m.fast["1"] == pytest.approx((0.5 + 0.5) / 2)
    assert m.fast["3"] == pytest.approx((0 + 0.5) / 2)
    assert m.pass_exec["1"] == pytest.approx(m.exec)
    assert m.pass_exec["2"] == pytest.approx(1.0)  # A: 1 - C(1,2)/C(2,2) = 1
    assert m.pass_fast1["2"] == pytest.approx(1.0)
    assert m.geomean_speedup == pytest.approx(math.exp((math.log(2) + math.log(0.5) + math.log(4)) / 3))
    assert m.statuses["ok"] == 3 and m.statuses["incorrect"] == 1


def test_correct_without_speed_is_not_fast():
    m = compute([v("A", True, None)], ps=[1], ks=[1])
    assert m.exec == 1.0 and m.fast["1"] == 0.0 and m.geomean_speedup is None


def test_tasks_with_too_few_samples_are_left_out_of_pass_at_k():
    m = compute([v("A", True, 2.0), v("B", False), v("B", True, 1.5)], ps=[1], ks=[2])
    assert m.tasks_below_k["2"] == 1
    assert m.pass_exec["2"] == pytest.approx(1.0)


def test_per_level_breakdown():
    verdicts = [v("A", True, 2.0, level=1), v("B", False, level=2)]
    levels = metrics_by_level(verdicts, ps=[1], ks=[1])
    assert list(levels) == ["level1", "level2", "all"]
    assert levels["level1"].exec == 1.0 and levels["level2"].exec == 0.0 and levels["all"].exec == 0.5
