"""What devices this machine has, found without touching CUDA in our process
(the harness process must never hold a CUDA context a candidate could break)."""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

_PROBE = (
    "import json, torch\n"
    "out = []\n"
    "if torch.cuda.is_available():\n"
    "    for i in range(torch.cuda.device_count()):\n"
    "        p = torch.cuda.get_device_properties(i)\n"
    "        out.append({'index': i, 'name': p.name, 'capability': f'{p.major}.{p.minor}',\n"
    "                    'memory_gb': round(p.total_memory / 2**30, 1)})\n"
    "print(json.dumps(out))\n"
)


# The same facts from the CUDA driver's own library, without torch: a process importing
# torch to ask took 4.7 s before any verification could start (H200 host, issue 14);
# this one ~0.3 s. The driver API is what the runtime (and so torch) enumerates through:
# the same CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, the same names and memory sizes.
# Written with ctypes because no library on our machines wraps it (nvidia-ml-py is not a
# dependency of torch, and NVML numbers GPUs its own way). Exit 3: "ask torch instead".
_DRIVER_PROBE = (
    "import ctypes, json, sys\n"
    "try:\n"
    "    cu = ctypes.CDLL('libcuda.so.1')\n"
    "except OSError:\n"
    "    sys.exit(3)\n"
    "def ok(rc):\n"
    "    if rc != 0:\n"
    "        sys.exit(3)\n"
    "v = ctypes.c_int()\n"
    "ok(cu.cuDriverGetVersion(ctypes.byref(v)))\n"
    "if v.value // 1000 < int(sys.argv[1]):\n"
    "    sys.exit(3)\n"
    "rc = cu.cuInit(0)\n"
    "if rc == 100:\n"  # CUDA_ERROR_NO_DEVICE
    "    print('[]'); sys.exit(0)\n"
    "ok(rc)\n"
    "n = ctypes.c_int()\n"
    "ok(cu.cuDeviceGetCount(ctypes.byref(n)))\n"
    "out = []\n"
    "for i in range(n.value):\n"
    "    d, name, mem, major, minor = ctypes.c_int(), ctypes.create_string_buffer(256), ctypes.c_size_t(), ctypes.c_int(), ctypes.c_int()\n"
    "    ok(cu.cuDeviceGet(ctypes.byref(d), i))\n"
    "    ok(cu.cuDeviceGetName(name, 256, d))\n"
    "    ok(cu.cuDeviceTotalMem_v2(ctypes.byref(mem), d))\n"
    "    ok(cu.cuDeviceGetAttribute(ctypes.byref(major), 75, d))\n"  # COMPUTE_CAPABILITY_MAJOR
    "    ok(cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, d))\n"  # COMPUTE_CAPABILITY_MINOR
    "    out.append({'index': i, 'name': name.value.decode(), 'capability': f'{major.value}.{minor.value}',\n"
    "                'memory_gb': round(mem.value / 2**30, 1)})\n"
    "print(json.dumps(out))\n"
)


def _torch_build() -> tuple[str | None, bool] | None:
    """(torch's CUDA version, whether it is a ROCm build), read from torch/version.py
    without importing torch; None when torch is not installed or the file says nothing."""
    import importlib.util
    import re

    try:
        spec = importlib.util.find_spec("torch")
        folder = list(spec.submodule_search_locations or [])[0] if spec else None
        text = (Path(folder) / "version.py").read_text() if folder else ""
    except (ImportError, OSError, IndexError, ValueError):
        return None
    cuda = re.search(r"^cuda\b[^=]*=\s*['\"]([0-9.]+)['\"]", text, re.M)
    hip = re.search(r"^hip\b[^=]*=\s*['\"]", text, re.M)
    if not re.search(r"^cuda\b", text, re.M):
        return None
    return (cuda.group(1) if cuda else None), bool(hip)


def _run_probe(argv: list[str]) -> tuple[int, tuple[dict, ...]]:
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        devs = tuple(json.loads(res.stdout.strip().splitlines()[-1])) if res.returncode == 0 else ()
        return res.returncode, devs
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
        return -1, ()


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[dict, ...]:
    """One dict per visible CUDA device (index, name, capability, memory_gb), as torch
    sees them. A torch built without CUDA sees none (no probe at all); else the driver
    library answers, and torch itself where the driver cannot (no libcuda, a driver
    older than torch's CUDA, a ROCm build)."""
    build = _torch_build()
    if build is not None and build[0] is None and not build[1]:
        return ()  # torch.cuda.is_available() is False in a CPU build of torch
    if build is not None and build[0] and not build[1]:
        rc, devs = _run_probe([sys.executable, "-c", _DRIVER_PROBE, build[0].split(".")[0]])
        if rc == 0:
            return devs
    return torch_cuda_devices()


def torch_cuda_devices() -> tuple[dict, ...]:
    """The same list, asked of torch in a process of its own (what `cuda_devices` falls
    back to; the GPU tests compare the two)."""
    return _run_probe([sys.executable, "-c", _PROBE])[1]


def physical_gpu(gpu: int) -> str:
    """GPU index `gpu` as this process's CUDA_VISIBLE_DEVICES names it (Ray and
    schedulers hand us a subset)."""
    visible = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[gpu] if gpu < len(visible) else str(gpu)


def driver_lists_gpus() -> bool:
    """Whether the NVIDIA driver lists a GPU (/proc/driver/nvidia/gpus): a hint, read in
    microseconds, for work worth starting before `cuda_devices` answers; not a probe."""
    try:
        return any(os.scandir("/proc/driver/nvidia/gpus"))
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return "cpu: " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu: " + (platform.processor() or platform.machine())


def device_name(device: str) -> str:
    if device == "cuda":
        devs = cuda_devices()
        if not devs:
            raise RuntimeError("--device cuda asked for, but no CUDA GPU is visible (torch.cuda.is_available() is False)")
        return devs[0]["name"]
    return cpu_name()
