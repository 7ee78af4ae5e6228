"""Comparing a candidate's outputs with the reference's.

Outputs are flattened (a tensor, or nested tuples/lists of tensors and
numbers) and compared leaf by leaf: count, shape, dtype, then values. Two value
rules exist:

* ``allclose`` (default): ``|c - r| <= atol + rtol * |r|`` with per-dtype
  tolerances; NaN matches only NaN at the same place;
* ``max_norm_abs`` (used for decompilation, PtxDec): ``max|c - r| / max|r|``
  must not exceed ``norm_tol`` (1e-3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from .settings import DEFAULT_TOLERANCES, CheckRule  # noqa: F401 - also this module's names
from .tree import leaves

@dataclass
class Comparison:
    correct: bool
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    message: str = ""


def flatten_outputs(out: Any, where: str = "output") -> list[tuple[str, Any]]:
    """Leaves of an output structure, each with a readable path."""
    return leaves(out, where)


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def compare(ref_out: Any, cand_out: Any, rule: CheckRule | None = None) -> Comparison:
    rule = rule or CheckRule()
    ref_leaves = flatten_outputs(ref_out)
    cand_leaves = flatten_outputs(cand_out)
    if len(ref_leaves) != len(cand_leaves):
        return Comparison(False, math.inf, math.inf,
                          f"expected {len(ref_leaves)} outputs, got {len(cand_leaves)}")
    worst_abs = worst_rel = 0.0
    for (where, r), (_, c) in zip(ref_leaves, cand_leaves):
        if not isinstance(r, torch.Tensor):
            if isinstance(c, torch.Tensor) or r != c:
                return Comparison(False, math.inf, math.inf, f"{where}: expected {r!r}, got {_short(c)}")
            continue
        if not isinstance(c, torch.Tensor):
            return Comparison(False, math.inf, math.inf, f"{where}: expected a tensor, got {type(c).__name__}")
        if tuple(c.shape) != tuple(r.shape):
            return Comparison(False, math.inf, math.inf,
                              f"{where}: shape {tuple(c.shape)} != expected {tuple(r.shape)}")
        if c.dtype != r.dtype:
            return Comparison(False, math.inf, math.inf,
                              f"{where}: dtype {_dtype_name(c)} != expected {_dtype_name(r)}")
        res = _compare_values(where, r, c, rule)
        worst_abs = max(worst_abs, res.max_abs_err)
        worst_rel = max(worst_rel, res.max_rel_err)
        if not res.correct:
            res.max_abs_err, res.max_rel_err = worst_abs, worst_rel
            return res
    return Comparison(True, worst_abs, worst_rel, "")


def _compare_values(where: str, r: torch.Tensor, c: torch.Tensor, rule: CheckRule) -> Comparison:
    if r.numel() == 0:
        return Comparison(True)
    if r.dtype == torch.bool or not (r.is_floating_point() or r.is_complex()):
        bad = (r != c)
        n_bad = int(bad.sum())
        err = float((r.to(torch.float64) - c.to(torch.float64)).abs().max())
        return Comparison(n_bad == 0, err, err, "" if n_bad == 0 else f"{where}: {n_bad} of {r.numel()} elements differ")
    if torch.equal(r, c):  # bitwise the same (and NaN-free): the common case, one cheap pass
        return Comparison(True)
    # errors of fp32 and narrower outputs are exact enough in fp32; float64 would
    # double the memory and the time of a check on 100M-element outputs
    work = torch.float32 if r.dtype in (torch.float32, torch.float16, torch.bfloat16) else torch.float64
    rw = r.detach().to(work)
    cw = c.detach().to(work)
    r_nan, c_nan = torch.isnan(rw), torch.isnan(cw)
    if not torch.equal(r_nan, c_nan):
        n = int((r_nan != c_nan).sum())
        return Comparison(False, math.inf, math.inf, f"{where}: NaN in {n} places where the reference has none (or the reverse)")
    # an infinity matches only the same infinity: no tolerance covers it (|r| = inf
    # would make atol + rtol * |r| infinite and let -inf pass for inf)
    r_inf, c_inf = torch.isinf(rw), torch.isinf(cw)
    inf_bad = (r_inf | c_inf) & (rw != cw)
    if bool(inf_bad.any()):
        n = int(inf_bad.sum())
        return Comparison(False, math.inf, math.inf,
                          f"{where}: {n} infinite values where the reference differs (value or sign)")
    finite = ~(r_nan | r_inf)  # the places left: NaN and equal infinities are exact
    diff = torch.where(finite, (cw - rw).abs(), torch.zeros_like(rw))
    max_abs = float(diff.max())
    rel = diff / torch.where(finite, rw.abs(), torch.ones_like(rw)).clamp_min(1e-12)
    max_rel = float(rel.max())
    if rule.mode == "max_norm_abs":
        scale = float(torch.where(finite, rw.abs(), torch.zeros_like(rw)).max())
        err = max_abs / scale if scale > 0 else max_abs
        ok = err <= rule.norm_tol
        msg = "" if ok else f"{where}: max normalised abs error {err:.3g} > {rule.norm_tol:g}"
        return Comparison(ok, max_abs, max_rel, msg)
    atol, rtol = rule.tolerances.get(_dtype_name(r), DEFAULT_TOLERANCES["float32"])
    bad = diff > (atol + rtol * rw.abs())
    n_bad = int(bad.sum())
    if n_bad == 0:
        return Comparison(True, max_abs, max_rel)
    idx = int(torch.argmax(diff.flatten()))
    pos = tuple(int(i) for i in _unravel(idx, r.shape))
    msg = (f"{where}: {n_bad} of {r.numel()} elements outside atol={atol:g} rtol={rtol:g}; "
           f"worst at {pos}: got {float(cw.flatten()[idx]):.6g}, expected {float(rw.flatten()[idx]):.6g} "
           f"(abs err {max_abs:.3g})")
    return Comparison(False, max_abs, max_rel, msg)


def _unravel(idx: int, shape: torch.Size) -> list[int]:
    out = []
    for dim in reversed(shape):
        out.append(idx % dim)
        idx //= dim
    return list(reversed(out))


def _short(x: Any) -> str:
    s = repr(x)
    return s if len(s) < 60 else s[:57] + "..."
