"""The float64 error budget (issue 42): a candidate's error against the reference run in
float64, held to k times the float32 reference's own error, instead of one fixed
atol/rtol.

Fixed tolerances certify plausible wrong kernels when the error they make is below
the tolerance (an approximated activation, a lost low-order term), and fail honest ones
on ill-conditioned tasks (long sums) where float32 itself is far off. Against a float64
reference the fp32 reference's own error says how hard the task is; a candidate may be
k times as far off, plus a floor of a few float32 ulps of the output's scale (for outputs
the fp32 reference gets exactly, like a ReLU):

    |cand - ref64|_max / scale  <=  k * |ref32 - ref64|_max / scale  +  floor

per output leaf, with scale = max |ref64| (norm-wise: a relative error per element would
fail every result that cancels to ~0). Decided on the first trial's inputs; the verdict
records both decisions (`measurement.checks`), and the stricter one decides
(`VerifyConfig.fp64_k`; 0 leaves it off)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

import torch

from .tree import leaves, map_tensors

FLOOR = 2.0 ** -20  # ~8 float32 ulps of the output's largest magnitude


@dataclass
class Budget:
    ok: bool
    cand_err: float  # max |cand - ref64| / scale over the leaves (the worst leaf)
    ref_err: float  # max |ref32 - ref64| / scale of that leaf
    bound: float
    where: str = ""
    message: str = ""

    def to_dict(self) -> dict:
        return {"ok": self.ok, "cand_err": self.cand_err, "ref_err": self.ref_err, "bound": self.bound,
                "where": self.where, "message": self.message}


def _to64(x: Any) -> Any:
    return map_tensors(x, lambda t: t.detach().to(torch.float64) if t.is_floating_point() else t.detach().clone())


def reference_fp64(ref: torch.nn.Module, args: Any) -> Any | None:
    """The reference's outputs in float64 on a float64 copy of it and of its inputs
    (its state as the fp32 module's); None where it cannot run so (an op without a
    float64 kernel, a dtype cast inside it): the budget is then not decided."""
    outs = references_fp64(ref, [args])
    return outs[0] if outs else None


def references_fp64(ref: torch.nn.Module, sets: list) -> list | None:
    """`reference_fp64` on several input sets with one float64 copy of the module; None
    where it cannot run so."""
    try:
        ref64 = copy.deepcopy(ref).to(torch.float64)
        with torch.no_grad():
            return [ref64(*_to64(list(args))) for args in sets]
    except Exception:  # noqa: BLE001 - any failure means "no float64 reference for this task"
        return None


def _beside(c: torch.Tensor, *refs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The references on the candidate's output's device: the float64 answers stay where the
    reference ran, the float32 ones and the outputs go to host memory when the GPU has no room
    for them (process/supervisor.py `_placed`); one leaf is moved at a time."""
    return tuple(r if r.device == c.device else r.to(c.device) for r in refs)


def budget(ref32: Any, ref64: Any, cand: Any, k: float, floor: float = FLOOR) -> Budget | None:
    """The candidate's error against `ref64` within `k` times the fp32 reference's own;
    None when the outputs cannot be compared so (other structure, no float leaves)."""
    l32, l64, lc = leaves(ref32, "output"), leaves(ref64, "output"), leaves(cand, "output")
    if not (len(l32) == len(l64) == len(lc)):
        return None
    worst: Budget | None = None
    for (where, r32), (_, r64), (_, c) in zip(l32, l64, lc):
        if not all(isinstance(t, torch.Tensor) and t.is_floating_point() for t in (r32, r64, c)):
            continue
        if c.shape != r64.shape or r64.numel() == 0:
            continue
        r32, r64 = _beside(c, r32, r64)
        finite = torch.isfinite(r64)
        if not bool(finite.any()):
            continue
        r64f = r64[finite]
        scale = float(r64f.abs().max()) or 1.0
        cand_err = float((c.detach().to(torch.float64)[finite] - r64f).abs().max()) / scale
        ref_err = float((r32.detach().to(torch.float64)[finite] - r64f).abs().max()) / scale
        bound = k * ref_err + floor
        ok = (cand_err <= bound) if math.isfinite(cand_err) else False
        b = Budget(ok, cand_err, ref_err, bound, where)
        if not ok:
            b.message = (f"{where}: error against a float64 reference {cand_err:.3g} (of the output's scale) above "
                         f"{k:g} x the float32 reference's own {ref_err:.3g} + {floor:.2g}")
            return b
        if worst is None or cand_err / bound > worst.cand_err / worst.bound:
            worst = b
    return worst


# -- class 34: an approximation whose error hides in the tails (issue 42) ---------------
#
# allclose's atol is scaled to the output's largest magnitude, so where the output is
# small (a sigmoid's or GELU's negative tail, a softmax's unlikely classes) an error of
# atol is 100% of the value: a sigmoid clamped at |x| > 10 (4.5e-5 off where the answer
# is 2e-9) passes. Against the float64 reference such an element is far off in relative
# terms while the float32 reference is not, which no honest float32 formula does beyond
# the budget's own absolute bound. Each threshold below and why:
TAIL = 1e-3  # "small": |ref64| below 1e-3 of the output's scale, where atol (1e-4 x scale) is >= 10% of it
NORMAL = 1e-30  # ...and above float32's denormals (1.2e-38) with margin: an honest exp that overflows
# to inf gives exactly 0 where torch gives 1e-40, a flush-to-zero kernel the same
CAND_REL = 1e-2  # the candidate off by over 1% of the element (an approximation's tail: 10%-10^4 x)
REF_REL = 1e-4  # while the float32 reference is within 1e-4 there (~1000 ulps): where float32 itself
# is far off (cancellation: 1 + erf(x) for x < -4) the element is ill-conditioned and says nothing
# an approximation errs over an interval of inputs, which a draw of thousands of elements
# fills many times (a clamp at |x| > 10: ~1/3 of a wide-range draw); a lone element can be a
# rounding accident at a formula's branch point or at the NORMAL bound, so a few are asked for
MIN_ELEMENTS = 4


@dataclass
class Approximation:
    count: int  # elements found in the worst leaf
    where: str
    ref: float  # the float64 value at the worst element (largest relative error)
    got: float  # the candidate's value there
    tail: int  # elements of that leaf in the tail (small, normal, float32-accurate)

    def message(self) -> str:
        return (f"{self.where}: {self.count} of {self.tail} small elements (|ref| < {TAIL:g} x the output's scale) "
                f"off by over {CAND_REL:.0%} against float64 and beyond its error budget, where the float32 "
                f"reference is within {REF_REL:g} (e.g. {self.got:.3g} for {self.ref:.3g}): an approximation")


def approximated(ref32: Any, ref64: Any, cand: Any, k: float, floor: float = FLOOR,
                 min_elements: int = MIN_ELEMENTS) -> Approximation | None:
    """Elements of float32 outputs where the candidate is relatively far off while the
    float32 reference is not, in the tail where the output is small, and off by more
    than the float64 budget allows in absolute terms (k x the float32 reference's own
    largest error + `floor`, of the output's scale): the last condition lets through what
    any float32 formula with an intermediate of the output's size makes (0.5 (tanh(x/2) + 1)
    for a sigmoid cancels to exactly 0 in the tail, 3e-8 off). None when no leaf has
    `min_elements` such elements."""
    l32, l64, lc = leaves(ref32, "output"), leaves(ref64, "output"), leaves(cand, "output")
    if not (len(l32) == len(l64) == len(lc)):
        return None
    worst: Approximation | None = None
    for (where, r32), (_, r64), (_, c) in zip(l32, l64, lc):
        if not all(isinstance(t, torch.Tensor) for t in (r32, r64, c)):
            continue
        # float32 only: the bounds above are float32's (a 16-bit output's own rounding is 1e-3)
        if r32.dtype != torch.float32 or not r64.is_floating_point() or not c.is_floating_point():
            continue
        if not (r32.shape == r64.shape == c.shape) or r64.numel() == 0:
            continue
        r32, r64 = _beside(c, r32, r64)
        r64 = r64.detach().to(torch.float64).flatten()
        finite = torch.isfinite(r64)
        if not bool(finite.any()):
            continue
        scale = float(r64[finite].abs().max())
        e32 = (r32.detach().to(torch.float64).flatten() - r64).abs()
        ec = (c.detach().to(torch.float64).flatten() - r64).abs()
        mag = r64.abs()
        tail = finite & (mag >= NORMAL) & (mag < TAIL * scale) & (e32 <= REF_REL * mag)
        # the budget's bound in absolute terms (where float32 overflowed, its error is left out:
        # those elements are not in the tail either)
        seen = e32[finite & torch.isfinite(e32)]
        bound = k * (float(seen.max()) if seen.numel() else 0.0) + floor * scale
        bad = tail & (ec > CAND_REL * mag) & (ec > bound)
        n = int(bad.sum())
        if n < min_elements:
            continue
        rel = torch.where(bad, ec / mag, torch.zeros_like(mag))
        i = int(rel.argmax())
        found = Approximation(n, where, float(r64[i]), float(c.detach().flatten()[i]), int(tail.sum()))
        if worst is None or found.count > worst.count:
            worst = found
    return worst
