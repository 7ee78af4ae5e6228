"""Features of a PyTorch task, for retrieval and for ordering tasks easy to hard.

The paper's query processing (SPEC.md section 2, stage 1) extracts operation
types, tensor shapes, computational patterns and memory access characteristics.
Here they come from running the reference once under two recorders:

* the torch-function recorder of `curate.optype` (what `Model.forward` calls,
  canonical names such as `relu`, `matmul`, `softmax`; device requests are
  redirected so programs written for a GPU trace on a CPU);
* a `TorchDispatchMode` under it that sees the ATen ops those calls become,
  with their shapes, and puts each in a category (gemm, conv, attention,
  softmax, norm, pooling, reduction, scan, loss, elementwise); plus
  `torch.utils.flop_counter.FlopCounterMode` for the FLOPs of GEMMs,
  convolutions and attention.

Tracing runs on the `meta` device at the task's full size first (shapes only,
nothing is computed, so any size is free); a program that needs real values
runs on the CPU with its `small` size profile instead (`Features.device` says
which).

Compute- vs memory-bound is a roofline estimate: FLOPs (GEMM/conv/attention
FLOPs as counted by PyTorch, plus one per output element of every other
compute op) over the bytes a perfectly fused kernel must move (inputs,
parameters and outputs of the model, each once). Above `ridge` FLOP/byte the
task is compute-bound. The default ridge, 20 FLOP/byte, is an H100's FP32
CUDA-core peak over its HBM bandwidth (67 TFLOP/s / 3.35 TB/s); pass the
tensor-core ridge (about 295 for BF16) to judge tensor-core kernels.
"""

from __future__ import annotations

import math
import types
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from ..records import Task

DEFAULT_RIDGE = 20.0

CATEGORIES = ("gemm", "conv", "attention", "softmax", "norm", "pooling", "reduction", "scan", "loss", "elementwise")
_CATEGORY_OF = {
    "gemm": {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "einsum", "addbmm",
             "_addmm_activation"},
    "conv": {"convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d", "cudnn_convolution", "mkldnn_convolution", "convolution_overrideable",
             "_slow_conv2d_forward", "slow_conv_transpose2d", "slow_conv3d_forward"},
    "attention": {"_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
                  "_scaled_dot_product_efficient_attention", "scaled_dot_product_attention",
                  "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_fused_attention_overrideable"},
    "softmax": {"_softmax", "_log_softmax", "softmax", "log_softmax", "_safe_softmax"},
    "norm": {"native_layer_norm", "native_batch_norm", "_native_batch_norm_legit",
             "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional", "native_group_norm",
             "rms_norm", "_fused_rms_norm", "batch_norm", "layer_norm", "group_norm", "instance_norm"},
    "pooling": {"max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
                "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
                "_adaptive_avg_pool2d", "adaptive_max_pool2d", "_adaptive_avg_pool3d", "adaptive_avg_pool3d"},
    "reduction": {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "var", "std", "logsumexp",
                  "norm", "linalg_vector_norm", "var_mean", "std_mean", "any", "all", "aminmax"},
    "scan": {"cumsum", "cumprod", "logcumsumexp", "_cummax_helper", "_cummin_helper", "cummax", "cummin"},
    "loss": {"mse_loss", "nll_loss_forward", "nll_loss", "nll_loss2d_forward", "smooth_l1_loss", "huber_loss",
             "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss", "cross_entropy_loss"},
}
_CATEGORY = {name: cat for cat, names in _CATEGORY_OF.items() for name in names}
# ATen ops that only re-view, copy or allocate: not computation of the task
_MOVES = {
    "view", "_unsafe_view", "t", "transpose", "permute", "expand", "clone", "copy_", "copy", "detach", "alias",
    "reshape", "unsqueeze", "squeeze", "slice", "select", "as_strided", "contiguous", "empty", "empty_like",
    "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill_", "fill", "zero_",
    "_to_copy", "to", "lift_fresh", "lift_fresh_copy", "split", "split_with_sizes", "unbind", "chunk", "narrow",
    "_reshape_alias", "new_empty", "new_zeros", "new_ones", "new_full", "scalar_tensor", "_local_scalar_dense",
    "unfold", "flatten", "unflatten", "expand_as", "view_as", "diagonal", "alias_copy", "cat", "stack",
    "_unsafe_index", "index", "slice_scatter", "select_scatter", "arange", "randn", "rand", "normal_",
    "uniform_", "bernoulli_", "random_", "item", "_assert_async", "resize_", "set_", "detach_", "t_",
    "transpose_", "unsqueeze_", "squeeze_", "masked_fill_", "tril", "triu",
}


@dataclass
class Features:
    """What one forward pass of a task does, and how heavy it is."""

    task_id: str
    ops: dict[str, int] = field(default_factory=dict)  # torch-level calls, canonical names
    aten: dict[str, int] = field(default_factory=dict)  # ATen compute ops
    categories: dict[str, int] = field(default_factory=dict)
    input_shapes: list[list[int]] = field(default_factory=list)
    output_shapes: list[list[int]] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    parameters: int = 0
    flops: float = 0.0
    bytes_moved: float = 0.0  # inputs + parameters + outputs, once each (ideal fusion)
    intensity: float | None = None  # flops / bytes_moved
    bound: str = "unknown"  # compute | memory | unknown
    device: str = ""  # where it was traced: meta (full size) | cpu (small profile)
    level: int | None = None
    error: str | None = None

    @property
    def distinct_categories(self) -> int:
        return len(self.categories)

    def summary(self) -> str:
        """The text the embedding model sees besides the code."""
        if self.error:
            return f"task {self.task_id}: features unavailable ({self.error})"
        cats = ", ".join(f"{c} x{n}" for c, n in sorted(self.categories.items(), key=lambda kv: (-kv[1], kv[0])))
        ops = ", ".join(sorted(self.ops))
        shapes = "; ".join("x".join(map(str, s)) or "scalar" for s in self.input_shapes)
        outs = "; ".join("x".join(map(str, s)) or "scalar" for s in self.output_shapes)
        inten = f"{self.intensity:.2f}" if self.intensity is not None else "?"
        return (f"operations: {ops or 'none'}. patterns: {cats or 'none'}. inputs: {shapes or 'none'}. "
                f"outputs: {outs or 'none'}. dtypes: {', '.join(sorted(set(self.dtypes))) or '?'}. "
                f"{self.bound}-bound (arithmetic intensity {inten} FLOP/byte, {self.flops:.3g} FLOPs).")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def category_of(aten_name: str) -> str | None:
    """The category of an ATen op name (`aten::addmm` or `addmm`); None for
    ops that only view, copy or allocate."""
    name = aten_name.split("::")[-1].split(".")[0]
    if name in _MOVES:
        return None
    if name in _CATEGORY:
        return _CATEGORY[name]
    base = name.rstrip("_")
    if base in _MOVES:
        return None
    return _CATEGORY.get(base, "elementwise")


def _tensor_bytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


def _flatten_tensors(obj: Any) -> list[Any]:
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flatten_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _flatten_tensors(o)]
    return []


def _dispatch_recorder():
    from torch.utils._python_dispatch import TorchDispatchMode

    class AtenRecorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.aten: Counter = Counter()
            self.categories: Counter = Counter()
            self.elementwise_flops = 0.0
            self.active = False

        def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if self.active:
                name = func.overloadpacket.__name__
                cat = category_of(name)
                if cat is not None:
                    self.aten[name] += 1
                    self.categories[cat] += 1
                    if cat not in ("gemm", "conv", "attention"):  # FlopCounterMode counts those
                        sizes = [t.numel() for t in _flatten_tensors(args) + _flatten_tensors(out)]
                        self.elementwise_flops += float(max(sizes, default=0))
            return out

    return AtenRecorder


def task_features(task: Task, ridge: float = DEFAULT_RIDGE) -> Features:
    """Features of a task: meta device at full size, else CPU at the small profile."""
    attempts = [("meta", None), ("cpu", (task.sizes or {}).get("small"))]
    last = None
    for device, overrides in attempts:
        try:
            feats = _trace(task, device, overrides, ridge)
            feats.level = task.level
            return feats
        except Exception as exc:  # the program's own errors: try the next way
            last = f"{device}: {type(exc).__name__}: {exc}"
    return Features(task.task_id, level=task.level, error=last)


def _trace(task: Task, device: str, overrides: dict[str, Any] | None, ridge: float) -> Features:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from ..curate.optype import _mode_class

    _, Recorder = _mode_class()
    module = types.ModuleType("kernelmill_task_features")
    module.__file__ = task.task_id
    exec(compile(task.code, task.task_id or "<task>", "exec"), module.__dict__)  # noqa: S102 - trusted reference
    for key, value in (overrides or {}).items():
        setattr(module, key, value)
    calls = Recorder(device)
    aten = _dispatch_recorder()()
    flops = FlopCounterMode(display=False)
    with warnings.catch_warnings(), torch.no_grad(), torch.device(device), calls:
        warnings.simplefilter("ignore")
        init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
        model = module.Model(*init)
        inputs = list(module.get_inputs())
        with flops, aten:
            calls.active = aten.active = True
            out = model(*inputs)
            calls.active = aten.active = False
    in_t = _flatten_tensors(inputs)
    out_t = _flatten_tensors(out)
    params = list(model.parameters()) + list(model.buffers())
    total_flops = float(flops.get_total_flops()) + aten.elementwise_flops
    moved = float(sum(_tensor_bytes(t) for t in in_t + out_t + params))
    intensity = total_flops / moved if moved > 0 else None
    bound = "unknown" if intensity is None else ("compute" if intensity >= ridge else "memory")
    return Features(
        task_id=task.task_id, ops=dict(calls.calls), aten=dict(aten.aten), categories=dict(aten.categories),
        input_shapes=[list(t.shape) for t in in_t], output_shapes=[list(t.shape) for t in out_t],
        dtypes=sorted({str(t.dtype).replace("torch.", "") for t in in_t + out_t}),
        parameters=int(sum(p.numel() for p in model.parameters())), flops=total_flops, bytes_moved=moved,
        intensity=intensity, bound=bound, device=device)


def difficulty_key(f: Features) -> tuple:
    """Easy to hard: the task's level (unknown last), then how many kinds of
    computation it mixes, then the hardest kind (elementwise < reduction <
    softmax < norm < scan < loss < pooling < gemm < conv < attention), then how
    many compute ops it runs, then its FLOPs.
    One elementwise op comes before a reduction, a reduction before a fused
    GEMM epilogue, a fused epilogue before a network."""
    level = f.level if f.level is not None else 99
    calls = sum(f.categories.values())
    hardest = max((_RANK[c] for c in f.categories), default=len(_RANK))
    return (level, f.distinct_categories, hardest, calls, math.log10(f.flops + 1.0), f.task_id)


# how hard a kind of computation is to write as a kernel (elementwise first)
_RANK = {c: i for i, c in enumerate(("elementwise", "reduction", "softmax", "norm", "scan", "loss", "pooling",
                                     "gemm", "conv", "attention"))}


def order_easy_to_hard(features: list[Features]) -> list[Features]:
    """Tasks whose features could not be extracted go last, in id order."""
    good = sorted((f for f in features if not f.error), key=difficulty_key)
    bad = sorted((f for f in features if f.error), key=lambda f: f.task_id)
    return good + bad

