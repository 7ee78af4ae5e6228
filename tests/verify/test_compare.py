"""correctness.compare: the equal fast path, the fp32 work dtype for narrow
floats, NaN/inf handling and the messages that name the worst element."""

import math

import pytest
import torch

from kernelmill.verify.measure.correctness import CheckRule, compare


def test_bitwise_equal_outputs_pass_with_zero_error():
    r = torch.randn(64, 32)
    res = compare(r, r.clone())
    assert res.correct and res.max_abs_err == 0.0 and res.message == ""


@pytest.mark.parametrize("dtype, small, large", [(torch.float16, 5e-3, 5e-2), (torch.bfloat16, 5e-3, 5e-2),
                                                 (torch.float32, 5e-5, 5e-3)])
def test_tolerance_per_dtype(dtype, small, large):
    r = torch.ones(1000, dtype=dtype)
    near, far = r.clone(), r.clone()
    near[7] = float(r[7]) + small
    far[123] = float(r[123]) + large
    assert compare(r, near).correct
    res = compare(r, far)
    assert not res.correct
    assert "1 of 1000 elements" in res.message and "worst at (123,)" in res.message


def test_float64_errors_stay_in_float64():
    # a 1e-9 difference on values near 1e4 vanishes in fp32 (its spacing there is ~1e-3)
    r = torch.full((10,), 1e4, dtype=torch.float64)
    c = r.clone()
    c[3] += 1e-9
    res = compare(r, c, CheckRule(tolerances={"float64": (1e-12, 0.0)}))
    assert not res.correct and res.max_abs_err == pytest.approx(1e-9, rel=1e-3)


def test_nan_and_inf_places_must_match():
    r = torch.tensor([1.0, math.nan, math.inf, -math.inf])
    assert compare(r, r.clone()).correct  # torch.equal is False with NaN: the slow path agrees
    moved = torch.tensor([math.nan, 1.0, math.inf, -math.inf])
    assert "NaN in 2 places" in compare(r, moved).message
    flipped = torch.tensor([1.0, math.nan, -math.inf, -math.inf])  # inf where the reference has -inf
    assert "1 infinite values" in compare(r, flipped).message
    finite_for_inf = torch.tensor([1.0, math.nan, 3e38, -math.inf])
    assert not compare(r, finite_for_inf).correct
    near = torch.tensor([1.00001, math.nan, math.inf, -math.inf])  # errors measured where both are finite
    res = compare(r, near)
    assert res.correct and 0 < res.max_rel_err < 1e-4 and 0 < res.max_abs_err < 1e-4
    assert not compare(r, near, CheckRule(mode="max_norm_abs", norm_tol=1e-7)).correct  # scale from finite values


def test_max_norm_rule_on_half_precision():
    r = torch.linspace(-4, 4, 256, dtype=torch.float16)
    c = r.clone()
    c[0] += 0.01  # 0.01 / 4 = 2.5e-3 > 1e-3
    res = compare(r, c, CheckRule(mode="max_norm_abs"))
    assert not res.correct and "max normalised abs error" in res.message
