"""Kernel languages: what each needs around the one build/run mechanism.

Every candidate is a Python module defining ``ModelNew``; the languages differ
only in the environment its build and run processes get, the device it runs
on, and whether its timings mean anything there. Adding a language is adding a
`Backend` here, not a new code path in the harness.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Backend:
    name: str
    compiles_extension: bool  # builds a C++/CUDA extension with load_inline
    needs_gpu: bool = False
    cpu_only: bool = False  # runs on the CPU whatever the run's device
    interpreter_on_cpu: bool = False  # TRITON_INTERPRET=1 when no GPU
    requires_module: str | None = None

    def run_device(self, device: str) -> str:
        return "cpu" if self.cpu_only else device

    def unsupported(self, device: str) -> str | None:
        """Why this backend cannot run on `device` here, or None."""
        if self.needs_gpu and device != "cuda":
            return f"{self.name} candidates need a CUDA GPU; this run's device is {device}"
        if self.requires_module and importlib.util.find_spec(self.requires_module) is None:
            return f"{self.name} candidates need the {self.requires_module!r} package (pip install {self.requires_module})"
        return None

    def timing_skip_reason(self, device: str) -> str | None:
        if self.interpreter_on_cpu and device == "cpu":
            return "correctness only: Triton ran in its CPU interpreter (TRITON_INTERPRET=1), timing skipped"
        return None

    def env(self, device: str, cache_dir: Path, ext_dir: Path, cuda_arch: str | None,
            build_jobs: int) -> dict[str, str]:
        env: dict[str, str] = {}
        if self.compiles_extension:
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
        if self.name == "triton":
            env["TRITON_CACHE_DIR"] = str(cache_dir / "triton")
            if device == "cpu" and self.interpreter_on_cpu:
                env["TRITON_INTERPRET"] = "1"
        if self.name == "tilelang":
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


def tilelang_target(cuda_arch: str) -> str:
    """TileLang's target for a compute capability ("9.0" -> sm_90a), written as
    the JSON TILELANG_DEFAULT_TARGET takes. TileLang names the arch of a
    capability >= 9 with the "a" suffix (tilelang.contrib.nvcc.get_target_arch);
    with several GPU kinds, the first."""
    import json

    major, minor = (int(x) for x in cuda_arch.split(";")[0].split("."))
    arch = f"sm_{major * 10 + minor}" + ("a" if major >= 9 else "")
    return json.dumps({"kind": "cuda", "arch": arch})


BACKENDS: dict[str, Backend] = {
    "torch": Backend("torch", compiles_extension=False),
    "cuda": Backend("cuda", compiles_extension=True, needs_gpu=True),
    "cpp": Backend("cpp", compiles_extension=True, cpu_only=True),
    "triton": Backend("triton", compiles_extension=False, interpreter_on_cpu=True, requires_module="triton"),
    "tilelang": Backend("tilelang", compiles_extension=False, needs_gpu=True, requires_module="tilelang"),
}


def get_backend(language: str) -> Backend | None:
    return BACKENDS.get(language)


__all__ = ["BACKENDS", "Backend", "get_backend"]
