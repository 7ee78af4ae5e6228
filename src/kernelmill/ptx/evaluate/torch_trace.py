"""Run a KernelBench candidate's torch wrapper on the CPU and record its kernels' launches.

    python -m kernelmill.ptx.evaluate.torch_trace JOB.json OUT.json

JOB holds `ref_code` (the task: `get_inputs`, `get_init_inputs`) and `custom_code` (the
candidate, building its kernels with `load_inline`). The candidate's `ModelNew` is built with
the task's init inputs and called on its inputs (seed 0) with a CPU build of torch made to look
like a CUDA device: `torch.cuda.*` answers as an H200 would, tensors say `is_cuda`, `.cuda()`
and `device="cuda"` stay on the CPU, `data_ptr()` gives a fake address that names the tensor.
`load_inline` compiles nothing: it returns a module whose functions record their arguments.
A call of a C++ host function of the extension is interpreted (cudasrc.host_eval) with the
call's tensors, which gives the launches it makes and the tensor it returns (zeros of that
shape, so the wrapper goes on); a call of a kernel itself with `grid=`/`block=` (the CuPy-style
launch LLM-written candidates use) is a launch as written. OUT gets one config per launch
(ptx.evaluate.config.config_from_launch) or why there is none. This executes the candidate's
Python: the caller runs it in the verify sandbox (task_configs.trace_candidate).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import types

_PTR_BASE, _PTR_SPAN = 1 << 44, 1 << 36


def _fake_cuda(torch):
    """Make torch.cuda answer as one H200 does, without touching a GPU."""
    class Stream:
        cuda_stream = 0

        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def synchronize(self):
            pass

        def wait_stream(self, *a):
            pass

        def record_event(self, *a):
            return Event()

    class Event(Stream):
        def record(self, *a):
            pass

        def elapsed_time(self, *a):
            return 1.0

        def query(self):
            return True

    props = types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132,
                                  total_memory=141 << 30, max_threads_per_block=1024,
                                  max_threads_per_multi_processor=2048, warp_size=32, L2_cache_size=60 << 20,
                                  shared_memory_per_block=48 << 10, shared_memory_per_block_optin=227 << 10,
                                  regs_per_multiprocessor=65536)

    def no_graphs(*a, **k):
        raise RuntimeError("CUDA graphs are not traced")

    c = torch.cuda
    for name, v in {"is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
                    "get_device_properties": lambda *a: props, "get_device_capability": lambda *a: (9, 0),
                    "get_device_name": lambda *a: props.name, "synchronize": lambda *a: None,
                    "current_stream": lambda *a: Stream(), "default_stream": lambda *a: Stream(),
                    "Stream": Stream, "Event": Event, "stream": lambda *a: Stream(), "set_device": lambda *a: None,
                    "empty_cache": lambda: None, "is_initialized": lambda: True, "set_stream": lambda *a: None,
                    "memory_allocated": lambda *a: 0, "max_memory_allocated": lambda *a: 0,
                    "CUDAGraph": no_graphs, "graph": no_graphs, "manual_seed": lambda *a: None,
                    "manual_seed_all": lambda *a: None}.items():
        setattr(c, name, v)
    null = lambda *a, **k: contextlib.nullcontext()  # noqa: E731
    c.amp = types.SimpleNamespace(autocast=null, GradScaler=null)
    torch.amp.autocast = null
    torch.autocast = null
    def no_compilers(*a, **k):  # so that the wrapper's own kernel path runs
        raise RuntimeError("compilers are not traced")
    torch.compile = no_compilers
    torch.jit.trace = torch.jit.script = no_compilers


class Tracer:
    def __init__(self, torch):
        self.torch = torch
        self.tensors: list = []        # index = fake address slot
        self.origin: dict[int, str] = {}
        self.extensions: list[dict] = []
        self.calls: list[dict] = []
        self.launches: list = []       # (extension index, Launch)
        self.problems: list[str] = []

    # --- tensors ---------------------------------------------------------------
    def slot(self, t) -> int:
        for i, x in enumerate(self.tensors):
            if x is t:
                return i
        self.tensors.append(t)
        return len(self.tensors) - 1

    def host_tensor(self, t):
        from kernelmill.cudasrc.host_eval import HostTensor
        dtype = str(t.dtype).removeprefix("torch.")
        item = float(t.detach().reshape(-1)[0]) if t.numel() == 1 and not t.is_complex() else None
        return HostTensor([int(s) for s in t.shape], dtype, self.origin.get(id(t), "computed"), item=item)

    def value(self, v):
        """A Python argument as host_eval sees it."""
        from kernelmill.cudasrc.host_eval import Ptr, Unknown
        torch = self.torch
        if isinstance(v, torch.Tensor):
            return self.host_tensor(v)
        if isinstance(v, bool):
            return v
        if isinstance(v, int) and v >= _PTR_BASE:
            k, off = divmod(v - _PTR_BASE, _PTR_SPAN)
            if k < len(self.tensors):
                return Ptr(self.host_tensor(self.tensors[k]), None, off)
            return Unknown("an address that is no tensor's")
        if isinstance(v, (int, float)):
            return v
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        if isinstance(v, torch.dtype):
            from kernelmill.cudasrc.host_eval import DType
            return DType(str(v).removeprefix("torch."))
        return Unknown(f"a {type(v).__name__} argument")

    def mode(self):
        from torch.overrides import TorchFunctionMode
        tracer, torch = self, self.torch
        factories = {"empty": "empty", "empty_like": "empty", "zeros": "zero", "zeros_like": "zero",
                     "new_empty": "empty", "new_zeros": "zero", "empty_strided": "empty"}

        def cpu(x):
            if isinstance(x, torch.device) and x.type == "cuda" or isinstance(x, str) and x.startswith("cuda"):
                return torch.device("cpu")
            return x

        class FakeCuda(TorchFunctionMode):
            def __torch_function__(self, func, types_, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                name = getattr(func, "__name__", "")
                owner = getattr(getattr(func, "__self__", None), "__name__", "")
                if name == "__get__" and owner == "is_cuda":
                    return True
                if name == "data_ptr":  # an empty tensor's is nullptr, as on the GPU
                    return _PTR_BASE + tracer.slot(args[0]) * _PTR_SPAN if args[0].numel() else 0
                if name in ("cuda", "pin_memory") and args and isinstance(args[0], torch.Tensor):
                    return args[0]
                if name == "record_stream":
                    return None
                if "device" in kwargs:
                    kwargs["device"] = cpu(kwargs["device"])
                args = tuple(cpu(a) for a in args)
                if name == "to":
                    args = tuple(a for a in args if not isinstance(a, torch.device))
                    kwargs.pop("non_blocking", None)
                out = func(*args, **kwargs)
                if name in factories and isinstance(out, torch.Tensor):
                    tracer.origin[id(out)] = factories[name]
                    tracer.slot(out)  # keep it alive: ids stay unique
                return out
        return FakeCuda()

    # --- the extension ----------------------------------------------------------
    def load_inline(self, name="", cpp_sources="", cuda_sources="", functions=None, *a, **k):
        as_text = lambda s: "\n".join(s) if isinstance(s, (list, tuple)) else (s or "")  # noqa: E731
        funcs = functions if isinstance(functions, (list, tuple)) else list(functions or {})
        ext = {"name": name, "cpp": as_text(cpp_sources), "cuda": as_text(cuda_sources), "functions": list(funcs)}
        self.extensions.append(ext)
        idx = len(self.extensions) - 1
        binds = dict(re.findall(r"\.def\(\s*\"(\w+)\"\s*,\s*&?\s*([\w:]+)", ext["cpp"] + ext["cuda"]))
        tracer = self

        class Extension(types.ModuleType):
            def __getattr__(self, attr):
                if attr.startswith("__"):
                    raise AttributeError(attr)
                return lambda *args, **kwargs: tracer.called(idx, binds.get(attr, attr), args, kwargs)
        return Extension(name or "traced_extension")

    def load(self, name="", sources=(), *a, **k):
        """torch's `load(name, sources=[files])`: the files the candidate wrote, read."""
        files = [sources] if isinstance(sources, str) else list(sources or [])
        cpp, cuda = [], []
        for f in files:
            try:
                body = open(f).read()
            except OSError:
                continue
            (cuda if str(f).endswith((".cu", ".cuh")) else cpp).append(body)
        return self.load_inline(name, cpp, cuda, k.get("functions"))

    def python_launch(self, kernel: str, args, kwargs):
        """A kernel called from Python, as written: `k(*args, grid=, block=[, shared_mem=])`,
        CuPy's `k(grid, block, args[, shared_mem=])`, `k(grid, block, smem, args)`; where grid or block
        is not passed, the caller's local variables of those names (the wrapper computed them
        and did not pass them: `blocks_x, blocks_y, blocks_z`, `threads_per_block`, ...)."""
        from kernelmill.cudasrc.host_eval import Launch
        smem = kwargs.get("shared_mem", kwargs.get("shared", kwargs.get("smem", kwargs.get("shared_mem_size", 0))))
        if "grid" in kwargs and "block" in kwargs:
            grid, block, vals = kwargs["grid"], kwargs["block"], kwargs.get("args", args)
        elif len(args) in (3, 4) and isinstance(args[-1], (list, tuple)) and all(
                isinstance(a, (int, tuple, list)) for a in args[:2]):
            grid, block, vals = args[0], args[1], args[-1]
            smem = args[2] if len(args) == 4 else smem
        else:
            found = _caller_dims(sys._getframe(3))
            if found is None:
                return "called from Python with no grid and block"
            grid, block = found
            vals = kwargs.get("args", args)
        dims = [self.value(d) for d in (grid, block)]
        dims = [(d + [1, 1, 1])[:3] if isinstance(d, list) else [d, 1, 1] for d in dims]
        return Launch(kernel, [], dims[0], dims[1], self.value(smem), [self.value(x) for x in vals])

    def called(self, idx: int, fn: str, args, kwargs):
        from kernelmill.cudasrc.host_eval import HostEvalError, HostRun, HostTensor, Launch
        from kernelmill.cudasrc.tsparse import functions
        ext = self.extensions[idx]
        self.calls.append({"extension": idx, "function": fn})
        kernels = {f.name for f in functions(ext["cuda"]) if f.is_kernel}
        short = fn.split("::")[-1]
        if short in kernels:
            la = self.python_launch(short, args, kwargs)
            if isinstance(la, str):
                self.problems.append(f"{fn}: {la}")
            else:
                self.launches.append((idx, la))
            return None
        run = HostRun(ext["cpp"] + "\n" + ext["cuda"])
        if short not in run.fns:
            self.problems.append(f"{fn}: no host function or kernel of that name in the extension")
            return None
        try:
            ret = run.call(short, [self.value(x) for x in args])
        except HostEvalError as exc:
            self.problems.append(f"{fn}: {exc}")
            ret = None
        self.launches += [(idx, la) for la in run.launches]
        if not run.launches:
            self.problems.append(f"{fn}: the host code reached no launch")
        if isinstance(ret, HostTensor):
            dt = getattr(self.torch, ret.dtype, self.torch.float32)
            return self.torch.zeros(ret.shape, dtype=dt)
        if isinstance(ret, list) and ret and all(isinstance(r, HostTensor) for r in ret):
            return [self.torch.zeros(r.shape, dtype=getattr(self.torch, r.dtype)) for r in ret]
        return None


_GRID_NAMES = ("grid", "grid_dim", "grid_size", "blocks_per_grid", "num_blocks", "blocks", "n_blocks", "grid_dims")
_BLOCK_NAMES = ("block", "block_dim", "block_size", "threads_per_block", "threads", "num_threads", "block_dims")


def _uncalled(tr: Tracer, inputs: list) -> None:
    """Bound host functions the wrapper never called (its own kernel path not taken for the task's
    sizes, or taken only on an error): run with the task's input tensors for their tensor
    parameters, in order; their launches are recorded as not taken."""
    from kernelmill.cudasrc.host_eval import HostEvalError, HostRun, Unknown
    tensors = [tr.host_tensor(x) for x in inputs if isinstance(x, tr.torch.Tensor)]
    for idx, ext in enumerate(tr.extensions):
        called = {c["function"] for c in tr.calls if c["extension"] == idx}
        binds = re.findall(r"\.def\(\s*\"\w+\"\s*,\s*&?\s*([\w:]+)", ext["cpp"] + ext["cuda"])
        run = HostRun(ext["cpp"] + "\n" + ext["cuda"])
        for fn in dict.fromkeys([*ext["functions"], *binds]):
            short = fn.split("::")[-1]
            if fn in called or short not in run.fns:
                continue
            feed = iter(tensors)
            args = [next(feed, Unknown("no more task inputs")) if "Tensor" in t else Unknown(
                f"{fn} is not called by the wrapper") for t in run.param_types(short)]
            before = len(run.launches)
            try:
                run.call(short, args)
            except HostEvalError:
                continue
            for la in run.launches[before:]:
                la.taken = False
                tr.launches.append((idx, la))


def _caller_dims(frame):
    """(grid, block) from the local variables of the frame that called the kernel, or None."""
    for _ in range(3):
        if frame is None:
            return None
        loc = frame.f_locals
        dims = []
        for names, axes in ((_GRID_NAMES, "blocks"), (_BLOCK_NAMES, "threads")):
            v = next((loc[n] for n in names if isinstance(loc.get(n), (int, tuple, list))), None)
            if v is None and isinstance(loc.get(f"{axes}_x"), int):
                v = [loc.get(f"{axes}_{a}", 1) for a in "xyz"]
            dims.append(v)
        if all(d is not None for d in dims):
            return dims[0], dims[1]
        frame = frame.f_back
    return None


def trace(ref_code: str, custom_code: str, calls: int = 3) -> dict:
    import torch
    import torch.utils.cpp_extension as cpp_ext
    _fake_cuda(torch)
    tr = Tracer(torch)
    cpp_ext.load_inline = tr.load_inline
    cpp_ext.load = tr.load
    cpp_ext.CUDA_HOME = cpp_ext.CUDA_HOME or "/usr/local/cuda"
    torch.version.cuda = torch.version.cuda or "12.8"
    ref: dict = {"__name__": "kb_reference"}
    exec(compile(ref_code, "reference.py", "exec"), ref)  # noqa: S102 - the task's own code
    torch.manual_seed(0)
    init = ref["get_init_inputs"]() if "get_init_inputs" in ref else []
    inputs = ref["get_inputs"]()
    out: dict = {"error": ""}
    with tr.mode():
        try:
            cand: dict = {"__name__": "kb_candidate", "__file__": "candidate.py"}
            sys.modules["kb_candidate"] = types.ModuleType("kb_candidate")
            exec(compile(custom_code, "candidate.py", "exec"), cand)  # noqa: S102
            model = cand["ModelNew"](*init)
            for t in [*inputs, *model.parameters(), *model.buffers()]:
                if isinstance(t, torch.Tensor):
                    tr.origin[id(t)] = "input"
                    tr.slot(t)
            for attempt in range(calls):
                # a second try with inputs that need gradients: some wrappers take their own
                # kernel only then (and torch's otherwise)
                grad = attempt == calls - 1 and attempt > 0
                args = [x.detach().requires_grad_(True) if grad and isinstance(x, torch.Tensor)
                        and x.is_floating_point() else x for x in inputs]
                for t in args:
                    if isinstance(t, torch.Tensor):
                        tr.origin[id(t)] = "input"
                        tr.slot(t)
                with contextlib.nullcontext() if grad else torch.no_grad():
                    try:
                        model(*args)
                    except Exception as exc:  # noqa: BLE001 - the next try may get further
                        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                if tr.launches:
                    break
            _uncalled(tr, inputs)
        except BaseException as exc:  # noqa: BLE001 - the candidate's own failure is a finding
            out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    out.update(extensions=tr.extensions, calls=tr.calls, problems=tr.problems,
               launches=[_launch_record(tr, i, la) for i, la in tr.launches])
    return out


def _launch_record(tr: Tracer, idx: int, la) -> dict:
    from .config import ConfigError, config_from_launch
    rec = {"extension": idx, "kernel": la.kernel, "template_args": la.template_args, "taken": la.taken}
    try:
        ext = tr.extensions[idx]  # some candidates hand their CUDA in as cpp_sources
        rec["config"] = config_from_launch(ext["cuda"] + "\n" + ext["cpp"], la).to_dict()
    except ConfigError as exc:
        rec["error"] = str(exc)
    return rec


def main() -> None:
    job = json.loads(open(sys.argv[1]).read())
    result = trace(job["ref_code"], job["custom_code"])
    with open(sys.argv[2], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
