"""Task type (single operator / fusion / network) of a KernelBench-format task.

ConCuR's part (c) balances single-operator tasks against fusion and network
tasks, so every task needs a type. Task metadata (`Task.op_type`) wins; when
it is missing the type is inferred from what the reference program *does*:

1. The task file is executed in a fresh module namespace (task files are
   trusted reference programs, not candidates) and `Model(*get_init_inputs())`
   is called on `get_inputs()` under a `TorchFunctionMode` that records every
   torch function reached from `Model.forward`. Only the outermost call is
   seen (the mode is off while a call it intercepted runs), so `F.gelu` counts
   once, not as its decomposition.
2. Tracing runs on the `meta` device first (no arithmetic, any size); if the
   program needs real values it is run on CPU with the task's `small` size
   profile when it has one. Requests for a CUDA device are redirected.
3. Names are canonicalised: `torch.add`, `Tensor.add`, `Tensor.__add__`,
   `__radd__`, `__iadd__` and `add_` are all `add`.
4. Ops that only describe, re-view or allocate data are not counted (attribute
   reads such as `.shape`, `size`, `dim`, `view`, `reshape`, `permute`,
   `transpose`, indexing, `contiguous`, dtype/device moves, `zeros`/`empty`
   and friends): they compute nothing the task is about.

Rule (documented in docs/FORMATS.md, section curation):
  single  : exactly 1 distinct counted op;
  fusion  : 2 or more distinct ops, at most `network_calls` (default 12)
            counted calls in total;
  network : more than `network_calls` counted calls (deep stacks of layers).
A program that executes no counted op is `single` only if it is empty of
compute; we report it as `None` (unknown) instead, with the reason.
"""

from __future__ import annotations

import contextlib
import types
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..records import Task

NETWORK_CALLS = 12

# Ops that move no data through a kernel of their own.
_NOT_COUNTED = {
    "size", "dim", "shape", "numel", "ndim", "stride", "storage_offset", "is_contiguous",
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
    "permute", "transpose", "t", "T", "mT", "expand", "expand_as", "contiguous", "narrow",
    "getitem", "setitem", "len", "iter", "unbind", "split", "chunk", "select",
    "to", "cuda", "cpu", "type", "float", "half", "double", "bfloat16", "int", "long", "bool",
    "device", "dtype", "is_cuda", "requires_grad", "data", "detach", "item", "tolist",
    "get", "set", "format", "repr", "hash", "eq_identity", "dir", "bool_",
    "requires_grad_", "retain_grad", "element_size", "nelement", "layout", "names",
    # allocations (hidden-state inits and the like) fill memory, they compute nothing
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "tensor", "as_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
}


@dataclass
class OpTrace:
    """What one forward pass executed."""

    calls: Counter = field(default_factory=Counter)
    device: str = ""
    error: str | None = None

    @property
    def distinct(self) -> int:
        return len(self.calls)

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def canonical_op(func: Any) -> str:
    """`Tensor.__radd__` -> `add`; `torch.nn.functional.relu` -> `relu`."""
    name = getattr(func, "__name__", None) or repr(func)
    if name == "__get__":  # property read: Tensor.shape.__get__
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", "attribute")
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        if name[:1] in "ri" and name[1:] in _DUNDER_ARITH:
            name = name[1:]
    if name.endswith("_") and not name.endswith("__") and len(name) > 1:
        name = name[:-1]  # in-place twin of the same op
    return _ALIASES.get(name, name)


_DUNDER_ARITH = {"add", "sub", "mul", "truediv", "floordiv", "matmul", "pow", "mod", "and", "or", "xor",
                 "lshift", "rshift"}
_ALIASES = {"truediv": "div", "divide": "div", "multiply": "mul", "subtract": "sub", "neg": "neg",
            "negative": "neg", "absolute": "abs", "clip": "clamp", "greater": "gt", "less": "lt"}


def _mode_class():
    import torch
    from torch.overrides import TorchFunctionMode

    class Recorder(TorchFunctionMode):
        def __init__(self, device: str):
            super().__init__()
            self.device = device
            self.calls: Counter = Counter()
            self.active = False

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = canonical_op(func)
            # Redirect device requests (`.cuda()`, `device="cuda"`) so a CPU
            # machine can trace programs written for a GPU.
            if name == "cuda":
                return args[0]
            if "device" in kwargs:
                kwargs["device"] = self.device
            if name == "to":
                args = tuple(self.device if _is_device(a) else a for a in args)
            if self.active and name not in _NOT_COUNTED:
                self.calls[name] += 1
            return func(*args, **kwargs)

    return torch, Recorder


def _is_device(value: Any) -> bool:
    import torch

    if isinstance(value, torch.device):
        return True
    return isinstance(value, str) and value.split(":")[0] in ("cuda", "cpu", "meta", "mps", "xpu")


def trace_ops(code: str, where: str = "<task>", sizes: dict[str, Any] | None = None) -> OpTrace:
    """Trace `Model.forward` of a task program; see the module docstring."""
    attempts = [("meta", None)]
    small = (sizes or {}).get("small")
    attempts.append(("cpu", small))
    last_error = None
    for device, overrides in attempts:
        try:
            return _trace_once(code, where, device, overrides)
        except Exception as exc:  # the program's own errors: try the next way
            last_error = f"{device}: {type(exc).__name__}: {exc}"
    return OpTrace(error=last_error)


def _trace_once(code: str, where: str, device: str, overrides: dict[str, Any] | None) -> OpTrace:
    torch, Recorder = _mode_class()
    module = types.ModuleType("kernelmill_task_trace")
    module.__file__ = where
    exec(compile(code, where, "exec"), module.__dict__)  # noqa: S102 - trusted reference program
    for key, value in (overrides or {}).items():
        setattr(module, key, value)
    recorder = Recorder(device)
    with torch.no_grad(), torch.device(device), recorder, _quiet():
        init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
        model = module.Model(*init)
        inputs = module.get_inputs()
        recorder.active = True  # count only what forward executes
        model(*inputs)
        recorder.active = False
    return OpTrace(calls=recorder.calls, device=device)


@contextlib.contextmanager
def _quiet():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def classify(trace: OpTrace, network_calls: int = NETWORK_CALLS) -> str | None:
    if trace.error is not None or trace.distinct == 0:
        return None
    if trace.distinct == 1:
        return "single"
    return "network" if trace.total > network_calls else "fusion"


@dataclass
class TaskType:
    task_id: str
    op_type: str | None
    origin: str  # "metadata" | "traced" | "unknown"
    ops: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def task_types(tasks: list[Task], network_calls: int = NETWORK_CALLS) -> dict[str, TaskType]:
    """Type of every task: metadata first, tracing otherwise."""
    out: dict[str, TaskType] = {}
    for t in tasks:
        if t.op_type:
            out[t.task_id] = TaskType(t.task_id, t.op_type, "metadata")
            continue
        trace = trace_ops(t.code, where=t.task_id, sizes=t.sizes)
        kind = classify(trace, network_calls)
        error = trace.error or (None if kind else "forward executed no counted torch op")
        out[t.task_id] = TaskType(t.task_id, kind, "traced" if kind else "unknown",
                                  dict(trace.calls), error)
    return out
