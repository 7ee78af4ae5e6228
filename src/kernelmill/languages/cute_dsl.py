"""CuTe DSL kernels (CUTLASS 4's Python DSL, package `nvidia-cutlass-dsl`, imported as
`cutlass`): `@cute.kernel` device functions launched from `@cute.jit` host functions,
called directly or after `cute.compile`.

What the harness relies on, read in the DSL's own Python code (nvidia-cutlass-dsl-libs-core
4.8.1: `cutlass/base_dsl/dsl.py`, `jit_executor.py`, `cutlass_dsl/cuda_jit_executor.py`,
`base_dsl/env_manager.py`), then run on an H200 (tests/verify/test_cute_dsl_gpu.py, tenth
session: the symbol form below is what the profiler recorded there):
- `@cute.jit` and `@cute.kernel` return a `functools.wraps` wrapper (`jit_wrapper`, code in
  `cutlass/base_dsl/dsl.py`), so a decorated function carries `__wrapped__`;
- a kernel's symbol is `kernel_cutlass_<function>_<mangled argument types>_<n>`, so the
  profiler's kernel names contain the `@cute.kernel` function's name (`is_own_symbol`: a
  library's CuTe kernel, whose function is not the candidate's, is origin `cutlass`);
- `cute.compile` returns a `JitCompiledFunction` (`cutlass.base_dsl.jit_executor`; the CUDA
  dialect's subclass in `cutlass.cutlass_dsl.cuda_jit_executor`) whose `__call__` runs it;
- the on-disk JIT cache is `CUTE_DSL_CACHE_DIR` (default `/tmp/cute_dsl_python_cache_*`); the
  GPU architecture is detected in the process that compiles (`CUTE_DSL_ARCH` overrides it).
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from pathlib import Path
from typing import Any

from .base import Language, decorated_functions

_PREFIX = "kernel_cutlass_"
# where compiled CuTe DSL functions are run from (kernels made at run time by cute.compile)
_EXECUTORS = ("cutlass.base_dsl.jit_executor", "cutlass.cutlass_dsl.cuda_jit_executor")


def _imports_cutlass(tree: ast.AST) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(a.name.split(".")[0] == "cutlass" for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] == "cutlass":
            return True
    return False


def _in_cutlass(code: Any) -> bool:
    """Is this code object part of the `cutlass` package (the DSL's own wrappers)?"""
    parts = Path(getattr(code, "co_filename", "") or "").parts
    return "cutlass" in parts


class CuteDsl(Language):
    def env(self, device: str, cache_dir: Path, ext_dir: Path, cuda_arch: str | None,
            build_jobs: int, compiles: bool | None = None) -> dict[str, str]:
        env = super().env(device, cache_dir, ext_dir, cuda_arch, build_jobs, compiles)
        # compiled functions shared by every candidate's process, in the verify cache
        # (not the temp dir, where each phase's private HOME/TMP would start it afresh)
        env["CUTE_DSL_CACHE_DIR"] = str(cache_dir / "cute_dsl")
        return env

    def own_kernel_names(self, tree: ast.AST) -> set[str]:
        # `@cute.kernel` functions of a module that imports cutlass (a bare `@kernel` of
        # another package in a file without cutlass is not CuTe's)
        if not _imports_cutlass(tree):
            return set()
        return decorated_functions(tree, ("kernel",))

    def is_own_symbol(self, base: str, own: frozenset[str]) -> bool:
        # `kernel_cutlass_<function>_<argument types>_<n>`: the function's name after the
        # prefix, then the mangled arguments (seen on an H200: `kernel_cutlass_add_rows_kernel_
        # tensorptrf32gmemo256..._0`)
        return any(base.startswith(f"{_PREFIX}{n}_") for n in own)

    def own_callables(self, module: Any) -> list[Any]:
        # the module's `@cute.jit` functions (wrappers whose code is the DSL's) and objects
        # of the DSL's own classes (a JitCompiledFunction kept as a global): their call code
        out = []
        for obj in list(vars(module).values()):
            if isinstance(obj, type):
                continue
            code = getattr(obj, "__code__", None)
            if code is not None and getattr(obj, "__wrapped__", None) is not None and _in_cutlass(code):
                out.append(obj)
            elif type(obj).__module__.split(".")[0] == "cutlass":
                call = getattr(type(obj), "__call__", None)
                if getattr(call, "__code__", None) is not None:
                    out.append(call)
        return out

    def kernel_codes(self) -> set[Any]:
        # functions compiled at run time (in __init__ or forward): the executors' __call__,
        # only where the candidate's process imported them
        codes = set()
        for name in _EXECUTORS:
            mod = sys.modules.get(name)
            for cls in vars(mod).values() if mod is not None else ():
                call = getattr(cls, "__call__", None) if isinstance(cls, type) else None
                code = getattr(call, "__code__", None)
                if code is not None and cls.__module__ == name:
                    codes.add(code)
        return codes

    def version(self) -> str | None:
        # read without importing the DSL (its import loads MLIR libraries)
        try:
            return importlib.metadata.version("nvidia-cutlass-dsl")
        except importlib.metadata.PackageNotFoundError:
            return None


LANGUAGE = CuteDsl("cute_dsl", compiles_extension=False, needs_gpu=True, requires_module="cutlass",
                   protected_modules=("cutlass",),
                   # a CuTe DSL kernel of a library (not the candidate's own) is CUTLASS's
                   kernel_origins=(("cutlass", "^" + _PREFIX),))
