"""What machine and software a verdict was measured on (`Verdict.measurement`).

Read once per process and cached: versions, the GPU's name and, where the
driver tells, its clocks; the CPU's model and core count.
"""

from __future__ import annotations

import functools
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
