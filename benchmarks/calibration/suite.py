"""The whole calibration suite (issue 42): the PyTorch kernels of `families.py` and the
C++, Triton and CUDA ones of their own modules, each checked once. Apart from
`families.py`, which the language modules import for `Kernel` and `TASKS`."""

from __future__ import annotations

import cpp_kernels
import cuda_kernels
import triton_kernels
from families import TASKS, Kernel, torch_kernels


def all_kernels() -> list[Kernel]:
    out = torch_kernels() + cpp_kernels.kernels() + triton_kernels.kernels() + cuda_kernels.kernels()
    seen = set()
    for k in out:
        if k.task not in TASKS or k.kind not in ("wrong", "control") or k.kernel_id in seen:
            raise ValueError(f"bad or duplicate kernel {k.kernel_id}")
        seen.add(k.kernel_id)
    return out
