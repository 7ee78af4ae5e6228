"""Triton kernels -> PTX for a chosen target, without a GPU.

`triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget(...))`
runs the whole pipeline down to PTX with no driver; the kernel object carries
the text in `asm["ptx"]`.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .nvcc import CompileFailed


@dataclass
class TritonSpec:
    """One Triton kernel to compile: `signature` maps each argument to a Triton
    type (`*fp32`, `i32`, `constexpr`), `constexprs` gives the constexpr values."""

    kernel: str
    signature: dict[str, str]
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3
    launch: dict[str, Any] | None = None


def triton_ptx(fn, spec: TritonSpec, arch: str = "sm_90") -> str:
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError as exc:
        raise CompileFailed("Triton is not installed: pip install 'kernelmill[triton]'") from exc
    cap = int(arch.removeprefix("sm_").rstrip("a"))
    try:
        src = ASTSource(fn=fn, signature=dict(spec.signature), constexprs=dict(spec.constexprs))
        k = triton.compile(src, target=GPUTarget("cuda", cap, 32),
                           options={"num_warps": spec.num_warps, "num_stages": spec.num_stages})
    except Exception as exc:  # a bad kernel is a result, reported with its message
        raise CompileFailed(f"triton.compile failed for {spec.kernel}: {type(exc).__name__}: {exc}") from None
    return k.asm["ptx"]


def triton_source(fn) -> str:
    src = getattr(fn, "src", None)
    if src:
        return src
    return inspect.getsource(getattr(fn, "fn", fn))


def load_triton_specs(path: str | Path) -> list[tuple[Any, TritonSpec]]:
    """Import a Triton module that lists its kernels in `TRITON_PTX_SPECS`
    (a list of dicts with TritonSpec's fields). The module is executed."""
    path = Path(path)
    name = f"_kernelmill_triton_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CompileFailed(f"{path}: cannot import")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # triton's jit looks the module up for globals
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:
        raise CompileFailed(f"{path}: import failed: {type(exc).__name__}: {exc}") from None
    out = []
    for i, d in enumerate(getattr(mod, "TRITON_PTX_SPECS", [])):
        try:
            s = TritonSpec(**d)
        except TypeError as exc:
            raise CompileFailed(f"{path}: TRITON_PTX_SPECS[{i}]: {exc}") from None
        fn = getattr(mod, s.kernel, None)
        if fn is None:
            raise CompileFailed(f"{path}: TRITON_PTX_SPECS[{i}] names {s.kernel!r}, not defined there")
        out.append((fn, s))
    return out
