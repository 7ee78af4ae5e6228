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
import os
import platform
import shutil
import subprocess

import torch

from ... import languages


@functools.lru_cache(maxsize=None)
def _software() -> dict:
    out = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda}
    out.update(languages.versions())  # each language's package, where it is one
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


# nvidia-smi fields a verdict records: fixed ones read once per process (a spare
# reads them in its warm-up), the GPU's state (clocks, temperature) read again for
# each measurement. One nvidia-smi call costs 0.05-0.3 s of a run (NVML starts up
# in every call), so the state query starts when the timing ends and is collected
# with the verdict (`gpu_state_query`, `describe`)
_FIXED_SMI = (("driver_version", "driver"), ("clocks.max.sm", "max_sm_clock_mhz"), ("power.limit", "power_limit_w"))
_STATE_SMI = (("clocks.sm", "sm_clock_mhz"), ("clocks.mem", "mem_clock_mhz"), ("temperature.gpu", "temperature_c"))


def _smi(index: int, fields) -> list[str] | None:
    """The nvidia-smi command line that reads `fields` of visible GPU `index` (None without nvidia-smi)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    physical = visible[index] if index < len(visible) and visible[index].strip() else str(index)
    return [smi, "-i", physical, "--format=csv,noheader,nounits", "--query-gpu=" + ",".join(f for f, _ in fields)]


def _parse_smi(line: str, fields) -> dict:
    return {key: v.strip() for (_, key), v in zip(fields, line.split(","))} if line.strip() else {}


@functools.lru_cache(maxsize=None)
def _gpu(index: int) -> dict:
    props = torch.cuda.get_device_properties(index)
    out = {"gpu": props.name, "gpu_capability": f"{props.major}.{props.minor}",
           "gpu_memory_gb": round(props.total_memory / 2**30, 1), "gpu_sms": props.multi_processor_count}
    if getattr(props, "uuid", None) is not None:  # which card of the host (nvidia-smi names it "GPU-<uuid>")
        out["gpu_uuid"] = "GPU-" + str(props.uuid).removeprefix("GPU-")
    argv = _smi(index, _FIXED_SMI)
    if argv:
        try:
            out.update(_parse_smi(subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout, _FIXED_SMI))
        except (OSError, subprocess.SubprocessError):
            pass
    return out


def gpu_index(device: torch.device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


def gpu_state_query(device: torch.device) -> subprocess.Popen | None:
    """Start reading the GPU's clocks and temperature (nvidia-smi, not waited for);
    `describe(device, state=...)` collects it. None on a CPU or without nvidia-smi."""
    argv = _smi(gpu_index(device), _STATE_SMI) if device.type == "cuda" else None
    if argv is None:
        return None
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None


def _gpu_state(query: subprocess.Popen | None) -> dict:
    if query is None:
        return {}
    try:
        out, _ = query.communicate(timeout=10)
    except subprocess.SubprocessError:
        query.kill()
        query.wait()
        return {}
    return _parse_smi(out or "", _STATE_SMI)


def warm_facts(device: torch.device) -> None:
    """Read what `describe` caches (versions; the GPU's fixed facts) now, in a
    warm-up, instead of on a run's clock (importing triton alone: ~0.1 s)."""
    _software()
    if device.type == "cuda":
        _gpu(gpu_index(device))


def describe(device: torch.device, state: subprocess.Popen | None = None) -> dict:
    """The machine and software of a measurement; on a GPU, its fixed facts and its
    clocks and temperature, from `state` (a `gpu_state_query` started earlier) or
    read now."""
    info = {"device": str(device), "cpu": _cpu_model(), "cpu_cores": os.cpu_count(), **_software()}
    if device.type == "cuda":
        info.update(_gpu(gpu_index(device)))
        info.update(_gpu_state(state if state is not None else gpu_state_query(device)))
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


def modes_left_on() -> list[str]:
    """Torch function and dispatch modes on in this process outside any call. The harness
    enters none of its own between calls; a mode a candidate leaves on sees the harness's
    own tensor work in its process (the refill before each timed call, the plain copy
    before a checked one) and can tell a checked call from the others: a matmul that did
    so read 32x on a CPU with every check passed (docs/guards.md, item 24). A default device
    (`torch.set_default_device`, a mode of torch's own) is not such a mode."""
    from torch.utils._device import DeviceContext

    try:  # private PyTorch names, read only
        modes = [type(m).__name__ for m in torch.overrides._get_current_function_mode_stack()
                 if not isinstance(m, DeviceContext)]
        modes += [f"dispatch:{type(torch._C._get_dispatch_stack_at(i)).__name__}"
                  for i in range(torch._C._len_torch_dispatch_stack())]
    except AttributeError:
        return []
    return modes


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
