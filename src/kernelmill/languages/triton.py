"""Triton kernels (`@triton.jit`); on a CPU they run in Triton's interpreter."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from .base import Language, decorated_functions

# Triton's objects that launch a kernel (a jitted function, or its autotuning wrappers)
_LAUNCHERS = ("JITFunction", "Autotuner", "Heuristics", "InterpretedFunction")


class Triton(Language):
    def timing_skip_reason(self, device: str) -> str | None:
        if device == "cpu":
            return "correctness only: Triton ran in its CPU interpreter (TRITON_INTERPRET=1), timing skipped"
        return None

    def env(self, device: str, cache_dir: Path, ext_dir: Path, cuda_arch: str | None,
            build_jobs: int, compiles: bool | None = None) -> dict[str, str]:
        env = super().env(device, cache_dir, ext_dir, cuda_arch, build_jobs, compiles)
        env["TRITON_CACHE_DIR"] = str(cache_dir / "triton")
        return env

    def import_env(self, device: str) -> dict[str, str]:
        # the interpreter on a CPU; read when triton is imported: its own library kernels
        # (tl.sum, ...) are made for the interpreter or the compiler then, so a process that
        # imported it without this (a spare's warm-up) fails at them
        return {"TRITON_INTERPRET": "1"} if device == "cpu" else {}

    def own_kernel_names(self, tree: ast.AST) -> set[str]:
        return decorated_functions(tree, ("jit", "autotune", "heuristics"))

    def own_callables(self, module: Any) -> list[Any]:
        return [obj for obj in vars(module).values()
                if any(c.__name__ in _LAUNCHERS for c in type(obj).__mro__)]

    def version(self) -> str | None:
        try:
            import triton
        except Exception:  # noqa: BLE001 - not installed, or broken: then it timed nothing
            return None
        return triton.__version__

    def warm_import(self) -> None:
        try:  # a Triton candidate's first import, ahead: 0.15 s of its run (median, builtin, H200; issue 14)
            import triton  # noqa: F401
        except Exception:  # noqa: BLE001 - not installed or broken: the candidate meets it itself
            pass


LANGUAGE = Triton("triton", compiles_extension=False, interpreter_on_cpu=True, requires_module="triton",
                  protected_modules=("triton",),
                  # torch.compile's (inductor's) generated kernels are Triton kernels too
                  kernel_origins=(("triton", r"^triton_|^triton__"),))
