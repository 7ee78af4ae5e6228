"""Input sets for guarded runs: several distributions, declared shape variants,
and the in-place refills that make every timed call see new data.

All of this runs in the supervisor (which never imports the candidate), except
`refill`, which the candidate's process uses between timed calls.

Why several distributions: a candidate that computes part of a mean, a norm or
a loss over a large standard-normal input lands close to the right answer
(item 11 of docs/guards.md). The task's own ``get_inputs`` is called with
``torch.randn`` swapped for a variant, so whatever the task does with the draws
afterwards (softmax, abs, integer targets from ``randint``) still holds.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable

import torch

from .tree import map_tensors, tensors_in  # noqa: F401 - tensors_in: this module's users take it from here

_REAL_RANDN = torch.randn


def _uniform_offset(*size, **kw):
    # mean 0.5, variance 1: a sum or mean no longer centres on zero
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.uniform_(-math.sqrt(3.0), math.sqrt(3.0)).add_(0.5)
    return t


def _laplace(*size, **kw):
    # heavier tails than the normal (variance 1), still finite in fp16
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        u = torch.rand(t.shape, dtype=torch.float64).clamp_(1e-12, 1 - 1e-12) - 0.5
        lap = -torch.sign(u) * torch.log1p(-2 * u.abs()) / math.sqrt(2.0)
        t.copy_(lap.to(t.dtype))
    return t


def _wide_range(*size, **kw):
    # a large dynamic range (|x| up to ~300 in fp32, still finite in fp16): an exp
    # without its max shift overflows, a sum loses its small terms (issue 42)
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.mul_(64.0 if t.dtype not in (torch.float16, torch.bfloat16) else 8.0)
    return t


def _non_negative(*size, **kw):
    # an easy case a fast path may assume (all inputs >= 0): it must give the same answers
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.abs_()
    return t


def _large_offset(*size, **kw):
    # a mean far above the spread (+64; +8 in 16-bit): a one-pass variance (E[x^2] - E[x]^2)
    # cancels catastrophically here, a shifted or Welford one does not
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.add_(64.0 if t.dtype not in (torch.float16, torch.bfloat16) else 8.0)
    return t


def _non_positive(*size, **kw):
    # all inputs <= 0: a running max started at 0 instead of -inf shows here
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.abs_().neg_()
    return t


def _ties(*size, **kw):
    # few distinct values (multiples of 1/2, mostly in -2..2): ties everywhere and the row
    # maximum repeated (clustered maxima), where argmax/topk/sort must keep the reference's
    # tie order and a max-reduction must not pick "any" of them; a kernel that assumes
    # distinct values takes a shortcut here (items 32 and 33)
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.mul_(2.0).round_().div_(2.0)
    return t


def _ascending(t: torch.Tensor) -> torch.Tensor:
    """`t` sorted along its last dimension, in place."""
    if t.dim() and t.shape[-1] > 1:
        with torch.no_grad():
            t.copy_(torch.sort(t, dim=-1).values)
    return t


def _sorted_rows(*size, **kw):
    # ascending along the last dimension: a scan, a search or a "prefix decides" shortcut
    # that only holds on shuffled data shows here (item 32)
    return _ascending(_REAL_RANDN(*size, **kw))


def _rising_wide(*size, **kw):
    # ascending rows at the wide range: every row's maximum sits at its end, far above its
    # start (~+250 in fp32), so a reduction that reads only a prefix of a row (the first tile,
    # the first warp's share) and then exponentiates the rest overflows (item 32's "a prefix
    # that decides"); the usual draws put a row's maximum anywhere, within a few units of the rest
    return _ascending(_wide_range(*size, **kw))


def _small_scale(*size, **kw):
    # values ~1e-3 (2^-6 in 16-bit types, whose normal range ends at 6e-5): the squares are
    # ~1e-6, the size of a norm's epsilon, so an epsilon dropped, moved or mistyped changes
    # the output by tens of percent where the usual draws hide it under 1e-6
    t = _REAL_RANDN(*size, **kw)
    with torch.no_grad():
        t.mul_(1e-3 if t.dtype not in (torch.float16, torch.bfloat16) else 2.0 ** -6)
    return t


DISTRIBUTIONS: dict[str, Callable[..., torch.Tensor] | None] = {
    "normal": None,  # the task's own draws
    "uniform_offset": _uniform_offset,
    "laplace": _laplace,
}
# structure-aware draws, in the trials of `--guards strict` after the three above (written
# as substitutes for torch.randn rather than Hypothesis strategies: the task's own
# get_inputs draws its inputs, and only its draws can be swapped; tests/verify/test_oracle.py
# checks these with Hypothesis)
STRUCTURED: dict[str, Callable[..., torch.Tensor]] = {
    "wide_range": _wide_range,
    "non_negative": _non_negative,
    "non_positive": _non_positive,
    "large_offset": _large_offset,
    "ties": _ties,
    "sorted_rows": _sorted_rows,
    "rising_wide": _rising_wide,
    "small_scale": _small_scale,
}


@contextlib.contextmanager
def _randn_as(fn):
    if fn is None:
        yield
        return
    torch.randn = fn
    try:
        yield
    finally:
        torch.randn = _REAL_RANDN


def draw_inputs(ref_mod, seed: int, distribution: str, overrides: dict | None = None) -> list:
    """``ref_mod.get_inputs()`` under `seed`, with randn drawing from `distribution`
    and module-level sizes temporarily set to `overrides` (a shape variant)."""
    saved = {}
    for key, value in (overrides or {}).items():
        saved[key] = getattr(ref_mod, key, None)
        setattr(ref_mod, key, value)
    try:
        torch.manual_seed(seed)
        with _randn_as({**DISTRIBUTIONS, **STRUCTURED}[distribution]):
            drawn = list(ref_mod.get_inputs())
        return _capped(drawn) if distribution in ("wide_range", "rising_wide") else drawn
    finally:
        for key, value in saved.items():
            setattr(ref_mod, key, value)


# the wide-range draw's largest magnitude for float32/float64 inputs: past float32's exp
# range (88), so an exp without its max shift still overflows, and no further. A task that
# scales its own randn (`torch.randn(...) * 30`) would otherwise compound with the draw's x64
# (|x| ~ 9000): there a standard formula such as exp(x - logsumexp(x)) is 2e-4 off where
# torch.softmax is 7e-8 off, and an honest candidate failed --guards strict on the GPU
# (builtin level1/24_Softmax torch__ok, issue 42's controls must stay clean)
WIDE_MAX = 300.0


def _capped(drawn: list) -> list:
    def cap(t: torch.Tensor) -> torch.Tensor:
        if t.dtype not in (torch.float32, torch.float64) or not t.numel():
            return t
        top = float(t.detach().abs().max())
        if top > WIDE_MAX and math.isfinite(top):
            with torch.no_grad():
                t.mul_(WIDE_MAX / top)
        return t

    return [map_tensors(x, cap) if isinstance(x, (torch.Tensor, list, tuple, dict)) else x for x in drawn]


def warm_draws(device: torch.device) -> None:
    """Launch once each kernel that drawing the input sets uses (every distribution in
    the usual dtypes, integer draws, the clone and the comparison of the mutation check),
    so that a run's first draw does not load them: CUDA loads a kernel on its first launch
    in a process, and every run's supervisor is a new process. Cheap; a spare's warm-up."""
    with torch.device(device), torch.no_grad():
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            for fn in (*DISTRIBUTIONS.values(), *STRUCTURED.values()):
                torch.manual_seed(0)
                with _randn_as(fn):
                    x = torch.randn(4096, dtype=dtype)
                torch.equal(x, x.clone())
            torch.rand(4096, dtype=dtype)
        for dtype in (torch.int64, torch.int32):
            y = torch.randint(0, 10, (4096,), dtype=dtype)
            torch.equal(y, y.clone())
        torch.zeros(4096).normal_().uniform_()
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def warm_checks(device: torch.device) -> None:
    """Launch once each kernel the candidate's process runs around the candidate's calls
    (clones and comparisons of inputs and outputs, the NaN fill of a returned output, the
    in-place refill and rescale of timing inputs, the one-element launch probe), so that
    the first check of every candidate does not load them: a candidate's process is new
    for every candidate (`warm_draws` is the supervisor's side). A warm-up step."""
    with torch.device(device), torch.no_grad():
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool):
            x = torch.ones(4096, dtype=dtype)
            y = x.clone()
            torch.equal(x, y)
            y.copy_(x)
            if dtype.is_floating_point:
                y.mul_(1.5)
                y.fill_(float("nan"))
        torch.zeros(1).add_(1)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def trial_count(trials: int, strict: bool = False) -> int:
    """How many correctness trials run: `trials`, and under strict guards at least one
    of every distribution (the usual and the structured ones)."""
    return max(trials, len(DISTRIBUTIONS) + len(STRUCTURED)) if strict else trials


def distribution_for(trial: int, strict: bool = False) -> str:
    names = list(DISTRIBUTIONS) + (list(STRUCTURED) if strict else [])
    return names[trial % len(names)]


def shape_variants(ref_mod) -> list[dict]:
    """Extra sizes a task declares (``SHAPE_VARIANTS = [{"batch_size": 3}, ...]``):
    module-level names that ``get_inputs`` reads; the model is not rebuilt."""
    variants = getattr(ref_mod, "SHAPE_VARIANTS", None) or []
    if not isinstance(variants, (list, tuple)) or not all(isinstance(v, dict) for v in variants):
        raise ValueError("SHAPE_VARIANTS must be a list of dicts of module-level sizes")
    return [dict(v) for v in variants]




class InputPool:
    """The inputs of timed calls: every call sees fresh values at a fresh address.

    Each input tensor lives in one buffer a few strides longer than itself; call i
    views it `SHIFT_BYTES * (i % slots)` bytes further in (256 B: float4, TMA and
    cp.async alignments hold), and the values are refilled from a drawn set times a
    scale the caller draws (the supervisor's per-run secret: `next_scales`) and a
    fresh factor per element (`refill`), so a cache keyed on pointers, on contents
    or on contents up to a scale misses, as in SOL-ExecBench's shifting pool.
    Memory stays the inputs' own size plus `slots` shifts (a 500 MB input
    costs 500 MB + 2 KB). A non-contiguous input keeps one buffer (its strides
    cannot shift safely) and is refilled in place."""

    SHIFT_BYTES = 256

    def __init__(self, template: Any, slots: int = 8):
        self.template, self.slots = template, max(1, slots)
        self.backing: list[tuple[torch.Tensor, int] | torch.Tensor] = []
        for t in tensors_in(template):
            if t.is_contiguous() and t.numel():
                step = max(1, self.SHIFT_BYTES // t.element_size())
                self.backing.append((torch.empty(t.numel() + step * (self.slots - 1), dtype=t.dtype,
                                                 device=t.device), step))
            else:
                self.backing.append(t.clone())
        self.scales: list[float] = []
        self.calls = 0
        self.current = self.views(0)
        self.factors = Factors()

    def views(self, i: int) -> Any:
        slot = i % self.slots
        out = []
        for t, b in zip(tensors_in(self.template), self.backing):
            if isinstance(b, tuple):
                buf, step = b
                out.append(buf[slot * step: slot * step + t.numel()].view(t.shape))
            else:
                out.append(b)
        return _rebuild(self.template, iter(out))

    def next_scales(self, scales: list[float]) -> None:
        """The scales of the next calls, one per call (a round's worth)."""
        self.scales = list(scales)

    def prepare(self, source: Any, scale: float | None, queued: bool = True) -> Any:
        """The next call's inputs: the next slot, filled from `source` times the next
        queued scale (`scale` when none is queued, or with `queued` False: a checked
        call's exact set). Returns them (also `self.current`)."""
        from torch.utils._python_dispatch import _disable_current_modes

        self.calls += 1
        if queued and self.scales:
            scale = self.scales.pop(0)
        # out of sight of any torch mode a candidate turned on (the refill of a timed call and
        # the plain copy of a checked one would tell them apart: environment.modes_left_on)
        with torch._C.DisableTorchFunction(), _disable_current_modes():
            self.current = self.views(self.calls)
            refill(self.current, source, scale, self.factors, same_work=True)
        return self.current


def _rebuild(template: Any, tensors) -> Any:
    return map_tensors(template, lambda _: next(tensors), dicts=True)


def nbytes(obj: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors_in(obj))


# each element's own factor on timed calls: scale * U(1 - SPREAD, 1 + SPREAD). One factor
# for the whole set (the scheme before 0.5.5) left every timed input a rescaled copy of one
# of N_TIMING_SETS sets, and a candidate that remembered its answers up to a scale replayed
# them: (s A) @ (s B) = s^2 (A @ B) made a matmul read 8.0x on a CPU, every check passed
# (docs/guards.md, item 23). Positive factors keep each value's sign and zeros.
SPREAD = 0.25


class Factors:
    """Where the per-element factors come from, per device. A GPU draws them afresh for
    every call (Philox runs at memory speed: as fast as the copy it replaces). A CPU's
    generator does not (3.8-5.2 ms against 0.14-0.22 ms for a 4 MB copy and scale, one
    thread): there each input size gets one bank of factors drawn once, `OFFSETS` longer
    than the tensor, and every call reads it from its own random offset, so two calls on
    one set see the same factors with probability 1/OFFSETS (per tensor)."""

    OFFSETS = 1 << 16

    def __init__(self) -> None:
        self.generators: dict[torch.device, torch.Generator] = {}
        self.banks: dict[int, torch.Tensor] = {}
        self.ones: dict[int, torch.Tensor] = {}  # `exact`'s banks

    def generator(self, device: torch.device) -> torch.Generator:
        gen = self.generators.get(device)
        if gen is None:
            gen = self.generators[device] = torch.Generator(device=device)
            gen.seed()  # from the OS's entropy
        return gen

    def apply(self, dst: torch.Tensor, src: torch.Tensor, scale: float, exact: bool = False) -> None:
        """dst = src * factors * scale. `exact`: factors and scale of exactly 1, through the
        same operations and memory traffic (a checked call's set must arrive after the same
        work as any other timed call's: a shorter refill is a tell)."""
        gen = self.generator(dst.device)
        spread = 0.0 if exact else SPREAD
        scale = 1.0 if exact else scale
        if dst.device.type != "cpu":
            if dst.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
                dst.uniform_(scale * (1.0 - spread), scale * (1.0 + spread), generator=gen).mul_(src)
            else:  # fp8 and other floats without a generator of their own
                factor = torch.empty(dst.shape, device=dst.device).uniform_(1.0 - spread, 1.0 + spread, generator=gen)
                dst.copy_(src.float().mul_(factor).mul_(scale))
            return
        n = dst.numel()
        banks = self.ones if exact else self.banks
        bank = banks.get(n)
        if bank is None:
            bank = banks[n] = torch.empty(n + self.OFFSETS).uniform_(1.0 - spread, 1.0 + spread, generator=gen)
        at = int(torch.randint(self.OFFSETS, (1,), generator=gen))
        factor = bank[at:at + n].view(dst.shape)
        if dst.dtype == torch.float32:
            torch.mul(src, factor, out=dst)
            dst.mul_(scale)
        else:
            dst.copy_(src.float().mul_(factor).mul_(scale))


def refill(buffers: list, source: list, scale: float | None, factors: Factors | None = None,
           same_work: bool = False) -> None:
    """Copy `source` into `buffers` in place (same storage, so a cache keyed on
    pointers, shapes or ids sees the same key with new data). With a `scale`,
    each floating element is also multiplied by its own random factor around
    `scale` (`SPREAD`, `Factors`): no two timed calls see the same values, nor
    values one scale apart. Pass the `factors` kept between calls (`InputPool`
    does); a new one is made when None. `same_work` (with no scale): the exact set,
    through the same operations as a scaled refill (`Factors.apply`'s `exact`)."""
    with torch.no_grad():
        for dst, src in zip(tensors_in(buffers), tensors_in(source)):
            if not dst.is_floating_point() or (scale is None and not same_work):
                dst.copy_(src)
            else:
                (factors or Factors()).apply(dst, src, 1.0 if scale is None else scale, exact=scale is None)
