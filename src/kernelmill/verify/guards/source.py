"""Static checks of a candidate's Python source (its AST, never regexes on the
Python; the CUDA source strings inside it are searched with regexes).

Each finding names a flag from `flags.FLAGS` and the line it is on. Heuristics
that an honest kernel could trip are kept for ``strict``; ``standard`` holds
only patterns with no honest use in a kernel module (walking the caller's
frames, rebinding ``torch.cuda.synchronize``, subclassing the reference,
pinning L2 lines, detaching a process). docs/guards.md says which is which.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ... import languages
from ...cudasrc.inline_calls import is_load_inline
from ...languages import protected_modules

# modules whose attributes a kernel has no reason to rebind
_PROTECTED_ROOTS = {"torch", "time", "numpy", "np", "builtins", "sys", "gc", "os", "threading",
                    "kernelmill", "F", "nn", "math", "importlib", "ctypes", "inspect"}
# torch.backends.* knobs. The candidate runs in a process of its own, so a knob
# cannot reach the reference: a knob only matters when it lowers the precision
# of the candidate's own fp32 work. A knob is precision-reducing when its name
# says it selects a precision (tf32, fp16, bf16, ..., fp32_precision) and its
# value is not one of the full-precision settings; every other knob (benchmark,
# deterministic, enabled, benchmark_limit, enable_flash_sdp, preferred_*_library,
# cufft_plan_cache, opt_einsum.strategy, ...) chooses among exact algorithms.
_PRECISION_WORDS = ("tf32", "fp16", "bf16", "fp8", "half", "precision", "lowp")
_FULL_PRECISION = (False, 0, None, "ieee", "highest", "none")
# positional parameters of torch.backends.<x>.flags / set_flags (torch 2.x signatures)
_FLAG_PARAMS = {"cudnn": ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32", "fp32_precision"),
                "mkldnn": ("enabled", "deterministic", "fp32_precision")}
# names under torch.backends that are namespaces, not knobs: assigning them replaces a module
_BACKEND_NAMESPACES = {"cuda", "cudnn", "matmul", "mkldnn", "mkl", "mps", "openmp", "opt_einsum", "xnnpack", "nnpack",
                       "quantized", "cpu", "conv", "rnn", "cusparselt", "kleidiai", "mha", "cufft_plan_cache"}
_LOW_DTYPES = {"float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2"}
# item 16: CUDA source that pins data in L2 across calls (comments stripped first)
_L2_PERSIST = re.compile(r"PersistingL2|PERSISTING_L2|AccessPolicyWindow|accessPolicyWindow|ACCESS_POLICY_WINDOW|"
                         r"AccessPropertyPersisting|ACCESS_PROPERTY_PERSISTING|persistingL2CacheMaxSize")
_SET_LIMIT = re.compile(r"\b(?:cudaDeviceSetLimit|cuCtxSetLimit)\s*\(\s*([^,]*),")
_HONEST_LIMITS = re.compile(r"StackSize|STACK_SIZE|PrintfFifoSize|PRINTF_FIFO_SIZE|MallocHeapSize|MALLOC_HEAP_SIZE|"
                            r"DevRuntime|DEV_RUNTIME|MaxL2FetchGranularity|MAX_L2_FETCH_GRANULARITY")
_SET_ATTR = re.compile(r"\b(?:cudaStreamSetAttribute|cuStreamSetAttribute|cudaGraphKernelNodeSetAttribute|"
                       r"cuGraphKernelNodeSetAttribute)\s*\(\s*[^,]*,\s*([^,]*),")
_C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# item 20: processes that outlive the candidate's, or leave its process group
_DETACH_CALLS = {"os.fork", "os.forkpty", "os.setsid", "os.setpgrp", "os.setpgid", "os.daemon", "pty.fork"}
_SPAWN_CALLS = {"subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
                "subprocess.check_output", "os.posix_spawn", "os.posix_spawnp", "os.system", "os.popen"}
_DETACH_WORDS = re.compile(r"\b(?:setsid|nohup|disown|daemon(?:ize)?)\b|&\s*$")
_FD_CALLS = {"os.dup", "os.dup2", "os.write", "os.close", "os.fdopen", "os.writev", "os.pwrite", "os.ftruncate",
             "os.sendfile", "open", "io.open", "os.lseek"}
_STD_STREAMS = {"sys.stdout": 1, "sys.stderr": 2, "sys.stdin": 0, "sys.__stdout__": 1, "sys.__stderr__": 2,
                "sys.__stdin__": 0}
_FRAME_ATTRS = {"f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame", "_current_frames", "_getframe"}
_GC_WALKS = {"get_objects", "get_referrers", "get_referents"}
_INTROSPECTION_MODULES = {"inspect", "gc", "ctypes", "mmap", "resource", "psutil"}
_REFERENCE_MODULES = {"reference", "task", "kernelmill"}


@dataclass(frozen=True)
class Finding:
    flag: str
    line: int
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.detail}"


def _writes_only(name: str, call: ast.Call) -> bool:
    """`open(path, "w")`: a file opened with a literal write-only mode reads nothing (a
    candidate writing its CUDA source for torch's `load`); what it writes, and where, is
    the audit hook's to judge at run time (item 28)."""
    if name not in ("open", "io.open"):
        return False
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    value = _constant(mode) if mode is not None else "r"
    return isinstance(value, str) and not set(value) & {"r", "+"} and bool(set(value) & {"w", "a", "x"})


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# torch's names that build, place or time work rather than compute it: a handler calling only
# these (a message, a synchronize, a rebuild) does not compute the answer with PyTorch
_TORCH_NOT_COMPUTE = ("torch.utils.", "torch.cuda.", "torch.backends.", "torch.library.", "torch._C.",
                      "torch.empty", "torch.device", "torch.Size", "torch.is_tensor", "torch.get_default_dtype", "torch.manual_seed",
                      "torch.is_grad_enabled", "torch.finfo", "torch.iinfo")
# calls that build an extension or a kernel object: torch's load_inline/load, the DSLs' compile
_BUILDERS = {"torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load",
             "tilelang.compile", "cute.compile", "cutlass.cute.compile", "triton.compile"}
# decorators whose functions are kernels (Triton, TileLang, CuTe DSL): calling one runs it
_KERNEL_DECORATORS = ("jit", "autotune", "heuristics", "kernel", "prim_func")


def _walk(nodes: list[ast.AST]):
    for node in nodes:
        yield from ast.walk(node)


def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


class _KernelUse:
    """What a candidate's functions call, for try_fallback (item 7): its own kernels
    (an extension from load_inline/load, whether a module global, a local or an attribute
    set from one in __init__, a factory's return value; a Triton/TileLang/CuTe kernel), or
    PyTorch's computation. Names are followed through assignments and through the module's
    own functions and methods (`launch(x)`, `self.forward_cuda(x)`), by name."""

    def __init__(self, tree: ast.Module, resolve, torch_names: set[str]):
        self.resolve, self.torch_names = resolve, torch_names
        funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.owners = {"self", "cls"} | {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        # names (variables or attributes) that hold a kernel or an extension
        self.kernels: set[str] = {n.name for n in funcs for d in n.decorator_list
                                  if self._last(d.func if isinstance(d, ast.Call) else d) in _KERNEL_DECORATORS}
        self.factories: set[str] = set()  # functions that return an extension
        self.custom: set[str] = set()  # functions that call a kernel
        self.computes: set[str] = set()  # functions that compute with torch and run no own kernel
        assigns = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None]
        changed = True
        while changed:
            before = (len(self.kernels), len(self.factories), len(self.custom))
            for n in assigns:
                if self.holds_kernel(n.value):
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, ast.Name):
                            self.kernels.add(t.id)
                        elif isinstance(t, ast.Attribute):
                            self.kernels.add(t.attr)
            for f in funcs:
                inner = list(_walk(f.body))
                if any(isinstance(r, ast.Return) and r.value is not None and self.holds_kernel(r.value) for r in inner):
                    self.factories.add(f.name)
                if any(isinstance(c, ast.Call) and self.calls_kernel(c) for c in inner):
                    self.custom.add(f.name)
            changed = before != (len(self.kernels), len(self.factories), len(self.custom))
        # then the functions that compute with torch and run no kernel of the candidate's (a
        # handler retrying with another of its kernels, which allocates with torch, is no fallback)
        changed = True
        while changed:
            before = len(self.computes)
            self.computes |= {f.name for f in funcs if f.name not in self.custom and self.any_torch_compute(f.body)}
            changed = before != len(self.computes)

    @staticmethod
    def _last(node: ast.AST) -> str:
        return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")

    def _local_call(self, func: ast.AST, names: set[str]) -> bool:
        """`f(...)`, `self.f(...)`, `ModelNew.f(...)` of a module function or method in `names`."""
        if isinstance(func, ast.Name):
            return func.id in names
        return (isinstance(func, ast.Attribute) and func.attr in names and isinstance(func.value, ast.Name)
                and func.value.id in self.owners)

    def holds_kernel(self, e: ast.AST) -> bool:
        if isinstance(e, ast.Name):
            return e.id in self.kernels
        if isinstance(e, ast.Attribute):
            return e.attr in self.kernels or self.holds_kernel(e.value)
        if isinstance(e, ast.Subscript):  # kernel[grid], exts[0]
            return self.holds_kernel(e.value)
        if isinstance(e, ast.IfExp):
            return self.holds_kernel(e.body) or self.holds_kernel(e.orelse)
        if isinstance(e, ast.BoolOp):
            return any(self.holds_kernel(v) for v in e.values)
        if isinstance(e, ast.Call):
            name = _dotted(e.func) or ""
            if self.resolve(name) in _BUILDERS or is_load_inline(e.func):
                return True
            if name == "getattr" and e.args:
                return self.holds_kernel(e.args[0])
            return self._local_call(e.func, self.factories)
        return False

    def calls_kernel(self, c: ast.Call) -> bool:
        """A call that runs the candidate's own code: an extension's function, a kernel launch,
        or a module function/method that does."""
        return (self.holds_kernel(c.func) and not self._local_call(c.func, self.factories)) or \
            self._local_call(c.func, self.custom)

    def computes_torch(self, c: ast.Call) -> bool:
        name = _dotted(c.func) or ""
        if name.split(".")[0] in self.torch_names:
            full = self.resolve(name)
            return not (full in _BUILDERS or full.startswith(_TORCH_NOT_COMPUTE))
        return self._local_call(c.func, self.computes)

    def kernel_call(self, nodes: list[ast.AST]) -> ast.Call | None:
        return next((c for c in _walk(nodes) if isinstance(c, ast.Call) and self.calls_kernel(c)), None)

    def any_torch_compute(self, nodes: list[ast.AST]) -> bool:
        return any(isinstance(c, ast.Call) and self.computes_torch(c) for c in _walk(nodes))


def _after(node: ast.stmt, parents: dict) -> list[ast.stmt]:
    """The statements that run after `node` when it falls through, up to the end of its
    function (not past a loop's body, whose next statement is the next iteration)."""
    out = []
    while (parent := parents.get(node)) is not None:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and node in block:
                out += block[block.index(node) + 1:]
                break
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.For, ast.AsyncFor, ast.While,
                               ast.Lambda, ast.ClassDef)):
            break
        node = parent
    return out


def _try_fallback(n: ast.Try, use: _KernelUse, parents: dict) -> str | None:
    """Item 7: a try whose body runs the candidate's own kernel and whose handler (or, when the
    body returns and the handler falls through, the code after the try) computes with torch;
    the finding's detail, or None. Tensor methods (x.contiguous()) are no kernel of its own."""
    call = use.kernel_call(n.body)
    if call is None:
        return None
    what = f"{_dotted(call.func) or 'a custom kernel'}()"
    for handler in n.handlers:
        if use.any_torch_compute(handler.body):
            return f"{what} wrapped in try/except whose handler computes with torch instead"
        if not _terminates(handler.body) and _terminates(n.body) and use.any_torch_compute(_after(n, parents)):
            return f"{what} wrapped in try/except that falls through to torch code instead"
    return None


_UNKNOWN = object()


def _constant(node: ast.AST | None):
    """The value of a literal (``-1`` and ``not True`` included); `_UNKNOWN` otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        if isinstance(node.op, ast.Not):
            return not node.operand.value
        if isinstance(node.op, ast.USub) and isinstance(node.operand.value, (int, float)):
            return -node.operand.value
    return _UNKNOWN


def _precision_named(name: str) -> bool:
    return any(w in name.lower() for w in _PRECISION_WORDS)


def _reduces_precision(value: ast.AST | None) -> bool:
    """A precision knob set to anything but a full-precision literal (a variable counts as reducing)."""
    v = _constant(value)
    return v is _UNKNOWN or v not in _FULL_PRECISION


def _backend_call_findings(full: str, n: ast.Call) -> list[tuple[str, str]]:
    """(flag, detail) for a call of a torch.backends.* function: only precision knobs count."""
    name = full.split(".")[-1]
    args = {}
    if _precision_named(name) and n.args:
        args[name] = n.args[0]
    params = _FLAG_PARAMS.get(full.split(".")[-2], ()) if name in ("flags", "set_flags") else ()
    args.update({p: a for p, a in zip(params, n.args)})
    args.update({k.arg.lstrip("_"): k.value for k in n.keywords if k.arg})
    return [("precision_downgrade", f"{full}({p}=...) allows reduced precision for fp32 work")
            for p, a in args.items() if _precision_named(p) and _reduces_precision(a)]


def _fd_number(node: ast.AST, resolve) -> int | None:
    """The descriptor a literal or ``sys.stdout.fileno()`` names; None when unknown."""
    v = _constant(node)
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fileno":
        return _STD_STREAMS.get(resolve(_dotted(node.func.value) or ""))
    return None


def _output_channel_findings(name: str, n: ast.Call, strict: bool, resolve) -> list[tuple[str, str]]:
    """Item 20 on one call. Standard: descriptors the candidate never opened
    (a literal fd >= 3 is the harness's), processes that detach or outlive it.
    Strict: the standard streams (honest code silences noisy builds with
    dup2 onto fd 1), atexit hooks and signal handlers (honest cleanup and
    timeouts; the candidate's process ends in os._exit and is killed with
    SIGKILL, so neither can run after it)."""
    out = []
    if name in _FD_CALLS:
        fds = [fd for fd in (_fd_number(a, resolve) for a in n.args[:2]) if fd is not None]
        if name in ("open", "io.open"):
            fds = fds[:1]
        if any(fd >= 3 for fd in fds):
            out.append(("standard", f"{name}() on descriptor {max(fds)}, which the harness opened"))
        elif fds:
            out.append(("strict", f"{name}() on standard stream descriptor {fds[0]}"))
    if name in _DETACH_CALLS:
        out.append(("standard", f"{name}() starts or detaches a process that can outlive the candidate's"))
    if name in _SPAWN_CALLS:
        kw = {k.arg: k.value for k in n.keywords if k.arg}
        detaching = [k for k in ("start_new_session", "setsid") if k in kw and _constant(kw[k]) not in (False, 0, None)]
        detaching += [k for k in ("preexec_fn", "process_group", "setpgroup")  # process_group=0: a group of its own
                      if k in kw and _constant(kw[k]) is not None and _constant(kw[k]) != -1]
        if detaching:
            out.append(("standard", f"{name}() in a new session or process group"))
        words = [a.value for a in ast.walk(n) if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if any(_DETACH_WORDS.search(w) for w in words):
            out.append(("standard", f"{name}() runs a detached command"))
    if name in ("atexit.register", "signal.signal", "signal.setitimer", "signal.alarm", "os.register_at_fork"):
        out.append(("strict", f"{name}() runs code when the harness ends or signals the process"))
    return [("forged_output", d) for level, d in out if level == "standard" or strict]


def _cuda_findings(text: str) -> list[str]:
    """Item 16 in a CUDA/C++ source string: a persisting-L2 carve-out or an
    access-policy window (by name, or through a limit/attribute given as a number)."""
    code = _C_COMMENTS.sub(" ", text)
    out = []
    m = _L2_PERSIST.search(code)
    if m:
        out.append(f"CUDA source uses {m.group(0)} (persisting L2 lines survive the cache flush)")
    for m in _SET_LIMIT.finditer(code):
        if not _HONEST_LIMITS.search(m.group(1)):
            out.append(f"CUDA source sets device limit {m.group(1).strip()!r}")
    for m in _SET_ATTR.finditer(code):
        if re.search(r"\d|\(", m.group(1)):
            out.append(f"CUDA source sets stream/graph attribute {m.group(1).strip()!r} by number")
    return out


def check_source(code: str, level: str = "standard", language: str = "torch") -> list[Finding]:
    """Findings for `code`; an unparsable source has none (the harness reports that)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: list[Finding] = []
    strict = level == "strict"
    modules: dict[str, str] = {}  # local alias -> module
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                # "import torch.backends.cudnn" binds "torch"; "... as cudnn" binds the submodule
                if a.asname:
                    modules[a.asname] = a.name
                else:
                    modules[a.name.split(".")[0]] = a.name.split(".")[0]
                if a.name.split(".")[0] in _REFERENCE_MODULES:
                    found.append(Finding("calls_reference", n.lineno, f"imports {a.name}"))
                if strict and a.name.split(".")[0] in _INTROSPECTION_MODULES:
                    found.append(Finding("harness_introspection", n.lineno, f"imports {a.name}"))
        elif isinstance(n, ast.ImportFrom) and n.module:
            root = n.module.split(".")[0]
            for a in n.names:
                modules[a.asname or a.name] = f"{n.module}.{a.name}"
            if root in _REFERENCE_MODULES:
                found.append(Finding("calls_reference", n.lineno, f"imports from {n.module}"))
            if strict and root in _INTROSPECTION_MODULES:
                found.append(Finding("harness_introspection", n.lineno, f"imports from {n.module}"))

    def resolve(dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        return ".".join(p for p in (modules.get(head, head), rest) if p)

    # plain aliases of backend namespaces: cudnn = torch.backends.cudnn
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            value = resolve(_dotted(n.value) or "")
            if value.startswith("torch.backends"):
                modules[n.targets[0].id] = value
    torch_names = {alias for alias, mod in modules.items() if mod.split(".")[0] == "torch"} | {"torch"}
    protected = _PROTECTED_ROOTS | protected_modules() | set(modules) | {m.split(".")[0] for m in modules.values()}
    local_functions = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def setting(full: str, value: ast.AST | None, line: int) -> None:
        """An assignment to a module attribute (`full`, resolved) of `value`."""
        if full.startswith("torch.backends."):
            name = full.split(".")[-1]
            replaces = name in _BACKEND_NAMESPACES or isinstance(value, ast.Lambda) or (
                isinstance(value, ast.Name) and value.id in local_functions)
            if replaces:
                found.append(Finding("harness_patched", line, f"rebinds {full}"))
            elif _precision_named(name) and _reduces_precision(value):
                found.append(Finding("precision_downgrade", line, f"sets {full} (reduced precision for fp32 work)"))
        elif full.endswith(".allow_tf32") and _reduces_precision(value):
            found.append(Finding("precision_downgrade", line, f"sets {full}"))
        elif full.split(".")[0] in protected:
            found.append(Finding("harness_patched", line, f"rebinds {full}"))

    use: _KernelUse | None = None  # built at the first try statement
    parents: dict = {}
    for n in ast.walk(tree):
        # 7: the reference model, by inheritance or by construction
        if isinstance(n, ast.ClassDef) and n.name == "ModelNew":
            for base in n.bases:
                if (_dotted(base) or "").split(".")[-1] == "Model":
                    found.append(Finding("calls_reference", n.lineno, "ModelNew inherits from the reference Model"))
        if isinstance(n, ast.Call):
            name = _dotted(n.func) or ""
            full = resolve(name)
            if name.split(".")[-1] == "Model" and name.split(".")[0] not in torch_names:
                found.append(Finding("calls_reference", n.lineno, f"constructs the reference model ({name})"))
            # 6 / 9: rebinding through setattr (a backend knob by name is a setting)
            if name in ("setattr", "delattr") and n.args:
                target = resolve(_dotted(n.args[0]) or "")
                attr = _constant(n.args[1]) if len(n.args) > 1 else None
                if name == "setattr" and target.startswith("torch.backends") and isinstance(attr, str):
                    setting(f"{target}.{attr}", n.args[2] if len(n.args) > 2 else None, n.lineno)
                elif target.split(".")[0] in protected:
                    found.append(Finding("harness_patched", n.lineno, f"{name}() on {target}"))
            # 9: precision switches that are calls
            if full.startswith("torch.backends."):
                found += [Finding(f, n.lineno, d) for f, d in _backend_call_findings(full, n)]
            elif full == "torch.set_float32_matmul_precision":
                arg = _constant(n.args[0]) if n.args else None
                if arg != "highest":
                    found.append(Finding("precision_downgrade", n.lineno, f"{name}({'...' if arg is _UNKNOWN else arg!r}) "
                                                                         "allows TF32/bf16 for fp32 matmuls"))
            elif full == "torch.set_flush_denormal" and _reduces_precision(n.args[0] if n.args else None):
                found.append(Finding("precision_downgrade", n.lineno, f"{name}() flushes denormals to zero"))
            elif full == "torch.set_default_dtype" and n.args and (_dotted(n.args[0]) or "").split(".")[-1] in _LOW_DTYPES:
                found.append(Finding("precision_downgrade", n.lineno, f"{name}({_dotted(n.args[0])})"))
            # 20: output channels and detached processes
            found += [Finding(f, n.lineno, d) for f, d in _output_channel_findings(full, n, strict, resolve)]
            # 14: walking the harness's memory
            if name.split(".")[-1] in ("_getframe", "_current_frames") or (
                    name.startswith("gc.") and name.split(".")[-1] in _GC_WALKS):
                found.append(Finding("harness_introspection", n.lineno, f"calls {name}"))
            if strict and name in ("open", "io.open", "os.listdir", "os.scandir", "os.walk", "glob.glob") \
                    and not _writes_only(name, n):
                found.append(Finding("harness_introspection", n.lineno, f"reads the file system ({name})"))
        if isinstance(n, ast.Attribute) and n.attr in _FRAME_ATTRS:
            found.append(Finding("harness_introspection", n.lineno, f"uses .{n.attr} (the caller's frames)"))
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            if n.value.startswith("/proc/"):
                found.append(Finding("harness_introspection", n.lineno, f"reads {n.value!r}"))
            # 16: persisting L2 lines in a CUDA source string
            found += [Finding("l2_persistence", n.lineno, d) for d in _cuda_findings(n.value)]
        # 6 / 9: assigning attributes of modules (torch.cuda.synchronize = ..., cudnn.allow_tf32 = True)
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                dotted = _dotted(target) if isinstance(target, ast.Attribute) else None
                if dotted:
                    setting(resolve(dotted), getattr(n, "value", None), n.lineno)
        # 7: a custom kernel wrapped in try/except that falls back to torch
        if isinstance(n, ast.Try) and language != "torch":
            if use is None:
                use = _KernelUse(tree, resolve, torch_names)
                parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
            detail = _try_fallback(n, use, parents)
            if detail:
                found.append(Finding("try_fallback", n.lineno, detail))
    # one finding per (flag, line)
    seen, out = set(), []
    for f in found:
        if (f.flag, f.line) not in seen:
            seen.add((f.flag, f.line))
            out.append(f)
    return out


def own_kernel_names(code: str) -> list[str]:
    """Names of the kernels a candidate defines (each language says how: CUDA
    ``__global__`` functions in its source strings, ``@triton.jit`` functions,
    TileLang ``@T.prim_func`` functions, whose CUDA kernel is ``<name>_kernel``);
    profiler kernel names contain them."""
    return sorted(languages.own_kernel_names(code))
