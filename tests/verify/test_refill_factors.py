"""Timed calls' inputs (measure/inputs.refill): every element gets its own factor, so no
timed input is a rescaled copy of another (a cache of answers up to a scale replays them:
tests/guards/test_scaled_replay.py)."""

import torch

from kernelmill.verify.measure.inputs import SPREAD, Factors, InputPool, refill


def test_two_refills_of_one_set_are_not_one_scale_apart():
    src = [torch.randn(64, 64)]
    a, b = [torch.empty(64, 64)], [torch.empty(64, 64)]
    factors = Factors()
    refill(a, src, 1.0, factors)
    refill(b, src, 1.0, factors)
    ratio = a[0] / b[0]
    assert float(ratio.std()) > 0.05  # one scale apart would give a constant ratio
    assert not torch.allclose(a[0], b[0])


def test_factors_stay_in_their_band_and_keep_signs_and_zeros():
    src = torch.randn(10_000)
    src[::7] = 0.0
    dst = [torch.empty_like(src)]
    refill(dst, [src], 0.8, Factors())
    nz = src != 0
    f = dst[0][nz] / src[nz]
    assert float(f.min()) >= 0.8 * (1 - SPREAD) - 1e-6 and float(f.max()) <= 0.8 * (1 + SPREAD) + 1e-6
    assert bool((dst[0][~nz] == 0).all())
    assert bool((torch.sign(dst[0]) == torch.sign(src)).all())


def test_no_scale_copies_the_set_exactly_and_integers_are_copied():
    src = [torch.randn(5, 3), torch.randint(0, 9, (4,)), 7]
    dst = [torch.empty(5, 3), torch.empty(4, dtype=torch.int64), 7]
    refill(dst, src, None, Factors())
    assert torch.equal(dst[0], src[0]) and torch.equal(dst[1], src[1])
    refill(dst, src, 1.3, Factors())
    assert torch.equal(dst[1], src[1])  # integer data (indices, targets) is never scaled


def test_low_precision_and_fp8_inputs_are_drawn_too():
    for dtype in (torch.float16, torch.bfloat16, torch.float8_e4m3fn):
        src = torch.randn(256).to(dtype)
        dst = torch.empty_like(src)
        refill([dst], [src], 1.0, Factors())
        f = dst.float()[src.float() != 0] / src.float()[src.float() != 0]
        assert float(f.std()) > 0.02, dtype
        assert float(f.min()) > 0.6 and float(f.max()) < 1.4, dtype  # the band, after rounding


def test_the_pool_draws_with_its_own_generator():
    src = [torch.randn(100)]
    pool = InputPool(src)
    torch.manual_seed(0)
    state = torch.get_rng_state()
    pool.prepare(src, 1.0)
    assert torch.equal(state, torch.get_rng_state())  # the process's own stream untouched
    assert len(pool.factors.generators) == 1


def test_a_cpu_bank_gives_each_call_its_own_window():
    factors = Factors()
    src = torch.randn(3000)
    seen = set()
    for _ in range(20):
        dst = torch.empty_like(src)
        refill([dst], [src], 1.0, factors)
        seen.add(round(float(dst[0] / src[0]), 6))
    assert len(factors.banks) == 1 and len(seen) >= 18  # offsets drawn from 65,536


def test_a_torch_mode_does_not_see_the_refills():
    from torch.overrides import TorchFunctionMode

    seen = []

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    src = [torch.randn(100)]
    pool = InputPool(src)
    with Watch():
        pool.prepare(src, 1.0)
        pool.prepare(src, None, queued=False)  # a checked call's plain copy
    assert seen == []


def test_modes_left_on_names_a_candidates_mode_not_a_default_device():
    from torch.overrides import TorchFunctionMode

    from kernelmill.verify.measure.environment import modes_left_on

    class Watch(TorchFunctionMode):
        pass

    assert modes_left_on() == []
    with torch.device("cpu"):  # torch's own DeviceContext mode
        assert modes_left_on() == []
        with Watch():
            assert modes_left_on() == ["Watch"]


def test_a_checked_calls_set_is_exact_after_the_same_work():
    src = [torch.randn(50, 7), torch.randn(3).to(torch.bfloat16), torch.arange(4)]
    pool = InputPool(src)
    for _ in range(3):
        pool.prepare(src, 1.3)
        exact = pool.prepare(src, None, queued=False)  # a checked call: factors and scale of 1
        assert all(torch.equal(a, b) for a, b in zip(exact, src))
    assert len(pool.factors.ones) == 2  # the ones bank per floating input size
