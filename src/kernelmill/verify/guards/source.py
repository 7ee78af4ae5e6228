"""Static checks of a candidate's Python source (the AST, never regexes).

Each finding names a flag from `flags.FLAGS` and the line it is on. Heuristics
that an honest kernel could trip are kept for ``strict``; ``standard`` holds
only patterns with no honest use in a kernel module (walking the caller's
frames, rebinding ``torch.cuda.synchronize``, subclassing the reference).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# modules whose attributes a kernel has no reason to rebind
_PROTECTED_ROOTS = {"torch", "time", "triton", "numpy", "np", "builtins", "sys", "gc", "os", "threading",
                    "kernelmill", "F", "nn", "math", "importlib", "ctypes", "inspect"}
# settings a kernel may legitimately set on torch
_ALLOWED_SETTINGS = {"torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic",
                     "torch.backends.cudnn.enabled", "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction"}
_TF32_SETTINGS = {"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32",
                  "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                  "torch.backends.fp32_precision", "torch.backends.cuda.matmul.fp32_precision",
                  "torch.backends.cudnn.fp32_precision"}
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


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _calls_torch(nodes: list[ast.stmt], torch_names: set[str]) -> bool:
    for n in ast.walk(ast.Module(body=nodes, type_ignores=[])):
        if isinstance(n, ast.Call):
            name = _dotted(n.func) or ""
            if name.split(".")[0] in torch_names:
                return True
    return False


def _calls_other(nodes: list[ast.stmt], torch_names: set[str]) -> bool:
    for n in ast.walk(ast.Module(body=nodes, type_ignores=[])):
        if isinstance(n, ast.Call):
            name = _dotted(n.func) or ""
            root = name.split(".")[0]
            if root and root not in torch_names and root not in ("self", "super", "len", "isinstance", "print"):
                return True
    return False


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
                modules[(a.asname or a.name).split(".")[0]] = a.name
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
    torch_names = {alias for alias, mod in modules.items() if mod.split(".")[0] == "torch"} | {"torch"}
    protected = _PROTECTED_ROOTS | set(modules)

    for n in ast.walk(tree):
        # 7: the reference model, by inheritance or by construction
        if isinstance(n, ast.ClassDef) and n.name == "ModelNew":
            for base in n.bases:
                if (_dotted(base) or "").split(".")[-1] == "Model":
                    found.append(Finding("calls_reference", n.lineno, "ModelNew inherits from the reference Model"))
        if isinstance(n, ast.Call):
            name = _dotted(n.func) or ""
            if name.split(".")[-1] == "Model" and name.split(".")[0] not in torch_names:
                found.append(Finding("calls_reference", n.lineno, f"constructs the reference model ({name})"))
            # 6 / 9: rebinding through setattr, and precision switches
            if name in ("setattr", "delattr") and n.args:
                target = _dotted(n.args[0]) or ""
                if target.split(".")[0] in protected:
                    found.append(Finding("harness_patched", n.lineno, f"{name}() on {target}"))
            if name.split(".")[-1] == "set_float32_matmul_precision" and name.split(".")[0] in torch_names:
                arg = n.args[0].value if n.args and isinstance(n.args[0], ast.Constant) else None
                if arg != "highest":
                    found.append(Finding("precision_downgrade", n.lineno, f"{name}({arg!r}) allows TF32/bf16 for fp32 matmuls"))
            # 14: walking the harness's memory
            if name.split(".")[-1] in ("_getframe", "_current_frames") or (
                    name.startswith("gc.") and name.split(".")[-1] in _GC_WALKS):
                found.append(Finding("harness_introspection", n.lineno, f"calls {name}"))
            if strict and name in ("open", "io.open", "os.listdir", "os.scandir", "os.walk", "glob.glob"):
                found.append(Finding("harness_introspection", n.lineno, f"reads the file system ({name})"))
        if isinstance(n, ast.Attribute) and n.attr in _FRAME_ATTRS:
            found.append(Finding("harness_introspection", n.lineno, f"uses .{n.attr} (the caller's frames)"))
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("/proc/"):
            found.append(Finding("harness_introspection", n.lineno, f"reads {n.value!r}"))
        # 6: rebinding attributes of modules (torch.cuda.synchronize = ...)
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                dotted = _dotted(target) if isinstance(target, ast.Attribute) else None
                if not dotted:
                    continue
                full = ".".join([modules.get(dotted.split(".")[0], dotted.split(".")[0])] + dotted.split(".")[1:])
                if full in _TF32_SETTINGS or full.endswith(".allow_tf32"):
                    value = getattr(n, "value", None)
                    if not (isinstance(value, ast.Constant) and value.value in (False, "ieee")):
                        found.append(Finding("precision_downgrade", n.lineno, f"sets {full}"))
                elif dotted.split(".")[0] in protected and full not in _ALLOWED_SETTINGS:
                    found.append(Finding("harness_patched", n.lineno, f"rebinds {full}"))
        # 7: a custom kernel wrapped in try/except that falls back to torch
        if isinstance(n, ast.Try) and language != "torch":
            for handler in n.handlers:
                if _calls_torch(handler.body, torch_names) and _calls_other(n.body, torch_names):
                    found.append(Finding("try_fallback", n.lineno,
                                         "a custom kernel call wrapped in try/except that computes with torch instead"))
                    break
    # one finding per (flag, line)
    seen, out = set(), []
    for f in found:
        if (f.flag, f.line) not in seen:
            seen.add((f.flag, f.line))
            out.append(f)
    return out


def own_kernel_names(code: str) -> list[str]:
    """Names of the kernels a candidate defines: ``__global__`` functions in its
    CUDA source strings and its ``@triton.jit`` functions (profiler kernel
    names contain them)."""
    import re

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = set()
    glob = re.compile(r"__global__\s+[\w:<>,\s\*]*?\b(\w+)\s*\(")
    bounds = re.compile(r"__launch_bounds__\s*\([^)]*\)")
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "__global__" in n.value:
            names.update(glob.findall(bounds.sub(" ", n.value)))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if (_dotted(target) or "").split(".")[-1] in ("jit", "autotune", "heuristics"):
                    names.add(n.name)
    return sorted(names)
