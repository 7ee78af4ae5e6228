"""What every kernel language is to the harness: `Language`, the defaults a language
module overrides (one module per language beside this one, `languages/__init__.py`)."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# a call of torch's extension builder, however imported (`load_inline`, `cpp_extension.load`)
_EXTENSION_BUILDER = re.compile(r"\bcpp_extension\b|\bload_inline\b")


@dataclass(frozen=True)
class Language:
    """A kernel language. Every candidate is a Python module defining ``ModelNew``;
    languages differ in the environment their build and run processes get, the
    device they run on, whether their timings mean anything there, and how the
    guards and the provenance tell the candidate's own kernels from a fallback."""

    name: str
    compiles_extension: bool  # builds a C++/CUDA extension with load_inline
    needs_gpu: bool = False
    cpu_only: bool = False  # runs on the CPU whatever the run's device
    interpreter_on_cpu: bool = False  # a CPU interpreter stands in for the GPU (timing skipped)
    requires_module: str | None = None  # the package its candidates import
    # modules a candidate may not patch (guards/source.py: the harness and the checks rely on them)
    protected_modules: tuple[str, ...] = ()
    # (origin, regex on a kernel's symbol) for the provenance of what ran (measure/kernel_time.py)
    kernel_origins: tuple[tuple[str, str], ...] = ()

    def run_device(self, device: str) -> str:
        return "cpu" if self.cpu_only else device

    def unsupported(self, device: str) -> str | None:
        """Why this language cannot run on `device` here, or None."""
        if self.needs_gpu and device != "cuda":
            return f"{self.name} candidates need a CUDA GPU; this run's device is {device}"
        if self.requires_module and importlib.util.find_spec(self.requires_module) is None:
            return f"{self.name} candidates need the {self.requires_module!r} package (pip install {self.requires_module})"
        return None

    def timing_skip_reason(self, device: str) -> str | None:
        return None

    def builds_extension(self, code: str) -> bool:
        """Whether a candidate of this language, with this source, compiles a C++/CUDA
        extension: every one of a language that does (`compiles_extension`), and one of any
        other language whose source names torch's extension builder. Such a candidate labelled
        `torch` (cuda-l1's L2_35 and L2_90 write a .cu file and `cpp_extension.load` it at
        import) compiled in its run process, where its run holds a share of the GPU's lock
        (measure/gpulock.py): another run's timing on that GPU waited 70-74 s for each build
        (docs/results/session_2026-11-29i). Built in the build phase instead (a CPU process,
        the builder's cache), the run finds the extension made. A mention that builds nothing
        costs one CPU build process."""
        return self.compiles_extension or _EXTENSION_BUILDER.search(code) is not None

    def env(self, device: str, cache_dir: Path, ext_dir: Path, cuda_arch: str | None,
            build_jobs: int, compiles: bool | None = None) -> dict[str, str]:
        """The environment of this language's build and run processes (`compiles`: whether
        the candidate builds an extension, `builds_extension`; default: the language's own)."""
        env: dict[str, str] = dict(self.import_env(device))
        if self.compiles_extension if compiles is None else compiles:
            env["TORCH_EXTENSIONS_DIR"] = str(ext_dir)
            env["MAX_JOBS"] = str(build_jobs)
            # compile only for the GPU present, unless the user named the architectures: torch's
            # load_inline honours TORCH_CUDA_ARCH_LIST (e.g. "9.0a" for Hopper-only instructions),
            # and `kernelmill prepare-builds` keys what it makes by the same value
            # (build_prepare.builds_arch_env; seventeenth session: a machine with "9.0a" set found
            # none of the prepared headers while runs overrode it with "9.0")
            arch = os.environ.get("TORCH_CUDA_ARCH_LIST") or cuda_arch
            if arch:
                env["TORCH_CUDA_ARCH_LIST"] = arch
        return env

    def own_kernel_names(self, tree: ast.AST) -> set[str]:
        """Names of the kernels the candidate's source (parsed) defines in this language;
        profiler kernel names contain them."""
        return set()

    def is_own_symbol(self, base: str, own: frozenset[str]) -> bool:
        """Whether a kernel whose symbol's base name is `base` is one of the kernels named
        `own` in this language's mangled form (a name equal to `base` is own already)."""
        return False

    def own_callables(self, module: Any) -> list[Any]:
        """Objects of the candidate's module that launch its own kernels (the guards
        count calls into them: no call seen is a `torch_fallback`)."""
        return []

    def kernel_codes(self) -> set[Any]:
        """Code objects that run this language's compiled kernels, for kernels made at
        run time (not module globals). Only what the candidate's process imported."""
        return set()

    def version(self) -> str | None:
        """The installed version, for a verdict's measurement (None: not a package)."""
        return None

    def warm_import(self) -> None:
        """Imported ahead in a candidate's process while it waits for its job."""

    def import_env(self, device: str) -> dict[str, str]:
        """Variables its package reads once, at import, on `device`: part of `env`, and set
        in a spare before its warm-up imports the package ahead of its job (runner.py)."""
        return {}


def decorated_functions(tree: ast.AST, decorators: tuple[str, ...]) -> set[str]:
    """Names of the functions decorated with one of `decorators` (last dotted part,
    called or not: ``@triton.jit``, ``@jit``, ``@triton.autotune(...)``)."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in n.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                last = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if last in decorators:
                    names.add(n.name)
    return names
