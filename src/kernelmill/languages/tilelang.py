"""TileLang kernels (`@T.prim_func`, compiled with `tilelang.compile` / `@tilelang.jit`)."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Any

from .base import Language, decorated_functions


def tilelang_target(cuda_arch: str) -> str:
    """TileLang's target for a compute capability ("9.0" -> sm_90a), written as
    the JSON TILELANG_DEFAULT_TARGET takes. TileLang names the arch of a
    capability >= 9 with the "a" suffix (tilelang.contrib.nvcc.get_target_arch);
    with several GPU kinds, the first."""
    major, minor = (int(x) for x in cuda_arch.split(";")[0].split("."))
    arch = f"sm_{major * 10 + minor}" + ("a" if major >= 9 else "")
    return json.dumps({"kind": "cuda", "arch": arch})


class TileLang(Language):
    def env(self, device: str, cache_dir: Path, ext_dir: Path, cuda_arch: str | None,
            build_jobs: int, compiles: bool | None = None) -> dict[str, str]:
        env = super().env(device, cache_dir, ext_dir, cuda_arch, build_jobs, compiles)
        # every phase gets its own HOME, where TileLang (~/.tilelang/cache) and
        # tvm-ffi (~/.cache/tvm-ffi: its torch DLPack addon, JIT-built when the
        # wheel's build does not match this torch) would compile again each time:
        # both caches live in the verify cache, shared by all candidates
        env["TILELANG_CACHE_DIR"] = str(cache_dir / "tilelang")
        env["TVM_FFI_CACHE_DIR"] = str(cache_dir / "tvm-ffi")
        if cuda_arch:
            # nvcc for the GPU present (TileLang's own detection gives the same
            # sm_XYa target; named here so a build without a visible GPU agrees)
            env["TILELANG_DEFAULT_TARGET"] = tilelang_target(cuda_arch)
        return env

    def own_kernel_names(self, tree: ast.AST) -> set[str]:
        # TileLang names the CUDA kernel of a prim_func `<name>_kernel`: profiler names contain it
        return decorated_functions(tree, ("prim_func",))

    def is_own_symbol(self, base: str, own: frozenset[str]) -> bool:
        return base.endswith("_kernel") and base[: -len("_kernel")] in own

    def kernel_codes(self) -> set[Any]:
        # its kernels are objects made at run time (in __init__ or forward): what runs
        # one is JITKernel.__call__, which the @tilelang.jit factories and
        # tilelang.compile both return; only if the candidate's process imported TileLang
        kernel_mod = sys.modules.get("tilelang.jit.kernel")
        call = getattr(getattr(kernel_mod, "JITKernel", None), "__call__", None)
        return {call.__code__} if getattr(call, "__code__", None) is not None else set()

    def version(self) -> str | None:
        # the installed distribution's version, read without importing TileLang (its
        # import loads TVM, seconds in every process that never runs a TileLang kernel)
        try:
            return importlib.metadata.version("tilelang")
        except importlib.metadata.PackageNotFoundError:
            return None


LANGUAGE = TileLang("tilelang", compiles_extension=False, needs_gpu=True, requires_module="tilelang")
