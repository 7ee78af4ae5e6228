"""What ran inside the candidate's process: its own compiled code or PyTorch,
in which precision, on which threads, and whether the harness was rebound.

Used by `guards.candidate` (the candidate's process) on one profiled call,
and by the supervisor on one reference call. Everything here describes; the
supervisor decides.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time
from typing import Any, Callable

import torch

from ..measure.kernel_time import kineto_profile
from ..measure.tree import tensors_in
from ...languages import kernel_codes, own_callables

# ops that move, view or allocate: they say nothing about who computed the result
PLUMBING = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "to", "_to_copy", "copy_", "view", "reshape", "_reshape_alias", "contiguous", "clone", "t", "transpose",
    "permute", "expand", "as_strided", "unsqueeze", "squeeze", "select", "slice", "detach", "resolve_conj",
    "resolve_neg", "lift_fresh", "alias", "fill_", "zero_", "resize_", "_unsafe_view", "unsafe_view",
    "flatten", "item", "_local_scalar_dense", "numpy_T", "split", "chunk", "narrow", "unbind", "cat", "stack",
    "view_as", "expand_as", "set_", "is_nonzero", "result_type", "dropout", "to_dense", "record_stream",
    "scalar_tensor", "arange", "linspace", "randn", "rand", "empty_permuted", "new_empty", "new_zeros",
    "new_empty_strided", "new_full", "_has_compatible_shallow_copy_type", "lift", "detach_",
    "half", "float", "double", "bfloat16", "get", "size", "dim", "numel", "stride", "data_ptr",
    "is_contiguous", "len", "getitem", "setitem", "type", "cuda", "cpu", "storage_offset", "untyped_storage",
    "requires_grad", "is_floating_point", "element_size", "tolist", "repr", "format", "bool", "int", "index",
    "iter", "reversed", "contains", "hash", "new_tensor", "tensor", "as_tensor", "from_numpy", "empty_cache",
    "synchronize", "current_stream", "is_complex", "nelement", "ndimension", "zero",
}
LOW_PRECISION = {"c10::Half", "c10::BFloat16", "c10::Float8_e4m3fn", "c10::Float8_e5m2"}
# ops that carry a task's arithmetic (GEMMs, convolutions, attention): the precision they
# compute in is the task's precision (class 31, precision dress-up). Elementwise work around
# them says nothing (an fp32 softmax or norm on fp16 data is what torch does inside too)
HEAVY = {"matmul", "rmatmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "linear", "bilinear",
         "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "einsum",
         "tensordot", "scaled_mm", "int_mm", "scaled_dot_product_attention"}


def protected_callables(harness: Any = None) -> dict[str, Any]:
    """Objects the harness relies on inside the candidate's process; the
    candidate must leave every one of them bound where it found it. `harness`:
    the module running the candidate (process/candidate.py passes itself), whose
    own functions are protected too."""
    from ..measure import correctness, inputs, timing

    named = {
        "time.perf_counter": (time, "perf_counter"), "time.perf_counter_ns": (time, "perf_counter_ns"),
        "time.monotonic": (time, "monotonic"), "time.time": (time, "time"),
        "torch.cuda.synchronize": (torch.cuda, "synchronize"), "torch.cuda.Event": (torch.cuda, "Event"),
        "torch.cuda.Event.elapsed_time": (torch.cuda.Event, "elapsed_time"),
        "torch.cuda.Event.record": (torch.cuda.Event, "record"),
        "torch.save": (torch, "save"), "torch.load": (torch, "load"), "torch.equal": (torch, "equal"),
        "torch.allclose": (torch, "allclose"), "torch.randn": (torch, "randn"),
        "torch.Tensor.clone": (torch.Tensor, "clone"), "torch.Tensor.copy_": (torch.Tensor, "copy_"),
        "torch.Tensor.cpu": (torch.Tensor, "cpu"), "torch.Tensor.to": (torch.Tensor, "to"),
        "torch.Tensor.mul_": (torch.Tensor, "mul_"), "torch.Tensor.uniform_": (torch.Tensor, "uniform_"),
        "torch.Tensor.__torch_function__": (torch.Tensor, "__torch_function__"),
        "torch.mul": (torch, "mul"), "torch.randint": (torch, "randint"),  # inputs.Factors on a CPU
        # inputs.Factors makes its generators after the candidate is loaded: one rebound to a
        # fixed seed would make every timed call's factors known, and so divisible out
        "torch.Generator": (torch, "Generator"),
        "torch.nn.Module.__call__": (torch.nn.Module, "__call__"),
        "threading.enumerate": (threading, "enumerate"), "sys.setprofile": (sys, "setprofile"),
        "os._exit": (os, "_exit"), "json.dump": (sys.modules["json"], "dump"),
        "timing.Bench.round": (timing.Bench, "round"), "timing.Bench.warm": (timing.Bench, "warm"),
        "timing.Bench.changed_after_return": (timing.Bench, "changed_after_return"),
        "correctness.compare": (correctness, "compare"), "inputs.refill": (inputs, "refill"),
    }
    for name in ("run_candidate", "_run_trials", "_timing_bench", "_serve_timing", "_note_modes", "_write_outputs",
                 "_poison"):
        if harness is not None:
            named[f"candidate.{name}"] = (harness, name)
    # getattr_static: a classmethod read through getattr is a new object each time
    held = {label: _held(inspect.getattr_static(owner, attr, None)) for label, (owner, attr) in named.items()}
    held[ATEN_KERNELS] = (aten_kernels(), aten_ops(), None, None)
    return held


# kernels registered for torch's own operators through torch.library: a candidate's Python
# kernel for aten::copy_ or aten::mul sees (and may change) the harness's own tensor work in
# its process, as a mode would (environment.modes_left_on); its own namespace is its business.
# Only operators that existed before the candidate loaded count: an operator defined after it
# is one the harness never calls. torch itself defines new prims with their kernels when
# inductor loads (`torch.compile`: prims::fma, prims::_low_memory_max_pool_with_offsets, ...),
# which 0.5.5-0.5.8 flagged as harness_patched on five cuda-l1 candidates (issue 39's 0.5.8 run)
ATEN_KERNELS = "torch.library kernels for aten/prims operators"


def aten_kernels() -> frozenset[str]:
    """The torch.library registrations for aten/prims operators: "ns/op[.overload]/dispatch_key"."""
    impls = getattr(getattr(torch, "library", None), "_impls", ())
    return frozenset(k for k in impls if k.split("/", 1)[0] in ("aten", "prims"))


def aten_ops() -> frozenset[str] | None:
    """The aten/prims operators the dispatcher knows now ("ns::op[.overload]"); None where this
    torch cannot list them (then every new registration counts, as before 0.5.9)."""
    names = getattr(torch._C, "_dispatch_get_all_op_names", None)
    if names is None:
        return None
    return frozenset(n for n in names() if n.split("::", 1)[0] in ("aten", "prims"))


def kernel_op(key: str) -> str:
    """The operator of a torch.library registration key ("aten/mul.Tensor/CPU" -> "aten::mul.Tensor")."""
    ns, _, rest = key.partition("/")
    return f"{ns}::{rest.rsplit('/', 1)[0]}"


def kernels_for_known_ops(before: tuple, now: frozenset[str]) -> list[str]:
    """Registrations added since `before` (aten_kernels(), aten_ops()) for operators that
    existed then, and registrations removed since."""
    kernels, ops = before[0], before[1]
    added = sorted(k for k in now - kernels if ops is None or kernel_op(k) in ops)
    return added + sorted(f"removed {k}" for k in kernels - now)


def _held(obj: Any) -> tuple:
    """What must stay as it is: the object, and for a Python function its code, defaults
    and globals (item 25: `fn.__code__ = ...` patches a function in place, keeping it the
    same object; `__defaults__` and `__globals__` changes do the same)."""
    fn = getattr(obj, "__func__", obj)  # a classmethod or staticmethod's function
    return (obj, getattr(fn, "__code__", None), getattr(fn, "__defaults__", None),
            getattr(fn, "__kwdefaults__", None))


def rebound(before: dict[str, tuple], harness: Any = None) -> list[str]:
    """The protected names rebound, or patched in place, since `before`."""
    now = protected_callables(harness)
    out = []
    for label, (obj, code, defaults, kwdefaults) in before.items():
        was = now.get(label)
        if label == ATEN_KERNELS:
            changed = kernels_for_known_ops((obj, code), was[0]) if was is not None else []
            if changed:
                out.append(f"{label} ({', '.join(changed[:3])})")
            continue
        if was is None or was[0] is not obj:
            out.append(label)
        elif was[1] is not code or was[2] is not defaults or was[3] is not kwdefaults:
            out.append(label + " (its code or defaults replaced in place)")
    return out


def warm_cuda(device: torch.device, gpu_section: Callable[[str], Any] | None = None, draws: bool = False,
              checks: bool = False, profiler: bool = True) -> float:
    """Open the CUDA context and start the (host) profiler once, so neither lands on a
    candidate's clock; nothing on a CPU. `gpu_section(part)` (a context manager, e.g.
    the GPU lock held shared) is held only around the steps that use the GPU: "ctx"
    (the context opened), "libs" (the profiled call, cuBLAS, cuDNN) and "kernels"
    (the harness's own kernels: `draws`, `checks`).
    Returns the seconds spent inside it (waiting to enter included).

    The profiler's first start is host work (kineto), done outside the GPU
    section: a timer process timing a small kernel chain on the same GPU saw a
    1.5 ms spike while another process opened its context and nothing above its
    quiet spread while another started the profiler (benchmarks/diag/warmup_cost.py,
    docs/results/benchmarks_history.md): so only the context and the profiled call are GPU sections.
    `draws`: also the kernels that draw input sets (a supervisor's: inputs.warm_draws);
    `checks`: those run around a candidate's calls (its process's: inputs.warm_checks).
    `profiler=False` (a candidate's process): CUPTI's library is loaded, kineto is not started
    (`start_profiler`, later): once kineto has started, the driver refuses to lock the process
    (801), and a run lends its share only with its candidate's CUDA locked (measure/gpu_lend.py)."""
    if device.type != "cuda":
        return 0.0
    from contextlib import nullcontext

    section = gpu_section or (lambda part: nullcontext())
    # the driver's start-up (cuInit, the devices counted) is host work and opens no
    # context (benchmarks/diag/warm_sections.py checks that): outside the GPU section
    torch.cuda.init()
    t0 = time.perf_counter()
    with section("ctx"):
        torch.zeros(1, device=device)
        torch.cuda.synchronize(device)
    held = time.perf_counter() - t0
    if profiler:
        start_profiler()
    else:
        preload_cupti()
    t0 = time.perf_counter()
    with section("libs"):
        # no CUDA profiler session here: kineto keeps CUPTI's callbacks after its first
        # CUDA session ends (no teardown), ~2 us more host time per launch for the rest of
        # the process (an 8-kernel call: 40.8 -> 56.7 us, H100, issue 39), and the
        # KernelBench-convention rounds (timing.compare) must run before any. The first
        # CUDA session costs ~30 ms more than later ones: paid in the profiled call.
        first_launch(device)
        # cuBLAS's handle and workspace, cuDNN's libraries: the first matmul and
        # convolution of a process, otherwise paid inside the reference's first
        # run (guard_inputs_s) and the candidate's check_s
        warm_thread_pools(device)
    if draws or checks:  # a section of its own: a timing waiting meanwhile goes in between
        from ..measure import inputs

        with section("kernels"):
            if draws:
                inputs.warm_draws(device)
            if checks:
                inputs.warm_checks(device)
    return held + time.perf_counter() - t0


def start_profiler() -> None:
    """The profiler's start-up (kineto), on the host only: 0.02-0.03 s on an H200 once CUPTI's
    library is loaded (session_2026-12-01l/ckpt_probe5.py). After it, the driver's checkpoint
    calls refuse this process (801)."""
    with kineto_profile(cuda=False):
        torch.ones(8) * 2


def preload_cupti() -> str | None:
    """Load CUPTI's shared library (0.56 s cold on an H200), not kineto: the process stays one
    the driver can lock (ckpt_probe5.py). Returns the path loaded, None where none was found
    (kineto then loads it itself when it starts)."""
    import ctypes
    import glob
    import site

    roots = [*site.getsitepackages(), site.getusersitepackages()]
    patterns = [os.path.join(r, "nvidia", "*", "lib", "libcupti.so*") for r in roots]
    patterns.append(os.path.join(os.path.dirname(torch.__file__), "lib", "libcupti.so*"))
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            try:
                ctypes.CDLL(path)
                return path
            except OSError:
                continue
    return None


def first_launch(device: torch.device) -> None:
    """A process's first kernel on `device` (its module loads), unprofiled."""
    torch.ones(8, device=device) * 2
    torch.cuda.synchronize(device)


def warm_thread_pools(device: torch.device) -> None:
    """Start torch's own worker threads (and on CUDA its cuBLAS and cuDNN state)
    before any check, so threads that appear during a candidate call are the
    candidate's; cheap once a warm-up (`warm_cuda`) has run it."""
    a = torch.randn(256, 256, device=device)
    (a @ a).sum().item()
    torch.nn.functional.conv2d(a[None, None], a[None, None, :3, :3]).sum().item()


# extension modules torch's own build path imported in this process (`record_extension_imports`)
_IMPORTED: dict[str, Any] = {}


def record_extension_imports() -> None:
    """Note every extension module torch's build path imports from now on.

    torch's `load` and `load_inline` (where the fast builder hands a build over to it)
    import the built module with importlib and leave it out of `sys.modules`, so
    `extension_modules` did not know it and no call into it was counted: a candidate
    built by `load(name=..., sources=[...])` was rejected as `torch_fallback` on an H200
    while its own kernel ran all of its GPU time (cuda-l1 L2-35, tenth session). Called
    in the candidate's process before the candidate is imported."""
    import torch.utils.cpp_extension as ce

    original = ce._import_module_from_library
    if getattr(original, "_kernelmill_records", False):
        return

    def importing(module_name, path, is_python_module):
        module = original(module_name, path, is_python_module)
        if is_python_module:
            _IMPORTED[module_name] = module
        return module

    importing._kernelmill_records = True
    ce._import_module_from_library = importing


def extension_modules(before: set[str]) -> dict[str, Any]:
    """Compiled modules the candidate loaded (load_inline / load / its own .so files)."""
    out = {name: mod for name, mod in _IMPORTED.items() if name not in before}
    for name, mod in list(sys.modules.items()):
        if name in before or mod is None:
            continue
        path = getattr(mod, "__file__", None) or ""
        if path.endswith((".so", ".pyd")) and "site-packages" not in path and "dist-packages" not in path:
            out[name] = mod
    return out


def jit_functions(module) -> list[Any]:
    """The candidate module's objects that launch its own kernels (Triton's jitted
    functions, ...): each language says which (`languages`)."""
    return own_callables(module)


def _jit_code(obj) -> Any:
    while obj is not None and not hasattr(obj, "__code__"):
        obj = getattr(obj, "fn", None)
    return getattr(obj, "__code__", None)


class OwnCodeTracer:
    """Counts and times calls into the candidate's own compiled code during one
    call: pybind functions of its extension modules (``c_call`` events), Triton
    kernels (their Python body under the interpreter, their launcher on a GPU)
    and kernels made at run time (TileLang's: `languages.kernel_codes`)."""

    def __init__(self, ext_modules: dict[str, Any], jits: list[Any]):
        self.ext_names = set(ext_modules)
        self.jit_codes = {c for c in (_jit_code(j) for j in jits) if c is not None} | kernel_codes()
        self.jit_objs = {id(j) for j in jits}
        self.calls = 0
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0

    def _own_c(self, fn) -> bool:
        return getattr(fn, "__module__", None) in self.ext_names

    def _enter(self) -> None:
        self.calls += 1
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1

    def _leave(self) -> None:
        if self._depth:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._t0

    def __call__(self, frame, event, arg):
        if event == "c_call" and self._own_c(arg):
            self._enter()
        elif event in ("c_return", "c_exception") and self._own_c(arg):
            self._leave()
        elif event == "call":
            code = frame.f_code
            if code in self.jit_codes or (code.co_name == "run" and id(frame.f_locals.get("self")) in self.jit_objs):
                self._enter()
        elif event == "return":
            code = frame.f_code
            if code in self.jit_codes or (code.co_name == "run" and id(frame.f_locals.get("self")) in self.jit_objs):
                self._leave()


class _OpRecorder:
    """Records the torch functions a call makes from Python (not those inside
    its own compiled code) and the dtypes they see. A TorchFunctionMode is
    cheap to enter; a TorchDispatchMode imports torch._dynamo (2 s) and the
    PyTorch profiler takes a second on first use, so the profiler is used only
    on GPUs, for kernel names."""

    def __init__(self):
        from torch.overrides import TorchFunctionMode

        rec = self
        self.ops: set[str] = set()
        self.low_precision: set[str] = set()
        self.produced: set[int] = set()  # storages written by torch compute functions
        self.heavy: dict[str, set[str]] = {}  # heavy op -> the dtypes it computed in

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", str(func)).strip("_").removesuffix("_")
                rec.ops.add(name)
                for t in _tensor_args(args, kwargs or {}):
                    if t.dtype in _LOW_DTYPES:
                        rec.low_precision.add(_LOW_DTYPES[t.dtype])
                out = func(*args, **(kwargs or {}))
                for t in _tensor_args((out,), {}):
                    if t.dtype in _LOW_DTYPES:
                        rec.low_precision.add(_LOW_DTYPES[t.dtype])
                    if name not in PLUMBING and type(t) is torch.Tensor and t.numel():
                        rec.produced.add(t.untyped_storage().data_ptr())
                if name in HEAVY:
                    dtype = compute_dtype(_tensor_args(args, kwargs or {}) + _tensor_args((out,), {}))
                    if dtype is not None:
                        rec.heavy.setdefault(name, set()).add(str(dtype).removeprefix("torch."))
                return out

        self.mode = Mode()


_LOW_DTYPES = {torch.float16: "c10::Half", torch.bfloat16: "c10::BFloat16"}
for _name, _label in (("float8_e4m3fn", "c10::Float8_e4m3fn"), ("float8_e5m2", "c10::Float8_e5m2")):
    if hasattr(torch, _name):
        _LOW_DTYPES[getattr(torch, _name)] = _label


def precision_rank(dtype: torch.dtype | str) -> int:
    """How wide a dtype computes: integers 0 < fp8 1 < fp16 = bf16 2 < fp32 3 < fp64 4."""
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype, None)
        if not isinstance(dtype, torch.dtype):
            return -1  # a name this torch does not know (a profile from another version)
    if not dtype.is_floating_point:
        return 0
    return {1: 1, 2: 2, 4: 3}.get(dtype.itemsize, 4)


def compute_dtype(tensors: list) -> torch.dtype | None:
    """The precision a heavy op computed in: the narrowest floating dtype among its inputs
    and outputs (an fp8 `_scaled_mm` has fp32 scales and a bf16 output; an fp32 `linear`
    under bf16 autocast returns bf16), else the narrowest integer one (`_int_mm`: int8 in,
    int32 out). Booleans (attention masks) do not count."""
    floats = [t.dtype for t in tensors if t.is_floating_point()]
    ints = [t.dtype for t in tensors if not t.is_floating_point() and not t.is_complex() and t.dtype != torch.bool]
    pool = floats or ints
    return min(pool, key=lambda d: (precision_rank(d), d.itemsize)) if pool else None


def _tensor_args(args, kwargs) -> list:
    return tensors_in([list(args), list(kwargs.values())], dicts=False)


def profile_call(fn: Callable[[], Any], device: torch.device, tracer: OwnCodeTracer | None = None) -> dict:
    """Run `fn` once, recording the aten ops it dispatched (and their dtypes),
    calls into the candidate's own code (`tracer`), and on a GPU the kernels
    that ran with their device time (PyTorch profiler)."""
    rec = _OpRecorder()
    kernels: dict[str, float] = {}
    prof = None
    if device.type == "cuda":
        prof = kineto_profile(cuda=True)
        prof.__enter__()
    t0 = time.perf_counter()
    try:
        with rec.mode:
            if tracer is not None:
                sys.setprofile(tracer)
            try:
                result = fn()
                if device.type == "cuda":
                    torch.cuda._sleep(1)  # the end marker, on the stream the harness times
                    torch.cuda.synchronize()
            finally:
                if tracer is not None:
                    sys.setprofile(None)
    finally:
        wall = time.perf_counter() - t0
        if prof is not None:
            prof.__exit__(None, None, None)
    unsynced: list[str] = []
    if prof is not None:
        for e in prof.function_events:
            if "CUDA" in str(getattr(e, "device_type", "")) and "spin_kernel" not in e.name:
                kernels[e.name] = kernels.get(e.name, 0.0) + float(getattr(e, "device_time", 0.0) or 0.0)
        unsynced = after_the_marker(getattr(prof, "kineto_results", None))
    leaves = sorted(op for op in rec.ops if op not in PLUMBING)
    outs = [t for t in _tensor_args((result,), {}) if type(t) is torch.Tensor and t.numel()]
    # every output tensor was written by a torch function called from Python
    from_torch = bool(outs) and all(t.untyped_storage().data_ptr() in rec.produced for t in outs)
    return {"ops": sorted(rec.ops), "leaf_compute_ops": leaves, "low_precision": sorted(rec.low_precision),
            "heavy_dtypes": {op: sorted(d) for op, d in sorted(rec.heavy.items())},
            "output_from_torch": from_torch,
            "kernels": kernels, "wall_s": wall, "unsynced": unsynced,
            "own_calls": tracer.calls if tracer else 0, "own_s": tracer.seconds if tracer else 0.0}


def after_the_marker(results, slack_us: float = 2.0) -> list[str]:
    """Catalogue item 3, read from the profiler's device timeline: GPU work of
    the call still running when the harness's stream had finished it.

    `profile_call` queues a one-cycle spin kernel (the marker) on the stream
    the harness times, right after the call returns. A kernel, copy or memset
    on another stream that ends after the marker started ran outside what the
    timing events see (a stream the call never joined back). Honest side
    streams are joined (the timed stream waits for them), so their work ends
    before the marker. Unlike the timing rounds' end-of-round wait, this does
    not depend on how much idle time the GPU had between calls."""
    if results is None:
        return []
    try:
        events = [e for e in results.events() if "CUDA" in str(e.device_type())]
    except (AttributeError, RuntimeError):
        return []
    markers = [e for e in events if "spin_kernel" in e.name()]
    if not markers:
        return []
    mark = max(markers, key=lambda e: e.correlation_id())  # ours is the last one launched
    stream, t_mark = mark.device_resource_id(), mark.start_ns()
    late = []
    for e in events:
        if e is mark or e.device_resource_id() == stream or e.duration_ns() <= 0:
            continue
        over_us = (e.end_ns() - t_mark) / 1e3
        if over_us > slack_us:
            late.append(f"{e.name()[:80]} on stream {e.device_resource_id()} ended {over_us:.1f} us after "
                        f"the timed stream (stream {stream}) finished the call")
    return late
