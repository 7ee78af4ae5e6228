"""The settings every timing process starts from, and what machine and
software a verdict was measured on (`Verdict.measurement`).

`settle_process` is called by each process that runs a model (the unguarded
worker, the supervisor, the candidate's process), so both sides of a
comparison compute and time under the same rules (docs/SEMANTICS.md).
Machine facts are read once per process and cached: versions, the GPU's name
and, where the driver tells, its clocks; the CPU's model and core count.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import shutil
import subprocess

import torch


@functools.lru_cache(maxsize=None)
def _software() -> dict:
    out = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        import triton

        out["triton"] = triton.__version__
    except Exception:  # noqa: BLE001 - not installed, or broken: then it did not time anything
        out["triton"] = None
    # the installed distribution's version, read without importing TileLang (its
    # import loads TVM, seconds in every process that never runs a TileLang kernel)
    try:
        out["tilelang"] = importlib.metadata.version("tilelang")
    except importlib.metadata.PackageNotFoundError:
        out["tilelang"] = None
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


@functools.lru_cache(maxsize=None)
def _gpu(index: int) -> dict:
    props = torch.cuda.get_device_properties(index)
    out = {"gpu": props.name, "gpu_capability": f"{props.major}.{props.minor}",
           "gpu_memory_gb": round(props.total_memory / 2**30, 1), "gpu_sms": props.multi_processor_count}
    smi = shutil.which("nvidia-smi")
    if smi:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
        physical = visible[index] if index < len(visible) and visible[index].strip() else str(index)
        try:
            line = subprocess.run(
                [smi, "-i", physical, "--format=csv,noheader,nounits",
                 "--query-gpu=driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu"],
                capture_output=True, text=True, timeout=10).stdout.strip()
            keys = ("driver", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "power_limit_w", "temperature_c")
            out.update({k: v.strip() for k, v in zip(keys, line.split(","))} if line else {})
        except (OSError, subprocess.SubprocessError):
            pass
    return out


def describe(device: torch.device) -> dict:
    info = {"device": str(device), "cpu": _cpu_model(), "cpu_cores": os.cpu_count(), **_software()}
    if device.type == "cuda":
        info.update(_gpu(device.index if device.index is not None else torch.cuda.current_device()))
    return info


def settle_process(device: torch.device, timing) -> None:
    """fp32 means fp32 (torch's cuDNN default allows TF32); on a CPU, the timing
    convention's thread count and steady allocator (`timing.set_cpu_threads`)."""
    from .timing import set_cpu_threads

    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    else:
        set_cpu_threads(timing.cpu_threads)


def backend_flags() -> dict:
    """This process's numerics and speed settings, as the verdict records them."""
    flags = {"num_threads": torch.get_num_threads(),
             "float32_matmul_precision": torch.get_float32_matmul_precision(),
             "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
             "cudnn_benchmark": torch.backends.cudnn.benchmark,
             "cudnn_deterministic": torch.backends.cudnn.deterministic,
             "cudnn_enabled": torch.backends.cudnn.enabled}
    if torch.cuda.is_available():
        flags.update(matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32,
                     cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
                     matmul_fp16_reduced=torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
                     matmul_bf16_reduced=torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
    return flags
