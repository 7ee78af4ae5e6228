"""Candidates that compute nothing, and the check of whether a task's check lets them
through: zeros, a constant, a per-index mean, shape-matched noise, the input itself.

`kernelmill tasks audit` runs them on a task's own input sets (tasks/audit.py); `verify`
runs them on a task's trial sets beside every correct verdict, so a verdict on a task
that cannot tell a correct candidate from one that computes nothing says so (`weak_task`).
Constants, means and the noise's scale are fitted once, on the first set's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .correctness import compare, flatten_outputs
from .tree import with_leaves

NA = "n/a"
NOISE_SEED = 20240601
# the candidates whose pass makes a task weak (shape_only is the sanity row)
WEAK_BY = ("zeros", "constant", "mean_only", "input_copy")


def work_copy(t):
    import torch

    return t.detach().to(torch.float64 if t.dtype == torch.float64 else torch.float32)


def finite_mean_std(t) -> tuple[float, float]:
    import torch

    w = work_copy(t)
    if w.numel() == 0:
        return 0.0, 0.0
    fin = torch.isfinite(w)
    if not bool(fin.all()):
        w = w[fin]
        if w.numel() == 0:
            return 0.0, 0.0
    return float(w.mean()), float(w.std(unbiased=False)) if w.numel() > 1 else 0.0


def _as_dtype(values, like):
    """Cast fitted float values to the output's dtype (rounded for integers)."""
    import torch

    if like.dtype == torch.bool:
        return values >= 0.5
    if not (like.is_floating_point() or like.is_complex()):
        return values.round().to(like.dtype)
    return values.to(like.dtype)


def _axis_means(t, keep: int):
    """Mean over every dim but `keep` (keepdim), ignoring non-finite values."""
    import torch

    w = work_copy(t)
    fin = torch.isfinite(w)
    dims = [d for d in range(w.dim()) if d != keep % w.dim()]
    s = torch.where(fin, w, torch.zeros_like(w)).sum(dim=dims, keepdim=True)
    c = fin.sum(dim=dims, keepdim=True).clamp_min(1)
    return s / c


@dataclass
class Fitted:
    """What the hard-coded candidates keep from the first input set's output."""
    mean: float
    std: float
    channel: Any = None  # mean per index of dim 1, keepdim (None under 2 dims)
    last: Any = None  # mean per index of the last dim, keepdim


def fit(t) -> Fitted:
    mean, std = finite_mean_std(t)
    if t.dim() >= 2 and t.numel():
        return Fitted(mean, std, channel=_axis_means(t, 1), last=_axis_means(t, -1))
    return Fitted(mean, std)


class TrivialCheck:
    """The trivial candidates (zeros, a constant, a per-index mean, shape-matched noise, the
    input) against a reference's outputs, one input set at a time (`add`): which of them
    every set so far lets through the check (`alive`), why the others failed. The audit
    runs it on its own sets; `verify` on a task's trial sets, to say beside a verdict that
    the task cannot tell a correct candidate from one that computes nothing (`weak_by`)."""

    NAMES = ("zeros", "constant", "mean_channel", "mean_last", "shape_only", "input_copy")

    def __init__(self, rule):
        self.rule = rule
        self.alive = {n: True for n in self.NAMES}
        self.failures: dict[str, str] = {}
        self.notes: dict[str, str] = {}
        self.fitted: list[Fitted | None] | None = None
        self.sets = 0

    def add(self, out, first_input, label: str) -> None:
        import torch

        leaves = flatten_outputs(out)
        if self.fitted is None:
            self.fitted = [fit(t) if isinstance(t, torch.Tensor) else None for _, t in leaves]
        gen = torch.Generator().manual_seed(NOISE_SEED + self.sets)
        self.sets += 1
        for name in self.NAMES:
            if not self.alive[name]:
                continue
            cand = []
            for (_, r), f in zip(leaves, self.fitted):
                if not isinstance(r, torch.Tensor):
                    cand.append(r)  # plain numbers are given as they are
                    continue
                value, note = trivial_output(name, r, f, first_input, gen)
                if value is None:
                    self.alive[name], self.failures[name] = False, NA + ": " + note
                    break
                if note:
                    self.notes[name] = note
                cand.append(value)
            if not self.alive[name]:
                continue
            cmp = compare(out, _rebuild(out, cand), self.rule)
            if not cmp.correct:
                self.alive[name] = False
                self.failures[name] = f"{label}: {cmp.message}"

    def weak_by(self) -> list[str]:
        """The trivial candidates (of WEAK_BY) that passed every set added."""
        if not self.sets:
            return []
        passed = {n for n, ok in self.alive.items() if ok}
        if passed & {"mean_channel", "mean_last"}:
            passed.add("mean_only")
        return [n for n in WEAK_BY if n in passed]


def weak_note(names: list[str]) -> str:
    """The sentence a verdict carries on a task its check cannot defend."""
    said = ", ".join(n.replace("_", " ") for n in names)
    return (f"weak task: its check also passes {said} on these inputs, so a correct verdict says little "
            f"(kernelmill tasks audit; docs/task_audit.md)")


def trivial_output(name: str, ref, fitted: Fitted, first_input, gen) -> tuple[Any, str]:
    """One trivial candidate's value for one reference output leaf, and a note
    (how the input was fitted to the output, for ``input_copy``). Returns
    (None, reason) where the candidate does not apply."""
    import torch

    if name == "zeros":
        return torch.zeros_like(ref), ""
    if name == "constant":
        return _as_dtype(torch.full(ref.shape, fitted.mean, dtype=torch.float64, device=ref.device), ref), ""
    if name in ("mean_channel", "mean_last"):
        means = fitted.channel if name == "mean_channel" else fitted.last
        if means is None:
            means = torch.tensor(fitted.mean, dtype=torch.float64, device=ref.device)
        return _as_dtype(means.expand(ref.shape), ref), ""
    if name == "shape_only":
        noise = torch.randn(ref.shape, generator=gen, dtype=torch.float32)
        return _as_dtype((noise.double() * fitted.std + fitted.mean).to(ref.device), ref), ""
    if name == "input_copy":
        if first_input is None:
            return None, "no tensor input"
        flat = first_input.detach().reshape(-1)
        n, m = ref.numel(), flat.numel()
        if tuple(first_input.shape) == tuple(ref.shape):
            mode = "as is"
        elif m == n:
            mode = "reshaped"
        elif m > n:
            mode, flat = "truncated", flat[:n]
        elif m == 0:
            return None, "empty input"
        else:
            mode, flat = "zero-padded", torch.cat([flat, torch.zeros(n - m, dtype=flat.dtype, device=flat.device)])
        return flat.to(ref.device).to(ref.dtype).reshape(ref.shape), mode
    raise ValueError(f"unknown trivial candidate {name!r}")


def _rebuild(out: Any, leaves: list[Any]) -> Any:
    """`out`'s tuple/list structure with its leaves replaced, in order."""
    return with_leaves(out, leaves)


def weak_by(outputs: list, inputs: list, rule) -> list[str]:
    """The trivial candidates that every (reference output, input set) pair lets through."""
    import torch

    check = TrivialCheck(rule)
    for i, (out, args) in enumerate(zip(outputs, inputs)):
        first = next((x for x in (args if isinstance(args, (list, tuple)) else [args])
                      if isinstance(x, torch.Tensor)), None)
        check.add(out, first, f"trial {i + 1}")
        if not check.weak_by():
            return []
    return check.weak_by()
