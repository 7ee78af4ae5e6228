"""A GPU health check in a fresh process: can it allocate, compute and sync?"""

from __future__ import annotations

import subprocess
import sys

_PROBE = (
    "import torch\n"
    "x = torch.arange(1 << 20, device='cuda', dtype=torch.float32)\n"
    "s = float((x * 2).sum().item())\n"
    "torch.cuda.synchronize()\n"
    "assert s == float((1 << 20) * ((1 << 20) - 1)), s\n"
    "print('healthy')\n"
)


def gpu_healthy(gpu: int, env: dict[str, str], timeout: float = 60.0) -> bool:
    """True if GPU `gpu` (made visible through `env`) runs a small kernel correctly in time."""
    try:
        res = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                             timeout=timeout)
    except (subprocess.TimeoutExpired, OSError):
        return False
    return res.returncode == 0 and "healthy" in res.stdout
