"""What devices this machine has, found without touching CUDA in our process
(the harness process must never hold a CUDA context a candidate could break)."""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys

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


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[dict, ...]:
    """One dict per visible CUDA device (index, name, capability, memory_gb)."""
    try:
        res = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
        return tuple(json.loads(res.stdout.strip().splitlines()[-1])) if res.returncode == 0 else ()
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError):
        return ()


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
