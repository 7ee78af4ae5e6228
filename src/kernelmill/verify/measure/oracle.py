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
